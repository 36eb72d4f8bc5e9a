import os, json, time
out_dir = "/tmp/dev5proj/runs/exp3_lr3e-4"
print(f"[{time.strftime('%H:%M:%S')}] config: {json.dumps({'lr': 3e-4, 'epochs': 10, 'out_dir': out_dir})}", flush=True)
os.makedirs(out_dir, exist_ok=True)

import time, sys
for i in range(1000):
    print(f"[{time.strftime('%H:%M:%S')}] step {i} loss {2.0/(i+1)+0.5:.4f}", flush=True)
    time.sleep(1)

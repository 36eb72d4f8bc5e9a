import os, sys, time, datetime
import torch, torch.distributed as dist
mode = sys.argv[1]
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=8))
r, w = dist.get_rank(), dist.get_world_size()
print(f"[init] rank {r}/{w} pid {os.getpid()} backend gloo", flush=True)
t = torch.ones(1000)
for step in range(1, 13):
    if mode == "hang" and r == 2 and step == 7:
        time.sleep(60)
    if mode == "zdiv" and r == 1 and step == 6:
        tokens = 0
        print("tokens/s", 1024 / tokens)
    if mode == "kill" and r == 3 and step == 5:
        os.kill(os.getpid(), 9)
    dist.all_reduce(t)
    t /= w
    if r == 0 and step % 2 == 0:
        print(f"step {step} allreduce ok mean={t.mean().item():.3f}", flush=True)
    time.sleep(0.2)
dist.destroy_process_group()
print(f"rank {r} done", flush=True)

import os, time, datetime, torch, torch.distributed as dist
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=5))
r = dist.get_rank()
t = torch.ones(4) * r
for step in range(3):
    dist.all_reduce(t)
    print(f"rank {r} step {step} ok", flush=True)
if r == 1:
    time.sleep(20)
dist.all_reduce(t)
print(f"rank {r} done", flush=True)

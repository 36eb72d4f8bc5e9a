import os, sys, time, torch, torch.distributed as dist
dist.init_process_group("gloo")
r=dist.get_rank()
t=torch.ones(4)*r
dist.all_reduce(t)
print(f"rank {r} allreduce ok {t.tolist()}", flush=True)
if r==1:
    os._exit(1)
time.sleep(0.5)
dist.all_reduce(t)
print("unreachable", flush=True)

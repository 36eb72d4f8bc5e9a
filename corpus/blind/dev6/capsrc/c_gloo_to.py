import os, sys, time, datetime, torch, torch.distributed as dist
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=6))
r=dist.get_rank()
t=torch.ones(4)*r
dist.all_reduce(t)
print(f"rank {r} allreduce ok {t.tolist()}", flush=True)
if r==1:
    print("rank 1: stalled in data loading (NFS)", flush=True); time.sleep(25)
dist.all_reduce(t)
print("unreachable", flush=True)

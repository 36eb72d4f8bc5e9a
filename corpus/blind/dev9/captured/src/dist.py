import os, sys, time, datetime, argparse
import torch, torch.distributed as dist, torch.nn as nn
p = argparse.ArgumentParser(); p.add_argument("--mode", default="ok"); p.add_argument("--steps", type=int, default=40)
a = p.parse_args()
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=int(os.environ.get("PG_TIMEOUT", "20"))))
r, w = dist.get_rank(), dist.get_world_size()
torch.manual_seed(r)
print(f"[rank{r}] initialized process group backend=gloo world_size={w}", flush=True)
model = nn.Linear(32, 8)
ddp = nn.parallel.DistributedDataParallel(model)
opt = torch.optim.SGD(ddp.parameters(), lr=0.05)
for step in range(1, a.steps + 1):
    x = torch.randn(16, 32); y = torch.randn(16, 8)
    if a.mode == "hang" and r == 1 and step == 25:
        print(f"[rank{r}] step {step}: waiting on data shard lock ...", flush=True)
        time.sleep(120)
    if a.mode == "crash" and r == 1 and step == 18:
        raise IndexError("list index out of range")
    loss = ((ddp(x) - y) ** 2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 10 == 0:
        t = loss.detach().clone(); dist.all_reduce(t); 
        if r == 0: print(f"step {step} loss={t.item()/w:.4f}", flush=True)
dist.barrier()
if r == 0: print("training finished", flush=True)
dist.destroy_process_group()

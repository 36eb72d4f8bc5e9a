import os, sys, time, json
import torch, torch.distributed as dist
mode = sys.argv[1]
dist.init_process_group("gloo")
rank, world = dist.get_rank(), dist.get_world_size()
torch.manual_seed(0)
w = torch.nn.Linear(8, 2)
model = torch.nn.parallel.DistributedDataParallel(w)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
shards = {0: "/data/shards/train-00000-of-00002.jsonl", 1: "/data/shards/train-00001-of-00002.jsonl"}
vocab = {"<pad>": 0, "<unk>": 1, "the": 2}
for step in range(6):
    x = torch.randn(4, 8); y = torch.randint(0, 2, (4,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    print(f"[rank{rank}] step {step} loss {loss.item():.4f}", flush=True)
    if step == 3:
        if mode == "keyerror" and rank == 1:
            tok = "<bos>"
            ids = [vocab[tok]]
        if mode == "fnf" and rank == 0:
            with open(shards[0]) as f:
                f.readline()
dist.destroy_process_group()

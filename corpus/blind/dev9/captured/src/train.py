import argparse, os, sys, time, math, json, random, warnings
import torch, torch.nn as nn
p = argparse.ArgumentParser()
p.add_argument("--mode", default="ok"); p.add_argument("--steps", type=int, default=60)
p.add_argument("--seed", type=int, default=0); p.add_argument("--lr", type=float, default=1e-2)
p.add_argument("--bs", type=int, default=32); p.add_argument("--log_every", type=int, default=10)
p.add_argument("--amp", action="store_true"); p.add_argument("--data", default="data/train.jsonl")
a = p.parse_args()
torch.manual_seed(a.seed); random.seed(a.seed)
print(f"[config] mode={a.mode} steps={a.steps} lr={a.lr} bs={a.bs} seed={a.seed} torch={torch.__version__}", flush=True)
print(f"[env] cuda_available={torch.cuda.is_available()} threads={torch.get_num_threads()}", flush=True)
if a.mode == "missing_wandb":
    import wandb
if a.mode == "missing_flash":
    from flash_attn import flash_attn_func
model = nn.Sequential(nn.Linear(16, 64), nn.ReLU(), nn.Linear(64, 4))
opt = torch.optim.AdamW(model.parameters(), lr=a.lr)
sched = torch.optim.lr_scheduler.StepLR(opt, 20)
if a.amp:
    scaler = torch.cuda.amp.GradScaler()
X = torch.randn(2048, 16); W = torch.randn(16, 4); Y = (X @ W).argmax(1)
lossf = nn.CrossEntropyLoss()
if a.mode == "fnf":
    with open(a.data) as f: pass
if a.mode == "ckpt_fnf":
    model.load_state_dict(torch.load("checkpoints/run7/last.pt", map_location="cpu"))
if a.mode == "perm":
    os.makedirs("/tmp/b9-cap/shared_ckpt", exist_ok=True)
if a.mode == "retry":
    for attempt in range(1, 4):
        try:
            if attempt < 3:
                raise ConnectionResetError(104, "Connection reset by peer")
            print(f"[data] shard index fetched on attempt {attempt}", flush=True); break
        except ConnectionResetError as e:
            print(f"[data] WARNING fetch failed ({e!r}); retrying in {2**attempt}s (attempt {attempt}/3)", flush=True)
t0 = time.time()
for step in range(1, a.steps + 1):
    idx = torch.randint(0, 2048, (a.bs,))
    x, y = X[idx], Y[idx]
    if a.mode == "nan" and step == 37:
        x = x * float("inf")
    if a.mode == "shape" and step == 23:
        x = torch.randn(a.bs, 17)
    if a.mode == "ram" and step == 31:
        big = torch.empty(1 << 40, dtype=torch.uint8)
    if a.mode == "keyerr" and step == 41:
        batch = {"input_ids": x, "labels": y}; x = batch["pixel_values"]
    if a.mode == "anomaly" and step == 29:
        with torch.autograd.detect_anomaly():
            out = model(x); loss = lossf(out, y) + (torch.sqrt(out - out.detach()) * 0.0).sum(); loss.backward()
    if a.mode == "overflow_skip" and step == 15:
        print(f"step {step}: gradient overflow detected (grad_norm=inf); skipping optimizer step, loss scale 65536.0 -> 32768.0", flush=True)
        continue
    out = model(x); loss = lossf(out, y)
    if a.mode == "nan" and not torch.isfinite(loss):
        raise ValueError(f"Loss is {loss.item()} at step {step}; stopping training")
    opt.zero_grad(); loss.backward(); opt.step(); sched.step()
    if step % a.log_every == 0:
        acc = (out.argmax(1) == y).float().mean().item()
        print(f"step {step}/{a.steps} loss={loss.item():.4f} acc={acc:.3f} lr={sched.get_last_lr()[0]:.2e} {(time.time()-t0)/step*1000:.1f}ms/it", flush=True)
    if a.mode == "sleep":
        time.sleep(0.5)
# eval
val = [] if a.mode == "zerodiv" else [(X[i:i+128], Y[i:i+128]) for i in range(0, 512, 128)]
correct = total_loss = 0.0
with torch.no_grad():
    for xb, yb in val:
        o = model(xb); total_loss += lossf(o, yb).item(); correct += (o.argmax(1) == yb).sum().item()
if a.mode == "assert":
    n_classes = 4
    assert out.shape[-1] == n_classes + 1, f"head has {out.shape[-1]} outputs, expected {n_classes + 1} (incl. background)"
val_loss = total_loss / len(val)
err = 1 - correct / 512
print(f"eval: val_loss={val_loss:.4f} val/error_rate={err:.4f} val/top1={1-err:.4f}", flush=True)
if a.mode == "diskfull":
    big = nn.Linear(256, 256); torch.save(big.state_dict(), "/tmp/b9-cap/smallfs/ckpt_step%d.pt" % a.steps)
if a.mode == "perm":
    torch.save(model.state_dict(), "/tmp/b9-cap/shared_ckpt/model.pt")
if a.mode == "silent":
    sys.exit(1)
os.makedirs("out", exist_ok=True); torch.save(model.state_dict(), f"out/model_seed{a.seed}.pt")
print("saved checkpoint to out/model_seed%d.pt" % a.seed, flush=True)
print("done.", flush=True)

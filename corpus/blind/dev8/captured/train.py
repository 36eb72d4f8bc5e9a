import os, sys, time, math, argparse, warnings
import torch, torch.nn as nn
p = argparse.ArgumentParser()
p.add_argument("--mode", default="ok"); p.add_argument("--steps", type=int, default=40)
p.add_argument("--ckpt", default="/tmp/b8-cap/ckpt"); p.add_argument("--data", default="/tmp/b8-cap/data")
p.add_argument("--sleep", type=float, default=0.0)
a = p.parse_args()
torch.manual_seed(0)
print(f"torch {torch.__version__} | python {sys.version.split()[0]} | cuda available: {torch.cuda.is_available()}", flush=True)
print(f"config: mode={a.mode} steps={a.steps} ckpt={a.ckpt}", flush=True)
model = nn.Sequential(nn.Linear(32, 64), nn.ReLU(), nn.Linear(64, 10))
opt = torch.optim.SGD(model.parameters(), lr=0.05)
sched = torch.optim.lr_scheduler.StepLR(opt, 10)
if a.mode == "warn":
    sched.step()
x = torch.randn(256, 32); y = torch.randint(0, 10, (256,))
lossf = nn.CrossEntropyLoss()
for step in range(1, a.steps + 1):
    opt.zero_grad()
    out = model(x)
    if a.mode == "nan" and step >= a.steps // 2:
        out = out * float("inf")
    loss = lossf(out, y)
    if a.mode == "detrnan" and step >= a.steps // 2:
        loss = loss * float("nan")
    if a.mode == "detrnan" and not math.isfinite(loss.item()):
        print("Loss is {}, stopping training".format(loss.item()), flush=True)
        sys.exit(1)
    loss.backward(); opt.step(); sched.step()
    if step % 5 == 0 or step == 1:
        print(f"step {step:5d}/{a.steps} | loss {loss.item():.4f} | lr {sched.get_last_lr()[0]:.4g}", flush=True)
    if a.sleep: time.sleep(a.sleep)
    if a.mode == "shape" and step == a.steps // 2:
        nn.Linear(12, 3)(torch.randn(4, 10))
    if a.mode == "zerodiv" and step == a.steps // 2:
        n_valid = 0
        print(f"val acc {sum([]) / n_valid:.3f}")
    if a.mode == "keyerror" and step == a.steps // 2:
        cfg = {"lr": 0.05, "warmup": 100}
        print(cfg["scheduler"])
    if a.mode == "assert" and step == a.steps // 2:
        bs = 24; world = 5
        assert bs % world == 0, f"global batch {bs} not divisible by world size {world}"
    if a.mode == "memerr" and step == a.steps // 2:
        buf = bytearray(8 * 1024**3)
    if a.mode == "fnf" and step == a.steps // 2:
        torch.load(os.path.join(a.ckpt, "epoch_003.pt"))
    if a.mode == "segv" and step == a.steps // 2:
        import ctypes; ctypes.string_at(0)
    if a.mode == "anomaly" and step == a.steps // 2:
        with torch.autograd.detect_anomaly():
            z = (model[0].weight.sum() * 0 - 1.0).sqrt()
            z.backward()
    if a.mode in ("save", "enospc") and step % 10 == 0:
        os.makedirs(a.ckpt, exist_ok=True)
        path = os.path.join(a.ckpt, f"step_{step}.pt")
        if a.mode == "save":
            torch.save({"model": model.state_dict(), "big": torch.randn(200000), "opt": opt.state_dict()}, path)
        else:
            with open(path + ".npy", "wb") as f:
                f.write(os.urandom(700 * 1024))
        print(f"saved checkpoint {path}", flush=True)
    if a.mode == "valerr" and step == a.steps // 2:
        import json; json.loads(open(os.path.join(a.data, "meta.json")).read())
    if a.mode == "selfterm" and step == a.steps // 2:
        import signal; os.kill(os.getpid(), signal.SIGTERM); time.sleep(2)
    if a.mode == "selfint" and step == a.steps // 2:
        import signal; os.kill(os.getpid(), signal.SIGINT); time.sleep(2)
print("training finished", flush=True)

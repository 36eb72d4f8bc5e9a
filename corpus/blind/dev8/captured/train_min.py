import sys, os, random, time, pickle
random.seed(0)
out = sys.argv[1] if len(sys.argv) > 1 else None
print(f"python {sys.version.split()[0]} | pid {os.getpid()} | uid {os.getuid()}", flush=True)
w = [random.random() for _ in range(8)]
for step in range(1, 31):
    loss = sum(x * x for x in w) / (step ** 0.5)
    w = [x * 0.97 for x in w]
    if step % 5 == 0:
        print(f"epoch 0 step {step:3d} loss {loss:.4f}", flush=True)
if out:
    os.makedirs(os.path.dirname(out), exist_ok=True)
    with open(out, "wb") as f:
        pickle.dump(w, f)
    print("saved", out)

import signal, sys, time, os, json
stop = {"flag": False}
def handler(signum, frame):
    print(f"Received signal {signum} (SIGTERM); saving checkpoint and shutting down gracefully", flush=True)
    stop["flag"] = True
signal.signal(signal.SIGTERM, handler)
step = 0
loss = 2.31
while not stop["flag"]:
    step += 1
    loss *= 0.985
    print(f"step {step:5d} | loss {loss:.4f} | lr 3.0e-04 | tok/s 18342", flush=True)
    time.sleep(0.1)
ck = "/tmp/dev3_ckpt_step%d.pt" % step
with open(ck, "w") as f: json.dump({"step": step}, f)
print(f"Checkpoint saved to {ck} at step {step}", flush=True)
print("Exiting cleanly after signal.", flush=True)
sys.exit(0)

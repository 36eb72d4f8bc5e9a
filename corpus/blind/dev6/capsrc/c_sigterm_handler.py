import signal, sys, time, torch
stop = False
def handler(signum, frame):
    global stop
    print(f"[signal] caught signal {signum} (SIGTERM); will checkpoint and exit cleanly", flush=True)
    stop = True
signal.signal(signal.SIGTERM, handler)
m = torch.nn.Linear(8, 8)
for step in range(10000):
    if stop:
        torch.save(m.state_dict(), "/tmp/dev6_sigterm_ckpt.pt")
        print(f"checkpoint saved at step {step} -> /tmp/dev6_sigterm_ckpt.pt; exiting with status 0", flush=True)
        sys.exit(0)
    if step % 2 == 0: print(f"step {step} loss {1.0/(step+1):.4f}", flush=True)
    time.sleep(0.5)

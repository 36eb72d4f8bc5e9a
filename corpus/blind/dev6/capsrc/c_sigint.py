import time, torch
print("interactive debug session; step loop", flush=True)
for i in range(1000):
    x=torch.randn(64,64)@torch.randn(64,64)
    print(f"step {i}", flush=True); time.sleep(0.5)

import time, torch
model = torch.nn.Linear(32, 32)
step = 0
print("starting training loop", flush=True)
while True:
    loss = model(torch.randn(8, 32)).pow(2).mean(); loss.backward(); step += 1
    if step % 300 == 0:
        print(f"step {step} loss {loss.item():.4f}", flush=True)
    time.sleep(0.001)

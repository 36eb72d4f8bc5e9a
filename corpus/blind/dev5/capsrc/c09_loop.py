import time, torch, sys
model = torch.nn.Linear(32, 32)
opt = torch.optim.Adam(model.parameters(), 1e-3)
step = 0
while True:
    x = torch.randn(16, 32)
    loss = (model(x) - x).pow(2).mean()
    opt.zero_grad(); loss.backward(); opt.step(); step += 1
    if step % 200 == 0:
        print(f"step {step} loss {loss.item():.5f}", flush=True)
    time.sleep(0.002)

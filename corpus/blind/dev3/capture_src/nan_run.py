import torch, math
torch.manual_seed(0)
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr=3.0)
for epoch in range(3):
    for step in range(20):
        x = torch.randn(32, 16) * 10
        y = x.sum(1, keepdim=True) ** 2
        loss = torch.nn.functional.mse_loss(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step()
        if step % 4 == 0:
            print(f"epoch {epoch} step {step:3d} loss {loss.item():.6g} grad_norm {sum(p.grad.norm()**2 for p in model.parameters()).sqrt().item():.4g}", flush=True)
    print(f"epoch {epoch} done, val_loss {loss.item():.6g}", flush=True)
torch.save(model.state_dict(), "/tmp/dev3_final.pt")
print("Training complete. Saved final model to /tmp/dev3_final.pt")

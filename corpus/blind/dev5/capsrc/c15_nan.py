import torch
torch.manual_seed(0)
model = torch.nn.Linear(8, 1)
opt = torch.optim.SGD(model.parameters(), lr=5.0)
X = torch.randn(128, 8) * 10; Y = torch.randn(128, 1)
for step in range(1, 61):
    loss = torch.nn.functional.mse_loss(model(X), Y)
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 3 == 0:
        print(f"step {step} loss {loss.item():.4f} grad_norm {model.weight.grad.norm().item():.4f}", flush=True)
torch.save(model.state_dict(), "/tmp/dev5_final.pt")
print("done. saved final model")

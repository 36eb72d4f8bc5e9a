import warnings, torch, math
warnings.warn("torch.cuda.amp.GradScaler(args...) is deprecated. Please use torch.amp.GradScaler('cuda', args...) instead.", FutureWarning)
torch.manual_seed(1)
model = torch.nn.Sequential(torch.nn.Linear(10, 32), torch.nn.Tanh(), torch.nn.Linear(32, 1))
opt = torch.optim.Adam(model.parameters(), 1e-2)
X = torch.randn(256, 10); Y = X.sum(1, keepdim=True)
for ep in range(1, 41):
    loss = torch.nn.functional.mse_loss(model(X), Y)
    opt.zero_grad(); loss.backward(); opt.step()
    if ep % 4 == 0:
        print(f"epoch {ep:3d} train_loss {loss.item():.4f} val_error {loss.item()*1.07:.4f}", flush=True)
try:
    import wandb
except ImportError:
    print("wandb not installed; skipping upload (logging errors are non-fatal)", flush=True)
print("training finished: best val_error %.4f" % (loss.item()*1.07))

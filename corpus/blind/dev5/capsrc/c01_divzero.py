import torch, warnings
torch.manual_seed(0)
def macro_f1(preds, labels, num_classes):
    f1s = []
    for c in range(num_classes):
        tp = int(((preds == c) & (labels == c)).sum())
        fp = int(((preds == c) & (labels != c)).sum())
        fn = int(((preds != c) & (labels == c)).sum())
        prec = tp / (tp + fp)
        rec = tp / (tp + fn)
        f1s.append(2 * prec * rec / (prec + rec))
    return sum(f1s) / len(f1s)
model = torch.nn.Linear(16, 4)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(1, 31):
    x = torch.randn(32, 16); y = torch.randint(0, 3, (32,))
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 5 == 0:
        print(f"step {step:4d} | loss {loss.item():.4f} | lr 0.1", flush=True)
print("running validation ...", flush=True)
with torch.no_grad():
    x = torch.randn(64, 16); y = torch.randint(0, 3, (64,))
    preds = model(x).argmax(-1)
    print("val macro-F1:", macro_f1(preds, y, 4))

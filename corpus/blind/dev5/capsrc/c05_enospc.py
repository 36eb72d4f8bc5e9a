import io, torch
model = torch.nn.Linear(256, 256)
for epoch in range(3):
    print(f"epoch {epoch} train_loss {1.0/(epoch+1):.4f}", flush=True)
buf = io.BytesIO(); torch.save({"model": model.state_dict(), "epoch": 3}, buf)
print("writing checkpoint (%d bytes) to /dev/full ..." % buf.tell(), flush=True)
with open("/dev/full", "wb") as f:
    f.write(buf.getvalue())

from common import *
m=model()
for step in range(3):
    log(f"step {step} loss {1.38-0.01*step:.4f}")
log("saving checkpoint to /scratch/ckpt/step_3.pt")
with open("/dev/full","wb") as f:
    torch.save(m.state_dict(), f)

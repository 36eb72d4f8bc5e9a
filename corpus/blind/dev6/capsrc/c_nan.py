from common import *
import math
m=model(); opt=torch.optim.SGD(m.parameters(),lr=1e4)
for step in range(40):
    x=torch.randn(32,16)*100; y=torch.randint(0,4,(32,))
    loss=nn.functional.cross_entropy(m(x),y); opt.zero_grad(); loss.backward(); opt.step()
    if step%4==0: log(f"step {step:4d} | loss {loss.item():.4f} | lr 1.0e+04")
log("training finished, saving final model to out/final.pt")

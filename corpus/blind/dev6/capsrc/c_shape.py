from common import *
m=model()
x=torch.randn(8,20)
log("batch shape", tuple(x.shape))
out=m(x)

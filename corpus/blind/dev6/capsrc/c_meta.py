from common import *
with torch.device("meta"):
    m=model()
x=torch.randn(2,16)
log("model materialized? ", next(m.parameters()).device)
out=m(x)

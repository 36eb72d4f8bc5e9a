import torch
with torch.device("meta"):
    big = torch.nn.Linear(64, 64)
small = torch.nn.Linear(64, 64)
x = torch.randn(2, 64)
print("materialized:", small(x).shape, flush=True)
y = big(x)
print(y.sum().item())

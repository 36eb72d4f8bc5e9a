import torch
class Head(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3), torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d(4))
        self.fc = torch.nn.Linear(16 * 8 * 8, 10)
    def forward(self, x):
        h = self.backbone(x).flatten(1)
        return self.fc(h)
m = Head()
print(m, flush=True)
out = m(torch.randn(4, 3, 32, 32))

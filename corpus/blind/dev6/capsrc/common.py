import torch, torch.nn as nn, sys, os, time, warnings
torch.manual_seed(0)
def model():
    return nn.Sequential(nn.Linear(16,32), nn.ReLU(), nn.Linear(32,4))
def log(*a):
    print(*a, flush=True)

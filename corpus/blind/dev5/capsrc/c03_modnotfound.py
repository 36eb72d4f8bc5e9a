import os, sys
print("[setup] python", sys.version.split()[0], flush=True)
import torch
print("[setup] torch", torch.__version__, "cuda available:", torch.cuda.is_available(), flush=True)
from torch.utils.data import DataLoader
import flash_attn

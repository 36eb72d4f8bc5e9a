import torch
print("torch", torch.__version__, flush=True)
import deepspeed

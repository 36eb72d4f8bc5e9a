from common import *
log("Resuming from checkpoint /scratch/u1234/runs/bert-ft/ckpt_epoch7.pt")
sd = torch.load("/scratch/u1234/runs/bert-ft/ckpt_epoch7.pt", map_location="cpu")

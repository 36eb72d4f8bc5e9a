from common import *
from torch.utils.data import Dataset, DataLoader
class DS(Dataset):
    def __init__(s): s.rows=[{"text":"a","label":1}]*50+[{"text":"b"}]
    def __len__(s): return len(s.rows)
    def __getitem__(s,i):
        r=s.rows[i]; return torch.zeros(4), r["label"]
if __name__=="__main__":
    dl=DataLoader(DS(),batch_size=8,num_workers=2)
    for i,b in enumerate(dl): log("batch",i)

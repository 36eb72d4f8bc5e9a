import torch
from torch.utils.data import Dataset, DataLoader
class JsonlDataset(Dataset):
    def __init__(self):
        self.rows = [{"text": "abc", "label": i % 3} for i in range(64)]
        self.rows[37] = {"text": "xyz"}
    def __len__(self): return len(self.rows)
    def __getitem__(self, i):
        r = self.rows[i]
        return torch.tensor(len(r["text"])), torch.tensor(r["label"])
if __name__ == "__main__":
    dl = DataLoader(JsonlDataset(), batch_size=8, num_workers=2)
    for i, (x, y) in enumerate(dl):
        print(f"batch {i} x={tuple(x.shape)} y={tuple(y.shape)}", flush=True)

import torch
from torch.utils.data import Dataset, DataLoader
class JsonlDataset(Dataset):
    def __init__(self):
        self.rows = [{"text": f"sample {i}", "label": i % 3} for i in range(200)]
        self.rows[137] = {"text": "sample 137", "lable": 1}
    def __len__(self): return len(self.rows)
    def __getitem__(self, i):
        r = self.rows[i]
        return torch.tensor([len(r["text"])], dtype=torch.float), r["label"]
if __name__ == "__main__":
    dl = DataLoader(JsonlDataset(), batch_size=8, num_workers=2, shuffle=False)
    model = torch.nn.Linear(1, 3)
    for epoch in range(2):
        for i, (x, y) in enumerate(dl):
            loss = torch.nn.functional.cross_entropy(model(x), y)
            loss.backward()
            if i % 4 == 0:
                print(f"epoch {epoch} iter {i} loss {loss.item():.4f}", flush=True)

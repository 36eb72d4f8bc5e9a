import json
cfg = json.loads('{"lr": "3e-4", "warmup_steps": 500, "max_steps": 10000}')
def lr_at(step):
    if step < cfg["warmup_steps"]:
        return cfg["lr"] * step / cfg["warmup_steps"]
    return cfg["lr"]
for s in [0, 100]:
    print("lr", lr_at(s))

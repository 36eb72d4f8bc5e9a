import json, random
print("writing 5000 predictions to preds.jsonl", flush=True)
with open("/dev/full", "w") as f:
    for i in range(5000):
        f.write(json.dumps({"id": i, "pred": random.random()}) + "\n")
print("done", flush=True)

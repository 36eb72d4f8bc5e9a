print("eval: generating 12 samples", flush=True)
refs = ["a"] * 10
preds = ["a"] * 12
scores = [int(preds[i] == refs[i]) for i in range(len(preds))]

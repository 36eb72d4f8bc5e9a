import json
print("reading eval config configs/eval_mmlu.json", flush=True)
cfg = json.loads('{"tasks": ["mmlu", "arc_easy"], "num_fewshot": 5,}')

#!/usr/bin/env python3
"""Print each label's evidence line (and alts) so a person can eyeball them."""
import json, os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
for l in map(json.loads, open(os.path.join(HERE, "labels.jsonl"))):
    lines = open(os.path.join(HERE, l["log_path"]), encoding="utf-8").read().split("\n")
    ev = l["evidence_line"]
    s = lines[ev - 1][:150] if ev else "-"
    print(f"{l['id']} {l['mode']:<15} {l['source'][:4]} rc={l['true_exit_code']:<4} r={l['rank']} L{ev}: {s}")
    for a in l["evidence_alts"]:
        print(f"{'':>36} alt L{a}: {lines[a - 1][:140]}")

#!/usr/bin/env python3
"""Print each label's evidence line (and alts) so a person can check it; also sanity checks."""
import json, os, sys
HERE = os.path.dirname(os.path.abspath(__file__))
for l in map(json.loads, open(os.path.join(HERE, "labels.jsonl"))):
    lines = open(os.path.join(HERE, l["log_path"]), errors="replace").read().split("\n")
    n = len(lines) - (1 if lines and lines[-1] == "" else 0)
    ev = l["evidence_line"]
    if l["mode"] == "success":
        assert ev is None and l["true_exit_code"] == 0, l["id"]
        print("%s %-15s rc=%-4s lines=%-6d (success) last: %s" % (l["id"], l["mode"], l["true_exit_code"], n, lines[n - 1][:150]))
        continue
    assert ev and 1 <= ev <= n, l["id"]
    print("%s %-15s rc=%-4s lines=%-6d rank=%s ev=%d: %s" % (l["id"], l["mode"], l["true_exit_code"], n, l["rank"], ev, lines[ev - 1][:170]))
    for a in l["evidence_alts"]:
        print("%39s alt=%d: %s" % ("", a, lines[a - 1][:160]))

#!/usr/bin/env python3
"""Experiments of the gpualert paper, reproduced (standard library only).

    python3 eval.py classify [--corpus DIR] [--module PATH] [--json] [--results DIR]

Each experiment is one `cmd_<name>(args)` registered with `_add_<name>_args(sub)`
in build_parser(); new experiments add a pair without touching the others.
Results go to results/ as Markdown and CSV; a summary is printed (JSON with --json).
"""
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20240601
BOOTSTRAP_RESAMPLES = 1000
SUCCESS = "success"

# ==== Shared harness ====


def load_module(path, name="gpualert_under_test"):
    """Import a Python file by path (gpualert.py or a part) without installing it."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def read_labels(corpus):
    """labels.jsonl rows (dicts) of a corpus folder."""
    import json
    rows = []
    with open(os.path.join(corpus, "labels.jsonl")) as f:
        for line in f:
            if line.strip():
                rows.append(json.loads(line))
    return rows


def read_log(corpus, row, limit=64 * 1024 * 1024):
    with open(os.path.join(corpus, row["log_path"]), "rb") as f:
        return f.read(limit).decode("utf-8", "replace")


def per_class_scores(truth, pred, classes):
    """{class: (precision, recall, f1, support)} over all items (successes included)."""
    scores = {}
    for c in classes:
        tp = sum(1 for t, p in zip(truth, pred) if t == c and p == c)
        fp = sum(1 for t, p in zip(truth, pred) if t != c and p == c)
        fn = sum(1 for t, p in zip(truth, pred) if t == c and p != c)
        prec = tp / float(tp + fp) if tp + fp else 0.0
        rec = tp / float(tp + fn) if tp + fn else 0.0
        f1 = 2 * prec * rec / (prec + rec) if prec + rec else 0.0
        scores[c] = (prec, rec, f1, tp + fn)
    return scores


def macro_f1(truth, pred, classes=None):
    """Mean F1 over the failure classes present in truth (successes excluded)."""
    present = sorted(set(t for t in truth if t != SUCCESS)) if classes is None else classes
    present = [c for c in present if c in set(truth)]
    if not present:
        return 0.0
    scores = per_class_scores(truth, pred, present)
    return sum(scores[c][2] for c in present) / len(present)


def micro_f1(truth, pred):
    """Micro-F1 over failure labels: a success predicted as a failure is a false positive."""
    tp = sum(1 for t, p in zip(truth, pred) if t != SUCCESS and t == p)
    fp = sum(1 for t, p in zip(truth, pred) if p != SUCCESS and p != t)
    fn = sum(1 for t, p in zip(truth, pred) if t != SUCCESS and t != p)
    denom = 2 * tp + fp + fn
    return 2.0 * tp / denom if denom else 0.0


def accuracy(truth, pred):
    return sum(1 for t, p in zip(truth, pred) if t == p) / float(len(truth)) if truth else 0.0


def _macro_from_pairs(pairs):
    """Macro-F1 from (truth, pred) pairs in one pass (the bootstrap's inner loop)."""
    tp, fp, fn = {}, {}, {}
    for t, p in pairs:
        if t == p:
            tp[t] = tp.get(t, 0) + 1
        else:
            fp[p] = fp.get(p, 0) + 1
            fn[t] = fn.get(t, 0) + 1
    present = set(t for t, _ in pairs if t != SUCCESS)
    if not present:
        return 0.0
    total = 0.0
    for c in present:
        k = tp.get(c, 0)
        total += 2.0 * k / (2 * k + fp.get(c, 0) + fn.get(c, 0)) if k else 0.0
    return total / len(present)


def bootstrap_macro_f1(truth, pred, resamples=BOOTSTRAP_RESAMPLES, seed=SEED):
    """95% percentile interval of macro-F1 over item resamples (deterministic)."""
    import random
    rng = random.Random(seed)
    pairs = list(zip(truth, pred))
    n, values = len(pairs), []
    for _ in range(resamples):
        values.append(_macro_from_pairs([pairs[rng.randrange(n)] for _ in range(n)]))
    values.sort()
    return values[int(0.025 * (resamples - 1))], values[int(0.975 * (resamples - 1))]


def mcnemar_exact(truth, pred_a, pred_b):
    """(b, c, p): b = A right and B wrong, c = the reverse; two-sided exact binomial p."""
    import math
    b = sum(1 for t, x, y in zip(truth, pred_a, pred_b) if x == t and y != t)
    c = sum(1 for t, x, y in zip(truth, pred_a, pred_b) if x != t and y == t)
    n, k = b + c, min(b, c)
    if n == 0:
        return b, c, 1.0
    logs = [math.lgamma(n + 1) - math.lgamma(i + 1) - math.lgamma(n - i + 1) - n * math.log(2)
            for i in range(k + 1)]
    return b, c, min(1.0, 2.0 * sum(math.exp(v) for v in logs))


def false_alarm_rate(truth, pred):
    succ = [p for t, p in zip(truth, pred) if t == SUCCESS]
    return (sum(1 for p in succ if p != SUCCESS) / float(len(succ)), len(succ)) if succ else (0.0, 0)


def confusion(truth, pred):
    """{(true, predicted): count}."""
    out = {}
    for t, p in zip(truth, pred):
        out[(t, p)] = out.get((t, p), 0) + 1
    return out


def write_text(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def write_csv(path, header, rows):
    import csv
    import io
    buf = io.StringIO()
    w = csv.writer(buf, lineterminator="\n")
    w.writerow(header)
    w.writerows(rows)
    write_text(path, buf.getvalue())


def md_table(header, rows):
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(str(x) for x in r) + " |" for r in rows]
    return "\n".join(out)


# ==== Experiment 1: classify ====

# Baseline 1 (exit code only): what the scheduler's FAIL mail knows.
EXIT_CODE_MAP = {0: SUCCESS, -11: "segfault", 139: "segfault", -9: "oom_killer", 137: "oom_killer"}

# Baseline 2 (the paper's grep baseline, gpualert-eval baselines/grep_baseline.py): fixed,
# case-sensitive substrings, first hit in this order wins, anywhere in the log.
KEYWORDS = (
    ("CUDA out of memory", "cuda_oom"), ("NCCL", "nccl"), ("Segmentation fault", "segfault"),
    ("MemoryError", "ram_oom"), ("FileNotFoundError", "file_not_found"), ("PermissionError", "permission"),
    ("ModuleNotFoundError", "missing_module"), ("ZeroDivisionError", "div_zero"),
    ("AssertionError", "assertion"), ("nan", "nan_loss"), ("Killed", "oom_killer"),
    ("RuntimeError", "runtime_error"), ("Traceback", "traceback"),
)

# Baseline 3 (last traceback): the type of the last `XxxError` line.
EXCEPTION_MAP = {
    "OutOfMemoryError": "cuda_oom", "MemoryError": "ram_oom", "FileNotFoundError": "file_not_found",
    "PermissionError": "permission", "ModuleNotFoundError": "missing_module", "ImportError": "missing_module",
    "ZeroDivisionError": "div_zero", "AssertionError": "assertion", "RuntimeError": "runtime_error",
}


def predict_exit_code(row, text):
    return EXIT_CODE_MAP.get(row.get("true_exit_code"), "unknown")


def predict_keyword(row, text):
    for needle, cls in KEYWORDS:
        if needle in text:
            return cls
    return SUCCESS if row.get("true_exit_code") == 0 else "unknown"


def predict_last_exception(row, text):
    import re
    names = re.findall(r"(?m)^([A-Za-z_][A-Za-z0-9_.]*Error)\b", text)
    if not names:
        return SUCCESS if row.get("true_exit_code") == 0 else "unknown"
    return EXCEPTION_MAP.get(names[-1].split(".")[-1], "traceback")


def predict_gpualert(module, corpus, row):
    facts = {"exit_code": row.get("true_exit_code")}
    c = module.classify_log(os.path.join(corpus, row["log_path"]), facts)
    return c.cls or SUCCESS


def score_method(truth, pred, keyword_pred):
    lo, hi = bootstrap_macro_f1(truth, pred)
    fa, n_succ = false_alarm_rate(truth, pred)
    b, c, p = mcnemar_exact(truth, pred, keyword_pred)
    return {"macro_f1": macro_f1(truth, pred), "macro_f1_ci95": [lo, hi], "micro_f1": micro_f1(truth, pred),
            "accuracy": accuracy(truth, pred), "false_alarm_rate": fa, "successes": n_succ,
            "mcnemar_vs_keyword": {"b": b, "c": c, "p": p}}


def run_classify(corpus, module_path):
    module = load_module(module_path)
    rows = read_labels(corpus)
    truth = [r["mode"] for r in rows]
    texts = [read_log(corpus, r) for r in rows]
    t0 = time.time()
    preds = {"gpualert": [predict_gpualert(module, corpus, r) for r in rows]}
    elapsed = time.time() - t0
    preds["keyword"] = [predict_keyword(r, t) for r, t in zip(rows, texts)]
    preds["last_exception"] = [predict_last_exception(r, t) for r, t in zip(rows, texts)]
    preds["exit_code"] = [predict_exit_code(r, t) for r, t in zip(rows, texts)]
    classes = sorted(set(t for t in truth if t != SUCCESS))
    methods = {}
    for name, pred in preds.items():
        m = score_method(truth, pred, preds["keyword"])
        m["per_class"] = dict((c, dict(zip(("precision", "recall", "f1", "support"), v)))
                              for c, v in per_class_scores(truth, pred, classes).items())
        m["confusion"] = [[t, p, n] for (t, p), n in sorted(confusion(truth, pred).items())]
        methods[name] = m
    errors = [{"id": r.get("id"), "true": t, "pred": p}
              for r, t, p in zip(rows, truth, preds["gpualert"]) if t != p]
    return {"corpus": os.path.abspath(corpus), "module": os.path.abspath(module_path), "items": len(rows),
            "classes": classes, "seed": SEED, "resamples": BOOTSTRAP_RESAMPLES,
            "gpualert_seconds": elapsed, "methods": methods, "gpualert_errors": errors}


METHOD_ORDER = ("gpualert", "keyword", "last_exception", "exit_code")


def render_classify_md(res):
    rows = []
    for name in METHOD_ORDER:
        m = res["methods"][name]
        mc = m["mcnemar_vs_keyword"]
        rows.append((name, "%.3f" % m["macro_f1"], "[%.3f, %.3f]" % tuple(m["macro_f1_ci95"]),
                     "%.3f" % m["micro_f1"], "%.3f" % m["accuracy"],
                     "%.3f (%d)" % (m["false_alarm_rate"], m["successes"]),
                     "-" if name == "keyword" else "b=%d c=%d p=%.3g" % (mc["b"], mc["c"], mc["p"])))
    parts = ["# Experiment 1: failure classification", "",
             "Corpus: `%s` (%d logs, %d failure classes). Module: `%s`. Bootstrap: %d resamples, seed %d."
             % (res["corpus"], res["items"], len(res["classes"]), res["module"], res["resamples"],
                res["seed"]),
             "gpualert classified the corpus in %.2f s." % res["gpualert_seconds"], "",
             md_table(("method", "macro-F1", "95% CI", "micro-F1", "accuracy", "false alarms (successes)",
                       "McNemar vs keyword"), rows), ""]
    g = res["methods"]["gpualert"]["per_class"]
    parts += ["## gpualert per class", "", md_table(("class", "precision", "recall", "F1", "support"), [
        (c, "%.3f" % v["precision"], "%.3f" % v["recall"], "%.3f" % v["f1"], v["support"])
        for c, v in sorted(g.items())]), ""]
    parts += ["## gpualert confusion (true -> predicted, off-diagonal only)", ""]
    off = [(t, p, n) for t, p, n in res["methods"]["gpualert"]["confusion"] if t != p]
    parts += [md_table(("true", "predicted", "count"), off) if off else "none", ""]
    return "\n".join(parts)


def write_classify_results(res, out_dir, stem):
    write_text(os.path.join(out_dir, stem + ".md"), render_classify_md(res))
    write_csv(os.path.join(out_dir, stem + "_summary.csv"),
              ("method", "macro_f1", "ci_low", "ci_high", "micro_f1", "accuracy", "false_alarm_rate",
               "mcnemar_b", "mcnemar_c", "mcnemar_p"),
              [(n, "%.4f" % m["macro_f1"], "%.4f" % m["macro_f1_ci95"][0], "%.4f" % m["macro_f1_ci95"][1],
                "%.4f" % m["micro_f1"], "%.4f" % m["accuracy"], "%.4f" % m["false_alarm_rate"],
                m["mcnemar_vs_keyword"]["b"], m["mcnemar_vs_keyword"]["c"],
                "%.4g" % m["mcnemar_vs_keyword"]["p"])
               for n, m in ((n, res["methods"][n]) for n in METHOD_ORDER)])
    write_csv(os.path.join(out_dir, stem + "_per_class.csv"),
              ("method", "class", "precision", "recall", "f1", "support"),
              [(n, c, "%.4f" % v["precision"], "%.4f" % v["recall"], "%.4f" % v["f1"], v["support"])
               for n in METHOD_ORDER for c, v in sorted(res["methods"][n]["per_class"].items())])
    write_csv(os.path.join(out_dir, stem + "_confusion.csv"), ("method", "true", "predicted", "count"),
              [(n, t, p, k) for n in METHOD_ORDER for t, p, k in res["methods"][n]["confusion"]])


def _add_classify_args(sub):
    p = sub.add_parser("classify", help="experiment 1: failure classification vs baselines")
    p.add_argument("--corpus", default=os.path.join(HERE, "corpus"), help="corpus folder with labels.jsonl")
    p.add_argument("--module", default=os.path.join(HERE, "gpualert.py"),
                   help="file whose classify_log is evaluated (default gpualert.py)")
    p.add_argument("--results", default=os.path.join(HERE, "results"), help="output folder")
    p.add_argument("--json", action="store_true", help="print the numbers as JSON")
    p.set_defaults(handler=cmd_classify)


def cmd_classify(args):
    res = run_classify(args.corpus, args.module)
    corpus_name = os.path.basename(os.path.normpath(args.corpus))
    default = os.path.abspath(args.corpus) == os.path.join(HERE, "corpus")
    stem = "classify" if default else "classify_" + corpus_name
    write_classify_results(res, args.results, stem)
    if args.json:
        import json
        print(json.dumps(res, indent=1, sort_keys=True))
        return 0
    print("corpus %s: %d logs, %d classes; gpualert %.2f s"
          % (res["corpus"], res["items"], len(res["classes"]), res["gpualert_seconds"]))
    for name in METHOD_ORDER:
        m = res["methods"][name]
        print("  %-15s macro-F1 %.3f [%.3f, %.3f]  micro-F1 %.3f  acc %.3f  false alarms %.3f  McNemar p %.3g"
              % (name, m["macro_f1"], m["macro_f1_ci95"][0], m["macro_f1_ci95"][1], m["micro_f1"],
                 m["accuracy"], m["false_alarm_rate"], m["mcnemar_vs_keyword"]["p"]))
    for e in res["gpualert_errors"]:
        print("  wrong: %s true=%s pred=%s" % (e["id"], e["true"], e["pred"]))
    print("wrote %s" % os.path.join(args.results, stem + ".md"))
    return 0


# ==== CLI ====

def build_parser():
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="experiment")
    _add_classify_args(sub)
    return parser


def main(argv=None):
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return args.handler(args)
    except BrokenPipeError:  # `eval.py classify | head`
        return 0


if __name__ == "__main__":
    sys.exit(main())

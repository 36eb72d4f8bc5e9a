#!/usr/bin/env python3
"""Experiments of the gpualert paper, reproduced (standard library only).

    python3 eval.py classify [--corpus DIR] [--module PATH] [--json] [--results DIR]
    python3 eval.py survival|overhead|isolation|budget|runs [--quick] [--results DIR]
    python3 eval.py soak [--runs N] [--jobs J]  spool/claims/dead letters under SIGKILL
    python3 eval.py all [--quick] [--no-skips]  every experiment in order (then `report`)
    python3 eval.py report              rewrite README.md's Results section from results/

Standard library only; the SMTP server the reliability experiments talk to is aiosmtpd,
the tests' own dependency: without it those cells say "skipped: aiosmtpd absent".

Each experiment is one `cmd_<name>(args)` registered with `_add_<name>_args(sub)`
in build_parser(); new experiments add a pair without touching the others.
Results go to results/ as Markdown and CSV; a summary is printed (JSON with --json).
"""
import collections
import csv
import glob
import json
import math
import os
import platform
import re
import resource
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "tests"))
from _load import load_module  # noqa: E402 - the one loader, shared with the tests
SEED = 20240601
BOOTSTRAP_RESAMPLES = 1000
SUCCESS = "success"

# ==== Shared harness ====


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


def verdict_gpualert(module, corpus, row):
    """gpualert's whole verdict on one labelled log (class, line, detail, ...)."""
    facts = {"exit_code": row.get("true_exit_code")}
    return module.classify_log(os.path.join(corpus, row["log_path"]), facts)


def predict_gpualert(module, corpus, row):
    return verdict_gpualert(module, corpus, row).cls or SUCCESS


_NAMED_RANK_RE = re.compile(r"\brank (\d+)\b")


def line_right(row, verdict):
    """None when the row labels no evidence line; else whether the verdict's line (1-based, in
    the log file) is the labelled one or one of its equally good alternatives."""
    want = row.get("evidence_line")
    if want is None:
        return None
    return verdict.line is not None and (verdict.line == want or verdict.line in (row.get("evidence_alts") or ()))


def rank_right(row, verdict):
    """None when the row labels no failing rank (single-process runs, old sets); else whether
    the verdict names the labelled rank: its rank, or a 'rank N' in its detail ('rank 3: ...',
    '... the launcher names rank 1 as the first failure')."""
    want = row.get("rank")
    if want is None:
        return None
    if getattr(verdict, "rank", None) is not None and int(verdict.rank) == int(want):
        return True
    return int(want) in [int(n) for n in _NAMED_RANK_RE.findall(verdict.detail or "")]


def bootstrap_share(hits, resamples=BOOTSTRAP_RESAMPLES, seed=SEED):
    """95% percentile interval of the share of True in hits over item resamples (deterministic)."""
    import random
    if not hits:
        return 0.0, 0.0
    rng = random.Random(seed)
    n, values = len(hits), []
    for _ in range(resamples):
        values.append(sum(1 for _ in range(n) if hits[rng.randrange(n)]) / float(n))
    values.sort()
    return values[int(0.025 * (resamples - 1))], values[int(0.975 * (resamples - 1))]


def locate_scores(rows, verdicts):
    """Evidence-line and rank accuracy over the rows that label them: {"line": {...}, "rank":
    {...}}, each with right, n, share and its bootstrap interval; n 0 for a set without labels."""
    out = {}
    for name, judge in (("line", line_right), ("rank", rank_right)):
        hits = [h for h in (judge(r, v) for r, v in zip(rows, verdicts)) if h is not None]
        lo, hi = bootstrap_share(hits)
        out[name] = {"right": sum(hits), "n": len(hits), "share": sum(hits) / float(len(hits)) if hits else None,
                     "ci95": [lo, hi]}
    return out


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
    verdicts = [verdict_gpualert(module, corpus, r) for r in rows]
    elapsed = time.time() - t0
    preds = {"gpualert": [v.cls or SUCCESS for v in verdicts]}
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
    methods["gpualert"]["locate"] = locate_scores(rows, verdicts)
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


# ==== Experiment 1b: blind held-out sets, before and after ====

# A blind set is written without seeing the rules (from cited public wording) and frozen
# before any fix made while looking at it. Only aggregate figures are printed and kept: the
# logs, and which of them were missed, stay unread, so the set stays a fair test.
BLIND_BEFORE = "4ee024a"
#: Each blind set's "before": the main it was first scored on, before anyone looked at it
#: (dev2's is the round-three rules, written before dev2 existed).
BLIND_SETS = (("frozen", BLIND_BEFORE), ("dev", BLIND_BEFORE), ("dev2", "2e19f6d"), ("dev3", "822697b"),
              ("dev4", "9469e3f"), ("dev5", "72694bc"), ("dev6", "21e595a"), ("dev7", "b90822e"),
              ("dev8", "63330e7"), ("dev9", "63330e7"))


def _add_blind_args(sub):
    p = sub.add_parser("blind", help="experiment 1b: a blind held-out set, classifier before vs after")
    p.add_argument("--corpus", required=True, help="blind corpus folder with labels.jsonl")
    p.add_argument("--name", required=True, help="the set's name in results/ (e.g. frozen, dev)")
    p.add_argument("--before", default=BLIND_BEFORE, help="commit whose gpualert.py is 'before'")
    p.add_argument("--results", default=os.path.join(HERE, "results"), help="output folder")
    p.set_defaults(handler=cmd_blind)


def _git_out(*argv):
    return subprocess.check_output(("git", "-C", HERE) + argv).decode().strip()


def cmd_blind(args):
    work = tempfile.mkdtemp(prefix="gpualert-blind-")
    try:
        before = os.path.join(work, "gpualert_before.py")
        write_text(before, _git_out("show", "%s:gpualert.py" % args.before) + "\n")
        after_commit = _git_out("rev-parse", "--short", "HEAD")
        dirty = bool(_git_out("status", "--porcelain", "gpualert.py"))
        rows = []
        for label, module, commit in (("before", before, args.before),
                                      ("after", os.path.join(HERE, "gpualert.py"), after_commit + ("+" if dirty else ""))):
            m = run_classify(args.corpus, module)["methods"]["gpualert"]
            rows.append([args.name, label, commit, m["successes"], "%.4f" % m["macro_f1"],
                         "%.4f" % m["macro_f1_ci95"][0], "%.4f" % m["macro_f1_ci95"][1],
                         "%.4f" % m["false_alarm_rate"], time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())]
                        + _locate_cells(m["locate"]))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    items = len(read_labels(args.corpus))
    write_csv(os.path.join(args.results, "classify_blind_%s.csv" % args.name), BLIND_CSV_HEADER, rows)
    for row in rows:
        print("blind set %s (%d logs, %s successes): %s (%s) macro-F1 %s [%s, %s], false alarms %s; "
              "evidence line %s; rank %s"
              % (row[0], items, row[3], row[1], row[2], row[4], row[5], row[6], row[7],
                 _share_text(row[9:14]), _share_text(row[14:19])))
    return 0


BLIND_CSV_HEADER = ("set", "classifier", "commit", "successes", "macro_f1", "ci_low", "ci_high",
                    "false_alarm_rate", "measured", "line_right", "line_n", "line_acc", "line_ci_low",
                    "line_ci_high", "rank_right", "rank_n", "rank_acc", "rank_ci_low", "rank_ci_high")


def _locate_cells(locate):
    """The CSV cells of locate_scores: right, n, share, interval per measure; blank without labels."""
    cells = []
    for name in ("line", "rank"):
        s = locate[name]
        if not s["n"]:
            cells += ["", "0", "", "", ""]
        else:
            cells += [s["right"], s["n"], "%.4f" % s["share"], "%.4f" % s["ci95"][0], "%.4f" % s["ci95"][1]]
    return cells


def _share_text(cells):
    """'0.9500 [0.91, 0.98] (171/180)' from right, n, share, low, high; 'not labelled' without."""
    right, n, share, lo, hi = [str(c) for c in cells]
    if not share:
        return "not labelled"
    return "%s [%s, %s] (%s/%s)" % (share, lo, hi, right, n)


# ==== Reliability and performance experiments ====

# EVAL_GPUALERT=/path/to/gpualert.py measures another copy (e.g. a trial splice); default: the repo's.
WRAPPER = os.path.abspath(os.environ.get("EVAL_GPUALERT") or os.path.join(HERE, "gpualert.py"))
RESULTS_DIR = os.path.join(HERE, "results")
REL_PY = sys.executable
MIB = 1024 * 1024
SCRUBBED_ENV = ("PYTHONUNBUFFERED", "PYTHONFAULTHANDLER", "PYTHONDEVMODE", "PYTHONMALLOC",
                "PYTHONINSPECT", "PYTHONWARNINGS")
TRAVEL_NOTE = "Ratios travel between machines, absolute times do not."


class Experiment(object):
    """One experiment's context, handed down to what it calls instead of module-level state:
    a fresh work folder, a clean environment, the results folder, --quick, the start time,
    and a private copy of gpualert.py taken now (`wrapper`, described by `info`): the file in
    the repository may change while an experiment runs (someone is editing it), and one
    experiment must see one program."""

    def __init__(self, args, name):
        self.results = getattr(args, "results", None) or RESULTS_DIR
        self.quick = bool(getattr(args, "quick", False))
        self.started, self.load_at_start = time.time(), os.getloadavg()[0]
        self.work = tempfile.mkdtemp(prefix="gpualert-%s-" % name)
        folder = os.path.join(self.work, "snapshot")
        os.makedirs(folder)
        self.wrapper = os.path.join(folder, "gpualert.py")
        shutil.copy(WRAPPER, self.wrapper)
        self.info = wrapper_info(self.wrapper)
        self.env = clean_env(self.work)

    def elapsed(self):
        return time.time() - self.started

    def gpualert_argv(self, log_dir, outbox, options, cmd):
        """The snapshot run as a file: python3 gpualert.py --log-dir D --outbox O OPTIONS -- CMD."""
        return [REL_PY, self.wrapper, "--log-dir", log_dir, "--outbox", outbox] + list(options) + ["--"] + list(cmd)


# ==== Statistics ====

def wilson(k, n, z=1.959964):
    """Wilson score 95% interval for k successes out of n."""
    if n == 0:
        return (float("nan"), float("nan"))
    p = float(k) / n
    d = 1 + z * z / n
    c = (p + z * z / (2 * n)) / d
    h = z * math.sqrt(p * (1 - p) / n + z * z / (4.0 * n * n)) / d
    return (max(0.0, c - h), min(1.0, c + h))


def _lcomb(n, k):
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def fisher_exact(a, b, c, d):
    """Two-sided Fisher exact p for [[a, b], [c, d]]: sum of tables no likelier than observed."""
    r1, r2, c1 = a + b, c + d, a + c
    n = r1 + r2
    lo, hi = max(0, c1 - r2), min(r1, c1)
    logp = lambda x: _lcomb(r1, x) + _lcomb(r2, c1 - x) - _lcomb(n, c1)
    observed = logp(a)
    total = sum(math.exp(logp(x)) for x in range(lo, hi + 1) if logp(x) <= observed + 1e-7)
    return min(1.0, total)


def rel_median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


# ==== Common plumbing ====

def machine_info():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "python": platform.python_version(),
            "date": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
            "kernel": platform.release()}


def wrapper_info(path):
    """Which gpualert.py was measured: version, size and a hash of its text."""
    import hashlib
    with open(path, "rb") as f:
        data = f.read()
    text = data.decode("utf-8", "replace")
    version = subprocess.run([REL_PY, path, "--version"], stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT).stdout.decode().strip()
    return {"sha256": hashlib.sha256(data).hexdigest()[:12], "lines": text.count("\n"),
            "version": version, "commit": _commit_of(data)}


def _commit_of(data):
    """The commit whose gpualert.py these bytes are ('+' when the working copy differs)."""
    try:
        head = _git_out("rev-parse", "--short", "HEAD")
        committed = subprocess.check_output(("git", "-C", HERE, "show", "HEAD:gpualert.py"))
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return head if committed == data else head + "+"


MISSING = set()  # what an experiment looked for and ran without: `all --no-skips` fails on it


def found(tool, present):
    """`present`, noting `tool` as missing when it is not (an experiment then skips cells)."""
    if not present:
        MISSING.add(tool)
    return present


def have_aiosmtpd():
    import importlib
    try:
        importlib.import_module("aiosmtpd.controller")
        return True
    except ImportError:
        return found("aiosmtpd", False)


def clean_env(base, extra=None):
    """The harness environment: no Python buffering/faulthandler tweaks, no GPUALERT_*,
    an empty config home, and state/tmp inside the experiment's own directory."""
    env = dict((k, v) for k, v in os.environ.items()
               if not k.startswith("GPUALERT_") and k not in SCRUBBED_ENV)
    for key, sub in (("XDG_CONFIG_HOME", "config"), ("XDG_STATE_HOME", "state"), ("TMPDIR", "tmp")):
        env[key] = os.path.join(base, sub)
        os.makedirs(env[key], exist_ok=True)
    env.update(extra or {})
    return env


def no_core_dumps():
    """Crashing children must not write core files (core_pattern may be plain `core`)."""
    try:
        soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
        resource.setrlimit(resource.RLIMIT_CORE, (0, hard))
    except (ValueError, OSError):
        pass


def shell_status(status):
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.WEXITSTATUS(status)


def _hwm_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        return None
    return None


class _HwmPoller(object):
    """Polls /proc/PID/status VmHWM (the process's own peak RSS; monotonic), so the last
    reading before exit is the peak up to the last poll_s. Unlike ru_maxrss from wait4,
    it excludes the process's children."""

    def __init__(self, pid, poll_s=0.01):
        self.pid, self.poll_s, self.peak = pid, poll_s, None
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._loop, daemon=True)
        self.thread.start()

    def _loop(self):
        while not self.stop.is_set():
            v = _hwm_kib(self.pid)
            if v is not None:
                self.peak = max(self.peak or 0, v)
            self.stop.wait(self.poll_s)

    def finish(self):
        self.stop.set()
        self.thread.join()
        return self.peak


def run_proc(argv, env, cwd, *, stdout=None, stderr=None, stdin=None, timeout=300, poll_rss=False,
             on_start=None):
    """Run argv to completion; wall time, wait4 rusage, shell-style status, optional VmHWM."""
    out = stdout if stdout is not None else subprocess.DEVNULL
    err = stderr if stderr is not None else subprocess.DEVNULL
    t0 = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=cwd, stdout=out, stderr=err,
                            stdin=stdin if stdin is not None else subprocess.DEVNULL)
    poller = _HwmPoller(proc.pid) if poll_rss else None
    timer = threading.Timer(timeout, lambda: _kill_quietly(proc.pid))
    timer.start()
    if on_start:
        on_start(proc)
    _, status, usage = os.wait4(proc.pid, 0)
    t1 = time.perf_counter()
    end = time.time()
    timer.cancel()
    proc.returncode = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
    return {"wall": t1 - t0, "end": end, "status": shell_status(status), "ru": usage,
            "hwm_kib": poller.finish() if poller else None}


def _kill_quietly(pid, sig=signal.SIGKILL):
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def find_run(log_dir):
    """(output.log path, run.json dict or {}) of the single run under log_dir."""
    logs = sorted(glob.glob(os.path.join(log_dir, "*", "output*.log")))
    if not logs:
        return None, {}
    record = {}
    try:
        with open(os.path.join(os.path.dirname(logs[0]), "run.json")) as f:
            record = json.load(f)
    except (OSError, ValueError):
        pass
    return logs[0], record


def child_cpu_s(record):
    ru = record.get("rusage") or {}
    try:
        return float(ru.get("utime_s", 0)) + float(ru.get("stime_s", 0))
    except (TypeError, ValueError):
        return 0.0


def write_script(folder, name, text):
    path = os.path.join(folder, name)
    with open(path, "w") as f:
        f.write(text)
    return path


def rel_fmt(value, spec="%.3f", none="n/a"):
    return none if value is None else spec % value


def rel_table(headers, rows):
    lines = ["| " + " | ".join(headers) + " |", "|" + "|".join("---" for _ in headers) + "|"]
    lines += ["| " + " | ".join(str(c).replace("|", "\\|") for c in row) + " |" for row in rows]
    return "\n".join(lines)


def write_rel_results(ex, name, title, blocks, csv_table, *, extra_csv=None):
    """results/<name>.md (machine, date, the travel note, then blocks), results/<name>.csv from
    csv_table (headers, rows) and results/<name>_<suffix>.csv for each extra_csv entry."""
    results_dir = ex.results
    os.makedirs(results_dir, exist_ok=True)
    m, w = machine_info(), ex.info
    csv_headers, csv_rows = csv_table
    head = ["# %s" % title, "",
            "- machine: %d CPUs, %s; Linux %s; Python %s" % (m["nproc"], m["cpu"], m["kernel"], m["python"]),
            "- date: %s" % m["date"],
            "- gpualert.py: %s, %d lines, sha256 %s, commit %s" % (w["version"], w["lines"], w["sha256"],
                                                            w["commit"]),
            "- %s" % TRAVEL_NOTE, ""]
    md_path = os.path.join(results_dir, name + ".md")
    with open(md_path, "w") as f:
        f.write("\n".join(head + list(blocks)) + "\n")
    write_csv(os.path.join(results_dir, name + ".csv"), csv_headers, csv_rows)
    for suffix, (headers, rows) in (extra_csv or {}).items():
        write_csv(os.path.join(results_dir, "%s_%s.csv" % (name, suffix)), headers, rows)
    return md_path


# ==== SMTP test servers ====

def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


class Sink(object):
    """aiosmtpd on loopback, plain: records (arrival time, bytes) of every accepted message,
    and (in `sessions`, same order) the session it came in, to tell whether the client said
    QUIT after it (a client killed before the 250 reached it never does)."""

    def __init__(self, size_limit=256 * MIB):
        import logging
        from aiosmtpd.controller import Controller
        logging.getLogger("mail.log").setLevel(logging.CRITICAL)
        self.messages, self.sessions, self.quits, self.lock = [], [], set(), threading.Lock()
        sink = self

        class Handler(object):
            async def handle_DATA(self, server, session, envelope):
                arrived = time.time()
                data = envelope.original_content or envelope.content or b""
                with sink.lock:
                    sink.messages.append((arrived, bytes(data)))
                    sink.sessions.append(session)  # kept: its id stays unique
                return "250 OK"

            async def handle_QUIT(self, server, session, envelope):
                with sink.lock:
                    sink.quits.add(id(session))
                return "221 Bye"

        self.port = free_port()
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port,
                                     data_size_limit=size_limit)
        self.controller.start()

    def find(self, token):
        tok = token.encode()
        with self.lock:
            return [(t, d) for t, d in self.messages if tok in d]

    def stop(self):
        self.controller.stop()


class FakeRelay(object):
    """A socket server speaking just enough SMTP to fail in one chosen way.

    modes: mute (accept, never answer), slow (every reply after `delay` s), mail_5xx,
    rcpt_5xx, data_5xx, auth_fail (AUTH offered, 535), tls_garbage (STARTTLS offered,
    220, then bytes that are not TLS)."""

    def __init__(self, mode, delay=5.0):
        self.mode, self.delay, self.connections = mode, delay, 0
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self.stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except socket.timeout:
                continue
            except OSError:
                return
            self.connections += 1
            threading.Thread(target=self._serve_safely, args=(conn,), daemon=True).start()

    def _serve_safely(self, conn):
        try:
            conn.settimeout(60)
            self._serve(conn)
        except (OSError, ValueError):
            pass
        finally:
            conn.close()

    def _reply(self, conn, text):
        if self.mode == "slow":
            time.sleep(self.delay)
        elif self.mode == "slow_drip":
            time.sleep(1.0)
        conn.sendall(text.encode() + b"\r\n")

    def _serve(self, conn):
        if self.mode == "mute":
            while not self.stopped.is_set() and conn.recv(4096):
                pass
            return
        reader = conn.makefile("rb")
        self._reply(conn, "220 fake.relay ESMTP")
        for raw in reader:
            verb = raw.strip().split(b" ")[0].upper()
            if not self._answer(conn, reader, verb):
                return

    def _answer(self, conn, reader, verb):
        mode = self.mode
        if verb == b"EHLO":
            ext = ["250-fake.relay", "250-8BITMIME"]
            ext += ["250-AUTH PLAIN LOGIN"] if mode == "auth_fail" else []
            ext += ["250-STARTTLS"] if mode == "tls_garbage" else []
            self._reply(conn, "\r\n".join(ext + ["250 SIZE 104857600"]))
        elif verb == b"HELO" or verb in (b"RSET", b"NOOP"):
            self._reply(conn, "250 ok")
        elif verb == b"STARTTLS":
            self._reply(conn, "220 go ahead")
            conn.sendall(b"this is not a TLS server hello\r\n" * 4)
            return False
        elif verb == b"AUTH":
            self._reply(conn, "535 5.7.8 authentication credentials invalid")
        elif verb == b"MAIL":
            self._reply(conn, "550 5.7.1 sender rejected" if mode == "mail_5xx" else "250 ok")
        elif verb == b"RCPT":
            self._reply(conn, "550 5.1.1 no such user" if mode == "rcpt_5xx" else "250 ok")
        elif verb == b"DATA":
            self._reply(conn, "354 go on")
            for line in reader:
                if line in (b".\r\n", b".\n"):
                    break
            self._reply(conn, "554 5.6.0 message rejected" if mode == "data_5xx" else "250 queued")
        elif verb == b"QUIT":
            self._reply(conn, "221 bye")
            return False
        else:
            self._reply(conn, "502 not implemented")
        return True

    def stop(self):
        self.stopped.set()
        self.sock.close()


def closed_port():
    """A loopback port with no listener: connections are refused."""
    return free_port()


# ==== survival ====

CHILD_FAULT = r'''
import os, sys, time
fault, ready = sys.argv[1], sys.argv[2]
if fault == "segfault":
    import ctypes
if fault == "pipekill":
    import signal
for i in range(5):
    print("step %d loss %.4f" % (i, 1.0 / (i + 1)))
if fault == "pipekill":  # a backlog, so the last line is still in the pipe when the writer dies
    for i in range(2000):
        print("filler %05d %s" % (i, "x" * 100))
if fault == "memory":
    import resource
    vm = 0
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmSize:"):
                vm = int(line.split()[1]) * 1024
    hard = resource.getrlimit(resource.RLIMIT_AS)[1]
    resource.setrlimit(resource.RLIMIT_AS, (vm + (64 << 20), hard))
print("SENTINEL-LAST-LINE fault=%s" % fault)
if fault == "exception":
    raise RuntimeError("injected fault")
elif fault == "segfault":
    ctypes.string_at(0)
elif fault == "abort":
    os.abort()
elif fault == "memory":
    hog = bytearray(1 << 30)
elif fault == "sigkill":
    with open(ready + ".tmp", "w") as f:
        f.write(str(os.getpid()))
    os.rename(ready + ".tmp", ready)
    time.sleep(60)
elif fault == "pipekill":
    os.kill(os.getpid(), signal.SIGKILL)
'''

# fault -> (what it is, regex that counts as "cause visible in the log"); the same regex is
# applied to every method's log (to the child's output only in gpualert's: child_output).
FAULTS = (
    ("exception", "uncaught RuntimeError", r"RuntimeError: injected fault"),
    ("segfault", "ctypes.string_at(0)", r"Segmentation fault|SIGSEGV"),
    ("sigkill", "SIGKILL from outside after the last line", r"SIGKILL|Killed"),
    ("abort", "os.abort()", r"Aborted|SIGABRT"),
    ("memory", "MemoryError under RLIMIT_AS (+64 MiB)", r"MemoryError"),
    ("pipekill", "last line, then SIGKILL at once (line still in the pipe)", r"SIGKILL|Killed"),
    ("exec", "command not found", r"not found|No such file or directory"),
)
CHILDREN = (("python -u", ["-u"]), ("python", []))
METHODS = ("gpualert", "gpualert --no-env-tweaks", "redirect", "redirect (bash)", "nohup", "tee")
BASELINES_TESTED = ("redirect", "redirect (bash)")
SENTINEL = "SENTINEL-LAST-LINE"
MISSING_CMD = "gpualert-eval-no-such-command"


def _survival_cmd(fault, flags, script, ready):
    if fault == "exec":
        return [MISSING_CMD, "--epochs", "1"]
    return [REL_PY] + flags + [script, fault, ready]


def _method_argv(ex, method, cmd, trial_dir):
    log = os.path.join(trial_dir, "out.log")
    q = " ".join(shlex.quote(c) for c in cmd)
    if method.startswith("gpualert"):
        return ex.gpualert_argv(os.path.join(trial_dir, "logs"), os.path.join(trial_dir, "outbox"),
                                ["--notify", "never"] + method.split()[1:], cmd), None
    if method == "redirect":
        return ["sh", "-c", "%s > %s 2>&1" % (q, shlex.quote(log))], log
    if method == "redirect (bash)":  # sbatch scripts usually start with #!/bin/bash
        return ["bash", "-c", "%s > %s 2>&1" % (q, shlex.quote(log))], log
    if method == "nohup":
        return ["sh", "-c", "nohup %s > %s 2>&1" % (q, shlex.quote(log))], log
    return ["sh", "-c", "%s 2>&1 | tee %s" % (q, shlex.quote(log))], log


def _kill_when_ready(ready, deadline_s=20.0):
    """For the outside-SIGKILL fault: wait for the child's pid file, then SIGKILL it."""
    end = time.time() + deadline_s
    while time.time() < end:
        try:
            with open(ready) as f:
                pid = int(f.read())
            _kill_quietly(pid)
            return True
        except (OSError, ValueError):
            time.sleep(0.003)
    return False


def survival_trial(ex, fault, flags, method, *, script, trial_dir):
    os.makedirs(trial_dir)
    ready = os.path.join(trial_dir, "ready")
    cmd = _survival_cmd(fault, flags, script, ready)
    argv, log = _method_argv(ex, method, cmd, trial_dir)
    killer = None
    if fault == "sigkill":
        killer = threading.Thread(target=_kill_when_ready, args=(ready,), daemon=True)
        killer.start()
    res = run_proc(argv, ex.env, trial_dir, timeout=60)
    if killer:
        killer.join()
    if method.startswith("gpualert"):
        log = find_run(os.path.join(trial_dir, "logs"))[0]
    text = ""
    if log and os.path.exists(log):
        with open(log, "rb") as f:
            text = f.read().decode("utf-8", "replace")
    if method.startswith("gpualert"):  # judged on the child's output, never on gpualert's verdict
        text = child_output(text)
    pattern = dict((f[0], f[2]) for f in FAULTS)[fault]
    return {"nonempty": bool(text), "sentinel": SENTINEL in text,
            "cause": bool(re.search(pattern, text)),
            "nohup_out": os.path.exists(os.path.join(trial_dir, "nohup.out")),
            "status": res["status"], "wall": res["wall"]}


_RECORD_FIELD_RE = re.compile(r"^[a-z][a-z ]*: ")


def child_output(text):
    """A gpualert log without gpualert's own records (the header before the output, the
    footer and the cause record after it: a "=== gpualert ... ===" line and the
    "key: value" lines that follow it): only what the child wrote. Written here, not
    borrowed from gpualert.py, so the survival judge never grades gpualert with its own code."""
    out, in_record = [], False
    for line in text.split("\n"):
        if line.startswith("=== gpualert "):
            in_record = True
            continue
        if in_record and _RECORD_FIELD_RE.match(line):
            continue
        in_record = False
        out.append(line)
    return "\n".join(out).strip("\n")


KEEP_DIR = os.path.join(tempfile.gettempdir(), "gpualert-eval-kept")


def _keep_if_odd(trial_dir, odd):
    """Remove a trial's directory, unless it shows something to explain: then move it
    under KEEP_DIR for inspection (the report names it)."""
    if odd:
        os.makedirs(KEEP_DIR, exist_ok=True)
        dest = os.path.join(KEEP_DIR, os.path.basename(trial_dir) + "-%d" % int(time.time()))
        shutil.move(trial_dir, dest)
        print("  kept for inspection: %s" % dest)
    else:
        shutil.rmtree(trial_dir, ignore_errors=True)


def cmd_survival(args):
    no_core_dumps()
    trials = 3 if args.quick else 20
    ex = Experiment(args, "survival")
    base = ex.work
    script = write_script(base, "child_fault.py", CHILD_FAULT)
    cells = []
    for fault, what, pattern in FAULTS:
        children = [("-", [])] if fault == "exec" else CHILDREN
        for child, flags in children:
            for n in range(trials):  # methods interleaved trial by trial
                for method in METHODS:
                    trial_dir = os.path.join(base, "%s-%s-%s-%02d" % (
                        fault, child.replace(" ", ""), re.sub(r"[^a-z]+", "", method), n))
                    r = survival_trial(ex, fault, flags, method, script=script, trial_dir=trial_dir)
                    cells.append(dict(r, fault=fault, child=child, method=method, trial=n))
                    # odd: gpualert lost the child's last line (its cause may be unseen:
                    # a SIGKILL leaves no trace in the child's own output)
                    _keep_if_odd(trial_dir, method == "gpualert" and not (
                        r["sentinel"] or fault == "exec"))
    shutil.rmtree(base, ignore_errors=True)
    return _report_survival(ex, cells, trials)


def _tally(cells, fault, child, method, key):
    sel = [c for c in cells if (c["fault"], c["child"], c["method"]) == (fault, child, method)]
    return sum(1 for c in sel if c[key]), len(sel)


def _report_survival(ex, cells, trials):
    elapsed = ex.elapsed()
    keys = ("nonempty", "sentinel", "cause")
    combos = []
    for fault, _, _ in FAULTS:
        for child in (["-"] if fault == "exec" else [c for c, _ in CHILDREN]):
            combos.append((fault, child))
    compact, detail, csv_rows, tests = [], [], [], []
    for fault, child in combos:
        row = [fault, child]
        for method in METHODS:
            t = [_tally(cells, fault, child, method, k) for k in keys]
            sentinel = "n/a" if fault == "exec" else "%d" % t[1][0]
            row.append("%d / %s / %d" % (t[0][0], sentinel, t[2][0]))
            for k, (hit, n) in zip(keys, t):
                lo, hi = wilson(hit, n)
                shown = "n/a" if (k == "sentinel" and fault == "exec") else "%d/%d [%.2f, %.2f]" % (hit, n, lo, hi)
                detail.append([fault, child, method, k, shown])
                csv_rows.append([fault, child, method, k, hit, n, "%.4f" % (float(hit) / n if n else 0),
                                 "%.4f" % lo, "%.4f" % hi])
        compact.append(row)
        for k in keys:
            if k == "sentinel" and fault == "exec":
                continue
            g, n1 = _tally(cells, fault, child, "gpualert", k)
            for base in BASELINES_TESTED:
                r, n2 = _tally(cells, fault, child, base, k)
                if g != r:
                    tests.append([fault, child, k, base, "%d/%d" % (g, n1), "%d/%d" % (r, n2),
                                  "%.2g" % fisher_exact(g, n1 - g, r, n2 - r)])
    nohup_out = sum(1 for c in cells if c["method"] == "nohup" and c["nohup_out"])
    walls = dict((m, rel_median([c["wall"] for c in cells if c["method"] == m])) for m in METHODS)
    fault_rows = [[f, w, "`%s`" % p] for f, w, p in FAULTS]
    blocks = [
        "## Log survival (%d trials per cell; %.0f s)" % (trials, elapsed), "",
        "Each child prints 5 progress lines, then the sentinel `%s`, then meets the fault. "
        "Children: `python -u` and plain `python` (block-buffered stdout when not a terminal; the "
        "harness removes PYTHONUNBUFFERED/PYTHONFAULTHANDLER from every child's environment, so "
        "any unbuffering is the method's own doing). Core dumps off (RLIMIT_CORE=0) for all." % SENTINEL, "",
        "Methods: `gpualert`: `python3 gpualert.py --notify never --log-dir D -- CMD` (by default it "
        "sets PYTHONUNBUFFERED=1 and PYTHONFAULTHANDLER=1 for the child); `gpualert --no-env-tweaks`: "
        "the same without them, to separate what the capture does from what the environment does; "
        "`redirect`: `sh -c 'CMD > log 2>&1'`; `redirect (bash)`: `bash -c 'CMD > log 2>&1'`; `nohup`: `sh -c 'nohup CMD > log 2>&1'` (stdout "
        "redirected, so nohup writes no nohup.out: %d nohup.out files seen); `tee`: "
        "`sh -c 'CMD 2>&1 | tee log'`; /bin/sh is %s here (the shell decides whether its own "
        "'Segmentation fault'/'Killed' report lands in the redirected file). Checks on the log file only (not the terminal): non-empty, "
        "sentinel present, cause visible (regex per fault, identical for all methods). "
        "For gpualert the three checks read the child's output only: its own records (header, "
        "footer with the signal, cause record) are removed first (eval.child_output), so its "
        "verdict never grades itself; for `exec` no child ran, so no gpualert cell can show the "
        "cause, while a shell writes its own 'not found' line into the redirected file." % (
            nohup_out, os.path.realpath("/bin/sh")), "",
        rel_table(["fault", "what", "cause regex"], fault_rows), "",
        "### Compact: non-empty / sentinel / cause, out of %d" % trials, "",
        rel_table(["fault", "child"] + list(METHODS), compact), "",
        "### gpualert vs the redirects where they differ (Fisher's exact test, two-sided)", "",
        rel_table(["fault", "child", "check", "baseline", "gpualert", "baseline k/n", "p"], tests) if tests else "(no differences)", "",
        "### Detail with Wilson 95% intervals", "",
        rel_table(["fault", "child", "method", "check", "k/n [95% CI]"], detail), "",
        "Median wall per trial: " + ", ".join("%s %.3f s" % (m, walls[m] or 0) for m in METHODS), "",
    ]
    write_rel_results(ex, "survival", "Log survival", blocks,
                      (["fault", "child", "method", "check", "hits", "n", "rate", "wilson_lo", "wilson_hi"], csv_rows))
    print("survival: %d trials/cell, %.0f s; non-empty/sentinel/cause:" % (trials, elapsed))
    print("  %-10s %-10s " % ("fault", "child") + " ".join("%-13s" % m.replace(" --no-env-tweaks", "-noenv").replace("redirect (bash)", "bash-redir") for m in METHODS))
    for row in compact:
        print("  %-10s %-10s " % (row[0], row[1]) + " ".join("%-13s" % c for c in row[2:]))
    for t in tests:
        print("  fisher %s/%s %s vs %s: gpualert %s vs %s p=%s" % tuple(t))
    return 0


# ==== overhead ====

CHILD_STREAM = r'''
import os, sys
total = int(sys.argv[1])
line = b"step 000000 loss 0.123456 lr 3.0e-04 grad_norm 1.2345 " + b"x" * 72 + b"\n"
chunk = memoryview(line * (65536 // len(line)))
for _ in range(total // len(chunk)):
    off = 0
    while off < len(chunk):
        off += os.write(1, chunk[off:])
'''

CHILD_LATENCY = r'''
import os, sys, time
total, stamp = int(sys.argv[1]), sys.argv[2]
line = b"epoch 3 step 000000 loss 0.123456 lr 3.0e-04 " + b"y" * 80 + b"\n"
chunk = line * (65536 // len(line))
out = sys.stdout.buffer
for _ in range(total // len(chunk)):
    out.write(chunk)
out.write(b"RuntimeError: CUDA error: an illegal memory access was encountered\n")
t = time.time()
with open(stamp, "w") as f:
    f.write(repr(t))
out.write(("exiting at %r\n" % t).encode())
out.flush()
os._exit(1)
'''

# What a user bolts on instead: send the log with smtplib after the command ends.
SEND_LOG = r'''
import smtplib, sys
from email.message import EmailMessage
host, port, log, token = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
msg = EmailMessage()
msg["Subject"] = "job %s finished" % token
msg["From"], msg["To"] = "me@example.com", "me@example.com"
msg.set_content("see attached log")
with open(log, "rb") as f:
    msg.add_attachment(f.read(), maintype="text", subtype="plain", filename="log.txt")
with smtplib.SMTP(host, port, timeout=30) as s:
    s.send_message(msg)
'''


def _install_gpualert(ex):
    """(kind, argv prefix, note): the program as a user installs it, or the nearest equivalent.

    The sources are copied first: pip builds setuptools projects in-tree and would leave
    build/ and *.egg-info in the repository."""
    work, env = ex.work, ex.env
    src = os.path.join(work, "src")
    os.makedirs(src)
    for name in ("pyproject.toml", "setup.cfg", "setup.py", "README.md", "LICENSE"):
        if os.path.exists(os.path.join(HERE, name)):
            shutil.copy(os.path.join(HERE, name), src)
    shutil.copy(ex.wrapper, src)
    venv = os.path.join(work, "venv")
    tries = [["--no-index", "--no-build-isolation"], []]
    notes = []
    try:
        subprocess.run([REL_PY, "-m", "venv", "--system-site-packages", venv], check=True, env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=180)
        for extra in tries:
            r = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q",
                                "--no-deps"] + extra + [src], env=env, timeout=300,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            script = os.path.join(venv, "bin", "gpualert")
            if r.returncode == 0 and os.path.exists(script):
                how = "offline" if extra else "with pip's build isolation (build deps from the configured index)"
                return "installed", [script], "pip install --no-deps into a --system-site-packages venv, %s" % how
            lines = r.stdout.decode("utf-8", "replace").strip().splitlines()
            notes.append("pip %s: %s" % (" ".join(extra) or "(isolated)", lines[-1] if lines else r.returncode))
    except (subprocess.SubprocessError, OSError) as exc:
        notes.append(str(exc))
    import py_compile
    eq = os.path.join(work, "eq")
    os.makedirs(eq)
    shutil.copy(ex.wrapper, eq)
    py_compile.compile(os.path.join(eq, "gpualert.py"), doraise=True)
    code = "import sys; sys.path.insert(0, %r); import gpualert; sys.exit(gpualert.main(sys.argv[1:]))" % eq
    return ("installed-equivalent", [REL_PY, "-c", code],
            "pip install failed (%s); measured `python3 -c 'import gpualert; gpualert.main(...)'` "
            "with a compiled .pyc cache" % "; ".join(notes))


def _launch_variants(ex):
    log_dir, outbox = os.path.join(ex.work, "logs"), os.path.join(ex.work, "outbox")
    opts = ["--log-dir", log_dir, "--outbox", outbox, "--notify", "never", "--", "true"]
    kind, prefix, note = _install_gpualert(ex)
    variants = [("true", [shutil.which("true") or "/bin/true"]),
                ("python3 -c pass", [REL_PY, "-c", "pass"]),
                ("gpualert (file)", [REL_PY, ex.wrapper] + opts),
                ("gpualert (%s)" % kind, prefix + opts)]
    ntfy = shutil.which("ntfy")
    if ntfy:
        variants.append(("ntfy done true", [ntfy, "done", "true"]))
    return variants, kind, note, ntfy


def side_by_side(variants, rounds, measure, *, warm=True):
    """{name: [measure(argv), one per round]} for (name, argv) variants: each runs once first
    (to warm the page cache; warm=False when an earlier run already did), then every round
    runs them all, the order reversed every other round (A B C / C B A), so a drift of the
    machine falls on all of them alike."""
    got = dict((name, []) for name, _ in variants)
    for _, argv in (variants if warm else []):
        measure(argv)
    for i in range(rounds):
        for name, argv in (variants if i % 2 == 0 else list(reversed(variants))):
            got[name].append(measure(argv))
    return got


def _measure_launch(ex):
    work, env = ex.work, ex.env
    variants, kind, note, ntfy = _launch_variants(ex)
    rounds = 6 if ex.quick else 30
    times = side_by_side(variants, rounds, lambda argv: run_proc(argv, env, work)["wall"])
    shutil.rmtree(os.path.join(work, "logs"), ignore_errors=True)
    base = "python3 -c pass"
    rows, csv_rows = [], []
    for name, _ in variants:
        ratios = [a / b for a, b in zip(times[name], times[base])]
        vs_true = [a / b for a, b in zip(times[name], times["true"])]
        rows.append([name, "%.1f" % (1000 * rel_median(times[name])), "%.2f" % rel_median(ratios), "%.1f" % rel_median(vs_true)])
        csv_rows += [[name, i, "%.6f" % t] for i, t in enumerate(times[name])]
    file_ratio = rel_median([a / b for a, b in zip(times["gpualert (file)"], times[base])])
    inst_ratio = rel_median([a / b for a, b in zip(times["gpualert (%s)" % kind], times[base])])
    return {"rows": rows, "csv": csv_rows, "file_ratio": file_ratio, "inst_ratio": inst_ratio,
            "kind": kind, "note": note, "ntfy": ntfy, "rounds": rounds}


def _stream_wrapper(ex, script, nbytes):
    log_dir = os.path.join(ex.work, "slogs")
    argv = ex.gpualert_argv(log_dir, os.path.join(ex.work, "outbox"), ["--notify", "never"],
                            [REL_PY, script, str(nbytes)])
    r = run_proc(argv, ex.env, ex.work, poll_rss=True, timeout=600)
    _, record = find_run(log_dir)
    total = r["ru"].ru_utime + r["ru"].ru_stime
    out = {"wall": r["wall"], "cpu": max(0.0, total - child_cpu_s(record)),
           "hwm_mib": (r["hwm_kib"] or 0) / 1024.0, "maxrss_mib": r["ru"].ru_maxrss / 1024.0,
           "child_rss_mib": ((record.get("rusage") or {}).get("maxrss_kib") or 0) / 1024.0,
           "ok": r["status"] == 0}
    shutil.rmtree(log_dir, ignore_errors=True)
    return out


def _stream_tee(ex, script, nbytes):
    work, env = ex.work, ex.env
    log = os.path.join(work, "tee.log")
    t0 = time.perf_counter()
    child = subprocess.Popen([REL_PY, script, str(nbytes)], env=env, cwd=work, stdout=subprocess.PIPE)
    tee = subprocess.Popen(["tee", log], env=env, cwd=work, stdin=child.stdout, stdout=subprocess.DEVNULL)
    poller = _HwmPoller(tee.pid)
    child.stdout.close()
    _, s1, _ = os.wait4(child.pid, 0)
    _, s2, ru = os.wait4(tee.pid, 0)
    wall = time.perf_counter() - t0
    child.returncode, tee.returncode = 0, 0
    ok = os.path.getsize(log) >= nbytes - 65536
    os.unlink(log)
    return {"wall": wall, "cpu": ru.ru_utime + ru.ru_stime, "maxrss_mib": (poller.finish() or 0) / 1024.0,
            "ok": ok and s1 == 0 and s2 == 0}


def _measure_streaming(ex):
    work, env, quick = ex.work, ex.env, ex.quick
    script = write_script(work, "child_stream.py", CHILD_STREAM)
    volumes = [(10 * MIB, 3 if quick else 10), (100 * MIB, 2 if quick else 5)]
    if not quick:
        volumes.append((1024 * MIB, 3))
    rows, csv_rows, summary = [], [], {}
    for nbytes, pairs in volumes:
        a_runs, b_runs = [], []
        for i in range(pairs):
            first, second = (_stream_wrapper, _stream_tee) if i % 2 == 0 else (_stream_tee, _stream_wrapper)
            x = first(ex, script, nbytes)
            y = second(ex, script, nbytes)
            a, b = (x, y) if first is _stream_wrapper else (y, x)
            a_runs.append(a)
            b_runs.append(b)
            csv_rows.append([nbytes, i, "%.4f" % a["wall"], "%.4f" % b["wall"], "%.4f" % a["cpu"],
                             "%.4f" % b["cpu"], "%.2f" % a["hwm_mib"], "%.2f" % a["maxrss_mib"],
                             "%.2f" % b["maxrss_mib"], a["ok"], b["ok"]])
        ratio = rel_median([a["wall"] / b["wall"] for a, b in zip(a_runs, b_runs)])
        s = {"ratio": ratio, "a_wall": rel_median([a["wall"] for a in a_runs]),
             "b_wall": rel_median([b["wall"] for b in b_runs]),
             "a_cpu": rel_median([a["cpu"] for a in a_runs]), "b_cpu": rel_median([b["cpu"] for b in b_runs]),
             "hwm": max(a["hwm_mib"] for a in a_runs), "maxrss": max(a["maxrss_mib"] for a in a_runs),
             "tee_rss": max(b["maxrss_mib"] for b in b_runs),
             "ok": all(a["ok"] for a in a_runs) and all(b["ok"] for b in b_runs), "pairs": pairs}
        summary[nbytes] = s
        rows.append(["%d MiB" % (nbytes // MIB), pairs, "%.2f" % s["a_wall"], "%.2f" % s["b_wall"],
                     "%.2f" % ratio, "%.0f" % (nbytes / MIB / s["a_wall"]), "%.2f" % s["a_cpu"],
                     "%.2f" % s["b_cpu"], "%.1f" % s["hwm"], "%.1f" % s["maxrss"],
                     "%.1f" % s["tee_rss"], "yes" if s["ok"] else "NO"])
    probe = run_proc([REL_PY, "-c", "import time; time.sleep(0.3)"], env, work, poll_rss=True)
    return {"rows": rows, "csv": csv_rows, "summary": summary, "python_rss": (probe["hwm_kib"] or 0) / 1024.0}


def _latency_pair(ex, sink, scripts, i, nbytes):
    work, env = ex.work, ex.env
    child, sender = scripts
    out = {}
    for which in ("A", "B") if i % 2 == 0 else ("B", "A"):
        token = "lat%s%03d" % (which.lower(), i)
        stamp = os.path.join(work, token + ".stamp")
        cmd = [REL_PY, child, str(nbytes), stamp]
        if which == "A":
            log_dir = os.path.join(work, "llogs-" + token)
            argv = ex.gpualert_argv(log_dir, os.path.join(work, "outbox-" + token),
                                    ["--notify", "always", "--to", "me@example.com", "--from", "g@example.com",
                                     "--name", token, "--smtp", "127.0.0.1:%d" % sink.port,
                                     "--smtp-tls", "none"], cmd)
        else:
            log = os.path.join(work, token + ".log")
            argv = ["sh", "-c", "%s > %s 2>&1; %s" % (
                " ".join(shlex.quote(c) for c in cmd), shlex.quote(log),
                " ".join(shlex.quote(c) for c in [REL_PY, sender, "127.0.0.1", str(sink.port), log, token]))]
        r = run_proc(argv, env, work, timeout=120)
        with open(stamp) as f:
            t_child = float(f.read())
        got = sink.find(token)
        arrival = got[0][0] - t_child if got else None
        record = find_run(os.path.join(work, "llogs-" + token))[1] if which == "A" else {}
        delivery = record.get("delivery", {})
        seen = float(record["end"]) - t_child if record.get("end") else None
        out[which] = {"arrival": arrival, "exit": r["end"] - t_child, "size": len(got[0][1]) if got else None,
                      "outcome": delivery.get("outcome", "sent" if got else "?"), "seen": seen}
    return out


def _measure_latency(ex):
    if not have_aiosmtpd():
        return {"skipped": "skipped: aiosmtpd absent"}
    sink = Sink()
    scripts = (write_script(ex.work, "child_latency.py", CHILD_LATENCY), write_script(ex.work, "send_log.py", SEND_LOG))
    pairs = 3 if ex.quick else 10
    results = []
    try:
        for i in range(pairs):
            results.append(_latency_pair(ex, sink, scripts, i, 5 * MIB))
    finally:
        sink.stop()
    csv_rows = [[i, w, rel_fmt(p[w]["arrival"], "%.4f"), "%.4f" % p[w]["exit"], p[w]["size"], p[w]["outcome"]]
                for i, p in enumerate(results) for w in ("A", "B")]
    a_arr = [p["A"]["arrival"] for p in results]
    ratios = [p["A"]["arrival"] / p["B"]["arrival"] for p in results
              if p["A"]["arrival"] is not None and p["B"]["arrival"]]
    return {"pairs": pairs, "csv": csv_rows, "a_arrival": rel_median(a_arr), "b_arrival": rel_median([p["B"]["arrival"] for p in results]),
            "a_exit": rel_median([p["A"]["exit"] for p in results]), "a_seen": rel_median([p["A"]["seen"] for p in results]), "b_exit": rel_median([p["B"]["exit"] for p in results]),
            "ratio": rel_median(ratios), "delivered": sum(1 for x in a_arr if x is not None),
            "outcomes": sorted(set(p["A"]["outcome"] for p in results)),
            "a_size": rel_median([p["A"]["size"] for p in results]), "b_size": rel_median([p["B"]["size"] for p in results])}


# ---- side by side with the paper's reference implementation (issue 19) ----

REFERENCE_SPEC = "gpualert==0.1.6"  # the paper's reference: `pip install gpualert==0.1.6`
REFERENCE_STREAM_BYTES = 64 * MIB

# Runs argv (an absolute path first) with stdin/stdout/stderr on /dev/null and prints its wall
# time and ru_maxrss from wait4 as JSON. Forked from this small interpreter, not from the
# harness: a process's ru_maxrss starts from its parent's image at the fork, and the harness's
# is larger than either wrapper. It covers the wrapper and what it waited for (the child,
# which is smaller than either wrapper here).
MEASURE_SHIM = r'''
import json, os, sys, time
t0 = time.perf_counter()
pid = os.fork()
if pid == 0:
    try:
        null = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(null, fd)
        os.execv(sys.argv[1], sys.argv[1:])
    finally:
        os._exit(127)
_, status, usage = os.wait4(pid, 0)
print(json.dumps({"wall": time.perf_counter() - t0, "maxrss_kib": usage.ru_maxrss, "status": status}))
'''


def _reference_install(ex):
    """(argv prefix of the reference's `gpualert` script, or None; a note saying how, or why
    not). EVAL_REFERENCE names an installed script, used as is. Otherwise a fresh venv gets
    the wheel EVAL_REFERENCE_WHEEL names, else gpualert==0.1.6 from the configured index, with
    its dependencies (typer, rich, pydantic); --quick installs offline only (--no-index)."""
    given = os.environ.get("EVAL_REFERENCE")
    if given:
        if os.access(given, os.X_OK):
            return [os.path.abspath(given)], "EVAL_REFERENCE=%s (as installed)" % given
        return None, "reference: not installed (EVAL_REFERENCE=%s is not executable)" % given
    wheel = os.environ.get("EVAL_REFERENCE_WHEEL")
    source = wheel if wheel and os.path.isfile(wheel) else REFERENCE_SPEC
    venv = os.path.join(ex.work, "refvenv")
    how = "pip install %s%s" % ("--no-index " if ex.quick else "", os.path.basename(source))
    try:
        if ex.quick and subprocess.run(  # is it there offline at all? (cheaper than a venv that would fail)
                [REL_PY, "-m", "pip", "download", "-q", "--no-index", "--no-deps", "-d",
                 os.path.join(ex.work, "refdl"), source], timeout=60,
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode != 0:
            return None, "reference: not installed (%s: not available offline; --quick installs offline only)" % how
        subprocess.run([REL_PY, "-m", "venv", venv], check=True, timeout=180,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        pip = subprocess.run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "-q"] +
                             (["--no-index"] if ex.quick else []) + [source], timeout=120 if ex.quick else 600,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        version = subprocess.run([os.path.join(venv, "bin", "python"), "-c",
                                  "import importlib.metadata as m; print(m.version('gpualert'))"],
                                 stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, timeout=60)
    except (subprocess.SubprocessError, OSError) as exc:
        return None, "reference: not installed (%s: %s)" % (how, exc)
    script = os.path.join(venv, "bin", "gpualert")
    if pip.returncode != 0 or not os.path.exists(script):
        said = [line for line in pip.stdout.decode("utf-8", "replace").splitlines()
                if line.strip() and not line.startswith("WARNING")]
        why = said[-1] if said else "exit status %d" % pip.returncode
        offline = "; --quick installs offline only" if ex.quick else ""
        return None, "reference: not installed (%s: %s%s)" % (how, why.strip(), offline)
    return [script], "%s into a fresh venv: gpualert %s" % (how, version.stdout.decode().strip() or "?")


def _shim_measure(shim, env, cwd, cleanup):
    """measure(argv) for side_by_side: wall and ru_maxrss through the shim, then cleanup()."""
    def measure(argv):
        proc = subprocess.run([REL_PY, shim] + list(argv), env=env, cwd=cwd, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL, timeout=600)
        cleanup()
        try:
            return json.loads(proc.stdout.decode())
        except ValueError:
            return {"wall": None, "maxrss_kib": None, "status": None}
    return measure


def _reference_variants(ex, ref, home):
    """(launch variants, streaming variants): the compile floor, the snapshot imported from a
    cached .pyc, the file, and the reference, each as an absolute argv."""
    import py_compile
    pyc_dir = os.path.join(ex.work, "pyc")
    os.makedirs(pyc_dir)
    shutil.copy(ex.wrapper, pyc_dir)
    py_compile.compile(os.path.join(pyc_dir, "gpualert.py"), doraise=True)
    true = shutil.which("true") or "/bin/true"
    mine = [REL_PY, ex.wrapper, "--log-dir", os.path.join(home, "logs"), "--outbox",
            os.path.join(home, "outbox"), "--notify", "never", "--"]
    stream = [REL_PY, write_script(ex.work, "child_stream.py", CHILD_STREAM), str(REFERENCE_STREAM_BYTES)]
    launch = [("python3 -c pass", [REL_PY, "-c", "pass"]),
              ("compile gpualert.py", [REL_PY, "-c", "compile(open(%r).read(), 'gpualert.py', 'exec')" % ex.wrapper]),
              ("import gpualert (cached .pyc)", [REL_PY, "-c", "import sys; sys.path.insert(0, %r); import gpualert" % pyc_dir]),
              ("gpualert.py -- true (file)", mine + [true])]
    streaming = [("gpualert.py (file)", mine + stream)]
    if ref:
        launch.append(("reference: gpualert run -- true", ref + ["run", "--", true]))
        streaming.append(("reference: gpualert run", ref + ["run", "--"] + stream))
    return launch, streaming


def _measure_reference(ex):
    """Launch (`-- true`), peak RSS and streaming 64 MiB: the file beside the reference, with
    the compile floor and a cached-.pyc import in the same rounds."""
    ref, note = _reference_install(ex)
    home = os.path.join(ex.work, "refhome")  # the reference writes ~/.gpualert
    os.makedirs(home)
    env = dict(ex.env, HOME=home)
    shim = write_script(ex.work, "measure_shim.py", MEASURE_SHIM)
    launch_v, stream_v = _reference_variants(ex, ref, home)

    def cleanup():  # every run's logs go: 64 MiB x 3 files a run for the reference
        for sub in ("logs", os.path.join(".gpualert", "logs")):
            shutil.rmtree(os.path.join(home, sub), ignore_errors=True)
    measure = _shim_measure(shim, env, ex.work, cleanup)
    launch = side_by_side(launch_v, 3 if ex.quick else 20, measure)
    stream = side_by_side(stream_v, 1 if ex.quick else 6, measure, warm=False)  # the launches warmed both
    return {"ref": ref, "note": note, "launch": launch, "stream": stream,
            "launch_names": [n for n, _ in launch_v], "stream_names": [n for n, _ in stream_v]}


def _per_round_ratio(runs, a, b):
    """Median of the per-round ratios a/b of wall time (None when b was not run)."""
    if a not in runs or b not in runs:
        return None
    return rel_median([x["wall"] / y["wall"] for x, y in zip(runs[a], runs[b]) if x["wall"] and y["wall"]])


def _median_mib(runs, name):
    return rel_median([r["maxrss_kib"] / 1024.0 for r in runs.get(name, []) if r["maxrss_kib"]])


def _reference_rows(side):
    """Rows (variant, median ms, ratio to python3 -c pass, ratio to the reference, median
    ru_maxrss MiB, exit statuses) for launch, then for streaming."""
    rows = []
    for kind, floor, ref_name in (("launch", "python3 -c pass", "reference: gpualert run -- true"),
                                  ("stream", None, "reference: gpualert run")):
        runs = side[kind]
        for name in side[kind + "_names"]:
            walls = [r["wall"] for r in runs[name] if r["wall"]]
            rows.append([name, rel_fmt(rel_median(walls) and 1000 * rel_median(walls), "%.1f"),
                         rel_fmt(_per_round_ratio(runs, name, floor) if floor else None, "%.2f"),
                         rel_fmt(_per_round_ratio(runs, name, ref_name), "%.2f"),
                         rel_fmt(_median_mib(runs, name), "%.1f"),
                         ",".join(sorted(set(str(r["status"]) for r in runs[name])))])
    return rows


def _reference_csv(side):
    return [[kind, name, i, rel_fmt(r["wall"], "%.6f"), r["maxrss_kib"], r["status"]]
            for kind in ("launch", "stream") for name in side[kind + "_names"]
            for i, r in enumerate(side[kind][name])]


def _reference_targets(side):
    """The three targets against the reference; "not measured" when it is not installed."""
    names = [("launch `-- true`, file / reference (median per-round ratio)", "<= 1.00x"),
             ("peak RSS `-- true` (ru_maxrss), file vs reference", "<= reference"),
             ("peak RSS streaming 64 MiB (ru_maxrss), file vs reference", "<= reference"),
             ("streaming 64 MiB, file / reference wall (median per-round ratio)", "<= 0.65x")]
    if not side["ref"]:
        return [[what, target, "not measured (reference: not installed)", "-"] for what, target in names]
    launch = _per_round_ratio(side["launch"], "gpualert.py -- true (file)", "reference: gpualert run -- true")
    stream = _per_round_ratio(side["stream"], "gpualert.py (file)", "reference: gpualert run")
    rss = [(_median_mib(side["launch"], "gpualert.py -- true (file)"), _median_mib(side["launch"], "reference: gpualert run -- true")),
           (_median_mib(side["stream"], "gpualert.py (file)"), _median_mib(side["stream"], "reference: gpualert run"))]
    rows = [[names[0][0], names[0][1], rel_fmt(launch, "%.2fx"), _verdict(launch is not None and launch <= 1.0)]]
    for (what, target), (mine, theirs) in zip(names[1:3], rss):
        rows.append([what, target, "%s vs %s MiB" % (rel_fmt(mine, "%.1f"), rel_fmt(theirs, "%.1f")),
                     _verdict(None not in (mine, theirs) and mine <= theirs)])
    rows.append([names[3][0], names[3][1], rel_fmt(stream, "%.2fx"), _verdict(stream is not None and stream <= 0.65)])
    return rows


def _reference_block(side):
    return [
        "### Side by side with the paper's reference (gpualert 0.1.6, pip-installed)", "",
        "Reference: %s. It runs as `gpualert run -- CMD` with HOME pointing at a scratch folder: "
        "it writes ~/.gpualert (config.toml, three logs per run) there and, with no e-mail "
        "configured, ends with \"Notification failed: Email not configured\" (it tries to notify "
        "and gives up). The file runs as `python3 gpualert.py --log-dir D --outbox O --notify "
        "never -- CMD` (no message either) with the same environment. Every variant is forked "
        "from a small measuring interpreter with stdin/stdout/stderr on /dev/null, which takes "
        "wall time and ru_maxrss from wait4 (the wrapper and the child it waited for; the child "
        "is smaller than either wrapper). Rounds alternate A B .. / .. B A; ratios are medians "
        "of per-round ratios. The compile floor is `python3 -c \"compile(open('gpualert.py')."
        "read(), 'gpualert.py', 'exec')\"`: what the file form pays on every launch before any "
        "of its code runs; `import gpualert (cached .pyc)` is what an installed copy pays "
        "instead (unmarshal and run the module's top level). Rounds: launch %d; streaming "
        "(the child writes %d MiB of 128-byte lines in 64 KiB writes) %d." % (
            side["note"], len(side["launch"]["python3 -c pass"]), REFERENCE_STREAM_BYTES // MIB,
            len(side["stream"]["gpualert.py (file)"])), "",
        rel_table(["variant", "median ms", "ratio to python3 -c pass", "ratio to the reference",
                   "median ru_maxrss MiB", "exit statuses"], _reference_rows(side)), ""]


def cmd_overhead(args):
    ex = Experiment(args, "overhead")
    try:
        launch = _measure_launch(ex)
        stream = _measure_streaming(ex)
        lat = _measure_latency(ex)
        side = _measure_reference(ex)
    finally:
        shutil.rmtree(ex.work, ignore_errors=True)
    return _report_overhead(ex, launch, stream, lat, side)


def _verdict(ok):
    return "met" if ok else "MISSED"


def _overhead_targets(launch, stream, lat):
    s = stream["summary"]
    rows = [["launch, file: gpualert / python3 -c pass", "<= 1.5x", "%.2fx" % launch["file_ratio"],
             _verdict(launch["file_ratio"] <= 1.5)],
            ["launch, %s: gpualert / python3 -c pass" % launch["kind"], "<= 1.3x", "%.2fx" % launch["inst_ratio"],
             _verdict(launch["inst_ratio"] <= 1.3)]]
    big = s.get(1024 * MIB)
    if big:
        rows.append(["streaming 1 GiB: wall / tee wall", "<= 1.2x", "%.2fx" % big["ratio"], _verdict(big["ratio"] <= 1.2)])
    else:
        rows.append(["streaming 1 GiB: wall / tee wall", "<= 1.2x", "not run (--quick)", "-"])
    peak = max(v["hwm"] for v in s.values())
    rows.append(["wrapper peak RSS (VmHWM), any volume", "<= 40 MiB", "%.1f MiB" % peak, _verdict(peak <= 40)])
    if big:
        spread = big["hwm"] - s[10 * MIB]["hwm"]
        rows.append(["peak RSS 1 GiB minus 10 MiB", "<= 5 MiB", "%+.1f MiB" % spread, _verdict(abs(spread) <= 5)])
    if lat.get("skipped"):
        rows.append(["child exit -> SMTP accepted (5 MiB log)", "< 1 s", lat["skipped"], "-"])
    elif lat["a_arrival"] is None:
        rows.append(["child exit -> SMTP accepted (5 MiB log)", "< 1 s",
                     "never delivered (delivery outcome: %s)" % ", ".join(lat["outcomes"]), "MISSED"])
    else:
        rows.append(["child exit -> SMTP accepted (5 MiB log)", "< 1 s", "%.3f s" % lat["a_arrival"],
                     _verdict(lat["a_arrival"] < 1.0)])
    return rows


def _floor_line(side):
    """One bold line, said plainly: what compiling the file costs on every launch before any
    of its code runs, and what that leaves under the reference's launch time and peak memory."""
    runs = side["launch"]
    wall = lambda name: rel_median([r["wall"] for r in runs.get(name, []) if r["wall"]])
    compile_s, pyc_s, file_s = wall("compile gpualert.py"), wall("import gpualert (cached .pyc)"), wall(
        "gpualert.py -- true (file)")
    if None in (compile_s, pyc_s, file_s):
        return "**Compile floor: not measured.**"
    compile_mib, pyc_mib = _median_mib(runs, "compile gpualert.py"), _median_mib(runs, "import gpualert (cached .pyc)")
    text = ("**Compile floor: as a file, gpualert.py is compiled on every launch before any of its "
            "code runs: %.0f ms and %s MiB peak (the whole `-- true` launch: %.0f ms); from a cached "
            ".pyc the same module loads in %.0f ms and %s MiB" % (
                1000 * compile_s, rel_fmt(compile_mib, "%.1f"), 1000 * file_s, 1000 * pyc_s, rel_fmt(pyc_mib, "%.1f")))
    ref_s, ref_mib = wall("reference: gpualert run -- true"), _median_mib(runs, "reference: gpualert run -- true")
    if ref_s and ref_mib:
        left = ("only if everything after the compile takes under %.0f ms" % (1000 * (ref_s - compile_s))
                if ref_s > compile_s else "not at all at this size")
        memory = ("above the reference's whole peak, it cannot meet the peak-memory target at this size, "
                  "whatever its code does" if compile_mib > ref_mib else
                  "%.1f MiB under the reference's peak, the rest of its run has that much room" % (ref_mib - compile_mib))
        text += (". The reference's whole launch takes %.0f ms and %.1f MiB, so the compile alone takes "
                 "%.0f%% of its time: the file form can meet the launch target %s; with the compile's "
                 "peak %s" % (1000 * ref_s, ref_mib, 100 * compile_s / ref_s, left, memory))
    return text + ".**"


def _measured_line(ex):
    """Where and on what these figures were measured (README's digest shows it beside them)."""
    m, w = machine_info(), ex.info
    return ("**Measured with `python3 eval.py overhead%s` on %s (%d CPUs; load average %.1f at the start, "
            "%.1f at the end), %s; gpualert.py commit %s, %d lines.**" % (
                " --quick" if ex.quick else "", m["cpu"], m["nproc"], ex.load_at_start, os.getloadavg()[0],
                m["date"], w["commit"], w["lines"]))


def _report_overhead(ex, launch, stream, lat, side):
    elapsed, quick = ex.elapsed(), ex.quick
    targets = _reference_targets(side) + _overhead_targets(launch, stream, lat)
    if lat.get("skipped"):
        lat_block = [lat["skipped"]]
    else:
        lat_block = [rel_table(["", "gpualert (A)", "hand-rolled smtplib after `CMD > log` (B)"], [
            ["median child exit -> message accepted", rel_fmt(lat["a_arrival"], "%.3f s"), rel_fmt(lat["b_arrival"], "%.3f s")],
            ["median child exit -> wrapper records the end (run.json `end`)", rel_fmt(lat["a_seen"], "%.3f s"), ""],
            ["median child exit -> wrapper/shell exit", "%.3f s" % lat["a_exit"], "%.3f s" % lat["b_exit"]],
            ["median message size", rel_fmt(lat["a_size"], "%d B"), rel_fmt(lat["b_size"], "%d B")],
            ["delivered", "%d/%d (outcome %s)" % (lat["delivered"], lat["pairs"], ", ".join(lat["outcomes"])), ""],
            ["median of per-pair ratios A/B (accepted)", rel_fmt(lat["ratio"], "%.2f"), ""]])]
    blocks = [
        "## Overhead (%s; %.0f s)" % ("quick" if quick else "full", elapsed), "",
        _floor_line(side), "", _measured_line(ex), "",
        "### Targets", "", rel_table(["measure", "target", "got", "verdict"], targets), "",
    ] + _reference_block(side) + [
        "### Launch (%d rounds, variants alternated A B .. / .. B A)" % launch["rounds"], "",
        "Wall time from fork to wait4 in the harness, child stdout/stderr to /dev/null. "
        "gpualert variants run `--notify never --log-dir D -- true` (so they include the fsync'd "
        "header, run.json and classification). Installed: %s. ntfy: %s." % (
            launch["note"], "measured (`ntfy done true`)" if launch["ntfy"] else "not installed"), "",
        rel_table(["variant", "median ms", "median per-round ratio to python3 -c pass", "ratio to true"], launch["rows"]), "",
        "### Streaming (child writes 64 KiB chunks of 128-byte lines)", "",
        "A = `gpualert --notify never -- child` with its stdout/stderr on /dev/null; "
        "B = `child | tee LOG > /dev/null` (pipeline built by the harness so each process can be "
        "wait4'ed). Pairs alternate A B / B A; ratio = median of per-pair A/B wall. Wrapper CPU = "
        "wait4 rusage of the wrapper minus the child's rusage from run.json (wait4 includes reaped "
        "descendants). Peak RSS: VmHWM of the wrapper polled every 10 ms (its own peak; the last "
        "<10 ms can be missed; it includes the interpreter, ~%s MiB for `python3 -c pass` here), and "
        "ru_maxrss from wait4, which is max(wrapper, child) and also counts the harness image "
        "between fork and exec, so it is an upper bound. tee: VmHWM polled the same way." % rel_fmt(
            stream.get("python_rss"), "%.1f"), "",
        rel_table(["volume", "pairs", "A wall s", "tee wall s", "A/B wall", "A MiB/s", "wrapper CPU s",
                  "tee CPU s", "wrapper VmHWM MiB", "wrapper ru_maxrss MiB", "tee VmHWM MiB", "all complete"],
                 stream["rows"]), "",
        "### Latency, child exit to message accepted by a loopback aiosmtpd (5 MiB log)", "",
        "The child writes 5 MiB of lines and an error line, records time.time() as its last act, "
        "and exits 1; the server's DATA handler records the arrival time. A = gpualert "
        "(`--smtp 127.0.0.1:PORT --smtp-tls none --notify always`); B = what a user bolts on: "
        "`sh -c 'CMD > log 2>&1; python3 send_log.py log'` (smtplib, log attached). Pairs "
        "alternate A B / B A.", "",
    ] + lat_block + [""]
    extra = {"stream": (["bytes", "pair", "wrapper_wall_s", "tee_wall_s", "wrapper_cpu_s", "tee_cpu_s",
                         "wrapper_vmhwm_mib", "wrapper_maxrss_mib", "tee_vmhwm_mib", "wrapper_complete",
                         "tee_complete"], stream["csv"]),
             "latency": (["pair", "who", "exit_to_accepted_s", "exit_to_wrapper_exit_s", "message_bytes",
                          "outcome"], lat.get("csv") or []),
             "reference": (["experiment", "variant", "round", "wall_s", "maxrss_kib", "status"],
                           _reference_csv(side))}
    write_rel_results(ex, "overhead", "Overhead", blocks, (["variant", "round", "wall_s"], launch["csv"]),
                      extra_csv=extra)
    print("overhead (%.0f s):" % elapsed)
    print("  " + _floor_line(side).strip("*"))
    for row in targets:
        print("  %-50s %-10s %-28s %s" % tuple(row))
    return 0


# ==== isolation ====

CHILD_REPLAY = r'''
import os, signal, sys, time
log, code, stamp = sys.argv[1], int(sys.argv[2]), sys.argv[3]
with open(log, "rb") as f:
    sys.stdout.buffer.write(f.read())
sys.stdout.flush()
with open(stamp, "w") as f:
    f.write(repr(time.time()))
if code < 0:
    try:
        signal.signal(-code, signal.SIG_DFL)
    except (OSError, ValueError):  # SIGKILL/SIGSTOP cannot be caught anyway
        pass
    os.kill(os.getpid(), -code)
    time.sleep(10)
os._exit(code)
'''

# (condition, relay kind, extra options, description)
CONDITIONS = (
    ("healthy", "sink", [], "aiosmtpd on loopback"),
    ("refused", "closed", [], "closed port: connection refused"),
    ("mute", "mute", [], "accepts TCP, never answers"),
    ("slow", "slow", [], "answers each command after 5 s (> timeout)"),
    ("slow_drip", "slow_drip", [], "answers each command after 1 s (< timeout; the whole session > timeout)"),
    ("mail_5xx", "mail_5xx", [], "550 on MAIL FROM"),
    ("rcpt_5xx", "rcpt_5xx", [], "550 on RCPT TO"),
    ("data_5xx", "data_5xx", [], "554 after DATA"),
    ("auth_fail", "auth_fail", ["--smtp-user", "someone", "--smtp-tls", "none"], "535 on AUTH"),
    ("tls_garbage", "tls_garbage", [], "STARTTLS offered, then non-TLS bytes"),
    ("dns_fail", "dns", [], "--smtp no-such-host.invalid"),
    ("outbox_unwritable", "closed", [], "relay refused AND --outbox under a regular file"),
    ("held_by_cap", "closed", ["--max-per-hour", "1"], "hourly cap reached (1/h, one message already sent)"),
    ("held_by_cap_unwritable", "closed", ["--max-per-hour", "1"], "hourly cap reached AND --outbox under a regular file"),
)
# Chat/push channels (--notify-url): the e-mail goes to the healthy sink while each channel
# (a json:// POST of the run record to a real local HTTP server) meets the fault.
CHANNEL_FAULTS = (
    ("ch_healthy", ("ok",), "channel: HTTP 200"),
    ("ch_refused", ("refused",), "channel: connection refused"),
    ("ch_mute", ("mute",), "channel: accepts TCP, never answers"),
    ("ch_slow", ("slow",), "channel: answers after 5 s (> timeout)"),
    ("ch_429", ("429",), "channel: 429 Retry-After 1, then 200"),
    ("ch_429_long", ("429_long",), "channel: 429 Retry-After 3600"),
    ("ch_500", ("500",), "channel: HTTP 500"),
    ("ch_404", ("404",), "channel: HTTP 404 (permanent: dead letter)"),
    ("ch_tls_untrusted", ("tls",), "channel: HTTPS, certificate from an untrusted CA"),
    ("ch_proxy_required", ("proxy_required",), "channel: host only a proxy knows, no proxy set"),
    ("ch_proxied", ("proxied",), "channel: that host through HTTPS_PROXY (a CONNECT proxy)"),
    ("ch_four_at_once", ("mute", "refused", "500", "ok"), "four channels at once: mute, refused, 500, 200"),
)
CONDITIONS += tuple((name, "sink", [], desc) for name, _, desc in CHANNEL_FAULTS)
CHANNEL_OF = dict((name, faults) for name, faults, _ in CHANNEL_FAULTS)
SMTP_TIMEOUT_S = 3
SLACK_S = 2.0
QUICK_CLASSES = ("cuda_oom", "segfault", "oom_killer", "success")


def corpus_cases(quick):
    """One (class, log path, exit code) per corpus class; the first row with a signal exit
    when the class has one (more signal coverage), else the first row."""
    labels = os.path.join(HERE, "corpus", "labels.jsonl")
    chosen = {}
    if os.path.exists(labels):
        with open(labels) as f:
            rows = [json.loads(line) for line in f if line.strip()]
        for row in rows:
            if not os.path.exists(os.path.join(HERE, "corpus", row["log_path"])):
                continue
            cur = chosen.get(row["mode"])
            if cur is None or (cur["true_exit_code"] >= 0 > row["true_exit_code"]):
                chosen[row["mode"]] = row
        cases = [(m, os.path.join(HERE, "corpus", r["log_path"]), int(r["true_exit_code"]))
                 for m, r in chosen.items()]
    else:
        cases = []
    if not cases:
        return None
    if quick:
        cases = [c for c in cases if c[0] in QUICK_CLASSES] or cases[:4]
    return cases


def fallback_cases(work):
    """Without the corpus: a few real failing children's outputs."""
    out = []
    for name, text, code in (("traceback", "Traceback (most recent call last):\nValueError: bad\n", 1),
                             ("segfault", "Fatal Python error: Segmentation fault\n", -11),
                             ("killed", "step 10\n", -9), ("success", "done\n", 0)):
        out.append((name, write_script(work, name + ".log", text), code))
    return out


def _start_relays(work):
    relays, stops = {}, []
    if have_aiosmtpd():
        sink = Sink()
        relays["sink"] = "127.0.0.1:%d" % sink.port
        stops.append(sink.stop)
        relays["_sink"] = sink
    relays["closed"] = "127.0.0.1:%d" % closed_port()
    if found("openssl", shutil.which("openssl")):  # the channel conditions' certificates
        import channel_servers  # tests/ is on sys.path (the loader's folder)
        relays["_pki"] = channel_servers.make_channel_pki(tempfile.mkdtemp(dir=work))
    relays["dns"] = "no-such-host.invalid:25"
    for mode in ("mute", "slow", "slow_drip", "mail_5xx", "rcpt_5xx", "data_5xx", "auth_fail", "tls_garbage"):
        fake = FakeRelay(mode)
        relays[mode] = "127.0.0.1:%d" % fake.port
        stops.append(fake.stop)
    return relays, stops


def _count_eml(folder):
    if not os.path.isdir(folder):
        return 0
    return len([n for n in os.listdir(folder) if n.endswith(".eml") and not n.startswith(".tmp")])


CellRun = collections.namedtuple("CellRun", "cell token outbox code cls cond")


def isolation_cell(ex, relays, script, job):
    """One (case, relay condition, index) job: the run, then where its message went."""
    case, cond, idx = job
    work = ex.work
    cls, log_path, code = case
    name, kind, extra, _ = cond
    cell = os.path.join(work, "c%03d" % idx)
    os.makedirs(cell)
    token = "iso%03d%s" % (idx, re.sub(r"[^a-z0-9]", "", cls))
    outbox = os.path.join(cell, "outbox")
    env = clean_env(cell, {"GPUALERT_SMTP_PASSWORD": "wrong"})  # own state dir: no shared hourly cap
    if name.startswith("held_by_cap"):
        _use_up_cap(ex, cell, env, relays)
    if name.endswith("unwritable"):
        with open(os.path.join(cell, "file.txt"), "w") as f:
            f.write("a regular file\n")
        outbox = os.path.join(cell, "file.txt", "outbox")
    stamp = os.path.join(cell, "stamp")
    opts = ["--notify", "always", "--to", "me@example.com", "--from", "g@example.com", "--name", token,
            "--smtp", relays[kind], "--smtp-timeout", str(SMTP_TIMEOUT_S)] + extra
    channels = ChannelCell(relays.get("_pki"), CHANNEL_OF[name]) if name in CHANNEL_OF else None
    if channels:
        opts += channels.options()
        env.update(channels.env)
    argv = ex.gpualert_argv(os.path.join(cell, "logs"), outbox, opts, [REL_PY, script, log_path, str(code), stamp])
    try:
        with open(os.path.join(cell, "stderr"), "wb") as err:
            r = run_proc(argv, env, cell, stderr=err, timeout=120)
        ch_where = channels.kept(token, outbox) if channels else []
    finally:
        if channels:
            channels.close()
    with open(os.path.join(cell, "stderr"), "rb") as f:
        stderr = f.read().decode("utf-8", "replace")
    post = r["end"] - float(open(stamp).read()) if os.path.exists(stamp) else None
    _, record = find_run(os.path.join(cell, "logs"))
    delivery = record.get("delivery") or {}
    verdict = _cell_verdict(relays, CellRun(cell, token, outbox, code, cls, name), r,
                            post=post, delivery=delivery, stderr=stderr)
    if channels:
        verdict = _with_channel_verdict(verdict, ch_where, delivery)
    return verdict


class ChannelCell(object):
    """The channel side of one isolation cell: real local HTTP(S) servers (and a proxy)
    from tests/channel_servers.py, one json:// channel per fault, the env it needs."""

    SCRIPTS = {"ok": [("ok",)], "mute": [("mute",)], "slow": [("slow", 5.0)], "500": [("status", 500, {}, b"")],
               "429": [("status", 429, {"Retry-After": "1"}, b""), ("ok",)],
               "429_long": [("status", 429, {"Retry-After": "3600"}, b"")],
               "404": [("status", 404, {}, b"Unknown Webhook")]}

    def __init__(self, pki, faults):
        import channel_servers as cs
        self.servers, self.urls, self.proxy = [], [], None
        self.env = {"SSL_CERT_FILE": pki.ca}
        for fault in faults:
            if fault == "refused":
                self.urls.append("json://127.0.0.1:%d/hook" % cs.refused_port())
            elif fault in ("proxy_required", "proxied", "tls"):
                tls = (pki.untrusted_cert, pki.untrusted_key) if fault == "tls" else (pki.cert, pki.key)
                server = cs.RecordingServer(tls=tls)
                self.servers.append(server)
                if fault == "tls":
                    self.urls.append("jsons://127.0.0.1:%d/hook" % server.port)
                    continue
                self.urls.append("jsons://proxy-only.invalid/hook")
                if fault == "proxied":
                    self.proxy = cs.ForwardProxy(server.port)
                    self.env["HTTPS_PROXY"] = self.proxy.url
            else:
                server = cs.RecordingServer(script=self.SCRIPTS[fault])
                self.servers.append(server)
                self.urls.append("json://127.0.0.1:%d/hook" % server.port)

    def options(self):
        return sum((["--notify-url", url] for url in self.urls), [])

    def kept(self, token, outbox):
        """Where each channel's message is: received, spooled in the outbox, or a dead letter."""
        received = sum(1 for s in self.servers for r in s.requests
                       if token.encode() in r.body and 200 <= (r.answered or 0) < 300)
        where = ["ch:sent"] * received
        for sub, tag in (("", "ch:outbox"), ("dead", "ch:dead")):
            for path in glob.glob(os.path.join(outbox, sub, "*.json")) + glob.glob(
                    os.path.join(outbox, sub, "*.json~claimed~*")):
                with open(path, "rb") as handle:
                    if token.encode() in handle.read():
                        where.append(tag)
        return where

    def close(self):
        for server in self.servers:
            server.close()
        if self.proxy:
            self.proxy.close()


def _with_channel_verdict(verdict, ch_where, delivery):
    """A channel cell keeps its messages only if every channel's message is somewhere."""
    expected = len(delivery.get("channels") or []) or 1
    posted = [c for c in delivery.get("channels") or []]
    lost = len(ch_where) < max(expected, len(posted))
    verdict = dict(verdict)
    verdict["where"] = "+".join([verdict["where"]] + sorted(set(ch_where)) + (["ch:LOST"] if lost else []))
    verdict["lost"] = verdict["lost"] or lost
    verdict["detail"] = "; ".join(c.get("outcome", "?") + ": " + (c.get("detail") or "")[:80]
                                  for c in posted)[:200] or verdict["detail"]
    return verdict


def _use_up_cap(ex, cell, env, relays):
    """One message this hour already (to a refusing relay, so it waits in a side outbox)."""
    argv = ex.gpualert_argv(os.path.join(cell, "seed-logs"), os.path.join(cell, "seed-outbox"),
                         ["--notify", "always", "--to", "me@example.com", "--max-per-hour", "1",
                          "--smtp", relays["closed"], "--smtp-timeout", "1"], ["true"])
    run_proc(argv, env, cell, timeout=60)


def _cell_verdict(relays, run, r, *, post, delivery, stderr):
    """Where one cell's message went (run: a CellRun), and whether its exit status and time held."""
    cell, token, outbox, code, cls, cond = run
    expected = code if code >= 0 else 128 - code
    sink = relays.get("_sink")
    received = len(sink.find(token)) if sink else 0
    in_outbox = _count_eml(outbox)
    fallback = delivery.get("outbox_path")
    where = []
    if received:
        where.append("smtp")
    if in_outbox:
        where.append("outbox(%d)" % in_outbox)
    in_dead = _count_eml(os.path.join(outbox, "dead"))  # refused for good (5xx): kept, with the reason
    if in_dead:
        where.append("outbox/dead(%d)" % in_dead)
    if fallback and os.path.exists(fallback) and not fallback.startswith(os.path.abspath(outbox) + os.sep):
        where.append("fallback:%s/" % re.sub(r"/\d{8}-\d{6}-[^/]*", "/<run dir>",
                                              os.path.dirname(fallback).replace(cell, "<cell>")))
    if not where and ("Subject:" in stderr and token in stderr):
        where.append("stderr dump")
    detail = delivery.get("detail") or ""
    if not delivery.get("detail"):
        said = [l for l in stderr.splitlines() if l.startswith("gpualert:")]
        detail = "run.json delivery %s; stderr: %s" % (delivery.get("outcome"), said[-1] if said else "(nothing)")
    return {"class": cls, "condition": cond, "expected": expected, "status": r["status"],
            "status_ok": r["status"] == expected, "post_s": post,
            "in_bound": post is not None and post <= SMTP_TIMEOUT_S + SLACK_S,
            "where": "+".join(where) or "LOST", "lost": not where, "outcome": delivery.get("outcome", "(none)"),
            "detail": detail.replace(cell, "<cell>").replace(
                os.path.dirname(cell), "<work>").replace("|", "/")[:200]}


def cmd_isolation(args):
    from concurrent.futures import ThreadPoolExecutor
    no_core_dumps()
    ex = Experiment(args, "isolation")
    work = ex.work
    script = write_script(work, "replay.py", CHILD_REPLAY)
    cases = corpus_cases(args.quick)
    source = "corpus/labels.jsonl (one row per class)"
    if cases is None:
        cases, source = fallback_cases(work), "fixed fallback set (corpus absent)"
    relays, stops = _start_relays(work)
    jobs, cells, skipped = [], [], []
    for case in cases:
        for cond in CONDITIONS:
            if cond[1] == "sink" and "sink" not in relays:
                skipped.append([case[0], cond[0], "skipped: aiosmtpd absent"])
                continue
            if cond[0] in CHANNEL_OF and "_pki" not in relays:
                skipped.append([case[0], cond[0], "skipped: openssl absent"])
                continue
            jobs.append((case, cond, len(jobs)))
    try:
        with ThreadPoolExecutor(max_workers=4) as pool:
            cells = list(pool.map(lambda job: isolation_cell(ex, relays, script, job), jobs))
    finally:
        for stop in stops:
            stop()
        shutil.rmtree(work, ignore_errors=True)
    return _report_isolation(ex, cells, skipped, cases, source)


def _report_isolation(ex, cells, skipped, cases, source):
    elapsed, quick = ex.elapsed(), ex.quick
    by_cond = []
    for name, _, extra, desc in CONDITIONS:
        sel = [c for c in cells if c["condition"] == name]
        if not sel:
            by_cond.append([name, desc, "-", "-", "-", "-", "skipped: aiosmtpd absent", ""])
            continue
        wheres = sorted(set(re.sub(r"\(\d+\)", "", c["where"]) for c in sel))
        by_cond.append([name, desc, "%d/%d" % (sum(c["status_ok"] for c in sel), len(sel)),
                        "%.2f" % max(c["post_s"] or 0 for c in sel),
                        "%d/%d" % (sum(c["in_bound"] for c in sel), len(sel)),
                        sum(c["lost"] for c in sel), ", ".join(wheres),
                        sel[0]["detail"]])
    lost = sum(c["lost"] for c in cells)
    bad_status = [c for c in cells if not c["status_ok"]]
    slow = [c for c in cells if not c["in_bound"]]
    fails = [[c["class"], c["condition"], c["expected"], c["status"], rel_fmt(c["post_s"], "%.2f"), c["where"],
              c["outcome"], c["detail"]] for c in cells if c["lost"] or not c["status_ok"] or not c["in_bound"]]
    blocks = [
        "## Failure isolation (%s; %d classes x %d relay conditions = %d cells; %.0f s)" % (
            "quick" if quick else "full", len(cases), len(CONDITIONS), len(cells), elapsed), "",
        "Children replay one log per class from %s to stdout and exit with its true_exit_code "
        "(negative: they kill themselves with that signal, handler reset to SIG_DFL). gpualert runs "
        "with `--notify always --smtp-timeout %d`; each cell has its own log dir, outbox and state "
        "dir (so one cell's hourly cap never holds another's message; the held_by_cap conditions "
        "first send one message with `--max-per-hour 1` to use the cap up); 4 cells "
        "run concurrently on %d CPUs. Bound on the time from the child's exit to the wrapper's exit: "
        "smtp-timeout + %.0f s slack = %.0f s. A message counts as kept if the loopback server "
        "received it (matched by a per-cell token in --name), or a .eml is in --outbox, or run.json "
        "delivery.outbox_path names an existing file elsewhere (fallback), or it was dumped to stderr." % (
            source, SMTP_TIMEOUT_S, os.cpu_count(), SLACK_S, SMTP_TIMEOUT_S + SLACK_S), "",
        "**Lost messages: %d of %d. Exit status mismatches: %d. Over the time bound: %d.**" % (
            lost, len(cells), len(bad_status), len(slow)), "",
        rel_table(["condition", "relay", "exit status kept", "max post-exit s", "within bound", "lost",
                  "where the message went", "delivery detail (first cell)"], by_cond), "",
        "Classes: " + ", ".join("%s (exit %d)" % (c[0], c[2]) for c in cases), "",
    ]
    if fails:
        blocks += ["### Cells that failed a check", "",
                   rel_table(["class", "condition", "expected", "got", "post-exit s", "where", "outcome", "detail"], fails), ""]
    csv_rows = [[c["class"], c["condition"], c["expected"], c["status"], rel_fmt(c["post_s"], "%.3f"), c["in_bound"],
                 c["where"], c["lost"], c["outcome"], c["detail"]] for c in cells] + [s + [""] * 7 for s in skipped]
    write_rel_results(ex, "isolation", "Failure isolation", blocks,
                      (["class", "condition", "expected_status", "status", "post_exit_s", "in_bound", "where",
                        "lost", "outcome", "detail"], csv_rows))
    print("isolation: %d cells, %.0f s: lost %d, status mismatches %d, over bound %d" % (
        len(cells), elapsed, lost, len(bad_status), len(slow)))
    for row in by_cond:
        print("  %-18s status %-6s max %-6s bound %-6s lost %-3s %s" % (row[0], row[2], row[3], row[4], row[5], row[6]))
    return 0


# ==== budget ====

CHILD_SMALL = r'''
import sys
for i in range(20):
    print("epoch %d loss %.3f" % (i, 1.0 / (i + 1)))
print("RuntimeError: validation failed")
sys.exit(1)
'''

BUDGET_SIZES = (("1k", 1024), ("100k", 100 * 1024), ("1m", MIB), ("10m", 10 * MIB), ("30m", 30 * MIB),
                ("60m", 60 * MIB), ("1g", 1024 * MIB))
BUDGET_BYTES = 10 * MIB


def _make_artifacts(cwd):
    art = os.path.join(cwd, "art")
    os.makedirs(art)
    files = {}
    for label, size in BUDGET_SIZES:
        path = os.path.join(art, "a_%s.bin" % label)
        if size >= 1024 * MIB:
            with open(path, "wb") as f:
                f.truncate(size)  # sparse: no blocks, nothing to read cheaply anyway
        else:
            with open(path, "wb") as f:
                left = size
                while left:
                    n = min(left, 4 * MIB)
                    f.write(os.urandom(n))
                    left -= n
        files[label] = path
    small = os.path.join(cwd, "small")
    os.makedirs(small)
    for i in range(500):
        with open(os.path.join(small, "f%03d.txt" % i), "w") as f:
            f.write(("metric %d\n" % i) * 200)
    return files, sorted(glob.glob(os.path.join(small, "*.txt")))


def _budget_scenarios(files, small, quick):
    out = [("artifact %s" % label, ["art/" + os.path.basename(path)], [path], 0) for label, path in
           sorted(files.items(), key=lambda kv: dict(BUDGET_SIZES)[kv[0]])]
    out.append(("500 x 2 KiB files", ["small/*.txt"], small, 0))
    out.append(("all of the above", ["art/*.bin", "small/*.txt"], sorted(files.values()) + small, 0))
    out.append(("log of %d MiB" % (50 if quick else 200), [], [], (50 if quick else 200) * MIB))
    return out


def _set_old_atime(paths):
    """atime older than mtime: relatime and strictatime then update it on any read."""
    for p in paths:
        st = os.stat(p)
        os.utime(p, (st.st_mtime - 3600, st.st_mtime))


def _atime_mount_option(path):
    best, opt = "", "unknown"
    try:
        with open("/proc/mounts") as f:
            for line in f:
                dev, mnt, fstype, opts = line.split()[:4]
                if path.startswith(mnt) and len(mnt) > len(best):
                    best = mnt
                    flags = opts.split(",")
                    opt = next((o for o in flags if "atime" in o), "relatime(default)")
    except OSError:
        pass
    return opt


# The budget runs' fixed parts: the job's folder, the relay ("host:port", or None for
# --dry-run), its Sink (or None) and the two child scripts (stream, small).
BudgetRig = collections.namedtuple("BudgetRig", "cwd relay sink scripts")


def budget_run(ex, rig, scenario, *, strace=False):
    label, globs, candidates, log_bytes = scenario
    work, cwd, relay, scripts = ex.work, rig.cwd, rig.relay, rig.scripts
    log_dir = os.path.join(work, "blogs")
    shutil.rmtree(log_dir, ignore_errors=True)
    token = "bud" + re.sub(r"[^a-z0-9]", "", label.lower()) + ("st" if strace else "")
    opts = ["--notify", "always", "--to", "me@example.com", "--from", "g@example.com", "--name", token]
    opts += ["--smtp", relay, "--smtp-tls", "none"] if relay else ["--dry-run"]
    for g in globs:
        opts += ["--artifacts", g]
    child = [REL_PY, scripts[0], str(log_bytes)] if log_bytes else [REL_PY, scripts[1]]
    argv = ex.gpualert_argv(log_dir, os.path.join(work, "boutbox"), opts, child)
    trace = os.path.join(work, "trace.txt")
    if strace:
        argv = ["strace", "-f", "-qq", "-e", "trace=open,openat", "-o", trace] + argv
    _set_old_atime(candidates)
    before = dict((p, os.stat(p).st_atime) for p in candidates)
    r = run_proc(argv, ex.env, cwd, poll_rss=not strace, timeout=600)
    _, record = find_run(log_dir)
    read = [p for p in candidates if os.stat(p).st_atime != before[p]]
    opened = None
    if strace:
        with open(trace, errors="replace") as f:
            text = f.read()
        opened = [p for p in candidates if '"%s"' % p in text or '"%s"' % os.path.relpath(p, cwd) in text]
    return r, record, read, opened, token


def _message_size(relay_sink, token, record):
    if relay_sink is not None:
        got = relay_sink.find(token)
        if got:
            return len(got[-1][1]), "received by aiosmtpd"
    path = (record.get("delivery") or {}).get("outbox_path")
    if path and os.path.exists(path):
        return os.path.getsize(path), "saved .eml (%s)" % (record.get("delivery") or {}).get("outcome")
    return None, "no message found"


def _manifest_check(record, candidates):
    manifest = record.get("manifest") or []
    paths = set(os.path.realpath(r.get("path")) for r in manifest if r.get("path"))
    note = any(r.get("kind") == "note" or not r.get("path") for r in manifest)
    missing = [p for p in candidates if os.path.realpath(p) not in paths]
    silent = [] if (note and missing) else missing
    disclosed = missing if (note and missing) else []
    counts = {}
    for row in manifest:
        key = re.split(r"[:(]", row.get("disposition") or "(empty)")[0].strip() or "(empty)"
        counts[key] = counts.get(key, 0) + 1
    return manifest, silent, disclosed, counts


def cmd_budget(args):
    ex = Experiment(args, "budget")
    work = ex.work
    cwd = os.path.join(work, "job")
    os.makedirs(cwd)
    scripts = (write_script(work, "child_stream.py", CHILD_STREAM), write_script(work, "child_small.py", CHILD_SMALL))
    files, small = _make_artifacts(cwd)
    sink = Sink(size_limit=512 * MIB) if have_aiosmtpd() else None
    relay = "127.0.0.1:%d" % sink.port if sink else None
    rig = BudgetRig(cwd, relay, sink, scripts)
    rows, file_rows, csv_rows = [], [], []
    try:
        for scenario in _budget_scenarios(files, small, args.quick):
            rows.append(_budget_scenario(ex, rig, scenario, file_rows, csv_rows))
        strace_note = _budget_strace(ex, rig, files)
    finally:
        if sink:
            sink.stop()
        shutil.rmtree(work, ignore_errors=True)
    transport = "loopback aiosmtpd (message size = bytes received)" if sink else \
        "--dry-run (aiosmtpd absent; message size = saved .eml)"
    notes = {"strace": strace_note, "transport": transport, "atime": _atime_mount_option(cwd)}
    return _report_budget(ex, rows, file_rows, csv_rows, notes)


def _budget_scenario(ex, rig, scenario, file_rows, csv_rows):
    label, globs, candidates, log_bytes = scenario
    work = ex.work
    r, record, read, _, token = budget_run(ex, rig, scenario)
    size, how = _message_size(rig.sink, token, record)
    manifest, silent, disclosed, counts = _manifest_check(record, candidates)
    hide = lambda text: re.sub(r"/\d{8}-\d{6}-[^/]*/", "/<run dir>/", str(text).replace(work, "<work>"))
    for row in manifest:
        if len(candidates) <= 10 or row.get("kind") != "artifact":
            file_rows.append([label, hide(row.get("name")), row.get("size"), hide(row.get("disposition"))])
    big = [p for p in read if os.path.getsize(p) >= 1024 * MIB]
    used = dict((os.path.realpath(row["path"]), row.get("disposition") or "") for row in manifest if row.get("path"))
    wasted = [p for p in read if not used.get(os.path.realpath(p), "").startswith(("attached", "in zip", "excerpt"))]
    out = [label, len(candidates), len(manifest), "; ".join("%s: %d" % kv for kv in sorted(counts.items())),
           rel_fmt(size, "%d"), ("yes" if size is not None and size <= BUDGET_BYTES else "NO"), len(silent),
           len(disclosed), "%.2f" % r["wall"], "%.1f" % ((r["hwm_kib"] or 0) / 1024.0), len(read), len(wasted),
           "READ" if big else ("no" if "1g" in label or "all" in label else "-"), r["status"], how]
    csv_rows.append(out)
    return out


def _budget_strace(ex, rig, files):
    if not found("strace", shutil.which("strace")):
        return "strace not available: the atime column is the only read check"
    path = files["1g"]
    scenario = ("artifact 1g (strace)", ["art/" + os.path.basename(path)], [path], 0)
    r, record, read, opened, _ = budget_run(ex, rig, scenario, strace=True)
    if r["status"] != 1:
        return "strace run failed (status %d); rely on the atime column" % r["status"]
    return ("strace -f -e trace=open,openat over the whole wrapper, 1 GiB artifact alone: "
            "the file was %s (atime %s)" % ("OPENED" if opened else "never opened",
                                              "changed" if read else "unchanged"))


def _report_budget(ex, rows, file_rows, csv_rows, notes):
    """notes: the strace check's sentence, the transport and the mount's atime option."""
    elapsed, quick, strace_note = ex.elapsed(), ex.quick, notes["strace"]
    headers = ["scenario", "candidates", "manifest rows", "dispositions", "message bytes", "<= 10 MiB",
               "silent drops", "unlisted but disclosed", "wall s", "wrapper VmHWM MiB", "files read (atime)", "read but not attached", "1 GiB read?", "exit", "size from"]
    silent = sum(int(r[6]) for r in rows)
    over = [r[0] for r in rows if r[5] != "yes"]
    wasted = sum(int(r[11]) for r in rows)
    blocks = [
        "## Attachment budget (%s; %.0f s)" % ("quick" if quick else "full", elapsed), "",
        "Artifacts of random bytes (1 KiB .. 60 MiB), one 1 GiB sparse file (truncate), 500 x 2 KiB "
        "text files, and a log written by the child (64 KiB chunks). Each scenario is one run of "
        "`gpualert --notify always --artifacts GLOB -- child` with the default --budget 10M; the "
        "child prints 21 lines and exits 1 (log scenario: writes the log, exits 0). Transport: %s. "
        "Silent drop = a candidate file absent from run.json's manifest with no note row saying "
        "the search stopped. Read check: every candidate's atime is set older than its mtime "
        "before the run, so a read updates it under relatime/strictatime (this mount: %s; with "
        "noatime the column proves nothing); and %s. Peak RSS is the wrapper's own VmHWM, polled "
        "every 10 ms (ru_maxrss would count the harness image between fork and exec)." % (
            notes["transport"], notes["atime"], strace_note), "",
        "**Silent drops: %d. Messages over budget: %s. Files read but not attached: %d.**" % (
            silent, ", ".join(over) or "none", wasted), "",
        rel_table(headers, rows), "",
        "### Dispositions (run.json manifest; the 500-file scenarios show only the log row)", "",
        rel_table(["scenario", "name", "size", "disposition"], file_rows), ""]
    csv_headers = ["scenario", "candidates", "manifest_rows", "dispositions", "message_bytes", "within_10mib",
                   "silent_drops", "unlisted_but_disclosed", "wall_s", "wrapper_vmhwm_mib", "files_read_atime",
                   "read_not_attached", "gib_file_read", "exit", "size_from"]
    write_rel_results(ex, "budget", "Attachment budget", blocks, (csv_headers, csv_rows),
                      extra_csv={"manifest": (["scenario", "name", "size", "disposition"], file_rows)})
    print("budget (%.0f s): silent drops %d; over budget: %s; %s" % (elapsed, silent, ", ".join(over) or "none", strace_note))
    for r in rows:
        print("  %-22s msg %-10s silent %s disclosed %-3s wall %-5ss VmHWM %-6sMiB read %-3s read-not-attached %s 1GiB read %s" % (
            r[0], r[4], r[6], r[7], r[8], r[9], r[10], r[11], r[12]))
    return 0


# ==== CLI glue: the reliability experiments' subcommands ====

def add_reliability_commands(subparsers):
    """Register survival, overhead, isolation and budget (each with --quick and --results)."""
    for name, func, text in (("survival", cmd_survival, "log survival per fault, child and method"),
                             ("overhead", cmd_overhead, "launch, streaming and notification latency"),
                             ("isolation", cmd_isolation, "relay faults never change the run's fate"),
                             ("budget", cmd_budget, "attachment budget and dispositions"),
                             ("metrics", cmd_metrics, "metrics from a 1 GiB log, bounded time"),
                             ("exitpath", cmd_exitpath, "child exit -> message spooled; a cause under 1 GiB"),
                             ("runs", cmd_runs, "runs and digest over 5,000 run records")):
        p = subparsers.add_parser(name, help=text)
        p.add_argument("--quick", action="store_true", help="few trials, small volumes")
        p.add_argument("--results", default=RESULTS_DIR, help="output folder (results/)")
        p.set_defaults(handler=func, func=func)


# ==== Experiment: the child's exit to the message in the outbox (issue 10) ====

# The child writes `size` bytes of ordinary output (after an optional decisive first part),
# stamps the time just before it exits, and exits 1. The message is spooled (no transport):
# its file's mtime minus the stamp is "exit -> spooled".
EXITPATH_CHILD = r"""
import os, sys, time
size, head, stamp = int(sys.argv[1]), sys.argv[2], sys.argv[3]
if head:
    os.write(1, head.encode() + b"\n")
line = b"INFO step 123456 done: tokens/s 51234.5, shard 77 of 128 saved to /scratch/run/ckpt\n"
block = line * ((4 << 20) // len(line))
left = size
while left > 0:
    left -= os.write(1, block[:left])
with open(stamp, "w") as f:
    f.write(repr(time.time()))
sys.exit(1)
"""

EXITPATH_OOM = ("Traceback (most recent call last):\n"
                '  File "train.py", line 88, in <module>\n'
                "    loss = model(batch).sum()\n"
                "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                "total capacity of 79.15 GiB of which 1.23 GiB is free.")


def _exitpath_trial(ex, script, size, head, i):
    run = tempfile.mkdtemp(prefix="run%d-%d-" % (size, i), dir=ex.work)
    logs, outbox, stamp = os.path.join(run, "logs"), os.path.join(run, "outbox"), os.path.join(run, "stamp")
    argv = ex.gpualert_argv(logs, outbox, ["--sendmail", "none", "--gpu-interval", "0"],
                         [REL_PY, script, str(size), head, stamp])
    with open(os.devnull, "wb") as null:
        proc = subprocess.run(argv, env=ex.env, cwd=run, stdout=null, stderr=subprocess.PIPE, timeout=900)
    eml = sorted(glob.glob(os.path.join(outbox, "*.eml")))
    _, record = find_run(logs)
    exit_t = float(open(stamp).read()) if os.path.exists(stamp) else None
    spooled = os.stat(eml[0]).st_mtime - exit_t if eml and exit_t else None
    shutil.rmtree(logs, ignore_errors=True)  # a GiB each: do not keep them
    return {"spooled": spooled, "class": record.get("class"), "rc": proc.returncode}


def _time_classify_1g(work, module):
    """In-process: find_evidence over the 1 GiB log plus classify_text of its tail."""
    path = os.path.join(work, "big.log")
    with open(path, "wb") as f:
        f.write(EXITPATH_OOM.encode() + b"\n")
        line = b"INFO step 123456 done: tokens/s 51234.5, shard 77 of 128 saved to /scratch/run/ckpt\n"
        block = line * ((4 << 20) // len(line))
        for _ in range((1024 * MIB) // len(block)):
            f.write(block)
    total = None
    times = []
    for _ in range(3):
        t0 = time.time()
        text, first = module.read_tail(path)
        facts = {"exit_code": 1, "noted_lines": module.find_evidence(path)}
        verdict = module.classify_text(text, facts, first_line=first)
        times.append(time.time() - t0)
        total = verdict.cls
    os.unlink(path)
    return {"class": total, "s": rel_median(times)}


def cmd_exitpath(args):
    ex = Experiment(args, "exitpath")
    work = ex.work
    script = write_script(work, "exitpath_child.py", EXITPATH_CHILD)
    cases = [("5 MiB", 5 * MIB, "", 3 if args.quick else 7)]
    if not args.quick:
        cases += [("1 GiB", 1024 * MIB, "", 3), ("OOM, then 1 GiB", 1024 * MIB, EXITPATH_OOM, 3)]
    rows, csv_rows = [], []
    try:
        for label, size, head, trials in cases:
            got = [_exitpath_trial(ex, script, size, head, i) for i in range(trials)]
            csv_rows += [[label, i, rel_fmt(g["spooled"], "%.4f"), g["class"], g["rc"]] for i, g in enumerate(got)]
            rows.append([label, str(trials), rel_fmt(rel_median([g["spooled"] for g in got])),
                         rel_fmt(max(g["spooled"] for g in got if g["spooled"] is not None)
                                 if any(g["spooled"] is not None for g in got) else None),
                         ", ".join(sorted(set(str(g["class"]) for g in got)))])
        inproc = None if args.quick else _time_classify_1g(work, load_module(ex.wrapper, "gpualert_exitpath"))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    blocks = ["Child exit (its own time stamp, taken just before it exits) to the message file in the "
              "outbox (its mtime); no transport, so the message is spooled. The child writes ordinary "
              "INFO lines; in the last case a CUDA OOM traceback comes first, then 1 GiB of them. "
              "Targets: 5 MiB <= 0.3 s, 1 GiB <= 1 s, the OOM found under 1 GiB <= 1.5 s.", "",
              md_table(["log", "runs", "median s", "max s", "class"], rows)]
    if inproc:
        blocks += ["", "In-process, the same 1 GiB log (warm page cache), find_evidence + read_tail + "
                   "classify_text, median of 3: %.3f s, class %s (target < 1 s)." % (inproc["s"], inproc["class"])]
    blocks += ["", "Measured in %.0f s with `python3 eval.py exitpath%s`." % (ex.elapsed(), " --quick" if args.quick else "")]
    path = write_rel_results(ex, "exitpath", "Child exit to the message", blocks,
                             (["case", "i", "spooled_s", "class", "exit"], csv_rows))
    print(open(path).read())
    return 0


# ==== Experiment: metrics from a large log ====

# Each shape is one progress line as the library prints it; the log repeats it (with the
# step counting up) to the target size, so the sample reads real-looking lines everywhere.
METRIC_SHAPES = {
    "hf_trainer": "{'loss': %(loss).4f, 'grad_norm': 1.52, 'learning_rate': 4.9e-05, 'epoch': %(epoch).2f}\n",
    "lightning": "\rEpoch %(epoch_i)d:  45%%|####5     | %(step)d/99999 [01:10<01:12, 44.5it/s, v_num=0, train_loss=%(loss).3f]",
    "keras": "%(step)d/99999 [==============================] - 3s 1ms/step - loss: %(loss).4f - accuracy: 0.9812\n",
    "noisy_kv": "2026-12-03 08:12:34,123 INFO trainer.py:88 step=%(step)d loss=%(loss).5f lr=0.0003 tok/s=51234.5 mem=71.2G\n",
}


def _write_big_log(path, shape, size):
    """A log of `size` bytes made of `shape` lines, written 4 MiB at a time."""
    step, written = 0, 0
    with open(path, "w") as f:
        while written < size:
            lines = []
            for _ in range(20000):
                step += 1
                lines.append(shape % {"step": step, "loss": 5.0 / (1 + step * 1e-4),
                                      "epoch": step * 1e-5, "epoch_i": step // 100000})
            chunk = "".join(lines)
            f.write(chunk)
            written += len(chunk)
    return os.path.getsize(path)


def _drop_cache(path):
    """Ask the kernel to forget the file's pages, so a trial reads from disk (best effort)."""
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)
    except (AttributeError, OSError):
        pass


def cmd_metrics(args):
    """Time extract_log_metrics on a 1 GiB log of each shape (cold page cache and warm)."""
    ex = Experiment(args, "metrics")
    work = ex.work
    module = load_module(ex.wrapper)
    size = (64 if args.quick else 1024) * MIB
    trials = 3 if args.quick else 7
    rows = []
    try:
        for name, shape in sorted(METRIC_SHAPES.items()):
            path = os.path.join(work, name + ".log")
            real = _write_big_log(path, shape, size)
            for cache in ("cold", "warm"):
                times = []
                for _ in range(trials):
                    if cache == "cold":
                        _drop_cache(path)
                    t0 = time.perf_counter()
                    m = module.extract_log_metrics(path)
                    times.append(time.perf_counter() - t0)
                main = m.get("main") or ["-"]
                s = m["series"][main[0]] if m.get("series") else {}
                rows.append([name, real, cache, trials, "%.4f" % statistics.median(times),
                             "%.4f" % max(times), m.get("sampled_bytes"), main[0],
                             len(s.get("points") or [])])
            os.unlink(path)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    headers = ["shape", "log_bytes", "cache", "trials", "median_s", "max_s", "sampled_bytes",
               "main_metric", "points"]
    block = ["Time from a finished log to run.json's metrics (`extract_log_metrics`): a bounded",
             "sample (head, %d evenly spaced blocks, tail) is read, whatever the log's size." % (
                 module.METRIC_SAMPLE_BLOCKS), "Target: <= 0.2 s for a 1 GiB log.", "",
             md_table(headers, rows)]
    print(write_rel_results(ex, "metrics", "Metrics from a large log", block, (headers, rows)))
    return 0


# ==== Experiment: `runs` and `digest` over 5,000 run records (issue 24) ====

RUNS_RECORDS = 5000
RUNS_CHILD = r"""
import sys
for step in range(1, 401):
    print("step %d/400 loss %.4f lr 3e-4 tokens/s 51234.5" % (step, 2.5 / step ** 0.3), flush=True)
sys.stderr.write("Traceback (most recent call last):\n  File \"train.py\", line 88, in <module>\n"
                 "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n")
sys.exit(1)
"""
RUNS_VARIANTS = (("FAILED", "cuda_oom", "tried to allocate 2.00 GiB"), ("SUCCESS", None, None),
                 ("SUCCESS", None, None), ("SUCCESS", None, None), ("FAILED", "gpu_hardware", "Xid 79"),
                 ("TIMEOUT", "walltime", "time limit reached"), ("SUCCESS", None, None),
                 ("FAILED", "nccl", "watchdog timeout"))


def _runs_records(ex, count):
    """One real run's run.json (a failed run with a 400-step curve), copied to `count` run
    directories with different ends, statuses, classes, hosts and job ids."""
    work = ex.work
    log_dir = os.path.join(work, "logs")
    script = write_script(work, "train.py", RUNS_CHILD)
    subprocess.run(ex.gpualert_argv(log_dir, os.path.join(work, "outbox"), ["--quiet"], [REL_PY, script]),
                   env=ex.env, cwd=work, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=120)
    _, template = find_run(log_dir)
    now = time.time()
    for i in range(count):
        status, cls, detail = RUNS_VARIANTS[i % len(RUNS_VARIANTS)]
        end = now - i * 600.0
        record = dict(template, status=status, start=end - 3600.0, end=end, host="gpu%02d" % (i % 37),
                      scheduler={"kind": "slurm", "job_id": str(100000 + i), "label": str(100000 + i)},
                      classification=dict(template["classification"], cls=cls, detail=detail))
        record["class"] = cls
        run_dir = os.path.join(log_dir, "%s-train-%05d" % (time.strftime("%Y%m%d-%H%M%S", time.localtime(end)), i))
        os.makedirs(run_dir)
        record["run_dir"] = run_dir
        with open(os.path.join(run_dir, "run.json"), "w") as f:
            json.dump(record, f, indent=2)
    size = os.path.getsize(os.path.join(run_dir, "run.json"))
    return log_dir, size


def cmd_runs(args):
    """Wall time of `gpualert.py runs` (a new process each time, as a user runs it) over 5,000
    run records: without the index (every run.json parsed) and with it, and of `digest`."""
    ex = Experiment(args, "runs")
    work, env = ex.work, ex.env
    count = 500 if args.quick else RUNS_RECORDS
    trials = 3 if args.quick else 7
    try:
        log_dir, size = _runs_records(ex, count - 1)  # and the real run they copy
        index = os.path.join(log_dir, load_module(ex.wrapper).RUNS_INDEX_NAME)
        base = [REL_PY, ex.wrapper, "--log-dir", log_dir, "--outbox", os.path.join(work, "outbox")]
        cases = (("runs", "no index (every run.json parsed)", ["runs"], True),
                 ("runs", "index present", ["runs"], False),
                 ("runs --failed --json", "index present", ["runs", "--failed", "--json"], False),
                 ("runs --since 24h --node gpu07", "index present", ["runs", "--since", "24h", "--node", "gpu07"], False),
                 ("digest --since 7d --dry-run", "index present", ["digest", "--since", "7d", "--dry-run"], False))
        rows = []
        for name, state, argv, cold in cases:
            times, lines = [], 0
            for _ in range(trials):
                if cold and os.path.exists(index):
                    os.unlink(index)
                t0 = time.perf_counter()
                r = subprocess.run(base[:2] + argv[:1] + base[2:] + argv[1:], env=env, cwd=work,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
                times.append(time.perf_counter() - t0)
                lines = len(r.stdout.splitlines())
            rows.append([name, state, count, trials, "%.3f" % statistics.median(times),
                         "%.3f" % max(times), lines, _verdict(max(times) < 2.0)])
    finally:
        shutil.rmtree(work, ignore_errors=True)
    headers = ["command", "index", "records", "trials", "median_s", "max_s", "stdout_lines", "under_2s"]
    block = ["`gpualert.py runs` and `digest` over %d run records (each run.json %d bytes: a real" % (
                 count, size),
             "failed run's record with a 400-step curve, copied with other ends, statuses, classes and",
             "37 hosts). Wall time of a new process each trial, Python's start included; the page",
             "cache is warm (the records were just written). Target: under 2 s at 5,000 records.", "",
             md_table(headers, rows)]
    print(write_rel_results(ex, "runs", "Every run at a glance: runs and digest at scale", block, (headers, rows)))
    return 0


# ==== Experiment: soak (nothing lost, nothing sent twice) ====

SOAK_STATES = ("healthy", "mute", "5xx", "refused")


class SoakRelays(object):
    """One relay per state: aiosmtpd (healthy), a mute one, one answering RCPT with 550 5.1.1
    (refused for good) and a port with no listener (connection refused)."""

    def __init__(self):
        self.sink = Sink()
        self.mute, self.rcpt_5xx = FakeRelay("mute"), FakeRelay("rcpt_5xx")
        self.addr = {"healthy": "127.0.0.1:%d" % self.sink.port,
                     "mute": "127.0.0.1:%d" % self.mute.port,
                     "5xx": "127.0.0.1:%d" % self.rcpt_5xx.port,
                     "refused": "127.0.0.1:%d" % closed_port()}

    def stop(self):
        self.sink.stop()
        self.mute.stop()
        self.rcpt_5xx.stop()


SOAK_KILL_MOMENTS = ("during the run", "in the first 200 ms after the exit",
                     "after the exit was logged (spooling, delivery)")


def _soak_run(ex, i, rng, relays, kill_p):
    """One wrapped run against a relay in a random state; in a share of them the wrapper is
    SIGKILLed at a moment drawn from SOAK_KILL_MOMENTS: while the child runs (it says
    "start", runs 0.3 s, says "bye" and exits), in the 200 ms after its "bye", or after the
    wrapper logged the exit. -> (token, state, killed)."""
    work = ex.work
    state = rng.choice(SOAK_STATES)
    token = "soak%05d%s" % (i, os.urandom(3).hex())
    argv = [REL_PY, ex.wrapper, "--log-dir", os.path.join(work, "logs"),
            "--outbox", os.path.join(work, "outbox"), "--to", "soak@example.org",
            "--smtp", relays.addr[state], "--smtp-timeout", "2", "--max-per-hour", "0",
            "--name", token, "--quiet", "--", "sh", "-c",
            "echo start; sleep 0.3; echo bye; exit %d" % rng.choice((0, 1, 3))]
    moment = rng.choice(SOAK_KILL_MOMENTS) if rng.random() < kill_p else None
    proc = subprocess.Popen(argv, env=ex.env, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    proc.stdout.readline()  # "start": the child runs
    if moment == SOAK_KILL_MOMENTS[0]:
        _soak_kill_within(proc, rng.uniform(0.0, 0.3))
    proc.stdout.readline()  # "bye": the child is exiting now
    if moment == SOAK_KILL_MOMENTS[1]:
        _soak_kill_within(proc, rng.uniform(0.0, 0.2))
    if moment == SOAK_KILL_MOMENTS[2]:
        _soak_wait_logged(work, token, proc)
        _soak_kill_within(proc, rng.uniform(0.0, 2.5))
    proc.communicate(timeout=120)
    return token, state, moment is not None and proc.returncode == -signal.SIGKILL


def _soak_kill_within(proc, seconds):
    """SIGKILL the wrapper `seconds` from now unless it ends before."""
    try:
        proc.wait(seconds)
    except subprocess.TimeoutExpired:
        proc.kill()


def _soak_wait_logged(work, token, proc, timeout=30.0):
    end = time.time() + timeout
    while time.time() < end and proc.poll() is None:
        for path in glob.glob(os.path.join(work, "logs", "*%s*" % token, "output.log")):
            with open(path, "rb") as f:
                if b"command ended" in f.read():
                    return
        time.sleep(0.01)


def _soak_resend(ex, relays, state, timeout=300):
    argv = [REL_PY, ex.wrapper, "resend", "--log-dir", os.path.join(ex.work, "logs"),
            "--outbox", os.path.join(ex.work, "outbox"), "--smtp", relays.addr[state],
            "--smtp-timeout", "2", "--max-per-hour", "0"]
    return subprocess.run(argv, env=ex.env, cwd=ex.work, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=timeout)


def _soak_files(work):
    """{token: [paths]} for spooled and dead messages anywhere under the work folder."""
    spooled, dead = {}, {}
    for folder, _, names in os.walk(work):
        if "snapshot" in folder or "/logs/2" in folder:
            continue
        for name in names:
            if ".eml" not in name or name.startswith(".tmp-"):
                continue
            path = os.path.join(folder, name)
            with open(path, "rb") as f:
                m = re.search(rb"soak\d{5}[0-9a-f]{6}", f.read(8192))
            if m:
                target = dead if "%sdead" % os.sep in folder + os.sep else spooled
                target.setdefault(m.group(0).decode(), []).append(path)
    return spooled, dead


def _soak_tally(tokens, relays, work, explain=False):
    spooled, dead = _soak_files(work)
    delivered = {}
    with relays.sink.lock:
        for _, data in relays.sink.messages:
            m = re.search(rb"soak\d{5}[0-9a-f]{6}", data[:16384])
            if m:
                delivered[m.group(0).decode()] = delivered.get(m.group(0).decode(), 0) + 1
    counts = {"runs": len(tokens), "delivered_once": 0, "dead_lettered": 0, "lost": 0,
              "duplicated": 0, "smtp_window": 0, "still_spooled": 0}
    for token in tokens:
        sent, gone = delivered.get(token, 0), len(dead.get(token, []))
        if spooled.get(token):
            counts["still_spooled"] += 1
        if sent + gone > 1:
            counts["smtp_window" if _in_smtp_window(token, relays.sink, gone) else "duplicated"] += 1
            if explain:
                _soak_explain(token, relays, dead.get(token, []))
        elif sent == 1:
            counts["delivered_once"] += 1
        elif gone == 1:
            counts["dead_lettered"] += 1
        elif not spooled.get(token):
            counts["lost"] += 1
    return counts


def _message_id(data):
    m = re.search(rb"(?im)^Message-ID:[ \t]*(\S+)", data[:16384])
    return m.group(1) if m else None


def _in_smtp_window(token, sink, dead):
    """A duplicate SMTP itself cannot prevent: the same message (one Message-ID, so the
    receiver can tell) arrived again, and every earlier copy came in a session the client
    never QUIT, i.e. the wrapper was killed after the relay took it but (as far as the relay
    can tell) before the 250 reached the wrapper, which alone may then unspool it."""
    with sink.lock:
        copies = [(d, id(s) in sink.quits) for (_, d), s in zip(sink.messages, sink.sessions)
                  if token.encode() in d[:16384]]
    ids = set(_message_id(d) for d, _ in copies)
    return not dead and len(ids) == 1 and None not in ids and not any(q for _, q in copies[:-1])


def _soak_explain(token, relays, dead_paths):
    """--explain: what became of a duplicated run's messages: each copy the relay got (its
    Message-ID, whether it was the provisional stand-in, the spool reason) and each dead one."""
    def describe(data):
        head = data[:16384].decode("utf-8", "replace")
        mid = re.search(r"(?im)^Message-ID:\s*(\S+)", head)
        reason = re.search(r"(?im)^X-Gpualert-(?:Outbox|Dead)-Reason:\s*(.*)$", head)
        return "message-id %s, %s, reason %r" % (
            mid.group(1) if mid else "-", "PROVISIONAL" if "provisional message" in head else "full",
            reason.group(1)[:80] if reason else None)
    print("soak: duplicated %s:" % token)
    with relays.sink.lock:
        for (_, data), session in zip(relays.sink.messages, relays.sink.sessions):
            if token.encode() in data[:16384]:
                print("  delivered: %s, %s" % (describe(data), "QUIT" if id(session) in
                                               relays.sink.quits else "no QUIT (session cut)"))
    for path in dead_paths:
        with open(path, "rb") as f:
            print("  dead: %s: %s" % (os.path.basename(path), describe(f.read())))


def cmd_soak(args):
    """N runs, the relay's state drawn per run (healthy / mute / 5xx / refused), a random
    SIGKILL of the wrapper in a share of them (during the run, just after the exit, or while
    it spools and delivers: SOAK_KILL_MOMENTS), resends in between and
    at the end (healthy relay, until the spool is empty). Every message must end delivered
    exactly once or in outbox/dead/ with its reason; none lost, none duplicated."""
    import random
    if not have_aiosmtpd():
        print("soak: skipped: aiosmtpd absent")
        return 0
    runs = args.runs or (40 if args.quick else 1000)
    ex = Experiment(args, "soak")
    work = ex.work
    rng, relays, started = random.Random(SEED), SoakRelays(), time.time()
    plans = [(i, random.Random(rng.random())) for i in range(runs)]
    tokens, killed, lock = [], [0], threading.Lock()

    def worker(queue):
        while True:
            with lock:
                if not queue:
                    return
                i, r = queue.pop(0)
            token, _, was_killed = _soak_run(ex, i, r, relays, args.kill_share)
            with lock:
                tokens.append(token)
                killed[0] += was_killed
            if r.random() < 0.05:  # a user's resend while runs go on, against any relay state
                _soak_resend(ex, relays, r.choice(SOAK_STATES))
    queue = list(plans)
    threads = [threading.Thread(target=worker, args=(queue,)) for _ in range(args.jobs)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    rounds = 0
    while rounds < 20:  # the final resends: a healthy relay until nothing is left
        rounds += 1
        if _soak_resend(ex, relays, "healthy").returncode == 0:
            break
    time.sleep(1.0)  # the sink's last DATA is recorded after its 250
    counts = _soak_tally(tokens, relays, work, explain=getattr(args, "explain", False))
    counts.update(killed=killed[0], final_resends=rounds, seconds=round(time.time() - started))
    relays.stop()
    _soak_report(ex, counts, args)
    shutil.rmtree(work, ignore_errors=True)
    return 0 if counts["lost"] == counts["duplicated"] == counts["still_spooled"] == 0 else 1


def _soak_report(ex, counts, args):
    keys = ("runs", "killed", "delivered_once", "dead_lettered", "lost", "duplicated",
            "smtp_window", "still_spooled", "final_resends", "seconds")
    print("soak: " + ", ".join("%s %s" % (k, counts[k]) for k in keys))
    blocks = ["Command: `python3 eval.py soak --runs %d --jobs %d --kill-share %.2f`" % (
        counts["runs"], args.jobs, args.kill_share), "",
        md_table(["what", "count"], [(k, counts[k]) for k in keys])]
    write_rel_results(ex, "soak", "Soak: every message delivered exactly once or dead-lettered",
                      blocks, (["what", "count"], [(k, counts[k]) for k in keys]))


def _add_soak_args(sub):
    p = sub.add_parser("soak", help="N runs, relay flipping, SIGKILLs: nothing lost or sent twice")
    p.add_argument("--runs", type=int, default=None, help="runs (1000; 40 with --quick)")
    p.add_argument("--jobs", type=int, default=3, help="runs at once (3)")
    p.add_argument("--kill-share", type=float, default=0.3, help="share of runs SIGKILLed (0.3)")
    p.add_argument("--quick", action="store_true", help="40 runs")
    p.add_argument("--explain", action="store_true",
                   help="print what became of each duplicated run's messages")
    p.add_argument("--results", default=RESULTS_DIR, help="output folder (results/)")
    p.set_defaults(handler=cmd_soak)



# ==== All, and the README's results section ====

PAPER_CORPUS = os.path.join(os.path.dirname(HERE), "shared", "paper-corpus")
PAPER_FIGURES = {"gpualert": "0.997", "keyword": "0.830", "last_exception": "0.559",
                 "exit_code": "0.133"}  # the paper's Table for its ordered rules and baselines
README_BEGIN = "<!-- results: generated by `python3 eval.py report` from results/; do not edit -->"
README_END = "<!-- /results -->"


def _add_all_args(sub):
    p = sub.add_parser("all", help="every experiment in order, then the README's results")
    p.add_argument("--quick", action="store_true", help="few trials, small volumes (CI)")
    p.add_argument("--results", default=RESULTS_DIR, help="output folder (results/)")
    p.add_argument("--no-skips", action="store_true",
                   help="exit 1 if aiosmtpd, openssl or strace was missing, so cells were skipped (CI)")
    p.set_defaults(handler=cmd_all)
    p = sub.add_parser("report", help="rewrite README.md's Results section from results/")
    p.add_argument("--results", default=RESULTS_DIR, help="folder the tables are read from")
    p.set_defaults(handler=cmd_report)


def cmd_all(args):
    """classify (ours, and the paper's corpus when ../shared has it), then the rest."""
    import argparse
    if args.quick and os.path.abspath(args.results) == os.path.abspath(RESULTS_DIR):
        args.results = os.path.join(RESULTS_DIR, "quick")  # never overwrite the real figures
    started, codes = time.time(), []
    corpora = [(os.path.join(HERE, "corpus"), "classify")]
    if os.path.isdir(PAPER_CORPUS):
        corpora.append((PAPER_CORPUS, None))
    for corpus, _ in corpora:
        codes.append(cmd_classify(argparse.Namespace(
            corpus=corpus, module=os.path.join(HERE, "gpualert.py"), results=args.results,
            json=False)))
    for name, before in BLIND_SETS:  # the blind held-out sets, before and after
        codes.append(cmd_blind(argparse.Namespace(
            corpus=os.path.join(HERE, "corpus", "blind", name), name=name, before=before,
            results=args.results)))
    for func in (cmd_survival, cmd_overhead, cmd_isolation, cmd_budget, cmd_metrics, cmd_exitpath,
                 cmd_runs):
        codes.append(func(argparse.Namespace(quick=args.quick, results=args.results)))
    if not args.quick:  # 300 runs (the 1,000-run soak is `eval.py soak`); CI's quick run skips it
        codes.append(cmd_soak(argparse.Namespace(runs=300, jobs=3, kill_share=0.3, quick=False,
                                                 results=args.results)))
    if not args.quick:  # quick figures are a smoke test, not results to publish
        codes.append(cmd_report(args))
    print("all: %d experiments in %.0f s" % (len(codes), time.time() - started))
    if args.no_skips and MISSING:
        print("all: failed (--no-skips): skipped for want of %s" % ", ".join(sorted(MISSING)))
        codes.append(1)
    return max(codes) if codes else 0


def cmd_report(args):
    """Regenerate the Results section of README.md between its markers."""
    readme = os.path.join(HERE, "README.md")
    with open(readme) as handle:
        text = handle.read()
    if README_BEGIN not in text or README_END not in text:
        print("README.md has no results markers")
        return 1
    section = "\n".join(results_section(args.results))
    head, rest = text.split(README_BEGIN, 1)
    text = head + README_BEGIN + "\n" + section + "\n" + README_END + rest.split(README_END, 1)[1]
    write_text(readme, text)
    print("wrote the Results section of %s" % readme)
    return 0


def results_section(folder):
    lines = ["", _machine_line(folder), "",
             "### Diagnosis (experiment 1, macro-F1)", ""]
    lines += _classify_table(folder)
    for name, title in (("overhead", "Speed and memory"), ("exitpath", "Child exit to the message"),
                        ("isolation", "Notifier isolation"), ("soak", "Soak: exactly once"),
                        ("budget", "Attachment budget"), ("survival", "Log survival"),
                        ("runs", "Every run at a glance, 5,000 records")):
        lines += ["", "### %s (`results/%s.md`)" % (title, name), ""]
        lines += _md_digest(os.path.join(folder, name + ".md"))
    return lines


def _machine_line(folder):
    for name in ("overhead", "survival", "isolation", "budget"):
        found = _md_lines(os.path.join(folder, name + ".md"))
        info = [line[2:] for line in found
                if line.startswith(("- machine:", "- date:", "- gpualert.py:"))]
        if info:
            return ("Measured on this project's machine (as `eval.py %s` last recorded it: "
                    "%s). Ratios travel between machines, absolute times do not. Regenerate with "
                    "`python3 eval.py all` (about 20 minutes on 2 cores); every table is in "
                    "`results/`." % (name, "; ".join(info)))
    return "No measurements yet: run `python3 eval.py all`."


def _classify_table(folder):
    ours = _summary_rows(os.path.join(folder, "classify_summary.csv"))
    paper = _summary_rows(os.path.join(folder, "classify_paper-corpus_summary.csv"))
    rows = [["| method | paper's published figure (its corpus) | measured on the paper's corpus "
             "| our corpus (training score) | false alarms on our successes |"],
            ["|---|---|---|---|---|"]]
    for method in ("gpualert", "keyword", "last_exception", "exit_code"):
        mine, theirs = ours.get(method, {}), paper.get(method, {})
        rows.append(["| %s | %s | %s | %s | %s |" % (
            method, PAPER_FIGURES[method], _f1(theirs), _f1(mine),
            mine.get("false_alarm_rate", "-"))])
    lines = [row[0] for row in rows]
    lines += ["", "Our corpus's figure is a training score: its logs and the rules were written together, "
              "so it says that nothing regressed, not how gpualert does on logs nobody tuned it to. "
              "That is what the blind held-out sets measure: logs written from cited public wording "
              "by someone who never saw the rules, each frozen before any fix made while looking at it "
              "(the frozen set's logs are never read; only its aggregate score is kept). "
              "`python3 eval.py blind --corpus DIR --name NAME` scores one before and after: class macro-F1, "
              "and on sets that label them the evidence line (the labelled line or an equally good "
              "alternative) and the failing rank (named by the verdict or its detail), each with a 95% "
              "bootstrap interval; sets written before those labels existed show '-'."]
    lines += _blind_table(folder)
    return lines


def _blind_table(folder):
    rows = []
    for path in sorted(glob.glob(os.path.join(folder, "classify_blind_*.csv"))):
        with open(path) as handle:
            found = list(csv.DictReader(handle))
        by = dict((row["classifier"], row) for row in found)
        if "before" in by and "after" in by:
            b, a = by["before"], by["after"]
            rows.append("| %s | %s (%s) | %s (%s) | %s | %s | %s | %s |" % (
                b["set"], _f1(b), b["commit"], _f1(a), a["commit"], _located(b, a, "line"),
                _located(b, a, "rank"), a["false_alarm_rate"], a["measured"]))
    if not rows:
        return []
    return ["", "| blind set | macro-F1 before | macro-F1 after | evidence line before -> after "
            "| failing rank before -> after | false alarms after | measured |",
            "|---|---|---|---|---|---|---|"] + rows


def _located(before, after, name):
    """'0.8950 [0.85, 0.94] -> 0.9600 [...]' for a set that labels lines or ranks; '-' else
    (sets written before those labels existed, and CSVs written before the columns did)."""
    if not after.get(name + "_acc"):
        return "-"
    return "%s -> %s" % tuple("%s [%s, %s] (%s/%s)" % (r.get(name + "_acc") or "-", r.get(name + "_ci_low"),
                                                        r.get(name + "_ci_high"), r.get(name + "_right"),
                                                        r.get(name + "_n")) for r in (before, after))


def _summary_rows(path):
    try:
        with open(path) as handle:
            return dict((row["method"], row) for row in csv.DictReader(handle))
    except OSError:
        return {}


def _f1(row):
    if not row:
        return "-"
    return "%s [%s, %s]" % (row["macro_f1"], row["ci_low"], row["ci_high"])


def _md_lines(path):
    try:
        with open(path) as handle:
            return handle.read().splitlines()
    except OSError:
        return []


def _md_digest(path):
    """The headline of an experiment: its bold summary lines and its key table (the one under
    a Targets or Compact heading, else the first)."""
    lines, out, in_table = _md_lines(path), [], False
    if not lines:
        return ["(not measured yet)"]
    for line in [line for line in lines if line.startswith("**")][:2]:
        out += [line, ""]  # a paragraph each
    keys = [i for i, line in enumerate(lines) if line.startswith("#") and
            ("Targets" in line or "Compact" in line)]
    for line in lines[keys[0]:] if keys else lines:
        if line.startswith("|"):
            in_table = True
            out.append(line)
        elif in_table:
            break
    return out


# ==== CLI ====

def build_parser():
    import argparse
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="experiment")
    _add_classify_args(sub)
    _add_blind_args(sub)
    add_reliability_commands(sub)
    _add_soak_args(sub)
    _add_all_args(sub)
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

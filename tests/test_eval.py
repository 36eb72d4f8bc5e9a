"""eval.py's survival judge reads the child's output only, never gpualert's own records."""
import collections
import os

from _load import ROOT, load_module

EVAL = load_module(os.path.join(str(ROOT), "eval.py"), "gpualert_eval")
_V = collections.namedtuple("_V", "cls line detail")


def test_survival_judge_never_reads_gpualerts_footer_or_cause():
    log = ("=== gpualert run started (gpualert 0.1.0) ===\ncommand: python x.py segfault r\n"
           "host: n1\nstep 0 loss 1.0000\nSENTINEL-LAST-LINE fault=segfault\n"
           "=== gpualert command ended ===\nend: 2026-12-03T09:00:00+0000\n"
           "signal: SIGSEGV (exit status 139)\n=== gpualert cause ===\nclass: segfault\n"
           "evidence: Segmentation fault\n")
    text = EVAL.child_output(log)
    assert text == "step 0 loss 1.0000\nSENTINEL-LAST-LINE fault=segfault"
    pattern = dict((f[0], f[2]) for f in EVAL.FAULTS)["segfault"]
    assert EVAL.re.search(pattern, log) and not EVAL.re.search(pattern, text)


def test_the_childs_own_fault_report_still_counts():
    log = ("=== gpualert run started (gpualert 0.1.0) ===\ncommand: python x.py\n"
           "Fatal Python error: Segmentation fault\n\nCurrent thread 0x1 (most recent call first):\n"
           "=== gpualert command ended ===\nsignal: SIGSEGV (exit status 139)\n")
    assert "Fatal Python error: Segmentation fault" in EVAL.child_output(log)
    assert "SIGSEGV" not in EVAL.child_output(log)


def _labelled_corpus(folder):
    """Three logs in the blind sets' format, two of them labelling the evidence line and rank."""
    import json
    logs = folder.join("logs")
    logs.ensure(dir=True)
    rank_tb = ("step 1 loss 2.0\n[1]:step 1 loss 2.0\n[3]:Traceback (most recent call last):\n"
               '[3]:  File "/home/ana/proj/train.py", line 61, in main\n'
               "[3]:    batch = data['input_ids']\n[3]:KeyError: 'input_ids'\n")
    oom = ("epoch 0 loss 1.0\nTraceback (most recent call last):\n  File \"train.py\", line 9, in <module>\n"
           "    y = model(x)\ntorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.\n")
    rows = [("k", "logs/k.log", rank_tb, 1, {"evidence_line": 6, "evidence_alts": [3], "rank": 3}),
            ("o", "logs/o.log", oom, 1, {"evidence_line": 2, "evidence_alts": [], "rank": None}),
            ("s", "logs/s.log", "step 1 loss 0.5\ndone\n", 0, {})]
    with open(str(folder.join("labels.jsonl")), "w") as f:
        for ident, path, text, code, extra in rows:
            folder.join(path).write(text)
            row = {"id": ident, "mode": {"k": "traceback", "o": "cuda_oom", "s": "success"}[ident],
                   "log_path": path, "true_exit_code": code}
            row.update(extra)
            f.write(json.dumps(row) + "\n")
    return rows


def test_blind_scores_class_evidence_line_and_rank_before_and_after(tmpdir):
    import csv
    import subprocess
    import sys
    _labelled_corpus(tmpdir)
    results = tmpdir.join("results")
    proc = subprocess.run([sys.executable, os.path.join(str(ROOT), "eval.py"), "blind", "--corpus", str(tmpdir),
                           "--name", "t", "--before", "HEAD", "--results", str(results)],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    assert proc.returncode == 0, proc.stderr.decode()
    out = proc.stdout.decode()
    assert out.count("evidence line ") == 2 and out.count("; rank ") == 2, out
    with open(str(results.join("classify_blind_t.csv"))) as f:
        rows = list(csv.DictReader(f))
    assert [r["classifier"] for r in rows] == ["before", "after"]
    after = rows[1]
    # the OOM's label is its traceback header (line 2) with no alternative, while gpualert shows
    # the exception line (5): 1 of the 2 labelled lines is right; the one labelled rank is named.
    assert (after["line_right"], after["line_n"], after["rank_right"], after["rank_n"]) == ("1", "2", "1", "1"), after
    assert (after["line_acc"], after["rank_acc"]) == ("0.5000", "1.0000") and after["line_ci_low"]
    table = "\n".join(EVAL._blind_table(str(results)))
    assert "evidence line before -> after" in table and "(1/1)" in table


def test_a_set_without_line_or_rank_labels_reports_class_only(tmpdir):
    rows = [{"mode": "success"}, {"mode": "cuda_oom"}]
    verdicts = [_V(None, None, ""), _V("cuda_oom", 5, "rank 2: x")]
    scores = EVAL.locate_scores(rows, verdicts)
    assert scores["line"]["n"] == 0 and scores["rank"]["n"] == 0 and scores["line"]["share"] is None
    assert EVAL._share_text(EVAL._locate_cells(scores)[:5]) == "not labelled"


def test_line_and_rank_judges():
    v = _V("nccl", 12, "rank 3: NCCL error; the launcher names rank 1 as the first failure")
    assert EVAL.line_right({"evidence_line": 12}, v) is True
    assert EVAL.line_right({"evidence_line": 11, "evidence_alts": [12]}, v) is True
    assert EVAL.line_right({"evidence_line": 13, "evidence_alts": []}, v) is False
    assert EVAL.rank_right({"rank": 3}, v) is True
    assert EVAL.rank_right({"rank": 1}, v) is True  # named in the detail: the launcher's first failure
    assert EVAL.rank_right({"rank": 2}, v) is False
    assert EVAL.rank_right({"rank": 13}, v) is False  # "rank 1" and "rank 3" are not rank 13
    assert EVAL.rank_right({"rank": None}, v) is None


def test_bootstrap_share_is_deterministic_and_brackets_the_share():
    hits = [True] * 18 + [False] * 2
    lo, hi = EVAL.bootstrap_share(hits)
    assert (lo, hi) == EVAL.bootstrap_share(hits) and lo <= 0.9 <= hi and hi <= 1.0
    assert EVAL.bootstrap_share([True] * 5) == (1.0, 1.0)

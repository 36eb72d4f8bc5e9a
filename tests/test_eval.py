"""eval.py: its judges (the survival judge reads the child's output only, never gpualert's own
records; evidence line and rank) and its statistics, checked against hand-worked figures."""
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


# ---- the statistics (issue 19): hand-worked figures ----

# a: 1 right, 1 missed, 1 false alarm on a success -> P 0.5, R 0.5, F1 0.5
# b: 2 right, 1 false (an a called b)              -> P 2/3, R 1,  F1 0.8
_TRUTH = ["a", "a", "b", "b", "success"]
_PRED = ["a", "b", "b", "b", "a"]


def test_per_class_scores_and_macro_f1_by_hand():
    scores = EVAL.per_class_scores(_TRUTH, _PRED, ["a", "b"])
    assert scores["a"] == (0.5, 0.5, 0.5, 2)
    assert [round(v, 6) for v in scores["b"]] == [round(2 / 3.0, 6), 1.0, 0.8, 2]
    assert abs(EVAL.macro_f1(_TRUTH, _PRED) - 0.65) < 1e-12  # successes are not a class
    assert abs(EVAL.macro_f1(_TRUTH, _PRED, ["a", "b", "c"]) - 0.65) < 1e-12  # c is not in truth
    assert EVAL.macro_f1(["success"], ["a"]) == 0.0  # no failure class to average
    assert abs(EVAL.micro_f1(_TRUTH, _PRED) - 6 / 9.0) < 1e-12  # tp 3, fp 2, fn 1
    assert EVAL.false_alarm_rate(_TRUTH, _PRED) == (1.0, 1)


def test_the_bootstraps_one_pass_macro_f1_is_macro_f1():
    import random
    rng = random.Random(7)
    labels = ["a", "b", "c", "success"]
    for _ in range(200):
        truth = [rng.choice(labels) for _ in range(rng.randrange(1, 30))]
        pred = [rng.choice(labels) for _ in truth]
        assert abs(EVAL._macro_from_pairs(list(zip(truth, pred))) - EVAL.macro_f1(truth, pred)) < 1e-12


def test_bootstrap_macro_f1_is_the_percentile_interval_of_resampled_macro_f1():
    import random
    truth, pred = _TRUTH * 8, _PRED * 8
    lo, hi = EVAL.bootstrap_macro_f1(truth, pred, resamples=200, seed=3)
    rng, n, values = random.Random(3), len(truth), []
    for _ in range(200):  # the same resamples, scored with the plain macro_f1
        idx = [rng.randrange(n) for _ in range(n)]
        values.append(EVAL.macro_f1([truth[i] for i in idx], [pred[i] for i in idx]))
    values.sort()
    want = (values[int(0.025 * 199)], values[int(0.975 * 199)])
    assert abs(lo - want[0]) < 1e-12 and abs(hi - want[1]) < 1e-12  # sums in another order
    assert lo <= EVAL.macro_f1(truth, pred) <= hi and lo < hi
    assert EVAL.bootstrap_macro_f1(truth, pred) == EVAL.bootstrap_macro_f1(truth, pred)  # seeded
    assert EVAL.bootstrap_macro_f1(truth, truth) == (1.0, 1.0)


def test_mcnemar_exact_by_hand():
    right, wrong = ["x"] * 12, ["y"] * 12
    assert EVAL.mcnemar_exact(["x"] * 4, ["x"] * 4, ["x"] * 4) == (0, 0, 1.0)  # no discordant pair
    b, c, p = EVAL.mcnemar_exact(["x"] * 5, right[:5], wrong[:5])
    assert (b, c) == (5, 0) and abs(p - 2 / 32.0) < 1e-12
    # b 10, c 2: two-sided p = 2 * (C(12,0) + C(12,1) + C(12,2)) / 2**12 = 158/4096
    b, c, p = EVAL.mcnemar_exact(["x"] * 12, right[:10] + wrong[:2], wrong[:10] + right[:2])
    assert (b, c) == (10, 2) and abs(p - 158 / 4096.0) < 1e-12
    assert EVAL.mcnemar_exact(["x"] * 6, right[:3] + wrong[:3], wrong[:3] + right[:3])[2] == 1.0


def test_wilson_interval_by_hand():
    lo, hi = EVAL.wilson(5, 10)
    assert abs(lo - 0.2366) < 1e-4 and abs(hi - 0.7634) < 1e-4
    lo, hi = EVAL.wilson(0, 10)
    assert lo == 0.0 and abs(hi - 0.2775) < 1e-4
    assert all(v != v for v in EVAL.wilson(0, 0))  # nan: no trials, no interval


def test_fisher_exact_by_hand():
    # [[5, 0], [0, 5]]: only the two extreme tables are as unlikely, each 1/C(10,5) = 1/252
    assert abs(EVAL.fisher_exact(5, 0, 0, 5) - 2 / 252.0) < 1e-12
    # Fisher's tea tasting, [[3, 1], [1, 3]]: (1 + 16 + 16 + 1) / 70 = 34/70
    assert abs(EVAL.fisher_exact(3, 1, 1, 3) - 34 / 70.0) < 1e-12
    # the same table read by columns or with the rows swapped gives the same p
    p = EVAL.fisher_exact(1, 9, 11, 3)
    assert abs(p - EVAL.fisher_exact(11, 3, 1, 9)) < 1e-12 and abs(p - EVAL.fisher_exact(1, 11, 9, 3)) < 1e-12
    assert 0.0027 < p < 0.0028  # 0.002759, the textbook figure
    assert EVAL.fisher_exact(0, 0, 0, 0) == 1.0 and EVAL.fisher_exact(4, 0, 4, 0) == 1.0  # nothing to tell


def test_wilson_interval_at_the_edges():
    lo, hi = EVAL.wilson(10, 10)
    assert abs(hi - 1.0) < 1e-12 and abs(lo - 0.7225) < 1e-4  # the mirror of wilson(0, 10)
    lo, hi = EVAL.wilson(1, 1)
    assert abs(hi - 1.0) < 1e-12 and 0.0 < lo < 1.0


def test_bootstrap_intervals_hold_the_estimate_and_repeat_with_their_seed():
    hits = [True] * 14 + [False] * 6
    truth, pred = _TRUTH * 6, _PRED * 6
    point = EVAL.macro_f1(truth, pred)
    for seed in (1, 2, 3, EVAL.SEED):
        lo, hi = EVAL.bootstrap_share(hits, resamples=300, seed=seed)
        assert 0.0 <= lo <= 0.7 <= hi <= 1.0 and lo < hi
        assert (lo, hi) == EVAL.bootstrap_share(hits, resamples=300, seed=seed)
        lo, hi = EVAL.bootstrap_macro_f1(truth, pred, resamples=300, seed=seed)
        assert 0.0 <= lo <= point <= hi <= 1.0 and lo < hi
        assert (lo, hi) == EVAL.bootstrap_macro_f1(truth, pred, resamples=300, seed=seed)


def test_bootstrap_intervals_of_degenerate_inputs():
    assert EVAL.bootstrap_share([]) == (0.0, 0.0)
    assert EVAL.bootstrap_share([False] * 4) == (0.0, 0.0)
    assert EVAL.bootstrap_share([True]) == (1.0, 1.0)
    assert EVAL.bootstrap_macro_f1([], []) == (0.0, 0.0)  # no items: no class to average
    assert EVAL.bootstrap_macro_f1(["success"] * 5, ["success"] * 5) == (0.0, 0.0)  # successes only
    assert EVAL.bootstrap_macro_f1(["a"], ["a"]) == (1.0, 1.0)
    assert EVAL.bootstrap_macro_f1(["a"], ["b"]) == (0.0, 0.0)


def test_overhead_targets_say_not_measured_without_the_reference():
    """No figure is made up when the reference is absent: its targets read "not measured"."""
    side = {"ref": None, "note": "reference: not installed (pip: no network)"}
    rows = EVAL._reference_targets(side)
    assert len(rows) == 4 and all(r[2].startswith("not measured") and r[3] == "-" for r in rows)


def _runs(wall_s, maxrss_kib, rounds=3):
    return [{"wall": wall_s, "maxrss_kib": maxrss_kib, "status": 0}] * rounds


def test_the_compile_floor_line_says_what_it_leaves_under_the_reference():
    launch = {"python3 -c pass": _runs(0.040, 13000), "compile gpualert.py": _runs(0.180, 56000),
              "import gpualert (cached .pyc)": _runs(0.060, 16000),
              "gpualert.py -- true (file)": _runs(0.240, 54000)}
    alone = EVAL._floor_line({"launch": launch})
    assert "180 ms and 54.7 MiB" in alone and "60 ms" in alone and "reference" not in alone
    launch["reference: gpualert run -- true"] = _runs(0.240, 38400)
    line = EVAL._floor_line({"launch": launch})
    assert "75% of its time" in line and "under 60 ms" in line
    assert "cannot meet the peak-memory target" in line
    launch["reference: gpualert run -- true"] = _runs(0.150, 60000)
    line = EVAL._floor_line({"launch": launch})
    assert "not at all at this size" in line and "3.9 MiB under the reference's peak" in line


def test_all_with_no_skips_fails_when_an_experiment_went_without_its_tools(monkeypatch, capsys, tmp_path):
    # CI's `eval.py all --quick` ran with a Python without aiosmtpd: every chat-channel cell
    # said "skipped: aiosmtpd absent", and the run passed.
    import argparse
    import sys

    def experiment(args):  # each experiment, as far as its tools go: it asks for aiosmtpd
        EVAL.have_aiosmtpd()
        return 0
    for name in ("cmd_classify", "cmd_blind", "cmd_survival", "cmd_overhead", "cmd_isolation",
                 "cmd_budget", "cmd_metrics", "cmd_exitpath", "cmd_runs"):
        monkeypatch.setattr(EVAL, name, experiment)
    monkeypatch.setattr(EVAL, "MISSING", set())
    monkeypatch.setitem(sys.modules, "aiosmtpd.controller", None)  # importing it fails
    args = argparse.Namespace(quick=True, results=str(tmp_path), no_skips=False)
    assert EVAL.cmd_all(args) == 0  # without the flag, skipping is a result like any other
    args.no_skips = True
    assert EVAL.cmd_all(args) == 1
    assert "all: failed (--no-skips): skipped for want of aiosmtpd" in capsys.readouterr().out

"""eval.py's survival judge reads the child's output only, never gpualert's own records."""
import os

from _load import ROOT, load_module

EVAL = load_module(os.path.join(str(ROOT), "eval.py"), "gpualert_eval")


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

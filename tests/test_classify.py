"""Tests of the failure classifier (parts/classify.py, later the Rules section of gpualert.py)."""
import io
import json
import os
import pathlib
import random
import re
import sys
import tempfile
import time
import unittest
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _load import load_gpualert  # noqa: E402

ga = load_gpualert()
FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"
TB = "Traceback (most recent call last):"


def tb(exc, *extra, prefix=""):
    lines = [TB, '  File "/home/u/train.py", line 41, in <module>', "    main()",
             '  File "/home/u/train.py", line 30, in main', "    step(batch)", exc] + list(extra)
    return "\n".join(prefix + l for l in lines)


def training(n=50, prefix=""):
    return "\n".join("%sepoch 0 step %d loss=%.3f lr=1e-4" % (prefix, i, 3.0 - i * 0.01) for i in range(n))


def classify(text, **facts):
    facts.setdefault("exit_code", 1)
    return ga.classify_text(text, facts)


class Namespace(object):
    def __init__(self, **kw):
        self.__dict__.update(kw)


class TestRuleTable(unittest.TestCase):
    def test_every_rule_has_a_fixture_and_every_fixture_a_rule(self):
        ids = [r.rule_id for r in ga.compiled_rules()]
        files = sorted(p.stem for p in FIXTURES.glob("*.log"))
        self.assertEqual(sorted(ids), files)

    def test_each_fixture_classifies_as_its_rule(self):
        for path in sorted(FIXTURES.glob("*.log")):
            with self.subTest(rule=path.stem):
                code = 0 if path.stem in ga.CLEAN_EXIT_RULES else 1
                c = ga.classify_log(str(path), {"exit_code": code})
                self.assertEqual(c.rule, path.stem, c)
                rule = [r for r in ga.compiled_rules() if r.rule_id == path.stem][0]
                self.assertEqual(c.cls, rule.cls)
                self.assertIsInstance(c.line, int)
                self.assertTrue(c.evidence and c.detail and c.remediation)
                self.assertLessEqual(len(c.evidence), 300)

    def test_classes_are_the_interface(self):
        self.assertEqual(len(ga.CLASS_IDS), 23)
        self.assertTrue(set(r.cls for r in ga.compiled_rules()) <= set(ga.CLASS_IDS))

    def test_compile_rules_rejects_bad_rows(self):
        good = ("x_rule", "nccl", r"NCCL", "", "hint")
        ga.compile_rules((good,))
        bad_rows = [  # each with the words of the error it must raise
            ((good, good), "duplicate or malformed rule id 'x_rule'"),
            ((("Bad-Id", "nccl", r"x", "", "h"),), "malformed rule id 'Bad-Id'"),
            ((("x_rule", "no_such_class", r"x", "", "h"),), "bad class 'no_such_class'"),
            ((("x_rule", "nccl", r"(", "", "h"),), "missing \\)"),   # re.error names it
            ((("x_rule", "nccl", r"x?", "", "h"),), "catch-all"),
            ((("x_rule", "nccl", r"x", "{nope}", "h"),), "unknown group 'nope'"),
            ((("x_rule", "nccl", r"x", "", ""),), "empty hint"),
        ]
        for rows, words in bad_rows:
            with self.subTest(rows=rows):
                with self.assertRaisesRegex((ValueError, re.error), words):
                    ga.compile_rules(rows)


    def test_rule_words_are_in_every_match_of_the_corpus(self):
        # A rule is skipped on a text without its recorded trigger words: every match of
        # every rule in the labelled logs must contain one of them, lower-cased.
        rules = ga.compiled_rules()
        corpus = pathlib.Path(__file__).resolve().parent.parent / "corpus" / "logs"
        matched, missed = set(), []
        # a half, in seconds, chosen by name: new corpus logs leave the others' choice as it is
        for path in [p for p in sorted(corpus.glob("*.log")) if zlib.crc32(p.name.encode()) % 2 == 0]:
            lines = path.read_text(errors="replace").split("\n")  # only lines the classifier searches
            text = "\n".join(l for l in lines if any(w in l.lower() for w in ga.TRIGGER_WORDS))
            for rule in rules:
                words = ga._RULE_WORDS[rule.regex]
                for m in rule.regex.finditer(text):
                    matched.add(rule.rule_id)
                    if not any(w in m.group(0).lower() for w in words):
                        missed.append((path.name, rule.rule_id, m.group(0)))
        self.assertEqual(missed, [])
        self.assertGreater(len(matched), 55, sorted(matched))  # the check saw most of the table

    def test_rule_words_prefer_rare_words(self):
        # "inf" is in every INFO line: a branch triggered by a rarer word records that one
        ga.compile_rules((("x_moab", "walltime", r"MOAB_INFO: +job exceeded wallclock limit", "", "h"),))
        self.assertEqual(ga._RULE_WORDS[re.compile(r"MOAB_INFO: +job exceeded wallclock limit", re.M)],
                         frozenset(["wallclock"]))
        ga.compile_rules((("x_nan", "nan_loss", r"loss (?:nan|inf)", "", "h"),))
        self.assertEqual(ga._RULE_WORDS[re.compile(r"loss (?:nan|inf)", re.M)], frozenset(["nan", "inf"]))

    def test_info_lines_skip_rules_but_a_cause_is_still_found(self):
        info = "\n".join("INFO step %d done: tokens/s 51234.5, shard 77 saved" % i for i in range(300))
        self.assertEqual(classify(info, exit_code=1).cls, "unknown")
        slurm = "slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***"
        self.assertEqual(classify(slurm + "\n" + info, exit_code=1).cls, "walltime")
        self.assertEqual(classify(info + "\n" + tb("torch.OutOfMemoryError: CUDA out of memory."),
                                  exit_code=1).cls, "cuda_oom")


class TestFacts(unittest.TestCase):
    def test_exec_error(self):
        c = ga.classify_text("", {"exit_code": None, "exec_error": "No such file or directory: 'pyhton'"})
        self.assertEqual((c.cls, c.rule), ("exec_failure", "exec_error"))

    def test_wrapper_timeout_and_scheduler(self):
        self.assertEqual(classify(tb("ValueError: x"), exit_code=-15, timed_out=True).cls, "walltime")
        self.assertEqual(classify("", exit_code=-15, scheduler_reason="preempted").cls, "preempted")
        self.assertEqual(classify("", exit_code=-15, scheduler_reason="walltime").cls, "walltime")
        self.assertEqual(classify("", exit_code=-15, scheduler_reason="cancelled").cls, "interrupted")

    def test_received_signal_is_interrupted_unless_scheduler_says_more(self):
        c = classify(tb("KeyError: 'a'"), exit_code=-2, received_signals=["SIGINT"])
        self.assertEqual(c.cls, "interrupted")
        log = "slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2024-01-01T00:00:00 DUE TO TIME LIMIT ***"
        self.assertEqual(classify(log, exit_code=-15, received_signals=["SIGTERM"]).cls, "walltime")

    def test_signals(self):
        self.assertEqual(classify("", exit_code=-11).cls, "segfault")
        for code in (-6, -7, -4):
            self.assertEqual(classify("", exit_code=code).cls, "native_abort")
        self.assertEqual(classify("", exit_code=139).cls, "segfault")  # a shell's 128+11
        self.assertEqual(classify("", exit_code=-15).cls, "interrupted")

    def test_abort_with_a_specific_cause_keeps_it(self):
        log = "terminate called after throwing an instance of 'std::bad_alloc'\n  what():  std::bad_alloc"
        self.assertEqual(classify(log, exit_code=-6).cls, "ram_oom")
        log = ("terminate called after throwing an instance of 'c10::Error'\n"
               "  what():  CUDA error: an illegal memory access was encountered")
        self.assertEqual(classify(log, exit_code=-6).cls, "cuda_runtime")

    def test_signal_beats_an_unrelated_python_error(self):
        log = tb("FileNotFoundError: [Errno 2] No such file or directory: 'x'") + "\n" + training(5)
        self.assertEqual(classify(log, exit_code=-11).cls, "segfault")

    def test_sigkill_policy(self):
        self.assertEqual(classify("", exit_code=-9, oom_kill_delta=2).rule, "cgroup_oom_kill")
        self.assertEqual(classify("", exit_code=-9, oom_kill_delta=0).cls, "unknown")
        self.assertEqual(classify("", exit_code=-9).rule, "sigkill_assumed_oom")
        self.assertEqual(classify("", exit_code=137).cls, "oom_killer")
        killed = training(3) + "\nKilled"
        self.assertEqual(classify(killed, exit_code=-9).rule, "shell_killed")
        self.assertEqual(classify(killed, exit_code=137, oom_kill_delta=0).cls, "unknown")
        self.assertEqual(classify(tb("ValueError: bad"), exit_code=1, oom_kill_delta=1).cls, "oom_killer")

    def test_ecc_counter(self):
        c = classify(tb("RuntimeError: CUDA error: unknown error"), ecc_delta=1)
        self.assertEqual((c.cls, c.rule), ("gpu_hardware", "ecc_counter"))

    def test_success(self):
        self.assertIsNone(classify(training(), exit_code=0).cls)
        self.assertIsNone(classify(tb("ValueError: caught and logged") + "\n" + training(), exit_code=0).cls)
        self.assertIsNone(classify("", exit_code=None).cls)

    def test_success_with_final_nan_is_nan_loss(self):
        log = training(20) + "\nepoch 0 step 20 loss=nan lr=1e-4\nepoch 0 step 21 loss=nan lr=1e-4\nDone."
        self.assertEqual(classify(log, exit_code=0).cls, "nan_loss")

    def test_nan_blip_that_recovered_is_not_nan_loss(self):
        log = training(20) + "\nepoch 0 step 20 loss=nan lr=1e-4\n" + training(20)
        self.assertIsNone(classify(log, exit_code=0).cls)
        self.assertEqual(classify(log + "\n" + tb("KeyError: 'x'"), exit_code=1).cls, "traceback")

    def test_failure_without_evidence_is_unknown(self):
        c = classify(training(), exit_code=3)
        self.assertEqual((c.cls, c.rule), ("unknown", "exit_code"))

    def test_line_numbers_follow_total_lines(self):
        text = training(10) + "\n" + tb("ZeroDivisionError: division by zero") + "\n"
        c = ga.classify_text(text, {"exit_code": 1, "total_lines": 1000})
        self.assertEqual(c.line, 1000)
        self.assertEqual(ga.classify_text(text, {"exit_code": 1}).line, 16)

    def test_odd_fact_values_do_not_raise(self):
        odd = {"exit_code": 1, "oom_kill_delta": None, "ecc_delta": "3", "received_signals": "SIGINT",
               "total_lines": "many", "noted_lines": None, "scheduler_reason": 7}
        c = ga.classify_text(tb("KeyError: 'x'"), odd)
        self.assertEqual(c.cls, "traceback")
        self.assertNotIn("classifier error", c.detail)

    def test_noted_lines_outside_the_window(self):
        facts = {"exit_code": 1, "noted_lines": [(12, "torch.OutOfMemoryError: CUDA out of memory. Tried to"
                                                      " allocate 2.00 GiB")]}
        c = ga.classify_text(training(10), facts, first_line=5000)
        self.assertEqual((c.cls, c.line), ("cuda_oom", 12))


class TestDecisiveRegion(unittest.TestCase):
    def test_healthy_nccl_info_and_warn_do_not_fire(self):
        log = ("n1:1:1 [0] NCCL INFO Bootstrap : Using ib0\nn1:1:2 [0] NCCL WARN NET/IB : No device found.\n"
               "n1:1:2 [0] NCCL INFO comm 0x1 rank 0 nranks 2 - Init COMPLETE\n" + training() + "\n"
               + tb("ValueError: bad config"))
        c = classify(log)
        self.assertEqual((c.cls, c.detail), ("traceback", "ValueError: bad config"))

    def test_warnings_do_not_fire(self):
        log = ("/x/y.py:1: UserWarning: CUDA out of memory while probing; retrying with a smaller chunk\n"
               "  warnings.warn(\n/x/z.py:2: FutureWarning: No module named 'apex' is deprecated\n"
               "[W ProcessGroupNCCL.cpp:1168] Warning: process group has NOT been destroyed\n" + training())
        self.assertEqual(classify(log, exit_code=2).cls, "unknown")

    def test_tqdm_and_ansi(self):
        bar = "\r".join("\x1b[32m%d%%|###| %d/10\x1b[0m" % (k * 10, k) for k in range(11))
        log = bar + "\n" + tb("\x1b[31mtorch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00"
                              " MiB\x1b[0m")
        c = classify(log)
        self.assertEqual((c.cls, c.detail), ("cuda_oom", "tried to allocate 20.00 MiB"))
        self.assertNotIn("\x1b", c.evidence)

    def test_metric_names_are_not_errors(self):
        log = training() + "\n[eval] val_error=0.12 top1_err=0.3 error_rate=0.1\nTraining failed to converge"
        self.assertEqual(classify(log, exit_code=1).cls, "unknown")

    def test_exception_caught_early_and_a_different_one_later(self):
        early = tb("FileNotFoundError: [Errno 2] No such file or directory: 'wandb/settings'")
        log = early + "\ncontinuing without wandb\n" + training(200) + "\n" + tb("ZeroDivisionError:"
                                                                                 " division by zero")
        self.assertEqual(classify(log).cls, "div_zero")

    def test_summaries_after_the_fatal_traceback_do_not_hide_it(self):
        wandb = ("wandb: Waiting for W&B process to finish... (failed 1).\nwandb: Run history:\n"
                 "wandb: train/loss \u2587\u2585\u2583\u2582\u2581\nwandb: Run summary:\nwandb: train/loss 0.2345\n"
                 "wandb:   val/loss 0.3012\nwandb: Synced 5 W&B file(s)")
        epilogue = "\n".join("  %-20s: value %d" % ("Field%d" % i, i) for i in range(200))
        log = training() + "\n" + tb("ZeroDivisionError: division by zero") + "\n" + wandb + "\n" + epilogue
        self.assertEqual(classify(log).cls, "div_zero")

    def test_handled_warning_traceback_is_ignored(self):
        log = ("WARNING: failed to load optional plugin 'apex':\n" + tb("ModuleNotFoundError: No module"
                                                                        " named 'apex'")
               + "\n" + training(5) + "\n" + tb("AssertionError: shapes differ"))
        self.assertEqual(classify(log).cls, "assertion")

    def test_nccl_warn_just_before_a_fatal_traceback_still_counts(self):
        log = (training(5, "[rank1]:") + "\n[rank1]: n1:1:2 [0] misc/socket.cc:484 NCCL WARN socketStartConnect: "
               "Connect to 10.0.0.2<4312> failed : Software caused connection abort\n"
               + tb("torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, unhandled "
                    "system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5", prefix="[rank1]:"))
        c = classify(log)
        self.assertEqual((c.cls, c.rule), ("nccl", "nccl_error"))

    def test_rank_prefixes(self):
        for prefix in ("[rank3]:", "3: ", "[default3]:"):
            with self.subTest(prefix=prefix):
                log = training(5, prefix) + "\n" + tb("ZeroDivisionError: float division by zero",
                                                        prefix=prefix)
                c = classify(log)
                self.assertEqual(c.cls, "div_zero")
                self.assertTrue(c.evidence.startswith(prefix))

    def test_child_failed_summary_is_not_the_cause(self):
        text = (FIXTURES / "device_mismatch.log").read_text()
        c = classify(text)
        self.assertEqual(c.cls, "device_mismatch")
        generic = text.replace("RuntimeError: Expected all tensors to be on the same device, but found at"
                               " least two "
                               "devices, cuda:0 and cpu!", "ValueError: bad label 7")
        c = classify(generic)
        self.assertEqual((c.cls, c.detail), ("traceback", "rank 0: ValueError: bad label 7"))  # the launcher names rank 0
        self.assertIn("[rank0]:", c.evidence)

    def test_terminate_called_with_cuda_error(self):
        log = (training() + "\nterminate called after throwing an instance of 'c10::Error'\n"
               "  what():  CUDA error: an illegal memory access was encountered\n"
               "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43")
        c = classify(log, exit_code=-6)
        self.assertEqual((c.cls, c.detail), ("cuda_runtime", "CUDA error: an illegal memory access was"
                                                             " encountered"))

    def test_scheduler_epilogue_after_a_traceback(self):
        log = (tb("RuntimeError: NCCL communicator was aborted on rank 1.")
               + "\nslurmstepd: error: *** JOB 9 ON n1 CANCELLED AT 2024-01-01T00:00:00 "
                 "DUE TO TIME LIMIT ***")
        self.assertEqual(classify(log, exit_code=-15).cls, "walltime")
        log = log.replace("TIME LIMIT", "PREEMPTION")
        self.assertEqual(classify(log, exit_code=-15).cls, "preempted")

    def test_chained_exception_root_cause(self):
        log = (tb("FileNotFoundError: [Errno 2] No such file or directory: 'ckpt.pt'")
               + "\n\nThe above exception was the direct cause of the following exception:\n\n"
               + tb("RuntimeError: failed to resume"))
        self.assertEqual(classify(log).cls, "file_not_found")
        log = (tb("KeyError: 'lr'") + "\n\nDuring handling of the above exception, another exception"
                                      " occurred:\n\n"
               + tb("RuntimeError: bad optimizer config"))
        c = classify(log)
        self.assertEqual((c.cls, c.detail), ("traceback", "KeyError: 'lr'"))

    def test_multi_rank_root_cause_beats_consequences(self):
        log = (training(20) + "\n" + tb("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.00"
                                        " GiB",
                                         prefix="[rank1]:")
               + "\n[rank0]:[E ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation"
                 " timeout: "
                 "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for"
                 " 600123 "
                 "milliseconds before timing out.\n"
               + tb("torch.distributed.DistBackendError: watchdog", prefix="[rank0]:"))
        self.assertEqual(classify(log).cls, "cuda_oom")

    def test_nccl_watchdog_detail(self):
        c = ga.classify_log(str(FIXTURES / "nccl_watchdog.log"), {"exit_code": 1})
        self.assertEqual(c.detail, "rank 2: watchdog timeout, ALLREDUCE, 600000 ms (10 min); the launcher names "
                                   "rank 0 as the first failure (exitcode : -6 (pid: 44110))")

    def test_exception_ignored_at_shutdown(self):
        log = (tb("ZeroDivisionError: division by zero") + "\nException ignored in: <function"
                                                           " _MultiProcessingDataLoaderIter.__del__>\n"
               + tb("RuntimeError: DataLoader worker (pid 7) is killed by signal: Killed."))
        self.assertEqual(classify(log).cls, "div_zero")


class TestNoiseAroundTheCause(unittest.TestCase):
    """Generalisation fixes found by an independent held-out test (one test per fix)."""

    def test_warning_line_right_above_the_fatal_traceback_does_not_hide_it(self):
        warns = ("[2024-05-12 11:00:00,000] [WARNING] [stage3.py:1991:step] 4 pytorch allocator cache flushes"
                 " since last step. this happens when there is high memory pressure and is detrimental to"
                 " performance.",
                 "05/12/2024 10:11:20 - WARNING - __main__ - eval dataset is empty, skipping evaluation",
                 "WARNING:root:Gradient checkpointing is enabled; use_cache set to False")
        for warn in warns:
            with self.subTest(warn=warn[:30]):
                log = training() + "\n" + warn + "\n" + tb("torch.OutOfMemoryError: CUDA out of memory. Tried"
                                                            " to allocate 2.00 GiB")
                self.assertEqual(classify(log).cls, "cuda_oom")
                log = training() + "\n" + warn + "\n" + tb("KeyError: 'input_ids'")
                self.assertEqual(classify(log).detail, "KeyError: 'input_ids'")

    def test_warning_that_introduces_the_last_traceback_still_counts(self):
        log = training() + "\nWARNING: failed to load optional plugin 'apex':\n" + tb(
            "ModuleNotFoundError: No module named 'apex'")
        self.assertEqual(classify(log).cls, "missing_module")
        log += ("\nException ignored in: <function _MultiProcessingDataLoaderIter.__del__>\n"
                + tb("KeyboardInterrupt: "))
        self.assertEqual(classify(log).cls, "missing_module")

    def test_timestamp_and_launcher_prefixes(self):
        stamps = {"iso": lambda i: "2024-05-12T11:00:%02d.123Z " % (i % 60),
                  "kubectl": lambda i: "2024-05-12T11:00:%02d.123456789Z " % (i % 60),
                  "asctime": lambda i: "2024-05-12 11:00:%02d,123 INFO " % (i % 60),
                  "sagemaker": lambda i: "[1,mpirank:0,algo-1]<stderr>:",
                  "ts+rank": lambda i: "2024-05-12T11:00:%02dZ [rank1]:" % (i % 60)}
        for name, stamp in stamps.items():
            for exc, cls in (("AssertionError: seq_len 4096 exceeds block size", "assertion"),
                             ("RuntimeError: mat1 and mat2 shapes cannot be multiplied", "runtime_error")):
                with self.subTest(prefix=name, cls=cls):
                    text = training(20) + "\n" + tb(exc)
                    log = "\n".join(stamp(i) + l for i, l in enumerate(text.split("\n")))
                    c = classify(log)
                    self.assertEqual(c.cls, cls)
                    self.assertTrue(c.evidence.startswith(stamp(c.line - 1)), c.evidence)

    def test_warning_level_in_a_timestamp_prefix_stays_noise(self):
        log = training() + "\n2024-05-12 11:00:01,123 WARNING CUDA out of memory while probing; retrying"
        self.assertEqual(classify(log, exit_code=2).cls, "unknown")

    def watchdog_dump(self, ranks, frames, text_lines=1):
        out = []
        for r in range(ranks):
            out += ["[rank%d]:[E512 11:20:01.0 ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog caught collective"
                    " operation timeout: WorkNCCL(SeqNum=17, OpType=ALLREDUCE, NumelIn=1, NumelOut=1,"
                    " Timeout(ms)=600000) ran for 600017 milliseconds before timing out." % (r, r)]
            out += ["[rank%d]:[E512 11:20:01.0 ProcessGroupNCCL.cpp:621] [Rank %d] Some NCCL operations have"
                    " failed or timed out." % (r, r)] * (text_lines - 1)
            out += ["terminate called after throwing an instance of 'c10::DistBackendError'",
                    "  what():  [PG 0 Rank %d] Process group watchdog thread terminated with exception" % r,
                    "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/"
                    "ProcessGroupNCCL.cpp:609 (most recent call first):"]
            out += ["frame #%d: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x7f307b2ba313 in "
                    "/opt/conda/lib/python3.10/site-packages/torch/lib/libtorch_cuda.so)" % j for j in range(frames)]
        return "\n".join(out)

    def test_root_cause_survives_a_large_multi_rank_watchdog_dump(self):
        oom = tb("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", prefix="[rank3]:")
        for ranks, frames, text_lines in ((64, 12, 1), (128, 4, 4)):
            with self.subTest(ranks=ranks, text_lines=text_lines):
                log = training(300) + "\n" + oom + "\n" + self.watchdog_dump(ranks, frames, text_lines)
                self.assertEqual(classify(log).cls, "cuda_oom")
        self.assertEqual(classify(training(300) + "\n" + self.watchdog_dump(64, 12)).cls, "nccl")

    def test_other_ranks_progress_does_not_hide_a_ranks_traceback(self):
        oom = tb("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", prefix="[rank1]:")
        log = training(50, "[rank0]:") + "\n" + oom + "\n" + training(8, "[rank0]:")
        self.assertEqual(classify(log).cls, "cuda_oom")
        handled = tb("FileNotFoundError: [Errno 2] No such file or directory: 'x'", prefix="[rank1]:")
        log = training(50, "[rank1]:") + "\n" + handled + "\n" + training(8, "[rank1]:")
        self.assertEqual(classify(log).cls, "unknown")  # the same rank went on: handled

    def test_command_could_not_be_started(self):
        for line in ("/usr/bin/env: 'python': No such file or directory",
                     "/usr/bin/env: \u2018python\u2019: No such file or directory",
                     "env: python3.11: No such file or directory",
                     "torchrun: command not found"):
            with self.subTest(line=line):
                c = classify("Start: now\n" + line, exit_code=127)
                self.assertEqual((c.cls, c.rule), ("exec_failure", "cmd_not_found"))
        for code in (126, 127):
            self.assertEqual(classify("Start: now", exit_code=code).rule, "exec_exit_code")
        c = classify("[gpualert] could not start the command: [Errno 2] No such file or directory: 'pyhton'",
                     exit_code=127)
        self.assertEqual((c.cls, c.rule), ("exec_failure", "exec_exit_code"))
        c = classify(tb("FileNotFoundError: [Errno 2] No such file or directory: 'x'"), exit_code=127)
        self.assertEqual(c.cls, "file_not_found")  # a Python traceback: the command did start
        self.assertEqual(classify("Start: now", exit_code=3).cls, "unknown")

    def test_memory_limit_kill_beats_the_bare_cancel_line(self):
        log = (training() + "\nslurmstepd: error: Job 123 exceeded memory limit (257431552 > 251658240), being"
               " killed\nslurmstepd: error: *** JOB 123 ON n1 CANCELLED AT 2024-05-12T11:22:00 ***")
        for code in (-9, -15, 137):
            c = classify(log, exit_code=code)
            self.assertEqual((c.cls, c.rule), ("oom_killer", "sched_mem_limit"))
        log = log.replace("Job 123 exceeded", "StepId=123.0 exceeded")
        self.assertEqual(classify(log, exit_code=-9).cls, "oom_killer")
        plain = training() + "\nslurmstepd: error: *** JOB 123 ON n1 CANCELLED AT 2024-05-12T11:22:00 ***"
        self.assertEqual(classify(plain, exit_code=-15).rule, "slurm_cancelled")

    def test_memory_error_subclasses(self):
        c = classify(tb("pyarrow.lib.ArrowMemoryError: malloc of size 8589934592 failed"))
        self.assertEqual((c.cls, c.detail), ("ram_oom", "malloc of size 8589934592 failed"))
        c = classify(tb("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB"))
        self.assertEqual(c.cls, "cuda_oom")

    def test_nan_inf_wording(self):
        for exc in ("FloatingPointError: Loss became infinite or NaN at epoch=3 iter=1200!",
                    "AssertionError: loss become infinite or NaN!",
                    "ValueError: loss is infinite"):
            with self.subTest(exc=exc):
                self.assertEqual(classify(tb(exc)).cls, "nan_loss")
        log = training(20) + "\nepoch 0 step 20 loss=infinity lr=1e-4\nDone."
        self.assertEqual(classify(log, exit_code=0).cls, "nan_loss")

    def test_lightning_graceful_keyboard_interrupt(self):
        for line in ("\nDetected KeyboardInterrupt, attempting graceful shutdown ...",
                     "/opt/conda/lib/python3.10/site-packages/lightning/pytorch/trainer/call.py:53: UserWarning:"
                     " Detected KeyboardInterrupt, attempting graceful shutdown..."):
            with self.subTest(line=line[-40:]):
                c = classify(training() + "\n" + line, exit_code=1)
                self.assertEqual((c.cls, c.rule), ("interrupted", "keyboard_interrupt"))

    def test_keyboard_interrupt_ignored_at_shutdown_is_not_the_cause(self):
        log = (tb("ZeroDivisionError: division by zero") + "\nException ignored in: <module 'threading' from"
               " '/usr/lib/python3.10/threading.py'>\nKeyboardInterrupt: ")
        self.assertEqual(classify(log).cls, "div_zero")


class TestFrameworkAndLauncherWording(unittest.TestCase):
    """Fixes found by a second independent held-out set (JAX/XLA, TensorFlow/Keras, DeepSpeed,
    Megatron, vLLM, Ray, Accelerate, PBS/LSF; long logs with teardown noise). One test per fix."""

    def cls_of(self, exc, code=1, before=""):
        return classify(training() + "\n" + before + tb(exc), exit_code=code).cls

    def test_framework_gpu_memory_wordings_are_cuda_oom(self):
        for exc in ("ValueError: No available memory for the cache blocks. Try increasing "
                    "`gpu_memory_utilization` when initializing the engine.",
                    "tensorflow.python.framework.errors_impl.InternalError: Failed copying input tensor from "
                    "/job:localhost/replica:0/task:0/device:CPU:0 to /job:localhost/replica:0/task:0/device:GPU:0 "
                    "in order to run _EagerConst: Dst tensor is not initialized.",
                    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for "
                    "256.00MiB (268435456B) on device ordinal 0",
                    "tensorflow.python.framework.errors_impl.ResourceExhaustedError: failed to allocate memory "
                    "[Op:AddV2]"):
            with self.subTest(exc=exc[:40]):
                self.assertEqual(self.cls_of(exc), "cuda_oom")

    def test_tensorflow_cpu_allocator_oom_is_host_memory(self):
        line = ("2024-01-02 10:00:00.000000: W tensorflow/core/framework/op_kernel.cc:1763] OP_REQUIRES failed "
                "at cast_op.cc:109 : Resource exhausted: OOM when allocating tensor with shape[64,559,512,3] and "
                "type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu")
        exc = ("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating tensor with "
               "shape[64,559,512,3] and type float on /job:localhost/replica:0/task:0/device:CPU:0 by allocator cpu")
        self.assertEqual(self.cls_of(exc, before=line + "\n"), "ram_oom")
        self.assertEqual(self.cls_of(exc.replace("CPU:0 by allocator cpu", "GPU:0 by allocator GPU_0_bfc")),
                         "cuda_oom")

    def test_container_and_mpi_launch_failures_are_exec_failure(self):
        mpi = ("--------------------------------------------------------------------------\n"
               "mpirun was unable to launch the specified application as it could not access\n"
               "or execute an executable:\n\nExecutable: ./train_mpi\nNode: gpu-node-05\n\n"
               "while attempting to start process rank 0.")
        for text, code in (("exec /usr/local/bin/vllm: exec format error", 1),
                           ('docker: Error response from daemon: failed to create task for container: '
                            'OCI runtime create failed: runc create failed: unable to start container process: '
                            'exec: "python": executable file not found in $PATH: unknown.', 127),
                           (mpi, 1),
                           (mpi, 134)):  # a launcher that aborts: the signal is not the job's
            with self.subTest(text=text[:30], code=code):
                self.assertEqual(classify(text, exit_code=code).cls, "exec_failure")

    def test_command_not_found_in_a_preamble_is_not_the_failure_when_the_program_ran(self):
        pre = "/var/spool/slurmd/job4411/slurm_script: line 5: conda: command not found\n"
        self.assertEqual(classify(pre + training(), exit_code=1).cls, "unknown")
        self.assertEqual(classify(pre + training() + "\nSegmentation fault (core dumped)", exit_code=139).cls,
                         "segfault")
        self.assertEqual(classify(pre + "Segmentation fault (core dumped)", exit_code=1).cls, "segfault")
        self.assertEqual(classify(pre, exit_code=127).cls, "exec_failure")

    def test_hf_cannot_load_tokenizer_or_config_is_file_not_found(self):
        for exc in ("OSError: Can't load tokenizer for '/models/llama-7b'. If you were trying to load it from "
                    "'https://huggingface.co/models', make sure you don't have a local directory with the same "
                    "name. Otherwise, make sure '/models/llama-7b' is the correct path to a directory containing "
                    "all relevant files for a LlamaTokenizerFast tokenizer.",
                    "OSError: Can't load the configuration of '/ckpt/final'. If you were trying to load it from "
                    "'https://huggingface.co/models', make sure you don't have a local directory with the same "
                    "name."):
            with self.subTest(exc=exc[:30]):
                self.assertEqual(self.cls_of(exc), "file_not_found")

    def test_framework_nan_detectors_are_nan_loss(self):
        for exc in ("FloatingPointError: invalid value (nan) encountered in jit(train_step). Because "
                    "jax_config.debug_nans.value and/or config.jax_debug_infs is set, the de-optimized function "
                    "was called.",
                    "tensorflow.python.framework.errors_impl.InvalidArgumentError: Found Inf or NaN global norm. "
                    ": Tensor had NaN values",
                    "AssertionError: Rank 5: found NaN in local grad norm in backward pass before data-parallel "
                    "communication collective. Device: 5, node: gpu-node-03",
                    "ValueError: The loss returned in `training_step` is nan.",
                    "ValueError: Detected nan and/or inf values in `layer.weight`. Check your forward pass for "
                    "numerically unstable operations."):
            with self.subTest(exc=exc[:40]):
                self.assertEqual(self.cls_of(exc), "nan_loss")
        log = training() + "\nBatch 1234: Invalid loss, terminating training\n"  # Keras TerminateOnNaN
        self.assertEqual(classify(log, exit_code=1).cls, "nan_loss")

    def test_xla_and_tensorflow_nccl_failures_are_nccl(self):
        for exc in ("jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:"
                    "297: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled cuda error",
                    "tensorflow.python.framework.errors_impl.UnknownError: Collective ops is aborted by: Error "
                    "invoking NCCL: unhandled cuda error"):
            with self.subTest(exc=exc[:40]):
                self.assertEqual(self.cls_of(exc), "nccl")

    def test_ray_memory_monitor_and_kubernetes_oomkilled_are_oom_killer(self):
        exc = ("ray.exceptions.OutOfMemoryError: Task was killed due to the node running low on memory.\n"
               "Memory on the node (IP: 10.0.0.5, ID: abc) where the task was running was 121.3GB / 125.8GB "
               "(0.964), which exceeds the memory usage threshold of 0.95. Ray killed this worker.")
        self.assertEqual(self.cls_of(exc), "oom_killer")
        self.assertEqual(classify(training() + "\npod trainer-0 terminated: reason=OOMKilled", exit_code=137).cls,
                         "oom_killer")

    def test_xla_runtime_error_is_a_runtime_error(self):
        for name in ("jaxlib.xla_extension.XlaRuntimeError", "jax.errors.JaxRuntimeError"):
            with self.subTest(name=name):
                self.assertEqual(self.cls_of(name + ": INVALID_ARGUMENT: Executable expected parameter 0 of "
                                             "size 4096 but got buffer with incompatible size 8192"),
                                 "runtime_error")

    def test_launcher_traceback_alone_is_no_evidence(self):
        summary = tb("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ") + (
            "\n============================================================\ntrain.py FAILED\n"
            "Root Cause (first observed failure):\n[0]:\n  exitcode  : 1 (pid: 4411)\n  error_file: <N/A>\n"
            "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
        accel = tb("subprocess.CalledProcessError: Command '['/usr/bin/python3', 'train.py']' returned non-zero "
                   "exit status 1.")
        for text in (summary, accel):
            with self.subTest(text=text[-30:]):
                self.assertEqual(classify(training() + "\n" + text).cls, "unknown")
        # the child's own traceback before it is still the cause
        self.assertEqual(classify(training() + "\n" + tb("KeyError: 'labels'") + "\n" + accel).cls, "traceback")

    def test_info_and_warning_lines_of_absl_and_tensorflow_are_noise(self):
        for line in ("I0227 17:09:17.872618 140012 xla_bridge.py:863] Unable to initialize backend 'tpu': "
                     "INTERNAL: Failed to open libtpu.so: libtpu.so: cannot open shared object file: No such "
                     "file or directory",
                     "I0000 00:00:1722362212.123456   12345 xla_bridge.py:884] Unable to initialize backend 'tpu': "
                     "INTERNAL: Failed to open libtpu.so: libtpu.so: cannot open shared object file",
                     "2024-06-06 17:06:56.468020: W tensorflow/compiler/xla/stream_executor/platform/default/"
                     "dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7:"
                     " cannot open shared object file: No such file or directory"):
            with self.subTest(line=line[:30]):
                self.assertEqual(classify(line + "\n" + training(), exit_code=1).cls, "unknown")
        err = ("2024-06-06 17:06:56.468020: E external/xla/xla/pjrt/pjrt_stream_executor_client.cc:2766] Execution "
               "of replica 0 failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 12884901888 bytes.")
        self.assertEqual(classify(training() + "\n" + err, exit_code=-6).cls, "cuda_oom")  # E lines still count

    def test_long_teardown_after_the_fatal_traceback(self):
        teardown = []
        for i in range(700):
            teardown.append(("wandb: Synced 6 W&B file(s)",
                             "[rank%d]:[E ProcessGroupNCCL.cpp:563] [Rank %d] Watchdog caught collective operation "
                             "timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                             "Timeout(ms)=600000) ran for 600%03d milliseconds before timing out." % (i % 64, i % 64,
                                                                                                     i, i % 1000),
                             "2024-03-02 11:00:%02d,%03d - INFO - atexit - flushing %d pending metrics" % (
                                 i % 60, i, i),
                             "cleaning temp dir /scratch/tmp/ckpt_%d (%d files)" % (i, i % 40))[i % 4])
        log = training() + "\n" + tb("MemoryError") + "\n" + "\n".join(teardown)
        self.assertEqual(classify(log).cls, "ram_oom")
        log = training() + "\n" + tb("ModuleNotFoundError: No module named 'flax'") + "\n" + "\n".join(teardown)
        self.assertEqual(classify(log).cls, "missing_module")

    def test_a_ranks_own_error_beats_the_other_ranks_aborts_after_it(self):
        abort = ("torch.distributed.DistBackendError: NCCL communicator was aborted on rank %d.  Original reason "
                 "for failure was: [PG 0 Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=9, "
                 "OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600046 milliseconds before timing out.")
        others = "\n".join(tb(abort % (r, r), prefix="[rank%d]: " % r) for r in range(1, 8))
        watchdogs = "\n".join("[rank%d]:[E ProcessGroupNCCL.cpp:563] [Rank %d] Watchdog caught collective operation "
                              "timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, Timeout(ms)=600000) ran for 600046 "
                              "milliseconds before timing out." % (r, r) for r in range(1, 8))
        for exc, cls in (("MemoryError", "ram_oom"), ("KeyError: 'labels'", "traceback"),
                         ("ZeroDivisionError: division by zero", "div_zero")):
            for name, tail in (("aborts", others), ("watchdogs+aborts", watchdogs + "\n" + others)):
                with self.subTest(exc=exc, tail=name):
                    log = training(prefix="[rank0]: ") + "\n" + tb(exc, prefix="[rank0]: ") + "\n" + tail
                    self.assertEqual(classify(log).cls, cls)
        self.assertEqual(classify(training() + "\n" + others).cls, "nccl")  # no other cause: NCCL

    def test_cloud_and_kubernetes_preemption_is_preempted(self):
        for line in ("Reason: Preempting, Message: Preempted in order to admit critical pod",
                     "Message: Pod was terminated in response to imminent node shutdown.",
                     "EC2 Spot Instance Interruption Warning: instance-action=terminate"):
            with self.subTest(line=line[:30]):
                self.assertEqual(classify(training() + "\n" + line + "\nTerminated", exit_code=-15).cls,
                                 "preempted")

    def test_vllm_log_headers_are_line_prefixes(self):
        root = tb("AssertionError: tensor parallel size must divide the number of attention heads")
        api = tb("RuntimeError: Engine core initialization failed. See root cause above.")
        for pfx in ("ERROR 03-10 08:07:20 [core.py:302] ", "ERROR 11-18 18:07:28 engine.py:366] ",
                    "(EngineCore_0 pid=4121) ERROR 03-10 08:07:20 [core.py:302] "):
            with self.subTest(pfx=pfx):
                log = "\n".join(pfx + l for l in root.split("\n"))
                self.assertEqual(classify(log).cls, "assertion")
                self.assertEqual(classify(log + "\n" + api).cls, "assertion")

    def test_rays_list_of_possible_causes_is_not_a_segfault(self):
        died = ("(raylet) A worker died or was killed while executing a task by an unexpected system error. To "
                "troubleshoot the problem, check the logs for the dead worker. Worker exit type: SYSTEM_ERROR Worker "
                "exit detail: Worker unexpectedly exits with a connection error code 2. End of file. There are some "
                "potential root causes. (1) The process is killed by SIGKILL by OOM killer due to high memory usage. "
                "(2) ray stop --force is called. (3) The worker is crashed unexpectedly due to SIGSEGV or other "
                "unexpected errors.")
        self.assertEqual(classify(training() + "\n" + died).cls, "unknown")
        self.assertEqual(classify(training() + "\n" + died + "\n(RayTrainWorker pid=3311, ip=10.0.0.4) *** SIGSEGV "
                                  "received at time=1709377923 on cpu 3 ***").cls, "segfault")

    def test_scheduler_end_line_beats_the_long_sigterm_teardown_after_it(self):
        save = "\n".join("saving checkpoint shard %d/64 to /ckpt/step_1200" % i for i in range(64))
        for line, cls in (("slurmstepd: error: *** JOB 1234 ON node07 CANCELLED AT 2024-05-09T03:00:01 DUE TO TIME "
                           "LIMIT ***", "walltime"),
                          ("=>> PBS: job killed: walltime 3605 exceeded limit 3600", "walltime"),
                          ("slurmstepd: error: *** JOB 1234 ON node07 CANCELLED AT 2024-05-09T03:00:01 DUE TO "
                           "PREEMPTION ***", "preempted")):
            for code in (-15, 1):
                with self.subTest(cls=cls, code=code):
                    log = (training() + "\n" + line + "\nReceived SIGTERM, saving checkpoint\n" + save + "\n"
                           + tb("RuntimeError: DataLoader worker (pid 33) is killed by signal: Terminated."))
                    self.assertEqual(classify(log, exit_code=code).cls, cls)
        # a requeued run that trained again before failing: the old line is history
        line = "slurmstepd: error: *** JOB 1234 ON node07 CANCELLED AT 2024-05-09T03:00:01 DUE TO PREEMPTION ***"
        log = line + "\n" + training() + "\n" + tb("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB")
        self.assertEqual(classify(log).cls, "cuda_oom")

    def test_progress_after_a_handled_traceback_means_the_run_went_on(self):
        handled = tb("requests.exceptions.ConnectionError: HTTPSConnectionPool(host='hub'): Max retries exceeded")
        for n in (100, 1500):
            with self.subTest(n=n):
                bars = "\n".join("Processing: %d%%|####| %d/5000 [00:%02d<01:00, 4.5it/s]" % (i * 100 // 5000, i,
                                                                                           i % 60)
                                 for i in range(n))
                self.assertEqual(classify(handled + "\n" + bars).cls, "unknown")


class TestLineNumbers(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.path = os.path.join(self.tmp.name, "run.log")

    def tearDown(self):
        self.tmp.cleanup()

    def test_absolute_line_number_beyond_the_window(self):
        with open(self.path, "w") as f:
            for i in range(20000):
                f.write("epoch 0 step %d loss=1.0\n" % i)
            f.write(tb("ZeroDivisionError: division by zero") + "\n")
        c = ga.classify_log(self.path, {"exit_code": 1}, max_bytes=4096)
        self.assertEqual(c.line, 20000 + 6)
        c = ga.classify_log(self.path, {"exit_code": 1, "total_lines": 20006}, max_bytes=4096)
        self.assertEqual(c.line, 20006)

    def test_large_sparse_log_is_bounded(self):
        with open(self.path, "wb") as f:
            f.truncate(200 * 1024 * 1024)  # 200 MB of holes: no newlines, reads cost nothing on disk
            f.seek(0, 2)
            oom = tb("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.00 GiB")
            f.write(b"\n" + oom.encode() + b"\n")
        t0 = time.time()
        c = ga.classify_log(self.path, {"exit_code": 1})
        self.assertEqual(c.cls, "cuda_oom")
        self.assertEqual(c.line, 7)
        self.assertLess(time.time() - t0, 5.0)


class TestRobustness(unittest.TestCase):
    def test_never_raises_on_garbage(self):
        rng = random.Random(7)
        for i in range(200):
            data = bytes(rng.randrange(256) for _ in range(rng.randrange(2000)))
            for code in (0, 1, -9, -11, None):
                c = ga.classify_text(data.decode("latin-1"), {"exit_code": code})
                self.assertTrue(c.cls is None or c.cls in ga.CLASS_IDS)
                self.assertNotIn("classifier error", c.detail or "")  # no bug hidden by the guard
        garbage = "\x00" * 1000 + "Traceback\x00 (most recent call last):\n\udcff\x00"
        self.assertEqual(ga.classify_text(garbage, {"exit_code": 1}).rule, "py_traceback")
        self.assertEqual(ga.classify_text(None, None).cls, None)
        # malformed facts are ignored, not a crash that the classifier's guard would hide
        c = ga.classify_text("x", {"exit_code": "weird", "noted_lines": [("a", None), (3,)]})
        self.assertEqual(c.cls, "unknown")
        self.assertNotIn("classifier error", c.detail)

    def test_invalid_utf8_and_a_50mb_line(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "big.log")
            with open(path, "wb") as f:
                f.write(b"\xff\xfe\x00bad\n" + b"\x1b[31m" + b"A\r" * (25 * 1024 * 1024))  # 50 MB, no newline
            c = ga.classify_log(path, {"exit_code": 1})
            self.assertEqual(c.cls, "unknown")
        c = ga.classify_text("B" * (50 * 1024 * 1024), {"exit_code": 1})
        self.assertEqual(c.cls, "unknown")


class TestCleanLine(unittest.TestCase):
    def test_ansi_and_carriage_returns(self):
        self.assertEqual(ga.clean_line("\x1b[1;31mError\x1b[0m"), "Error")
        self.assertEqual(ga.clean_line(" 10%|#  |\r 50%|#####|\r100%|##########|"), "100%|##########|")
        self.assertEqual(ga.clean_line("abcdef\rXY"), "XYcdef")
        self.assertEqual(ga.clean_line("long old text\r\x1b[2Knew"), "new")
        self.assertEqual(ga.clean_line("line\r"), "line")
        self.assertEqual(ga.clean_line("a\x00b\x07c\tz"), "abc\tz")
        self.assertEqual(ga.clean_line("\x1b]0;title\x07plain"), "plain")


class TestCmdClassify(unittest.TestCase):
    def run_cmd(self, **kw):
        out, err = io.StringIO(), io.StringIO()
        old = sys.stdout, sys.stderr
        sys.stdout, sys.stderr = out, err
        try:
            rc = ga.cmd_classify(Namespace(**kw))
        finally:
            sys.stdout, sys.stderr = old
        return rc, out.getvalue(), err.getvalue()

    def test_json_shape(self):
        path = str(FIXTURES / "cuda_oom.log")
        rc, out, err = self.run_cmd(logs=[path], exit_code=1, json=True)
        self.assertEqual(rc, 0)
        row = json.loads(out.strip())
        self.assertEqual(set(row), {"path", "class", "detail", "line", "evidence", "remediation", "rank"})
        self.assertEqual((row["path"], row["class"]), (path, "cuda_oom"))

    def test_unreadable_path_returns_2_after_the_others(self):
        good = str(FIXTURES / "segfault.log")
        rc, out, err = self.run_cmd(logs=["/nonexistent/x.log", good], exit_code=None, json=False)
        self.assertEqual(rc, 2)
        self.assertIn("segfault", out)
        self.assertTrue(err.startswith("gpualert: error: "), err)
        self.assertEqual(len(err.strip().splitlines()), 1)

    def test_success_plain(self):
        with tempfile.NamedTemporaryFile("w", suffix=".log", delete=False) as f:
            f.write(training())
        try:
            rc, out, err = self.run_cmd(logs=[f.name], exit_code=0, json=False)
        finally:
            os.unlink(f.name)
        self.assertEqual(rc, 0)
        self.assertIn("success", out)


if __name__ == "__main__":
    unittest.main()

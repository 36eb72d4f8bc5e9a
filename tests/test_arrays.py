"""Job arrays: one summary per array, sent once by the last task (requeued tasks counted once,
a task that never reports does not silence it), each task's own message not swallowed, and the
locks and records behind it."""
import email
import email.policy
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

os.environ["TZ"] = "UTC"
time.tzset()

from _load import load_gpualert
from messages import N, REPRESENTATIVE
from wrapper_helpers import (CLUSTER_PATH, PY, SCRIPT, _resend, _smtp_sink, _spawn_all, addressed,
                             base, child, isolated_env, parse, run_gpualert, write_executable)


# ---- an array id seen before never swallows a task's message ----

def _array_task(tmp_path, relay, cluster, task, code):
    env = isolated_env(tmp_path, SLURM_CLUSTER_NAME=cluster, SLURM_JOB_ID=str(9000 + task),
                       SLURM_ARRAY_JOB_ID="8999", SLURM_ARRAY_TASK_ID=str(task),
                       SLURM_ARRAY_TASK_COUNT="2")
    proc = subprocess.run([PY, SCRIPT] + base(tmp_path) + [
        "--array-summary", "--smtp", relay.addr, "--to", "me@example.org", "--"]
        + child("raise SystemExit(%d)" % code), env=env, cwd=str(tmp_path), timeout=60,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.returncode == code, proc.stderr
    return proc


def test_an_array_id_seen_before_never_swallows_a_tasks_message(tmp_path, smtp_plain):
    """Two clusters sharing a home number their jobs independently. The second array 8999
    found the first one's `summary sent` marker: its tasks were "recorded for the array
    summary" and nothing was ever sent about them."""
    for task in (0, 1):
        _array_task(tmp_path, smtp_plain, "alpha", task, 3)
    assert len(smtp_plain.wait_for(1)) == 1
    for task in (0, 1):
        _array_task(tmp_path, smtp_plain, "beta", task, 4)
    got = smtp_plain.wait_for(2, timeout=20)
    assert len(got) == 2 and b"array 8999" in got[1].data, [m.data[:300] for m in got]
    # a task that reports after its array's summary went out (requeued): its own message
    proc = _array_task(tmp_path, smtp_plain, "alpha", 1, 5)
    got = smtp_plain.wait_for(3, timeout=20)
    assert len(got) == 3, proc.stderr
    assert b"already been sent" in got[2].data


class TestArraySummary(unittest.TestCase):
    def test_subject_counts_and_every_task_listed(self):
        r = REPRESENTATIVE["array_summary"]()
        self.assertEqual(N.render_subject(r), "[gpualert] FAILED array 4301: 9 ok, 3 failed, 1 never reported "
                                              "(cuda_runtime 2, nan_loss 1) on gpu003")
        text = N.render_text(r, [])
        for task in range(12):
            self.assertRegex(text, r"\n  %d +(SUCCESS|FAILED) " % task)
        self.assertRegex(text, r"\n  12 +never reported .*scheduler: NODE_FAIL")
        self.assertIn("/home/ana/sweep/logs/task7/output.log", text)
        self.assertIn("loss 0.37", text)

    def test_a_task_that_never_reported_completes_the_set(self):
        d = tempfile.mkdtemp(prefix="gpualert-array-")
        self.addCleanup(shutil.rmtree, d, True)
        s = N.ArraySummary(d, "55", task_count=3)
        self.assertIsNone(s.record(0, "SUCCESS", ended_elsewhere=lambda: {"1": "RUNNING"}))
        summary = s.record(2, "FAILED", "nccl", ended_elsewhere=lambda: {"0": "COMPLETED", "1": "NODE_FAIL"})
        self.assertEqual(summary["missing"], [("1", "NODE_FAIL")])
        self.assertIn("1 never reported", N.array_subject(summary))

    def test_sacct_states_of_array_tasks(self):
        out = "4301_0|COMPLETED|0:0\n4301_1|RUNNING|0:0\n4301_[2-5]|PENDING|0:0\n4301_6|NODE_FAIL|0:0\n"
        self.assertEqual(N.slurm_array_ended("4301", run=lambda argv: (0, out)),
                         {"0": "COMPLETED", "6": "NODE_FAIL"})
        self.assertEqual(N.slurm_array_ended("4301", run=lambda argv: None), {})


class TestArrayEndToEnd(unittest.TestCase):
    """Real wrapper runs as tasks of one (simulated) Slurm array, a real SMTP server."""

    def setUp(self):
        self.sink = _smtp_sink(self)
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="gpualert-array-"))
        self.addCleanup(shutil.rmtree, str(self.tmp), True)

    def task(self, n, count, code, *extra):
        from wrapper_helpers import PY, SCRIPT, child, isolated_env
        env = isolated_env(self.tmp, SLURM_JOB_ID=str(4400 + n), SLURM_ARRAY_JOB_ID="4400",
                           SLURM_ARRAY_TASK_ID=str(n), SLURM_ARRAY_TASK_COUNT=str(count),
                           GPUALERT_SENDMAIL="none")
        args = ["--log-dir", str(self.tmp / "logs"), "--outbox", str(self.tmp / "outbox"),
                "--to", "o@example.org", "--smtp", self.sink.addr] + list(extra) + ["--"]
        return subprocess.run([PY, SCRIPT] + args + child(code), env=env, cwd=str(self.tmp),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)

    def test_one_summary_past_the_hourly_cap_and_no_foreign_files(self):
        from wrapper_helpers import PY, SCRIPT, child, isolated_env
        env = isolated_env(self.tmp, GPUALERT_SENDMAIL="none")
        subprocess.run([PY, SCRIPT, "--smtp", self.sink.addr, "--to", "o@example.org", "--max-per-hour", "1",
                        "--log-dir", str(self.tmp / "logs"), "--"] + child("pass"), env=env, timeout=60)
        self.assertEqual(len(self.sink.wait_for(1)), 1)  # the hourly cap of 1 is used up
        for n in range(4):
            code = ("import sys; open('metrics-%d.jsonl', 'w').write('{}'); "
                    "print('step=10 loss=%.2f'); sys.exit(%d)" % (n, 0.5 + n, 1 if n == 2 else 0))
            proc = self.task(n, 4, code, "--array-summary", "--max-per-hour", "1")
            self.assertEqual(proc.returncode, 1 if n == 2 else 0, proc.stderr)
        msgs = self.sink.wait_for(2, timeout=30)
        self.assertEqual(len(msgs), 2, [m.data[:200] for m in msgs])
        summary = email.message_from_bytes(msgs[1].data, policy=email.policy.default)
        self.assertTrue(summary["Subject"].startswith("[gpualert] FAILED array 4400: 3 ok, 1 failed"), summary["Subject"])
        text = summary.get_body(("plain",)).get_content()
        for n in range(4):
            self.assertRegex(text, r"\n  %d +(SUCCESS|FAILED) " % n)
        self.assertIn("loss 1.5", text)
        self.assertEqual([a.get_filename() for a in summary.iter_attachments()], [])

    def test_each_sends_the_tasks_too_without_other_tasks_files(self):
        for n in range(2):
            self.task(n, 2, "open('metrics-%d.jsonl', 'w').write('{}'); print('done')" % n,
                      "--array-summary=each")
        msgs = [email.message_from_bytes(m.data, policy=email.policy.default)
                for m in self.sink.wait_for(3, timeout=30)]
        self.assertEqual(len(msgs), 3)
        self.assertEqual(sum(1 for m in msgs if "array 4400:" in m["Subject"]), 1)
        for m in msgs:
            names = [a.get_filename() for a in m.iter_attachments()]
            self.assertFalse([x for x in names if x.startswith("metrics-")], names)


class TestArrayWithoutAccounting(unittest.TestCase):
    """Slurm with AccountingStorageType=accounting_storage/none: sacct refuses, squeue
    answers. Nine tasks fail, one never reports (its node died): one summary, not none."""

    def setUp(self):
        self.sink = _smtp_sink(self)
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="gpualert-array-noacct-"))
        self.addCleanup(shutil.rmtree, str(self.tmp), True)
        self.bin = self.tmp / "slurm-bin"
        self.bin.mkdir()
        self.fake("sacct", 'echo "sacct: error: Slurm accounting storage is disabled" >&2; exit 1')
        # the asking task and those still pending; task 9 (its node died) has left
        self.fake("squeue", 'i=$SLURM_ARRAY_TASK_ID; while [ $i -le 8 ]; do '
                            'echo "4500_$i PENDING"; i=$((i+1)); done')

    def fake(self, name, body):
        """Renamed into place (write_executable): a task may be starting the old one."""
        write_executable(self.bin / name, "#!/bin/sh\n%s\n" % body)

    def test_a_task_that_never_reports_does_not_silence_the_summary(self):
        self.nine_tasks_fail()
        self.assertIn("not in the queue", self.the_summary())

    def test_an_array_squeue_has_forgotten_has_ended(self):
        """At the ninth task's end squeue no longer knows the array (its tasks were purged):
        that is an answer, not silence. No summary was sent at all."""
        self.fake("squeue", 'if [ "$SLURM_ARRAY_TASK_ID" = 8 ]; then echo "slurm_load_jobs error: '
                            'Invalid job id specified" >&2; exit 1; fi; i=$SLURM_ARRAY_TASK_ID; '
                            'while [ $i -le 8 ]; do echo "4500_$i PENDING"; i=$((i+1)); done')
        self.nine_tasks_fail()
        self.assertIn("no longer known to squeue", self.the_summary())

    def the_summary(self):
        msgs = self.sink.wait_for(1, timeout=30)
        self.assertEqual(len(msgs), 1, [m.data[:600] for m in msgs])
        summary = email.message_from_bytes(msgs[0].data, policy=email.policy.default)
        self.assertIn("9 failed, 1 never reported", summary["Subject"])
        return summary.get_body(("plain",)).get_content()

    def nine_tasks_fail(self):
        from wrapper_helpers import PY, SCRIPT, child, isolated_env
        for n in range(9):
            env = isolated_env(self.tmp, SLURM_JOB_ID=str(4500 + n), SLURM_ARRAY_JOB_ID="4500",
                               SLURM_ARRAY_TASK_ID=str(n), SLURM_ARRAY_TASK_COUNT="10",
                               SLURM_ARRAY_TASK_MIN="0", SLURM_ARRAY_TASK_MAX="9",
                               SLURM_ARRAY_TASK_STEP="1")
            env["PATH"] = str(self.bin) + os.pathsep + env["PATH"]
            proc = subprocess.run(
                [PY, SCRIPT, "--log-dir", str(self.tmp / "logs"), "--outbox", str(self.tmp / "outbox"),
                 "--to", "o@example.org", "--smtp", self.sink.addr, "--array-summary", "--"] +
                child("raise SystemExit(1)"), env=env, cwd=str(self.tmp), stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, timeout=60)
            self.assertEqual(proc.returncode, 1, proc.stderr)

    def test_the_queue_answers_only_for_tasks_it_no_longer_lists(self):
        def run(argv):
            if argv[0] == "sacct":
                return (1, "")
            return (0, "4501_2 RUNNING\n4501_3 PENDING\n")
        self.assertEqual(N.slurm_array_ended("4501", run=run, task_ids=["0", "1", "2", "3"]),
                         {"0": "ended, not in the queue (no accounting to say how)",
                          "1": "ended, not in the queue (no accounting to say how)"})
        self.assertEqual(N.slurm_array_ended("4501", run=lambda argv: (0, ""), task_ids=["0"]), {})
        self.assertEqual(N.slurm_array_ended("4501", run=run, task_ids=None), {})
        forgot = lambda argv: (1, "slurm_load_jobs error: Invalid job id specified\n")
        self.assertEqual(sorted(N.slurm_array_ended("4501", run=forgot, task_ids=["0", "1"])), ["0", "1"])
        down = lambda argv: (1, "slurm_load_jobs error: Unable to contact slurm controller\n")
        self.assertEqual(N.slurm_array_ended("4501", run=down, task_ids=["0", "1"]), {})
        self.assertIsNone(N.array_task_ids({"SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "9",
                                            "SLURM_ARRAY_TASK_COUNT": "4"}))
        self.assertEqual(N.array_task_ids({"SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "7",
                                           "SLURM_ARRAY_TASK_STEP": "3"}), ["1", "4", "7"])


def test_array_tasks_send_one_summary_and_nothing_else(tmp_path, smtp_plain):
    for task, code in (("0", 0), ("1", 3), ("2", 0)):
        env = isolated_env(tmp_path, SLURM_JOB_ID=str(900 + int(task)), SLURM_ARRAY_JOB_ID="900",
                           SLURM_ARRAY_TASK_ID=task, SLURM_ARRAY_TASK_COUNT="3",
                           SLURM_JOB_NAME="sweep")
        proc = run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--array-summary", "--"]
                            + child("raise SystemExit(%d)" % code), env=env)
        assert proc.returncode == code
    smtp_plain.wait_for(1)  # every run has ended: nothing more is on its way
    assert len(smtp_plain.messages) == 1  # the summary only (issue 12: =each for more)
    msg = parse(smtp_plain.messages[0].data)
    assert msg["Subject"].startswith("[gpualert] FAILED array 900: 2 ok, 1 failed"), msg["Subject"]
    body = msg.get_body(("plain",)).get_content()
    assert "3 of 3 tasks reported" in body
    assert re.search(r"\n  1 +FAILED ", body), body


def test_an_array_task_whose_wrapper_dies_is_told_though_summarized(tmp_path, smtp_plain):
    # --array-summary, no accounting: task 1 is recorded for the summary, then task 2's
    # wrapper is killed (-9) mid-job and the queue empties. Nobody was told of either: a
    # summarized task had no stand-in. Now it has one, as any run: resend sends its SILENT.
    fake = tmp_path / "slurm-bin"
    fake.mkdir()
    queue = tmp_path / "queue"
    queue.write_text("77_2 RUNNING\n")
    for name, body in (("sacct", 'echo "sacct: error: Slurm accounting storage is disabled" >&2; exit 1'),
                       ("squeue", 'cat "%s"' % queue)):
        write_executable(fake / name, "#!/bin/sh\n%s\n" % body)

    def task(n, code):
        env = isolated_env(tmp_path, SLURM_JOB_ID=str(80 + n), SLURM_ARRAY_JOB_ID="77",
                           SLURM_ARRAY_TASK_ID=str(n), SLURM_ARRAY_TASK_MIN="1",
                           SLURM_ARRAY_TASK_MAX="2", SLURM_ARRAY_TASK_STEP="1")
        env["PATH"] = str(fake) + os.pathsep + env["PATH"]
        return subprocess.Popen(
            [PY, SCRIPT, "--log-dir", str(tmp_path / "logs"), "--outbox", str(tmp_path / "outbox"),
             "--to", "owner@example.org", "--smtp", "127.0.0.1:9", "--smtp-tls", "none",
             "--array-summary", "--"] + child(code), env=env, cwd=str(tmp_path),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    second = task(2, "import os, time\nprint(os.getpid(), flush=True)\ntime.sleep(60)\n")
    job = None
    try:
        job = int(second.stdout.readline())
        first = task(1, "pass")
        assert first.wait(60) == 0
        assert b"recorded for the array summary" in first.stderr.read()
        os.kill(second.pid, signal.SIGKILL)
        second.communicate(timeout=30)
    finally:
        if second.poll() is None:
            second.kill()
        if job:
            os.kill(job, signal.SIGKILL)
    queue.write_text("")
    resend = _resend(tmp_path, tmp_path / "outbox", smtp_plain.addr)
    assert resend.returncode == 0, resend.stderr
    [got] = smtp_plain.wait_for(1)
    assert b"X-Gpualert-Status: SILENT" in got.data, got.data[:800]
    assert len(smtp_plain.messages) == 1  # task 1's stand-in went when it was recorded



def test_a_stand_in_scheduler_rewritten_while_a_task_runs_it_is_never_busy_nor_half_written(tmp_path):
    # isolated_env writes its stand-in scontrol again for each pretend job, while an earlier
    # task's wrapper may be running it (the test above starts task 1 beside task 2). Rewritten
    # in place, the write failed "Text file busy" (errno 26) while a run was starting it, and
    # a run could find it busy (exit 126) or truncated (exit 0, no answer).
    scontrol = os.path.join(isolated_env(tmp_path, SLURM_JOB_ID="1")["PATH"].split(os.pathsep)[0],
                            "scontrol")
    runner = subprocess.Popen(["sh", "-c", 'while :; do "$0" 2>/dev/null; echo $?; done', scontrol],
                              stdout=subprocess.PIPE)
    try:
        for _ in range(300):
            isolated_env(tmp_path, SLURM_JOB_ID="1")
    finally:
        runner.kill()
    codes = runner.communicate()[0].split()
    assert codes and set(codes) == {b"1"}, sorted(set(codes))


cluster = load_gpualert()


def test_array_summary_is_sent_once_by_the_last_task(tmp_path):
    results = _spawn_all(tmp_path, "array", 12, 12)
    summaries = [r for r in results if r]
    assert len(summaries) == 1
    s = summaries[0]
    assert s["tasks"] == 12 and s["by_status"] == {"FAILED": 4, "SUCCESS": 8}
    assert s["by_class"] == {"cuda_oom": 4} and [w["task"] for w in s["worst"]] == ["0", "3", "6", "9"]
    assert s["duration_s"]["max"] == 11.0
    lines = (tmp_path / "shared" / "4242.jsonl").read_text().splitlines()
    assert len(lines) == 12 and all(json.loads(l) for l in lines)


def test_array_summary_counts_a_requeued_task_once(tmp_path):
    s = cluster.ArraySummary(str(tmp_path), "77", task_count=2)
    assert s.record(0, "PREEMPTED") is None
    assert s.record(0, "SUCCESS") is None  # same task again: still one of two
    summary = s.record(1, "TIMEOUT", "walltime")
    assert summary["by_status"] == {"SUCCESS": 1, "TIMEOUT": 1}
    assert cluster.ArraySummary(str(tmp_path), "77", task_count=2).record(1, "TIMEOUT") is None  # once


def test_array_task_count_from_environment():
    assert cluster.array_task_count({"SLURM_ARRAY_TASK_COUNT": "5"}) == 5
    assert cluster.array_task_count({"SLURM_ARRAY_TASK_MIN": "0", "SLURM_ARRAY_TASK_MAX": "10",
                                     "SLURM_ARRAY_TASK_STEP": "2"}) == 6
    assert cluster.array_task_count({}) is None


def test_array_summary_unwritable_dir_is_a_note(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    s = cluster.ArraySummary(str(blocker / "sub"), "1", task_count=1)
    assert s.record(0, "SUCCESS") is None and s.notes


def test_array_summary_task_count_from_the_environment(tmp_path):
    s = cluster.ArraySummary(str(tmp_path), "5", environ={"SLURM_ARRAY_TASK_COUNT": "1"})
    assert s.record(0, "SUCCESS")["tasks"] == 1
    s = cluster.ArraySummary(str(tmp_path), "6", environ={})
    assert s.record(0, "SUCCESS") is None and "unknown" in s.notes[0]


def test_lock_wait_is_bounded(tmp_path):
    import fcntl
    path = str(tmp_path / "lock")
    holder = os.open(path, os.O_RDWR | os.O_CREAT)
    fcntl.flock(holder, fcntl.LOCK_EX)
    child = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""\
        import os, sys, time
        sys.path.insert(0, os.path.join(os.path.dirname(sys.argv[1]), "tests"))
        from _load import load_module
        c = load_module(sys.argv[1], "c")
        t = time.time()
        try:
            c._locked(sys.argv[2], wait_s=0.5)
        except OSError as exc:
            print("gave up after %.1f: %s" % (time.time() - t, exc))
        """), CLUSTER_PATH, path], stdout=subprocess.PIPE, universal_newlines=True)
    out = child.communicate(timeout=20)[0]
    os.close(holder)
    assert out.startswith("gave up after 0.") and "busy" in out


def test_an_array_task_that_diverged_is_counted_failed(tmp_path):
    s = N.ArraySummary(str(tmp_path), "56", task_count=2)
    s.record(0, "SUCCESS")
    summary = s.record(1, "COMPLETED", "nan_loss", 0)
    assert N.array_subject(summary) == "array 56: 1 ok, 1 failed (nan_loss 1)"

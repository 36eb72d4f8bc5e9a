"""The wrapper and `watch` against a REAL Son of Grid Engine (CI runs .ci/sge-setup.sh first).

Skipped where `qsub` is not installed, or where the SGE here was not set up by
.ci/sge-setup.sh (no $SGE_ROOT/default/gpualert-ci-marker): these tests submit jobs and
must never do that into somebody else's cluster. Where the marker is there and the
qmaster does not answer, they fail.

The setup makes SGE quick: scheduling every second, the queue's `notify` at 5 s (the time
between SIGUSR2 and SIGKILL for -notify jobs), accounting flushed at once. Every job is
submitted by one module fixture, so they all run side by side (about a minute in all):
the tests then wait for their own job. Messages go to a per-job outbox (no transport is
Messages go to a real SMTP server (aiosmtpd) on 127.0.0.1, which the jobs reach because
they run on this same host; each job writes to its own address, and the server notes when
each message arrived (to compare with qacct's end_time: before SGE's SIGKILL).
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import time
from email import policy
from email.parser import BytesParser

import pytest

from conftest import free_port
from wrapper_helpers import wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "gpualert.py")
SGE_ROOT = os.environ.get("SGE_ROOT") or "/var/lib/gridengine"
SGE_CELL = os.environ.get("SGE_CELL") or "default"
MARKER = os.path.join(SGE_ROOT, SGE_CELL, "gpualert-ci-marker")

pytestmark = [
    pytest.mark.skipif(shutil.which("qsub") is None,
                       reason="Grid Engine is not installed here (no qsub); CI runs .ci/sge-setup.sh"),
    pytest.mark.skipif(not os.path.exists(MARKER),
                       reason="this SGE was not set up by .ci/sge-setup.sh (no %s): "
                              "the tests submit jobs only into their own" % MARKER),
]

SLEEPER = "import time; print('epoch 1', flush=True); time.sleep(300)"


# ---- helpers ----

def _sge(*argv):
    return subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=30)


def job_env(workdir):
    """The submitter's environment (qsub -V), without the developer's gpualert settings."""
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(workdir, "state"),
               XDG_CONFIG_HOME=os.path.join(workdir, "config"))
    for key in list(env):
        if key.startswith("GPUALERT_"):
            del env[key]
    return env


class Job(object):
    """One batch job: a script run by SGE in its own folder under the module's workdir."""

    def __init__(self, workdir, server, name, body, qsub_args=(), env=None):
        self.name, self.dir, self.server = name, os.path.join(workdir, name), server
        os.makedirs(self.dir)
        self.outbox, self.logs = os.path.join(self.dir, "outbox"), os.path.join(self.dir, "logs")
        self.to = "%s@example.org" % name
        self.script = os.path.join(self.dir, "job.sh")
        with open(self.script, "w") as f:
            f.write("#!/bin/sh\n" + body.format(
                py=sys.executable, gpualert=SCRIPT, outbox=self.outbox, logs=self.logs,
                smtp=server.addr, to=self.to) + "\n")
        argv = ["qsub", "-terse", "-V", "-N", name, "-o", self.dir, "-e", self.dir,
                "-wd", self.dir] + list(qsub_args) + [self.script]
        proc = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True, timeout=30, env=env or job_env(workdir))
        assert proc.returncode == 0, "qsub failed: %s" % proc.stderr
        self.id = proc.stdout.strip().split(".")[0]  # "12" or, for an array, "12.1-3:1"

    def finished(self):
        return _sge("qstat", "-j", self.id).returncode != 0

    def accounting(self, task=None):
        """qacct's record of this job (a task of it) as a dict, once it is written."""
        argv = ["qacct", "-j", self.id] + (["-t", str(task)] if task else [])
        proc = _sge(*argv)
        if proc.returncode != 0:
            return None
        rec = {}
        for line in proc.stdout.splitlines():
            key, _, value = line.partition(" ")
            if key and not key.startswith("="):
                rec[key] = value.strip()
        return rec

    def wait_accounting(self, timeout, task=None):
        return wait_for(lambda: self.accounting(task), timeout, step=1,
                        what="job %s (%s) to end" % (self.id, self.name))

    def messages(self):
        """The messages to this job's address, in order: [(arrival time, EmailMessage)]."""
        return [(t, BytesParser(policy=policy.default).parsebytes(data))
                for t, rcpt, data in list(self.server.received) if self.to in rcpt]

    def output(self):
        text = []
        for path in sorted(glob.glob(os.path.join(self.dir, self.name + ".[oe]*"))):
            with open(path, errors="replace") as f:
                text.append("--- %s\n%s" % (os.path.basename(path), f.read()[-3000:]))
        return "\n".join(text) or "(no job output)"


def _read_logs(job):
    text = ""
    for path in glob.glob(os.path.join(job.logs, "*", "output.log")):
        with open(path, errors="replace") as f:
            text += f.read()
    return text


def assert_subject(msg, status, *words):
    """The subject's status word comes first; the other words appear somewhere in it."""
    subject = str(msg["Subject"])
    assert subject.startswith("[gpualert] %s " % status), subject
    for word in words:
        assert word in subject, (word, subject)


def body_of(msg):
    part = msg.get_body(("plain",))
    return part.get_content() if part else ""


def final_messages(job):
    """The messages that report the end (not the early notices)."""
    return [(p, m) for p, m in job.messages() if not m["Subject"].startswith("[gpualert] WARNING")]


def end_epoch(rec):
    """qacct's end_time (local time, whole seconds) -> epoch seconds."""
    return time.mktime(time.strptime(rec["end_time"], "%a %b %d %H:%M:%S %Y"))


class Smtp(object):
    """A plain SMTP server on 127.0.0.1 that notes when each message arrived."""

    def __init__(self):
        from aiosmtpd.controller import Controller
        self.received, self.port = [], free_port()
        self.addr = "127.0.0.1:%d" % self.port
        self.controller = Controller(self, hostname="127.0.0.1", port=self.port)
        self.controller.start()

    async def handle_DATA(self, server, session, envelope):
        self.received.append((time.time(), list(envelope.rcpt_tos),
                              envelope.original_content or envelope.content))
        return "250 OK queued"


# ---- the jobs, all submitted at once ----

@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return str(tmp_path_factory.mktemp("sge"))


@pytest.fixture(scope="module")
def smtp():
    pytest.importorskip("aiosmtpd")
    server = Smtp()
    yield server
    server.controller.stop()


@pytest.fixture(scope="module")
def jobs(workdir, smtp):
    proc = _sge("qstat", "-f")
    assert proc.returncode == 0, "the qmaster does not answer: %s" % proc.stderr
    made = {}
    wrap = "exec {py} {gpualert} --smtp {smtp} --to {to} --outbox {outbox} --log-dir {logs}"
    # the soft run-time limit: SIGUSR1 at s_rt; the child (no handler) dies of it
    made["srt"] = Job(workdir, smtp, "srt", wrap + " -- {py} -c \"%s\"" % SLEEPER,
                      ["-l", "s_rt=0:0:8,h_rt=0:1:0"])
    # s_rt with a child that checkpoints on SIGUSR1 and exits 0: the signal once, TIMEOUT still
    once = "import signal, sys, time; seen = []; " \
           "signal.signal(signal.SIGUSR1, lambda *a: seen.append(1)); print('epoch 1', flush=True); " \
           "end = time.time() + 40\nwhile not seen and time.time() < end: time.sleep(0.1)\n" \
           "time.sleep(1); print('SIGUSR1 seen %d time(s)' % len(seen), flush=True)"
    made["srt_once"] = Job(workdir, smtp, "srtonce", wrap + " -- {py} -c \"%s\"" % once,
                           ["-l", "s_rt=0:0:5,h_rt=0:1:0"])
    # -notify at h_rt: SIGUSR2, then SIGKILL 5 s later; the child dies of the SIGUSR2
    made["hrt"] = Job(workdir, smtp, "hrt", wrap + " -- {py} -c \"%s\"" % SLEEPER,
                      ["-notify", "-l", "h_rt=0:0:10"])
    # qdel of a -notify job whose child ignores SIGUSR2: only the SIGKILL ends it
    ignore = "import signal, time; signal.signal(signal.SIGUSR2, signal.SIG_IGN); " \
             "print('epoch 1', flush=True); time.sleep(300)"
    made["qdel"] = Job(workdir, smtp, "qdel", wrap + " -- {py} -c \"%s\"" % ignore, ["-notify"])
    made["exit3"] = Job(workdir, smtp, "exit3", wrap + " -- {py} -c \"print('bad input'); raise SystemExit(3)\"")
    made["array"] = Job(workdir, smtp, "arr", wrap + " --array-summary -- {py} -c "
                        "\"import os, sys; print('task', os.environ['SGE_TASK_ID']); "
                        "sys.exit(4 if os.environ['SGE_TASK_ID'] == '2' else 0)\"", ["-t", "1-3"])
    made["hrt_plain"] = Job(workdir, smtp, "hrtplain", "echo epoch 1\nexec sleep 300", ["-l", "h_rt=0:0:8"])
    yield made
    for job in made.values():
        if not job.finished():
            _sge("qdel", job.id)


# ---- the wrapper inside SGE jobs ----

def test_soft_runtime_limit_is_timeout_walltime(jobs):
    job = jobs["srt"]
    rec = job.wait_accounting(90)
    wait_for(lambda: final_messages(job), 10, what="the final message\n" + job.output())
    subjects = [m["Subject"] for _, m in job.messages()]
    (arrived, final), = final_messages(job)
    assert_subject(final, "TIMEOUT", "walltime", "job %s" % job.id)
    assert "unknown" not in final["Subject"]
    assert "s_rt 00:00:08 reached" in body_of(final), body_of(final)
    # the early notice came at SIGUSR1, before the end
    assert any(s.startswith("[gpualert] WARNING ") and "walltime" in s for s in subjects), subjects
    assert rec["exit_status"].split()[0] == str(128 + 10)  # the wrapper passes on SIGUSR1's death


def test_soft_runtime_limit_reaches_a_checkpointing_child_once(jobs):
    job = jobs["srt_once"]
    rec = job.wait_accounting(90)
    assert rec["exit_status"].split()[0] == "0", (rec, job.output())
    assert "SIGUSR1 seen 1 time(s)" in _read_logs(job), _read_logs(job)
    (arrived, final), = wait_for(lambda: final_messages(job), 10, what="the message\n" + job.output())
    assert_subject(final, "TIMEOUT", "walltime")  # it ended after s_rt, whatever way
    assert "s_rt 00:00:05 reached" in body_of(final)


def test_notify_job_at_h_rt_reports_before_the_kill(jobs):
    job = jobs["hrt"]
    rec = job.wait_accounting(90)
    finals = wait_for(lambda: final_messages(job), 10, what="the final message\n" + job.output())
    (arrived, final), = finals
    assert_subject(final, "TIMEOUT", "walltime", "job %s" % job.id)
    assert "h_rt 00:00:10" in body_of(final), body_of(final)
    assert arrived <= end_epoch(rec) + 1.0  # written before SGE's SIGKILL


def test_qdel_of_a_notify_job_reports_before_the_kill(jobs):
    job = jobs["qdel"]
    wait_for(lambda: "epoch 1" in _read_logs(job), 60, what="the child's first line\n" + job.output())
    assert _sge("qdel", job.id).returncode == 0
    rec = job.wait_accounting(60)
    # the child ignored SIGUSR2, so SGE's SIGKILL ended the wrapper too: what it saved before is all
    (arrived, final), = wait_for(lambda: final_messages(job), 5, what="a message\n" + job.output())
    assert_subject(final, "INTERRUPTED", "job %s" % job.id)
    assert "qdel" in body_of(final), body_of(final)
    assert arrived <= end_epoch(rec) + 1.0
    assert rec["exit_status"].split()[0] == "137", rec


def test_exit_code_and_job_id(jobs):
    job = jobs["exit3"]
    rec = job.wait_accounting(60)
    assert (rec["failed"].split()[0], rec["exit_status"].split()[0]) == ("0", "3")
    (arrived, final), = wait_for(lambda: final_messages(job), 10, what="the message\n" + job.output())
    assert_subject(final, "FAILED", "job %s" % job.id, "exit 3")


def test_array_tasks_have_their_own_runs_and_one_summary(jobs):
    job = jobs["array"]
    for task in (1, 2, 3):
        job.wait_accounting(60, task)
    # one run directory per task, named after the task
    dirs = sorted(os.path.basename(d) for d in glob.glob(os.path.join(job.logs, "*")))
    assert len(dirs) == 3, dirs
    for task in (1, 2, 3):
        assert sum("sge-%s.%d" % (job.id, task) in d for d in dirs) == 1, dirs
    # one summary, sent by the task that completed the set; task 2's failure is either
    # reported on its own (when it ended before the others) or is the summary's news
    summaries = wait_for(lambda: [m for _, m in final_messages(job) if "array %s" % job.id in m["Subject"]],
                         10, what="the array summary\n" + job.output())
    assert len(summaries) == 1, [m["Subject"] for _, m in final_messages(job)]
    text = body_of(summaries[0])
    assert "1 failed" in summaries[0]["Subject"], summaries[0]["Subject"]
    assert "3 of 3 tasks" in text, text
    rows = [line.split() for line in text.splitlines() if line.strip()[:1].isdigit()]
    assert [(r[0], r[1]) for r in rows[:3]] == [("1", "SUCCESS"), ("2", "FAILED"), ("3", "SUCCESS")], text
    assert all(".%s-" % r[0] in r[-1] for r in rows[:3]), text  # each task's own run directory
    others = [m for _, m in final_messages(job) if "array %s" % job.id not in m["Subject"]]
    for msg in others:  # only a failed task reports on its own
        assert_subject(msg, "FAILED", "job %s.2" % job.id)


# ---- watch, for jobs that do not run gpualert ----

def _watch(workdir, job, max_wait=90):
    env = job_env(workdir)
    return subprocess.run([sys.executable, SCRIPT, "watch", "--scheduler", "sge", "--interval", "1", "--outbox", job.outbox,
                           "--smtp", job.server.addr, "--to", job.to,
                           "--log-dir", job.logs, job.id], env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=max_wait)


def test_watch_sends_the_classified_message(workdir, smtp):
    # watch starts while the job is queued: SGE's record gives it the -o/-e files
    job = Job(workdir, smtp, "plain", "echo epoch 1\nsleep 2\nexec {py} -c 'import no_such_module_xyz'")
    proc = _watch(workdir, job)
    assert proc.returncode == 0, proc.stderr
    (_, msg), = job.messages()
    assert_subject(msg, "FAILED", "missing_module", "plain", "job %s" % job.id)
    assert "no_such_module_xyz" in body_of(msg)
    assert re.search(r"Command:\s+\S*job\.sh\s*$", body_of(msg), re.M), body_of(msg)  # the batch script
    assert "qsub job" not in body_of(msg)
    assert job.server.addr in proc.stdout and job.to in proc.stdout, proc.stdout  # where it went


def test_watch_an_unknown_job_id_is_a_usage_error_and_sends_nothing(workdir, smtp):
    class Typo(object):
        id, outbox, server, to = "987654", os.path.join(workdir, "typo-outbox"), smtp, "typo@example.org"
        logs = os.path.join(workdir, "typo-logs")
    began = time.time()
    proc = _watch(workdir, Typo, max_wait=30)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "987654" in proc.stderr, proc.stderr
    assert not [r for r in smtp.received if "typo@example.org" in r[1]]
    assert time.time() - began < 30


def test_watch_a_job_killed_at_h_rt_is_timeout(workdir, jobs):
    # watch starts after the job ended: qacct alone says why (no output files known)
    job = jobs["hrt_plain"]
    proc = _watch(workdir, job, max_wait=150)
    assert proc.returncode == 0, proc.stderr
    (_, msg), = job.messages()
    assert_subject(msg, "TIMEOUT", "walltime", "hrtplain", "job %s" % job.id)
    assert "h_rt" in body_of(msg), body_of(msg)


def test_a_suspend_notice_is_no_time_limit(workdir, smtp):
    """With -notify, `qmod -sj` sends SIGUSR1 before it suspends: not s_rt (the job has
    none), so no WARNING and no TIMEOUT; the child, with no handler, dies of it."""
    job = Job(workdir, smtp, "susp", "exec {py} {gpualert} --smtp {smtp} --to {to} --outbox {outbox} "
              "--log-dir {logs} -- {py} -c \"%s\"" % SLEEPER, ["-notify", "-l", "h_rt=0:1:0"])
    wait_for(lambda: "epoch 1" in _read_logs(job), 60, what="the child's first line\n" + job.output())
    assert _sge("qmod", "-sj", job.id).returncode == 0
    rec = job.wait_accounting(60)
    (_, final), = wait_for(lambda: final_messages(job), 10, what="the message\n" + job.output())
    assert not [m for _, m in job.messages() if m["Subject"].startswith("[gpualert] WARNING")]
    assert "TIMEOUT" not in final["Subject"] and "walltime" not in final["Subject"], final["Subject"]
    assert "SIGUSR1" in final["Subject"], final["Subject"]
    assert rec["exit_status"].split()[0] == str(128 + 10)


# ---- --requeue on SGE: qalter adds hostname=!NODE to the running job, qmod -rj reruns it ----

# nvidia-smi (a stand-in in smi/, on PATH) counts an uncorrected ECC error after the wrapper's
# start sample when the child is told to: the proof a hardware requeue needs (an Xid line is not).
XID_CHILD = ("import os, sys, time\nend = time.time() + 30\nwhile not os.path.exists('smi/asked') and "
             "time.time() < end:\n    time.sleep(0.1)\nif sys.argv[1] == 'ecc':\n"
             "    open('smi/ecc', 'w').write('2')\n"
             "print('NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.', flush=True)\n"
             "sys.exit(1)\n")


def test_the_exclusion_is_added_to_the_users_own_hostname_restriction(workdir):
    """qalter -l hostname=!NODE replaced the job's own -l hostname=: a job asked for two
    hosts and, rescheduled, could run on any other."""
    from _load import load_gpualert
    g = load_gpualert()
    proc = subprocess.run(["qsub", "-terse", "-h", "-r", "y", "-N", "own-hosts", "-o", workdir,
                           "-e", workdir, "-l", "h_rt=600,hostname=vm|gpu99", "-b", "y", "/bin/true"],
                          env=job_env(workdir), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=30)
    assert proc.returncode == 0, proc.stderr
    job = proc.stdout.strip()
    try:
        rec = g.SGE.record(job)
        assert rec["hard resource_list"] == "h_rt=600,hostname=vm|gpu99", rec
        assert g.SGE.requeue([g.sge_exclude_argv(rec, ["gpu03"], job)]) is None
        again = g.SGE.record(job)["hard resource_list"]
        assert again == "h_rt=600,hostname=(vm|gpu99)&!gpu03", again
        assert g.SGE.requeue([g.sge_exclude_argv(g.SGE.record(job), ["gpu03", "gpu17"], job)]) is None
        again = g.SGE.record(job)["hard resource_list"]
        assert again == "h_rt=600,hostname=(vm|gpu99)&!gpu03&!gpu17", again  # not !gpu03 twice
    finally:
        _sge("qdel", job)


def _xid_job(workdir, tag, mode):
    """An SGE job (-r y) whose wrapper runs XID_CHILD `mode` under --requeue hardware.
    -> (job id, its outbox)."""
    folder = os.path.join(workdir, tag)
    os.makedirs(os.path.join(folder, "smi"))
    outbox = os.path.join(folder, "outbox")
    with open(os.path.join(folder, "smi", "nvidia-smi"), "w") as f:
        f.write('#!/bin/sh\nd=$(dirname "$0")\nline="0, NVIDIA A100-SXM4-80GB, 3, 81920, 0, 29, 61.00, '
                '$(cat "$d/ecc" 2>/dev/null || echo 0)"\ntouch "$d/asked"\necho "$line"\n')  # asked: once read
    os.chmod(os.path.join(folder, "smi", "nvidia-smi"), 0o755)
    with open(os.path.join(folder, "child.py"), "w") as f:
        f.write(XID_CHILD)
    script = os.path.join(folder, "job.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\ncd %s\nPATH=%s:$PATH %s %s --sendmail none --outbox %s --requeue hardware -- %s child.py %s\n"
                % (folder, os.path.join(folder, "smi"), sys.executable, SCRIPT, outbox, sys.executable, mode))
    env = dict(job_env(folder), GPUALERT_SENDMAIL="none")
    proc = subprocess.run(["qsub", "-terse", "-V", "-r", "y", "-N", tag, "-o", folder,
                           "-e", folder, "-wd", folder, "-l", "h_rt=600", script], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=30)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip(), outbox


def _first_message(outbox):
    names = wait_for(lambda: [n for n in os.listdir(outbox) if "~claimed~" not in n]
                     if os.path.isdir(outbox) else None, 30, what="the message")
    with open(os.path.join(outbox, names[0]), "rb") as f:
        return BytesParser(policy=policy.default).parse(f)


def test_requeue_an_xid_79_reruns_the_job_without_the_node(workdir):
    job, outbox = _xid_job(workdir, "requeue-xid", "ecc")
    try:
        def excluded():
            text = _sge("qstat", "-j", job).stdout
            found = re.search(r"hard resource_list:\s+(\S+)", text)
            return found and "hostname=!" in found.group(1) and found.group(1)
        resources = wait_for(excluded, 60, what="job %s to be rescheduled without its node" % job)
        assert "h_rt=600" in resources  # the job's own limits kept
        def waiting_again():  # Rq, not running: qmod -rj comes just after the qalter seen above
            listing = [line.split() for line in _sge("qstat").stdout.splitlines() if line.split()[:1] == [job]]
            return listing and "r" not in listing[0][4] and listing
        wait_for(waiting_again, 30, what="job %s to wait again (Rq)" % job)
        node = resources.split("hostname=!")[1].split("&")[0]
        msg = _first_message(outbox)
        assert "gpu_hardware on %s: requeued without %s" % (node, node) in msg["Subject"], msg["Subject"]
    finally:
        _sge("qdel", job)


def test_requeue_an_xid_line_alone_is_reported_not_rerun(workdir):
    # issue 34, 4: a printed Xid line, with nvidia-smi showing nothing, reran the job elsewhere
    job, outbox = _xid_job(workdir, "requeue-xid-line", "line")
    try:
        msg = _first_message(outbox)
        assert "not requeued: only the job's own output says so" in msg["Subject"], msg["Subject"]
        assert "hostname=!" not in _sge("qstat", "-j", job).stdout
    finally:
        _sge("qdel", job)

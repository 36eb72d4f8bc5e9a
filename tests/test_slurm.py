"""The cluster part against a REAL Slurm (CI runs .ci/slurm-setup.sh first).

Skipped unless the cluster is the one .ci/slurm-setup.sh configured (its marker holds the
checksum of the slurm.conf in place); there, a node that is not up fails the tests.

Time budget (about 3 minutes): Slurm's smallest --time is one minute (seconds round up)
and slurmctld checks limits every 30 s (a fixed PERIODIC_TIMEOUT), so a --time=1 job gets
SIGTERM 60-90 s after it starts; KillWait=10 (set by the setup script) sends SIGKILL 10 s
later. `--signal=B:TERM@N` would not be faster (it "may be sent up to 60 seconds earlier
than specified" and still counts from the one-minute limit). A requeued job is held for
the credential lifetime plus 1 s (AuthInfo=cred_expire, 120 s by default, 10 s here), then
waits for the next scheduling pass (bf_interval, sched_interval: 2 s here). So the jobs
that wait on these timers (two single time limits, and a job requeued at its first limit
that meets its second) are submitted once, as the test session starts (start_early, called
by conftest.py), and the other tests, of this module and the others, run while they wait.

What the jobs observe is recorded by a probe: a small Python program that loads the
cluster code, reads the time limit at start and, on SIGTERM, calls query_end_reason
exactly as the wrapper does, then writes what it learnt to a JSON file.
"""
import glob
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap
import time
from email import policy
from email.parser import BytesParser

import pytest

from _load import load_gpualert
from wrapper_helpers import wait_for

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "gpualert.py")
CLUSTER_PATH = SCRIPT

# The marker .ci/slurm-setup.sh leaves once its single-node cluster is up: the checksum of
# the slurm.conf it wrote. These tests submit jobs and need its partitions, so they run only
# while that configuration is the one in place, never against a cluster they did not set up.
CI_MARKER = "/etc/slurm/gpualert-ci-marker"
SLURM_CONF = "/etc/slurm/slurm.conf"


def _ci_cluster_here():
    try:
        with open(CI_MARKER) as marker, open(SLURM_CONF, "rb") as conf:
            return marker.read().strip() == hashlib.sha256(conf.read()).hexdigest()
    except OSError:
        return False


pytestmark = pytest.mark.skipif(
    shutil.which("sbatch") is None or not _ci_cluster_here(),
    reason="not the single-node cluster .ci/slurm-setup.sh configures (%s missing or not "
           "matching %s): no jobs go into a cluster these tests did not set up"
           % (CI_MARKER, SLURM_CONF))


cluster = load_gpualert()

PROBE = textwrap.dedent("""\
    import json, os, signal, sys, time
    sys.path.insert(0, os.path.join(os.path.dirname(sys.argv[1]), "tests"))
    from _load import load_module
    c = load_module(sys.argv[1], "c")
    out = sys.argv[2]
    start = time.time()
    sched = c.detect_scheduler(os.environ)
    limit = c.read_time_limit(sched)

    def on_term(signum, frame):
        t = time.time()
        reason, evidence = c.query_end_reason(sched, start, t, time_limit=limit)
        record = {"reason": reason, "evidence": evidence, "term_at": t, "start": start,
                  "asked_s": time.time() - t, "sched": sched, "limit": limit}
        with open(out + ".tmp", "w") as f:
            json.dump(record, f)
        os.replace(out + ".tmp", out)
        sys.exit(0)

    signal.signal(signal.SIGTERM, on_term)
    with open(out + ".started", "w") as f:
        f.write(str(start))
    while True:
        time.sleep(0.2)
    """)


# ---- helpers ----

def _slurm(*argv, **kw):
    return subprocess.run(list(argv), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=30, **kw)


def sbatch(*args, **kw):
    proc = _slurm("sbatch", "--parsable", *args, **kw)
    assert proc.returncode == 0, "sbatch failed: %s" % proc.stderr
    return proc.stdout.strip().split(";")[0]


def job_record(job_id):
    recs = cluster.parse_scontrol(_slurm("scontrol", "show", "job", job_id).stdout)  # free text whole
    return recs[0] if recs else {}


def job_ended(job_id):
    rec = job_record(job_id)
    return rec if rec.get("JobState") in cluster.SLURM_FINAL_STATES else None


def read_json(path):
    if not os.path.exists(path):
        return None
    with open(path) as f:
        return json.load(f)


class Probe(object):
    """A probe job: submit it, wait for it to start, read what it saw on SIGTERM."""

    def __init__(self, workdir, name, *sbatch_args):
        self.out = os.path.join(workdir, name + ".json")
        script = os.path.join(workdir, "probe.py")
        if not os.path.exists(script):
            with open(script, "w") as f:
                f.write(PROBE)
        cmd = "%s %s %s %s" % (sys.executable, script, CLUSTER_PATH, self.out)
        self.job_id = sbatch("-J", name, "-o", os.path.join(workdir, "%x-%j.out"),
                             *(list(sbatch_args) + ["--wrap", cmd]))

    def wait_started(self, timeout=30):
        return wait_for(lambda: os.path.exists(self.out + ".started"), timeout,
                        what="job %s to start" % self.job_id)

    def wait_result(self, timeout):
        return wait_for(lambda: read_json(self.out), timeout,
                        what="job %s's SIGTERM record" % self.job_id)


_EARLY = {}  # the timer-bound jobs submitted as the session started: workdir, jobs


def start_early(tmp_path_factory):
    """Called by conftest.py as the session starts, when this module's tests are selected:
    the jobs that wait on Slurm's timers (about 3 minutes of them) run out while the other
    modules' tests run, not after them. Where the cluster is not usable, nothing is
    submitted, and this module skips or fails as it does on its own."""
    if shutil.which("sbatch") is None or not _ci_cluster_here() or _node_state() is None:
        return
    workdir = str(tmp_path_factory.mktemp("slurm"))
    _EARLY.update(workdir=workdir, jobs=_submit_long_jobs(workdir))


def _node_state():
    state = _slurm("sinfo", "-h", "-N", "-o", "%t").stdout.split()
    return state[0] if state and state[0] in ("idle", "mix", "alloc") else None


@pytest.fixture(scope="module")
def workdir(tmp_path_factory):
    return _EARLY.get("workdir") or str(tmp_path_factory.mktemp("slurm"))


@pytest.fixture(scope="module", autouse=True)
def cluster_up():
    """Fail (not skip) when Slurm is installed but its node is not usable."""
    assert _node_state(), ("Slurm is installed but no node is up (sinfo: %r); run .ci/slurm-setup.sh"
                           % _slurm("sinfo", "-h", "-N", "-o", "%t").stdout.split())


@pytest.fixture(scope="module", autouse=True)
def long_jobs(workdir, cluster_up):
    """The jobs that wait on Slurm's timers: submitted as the session started (start_early),
    else before this module's first test, so they run while other tests do."""
    jobs = _EARLY.get("jobs") or _submit_long_jobs(workdir)
    yield jobs
    for job in jobs.values():
        _slurm("scancel", _job_id(job))


def _submit_long_jobs(workdir):
    jobs = {"walltime": Probe(workdir, "walltime", "--time=1"), "e2e": _submit_e2e(workdir),
            # two time limits and Slurm's hold between them: the longest wait of the module
            "wall2": _requeue_job(workdir, "wall2", "--requeue walltime --max-requeues 1", "slow",
                                  "--time=1")}
    jobs["walltime"].wait_started()
    # running before any other test takes the free CPUs
    for name in ("e2e", "wall2"):
        wait_for(lambda: job_record(_job_id(jobs[name])).get("JobState") == "RUNNING", 30,
                 what="the %s job to start" % name)
    return jobs


def _job_id(job):
    """The id of a long job: a Probe, an id, or (id, folder)."""
    if isinstance(job, Probe):
        return job.job_id
    return job if isinstance(job, str) else job[0]


def _submit_e2e(workdir):
    outbox = os.path.join(workdir, "outbox")
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(workdir, "state"),
               XDG_CONFIG_HOME=os.path.join(workdir, "config"))  # GPUALERT_SENDMAIL below
    for key in list(env):
        if key.startswith("GPUALERT_"):
            del env[key]
    env["GPUALERT_SENDMAIL"] = "none"  # the message is read from the outbox, whatever the host has
    child = "%s -c 'import time; print(\"epoch 1\", flush=True); time.sleep(600)'" % sys.executable
    cmd = "%s %s --sendmail none --outbox %s -- %s" % (sys.executable, SCRIPT, outbox, child)  # never the host's MTA
    return sbatch("-J", "e2e", "--time=1", "-o", os.path.join(workdir, "%x-%j.out"),
                  "--wrap", cmd, env=env)


# ---- tests that run while the one-minute jobs wait ----

def test_scancel_is_cancelled(workdir):
    probe = Probe(workdir, "cancelme")
    probe.wait_started()
    wait_for(lambda: job_record(probe.job_id).get("JobState") == "RUNNING", 30,
             what="job %s to be RUNNING" % probe.job_id)
    assert _slurm("scancel", probe.job_id).returncode == 0
    seen = probe.wait_result(20)
    assert seen["reason"] == "cancelled", seen
    assert "JobState=COMPLETING Reason=None" in seen["evidence"]
    assert seen["asked_s"] < 3.0
    final = wait_for(lambda: job_ended(probe.job_id), 30, what="the cancelled job to end")
    assert final["JobState"] == "CANCELLED"
    sched = {"kind": "slurm", "job_id": probe.job_id}
    assert cluster.query_end_reason(sched, 0, time.time())[0] == "cancelled"


def test_scancel_batch_sigterm_reaches_the_child_of_an_execd_wrapper(workdir):
    """`scancel --batch --signal=TERM` (and --signal=B:TERM@N) signals the batch shell alone:
    here gpualert, which the script execs. Seen on 22.05: the sender is slurmstepd, as at a
    time limit, but the job stays RUNNING. The child must get the SIGTERM to save its
    checkpoint (it was withheld, then SIGKILLed), and gpualert exits with its status."""
    folder = os.path.join(workdir, "batch-term")
    os.makedirs(folder)
    code = ("import signal, sys, time\n"
            "signal.signal(signal.SIGTERM, lambda s, f: (print('got SIGTERM', flush=True), sys.exit(3)))\n"
            "print('working', flush=True)\n"
            "time.sleep(120)\n")
    with open(os.path.join(folder, "child.py"), "w") as f:
        f.write(code)
    with open(os.path.join(folder, "job.sh"), "w") as f:
        f.write("#!/bin/bash\nexec %s %s --dry-run --quiet --log-dir %s -- %s %s\n" % (
            sys.executable, SCRIPT, os.path.join(folder, "logs"), sys.executable,
            os.path.join(folder, "child.py")))
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(folder, "state"),
               XDG_CONFIG_HOME=os.path.join(folder, "config"), GPUALERT_SENDMAIL="none")
    out = os.path.join(folder, "job.out")
    job = sbatch("-J", "batch-term", "-o", out, os.path.join(folder, "job.sh"), env=env)
    try:
        wait_for(lambda: os.path.exists(out) and "working" in open(out).read(), 60,
                 what="job %s's child to start" % job)
        assert _slurm("scancel", "--batch", "--signal=TERM", job).returncode == 0
        final = wait_for(lambda: job_ended(job), 60, what="job %s to end" % job)
    finally:
        _slurm("scancel", job)
    with open(out) as f:
        text = f.read()
    assert "got SIGTERM" in text, text
    assert final["ExitCode"] == "3:0", (final, text)
    logs = glob.glob(os.path.join(folder, "logs", "*", "output*.log"))
    with open(logs[0]) as f:
        assert "signals received: SIGTERM (from slurmstepd)" in f.read()


def test_preemption_is_preempted(workdir):
    if "low" not in _slurm("sinfo", "-h", "-o", "%R").stdout.split():
        pytest.fail("no `low` partition: this Slurm was not set up by .ci/slurm-setup.sh")
    idle = int(_slurm("sinfo", "-h", "-o", "%C").stdout.split("/")[1])
    assert idle >= 1, "no idle CPU left for the preemption test"
    victim = Probe(workdir, "victim", "-p", "low", "-c", str(idle))
    victim.wait_started()
    urgent = sbatch("-p", "urgent", "-c", "1", "-o", "/dev/null", "--wrap", "sleep 1")
    seen = victim.wait_result(30)
    assert seen["reason"] == "preempted", seen
    # during the SIGTERM phase scontrol shows PreemptTime; on a loaded node the probe may ask
    # after the job's state became PREEMPTED: both are Slurm's own word for it
    assert "PreemptTime=" in seen["evidence"] or "JobState=PREEMPTED" in seen["evidence"], seen
    final = wait_for(lambda: job_ended(victim.job_id), 30, what="the preempted job to end")
    assert final["JobState"] == "PREEMPTED"
    wait_for(lambda: job_ended(urgent), 30, what="the urgent job")


def test_watch_follows_a_failing_job(workdir):
    cmd = "echo about to fail; %s -c 'raise SystemExit(3)'" % sys.executable
    job = sbatch("-J", "failing", "-o", os.path.join(workdir, "%x-%j-%N.out"), "--wrap", cmd)
    done = []
    t0 = time.time()
    results = cluster.watch_jobs([job], interval=1, on_done=done.append, max_wait=60)
    assert time.time() - t0 < 30
    (info,) = results
    assert done == results
    assert (info["state"], info["exit_code"], info["done"]) == ("FAILED", 3, True)
    assert info["facts"] == {"scheduler_state": "FAILED", "exit_code": 3}
    host = job_record(job)["BatchHost"]
    assert info["stdout"] == os.path.join(workdir, "failing-%s-%s.out" % (job, host))
    with open(info["stdout"]) as f:
        assert "about to fail" in f.read()


def test_watch_an_unknown_job_ends_unknown():
    results = cluster.watch_jobs(["987654321"], interval=0.2, unknown_retries=2, max_wait=30)
    assert results[0]["state"] == "UNKNOWN"


def test_read_time_limit_of_a_running_job(workdir):
    # a job of its own: the one-minute jobs may have ended long before this module runs
    probe = Probe(workdir, "limit", "--time=1")
    try:
        probe.wait_started()
        limit = cluster.read_time_limit({"kind": "slurm", "job_id": probe.job_id})
        assert limit["limit_s"] == 60.0 and limit["end_time"] is not None, limit
    finally:
        _slurm("scancel", probe.job_id)


# ---- the one-minute jobs ----

def test_time_limit_is_walltime(long_jobs):
    probe = long_jobs["walltime"]
    seen = probe.wait_result(150)
    assert seen["reason"] == "walltime", seen
    assert "Reason=TimeLimit" in seen["evidence"]
    assert seen["limit"]["limit_s"] == 60.0
    assert 55 <= seen["term_at"] - seen["start"] <= 120, seen
    assert seen["asked_s"] < 3.0
    final = wait_for(lambda: job_ended(probe.job_id), 30, what="the timed-out job to end")
    assert (final["JobState"], final["Reason"]) == ("TIMEOUT", "TimeLimit")
    (info,) = cluster.poll_job(probe.job_id)
    assert info["facts"]["scheduler_reason"] == "walltime"


def test_end_to_end_time_limit_message(workdir, long_jobs):
    job = long_jobs["e2e"]
    final = wait_for(lambda: job_ended(job), 150, step=1, what="the gpualert job to end")
    assert final["JobState"] == "TIMEOUT"
    outbox = os.path.join(workdir, "outbox")
    # Slurm calls the job TIMEOUT at its SIGTERM; the wrapper then still has KillWait to ask why
    # and write the full message over the provisional stand-in it holds claimed: wait for that.
    wait_for(lambda: _outbox_settled(outbox), 30, what="the full message to replace the stand-in")
    messages = sorted(os.listdir(outbox)) if os.path.isdir(outbox) else []
    assert len(messages) == 1, (messages, _job_output(workdir, "e2e", job))
    path = os.path.join(outbox, messages[0])
    with open(path, "rb") as f:
        msg = BytesParser(policy=policy.default).parse(f)
    body = msg.get_body(("plain",)).get_content() if msg.get_body(("plain",)) else ""
    # (on failure: the body's notes say what the scheduler answered, the job's output the rest)
    assert "TIMEOUT" in msg["Subject"], (msg["Subject"], body, _job_output(workdir, "e2e", job))
    assert "walltime" in (msg["Subject"] + body).lower()
    assert "of 1m allowed" in body  # the limit read at the start, on a Slurm without SLURM_JOB_END_TIME too
    # EndTime is when slurmctld sent SIGTERM; the message must exist before SIGKILL (KillWait=10)
    term_at = cluster.parse_slurm_time(final["EndTime"])
    latency = os.path.getmtime(path) - term_at
    assert -1.0 <= latency <= 10.0, "SIGTERM to notification took %.1fs" % latency


def _outbox_settled(outbox):
    """One message in the outbox, no longer held (claimed) by the run that spooled it."""
    names = os.listdir(outbox) if os.path.isdir(outbox) else []
    return len(names) == 1 and cluster.CLAIM_MARK not in names[0]


def _job_output(workdir, name, job_id):
    path = os.path.join(workdir, "%s-%s.out" % (name, job_id))
    try:
        with open(path) as f:
            return f.read()[-2000:]
    except OSError:
        return "(no output file)"


def test_watch_command_sends_the_classified_message(workdir):
    job = sbatch("-J", "watchme", "-o", os.path.join(workdir, "%x-%j.out"),
                 "--wrap", "%s -c \"print('epoch 1'); import no_such_module_xyz\"" % sys.executable)
    outbox = os.path.join(workdir, "watch-outbox")
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(workdir, "watch-state"),
               GPUALERT_SENDMAIL="none")
    proc = subprocess.run([sys.executable, SCRIPT, "watch", "--interval", "1", "--outbox", outbox,
                           "--log-dir", os.path.join(workdir, "watch-logs"), job],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    assert proc.returncode == 0, proc.stderr
    (name,) = os.listdir(outbox)
    with open(os.path.join(outbox, name), "rb") as f:
        msg = BytesParser(policy=policy.default).parse(f)
    assert msg["Subject"].startswith("[gpualert] FAILED job %s watchme: missing_module" % job), msg["Subject"]
    assert "job %s" % job in msg["Subject"]


# ---- watch: bad job ids fail fast; an ended job is reported at once, with its script ----

def _watch_cli(workdir, tag, *argv, timeout=60):
    outbox = os.path.join(workdir, tag + "-outbox")
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(workdir, tag + "-state"),
               GPUALERT_SENDMAIL="none")
    proc = subprocess.run([sys.executable, SCRIPT, "watch", "--outbox", outbox,
                           "--log-dir", os.path.join(workdir, tag + "-logs")] + list(argv),
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout)
    return proc, outbox


def test_watch_an_unknown_job_id_is_a_usage_error_and_sends_nothing(workdir):
    # a typo: Slurm says "Invalid job id specified"; the default interval (60 s) must not matter
    proc, outbox = _watch_cli(workdir, "typo", "--scheduler", "slurm", "987654321", timeout=30)
    assert proc.returncode == 2, (proc.stdout, proc.stderr)
    assert "987654321" in proc.stderr and "Invalid job id" in proc.stderr, proc.stderr
    assert not os.path.isdir(outbox) or os.listdir(outbox) == []


def test_watch_reports_an_ended_job_at_once_with_its_script_and_where_the_message_went(workdir):
    script = os.path.join(workdir, "train_script.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\necho epoch 1\nexec %s -c 'import no_such_module_xyz'\n" % sys.executable)
    job = sbatch("-J", "scripted", "-o", os.path.join(workdir, "%x-%j.out"), script)
    wait_for(lambda: job_ended(job), 60, what="job %s to end" % job)
    # a 10-minute interval: only a poll at once can finish within the timeout
    proc, outbox = _watch_cli(workdir, "scripted", "--interval", "600", job, timeout=60)
    assert proc.returncode == 0, proc.stderr
    (name,) = os.listdir(outbox)
    assert os.path.join(outbox, name) in proc.stdout, proc.stdout  # where the message went
    with open(os.path.join(outbox, name), "rb") as f:
        msg = BytesParser(policy=policy.default).parse(f)
    body = msg.get_body(("plain",)).get_content()
    assert re.search(r"Command:\s+%s\n" % re.escape(script), body), body
    assert "sbatch job" not in body


# ---- --requeue by cause, for real (Slurm holds a requeued job for AuthInfo=cred_expire) ----

REQUEUE_TRAIN = textwrap.dedent("""\
    import os, sys, time
    attempt, resume = os.environ["GPUALERT_ATTEMPT"], os.environ["GPUALERT_RESUME"]
    print("ATTEMPT=%s RESUME=%s" % (attempt, resume), flush=True)
    if attempt != "1" and sys.argv[1] == "ckpt":  # resumed after the preemption: done
        sys.exit(0)
    if sys.argv[1] == "keyerror":
        {}["x"]
    if sys.argv[1] == "xid":  # nvidia-smi (smi/ on PATH) counts an ECC error: the wrapper's proof
        end = time.time() + 30
        while not os.path.exists("smi/asked") and time.time() < end:
            time.sleep(0.1)  # the wrapper's start sample first
        with open("smi/ecc", "w") as f:
            f.write("2")
    if sys.argv[1] in ("xid", "xid-line"):
        print("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.", flush=True)
        sys.exit(1)
    if sys.argv[1] == "walltime-line":  # a time-limit line of its own, well inside the limit
        print("*** JOB %s ON vm CANCELLED AT 2026-12-04T15:04:51 DUE TO TIME LIMIT ***"
              % os.environ["SLURM_JOB_ID"], flush=True)
        sys.exit(1)
    os.makedirs("ck", exist_ok=True)
    for step in range(1000, 10 ** 6, 1000):
        with open("ck/step_%d.pt.tmp" % step, "w") as f:
            f.write("weights")
        os.replace("ck/step_%d.pt.tmp" % step, "ck/step_%d.pt" % step)
        print("step %d loss 0.5" % step, flush=True)
        time.sleep(0.5 if sys.argv[1] == "ckpt" else 5)
    """)


def _requeue_job(workdir, tag, flags, mode, *sbatch_args):
    """A batch script that runs the real gpualert with `flags` around REQUEUE_TRAIN `mode`,
    in its own folder (its state, outbox and checkpoints). -> (job id, folder)."""
    folder = os.path.join(workdir, tag)
    os.makedirs(folder)
    with open(os.path.join(folder, "train.py"), "w") as f:
        f.write(REQUEUE_TRAIN)
    os.makedirs(os.path.join(folder, "smi"))  # a stand-in nvidia-smi: one GPU, its ECC count in smi/ecc
    with open(os.path.join(folder, "smi", "nvidia-smi"), "w") as f:
        f.write('#!/bin/sh\nd=$(dirname "$0")\nline="0, NVIDIA A100-SXM4-80GB, 3, 81920, 0, 29, 61.00, '
                '$(cat "$d/ecc" 2>/dev/null || echo 0)"\ntouch "$d/asked"\necho "$line"\n')  # asked: once read
    os.chmod(os.path.join(folder, "smi", "nvidia-smi"), 0o755)
    script = os.path.join(folder, "job.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\ncd %s\nPATH=%s:$PATH exec %s %s --sendmail none --outbox %s %s -- %s train.py %s\n" % (
            folder, os.path.join(folder, "smi"), sys.executable, SCRIPT, os.path.join(folder, "outbox"),
            flags, sys.executable, mode))
    env = dict((k, v) for k, v in os.environ.items() if not k.startswith("GPUALERT_"))
    env.update(XDG_STATE_HOME=os.path.join(folder, "state"), GPUALERT_SENDMAIL="none")
    return sbatch("-J", tag, "-o", os.path.join(folder, "out-%j.txt"), *(list(sbatch_args) + [script]),
                  env=env), folder


def _settled_messages(folder, count):
    """The outbox's messages once there are `count` and none is held by a live run."""
    outbox = os.path.join(folder, "outbox")
    names = sorted(os.listdir(outbox)) if os.path.isdir(outbox) else []
    if len(names) != count or any(cluster.CLAIM_MARK in n for n in names):
        return None
    found = []
    for name in names:
        with open(os.path.join(outbox, name), "rb") as f:
            found.append(BytesParser(policy=policy.default).parse(f))
    return sorted(found, key=lambda m: m["Subject"])


def _job_text(folder, job_id):
    try:
        with open(os.path.join(folder, "out-%s.txt" % job_id)) as f:
            return f.read()
    except OSError:
        return ""


def test_requeue_a_key_error_is_not_requeued_and_says_why(workdir):
    job, folder = _requeue_job(workdir, "keyerror", "--requeue all", "keyerror")
    final = wait_for(lambda: job_ended(job), 60, what="the KeyError job to end")
    assert (final["JobState"], final["Restarts"]) == ("FAILED", "0"), final
    (msg,) = wait_for(lambda: _settled_messages(folder, 1), 30, what="its message")
    assert "traceback: not requeued (a rerun would fail the same way)" in msg["Subject"], msg["Subject"]


def test_requeue_an_xid_79_leaves_a_job_pending_without_the_node(workdir):
    job, folder = _requeue_job(workdir, "xid", "--requeue hardware", "xid")
    final = wait_for(lambda: job_ended(job), 60, what="the Xid job to end")
    node = final["BatchHost"]
    (msg,) = wait_for(lambda: _settled_messages(folder, 1), 30, what="its message")
    found = re.search(r"requeued as job (\d+) without %s" % re.escape(node), msg["Subject"])
    assert found, (msg["Subject"], _job_text(folder, job))
    new = found.group(1)
    try:
        rec = job_record(new)
        assert rec["JobState"] == "PENDING" and node in rec["ExcNodeList"].split(","), rec
        assert rec["UserId"] == final["UserId"]
    finally:
        _slurm("scancel", new)


def test_a_resubmission_carries_the_options_the_job_was_submitted_with(workdir):
    """Resubmit the job as submitted: a held job with the options users set on sbatch's
    command line, resubmitted as a hardware requeue does (Slurm.resubmit, here without the
    only node: submitted held and released), shows the same options in its own record; the
    script's #SBATCH lines come back with the script. --exclusive, --nice, --comment,
    --mail-*, --time-min and --deadline were lost."""
    folder = os.path.join(workdir, "options")
    os.makedirs(folder)
    script = os.path.join(folder, "job.sh")
    with open(script, "w") as f:
        f.write("#!/bin/sh\n#SBATCH --signal=B:USR1@90\ntrue\n")
    asked = ["--exclusive", "--nice=50", "--comment=lr=3e-4 bs=32", "--mail-type=END,FAIL",
             "--mail-user=bob@example.com", "--time=10:00", "--time-min=5:00",
             "--deadline=2030-01-01T00:00:00", "--mem-per-cpu=100M", "--ntasks-per-node=2",
             "--partition=low", "--no-requeue"]
    job = sbatch("--hold", "-o", os.path.join(folder, "out-%j.txt"), *(asked + [script]))
    new = None
    try:
        rec = cluster.SLURM.record(job, whole=True)  # as plan_requeue reads it
        assert rec["Comment"] == "lr=3e-4 bs=32", rec
        node = _slurm("sinfo", "-h", "-N", "-o", "%N").stdout.split()[0]
        new, command, why = cluster.SLURM.resubmit(rec, [node], [job], folder)
        assert new, (command, why)
        again = job_record(new)
        for key in ("Nice", "OverSubscribe", "Comment", "MailUser", "MailType", "TimeLimit",
                    "TimeMin", "Deadline", "MinMemoryCPU", "NtasksPerN:B:S:C", "Partition",
                    "Requeue", "NumTasks", "StdOut"):
            assert again.get(key) == rec.get(key), (key, again.get(key), rec.get(key), command)
        assert node in again["ExcNodeList"]
        with open(os.path.join(folder, "batch_script.%s" % job)) as f:
            assert "#SBATCH --signal=B:USR1@90" in f.read()
    finally:
        _slurm("scancel", job)
        if new:
            _slurm("scancel", new)


@pytest.mark.parametrize("mode,flags,words", [
    ("xid-line", "--requeue hardware", "neither nvidia-smi nor Slurm shows a fault"),
    ("walltime-line", "--requeue walltime", "Slurm does not confirm a time limit")])
def test_requeue_a_line_the_job_prints_is_no_proof(workdir, mode, flags, words):
    # issue 34, 4: a job printing Slurm's time-limit line, or an Xid, and exiting at once was
    # requeued or resubmitted; Slurm (and nvidia-smi) know better
    job, folder = _requeue_job(workdir, mode, flags, mode)
    final = wait_for(lambda: job_ended(job), 60, what="the %s job to end" % mode)
    assert (final["JobState"], final["Restarts"]) == ("FAILED", "0"), final
    (msg,) = wait_for(lambda: _settled_messages(folder, 1), 30, what="its message")
    assert "not requeued: only the job's own output says so; %s" % words in msg["Subject"], \
        (msg["Subject"], _job_text(folder, job))
    assert "Resubmit:" in msg.get_body(("plain",)).get_content()


def test_requeue_a_preempted_job_resumes_from_its_checkpoint_in_one_thread(workdir):
    idle = int(_slurm("sinfo", "-h", "-p", "low", "-o", "%C").stdout.split("/")[1])
    assert idle >= 3, "too few idle CPUs left for the preemption test"
    # One CPU stays free: the requeued wall2 job may be in its hold now and take it when it
    # comes back; a victim holding every CPU would then wait, requeued, for wall2 to end. The
    # urgent job asks for two, so it still lacks CPUs and preempts the victim.
    job, folder = _requeue_job(workdir, "victim2", "--requeue preempted", "ckpt",
                               "-p", "low", "-c", str(idle - 1))
    ck = os.path.join(folder, "ck")
    wait_for(lambda: os.path.isdir(ck) and len(os.listdir(ck)) >= 2, 60, what="checkpoints")
    urgent = sbatch("-p", "urgent", "-c", "2", "-o", "/dev/null", "--wrap", "sleep 1")
    wait_for(lambda: job_record(job).get("Restarts") == "1", 60, what="the requeue",
             step=1)
    assert job_record(job)["JobState"] in ("PENDING", "CONFIGURING", "RUNNING", "COMPLETING", "COMPLETED")
    first, second = wait_for(lambda: _settled_messages(folder, 2), 300, step=2,
                             what="attempt 2 (Slurm holds a requeued job cred_expire + 1 s)")
    wait_for(lambda: job_ended(urgent), 30, what="the urgent job")
    attempt1 = [m for m in (first, second) if "(attempt 1)" in m["Subject"]][0]
    attempt2 = [m for m in (first, second) if "(attempt 2)" in m["Subject"]][0]
    newest = max(os.listdir(ck), key=lambda n: int(re.sub(r"\D", "", n)))
    assert "requeued, resumes from ck/%s" % newest in attempt1["Subject"], attempt1["Subject"]
    assert "SUCCESS" in attempt2["Subject"]
    assert "ATTEMPT=2 RESUME=%s" % os.path.join(ck, newest) in _job_text(folder, job)
    assert attempt2["References"].split()[0] == attempt1["Message-ID"]
    assert "1: preempted" in attempt2.get_body(("plain",)).get_content()


def test_requeue_a_job_hitting_its_time_limit_twice_runs_two_attempts(long_jobs):
    job, folder = long_jobs["wall2"]
    messages = wait_for(lambda: _settled_messages(folder, 2), 420, step=2,
                        what="two time limits and Slurm's hold between them")
    final = wait_for(lambda: job_ended(job), 60, what="the job to end")
    assert (final["JobState"], final["Restarts"]) == ("TIMEOUT", "1"), final
    # Slurm starts the output file afresh for the rerun: the attempts are counted by their records
    runs = glob.glob(os.path.join(folder, "state", "gpualert", "runs", "*-slurm-%s-*" % job, "run.json"))
    attempts = sorted(read_json(path)["requeue"]["attempt"] for path in runs)
    assert attempts == [1, 2], runs
    assert "ATTEMPT=2 RESUME=%s" % os.path.join(folder, "ck") in _job_text(folder, job)
    subjects = [m["Subject"] for m in messages]
    assert any("(attempt 1): requeued" in s for s in subjects), subjects
    assert any("(attempt 2): requeue budget used (1 of 1): not requeued" in s for s in subjects), subjects


def test_sruns_own_memory_is_labelled_so_never_the_jobs(workdir):
    """`gpualert -- srun python ...`: the task (300 MiB) runs under slurmstepd, so the process
    tree gpualert samples is srun's alone (about 9 MiB, 0 s of CPU). Shown as the job's
    "Peak memory, process tree" before; now every such row says it is srun's own."""
    logs = os.path.join(workdir, "srun-logs")
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(workdir, "state"),
               XDG_CONFIG_HOME=os.path.join(workdir, "config"), GPUALERT_SENDMAIL="none")
    task = "b = bytearray(300 << 20); import time; time.sleep(2)"
    cmd = "%s %s --dry-run --log-dir %s -- srun %s -c '%s'" % (sys.executable, SCRIPT, logs,
                                                            sys.executable, task)
    job = sbatch("-J", "srun-mem", "-o", os.path.join(workdir, "%x-%j.out"), "--wrap", cmd, env=env)
    wait_for(lambda: glob.glob(os.path.join(logs, "*", "*.eml")), 60, step=0.5,
             what="job %s's message" % job)
    with open(glob.glob(os.path.join(logs, "*", "*.eml"))[0], "rb") as f:
        body = BytesParser(policy=policy.default).parse(f).get_body(("plain",)).get_content()
    rows = [line.strip() for line in body.splitlines() if line.strip().startswith(("Peak", "CPU time"))]
    assert rows and all("(srun's own)" in line.split(":")[0] for line in rows), body
    assert "not counted here" in body and "sacct -j %s " % job in body

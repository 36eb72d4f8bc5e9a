"""Running the real gpualert.py in a subprocess, the way users do, in an isolated home."""
import json
import os
import subprocess
import sys
import glob
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "gpualert.py")
PY = sys.executable


def isolated_env(tmp, **extra):
    """An environment whose state, config and outbox live under `tmp`, with no sendmail
    (GPUALERT_SENDMAIL=none: the host's own sendmail, if it has one, is never used)."""
    env = dict(os.environ)
    for key in list(env):
        if key.startswith(("GPUALERT_", "SLURM_", "PBS_", "LSB_", "PYTHONUNBUF", "PYTHONFAULT")):
            del env[key]
    env.update(XDG_STATE_HOME=os.path.join(str(tmp), "state"),
               XDG_CONFIG_HOME=os.path.join(str(tmp), "config"),
               HOME=str(tmp), PATH="/usr/bin:/bin", GPUALERT_SENDMAIL="none")
    env.update(extra)
    if any(key.startswith("SLURM_") for key in extra):  # a pretend job: the host's Slurm
        env["PATH"] = _no_scheduler_bin(tmp) + os.pathsep + env["PATH"]  # must not answer
    return env


def _no_scheduler_bin(tmp):
    """Commands that answer like a scheduler that does not know the job (exit 1), so a test
    with a made-up SLURM_JOB_ID never reads another job of a real cluster on this host."""
    folder = os.path.join(str(tmp), "no-scheduler-bin")
    os.makedirs(folder, exist_ok=True)
    for name in ("scontrol", "squeue", "sacct", "sinfo", "sbatch", "scancel"):
        path = os.path.join(folder, name)
        with open(path, "w") as handle:
            handle.write("#!/bin/sh\necho \"%s: error: Invalid job id specified\" >&2\nexit 1\n" % name)
        os.chmod(path, 0o755)
    return folder


def run_gpualert(tmp, args, env=None, timeout=60, **kw):
    """-> CompletedProcess with bytes stdout/stderr."""
    return subprocess.run([PY, SCRIPT] + list(args), env=env or isolated_env(tmp),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout,
                          cwd=str(tmp), **kw)


def only(pattern):
    found = glob.glob(pattern)
    assert len(found) == 1, (pattern, found)
    return found[0]


def run_dir(tmp):
    return os.path.dirname(only(os.path.join(str(tmp), "logs", "*", "output*.log")))


def run_json(tmp):
    with open(os.path.join(run_dir(tmp), "run.json")) as handle:
        return json.load(handle)


def log_text(tmp):
    with open(only(os.path.join(str(tmp), "logs", "*", "output*.log")), "rb") as handle:
        return handle.read()


def outbox_messages(tmp, outbox="outbox"):
    return sorted(glob.glob(os.path.join(str(tmp), outbox, "*.eml")))


def child(code):
    """argv of a Python child running `code`."""
    return [PY, "-c", code]


def base(tmp):
    """Flags that keep a run's log and outbox inside the test's folder."""
    return ["--log-dir", str(tmp / "logs"), "--outbox", str(tmp / "outbox")]


def closed_port():
    """A loopback port nothing listens on (bound, then closed)."""
    import socket
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


#: A child that counts the signals it receives (any of six), waits a second for more,
#: prints COUNT=n and exits 5: a signal must reach it exactly once.
SIGNAL_COUNTER = (
    "import signal, sys, time\n"
    "seen = []\n"
    "def on(sig, frame):\n"
    "    seen.append(sig)\n"
    "for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1,\n"
    "          signal.SIGUSR2):\n"
    "    signal.signal(s, on)\n"
    "print('ready', flush=True)\n"
    "deadline = time.time() + 20\n"
    "while time.time() < deadline and not seen:\n"
    "    time.sleep(0.05)\n"
    "time.sleep(1.0)\n"
    "print('COUNT=%d' % len(seen), flush=True)\n"
    "sys.exit(5)\n")


def wait_for(predicate, timeout, step=0.5, what="condition"):
    """predicate()'s first true value, polled until `timeout` seconds; else AssertionError."""
    end = time.time() + timeout
    while time.time() < end:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    raise AssertionError("timed out after %ss waiting for %s" % (timeout, what))

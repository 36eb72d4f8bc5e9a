"""Running the real gpualert.py in a subprocess, the way users do, in an isolated home."""
import email
import email.policy
import json
import os
import pathlib
import signal
import subprocess
import sys
import glob
import textwrap
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "gpualert.py")
PY = sys.executable


def isolated_env(tmp, **extra):
    """An environment whose state, config, outbox and temp dir live under `tmp`, with no
    sendmail (GPUALERT_SENDMAIL=none: the host's own sendmail, if it has one, is never used).
    TMPDIR too: what gpualert keeps in $TMPDIR/gpualert-UID (a dry run's message without a
    run directory, a last-resort outbox) stays in the test's folder, not the host's /tmp."""
    env = dict(os.environ)
    for key in list(env):
        if key.startswith(("GPUALERT_", "SLURM_", "PBS_", "LSB_", "PYTHONUNBUF", "PYTHONFAULT")):
            del env[key]
    env.update(XDG_STATE_HOME=os.path.join(str(tmp), "state"),
               XDG_CONFIG_HOME=os.path.join(str(tmp), "config"),
               HOME=str(tmp), PATH="/usr/bin:/bin", GPUALERT_SENDMAIL="none")
    if "TMPDIR" not in extra:
        env["TMPDIR"] = _private_tmpdir(tmp)
    env.update(extra)
    if any(key.startswith("SLURM_") for key in extra):  # a pretend job: the host's Slurm
        env["PATH"] = _no_scheduler_bin(tmp) + os.pathsep + env["PATH"]  # must not answer
    return env


def _private_tmpdir(tmp):
    """tmp/TMPDIR, sticky and open to all like /tmp: a second user running gpualert in `tmp`
    (a root-pass test) must find it usable, or Python's tempfile falls back to /tmp."""
    folder = os.path.join(str(tmp), "TMPDIR")
    if not os.path.isdir(folder):
        os.makedirs(folder, exist_ok=True)
        os.chmod(folder, 0o1777)
    return folder


def remove_tree(path):
    """rm -rf that a test's read-only folder (chmod 500, 000) inside cannot stop: the owner's
    rights are given back first (as root, nothing stops it). Never follows a link."""
    path = str(path)
    if os.path.lexists(path):
        subprocess.run(["chmod", "-R", "u+rwX", path], stderr=subprocess.DEVNULL)
        subprocess.run(["rm", "-rf", path])


def _no_scheduler_bin(tmp):
    """Commands that answer like a scheduler that does not know the job (exit 1), so a test
    with a made-up SLURM_JOB_ID never reads another job of a real cluster on this host."""
    folder = os.path.join(str(tmp), "no-scheduler-bin")
    os.makedirs(folder, exist_ok=True)
    for name in ("scontrol", "squeue", "sacct", "sinfo", "sbatch", "scancel"):
        write_executable(os.path.join(folder, name),
                         "#!/bin/sh\necho \"%s: error: Invalid job id specified\" >&2\nexit 1\n" % name)
    return folder


def write_executable(path, text):
    """Write a script under another name and rename it into place, never rewrite it in place.
    A wrapper started earlier may be running the old one at that moment: Linux refuses to
    open a file being executed for writing (and to execute one open for writing), both
    "Text file busy", and a shell reading a script being rewritten may run half of it. The
    rename gives the new text a new inode; a process already running keeps the old one."""
    path = str(path)
    new = path + ".new"
    with open(new, "w") as handle:
        handle.write(text)
    os.chmod(new, 0o755)
    os.replace(new, path)
    return path


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


def addressed(tmp, to="owner@example.org"):
    """base(tmp) with a recipient: the runs whose message the test reads."""
    return base(tmp) + ["--to", to]


def parse(raw):
    """The e-mail message in `raw` bytes (a spooled .eml, a relay's DATA)."""
    return email.message_from_bytes(raw, policy=email.policy.default)


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


# ---- A terminal of the test's own (pty): what the pump and job-control tests type into ----

def _end_terminal(pid, fd):
    """Kill what runs on the test's terminal, reap it and close the terminal."""
    try:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    except OSError:
        pass
    os.close(fd)


def _read_until(fd, token, seconds=30):
    import select
    data, deadline = b"", time.time() + seconds
    while token not in data and time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if not ready:
            continue
        try:
            chunk = os.read(fd, 65536)
        except OSError:
            break
        if not chunk:
            break
        data += chunk
    return data


# ---- The message a run left: its first screen, its run.json ----

FIRST_SCREEN = 25  # lines of the plain part a phone shows without scrolling


def plain_text(tmp):
    """The plain part of the one message the run left in the outbox."""
    paths = outbox_messages(tmp)
    assert len(paths) == 1, paths
    with open(paths[0], "rb") as handle:
        msg = email.message_from_binary_file(handle, policy=email.policy.default)
    return msg.get_body(("plain",)).get_content()


def first_screen(tmp):
    return "\n".join(plain_text(tmp).splitlines()[:FIRST_SCREEN])


def row(text, label):
    """The value of a 'Label:   value' row of the first screen, or None."""
    for line in text.splitlines():
        if line.strip().startswith(label + ":"):
            return line.split(":", 1)[1].strip()
    return None


def run_in(tmp, code, cwd=None, extra=()):
    cwd = cwd or tmp
    os.makedirs(str(cwd), exist_ok=True)
    return subprocess.run([PY, SCRIPT] + base(tmp) + list(extra) + ["--"] + child(code),
                          env=isolated_env(tmp), cwd=str(cwd), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60)


def run_json_path(tmp):
    from wrapper_helpers import run_dir
    return os.path.join(run_dir(tmp), "run.json")


# ---- The outbox: what is spooled, resending it, a home that cannot hold it ----

def spooled(root):
    """Every message file gpualert may have left anywhere under `root` (dead letters apart)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(str(root)):
        dirnames[:] = [d for d in dirnames if d != "dead"]
        found += [os.path.join(dirpath, n) for n in filenames if ".eml" in n
                  and not n.startswith(".tmp-")]
    return sorted(found)


def _resend(tmp_path, outbox, relay):
    return run_gpualert(tmp_path, ["resend", "--smtp", relay, "--log-dir", str(tmp_path / "logs"),
                                   "--outbox", str(outbox), "--max-per-hour", "0"])


def broken_home_env(tmp, tmpdir=None, **extra):
    """HOME and the state directory unusable (a file where a directory should be), and a
    private TMPDIR of the test's own, so every fallback lands where the test can see it."""
    blocker = tmp / "not-a-dir"
    blocker.write_text("x")
    if tmpdir is None:
        tmpdir = tmp / "tmpdir"
        tmpdir.mkdir(exist_ok=True)
    return isolated_env(tmp, HOME=str(blocker / "home"), XDG_STATE_HOME=str(blocker / "state"),
                        TMPDIR=str(tmpdir), **extra)


def wait_until(predicate, timeout=20.0, what="condition"):
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out waiting for %s" % what
        time.sleep(0.05)


def _smtp_sink(case):
    """A real SMTP server (aiosmtpd) closed when the test ends; skips the test without it."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    try:
        from conftest import SmtpServer
        sink = SmtpServer(None)
    except ImportError:
        case.skipTest("aiosmtpd is not installed (pip install aiosmtpd)")
    case.addCleanup(sink.close)
    return sink


# ---- The pure core's seams: scheduler commands faked through run=, processes, and many real
# processes at once sharing the array records and the hourly cap ----

class FakeRun(object):
    """run= seam: answers by the command's name, records every call."""

    def __init__(self, answers):
        self.answers = answers  # name -> (rc, out) | None | list of those (one per call) | callable
        self.calls = []

    def __call__(self, argv, timeout):
        self.calls.append(list(argv))
        answer = self.answers.get(argv[0], None)
        if isinstance(answer, list):
            answer = answer.pop(0) if len(answer) > 1 else answer[0]
        if callable(answer):
            return answer(argv, timeout)
        return answer


def _alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False

CLUSTER_PATH = SCRIPT  # what _CHILD loads


_CHILD = textwrap.dedent("""\
    import json, os, sys
    sys.path.insert(0, os.path.join(os.path.dirname(sys.argv[1]), "tests"))
    from _load import load_module
    c = load_module(sys.argv[1], "c")
    mode, d, i = sys.argv[2], sys.argv[3], int(sys.argv[4])
    if mode == "array":
        s = c.ArraySummary(d, "4242", task_count=int(sys.argv[5]))
        status = "FAILED" if i % 3 == 0 else "SUCCESS"
        out = s.record(i, status, "cuda_oom" if status == "FAILED" else None, 1 if status == "FAILED" else 0,
                       host="node%d" % i, duration_s=float(i))
    else:
        out = c.RateLimiter(d, int(sys.argv[5])).allow()
    print(json.dumps(out))
    """)


def _spawn_all(tmp_path, mode, count, arg):
    script = tmp_path / "child.py"
    script.write_text(_CHILD)
    procs = [subprocess.Popen([sys.executable, str(script), CLUSTER_PATH, mode, str(tmp_path / "shared"),
                               str(i), str(arg)], stdout=subprocess.PIPE) for i in range(count)]
    return [json.loads(p.communicate(timeout=60)[0]) for p in procs]

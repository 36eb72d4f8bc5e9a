#!/usr/bin/env python3
"""gpualert: run a GPU training command unchanged and tell its owner how it ended, and why.

Synopsis
    python3 gpualert.py [OPTIONS] -- CMD [ARGS...]   run CMD, notify when it ends
    python3 gpualert.py classify [--exit-code N] [--json] LOG...
    python3 gpualert.py watch [OPTIONS] JOBID...     follow submitted Slurm jobs, notify when each ends
    python3 gpualert.py resend                       retry every message in the outbox
    python3 gpualert.py test-email                   send a test message through the configured transport
    python3 gpualert.py config                       print the effective configuration and its sources
    python3 gpualert.py --version | --help

What a run does
    Before CMD starts, a run directory and a log with a header (command, host, cwd, start
    time, scheduler ids) exist on disk, flushed and fsync'd. CMD's stdout and stderr stream
    live to the terminal and, as raw bytes in arrival order, into the log. When CMD ends,
    however it ends, the log gets a footer, the run is classified (cause, evidence line,
    remediation), run.json is written beside the log, and one message goes out: by SMTP, by
    the node's sendmail, or into the outbox when nothing can deliver it. `resend` (on a
    login node, or the next run) delivers the outbox later. No message is ever lost.

Exit status (the wrapper is transparent)
    N        CMD exited with N
    128+N    CMD died of signal N (SIGKILL -> 137, SIGSEGV -> 139)
    2        usage error (nothing was run)
    125      gpualert itself failed before CMD could run
    126      CMD was found but could not be executed
    127      CMD was not found
    Notification trouble never changes the exit status.

Configuration, in rising precedence: the INI file ([gpualert] section of --config,
$GPUALERT_CONFIG or ~/.config/gpualert/config.ini), GPUALERT_* environment variables, flags.
Every option --some-option has the config key some_option and the variable
GPUALERT_SOME_OPTION. The SMTP password comes only from GPUALERT_SMTP_PASSWORD or the
config key smtp_password, never from the command line.

Examples
    python3 gpualert.py --to me@uni.edu -- python train.py --lr 3e-4
    python3 gpualert.py --smtp smtp.uni.edu:587 --smtp-user me --timeout 12h -- torchrun train.py

Requires Python 3.6 or newer and nothing outside the standard library.
"""

__version__ = "0.1.0"

import collections
import errno
import os
import re
import signal
import sys
import time

# ==== Constants ====

EXIT_USAGE = 2
EXIT_INTERNAL = 125
EXIT_NOT_EXECUTABLE = 126
EXIT_NOT_FOUND = 127

DEFAULT_BUDGET_BYTES = 10 * 1024 * 1024
SMTP_TIMEOUT_S = 30.0
GRACE_S = 15.0  # after SIGTERM, before SIGKILL; below Slurm's default KillWait of 30 s
TERM_BUDGET_S = 27.0  # everything after a scheduler's SIGTERM must end before its SIGKILL (30 s)
READ_CHUNK_BYTES = 65536
TAIL_BYTES = 1024 * 1024  # output kept in memory for the classifier and the message
TAIL_LINES = 60
NOTED_LINES_MAX = 200
DRAIN_AFTER_EXIT_S = 2.0  # grandchildren may hold the pipes open after the child exits
POLL_S = 0.1
END_REASON_WAIT_S = 5.0  # for the scheduler's answer about a SIGTERM
FORWARDED_SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGUSR2")
SCHEDULER_DAEMONS = ("slurmstepd", "pbs_mom", "sge_shepherd", "res", "sbatchd")
SI_KERNEL = 0x80  # si_code of a signal the kernel (e.g. the terminal's Ctrl-C) generated
ENV_PREFIX = "GPUALERT_"
HEADER_MARK = "=== gpualert"

# Output markers worth remembering while streaming, in case the tail no longer holds them.
NOTE_MARKERS = (b"Traceback (most recent call last)", b"Error", b"error:", b"Killed",
                b"Xid", b"NCCL WARN", b"CANCELLED", b"terminate called")

# (flag, config key, kind, metavar, help). Kinds: str, list (repeatable), flag, size,
# duration, seconds, choice:a|b, optpath (flag with an optional value). The table drives
# the parser, the environment variables, the config file keys and `config`.
RUN_OPTIONS = (
    ("--to", "to", "list", "ADDR", "recipient, repeatable (default: the local user)"),
    ("--from", "from_addr", "str", "ADDR", "sender address (default: gpualert@HOST)"),
    ("--name", "name", "str", "NAME", "job name in the subject (default: the script)"),
    ("--notify", "notify", "choice:always|failure|never", "WHEN", "when to send (always)"),
    ("--log-dir", "log_dir", "str", "DIR", "where run directories go"),
    ("--artifacts", "artifacts", "list", "GLOB", "files to attach, repeatable"),
    ("--budget", "budget", "size", "SIZE", "largest message, e.g. 10M (default)"),
    ("--timeout", "timeout", "duration", "DURATION", "stop CMD after e.g. 90s, 12h"),
    ("--grace", "grace", "duration", "DURATION", "SIGTERM to SIGKILL delay (15s)"),
    ("--smtp", "smtp", "str", "HOST[:PORT]", "SMTP relay"),
    ("--smtp-user", "smtp_user", "str", "USER", "SMTP login (password: env/config)"),
    ("--smtp-tls", "smtp_tls", "choice:starttls|ssl|none", "MODE", "TLS mode"),
    ("--smtp-timeout", "smtp_timeout", "seconds", "SECONDS", "bound on delivery (30)"),
    ("--sendmail", "sendmail", "optpath", "[PATH]", "deliver with sendmail -t -oi"),
    ("--outbox", "outbox", "str", "DIR", "where undelivered messages wait"),
    ("--stall", "stall", "duration", "DURATION", "notify once if CMD is silent this long"),
    ("--gpu-interval", "gpu_interval", "seconds", "SECONDS", "nvidia-smi sampling (60, 0=off)"),
    ("--all-ranks", "all_ranks", "flag", "", "notify from every rank, not only rank 0"),
    ("--dry-run", "dry_run", "flag", "", "build the message, save it, send nothing"),
    ("--quiet", "quiet", "flag", "", "print nothing of gpualert's own"),
    ("--config", "config", "str", "FILE", "INI file"),
    ("--no-env-tweaks", "no_env_tweaks", "flag", "", "no PYTHONUNBUFFERED/FAULTHANDLER"),
)
SECRET_KEYS = ("smtp_password",)
FILE_ONLY_KEYS = ("smtp_password",)


def _state_home():
    return os.environ.get("XDG_STATE_HOME") or os.path.join(os.path.expanduser("~"), ".local", "state")


def default_config():
    """The embedded defaults: with none of them changed, a run works on a fresh machine."""
    state = os.path.join(_state_home(), "gpualert")
    return {
        "to": [], "from_addr": None, "name": None, "notify": "always",
        "log_dir": os.path.join(state, "runs"), "artifacts": [],
        "budget": DEFAULT_BUDGET_BYTES, "timeout": None, "grace": GRACE_S,
        "smtp": None, "smtp_user": None, "smtp_password": None, "smtp_tls": None,
        "smtp_timeout": SMTP_TIMEOUT_S, "sendmail": None,
        "outbox": os.path.join(state, "outbox"), "stall": None, "gpu_interval": 60.0,
        "all_ranks": False, "dry_run": False, "quiet": False, "config": None,
        "no_env_tweaks": False,
    }


# ==== Records and errors ====

Classification = collections.namedtuple(
    "Classification", "cls rule detail line evidence remediation")
RunResult = collections.namedtuple(
    "RunResult", "status name argv host cwd start end exit_code exit_status signal_name "
    "classification log_path run_dir tail rusage scheduler notes gpu")
ChildExit = collections.namedtuple(
    "ChildExit", "exit_code rusage exec_error timed_out signals stall_s")


class GpuAlertError(Exception):
    """Base of gpualert's own errors; only main() turns them into messages."""


class UsageError(GpuAlertError):
    """Bad command line: exit 2 before anything runs."""


class ConfigError(GpuAlertError):
    """A configuration value or file that cannot be used."""


class MailError(GpuAlertError):
    """A message that could not be delivered."""


# ==== Pure core: values, names, statuses ====

_UNITS_S = {"": 1, "s": 1, "m": 60, "h": 3600, "d": 86400}
_UNITS_B = {"": 1, "b": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_duration(text):
    """'90s', '12h', '1h30m', '45' (seconds), or Slurm's '[D-]HH:MM:SS' -> seconds."""
    text = str(text).strip().lower()
    clock = re.match(r"^(?:(\d+)-)?(\d+):(\d\d)(?::(\d\d))?$", text)
    if clock:
        d, a, b, c = clock.groups()
        hms = (int(a), int(b), int(c)) if c is not None else (0, int(a), int(b))
        return float(int(d or 0) * 86400 + hms[0] * 3600 + hms[1] * 60 + hms[2])
    parts = re.findall(r"(\d+(?:\.\d+)?)([smhd]?)", text)
    if not parts or "".join(n + u for n, u in parts) != text:
        raise ConfigError("malformed duration %r (try 90s, 30m, 12h, 1h30m)" % text)
    return float(sum(float(n) * _UNITS_S[u] for n, u in parts))


def parse_size(text):
    """'10M', '512k', '1.5G', '2000' (bytes) -> bytes; binary units."""
    m = re.match(r"^(\d+(?:\.\d+)?)\s*([bkmgt]?)(?:i?b)?$", str(text).strip().lower())
    if not m:
        raise ConfigError("malformed size %r (try 10M, 512K, 1G)" % text)
    return int(float(m.group(1)) * _UNITS_B[m.group(2)])


def parse_seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise ConfigError("malformed number of seconds %r" % text)
    if value < 0:
        raise ConfigError("negative number of seconds %r" % text)
    return value


def format_duration(seconds):
    """Compact, for subjects: 42s, 12m05s, 2h13m, 3d04h."""
    s = int(max(0, seconds or 0))
    if s < 60:
        return "%ds" % s
    if s < 3600:
        return "%dm%02ds" % (s // 60, s % 60)
    if s < 86400:
        return "%dh%02dm" % (s // 3600, s % 3600 // 60)
    return "%dd%02dh" % (s // 86400, s % 86400 // 3600)


def signal_name(signum):
    try:
        return signal.Signals(signum).name
    except (ValueError, AttributeError):
        return "SIG%d" % signum


def exit_status_for(exit_code, exec_error=None):
    """The shell convention: the child's code, 128+N for death by signal N."""
    if exit_code is None:
        return EXIT_NOT_FOUND if exec_error and exec_error[0] == errno.ENOENT else EXIT_NOT_EXECUTABLE
    if exit_code < 0:
        return 128 + (-exit_code)
    return exit_code


def status_for(exit_code, cls, timed_out=False):
    """The stable status word of the subject, for mail filters."""
    if timed_out or cls == "walltime":
        return "TIMEOUT"
    if cls == "preempted":
        return "PREEMPTED"
    if cls == "interrupted":
        return "INTERRUPTED"
    if exit_code == 0:
        return "SUCCESS" if cls is None else "COMPLETED"
    return "FAILED"


def job_name_for(argv, cfg_name=None, scheduler=None):
    """--name, else the script a launcher runs (train.py), else the command's basename."""
    if cfg_name:
        return cfg_name
    sched_name = (scheduler or {}).get("job_name")
    if sched_name and sched_name not in ("bash", "sh", "wrap", "interactive"):
        return sched_name
    for arg in argv[1:]:
        if re.search(r"\.(py|sh|jl|lua|R)$", arg) and not arg.startswith("-"):
            return os.path.basename(arg)
    return os.path.basename(argv[0]) if argv else "command"


def quote_argv(argv):
    """A shell-pasteable rendering of argv (shlex.quote without importing shlex)."""
    safe = re.compile(r"^[\w@%+=:,./-]+$")
    return " ".join(a if a and safe.match(a) else "'" + a.replace("'", "'\"'\"'") + "'"
                    for a in argv)


def iso_time(epoch):
    return time.strftime("%Y-%m-%dT%H:%M:%S%z", time.localtime(epoch))


def should_notify(status, policy):
    if policy == "never":
        return False
    return policy == "always" or status != "SUCCESS"


def child_env(environ, tweaks=True):
    """The child's environment: the wrapper's, plus unbuffered Python and its faulthandler."""
    env = dict(environ)
    if tweaks:
        env.setdefault("PYTHONUNBUFFERED", "1")
        env.setdefault("PYTHONFAULTHANDLER", "1")
    return env


def tail_lines(data, count=TAIL_LINES):
    """The last `count` lines of raw output bytes, decoded and cleaned for a reader."""
    text = bytes(data[-256 * 1024:]).decode("utf-8", "replace")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return [clean_line(line)[:500] for line in lines[-count:]]


# >>> part: classify
def clean_line(s):
    s = re.sub(r"\x1b\[[0-9;?]*[A-Za-z]", "", s)
    return s.rstrip("\r").split("\r")[-1]
def classify_text(text, facts=None):
    facts = facts or {}
    code = facts.get("exit_code")
    if facts.get("exec_error"):
        return Classification("exec_failure", "exec", facts["exec_error"], None, None, "check the command")
    if code == 0:
        return Classification(None, None, None, None, None, None)
    return Classification("unknown", None, None, None, None, None)
def cmd_classify(args):
    return 0
# <<< part: classify

# >>> part: notify
def build_message(result, cfg):
    from email.message import EmailMessage
    m = EmailMessage(); m["Subject"] = "[gpualert] %s %s: %s" % (result.status, result.classification.cls, result.name)
    m["To"] = ", ".join(cfg["to"] or ["root"]); m["From"] = "gpualert@localhost"
    m.set_content("\n".join(result.tail)); return m, []
def save_to_outbox(msg, outbox, reason):
    os.makedirs(outbox, exist_ok=True)
    p = os.path.join(outbox, "%f.eml" % time.time()); open(p, "wb").write(msg.as_bytes()); return p
def deliver(msg, cfg):
    p = save_to_outbox(msg, cfg["outbox"], "stub")
    return {"outcome": "outbox", "transport": "outbox", "detail": "saved to outbox", "outbox_path": p}
def cmd_resend(args, cfg): return 0
def cmd_test_email(args, cfg): return 0
# <<< part: notify

# >>> part: cluster
def detect_scheduler(environ): return {}
def job_rank(environ): return None
def read_cgroup_memory(pid=None): return {}
def query_end_reason(sched, start, now, time_limit=None): return (None, None)
def should_notify_rank(environ, all_ranks): return True
class GpuSampler(object):
    def __init__(self, interval=60): pass
    def start(self): pass
    def stop(self): return {}
def cmd_watch(args, cfg): return 0
def read_time_limit(sched, run=None, environ=None): return {}
# <<< part: cluster

# ==== The durable log ====


class RunLog(object):
    """The run's log file: a header before the child exists, raw output, then a footer.

    Writes go through one O_APPEND descriptor. A write failure (disk full, quota) never
    stops the run: the log stops growing and the failure becomes a note in the message.
    """

    def __init__(self, path):
        self.path = path
        self.fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        self.lines = 0
        self.error = None
        self.lost_bytes = 0

    def write(self, data):
        if self.error is not None:
            self.lost_bytes += len(data)
            return
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(self.fd, view):]
        except OSError as exc:
            self.error = "log write failed (%s); output after that is not in the log" % exc.strerror
            self.lost_bytes += len(view)

    def record(self, title, fields, sync=True):
        """A delimited block of `key: value` lines, so readers can tell it from output."""
        lines = ["%s %s ===" % (HEADER_MARK, title)]
        lines += ["%s: %s" % (k, _one_line(v)) for k, v in fields if v not in (None, "", [])]
        data = ("\n".join(lines) + "\n").encode("utf-8", "replace")
        self.write(data)
        self.lines += len(lines)
        if sync:
            self.sync()

    def sync(self):
        try:
            os.fsync(self.fd)
        except OSError:
            pass

    def close(self):
        try:
            os.close(self.fd)
        except OSError:
            pass


def _one_line(value):
    return re.sub(r"[\r\n]+", " ", str(value))


def make_run_dir(log_dir, name, host, scheduler, rank, start):
    """A fresh directory per run; array tasks and ranks never collide."""
    stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(start))
    parts = [stamp, re.sub(r"[^\w.-]+", "_", name)[:40]]
    if scheduler.get("dir_tag"):
        parts.append(scheduler["dir_tag"])
    parts.append(host)
    if rank is not None:
        parts.append("rank%d" % rank)
    base = os.path.join(log_dir, "-".join(parts))
    for n in range(1000):
        path = base if n == 0 else "%s.%d" % (base, n)
        try:
            os.makedirs(path)
            return path
        except OSError as exc:
            if exc.errno != errno.EEXIST:
                raise
    raise GpuAlertError("cannot create a run directory under %s" % log_dir)


def header_fields(argv, host, cwd, start, scheduler, rank):
    fields = [("command", quote_argv(argv)), ("host", host), ("cwd", cwd),
              ("start", iso_time(start)), ("pid", os.getpid()), ("gpualert", __version__)]
    if scheduler:
        fields.append(("scheduler", " ".join("%s=%s" % (k, v) for k, v in sorted(scheduler.items())
                                             if k not in ("dir_tag", "label"))))
    if rank is not None:
        fields.append(("rank", rank))
    return fields


def footer_fields(child, start, end, log):
    fields = [("end", iso_time(end)), ("duration", format_duration(end - start))]
    if child.exec_error:
        fields.append(("exec failed", "%s (exit status %d)" % (
            child.exec_error[1], exit_status_for(None, child.exec_error))))
    elif child.exit_code is not None and child.exit_code < 0:
        fields.append(("signal", "%s (exit status %d)" % (
            signal_name(-child.exit_code), exit_status_for(child.exit_code))))
    else:
        fields.append(("exit", child.exit_code))
    if child.timed_out:
        fields.append(("timeout", "gpualert's --timeout ended the run"))
    if child.signals:
        fields.append(("signals received", ", ".join(s for s, _ in child.signals)))
    if log.lost_bytes:
        fields.append(("lost", "%d bytes of output could not be written" % log.lost_bytes))
    return fields


# ==== Running the child ====


def _signal_set():
    return set(getattr(signal, n) for n in FORWARDED_SIGNALS) | {signal.SIGCHLD}


def spawn_child(argv, env, out_fd, err_fd):
    """fork+exec with the signal mask restored; -> (pid, None) or (None, (errno, message)).

    Not subprocess: the wrapper blocks its signals to read who sent them (sigtimedwait), and
    the child must start with the mask and dispositions a shell would give it.
    """
    err_r, err_w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child side ends in exec or _exit
        try:
            os.close(err_r)
            signal.pthread_sigmask(signal.SIG_SETMASK, [])
            for name in ("SIGPIPE", "SIGXFSZ"):
                signal.signal(getattr(signal, name), signal.SIG_DFL)
            os.dup2(out_fd, 1)
            os.dup2(err_fd, 2)
            os.execvpe(argv[0], argv, env)
        except OSError as exc:
            os.write(err_w, ("%d:%s" % (exc.errno or 0, exc.strerror or exc)).encode())
        except BaseException as exc:
            os.write(err_w, ("0:%s" % exc).encode())
        os._exit(EXIT_NOT_EXECUTABLE)
    os.close(err_w)
    report = b""
    while True:
        chunk = os.read(err_r, 4096)
        if not chunk:
            break
        report += chunk
    os.close(err_r)
    if not report:
        return pid, None
    os.waitpid(pid, 0)
    code, _, message = report.decode("utf-8", "replace").partition(":")
    return None, (int(code or 0), "%s: %s" % (message, argv[0]))


class ChildPump(object):
    """Streams the child's output to the terminal and the log, and relays signals.

    Signals are blocked and collected with sigtimedwait, so the sender is known: a signal
    the terminal or a scheduler daemon sent reached the whole job already, so it is not
    sent to the child a second time; one sent to the wrapper alone is forwarded.
    """

    def __init__(self, pid, fds, log, cfg, on_stall=None, on_signal=None):
        self.pid, self.log, self.cfg = pid, log, cfg
        self.fds = dict(fds)  # read fd -> our output fd
        self.tail = bytearray()
        self.noted = collections.deque(maxlen=NOTED_LINES_MAX)
        self.output_lines = 0
        self.signals = []  # (name, epoch)
        self.exit_code = None
        self.rusage = {}
        self.timed_out = False
        self.on_stall, self.on_signal = on_stall, on_signal
        self.last_output = time.time()
        self.stall_s = 0.0
        self.stall_sent = False
        self.kill_at = None
        self.term_at = None
        self.dead_outputs = set()
        self.signal_set = _signal_set()

    def run(self, timeout=None):
        """Pump until the child has exited and its pipes are drained (or held open too long)."""
        import select
        poller = select.poll()
        for fd in self.fds:
            poller.register(fd, select.POLLIN | select.POLLHUP | select.POLLERR)
        deadline = time.time() + timeout if timeout else None
        exited_at = None
        while self.fds or self.exit_code is None:
            self._wait_for_events(poller)
            now = time.time()
            if self.exit_code is None:
                self._reap(0)
            if self.exit_code is not None:
                exited_at = exited_at or now
                if now - exited_at > DRAIN_AFTER_EXIT_S:
                    break  # a grandchild holds the pipes: stop reading, not waiting
                continue
            if deadline and now >= deadline and not self.timed_out:
                self.timed_out = True
                self._stop_child(now)
            self._check_kill(now)
            self._check_stall(now)
        for fd in list(self.fds):
            os.close(fd)

    def _wait_for_events(self, poller):
        if self.fds:
            for fd, _ in poller.poll(POLL_S * 1000):
                self._read(fd, poller)
            self._take_signals(0)
        else:  # the child closed its outputs but runs on: still relay and time it
            self._take_signals(POLL_S)

    def _read(self, fd, poller):
        try:
            data = os.read(fd, READ_CHUNK_BYTES)
        except OSError:
            data = b""
        if not data:
            poller.unregister(fd)
            del self.fds[fd]
            os.close(fd)
            return
        self._forward(self.fds[fd], data)
        self.log.write(data)
        self._remember(data)

    def _forward(self, out_fd, data):
        if out_fd in self.dead_outputs:
            return
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(out_fd, view):]
        except OSError:
            self.dead_outputs.add(out_fd)  # a closed terminal or pipe: keep logging

    def _remember(self, data):
        self.last_output = time.time()
        self.tail += data
        if len(self.tail) > 2 * TAIL_BYTES:
            del self.tail[:-TAIL_BYTES]
        first_line = self.log.lines + self.output_lines + 1
        for marker in NOTE_MARKERS:
            if marker in data:
                self._note(data, marker, first_line)
        self.output_lines += data.count(b"\n")

    def _note(self, data, marker, first_line):
        pos = data.find(marker)
        while pos >= 0 and len(self.noted) < NOTED_LINES_MAX:
            start = data.rfind(b"\n", 0, pos) + 1
            end = data.find(b"\n", pos)
            end = len(data) if end < 0 else end
            line = data[start:min(end, start + 1000)].decode("utf-8", "replace")
            self.noted.append((first_line + data.count(b"\n", 0, start), line))
            pos = data.find(marker, end)

    def _take_signals(self, wait_s):
        while True:
            info = signal.sigtimedwait(self.signal_set, wait_s)
            if info is None:
                return
            wait_s = 0
            if info.si_signo != signal.SIGCHLD:
                self._relay(info)

    def _relay(self, info):
        name = signal_name(info.si_signo)
        now = time.time()
        self.signals.append((name, now))
        if not _child_already_signalled(info):
            _send(self.pid, info.si_signo)
        if name in ("SIGTERM", "SIGINT", "SIGHUP") and self.term_at is None:
            self.term_at = now
            self.kill_at = now + float(self.cfg.get("grace") or GRACE_S)
        if self.on_signal:
            self.on_signal(name, info)

    def _stop_child(self, now):
        _send(self.pid, signal.SIGTERM)
        self.term_at = self.term_at or now
        self.kill_at = now + float(self.cfg.get("grace") or GRACE_S)

    def _check_kill(self, now):
        if self.kill_at and now >= self.kill_at and self.exit_code is None:
            _send(self.pid, signal.SIGKILL)
            self.kill_at = None

    def _check_stall(self, now):
        stall = self.cfg.get("stall")
        silent = now - self.last_output
        if stall and silent >= stall:
            self.stall_s = max(self.stall_s, silent)
            if not self.stall_sent and self.on_stall:
                self.stall_sent = True
                self.on_stall(silent)

    def _reap(self, flags):
        try:
            pid, status, usage = os.wait4(self.pid, os.WNOHANG if flags == 0 else 0)
        except ChildProcessError:
            self.exit_code = self.exit_code if self.exit_code is not None else -signal.SIGKILL
            return
        if pid == 0:
            return
        self.exit_code = -os.WTERMSIG(status) if os.WIFSIGNALED(status) else os.WEXITSTATUS(status)
        self.rusage = {"maxrss_kib": int(usage.ru_maxrss), "utime_s": round(usage.ru_utime, 3),
                       "stime_s": round(usage.ru_stime, 3)}


def _send(pid, signum):
    try:
        os.kill(pid, signum)
    except OSError:
        pass


def _child_already_signalled(info):
    """Did this signal reach the child too? Then forwarding it would deliver it twice.

    The terminal's Ctrl-C goes to the whole foreground process group (the child is in
    ours); a scheduler's daemon signals every process of the job step. Slurm's
    `--signal=B:SIG` reaches only the batch shell, so a USR1/USR2 that a daemon sent to a
    batch-script wrapper (no SLURM_STEP_ID) must still be passed on.
    """
    if info.si_code == SI_KERNEL:
        return True
    sender = _process_name(info.si_pid)
    if sender not in SCHEDULER_DAEMONS:
        return False
    if info.si_signo in (signal.SIGUSR1, signal.SIGUSR2):
        return bool(os.environ.get("SLURM_STEP_ID")) and os.environ.get("SLURM_STEP_ID") != "batch"
    return True


def _process_name(pid):
    try:
        with open("/proc/%d/comm" % pid) as handle:
            return handle.read().strip()
    except (OSError, ValueError):
        return None


# ==== The run: before, during and after the child ====


def cmd_run(cli, cfg, sources, problems):
    """Run the command; return its exit status whatever happens to the notification."""
    argv, start = cli.command, time.time()
    ctx = _start_context(argv, cfg, start, problems)
    log = ctx["log"]
    log.record("run started (gpualert %s)" % __version__,
               header_fields(argv, ctx["host"], ctx["cwd"], start, ctx["scheduler"], ctx["rank"]))
    ctx["header_lines"] = log.lines
    ctx["mem_before"] = _safely(read_cgroup_memory, {})
    child = _run_child(argv, cfg, ctx)
    end = time.time()
    log.record("command ended", footer_fields(child, start, end, log))
    status = exit_status_for(child.exit_code, child.exec_error)
    bound = _post_exit_bound(cfg, child)
    _run_bounded(lambda: _after_exit(argv, cfg, ctx, child, start, end), bound,
                 "notification did not finish within %ds; the run itself is unaffected" % bound,
                 cfg["quiet"])
    log.close()
    return status


def _start_context(argv, cfg, start, problems):
    """Everything known before the child exists: host, cwd, scheduler, rank, the log."""
    ctx = {"host": os.uname()[1].split(".")[0], "cwd": _getcwd(), "notes": list(problems),
           "start": start}
    ctx["scheduler"] = _safely(lambda: detect_scheduler(os.environ), {})
    ctx["rank"] = _safely(lambda: job_rank(os.environ), None)
    ctx["name"] = job_name_for(argv, cfg["name"], ctx["scheduler"])
    ctx["log"], ctx["run_dir"] = _open_run_log(cfg, ctx, start)
    return ctx


def _getcwd():
    try:
        return os.getcwd()
    except OSError as exc:  # the directory was removed under us; the child inherits it anyway
        return "(unavailable: %s)" % exc.strerror


def _open_run_log(cfg, ctx, start):
    """The run directory and log, under --log-dir, else the temp dir: it must exist first."""
    tmp = os.environ.get("TMPDIR") or "/tmp"
    fallback = os.path.join(tmp, "gpualert-%d" % os.getuid())
    for log_dir in (cfg["log_dir"], fallback):
        try:
            run_dir = make_run_dir(log_dir, ctx["name"], ctx["host"], ctx["scheduler"],
                                   ctx["rank"], start)
            rank = ctx["rank"]
            name = "output.log" if rank is None else "output.rank%d.log" % rank
            return RunLog(os.path.join(run_dir, name)), run_dir
        except (OSError, GpuAlertError) as exc:
            ctx["notes"].append("cannot write the log under %s: %s" % (log_dir, exc))
    raise GpuAlertError("no writable place for the log (%s)" % "; ".join(ctx["notes"][-2:]))


def _run_child(argv, cfg, ctx):
    signal.pthread_sigmask(signal.SIG_BLOCK, _signal_set())
    out_r, out_w = _pipe()
    err_r, err_w = _pipe()
    env = child_env(os.environ, not cfg["no_env_tweaks"])
    pid, exec_error = spawn_child(argv, env, out_w, err_w)
    os.close(out_w)
    os.close(err_w)
    if exec_error:
        for fd in (out_r, err_r):
            os.close(fd)
        return ChildExit(None, {}, exec_error, False, [], 0.0)
    ctx["sampler"] = _safely(lambda: _start_sampler(cfg), None)
    if ctx["scheduler"]:  # learned now, used if a SIGTERM comes: never delays the child
        ctx["time_limit"] = Background(lambda: read_time_limit(ctx["scheduler"]))
    pump = ChildPump(pid, {out_r: 1, err_r: 2}, ctx["log"], cfg,
                     on_stall=lambda silent: _notify_early(ctx, cfg, "STALLED", silent),
                     on_signal=lambda name, info: _on_signal(ctx, cfg, name))
    ctx["pump"] = pump
    pump.run(cfg["timeout"])
    return ChildExit(pump.exit_code, pump.rusage, None, pump.timed_out,
                     pump.signals, pump.stall_s)


def _pipe():
    """A pipe with a large buffer, so a fast writer is not woken for every 64 KiB."""
    r, w = os.pipe()
    try:
        import fcntl
        fcntl.fcntl(w, getattr(fcntl, "F_SETPIPE_SZ", 1031), 1 << 20)
    except (OSError, ImportError):
        pass
    return r, w


def _start_sampler(cfg):
    sampler = GpuSampler(interval=cfg["gpu_interval"])
    sampler.start()
    return sampler


def _on_signal(ctx, cfg, name):
    """Ask the scheduler why while it still knows; warn early on --signal=B:USR1@120."""
    sched = ctx["scheduler"]
    if name == "SIGTERM" and sched and "end_reason" not in ctx:
        limit = ctx.get("time_limit")
        ctx["end_reason"] = Background(lambda: query_end_reason(
            sched, ctx["start"], time.time(), limit.result(0) if limit else None))
    if name in ("SIGUSR1", "SIGUSR2") and sched:
        _notify_early(ctx, cfg, "WARNING", 0.0, "time limit approaching (%s)" % name)


class Background(object):
    """fn() in a daemon thread; result(timeout) -> its value, or None if late or failed."""

    def __init__(self, fn):
        import threading
        self._value = None
        self._thread = threading.Thread(target=self._run, args=(fn,), daemon=True)
        self._thread.start()

    def _run(self, fn):
        self._value = _safely(fn, None)

    def result(self, timeout):
        self._thread.join(timeout)
        return None if self._thread.is_alive() else self._value


def _post_exit_bound(cfg, child):
    """How long classification and delivery may take; before a scheduler's SIGKILL."""
    bound = float(cfg["smtp_timeout"]) + 10.0
    term = [t for name, t in child.signals if name in ("SIGTERM", "SIGINT", "SIGHUP")]
    if term:
        left = TERM_BUDGET_S - (time.time() - term[0])
        bound = max(2.0, min(bound, left))
        cfg["smtp_timeout"] = max(1.0, min(float(cfg["smtp_timeout"]), bound - 1.0))
    return int(bound)


def _run_bounded(work, seconds, warning, quiet):
    """Run `work` in a daemon thread; give up waiting after `seconds`."""
    import threading
    worker = threading.Thread(target=lambda: _safely(work, None, report=not quiet), daemon=True)
    worker.start()
    worker.join(seconds)
    if worker.is_alive() and not quiet:
        _warn(warning)


def _safely(fn, default, report=False):
    """Call fn(); on any exception return `default`: side work never breaks the run."""
    try:
        return fn()
    except Exception as exc:  # noqa: BLE001 - isolation is the point
        if report:
            _warn("internal error after the run (%s: %s); the exit status is unaffected"
                  % (type(exc).__name__, exc))
        return default


def _warn(message):
    try:
        sys.stderr.write("gpualert: %s\n" % message)
        sys.stderr.flush()
    except (OSError, ValueError):
        pass


def _after_exit(argv, cfg, ctx, child, start, end):
    """Classify, record, notify. Runs bounded, after the exit status is fixed."""
    facts = _facts_for(cfg, ctx, child, start)
    pump = ctx.get("pump")
    text = bytes(pump.tail).decode("utf-8", "replace") if pump else ""
    verdict = classify_text(text, facts)
    result = _result_for(argv, cfg, ctx, child, start, end, verdict, facts)
    ctx["log"].record("cause", _cause_fields(verdict))
    _write_run_json(result, None, None)
    delivery, manifest = _deliver_result(result, cfg, ctx)
    _write_run_json(result, delivery, manifest)
    if not cfg["quiet"]:
        _warn(_summary_line(result, delivery))


def _facts_for(cfg, ctx, child, start):
    pump = ctx.get("pump")
    facts = {"exit_code": child.exit_code, "timed_out": child.timed_out,
             "exec_error": child.exec_error[1] if child.exec_error else None,
             "received_signals": [name for name, _ in child.signals],
             "noted_lines": list(pump.noted) if pump else [],
             "total_lines": ctx["header_lines"] + (pump.output_lines if pump else 0)}
    mem_after = _safely(read_cgroup_memory, {})
    ctx["mem_after"] = mem_after
    before = ctx.get("mem_before") or {}
    if before.get("oom_kill") is not None and mem_after.get("oom_kill") is not None:
        facts["oom_kill_delta"] = mem_after["oom_kill"] - before["oom_kill"]
    reason = ctx["end_reason"].result(END_REASON_WAIT_S) if ctx.get("end_reason") else None
    if reason and reason[0]:
        facts["scheduler_reason"], facts["scheduler_evidence"] = reason[0], reason[1]
    sampler = ctx.get("sampler")
    ctx["gpu"] = _safely(sampler.stop, {}) if sampler else {}
    if ctx["gpu"].get("ecc_delta"):
        facts["ecc_delta"] = ctx["gpu"]["ecc_delta"]
    return facts


def _result_for(argv, cfg, ctx, child, start, end, verdict, facts):
    pump = ctx.get("pump")
    notes = list(ctx["notes"])
    log = ctx["log"]
    if log.error:
        notes.append(log.error)
    if child.stall_s:
        notes.append("the command was silent for %s at most (--stall %s)"
                     % (format_duration(child.stall_s), format_duration(cfg["stall"])))
    if facts.get("scheduler_evidence"):
        notes.append("scheduler: %s" % facts["scheduler_evidence"])
    notes += _memory_notes(ctx.get("mem_before") or {}, ctx.get("mem_after") or {})
    code = child.exit_code
    return RunResult(
        status=status_for(code, verdict.cls, child.timed_out), name=ctx["name"], argv=list(argv),
        host=ctx["host"], cwd=ctx["cwd"], start=start, end=end, exit_code=code,
        exit_status=exit_status_for(code, child.exec_error),
        signal_name=signal_name(-code) if code is not None and code < 0 else None,
        classification=verdict, log_path=log.path, run_dir=ctx["run_dir"],
        tail=tail_lines(pump.tail) if pump else [], rusage=child.rusage,
        scheduler=ctx["scheduler"], notes=notes, gpu=ctx.get("gpu") or {})


def _memory_notes(before, after):
    notes = list(after.get("notes") or [])
    if after.get("peak_bytes"):
        notes.append("peak memory of the job's cgroup: %.1f GiB" % (after["peak_bytes"] / 2.0 ** 30))
    if before.get("oom_kill") is not None and after.get("oom_kill", 0) > before["oom_kill"]:
        notes.append("the cgroup's OOM killer fired %d time(s) during the run"
                     % (after["oom_kill"] - before["oom_kill"]))
    return notes


def _cause_fields(verdict):
    if verdict.cls is None:
        return [("class", "none (success)")]
    return [("class", verdict.cls), ("detail", verdict.detail), ("line", verdict.line),
            ("evidence", verdict.evidence), ("hint", verdict.remediation)]


def result_record(result, delivery=None, manifest=None):
    """Everything the notification says, as the JSON-ready dict of run.json."""
    record = dict(result._asdict())
    record["classification"] = dict(result.classification._asdict())
    record["class"] = result.classification.cls
    record["command"] = quote_argv(result.argv)
    record["start_iso"] = iso_time(result.start)
    record["end_iso"] = iso_time(result.end) if result.end else None
    record["duration_s"] = round(result.end - result.start, 3) if result.end else None
    record["manifest"] = manifest or []
    record["delivery"] = delivery or {"outcome": "pending"}
    record["gpualert_version"] = __version__
    return record


def _write_run_json(result, delivery, manifest):
    """run.json beside the log, written atomically (scripts and `resend` read it)."""
    import json
    path = os.path.join(result.run_dir, "run.json")
    tmp = path + ".tmp"
    with open(tmp, "w") as handle:
        json.dump(result_record(result, delivery, manifest), handle, indent=2, default=str)
        handle.write("\n")
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def _deliver_result(result, cfg, ctx):
    """Build and deliver the message when policy and rank say so."""
    if not should_notify(result.status, cfg["notify"]):
        return {"outcome": "skipped", "detail": "--notify %s" % cfg["notify"]}, []
    if not _safely(lambda: should_notify_rank(os.environ, cfg["all_ranks"]), True):
        return {"outcome": "skipped", "detail": "rank %s: only rank 0 notifies" % ctx["rank"]}, []
    msg, manifest = build_message(result, cfg)
    return _deliver_or_hold(msg, cfg, ctx["notes"]), manifest


def _deliver_or_hold(msg, cfg, problems):
    """Deliver, unless the configuration is broken: then hold the message in the outbox."""
    if cfg.get("config_broken") and not cfg["dry_run"]:
        reason = "configuration problem: %s" % cfg["config_broken"]
        path = save_to_outbox(msg, cfg["outbox"], reason)
        return {"outcome": "outbox", "transport": "outbox", "detail": reason, "outbox_path": path}
    return deliver(msg, cfg)


def _summary_line(result, delivery):
    verdict = result.classification
    cause = verdict.cls or "no failure found"
    if verdict.line:
        cause += " (line %s)" % verdict.line
    where = delivery.get("detail") or delivery.get("outcome")
    if delivery.get("outbox_path"):
        where = "%s: %s" % (where, delivery["outbox_path"])
    return "%s %s; log: %s; message: %s" % (result.status, cause, result.log_path, where)


def _notify_early(ctx, cfg, status, silent_s, detail=None):
    """A notice while the child still runs (stalled, time limit near); never blocks it."""
    import threading

    def send():
        pump = ctx.get("pump")
        detail_text = detail or "no output for %s" % format_duration(silent_s)
        verdict = Classification("walltime" if status == "WARNING" else None, None,
                                 detail_text, None, None, None)
        result = RunResult(status, ctx["name"], [], ctx["host"], ctx["cwd"], time.time(), None,
                           None, None, None, verdict, ctx["log"].path, ctx["run_dir"],
                           tail_lines(pump.tail) if pump else [], {}, ctx["scheduler"],
                           [detail_text], {})
        msg, _ = build_message(result, cfg)
        delivery = deliver(msg, cfg)
        if not cfg["quiet"]:
            _warn("%s notice: %s" % (status, delivery.get("detail") or delivery.get("outcome")))
    if cfg["notify"] != "never":
        threading.Thread(target=lambda: _safely(send, None), daemon=True).start()


# ==== Configuration ====


def _option_env(key):
    return ENV_PREFIX + key.upper() if key != "from_addr" else ENV_PREFIX + "FROM"


def convert_option(kind, raw):
    """One option value from text; raises ConfigError naming the problem."""
    if kind == "size":
        return parse_size(raw)
    if kind == "duration":
        return parse_duration(raw)
    if kind == "seconds":
        return parse_seconds(raw)
    if kind.startswith("choice:"):
        choices = kind[len("choice:"):].split("|")
        if raw not in choices:
            raise ConfigError("%r is not one of %s" % (raw, ", ".join(choices)))
        return raw
    if kind == "flag":
        if str(raw).lower() in ("1", "true", "yes", "on", ""):
            return True
        if str(raw).lower() in ("0", "false", "no", "off"):
            return False
        raise ConfigError("%r is not a yes/no value" % raw)
    if kind == "list":
        return [item.strip() for item in str(raw).split(",") if item.strip()]
    return raw


def _kinds():
    kinds = dict((key, kind) for _, key, kind, _, _ in RUN_OPTIONS)
    kinds["smtp_password"] = "str"
    return kinds


def read_config_file(path):
    """The [gpualert] section of an INI file -> dict of raw strings; ConfigError if broken."""
    import configparser
    parser = configparser.ConfigParser(interpolation=None)
    try:
        with open(path) as handle:
            parser.read_file(handle)
    except (OSError, configparser.Error, UnicodeDecodeError) as exc:
        raise ConfigError("config file %s: %s" % (path, str(exc).splitlines()[0]))
    if not parser.has_section("gpualert"):
        raise ConfigError("config file %s has no [gpualert] section" % path)
    return dict(parser.items("gpualert"))


def _config_path(flags, environ):
    explicit = flags.get("config") or environ.get(ENV_PREFIX + "CONFIG")
    if explicit:
        return explicit, True
    home = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(home, "gpualert", "config.ini"), False


def load_config(flags, environ):
    """defaults < config file < GPUALERT_* < flags -> (cfg, sources, problems).

    Flags were converted (and usage-checked) by the parser. A problem in the file or the
    environment never stops the run: it is reported, the default stays, and a broken file
    holds the message in the outbox (it may have named the real relay).
    """
    cfg, problems = default_config(), []
    sources = dict((key, "default") for key in cfg)
    path, explicit = _config_path(flags, environ)
    cfg["config"] = path
    if explicit or os.path.exists(path):
        _merge_file(cfg, sources, problems, path)
    _merge_env(cfg, sources, problems, environ)
    for key, value in flags.items():
        cfg[key], sources[key] = value, "flag"
    if problems:
        cfg["config_broken"] = "; ".join(problems)
    return cfg, sources, problems


def _merge_file(cfg, sources, problems, path):
    kinds = _kinds()
    try:
        raw = read_config_file(path)
    except ConfigError as exc:
        problems.append(str(exc))
        return
    if raw.get("smtp_password") and _group_readable(path):
        _warn("warning: %s holds a password and is readable by others (chmod 600 it)" % path)
    for key, value in raw.items():
        if key not in kinds:
            problems.append("config file %s: unknown key %r" % (path, key))
            continue
        _set_converted(cfg, sources, problems, key, kinds[key], value, "file %s" % path)


def _merge_env(cfg, sources, problems, environ):
    for key, kind in _kinds().items():
        name = _option_env(key)
        if name in environ and key != "config":
            _set_converted(cfg, sources, problems, key, kind, environ[name], "env " + name)


def _set_converted(cfg, sources, problems, key, kind, raw, source):
    try:
        value = convert_option(kind, raw)
    except ConfigError as exc:
        problems.append("%s: %s: %s" % (source, key, exc))
        return
    if kind == "optpath" and value == "":
        value = ""
    cfg[key], sources[key] = value, source


def _group_readable(path):
    try:
        return bool(os.stat(path).st_mode & 0o077)
    except OSError:
        return False


def cmd_config(cli, cfg, sources, problems):
    """Print the effective configuration, secrets masked, with where each value came from."""
    for key in sorted(k for k in cfg if k != "config_broken"):
        value = cfg[key]
        if key in SECRET_KEYS and value:
            value = "********"
        if isinstance(value, list):
            value = ",".join(value)
        print("%-14s = %-40s (%s)" % (key, "" if value is None else value, sources.get(key, "default")))
    for problem in problems:
        print("problem: %s" % problem)
    return 0


# ==== Command line ====

SUBCOMMANDS = ("run", "classify", "watch", "resend", "test-email", "config")
# Extra options of some subcommands: (flag, key, kind, metavar, help).
SUB_OPTIONS = {
    "classify": (("--exit-code", "exit_code", "int", "N", "the exit code (negative: signal)"),
                 ("--json", "json", "flag", "", "one JSON object a line")),
    "watch": (("--interval", "interval", "seconds", "SECONDS", "poll interval (60)"),),
}


class CommandLine(object):
    """What the user asked for: a subcommand, its options, and the child command."""

    def __init__(self):
        self.sub, self.flags, self.extra, self.command, self.positional = "run", {}, {}, [], []
        self.help = self.version = False

    def __getattr__(self, name):  # cmd_* handlers read extra options as attributes
        try:
            return self.__dict__["extra"][name]
        except KeyError:
            raise AttributeError(name)


def parse_command_line(argv):
    """Split at the first `--`; options before it, the untouched command after it."""
    cli = CommandLine()
    before, command = (argv[:argv.index("--")], argv[argv.index("--") + 1:]) if "--" in argv else (argv, None)
    if before and not before[0].startswith("-"):
        cli.sub = before.pop(0)
        if cli.sub not in SUBCOMMANDS:
            raise UsageError("unknown subcommand %r (to run a command, put it after --: "
                             "gpualert.py -- %s)" % (cli.sub, " ".join([cli.sub] + before)))
    _parse_options(cli, before)
    if cli.help or cli.version:
        return cli
    if cli.sub == "run":
        if not command:
            raise UsageError("no command to run (usage: gpualert.py [OPTIONS] -- CMD [ARGS...])")
        cli.command = command
    elif command is not None:
        cli.positional += command
    _check_positional(cli)
    return cli


def _parse_options(cli, tokens):
    table = dict((row[0], row) for row in RUN_OPTIONS + SUB_OPTIONS.get(cli.sub, ()))
    i = 0
    while i < len(tokens):
        token = tokens[i]
        i += 1
        if token in ("-h", "--help"):
            cli.help = True
        elif token == "--version":
            cli.version = True
        elif token.startswith("-") and token != "-":
            flag, has_value, value = token.partition("=")
            row = table.get(flag)
            if row is None:
                raise UsageError("unknown option %s" % flag)
            if not has_value and row[2] not in ("flag", "optpath"):
                if i >= len(tokens):
                    raise UsageError("option %s needs a value (%s)" % (flag, row[3]))
                value, i = tokens[i], i + 1
            elif not has_value and row[2] == "optpath" and i < len(tokens) \
                    and not tokens[i].startswith("-"):
                value, i = tokens[i], i + 1
            _store_option(cli, row, value if (has_value or row[2] != "flag") else "")
        else:
            cli.positional.append(token)


def _store_option(cli, row, value):
    flag, key, kind = row[0], row[1], row[2]
    target = cli.extra if any(row is r for r in SUB_OPTIONS.get(cli.sub, ())) else cli.flags
    try:
        if kind == "int":
            converted = int(value)
        elif kind == "optpath":
            converted = value
        else:
            converted = convert_option(kind, value)
    except (ConfigError, ValueError) as exc:
        raise UsageError("option %s: %s" % (flag, exc))
    if kind == "list":
        target[key] = target.get(key, []) + converted
    else:
        target[key] = converted


def _check_positional(cli):
    needs = {"classify": "LOG", "watch": "JOBID"}
    if cli.sub in needs:
        if not cli.positional:
            raise UsageError("%s needs at least one %s" % (cli.sub, needs[cli.sub]))
        cli.extra["logs" if cli.sub == "classify" else "job_ids"] = list(cli.positional)
        for key, kind in (("exit_code", None), ("json", False), ("interval", 60.0)):
            cli.extra.setdefault(key, kind)
    elif cli.positional:
        raise UsageError("unexpected argument %r" % cli.positional[0])


def usage_text():
    lines = [__doc__.strip().split("\n\n")[0], "", __doc__.split("\n\n")[1].strip(), "",
             "Options (config key and GPUALERT_* variable alike):"]
    for flag, key, kind, metavar, text in RUN_OPTIONS:
        lines.append("  %-28s %s" % ((flag + " " + metavar).strip(), text))
    for sub, rows in sorted(SUB_OPTIONS.items()):
        for flag, key, kind, metavar, text in rows:
            lines.append("  %-28s %s (%s)" % ((flag + " " + metavar).strip(), text, sub))
    lines += ["", "Exit status: the command's own; 128+N for signal N; 2 usage; "
              "125 internal; 126 not executable; 127 not found.",
              "Full manual: the docstring at the top of gpualert.py, and README.md."]
    return "\n".join(lines)


def _dispatch(cli, cfg, sources, problems):
    handlers = {"run": cmd_run, "config": cmd_config,
                "classify": lambda c, *_: cmd_classify(c),
                "resend": lambda c, cfg, *_: cmd_resend(c, cfg),
                "test-email": lambda c, cfg, *_: cmd_test_email(c, cfg),
                "watch": lambda c, cfg, *_: cmd_watch(c, cfg)}
    return handlers[cli.sub](cli, cfg, sources, problems)


def main(argv=None):
    """The CLI; returns the exit status (the console script passes it to sys.exit)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        cli = parse_command_line(argv)
    except UsageError as exc:
        _warn("error: %s" % exc)
        return EXIT_USAGE
    if cli.help:
        print(usage_text())
        return 0
    if cli.version:
        print("gpualert %s" % __version__)
        return 0
    cfg, sources, problems = load_config(cli.flags, os.environ)
    for problem in problems:
        if not cfg["quiet"]:
            _warn("warning: %s" % problem)
    try:
        return _dispatch(cli, cfg, sources, problems)
    except GpuAlertError as exc:
        _warn("error: %s" % exc)
        return EXIT_INTERNAL
    except KeyboardInterrupt:
        return 128 + signal.SIGINT


if __name__ == "__main__":
    sys.exit(main())

"""Black-box tests of the wrapper: the real gpualert.py in a subprocess, real signals."""
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from wrapper_helpers import (PY, SCRIPT, SIGNAL_COUNTER, base, child, closed_port, isolated_env,
                             log_text, outbox_messages, run_gpualert, run_json)


# ---- primitive 2: the exit status is the child's, with the relay down ----

@pytest.mark.parametrize("code", [0, 1, 2, 3, 42, 255])
def test_exit_code_passes_through_with_relay_down(tmp_path, code):
    args = base(tmp_path) + ["--smtp", "127.0.0.1:%d" % closed_port(), "--smtp-timeout", "3", "--"]
    proc = run_gpualert(tmp_path, args + child("raise SystemExit(%d)" % code))
    assert proc.returncode == code, proc.stderr
    assert len(outbox_messages(tmp_path)) == 1  # undeliverable, kept, not lost


@pytest.mark.parametrize("signame", ["SIGSEGV", "SIGABRT", "SIGKILL", "SIGTERM", "SIGINT"])
def test_death_by_signal_is_128_plus_n_with_relay_down(tmp_path, signame):
    signum = getattr(signal, signame)
    reset = "" if signame == "SIGKILL" else "signal.signal(%d, signal.SIG_DFL); " % signum
    code = "import os, signal; %sos.kill(os.getpid(), %d)" % (reset, signum)
    args = base(tmp_path) + ["--smtp", "127.0.0.1:%d" % closed_port(), "--smtp-timeout", "3", "--"]
    proc = run_gpualert(tmp_path, args + child(code))
    assert proc.returncode == 128 + signum, proc.stderr
    record = run_json(tmp_path)
    assert record["signal_name"] == signame and record["exit_code"] == -signum
    assert len(outbox_messages(tmp_path)) == 1


def test_silent_relay_cannot_hold_the_exit_status(tmp_path):
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(5)  # accepts TCP, never says a word
    try:
        args = base(tmp_path) + ["--smtp", "127.0.0.1:%d" % listener.getsockname()[1],
                                 "--smtp-timeout", "2", "--"]
        started = time.time()
        proc = run_gpualert(tmp_path, args + child("raise SystemExit(7)"))
        elapsed = time.time() - started
    finally:
        listener.close()
    assert proc.returncode == 7
    assert elapsed < 2 + 8, elapsed  # the stated bound plus interpreter start-up slack
    assert len(outbox_messages(tmp_path)) == 1


# ---- primitive 1: the log exists, with a header, before the child ----

def test_header_is_on_disk_before_the_child_starts(tmp_path):
    probe = ("import glob; p = glob.glob(%r)[0]; text = open(p).read(); "
             "print('HEADER-SEEN' if 'run started' in text and 'command:' in text else 'NO-HEADER')"
             % str(tmp_path / "logs" / "*" / "output.log"))
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(probe))
    assert proc.returncode == 0
    assert b"HEADER-SEEN" in proc.stdout


def test_command_not_found_is_127_and_the_log_says_why(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--", "no-such-command-xyz", "--flag"])
    assert proc.returncode == 127
    log = log_text(tmp_path).decode()
    assert "command: no-such-command-xyz --flag" in log
    assert "exec failed" in log and "No such file or directory" in log
    assert run_json(tmp_path)["classification"]["cls"] == "exec_failure"


def test_not_executable_is_126_and_the_log_says_why(tmp_path):
    script = tmp_path / "train.sh"
    script.write_text("#!/bin/sh\necho hi\n")
    script.chmod(0o644)
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--", str(script)])
    assert proc.returncode == 126
    assert b"Permission denied" in log_text(tmp_path)


def test_signal_death_ends_the_log_with_a_footer(tmp_path):
    code = "print('last words', flush=True); import os; os.kill(os.getpid(), 9)"
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(code))
    assert proc.returncode == 137
    log = log_text(tmp_path).decode()
    assert "last words" in log
    assert log.index("last words") < log.index("command ended")
    assert "signal: SIGKILL (exit status 137)" in log


def test_unbuffered_child_last_line_survives_sigkill(tmp_path):
    # Without PYTHONUNBUFFERED the print sits in the child's buffer when SIGKILL lands.
    code = "import os, sys; print('sentinel-before-kill'); os.kill(os.getpid(), 9)"
    run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(code))
    assert b"sentinel-before-kill" in log_text(tmp_path)


def test_no_env_tweaks_leaves_the_environment_alone(tmp_path):
    code = "import os; print('UNBUF=%s' % os.environ.get('PYTHONUNBUFFERED'))"
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--no-env-tweaks", "--"] + child(code))
    assert b"UNBUF=None" in proc.stdout
    proc = run_gpualert(tmp_path / "..", base(tmp_path / "two") + ["--"] + child(code))
    assert b"UNBUF=1" in proc.stdout


# ---- streaming ----

def test_streams_are_separate_live_and_logged_raw(tmp_path):
    code = ("import sys, os\n"
            "os.write(1, b'out-1\\n'); os.write(2, b'err-1\\n')\n"
            "os.write(1, bytes(range(256)) + b'\\n')\n"
            "os.write(1, b'\\r 10%|#  |\\r 50%|##   |\\r100%|#####|\\n')\n"
            "os.write(2, b'\\xff\\xfe invalid utf8\\n')\n")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(code))
    assert proc.stdout.startswith(b"out-1\n" + bytes(range(256)) + b"\n")
    assert proc.stderr.startswith(b"err-1\n\xff\xfe invalid utf8\n")
    log = log_text(tmp_path)
    body = log.split(b"output follows ===\n", 1)[-1] if b"output follows" in log else log
    assert bytes(range(256)) + b"\n" in body
    assert b"\r 10%|#  |\r 50%" in body and b"\xff\xfe invalid utf8" in body
    assert body.index(b"out-1") < body.index(b"err-1") < body.index(bytes(range(256)))


def test_a_huge_line_without_newline_is_streamed_whole(tmp_path):
    code = "import os\nfor _ in range(160): os.write(1, b'x' * 65536)\n"  # 10 MiB, one line
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(code))
    assert proc.returncode == 0
    assert len(proc.stdout) == 160 * 65536
    assert log_text(tmp_path).count(b"x") >= 160 * 65536


def test_grandchild_holding_the_pipe_does_not_hang_the_wrapper(tmp_path):
    code = "import subprocess; subprocess.Popen(['sleep', '30']); raise SystemExit(4)"
    started = time.time()
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(code))
    assert proc.returncode == 4
    assert time.time() - started < 20


# ---- signals ----

@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2"])
def test_signal_sent_to_the_wrapper_reaches_the_child_once(tmp_path, signame):
    proc = subprocess.Popen([PY, SCRIPT] + base(tmp_path) + ["--"] + child(SIGNAL_COUNTER),
                            env=isolated_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=str(tmp_path))
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(getattr(signal, signame))
    out, err = proc.communicate(timeout=40)
    assert b"COUNT=1" in out, err
    assert proc.returncode == 5
    with open("/proc/self/comm") as handle:  # the sender this test process is, by name
        me = handle.read().strip()
    assert "signals received: %s (from %s)" % (signame, me) in log_text(tmp_path).decode()


def test_ctrl_c_in_a_terminal_reaches_the_child_once(tmp_path):
    import pty
    pid, fd = pty.fork()
    if pid == 0:  # the wrapper runs as the terminal's foreground job, like a user's shell
        os.chdir(str(tmp_path))
        os.execve(PY, [PY, SCRIPT] + base(tmp_path) + ["--"] + child(SIGNAL_COUNTER),
                  isolated_env(tmp_path))
    output = _read_until(fd, b"ready")
    os.write(fd, b"\x03")  # the terminal sends SIGINT to the whole foreground group
    output += _read_until(fd, b"COUNT=")
    output += _read_until(fd, b"\n")
    _, status = os.waitpid(pid, 0)
    assert b"COUNT=1" in output, output
    assert os.WEXITSTATUS(status) == 5


def _read_until(fd, token, seconds=30):
    data, deadline = b"", time.time() + seconds
    while token not in data and time.time() < deadline:
        try:
            data += os.read(fd, 4096)
        except OSError:
            break
    return data


def test_timeout_terminates_then_records_walltime(tmp_path):
    code = "import time; print('working', flush=True); time.sleep(60)"
    started = time.time()
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--timeout", "1s", "--"] + child(code))
    assert proc.returncode == 128 + signal.SIGTERM
    assert time.time() - started < 20
    record = run_json(tmp_path)
    assert record["status"] == "TIMEOUT"
    assert "timeout" in log_text(tmp_path).decode()


def test_timeout_kills_a_child_that_ignores_sigterm_after_the_grace(tmp_path):
    code = ("import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
            "print('stubborn', flush=True); time.sleep(60)")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--timeout", "1", "--grace", "1", "--"] + child(code))
    assert proc.returncode == 128 + signal.SIGKILL
    assert run_json(tmp_path)["status"] == "TIMEOUT"


# ---- bad input ----

@pytest.mark.parametrize("args,needle", [
    (["--budget", "10Q", "--"], b"size"),
    (["--timeout", "soon", "--"], b"duration"),
    (["--notify", "sometimes", "--"], b"always"),
    (["--frobnicate", "--"], b"unknown option --frobnicate"),
    (["--smtp"], b"needs a value"),
    (["--"], b"no command"),
    ([], b"no command"),
    (["python3", "x.py"], b"unknown subcommand"),
])
def test_usage_errors_exit_2_before_anything_runs(tmp_path, args, needle):
    marker = tmp_path / "ran"
    runs_something = args[-1:] == ["--"] and needle != b"no command"
    tail = child("open(%r, 'w')" % str(marker)) if runs_something else []
    proc = run_gpualert(tmp_path, args + tail)
    assert proc.returncode == 2
    assert needle in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1
    assert not marker.exists()


def test_broken_config_still_runs_the_job_and_holds_the_message(tmp_path):
    config = tmp_path / "bad.ini"
    config.write_text("this is [not an ini\n")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--config", str(config), "--"]
                        + child("print('trained'); raise SystemExit(9)"))
    assert proc.returncode == 9
    assert b"trained" in proc.stdout
    assert b"bad.ini" in proc.stderr
    assert len(outbox_messages(tmp_path)) == 1


def test_version_and_help(tmp_path):
    proc = run_gpualert(tmp_path, ["--version"])
    sys.path.insert(0, os.path.dirname(SCRIPT))
    assert proc.returncode == 0 and proc.stdout.strip().startswith(b"gpualert ")
    proc = run_gpualert(tmp_path, ["--help"])
    assert proc.returncode == 0 and b"--smtp-timeout" in proc.stdout


def test_import_is_cheap(tmp_path):
    code = ("import sys; sys.path.insert(0, %r); import gpualert; "
            "heavy = [m for m in ('smtplib', 'email', 'ssl', 'json', 'argparse', 'zipfile', "
            "'html', 'socket') if m in sys.modules]; print(heavy)" % os.path.dirname(SCRIPT))
    out = subprocess.check_output([PY, "-I", "-S", "-c", code])
    assert out.strip() == b"[]"


def test_signals_still_reach_a_child_that_closed_its_outputs(tmp_path):
    code = ("import os, signal, sys, time\n"
            "signal.signal(signal.SIGTERM, lambda s, f: os._exit(11))\n"
            "print('ready', flush=True)\n"
            "os.close(1); os.close(2)\n"
            "open('closed', 'w').close()\n"
            "time.sleep(30)\n")
    proc = subprocess.Popen([PY, SCRIPT] + base(tmp_path) + ["--"] + child(code),
                            env=isolated_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=str(tmp_path))
    assert proc.stdout.readline() == b"ready\n"
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and not (tmp_path / "closed").exists():
        time.sleep(0.02)  # poll until the child has closed its outputs
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=20)
    assert proc.returncode == 11


def test_removed_working_directory_is_reported_not_fatal(tmp_path):
    gone = tmp_path / "gone"
    script = ("mkdir -p %s && cd %s && rmdir %s && exec %s %s %s -- %s -c \"print('ran')\""
              % (gone, gone, gone, PY, SCRIPT, " ".join(base(tmp_path)), PY))
    proc = subprocess.run(["sh", "-c", script], env=isolated_env(tmp_path),
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert b"cwd: (unavailable" in log_text(tmp_path)
    assert proc.returncode in (0, 1)  # Python itself may refuse a deleted cwd; we still report


def _sigterm_under_a_slow_scheduler(tmp_path, end_in_s, scheduler_says=None, answer_after_s=30):
    """A pretend Slurm job whose scontrol/squeue/sacct answer after answer_after_s seconds
    (scheduler_says: scontrol's record then, else nothing); SIGTERM at once. -> run.json."""
    slow_bin = tmp_path / "slow-scheduler-bin"
    slow_bin.mkdir()
    for name in ("scontrol", "squeue", "sacct"):
        said = "echo '%s'\n" % scheduler_says if scheduler_says and name == "scontrol" else ""
        (slow_bin / name).write_text("#!/bin/sh\nsleep %s\n%s" % (answer_after_s, said))
        (slow_bin / name).chmod(0o755)
    env = isolated_env(tmp_path, SLURM_JOB_ID="777", SLURM_JOB_NAME="train",
                       SLURM_JOB_END_TIME=str(int(time.time() + end_in_s)))
    env["PATH"] = str(slow_bin) + os.pathsep + env["PATH"]
    code = "import time; print('ready', flush=True); time.sleep(60)"
    proc = subprocess.Popen([PY, SCRIPT] + base(tmp_path) + ["--"] + child(code), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(tmp_path))
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    return run_json(tmp_path)


def test_a_walltime_sigterm_reads_as_timeout_while_the_controller_is_too_busy_to_answer(tmp_path):
    """CI saw it: under load scontrol did not answer within the wait, and a job killed at its
    time limit was reported INTERRUPTED. The job's known end time must decide it then."""
    record = _sigterm_under_a_slow_scheduler(tmp_path, end_in_s=5)
    assert record["status"] == "TIMEOUT", record
    (message,) = outbox_messages(tmp_path)
    with open(message, "rb") as handle:
        assert b"TIMEOUT" in handle.read().split(b"\n\n", 1)[0]


SCANCEL_RECORD = ("JobId=777 JobName=train UserId=root(0) JobState=COMPLETING Reason=None "
                  "TimeLimit=00:03:00 StartTime=2026-12-03T12:00:00 EndTime=2026-12-03T12:00:15 "
                  "PreemptTime=None")


@pytest.mark.parametrize("answer_after_s,says", [(2.5, SCANCEL_RECORD), (30, None)],
                         ids=["late-but-in-time", "never"])
def test_a_scancel_minutes_before_the_limit_is_never_timeout(tmp_path, answer_after_s, says):
    """A scancel 2 minutes before a 3-minute limit, the controller slow: its answer (2.5 s,
    within one query's timeout) is waited for; with no answer, 2 minutes left is no walltime."""
    record = _sigterm_under_a_slow_scheduler(tmp_path, end_in_s=120, scheduler_says=says,
                                             answer_after_s=answer_after_s)
    assert record["status"] == "INTERRUPTED", record

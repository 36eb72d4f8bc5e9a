"""The wrapper around the child, black-box through the real gpualert.py: the exit status
(the child's, 128+N for signal N) whatever the relay or the reader does, signals that reach the
child once (process group, terminal, job control, batch scripts, timeout), the child's
environment, and timeouts."""
import os
import pty
import signal
import socket
import subprocess
import sys
import time

import pytest

from wrapper_helpers import (PY, SCRIPT, SIGNAL_COUNTER, _end_terminal, _read_until, addressed,
                             base, child, closed_port, isolated_env, log_text, outbox_messages,
                             parse, run_gpualert, run_json, spooled, wait_until, write_executable)


# ---- the exit status is the child's, with the relay down ----

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


def test_no_env_tweaks_leaves_the_environment_alone(tmp_path):
    code = "import os; print('UNBUF=%s' % os.environ.get('PYTHONUNBUFFERED'))"
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--no-env-tweaks", "--"] + child(code))
    assert b"UNBUF=None" in proc.stdout
    proc = run_gpualert(tmp_path / "..", base(tmp_path / "two") + ["--"] + child(code))
    assert b"UNBUF=1" in proc.stdout


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
        write_executable(slow_bin / name, "#!/bin/sh\nsleep %s\n%s" % (answer_after_s, said))
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


def _killed_first(tmp_path, later, args=()):
    """A pretend Slurm job whose child gets SIGTERM first (the daemon's kill reaches the job's
    processes one after the other); `later`: [(seconds after, signal)] sent to the wrapper."""
    env = isolated_env(tmp_path, SLURM_JOB_ID="777", SLURM_JOB_NAME="train",
                       SLURM_JOB_END_TIME=str(int(time.time() + 5)))
    code = "import os, time; print(os.getpid(), flush=True); time.sleep(60)"
    proc = subprocess.Popen([PY, SCRIPT] + base(tmp_path) + list(args) + ["--"] + child(code), env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(tmp_path))
    os.kill(int(proc.stdout.readline()), signal.SIGTERM)
    start = time.monotonic()
    for after, sig in later:
        time.sleep(max(0.0, start + after - time.monotonic()))
        proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGTERM
    return err, time.monotonic() - start


@pytest.mark.parametrize("copies", [[0.1], [0.1, 0.2]])
def test_a_kill_that_reaches_the_child_just_before_the_wrapper_is_the_job_end_not_a_stop(
        tmp_path, silent_relay, copies):
    """CI saw it under load: Slurm's time-limit SIGTERM reached the child, the wrapper reaped
    it, and the wrapper's own copy of that SIGTERM (the same kill, a moment later) was taken
    for a request to stop delivering: the message left said INTERRUPTED, not TIMEOUT. A
    second copy inside the window stopped delivery too."""
    args = ["--to", "owner@example.org", "--smtp", silent_relay.addr, "--smtp-timeout", "2"]
    err, _ = _killed_first(tmp_path, [(after, signal.SIGTERM) for after in copies], args)
    assert b"delivery stopped" not in err, err
    assert run_json(tmp_path)["status"] == "TIMEOUT", err
    (message,) = outbox_messages(tmp_path)
    with open(message, "rb") as handle:
        assert b"TIMEOUT" in handle.read().split(b"\n\n", 1)[0]


def test_another_signal_just_after_the_childs_kill_still_stops_delivery(tmp_path, silent_relay):
    """The child died of SIGTERM and the user's SIGINT came 0.1 s later: it was swallowed as
    the wrapper's copy of the kill, and delivery ran on to the SMTP timeout."""
    args = ["--to", "owner@example.org", "--smtp", silent_relay.addr, "--smtp-timeout", "30"]
    err, took = _killed_first(tmp_path, [(0.1, signal.SIGINT)], args)
    assert b"SIGINT: delivery stopped" in err and took < 20, (took, err)


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


def _shell_on_terminal(tmp_path):
    """An interactive bash on a new terminal in tmp_path, at its prompt. -> (pid, fd)."""
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - an interactive shell on the terminal
        os.chdir(str(tmp_path))
        os.execve("/bin/bash", ["bash", "--norc", "--noprofile", "-i"],
                  isolated_env(tmp_path, PS1="PROMPT$ ", TERM="dumb"))
    _read_until(fd, b"PROMPT$ ")
    return pid, fd


# ---- a signal reaches the child exactly once, whoever sends it ----

@pytest.mark.parametrize("signame", ["SIGTERM", "SIGINT", "SIGUSR1"])
def test_a_signal_sent_to_the_process_group_reaches_the_child_once(tmp_path, signame):
    proc = subprocess.Popen([PY, SCRIPT] + base(tmp_path) + ["--"] + child(SIGNAL_COUNTER),
                            env=isolated_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=str(tmp_path), start_new_session=True)
    assert proc.stdout.readline() == b"ready\n"
    subprocess.check_call(["kill", "-%s" % signame[3:], "--", "-%d" % proc.pid])  # kill -SIG -PGID
    out, err = proc.communicate(timeout=40)
    assert b"COUNT=1" in out, (out, err)
    assert proc.returncode == 5


def test_timeout_1_reaches_the_child_once(tmp_path):
    proc = subprocess.run(["timeout", "3", PY, SCRIPT] + base(tmp_path) + ["--"] + child(SIGNAL_COUNTER),
                          env=isolated_env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          cwd=str(tmp_path), timeout=60)
    assert b"COUNT=1" in proc.stdout, proc.stderr
    assert proc.returncode == 124  # timeout(1)'s own status: the command timed out


def test_a_batch_script_trap_kill_0_reaches_the_child_once(tmp_path):
    script = ("trap 'trap - TERM; kill 0' TERM\n%s %s %s -- %s -c \"$CODE\" &\nwait\nwait\n"
              % (PY, SCRIPT, " ".join(base(tmp_path)), PY))
    env = isolated_env(tmp_path, CODE=SIGNAL_COUNTER)
    proc = subprocess.Popen(["bash", "-c", script], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=str(tmp_path), start_new_session=True)
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(signal.SIGTERM)  # to the batch shell alone; its trap signals the group
    out, err = proc.communicate(timeout=40)
    assert b"COUNT=1" in out, (out, err)


SLURM_RUNS_ON = "JobId=777 JobName=train JobState=RUNNING Reason=None TimeLimit=01:00:00 PreemptTime=None"
SLURM_TIME_LIMIT = ("JobId=777 JobName=train JobState=COMPLETING Reason=TimeLimit TimeLimit=01:00:00 "
                    "PreemptTime=None")
TERM_SAVER = ("import os, signal, sys, time\n"
              "seen = []\n"
              "signal.signal(getattr(signal, os.environ['SIG']), lambda s, f: seen.append(s))\n"
              "print('ready %d' % os.getpid(), flush=True)\n"
              "deadline = time.time() + 20\n"
              "while time.time() < deadline and not seen:\n"
              "    time.sleep(0.05)\n"
              "time.sleep(float(os.environ['SAVE_S']))  # saving a checkpoint\n"
              "print('COUNT=%d' % len(seen), flush=True)\n"
              "sys.exit(5)\n")


@pytest.mark.parametrize("sig,record,to_child,grace,save_s", [
    ("TERM", SLURM_RUNS_ON, False, "2", "3"), ("INT", SLURM_RUNS_ON, False, "2", "3"),
    ("TERM", SLURM_TIME_LIMIT, True, "15", "1")],
    ids=["batch-shell-alone", "batch-shell-alone-int", "time-limit"])
def test_slurmstepds_sigterm_reaches_the_child_once_as_slurms_record_says(
        tmp_path, sig, record, to_child, grace, save_s):
    """--signal=B:TERM@N and scancel --batch -s TERM (or INT): slurmstepd signals the batch
    shell alone (gpualert, when the script execs it) and Slurm runs the job on: the child
    never got the signal and was SIGKILLed after --grace, no checkpoint saved. At the time
    limit the SIGTERM reaches every process of the step: the child must not get it twice."""
    fake = tmp_path / "slurm-bin"
    fake.mkdir()
    write_executable(fake / "scontrol", "#!/bin/sh\necho '%s'\n" % record)
    # the sender's name is what gpualert reads in /proc: a script named slurmstepd
    write_executable(fake / "slurmstepd", '#!/bin/sh\nfor pid; do kill -%s "$pid"; done\nsleep 20\n' % sig)
    env = isolated_env(tmp_path, SLURM_JOB_ID="777", SLURM_JOB_NAME="train", SAVE_S=save_s, SIG="SIG" + sig)
    env["PATH"] = str(fake) + os.pathsep + env["PATH"]
    proc = subprocess.Popen([PY, SCRIPT] + base(tmp_path) + ["--grace", grace, "--"] + child(TERM_SAVER),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(tmp_path))
    child_pid = int(proc.stdout.readline().split()[1])
    targets = [str(child_pid), str(proc.pid)] if to_child else [str(proc.pid)]
    sender = subprocess.Popen([str(fake / "slurmstepd")] + targets)
    try:
        out, err = proc.communicate(timeout=60)
    finally:
        sender.kill()
        sender.wait()
    assert b"COUNT=1" in out, (out, err)
    assert proc.returncode == 5, err
    assert "SIG%s (from slurmstepd)" % sig in log_text(tmp_path).decode()


TICKER = ("import signal, sys, time\n"
          "signal.signal(signal.SIGINT, lambda s, f: (print('GOT-INT', flush=True), sys.exit(7)))\n"
          "i = 0\n"
          "while True:\n"
          "    print('tick %d' % i, flush=True); i += 1; time.sleep(0.1)\n")


def test_job_control_in_an_interactive_shell(tmp_path):
    """Ctrl-Z stops the job and gives the prompt back, fg resumes it, Ctrl-C ends it once."""
    (tmp_path / "ticker.py").write_text(TICKER)
    pid, fd = _shell_on_terminal(tmp_path)
    try:
        os.write(fd, ("%s %s %s -- %s ticker.py\n" % (PY, SCRIPT, " ".join(base(tmp_path)), PY)).encode())
        _read_until(fd, b"tick 3")
        os.write(fd, b"\x1a")  # Ctrl-Z
        out = _read_until(fd, b"PROMPT$ ", 20)
        assert b"Stopped" in out, out
        os.write(fd, b'echo "J""OBS=$(jobs -s | wc -l)"\n')
        assert b"JOBS=1" in _read_until(fd, b"JOBS=1", 20)
        os.write(fd, b"fg\n")
        out = _read_until(fd, b"tick", 20)
        out += _read_until(fd, b"tick", 20)
        assert b"tick" in out, out
        os.write(fd, b"\x03")  # Ctrl-C
        out = _read_until(fd, b"PROMPT$ ", 20)
        assert out.count(b"GOT-INT") == 1, out
        os.write(fd, b'echo "R""C=$?"\n')  # the echoed command line has no RC= in it
        assert b"RC=7" in _read_until(fd, b"RC=7", 20)
    finally:
        _end_terminal(pid, fd)


def test_ctrl_c_reaches_a_child_once_inside_a_script_on_a_terminal(tmp_path):
    """In a script's foreground job the child stays in the job's group: Ctrl-C reaches the
    script and the child, each once."""
    (tmp_path / "counter.py").write_text(SIGNAL_COUNTER)
    pid, fd = _shell_on_terminal(tmp_path)
    try:
        os.write(fd, ("bash -c '%s %s %s -- %s counter.py'\n" % (PY, SCRIPT, " ".join(base(tmp_path)), PY)).encode())
        _read_until(fd, b"ready")
        os.write(fd, b"\x03")
        out = _read_until(fd, b"COUNT=", 30) + _read_until(fd, b"\n", 5)
        assert b"COUNT=1" in out, out
    finally:
        _end_terminal(pid, fd)


# ---- interruptible after exit ----

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_delivery_stops_it_and_keeps_the_childs_status(tmp_path, silent_relay, sig):
    proc = subprocess.Popen([PY, SCRIPT] + addressed(tmp_path) + ["--smtp", silent_relay.addr, "--smtp-timeout", "30",
                                                             "--"] + child("raise SystemExit(3)"),
                            env=isolated_env(tmp_path), cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: silent_relay.conns, what="delivery to start")
        proc.send_signal(sig)
        proc.communicate(timeout=8)  # 30 s without the fix
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 3
    assert len(spooled(tmp_path / "outbox")) == 1


def test_scheduler_early_warning_notifies_and_reaches_the_child(tmp_path, smtp_plain):
    import signal
    import subprocess
    from wrapper_helpers import PY, SCRIPT
    code = ("import signal, sys, time\n"
            "signal.signal(signal.SIGUSR1, lambda s, f: (print('got USR1', flush=True), sys.exit(0)))\n"
            "print('ready', flush=True)\n"
            "time.sleep(30)\n")
    env = isolated_env(tmp_path, SLURM_JOB_ID="4242", SLURM_JOB_NAME="train")
    proc = subprocess.Popen([PY, SCRIPT] + addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--"] + child(code),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(tmp_path))
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(signal.SIGUSR1)
    out, err = proc.communicate(timeout=30)
    assert b"got USR1" in out and proc.returncode == 0
    subjects = [parse(m.data)["Subject"] for m in smtp_plain.wait_for(2)]
    assert any(s.startswith("[gpualert] WARNING job 4242 ") and "walltime" in s for s in subjects), subjects
    assert any(s.startswith("[gpualert] SUCCESS") for s in subjects), subjects  # a warning is not an end


def test_the_last_lines_wait_for_a_copy_slow_to_run_not_for_a_reader_that_stopped():
    """Under load (16 busy loops, 50 runs) stderr was empty in 2-6 of 50 runs: when the work
    after the exit took the 2 s grace, the copy was given up unless idle within 0.05 s, and
    flush_terminal gave it 0.5 s, though it was only waiting to run, not held by a reader."""
    from _load import load_gpualert
    N = load_gpualert()
    read_fd, write_fd = os.pipe()
    slow = N.TerminalCopy(write_fd)
    real_write = slow._write
    slow._write = lambda data: (time.sleep(1.0), real_write(data))  # 1 s before it runs
    slow.put(b"gpualert: FAILED ...\n")
    assert slow.wait_idle(0.5, 3.0) and os.read(read_fd, 100) == b"gpualert: FAILED ...\n"
    full_r, full_w = os.pipe()
    stopped = N.TerminalCopy(full_w)  # nobody reads full_r: the pipe fills, the write blocks
    stopped.put(b"x" * (1 << 20))
    start = time.monotonic()
    assert not stopped.wait_idle(0.5, 3.0) and time.monotonic() - start < 2.0
    os.close(full_r)  # the blocked write fails (EPIPE): the copy's thread ends
    for fd in (read_fd, write_fd, full_w):
        os.close(fd)


def _steady_reader(fd, kib_per_s, got):
    """Read fd at a steady pace until end of file, into the bytearray got."""
    while True:
        data = os.read(fd, 32 << 10)
        if not data:
            return
        got.extend(data)
        time.sleep(32.0 / kib_per_s)


def test_a_reader_slow_but_steady_is_not_taken_for_one_that_stopped():
    """A 1 MiB chunk went to one blocking write, so a reader taking 400 KiB/s held it past
    0.5 s and looked stopped: the copy was given up though the reader was taking data."""
    import threading
    from _load import load_gpualert
    N = load_gpualert()
    read_fd, write_fd = os.pipe()
    got = bytearray()
    reader = threading.Thread(target=_steady_reader, args=(read_fd, 400, got), daemon=True)
    reader.start()
    copy = N.TerminalCopy(write_fd)
    copy.put(b"x" * (1 << 20))
    assert copy.wait_idle(0.5, 30.0), "given up with %d KiB read" % (len(got) >> 10)
    os.close(write_fd)
    reader.join(30)
    assert len(got) == 1 << 20
    os.close(read_fd)


def test_a_reader_that_pauses_between_bursts_is_not_taken_for_one_that_stopped():
    """helper-32: a reader taking 1 MiB, then pausing 0.6 s (1.2 MiB/s on average) was given
    up at the first pause once delivery had used the grace, and lost the last lines."""
    import threading
    from _load import load_gpualert
    N = load_gpualert()
    read_fd, write_fd = os.pipe()
    got = bytearray()

    def bursts():
        while True:
            data = os.read(read_fd, 1 << 20)
            if not data:
                return
            got.extend(data)
            if len(got) % (1 << 20) < len(data):  # a MiB more: pause
                time.sleep(0.6)
    reader = threading.Thread(target=bursts, daemon=True)
    reader.start()
    copy = N.TerminalCopy(write_fd)
    copy.put(b"x" * (3 << 20))
    assert copy.wait_idle(N.READER_STALL_S, 30.0), "given up with %d KiB read" % (len(got) >> 10)
    os.close(write_fd)
    reader.join(30)
    os.close(read_fd)


def test_two_stopped_outputs_share_one_grace(tmp_path):
    """helper-33: stdout and stderr each got their own 2 s after the exit, one after the
    other, so with both readers stopped the wrapper ended about 4 s after the command."""
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()  # nobody reads either: both copies block once the pipes fill
    mark = tmp_path / "exited"
    child = ("import os, time\nos.write(1, b'o' * (1 << 20)); os.write(2, b'e' * (1 << 20))\n"
             "open(%r, 'w').write(repr(time.time()))" % str(mark))
    proc = subprocess.Popen([PY, SCRIPT, "--notify", "never", "--", PY, "-c", child],
                            env=isolated_env(tmp_path), cwd=str(tmp_path), stdout=out_w, stderr=err_w)
    os.close(out_w)
    os.close(err_w)
    try:
        assert proc.wait(timeout=60) == 0
        ended = time.time()
    finally:
        os.close(out_r)
        os.close(err_r)
    took = ended - float(mark.read_text())
    assert took < 3.5, "the wrapper ended %.1f s after the command" % took


def test_the_last_lines_reach_a_slow_reader_when_delivery_took_the_grace(tmp_path, relay_factory):
    """The helper's reproducer: 3 MiB of output, a reader taking 700 KiB/s and a relay
    slow enough to use the 2 s grace: LAST-OUT never reached the reader, and the wrapper
    said the reader 'took no output' while it was taking it."""
    import threading
    relay = relay_factory("slow", delay=0.38)  # about 2.7 s for its 7 answers
    child = ("import os, sys\nfor _ in range(3072): os.write(1, b'z' * 1023 + b'\\n')\n"
             "os.write(1, b'LAST-OUT\\n'); sys.exit(7)")
    read_fd, write_fd = os.pipe()
    got = bytearray()
    reader = threading.Thread(target=_steady_reader, args=(read_fd, 700, got), daemon=True)
    reader.start()
    proc = subprocess.Popen([PY, SCRIPT, "--smtp", relay.addr, "--to", "ana@example.org", "--",
                             PY, "-c", child], env=isolated_env(tmp_path), cwd=str(tmp_path),
                            stdout=write_fd, stderr=subprocess.PIPE)
    os.close(write_fd)
    err = proc.communicate(timeout=120)[1].decode()
    reader.join(60)
    os.close(read_fd)
    assert proc.returncode == 7
    assert relay.wait_for(1), err
    assert got.endswith(b"LAST-OUT\n"), (len(got) >> 10, err)
    assert "took no output" not in err

"""The outbox: spool first, resend later. Messages that could not go out are kept whole and
private, found again (beside the log, in a fallback place), resent oldest first and exactly once
(claims, leases, concurrent resends and flushes), and dead-lettered when refused for good; under
faults at their worst moments: real wrapper processes, real SIGKILLs, real permissions, a real
SMTP server (conftest.py). strace (a real tracer, nothing in gpualert) holds chosen system calls
so that a moment lasts long enough to strike in."""
import glob
import os
import re
import shutil
import signal
import socket
import stat
import subprocess
import tempfile
import time

import pytest

from _load import load_gpualert
from messages import _deliver, make_result, outbox_files
from wrapper_helpers import (PY, SCRIPT, _resend, addressed, broken_home_env, child, isolated_env,
                             outbox_messages, parse, remove_tree, run_gpualert, spooled, wait_until)


def _strace():
    path = shutil.which("strace")
    if not path:
        pytest.skip("strace is not installed (apt-get install strace)")
    return path


def _read(path):
    try:
        with open(path, "rb") as f:
            return f.read()
    except OSError:
        return b""


def _state(pid):
    """Is a thread of the process held by its tracer (state t)? Only the traced calls stop."""
    for stat in glob.glob("/proc/%d/task/*/stat" % pid):
        if _read(stat).rsplit(b")", 1)[-1].split()[0:1] == [b"t"]:
            return True
    return False


def _items(folder, pattern="*.eml*"):
    return sorted(glob.glob(os.path.join(str(folder), pattern)))


def _wrapper_pid(proc):
    line = proc.stdout.readline()
    if not line.strip().isdigit():
        proc.kill()
        pytest.skip("strace cannot trace here: %s" % proc.communicate(timeout=10)[1][-300:])
    return int(line)


@pytest.mark.parametrize("which,marker", [
    ("stand-in", b"held: provisional"), ("full", b"spooled before the first attempt")],
    ids=["stand-in", "full"])
def test_a_sigkill_in_a_spooled_message_s_fsync_loses_nothing(tmp_path, smtp_plain, which, marker):
    # The stand-in is spooled claimed, as .tmp-NAME, fsync'd, renamed. A SIGKILL in its
    # fsync left the .tmp- file, which no listing takes: the run's only message was lost.
    # In the full message's fsync (written over the stand-in), the stand-in went out and the
    # full message stayed behind as a .tmp- file for ever.
    # strace holds every fsync for 1 s (the poll below looks every 5 ms); the wrapper is killed
    # while held in the chosen one.
    strace = _strace()
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(5)
    outbox = tmp_path / "outbox"
    argv = [strace, "-f", "-qq", "-o", os.devnull, "-e", "trace=fsync,fdatasync",
            "-e", "inject=fsync,fdatasync:delay_enter=1000000", PY, SCRIPT,
            "--log-dir", str(tmp_path / "logs"), "--outbox", str(outbox), "--to", "owner@example.org",
            "--smtp", "127.0.0.1:%d" % silent.getsockname()[1], "--smtp-timeout", "60", "--"] + \
        child("import os; print(os.getppid(), flush=True); raise SystemExit(3)")
    proc = subprocess.Popen(argv, env=isolated_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=str(tmp_path))
    try:
        wrapper = _wrapper_pid(proc)
        deadline, struck = time.time() + 40, False
        while time.time() < deadline and not struck:
            temps = _items(outbox, ".tmp-*")
            if temps and marker in _read(temps[0])[:300] and _state(wrapper):
                os.kill(wrapper, signal.SIGKILL)  # held in its fsync: now
                struck = True
            time.sleep(0.005)
        assert struck, ("the %s was never seen in its fsync" % which, os.listdir(str(outbox)) if outbox.exists() else None)
        proc.communicate(timeout=30)
    finally:
        silent.close()
        if proc.poll() is None:
            proc.kill()
    resend = _resend(tmp_path, outbox, smtp_plain.addr)
    assert resend.returncode == 0, resend.stderr
    assert len(smtp_plain.wait_for(1)) == 1, resend.stderr
    assert (b"provisional message" in smtp_plain.messages[0].data) == (which == "stand-in")
    assert _items(outbox, "*") + _items(outbox, ".tmp-*") == [], "the adopted file stays behind"
    again = _resend(tmp_path, outbox, smtp_plain.addr)
    assert again.returncode == 0 and len(smtp_plain.messages) == 1


def test_a_half_written_orphan_is_never_sent_as_if_whole(tmp_path, smtp_plain):
    # An orphan whose bytes fall short of what its writer meant to write (SIGKILL inside the
    # write, a crash before the fsync ended) goes to dead/ and is never sent.
    g = load_gpualert()
    outbox = tmp_path / "outbox"
    data = g._stamp(b"From: a@example.org\nTo: owner@example.org\nSubject: whole\n\nall of it\n", "test")
    path = g.spool_in(str(outbox), data, "eml")
    name = os.path.basename(path)
    dead_pid = _dead_pid()
    for label, cut in (("short", data[:-5]), ("garbled", data[:-5] + b"\0\0\0\0\0")):
        tmp = os.path.join(str(outbox), g._tmp_name(name.replace(".eml", label + ".eml"), data,
                                                    pid=dead_pid))
        with open(tmp, "wb") as f:
            f.write(cut)
    bogus = g._tmp_label(name.replace(".eml", "bogus.eml"), False, dead_pid, 1 << 40, 0)
    with open(os.path.join(str(outbox), bogus), "wb") as f:  # a length no file has: never read
        f.write(data)
    resend = _resend(tmp_path, outbox, smtp_plain.addr)
    assert resend.returncode == 0, resend.stderr
    assert len(smtp_plain.wait_for(1)) == 1  # the whole one only
    assert [m.data.count(b"all of it") for m in smtp_plain.messages] == [1]
    assert len(_items(outbox / "dead", "*.eml")) == 3
    assert _items(outbox, ".tmp-*") == []


def _dead_pid():
    proc = subprocess.Popen(["true"])
    proc.wait()
    return proc.pid


@pytest.mark.parametrize("relay_up", [True, False], ids=["relay-up", "relay-down"])
def test_an_outbox_made_read_only_after_the_stand_in_sends_one_message(
        tmp_path, ordinary_user, refusing_port, smtp_plain, relay_up):
    # The stand-in sits claimed in the outbox; the outbox turns read-only before the full
    # message: that one goes to the next place of the chain, and the stand-in cannot be
    # removed. Once the outbox is writable again, resend met both and sent both.
    strace = _strace()
    home = tempfile.mkdtemp(prefix="gpualert-ro-")
    try:
        os.chown(home, ordinary_user.uid, ordinary_user.gid)
        _read_only_run(home, strace, ordinary_user, smtp_plain.addr if relay_up else
                       "127.0.0.1:%d" % refusing_port)
        ids = set(_message_ids(home)) | set(_message_ids(smtp_plain.messages))
        assert len(ids) == 1, ids  # stand-in and full message: one Message-ID, for receivers
        env = dict(PATH="/usr/bin:/bin", HOME=home, XDG_STATE_HOME=os.path.join(home, "state"),
                   TMPDIR=home)
        resend = ordinary_user.run(["/usr/bin/python3", ordinary_user.script, "resend", "--outbox",
                                 os.path.join(home, "outbox"), "--log-dir", os.path.join(home, "logs"),
                                 "--smtp", smtp_plain.addr, "--max-per-hour", "0"], env=env, cwd=home)
        assert resend.returncode == 0, resend.stderr
        got = smtp_plain.wait_for(1)
        assert len(got) == 1, [m.data[:400] for m in got]
        assert b"provisional message" not in got[0].data
        assert _items(os.path.join(home, "outbox"), "*.eml*") == []
    finally:
        remove_tree(home)


def _message_ids(where):
    """Message-IDs of the messages spooled under a folder, or of received messages."""
    import email
    if isinstance(where, str):
        datas = [_read(p) for p in glob.glob(os.path.join(where, "**", "*.eml*"), recursive=True)
                 if not os.path.basename(p).startswith(".")]
    else:
        datas = [m.data for m in where]
    return [email.message_from_bytes(d.split(b"\n", 1)[1] if d.startswith(b"X-Gpualert-Outbox")
                                     else d)["Message-ID"] for d in datas]


def _read_only_run(home, strace, user, relay):
    """One wrapped run as `user`; its outbox is made read-only as soon as the stand-in is in
    it (every rename is held 0.75 s after it is done, so the full message comes later)."""
    outbox = os.path.join(home, "outbox")
    env = dict(PATH="/usr/bin:/bin", HOME=home, XDG_STATE_HOME=os.path.join(home, "state"),
               TMPDIR=home, GPUALERT_SENDMAIL="none")
    argv = user.argv([strace, "-f", "-qq", "-o", "/dev/null", "-e", "trace=rename,renameat,renameat2",
                      "-e", "inject=rename,renameat,renameat2:delay_exit=750000",
                      "/usr/bin/python3", user.script, "--log-dir", os.path.join(home, "logs"),
                      "--outbox", outbox, "--to", "owner@example.org", "--smtp", relay,
                      "--smtp-timeout", "5", "--max-per-hour", "0", "--",
                      "/usr/bin/python3", "-c", "import os; print(os.getppid(), flush=True); raise SystemExit(3)"])
    proc = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=home)
    try:
        _wrapper_pid(proc)
        deadline, struck = time.time() + 40, False
        while time.time() < deadline and not struck:
            if any(b"provisional" in _read(p)[:200] for p in _items(outbox, "[0-9]*.eml*")):
                os.chmod(outbox, 0o500)
                struck = True
            time.sleep(0.005)
        assert struck, "the stand-in never reached the outbox"
        out, err = proc.communicate(timeout=90)
        assert proc.returncode == 3, err
    finally:
        if proc.poll() is None:
            proc.kill()
        if os.path.isdir(outbox):
            os.chmod(outbox, 0o700)


def test_two_resends_at_once_adopt_each_orphan_once(tmp_path, smtp_plain):
    # Twenty whole orphans of a dead writer; two resends race for them: each is sent once.
    g = load_gpualert()
    outbox = tmp_path / "outbox"
    os.makedirs(str(outbox), mode=0o700)
    dead_pid = _dead_pid()
    for i in range(20):
        data = g._stamp(("From: a@example.org\nTo: owner@example.org\nSubject: orphan-%02d\n\n"
                         "x\n" % i).encode(), "test")
        name = "20260101T000000.%06dZ-%d-abcdef.eml" % (i, dead_pid)
        with open(os.path.join(str(outbox), g._tmp_name(name, data, pid=dead_pid)), "wb") as f:
            f.write(data)
    argv = [PY, SCRIPT, "resend", "--smtp", smtp_plain.addr, "--log-dir", str(tmp_path / "logs"),
            "--outbox", str(outbox), "--max-per-hour", "0"]
    procs = [subprocess.Popen(argv, env=isolated_env(tmp_path), cwd=str(tmp_path),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE) for _ in range(2)]
    for proc in procs:
        assert proc.wait(60) == 0, proc.stderr.read()
        proc.stdout.close()
        proc.stderr.close()
    subjects = sorted(m.data.split(b"Subject: ", 1)[1].split(b"\r\n", 1)[0] for m in smtp_plain.messages)
    assert subjects == [b"orphan-%02d" % i for i in range(20)]
    assert os.listdir(str(outbox)) == [] or set(os.listdir(str(outbox))) <= {".lock"}


def test_an_early_notice_spooled_after_the_exit_keeps_the_stand_in(tmp_path, smtp_plain):
    # A WARNING notice (SIGUSR1 from the scheduler) still on its way when the job exits was
    # spooled after the stand-in, and any message of the run spooled then dropped the
    # stand-in: a SIGKILL before the full message was spooled left only the WARNING, and the
    # job's end was never told. The wrapper is killed in that moment when it comes (the
    # order of the notice and the stand-in varies: five runs).
    for i in range(5):
        work = tmp_path / ("run%d" % i)
        work.mkdir()
        smtp_plain.messages[:] = []
        _warning_then_sigkill(work)
        resend = _resend(work, work / "outbox", smtp_plain.addr)
        assert resend.returncode == 0, resend.stderr
        statuses = sorted(re.search(rb"X-Gpualert-Status: (\w+)", m.data).group(1)
                          for m in smtp_plain.wait_for(1))
        assert b"SUCCESS" in statuses, (i, statuses, resend.stderr)


def _warning_then_sigkill(work):
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(5)  # nothing leaves during the run: what is spooled is what resend finds
    outbox = work / "outbox"
    code = ("import os, signal, sys, time\n"
            "signal.signal(signal.SIGUSR1, lambda s, f: sys.exit(0))\n"
            "print(os.getppid(), flush=True)\n"
            "time.sleep(30)\n")
    env = isolated_env(work, SLURM_JOB_ID="4242", SLURM_JOB_NAME="train")
    argv = [PY, SCRIPT, "--log-dir", str(work / "logs"), "--outbox", str(outbox), "--to",
            "owner@example.org", "--smtp", "127.0.0.1:%d" % silent.getsockname()[1],
            "--smtp-timeout", "20", "--"] + child(code)
    proc = subprocess.Popen(argv, env=env, cwd=str(work), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        wrapper = int(proc.stdout.readline())
        proc.send_signal(signal.SIGUSR1)
        deadline, seen = time.time() + 30, False
        while time.time() < deadline and proc.poll() is None:
            heads = [_read(p)[:300] for p in _items(outbox, "[0-9]*.eml*")]
            stand_in = any(b"held: provisional" in h for h in heads)
            full = any(b"before the first attempt" in h and b"SUCCESS" in h for h in heads)
            seen = seen or stand_in
            if full or (seen and not stand_in):  # the full message is safe, or the moment came
                os.kill(wrapper, signal.SIGKILL)
                break
            time.sleep(0.002)
        proc.communicate(timeout=30)
    finally:
        silent.close()
        if proc.poll() is None:
            proc.kill()


def _sigkill_just_after_the_exit(work, delay):
    """The issue's reproducer: the wrapper is SIGKILLed `delay` s after its command exited
    (port 9: nothing listens; the message would only be spooled)."""
    argv = [PY, SCRIPT, "--quiet", "--smtp", "127.0.0.1:9", "--smtp-tls", "none", "--to", "w@x",
            "--log-dir", str(work / "logs"), "--outbox", str(work / "outbox"), "--",
            "sh", "-c", "touch exited; exit 1"]
    proc = subprocess.Popen(argv, env=isolated_env(work), cwd=str(work),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.time() + 30
        while not (work / "exited").exists() and time.time() < deadline and proc.poll() is None:
            time.sleep(0.01)
        assert (work / "exited").exists(), "the command never ran"
        time.sleep(delay)  # the moment to strike in, not a wait for a result
        proc.kill()
        proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_sigkill_just_after_the_command_exits_loses_no_message(tmp_path, smtp_plain):
    # The stand-in reached the disk 60-170 ms after the exit; a SIGKILL in that window left
    # nothing to resend (lost 5 of 5 at 20 ms). It is spooled before the launch now: one
    # message each time, whichever of the stand-ins or the full message the kill left.
    for i, delay in enumerate((0.0, 0.005, 0.01, 0.02, 0.04)):
        work = tmp_path / ("run%d" % i)
        work.mkdir()
        smtp_plain.messages[:] = []
        _sigkill_just_after_the_exit(work, delay)
        resend = _resend(work, work / "outbox", smtp_plain.addr)
        assert resend.returncode == 0, resend.stderr
        got = smtp_plain.wait_for(1)
        assert len(got) == 1, (delay, resend.stdout, resend.stderr)
        assert re.search(rb"X-Gpualert-Status: (FAILED|SILENT)", got[0].data), got[0].data[:400]
        again = _resend(work, work / "outbox", smtp_plain.addr)
        assert again.returncode == 0 and len(smtp_plain.messages) == 1, again.stdout


def test_a_wrapper_killed_mid_job_is_told_by_resend_with_its_last_lines(tmp_path, smtp_plain):
    # kill -9 of the wrapper (the OOM killer choosing it, a node losing power) while the job
    # runs: the launch stand-in says the job went silent, with the lines it had printed.
    code = ("import os, sys, time\n"
            "print('epoch 7 loss 0.25', flush=True)\n"
            "print(os.getppid(), os.getpid(), flush=True)\n"
            "time.sleep(60)\n")
    argv = [PY, SCRIPT, "--log-dir", str(tmp_path / "logs"), "--outbox", str(tmp_path / "outbox"),
            "--to", "owner@example.org", "--smtp", "127.0.0.1:9", "--smtp-tls", "none", "--"] + child(code)
    proc = subprocess.Popen(argv, env=isolated_env(tmp_path), cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    job = None
    try:
        assert proc.stdout.readline().startswith(b"epoch 7")
        wrapper, job = [int(n) for n in proc.stdout.readline().split()]
        deadline, renewed = time.time() + 30, False
        while time.time() < deadline and not renewed:  # a renewal has put the job's lines in it
            renewed = any(b"epoch 7" in _read(p) for p in _items(tmp_path / "outbox", "[0-9]*.eml*"))
            time.sleep(0.05)
        assert renewed, os.listdir(str(tmp_path / "outbox"))
        os.kill(wrapper, signal.SIGKILL)
        proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
        if job:
            os.kill(job, signal.SIGKILL)  # the orphaned job, which outlives its wrapper
    resend = _resend(tmp_path, tmp_path / "outbox", smtp_plain.addr)
    assert resend.returncode == 0, resend.stderr
    [got] = smtp_plain.wait_for(1)
    assert b"X-Gpualert-Status: SILENT" in got.data
    assert b"went silent" in got.data and b"epoch 7 loss 0.25" in got.data
    assert b"gpualert or its node died" in got.data


def _claimed_item(g, outbox, host, pid, when):
    data = g._stamp(b"From: a@example.org\nTo: owner@example.org\nSubject: held\n\nx\n", "test")
    path = g.spool_in(str(outbox), data, "eml")
    claimed = "%s~claimed~%s~%d~%d" % (path, host, pid, when)
    os.rename(path, claimed)
    return claimed


@pytest.mark.parametrize("host", ["here", "othernode"])
def test_a_claim_20_minutes_old_by_the_clock_is_not_taken_from_a_live_owner(tmp_path, smtp_plain, host):
    # The issue's `faketime -f '+20m' gpualert.py resend` beside a slow resend in progress
    # (faketime is not installed here: the claim's time says 20 minutes ago instead, which
    # is what the skewed reader saw): the claim was taken over by wall-clock age and the
    # message sent twice. Now a reader takes a claim over only when it saw it unrenewed for
    # CLAIM_LEASE_S on its own clock since boot; a first sighting never does.
    g = load_gpualert()
    owner = subprocess.Popen(["sleep", "60"])  # alive, on this host
    try:
        name = g._owner_tag() if host == "here" else host
        claimed = _claimed_item(g, tmp_path / "outbox", name, owner.pid, int(time.time()) - 1200)
        for _ in range(2):
            resend = _resend(tmp_path, tmp_path / "outbox", smtp_plain.addr)
            assert resend.returncode == 0, resend.stderr
            assert b"1 held by a live owner" in resend.stdout, resend.stdout
        assert smtp_plain.messages == [] and os.path.exists(claimed)
    finally:
        owner.kill()
        owner.wait()


def test_a_lease_lapses_only_after_a_reader_saw_it_unrenewed_for_the_lease(tmp_path):
    g = load_gpualert()
    outbox = str(tmp_path / "outbox")
    claimed = _claimed_item(g, outbox, "othernode", 4242, int(time.time()) + 86400)  # a clock ahead
    now = [1000.0]
    clock = lambda: ("boot-a", now[0])  # noqa: E731
    assert g.ready_items(outbox, clock=clock) == []  # first sighting
    now[0] += g.CLAIM_LEASE_S - 1
    assert g.ready_items(outbox, clock=clock) == []
    assert g.renew_claim(claimed)  # the owner renews: the lease starts again
    now[0] += 2
    assert g.ready_items(outbox, clock=clock) == []
    now[0] += g.CLAIM_LEASE_S - 1
    assert g.ready_items(outbox, clock=clock) == []
    assert g.ready_items(outbox, clock=lambda: ("boot-b", 5.0)) == []  # another boot: its own
    now[0] += 1
    assert g.ready_items(outbox, clock=clock) == [claimed]  # seen unrenewed for the lease
    assert g.ready_items(outbox, clock=lambda: ("boot-a", 10.0)) == []  # its clock went back


def test_a_sender_renews_its_claim_while_it_sends(tmp_path):
    g = load_gpualert()
    claimed = _claimed_item(g, str(tmp_path / "outbox"), "here", os.getpid(), 0)
    before = g._lease_token(os.stat(claimed))
    with g.Renewing(claimed, every=0.05):
        deadline = time.time() + 10
        while g._lease_token(os.stat(claimed)) == before and time.time() < deadline:
            time.sleep(0.01)
    assert g._lease_token(os.stat(claimed)) != before


class _PickyRelay(object):
    """A real SMTP server (aiosmtpd) that answers RCPT per address: `answers` maps an
    address to its refusal ("451 ..." or "550 ..."); the others are accepted.
    smtputf8=False: a relay that does not offer SMTPUTF8."""

    def __init__(self, answers, smtputf8=True):
        from aiosmtpd.controller import Controller
        from conftest import _Inbox, Received, free_port
        inbox, self.received, self.answers = _Inbox(), Received, dict(answers)
        self.inbox = inbox
        self.addr = "127.0.0.1:%d" % free_port()
        relay = self

        class Handler(object):
            async def handle_RCPT(self, server, session, envelope, address, options):
                if address in relay.answers:
                    return relay.answers[address]
                envelope.rcpt_tos.append(address)
                return "250 OK"

            async def handle_DATA(self, server, session, envelope):
                inbox.record(relay.received(envelope.mail_from, list(envelope.rcpt_tos),
                                            envelope.original_content or envelope.content,
                                            False, False))
                return "250 OK queued"
        host, port = self.addr.split(":")
        self.controller = Controller(Handler(), hostname=host, port=int(port),
                                     enable_SMTPUTF8=smtputf8)
        self.controller.start()

    def close(self):
        self.controller.stop()


@pytest.fixture
def picky_relay():
    relays = []

    def make(answers, **kw):
        relays.append(_PickyRelay(answers, **kw))
        return relays[-1]
    yield make
    for relay in relays:
        relay.close()


def test_recipients_the_relay_refuses_are_kept_or_dead_lettered_and_said(tmp_path, picky_relay):
    # --to good@x --to later@x --to never@x; the relay answers RCPT 451 for later@ and 550
    # for never@: the message counted as sent and left the outbox; later@ was never retried,
    # never@ never dead-lettered, and the status line said "accepted it for good@x, bad@x".
    relay = picky_relay({"later@x": "451 4.7.1 greylisted, try again later",
                         "never@x": "550 5.1.1 no such user"})
    outbox = tmp_path / "outbox"
    run = run_gpualert(tmp_path, ["--log-dir", str(tmp_path / "logs"), "--outbox", str(outbox),
                                  "--smtp", relay.addr, "--smtp-tls", "none", "--to", "good@x",
                                  "--to", "later@x", "--to", "never@x", "--max-per-hour", "0",
                                  "--"] + child("raise SystemExit(1)"))
    assert run.returncode == 1, run.stderr
    [got] = relay.inbox.wait_for(1)
    assert got.rcpt_tos == ["good@x"]
    said = run.stderr.decode()
    assert "accepted it for good@x;" in said and "later@x, never@x" not in said
    assert "refused for now by the relay: later@x (451 4.7.1 greylisted" in said, said  # not b'...'
    assert "kept for resend" in said
    assert "refused for good by the relay: never@x (550" in said  # the status line and a warning
    assert said.count("refused for good by the relay: never@x") == 2
    [dead] = _items(outbox / "dead", "*.eml")
    assert b"X-Gpualert-Dead-Reason: refused for good by the relay: never@x (550" in _read(dead)
    [kept] = _items(outbox, "[0-9]*.eml*")
    assert b"X-Gpualert-Rcpt: later@x\n" in _read(kept)
    relay.answers.pop("later@x")  # the greylisting is over: resend sends it to later@ alone
    resend = _resend(tmp_path, outbox, relay.addr)
    assert resend.returncode == 0, resend.stderr
    got = relay.inbox.wait_for(2)
    assert [m.rcpt_tos for m in got] == [["good@x"], ["later@x"]], resend.stdout
    assert _items(outbox, "[0-9]*.eml*") == []
    again = _resend(tmp_path, outbox, relay.addr)
    assert again.returncode == 0 and len(relay.inbox.messages) == 2


def test_a_non_ascii_recipient_is_dead_lettered_when_the_relay_refuses_all_the_others(
        tmp_path, picky_relay):
    """The relay (no SMTPUTF8) refused the two others, 451 and 550: the copy was kept for
    later@ and buried for never@, and the non-ASCII address was in neither, nor said."""
    relay = picky_relay({"later@x": "451 4.7.1 greylisted", "never@x": "550 5.1.1 no such user"},
                        smtputf8=False)
    outbox = tmp_path / "outbox"
    outbox.mkdir(mode=0o700)
    (outbox / "20200101T000000.000000Z-1-aaaaa1.eml").write_bytes(
        "To: later@x, never@x, j\u00fcrgen@x\nSubject: three\n\nbody\n".encode("utf-8"))
    resend = _resend(tmp_path, outbox, relay.addr)
    dead = b"".join(_read(p) for p in _items(outbox / "dead", "*.eml"))
    assert "X-Gpualert-Rcpt: j\u00fcrgen@x, never@x\n".encode("utf-8") in dead, resend.stderr
    assert b"not ASCII" in dead
    [kept] = _items(outbox, "[0-9]*.eml*")
    assert b"X-Gpualert-Rcpt: later@x\n" in _read(kept)


def test_a_copy_kept_for_some_recipients_is_addressed_to_them_alone(tmp_path):
    g = load_gpualert()
    data = g._readdressed(g._readdressed(b"To: a@x, b@x\nSubject: s\n\nbody\n", {"a@x": 0}), {"b@x": 0})
    assert data.startswith(b"X-Gpualert-Rcpt: b@x\nTo: a@x, b@x")
    assert g._envelope(data, {})[1] == ["b@x"]


def _run_into_the_log_dir_outbox(tmp_path, env):
    """A run whose outbox is unusable (a file stands where it would be): its message goes
    to <log-dir>/outbox (port 9: nothing listens)."""
    run = subprocess.run([PY, SCRIPT, "--log-dir", str(tmp_path / "logs"), "--to", "owner@example.org",
                          "--smtp", "127.0.0.1:9", "--smtp-tls", "none", "--"] + child("raise SystemExit(2)"),
                         env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert run.returncode == 2, run.stderr
    assert len(_items(tmp_path / "logs" / "outbox", "[0-9]*.eml*")) == 1, run.stderr
    return run


def _plain_resend(tmp_path, env, relay):
    return subprocess.run([PY, SCRIPT, "resend", "--smtp", relay, "--max-per-hour", "0"], env=env,
                          cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)


def test_a_plain_resend_finds_a_message_saved_under_the_log_dir(tmp_path, smtp_plain):
    # The outbox unusable (over quota, read-only; here a file in its place), the message went
    # to <log-dir>/outbox, and a cron `resend` without the same --log-dir said "0 sent ...
    # 0 remaining". The place is recorded in the state dir now.
    env = isolated_env(tmp_path)
    os.makedirs(str(tmp_path / "state" / "gpualert"))
    (tmp_path / "state" / "gpualert" / "outbox").write_text("not a folder")
    _run_into_the_log_dir_outbox(tmp_path, env)
    resend = _plain_resend(tmp_path, env, smtp_plain.addr)
    assert resend.returncode == 0, resend.stderr
    assert len(smtp_plain.wait_for(1)) == 1, resend.stdout
    assert _items(tmp_path / "logs" / "outbox", "[0-9]*.eml*") == []


def test_with_no_usable_state_dir_the_place_is_recorded_in_the_private_temp_dir(tmp_path, smtp_plain):
    # A read-only or full home: the record goes to $TMPDIR/gpualert-UID (a resend on the
    # same host finds it). Here a file stands where the state dir would be.
    env = isolated_env(tmp_path, TMPDIR=str(tmp_path / "tmp"))
    os.makedirs(str(tmp_path / "tmp"))
    os.makedirs(str(tmp_path / "state"))
    (tmp_path / "state" / "gpualert").write_text("not a folder")
    _run_into_the_log_dir_outbox(tmp_path, env)
    index = tmp_path / "tmp" / ("gpualert-%d" % os.getuid()) / "outbox-places"
    assert index.read_text() == str(tmp_path / "logs" / "outbox") + "\n"
    resend = _plain_resend(tmp_path, env, smtp_plain.addr)
    assert resend.returncode == 0, resend.stderr
    assert len(smtp_plain.wait_for(1)) == 1, resend.stdout


def test_a_recorded_place_that_became_a_link_is_refused(tmp_path, smtp_plain):
    env = isolated_env(tmp_path)
    os.makedirs(str(tmp_path / "state" / "gpualert"))
    (tmp_path / "state" / "gpualert" / "outbox").write_text("not a folder")
    _run_into_the_log_dir_outbox(tmp_path, env)
    os.rename(str(tmp_path / "logs" / "outbox"), str(tmp_path / "elsewhere"))
    os.symlink(str(tmp_path / "elsewhere"), str(tmp_path / "logs" / "outbox"))
    resend = _plain_resend(tmp_path, env, smtp_plain.addr)
    assert resend.returncode == 0, resend.stderr
    assert smtp_plain.messages == []
    assert b"symbolic link: refused" in resend.stdout + resend.stderr


def test_when_every_recipient_is_refused_each_gets_its_due(tmp_path, picky_relay):
    # 451 for one, 550 for the other and none accepted: the first code decided for both
    # (all buried, or all retried for ever).
    relay = picky_relay({"later@x": "451 4.7.1 try again later", "never@x": "550 5.1.1 no such user"})
    outbox = tmp_path / "outbox"
    run = run_gpualert(tmp_path, ["--log-dir", str(tmp_path / "logs"), "--outbox", str(outbox),
                                  "--smtp", relay.addr, "--smtp-tls", "none", "--to", "later@x",
                                  "--to", "never@x", "--max-per-hour", "0", "--"] + child("raise SystemExit(1)"))
    assert run.returncode == 1, run.stderr
    [dead] = _items(outbox / "dead", "*.eml")
    assert b"X-Gpualert-Rcpt: never@x\n" in _read(dead)
    [kept] = _items(outbox, "[0-9]*.eml*")
    assert b"X-Gpualert-Rcpt: later@x\n" in _read(kept)
    relay.answers.pop("later@x")
    resend = _resend(tmp_path, outbox, relay.addr)
    assert resend.returncode == 0, resend.stderr
    assert [m.rcpt_tos for m in relay.inbox.wait_for(1)] == [["later@x"]]
    assert _items(outbox, "[0-9]*.eml*") == []


def test_a_stopped_owner_on_this_host_keeps_its_claim_past_the_lease(tmp_path):
    # A job suspended (Ctrl-Z, scontrol suspend: SIGSTOP) cannot renew, yet is not gone.
    g = load_gpualert()
    outbox = str(tmp_path / "outbox")
    owner = subprocess.Popen(["sleep", "60"])
    try:
        claimed = _claimed_item(g, outbox, g._owner_tag(), owner.pid, int(time.time()))
        now = [1000.0]
        clock = lambda: ("boot-a", now[0])  # noqa: E731
        assert g.ready_items(outbox, clock=clock) == []
        now[0] += g.CLAIM_LEASE_S
        owner.send_signal(signal.SIGSTOP)
        deadline = time.time() + 10
        while not g._owner_stopped(os.path.basename(claimed)) and time.time() < deadline:
            time.sleep(0.01)
        assert g.ready_items(outbox, clock=clock) == []
        owner.send_signal(signal.SIGCONT)
        deadline = time.time() + 10
        while g._owner_stopped(os.path.basename(claimed)) and time.time() < deadline:
            time.sleep(0.01)
        assert g.ready_items(outbox, clock=clock) == [claimed]  # alive, running, unrenewed: stuck
    finally:
        owner.kill()
        owner.wait()


def test_a_place_recorded_in_a_fresh_private_temp_dir_is_found(tmp_path, smtp_plain):
    # $TMPDIR/gpualert-UID not usable as ours (someone else made it first, or it is not a folder
    # it): the place went to $TMPDIR/gpualert-UID-XXXX/outbox-places, which resend never read.
    # (Another user's folder needs root; a file of that name is refused the same way.)
    env = isolated_env(tmp_path, TMPDIR=str(tmp_path / "tmp"))
    os.makedirs(str(tmp_path / "tmp"))
    (tmp_path / "tmp" / ("gpualert-%d" % os.getuid())).write_text("someone else's")
    os.makedirs(str(tmp_path / "state"))
    (tmp_path / "state" / "gpualert").write_text("not a folder")
    _run_into_the_log_dir_outbox(tmp_path, env)
    [index] = glob.glob(str(tmp_path / "tmp" / ("gpualert-%d-*" % os.getuid()) / "outbox-places"))
    assert _read(index) == str(tmp_path / "logs" / "outbox").encode() + b"\n"
    resend = _plain_resend(tmp_path, env, smtp_plain.addr)
    assert resend.returncode == 0, resend.stderr
    assert len(smtp_plain.wait_for(1)) == 1, resend.stdout


def test_a_places_index_over_a_mib_still_records_and_shows_new_places(tmp_path, smtp_plain):
    # The index was read only to its first MiB and never pruned: a place appended after
    # that was never found. Now a rewrite keeps it small (places that still hold something,
    # once each) and all of it is read.
    env = isolated_env(tmp_path)
    os.makedirs(str(tmp_path / "state" / "gpualert"))
    (tmp_path / "state" / "gpualert" / "outbox").write_text("not a folder")
    gone = "".join("%s/gone-%06d/outbox\n" % (tmp_path, n) for n in range(40000))
    index = tmp_path / "state" / "gpualert" / "outbox-places"
    index.write_text(gone + gone)
    os.chmod(str(index), 0o600)
    assert index.stat().st_size > 1 << 20
    _run_into_the_log_dir_outbox(tmp_path, env)
    assert index.stat().st_size < 64 << 10
    assert str(tmp_path / "logs" / "outbox") + "\n" in index.read_text()
    resend = _plain_resend(tmp_path, env, smtp_plain.addr)
    assert resend.returncode == 0, resend.stderr
    assert len(smtp_plain.wait_for(1)) == 1, resend.stdout


def test_resend_counts_a_recipient_it_dead_letters(tmp_path, picky_relay):
    # 451 for later@ and other@ at the run (kept for resend), then 550 for later@ (451 for
    # other@) at the resend: later@'s copy went to dead/ while resend said "0 refused for
    # good (dead/)".
    relay = picky_relay({"later@x": "451 4.7.1 try again later", "other@x": "451 4.7.1 later"})
    outbox = tmp_path / "outbox"
    run = run_gpualert(tmp_path, ["--log-dir", str(tmp_path / "logs"), "--outbox", str(outbox),
                                  "--smtp", relay.addr, "--smtp-tls", "none", "--to", "good@x",
                                  "--to", "later@x", "--to", "other@x", "--max-per-hour", "0",
                                  "--"] + child("raise SystemExit(1)"))
    assert run.returncode == 1, run.stderr
    relay.answers["later@x"] = "550 5.1.1 no such user"
    resend = _resend(tmp_path, outbox, relay.addr)
    assert len(_items(outbox / "dead", "*.eml")) == 1, resend.stdout
    assert b"1 refused for good (dead/), 1 remaining" in resend.stdout, resend.stdout
    relay.answers.clear()
    again = _resend(tmp_path, outbox, relay.addr)
    assert b"1 sent, 0 failed, 0 refused for good (dead/), 0 remaining" in again.stdout, again.stdout


def test_resend_quiet_prints_nothing(tmp_path, smtp_plain):
    # A cron line `gpualert resend --quiet` every 10 minutes mailed its counts 144 times a day.
    resend = run_gpualert(tmp_path, ["resend", "--quiet", "--smtp", smtp_plain.addr])
    assert resend.returncode == 0, resend.stderr
    assert resend.stdout == b"" and resend.stderr == b""


def test_one_copy_per_mailbox_however_it_is_written(tmp_path, smtp_plain):
    # --to ok@x --to ok@X --to 'Ok <ok@x>' --to ok@x: RCPT for each, four copies to one box.
    run = run_gpualert(tmp_path, ["--log-dir", str(tmp_path / "logs"), "--outbox", str(tmp_path / "outbox"),
                                  "--smtp", smtp_plain.addr, "--to", "ok@x", "--to", "ok@X",
                                  "--to", "Ok <ok@x>", "--to", "ok@x", "--to", "Other@x",
                                  "--max-per-hour", "0", "--"] + child("raise SystemExit(1)"))
    assert run.returncode == 1, run.stderr
    [got] = smtp_plain.wait_for(1)
    assert got.rcpt_tos == ["ok@x", "Other@x"]  # the local part's case is the domain's to judge
    g = load_gpualert()
    assert g._envelope(b"To: a@x, a@X, Bee <a@x>, A@x\n\nbody\n", {})[1] == ["a@x", "A@x"]


def _in_pid_namespace(argv):
    """argv run in a new PID namespace (a container's view: its own pid numbers), as a
    child of the namespace's first process so its pid is not 1."""
    if not shutil.which("unshare"):
        pytest.skip("unshare is not installed (util-linux)")
    import shlex
    return ["unshare", "-fp", "--mount-proc", "sh", "-c",
            "i=0; while [ $i -lt 300 ]; do /bin/true; i=$((i+1)); done; %s; exit $?"
            % " ".join(shlex.quote(a) for a in argv)]


@pytest.mark.needs_root
@pytest.mark.parametrize("where", ["wrapper-in-namespace", "resend-in-namespace"])
def test_a_pid_from_another_pid_namespace_proves_nothing(tmp_path, smtp_plain, where):
    # A claim says host and pid; a resend on the same host but in another PID namespace
    # (a container) found no such pid and sent "SILENT" for a job still running, then the
    # real message came: two. The claim names its PID namespace and boot now; from another,
    # only the lease can tell.
    go = tmp_path / "go"
    code = ("import os, time\ndeadline = time.time() + 60\n"
            "while not os.path.exists(%r) and time.time() < deadline:\n    time.sleep(0.05)\n"
            "raise SystemExit(18)\n" % str(go))
    wrapper = [PY, SCRIPT, "--log-dir", str(tmp_path / "logs"), "--outbox", str(tmp_path / "outbox"),
               "--to", "owner@example.org", "--smtp", smtp_plain.addr, "--max-per-hour", "0",
               "--"] + child(code)
    resend = [PY, SCRIPT, "resend", "--smtp", smtp_plain.addr, "--log-dir", str(tmp_path / "logs"),
              "--outbox", str(tmp_path / "outbox"), "--max-per-hour", "0"]
    if where == "wrapper-in-namespace":
        wrapper = _in_pid_namespace(wrapper)
    else:
        resend = _in_pid_namespace(resend)
    proc = subprocess.Popen(wrapper, env=isolated_env(tmp_path), cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline, claimed = time.time() + 30, []
        while time.time() < deadline and not claimed:
            claimed = _items(tmp_path / "outbox", "[0-9]*.eml~claimed~*")
            time.sleep(0.05)
        assert claimed, proc.stderr.peek() if hasattr(proc.stderr, "peek") else ""
        pid = int(claimed[0].rsplit("~", 2)[1])
        if where == "wrapper-in-namespace" and os.path.exists("/proc/%d" % pid):
            pytest.skip("the namespace's pid %d is also a live pid here" % pid)
        out = subprocess.run(resend, env=isolated_env(tmp_path), cwd=str(tmp_path),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        assert b"0 sent" in out.stdout and b"1 held by a live owner" in out.stdout, out.stdout + out.stderr
        go.write_text("")
        assert proc.wait(60) == 18
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    [got] = smtp_plain.wait_for(1)
    assert b"X-Gpualert-Status: FAILED" in got.data
    assert len(smtp_plain.messages) == 1


N = load_gpualert()


# ---- one unsendable file never blocks the outbox ----

def test_an_unsendable_file_in_the_outbox_does_not_block_the_ones_behind_it(tmp_path, make_smtp_server):
    """An empty (or foreign) .eml sorted first: "no recipients" was reported as "the transport
    is not usable now", so every resend (and every run's flush) stopped before the good
    messages behind it, for ever. It is a dead letter; the others go. So is one whose address
    is not ASCII (a foreign or hand-edited .eml) at a relay without SMTPUTF8:
    UnicodeEncodeError in the SMTP session was told as "the transport is down" too."""
    smtp_plain = make_smtp_server(smtputf8=False)
    outbox = tmp_path / "outbox"
    outbox.mkdir(mode=0o700)
    (outbox / "20200101T000000.000000Z-1-aaaaa1.eml").write_bytes(b"")
    (outbox / "20200101T000000.000000Z-1-aaaaa2.eml").write_bytes(b"Subject: no one\n\nbody\n")
    (outbox / "20200101T000000.000000Z-1-aaaaa4.eml").write_bytes(
        "To: j\u00f6rg@ex\u00e4mple.org\nSubject: umlaut\n\nbody\n".encode("utf-8"))
    (outbox / "20200101T000001.000000Z-1-aaaaa3.eml").write_bytes(
        b"To: me@example.org\nSubject: behind-3c9d\n\nbody\n")
    proc = subprocess.run([PY, SCRIPT, "resend", "--outbox", str(outbox), "--max-per-hour", "0",
                           "--smtp", smtp_plain.addr], env=isolated_env(tmp_path),
                          cwd=str(tmp_path), timeout=60, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    got = smtp_plain.wait_for(1, timeout=20)
    assert len(got) == 1 and b"behind-3c9d" in got[0].data, proc.stdout + proc.stderr
    assert outbox_messages(tmp_path) == []
    assert len(list((outbox / "dead").glob("*.eml*"))) == 3, list(outbox.rglob("*"))
    assert proc.returncode == 0 and b"address is not ASCII" in proc.stderr, proc.stdout + proc.stderr


@pytest.mark.parametrize("smtputf8", [False, True])
def test_a_non_ascii_address_costs_only_that_address_and_only_where_the_relay_cannot_take_it(
        tmp_path, make_smtp_server, smtputf8):
    """One non-ASCII recipient made the whole message a dead letter, the ASCII recipients'
    copy too; and a relay offering SMTPUTF8 was never asked to use it."""
    relay = make_smtp_server(smtputf8=smtputf8)
    outbox = tmp_path / "outbox"
    outbox.mkdir(mode=0o700)
    (outbox / "20200101T000000.000000Z-1-aaaaa1.eml").write_bytes(
        "To: bob@example.org, j\u00fcrgen@example.org\nSubject: both\n\nbody\n".encode("utf-8"))
    proc = subprocess.run([PY, SCRIPT, "resend", "--outbox", str(outbox), "--max-per-hour", "0",
                           "--smtp", relay.addr, "--smtp-tls", "none"], env=isolated_env(tmp_path),
                          cwd=str(tmp_path), timeout=60, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    [got] = relay.wait_for(1, timeout=20)
    dead = list((outbox / "dead").glob("*.eml")) if (outbox / "dead").exists() else []
    if smtputf8:
        assert sorted(got.rcpt_tos) == ["bob@example.org", "j\u00fcrgen@example.org"], proc.stderr
        assert dead == [] and proc.returncode == 0, proc.stdout + proc.stderr
    else:
        assert got.rcpt_tos == ["bob@example.org"], proc.stdout + proc.stderr
        assert len(dead) == 1 and b"not ASCII" in dead[0].read_bytes(), proc.stdout + proc.stderr
    assert outbox_messages(tmp_path) == []


# ---- a run's own message is claimed from the moment it is spooled ----

def test_a_flush_at_the_same_moment_cannot_take_a_runs_own_message(tmp_path, smtp_plain,
                                                                     monkeypatch):
    """35 runs at once with --max-per-hour 30: a run spooled its message, another run's
    outbox flush claimed it before the run did (then released it at the hourly cap), and the
    run reported "being sent by another gpualert process": its message was never sent."""
    import time as _time
    cfg = dict(N.default_config(), to=["me@example.org"], smtp=smtp_plain.addr, sendmail="none",
               outbox=str(tmp_path / "outbox"), log_dir=str(tmp_path / "logs"), max_per_hour=0,
               quiet=True)
    real, stolen = N.spool_message, []

    def spool_then_a_flush_runs(*args, **kw):
        path, errors = real(*args, **kw)
        for item in N.ready_items(os.path.dirname(path)):  # another process's flush, now
            stolen.append(N.claim_item(item))
        return path, errors
    monkeypatch.setattr(N, "spool_message", spool_then_a_flush_runs)
    out = N.deliver(b"To: me@example.org\r\nSubject: race-5e1f\r\n\r\nbody\r\n", cfg,
                    _time.monotonic() + 20)
    assert out["outcome"] == "sent", out
    assert stolen == []
    assert len(smtp_plain.wait_for(1)) == 1


# ---------------------------------------------------------------- outbox

def test_outbox_file_is_atomic_private_sortable(tmp_path, cfg):
    msg, _ = N.build_message(make_result(tmp_path), cfg)
    paths = [N.save_to_outbox(msg, cfg["outbox"], "test %d" % i) for i in range(3)]
    assert paths == sorted(paths) and len(set(paths)) == 3
    assert outbox_files(cfg) == sorted(os.path.basename(p) for p in paths)  # no .tmp- left
    assert os.stat(cfg["outbox"]).st_mode & 0o777 == 0o700
    assert all(os.stat(p).st_mode & 0o777 == 0o600 for p in paths)
    assert parse(open(paths[0], "rb").read())["X-Gpualert-Outbox-Reason"] == "test 0"


def test_unwritable_outbox_falls_back_to_run_dir(tmp_path, cfg, refusing_port):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    cfg.update(outbox=str(blocker / "outbox"), smtp="127.0.0.1:%d" % refusing_port)
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "outbox" and out["outbox_path"], out
    assert os.path.dirname(out["outbox_path"]) == str(tmp_path / "logs" / "outbox")  # next in the chain
    assert "outbox unusable" in out["detail"] and out["outbox_path"] in out["detail"]


def test_nothing_writable_still_returns_and_dumps(tmp_path, cfg, monkeypatch, capsys):
    monkeypatch.setattr(N, "spool_in", lambda *a: (_ for _ in ()).throw(OSError(28, "full")))
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "outbox" and out["outbox_path"] is None
    assert "could not be saved" in out["detail"]
    assert "FAILED train.py: cuda_oom" in capsys.readouterr().err


def test_outbox_then_resend_delivers_oldest_first(tmp_path, cfg, refusing_port, smtp_plain,
                                                  capsys):
    cfg["smtp"] = "127.0.0.1:%d" % refusing_port
    cfg["quiet"] = False  # resend --quiet prints nothing: its counts are the point here
    for name in ("first.py", "second.py", "third.py"):
        assert _deliver(tmp_path, cfg, name=name)[0]["outcome"] == "outbox"
    assert len(outbox_files(cfg)) == 3
    assert N.cmd_resend(None, cfg) == 1                  # relay still down: all kept
    assert len(outbox_files(cfg)) == 3
    assert "0 sent, 1 failed, 0 refused for good (dead/), 3 remaining" in capsys.readouterr().out  # stops at a dead relay
    cfg["smtp"] = smtp_plain.addr
    assert N.cmd_resend(None, cfg) == 0
    assert "3 sent, 0 failed, 0 refused for good (dead/), 0 remaining" in capsys.readouterr().out
    subjects = [parse(m.data)["Subject"] for m in smtp_plain.wait_for(3)]
    assert [s.split(": ")[0].split(" ")[-1] for s in subjects] == ["first.py", "second.py",
                                                                  "third.py"]
    assert outbox_files(cfg) == []


def test_resend_without_transport_keeps_messages(tmp_path, cfg):
    N.save_to_outbox(N.build_message(make_result(tmp_path), cfg)[0], cfg["outbox"], "x")
    report = N.resend(cfg)
    assert report["eml"]["sent"] == 0 and report["eml"]["remaining"] == 1
    assert "no mail transport" in report["details"][0]


def test_relay_down_then_resend_delivers_and_empties_the_outbox(tmp_path, refusing_port, smtp_plain):
    args = addressed(tmp_path) + ["--smtp", "127.0.0.1:%d" % refusing_port, "--"]
    proc = run_gpualert(tmp_path, args + child("raise SystemExit(3)"))
    assert proc.returncode == 3
    assert len(outbox_messages(tmp_path)) == 1
    assert b"outbox" in proc.stderr
    proc = run_gpualert(tmp_path, ["resend", "--outbox", str(tmp_path / "outbox"), "--smtp", smtp_plain.addr])
    assert proc.returncode == 0, proc.stderr
    assert len(smtp_plain.wait_for(1)) == 1
    assert outbox_messages(tmp_path) == []


def test_the_next_successful_run_flushes_the_outbox(tmp_path, refusing_port, smtp_plain):
    run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", "127.0.0.1:%d" % refusing_port, "--"]
                 + child("raise SystemExit(1)"))
    assert len(outbox_messages(tmp_path)) == 1
    proc = run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--"] + child("pass"))
    assert b"also delivered 1 earlier message" in proc.stderr
    assert len(smtp_plain.wait_for(2)) == 2
    assert outbox_messages(tmp_path) == []


def test_resend_finds_messages_saved_beside_the_log_when_the_outbox_was_unusable(tmp_path, refusing_port,
                                                                                  smtp_plain):
    blocker = tmp_path / "outbox"
    blocker.write_text("a file where the outbox directory should be")
    run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", "127.0.0.1:%d" % refusing_port, "--"]
                 + child("raise SystemExit(1)"))
    run_gpualert(tmp_path, addressed(tmp_path) + ["--dry-run", "--"] + child("raise SystemExit(2)"))
    blocker.unlink()
    proc = run_gpualert(tmp_path, ["resend", "--smtp", smtp_plain.addr, "--log-dir", str(tmp_path / "logs"),
                                   "--outbox", str(tmp_path / "outbox")])
    assert proc.returncode == 0, proc.stderr
    assert len(smtp_plain.wait_for(1)) == 1  # the stranded one; never the dry run
    assert "(exit 1," in parse(smtp_plain.messages[0].data)["Subject"]


def test_a_sigkill_during_delivery_after_a_scheduler_sigterm_still_leaves_a_message(tmp_path):
    import signal
    import socket
    import subprocess
    from wrapper_helpers import PY, SCRIPT
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(5)  # the relay accepts and never answers: delivery hangs
    env = isolated_env(tmp_path, SLURM_JOB_ID="77", SLURM_JOB_NAME="train")
    args = addressed(tmp_path) + ["--smtp", "127.0.0.1:%d" % silent.getsockname()[1], "--smtp-timeout", "60", "--"]
    proc = subprocess.Popen([PY, SCRIPT] + args + child("import time; print('ready', flush=True); time.sleep(60)"),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(tmp_path))
    try:
        assert proc.stdout.readline() == b"ready\n"
        proc.send_signal(signal.SIGTERM)  # as at a time limit; the child gets it forwarded
        silent.settimeout(30)
        silent.accept()  # gpualert is talking to the relay now: the provisional one is saved
        proc.kill()  # the scheduler's SIGKILL
        proc.communicate(timeout=10)
    finally:
        silent.close()
    # Spool first: the full message (or, had SIGKILL come sooner, the provisional one) is in
    # the outbox, still claimed by the dead wrapper: the next resend takes the claim over.
    import glob
    held = glob.glob(str(tmp_path / "outbox" / "*.eml*"))
    assert len(held) == 1, held
    msg = parse(open(held[0], "rb").read())
    assert msg["Subject"].startswith("[gpualert] INTERRUPTED") and "job 77" in msg["Subject"]


def test_the_provisional_message_is_removed_when_the_full_one_goes_out(tmp_path, smtp_plain):
    import signal
    import subprocess
    from wrapper_helpers import PY, SCRIPT
    env = isolated_env(tmp_path, SLURM_JOB_ID="78", SLURM_JOB_NAME="train")
    proc = subprocess.Popen([PY, SCRIPT] + addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--"]
                            + child("import time; print('ready', flush=True); time.sleep(60)"),
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=str(tmp_path))
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(signal.SIGTERM)
    proc.communicate(timeout=30)
    assert len(smtp_plain.wait_for(1)) == 1
    assert outbox_messages(tmp_path) == []


def _spooled_items(folder):
    import glob
    return [p for p in glob.glob(os.path.join(str(folder), "*.eml*"))
            if not os.path.basename(p).startswith(".tmp-")]


def _first_line(path):
    try:
        with open(path, "rb") as f:
            return f.readline()
    except OSError:
        return b""


def test_a_sigkill_as_the_full_message_is_spooled_never_leaves_two_to_send(tmp_path, smtp_plain):
    # Issue 9's soak: one run in 300 was delivered twice, its provisional stand-in and its
    # full message. The full one was spooled as a new item and the stand-in removed after
    # (its own unlink): a SIGKILL in between left both, and resend sent both. strace (a real
    # tracer, nothing in gpualert) holds every unlink for 2 s, so that moment lasts; the test
    # SIGKILLs the wrapper as soon as the full message is seen on disk.
    import shutil
    import signal
    import socket
    import time
    from wrapper_helpers import PY, SCRIPT
    strace = shutil.which("strace")
    if not strace:
        pytest.skip("strace is not installed (apt-get install strace)")
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(5)  # delivery hangs: the message stays spooled while we look
    outbox = tmp_path / "outbox"
    argv = [strace, "-f", "-qq", "-o", os.devnull, "-e", "trace=unlink,unlinkat",
            "-e", "inject=unlink,unlinkat:delay_enter=2000000", PY, SCRIPT] + addressed(tmp_path) + [
        "--smtp", "127.0.0.1:%d" % silent.getsockname()[1], "--smtp-timeout", "60", "--"] + \
        child("import os; print(os.getppid(), flush=True); raise SystemExit(3)")
    proc = subprocess.Popen(argv, env=isolated_env(tmp_path), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, cwd=str(tmp_path))
    try:
        line = proc.stdout.readline()
        if not line.strip().isdigit():
            proc.kill()
            pytest.skip("strace cannot trace here: %s" % proc.communicate(timeout=10)[1][-300:])
        wrapper = int(line)
        deadline, seen = time.time() + 30, []
        while time.time() < deadline:
            items = _spooled_items(outbox)
            if any(b"spooled before the first attempt" in _first_line(p) for p in items):
                os.kill(wrapper, signal.SIGKILL)  # the full message is on disk: now
                seen = items
                break
            time.sleep(0.005)
        assert seen, "the full message never reached the outbox"
        proc.communicate(timeout=30)
    finally:
        silent.close()
        if proc.poll() is None:
            proc.kill()
    left = _spooled_items(outbox)
    assert len(left) == 1, left  # one message for one run, never the stand-in as well
    resend = run_gpualert(tmp_path, ["resend", "--smtp", smtp_plain.addr, "--log-dir",
                                     str(tmp_path / "logs"), "--outbox", str(outbox)])
    assert resend.returncode == 0, resend.stderr
    assert len(smtp_plain.messages) == 1
    assert b"provisional message" not in smtp_plain.messages[0].data


# ---- spool first ----

def test_sigkill_during_delivery_leaves_the_message_in_the_outbox(tmp_path, relay_factory, smtp_plain):
    slow = relay_factory("slow", delay=1.0)  # ~5 s to get through MAIL/RCPT/DATA
    proc = subprocess.Popen([PY, SCRIPT] + addressed(tmp_path) + ["--smtp", slow.addr, "--"] + child("raise SystemExit(1)"),
                            env=isolated_env(tmp_path), cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_until(lambda: any(c.upper().startswith("EHLO") for c in slow.commands), what="delivery to start")
    finally:
        proc.kill()
        proc.communicate(timeout=10)
    assert len(spooled(tmp_path / "outbox")) == 1, os.listdir(str(tmp_path / "outbox"))
    out = run_gpualert(tmp_path, ["resend", "--outbox", str(tmp_path / "outbox"), "--smtp", smtp_plain.addr])
    assert out.returncode == 0, out.stderr
    assert len(smtp_plain.wait_for(1)) == 1
    assert spooled(tmp_path / "outbox") == []


def test_the_spooled_message_is_private_and_whole(tmp_path, refusing_port):
    run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", "127.0.0.1:%d" % refusing_port, "--"] + child("raise SystemExit(1)"))
    [path] = spooled(tmp_path / "outbox")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(str(tmp_path / "outbox")).st_mode) == 0o700
    assert parse(open(path, "rb").read())["Subject"].startswith("[gpualert] FAILED")


# ---- private paths; resend looks everywhere ----

def test_resend_finds_the_message_when_home_was_unusable(tmp_path, refusing_port, smtp_plain):
    env = broken_home_env(tmp_path)
    run = run_gpualert(tmp_path, ["--to", "owner@example.org", "--smtp", "127.0.0.1:%d" % refusing_port, "--"]
                       + child("raise SystemExit(1)"), env=env)
    assert run.returncode == 1
    assert len(spooled(tmp_path / "tmpdir")) == 1, run.stderr
    out = run_gpualert(tmp_path, ["resend", "--smtp", smtp_plain.addr], env=env)
    assert out.returncode == 0, (out.stdout, out.stderr)
    assert len(smtp_plain.wait_for(1)) == 1
    assert b"found 1" in out.stdout, out.stdout  # it says what it found where
    assert spooled(tmp_path / "tmpdir") == []


# ---- claims: exactly once ----

def _strand(tmp_path, env, n, port):
    for i in range(n):
        run_gpualert(tmp_path, ["--to", "owner@example.org", "--smtp", "127.0.0.1:%d" % port, "--"]
                     + child("raise SystemExit(%d)" % (i + 1)), env=env)
    assert len(spooled(tmp_path / "tmpdir")) == n


def test_two_resends_at_once_deliver_each_message_once(tmp_path, refusing_port, smtp_plain):
    env = broken_home_env(tmp_path)
    _strand(tmp_path, env, 10, refusing_port)
    procs = [subprocess.Popen([PY, SCRIPT, "resend", "--smtp", smtp_plain.addr, "--max-per-hour", "0"],
                              env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(2)]
    for p in procs:
        p.communicate(timeout=120)
    smtp_plain.wait_for(10)
    wait_until(lambda: spooled(tmp_path / "tmpdir") == [], what="the fallback outbox to empty")
    assert len(smtp_plain.messages) == 10
    subjects = sorted(parse(m.data)["Subject"] for m in smtp_plain.messages)
    assert len(set(subjects)) == 10


def test_concurrent_successful_runs_flush_each_stranded_message_once(tmp_path, refusing_port, smtp_plain):
    env = broken_home_env(tmp_path)
    _strand(tmp_path, env, 6, refusing_port)
    procs = [subprocess.Popen([PY, SCRIPT, "--to", "owner@example.org", "--smtp", smtp_plain.addr,
                               "--max-per-hour", "0", "--"] + child("pass"),
                              env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(8)]
    for p in procs:
        p.communicate(timeout=120)
    out = run_gpualert(tmp_path, ["resend", "--smtp", smtp_plain.addr, "--max-per-hour", "0"], env=env)
    assert out.returncode == 0, out.stderr
    smtp_plain.wait_for(14)  # every sender has exited: a duplicate would already be recorded
    failures = [parse(m.data)["Subject"] for m in smtp_plain.messages if "FAILED" in parse(m.data)["Subject"]]
    assert len(failures) == 6 and len(set(failures)) == 6, failures
    assert len(smtp_plain.messages) == 14


def test_sends_from_the_outbox_count_against_the_hourly_cap(tmp_path, refusing_port, smtp_plain):
    for i in range(4):  # each counts against the cap when it is tried, even unsent
        run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", "127.0.0.1:%d" % refusing_port, "--max-per-hour", "6",
                                                 "--"] + child("raise SystemExit(%d)" % (i + 1)))
    assert len(spooled(tmp_path / "outbox")) == 4
    run = run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--max-per-hour", "6", "--"]
                       + child("pass"))
    assert run.returncode == 0
    smtp_plain.wait_for(2)
    assert len(smtp_plain.messages) == 2, run.stderr  # this run's own + one flushed: 6 this hour
    assert len(spooled(tmp_path / "outbox")) == 3


# ---- dead letters ----

def test_a_permanent_refusal_becomes_a_dead_letter_and_is_told(tmp_path, rejecting_relay, smtp_plain):
    relay = rejecting_relay("RCPT", code=550, text="5.1.1 no such user")
    run = run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", relay.addr, "--"] + child("raise SystemExit(1)"))
    assert run.returncode == 1
    dead = glob.glob(str(tmp_path / "outbox" / "dead" / "*.eml"))
    assert len(dead) == 1, run.stderr
    assert b"X-Gpualert-Dead-Reason:" in open(dead[0], "rb").read()
    assert b"no such user" in run.stderr
    assert spooled(tmp_path / "outbox") == []
    out = run_gpualert(tmp_path, ["resend", "--outbox", str(tmp_path / "outbox"), "--smtp", relay.addr])
    assert out.returncode == 0, out.stderr
    run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--"] + child("pass"))
    body = parse(smtp_plain.wait_for(1)[0].data).get_body(("plain",)).get_content()
    assert "dead" in body and "no such user" in body


def test_a_read_only_outbox_is_never_sent_from_twice(tmp_path, ordinary_user, shared_tmp, smtp_plain):
    """The user cannot change their outbox (read-only): a message there must not go out on
    every resend; without a claim it is left alone and said so."""
    home = os.path.join(shared_tmp, "home")
    outbox = os.path.join(home, "outbox")
    msg = "From: a@example.org\nTo: owner@example.org\nSubject: readonly-%d\n\nx\n" % os.getpid()
    setup = ordinary_user.run(["sh", "-c", "mkdir -m 700 '%s' '%s' && printf '%%s' \"$0\" > '%s/m.eml' && chmod 500 '%s'"
                            % (home, outbox, outbox, outbox), msg])
    assert setup.returncode == 0, setup.stderr
    argv = ["/usr/bin/python3", ordinary_user.script, "resend", "--outbox", outbox, "--log-dir", os.path.join(home, "logs"),
            "--smtp", smtp_plain.addr, "--max-per-hour", "0"]
    env = dict(PATH="/usr/bin:/bin", HOME=home, XDG_STATE_HOME=os.path.join(home, "state"), TMPDIR=home)
    outs = [ordinary_user.run(argv, env=env, cwd=home) for _ in range(2)]
    assert all(b"cannot claim" in o.stderr for o in outs), [o.stderr for o in outs]
    assert smtp_plain.messages == []  # the server records a message before its 250, so before resend exits


def test_a_stand_in_whose_message_id_cannot_be_set_is_still_spooled_and_the_run_says_why(tmp_path):
    """The stand-in is kept even when its thread's Message-ID cannot be given to it; the run's
    notes say it kept its own (the note went to an attribute RunDelivery lacked, and the
    AttributeError dropped the stand-in)."""
    import email.message
    N = load_gpualert()
    cfg, _, _ = N.load_config({"outbox": str(tmp_path / "outbox"), "sendmail": "none"}, {})
    msg = email.message.EmailMessage()  # no Message-ID header: set_thread cannot replace it
    msg["Subject"], msg["To"] = "stand-in", "ana@example.org"
    msg.set_content("the job is running")
    notes = []
    delivery = N.RunDelivery(cfg, notes)
    delivery.spool_stand_in(msg, N.LAUNCH_STAND_IN)
    assert delivery.provisional and os.path.exists(delivery.provisional)
    assert any("kept its own Message-ID" in note for note in notes), notes


def test_a_stand_in_dropped_as_superseded_does_not_use_up_the_hourly_cap(tmp_path, smtp_plain):
    """Only a message tried counts against --max-per-hour: a stand-in its run's full message
    replaced is dropped unsent, and the full message still goes under a cap of one."""
    N = load_gpualert()
    outbox = tmp_path / "outbox"
    eml = ("From: a@example.org\nTo: bob@example.org\nSubject: %s\nMessage-ID: <%s@t>\n\nbody\n")
    stand_in = N.spool_in(str(outbox), (eml % ("stand-in", "s")).encode(), "eml")
    full = N.spool_in(str(outbox), (eml % ("full", "f")).encode(), "eml")
    assert os.path.basename(full) > os.path.basename(stand_in)  # sent in this order
    open(os.path.join(str(outbox), N.SUPERSEDED_PREFIX + os.path.basename(stand_in)), "w").close()
    proc = run_gpualert(tmp_path, ["resend", "--smtp", smtp_plain.addr, "--outbox", str(outbox),
                                   "--log-dir", str(tmp_path / "logs"), "--max-per-hour", "1"])
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert b"1 sent" in proc.stdout and b"more than 1 messages" not in proc.stderr
    assert [b"Subject: full" in m.data for m in smtp_plain.wait_for(1)] == [True]


def test_dead_letters_past_the_first_twenty_are_named_by_the_next_messages(tmp_path):
    """The list was cut to the 20 oldest before the ones already told were left out: once
    20 had been named, no later dead letter was ever named again."""
    N = load_gpualert()
    cfg, _, _ = N.load_config({"outbox": str(tmp_path / "outbox"), "sendmail": "none"}, {})
    dead = tmp_path / "outbox" / "dead"
    dead.mkdir(parents=True)
    for i in range(25):
        (dead / ("20260101T000000.%06dZ-1-aaaaaa.eml" % i)).write_bytes(
            b"X-Gpualert-Dead-Reason: 550 no such user %d\nSubject: x\n\nx\n" % i)
    first, untold = N.untold_dead_letters(cfg)
    assert (len(first), untold) == (20, 25)
    N.mark_told(first)  # as if one message had named 20 (each one names what fits)
    second, untold = N.untold_dead_letters(cfg)
    assert untold == 5 and [p for p, _ in second] == sorted(str(p) for p in dead.glob("*.eml"))[20:]
    assert second[-1][1] == "550 no such user 24"


def _dead_letters(dead, reasons):
    dead.mkdir(parents=True)
    names = ["20260101T000000.%06dZ-1-aaaaaa.eml" % i for i in range(len(reasons))]
    for name, reason in zip(names, reasons):
        (dead / name).write_bytes(b"X-Gpualert-Dead-Reason: %s\nSubject: x\n\nx\n" % reason.encode())
    return names


def _refused(i):
    return ("refused for good by the relay: user%d@example.org (550 5.1.1 <user%d@example.org>: "
            "Recipient address rejected: User unknown in virtual mailbox table)" % (i, i))


def test_a_dead_letter_note_names_only_what_fits_and_groups_one_reason():
    """The note named 20 letters in ~2.5 kB: the e-mail's row and every chat field clipped
    it, yet all 20 were marked told, so the clipped ones were never named."""
    N = load_gpualert()
    letters = [("/o/dead/%02d.eml" % i, _refused(i)) for i in range(20)]
    named, note, _ = N.dead_letter_note(letters, 20)
    assert 1 < len(named) < 20 and named == letters[:len(named)]
    assert len(note) <= N.DEAD_NOTE_CHARS and "%d more: the next message" % (20 - len(named)) in note
    assert all(os.path.basename(p) in note for p, _ in named)
    same = [(p, "550 5.1.1 no such user") for p, _ in letters]  # one bad address, 20 letters
    named, note, _ = N.dead_letter_note(same, 20)
    assert len(named) == 20 and note.count("no such user") == 1, note
    deep = "/scratch/" + "d" * 3000 + "/outbox/dead/"  # a legal path: the names come first
    named, note, _ = N.dead_letter_note([(deep + "a.eml", "550"), (deep + "b.eml", "550")], 2)
    assert len(named) == 2 and note.index("a.eml, b.eml: 550") < 100 and len(note) < 400, note


def test_every_dead_letter_marked_told_was_named_in_the_sent_message(tmp_path, smtp_plain):
    names = _dead_letters(tmp_path / "outbox" / "dead", [_refused(i) for i in range(20)])
    told = []
    for sent in range(1, 8):
        run = run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--"] + child("pass"))
        assert run.returncode == 0, run.stderr
        body = parse(smtp_plain.wait_for(sent)[-1].data).get_body(("plain",)).get_content()
        now = (tmp_path / "outbox" / "dead" / ".told").read_text().split()
        assert len(now) > len(told) and all(name in body for name in now[len(told):]), body
        told = now
        if len(told) == 20:
            break
    assert sorted(told) == names  # each named once, the oldest first, over a few messages

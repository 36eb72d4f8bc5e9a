"""Nothing lost, nothing leaked (issue 9): spool-first outbox, claims, private paths, dead
letters, secrets, redaction, artifact defaults, message size, checks at start, signals after
exit. Every test runs the real gpualert.py against real servers, processes and users."""
import email
import email.policy
import glob
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

import pytest

from wrapper_helpers import PY, SCRIPT, child, isolated_env, run_gpualert


def parse(raw):
    return email.message_from_bytes(raw, policy=email.policy.default)


def base(tmp, to="owner@example.org"):
    return ["--log-dir", str(tmp / "logs"), "--outbox", str(tmp / "outbox"), "--to", to]


def spooled(root):
    """Every message file gpualert may have left anywhere under `root` (dead letters apart)."""
    found = []
    for dirpath, dirnames, filenames in os.walk(str(root)):
        dirnames[:] = [d for d in dirnames if d != "dead"]
        found += [os.path.join(dirpath, n) for n in filenames if ".eml" in n
                  and not n.startswith(".tmp-")]
    return sorted(found)


def wait_until(predicate, timeout=20.0, what="condition"):
    end = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < end, "timed out waiting for %s" % what
        time.sleep(0.05)


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


# ---- 1. spool first ----

def test_sigkill_during_delivery_leaves_the_message_in_the_outbox(tmp_path, relay_factory, smtp_plain):
    slow = relay_factory("slow", delay=1.0)  # ~5 s to get through MAIL/RCPT/DATA
    proc = subprocess.Popen([PY, SCRIPT] + base(tmp_path) + ["--smtp", slow.addr, "--"] + child("raise SystemExit(1)"),
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
    run_gpualert(tmp_path, base(tmp_path) + ["--smtp", "127.0.0.1:%d" % refusing_port, "--"] + child("raise SystemExit(1)"))
    [path] = spooled(tmp_path / "outbox")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert stat.S_IMODE(os.stat(str(tmp_path / "outbox")).st_mode) == 0o700
    assert parse(open(path, "rb").read())["Subject"].startswith("[gpualert] FAILED")


# ---- 3. private paths; resend looks everywhere ----

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


@pytest.fixture
def shared_tmp():
    """A world-writable sticky directory, like /tmp, that the test owns and removes."""
    path = tempfile.mkdtemp(prefix="gpualert-shared-tmp-")
    os.chmod(path, 0o1777)
    yield path
    subprocess.run(["rm", "-rf", path])


def test_a_planted_fallback_outbox_is_never_sent_from(tmp_path, other_user, shared_tmp, refusing_port, smtp_plain):
    uid = os.getuid()
    planted = ("From: mallory@evil.example\nTo: victim-of-spam@example.org\nSubject: planted\n\n"
               "sent with your relay\n")
    for name in ("gpualert-outbox-%d" % uid, "gpualert-%d" % uid):
        d = os.path.join(shared_tmp, name)
        made = other_user.run(["sh", "-c", "mkdir -m 777 '%s' && mkdir -m 777 '%s/outbox' && "
                               "printf '%%s' \"$0\" > '%s/x.eml' && printf '%%s' \"$0\" > '%s/outbox/x.eml'"
                               % (d, d, d, d), planted])
        assert made.returncode == 0, made.stderr
    env = broken_home_env(tmp_path, tmpdir=shared_tmp)
    run = run_gpualert(tmp_path, ["--to", "owner@example.org", "--smtp", "127.0.0.1:%d" % refusing_port, "--"]
                       + child("print('private log line'); raise SystemExit(1)"), env=env)
    assert run.returncode == 1
    for name in ("gpualert-outbox-%d" % uid, "gpualert-%d" % uid):  # nothing of ours went there
        owned = [p for p in glob.glob(os.path.join(shared_tmp, name, "**"), recursive=True)
                 if os.stat(p).st_uid == uid]
        assert owned == [], owned
    out = run_gpualert(tmp_path, ["resend", "--smtp", smtp_plain.addr], env=env)
    run_gpualert(tmp_path, ["--to", "owner@example.org", "--smtp", smtp_plain.addr, "--"] + child("pass"), env=env)
    got = smtp_plain.wait_for(2, timeout=5)
    assert all(b"mallory" not in m.data for m in got), [m.data[:200] for m in got]
    assert len(got) == 2, out.stderr  # the real failure message and the success message
    assert b"owned by" in out.stderr or b"refus" in out.stderr or b"writable" in out.stderr, out.stderr


# ---- 2. claims: exactly once ----

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
        run_gpualert(tmp_path, base(tmp_path) + ["--smtp", "127.0.0.1:%d" % refusing_port, "--max-per-hour", "6",
                                                 "--"] + child("raise SystemExit(%d)" % (i + 1)))
    assert len(spooled(tmp_path / "outbox")) == 4
    run = run_gpualert(tmp_path, base(tmp_path) + ["--smtp", smtp_plain.addr, "--max-per-hour", "6", "--"]
                       + child("pass"))
    assert run.returncode == 0
    smtp_plain.wait_for(2)
    assert len(smtp_plain.messages) == 2, run.stderr  # this run's own + one flushed: 6 this hour
    assert len(spooled(tmp_path / "outbox")) == 3


# ---- 4. dead letters ----

def test_a_permanent_refusal_becomes_a_dead_letter_and_is_told(tmp_path, rejecting_relay, smtp_plain):
    relay = rejecting_relay("RCPT", code=550, text="5.1.1 no such user")
    run = run_gpualert(tmp_path, base(tmp_path) + ["--smtp", relay.addr, "--"] + child("raise SystemExit(1)"))
    assert run.returncode == 1
    dead = glob.glob(str(tmp_path / "outbox" / "dead" / "*.eml"))
    assert len(dead) == 1, run.stderr
    assert b"X-Gpualert-Dead-Reason:" in open(dead[0], "rb").read()
    assert b"no such user" in run.stderr
    assert spooled(tmp_path / "outbox") == []
    out = run_gpualert(tmp_path, ["resend", "--outbox", str(tmp_path / "outbox"), "--smtp", relay.addr])
    assert out.returncode == 0, out.stderr
    run_gpualert(tmp_path, base(tmp_path) + ["--smtp", smtp_plain.addr, "--"] + child("pass"))
    body = parse(smtp_plain.wait_for(1)[0].data).get_body(("plain",)).get_content()
    assert "dead" in body and "no such user" in body


# ---- 5, 6. secrets ----

def test_the_job_never_sees_the_smtp_password(tmp_path):
    env = isolated_env(tmp_path, GPUALERT_SMTP_PASSWORD="s3cret-in-env")
    run = run_gpualert(tmp_path, base(tmp_path) + ["--dry-run", "--"] +
                       ["sh", "-c", "echo pw=${GPUALERT_SMTP_PASSWORD:-none}"], env=env)
    assert b"pw=none" in run.stdout and b"s3cret" not in run.stdout


def test_secrets_on_the_command_line_are_redacted_everywhere_but_the_output(tmp_path):
    argv = child("print('job ran')") + ["--hf-token", "hf_TOPSECRET1", "--password=TOPSECRET2",
                                        "--api-key", "TOPSECRET3", "WANDB_API_KEY=TOPSECRET4",
                                        "https://bob:TOPSECRET5@example.org/x", "--lr", "0.1"]
    run = run_gpualert(tmp_path, base(tmp_path) + ["--dry-run", "--"] + argv)
    assert run.returncode == 0, run.stderr
    written = b""
    for path in glob.glob(str(tmp_path / "**" / "*"), recursive=True):
        if os.path.isfile(path):
            written += open(path, "rb").read()
    assert b"job ran" in written and b"--lr 0.1" in written
    for secret in (b"TOPSECRET1", b"TOPSECRET2", b"TOPSECRET3", b"TOPSECRET4", b"TOPSECRET5"):
        assert secret not in written and secret not in run.stderr, secret
    assert b"***" in written
    plain = run_gpualert(tmp_path, ["--log-dir", str(tmp_path / "logs2"), "--dry-run", "--no-redact", "--"] + argv)
    assert plain.returncode == 0, plain.stderr
    assert b"TOPSECRET1" in open(glob.glob(str(tmp_path / "logs2" / "*" / "run.json"))[0], "rb").read()


def _written(tmp_path, skip=()):
    """Every file under tmp_path (but those named in skip), as one bytes string."""
    out = b""
    for path in glob.glob(str(tmp_path / "**" / "*"), recursive=True):
        if os.path.isfile(path) and os.path.basename(path) not in skip:
            out += open(path, "rb").read()
    return out


@pytest.mark.parametrize("argv,kept", [
    (["sh", "-c", "echo job ran; : --token TOPSECRET1 'https://x.example/a?access_token=TOPSECRET2"
                 "&sig=TOPSECRET3&page=2'; export HF_TOKEN=TOPSECRET4; :"], b"page=2"),
    ([sys.executable, "-c", "print('job ran')", "--pass", "TOPSECRET1", "-p", "TOPSECRET2",
     "--passphrase", "TOPSECRET3", "--wandb-key", "TOPSECRET4", "--key=TOPSECRET5",
     "--private-key", "TOPSECRET6", "--github-pat", "TOPSECRET7", "--bearer", "TOPSECRET8",
     "https://hooks.slack.com/services/T0/B0/TOPSECRET9", "--lr", "0.1"], b"--lr 0.1"),
], ids=["sh-c", "flags-and-webhook"])
def test_secret_forms_the_audit_found_are_redacted_everywhere_but_the_output(tmp_path, argv, kept):
    # All of these appeared in the log header, run.json and the message.
    run = run_gpualert(tmp_path, base(tmp_path) + ["--dry-run", "--"] + argv)
    assert run.returncode == 0, run.stderr
    written = _written(tmp_path)
    assert b"job ran" in written and b"***" in written
    for n in range(1, 10):
        secret = b"TOPSECRET%d" % n
        assert secret not in written and secret not in run.stderr, secret
    assert kept in written  # what is not secret stays


def test_token_shapes_in_the_job_s_output_are_masked_in_what_leaves_but_not_in_the_log(tmp_path):
    # The job's own lines we send (tail, decisive line, chat progress) were never scanned
    # for token shapes. The attached log is the log as it is (not masked).
    token = "hf_" + "Ab1" * 12
    code = "print('login with %s'); raise SystemExit('ERROR: bad token %s')" % (token, token)
    run = run_gpualert(tmp_path, base(tmp_path) + ["--dry-run", "--"] + child(code))
    assert run.returncode == 1, run.stderr
    run_dir = os.path.dirname(glob.glob(str(tmp_path / "logs" / "*" / "output.log"))[0])
    log = open(os.path.join(run_dir, "output.log"), "rb").read()
    assert b"login with " + token.encode() in log and b"bad token " + token.encode() in log
    msg = email.message_from_bytes(open(glob.glob(os.path.join(run_dir, "*.eml"))[0], "rb").read(),
                                   policy=email.policy.default)
    text = msg.get_body(("plain",)).get_content() + str(msg["Subject"])
    assert "login with hf_A***" in text and "bad token hf_A***" in text and token not in text
    assert token.encode() not in open(os.path.join(run_dir, "run.json"), "rb").read()
    ours = [line for line in run.stderr.splitlines() if line.startswith(b"gpualert:")]
    assert ours and not [line for line in ours if token.encode() in line]  # the job's own: as is


# ---- 7. what a message carries ----

def test_by_default_only_the_log_is_attached(tmp_path, smtp_plain):
    code = "open('metrics.jsonl', 'w').write('{}'); open('kernel-1.json', 'w').write('{\"key\": \"hmac\"}')"
    run_gpualert(tmp_path, base(tmp_path) + ["--smtp", smtp_plain.addr, "--"] + child(code))
    msg = parse(smtp_plain.wait_for(1)[0].data)
    assert [p.get_filename() for p in msg.iter_attachments()] == ["output.log"]


def test_artifacts_auto_skips_secret_like_files(tmp_path, smtp_plain):
    code = ("open('metrics.jsonl', 'w').write('{}'); open('kernel-1.json', 'w').write('{\"key\": \"h\"}'); "
            "open('credentials.json', 'w').write('{}'); open('.env', 'w').write('A=1')")
    env = isolated_env(tmp_path, HOME=str(tmp_path / "home"))  # the auto scan never looks at $HOME itself
    run_gpualert(tmp_path, base(tmp_path) + ["--smtp", smtp_plain.addr, "--artifacts", "auto", "--"] + child(code),
                 env=env)
    names = [p.get_filename() for p in parse(smtp_plain.wait_for(1)[0].data).iter_attachments()]
    assert "metrics.jsonl" in names
    assert not any(n in names for n in ("kernel-1.json", "credentials.json", ".env")), names


@pytest.mark.needs_root  # postconf -e message_size_limit
def test_a_message_too_big_for_postfix_is_delivered_slim(tmp_path, postfix):
    postfix.set_size_limit(300000)
    marker = "size-%d-%d" % (os.getpid(), time.time() * 1000)
    code = "import os; open('plot.png', 'wb').write(os.urandom(600000))"
    run = run_gpualert(tmp_path, ["--log-dir", str(tmp_path / "logs"), "--outbox", str(tmp_path / "outbox"),
                                  "--to", "root", "--name", marker, "--sendmail", postfix.sendmail,
                                  "--artifacts", "plot.png", "--"] + child(code))
    assert run.returncode == 0
    found = postfix.wait_for(marker)
    assert found, run.stderr
    msg = parse(found[0].split(b"\n", 1)[1])
    assert "plot.png" in msg.get_body(("plain",)).get_content()
    assert spooled(tmp_path / "outbox") == []


def test_the_zero_configuration_default_delivers_through_postfix(tmp_path, postfix):
    # whoever runs the suite (CI: an ordinary user) gets it in their own mailbox, and the
    # last line says so; nothing is left in the temp dir
    import pwd
    me = pwd.getpwuid(os.geteuid()).pw_name
    marker = "zeroconf-%d-%d" % (os.getpid(), time.time() * 1000)
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    env = isolated_env(tmp_path, PATH="/usr/sbin:/usr/bin:/bin", USER=me, LOGNAME=me, TMPDIR=str(tmp))
    del env["GPUALERT_SENDMAIL"]  # the default: the host's sendmail
    run = run_gpualert(tmp_path, ["--name", marker, "--"] + child("pass"), env=env)
    assert run.returncode == 0, run.stderr
    assert postfix.wait_for(marker), run.stderr
    last = run.stderr.decode().strip().splitlines()[-1]
    assert "for %s" % me in last and "/var/mail/%s" % me in last, last
    assert os.listdir(str(tmp)) == []


# ---- 8. checked at start ----

def test_bad_settings_are_warned_about_before_the_child_starts(tmp_path, smtp_plain):
    run = run_gpualert(tmp_path, base(tmp_path, to="me@@uni") + ["--smtp", "smtp.uni.edu:abc", "--dry-run", "--"]
                       + child("import sys; sys.stderr.write('CHILD-STARTED\\n')"))
    assert run.returncode == 0
    err = run.stderr.decode()
    assert "me@@uni" in err and "smtp.uni.edu:abc" in err, err
    assert err.index("me@@uni") < err.index("CHILD-STARTED") and err.index("smtp.uni.edu:abc") < err.index("CHILD-STARTED")


def test_an_unknown_config_key_never_holds_mail(tmp_path, smtp_plain):
    conf = tmp_path / "config.ini"
    conf.write_text("[gpualert]\nsmtp = %s\nsmpt_timeout = 5\n" % smtp_plain.addr)
    run = run_gpualert(tmp_path, base(tmp_path) + ["--config", str(conf), "--"] + child("pass"))
    assert run.returncode == 0
    assert len(smtp_plain.wait_for(1)) == 1, run.stderr
    assert b"smtp_timeout" in run.stderr  # the nearest known key
    assert spooled(tmp_path / "outbox") == []


def test_artifacts_auto_never_scans_home_itself(tmp_path, smtp_plain):
    code = "open('results.json', 'w').write('{}')"  # cwd is $HOME in isolated_env
    run_gpualert(tmp_path, base(tmp_path) + ["--smtp", smtp_plain.addr, "--artifacts", "auto", "--"] + child(code))
    names = [p.get_filename() for p in parse(smtp_plain.wait_for(1)[0].data).iter_attachments()]
    assert names == ["output.log"], names


def test_a_failed_test_email_is_never_queued(tmp_path, refusing_port):
    run = run_gpualert(tmp_path, ["test-email"] + base(tmp_path) + ["--smtp", "127.0.0.1:%d" % refusing_port])
    assert run.returncode == 1
    assert spooled(tmp_path) == []


# ---- 9. interruptible after exit ----

@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_during_delivery_stops_it_and_keeps_the_childs_status(tmp_path, silent_relay, sig):
    proc = subprocess.Popen([PY, SCRIPT] + base(tmp_path) + ["--smtp", silent_relay.addr, "--smtp-timeout", "30",
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


@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "directory"])
def test_a_config_that_is_no_file_is_named_once_and_ignored_and_the_command_starts(tmp_path, kind):
    # --config /dev/zero (or a FIFO, or GPUALERT_CONFIG naming one) hung before the command
    # started, growing to 3.5 GB in 6 s.
    env = isolated_env(tmp_path)
    if kind == "dev-zero":
        path = "/dev/zero"
    elif kind == "fifo":
        path = str(tmp_path / "config.fifo")
        os.mkfifo(path)
        env["GPUALERT_CONFIG"] = path
    else:
        path = str(tmp_path)
    flags = [] if kind == "fifo" else ["--config", path]
    run = run_gpualert(tmp_path, flags + base(tmp_path) + ["--dry-run", "--"] + child("print('started')"),
                       env=env, timeout=30)
    assert run.returncode == 0 and b"started" in run.stdout, run.stderr
    warnings = [line for line in run.stderr.splitlines() if path.encode() in line and b"ignored" in line]
    assert len(warnings) == 1, run.stderr
    assert b"not a file" in warnings[0]


def test_under_umask_000_nothing_gpualert_makes_is_open_to_others(tmp_path, smtp_plain):
    # umask 000 made ~/.local, ~/.local/state, the state dir's runs/ and run.json
    # world-writable. The job keeps its umask.
    env = isolated_env(tmp_path)
    del env["XDG_STATE_HOME"]  # the default, under HOME
    run = subprocess.run([PY, SCRIPT, "--to", "owner@example.org", "--smtp", "127.0.0.1:9",
                          "--smtp-tls", "none", "--"] +
                         child("import os; print('umask %o' % os.umask(0)); raise SystemExit(1)"),
                         env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         timeout=60, preexec_fn=lambda: os.umask(0))
    assert run.returncode == 1, run.stderr
    assert b"umask 0" in run.stdout  # the job's own umask, untouched
    made = [str(tmp_path / ".local")]
    for folder, dirs, files in os.walk(made[0]):
        made += [os.path.join(folder, n) for n in dirs + files]
    assert any(p.endswith("run.json") for p in made) and any(".eml" in p for p in made), made
    loose = [(p, oct(os.lstat(p).st_mode & 0o777)) for p in made if os.lstat(p).st_mode & 0o077]
    assert loose == []


def test_a_run_directory_swapped_for_a_link_gets_nothing_written_through_it(tmp_path, smtp_plain):
    # In a group-writable --log-dir without the sticky bit another member renamed the live
    # run directory and put a symlink in its place: run.json, with the job's last lines,
    # went through the link into their folder, and the message's Log: pointed there.
    # (The job plays that member here: same rename, same link.)
    logs, theirs = tmp_path / "logs", tmp_path / "theirs"
    code = ("import glob, os\n"
            "[d] = glob.glob(%r)\n"
            "os.rename(d, d + '.moved'); os.makedirs(%r); os.symlink(%r, d)\n"
            "print('swapped')\n" % (str(logs / "*"), str(theirs), str(theirs)))
    run = run_gpualert(tmp_path, ["--log-dir", str(logs), "--outbox", str(tmp_path / "outbox"),
                                  "--to", "owner@example.org", "--smtp", smtp_plain.addr, "--"] + child(code))
    assert run.returncode == 0, run.stderr
    assert os.listdir(str(theirs)) == []
    [moved] = glob.glob(str(logs / "*.moved"))
    assert sorted(set(os.listdir(moved)) - {".child-pid"}) == ["output.log", "run.json"]
    assert b"swapped" in open(os.path.join(moved, "output.log"), "rb").read()
    assert b"was replaced while the job ran" in run.stderr
    [got] = smtp_plain.wait_for(1)
    body = email.message_from_bytes(got.data, policy=email.policy.default).get_body(("plain",)).get_content()
    assert "was replaced while the job ran" in body and os.path.join(moved, "output.log") in body


def test_a_comma_inside_an_address_is_warned_about_not_sent_to_a_bare_name(tmp_path):
    # --to 'me@uni,edu' silently sent to a bare `edu` as well.
    run = run_gpualert(tmp_path, base(tmp_path, to="me@uni,edu") + ["--to", "root", "--dry-run", "--"] +
                       child("pass"))
    assert run.returncode == 0, run.stderr
    warned = [line for line in run.stderr.splitlines() if b"--to 'edu'" in line]
    assert len(warned) == 1 and b"nor a user on this host" in warned[0], run.stderr
    msg = email.message_from_bytes(open(glob.glob(str(tmp_path / "logs" / "*" / "*.eml"))[0], "rb").read(),
                                   policy=email.policy.default)
    assert str(msg["To"]) == "me@uni, root"


def test_p_is_a_password_but_not_after_mkdir_or_ssh():
    from _load import load_gpualert
    g = load_gpualert()
    assert g.redact_argv(["sh", "-c", "mkdir -p out && mysql -u me -p S3CRET db; ssh -p 22 host"]) == [
        "sh", "-c", "mkdir -p out && mysql -u me -p *** db; ssh -p 22 host"]
    assert g.redact_argv(["/bin/mkdir", "-p", "out"]) == ["/bin/mkdir", "-p", "out"]


JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJUT1BTRUNSRVQ3In0.c2lnbmF0dXJlVE9QU0VDUkVUOA"


def test_secret_forms_the_third_attack_found_are_redacted(tmp_path):
    # `-phunter`, header values, `curl -u admin:X`, a JSON password and a JWT went into the
    # body, run.json and the log header as given (the README said bearer was masked).
    argv = ["sh", "-c", "echo job ran; : curl -u admin:TOPSECRET8 x", "sh", "-pTOPSECRET1",
            "Authorization: Bearer TOPSECRET2", "Authorization: token TOPSECRET3",
            "X-Api-Key: TOPSECRET4", "-u", "admin:TOPSECRET5", '{"password": "TOPSECRET6"}', JWT]
    run = run_gpualert(tmp_path, base(tmp_path) + ["--dry-run", "--"] + argv)
    assert run.returncode == 0, run.stderr
    written = _written(tmp_path)
    assert b"job ran" in written and b"Authorization: Bearer ***" in written
    for n in range(1, 9):
        secret = b"TOPSECRET%d" % n
        assert secret not in written and secret not in run.stderr, secret
    assert JWT.encode() not in written and b"admin:***" in written


def test_secrets_in_the_job_s_env_dump_are_masked_in_what_leaves(tmp_path):
    # `env | grep TOKEN`, `echo password=S`: the mail body and run.json carried them.
    code = ("import os; os.system('env | grep TOKEN; echo AWS_SECRET_ACCESS_KEY=TOPSECRET2; "
            "echo password=TOPSECRET3; echo key is %s; echo num_tokens=1234 MAX_TOKENS=5'); "
            "raise SystemExit(9)" % JWT)
    env = isolated_env(tmp_path, MYTOKEN="TOPSECRET1")
    run = run_gpualert(tmp_path, base(tmp_path) + ["--dry-run", "--"] + child(code), env=env)
    assert run.returncode == 9, run.stderr
    run_dir = os.path.dirname(glob.glob(str(tmp_path / "logs" / "*" / "output.log"))[0])
    log = open(os.path.join(run_dir, "output.log"), "rb").read()
    assert b"MYTOKEN=TOPSECRET1" in log and b"password=TOPSECRET3" in log  # the log stays as written
    sent = _written(tmp_path, skip=("output.log",))
    for secret in (b"TOPSECRET1", b"TOPSECRET2", b"TOPSECRET3", JWT.encode()):
        assert secret not in sent, secret
    assert b"MYTOKEN=***" in sent and b"num_tokens=1234 MAX_TOKENS=5" in sent


def test_a_masked_value_in_a_shell_command_keeps_what_follows():
    from _load import load_gpualert
    g = load_gpualert()
    assert g.redact_argv(["sh", "-c", "echo password=S; exit 9"]) == ["sh", "-c", "echo password=***; exit 9"]

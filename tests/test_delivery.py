"""Delivery of one message: SMTP (STARTTLS, implicit TLS, plain) against real servers and
misbehaving relays, size rejections answered with a slim copy, sendmail and a real Postfix,
`test-email`, dry runs, the hourly cap, and an explicit deadline. What cannot be delivered goes
to the outbox (tests/test_outbox.py)."""
import os
import signal
import socket
import subprocess
import sys
import time

import pytest

from _load import load_gpualert
from conftest import SMTP_PASSWORD, SMTP_USER
from messages import _deliver, _touch, outbox_files
from wrapper_helpers import (_spawn_all, addressed, child, isolated_env, outbox_messages, parse,
                             run_gpualert, run_json, spooled)


G = load_gpualert()


def test_delivery_stops_at_the_callers_deadline_and_leaves_cfg_alone(tmp_path, silent_relay):
    cfg = G.load_config({"smtp": silent_relay.addr, "smtp_timeout": 30.0, "to": ["a@b.c"],
                         "outbox": str(tmp_path / "outbox"), "quiet": True},
                        {"XDG_CONFIG_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)})[0]
    msg, _ = G.build_message(G.make_result("FAILED", "job", exit_code=1), cfg)
    began = time.monotonic()
    out = G.deliver(msg, cfg, began + 1.0)
    assert time.monotonic() - began < 1.0 + 1.5  # thread join and teardown slack
    assert out["outcome"] == "outbox" and "timed out" in out["detail"], out
    assert cfg["smtp_timeout"] == 30.0
    assert os.listdir(str(tmp_path / "outbox"))


SLACK_S = 1.5  # allowed overshoot of smtp_timeout (thread join + teardown)


N = load_gpualert()


def test_starttls_auth_delivers(tmp_path, cfg, smtp_server, trust_test_ca):
    cfg.update(smtp=smtp_server.addr, smtp_user=SMTP_USER, smtp_password=SMTP_PASSWORD)
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "sent" and out["transport"] == "smtp", out
    got = smtp_server.wait_for(1)
    assert got[0].tls and got[0].authenticated and got[0].rcpt_tos == ["bob@example.org"]
    m = parse(got[0].data)
    assert m["X-Gpualert-Class"] == "cuda_oom" and outbox_files(cfg) == []


def test_implicit_tls_delivers(tmp_path, cfg, smtp_ssl, trust_test_ca):
    cfg.update(smtp=smtp_ssl.addr, smtp_tls="ssl", smtp_user=SMTP_USER,
               smtp_password=SMTP_PASSWORD)
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "sent", out
    assert smtp_ssl.wait_for(1)[0].tls


def test_plain_delivers_crlf(tmp_path, cfg, smtp_plain):
    cfg["smtp"] = smtp_plain.addr
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "sent", out
    got = smtp_plain.wait_for(1)[0]
    assert not got.tls and b"\r\n" in got.data and b"\n" not in got.data.replace(b"\r\n", b"")


def test_wrong_password_goes_to_outbox(tmp_path, cfg, smtp_server, trust_test_ca):
    cfg.update(smtp=smtp_server.addr, smtp_user=SMTP_USER, smtp_password="wrong")
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "outbox" and "535" in out["detail"], out
    assert smtp_server.messages == [] and os.path.exists(out["outbox_path"])


def test_untrusted_certificate_goes_to_outbox(tmp_path, cfg, smtp_server, pki, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", pki.other_ca)
    cfg.update(smtp=smtp_server.addr, smtp_user=SMTP_USER, smtp_password=SMTP_PASSWORD)
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "outbox" and "TLS failed" in out["detail"], out
    assert "certificate" in out["detail"].lower() and smtp_server.messages == []


def test_no_password_in_clear(tmp_path, cfg, smtp_auth_plaintext):
    cfg.update(smtp=smtp_auth_plaintext.addr, smtp_user=SMTP_USER, smtp_password=SMTP_PASSWORD)
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "outbox" and "unencrypted" in out["detail"], out
    cfg["smtp_tls"] = "none"
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "sent", out
    assert smtp_auth_plaintext.wait_for(1)[0].authenticated


@pytest.mark.parametrize("kind", ["refusing", "silent", "slow", "auth_fail", "tls_garbage",
                                  "reject_MAIL", "reject_RCPT", "reject_DATA"])
def test_misbehaving_relay_goes_to_outbox_within_bound(tmp_path, cfg, kind, request,
                                                       trust_test_ca):
    if kind == "refusing":
        cfg["smtp"] = "127.0.0.1:%d" % request.getfixturevalue("refusing_port")
    elif kind.startswith("reject_"):
        make = request.getfixturevalue("rejecting_relay")
        cfg["smtp"] = make(kind[7:], 554, "5.7.1 policy says no").addr
    else:
        cfg["smtp"] = request.getfixturevalue(kind.replace("fail", "failing") + "_relay").addr
    if kind == "auth_fail":
        cfg.update(smtp_user="u", smtp_password="p", smtp_tls="none")
    out, elapsed = _deliver(tmp_path, cfg)
    assert out["outcome"] == ("dead" if kind.startswith("reject_") else "outbox"), out
    assert elapsed < cfg["smtp_timeout"] + SLACK_S, elapsed
    expect = {"refusing": "refused", "silent": "timed out", "slow": "timed out",
              "auth_fail": "535", "tls_garbage": "TLS failed", "reject_MAIL": "554",
              "reject_RCPT": "554", "reject_DATA": "554"}[kind]
    assert expect in out["detail"], out["detail"]
    saved = open(out["outbox_path"], "rb").read()
    assert parse(saved)["Subject"].startswith("[gpualert] FAILED train.py: cuda_oom")
    assert b"X-Gpualert-Outbox-Reason:" in saved


def test_slow_but_timely_relay_delivers(tmp_path, cfg, relay_factory):
    relay = relay_factory("slow", delay=0.1)
    cfg["smtp"] = relay.addr
    out, elapsed = _deliver(tmp_path, cfg)
    assert out["outcome"] == "sent", out
    assert len(relay.wait_for(1)) == 1 and elapsed >= 0.5


def test_dns_that_never_answers_is_bounded(tmp_path, cfg, monkeypatch):
    def hang(*a, **kw):
        time.sleep(30)
    monkeypatch.setattr(socket, "getaddrinfo", hang)
    cfg["smtp"] = "relay.invalid:25"
    out, elapsed = _deliver(tmp_path, cfg)
    assert out["outcome"] == "outbox" and "timed out during connect (DNS/TCP/greeting)" in out["detail"]
    assert elapsed < cfg["smtp_timeout"] + SLACK_S


def _with_attachment(tmp_path, cfg, size=120000):
    _touch(tmp_path / "res" / "big.csv", size=size)
    cfg["artifacts"] = ["res/*.csv"]


def test_size_rejection_at_mail_from_resends_slim(tmp_path, cfg, smtp_size_limited):
    _with_attachment(tmp_path, cfg)
    cfg["smtp"] = smtp_size_limited.addr
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "sent" and "WITHOUT attachments" in out["detail"], out
    m = parse(smtp_size_limited.wait_for(1)[0].data)
    assert list(m.iter_attachments()) == []
    text = m.get_body(("plain",)).get_content()
    assert "Attachments removed" in text and "not attached (the relay rejected" in text
    assert "RuntimeError: CUDA out of memory." in text and str(tmp_path / "run") in text


def test_size_rejection_at_end_of_data_resends_slim(tmp_path, cfg, rejecting_relay):
    _with_attachment(tmp_path, cfg)
    relay = rejecting_relay("EOM", 552, "5.3.4 Message too big for system", over=60000)
    cfg["smtp"] = relay.addr
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "sent" and "552" in out["detail"], out
    assert len(relay.wait_for(1)) == 1


def test_size_rejection_twice_outboxes_full_message(tmp_path, cfg, rejecting_relay):
    _with_attachment(tmp_path, cfg)
    cfg["smtp"] = rejecting_relay("EOM", 552, "message size exceeds limit").addr
    out, _ = _deliver(tmp_path, cfg)  # even without attachments too big: refused for good
    assert out["outcome"] == "dead" and "retry without attachments" in out["detail"]
    assert "/dead/" in out["outbox_path"]
    saved = parse(open(out["outbox_path"], "rb").read())
    assert "big.csv" in [a.get_filename() for a in saved.iter_attachments()]


def test_deliver_never_raises_on_garbage(cfg):
    out = N.deliver(object(), cfg)
    assert out["outcome"] == "outbox" and "internal error" in out["detail"]


def test_dry_run_writes_to_run_dir_and_sends_nothing(tmp_path, cfg, smtp_plain):
    cfg.update(smtp=smtp_plain.addr, dry_run=True)
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "dry-run" and out["outbox_path"].startswith(str(tmp_path / "run"))
    assert smtp_plain.messages == [] and outbox_files(cfg) == []


def test_test_email_command(tmp_path, cfg, smtp_plain, refusing_port, capsys):
    cfg["smtp"] = smtp_plain.addr
    assert N.cmd_test_email(None, cfg) == 0
    assert "test email sent" in capsys.readouterr().out
    assert parse(smtp_plain.wait_for(1)[0].data)["X-Gpualert-Status"] == "TEST"
    cfg["smtp"] = "127.0.0.1:%d" % refusing_port
    assert N.cmd_test_email(None, cfg) == 1
    assert outbox_files(cfg) == []  # a stale TEST mail sent later helps nobody


# ---------------------------------------------------------------- sendmail

def test_sendmail_transport(tmp_path, cfg, fake_sendmail):
    fake = fake_sendmail("ok")
    cfg["sendmail"] = fake.path
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "sent" and out["transport"] == "sendmail", out
    assert open(fake.args_file).read().strip() == "-t -oi"
    m = parse(open(fake.stdin_file, "rb").read())
    assert m["To"] == "bob@example.org" and m["X-Gpualert-Status"] == "FAILED"


def test_sendmail_found_on_path_by_default(tmp_path, cfg, fake_sendmail, monkeypatch):
    fake = fake_sendmail("ok")
    cfg["sendmail"] = None  # the default: look for one
    monkeypatch.setenv("PATH", os.path.dirname(fake.path) + os.pathsep + os.environ["PATH"])
    out, _ = _deliver(tmp_path, cfg)
    assert out["transport"] == "sendmail" and out["outcome"] == "sent", out


def test_no_transport_at_all_goes_to_outbox(tmp_path, cfg, monkeypatch):
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "outbox" and out["transport"] == "outbox"
    assert "no mail transport configured" in out["detail"]
    # a host with no sendmail anywhere (this one may have one)
    monkeypatch.setattr(N, "SENDMAIL_CANDIDATES", ())
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    cfg["sendmail"] = ""
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "outbox" and "sendmail requested but not found" in out["detail"]


def test_sendmail_failure_goes_to_outbox(tmp_path, cfg, fake_sendmail):
    cfg["sendmail"] = fake_sendmail("fail").path
    out, _ = _deliver(tmp_path, cfg)
    assert out["outcome"] == "outbox" and "status 75" in out["detail"]
    assert "no route to mail hub" in out["detail"]


def test_hanging_sendmail_is_killed_at_deadline(tmp_path, cfg, fake_sendmail):
    fake = fake_sendmail("hang")
    cfg.update(sendmail=fake.path, smtp_timeout=1.5)
    out, elapsed = _deliver(tmp_path, cfg)
    assert out["outcome"] == "outbox" and "timed out" in out["detail"], out
    assert elapsed < cfg["smtp_timeout"] + SLACK_S
    pid = int(open(fake.pid_file).read())
    deadline, state = time.monotonic() + 10, None
    while time.monotonic() < deadline and state not in ("gone", "Z", "X"):
        try:  # the helper's own child was killed with its process group (gone, or a zombie
            state = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()[0]
        except OSError:  # when the container's init does not reap orphans)
            state = "gone"
        time.sleep(0.02)
    assert state in ("gone", "Z", "X"), state


def test_a_sendmail_whose_child_keeps_its_output_counts_by_its_exit_status(tmp_path, cfg, fake_sendmail):
    # Reported "timed out" (its output never reached EOF) and resent later: a duplicate.
    fake = fake_sendmail("forks")
    cfg.update(sendmail=fake.path, smtp_timeout=5)
    try:
        out, elapsed = _deliver(tmp_path, cfg)
        assert out["outcome"] == "sent" and out["transport"] == "sendmail", out
        assert elapsed < 5
    finally:
        os.kill(int(open(fake.pid_file).read()), signal.SIGKILL)


def test_failure_is_delivered_over_starttls_with_auth(tmp_path, smtp_server, pki):
    env = isolated_env(tmp_path, SSL_CERT_FILE=pki.ca, GPUALERT_SMTP_PASSWORD=SMTP_PASSWORD)
    code = ("import json; open('metrics.json', 'w').write(json.dumps({'acc': 0.9})); "
            "print('epoch 3 loss=0.2'); raise KeyError('optimizer_state')")
    proc = run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_server.addr, "--smtp-user", SMTP_USER,
                                                    "--name", "resnet50", "--artifacts", "auto", "--"]
                       + child(code), env=dict(env, HOME=str(tmp_path / "home")))
    assert proc.returncode == 1, proc.stderr
    received = smtp_server.wait_for(1)[0]
    assert received.tls and received.authenticated
    msg = parse(received.data)
    assert msg["Subject"].startswith("[gpualert] FAILED ")
    assert "resnet50" in msg["Subject"] and "(exit 1," in msg["Subject"]
    assert msg["X-Gpualert-Status"] == "FAILED"
    names = [part.get_filename() for part in msg.iter_attachments()]
    assert "output.log" in names and "metrics.json" in names
    body = msg.get_body(("plain",)).get_content()
    assert "KeyError: 'optimizer_state'" in body
    assert run_json(tmp_path)["delivery"]["outcome"] == "sent"
    assert outbox_messages(tmp_path) == []


def test_size_rejection_gets_the_message_again_without_attachments(tmp_path, smtp_size_limited):
    code = "import os\nfor i in range(4000): print('step %d ' % i + os.urandom(40).hex())\nraise SystemExit(2)"
    proc = run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_size_limited.addr, "--"] + child(code))
    assert proc.returncode == 2
    msg = parse(smtp_size_limited.wait_for(1)[0].data)
    assert list(msg.iter_attachments()) == []
    assert str(tmp_path / "logs") in msg.get_body(("plain",)).get_content()


def test_test_email_reports_success_and_failure(tmp_path, smtp_plain, refusing_port):
    proc = run_gpualert(tmp_path, ["test-email", "--to", "a@example.org", "--smtp", smtp_plain.addr])
    assert proc.returncode == 0, proc.stderr
    assert len(smtp_plain.wait_for(1)) == 1
    proc = run_gpualert(tmp_path, ["test-email", "--to", "a@example.org", "--outbox", str(tmp_path / "outbox"),
                                   "--smtp", "127.0.0.1:%d" % refusing_port])
    assert proc.returncode == 1
    assert outbox_messages(tmp_path) == []  # never queued: a stale TEST mail helps nobody


def test_hourly_cap_holds_extra_messages_in_the_outbox(tmp_path, smtp_plain):
    for _ in range(2):
        run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--max-per-hour", "1", "--"]
                     + child("raise SystemExit(1)"))
    assert len(smtp_plain.wait_for(1)) == 1
    held = outbox_messages(tmp_path)
    assert len(held) == 1
    assert b"max-per-hour" in open(held[0], "rb").read()


@pytest.mark.needs_root  # postconf -e message_size_limit
def test_a_message_too_big_for_postfix_is_delivered_slim(tmp_path, postfix):
    postfix.set_size_limit(300000)
    marker = "size-%d-%d" % (os.getpid(), time.time() * 1000)
    code = "import os; open('plot.png', 'wb').write(os.urandom(600000))"
    run = run_gpualert(tmp_path, ["--log-dir", str(tmp_path / "logs"), "--outbox", str(tmp_path / "outbox"),
                                  "--to", postfix.user, "--name", marker, "--sendmail", postfix.sendmail,
                                  "--artifacts", "plot.png", "--"] + child(code))
    assert run.returncode == 0
    found = postfix.wait_for(marker)
    assert found, run.stderr
    msg = parse(found[0].split(b"\n", 1)[1])
    assert "plot.png" in msg.get_body(("plain",)).get_content()
    assert spooled(tmp_path / "outbox") == []


def test_the_zero_configuration_default_delivers_through_postfix(postfix, other_user, shared_tmp):
    # whoever runs gpualert gets it in their own mailbox, and the last line says so; nothing
    # is left in the temp dir. Run as the second user: the suite never mails whoever runs it.
    me = other_user.name
    marker = "zeroconf-%d-%d" % (os.getpid(), time.time() * 1000)
    home = os.path.join(shared_tmp, "home")
    tmp = os.path.join(shared_tmp, "tmp")
    made = other_user.run(["mkdir", "-m", "700", home, tmp])
    assert made.returncode == 0, made.stderr
    env = isolated_env(home, PATH="/usr/sbin:/usr/bin:/bin", USER=me, LOGNAME=me, TMPDIR=tmp)
    del env["GPUALERT_SENDMAIL"]  # the default: the host's sendmail
    run = other_user.run(["/usr/bin/python3", other_user.script, "--name", marker, "--"] +
                         ["/usr/bin/python3", "-c", "pass"], env=env, cwd=home)
    assert run.returncode == 0, run.stderr
    assert postfix.wait_for(marker), run.stderr
    last = run.stderr.decode().strip().splitlines()[-1]
    assert "for %s" % me in last and "/var/mail/%s" % me in last, last
    assert os.listdir(tmp) == []


def test_a_failed_test_email_is_never_queued(tmp_path, refusing_port):
    run = run_gpualert(tmp_path, ["test-email"] + addressed(tmp_path) + ["--smtp", "127.0.0.1:%d" % refusing_port])
    assert run.returncode == 1
    assert spooled(tmp_path) == []


cluster = load_gpualert()


def test_rate_limiter_rolling_hour(tmp_path):
    clock = [1000.0]
    limiter = cluster.RateLimiter(str(tmp_path), 3, clock=lambda: clock[0])
    assert [limiter.allow() for _ in range(4)] == [True, True, True, False]
    clock[0] += 3599
    assert limiter.allow() is False
    clock[0] += 2
    assert limiter.allow() is True
    assert cluster.RateLimiter(str(tmp_path), 0).allow() is True


def test_a_clock_set_back_does_not_hold_every_message_for_ever(tmp_path):
    """Stamps written while the clock was days ahead (a node with a skewed clock sharing
    $HOME, an NTP step back) counted as "this hour" until that future came: no mail."""
    clock = [1000.0 + 10 * 86400]
    limiter = cluster.RateLimiter(str(tmp_path), 2, clock=lambda: clock[0])
    assert [limiter.allow() for _ in range(3)] == [True, True, False]
    clock[0] = 1000.0
    assert [limiter.allow() for _ in range(3)] == [True, True, False]


def test_two_clocks_hours_apart_sharing_a_rate_file_each_keep_their_cap(tmp_path):
    """A host with its clock two hours off, sharing $HOME: each side dropped the other's
    stamps as "hours away" when it wrote the file back, so neither side was ever capped."""
    right = cluster.RateLimiter(str(tmp_path), 2, clock=lambda: 2000000000.0)
    skewed = cluster.RateLimiter(str(tmp_path), 2, clock=lambda: 2000000000.0 - 7200)
    got = [limiter.allow() for _ in range(3) for limiter in (right, skewed)]
    assert got == [True, True, True, True, False, False]


def test_a_damaged_rate_file_still_caps_and_is_written_anew(tmp_path):
    """A word like 1.2.3 in the rate file raised ValueError at every message: the cap was
    off for good, and nothing said so."""
    (tmp_path / "rate-messages.txt").write_text("1.2.3\nnan\n")
    limiter = cluster.RateLimiter(str(tmp_path), 1, clock=lambda: 2000000000.0)
    assert [limiter.allow(), limiter.allow()] == [True, False] and limiter.notes == []
    assert (tmp_path / "rate-messages.txt").read_text() == "2000000000.000\n"


def test_a_cap_that_cannot_be_applied_is_said(tmp_path):
    (tmp_path / "rate-messages.txt.lock").mkdir()  # a lock that cannot be taken
    code = ("import sys; sys.path.insert(0, %r); import _load; g = _load.load_gpualert(); "
            "r = g.RateLimiter(%r, 1); print(r.allow(), r.allow())"
            % (os.path.dirname(os.path.abspath(__file__)), str(tmp_path)))
    proc = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=60)
    assert proc.stdout.strip() == "True True"
    assert proc.stderr.count("--max-per-hour not applied") == 1, proc.stderr


def test_a_rate_file_that_cannot_be_written_leaves_no_litter(tmp_path):
    """A full disk (here: a file size limit) left one rate-*.txt.PID.tmp per process."""
    (tmp_path / "rate-messages.txt").write_text("".join("%d.000\n" % (2000000000 + i) for i in range(50)))
    code = ("import resource, signal, sys, time; sys.path.insert(0, %r); import _load; "
            "g = _load.load_gpualert(); signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
            "resource.setrlimit(resource.RLIMIT_FSIZE, (64, 64)); "
            "r = g.RateLimiter(%r, 1000, clock=lambda: 2000000100.0); "
            "print(r.allow(), r.notes)" % (os.path.dirname(os.path.abspath(__file__)), str(tmp_path)))
    out = subprocess.run([sys.executable, "-c", code], stdout=subprocess.PIPE, universal_newlines=True,
                         timeout=60).stdout
    assert out.startswith("True ['rate limit not applied"), out
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


def test_rate_limiter_across_processes(tmp_path):
    results = _spawn_all(tmp_path, "rate", 10, 4)
    assert results.count(True) == 4 and results.count(False) == 6


def test_rate_limiter_unusable_dir_allows(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    limiter = cluster.RateLimiter(str(blocker / "sub"), 1)
    assert limiter.allow() is True and limiter.notes

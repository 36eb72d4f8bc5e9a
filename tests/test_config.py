"""Settings from flags, the environment and the config file: usage errors exit 2 before anything
runs, a bad value is named and its default used, a broken or odd config never holds the job or
its message, `config` and `help` say what would really be used."""
import email
import email.policy
import glob
import os
import pathlib
import shutil
import subprocess
import tempfile
import time
import unittest

os.environ["TZ"] = "UTC"
time.tzset()

import pytest

from _load import load_gpualert
from messages import N
from wrapper_helpers import (PY, SCRIPT, addressed, base, child, isolated_env, outbox_messages,
                             run_gpualert, spooled)


# ---- bad input ----

@pytest.mark.parametrize("args,needle", [
    (["--budget", "10Q", "--"], b"size"),
    # a float step-down loop ran ~1e16 times: the message was never built
    (["--budget", "99999999999999999999T", "--"], b"over the largest size gpualert takes (1T)"),
    (["--timeout", "soon", "--"], b"duration"),
    (["--notify", "sometimes", "--"], b"always"),
    (["--frobnicate", "--"], b"unknown option --frobnicate"),
    (["--smtp"], b"needs a value"),
    (["--"], b"no command"),
    ([], b"no command"),
    (["python3", "x.py"], b"unknown subcommand"),
    # a typo gets the near name; a command without -- gets the line with it; a value that is
    # no URL at all is shown (there is no secret in it to hide); the duration hint names d
    (["--tiemout", "1h", "--"], b"unknown option --tiemout (did you mean --timeout?)"),
    (["clasify", "x.log"], b"unknown subcommand 'clasify' (did you mean classify?)"),
    (["runs", "--sinse", "1h"], b"unknown option --sinse (did you mean --since?)"),
    (["--to", "me@example.org", "python3", "-c", "pass"],
     b"unknown option -c (to run a command, put it after --: gpualert.py --to me@example.org -- python3 -c pass)"),
    (["--to", "me@example.org", "python3", "x.py"],
     b"unexpected argument 'python3' (to run a command, put it after --: gpualert.py --to me@example.org -- python3 x.py)"),
    (["--notify-url", "foo", "--"], b"notify URL 'foo': not a URL"),
    (["--timeout", "1w", "--"], b"(try 90s, 30m, 12h, 1h30m, 7d)"),
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


# ---- one bad value never holds the message ----

@pytest.mark.parametrize("name,value", [("GPUALERT_SMTP_TIMEOUT", "-1"),
                                        ("GPUALERT_BUDGET", "abc"),
                                        ("GPUALERT_SMTP_TLS", "maybe")])
def test_a_bad_value_in_the_environment_is_named_and_the_message_still_goes(
        tmp_path, smtp_plain, name, value):
    """A typo in one setting held every message in the outbox ("held: configuration
    problem"): the default is used instead, one warning says so, the relay gets the message."""
    env = isolated_env(tmp_path, **{name: value})
    proc = subprocess.run([PY, SCRIPT] + base(tmp_path) + [
        "--smtp", smtp_plain.addr, "--to", "me@example.org", "--"] + child("raise SystemExit(3)"),
        env=env, cwd=str(tmp_path), timeout=60, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.returncode == 3
    warnings = [l for l in proc.stderr.decode().splitlines() if name in l]
    assert len(warnings) == 1 and "using" in warnings[0], proc.stderr
    assert len(smtp_plain.wait_for(1, timeout=20)) == 1, proc.stderr
    assert outbox_messages(tmp_path) == []


# ---- values no setting can mean ----

@pytest.mark.parametrize("args", [["--max-per-hour", "-1"], ["--smtp-timeout", "nan"],
                                  ["--smtp-timeout", "inf"], ["--gpu-interval", "nan"]])
def test_a_value_no_setting_can_mean_is_a_usage_error(tmp_path, args):
    proc = subprocess.run([PY, SCRIPT] + base(tmp_path) + args + ["--"] + child("pass"),
                          env=isolated_env(tmp_path), cwd=str(tmp_path), timeout=60,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.returncode == 2 and args[0].encode() in proc.stderr, proc.stderr
    assert not (tmp_path / "logs").exists()  # nothing ran


G = load_gpualert()


def test_configuration_is_read_only_once_parsed(tmp_path):
    cfg, _, _ = G.load_config({"smtp_timeout": 5.0}, {"XDG_CONFIG_HOME": str(tmp_path)})
    assert cfg["smtp_timeout"] == 5.0
    with pytest.raises(TypeError):
        cfg["smtp_timeout"] = 1.0


def test_an_empty_environment_variable_is_unset_not_a_malformed_value(tmp_path):
    """GPUALERT_TIMEOUT= (set but empty) warned "malformed duration" instead of meaning unset."""
    env = {"XDG_CONFIG_HOME": str(tmp_path), "GPUALERT_TIMEOUT": "", "GPUALERT_TO": " "}
    cfg, sources, problems = G.load_config({}, env)
    assert problems == [] and cfg["timeout"] is None and cfg["to"] == []
    assert "timeout" not in sources or not sources["timeout"].startswith("env")


class TestOptions(unittest.TestCase):
    def test_array_summary_values(self):
        cli = N.parse_command_line(["--array-summary=each", "--", "true"])
        self.assertEqual(cli.flags["array_summary"], "each")
        cli = N.parse_command_line(["--array-summary", "--", "true"])
        self.assertIs(cli.flags["array_summary"], True)
        with self.assertRaises(N.UsageError):
            N.parse_command_line(["--array-summary=sometimes", "--", "true"])

    def test_durations_have_a_sane_maximum(self):
        # --smtp-timeout 1e12 was accepted, then delivery failed with an OverflowError.
        for flag, value in (("--smtp-timeout", "1e12"), ("--timeout", "400d"),
                            ("--stall", "9000:00:00"), ("--gpu-interval", "1e300")):
            with self.assertRaises(N.UsageError):
                N.parse_command_line([flag, value, "--", "true"])
        cli = N.parse_command_line(["--smtp-timeout", "600", "--timeout", "366d", "--", "true"])
        self.assertEqual(cli.flags["timeout"], 366 * 86400.0)


class TestCli(unittest.TestCase):
    def run_cli(self, *args, **env):
        from wrapper_helpers import PY, SCRIPT, isolated_env
        tmp = tempfile.mkdtemp(prefix="gpualert-cli-")
        self.addCleanup(shutil.rmtree, tmp, True)
        e = isolated_env(pathlib.Path(tmp), **env)
        return subprocess.run([PY, SCRIPT] + list(args), env=e, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=60)

    def test_help_subcommand(self):
        proc = self.run_cli("help")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("Synopsis", proc.stdout)

    def test_config_says_what_would_really_be_used(self):
        proc = self.run_cli("config", "--smtp", "relay.example.org:587", USER="carol", LOGNAME="carol")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("would deliver: smtp relay.example.org:587", proc.stdout)
        self.assertIn("would send to: carol", proc.stdout)
        self.assertRegex(proc.stdout, r"budget\s+= \d+\.\d MiB \(\d+ bytes\)")
        proc = self.run_cli("config")  # the test environment says --sendmail none
        self.assertIn("would deliver: outbox", proc.stdout)


def test_config_shows_sources_and_masks_the_password(tmp_path):
    config = tmp_path / "config.ini"
    config.write_text("[gpualert]\nsmtp = relay.example.org:587\nsmtp_password = hunter2\nbudget = 5M\n")
    config.chmod(0o644)
    env = isolated_env(tmp_path, GPUALERT_CONFIG=str(config), GPUALERT_TO="env@example.org")
    proc = run_gpualert(tmp_path, ["config", "--budget", "2M"], env=env)
    out = proc.stdout.decode()
    assert proc.returncode == 0
    assert "hunter2" not in out and "********" in out
    assert "relay.example.org:587" in out and "file %s" % config in out
    assert "env@example.org" in out and "env GPUALERT_TO" in out
    assert "2097152" in out and "(flag)" in out
    assert b"readable by others" in proc.stderr


def test_password_is_refused_on_the_command_line(tmp_path):
    proc = run_gpualert(tmp_path, ["--smtp-password", "x", "--", "true"])
    assert proc.returncode == 2 and b"unknown option --smtp-password" in proc.stderr


# ---- checked at start ----

def test_bad_settings_are_warned_about_before_the_child_starts(tmp_path, smtp_plain):
    run = run_gpualert(tmp_path, addressed(tmp_path, to="me@@uni") + ["--smtp", "smtp.uni.edu:abc", "--dry-run", "--"]
                       + child("import sys; sys.stderr.write('CHILD-STARTED\\n')"))
    assert run.returncode == 0
    err = run.stderr.decode()
    assert "me@@uni" in err and "smtp.uni.edu:abc" in err, err
    assert err.index("me@@uni") < err.index("CHILD-STARTED") and err.index("smtp.uni.edu:abc") < err.index("CHILD-STARTED")


def test_an_unknown_config_key_never_holds_mail(tmp_path, smtp_plain):
    conf = tmp_path / "config.ini"
    conf.write_text("[gpualert]\nsmtp = %s\nsmpt_timeout = 5\n" % smtp_plain.addr)
    run = run_gpualert(tmp_path, addressed(tmp_path) + ["--config", str(conf), "--"] + child("pass"))
    assert run.returncode == 0
    assert len(smtp_plain.wait_for(1)) == 1, run.stderr
    assert b"smtp_timeout" in run.stderr  # the nearest known key
    assert spooled(tmp_path / "outbox") == []


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
    run = run_gpualert(tmp_path, flags + addressed(tmp_path) + ["--dry-run", "--"] + child("print('started')"),
                       env=env, timeout=30)
    assert run.returncode == 0 and b"started" in run.stdout, run.stderr
    warnings = [line for line in run.stderr.splitlines() if path.encode() in line and b"ignored" in line]
    assert len(warnings) == 1, run.stderr
    assert b"not a file" in warnings[0]


def test_a_comma_inside_an_address_is_warned_about_not_sent_to_a_bare_name(tmp_path):
    # --to 'me@uni,edu' silently sent to a bare `edu` as well.
    run = run_gpualert(tmp_path, addressed(tmp_path, to="me@uni,edu") + ["--to", "root", "--dry-run", "--"] +
                       child("pass"))
    assert run.returncode == 0, run.stderr
    warned = [line for line in run.stderr.splitlines() if b"--to 'edu'" in line]
    assert len(warned) == 1 and b"nor a user on this host" in warned[0], run.stderr
    msg = email.message_from_bytes(open(glob.glob(str(tmp_path / "logs" / "*" / "*.eml"))[0], "rb").read(),
                                   policy=email.policy.default)
    assert str(msg["To"]) == "me@uni, root"


# ---- a config file someone else could have written is never obeyed ----

PLANTED = "[gpualert]\nto = attacker@evil.example\nnotify_url = jsons://attacker.invalid/steal\n"


def _run_with_config(tmp_path, path, relay):
    """The victim's run: the config named by GPUALERT_CONFIG, the rest from flags and the
    environment (GPUALERT_NAME). -> (CompletedProcess, [Received])."""
    env = isolated_env(tmp_path, GPUALERT_CONFIG=str(path), GPUALERT_NAME="victim-job")
    run = run_gpualert(tmp_path, base(tmp_path) + ["--smtp", relay.addr, "--"]
                       + child("print('private log line'); raise SystemExit(3)"), env=env)
    return run, list(relay.messages)  # delivery is over when the run has ended


def _assert_refused(tmp_path, run, got, why):
    assert run.returncode == 3, run.stderr
    assert all("attacker@evil.example" not in m.rcpt_tos for m in got), [m.rcpt_tos for m in got]
    written = b"".join(open(p, "rb").read() for p in glob.glob(str(tmp_path / "outbox" / "**" / "*"),
                                                                   recursive=True) if os.path.isfile(p))
    assert b"attacker" not in written and b"victim-job" in written  # the environment still applies
    refusals = [line for line in run.stderr.splitlines() if b"warning: config file" in line]
    assert len(refusals) == 1 and why in refusals[0], run.stderr
    assert b"held: configuration problem" in run.stderr  # `resend` sends it once it is fixed


@pytest.mark.parametrize("mode", [0o666, 0o644])
def test_another_user_s_config_file_is_refused(tmp_path, other_user, shared_tmp, smtp_plain, mode):
    # A 0666 config owned by someone else sent the victim's log to attacker@evil.example
    # and to the attacker's chat URL; the only warning was "readable by others".
    path = os.path.join(shared_tmp, "gpualert.ini")
    made = other_user.run(["sh", "-c", "printf '%%s' \"$0\" > '%s' && chmod %o '%s'" % (path, mode, path),
                           PLANTED])
    assert made.returncode == 0, made.stderr
    run, got = _run_with_config(tmp_path, path, smtp_plain)
    _assert_refused(tmp_path, run, got, b"owned by uid %d, not by you" % other_user.uid)


@pytest.mark.parametrize("mode", [0o666, 0o602])
def test_an_own_config_file_others_may_write_is_refused(tmp_path, smtp_plain, mode):
    path = tmp_path / "config.ini"
    path.write_text(PLANTED)
    path.chmod(mode)
    run, got = _run_with_config(tmp_path, path, smtp_plain)
    _assert_refused(tmp_path, run, got, b"writable by others: refused (chmod go-w it)")


def test_a_config_file_a_shared_group_may_write_is_refused(tmp_path, other_user, smtp_plain):
    # A group-writable config in a group's project directory: anyone in the group could
    # redirect the mail. (other_user's group is one this user does not own alone.)
    path = tmp_path / "config.ini"
    path.write_text(PLANTED)
    os.chown(str(path), -1, other_user.gid)
    path.chmod(0o620)
    run, got = _run_with_config(tmp_path, path, smtp_plain)
    _assert_refused(tmp_path, run, got, b"writable by group %d: refused (chmod go-w it)" % other_user.gid)


def test_a_config_file_an_acl_lets_another_user_write_is_refused(tmp_path, smtp_plain):
    # `setfacl -m u:nobody:rw config.ini` on a 0600 file: the mode's group bits show only
    # the ACL's mask (rw), which the private-group rule let through.
    import struct
    path = tmp_path / "config.ini"
    path.write_text(PLANTED)
    path.chmod(0o600)
    entries = [(1, 6, 0xFFFFFFFF), (2, 6, 65534), (4, 0, 0xFFFFFFFF), (0x10, 6, 0xFFFFFFFF), (0x20, 0, 0xFFFFFFFF)]
    acl = struct.pack("<I", 2) + b"".join(struct.pack("<HHI", *e) for e in entries)  # acl_ea_header, acl_ea_entry
    try:
        os.setxattr(str(path), "system.posix_acl_access", acl)
    except OSError as exc:
        pytest.skip("no POSIX ACLs on %s: %s" % (tmp_path, exc))
    run, got = _run_with_config(tmp_path, path, smtp_plain)
    _assert_refused(tmp_path, run, got, b"has an ACL that lets user 65534 write it: refused (setfacl -b it)")


def test_a_config_file_writable_only_through_one_s_own_private_group_is_used(tmp_path, smtp_plain):
    # umask 002 with user private groups (Debian's and RHEL's default) makes every new
    # file 0664: writable by a group that is the user alone.
    import grp
    import pwd
    me, group = pwd.getpwuid(os.getuid()), grp.getgrgid(os.getgid())
    if group.gr_name != me.pw_name or set(group.gr_mem) - {me.pw_name}:
        pytest.skip("this user's primary group is not a private group")
    path = tmp_path / "config.ini"
    path.write_text("[gpualert]\nto = owner@example.org\nsmtp = %s\n" % smtp_plain.addr)
    path.chmod(0o664)
    run = run_gpualert(tmp_path, base(tmp_path) + ["--config", str(path), "--"] + child("pass"))
    assert run.returncode == 0 and b"refused" not in run.stderr, run.stderr
    assert [m.rcpt_tos for m in smtp_plain.wait_for(1)] == [["owner@example.org"]]


def test_help_says_the_from_address_a_message_really_has(tmp_path):
    """--help said the sender defaults to gpualert@HOST; a message says gpualert <USER@HOST>."""
    import email
    import email.policy
    import getpass
    import socket
    helptext = run_gpualert(tmp_path, ["--help"]).stdout.decode()
    assert "sender address (default: gpualert <USER@HOST>)" in helptext
    run_gpualert(tmp_path, base(tmp_path) + ["--to", "me@example.org", "--"] + child("pass"))
    with open(outbox_messages(tmp_path)[0], "rb") as handle:
        sender = email.message_from_binary_file(handle, policy=email.policy.default)["From"]
    assert str(sender).startswith("gpualert <%s@" % getpass.getuser()), sender
    assert socket.gethostname().split(".")[0] in str(sender)

"""Nothing leaked: secrets on the command line, in the job's output and its environment dump are
redacted in what leaves; the job never sees the SMTP password; artifacts never include
secret-like files or the home itself; what gpualert makes is private (umask 000, planted links,
world-writable fallbacks). Every test runs the real gpualert.py against real servers, processes
and users."""
import email
import email.policy
import glob
import os
import re
import subprocess
import sys

import pytest

from _load import load_gpualert
from wrapper_helpers import (PY, SCRIPT, addressed, base, broken_home_env, child, isolated_env,
                             parse, run_gpualert, wait_for)


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


# ---- secrets ----

def test_the_job_never_sees_the_smtp_password(tmp_path):
    env = isolated_env(tmp_path, GPUALERT_SMTP_PASSWORD="s3cret-in-env")
    run = run_gpualert(tmp_path, addressed(tmp_path) + ["--dry-run", "--"] +
                       ["sh", "-c", "echo pw=${GPUALERT_SMTP_PASSWORD:-none}"], env=env)
    assert b"pw=none" in run.stdout and b"s3cret" not in run.stdout


def test_secrets_on_the_command_line_are_redacted_everywhere_but_the_output(tmp_path):
    argv = child("print('job ran')") + ["--hf-token", "hf_TOPSECRET1", "--password=TOPSECRET2",
                                        "--api-key", "TOPSECRET3", "WANDB_API_KEY=TOPSECRET4",
                                        "https://bob:TOPSECRET5@example.org/x", "--lr", "0.1"]
    run = run_gpualert(tmp_path, addressed(tmp_path) + ["--dry-run", "--"] + argv)
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
def test_secret_flags_urls_and_webhooks_are_redacted_everywhere_but_the_output(tmp_path, argv, kept):
    # All of these appeared in the log header, run.json and the message.
    run = run_gpualert(tmp_path, addressed(tmp_path) + ["--dry-run", "--"] + argv)
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
    run = run_gpualert(tmp_path, addressed(tmp_path) + ["--dry-run", "--"] + child(code))
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


def test_artifacts_auto_skips_secret_like_files(tmp_path, smtp_plain):
    code = ("open('metrics.jsonl', 'w').write('{}'); open('kernel-1.json', 'w').write('{\"key\": \"h\"}'); "
            "open('credentials.json', 'w').write('{}'); open('.env', 'w').write('A=1')")
    env = isolated_env(tmp_path, HOME=str(tmp_path / "home"))  # the auto scan never looks at $HOME itself
    run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--artifacts", "auto", "--"] + child(code),
                 env=env)
    names = [p.get_filename() for p in parse(smtp_plain.wait_for(1)[0].data).iter_attachments()]
    assert "metrics.jsonl" in names
    assert not any(n in names for n in ("kernel-1.json", "credentials.json", ".env")), names


def test_artifacts_auto_never_scans_home_itself(tmp_path, smtp_plain):
    code = "open('results.json', 'w').write('{}')"  # cwd is $HOME in isolated_env
    run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--artifacts", "auto", "--"] + child(code))
    names = [p.get_filename() for p in parse(smtp_plain.wait_for(1)[0].data).iter_attachments()]
    assert names == ["output.log"], names


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


def test_p_is_a_password_but_not_after_mkdir_or_ssh():
    from _load import load_gpualert
    g = load_gpualert()
    assert g.redact_argv(["sh", "-c", "mkdir -p out && mysql -u me -p S3CRET db; ssh -p 22 host"]) == [
        "sh", "-c", "mkdir -p out && mysql -u me -p *** db; ssh -p 22 host"]
    assert g.redact_argv(["/bin/mkdir", "-p", "out"]) == ["/bin/mkdir", "-p", "out"]


JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJUT1BTRUNSRVQ3In0.c2lnbmF0dXJlVE9QU0VDUkVUOA"


def test_secret_headers_basic_auth_json_passwords_and_jwts_are_redacted(tmp_path):
    # `-phunter`, header values, `curl -u admin:X`, a JSON password and a JWT went into the
    # body, run.json and the log header as given (the README said bearer was masked).
    argv = ["sh", "-c", "echo job ran; : curl -u admin:TOPSECRET8 x", "sh", "-pTOPSECRET1",
            "Authorization: Bearer TOPSECRET2", "Authorization: token TOPSECRET3",
            "X-Api-Key: TOPSECRET4", "-u", "admin:TOPSECRET5", '{"password": "TOPSECRET6"}', JWT]
    run = run_gpualert(tmp_path, addressed(tmp_path) + ["--dry-run", "--"] + argv)
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
    run = run_gpualert(tmp_path, addressed(tmp_path) + ["--dry-run", "--"] + child(code), env=env)
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


cluster = load_gpualert()


def test_array_records_and_rate_stamps_live_in_private_directories(tmp_path):
    """Task records and the hourly stamps say what a user runs and when: their directories
    are created 0700, and one of ours that others may write to (umask 002, an older
    gpualert) is made 0700 before it is used, not refused (which would lose the summary)."""
    import stat
    arrays, rates = tmp_path / "arrays", tmp_path / "rates"
    cluster.ArraySummary(str(arrays), "8", task_count=2).record(0, "SUCCESS")
    assert cluster.RateLimiter(str(rates), 5).allow() is True
    for folder in (arrays, rates):
        assert stat.S_IMODE(os.stat(str(folder)).st_mode) == 0o700
    for name in ("open-arrays", "open-rates"):
        (tmp_path / name).mkdir()
        os.chmod(str(tmp_path / name), 0o775)
    s = cluster.ArraySummary(str(tmp_path / "open-arrays"), "9", task_count=1)
    s.record(0, "SUCCESS")
    limiter = cluster.RateLimiter(str(tmp_path / "open-rates"), 1)
    assert limiter.allow() is True and limiter.allow() is False, limiter.notes
    for name in ("open-arrays", "open-rates"):
        assert stat.S_IMODE(os.stat(str(tmp_path / name)).st_mode) == 0o700
        assert os.listdir(str(tmp_path / name)), name


# ---- one table of secret shapes: argv, channel URLs and the job's own lines ----

TEAMS_URL = ("https://x.webhook.office.com/webhookb2/0a1b-guid@2c3d-tenant/IncomingWebhook/"
             "TEAMSSECRET99/4e5f-guid")
TELEGRAM_URL = "https://api.telegram.org/bot123456:AAHTGSECRET99/sendMessage"
DB_URL = "postgres://bob:PgPassw0rd@db.example.org:5432/prod"


def _texts(raw, attachments=True):
    """The subject and every text part of a message, decoded (the attachments too, or not)."""
    msg = parse(raw)
    out = [str(msg["Subject"])]
    for part in msg.walk():
        if part.is_multipart() or (part.get_filename() and not attachments):
            continue
        content = part.get_content()
        out.append(content.decode("utf-8", "replace") if isinstance(content, bytes) else content)
    return "\n".join(out)


def _gpualert_lines(stderr):
    return b"\n".join(line for line in stderr.splitlines() if line.startswith(b"gpualert:"))


def test_teams_and_telegram_webhooks_on_the_command_line_are_masked(tmp_path, smtp_plain):
    # Both went out unmasked in the e-mail: argv redaction had its own list of secret URL
    # paths, apart from the channel parsers'.
    run = run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--", "sh", "-c",
                                                        "exit 1", TEAMS_URL, TELEGRAM_URL])
    assert run.returncode == 1, run.stderr
    assert len(smtp_plain.messages) == 1, run.stderr
    text = _texts(smtp_plain.messages[0].data)
    runs = run_gpualert(tmp_path, ["runs", "--json"] + base(tmp_path))
    record = open(glob.glob(str(tmp_path / "logs" / "*" / "run.json"))[0]).read()
    for secret in ("TEAMSSECRET99", "AAHTGSECRET99"):
        for where, seen in (("message", text), ("run.json", record), ("runs --json", runs.stdout.decode()),
                            ("stderr", run.stderr.decode())):
            assert secret not in seen, where
    assert "webhook.office.com/webhookb2/***" in text and "api.telegram.org/bot***" in text, text


def test_url_credentials_the_job_prints_are_masked_wherever_its_lines_leave(tmp_path, smtp_plain):
    # postgres://bob:PASSWORD@ was masked on argv but not in the job's lines: the tail, the
    # stand-in, run.json, `runs --json` and the digest. The attached log stays as it was.
    go = tmp_path / "go"
    code = ("import os, time\nprint('connecting to %s', flush=True)\nend = time.time() + 60\n"
            "while not os.path.exists(%r) and time.time() < end:\n    time.sleep(0.05)\n"
            "raise SystemExit('ERROR: cannot reach %s')" % (DB_URL, str(go), DB_URL))
    proc = subprocess.Popen([PY, SCRIPT] + addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--"]
                            + child(code), env=isolated_env(tmp_path), cwd=str(tmp_path),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # the stand-in, rewritten with the job's latest lines 1, 2, 4 ... s after the start
        stand_in = wait_for(lambda: [t for t in map(_outbox_text, glob.glob(str(tmp_path / "outbox" / "*")))
                                     if "connecting to postgres" in t], 30, step=0.1, what="the stand-in")
    finally:
        go.write_text("")
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert "bob:***@db.example.org" in stand_in[0] and "PgPassw0rd" not in stand_in[0]
    run_gpualert(tmp_path, ["digest"] + addressed(tmp_path) + ["--smtp", smtp_plain.addr])
    sent = smtp_plain.wait_for(2)
    assert len(sent) == 2, err
    message, digest = (_texts(m.data, attachments=False) for m in sent)
    record = open(glob.glob(str(tmp_path / "logs" / "*" / "run.json"))[0]).read()
    runs = run_gpualert(tmp_path, ["runs", "--json"] + base(tmp_path)).stdout.decode()
    for where, seen in (("message", message), ("digest", digest), ("run.json", record),
                        ("runs --json", runs), ("gpualert's lines", _gpualert_lines(err).decode())):
        assert "PgPassw0rd" not in seen and "bob:***@db.example.org" in seen, (where, seen)
    assert "connecting to postgres://bob:***@db.example.org" in message  # the tail
    assert DB_URL in _texts(sent[0].data)  # the attached log: the job's own bytes


def _outbox_text(path):
    try:
        with open(path, "rb") as handle:
            return _texts(handle.read(), attachments=False)
    except (OSError, ValueError):  # renamed or rewritten as we read
        return ""


@pytest.mark.parametrize("url,secret", [
    ("https://hooks.slack.com/services/T0001/B0001/SLACKSECRET99", "SLACKSECRET99"),
    ("https://discord.com/api/webhooks/1234/DISCORDSECRET99", "DISCORDSECRET99"),
    (TEAMS_URL, "TEAMSSECRET99"),
    ("https://prod-00.westus.logic.azure.com/workflows/abc/triggers/manual/paths/invoke"
     "?api-version=2016-06-01&sv=1.0&sig=TEAMSSIG99", "TEAMSSIG99"),
    ("https://chat.googleapis.com/v1/spaces/AAA/messages?key=GCHATKEY99&token=GCHATTOKEN99", "GCHAT"),
    ("https://mattermost.test:8065/hooks/MMKEY99", "MMKEY99"),
    ("https://rocket.test/hooks/RCID1/RCTOKEN99", "RCTOKEN99"),
    ("ntfys://ntfy.sh/NTFYTOPIC99", "NTFYTOPIC99"),
    ("ntfy://:tk_ntfytoken99@ntfy.test/NTFYTOPIC99", "99"),
    ("https://ntfy.sh/NTFYTOPIC99", "NTFYTOPIC99"),
    ("gotifys://gotify.test/sub/GOTIFYTOKEN99", "GOTIFYTOKEN99"),
    ("pover://POUSER99@POTOKEN99", "99"),
    ("tgram://123:TGSECRET99/4242", "TGSECRET99"),
    ("matrixs://bot:syt_SECRET99@matrix.example.org/#alerts:example.org", "SECRET99"),
    ("matrix://syt_SECRET99@matrix.example.org/!abc:example.org", "SECRET99"),
    ("jsons://ci:JSONPASS99@hook.test/hook?api_key=JSONKEY99", "99"),
])
def test_one_table_masks_a_channel_url_alike_on_argv_in_a_job_s_line_and_as_a_channel(url, secret):
    g = load_gpualert()
    shown = g.parse_channel(url).masked
    assert secret not in shown and "***" in shown
    assert g.redact_argv(["python", "train.py", url]) == ["python", "train.py", shown]
    assert g.tail_lines("posting to %s failed\n" % url) == ["posting to %s failed" % shown]


def test_a_url_password_cut_by_a_line_s_limit_shows_none_of_itself(tmp_path):
    # Lines are cut (the tail at 500 characters, the decisive line at 300, the detail at
    # 120): masked after the cut, a password whose @ lay past it showed its first letters.
    tail_line = "x" * 485 + " " + DB_URL
    error = "ERROR: " + "y" * 91 + " " + DB_URL
    run = run_gpualert(tmp_path, addressed(tmp_path) + ["--dry-run", "--"]
                       + child("print(%r); raise SystemExit(%r)" % (tail_line, error)))
    assert run.returncode == 1, run.stderr
    record = open(glob.glob(str(tmp_path / "logs" / "*" / "run.json"))[0]).read()
    text = _texts(open(glob.glob(str(tmp_path / "logs" / "*" / "*.eml"))[0], "rb").read(), attachments=False)
    for where, seen in (("run.json", record), ("message", text), ("gpualert's lines", _gpualert_lines(run.stderr).decode())):
        assert "PgPass" not in seen and "bob:**" in seen, (where, seen)


# ---- secret-named fields, in whatever dump the job prints ----

HEX40 = "0123456789abcdef0123456789abcdef01234567"
# (a line the job prints, its secret): each of these left the machine as printed.
SECRET_LINES = [
    ("  password: YamlPw1", "YamlPw1"),  # a YAML / Hydra config dump
    ("  aws_secret_access_key: wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI"),  # ~/.aws/credentials
    ("Namespace(lr=0.1, hf_token='NsTok1', wandb_key='NsKey2')", "NsTok1"),
    ("Namespace(lr=0.1, hf_token='NsTok1', wandb_key='NsKey2')", "NsKey2"),
    ("headers={'Authorization': 'Bearer DictBearer1'}", "DictBearer1"),
    ('headers={"Authorization": "Bearer JsonBearer1"}', "JsonBearer1"),
    ("authorization=Bearer EqBearer1", "EqBearer1"),
    ("connecting to postgres://bob:p@ssAtPw1@db.example.org/x", "ssAtPw1"),  # urllib: the last @
    ("wandb login " + HEX40, HEX40),
    ("creds = {'client_secret': 'ClientSec1', 'user': 'bob'}", "ClientSec1"),
    ('api_key = "SpacedKey1"', "SpacedKey1"),
    ("wandb_api_key=WandbKey1", "WandbKey1"),
    ("Password: Prompted1", "Prompted1"),
    ("Cookie: session=CookieSess1; theme=dark", "CookieSess1"),
    ("Set-Cookie: sessionid=SetCookie1; Path=/", "SetCookie1"),
    ("git clone https://" + HEX40 + "@github.com/org/repo.git", HEX40),  # a classic token as the user
    ("SLACK_APP=xapp-1-A0123456789-1234567890123-abcdefAppTok1", "AppTok1"),
    ("bot 123456789:AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw ready", "AAHdqTcvCH1vGWJxfSeofSAs0K5PALDsaw"),
    ("os.environ['HF_TOKEN'] = 'EnvSub1'", "EnvSub1"),
    ("X-Auth: XAuth1", "XAuth1"),
    ("db: {user: bob, password: FlowPw1}", "FlowPw1"),
    ("  DB_PWD=DbPwd1", "DbPwd1"),
    ("PGPASSWORD=PgPw1 psql -h db", "PgPw1"),
    ("sk-proj-abcdefghijklmnopqrstuvwxyz0123 in use", "abcdefghijklmnopqrstuvwxyz0123"),
]
# Lines that hold no secret and must stay as printed: metrics, sizes, paths, names, states.
PLAIN_LINES = [
    "step 1200 | loss=2.31 | token=0.95 | lr=3e-4",
    "max_tokens=100 num_tokens: 512 tokens_per_sec=12345.6 max_new_token: 64",
    "TOKEN_BUDGET=4096 MAX_TOKENS=2048 HF_TOKENIZERS_PARALLELISM=false",
    "PWD=/home/alice/run7",
    "OLDPWD=/home/alice",
    "TIKTOKEN_CACHE_DIR=/scratch/alice/tiktoken",
    "SLURM_JOB_ACCOUNT=proj SLURM_CREDENTIALS_DIR=/var/spool/slurm",
    "wandb: View run at https://wandb.ai/alice/proj/runs/sk-learn-baseline-2024-experiment1",
    "wandb: Syncing run sk-learn-baseline-abcdefghijklmnopqrstuvwxyz",
    "loading s3://bucket/path/AKIAIOSFODNN7EXAMPLE-shard-0001.tar",
    "Authorization: granted for user alice",
    "INFO:root:Auth: success via kerberos",
    "api_key_id=12 auth=none",
    "INFO: tokenizer pad_token=<pad> eos_token: [SEP] unk_token='<unk>'",
    "eval: token_f1=0.88 secret_acc=0.5 --secret-sauce-dim=512",
    "Token indices sequence length is longer than the specified maximum",
    "key=val_loss mode=min",
    "hf_token: null",
    "password=${DB_PASSWORD}",
    "ValueError: Please select a token to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)`",
    "    c = Client(address, authkey=process.current_process().authkey)",
]


@pytest.mark.parametrize("line,secret", SECRET_LINES)
def test_a_secret_named_field_or_token_in_the_job_s_line_is_masked_its_name_kept(line, secret):
    # Each went out as printed: the header shape wanted ':' right after the name (a quote broke
    # it), JSON fields took double quotes only, NAME= was capitals only (aws_..., wandb_...
    # passed), and a URL's password stopped at its first @.
    g = load_gpualert()
    shown = g.mask_secrets(line)
    assert secret not in shown and "***" in shown, shown
    assert g.tail_lines(line + "\n") == [shown]
    name = re.match(r"\W*([A-Za-z_]+)", line).group(1)
    assert name in shown  # what the field is stays readable


def test_lines_without_a_secret_are_left_as_printed():
    g = load_gpualert()
    assert [g.mask_secrets(line) for line in PLAIN_LINES] == PLAIN_LINES


def test_secret_named_fields_the_job_prints_leave_masked_and_stay_in_the_log(tmp_path):
    lines = [line for line, _ in SECRET_LINES[:10]]
    code = "print(%r); raise SystemExit('ERROR: ' + %r)" % ("\n".join(lines), lines[0])
    run = run_gpualert(tmp_path, addressed(tmp_path) + ["--dry-run", "--"] + child(code))
    assert run.returncode == 1, run.stderr
    log = open(glob.glob(str(tmp_path / "logs" / "*" / "output.log"))[0]).read()
    text = _texts(open(glob.glob(str(tmp_path / "logs" / "*" / "*.eml"))[0], "rb").read(), attachments=False)
    record = open(glob.glob(str(tmp_path / "logs" / "*" / "run.json"))[0]).read()
    for line, secret in SECRET_LINES[:10]:
        assert line in log  # the job's own bytes
        for where, seen in (("message", text), ("run.json", record),
                            ("gpualert's lines", _gpualert_lines(run.stderr).decode())):
            assert secret not in seen, (where, secret)
    assert "password: ***" in text and "hf_token='***'" in text and "bob:***@db.example.org" in text


@pytest.mark.parametrize("argv,shown", [
    (["python", "train.py", "+db.password=HydraPw1"], ["python", "train.py", "+db.password=***"]),
    (["python", "train.py", "++wandb.api_key=HydraKey1"], ["python", "train.py", "++wandb.api_key=***"]),
    (["wandb", "login", HEX40], ["wandb", "login", "***"]),
    (["python", "train.py", "--token=", "SpacedTok1"], ["python", "train.py", "--token=", "***"]),
    (["python", "train.py", "--hub_token", "-DashTok1", "--fp16"], ["python", "train.py", "--hub_token", "***", "--fp16"]),
    (["sh", "-c", 'python t.py --password "Quoted Pw1" --lr 1'], ["sh", "-c", 'python t.py --password "***" --lr 1']),
    (["python", "t.py", "--json", "{'password':'DictPw1'}"], ["python", "t.py", "--json", "{'password':'***'}"]),
    (["python", "t.py", "--db-url", "postgres://bob:p@ssAtPw1@h/db"], ["python", "t.py", "--db-url", "postgres://bob:***@h/db"]),
])
def test_secrets_on_the_command_line_in_every_form_are_masked(argv, shown):
    assert load_gpualert().redact_argv(argv) == shown


def test_masking_a_long_adversarial_line_takes_linear_time():
    # The Discord shape's unbounded [\w-]+ made mask_secrets("a-" * 60000) take 17 s, and
    # redact_argv masks every argument before the job starts: a long argument held the start
    # for minutes. Run in a child under one coarse limit, so a slow shared machine cannot
    # fail it: each input is 250 KB, linear masking takes well under 1 s for all of them on
    # one core; a quadratic shape takes minutes.
    code = ("import sys; sys.path.insert(0, %r); import gpualert as g\n"
            "for unit in ('a-', 'sk-', 'x@', 'password=', \"'\", ':', 'a://u:p@', 'token: \\'',\n"
            "             'Cookie: \\'', 'login ', 'xoxb-', 'AKIA', '{\\'password\\': '):\n"
            "    g.mask_secrets(unit * (250000 // len(unit)))\n"
            "g.redact_argv(['sh', '-c', 'a ' + ';' * 250000 + 'x'])\n"
            "g.redact_argv(['python', 'a-' * 125000])\n" % os.path.dirname(SCRIPT))
    done = subprocess.run([PY, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert done.returncode == 0, done.stderr


def test_a_channel_password_with_at_or_hash_is_masked_whole_even_in_an_error():
    # p@ss@host was shown as bob:***@ssSECRET@... and Channel.secrets held 'p' only; a # in
    # the password made urllib's error quote the password itself.
    g = load_gpualert()
    channel = g.parse_channel("jsons://bob:p@ssAtSecret2@hook.example.org/hook")
    assert channel.masked == "jsons://bob:***@hook.example.org/hook"
    assert "p@ssAtSecret2" in channel.secrets
    assert g.mask_text("answer: p@ssAtSecret2 refused", channel.secrets) == "answer: *** refused"
    with pytest.raises(g.ConfigError) as raised:
        g.parse_channel("jsons://bob:HashSecret3#x@hook.example.org/h")
    assert "HashSecret3" not in str(raised.value) and "jsons://***" in str(raised.value)

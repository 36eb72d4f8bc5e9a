"""Shared pytest fixtures: REAL mail servers and misbehaving relays on 127.0.0.1.

Every server listens on a free loopback port and is stopped at the end of the test.
Each exposes .host ("127.0.0.1"), .port (int), .addr ("127.0.0.1:PORT", what --smtp takes),
.messages (list of Received(mail_from, rcpt_tos, data, tls, authenticated); data is the raw
bytes the server got) and .wait_for(n, timeout=5) -> messages (waits until n have arrived).

Certificates (session scope, made once with the `openssl` CLI):
  pki            .ca (CA cert that signed the servers' cert; point SSL_CERT_FILE at it to trust
                 it), .other_ca (an unrelated CA: trusting only it makes verification fail),
                 .cert/.key (server cert for localhost and 127.0.0.1).
  trust_test_ca  monkeypatches SSL_CERT_FILE=pki.ca for this test (ssl.create_default_context
                 reads that variable), returns the path. For subprocesses pass
                 env=dict(os.environ, SSL_CERT_FILE=pki.ca).

aiosmtpd servers (a real SMTP implementation):
  smtp_server          STARTTLS offered + AUTH PLAIN/LOGIN required after TLS
                       (user SMTP_USER / password SMTP_PASSWORD below).
  smtp_plain           no TLS, no AUTH.
  smtp_ssl             implicit TLS (like port 465) + AUTH.
  smtp_auth_plaintext  AUTH without TLS (auth_require_tls=False; client needs smtp_tls=none).
  smtp_size_limited    advertises SIZE 40000 and answers 552 to anything bigger.
  make_smtp_server(tls=None|"starttls"|"ssl", auth=False, auth_require_tls=True,
                   data_size_limit=None): the factory behind all of these.

Misbehaving relays (ScriptedRelay: a thread speaking just enough SMTP; records .commands):
  refusing_port        int: a loopback port with nothing listening (connect is refused).
  silent_relay         accepts TCP and never says anything.
  slow_relay           answers every line (greeting included) after 1.0 s.
  auth_failing_relay   offers AUTH PLAIN LOGIN and answers 535 to every attempt.
  tls_garbage_relay    offers STARTTLS, says 220, then sends garbage instead of a handshake.
  rejecting_relay      factory: rejecting_relay(stage, code=550, text=None, over=None) with
                       stage in MAIL|RCPT|DATA (reply to the DATA command)|EOM (reply after the
                       message); with over=N only messages bigger than N bytes are rejected at
                       EOM, smaller ones are accepted and recorded.
  relay_factory        ScriptedRelay(mode, delay=0, stage=None, code=550, text=None, over=None)
                       with mode in ok|silent|slow|reject|auth_fail|tls_garbage.

Sendmail stand-in:
  fake_sendmail        factory: fake_sendmail(mode="ok"|"fail"|"hang") -> FakeSendmail with
                       .path (an executable /bin/sh script), .stdin_file (what it read, for ok),
                       .args_file (its argv), .pid_file (hang: pid of its sleeping child).

A real Postfix (installed and started by .ci/postfix-setup.sh; skips with the reason otherwise):
  postfix              .user (the second user's name: the suite never mails whoever runs it),
                       .sendmail ("/usr/sbin/sendmail"), .mailbox ("/var/mail/<.user>"),
                       .delivered(marker) -> [raw message bytes containing marker] and
                       .wait_for(marker, n=1, timeout=20) -> the same, polled;
                       .set_size_limit(n): `postconf -e message_size_limit=n` + `postfix reload`,
                       restored at teardown (a lock on /etc/postfix serializes this between test
                       processes); the messages a test looked for are taken out of the mailbox
                       at teardown; root only: as an ordinary user the test skips (ROOT_PASS).

A second Unix user (root only: `useradd`; skips with the reason otherwise):
  other_user           .name, .uid, .gid, .run(argv, **kw) -> CompletedProcess run as that user
                       (setpriv --reuid/--regid/--clear-groups), .popen(argv, **kw).
  ordinary_user        a user root's powers do not cover: this one when the suite runs as an
                       ordinary user (as CI's user pass and the README's command do), else
                       other_user. Same interface, plus .script (a gpualert.py it can read).

For the message, delivery and outbox tests:
  cfg                  the configuration dict deliver() and build_message() take: --to bob@, a
                       private XDG_STATE_HOME, no sendmail, the test's own log dir and outbox.
  shared_tmp           a world-writable sticky directory like /tmp that the test owns and removes.

Root pass: the suite runs as an ordinary user. A test that truly needs root (a tmpfs mount,
a second Unix user, postconf) carries the `needs_root` mark (tests using other_user get it
here); as an ordinary user it skips with ROOT_PASS, and `.ci/run` runs `pytest -m needs_root`
again as root.
"""
import collections
import os
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

import pytest

from wrapper_helpers import remove_tree, write_executable

SMTP_USER = "alice"
SMTP_PASSWORD = "s3cret-pw"

ROOT_PASS = "needs root: runs in .ci/run's root pass (pytest -m needs_root, as root)"


#: fixtures that need root, wherever they are defined: their tests are root-pass tests
ROOT_FIXTURES = ("other_user", "tiny_disk", "postfix")


def pytest_configure(config):
    config.addinivalue_line("markers", "needs_root: needs root (a tmpfs mount, a second Unix user, "
                                       "postconf); skips as an ordinary user: " + ROOT_PASS)


def pytest_collection_modifyitems(config, items):
    for item in items:
        if set(ROOT_FIXTURES) & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.needs_root)
        if os.geteuid() != 0 and item.get_closest_marker("needs_root"):
            item.add_marker(pytest.mark.skip(reason=ROOT_PASS))


@pytest.fixture(scope="session", autouse=True)
def leaves_nothing_behind(tmp_path_factory):
    """The suite never mails whoever runs it and leaves nothing in the temp dir: fails the
    session (an error at the last teardown) for a gpualert* entry of this user's that appeared
    in /tmp or $TMPDIR (top level, or inside this user's gpualert-UID folders: a dry run's
    .eml) and is still there, or a message in this user's mailbox that names this session's
    pytest folder. Only what this user made during the session is counted; another user's
    files, or this user's mail from elsewhere, never fail it. Entries cannot be told from
    those of another pytest of this user running meanwhile: then they are said, not failed."""
    before = _traces()
    mail_before = _mailbox_messages()
    others = _OtherSessions()
    yield
    others.stop()
    base = str(tmp_path_factory.getbasetemp()).encode()
    new_mail = [m.replace(b"=\n", b"") for m in _mailbox_messages() - mail_before]  # QP breaks
    mailed = [_subject(m) for m in new_mail if base in m]
    MAILED_MEANWHILE.extend(_subject(m) for m in new_mail if base not in m and b"X-Gpualert" in m)
    left = sorted(set(_traces()) - before)
    deadline = time.monotonic() + 10  # another run of the suite ending meanwhile: its own
    while left and time.monotonic() < deadline:
        time.sleep(0.5)
        left = sorted(set(_traces()) & set(left))
    if left and others.seen:
        LEFT_MEANWHILE.extend(left)
        left = []
    if left or mailed:
        pytest.fail("the suite left this behind: %s; and mailed %s, whoever runs it, these: %s"
                    % (left or "nothing", _me(), mailed or "none"), pytrace=False)


class _OtherSessions(object):
    """Watches, every 2 s, for another pytest process of this user (its own tests may leave
    gpualert* entries in /tmp that this session cannot tell from its own)."""

    def __init__(self):
        self.seen = set()
        self._done = threading.Event()
        self._mine = set([os.getpid()])
        threading.Thread(target=self._watch, daemon=True).start()

    def _watch(self):
        while True:
            self.seen.update(_pytests_of_mine() - self._mine)
            if self._done.wait(2.0):
                return

    def stop(self):
        self._done.set()
        self.seen.update(_pytests_of_mine() - self._mine)


def _pytests_of_mine():
    uid, found = os.geteuid(), set()
    for pid in os.listdir("/proc"):
        try:
            if not pid.isdigit() or os.stat("/proc/" + pid).st_uid != uid:
                continue
            with open("/proc/%s/cmdline" % pid, "rb") as handle:
                argv = handle.read().split(b"\0")
        except OSError:
            continue
        if any(b"pytest" in arg for arg in argv[:3]) and not _descends_from_me(int(pid)):
            found.add(int(pid))
    return found


def _descends_from_me(pid):
    """A pytest this session started (the README's test command in test_install) is ours."""
    while pid > 1:
        if pid == os.getpid():
            return True
        try:
            with open("/proc/%d/stat" % pid) as handle:
                pid = int(handle.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            return False
    return False


#: gpualert messages this user got during the session that name no folder of it: another
#: run's (a real job, another session), or a test's outside its tmp_path; said, not failed
MAILED_MEANWHILE = []
#: entries left in the temp dir while another pytest of this user ran: whose, cannot be told
LEFT_MEANWHILE = []


def pytest_terminal_summary(terminalreporter):
    if LEFT_MEANWHILE:
        terminalreporter.write_sep("=", "gpualert* entries left in the temp dir while another "
                                   "pytest of %s ran (its or ours)" % _me(), yellow=True)
        for path in LEFT_MEANWHILE:
            terminalreporter.write_line("  " + path)
    if MAILED_MEANWHILE:
        terminalreporter.write_sep("=", "gpualert mail %s got during the tests" % _me(), yellow=True)
        for subject in MAILED_MEANWHILE:
            terminalreporter.write_line("  %s (a test's? tests must not use the host's mail)" % subject)


def _me():
    import pwd
    return pwd.getpwuid(os.geteuid()).pw_name


def _traces():
    """This user's gpualert* entries in the temp dirs, and what is inside its gpualert-UID*."""
    uid, found = os.geteuid(), set()
    for tmp in set([tempfile.gettempdir(), "/tmp"]):
        try:
            names = [n for n in os.listdir(tmp) if n.startswith("gpualert")]
        except OSError:
            continue
        for name in names:
            path = os.path.join(tmp, name)
            try:
                if os.lstat(path).st_uid != uid:
                    continue
            except OSError:
                continue
            found.add(path)
            if name == "gpualert-%d" % uid or name.startswith("gpualert-%d-" % uid):
                for folder, dirs, files in os.walk(path):
                    found.update(os.path.join(folder, n) for n in dirs + files)
    return found


def _mailbox_messages():
    """The messages in this user's local mailbox, as bytes."""
    try:
        with open(os.path.join("/var/mail", _me()), "rb") as handle:
            return set(_mbox_messages(handle.read()))
    except OSError:
        return set()


def _subject(raw):
    for line in raw.splitlines():
        if line.startswith(b"Subject:"):
            return line[8:].strip().decode("utf-8", "replace")
    return "(no subject)"


@pytest.fixture(autouse=True)
def gpualert_temp_dir(monkeypatch, tmp_path_factory):
    """The tests' in-process gpualert keeps what goes to $TMPDIR/gpualert-UID (a last-resort
    outbox, the outbox-places index) in a folder of the test's, made when first asked for,
    never in the host's /tmp. (A gpualert subprocess gets TMPDIR from isolated_env.)"""
    module = sys.modules.get("gpualert")
    if module is None:
        return
    made = []

    def temp_dir():
        if not made:
            made.append(str(tmp_path_factory.mktemp("tmpdir")))
        return made[0]
    monkeypatch.setattr(module, "_temp_dir", temp_dir)
    monkeypatch.setattr(module, "_TEMP_ROOT", [])  # the process's choice, made again per test


@pytest.fixture(scope="session", autouse=True)
def early_jobs(request, tmp_path_factory):
    """A selected module with jobs that wait on a real scheduler's timers (test_slurm.py:
    one-minute time limits, a requeue hold) submits them as the session starts, through its
    start_early(tmp_path_factory), so they run out while the other modules' tests run."""
    for module in set(getattr(item, "module", None) for item in request.session.items):
        if hasattr(module, "start_early"):
            module.start_early(tmp_path_factory)


Received = collections.namedtuple("Received", "mail_from rcpt_tos data tls authenticated")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Inbox(object):
    """Messages received by a server, with a wait."""

    def __init__(self):
        self.messages = []
        self._cond = threading.Condition()

    def record(self, item):
        with self._cond:
            self.messages.append(item)
            self._cond.notify_all()

    def wait_for(self, n=1, timeout=5.0):
        end = time.monotonic() + timeout
        with self._cond:
            while len(self.messages) < n and time.monotonic() < end:
                self._cond.wait(end - time.monotonic())
            return list(self.messages)


# ---- certificates ----

class Pki(object):
    pass


def _openssl(*args, **kw):
    subprocess.check_call(("openssl",) + args, stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL, **kw)


def _make_ca(folder, name):
    key, cert = os.path.join(folder, name + ".key"), os.path.join(folder, name + ".pem")
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
             "-nodes", "-keyout", key, "-out", cert, "-days", "3", "-subj", "/CN=" + name,
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    return key, cert


@pytest.fixture(scope="session")
def pki(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("pki"))
    ca_key, ca = _make_ca(d, "gpualert-test-ca")
    other_ca = _make_ca(d, "unrelated-ca")[1]
    key, csr, cert = (os.path.join(d, n) for n in ("server.key", "server.csr", "server.pem"))
    ext = os.path.join(d, "server.ext")
    with open(ext, "w") as f:
        f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=critical,CA:FALSE\n"
                "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n"
                "subjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n")
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", key, "-out", csr, "-subj", "/CN=localhost")
    _openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
             "-out", cert, "-days", "3", "-extfile", ext)
    p = Pki()
    p.ca, p.other_ca, p.cert, p.key = ca, other_ca, cert, key
    return p


@pytest.fixture
def trust_test_ca(pki, monkeypatch):
    monkeypatch.setenv("SSL_CERT_FILE", pki.ca)
    return pki.ca


def _server_context(pki):
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    ctx.load_cert_chain(pki.cert, pki.key)
    return ctx


# ---- aiosmtpd servers ----

class _Recorder(object):
    def __init__(self, inbox):
        self.inbox = inbox

    async def handle_DATA(self, server, session, envelope):
        self.inbox.record(Received(envelope.mail_from, list(envelope.rcpt_tos),
                                   envelope.original_content or envelope.content,
                                   _is_tls(server, session), bool(session.authenticated)))
        return "250 OK queued"


def _is_tls(server, session):
    transport = getattr(server, "transport", None)
    implicit = transport is not None and transport.get_extra_info("ssl_object") is not None
    return bool(session.ssl) or implicit


def _authenticator(server, session, envelope, mechanism, auth_data):
    from aiosmtpd.smtp import AuthResult, LoginPassword
    ok = (isinstance(auth_data, LoginPassword) and auth_data.login == SMTP_USER.encode()
          and auth_data.password == SMTP_PASSWORD.encode())
    return AuthResult(success=ok, handled=False, auth_data=auth_data)


class SmtpServer(_Inbox):
    def __init__(self, pki, tls=None, auth=False, auth_require_tls=True, data_size_limit=None,
                 smtputf8=None):
        from aiosmtpd.controller import Controller
        _Inbox.__init__(self)
        self.host, self.port = "127.0.0.1", free_port()
        self.addr = "%s:%d" % (self.host, self.port)
        self.user, self.password, self.tls = SMTP_USER, SMTP_PASSWORD, tls
        self.ca = pki.ca if pki else None
        kw = {"auth_require_tls": auth_require_tls}
        if auth:
            kw["authenticator"] = _authenticator
        if data_size_limit:
            kw["data_size_limit"] = data_size_limit
        if smtputf8 is not None:  # aiosmtpd 1.4 offers SMTPUTF8 unless told not to
            kw["enable_SMTPUTF8"] = smtputf8
        if tls == "starttls":
            kw["tls_context"] = _server_context(pki)
        elif tls == "ssl":
            kw["ssl_context"] = _server_context(pki)
        self.controller = Controller(_Recorder(self), hostname=self.host, port=self.port, **kw)
        self.controller.start()

    def close(self):
        self.controller.stop()


@pytest.fixture
def make_smtp_server(pki):
    servers = []

    def make(**kw):
        servers.append(SmtpServer(pki, **kw))
        return servers[-1]
    yield make
    for s in servers:
        s.close()


@pytest.fixture
def smtp_server(make_smtp_server):
    return make_smtp_server(tls="starttls", auth=True)


@pytest.fixture
def smtp_plain(make_smtp_server):
    return make_smtp_server()


@pytest.fixture
def smtp_ssl(make_smtp_server):
    # aiosmtpd 1.4 counts only STARTTLS as TLS for auth_require_tls; implicit TLS is TLS too
    return make_smtp_server(tls="ssl", auth=True, auth_require_tls=False)


@pytest.fixture
def smtp_auth_plaintext(make_smtp_server):
    return make_smtp_server(auth=True, auth_require_tls=False)


@pytest.fixture
def smtp_size_limited(make_smtp_server):
    return make_smtp_server(data_size_limit=40000)


# ---- misbehaving relays ----

class ScriptedRelay(_Inbox):
    """Just enough SMTP to misbehave on purpose, one thread per connection."""

    def __init__(self, mode="ok", delay=0.0, stage=None, code=550, text=None, over=None):
        _Inbox.__init__(self)
        self.mode, self.delay, self.stage, self.code = mode, delay, stage, code
        self.text, self.over = text or "rejected by test relay", over
        self.commands, self.conns, self._stop = [], [], threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.2)
        self.host, self.port = self.sock.getsockname()
        self.addr = "%s:%d" % (self.host, self.port)
        self._thread = threading.Thread(target=self._accept_loop, daemon=True)
        self._thread.start()

    def _accept_loop(self):
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except (socket.timeout, OSError):
                continue
            self.conns.append(conn)
            threading.Thread(target=self._session_safe, args=(conn,), daemon=True).start()

    def _session_safe(self, conn):
        try:
            self._session(conn)
        except OSError:
            pass
        finally:
            conn.close()

    def _say(self, conn, text):
        if self.mode == "slow" and self._stop.wait(self.delay):
            raise OSError("stopped")
        conn.sendall(text.encode() + b"\r\n")

    def _session(self, conn):
        if self.mode == "silent":
            self._stop.wait(120)
            return
        rfile = conn.makefile("rb")
        self._say(conn, "220 test-relay ESMTP")
        while not self._stop.is_set():
            line = rfile.readline()
            if not line:
                return
            cmd = line.decode("utf-8", "replace").strip()
            self.commands.append(cmd)
            if self._command(conn, rfile, cmd.split(" ")[0].upper()) == "close":
                return

    def _ehlo_lines(self):
        ext = ["test-relay", "8BITMIME"]
        if self.mode == "auth_fail":
            ext.append("AUTH PLAIN LOGIN")
        if self.mode == "tls_garbage":
            ext.append("STARTTLS")
        return "\r\n".join("250-" + e for e in ext[:-1]) + "\r\n250 " + ext[-1]

    def _reject(self, conn, stage):
        if self.mode == "reject" and self.stage == stage and self.over is None:
            self._say(conn, "%d %s" % (self.code, self.text))
            return True
        return False

    def _command(self, conn, rfile, verb):
        if verb in ("EHLO", "HELO"):
            self._say(conn, self._ehlo_lines())
        elif verb == "STARTTLS" and self.mode == "tls_garbage":
            self._say(conn, "220 2.0.0 go ahead")
            conn.sendall(b"this is not a TLS handshake\r\n" * 20)
            self._stop.wait(30)
            return "close"
        elif verb == "AUTH":
            self._say(conn, "535 5.7.8 authentication credentials invalid")
        elif verb in ("MAIL", "RCPT"):
            if not self._reject(conn, verb):
                self._say(conn, "250 ok")
        elif verb == "DATA":
            if not self._reject(conn, "DATA"):
                self._say(conn, "354 go ahead")
                self._read_data(conn, rfile)
        elif verb == "QUIT":
            self._say(conn, "221 bye")
            return "close"
        elif verb in ("RSET", "NOOP"):
            self._say(conn, "250 ok")
        else:
            self._say(conn, "502 not implemented")

    def _read_data(self, conn, rfile):
        chunks = []
        while True:
            line = rfile.readline()
            if not line or line == b".\r\n":
                break
            chunks.append(line)
        data = b"".join(chunks)
        big = self.over is not None and len(data) > self.over
        if self.mode == "reject" and self.stage == "EOM" and (self.over is None or big):
            self._say(conn, "%d %s" % (self.code, self.text))
            return
        self.record(Received(None, None, data, False, False))
        self._say(conn, "250 ok queued")

    def close(self):
        self._stop.set()
        for c in self.conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.sock.close()
        self._thread.join(2)


@pytest.fixture
def relay_factory():
    relays = []

    def make(mode="ok", **kw):
        relays.append(ScriptedRelay(mode, **kw))
        return relays[-1]
    yield make
    for r in relays:
        r.close()


@pytest.fixture
def refusing_port():
    return free_port()


@pytest.fixture
def silent_relay(relay_factory):
    return relay_factory("silent")


@pytest.fixture
def slow_relay(relay_factory):
    return relay_factory("slow", delay=1.0)


@pytest.fixture
def auth_failing_relay(relay_factory):
    return relay_factory("auth_fail")


@pytest.fixture
def tls_garbage_relay(relay_factory):
    return relay_factory("tls_garbage")


@pytest.fixture
def rejecting_relay(relay_factory):
    def make(stage, code=550, text=None, over=None):
        return relay_factory("reject", stage=stage, code=code, text=text, over=over)
    return make


# ---- sendmail stand-in ----

class FakeSendmail(object):
    pass


_SENDMAIL_BODIES = {
    "ok": 'printf "%s\\n" "$*" > "$D/args"\ncat > "$D/stdin"\nexit 0\n',
    "fail": 'cat > /dev/null\necho "sendmail: fatal: no route to mail hub" >&2\nexit 75\n',
    "hang": 'sleep 600 &\necho $! > "$D/pid"\nwait\n',
    # takes the message, leaves a child holding its stdout and stderr (a queue runner), exits 0
    "forks": 'cat > "$D/stdin"\nsleep 30 &\necho $! > "$D/pid"\nexit 0\n',
}


@pytest.fixture
def fake_sendmail(tmp_path):
    def make(mode="ok"):
        d = tmp_path / ("sendmail-" + mode)
        d.mkdir(exist_ok=True)
        fake = FakeSendmail()
        fake.path = str(d / "sendmail")
        fake.stdin_file, fake.args_file, fake.pid_file = (
            str(d / "stdin"), str(d / "args"), str(d / "pid"))
        write_executable(fake.path, '#!/bin/sh\nD="%s"\n%s' % (d, _SENDMAIL_BODIES[mode]))
        return fake
    return make


# ---- a real Postfix ----

POSTFIX = "/usr/sbin/postfix"
POSTFIX_LOCKED = "/etc/postfix"  # flock()ed while a test changes main.cf: no lock file left


def _postfix_problem():
    if not os.path.exists(POSTFIX):
        return "no Postfix at %s (.ci/postfix-setup.sh installs it, as root)" % POSTFIX
    if not _postfix_running():
        return "Postfix is installed but not running (postfix start; .ci/postfix-setup.sh)"
    return None


def _postfix_running():
    if os.geteuid() == 0:
        return subprocess.run([POSTFIX, "status"], stdout=subprocess.PIPE, stderr=subprocess.PIPE).returncode == 0
    try:  # `postfix status` is root's; its loopback smtpd answering says master runs
        socket.create_connection(("127.0.0.1", 25), timeout=5).close()
        return True
    except OSError:
        return False


def _mbox_messages(text):
    """An mbox's messages, each with its "From " line and closing blank line, byte for byte
    (a body line starting "From " is written ">From " by Postfix)."""
    import re
    return [part for part in re.split(b"(?<=\n)(?=From )", text) if part]


class RealPostfix(object):
    """Mail for the second user, never for whoever runs the suite (the mail they read)."""
    sendmail = "/usr/sbin/sendmail"

    def __init__(self, user):
        self.user = user
        self.mailbox = "/var/mail/" + user
        self._restore = None
        self._lock = None
        self._markers = set()

    def delivered(self, marker):
        """Raw messages in .user's mailbox that contain `marker` (bytes or str)."""
        marker = marker.encode() if isinstance(marker, str) else marker
        self._markers.add(marker)
        try:
            with open(self.mailbox, "rb") as handle:
                text = handle.read()
        except OSError:
            return []
        return [p for p in _mbox_messages(text) if marker in p]

    def wait_for(self, marker, n=1, timeout=20.0):
        end = time.monotonic() + timeout
        while True:
            found = self.delivered(marker)
            if len(found) >= n or time.monotonic() >= end:
                return found
            time.sleep(0.1)

    def set_size_limit(self, limit):
        import fcntl
        if os.geteuid() != 0:
            pytest.skip(ROOT_PASS)
        if self._lock is None:
            self._lock = os.open(POSTFIX_LOCKED, os.O_RDONLY)
            fcntl.flock(self._lock, fcntl.LOCK_EX)
            self._restore = _postconf("message_size_limit")
        _postconf_set("message_size_limit", str(int(limit)))

    def close(self):
        if self._restore is not None:
            _postconf_set("message_size_limit", self._restore)
        if self._lock is not None:
            os.close(self._lock)
        self._take_out()

    def _take_out(self):
        """Remove the messages this test looked for, under the fcntl lock Postfix's local
        delivery also takes (mailbox_delivery_lock), so a delivery meanwhile is kept whole."""
        import fcntl
        if not self._markers or not os.path.exists(self.mailbox):
            return
        with open(self.mailbox, "r+b") as handle:
            fcntl.lockf(handle, fcntl.LOCK_EX)
            text = handle.read()
            kept = [p for p in _mbox_messages(text) if not any(m in p for m in self._markers)]
            handle.seek(0)
            handle.write(b"".join(kept))
            handle.truncate()


def _postconf(name):
    out = subprocess.run(["postconf", "-h", name], stdout=subprocess.PIPE, check=True)
    return out.stdout.decode().strip()


def _postconf_set(name, value):
    subprocess.run(["postconf", "-e", "%s=%s" % (name, value)], check=True)
    subprocess.run([POSTFIX, "reload"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=True)


@pytest.fixture
def postfix():
    problem = _postfix_problem()
    if problem:
        pytest.skip(problem)
    problem = _ensure_other_user()
    if problem:
        pytest.skip(problem)
    real = RealPostfix(OTHER_USER)
    yield real
    real.close()


# ---- a second Unix user ----

OTHER_USER = "gpualert-other"


class OtherUser(object):
    def __init__(self, name):
        import pwd
        entry = pwd.getpwnam(name)
        self.name, self.uid, self.gid = name, entry.pw_uid, entry.pw_gid

    def argv(self, argv):
        return ["setpriv", "--reuid=%d" % self.uid, "--regid=%d" % self.gid,
                "--clear-groups", "--"] + list(argv)

    def run(self, argv, **kw):
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        kw.setdefault("timeout", 60)
        return subprocess.run(self.argv(argv), **kw)


def _ensure_other_user():
    import pwd
    import shutil
    if os.geteuid() != 0:
        return "a second Unix user needs root (useradd, setpriv)"
    if not shutil.which("setpriv"):
        return "setpriv (util-linux) is not installed"
    try:
        pwd.getpwnam(OTHER_USER)
        return None
    except KeyError:
        pass
    made = subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin",
                           OTHER_USER], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if made.returncode not in (0, 9):  # 9: it exists (another test process made it)
        return "useradd %s failed: %s" % (OTHER_USER, made.stderr.decode().strip())
    return None


class CurrentUser(object):
    """The user the suite runs as, when that is not root: the same interface as OtherUser."""

    def __init__(self):
        import pwd
        self.uid, self.gid = os.getuid(), os.getgid()
        self.name = pwd.getpwuid(self.uid).pw_name
        self.script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpualert.py")

    def argv(self, argv):
        return list(argv)

    def run(self, argv, **kw):
        kw.setdefault("stdout", subprocess.PIPE)
        kw.setdefault("stderr", subprocess.PIPE)
        kw.setdefault("timeout", 60)
        return subprocess.run(argv, **kw)


@pytest.fixture
def ordinary_user(request):
    if os.geteuid() != 0:
        return CurrentUser()
    return request.getfixturevalue("other_user")


@pytest.fixture
def other_user():
    """The second user, with `script`: a copy of gpualert.py it can read (the checkout may
    sit under a folder only its owner can enter, such as a mktemp -d clone)."""
    import shutil
    import tempfile
    problem = _ensure_other_user()
    if problem:
        pytest.skip(problem)
    user = OtherUser(OTHER_USER)
    folder = tempfile.mkdtemp(prefix="gpualert-script-")
    os.chmod(folder, 0o755)
    user.script = os.path.join(folder, "gpualert.py")
    shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "gpualert.py"), user.script)
    os.chmod(user.script, 0o644)
    yield user
    shutil.rmtree(folder, ignore_errors=True)


# ---- the message tests' configuration and a shared /tmp ----

@pytest.fixture
def cfg(tmp_path, monkeypatch):
    # sendmail "none": the host's sendmail (most HPC nodes have one) is never used unless a
    # test names one. The state dir is the test's own: a fallback place recorded there (the
    # outbox-places index), the hourly cap, never the home's.
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return {"to": ["bob@example.org"], "from_addr": None, "name": None, "notify": "always",
            "log_dir": str(tmp_path / "logs"), "artifacts": [], "budget": 10 * 1024 * 1024,
            "timeout": None, "smtp": None, "smtp_user": None, "smtp_password": None,
            "smtp_tls": None, "smtp_timeout": 2.0, "sendmail": "none",
            "outbox": str(tmp_path / "outbox"), "dry_run": False, "quiet": True}


@pytest.fixture
def shared_tmp():
    """A world-writable sticky directory, like /tmp, that the test owns and removes."""
    path = tempfile.mkdtemp(prefix="gpualert-shared-tmp-")
    os.chmod(path, 0o1777)
    yield path
    remove_tree(path)  # a test may have left a read-only folder in it

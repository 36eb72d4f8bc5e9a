"""Real HTTP parts for the chat/push channel tests (and eval.py's isolation experiment).

  make_channel_pki(folder)  a CA and one server certificate for every service host gpualert
                            knows (hooks.slack.com, discord.com, api.telegram.org, ...) plus
                            localhost and 127.0.0.1; point SSL_CERT_FILE at .ca to trust it.
  RecordingServer           http.server in a thread, plain or TLS, that records every request
                            and answers as scripted: ok, a status (429 + Retry-After, 500,
                            404...), mute (accepts, never answers), slow, close.
  ForwardProxy              an HTTP proxy (CONNECT for https, absolute URIs for http) that
                            sends every host to one RecordingServer: with HTTPS_PROXY set, a
                            real webhook URL such as https://hooks.slack.com/services/... lands
                            on the local server, over TLS verified against the test CA.
  refused_port()            a loopback port with nothing listening.
  check_request(service, r) the service's documented request shape and limits; returns a list
                            of problems (empty when the request is what the service accepts).
"""
import json
import os
import select
import socket
import ssl
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer
from socketserver import ThreadingMixIn
from urllib.parse import parse_qs, urlsplit

SERVICE_HOSTS = ("hooks.slack.com", "discord.com", "chat.googleapis.com", "api.telegram.org",
                 "api.pushover.net", "ntfy.sh", "prod-00.westus.logic.azure.com",
                 "mattermost.test", "rocket.test", "gotify.test", "hook.test", "proxy-only.invalid",
                 "localhost")


class Pki(object):
    ca = other_ca = cert = key = untrusted_cert = untrusted_key = None


def _openssl(*args):
    subprocess.run(("openssl",) + args, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)


def _ca(folder, name):
    key, cert = (os.path.join(folder, name + s) for s in (".key", ".pem"))
    _openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", key, "-out", cert, "-days", "3", "-subj", "/CN=" + name,
             "-addext", "basicConstraints=critical,CA:TRUE",
             "-addext", "keyUsage=critical,keyCertSign,cRLSign")
    return key, cert


def _leaf(folder, name, ca_key, ca):
    key, csr, cert, ext = (os.path.join(folder, name + s) for s in (".key", ".csr", ".pem", ".ext"))
    sans = ",".join(["DNS:%s" % h for h in SERVICE_HOSTS] + ["IP:127.0.0.1"])
    with open(ext, "w") as handle:
        handle.write("subjectAltName=%s\nbasicConstraints=critical,CA:FALSE\n"
                     "keyUsage=critical,digitalSignature\nextendedKeyUsage=serverAuth\n" % sans)
    _openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
             "-keyout", key, "-out", csr, "-subj", "/CN=localhost")
    _openssl("x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key, "-CAcreateserial",
             "-out", cert, "-days", "3", "-extfile", ext)
    return key, cert


def make_channel_pki(folder):
    """A trusted CA with a server cert for every service host, and an untrusted one."""
    pki = Pki()
    ca_key, pki.ca = _ca(folder, "channel-test-ca")
    pki.key, pki.cert = _leaf(folder, "server", ca_key, pki.ca)
    other_key, pki.other_ca = _ca(folder, "untrusted-ca")
    pki.untrusted_key, pki.untrusted_cert = _leaf(folder, "untrusted", other_key, pki.other_ca)
    return pki


def refused_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


class Recorded(object):
    """One request as the server saw it."""

    def __init__(self, method, path, headers, body, when):
        self.method, self.path, self.headers, self.body, self.when = method, path, headers, body, when
        self.answered = None  # the status the server answered with (None: no answer)

    @property
    def json(self):
        return json.loads(self.body.decode("utf-8"))

    @property
    def form(self):
        return dict((k, v[0]) for k, v in parse_qs(self.body.decode("utf-8")).items())

    def header(self, name):
        return self.headers.get(name.lower())


class _Server(ThreadingMixIn, HTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def handle_error(self, request, client_address):
        pass  # a client that gave up (deadline) and closed: nothing to report


class RecordingServer(object):
    """Answers each request with the next step of `script` (the last step repeats):
    ("ok",) 200 | ("status", code, headers_dict, body_bytes) | ("mute",) | ("slow", s)
    then 200 | ("close",) drop the connection | ("json", code, obj) for JSON answers."""

    def __init__(self, tls=None, script=(("ok",),), routes=None):
        self.requests, self.lock = [], threading.Lock()
        self.script, self.step, self.routes = list(script), 0, routes or {}
        self.muted, self.closing = [], threading.Event()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def _any(self):
                owner._handle(self)

            do_GET = do_POST = do_PUT = _any

        self.httpd = _Server(("127.0.0.1", 0), Handler)
        if tls is not None:
            ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
            ctx.load_cert_chain(*tls)
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def _next_step(self):
        with self.lock:
            step = self.script[min(self.step, len(self.script) - 1)]
            self.step += 1
            return step

    def _handle(self, h):
        length = int(h.headers.get("Content-Length") or 0)
        body = h.rfile.read(length) if length else b""
        rec = Recorded(h.command, h.path, dict((k.lower(), v) for k, v in h.headers.items()),
                       body, time.time())
        with self.lock:
            self.requests.append(rec)
        route = self.routes.get((h.command, h.path.split("?")[0]))
        step = route(rec) if route else self._next_step()
        kind = step[0]
        if kind == "mute":
            self.muted.append(h.connection)
            self.closing.wait(120)
            return
        if kind == "close":
            h.close_connection = True
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        if kind == "slow":
            time.sleep(step[1])
            step = ("ok",)
        if step[0] == "ok":
            code, headers, body = 200, {"Content-Type": "text/plain"}, b"ok"
        elif step[0] == "json":
            code, headers, body = step[1], {"Content-Type": "application/json"}, json.dumps(step[2]).encode()
        else:
            code, headers, body = step[1], step[2] if len(step) > 2 else {}, step[3] if len(step) > 3 else b""
        self._answer(h, code, headers, body)
        rec.answered = code  # only once the answer is written: a client that left never saw it

    @staticmethod
    def _answer(h, code, headers, body):
        h.send_response(code)
        for name, value in headers.items():
            h.send_header(name, value)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def wait_for(self, n=1, timeout=10.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            with self.lock:
                if len(self.requests) >= n:
                    return list(self.requests)
            time.sleep(0.02)
        raise AssertionError("expected %d request(s), got %d" % (n, len(self.requests)))

    def close(self):
        self.closing.set()
        self.httpd.shutdown()
        self.httpd.server_close()


class ForwardProxy(object):
    """HTTP proxy: CONNECT host:port and absolute-URI requests all go to 127.0.0.1:target.
    Records (method, host:port) of each request in .seen."""

    def __init__(self, target_port):
        self.target, self.seen = target_port, []
        self.sock = socket.socket()
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(32)
        self.port = self.sock.getsockname()[1]
        self.url = "http://127.0.0.1:%d" % self.port
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        try:
            head = b""
            while b"\r\n\r\n" not in head and len(head) < 65536:
                chunk = conn.recv(4096)
                if not chunk:
                    return
                head += chunk
            line = head.split(b"\r\n", 1)[0].decode("latin-1")
            method, target = line.split(" ")[:2]
            upstream = socket.create_connection(("127.0.0.1", self.target), timeout=30)
            if method == "CONNECT":
                self.seen.append((method, target))
                conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
                rest = head.split(b"\r\n\r\n", 1)[1]
            else:
                parts = urlsplit(target)
                self.seen.append((method, parts.netloc))
                path = (parts.path or "/") + ("?" + parts.query if parts.query else "")
                rest = head.replace(target.encode("latin-1"), path.encode("latin-1"), 1)
            if rest:
                upstream.sendall(rest)
            self._pipe(conn, upstream)
        except (OSError, ValueError):
            pass
        finally:
            conn.close()

    @staticmethod
    def _pipe(a, b):
        socks = [a, b]
        while True:
            ready, _, _ = select.select(socks, [], [], 30)
            if not ready:
                return
            for s in ready:
                data = s.recv(65536)
                if not data:
                    b.close()
                    return
                (b if s is a else a).sendall(data)

    def close(self):
        self.sock.close()


# ---- what each service documents ----

def _json_of(rec, problems):
    if "application/json" not in (rec.header("content-type") or ""):
        problems.append("Content-Type is %r, not JSON" % rec.header("content-type"))
    try:
        return rec.json
    except ValueError:
        problems.append("body is not JSON")
        return {}


def _check_slack(rec, p):
    body = _json_of(rec, p)
    if not rec.path.startswith("/services/"):
        p.append("path %s" % rec.path)
    if not isinstance(body.get("text"), str) or not body["text"]:
        p.append("no fallback text")
    for block in body.get("blocks", []):
        text = block.get("text", {})
        if block["type"] == "header" and (text.get("type") != "plain_text" or len(text["text"]) > 150):
            p.append("header block must be plain_text <= 150")
        if block["type"] == "section" and len(text.get("text", "")) > 3000:
            p.append("section text over 3000 characters")
    if len(body.get("blocks", [])) > 50:
        p.append("more than 50 blocks")


def _check_discord(rec, p):
    body = _json_of(rec, p)
    if not rec.path.startswith("/api/webhooks/"):
        p.append("path %s" % rec.path)
    if len(body.get("content") or "") > 2000:
        p.append("content over 2000 characters")
    embeds = body.get("embeds") or []
    if not (body.get("content") or embeds) or len(embeds) > 10:
        p.append("needs content or 1-10 embeds")
    total = 0
    for e in embeds:
        if len(e.get("title", "")) > 256 or len(e.get("description", "")) > 4096:
            p.append("embed title/description too long")
        if len(e.get("fields", [])) > 25:
            p.append("more than 25 fields")
        for f in e.get("fields", []):
            if len(f["name"]) > 256 or len(f["value"]) > 1024 or not f["value"]:
                p.append("field name/value length")
        total += len(e.get("title", "")) + len(e.get("description", "")) + sum(
            len(f["name"]) + len(f["value"]) for f in e.get("fields", []))
    if total > 6000:
        p.append("embeds over 6000 characters in all")
    if body.get("allowed_mentions", {}).get("parse") != []:
        p.append("mentions from log text could ping people")


def _check_teams(rec, p):
    body = _json_of(rec, p)
    atts = body.get("attachments") or []
    if body.get("type") != "message" or len(atts) != 1:
        p.append("want type=message with one attachment")
        return
    if atts[0].get("contentType") != "application/vnd.microsoft.card.adaptive":
        p.append("attachment is not an Adaptive Card")
    card = atts[0].get("content") or {}
    if card.get("type") != "AdaptiveCard" or not card.get("version") or not card.get("body"):
        p.append("card needs type AdaptiveCard, version and body")
    if len(rec.body) > 28000:
        p.append("over 28 KB")


def _check_text_json(limit):
    def check(rec, p):
        body = _json_of(rec, p)
        if not isinstance(body.get("text"), str) or not body["text"] or len(body["text"]) > limit:
            p.append("text missing or over %d characters" % limit)
    return check


def _check_ntfy(rec, p):
    if rec.method not in ("POST", "PUT"):
        p.append("method %s" % rec.method)
    if len(rec.body) > 4096:
        p.append("body over 4096 bytes")
    if rec.header("priority") not in ("1", "2", "3", "4", "5"):
        p.append("Priority %r" % rec.header("priority"))
    if not rec.header("title"):
        p.append("no Title")
    try:
        rec.header("title").encode("ascii")
    except (UnicodeEncodeError, AttributeError):
        p.append("Title not ASCII/RFC 2047")


def _check_gotify(rec, p):
    body = _json_of(rec, p)
    if not rec.path.endswith("/message") or not rec.header("x-gotify-key"):
        p.append("want POST .../message with X-Gotify-Key")
    if not body.get("message") or not isinstance(body.get("priority"), int):
        p.append("message and integer priority required")


def _check_pushover(rec, p):
    form = rec.form
    if rec.path != "/1/messages.json":
        p.append("path %s" % rec.path)
    for name in ("token", "user", "message"):
        if not form.get(name):
            p.append("no %s" % name)
    if len(form.get("message", "")) > 1024 or len(form.get("title", "")) > 250:
        p.append("message over 1024 or title over 250 characters")


def _check_telegram(rec, p):
    body = _json_of(rec, p)
    if not rec.path.startswith("/bot") or not rec.path.endswith("/sendMessage"):
        p.append("path %s" % rec.path)
    if not body.get("chat_id") or not body.get("text") or len(body["text"]) > 4096:
        p.append("chat_id and text (1-4096) required")
    if body.get("parse_mode") not in (None, "HTML", "MarkdownV2", "Markdown"):
        p.append("parse_mode %r" % body.get("parse_mode"))


def _check_json(rec, p):
    body = _json_of(rec, p)
    for name in ("status", "title", "exit_status"):
        if name not in body:
            p.append("run record without %s" % name)


SERVICE_CHECKS = {
    "slack": _check_slack, "discord": _check_discord, "teams": _check_teams,
    "googlechat": _check_text_json(4096), "mattermost": _check_text_json(16383),
    "rocketchat": _check_text_json(5000), "ntfy": _check_ntfy, "gotify": _check_gotify,
    "pushover": _check_pushover, "telegram": _check_telegram, "json": _check_json,
}


def check_request(service, rec):
    """Problems with a request against the service's documented shape ([] when fine)."""
    problems = []
    if rec.method != "POST" and service != "ntfy":
        problems.append("method %s, want POST" % rec.method)
    SERVICE_CHECKS[service](rec, problems)
    return problems

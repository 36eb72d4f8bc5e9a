"""A real Matrix homeserver (Synapse, SQLite) on loopback for the matrix:// channel tests.

.ci/channels-setup.sh installs matrix-synapse into a test-only venv (GPUALERT_TEST_VENV,
default /opt/gpualert-test-venv). start_synapse(folder) writes a minimal config (one client
listener on 127.0.0.1, no federation, rate limits off), starts the server, registers a user
through the shared-secret admin API, creates a room with an alias, and returns a Synapse
object; unavailable(reason) says why when it cannot (the tests skip with that reason).
"""
import hashlib
import hmac
import json
import os
import secrets
import socket
import subprocess
import time
import urllib.parse
import urllib.request

VENV = os.environ.get("GPUALERT_TEST_VENV", "/opt/gpualert-test-venv")
PYTHON = os.path.join(VENV, "bin", "python")
START_TIMEOUT_S = 60.0


class SynapseUnavailable(Exception):
    pass


def _free_port():
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()
    return port


def _config(folder, port, secret):
    big = {"per_second": 10000, "burst_count": 10000}
    return {
        "server_name": "localhost", "pid_file": os.path.join(folder, "hs.pid"),
        "listeners": [{"port": port, "bind_addresses": ["127.0.0.1"], "type": "http",
                       "tls": False, "x_forwarded": False,
                       "resources": [{"names": ["client"], "compress": False}]}],
        "database": {"name": "sqlite3", "args": {"database": os.path.join(folder, "hs.db")}},
        "log_config": os.path.join(folder, "log.yaml"),
        "media_store_path": os.path.join(folder, "media"),
        "signing_key_path": os.path.join(folder, "signing.key"),
        "registration_shared_secret": secret, "report_stats": False,
        "macaroon_secret_key": secrets.token_hex(16), "form_secret": secrets.token_hex(16),
        "trusted_key_servers": [], "suppress_key_server_warning": True,
        "federation_domain_whitelist": [], "enable_metrics": False,
        "rc_message": big, "rc_registration": big, "rc_joins": {"local": big, "remote": big},
        "rc_login": {"address": big, "account": big, "failed_attempts": big},
    }


def _log_config(folder):
    return {"version": 1, "disable_existing_loggers": False,
            "formatters": {"p": {"format": "%(asctime)s %(name)s %(levelname)s %(message)s"}},
            "handlers": {"file": {"class": "logging.FileHandler", "formatter": "p",
                                  "filename": os.path.join(folder, "homeserver.log")}},
            "root": {"level": "WARNING", "handlers": ["file"]}}


class Synapse(object):
    def __init__(self, folder):
        if not os.path.exists(PYTHON):
            raise SynapseUnavailable("no test venv at %s (run .ci/channels-setup.sh)" % VENV)
        try:  # its interpreter may sit where this user cannot go (a venv made from /root's pyenv)
            check = subprocess.run([PYTHON, "-c", "import synapse.app.homeserver"],
                                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        except OSError as exc:
            raise SynapseUnavailable("the test venv's python does not run for this user: %s" % exc)
        if check.returncode != 0:
            raise SynapseUnavailable("matrix-synapse is not installed in %s" % VENV)
        self.folder, self.port, self.secret = folder, _free_port(), secrets.token_hex(16)
        self.base = "http://127.0.0.1:%d" % self.port
        cfg = os.path.join(folder, "homeserver.yaml")
        with open(cfg, "w") as handle:  # JSON is YAML
            json.dump(_config(folder, self.port, self.secret), handle)
        with open(os.path.join(folder, "log.yaml"), "w") as handle:
            json.dump(_log_config(folder), handle)
        subprocess.run([PYTHON, "-m", "synapse.app.homeserver", "-c", cfg, "--generate-keys"],
                       check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        self.out = open(os.path.join(folder, "stdout.log"), "wb")
        self.proc = subprocess.Popen([PYTHON, "-m", "synapse.app.homeserver", "-c", cfg],
                                     stdout=self.out, stderr=subprocess.STDOUT)
        self._wait_up()
        self.user_id, self.token = self.register("gpualert-bot")
        self.alias = "#alerts:localhost"
        self.room_id = self.call("POST", "/_matrix/client/v3/createRoom",
                                 {"room_alias_name": "alerts", "preset": "private_chat"})["room_id"]

    def _wait_up(self):
        deadline = time.time() + START_TIMEOUT_S
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise SynapseUnavailable("synapse exited with %s (see %s)" % (
                    self.proc.returncode, self.folder))
            try:
                urllib.request.urlopen(self.base + "/_matrix/client/versions", timeout=2).read()
                return
            except OSError:
                time.sleep(0.2)
        self.stop()
        raise SynapseUnavailable("synapse did not answer within %.0fs" % START_TIMEOUT_S)

    def call(self, method, path, body=None, token=None):
        data = json.dumps(body).encode() if body is not None else None
        req = urllib.request.Request(self.base + path, data=data, method=method)
        req.add_header("Content-Type", "application/json")
        req.add_header("Authorization", "Bearer " + (token or getattr(self, "token", "")))
        with urllib.request.urlopen(req, timeout=20) as resp:
            return json.loads(resp.read().decode())

    def register(self, name, password="not-a-real-password-1"):
        """A user through the shared-secret admin API -> (user_id, access_token)."""
        nonce = self.call("GET", "/_synapse/admin/v1/register")["nonce"]
        mac = hmac.new(self.secret.encode(), b"\x00".join(
            [nonce.encode(), name.encode(), password.encode(), b"notadmin"]), hashlib.sha1)
        reg = self.call("POST", "/_synapse/admin/v1/register", {
            "nonce": nonce, "username": name, "password": password, "admin": False,
            "mac": mac.hexdigest()})
        return reg["user_id"], reg["access_token"]

    def messages(self, room_id=None, token=None):
        """The room's m.room.message events, oldest first."""
        path = "/_matrix/client/v3/rooms/%s/messages?dir=b&limit=100" % urllib.parse.quote(
            room_id or self.room_id, safe="")
        events = self.call("GET", path, token=token)["chunk"]
        return [e for e in reversed(events) if e.get("type") == "m.room.message"]

    def stop(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.out.close()

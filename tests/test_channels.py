"""Chat and push channels (--notify-url): URL forms, masking, each service's documented
request, and delivery against real local HTTP(S) servers, a real proxy, a real Matrix
homeserver (Synapse) and the real apprise CLI. See channel_servers.py and matrix_server.py."""
import json
import os
import shutil
import subprocess
import sys
import time
from urllib.parse import parse_qsl

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _load import SCRIPT, load_gpualert  # noqa: E402
from channel_servers import (ForwardProxy, Recorded, RecordingServer, check_request,  # noqa: E402
                             make_channel_pki, refused_port)
import matrix_server  # noqa: E402
from wrapper_helpers import write_executable  # noqa: E402

gpualert = load_gpualert()

SECRETS = ("SLACKSECRET99", "DISCORDSECRET99", "TEAMSSIG99", "GCHATKEY99", "GCHATTOKEN99",
           "MMKEY99", "RCTOKEN99", "NTFYTOPIC99", "GOTIFYTOKEN99", "POUSER99", "POTOKEN99",
           "123:TGSECRET99", "JSONPASS99")
SERVICE_URLS = {
    "slack": "https://hooks.slack.com/services/T0001/B0001/SLACKSECRET99",
    "discord": "https://discord.com/api/webhooks/1234/DISCORDSECRET99",
    "teams": "https://prod-00.westus.logic.azure.com/workflows/abc/triggers/manual/paths/invoke"
             "?api-version=2016-06-01&sp=%2Ftriggers%2Fmanual%2Frun&sv=1.0&sig=TEAMSSIG99",
    "googlechat": "https://chat.googleapis.com/v1/spaces/AAA/messages?key=GCHATKEY99&token=GCHATTOKEN99",
    "mattermost": "https://mattermost.test/hooks/MMKEY99",
    "rocketchat": "https://rocket.test/hooks/RCID1/RCTOKEN99",
    "ntfy": "ntfys://ntfy.sh/NTFYTOPIC99",
    "gotify": "gotifys://gotify.test/GOTIFYTOKEN99",
    "pushover": "pover://POUSER99@POTOKEN99",
    "telegram": "tgram://123:TGSECRET99/4242",
    "json": "jsons://ci:JSONPASS99@hook.test/hook",
}
HOSTS = {"pushover": "api.pushover.net", "telegram": "api.telegram.org"}


def _host_of(service):
    if service in HOSTS:
        return HOSTS[service]
    return SERVICE_URLS[service].split("://")[1].split("/")[0].split("@")[-1]


def make_result(status="FAILED", evidence="torch.OutOfMemoryError: CUDA out of memory.",
                name="train", tail=None):
    now = time.time()
    cls = None if status == "SUCCESS" else "cuda_oom"
    return gpualert.RunResult(
        status=status, name=name, argv=["python", "train.py"], host="node1", cwd="/tmp",
        start=now - 3700, end=now, exit_code=0 if cls is None else 1,
        exit_status=0 if cls is None else 1, signal_name=None,
        classification=gpualert.Classification(cls, cls, "CUDA out of memory" if cls else None,
                                               120 if cls else None, evidence if cls else None,
                                               "Reduce the batch size." if cls else None),
        log_path="/scratch/runs/train/output.log", run_dir="/scratch/runs/train",
        tail=tail if tail is not None else ["epoch 3 step 450/5000 loss 1.25", "Traceback ..."],
        rusage={}, scheduler={"job_id": "4242", "label": "4242"}, notes=[], gpu={})


def _as_recorded(request):
    from urllib.parse import urlsplit
    parts = urlsplit(request.url)
    path = parts.path + ("?" + parts.query if parts.query else "")
    return Recorded(request.method, path, dict((k.lower(), v) for k, v in request.headers.items()),
                    request.body or b"", time.time())


# ---- fixtures: real servers ----

@pytest.fixture(scope="session")
def channel_pki(tmp_path_factory):
    if not shutil.which("openssl"):
        pytest.skip("openssl is not installed (needed for the test certificates)")
    return make_channel_pki(str(tmp_path_factory.mktemp("channel-pki")))


@pytest.fixture
def servers(channel_pki, monkeypatch):
    """make(script=..., tls=True|False|'untrusted') -> RecordingServer; trusts the test CA,
    clears any proxy settings of the machine; everything is closed afterwards."""
    made = []
    monkeypatch.setenv("SSL_CERT_FILE", channel_pki.ca)
    for name in ("HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy", "NO_PROXY", "no_proxy",
                 "ALL_PROXY", "all_proxy"):
        monkeypatch.delenv(name, raising=False)

    def make(script=(("ok",),), tls=True, routes=None):
        pair = None
        if tls == "untrusted":
            pair = (channel_pki.untrusted_cert, channel_pki.untrusted_key)
        elif tls:
            pair = (channel_pki.cert, channel_pki.key)
        server = RecordingServer(tls=pair, script=script, routes=routes)
        made.append(server)
        return server

    yield make
    for server in made:
        server.close()


@pytest.fixture
def proxied(servers, monkeypatch):
    """A TLS RecordingServer behind a real forward proxy named by HTTPS_PROXY: real service
    URLs (https://hooks.slack.com/...) reach it, certificates verified against the test CA."""
    proxies = []

    def make(script=(("ok",),), tls=True):
        server = servers(script, tls)
        proxy = ForwardProxy(server.port)
        proxies.append(proxy)
        monkeypatch.setenv("HTTPS_PROXY", proxy.url)
        monkeypatch.setenv("HTTP_PROXY", proxy.url)
        server.proxy = proxy
        return server

    yield make
    for proxy in proxies:
        proxy.close()


@pytest.fixture(scope="session")
def synapse(tmp_path_factory):
    try:
        server = matrix_server.Synapse(str(tmp_path_factory.mktemp("synapse")))
    except matrix_server.SynapseUnavailable as exc:
        pytest.skip("no Matrix homeserver: %s" % exc)
    yield server
    server.stop()


# ---- URL forms and masking (pure) ----

@pytest.mark.parametrize("service,url", sorted(SERVICE_URLS.items()))
def test_each_url_form_is_recognised_and_masked(service, url):
    channel = gpualert.parse_channel(url)
    assert channel.service == service
    for secret in SECRETS:
        assert secret not in channel.masked
    assert "***" in channel.masked


def test_matrix_and_apprise_forms():
    c = gpualert.parse_channel("matrixs://bot:syt_SECRET99@matrix.example.org/#alerts:example.org")
    assert (c.service, c.parts["room"], c.parts["base"]) == (
        "matrix", "#alerts:example.org", "https://matrix.example.org")
    assert "syt_SECRET99" not in c.masked
    c = gpualert.parse_channel("matrix://syt_SECRET99@127.0.0.1:8008/!abc:localhost")
    assert (c.parts["room"], c.parts["base"], c.parts["token"]) == (
        "!abc:localhost", "http://127.0.0.1:8008", "syt_SECRET99")
    c = gpualert.parse_channel("pbul://o.SECRETTOKEN99")
    assert c.service == "apprise" and c.masked == "pbul://***"


def test_when_parameter_is_removed_before_sending_and_checked():
    c = gpualert.parse_channel("https://hooks.slack.com/services/T/B/SECRET99?gpualert_when=always")
    assert c.when == "always" and "gpualert_when" not in c.url
    assert c.url == "https://hooks.slack.com/services/T/B/SECRET99"
    with pytest.raises(gpualert.ConfigError) as err:
        gpualert.parse_channel("https://hooks.slack.com/services/T/B/SECRET99?gpualert_when=often")
    assert "SECRET99" not in str(err.value)
    assert gpualert.channel_wants(c, "SUCCESS", "failure")
    assert not gpualert.channel_wants(gpualert.parse_channel(SERVICE_URLS["slack"]), "SUCCESS", "failure")


@pytest.mark.parametrize("url", [
    "hooks.slack.com/services/T/B/SECRET99", "https://example.org/SECRET99/hook",
    "ntfy://host/a/SECRET99", "tgram://123:SECRET99", "matrix://host/#room",
    "gotify://host.example", "pover://SECRET99", "https://exa mple.org/x", "https://host:port/x"])
def test_unusable_urls_are_one_clear_masked_error(url):
    with pytest.raises(gpualert.ConfigError) as err:
        gpualert.parse_channel(url)
    assert "SECRET99" not in str(err.value)
    assert "\n" not in str(err.value)


# ---- payloads (pure): each service's documented shape and limits ----

@pytest.mark.parametrize("service", sorted(SERVICE_URLS))
@pytest.mark.parametrize("size", ["normal", "huge"])
def test_payload_matches_the_service_schema(service, size):
    if size == "huge":  # every field at its worst: a long name, evidence and progress line
        result = make_result(evidence="E" * 20000 + " <!channel> @everyone ```", name="n" * 5000,
                             tail=["step 1/2 " + "p" * 5000])
    else:
        result = make_result()
    summary = gpualert.brief_for(result)
    channel = gpualert.parse_channel(SERVICE_URLS[service])
    request = gpualert.build_channel_request(channel, summary, gpualert.result_record(result))
    assert check_request(service, _as_recorded(request)) == []


def test_summary_carries_what_the_owner_needs():
    summary = gpualert.brief_for(make_result())
    fields = dict(summary.fields)
    assert summary.severity == "failure"
    assert "cuda_oom" in fields["What"] and "job 4242" in summary.title  # the e-mail's rows
    assert "CUDA out of memory" in fields["Line"]
    assert fields["Progress"] == "epoch 3 step 450/5000 loss 1.25"
    assert fields["Log"] == "/scratch/runs/train/output.log"
    assert "1h01m" in summary.title and "on node1" in summary.title
    assert gpualert.brief_for(make_result("SUCCESS")).severity == "ok"


def test_priority_follows_status():
    fail = gpualert.brief_for(make_result())
    ok = gpualert.brief_for(make_result("SUCCESS"))
    ntfy = gpualert.parse_channel(SERVICE_URLS["ntfy"])
    assert gpualert.build_ntfy(ntfy, fail).headers["Priority"] == "4"
    assert gpualert.build_ntfy(ntfy, ok).headers["Priority"] == "2"
    disc = gpualert.parse_channel(SERVICE_URLS["discord"])
    colours = [json.loads(gpualert.build_discord(disc, s).body)["embeds"][0]["color"] for s in (fail, ok)]
    assert colours[0] != colours[1]


def test_retry_after_seconds_and_http_date():
    assert gpualert.retry_after_s({"Retry-After": "3"}) == 3.0
    from email.utils import formatdate
    later = gpualert.retry_after_s({"Retry-After": formatdate(time.time() + 30, usegmt=True)})
    assert 25 <= later <= 31
    assert gpualert.retry_after_s({}) is None
    assert gpualert.retry_after_s({"Retry-After": "soon"}) is None


# ---- delivery against real servers ----

def test_every_service_through_a_real_proxy_with_verified_tls(proxied):
    server = proxied()
    result = make_result()
    channels = [gpualert.parse_channel(u) for u in SERVICE_URLS.values()]
    out = gpualert.deliver_channels(channels, gpualert.brief_for(result),
                                    time.monotonic() + 20, record=gpualert.result_record(result))
    assert [r.ok for _, r in out] == [True] * len(channels), [r.detail for _, r in out]
    requests = server.wait_for(len(channels))
    by_host = dict((r.header("host"), r) for r in requests)
    for service in SERVICE_URLS:
        rec = by_host[_host_of(service)]
        assert check_request(service, rec) == [], service
    assert sorted(h for _, h in server.proxy.seen) == sorted(
        "%s:443" % _host_of(s) for s in SERVICE_URLS)
    for _, res in out:
        for secret in SECRETS:
            assert secret not in res.detail


def _post(url, deadline_s=3.0, summary=None):
    channel = gpualert.parse_channel(url)
    start = time.monotonic()
    res = gpualert.post_channel(channel, summary or gpualert.brief_for(make_result()),
                                start + deadline_s)
    return res, time.monotonic() - start


def test_refused_is_a_retryable_failure_at_once(servers):
    res, took = _post("json://127.0.0.1:%d/hook" % refused_port())
    assert not res.ok and not res.permanent and "refused" in res.detail
    assert took < 2.0


def test_mute_server_is_bounded_by_the_deadline(servers):
    server = servers([("mute",)], tls=False)
    res, took = _post("json://127.0.0.1:%d/hook" % server.port, deadline_s=1.5)
    assert not res.ok and not res.permanent and "timed out" in res.detail
    assert 1.0 <= took < 3.0


def test_slow_server_within_the_deadline_is_delivered(servers):
    server = servers([("slow", 1.0)], tls=False)
    res, took = _post("json://127.0.0.1:%d/hook" % server.port, deadline_s=5)
    assert res.ok and took >= 1.0


def test_429_waits_as_asked_then_delivers(servers):
    server = servers([("status", 429, {"Retry-After": "1"}, b"slow down"), ("ok",)])
    res, took = _post("jsons://127.0.0.1:%d/hook" % server.port, deadline_s=6)
    assert res.ok, res.detail
    reqs = server.wait_for(2)
    assert reqs[1].when - reqs[0].when >= 0.9


def test_429_whose_wait_does_not_fit_is_retryable_not_waited_for(servers):
    server = servers([("status", 429, {"Retry-After": "3600"}, b"")])
    res, took = _post("jsons://127.0.0.1:%d/hook" % server.port, deadline_s=5)
    assert not res.ok and not res.permanent and "Retry-After" in res.detail
    assert took < 2.0


@pytest.mark.parametrize("code,permanent", [(500, False), (503, False), (408, False),
                                             (404, True), (400, True), (401, True), (403, True)])
def test_status_codes(servers, code, permanent):
    server = servers([("status", code, {}, b"no such webhook")])
    res, _ = _post("jsons://127.0.0.1:%d/hook" % server.port)
    assert not res.ok and res.permanent is permanent
    assert "HTTP %d" % code in res.detail


def test_redirect_is_not_followed(servers):
    server = servers([("status", 301, {"Location": "https://127.0.0.1:1/elsewhere"}, b"")])
    res, _ = _post("jsons://127.0.0.1:%d/hook" % server.port)
    assert not res.ok and res.permanent and "HTTP 301" in res.detail
    assert len(server.requests) == 1


def test_untrusted_certificate_is_refused(servers):
    server = servers(tls="untrusted")
    res, _ = _post("jsons://127.0.0.1:%d/hook" % server.port)
    assert not res.ok and not res.permanent and "TLS" in res.detail
    assert server.requests == []


def test_proxy_required_and_no_proxy(proxied, monkeypatch):
    url = "jsons://proxy-only.invalid/hook"  # .invalid never resolves: only the proxy knows it
    res, _ = _post(url)
    assert not res.ok and not res.permanent and "resolve" in res.detail
    server = proxied()
    res, _ = _post(url)
    assert res.ok, res.detail
    assert server.proxy.seen == [("CONNECT", "proxy-only.invalid:443")]
    direct = proxied()
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    res, _ = _post("jsons://127.0.0.1:%d/hook" % direct.port)
    assert res.ok and direct.proxy.seen == []


def test_many_channels_run_in_parallel_within_one_deadline(servers):
    mute = [servers([("mute",)], tls=False) for _ in range(4)]
    good = servers(tls=False)
    channels = [gpualert.parse_channel("json://127.0.0.1:%d/m" % s.port) for s in mute]
    channels.append(gpualert.parse_channel("json://127.0.0.1:%d/ok" % good.port))
    start = time.monotonic()
    out = gpualert.deliver_channels(channels, gpualert.brief_for(make_result()), start + 2.0)
    took = time.monotonic() - start
    assert took < 3.5  # one deadline for all, not one each
    assert [r.ok for _, r in out] == [False] * 4 + [True]


# ---- a real Matrix homeserver ----

def test_matrix_room_alias_on_a_real_synapse(synapse):
    before = len(synapse.messages())
    url = "matrix://gpualert-bot:%s@127.0.0.1:%d/#alerts" % (synapse.token, synapse.port)
    res, _ = _post(url, deadline_s=20)
    assert res.ok, res.detail
    assert synapse.token not in res.detail
    events = synapse.messages()
    assert len(events) == before + 1
    content = events[-1]["content"]
    assert content["msgtype"] == "m.text" and "cuda_oom" in content["body"]
    assert content["format"] == "org.matrix.custom.html"


def test_matrix_joins_a_public_room_and_reports_a_missing_alias(synapse):
    room = synapse.call("POST", "/_matrix/client/v3/createRoom",
                        {"room_alias_name": "public-%d" % os.getpid(), "preset": "public_chat"})
    _, token = synapse.register("joiner%d" % os.getpid())
    alias = "#public-%d:localhost" % os.getpid()
    res, _ = _post("matrix://%s@127.0.0.1:%d/%s" % (token, synapse.port, alias), deadline_s=20)
    assert res.ok, res.detail
    assert len(synapse.messages(room["room_id"])) == 1
    res, _ = _post("matrix://%s@127.0.0.1:%d/#nope:localhost" % (token, synapse.port), deadline_s=20)
    assert not res.ok and res.permanent and "M_NOT_FOUND" in res.detail


# ---- the apprise bridge ----

@pytest.fixture
def apprise_on_path(tmp_path, monkeypatch):
    real = os.path.join(matrix_server.VENV, "bin", "apprise")
    if not os.access(real, os.X_OK):
        pytest.skip("the apprise CLI is not installed in %s (run .ci/channels-setup.sh)"
                    % matrix_server.VENV)
    try:  # installed is not enough: its interpreter may sit where this user cannot go (/root)
        probe = subprocess.run([real, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               universal_newlines=True, timeout=60)
    except OSError as exc:
        probe = subprocess.CompletedProcess([real], 126, str(exc))
    if probe.returncode != 0:
        pytest.skip("the apprise CLI in %s does not run for this user (.ci/channels-setup.sh makes it "
                    "from /usr/bin/python3): %s" % (matrix_server.VENV, probe.stdout.strip()[-200:]))
    folder = tmp_path / "bin"
    folder.mkdir()
    os.symlink(real, str(folder / "apprise"))
    monkeypatch.setenv("PATH", "%s:%s" % (folder, os.environ.get("PATH", "")))
    return str(folder)


def test_unknown_scheme_goes_through_the_real_apprise(servers, apprise_on_path):
    server = servers(tls=False)
    res, _ = _post("form://127.0.0.1:%d/bridge" % server.port, deadline_s=30)
    assert res.ok, res.detail
    rec = server.wait_for(1)[0]
    assert rec.path == "/bridge" and b"cuda_oom" in rec.body


def test_unknown_scheme_without_apprise_stays_for_a_resend_where_it_is(monkeypatch, tmp_path):
    # On a compute node without apprise the post was dead-lettered for good, though a login
    # node with apprise could deliver it.
    monkeypatch.setenv("PATH", str(tmp_path))
    res, _ = _post("pbul://SECRET99")
    assert not res.ok and not res.permanent and "apprise" in res.detail and "SECRET99" not in res.detail


def test_apprise_gets_the_title_and_body_on_its_stdin_not_its_argv(monkeypatch, tmp_path):
    # apprise's title and body (the job's evidence and progress) were on its argv, where
    # `ps` shows them to every local user.
    fake = tmp_path / "apprise"
    write_executable(fake, '#!/bin/sh\nprintf "%%s\\n" "$@" > "%s/argv"\ncat > "%s/stdin"\n' % (tmp_path, tmp_path))
    monkeypatch.setenv("PATH", "%s:/usr/bin:/bin" % tmp_path)
    res, _ = _post("pbul://SECRET99")
    assert res.ok, res.detail
    argv = (tmp_path / "argv").read_text()
    assert "CUDA out of memory" not in argv and "SECRET99" not in argv and "epoch 3" not in argv
    stdin = (tmp_path / "stdin").read_text()
    assert "CUDA out of memory" in stdin and "train" in stdin


# ---- end to end: the wrapper with --notify-url ----

def run_wrapper(tmp_path, args, child="raise SystemExit(3)", env=None, timeout=90):
    """Run gpualert.py as a user would; -> (CompletedProcess, seconds). No mail transport:
    the e-mail goes to the outbox, so only the channels are under test."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    full = dict(os.environ, HOME=str(home), XDG_STATE_HOME=str(home / "state"),
                XDG_CONFIG_HOME=str(home / "config"), PATH=os.environ.get("PATH", ""),
                GPUALERT_SENDMAIL="none", TMPDIR=str(tmp_path))
    full.update(env or {})
    args = list(args)
    sub = [args.pop(0)] if args and not args[0].startswith("-") else []
    argv = [sys.executable, str(SCRIPT)] + sub + ["--sendmail", "none"] + args
    if child is not None:
        argv += ["--", sys.executable, "-c", child]
    start = time.monotonic()
    proc = subprocess.run(argv, env=full, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          universal_newlines=True, timeout=timeout)
    return proc, time.monotonic() - start


def state_dir(tmp_path):
    return tmp_path / "home" / "state" / "gpualert"


def spooled(tmp_path, dead=False):
    """Channel records (spool items of kind json, claimed or not) in the outbox or dead/."""
    folder = state_dir(tmp_path) / "outbox"
    if dead:
        folder = folder / "dead"
    if not folder.exists():
        return []
    return sorted(p for p in folder.iterdir() if p.name.split("~claimed~")[0].endswith(".json")
                  and not p.name.startswith("."))


def every_file_text(folder):
    out = []
    for root, _, names in os.walk(str(folder)):
        for name in names:
            if ".json" not in name or "run.json" in name:  # the spool record must hold the URL
                with open(os.path.join(root, name), "rb") as handle:
                    out.append(handle.read().decode("utf-8", "replace"))
    return "\n".join(out)


def test_run_posts_to_channels_and_keeps_the_exit_status(proxied, tmp_path):
    server = proxied()
    urls = [SERVICE_URLS["slack"], SERVICE_URLS["discord"], SERVICE_URLS["telegram"]]
    args = sum((["--notify-url", u] for u in urls), [])
    proc, _ = run_wrapper(tmp_path, args, env={"GPUALERT_NOTIFY_URL": SERVICE_URLS["ntfy"]})
    assert proc.returncode == 3
    # flags replace the environment's list, as for every option
    assert sorted(r.header("host") for r in server.wait_for(3)) == sorted(
        _host_of(s) for s in ("slack", "discord", "telegram"))
    for rec in server.requests:
        service = {"hooks.slack.com": "slack", "discord.com": "discord",
                   "api.telegram.org": "telegram"}[rec.header("host")]
        assert check_request(service, rec) == []
    assert proc.stderr.count("channel sent:") == 3, proc.stderr
    written = proc.stdout + proc.stderr + every_file_text(state_dir(tmp_path))
    for secret in SECRETS:
        assert secret not in written
    assert spooled(tmp_path) == []


def test_the_job_never_sees_the_channel_urls(tmp_path, servers):
    server = servers(tls=False)
    url = "json://127.0.0.1:%d/hook" % server.port
    proc, _ = run_wrapper(tmp_path, [], env={"GPUALERT_NOTIFY_URL": url},
                          child="import os; print('seen:', os.environ.get('GPUALERT_NOTIFY_URL'))")
    assert proc.returncode == 0
    assert "seen: None" in proc.stdout
    assert len(server.wait_for(1)) == 1


def test_a_bad_notify_url_flag_is_a_usage_error_before_anything_runs(tmp_path):
    marker = tmp_path / "ran"
    proc, _ = run_wrapper(tmp_path, ["--notify-url", "https://example.org/SECRET99"],
                          child="open(%r, 'w').close()" % str(marker))
    assert proc.returncode == 2 and not marker.exists()
    assert "SECRET99" not in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_a_bad_url_in_the_environment_is_a_warning_and_the_rest_still_goes(tmp_path, servers):
    server = servers(tls=False)
    good = "json://127.0.0.1:%d/hook" % server.port
    proc, _ = run_wrapper(tmp_path, [], env={"GPUALERT_NOTIFY_URL": "https://x.example/SECRET99," + good})
    assert proc.returncode == 3
    assert "ignored" in proc.stderr and "SECRET99" not in proc.stderr
    assert len(server.wait_for(1)) == 1
    # the e-mail is not held back by it: its outbox reason is the missing transport
    eml = list((state_dir(tmp_path) / "outbox").glob("*.eml"))
    assert eml and b"configuration problem" not in eml[0].read_bytes()[:400]


def test_when_per_url_overrides_notify(tmp_path, servers):
    always, default = servers(tls=False), servers(tls=False)
    args = ["--notify", "failure",
            "--notify-url", "json://127.0.0.1:%d/a?gpualert_when=always" % always.port,
            "--notify-url", "json://127.0.0.1:%d/d" % default.port]
    proc, _ = run_wrapper(tmp_path, args, child="pass")
    assert proc.returncode == 0
    rec = always.wait_for(1)[0]
    assert rec.path == "/a" and rec.json["status"] == "SUCCESS"
    assert default.requests == []


# (fault, script, expected end) for one channel; the run's exit status must stay 3
FAULTS = [
    ("refused", None, "outbox"),
    ("mute", [("mute",)], "outbox"),
    ("slow", [("slow", 1.0)], "sent"),
    ("429", [("status", 429, {"Retry-After": "1"}, b""), ("ok",)], "sent"),
    ("500", [("status", 500, {}, b"oops")], "outbox"),
    ("404", [("status", 404, {}, b"Unknown Webhook")], "dead"),
    ("tls", "untrusted", "outbox"),
]


@pytest.mark.parametrize("fault,script,end", FAULTS, ids=[f[0] for f in FAULTS])
def test_faults_end_delivered_or_spooled_within_the_bound(servers, tmp_path, fault, script, end):
    if script is None:
        url = "jsons://127.0.0.1:%d/hook" % refused_port()
    elif script == "untrusted":
        url = "jsons://127.0.0.1:%d/hook" % servers(tls="untrusted").port
    else:
        url = "jsons://127.0.0.1:%d/hook" % servers(script).port
    timeout_s = 3.0
    proc, took = run_wrapper(tmp_path, ["--smtp-timeout", str(timeout_s), "--notify-url", url])
    assert proc.returncode == 3
    assert took < timeout_s + 10 + 5  # the post-exit bound (smtp_timeout + 10 s) plus start-up
    assert "channel %s:" % end in proc.stderr, proc.stderr
    assert len(spooled(tmp_path)) == (1 if end == "outbox" else 0)
    assert len(spooled(tmp_path, dead=True)) == (1 if end == "dead" else 0)


def test_proxy_required_end_to_end(proxied, tmp_path):
    url = "jsons://proxy-only.invalid/hook"
    proc, _ = run_wrapper(tmp_path, ["--notify-url", url])
    assert proc.returncode == 3 and "channel outbox:" in proc.stderr
    server = proxied()
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None,
                          env={"HTTPS_PROXY": server.proxy.url, "SSL_CERT_FILE": os.environ["SSL_CERT_FILE"]})
    assert "channels: 1 sent" in proc.stdout, proc.stdout + proc.stderr
    assert len(server.wait_for(1)) == 1 and spooled(tmp_path) == []


def test_resend_delivers_a_spooled_post_exactly_once(servers, tmp_path):
    server = servers([("status", 503, {}, b"down"), ("ok",)], tls=False)
    url = "json://127.0.0.1:%d/hook" % server.port
    proc, _ = run_wrapper(tmp_path, ["--notify-url", url])
    assert proc.returncode == 3 and len(spooled(tmp_path)) == 1
    record = json.loads(spooled(tmp_path)[0].read_text())
    assert record["url"] == url and "~claimed~" not in spooled(tmp_path)[0].name
    assert oct(spooled(tmp_path)[0].stat().st_mode & 0o777) == "0o600"
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert "channels: 1 sent" in proc.stdout
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert len(server.requests) == 2 and spooled(tmp_path) == []
    assert server.requests[0].body == server.requests[1].body


def test_a_run_whose_post_works_also_delivers_an_earlier_runs_post(servers, tmp_path):
    """A run's flush sent only earlier e-mail: a chat post that failed waited for `resend`."""
    server = servers([("status", 503, {}, b"down"), ("ok",), ("ok",)], tls=False)
    url = "json://127.0.0.1:%d/hook" % server.port
    first, _ = run_wrapper(tmp_path, ["--notify-url", url])
    assert first.returncode == 3 and len(spooled(tmp_path)) == 1
    second, _ = run_wrapper(tmp_path, ["--notify-url", url])
    assert second.returncode == 3 and "also delivered 1 earlier message" in second.stderr, second.stderr
    assert len(server.wait_for(3)) == 3 and spooled(tmp_path) == []
    assert server.requests[0].body == server.requests[2].body  # the first run's post, as it was


def test_a_runs_flush_leaves_posts_held_by_the_hourly_cap_to_resend(servers, tmp_path):
    server = servers(tls=False)
    url = "json://127.0.0.1:%d/h" % server.port
    cfg, _, _ = gpualert.load_config({"notify_url": [url], "outbox": str(state_dir(tmp_path) / "outbox"),
                                      "sendmail": "none"}, {})
    held = gpualert.channel_record(gpualert.parse_channel(url), gpualert.brief_for(make_result()))
    gpualert.spool_channel_record(dict(held, held="held: hourly cap"), cfg)
    gpualert.spool_channel_record(dict(held, held=None), cfg)
    counts = gpualert.resend(cfg, skip_held=True)["json"]
    assert counts["sent"] == 1 and len(server.requests) == 1 and len(spooled(tmp_path)) == 1
    assert gpualert.resend(cfg)["json"]["sent"] == 1 and spooled(tmp_path) == []


def test_resend_moves_a_refused_post_to_dead_letters(servers, tmp_path):
    server = servers([("status", 503, {}, b"down"), ("status", 410, {}, b"gone")], tls=False)
    run_wrapper(tmp_path, ["--notify-url", "json://127.0.0.1:%d/hook" % server.port])
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert "1 dead, 0 remaining" in proc.stdout
    assert spooled(tmp_path) == [] and len(spooled(tmp_path, dead=True)) == 1
    run_wrapper(tmp_path, ["resend"], child=None)
    assert len(server.requests) == 2


def _spool_posts(tmp_path, urls):
    """One spooled chat record per URL, as a run that could not post leaves them."""
    cfg, _, _ = gpualert.load_config({"outbox": str(state_dir(tmp_path) / "outbox"),
                                      "sendmail": "none"}, {})
    for url in urls:
        record = gpualert.channel_record(gpualert.parse_channel(url), gpualert.brief_for(make_result()))
        gpualert.spool_channel_record(record, cfg)


def test_resend_counts_chat_posts_against_the_hourly_cap_as_it_counts_mail(servers, tmp_path):
    """One retry policy: resend stopped e-mail at --max-per-hour, but posted every chat record."""
    server = servers(tls=False)
    _spool_records(tmp_path, "json://127.0.0.1:%d/h" % server.port, 3)  # three runs' messages
    proc, _ = run_wrapper(tmp_path, ["resend", "--max-per-hour", "2"], child=None)
    assert "channels: 2 sent, 0 failed, 0 dead, 1 remaining" in proc.stdout, proc.stdout + proc.stderr
    assert "stopped: more than 2 messages this hour" in proc.stderr
    assert len(server.requests) == 2 and len(spooled(tmp_path)) == 1


def test_a_chat_service_found_down_is_tried_once_per_resend_and_the_others_still_go(servers, tmp_path):
    """One rule for a transport that is down: mail stopped at a dead relay, but every record
    for an unreachable chat service waited its own connection attempt."""
    server = servers(tls=False)
    down = "json://127.0.0.1:%d/h" % refused_port()
    _spool_posts(tmp_path, [down, down, down, "json://127.0.0.1:%d/h" % server.port])
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert "channels: 1 sent, 1 failed, 0 dead, 3 remaining" in proc.stdout, proc.stdout + proc.stderr
    assert len(server.requests) == 1 and len(spooled(tmp_path)) == 3


def test_a_post_skipped_because_its_service_is_down_does_not_use_up_the_hourly_cap(servers, tmp_path):
    """Only a post tried counts against --max-per-hour: one left for a down service is not sent."""
    server = servers(tls=False)
    down = "json://127.0.0.1:%d/h" % refused_port()
    _spool_posts(tmp_path, [down, down, down, "json://127.0.0.1:%d/h" % server.port])
    proc, _ = run_wrapper(tmp_path, ["resend", "--max-per-hour", "2"], child=None)
    assert "channels: 1 sent, 1 failed, 0 dead, 3 remaining" in proc.stdout, proc.stdout + proc.stderr
    assert len(server.requests) == 1 and "more than 2 messages" not in proc.stderr


def test_resend_says_once_per_place_how_many_it_found_of_every_kind(tmp_path):
    """A place holding e-mail and chat posts is one 'found' line with the sum, not one per kind."""
    _spool_posts(tmp_path, ["json://127.0.0.1:%d/h" % refused_port()])
    gpualert.spool_in(str(state_dir(tmp_path) / "outbox"), b"To: bob@example.org\n\nbody\n", "eml")
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    found = [l for l in proc.stdout.splitlines() if "resend: found" in l]
    assert found == ["gpualert: resend: found 2 in %s" % (state_dir(tmp_path) / "outbox")], proc.stdout


def test_test_notify_reports_each_channel_and_spools_nothing(servers, tmp_path):
    good = servers(tls=False)
    args = ["test-notify", "json://127.0.0.1:%d/t" % good.port]
    proc, _ = run_wrapper(tmp_path, args, child=None)
    assert proc.returncode == 0 and "test-notify: sent: json" in proc.stdout
    assert good.wait_for(1)[0].json["status"] == "TEST"
    proc, _ = run_wrapper(tmp_path, ["test-notify", "ntfy://127.0.0.1:%d/SECRET99" % refused_port()],
                          child=None)
    assert proc.returncode == 1 and "FAILED" in proc.stdout and "SECRET99" not in proc.stdout
    assert spooled(tmp_path) == []
    proc, _ = run_wrapper(tmp_path, ["test-notify"], child=None,
                          env={"GPUALERT_NOTIFY_URL": "json://127.0.0.1:%d/env" % good.port})
    assert proc.returncode == 0 and good.wait_for(2)[1].path == "/env"
    proc, _ = run_wrapper(tmp_path, ["test-notify", "nonsense"], child=None)
    assert proc.returncode == 2


def test_config_lists_channels_masked(tmp_path):
    conf = tmp_path / "gpualert.ini"
    conf.write_text("[gpualert]\nnotify_url = %s, %s\n" % (SERVICE_URLS["slack"], SERVICE_URLS["pushover"]))
    proc, _ = run_wrapper(tmp_path, ["config", "--config", str(conf)], child=None,
                          env={"GPUALERT_CONFIG": str(conf)})
    line = [l for l in proc.stdout.splitlines() if l.startswith("notify_url")][0]
    assert "hooks.slack.com/services/***" in line and "pover://***@***" in line
    for secret in SECRETS:
        assert secret not in proc.stdout + proc.stderr


def test_stalled_notice_reaches_the_channel(servers, tmp_path):
    server = servers(tls=False)
    url = "json://127.0.0.1:%d/hook" % server.port
    proc, _ = run_wrapper(tmp_path, ["--notify", "failure", "--stall", "1s", "--notify-url", url],
                          child="import time; time.sleep(4)")
    assert proc.returncode == 0
    statuses = [r.json["status"] for r in server.wait_for(1)]
    assert statuses == ["STALLED"]


def test_matrix_end_to_end_on_a_real_synapse(synapse, tmp_path):
    before = len(synapse.messages())
    url = "matrix://gpualert-bot:%s@127.0.0.1:%d/#alerts:localhost" % (synapse.token, synapse.port)
    proc, _ = run_wrapper(tmp_path, ["--notify-url", url])
    assert proc.returncode == 3 and "channel sent: matrix" in proc.stderr, proc.stderr
    assert synapse.token not in proc.stderr + every_file_text(state_dir(tmp_path))
    events = synapse.messages()
    assert len(events) == before + 1 and "FAILED" in events[-1]["content"]["body"]


def test_apprise_bridge_end_to_end(servers, apprise_on_path, tmp_path):
    server = servers(tls=False)
    proc, _ = run_wrapper(tmp_path, ["--notify-url", "form://127.0.0.1:%d/bridge" % server.port],
                          env={"PATH": os.environ["PATH"]})
    assert proc.returncode == 3 and "channel sent: apprise" in proc.stderr, proc.stderr
    assert server.wait_for(1)[0].path == "/bridge"


def _spool_records(tmp_path, url, count):
    outbox = str(state_dir(tmp_path) / "outbox")
    channel = gpualert.parse_channel(url)
    for i in range(count):
        summary = gpualert.brief_for(make_result(name="rec%02d" % i))
        data = gpualert.channel_record(channel, summary,
                                       gpualert.result_record(make_result(name="rec%02d" % i)))
        gpualert.spool_in(outbox, json.dumps(data).encode(), "json")
    return outbox


def test_concurrent_resends_deliver_each_record_exactly_once(servers, tmp_path):
    server = servers([("slow", 0.05)], tls=False)
    _spool_records(tmp_path, "json://127.0.0.1:%d/hook" % server.port, 10)
    (tmp_path / "home").mkdir(exist_ok=True)
    env = dict(os.environ, HOME=str(tmp_path / "home"), XDG_STATE_HOME=str(tmp_path / "home" / "state"),
               XDG_CONFIG_HOME=str(tmp_path / "home" / "config"), TMPDIR=str(tmp_path))
    procs = [subprocess.Popen([sys.executable, str(SCRIPT), "resend", "--sendmail", "none"],
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(3)]
    for proc in procs:
        proc.communicate(timeout=120)
    if spooled(tmp_path):  # a resend that found the lock taken leaves the rest to the next one
        run_wrapper(tmp_path, ["resend"], child=None)
    names = sorted(r.json["name"] for r in server.requests)
    assert names == ["rec%02d" % i for i in range(10)]
    assert spooled(tmp_path) == []


def test_a_service_that_never_answers_is_tried_once_per_resend(servers, tmp_path):
    """A server that accepts and never answers was not "found down" (the thread outlived the
    deadline, so no answer carried no transport_down): each record waited the whole timeout,
    and on every cron resend the posts to working services behind them waited too."""
    mute, good = servers([("mute",)], tls=False), servers(tls=False)
    _spool_records(tmp_path, "json://127.0.0.1:%d/hook" % mute.port, 3)
    _spool_posts(tmp_path, ["json://127.0.0.1:%d/h" % good.port])
    proc, took = run_wrapper(tmp_path, ["resend", "--smtp-timeout", "2"], child=None)
    assert "channels: 1 sent, 1 failed, 0 dead, 3 remaining" in proc.stdout, proc.stdout + proc.stderr
    assert len(mute.requests) == 1 and len(good.requests) == 1 and took < 2 + 10
    assert all("~claimed~" not in p.name for p in spooled(tmp_path))


def test_a_service_that_keeps_answering_429_is_left_for_the_next_resend(servers, tmp_path):
    """429 with a short Retry-After was waited for and tried again until the deadline, about
    30 times a record, and then again for every record of the same service."""
    server = servers([("status", 429, {"Retry-After": "1"}, b"slow down")], tls=False)
    _spool_records(tmp_path, "json://127.0.0.1:%d/hook" % server.port, 3)
    proc, _ = run_wrapper(tmp_path, ["resend", "--smtp-timeout", "20"], child=None)
    assert "channels: 0 sent, 1 failed, 0 dead, 3 remaining" in proc.stdout, proc.stdout + proc.stderr
    assert 2 <= len(server.requests) <= 3 and "429" in proc.stderr


def test_a_record_nested_too_deeply_to_read_is_a_dead_letter(tmp_path):
    """json.loads raised RecursionError, which nothing caught: resend died (exit 125) on
    it at every pass, and the records behind it were never sent."""
    deep = b"[" * 200000 + b"]" * 200000
    gpualert.spool_in(str(state_dir(tmp_path) / "outbox"), b'{"kind": "gpualert-channel", '
                      b'"url": "json://127.0.0.1:1/h", "summary": {}, "record": ' + deep + b"}", "json")
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert proc.returncode == 0 and "1 dead, 0 remaining" in proc.stdout, proc.stdout + proc.stderr


def test_a_lease_index_nested_too_deeply_does_not_stop_the_outbox(servers, tmp_path):
    """A damaged or planted .leases~ index raised RecursionError out of every listing of
    the outbox: resend died (exit 125) and nothing waiting was ever sent again."""
    import re
    server = servers(tls=False)
    _spool_posts(tmp_path, ["json://127.0.0.1:%d/h" % server.port])
    boot = re.sub(r"\W", "", gpualert._boot_clock()[0])[:40]
    index = state_dir(tmp_path) / "outbox" / ("%s%s~%s" % (gpualert.LEASES_PREFIX, gpualert._hostname()[:64], boot))
    index.write_bytes(b"[" * 200000 + b"]" * 200000)
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert proc.returncode == 0 and "channels: 1 sent" in proc.stdout, proc.stdout + proc.stderr
    assert len(server.requests) == 1


def test_a_record_too_big_to_be_ours_is_a_dead_letter_read_no_further(tmp_path):
    """A 400 MB record was read whole, four times, at every run's flush: seconds and
    gigabytes at the end of every job while it waited."""
    path = gpualert.spool_in(str(state_dir(tmp_path) / "outbox"), b'{"kind": "gpualert-channel"}', "json")
    with open(path, "ab") as f:
        f.truncate(gpualert.RECORD_MAX_BYTES + 1)
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert proc.returncode == 0 and "1 dead, 0 remaining" in proc.stdout, proc.stdout + proc.stderr
    assert "bigger than" in proc.stdout + proc.stderr


def test_a_record_that_cannot_be_buried_waits_and_resend_says_why(tmp_path):
    """outbox/dead is a file: bury_item's NotADirectoryError killed resend (exit 125)."""
    outbox = state_dir(tmp_path) / "outbox"
    gpualert.spool_in(str(outbox), b"{not json", "json")
    (outbox / "dead").write_text("not a folder")
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert proc.returncode == 1 and "Traceback" not in proc.stderr, proc.stdout + proc.stderr
    assert "0 dead, 1 remaining" in proc.stdout and "not moved to dead/" in proc.stderr
    assert len(spooled(tmp_path)) == 1


def test_a_record_whose_payload_is_malformed_is_a_dead_letter_not_retried(servers, tmp_path):
    """A json:// record whose "record" is not an object failed to build its request on every
    pass, a failure "for now", so it was retried for ever."""
    server = servers(tls=False)
    url = "json://127.0.0.1:%d/h" % server.port
    data = gpualert.channel_record(gpualert.parse_channel(url), gpualert.brief_for(make_result()))
    gpualert.spool_in(str(state_dir(tmp_path) / "outbox"),
                      json.dumps(dict(data, record="notadict")).encode(), "json")
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert "0 failed, 1 dead, 0 remaining" in proc.stdout, proc.stdout + proc.stderr


def test_resend_counts_one_message_to_several_channels_once_against_the_cap(servers, tmp_path):
    """A run takes one "channels" slot of --max-per-hour for its message, however many chat
    services it goes to; resend took one per post, so three channels used up a cap of 2."""
    a, b, c = servers(tls=False), servers(tls=False), servers(tls=False)
    _spool_posts(tmp_path, ["json://127.0.0.1:%d/h" % s.port for s in (a, b, c)])
    proc, _ = run_wrapper(tmp_path, ["resend", "--max-per-hour", "2"], child=None)
    assert "channels: 3 sent, 0 failed, 0 dead, 0 remaining" in proc.stdout, proc.stdout + proc.stderr


def test_dry_run_posts_nothing(servers, tmp_path):
    server = servers(tls=False)
    proc, _ = run_wrapper(tmp_path, ["--dry-run", "--notify-url", "json://127.0.0.1:%d/h" % server.port])
    assert proc.returncode == 3 and "channel dry-run:" in proc.stderr
    assert server.requests == [] and spooled(tmp_path) == []


def test_hourly_cap_holds_channel_messages_for_resend(servers, tmp_path):
    server = servers(tls=False)
    args = ["--max-per-hour", "1", "--notify-url", "json://127.0.0.1:%d/h" % server.port]
    first, _ = run_wrapper(tmp_path, args)
    second, _ = run_wrapper(tmp_path, args)
    assert first.returncode == second.returncode == 3
    assert "channel held:" in second.stderr and len(server.requests) == 1
    assert len(spooled(tmp_path)) == 1
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert "channels: 1 sent" in proc.stdout and len(server.requests) == 2


@pytest.mark.parametrize("service", ["mattermost", "rocketchat", "discord", "slack"])
def test_a_log_line_cannot_page_the_whole_chat(service):
    summary = gpualert.brief_for(make_result(evidence="Error @channel @all <!here> @everyone"))
    body = gpualert.build_channel_request(gpualert.parse_channel(SERVICE_URLS[service]), summary).body
    text = body.decode("utf-8")
    for mention in ("@channel", "@all", "<!here>"):
        assert mention not in json.loads(text).__repr__() or service == "discord"
    if service == "discord":
        assert json.loads(text)["allowed_mentions"] == {"parse": []}


def test_an_unusable_record_becomes_a_dead_letter_not_a_retry_forever(tmp_path):
    outbox = state_dir(tmp_path) / "outbox"
    gpualert.spool_in(str(outbox), b"{not json", "json")
    # (not "nonsense://": an apprise-routed URL, which waits for a host with apprise)
    gpualert.spool_in(str(outbox), json.dumps({"kind": "gpualert-channel", "url": "not a url",
                                               "summary": {}}).encode(), "json")
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert "2 dead, 0 remaining" in proc.stdout, proc.stdout + proc.stderr
    assert len(spooled(tmp_path, dead=True)) == 2


def test_one_message_posted_twice_to_one_channel_takes_two_cap_slots(servers, tmp_path):
    """The cap's "one message to several channels" must not let copies to the same channel
    through: three records with one summary to one URL went out under a cap of 1."""
    server = servers(tls=False)
    _spool_posts(tmp_path, ["json://127.0.0.1:%d/h" % server.port] * 3)
    proc, _ = run_wrapper(tmp_path, ["resend", "--max-per-hour", "1"], child=None)
    assert "channels: 1 sent, 0 failed, 0 dead, 2 remaining" in proc.stdout, proc.stdout + proc.stderr


def test_records_settled_as_dead_letters_take_no_cap_slot(servers, tmp_path):
    """Two broken records used up a cap of 2 before the good post behind them."""
    server = servers(tls=False)
    outbox = str(state_dir(tmp_path) / "outbox")
    for i in range(2):
        gpualert.spool_in(outbox, b'{"kind": "gpualert-channel", "url": "json://127.0.0.1:1/h", '
                          b'"summary": [%d]}' % i, "json")
    _spool_posts(tmp_path, ["json://127.0.0.1:%d/h" % server.port])
    proc, _ = run_wrapper(tmp_path, ["resend", "--max-per-hour", "2"], child=None)
    assert "channels: 1 sent, 0 failed, 2 dead, 0 remaining" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("damage", [{"txn_id": 7}, {"summary.title": 3},
                                    {"summary.fields": [["a", "b", "c"]]}])
def test_a_matrix_record_of_the_wrong_kinds_is_a_dead_letter_not_retried(tmp_path, damage):
    """Only json:// records were checked: a Matrix record with an int txn_id or title, or a
    field row of three, failed "for now" (TypeError) on every pass, for ever."""
    url = "matrix://bot:tok@127.0.0.1:%d/!room:example.org" % refused_port()
    data = gpualert.channel_record(gpualert.parse_channel(url), gpualert.brief_for(make_result()))
    for key, value in damage.items():
        if key.startswith("summary."):
            data["summary"][key.split(".")[1]] = value
        else:
            data[key] = value
    gpualert.spool_in(str(state_dir(tmp_path) / "outbox"), json.dumps(data).encode(), "json")
    proc, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert "0 failed, 1 dead, 0 remaining" in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.parametrize("url,damage", [
    ("ntfy://127.0.0.1:%d/topic", {"severity": "zzz"}),
    ("gotify://127.0.0.1:%d/TOKEN", {"severity": "zzz"}),
    ("ntfy://127.0.0.1:%d/topic", "empty"),
    ("matrix://bot:tok@127.0.0.1:%d/!room:example.org", "empty")])
def test_a_record_no_request_can_be_built_from_is_a_dead_letter_without_a_cap_slot(tmp_path, url, damage):
    """A record of the right kinds but values no builder takes (a severity of another
    version, an empty summary) failed "for now" on every pass and took a cap slot each time."""
    url = url % refused_port()
    data = gpualert.channel_record(gpualert.parse_channel(url), gpualert.brief_for(make_result()))
    if damage == "empty":
        data["summary"] = {}
    else:
        data["summary"].update(damage)
    gpualert.spool_in(str(state_dir(tmp_path) / "outbox"), json.dumps(data).encode(), "json")
    proc, _ = run_wrapper(tmp_path, ["resend", "--max-per-hour", "5"], child=None)
    assert "0 failed, 1 dead, 0 remaining" in proc.stdout, proc.stdout + proc.stderr
    assert "cannot be built" in proc.stdout + proc.stderr
    assert not list(state_dir(tmp_path).glob("rate-channels*")) or \
        not (state_dir(tmp_path) / "rate-channels.txt").read_text().strip()


def test_a_chat_post_refused_for_good_is_told_in_the_next_message(servers, tmp_path):
    """A chat dead letter (HTTP 410 at a cron `resend --quiet`) was never told anywhere:
    only e-mail dead letters were named in the next run's message."""
    server = servers([("status", 410, {}, b"gone")], tls=False)
    _spool_posts(tmp_path, ["json://127.0.0.1:%d/h" % server.port])
    run_wrapper(tmp_path, ["resend", "--quiet"], child=None)
    [dead] = spooled(tmp_path, dead=True)
    run_wrapper(tmp_path, [])  # no transport: its e-mail waits in the outbox, readable
    [mail] = [p for p in (state_dir(tmp_path) / "outbox").iterdir() if p.name.endswith(".eml")]
    text = mail.read_bytes().decode("utf-8", "replace").replace("=\n", "")
    assert dead.name in text and "HTTP 410" in text


def test_a_chat_only_user_is_told_of_a_chat_dead_letter_in_the_next_post_once(servers, tmp_path):
    """With no e-mail sent (--sendmail none, a chat URL), the note went to the e-mail alone:
    the user never heard of the post refused for good."""
    gone = servers([("status", 400, {}, b"bad request")], tls=False)
    good = servers(tls=False)
    run_wrapper(tmp_path, ["--notify-url", "json://127.0.0.1:%d/h" % gone.port])
    [dead] = spooled(tmp_path, dead=True)
    for _ in range(2):
        run_wrapper(tmp_path, ["--notify-url", "json://127.0.0.1:%d/h" % good.port])
    first, second = [json.loads(r.body.decode("utf-8")) for r in good.requests]
    assert dead.name in json.dumps(first) and "HTTP 400" in json.dumps(first), first
    assert dead.name not in json.dumps(second)  # told once


def test_slow_mail_leaves_chat_its_share_of_a_resend(servers, relay_factory, tmp_path):
    """E-mail went first with the whole time budget: a relay slow to answer used every pass
    on the oldest e-mails, and the chat posts were never tried."""
    server = servers(tls=False)
    relay = relay_factory("slow", delay=0.5)
    outbox = str(state_dir(tmp_path) / "outbox")
    for i in range(4):
        gpualert.spool_in(outbox, b"To: me@example.org\nSubject: m%d\n\nbody\n" % i, "eml")
    _spool_posts(tmp_path, ["json://127.0.0.1:%d/h" % server.port])
    cfg, _, _ = gpualert.load_config({"outbox": outbox, "smtp": relay.addr, "smtp_tls": "none",
                                      "smtp_timeout": 10}, {})
    report = gpualert.resend(cfg, max_s=4)
    assert report["json"]["sent"] == 1 and len(server.requests) == 1, report


def test_a_readable_config_with_channel_urls_is_warned_about(tmp_path):
    conf = tmp_path / "c.ini"
    conf.write_text("[gpualert]\nnotify_url = %s\n" % SERVICE_URLS["slack"])
    conf.chmod(0o644)
    proc, _ = run_wrapper(tmp_path, ["config", "--config", str(conf)], child=None)
    assert "readable by others" in proc.stderr
    conf.chmod(0o600)
    proc, _ = run_wrapper(tmp_path, ["config", "--config", str(conf)], child=None)
    assert "readable by others" not in proc.stderr


def test_sigkill_while_posting_leaves_the_message_for_resend(servers, tmp_path):
    server = servers([("mute",), ("ok",)], tls=False)
    home = tmp_path / "home"
    home.mkdir()
    env = dict(os.environ, HOME=str(home), XDG_STATE_HOME=str(home / "state"),
               XDG_CONFIG_HOME=str(home / "config"), TMPDIR=str(tmp_path))
    proc = subprocess.Popen([sys.executable, str(SCRIPT), "--sendmail", "none", "--smtp-timeout", "60",
                             "--notify-url", "json://127.0.0.1:%d/hook" % server.port, "--",
                             sys.executable, "-c", "raise SystemExit(3)"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        server.wait_for(1, timeout=30)  # the post is under way (and will never be answered)
    finally:
        proc.kill()
        proc.wait()
    records = spooled(tmp_path)
    assert len(records) == 1 and "~claimed~" in records[0].name
    assert records[0].name.split("~")[-2] == str(proc.pid)
    out, _ = run_wrapper(tmp_path, ["resend"], child=None)
    assert "channels: 1 sent" in out.stdout, out.stdout + out.stderr
    assert len(server.requests) == 2 and spooled(tmp_path) == []


# ---- the picture of the run (Discord, Telegram, ntfy, Matrix) ----

def _png():
    canvas = gpualert.Canvas(40, 20)
    return gpualert.encode_png(canvas)


@pytest.mark.parametrize("service", ["discord", "telegram", "ntfy"])
def test_the_picture_follows_the_message_where_the_service_takes_files(proxied, service):
    server = proxied()
    png = _png()
    channel = gpualert.parse_channel(SERVICE_URLS[service])
    res = gpualert.post_channel(channel, gpualert.brief_for(make_result()),
                                time.monotonic() + 10, picture=png)
    assert res.ok and "picture: sent" in res.detail, res.detail
    text, picture = server.wait_for(2)
    assert check_request(service, text) == []
    assert png in picture.body
    if service == "discord":
        assert picture.path == text.path and b'name="files[0]"; filename="run.png"' in picture.body
        assert "multipart/form-data" in picture.header("content-type")
    elif service == "telegram":
        assert picture.path.endswith("/sendPhoto") and b'name="chat_id"\r\n\r\n4242' in picture.body
    else:
        assert picture.header("filename") == "run.png" and picture.body == png


def test_a_failed_picture_never_fails_the_message(proxied):
    server = proxied([("ok",), ("status", 413, {}, b"too big")])
    channel = gpualert.parse_channel(SERVICE_URLS["discord"])
    res = gpualert.post_channel(channel, gpualert.brief_for(make_result()),
                                time.monotonic() + 10, picture=_png())
    assert res.ok and "picture: not sent (HTTP 413" in res.detail
    assert len(server.requests) == 2


def test_matrix_picture_on_a_real_synapse(synapse):
    url = "matrix://%s@127.0.0.1:%d/#alerts:localhost" % (synapse.token, synapse.port)
    res = gpualert.post_channel(gpualert.parse_channel(url), gpualert.brief_for(make_result()),
                                time.monotonic() + 20, picture=_png())
    assert res.ok and "picture: sent" in res.detail, res.detail
    image = synapse.messages()[-1]["content"]
    assert image["msgtype"] == "m.image" and image["url"].startswith("mxc://")


CURVES = ("import sys\nfor i in range(1, 41): print('step %d/40 loss %.3f acc %.2f' % "
          "(i, 3.0 / i, i / 40.0))\nraise SystemExit(3)")


@pytest.mark.parametrize("plots", [True, False])
def test_run_sends_its_curves_to_ntfy_unless_no_plots(servers, tmp_path, plots):
    server = servers(tls=False)
    args = ["--notify-url", "ntfy://127.0.0.1:%d/alerts" % server.port] + ([] if plots else ["--no-plots"])
    proc, _ = run_wrapper(tmp_path, args, child=CURVES)
    assert proc.returncode == 3
    requests = server.wait_for(1)
    if plots:
        requests = server.wait_for(2)
        assert requests[1].body.startswith(b"\x89PNG") and "picture: sent" in proc.stderr
    else:  # the wrapper has exited: every post it made was answered and recorded
        assert len(server.requests) == 1


@pytest.mark.needs_root  # gives the planted folder to another user
def test_a_world_writable_fallback_neither_gets_records_nor_has_them_posted(servers, tmp_path):
    """Another user (here: nobody, uid 65534) may pre-create the predictable /tmp fallback,
    mode 777, and plant a record in it."""
    if os.geteuid() != 0:
        pytest.skip("needs root to give the planted folder to another user")
    planted_target = servers(tls=False)
    shared = tmp_path / ("gpualert-outbox-%d" % os.getuid())
    shared.mkdir()
    shared.chmod(0o777)
    record = gpualert.channel_record(gpualert.parse_channel("json://127.0.0.1:%d/p" % planted_target.port),
                                     gpualert.brief_for(make_result(name="planted")))
    (shared / "20260101T000000.000000Z-1-abcdef.json").write_text(json.dumps(record))
    for path in (shared, shared / "20260101T000000.000000Z-1-abcdef.json"):
        os.chown(str(path), 65534, 65534)
    blocker = tmp_path / "file"
    blocker.write_text("a regular file: the outbox cannot be made under it")
    args = ["--outbox", str(blocker / "outbox"), "--log-dir", str(blocker / "logs"),
            "--notify-url", "json://127.0.0.1:%d/h" % refused_port()]
    proc, _ = run_wrapper(tmp_path, args)
    assert proc.returncode == 3
    assert sorted(p.name for p in shared.iterdir()) == ["20260101T000000.000000Z-1-abcdef.json"]
    proc, _ = run_wrapper(tmp_path, ["resend", "--outbox", str(blocker / "outbox")], child=None)
    assert planted_target.requests == []


def test_a_token_that_cannot_go_in_a_header_is_permanent_not_retried_forever(servers):
    server = servers(tls=False)
    res, _ = _post("gotify://127.0.0.1:%d/t%%C3%%B6ken\u2603" % server.port)
    assert not res.ok and res.permanent and "cannot be sent" in res.detail
    assert server.requests == []


def test_watch_posts_an_ended_job_to_the_channels(servers, tmp_path, monkeypatch):
    server = servers(tls=False)
    log = tmp_path / "slurm-42.out"
    log.write_text("step 10/100\nRuntimeError: CUDA out of memory. Tried to allocate 2 GiB\n")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    cfg, _, _ = gpualert.load_config({
        "notify_url": ["json://127.0.0.1:%d/w" % server.port], "log_dir": str(tmp_path / "runs"),
        "outbox": str(tmp_path / "outbox"), "sendmail": "none"}, {})
    info = {"job_id": "42", "label": "42", "state": "FAILED", "facts": {"exit_code": 1},
            "log_path": str(log), "name": "train"}
    delivery = gpualert.Watch(["42"], cfg).notify(info, gpualert.classify_watched(info))
    assert [c["outcome"] for c in delivery["channels"]] == ["sent"]
    body = server.wait_for(1)[0].json
    assert body["status"] == "FAILED" and body["name"] == "train"


# torchrun --tee ([3]:), its rank template ([RANK3]:), Open MPI --tag-output ([1,3]<stderr>:),
# srun --label (" 3: "): one grammar, so the e-mail's first rows and the chat post agree.
RANK_TRACEBACK = ("import sys\n"
                  "for line in ('step 10 loss 2.1', 'Traceback (most recent call last):',\n"
                  "             '  File \"/home/ana/proj/train.py\", line 61, in main',\n"
                  "             \"    batch = data['input_ids']\", \"KeyError: 'input_ids'\"):\n"
                  "    sys.stderr.write(%r + line + '\\n')\n"
                  "sys.exit(1)\n")


@pytest.mark.parametrize("prefix", ["[3]:", "[RANK3]:", "[1,3]<stderr>:", " 3: "])
def test_a_rank_prefixed_failure_names_the_rank_and_frame_in_the_email_and_the_chat_post(
        tmp_path, servers, prefix):
    import email
    import email.policy
    server = servers(tls=False)
    proc, _ = run_wrapper(tmp_path, ["--notify-url", "json://127.0.0.1:%d/hook" % server.port],
                          child=RANK_TRACEBACK % prefix)
    assert proc.returncode == 1, proc.stderr
    post = json.loads(server.wait_for(1)[0].body.decode("utf-8"))
    assert "on rank 3" in post["text"] and "Where: /home/ana/proj/train.py:61 in main" in post["text"], post["text"]
    assert post["classification"]["rank"] == 3
    eml = list((state_dir(tmp_path) / "outbox").glob("*.eml"))
    assert len(eml) == 1
    msg = email.message_from_bytes(eml[0].read_bytes(), policy=email.policy.default)
    text = msg.get_body(("plain",)).get_content()
    what = next(line for line in text.splitlines() if line.strip().startswith("What:"))
    where = next(line for line in text.splitlines() if line.strip().startswith("Where:"))
    assert "on rank 3" in what and "KeyError" in what, text
    assert "/home/ana/proj/train.py:61 in main" in where


HOSTILE = "[Re-authenticate](https://evil.example/login) @room @everyone <!channel> <https://evil.example|ok>"


def test_a_hostile_job_line_is_text_in_every_chat():
    # Discord's Progress field was the job's raw line, so [label](url) became a link;
    # Matrix sent @room through with no m.mentions.
    summary = gpualert.brief_for(make_result(tail=["epoch 3 " + HOSTILE]))
    assert HOSTILE[:40] in dict(summary.fields)["Progress"]  # the line is the progress
    disc = json.loads(gpualert.build_discord(gpualert.parse_channel(SERVICE_URLS["discord"]), summary).body)
    texts = [f["value"] for f in disc["embeds"][0]["fields"]] + [disc["content"], disc["embeds"][0]["title"]]
    assert not [t for t in texts if "](http" in t or "<http" in t]
    assert disc["allowed_mentions"] == {"parse": []}
    slack = gpualert.build_slack(gpualert.parse_channel(SERVICE_URLS["slack"]), summary).body.decode()
    assert "<!channel>" not in slack and "<https" not in slack and "@everyone" not in slack
    room = gpualert.parse_channel("matrixs://TOKEN@matrix.test/!room:matrix.test")
    matrix = json.loads(gpualert.build_matrix(room, summary, "!room:matrix.test", "t1").body)
    assert matrix["m.mentions"] == {}
    assert "<a " not in matrix["formatted_body"] and "&lt;!channel&gt;" in matrix["formatted_body"]
    tg = json.loads(gpualert.build_telegram(gpualert.parse_channel(SERVICE_URLS["telegram"]), summary).body)
    assert "<https" not in tg["text"] and "&lt;!channel&gt;" in tg["text"]
    for service in ("mattermost", "rocketchat", "teams", "googlechat"):
        body = getattr(gpualert, "build_" + service)(gpualert.parse_channel(SERVICE_URLS[service]), summary).body
        assert b"](http" not in body, service


N = load_gpualert()


# ---- A15: a log line cannot post a disguised link to a team chat ----

@pytest.mark.parametrize("service", ["googlechat", "teams", "mattermost", "rocketchat"])
def test_a_log_line_cannot_post_a_disguised_link(service):
    """The decisive line went out as-is: Google Chat renders <url|label> as a link labelled
    "label", Teams, Mattermost and Rocket.Chat render [label](url)."""
    import json
    from test_channels import SERVICE_URLS, make_result
    evidence = ("RuntimeError: see <https://evil.example/login|your GPU quota> "
                "or [reset](https://evil.example/reset)")
    summary = N.brief_for(make_result(evidence=evidence))
    body = N.build_channel_request(N.parse_channel(SERVICE_URLS[service]), summary).body
    text = json.dumps(json.loads(body.decode("utf-8")), ensure_ascii=False)
    assert "<https://evil" not in text and "](https://evil" not in text, text
    assert "your GPU quota" in text and "reset" in text  # the words stay readable


def _dead_mail(tmp_path, count):
    dead = state_dir(tmp_path) / "outbox" / "dead"
    dead.mkdir(parents=True)
    names = ["20260101T000000.%06dZ-1-aaaaaa.eml" % i for i in range(count)]
    for i, name in enumerate(names):
        (dead / name).write_bytes(b"X-Gpualert-Dead-Reason: refused for good by the relay: u%d@x "
                                  b"(550 5.1.1 no such user)\nSubject: x\n\nx\n" % i)
    return dead, names


@pytest.mark.parametrize("service", ["telegram", "pushover"])
def test_a_post_marks_told_only_the_dead_letters_it_shows(proxied, tmp_path, service):
    """A post that names 20 dead letters was clipped by the service (Telegram showed 4,
    Pushover none), yet all 20 were marked told and never named again."""
    server = proxied()
    dead, names = _dead_mail(tmp_path, 20)
    run_wrapper(tmp_path, ["--notify-url", SERVICE_URLS[service]])
    body = server.wait_for(1)[0].body.decode("utf-8")
    told = (dead / ".told").read_text().split() if (dead / ".told").exists() else []
    assert all(name in body for name in told), (told, body)
    assert [n for n in names if n in body][:len(told)] == told  # the oldest shown are the ones told
    if service == "telegram":
        assert len(told) > 4


def test_a_fifo_or_a_spaced_name_in_dead_letters_costs_nothing(servers, tmp_path):
    """A FIFO as NAME.json.reason held the run's end for the whole notify bound (40 s) and
    no post went out; a dead letter whose name holds a space was named in every post, since
    .told was read word by word."""
    good = servers(tls=False)
    dead = state_dir(tmp_path) / "outbox" / "dead"
    dead.mkdir(parents=True)
    (dead / "20260101T000000.000000Z-1-aaaaaa.json").write_text("{}")
    os.mkfifo(str(dead / "20260101T000000.000000Z-1-aaaaaa.json.reason"))
    (dead / "my copy.json").write_text("{}")
    (dead / "a\u2028zz.json").write_text("{}")  # a line break .told cannot hold: never named,
    (dead / "zz.json").write_text("{}")  # so it cannot mark this one told without naming it
    for _ in range(2):
        proc, took = run_wrapper(tmp_path, ["--notify-url", "json://127.0.0.1:%d/h" % good.port], timeout=30)
        assert took < 20, proc.stderr
    first, second = [r.body.decode("utf-8") for r in good.wait_for(2)]
    assert "my copy.json" in first and "aaaaaa.json" in first and " zz.json" in first, first
    assert "my copy.json" not in second and "aaaaaa.json" not in second, second
    assert " zz.json" not in second and "a\\u2028zz" not in first + second
    assert " zz.json" not in second and "a\\u2028zz" not in first + second


def test_odd_names_of_dead_letters_are_named_once(servers, tmp_path):
    """helper-31: 'a&amp;b' was unescaped in a JSON post (never credited), two spaces were
    shown as one (never credited): both named in every post; a no-break space failed the
    line-break filter, so that letter was never named at all. A name that is not UTF-8 (no
    message can show it as it is) is not named, and costs no post."""
    good = servers(tls=False)
    dead = state_dir(tmp_path) / "outbox" / "dead"
    dead.mkdir(parents=True)
    for name in ("a&amp;b.json", "two  spaces.json", "nb\u00a0sp.json", "ok.json", "bad\udcff.json"):
        (dead / name).write_text("{}")
    for _ in range(2):
        proc, took = run_wrapper(tmp_path, ["--notify-url", "json://127.0.0.1:%d/h" % good.port], timeout=30)
        assert took < 20, proc.stderr
    first, second = [json.dumps(json.loads(r.body.decode("utf-8")), ensure_ascii=False)
                     for r in good.wait_for(2)]
    for shown in ("a&amp;b.json", "two spaces.json", "nb sp.json", "ok.json"):  # as the brief cleans them
        assert shown in first and shown not in second, (shown, first, second)
    assert "bad" not in first + second


def test_a_command_line_that_is_not_utf8_is_posted_not_lost(servers, tmp_path):
    """An argument (or a working folder) whose bytes are not UTF-8 made every JSON body fail
    to encode: the json:// post was neither sent nor spooled ('could not be spooled')."""
    good = servers(tls=False)
    proc, _ = run_wrapper(tmp_path, ["--notify-url", "json://127.0.0.1:%d/h" % good.port],
                          child="import sys; raise SystemExit(3)\n#" + "data-\udcff.bin")
    body = json.loads(good.wait_for(1)[0].body.decode("utf-8"))
    assert "data-\ufffd.bin" in json.dumps(body["argv"], ensure_ascii=False), proc.stderr
    assert "could not be spooled" not in proc.stderr


@pytest.mark.parametrize("odd", ["symlink", "fifo", "directory"])
def test_a_told_list_that_is_not_a_file_is_replaced_or_said(servers, tmp_path, odd):
    """helper-32: a .told that was a link, a FIFO or a folder refused every append in
    silence, so the same letter was named in every message."""
    good = servers(tls=False)
    dead = state_dir(tmp_path) / "outbox" / "dead"
    dead.mkdir(parents=True)
    (dead / "new.json").write_text("{}")
    target = tmp_path / "elsewhere.txt"
    target.write_text("not ours\n")
    {"symlink": lambda: (dead / ".told").symlink_to(target), "fifo": lambda: os.mkfifo(str(dead / ".told")),
     "directory": lambda: (dead / ".told").mkdir()}[odd]()
    runs = [run_wrapper(tmp_path, ["--notify-url", "json://127.0.0.1:%d/h" % good.port], timeout=30)[0]
            for _ in range(2)]
    first, second = [r.body.decode("utf-8") for r in good.wait_for(2)]
    assert "new.json" in first and target.read_text() == "not ours\n"
    if odd == "directory":  # cannot be replaced: said, and named again
        assert "cannot record in" in runs[0].stderr and "new.json" in second
    else:
        assert "new.json" not in second and (dead / ".told").read_text() == "new.json\n"


def test_a_told_list_we_cannot_append_to_or_cut_short_costs_one_repeat_at_most(servers, tmp_path):
    """helper-33: a .told another user owns (dead/ still ours) refused every append, so a
    letter was named in every message; an append onto a last line with no line break glued
    two names, so both were named again."""
    good = servers(tls=False)
    dead = state_dir(tmp_path) / "outbox" / "dead"
    dead.mkdir(parents=True)
    (dead / "old.json").write_text("{}")
    (dead / "new.json").write_text("{}")
    (dead / ".told").write_text("old.json")  # no line break at its end
    os.chmod(str(dead / ".told"), 0o444)  # not to be appended to (root still may), in our dead/
    for _ in range(2):
        run_wrapper(tmp_path, ["--notify-url", "json://127.0.0.1:%d/h" % good.port], timeout=30)
    first, second = [r.body.decode("utf-8") for r in good.wait_for(2)]
    assert "new.json" in first and "new.json" not in second and "old.json" not in first + second


def test_a_full_told_list_is_written_anew_with_the_names_still_there(servers, tmp_path):
    """helper-31: .told only grew; past its 4 MiB cap, a new dead letter was named in every
    message and appended again each time."""
    good = servers(tls=False)
    dead = state_dir(tmp_path) / "outbox" / "dead"
    dead.mkdir(parents=True)
    gone = "".join("20250101T000000.%06dZ-1-gone.eml\n" % i for i in range(130000))  # 4.3 MiB
    (dead / ".told").write_text("kept.eml\n" + gone)
    (dead / "kept.eml").write_text("X-Gpualert-Dead-Reason: 550\n\nold")
    (dead / "new.json").write_text("{}")
    for _ in range(2):
        run_wrapper(tmp_path, ["--notify-url", "json://127.0.0.1:%d/h" % good.port], timeout=30)
    first, second = [r.body.decode("utf-8") for r in good.wait_for(2)]
    assert "new.json" in first and "new.json" not in second and "kept.eml" not in first + second
    assert sorted((dead / ".told").read_text().split("\n")) == ["", "kept.eml", "new.json"]


def test_a_post_is_credited_only_with_the_names_it_shows_whole():
    """The check was bytes-in-body: a name cut by Pushover's 1,024 characters still counted
    when it was a piece of another name ('03.eml' in '0-03.eml'), and names a service
    escapes ('a&b.eml' as 'a&amp;b.eml', JSON's \\") never counted, so were named forever."""
    long_reason = "refused for good by the relay: u@x (550 5.1.1 <u@x>: Recipient address rejected) " * 2
    letters = [("/o/dead/0-%02d.eml" % i, long_reason + str(i)) for i in range(4)]
    letters += [("/o/dead/%02d.eml" % i, "550 no such user") for i in range(4)]
    named, note, entries = gpualert.dead_letter_note(letters, len(letters))
    result = make_result(evidence="RuntimeError: CUDA error: an illegal memory access " + "x" * 400)
    summary = gpualert.brief_for(result._replace(notes=[note]))
    names = [os.path.basename(path) for path, _ in named]
    pushover = gpualert.parse_channel(SERVICE_URLS["pushover"])
    shown = [names[i] for i in gpualert._shown_entries(pushover, summary, entries)]
    message = dict(parse_qsl(gpualert.build_channel_request(pushover, summary).body.decode()))["message"]
    assert shown and shown == [n for n in names if (" %s:" % n) in message or (" %s," % n) in message]
    assert len(shown) < len(names)  # Pushover cut the row: the rest are named again
    odd = [("/o/dead/lt.eml", "550 <u@x> [x](y) & @here")]  # the guards mark what follows
    odd += [("/o/dead/a&b \"%d\".eml" % i, "550 no such user") for i in range(2)]
    odd += [("/o/dead/a&amp;b.eml", "550 no such user"), ("/o/dead/two  spaces.eml", "550 <u@x>")]
    _, note, entries = gpualert.dead_letter_note(odd, len(odd))
    summary = gpualert.brief_for(make_result()._replace(notes=[note]))
    for service in list(SERVICE_URLS) + ["matrix"]:
        channel = gpualert.parse_channel(SERVICE_URLS.get(service, "matrix://syt_SECRET99@127.0.0.1:8008/!abc:localhost"))
        assert gpualert._shown_entries(channel, summary, entries) == list(range(len(entries))), service


def test_a_name_inside_an_earlier_entry_is_not_credited_when_its_own_is_cut():
    """helper-31: dead letters 'a, z.eml', three long names, then 'z.eml': Pushover cut the
    note before z.eml's own entry, but ', z.eml,' inside the first matched, so z.eml was
    marked told and never named again. An apprise post (an SMS shows 160 characters of it)
    credited every name it carried."""
    reason = "refused for good by the relay: " + "r" * 150
    letters = [("/o/dead/a, z.eml", "550 one")]
    letters += [("/o/dead/%s-%d.eml" % ("n" * 100, i), reason + str(i)) for i in range(3)]
    letters += [("/o/dead/z.eml", "550 two")]
    named, note, entries = gpualert.dead_letter_note(letters, len(letters))
    assert len(named) == 5 and "; z.eml: 550 two" in note
    summary = gpualert.brief_for(make_result()._replace(notes=[note]))
    pushover = gpualert.parse_channel(SERVICE_URLS["pushover"])
    message = dict(parse_qsl(gpualert.build_channel_request(pushover, summary).body.decode()))["message"]
    assert "; z.eml:" not in message and "a, z.eml:" in message
    assert gpualert._shown_entries(pushover, summary, entries) == [0, 1, 2, 3]  # not 4: z.eml
    apprise = gpualert.parse_channel("twilio://sid:token@15551234567/15557654321")
    assert gpualert._shown_entries(apprise, summary, entries) == []


def test_a_name_in_two_places_is_told_only_where_its_entry_was_shown(tmp_path):
    """helper-32: the same file name in two outbox places (an outbox copied), the second's
    entry cut by Pushover: telling went by bare name, so the second was marked told too."""
    same, places = "20260101T000000.000000Z-1-aaaaaa.eml", [tmp_path / "a", tmp_path / "b"]
    for place in places:
        place.mkdir()
    long = "refused for good by the relay: " + "r" * 150
    letters = [(str(places[0] / same), "550 one")]
    letters += [(str(places[0] / ("%s-%d.eml" % ("n" * 100, i))), long + str(i)) for i in range(3)]
    letters += [(str(places[1] / same), "550 two")]
    dead = gpualert.dead_letter_note(letters, len(letters))
    summary = gpualert.brief_for(make_result()._replace(notes=[dead.text]))
    told = gpualert._shown_entries(gpualert.parse_channel(SERVICE_URLS["pushover"]), summary, dead.entries)
    assert told == [0, 1, 2, 3]
    gpualert.tell_shown(dead, {"outcome": "failed", "channels": [{"outcome": "sent", "told": told}]})
    assert gpualert._told(str(places[0])) >= {same} and not gpualert._told(str(places[1]))


def _strict_json(data):
    """json.loads that refuses NaN and Infinity, as JavaScript's JSON.parse does."""
    def refuse(name):
        raise ValueError("not JSON: %s" % name)
    return json.loads(data, parse_constant=refuse)


def test_a_real_divergence_posts_and_records_strict_json(tmp_path, servers):
    """transformers 5's NaN run (grad_norm nan) made `"grad_norm": NaN` in run.json and the
    json:// post, which JSON.parse rejects: null there, the text kept by JSON pointer."""
    server = servers(tls=False)
    log = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "real",
                       "hf_trainer_nan_tf5.log")
    child = ("import sys; sys.stdout.write(open(%r).read().split('gpualert: 0.1.0\\n', 1)[1]); "
             "raise SystemExit(1)" % log)
    proc, _ = run_wrapper(tmp_path, ["--notify-url", "json://127.0.0.1:%d/hook" % server.port,
                                     "--log-dir", str(tmp_path / "logs")], child=child)
    assert proc.returncode == 1, proc.stderr
    body = _strict_json(server.wait_for(1)[0].body.decode("utf-8"))
    assert body["class"] == "nan_loss"
    record = _strict_json((next((tmp_path / "logs").glob("*/run.json"))).read_text())
    for doc in (body, record):
        assert doc["metrics"]["others"]["grad_norm"] is None
        assert doc[gpualert.NONFINITE_KEY]["/metrics/others/grad_norm"] == "nan"



def test_json_ready_leaves_finite_values_and_marks_every_nonfinite_one():
    payload = {"a": float("inf"), "b/c": [1.5, float("-inf"), (float("nan"),)], "d": "nan"}
    out = gpualert.json_ready(payload)
    assert json.dumps(out, allow_nan=False)
    assert out["b/c"] == [1.5, None, [None]] and out["d"] == "nan"
    assert out[gpualert.NONFINITE_KEY] == {"/a": "inf", "/b~1c/1": "-inf", "/b~1c/2/0": "nan"}

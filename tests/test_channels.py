"""Chat and push channels (--notify-url): URL forms, masking, each service's documented
request, and delivery against real local HTTP(S) servers, a real proxy, a real Matrix
homeserver (Synapse) and the real apprise CLI. See channel_servers.py and matrix_server.py."""
import json
import os
import shutil
import subprocess
import sys
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _load import SCRIPT, load_gpualert  # noqa: E402
from channel_servers import (ForwardProxy, Recorded, RecordingServer, check_request,  # noqa: E402
                             make_channel_pki, refused_port)
import matrix_server  # noqa: E402

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
    summary = gpualert.channel_summary(result)
    channel = gpualert.parse_channel(SERVICE_URLS[service])
    request = gpualert.build_channel_request(channel, summary, gpualert.result_record(result))
    assert check_request(service, _as_recorded(request)) == []


def test_summary_carries_what_the_owner_needs():
    summary = gpualert.channel_summary(make_result())
    fields = dict(summary.fields)
    assert summary.severity == "failure"
    assert "cuda_oom" in fields["Status"] and "4242" in fields["Job"]
    assert "CUDA out of memory" in fields["Decisive line"]
    assert fields["Progress"] == "epoch 3 step 450/5000 loss 1.25"
    assert fields["Log"] == "/scratch/runs/train/output.log"
    assert fields["Duration"] and fields["Host"] == "node1"
    assert gpualert.channel_summary(make_result("SUCCESS")).severity == "ok"


def test_priority_follows_status():
    fail = gpualert.channel_summary(make_result())
    ok = gpualert.channel_summary(make_result("SUCCESS"))
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
    out = gpualert.deliver_channels(channels, gpualert.channel_summary(result),
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
    res = gpualert.post_channel(channel, summary or gpualert.channel_summary(make_result()),
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
    out = gpualert.deliver_channels(channels, gpualert.channel_summary(make_result()), start + 2.0)
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


def test_unknown_scheme_without_apprise_is_permanent(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    res, _ = _post("pbul://SECRET99")
    assert not res.ok and res.permanent and "apprise" in res.detail and "SECRET99" not in res.detail

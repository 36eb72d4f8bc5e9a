"""Tests of the message and delivery: budget, rendering, delivery against real servers, outbox.

Calls gpualert.py's functions directly (loaded by path). Fixtures: tests/conftest.py.
"""
import email
import email.policy
import gzip
import io
import os
import pathlib
import signal
import socket
import time
import tracemalloc
import zipfile

import pytest

from _load import load_gpualert
from conftest import SMTP_PASSWORD, SMTP_USER

ROOT = pathlib.Path(__file__).resolve().parents[1]
SLACK_S = 1.5  # allowed overshoot of smtp_timeout (thread join + teardown)


N = load_gpualert()
HOUR = 3600.0


def make_result(tmp_path, **kw):
    run_dir = tmp_path / "run"
    run_dir.mkdir(exist_ok=True)
    log = run_dir / "job.log"
    if not log.exists():
        log.write_text("step 1\nstep 2\nRuntimeError: CUDA out of memory.\n")
    base = dict(
        status="FAILED", name="train.py", argv=["python", "train.py", "--note", "a b"],
        host="gpu041", cwd=str(tmp_path), start=1000.0, end=1000.0 + 2 * HOUR + 13 * 60,
        exit_code=1, exit_status=1, signal_name=None,
        classification=N.Classification("cuda_oom", "cuda_oom", "tried to allocate 2.00 GiB",
                                         1234, "RuntimeError: CUDA out of memory.",
                                         "Reduce the batch size."),
        log_path=str(log), run_dir=str(run_dir),
        tail=["step 1", "step 2", "RuntimeError: CUDA out of memory."],
        rusage={"maxrss_kib": 12 * 1024 * 1024, "utime_s": 7000.5, "stime_s": 12.25},
        scheduler={}, notes=[], gpu={})
    base.update(kw)
    return N.RunResult(**base)


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


def wire_size(msg):
    return N._wire_size(msg)


def parse(data):
    return email.message_from_bytes(data, policy=email.policy.default)


def outbox_files(cfg):
    d = cfg["outbox"]
    return sorted(n for n in os.listdir(d) if n.endswith(".eml")) if os.path.isdir(d) else []


# ---------------------------------------------------------------- rendering

def test_subject_forms(tmp_path):
    r = make_result(tmp_path)
    assert N.render_subject(r) == "[gpualert] FAILED train.py: cuda_oom on gpu041 (exit 1, 2h13m)"
    seg = r._replace(classification=N.Classification("segfault", None, None, None, None, None),
                     signal_name="SIGSEGV", exit_code=-11, end=r.start + 4 * HOUR + 2 * 60)
    assert N.render_subject(seg) == \
        "[gpualert] FAILED train.py: segfault on gpu041 (SIGSEGV, 4h02m)"
    ok = r._replace(status="SUCCESS", exit_code=0, end=r.start + 12 * 60 + 5,
                    classification=N.Classification(None, None, None, None, None, None))
    assert N.render_subject(ok) == "[gpualert] SUCCESS train.py on gpu041 (exit 0, 12m)"
    to = r._replace(status="TIMEOUT", signal_name="SIGTERM", exit_code=-15,
                    end=r.start + 12 * HOUR,
                    classification=N.Classification("walltime", None, None, None, None, None),
                    scheduler={"kind": "slurm", "job_id": "4249", "array_job_id": "4242",
                               "array_task_id": "7", "label": "4242_7"})
    assert N.render_subject(to) == \
        "[gpualert] TIMEOUT job 4242_7 train.py: walltime on gpu041 (SIGTERM, 12h00m)"
    stalled = r._replace(status="STALLED", end=None, exit_code=None, start=time.time() - HOUR,
                         classification=N.Classification("stall", None, None, None, None, None))
    assert N.render_subject(stalled) == \
        "[gpualert] STALLED train.py: stall on gpu041 (running, 1h00m)"
    nostart = r._replace(exit_code=None, exit_status=127, end=r.start + 1,
                         classification=N.Classification("exec_failure", None, None, None,
                                                         None, None))
    assert N.render_subject(nostart) == \
        "[gpualert] FAILED train.py: exec_failure on gpu041 (not started, 1s)"


def test_subject_header_injection_and_length(tmp_path):
    r = make_result(tmp_path, name="evil\r\nBcc: victim@example.com\x1b[31m" + "x" * 500,
                    host="gpu\n041")
    s = N.render_subject(r)
    assert "\r" not in s and "\n" not in s and "\x1b" not in s
    assert len(s) <= N.SUBJECT_MAX_CHARS
    assert s.startswith("[gpualert] FAILED evil Bcc: victim@example.co")


def test_message_has_no_injected_headers(tmp_path, cfg):
    r = make_result(tmp_path, name="x\r\nBcc: victim@example.com",
                    argv=["python", "t.py\nBcc: v2@example.com"])
    cfg["to"] = ["bob@example.org\r\nBcc: v3@example.com"]
    msg, _ = N.build_message(r, cfg)
    head = msg.as_bytes().split(b"\n\n", 1)[0]
    for line in head.split(b"\n"):
        assert not line.lower().startswith(b"bcc:")
    sender, rcpts = N._envelope(msg.as_bytes(), cfg)
    assert all("victim" not in a and "v3" not in a for a in rcpts)


def test_render_text_contents(tmp_path):
    r = make_result(tmp_path, notes=["log disk nearly full"], gpu={"samples": 3, "duration_s": 7200.0, "idle": False, "gpus": [
                        {"index": 0, "name": "NVIDIA H100 80GB HBM3", "mem_used_peak_mib": 81000.0,
                         "mem_total_mib": 81559.0, "util_mean_pct": 87.5, "util_max_pct": 100.0,
                         "temp_max_c": 71.0, "ecc_delta": 2}]},
                    scheduler={"kind": "slurm", "job_id": "4242", "partition": "gpu"},
                    tail=["step 1", "RuntimeError: CUDA out of memory.", "\x1b[0mexit"])
    manifest = [{"name": "metrics.json", "path": "/x/metrics.json", "size": 2048,
                 "disposition": "attached", "kind": "artifact"}]
    text = N.render_text(r, manifest)
    for needle in ("FAILED job 4242 train.py: cuda_oom", "Cause:", "tried to allocate 2.00 GiB",
                   "job.log:1234: RuntimeError: CUDA out of memory.", "Reduce the batch size.",
                   "python train.py --note 'a b'", "gpu041", str(tmp_path), "2h13m",
                   "exit code 1", "12.0 GiB", "user 7000.5 s, system 12.2 s",
                   "slurm job 4242, partition gpu", r.log_path,
                   os.path.join(r.run_dir, "run.json"), "log disk nearly full",
                   "GPU0 NVIDIA H100 80GB HBM3, peak memory 79.1/79.6 GiB, utilisation mean 87.5% max 100.0%",
                   "2 NEW uncorrected ECC errors",
                   ">> RuntimeError: CUDA out of memory.", "   step 1", "metrics.json",
                   "2.0 KiB", "attached"):
        assert needle in text, needle
    assert "\x1b" not in text


def test_render_html_escapes_and_highlights(tmp_path):
    r = make_result(tmp_path, name="<script>alert(1)</script>",
                    tail=["a < b & c", "RuntimeError: CUDA out of memory."])
    manifest = [{"name": "<b>.json", "path": "/x", "size": 1, "disposition": "attached",
                 "kind": "artifact"}]
    html = N.render_html(r, manifest)
    assert "<script>" not in html and "&lt;script&gt;" in html
    assert "a &lt; b &amp; c" in html and "&lt;b&gt;.json" in html
    assert "<mark>RuntimeError: CUDA out of memory.</mark>" in html
    assert "<pre" in html and "<table" in html and 'background:#fff3b0' in html


def test_build_message_headers_and_parts(tmp_path, cfg, monkeypatch):
    monkeypatch.setenv("USER", "carol")
    monkeypatch.setenv("LOGNAME", "carol")
    cfg["to"] = []
    msg, manifest = N.build_message(make_result(tmp_path), cfg)
    assert msg["To"] == "carol"
    assert "@" in msg["From"] and "carol" in msg["From"]
    assert msg["X-Gpualert-Status"] == "FAILED" and msg["X-Gpualert-Class"] == "cuda_oom"
    assert msg["Message-ID"] and msg["Date"]
    assert msg["Subject"].startswith("[gpualert] FAILED train.py: cuda_oom")
    parsed = parse(msg.as_bytes())
    assert parsed.get_body(("plain",)).get_content().startswith("FAILED train.py: cuda_oom")
    assert "<table" in parsed.get_body(("html",)).get_content()
    names = [a.get_filename() for a in parsed.iter_attachments()]
    assert names == ["job.log"] and manifest[0]["disposition"] == "attached"


def test_build_message_never_raises(tmp_path, cfg):
    broken = make_result(tmp_path, tail=5, start="yesterday", rusage=None)
    msg, manifest = N.build_message(broken, cfg)
    assert "rendering failed" in msg["Subject"]
    assert "could not render" in msg.get_content()


def test_a_from_the_header_parser_rejects_costs_the_fallback_only_that_header(tmp_path, cfg):
    # The fallback set every header in one try: a From that raised (bypassing --from's own
    # check, e.g. from an older config path) dropped To, Subject and body, silently.
    broken = make_result(tmp_path, tail=5, start="yesterday", rusage=None)
    cfg["from_addr"] = "x <"
    msg, _ = N.build_message(broken, cfg)
    assert msg["To"] == ", ".join(cfg["to"]) and "rendering failed" in msg["Subject"]
    assert "@" in msg["From"]
    assert "note: the From header could not be set" in msg.get_content()


# ---------------------------------------------------------------- artifacts

def _touch(path, size=10, mtime=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    if mtime is not None:
        os.utime(str(path), (mtime, mtime))
    return str(path)


def test_find_artifacts_default_rules(tmp_path):
    since = time.time() + 1000  # files made now are "old" (ctime < since) unless mtime is later
    new = since + 10
    want = {_touch(tmp_path / "metrics.json", mtime=new),
            _touch(tmp_path / "plots" / "loss.png", mtime=new),
            _touch(tmp_path / "outputs" / "d" / "t" / "config.yaml", mtime=new)}
    _touch(tmp_path / "outputs" / "d" / "t" / ".hydra" / "config.yaml", mtime=new)  # hidden: never
    _touch(tmp_path / "outputs" / "kernel-1.json", mtime=new)     # a Jupyter kernel's key
    _touch(tmp_path / "outputs" / "api_token.txt", mtime=new)     # secret-looking name
    _touch(tmp_path / "old.csv")                                   # not new
    _touch(tmp_path / "model.pt", mtime=new)                       # not a result pattern
    for skip in (".git", "venv", "__pycache__", "wandb", "node_modules", ".cache"):
        _touch(tmp_path / skip / "x.json", mtime=new)
    _touch(tmp_path / "a" / "b" / "c" / "d" / "e" / "deep.json", mtime=new)   # too deep
    _touch(tmp_path / "run" / "run.json", mtime=new)               # excluded run dir
    os.symlink(str(tmp_path / "metrics.json"), str(tmp_path / "link.json"))
    got = N.find_artifacts(str(tmp_path), [], since, exclude=[str(tmp_path / "run")])
    assert set(got) == want and not got.truncated


def test_find_artifacts_globs_and_bounds(tmp_path):
    a = _touch(tmp_path / "res" / "x" / "a.csv")
    b = _touch(tmp_path / "res" / "b.csv")
    _touch(tmp_path / "res" / "c.txt")
    got = N.find_artifacts(str(tmp_path), ["res/**/*.csv"], time.time() + 999)
    assert sorted(got) == sorted([a, b])  # globs ignore `since`
    for i in range(N.ARTIFACT_MAX_FILES + 30):
        _touch(tmp_path / "many" / ("f%03d.json" % i), size=1)
    got = N.find_artifacts(str(tmp_path / "many"), [], 0)
    assert len(got) == N.ARTIFACT_MAX_FILES and got.truncated


# ---------------------------------------------------------------- budget

def _sparse(path, size=1 << 30):
    with open(str(path), "wb") as f:
        f.truncate(size)
    return str(path)


def _rows_by_path(manifest):
    return {r["path"]: r for r in manifest}


def test_sparse_gigabyte_is_listed_never_opened(tmp_path, cfg, monkeypatch):
    big = _sparse(tmp_path / "huge.json")
    small = _touch(tmp_path / "metrics.json", size=100)
    opened = []
    real_open = open

    def spy_open(path, *a, **kw):
        opened.append(str(path))
        return real_open(path, *a, **kw)
    monkeypatch.setattr(N, "open", spy_open, raising=False)  # module global shadows builtin
    tracemalloc.start()
    t0 = time.monotonic()
    gone, folder = str(tmp_path / "gone.json"), str(tmp_path)
    plan, manifest = N.plan_attachments(None, [big, small, gone, folder], 1 << 20,
                                        base=str(tmp_path))
    elapsed = time.monotonic() - t0
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    rows = _rows_by_path(manifest)
    assert rows[big]["size"] == 1 << 30 and rows[big]["disposition"] == "too large: " + big
    assert rows[small]["disposition"] == "attached"
    assert rows[gone]["disposition"] == "unreadable: No such file or directory"
    assert rows[folder]["disposition"] == "not a regular file" and len(manifest) == 4
    assert big not in opened and small in opened
    assert elapsed < 2 and peak < 32 << 20
    text = N.render_text(make_result(tmp_path), manifest)
    assert "huge.json" in text and "1.0 GiB" in text


def test_many_small_files_attach_zip_and_count_limit(tmp_path, monkeypatch):
    monkeypatch.setattr(N, "ZIP_MAX_MEMBERS", 50)
    paths = [_touch(tmp_path / "out" / ("m%03d.json" % i), size=500 + i) for i in range(100)]
    plan, manifest = N.plan_attachments(None, paths, 2 << 20, base=str(tmp_path))
    rows = _rows_by_path(manifest)
    assert sorted(rows) == sorted(paths) and len(manifest) == 100
    disp = [rows[p]["disposition"] for p in paths]
    assert disp.count("attached") == N.ATTACH_MAX_FILES
    assert disp.count("in zip (artifacts.zip)") == 50
    assert sum(d.startswith("over file count limit") for d in disp) == 30
    zipped = [it for it in plan if it["filename"] == "artifacts.zip"][0]
    names = zipfile.ZipFile(io.BytesIO(zipped["data"])).namelist()
    assert len(names) == 50 and all(n.startswith("out/m") for n in names)


def _log(tmp_path, name, data):
    p = tmp_path / "run" / name
    p.parent.mkdir(exist_ok=True)
    p.write_bytes(data)
    return str(p)


def test_log_whole_gzip_excerpt(tmp_path):
    small = _log(tmp_path, "small.log", b"hello\n" * 100)
    plan, man = N.plan_attachments(small, [], 1 << 20)
    assert man[0]["disposition"] == "attached" and plan[0]["data"] == b"hello\n" * 100

    lines = b"".join(b"epoch %d step %d loss 0.%03d\n" % (i // 1000, i, i * 7 % 1000)
                     for i in range(120000))
    big = _log(tmp_path, "big.log", lines)
    plan, man = N.plan_attachments(big, [], 1 << 20)
    assert man[0]["disposition"].startswith("attached gzip-compressed")
    assert plan[0]["filename"] == "big.log.gz" and gzip.decompress(plan[0]["data"]) == lines
    assert plan[0]["cost"] <= 1 << 20

    noise = os.urandom(3 << 20).hex().encode()
    noisy = _log(tmp_path, "noisy.log", b"FIRST LINE\n" + noise + b"\nLAST LINE\n")
    plan, man = N.plan_attachments(noisy, [], 256 << 10)
    assert man[0]["disposition"].startswith("excerpt attached (head+tail)")
    assert noisy in man[0]["disposition"] and man[0]["size"] == len(noise) + 22
    data = plan[0]["data"]
    assert data.startswith(b"FIRST LINE\n") and data.endswith(b"LAST LINE\n")
    assert ("the full log is %s" % noisy).encode() in data and plan[0]["cost"] <= 256 << 10


def test_log_unreadable_and_tiny_budget(tmp_path):
    plan, man = N.plan_attachments(str(tmp_path / "missing.log"), [], 1 << 20)
    assert plan == [] and man[0]["disposition"].startswith("unreadable: No such file")
    big = _log(tmp_path, "x.log", b"y" * 100000)
    plan, man = N.plan_attachments(big, [], 1500)
    assert plan == [] and man[0]["disposition"].startswith("budget exhausted: " + big)


@pytest.mark.parametrize("budget", [48 << 10, 200 << 10, 1 << 20, 5 << 20])
def test_message_never_exceeds_budget_and_lists_everything(tmp_path, cfg, budget):
    cfg["budget"] = budget
    res = tmp_path / "results"
    paths = [_touch(res / ("f%d.csv" % s), size=s) for s in (100, 5000, 60000, 400000, 3000000)]
    paths.append(_sparse(res / "sparse.json"))
    paths += [_touch(res / "small" / ("s%02d.txt" % i), size=300) for i in range(30)]
    paths.append(str(tmp_path / "vanished.json"))  # listed but gone: unreadable
    log = _log(tmp_path, "job.log", os.urandom(600000).hex().encode())
    r = make_result(tmp_path, log_path=log, tail=["line %d" % i for i in range(60)])
    cfg["artifacts"] = ["results/**/*", "vanished.json"]
    os.symlink(str(tmp_path / "nowhere"), str(tmp_path / "vanished.json"))
    msg, manifest = N.build_message(r, cfg)
    assert wire_size(msg) <= budget
    rows = _rows_by_path(manifest)
    assert set(paths) <= set(rows)
    assert rows[paths[-1]]["disposition"].startswith("unreadable: ")
    assert rows[log]["kind"] == "log" and rows[log]["disposition"]
    assert all(row["disposition"] for row in manifest)
    text = parse(msg.as_bytes()).get_body(("plain",)).get_content()
    for p in paths[:-1]:
        assert os.path.relpath(p, str(tmp_path)) in text


def test_budget_ladder_drops_and_says_so(tmp_path, cfg):
    # a plan made for a bigger budget (estimates off) must still end under the real one
    p = _touch(tmp_path / "res" / "a.csv", size=70 << 10)
    r = make_result(tmp_path)
    plan, manifest = N.plan_attachments(r.log_path, [p], 1 << 20, base=str(tmp_path))
    assert _rows_by_path(manifest)[p]["disposition"] == "attached"
    msg = N._fit_budget(r, cfg, plan, manifest, 60 << 10)
    assert wire_size(msg) <= 60 << 10
    assert _rows_by_path(manifest)[p]["disposition"].startswith(
        "budget exhausted: %s (dropped to keep the message under" % p)
    assert "dropped to keep the message" in parse(msg.as_bytes()).get_body(
        ("plain",)).get_content()
    tiny = N._fit_budget(r._replace(tail=["z" * 400] * 60), cfg, [], manifest, 12 << 10)
    assert wire_size(tiny) <= 12 << 10  # text only, fewer tail lines


def test_a_budget_too_small_for_the_tail_says_so_instead_of_promising_lines(tmp_path, cfg):
    """--budget 1K: the body said "Last 0 lines of output:" and the log's row promised "last
    lines in the body". A thinned body must say what was left out and where the log is."""
    log = _log(tmp_path, "job.log", b"".join(b"line %d\n" % i for i in range(200)))
    cfg["budget"] = 1024
    r = make_result(tmp_path, log_path=log, tail=["line %d" % i for i in range(140, 200)])
    msg, manifest = N.build_message(r, cfg)
    text = parse(msg.as_bytes()).get_body(("plain",)).get_content()
    assert "Last 0 lines" not in text
    assert "no room for its last lines" in _rows_by_path(manifest)[log]["disposition"]
    assert "fit the 1.0 KiB message budget" in text and log in text


def test_a_tight_budget_keeps_as_many_last_lines_as_fit_not_twenty_or_none(tmp_path, cfg):
    """The tail was thinned in steps of all, 20 and 0 lines: room for 45 lines showed 20."""
    log = _log(tmp_path, "job.log", b"x\n")
    tail = ["line %03d " % i + "y" * 90 for i in range(60)]
    r = make_result(tmp_path, log_path=log, tail=tail)
    _, manifest = N.plan_attachments(log, [], 1 << 20, base=str(tmp_path))

    def text_only(keep):  # the message the thinning ladder builds with `keep` last lines
        return N._assemble(N._thinned(r, keep, 9 << 10, manifest), cfg, [], manifest, html=False)
    budget = (wire_size(text_only(44)) + wire_size(text_only(45))) // 2  # room for 44 lines, not 45
    msg = N._fit_budget(r, cfg, [], manifest, budget)
    assert wire_size(msg) <= budget
    text = parse(msg.as_bytes()).get_body(("plain",)).get_content()
    shown = [line for line in tail if line in text]
    assert len(shown) == 44 and shown == tail[-44:]
    assert "only the last 44 lines" in text


# ---------------------------------------------------------------- delivery: real servers

def _deliver(tmp_path, cfg, **result_kw):
    msg, _ = N.build_message(make_result(tmp_path, **result_kw), cfg)
    t0 = time.monotonic()
    out = N.deliver(msg, cfg)
    return out, time.monotonic() - t0


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


def test_deliver_never_raises_on_garbage(cfg):
    out = N.deliver(object(), cfg)
    assert out["outcome"] == "outbox" and "internal error" in out["detail"]


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
    counts = N.resend_outbox(cfg)
    assert counts["sent"] == 0 and counts["remaining"] == 1
    assert "no mail transport" in counts["details"][0]


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


def test_time_row_uses_the_limit_read_at_the_start(tmp_path):
    """Slurm before 23.02 sets no SLURM_JOB_END_TIME: the limit scontrol gave at the start
    (limit_s, and end_time while the job ran) is what the Time row measures against."""
    r = make_result(tmp_path)
    start = r.start
    timed = r._replace(end=start + 3500, scheduler={"kind": "slurm", "job_id": "5", "limit_s": 3600.0,
                                                     "end_time": start + 3550})
    assert N._time_limit_text(timed) == "58m of 1h00m allowed (50s left)"  # to the job's end
    no_end = timed._replace(scheduler={"kind": "slurm", "job_id": "5", "limit_s": 3600.0})
    assert N._time_limit_text(no_end) == "58m of 1h00m allowed (1m left)"
    assert N._time_limit_text(r._replace(scheduler={"kind": "slurm", "job_id": "5"})) is None


def test_time_row_left_out_when_the_limit_known_is_garbage_or_stale(tmp_path):
    """SLURM_JOB_END_TIME=1 gave 'Time: 0s of 0s allowed'; a limit raised by the admin after
    the start gave '1m of 1m allowed (0s left)' for a job that ran 75 s and failed."""
    r = make_result(tmp_path)
    start = r.start
    garbage = r._replace(end=start + 30, scheduler={"kind": "slurm", "job_id": "5", "end_time": 1.0})
    assert N._time_limit_text(garbage) is None
    stale = r._replace(end=start + 75, status="FAILED",
                       scheduler={"kind": "slurm", "job_id": "5", "limit_s": 60.0, "end_time": start + 60})
    assert N._time_limit_text(stale) is None
    at_limit = stale._replace(status="TIMEOUT")
    assert N._time_limit_text(at_limit) == "1m of 1m allowed (0s left)"


def test_a_small_budget_gives_up_the_html_part_before_the_attachments(tmp_path, cfg):
    """--budget 10K: the 2 KiB log and a 1 KB result were dropped as 'budget exhausted' while
    the HTML alternative stayed: the plain text says the same, the files do not come back.
    In a short folder of its own: the message holds its paths, and a user's pytest folder
    (/tmp/pytest-of-LOGIN/...) is longer than root's, which left the log out at 10K."""
    import shutil
    import tempfile
    tmp_path = pathlib.Path(tempfile.mkdtemp(prefix="b", dir="/tmp"))
    try:
        _small_budget_case(tmp_path, cfg)
    finally:
        shutil.rmtree(str(tmp_path), ignore_errors=True)


def _small_budget_case(tmp_path, cfg):
    cfg["budget"] = 10 * 1024
    log = _log(tmp_path, "job.log", b"".join(b"step %d loss 0.5\n" % i for i in range(120)))
    small = _touch(tmp_path / "res" / "small.txt", size=1000)
    r = make_result(tmp_path, log_path=log, tail=["step %d loss 0.5" % i for i in range(100, 120)])
    cfg["artifacts"] = [small]
    msg, manifest = N.build_message(r, cfg)
    assert wire_size(msg) <= cfg["budget"]
    names = [part.get_filename() for part in msg.iter_attachments()]
    assert set(names) & {"job.log", "job.log.gz"} and "small.txt" in names, (names, manifest)

"""The message a researcher acts on: subject, text and HTML parts, headers, the first screen's
rows, attachments and the size budget, one thread per run, hostile output shown as text, and
when a message is sent at all (stalled notices, your own Ctrl-C). Calls gpualert.py's functions
directly (loaded by path) and runs the real file; fixtures: tests/conftest.py."""
import email
import email.policy
import gzip
import io
import os
import pathlib
import shutil
import signal
import subprocess
import tempfile
import time
import tracemalloc
import unittest
import zipfile

os.environ["TZ"] = "UTC"
time.tzset()

import pytest

from _load import load_gpualert
from messages import HOUR, REPRESENTATIVE, _touch, make_result
from wrapper_helpers import (PY, SCRIPT, _smtp_sink, addressed, base, child, first_screen,
                             isolated_env, outbox_messages, parse, plain_text, row, run_gpualert,
                             run_json)


N = load_gpualert()


def wire_size(msg):
    return N._wire_size(msg)


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


def test_time_row_uses_the_limit_read_at_the_start(tmp_path):
    """Slurm before 23.02 sets no SLURM_JOB_END_TIME: the limit scontrol gave at the start
    (limit_s, and end_time while the job ran) is what the Time row measures against."""
    r = make_result(tmp_path)
    start = r.start
    timed = r._replace(end=start + 3500, scheduler={"kind": "slurm", "job_id": "5", "limit_s": 3600.0,
                                                     "end_time": start + 3550})
    assert N._time_limit_text(timed) == "58m of 1h00m allowed (50s left)"  # to the job's end
    no_end = timed._replace(scheduler={"kind": "slurm", "job_id": "5", "limit_s": 3600.0})
    assert N._time_limit_text(no_end) == "58m of 1h00m allowed (1m40s left)"
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
    assert N._time_limit_text(at_limit) == "1m15s of 1m allowed (0s left)"


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


class TestSubjects(unittest.TestCase):
    def test_array_tasks_differ_within_50_chars(self):
        r = REPRESENTATIVE["timeout_after_warning"]()
        r = r._replace(classification=N.Classification("cuda_runtime_error", None, None, None, None, None))
        heads = set()
        for task in range(10):
            sched = dict(r.scheduler, array_task_id=str(task), label="4299_%d" % task)
            s = N.render_subject(r._replace(scheduler=sched, name="a_rather_long_job_name_here"))
            heads.add(s[:50])
            self.assertIn("4299_%d" % task, s[:50])
            self.assertIn("TIMEOUT", s[:50])
        self.assertEqual(len(heads), 10)

    def test_folded_subject_has_no_empty_first_line(self):
        for name in ("x" * 200, "tr\u00e4in-" * 30, "a/" * 60, "train.py"):
            for host in ("gpu041", "node-" + "y" * 80):
                r = REPRESENTATIVE["failure_with_ranks"]()._replace(name=name, host=host)
                msg, _ = N.build_message(r, dict(N.default_config(), to=["a@b.c"]))
                # as sent: the message's own policy, with LF and with SMTP's CRLF
                for data in (N._wire_bytes(msg), msg.as_bytes(policy=msg.policy.clone(linesep="\r\n"))):
                    head = data.split(b"\n\n")[0].split(b"\r\n\r\n")[0]
                    line = [l for l in head.splitlines() if l.startswith(b"Subject:")][0]
                    self.assertTrue(line[len(b"Subject:"):].strip().startswith(b"[gpualert]"), line)


class TestThread(unittest.TestCase):
    """The real wrapper under a (simulated) Slurm job: the time-limit warning and the final
    message are one thread, the warning tells the real start and command, and the final one
    says the warning was passed on and what the job wrote after it."""

    def test_warning_and_final_are_one_thread(self):
        import signal
        sink = _smtp_sink(self)
        from wrapper_helpers import PY, SCRIPT, child, isolated_env
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="gpualert-thread-"))
        self.addCleanup(shutil.rmtree, str(tmp), True)
        code = ("import signal, sys, time\n"
                "def save(s, f):\n"
                "    open('ckpt.pt', 'wb').write(b'w' * 10)\n"
                "    print('checkpoint saved', flush=True)\n"
                "    sys.exit(0)\n"
                "signal.signal(signal.SIGUSR1, save)\n"
                "print('step=1 loss=2.0', flush=True)\n"
                "time.sleep(1.5)\n"  # the warning's Duration must be the run's, not 0s
                "print('ready', flush=True)\n"
                "time.sleep(30)\n")
        env = isolated_env(tmp, SLURM_JOB_ID="4242", SLURM_JOB_NAME="train", GPUALERT_SENDMAIL="none")
        args = ["--log-dir", str(tmp / "logs"), "--outbox", str(tmp / "outbox"), "--to", "o@example.org",
                "--smtp", sink.addr, "--"]
        started = time.time()
        proc = subprocess.Popen([PY, SCRIPT] + args + child(code), env=env, cwd=str(tmp),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        while proc.stdout.readline() not in (b"ready\n", b""):
            pass
        proc.send_signal(signal.SIGUSR1)
        proc.communicate(timeout=60)
        msgs = [email.message_from_bytes(m.data, policy=email.policy.default) for m in sink.wait_for(2, timeout=30)]
        warning = [m for m in msgs if m["X-Gpualert-Status"] == "WARNING"][0]
        final = [m for m in msgs if m["X-Gpualert-Status"] == "SUCCESS"][0]
        ids = {m["Message-ID"] for m in msgs}
        self.assertEqual(len(ids), 2)
        later, earlier = (final, warning) if final["In-Reply-To"] else (warning, final)
        self.assertEqual(later["In-Reply-To"], earlier["Message-ID"])
        self.assertEqual(later["References"], earlier["Message-ID"])
        text = warning.get_body(("plain",)).get_content()
        self.assertIn("ready", text)
        self.assertRegex(text, r"Command:\s+\S*python\S* -c")
        start_line = [l for l in text.splitlines() if "Started:" in l][0]
        self.assertIn(time.strftime("%H:%M:%S", time.localtime(started))[:5], start_line)
        self.assertRegex(text, r"Duration:\s+[1-9]\d*s")
        body = final.get_body(("plain",)).get_content()
        self.assertIn("earlier notice: WARNING at", body)
        self.assertRegex(body, r"SIGUSR1 at [\d:]+ was passed on to the job; it then wrote \S*ckpt.pt")


class TestHostile(unittest.TestCase):
    """Inputs a shared cluster produces: absurd values, giant lines, crowded folders."""

    def test_absurd_metric_values_still_give_the_full_message(self):
        text = "".join("step=%d loss=%s\n" % (i, v) for i, v in enumerate(
            ["1e308", "-1e308", "nan", "inf", "5", "-inf", "1e308"]))
        r = REPRESENTATIVE["success_with_metrics"]()._replace(metrics=N.metrics_from_chunks([text]))
        msg, _ = N.build_message(r, dict(N.default_config(), to=["a@b.c"]))
        plain = msg.get_body(("plain",)).get_content()
        self.assertIn("What you need:", plain)
        self.assertIn("loss", plain)
        self.assertNotIn("rendering failed", msg["Subject"])

    def test_a_log_without_line_breaks(self):
        d = tempfile.mkdtemp(prefix="gpualert-hostile-")
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "output.log")
        with open(path, "wb") as f:
            f.write(b"loss=1.0 " * (4 * 1024 * 1024 // 9))  # one 4 MiB line (a tqdm bar never ended)
        t = time.perf_counter()
        self.assertEqual(N.extract_log_metrics(path), {})
        self.assertLess(time.perf_counter() - t, 5.0)  # generous: bounded work, not a timing claim

    def test_newest_checkpoint_and_a_crowded_folder(self):
        d = tempfile.mkdtemp(prefix="gpualert-ckpt-")
        self.addCleanup(shutil.rmtree, d, True)
        crowd = os.path.join(d, "data")
        os.makedirs(crowd)
        for i in range(N.CHECKPOINT_MAX_SCAN + 500):
            open(os.path.join(crowd, "x%05d.npy" % i), "w").close()
        os.makedirs(os.path.join(d, "ckpt"))
        old = os.path.join(d, "ckpt", "step_100.pt")
        new = os.path.join(d, "ckpt", "step_200.pt")
        for path, age in ((old, 100), (new, 10)):
            with open(path, "wb") as f:
                f.write(b"w")
            os.utime(path, (time.time() - age, time.time() - age))
        found = N.newest_checkpoint(d, time.time() - 1000)
        self.assertEqual(found["path"], new)
        self.assertIsNone(N.newest_checkpoint(d, time.time() + 1000))  # older than the run: not its

    def test_log_attachments_are_text(self):
        item = N._item("output.log", b"x", [])
        self.assertEqual((item["maintype"], item["subtype"]), ("text", "plain"))
        self.assertEqual(N._item("metrics.jsonl", b"{}", [])["maintype"], "text")
        self.assertEqual(N._item("output.log.gz", b"x", [])["subtype"], "gzip")

    def test_byte_counts_are_readable(self):
        self.assertEqual(N.readable_bytes("tried to allocate 68719476736 bytes"),
                         "tried to allocate 64.0 GiB (68719476736 bytes)")
        self.assertEqual(N.readable_bytes("read 512 bytes"), "read 512 bytes")


class TestOwnCtrlC(unittest.TestCase):
    """A person presses Ctrl-C at the terminal the run started from (a real pty)."""

    def run_at_terminal(self, *options):
        import pty
        import select
        sink = _smtp_sink(self)
        from wrapper_helpers import PY, SCRIPT, isolated_env
        tmp = tempfile.mkdtemp(prefix="gpualert-ctrlc-")
        self.addCleanup(shutil.rmtree, tmp, True)
        env = isolated_env(pathlib.Path(tmp), GPUALERT_SENDMAIL="none")
        argv = [PY, SCRIPT, "--smtp", sink.addr, "--to", "o@example.org", "--log-dir", tmp + "/logs",
                "--outbox", tmp + "/outbox"] + list(options) + [
                "--", PY, "-c", "import time; print('ready', flush=True); time.sleep(60)"]
        pid, master = pty.fork()
        if pid == 0:  # the child: a session whose controlling terminal is the pty
            # as a person's shell starts it: a harness started in the background (`cmd &`
            # in a script) ignores SIGINT, which exec would hand down to the wrapper
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.execve(PY, argv, env)
        out, deadline = b"", time.monotonic() + 30
        while b"ready" not in out and time.monotonic() < deadline:
            if select.select([master], [], [], 0.5)[0]:
                out += os.read(master, 4096)
        os.write(master, b"\x03")  # the terminal's interrupt character: SIGINT from the kernel
        while time.monotonic() < deadline:
            if select.select([master], [], [], 0.5)[0]:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
        _, status = os.waitpid(pid, 0)
        os.close(master)
        return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1, out, sink

    def test_no_mail_for_your_own_ctrl_c(self):
        code, out, sink = self.run_at_terminal()
        self.assertEqual(code, 130, out)
        self.assertIn(b"your own Ctrl-C", out)
        self.assertEqual(sink.wait_for(1, timeout=1.0), [])

    def test_notify_always_given_sends_it(self):
        code, out, sink = self.run_at_terminal("--notify", "always")
        self.assertEqual(code, 130, out)
        self.assertEqual(len(sink.wait_for(1, timeout=10)), 1)


class TestAdviceFitsTheCause(object):
    def test_a_missing_module_under_slurm_is_not_offered_a_requeue(self, tmp_path):
        env = isolated_env(tmp_path, SLURM_JOB_ID="17", SLURM_SUBMIT_DIR=str(tmp_path))
        subprocess.run([PY, SCRIPT] + base(tmp_path) + ["--"] + child("import nosuchmodule_i21"),
                       env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
        screen = first_screen(tmp_path)
        assert "missing_module" in screen
        assert "requeue 17" not in plain_text(tmp_path)
        assert row(screen, "Resubmit") == ("sbatch again from %s once the cause is fixed "
                                           "(a requeue reruns the same failure)" % tmp_path)

    def test_a_time_limit_asks_for_more_time_with_the_figure(self):
        from messages import timeout_after_warning
        result = timeout_after_warning()
        rows = dict(N.brief_for(result).fields)
        assert "requeue" not in rows["Resubmit"]
        assert rows["Resubmit"].startswith("sbatch --time=17:45:00 again, resuming from the last checkpoint")
        assert "its limit was 12h00m; it reached epoch 75/100" in rows["Resubmit"]

    def test_no_time_advice_below_the_real_limit(self):
        # attack 2, finding 4: UNLIMITED (or a limit never read) is no "its limit was 6s"
        from messages import timeout_after_warning
        result = timeout_after_warning()
        sched = dict(result.scheduler, limit_s=None, end_time=None)
        for extra in ({"unlimited": True}, {}):
            rows = dict(N.brief_for(result._replace(scheduler=dict(sched, **extra))).fields)
            assert "--time=" not in rows["Resubmit"] and "its limit was" not in rows["Resubmit"], rows
        rows = dict(N.brief_for(result._replace(scheduler=dict(sched, unlimited=True))).fields)
        assert "UNLIMITED" in rows["Resubmit"]

    def test_a_preemption_is_requeued(self):
        from messages import timeout_after_warning
        result = timeout_after_warning()
        c = result.classification._replace(cls="preempted", rule="slurm_preempted")
        rows = dict(N.brief_for(result._replace(classification=c, status="PREEMPTED")).fields)
        assert rows["Resubmit"].startswith("scontrol requeue 4299_7")  # the task, never the whole array

    def test_a_memory_error_under_ulimit_v_names_the_limit(self, tmp_path):
        limit_kib = 700000
        code = "x = bytearray(2 << 30)"
        cmd = "ulimit -v %d; exec \"$@\"" % limit_kib
        subprocess.run(["bash", "-c", cmd, "bash", PY, SCRIPT] + base(tmp_path) + ["--"] + child(code),
                       env=isolated_env(tmp_path), cwd=str(tmp_path), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
        screen = first_screen(tmp_path)
        assert "ram_oom" in screen, screen
        advice = row(screen, "Next")
        assert "address-space limit (ulimit -v: %s)" % N._format_size(limit_kib * 1024) in advice
        assert "request more memory" not in advice

    def test_gpualerts_own_timeout_says_so(self, tmp_path):
        subprocess.run([PY, SCRIPT] + base(tmp_path) + ["--timeout", "1", "--", "sleep", "20"],
                       env=isolated_env(tmp_path), cwd=str(tmp_path), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
        advice = row(first_screen(tmp_path), "Next")
        assert advice.startswith("gpualert's own --timeout stopped the command, not the scheduler. "
                                 "Rerun with a longer --timeout"), advice
        assert "ask for more time" not in advice


G = load_gpualert()


def test_a_failing_artifact_discovery_is_said_in_the_message(tmp_path, monkeypatch):
    def broken(*args, **kw):
        raise PermissionError(13, "Permission denied", str(tmp_path))
    monkeypatch.setattr(G, "find_artifacts", broken)
    result = G.make_result("FAILED", "job", exit_code=1, cwd=str(tmp_path), start=1.0, end=2.0)
    msg, _ = G.build_message(result, {"to": ["a@b.c"], "budget": 1 << 20, "artifacts": ["auto"]})
    text = msg.get_body(("plain",)).get_content()
    assert "artifact discovery failed (PermissionError" in text


def test_an_unreadable_folder_in_the_artifact_search_is_said(request):
    """A folder the run's user cannot read (another user's, mode 0700) is named in the message."""
    import glob
    import shutil
    import subprocess
    import sys
    import tempfile
    from wrapper_helpers import SCRIPT, isolated_env
    work = tempfile.mkdtemp(prefix="gpualert-unreadable-")
    request.addfinalizer(lambda: shutil.rmtree(work, ignore_errors=True))
    os.chmod(work, 0o777)
    locked = os.path.join(work, "locked")
    os.mkdir(locked, 0o700)
    argv = [sys.executable, SCRIPT, "--dry-run", "--artifacts", "auto",
            "--log-dir", os.path.join(work, "logs"), "--",
            "/bin/sh", "-c", "exit 1"]
    env = isolated_env(work, HOME=os.path.join(work, "home"))  # cwd is not home: auto looks
    if os.geteuid() == 0:  # root reads every folder: run as a second user
        user = request.getfixturevalue("other_user")
        proc = user.run([sys.executable, user.script] + argv[2:], env=env, cwd=work)
    else:
        os.chmod(locked, 0)
        request.addfinalizer(lambda: os.chmod(locked, 0o700))
        proc = subprocess.run(argv, env=env, cwd=work, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, timeout=60)
    assert proc.returncode == 1, proc.stderr
    (saved,) = glob.glob(os.path.join(work, "logs", "*", "*.eml"))
    import email
    import email.policy
    with open(saved, "rb") as handle:
        msg = email.message_from_binary_file(handle, policy=email.policy.default)
    text = msg.get_body(("plain",)).get_content()
    assert "artifact search could not read 1 folder(s): %s: Permission denied" % locked in text


# ---- what a message carries ----

def test_by_default_only_the_log_is_attached(tmp_path, smtp_plain):
    code = "open('metrics.jsonl', 'w').write('{}'); open('kernel-1.json', 'w').write('{\"key\": \"hmac\"}')"
    run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--"] + child(code))
    msg = parse(smtp_plain.wait_for(1)[0].data)
    assert [p.get_filename() for p in msg.iter_attachments()] == ["output.log"]


def test_header_injection_through_the_job_name_is_neutralised(tmp_path, smtp_plain):
    args = addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--name", "x\r\nBcc: victim@example.org", "--"]
    run_gpualert(tmp_path, args + child("raise SystemExit(1)"))
    received = smtp_plain.wait_for(1)[0]
    assert received.rcpt_tos == ["owner@example.org"]
    assert parse(received.data)["Bcc"] is None


def test_sparse_gigabyte_artifact_is_listed_not_attached_and_budget_holds(tmp_path, smtp_plain):
    big = tmp_path / "weights.bin"
    with open(str(big), "wb") as handle:
        handle.truncate(1 << 30)
    (tmp_path / "small.csv").write_text("a,b\n1,2\n")
    args = addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--budget", "200K",
                             "--artifacts", "*.bin", "--artifacts", "*.csv", "--"]
    run_gpualert(tmp_path, args + child("print('done')"))
    data = smtp_plain.wait_for(1)[0].data
    assert len(data) <= 200 * 1024
    manifest = dict((os.path.basename(row["path"]), row) for row in run_json(tmp_path)["manifest"])
    assert manifest["weights.bin"]["size"] == 1 << 30
    assert manifest["weights.bin"]["disposition"].startswith("too large")
    assert manifest["small.csv"]["disposition"] == "attached"
    assert "weights.bin" in parse(data).get_body(("plain",)).get_content()


def test_a_silent_child_earns_one_stalled_notice_and_the_final_message_says_so(tmp_path, smtp_plain):
    code = "import time; print('epoch 1', flush=True); time.sleep(3.5); print('epoch 2')"
    proc = run_gpualert(tmp_path, addressed(tmp_path) + ["--smtp", smtp_plain.addr, "--stall", "1s", "--"] + child(code))
    assert proc.returncode == 0
    msgs = smtp_plain.wait_for(2)
    subjects = sorted(parse(m.data)["Subject"] for m in msgs)
    assert subjects[0].startswith("[gpualert] STALLED") and subjects[1].startswith("[gpualert] SUCCESS")
    final = [parse(m.data) for m in msgs if "SUCCESS" in parse(m.data)["Subject"]][0]
    assert "silent for" in final.get_body(("plain",)).get_content()


# ---- bidi controls in the job's output ----

def test_bidi_controls_in_the_output_cannot_reorder_the_message(tmp_path):
    """A right-to-left override (U+202E) printed by the job reached the subject, the body and
    the HTML unchanged, so a line could display as something it is not. (The attached log
    stays the job's raw bytes.)"""
    import email
    argv = [PY, SCRIPT, "--max-per-hour", "0", "--sendmail", "none"] + base(tmp_path) + ["--"] + child(
        "import sys; print('step 1'); sys.stderr.write('ValueError: bad \\u202egpj.exe\\u2066x\\n');"
        " raise SystemExit(1)")
    proc = subprocess.run(argv, env=isolated_env(tmp_path), cwd=str(tmp_path), timeout=60,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.returncode == 1, proc.stderr
    [path] = outbox_messages(tmp_path)
    with open(path, "rb") as handle:
        msg = email.message_from_binary_file(handle)
    texts = [str(msg["Subject"])] + [part.get_payload(decode=True).decode("utf-8", "replace")
                                    for part in msg.walk()
                                    if part.get_content_type() in ("text/plain", "text/html")
                                    and part.get_content_disposition() != "attachment"]
    assert any("gpj.exe" in text for text in texts), texts
    for text in texts:
        assert "\u202e" not in text and "\u2066" not in text, text

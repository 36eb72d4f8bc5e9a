"""`runs`, `digest` and `prune` (issue 24): black-box through the real file first, then the
pure core (summaries, filters, suspect nodes, the subject)."""
import email
import email.policy
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _load import load_gpualert  # noqa: E402
from wrapper_helpers import PY, child, isolated_env, run_gpualert, wait_for  # noqa: E402

N = load_gpualert()

OOM = ("import sys\nprint('step 10 loss 2.1', flush=True)\n"
       "sys.stderr.write('Traceback (most recent call last):\\n  File \"train.py\", line 3, in <module>\\n'\n"
       "                 'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\\n')\n"
       "sys.exit(1)\n")
XID = ("import sys\nprint('step 10 loss 2.1', flush=True)\n"
       "print('NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus.', flush=True)\n"
       "sys.stderr.write('RuntimeError: CUDA error: unspecified launch failure\\n')\nsys.exit(1)\n")


def _flags(tmp):
    return ["--log-dir", str(tmp / "logs"), "--outbox", str(tmp / "outbox")]


def _run(tmp, name, code, env=None):
    r = run_gpualert(tmp, _flags(tmp) + ["--name", name, "--"] + child(code), env=env)
    return r


def _records(tmp):
    return sorted(glob.glob(str(tmp / "logs" / "*" / "run.json")))


def _set_fields(path, **fields):
    """What another host sharing the state directory would have written (its name), or an
    older run (its times)."""
    with open(path) as f:
        record = json.load(f)
    record.update(fields)
    with open(path, "w") as f:
        json.dump(record, f)


def _twelve_runs(tmp):
    """8 ok, 2 cuda_oom (on gpu03), 2 GPU faults (Xid 79, on gpu17), in this order."""
    plan = [("ok%02d" % i, "print('done')") for i in range(1, 5)] + [
        ("oom1", OOM), ("xid1", XID), ("ok05", "print('done')"), ("oom2", OOM),
        ("ok06", "print('done')"), ("xid2", XID), ("ok07", "print('done')"), ("ok08", "print('done')")]
    for name, code in plan:
        _run(tmp, name, code)
    hosts = {"oom": "gpu03", "xid": "gpu17"}
    for path in _records(tmp):
        with open(path) as f:
            name = json.load(f)["name"]
        if name[:3] in hosts:
            _set_fields(path, host=hosts[name[:3]])
    return [name for name, _ in plan]


@pytest.fixture(scope="module")
def twelve(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("twelve")
    names = _twelve_runs(tmp)
    return tmp, names


def _json_lines(out):
    return [json.loads(line) for line in out.decode().splitlines() if line.strip()]


def test_runs_json_lists_all_twelve_newest_first_and_failed_gives_the_four(twelve):
    tmp, names = twelve
    r = run_gpualert(tmp, ["runs", "--json"] + _flags(tmp))
    assert r.returncode == 0, r.stderr
    rows = _json_lines(r.stdout)
    assert [row["name"] for row in rows] == names[::-1]
    assert all(set(N.RUN_FIELDS) == set(row) for row in rows)
    assert all(row["status"] and ("class" in row) for row in rows)
    classes = dict((row["name"], row["class"]) for row in rows)
    assert classes["oom1"] == classes["oom2"] == "cuda_oom"
    assert classes["xid1"] == classes["xid2"] == "gpu_hardware"
    r = run_gpualert(tmp, ["runs", "--failed", "--json"] + _flags(tmp))
    assert sorted(row["name"] for row in _json_lines(r.stdout)) == ["oom1", "oom2", "xid1", "xid2"]
    text = run_gpualert(tmp, ["runs", "--failed"] + _flags(tmp)).stdout.decode()
    assert len(text.splitlines()) == 4 and "gpu_hardware: Xid 79" in text and "gpu17" in text
    node = _json_lines(run_gpualert(tmp, ["runs", "--node", "gpu17", "--json"] + _flags(tmp)).stdout)
    assert sorted(row["name"] for row in node) == ["xid1", "xid2"]
    assert _json_lines(run_gpualert(tmp, ["runs", "--since", "1h", "--json"] + _flags(tmp)).stdout) == rows


def test_digest_sends_one_message_that_counts_by_class_and_names_the_suspect_node(twelve, smtp_plain):
    tmp, _ = twelve
    r = run_gpualert(tmp, ["digest", "--since", "1h", "--smtp", smtp_plain.addr, "--to", "me@example.org"]
                     + _flags(tmp))
    assert r.returncode == 0, r.stderr
    assert len(smtp_plain.wait_for(1)) == 1
    assert len(smtp_plain.messages) == 1  # the command has ended: nothing more will come
    msg = email.message_from_bytes(smtp_plain.messages[0].data, policy=email.policy.default)
    assert msg["Subject"].startswith("[gpualert] digest: 12 runs, 4 failed (cuda_oom 2, gpu_hardware 2)")
    assert msg["X-Gpualert-Status"] == "DIGEST"
    text = msg.get_body(("plain",)).get_content()
    html = msg.get_body(("html",)).get_content()
    assert "gpu17: 2 failures (gpu_hardware 2) - SUSPECT" in text
    assert "gpu03: 2 failures (cuda_oom 2)" in text and "gpu03: 2 failures (cuda_oom 2) - SUSPECT" not in text
    assert "GPU has fallen off the bus" in text  # the evidence against the node
    assert "8 SUCCESS" in text and "2 FAILED: cuda_oom" in text
    assert "SUSPECT" in html and "gpu17" in html
    assert "not delivered yet" in text  # the twelve runs' own messages wait in the outbox


def test_digest_with_no_runs_sends_nothing_unless_always(tmp_path):
    r = run_gpualert(tmp_path, ["digest", "--dry-run"] + _flags(tmp_path))
    assert r.returncode == 0 and b"nothing sent" in r.stdout
    assert not glob.glob(str(tmp_path / "outbox" / "*.eml"))
    r = run_gpualert(tmp_path, ["digest", "--always", "--dry-run"] + _flags(tmp_path))
    assert r.returncode == 0 and b"digest: 0 runs, 0 failed" in r.stdout and b"dry run" in r.stdout, r.stderr


def test_a_digest_that_cannot_be_sent_waits_in_the_outbox(tmp_path):
    _run(tmp_path, "one", "print('done')")
    before = set(glob.glob(str(tmp_path / "outbox" / "*.eml")))
    r = run_gpualert(tmp_path, ["digest"] + _flags(tmp_path))
    assert r.returncode == 1 and b"outbox" in r.stdout
    new = set(glob.glob(str(tmp_path / "outbox" / "*.eml"))) - before
    assert len(new) == 1 and b"digest: 1 run, 0 failed" in open(new.pop(), "rb").read()


@pytest.mark.parametrize("args", [["runs", "--since", "yesterday"], ["runs", "--since", "-1h"],
                                  ["digest", "--since", "7x"], ["prune"], ["prune", "--older-than", "soon"],
                                  ["runs", "--colour"], ["runs", "extra"]])
def test_bad_input_is_a_one_line_usage_error(tmp_path, args):
    r = run_gpualert(tmp_path, args + _flags(tmp_path))
    assert r.returncode == 2 and r.stdout == b""
    assert len(r.stderr.decode().strip().splitlines()) == 1 and b"error" in r.stderr


def test_corrupt_foreign_and_newer_records(tmp_path):
    _run(tmp_path, "good", "print('done')")
    logs = tmp_path / "logs"
    for name, content in (("corrupt", "{\"status\": \"FAI"), ("foreign", "[1, 2, 3]"),
                          ("binary", b"\xff\xfe\x00garbage"), ("nostatus", "{\"start\": 1}")):
        os.makedirs(str(logs / name))
        with open(str(logs / name / "run.json"), "wb") as f:
            f.write(content if isinstance(content, bytes) else content.encode())
    newer = dict(status="FAILED", name="from-0.9", start=time.time() - 60, end=time.time() - 30,
                 classification={"cls": "nccl", "detail": "watchdog", "confidence": 0.9},
                 host="gpu99", scheduler={"kind": "slurm", "job_id": "77"}, future_field={"x": 1},
                 gpu={"gpus": [{"index": 0}, {"index": 1}]})
    os.makedirs(str(logs / "newer"))
    with open(str(logs / "newer" / "run.json"), "w") as f:
        json.dump(newer, f)
    os.makedirs(str(logs / "still-running"))  # no run.json yet: not listed, no warning
    r = run_gpualert(tmp_path, ["runs", "--json"] + _flags(tmp_path))
    assert r.returncode == 0
    rows = _json_lines(r.stdout)
    assert [row["name"] for row in rows] == ["good", "from-0.9"]  # newest first
    assert rows[1]["class"] == "nccl" and rows[1]["gpus"] == 2 and rows[1]["job"] == "77"
    warnings = r.stderr.decode().strip().splitlines()
    assert len(warnings) == 4 and all("skipping" in w for w in warnings)
    for name in ("corrupt", "foreign", "binary", "nostatus"):
        assert sum(name + "/run.json" in w for w in warnings) == 1
    # the index caches, it never decides: a broken index, then a rewritten record
    index = str(logs / N.RUNS_INDEX_NAME)
    assert os.path.exists(index)
    with open(index, "w") as f:
        f.write("{broken")
    assert _json_lines(run_gpualert(tmp_path, ["runs", "--json"] + _flags(tmp_path)).stdout) == rows
    newer["classification"]["cls"] = "segfault"
    newer["name"] = "rewritten-name"
    with open(str(logs / "newer" / "run.json"), "w") as f:
        json.dump(newer, f)
    rows2 = _json_lines(run_gpualert(tmp_path, ["runs", "--json"] + _flags(tmp_path)).stdout)
    assert rows2[1]["class"] == "segfault" and rows2[1]["name"] == "rewritten-name"


def _tree_digest(folder):
    out = {}
    for path in sorted(glob.glob(os.path.join(folder, "**"), recursive=True)):
        if os.path.isfile(path):
            with open(path, "rb") as f:
                out[os.path.relpath(path, folder)] = hashlib.sha256(f.read()).hexdigest()
    return out


def test_prune_removes_only_old_ended_runs_and_leaves_the_outbox(tmp_path):
    for name in ("old1", "old2", "new1"):
        _run(tmp_path, name, "print('x' * 1000)")
    logs = tmp_path / "logs"
    now = time.time()
    dirs = dict((json.load(open(p))["name"], os.path.dirname(p)) for p in _records(tmp_path))
    for name in ("old1", "old2"):
        _set_fields(os.path.join(dirs[name], "run.json"), start=now - 41 * 86400, end=now - 40 * 86400)
    # old, but its message still waits in the outbox: the outbox names its run directory
    for path in glob.glob(str(tmp_path / "outbox" / "*.eml")):
        data = open(path, "rb").read()
        if dirs["old2"].encode() not in data:
            os.unlink(path)
    # a run whose wrapper died long ago on this host (no run.json; its pid is gone)
    gone = subprocess.Popen(["true"])
    gone.wait()
    dead = logs / "20260101-000000-dead-run"
    os.makedirs(str(dead))
    with open(str(dead / "output.log"), "w") as f:
        f.write("=== gpualert run started (gpualert 0.1.0) ===\ncommand: x\nhost: %s\npid: %d\n"
                % (N._hostname(short=True), gone.pid))
    os.utime(str(dead / "output.log"), (now - 50 * 86400, now - 50 * 86400))
    outbox_before = _tree_digest(str(tmp_path / "outbox"))
    dry = run_gpualert(tmp_path, ["prune", "--older-than", "30d", "--dry-run"] + _flags(tmp_path))
    assert dry.returncode == 0, dry.stderr
    assert dry.stdout.decode().count("would remove /") == 2
    assert dirs["old1"] in dry.stdout.decode() and str(dead) in dry.stdout.decode()
    assert os.path.isdir(dirs["old1"]) and os.path.isdir(str(dead))
    r = run_gpualert(tmp_path, ["prune", "--older-than", "30d"] + _flags(tmp_path))
    assert r.returncode == 0, r.stderr
    assert b"removed 2 run directories older than 30d00h" in r.stdout and b"freed" in r.stdout
    assert b"1 newer" in r.stdout and b"1 a message in the outbox names it" in r.stdout
    assert not os.path.exists(dirs["old1"]) and not os.path.exists(str(dead))
    assert os.path.isdir(dirs["old2"]) and os.path.isdir(dirs["new1"])
    assert _tree_digest(str(tmp_path / "outbox")) == outbox_before


def test_prune_never_touches_a_run_that_is_still_going(tmp_path):
    go = tmp_path / "go"
    code = ("import os, time\nprint('started', flush=True)\n"
            "while not os.path.exists(%r):\n    time.sleep(0.05)\n" % str(go))
    env = isolated_env(tmp_path)
    proc = subprocess.Popen([PY, N.__file__] + _flags(tmp_path) + ["--name", "long", "--"] + child(code),
                            env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        log = wait_for(lambda: [p for p in glob.glob(str(tmp_path / "logs" / "*" / "output.log"))
                                if b"started" in open(p, "rb").read()], 30, step=0.1, what="the run")[0]
        r = run_gpualert(tmp_path, ["prune", "--older-than", "0s"] + _flags(tmp_path))
        assert r.returncode == 0, r.stderr
        assert b"removed 0 run directories" in r.stdout and b"still running" in r.stdout
        assert os.path.exists(log)
    finally:
        open(str(go), "w").close()
        proc.communicate(timeout=60)
    assert proc.returncode == 0
    assert os.path.exists(os.path.join(os.path.dirname(log), "run.json"))


# ---- the pure core ----

def _summary(name, status="FAILED", cls=None, host="n1", end=1000.0, gpus=None, job=None, dur=100.0):
    return {"start": end - dur, "end": end, "start_iso": None, "end_iso": None, "duration_s": dur,
            "job": job, "job_id": job, "array_task": None, "name": name, "status": status,
            "class": cls, "detail": "d-" + name, "evidence": "e-" + name, "exit_status": 1,
            "signal": None, "host": host, "gpus": gpus, "log": "/l/" + name, "run_dir": "/r/" + name,
            "delivery": "sent", "rank": None}


def test_nccl_counts_against_a_node_only_when_it_repeats_there_and_nowhere_else():
    local = [_summary("a", cls="nccl", host="n1"), _summary("b", cls="nccl", host="n1")]
    nodes = N.failing_nodes(local)
    assert nodes[0]["host"] == "n1" and nodes[0]["suspect"]
    spread = local + [_summary("c", cls="nccl", host="n2")]
    assert not any(n["suspect"] for n in N.failing_nodes(spread))
    one_fault = [_summary("a", cls="gpu_hardware", host="n1"), _summary("b", cls="cuda_oom", host="n1")]
    assert not N.failing_nodes(one_fault)[0]["suspect"]
    two = [_summary("a", cls="gpu_hardware", host="n1"), _summary("b", cls="segfault", host="n1"),
           _summary("c", cls="segfault", host="n1")]
    assert N.failing_nodes(two)[0]["suspect"] and len(N.failing_nodes(two)[0]["hardware"]) == 3


def test_digest_counts_time_lost_and_gpu_hours_where_known():
    runs = [_summary("ok", status="SUCCESS", end=990.0),
            _summary("a", cls="cuda_oom", gpus=4, dur=3600.0, end=1000.0),
            _summary("b", cls="cuda_oom", gpus=None, dur=1800.0, end=995.0)]
    d = N.make_digest(N.select_runs(runs, 1000.0, 86400), 1000.0, 86400, undelivered=2)
    assert (d["runs"], d["failed"], d["lost_s"], d["gpu_hours"], d["gpu_runs"]) == (3, 2, 5400.0, 4.0, 1)
    assert N.digest_subject(d) == "[gpualert] digest: 3 runs, 2 failed (cuda_oom 2)"
    text = N.render_digest_text(d)
    assert "1h30m of wall time in 2 failed runs; 4.0 GPU-hours in the 1 whose GPU count is known" in text
    assert "newest: a on n1" in text and "2 messages not delivered yet" in text
    assert d["groups"][0]["newest"]["name"] == "a" and d["groups"][-1]["status"] == "SUCCESS"


def test_a_job_s_other_ranks_count_as_one_run_but_their_nodes_still_count():
    runs = [_summary("r0", cls="nccl", host="n1", job="77"), _summary("r1", cls="gpu_hardware", host="n2", job="77"),
            _summary("r2", cls="gpu_hardware", host="n2", job="78")]
    runs[1]["rank"], runs[2]["rank"] = 1, 3  # job 78's rank 0 left no record in the period
    d = N.make_digest(runs, 1000.0, 86400)
    assert (d["runs"], d["failed"], d["classes"]) == (2, 2, [("gpu_hardware", 1), ("nccl", 1)])
    assert [(n["host"], n["suspect"]) for n in d["nodes"]] == [("n2", True), ("n1", False)]
    assert N.run_summary({"status": "FAILED", "start": 1, "log_path": "/r/output.rank3.log"}, "/r")["rank"] == 3


def test_select_runs_filters():
    runs = [_summary("a", job="4242_7", end=100.0), _summary("b", status="SUCCESS", job="4243", end=200.0),
            _summary("c", host="gpu17.cluster", end=300.0)]
    assert [r["name"] for r in N.select_runs(runs, 300.0)] == ["c", "b", "a"]
    assert [r["name"] for r in N.select_runs(runs, 300.0, since_s=150)] == ["c", "b"]
    assert [r["name"] for r in N.select_runs(runs, 300.0, failed=True)] == ["c", "a"]
    assert [r["name"] for r in N.select_runs(runs, 300.0, node="gpu17")] == ["c"]
    assert [r["name"] for r in N.select_runs(runs, 300.0, job="4242")] == ["a"]
    assert [r["name"] for r in N.select_runs(runs, 300.0, job="4242_7")] == ["a"]
    sge = [_summary("t", job="5151.3")]  # an SGE array task
    assert [r["name"] for r in N.select_runs(sge, 300.0, job="5151")] == ["t"]


def _find_chromium():
    for path in ("/usr/bin/chromium", shutil.which("chromium") or "", shutil.which("chromium-browser") or ""):
        if path and os.path.exists(path):
            return path
    return None


@pytest.mark.skipif(not _find_chromium(), reason="no chromium here (.ci/chromium-setup.sh installs it)")
def test_digest_html_does_not_scroll_sideways_at_390px():
    import re
    runs = [_summary("a-very-long-run-name-" * 4, cls="gpu_hardware", host="gpu17", job="123456_789"),
            _summary("b", cls="gpu_hardware", host="gpu17"), _summary("ok", status="SUCCESS")]
    for r in runs:
        r["log"] = "/scratch/" + "deep/" * 30 + "output.log"
    html = N.render_digest_html(N.make_digest(runs, 1000.0, 86400, undelivered=1))
    tmp = tempfile.mkdtemp(prefix="gpualert-digest-html-")
    try:
        page = os.path.join(tmp, "probe.html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(html.replace("</body>", "<script>window.onload=function(){document.title='SW='+"
                                 "document.documentElement.scrollWidth+' CW='+"
                                 "document.documentElement.clientWidth}</script></body>"))
        argv = [_find_chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                "--disable-background-networking", "--no-first-run", "--hide-scrollbars",
                "--user-data-dir=" + os.path.join(tmp, "profile"), "--window-size=390,2000",
                "--virtual-time-budget=3000", "--dump-dom", "file://" + page]
        dom = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
        m = re.search(r"<title>SW=(\d+) CW=(\d+)</title>", dom.stdout.decode("utf-8", "replace"))
        assert m, dom.stderr.decode()[-1000:]
        assert int(m.group(1)) <= int(m.group(2)), "horizontal scrolling at 390 px"
    finally:
        shutil.rmtree(tmp, True)

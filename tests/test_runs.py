"""`runs`, `digest` and `prune` (issue 24): black-box through the real file first, then the
pure core (summaries, filters, suspect nodes, the subject)."""
import email
import email.policy
import glob
import hashlib
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _load import load_gpualert  # noqa: E402
from wrapper_helpers import PY, child, isolated_env, remove_tree, run_gpualert, wait_for  # noqa: E402

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
    assert len(text.splitlines()) == 5 and "gpu_hardware: Xid 79" in text and "gpu17" in text
    assert text.splitlines()[0].split() == ["ENDED", "JOB", "NAME", "STATUS", "CAUSE", "TIME", "NODE"]
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
                                  ["digest", "--since", "7x"], ["prune", "--older-than", "soon"],
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
        # the child's own word, not the header's "run started"
        log = wait_for(lambda: [p for p in glob.glob(str(tmp_path / "logs" / "*" / "output.log"))
                                                      if b"\nstarted" in open(p, "rb").read()],
                       30, step=0.1, what="the run")[0]
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


# ---- a hostile auditor's findings (/work/brief/attack24.md): shared dirs, odd files, odd times ----

def _plant(logs, name, record, mode=None):
    """A run directory with this run.json (a dict, or bytes as they are)."""
    os.makedirs(str(logs / name))
    path = str(logs / name / "run.json")
    with open(path, "wb") as f:
        f.write(record if isinstance(record, bytes) else json.dumps(record).encode())
    return path


def _ok_record(name, end, **fields):
    return dict(dict(status="SUCCESS", name=name, start=end - 60, end=end, host="n1"), **fields)


def test_a_link_planted_for_the_index_s_temp_file_is_never_followed(tmp_path):
    # The old temp name was .gpualert-runs-index.json.HOST.PID.tmp: a link planted under
    # the next pid took the index's bytes into any file the victim can write.
    logs = tmp_path / "logs"
    _plant(logs, "one", _ok_record("one", time.time() - 60))
    victim = tmp_path / "precious.txt"
    victim.write_text("keep me\n")
    index = str(logs / N.RUNS_INDEX_NAME)
    os.symlink(str(victim), index)  # a planted index too: never read through, never written through
    script = ("ln -s %s %s.%s.$$.tmp && exec %s %s runs --json \"$@\"" % (
        str(victim), index, N._hostname()[:64], PY, N.__file__))
    r = subprocess.run(["sh", "-c", script, "sh"] + _flags(tmp_path), env=isolated_env(tmp_path),
                       cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert r.returncode == 0, r.stderr
    assert [row["name"] for row in _json_lines(r.stdout)] == ["one"]
    assert victim.read_text() == "keep me\n"
    assert not os.path.islink(index) and os.stat(index).st_mode & 0o777 == 0o600


@pytest.mark.parametrize("times", [b'"start": 1, "end": 1e20', b'"start": 1e400, "end": 2',
                                   b'"start": 1, "end": Infinity', b'"start": -1e20, "end": 5',
                                   b'"start": 1' + b"0" * 400 + b', "end": 5'])
def test_a_record_with_a_time_out_of_range_is_skipped_with_one_warning(tmp_path, times):
    logs = tmp_path / "logs"
    _plant(logs, "good", _ok_record("good", time.time() - 60))
    bad = _plant(logs, "bad", b'{"status": "FAILED", ' + times + b"}")
    for args in (["runs"], ["runs", "--since", "1h", "--json"], ["digest", "--dry-run"],
                 ["prune", "--older-than", "0s", "--dry-run"]):
        r = run_gpualert(tmp_path, args + _flags(tmp_path))
        assert r.returncode == 0 and b"internal" not in r.stderr, (args, r.stderr)
        assert r.stderr.decode().count(bad) == (1 if args[0] != "prune" else 0), (args, r.stderr)
        assert r.stderr.decode().count("bad") == 1, (args, r.stderr)


def test_a_fifo_or_a_device_never_hangs_runs_digest_or_prune(tmp_path):
    logs = tmp_path / "logs"
    _plant(logs, "good", _ok_record("good", time.time() - 60))
    os.makedirs(str(logs / "fifo"))
    os.mkfifo(str(logs / "fifo" / "run.json"))
    os.makedirs(str(logs / "fifo-log"))
    os.mkfifo(str(logs / "fifo-log" / "output.log"))  # a run with no record: prune reads its header
    os.mkfifo(str(logs / N.RUNS_INDEX_NAME))
    for args in (["runs", "--json"], ["digest", "--dry-run"], ["prune", "--older-than", "0s", "--dry-run"]):
        r = run_gpualert(tmp_path, args + _flags(tmp_path), timeout=30)
        assert r.returncode == 0 and b"internal" not in r.stderr, (args, r.stderr)
        if args[0] == "runs":
            assert [row["name"] for row in _json_lines(r.stdout)] == ["good"]
            assert b"fifo/run.json: not a regular file" in r.stderr
    os.unlink(str(logs / N.RUNS_INDEX_NAME))
    os.symlink("/dev/zero", str(logs / N.RUNS_INDEX_NAME))
    r = run_gpualert(tmp_path, ["runs", "--json"] + _flags(tmp_path), timeout=30)
    assert r.returncode == 0 and [row["name"] for row in _json_lines(r.stdout)] == ["good"], r.stderr


def test_a_tampered_index_entry_is_checked_as_a_fresh_record_is(tmp_path):
    # An entry with a real record's inode, mtime and size but a start no record can have
    # (planted by whoever could write the index): parsed again, never trusted.
    logs = tmp_path / "logs"
    _plant(logs, "one", _ok_record("one", time.time() - 60))
    assert run_gpualert(tmp_path, ["runs"] + _flags(tmp_path)).returncode == 0
    index = str(logs / N.RUNS_INDEX_NAME)
    with open(index) as f:
        data = json.load(f)
    for bad in ("x", None, 1e20):
        data["runs"]["one"][1]["start"] = bad
        with open(index, "w") as f:
            json.dump(data, f)
        for args in (["runs", "--json"], ["digest", "--dry-run", "--always"]):
            r = run_gpualert(tmp_path, args + _flags(tmp_path))
            assert r.returncode == 0 and b"internal" not in r.stderr, (bad, args, r.stderr)
        rows = _json_lines(run_gpualert(tmp_path, ["runs", "--json"] + _flags(tmp_path)).stdout)
        assert [(row["name"], type(row["start"])) for row in rows] == [("one", float)]


def test_cached_times_are_shown_in_the_reader_s_zone(tmp_path):
    logs = tmp_path / "logs"
    _plant(logs, "one", _ok_record("one", 1767225600.0))  # 2026-01-01T00:00:00Z
    utc = _json_lines(run_gpualert(tmp_path, ["runs", "--json"] + _flags(tmp_path),
                                   env=isolated_env(tmp_path, TZ="UTC")).stdout)
    assert utc[0]["end_iso"] == "2026-01-01T00:00:00+0000"
    assert os.path.exists(str(logs / N.RUNS_INDEX_NAME))
    tokyo = _json_lines(run_gpualert(tmp_path, ["runs", "--json"] + _flags(tmp_path),
                                     env=isolated_env(tmp_path, TZ="Asia/Tokyo")).stdout)
    assert tokyo[0]["end_iso"] == "2026-01-01T09:00:00+0900"


def test_a_future_time_is_in_no_window_and_said_once(tmp_path):
    # a host with its clock two days ahead: not counted in every daily digest from now on
    logs = tmp_path / "logs"
    now = time.time()
    _plant(logs, "good", _ok_record("good", now - 60))
    ahead = _plant(logs, "ahead", _ok_record("ahead", now + 2 * 86400, status="FAILED", host="skewed"))
    r = run_gpualert(tmp_path, ["runs", "--since", "1h", "--json"] + _flags(tmp_path))
    assert [row["name"] for row in _json_lines(r.stdout)] == ["good"]
    assert r.stderr.decode().count("dated in the future") == 1 and b"skewed" in r.stderr
    r = run_gpualert(tmp_path, ["digest", "--since", "1h", "--dry-run"] + _flags(tmp_path))
    assert r.returncode == 0 and b"digest: 1 run, 0 failed" in r.stdout, (r.stdout, r.stderr)
    # prune: a record dated in the future ages by its file's time
    os.utime(ahead, (now - 40 * 86400, now - 40 * 86400))
    r = run_gpualert(tmp_path, ["prune", "--older-than", "30d"] + _flags(tmp_path))
    assert r.returncode == 0 and b"removed 1 run directory" in r.stdout, (r.stdout, r.stderr)
    assert not os.path.exists(os.path.dirname(ahead)) and os.path.isdir(str(logs / "good"))


def test_prune_keeps_a_run_whose_wrapper_was_killed_while_its_child_runs_on(tmp_path):
    go, pid_file = tmp_path / "go", tmp_path / "child.pid"
    code = ("import os, time\nopen(%r, 'w').write(str(os.getpid()))\nprint('started', flush=True)\n"
            "t = time.time() + 60\nwhile not os.path.exists(%r) and time.time() < t:\n    time.sleep(0.05)\n"
            % (str(pid_file), str(go)))
    proc = subprocess.Popen([PY, N.__file__] + _flags(tmp_path) + ["--name", "orphan", "--"] + child(code),
                            env=isolated_env(tmp_path), cwd=str(tmp_path),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        # the child's own word, not the header's "run started"
        log = wait_for(lambda: pid_file.exists() and [p for p in glob.glob(str(tmp_path / "logs" / "*" / "output.log"))
                                                      if b"\nstarted" in open(p, "rb").read()],
                       30, step=0.1, what="the run")[0]
        proc.kill()  # SIGKILL the wrapper: its child runs on, reparented
        proc.wait()
        pid = int(pid_file.read_text())
        assert N._pid_alive(pid)
        r = run_gpualert(tmp_path, ["prune", "--older-than", "0s"] + _flags(tmp_path))
        assert r.returncode == 0, r.stderr
        assert b"removed 0 run directories" in r.stdout and b"still running" in r.stdout, r.stdout
        assert os.path.exists(log)
    finally:
        open(str(go), "w").close()
    wait_for(lambda: not N._pid_alive(int(pid_file.read_text())), 30, step=0.1, what="the child's end")
    # the child has ended, but the killed wrapper's launch stand-in (its end untold) still
    # waits in the outbox and names the run: kept until that message is out
    r = run_gpualert(tmp_path, ["prune", "--older-than", "0s"] + _flags(tmp_path))
    assert b"removed 0 run directories" in r.stdout and b"a message in the outbox names it" in r.stdout, \
        (r.stdout, r.stderr)


def test_digest_counts_only_the_user_s_own_records_in_a_shared_log_dir(tmp_path, other_user):
    shared = tempfile.mkdtemp(prefix="gpualert-shared-logs-")
    try:
        os.chmod(shared, 0o1777)
        now = time.time()
        mine = _plant(tmp_path / "x", "mine", _ok_record("mine", now - 60))
        for i in (1, 2):  # two planted GPU faults on gpu17: gpu17 would be named suspect
            record = json.dumps(_ok_record("p%d" % i, now - 60, status="FAILED", host="gpu17", **{
                "class": "gpu_hardware", "classification": {"cls": "gpu_hardware", "detail": "Xid 79"}}))
            made = other_user.run(["sh", "-c", "mkdir -m 755 %s/p%d && printf '%%s' \"$0\" > %s/p%d/run.json"
                                   % (shared, i, shared, i), record])
            assert made.returncode == 0, made.stderr
        # the other user's index, with entries for them, is not read either
        os.makedirs(os.path.join(shared, "mine"))
        shutil.copy(mine, os.path.join(shared, "mine", "run.json"))
        flags = ["--log-dir", shared, "--outbox", str(tmp_path / "outbox")]
        r = run_gpualert(tmp_path, ["digest", "--since", "1h", "--dry-run"] + flags)
        assert r.returncode == 0, r.stderr
        assert b"digest: 1 run, 0 failed" in r.stdout and b"suspect" not in r.stdout, r.stdout
        assert r.stderr.decode().count("owned by other users") == 1 and b"2 run records" in r.stderr
        rows = _json_lines(run_gpualert(tmp_path, ["runs", "--json"] + flags).stdout)
        assert [row["name"] for row in rows] == ["mine"]
    finally:
        remove_tree(shared)


def test_an_index_another_user_planted_is_never_read(tmp_path, other_user):
    shared = tempfile.mkdtemp(prefix="gpualert-shared-logs-")
    try:
        os.chmod(shared, 0o1777)
        os.makedirs(os.path.join(shared, "mine"))
        path = os.path.join(shared, "mine", "run.json")
        with open(path, "w") as f:
            json.dump(_ok_record("mine", time.time() - 60), f)
        st = os.stat(path)
        planted = {"format": N.RUNS_INDEX_FORMAT, "gpualert": N.__version__, "runs": {"mine": [
            [st.st_ino, st.st_mtime_ns, st.st_size], dict(N.run_summary(
                _ok_record("planted-name", time.time() - 60, status="FAILED"), None))]}}
        made = other_user.run(["sh", "-c", "umask 0; printf '%%s' \"$0\" > %s/%s"
                               % (shared, N.RUNS_INDEX_NAME), json.dumps(planted)])
        assert made.returncode == 0, made.stderr
        flags = ["--log-dir", shared, "--outbox", str(tmp_path / "outbox")]
        rows = _json_lines(run_gpualert(tmp_path, ["runs", "--json"] + flags).stdout)
        assert [(row["name"], row["status"]) for row in rows] == [("mine", "SUCCESS")]
    finally:
        remove_tree(shared)


def _ordinary_home(user):
    home = tempfile.mkdtemp(prefix="gpualert-runs-ro-")
    os.chown(home, user.uid, user.gid)
    env = dict(PATH="/usr/bin:/bin", HOME=home, XDG_STATE_HOME=os.path.join(home, "state"),
               TMPDIR=home, GPUALERT_SENDMAIL="none", TZ="UTC")
    return home, env


def test_prune_under_a_read_only_parent_removes_nothing_and_says_so(ordinary_user):
    home, env = _ordinary_home(ordinary_user)
    try:
        logs = os.path.join(home, "logs")
        old = time.time() - 40 * 86400
        record = json.dumps(_ok_record("old", old))
        sh = ordinary_user.run(["sh", "-c", "mkdir -p %s/old && printf '%%s' \"$0\" > %s/old/run.json && "
                                "echo x > %s/old/output.log && chmod 555 %s" % (logs, logs, logs, logs), record])
        assert sh.returncode == 0, sh.stderr
        r = ordinary_user.run([PY, ordinary_user.script, "prune", "--older-than", "30d", "--log-dir", logs,
                               "--outbox", os.path.join(home, "outbox")], env=env, cwd=home)
        assert r.returncode == 1, r.stderr
        assert b"removed 0 run directories" in r.stdout and b"not writable" in r.stderr, (r.stdout, r.stderr)
        assert sorted(os.listdir(os.path.join(logs, "old"))) == ["output.log", "run.json"]
    finally:
        remove_tree(home)


def test_a_record_unreadable_for_a_while_is_listed_once_readable_and_an_unlistable_dir_is_said(ordinary_user):
    home, env = _ordinary_home(ordinary_user)
    try:
        logs = os.path.join(home, "logs")
        argv = [PY, ordinary_user.script, "runs", "--log-dir", logs, "--outbox", os.path.join(home, "outbox")]
        record = json.dumps(_ok_record("later", time.time() - 60))
        sh = ordinary_user.run(["sh", "-c", "mkdir -p %s/later && printf '%%s' \"$0\" > %s/later/run.json && "
                                "chmod 000 %s/later/run.json" % (logs, logs, logs), record])
        assert sh.returncode == 0, sh.stderr
        r = ordinary_user.run(argv, env=env, cwd=home)
        assert b"later/run.json: Permission denied" in r.stderr, r.stderr
        ordinary_user.run(["chmod", "644", os.path.join(logs, "later", "run.json")])
        r = ordinary_user.run(argv, env=env, cwd=home)
        assert b"later" in r.stdout and b"skipping" not in r.stderr, (r.stdout, r.stderr)
        ordinary_user.run(["chmod", "000", logs])
        r = ordinary_user.run(argv, env=env, cwd=home)
        assert b"cannot list %s: Permission denied" % logs.encode() in r.stderr, r.stderr
    finally:
        remove_tree(home)


def test_a_world_writable_default_runs_dir_is_made_private(tmp_path):
    runs_dir = tmp_path / "state" / "gpualert" / "runs"
    _plant(runs_dir, "one", _ok_record("one", time.time() - 60))
    os.chmod(str(runs_dir), 0o777)
    r = run_gpualert(tmp_path, ["runs"])
    assert r.returncode == 0 and b"one" in r.stdout, r.stderr
    assert os.stat(str(runs_dir)).st_mode & 0o777 == 0o700


@pytest.mark.parametrize("args", [["runs", "--since", "9" * 400], ["digest", "--since", "99999999999999999999d"],
                                  ["prune", "--older-than", "9" * 400 + "d"]])
def test_an_absurd_duration_is_a_one_line_usage_error(tmp_path, args):
    test_bad_input_is_a_one_line_usage_error(tmp_path, args)


def test_field_types_no_run_record_has_are_refused_or_ignored():
    base = {"status": "FAILED", "start": 1000.0, "end": 2000.0}
    assert N.run_summary(dict(base, exit_status=True), "/r")["exit_status"] is None
    assert N.run_summary(dict(base, gpu={"gpus": [{}] * 1000000}), "/r")["gpus"] is None
    assert N.run_summary(dict(base, gpu={"gpus": [{}] * 8}), "/r")["gpus"] == 8
    for bad in (dict(base, status=""), dict(base, status="\n"), dict(base, end=500.0), dict(base, start=float("nan"))):
        with pytest.raises(ValueError):
            N.run_summary(bad, "/r")


def test_digest_counts_the_requeues_made_not_the_refused_or_dry_run(tmp_path, smtp_plain):
    # issue 24: the digest's "requeues made" (issue 23 records them in run.json)
    logs, now = tmp_path / "logs", time.time()
    for i, (state, action) in enumerate((("done", "requeue"), ("done", "requeue"), ("refused", "requeue"),
                                         ("dry-run", "requeue"), ("done", "resubmit"))):
        cause = "hardware" if action == "resubmit" else "preempted"
        _plant(logs, "r%d" % i, dict(status="PREEMPTED", name="r%d" % i, start=now - 120, end=now - 60 + i,
                                    host="n1", classification={"cls": "preempted"},
                                    requeue={"action": action, "state": state, "cause": cause}))
    r = run_gpualert(tmp_path, ["digest", "--since", "1h", "--smtp", smtp_plain.addr, "--to", "me@example.org"]
                     + _flags(tmp_path))
    assert r.returncode == 0, r.stderr
    [got] = smtp_plain.wait_for(1)
    text = email.message_from_bytes(got.data, policy=email.policy.default).get_body(("plain",)).get_content()
    assert "3 made (preempted 2, hardware 1)" in text, text
    js = run_gpualert(tmp_path, ["runs", "--json"] + _flags(tmp_path))
    got = sorted(json.loads(line)["requeued"] or "-" for line in js.stdout.decode().splitlines())
    assert got == ["-", "-", "hardware", "preempted", "preempted"], got


# ---- issue 34: prune by identity, links are not runs, a relative --log-dir ----

def _exchange(a, b):
    """Swap two names at once, as anyone who may write a shared --log-dir can
    (renameat2 RENAME_EXCHANGE): the real syscall, at a moment the test picks."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.renameat2(-100, str(a).encode(), -100, str(b).encode(), 2) != 0:  # AT_FDCWD
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))


def _ended(logs, name):
    """A run of ours that ended 40 days ago."""
    path = _plant(logs, name, _ok_record(name, time.time() - 40 * 86400))
    with open(os.path.join(os.path.dirname(path), "output.log"), "w") as f:
        f.write("x\n")


def _going(logs, name):
    """A run of ours still going here: no run.json yet, its header names this host and a
    live wrapper (this process)."""
    os.makedirs(str(logs / name / "ckpt"))
    with open(str(logs / name / "output.log"), "w") as f:
        f.write("=== gpualert run started (gpualert 0.1.0) ===\ncommand: x\nhost: %s\npid: %d\n"
                % (N._hostname(short=True), os.getpid()))
    with open(str(logs / name / "ckpt" / "step_9.pt"), "w") as f:
        f.write("precious")


@pytest.mark.parametrize("when", ["after the check", "during the check"])
def test_prune_never_removes_a_running_run_swapped_in_while_it_looked(tmp_path, monkeypatch, when):
    # Another member of a group-writable --log-dir exchanges two of our run directories'
    # names while prune works: after an ended run was checked (its name now holds the
    # running one), or during the running run's check (an ended one sits at its name
    # while prune looks, and goes back after).
    logs = tmp_path / "logs"
    _ended(logs, "a-ended")
    _going(logs, "b-going")
    _ended(logs, "c-ended")
    real, calls = N.run_end, []

    def run_end(run_dir, warn=None):
        calls.append(run_dir)
        if when == "during the check" and len(calls) == 2:  # b-going's check
            _exchange(logs / "b-going", logs / "c-ended")
            try:
                return real(run_dir, warn)
            finally:
                _exchange(logs / "b-going", logs / "c-ended")
        got = real(run_dir, warn)
        if when == "after the check" and len(calls) == 1:  # a-ended checked: b-going takes its name
            _exchange(logs / "a-ended", logs / "b-going")
        return got

    monkeypatch.setattr(N, "run_end", run_end)
    warned = []
    out = N.prune_runs(str(logs), time.time() - 30 * 86400, warn=warned.append)
    assert len(calls) == 3, calls
    precious = glob.glob(str(logs / "*" / "ckpt" / "step_9.pt"))
    assert len(precious) == 1, (out, warned)  # the running run, whole, at one of the names
    going = os.path.dirname(os.path.dirname(precious[0]))
    assert sorted(os.listdir(going)) == ["ckpt", "output.log"]
    assert open(precious[0]).read() == "precious"
    assert sorted(os.listdir(str(logs))) == [os.path.basename(going)], out  # both ended runs went
    if when == "after the check":
        assert len(out["failed"]) == 1 and "swapped" in out["failed"][0], out


def test_a_removal_cut_short_is_finished_by_the_next_prune(tmp_path, monkeypatch):
    logs = tmp_path / "logs"
    _ended(logs, "old")
    os.makedirs(str(logs / "old" / "ckpt"))
    with open(str(logs / "old" / "ckpt" / "step_1.pt"), "w") as f:
        f.write("x")

    def cut_short(fd, keep=None):  # the first file goes, then the removal stops (a kill, an I/O error)
        os.unlink("run.json", dir_fd=fd)
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(N, "_empty_dir", cut_short)
    out = N.prune_runs(str(logs), time.time() - 30 * 86400)
    assert len(out["failed"]) == 1 and "a later prune finishes it" in out["failed"][0], out
    staged = [n for n in os.listdir(str(logs)) if n.startswith(".gpualert-prune-")]
    assert len(staged) == 1 and not os.path.exists(str(logs / "old")), os.listdir(str(logs))
    monkeypatch.undo()
    r = run_gpualert(tmp_path, ["runs", "--json"] + _flags(tmp_path))
    assert r.returncode == 0 and _json_lines(r.stdout) == [], (r.stdout, r.stderr)
    r = run_gpualert(tmp_path, ["prune", "--older-than", "30d"] + _flags(tmp_path))
    assert r.returncode == 0 and b"removed 1 run directory" in r.stdout, (r.stdout, r.stderr)
    assert not [n for n in os.listdir(str(logs)) if n.startswith(".gpualert-prune-")]


def test_prune_finishes_only_a_staging_directory_its_own_prune_marked(tmp_path):
    # A staging name alone proves nothing: anyone who may write the --log-dir may rename
    # a running run of ours to one. Only our prune's mark inside (a file of ours in our
    # directory) says a removal was under way.
    logs = tmp_path / "logs"
    _going(logs, ".gpualert-prune-1-unmarked")
    _going(logs, ".gpualert-prune-2-linked")
    os.symlink(str(tmp_path), str(logs / ".gpualert-prune-2-linked" / N.PRUNE_MARK))
    marked = [".gpualert-prune-3-marked"]
    _going(logs, marked[0])
    open(str(logs / marked[0] / N.PRUNE_MARK), "w").close()
    if os.geteuid() == 0:  # a mark of another user's is not ours either
        marked.append(".gpualert-prune-4-foreign")
        _going(logs, marked[1])
        open(str(logs / marked[1] / N.PRUNE_MARK), "w").close()
        os.chown(str(logs / marked[1] / N.PRUNE_MARK), 65534, 65534)
    r = run_gpualert(tmp_path, ["prune", "--older-than", "30d"] + _flags(tmp_path))
    assert r.returncode == 0 and b"removed 1 run directory" in r.stdout, (r.stdout, r.stderr)
    left = sorted(n for n in os.listdir(str(logs)) if n.startswith(".gpualert-prune-"))
    assert left == sorted([".gpualert-prune-1-unmarked", ".gpualert-prune-2-linked"] + marked[1:])
    assert all(os.path.exists(str(logs / n / "ckpt" / "step_9.pt")) for n in left)


def test_links_to_a_run_are_not_runs(tmp_path):
    # 5 links planted beside one failed run: one run, one failure, and prune follows none
    logs, now = tmp_path / "logs", time.time()
    _plant(logs, "x", _ok_record("x", now - 60, status="FAILED", host="vm", **{
        "class": "gpu_hardware", "classification": {"cls": "gpu_hardware", "detail": "Xid 79"}}))
    for i in range(5):
        os.symlink(str(logs / "x"), str(logs / ("link%d" % i)))
    elsewhere = tmp_path / "elsewhere"
    _ended(elsewhere, "y")
    os.symlink(str(elsewhere / "y"), str(logs / "z-outside"))
    rows = _json_lines(run_gpualert(tmp_path, ["runs", "--json"] + _flags(tmp_path)).stdout)
    assert [row["name"] for row in rows] == ["x"]
    r = run_gpualert(tmp_path, ["digest", "--since", "1h", "--dry-run"] + _flags(tmp_path))
    assert r.returncode == 0 and b"digest: 1 run, 1 failed" in r.stdout, (r.stdout, r.stderr)
    r = run_gpualert(tmp_path, ["prune", "--older-than", "30d"] + _flags(tmp_path))
    assert r.returncode == 0 and b"removed 0 run directories" in r.stdout, (r.stdout, r.stderr)
    assert sorted(os.listdir(str(elsewhere / "y"))) == ["output.log", "run.json"]
    assert os.path.islink(str(logs / "z-outside"))


def test_a_relative_log_dir_names_its_run_so_prune_from_elsewhere_keeps_a_waiting_one(tmp_path):
    # --log-dir logs, given in work/: the waiting message must name the run directory so
    # that a prune run from another directory (with the absolute --log-dir) finds it
    work = tmp_path / "work"
    work.mkdir()
    r = subprocess.run([PY, N.__file__, "--log-dir", "logs", "--outbox", str(tmp_path / "outbox"),
                        "--name", "rel", "--"] + child("import sys; sys.exit(1)"),
                       env=isolated_env(tmp_path), cwd=str(work), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode == 1, r.stderr
    assert glob.glob(str(tmp_path / "outbox" / "*.eml")), r.stderr
    [record] = glob.glob(str(work / "logs" / "*" / "run.json"))
    _set_fields(record, start=time.time() - 41 * 86400, end=time.time() - 40 * 86400)
    flags = ["--log-dir", str(work / "logs"), "--outbox", str(tmp_path / "outbox")]
    r = run_gpualert(tmp_path, ["prune", "--older-than", "30d"] + flags)
    assert r.returncode == 0 and b"1 a message in the outbox names it" in r.stdout, (r.stdout, r.stderr)
    assert os.path.exists(record)


def test_a_log_dir_reached_through_another_user_s_link_is_refused(tmp_path, other_user, shared_tmp):
    # A member of a shared folder moves our --log-dir aside and puts a link of theirs in
    # its place: prune would remove runs wherever the link leads (our private archive
    # here), and a run would write its log where its owner chose.
    shared, private = pathlib.Path(shared_tmp), tmp_path / "private"
    _ended(private / "logs", "old")
    made = other_user.run(["sh", "-c", "ln -s %s/logs %s/logs && ln -s %s/theirs %s/mine"
                           % (private, shared, shared, shared)])
    assert made.returncode == 0, made.stderr
    flags = ["--log-dir", str(shared / "logs"), "--outbox", str(tmp_path / "outbox")]
    r = run_gpualert(tmp_path, ["prune", "--older-than", "1s"] + flags)
    assert b"a link owned by uid %d: refused" % other_user.uid in r.stderr, (r.stdout, r.stderr)
    assert os.listdir(str(private / "logs")) == ["old"], r.stdout
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    r = subprocess.run([PY, N.__file__, "--log-dir", str(shared / "mine"), "--outbox", str(tmp_path / "outbox"),
                        "--"] + child("print('hello')"), env=isolated_env(tmp_path, TMPDIR=str(tmp)),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert r.returncode == 0 and b"hello" in r.stdout, r.stderr
    assert not os.path.exists(str(shared / "theirs")), os.listdir(str(shared))
    assert glob.glob(str(tmp / "gpualert-*" / "*" / "output.log")), r.stderr


def test_a_diverged_run_is_a_failed_one():
    """Exit 0 after the loss went NaN (COMPLETED nan_loss): in `runs --failed` and the digest's count."""
    runs = [_summary("ok", status="SUCCESS", end=990.0), _summary("nan", status="COMPLETED", cls="nan_loss")]
    assert [r["name"] for r in N.select_runs(runs, 1000.0, failed=True)] == ["nan"]
    d = N.make_digest(N.select_runs(runs, 1000.0, 86400), 1000.0, 86400)
    assert (d["failed"], d["classes"]) == (1, [("nan_loss", 1)])
    assert N.digest_subject(d) == "[gpualert] digest: 2 runs, 1 failed (nan_loss 1)"


def test_a_removal_whose_name_was_swapped_is_finished_by_the_next_prune(tmp_path, monkeypatch):
    # A member swaps the staged directory's name with another while prune empties it: prune
    # stops, and the next one must finish it under whatever name it has now (it lost its
    # mark first, so it stayed forever as a run "with no end record").
    logs = tmp_path / "logs"
    _ended(logs, "old")
    emptied = N._empty_dir

    def swapped_meanwhile(fd, keep=None):
        emptied(fd, keep)
        (staged,) = [n for n in os.listdir(str(logs)) if n.startswith(".gpualert-prune-")]
        os.rename(str(logs / staged), str(logs / "20260101-000000-elsewhere"))

    monkeypatch.setattr(N, "_empty_dir", swapped_meanwhile)
    out = N.prune_runs(str(logs), time.time() - 30 * 86400)
    assert len(out["failed"]) == 1 and "swapped" in out["failed"][0], out
    monkeypatch.undo()
    r = run_gpualert(tmp_path, ["prune", "--older-than", "30d"] + _flags(tmp_path))
    assert r.returncode == 0 and b"removed 1 run directory" in r.stdout, (r.stdout, r.stderr)
    assert os.listdir(str(logs)) == [], os.listdir(str(logs))


def test_runs_has_a_header_and_fits_100_columns(tmp_path):
    """`runs` printed ~200-character lines with no header (the log path last)."""
    long_name = "a-very-long-experiment-name-for-the-sweep-lr3e-4-bs512"
    _run(tmp_path, long_name, OOM)
    r = run_gpualert(tmp_path, ["runs"] + _flags(tmp_path))
    lines = r.stdout.decode().splitlines()
    assert r.returncode == 0 and len(lines) == 2, r.stdout
    assert lines[0].split() == ["ENDED", "JOB", "NAME", "STATUS", "CAUSE", "TIME", "NODE"]
    assert all(len(line) <= 100 for line in lines), [len(line) for line in lines]
    assert "FAILED" in lines[1] and "cuda_oom" in lines[1] and long_name[:8] in lines[1]


def test_prune_alone_keeps_what_help_says_30_days(tmp_path):
    """--help shows (30d) for --older-than, yet `prune` alone was a usage error."""
    for name in ("old", "new"):
        _run(tmp_path, name, "print('done')")
    now = time.time()
    dirs = dict((json.load(open(p))["name"], os.path.dirname(p)) for p in _records(tmp_path))
    _set_fields(os.path.join(dirs["old"], "run.json"), start=now - 32 * 86400, end=now - 31 * 86400)
    _set_fields(os.path.join(dirs["new"], "run.json"), start=now - 29 * 86400, end=now - 28 * 86400)
    shutil.rmtree(str(tmp_path / "outbox"))  # a waiting message keeps its run (tested above)
    r = run_gpualert(tmp_path, ["prune"] + _flags(tmp_path))
    assert r.returncode == 0, r.stderr
    assert b"removed 1 run directory older than 30d00h" in r.stdout, r.stdout
    assert not os.path.exists(dirs["old"]) and os.path.isdir(dirs["new"])

"""Found by attacking main as a hostile or unlucky user would (the `attack` helper's list,
/work/attack-findings.md at the time). Each test is a reproducer: it failed before its fix.

Black-box tests run the real gpualert.py in a subprocess (tests/wrapper_helpers.py); the
picture tests decode the PNG with zlib alone (tests/test_message_render.py's decoder).
"""
import json
import os
import subprocess
import time

import pytest

from _load import load_gpualert
from test_message_render import decode_png
from wrapper_helpers import PY, SCRIPT, child, isolated_env, log_text, outbox_messages

N = load_gpualert()


def base(tmp):
    return ["--log-dir", str(tmp / "logs"), "--outbox", str(tmp / "outbox")]


# ---- A1: descriptors 0-2 closed at start ----

def test_closed_stdout_does_not_put_the_output_in_the_log_twice(tmp_path):
    """`gpualert.py -- cmd >&-`: the log was opened on the free descriptor 1, so the copy
    meant for our stdout went into the log as well (every line twice)."""
    argv = [PY, SCRIPT, "--max-per-hour", "0"] + base(tmp_path) + ["--"] + child(
        "print('hello-out' + '-7f3a'); raise SystemExit(3)")
    proc = subprocess.run(argv, env=isolated_env(tmp_path), cwd=str(tmp_path), timeout=60,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 3, proc.stderr
    assert log_text(tmp_path).count(b"hello-out-7f3a") == 1, log_text(tmp_path)


def test_closed_stdout_and_stderr_keep_gpualert_lines_out_of_its_files(tmp_path):
    """With 1 and 2 closed, gpualert's own lines and the child's output must not land in the
    log, run.json or the saved message through a reused descriptor."""
    argv = [PY, SCRIPT, "--max-per-hour", "0"] + base(tmp_path) + ["--"] + child(
        "import sys; print('out' + '-9c1e'); sys.stderr.write('err' + '-9c1e\\n'); raise SystemExit(4)")

    def close_both():
        os.close(1)
        os.close(2)
    proc = subprocess.run(argv, env=isolated_env(tmp_path), cwd=str(tmp_path), timeout=60,
                          preexec_fn=close_both)
    assert proc.returncode == 4
    log = log_text(tmp_path)
    assert log.count(b"out-9c1e") == 1 and log.count(b"err-9c1e") == 1, log
    assert b"gpualert: FAILED" not in log
    saved = outbox_messages(tmp_path)
    assert len(saved) == 1
    with open(saved[0], "rb") as handle:
        assert b"gpualert: FAILED" not in handle.read()


# ---- A2: a malformed job id is a usage error, not another job ----

@pytest.mark.parametrize("job_id", ["1x", "1;rm", "abc", "12_", "-5"])
def test_watch_refuses_a_malformed_job_id_at_once(tmp_path, job_id):
    """`watch 1x` watched job 1 (qacct/qstat read "1x" as 1) and mailed about it; `watch abc`
    polled for 10 minutes. A job id is N, N_M, N.M, N+M or N_[...]: anything else is a typo."""
    start = time.monotonic()
    proc = subprocess.run([PY, SCRIPT, "watch", "--outbox", str(tmp_path / "outbox"), "--",
                           job_id], env=isolated_env(tmp_path), cwd=str(tmp_path), timeout=60,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.returncode == 2, (proc.returncode, proc.stdout, proc.stderr)
    assert b"job id" in proc.stderr and proc.stderr.count(b"\n") == 1, proc.stderr
    assert outbox_messages(tmp_path) == []
    assert time.monotonic() - start < 30


def test_watch_accepts_the_job_id_forms_schedulers_use():
    for job_id in ("4242", "4242_7", "4242.3", "4242+1", "4242_[1-10]", "4242_[1,3,5-7%2]"):
        cli = N.parse_command_line(["watch", job_id])
        assert cli.job_ids == [job_id]


# ---- A3/A4: numbers in the summary and the picture ----

def test_numbers_past_the_largest_unit_are_scientific():
    assert N.format_number(1e15) == "1e+15"
    assert N.format_number(-1e308) == "-1e+308"
    assert N.format_number(2.5e13) == "2.5e+13"
    assert N.format_number(1.5e9) == "1.5G"  # the units still serve the ordinary range
    assert N.format_number(123456) == "123k"


def _series(values):
    points = [[i, v] for i, v in enumerate(values)]
    return {"points": points, "direction": "min", "x": "step",
            "first": {"x": 0, "value": values[0]}, "last": {"x": len(values) - 1, "value": values[-1]}}


@pytest.mark.parametrize("values", [
    [1.0 / (i + 1) for i in range(30)],                # ends at 0.03333: a 7-character tick
    [-1.0 / (i + 1) for i in range(30)],               # -0.03333: 8 characters
    [1e15 / (i + 1) for i in range(30)],
])
def test_every_tick_label_is_inside_the_picture(values):
    """The y tick labels were drawn right-aligned to the axis whatever their width: `0.03333`
    lost its first digit, `-1.23e-05` three characters, off the left edge."""
    metrics = {"main": ["loss"], "series": {"loss": _series(values)}}
    png, layout = N.render_plot(metrics, {})
    w, h, rows = decode_png(png)
    ink = N.PLOT_PALETTE[1]
    left_edge = [y for y in range(h) if ink in rows[y][:2]]
    assert left_edge == [], "ink touches the left edge at rows %s" % left_edge[:5]


# ---- A6: one bad value never holds the message ----

@pytest.mark.parametrize("name,value", [("GPUALERT_SMTP_TIMEOUT", "-1"),
                                        ("GPUALERT_BUDGET", "abc"),
                                        ("GPUALERT_SMTP_TLS", "maybe")])
def test_a_bad_value_in_the_environment_is_named_and_the_message_still_goes(
        tmp_path, smtp_plain, name, value):
    """A typo in one setting held every message in the outbox ("held: configuration
    problem"): the default is used instead, one warning says so, the relay gets the message."""
    env = isolated_env(tmp_path, **{name: value})
    proc = subprocess.run([PY, SCRIPT] + base(tmp_path) + [
        "--smtp", smtp_plain.addr, "--to", "me@example.org", "--"] + child("raise SystemExit(3)"),
        env=env, cwd=str(tmp_path), timeout=60, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.returncode == 3
    warnings = [l for l in proc.stderr.decode().splitlines() if name in l]
    assert len(warnings) == 1 and "using" in warnings[0], proc.stderr
    assert len(smtp_plain.wait_for(1, timeout=20)) == 1, proc.stderr
    assert outbox_messages(tmp_path) == []


# ---- A11: an array id seen before never swallows a task's message ----

def _array_task(tmp_path, relay, cluster, task, code):
    env = isolated_env(tmp_path, SLURM_CLUSTER_NAME=cluster, SLURM_JOB_ID=str(9000 + task),
                       SLURM_ARRAY_JOB_ID="8999", SLURM_ARRAY_TASK_ID=str(task),
                       SLURM_ARRAY_TASK_COUNT="2")
    proc = subprocess.run([PY, SCRIPT] + base(tmp_path) + [
        "--array-summary", "--smtp", relay.addr, "--to", "me@example.org", "--"]
        + child("raise SystemExit(%d)" % code), env=env, cwd=str(tmp_path), timeout=60,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.returncode == code, proc.stderr
    return proc


def test_an_array_id_seen_before_never_swallows_a_tasks_message(tmp_path, smtp_plain):
    """Two clusters sharing a home number their jobs independently. The second array 8999
    found the first one's `summary sent` marker: its tasks were "recorded for the array
    summary" and nothing was ever sent about them."""
    for task in (0, 1):
        _array_task(tmp_path, smtp_plain, "alpha", task, 3)
    assert len(smtp_plain.wait_for(1)) == 1
    for task in (0, 1):
        _array_task(tmp_path, smtp_plain, "beta", task, 4)
    got = smtp_plain.wait_for(2, timeout=20)
    assert len(got) == 2 and b"array 8999" in got[1].data, [m.data[:300] for m in got]
    # a task that reports after its array's summary went out (requeued): its own message
    proc = _array_task(tmp_path, smtp_plain, "alpha", 1, 5)
    got = smtp_plain.wait_for(3, timeout=20)
    assert len(got) == 3, proc.stderr
    assert b"already been sent" in got[2].data


# ---- A14: one unsendable file never blocks the outbox ----

def test_an_unsendable_file_in_the_outbox_does_not_block_the_ones_behind_it(tmp_path, smtp_plain):
    """An empty (or foreign) .eml sorted first: "no recipients" was reported as "the transport
    is not usable now", so every resend (and every run's flush) stopped before the good
    messages behind it, for ever. It is a dead letter; the others go."""
    outbox = tmp_path / "outbox"
    outbox.mkdir(mode=0o700)
    (outbox / "20200101T000000.000000Z-1-aaaaa1.eml").write_bytes(b"")
    (outbox / "20200101T000000.000000Z-1-aaaaa2.eml").write_bytes(b"Subject: no one\n\nbody\n")
    (outbox / "20200101T000001.000000Z-1-aaaaa3.eml").write_bytes(
        b"To: me@example.org\nSubject: behind-3c9d\n\nbody\n")
    proc = subprocess.run([PY, SCRIPT, "resend", "--outbox", str(outbox), "--max-per-hour", "0",
                           "--smtp", smtp_plain.addr], env=isolated_env(tmp_path),
                          cwd=str(tmp_path), timeout=60, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    got = smtp_plain.wait_for(1, timeout=20)
    assert len(got) == 1 and b"behind-3c9d" in got[0].data, proc.stdout + proc.stderr
    assert outbox_messages(tmp_path) == []
    assert len(list((outbox / "dead").glob("*.eml*"))) == 2, list(outbox.rglob("*"))
    assert proc.returncode == 0, proc.stdout + proc.stderr


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


# ---- A7: values no setting can mean ----

@pytest.mark.parametrize("args", [["--max-per-hour", "-1"], ["--smtp-timeout", "nan"],
                                  ["--smtp-timeout", "inf"], ["--gpu-interval", "nan"]])
def test_a_value_no_setting_can_mean_is_a_usage_error(tmp_path, args):
    proc = subprocess.run([PY, SCRIPT] + base(tmp_path) + args + ["--"] + child("pass"),
                          env=isolated_env(tmp_path), cwd=str(tmp_path), timeout=60,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.returncode == 2 and args[0].encode() in proc.stderr, proc.stderr
    assert not (tmp_path / "logs").exists()  # nothing ran


# ---- A16: `classify` of a gpualert log never takes the header's command line as evidence ----

def test_classify_of_a_gpualert_log_skips_the_command_line_in_its_header(tmp_path):
    code = ("import sys; print('RuntimeError: CUDA error: an illegal memory access was "
            "encountered'); sys.exit(1)")
    proc = subprocess.run([PY, SCRIPT] + base(tmp_path) + ["--dry-run", "--", PY, "-c", code,
                           "--on-oom", "CUDA out of memory"], env=isolated_env(tmp_path),
                          cwd=str(tmp_path), timeout=60, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE)
    assert proc.returncode == 1
    import glob
    log = glob.glob(str(tmp_path / "logs" / "*" / "output.log"))[0]
    out = subprocess.run([PY, SCRIPT, "classify", "--json", log], stdout=subprocess.PIPE,
                         timeout=60).stdout
    import json
    verdict = json.loads(out.decode().splitlines()[0])
    assert "command:" not in (verdict["evidence"] or ""), verdict
    assert "illegal memory access" in (verdict["evidence"] or ""), verdict


# ---- A17: a run's own message is claimed from the moment it is spooled ----

def test_a_flush_at_the_same_moment_cannot_take_a_runs_own_message(tmp_path, smtp_plain,
                                                                     monkeypatch):
    """35 runs at once with --max-per-hour 30: a run spooled its message, another run's
    outbox flush claimed it before the run did (then released it at the hourly cap), and the
    run reported "being sent by another gpualert process": its message was never sent."""
    import time as _time
    cfg = dict(N.default_config(), to=["me@example.org"], smtp=smtp_plain.addr, sendmail="none",
               outbox=str(tmp_path / "outbox"), log_dir=str(tmp_path / "logs"), max_per_hour=0,
               quiet=True)
    real, stolen = N.spool_message, []

    def spool_then_a_flush_runs(*args, **kw):
        path, errors = real(*args, **kw)
        for item in N.ready_items(os.path.dirname(path)):  # another process's flush, now
            stolen.append(N.claim_item(item))
        return path, errors
    monkeypatch.setattr(N, "spool_message", spool_then_a_flush_runs)
    out = N.deliver(b"To: me@example.org\r\nSubject: race-5e1f\r\n\r\nbody\r\n", cfg,
                    _time.monotonic() + 20)
    assert out["outcome"] == "sent", out
    assert stolen == []
    assert len(smtp_plain.wait_for(1)) == 1


# ---- A9: bidi controls in the job's output ----

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


def test_classify_reads_stdin_and_pipes(tmp_path):
    # `classify -`, /dev/stdin and <(...) could not be read (classify_log seeks to the tail).
    log = b"Traceback (most recent call last):\nRuntimeError: CUDA error: out of memory\n"
    for argv in (["-"], ["/dev/stdin"]):
        out = subprocess.run([PY, SCRIPT, "classify", "--json"] + argv, input=log,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
        assert out.returncode == 0, out.stderr
        assert json.loads(out.stdout)["class"] == "cuda_oom"
    out = subprocess.run(["bash", "-c", 'printf "%%s" "$0" | "%s" "%s" classify --json <(cat)' % (PY, SCRIPT),
                          log.decode()], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    assert out.returncode == 0 and json.loads(out.stdout)["class"] == "cuda_oom", out.stderr

"""The post-exit path as values: Outcome -> facts -> verdict -> RunResult, one constructor for
every result, a read-only configuration, and delivery bounded by an explicit deadline."""
import os
import time

import pytest

from _load import load_gpualert

G = load_gpualert()


def outcome(**kw):
    child = G.ChildExit(-9, {"maxrss_kib": 1024}, None, False,
                        [("SIGTERM", 100.0, "slurmstepd")], 0.0)
    base = dict(argv=("python", "train.py"), name="train.py", host="gpu1", cwd="/w",
                scheduler={"kind": "slurm", "job_id": "7", "label": "7"}, rank=None,
                log_path="/w/output.log", run_dir="/w", start=10.0, end=110.0, child=child,
                tail=b"step 1\nKilled\n", total_lines=40,
                mem_before={"oom_kill": 0, "own": "Slurm job 7"}, mem_after={"oom_kill": 2, "peak_bytes": 2 ** 31},
                gpu={"ecc_delta": 3}, end_reason=("walltime", "scontrol: JobState=TIMEOUT"),
                metrics={"records": 3},
                notes=("a problem found at start",))
    base.update(kw)
    return G.Outcome(**base)


def test_facts_come_from_the_outcome_alone():
    facts = G.facts_for(outcome())
    assert facts == {"exit_code": -9, "timed_out": False, "exec_error": None,
                     "received_signals": ["SIGTERM"], "total_lines": 40, "oom_kill_delta": 2,
                     "scheduler_reason": "walltime",
                     "scheduler_evidence": "scontrol: JobState=TIMEOUT", "ecc_delta": 3,
                     "elapsed_s": 100.0, "job_ids": ["7"]}  # a scheduler line naming another job is no verdict
    assert "scheduler_reason" not in G.facts_for(outcome(end_reason=(None, "no answer")))


def test_result_is_derived_from_outcome_and_verdict():
    out = outcome()
    result = G.result_for(out, G.make_verdict("walltime", "time limit"))
    assert (result.status, result.exit_status, result.signal_name) == ("TIMEOUT", 137, "SIGKILL")
    assert result.notes == ["a problem found at start", "scheduler: scontrol: JobState=TIMEOUT",
                            "peak memory of the job's cgroup (Slurm job 7): 2.0 GiB",
                            "the cgroup's OOM killer fired 2 time(s) during the run"]
    assert result.tail == ["step 1", "Killed"] and result.argv == ["python", "train.py"]
    assert result.metrics == {"records": 3}
    # outside a batch job the cgroup is the login session's: no memory notes
    assert G.result_for(outcome(scheduler={}, mem_before={"oom_kill": 0}),
                        G.make_verdict(None)).notes[-1].startswith(
        "scheduler:")
    assert out.notes == ("a problem found at start",)  # the outcome itself is untouched


def test_one_constructor_derives_exit_fields_and_rejects_unknown_ones():
    result = G.make_result("FAILED", "x", exit_code=-11)
    assert (result.exit_status, result.signal_name, result.classification.cls) == (139, "SIGSEGV", None)
    assert G.make_result("TEST", "t").exit_status is None
    with pytest.raises(TypeError):
        G.make_result("FAILED", "x", exit_kode=1)


def test_configuration_is_read_only_once_parsed(tmp_path):
    cfg, _, _ = G.load_config({"smtp_timeout": 5.0}, {"XDG_CONFIG_HOME": str(tmp_path)})
    assert cfg["smtp_timeout"] == 5.0
    with pytest.raises(TypeError):
        cfg["smtp_timeout"] = 1.0


def test_delivery_stops_at_the_callers_deadline_and_leaves_cfg_alone(tmp_path, silent_relay):
    cfg = G.load_config({"smtp": silent_relay.addr, "smtp_timeout": 30.0, "to": ["a@b.c"],
                         "outbox": str(tmp_path / "outbox"), "quiet": True},
                        {"XDG_CONFIG_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path)})[0]
    msg, _ = G.build_message(G.make_result("FAILED", "job", exit_code=1), cfg)
    began = time.monotonic()
    out = G.deliver(msg, cfg, began + 1.0)
    assert time.monotonic() - began < 1.0 + 1.5  # thread join and teardown slack
    assert out["outcome"] == "outbox" and "timed out" in out["detail"], out
    assert cfg["smtp_timeout"] == 30.0
    assert os.listdir(str(tmp_path / "outbox"))


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


def test_an_empty_environment_variable_is_unset_not_a_malformed_value(tmp_path):
    """GPUALERT_TIMEOUT= (set but empty) warned "malformed duration" instead of meaning unset."""
    env = {"XDG_CONFIG_HOME": str(tmp_path), "GPUALERT_TIMEOUT": "", "GPUALERT_TO": " "}
    cfg, sources, problems = G.load_config({}, env)
    assert problems == [] and cfg["timeout"] is None and cfg["to"] == []
    assert "timeout" not in sources or not sources["timeout"].startswith("env")

"""The facts a researcher acts on, from real runs: the time-limit warning signal (passed on only
to a process that handles it; a death by it told as that), the note about what the job wrote
after it, times to the second, the evidence line quoted as the log has it, time lost to a
requeue, and a hang told as a hang. Real output comes from tests/fixtures/real (versions.json)."""
import email
import email.policy
import os
import signal
import subprocess
import time

os.environ["TZ"] = "UTC"
time.tzset()

from _load import load_gpualert
from messages import make_result
from wrapper_helpers import (PY, SCRIPT, base, child, isolated_env, log_text, outbox_messages, row,
                             run_gpualert, run_json, wait_for)

N = load_gpualert()
REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "real")
HEADER_KEYS = ("=== gpualert", "command:", "host:", "cwd:", "start:", "pid:", "gpualert:")


def _real_output(name):
    """The command's own output in a captured run log: between gpualert's header and footer."""
    with open(os.path.join(REAL, name), encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    start = 0
    while lines[start].startswith(HEADER_KEYS):
        start += 1
    end = lines.index("=== gpualert command ended ===")
    return lines[start:end]


def _messages(tmp):
    out = []
    for path in outbox_messages(tmp):
        with open(path, "rb") as handle:
            out.append(email.message_from_binary_file(handle, policy=email.policy.default))
    return out


def _final_text(tmp):
    (msg,) = [m for m in _messages(tmp) if m["X-Gpualert-Status"] not in ("WARNING", "STALLED")]
    return msg.get_body(("plain",)).get_content()


def _slurm_job(tmp, **extra):
    """A pretend batch job: gpualert is its batch shell and gets --signal=B:USR1's warning."""
    return isolated_env(tmp, SLURM_JOB_ID="4242", SLURMD_NODENAME="gpu17", **extra)


def _start(tmp, argv, env):
    proc = subprocess.Popen([PY, SCRIPT] + base(tmp) + ["--"] + argv, env=env, cwd=str(tmp),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    assert proc.stdout.readline() == b"ready\n"
    return proc


def _warned(tmp):
    """gpualert has handled the warning: its early WARNING is in the outbox (sent after the relay)."""
    return wait_for(lambda: any(m["X-Gpualert-Status"] == "WARNING" for m in _messages(tmp)), 30,
                    step=0.1, what="the early WARNING")


# ---- the time-limit warning signal ----

WAIT_FOR_GO = ("import os, sys, time\n"
               "print('ready', flush=True)\n"
               "deadline = time.time() + 30\n"
               "while not os.path.exists('go') and time.time() < deadline:\n"
               "    time.sleep(0.05)\n"
               "print('survived the warning', flush=True)\n")


def test_the_warning_signal_is_not_passed_to_a_command_without_a_handler(tmp_path):
    """The README's --signal=B:USR1@N reaches gpualert; a script with no handler died of it
    when gpualert passed it on, a minute before its time ran out."""
    proc = _start(tmp_path, child(WAIT_FOR_GO), _slurm_job(tmp_path))
    proc.send_signal(signal.SIGUSR1)
    _warned(tmp_path)
    (tmp_path / "go").write_text("")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, (out, err)
    assert b"survived the warning" in out
    assert run_json(tmp_path)["status"] == "SUCCESS"
    assert "was not passed on: no process of the command catches it" in _final_text(tmp_path)


HANDLER = ("import signal, sys, time\n"
           "signal.signal(signal.SIGUSR1, lambda s, f: (print('got USR1: checkpointing', flush=True), sys.exit(0)))\n"
           "print('ready', flush=True)\n"
           "time.sleep(30)\n")


def test_the_warning_signal_reaches_the_process_that_handles_it_under_a_shell(tmp_path):
    """bash -c '...; ...' does not exec its command: the shell (no trap) is gpualert's child and
    would die of the signal, while the Python process under it is the one that checkpoints."""
    script = "%s -c \"$CODE\"; echo shell-done" % PY
    proc = _start(tmp_path, ["bash", "-c", script], _slurm_job(tmp_path, CODE=HANDLER))
    proc.send_signal(signal.SIGUSR1)
    out, err = proc.communicate(timeout=60)
    assert b"got USR1: checkpointing" in out and b"shell-done" in out, (out, err)
    assert proc.returncode == 0


LATE_HANDLER = ("import os, signal, sys, time\n"
                "print('ready', flush=True)\n"
                "deadline = time.time() + 30\n"
                "while not os.path.exists('imports-done') and time.time() < deadline:\n"
                "    time.sleep(0.05)\n"
                "signal.signal(signal.SIGUSR1, lambda s, f: (print('got USR1: checkpointing', flush=True), sys.exit(0)))\n"
                "time.sleep(30)\n")


def test_a_warning_that_came_before_the_handler_was_set_is_passed_on_once_it_is(tmp_path):
    """Slurm may send --signal=B:USR1@N within seconds of the start (it did, on a one-minute
    job): the script was still importing torch, and its handler never got the warning."""
    proc = _start(tmp_path, child(LATE_HANDLER), _slurm_job(tmp_path))
    proc.send_signal(signal.SIGUSR1)
    _warned(tmp_path)
    (tmp_path / "imports-done").write_text("")
    out, err = proc.communicate(timeout=60)
    assert out.count(b"got USR1: checkpointing") == 1 and proc.returncode == 0, (out, err)
    assert "SIGUSR1 at " in _final_text(tmp_path) and "was passed on to the job" in _final_text(tmp_path)


DIES_OF_IT = ("import os, signal, time\n"
              "def on_usr1(sig, frame):\n"
              "    print('USR1: saving, then the default action', flush=True)\n"
              "    signal.signal(signal.SIGUSR1, signal.SIG_DFL)\n"
              "    os.kill(os.getpid(), signal.SIGUSR1)\n"
              "signal.signal(signal.SIGUSR1, on_usr1)\n"
              "print('ready', flush=True)\n"
              "time.sleep(30)\n")


def test_a_death_by_the_warning_gpualert_passed_on_is_told_with_its_fix(tmp_path):
    """It said 'FAILED: unknown (killed by SIGUSR1)' and 'Resubmit once the cause is fixed'."""
    proc = _start(tmp_path, child(DIES_OF_IT), _slurm_job(tmp_path))
    proc.send_signal(signal.SIGUSR1)
    proc.communicate(timeout=60)
    assert proc.returncode == 128 + signal.SIGUSR1  # the exit status stays the command's
    text = _final_text(tmp_path)
    what = row(text, "What")
    assert what == "TIMEOUT: walltime (died of SIGUSR1, the time-limit warning gpualert passed on)", text
    advice = row(text, "Next")
    assert "signal.signal(signal.SIGUSR1, handler)" in advice and "#SBATCH --signal" in advice, advice
    assert "unknown" not in what


def test_the_note_after_the_warning_counts_a_save_made_at_once(tmp_path):
    """step_132.pt, saved in answer to SIGUSR1, carries a file time a clock tick before the
    signal's: run.json had answer = step_132.pt, the note said 'no checkpoint was written'."""
    at = time.time()
    ckdir = tmp_path / "out" / "wall3"
    ckdir.mkdir(parents=True)
    for step, written in ((120, at - 5.0), (132, at - 0.005), (140, at + 2.0)):
        path = ckdir / ("step_%d.pt" % step)
        path.write_bytes(b"x")
        os.utime(str(path), (written, written))
    signals = [("SIGUSR1", at, "slurmstepd")]
    ckpt = N.choose_checkpoint(N.find_checkpoints(str(tmp_path), at - 10), {}, signals)
    assert os.path.basename(ckpt["answer"]["path"]) == "step_132.pt"
    note = N.warning_signal_note(signals, ckpt)
    assert "it then wrote %s" % (ckdir / "step_132.pt") in note and "no checkpoint" not in note, note


# ---- times to the second where they are short ----

def test_short_times_are_shown_to_the_second(tmp_path):
    """SGE's 'Time: 2m of 1m allowed' for 2m12s of 1m30s; 'need about 3m' for 3m39s."""
    assert [N.format_duration(s) for s in (45, 90, 132, 219, 600, 7980)] == \
        ["45s", "1m30s", "2m12s", "3m39s", "10m", "2h13m"]
    r = make_result(tmp_path, status="TIMEOUT", start=1000.0, end=1132.0,
                    scheduler={"kind": "sge", "job_id": "77", "limit_s": 90.0})
    assert N._time_limit_text(r) == "2m12s of 1m30s allowed (0s left)"
    metrics = {"progress": {"step": 100, "step_total": 1000}, "throughput": "4.1 it/s"}
    assert "need about 3m39s, 10m left" in N.finish_text(metrics, 600, 1000.0)  # 900 / 4.1 s


# ---- the evidence line, byte for byte ----

def test_the_evidence_line_is_quoted_as_the_log_has_it(tmp_path):
    """torch under ulimit -v: 'you tried to allocate 16777216 bytes' was quoted as 'allocate
    16.0 MiB (16777216 bytes)', so grepping the log for the quoted line found nothing."""
    output = _real_output("torch_alloc_ulimit_v.log")
    (line,) = [l for l in output if "DefaultCPUAllocator" in l]
    (tmp_path / "out.txt").write_text("\n".join(output) + "\n")
    code = "import sys; sys.stdout.write(open('out.txt').read()); sys.exit(1)"
    run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(code))
    shown = row(_final_text(tmp_path), "Line")
    assert shown.startswith("output.log:") and (": " + line + " [16777216 bytes = 16.0 MiB]") in shown, shown
    brief = N.brief_for(N.RunResult(**dict(make_result(tmp_path)._asdict(), classification=N.Classification(
        "ram_oom", "host_oom", "", 46, "x  =  tried to allocate 16777216 bytes", ""))))
    assert brief.evidence == "x  =  tried to allocate 16777216 bytes"  # chat quotes it as code, spaces kept


# ---- time lost to a requeue ----

def test_time_lost_counts_work_redone_and_the_queue_wait(tmp_path):
    """Attempt 1 ran 29 s, saved 2.5 s before it was preempted, and attempt 2 began 2 minutes
    later: 'Time lost: 29s' counted neither the queue nor what was really lost."""
    record = {"status": "PREEMPTED", "class": "preempted", "host": "gpu17", "start": 1000.0,
              "duration_s": 29.0, "requeue": {"attempt": 1, "cause": "preempted", "state": "done"},
              "metrics": {"checkpoint": {"path": "/w/out/rq/step_100.pt", "mtime": 1026.5}}}
    earlier = [N.attempt_summary(record)]
    second = make_result(tmp_path, status="SUCCESS", start=1149.0, end=1200.0, classification=None,
                         requeue={"attempt": 2, "state": None, "earlier": earlier})
    rows = dict(N.requeue_rows(second))
    assert rows["Time lost"] == "2m02s (work redone: 2s in 1 failed attempt; waiting in the queue: 2m)", rows


# ---- a hang told as a hang ----

def _replay_hang(tmp, extra):
    """The real torchrun run: rank 0 prints steps 1-4, then both ranks wait (rank 1 stuck,
    rank 0 in the allreduce) until SIGTERM, to which torchrun answers with its shutdown lines."""
    output = _real_output("torchrun_ddp_hang_gloo.log")
    cut = output.index("step 4/100 loss=0.4411") + 1
    (tmp / "before.txt").write_text("\n".join(output[:cut]) + "\n")
    (tmp / "after.txt").write_text("\n".join(output[cut:]) + "\n")
    code = ("import signal, sys, time\n"
            "def on_term(sig, frame):\n"
            "    sys.stdout.write(open('after.txt').read()); sys.stdout.flush(); sys.exit(1)\n"
            "signal.signal(signal.SIGTERM, on_term)\n"
            "for line in open('before.txt'):\n"
            "    sys.stdout.write(line); sys.stdout.flush(); time.sleep(0.05)\n"
            "time.sleep(60)\n")
    return run_gpualert(tmp, base(tmp) + extra + ["--"] + child(code))


def test_a_ddp_run_hung_in_allreduce_is_told_as_a_hang(tmp_path):
    """It was told 'Rerun with a longer --timeout' after 56 silent seconds of 61."""
    proc = _replay_hang(tmp_path, ["--timeout", "4s"])
    assert proc.returncode == 1
    text = _final_text(tmp_path)
    assert row(text, "What").startswith("TIMEOUT: walltime (hung: no output for the last "), text
    assert row(text, "Line").endswith(": step 4/100 loss=0.4411"), text
    advice = row(text, "Next")
    assert "longer --timeout" not in advice and "more time would not help" in advice, advice
    assert "NCCL_DEBUG=INFO" in advice and "py-spy dump" in advice
    assert run_json(tmp_path)["classification"]["rule"] == "hang"


def test_a_run_stopped_while_it_was_still_printing_is_no_hang(tmp_path):
    """Nor one that printed a line and then worked silently: with no rhythm to compare, a
    silence is no hang unless it is longer than --stall."""
    printing = ("import time\n"
                "for i in range(600):\n"
                "    print('step %d' % i, flush=True); time.sleep(0.1)\n")
    quiet = "import time; print('loading', flush=True); time.sleep(60)"
    for name, code in (("printing", printing), ("quiet", quiet)):
        folder = tmp_path / name
        folder.mkdir()
        run_gpualert(folder, base(folder) + ["--timeout", "2s", "--"] + child(code))
        advice = row(_final_text(folder), "Next")
        assert advice.startswith("gpualert's own --timeout stopped the command"), advice
        assert b"hung" not in log_text(folder)
    folder = tmp_path / "stall"
    folder.mkdir()
    run_gpualert(folder, base(folder) + ["--timeout", "3s", "--stall", "1s", "--"] + child(quiet))
    assert row(_final_text(folder), "What").startswith("TIMEOUT: walltime (hung: "), _final_text(folder)

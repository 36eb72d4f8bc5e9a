"""--requeue CAUSES: the pure decision (cause x budget -> action, reason), and the real file
run as a pretend Slurm job with fake scontrol/sbatch on PATH that record the command lines
gpualert builds. The real cluster's cases are in tests/test_slurm.py."""
import glob
import json
import os
import shlex
import sys
import time
from email import policy
from email.parser import BytesParser

import pytest

from _load import load_gpualert
from wrapper_helpers import PY, base, isolated_env, outbox_messages, run_gpualert, write_executable

g = load_gpualert()

ALL = list(g.REQUEUE_CAUSES)
PREEMPT_LINE = "*** JOB 4242 ON gpu17 CANCELLED AT 2026-12-04T15:04:51 DUE TO PREEMPTION ***"
WALLTIME_LINE = "*** JOB 4242 ON gpu17 CANCELLED AT 2026-12-04T15:04:51 DUE TO TIME LIMIT ***"
XID_LINE = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, GPU has fallen off the bus."
DRAINED = "MIXED+DRAIN"  # what `scontrol show node` says once the node is drained for the fault


# ---- the pure decision ----

def test_causes_parse_all_and_refuse_unknown_names():
    assert g.parse_requeue_causes("all") == ALL
    assert g.parse_requeue_causes(" walltime , preempted") == ["preempted", "walltime"]
    assert g.parse_requeue_causes("none") == []
    with pytest.raises(g.ConfigError, match="unknown requeue cause 'preemted'"):
        g.parse_requeue_causes("preemted")


@pytest.mark.parametrize("cls,cause", [("preempted", "preempted"), ("walltime", "walltime"),
                                       ("gpu_hardware", "hardware")])
def test_each_cause_is_acted_on_when_asked(cls, cause):
    d = g.decide_requeue(cls, ALL, [], 3, "slurm")
    assert d.action == ("resubmit" if cause == "hardware" else "requeue")
    assert d.cause == cause and d.reason is None


@pytest.mark.parametrize("cls", sorted(g.NEVER_REQUEUED))
def test_never_requeued_classes_say_why(cls):
    d = g.decide_requeue(cls, ALL, [], 3, "slurm")
    assert d.action is None
    assert d.reason.startswith("%s: not requeued (" % cls)


def test_never_requeued_reasons_in_words():
    assert g.decide_requeue("cuda_oom", ALL, [], 3, "slurm").reason == \
        "cuda_oom: not requeued (a rerun needs the same memory)"
    assert "a rerun would fail the same way" in g.decide_requeue("traceback", ALL, [], 3, "slurm").reason
    assert "diverge" in g.decide_requeue("nan_loss", ALL, [], 3, "slurm").reason


def test_success_and_requeue_off_decide_nothing():
    assert g.decide_requeue(None, ALL, [], 3, "slurm") is None
    assert g.decide_requeue("preempted", [], [], 3, "slurm") is None


def test_a_cause_not_asked_for_is_not_requeued():
    d = g.decide_requeue("walltime", ["preempted"], [], 3, "slurm")
    assert d.action is None and "--requeue preempted leaves walltime out" in d.reason


def test_other_failures_are_not_requeued():
    d = g.decide_requeue("nccl", ALL, [], 3, "slurm")
    assert d.action is None and "not a cause --requeue covers" in d.reason


def _done(cause, n):
    return [{"cause": cause, "action": "requeue", "state": "done"}] * n


def test_walltime_and_hardware_share_max_requeues():
    earlier = _done("walltime", 2) + [{"cause": "hardware", "action": "resubmit", "state": "done"}]
    d = g.decide_requeue("walltime", ALL, earlier, 3, "slurm")
    assert d.action is None and d.reason == "requeue budget used (3 of 3): not requeued"
    assert g.decide_requeue("walltime", ALL, earlier[:2], 3, "slurm").budget == (3, 3)


def test_preemptions_do_not_spend_max_requeues_and_have_their_own_cap():
    d = g.decide_requeue("walltime", ALL, _done("preempted", 10), 1, "slurm")
    assert d.action == "requeue" and d.budget == (1, 1)
    d = g.decide_requeue("preempted", ALL, _done("walltime", 5), 0, "slurm")
    assert d.action == "requeue" and d.budget == (1, g.PREEMPT_REQUEUES_MAX)
    d = g.decide_requeue("preempted", ALL, _done("preempted", g.PREEMPT_REQUEUES_MAX), 3, "slurm")
    assert d.action is None
    assert d.reason == "preemption requeue budget used (20 of 20): not requeued"


def test_refused_or_dry_run_attempts_spend_nothing():
    earlier = [{"cause": "walltime", "action": "requeue", "state": "refused"},
               {"cause": "walltime", "action": "requeue", "state": "dry-run"}]
    assert g.decide_requeue("walltime", ALL, earlier, 1, "slurm").action == "requeue"


def test_outside_a_scheduler_nothing_could_be_requeued():
    d = g.decide_requeue("preempted", ALL, [], 3, "")
    assert d.action is None and "nothing could be requeued" in d.reason
    assert "never reruns" in d.reason
    assert "PBS requeue is not available" in g.decide_requeue("walltime", ALL, [], 3, "pbs").reason


def test_sge_requeues_the_same_job_and_excludes_the_node_with_qalter():
    assert g.decide_requeue("gpu_hardware", ALL, [], 3, "sge").action == "requeue"
    rec = {"job_number": "40", "restart": "y", "hard resource_list": "h_rt=600,hostname=!gpu03"}
    assert g.sge_requeue_refusal(rec) is None
    assert "qsub -r y" in g.sge_requeue_refusal(dict(rec, restart="n"))
    req = {"cause": "hardware", "exclude": ["gpu03", "gpu17"]}
    assert g.requeue_steps_sge(req, rec, "40") == [
        ["qalter", "-l", "h_rt=600,hostname=!gpu03&!gpu17", "40"], ["qmod", "-rj", "40"]]
    assert g.requeue_steps_sge({"cause": "walltime"}, rec, "40") == [["qmod", "-rj", "40"]]
    # the user's own hostname restriction stays, the exclusion is added to it (qstat -j shows
    # an h= as hostname=); an | outside parentheses is put inside them
    for own, kept in (("hostname=gpu0*", "gpu0*&"), ("hostname=a|b", "(a|b)&"),
                      ("hostname=(a|b)&!c", "(a|b)&!c&"), ("hostname=a&b|c", "(a&b|c)&")):
        argv = g.sge_exclude_argv(dict(rec, **{"hard resource_list": "h_rt=600," + own}), ["gpu03", "gpu17"], "40")
        assert argv == ["qalter", "-l", "h_rt=600,hostname=%s!gpu03&!gpu17" % kept, "40"], argv
    req = dict(req, action="requeue", state="done", node="gpu17")
    assert g.requeue_subject(req, "gpu_hardware").startswith("gpu_hardware on gpu17: requeued without gpu17")


def test_subject_words():
    req = {"action": "requeue", "state": "done", "next_resume": "/w/ck/step_3000.pt"}
    assert g.requeue_subject(req, "preempted") == "requeued, resumes from ck/step_3000.pt"  # whose, too
    req = {"action": "resubmit", "cause": "hardware", "state": "done", "node": "gpu17", "new_job": "4250"}
    assert g.requeue_subject(req, "gpu_hardware").startswith(
        "gpu_hardware on gpu17: requeued as job 4250 without gpu17")
    req = {"action": None, "reason": "requeue budget used (3 of 3): not requeued"}
    assert g.requeue_subject(req, "walltime") == "requeue budget used (3 of 3): not requeued"


def test_resume_is_the_newest_checkpoint_of_the_records():
    recs = [{"metrics": {"checkpoint": {"path": "/a/step_2.pt", "mtime": 20}}},
            {"metrics": {}},
            {"metrics": {"checkpoint": {"path": "/a/step_1.pt", "mtime": 10}}}]
    assert g.resume_checkpoint(recs)["path"] == "/a/step_2.pt"
    assert g.resume_checkpoint([{"metrics": {}}]) is None


SCONTROL_REC = {"JobId": "4242", "JobName": "train", "Partition": "gpu", "Account": "(null)",
                "TimeLimit": "1-00:00:00", "NumNodes": "2", "NumTasks": "8", "CPUs/Task": "4",
                "TresPerNode": "gres:gpu:4", "MinMemoryNode": "64G", "WorkDir": "/w",
                "StdOut": "/w/slurm-4242.out", "StdErr": "/w/slurm-4242.out",
                "StdIn": "/dev/null", "BatchFlag": "1", "Requeue": "1"}


def test_resubmit_argv_keeps_the_jobs_options_and_excludes_the_nodes():
    argv = g.resubmit_argv(SCONTROL_REC, "/r/batch_script.4242", ["gpu03", "gpu17"], ["4242"])
    assert argv[0] == "sbatch" and argv[-1] == "/r/batch_script.4242"
    for arg in ("--exclude=gpu03,gpu17", "--export=ALL,GPUALERT_REQUEUED_FROM=4242",
                "--job-name=train", "--partition=gpu", "--time=1-00:00:00", "--nodes=2",
                "--ntasks=8", "--cpus-per-task=4", "--gres=gpu:4", "--mem=64G", "--chdir=/w",
                "--output=/w/slurm-4242.out", "--open-mode=append"):
        assert arg in argv, (arg, argv)
    assert not [a for a in argv if a.startswith(("--account", "--input", "--array"))]
    argv = g.resubmit_argv(dict(SCONTROL_REC, ArrayJobId="4240", ArrayTaskId="7"), "/s", ["n1"], ["4240_7"])
    assert "--array=7" in argv  # this task again, never the script's whole array


# `scontrol show job` of a held job on Slurm 22.05.8, submitted with `sbatch --hold --exclusive
# --nice=50 --comment="lr=3e-4 bs=32" --mail-type=END,FAIL --mail-user=bob@example.com --time=10:00
# --time-min=5:00 --deadline=2030-01-01T00:00:00 --requeue --mem-per-cpu=100M --ntasks-per-node=2
# --partition=low`; ExcNodeList, Reservation= and Licenses= as 22.05 prints them (this cluster
# has neither a reservation nor licenses).
SCONTROL_22_05 = """JobId=4242 JobName=s.sh
   UserId=root(0) GroupId=root(0) MCS_label=N/A
   Priority=0 Nice=50 Account=(null) QOS=(null)
   JobState=PENDING Reason=JobHeldUser Dependency=(null)
   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=00:00:00 TimeLimit=00:10:00 TimeMin=00:05:00
   SubmitTime=2026-12-06T13:57:17 EligibleTime=Unknown
   AccrueTime=Unknown
   StartTime=Unknown EndTime=Unknown Deadline=2030-01-01T00:00:00
   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-06T13:57:17 Scheduler=Main
   Partition=low AllocNode:Sid=localhost:7364
   ReqNodeList=(null) ExcNodeList=gpu[03,05]
   NodeList=
   NumNodes=1 NumCPUs=2 NumTasks=2 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
   TRES=cpu=2,mem=200M,node=1,billing=2
   Socks/Node=* NtasksPerN:B:S:C=2:0:*:* CoreSpec=*
   MinCPUsNode=2 MinMemoryCPU=100M MinTmpDiskNode=0
   Features=(null) DelayBoot=00:00:00 Reservation=maint
   OverSubscribe=NO Contiguous=0 Licenses=matlab:1 Network=(null)
   Command=/tmp/h5-x/s.sh
   WorkDir=/tmp/h5-x
   Comment=lr=3e-4 bs=32 
   StdErr=/tmp/h5-x/o-4242.txt
   StdIn=/dev/null
   StdOut=/tmp/h5-x/o-4242.txt
   Power=
   MailUser=bob@example.com MailType=END,FAIL
   

"""


def test_resubmit_argv_carries_every_option_scontrol_shows():
    # --exclusive, --nice, --comment, --mail-*, --time-min, --deadline, --reservation were lost
    rec = g.parse_scontrol(SCONTROL_22_05)[0]
    argv = g.resubmit_argv(rec, "/r/batch_script.4242", ["gpu17"], ["4242"])
    for arg in ("--exclusive", "--nice=50", "--comment=lr=3e-4 bs=32", "--mail-type=END,FAIL",
                "--mail-user=bob@example.com", "--time-min=00:05:00", "--deadline=2030-01-01T00:00:00",
                "--reservation=maint", "--licenses=matlab:1", "--requeue", "--time=00:10:00",
                "--mem-per-cpu=100M", "--ntasks-per-node=2", "--ntasks=2", "--cpus-per-task=1",
                "--partition=low", "--nodes=1", "--output=/tmp/h5-x/o-4242.txt", "--chdir=/tmp/h5-x"):
        assert arg in argv, (arg, argv)
    assert not [a for a in argv if a.startswith(("--account", "--qos", "--nodelist", "--tmp", "--gres",
                                                 "--gpus", "--network", "--input", "--oversubscribe"))], argv
    shared = [g.resubmit_argv(dict(rec, OverSubscribe=v), "/s", ["n"], ["1"]) for v in ("OK", "USER", "YES")]
    assert [[a for a in x if a.startswith(("--exclusive", "--oversubscribe"))] for x in shared] == [
        [], ["--exclusive=user"], ["--oversubscribe"]]
    assert "--no-requeue" in g.resubmit_argv(dict(rec, Requeue="0", Nice="-5"), "/s", ["n"], ["1"])
    assert not [a for a in g.resubmit_argv(dict(rec, Nice="-5"), "/s", ["n"], ["1"]) if "nice" in a]


def test_resubmit_argv_carries_the_gpus_in_either_spelling_and_never_what_sbatch_refuses_together():
    gpus = dict(g.parse_scontrol(SCONTROL_22_05)[0], TresPerJob="gres/gpu:a100:8",
                TresPerNode="gres/gpu:4", TresPerTask="cpu=4,gres/gpu:1", CpusPerTres="gres/gpu:6",
                MemPerTres="gres:gpu:10240", TresPerSocket="gres:gpu:2")
    argv = g.resubmit_argv(gpus, "/s", ["n"], ["1"])
    for arg in ("--gpus=a100:8", "--gres=gpu:4", "--gpus-per-task=1", "--cpus-per-gpu=6",
                "--mem-per-gpu=10240", "--gpus-per-socket=2"):
        assert arg in argv, (arg, argv)
    # sbatch: --cpus-per-gpu with --cpus-per-task, --mem-per-gpu with --mem* are fatal
    assert not [a for a in argv if a.startswith(("--cpus-per-task", "--mem=", "--mem-per-cpu"))], argv
    argv = g.resubmit_argv(dict(gpus, NtasksPerTRES="2"), "/s", ["n"], ["1"])
    assert "--ntasks-per-gpu=2" in argv
    assert not [a for a in argv if a.startswith(("--gpus-per-task", "--gpus-per-socket", "--ntasks-per-node"))]


def test_the_exclusions_a_job_had_are_kept_whole():
    assert g.hostlist_items("gpu[03,05],n7") == ["gpu[03,05]", "n7"]


def test_a_signal_given_outside_the_script_is_found_in_the_submit_line_or_the_environment():
    line = "sbatch --time=1:00 --signal B:USR1@300 train.sh --signal=not-ours"
    assert g.submitted_signal(line, "/home/u/train.sh", {}) == "B:USR1@300"
    assert g.submitted_signal("sbatch --signal=USR2@60 -p gpu job.sh", "/w/job.sh", {}) == "USR2@60"
    assert g.submitted_signal("sbatch train.sh --signal=not-ours", "/w/train.sh", {}) is None
    assert g.submitted_signal("", None, {"SBATCH_SIGNAL": "B:USR1@120"}) == "B:USR1@120"
    assert g.submitted_signal("sbatch --signal=B:TERM@30 x.sh", "/x.sh", {"SBATCH_SIGNAL": "USR1"}) == "B:TERM@30"


def test_the_dry_run_resubmission_keeps_the_signal_from_sacct(tmp_path, monkeypatch):
    fake = tmp_path / "bin"
    fake.mkdir()
    for name, body in (("scontrol", "printf '%%s\\n' '%s'" % SCONTROL_22_05.strip()),
                       ("sacct", "echo 'sbatch --signal=B:USR1@120 --exclusive s.sh'")):
        write_executable(fake / name, "#!/bin/sh\n%s\n" % body)
    monkeypatch.setenv("PATH", str(fake) + os.pathsep + os.environ["PATH"])
    monkeypatch.delenv("SBATCH_SIGNAL", raising=False)
    req = {"action": "resubmit", "cause": "hardware", "exclude": [], "node": "gpu17", "chain": [],
           "gpu_fault": "nvidia-smi: 2 uncorrected ECC errors since the start"}  # the fault, confirmed
    g.SLURM.plan_requeue(req, {"kind": "slurm", "job_id": "4242", "label": "4242"}, True, str(tmp_path))
    assert req["state"] == "dry-run", req
    assert "--signal=B:USR1@120" in req["command"] and "--exclude=gpu03,gpu05,gpu17" not in req["command"]
    assert "--exclude=gpu17,gpu[03,05]" in req["command"], req["command"]
    assert "'--comment=lr=3e-4 bs=32'" in req["command"], req["command"]


def test_slurm_refusals_in_words():
    assert g.slurm_requeue_refusal(dict(SCONTROL_REC), "requeue") is None
    assert "--no-requeue (Requeue=0)" in g.slurm_requeue_refusal(dict(SCONTROL_REC, Requeue="0"), "requeue")
    assert g.slurm_requeue_refusal(dict(SCONTROL_REC, Requeue="0"), "resubmit") is None
    assert "not a batch job" in g.slurm_requeue_refusal(dict(SCONTROL_REC, BatchFlag="0"), "resubmit")


# ---- the real file, as a pretend Slurm job, with fake scontrol and sbatch ----

FAKE_SCONTROL = r"""#!/bin/sh
echo "scontrol $*" >> "$FAKE_CALLS"
case "$1 $2" in
  "show job") echo "JobId=${4:-$3} JobName=train JobState=${FAKE_STATE:-COMPLETING} Reason=${FAKE_REASON:-None} Requeue=${FAKE_REQUEUE_FLAG:-1} Restarts=0 BatchFlag=${FAKE_BATCH:-1} RunTime=${FAKE_RUNTIME:-00:00:05} TimeLimit=${FAKE_LIMIT:-01:00:00} Partition=gpu ExcNodeList=${FAKE_EXC:-(null)} WorkDir=/w StdOut=/w/out.txt NumNodes=1 NumTasks=1 CPUs/Task=1"; exit 0 ;;
  "show node") echo "NodeName=$4 State=${FAKE_NODE_STATE:-MIXED} Reason=${FAKE_NODE_REASON:-none}"; exit 0 ;;
  "show config") echo "KillWait = 30 sec"; exit 0 ;;
  "requeue "*) if [ -n "$FAKE_REQUEUE_HANG" ]; then exec sleep 30; fi
    if [ -n "$FAKE_REQUEUE_ERR" ]; then echo "$FAKE_REQUEUE_ERR" >&2; exit 1; fi; exit 0 ;;
  "release 4250") exit 0 ;;
  "write batch_script") printf '#!/bin/sh\n#SBATCH -J train\npython train.py\n' > "$4"; exit 0 ;;
esac
exit 1
"""

FAKE_SBATCH = r"""#!/bin/sh
echo "sbatch $* GPUALERT_REQUEUED_FROM=$GPUALERT_REQUEUED_FROM SLURM_JOB_ID=$SLURM_JOB_ID" >> "$FAKE_CALLS"
if [ -n "$FAKE_SBATCH_HANG" ]; then exec sleep 30; fi
if [ -n "$FAKE_ONE_NODE" ] && [ "$2" != "--hold" ]; then
  echo "sbatch: error: Batch job submission failed: Requested node configuration is not available" >&2
  exit 1
fi
echo "4250"
"""


def _fake_bin(tmp):
    folder = tmp / "fake-bin"
    folder.mkdir(exist_ok=True)
    for name, text in (("scontrol", FAKE_SCONTROL), ("sbatch", FAKE_SBATCH)):
        write_executable(folder / name, text)
    return str(folder)


def _job_env(tmp, **extra):
    env = isolated_env(tmp, **dict({"SLURM_JOB_ID": "4242", "SLURMD_NODENAME": "gpu17"}, **extra))
    env["PATH"] = _fake_bin(tmp) + os.pathsep + env["PATH"]
    env["FAKE_CALLS"] = str(tmp / "calls.txt")
    return env


def _calls(tmp):
    path = tmp / "calls.txt"
    return path.read_text().splitlines() if path.exists() else []


def _messages(tmp):
    out = []
    for path in outbox_messages(tmp):
        with open(path, "rb") as handle:
            out.append(BytesParser(policy=policy.default).parse(handle))
    return out


def _text(msg):
    return msg.get_body(("plain",)).get_content()


def _print_and_exit(line, code=1, extra=""):
    return [PY, "-c", "import os, sys\n%s\nprint(%r, flush=True)\nsys.exit(%d)" % (extra, line, code)]


def _records(tmp):
    found = []
    for path in sorted(glob.glob(str(tmp / "logs" / "*" / "run.json"))):
        with open(path) as handle:
            found.append(json.load(handle))
    return found


def test_preempted_job_is_requeued_last_and_the_exit_status_stays(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"]
                        + _print_and_exit(PREEMPT_LINE, 7), env=_job_env(tmp_path))
    assert proc.returncode == 7, proc.stderr
    calls = _calls(tmp_path)
    assert calls[-1] == "scontrol requeue 4242", calls
    (msg,) = _messages(tmp_path)
    assert "PREEMPTED job 4242" in msg["Subject"] or "job 4242" in msg["Subject"]
    assert "(attempt 1): requeued, no checkpoint to resume from" in msg["Subject"], msg["Subject"]
    assert "Resubmit:   done by gpualert: scontrol requeue 4242" in _text(msg)
    (rec,) = _records(tmp_path)
    assert rec["requeue"]["state"] == "done" and rec["requeue"]["thread"] == [msg["Message-ID"]]


def test_an_array_task_requeues_only_itself(tmp_path):
    # attack 2, finding 2: `scontrol requeue 70` requeues every task of array 70
    env = _job_env(tmp_path, SLURM_JOB_ID="70", SLURM_ARRAY_JOB_ID="70", SLURM_ARRAY_TASK_ID="1")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"]
                        + _print_and_exit(PREEMPT_LINE.replace("4242", "70"), 1), env=env)
    assert proc.returncode == 1, proc.stderr
    calls = _calls(tmp_path)
    assert calls[-1] == "scontrol requeue 70_1", calls
    assert "scontrol show job 70_1" in calls, calls
    (msg,) = _messages(tmp_path)
    assert "Resubmit:   done by gpualert: scontrol requeue 70_1" in _text(msg)


def test_another_jobs_scheduler_line_is_no_verdict_on_this_job():
    # attack 2, finding 3: an old log line quoted by the program, then its own error
    text = PREEMPT_LINE + "\nTraceback (most recent call last):\n  File \"t.py\", line 1, in <module>\n" \
        "ValueError: bad shape\n"
    assert g.classify_text(text, {"exit_code": 1, "job_ids": ["5000"]}).cls != "preempted"
    assert g.classify_text(text, {"exit_code": 1, "job_ids": ["4242"]}).cls == "preempted"
    assert g.classify_text(text, {"exit_code": 1, "job_ids": ["4240_7", "4242"]}).cls == "preempted"
    step = PREEMPT_LINE.replace("JOB 4242", "STEP 5000.0")
    assert g.classify_text(step, {"exit_code": 1, "job_ids": ["5000"]}).cls == "preempted"


def test_a_quoted_preemption_of_another_job_is_not_requeued(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "all", "--"]
                        + _print_and_exit(PREEMPT_LINE, 1, "print('ok')")
                        + [], env=_job_env(tmp_path, SLURM_JOB_ID="5000"))
    assert proc.returncode == 1
    assert not [c for c in _calls(tmp_path) if c.startswith(("scontrol requeue", "sbatch"))]
    (rec,) = _records(tmp_path)
    assert rec["class"] != "preempted", rec["class"]


def test_a_preemption_slurm_did_not_make_is_not_requeued(tmp_path):
    # attack 2, finding 3: Slurm is believed over the log (the job still RUNNING, no PreemptTime)
    assert "Slurm still runs the job" in g.slurm_preemption_unseen({"JobState": "RUNNING", "Reason": "None"})
    assert g.slurm_preemption_unseen({"JobState": "RUNNING", "PreemptTime": "2026-12-04T15:04:51"}) is None
    assert g.slurm_preemption_unseen({"JobState": "COMPLETING", "Reason": "None"}) is None
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"]
                        + _print_and_exit(PREEMPT_LINE, 1), env=_job_env(tmp_path, FAKE_STATE="RUNNING"))
    assert proc.returncode == 1
    assert not [c for c in _calls(tmp_path) if c.startswith("scontrol requeue")]
    (rec,) = _records(tmp_path)
    assert rec["requeue"]["state"] == "refused" and "Slurm still runs the job" in rec["requeue"]["reason"]


def test_an_unlimited_job_gets_no_time_advice(tmp_path):
    # attack 2, finding 4: a quoted time-limit line in a TimeLimit=UNLIMITED job
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + _print_and_exit(WALLTIME_LINE, 1),
                        env=_job_env(tmp_path, FAKE_LIMIT="UNLIMITED"))
    assert proc.returncode == 1
    (msg,) = _messages(tmp_path)
    resubmit = [l for l in _text(msg).splitlines() if l.strip().startswith("Resubmit:")]
    assert resubmit and "--time=" not in resubmit[0] and "UNLIMITED" in resubmit[0], resubmit


@pytest.mark.parametrize("extra", [{"FAKE_REQUEUE_FLAG": "0"}, {"FAKE_BATCH": "0"}])
def test_a_refused_requeue_is_not_offered_again_as_resubmit(tmp_path, extra):
    # attack 2, finding 9: the Resubmit row said `scontrol requeue` under a refused Requeue row
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"]
                        + _print_and_exit(PREEMPT_LINE, 1), env=_job_env(tmp_path, **extra))
    assert proc.returncode == 1
    (msg,) = _messages(tmp_path)
    rows = [l.strip() for l in _text(msg).splitlines() if l.strip().startswith(("Resubmit:", "Requeue:"))]
    assert len(rows) == 2 and "not requeued" in rows[0], rows
    assert "scontrol requeue" not in rows[1] and "sbatch again" in rows[1], rows
    assert "budget" not in rows[0], rows


def test_a_class_requeue_leaves_out_is_not_called_a_lost_cause_when_resubmit_offers_a_requeue():
    d = g.decide_requeue("nccl", ALL, [], 3, "slurm")
    assert "fail the same way" not in d.reason and "by hand" in d.reason, d.reason


def test_only_rank_0_requeues(tmp_path):
    env = _job_env(tmp_path, SLURM_PROCID="1", SLURM_NTASKS="2")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "all", "--"]
                        + _print_and_exit(PREEMPT_LINE, 1), env=env)
    assert proc.returncode == 1
    assert not [c for c in _calls(tmp_path) if c.startswith(("scontrol requeue", "sbatch"))]
    (rec,) = _records(tmp_path)
    assert "rank 0 requeues the job" in rec["requeue"]["reason"]


def test_a_refused_requeue_is_a_note_and_never_changes_the_exit_status(tmp_path):
    env = _job_env(tmp_path, FAKE_REQUEUE_ERR="scontrol: error: Requested operation is presently disabled",
                   FAKE_REASON="TimeLimit")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "all", "--"]
                        + _print_and_exit(WALLTIME_LINE, 0), env=env)
    assert proc.returncode == 0, proc.stderr
    assert b"requeue refused" in proc.stderr
    (rec,) = _records(tmp_path)
    assert rec["requeue"]["state"] == "refused"
    assert "Requested operation is presently disabled" in rec["requeue"]["reason"]
    msgs = _messages(tmp_path)
    follow = [m for m in msgs if "Requested operation is presently disabled" in m["Subject"]]
    assert follow, [m["Subject"] for m in msgs]
    first = [m for m in msgs if m is not follow[0]][0]
    assert first["Message-ID"] in follow[0]["References"]


def test_no_requeue_job_is_reported_with_slurms_reason_and_not_requeued(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"]
                        + _print_and_exit(PREEMPT_LINE, 1), env=_job_env(tmp_path, FAKE_REQUEUE_FLAG="0"))
    assert proc.returncode == 1
    assert not [c for c in _calls(tmp_path) if c.startswith("scontrol requeue")]
    (msg,) = _messages(tmp_path)
    assert "--no-requeue (Requeue=0)" in msg["Subject"]


def test_hardware_fault_resubmits_without_the_node_and_names_the_new_job(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "hardware", "--"]
                        + _print_and_exit(XID_LINE, 1), env=_job_env(tmp_path, FAKE_EXC="gpu03",
                                                                     FAKE_NODE_STATE=DRAINED))
    assert proc.returncode == 1, proc.stderr
    calls = _calls(tmp_path)
    assert any(c.startswith("scontrol write batch_script 4242 ") for c in calls), calls
    (sb,) = [c for c in calls if c.startswith("sbatch ")]
    assert "--exclude=gpu03,gpu17" in sb and "--export=ALL,GPUALERT_REQUEUED_FROM=4242" in sb
    assert sb.endswith(" SLURM_JOB_ID=")  # the old job's SLURM_* never steer the new job's sbatch
    assert not [c for c in calls if c.startswith("scontrol requeue")]
    (msg,) = _messages(tmp_path)
    assert "gpu_hardware on gpu17: requeued as job 4250 without gpu17" in msg["Subject"]
    assert "(job 4250)" in _text(msg)


def test_a_resubmission_no_node_can_take_now_is_made_held_and_released(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "hardware", "--"]
                        + _print_and_exit(XID_LINE, 1), env=_job_env(tmp_path, FAKE_ONE_NODE="1",
                                                                     FAKE_NODE_STATE=DRAINED))
    assert proc.returncode == 1, proc.stderr
    calls = [c for c in _calls(tmp_path) if c.startswith(("sbatch", "scontrol release"))]
    assert len(calls) == 3 and " --hold " in calls[1] and calls[2] == "scontrol release 4250", calls
    (msg,) = _messages(tmp_path)
    assert "requeued as job 4250 without gpu17" in msg["Subject"]


def test_dry_run_says_what_it_would_do_and_does_nothing(tmp_path):
    for line, cause in ((PREEMPT_LINE, "preempted"), (XID_LINE, "hardware")):
        folder = tmp_path / cause
        folder.mkdir()
        proc = run_gpualert(folder, base(folder) + ["--requeue", "all", "--dry-run", "--"]
                            + _print_and_exit(line, 1), env=_job_env(folder, FAKE_NODE_STATE=DRAINED))
        assert proc.returncode == 1
        calls = _calls(folder)
        assert not [c for c in calls if c.startswith(("scontrol requeue", "sbatch", "scontrol write"))]
        (rec,) = _records(folder)
        assert rec["requeue"]["state"] == "dry-run"
        assert "would be requeued" in g.requeue_subject(rec["requeue"], rec["class"])


def test_second_attempt_gets_attempt_resume_and_the_first_attempts_thread(tmp_path):
    ckpt = "import os\nos.makedirs('ck', exist_ok=True)\nopen('ck/step_3000.pt', 'w').write('x')"
    run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"]
                 + _print_and_exit(PREEMPT_LINE, 1, ckpt), env=_job_env(tmp_path))
    (first,) = _messages(tmp_path)
    assert "resumes from ck/step_3000.pt" in first["Subject"]
    show = "print('ENV', os.environ['GPUALERT_ATTEMPT'], os.environ['GPUALERT_RESUME'])"
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"]
                        + _print_and_exit("done", 0, show),
                        env=_job_env(tmp_path, SLURM_RESTART_COUNT="1"))
    assert proc.returncode == 0
    assert ("ENV 2 %s" % (tmp_path / "ck" / "step_3000.pt")).encode() in proc.stdout
    second = [m for m in _messages(tmp_path) if m["Message-ID"] != first["Message-ID"]][0]
    assert "(attempt 2)" in second["Subject"] and "SUCCESS" in second["Subject"]
    assert second["References"].split()[0] == first["Message-ID"]
    assert second["In-Reply-To"] == first["Message-ID"]
    body = _text(second)
    assert "Attempts:   1: preempted on gpu17" in body and "step_3000.pt; 2: success" in body
    assert "Time lost:" in body


def test_time_lost_counts_the_attempt_requeued_now_too(tmp_path):
    # attack 2, minor: "6s in 1 failed attempt" after two preempted attempts
    for restarts in ("0", "1"):
        run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"]
                     + _print_and_exit(PREEMPT_LINE, 1), env=_job_env(tmp_path, SLURM_RESTART_COUNT=restarts))
    last = [m for m in _messages(tmp_path) if "(attempt 2)" in m["Subject"]][0]
    lost = [l for l in _text(last).splitlines() if l.strip().startswith("Time lost:")]
    assert lost and "in 2 failed attempts" in lost[0], lost


def test_walltime_budget_used_is_said_and_not_requeued(tmp_path):
    args = base(tmp_path) + ["--requeue", "walltime", "--max-requeues", "1", "--"]
    run_gpualert(tmp_path, args + _print_and_exit(WALLTIME_LINE, 1),
                 env=_job_env(tmp_path, FAKE_REASON="TimeLimit"))
    proc = run_gpualert(tmp_path, args + _print_and_exit(WALLTIME_LINE, 1),
                        env=_job_env(tmp_path, SLURM_RESTART_COUNT="1", FAKE_REASON="TimeLimit"))
    assert proc.returncode == 1
    assert [c for c in _calls(tmp_path) if c.startswith("scontrol requeue")] == ["scontrol requeue 4242"]
    last = sorted(_messages(tmp_path), key=lambda m: "(attempt 2)" in m["Subject"])[-1]
    assert "(attempt 2): requeue budget used (1 of 1): not requeued" in last["Subject"]
    assert "Attempts:   1: walltime" in _text(last)


def test_key_error_is_not_requeued_and_the_message_says_why(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "all", "--", PY, "-c", "{}['x']"],
                        env=_job_env(tmp_path))
    assert proc.returncode == 1
    assert not [c for c in _calls(tmp_path) if c.startswith(("scontrol requeue", "sbatch"))]
    (msg,) = _messages(tmp_path)
    assert "traceback: not requeued (a rerun would fail the same way)" in msg["Subject"]


def test_outside_a_scheduler_the_message_says_nothing_could_be_requeued(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "all", "--"]
                        + _print_and_exit(PREEMPT_LINE, 3))
    assert proc.returncode == 3
    (msg,) = _messages(tmp_path)
    assert "nothing could be requeued" in _text(msg)
    assert "never reruns a command" in _text(msg)


def test_unknown_cause_is_a_usage_error_before_anything_runs(tmp_path):
    marker = tmp_path / "ran"
    cmd = [PY, "-c", "open(%r, 'w')" % str(marker)]
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "walltime,nodes", "--"] + cmd)
    assert proc.returncode == 2 and b"unknown requeue cause 'nodes'" in proc.stderr
    env = isolated_env(tmp_path, GPUALERT_REQUEUE="preempt")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + cmd, env=env)
    assert proc.returncode == 2 and b"GPUALERT_REQUEUE" in proc.stderr
    # attack 2, minor: the variable only warned where the option is an error
    env = isolated_env(tmp_path, GPUALERT_MAX_REQUEUES="-1")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "all", "--"] + cmd, env=env)
    assert proc.returncode == 2 and b"GPUALERT_MAX_REQUEUES" in proc.stderr
    assert not marker.exists()


def test_attempt_variables_are_set_on_the_first_attempt_too(tmp_path):
    show = "import os; print('ENV', os.environ['GPUALERT_ATTEMPT'], repr(os.environ['GPUALERT_RESUME']))"
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "all", "--", PY, "-c", show])
    assert b"ENV 1 ''" in proc.stdout
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--", PY, "-c", "import os; print('ENV', "
                                                    "os.environ.get('GPUALERT_ATTEMPT'))"])
    assert b"ENV None" in proc.stdout  # without --requeue nothing changes



# ---- resume only your own checkpoint, checked twice (issue 34, item 1) ----

def _as(user, *commands):
    """Run shell commands as `user` (a real second Unix user); they must succeed."""
    proc = user.run(["sh", "-c", " && ".join(commands)])
    assert proc.returncode == 0, proc.stderr


def _group_dir(root):
    """A project directory every member may write to (here: anyone, as the test's second
    user shares no group with root)."""
    path = os.path.join(root, "proj")
    os.mkdir(path)
    os.chmod(path, 0o777)
    return path


def test_a_checkpoint_another_user_planted_in_a_group_directory_is_not_offered(shared_tmp, other_user):
    proj, since = _group_dir(shared_tmp), time.time() - 1
    with open(os.path.join(proj, "step_5.pt"), "w") as handle:
        handle.write("mine")
    _as(other_user, "echo evil > %s/step_9.pt" % proj)  # newer, and named by the log too
    found = g.find_checkpoints(proj, since)
    assert [c["path"] for c in found] == [os.path.join(proj, "step_5.pt")], found  # mine still counts
    named = g.named_checkpoints([{"path": "step_9.pt"}, {"path": "step_5.pt"}], proj, since)
    assert [c["path"] for c in named] == [os.path.join(proj, "step_5.pt")], named
    assert g.choose_checkpoint(found + named, {})["path"] == os.path.join(proj, "step_5.pt")
    assert g.own_checkpoint(os.path.join(proj, "step_9.pt"))[1] == "is not yours (owned by uid %d)" % other_user.uid


def test_a_link_another_user_planted_in_the_path_is_not_followed(shared_tmp, other_user):
    proj, since = _group_dir(shared_tmp), time.time() - 1
    mine = os.path.join(shared_tmp, "mine")
    os.mkdir(mine)
    with open(os.path.join(mine, "step_7.pt"), "w") as handle:  # my file, just not where the log says
        handle.write("mine")
    _as(other_user, "ln -s %s %s/ck" % (mine, proj))
    assert g.named_checkpoints([{"path": "ck/step_7.pt"}], proj, since) == []
    why = g.own_checkpoint(os.path.join(proj, "ck", "step_7.pt"))[1]
    assert why == "is reached through %s/ck, a link owned by uid %d" % (proj, other_user.uid), why
    os.symlink(mine, os.path.join(proj, "ck-mine"))  # a link of one's own is followed
    assert len(g.named_checkpoints([{"path": "ck-mine/step_7.pt"}], proj, since)) == 1


def test_a_checkpoint_dated_in_the_future_is_not_offered(tmp_path):
    since = time.time() - 1
    for name, ahead in (("step_1.pt", 3600), ("step_2.pt", 1)):  # a second of clock skew is no date
        path = tmp_path / name
        path.write_text("w")
        os.utime(str(path), (time.time() + ahead, time.time() + ahead))
    offered = [os.path.basename(c["path"]) for c in g.find_checkpoints(str(tmp_path), since)]
    assert offered == ["step_2.pt"], offered
    named = g.named_checkpoints([{"path": "step_1.pt"}, {"path": "step_2.pt"}], str(tmp_path), since)
    assert [os.path.basename(c["path"]) for c in named] == ["step_2.pt"], named
    assert g.own_checkpoint(str(tmp_path / "step_1.pt"))[1].startswith("is dated in the future (")


def test_a_save_line_naming_another_users_file_in_tmp_is_not_resumed(tmp_path, shared_tmp, other_user):
    planted = os.path.join(shared_tmp, "step_99.pt")
    plant = " ".join(shlex.quote(a) for a in other_user.argv(["sh", "-c", "echo evil > %s" % planted]))
    job = ["sh", "-c", "%s && echo 'saved %s' && echo '%s' && exit 1" % (plant, planted, PREEMPT_LINE)]
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"] + job,
                        env=_job_env(tmp_path))
    assert proc.returncode == 1, proc.stderr
    assert os.stat(planted).st_uid == other_user.uid  # it was written during the run, and named
    (rec,) = _records(tmp_path)
    assert "checkpoint" not in rec["metrics"], rec["metrics"]
    (msg,) = _messages(tmp_path)
    assert "requeued, no checkpoint to resume from" in msg["Subject"], msg["Subject"]


def _attempt_then_swap(tmp, swap):
    """Attempt 1 saves ck/step_3000.pt and is requeued; swap(path) acts in Slurm's hold;
    attempt 2 prints its GPUALERT_RESUME. -> (attempt 2's stdout, its message's subject and
    text, the text's lines joined)."""
    ckpt = "import os\nos.makedirs('ck', exist_ok=True)\nopen('ck/step_3000.pt', 'w').write('x' * 100)"
    run_gpualert(tmp, base(tmp) + ["--requeue", "preempted", "--"]
                 + _print_and_exit(PREEMPT_LINE, 1, ckpt), env=_job_env(tmp))
    (first,) = _messages(tmp)
    assert "resumes from ck/step_3000.pt" in first["Subject"]
    swap(str(tmp / "ck" / "step_3000.pt"))
    show = "print('ENV', os.environ['GPUALERT_ATTEMPT'], repr(os.environ['GPUALERT_RESUME']))"
    proc = run_gpualert(tmp, base(tmp) + ["--requeue", "preempted", "--"]
                        + _print_and_exit(PREEMPT_LINE, 1, show),
                        env=_job_env(tmp, SLURM_RESTART_COUNT="1"))
    second = [m for m in _messages(tmp) if m["Message-ID"] != first["Message-ID"]][0]
    return proc.stdout, second["Subject"], " ".join(_text(second).split())


def test_a_checkpoint_replaced_after_its_attempt_recorded_it_is_not_resumed(tmp_path):
    def swap(path):
        with open(path + ".new", "w") as handle:
            handle.write("pickle with a __reduce__")
        os.replace(path + ".new", path)  # another file (inode), another size
    out, subject, text = _attempt_then_swap(tmp_path, swap)
    assert b"ENV 2 ''" in out, out
    path = tmp_path / "ck" / "step_3000.pt"
    assert "GPUALERT_RESUME left empty: %s changed since attempt 1 recorded it (size/mtime/inode)" \
        % path in text, text
    assert "requeued, no checkpoint to resume from" in subject, subject  # nor at attempt 3


def test_a_checkpoint_unchanged_since_its_attempt_is_still_resumed(tmp_path):
    out, subject, text = _attempt_then_swap(tmp_path, lambda path: None)
    assert ("ENV 2 %r" % str(tmp_path / "ck" / "step_3000.pt")).encode() in out, out
    assert "resumes from ck/step_3000.pt" in subject and "left empty" not in text


def test_a_checkpoint_another_user_swapped_in_during_the_hold_is_not_resumed(shared_tmp, other_user):
    import pathlib
    tmp = pathlib.Path(shared_tmp)
    (tmp / "ck").mkdir()
    os.chmod(str(tmp / "ck"), 0o777)  # a group's checkpoint folder

    def swap(path):
        _as(other_user, "rm -f %s" % path, "echo evil > %s" % path)
    out, subject, text = _attempt_then_swap(tmp, swap)
    assert b"ENV 2 ''" in out, out
    assert "GPUALERT_RESUME left empty: %s is not yours (owned by uid %d)" % (
        tmp / "ck" / "step_3000.pt", other_user.uid) in text, text


# ---- a budget nothing forgets: the scheduler's count and the chain, whatever the records ----

def test_unrecorded_attempts_spend_every_budget():
    d = g.decide_requeue("walltime", ALL, [], 1, "slurm", unrecorded=6)
    assert d.action is None and d.budget == (6, 1), d
    assert d.reason.startswith("requeue budget used (6 of 1; 6 earlier attempts with no run record"), d.reason
    assert g.decide_requeue("preempted", ALL, [], 1, "slurm", unrecorded=6).action == "requeue"
    assert g.decide_requeue("preempted", ALL, [], 1, "slurm", unrecorded=20).action is None


def test_an_uncertain_requeue_spends_the_budget():
    assert g.requeue_budget("walltime", [_done("walltime", 1)[0]], 3)[0] == 1
    uncertain = [dict(_done("walltime", 1)[0], state="uncertain")]
    assert g.requeue_budget("walltime", uncertain, 3)[0] == 1


SHOW_ENV = "print('ENV', os.environ['GPUALERT_ATTEMPT'], repr(os.environ['GPUALERT_RESUME']), flush=True)"


def test_the_restart_count_spends_the_budget_when_no_record_is_visible(tmp_path):
    # issue 34, 3: a node-local --log-dir; --max-requeues 1 went on requeueing at attempt 7
    env = _job_env(tmp_path, SLURM_RESTART_COUNT="6", FAKE_REASON="TimeLimit")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "walltime", "--max-requeues", "1", "--"]
                        + _print_and_exit(WALLTIME_LINE, 1, SHOW_ENV), env=env)
    assert proc.returncode == 1, proc.stderr
    assert b"ENV 7 ''" in proc.stdout
    assert not [c for c in _calls(tmp_path) if c.startswith("scontrol requeue")], _calls(tmp_path)
    (msg,) = _messages(tmp_path)
    assert "(attempt 7): requeue budget used (6 of 1" in msg["Subject"], msg["Subject"]


@pytest.mark.parametrize("sep", [":", ","])
def test_a_chain_of_ten_is_attempt_eleven_and_spends_the_budget(tmp_path, sep):
    # issue 34, 3: a GPUALERT_REQUEUED_FROM chain of 10 resubmitted an 11th and called it attempt 1
    chain = sep.join(str(4000 + i) for i in range(10))
    env = _job_env(tmp_path, GPUALERT_REQUEUED_FROM=chain, FAKE_NODE_STATE=DRAINED)
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "hardware", "--"]
                        + _print_and_exit(XID_LINE, 1, SHOW_ENV), env=env)
    assert proc.returncode == 1, proc.stderr
    assert b"ENV 11 ''" in proc.stdout
    assert not [c for c in _calls(tmp_path) if c.startswith("sbatch")]
    (msg,) = _messages(tmp_path)
    assert "(attempt 11): gpu_hardware on gpu17: requeue budget used (10 of 3" in msg["Subject"], msg["Subject"]


def test_a_chain_resubmitted_again_keeps_its_exclusions_and_the_whole_chain(tmp_path):
    # Slurm keeps the exclusions in the job's own ExcNodeList; the chain goes on joined by ":"
    # (sbatch --export splits at commas: GPUALERT_REQUEUED_FROM=4000,4001 arrived as 4000)
    chain = ":".join(str(4000 + i) for i in range(10))
    env = _job_env(tmp_path, GPUALERT_REQUEUED_FROM=chain, FAKE_EXC="gpu03,gpu05", FAKE_NODE_STATE=DRAINED)
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "hardware", "--max-requeues", "20", "--"]
                        + _print_and_exit(XID_LINE, 1, SHOW_ENV), env=env)
    assert proc.returncode == 1, proc.stderr
    assert b"ENV 11 ''" in proc.stdout
    (sb,) = [c for c in _calls(tmp_path) if c.startswith("sbatch ")]
    assert "--exclude=gpu03,gpu05,gpu17" in sb, sb
    assert "--export=ALL,GPUALERT_REQUEUED_FROM=%s:4242 " % chain in sb, sb
    (msg,) = _messages(tmp_path)
    assert "(attempt 11): gpu_hardware on gpu17: requeued as job 4250" in msg["Subject"], msg["Subject"]
    assert "budget: 11 of 20" in _text(msg)


def test_a_requeue_that_does_not_answer_is_uncertain_and_spent(tmp_path):
    # issue 34, 12: a `scontrol requeue` timing out (3 s) was "refused", yet a busy controller
    # may still carry it out; the next attempt must count it
    args = base(tmp_path) + ["--requeue", "walltime", "--max-requeues", "1", "--"] + _print_and_exit(WALLTIME_LINE, 1)
    proc = run_gpualert(tmp_path, args, env=_job_env(tmp_path, FAKE_REASON="TimeLimit", FAKE_REQUEUE_HANG="1"))
    assert proc.returncode == 1, proc.stderr
    assert b"requeue uncertain" in proc.stderr
    (rec,) = _records(tmp_path)
    assert rec["requeue"]["state"] == "uncertain", rec["requeue"]
    assert "did not answer within 3s" in rec["requeue"]["reason"]
    run_gpualert(tmp_path, args, env=_job_env(tmp_path, FAKE_REASON="TimeLimit", SLURM_RESTART_COUNT="1"))
    assert len([c for c in _calls(tmp_path) if c.startswith("scontrol requeue")]) == 1
    last = [m for m in _messages(tmp_path) if "(attempt 2)" in m["Subject"]]
    assert last and "requeue budget used (1 of 1): not requeued" in last[0]["Subject"], \
        [m["Subject"] for m in _messages(tmp_path)]


def test_a_resubmission_sbatch_does_not_answer_is_uncertain_and_spent(tmp_path):
    env = _job_env(tmp_path, FAKE_NODE_STATE=DRAINED, FAKE_SBATCH_HANG="1")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "hardware", "--"]
                        + _print_and_exit(XID_LINE, 1), env=env)
    assert proc.returncode == 1, proc.stderr
    (rec,) = _records(tmp_path)
    assert rec["requeue"]["state"] == "uncertain", rec["requeue"]
    assert g.requeue_budget("hardware", [g.attempt_summary(rec)], 3)[0] == 1
    (msg,) = _messages(tmp_path)
    assert "gpu_hardware on gpu17: requeue uncertain: sbatch did not answer" in msg["Subject"], msg["Subject"]


# ---- a line the job prints is no proof: Slurm confirms a time limit, nvidia-smi or the node a fault ----

def _rows(msg, *names):
    return [l.strip() for l in _text(msg).splitlines() if l.strip().startswith(names)]


def test_a_printed_time_limit_line_is_not_requeued_without_slurms_word(tmp_path):
    # issue 34, 4: a job printing Slurm's time-limit line and exiting at once was requeued
    env = _job_env(tmp_path, FAKE_STATE="RUNNING", FAKE_RUNTIME="00:00:05")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "all", "--"]
                        + _print_and_exit(WALLTIME_LINE, 1), env=env)
    assert proc.returncode == 1, proc.stderr
    assert not [c for c in _calls(tmp_path) if c.startswith("scontrol requeue")]
    (msg,) = _messages(tmp_path)
    requeue, resubmit = _rows(msg, "Requeue:"), _rows(msg, "Resubmit:")
    assert requeue and "not requeued: only the job's own output says so; Slurm does not confirm a " \
        "time limit" in requeue[0], requeue
    assert resubmit and "--time=" in resubmit[0], resubmit


@pytest.mark.parametrize("said", [{"FAKE_REASON": "TimeLimit"}, {"FAKE_STATE": "TIMEOUT"},
                                  {"FAKE_STATE": "RUNNING", "FAKE_RUNTIME": "01:00:00"}])
def test_a_time_limit_slurm_confirms_is_requeued(tmp_path, said):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "walltime", "--"]
                        + _print_and_exit(WALLTIME_LINE, 1), env=_job_env(tmp_path, **said))
    assert proc.returncode == 1, proc.stderr
    assert _calls(tmp_path)[-1] == "scontrol requeue 4242", _calls(tmp_path)


def test_a_printed_xid_line_is_reported_but_not_resubmitted(tmp_path):
    # issue 34, 4: an Xid line in the output resubmitted the job though the node was healthy
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "hardware", "--"]
                        + _print_and_exit(XID_LINE, 1), env=_job_env(tmp_path))
    assert proc.returncode == 1, proc.stderr
    calls = _calls(tmp_path)
    assert not [c for c in calls if c.startswith(("sbatch", "scontrol write"))], calls
    assert "scontrol show node -o gpu17" in calls, calls
    (msg,) = _messages(tmp_path)
    assert "(attempt 1): gpu_hardware on gpu17: not requeued: only" in msg["Subject"], msg["Subject"]
    requeue, resubmit = _rows(msg, "Requeue:"), _rows(msg, "Resubmit:")
    assert requeue and "not requeued: only the job's own output says so; neither nvidia-smi nor " \
        "Slurm shows a fault" in requeue[0], requeue
    assert resubmit and "sbatch --exclude=" in resubmit[0], resubmit  # the advice stays


# "asked" only once the answer is read: the child's fault must come after the start sample
FAKE_SMI = r"""#!/bin/sh
if [ -f "$FAKE_SMI/lost" ]; then
  echo "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU" >&2
  touch "$FAKE_SMI/asked"
  exit 15
fi
line="0, NVIDIA A100-SXM4-80GB, 3, 81920, 0, 29, 61.00, $(cat "$FAKE_SMI/ecc" 2>/dev/null || echo 0)"
touch "$FAKE_SMI/asked"
echo "$line"
"""

#: The child: once nvidia-smi took the start sample, the fault (a file FAKE_SMI reads), then the Xid.
FAULT_CHILD = ("import os, time\nd = os.environ['FAKE_SMI']\nend = time.time() + 20\n"
               "while not os.path.exists(d + '/asked') and time.time() < end:\n    time.sleep(0.05)\n"
               "open(d + '/' + os.environ['FAULT'], 'w').write('2')")


@pytest.mark.parametrize("fault", ["ecc", "lost"])
def test_an_xid_nvidia_smi_confirms_is_resubmitted(tmp_path, fault):
    smi = tmp_path / "smi"
    smi.mkdir()
    write_executable(smi / "nvidia-smi", FAKE_SMI)
    env = _job_env(tmp_path, FAKE_SMI=str(smi), FAULT=fault)
    env["PATH"] = str(smi) + os.pathsep + env["PATH"]
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "hardware", "--"]
                        + _print_and_exit(XID_LINE, 1, FAULT_CHILD), env=env)
    assert proc.returncode == 1, proc.stderr
    assert [c for c in _calls(tmp_path) if c.startswith("sbatch ")], _calls(tmp_path)
    (rec,) = _records(tmp_path)
    assert rec["requeue"]["state"] == "done" and rec["requeue"]["gpu_fault"].startswith("nvidia-smi: ")


def test_a_drained_node_confirms_an_xid(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "hardware", "--"]
                        + _print_and_exit(XID_LINE, 1), env=_job_env(tmp_path, FAKE_NODE_STATE="DOWN+NOT_RESPONDING"))
    assert proc.returncode == 1, proc.stderr
    (rec,) = _records(tmp_path)
    assert rec["requeue"]["state"] == "done", rec["requeue"]
    assert rec["requeue"]["gpu_fault"].startswith("Slurm: node gpu17 State=DOWN+NOT_RESPONDING")


# ---- a reused job id is another job: the cluster and the chain, not the id alone ----

CKPT_CHILD = "import os\nos.makedirs('ck', exist_ok=True)\nopen('ck/step_3000.pt', 'w').write('x')"


@pytest.mark.parametrize("then,now", [
    ({"SLURM_CLUSTER_NAME": "old"}, {"SLURM_CLUSTER_NAME": "new"}),  # two clusters, one $HOME
    ({}, {}),  # the ids wrapped: job 777 again, a first attempt (restart count 0)
    ({"SLURM_RESTART_COUNT": "3"}, {"SLURM_RESTART_COUNT": "1"}),  # an old 777's later attempt
    ({"GPUALERT_REQUEUED_FROM": "600"}, {}),  # another chain
])
def test_a_reused_job_id_is_not_an_earlier_attempt(tmp_path, then, now):
    # issue 34, 5: a new job 777 resumed a 2025 job 777's checkpoint as its "attempt 2"
    args = base(tmp_path) + ["--requeue", "preempted", "--"]
    run_gpualert(tmp_path, args + _print_and_exit(PREEMPT_LINE.replace("4242", "777"), 1, CKPT_CHILD),
                 env=_job_env(tmp_path, SLURM_JOB_ID="777", **then))
    assert len(_records(tmp_path)) == 1
    proc = run_gpualert(tmp_path, args + _print_and_exit("done", 0, SHOW_ENV),
                        env=_job_env(tmp_path, SLURM_JOB_ID="777", **now))
    expected = 1 + int(now.get("SLURM_RESTART_COUNT", "0"))
    assert ("ENV %d ''" % expected).encode() in proc.stdout, proc.stdout


def test_the_same_jobs_earlier_attempt_on_its_cluster_is_found(tmp_path):
    args = base(tmp_path) + ["--requeue", "preempted", "--"]
    job = {"SLURM_JOB_ID": "777", "SLURM_CLUSTER_NAME": "c1", "GPUALERT_REQUEUED_FROM": "600"}
    run_gpualert(tmp_path, args + _print_and_exit(PREEMPT_LINE.replace("4242", "777"), 1, CKPT_CHILD),
                 env=_job_env(tmp_path, **job))
    (rec,) = _records(tmp_path)
    assert rec["scheduler"]["cluster"] == "c1" and rec["requeue"]["restarts"] == 0
    proc = run_gpualert(tmp_path, args + _print_and_exit("done", 0, SHOW_ENV),
                        env=_job_env(tmp_path, SLURM_RESTART_COUNT="1", **job))
    assert ("ENV 3 %r" % str(tmp_path / "ck" / "step_3000.pt")).encode() in proc.stdout, proc.stdout


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_a_link_or_a_name_in_the_log_dir_makes_no_earlier_attempt(tmp_path):
    # A member of a shared --log-dir links (or renames) our job 5555's run directory to a
    # name tagged with job 4242: its newer checkpoint, of another experiment, became job
    # 4242's GPUALERT_RESUME, and links enough spent the preemption budget.
    args = base(tmp_path) + ["--requeue", "preempted", "--"]
    save = "import os\nos.makedirs('%s', exist_ok=True)\nopen('%s/step_%d.pt', 'w').write('x')"
    run_gpualert(tmp_path, args + _print_and_exit(PREEMPT_LINE, 1, save % ("projA", "projA", 100)),
                 env=_job_env(tmp_path))
    run_gpualert(tmp_path, args + _print_and_exit(PREEMPT_LINE.replace("4242", "5555"), 1,
                                                  save % ("projB", "projB", 900)),
                 env=_job_env(tmp_path, SLURM_JOB_ID="5555"))  # newer, of another experiment
    (other,) = glob.glob(str(tmp_path / "logs" / "*-slurm-5555-*"))
    logs = tmp_path / "logs"
    for i in range(25):
        os.symlink(other, str(logs / ("20000101-0000%02d-x-slurm-4242-evil" % i)))
    os.rename(other, str(logs / "20000101-000099-x-slurm-4242-renamed"))
    proc = run_gpualert(tmp_path, args + _print_and_exit("done", 0, SHOW_ENV),
                        env=_job_env(tmp_path, SLURM_RESTART_COUNT="1"))
    assert ("ENV 2 %r" % str(tmp_path / "projA" / "step_100.pt")).encode() in proc.stdout, proc.stdout


# `scontrol show job` (no -o) on Slurm 22.05.8 of a job submitted with --job-name="lr=3e-4
# Partition=low Comment=hijack" --comment="sweep a  TimeLimit=1-00:00:00  NumNodes=4"
SCONTROL_FREE_TEXT = """JobId=137 JobName=lr=3e-4 Partition=low Comment=hijack
   UserId=gpualert-ci(1001) GroupId=gpualert-ci(1001) MCS_label=N/A
   Priority=0 Nice=0 Account=(null) QOS=(null)
   JobState=PENDING Reason=JobHeldUser Dependency=(null)
   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0
   RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A
   Partition=debug AllocNode:Sid=localhost:19953
   ReqNodeList=(null) ExcNodeList=(null)
   NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*
   Command=(null)
   WorkDir=/tmp
   Comment=sweep a  TimeLimit=1-00:00:00  NumNodes=4 
   StdErr=/dev/null
   StdIn=/dev/null
   StdOut=/dev/null
   Power=
   

"""


def test_free_text_in_a_comment_or_a_job_name_changes_no_other_option():
    # a comment or a job name holding "Key=" words set those options in the resubmission
    # (--time=1-00:00:00 --nodes=4 --nodelist=...), and the real comment was lost
    (rec,) = g.parse_scontrol(SCONTROL_FREE_TEXT)
    assert rec["JobName"] == "lr=3e-4 Partition=low Comment=hijack", rec
    assert rec["Comment"] == "sweep a  TimeLimit=1-00:00:00  NumNodes=4", rec
    assert (rec["Partition"], rec["TimeLimit"], rec["NumNodes"], rec["WorkDir"]) == (
        "debug", "UNLIMITED", "1", "/tmp"), rec
    argv = g.resubmit_argv(rec, "/r/batch_script.137", ["gpu17"], ["137"])
    assert "--job-name=lr=3e-4 Partition=low Comment=hijack" in argv, argv
    assert "--comment=sweep a  TimeLimit=1-00:00:00  NumNodes=4" in argv, argv
    assert not [a for a in argv if a.startswith(("--time=", "--nodelist"))] and "--nodes=1" in argv, argv


def test_a_checkpoint_in_a_folder_others_may_write_is_given_pinned(tmp_path):
    # In a group-writable folder, a member may swap the checked file for their pickle after
    # gpualert's check and before the job opens it (the new run directory says when): the
    # job is given a private hard link to the file checked, which no swap reaches.
    proj = tmp_path / "proj"
    proj.mkdir()
    proj.chmod(0o777)
    ckpt = "import os\nopen('proj/step_3000.pt', 'w').write('weights')"
    run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"]
                 + _print_and_exit(PREEMPT_LINE, 1, ckpt), env=_job_env(tmp_path))
    swap_then_load = ("open('proj/step_3000.pt.new', 'w').write('pickle with a __reduce__')\n"
                      "os.replace('proj/step_3000.pt.new', 'proj/step_3000.pt')\n"
                      "print('LOADED', open(os.environ['GPUALERT_RESUME']).read(), flush=True)")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"]
                        + _print_and_exit("done", 0, swap_then_load),
                        env=_job_env(tmp_path, SLURM_RESTART_COUNT="1"))
    assert b"LOADED weights" in proc.stdout, (proc.stdout, proc.stderr)
    assert not glob.glob(str(tmp_path / "logs" / "*" / "resume" / "*")), "the pin outlived the job"


def test_a_link_of_ones_own_in_a_shared_folder_pins_what_it_names(tmp_path):
    # Lightning's save_last="link" writes last.ckpt as a link to the newest epoch's file
    proj = tmp_path / "proj"
    proj.mkdir()
    proj.chmod(0o777)
    ckpt = ("import os\nopen('proj/epoch=3.ckpt', 'w').write('weights')\n"
            "os.symlink('epoch=3.ckpt', 'proj/last.ckpt')\nprint('saving model to proj/last.ckpt')")
    run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"]
                 + _print_and_exit(PREEMPT_LINE, 1, ckpt), env=_job_env(tmp_path))
    load = "print('LOADED', os.path.basename(os.environ['GPUALERT_RESUME']), open(os.environ['GPUALERT_RESUME']).read())"
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "preempted", "--"]
                        + _print_and_exit("done", 0, load), env=_job_env(tmp_path, SLURM_RESTART_COUNT="1"))
    assert b"LOADED " in proc.stdout and b" weights" in proc.stdout, (proc.stdout, proc.stderr)


def test_no_pin_where_the_log_directory_is_shared_too(tmp_path):
    # checkpoints and --log-dir both in a group's folder: a member renames our run directory
    # away and puts one of theirs, holding their file at the pin's name, in its place; the
    # job opened their pickle, and the pin's removal followed their link into our files
    shared = tmp_path / "group"
    shared.mkdir()
    shared.chmod(0o777)
    ckpt = "import os\nos.makedirs('group/ck', exist_ok=True)\nopen('group/ck/step_3000.pt', 'w').write('w')"
    args = ["--log-dir", str(shared / "logs"), "--outbox", str(tmp_path / "outbox"),
            "--requeue", "preempted", "--"]
    run_gpualert(tmp_path, args + _print_and_exit(PREEMPT_LINE, 1, ckpt), env=_job_env(tmp_path))
    (shared / "ck").chmod(0o777)
    proc = run_gpualert(tmp_path, args + _print_and_exit("done", 0, SHOW_ENV),
                        env=_job_env(tmp_path, SLURM_RESTART_COUNT="1"))
    assert b"ENV 2 ''" in proc.stdout, (proc.stdout, proc.stderr)
    assert b"and so does the log directory" in proc.stderr, proc.stderr


def test_a_node_drained_before_the_run_confirms_no_fault(tmp_path):
    # admins drain nodes for maintenance: with that, an Xid the job printed resubmitted it
    env = _job_env(tmp_path, FAKE_NODE_STATE=DRAINED, FAKE_NODE_REASON="kernel update [root@2020-01-01T00:00:00]")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "hardware", "--"]
                        + _print_and_exit(XID_LINE, 1), env=env)
    assert proc.returncode == 1, proc.stderr
    assert not [c for c in _calls(tmp_path) if c.startswith("sbatch")], _calls(tmp_path)
    now = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(time.time() + 5))
    env = _job_env(tmp_path, FAKE_NODE_STATE=DRAINED, FAKE_NODE_REASON="Xid 79 [root@%s]" % now)
    run_gpualert(tmp_path, base(tmp_path) + ["--requeue", "hardware", "--"] + _print_and_exit(XID_LINE, 1), env=env)
    assert [c for c in _calls(tmp_path) if c.startswith("sbatch")], _calls(tmp_path)

"""Schedulers read by the pure core and `watch`: detecting Slurm, PBS/Torque, LSF and Grid Engine
from the environment, parsing their records, why a job ended, time limits, polling a job, and
`watch` following a job to its end. No scheduler needed (tests/test_slurm.py and
tests/test_sge.py run the real ones).

Scheduler output below is real: scontrol text captured from the Slurm 22.05 that
.ci/slurm-setup.sh starts, and the qacct/qstat texts in tests/fixtures/sge/ from the real SGE
8.1.9 that .ci/sge-setup.sh sets up (the jobs of tests/test_sge.py: s_rt, -notify at h_rt, qdel
of a -notify job, an array); sacct, qstat -f, bjobs -l and nvidia-smi lines are copied from
public sources (named beside each). External commands are injected through `run=`, or are
small real executables on PATH (a fake nvidia-smi that answers, and one that hangs)."""
import os
import pathlib
import subprocess
import time

import pytest

from _load import load_gpualert
from wrapper_helpers import FakeRun, PY, SCRIPT, _alive, isolated_env, outbox_messages, write_executable


cluster = load_gpualert()

# Captured from Slurm 22.05.8 (Debian 12) set up by .ci/slurm-setup.sh: `scontrol show job [-o] ID`.
# TERM_*: what the job itself saw right after the SIGTERM (time limit, scancel, preemption).
SCONTROL_RUNNING = (
    'JobId=14 JobName=train UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901749 Nice=0 Account=(null) QOS=(null) JobState=RUNNING Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:01 TimeLimit=00:05:00 TimeMin=N/A SubmitTime=2026-12-02T14:32:28 EligibleTime=2026-12-02T14:32:28 AccrueTime=2026-12-02T14:32:28 StartTime=2026-12-02T14:32:28 EndTime=2026-12-02T14:37:28 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T14:32:28 Scheduler=Main Partition=debug AllocNode:Sid=localhost:3379 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp/obs StdErr=/tmp/obs/train-14.err StdIn=/dev/null StdOut=/tmp/obs/train-14.out Power= \n'
)
SCONTROL_TERM_TIMEOUT = (
    'JobId=1 JobName=probe.sh UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901759 Nice=0 Account=(null) QOS=(null) JobState=COMPLETING Reason=TimeLimit Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:01:23 TimeLimit=00:01:00 TimeMin=N/A SubmitTime=2026-12-02T14:25:43 EligibleTime=2026-12-02T14:25:43 AccrueTime=2026-12-02T14:25:43 StartTime=2026-12-02T14:25:44 EndTime=2026-12-02T14:27:07 Deadline=N/A PreemptEligibleTime=2026-12-02T14:25:44 PreemptTime=None SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T14:25:44 Scheduler=Main Partition=debug AllocNode:Sid=localhost:3379 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=./probe.sh WorkDir=/tmp/obs StdErr=/tmp/obs/out-1-probe.sh.txt StdIn=/dev/null StdOut=/tmp/obs/out-1-probe.sh.txt Power= \n'
)
SCONTROL_TERM_CANCEL = (
    'JobId=2 JobName=probe.sh UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901758 Nice=0 Account=(null) QOS=(null) JobState=COMPLETING Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:02 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12-02T14:25:43 EligibleTime=2026-12-02T14:25:43 AccrueTime=2026-12-02T14:25:43 StartTime=2026-12-02T14:25:44 EndTime=2026-12-02T14:25:46 Deadline=N/A PreemptEligibleTime=2026-12-02T14:25:44 PreemptTime=None SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T14:25:44 Scheduler=Main Partition=debug AllocNode:Sid=localhost:3379 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=./probe.sh WorkDir=/tmp/obs StdErr=/tmp/obs/out-2.txt StdIn=/dev/null StdOut=/tmp/obs/out-2.txt Power= \n'
)
SCONTROL_TERM_PREEMPT = (
    'JobId=7 JobName=probe.sh UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901755 Nice=0 Account=(null) QOS=(null) JobState=COMPLETING Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:03 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12-02T14:27:23 EligibleTime=2026-12-02T14:27:23 AccrueTime=2026-12-02T14:27:23 StartTime=2026-12-02T14:27:24 EndTime=2026-12-02T14:27:27 Deadline=N/A PreemptEligibleTime=2026-12-02T14:27:24 PreemptTime=2026-12-02T14:27:27 SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T14:27:24 Scheduler=Main Partition=debug AllocNode:Sid=localhost:3379 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=8 NumTasks=1 CPUs/Task=8 ReqB:S:C:T=0:0:*:* TRES=cpu=8,node=1,billing=8 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=8 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=./probe.sh WorkDir=/tmp/obs StdErr=/tmp/obs/out-7.txt StdIn=/dev/null StdOut=/tmp/obs/out-7.txt Power= \n'
)
SCONTROL_FAILED = (
    'JobId=3 JobName=failer UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901757 Nice=0 Account=(null) QOS=(null) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=3:0 RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12-02T14:25:43 EligibleTime=2026-12-02T14:25:43 AccrueTime=2026-12-02T14:25:43 StartTime=2026-12-02T14:25:44 EndTime=2026-12-02T14:25:44 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T14:25:44 Scheduler=Main Partition=debug AllocNode:Sid=localhost:3379 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp/obs StdErr=/tmp/obs/f-3_4294967294-3-failer-root-%N.txt StdIn=/dev/null StdOut=/tmp/obs/f-3_4294967294-3-failer-root-%N.txt Power= \n'
)
SCONTROL_FAILED_MULTILINE = (
    'JobId=3 JobName=failer\n'
    '   UserId=root(0) GroupId=root(0) MCS_label=N/A\n'
    '   Priority=4294901757 Nice=0 Account=(null) QOS=(null)\n'
    '   JobState=FAILED Reason=NonZeroExitCode Dependency=(null)\n'
    '   Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=3:0\n'
    '   RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A\n'
    '   SubmitTime=2026-12-02T14:25:43 EligibleTime=2026-12-02T14:25:43\n'
    '   AccrueTime=2026-12-02T14:25:43\n'
    '   StartTime=2026-12-02T14:25:44 EndTime=2026-12-02T14:25:44 Deadline=N/A\n'
    '   SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T14:25:44 Scheduler=Main\n'
    '   Partition=debug AllocNode:Sid=localhost:3379\n'
    '   ReqNodeList=(null) ExcNodeList=(null)\n'
    '   NodeList=vm\n'
    '   BatchHost=vm\n'
    '   NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:*\n'
    '   TRES=cpu=1,node=1,billing=1\n'
    '   Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=*\n'
    '   MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0\n'
    '   Features=(null) DelayBoot=00:00:00\n'
    '   OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null)\n'
    '   Command=(null)\n'
    '   WorkDir=/tmp/obs\n'
    '   StdErr=/tmp/obs/f-3_4294967294-3-failer-root-%N.txt\n'
    '   StdIn=/dev/null\n'
    '   StdOut=/tmp/obs/f-3_4294967294-3-failer-root-%N.txt\n'
    '   Power=\n'
    '   \n'
    '\n'
)
SCONTROL_TIMEOUT_FINAL = (
    'JobId=1 JobName=probe.sh UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901759 Nice=0 Account=(null) QOS=(null) JobState=TIMEOUT Reason=TimeLimit Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:9 RunTime=00:01:23 TimeLimit=00:01:00 TimeMin=N/A SubmitTime=2026-12-02T14:25:43 EligibleTime=2026-12-02T14:25:43 AccrueTime=2026-12-02T14:25:43 StartTime=2026-12-02T14:25:44 EndTime=2026-12-02T14:27:07 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T14:25:44 Scheduler=Main Partition=debug AllocNode:Sid=localhost:3379 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=./probe.sh WorkDir=/tmp/obs StdErr=/tmp/obs/out-1-probe.sh.txt StdIn=/dev/null StdOut=/tmp/obs/out-1-probe.sh.txt Power= \n'
)
SCONTROL_ARRAY = (
    'JobId=4 ArrayJobId=4 ArrayTaskId=2 JobName=wrap UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901756 Nice=0 Account=(null) QOS=(null) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=2:0 RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12-02T14:25:43 EligibleTime=2026-12-02T14:25:44 AccrueTime=Unknown StartTime=2026-12-02T14:25:44 EndTime=2026-12-02T14:25:44 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T14:25:44 Scheduler=Main Partition=debug AllocNode:Sid=localhost:3379 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp/obs StdErr=/tmp/obs/arr-4_2.txt StdIn=/dev/null StdOut=/tmp/obs/arr-4_2.txt Power= \n'
    'JobId=6 ArrayJobId=4 ArrayTaskId=1 JobName=wrap UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901756 Nice=0 Account=(null) QOS=(null) JobState=FAILED Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=1:0 RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12-02T14:25:43 EligibleTime=2026-12-02T14:25:44 AccrueTime=Unknown StartTime=2026-12-02T14:25:44 EndTime=2026-12-02T14:25:44 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T14:25:44 Scheduler=Main Partition=debug AllocNode:Sid=localhost:3379 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp/obs StdErr=/tmp/obs/arr-4_1.txt StdIn=/dev/null StdOut=/tmp/obs/arr-4_1.txt Power= \n'
    'JobId=5 ArrayJobId=4 ArrayTaskId=0 JobName=wrap UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901756 Nice=0 Account=(null) QOS=(null) JobState=COMPLETED Reason=None Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 ExitCode=0:0 RunTime=00:00:00 TimeLimit=UNLIMITED TimeMin=N/A SubmitTime=2026-12-02T14:25:43 EligibleTime=2026-12-02T14:25:44 AccrueTime=Unknown StartTime=2026-12-02T14:25:44 EndTime=2026-12-02T14:25:44 Deadline=N/A SuspendTime=None SecsPreSuspend=0 LastSchedEval=2026-12-02T14:25:44 Scheduler=Main Partition=debug AllocNode:Sid=localhost:3379 ReqNodeList=(null) ExcNodeList=(null) NodeList=vm BatchHost=vm NumNodes=1 NumCPUs=1 NumTasks=1 CPUs/Task=1 ReqB:S:C:T=0:0:*:* TRES=cpu=1,node=1,billing=1 Socks/Node=* NtasksPerN:B:S:C=0:0:*:* CoreSpec=* MinCPUsNode=1 MinMemoryNode=0 MinTmpDiskNode=0 Features=(null) DelayBoot=00:00:00 OverSubscribe=OK Contiguous=0 Licenses=(null) Network=(null) Command=(null) WorkDir=/tmp/obs StdErr=/tmp/obs/arr-4_0.txt StdIn=/dev/null StdOut=/tmp/obs/arr-4_0.txt Power= \n'
)

# From public sources (see the module docstring): sacct -P rows as sites print them.
SACCT_TIMEOUT = (  # scitex_hpc test data, "Real sacct output: a single job that hit TIMEOUT"
    "26778282|TIMEOUT|0:0\n"
    "26778282.batch|CANCELLED|0:15\n"
    "26778282.extern|COMPLETED|0:0\n")
SACCT_CANCELLED = "12345|CANCELLED by 1000|0:0\n12345.batch|CANCELLED|0:15\n"  # toil-style fixture

# qstat -f of a running PBS Pro job (UNSW katana layout, trimmed), walltime used near the limit.
QSTAT_RUNNING = (
    "Job Id: 315236.kman.restech.unsw.edu.au\n"
    "    Job_Name = job.pbs\n"
    "    Job_Owner = z1234567@katana2\n"
    "    resources_used.cpupercent = 99\n"
    "    resources_used.walltime = 00:59:58\n"
    "    job_state = R\n"
    "    queue = submission\n"
    "    Output_Path = katana2:/home/z1234567/src/job.pbs.o315236\n"
    "    Resource_List.ncpus = 1\n"
    "    Resource_List.walltime = 01:00:00\n"
    "    Variable_List = PBS_O_HOME=/home/z1234567,PBS_O_LANG=en_AU.UTF-8,\n"
    "        PBS_O_LOGNAME=z1234567,\n"
    "        PBS_O_WORKDIR=/home/z1234567/src\n"
    "    comment = Job run at Fri May 01 at 14:41 on (k001:ncpus=1)\n")

# bjobs -l of a running LSF job (a dask-jobqueue-style fixture) and the line bjobs/bhist add at the end.
BJOBS_RUNNING = (
    "Job <28320>, User <user_example>, Project <default>, Status <RUN>, Queue <q_residual>,\n"
    "                     Interactive pseudo-terminal shell mode, Command </bin/bash\n"
    "                     >, Share group charged </user_example>\n"
    "Wed Sep  3 22:58:20: Submitted from host <mn325>, CWD </tmpu/desr_g/user_example>, Req\n"
    "                     uested Resources <rusage[mem=5120]>;\n"
    "\n"
    " RUNLIMIT                \n"
    " 240.0 min of mn61\n"
    "Wed Sep  3 22:58:23: Started 1 Task(s) on Host(s) <mn61>, Allocated 1 Slot(s) o\n"
    "                     n Host(s) <mn61>;\n")
BJOBS_RUNLIMIT = BJOBS_RUNNING + (
    "Mon May  6 22:58:03: Completed <exit>; TERM_RUNLIMIT: job killed after reaching LSF run time limit.\n")


# ---- run_command ----

def test_run_command_returns_code_and_stdout():
    assert cluster.run_command(["sh", "-c", "echo hi; exit 3"], 5) == (3, "hi\n")


def test_run_command_missing_program_is_none():
    assert cluster.run_command(["gpualert-no-such-program"], 1) is None


def test_run_command_kills_a_hung_command_and_its_children(tmp_path):
    pid_file = tmp_path / "pid"
    t0 = time.time()
    got = cluster.run_command(["sh", "-c", "sleep 60 & echo $! > %s; wait" % pid_file], 0.5)
    assert got is None and time.time() - t0 < 3
    pid = int(pid_file.read_text())
    for _ in range(50):
        if not _alive(pid):
            break
        time.sleep(0.05)
    assert not _alive(pid), "the background child holding the pipe must die too"


# ---- detect_scheduler, ranks ----

def test_detect_slurm_array_task():
    env = {"SLURM_JOB_ID": "4250", "SLURM_ARRAY_JOB_ID": "4242", "SLURM_ARRAY_TASK_ID": "7",
           "SLURM_ARRAY_TASK_COUNT": "10", "SLURM_JOB_NAME": "train", "SLURM_JOB_PARTITION": "gpu",
           "SLURM_JOB_NODELIST": "gpu[01-02]", "SLURM_SUBMIT_DIR": "/home/a", "SLURM_JOB_ACCOUNT": "proj",
           "SLURM_JOB_END_TIME": "1796221604"}
    s = cluster.detect_scheduler(env)
    assert s["kind"] == "slurm" and s["job_id"] == "4250" and s["array_job_id"] == "4242"
    assert s["label"] == "4242_7" and s["dir_tag"] == "slurm-4242_7"
    assert (s["partition"], s["nodelist"], s["submit_dir"], s["account"]) == ("gpu", "gpu[01-02]", "/home/a", "proj")
    assert s["end_time"] == 1796221604.0 and s["array_task_count"] == "10"


def test_detect_slurm_plain_job_from_real_environment():
    # the SLURM_* variables a batch job saw on the test cluster (trimmed)
    env = {"SLURM_JOBID": "1", "SLURM_JOB_ID": "1", "SLURM_JOB_NAME": "probe.sh",
           "SLURM_JOB_NODELIST": "vm", "SLURM_JOB_PARTITION": "debug", "SLURM_SUBMIT_DIR": "/tmp/obs",
           "SLURM_PROCID": "0", "SLURM_CLUSTER_NAME": "gpualert"}
    s = cluster.detect_scheduler(env)
    assert s["label"] == "1" and s["dir_tag"] == "slurm-1" and "array_job_id" not in s
    assert None not in s.values()


def test_detect_pbs_pro_array_and_torque():
    s = cluster.detect_scheduler({"PBS_JOBID": "1234[7].pbsserver", "PBS_ARRAY_INDEX": "7",
                                  "PBS_JOBNAME": "train", "PBS_QUEUE": "gpuq", "PBS_O_WORKDIR": "/w"})
    assert (s["kind"], s["array_job_id"], s["array_task_id"], s["label"]) == ("pbs", "1234", "7", "1234_7")
    assert s["dir_tag"] == "pbs-1234_7" and s["partition"] == "gpuq"
    s = cluster.detect_scheduler({"PBS_JOBID": "315236.kman.restech.unsw.edu.au"})
    assert s["label"] == "315236"


def test_detect_pbs_nodefile(tmp_path):
    nodefile = tmp_path / "nodes"
    nodefile.write_text("k001\nk001\nk002\n")
    s = cluster.detect_scheduler({"PBS_JOBID": "9.srv", "PBS_NODEFILE": str(nodefile)})
    assert s["nodelist"] == "k001,k002"


def test_detect_lsf():
    s = cluster.detect_scheduler({"LSB_JOBID": "28320", "LSB_JOBINDEX": "0", "LSB_QUEUE": "q_residual",
                                  "LSB_HOSTS": "mn61 mn61 mn62", "LSB_JOBNAME": "train"})
    assert (s["kind"], s["label"], s["nodelist"]) == ("lsf", "28320", "mn61,mn62")
    s = cluster.detect_scheduler({"LSB_JOBID": "28320", "LSB_JOBINDEX": "3"})
    assert s["label"] == "28320_3"


def test_detect_sge_only_when_confirmed():
    assert cluster.detect_scheduler({"JOB_ID": "77"}) == {}  # JOB_ID alone is too common a name
    s = cluster.detect_scheduler({"JOB_ID": "77", "SGE_ROOT": "/opt/sge", "SGE_TASK_ID": "undefined",
                                  "JOB_NAME": "t", "QUEUE": "all.q"})
    assert (s["kind"], s["label"], s["partition"]) == ("sge", "77", "all.q")
    s = cluster.detect_scheduler({"JOB_ID": "77", "SGE_CELL": "default", "SGE_TASK_ID": "2"})
    assert s["label"] == "77.2"  # SGE writes a task as JOB.TASK (qacct -j 77 -t 2)


def test_detect_none():
    assert cluster.detect_scheduler({}) == {}
    assert cluster.detect_scheduler({"SLURM_JOB_ID": ""}) == {}


def test_job_rank_and_who_notifies():
    assert cluster.job_rank({}) is None
    assert cluster.job_rank({"SLURM_PROCID": "0"}) is None  # every sbatch script has this
    assert cluster.job_rank({"SLURM_PROCID": "0", "SLURM_NTASKS": "1"}) is None
    assert cluster.job_rank({"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "4"}) == 0
    assert cluster.job_rank({"SLURM_PROCID": "3", "RANK": "0"}) == 3
    assert cluster.job_rank({"SLURM_PROCID": "0", "RANK": "2", "WORLD_SIZE": "8"}) == 2
    assert cluster.job_rank({"RANK": "0", "WORLD_SIZE": "8"}) == 0
    assert cluster.job_rank({"OMPI_COMM_WORLD_RANK": "5"}) == 5
    assert cluster.job_rank({"PMI_RANK": "1", "PMI_SIZE": "2"}) == 1
    assert cluster.job_rank({"RANK": "x"}) is None
    assert cluster.should_notify_rank({}, False)
    assert cluster.should_notify_rank({"RANK": "0", "WORLD_SIZE": "2"}, False)
    assert not cluster.should_notify_rank({"RANK": "1"}, False)
    assert cluster.should_notify_rank({"RANK": "1"}, True)


# ---- parsing ----

def test_parse_scontrol_one_line_and_multiline_agree():
    one = cluster.parse_scontrol(SCONTROL_FAILED)
    many = cluster.parse_scontrol(SCONTROL_FAILED_MULTILINE)
    assert len(one) == len(many) == 1
    assert one[0] == many[0]
    rec = one[0]
    assert rec["JobState"] == "FAILED" and rec["ExitCode"] == "3:0" and rec["JobName"] == "failer"
    assert rec["TRES"] == "cpu=1,node=1,billing=1" and rec["Power"] == ""
    assert rec["StdOut"] == "/tmp/obs/f-3_4294967294-3-failer-root-%N.txt"


def test_parse_scontrol_array_gives_one_record_per_task():
    recs = cluster.parse_scontrol(SCONTROL_ARRAY)
    assert [(r["ArrayJobId"], r["ArrayTaskId"], r["JobState"]) for r in recs] == [
        ("4", "2", "FAILED"), ("4", "1", "FAILED"), ("4", "0", "COMPLETED")]


def test_parse_scontrol_garbage():
    assert cluster.parse_scontrol("") == []
    assert cluster.parse_scontrol(None) == []
    assert cluster.parse_scontrol("slurm_load_jobs error: Invalid job id specified\n") == []


@pytest.mark.parametrize("text,seconds", [
    ("00:01:00", 60), ("1-00:00:00", 86400), ("2-04:00:00", 187200), ("03:04", 184),
    ("5", 300), ("1-02", 93600), ("UNLIMITED", None), ("", None), ("N/A", None)])
def test_parse_slurm_duration(text, seconds):
    assert cluster.parse_slurm_duration(text) == seconds


def test_parse_exit_code_and_sacct():
    assert cluster.parse_exit_code("0:15") == (0, 15)
    assert cluster.parse_exit_code("3:0") == (3, 0)
    assert cluster.parse_exit_code("") == (None, None)
    assert cluster.parse_sacct(SACCT_CANCELLED)[0] == ("12345", "CANCELLED", "0:0")
    assert [r[1] for r in cluster.parse_sacct(SACCT_TIMEOUT)] == ["TIMEOUT", "CANCELLED", "COMPLETED"]
    assert cluster.parse_sacct("Slurm accounting storage is disabled\n") == []


def test_parse_pbs_duration_bare_number_is_seconds():
    assert cluster.parse_pbs_duration("3600") == 3600.0
    assert cluster.parse_pbs_duration("01:00:00") == 3600.0


def test_parse_qstat_joins_wrapped_values():
    rec = cluster.parse_qstat(QSTAT_RUNNING)
    assert rec["Job Id"] == "315236.kman.restech.unsw.edu.au"
    assert rec["Resource_List.walltime"] == "01:00:00" and rec["job_state"] == "R"
    assert rec["Variable_List"].endswith("PBS_O_WORKDIR=/home/z1234567/src")


# ---- what the scheduler says on SIGTERM ----

@pytest.mark.parametrize("text,reason", [
    (SCONTROL_TERM_TIMEOUT, "walltime"), (SCONTROL_TERM_CANCEL, "cancelled"),
    (SCONTROL_TERM_PREEMPT, "preempted"), (SCONTROL_TIMEOUT_FINAL, "walltime"),
    (SCONTROL_RUNNING, None), (SCONTROL_FAILED, None)])
def test_slurm_record_reason_on_real_records(text, reason):
    got, evidence = cluster.slurm_record_reason(cluster.parse_scontrol(text)[0])
    assert got == reason
    if reason:
        assert evidence.startswith("scontrol: JobState=")


def test_query_end_reason_asks_scontrol_first():
    run = FakeRun({"scontrol": (0, SCONTROL_TERM_TIMEOUT)})
    reason, evidence = cluster.query_end_reason({"kind": "slurm", "job_id": "1"}, 0, 100, run=run)
    assert reason == "walltime" and "Reason=TimeLimit" in evidence
    assert run.calls == [["scontrol", "show", "job", "-o", "1"]]


def test_query_end_reason_stops_when_scontrol_names_no_cause():
    run = FakeRun({"scontrol": (0, SCONTROL_RUNNING)})
    sched = {"kind": "slurm", "job_id": "14"}
    reason, evidence = cluster.query_end_reason(sched, 0, 10, run=run)
    assert reason is None and evidence == "scontrol: JobState=RUNNING Reason=None"
    assert len(run.calls) == 1
    reason, _ = cluster.query_end_reason(sched, 0, 250, time_limit=300, run=run)
    assert reason == "walltime"  # --signal=TERM@60: still running, but at the limit


def test_query_end_reason_falls_through_to_squeue_and_sacct():
    sched = {"kind": "slurm", "job_id": "1"}
    run = FakeRun({"scontrol": None, "squeue": (0, "COMPLETING|TimeLimit\n")})
    assert cluster.query_end_reason(sched, 0, 10, run=run)[0] == "walltime"
    run = FakeRun({"scontrol": None, "squeue": (1, ""), "sacct": (0, SACCT_CANCELLED)})
    assert cluster.query_end_reason(sched, 0, 10, run=run) == ("cancelled", "sacct: CANCELLED")
    assert [c[0] for c in run.calls] == ["scontrol", "squeue", "sacct"]


def test_query_end_reason_falls_back_to_the_time_limit():
    sched = {"kind": "slurm", "job_id": "1"}
    dead = FakeRun({})
    limit = {"end_time": 1000.0, "limit_s": 600.0, "source": "scontrol"}
    reason, evidence = cluster.query_end_reason(sched, 400.0, 950.0, time_limit=limit, run=dead)
    assert reason == "walltime" and "end time" in evidence
    assert cluster.query_end_reason(sched, 0.0, 100.0, time_limit=limit, run=dead)[0] is None
    assert cluster.query_end_reason(sched, 0.0, 590.0, time_limit=600, run=dead)[0] == "walltime"
    reason, evidence = cluster.query_end_reason(sched, 0.0, 10.0, time_limit=600, run=dead)
    assert reason is None and "did not answer" in evidence


def test_query_end_reason_keeps_to_its_budget():
    clock = [0.0]

    def slow(argv, timeout):
        clock[0] += 5.0  # every command takes 5 s
        return None
    run = FakeRun({"scontrol": slow, "squeue": slow, "sacct": slow})
    cluster.query_end_reason({"kind": "slurm", "job_id": "1"}, 0, 0, run=run, budget_s=8.0,
                             clock=lambda: clock[0])
    assert len(run.calls) == 2


def test_query_end_reason_never_raises():
    def boom(argv, timeout):
        raise RuntimeError("seam exploded")
    assert cluster.query_end_reason({"kind": "slurm", "job_id": "1"}, 0, 1, run=boom)[0] is None
    assert cluster.query_end_reason(None, None, 1) == (None, None)
    assert cluster.query_end_reason({"kind": "sge", "job_id": "1"}, 0, 1)[0] is None


def test_pbs_and_lsf_end_reasons():
    pbs = {"kind": "pbs", "job_id": "315236.kman.restech.unsw.edu.au"}
    reason, evidence = cluster.query_end_reason(pbs, 0, 1, run=FakeRun({"qstat": (0, QSTAT_RUNNING)}))
    assert reason == "walltime" and "00:59:58" in evidence
    early = QSTAT_RUNNING.replace("00:59:58", "00:10:00")
    assert cluster.query_end_reason(pbs, 0, 1, run=FakeRun({"qstat": (0, early)}))[0] is None
    lsf = {"kind": "lsf", "job_id": "28320"}
    assert cluster.query_end_reason(lsf, 0, 1, run=FakeRun({"bjobs": (0, BJOBS_RUNLIMIT)})) == (
        "walltime", "bjobs: TERM_RUNLIMIT")
    assert cluster.query_end_reason(lsf, 0, 1, run=FakeRun({"bjobs": (0, BJOBS_RUNNING)}))[0] is None


def test_a_time_limit_unanswered_at_the_start_is_asked_again():
    """A controller too busy to answer as the job started left the limit unknown for the
    whole run: a time-limit kill whose SIGTERM query was late then read as INTERRUPTED."""
    run = FakeRun({"scontrol": [None, (1, "slurm_load_jobs error: Socket timed out"),
                                (0, SCONTROL_RUNNING)]})
    got = cluster.read_time_limit({"kind": "slurm", "job_id": "14"}, run=run, pauses=(0.0, 0.0, 0.0))
    assert got["limit_s"] == 300.0 and len(run.calls) == 3, got
    run = FakeRun({"scontrol": [None]})  # never answers: asked once a pause, then given up
    got = cluster.read_time_limit({"kind": "slurm", "job_id": "14"}, run=run, pauses=(0.0, 0.0))
    assert got["limit_s"] is None and len(run.calls) == 3 and got["notes"]
    run = FakeRun({"qstat": (0, QSTAT_RUNNING.replace("Resource_List.walltime", "x"))})
    cluster.read_time_limit({"kind": "pbs", "job_id": "1"}, run=run, pauses=(0.0,))
    assert len(run.calls) == 1  # answered without a limit: not asked again


def test_read_time_limit_slurm_pbs_lsf():
    got = cluster.read_time_limit({"kind": "slurm", "job_id": "14"},
                                  run=FakeRun({"scontrol": (0, SCONTROL_RUNNING)}))
    assert got["limit_s"] == 300.0 and got["source"] == "scontrol"
    assert got["end_time"] == time.mktime(time.strptime("2026-12-02T14:37:28", "%Y-%m-%dT%H:%M:%S"))
    got = cluster.read_time_limit({"kind": "slurm", "job_id": "14", "end_time": 5000.0}, run=FakeRun({}))
    assert got["end_time"] == 5000.0 and got["source"] == "SLURM_JOB_END_TIME" and got["notes"]
    got = cluster.read_time_limit({"kind": "slurm", "job_id": "14"}, run=FakeRun({}),
                                  environ={"SLURM_JOB_END_TIME": "1796221604"})
    assert got["end_time"] == 1796221604.0
    got = cluster.read_time_limit({"kind": "pbs", "job_id": "1"}, run=FakeRun({"qstat": (0, QSTAT_RUNNING)}))
    assert got["limit_s"] == 3600.0
    got = cluster.read_time_limit({"kind": "lsf", "job_id": "28320"}, run=FakeRun({"bjobs": (0, BJOBS_RUNNING)}))
    assert got["limit_s"] == 240 * 60.0
    assert cluster.read_time_limit({})["limit_s"] is None


# ---- watch ----

def test_poll_job_from_scontrol_expands_paths():
    infos = cluster.poll_job("3", run=FakeRun({"scontrol": (0, SCONTROL_FAILED)}))
    (info,) = infos
    assert info["state"] == "FAILED" and info["done"] and info["exit_code"] == 3
    assert info["facts"] == {"scheduler_state": "FAILED", "exit_code": 3}
    assert info["stdout"] == "/tmp/obs/f-3_4294967294-3-failer-root-vm.txt"  # %N left raw by 22.05


def test_poll_job_array_and_timeout_facts():
    infos = cluster.poll_job("4", run=FakeRun({"scontrol": (0, SCONTROL_ARRAY)}))
    assert [i["label"] for i in infos] == ["4_2", "4_1", "4_0"]
    (info,) = cluster.poll_job("1", run=FakeRun({"scontrol": (0, SCONTROL_TIMEOUT_FINAL)}))
    assert info["facts"]["scheduler_reason"] == "walltime" and info["facts"]["exit_code"] == -9


def test_poll_job_falls_back_to_squeue_then_sacct():
    run = FakeRun({"scontrol": (1, ""), "squeue": (0, "1|TIMEOUT|TimeLimit\n")})
    (info,) = cluster.poll_job("1", run=run)
    assert (info["state"], info["source"]) == ("TIMEOUT", "squeue")
    run = FakeRun({"scontrol": (1, ""), "squeue": (1, ""), "sacct": (0, SACCT_TIMEOUT)})
    (info,) = [i for i in cluster.poll_job("26778282", run=run) if i["job_id"] == "26778282"]
    assert info["state"] == "TIMEOUT" and info["facts"]["exit_code"] == -15
    assert cluster.poll_job("9", run=FakeRun({"scontrol": (1, ""), "squeue": (0, ""), "sacct": (1, "")})) == []
    assert cluster.poll_job("9", run=FakeRun({})) is None  # nobody answered: unknown is not proven


def test_oom_and_cancel_facts():
    facts = cluster.slurm_facts("OUT_OF_MEMORY", 0, 125)
    assert facts["oom_kill_delta"] == 1 and facts["exit_code"] == -9
    facts = cluster.slurm_facts("CANCELLED", 0, 15, "None")
    assert facts["scheduler_reason"] == "cancelled" and facts["exit_code"] == -15


@pytest.mark.parametrize("pattern,expected", [
    ("%x-%j.out", "/w/train-14.out"),
    ("/abs/slurm-%A_%a.out", "/abs/slurm-14_4294967294.out"),
    ("out-%N-%u-%%.txt", "/w/out-vm-root-%.txt"),
    ("(null)", None), ("/dev/null", None)])
def test_slurm_log_path(pattern, expected):
    rec = cluster.parse_scontrol(SCONTROL_RUNNING)[0]
    rec["WorkDir"] = "/w"
    assert cluster.slurm_log_path(pattern, rec) == expected


def test_slurm_log_path_array_padding():
    rec = cluster.parse_scontrol(SCONTROL_ARRAY)[0]
    assert cluster.slurm_log_path("r-%A_%3a.log", rec) == "/tmp/obs/r-4_002.log"


def test_watch_jobs_follows_a_job_to_its_end():
    run = FakeRun({"scontrol": [(0, SCONTROL_RUNNING), (0, SCONTROL_TERM_TIMEOUT),
                                (0, SCONTROL_TIMEOUT_FINAL)]})
    sleeps, done = [], []
    out = cluster.watch_jobs(["1"], run=run, sleep=sleeps.append, interval=5, on_done=done.append)
    assert [i["state"] for i in out] == ["TIMEOUT"] and done == out
    assert sleeps == [5, 5]  # COMPLETING is not the end


def test_watch_jobs_backs_off_while_the_scheduler_is_down():
    run = FakeRun({"scontrol": [None] * 6 + [(0, SCONTROL_FAILED)], "squeue": None, "sacct": None})
    sleeps = []
    out = cluster.watch_jobs(["3"], run=run, sleep=sleeps.append, interval=10, max_interval=60)
    assert out[0]["state"] == "FAILED"
    assert sleeps == [20, 40, 60, 60, 60, 60]


def test_watch_says_why_it_cannot_poll_and_gives_up_after_the_bound():
    clock, said = [0.0], []

    def sleep(s):
        clock[0] += s
    run = FakeRun({"scontrol": None, "squeue": None, "sacct": None})  # nothing answers
    out = cluster.watch_jobs(["3"], run=run, sleep=sleep, clock=lambda: clock[0], interval=60,
                             max_interval=600, give_up_s=600, warn=said.append)
    assert out[0]["state"] == "UNKNOWN" and "did not answer for" in out[0]["note"]
    assert said[0].startswith("cannot poll: scontrol did not answer") and "trying again in 2m" in said[0]
    assert said[-1].startswith("giving up: the scheduler did not answer for 10m") and "sacct" in said[-1]
    assert clock[0] == 600  # the last try came at the bound, not a back-off later


def test_watch_command_reports_polling_failures_and_exits_1(tmp_path):
    from wrapper_helpers import isolated_env, run_gpualert
    env = isolated_env(tmp_path, PATH=str(tmp_path))  # no scontrol, squeue or sacct here
    began = time.monotonic()
    proc = run_gpualert(tmp_path, ["watch", "--give-up", "2s", "--interval", "1", "4242"], env=env)
    err = proc.stderr.decode()
    assert proc.returncode == 1, err
    assert "gpualert: watch: cannot poll: scontrol did not answer" in err
    assert "gpualert: watch: giving up: the scheduler did not answer for" in err
    assert time.monotonic() - began < 30


def test_watch_jobs_gives_up_on_a_job_nobody_knows():
    run = FakeRun({"scontrol": (1, ""), "squeue": (0, ""), "sacct": (1, "")})
    sleeps = []
    out = cluster.watch_jobs(["999"], run=run, sleep=sleeps.append, interval=1, unknown_retries=3)
    assert out[0]["state"] == "UNKNOWN" and "3 polls" in out[0]["note"] and len(sleeps) == 2


def test_watch_jobs_max_wait():
    clock = [0.0]

    def sleep(s):
        clock[0] += s
    out = cluster.watch_jobs(["14"], run=FakeRun({"scontrol": (0, SCONTROL_RUNNING)}), sleep=sleep,
                             clock=lambda: clock[0], interval=60, max_wait=300)
    assert out[0]["state"] == "UNKNOWN" and "still running" in out[0]["note"]


def test_cmd_watch_classifies_and_notifies(tmp_path, monkeypatch, capsys):
    log = tmp_path / "train-3.out"
    log.write_text("Traceback (most recent call last):\nSystemExit: 3\n")
    text = SCONTROL_FAILED.replace("/tmp/obs/f-3_4294967294-3-failer-root-%N.txt", str(log))
    monkeypatch.setattr(cluster, "run_command", FakeRun({"scontrol": (0, text)}))
    seen = []
    monkeypatch.setattr(cluster, "classify_log", lambda path, facts=None, **kw: seen.append((path, facts)) or
                        cluster.Classification("traceback", "py_traceback", None, 1, "x", "y"))
    sent = []
    monkeypatch.setattr(cluster.Watch, "notify", lambda self, info, c: sent.append((info, c)))

    class Args(object):
        job_ids = ["3"]
        interval = 1
    assert cluster.cmd_watch(Args(), {"quiet": False}) == 0
    assert seen == [(str(log), {"scheduler_state": "FAILED", "exit_code": 3})]
    assert sent[0][0]["state"] == "FAILED" and sent[0][1].cls == "traceback"
    assert "3 FAILED exit=3 class=traceback" in capsys.readouterr().out


# ---- watch: an unknown job id (a typo) versus a scheduler that cannot answer now ----

INVALID = (1, "slurm_load_jobs error: Invalid job id specified\n")
NO_CONTROLLER = (1, "slurm_load_jobs error: Unable to contact slurm controller (connect failure)\n")
NO_ACCOUNTING = (1, "Slurm accounting storage is disabled\n")
SGE_NO_JOB = (1, "Following jobs do not exist: \n99999\n")
QACCT_NO_JOB = (1, "error: job id 99999 not found\n")


def _which(*names):
    return lambda name: "/usr/bin/" + name if name in names else None


@pytest.mark.parametrize("answers,which,unknown", [
    ({"scontrol": INVALID, "sacct": NO_ACCOUNTING}, ("scontrol",), True),
    ({"scontrol": INVALID, "sacct": (0, "")}, ("scontrol",), True),
    ({"scontrol": INVALID, "sacct": (0, "99999|COMPLETED\n")}, ("scontrol",), False),  # purged, in sacct
    ({"scontrol": NO_CONTROLLER, "sacct": NO_ACCOUNTING}, ("scontrol",), False),  # cannot poll now
    ({"scontrol": None, "sacct": None}, ("scontrol",), False),  # hung or missing
    ({"scontrol": INVALID, "sacct": None}, ("scontrol",), False),
    ({"qstat": SGE_NO_JOB, "qacct": QACCT_NO_JOB}, ("qstat",), True),
    ({"qstat": SGE_NO_JOB, "qacct": (1, "error: can't open accounting file\n")}, ("qstat",), False),
    ({"qstat": None, "qacct": QACCT_NO_JOB}, ("qstat",), False),
    ({"scontrol": INVALID, "sacct": NO_ACCOUNTING, "qstat": SGE_NO_JOB, "qacct": QACCT_NO_JOB},
     ("scontrol", "qstat"), True),
    ({"scontrol": INVALID, "sacct": NO_ACCOUNTING, "qstat": None}, ("scontrol", "qstat"), False),
    ({}, (), False),  # no scheduler here at all: the bounded give-up says so
])
def test_job_is_unknown_only_when_every_scheduler_says_so(answers, which, unknown):
    why = cluster.job_is_unknown("99999", "auto", run=FakeRun(answers), which=_which(*which))
    assert bool(why) == unknown, why
    if unknown:
        assert "Invalid job id" in why or "do not exist" in why, why


def test_job_is_unknown_asks_only_the_scheduler_named():
    run = FakeRun({"scontrol": INVALID, "sacct": NO_ACCOUNTING, "qstat": None})
    assert cluster.job_is_unknown("99999", "slurm", run=run, which=_which("scontrol", "qstat"))
    assert not [c for c in run.calls if c[0] == "qstat"]


def test_watch_command_fails_fast_on_an_unknown_job(tmp_path):
    # scontrol as Slurm's own answers a typo: the real wording, exit 1
    from wrapper_helpers import isolated_env, run_gpualert
    for name, text in (("scontrol", INVALID[1]), ("sacct", NO_ACCOUNTING[1]), ("squeue", INVALID[1])):
        write_executable(tmp_path / name, "#!/bin/sh\nprintf '%s' >&2\nexit 1\n" % text.replace("\n", "\\n"))
    env = isolated_env(tmp_path, PATH="%s:/usr/bin:/bin" % tmp_path, GPUALERT_SENDMAIL="none")
    proc = run_gpualert(tmp_path, ["watch", "--scheduler", "slurm", "--outbox", str(tmp_path / "ob"),
                                   "99999"], env=env)
    err = proc.stderr.decode()
    assert proc.returncode == 2, err
    assert "99999" in err and "Invalid job id" in err
    assert not (tmp_path / "ob").exists() or not list((tmp_path / "ob").iterdir())


def test_reason_from_limit_margin_grows_with_the_limit_and_ignores_garbage():
    # a 3-minute job cancelled 2 minutes before its end is not at its limit (it was with 180 s)
    assert cluster._reason_from_limit(0.0, 60.0, {"end_time": 180.0, "limit_s": 180.0})[0] is None
    assert cluster._reason_from_limit(0.0, 130.0, {"end_time": 180.0, "limit_s": 180.0})[0] == "walltime"
    # --signal=TERM@60 on a 5-minute job still reads as the limit
    assert cluster._reason_from_limit(0.0, 250.0, 300)[0] == "walltime"
    # ten hours: three minutes before the end counts, ten minutes does not
    assert cluster._reason_from_limit(0.0, 36000 - 170, 36000)[0] == "walltime"
    assert cluster._reason_from_limit(0.0, 36000 - 600, 36000)[0] is None
    # SLURM_JOB_END_TIME=1: an end before the start is no end time
    assert cluster._reason_from_limit(1000.0, 1010.0, {"end_time": 1.0}) == (None, None)


ga = load_gpualert()
SGE = pathlib.Path(__file__).resolve().parent / "fixtures" / "sge"


def read(name):
    return (SGE / name).read_text()


def test_durations_and_limits():
    assert ga.parse_sge_duration("30") == 30.0
    assert ga.parse_sge_duration("0:1:30") == 90.0
    assert ga.parse_sge_duration("1:00:00:00") == 86400.0
    assert ga.parse_sge_duration("INFINITY") is None
    assert ga.parse_sge_duration("") is None
    assert ga.format_hms(8) == "00:00:08" and ga.format_hms(90061) == "25:01:01"
    assert ga.sge_limits("h_rt=30,s_rt=20") == {"h_rt": 30.0, "s_rt": 20.0}
    assert ga.sge_limits("-l h_rt=0:1:0,s_rt=8 -notify") == {"h_rt": 60.0, "s_rt": 8.0}
    assert ga.sge_limits("NONE") == {}


def test_the_environment_of_an_array_task():
    env = {"JOB_ID": "17", "SGE_ROOT": "/var/lib/gridengine", "SGE_TASK_ID": "2",
           "SGE_TASK_FIRST": "1", "SGE_TASK_LAST": "5", "SGE_TASK_STEPSIZE": "2",
           "JOB_NAME": "arr", "QUEUE": "all.q"}
    sched = ga.detect_scheduler(env)
    assert (sched["label"], sched["dir_tag"], sched["array_task_count"]) == ("17.2", "sge-17.2", 3)
    assert ga.array_task_count(env) == 3
    plain = dict(env, SGE_TASK_ID="undefined", SGE_TASK_FIRST="undefined",
                 SGE_TASK_LAST="undefined", SGE_TASK_STEPSIZE="undefined")
    sched = ga.detect_scheduler(plain)
    assert sched["label"] == "17" and "array_job_id" not in sched
    assert ga.array_task_count(plain) is None


def test_signal_reasons():
    limits = {"s_rt": 8.0, "h_rt": 60.0}
    assert ga.sge_signal_reason("SIGUSR1", 8.6, limits) == (
        "walltime", "s_rt 00:00:08 reached (SIGUSR1 after 8s)")
    reason, evidence = ga.sge_signal_reason("SIGUSR1", 2.0, limits)
    assert reason is None and "suspension" in evidence  # -notify's warning before a suspend
    assert ga.sge_signal_reason("SIGUSR1", 5.0, None)[0] == "walltime"  # limits unreadable
    reason, evidence = ga.sge_signal_reason("SIGUSR1", 5.0, {"h_rt": 60.0})  # no s_rt at all
    assert reason is None and "no s_rt" in evidence
    assert ga.sge_signal_reason("SIGUSR2", 60.2, limits, "r")[0] == "walltime"
    reason, evidence = ga.sge_signal_reason("SIGUSR2", 12.0, limits, "dr")
    assert reason == "cancelled" and "qdel" in evidence and "dr" in evidence
    assert ga.sge_signal_reason("SIGUSR2", 12.0, limits, "r")[0] == "cancelled"  # before h_rt
    assert ga.sge_signal_reason("SIGUSR2", 12.0, {}, "r")[0] is None  # nothing to tell by


def test_stop_signals_depend_on_the_scheduler():
    assert "SIGUSR2" in ga.stop_signal_names({"kind": "sge"})
    assert "SIGUSR2" not in ga.stop_signal_names({"kind": "slurm"})
    assert "SIGUSR1" not in ga.stop_signal_names({"kind": "sge"})


def test_qacct_records_become_facts():
    (hrt,) = ga.parse_qacct(read("qacct-hrt-notify.txt"))
    facts = ga.sge_facts(hrt)
    assert facts["scheduler_reason"] == "walltime" and facts["exit_code"] == -12
    assert facts["scheduler_evidence"].startswith("h_rt 00:00:10 reached; qacct: failed 37 : qmaster enforced")
    verdict = ga.classify_text("", facts)
    assert ga.status_for(facts["exit_code"], verdict.cls) == "TIMEOUT"
    (srt,) = ga.parse_qacct(read("qacct-srt.txt"))
    facts = ga.sge_facts(srt)
    assert facts["scheduler_reason"] == "walltime" and "s_rt 00:00:08 reached" in facts["scheduler_evidence"]
    (qdel,) = ga.parse_qacct(read("qacct-qdel-notify.txt"))
    facts = ga.sge_facts(qdel)  # SIGKILL after the job: qacct cannot tell qdel from the OOM killer
    assert "scheduler_reason" not in facts and facts["exit_code"] == -9
    assert "failed 100 : assumedly after job" in facts["scheduler_evidence"]
    tasks = ga.parse_qacct(read("qacct-array.txt"))
    assert [t["taskid"] for t in tasks] == ["1", "2", "3"]
    assert [ga.sge_facts(t)["exit_code"] for t in tasks] == [0, 4, 0]
    info = ga.job_info_from_qacct(tasks[1], {})
    assert (info["label"], info["done"], info["exit_code"], info["kind"]) == ("17.2", True, 4, "sge")
    assert info["end_time"] is not None and "output files are unknown" in info["note"]


def test_submission_record_gives_the_output_files(tmp_path):
    rec = ga.parse_sge_job(read("qstat-j-array.txt"))
    assert rec["job_number"] == "20" and rec["hard resource_list"] == "h_rt=30,s_rt=20"
    assert rec["usage 2"].startswith("cpu=")
    rec = dict(rec, stdout_path_list="NONE:NONE:%s" % tmp_path, cwd=str(tmp_path))
    assert ga.sge_output_path(rec["stdout_path_list"], rec, "2", "o") == str(tmp_path / "look.o20.2")
    assert ga.sge_output_path(rec["stderr_path_list"], rec, "2", "e") == "/tmp/sgetry/err.txt"
    assert ga.sge_output_path(None, rec, None, "o") == str(tmp_path / "look.o20")
    assert ga.sge_output_path("NONE:NONE:out-$JOB_ID.$TASK_ID", rec, "3", "o") == \
        os.path.join(str(tmp_path), "out-20.3")
    assert ga.sge_output_path("/dev/null", rec, None, "e") is None
    assert ga.parse_sge_job("") == {}


def test_the_job_listing_gives_state_and_start():
    text = read("qstat-listing.txt")
    state, start = ga.parse_sge_listing(text, "20", "2")
    assert state == "dr" and start is not None
    assert ga.parse_sge_listing(text, "21")[0] == "dr"
    assert ga.parse_sge_listing(text, "99") == (None, None)


def test_poll_follows_a_job_from_the_queue_to_qacct(tmp_path):
    record = read("qstat-j-array.txt").replace("/tmp/sgetry", str(tmp_path))
    answers = {"qstat": (0, record), "qacct": (1, "error: job id 20 not found\n")}
    now = [1000.0]

    def run(argv, timeout):
        return answers[argv[0]]
    memory = {}
    (info,) = ga.SGE.poll("20", run, memory, clock=lambda: now[0])
    assert not info["done"] and info["name"] == "look"
    answers["qstat"] = (1, "Following jobs do not exist: \n20\n")
    (info,) = ga.SGE.poll("20", run, memory, clock=lambda: now[0])
    assert not info["done"]  # left the queue, accounting not flushed yet
    now[0] += ga.SGE_ACCOUNTING_WAIT_S + 1
    (info,) = ga.SGE.poll("20", run, memory, clock=lambda: now[0])
    assert info["done"] and "qacct has no record" in info["facts"]["scheduler_evidence"]
    assert info["stderr"] == str(tmp_path / "err.txt")
    answers["qacct"] = (0, read("qacct-array.txt").replace("jobnumber    17", "jobnumber    20"))
    infos = ga.SGE.poll("20", run, memory, clock=lambda: now[0])
    assert [i["label"] for i in infos] == ["20.1", "20.2", "20.3"]
    assert infos[0]["stdout"] == str(tmp_path / "look.o20.1")  # -o named a directory
    assert ga.SGE.poll("7", lambda argv, t: (1, ""), {}) == []
    assert ga.SGE.poll("7", lambda argv, t: None, {}) is None


def test_qacct_keeps_the_submission_watch_saw():
    """Job ids wrap and a reinstalled cell counts from 1 again: qacct -j 17 lists both."""
    old = read("qacct-srt.txt").replace("jobnumber    13", "jobnumber    17")
    new = read("qacct-hrt-notify.txt").replace("jobnumber    14", "jobnumber    17")
    both = ga.parse_qacct(old + new)
    assert len(both) == 2
    (rec,) = ga.same_submission(both, both[0]["qsub_time"])
    assert rec["jobname"] == "srt"
    latest = ga.same_submission(both)  # never seen queued: the latest submission
    assert [r["jobname"] for r in latest] == [max(both, key=lambda r: ga._sge_time(r["qsub_time"]))["jobname"]]
    assert [r["jobname"] for r in ga.same_submission(both, "Mon Jan  1 00:00:00 2001")] == \
        [r["jobname"] for r in latest]  # an unreadable stamp never hides the job


N = load_gpualert()


# ---- a malformed job id is a usage error, not another job ----

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


def test_a_hung_scheduler_query_ends_with_the_wrapper_and_takes_a_sigterm(tmp_path):
    """The scontrol started at the job's start hung: it outlived the wrapper for good, and
    with the wrapper's blocked signals inherited, a SIGTERM (even root's) could not end it."""
    from wrapper_helpers import run_gpualert, wait_until
    write_executable(tmp_path / "scontrol", "#!/bin/sh\necho $$ >> %s/pids\n"
                     # the mask read by the shell itself: dash blocks every signal while it
                     # forks, so a grep would see that instead
                     "while read -r line; do case $line in SigBlk*) echo \"$line\" >> %s/masks;; esac"
                     "; done < /proc/$$/status\nexec sleep 120\n" % (tmp_path, tmp_path))
    env = dict(isolated_env(tmp_path, SLURM_JOB_ID="14", SLURM_JOB_NAME="train"),
               PATH="%s:/usr/bin:/bin" % tmp_path)  # our scontrol, not the pretend job's
    code = "import os, time; time.sleep(2)"
    proc = run_gpualert(tmp_path, ["--outbox", str(tmp_path / "ob"), "--", PY, "-c", code], env=env)
    assert proc.returncode == 0, proc.stderr
    pids = [int(p) for p in (tmp_path / "pids").read_text().split()]
    masks = (tmp_path / "masks").read_text()
    assert pids and all(mask.split()[1] == "0000000000000000" for mask in masks.splitlines()), masks
    wait_until(lambda: not any(_alive(pid) for pid in pids), timeout=5, what="the queries to end")

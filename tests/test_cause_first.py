"""Diagnosis, round three (issue 22): one rank-prefix grammar; the cause before its
consequences as properties of the rule table; the line that shows the cause; the failing rank.

Every log here is built from the general wording of a public source (cited beside it), never
from a blind set's log."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _load import load_gpualert  # noqa: E402

ga = load_gpualert()
TB = "Traceback (most recent call last):"


def training(n=40, prefix=""):
    return "\n".join("%sepoch 0 step %d loss=%.3f lr=1e-4" % (prefix, i, 3.0 - i * 0.01) for i in range(1, n + 1))


def classify(text, code=1, **facts):
    facts["exit_code"] = code
    return ga.classify_text(text, facts)


# ---- one rank-prefix grammar ----

def test_every_launchers_rank_prefix_reads_as_its_rank():
    # torchrun --tee and its log-line template, Open MPI --tag-output ([jobid,rank]),
    # SageMaker's mpirank tag, srun --label (padded)
    for line, rank in (("[3]:x", 3), ("[rank3]: x", 3), ("[default3]:x", 3), ("[RANK3]:x", 3),
                       ("[1,3]<stderr>:x", 3), ("[1,mpirank:3,algo-1]<stdout>:x", 3), (" 3: x", 3),
                       ("12: x", 12), ("[host-1]<stdout>:x", None), ("x: 3", None), ("step 3: x", None)):
        got, end = ga.rank_prefix(line)
        assert got == rank, line
        assert ga.strip_rank_prefix(line).lstrip() == (line[end:].lstrip() if end else line.lstrip())


def test_the_metrics_parser_reads_the_same_prefixes():
    for prefix in ("[3]:", "[RANK3]:", "[1,3]<stderr>:", "3: "):
        assert ga.parse_metric_line(prefix + "step 10 loss=0.5") == (3, {"step": 10.0, "loss": 0.5})


def test_the_classifier_names_the_rank_of_every_prefix_form():
    for prefix in ("[3]:", "[RANK3]:", "[1,3]<stderr>:", "3: "):
        lines = [TB, '  File "/home/u/train.py", line 41, in <module>', "KeyError: 'input_ids'"]
        log = training() + "\n" + "\n".join(prefix + line for line in lines)
        c = classify(log)
        assert (c.rank, c.detail.startswith("rank 3: ")) == (3, True), (prefix, c)


# ---- cause before consequence: properties of the rule table ----

# NVIDIA/nccl#1405 and #1664: NCCL's InfiniBand plugin reports a failed work completion
# ("NET/IB : Got completion from peer ... with status=12 ... vendor err 129") at WARN level.
IB_WARN = ("node02:3468:3905 [1] transport/net_ib.cc:1615 NCCL WARN NET/IB : Got completion from peer "
           "10.0.0.3<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv)")
# pytorch/pytorch ProcessGroupNCCL (as quoted in NVIDIA/physicsnemo#691, pytorch#118369): the
# watchdog's own report, then libstdc++'s terminate for the rethrown c10::DistBackendError.
WATCHDOG_REMOTE = ("[rank1]:[E1016 03:33:45.319 ProcessGroupNCCL.cpp:1583] [PG 0 Rank 1] Process group "
                   "watchdog thread terminated with exception: NCCL error: remote process exited or there "
                   "was a network error, NCCL version 2.21.5")
TERMINATE = "terminate called after throwing an instance of 'c10::DistBackendError'"
# Slurm's srun (src/srun/srun_job.c) and slurmstepd's cancel banner.
STEP_CANCELLED = "slurmstepd: error: *** STEP 4242.0 ON node02 CANCELLED AT 2026-01-02T03:04:05 ***"


def test_an_infiniband_transport_error_beats_the_terminate_sigabrt_and_step_cancel_after_it():
    log = "\n".join([training(prefix="[rank1]:"), IB_WARN, WATCHDOG_REMOTE,
                     "ncclRemoteError: A call failed possibly due to a network error or a remote process "
                     "exiting prematurely.", TERMINATE, "  what():  [PG 0 Rank 1] Process group watchdog "
                     "thread terminated with exception: NCCL error: remote process exited",
                     "srun: error: node02: task 1: Aborted (core dumped)", STEP_CANCELLED])
    for code in (134, 1, -6):
        c = classify(log, code)
        assert (c.cls, c.rule, c.line) == ("nccl", "nccl_transport", 41), (code, c)
        assert "status 12" in c.detail


def test_a_failed_verbs_call_is_the_transport_fault_too():
    # NCCL misc/ibvwrap.cc's wrapper: "Call to ibv_modify_qp failed with error %s"
    log = "\n".join([training(), "n1:3468:3905 [0] misc/ibvwrap.cc:262 NCCL WARN Call to ibv_modify_qp failed "
                                 "with error Connection timed out errno 110", TERMINATE, "Aborted (core dumped)"])
    c = classify(log, 134)
    assert (c.cls, c.rule, c.line) == ("nccl", "nccl_transport", 41), c


def test_an_illegal_memory_access_beats_the_distbackenderror_terminate_it_causes():
    # InternLM/lmdeploy#3258, vllm-project/vllm#8177: the watchdog rethrows the CUDA error.
    log = "\n".join([training(prefix="[rank2]:"),
                     "[rank2]:[E ProcessGroupNCCL.cpp:1414] [PG 0 Rank 2] Process group watchdog thread "
                     "terminated with exception: CUDA error: an illegal memory access was encountered",
                     "CUDA kernel errors might be asynchronously reported at some other API call, so the "
                     "stacktrace below might be incorrect.", TERMINATE,
                     "  what():  [PG 0 Rank 2] Process group watchdog thread terminated with exception: "
                     "CUDA error: an illegal memory access was encountered",
                     "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 "
                     "(most recent call first):"])
    c = classify(log, -6)
    assert (c.cls, c.line, c.rank) == ("cuda_runtime", 41, 2), c
    assert c.detail.startswith("rank 2: ")


def test_a_launchers_killed_after_an_nccl_transport_failure_is_not_the_oom_killer():
    # bash's job report for a SIGKILLed child ("line 12: 3468 Killed ..."), after NCCL's IB error
    log = "\n".join([training(), IB_WARN.replace("[1]", "[0]"), "RuntimeError: NCCL communicator was aborted on rank 0.",
                     "/var/spool/slurmd/job4242/slurm_script: line 12:  3468 Killed                  python train.py"])
    assert classify(log, 137).cls == "nccl"
    # the cgroup's counter decides when it is there: it saw the OOM killer
    assert classify(log, 137, oom_kill_delta=1).cls == "oom_killer"


def test_a_kernel_xid_line_after_the_watchdog_timeouts_is_gpu_hardware():
    # NVIDIA/NVSentinel#155 (Xid 79 wording) after the ranks' watchdog timeouts (physicsnemo#691)
    timeout = ("[rank%d]:[E1016 03:33:45.317 ProcessGroupNCCL.cpp:568] [Rank %d] Watchdog caught collective "
               "operation timeout: WorkNCCL(SeqNum=50, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
               "Timeout(ms)=600000) ran for 600011 milliseconds before timing out.")
    log = "\n".join([training(prefix="[rank0]:"), timeout % (0, 0), timeout % (1, 1),
                     "[rank0]:[E1016 03:33:45.319 ProcessGroupNCCL.cpp:582] [Rank 0] To avoid data "
                     "inconsistency, we are taking the entire process down.", "=== epilogue: dmesg ===",
                     "[1843.308145] NVRM: Xid (PCI:0000:b3:00): 79, pid=3468, GPU has fallen off the bus."])
    c = classify(log, -6)
    assert (c.cls, c.rule) == ("gpu_hardware", "xid_hardware"), c


def test_an_epilogues_xid_printed_after_the_step_cancel_is_still_the_cause():
    # the job's epilogue dumps dmesg after srun's abort and slurmstepd's cancel
    timeout = ("[rank0]:[E1016 03:33:45.317 ProcessGroupNCCL.cpp:568] [Rank 0] Watchdog caught collective "
               "operation timeout: WorkNCCL(SeqNum=50, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
               "Timeout(ms)=600000) ran for 600011 milliseconds before timing out.")
    log = "\n".join([training(prefix="[rank0]:"), timeout, TERMINATE, "srun: error: n1: tasks 0-7: Aborted (core dumped)",
                     STEP_CANCELLED, "[ 1843.3] NVRM: Xid (PCI:0000:b3:00): 79, pid='<unknown>', name=<unknown>, "
                     "GPU has fallen off the bus."])
    for code in (134, 1):
        c = classify(log, code)
        assert (c.cls, c.line) == ("gpu_hardware", 45), (code, c)


def test_timeout_exit_124_with_the_keyboardinterrupt_of_its_sigint_is_a_time_limit():
    # GNU coreutils manual, "timeout invocation": exit 124 if COMMAND times out; -s INT sends
    # SIGINT, which Python reports as a KeyboardInterrupt traceback.
    log = "\n".join([training(), TB, '  File "train.py", line 80, in <module>', "    main()",
                     '  File "train.py", line 60, in main', "    loss.backward()", "KeyboardInterrupt"])
    c = classify(log, 124)
    assert (c.cls, c.rule, c.line) == ("walltime", "timeout_exit_code", 46), c
    assert classify(log, 130).cls == "interrupted"  # the same traceback from a Ctrl-C


def test_tars_short_write_is_a_full_disk():
    # engineering.adjust.com "CephFS and max file size": GNU tar's "Wrote only 4096 of 10240 bytes",
    # then "Error is not recoverable"; df's header and a full file system's row.
    log = "\n".join([training(), "tar: /scratch/u/archive/run7.tar: Wrote only 4096 of 10240 bytes",
                     "tar: Error is not recoverable: exiting now",
                     "Filesystem      Size  Used Avail Use% Mounted on",
                     "/dev/nvme0n1p1  1.8T  1.8T     0 100% /scratch"])
    c = classify(log, 2)
    assert (c.cls, c.rule, c.line) == ("disk_full", "short_write", 41), c


def test_an_iostream_error_then_a_shell_steps_enospc_is_a_full_disk():
    # libstdc++'s "basic_ios::clear: iostream error" names no cause (stan-dev/cmdstan#1310: it is
    # what a full output directory looks like); coreutils' cp then says ENOSPC.
    log = "\n".join([training(), "terminate called after throwing an instance of 'std::ios_base::failure[abi:cxx11]'",
                     "  what():  basic_ios::clear: iostream error", "Aborted (core dumped)",
                     "cp: error writing '/scratch/u/results/metrics.json': No space left on device"])
    for code in (1, 134):
        c = classify(log, code)
        assert (c.cls, c.rule, c.line) == ("disk_full", "no_space_left", 44), (code, c)


def test_a_bash_redirect_that_is_denied_is_a_permission_error_not_exec_failure():
    # bash (redir.c) reports a redirection it cannot open as "bash: line N: PATH: Permission denied"
    log = training() + "\nbash: line 1: /project/shared/runs/metrics.log: Permission denied"
    c = classify(log, 1)
    assert (c.cls, c.rule, c.line) == ("permission", "shell_permission", 41), c
    # exit 126: the shell could not execute the command itself
    assert classify("bash: line 1: ./train.sh: Permission denied", 126).cls == "exec_failure"


def test_openfoams_trapfpe_banner_is_not_a_division_by_zero():
    # OpenFOAM's start-up banner (src/OSspecific/POSIX/signals/sigFpe.C) says trapping is enabled
    log = "\n".join(["Exec   : simpleFoam -parallel",
                     "trapFpe: Floating point exception trapping enabled (FOAM_SIGFPE).",
                     "Time = 1", "--> FOAM FATAL ERROR:", 'cannot find file "/home/u/case/0/p"', "FOAM exiting"])
    assert classify(log, 1).cls != "div_zero"
    assert classify(log.replace("trapFpe: Floating point exception trapping enabled (FOAM_SIGFPE).",
                                "Floating point exception (core dumped)"), 136).cls == "div_zero"


def test_an_lsf_verdict_at_the_top_beats_output_that_just_stops(tmp_path):
    # IBM LSF's job report (bsub -o): the TERM_RUNLIMIT reason before "The output (if any) follows:";
    # LSF sends USR2 at the run limit, exit code 140.
    report = ("Sender: LSF System <lsfadmin@node12>\nSubject: Job 4242: <train> in cluster <c1> Exited\n\n"
              "Job <train> was submitted from host <login1> by user <ana> in cluster <c1>.\n"
              "TERM_RUNLIMIT: job killed after reaching LSF run time limit.\nExited with exit code 140.\n\n"
              "The output (if any) follows:\n\n")
    path = tmp_path / "lsf.out"
    path.write_text(report + "\n".join("epoch %d step %d loss=%.4f lr=1e-4" % (i // 1000, i, 3 - i * 1e-5)
                                       for i in range(12000)) + "\nepoch 11 step 12")
    import subprocess
    out = subprocess.run([sys.executable, str(ga.__file__), "classify", "--json", "--exit-code", "140", str(path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    import json
    got = json.loads(out.stdout)
    assert (got["class"], got["line"], got["rank"]) == ("walltime", 5, None), out


# ---- the evidence line: where the error starts ----

def test_a_two_line_nccl_error_shows_the_line_that_says_what_failed():
    # pytorch ProcessGroupNCCL's "NCCL error in: ..., unhandled system error" followed by NCCL's
    # ncclGetErrorString gloss (vllm-project/vllm#10523, NVIDIA/nccl#1381)
    log = "\n".join([training(), TB, '  File "train.py", line 30, in <module>', "    dist.all_reduce(t)",
                     "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
                     "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), "
                     "NCCL version 2.19.3",
                     "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device "
                     "error. ", "Last error:", "socketStartConnect: Connect to 10.0.0.2<35000> failed"])
    c = classify(log)
    assert (c.cls, c.line) == ("nccl", 44), c
    # NCCL's own WARN line "... failed: ncclSystemError" before the same gloss
    log = "\n".join([training(), "node02:3468:3905 [0] bootstrap.cc:275 NCCL WARN Bootstrap : ncclCommInitRank "
                                 "failed: ncclSystemError",
                     "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device "
                     "error."])
    assert classify(log).line == 41


def test_repeated_device_side_asserts_show_the_first():
    # pytorch aten/src/ATen/native/cuda/IndexKernel.cu: one line per failing thread, often hundreds
    asserts = ["../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [5,0,0], thread: [%d,0,0] "
               "Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed." % t
               for t in range(300)]
    log = "\n".join([training()] + asserts + [TB, '  File "train.py", line 30, in <module>', "    y = emb(x)",
                                              "RuntimeError: CUDA error: device-side assert triggered"])
    c = classify(log)
    assert (c.cls, c.line) == ("cuda_runtime", 41), c


def test_an_exception_group_shows_the_exception_not_the_group_header():
    # CPython 3.11+ traceback.py: a group's tracebacks drawn inside "  | " margins
    log = "\n".join([training(), "  + Exception Group Traceback (most recent call last):",
                     '  |   File "/home/u/run.py", line 20, in <module>', "  |     asyncio.run(main())",
                     "  | ExceptionGroup: unhandled errors in a TaskGroup (1 sub-exception)",
                     "  +-+---------------- 1 ----------------", "    | Traceback (most recent call last):",
                     '    |   File "/home/u/run.py", line 12, in fetch', "    |     raise ValueError('bad shard 7')",
                     "    | ValueError: bad shard 7", "    +------------------------------------"])
    c = classify(log)
    assert (c.line, c.rule) == (49, "py_exception"), c
    assert "bad shard 7" in c.detail


def test_a_nan_stop_message_shows_the_first_nan_of_the_streak():
    # a loop's own guard ("Loss is nan, stopping training") after the NaN reports that led to it
    log = "\n".join([training(20)] + ["epoch 0 step %d loss=nan lr=1e-4" % s for s in range(21, 25)]
                    + [TB, '  File "train.py", line 3, in <module>',
                       "ValueError: Monitored metric train_loss = nan is not finite. Previous best value was inf."])
    c = classify(log)
    assert (c.cls, c.line) == ("nan_loss", 21), c


# ---- "Killed" with no word of memory: one decision, everywhere ----

def test_a_kill_with_no_memory_evidence_reads_as_the_oom_killer_unless_the_cgroup_says_otherwise():
    # bash's job report, srun's task report, the bare line, and no line at all with exit 137
    for line in ("/var/spool/slurmd/job1/slurm_script: line 12:  3468 Killed   python train.py",
                 "srun: error: n1: task 0: Killed", "Killed", ""):
        log = training() + "\n" + line
        assert classify(log, 137).cls == "oom_killer", line
        assert classify(log, -9).cls == "oom_killer", line
        assert classify(log, 137, oom_kill_delta=0).cls == "unknown", line  # measured: no OOM kill
        assert classify(log, 137, oom_kill_delta=1).cls == "oom_killer", line
    assert "OOM killer assumed" in classify(training(), 137).detail  # the detail says it is a guess


def test_classify_json_names_the_failing_rank(tmp_path):
    import json
    import subprocess
    path = tmp_path / "ranks.log"
    path.write_text(training(prefix="[1,0]<stdout>:") + "\n" + "\n".join(
        "[1,3]<stderr>:" + line for line in (TB, '  File "/home/u/train.py", line 41, in <module>',
                                             "KeyError: 'input_ids'")) + "\n")
    out = subprocess.run([sys.executable, str(ga.__file__), "classify", "--json", "--exit-code", "1", str(path)],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True, timeout=60)
    got = json.loads(out.stdout)
    assert (got["rank"], got["line"]) == (3, 43) and got["detail"].startswith("rank 3: "), out


def test_pdsh_host_prefixes_are_read_through_and_the_rank_behind_them_named():
    # DeepSpeed's multi-node launcher runs ranks through pdsh (deepspeed/launcher/multinode_runner.py
    # PDSHRunner), which prefixes every remote line with "host: "; torchrun's [rankN]: may follow.
    lines = [TB, '  File "/home/u/train.py", line 41, in <module>', "    main()", "KeyError: 'input_ids'"]
    for prefix, rank in (("worker-1: [rank3]:", 3), ("gpu-node-1: ", None)):
        log = training(prefix="worker-0: [rank0]:") + "\n" + "\n".join(prefix + line for line in lines)
        c = classify(log)
        assert (c.cls, c.rule, c.line, c.rank) == ("traceback", "py_exception", 44, rank), (prefix, c)
    assert ga.strip_rank_prefix('worker-1: [rank3]:  File "/home/u/train.py", line 41, in main').startswith("  File")
    # a tool's own name (no digit or hyphen) and an exception's name stay part of the line
    assert classify(training() + "\nbash: line 1: foo: command not found").rule == "cmd_not_found"
    assert classify(training() + "\nPy4JJavaError: An error occurred while calling o42.save").rule == "py_exception"

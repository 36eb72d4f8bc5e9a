#!/usr/bin/env python3
"""Write tests/fixtures/<rule_id>.log: one noisy, realistic log per classifier rule.

Each log is a training run's harmless noise (NCCL INFO/WARN, UserWarning/FutureWarning,
tqdm redraws with \\r and ANSI colours, a loss=nan blip that recovered, val_error
metrics, a handled exception logged early, rank prefixes) followed by one failure in
wording taken from the real tools (PyTorch, NCCL, CUDA, XLA/JAX, TensorFlow, DeepSpeed,
Lightning, HF, Slurm, PBS, LSF, the kernel, bash). Run: python3 tests/make_fixtures.py
"""
import os
import random
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "fixtures")

TB = "Traceback (most recent call last):"


def frames(*calls):
    out = []
    for path, line, func, code in calls:
        out.append('  File "%s", line %d, in %s' % (path, line, func))
        out.append("    " + code)
    return out


TRAIN = frames(("/home/akim/proj/train.py", 412, "<module>", "main(cfg)"),
               ("/home/akim/proj/train.py", 371, "main", "loss = train_one_epoch(model, loader, opt, epoch)"),
               ("/home/akim/proj/engine.py", 88, "train_one_epoch", "loss.backward()"))


def noise(rng, prefix=""):
    """A few hundred lines of a healthy run."""
    p = prefix
    lines = ["+ srun python train.py --config configs/base.yaml", "Job 88231 running on gpu-a100-07"]
    for r in range(2):
        lines.append("%sgpu-a100-07:4411%d:4411%d [%d] NCCL INFO Bootstrap : Using ib0:10.1.4.7<0>" % (p, r, r, r))
        lines.append("%sgpu-a100-07:4411%d:4452%d [%d] NCCL INFO Channel 00/02 :    0   1" % (p, r, r, r))
    lines.append("%sgpu-a100-07:44110:44520 [0] NCCL WARN NET/IB : No device found." % p)
    lines.append("NCCL version 2.19.3+cuda12.3")
    lines.append("/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:429: UserWarning: "
                 "torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False"
                 " explicitly.")
    lines.append("  warnings.warn(")
    lines.append("/home/akim/proj/train.py:63: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is"
                 " deprecated. "
                 "Please use `torch.amp.GradScaler('cuda', args...)` instead.")
    lines.append("WARNING: failed to load optional plugin 'apex':")
    lines.append(TB)
    lines += frames(("/home/akim/proj/utils/plugins.py", 72, "_load", "importlib.import_module(name)"))
    lines.append("ModuleNotFoundError: No module named 'apex'")
    lines.append("continuing without apex")
    loss = 7.0
    for step in range(1, 121):
        loss *= 0.99
        bar = "\r".join("\x1b[32m%3d%%|%s| %d/120 [00:%02d<00:10, loss=%.4f]\x1b[0m" % (
            k, "#" * (k // 10), step, k % 60, loss) for k in range(0, 101, 25))
        if step % 20 == 0:
            lines.append(bar)
        lines.append("%sepoch 0 step %5d loss=%.4f lr=3.0e-04 grad_norm=%.3f" % (p, step * 10, loss, rng.random() + 0.5))
        if step == 40:
            lines.append("%sepoch 0 step %5d loss=nan lr=3.0e-04 (skipped: non-finite loss)" % (p, step * 10 + 5))
        if step % 30 == 0:
            lines.append("[eval] epoch 0 val_loss=%.4f val_error=0.%03d top1_err=0.161" % (loss + 0.3, rng.randrange(999)))
    return lines


def tb(exc, *extra, **kw):
    body = [TB] + list(kw.get("frames", TRAIN)) + [exc] + list(extra)
    return body


def ranked(lines, rank):
    return ["[rank%d]:%s" % (rank, l) for l in lines]


TORCHRUN_TAIL = [
    "W0517 10:22:31.118000 140220 torch/distributed/elastic/multiprocessing/api.py:897] "
    "Sending process 44111 closing signal SIGTERM",
    "E0517 10:22:31.511000 140220 torch/distributed/elastic/multiprocessing/api.py:869] "
    "failed (exitcode: 1) local_rank: 0 (pid: 44110) of binary: /opt/conda/bin/python",
    TB,
] + frames(("/opt/conda/bin/torchrun", 8, "<module>", "sys.exit(main())"),
           ("/opt/conda/lib/python3.10/site-packages/torch/distributed/launcher/api.py", 263, "launch_agent",
            "raise ChildFailedError(")) + [
    "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
    "============================================================",
    "train.py FAILED",
    "------------------------------------------------------------",
    "Failures:",
    "  <NO_OTHER_FAILURES>",
    "------------------------------------------------------------",
    "Root Cause (first observed failure):",
    "[0]:",
    "  time      : 2024-05-17_10:22:31",
    "  host      : gpu-a100-07",
    "  rank      : 0 (local_rank: 0)",
    "  exitcode  : 1 (pid: 44110)",
    "  error_file: <N/A>",
    "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
    "============================================================",
]

SRUN_FAIL = ["srun: error: gpu-a100-07: task 0: Exited with exit code 1"]


def failure_blocks():
    """{rule_id: lines of the failure} (the part after the noise)."""
    f = {}
    f["slurm_time_limit"] = ["\r 22%|##        | 11/50 [1:55:52<6:50:13, 631.11s/it]"
                             "slurmstepd: error: *** JOB 42196 ON gpu-a100-07 CANCELLED AT"
                             " 2024-04-14T16:17:16 "
                             "DUE TO TIME LIMIT ***"]
    f["pbs_walltime"] = ["=>> PBS: job killed: walltime 86415 exceeded limit 86400"]
    f["lsf_runlimit"] = ["", "------------------------------------------------------------",
                         "Sender: LSF System <lsfadmin@gpu17>", "Job <train> was submitted from host <login1>",
                         "TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "Exited with exit"
                                                                                         " code 140."]
    f["slurm_preempted"] = ["srun: Force Terminated job 557341",
                            "slurmstepd: error: *** STEP 557341.0 ON gpu-a100-07 CANCELLED AT"
                            " 2025-03-11T13:26:25 "
                            "DUE TO PREEMPTION ***",
                            "srun: Job step aborted: Waiting up to 32 seconds for job step to finish."]
    # slurmstepd's own format string (Slurm 22.05 binary): "DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS"
    f["slurm_node_failure"] = ["slurmstepd: error: *** JOB 557342 ON gpu-a100-07 CANCELLED AT 2025-03-11T13:26:25"
                               " DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
                               "srun: error: gpu-a100-08: task 1: Killed"]
    # horovod/common/operations.cc SHUT_DOWN_ERROR through TensorFlow (horovod/horovod#3412, #2097)
    f["horovod_shutdown"] = [
        "[1,1]<stderr>:2022-02-20 10:38:31.118412: W tensorflow/core/framework/op_kernel.cc:1651] OP_REQUIRES failed"
        " at mpi_ops.cc:402 : Unknown: Horovod has been shut down. This was caused by an exception on one of the"
        " ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished"
        " execution. If the shutdown was caused by an exception, you should see the exception in the log before"
        " the first shutdown message."] + ranked(tb(
            "tensorflow.python.framework.errors_impl.UnknownError: Horovod has been shut down. This was caused by"
            " an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after"
            " one of the ranks finished execution.",
            "\t [[{{node DistributedAdam_Allreduce/cond/HorovodAllreduce_grads_0}}]]"), 1)
    # PBS Pro scheduler's preemption words (PBSPro tests: "Job preempted by requeuing")
    f["pbs_preempted"] = ["Terminated", "+ tracejob -n 1 4114938", "Job: 4114938.pbs01", "",
                          "12/03/2026 10:41:07  S    Job preempted by requeuing"]
    # torch/cuda/__init__.py _lazy_init on a CPU-only build
    f["torch_cpu_build"] = tb("AssertionError: Torch not compiled with CUDA enabled")
    # CPython argparse ArgumentParser.error(): usage, then "prog: error: message", exit 2
    f["argparse_usage"] = ["usage: train.py [-h] --model MODEL [--lr LR] [--batch-size BATCH_SIZE]",
                           "train.py: error: the following arguments are required: --model"]
    # hydra/_internal/config_loader_impl.py MissingConfigException, printed by run_and_report
    f["hydra_missing_config"] = ["Primary config directory not found.",
                                 "Check that the config directory '/home/akim/proj/conf' exists and readable",
                                 "", "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."]
    # hydra ConfigCompositionException for an override of a key the config lacks (verl-project/verl#7295)
    f["hydra_config_error"] = ["Could not override 'trainer.max_ckpt_to_keep'.",
                               "To append to your config use +trainer.max_ckpt_to_keep=2",
                               "Key 'max_ckpt_to_keep' is not in struct", "    full_key: trainer.max_ckpt_to_keep",
                               "    object_type=dict", "",
                               "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."]
    # bitsandbytes cuda_setup/main.py (bitsandbytes-foundation/bitsandbytes#175, #572)
    f["bnb_cuda_setup"] = ["CUDA SETUP: Detected CUDA version 122",
                           "CUDA SETUP: Required library version not found: libbitsandbytes_cuda122.so. Maybe you need"
                           " to compile it from source?"] + tb(
        "RuntimeError: ", "        CUDA Setup failed despite GPU being available. Please run the following command to"
        " get more information:", "", "        python -m bitsandbytes")
    # torch/utils/data/dataloader.py _try_get_data, chained over the queue's ConnectionResetError
    f["dataloader_exited"] = tb("ConnectionResetError: [Errno 104] Connection reset by peer", "",
                                "The above exception was the direct cause of the following exception:", "") + tb(
        "RuntimeError: DataLoader worker (pid 13518) exited unexpectedly with exit code 3. Details are lost due to"
        " multiprocessing. Rerunning with num_workers=0 may give better error trace.")
    f["lsf_preempted"] = ["TERM_PREEMPT: job killed after preemption.", "Exited with exit code 143."]
    # AWS EC2 "Spot Instance interruption notice" (docs: spot-instance-termination-notices)
    # huggingface/datasets builder.py download_and_prepare's free-space check
    f["disk_space_check"] = tb("OSError: Not enough disk space. Needed: 212.40 GiB (download: 80.10 GiB, generated:"
                               " 132.30 GiB, post-processed: Unknown size)")
    # Grid Engine execd job message for h_rt enforcement
    f["sge_wallclock"] = ["job 8812311.1 exceeded hard wallclock time - initiate terminate method"]
    # open-mpi/ompi opal/mca/btl/tcp/btl_tcp_endpoint.c, then mpirun's abort banner
    f["mpi_transport"] = ["[gpu-a100-07][[36432,1],3][btl_tcp_endpoint.c:803:mca_btl_tcp_endpoint_complete_connect]"
                          " connect() to 10.1.3.89 failed: Connection refused (111)",
                          "--------------------------------------------------------------------------",
                          "Primary job  terminated normally, but 1 process returned",
                          "a non-zero exit code. Per user-direction, the job has been aborted.",
                          "--------------------------------------------------------------------------"]
    # kubernetes pkg/controller/job/job_controller.go: the DeadlineExceeded condition's message,
    # as `kubectl describe job` prints the event after the pod's log
    f["k8s_deadline"] = ["+ kubectl describe job llama-sft | tail -n 3", "Events:",
                         "  Type     Reason            Age   From            Message",
                         "  Warning  DeadlineExceeded  12s   job-controller  Job was active longer than specified deadline"]
    f["cloud_preempted"] = ["Received EC2 Spot Instance interruption notice: instance-action terminate at"
                            " 2024-05-17T10:24:31Z", "saving checkpoint to /fsx/akim/ckpt/step_1200.pt"]
    # facebookincubator/submitit core/job_environment.py SignalHandler.has_timed_out / checkpoint_and_try_requeue
    f["job_timed_out"] = ["submitit INFO (2024-05-17 10:22:31,118) - Job has timed out. Ran 1431 minutes out of"
                          " requested 1440 minutes.",
                          "submitit WARNING (2024-05-17 10:22:31,119) - Caught signal SIGUSR1 on gpu-a100-07: this"
                          " job is timed-out.", "submitit INFO (2024-05-17 10:22:31,120) - Calling checkpoint method."]
    # Lightning pytorch/trainer/connectors/signal_connector.py _slurm_sigusr_handler_fn
    f["requeued"] = ["Handling auto-requeue signal: 10", "requeing job 88231...", "Requeued SLURM job: 88231"]
    # coreutils timeout --verbose (src/timeout.c: "sending signal %s to command %s")
    f["timeout_cmd"] = ["timeout: sending signal TERM to command \u2018python\u2019"]
    # Lightning 2.x _SignalConnector: log.info(rank_prefixed_message(f"Received SIGTERM: {signum}", ...))
    f["graceful_signal"] = ["[rank: 0] Received SIGTERM: 15", "Saved checkpoint to /home/akim/proj/ckpt/last.ckpt"]
    f["slurm_cancelled"] = ["srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
                            "slurmstepd: error: *** JOB 524549 ON gpu-a100-07 CANCELLED AT"
                            " 2024-10-09T23:25:32 ***",
                            "srun: got SIGCONT", "srun: forcing job termination"]
    f["lsf_owner_kill"] = ["TERM_OWNER: job killed by owner.", "Exited with exit code 130."]
    f["slurm_oom_kill"] = ["/var/spool/slurmd/job88231/slurm_script: line 21: 44110 Killed                 "
                           " python train.py",
                           "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=88231.batch. Some of"
                           " your "
                           "processes may have been killed by the cgroup out-of-memory handler."]
    f["kernel_oom_kill"] = ["+ dmesg -T | tail -n 2",
                            "[Fri May 17 10:22:29 2024] Memory cgroup out of memory: Killed process 44110"
                            " (python) "
                            "total-vm:98123400kB, anon-rss:63981200kB, file-rss:0kB, shmem-rss:0kB, UID:1000 "
                            "pgtables:131072kB oom_score_adj:0",
                            "[Fri May 17 10:22:29 2024] oom_reaper: reaped process 44110 (python), now"
                            " anon-rss:0kB"]
    f["sched_mem_limit"] = ["srun: error: gpu-a100-07: task 0: Out Of Memory",
                            "srun: Terminating StepId=88231.0"]
    # kubectl describe pod (container lastState.terminated.reason) and Ray's memory monitor
    f["container_oom_kill"] = ["+ kubectl describe pod trainer-0 | grep -A3 'Last State'",
                               "    Last State:     Terminated", "      Reason:       OOMKilled",
                               "      Exit Code:    137"]
    f["dataloader_killed"] = tb("RuntimeError: DataLoader worker (pid 30315) is killed by signal: Killed. ",
                                frames=frames(("/home/akim/proj/train.py", 371, "main", "for batch in loader:"),
                                              ("/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/"
                                               "signal_handling.py", 66, "handler", "_error_if_any_worker_fails()")))
    f["shell_killed"] = ["/var/spool/slurmd/job88231/slurm_script: line 17: 44110 Killed                  "
                         "python train.py --config configs/base.yaml"]
    f["sigkill_seen"] = [l.replace("exitcode  : 1 (pid: 44110)", "exitcode  : -9 (pid: 44110)").replace(
        "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
        "Signal 9 (SIGKILL) received by PID 44110").replace("failed (exitcode: 1)", "failed (exitcode: -9)")
        for l in TORCHRUN_TAIL]
    f["xid_hardware"] = ["+ dmesg | grep -i xid",
                         "[3324.556] NVRM: Xid (PCI:0000:3b:00): 79, pid=44110, name=python, GPU has fallen"
                         " off the bus."] + tb(
        "RuntimeError: CUDA error: unspecified launch failure",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace"
        " below might be incorrect.")
    f["gpu_off_bus"] = tb("RuntimeError: CUDA error: unknown error") + [
        "+ nvidia-smi", "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  "
        "Reboot the system to recover this GPU"]
    # NVIDIA's kernel module (open-gpu-kernel-modules), as a job prologue's health check prints it
    f["gpu_init_failed"] = ["+ dmesg | grep NVRM | tail -2",
                            "[  8.600582] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x25:0x65:1468)",
                            "[  8.600674] NVRM: GPU 0000:3b:00.0: rm_init_adapter failed, device minor number 0"
                            ] + tb("RuntimeError: No CUDA GPUs are available")
    f["ecc_uncorrectable"] = tb("RuntimeError: CUDA error: uncorrectable ECC error encountered",
                                "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.")
    f["nvlink_uncorrectable"] = ranked(tb("RuntimeError: CUDA error: uncorrectable NVLink error detected"
                                          " during the execution",
                                          "Compile with `TORCH_USE_CUDA_DSA` to enable device-side"
                                          " assertions."), 3)
    f["keyboard_interrupt"] = ["^C"] + tb("KeyboardInterrupt")
    f["launcher_signal"] = ["W0517 10:22:31.118000 140220 torch/distributed/elastic/agent/server/api.py:704] "
                            "Received Signals.SIGTERM death signal, shutting down workers"] + tb(
        "torch.distributed.elastic.multiprocessing.api.SignalException: Process 140220 got signal: 15",
        frames=frames(("/opt/conda/bin/torchrun", 8, "<module>", "sys.exit(main())"),
                      ("/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/api.py",
                       62, "_terminate_process_handler", "raise SignalException(f\"Process {os.getpid()}"
                                                         " got signal: {sigval}\", sigval=sigval)")))
    f["cmd_not_found"] = ["+ torchrun --nproc_per_node=4 train.py",
                          "/var/spool/slurmd/job88231/slurm_script: line 9: torchrun: command not found"]
    f["script_not_found"] = ["+ python3 trian.py --epochs 10",
                             "python3: can't open file '/home/akim/proj/trian.py': [Errno 2] No such file"
                             " or directory"]
    f["cuda_oom"] = ranked(tb("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU"
                              " 0 has a total "
                              "capacity of 79.15 GiB of which 1.05 GiB is free. Including non-PyTorch"
                              " memory, this process "
                              "has 78.09 GiB memory in use. Of the allocated memory 75.12 GiB is allocated"
                              " by PyTorch, and "
                              "1.43 GiB is reserved by PyTorch but unallocated. If reserved but unallocated"
                              " memory is large "
                              "try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid"
                              " fragmentation."), 1) + \
        ranked(["[E ProcessGroupNCCL.cpp:1316] [Rank 0] Watchdog caught collective operation timeout:"
                " WorkNCCL(SeqNum=88, "
                "OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600321 milliseconds"
                " before timing out."], 0) + \
        TORCHRUN_TAIL
    f["cuda_error_oom"] = tb("RuntimeError: CUDA error: out of memory",
                             "CUDA kernel errors might be asynchronously reported at some other API call,"
                             " so the "
                             "stacktrace below might be incorrect.", "For debugging consider passing"
                                                                     " CUDA_LAUNCH_BLOCKING=1.")
    f["xla_oom"] = tb("jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying"
                      " to allocate "
                      "17179869184 bytes.",
                      frames=frames(("/home/akim/jaxproj/train.py", 210, "<module>", "state, metrics ="
                                                                                     " p_train_step(state,"
                                                                                     " batch)")))
    f["tf_oom"] = tb("tensorflow.python.framework.errors_impl.ResourceExhaustedError: OOM when allocating"
                     " tensor with "
                     "shape[64,1024,1024] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by"
                     " allocator GPU_0_bfc",
                     "\t [[{{node model/dense/MatMul}}]]",
                     "Hint: If you want to see a list of allocated tensors when OOM happens, add"
                     " report_tensor_allocations_upon_oom "
                     "to RunOptions for current allocation info.",
                     frames=frames(("/home/akim/tfproj/train.py", 98, "<module>", "model.fit(ds, epochs=10)")))
    f["nccl_watchdog"] = ranked([
        "[E517 10:12:07.268610655 ProcessGroupNCCL.cpp:607] [Rank 2] Watchdog caught collective operation"
        " timeout: "
        "WorkNCCL(SeqNum=270453, OpType=ALLREDUCE, NumelIn=354889819, NumelOut=354889819,"
        " Timeout(ms)=600000) ran for "
        "600123 milliseconds before timing out.",
        "[E517 10:12:08 ProcessGroupNCCL.cpp:630] [Rank 2] Some NCCL operations have failed or timed out."
        " Due to the "
        "asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete"
        " data."], 2) + [
        "terminate called after throwing an instance of 'c10::DistBackendError'",
        "  what():  [PG 0 Rank 2] Process group watchdog thread terminated with exception: [Rank 2]"
        " Watchdog caught "
        "collective operation timeout: WorkNCCL(SeqNum=270453, OpType=ALLREDUCE, NumelIn=354889819, "
        "NumelOut=354889819, Timeout(ms)=600000) ran for 600123 milliseconds before timing out."] + [
        l.replace("exitcode: 1", "exitcode: -6").replace("exitcode  : 1", "exitcode  : -6") for l in TORCHRUN_TAIL]
    f["nccl_result"] = ranked(tb("torch.distributed.DistBackendError: NCCL error in:"
                                 " ../torch/csrc/distributed/c10d/"
                                 "ProcessGroupNCCL.cpp:1970, unhandled system error (run with"
                                 " NCCL_DEBUG=INFO for details), "
                                 "NCCL version 2.20.5",
                                 "ncclSystemError: System call (e.g. socket, malloc) or external library"
                                 " call failed or "
                                 "device error.", "Last error:", "socketStartConnect: Connect to"
                                                                 " 10.1.4.8<43125> failed : "
                                 "Software caused connection abort"), 1) + TORCHRUN_TAIL
    f["nccl_error"] = tb("RuntimeError: NCCL error in:"
                         " /opt/conda/conda-bld/pytorch_1646755903507/work/torch/csrc/"
                         "distributed/c10d/ProcessGroupNCCL.cpp:1169, unhandled system error, NCCL version"
                         " 2.10.3")
    f["nccl_aborted"] = ranked(tb("torch.distributed.DistBackendError: [1] is setting up NCCL communicator"
                                  " and retrieving "
                                  "ncclUniqueId from [0] via c10d key-value store by key '0', but"
                                  " store->get('0') got "
                                  "error: Connection reset by peer"), 1) + TORCHRUN_TAIL
    f["dist_store"] = tb("torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for"
                         " clients. "
                         "1/2 clients joined.")
    # torch gloo transport (third_party/gloo/gloo/transport/tcp/pair.cc) as a rank sees a peer die
    # NCCL's InfiniBand plugin (NVIDIA/nccl#1405), then the watchdog's abort (SIGABRT)
    f["nccl_transport"] = ["gpu-a100-07:44110:44520 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion"
                           " from peer 10.1.4.8<43210> with error 12, opcode 0, len 0, vendor err 129",
                           "[rank0]:[E1016 03:33:45.319 ProcessGroupNCCL.cpp:1583] [PG 0 Rank 0] Process group"
                           " watchdog thread terminated with exception: NCCL error: remote process exited or"
                           " there was a network error, NCCL version 2.21.5",
                           "terminate called after throwing an instance of 'c10::DistBackendError'",
                           "/var/spool/slurmd/job88231/slurm_script: line 17: 44110 Aborted                "
                           " (core dumped) python train.py"]
    f["gloo_peer_lost"] = ranked(tb("RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection"
                                    " closed by peer [10.1.4.8]:6132"), 1)
    f["cuda_device_assert"] = [
        "../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0],"
        " thread: "
        "[%d,0,0] Assertion `t >= 0 && t < n_classes` failed." % t for t in range(5)] + tb(
        "RuntimeError: CUDA error: device-side assert triggered",
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace"
        " below might be incorrect.")
    f["cuda_error"] = ranked(tb("RuntimeError: CUDA error: an illegal memory access was encountered",
                                "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."), 0) + [
        "terminate called after throwing an instance of 'c10::Error'",
        "  what():  CUDA error: an illegal memory access was encountered",
        "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most"
        " recent call first):"]
    f["cuda_lib_error"] = tb("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR",
                             "You can try to repro this exception using the following code snippet. If that"
                             " doesn't "
                             "trigger the error, please include your original repro script when reporting"
                             " this issue.")
    f["cuda_unavailable"] = tb("RuntimeError: Found no NVIDIA driver on your system. Please check that you"
                               " have an "
                               "NVIDIA GPU and installed a driver from"
                               " http://www.nvidia.com/Download/index.aspx")
    f["shm_exhausted"] = ["ERROR: Unexpected bus error encountered in worker. This might be caused by"
                          " insufficient "
                          "shared memory (shm)."] + tb(
        "RuntimeError: DataLoader worker (pid 4121) is killed by signal: Bus error. It is possible that"
        " dataloader's "
        "workers are out of shared memory. Please try to raise your shared memory limit.")
    f["host_oom"] = tb("numpy.core._exceptions._ArrayMemoryError: Unable to allocate 74.5 GiB for an array"
                       " with shape "
                       "(100000, 100000) and data type float64",
                       frames=frames(("/home/akim/proj/data.py", 41, "build_cache", "feats = np.zeros((n, n))")))
    f["segfault"] = ["Fatal Python error: Segmentation fault", "",
                     "Thread 0x00007f3c2a7fc700 (most recent call first):",
                     '  File "/opt/conda/lib/python3.10/threading.py", line 324 in wait',
                     "", "Current thread 0x00007f3d1b3ff740 (most recent call first):",
                     '  File "/home/akim/proj/ops/fused.py", line 77 in forward',
                     "/var/spool/slurmd/job88231/slurm_script: line 17: 44110 Segmentation fault      (core"
                     " dumped) python train.py"]
    f["native_abort"] = ["terminate called after throwing an instance of 'std::runtime_error'",
                         "  what():  tokenizers: vocabulary file is corrupt",
                         "/var/spool/slurmd/job88231/slurm_script: line 17: 44110 Aborted                "
                         " (core dumped) python train.py"]
    f["missing_module"] = tb("ModuleNotFoundError: No module named 'flash_attn'",
                             frames=frames(("/home/akim/proj/model.py", 5, "<module>", "from flash_attn"
                                                                                       " import flash_attn_func")))
    f["import_error"] = tb("ImportError: libcudart.so.11.0: cannot open shared object file: No such file or"
                           " directory",
                           frames=frames(("/home/akim/proj/ops/__init__.py", 3, "<module>", "from . import _C")))
    f["no_space_left"] = tb("OSError: [Errno 28] No space left on device",
                            frames=frames(("/home/akim/proj/train.py", 390, "main", "save_checkpoint(state,"
                                                                                    " path)")))
    # GNU tar's short write (engineering.adjust.com, "CephFS and max file size"), then df
    f["short_write"] = ["tar: /scratch/akim/archive/run7.tar: Wrote only 4096 of 10240 bytes",
                        "tar: Error is not recoverable: exiting now",
                        "Filesystem      Size  Used Avail Use% Mounted on",
                        "/dev/nvme0n1p1  1.8T  1.8T     0 100% /scratch"]
    # bash's redirection error (redir.c): a log file in a directory the job cannot write
    f["shell_permission"] = ["/var/spool/slurmd/job88231/slurm_script: line 21: /project/shared/runs/metrics.log:"
                             " Permission denied"]
    f["disk_quota"] = tb("OSError: [Errno 122] Disk quota exceeded: '/home/akim/ckpt/step_1000.pt'",
                         frames=frames(("/home/akim/proj/train.py", 390, "main", "save_checkpoint(state,"
                                                                                 " path)")))
    f["checkpoint_write"] = tb("RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos"
                               " 1179648 vs 1179542",
                               frames=frames(("/opt/conda/lib/python3.10/site-packages/torch/serialization.py", 628,
                                              "save", "_save(obj, opened_zipfile, pickle_module,"
                                                      " pickle_protocol)"))) + [
        "", "During handling of the above exception, another exception occurred:", ""] + tb(
        "RuntimeError: [enforce fail at inline_container.cc:424] . PytorchStreamWriter failed writing file"
        " data/47: "
        "file write failed")
    f["file_not_found"] = tb("FileNotFoundError: [Errno 2] No such file or directory:"
                             " '/scratch/akim/imagenet/train/n01440764'",
                             frames=frames(("/home/akim/proj/data.py", 30, "__init__", "self.files ="
                                                                                       " os.listdir(root)")))
    f["hf_not_found"] = tb("OSError: /scratch/akim/models/llama-7b does not appear to have a file named"
                           " config.json. "
                           "Checkout 'https://huggingface.co//scratch/akim/models/llama-7b/None' for"
                           " available files.",
                           frames=frames(("/home/akim/proj/train.py", 55, "<module>",
                                          "model = AutoModelForCausalLM.from_pretrained(args.model)")))
    f["permission"] = tb("PermissionError: [Errno 13] Permission denied: '/projects/shared/ckpt/run7'",
                         frames=frames(("/home/akim/proj/train.py", 60, "<module>", "os.makedirs(out_dir,"
                                                                                    " exist_ok=True)")))
    f["div_zero"] = tb("ZeroDivisionError: float division by zero",
                       frames=frames(("/home/akim/proj/metrics.py", 18, "precision", "return tp / (tp + fp)")))
    f["device_mismatch"] = ranked(tb("RuntimeError: Expected all tensors to be on the same device, but"
                                     " found at least "
                                     "two devices, cuda:0 and cpu!"), 0) + TORCHRUN_TAIL
    f["device_mismatch_other"] = tb("RuntimeError: Input type (torch.cuda.FloatTensor) and weight type "
                                    "(torch.FloatTensor) should be the same")
    f["nan_anomaly"] = tb("RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th"
                          " output.")
    f["nan_detectron"] = tb("FloatingPointError: Loss became infinite or NaN at iteration=4523!",
                            "loss_dict = {'loss_cls': nan, 'loss_box_reg': nan}",
                            frames=frames(("/opt/detectron2/detectron2/engine/train_loop.py", 400, "_write_metrics",
                                           "raise FloatingPointError(")))
    f["loss_scale_min"] = ["[2024-05-17 10:20:01,118] [INFO] [loss_scaler.py:183:update_scale] [deepspeed]"
                           " OVERFLOW! "
                           "Rank 0 Skipping step. Attempted loss scale: 1, reducing to 1"] + tb(
        "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.",
        frames=frames(("/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/fp16/loss_scaler.py", 175,
                       "update_scale", "raise Exception(")))
    f["nan_metric_stop"] = ["Epoch 3: 100%|##########| 500/500 [01:12<00:00, 6.90it/s, v_num=7,"
                            " train_loss=nan]",
                            "Monitored metric val_loss = nan is not finite. Previous best value was 0.412. "
                            "Signaling Trainer to stop."]
    f["nan_loss_report"] = ["epoch 1 step %5d loss=%s lr=3.0e-04 grad_norm=nan" % (1300 + 10 * i, "nan") for i in range(6)] + [
        "Training diverged; exiting."]
    f["assertion"] = tb("AssertionError: sequence length 4096 exceeds max_position_embeddings 2048",
                        frames=frames(("/home/akim/proj/model.py", 210, "forward", "assert T <="
                                                                                   " self.max_len, msg")))
    f["runtime_error"] = tb("RuntimeError: Error(s) in loading state_dict for ResNet:",
                            "\tsize mismatch for fc.weight: copying a param with shape torch.Size([1000,"
                            " 2048]) from "
                            "checkpoint, the shape in current model is torch.Size([10, 2048]).") + SRUN_FAIL
    f["py_exception"] = ["", "The above exception was the direct cause of the following exception:", ""] + tb(
        "KeyError: 'encoder.layer.0.attention.self.query.weight'",
        frames=frames(("/home/akim/proj/convert.py", 88, "remap", "out[k] = sd[mapping[k]]"))) + SRUN_FAIL
    f["py_traceback"] = [TB] + TRAIN
    return f


def main():
    os.makedirs(OUT, exist_ok=True)
    for rule_id, block in sorted(failure_blocks().items()):
        seed = zlib.crc32(rule_id.encode())  # a new rule leaves the other fixtures as they are
        rng = random.Random(seed)
        prefix = ("", "0: ", "[default0]:")[seed % 3] if rule_id not in ("segfault",) else ""
        lines = noise(rng, prefix) + block
        with open(os.path.join(OUT, rule_id + ".log"), "w", newline="") as f:
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()

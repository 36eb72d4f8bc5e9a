#!/usr/bin/env python3
"""Rebuild the dev8 blind set: composed logs (seeded) + captured logs (copied from captured/).

stdlib only.  Run:  python3 make_set.py   -> logs/*.log and labels.jsonl next to this file.
Error wording in composed logs is taken from public sources named in each log's provenance.
"""
import json, os, random, re, shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SET = "dev8"
R = random.Random(8088)


class Ev(str):
    """the evidence line"""


class Alt(str):
    """an equally good evidence line"""


def mark(cls, s):
    return cls(s)


# ------------------------------------------------------------------ helpers
GPUS = [("NVIDIA A100-SXM4-80GB", "535.104.05", "12.2", 81920),
        ("NVIDIA H100 80GB HBM3", "550.54.15", "12.4", 81559),
        ("NVIDIA A100-SXM4-40GB", "525.85.12", "12.0", 40960),
        ("NVIDIA H100 80GB HBM3", "535.161.08", "12.2", 81559),
        ("Tesla V100-SXM2-32GB", "470.182.03", "11.4", 32768),
        ("NVIDIA A100-PCIE-40GB", "515.65.01", "11.7", 40960),
        ("NVIDIA L40S", "550.90.07", "12.4", 46068),
        ("NVIDIA H200", "560.35.03", "12.6", 143771)]

HOSTS = ["gpu-node%02d" % i for i in range(1, 40)] + ["dgx%03d" % i for i in range(1, 20)] + ["a100-st-p4d24xlarge-%d" % i for i in range(1, 12)]
PYVER = ["3.10", "3.11", "3.9", "3.12"]


def pick(seq):
    return R.choice(seq)


def ts(day=None):
    d = day or R.randint(1, 28)
    return "2024-%02d-%02dT%02d:%02d:%02d" % (R.randint(1, 12), d, R.randint(0, 23), R.randint(0, 59), R.randint(0, 59))


CLOCK = {"md": (5, 11), "t": 3600 * 3}


def new_clock():
    CLOCK["md"] = (R.randint(1, 12), R.randint(1, 28))
    CLOCK["t"] = R.randint(0, 20 * 3600)


def glog_ts():
    """one date per log, time moving forward a little at each call"""
    CLOCK["t"] += R.randint(0, 2)
    t = CLOCK["t"]
    return "%02d%02d %02d:%02d:%02d.%06d" % (CLOCK["md"][0], CLOCK["md"][1], t // 3600 % 24, t // 60 % 60, t % 60, R.randint(0, 999999))


def prefix(style, r, s, stream="stderr"):
    if style is None:
        p = ""
    elif style == "bracket":
        p = "[%d]:" % r
    elif style == "RANK":
        p = "[RANK%d]:" % r
    elif style == "mpi":
        p = "[1,%d]<%s>:" % (r, stream)
    elif style == "label":
        p = "%d: " % r
    elif style == "rank":
        p = "[rank%d]:" % r
    elif style == "default":
        p = "[default%d]:" % r
    else:
        p = ""
    if p and s.startswith(p):
        p = ""  # torch already printed this exact prefix
    return type(s)(p + s) if isinstance(s, (Ev, Alt)) else p + s


def slurm_head(jobid, host, nnodes, ntasks, gpu):
    out = ["SLURM_JOB_ID=%d" % jobid, "SLURM_JOB_NODELIST=%s" % host,
           "SLURM_NNODES=%d SLURM_NTASKS=%d" % (nnodes, ntasks),
           "Loading module cuda/%s" % gpu[2], "Loading module nccl/2.18.3-cuda%s" % gpu[2],
           "Activating conda env: train"]
    return out


def smi(gpu, n):
    name, drv, cuda, mem = gpu
    out = ["+-----------------------------------------------------------------------------------------+",
           "| NVIDIA-SMI %s              Driver Version: %s      CUDA Version: %s     |" % (drv, drv, cuda),
           "|-----------------------------------------+------------------------+----------------------+",
           "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
           "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
           "|=========================================+========================+======================|"]
    for i in range(n):
        out.append("|   %d  %-28s  On  |   00000000:%02X:00.0 Off |                    0 |" % (i, name[:28], 0x18 + 16 * i))
        out.append("| N/A   %dC    P0             %dW / 400W |       1MiB / %dMiB |      0%%      Default |" % (R.randint(28, 40), R.randint(55, 90), mem))
        out.append("+-----------------------------------------+------------------------+----------------------+")
    return out


def nccl_init(host, nranks, ver="2.18.3", style=None, ib=True):
    out = []
    pid0 = R.randint(10000, 90000)
    for r in range(nranks):
        pid = pid0 + r
        tid = pid + 150 + r
        pre = "%s:%d:%d [%d] " % (host, pid, pid, r % 8)
        if r == 0:
            out.append(prefix(style, r, pre + "NCCL INFO Bootstrap : Using ib0:10.%d.%d.%d<0>" % (R.randint(0, 9), R.randint(0, 250), R.randint(2, 250)), "stdout"))
            out.append(prefix(style, r, pre + "NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation", "stdout"))
            out.append(prefix(style, r, pre + "NCCL INFO cudaDriverVersion 12020", "stdout"))
            out.append(prefix(style, r, "NCCL version %s+cuda12.2" % ver, "stdout"))
        if ib:
            out.append(prefix(style, r, "%s:%d:%d [%d] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB ; OOB ib0:10.1.%d.%d<0>" % (host, pid, tid, r % 8, R.randint(0, 9), R.randint(2, 250)), "stdout"))
            out.append(prefix(style, r, "%s:%d:%d [%d] NCCL INFO Using network IB" % (host, pid, tid, r % 8), "stdout"))
        else:
            out.append(prefix(style, r, "%s:%d:%d [%d] NCCL INFO Using network Socket" % (host, pid, tid, r % 8), "stdout"))
    for r in range(nranks):
        pid = pid0 + r
        out.append(prefix(style, r, "%s:%d:%d [%d] NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x0 commId 0x%x - Init COMPLETE" % (host, pid, pid + 150 + r, r % 8, R.randint(0x55000000, 0x56ffffff), r, nranks, r % 8, r % 8, 0x18 + 16 * (r % 8), R.getrandbits(60)), "stdout"))
    return out, pid0


WARN_POOL = [
    "/opt/conda/lib/python{py}/site-packages/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system is 8, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
    "  warnings.warn(_create_warning_msg(",
    "/opt/conda/lib/python{py}/site-packages/torch/optim/lr_scheduler.py:139: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value of the learning rate schedule. See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
    "/opt/conda/lib/python{py}/site-packages/transformers/training_args.py:1525: FutureWarning: `evaluation_strategy` is deprecated and will be removed in version 4.46 of 🤗 Transformers. Use `eval_strategy` instead",
    "/opt/conda/lib/python{py}/site-packages/torch/nn/parallel/distributed.py:2156: UserWarning: Grad strides do not match bucket view strides. This may indicate grad was not created according to the gradient layout contract, or that the param's strides changed since DDP was constructed.  This is not an error, but may impair performance.",
    "/opt/conda/lib/python{py}/site-packages/torch/utils/checkpoint.py:91: UserWarning: None of the inputs have requires_grad=True. Gradients will be None",
    "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.",
    "Some weights of BertForSequenceClassification were not initialized from the model checkpoint at bert-base-uncased and are newly initialized: ['classifier.bias', 'classifier.weight']",
    "You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference.",
    "/opt/conda/lib/python{py}/site-packages/torch/_dynamo/eval_frame.py:600: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.5 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but if you need to preserve previous behavior, you can pass use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
]


def warns(py, k=3):
    return [w.format(py=py) for w in R.sample(WARN_POOL, k)]


def train_lines(n, style=None, ranks=(0,), kind=None, total=None, nan_at=None):
    """n lines of routine progress output (loss lines, tqdm, eval)"""
    kind = kind or pick(["hf", "megatron", "tqdm", "plain", "lightning"])
    total = total or max(n * R.choice([5, 10, 20]), 1000)
    out = []
    loss = R.uniform(2.5, 9.0)
    lr = pick([1e-4, 3e-4, 2e-5, 6e-4])
    for i in range(n):
        it = (i + 1) * max(1, total // max(n, 1))
        loss = max(0.05, loss * R.uniform(0.995, 1.002))
        r = ranks[i % len(ranks)]
        if kind == "hf":
            s = "{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.3e, 'epoch': %.2f}" % (loss, R.uniform(0.2, 3.0), lr, it / total * 3)
        elif kind == "megatron":
            s = (" iteration %8d/%8d | consumed samples: %10d | elapsed time per iteration (ms): %.1f | learning rate: %.6E | global batch size:   512 | lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations:   0 | number of nan iterations:   0 |" % (it, total, it * 512, R.uniform(900, 1400), lr, loss, R.uniform(0.15, 1.5)))
        elif kind == "tqdm":
            pct = int(100 * it / total)
            bar = "█" * (pct // 10) + " " * (10 - pct // 10)
            s = "Epoch %d: %3d%%|%s| %d/%d [%02d:%02d<%02d:%02d,  %.2fit/s, loss=%.3f, v_num=%d]" % (it * 3 // total, pct, bar, it, total, i // 60 % 60, i % 60, R.randint(0, 59), R.randint(0, 59), R.uniform(2, 9), loss, R.randint(0, 9))
        elif kind == "lightning":
            s = "[%s] step=%d train/loss=%.4f train/ppl=%.2f lr=%.2e tokens/s=%d" % (ts(), it, loss, 2.718 ** min(loss, 9), lr, R.randint(90000, 180000))
        else:
            s = "epoch %d iter %d/%d loss %.4f acc %.3f time %.3fs" % (it * 5 // total, it, total, loss, R.uniform(0.1, 0.9), R.uniform(0.2, 0.9))
        if i and i % 997 == 0:
            out.append(prefix(style, r, "***** Running Evaluation *****" if kind == "hf" else "validation: loss %.4f ppl %.3f" % (loss * 1.05, 2.718 ** min(loss, 9)), "stdout"))
        out.append(prefix(style, r, s, "stdout"))
    return out


def pyframes(py, frames, style=None, r=0):
    out = [prefix(style, r, "Traceback (most recent call last):")]
    for f, ln, fn, code in frames:
        out.append(prefix(style, r, '  File "%s", line %d, in %s' % (f.format(py=py), ln, fn)))
        out.append(prefix(style, r, "    " + code))
    return out


TRAIN_FRAMES = [("/home/{u}/proj/train.py", 412, "<module>", "main(args)"),
                ("/home/{u}/proj/train.py", 377, "main", "train_one_epoch(model, loader, optimizer, scaler, epoch)"),
                ("/home/{u}/proj/engine.py", 88, "train_one_epoch", "outputs = model(samples)")]


def user():
    return pick(["jdoe", "mlee", "akumar", "schen", "rgarcia", "tnguyen", "pwang", "kim_h", "ops"])


def frames_save(u, extra=()):
    return [("/home/%s/proj/train.py" % u, 412, "<module>", "main(args)"),
            ("/home/%s/proj/train.py" % u, 398, "main", "save_checkpoint(model, optimizer, step, args.output_dir)"),
            ("/home/%s/proj/utils/ckpt.py" % u, 41, "save_checkpoint", "torch.save(state, path)")] + list(extra)


def frames_for(u, extra=()):
    return [(f.replace("{u}", u), a, b, c) for f, a, b, c in TRAIN_FRAMES[:R.randint(1, 3)]] + list(extra)


def cpp_frames(py, n=6, style=None, r=0):
    libs = ["libc10.so", "libc10_cuda.so", "libtorch_cuda.so", "libtorch_cuda.so", "libtorch.so", "libc.so.6", "libc.so.6"]
    names = ["c10::Error::Error(c10::SourceLocation, std::string) + 0x57", "c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) + 0x64",
             "c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) + 0x118",
             "c10d::ProcessGroupNCCL::WorkNCCL::finishedGPUExecutionInternal() const + 0x56", "c10d::ProcessGroupNCCL::WorkNCCL::isCompleted() + 0xa0",
             "c10d::ProcessGroupNCCL::watchdogHandler() + 0x1da", "c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x10c", "<unknown function> + 0xdc253", "<unknown function> + 0x94ac3", "clone + 0x44"]
    out = []
    for i in range(min(n, len(names))):
        lib = libs[min(i, len(libs) - 1)] if i < 7 else "libc.so.6"
        path = "/lib/x86_64-linux-gnu/" if lib.startswith("libc.so") else "/opt/conda/lib/python%s/site-packages/torch/lib/" % py
        out.append(prefix(style, r, "frame #%d: %s (0x%x in %s%s)" % (i, names[i], R.getrandbits(47), path, lib)))
    out.append(prefix(style, r, ""))
    return out


# ------------------------------------------------------------------ registry
ITEMS = []


def add(mode, lines, code, prov, gpu=None, rank=None, source="composed"):
    ITEMS.append(dict(mode=mode, lines=lines, code=code, prov=prov, gpu=gpu, rank=rank, source=source))
    new_clock()


def long_n():
    return R.randint(10000, 24000)


LONG = set()  # indices of composed scenarios that get long logs; decided below by counter
_count = {"n": 0}


def body_n(default_lo=30, default_hi=400):
    _count["n"] += 1
    if _count["n"] % 4 == 0 and len(LONG) < 21:
        LONG.add(_count["n"])
        return long_n()
    return R.randint(default_lo, default_hi)


# ------------------------------------------------------------------ scenarios
def sc_nccl_ib_chain(style, launcher):
    """IB transport error -> watchdog terminate -> SIGABRT -> step cancel / mpirun abort."""
    gpu = pick(GPUS[:4]); py = pick(PYVER); host = pick(HOSTS); host2 = pick(HOSTS)
    nr = pick([8, 16]); jobid = R.randint(100000, 999999)
    L = slurm_head(jobid, "%s,%s" % (host, host2), 2, nr, gpu) + smi(gpu, 2)
    init, pid0 = nccl_init(host, min(nr, 8), style=style)
    L += init + [prefix(style, 0, w) for w in warns(py, 2)]
    L += train_lines(body_n(), style, ranks=(0,), kind=pick(["megatron", "hf"]))
    bad = R.randrange(nr)
    pid = pid0 + bad
    peer = "10.%d.%d.%d<%d>" % (R.randint(0, 9), R.randint(0, 250), R.randint(2, 250), R.randint(30000, 60000))
    L.append(prefix(style, bad, ""))
    bh = host if bad < 8 else host2
    L.append(prefix(style, bad, Ev("%s:%d:%d [%d] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer %s with error 12, opcode 0, len 0, vendor err 129 (Recv)" % (bh, pid, pid + 200, bad % 8, peer))))
    L.append(prefix(style, bad, "%s:%d:%d [%d] NCCL INFO transport/net.cc:1125 -> 6" % (host, pid, pid + 200, bad % 8)))
    L.append(prefix(style, bad, "%s:%d:%d [%d] NCCL INFO proxy.cc:698 -> 6" % (host, pid, pid + 200, bad % 8)))
    L.append(prefix(style, bad, "%s:%d:%d [%d] NCCL INFO proxy.cc:878 -> 6 [Progress Thread]" % (host, pid, pid + 200, bad % 8)))
    t = glog_ts()
    msg = ("[PG 0 Rank %d] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.18.3" % bad)
    L.append(prefix(style, bad, "[rank%d]:[E%s ProcessGroupNCCL.cpp:1316] %s" % (bad, t, msg)))
    L.append(prefix(style, bad, "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."))
    L.append(prefix(style, bad, "Last error:"))
    L.append(prefix(style, bad, "NET/IB : Got completion from peer %s with error 12, opcode 0, len 0, vendor err 129 (Recv)" % peer))
    L.append(prefix(style, bad, "Exception raised from checkForNCCLErrorsInternal at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1723 (most recent call first):"))
    L += cpp_frames(py, 5, style, bad)
    L.append(prefix(style, bad, "terminate called after throwing an instance of 'c10::DistBackendError'"))
    L.append(prefix(style, bad, "  what():  %s" % msg))
    L.append(prefix(style, bad, "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."))
    L.append(prefix(style, bad, "Last error:"))
    L.append(prefix(style, bad, "NET/IB : Got completion from peer %s with error 12, opcode 0, len 0, vendor err 129 (Recv)" % peer))
    others = [r for r in range(nr) if r != bad][:3]
    for r in others:
        L.append(prefix(style, r, "[rank%d]:[E%s ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 600%03d milliseconds before timing out." % (r, glog_ts(), r, 48211, 26214400, 26214400, R.randint(0, 99))))
    if launcher == "srun":
        L.append("srun: error: %s: task %d: Aborted (core dumped)" % (bh, bad))
        L.append("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
        L.append("slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (jobid, host, ts()))
        for r in others:
            L.append("srun: error: %s: task %d: Aborted (core dumped)" % (host if r < 8 else host2, r))
        code = 134
    else:
        L.append("--------------------------------------------------------------------------")
        L.append("Primary job  terminated normally, but 1 process returned")
        L.append("a non-zero exit code. Per user-direction, the job has been aborted.")
        L.append("--------------------------------------------------------------------------")
        L.append("--------------------------------------------------------------------------")
        L.append("mpirun noticed that process rank %d with PID %d on node %s exited on signal 6 (Aborted)." % (bad, pid, host))
        L.append("--------------------------------------------------------------------------")
        code = 134
    add("nccl", L, code, "composed; NCCL WARN NET/IB wording from NVIDIA/nccl#902 and tatsu-lab/stanford_alpaca#207; ProcessGroupNCCL watchdog/terminate lines from pytorch/pytorch#152780, sgl-project/sglang#1693; srun/slurmstepd and Open MPI mpirun abort text (SchedMD slurm src/srun, open-mpi/ompi help-mpirun.txt)", gpu, bad)


def sc_nccl_killed(style):
    """NCCL remote error on one rank; launcher later shows 'Killed' (137)."""
    gpu = pick(GPUS[:4]); py = pick(PYVER); host = pick(HOSTS); u = user()
    nr = 8
    L = ["+ torchrun --nnodes 2 --nproc-per-node 8 --rdzv-backend c10d --rdzv-endpoint %s:29500 train.py --config configs/7b.yaml" % host] + smi(gpu, 1)
    init, pid0 = nccl_init(host, nr, style=style)
    L += init + train_lines(body_n(), style, ranks=(0,), kind="megatron")
    bad = R.randrange(nr)
    L += pyframes(py, frames_for(u, [("/opt/conda/lib/python{py}/site-packages/torch/distributed/c10d_logger.py", 83, "wrapper", "return func(*args, **kwargs)"),
                                      ("/opt/conda/lib/python{py}/site-packages/torch/distributed/distributed_c10d.py", 2501, "all_reduce", "work = group.allreduce([tensor], opts)")]), style, bad)
    L.append(prefix(style, bad, Ev("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.21.5")))
    L.append(prefix(style, bad, "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely."))
    L.append(prefix(style, bad, "Last error:"))
    L.append(prefix(style, bad, "socketProgressOpt: Call to recv from 10.%d.%d.%d<%d> failed : Connection reset by peer" % (R.randint(0, 9), R.randint(0, 250), R.randint(2, 250), R.randint(30000, 60000))))
    L.append("W%s %d site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM" % (glog_ts()[:-7] + ".%06d" % R.randint(0, 999999), pid0 - 40, pid0 + (bad + 1) % 8))
    L.append("/var/spool/slurmd/job%d/slurm_script: line 38: %d Killed                  torchrun --nnodes 2 --nproc-per-node 8 train.py --config configs/7b.yaml" % (R.randint(100000, 999999), pid0 - 40))
    add("nccl", L, 137, "composed; DistBackendError/ncclRemoteError/socketProgressOpt text from NVIDIA/nccl#2076; torchrun SIGTERM line from torch/distributed/elastic/multiprocessing/api.py; bash 'Killed' job-control message", gpu, bad)


def sc_nccl_watchdog(style, long_=False):
    gpu = pick(GPUS); py = pick(PYVER); host = pick(HOSTS)
    nr = pick([4, 8])
    L = slurm_head(R.randint(100000, 999999), host, 1, nr, gpu) + smi(gpu, min(nr, 4))
    init, pid0 = nccl_init(host, nr, style=style, ib=False)
    L += init + warns(py, 2) + train_lines(body_n(), style, ranks=(0,), kind=pick(["hf", "tqdm", "plain"]))
    order = list(range(nr)); R.shuffle(order)
    seq = R.randint(500, 90000); op = pick(["ALLREDUCE", "_ALLGATHER_BASE", "_REDUCE_SCATTER_BASE", "BROADCAST"])
    first = True
    for r in order:
        line = "[rank%d]:[E%s ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 6000%02d milliseconds before timing out." % (r, glog_ts(), r, seq, op, 1 << 20, 1 << 20, R.randint(0, 99))
        L.append(prefix(style, r, Ev(line) if first else line))
        L.append(prefix(style, r, "[rank%d]:[E%s ProcessGroupNCCL.cpp:1664] [PG 0 Rank %d] Exception (either an error or timeout) detected by watchdog at work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d." % (r, glog_ts(), r, seq, seq + 1, seq - 1)))
        if first:
            firstr = r
        first = False
    for r in order[:2]:
        L.append(prefix(style, r, "[rank%d]:[E%s ProcessGroupNCCL.cpp:621] [Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data." % (r, glog_ts(), r)))
        L.append(prefix(style, r, "[rank%d]:[E%s ProcessGroupNCCL.cpp:627] [Rank %d] To avoid data inconsistency, we are taking the entire process down." % (r, glog_ts(), r)))
    L.append("E%s %d site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: %d (pid: %d) of binary: /opt/conda/bin/python" % (glog_ts(), pid0 - 7, firstr, pid0 + firstr))
    add("nccl", L, 1, "composed; watchdog timeout lines from hiyouga/LlamaFactory#7396 and sgl-project/sglang#1693; elastic api.py failure line from pytorch torch/distributed/elastic/multiprocessing/api.py", gpu, firstr)


def sc_nccl_init_sys(style):
    gpu = pick(GPUS); py = pick(PYVER); host = pick(HOSTS); u = user()
    nr = 8
    L = ["Starting run %s on %s" % (R.randint(1000, 9999), host)] + smi(gpu, 2) + warns(py, 2)
    bad = R.randrange(nr)
    pid = R.randint(10000, 90000)
    L.append(prefix(style, bad, "%s:%d:%d [%d] misc/socket.cc:483 NCCL WARN socketStartConnect: Connect to 10.0.%d.%d<%d> failed : Software caused connection abort" % (host, pid, pid + 150, bad, R.randint(0, 9), R.randint(2, 250), R.randint(30000, 60000))))
    L.append(prefix(style, bad, "%s:%d:%d [%d] NCCL INFO misc/socket.cc:564 -> 2" % (host, pid, pid + 150, bad)))
    L.append(prefix(style, bad, "%s:%d:%d [%d] NCCL INFO bootstrap.cc:270 -> 2" % (host, pid, pid + 150, bad)))
    L += pyframes(py, frames_for(u, [("/opt/conda/lib/python{py}/site-packages/torch/nn/parallel/distributed.py", 798, "__init__", "_verify_param_shape_across_processes(self.process_group, parameters)"),
                                      ("/opt/conda/lib/python{py}/site-packages/torch/distributed/utils.py", 269, "_verify_param_shape_across_processes", "return dist._verify_params_across_processes(process_group, tensors, logger)")]), style, bad)
    L.append(prefix(style, bad, Ev("torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3")))
    L.append(prefix(style, bad, "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. "))
    L.append(prefix(style, bad, "Last error:"))
    L.append(prefix(style, bad, "socketStartConnect: Connect to 10.0.%d.%d<%d> failed : Software caused connection abort" % (R.randint(0, 9), R.randint(2, 250), R.randint(30000, 60000))))
    # evidence: the NCCL WARN came first; accept both
    L = [Alt(x) if isinstance(x, Ev) else x for x in L]
    i = next(i for i, x in enumerate(L) if "socketStartConnect" in x)
    L[i] = Ev(L[i])
    add("nccl", L, 1, "composed; socketStartConnect / ncclSystemError wording from NVIDIA/nccl#975 and NVIDIA/nccl-tests#166; DistBackendError line from NVIDIA/nccl#1928", gpu, bad)


def sc_ucx(style="mpi"):
    gpu = pick(GPUS); host = pick(HOSTS); nr = 16
    L = ["Data for JOB [%d,1] offset 0 Total slots allocated 16" % R.randint(10000, 60000)] + smi(gpu, 1)
    L += ["[1,%d]<stdout>:Horovod rank %d/%d local_rank %d" % (r, r, nr, r % 8) for r in range(nr)]
    L += train_lines(body_n(), "mpi", ranks=(0,), kind="plain")
    bad = R.randrange(nr); pid = R.randint(10000, 90000)
    L.append(Ev("[1,%d]<stderr>:[%s:%d:0:%d] ib_mlx5_log.c:171  Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)" % (bad, host, pid, pid)))
    L.append("[1,%d]<stderr>:[%s:%d:0:%d] ib_mlx5_log.c:171  RC QP 0x%x wqe[%d]: SEND --e [inl len 10] [rqpn 0x%x dlid=%d sl=0 port=1 src_path_bits=0]" % (bad, host, pid, pid, R.randint(0x1000, 0xffff), R.randint(0, 9999), R.randint(0x1000, 0xffff), R.randint(1, 999)))
    L.append("[1,%d]<stderr>:==== backtrace (tid:  %d) ====" % (bad, pid))
    L.append("[1,%d]<stderr>: 0  /usr/lib/libucs.so.0(ucs_handle_error+0x2e4) [0x%x]" % (bad, R.getrandbits(47)))
    L.append("[1,%d]<stderr>: 1  /usr/lib/libucs.so.0(ucs_fatal_error_message+0xc2) [0x%x]" % (bad, R.getrandbits(47)))
    L.append("[1,%d]<stderr>:=================================" % bad)
    L.append("--------------------------------------------------------------------------")
    L.append("mpirun noticed that process rank %d with PID %d on node %s exited on signal 6 (Aborted)." % (bad, pid, host))
    L.append("--------------------------------------------------------------------------")
    add("nccl", L, 134, "composed; UCX 'Transport retry count exceeded' line from openucx/ucx issue threads (ib_mlx5_log.c); Open MPI --tag-output prefixes and 'mpirun noticed' text from open-mpi/ompi help-mpirun.txt", gpu, bad)


def sc_gloo(style):
    gpu = pick(GPUS); host = pick(HOSTS); py = pick(PYVER); u = user(); nr = 4
    L = ["torchrun --nproc-per-node %d train_cpu_offload.py --backend gloo" % nr] + train_lines(body_n(), style, ranks=(0,), kind="plain")
    bad = R.randrange(nr)
    L += pyframes(py, frames_for(u, [("/opt/conda/lib/python{py}/site-packages/torch/distributed/distributed_c10d.py", 3252, "all_reduce", "work.wait()")]), style, bad)
    L.append(prefix(style, bad, Ev("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:537] Read error [10.%d.%d.%d]:%d: Connection reset by peer. This is typically caused by a remote worker hanging or bugs in the application. Check the logs of the remote worker for more details." % (R.randint(0, 9), R.randint(0, 250), R.randint(2, 250), R.randint(30000, 60000)))))
    add("nccl", L, 1, "composed; gloo pair.cc 'Read error ... Connection reset by peer' wording seen in a torchrun/gloo run on this machine (torch 2.13 CPU; rank SIGKILLed, that log left out of the set as its cause is ambiguous), torchrun layout", gpu, bad)


def sc_illegal_chain(style, srun=True):
    """illegal memory access -> watchdog terminate DistBackendError -> abort"""
    gpu = pick(GPUS); py = pick(PYVER); host = pick(HOSTS); nr = 8
    jobid = R.randint(100000, 999999)
    L = slurm_head(jobid, host, 1, nr, gpu) + smi(gpu, 2)
    init, pid0 = nccl_init(host, nr, style=style)
    L += init + train_lines(body_n(), style, ranks=(0,), kind=pick(["hf", "megatron"]))
    bad = R.randrange(nr)
    msg = "[PG ID 0 PG GUID 0(default_pg) Rank %d] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered" % bad
    L.append(prefix(style, bad, Ev("[rank%d]:[E%s ProcessGroupNCCL.cpp:1896] %s" % (bad, glog_ts(), msg))))
    L.append(prefix(style, bad, "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."))
    L.append(prefix(style, bad, "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"))
    L.append(prefix(style, bad, "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."))
    L.append(prefix(style, bad, ""))
    L.append(prefix(style, bad, "Exception raised from c10_cuda_check_implementation at /pytorch/c10/cuda/CUDAException.cpp:43 (most recent call first):"))
    L += cpp_frames(py, 8, style, bad)
    L.append(prefix(style, bad, "terminate called after throwing an instance of 'c10::DistBackendError'"))
    L.append(prefix(style, bad, "  what():  %s" % msg))
    L.append(prefix(style, bad, "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."))
    for r in [x for x in range(nr) if x != bad][:2]:
        L.append(prefix(style, r, "[rank%d]:[E%s ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600013 milliseconds before timing out." % (r, glog_ts(), r, R.randint(100, 9999))))
    if srun:
        L.append("srun: error: %s: task %d: Aborted (core dumped)" % (host, bad))
        L.append("slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (jobid, host, ts()))
        code = 134
    else:
        L.append("E%s %d site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: -6) local_rank: %d (pid: %d) of binary: /opt/conda/bin/python3" % (glog_ts(), pid0 - 9, bad, pid0 + bad))
        code = 1
    add("cuda_runtime", L, code, "composed; watchdog 'CUDA error: an illegal memory access' + terminate DistBackendError from pytorch/pytorch#152780, #180280, bytedance/flux#40; srun abort lines (SchedMD slurm)", gpu, bad)


def sc_cuda_single(kind):
    gpu = pick(GPUS); py = pick(PYVER); u = user()
    L = ["python train.py --cfg configs/%s.yaml" % pick(["detr_r50", "vit_b16", "unet_2d", "llama_ft"])] + smi(gpu, 1) + warns(py, 2)
    L += train_lines(body_n(), None, kind=pick(["tqdm", "plain", "hf"]))
    fr = frames_for(u)
    if kind == "dsa":
        for t in range(R.randint(2, 6)):
            s = "../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [%d,0,0], thread: [%d,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed." % (R.randint(0, 500), 32 + t)
            L.append(Ev(s) if t == 0 else s)
        L += pyframes(py, fr + [("/opt/conda/lib/python{py}/site-packages/torch/nn/modules/sparse.py", 163, "forward", "return F.embedding(")])
        L.append(Alt("RuntimeError: CUDA error: device-side assert triggered"))
        L += ["CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1", "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]
        prov = "IndexKernel.cu assertion and 'device-side assert triggered' text from pytorch aten/src/ATen/native/cuda/IndexKernel.cu and c10/cuda/CUDAException.cpp"
    elif kind == "cublas":
        L += pyframes(py, fr + [("/opt/conda/lib/python{py}/site-packages/torch/nn/modules/linear.py", 116, "forward", "return F.linear(input, self.weight, self.bias)")])
        L.append(Ev("RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"))
        prov = "cuBLAS error text from pytorch aten/src/ATen/cuda/CUDABlas.cpp (TORCH_CUDABLAS_CHECK)"
    elif kind == "nokernel":
        L.insert(2, Alt("/opt/conda/lib/python%s/site-packages/torch/cuda/__init__.py:209: UserWarning: " % py))
        L.insert(3, "%s with CUDA capability sm_90 is not compatible with the current PyTorch installation." % gpu[0])
        L.insert(4, "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86.")
        L.insert(5, "If you want to use the %s GPU with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/" % gpu[0])
        L += pyframes(py, fr)
        L.append(Ev("RuntimeError: CUDA error: no kernel image is available for execution on the device"))
        L += ["CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1."]
        prov = "sm capability warning from torch/cuda/__init__.py (_check_capability); 'no kernel image' CUDA error string (cudaErrorNoKernelImageForDevice)"
    elif kind == "driver":
        L = L[:1] + warns(py, 1)
        L += pyframes(py, fr[:1] + [("/opt/conda/lib/python{py}/site-packages/torch/cuda/__init__.py", 298, "_lazy_init", "torch._C._cuda_init()")])
        L.append(Ev("RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver."))
        prov = "driver too old message from pytorch aten/src/ATen/cuda/detail/CUDAHooks.cpp"
    elif kind == "cudnn":
        L += pyframes(py, fr + [("/opt/conda/lib/python{py}/site-packages/torch/nn/modules/conv.py", 456, "_conv_forward", "return F.conv2d(input, weight, bias, self.stride,")])
        L.append(Ev("RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR"))
        prov = "cuDNN status string from pytorch aten/src/ATen/cudnn/Exceptions.h"
    else:  # illegal single
        L += pyframes(py, fr + [("/opt/conda/lib/python{py}/site-packages/torch/_tensor.py", 522, "backward", "torch.autograd.backward(")])
        L.append(Ev("RuntimeError: CUDA error: an illegal memory access was encountered"))
        L += ["CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1", "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]
        prov = "illegal memory access text from vllm-project/vllm#5537, c10/cuda/CUDAException.cpp"
    add("cuda_runtime", L, 1, "composed; " + prov, gpu)


def sc_xid(xid, style):
    """ranks time out; the cause is only in an epilogue/dmesg Xid line"""
    gpu = pick(GPUS[:4] + GPUS[7:]); py = pick(PYVER); host = pick(HOSTS); nr = 8
    jobid = R.randint(100000, 999999)
    L = slurm_head(jobid, host, 1, nr, gpu) + smi(gpu, 2)
    init, pid0 = nccl_init(host, nr, style=style)
    L += init + train_lines(body_n(), style, ranks=(0,), kind=pick(["megatron", "hf", "lightning"]))
    seq = R.randint(1000, 80000)
    order = list(range(nr)); R.shuffle(order)
    for r in order[:R.randint(3, 7)]:
        L.append(prefix(style, r, "[rank%d]:[E%s ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=%d, Timeout(ms)=1800000) ran for 18000%02d milliseconds before timing out." % (r, glog_ts(), r, seq, 9801523, 9801523, R.randint(10, 99))))
        L.append(prefix(style, r, "[rank%d]:[E%s ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank %d] Exception (either an error or timeout) detected by watchdog at work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d." % (r, glog_ts(), r, seq, seq + 2, seq - 1)))
    L.append("srun: error: %s: tasks 0-%d: Aborted (core dumped)" % (host, nr - 1))
    L.append("==== epilogue: %s job %d ====" % (host, jobid))
    L.append("collecting kernel messages (dmesg -T | tail)")
    bus = "0000:%02x:00" % pick([0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb])
    d = "[%s]" % pick(["Sat May 11 03:12:44 2024", "Tue Feb 20 11:40:02 2024", "Thu Aug  1 22:05:17 2024", "Mon Oct 14 07:19:55 2024"])
    L.append("%s mlx5_core 0000:%02x:00.0: mlx5_fw_tracer_handle_traces:737:(pid 0): FW tracer event" % (d, R.randint(0x10, 0xf0)))
    p = pid0 + R.randrange(nr)
    if xid == 79:
        L.append(Ev("%s NVRM: Xid (PCI:%s): 79, pid=%d, name=python, GPU has fallen off the bus." % (d, bus, p)))
        L.append("%s NVRM: GPU %s.0: GPU has fallen off the bus." % (d, bus))
        L.append("%s NVRM: A GPU crash dump has been created. If possible, please run" % d)
        L.append("%s NVRM: nvidia-bug-report.sh as root to collect this data before" % d)
        L.append("%s NVRM: the NVIDIA kernel module is unloaded." % d)
        prov = "Xid 79 lines from NVIDIA/NVSentinel#155 and leptonai/gpud#1209"
    elif xid == 48:
        L.append(Ev("%s NVRM: Xid (PCI:%s): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x%x partition 7, subpartition 1." % (d, bus, R.getrandbits(35))))
        L.append("%s NVRM: Xid (PCI:%s): 64, pid='<unknown>', name=<unknown>, Dynamic Page Retirement: Blacklisting failed.  Page should have been blacklisted on boot(0x%016x)." % (d, bus, R.getrandbits(28)))
        prov = "Xid 48/64 lines from NVIDIA/gpu-operator#1146"
    elif xid == 119:
        L.append(Ev("%s NVRM: Xid (PCI:%s): 119, pid=%d, name=python, Timeout after 6s of waiting for RPC response from GPU%d GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801702 0x4)." % (d, bus, p, R.randint(0, 7), )))
        L.append("%s NVRM: GPU%d GSP RPC buffer contains function 76 (GSP_RM_CONTROL) and data 0x0000000020801702 0x0000000000000004." % (d, R.randint(0, 7)))
        prov = "Xid 119 GSP RPC timeout wording from NVIDIA/open-gpu-kernel-modules issue threads"
    elif xid == 74:
        L.append(Ev("%s NVRM: Xid (PCI:%s): 74, pid=%d, name=python, NVLink: fatal error detected on link 11(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)" % (d, bus, p)))
        prov = "Xid 74 NVLink wording from NVIDIA/open-gpu-kernel-modules and leptonai/gpud xid catalog threads"
    else:  # 95 uncontained
        L.append(Ev("%s NVRM: Xid (PCI:%s): 95, pid=%d, name=python, Uncontained: FBHUB. RST: Yes, D-RST: No" % (d, bus, p)))
        prov = "Xid 95 uncontained ECC wording from leptonai/gpud xid catalog / NVIDIA Xid docs threads"
    L.append("epilogue: draining node %s (reason: gpu xid)" % host)
    add("gpu_hardware", L, 134, "composed; watchdog timeout lines from XPixelGroup/BasicSR#737; " + prov, gpu)


def sc_ecc_runtime(style):
    gpu = pick(GPUS[:4]); py = pick(PYVER); u = user()
    L = ["python -m torch.distributed.run --nproc-per-node 8 pretrain.py"] + smi(gpu, 1) + train_lines(body_n(), style, ranks=(0,), kind="megatron")
    bad = R.randrange(8)
    L += pyframes(py, frames_for(u), style, bad)
    L.append(prefix(style, bad, Ev("RuntimeError: CUDA error: uncorrectable ECC error encountered")))
    L.append(prefix(style, bad, "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."))
    L.append(prefix(style, bad, "For debugging consider passing CUDA_LAUNCH_BLOCKING=1."))
    add("gpu_hardware", L, 1, "composed; cudaErrorECCUncorrectable string 'uncorrectable ECC error encountered' (CUDA runtime API docs) in torch CUDA error format", gpu, bad)


def sc_cuda_oom(style, multi):
    gpu = pick(GPUS); py = pick(PYVER); u = user()
    nr = 8 if multi else 1
    L = ["accelerate launch --num_processes %d finetune.py --bf16 --per_device_train_batch_size %d" % (nr, pick([8, 16, 32]))] + smi(gpu, 1) + warns(py, 3)
    L += train_lines(body_n(), style if multi else None, ranks=(0,), kind=pick(["hf", "tqdm"]))
    bad = R.randrange(nr)
    tot = gpu[3] / 1024 * 0.966
    L += pyframes(py, frames_for(u, [("/opt/conda/lib/python{py}/site-packages/torch/nn/functional.py", 2264, "softmax", "ret = input.softmax(dim)")]), style if multi else None, bad)
    s = "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU %d has a total capacity of %.2f GiB of which %.2f MiB is free. Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and %.2f MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)" % (R.uniform(0.5, 8), bad % 8, tot, R.uniform(10, 900), tot - 0.5, tot - 2.1, R.uniform(100, 900))
    L.append(prefix(style if multi else None, bad, Ev(s)))
    if multi:
        L.append("W%s %d site-packages/torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM" % (glog_ts(), R.randint(1000, 9000), R.randint(10000, 90000)))
        L.append("E%s %d site-packages/torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: 1) local_rank: %d (pid: %d) of binary: /opt/conda/bin/python" % (glog_ts(), R.randint(1000, 9000), bad, R.randint(10000, 90000)))
    add("cuda_oom", L, 1, "composed; OutOfMemoryError text from pytorch c10/cuda/CUDACachingAllocator.cpp (2.4+ wording)", gpu, bad if multi else None)


def sc_cuda_oom_old():
    gpu = pick(GPUS); py = pick(PYVER); u = user()
    L = ["python train.py"] + smi(gpu, 1) + train_lines(body_n(), None, kind="plain")
    L += pyframes(py, frames_for(u))
    L.append(Ev("RuntimeError: CUDA out of memory. Tried to allocate 1.53 GiB (GPU 0; 31.75 GiB total capacity; 28.90 GiB already allocated; 1.07 GiB free; 29.61 GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF"))
    add("cuda_oom", L, 1, "composed; pre-2.0 CUDACachingAllocator OOM wording (pytorch 1.12 c10/cuda/CUDACachingAllocator.cpp)", gpu)


def lsf_report(reason_lines, code_line, ok=False):
    host = pick(HOSTS)
    usr = user()
    out = ["Sender: LSF System <lsfadmin@%s>" % host,
           "Subject: Job %d: <train_%s> in cluster <hpc> %s" % (R.randint(100000, 999999), pick(["bert", "gpt", "resnet"]), "Done" if ok else "Exited"), "",
           "Job <train> was submitted from host <login1> by user <%s> in cluster <hpc> at Mon Mar 11 09:12:44 2024" % usr,
           "Job was executed on host(s) <4*%s>, in queue <gpu>, as user <%s> in cluster <hpc> at Mon Mar 11 09:13:02 2024" % (host, usr),
           "</home/%s> was used as the home directory." % usr, "</home/%s/proj> was used as the working directory." % usr,
           "Started at Mon Mar 11 09:13:02 2024", "Terminated at Tue Mar 12 09:13:05 2024", "Results reported at Tue Mar 12 09:13:05 2024", "",
           "Your job looked like:", "", "------------------------------------------------------------", "# LSBATCH: User input",
           "#BSUB -q gpu", "#BSUB -gpu \"num=4\"", "#BSUB -W 24:00", "python train.py --config cfg.yaml", "------------------------------------------------------------", ""]
    out += reason_lines + [code_line, "", "Resource usage summary:", "",
                           "    CPU time :                                   %d.00 sec." % R.randint(10000, 300000),
                           "    Max Memory :                                 %d MB" % R.randint(10000, 90000),
                           "    Average Memory :                             %d.00 MB" % R.randint(5000, 9000),
                           "    Total Requested Memory :                     -", "    Delta Memory :                               -",
                           "    Max Swap :                                   -", "    Max Processes :                              %d" % R.randint(5, 40),
                           "    Max Threads :                                %d" % R.randint(50, 400),
                           "    Run time :                                   %d sec." % R.randint(1000, 90000),
                           "    Turnaround time :                            %d sec." % R.randint(1000, 90000), "",
                           "The output (if any) follows:", ""]
    return out


def sc_lsf(kind):
    gpu = pick(GPUS); py = pick(PYVER)
    if kind == "runlimit":
        head = lsf_report([Ev("TERM_RUNLIMIT: job killed after reaching LSF run time limit.")], "Exited with exit code 140.")
        mode, code = "walltime", 140
    elif kind == "preempt":
        head = lsf_report([Ev("TERM_PREEMPT: job killed after preemption.")], "Exited with exit code 130.")
        mode, code = "preempted", 130
    elif kind == "owner":
        head = lsf_report([Ev("TERM_OWNER: job killed by owner.")], "Exited with exit code 130.")
        mode, code = "interrupted", 130
    elif kind == "memlimit":
        head = lsf_report([Ev("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.")], "Exited with exit code 137.")
        mode, code = "oom_killer", 137
    else:
        head = lsf_report(["Successfully completed."], "", ok=True)
        mode, code = "success", 0
    body = smi(gpu, 1) + warns(py, 3) + train_lines(body_n(), None, kind=pick(["hf", "plain", "tqdm"]))
    if mode == "success":
        body += ["Training completed. Do not forget to share your model on huggingface.co/models =)", "saved final checkpoint to ./out/final"]
        head = [h for h in head if h != ""] if False else head
    add(mode, head + body, code, "composed; LSF job report layout and TERM_* reasons from IBM Spectrum LSF docs (hpc.dtu.dk lsf931 termination_reasons_lsf; Platform LSF 7.3 reference)", gpu)


def sc_slurm_end(kind, style):
    gpu = pick(GPUS); py = pick(PYVER); host = pick(HOSTS); jobid = R.randint(100000, 999999)
    nr = pick([1, 4, 8])
    L = slurm_head(jobid, host, 1, nr, gpu) + smi(gpu, min(nr, 2)) + warns(py, 2)
    if nr > 1:
        init, _ = nccl_init(host, nr, style=style)
        L += init
    L += train_lines(body_n(), style if nr > 1 else None, ranks=(0,), kind=pick(["hf", "megatron", "tqdm", "lightning"]))
    t = ts()
    if kind == "time":
        L.append(Ev("slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (jobid, host, t)))
        L.append("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
        L.append(Alt("slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (jobid, host, t)))
        mode, code = "walltime", 143
    elif kind == "preempt":
        L.append(Ev("slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (jobid, host, t)))
        L.append("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
        mode, code = "preempted", 143
    elif kind == "nodefail":
        L.append("srun: error: Node failure on %s" % host)
        L.append(Ev("slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***" % (jobid, host, t)))
        L = [Alt(x) if x.startswith("srun: error: Node failure") else x for x in L]
        mode, code = "preempted", 143
    elif kind == "scancel":
        L.append(Ev("slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s ***" % (jobid, host, t)))
        L.append("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
        L.append("srun: got SIGCONT")
        L.append("srun: forcing job termination")
        mode, code = "interrupted", 143
    elif kind == "pbs":
        L = ["----------------------------------------", "Begin PBS Prologue %s" % t, "Job ID:       %d.pbs01" % jobid, "Username:     %s" % user(), "Nodes:        %s" % host, "End PBS Prologue", "----------------------------------------"] + L[6:]
        L.append(Ev("=>> PBS: job killed: walltime %d exceeded limit 172800" % (172800 + R.randint(1, 60))))
        mode, code = "walltime", 143
    elif kind == "oomkill":
        L.append(Ev("slurmstepd: error: Detected 1 oom-kill event(s) in StepId=%d.batch. Some of your processes may have been killed by the cgroup out-of-memory handler." % jobid))
        mode, code = "oom_killer", 137
        L.insert(len(L) - 1, "/var/spool/slurmd/job%d/slurm_script: line 27: %d Killed                  python train.py --data /scratch/%s/shards" % (jobid, R.randint(1000, 99999), user()))
    add(mode, L, code, "composed; slurmstepd CANCELLED/oom-kill messages from SchedMD slurm src/slurmd/slurmstepd (req.c, task/cgroup); PBS walltime message from OpenPBS/Torque job-killed text", gpu, None)


def sc_dmesg_oom():
    gpu = pick(GPUS); py = pick(PYVER); u = user(); host = pick(HOSTS)
    L = ["python train.py --num_workers 16"] + smi(gpu, 1) + warns(py, 2) + train_lines(body_n(), None, kind="tqdm")
    wp = R.randint(10000, 90000)
    L += pyframes(py, frames_for(u, [("/opt/conda/lib/python{py}/site-packages/torch/utils/data/dataloader.py", 1133, "_try_get_data", "data = self._data_queue.get(timeout=timeout)")]))
    L.append("  File \"/opt/conda/lib/python%s/site-packages/torch/utils/data/_utils/signal_handling.py\", line 66, in handler" % py)
    L.append("    _error_if_any_worker_fails()")
    L.append(Alt("RuntimeError: DataLoader worker (pid %d) is killed by signal: Killed. " % wp))
    L.append("--- node health (dmesg) ---")
    L.append(Ev("[%d.%06d] Out of memory: Killed process %d (pt_data_worker) total-vm:%dkB, anon-rss:%dkB, file-rss:%dkB, shmem-rss:%dkB, UID:%d pgtables:%dkB oom_score_adj:0" % (R.randint(100000, 900000), R.randint(0, 999999), wp, R.randint(10 ** 7, 9 * 10 ** 7), R.randint(10 ** 7, 6 * 10 ** 7), R.randint(10 ** 4, 10 ** 5), R.randint(10 ** 4, 10 ** 5), R.randint(1000, 9000), R.randint(10 ** 4, 10 ** 5))))
    add("oom_killer", L, 1, "composed; DataLoader 'is killed by signal: Killed' from torch/utils/data/_utils/signal_handling.py; kernel 'Out of memory: Killed process' from linux mm/oom_kill.c", gpu)


def sc_disk(kind):
    gpu = pick(GPUS); py = pick(PYVER); u = user()
    L = ["python train.py --output_dir /scratch/%s/run%d" % (u, R.randint(1, 99))] + smi(gpu, 1) + warns(py, 2) + train_lines(body_n(), None, kind=pick(["hf", "plain"]))
    if kind == "iostream":
        L.append("Saving model checkpoint to /scratch/%s/run/checkpoint-%d" % (u, R.randint(1000, 9000)))
        L += pyframes(py, frames_save(u, [("/opt/conda/lib/python{py}/site-packages/torch/serialization.py", 652, "save", "_save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)"),
                                          ("/opt/conda/lib/python{py}/site-packages/torch/serialization.py", 886, "_save", "zip_file.write_record(name, storage, num_bytes)")]))
        L.append(Ev("RuntimeError: [enforce fail at inline_container.cc:764] . PytorchStreamWriter failed writing file data/%d: file write failed" % R.randint(0, 300)))
        L.append("")
        L.append("During handling of the above exception, another exception occurred:")
        L.append("")
        L += pyframes(py, frames_save(u, [("/opt/conda/lib/python{py}/site-packages/torch/serialization.py", 651, "save", "with _open_zipfile_writer(f) as opened_zipfile:"),
                                          ("/opt/conda/lib/python{py}/site-packages/torch/serialization.py", 499, "__exit__", "self.file_like.write_end_of_file()")]))
        L.append("RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos %d vs %d" % (R.randint(10 ** 8, 10 ** 9), R.randint(10 ** 8, 10 ** 9)))
        L.append("Exception ignored in: <_io.TextIOWrapper name='<stdout>' mode='w' encoding='utf-8'>")
        L.append(Alt("OSError: [Errno 28] No space left on device"))
        prov = "PytorchStreamWriter/unexpected pos wording from SWivid/F5-TTS#458, innnky/so-vits-svc#46; ENOSPC OSError"
    elif kind == "quota":
        L += pyframes(py, frames_for(u, [("/opt/conda/lib/python{py}/site-packages/transformers/trainer.py", 2926, "_save_checkpoint", "self.save_model(output_dir, _internal_call=True)"),
                                          ("/opt/conda/lib/python{py}/site-packages/safetensors/torch.py", 286, "save_file", "serialize_file(_flatten(tensors), filename, metadata=metadata)")]))
        L.append(Ev("OSError: [Errno 122] Disk quota exceeded: '/home/%s/run/checkpoint-%d/model.safetensors'" % (u, R.randint(100, 900))))
        prov = "EDQUOT OSError text (errno 122 'Disk quota exceeded', glibc strerror)"
    elif kind == "tar":
        L.append("Training complete. Archiving checkpoints to /scratch/%s/archive.tar" % u)
        L.append(Ev("tar: /scratch/%s/archive.tar: Wrote only 4096 of 10240 bytes" % u))
        L.append("tar: Error is not recoverable: exiting now")
        L.append("Filesystem                 Size  Used Avail Use% Mounted on")
        L.append(Alt("lustre01@o2ib:/scratch     2.0P  2.0P     0 100% /scratch"))
        prov = "GNU tar short-write wording (captured on this machine, see captured/disk_tar_1.log); df output"
    else:  # cp
        L.append("copying best checkpoint to shared storage")
        L.append(Ev("cp: error writing '/shared/models/%s/best.pt': No space left on device" % u))
        prov = "coreutils cp ENOSPC wording"
    add("disk_full", L, 1, "composed; " + prov, gpu)


def sc_simple(mode):
    gpu = pick(GPUS); py = pick(PYVER); u = user(); style = pick([None, None, "rank", "label", "bracket", "RANK"])
    multi = style is not None
    nr = 4 if multi else 1
    bad = R.randrange(nr) if multi else 0
    L = ["srun python train.py" if style == "label" else "python train.py"] + smi(gpu, 1) + warns(py, 2)
    L += train_lines(body_n(), style, ranks=(0,), kind=pick(["hf", "plain", "tqdm", "lightning"]))
    fr = frames_for(u)
    P = lambda s: prefix(style, bad, s)
    code = 1
    if mode == "device_mismatch":
        L += [P(x) for x in pyframes(py, fr)]
        L.append(P(Ev("RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:%d and cpu! (when checking argument for argument mat1 in method wrapper_CUDA_addmm)" % bad)))
        prov = "pytorch aten device check wording (common issue threads)"
    elif mode == "nan_loss":
        v = pick(["fairseq", "hfnan", "anomaly"])
        if v == "fairseq":
            L.append(P("| WARNING: overflow detected, setting loss scale to: 0.00048828125"))
            L += [P(x) for x in pyframes(py, fr)]
            L.append(P(Ev("FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering the learning rate, using gradient clipping or increasing the batch size.")))
            prov = "fairseq/optim/dynamic_loss_scaler.py FloatingPointError text"
        elif v == "hfnan":
            L.append(P(Ev("{'loss': nan, 'grad_norm': nan, 'learning_rate': 1.2e-05, 'epoch': 1.31}")))
            L.append(P("{'loss': nan, 'grad_norm': nan, 'learning_rate': 1.2e-05, 'epoch': 1.32}"))
            L += [P(x) for x in pyframes(py, fr)]
            L.append(P(Alt("RuntimeError: Function 'MulBackward0' returned nan values in its 0th output.")))
            prov = "HF Trainer log dict; autograd anomaly wording (captured variant in captured/nan_anomaly.log)"
        else:
            L.append(P(Ev("Loss is nan, stopping training")))
            L.append(P("{'loss_ce': nan, 'class_error': 100.0, 'loss_bbox': nan}"))
            prov = "facebookresearch/detr engine.py 'Loss is {}, stopping training'"
    elif mode == "segfault":
        v = pick(["dl", "sigbus", "srun"])
        if v == "dl":
            L.append(P(Ev("ERROR: Unexpected segmentation fault encountered in worker.")))
            L += [P(x) for x in pyframes(py, fr + [("/opt/conda/lib/python{py}/site-packages/torch/utils/data/_utils/signal_handling.py", 67, "handler", "_error_if_any_worker_fails()")])]
            L.append(P("RuntimeError: DataLoader worker (pid %d) is killed by signal: Segmentation fault. " % R.randint(1000, 99999)))
            prov = "torch/csrc/DataLoader.cpp 'Unexpected segmentation fault encountered in worker.'"
        elif v == "sigbus":
            L.append(P(Ev("ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).")))
            L += [P(x) for x in pyframes(py, fr)]
            L.append(P("RuntimeError: DataLoader worker (pid %d) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit." % R.randint(1000, 99999)))
            prov = "torch/csrc/DataLoader.cpp bus error text"
        else:
            L.append(P(Ev("Fatal Python error: Segmentation fault")))
            L.append(P(""))
            L.append(P("Thread 0x%016x (most recent call first):" % R.getrandbits(47)))
            L.append(P('  File "/opt/conda/lib/python%s/site-packages/torch/nn/modules/conv.py", line 456 in _conv_forward' % py))
            L.append("srun: error: %s: task %d: Segmentation fault (core dumped)" % (pick(HOSTS), bad))
            code = 139
            prov = "CPython faulthandler output (captured variant captured/segv_2.log); srun task signal message"
    elif mode == "native_abort":
        v = pick(["glog", "c10"])
        if v == "glog":
            L.append(P(Ev("F%s %d record_reader.cc:214] Check failed: header.size() == kHeaderSize (12 vs. 16) " % (glog_ts(), R.randint(1000, 99999)))))
            L.append(P("*** Check failure stack trace: ***"))
            L.append(P("    @     0x7f3c2a1b4c3d  google::LogMessage::Fail()"))
            L.append(P("    @     0x7f3c2a1b8b6c  google::LogMessage::SendToLog()"))
            L.append(P("    @     0x7f3c2a1b4a1f  google::LogMessageFatal::~LogMessageFatal()"))
            L.append("Aborted (core dumped)")
            code = 134
            prov = "glog CHECK failure format (google/glog logging.cc)"
        else:
            L.append(P(Ev("terminate called after throwing an instance of 'c10::Error'")))
            L.append(P("  what():  [enforce fail at inline_container.cc:222] . file not found: archive/data.pkl"))
            L.append(P("Exception raised from getRecordID at ../caffe2/serialize/inline_container.cc:222 (most recent call first):"))
            L.append("Aborted (core dumped)")
            code = 134
            prov = "libstdc++ terminate message + caffe2 inline_container getRecordID text (pytorch issue threads)"
    elif mode == "permission":
        L += [P(x) for x in pyframes(py, fr)]
        L.append(P(Ev("PermissionError: [Errno 13] Permission denied: '/datasets/shared/imagenet/train/n01440764/.cache_index'")))
        prov = "CPython PermissionError (captured variant captured/perm_python.log)"
    elif mode == "file_not_found":
        L += [P(x) for x in pyframes(py, fr)]
        L.append(P(Ev("FileNotFoundError: [Errno 2] No such file or directory: '/scratch/%s/data/tokenized/train_%05d.bin'" % (u, R.randint(0, 999)))))
        prov = "CPython FileNotFoundError"
    elif mode == "missing_module":
        v = pick(["so", "mod", "flash"])
        L = L[:1] + [P(w) for w in warns(py, 1)]
        top = ("/home/%s/proj/train.py" % u, R.randint(3, 20), "<module>", "")
        if v == "so":
            L += [P(x) for x in pyframes(py, [top[:3] + ("import torch",), ("/opt/conda/lib/python{py}/site-packages/torch/__init__.py", 237, "<module>", "from torch._C import *  # noqa: F403")])]
            L.append(P(Ev("ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory")))
        elif v == "mod":
            L += [P(x) for x in pyframes(py, [top[:3] + ("import deepspeed",)])]
            L.append(P(Ev("ModuleNotFoundError: No module named 'deepspeed'")))
        else:
            L += [P(x) for x in pyframes(py, [top[:3] + ("from flash_attn import flash_attn_func",), ("/opt/conda/lib/python{py}/site-packages/flash_attn/__init__.py", 3, "<module>", "from flash_attn.flash_attn_interface import ("), ("/opt/conda/lib/python{py}/site-packages/flash_attn/flash_attn_interface.py", 10, "<module>", "import flash_attn_2_cuda as flash_attn_cuda")])]
            L.append(P(Ev("ImportError: /opt/conda/lib/python%s/site-packages/flash_attn_2_cuda.cpython-%s-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi" % (py, py.replace(".", "")))))
        prov = "CPython import errors; flash-attn undefined symbol from Dao-AILab/flash-attention issue threads"
    elif mode == "div_zero":
        L += [P(x) for x in pyframes(py, fr)]
        L.append(P(Ev("ZeroDivisionError: float division by zero")))
        prov = "CPython ZeroDivisionError"
    elif mode == "traceback":
        L += [P(x) for x in pyframes(py, fr)]
        L.append(P(Ev(pick(["KeyError: 'input_ids'", "TypeError: forward() got an unexpected keyword argument 'labels'", "ValueError: too many values to unpack (expected 2)", "AttributeError: 'DataParallel' object has no attribute 'generate'"]))))
        prov = "CPython exception wording"
    elif mode == "assertion":
        L += [P(x) for x in pyframes(py, fr)]
        L.append(P(Ev(pick(["AssertionError: Torch not compiled with CUDA enabled", "AssertionError: hidden_size must be divisible by num_heads", "AssertionError"]))))
        prov = "torch/cuda/__init__.py _lazy_init assertion; CPython AssertionError"
    elif mode == "runtime_error":
        L += [P(x) for x in pyframes(py, fr)]
        L.append(P(Ev(pick(["RuntimeError: Error(s) in loading state_dict for ResNet:", "RuntimeError: shape '[16, -1, 12, 64]' is invalid for input of size 786431", "RuntimeError: stack expects each tensor to be equal size, but got [3, 224, 224] at entry 0 and [3, 224, 199] at entry 5"]))))
        if "state_dict" in L[-1]:
            L.append(P('\tsize mismatch for fc.weight: copying a param with shape torch.Size([1000, 2048]) from checkpoint, the shape in current model is torch.Size([10, 2048]).'))
        prov = "pytorch RuntimeError wording (module.py load_state_dict, view, collate stack)"
    elif mode == "ram_oom":
        L += [P(x) for x in pyframes(py, fr)]
        L.append(P(Ev("RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: can't allocate memory: you tried to allocate %d bytes. Error code 12 (Cannot allocate memory)" % (R.randint(2, 64) * 2 ** 30))))
        prov = "pytorch c10/core/impl/alloc_cpu.cpp DefaultCPUAllocator message"
    elif mode == "exec_failure":
        L = L[:3]
        v = pick(["noent", "perm"])
        if v == "noent":
            L.append(Ev("/var/spool/slurmd/job%d/slurm_script: line 14: deepspeed: command not found" % R.randint(10000, 99999)))
            code = 127
        else:
            L.append(Ev("/var/spool/slurmd/job%d/slurm_script: line 21: ./run_pretrain.sh: Permission denied" % R.randint(10000, 99999)))
            code = 126
        prov = "bash command-not-found / cannot-execute messages (captured variants captured/exec127.log)"
    elif mode == "unknown":
        L.append(Ev("srun: error: %s: task %d: Exited with exit code 1" % (pick(HOSTS), bad)))
        L.append("srun: launch/slurm: _step_signal: Terminating StepId=%d.0" % R.randint(10000, 99999))
        prov = "srun exit status lines with no error from the program"
    add(mode, L, code, "composed; " + prov, gpu, bad if (multi and mode != "unknown" and mode != "exec_failure") else None)


def sc_success(kind):
    gpu = pick(GPUS); py = pick(PYVER); host = pick(HOSTS)
    style = pick([None, "rank", "label", "mpi", "bracket"])
    L = slurm_head(R.randint(100000, 999999), host, 1, 8, gpu) + smi(gpu, 2)
    if kind == "foam":
        L += ["/*---------------------------------------------------------------------------*\\",
              "  =========                 |",
              "  \\\\      /  F ield         | OpenFOAM: The Open Source CFD Toolbox",
              "   \\\\    /   O peration     | Version:  v2312",
              "    \\\\  /    A nd           | Website:  www.openfoam.com",
              "     \\\\/     M anipulation  |",
              "\\*---------------------------------------------------------------------------*/",
              "Build  : _f62fb8a1-20231221 OPENFOAM=2312 version=v2312",
              "Exec   : simpleFoam -parallel",
              "sigFpe : Enabling floating point exception trapping (FOAM_SIGFPE).",
              "fileModificationChecking : Monitoring run-time modified files using timeStampMaster (fileModificationSkew 5, maxFileModificationPolls 20)",
              "allowSystemOperations : Allowing user-supplied system call operations", ""]
        nfoam = body_n(40, 300)
        nfoam = nfoam // 2 if nfoam > 5000 else nfoam
        for i in range(nfoam):
            L.append("Time = %d" % (i + 1))
            L.append("smoothSolver:  Solving for Ux, Initial residual = %.6g, Final residual = %.6g, No Iterations %d" % (R.uniform(1e-5, 1e-2), R.uniform(1e-7, 1e-4), R.randint(1, 9)))
        L += ["End", "", "Finalising parallel run"]
    elif kind == "fortran":
        L += [" HEAT2D explicit solver v1.4"] + [" iter %4d  residual   %.4E" % (i, R.uniform(1e-5, 1e-3)) for i in range(10, 10 * body_n(20, 200), 10)]
        L += [" converged; writing solution.dat", "Note: The following floating-point exceptions are signalling: IEEE_UNDERFLOW_FLAG IEEE_DENORMAL"]
    else:
        init, _ = nccl_init(host, 8, style=style)
        L += init + [prefix(style, 0, w) for w in warns(py, 4)]
        L += train_lines(body_n(), style, ranks=(0,), kind=pick(["hf", "megatron", "tqdm", "lightning", "plain"]))
        extra = pick(["ds", "pg", "val", "oomname"])
        if extra == "ds":
            L.insert(len(L) // 2, prefix(style, 0, "[%s] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768" % ts().replace("T", " ")))
        elif extra == "pg":
            L.append(prefix(style, 0, "[rank0]:[W%s ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the progress of another member of the process group. This constraint has always been present,  but this warning has only recently been added since PyTorch 2.4 (function operator())" % glog_ts()))
        elif extra == "val":
            L.append(prefix(style, 0, "val: error_rate=0.0712 top1_err=7.12 nan_count=0 inf_count=0"))
        else:
            L.append(prefix(style, 0, "skipping batch 18812: would exceed max_tokens (OOM guard), retrying with half batch"))
        L.append(prefix(style, 0, "Training completed. Saving final model to ./outputs/final"))
    add("success", L, 0, "composed; harmless noise: OpenFOAM banner sigFpe line (OpenFOAM v2312 banner), gfortran IEEE note (captured on this machine), DeepSpeed loss_scaler OVERFLOW line, ProcessGroupNCCL destroy warning (pytorch ProcessGroupNCCL.cpp)", gpu)


# ------------------------------------------------------------------ build composed list
def build():
    styles = ["label", "bracket", "RANK", "mpi", "rank", "default", None]
    sc_nccl_ib_chain("label", "srun"); sc_nccl_ib_chain("mpi", "mpirun"); sc_nccl_ib_chain("RANK", "srun"); sc_nccl_ib_chain("bracket", "srun")
    sc_nccl_killed("rank"); sc_nccl_killed("default")
    sc_nccl_watchdog("rank"); sc_nccl_watchdog("label"); sc_nccl_watchdog(None)
    sc_nccl_init_sys("rank"); sc_nccl_init_sys("bracket")
    sc_ucx(); sc_gloo("rank")
    sc_illegal_chain("label", True); sc_illegal_chain("rank", False); sc_illegal_chain("RANK", True); sc_illegal_chain("mpi", True)
    for k in ["dsa", "cublas", "nokernel", "driver", "cudnn", "illegal"]:
        sc_cuda_single(k)
    for x, st in [(79, "label"), (48, "rank"), (119, "bracket"), (74, "RANK"), (95, "rank"), (79, "mpi")]:
        sc_xid(x, st)
    sc_ecc_runtime("label")
    sc_cuda_oom("rank", True); sc_cuda_oom("label", True); sc_cuda_oom(None, False); sc_cuda_oom(None, False); sc_cuda_oom("bracket", True); sc_cuda_oom_old()
    for k in ["iostream", "iostream", "quota", "tar", "cp"]:
        sc_disk(k)
    for k in ["runlimit", "preempt", "owner", "memlimit", "ok", "runlimit", "ok"]:
        sc_lsf(k)
    for k, st in [("time", "label"), ("time", None), ("pbs", None), ("preempt", "rank"), ("nodefail", "label"), ("preempt", None), ("scancel", "bracket"), ("scancel", None), ("oomkill", None), ("oomkill", "rank")]:
        sc_slurm_end(k, st)
    sc_dmesg_oom()
    for m, n in [("device_mismatch", 3), ("nan_loss", 3), ("segfault", 3), ("native_abort", 2), ("permission", 1), ("file_not_found", 1), ("missing_module", 2), ("div_zero", 1),
                 ("traceback", 2), ("assertion", 2), ("runtime_error", 2), ("ram_oom", 1), ("exec_failure", 1), ("unknown", 2)]:
        for _ in range(n):
            sc_simple(m)
    for k in ["foam", "fortran", "train", "train", "train", "train", "train", "train", "train", "train", "train", "foam", "train"]:
        sc_success(k)


# ------------------------------------------------------------------ captured logs
CAP = [
    # name, mode, evidence regex, alt regexes, rank, provenance
    ("walltime_int_1", "walltime", r"^KeyboardInterrupt", [r"^Traceback"], None, "timeout -s INT 6 python train.py (CPU torch 2.13.0); SIGINT -> KeyboardInterrupt, rc 124"),
    ("walltime_int_2", "walltime", r"^KeyboardInterrupt", [r"^Traceback"], None, "timeout --signal=INT 4s python -u train.py --mode warn"),
    ("walltime_int_3", "walltime", r"^KeyboardInterrupt", [r"^Traceback"], None, "set -e; timeout -s INT 3 python train.py"),
    ("walltime_term", "walltime", r"exited with status 124", [], None, "timeout 5 python train.py (SIGTERM, no traceback); job echoes status"),
    ("disk_tar_1", "disk_full", r"Wrote only", [r"100%"], None, "GNU tar into a full 2 MiB tmpfs; df shows 100%"),
    ("disk_tar_2", "disk_full", r"write error: No space left", [], None, "tar czf - | cat > full tmpfs"),
    ("disk_torchsave_1", "disk_full", r"iostream error", [r"unexpected pos"], None, "torch.save onto full tmpfs: basic_ios iostream error then unexpected pos; df 100%"),
    ("disk_enospc_1", "disk_full", r"No space left on device", [], None, "python write onto full tmpfs (ENOSPC)"),
    ("perm_redirect_1", "permission", r"Permission denied", [], None, "runuser -u nobody: shell redirect into root-owned dir"),
    ("perm_redirect_2", "permission", r"tee: .*Permission denied", [], None, "runuser -u nobody: python | tee into root-owned dir"),
    ("perm_python", "permission", r"^PermissionError", [], None, "runuser -u nobody: os.makedirs in root-owned dir"),
    ("zerodiv_1", "div_zero", r"^ZeroDivisionError", [], None, "python ZeroDivisionError in validation metric"),
    ("sigfpe_1", "div_zero", r"Floating point exception", [], None, "C integer division by zero (SIGFPE), bash job-control message"),
    ("segv_1", "segfault", r"Segmentation fault", [], None, "ctypes.string_at(0) under CPU torch"),
    ("segv_2", "segfault", r"Fatal Python error: Segmentation fault", [r"Segmentation fault +\(core dumped\)|Segmentation fault      python"], None, "ctypes.string_at(0) with -X faulthandler"),
    ("memerr_1", "ram_oom", r"^MemoryError", [], None, "ulimit -v; bytearray(8 GiB) -> MemoryError"),
    ("badalloc_1", "ram_oom", r"terminate called after throwing an instance of 'std::bad_alloc'", [r"what\(\):  std::bad_alloc"], None, "ulimit -v; C++ vector growth -> std::bad_alloc"),
    ("missing_mod_1", "missing_module", r"^ModuleNotFoundError", [], None, "import apex (not installed)"),
    ("missing_mod_2", "missing_module", r"^OSError: libcudnn", [], None, "ctypes.CDLL('libcudnn_cnn_infer.so.8')"),
    ("fnf_1", "file_not_found", r"^FileNotFoundError", [], None, "torch.load of missing checkpoint"),
    ("fnf_2", "file_not_found", r"can't open file", [], None, "python eval.py where eval.py is missing (exit 2)"),
    ("exec127", "exec_failure", r"command not found", [], None, "missing launcher wrapper, bash 127"),
    ("exec126", "exec_failure", r"Exec format error", [], None, "garbage ELF header, bash 126"),
    ("assert_py", "assertion", r"^AssertionError", [], None, "python assert on batch divisibility"),
    ("assert_c", "assertion", r"Assertion `nbuckets > 0' failed", [], None, "C assert() -> SIGABRT (134)"),
    ("terminate_cpp", "native_abort", r"terminate called after throwing", [], None, "uncaught std::runtime_error in C++ loader"),
    ("shape_rt", "runtime_error", r"^RuntimeError: mat1", [], None, "torch Linear shape mismatch"),
    ("keyerror", "traceback", r"^KeyError", [], None, "python KeyError on config"),
    ("valerr_json", "traceback", r"JSONDecodeError", [], None, "truncated json metadata"),
    ("nan_detr", "nan_loss", r"Loss is nan", [], None, "DETR-style 'Loss is {}, stopping training' check"),
    ("nan_anomaly", "nan_loss", r"returned nan values", [], None, "torch.autograd.detect_anomaly SqrtBackward0"),
    ("int_term", "interrupted", r"Terminated", [], None, "SIGTERM sent to the training process by a script"),
    ("int_sigint", "interrupted", r"^KeyboardInterrupt", [r"^Traceback"], None, "SIGINT (as Ctrl-C) sent to the process"),
    ("dist_hang", "nccl", r"Timed out waiting", [], 0, "torchrun 4 ranks gloo, rank 2 stalls; others time out in all_reduce"),
    ("dist_zdiv", "div_zero", r"ZeroDivisionError", [], 1, "torchrun 4 ranks gloo, rank 1 ZeroDivisionError; ChildFailedError summary"),
    ("ok_warn_1", "success", None, [], None, "CPU torch training with lr_scheduler UserWarning"),
    ("ok_solver", "success", None, [], None, "gfortran solver; IEEE_UNDERFLOW_FLAG note at STOP"),
    ("ok_solver2", "success", None, [], None, "gfortran solver twice; IEEE notes"),
    ("dist_ok", "success", None, [], None, "torchrun 4 ranks gloo OK with OMP_NUM_THREADS warning"),
    ("dist_ok_tee", "success", None, [], None, "torchrun --tee 3 [defaultN]: prefixes OK"),
]


def main():
    build()
    logs = os.path.join(HERE, "logs")
    if os.path.isdir(logs):
        shutil.rmtree(logs)
    os.makedirs(logs)
    rc = json.load(open(os.path.join(HERE, "captured", "rc.json")))
    entries = []
    for it in ITEMS:
        entries.append(("c", it))
    for c in CAP:
        entries.append(("k", c))
    R.shuffle(entries)
    labels = []
    for n, (kind, it) in enumerate(entries, 1):
        lid = "%s-%04d" % (SET, n)
        path = os.path.join(logs, lid + ".log")
        if kind == "c":
            lines = it["lines"]
            ev = next((i + 1 for i, x in enumerate(lines) if isinstance(x, Ev)), None)
            alts = [i + 1 for i, x in enumerate(lines) if isinstance(x, Alt)]
            with open(path, "w") as f:
                f.write("\n".join(lines) + "\n")
            g = it["gpu"]
            labels.append(dict(id=lid, mode=it["mode"], source="composed", log_path="logs/%s.log" % lid,
                               gpu=g[0] if g else "none", driver=g[1] if g else "none", true_exit_code=it["code"],
                               provenance=it["prov"], evidence_line=None if it["mode"] == "success" else ev,
                               evidence_alts=[] if it["mode"] == "success" else alts, rank=it["rank"]))
            assert (ev is None) == (it["mode"] == "success"), (lid, it["mode"])
        else:
            name, mode, evre, altre, rank, prov = it
            src = os.path.join(HERE, "captured", name + ".log")
            shutil.copy(src, path)
            lines = open(src, errors="replace").read().split("\n")
            ev = None
            alts = []
            if evre:
                ev = next(i + 1 for i, x in enumerate(lines) if re.search(evre, x))
                for a in altre:
                    m = next((i + 1 for i, x in enumerate(lines) if re.search(a, x)), None)
                    if m and m != ev:
                        alts.append(m)
            labels.append(dict(id=lid, mode=mode, source="captured", log_path="logs/%s.log" % lid, gpu="none", driver="none",
                               true_exit_code=rc[name], provenance="captured on this machine (python 3.11, torch 2.13.0 CPU); captured/%s.log via captured/run_caps.py: %s" % (name, prov),
                               evidence_line=ev, evidence_alts=alts, rank=rank))
    with open(os.path.join(HERE, "labels.jsonl"), "w") as f:
        for l in labels:
            f.write(json.dumps(l, ensure_ascii=False) + "\n")
    print("wrote", len(labels), "logs;", sum(1 for l in labels if l["source"] == "captured"), "captured")


if __name__ == "__main__":
    main()

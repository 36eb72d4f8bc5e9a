#!/usr/bin/env python3
"""dev6 blind set generator: an HPC support desk's semester of ML job tickets.

stdlib only, Python 3.6+. Byte-identical output for a given seed.
  python3 make_set.py [--seed 20261207] [--out DIR]
Composed logs are generated from templates below; captured logs are copied
verbatim from captured/<name>.log (real runs on this machine, see captured/<name>.json).
"""
import argparse, json, os, random, sys

SET = "dev6"
HERE = os.path.dirname(os.path.abspath(__file__))

# --------------------------------------------------------------------------- noise
GPUS = [("NVIDIA A100-SXM4-80GB", "535.129.03", "12.2", 81920),
        ("NVIDIA A100-SXM4-40GB", "525.85.12", "12.0", 40960),
        ("NVIDIA H100 80GB HBM3", "550.54.15", "12.4", 81559),
        ("Tesla V100-SXM2-32GB", "470.182.03", "11.4", 32510),
        ("NVIDIA A40", "535.104.05", "12.2", 46068),
        ("NVIDIA L40S", "550.90.07", "12.4", 46068),
        ("NVIDIA RTX A6000", "530.30.02", "12.1", 49140)]
SITES = [("gpu", "della-gpu", "/scratch/gpfs"), ("g", "bora", "/lustre/scratch"),
         ("nid", "perl", "/pscratch/sd/u"), ("hpc-gpu-", "hpcc", "/work/projects"),
         ("c", "sol", "/scratch"), ("a", "aion", "/scratch/users")]
USERS = ["jdoe", "mli42", "aparikh", "tnguyen", "kowalski", "rsantos", "yzhang7", "hmueller", "s2213456", "abaker"]
MODELS = ["bert-base-uncased", "roberta-large", "gpt2-medium", "llama-2-7b", "t5-base", "vit_base_patch16_224",
          "resnet50", "unet3d", "mistral-7b", "gpt-neox-1.3b", "deberta-v3-large", "wav2vec2-base"]
PKGS = [("accelerate", "0.27.2"), ("aiohttp", "3.9.3"), ("certifi", "2024.2.2"), ("datasets", "2.18.0"),
        ("deepspeed", "0.13.4"), ("einops", "0.7.0"), ("filelock", "3.13.1"), ("fsspec", "2024.2.0"),
        ("huggingface-hub", "0.21.4"), ("Jinja2", "3.1.3"), ("lightning", "2.2.1"), ("mpmath", "1.3.0"),
        ("networkx", "3.2.1"), ("ninja", "1.11.1.1"), ("numpy", "1.26.4"), ("nvidia-cublas-cu12", "12.1.3.1"),
        ("nvidia-cudnn-cu12", "8.9.2.26"), ("nvidia-nccl-cu12", "2.19.3"), ("packaging", "23.2"),
        ("pandas", "2.2.1"), ("psutil", "5.9.8"), ("PyYAML", "6.0.1"), ("regex", "2023.12.25"),
        ("safetensors", "0.4.2"), ("scipy", "1.12.0"), ("sentencepiece", "0.2.0"), ("tensorboard", "2.16.2"),
        ("tokenizers", "0.15.2"), ("torch", "2.2.1"), ("torchvision", "0.17.1"), ("tqdm", "4.66.2"),
        ("transformers", "4.38.2"), ("triton", "2.2.0"), ("wandb", "0.16.4")]


class Ctx(object):
    def __init__(self, r, gpu=True):
        self.r = r
        pre, cl, scr = r.choice(SITES)
        self.cluster = cl
        self.scratch = scr
        self.user = r.choice(USERS)
        self.nodes = ["%s%03d" % (pre, r.randint(1, 180)) for _ in range(4)]
        self.host = self.nodes[0]
        self.jobid = r.randint(1200000, 9800000)
        g = r.choice(GPUS)
        self.gpu, self.driver, self.cuda, self.mem = g
        if not gpu:
            self.gpu, self.driver = "none", "none"
        self.model = r.choice(MODELS)
        self.proj = "/projects/%s" % r.choice(["nlp_lab", "visionai", "climate-ml", "bioml", "speechgrp"])
        self.home = "/home/%s" % self.user
        self.env = "%s/.conda/envs/%s" % (self.home, r.choice(["torch22", "llm", "ml", "py310", "hf"]))
        self.py = r.choice(["3.10", "3.11", "3.9"])
        self.sp = "%s/lib/python%s/site-packages" % (self.env, self.py)
        self.t = r.randint(1700000000, 1730000000)
        self.run = "%s/%s/runs/%s-%s" % (scr, self.user, self.model.split("/")[-1], r.randint(100, 999))
        self.world = r.choice([2, 4, 8])

    def ts(self, step=1.0):
        self.t += self.r.random() * step
        return self.t

    def stamp(self, fmt="%Y-%m-%d %H:%M:%S", step=1.0):
        import time
        return time.strftime(fmt, time.gmtime(self.ts(step)))

    def iso(self):
        import time
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(self.ts(3)))

    def glog(self, lvl="I"):
        import time
        t = self.ts(0.3)
        return "%s%s %s.%06d %d" % (lvl, time.strftime("%m%d", time.gmtime(t)),
                                    time.strftime("%H:%M:%S", time.gmtime(t)), int((t % 1) * 1e6), self.r.randint(1000, 99999))


def slurm_header(c, L, name="train", gpus=4):
    L.append("+ module purge")
    L.append("+ module load anaconda3/2023.9 cudatoolkit/%s cudnn/cuda-%s/8.9.7" % (c.cuda, c.cuda.split(".")[0]))
    L.append("+ conda activate %s" % c.env)
    L.append("+ echo 'SLURM_JOB_ID=%d SLURM_JOB_NODELIST=%s[%s] SLURM_NTASKS=%d'" % (c.jobid, c.host[:-3], c.host[-3:], gpus))
    L.append("SLURM_JOB_ID=%d SLURM_JOB_NODELIST=%s[%s] SLURM_NTASKS=%d" % (c.jobid, c.host[:-3], c.host[-3:], gpus))
    L.append("+ export NCCL_DEBUG=INFO")
    L.append("+ export OMP_NUM_THREADS=%d" % c.r.choice([4, 8, 16]))


def env_dump(c, L):
    r = c.r
    L.append("==== environment ====")
    for k, v in [("HOSTNAME", c.host), ("USER", c.user), ("HOME", c.home), ("CONDA_PREFIX", c.env),
                 ("CUDA_HOME", "/usr/local/cuda-%s" % c.cuda), ("CUDA_VISIBLE_DEVICES", "0,1,2,3"),
                 ("LD_LIBRARY_PATH", "/usr/local/cuda-%s/lib64:/opt/slurm/lib" % c.cuda),
                 ("SLURM_JOB_ID", str(c.jobid)), ("SLURM_CPUS_PER_TASK", str(r.choice([8, 16, 32]))),
                 ("SLURM_MEM_PER_NODE", str(r.choice([128000, 256000, 500000]))),
                 ("PYTHONPATH", "%s/code/src" % c.home), ("HF_HOME", "%s/%s/hf_cache" % (c.scratch, c.user)),
                 ("TMPDIR", "/tmp/slurm-%d" % c.jobid), ("MASTER_ADDR", c.host), ("MASTER_PORT", str(r.randint(20000, 40000)))]:
        if r.random() < 0.85:
            L.append("%s=%s" % (k, v))


def module_list(c, L):
    L.append("")
    L.append("Currently Loaded Modules:")
    mods = ["StdEnv", "gcc/11.3.0", "anaconda3/2023.9", "cudatoolkit/%s" % c.cuda, "cudnn/8.9.7", "openmpi/4.1.5", "nccl/2.18.3"]
    L.append("  " + "   ".join("%d) %s" % (i + 1, m) for i, m in enumerate(mods)))
    L.append("")


def pip_freeze(c, L):
    L.append("$ pip freeze | head -n 40")
    for n, v in PKGS:
        if c.r.random() < 0.8:
            L.append("%s==%s" % (n, v))


def nvsmi(c, L, n=4, util=None):
    r = c.r
    import time
    L.append(time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(c.ts())))
    L.append("+---------------------------------------------------------------------------------------+")
    L.append("| NVIDIA-SMI %-12s           Driver Version: %-12s   CUDA Version: %-5s    |" % (c.driver, c.driver, c.cuda))
    L.append("|-----------------------------------------+----------------------+----------------------+")
    L.append("| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |")
    L.append("| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |")
    L.append("|=========================================+======================+======================|")
    for i in range(n):
        L.append("|   %d  %-22s  On  | 00000000:%02X:00.0 Off |                    0 |" % (i, c.gpu[:22], [0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD][i % 8]))
        L.append("| N/A   %2dC    P0              %3dW / 400W |      %5dMiB / %5dMiB |      %3d%%      Default |" % (
            r.randint(28, 44), r.randint(55, 90), r.randint(4, 600), c.mem, 0 if util is None else util))
        L.append("+-----------------------------------------+----------------------+----------------------+")
    L.append("")


def tqdm_bar(c, L, total, n_updates, desc="Epoch 0", extra="loss"):
    r = c.r
    parts = []
    for k in range(n_updates):
        i = int(total * (k + 1) / n_updates)
        pct = int(100 * i / total)
        bar = "#" * (pct // 10)
        parts.append("%s: %3d%%|%-10s| %d/%d [%02d:%02d<%02d:%02d, %.2fit/s, %s=%.3f]" % (
            desc, pct, bar, i, total, k // 60, k % 60, (n_updates - k) // 60, (n_updates - k) % 60,
            r.uniform(1.5, 9.0), extra, r.uniform(0.8, 3.0)))
    L.append("\r".join(parts))


def steps(c, L, start, n, every=10, fmt=None, loss0=3.2, prefix="", rank=None):
    r = c.r
    loss = loss0
    for s in range(start, start + n * every, every):
        loss = max(0.05, loss * r.uniform(0.97, 1.005))
        lr = 3e-4 * min(1.0, s / 500.0 + 0.01)
        if fmt == "hf":
            L.append(prefix + "{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.6g, 'epoch': %.2f}" % (loss, r.uniform(0.3, 4), lr, s / 1000.0))
        elif fmt == "lightning":
            L.append(prefix + "Epoch %d:  %d%%|%s| %d/%d [%02d:%02d<%02d:%02d, %.2fit/s, v_num=%d, train_loss=%.3f]" % (
                s // 1000, (s % 1000) // 10, "#" * ((s % 1000) // 100), s % 1000, 1000, r.randint(0, 59), r.randint(0, 59), r.randint(0, 59), r.randint(0, 59), r.uniform(2, 8), r.randint(0, 9), loss))
        elif fmt == "ds":
            L.append(prefix + "[%s,%03d] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, skipped=%d, lr=[%.6g], mom=[(0.9, 0.95)]" % (
                c.stamp(), r.randint(0, 999), s, r.randint(0, 3), lr))
            L.append(prefix + "steps: %d loss: %.4f iter time (s): %.3f samples/sec: %.3f" % (s, loss, r.uniform(0.3, 1.5), r.uniform(40, 300)))
        elif fmt == "jax":
            L.append(prefix + "I%s %d train.py:%d] step=%d loss=%.4f grad_norm=%.3f throughput=%.1f tok/s" % (
                c.stamp("%m%d %H:%M:%S", step=every * 0.5), r.randint(1000, 9999), r.randint(200, 400), s, loss, r.uniform(0.2, 2), r.uniform(1e4, 9e4)))
        elif fmt == "keras":
            L.append(prefix + "%d/%d [==============================] - %ds %dms/step - loss: %.4f - accuracy: %.4f" % (
                s, s, r.randint(20, 300), r.randint(50, 400), loss, r.uniform(0.4, 0.95)))
        else:
            L.append(prefix + "%s | step %6d | loss %.4f | lr %.3e | grad_norm %.3f | %.1f samples/s" % (
                c.stamp(step=every * 0.8), s, loss, lr, r.uniform(0.2, 3), r.uniform(100, 900)))
    return loss


def nccl_init(c, L, nranks=4, prefix_fn=None, iface="ib0"):
    r = c.r
    pid0 = r.randint(10000, 90000)
    ver = r.choice(["2.18.1+cuda12.1", "2.19.3+cuda12.3", "2.20.5+cuda12.4"])
    for k in range(nranks):
        p = prefix_fn(k) if prefix_fn else ""
        host = c.nodes[k // 4] if nranks > 4 else c.host
        tag = "%s:%d:%d [%d]" % (host, pid0 + k, pid0 + k, k % 4)
        L.append(p + "%s NCCL INFO Bootstrap : Using %s:10.%d.%d.%d<0>" % (tag, iface, r.randint(0, 9), r.randint(0, 255), r.randint(1, 254)))
        if k == 0:
            L.append(p + "%s NCCL INFO cudaDriverVersion %d" % (tag, int(c.cuda.replace(".", "")) * 10))
            L.append(p + "NCCL version %s" % ver)
        L.append(p + "%s NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB %s:10.%d.%d.%d<0>" % (tag, iface, r.randint(0, 9), r.randint(0, 255), r.randint(1, 254)))
        L.append(p + "%s NCCL INFO Using network IB" % tag)
    if r.random() < 0.5:
        for k in range(nranks):
            tag = "%s:%d:%d [%d]" % (c.host, pid0 + k, pid0 + k + 97, k % 4)
            for ch in range(r.choice([2, 4, 8, 16])):
                L.append("%s NCCL INFO Channel %02d/0 : %d[%d] -> %d[%d] via P2P/IPC/read" % (tag, ch, k, k % 4, (k + 1) % nranks, (k + 1) % 4))
            L.append("%s NCCL INFO Connected all rings" % tag)
            L.append("%s NCCL INFO Connected all trees" % tag)
            L.append("%s NCCL INFO threadThresholds 8/8/64 | 32/8/64 | 512 | 512" % tag)
    for k in range(nranks):
        p = prefix_fn(k) if prefix_fn else ""
        tag = "%s:%d:%d [%d]" % (c.host, pid0 + k, pid0 + k + 97, k % 4)
        L.append(p + "%s NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x%x - Init COMPLETE" % (
            tag, r.randint(0x55d000000000, 0x55dfffffffff), k, nranks, k % 4, k % 4, [7, 15, 71, 78][k % 4], r.getrandbits(60)))
    return pid0


WARN_POOL = [
    "{sp}/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system is 8, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
    "{sp}/transformers/utils/generic.py:441: UserWarning: torch.utils._pytree._register_pytree_node is deprecated. Please use torch.utils._pytree.register_pytree_node instead.",
    "{sp}/torch/nn/parallel/distributed.py:1257: UserWarning: The `check_reduction` argument in `DistributedDataParallel` module is deprecated. Please avoid using it.",
    "{sp}/huggingface_hub/file_download.py:1132: FutureWarning: `resume_download` is deprecated and will be removed in version 1.0.0. Downloads always resume when possible. If you want to force a new download, use `force_download=True`.",
    "{sp}/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
    "{sp}/torch/optim/lr_scheduler.py:143: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value of the learning rate schedule. See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
    "{sp}/torch/cuda/amp/grad_scaler.py:126: UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
    "{sp}/lightning/pytorch/trainer/connectors/data_connector.py:441: The 'val_dataloader' does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` to `num_workers=7` in the `DataLoader` to improve performance.",
    "{sp}/torch/distributed/distributed_c10d.py:2741: UserWarning: torch.distributed._all_gather_base is a private function and will be deprecated. Please use torch.distributed.all_gather_into_tensor instead.",
    "{sp}/transformers/training_args.py:1494: FutureWarning: `evaluation_strategy` is deprecated and will be removed in version 4.46 of Transformers. Use `eval_strategy` instead",
    "{sp}/torch/functional.py:507: UserWarning: torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. (Triggered internally at ../aten/src/ATen/native/TensorShape.cpp:3549.)",
    "Some weights of BertForSequenceClassification were not initialized from the model checkpoint at bert-base-uncased and are newly initialized: ['classifier.bias', 'classifier.weight']\nYou should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference.",
    "wandb: WARNING Serializing object of type dict that is 589912 bytes",
    "{sp}/torch/nn/modules/module.py:1511: UserWarning: error_if_nonfinite is deprecated in clip_grad_norm_; pass it explicitly to silence this warning",
    "[W socket.cpp:464] [c10d] The server socket cannot be initialized on [::]:29500 (errno: 97 - Address family not supported by protocol).",
    "[W Utils.hpp:133] Warning: Environment variable NCCL_ASYNC_ERROR_HANDLING is deprecated; use TORCH_NCCL_ASYNC_ERROR_HANDLING instead (function getCvarInt)",
]

TF_INFO = [
    "{g} cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.\nTo enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.",
    "{g} gpu_device.cc:1886] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 38246 MB memory:  -> device: 0, name: {gpu}, pci bus id: 0000:07:00.0, compute capability: 8.0",
    "{g} device_compiler.h:186] Compiled cluster using XLA!  This line is logged at most once for the lifetime of the process.",
    "{g} cuda_dnn.cc:440] Loaded cuDNN version 8906",
    "{g} service.cc:145] XLA service 0x7f3a2c0031d0 initialized for platform CUDA (this does not guarantee that XLA will be used). Devices:",
]


def warnings_block(c, L, n=3, prefix=""):
    for w in c.r.sample(WARN_POOL, n):
        for ln in w.format(sp=c.sp).split("\n"):
            L.append(prefix + ln)
        if "UserWarning" in w or "FutureWarning" in w:
            L.append(prefix + "  warnings.warn(")


def wandb_teardown(c, L, ok=False, prefix=""):
    L.append(prefix + "wandb: Waiting for W&B process to finish... (%s)." % ("success" if ok else "failed 1"))
    L.append(prefix + "wandb: ")
    L.append(prefix + "wandb: Run history:")
    L.append(prefix + "wandb:   train/loss █▆▅▄▃▃▂▂▂▁▁▁")
    L.append(prefix + "wandb:     train/lr ▁▂▃▄▅▆▇███▇▇")
    L.append(prefix + "wandb: ")
    L.append(prefix + "wandb: 🚀 View run %s-%d at: https://wandb.ai/%s/%s/runs/%s" % (c.model.split("-")[0], c.r.randint(1, 99), c.user, c.cluster, "".join(c.r.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))))
    L.append(prefix + "wandb: Synced 6 W&B file(s), 0 media file(s), 2 artifact file(s) and 0 other file(s)")
    L.append(prefix + "wandb: Find logs at: ./wandb/run-%s-%s/logs" % (c.stamp("%Y%m%d_%H%M%S"), "".join(c.r.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))))


def epilog(c, L, state, exit_str, elapsed=None):
    r = c.r
    L.append("")
    L.append("==============================================================")
    L.append("Job ID: %d" % c.jobid)
    L.append("Cluster: %s" % c.cluster)
    L.append("User/Group: %s/%s" % (c.user, c.user))
    L.append("State: %s (exit code %s)" % (state, exit_str))
    L.append("Nodes: 1")
    L.append("Cores per node: %d" % r.choice([16, 32, 64]))
    if elapsed and elapsed.startswith("00:00"):
        L.append("CPU Utilized: 00:00:%02d" % r.randint(0, 3))
    else:
        L.append("CPU Utilized: %02d:%02d:%02d" % (r.randint(0, 99), r.randint(0, 59), r.randint(0, 59)))
    L.append("Job Wall-clock time: %s" % (elapsed or "%02d:%02d:%02d" % (r.randint(0, 23), r.randint(0, 59), r.randint(0, 59))))
    L.append("Memory Utilized: %.2f GB" % r.uniform(3, 120))
    L.append("Memory Efficiency: %.2f%% of %d.00 GB" % (r.uniform(5, 95), r.choice([64, 128, 256])))
    L.append("==============================================================")


def py_tb(c, frames, exc, prefix=""):
    """frames: list of (file, line, func, code)"""
    out = [prefix + "Traceback (most recent call last):"]
    for f, ln, fn, code in frames:
        out.append(prefix + '  File "%s", line %d, in %s' % (f, ln, fn))
        if code:
            out.append(prefix + "    " + code)
    for e in exc.split("\n"):
        out.append(prefix + e)
    return out


def user_frames(c, script="train.py"):
    r = c.r
    base = "%s/code/%s" % (c.home, r.choice(["llm-ft", "seg3d", "asr", "proj", "thesis"]))
    return base, [("%s/%s" % (base, script), r.randint(300, 520), "<module>", "main(args)"),
                  ("%s/%s" % (base, script), r.randint(200, 299), "main", "trainer.train()")]


def ddp_prefix(k):
    return "[rank%d]:" % k


def torchrun_fail(c, L, rank, world, exitcode, script="train.py", sig=None, host=None):
    r = c.r
    L.append("W%s torch/distributed/elastic/multiprocessing/api.py:851] Sending process %d closing signal SIGTERM" % (c.stamp("%m%d %H:%M:%S.000000"), r.randint(1000, 99999)))
    for k in range(world):
        if k != rank and r.random() < 0.6:
            L.append("W%s torch/distributed/elastic/multiprocessing/api.py:851] Sending process %d closing signal SIGTERM" % (c.stamp("%m%d %H:%M:%S.000000"), r.randint(1000, 99999)))
    L.append("E%s torch/distributed/elastic/multiprocessing/api.py:826] failed (exitcode: %d) local_rank: %d (pid: %d) of binary: %s/bin/python" % (
        c.stamp("%m%d %H:%M:%S.000000"), exitcode, rank % 8, r.randint(1000, 99999), c.env))
    L += py_tb(c, [("%s/bin/torchrun" % c.env, 8, "<module>", "sys.exit(main())"),
                   ("%s/torch/distributed/elastic/multiprocessing/errors/__init__.py" % c.sp, 347, "wrapper", "return f(*args, **kwargs)"),
                   ("%s/torch/distributed/run.py" % c.sp, 812, "main", "run(args)"),
                   ("%s/torch/distributed/run.py" % c.sp, 803, "run", "elastic_launch("),
                   ("%s/torch/distributed/launcher/api.py" % c.sp, 135, "__call__", "return launch_agent(self._config, self._entrypoint, list(args))"),
                   ("%s/torch/distributed/launcher/api.py" % c.sp, 268, "launch_agent", "raise ChildFailedError(")],
               "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
    L.append("============================================================")
    L.append("%s FAILED" % script)
    L.append("------------------------------------------------------------")
    L.append("Failures:")
    L.append("  <NO_OTHER_FAILURES>")
    L.append("------------------------------------------------------------")
    L.append("Root Cause (first observed failure):")
    L.append("[0]:")
    L.append("  time      : %s" % c.stamp("%Y-%m-%d_%H:%M:%S"))
    L.append("  host      : %s" % (host or c.host))
    L.append("  rank      : %d (local_rank: %d)" % (rank, rank % 8))
    if sig:
        L.append("  exitcode  : %d (pid: %d)" % (exitcode, r.randint(1000, 99999)))
        L.append("  error_file: <N/A>")
        L.append("  traceback : Signal %d (%s) received by PID %d" % (-exitcode, sig, r.randint(1000, 99999)))
    else:
        L.append("  exitcode  : %d (pid: %d)" % (exitcode, r.randint(1000, 99999)))
        L.append("  error_file: <N/A>")
        L.append("  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
    L.append("============================================================")


def srun_fail(c, L, task=0, what="Exited with exit code 1", node=None):
    L.append("srun: error: %s: task %d: %s" % (node or c.host, task, what))


def training_preamble(c, L, fmt=None, nsteps=None, prefix="", world=None, nccl=True):
    r = c.r
    slurm_header(c, L)
    if r.random() < 0.6:
        env_dump(c, L)
    if r.random() < 0.5:
        module_list(c, L)
    if r.random() < 0.4:
        pip_freeze(c, L)
    if c.gpu != "none" and r.random() < 0.7:
        nvsmi(c, L, n=r.choice([2, 4, 8]))
    warnings_block(c, L, r.randint(1, 4), prefix)
    if nccl and c.gpu != "none" and r.random() < 0.7:
        nccl_init(c, L, world or c.world)
    L.append(prefix + "***** Running training *****")
    L.append(prefix + "  Num examples = %d" % r.randint(10000, 5000000))
    L.append(prefix + "  Num Epochs = %d" % r.randint(1, 20))
    L.append(prefix + "  Instantaneous batch size per device = %d" % r.choice([4, 8, 16, 32]))
    L.append(prefix + "  Gradient Accumulation steps = %d" % r.choice([1, 2, 4, 8]))
    L.append(prefix + "  Total optimization steps = %d" % r.randint(2000, 200000))
    n = nsteps if nsteps is not None else int(r.choice([r.randint(100, 260), r.randint(200, 500), r.randint(400, 900)]))
    if r.random() < 0.4:
        tqdm_bar(c, L, r.randint(200, 3000), r.randint(10, 60))
    every = r.choice([10, 20, 50, 100])
    s0 = r.randint(0, 50) * 10
    done = 0
    while done < n:
        chunk = min(n - done, r.randint(30, 150))
        steps(c, L, s0 + done * every, chunk, every=every, fmt=fmt, prefix=prefix)
        done += chunk
        if done < n and r.random() < 0.5:
            L.append(prefix + "***** Running Evaluation *****  step %d: val_loss=%.4f val_error=%.4f ppl=%.2f" % (s0 + done * every, r.uniform(0.5, 3), r.uniform(0.05, 0.6), r.uniform(2, 30)))
            if r.random() < 0.3:
                warnings_block(c, L, 1, prefix)
            if r.random() < 0.2:
                L.append(prefix + "Saving checkpoint to %s/checkpoint-%d" % (c.run, s0 + done * every))


# --------------------------------------------------------------------------- scenarios
# each returns dict(lines, mode, exit, prov, gpu flag)

P_TORCH_OOM = "pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (OutOfMemoryError text); https://github.com/pytorch/pytorch/issues/16417"
P_NCCL_WD = "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp (Watchdog caught collective operation timeout); https://github.com/pytorch/pytorch/issues/50820"
P_SLURM = "SchedMD/slurm src/slurmd/slurmstepd/req.c + src/srun/libsrun (*** STEP/JOB %u ON %s CANCELLED AT %s DUE TO TIME LIMIT/PREEMPTION ***, 'srun: Job step aborted'); https://github.com/ZettaAI/zetta_utils/issues/671; https://github.com/SystemsGenetics/GEMmaker/pull/242"


def s_cuda_oom(c, v):
    r = c.r
    L = []
    k = v % 4
    if k == 0:  # torch DDP, one rank OOM, torchrun teardown
        training_preamble(c, L, fmt=None, world=4)
        rank = r.randint(0, 3)
        base, fr = user_frames(c)
        tried = r.choice([1.95, 2.50, 4.00, 768.00, 1.17])
        unit = "GiB" if tried < 100 else "MiB"
        cap = c.mem / 1024.0
        free = r.uniform(0.1, 1.2)
        L += py_tb(c, fr + [("%s/trainer.py" % base, r.randint(100, 300), "training_step", "loss = self.model(**batch).loss"),
                            ("%s/torch/nn/modules/module.py" % c.sp, 1511, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)"),
                            ("%s/torch/nn/functional.py" % c.sp, 1858, "softmax", "ret = input.softmax(dim)")],
                   "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f %s. GPU %d has a total capacity of %.2f GiB of which %.2f MiB is free. Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and %.2f MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)" % (
                       tried, unit, rank, cap - 0.4, free * 1024, cap - 0.5, cap - 2.1, r.uniform(100, 900)), prefix=ddp_prefix(rank))
        torchrun_fail(c, L, rank, 4, 1)
        srun_fail(c, L)
        return L, 1, P_TORCH_OOM
    if k == 1:  # JAX
        L.append("I%s absl] Starting training on %d devices" % (c.stamp("%m%d %H:%M:%S"), 8))
        env_dump(c, L)
        steps(c, L, 0, r.randint(30, 200), every=100, fmt="jax")
        alloc = r.uniform(2, 20)
        L.append("%s bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out of memory trying to allocate %.2fGiB (rounded to %d)requested by op " % (c.glog("W"), alloc, int(alloc * 2**30)))
        L.append("%s bfc_allocator.cc:497] ************************************************************************************_____" % c.glog("W"))
        L.append("%s pjrt_stream_executor_client.cc:2809] Execution of replica 0 failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate %d bytes." % (c.glog("E"), int(alloc * 2**30)))
        L += py_tb(c, [("%s/code/t5x/train.py" % c.home, 812, "<module>", "gin_utils.run(main)"),
                       ("%s/jax/_src/interpreters/pxla.py" % c.sp, 1229, "__call__", "results = self.xla_executable.execute_sharded(")],
                   "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate %d bytes." % int(alloc * 2**30))
        L.append("--------------------")
        L.append("For simplicity, JAX has removed its internal frames from the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to include these.")
        srun_fail(c, L)
        return L, 1, "google/jax + openxla/xla xla/pjrt/pjrt_stream_executor_client.cc, tsl bfc_allocator.cc (ran out of memory trying to allocate); https://github.com/google/jax/issues/8362"
    if k == 2:  # TF
        for t in TF_INFO:
            L += t.format(g=c.glog(), gpu=c.gpu).split("\n")
        steps(c, L, 1, r.randint(20, 120), every=1, fmt="keras")
        L.append("%s bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 3.00GiB (rounded to 3221225472)requested by op Conv2DBackpropFilter" % c.glog("W"))
        L.append("If the cause is memory fragmentation maybe the environment variable 'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation. ")
        L.append("Current allocation summary follows.")
        for b in range(r.randint(10, 40)):
            L.append("%s bfc_allocator.cc:1033] Bin (%d): \tTotal Chunks: %d, Chunks in use: %d. %s allocated for chunks. %s in use in bin. %s client-requested in use in bin." % (
                c.glog(), 256 * 2 ** b, r.randint(0, 90), r.randint(0, 90), "%.1fMiB" % r.uniform(0, 900), "%.1fMiB" % r.uniform(0, 900), "%.1fMiB" % r.uniform(0, 900)))
        L += py_tb(c, [("%s/code/unet/train_tf.py" % c.home, 141, "<module>", "model.fit(train_ds, epochs=EPOCHS, validation_data=val_ds)"),
                       ("%s/keras/src/utils/traceback_utils.py" % c.sp, 70, "error_handler", "raise e.with_traceback(filtered_tb) from None")],
                   "tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:\n\nOOM when allocating tensor with shape[64,256,128,128] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc\n\t [[{{node gradient_tape/model/conv2d_7/Conv2D/Conv2DBackpropFilter}}]]\nHint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info. This isn't available when running in Eager mode.\n [Op:__inference_train_function_9231]")
        return L, 1, "tensorflow/tensorflow tsl/framework/bfc_allocator.cc and core/common_runtime (OOM when allocating tensor with shape); https://github.com/tensorflow/tensorflow/issues/36465"
    # DeepSpeed launcher
    training_preamble(c, L, fmt="ds", world=8)
    rank = r.randint(0, 7)
    L += py_tb(c, [("%s/code/ds/train.py" % c.home, 402, "<module>", "main()"),
                   ("%s/deepspeed/runtime/engine.py" % c.sp, 1852, "forward", "loss = self.module(*inputs, **kwargs)"),
                   ("%s/deepspeed/runtime/zero/stage_1_and_2.py" % c.sp, 1976, "step", "self._optimizer_step(i)")],
               "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.53 GiB. GPU %d has a total capacty of 79.15 GiB of which 1.12 GiB is free. Including non-PyTorch memory, this process has 78.02 GiB memory in use. Of the allocated memory 74.31 GiB is allocated by PyTorch, and 2.14 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF" % (rank % 8), prefix="%d: " % rank)
    for k2 in range(8):
        if k2 != rank:
            L.append("[%s] [INFO] [launch.py:315:sigkill_handler] Killing subprocess %d" % (c.stamp(), r.randint(1000, 99999)))
    L.append("[%s] [ERROR] [launch.py:321:sigkill_handler] ['%s/bin/python', '-u', 'train.py', '--local_rank=%d', '--deepspeed', 'ds_config.json'] exits with return code = 1" % (c.stamp(), c.env, rank))
    return L, 1, P_TORCH_OOM + "; microsoft/DeepSpeed deepspeed/launcher/launch.py (sigkill_handler exits with return code)"


def s_nccl(c, v):
    r = c.r
    L = []
    k = v % 7
    if k == 0:  # watchdog timeout
        training_preamble(c, L, world=8)
        seq = r.randint(1000, 90000)
        for rank in r.sample(range(8), 3):
            L.append("[rank%d]:[E ProcessGroupNCCL.cpp:563] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=%d, Timeout(ms)=1800000) ran for %d milliseconds before timing out." % (rank, rank, seq, 262144 * 8, 262144 * 8, 1800000 + r.randint(10, 900)))
            L.append("[rank%d]:[E ProcessGroupNCCL.cpp:1537] [PG 0 Rank %d] Timeout at NCCL work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d." % (rank, rank, seq, seq, seq - 1))
            L.append("[rank%d]:[E ProcessGroupNCCL.cpp:577] [Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data." % (rank, rank))
            L.append("[rank%d]:[E ProcessGroupNCCL.cpp:583] [Rank %d] To avoid data inconsistency, we are taking the entire process down." % (rank, rank))
        L.append("[rank%d]: terminate called after throwing an instance of 'c10::DistBackendError'" % rank)
        L.append("[rank%d]:   what():  [PG 0 Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=2097152, NumelOut=2097152, Timeout(ms)=1800000) ran for 1800431 milliseconds before timing out." % (rank, rank, seq))
        L.append("[rank%d]: Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:565 (most recent call first):" % rank)
        for f in range(5):
            L.append("[rank%d]: frame #%d: <unknown function> + 0x%x (0x7f%010x in %s/torch/lib/libtorch_cuda.so)" % (rank, f, r.randint(0x100000, 0xfffffff), r.getrandbits(40), c.sp))
        torchrun_fail(c, L, rank, 8, -6, sig="SIGABRT")
        srun_fail(c, L, what="Exited with exit code 1")
        return L, 1, P_NCCL_WD
    if k == 1:  # NCCL_SOCKET_IFNAME wrong
        slurm_header(c, L)
        L.append("+ export NCCL_SOCKET_IFNAME=eth0")
        warnings_block(c, L, 2)
        for rank in range(4):
            L.append("%s:%d:%d [%d] NCCL INFO NCCL_SOCKET_IFNAME set by environment to eth0" % (c.host, 4000 + rank, 4000 + rank, rank))
            L.append("%s:%d:%d [%d] misc/socket.cc:... NCCL WARN Bootstrap : no socket interface found" % (c.host, 4000 + rank, 4000 + rank, rank) if False else
                     "%s:%d:%d [%d] NCCL WARN Bootstrap : no socket interface found" % (c.host, 4000 + rank, 4000 + rank, rank))
            L.append("%s:%d:%d [%d] NCCL INFO init.cc:94 -> 3" % (c.host, 4000 + rank, 4000 + rank, rank))
        base, fr = user_frames(c)
        L += py_tb(c, fr[:1] + [("%s/torch/nn/parallel/distributed.py" % c.sp, 795, "__init__", "_verify_param_shape_across_processes(self.process_group, parameters)"),
                                ("%s/torch/distributed/utils.py" % c.sp, 265, "_verify_param_shape_across_processes", "return dist._verify_params_across_processes(process_group, tensors, logger)")],
                   "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, internal error - please report this issue to the NCCL developers, NCCL version 2.19.3\nncclInternalError: Internal check failed.\nLast error:\nBootstrap : no socket interface found", prefix="[rank0]:")
        torchrun_fail(c, L, 0, 4, 1)
        return L, 1, "NVIDIA/nccl src/bootstrap.cc (Bootstrap : no socket interface found); pytorch ProcessGroupNCCL.cpp (NCCL error in: ... internal error); https://github.com/NVIDIA/nccl/issues/1657"
    if k == 2:  # IB ibv_modify_qp
        training_preamble(c, L, world=8, nsteps=0)
        bad = c.nodes[1]
        pid = r.randint(10000, 99999)
        L.append("%s:%d:%d [1] misc/ibvwrap.cc:190 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out errno 110" % (bad, pid, pid + 71))
        L.append("%s:%d:%d [1] NCCL INFO transport/net_ib.cc:925 -> 2" % (bad, pid, pid + 71))
        L.append("%s:%d:%d [1] NCCL INFO transport/net.cc:683 -> 2" % (bad, pid, pid + 71))
        L.append("%s:%d:%d [1] NCCL INFO misc/socket.cc:47 -> 3" % (bad, pid, pid + 71))
        L += py_tb(c, [("%s/code/fsdp/train.py" % c.home, 233, "<module>", "model = FSDP(model, auto_wrap_policy=wrap, device_id=torch.cuda.current_device())"),
                       ("%s/torch/distributed/fsdp/_init_utils.py" % c.sp, 611, "_sync_module_params_and_buffers", "_sync_params_and_buffers(")],
                   "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3\nncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \nLast error:\nCall to ibv_modify_qp failed with error Connection timed out errno 110", prefix="5: ")
        srun_fail(c, L, task=5, node=bad)
        L.append("srun: launch/slurm: _step_signal: Terminating StepId=%d.0" % c.jobid)
        L.append("slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (c.jobid, c.host, c.iso()))
        for t in range(8):
            if t != 5 and r.random() < 0.5:
                srun_fail(c, L, task=t, what="Terminated", node=c.nodes[t // 4])
        return L, 1, "NVIDIA/nccl src/misc/ibvwrap.cc (Call to ibv_modify_qp failed with error); https://github.com/NVIDIA/nccl-tests/issues/227; https://github.com/NVIDIA/nccl/issues/925"
    if k == 3:  # rendezvous connection refused (c10d)
        slurm_header(c, L)
        warnings_block(c, L, 2)
        L.append("[W socket.cpp:697] [c10d] The client socket has failed to connect to [%s]:29500 (errno: 111 - Connection refused)." % c.nodes[0])
        for i in range(r.randint(3, 30)):
            L.append("[W socket.cpp:697] [c10d] The client socket has failed to connect to [%s]:29500 (errno: 111 - Connection refused)." % c.nodes[0])
        L += py_tb(c, [("%s/bin/torchrun" % c.env, 8, "<module>", "sys.exit(main())"),
                       ("%s/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py" % c.sp, 155, "_create_tcp_store", "store = TCPStore(")],
                   "torch.distributed.DistStoreError: Timed out after 901 seconds waiting for clients. 1/2 clients joined.")
        L.append("")
        L.append("The above exception was the direct cause of the following exception:")
        L.append("")
        L += py_tb(c, [("%s/bin/torchrun" % c.env, 8, "<module>", "sys.exit(main())"),
                       ("%s/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py" % c.sp, 1017, "next_rendezvous", "self._op_executor.run(join_op, deadline)")],
                   "torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.")
        srun_fail(c, L, task=1, node=c.nodes[1])
        return L, 1, "pytorch torch/csrc/distributed/c10d/socket.cpp (The client socket has failed to connect to ... Connection refused), torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py (RendezvousConnectionError)"
    if k == 4:  # firewall timeout
        slurm_header(c, L)
        env_dump(c, L)
        L.append("[E socket.cpp:957] [c10d] The client socket has timed out after 1800s while trying to connect to (%s, 29400)." % c.nodes[0])
        L += py_tb(c, [("%s/code/train.py" % c.home, 51, "setup", "dist.init_process_group(backend='nccl')"),
                       ("%s/torch/distributed/rendezvous.py" % c.sp, 174, "_create_c10d_store", "return TCPStore(")],
                   "torch.distributed.DistNetworkError: The client socket has timed out after 1800s while trying to connect to (%s, 29400)." % c.nodes[0], prefix="1: ")
        srun_fail(c, L, task=1, node=c.nodes[1])
        L.append("srun: launch/slurm: _step_signal: Terminating StepId=%d.0" % c.jobid)
        L.append("0: [rank0]: received signal 15, exiting")
        L.append("slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (c.jobid, c.host, c.iso()))
        srun_fail(c, L, task=0, what="Terminated")
        return L, 1, "pytorch torch/csrc/distributed/c10d/socket.cpp (The client socket has timed out after ... while trying to connect to)"
    if k == 5:  # MPI / openmpi transport
        L.append("--------------------------------------------------------------------------")
        L.append("WARNING: There was an error initializing an OpenFabrics device.")
        L.append("")
        L.append("  Local host:   %s" % c.host)
        L.append("  Local device: mlx5_0")
        L.append("--------------------------------------------------------------------------")
        for i in range(r.randint(20, 120)):
            rk = r.randint(0, 7)
            L.append("[1,%d]<stdout>:epoch %d iter %d loss %.4f" % (rk, i // 40, i, r.uniform(0.5, 3)))
        L.append("[%s:%d] pml_ucx.c:419  Error: ucp_ep_create(proc=5) failed: Destination is unreachable" % (c.nodes[1], r.randint(1000, 99999)))
        L.append("[1,5]<stderr>:[%s:%d] *** An error occurred in MPI_Allreduce" % (c.nodes[1], r.randint(1000, 99999)))
        L.append("[1,5]<stderr>:[%s:%d] *** reported by process [%d,5]" % (c.nodes[1], r.randint(1000, 99999), r.randint(10**9, 4 * 10**9)))
        L.append("[1,5]<stderr>:[%s:%d] *** on communicator MPI_COMM_WORLD" % (c.nodes[1], r.randint(1000, 99999)))
        L.append("[1,5]<stderr>:[%s:%d] *** MPI_ERR_OTHER: known error not in list" % (c.nodes[1], r.randint(1000, 99999)))
        L.append("[1,5]<stderr>:[%s:%d] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort," % (c.nodes[1], r.randint(1000, 99999)))
        L.append("[1,5]<stderr>:[%s:%d] ***    and potentially your MPI job)" % (c.nodes[1], r.randint(1000, 99999)))
        L.append("--------------------------------------------------------------------------")
        L.append("prterun has exited due to process rank 5 with PID 0 on node %s calling" % c.nodes[1])
        L.append("\"abort\". This may have caused other processes in the application to be")
        L.append("terminated by signals sent by prterun (as reported here).")
        L.append("--------------------------------------------------------------------------")
        return L, 1, "open-mpi/ompi ompi/mca/pml/ucx/pml_ucx.c (ucp_ep_create ... failed), ompi/errhandler (An error occurred in MPI_Allreduce / MPI_ERRORS_ARE_FATAL)"
    # k==6: NCCL unhandled cuda? -> remote peer closed / heartbeat
    training_preamble(c, L, world=16)
    bad = c.nodes[2]
    L.append("%s:%d:%d [3] NCCL WARN NET/IB : Got completion from peer %s<%d> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.3.1.9 remoteGids::ffff:10.3.2.17" % (bad, r.randint(1000, 9999), r.randint(1000, 9999), c.nodes[3], r.randint(10000, 60000)))
    L.append("%s:%d:%d [3] NCCL INFO transport/net.cc:1295 -> 6" % (bad, r.randint(1000, 9999), r.randint(1000, 9999)))
    L.append("%s:%d:%d [3] NCCL INFO proxy.cc:694 -> 6" % (bad, r.randint(1000, 9999), r.randint(1000, 9999)))
    L.append("[rank11]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 11] NCCL watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.19.3")
    L.append("[rank11]: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.")
    L.append("[rank11]: Last error:")
    L.append("[rank11]: NET/IB : Got completion from peer %s<%d> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.3.1.9 remoteGids::ffff:10.3.2.17" % (c.nodes[3], r.randint(10000, 60000)))
    torchrun_fail(c, L, 11, 16, -6, sig="SIGABRT", host=bad)
    srun_fail(c, L, task=2, node=bad)
    return L, 1, "NVIDIA/nccl src/transport/net_ib.cc (NET/IB : Got completion from peer ... with status=12), pytorch ProcessGroupNCCL.cpp (ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely)"


def s_cuda_runtime(c, v):
    r = c.r
    L = []
    k = v % 6
    base, fr = user_frames(c)
    tail = "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.\n"
    prov = "pytorch/pytorch c10/cuda/CUDAException.h / c10/cuda/CUDAFunctions.cpp (CUDA error: ... CUDA kernel errors might be asynchronously reported)"
    if k == 0:
        slurm_header(c, L)
        L.append("+ module load cudatoolkit/12.4")
        L.append("+ python train.py --config configs/base.yaml")
        warnings_block(c, L, 2)
        L.append("%s/torch/cuda/__init__.py:141: UserWarning: CUDA initialization: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver. (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)" % c.sp)
        L.append("  return torch._C._cuda_getDeviceCount() > 0")
        L.append("cuda available: False")
        L += py_tb(c, fr[:1] + [("%s/train.py" % base, 88, "main", "model = build_model(cfg).cuda()"),
                                ("%s/torch/cuda/__init__.py" % c.sp, 302, "_lazy_init", "torch._C._cuda_init()")],
                   "RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver.")
        srun_fail(c, L)
        return L, 1, "pytorch c10/cuda/CUDAFunctions.cpp (The NVIDIA driver on your system is too old)"
    if k == 1:
        training_preamble(c, L, world=4)
        rank = r.randint(0, 3)
        L += py_tb(c, fr + [("%s/model/attention.py" % base, 144, "forward", "attn = torch.matmul(q, k.transpose(-2, -1)) * self.scale")],
                   "RuntimeError: CUDA error: an illegal memory access was encountered\n" + tail, prefix=ddp_prefix(rank))
        L.append("[rank%d]:[E ProcessGroupNCCL.cpp:1182] [Rank %d] NCCL watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered" % (rank, rank))
        L.append("[rank%d]: terminate called after throwing an instance of 'c10::DistBackendError'" % rank)
        for o in range(4):
            if o != rank:
                L.append("[rank%d]:[E ProcessGroupNCCL.cpp:563] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600%03d milliseconds before timing out." % (o, o, r.randint(100, 9000), r.randint(0, 999)))
        torchrun_fail(c, L, rank, 4, -6, sig="SIGABRT")
        return L, 1, prov + "; https://github.com/pytorch/pytorch/issues/21819"
    if k == 2:
        training_preamble(c, L, fmt="hf", world=2)
        for t in range(r.randint(4, 32)):
            L.append("../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [%d,0,0] Assertion `t >= 0 && t < n_classes` failed." % t)
        L += py_tb(c, fr + [("%s/transformers/trainer.py" % c.sp, 3045, "training_step", "self.accelerator.backward(loss)")],
                   "RuntimeError: CUDA error: device-side assert triggered\n" + tail)
        return L, 1, prov + "; aten/src/ATen/native/cuda/Loss.cu (Assertion `t >= 0 && t < n_classes` failed); https://github.com/pytorch/pytorch/issues/1204"
    if k == 3:
        training_preamble(c, L, world=1, nccl=False)
        L += py_tb(c, fr + [("%s/torch/nn/modules/conv.py" % c.sp, 456, "_conv_forward", "return F.conv2d(input, weight, bias, self.stride,")],
                   "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_INITIALIZED")
        srun_fail(c, L)
        return L, 1, "pytorch aten/src/ATen/cudnn/Exceptions.h (cuDNN error: CUDNN_STATUS_NOT_INITIALIZED); https://github.com/pytorch/pytorch/issues/53336"
    if k == 4:
        training_preamble(c, L, world=4)
        L += py_tb(c, fr + [("%s/torch/nn/modules/linear.py" % c.sp, 116, "forward", "return F.linear(input, self.weight, self.bias)")],
                   "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`", prefix="[rank2]:")
        torchrun_fail(c, L, 2, 4, 1)
        return L, 1, "pytorch aten/src/ATen/cuda/CUDABlas.cpp (CUBLAS_STATUS_EXECUTION_FAILED when calling cublasGemmEx); https://github.com/pytorch/pytorch/issues/56747"
    # k==5: CUDA driver version insufficient (TF in container)
    L.append("+ apptainer exec --nv %s/containers/tf-2.15-gpu.sif python train_tf.py" % c.proj)
    L.append("INFO:    Could not find any nv files on this host!")
    for t in TF_INFO[:1]:
        L += t.format(g=c.glog(), gpu=c.gpu).split("\n")
    L.append("%s cuda_driver.cc:282] failed call to cuInit: CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected" % c.glog("E"))
    L.append("%s cuda_diagnostics.cc:176] kernel driver does not appear to be running on this host (%s): /proc/driver/nvidia/version does not exist" % (c.glog("I"), c.host))
    L += py_tb(c, [("/opt/app/train_tf.py", 23, "<module>", "assert tf.config.list_physical_devices('GPU'), 'no GPU'")], "AssertionError: no GPU") if False else []
    L.append("Num GPUs Available:  0")
    L.append("%s gpu_device.cc:2211] Cannot dlopen some GPU libraries. Please make sure the missing libraries mentioned above are installed properly if you would like to use GPU." % c.glog("W"))
    L += py_tb(c, [("/opt/app/train_tf.py", 61, "<module>", "with tf.device('/GPU:0'):"),
                   ("/usr/local/lib/python3.11/dist-packages/tensorflow/python/eager/context.py", 2465, "device", "ensure_initialized()")],
               "RuntimeError: CUDA driver version is insufficient for CUDA runtime version")
    return L, 1, "CUDA runtime cudaErrorInsufficientDriver string 'CUDA driver version is insufficient for CUDA runtime version'; tensorflow xla/stream_executor/cuda/cuda_driver.cc (failed call to cuInit); https://github.com/tensorflow/tensorflow/issues/1829"


def s_ram_oom(c, v):
    r = c.r
    L = []
    base, fr = user_frames(c, "preprocess.py")
    training_preamble(c, L, nsteps=r.randint(0, 40), world=1, nccl=False)
    if v % 3 == 0:
        L += py_tb(c, fr + [("%s/data.py" % base, 77, "build_index", "feats = np.stack([np.load(p) for p in paths])"),
                            ("%s/numpy/core/shape_base.py" % c.sp, 456, "stack", "return _nx.concatenate(expanded_arrays, axis=axis, out=out, dtype=dtype,")],
                   "numpy.core._exceptions._ArrayMemoryError: Unable to allocate 214. GiB for an array with shape (1800000, 128, 250) and data type float32")
        return L, 1, "numpy numpy/core/src/multiarray/alloc.c / _exceptions.py (_ArrayMemoryError: Unable to allocate)"
    if v % 3 == 1:
        L += py_tb(c, fr + [("%s/torch/utils/data/dataloader.py" % c.sp, 1040, "__init__", "w.start()"),
                            ("/usr/lib/python%s/multiprocessing/popen_fork.py" % c.py, 66, "_launch", "self.pid = os.fork()")],
                   "OSError: [Errno 12] Cannot allocate memory")
        return L, 1, "CPython Modules/posixmodule.c os.fork ENOMEM -> OSError: [Errno 12] Cannot allocate memory; https://github.com/pytorch/pytorch/issues/13246"
    L += py_tb(c, fr + [("%s/data.py" % base, 120, "load_all", "self.cache = pickle.load(f)")], "MemoryError")
    return L, 1, "CPython Objects/obmalloc.c PyErr_NoMemory -> MemoryError"


def s_segfault(c, v):
    r = c.r
    L = []
    training_preamble(c, L, world=4)
    if v % 3 == 0:
        base, fr = user_frames(c)
        L.append("ERROR: Unexpected segmentation fault encountered in worker.")
        L += py_tb(c, fr + [("%s/torch/utils/data/dataloader.py" % c.sp, 1133, "_try_get_data", "data = self._data_queue.get(timeout=timeout)"),
                            ("%s/torch/utils/data/_utils/signal_handling.py" % c.sp, 66, "handler", "_error_if_any_worker_fails()")],
                   "RuntimeError: DataLoader worker (pid %d) is killed by signal: Segmentation fault. " % r.randint(1000, 99999))
        L.append("")
        L.append("The above exception was the direct cause of the following exception:")
        L.append("")
        L += py_tb(c, fr + [("%s/torch/utils/data/dataloader.py" % c.sp, 1146, "_try_get_data", "raise RuntimeError(f'DataLoader worker (pid(s) {pids_str}) exited unexpectedly') from e")],
                   "RuntimeError: DataLoader worker (pid(s) %d) exited unexpectedly" % r.randint(1000, 99999))
        srun_fail(c, L)
        return L, 1, "pytorch torch/csrc/DataLoader.cpp (ERROR: Unexpected segmentation fault encountered in worker.), torch/utils/data/dataloader.py (DataLoader worker ... is killed by signal); https://github.com/pytorch/pytorch/issues/5301"
    if v % 3 == 1:
        L.append("Fatal Python error: Segmentation fault")
        L.append("")
        L.append("Thread 0x00007f%010x (most recent call first):" % r.getrandbits(40))
        L.append('  File "/usr/lib/python%s/threading.py", line 324 in wait' % c.py)
        L.append('  File "%s/tqdm/_monitor.py", line 60 in run' % c.sp)
        L.append("")
        L.append("Current thread 0x00007f%010x (most recent call first):" % r.getrandbits(40))
        L.append('  File "%s/apex/normalization/fused_layer_norm.py", line 35 in forward' % c.sp)
        L.append('  File "%s/torch/nn/modules/module.py", line 1520 in _call_impl' % c.sp)
        L.append('  File "%s/code/train.py", line 211 in train_step' % c.home)
        L.append("")
        L.append("Extension modules: numpy.core._multiarray_umath, torch._C, torch._C._fft, torch._C._linalg, torch._C._nn, fused_layer_norm_cuda (total: 6)")
        L.append("/var/spool/slurmd/job%d/slurm_script: line 31: %d Segmentation fault      (core dumped) python train.py --cfg cfg/large.yaml" % (c.jobid, r.randint(1000, 99999)))
        epilog(c, L, "FAILED", "139")
        return L, 139, "CPython Modules/faulthandler.c (Fatal Python error: Segmentation fault); bash 'Segmentation fault (core dumped)'"
    L.append("*** SIGSEGV (@0x0) received by PID %d (TID 0x7f%010x) on cpu %d; stack trace: ***" % (r.randint(1000, 99999), r.getrandbits(40), r.randint(0, 63)))
    L.append("PC: @     0x7f%010x  (unknown)  xla::cpu::CpuExecutable::ExecuteComputeFunction()" % r.getrandbits(40))
    L.append("    @     0x7f%010x        944  (unknown)" % r.getrandbits(40))
    L.append("    @     0x7f%010x  (unknown)  (unknown)" % r.getrandbits(40))
    L.append("https://symbolize.stripped_domain/r/?trace=7f3e8a,7f3e9c&map= ")
    L.append("*** SIGSEGV (@0x0), see go/stacktraces#s15 received by PID %d (TID %d) on cpu %d; stack trace: ***" % (r.randint(1000, 99999), r.randint(1000, 99999), r.randint(0, 63)))
    srun_fail(c, L, what="Segmentation fault")
    return L, 139, "abseil absl/debugging/failure_signal_handler.cc (*** SIGSEGV received by PID ... stack trace: ***); slurm srun 'task N: Segmentation fault'"


def s_file_not_found(c, v):
    r = c.r
    L = []
    base, fr = user_frames(c)
    k = v % 4
    if k == 0:  # scratch purge
        training_preamble(c, L, nsteps=0, world=1, nccl=False)
        L.append("NOTICE: files on %s not accessed in 60 days are purged; see https://docs.%s.edu/purge" % (c.scratch, c.cluster))
        path = "%s/%s/data/shards/train-000%02d-of-00128.arrow" % (c.scratch, c.user, r.randint(10, 99))
        L += py_tb(c, fr + [("%s/datasets/arrow_reader.py" % c.sp, 346, "read_table", "return read_table(filename, in_memory=in_memory)")],
                   "FileNotFoundError: [Errno 2] No such file or directory: '%s'" % path)
        srun_fail(c, L)
        return L, 1, "CPython FileNotFoundError [Errno 2] No such file or directory; HF datasets arrow_reader.py"
    if k == 1:  # HF hub offline / local dataset path
        slurm_header(c, L)
        L.append("+ export HF_DATASETS_OFFLINE=1 TRANSFORMERS_OFFLINE=1")
        warnings_block(c, L, 2)
        L += py_tb(c, fr[:1] + [("%s/datasets/load.py" % c.sp, 2556, "load_dataset", "builder_instance = load_dataset_builder("),
                                ("%s/datasets/load.py" % c.sp, 1879, "dataset_module_factory", "raise FileNotFoundError(")],
                   "FileNotFoundError: Couldn't find a dataset script at %s/code/proj/wikitext_local/wikitext_local.py or any data file in the same directory." % c.home)
        return L, 1, "huggingface/datasets src/datasets/load.py (Couldn't find a dataset script at ... or any data file in the same directory)"
    if k == 2:  # apptainer image missing
        slurm_header(c, L)
        L.append("+ apptainer exec --nv -B %s:/data %s/containers/pytorch_24.01.sif torchrun --nproc_per_node=4 train.py" % (c.scratch, c.scratch))
        L.append("FATAL:   could not open image %s/containers/pytorch_24.01.sif: failed to retrieve path for %s/containers/pytorch_24.01.sif: lstat %s/containers: no such file or directory" % (c.scratch, c.scratch, c.scratch))
        epilog(c, L, "FAILED", "255", elapsed="00:00:03")
        return L, 255, "apptainer/apptainer cmd/internal/cli (FATAL: could not open image ...: failed to retrieve path for ...: lstat ...: no such file or directory); https://github.com/apptainer/singularity/issues/4017"
    training_preamble(c, L, fmt="lightning", world=4, nsteps=r.randint(50, 150))
    ck = "%s/checkpoints/epoch=%d-step=%d.ckpt" % (c.run, r.randint(1, 9), r.randint(1000, 9000))
    L += py_tb(c, fr + [("%s/lightning/pytorch/trainer/trainer.py" % c.sp, 544, "fit", "call._call_and_handle_interrupt("),
                        ("%s/lightning/fabric/utilities/cloud_io.py" % c.sp, 52, "_load", "with fs.open(path_or_url, \"rb\") as f:"),
                        ("%s/fsspec/implementations/local.py" % c.sp, 316, "_open", "self.f = open(self.path, mode=self.mode)")],
               "FileNotFoundError: [Errno 2] No such file or directory: '%s'" % ck, prefix="[rank: 0] ")
    return L, 1, "lightning src/lightning/fabric/utilities/cloud_io.py; fsspec local.py open -> FileNotFoundError"


def s_permission(c, v):
    r = c.r
    L = []
    base, fr = user_frames(c)
    training_preamble(c, L, world=2, nsteps=r.randint(20, 150))
    if v % 3 == 0:
        d = "%s/shared/checkpoints/%s" % (c.proj, c.model)
        L += py_tb(c, fr + [("%s/transformers/trainer.py" % c.sp, 2457, "_save_checkpoint", "os.makedirs(output_dir, exist_ok=True)"),
                            ("<frozen os>", 225, "makedirs", None)],
                   "PermissionError: [Errno 13] Permission denied: '%s/checkpoint-%d'" % (d, r.randint(1, 50) * 500))
        return L, 1, "CPython PermissionError [Errno 13] Permission denied; transformers trainer.py _save_checkpoint"
    if v % 3 == 1:
        L += py_tb(c, fr + [("%s/torch/serialization.py" % c.sp, 628, "save", "with _open_zipfile_writer(f) as opened_zipfile:")],
                   "OSError: [Errno 30] Read-only file system: '/opt/app/outputs/model_final.pt'")
        L.append("INFO:    Cleanup error: while unmounting /var/lib/apptainer/mnt/session/final directory: device or resource busy" if r.random() < 0.3 else "")
        return L, 1, "CPython OSError [Errno 30] Read-only file system (EROFS inside an apptainer SIF)"
    L.append("[rank0]: %s/huggingface_hub/utils/_cache_manager.py:? " % c.sp if False else "")
    L += py_tb(c, fr + [("%s/huggingface_hub/file_download.py" % c.sp, 1397, "hf_hub_download", "with WeakFileLock(lock_path):"),
                        ("%s/filelock/_api.py" % c.sp, 297, "acquire", "self._acquire()"),
                        ("%s/filelock/_unix.py" % c.sp, 42, "_acquire", "fd = os.open(self.lock_file, open_flags, self._context.mode)")],
               "PermissionError: [Errno 13] Permission denied: '/shared/hf_cache/hub/.locks/models--%s/%s.lock'" % (c.model, "".join(r.choice("0123456789abcdef") for _ in range(40))))
    return L, 1, "huggingface_hub file_download.py + filelock _unix.py -> PermissionError [Errno 13]; https://github.com/huggingface/huggingface_hub/issues/1368"


def s_missing_module(c, v):
    r = c.r
    L = []
    k = v % 6
    slurm_header(c, L)
    if k == 0:
        L.append("+ python -c 'import tensorflow as tf; print(tf.config.list_physical_devices())'")
        L += py_tb(c, [("<string>", 1, "<module>", None),
                       ("%s/tensorflow/__init__.py" % c.sp, 37, "<module>", "from tensorflow.python.tools import module_util as _module_util"),
                       ("%s/tensorflow/python/pywrap_tensorflow.py" % c.sp, 73, "<module>", "from tensorflow.python._pywrap_tensorflow_internal import *")],
                   "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory")
        return L, 1, "glibc dlopen error text; https://github.com/microsoft/onnxruntime-genai/issues/344; https://github.com/apache/mxnet/issues/20953"
    if k == 1:
        L.append("+ python train.py")
        L += py_tb(c, [("%s/code/train.py" % c.home, 4, "<module>", "import torch"),
                       ("%s/torch/__init__.py" % c.sp, 237, "<module>", "from torch._C import *  # noqa: F403")],
                   "ImportError: /lib64/libc.so.6: version `GLIBC_2.28' not found (required by %s/torch/lib/libtorch_cpu.so)" % c.sp)
        return L, 1, "glibc ld.so 'version `GLIBC_2.28' not found (required by ...)'; https://github.com/realvnc-labs/rport/issues/490"
    if k == 2:
        training_preamble(c, L, world=4, nsteps=0)
        L += py_tb(c, [("%s/code/llm/train.py" % c.home, 12, "<module>", "from flash_attn import flash_attn_func"),
                       ("%s/flash_attn/__init__.py" % c.sp, 3, "<module>", "from flash_attn.flash_attn_interface import ("),
                       ("%s/flash_attn/flash_attn_interface.py" % c.sp, 10, "<module>", "import flash_attn_2_cuda as flash_attn_cuda")],
                   "ImportError: %s/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi" % c.sp, prefix="[rank0]:")
        torchrun_fail(c, L, 0, 4, 1)
        return L, 1, "Dao-AILab/flash-attention flash_attn_interface.py import; https://github.com/Dao-AILab/flash-attention/issues/620 (undefined symbol)"
    if k == 3:
        L.append("Lmod has detected the following error:  The following module(s) are unknown: \"cudnn/8.2-cuda11\"")
        L.append("")
        L.append("Please check the spelling or version number. Also try \"module spider ...\"")
        L.append("It is also possible your cache file is out-of-date; it may help to try:")
        L.append("  $ module --ignore_cache load \"cudnn/8.2-cuda11\"")
        L.append("")
        L.append("+ python train.py")
        L += py_tb(c, [("%s/code/train.py" % c.home, 7, "<module>", "import horovod.torch as hvd")],
                   "ModuleNotFoundError: No module named 'horovod'")
        return L, 1, "TACC/Lmod (Lmod has detected the following error:  The following module(s) are unknown); https://github.com/TACC/Lmod/issues/97; CPython ModuleNotFoundError"
    if k == 4:
        L.append("/var/spool/slurmd/job%d/slurm_script: line 14: conda: command not found" % c.jobid)
        L.append("+ python train.py --deepspeed ds_config.json")
        L += py_tb(c, [("%s/code/train.py" % c.home, 3, "<module>", "import transformers")],
                   "ModuleNotFoundError: No module named 'transformers'")
        return L, 1, "CPython ModuleNotFoundError: No module named (system python used because conda activate failed in batch shell)"
    L.append("+ python -m torch.distributed.run --nproc_per_node=8 pretrain.py")
    L += py_tb(c, [("%s/code/pretrain.py" % c.home, 9, "<module>", "import deepspeed"),
                   ("%s/deepspeed/__init__.py" % c.sp, 25, "<module>", "from . import ops"),
                   ("%s/deepspeed/ops/adam/fused_adam.py" % c.sp, 13, "<module>", "from deepspeed.ops.op_builder import FusedAdamBuilder"),
                   ("%s/torch/utils/cpp_extension.py" % c.sp, 2107, "_import_module_from_library", "module = importlib.util.module_from_spec(spec)")],
               "ImportError: %s/.cache/torch_extensions/py310_cu121/fused_adam/fused_adam.so: cannot open shared object file: No such file or directory" % c.home)
    return L, 1, "pytorch torch/utils/cpp_extension.py _import_module_from_library; https://github.com/microsoft/DeepSpeed/issues/3097"


def s_div_zero(c, v):
    r = c.r
    L = []
    base, fr = user_frames(c)
    training_preamble(c, L, world=1, nccl=False)
    if v % 3 == 0:
        L.append("Evaluating: 0 batches (val split empty after filtering)")
        L += py_tb(c, fr + [("%s/evaluate.py" % base, 58, "evaluate", "return total_correct / total_seen")], "ZeroDivisionError: division by zero")
    elif v % 3 == 1:
        L += py_tb(c, fr + [("%s/sched.py" % base, 21, "warmup_lr", "return base_lr * step // warmup_steps")], "ZeroDivisionError: integer division or modulo by zero")
    else:
        L += py_tb(c, fr + [("%s/transformers/trainer.py" % c.sp, 1926, "_inner_training_loop", "self.state.epoch = epoch + (step + 1 + steps_skipped) / steps_in_epoch")],
                   "ZeroDivisionError: float division by zero")
    srun_fail(c, L)
    return L, 1, "CPython Objects/floatobject.c / longobject.c (ZeroDivisionError: division by zero / integer division or modulo by zero / float division by zero)"


def s_device_mismatch(c, v):
    r = c.r
    L = []
    base, fr = user_frames(c)
    k = v % 4
    if k == 0:
        training_preamble(c, L, world=1, nccl=False, nsteps=r.randint(0, 10))
        L += py_tb(c, fr + [("%s/model.py" % base, 90, "forward", "x = x + self.pos_emb[:, :T]")],
                   "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!")
        return L, 1, "pytorch aten/src/ATen/native/TensorIterator / TensorCompare (Expected all tensors to be on the same device, but found at least two devices); https://github.com/pytorch/pytorch/issues/84803"
    if k == 1:
        L.append("WARNING:root:PJRT is now the default runtime. For more information, see https://github.com/pytorch/xla/blob/master/docs/pjrt.md")
        L.append("WARNING:pt-xla-profiler:TransferFromServerTime too frequent: 30 counts during 10 steps")
        steps(c, L, 0, r.randint(5, 40), every=10)
        L += py_tb(c, fr + [("%s/torch_xla/distributed/xla_multiprocessing.py" % c.sp, 202, "_mp_start_fn", "fn(gindex, *args)"),
                            ("%s/model.py" % base, 71, "forward", "h = torch.cat([h, self.memory], dim=1)")],
                   "RuntimeError: torch_xla/csrc/aten_xla_bridge.cpp:110 : Check failed: xtensor \n*** Begin stack trace ***\n\ttsl::CurrentStackTrace()\n*** End stack trace ***\nInput tensor is not an XLA tensor: CPUFloatType")
        return L, 1, "pytorch/xla torch_xla/csrc/aten_xla_bridge.cpp (Input tensor is not an XLA tensor); https://github.com/pytorch/xla/issues/3573"
    if k == 2:
        L.append("Using device: mps")
        L.append("%s/torch/amp/autocast_mode.py:250: UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling" % c.sp)
        steps(c, L, 0, r.randint(5, 40), every=5)
        L += py_tb(c, fr + [("%s/torch/nn/functional.py" % c.sp, 2237, "embedding", "return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)")],
                   "RuntimeError: Placeholder storage has not been allocated on MPS device!")
        return L, 1, "pytorch aten/src/ATen/native/mps/OperationUtils.mm (Placeholder storage has not been allocated on MPS device!); https://github.com/pytorch/pytorch/issues/79995"
    training_preamble(c, L, world=4, nsteps=0)
    L += py_tb(c, fr + [("%s/accelerate/big_modeling.py" % c.sp, 418, "dispatch_model", "model.to(device)"),
                        ("%s/torch/nn/modules/module.py" % c.sp, 1158, "convert", "return t.to(device, dtype if t.is_floating_point() or t.is_complex() else None, non_blocking)")],
               "NotImplementedError: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() when moving module from meta to a different device.", prefix="[rank1]:")
    torchrun_fail(c, L, 1, 4, 1)
    return L, 1, "pytorch torch/nn/modules/module.py (Cannot copy out of meta tensor; no data!); https://github.com/huggingface/accelerate/issues/1640"


def s_nan(c, v):
    r = c.r
    L = []
    k = v % 5
    if k == 0:  # deepspeed loss scale min
        training_preamble(c, L, fmt="ds", world=8)
        sc = 65536.0
        while sc > 1:
            L.append("[%s,%03d] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d" % (c.stamp(), r.randint(0, 999), int(sc), int(sc / 2)))
            sc /= 2
        L.append("Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.")
        L += py_tb(c, [("%s/code/pretrain.py" % c.home, 318, "<module>", "main()"),
                       ("%s/deepspeed/runtime/fp16/loss_scaler.py" % c.sp, 175, "update_scale", "raise Exception(")],
                   "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.", prefix="0: ")
        L.append("[%s] [ERROR] [launch.py:321:sigkill_handler] ['%s/bin/python', '-u', 'pretrain.py', '--local_rank=0'] exits with return code = 1" % (c.stamp(), c.env))
        return L, 1, "microsoft/DeepSpeed deepspeed/runtime/fp16/loss_scaler.py (Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.)"
    if k in (1, 2):  # exits 0 with nan throughout
        training_preamble(c, L, world=4, nsteps=r.randint(20, 60))
        s0 = r.randint(3, 30) * 100
        for s in range(s0, s0 + r.randint(80, 300) * 10, 10):
            L.append("%s | step %6d | loss nan | lr %.3e | grad_norm nan | %.1f samples/s" % (c.stamp(), s, 2e-4, r.uniform(100, 900)))
            if r.random() < 0.05:
                L.append("eval @ step %d: val_loss=nan val_ppl=nan" % s)
        L.append("Training complete. Saving final model to %s/final" % c.run)
        wandb_teardown(c, L, ok=True)
        epilog(c, L, "COMPLETED", "0")
        return L, 0, "user-side training loop; loss/grad_norm NaN format (no framework stop) - run exits 0 with NaN to the end"
    if k == 3:  # lightning detect_anomaly / check_finite
        training_preamble(c, L, fmt="lightning", world=1, nccl=False)
        L += py_tb(c, [("%s/lightning/pytorch/loops/optimization/automatic.py" % c.sp, 312, "_training_step", "training_step_output = call._call_strategy_hook(trainer, \"training_step\", *kwargs.values())"),
                       ("%s/lightning/pytorch/utilities/finite_checks.py" % c.sp, 43, "detect_nan_parameters", "raise ValueError(")],
                   "ValueError: Detected nan and/or inf values in `model.decoder.layers.3.fc1.weight`. Check your forward pass for numerically unstable operations.")
        return L, 1, "Lightning src/lightning/pytorch/utilities/finite_checks.py (Detected nan and/or inf values in ...)"
    training_preamble(c, L, fmt="hf", world=2, nsteps=r.randint(30, 90))
    L.append("{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 1.9e-05, 'epoch': 1.23}")
    L.append("{'loss': 0.0, 'grad_norm': nan, 'learning_rate': 1.89e-05, 'epoch': 1.25}")
    L += py_tb(c, [("%s/code/ft/train.py" % c.home, 210, "<module>", "trainer.train()"),
                   ("%s/code/ft/callbacks.py" % c.home, 40, "on_log", "raise RuntimeError(f'Loss is {logs[\"loss\"]}, grad_norm is {gn}, stopping training')")],
               "RuntimeError: Loss is 0.0, grad_norm is nan, stopping training")
    return L, 1, "transformers trainer log dict format ('grad_norm': nan); user NaN-guard callback. Judgment: nan_loss, not runtime_error"


def s_oom_killer(c, v):
    r = c.r
    L = []
    k = v % 6
    training_preamble(c, L, world=4, nsteps=r.randint(30, 250))
    if k == 0:
        L.append("/var/spool/slurmd/job%d/slurm_script: line 27: %d Killed                  torchrun --nproc_per_node=4 train.py" % (c.jobid, r.randint(1000, 99999)))
        L.append("slurmstepd: error: Detected 1 oom_kill event in StepId=%d.batch. Some of the step tasks have been OOM Killed." % c.jobid)
        epilog(c, L, "OUT_OF_MEMORY", "0:125")
        return L, 137, "SchedMD/slurm src/plugins/task/cgroup (Detected %u oom_kill event in %ps. Some of the step tasks have been OOM Killed.); https://github.com/nextflow-io/nextflow/issues/5932; https://github.com/ArjunaCluster/ArjunaUsers/issues/52"
    if k == 1:
        L.append("slurmstepd: error: Detected 3 oom_kill events in StepId=%d.0. Some of the step tasks have been OOM Killed." % c.jobid)
        L.append("srun: error: %s: task 0: Out Of Memory" % c.host)
        L.append("srun: Terminating StepId=%d.0" % c.jobid)
        L.append("slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (c.jobid, c.host, c.iso()))
        for t in range(1, 4):
            L.append("srun: error: %s: task %d: Killed" % (c.host, t))
        return L, 137, "SchedMD/slurm (srun: error: %s: task %d: Out Of Memory); https://github.com/chrisknewman/tusas/issues/149; https://github.com/hafs-community/HAFS/issues/101"
    if k == 2:
        L.append("=>> PBS: job killed: mem %dkb exceeded limit %dkb" % (r.randint(130000000, 140000000), 125829120))
        return L, 137, "openpbs src/resmom/mom_main.c (=>> PBS: job killed: mem ... exceeded limit ...)"
    if k == 3:
        L.append("")
        L.append("------------------------------------------------------------")
        L.append("Sender: LSF System <lsfadmin@%s>" % c.host)
        L.append("Subject: Job %d: <train_%s> in cluster <%s> Exited" % (c.jobid, c.model, c.cluster))
        L.append("")
        L.append("Job <train_%s> was submitted from host <login01> by user <%s> in cluster <%s>." % (c.model, c.user, c.cluster))
        L.append("Job was executed on host(s) <4*%s>, in queue <gpu>, as user <%s> in cluster <%s>." % (c.host, c.user, c.cluster))
        L.append("------------------------------------------------------------")
        L.append("")
        L.append("TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.")
        L.append("Exited with exit code 137.")
        L.append("")
        L.append("Resource usage summary:")
        L.append("")
        L.append("    CPU time :                                   %.2f sec." % r.uniform(1000, 90000))
        L.append("    Max Memory :                                 %d MB" % r.randint(64000, 130000))
        L.append("    Total Requested Memory :                     64000.00 MB")
        L.append("    Max Processes :                              %d" % r.randint(10, 40))
        L.append("    Run time :                                   %d sec." % r.randint(600, 40000))
        return L, 137, "IBM Spectrum LSF job report (TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.); https://github.com/marbl/canu/issues/444 (LSF report layout)"
    if k == 4:
        L.append("Killed")
        L.append("[%s] kernel: Out of memory: Killed process %d (python) total-vm:%dkB, anon-rss:%dkB, file-rss:%dkB, shmem-rss:%dkB, UID:%d pgtables:%dkB oom_score_adj:0" % (
            c.stamp(), r.randint(1000, 99999), r.randint(10**8, 4 * 10**8), r.randint(10**8, 2 * 10**8), r.randint(10**4, 10**6), r.randint(10**4, 10**6), r.randint(1000, 60000), r.randint(10**4, 10**6)))
        L.append("(dmesg excerpt attached by user)")
        return L, 137, "Linux mm/oom_kill.c (Out of memory: Killed process %d (%s) total-vm:...)"
    L.append("Stream closed EOF for ml-jobs/%s-trainer-0 (trainer)" % c.model)
    L.append("$ kubectl describe pod %s-trainer-0 | grep -A3 'Last State'" % c.model)
    L.append("    Last State:     Terminated")
    L.append("      Reason:       OOMKilled")
    L.append("      Exit Code:    137")
    return L, 137, "kubernetes pod status (Reason: OOMKilled, Exit Code: 137)"


def s_traceback(c, v):
    r = c.r
    L = []
    base, fr = user_frames(c)
    training_preamble(c, L, fmt="hf", world=1, nccl=False, nsteps=r.randint(0, 100))
    k = v % 4
    if k == 0:
        L += py_tb(c, fr + [("%s/data.py" % base, 44, "__getitem__", "text = ex['sentence']")], "KeyError: 'sentence'")
    elif k == 1:
        L += py_tb(c, fr + [("%s/transformers/data/data_collator.py" % c.sp, 92, "default_data_collator", "return torch_default_data_collator(features)")],
                   "ValueError: Unable to create tensor, you should probably activate truncation and/or padding with 'padding=True' 'truncation=True' to have batched tensors with the same length. Perhaps your features (`labels` in this case) have excessive nesting (inputs type `list` where type `int` is expected).")
    elif k == 2:
        L += py_tb(c, fr + [("%s/utils.py" % base, 12, "log_metrics", "wandb.log({'lr': sched.get_last_lr()[0] + ' warmup'})")],
                   "TypeError: unsupported operand type(s) for +: 'float' and 'str'")
    else:
        L += py_tb(c, fr + [("%s/omegaconf/dictconfig.py" % c.sp, 355, "_get_impl", None)],
                   "omegaconf.errors.ConfigAttributeError: Key 'warmup_ratio' is not in struct\n    full_key: optim.warmup_ratio\n    object_type=dict")
    wandb_teardown(c, L)
    srun_fail(c, L)
    return L, 1, "CPython KeyError/TypeError; transformers tokenization_utils_base.py (Unable to create tensor...); omegaconf errors (Key ... is not in struct)"


def s_assertion(c, v):
    r = c.r
    L = []
    base, fr = user_frames(c)
    training_preamble(c, L, world=2, nsteps=r.randint(0, 60))
    if v % 3 == 0:
        L += py_tb(c, fr + [("%s/torch/distributed/fsdp/_flat_param.py" % c.sp, 1450, "_use_unsharded_views", None)],
                   "AssertionError: Expects to be in the `TrainingState.FORWARD_BACKWARD` state", prefix="[rank1]:")
        torchrun_fail(c, L, 1, 2, 1)
    elif v % 3 == 1:
        L += py_tb(c, fr + [("%s/model.py" % base, 33, "__init__", "assert config.n_embd % config.n_head == 0")], "AssertionError")
    else:
        L += py_tb(c, fr + [("%s/data.py" % base, 101, "collate", "assert len(batch['input_ids']) == len(batch['labels']), f'{len(batch[\"input_ids\"])} != {len(batch[\"labels\"])}'")],
                   "AssertionError: 512 != 511")
    return L, 1, "CPython AssertionError; pytorch torch/distributed/fsdp/_flat_param.py (Expects to be in the ... state)"


def s_runtime_error(c, v):
    r = c.r
    L = []
    base, fr = user_frames(c)
    training_preamble(c, L, world=4, nsteps=r.randint(0, 80))
    k = v % 4
    if k == 0:
        L += py_tb(c, fr + [("%s/torch/_tensor.py" % c.sp, 522, "backward", "torch.autograd.backward(")],
                   "RuntimeError: Expected to mark a variable ready only once. This error is caused by one of the following reasons: 1) Use of a module parameter outside the `forward` function. Please make sure model parameters are not shared across multiple concurrent forward-backward passes. or try to use _set_static_graph() as a workaround if this module graph does not change during training loop.2) Reused parameters in multiple reentrant backward passes. For example, if you use multiple `checkpoint` functions to wrap the same part of your model, it would result in the same set of parameters been used by different reentrant backward passes multiple times, and hence marking a variable ready multiple times. DDP does not support such use cases in default. You can try to use _set_static_graph() as a workaround if your module graph does not change over iterations.", prefix="[rank0]:")
        torchrun_fail(c, L, 0, 4, 1)
        return L, 1, "pytorch torch/csrc/distributed/c10d/reducer.cpp (Expected to mark a variable ready only once)"
    if k == 1:
        L += py_tb(c, fr + [("%s/torch/autograd/__init__.py" % c.sp, 266, "backward", "Variable._execution_engine.run_backward(")],
                   "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.")
        return L, 1, "pytorch torch/csrc/autograd/saved_variable.cpp (Trying to backward through the graph a second time)"
    if k == 2:
        L += py_tb(c, fr + [("%s/torch/nn/modules/module.py" % c.sp, 2153, "load_state_dict", "raise RuntimeError('Error(s) in loading state_dict for {}:\\n\\t{}'.format(")],
                   "RuntimeError: Error(s) in loading state_dict for DistributedDataParallel:\n\tMissing key(s) in state_dict: \"module.encoder.layer.0.attention.self.query.weight\", \"module.encoder.layer.0.attention.self.query.bias\". \n\tUnexpected key(s) in state_dict: \"encoder.layer.0.attention.self.query.weight\", \"encoder.layer.0.attention.self.query.bias\". ")
        return L, 1, "pytorch torch/nn/modules/module.py load_state_dict (Error(s) in loading state_dict for)"
    L += py_tb(c, fr + [("%s/model.py" % base, 61, "forward", "x = x.view(B, T, self.n_head, C // self.n_head)")],
               "RuntimeError: shape '[16, 1024, 12, 64]' is invalid for input of size 12582912")
    return L, 1, "pytorch aten/src/ATen/InferSize.h (shape ... is invalid for input of size)"


def s_gpu_hw(c, v):
    r = c.r
    L = []
    k = v % 5
    bus = "0000:%02x:00" % r.choice([0x07, 0x0F, 0x47, 0x4E, 0x87, 0x90, 0xB7, 0xBD])
    if k == 0:  # fallen off bus on one rank; others NCCL
        training_preamble(c, L, world=8)
        L.append("[%s] NVRM: Xid (PCI:%s): 79, pid=%d, GPU has fallen off the bus." % (c.stamp(), bus, r.randint(1000, 99999)))
        L.append("[%s] NVRM: GPU %s.0: GPU has fallen off the bus." % (c.stamp(), bus))
        L += py_tb(c, [("%s/code/train.py" % c.home, 301, "train_step", "loss.backward()")],
                   "RuntimeError: CUDA error: unspecified launch failure\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.", prefix="[rank3]:")
        for o in [0, 1, 2, 4, 5, 6, 7]:
            L.append("[rank%d]:[E ProcessGroupNCCL.cpp:563] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 600%03d milliseconds before timing out." % (o, o, 4411, 25165824, 25165824, r.randint(0, 999)))
        torchrun_fail(c, L, 3, 8, 1)
        return L, 1, "NVIDIA driver NVRM Xid 79 'GPU has fallen off the bus' (https://github.com/NVIDIA/NVSentinel/issues/155, https://github.com/NVIDIA/open-gpu-kernel-modules/issues/507); pytorch ProcessGroupNCCL watchdog"
    if k == 1:
        training_preamble(c, L, world=4, fmt="hf")
        L += py_tb(c, [("%s/code/train.py" % c.home, 190, "<module>", "trainer.train()"),
                       ("%s/accelerate/accelerator.py" % c.sp, 1966, "backward", "loss.backward(**kwargs)")],
                   "RuntimeError: CUDA error: uncorrectable ECC error encountered\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", prefix="[rank2]:")
        torchrun_fail(c, L, 2, 4, 1)
        L.append("--- support desk: nvidia-smi -q -d ECC on %s ---" % c.host)
        L.append("        Volatile")
        L.append("            SRAM Correctable              : 0")
        L.append("            SRAM Uncorrectable            : 0")
        L.append("            DRAM Correctable              : %d" % r.randint(0, 20))
        L.append("            DRAM Uncorrectable            : %d" % r.randint(1, 8))
        return L, 1, "CUDA cudaErrorECCUncorrectable string; https://github.com/huggingface/accelerate/issues/1192; https://github.com/vllm-project/vllm/issues/5222"
    if k == 2:  # Xid 48 DBE + Xid 63
        training_preamble(c, L, world=4)
        L.append("[%s] NVRM: Xid (PCI:%s): 48, pid=%d, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0." % (c.stamp(), bus, r.randint(1000, 99999)))
        L.append("[%s] NVRM: Xid (PCI:%s): 63, pid=%d, name=python, Row Remapper: New row (0x%08x) marked for remapping, reset gpu to activate." % (c.stamp(), bus, r.randint(1000, 99999), r.getrandbits(28)))
        L.append("[rank1]: terminate called after throwing an instance of 'c10::Error'")
        L.append("[rank1]:   what():  CUDA error: uncorrectable ECC error encountered")
        L.append("[rank1]: Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44 (most recent call first):")
        torchrun_fail(c, L, 1, 4, -6, sig="SIGABRT")
        return L, 1, "NVIDIA Xid catalog (Xid 48 DBE, Xid 63 row remapping) as printed by NVRM; pytorch c10/cuda/CUDAException.cpp"
    if k == 3:  # GPU is lost
        training_preamble(c, L, world=2, nsteps=r.randint(20, 100))
        L.append("[%s] NVRM: Xid (PCI:%s): 119, pid=%d, name=python, Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20800a4c 0x4)." % (c.stamp(), bus, r.randint(1000, 99999)))
        L.append("$ nvidia-smi")
        L.append("Unable to determine the device handle for GPU%s.0: Unknown Error" % bus)
        L.append("No devices were found")
        L += py_tb(c, [("%s/code/train.py" % c.home, 211, "train_step", "torch.cuda.synchronize()")],
                   "RuntimeError: CUDA error: unknown error\nCUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\nFor debugging consider passing CUDA_LAUNCH_BLOCKING=1.")
        srun_fail(c, L)
        L.append("slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***" % (c.jobid, c.host, c.iso()) if r.random() < 0.3 else "")
        return L, 1, "NVIDIA Xid 119 GSP RPC timeout (NVRM); nvidia-smi 'Unable to determine the device handle for GPU'"
    # jax/tf variant
    L.append("I%s absl] Training on 4 local devices" % c.stamp("%m%d %H:%M:%S"))
    steps(c, L, 0, r.randint(40, 200), every=100, fmt="jax")
    L.append("[%s] NVRM: Xid (PCI:%s): 79, pid=%d, GPU has fallen off the bus." % (c.stamp(), bus, r.randint(1000, 99999)))
    L.append("%s pjrt_stream_executor_client.cc:2809] Execution of replica 2 failed: INTERNAL: Failed to complete all kernels launched on stream 0x55c1e8: CUDA error: Failed to synchronize stream: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure" % c.glog("E"))
    L.append("%s cuda_driver.cc:1090] could not synchronize on CUDA context: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure :: *** Begin stack trace ***" % c.glog("F"))
    L.append("*** Check failure stack trace: ***")
    L.append("    @     0x7f%010x  absl::lts_20230802::log_internal::LogMessageFatal::~LogMessageFatal()" % r.getrandbits(40))
    L.append("Fatal Python error: Aborted")
    srun_fail(c, L, task=0, what="Aborted")
    return L, 134, "NVRM Xid 79 line; openxla/xla pjrt_stream_executor_client.cc + stream_executor cuda_driver.cc Check failure. Judgment: gpu_hardware (abort is the consequence)"


def s_disk_full(c, v):
    r = c.r
    L = []
    base, fr = user_frames(c)
    training_preamble(c, L, world=2, nsteps=r.randint(40, 200))
    k = v % 4
    if k == 0:
        L += py_tb(c, fr + [("%s/torch/serialization.py" % c.sp, 629, "save", "_save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)"),
                            ("%s/torch/serialization.py" % c.sp, 863, "_save", "zip_file.write_record(name, storage, num_bytes)")],
                   "RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos 1602112064 vs 1602111952")
        L.append("")
        L.append("During handling of the above exception, another exception occurred:")
        L.append("")
        L += py_tb(c, fr + [("%s/torch/serialization.py" % c.sp, 628, "save", "with _open_zipfile_writer(f) as opened_zipfile:")],
                   "OSError: [Errno 122] Disk quota exceeded")
        L.append("(support desk note: `myquota` shows %s/%s at 100%% of 50 GB)" % (c.home, "") if r.random() < 0.5 else "")
        return L, 1, "pytorch caffe2/serialize/inline_container.cc (unexpected pos); EDQUOT strerror 'Disk quota exceeded'; https://github.com/pytorch/pytorch/issues/31337"
    if k == 1:
        L += py_tb(c, fr + [("%s/datasets/arrow_writer.py" % c.sp, 584, "write_table", "self.pa_writer.write_table(pa_table, writer_batch_size)")],
                   "OSError: [Errno 28] No space left on device")
        return L, 1, "huggingface/datasets arrow_writer.py; ENOSPC strerror 'No space left on device'"
    if k == 2:
        L.append("cp: error writing '%s/%s/ckpt/step_%d/model.safetensors': Disk quota exceeded" % (c.scratch, c.user, r.randint(1, 99) * 1000))
        L.append("lfs quota: user %s exceeded block quota on %s" % (c.user, c.scratch) if r.random() < 0.5 else "")
        L.append("/var/spool/slurmd/job%d/slurm_script: line 44: python: exit 0 but copy step failed; set -e" % c.jobid if False else "")
        epilog(c, L, "FAILED", "1")
        return L, 1, "GNU coreutils cp (error writing ...: Disk quota exceeded)"
    L.append("%s/torch/utils/data/_utils/collate.py: UserWarning: nothing" % c.sp if False else "")
    L.append("terminate called after throwing an instance of 'std::runtime_error'")
    L.append("  what():  [enforce fail at inline_container.cc:764] . PytorchStreamWriter failed writing file data/17: file write failed")
    L.append("/var/spool/slurmd/job%d/slurm_script: line 30: %d Aborted                 (core dumped) python train.py" % (c.jobid, r.randint(1000, 99999)))
    L.append("write error: No space left on device")
    epilog(c, L, "FAILED", "134")
    return L, 134, "pytorch caffe2/serialize/inline_container.cc (PytorchStreamWriter failed writing file ...: file write failed); https://github.com/pytorch/pytorch/issues/80000 class of reports. Judgment: disk_full (abort after write failure on full /tmp)"


def s_walltime(c, v):
    r = c.r
    L = []
    k = v % 5
    training_preamble(c, L, world=4, nsteps=r.randint(100, 400))
    if k == 0:
        L.append("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
        L.append("slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (c.jobid, c.host, c.iso()))
        L.append("slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (c.jobid, c.host, c.iso()))
        for rk in range(4):
            L.append("[rank%d]: received SIGTERM, shutting down" % rk if r.random() < 0.3 else "W%s torch/distributed/elastic/agent/server/api.py:741] Received Signals.SIGTERM death signal, shutting down workers" % c.stamp("%m%d %H:%M:%S.000000"))
        L += py_tb(c, [("%s/torch/distributed/elastic/multiprocessing/api.py" % c.sp, 62, "_terminate_process_handler", "raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)")],
                   "torch.distributed.elastic.multiprocessing.api.SignalException: Process %d got signal: 15" % r.randint(1000, 99999))
        srun_fail(c, L, what="Exited with exit code 1")
        epilog(c, L, "TIMEOUT", "0:0", elapsed="24:00:%02d" % r.randint(10, 40))
        return L, 143, P_SLURM
    if k == 1:
        L.append("=>> PBS: job killed: walltime %d exceeded limit %d" % (172800 + r.randint(5, 30), 172800))
        return L, 271, "openpbs mom (=>> PBS: job killed: walltime %ld exceeded limit %ld); https://github.com/marbl/canu/issues/1214; https://github.com/biocore/qiime/issues/1048"
    if k == 2:
        L.append("User defined signal 2")
        L.append("")
        L.append("------------------------------------------------------------")
        L.append("Sender: LSF System <lsfadmin@%s>" % c.host)
        L.append("Subject: Job %d: <ddp_%s> in cluster <%s> Exited" % (c.jobid, c.model, c.cluster))
        L.append("------------------------------------------------------------")
        L.append("")
        L.append("TERM_RUNLIMIT: job killed after reaching LSF run time limit.")
        L.append("Exited with exit code 140.")
        L.append("")
        L.append("Resource usage summary:")
        L.append("    CPU time :                                   %.2f sec." % r.uniform(10000, 900000))
        L.append("    Max Memory :                                 %d MB" % r.randint(8000, 90000))
        L.append("    Run time :                                   %d sec." % (86400 + r.randint(1, 600)))
        return L, 140, "IBM Spectrum LSF (TERM_RUNLIMIT: job killed after reaching LSF run time limit. / Exited with exit code 140.); https://github.com/marbl/canu/issues/444; https://github.com/galaxyproject/galaxy/pull/14917"
    if k == 3:
        L.append("--- qacct -j %d (appended by support) ---" % c.jobid)
        L.append("qname        gpu.q")
        L.append("hostname     %s" % c.host)
        L.append("jobname      train_%s" % c.model)
        L.append("failed       0")
        L.append("exit_status  137                  (Killed)")
        L.append("ru_wallclock %d" % (172800 + r.randint(1, 90)))
        L.append("maxvmem      %.3fG" % r.uniform(20, 90))
        L.append("note: job exceeded hard runtime limit h_rt=48:00:00")
        return L, 137, "Univa/Son of Grid Engine qacct fields; h_rt hard limit -> SIGKILL (https://diamondlightsource.atlassian.net/wiki/spaces/SCPUB/pages/691208207/Cluster+Limits). Judgment: walltime despite 137"
    # timeout(1) wrapper in job script
    for j, ln in enumerate(L):
        if "***** Running training" in ln:
            L.insert(j, "+ timeout 23h50m python train.py")
            break
    L.append("Terminated")
    L.append("+ rc=124")
    L.append("+ echo 'training exited with 124'")
    L.append("training exited with 124")
    L.append("+ exit 124")
    return L, 124, "GNU coreutils timeout(1) exit status 124"


def s_preempted(c, v):
    r = c.r
    L = []
    k = v % 5
    training_preamble(c, L, world=4, nsteps=r.randint(80, 300), fmt=r.choice([None, "lightning"]))
    if k == 0:
        L.append("slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (c.jobid, c.host, c.iso()))
        L.append("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
        L.append("slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (c.jobid, c.host, c.iso()))
        L.append("W%s torch/distributed/elastic/agent/server/api.py:741] Received Signals.SIGTERM death signal, shutting down workers" % c.stamp("%m%d %H:%M:%S.000000"))
        L += py_tb(c, [("%s/torch/distributed/elastic/multiprocessing/api.py" % c.sp, 62, "_terminate_process_handler", None)],
                   "torch.distributed.elastic.multiprocessing.api.SignalException: Process %d got signal: 15" % r.randint(1000, 99999))
        srun_fail(c, L, what="Terminated")
        epilog(c, L, "PREEMPTED", "0:15")
        return L, 143, P_SLURM
    if k in (1, 2):  # SIGUSR1 requeue w/ checkpoint exit 0 (Lightning SLURMEnvironment)
        L.append("[rank: 0] Received SIGTERM: 15")
        L.append("slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (c.jobid, c.host, c.iso()) if k == 1 else
                 "[rank: 0] Handling auto-requeue signal: 10")
        L.append("[rank: 0] Saving checkpoint to %s/checkpoints/hpc_ckpt_%d.ckpt" % (c.run, r.randint(1, 9)))
        L.append("[rank: 0] requeued exp %d" % c.jobid if k == 2 else "[rank: 0] checkpoint written; exiting cleanly so the job can be requeued")
        L.append("")
        L.append("Job %d requeued (reason: preempted by higher-priority job in partition 'gpu-preempt')" % c.jobid)
        epilog(c, L, "PREEMPTED" if k == 1 else "REQUEUED", "0:0")
        return L, 0, "Lightning src/lightning/pytorch/trainer/connectors/signal_connector.py (Handling auto-requeue signal, requeued exp); Slurm DUE TO PREEMPTION. Judgment: preempted although exit 0"
    if k == 3:  # cloud spot
        L.append("%s WARNING metadata: instance/preempted=TRUE (GCE spot VM reclaimed)" % c.stamp())
        L.append("%s INFO torchelastic: received shutdown signal SIGTERM; spot instance is being preempted" % c.stamp())
        L.append("Connection to %s closed by remote host." % c.host)
        return L, 255, "GCE metadata server instance/preempted key; ssh 'Connection to %s closed by remote host.'"
    L.append("slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***" % (c.jobid, c.host, c.iso()))
    L.append("srun: error: Node failure on %s" % c.host)
    L.append("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    epilog(c, L, "NODE_FAIL", "0:0")
    return L, 1, "SchedMD/slurm (DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS; srun: error: Node failure on). Judgment: preempted (resources taken away, nothing in the job to fix)"


def s_interrupted(c, v):
    r = c.r
    L = []
    k = v % 5
    if k == 0:
        training_preamble(c, L, world=4, nsteps=r.randint(40, 200))
        L.append("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
        L.append("slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s ***" % (c.jobid, c.host, c.iso()))
        L.append("slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (c.jobid, c.host, c.iso()))
        srun_fail(c, L, what="Terminated")
        epilog(c, L, "CANCELLED", "0:15")
        return L, 143, "SchedMD/slurm (*** JOB %u ON %s CANCELLED AT %s *** without DUE TO = scancel by user)"
    if k == 1:
        training_preamble(c, L, world=2, nsteps=r.randint(40, 200))
        L.append("=>> PBS: job killed: user %s deleted job via qdel" % c.user if False else "Job %d.pbs01 deleted at request of %s@login02" % (c.jobid, c.user))
        L.append("Terminated")
        return L, 143, "OpenPBS/Torque server messages (Job ... deleted at request of user@host); https://github.com/cBio/cbio-cluster/issues/403"
    if k == 2:
        training_preamble(c, L, world=2, nsteps=r.randint(40, 200))
        L.append("")
        L.append("TERM_OWNER: job killed by owner.")
        L.append("Exited with signal termination: Terminated.")
        return L, 143, "IBM Spectrum LSF job report (TERM_OWNER: job killed by owner.)"
    if k == 3:
        L.append("$ salloc -p gpu --gres=gpu:1 -t 2:00:00")
        L.append("salloc: Granted job allocation %d" % c.jobid)
        L.append("$ srun --pty python train.py --debug")
        steps(c, L, 0, r.randint(10, 80), every=1)
        L.append("^Csrun: interrupt (one more within 1 sec to abort)")
        L.append("srun: StepId=%d.0 task 0: running" % c.jobid)
        L.append("^Csrun: sending Ctrl-C to StepId=%d.0" % c.jobid)
        L += py_tb(c, [("%s/code/train.py" % c.home, 140, "<module>", "main()"),
                       ("%s/torch/utils/data/dataloader.py" % c.sp, 1133, "_try_get_data", "data = self._data_queue.get(timeout=timeout)")],
                   "KeyboardInterrupt")
        L.append("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
        L.append("srun: error: %s: task 0: Exited with exit code 130" % c.host if False else "srun: error: %s: task 0: Interrupt" % c.host)
        return L, 130, "SchedMD/slurm src/srun/srun_job.c (srun: interrupt (one more within 1 sec to abort), sending Ctrl-C to StepId)"
    training_preamble(c, L, world=4, nsteps=r.randint(40, 200), fmt="hf")
    L.append("[rank0]: Received SIGINT; saving checkpoint before exiting (graceful shutdown)")
    L.append("Saving model checkpoint to %s/checkpoint-interrupt" % c.run)
    L.append("Training interrupted by user at step %d; exiting with status 0" % r.randint(1000, 9000))
    wandb_teardown(c, L, ok=True)
    return L, 0, "user graceful SIGINT handler (exit 0); transformers 'Saving model checkpoint to'. Judgment: interrupted"


def s_native_abort(c, v):
    r = c.r
    L = []
    k = v % 3
    training_preamble(c, L, world=2)
    if k == 0:
        L.append("terminate called after throwing an instance of 'c10::Error'")
        L.append("  what():  Expected !is_symbolic() to be true, but got false.  (Could this error message be improved?  If so, please report an enhancement request to PyTorch.)")
        L.append("Exception raised from numel at ../c10/core/TensorImpl.h:1179 (most recent call first):")
        for f in range(6):
            L.append("frame #%d: <unknown function> + 0x%x (0x7f%010x in %s/torch/lib/libc10.so)" % (f, r.randint(0x10000, 0xfffff), r.getrandbits(40), c.sp))
        L.append("")
        L.append("/var/spool/slurmd/job%d/slurm_script: line 22: %d Aborted                 (core dumped) python train.py" % (c.jobid, r.randint(1000, 99999)))
        return L, 134, "pytorch c10/util/Exception.cpp + libstdc++ 'terminate called after throwing an instance of'"
    if k == 1:
        for t in TF_INFO[:2]:
            L += t.format(g=c.glog(), gpu=c.gpu).split("\n")
        L.append("%s tensor_shape.cc:... " % c.glog("F") if False else "%s hlo_instruction.cc:1561] Check failed: operand->shape().IsArray() " % c.glog("F"))
        L.append("*** Check failure stack trace: ***")
        for f in range(5):
            L.append("    @     0x7f%010x  (unknown)" % r.getrandbits(40))
        L.append("Fatal Python error: Aborted")
        L.append("")
        L.append("Current thread 0x00007f%010x (most recent call first):" % r.getrandbits(40))
        L.append('  File "%s/jax/_src/compiler.py", line 238 in backend_compile' % c.sp)
        srun_fail(c, L, what="Aborted")
        return L, 134, "abseil/glog 'Check failed:' + '*** Check failure stack trace: ***'; CPython faulthandler 'Fatal Python error: Aborted'"
    L.append("python: /opt/conda/conda-bld/magma-cuda121_1700000000000/work/interface_cuda/interface.cpp:901: void magma_queue_create_internal(...): Assertion `queue->dCarray__ != __null' failed.")
    L.append("/var/spool/slurmd/job%d/slurm_script: line 19: %d Aborted                 (core dumped) python solve.py" % (c.jobid, r.randint(1000, 99999)))
    return L, 134, "glibc assert() message format ('prog: file:line: func: Assertion `expr' failed.'); bash 'Aborted (core dumped)'"


def s_exec_failure(c, v):
    r = c.r
    L = []
    k = v % 3
    slurm_header(c, L)
    if k == 0:
        L.append("+ ./run_train.sh")
        L.append("/var/spool/slurmd/job%d/slurm_script: line 18: ./run_train.sh: /bin/bash^M: bad interpreter: No such file or directory" % c.jobid)
        epilog(c, L, "FAILED", "126", elapsed="00:00:01")
        return L, 126, "bash execute_cmd.c (bad interpreter: No such file or directory) for CRLF script"
    if k == 1:
        L.append("+ apptainer exec --nv %s/containers/jax.sif python3 train.py" % c.proj)
        L.append("FATAL:   \"python3\": executable file not found in $PATH")
        epilog(c, L, "FAILED", "255", elapsed="00:00:03")
        return L, 255, "apptainer internal/pkg/util/env (FATAL: \"%s\": executable file not found in $PATH)"
    L.append("+ srun --ntasks=4 ./bin/train_mpi")
    L.append("slurmstepd: error: execve(): %s/code/bin/train_mpi: Exec format error" % c.home)
    for t in range(4):
        L.append("srun: error: %s: task %d: Exited with exit code 8" % (c.host, t))
    return L, 8, "SchedMD/slurm slurmstepd exec_task (error: execve(): %s: %m) with ENOEXEC -> Exec format error"


def s_unknown(c, v):
    r = c.r
    L = []
    training_preamble(c, L, world=4, nsteps=r.randint(60, 300))
    if v % 2 == 0:
        L.append("srun: error: %s: task 2: Exited with exit code 1" % c.host)
        L.append("srun: launch/slurm: _step_signal: Terminating StepId=%d.0" % c.jobid)
        epilog(c, L, "FAILED", "1")
        return L, 1, "SchedMD/slurm srun task exit message only; no cause printed"
    L.append("training loop returned status -1; see rank logs")
    epilog(c, L, "FAILED", "2")
    return L, 2, "no cause in log (bare nonzero status)"


def s_success(c, v):
    r = c.r
    L = []
    k = v % 9
    fmt = [None, "hf", "lightning", "ds", "jax", "keras", None, "hf", None][k]
    training_preamble(c, L, world=4, fmt=fmt, nsteps=r.randint(60, 400), nccl=(fmt not in ("jax", "keras")))
    if k == 0:  # recovered loss-scale overflows
        for i in range(r.randint(2, 6)):
            L.append("[%s,%03d] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d" % (c.stamp(), r.randint(0, 999), 2 ** (17 - i), 2 ** (16 - i)))
        steps(c, L, 5000, r.randint(50, 150))
    if k == 1:  # handled retry
        L.append("WARNING:huggingface_hub.utils._http:'(MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. (read timeout=10)\"), '(Request ID: %s)')' thrown while requesting HEAD https://huggingface.co/%s/resolve/main/config.json" % ("".join(r.choice("0123456789abcdef") for _ in range(8)), c.model))
        L.append("Retrying in 1s [Retry 1/5].")
        L.append("{'eval_loss': %.4f, 'eval_error_rate': %.4f, 'eval_runtime': %.1f, 'epoch': 3.0}" % (r.uniform(0.2, 1), r.uniform(0.01, 0.2), r.uniform(10, 90)))
        L.append("{'train_runtime': %.2f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %.3f, 'train_loss': %.4f, 'epoch': 3.0}" % (r.uniform(1000, 90000), r.uniform(10, 500), r.uniform(0.1, 9), r.uniform(0.2, 2)))
    if k == 2:
        L.append("`Trainer.fit` stopped: `max_epochs=%d` reached." % r.randint(5, 50))
    if k == 3:
        L.append("[%s] [INFO] [launch.py:347:main] Process %d exits successfully." % (c.stamp(), r.randint(1000, 99999)))
    if k == 4:
        L.append("%s 140230 train.py:410] step=%d skipped: non-finite grads (nan) in 1 microbatch; update skipped, loss_scale unchanged" % (c.glog("W"), r.randint(100, 9000)))
        steps(c, L, 9000, 30, every=100, fmt="jax")
        L.append("I%s absl] Saved checkpoint at step 10000 (killed 3 duplicate async writers)" % c.stamp("%m%d %H:%M:%S"))
    if k == 5:
        L.append("Epoch 20: val_error did not improve from 0.04210")
        L.append("Restoring model weights from the end of the best epoch: 17.")
    if k == 6:
        L.append("[W ProcessGroupNCCL.cpp:1856] Warning: 0NCCL_ASYNC_ERROR_HANDLING is deprecated, please use TORCH_NCCL_ASYNC_ERROR_HANDLING (function operator())")
        L.append("nanoGPT: iter %d: loss %.4f, time %.2fms, mfu %.2f%%" % (r.randint(1000, 5000), r.uniform(2.8, 3.2), r.uniform(90, 300), r.uniform(20, 45)))
        L.append("worker 3: failed to fetch shard 17 (timeout), retried OK")
    if k == 7:
        L.append("%s/torch/distributed/fsdp/_state_dict_utils.py:773: UserWarning: When using ``NO_SHARD`` for ``ShardingStrategy``, full_state_dict will be returned." % c.sp)
        L.append("Saving model checkpoint to %s/final" % c.run)
    if k == 8:
        L.append("[rank1]:[W ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the progress of another member of the process group. This constraint has always been present,  but this warning has only recently been added and may have false positives (function ~ProcessGroupNCCL)")
    L.append("Training finished in %d:%02d:%02d; best val_error=%.4f" % (r.randint(0, 40), r.randint(0, 59), r.randint(0, 59), r.uniform(0.01, 0.3)))
    if r.random() < 0.6:
        wandb_teardown(c, L, ok=True)
    epilog(c, L, "COMPLETED", "0")
    return L, 0, "noisy success: warnings from pytorch/transformers/lightning/DeepSpeed source (UserWarning/FutureWarning texts), NCCL INFO, recovered OVERFLOW lines"


PLAN = [  # (scenario, count, needs_gpu)
    (s_cuda_oom, 6, True), (s_nccl, 8, True), (s_cuda_runtime, 6, True), (s_ram_oom, 3, False),
    (s_segfault, 3, True), (s_file_not_found, 4, True), (s_permission, 3, True), (s_missing_module, 7, True),
    (s_div_zero, 3, False), (s_device_mismatch, 4, True), (s_nan, 5, True), (s_oom_killer, 7, True),
    (s_traceback, 4, False), (s_assertion, 3, True), (s_runtime_error, 4, True), (s_gpu_hw, 5, True),
    (s_disk_full, 4, True), (s_walltime, 6, True), (s_preempted, 6, True), (s_interrupted, 5, True),
    (s_native_abort, 3, True), (s_exec_failure, 3, True), (s_unknown, 3, True), (s_success, 20, True),
]
MODE = {s_cuda_oom: "cuda_oom", s_nccl: "nccl", s_cuda_runtime: "cuda_runtime", s_ram_oom: "ram_oom",
        s_segfault: "segfault", s_file_not_found: "file_not_found", s_permission: "permission",
        s_missing_module: "missing_module", s_div_zero: "div_zero", s_device_mismatch: "device_mismatch",
        s_nan: "nan_loss", s_oom_killer: "oom_killer", s_traceback: "traceback", s_assertion: "assertion",
        s_runtime_error: "runtime_error", s_gpu_hw: "gpu_hardware", s_disk_full: "disk_full",
        s_walltime: "walltime", s_preempted: "preempted", s_interrupted: "interrupted",
        s_native_abort: "native_abort", s_exec_failure: "exec_failure", s_unknown: "unknown", s_success: "success"}


def load_captured():
    d = os.path.join(HERE, "captured")
    out = []
    for fn in sorted(os.listdir(d)):
        if fn.endswith(".json"):
            name = fn[:-5]
            meta = json.load(open(os.path.join(d, fn)))
            with open(os.path.join(d, name + ".log"), "rb") as f:
                data = f.read()
            out.append((name, meta, data))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=20261207)
    ap.add_argument("--out", default=HERE)
    a = ap.parse_args()
    r = random.Random(a.seed)
    items = []
    for fn, n, g in PLAN:
        for v in range(n):
            items.append(("composed", fn, v, g))
    for name, meta, data in load_captured():
        items.append(("captured", name, meta, data))
    r.shuffle(items)
    os.makedirs(os.path.join(a.out, "logs"), exist_ok=True)
    recs = []
    for i, it in enumerate(items):
        lid = "%s-%04d" % (SET, i + 1)
        path = os.path.join(a.out, "logs", lid + ".log")
        if it[0] == "composed":
            _, fn, v, g = it
            c = Ctx(random.Random("%d-%d" % (a.seed, i)), gpu=g)
            L, rc, prov = fn(c, v)
            L = [ln for ln in L if ln is not None]
            if len(L) < 60:
                P = []
                P.append("---------------- %s job prologue ----------------" % c.cluster)
                P.append("Job %d started %s on %s (partition %s, account %s)" % (c.jobid, c.stamp("%a %b %d %H:%M:%S %Z %Y"), c.host, c.r.choice(["gpu", "gpu-a100", "gpu-preempt", "mig"]), c.r.choice(["pi_lab", "ml-dept", "cs-research"])))
                P.append("Scratch purge policy: files not accessed in 60 days are removed from %s" % c.scratch)
                env_dump(c, P)
                module_list(c, P)
                pip_freeze(c, P)
                if g and c.r.random() < 0.5:
                    nvsmi(c, P, n=c.r.choice([1, 2, 4]))
                P.append("-------------------------------------------------")
                L = P + L
            text = "\n".join(L) + "\n"
            with open(path, "w", encoding="utf-8", newline="\n") as f:
                f.write(text)
            recs.append({"id": lid, "mode": MODE[fn], "source": "composed", "log_path": "logs/%s.log" % lid,
                         "gpu": c.gpu, "driver": c.driver, "true_exit_code": rc, "provenance": prov})
        else:
            _, name, meta, data = it
            with open(path, "wb") as f:
                f.write(data)
            recs.append({"id": lid, "mode": meta["label"], "source": "captured", "log_path": "logs/%s.log" % lid,
                         "gpu": "none", "driver": "none", "true_exit_code": meta["rc"],
                         "provenance": "captured on this machine (torch 2.x CPU, python 3.11, single-node Slurm): %s; command: %s" % (meta["desc"], meta["cmd"])})
    with open(os.path.join(a.out, "labels.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        for rec in recs:
            f.write(json.dumps(rec, sort_keys=True, ensure_ascii=False) + "\n")
    print("wrote %d logs" % len(recs))


if __name__ == "__main__":
    main()

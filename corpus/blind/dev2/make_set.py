#!/usr/bin/env python3
"""Rebuild the blind dev2 set: composed logs (seeded, byte-identical per seed)
plus captured logs (small failing programs really run on this machine).

    python3 make_set.py [--seed 20261203] [--composed-only] [--out DIR]

stdlib only, Python 3.6+.  Captures need python3 with torch (CPU) for some items;
missing tools make that capture be skipped (reported on stderr).
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))

# ----------------------------------------------------------------------------
# small helpers
# ----------------------------------------------------------------------------

GPUS = [
    ("NVIDIA A100-SXM4-80GB", 81920), ("NVIDIA H100 80GB HBM3", 81559),
    ("NVIDIA A100-PCIE-40GB", 40960), ("Tesla V100-SXM2-32GB", 32768),
    ("NVIDIA L40S", 46068), ("NVIDIA A10G", 23028), ("NVIDIA RTX A6000", 49140),
    ("NVIDIA GeForce RTX 4090", 24564), ("NVIDIA H200", 143771),
    ("Tesla T4", 15360), ("NVIDIA L4", 23034),
]
DRIVERS = [("535.161.08", "12.2"), ("550.54.15", "12.4"), ("525.105.17", "12.0"),
           ("470.199.02", "11.4"), ("545.23.08", "12.3"), ("560.35.03", "12.6"),
           ("570.124.06", "12.8")]
HOSTS = ["gpu-a{:03d}", "node{:04d}", "hgx-{:02d}-r3", "dgx{:02d}", "ip-10-3-{}-17",
         "cn{:03d}.cluster.local", "trn-worker-{}", "gke-train-pool-{}-x9k2", "sol-gpu{:02d}",
         "della-l{:02d}g3", "jw-node{:03d}", "ml-box-{}"]
USERS = ["akoval", "mchen", "priya.s", "jdoe", "tn284", "rsalas", "lhuang7", "ovd", "fbarros",
         "kim_h", "e.novak", "wzhang"]
PROJECTS = ["llm-pretrain", "vit-seg", "asr-conformer", "diffusion-ft", "rec-ranker",
            "protein-fold", "code-sft", "mm-clip", "dpo-align", "ts-forecast", "gnn-mol",
            "nanoGPT-shakespeare", "detr-coco", "whisper-ft"]


class Ctx(object):
    def __init__(self, rng):
        self.rng = rng
        g = rng.choice(GPUS)
        self.gpu, self.gpu_mem = g
        self.driver, self.cuda = rng.choice(DRIVERS)
        h = rng.choice(HOSTS)
        self.host = h.format(rng.randint(1, 180))
        self.user = rng.choice(USERS)
        self.proj = rng.choice(PROJECTS)
        self.jobid = rng.randint(1200000, 48999999)
        self.pid = rng.randint(3000, 3999999)
        self.py = rng.choice(["3.8", "3.9", "3.10", "3.11", "3.12"])
        base = rng.choice(["/opt/conda", "/home/{}/miniconda3/envs/{}".format(self.user, self.proj.split('-')[0]),
                           "/usr", "/scratch/{}/venv".format(self.user), "/workspace/.venv"])
        if base == "/usr":
            self.site = "/usr/local/lib/python{}/dist-packages".format(self.py)
            self.pybin = "/usr/bin/python{}".format(self.py)
        else:
            self.site = "{}/lib/python{}/site-packages".format(base, self.py)
            self.pybin = "{}/bin/python".format(base)
        self.work = rng.choice(["/home/{u}/{p}", "/scratch/{u}/{p}", "/workspace/{p}", "/mnt/fs1/{u}/code/{p}",
                                "/lustre/proj/{u}/{p}", "/data/{u}/src/{p}"]).format(u=self.user, p=self.proj)
        self.torch = rng.choice(["1.13.1", "2.0.1", "2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1"])
        self.y = rng.choice([2022, 2023, 2024, 2025, 2026])
        self.mo = rng.randint(1, 12)
        self.d = rng.randint(1, 28)
        self.t = rng.randint(0, 20 * 3600)
        self.ngpu = rng.choice([1, 2, 4, 8, 8])

    def tick(self, lo=0.05, hi=30.0):
        self.t += self.rng.uniform(lo, hi)

    def hms(self):
        t = int(self.t) % 86400
        return "{:02d}:{:02d}:{:02d}".format(t // 3600, t // 60 % 60, t % 60)

    def ts(self, sep=" ", ms=True):
        s = "{:04d}-{:02d}-{:02d}{}{}".format(self.y, self.mo, self.d, sep, self.hms())
        if ms:
            s += ",{:03d}".format(int((self.t % 1) * 1000))
        return s

    def iso(self):
        return "{:04d}-{:02d}-{:02d}T{}".format(self.y, self.mo, self.d, self.hms())

    def glog(self, lvl="I"):
        return "{}{:02d}{:02d} {}.{:06d}".format(lvl, self.mo, self.d, self.hms(), self.rng.randint(0, 999999))

    def f(self, rel):
        return "{}/{}".format(self.site, rel)


def tb(frames, exc, prefix=""):
    out = [prefix + "Traceback (most recent call last):"]
    for fn, ln, func, code in frames:
        out.append(prefix + '  File "{}", line {}, in {}'.format(fn, ln, func))
        if code:
            out.append(prefix + "    " + code)
    for e in exc.split("\n"):
        out.append(prefix + e)
    return out


def user_frames(c, n=2, script="train.py"):
    r = c.rng
    fr = [("{}/{}".format(c.work, script), r.randint(200, 900), "<module>", "main(cfg)")]
    names = [("main", "trainer.fit(model, dm)"), ("main", "train(args)"), ("train", "loss = step(batch)"),
             ("train_one_epoch", "outputs = model(**batch)"), ("run", "self.loop.run()")]
    for i in range(n - 1):
        nm, code = r.choice(names)
        fr.append(("{}/{}".format(c.work, r.choice([script, "engine.py", "loop.py", "utils/train_utils.py"])),
                   r.randint(30, 700), nm, code))
    return fr


def torch_fwd_frames(c):
    r = c.rng
    return [(c.f("torch/nn/modules/module.py"), r.choice([1511, 1518, 1532, 1736, 1747, 1751]), "_wrapped_call_impl",
             "return self._call_impl(*args, **kwargs)"),
            (c.f("torch/nn/modules/module.py"), r.choice([1520, 1527, 1541, 1747, 1762]), "_call_impl",
             "return forward_call(*args, **kwargs)")]


# ----------------------------------------------------------------------------
# noise
# ----------------------------------------------------------------------------

def env_dump(c):
    r = c.rng
    lines = ["===== environment ====="]
    kv = [("HOSTNAME", c.host), ("USER", c.user), ("CUDA_VISIBLE_DEVICES", ",".join(str(i) for i in range(c.ngpu))),
          ("OMP_NUM_THREADS", str(r.choice([1, 4, 8, 16]))), ("NCCL_DEBUG", r.choice(["INFO", "WARN", "VERSION"])),
          ("PYTHONUNBUFFERED", "1"), ("TORCH_DISTRIBUTED_DEBUG", r.choice(["OFF", "DETAIL", "INFO"])),
          ("HF_HOME", "/scratch/{}/hf_cache".format(c.user)), ("WANDB_PROJECT", c.proj),
          ("PATH", "{}:/usr/local/cuda/bin:/usr/bin:/bin".format(os.path.dirname(c.pybin))),
          ("LD_LIBRARY_PATH", "/usr/local/cuda-{}/lib64:/usr/lib/x86_64-linux-gnu".format(c.cuda)),
          ("MASTER_ADDR", c.host), ("MASTER_PORT", str(r.randint(20000, 40000))),
          ("TOKENIZERS_PARALLELISM", "false"), ("PYTORCH_CUDA_ALLOC_CONF", r.choice(["", "expandable_segments:True"]))]
    r.shuffle(kv)
    for k, v in kv[:r.randint(6, len(kv))]:
        lines.append("{}={}".format(k, v))
    return lines


def nvidia_smi(c):
    r = c.rng
    out = ["+-----------------------------------------------------------------------------------------+",
           "| NVIDIA-SMI {:<10} Driver Version: {:<10} CUDA Version: {:<6}               |".format(c.driver, c.driver, c.cuda),
           "|-----------------------------------------+------------------------+----------------------+",
           "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
           "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
           "|=========================================+========================+======================|"]
    for i in range(min(c.ngpu, 8)):
        out.append("|  {:<3}{:<36}On  |   00000000:{:02X}:00.0 Off |                    0 |".format(i, c.gpu[:34], 0x18 + i * 16 % 200))
        out.append("| N/A   {}C    P0             {}W / {}W |       {}MiB / {}MiB |      0%      Default |".format(
            r.randint(28, 45), r.randint(55, 90), r.choice([300, 400, 700, 350]), r.randint(1, 600), c.gpu_mem))
        out.append("+-----------------------------------------+------------------------+----------------------+")
    out.append("| Processes:                                                                              |")
    out.append("|  No running processes found                                                             |")
    out.append("+-----------------------------------------------------------------------------------------+")
    return out


def pip_list(c):
    r = c.rng
    pk = [("accelerate", "0.{}.{}".format(r.randint(20, 34), r.randint(0, 2))), ("datasets", "2.{}.0".format(r.randint(14, 21))),
          ("deepspeed", "0.{}.{}".format(r.randint(12, 16), r.randint(0, 9))), ("numpy", r.choice(["1.24.4", "1.26.4", "2.0.2", "2.1.3"])),
          ("safetensors", "0.4.{}".format(r.randint(1, 5))), ("tokenizers", "0.{}.1".format(r.randint(15, 21))),
          ("torch", c.torch), ("torchvision", "0.{}.0".format(r.randint(15, 22))),
          ("transformers", "4.{}.{}".format(r.randint(30, 48), r.randint(0, 3))), ("wandb", "0.{}.{}".format(r.randint(15, 19), r.randint(0, 9))),
          ("lightning", "2.{}.{}".format(r.randint(0, 5), r.randint(0, 3))), ("nvidia-nccl-cu12", r.choice(["2.18.1", "2.20.5", "2.21.5", "2.26.2"])),
          ("triton", r.choice(["2.1.0", "2.3.1", "3.0.0", "3.1.0"])), ("einops", "0.7.0"), ("sentencepiece", "0.2.0"),
          ("jax", "0.4.{}".format(r.randint(20, 38))), ("flash-attn", "2.{}.{}".format(r.randint(3, 7), r.randint(0, 4)))]
    r.shuffle(pk)
    pk = sorted(pk[:r.randint(8, len(pk))])
    out = ["$ pip list 2>/dev/null | head -n 40", "Package                  Version", "------------------------ ----------"]
    out += ["{:<24} {}".format(a, b) for a, b in pk]
    return out


def config_dump(c):
    r = c.rng
    out = ["Config:" if r.random() < 0.5 else "----- resolved config -----"]
    items = [("model.name", r.choice(["llama-7b", "vit_b16", "t5-base", "gpt2-medium", "resnet50", "mistral-7b", "unet-xl"])),
             ("model.dropout", r.choice([0.0, 0.1])), ("optim.lr", r.choice(["3e-4", "1e-5", "6e-4", "2e-5"])),
             ("optim.weight_decay", 0.1), ("train.batch_size", r.choice([8, 16, 32, 64, 256])),
             ("train.grad_accum", r.choice([1, 2, 4, 8])), ("train.max_steps", r.choice([2000, 10000, 50000, 120000])),
             ("train.precision", r.choice(["bf16-mixed", "fp16", "32"])), ("data.path", "/datasets/{}/".format(c.proj)),
             ("data.num_workers", r.choice([2, 4, 8, 12])), ("ckpt.dir", "{}/checkpoints".format(c.work)),
             ("ckpt.every", r.choice([500, 1000, 2000])), ("seed", r.randint(0, 9999)), ("log.error_on_nan", r.choice(["false", "true"])),
             ("eval.metric", r.choice(["val_error", "val_loss", "wer", "bleu"]))]
    for k, v in items:
        out.append("  {}: {}".format(k, v))
    return out


def tqdm_line(c, total, desc="", stop=None, post=None, unit="it"):
    r = c.rng
    stop = total if stop is None else stop
    segs = []
    n = 0
    rate = r.uniform(1.2, 9.0)
    while True:
        pct = int(100 * n / total)
        bar = "#" * (pct // 10) + " " * (10 - pct // 10)
        el = int(n / rate)
        rem = int((total - n) / rate)
        p = ""
        if post:
            p = ", " + post(n)
        segs.append("{}{:3d}%|{}| {}/{} [{:02d}:{:02d}<{:02d}:{:02d}, {:.2f}{}/s{}]".format(
            desc + ": " if desc else "", pct, bar, n, total, el // 60, el % 60, rem // 60 % 60, rem % 60, rate, unit, p))
        if n >= stop:
            break
        n = min(stop, n + max(1, total // r.randint(8, 25)))
    return "\r".join(segs)


def hf_dicts(c, n, start_loss=2.5, nan_from=None, zero_loss_nan=False, epoch0=0.0):
    r = c.rng
    out = []
    loss = start_loss
    ep = epoch0
    for i in range(n):
        loss = max(0.05, loss * r.uniform(0.93, 1.01))
        ep += r.uniform(0.01, 0.05)
        gn = r.uniform(0.3, 3.5)
        if nan_from is not None and i >= nan_from:
            if zero_loss_nan:
                out.append("{{'loss': 0.0, 'grad_norm': nan, 'learning_rate': {:.4e}, 'epoch': {:.2f}}}".format(r.uniform(1e-6, 5e-5), ep))
            else:
                out.append("{{'loss': nan, 'grad_norm': nan, 'learning_rate': {:.4e}, 'epoch': {:.2f}}}".format(r.uniform(1e-6, 5e-5), ep))
        else:
            out.append("{{'loss': {:.4f}, 'grad_norm': {:.4f}, 'learning_rate': {:.4e}, 'epoch': {:.2f}}}".format(loss, gn, r.uniform(1e-6, 5e-5), ep))
    return out


def megatron_iters(c, n, start=10, nan_from=None, skipped=0):
    r = c.rng
    out = []
    loss = r.uniform(7, 10)
    for k in range(n):
        it = start + k * 10
        loss *= r.uniform(0.97, 1.0)
        ls = "nan" if (nan_from is not None and k >= nan_from) else "{:.6E}".format(loss)
        nanit = 1 if (nan_from is not None and k >= nan_from) else 0
        out.append(" [{}] iteration {:>8}/{:>8} | consumed samples: {:>12} | elapsed time per iteration (ms): {:.1f} | "
                   "learning rate: {:.6E} | global batch size: {:>5} | lm loss: {} | loss scale: {:.1f} | grad norm: {} | "
                   "number of skipped iterations: {:>3} | number of nan iterations: {:>3} |".format(
                       c.ts(ms=False), it, 500000, it * 512, r.uniform(800, 3000), r.uniform(1e-5, 3e-4), 512, ls,
                       r.choice([65536.0, 32768.0, 131072.0, 1.0]), "nan" if nanit else "{:.3f}".format(r.uniform(0.5, 4)), skipped, nanit))
        c.tick(1, 4)
    return out


def ds_steps(c, n, step0=10):
    r = c.rng
    out = []
    for k in range(n):
        s = step0 + k * 10
        out.append("[{}] [INFO] [logging.py:96:log_dist] [Rank 0] step={}, skipped={}, lr=[{:.6e}], mom=[(0.9, 0.95)]".format(
            c.ts(), s, r.choice([0, 0, 1, 2]), r.uniform(1e-6, 3e-4)))
        out.append("[{}] [INFO] [timer.py:260:stop] epoch=0/micro_step={}/global_step={}, RunningAvgSamplesPerSec={:.4f}, "
                   "CurrSamplesPerSec={:.4f}, MemAllocated={:.2f}GB, MaxMemAllocated={:.2f}GB".format(
                       c.ts(), s * 4, s, r.uniform(10, 90), r.uniform(10, 90), r.uniform(5, 40), r.uniform(40, 75)))
        c.tick(2, 8)
    return out


def keras_epochs(c, n, nan_from=None):
    r = c.rng
    out = []
    steps = r.choice([250, 469, 782, 1563])
    loss = r.uniform(0.8, 2.0)
    for e in range(1, n + 1):
        out.append("Epoch {}/{}".format(e, n))
        loss *= r.uniform(0.8, 0.97)
        lv = "nan" if (nan_from and e >= nan_from) else "{:.4f}".format(loss)
        vl = "nan" if (nan_from and e >= nan_from) else "{:.4f}".format(loss * 1.1)
        bar = "\r".join("{:>5}/{} [{}>{}] - ETA: {}s - loss: {}".format(
            j, steps, "=" * (j * 29 // steps), "." * (29 - j * 29 // steps), r.randint(1, 60), lv) for j in range(1, steps, steps // 6))
        out.append(bar + "\r{}/{} [==============================] - {}s {}ms/step - loss: {} - accuracy: {:.4f} - val_loss: {} - val_accuracy: {:.4f}".format(
            steps, steps, r.randint(20, 200), r.randint(20, 300), lv, r.uniform(0.5, 0.95), vl, r.uniform(0.5, 0.95)))
    return out


def jax_steps(c, n, nan_from=None):
    r = c.rng
    out = []
    loss = r.uniform(3, 6)
    for k in range(n):
        loss *= r.uniform(0.97, 1.0)
        lv = "nan" if (nan_from is not None and k >= nan_from) else "{:.4f}".format(loss)
        out.append("{} {} train.py:{}] [{:>6}] train/loss={} train/learning_rate={:.3e} train/grad_norm={} perf/steps_per_sec={:.2f}".format(
            c.glog(), r.randint(10000, 99999), r.randint(200, 600), (k + 1) * 100, lv, r.uniform(1e-5, 1e-3),
            "nan" if lv == "nan" else "{:.3f}".format(r.uniform(0.2, 3)), r.uniform(1, 12)))
        c.tick(5, 40)
    return out


def lightning_bar(c, epoch, total, stop=None, extra=""):
    r = c.rng
    loss = r.uniform(0.2, 3)
    return tqdm_line(c, total, "Epoch {}".format(epoch), stop,
                     post=lambda n: "v_num={}, train_loss_step={:.3f}{}".format(r.randint(0, 99), loss * r.uniform(0.8, 1.1), extra))


def nccl_info(c, n=8, ranks=None):
    r = c.rng
    ranks = ranks or list(range(min(c.ngpu, 4)))
    out = []
    pids = {k: c.pid + k for k in ranks}
    for k in range(n):
        rk = r.choice(ranks)
        msg = r.choice(["NCCL INFO Bootstrap : Using eth0:10.{}.{}.{}<0>".format(r.randint(0, 255), r.randint(0, 255), r.randint(1, 254)),
                        "NCCL INFO NET/Plugin: No plugin found (libnccl-net.so), using internal implementation",
                        "NCCL INFO cudaDriverVersion {}".format(r.choice([12020, 12040, 12060])),
                        "NCCL INFO Channel {:02d}/0 : {}[{}] -> {}[{}] via P2P/IPC".format(r.randint(0, 31), rk, rk, (rk + 1) % 8, (rk + 1) % 8),
                        "NCCL INFO Connected all rings", "NCCL INFO Connected all trees",
                        "NCCL INFO comm 0x{:x} rank {} nranks {} cudaDev {} busId {:x}0 - Init COMPLETE".format(r.randint(1 << 40, 1 << 44), rk, len(ranks), rk, r.randint(16, 200)),
                        "NCCL INFO threadThresholds 8/8/64 | 32/8/64 | 512 | 512",
                        "NCCL INFO Using network IB", "NCCL INFO NCCL_IB_DISABLE set by environment to 0."])
        out.append("{}:{}:{} [{}] {}".format(c.host, pids[rk], pids[rk] + r.randint(20, 400), rk, msg))
    return out


def warnings_noise(c):
    r = c.rng
    pool = [
        "{}:{}: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead.".format(c.f("torch/cuda/amp/grad_scaler.py"), 31),
        "  warnings.warn(",
        "{}: UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class.".format(c.f("torch/_utils.py:831")),
        "{}: UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system is 8, which is smaller than what this DataLoader is going to create.".format(c.f("torch/utils/data/dataloader.py:558")),
        "Some weights of the model checkpoint were not used when initializing the model: ['pooler.dense.bias', 'pooler.dense.weight']",
        "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`.",
        "{}: DeprecationWarning: error_msg argument is deprecated and will be removed, use errors= instead".format(c.f("datasets/load.py:2089")),
        "{}: UserWarning: The given NumPy array is not writable, and PyTorch does not support non-writable tensors.".format(c.f("torchvision/transforms/functional.py:154")),
        "[W socket.cpp:{}] [c10d] The client socket has failed to connect to [localhost]:{} (errno: 99 - Cannot assign requested address).".format(r.randint(400, 700), r.randint(20000, 40000)),
        "huggingface/tokenizers: The current process just got forked, after parallelism has already been used. Disabling parallelism to avoid deadlocks...",
        "WARNING:root:retrying download of shard 17 (attempt 2/5): ConnectionResetError(104, 'Connection reset by peer')",
        "INFO: dedup pass finished, killed 3 duplicates",
    ]
    r.shuffle(pool)
    return pool[:r.randint(2, 5)]


def wandb_teardown(c, ok=True, nan=False):
    r = c.rng
    rid = "".join(r.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))
    out = ["wandb: Waiting for W&B process to finish... ({}).".format("success" if ok else "failed 1"),
           "wandb: ",
           "wandb: Run history:",
           "wandb:     train/loss ▇█▆▅▄▃▃▂▂▁▁▁",
           "wandb:       train/lr ▁▂▄▆████▇▇▆▆",
           "wandb: ",
           "wandb: Run summary:",
           "wandb:     train/loss {}".format("nan" if nan else "{:.4f}".format(r.uniform(0.1, 2))),
           "wandb:  train/global_step {}".format(r.randint(100, 90000)),
           "wandb: ",
           "wandb: 🚀 View run {}-{} at: https://wandb.ai/{}/{}/runs/{}".format(c.proj, r.randint(1, 99), c.user, c.proj, rid),
           "wandb: Synced 5 W&B file(s), 0 media file(s), 2 artifact file(s) and 0 other file(s)",
           "wandb: Find logs at: ./wandb/run-{:04d}{:02d}{:02d}_{}-{}/logs".format(c.y, c.mo, c.d, c.hms().replace(":", ""), rid)]
    return out


def slurm_header(c, part=None):
    r = c.rng
    return ["SLURM_JOB_ID={} SLURM_JOB_NODELIST={} SLURM_NTASKS={} partition={}".format(
        c.jobid, c.host, c.ngpu, part or r.choice(["gpu", "a100", "h100-long", "preempt", "batch", "ml"])),
        "Job started on {} at {}".format(c.host, c.iso())]


def preamble(c, kind=None):
    r = c.rng
    out = []
    opts = [env_dump, nvidia_smi, pip_list, config_dump]
    r.shuffle(opts)
    for fn in opts[:r.randint(1, 4)]:
        out += fn(c)
    out += warnings_noise(c)
    return out


def train_noise(c, fw, n):
    """Generic training progress for framework fw."""
    r = c.rng
    if fw == "hf":
        out = []
        for k in range(max(1, n // 6)):
            out.append(tqdm_line(c, 1000, "", r.randint(5, 60) + k * 10))
            out += hf_dicts(c, r.randint(2, 6))
        return out
    if fw == "megatron":
        return megatron_iters(c, n)
    if fw == "ds":
        return ds_steps(c, max(1, n // 2))
    if fw == "keras":
        return keras_epochs(c, max(1, n // 3))
    if fw == "jax":
        return jax_steps(c, n)
    if fw == "lightning":
        return [lightning_bar(c, e, r.randint(200, 2000)) for e in range(max(1, n // 4))]
    # plain
    out = []
    for k in range(n):
        out.append("[{}] epoch {} step {:>6} loss {:.4f} lr {:.2e} {:.1f} samples/s".format(
            c.ts(), k // 10, k * 50, r.uniform(0.2, 3), r.uniform(1e-5, 1e-3), r.uniform(100, 3000)))
        c.tick(1, 10)
    return out


def pad_noise(c, lines, fw, minimum=40):
    while len(lines) < minimum:
        lines[len(lines) // 2:len(lines) // 2] = train_noise(c, fw, 6)
    return lines


def teardown_noise(c, n):
    r = c.rng
    out = []
    for k in range(n):
        out.append(r.choice([
            "[{}] INFO closing dataloader iterators".format(c.ts()),
            "wandb: WARNING Unable to flush run history before exit",
            "{}:{}:{} [0] NCCL INFO comm 0x{:x} rank 0 nranks {} cudaDev 0 busId 18000 - Abort COMPLETE".format(c.host, c.pid, c.pid + 7, r.randint(1 << 40, 1 << 44), c.ngpu),
            "[{}] INFO atexit: releasing {} pinned buffers".format(c.ts(), r.randint(2, 64)),
            "Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x7f{:010x}>".format(r.randint(0, 1 << 36)),
            "/usr/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: resource_tracker: There appear to be {} leaked semaphore objects to clean up at shutdown".format(r.randint(1, 9)),
            "INFO: shutting down metrics exporter on :{}".format(r.randint(8000, 9999)),
        ]))
    return out


class Log(object):
    def __init__(self, mode, exit_code, prov, gpu=True):
        self.mode = mode
        self.exit_code = exit_code
        self.prov = prov
        self.gpu = gpu


# ----------------------------------------------------------------------------
# provenance strings (where the exact wording comes from)
# ----------------------------------------------------------------------------
P = {
    "oom": "pytorch c10/cuda/CUDACachingAllocator.cpp OutOfMemoryError message; threads https://github.com/lllyasviel/FramePack/issues/369 https://github.com/OpenHelix-Team/cobra/issues/24 (rank-prefixed) https://github.com/pytorch/pytorch/issues/16417 (old format)",
    "jaxoom": "XLA RESOURCE_EXHAUSTED wording: https://github.com/google-deepmind/jaxline/issues/11 https://github.com/erfanzar/EasyDeL/issues/78 (hbm)",
    "watchdog": "pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp watchdog messages; https://github.com/hiyouga/LlamaFactory/issues/7396 https://github.com/XPixelGroup/BasicSR/issues/737 https://github.com/huggingface/diffusers/issues/12422",
    "ncclerr": "NCCL error text (torch/csrc/distributed/c10d/NCCLUtils.hpp, NCCL misc/socket.cc): https://github.com/vllm-project/vllm/issues/6732 https://github.com/NVIDIA/nccl-tests/issues/166 https://github.com/NVIDIA/nccl/issues/1410",
    "elastic": "torch/distributed/elastic/multiprocessing/errors/__init__.py ChildFailedError block: https://github.com/Vision-CAIR/MiniGPT-4/issues/237 https://github.com/OpenBMB/MiniCPM-V/issues/770 https://github.com/xiuqhou/Salience-DETR/issues/4",
    "dslaunch": "deepspeed/launcher/launch.py sigkill_handler: https://github.com/deepspeedai/DeepSpeed/issues/3232 https://github.com/deepspeedai/DeepSpeed/issues/5302",
    "dlworker": "torch/_utils.py ExceptionWrapper.reraise ('Caught {} in DataLoader worker process {}'): https://github.com/dbolya/yolact/issues/644 https://github.com/sgrvinod/a-PyTorch-Tutorial-to-Transformers/issues/1",
    "cudaerr": "c10/cuda/CUDAException.cpp (asynchronously reported / CUDA_LAUNCH_BLOCKING / TORCH_USE_CUDA_DSA lines); cuBLAS: https://github.com/clovaai/bros/issues/14 https://github.com/isl-org/DPT/issues/4",
    "meta": "torch/_prims_common/__init__.py check_same_device: https://github.com/rupeshs/fastsdcpu/issues/209 https://github.com/meta-pytorch/opacus/issues/737",
    "devmm": "aten device check 'Expected all tensors to be on the same device': https://github.com/rotem-shalev/Ham2Pose/pull/6 https://github.com/sipie800/ComfyUI-PuLID-Flux-Enhanced/issues/35",
    "slurm": "Slurm src/slurmd/slurmstepd/req.c '*** JOB %u ON %s CANCELLED AT %s DUE TO ... ***': https://github.com/SystemsGenetics/GEMmaker/pull/242 (PREEMPTION) https://github.com/Nextomics/NextPolish/issues/122 (TIME LIMIT)",
    "pbs": "PBS/Torque MOM '=>> PBS: job killed: walltime N exceeded limit M': https://github.com/marbl/canu/issues/1214 https://github.com/biocore/qiime/issues/1048",
    "xid": "NVIDIA Xid 79 'GPU has fallen off the bus' / nvidia-smi 'Unable to determine the device handle': https://github.com/NVIDIA/open-gpu-kernel-modules/issues/507 https://github.com/rwth-i6/returnn/issues/1486",
    "ecc": "CUDA 'uncorrectable ECC error encountered': https://github.com/vllm-project/vllm/issues/5222 https://github.com/zai-org/ChatGLM3/issues/681 https://github.com/PaddlePaddle/Paddle/issues/10239",
    "disk": "caffe2/serialize/inline_container.cc PytorchStreamWriter 'file write failed': https://github.com/hiyouga/LlamaFactory/issues/1223 https://github.com/pytorch/pytorch/issues/76108 (disk full comment); ENOSPC strerror 'No space left on device'",
    "lightning": "lightning/pytorch/trainer/connectors/signal_connector.py ('Handling auto-requeue signal', 'Requeued SLURM job: {job_id}'); lightning/pytorch/callbacks/early_stopping.py ('Monitored metric ... is not finite')",
    "py": "CPython exception formats (Traceback / 'During handling of the above exception' / 'The above exception was the direct cause')",
    "sig": "bash job-control messages (Killed / Segmentation fault (core dumped) / Aborted (core dumped)); torch elastic 'Signal N (SIGx) received by PID'",
    "timeout": "GNU coreutils timeout.c --verbose 'timeout: sending signal TERM to command', exit 124",
    "hf": "transformers Trainer log dicts and final train_runtime summary",
    "ds": "deepspeed/runtime/fp16/loss_scaler.py OVERFLOW / minimum loss scale messages",
}


# ----------------------------------------------------------------------------
# launchers / wrappers
# ----------------------------------------------------------------------------

def elastic_block(c, script, fails, root):
    """fails: list of (rank, exitcode_str, pid); root: index into fails."""
    out = ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
           "============================================================",
           "{} FAILED".format(script),
           "------------------------------------------------------------",
           "Failures:"]
    others = [f for i, f in enumerate(fails) if i != root]
    if not others:
        out.append("  <NO_OTHER_FAILURES>")
    tstamp = "{:04d}-{:02d}-{:02d}_{}".format(c.y, c.mo, c.d, c.hms())

    def one(i, f):
        rk, ec, pid = f
        r = ["[{}]:".format(i),
             "  time      : {}".format(tstamp),
             "  host      : {}".format(c.host),
             "  rank      : {} (local_rank: {})".format(rk, rk % 8),
             "  exitcode  : {} (pid: {})".format(ec, pid),
             "  error_file: <N/A>"]
        if str(ec).startswith("-"):
            sig = {"-9": "SIGKILL", "-11": "SIGSEGV", "-6": "SIGABRT", "-15": "SIGTERM", "-7": "SIGBUS"}.get(str(ec), "SIG")
            r.append("  traceback : Signal {} ({}) received by PID {}".format(str(ec)[1:], sig, pid))
        else:
            r.append("  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
        return r
    for i, f in enumerate(others):
        out += one(i + 1, f)
    out += ["------------------------------------------------------------", "Root Cause (first observed failure):"]
    out += one(0, fails[root])
    out.append("============================================================")
    return out


def torchrun_tail(c, script, fails, root, via="torchrun"):
    r = c.rng
    rk, ec, pid = fails[root]
    out = []
    for f in fails:
        if f is not fails[root]:
            pass
    stamp = "[{}] torch.distributed.elastic.multiprocessing.api:".format(c.ts())
    for k in range(c.ngpu):
        if k not in [f[0] for f in fails]:
            out.append("W{} {} torch/distributed/elastic/multiprocessing/api.py:{}] Sending process {} closing signal SIGTERM".format(
                c.glog("")[0:0] + "{:02d}{:02d} {}.{:06d}".format(c.mo, c.d, c.hms(), r.randint(0, 999999)), c.pid - 1, r.choice([858, 890, 897]), c.pid + 10 + k))
    out.append("E{:02d}{:02d} {}.{:06d} {} torch/distributed/elastic/multiprocessing/api.py:{}] failed (exitcode: {}) local_rank: {} (pid: {}) of binary: {}".format(
        c.mo, c.d, c.hms(), r.randint(0, 999999), c.pid - 1, r.choice([826, 862, 869]), ec, rk, pid, c.pybin))
    binp = os.path.dirname(c.pybin) + "/" + via
    out += tb([(binp, 8, "<module>", "sys.exit(main())"),
               (c.f("torch/distributed/elastic/multiprocessing/errors/__init__.py"), r.choice([346, 347, 355]), "wrapper", "return f(*args, **kwargs)"),
               (c.f("torch/distributed/run.py"), r.choice([879, 892, 918]), "main", "run(args)"),
               (c.f("torch/distributed/run.py"), r.choice([870, 883, 909]), "run", "elastic_launch("),
               (c.f("torch/distributed/launcher/api.py"), r.choice([132, 138, 143]), "__call__", "return launch_agent(self._config, self._entrypoint, list(args))"),
               (c.f("torch/distributed/launcher/api.py"), r.choice([263, 269, 284]), "launch_agent", "raise ChildFailedError(")],
              "\n".join(elastic_block(c, script, fails, root)))
    return out


def ds_tail(c, script, ranks, code):
    r = c.rng
    out = []
    for k in ranks:
        out.append("[{}] [INFO] [launch.py:315:sigkill_handler] Killing subprocess {}".format(c.ts(), c.pid + k))
    out.append("[{}] [ERROR] [launch.py:321:sigkill_handler] ['{}', '-u', '{}', '--local_rank={}', '--deepspeed', 'ds_config.json'] exits with return code = {}".format(
        c.ts(), c.pybin, script, ranks[-1] if ranks else 0, code))
    return out


def rank_pref(lines, rk):
    return ["[rank{}]: {}".format(rk, l) for l in lines]


def consequence_lines(c, rk, failed_rank, backend="nccl"):
    r = c.rng
    if backend == "gloo":
        return rank_pref(tb(user_frames(c, 2) + [(c.f("torch/distributed/c10d_logger.py"), 83, "wrapper", "return func(*args, **kwargs)"),
                                               (c.f("torch/distributed/distributed_c10d.py"), r.choice([2288, 2501]), "all_reduce", "work.wait()")],
                            "RuntimeError: [{}/gloo/transport/tcp/pair.cc:{}] Connection closed by peer [{}]:{}".format(
                                r.choice(["../third_party", "/pytorch/third_party"]), r.choice([534, 546, 598]), "10.0.{}.{}".format(r.randint(0, 9), r.randint(2, 250)), r.randint(20000, 60000))), rk)
    seq = r.randint(100, 90000)
    op = r.choice(["ALLREDUCE", "_ALLGATHER_BASE", "_REDUCE_SCATTER_BASE", "BROADCAST"])
    n = r.randint(1, 500000000)
    return ["[rank{}]:[E{:02d}{:02d} {}.{:09d} ProcessGroupNCCL.cpp:{}] [Rank {}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={}, OpType={}, NumelIn={}, NumelOut={}, Timeout(ms)=600000) ran for {} milliseconds before timing out.".format(
        rk, c.mo, c.d, c.hms(), r.randint(0, 999999999), r.choice([607, 616, 632]), rk, seq, op, n, n, 600000 + r.randint(1, 99))]


def py_fail(c, mode, frames, exc, prov, fw=None, wrapper=None, pre_exc=None, tail=0, gpu=True):
    """Generic: a Python exception ends the run, under one of several launchers."""
    r = c.rng
    fw = fw or r.choice(["hf", "lightning", "plain", "ds", "megatron", "keras", "jax"])
    wrapper = wrapper or r.choice(["plain", "plain", "slurm", "torchrun", "torchrun", "deepspeed", "accelerate", "nohup"])
    if wrapper in ("torchrun", "deepspeed", "accelerate") and c.ngpu < 2:
        c.ngpu = r.choice([2, 4, 8])
    lines = []
    if wrapper == "slurm":
        lines += slurm_header(c)
    if wrapper == "deepspeed":
        lines.append("[{}] [INFO] [runner.py:{}:main] cmd = {} -u -m deepspeed.launcher.launch --world_info={} --master_addr=127.0.0.1 --master_port={} --enable_each_rank_log=None train.py".format(
            c.ts(), r.choice([555, 568, 607]), c.pybin, "eyJsb2NhbGhvc3QiOiBbMCwgMSwgMiwgM119", r.randint(20000, 30000)))
    if wrapper in ("torchrun", "accelerate"):
        lines.append("W{:02d}{:02d} {}.{:06d} {} torch/distributed/run.py:793] ".format(c.mo, c.d, c.hms(), r.randint(0, 999999), c.pid - 1))
        lines.append("W{:02d}{:02d} {}.{:06d} {} torch/distributed/run.py:793] *****************************************".format(c.mo, c.d, c.hms(), r.randint(0, 999999), c.pid - 1))
        lines.append("W{:02d}{:02d} {}.{:06d} {} torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ".format(c.mo, c.d, c.hms(), r.randint(0, 999999), c.pid - 1))
    lines += preamble(c)
    if wrapper in ("torchrun", "deepspeed", "accelerate") and r.random() < 0.7:
        lines += nccl_info(c, r.randint(6, 30), list(range(c.ngpu)))
    lines += train_noise(c, fw, r.randint(6, 60))
    if pre_exc:
        lines += pre_exc
    script = "train.py"
    if wrapper in ("torchrun", "deepspeed", "accelerate"):
        frk = r.randrange(c.ngpu)
        body = tb(frames, exc)
        if r.random() < 0.6:
            body = rank_pref(body, frk)
        lines += body
        # consequences on other ranks, some time later
        be = r.choice(["nccl", "nccl", "gloo"])
        for rk in range(c.ngpu):
            if rk != frk and r.random() < 0.5:
                lines += consequence_lines(c, rk, frk, be)
        if tail:
            lines += teardown_noise(c, tail)
        if wrapper == "deepspeed":
            lines += ds_tail(c, script, list(range(c.ngpu)), 1)
        else:
            fails = [(frk, 1, c.pid + frk)]
            lines += torchrun_tail(c, script, fails, 0, "accelerate" if wrapper == "accelerate" else "torchrun")
            if wrapper == "accelerate":
                lines.append("subprocess.CalledProcessError: Command '['{}', '-m', 'torch.distributed.run', '--nproc_per_node', '{}', 'train.py']' returned non-zero exit status 1.".format(c.pybin, c.ngpu))
        code = 1
    else:
        lines += tb(frames, exc)
        if tail:
            lines += teardown_noise(c, tail)
        if r.random() < 0.4:
            lines += wandb_teardown(c, ok=False)
        code = 1
        if wrapper == "slurm":
            lines.append("srun: error: {}: task 0: Exited with exit code 1".format(c.host))
    lines = pad_noise(c, lines, fw)
    return Log(mode, code, prov + "; launcher: " + wrapper, gpu), lines


def dl_reraise(c, etype, inner_frames, inner_exc, k=None):
    r = c.rng
    k = r.randint(0, 7) if k is None else k
    frames = user_frames(c, 2) + [
        (c.f("torch/utils/data/dataloader.py"), r.choice([630, 631, 701, 708]), "__next__", "data = self._next_data()"),
        (c.f("torch/utils/data/dataloader.py"), r.choice([1328, 1344, 1465, 1480]), "_next_data", "return self._process_data(data)"),
        (c.f("torch/utils/data/dataloader.py"), r.choice([1370, 1491, 1505]), "_process_data", "data.reraise()"),
        (c.f("torch/_utils.py"), r.choice([694, 705, 722, 733]), "reraise", "raise exception")]
    inner = ["Original Traceback (most recent call last):"]
    fr = [(c.f("torch/utils/data/_utils/worker.py"), r.choice([308, 309, 349, 351]), "_worker_loop", "data = fetcher.fetch(index)  # type: ignore[possibly-undefined]"),
          (c.f("torch/utils/data/_utils/fetch.py"), r.choice([52, 55]), "fetch", "data = [self.dataset[idx] for idx in possibly_batched_index]")] + inner_frames
    for fn, ln, func, code in fr:
        inner.append('  File "{}", line {}, in {}'.format(fn, ln, func))
        inner.append("    " + code)
    inner.append(inner_exc)
    return frames, "{}: Caught {} in DataLoader worker process {}.\n".format(etype, etype.split(".")[-1], k) + "\n".join(inner)


def ds_frames(c):
    return [("{}/datasets/{}.py".format(c.work, c.rng.choice(["shards", "jsonl_ds", "coco", "audio_ds"])), c.rng.randint(40, 300), "__getitem__",
             c.rng.choice(["rec = self.index[idx]", "sample = self.items[self.keys[i]]", "x = load(self.paths[i])"]))]


# ----------------------------------------------------------------------------
# scenarios, one function per family; each picks a variant with c.rng
# ----------------------------------------------------------------------------

def gib(x):
    return "{:.2f} GiB".format(x)


def s_cuda_oom(c):
    r = c.rng
    v = r.randint(0, 4)
    tot = c.gpu_mem / 1024.0
    if v == 0 or v == 1:
        alloc = r.uniform(0.1, 20)
        free = r.uniform(0.0, 0.9)
        msg = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {}. GPU {} has a total capacity of {} of which {} is free. "
               "Including non-PyTorch memory, this process has {} memory in use. Of the allocated memory {} is allocated by PyTorch, and {} is reserved by PyTorch but unallocated. "
               "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  "
               "See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)").format(
            gib(alloc), r.randint(0, 7), gib(tot), "{:.2f} MiB".format(free * 1024), gib(tot - 0.5), gib(tot * 0.6), gib(tot * 0.3))
        fr = user_frames(c, 3) + torch_fwd_frames(c) + [(c.f("transformers/models/llama/modeling_llama.py"), r.randint(200, 900), "forward", "attn_weights = torch.matmul(query_states, key_states.transpose(2, 3)) / math.sqrt(self.head_dim)")]
        return py_fail(c, "cuda_oom", fr, msg, P["oom"], tail=r.choice([0, 0, 20, 150]))
    if v == 2:
        msg = "RuntimeError: CUDA out of memory. Tried to allocate {:.2f} MiB (GPU 0; {} total capacity; {} already allocated; {:.2f} MiB free; {} reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF".format(
            r.uniform(20, 900), gib(tot), gib(tot * 0.9), r.uniform(1, 300), gib(tot * 0.95))
        return py_fail(c, "cuda_oom", user_frames(c, 3) + torch_fwd_frames(c), msg, P["oom"], fw=r.choice(["plain", "lightning"]))
    if v == 3:
        c.gpu, c.gpu_mem = "TPU v4", 32768
        msg = "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate {} bytes.".format(r.randint(10 ** 8, 9 * 10 ** 9))
        fr = user_frames(c, 2) + [(c.f("jax/_src/traceback_util.py"), 179, "reraise_with_filtered_traceback", "return fun(*args, **kwargs)")]
        pre = ["jax.errors.SimplifiedTraceback: For simplicity, JAX has removed its internal frames from the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to include these.", "",
               "The above exception was the direct cause of the following exception:", ""]
        lg, lines = py_fail(c, "cuda_oom", fr, msg, P["jaxoom"], fw="jax", wrapper=r.choice(["plain", "slurm"]), pre_exc=pre)
        return lg, lines
    # XLA TPU hbm compile error
    c.gpu, c.gpu_mem = "TPU v3-8", 16384
    used = r.uniform(17, 40)
    msg = "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used {:.2f}G of 15.48G hbm. Exceeded hbm capacity by {:.2f}G.".format(used, used - 15.48)
    return py_fail(c, "cuda_oom", user_frames(c, 3), msg, P["jaxoom"], fw="jax", wrapper="plain")


CUDA_TAIL = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
             "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\n"
             "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")


def s_cuda_runtime(c):
    r = c.rng
    v = r.randint(0, 6)
    fr = user_frames(c, 3) + torch_fwd_frames(c)
    pre = None
    if v == 0:
        pre = ["{}/aten/src/ATen/native/cuda/Loss.cu:{}: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [{},0,0] Assertion `t >= 0 && t < n_classes` failed.".format(
            r.choice(["/opt/pytorch/pytorch", "/pytorch"]), r.choice([240, 250]), r.randint(0, 31)) for _ in range(1)]
        pre += ["{}/aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [{},0,0] Assertion `t >= 0 && t < n_classes` failed.".format("/pytorch", k) for k in range(r.randint(2, 20))]
        msg = "RuntimeError: CUDA error: device-side assert triggered\n" + CUDA_TAIL
    elif v == 1:
        msg = "RuntimeError: CUDA error: an illegal memory access was encountered\n" + CUDA_TAIL
    elif v == 2:
        msg = "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DFALT_TENSOR_OP)`"
    elif v == 3:
        msg = "RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR"
        fr += [(c.f("torch/nn/modules/conv.py"), r.choice([456, 549]), "_conv_forward", "return F.conv2d(input, weight, bias, self.stride,")]
    elif v == 4:
        msg = "RuntimeError: CUDA error: no kernel image is available for execution on the device\n" + CUDA_TAIL
        pre = ["{}: UserWarning: \n{} with CUDA capability sm_90 is not compatible with the current PyTorch installation.\nThe current PyTorch install supports CUDA capabilities sm_37 sm_50 sm_60 sm_70.".format(c.f("torch/cuda/__init__.py:146"), c.gpu)]
    elif v == 5:
        msg = "RuntimeError: CUDA error: unspecified launch failure\n" + CUDA_TAIL
    else:
        # chained: a CUDA error re-raised by a user wrapper, still naming it
        inner = tb(fr, "RuntimeError: CUDA error: misaligned address\n" + CUDA_TAIL)
        pre = inner + ["", "During handling of the above exception, another exception occurred:", ""]
        fr = user_frames(c, 2)
        msg = "RuntimeError: step 1840 failed on device cuda:{} (CUDA error: misaligned address); aborting epoch".format(r.randint(0, 7))
    return py_fail(c, "cuda_runtime", fr, msg, P["cudaerr"], pre_exc=pre, tail=r.choice([0, 30, 200]))


def s_device_mismatch(c):
    r = c.rng
    v = r.randint(0, 4)
    fr = user_frames(c, 3) + torch_fwd_frames(c)
    if v == 0:
        msg = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument mat1 in method wrapper_CUDA_addmm)"
        fr += [(c.f("torch/nn/modules/linear.py"), r.choice([116, 125]), "forward", "return F.linear(input, self.weight, self.bias)")]
    elif v == 1:
        fr += [(c.f("torch/_prims_common/__init__.py"), r.choice([740, 781]), "check_same_device", "raise RuntimeError(msg)")]
        msg = "RuntimeError: Tensor on device meta is not on the expected device cpu!"
    elif v == 2:
        c.gpu, c.driver = "Apple M2 Max (mps)", "none"
        msg = "RuntimeError: Placeholder storage has not been allocated on MPS device!"
        return py_fail(c, "device_mismatch", fr, msg, "PyTorch MPS backend (aten/src/ATen/native/mps/OperationUtils.mm) 'Placeholder storage has not been allocated on MPS device!'", fw="plain", wrapper="plain")
    elif v == 3:
        c.gpu, c.driver = "TPU v4", "none"
        msg = "RuntimeError: Input tensor is not an XLA tensor: CPUFloatType"
        return py_fail(c, "device_mismatch", fr, msg, "torch_xla aten_xla_bridge 'Input tensor is not an XLA tensor'", fw="plain", wrapper="plain")
    else:
        msg = "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:1 and cuda:0! (when checking argument for argument index in method wrapper_CUDA__index_select)"
    return py_fail(c, "device_mismatch", fr, msg, P["devmm"] + "; " + P["meta"])


def s_ram_oom(c):
    r = c.rng
    v = r.randint(0, 4)
    fr = user_frames(c, 3)
    if v == 0:
        sh = (r.randint(10 ** 5, 10 ** 6), r.randint(1000, 50000))
        msg = "numpy.core._exceptions._ArrayMemoryError: Unable to allocate {:.1f} GiB for an array with shape ({}, {}) and data type float64".format(sh[0] * sh[1] * 8 / 2 ** 30, sh[0], sh[1])
        fr += [("{}/data/preprocess.py".format(c.work), r.randint(10, 200), "build_matrix", "feats = np.zeros((n, d))")]
        return py_fail(c, "ram_oom", fr, msg, "numpy numpy/core/src/multiarray/alloc.c 'Unable to allocate %s for an array with shape %s and data type %s'", fw="plain", wrapper=r.choice(["plain", "slurm"]), gpu=False)
    if v == 1:
        return py_fail(c, "ram_oom", fr + [(c.f("pickle.py") if False else "/usr/lib/python3.10/json/decoder.py", 337, "decode", "obj, end = self.raw_decode(s, idx=_w(s, 0).end())")], "MemoryError", P["py"], fw="plain")
    if v == 2:
        b = r.choice([34359738368, 68719476736, 17179869184])
        msg = "RuntimeError: [enforce fail at alloc_cpu.cpp:{}] data. DefaultCPUAllocator: not enough memory: you tried to allocate {} bytes.".format(r.choice([83, 114, 117]), b)
        return py_fail(c, "ram_oom", fr, msg, "c10/core/impl/alloc_cpu.cpp DefaultCPUAllocator 'not enough memory: you tried to allocate'")
    if v == 3:
        fr += [("/usr/lib/python3.10/subprocess.py", 1847, "_execute_child", "self.pid = _fork_exec(")]
        return py_fail(c, "ram_oom", fr, "OSError: [Errno 12] Cannot allocate memory", "ENOMEM strerror from fork in CPython subprocess", fw="plain")
    f2, msg = dl_reraise(c, "MemoryError", ds_frames(c), "MemoryError")
    return py_fail(c, "ram_oom", f2, msg, P["dlworker"])


def s_file_not_found(c):
    r = c.rng
    v = r.randint(0, 4)
    if v == 0:
        p = "/data/shards/train-{:05d}.tar".format(r.randint(0, 2000))
        fr = user_frames(c, 2) + [("{}/data/webds.py".format(c.work), 88, "open_shard", "fh = open(path, 'rb')")]
        return py_fail(c, "file_not_found", fr, "FileNotFoundError: [Errno 2] No such file or directory: '{}'".format(p), P["py"] + "; " + P["elastic"], wrapper="torchrun")
    if v == 1:
        f2, msg = dl_reraise(c, "FileNotFoundError", ds_frames(c) + [(c.f("PIL/Image.py"), r.choice([3247, 3431]), "open", "fp = builtins.open(filename, \"rb\")")],
                             "FileNotFoundError: [Errno 2] No such file or directory: '/datasets/coco/train2017/{:012d}.jpg'".format(r.randint(1, 580000)))
        return py_fail(c, "file_not_found", f2, msg, P["dlworker"])
    if v == 2:
        msg = "FileNotFoundError: Couldn't find a dataset script at {}/data/my_corpus/my_corpus.py or any data file in the same directory.".format(c.work)
        return py_fail(c, "file_not_found", user_frames(c, 2) + [(c.f("datasets/load.py"), r.choice([1819, 2129, 2556]), "load_dataset", "builder_instance = load_dataset_builder(")], msg, "huggingface datasets load.py 'Couldn't find a dataset script at'")
    if v == 3:
        ck = "{}/checkpoints/step_{}.pt".format(c.work, r.randint(1, 90) * 1000)
        fr = user_frames(c, 2) + [(c.f("torch/serialization.py"), r.choice([1065, 1319, 1425]), "load", "with _open_file_like(f, \"rb\") as opened_file:"),
                                  (c.f("torch/serialization.py"), r.choice([468, 659]), "__init__", "super().__init__(open(name, mode))")]
        return py_fail(c, "file_not_found", fr, "FileNotFoundError: [Errno 2] No such file or directory: '{}'".format(ck), P["py"])
    fr = user_frames(c, 2) + [("/usr/lib/python3.10/shutil.py", 254, "copyfile", "with open(src, 'rb') as fsrc:")]
    return py_fail(c, "file_not_found", fr, "FileNotFoundError: [Errno 2] No such file or directory: '/scratch/{}/tokenizer/spm.model'".format(c.user), P["py"])


def s_permission(c):
    r = c.rng
    v = r.randint(0, 3)
    if v == 0:
        fr = user_frames(c, 2) + [(c.f("torch/serialization.py"), r.choice([627, 849]), "save", "with _open_zipfile_writer(f) as opened_zipfile:")]
        return py_fail(c, "permission", fr, "PermissionError: [Errno 13] Permission denied: '/checkpoints/shared/{}/last.ckpt'".format(c.proj), P["py"])
    if v == 1:
        fr = user_frames(c, 2) + [("/usr/lib/python3.10/os.py", 225, "makedirs", "mkdir(name, mode)")]
        return py_fail(c, "permission", fr, "OSError: [Errno 30] Read-only file system: '/datasets/{}/cache'".format(c.proj), "EROFS strerror 'Read-only file system'")
    if v == 2:
        fr = user_frames(c, 2) + [(c.f("huggingface_hub/file_download.py"), r.choice([1010, 1426]), "hf_hub_download", "os.makedirs(storage_folder, exist_ok=True)"),
                                  ("/usr/lib/python3.10/os.py", 225, "makedirs", "mkdir(name, mode)")]
        return py_fail(c, "permission", fr, "PermissionError: [Errno 13] Permission denied: '/opt/hf_cache/hub/models--meta-llama--Llama-2-7b-hf'", P["py"])
    fr = user_frames(c, 2)
    return py_fail(c, "permission", fr, "PermissionError: [Errno 1] Operation not permitted: '/sys/class/nvidia-smi-lock'", "EPERM strerror 'Operation not permitted'", fw="plain")


def s_missing_module(c):
    r = c.rng
    v = r.randint(0, 3)
    if v == 0:
        fr = [("{}/train.py".format(c.work), r.randint(5, 30), "<module>", "from flash_attn import flash_attn_func")]
        return py_fail(c, "missing_module", fr, "ModuleNotFoundError: No module named 'flash_attn'", P["py"], fw="plain")
    if v == 1:
        fr = [("{}/train.py".format(c.work), 3, "<module>", "import torch"), (c.f("torch/__init__.py"), r.choice([235, 290]), "<module>", "from torch._C import *  # noqa: F403")]
        return py_fail(c, "missing_module", fr, "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory", "dynamic loader 'cannot open shared object file'", fw="plain")
    if v == 2:
        fr = [("{}/model.py".format(c.work), 12, "<module>", "import apex.amp as amp")]
        return py_fail(c, "missing_module", fr, "ImportError: {}/amp_C.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda20CUDACachingAllocator9allocatorE".format(c.site), "ImportError undefined symbol (ABI mismatch)", fw="plain")
    fr = user_frames(c, 2) + [(c.f("transformers/utils/import_utils.py"), 1566, "_get_module", "return importlib.import_module(\".\" + module_name, self.__name__)")]
    msg = "ModuleNotFoundError: No module named 'sentencepiece'"
    return py_fail(c, "missing_module", fr, msg, P["py"])


def s_div_zero(c):
    r = c.rng
    v = r.randint(0, 3)
    if v == 3:
        lines = preamble(c) + train_noise(c, "plain", r.randint(20, 60))
        lines.append("./run_eval.sh: line {}: {} Floating point exception(core dumped) ./bin/score_ranker --topk 0 --in preds.bin".format(r.randint(5, 40), c.pid))
        return Log("div_zero", 136, "bash job-control 'Floating point exception (core dumped)' for SIGFPE from integer division by zero"), pad_noise(c, lines, "plain")
    fr = user_frames(c, 2) + [("{}/metrics.py".format(c.work), r.randint(10, 99), r.choice(["precision", "mean_iou", "throughput"]), r.choice(["return tp / (tp + fp)", "return total / n_batches", "return inter / union"]))]
    msg = ["ZeroDivisionError: division by zero", "ZeroDivisionError: float division by zero", "ZeroDivisionError: integer division or modulo by zero"][v]
    return py_fail(c, "div_zero", fr, msg, P["py"])


TB_ERRS = [
    "KeyError: 'input_ids'", "TypeError: forward() got an unexpected keyword argument 'labels'",
    "ValueError: WARNING threshold exceeded: 37 of 512 samples have empty transcripts",
    "IndexError: list index out of range", "AttributeError: 'NoneType' object has no attribute 'shape'",
    "json.decoder.JSONDecodeError: Expecting value: line 1 column 1 (char 0)",
    "ValueError: too many values to unpack (expected 2)",
    "TypeError: unsupported operand type(s) for +: 'int' and 'NoneType'",
]


def s_traceback(c):
    r = c.rng
    v = r.randint(0, 3)
    if v == 0:
        f2, msg = dl_reraise(c, "KeyError", ds_frames(c), "KeyError: {}".format(r.randint(100, 99999)))
        return py_fail(c, "traceback", f2, msg, P["dlworker"])
    if v == 1:
        # chained: KeyError then ValueError raised from it
        inner = tb(user_frames(c, 2), "KeyError: 'label'")
        pre = inner + ["", "The above exception was the direct cause of the following exception:", ""]
        return py_fail(c, "traceback", user_frames(c, 2), "ValueError: sample 4412 is missing field 'label'", P["py"], pre_exc=pre)
    return py_fail(c, "traceback", user_frames(c, 3), r.choice(TB_ERRS), P["py"])


def s_assertion(c):
    r = c.rng
    fr = user_frames(c, 3) + [("{}/model/attn.py".format(c.work), r.randint(20, 200), "forward", r.choice(["assert q.shape[-1] == self.head_dim", "assert T <= self.block_size, f\"Cannot forward sequence of length {T}\"", "assert not torch.isnan(x).any()"]))]
    msg = r.choice(["AssertionError", "AssertionError: Cannot forward sequence of length 2048, block size is only 1024",
                    "AssertionError: world_size (6) must be divisible by tensor_parallel_size (4)", "AssertionError: expected 3 channels, got 1"])
    return py_fail(c, "assertion", fr, msg, P["py"])


RT_ERRS = [
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x{} and 768x{})",
    "RuntimeError: The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension 1",
    "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.",
    "RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [{}, {}]], which is output 0 of ReluBackward0, is at version 2; expected version 1 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).",
    "RuntimeError: Error(s) in loading state_dict for GPT:\n\tsize mismatch for lm_head.weight: copying a param with shape torch.Size([{}, 768]) from checkpoint, the shape in current model is torch.Size([{}, 768]).",
    "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn{}{}",
]


def s_runtime_error(c):
    r = c.rng
    m = r.choice(RT_ERRS).format(r.choice([512, 1024, 64, 50257]), r.choice([10, 128, 50304, 32000]))
    m = m.replace("grad_fn5", "grad_fn").replace("grad_fn1", "grad_fn")
    m = m.split("grad_fn")[0] + "grad_fn" if "grad_fn" in m and "does not have" in m else m
    return py_fail(c, "runtime_error", user_frames(c, 3) + torch_fwd_frames(c), m, "PyTorch aten/autograd error texts (shape check, autograd engine, load_state_dict)")


def multi_start(c, fw):
    r = c.rng
    if c.ngpu < 2:
        c.ngpu = r.choice([2, 4, 8])
    lines = preamble(c) + nccl_info(c, r.randint(8, 40), list(range(c.ngpu)))
    lines += train_noise(c, fw, r.randint(10, 50))
    return lines


def s_nccl(c):
    r = c.rng
    v = r.randint(0, 4)
    fw = r.choice(["megatron", "ds", "hf", "lightning", "plain"])
    lines = multi_start(c, fw)
    if v == 0:
        # watchdog timeout on all ranks, then SIGABRT of workers by watchdog
        for rk in range(c.ngpu):
            lines += consequence_lines(c, rk, None)
        for rk in range(c.ngpu):
            lines.append("[rank{}]:[E{:02d}{:02d} {}.{:09d} ProcessGroupNCCL.cpp:{}] [PG ID 0 PG GUID 0(default_pg) Rank {}] Exception (either an error or timeout) detected by watchdog at work: {}, last enqueued NCCL work: {}, last completed NCCL work: {}.".format(
                rk, c.mo, c.d, c.hms(), r.randint(0, 10 ** 9), r.choice([1664, 1785]), rk, 5511, 5513, 5510))
            lines.append("[rank{}]:[E{:02d}{:02d} {}.{:09d} ProcessGroupNCCL.cpp:{}] [PG ID 0 PG GUID 0(default_pg) Rank {}] To avoid data inconsistency, we are taking the entire process down.".format(
                rk, c.mo, c.d, c.hms(), r.randint(0, 10 ** 9), r.choice([630, 1834]), rk))
        fails = [(rk, -6, c.pid + rk) for rk in range(c.ngpu)]
        lines += torchrun_tail(c, "pretrain_gpt.py", fails, r.randrange(c.ngpu))
        return Log("nccl", 1, P["watchdog"] + "; " + P["elastic"]), lines
    if v == 1:
        rk = r.randrange(c.ngpu)
        lines.append("{}:{}:{} [{}] misc/socket.cc:{} NCCL WARN socketProgress: Connection closed by remote peer {}<{}>".format(c.host, c.pid + rk, c.pid + rk + 99, rk, r.choice([47, 49, 50]), "gpu-b{:03d}".format(r.randint(1, 99)), r.randint(30000, 60000)))
        lines.append("{}:{}:{} [{}] NCCL INFO misc/socket.cc:749 -> 6".format(c.host, c.pid + rk, c.pid + rk + 99, rk))
        lines.append("{}:{}:{} [{}] proxy.cc:1143 NCCL WARN Socket recv failed while polling for opId=0x7f{:08x}".format(c.host, c.pid + rk, c.pid + rk + 99, rk, r.randint(0, 1 << 32)))
        body = tb(user_frames(c, 2) + [(c.f("torch/distributed/distributed_c10d.py"), r.choice([2288, 2501, 2806]), "all_reduce", "work = group.allreduce([tensor], opts)")],
                  "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:{}, remote process exited or there was a network error, NCCL version 2.{}.{}\nncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\nLast error:\nsocketProgress: Connection closed by remote peer".format(r.choice([1970, 2027, 3356]), r.choice([19, 20, 21]), r.randint(3, 5)))
        lines += rank_pref(body, rk)
        lines += torchrun_tail(c, "train.py", [(rk, 1, c.pid + rk)], 0)
        return Log("nccl", 1, P["ncclerr"] + "; " + P["elastic"]), lines
    if v == 2:
        # c10d store timeout at init
        lines = preamble(c)
        body = tb(user_frames(c, 2) + [(c.f("torch/distributed/c10d_logger.py"), 79, "wrapper", "return func(*args, **kwargs)"),
                                      (c.f("torch/distributed/distributed_c10d.py"), 1520, "init_process_group", "store, rank, world_size = next(rendezvous_iterator)"),
                                      (c.f("torch/distributed/rendezvous.py"), 269, "_env_rendezvous_handler", "store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout, use_libuv)")],
                  "torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/{} clients joined.".format(c.ngpu))
        lines += body
        lines.append("srun: error: {}: task 0: Exited with exit code 1".format(c.host))
        return Log("nccl", 1, "torch/csrc/distributed/c10d/TCPStore.cpp 'Timed out after %d seconds waiting for clients'; launcher: srun"), pad_noise(c, lines, "plain")
    if v == 3:
        # mpirun transport failure (Horovod/MPI)
        lines.append("--------------------------------------------------------------------------")
        lines.append("WARNING: There was an error initializing an OpenFabrics device.")
        lines.append("")
        lines.append("  Local host:   {}".format(c.host))
        lines.append("  Local device: mlx5_0")
        lines.append("--------------------------------------------------------------------------")
        lines += train_noise(c, "plain", 12)
        lines.append("[{}:{:05d}] [[{},1],{}] ORTE_ERROR_LOG: Data unpack would read past end of buffer in file grpcomm_direct.c at line 355".format(c.host, c.pid, r.randint(10000, 60000), r.randint(0, 7)))
        lines.append("[{}][[{},1],3][btl_tcp_endpoint.c:{}:mca_btl_tcp_endpoint_complete_connect] connect() to 10.1.{}.{} failed: Connection refused (111)".format(c.host, r.randint(10000, 60000), r.choice([626, 803]), r.randint(0, 9), r.randint(2, 250)))
        lines += ["--------------------------------------------------------------------------",
                  "Primary job  terminated normally, but 1 process returned",
                  "a non-zero exit code. Per user-direction, the job has been aborted.",
                  "--------------------------------------------------------------------------",
                  "--------------------------------------------------------------------------",
                  "mpirun detected that one or more processes exited with non-zero status, thus causing",
                  "the job to be terminated. The first process to do so was:", "",
                  "  Process name: [[{},1],3]".format(r.randint(10000, 60000)), "  Exit code:    1",
                  "--------------------------------------------------------------------------"]
        return Log("nccl", 1, "Open MPI btl_tcp_endpoint.c 'connect() to ... failed: Connection refused (111)' and mpirun abort banner (https://github.com/NVIDIA/nccl/issues/241)"), lines
    # gloo-only job, rank 0 loses peer because rank 1's host network dropped (no other error)
    rk = 1
    body = tb(user_frames(c, 2) + [(c.f("torch/distributed/distributed_c10d.py"), 2501, "all_reduce", "work.wait()")],
              "RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete")
    lines += rank_pref(body, 0)
    lines += torchrun_tail(c, "train.py", [(0, 1, c.pid)], 0)
    return Log("nccl", 1, "gloo transport tcp/unbound_buffer.cc 'Timed out waiting %dms for recv operation to complete'; " + P["elastic"]), lines


def s_gpu_hw(c):
    r = c.rng
    v = r.randint(0, 3)
    fw = r.choice(["megatron", "ds", "hf", "plain"])
    lines = multi_start(c, fw)
    bad = r.randrange(c.ngpu)
    if v == 0:
        lines.append("[{}] NVRM: Xid (PCI:0000:{:02x}:00): 79, pid={}, name=python, GPU has fallen off the bus.".format(r.uniform(100000, 900000), 0x18 + bad * 16 % 200, c.pid + bad))
        lines.append("NVRM: GPU 0000:{:02x}:00.0: GPU has fallen off the bus.".format(0x18 + bad * 16 % 200))
        for rk in range(c.ngpu):
            if rk != bad:
                lines += rank_pref(tb(user_frames(c, 2), "RuntimeError: NCCL error: unhandled cuda error (run with NCCL_DEBUG=INFO for details)"), rk)
        lines += rank_pref(tb(user_frames(c, 2), "RuntimeError: CUDA error: unknown error\n" + CUDA_TAIL), bad)
        lines += ["=== post-mortem: nvidia-smi ===", "Unable to determine the device handle for GPU0000:{:02X}:00.0: Unknown Error".format(0x18 + bad * 16 % 200)]
        lines += torchrun_tail(c, "train.py", [(rk, 1, c.pid + rk) for rk in range(c.ngpu)], 0)
        return Log("gpu_hardware", 1, P["xid"] + "; " + P["ncclerr"]), lines
    if v == 1:
        lines += rank_pref(tb(user_frames(c, 3), "RuntimeError: CUDA error: uncorrectable ECC error encountered\n" + CUDA_TAIL), bad)
        for rk in range(c.ngpu):
            if rk != bad:
                lines += consequence_lines(c, rk, bad)
        lines += teardown_noise(c, r.randint(5, 80))
        lines += torchrun_tail(c, "train.py", [(bad, 1, c.pid + bad)] + [(rk, -6, c.pid + rk) for rk in range(c.ngpu) if rk != bad], 0)
        return Log("gpu_hardware", 1, P["ecc"] + "; " + P["watchdog"]), lines
    if v == 2:
        lines.append("{}: {} [{}] NVRM: Xid (PCI:0000:{:02x}:00): 48, pid={}, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0.".format(
            c.iso(), c.host, r.uniform(1000, 99999), 0x3b, c.pid + bad))
        lines.append("{}:{}:{} [{}] NCCL WARN Cuda failure 'uncorrectable ECC error encountered'".format(c.host, c.pid + bad, c.pid + bad + 77, bad))
        lines += ["[rank{}]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:{}, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5".format(rk, r.choice([275, 317])) for rk in range(c.ngpu) if rk != bad][:3]
        lines.append("srun: error: {}: tasks 0-{}: Exited with exit code 1".format(c.host, c.ngpu - 1))
        return Log("gpu_hardware", 1, "NVIDIA Xid 48 DBE wording (driver NVRM); " + P["ecc"] + "; launcher: srun"), lines
    # GPU lost in JAX/TF
    lines.append("{} {} cuda_driver.cc:{}] failed to synchronize the stop event: CUDA_ERROR_LAUNCH_FAILED: unspecified launch failure".format(c.glog("E"), r.randint(1000, 9999), r.choice([1205, 1310])))
    lines.append("[{}] NVRM: Xid (PCI:0000:{:02x}:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.".format(r.uniform(1000, 99999), 0xbd))
    lines.append("nvidia-smi: Unable to determine the device handle for GPU0000:BD:00.0: GPU is lost.  Reboot the system to recover this GPU")
    lines.append("Job step failed; node {} drained by health check (gpu lost)".format(c.host))
    return Log("gpu_hardware", 1, P["xid"]), lines


def s_segfault(c):
    r = c.rng
    v = r.randint(0, 3)
    fw = r.choice(["plain", "hf", "lightning"])
    lines = preamble(c) + train_noise(c, fw, r.randint(10, 60))
    if v == 0:
        lines += ["Fatal Python error: Segmentation fault", "", "Thread 0x00007f{:08x} (most recent call first):".format(r.randint(0, 1 << 32)),
                  '  File "{}", line {} in _conv_forward'.format(c.f("torch/nn/modules/conv.py"), 456),
                  '  File "{}", line {} in forward'.format(c.f("torch/nn/modules/conv.py"), 460),
                  '  File "{}/train.py", line {} in <module>'.format(c.work, r.randint(100, 500)), "",
                  "Extension modules: numpy.core._multiarray_umath, torch._C, torch._C._fft (total: 42)"]
        lines.append("/var/spool/slurmd/job{}/slurm_script: line {}: {} Segmentation fault      (core dumped) python train.py".format(c.jobid, r.randint(10, 40), c.pid))
        return Log("segfault", 139, "CPython faulthandler 'Fatal Python error: Segmentation fault'; bash job-control message"), lines
    if v == 1:
        frames = user_frames(c, 2) + [(c.f("torch/utils/data/dataloader.py"), 1284, "_try_get_data", "raise RuntimeError(f'DataLoader worker (pid(s) {pids_str}) exited unexpectedly') from e")]
        pre = tb([(c.f("torch/utils/data/dataloader.py"), 1133, "_try_get_data", "data = self._data_queue.get(timeout=timeout)"),
                  ("/usr/lib/python3.10/multiprocessing/queues.py", 113, "get", "if not self._poll(timeout):"),
                  (c.f("torch/utils/data/_utils/signal_handling.py"), 67, "handler", "_error_if_any_worker_fails()")],
                 "RuntimeError: DataLoader worker (pid {}) is killed by signal: Segmentation fault. ".format(c.pid + 5))
        pre += ["", "The above exception was the direct cause of the following exception:", ""]
        lines = ["ERROR: Unexpected segmentation fault encountered in worker.", " "] + pre
        lines = preamble(c) + train_noise(c, fw, 20) + lines + tb(frames, "RuntimeError: DataLoader worker (pid(s) {}) exited unexpectedly".format(c.pid + 5))
        return Log("segfault", 1, "torch/utils/data/_utils/signal_handling.py 'DataLoader worker (pid %d) is killed by signal: %s'"), lines
    if v == 2:
        c.ngpu = max(c.ngpu, 2)
        rk = r.randrange(c.ngpu)
        lines.append("[{}:{} :0:{}] Caught signal 11 (Segmentation fault: address not mapped to object at address 0x{:x})".format(c.host, c.pid + rk, c.pid + rk + 40, r.randint(0, 1 << 20)))
        lines += ["==== backtrace (tid: {:>7}) ====".format(c.pid + rk + 40), " 0 0x0000000000042520 __sigaction()  ???:0",
                  " 1 0x00000000016b1a2c at::native::(anonymous namespace)::index_put_kernel()  ???:0", "================================="]
        lines += consequence_lines(c, (rk + 1) % c.ngpu, rk, "gloo")
        lines += torchrun_tail(c, "train.py", [(rk, -11, c.pid + rk)], 0)
        return Log("segfault", 1, "UCX 'Caught signal 11 (Segmentation fault: address not mapped to object' (https://github.com/NVIDIA/Megatron-LM/issues/516 style); " + P["elastic"]), lines
    lines.append("Segmentation fault (core dumped)")
    return Log("segfault", -11, "direct run killed by SIGSEGV; shell message"), lines


def s_native_abort(c):
    r = c.rng
    v = r.randint(0, 4)
    lines = preamble(c) + train_noise(c, r.choice(["plain", "jax", "hf"]), r.randint(10, 60))
    if v == 0:
        lines += ["terminate called after throwing an instance of 'c10::Error'",
                  "  what():  CUDA driver error: invalid resource handle" if False else "  what():  Trying to free a pointer not allocated here",
                  "Exception raised from free at ../c10/cuda/CUDACachingAllocator.cpp:{} (most recent call first):".format(r.randint(1000, 3000)),
                  "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f{:08x} in {})".format(r.randint(0, 1 << 32), c.f("torch/lib/libc10.so")),
                  "frame #1: <unknown function> + 0x1d4a2 (0x7f{:08x} in {})".format(r.randint(0, 1 << 32), c.f("torch/lib/libc10_cuda.so")), "",
                  "Aborted (core dumped)"]
        return Log("native_abort", -6, "libstdc++ 'terminate called after throwing an instance of'; c10::Error frame format"), lines
    if v == 1:
        lines += ["{} {} hlo_instruction.cc:{}] Check failed: operand_count() == 2 (3 vs. 2)".format(c.glog("F"), r.randint(1000, 99999), r.randint(1000, 5000)),
                  "*** Check failure stack trace: ***", "    @     0x7f3a2b1c4f3d  absl::lts_20230802::log_internal::LogMessageFatal::~LogMessageFatal()",
                  "    @     0x7f3a2a9d2b11  xla::HloInstruction::CreateBinary()", "Fatal Python error: Aborted", "",
                  "Current thread 0x00007f{:08x} (most recent call first):".format(r.randint(0, 1 << 32)),
                  '  File "{}", line 1154 in _pjit_call_impl_python'.format(c.f("jax/_src/pjit.py")), "", "Aborted (core dumped)"]
        return Log("native_abort", 134, "absl/glog 'Check failed' + 'Fatal Python error: Aborted' (see https://github.com/PaddlePaddle/Paddle/issues/10239 for the Check failure stack trace format); via bash 128+6"), lines
    if v == 2:
        lines += ["python3: malloc.c:{}: sysmalloc: Assertion `(old_top == initial_top (av) && old_size == 0) || ((unsigned long) (old_size) >= MINSIZE && prev_inuse (old_top) && ((unsigned long) old_end & (pagesize - 1)) == 0)' failed.".format(2617),
                  "/var/spool/slurmd/job{}/slurm_script: line 22: {} Aborted                 (core dumped) python3 train.py".format(c.jobid, c.pid)]
        return Log("native_abort", 134, "glibc malloc.c assertion; bash job-control 'Aborted (core dumped)'"), lines
    if v == 3:
        lines += ["free(): invalid pointer", "Fatal Python error: Aborted", "",
                  "Thread 0x00007f{:08x} (most recent call first):".format(r.randint(0, 1 << 32)),
                  '  File "{}", line 300 in wait'.format("/usr/lib/python3.10/threading.py"), "", "Aborted"]
        return Log("native_abort", -6, "glibc 'free(): invalid pointer'; CPython faulthandler 'Fatal Python error: Aborted'"), lines
    lines += ["[{}] [ERROR] [engine.py:{}] worker died".format(c.ts(), r.randint(100, 900)),
              "terminate called after throwing an instance of 'std::system_error'", "  what():  Resource deadlock avoided"]
    c.ngpu = max(2, c.ngpu)
    lines += torchrun_tail(c, "serve.py", [(0, -6, c.pid)], 0)
    return Log("native_abort", 1, "libstdc++ terminate; " + P["elastic"]), lines


def s_oom_killer(c):
    r = c.rng
    v = r.randint(0, 4)
    lines = preamble(c) + train_noise(c, r.choice(["hf", "plain", "ds", "lightning"]), r.randint(10, 60))
    if v == 0:
        lines.append("/var/spool/slurmd/job{}/slurm_script: line {}: {} Killed                  python train.py".format(c.jobid, r.randint(10, 50), c.pid))
        lines.append("slurmstepd: error: Detected 1 oom_kill event in StepId={}.batch. Some of the step tasks have been OOM Killed.".format(c.jobid))
        return Log("oom_killer", 137, "Slurm task/cgroup 'Detected %u oom_kill event in %ps. Some of the step tasks have been OOM Killed.'"), lines
    if v == 1:
        c.ngpu = max(2, c.ngpu)
        rk = r.randrange(c.ngpu)
        lines += torchrun_tail(c, "finetune.py", [(rk, -9, c.pid + rk)], 0)
        lines += ["--- dmesg (tail) ---", "[{:.6f}] Out of memory: Killed process {} (python) total-vm:{}kB, anon-rss:{}kB, file-rss:0kB, shmem-rss:{}kB, UID:{} pgtables:{}kB oom_score_adj:0".format(
            r.uniform(1e5, 9e5), c.pid + rk, r.randint(10 ** 8, 5 * 10 ** 8), r.randint(10 ** 8, 3 * 10 ** 8), r.randint(10 ** 5, 10 ** 7), r.randint(1000, 60000), r.randint(10 ** 5, 10 ** 6))]
        return Log("oom_killer", 1, "Linux mm/oom_kill.c 'Out of memory: Killed process'; " + P["elastic"] + " (exitcode -9)"), lines
    if v == 2:
        lines += ["$ kubectl describe pod {}-trainer-0 | sed -n '/Last State/,/Exit Code/p'".format(c.proj),
                  "    Last State:     Terminated", "      Reason:       OOMKilled", "      Exit Code:    137",
                  "      Started:      {}".format(c.iso()), "      Finished:     {}".format(c.iso())]
        return Log("oom_killer", 137, "Kubernetes container status 'Reason: OOMKilled' 'Exit Code: 137'"), lines
    if v == 3:
        lines += ds_tail(c, "main.py", list(range(max(2, c.ngpu))), -9)
        lines.append("[{}] WARNING host memory usage 98.7% (cgroup limit 240Gi)".format(c.ts()))
        return Log("oom_killer", -9, P["dslaunch"] + " (return code = -9 with host memory at cgroup limit)"), lines
    lines.append("Killed")
    return Log("oom_killer", -9, "shell 'Killed' after kernel OOM kill"), lines


def s_disk_full(c):
    r = c.rng
    v = r.randint(0, 3)
    if v == 0:
        fr = user_frames(c, 2) + [(c.f("torch/serialization.py"), r.choice([627, 850, 964]), "save", "_save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)"),
                                  (c.f("torch/serialization.py"), r.choice([866, 1093, 1220]), "_save", "zip_file.write_record(name, storage, num_bytes)")]
        inner = tb(fr, "RuntimeError: [enforce fail at inline_container.cc:{}] . PytorchStreamWriter failed writing file data/{}: file write failed".format(r.choice([595, 778, 858]), r.randint(0, 400)))
        pre = ["[{}] INFO saving checkpoint to {}/checkpoints/step_{}".format(c.ts(), c.work, r.randint(1, 90) * 1000),
               "OSError: [Errno 28] No space left on device: '{}/checkpoints/tmp_optim.bin'".format(c.work)]
        lines = preamble(c) + train_noise(c, "plain", r.randint(10, 50)) + pre + inner
        lines += ["", "During handling of the above exception, another exception occurred:", ""]
        lines += tb(fr[:2] + [(c.f("torch/serialization.py"), 475, "__exit__", "self.file_like.write_end_of_file()")],
                    "RuntimeError: [enforce fail at inline_container.cc:{}] . unexpected pos {} vs {}".format(r.choice([603, 626]), r.randint(10 ** 8, 10 ** 9), r.randint(10 ** 8, 10 ** 9)))
        lines.append("terminate called after throwing an instance of 'c10::Error'")
        lines.append("  what():  [enforce fail at inline_container.cc:{}] . unexpected pos".format(r.choice([603, 626])))
        lines.append("Aborted (core dumped)")
        return Log("disk_full", -6, P["disk"] + "; abort after ENOSPC"), lines
    if v == 1:
        fr = user_frames(c, 2) + [(c.f("datasets/arrow_writer.py"), 586, "write_examples_on_file", "self.write_batch(batch_examples=batch_examples)")]
        return py_fail(c, "disk_full", fr, "OSError: [Errno 28] No space left on device", "ENOSPC strerror; datasets arrow_writer")
    if v == 2:
        fr = user_frames(c, 2) + [("/usr/lib/python3.10/shutil.py", 200, "_copyfileobj_readinto", "fdst_write(mv)")]
        return py_fail(c, "disk_full", fr, "OSError: [Errno 122] Disk quota exceeded: '/home/{}/.cache/huggingface/hub/tmpq9_x1b2'".format(c.user), "EDQUOT strerror 'Disk quota exceeded'", fw="plain")
    lines = preamble(c) + train_noise(c, "jax", r.randint(10, 40))
    lines += ["{} {} checkpoint.py:{}] Writing checkpoint to gs://... local staging /tmp/ckpt".format(c.glog("I"), r.randint(1000, 9999), r.randint(100, 900)),
              "{} {} tensorstore: Error writing local file \"/tmp/ckpt/params.zarr/0.0\": [OS error: No space left on device]".format(c.glog("E"), r.randint(1000, 9999)),
              "{} {} checkpointer.py:{}] Check failed: status.ok() ABORTED: checkpoint write incomplete".format(c.glog("F"), r.randint(1000, 9999), r.randint(100, 300)),
              "*** Check failure stack trace: ***", "Fatal Python error: Aborted", "", "Aborted (core dumped)"]
    return Log("disk_full", 134, "tensorstore 'OS error: No space left on device'; abort afterwards; via bash 128+6"), lines


def s_walltime(c):
    r = c.rng
    v = r.randint(0, 5)
    fw = r.choice(["hf", "megatron", "lightning", "ds", "plain", "jax"])
    lines = slurm_header(c) + preamble(c) + train_noise(c, fw, r.randint(20, 80))
    if v in (0, 1):
        lines.append("slurmstepd: error: *** JOB {} ON {} CANCELLED AT {} DUE TO TIME LIMIT ***".format(c.jobid, c.host, c.iso()))
        if v == 1:
            lines.append("slurmstepd: error: *** STEP {}.0 ON {} CANCELLED AT {} DUE TO TIME LIMIT ***".format(c.jobid, c.host, c.iso()))
        # teardown after the decisive line: a SIGTERM handler, interrupted training, NCCL aborts
        lines += ["[{}] WARNING received SIGTERM, attempting graceful shutdown".format(c.ts()),
                  "srun: Job step aborted: Waiting up to 32 seconds for job step to finish."]
        lines += rank_pref(tb(user_frames(c, 2), "KeyboardInterrupt"), 0) if r.random() < 0.4 else []
        lines += teardown_noise(c, r.choice([5, 40, 300]))
        lines.append("srun: error: {}: task 0: Terminated".format(c.host))
        lines.append("srun: Terminating StepId={}.0".format(c.jobid))
        return Log("walltime", 143, P["slurm"] + "; teardown output after the TIME LIMIT line"), lines
    if v == 2:
        lim = r.choice([86400, 172800, 43200, 14400])
        lines.append("=>> PBS: job killed: walltime {} exceeded limit {}".format(lim + r.randint(5, 60), lim))
        lines += teardown_noise(c, r.randint(2, 30))
        return Log("walltime", 271, P["pbs"] + " (Torque exit 256+15)"), lines
    if v == 3:
        lines += ["User defined signal 2", "", "------------------------------------------------------------",
                  "Sender: LSF System <lsfadmin@{}>".format(c.host), "Subject: Job {}: <{}> in cluster <hpc> Exited".format(c.jobid % 10 ** 7, c.proj), "",
                  "TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "Exited with exit code 140.", "",
                  "Resource usage summary:", "", "    CPU time :                                   {:.2f} sec.".format(r.uniform(1e4, 1e6)),
                  "    Max Memory :                                 {} MB".format(r.randint(1000, 200000)),
                  "    Run time :                                   {} sec.".format(r.randint(3600, 86400))]
        return Log("walltime", 140, "IBM LSF job report 'TERM_RUNLIMIT: job killed after reaching LSF run time limit.' 'Exited with exit code 140.'"), lines
    if v == 4:
        lines = preamble(c) + train_noise(c, fw, r.randint(20, 80))
        lines.insert(0, "+ timeout --verbose {}h python train.py --config cfg.yaml".format(r.choice([2, 4, 12])))
        lines.append("timeout: sending signal TERM to command \u2018python\u2019")
        lines += ["[{}] caught SIGTERM, saving emergency checkpoint".format(c.ts()), "[{}] checkpoint saved to {}/ckpt/emergency.pt".format(c.ts(), c.work)]
        lines += wandb_teardown(c, ok=True)
        return Log("walltime", 124, P["timeout"] + "; teardown after the decisive line"), lines
    # SGE h_rt
    lines = preamble(c) + train_noise(c, fw, r.randint(20, 60))
    lines += ["Killed", "=== epilogue: qacct -j {} ===".format(c.jobid % 10 ** 6), "qname        gpu.q", "hostname     {}".format(c.host),
              "failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit", "exit_status  137                  (Killed)",
              "ru_wallclock {}s".format(r.choice([43200, 86400]))]
    return Log("walltime", 137, "Grid Engine qacct 'failed 37 : qmaster enforced h_rt, h_cpu, or h_vmem limit'"), lines


def s_preempted(c):
    r = c.rng
    v = r.randint(0, 5)
    fw = r.choice(["hf", "megatron", "lightning", "ds", "plain"])
    if v == 0:
        lines = slurm_header(c, "preempt") + preamble(c) + train_noise(c, fw, r.randint(20, 70))
        lines.append("slurmstepd: error: *** JOB {} ON {} CANCELLED AT {} DUE TO PREEMPTION ***".format(c.jobid, c.host, c.iso()))
        lines += teardown_noise(c, r.choice([3, 30, 250]))
        lines.append("srun: error: {}: task 0: Terminated".format(c.host))
        return Log("preempted", 143, P["slurm"]), lines
    if v == 1:
        # Lightning auto-requeue: exits 0
        lines = slurm_header(c, "preempt") + preamble(c) + [lightning_bar(c, e, r.randint(300, 2000)) for e in range(r.randint(2, 6))]
        lines.append(lightning_bar(c, 6, 1500, stop=r.randint(10, 1400)))
        lines += ["[rank: 0] Received SIGUSR1: 10" if False else "[rank: 0] Handling auto-requeue signal: 10",
                  "[rank: 0] requeing job {}...".format(c.jobid), "[rank: 0] Requeued SLURM job: {}".format(c.jobid),
                  "slurmstepd: error: *** JOB {} ON {} CANCELLED AT {} DUE TO JOB REQUEUE ***".format(c.jobid, c.host, c.iso())]
        lines += wandb_teardown(c)
        return Log("preempted", 0, P["lightning"] + "; " + P["slurm"] + " (requeue)"), lines
    if v == 2:
        lines = preamble(c) + train_noise(c, fw, r.randint(20, 70))
        lines += ["submitit WARNING ({}) - Bypassing signal SIGTERM".format(c.ts()),
                  "submitit WARNING ({}) - Caught signal SIGUSR2 on {}: this job is preempted.".format(c.ts(), c.host),
                  "[{}] INFO checkpoint() called by submitit, saving state at step {}".format(c.ts(), r.randint(1000, 90000)),
                  "submitit INFO ({}) - Calling checkpoint method.".format(c.ts()),
                  "submitit INFO ({}) - Job has been requeued.".format(c.ts()) if False else "submitit INFO ({}) - Requeued job {} (0 remaining timeouts)".format(c.ts(), c.jobid),
                  "submitit INFO ({}) - Exiting after successful completion".format(c.ts()) if False else "submitit WARNING ({}) - Exiting job with status 0 after preemption/requeue".format(c.ts())]
        return Log("preempted", 0, "facebookincubator/submitit submitit/core/job_environment.py preemption/requeue log lines (paraphrased where noted)"), lines
    if v == 3:
        lines = preamble(c) + train_noise(c, fw, r.randint(20, 70))
        lines += ["[{}] spot-watcher: GET http://169.254.169.254/latest/meta-data/spot/instance-action -> 200".format(c.ts()),
                  "[{}] spot-watcher: {{\"action\": \"terminate\", \"time\": \"{}Z\"}}".format(c.ts(), c.iso()),
                  "[{}] EC2 Spot Instance interruption notice received, saving checkpoint and exiting".format(c.ts()),
                  "[{}] checkpoint saved: s3://{}-ckpt/{}/step_{}".format(c.ts(), c.user.replace(".", "-"), c.proj, r.randint(1000, 90000))]
        lines += wandb_teardown(c)
        return Log("preempted", 0, "AWS EC2 spot instance-action metadata endpoint (docs.aws.amazon.com spot-instance-termination-notices)"), lines
    if v == 4:
        lines = preamble(c) + train_noise(c, fw, r.randint(20, 70))
        lines += ["[{}] preemption-handler: metadata http://metadata.google.internal/computeMetadata/v1/instance/preempted = TRUE".format(c.ts()),
                  "[{}] Instance was preempted; flushing checkpoint".format(c.ts()), "[{}] done, exiting 0".format(c.ts())]
        return Log("preempted", 0, "GCE metadata 'instance/preempted' (cloud.google.com/compute/docs/instances/create-use-preemptible)"), lines
    lines = preamble(c) + train_noise(c, fw, r.randint(20, 70))
    lines += ["[{}] WARNING received SIGTERM (pod termination grace period 30s)".format(c.ts()),
              "Events:  Normal  Preempting  node/{}  Preempted by kube-system/gpu-high-priority-pod on node {}".format(c.host, c.host),
              "[{}] saved checkpoint, exiting".format(c.ts())]
    return Log("preempted", 0, "Kubernetes scheduler event 'Preempted by ... on node'"), lines


def s_interrupted(c):
    r = c.rng
    v = r.randint(0, 5)
    fw = r.choice(["hf", "plain", "lightning", "keras", "jax"])
    lines = preamble(c) + train_noise(c, fw, r.randint(20, 70))
    if v == 0:
        lines.append("^C")
        lines += tb(user_frames(c, 3) + [(c.f("torch/_tensor.py"), 626, "backward", "torch.autograd.backward(")], "KeyboardInterrupt")
        return Log("interrupted", 1, P["py"] + " KeyboardInterrupt"), lines
    if v == 1:
        lines = slurm_header(c) + lines
        lines.append("slurmstepd: error: *** JOB {} ON {} CANCELLED AT {} ***".format(c.jobid, c.host, c.iso()))
        lines += teardown_noise(c, r.choice([2, 20, 120]))
        return Log("interrupted", 143, P["slurm"] + " (scancel by user: no DUE TO clause)"), lines
    if v == 2:
        lines += ["[{}] Received SIGTERM; finishing current step then checkpointing".format(c.ts()),
                  "[{}] Saved checkpoint to {}/ckpt/interrupt_step{}.pt".format(c.ts(), c.work, r.randint(100, 50000)),
                  "[{}] Graceful shutdown complete.".format(c.ts())]
        lines += wandb_teardown(c)
        return Log("interrupted", 0, "graceful SIGTERM handler exiting 0 (own wording)"), lines
    if v == 3:
        c.ngpu = max(2, c.ngpu)
        lines.append("W{:02d}{:02d} {}.{:06d} {} torch/distributed/elastic/agent/server/api.py:{}] Received Signals.SIGINT death signal, shutting down workers".format(c.mo, c.d, c.hms(), r.randint(0, 10 ** 6), c.pid - 1, r.choice([704, 719])))
        for k in range(c.ngpu):
            lines.append("W{:02d}{:02d} {}.{:06d} {} torch/distributed/elastic/multiprocessing/api.py:897] Sending process {} closing signal SIGINT".format(c.mo, c.d, c.hms(), r.randint(0, 10 ** 6), c.pid - 1, c.pid + k))
        lines += tb([(os.path.dirname(c.pybin) + "/torchrun", 8, "<module>", "sys.exit(main())"),
                     (c.f("torch/distributed/elastic/multiprocessing/api.py"), 84, "_terminate_process_handler", "raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)")],
                    "torch.distributed.elastic.multiprocessing.api.SignalException: Process {} got signal: 2".format(c.pid - 1))
        return Log("interrupted", 1, "torch/distributed/elastic/agent/server/api.py 'Received %s death signal, shutting down workers'; SignalException"), lines
    if v == 4:
        lines += ["Keyboard interrupt received, saving model and exiting...", "Saving model checkpoint to {}/output/checkpoint-interrupted".format(c.work),
                  "Model weights saved in {}/output/checkpoint-interrupted/model.safetensors".format(c.work)]
        return Log("interrupted", 0, "Ctrl-C caught by a handler that exits 0 (own wording; HF save lines)"), lines
    lines.append("Terminated")
    return Log("interrupted", -15, "kill by hand (SIGTERM), shell 'Terminated'"), lines


def s_exec_failure(c):
    r = c.rng
    v = r.randint(0, 4)
    lines = slurm_header(c) + (env_dump(c) if r.random() < 0.6 else []) + ["+ cd {}".format(c.work), "+ module load cuda/{}".format(c.cuda)]
    if v == 0:
        lines += ["+ torchrun --nproc-per-node {} train.py".format(c.ngpu), "/var/spool/slurmd/job{}/slurm_script: line {}: torchrun: command not found".format(c.jobid, r.randint(10, 40))]
        code = 127
        prov = "bash 'command not found' (127)"
    elif v == 1:
        lines += ["+ ./scripts/launch.sh", "/var/spool/slurmd/job{}/slurm_script: line {}: ./scripts/launch.sh: Permission denied".format(c.jobid, r.randint(10, 40))]
        code = 126
        prov = "bash exec of a non-executable file: 'Permission denied' (126)"
    elif v == 2:
        lines += ["+ ./prep_data.py --out /scratch/{}/prep".format(c.user), "/var/spool/slurmd/job{}/slurm_script: ./prep_data.py: /usr/bin/python3.{}: bad interpreter: No such file or directory".format(c.jobid, r.choice([7, 8, 9]))]
        code = 126
        prov = "bash 'bad interpreter: No such file or directory' (126)"
    elif v == 3:
        lines += ["+ ./bin/trainer --cfg x.yaml", "bash: ./bin/trainer: cannot execute binary file: Exec format error"]
        code = 126
        prov = "bash 'cannot execute binary file: Exec format error' (126)"
    else:
        lines += ["+ srun python3.12 train.py", "slurmstepd: error: execve(): python3.12: No such file or directory",
                  "srun: error: {}: task 0: Exited with exit code 2".format(c.host)]
        code = 2
        prov = "slurmstepd 'execve(): %s: %m'"
    if r.random() < 0.5:
        lines += ["+ echo 'job finished'", "job finished", "+ exit {}".format(code)]
    return Log("exec_failure", code, prov), lines


def s_nan_loss(c):
    r = c.rng
    v = r.randint(0, 6)
    if v == 0:
        # HF: loss 0.0 with grad_norm nan, exit 0
        lines = preamble(c) + hf_dicts(c, r.randint(10, 30)) + hf_dicts(c, r.randint(10, 60), nan_from=0, zero_loss_nan=True)
        lines.append("{{'train_runtime': {:.4f}, 'train_samples_per_second': {:.3f}, 'train_steps_per_second': {:.3f}, 'train_loss': {}, 'epoch': 3.0}}".format(
            r.uniform(1000, 90000), r.uniform(5, 80), r.uniform(0.1, 5), r.choice(["nan", "0.0"])))
        lines += wandb_teardown(c, ok=True, nan=True)
        return Log("nan_loss", 0, P["hf"] + " (grad_norm nan, loss 0.0)"), lines
    if v == 1:
        lines = preamble(c) + hf_dicts(c, r.randint(20, 60))
        lines.append("{{'train_runtime': {:.4f}, 'train_samples_per_second': {:.3f}, 'train_steps_per_second': {:.3f}, 'train_loss': nan, 'epoch': 2.0}}".format(r.uniform(1000, 90000), r.uniform(5, 80), r.uniform(0.1, 5)))
        lines += ["***** train metrics *****", "  epoch                    =        2.0", "  train_loss               =        nan",
                  "  train_runtime            = {}".format("1:0{}:1{}.22".format(r.randint(0, 9), r.randint(0, 9))), "Training completed. Do not forget to share your model on huggingface.co/models =)"]
        return Log("nan_loss", 0, P["hf"] + " (nan only in the final summary)"), lines
    if v == 2:
        lines = preamble(c) + [lightning_bar(c, e, 800) for e in range(r.randint(2, 5))]
        lines.append("Monitored metric val_loss = nan is not finite. Previous best value was {:.3f}. Signaling Trainer to stop.".format(r.uniform(0.2, 2)))
        lines.append("`Trainer.fit` stopped: EarlyStopping callback requested stop.")
        return Log("nan_loss", 0, P["lightning"]), lines
    if v == 3:
        lines = preamble(c) + ds_steps(c, r.randint(10, 30))
        sc = 65536
        while sc >= 1:
            lines.append("[{}] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {}, reducing to {}".format(c.ts(), sc, max(1, sc // 2)))
            sc //= 2
        lines += tb(user_frames(c, 2) + [(c.f("deepspeed/runtime/fp16/loss_scaler.py"), 175, "update_scale", "raise Exception(")],
                    "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.")
        c.ngpu = max(2, c.ngpu)
        lines += ds_tail(c, "train.py", list(range(c.ngpu)), 1)
        return Log("nan_loss", 1, P["ds"] + "; " + P["dslaunch"]), lines
    if v == 4:
        lines = preamble(c) + megatron_iters(c, r.randint(10, 30)) + megatron_iters(c, r.randint(5, 40), start=900, nan_from=0)
        lines.append("[{}] exiting program at iteration {} (--exit-on-nan)".format(c.ts(), r.randint(1000, 5000)) if False else
                     " [after training is done] datetime: {} ".format(c.ts(ms=False)))
        return Log("nan_loss", 0, "Megatron-LM training_log format ('number of nan iterations'), lm loss nan to the end"), lines
    if v == 5:
        lines = preamble(c) + keras_epochs(c, r.randint(3, 8), nan_from=2)
        lines.append("Batch {}: Invalid loss, terminating training".format(r.randint(10, 900)))
        return Log("nan_loss", 0, "keras/src/callbacks/terminate_on_nan.py 'Batch %d: Invalid loss, terminating training'"), lines
    lines = preamble(c) + train_noise(c, "plain", r.randint(20, 50))
    fr = user_frames(c, 2) + [(c.f("torch/_tensor.py"), 626, "backward", "torch.autograd.backward("),
                              (c.f("torch/autograd/graph.py"), 823, "_engine_run_backward", "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")]
    return py_fail(c, "nan_loss", fr, "RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output.", "torch/csrc/autograd/engine.cpp anomaly mode 'Function %s returned nan values in its %dth output.'", fw="plain", wrapper="plain")


def s_unknown(c):
    r = c.rng
    v = r.randint(0, 2)
    lines = preamble(c) + train_noise(c, r.choice(["plain", "hf"]), r.randint(20, 60))
    if v == 0:
        lines.append("srun: error: {}: task 0: Exited with exit code 3".format(c.host))
        return Log("unknown", 3, "no cause printed; srun exit status"), lines
    if v == 1:
        lines.append("[{}] INFO epoch {} done".format(c.ts(), r.randint(1, 9)))
        return Log("unknown", 1, "silent nonzero exit"), lines
    lines += ["Run failed.", "wandb: Waiting for W&B process to finish... (failed 255)."]
    return Log("unknown", 255, "silent exit 255"), lines


def s_success(c):
    r = c.rng
    v = r.randint(0, 7)
    lines = preamble(c)
    if c.ngpu > 1 and r.random() < 0.5:
        lines += nccl_info(c, r.randint(5, 30), list(range(c.ngpu)))
    fw = r.choice(["hf", "megatron", "lightning", "ds", "plain", "keras", "jax"])
    lines += train_noise(c, fw, r.randint(20, 120))
    if v == 0:
        lines += ["Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {}".format(r.choice([32768.0, 16384.0]))]
        lines += train_noise(c, fw, 10)
        lines.append("[{}] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768".format(c.ts()))
        lines += train_noise(c, fw, 10)
    elif v == 1:
        lines += ["[{}] WARNING step {}: loss is nan, skipping batch (1 of max 20 allowed)".format(c.ts(), r.randint(100, 9000))]
        lines += train_noise(c, fw, 12)
    elif v == 2:
        lines += tb(user_frames(c, 2), "ConnectionResetError: [Errno 104] Connection reset by peer")
        lines += ["[{}] WARNING upload of metrics failed (handled above), retrying in 5s (attempt 2/5)".format(c.ts()), "[{}] INFO upload succeeded".format(c.ts())]
        lines += train_noise(c, fw, 10)
    elif v == 3:
        lines += ["epoch {} | val_error {:.4f} | val_error_top5 {:.4f} | best val_error {:.4f}".format(e, r.uniform(0.02, 0.3), r.uniform(0.001, 0.05), r.uniform(0.02, 0.3)) for e in range(r.randint(3, 12))]
    elif v == 4:
        lines = ["Overriding config with config/train_shakespeare_char.py:", "# train a miniature character-level shakespeare model", "out_dir = 'out-shakespeare-char'",
                 "tokens per iteration will be: 16,384", "found vocab_size = 65 (inside data/shakespeare_char/meta.pkl)", "Initializing a new model from scratch",
                 "number of parameters: 10.65M", "num decayed parameter tensors: 26, with 10,740,096 parameters", "using fused AdamW: True", "compiling the model... (takes a ~minute)"]
        for it in range(0, r.choice([2000, 5000]), 250):
            lines.append("step {}: train loss {:.4f}, val loss {:.4f}".format(it, 4.2 * 0.9995 ** it + 0.8, 4.2 * 0.9995 ** it + 0.9))
            for k in range(5):
                lines.append("iter {}: loss {:.4f}, time {:.2f}ms, mfu {:.2f}%".format(it + k * 10, 4.2 * 0.9995 ** it + 0.8, r.uniform(20, 400), r.uniform(5, 40)))
            if it:
                lines.append("saving checkpoint to out-shakespeare-char")
    elif v == 5:
        lines += ["INFO: dedup finished: killed 3 duplicates, 0 errors", "final: val_loss nan (no val set)", "test_error: 0.0"]
    elif v == 6:
        lines += ["{} DeprecationWarning: `np.bool` is a deprecated alias ... error handling will change".format(c.f("tensorboard/compat/tensorflow_stub/dtypes.py:541:")),
                  "{}:{}: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value of the learning rate schedule.".format(c.f("torch/optim/lr_scheduler.py"), 143),
                  "[W{:02d}{:02d} {}.{:06d} ProcessGroupNCCL.cpp:1496] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. (function operator())".format(c.mo, c.d, c.hms(), r.randint(0, 10 ** 6))]
    else:
        lines += ["INFO 0{}-{:02d} {} metrics.py:341] Avg prompt throughput: {:.1f} tokens/s, Avg generation throughput: {:.1f} tokens/s, Running: {} reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: {:.1f}%, CPU KV cache usage: 0.0%.".format(
            r.randint(1, 9), r.randint(1, 28), c.hms(), r.uniform(100, 5000), r.uniform(50, 3000), r.randint(1, 64), r.uniform(1, 95)) for _ in range(r.randint(10, 40))]
        lines += ["WARNING 0{}-{:02d} {} scheduler.py:1089] Sequence group 17 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=1".format(r.randint(1, 9), r.randint(1, 28), c.hms()),
                  "Processed prompts: 100%|##########| 5000/5000 [04:11<00:00, 19.88it/s]", "wrote 5000 generations to outputs/gen.jsonl"]
    if fw == "hf" or r.random() < 0.3:
        lines.append("{{'train_runtime': {:.4f}, 'train_samples_per_second': {:.3f}, 'train_steps_per_second': {:.3f}, 'train_loss': {:.4f}, 'epoch': 3.0}}".format(r.uniform(1000, 90000), r.uniform(5, 80), r.uniform(0.1, 5), r.uniform(0.3, 2)))
    if r.random() < 0.5:
        lines += wandb_teardown(c)
    lines.append("[{}] done. exit 0".format(c.ts()) if r.random() < 0.5 else "Training complete.")
    return Log("success", 0, "noisy success; harmless wording from apex/deepspeed loss scaler, vLLM scheduler preemption warning, nanoGPT output format, torch warnings"), pad_noise(c, lines, fw)


SCEN = [
    ("cuda_oom", s_cuda_oom, 7), ("nccl", s_nccl, 8), ("cuda_runtime", s_cuda_runtime, 9), ("ram_oom", s_ram_oom, 5),
    ("segfault", s_segfault, 6), ("file_not_found", s_file_not_found, 6), ("permission", s_permission, 5),
    ("missing_module", s_missing_module, 5), ("div_zero", s_div_zero, 5), ("device_mismatch", s_device_mismatch, 7),
    ("nan_loss", s_nan_loss, 10), ("oom_killer", s_oom_killer, 6), ("traceback", s_traceback, 7), ("assertion", s_assertion, 5),
    ("runtime_error", s_runtime_error, 6), ("gpu_hardware", s_gpu_hw, 7), ("disk_full", s_disk_full, 6), ("walltime", s_walltime, 8),
    ("preempted", s_preempted, 9), ("interrupted", s_interrupted, 8), ("native_abort", s_native_abort, 6), ("exec_failure", s_exec_failure, 6),
    ("unknown", s_unknown, 3), ("success", s_success, 25),
]


# ----------------------------------------------------------------------------
# captures: small failing programs really run here, stdout+stderr in ONE pipe
# ----------------------------------------------------------------------------

CAP_COMMON = r'''
import os, sys, time, math, random
random.seed(0)
CFG = [("model", "tiny-mlp"), ("hidden", 256), ("layers", 4), ("optimizer", "sgd"), ("lr", 3e-4), ("batch_size", 32),
       ("max_steps", 1000), ("precision", "fp32"), ("num_workers", 2), ("ckpt_every", 100), ("seed", 0), ("log_every", 1),
       ("eval_metric", "val_error"), ("data_root", "/datasets/toy"), ("out_dir", "./out"), ("resume", False)]
def banner():
    print("host=%s pid=%d python=%s" % (os.uname()[1], os.getpid(), sys.version.split()[0]), flush=True)
    print("----- config -----")
    for k, v in CFG:
        print("  %s: %s" % (k, v))
    if "torch" in sys.modules:
        print(sys.modules["torch"].__config__.show(), flush=True)
    for k in sorted(os.environ):
        if k.startswith(("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_", "OMP_")):
            print("  %s=%s" % (k, os.environ[k]), flush=True)
def steps(n, tag="train", loss0=2.3):
    loss = loss0
    for i in range(n):
        loss *= 0.97
        print("[%s] step %4d loss %.4f lr 3.0e-04" % (tag, i, loss), flush=True)
'''

DDP_TMPL = CAP_COMMON + r'''
import torch, torch.distributed as dist
from datetime import timedelta
banner()
dist.init_process_group("gloo", timeout=timedelta(seconds=@TMO@))
rank = dist.get_rank()
x = torch.ones(4)
for i in range(@N@):
    dist.all_reduce(x)
    if rank == 0:
        print("[rank0] step %d allreduce ok sum=%.1f" % (i, x.sum().item()), flush=True)
    if i == @AT@ and rank == @BAD@:
        @FAIL@
dist.destroy_process_group()
print("done rank", rank)
'''


def _free_port():
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def captures():
    """(mode, description, script_text or None, command template, extra files) list."""
    C = []
    ddp = lambda fail, bad=1, at=3, n=8, tmo=20: DDP_TMPL.replace("@FAIL@", fail).replace("@BAD@", str(bad)).replace("@AT@", str(at)).replace("@N@", str(n)).replace("@TMO@", str(tmo))
    tr = "torchrun --nproc-per-node 2 --master-port {port} {script}"
    C.append(("file_not_found", "torchrun --nproc-per-node 2 (gloo); rank 1 opens a missing shard -> FileNotFoundError; rank 0 sees the peer vanish",
              ddp("open('/data/shards/train-00001.tar', 'rb')"), tr))
    C.append(("div_zero", "torchrun 2 ranks (gloo); rank 0 computes a mean over an empty list -> ZeroDivisionError",
              ddp("print('mean', sum([]) / len([]))", bad=0), tr))
    C.append(("assertion", "torchrun 2 ranks (gloo); rank 1 assert on batch shape -> AssertionError",
              ddp("assert x.shape[0] == 8, 'bad local batch %s' % (tuple(x.shape),)"), tr))
    C.append(("segfault", "torchrun 2 ranks (gloo); rank 1 dereferences NULL via ctypes -> SIGSEGV (exitcode -11)",
              ddp("import ctypes; ctypes.string_at(0)"), tr))
    C.append(("nccl", "torchrun 2 ranks (gloo, 6 s timeout); rank 1 stops joining collectives -> gloo timeout on rank 0",
              ddp("time.sleep(14); sys.exit(0)", at=2, tmo=6), tr))
    C.append(("oom_killer", "torchrun 2 ranks (gloo); rank 1 is SIGKILLed (as the OOM killer would) -> exitcode -9; run under a shell that prints a synthetic cgroup oom note is NOT done: only the kill is real",
              ddp("os.kill(os.getpid(), 9)"), tr))
    DL = CAP_COMMON + r'''
import torch
from torch.utils.data import Dataset, DataLoader
class DS(Dataset):
    def __init__(self):
        self.index = {i: i * 2 for i in range(40) if i != 23}
    def __len__(self): return 64
    def __getitem__(self, i):
@BODY@
banner()
dl = DataLoader(DS(), batch_size=4, num_workers=2)
for ep in range(2):
    for k, b in enumerate(dl):
        print("epoch %d batch %d shape %s" % (ep, k, tuple(b.shape)), flush=True)
'''
    C.append(("traceback", "DataLoader(num_workers=2): KeyError raised in a worker's __getitem__ and re-raised in the main process",
              DL.replace("@BODY@", "        return torch.tensor([self.index[i]])"), "python3 {script}"))
    C.append(("segfault", "DataLoader(num_workers=2): a worker segfaults (ctypes NULL read) -> 'DataLoader worker ... killed by signal'",
              DL.replace("@BODY@", "        if i == 30:\n            import ctypes; ctypes.string_at(0)\n        return torch.tensor([i])"), "python3 {script}"))
    C.append(("file_not_found", "DataLoader(num_workers=2): FileNotFoundError in worker (missing image file)",
              DL.replace("@BODY@", "        if i == 17:\n            open('/datasets/imgs/%08d.jpg' % i, 'rb')\n        return torch.tensor([i])"), "python3 {script}"))
    TERM = CAP_COMMON + r'''
import signal
stop = {"flag": False}
def h(sig, frm):
    print("received signal %d, will checkpoint and exit" % sig, flush=True)
    stop["flag"] = True
signal.signal(signal.SIGTERM, h)
signal.signal(signal.SIGINT, h)
banner()
i = 0
while not stop["flag"] and i < 10000:
    steps(1, "train %d" % i)
    time.sleep(0.1)
    i += 1
with open(os.path.join(os.environ.get("CKDIR", "/tmp"), "ckpt_interrupt.pt"), "w") as f:
    f.write("step=%d\n" % i)
print("checkpoint saved at step %d; graceful shutdown, exit 0" % i, flush=True)
sys.exit(0)
'''
    C.append(("interrupted", "graceful SIGTERM handler: process sent SIGTERM after 2 s (by a shell 'kill'), checkpoints and exits 0",
              TERM, "python3 {script} & p=$!; sleep 2; kill -TERM $p; wait $p"))
    C.append(("interrupted", "graceful SIGINT handler (Ctrl-C equivalent sent with kill -INT), checkpoints and exits 0",
              TERM, "python3 {script} & p=$!; sleep 1.5; kill -INT $p; wait $p"))
    KBD = CAP_COMMON + r'''
banner()
try:
    for i in range(1000):
        steps(1)
        time.sleep(0.1)
except KeyboardInterrupt:
    raise
'''
    C.append(("interrupted", "no handler: SIGINT -> KeyboardInterrupt traceback (python started with SIGINT default via exec)",
              KBD, "python3 -c 'import signal,os,sys; signal.signal(signal.SIGINT, signal.default_int_handler); os.execvp(sys.executable, [sys.executable, \"{script}\"])' & p=$!; sleep 1.5; kill -INT $p; wait $p"))
    NAN = CAP_COMMON + r'''
import torch, warnings
torch.manual_seed(0)
banner()
m = torch.nn.Linear(16, 1)
opt = torch.optim.SGD(m.parameters(), lr=50.0)
x = torch.randn(256, 16) * 10
y = torch.randn(256, 1)
for s in range(60):
    opt.zero_grad()
    loss = torch.nn.functional.mse_loss(m(x), y)
    loss.backward()
    opt.step()
    if s %% 5 == 0:
        print("step %%d loss %%s" %% (s, "%%.4f" %% loss.item() if torch.isfinite(loss) else loss.item()), flush=True)
print("training finished: final train_loss=%%s" %% loss.item(), flush=True)
'''.replace("%%", "%")
    C.append(("nan_loss", "SGD with lr=50 diverges to inf/nan and the loop runs to completion, exit 0", NAN, "python3 {script}"))
    LOOP = CAP_COMMON + r'''
banner()
for i in range(100000):
    steps(1)
    time.sleep(0.2)
'''
    C.append(("walltime", "timeout --verbose 3 python3 (loop) -> 'timeout: sending signal TERM', exit 124", LOOP, "timeout --verbose 3 python3 {script}"))
    C.append(("exec_failure", "a script whose shebang names a missing interpreter -> bash 5.2 says 'cannot execute: required file not found' (127; older bash: 'bad interpreter: No such file or directory', 126)", None,
              "printf '#!/usr/bin/python3.6\\nprint(1)\\n' > {dir}/prep.py; chmod +x {dir}/prep.py; echo '+ ./prep.py'; cd {dir} && ./prep.py"))
    C.append(("exec_failure", "a script whose shebang names a file that is not executable -> bash 'bad interpreter: Permission denied' (126)", None,
              "printf 'not a binary\\n' > {dir}/fakepy; chmod 644 {dir}/fakepy; printf '#!{dir}/fakepy\\nprint(1)\\n' > {dir}/run.py; chmod +x {dir}/run.py; cd {dir}; echo '+ ./run.py'; ./run.py"))
    C.append(("exec_failure", "torchrun-like launcher name that is not installed -> 'command not found' (127)", None,
              "echo '+ deepspeedx --num_gpus 2 train.py'; deepspeedx --num_gpus 2 train.py"))
    C.append(("exec_failure", "script without the exec bit run as ./launch.sh -> 'Permission denied' (126)", None,
              "printf 'echo hi\\n' > {dir}/launch.sh; chmod 644 {dir}/launch.sh; cd {dir}; ./launch.sh"))
    FULL = CAP_COMMON + r'''
import torch
banner()
steps(5)
sd = {"w": torch.randn(512, 512)}
try:
    torch.save(sd, "/dev/full")
except Exception as e:
    import traceback; traceback.print_exc()
    print("checkpoint writer: unrecoverable I/O error, aborting", flush=True)
    sys.stdout.flush(); sys.stderr.flush()
    os.abort()
'''
    C.append(("disk_full", "torch.save to /dev/full (real ENOSPC), then the writer calls os.abort()", FULL, "python3 -X faulthandler {script}"))
    C.append(("disk_full", "writing a shard to /dev/full with plain Python -> OSError ENOSPC", CAP_COMMON + r'''
banner()
steps(4)
with open("/dev/full", "w") as f:
    for i in range(100):
        f.write("x" * 65536)
    f.flush()
''', "python3 {script}"))
    C.append(("segfault", "bash runs python that segfaults (ctypes) -> bash prints 'Segmentation fault (core dumped)', status 139",
              CAP_COMMON + "banner()\nsteps(6)\nimport ctypes\nctypes.string_at(0)\n", "python3 {script}; exit $?"))
    C.append(("native_abort", "python -X faulthandler calling os.abort() -> 'Fatal Python error: Aborted', SIGABRT",
              CAP_COMMON + "banner()\nsteps(6)\nos.abort()\n", "exec python3 -X faulthandler {script}"))
    C.append(("ram_oom", "ulimit -v 1.5 GiB then allocate 4 GiB -> MemoryError",
              CAP_COMMON + "banner()\nsteps(4)\nbuf = bytearray(4 * 1024 ** 3)\n", "ulimit -v 1500000; python3 {script}"))
    C.append(("missing_module", "import of an uninstalled package -> ModuleNotFoundError",
              CAP_COMMON + "banner()\nimport flash_attn_v9\n", "python3 {script}"))
    C.append(("permission", "run as uid 65534; the script lies in a root-owned 0700 temp dir -> python3: can't open file ... Permission denied (2)",
              CAP_COMMON + "banner()\n", "setpriv --reuid=65534 --regid=65534 --clear-groups python3 {script}"))
    C.append(("permission", "run as uid 65534; checkpoint dir owned by root -> PermissionError",
              CAP_COMMON + "banner()\nsteps(5)\nos.makedirs('{dir}/ro_ckpt/run1', exist_ok=True)\n", "mkdir -p {dir}/ro_ckpt; chmod 755 {dir}/ro_ckpt {dir} {dir}/..; setpriv --reuid=65534 --regid=65534 --clear-groups python3 {script}"))
    C.append(("device_mismatch", "torch.cat of a meta tensor and a cpu tensor",
              CAP_COMMON + "import torch\nbanner()\nsteps(3)\nh = torch.ones(2, 4, device='meta')\nprint(torch.cat([h, torch.ones(2, 4)]))\n", "python3 {script}"))
    C.append(("runtime_error", "torch Linear with a wrong input width -> mat1 and mat2 shapes cannot be multiplied",
              CAP_COMMON + "import torch\nbanner()\nsteps(3)\nm = torch.nn.Linear(768, 10)\nm(torch.randn(32, 512))\n", "python3 {script}"))
    C.append(("success", "noisy success: deprecation warning, handled exception with traceback printed, skipped nan batch, 'val_error', exit 0",
              CAP_COMMON + r'''
import warnings, traceback
warnings.simplefilter("always")
banner()
warnings.warn("`foo_error_handler` is deprecated and will raise an error in v3", DeprecationWarning)
for i in range(12):
    try:
        if i == 4:
            raise ConnectionResetError(104, "Connection reset by peer")
        if i == 7:
            print("step %d: loss is nan, skipping batch" % i, flush=True)
            continue
        print("step %d loss %.3f val_error %.4f" % (i, 2.0 / (i + 1), 0.3 / (i + 1)), flush=True)
    except ConnectionResetError:
        traceback.print_exc()
        print("retrying upload (attempt 2/5)... ok", flush=True)
print("INFO: dedup: killed 3 duplicates")
print("Training complete.")
''', "python3 {script}"))
    return C


def run_captures(out_logs, start_id, seed):
    base = "/work/scratch-blind2" if os.path.isdir("/work/scratch-blind2") else None
    tmp = tempfile.mkdtemp(prefix="cap-", dir=base)
    recs = []
    n = start_id
    for k, (mode, desc, script, cmd) in enumerate(captures()):
        d = os.path.join(tmp, "c%02d" % k)
        os.makedirs(d)
        sp = os.path.join(d, "train.py")
        if script is not None:
            with open(sp, "w") as f:
                f.write(script.replace("{dir}", d))
        full = cmd.format(port=_free_port(), script=sp, dir=d)
        env = dict(os.environ)
        env["CKDIR"] = d
        env["PYTHONUNBUFFERED"] = "1"
        env.pop("PYTHONWARNINGS", None)
        try:
            p = subprocess.run(["bash", "-c", full], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=d, env=env, timeout=60)
        except subprocess.TimeoutExpired as e:
            sys.stderr.write("capture %d timed out, skipped\n" % k)
            continue
        data = p.stdout.replace(tmp.encode(), b"/work/scratch-blind2/cap")
        lid = "dev2-%04d" % n
        with open(os.path.join(out_logs, lid + ".log"), "wb") as f:
            f.write(data)
        recs.append({"id": lid, "mode": mode, "source": "captured", "log_path": "logs/%s.log" % lid, "gpu": "none", "driver": "none",
                     "true_exit_code": p.returncode, "provenance": "captured on this machine (torch %s CPU, %s): %s; command: bash -c '%s'" % (
                         _torch_ver(), "Python " + sys.version.split()[0], desc, cmd.replace("{script}", "train.py").replace("{dir}", "$TMP").replace("{port}", "$PORT"))})
        sys.stderr.write("captured %s %s rc=%d lines=%d\n" % (lid, mode, p.returncode, data.count(b"\n")))
        n += 1
    shutil.rmtree(tmp, ignore_errors=True)
    return recs


def _torch_ver():
    try:
        out = subprocess.run([sys.executable, "-c", "import torch;print(torch.__version__)"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        return out.stdout.decode().strip() or "?"
    except Exception:
        return "?"


# ----------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------

def compose(seed):
    plan = []
    for mode, fn, cnt in SCEN:
        plan += [(mode, fn)] * cnt
    random.Random(seed).shuffle(plan)
    out = []
    for i, (mode, fn) in enumerate(plan):
        c = Ctx(random.Random(seed * 7919 + i))
        lg, lines = fn(c)
        assert lg.mode == mode, (mode, lg.mode)
        if c.rng.random() < 0.22:
            # a long run before the end: hundreds of progress lines
            pos = max(1, len(lines) // 3)
            lines[pos:pos] = train_noise(c, c.rng.choice(["plain", "megatron", "jax", "hf"]), c.rng.randint(150, 700))
        k = 0
        while len(lines) < 40:
            lines[1:1] = train_noise(c, "plain", 8)
            k += 1
        if len(lines) > 1500:
            lines = lines[:700] + lines[-790:]
        text = "\n".join(lines) + "\n"
        out.append((lg, c, text.encode("utf-8")))
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seed", type=int, default=20261203)
    ap.add_argument("--composed-only", action="store_true")
    ap.add_argument("--out", default=HERE)
    a = ap.parse_args()
    logs = os.path.join(a.out, "logs")
    if os.path.isdir(logs):
        for fn in os.listdir(logs):
            if fn.startswith("dev2-") and fn.endswith(".log"):
                if a.composed_only:
                    continue
                os.remove(os.path.join(logs, fn))
    os.makedirs(logs, exist_ok=True)
    recs = []
    comp = compose(a.seed)
    for i, (lg, c, data) in enumerate(comp):
        lid = "dev2-%04d" % (i + 1)
        with open(os.path.join(logs, lid + ".log"), "wb") as f:
            f.write(data)
        recs.append({"id": lid, "mode": lg.mode, "source": "composed", "log_path": "logs/%s.log" % lid,
                     "gpu": c.gpu if lg.gpu else "none", "driver": c.driver if (lg.gpu and c.driver != "none") else "none",
                     "true_exit_code": lg.exit_code, "provenance": lg.prov})
    lab = os.path.join(a.out, "labels.jsonl")
    if a.composed_only:
        old = []
        if os.path.exists(lab):
            with open(lab) as f:
                old = [json.loads(l) for l in f if l.strip()]
        recs += [r for r in old if r.get("source") == "captured"]
    else:
        recs += run_captures(logs, len(comp) + 1, a.seed)
    with open(lab, "w") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False) + "\n")
    from collections import Counter
    cnt = Counter((r["mode"], r["source"]) for r in recs)
    for m in sorted(set(r["mode"] for r in recs)):
        sys.stderr.write("%-16s composed %3d captured %3d\n" % (m, cnt[(m, "composed")], cnt[(m, "captured")]))
    sys.stderr.write("total %d\n" % len(recs))


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Blind evaluation-set generator for ML-training failure logs.

Usage:  python3 make_set.py            (set name = name of the folder this file is in)
        python3 make_set.py --set dev --out /path/to/dev

stdlib only.  Composed logs are built from exact public message formats (see the
`prov` strings).  Captured logs are produced by really running small failing
programs on this machine (CPU only); the torch-based captures are skipped if
torch is not importable (the rest still run).
"""
import argparse, json, os, random, shutil, signal, subprocess, sys, tempfile, textwrap, time

CLASSES = ["cuda_oom", "nccl", "cuda_runtime", "ram_oom", "segfault", "file_not_found",
           "permission", "missing_module", "div_zero", "device_mismatch", "nan_loss",
           "oom_killer", "traceback", "assertion", "runtime_error", "gpu_hardware",
           "disk_full", "walltime", "preempted", "interrupted", "native_abort",
           "exec_failure", "success"]

# --------------------------------------------------------------------------
# context / randomness helpers
# --------------------------------------------------------------------------
GPUS = [("NVIDIA A100-SXM4-80GB", 79.15), ("NVIDIA A100-SXM4-40GB", 39.39), ("NVIDIA H100 80GB HBM3", 79.11),
        ("NVIDIA GeForce RTX 3090", 23.69), ("NVIDIA GeForce RTX 4090", 23.64), ("Tesla V100-SXM2-32GB", 31.75),
        ("NVIDIA A10G", 22.06), ("NVIDIA L40S", 44.39), ("Tesla T4", 14.75), ("NVIDIA RTX A6000", 47.53),
        ("NVIDIA H200", 139.8), ("NVIDIA L4", 22.03)]
DRIVERS = ["535.104.05", "535.161.08", "550.54.15", "550.90.07", "545.23.08", "525.85.12", "560.35.03",
           "470.182.03", "555.42.06", "570.124.06"]
USERS = ["jdoe", "akumar", "mchen", "sgarcia", "lwang", "tnguyen", "rpatel", "ekim", "obrien", "zhangy", "mlopez", "fmuller"]
PROJECTS = ["llm-pretrain", "vit-finetune", "asr-conformer", "diffusion-unet", "rlhf-ppo", "bert-ner", "gpt2-small",
            "detr-coco", "whisper-ft", "llama-sft", "mae-pretrain", "t5-summarize", "resnet50-imagenet", "clip-laion"]
MODELS = ["meta-llama/Llama-2-7b-hf", "mistralai/Mistral-7B-v0.1", "gpt2-medium", "bert-base-uncased",
          "google/vit-base-patch16-224", "facebook/opt-1.3b", "EleutherAI/pythia-1.4b", "t5-base",
          "openai/whisper-small", "Qwen/Qwen2-1.5B", "microsoft/phi-2", "roberta-large"]


class Ctx:
    def __init__(self, rng, setname):
        self.rng = rng
        self.set = setname
        r = rng
        self.user = r.choice(USERS)
        self.project = r.choice(PROJECTS)
        self.gpu, self.gpu_mem = r.choice(GPUS)
        self.driver = r.choice(DRIVERS)
        self.model = r.choice(MODELS)
        style = r.choice(["gpu-node-%03d", "node%02d", "dgx-a100-%02d", "ip-10-0-%d-%d", "nid%06d", "cn%03d", "gpu%02d.cluster.local", "hgx-%02d"])
        n = style.count("%")
        self.host = style % tuple(r.randint(1, 250) for _ in range(n)) if n else style
        self.host2 = style % tuple(r.randint(1, 250) for _ in range(n)) if n else style
        self.root = r.choice([f"/home/{self.user}/{self.project}", f"/scratch/{self.user}/{self.project}",
                              f"/workspace/{self.project}", f"/mnt/shared/{self.user}/code/{self.project}",
                              f"/lustre/fsw/{self.user}/{self.project}", f"/data/{self.user}/repos/{self.project}"])
        self.pyver = r.choice(["3.10", "3.11", "3.9", "3.12"])
        self.site = r.choice([f"/opt/conda/lib/python{self.pyver}/site-packages",
                              f"/home/{self.user}/miniconda3/envs/{self.project.split('-')[0]}/lib/python{self.pyver}/site-packages",
                              f"/usr/local/lib/python{self.pyver}/dist-packages",
                              f"{self.root}/.venv/lib/python{self.pyver}/site-packages"])
        self.pybin = r.choice(["/opt/conda/bin/python", f"/home/{self.user}/miniconda3/envs/train/bin/python3", "/usr/bin/python3", f"{self.root}/.venv/bin/python"])
        self.script = r.choice(["train.py", "main.py", "pretrain.py", "finetune.py", "run_clm.py", "train_net.py", "scripts/train.py", "src/train.py"])
        self.jobid = r.randint(100000, 9999999)
        self.pid = r.randint(2000, 400000)
        self.world = r.choice([2, 4, 4, 8, 8, 8, 16])
        self.t = self.t0 = time.mktime((r.choice([2023, 2024, 2025]), r.randint(1, 12), r.randint(1, 28), r.randint(0, 23), r.randint(0, 59), r.randint(0, 59), 0, 0, -1))
        self.torchver = r.choice(["2.1.2", "2.2.1", "2.3.0", "2.4.1", "2.5.1", "2.6.0", "2.7.1"])
        self.ncclver = r.choice(["2.18.1", "2.19.3", "2.20.5", "2.21.5", "2.23.4"])

    # time ------------------------------------------------------------------
    def tick(self, lo=0.05, hi=3.0):
        self.t += self.rng.uniform(lo, hi)
        return self.t

    def ts(self, fmt="%Y-%m-%d %H:%M:%S"):
        self.tick()
        return time.strftime(fmt, time.localtime(self.t))

    def ts_ms(self):
        self.tick()
        return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(self.t)) + ",%03d" % self.rng.randint(0, 999)

    def glog(self, level="W"):   # torch c10 log prefix  W0501 12:00:00.123000 1234
        self.tick(0.001, 0.2)
        return level + time.strftime("%m%d %H:%M:%S", time.localtime(self.t)) + ".%06d" % self.rng.randint(0, 999999)

    def iso(self):
        self.tick()
        return time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(self.t))

    def f(self, rel):  # user-code frame path
        return f"{self.root}/{rel}"

    def s(self, rel):  # site-packages frame path
        return f"{self.site}/{rel}"


def ri(ctx, a, b):
    return ctx.rng.randint(a, b)


def ch(ctx, seq):
    return ctx.rng.choice(seq)


# --------------------------------------------------------------------------
# tracebacks
# --------------------------------------------------------------------------
def tb(frames, exc_lines, header="Traceback (most recent call last):"):
    out = [header]
    for path, line, func, code in frames:
        out.append(f'  File "{path}", line {line}, in {func}')
        if code:
            out.append(f"    {code}")
    if isinstance(exc_lines, str):
        exc_lines = exc_lines.split("\n")
    out.extend(exc_lines)
    return out


def user_frames(ctx, n=None, entry=None):
    r = ctx.rng
    script = entry or ctx.script
    pool = [
        ("main", "trainer.train()"), ("main", "train(cfg)"), ("<module>", "main()"), ("train", "loss = train_one_epoch(model, loader, optimizer, epoch)"),
        ("train_one_epoch", "outputs = model(**batch)"), ("train_one_epoch", "loss = criterion(logits, targets)"),
        ("training_step", "loss = self.model(x).loss"), ("run", "self._run_epoch(epoch)"), ("_run_epoch", "self._run_batch(source, targets)"),
        ("_run_batch", "output = self.model(source)"), ("evaluate", "metrics = compute_metrics(preds, labels)"),
    ]
    n = n or r.randint(2, 4)
    frames = [(ctx.f(script), r.randint(180, 900), "<module>", r.choice(["main()", "main(args)", "sys.exit(main())", "cli()"]))]
    for i in range(n - 1):
        fn, code = r.choice(pool)
        frames.append((ctx.f(r.choice([script, "engine.py", "trainer.py", "utils/train_utils.py", "models/model.py"])), r.randint(20, 700), fn, code))
    return frames


def torch_module_frames(ctx, n=2):
    fr = []
    for _ in range(n):
        fr.append((ctx.s("torch/nn/modules/module.py"), ctx.rng.choice([1511, 1520, 1527, 1532, 1541, 1736, 1747, 1751, 1762]), ctx.rng.choice(["_wrapped_call_impl", "_call_impl"]),
                   ctx.rng.choice(["return self._call_impl(*args, **kwargs)", "return forward_call(*args, **kwargs)"])))
    return fr


# --------------------------------------------------------------------------
# noise: progress bars, framework INFO lines, warnings
# --------------------------------------------------------------------------
def bar(frac, width=10):
    full = int(frac * width)
    parts = " ▏▎▍▌▋▊▉"
    rem = frac * width - full
    s = "█" * full
    if full < width:
        s += parts[int(rem * 8)] if int(rem * 8) else " "
        s += " " * (width - full - 1)
    return s


def fmt_t(sec):
    sec = int(sec)
    h, m, s = sec // 3600, (sec % 3600) // 60, sec % 60
    return f"{h}:{m:02d}:{s:02d}" if h else f"{m:02d}:{s:02d}"


def tqdm_line(desc, i, total, rate, postfix=""):
    frac = i / total if total else 0
    el = i / rate if rate else 0
    rem = (total - i) / rate if rate else 0
    pf = f", {postfix}" if postfix else ""
    d = f"{desc}: " if desc else ""
    return f"{d}{int(frac*100):3d}%|{bar(frac)}| {i}/{total} [{fmt_t(el)}<{fmt_t(rem)}, {rate:.2f}it/s{pf}]"


def tqdm_redraw(ctx, desc, start, stop, total, rate, n_redraws, postfix_fn=None):
    """One physical line with many \\r redraws (as tqdm writes to a file)."""
    pts = sorted(set(int(start + (stop - start) * k / max(1, n_redraws)) for k in range(n_redraws + 1)))
    if not hasattr(ctx, "_rate"):
        ctx._rate = rate
    rate = ctx._rate
    segs = [tqdm_line(desc, p, total, rate, postfix_fn(p) if postfix_fn else "") for p in pts]
    return "\r".join(segs)


def loss_curve(ctx, n, start=None, end=None, nan_at=None):
    r = ctx.rng
    start = start or r.uniform(2.5, 11.0)
    end = end or start * r.uniform(0.15, 0.6)
    vals = []
    for i in range(n):
        v = start + (end - start) * (i / max(1, n - 1)) ** 0.6 + r.gauss(0, 0.04 * start)
        vals.append(float("nan") if nan_at is not None and i >= nan_at else max(0.01, v))
    return vals


def fmtloss(v):
    return "nan" if v != v else f"{v:.4f}"


def train_noise(ctx, style, n, nan_at=None, steps_per=None, start_step=0, grad_overflow=None):
    """Return list of lines of healthy-looking training output in a given style."""
    r = ctx.rng
    lines = []
    losses = loss_curve(ctx, n, nan_at=nan_at)
    steps_per = steps_per or r.choice([10, 20, 25, 50, 100])
    lr = r.choice([1e-4, 2e-5, 3e-4, 6e-4, 5e-5, 1e-3])
    total = (start_step + n * steps_per) * r.choice([1, 2, 3])
    for k, L in enumerate(losses):
        step = start_step + (k + 1) * steps_per
        if grad_overflow and k in grad_overflow:
            g = grad_overflow[k]
            lines.extend(g() if callable(g) else g)
        if style == "hf":
            if r.random() < 0.5:
                lines.append(tqdm_redraw(ctx, "", step - steps_per, step, total, r.uniform(0.8, 6), r.randint(2, 6)))
            gn = "nan" if L != L else f"{r.uniform(0.2, 4):.4f}"
            lines.append(f"{{'loss': {('nan' if L != L else round(L, 4))}, 'grad_norm': {gn}, 'learning_rate': {lr * (1 - step / (total + 1)):.4e}, 'epoch': {step / (total / 3):.2f}}}")
        elif style == "lightning":
            lines.append(tqdm_redraw(ctx, f"Epoch {k // 5}", step - steps_per, step, total, r.uniform(1, 9), r.randint(2, 5),
                                     lambda p, L=L: f"v_num={ri(ctx, 0, 40)}, train_loss={fmtloss(L)}"))
        elif style == "nanogpt":
            lines.append(f"iter {step}: loss {fmtloss(L)}, time {r.uniform(80, 900):.2f}ms, mfu {r.uniform(20, 48):.2f}%")
            if k % 10 == 9:
                lines.append(f"step {step}: train loss {fmtloss(L)}, val loss {fmtloss(L * 1.03)}")
        elif style == "deepspeed":
            ts = ctx.ts_ms()
            lines.append(f"[{ts}] [INFO] [logging.py:96:log_dist] [Rank 0] step={step}, skipped={r.randint(0, 3)}, lr=[{lr:.6e}], mom=[(0.9, 0.95)]")
            lines.append(f"[{ctx.ts_ms()}] [INFO] [timer.py:260:stop] epoch=0/micro_step={step * 2}/global_step={step}, RunningAvgSamplesPerSec={r.uniform(20, 300):.6f}, CurrSamplesPerSec={r.uniform(20, 300):.6f}, MemAllocated={r.uniform(5, 60):.2f}GB, MaxMemAllocated={r.uniform(20, 75):.2f}GB")
            lines.append(f"{{'loss': {fmtloss(L)}, 'learning_rate': {lr:.2e}, 'epoch': {step / total:.2f}}}")
        elif style == "keras":
            tot = r.choice([250, 500, 1000, 1563])
            lines.append(f"Epoch {k + 1}/{n + r.randint(0, 20)}")
            lines.append("\r".join(f"{j:>{len(str(tot))}}/{tot} [{'=' * int(29 * j / tot)}{'>' if j < tot else '='}{'.' * (29 - int(29 * j / tot))}] - ETA: {r.randint(1, 300)}s - loss: {fmtloss(L)} - accuracy: {r.uniform(0.3, 0.95):.4f}" for j in sorted(set([1, tot // 4, tot // 2, 3 * tot // 4]))))
            lines.append(f"{tot}/{tot} [==============================] - {r.randint(20, 900)}s {r.randint(40, 900)}ms/step - loss: {fmtloss(L)} - accuracy: {r.uniform(0.3, 0.95):.4f} - val_loss: {fmtloss(L * 1.05)} - val_accuracy: {r.uniform(0.3, 0.95):.4f}")
        elif style == "jax":
            lines.append(f"I{time.strftime('%m%d %H:%M:%S', time.localtime(ctx.tick()))}.{r.randint(0, 999999):06d} {r.randint(100000, 200000)} train.py:{r.randint(200, 500)}] [{step}] train/loss={fmtloss(L)}, train/learning_rate={lr:.6g}, train/grad_norm={('nan' if L != L else f'{r.uniform(0.1, 3):.4f}')}, steps_per_sec={r.uniform(0.5, 12):.3f}")
        elif style == "megatron":
            lines.append(f" [{ctx.ts()}] iteration {step:>8d}/{total:>8d} | consumed samples: {step * 256:>12d} | elapsed time per iteration (ms): {r.uniform(800, 9000):.1f} | learning rate: {lr:.6E} | global batch size:   256 | lm loss: {('nan' if L != L else f'{L:.6E}')} | loss scale: {r.choice([1.0, 65536.0, 32768.0, 131072.0])} | grad norm: {('nan' if L != L else f'{r.uniform(0.1, 3):.3f}')} | number of skipped iterations:   0 | number of nan iterations:   {1 if L != L else 0} |")
        else:  # plain python logging
            lines.append(f"{ctx.ts_ms()} - INFO - {r.choice(['__main__', 'train', 'trainer', 'engine'])} - epoch {k // 8} step {step}/{total} | loss {fmtloss(L)} | lr {lr:.2e} | {r.uniform(50, 900):.1f} ms/step | tok/s {r.randint(2000, 90000)}")
        if r.random() < 0.06:
            lines.append(ch(ctx, WARN_LINES)(ctx))
    return lines


WARN_LINES = [
    lambda c: f"{c.s('torch/utils/data/dataloader.py')}:{ch(c, [557, 558, 617])}: UserWarning: This DataLoader will create {ch(c, [16, 32, 24])} worker processes in total. Our suggested max number of worker in current system is {ch(c, [8, 12, 6])}, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.\n  warnings.warn(_create_warning_msg(",
    lambda c: f"{c.s('torch/_tensor.py')}:{ch(c, [836, 1049])}: UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
    lambda c: f"{c.f(c.script)}:{ri(c, 50, 400)}: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead.",
    lambda c: f"{c.f(c.script)}:{ri(c, 50, 400)}: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.\n  with torch.cuda.amp.autocast(enabled=use_amp):",
    lambda c: f"{c.s('torch/optim/lr_scheduler.py')}:{ch(c, [139, 143])}: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value of the learning rate schedule. See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
    lambda c: f"{c.s('torch/utils/checkpoint.py')}:{ch(c, [464, 90])}: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.5 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more details on the differences between the two variants.",
    lambda c: f"{c.s('transformers/tokenization_utils_base.py')}:1601: FutureWarning: `clean_up_tokenization_spaces` was not set. It will be set to `True` by default. This behavior will be depracted in transformers v4.45, and will be then set to `False` by default. For more details check this issue: https://github.com/huggingface/transformers/issues/31884",
    lambda c: "huggingface/tokenizers: The current process just got forked, after parallelism has already been used. Disabling parallelism to avoid deadlocks...\nTo disable this warning, you can either:\n\t- Avoid using `tokenizers` before the fork if possible\n\t- Explicitly set the environment variable TOKENIZERS_PARALLELISM=(true | false)",
    lambda c: f"{c.s('torch/nn/parallel/distributed.py')}: UserWarning: The `check_reduction` argument in `DistributedDataParallel` module is deprecated. Please avoid using it.",
    lambda c: f"{c.s('torch/functional.py')}:{ch(c, [513, 534])}: UserWarning: torch.meshgrid: in an upcoming release, it will be required to pass the indexing argument. (Triggered internally at ../aten/src/ATen/native/TensorShape.cpp:3587.)\n  return _VF.meshgrid(tensors, **kwargs)  # type: ignore[attr-defined]",
]


def env_preamble(ctx, kind=None):
    r = ctx.rng
    kind = kind or r.choice(["slurm", "plain", "docker", "k8s", "plain"])
    L = []
    if kind == "slurm":
        L += [f"+ echo 'Job {ctx.jobid} on {ctx.host}'", f"Job {ctx.jobid} on {ctx.host}",
              f"SLURM_JOB_ID={ctx.jobid} SLURM_NNODES={r.choice([1, 1, 2, 4])} SLURM_NTASKS={r.choice([1, 4, 8])} SLURM_JOB_PARTITION={r.choice(['gpu', 'a100', 'h100', 'batch', 'preempt'])}",
              "+ module load cuda/12.1 cudnn/8.9", "+ source activate train" if r.random() < .5 else f"+ conda activate {ctx.project.split('-')[0]}"]
    elif kind == "docker":
        L += ["", "==========", "== PyTorch ==", "==========", "", f"NVIDIA Release {r.choice(['23.10', '24.01', '24.03', '24.05'])} (build {r.randint(70000000, 99999999)})",
              f"PyTorch Version {ctx.torchver}a0+{r.randint(1000000, 9999999):x}", "", "Container image Copyright (c) 2024, NVIDIA CORPORATION & AFFILIATES. All rights reserved.", "",
              "NOTE: The SHMEM allocation limit is set to the default of 64MB.  This may be", "   insufficient for PyTorch.  NVIDIA recommends the use of the following flags:",
              "   docker run --gpus all --ipc=host --ulimit memlock=-1 --ulimit stack=67108864 ...", ""]
    elif kind == "k8s":
        L += [f"{ctx.iso()}Z INFO  entrypoint: starting training pod {ctx.project}-worker-{r.randint(0, 7)} (namespace ml-{ctx.user})", f"{ctx.iso()}Z INFO  entrypoint: GPUs visible: {r.choice(['0', '0,1,2,3', '0,1,2,3,4,5,6,7'])}"]
    L.append(f"{ctx.ts()} | {ctx.host} | torch {ctx.torchver}+cu121 | CUDA available: True | device: {ctx.gpu} | driver {ctx.driver}" if r.random() < .6 else f"Using device: cuda ({ctx.gpu})")
    if r.random() < 0.5:
        L += [f"wandb: Currently logged in as: {ctx.user} ({ctx.user}-lab). Use `wandb login --relogin` to force relogin",
              f"wandb: Tracking run with wandb version 0.{r.randint(15, 19)}.{r.randint(0, 12)}",
              f"wandb: Run data is saved locally in {ctx.root}/wandb/run-{time.strftime('%Y%m%d_%H%M%S', time.localtime(ctx.t))}-{r.randint(10**7, 10**8):x}",
              "wandb: Run `wandb offline` to turn off syncing.",
              f"wandb: Syncing run {r.choice(['brisk', 'fluent', 'lucky', 'royal', 'vivid'])}-{r.choice(['sun', 'river', 'wave', 'pine'])}-{r.randint(1, 300)}"]
    return L


def config_dump(ctx):
    r = ctx.rng
    keys = {"model_name_or_path": ctx.model, "per_device_train_batch_size": r.choice([1, 2, 4, 8, 16, 32]), "gradient_accumulation_steps": r.choice([1, 2, 4, 8]),
            "learning_rate": r.choice(["2e-5", "1e-4", "3e-4"]), "num_train_epochs": r.choice([1, 3, 10]), "bf16": r.choice([True, False]),
            "max_seq_length": r.choice([512, 1024, 2048, 4096]), "output_dir": f"{ctx.root}/outputs/{ctx.project}-{r.randint(1, 99)}",
            "seed": r.randint(0, 9999), "warmup_ratio": r.choice([0.0, 0.03, 0.1]), "dataloader_num_workers": r.choice([0, 2, 4, 8])}
    out = [f"{ctx.ts_ms()} - INFO - __main__ - Training/evaluation parameters:"]
    for k, v in keys.items():
        out.append(f"  {k}: {v}")
    return out


def nccl_init_lines(ctx, nranks=4):
    r = ctx.rng
    L = []
    iface = r.choice(["eth0", "ib0", "enp75s0f0", "bond0", "ens5"])
    for rk in range(nranks):
        p = ctx.pid + rk
        L.append(f"{ctx.host}:{p}:{p} [{rk}] NCCL INFO Bootstrap : Using {iface}:10.{r.randint(0, 255)}.{r.randint(0, 255)}.{r.randint(1, 254)}<0>")
    L.append(f"{ctx.host}:{ctx.pid}:{ctx.pid} [0] NCCL INFO NCCL version {ctx.ncclver}+cuda12.{r.randint(1, 4)}")
    for rk in range(nranks):
        p = ctx.pid + rk
        L.append(f"{ctx.host}:{p}:{p + 90} [{rk}] NCCL INFO NET/IB : Using [0]mlx5_{rk % 4}:1/IB [RO]; OOB {iface}:10.0.{r.randint(0, 255)}.{r.randint(1, 254)}<0>" if iface.startswith("ib") else f"{ctx.host}:{p}:{p + 90} [{rk}] NCCL INFO NET/Socket : Using [0]{iface}:10.0.{r.randint(0, 255)}.{r.randint(1, 254)}<0>")
        L.append(f"{ctx.host}:{p}:{p + 90} [{rk}] NCCL INFO comm 0x{r.randint(10**11, 10**12):x} rank {rk} nranks {nranks} cudaDev {rk} nvmlDev {rk} busId {r.choice(['1b', '3b', '5e', '86', 'b7', 'db'])}000 commId 0x{r.randint(10**15, 10**16):x} - Init COMPLETE")
    return L


def with_prefix(lines, pfx):
    out = []
    for ln in lines:
        for sub in ln.split("\n"):
            out.append(pfx + sub)
    return out


def interleave(ctx, streams):
    """Randomly interleave several lists of lines, keeping order within each."""
    streams = [list(s) for s in streams if s]
    out = []
    idx = [0] * len(streams)
    while True:
        live = [i for i in range(len(streams)) if idx[i] < len(streams[i])]
        if not live:
            return out
        i = ctx.rng.choice(live)
        k = ctx.rng.randint(1, 3)
        out.extend(streams[i][idx[i]:idx[i] + k])
        idx[i] += k


def wandb_teardown(ctx, failed=True, nan=False):
    r = ctx.rng
    L = [("wandb: 🚀 View run" if r.random() < .5 else "wandb: View run") + f" {r.choice(['brisk', 'lucky', 'vivid'])}-{r.choice(['sun', 'wave'])}-{r.randint(1, 300)} at: https://wandb.ai/{ctx.user}/{ctx.project}/runs/{r.randint(10**7, 10**8):x}"]
    if not failed:
        L = ["wandb: ", "wandb: Run history:", "wandb:   train/epoch ▁▁▂▂▃▃▄▄▅▅▆▆▇▇██", "wandb:    train/loss █▆▅▄▃▃▂▂▂▂▁▁▁▁▁▁" if not nan else "wandb:    train/loss ▁▁▁▁▁▁▁            ",
             "wandb: train/learning_rate ████▇▇▆▅▄▃▂▂▁", "wandb: ", "wandb: Run summary:", f"wandb:    train/loss {'nan' if nan else f'{r.uniform(0.2, 2.5):.5f}'}",
             f"wandb:  train_runtime {r.uniform(100, 90000):.4f}", "wandb: "] + L
    L += [f"wandb: Synced {r.randint(3, 7)} W&B file(s), 0 media file(s), {r.randint(0, 4)} artifact file(s) and 0 other file(s)",
          f"wandb: Find logs at: ./wandb/run-{time.strftime('%Y%m%d_%H%M%S', time.localtime(ctx.t))}-{r.randint(10**7, 10**8):x}/logs"]
    return L

# --------------------------------------------------------------------------
# launchers: torchrun elastic summary, slurm, deepspeed, accelerate
# --------------------------------------------------------------------------
SIGNAMES = {6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM", 2: "SIGINT", 7: "SIGBUS"}


def torchrun_header(ctx):
    g = ctx.glog("W")
    p = ctx.pid - ri(ctx, 5, 50)
    path = ch(ctx, ["torch/distributed/run.py", "site-packages/torch/distributed/run.py"])
    ln = ch(ctx, [757, 792, 793, 874])
    star = "*****************************************"
    return [f"{g} {p} {path}:{ln}] ", f"{g} {p} {path}:{ln}] {star}",
            f"{g} {p} {path}:{ln}] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ",
            f"{g} {p} {path}:{ln}] {star}"]


def torchrun_failure(ctx, root_rank, root_exit, others=None, script=None, host=None, old=False):
    """torch/distributed/elastic ChildFailedError block.  root_exit: int (1, -6, -9, -11 ...)"""
    r = ctx.rng
    script = script or ctx.script.split("/")[-1]
    host = host or ctx.host
    agent = ctx.pid - ri(ctx, 5, 50)
    L = []
    others = others if others is not None else [k for k in range(ctx.world if ctx.world <= 8 else 8) if k != root_rank]
    for k in others[:r.randint(1, max(1, len(others)))]:
        L.append(f"{ctx.glog('W')} {agent} torch/distributed/elastic/multiprocessing/api.py:{ch(ctx, [858, 897, 1028])}] Sending process {ctx.pid + k} closing signal SIGTERM")
    L.append(f"{ctx.glog('E')} {agent} torch/distributed/elastic/multiprocessing/api.py:{ch(ctx, [833, 869, 1002])}] failed (exitcode: {root_exit}) local_rank: {root_rank % 8} (pid: {ctx.pid + root_rank}) of binary: {ctx.pybin}")
    sp = ctx.site
    L += tb([(ctx.pybin.rsplit('/', 1)[0] + "/torchrun", 8, "<module>", "sys.exit(main())"),
             (f"{sp}/torch/distributed/elastic/multiprocessing/errors/__init__.py", ch(ctx, [346, 347, 355, 367]), "wrapper", "return f(*args, **kwargs)"),
             (f"{sp}/torch/distributed/run.py", ch(ctx, [812, 879, 901, 919]), "main", "run(args)"),
             (f"{sp}/torch/distributed/run.py", ch(ctx, [803, 870, 892, 910]), "run", "elastic_launch("),
             (f"{sp}/torch/distributed/launcher/api.py", ch(ctx, [133, 138]), "__call__", "return launch_agent(self._config, self._entrypoint, list(args))"),
             (f"{sp}/torch/distributed/launcher/api.py", ch(ctx, [264, 269]), "launch_agent", "raise ChildFailedError(")],
            ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: "])
    eq = "=" * ch(ctx, [54, 60, 62, 66])
    da = "-" * len(eq)
    when = time.strftime("%Y-%m-%d_%H:%M:%S", time.localtime(ctx.t))

    def entry(idx, rk, code):
        sig = SIGNAMES.get(-code)
        ex = f"{code} (pid: {ctx.pid + rk})" + (f"  ({sig})" if sig and not old else "")
        trace = f"Signal {-code} ({sig}) received by PID {ctx.pid + rk}" if code < 0 else "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"
        return [f"[{idx}]:", f"  time      : {when}", f"  host      : {host}", f"  rank      : {rk} (local_rank: {rk % 8})",
                f"  exitcode  : {ex}", "  error_file: <N/A>", f"  traceback : {trace}"]
    L += [eq, f"{script} FAILED", da, "Failures:"]
    fail_others = [k for k in others if r.random() < 0.3][:3]
    if fail_others:
        for i, k in enumerate(fail_others):
            L += entry(i + 1, k, ch(ctx, [-15, 1, -6]))
    else:
        L.append("  <NO_OTHER_FAILURES>")
    L += [da, "Root Cause (first observed failure):"] + entry(0, root_rank, root_exit) + [eq]
    return L


def slurm_cancel(ctx, reason=None, step=False):
    j = ctx.jobid
    tag = f"STEP {j}.{ri(ctx, 0, 2)}" if step else f"JOB {j}"
    tail = f" DUE TO {reason}" if reason else ""
    return f"slurmstepd: error: *** {tag} ON {ctx.host} CANCELLED AT {ctx.iso()}{tail} ***"


def bash_sig_line(ctx, sig, cmd=None):
    cmd = cmd or f"python {ctx.script}"
    word = {9: "Killed", 11: "Segmentation fault      (core dumped)", 6: "Aborted                 (core dumped)", 15: "Terminated", 7: "Bus error               (core dumped)"}[sig]
    where = ch(ctx, [f"/var/spool/slurmd/job{ctx.jobid}/slurm_script", f"/var/spool/slurm/d/job{ctx.jobid}/slurm_script", f"{ctx.root}/run.sh", f"{ctx.root}/scripts/launch.sh"])
    return f"{where}: line {ri(ctx, 8, 60)}: {ri(ctx, 1000, 400000)} {word} {cmd}"


def deepspeed_launcher_fail(ctx, code, ranks=None):
    ranks = ranks or list(range(min(ctx.world, 8)))
    L = []
    for k in ranks:
        L.append(f"[{ctx.ts_ms()}] [INFO] [launch.py:{ch(ctx, [315, 319, 347])}:sigkill_handler] Killing subprocess {ctx.pid + k}")
    L.append(f"[{ctx.ts_ms()}] [ERROR] [launch.py:{ch(ctx, [321, 325, 353])}:sigkill_handler] ['{ctx.pybin}', '-u', '{ctx.script}', '--local_rank={ranks[-1]}', '--deepspeed', 'ds_config.json'] exits with return code = {code}")
    return L


def accelerate_fail(ctx, code):
    sp = ctx.site
    bin_ = ctx.pybin.rsplit('/', 1)[0] + "/accelerate"
    return tb([(bin_, 8, "<module>", "sys.exit(main())"),
               (f"{sp}/accelerate/commands/accelerate_cli.py", ch(ctx, [46, 48, 50]), "main", "args.func(args)"),
               (f"{sp}/accelerate/commands/launch.py", ch(ctx, [1159, 1168, 1194]), "launch_command", "simple_launcher(args)"),
               (f"{sp}/accelerate/commands/launch.py", ch(ctx, [780, 785, 793]), "simple_launcher", "raise subprocess.CalledProcessError(returncode=process.returncode, cmd=cmd)")],
              [f"subprocess.CalledProcessError: Command '['{ctx.pybin}', '{ctx.script}', '--config', 'configs/{ctx.project}.yaml']' returned non-zero exit status {code}."])


NO_PREFIX = ("slurmstepd:", "srun:", "=>> PBS", "TERM_RUNLIMIT", "Exited with exit code", "+ ", "bash:", "/var/spool/")


def rank_wrap(ctx, lines, rank, style):
    """Prefix a rank's lines; scheduler/shell/kernel lines are printed by other processes and stay unprefixed."""
    if style in ("rankN", "default", "srun"):
        out = []
        for ln in lines:
            for sub in ln.split("\n"):
                if sub.startswith(NO_PREFIX) or (sub.startswith("[") and "NVRM" in sub[:40]) or "Killed process" in sub:
                    out.append(sub)
                else:
                    out.extend(rank_wrap(ctx, [sub], rank, style + "_"))
        return out
    style = style.rstrip("_")
    if style == "rankN":
        return with_prefix(lines, f"[rank{rank}]: ")
    if style == "default":
        return with_prefix(lines, f"[default{rank}]:")
    if style == "srun":
        return with_prefix(lines, f"{rank}: ")
    return lines

# --------------------------------------------------------------------------
# generic composition
# --------------------------------------------------------------------------
STYLES_BY_SET = {
    "frozen": ["hf", "plain", "nanogpt", "deepspeed", "hf", "plain", "lightning"],
    "dev": ["lightning", "keras", "jax", "megatron", "plain", "hf", "deepspeed"],
}


def pick_style(ctx):
    return ch(ctx, STYLES_BY_SET.get(ctx.set, STYLES_BY_SET["frozen"]))


def compose(ctx, root, death=("exc", 1), launcher=None, style=None, n_train=None, consequences=None,
            after=None, before=None, rank_style=None, root_rank=None, teardown_len=None, pre_kind=None):
    """Build a full log around `root` (list of lines at the failure point).

    death: ("exc", code) python exits with code; ("sig", N) killed by signal N; ("exit", code) literal.
    Returns (lines, true_exit_code).
    """
    r = ctx.rng
    t_end_root = ctx.t                      # root lines were generated first (from ctx.t0 on)
    gap = r.uniform(0.5, 90.0)
    state = r.getstate()
    ctx.t = 0.0
    _pre_part(ctx, style, launcher, n_train, before, rank_style, root_rank, pre_kind)  # dry run: measure elapsed time
    dt = ctx.t
    r.setstate(state)
    ctx.t = ctx.t0 - dt - gap
    L, style, launcher, multi, rank_style, nranks, rr = _pre_part(ctx, style, launcher, n_train, before, rank_style, root_rank, pre_kind)
    ctx.t = max(ctx.t, t_end_root)
    # the root cause (possibly rank-prefixed) plus other ranks' consequences
    root_lines = rank_wrap(ctx, root, rr, rank_style) if multi and rank_style != "none" else list(root)
    if consequences:
        cons = []
        for k, lines in consequences:
            cons.append(rank_wrap(ctx, lines, k, rank_style) if rank_style != "none" else lines)
        L += root_lines
        L += interleave(ctx, cons)
    else:
        L += root_lines
    if after:
        L += after
    # exit code & launcher teardown
    kind, val = death
    if kind != "exit" and r.random() < 0.3:
        L += teardown_noise(ctx, nranks)
    if kind == "exit":
        code = val
    elif launcher == "torchrun":
        child = val if kind == "exc" else -val
        if r.random() < 0.5:
            L += wandb_teardown(ctx)
        L += torchrun_failure(ctx, rr, child)
        code = 1
    elif launcher == "deepspeed":
        child = val if kind == "exc" else -val
        L += deepspeed_launcher_fail(ctx, child)
        code = 1 if kind == "exc" else (val if False else 1)
    elif launcher == "accelerate":
        child = val if kind == "exc" else -val
        L += accelerate_fail(ctx, child)
        code = 1
    elif launcher == "slurm":
        if r.random() < 0.5 and kind == "exc":
            L += wandb_teardown(ctx)
        if kind == "sig":
            L.append(bash_sig_line(ctx, val))
            code = 128 + val
        else:
            code = val
        if r.random() < 0.5:
            L.append(f"srun: error: {ctx.host}: task {rr}: Exited with exit code {code if code < 128 else code}")
    else:
        if kind == "exc" and r.random() < 0.4:
            L += wandb_teardown(ctx)
        code = val if kind == "exc" else -val
    return L, code


def pyexc_root(ctx, exc_lines, deep=None, lib_frames=None):
    frames = user_frames(ctx)
    if lib_frames:
        frames += lib_frames
    return tb(frames, exc_lines)


def teardown_noise(ctx, nranks=1):
    r = ctx.rng
    L = []
    pick = r.random()
    if pick < 0.2:
        for _ in range(r.randint(1, 3)):
            L += ["Exception ignored in: <function _MultiProcessingDataLoaderIter.__del__ at 0x%x>" % r.randint(10**13, 10**14)]
            L += tb([(ctx.s("torch/utils/data/dataloader.py"), ch(ctx, [1477, 1604]), "__del__", "self._shutdown_workers()"),
                     (ctx.s("torch/utils/data/dataloader.py"), ch(ctx, [1441, 1568]), "_shutdown_workers", "w.join(timeout=_utils.MP_STATUS_CHECK_INTERVAL)"),
                     ("/usr/lib/python3.10/multiprocessing/process.py", 149, "join", "assert self._parent_pid == os.getpid(), 'can only join a child process'")],
                    ["AssertionError: can only join a child process"])
    elif pick < 0.6:
        for k in range(nranks):
            for _ in range(r.randint(20, 120)):
                L.append(f"{ctx.host}:{ctx.pid + k}:{ctx.pid + k + 400} [{k}] NCCL INFO comm 0x{r.randint(10**11, 10**12):x} rank {k} nranks {nranks} cudaDev {k} busId {ch(ctx, ['1b', '3b', '5e'])}000 - Destroy COMPLETE" if r.random() < .3 else
                         f"{ctx.host}:{ctx.pid + k}:{ctx.pid + k + 400} [{k}] NCCL INFO [Service thread] Connection closed by localRank {r.randrange(max(1, nranks))}")
    else:
        L += [f"{ctx.ts_ms()} - INFO - atexit - flushing {r.randint(2, 40)} pending metric writes"]
        for _ in range(r.randint(30, 300)):
            L.append(f"{ctx.ts_ms()} - DEBUG - fsspec.local - close {ctx.root}/cache/shard-{r.randint(0, 99999):05d}.arrow")
    return L


def _pre_part(ctx, style, launcher, n_train, before, rank_style, root_rank, pre_kind):
    r = ctx.rng
    style = style or pick_style(ctx)
    launcher = launcher or ch(ctx, ["python", "python", "torchrun", "slurm", "slurm", "torchrun", "deepspeed", "accelerate"])
    n_train = n_train if n_train is not None else r.choice([15, 25, 40, 60, 90, 140, 250, 400])
    L = []
    L += env_preamble(ctx, pre_kind or ("slurm" if launcher == "slurm" else None))
    multi = launcher in ("torchrun", "deepspeed") or (launcher == "slurm" and r.random() < 0.4)
    if launcher == "torchrun":
        L += [f"+ torchrun --nproc_per_node={min(ctx.world, 8)} {ctx.script} --config configs/{ctx.project}.yaml"] if r.random() < .5 else []
        L += torchrun_header(ctx)
    if launcher == "deepspeed":
        L += [f"[{ctx.ts_ms()}] [INFO] [real_accelerator.py:{ch(ctx, [191, 203, 219])}:get_accelerator] Setting ds_accelerator to cuda (auto detect)",
              f"[{ctx.ts_ms()}] [INFO] [runner.py:{ch(ctx, [568, 607])}:main] cmd = {ctx.pybin} -u -m deepspeed.launcher.launch --world_info=eyJsb2NhbGhvc3QiOiBbMCwgMSwgMiwgM119 --master_addr=127.0.0.1 --master_port=29500 --enable_each_rank_log=None {ctx.script} --deepspeed ds_config.json",
              f"[{ctx.ts_ms()}] [INFO] [launch.py:{ch(ctx, [139, 146])}:main] WORLD INFO DICT: {{'localhost': [0, 1, 2, 3]}}",
              f"[{ctx.ts_ms()}] [INFO] [launch.py:{ch(ctx, [145, 152])}:main] nnodes=1, num_local_procs=4, node_rank=0",
              f"[{ctx.ts_ms()}] [INFO] [comm.py:{ch(ctx, [637, 652])}:init_distributed] cdb=None",
              f"[{ctx.ts_ms()}] [INFO] [comm.py:{ch(ctx, [668, 683])}:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl"]
    if launcher == "accelerate":
        L += [f"The following values were not passed to `accelerate launch` and had defaults used instead:", "\t`--num_processes` was set to a value of `1`", "\t`--num_machines` was set to a value of `1`", "\t`--mixed_precision` was set to a value of `'no'`", "\t`--dynamo_backend` was set to a value of `'no'`", "To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`."]
    if r.random() < 0.5:
        L += config_dump(ctx)
    if multi and r.random() < 0.6:
        L += nccl_init_lines(ctx, min(ctx.world, 8))
    if before:
        L += before
    rank_style = rank_style or (ch(ctx, ["rankN", "rankN", "default", "none"]) if launcher == "torchrun" else ("srun" if launcher == "slurm" and multi and r.random() < .5 else "none"))
    nranks = min(ctx.world, 8) if multi else 1
    rr = root_rank if root_rank is not None else (r.randrange(nranks) if multi else 0)
    tr = train_noise(ctx, style, n_train)
    if multi and rank_style in ("default", "srun"):
        tagged = []
        for k in range(nranks):
            for i, x in enumerate(tr):
                if k == 0 or r.random() < 0.15:
                    tagged.append((i, r.random(), rank_wrap(ctx, [x], k, rank_style)))
        tagged.sort(key=lambda z: (z[0], z[1]))
        for _, _, lines in tagged:
            L += lines
    else:
        L += tr
    return L, style, launcher, multi, rank_style, nranks, rr

# --------------------------------------------------------------------------
# per-class composers.  Each returns dict(lines=[...], code=int, prov=str, [gpu/driver])
# --------------------------------------------------------------------------
def variant(ctx, n):
    """Template variant for this log.  frozen draws from the first ~2/3 of the variants, dev from the last ~2/3;
    within a set the variants are cycled (random start per class) so each is used evenly."""
    if ctx.set == "frozen":
        lo, hi = 0, -(-2 * n // 3)
    else:
        lo, hi = n // 3, n
    allowed = list(range(lo, max(lo + 1, hi)))
    if getattr(ctx, "k", None) is None:
        return ctx.rng.choice(allowed)
    return allowed[(ctx.k + ctx.koff) % len(allowed)]


def gib(x):
    return f"{x:.2f} GiB" if x >= 1 else f"{x * 1024:.2f} MiB"


def m_cuda_oom(ctx):
    r = ctx.rng
    v = variant(ctx, 6)
    tot = ctx.gpu_mem
    want = r.choice([r.uniform(0.02, 0.9), r.uniform(1, 12), r.uniform(0.1, 4)])
    free = r.uniform(0.0, min(want * 0.9, 2))
    used = tot - free - r.uniform(0.2, 0.6)
    alloc = used - r.uniform(0.3, 3)
    resv = r.uniform(0.05, 2)
    libs = torch_module_frames(ctx, 2) + [(ctx.s(ch(ctx, ["transformers/models/llama/modeling_llama.py", "torch/nn/modules/linear.py", "torch/nn/functional.py", "transformers/activations.py"])), ri(ctx, 100, 2000), ch(ctx, ["forward", "softmax", "linear"]), ch(ctx, ["return F.linear(input, self.weight, self.bias)", "attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)", "ret = input.softmax(dim)"]))]
    if v == 0:  # torch >= 2.2 wording
        cls = ch(ctx, ["torch.OutOfMemoryError", "torch.cuda.OutOfMemoryError"])
        msg = (f"{cls}: CUDA out of memory. Tried to allocate {gib(want)}. GPU {ri(ctx, 0, 7) if r.random() < .3 else 0} has a total capacity of {tot:.2f} GiB of which {gib(free)} is free. "
               f"Including non-PyTorch memory, this process has {gib(used)} memory in use. Of the allocated memory {gib(alloc)} is allocated by PyTorch, and {gib(resv)} is reserved by PyTorch but unallocated. "
               "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
        root = pyexc_root(ctx, [msg], lib_frames=libs)
        L, code = compose(ctx, root)
        prov = "pytorch c10/cuda/CUDACachingAllocator.cpp OOM message (torch>=2.2 wording), as quoted in https://github.com/murong-xu/CADS/issues/4 and https://github.com/pytorch/pytorch/issues/16417"
    elif v == 1:  # old wording
        msg = (f"RuntimeError: CUDA out of memory. Tried to allocate {gib(want)} (GPU 0; {tot:.2f} GiB total capacity; {gib(alloc)} already allocated; {gib(free)} free; {gib(alloc + resv)} reserved in total by PyTorch)"
               + (" If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF" if r.random() < .6 else ""))
        root = pyexc_root(ctx, [msg], lib_frames=libs)
        L, code = compose(ctx, root, launcher=ch(ctx, ["python", "slurm"]))
        prov = "pytorch CUDACachingAllocator pre-2.0 OOM wording, quoted in https://github.com/2KangHo/vdsr_pytorch/issues/2 and https://github.com/pytorch/pytorch/issues/59778"
    elif v == 2:  # multi-rank: rank k OOM, others hit NCCL watchdog afterwards
        k = r.randrange(1, min(ctx.world, 8)) if ctx.world > 1 else 0
        msg = (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {gib(want)}. GPU {k} has a total capacity of {tot:.2f} GiB of which {gib(free)} is free. "
               f"Including non-PyTorch memory, this process has {gib(used)} memory in use. Of the allocated memory {gib(alloc)} is allocated by PyTorch, and {gib(resv)} is reserved by PyTorch but unallocated. "
               "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
        root = pyexc_root(ctx, [msg], lib_frames=libs)
        seq = ri(ctx, 100, 90000)
        cons = []
        for j in range(min(ctx.world, 8)):
            if j == k:
                continue
            cons.append((j, watchdog_lines(ctx, j, seq, "ALLREDUCE", r.choice([600000, 1800000]))))
        L, code = compose(ctx, root, launcher="torchrun", root_rank=k, consequences=cons, rank_style="rankN")
        prov = "torch OOM message + ProcessGroupNCCL watchdog wording on other ranks (https://github.com/hiyouga/LlamaFactory/issues/7396); torchrun ChildFailedError block from torch/distributed/elastic"
    elif v == 3:  # TF ResourceExhausted
        shape = f"[{ch(ctx, [32, 64, 128, 256])},{ch(ctx, [512, 1024, 768])},{ch(ctx, [512, 1024, 3072])}]"
        pre = [f"{ctx.ts('%Y-%m-%d %H:%M:%S')}.{ri(ctx, 100000, 999999)}: W tensorflow/tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out of memory trying to allocate {gib(want).replace(' ', '')} (rounded to {int(want * 2**30)})requested by op {ch(ctx, ['model/dense_3/MatMul', 'gradient_tape/model/conv2d_5/Conv2D/Conv2DBackpropInput', 'model/attention/Softmax'])}",
               "If the cause is memory fragmentation maybe the environment variable 'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation. ",
               f"Current allocation summary follows.",
               f"{ctx.ts('%Y-%m-%d %H:%M:%S')}.{ri(ctx, 100000, 999999)}: I tensorflow/tsl/framework/bfc_allocator.cc:1039] BFCAllocator dump for GPU_0_bfc"]
        pre += [f"{ctx.ts('%Y-%m-%d %H:%M:%S')}.{ri(ctx, 100000, 999999)}: I tensorflow/tsl/framework/bfc_allocator.cc:1046] Bin ({256 * 2 ** i}): \tTotal Chunks: {ri(ctx, 0, 300)}, Chunks in use: {ri(ctx, 0, 300)}. {ri(ctx, 1, 900)}.0KiB allocated for chunks. {ri(ctx, 1, 900)}.0KiB in use in bin. {ri(ctx, 1, 900)}.0KiB client-requested in use in bin." for i in range(r.randint(6, 20))]
        exc = [f"tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:", "", "Detected at node 'model/dense_3/MatMul' defined at (most recent call last):",
               f"    File \"{ctx.f(ctx.script)}\", line {ri(ctx, 50, 300)}, in <module>", "      model.fit(train_ds, epochs=epochs, validation_data=val_ds)",
               f"OOM when allocating tensor with shape{shape} and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc",
               "\t [[{{node model/dense_3/MatMul}}]]", "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info. This isn't available when running in Eager mode.",
               " [Op:__inference_train_function_" + str(ri(ctx, 1000, 99999)) + "]"]
        root = pre + tb([(ctx.f(ctx.script), ri(ctx, 50, 300), "<module>", "model.fit(train_ds, epochs=epochs, validation_data=val_ds)"),
                         (ctx.s("keras/utils/traceback_utils.py"), 70, "error_handler", "raise e.with_traceback(filtered_tb) from None"),
                         (ctx.s("tensorflow/python/eager/execute.py"), 54, "quick_execute", "tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,")], exc)
        L, code = compose(ctx, root, launcher=ch(ctx, ["python", "slurm"]), style="keras")
        prov = "tensorflow tsl/framework/bfc_allocator.cc 'ran out of memory trying to allocate' + ResourceExhaustedError 'OOM when allocating tensor with shape' (tensorflow/tensorflow issues)"
    elif v == 4:  # JAX / XLA
        nbytes = int(want * 2**30)
        pre = [f"{ctx.ts('%Y-%m-%d %H:%M:%S')}.{ri(ctx, 100000, 999999)}: W external/xla/xla/tsl/framework/bfc_allocator.cc:{ch(ctx, [482, 497, 501])}] Allocator (GPU_0_bfc) ran out of memory trying to allocate {gib(want).replace(' ', '')} (rounded to {nbytes})requested by op ",
               f"{ctx.ts('%Y-%m-%d %H:%M:%S')}.{ri(ctx, 100000, 999999)}: W external/xla/xla/tsl/framework/bfc_allocator.cc:{ch(ctx, [494, 512])}] *****************************************************************************_______________________",
               f"E{time.strftime('%m%d %H:%M:%S', time.localtime(ctx.tick()))}.{ri(ctx, 0, 999999):06d} {ri(ctx, 1000, 99999)} pjrt_stream_executor_client.cc:{ch(ctx, [2809, 3067])}] Execution of replica 0 failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate {nbytes} bytes."]
        root = pre + tb([(ctx.f(ctx.script), ri(ctx, 100, 400), "<module>", "main()"), (ctx.f(ctx.script), ri(ctx, 100, 400), "main", "state, metrics = p_train_step(state, batch)")],
                        ["jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate " + str(nbytes) + " bytes.", "--------------------",
                         "For simplicity, JAX has removed its internal frames from the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to include these."])
        L, code = compose(ctx, root, launcher=ch(ctx, ["python", "slurm"]), style="jax")
        prov = "XLA bfc_allocator.cc + pjrt 'RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes.' (google/jax issue threads)"
    else:  # cuBLAS/CUDA allocation OOM via generic CUDA error string during backward, accelerate launcher
        msg = ["RuntimeError: CUDA error: out of memory", "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
               "For debugging consider passing CUDA_LAUNCH_BLOCKING=1", "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]
        root = tb(user_frames(ctx) + [(ctx.s("accelerate/accelerator.py"), ri(ctx, 1900, 2300), "backward", "loss.backward(**kwargs)"),
                                      (ctx.s("torch/_tensor.py"), ch(ctx, [521, 522, 581, 626]), "backward", "torch.autograd.backward("),
                                      (ctx.s("torch/autograd/__init__.py"), ch(ctx, [266, 289, 347]), "backward", "_engine_run_backward("),
                                      (ctx.s("torch/autograd/graph.py"), ch(ctx, [768, 825]), "_engine_run_backward", "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")], msg)
        L, code = compose(ctx, root, launcher="accelerate")
        prov = "c10/cuda/CUDAException.h cudaErrorMemoryAllocation 'CUDA error: out of memory' + CUDA_LAUNCH_BLOCKING hint; accelerate/commands/launch.py simple_launcher CalledProcessError"
    return dict(lines=L, code=code, prov=prov)


def watchdog_lines(ctx, rank, seq, op, tmo):
    g = ctx.glog("E")
    ln = ch(ctx, [607, 616, 629, 1664])
    ran = tmo + ri(ctx, 3, 120)
    nin = ri(ctx, 1, 600000000)
    return [f"[{g} ProcessGroupNCCL.cpp:{ln}] [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn={nin}, NumelOut={nin}, Timeout(ms)={tmo}) ran for {ran} milliseconds before timing out.",
            f"[{ctx.glog('E')} ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] Exception (either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq + ri(ctx, 0, 3)}, last completed NCCL work: {seq - 1}."]


def nccl_abort_tail(ctx, rank, seq, op, tmo):
    ran = tmo + ri(ctx, 3, 120)
    return [f"[{ctx.glog('E')} ProcessGroupNCCL.cpp:{ch(ctx, [577, 630])}] [Rank {rank}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
            f"[{ctx.glog('E')} ProcessGroupNCCL.cpp:{ch(ctx, [583, 636])}] [Rank {rank}] To avoid data inconsistency, we are taking the entire process down.",
            f"[{ctx.glog('E')} ProcessGroupNCCL.cpp:{ch(ctx, [1595, 1664])}] [PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group watchdog thread terminated with exception: [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=1, NumelOut=1, Timeout(ms)={tmo}) ran for {ran} milliseconds before timing out.",
            "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most recent call first):",
            f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x{ctx.rng.randint(10**13, 10**14):x} in {ctx.site}/torch/lib/libc10.so)",
            f"frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x{ctx.rng.randint(10**13, 10**14):x} in {ctx.site}/torch/lib/libtorch_cuda.so)",
            f"frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x233 (0x{ctx.rng.randint(10**13, 10**14):x} in {ctx.site}/torch/lib/libtorch_cuda.so)",
            f"frame #3: c10d::ProcessGroupNCCL::ncclCommWatchdog() + 0x14d (0x{ctx.rng.randint(10**13, 10**14):x} in {ctx.site}/torch/lib/libtorch_cuda.so)",
            f"frame #4: <unknown function> + 0xdc253 (0x{ctx.rng.randint(10**13, 10**14):x} in /lib/x86_64-linux-gnu/libstdc++.so.6)",
            f"frame #5: <unknown function> + 0x94ac3 (0x{ctx.rng.randint(10**13, 10**14):x} in /lib/x86_64-linux-gnu/libc.so.6)",
            f"frame #6: <unknown function> + 0x126850 (0x{ctx.rng.randint(10**13, 10**14):x} in /lib/x86_64-linux-gnu/libc.so.6)", "",
            "terminate called after throwing an instance of 'c10::DistBackendError'",
            f"  what():  [PG ID 0 PG GUID 0(default_pg) Rank {rank}] Process group watchdog thread terminated with exception: [Rank {rank}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType={op}, NumelIn=1, NumelOut=1, Timeout(ms)={tmo}) ran for {ran} milliseconds before timing out."]


def m_nccl(ctx):
    r = ctx.rng
    v = variant(ctx, 7)
    nr = min(ctx.world, 8)
    if v == 0:  # watchdog timeout on all ranks, SIGABRT
        seq = ri(ctx, 5, 200000)
        op = ch(ctx, ["ALLREDUCE", "_ALLGATHER_BASE", "_REDUCE_SCATTER_BASE", "BROADCAST", "ALLGATHER"])
        tmo = ch(ctx, [600000, 1800000])
        root = watchdog_lines(ctx, 0, seq, op, tmo)
        cons = [(k, watchdog_lines(ctx, k, seq, op, tmo)) for k in range(1, nr)]
        after = nccl_abort_tail(ctx, 0, seq, op, tmo)
        L, code = compose(ctx, root, death=("sig", 6), launcher="torchrun", consequences=cons, after=after, rank_style="rankN", root_rank=0)
        prov = "torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp watchdog wording; https://github.com/NVIDIA/Megatron-LM/issues/1207 , https://github.com/XPixelGroup/BasicSR/issues/737"
    elif v == 1:  # DistBackendError unhandled system error
        ip = f"10.{ri(ctx, 0, 255)}.{ri(ctx, 0, 255)}.{ri(ctx, 1, 254)}"
        exc = [f"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:{ch(ctx, [1691, 1970, 2006, 2027])}, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version {ctx.ncclver}",
               "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ", "Last error:",
               ch(ctx, [f"socketStartConnect: Connect to {ip}<{ri(ctx, 30000, 60000)}> failed : Software caused connection abort",
                        f"socketProgress: Connection closed by remote peer {ctx.host2}<{ri(ctx, 30000, 60000)}>",
                        "Error while creating shared memory segment /dev/shm/nccl-" + "".join(ch(ctx, "abcdefXYZ0123456789") for _ in range(6)) + f" (size {ri(ctx, 5000000, 9000000)})"])]
        root = tb(user_frames(ctx) + [(ctx.s("torch/nn/parallel/distributed.py"), ch(ctx, [795, 822, 825]), "__init__", "_verify_param_shape_across_processes(self.process_group, parameters)"),
                                      (ctx.s("torch/distributed/utils.py"), ch(ctx, [282, 288]), "_verify_param_shape_across_processes", "return dist._verify_params_across_processes(process_group, tensors, logger)")], exc)
        L, code = compose(ctx, root, launcher=ch(ctx, ["torchrun", "slurm"]), n_train=0)
        prov = "ProcessGroupNCCL.cpp 'NCCL error in: ... unhandled system error' + NCCL ncclSystemError text (pytorch/pytorch issue threads, NVIDIA/nccl issues)"
    elif v == 2:  # NCCL WARN IB completion error
        ip = f"10.{ri(ctx, 0, 255)}.{ri(ctx, 0, 255)}.{ri(ctx, 1, 254)}"
        p = ctx.pid + 1
        root = [f"{ctx.host}:{p}:{p + 301} [1] transport/net_ib.cc:{ch(ctx, [1295, 1696, 1775])} NCCL WARN NET/IB : Got completion from peer {ip}<{ri(ctx, 30000, 60000)}> with error 12, opcode {ri(ctx, 0, 129)}, len 0, vendor err 129 (Recv) localGid ::ffff:{ip} remoteGids ::ffff:{ip}",
                f"{ctx.host}:{p}:{p + 301} [1] NCCL INFO transport/net.cc:{ch(ctx, [1134, 1316])} -> 6",
                f"{ctx.host}:{p}:{p + 301} [1] NCCL INFO proxy.cc:{ch(ctx, [694, 858])} -> 6",
                f"{ctx.host}:{p}:{p + 301} [1] NCCL INFO proxy.cc:{ch(ctx, [878, 1025])} -> 6 [Progress Thread]"]
        root += tb(user_frames(ctx) + [(ctx.s("torch/distributed/c10d_logger.py"), ch(ctx, [72, 75, 83]), "wrapper", "return func(*args, **kwargs)"),
                                       (ctx.s("torch/distributed/distributed_c10d.py"), ch(ctx, [2195, 2288, 2501]), "all_reduce", "work.wait()")],
                   [f"torch.distributed.DistBackendError: NCCL communicator was aborted on rank 1. Original reason for failure was: NCCL error: remote process exited or there was a network error, NCCL version {ctx.ncclver}",
                    "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.", "Last error:",
                    f"NET/IB : Got completion from peer {ip}<{ri(ctx, 30000, 60000)}> with error 12, opcode {ri(ctx, 0, 129)}, len 0, vendor err 129 (Recv)"])
        L, code = compose(ctx, root, launcher=ch(ctx, ["torchrun", "deepspeed", "slurm"]), root_rank=1)
        prov = "NCCL src/transport/net_ib.cc 'Got completion from peer ... with error 12' + ncclRemoteError text (NVIDIA/nccl issue threads)"
    elif v == 3:  # store based barrier / rendezvous timeout
        root = tb(user_frames(ctx) + [(ctx.s("torch/distributed/c10d_logger.py"), ch(ctx, [79, 83, 97]), "wrapper", "return func(*args, **kwargs)"),
                                      (ctx.s("torch/distributed/distributed_c10d.py"), ch(ctx, [1593, 1710]), "init_process_group", "default_pg, _ = _new_process_group_helper("),
                                      (ctx.s("torch/distributed/rendezvous.py"), ch(ctx, [258, 267]), "_env_rendezvous_handler", "store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout, use_libuv)")],
                  [f"torch.distributed.DistStoreError: Timed out after {ch(ctx, [301, 601, 901, 1801])} seconds waiting for clients. {ri(ctx, 1, nr - 1)}/{nr} clients joined."])
        L, code = compose(ctx, root, launcher=ch(ctx, ["slurm", "python"]), n_train=0)
        prov = "torch/csrc/distributed/c10d/TCPStore.cpp 'Timed out after N seconds waiting for clients. k/n clients joined.' (pytorch/pytorch issue threads)"
    elif v == 4:  # gloo connection closed by peer
        ip = f"10.{ri(ctx, 0, 255)}.{ri(ctx, 0, 255)}.{ri(ctx, 1, 254)}"
        root = tb(user_frames(ctx) + [(ctx.s("torch/distributed/c10d_logger.py"), 83, "wrapper", "return func(*args, **kwargs)"),
                                      (ctx.s("torch/distributed/distributed_c10d.py"), ch(ctx, [2288, 3252, 4169]), ch(ctx, ["all_reduce", "barrier"]), "work.wait()")],
                  [f"RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:{ch(ctx, [534, 589, 598])}] Connection closed by peer [{ip}]:{ri(ctx, 2000, 60000)}"])
        L, code = compose(ctx, root, launcher="torchrun", style="plain")
        prov = "gloo/transport/tcp/pair.cc 'Connection closed by peer' (pytorch/pytorch issue threads on gloo backend)"
    elif v == 5:  # JAX NCCL init failure
        root = tb([(ctx.f(ctx.script), ri(ctx, 100, 400), "<module>", "main()"), (ctx.f(ctx.script), ri(ctx, 100, 400), "main", "state = jax.device_put_replicated(state, jax.local_devices())")],
                  [f"jaxlib.xla_extension.XlaRuntimeError: INTERNAL: external/xla/xla/service/gpu/nccl_utils.cc:{ch(ctx, [297, 305])}: NCCL operation ncclCommInitRank(&comm, nranks, id, rank) failed: unhandled system error (run with NCCL_DEBUG=INFO for details); current tracing scope: all-reduce-start.{ri(ctx, 1, 9)}; current profiling annotation: XlaModule:#hlo_module=pmap_train_step,program_id={ri(ctx, 1, 90)}#."])
        L, code = compose(ctx, root, launcher=ch(ctx, ["python", "slurm"]), style="jax", n_train=ri(ctx, 0, 5))
        prov = "XLA xla/service/gpu/nccl_utils.cc 'NCCL operation ncclCommInitRank(...) failed' (google/jax issue threads)"
    else:  # Lightning DDP: heartbeat monitor / RuntimeError NCCL timeout on barrier
        seq = ri(ctx, 2, 40)
        root = watchdog_lines(ctx, 1, seq, "BROADCAST", 1800000)
        root += [f"[{ctx.glog('E')} ProcessGroupNCCL.cpp:{ch(ctx, [1375, 1418])}] [PG ID 0 PG GUID 0(default_pg) Rank 1] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1",
                 f"[{ctx.glog('F')} ProcessGroupNCCL.cpp:{ch(ctx, [1224, 1256])}] [PG ID 0 PG GUID 0(default_pg) Rank 1] [PG ID 0 PG GUID 0(default_pg) Rank 1] Terminating the process after attempting to dump debug info, due to collective timeout or exception."]
        L, code = compose(ctx, root, death=("sig", 6), launcher=ch(ctx, ["torchrun", "slurm"]), style="lightning", root_rank=1)
        prov = "ProcessGroupNCCL.cpp heartbeat-monitor wording (pytorch/pytorch issues, https://github.com/huggingface/open-r1/issues/620)"
    return dict(lines=L, code=code, prov=prov)

CUDA_HINT = ["CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
             "For debugging consider passing CUDA_LAUNCH_BLOCKING=1", "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]


def m_cuda_runtime(ctx):
    r = ctx.rng
    v = variant(ctx, 7)
    libs = torch_module_frames(ctx, 2)
    if v == 0:  # device-side assert from nll_loss
        n_cls = ri(ctx, 2, 1000)
        pre = [f"../aten/src/ATen/native/cuda/Loss.cu:{ch(ctx, [240, 250])}: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [{t},0,0] Assertion `t >= 0 && t < n_classes` failed." for t in sorted(r.sample(range(0, 64), r.randint(2, 12)))]
        root = pre + tb(user_frames(ctx) + [(ctx.s("torch/nn/modules/loss.py"), ch(ctx, [1179, 1188, 1293]), "forward", "return F.cross_entropy(input, target, weight=self.weight,"),
                                            (ctx.s("torch/nn/functional.py"), ch(ctx, [3059, 3086, 3479]), "cross_entropy", "return torch._C._nn.cross_entropy_loss(input, target, weight, _Reduction.get_enum(reduction), ignore_index, label_smoothing)")],
                        ["RuntimeError: CUDA error: device-side assert triggered"] + CUDA_HINT)
        L, code = compose(ctx, root)
        prov = "aten/src/ATen/native/cuda/Loss.cu assertion + c10/cuda 'CUDA error: device-side assert triggered' (pytorch/pytorch issue threads)"
    elif v == 1:  # illegal memory access, terminate c10::Error -> SIGABRT
        root = tb(user_frames(ctx) + libs, ["RuntimeError: CUDA error: an illegal memory access was encountered"] + CUDA_HINT)
        after = ["terminate called after throwing an instance of 'c10::Error'", "  what():  CUDA error: an illegal memory access was encountered"] + CUDA_HINT[:3] + [
            "", f"Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:{ch(ctx, [43, 44])} (most recent call first):",
            f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x{r.randint(10**13, 10**14):x} in {ctx.site}/torch/lib/libc10.so)",
            f"frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) + 0x64 (0x{r.randint(10**13, 10**14):x} in {ctx.site}/torch/lib/libc10.so)",
            f"frame #2: c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) + 0x118 (0x{r.randint(10**13, 10**14):x} in {ctx.site}/torch/lib/libc10_cuda.so)",
            f"frame #3: <unknown function> + 0x1d8d6 (0x{r.randint(10**13, 10**14):x} in {ctx.site}/torch/lib/libc10_cuda.so)", ""]
        L, code = compose(ctx, root, death=("sig", 6), after=after, launcher=ch(ctx, ["python", "torchrun", "slurm"]))
        prov = "c10/cuda/CUDAException.cpp c10_cuda_check_implementation 'an illegal memory access was encountered' + terminate c10::Error (pytorch/pytorch issue threads)"
    elif v == 2:  # cuBLAS
        call = ch(ctx, ["cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)", "cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)", "cublasLtMatmul( ltHandle, computeDesc.descriptor(), &alpha_val, mat1_ptr, Adesc.descriptor(), mat2_ptr, Bdesc.descriptor(), &beta_val, result_ptr, Cdesc.descriptor(), result_ptr, Cdesc.descriptor(), &heuristicResult.algo, workspace.mutable_get(), workspaceSize, at::cuda::getCurrentCUDAStream())"])
        st = ch(ctx, ["CUBLAS_STATUS_EXECUTION_FAILED", "CUBLAS_STATUS_INTERNAL_ERROR", "CUBLAS_STATUS_NOT_SUPPORTED"])
        root = tb(user_frames(ctx) + libs + [(ctx.s("torch/nn/modules/linear.py"), ch(ctx, [114, 116, 125]), "forward", "return F.linear(input, self.weight, self.bias)")],
                  [f"RuntimeError: CUDA error: {st} when calling `{call}`"])
        L, code = compose(ctx, root)
        prov = "aten/src/ATen/cuda/CUDABlas.cpp TORCH_CUDABLAS_CHECK wording 'CUDA error: CUBLAS_STATUS_... when calling `cublas...`' (pytorch/pytorch issue threads)"
    elif v == 3:  # cuDNN
        st = ch(ctx, ["CUDNN_STATUS_INTERNAL_ERROR", "CUDNN_STATUS_EXECUTION_FAILED", "CUDNN_STATUS_MAPPING_ERROR", "CUDNN_STATUS_NOT_SUPPORTED. This error may appear if you passed in a non-contiguous input."])
        root = tb(user_frames(ctx) + libs + [(ctx.s("torch/nn/modules/conv.py"), ch(ctx, [456, 460, 549]), "_conv_forward", "return F.conv2d(input, weight, bias, self.stride,")],
                  [f"RuntimeError: cuDNN error: {st}"])
        L, code = compose(ctx, root, launcher=ch(ctx, ["python", "slurm", "torchrun"]))
        prov = "aten/src/ATen/cudnn/Exceptions.h 'cuDNN error: CUDNN_STATUS_...' (pytorch/pytorch issue threads)"
    elif v == 4:  # unspecified launch failure / no kernel image / misaligned address
        m = ch(ctx, ["unspecified launch failure", "no kernel image is available for execution on the device", "misaligned address", "too many resources requested for launch", "operation not permitted when stream is capturing"])
        cls = ch(ctx, ["RuntimeError", "torch.AcceleratorError"]) if ctx.set == "dev" else "RuntimeError"
        root = tb(user_frames(ctx) + libs, [f"{cls}: CUDA error: {m}"] + CUDA_HINT)
        L, code = compose(ctx, root)
        prov = "c10/cuda/CUDAException.h C10_CUDA_CHECK (cudaGetErrorString texts); torch>=2.8 raises torch.AcceleratorError"
    elif v == 5:  # index out of bounds device-side assert (IndexKernel) in embedding
        pre = [f"../aten/src/ATen/native/cuda/Indexing.cu:{ch(ctx, [1236, 1289, 1422])}: indexSelectLargeIndex: block: [{ri(ctx, 0, 300)},0,0], thread: [{t},0,0] Assertion `srcIndex < srcSelectDimSize` failed." for t in sorted(r.sample(range(0, 128), r.randint(3, 30)))]
        root = pre + tb(user_frames(ctx) + libs + [(ctx.s("torch/nn/modules/sparse.py"), ch(ctx, [162, 163, 190]), "forward", "return F.embedding("),
                                                   (ctx.s("torch/nn/functional.py"), ch(ctx, [2233, 2264, 2551]), "embedding", "return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)")],
                        ["RuntimeError: CUDA error: device-side assert triggered"] + CUDA_HINT)
        L, code = compose(ctx, root, launcher=ch(ctx, ["torchrun", "python"]))
        prov = "aten/src/ATen/native/cuda/Indexing.cu indexSelectLargeIndex assertion + 'device-side assert triggered' (HF transformers issue threads)"
    else:  # JAX illegal address
        root = [f"E{time.strftime('%m%d %H:%M:%S', time.localtime(ctx.tick()))}.{ri(ctx, 0, 999999):06d} {ri(ctx, 1000, 99999)} pjrt_stream_executor_client.cc:{ch(ctx, [2809, 3067])}] Execution of replica 0 failed: INTERNAL: Failed to execute XLA Runtime executable: run time error: custom call 'xla.gpu.func.launch' failed: Failed to launch CUDA kernel: fusion_{ri(ctx, 1, 400)} with block dimensions: {ch(ctx, [128, 256, 1024])}x1x1 and grid dimensions: {ri(ctx, 1, 9000)}x1x1 and shared memory size: 0: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered."]
        root += tb([(ctx.f(ctx.script), ri(ctx, 100, 400), "<module>", "main()"), (ctx.f(ctx.script), ri(ctx, 100, 400), "train_loop", "loss = float(metrics['loss'])")],
                   ["jaxlib.xla_extension.XlaRuntimeError: INTERNAL: Failed to execute XLA Runtime executable: run time error: custom call 'xla.gpu.func.launch' failed: Failed to launch CUDA kernel: CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered."])
        L, code = compose(ctx, root, style="jax", launcher=ch(ctx, ["python", "slurm"]))
        prov = "XLA stream_executor gpu 'CUDA_ERROR_ILLEGAL_ADDRESS: an illegal memory access was encountered' (google/jax issue threads)"
    return dict(lines=L, code=code, prov=prov)


def m_ram_oom(ctx):
    r = ctx.rng
    v = variant(ctx, 5)
    if v == 0:
        nb = ri(ctx, 10**9, 10**12)
        root = tb(user_frames(ctx) + [(ctx.s("torch/serialization.py"), ch(ctx, [1014, 1025, 1360]), "load", "return _load(opened_zipfile,"),
                                      (ctx.s("torch/_utils.py"), ch(ctx, [82, 93]), "_rebuild_tensor", "t = torch.empty((0,), dtype=storage.dtype, device=storage._untyped_storage.device)")],
                  [f"RuntimeError: [enforce fail at alloc_cpu.cpp:{ch(ctx, [114, 117, 127])}] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate {nb} bytes. Error code 12 (Cannot allocate memory)"])
        L, code = compose(ctx, root, launcher=ch(ctx, ["python", "slurm", "torchrun"]), n_train=ri(ctx, 0, 20))
        prov = "c10/core/impl/alloc_cpu.cpp DefaultCPUAllocator message (pytorch/pytorch issue threads)"
    elif v == 1:
        shape = (ri(ctx, 10**5, 10**7), ch(ctx, [768, 1024, 4096]))
        gb = shape[0] * shape[1] * 4 / 2**30
        root = tb(user_frames(ctx) + [(ctx.s("numpy/core/numeric.py" if r.random() < .5 else "numpy/_core/numeric.py"), ri(ctx, 190, 330), "zeros_like" if r.random() < .5 else "concatenate", None)],
                  [f"numpy.core._exceptions._ArrayMemoryError: Unable to allocate {gb:.1f} GiB for an array with shape {shape} and data type float32"])
        L, code = compose(ctx, root, launcher=ch(ctx, ["python", "slurm"]), n_train=ri(ctx, 0, 30))
        prov = "numpy/core/_exceptions.py _ArrayMemoryError 'Unable to allocate X GiB for an array with shape' (numpy issue threads)"
    elif v == 2:
        root = tb(user_frames(ctx) + [(ctx.s("torch/utils/data/dataloader.py"), ch(ctx, [439, 484, 1040]), "__iter__", "return self._get_iterator()"),
                                      ("/usr/lib/python3.10/multiprocessing/popen_fork.py", 66, "_launch", "self.pid = os.fork()")],
                  ["OSError: [Errno 12] Cannot allocate memory"])
        L, code = compose(ctx, root, launcher=ch(ctx, ["python", "slurm"]))
        prov = "CPython os.fork ENOMEM 'OSError: [Errno 12] Cannot allocate memory' when DataLoader spawns workers (pytorch forum / issue threads)"
    elif v == 3:
        root = tb(user_frames(ctx) + [(ctx.f("data/dataset.py"), ri(ctx, 20, 200), "__init__", "self.samples = [json.loads(l) for l in f]"),
                                      (ctx.f("data/dataset.py"), ri(ctx, 20, 200), "<listcomp>", "self.samples = [json.loads(l) for l in f]")],
                  ["MemoryError"])
        L, code = compose(ctx, root, n_train=0, launcher=ch(ctx, ["python", "slurm"]))
        prov = "CPython builtin MemoryError (bare) when materialising a dataset in RAM"
    else:  # TF host OOM
        root = [f"{ctx.ts('%Y-%m-%d %H:%M:%S')}.{ri(ctx, 100000, 999999)}: W tensorflow/core/framework/cpu_allocator_impl.cc:83] Allocation of {ri(ctx, 10**9, 10**11)} exceeds 10% of free system memory."]
        root += tb(user_frames(ctx), ["MemoryError: Unable to allocate output buffer."])
        L, code = compose(ctx, root, style="keras")
        prov = "tensorflow/core/framework/cpu_allocator_impl.cc 'Allocation of N exceeds 10% of free system memory.' + MemoryError"
    return dict(lines=L, code=code, prov=prov)


def m_segfault(ctx):
    r = ctx.rng
    v = variant(ctx, 5)
    if v == 0:  # faulthandler dump then bash "Segmentation fault"
        root = ["Fatal Python error: Segmentation fault", "", f"Thread 0x{r.randint(10**13, 10**14):x} (most recent call first):",
                f'  File "{ctx.s("torch/utils/data/_utils/worker.py")}", line {ch(ctx, [308, 309])} in _worker_loop', "",
                "Current thread 0x" + f"{r.randint(10**13, 10**14):x}" + " (most recent call first):",
                f'  File "{ctx.s("torch/nn/modules/conv.py")}", line 456 in _conv_forward',
                f'  File "{ctx.s("torch/nn/modules/module.py")}", line 1520 in _call_impl',
                f'  File "{ctx.f(ctx.script)}", line {ri(ctx, 50, 500)} in train_one_epoch', f'  File "{ctx.f(ctx.script)}", line {ri(ctx, 50, 500)} in main',
                f'  File "{ctx.f(ctx.script)}", line {ri(ctx, 50, 500)} in <module>', "",
                "Extension modules: numpy.core._multiarray_umath, numpy.core._multiarray_tests, numpy.linalg._umath_linalg, torch._C, torch._C._fft, torch._C._linalg, torch._C._nested, torch._C._nn, torch._C._sparse, torch._C._special (total: " + str(ri(ctx, 20, 90)) + ")"]
        L, code = compose(ctx, root, death=("sig", 11), launcher=ch(ctx, ["slurm", "python"]))
        prov = "CPython faulthandler 'Fatal Python error: Segmentation fault' dump format; bash job-control 'Segmentation fault (core dumped)'"
    elif v == 1:  # torchrun SIGSEGV, no python trace
        root = [f"[rank{r.randrange(min(ctx.world, 8))}]:" + ch(ctx, ["", " "])] if False else []
        L, code = compose(ctx, root, death=("sig", 11), launcher="torchrun")
        prov = "torch/distributed/elastic ChildFailedError 'Signal 11 (SIGSEGV) received by PID' block"
    elif v == 2:  # DataLoader worker segfault
        root = ["ERROR: Unexpected segmentation fault encountered in worker."]
        root += tb(user_frames(ctx) + [(ctx.s("torch/utils/data/dataloader.py"), ch(ctx, [1133, 1243, 1275]), "_try_get_data", "data = self._data_queue.get(timeout=timeout)"),
                                       ("/usr/lib/python3.10/multiprocessing/queues.py", 113, "get", "if not self._poll(timeout):"),
                                       (ctx.s("torch/utils/data/_utils/signal_handling.py"), 66, "handler", "_error_if_any_worker_fails()")],
                   [f"RuntimeError: DataLoader worker (pid {ri(ctx, 2000, 400000)}) is killed by signal: Segmentation fault. "])
        L, code = compose(ctx, root, launcher=ch(ctx, ["python", "slurm"]))
        prov = "torch/utils/data/_utils/signal_handling.py + torch/csrc/DataLoader.cpp 'Unexpected segmentation fault encountered in worker' / 'is killed by signal: Segmentation fault.'"
    elif v == 3:  # absl/glog style SIGSEGV (JAX/TF)
        root = [f"*** SIGSEGV (@0x{r.randint(0, 4096):x}), see go/stacktraces#s15 received by PID {ctx.pid} (TID {ctx.pid + ri(ctx, 1, 400)}) on cpu {ri(ctx, 0, 95)}; stack trace: ***",
                f"PC: @     0x{r.randint(10**13, 10**14):x}  (unknown)  xla::gpu::GpuExecutable::ExecuteAsyncOnStreamImpl()"]
        root += [f"    @     0x{r.randint(10**13, 10**14):x}  {ri(ctx, 100, 9000):>5d}  (unknown)" for _ in range(r.randint(5, 15))]
        root += ["https://symbolize.stripped_domain/r/?trace=" + ",".join(f"{r.randint(10**13, 10**14):x}" for _ in range(5)) + "&map=", "E" + time.strftime('%m%d %H:%M:%S', time.localtime(ctx.tick())) + f".{ri(ctx, 0, 999999):06d} {ctx.pid} coredump_hook.cc:447] RAW: Remote crash data gathering hook invoked.",
                 "E" + time.strftime('%m%d %H:%M:%S', time.localtime(ctx.tick())) + f".{ri(ctx, 0, 999999):06d} {ctx.pid} coredump_hook.cc:486] RAW: Skipping coredump since rlimit was 0 at process start.",
                 "Fatal Python error: Segmentation fault", ""]
        L, code = compose(ctx, root, death=("sig", 11), style="jax", launcher=ch(ctx, ["python", "slurm"]))
        prov = "absl failure_signal_handler '*** SIGSEGV ... received by PID ... stack trace: ***' as printed by jaxlib (google/jax issue threads)"
    else:  # srun: task segfault
        root = [f"srun: error: {ctx.host}: task {ri(ctx, 0, 7)}: Segmentation fault (core dumped)"]
        L, code = compose(ctx, root, death=("exit", 139), launcher="slurm", pre_kind="slurm")
        prov = "Slurm srun 'task N: Segmentation fault (core dumped)' wording; bash 128+11"
    return dict(lines=L, code=code, prov=prov)


def m_file_not_found(ctx):
    r = ctx.rng
    v = variant(ctx, 6)
    p = ch(ctx, [f"{ctx.root}/data/train.jsonl", f"/datasets/{ctx.project}/shard-{ri(ctx, 0, 999):05d}.parquet", f"{ctx.root}/checkpoints/step_{ri(ctx, 1, 90) * 1000}/model.pt", f"/mnt/data/imagenet/train/n0{ri(ctx, 1000000, 9999999)}/n0{ri(ctx, 1000000, 9999999)}_{ri(ctx, 1, 9999)}.JPEG", f"{ctx.root}/configs/{ctx.project}.yaml", f"{ctx.root}/tokenizer/tokenizer.model"])
    if v == 0:
        root = tb(user_frames(ctx) + [(ctx.s("torch/serialization.py"), ch(ctx, [986, 997, 1319]), "load", "with _open_file_like(f, 'rb') as opened_file:"),
                                      (ctx.s("torch/serialization.py"), ch(ctx, [435, 659]), "_open_file_like", "return _open_file(name_or_buffer, mode)"),
                                      (ctx.s("torch/serialization.py"), ch(ctx, [416, 640]), "__init__", "super().__init__(open(name, mode))")],
                  [f"FileNotFoundError: [Errno 2] No such file or directory: '{p}'"])
        L, code = compose(ctx, root, n_train=ri(ctx, 0, 40))
        prov = "CPython FileNotFoundError [Errno 2] via torch/serialization.py _open_file"
    elif v == 1:  # DataLoader worker re-raise
        inner = tb([(ctx.s("torch/utils/data/_utils/worker.py"), ch(ctx, [308, 309, 351]), "_worker_loop", "data = fetcher.fetch(index)  # type: ignore[possibly-undefined]"),
                    (ctx.s("torch/utils/data/_utils/fetch.py"), ch(ctx, [51, 52]), "fetch", "data = [self.dataset[idx] for idx in possibly_batched_index]"),
                    (ctx.f("data/dataset.py"), ri(ctx, 20, 200), "__getitem__", "img = Image.open(path).convert('RGB')"),
                    (ctx.s("PIL/Image.py"), ch(ctx, [3243, 3431, 3469]), "open", "fp = builtins.open(filename, \"rb\")")],
                   [f"FileNotFoundError: [Errno 2] No such file or directory: '{p}'"], header="Original Traceback (most recent call last):")
        root = tb(user_frames(ctx) + [(ctx.s("torch/utils/data/dataloader.py"), ch(ctx, [631, 701]), "__next__", "data = self._next_data()"),
                                      (ctx.s("torch/utils/data/dataloader.py"), ch(ctx, [1346, 1465]), "_next_data", "return self._process_data(data)"),
                                      (ctx.s("torch/utils/data/dataloader.py"), ch(ctx, [1372, 1491]), "_process_data", "data.reraise()"),
                                      (ctx.s("torch/_utils.py"), ch(ctx, [694, 705, 722]), "reraise", "raise exception")],
                  ["FileNotFoundError: Caught FileNotFoundError in DataLoader worker process " + str(ri(ctx, 0, 7)) + "."] + inner)
        L, code = compose(ctx, root)
        prov = "torch/_utils.py ExceptionWrapper.reraise 'Caught X in DataLoader worker process N. Original Traceback' format"
    elif v == 2:  # python can't open file
        L, code = compose(ctx, [f"{ctx.pybin}: can't open file '{ctx.f(ctx.script)}': [Errno 2] No such file or directory"], death=("exc", 2), launcher=ch(ctx, ["python", "slurm"]), n_train=0)
        prov = "CPython main.c \"can't open file '...': [Errno 2] No such file or directory\" (exit status 2)"
    elif v == 3:  # HF datasets
        root = tb(user_frames(ctx) + [(ctx.s("datasets/load.py"), ch(ctx, [2129, 2556, 2594]), "load_dataset", "builder_instance = load_dataset_builder("),
                                      (ctx.s("datasets/data_files.py"), ch(ctx, [407, 411]), "resolve_pattern", "raise FileNotFoundError(error_msg)")],
                  [f"FileNotFoundError: Unable to find '{p}'"])
        L, code = compose(ctx, root, n_train=0)
        prov = "huggingface/datasets data_files.py resolve_pattern \"Unable to find '...'\""
    elif v == 4:  # TF NotFoundError
        root = tb(user_frames(ctx), [f"tensorflow.python.framework.errors_impl.NotFoundError: {p}; No such file or directory [Op:IteratorGetNext]"])
        L, code = compose(ctx, root, style="keras")
        prov = "tensorflow errors_impl.NotFoundError '...; No such file or directory'"
    else:  # Lightning ckpt resume
        root = tb(user_frames(ctx) + [(ctx.s("lightning/pytorch/trainer/trainer.py"), ch(ctx, [538, 543]), "fit", "call._call_and_handle_interrupt("),
                                      (ctx.s("lightning/pytorch/trainer/call.py"), ch(ctx, [44, 47]), "_call_and_handle_interrupt", "return trainer_fn(*args, **kwargs)"),
                                      (ctx.s("lightning/fabric/utilities/cloud_io.py"), ch(ctx, [55, 57]), "_load", "with fs.open(path_or_url, \"rb\") as f:"),
                                      (ctx.s("fsspec/implementations/local.py"), ch(ctx, [191, 367]), "_open", "self.f = open(self.path, mode=self.mode)")],
                  [f"FileNotFoundError: [Errno 2] No such file or directory: '{ctx.root}/lightning_logs/version_{ri(ctx, 0, 40)}/checkpoints/last.ckpt'"])
        L, code = compose(ctx, root, style="lightning", n_train=0)
        prov = "Lightning fabric cloud_io._load via fsspec LocalFileOpener -> FileNotFoundError [Errno 2]"
    return dict(lines=L, code=code, prov=prov)

def m_permission(ctx):
    r = ctx.rng
    v = variant(ctx, 5)
    if v == 0:
        p = ch(ctx, [f"/shared/checkpoints/{ctx.project}/step_{ri(ctx, 1, 90) * 1000}.pt", f"/models/{ctx.project}/final", f"{ctx.root}/outputs/run_{ri(ctx, 1, 40)}/trainer_state.json"])
        root = tb(user_frames(ctx) + [(ctx.s("torch/serialization.py"), ch(ctx, [627, 849, 943]), "save", "with _open_zipfile_writer(f) as opened_zipfile:"),
                                      (ctx.s("torch/serialization.py"), ch(ctx, [501, 684]), "_open_zipfile_writer", "return container(name_or_buffer)"),
                                      (ctx.s("torch/serialization.py"), ch(ctx, [472, 655]), "__init__", "super().__init__(torch._C.PyTorchFileWriter(self.name))")],
                  [f"RuntimeError: Parent directory {p.rsplit('/', 1)[0]} does not exist."] if False else [f"PermissionError: [Errno 13] Permission denied: '{p}'"])
        L, code = compose(ctx, root)
        prov = "CPython PermissionError [Errno 13] (EACCES) raised from torch.save file open"
    elif v == 1:
        p = f"/shared/hf_cache/hub/models--{ctx.model.replace('/', '--')}/.no_exist"
        root = tb(user_frames(ctx) + [(ctx.s("huggingface_hub/file_download.py"), ch(ctx, [1221, 1374, 1639]), "hf_hub_download", "os.makedirs(os.path.dirname(blob_path), exist_ok=True)"),
                                      ("/usr/lib/python3.10/os.py", 225, "makedirs", "mkdir(name, mode)")],
                  [f"PermissionError: [Errno 13] Permission denied: '{p}'"])
        L, code = compose(ctx, root, n_train=0)
        prov = "huggingface_hub file_download makedirs on a shared read-only cache -> PermissionError [Errno 13]"
    elif v == 2:
        root = tb(user_frames(ctx) + [(ctx.s("filelock/_unix.py"), 39, "_acquire", "fd = os.open(self.lock_file, open_flags, self._context.mode)")],
                  [f"PermissionError: [Errno 13] Permission denied: '/shared/hf_cache/datasets/_shared_hf_cache_datasets_{ctx.project}.lock'"])
        L, code = compose(ctx, root, n_train=0, launcher=ch(ctx, ["torchrun", "python", "slurm"]))
        prov = "py-filelock _unix.py os.open EACCES on a shared datasets cache lock"
    elif v == 3:
        root = tb(user_frames(ctx) + [(ctx.s("tensorboard/summary/writer/event_file_writer.py"), ch(ctx, [72, 77]), "__init__", "tf.io.gfile.makedirs(logdir)"),
                                      ("/usr/lib/python3.10/os.py", 225, "makedirs", "mkdir(name, mode)")],
                  [f"PermissionError: [Errno 13] Permission denied: '/runs/{ctx.project}'"])
        L, code = compose(ctx, root, n_train=0, style="lightning")
        prov = "tensorboard EventFileWriter makedirs -> PermissionError [Errno 13]"
    else:
        root = tb(user_frames(ctx), [f"OSError: [Errno 13] Permission denied: '/dev/shm/{ctx.project}_{ri(ctx, 100, 999)}'"] if r.random() < .5 else
                  [f"PermissionError: [Errno 13] Permission denied: '{ctx.root}/logs/train.log'"])
        L, code = compose(ctx, root, n_train=0)
        prov = "CPython EACCES OSError/PermissionError [Errno 13] Permission denied"
    return dict(lines=L, code=code, prov=prov)


def m_missing_module(ctx):
    r = ctx.rng
    v = variant(ctx, 6)
    if v == 0:
        mod = ch(ctx, ["flash_attn", "deepspeed", "apex", "bitsandbytes", "wandb", "einops", "timm", "sentencepiece", "xformers", "peft", "triton"])
        root = tb(user_frames(ctx, 2), [f"ModuleNotFoundError: No module named '{mod}'"])
        L, code = compose(ctx, root, n_train=0)
        prov = "CPython import system ModuleNotFoundError \"No module named 'X'\""
    elif v == 1:
        root = tb(user_frames(ctx, 2) + [(ctx.s("transformers/dynamic_module_utils.py"), ch(ctx, [180, 182]), "check_imports", "raise ImportError(")],
                  [f"ImportError: This modeling file requires the following packages that were not found in your environment: {ch(ctx, ['einops', 'flash_attn', 'tiktoken', 'einops, flash_attn'])}. Run `pip install {ch(ctx, ['einops', 'flash_attn', 'tiktoken'])}`"])
        L, code = compose(ctx, root, n_train=0)
        prov = "transformers/dynamic_module_utils.py check_imports ImportError wording"
    elif v == 2:
        lib = ch(ctx, ["libcudart.so.11.0", "libcudnn.so.8", "libnccl.so.2", "libcublasLt.so.12"])
        root = tb(user_frames(ctx, 2) + [(ctx.s("torch/__init__.py"), ch(ctx, [235, 290, 367]), "<module>", "from torch._C import *  # noqa: F403")],
                  [f"ImportError: {lib}: cannot open shared object file: No such file or directory"])
        L, code = compose(ctx, root, n_train=0)
        prov = "dlopen failure surfaced as ImportError '<lib>.so: cannot open shared object file: No such file or directory' (pytorch/pytorch issue threads)"
    elif v == 3:
        root = tb(user_frames(ctx, 2), [f"ImportError: cannot import name '{ch(ctx, ['LlamaFlashAttention2', 'is_torch_tpu_available', 'PreTrainedModel', 'cached_download', 'container_abcs'])}' from '{ch(ctx, ['transformers.models.llama.modeling_llama', 'transformers', 'huggingface_hub', 'torch._six'])}' ({ctx.s('transformers/__init__.py')})"])
        L, code = compose(ctx, root, n_train=0, launcher=ch(ctx, ["torchrun", "python", "deepspeed"]))
        prov = "CPython 'ImportError: cannot import name X from Y (path)' after library API removals (transformers/huggingface_hub issue threads)"
    elif v == 4:
        root = tb(user_frames(ctx, 2), [f"ModuleNotFoundError: No module named '{ch(ctx, ['jax', 'flax', 'optax', 'tensorflow_datasets', 'keras_nlp'])}'"])
        L, code = compose(ctx, root, n_train=0, style="jax")
        prov = "CPython ModuleNotFoundError"
    else:
        root = tb(user_frames(ctx, 2) + [(ctx.s("lightning/pytorch/loggers/wandb.py"), ch(ctx, [325, 329]), "__init__", "raise ModuleNotFoundError(str(_WANDB_AVAILABLE))")],
                  ["ModuleNotFoundError: Requirement 'wandb>=0.12.10' not met. HINT: Try running `pip install -U 'wandb>=0.12.10'`"])
        L, code = compose(ctx, root, n_train=0, style="lightning")
        prov = "lightning_utilities RequirementCache message 'Requirement ... not met. HINT: Try running `pip install -U ...`' raised as ModuleNotFoundError by Lightning WandbLogger"
    return dict(lines=L, code=code, prov=prov)


def m_div_zero(ctx):
    r = ctx.rng
    v = variant(ctx, 4)
    msgs = ["ZeroDivisionError: division by zero", "ZeroDivisionError: float division by zero", "ZeroDivisionError: integer division or modulo by zero", "ZeroDivisionError: integer modulo by zero"]
    codes = ["avg_loss = total_loss / num_batches", "throughput = tokens_seen / elapsed", "steps_per_epoch = len(train_loader) // args.grad_accum; warmup = args.warmup_steps % steps_per_epoch", "if step % eval_every == 0:"]
    fr = user_frames(ctx)
    fr[-1] = (fr[-1][0], fr[-1][1], ch(ctx, ["evaluate", "log_metrics", "train", "compute_schedule"]), codes[v])
    root = tb(fr, [msgs[v]])
    L, code = compose(ctx, root, n_train=ri(ctx, 0, 200))
    return dict(lines=L, code=code, prov="CPython ZeroDivisionError messages (Objects/floatobject.c, longobject.c)")


def m_device_mismatch(ctx):
    r = ctx.rng
    v = variant(ctx, 6)
    libs = torch_module_frames(ctx, 2)
    if v == 0:
        root = tb(user_frames(ctx) + libs + [(ctx.s("torch/nn/modules/linear.py"), 116, "forward", "return F.linear(input, self.weight, self.bias)")],
                  [f"RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:{ri(ctx, 0, 7)} and cpu! (when checking argument for argument mat1 in method wrapper_CUDA_addmm)"])
        prov = "aten TensorIterator/device check 'Expected all tensors to be on the same device, but found at least two devices' (pytorch/pytorch issue threads)"
    elif v == 1:
        root = tb(user_frames(ctx) + libs, [f"RuntimeError: Expected all tensors to be on the same device, but got index is on cpu, different from other tensors on cuda:{ri(ctx, 0, 3)} (when checking argument in method wrapper_CUDA__index_select)"])
        prov = "newer torch device-check wording 'but got index is on cpu, different from other tensors on cuda:0'"
    elif v == 2:
        root = tb(user_frames(ctx) + libs + [(ctx.s("torch/nn/modules/conv.py"), 456, "_conv_forward", "return F.conv2d(input, weight, bias, self.stride,")],
                  ["RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same" if r.random() < .5 else "RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same or input should be a MKLDNN tensor and weight is a dense tensor"])
        prov = "aten/src/ATen/native/Convolution.cpp check_input_same_type_as_parameters wording"
    elif v == 3:
        root = tb(user_frames(ctx) + [(ctx.s("accelerate/big_modeling.py"), ch(ctx, [450, 499]), "dispatch_model", "model.to(device)"),
                                      (ctx.s("torch/nn/modules/module.py"), ch(ctx, [1152, 1340]), "convert", "return t.to(device, dtype if t.is_floating_point() or t.is_complex() else None, non_blocking)")],
                  ["NotImplementedError: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() when moving module from meta to a different device."])
        prov = "torch/nn/modules/module.py meta-tensor copy error (transformers/accelerate issue threads)"
    elif v == 4:
        root = tb(user_frames(ctx) + libs, ["RuntimeError: Placeholder storage has not been allocated on MPS device!"])
        prov = "aten/src/ATen/native/mps/OperationUtils.mm 'Placeholder storage has not been allocated on MPS device!'"
    else:
        root = tb(user_frames(ctx) + libs, [f"RuntimeError: Expected all tensors to be on the same device, but found at least two devices, xla:{ri(ctx, 0, 7)} and cpu!" if r.random() < .5 else
                                            "RuntimeError: Tensor on device meta is not on the expected device cpu!"])
        prov = "torch device checks with xla/meta devices (pytorch/xla issue threads; torch meta-device check wording)"
    L, code = compose(ctx, root, n_train=ri(ctx, 0, 30))
    return dict(lines=L, code=code, prov=prov)


def m_nan_loss(ctx):
    r = ctx.rng
    v = variant(ctx, 7)
    style = pick_style(ctx)
    if v == 0:  # HF trainer runs to end with nan, exit 0
        good = train_noise(ctx, "hf", ri(ctx, 10, 60))
        bad = train_noise(ctx, "hf", ri(ctx, 10, 80), nan_at=0)
        tail = [f"{{'train_runtime': {r.uniform(500, 90000):.4f}, 'train_samples_per_second': {r.uniform(1, 90):.3f}, 'train_steps_per_second': {r.uniform(0.05, 3):.3f}, 'train_loss': nan, 'epoch': {r.choice([1.0, 3.0, 2.0])}}}",
                f"***** train metrics *****", "  epoch                    =        3.0", "  train_loss               =        nan", f"  train_runtime            = {fmt_t(r.uniform(600, 90000))}.{ri(ctx, 10, 99)}",
                f"Saving model checkpoint to {ctx.root}/outputs/final"] + wandb_teardown(ctx, failed=False, nan=True)
        L = env_preamble(ctx) + config_dump(ctx) + good + bad + tail
        code = 0
        prov = "HF transformers Trainer log dict format {'loss': nan, 'grad_norm': nan, ...}; run exits 0 after diverging"
    elif v == 1:  # anomaly detection
        root = tb(user_frames(ctx) + [(ctx.s("torch/_tensor.py"), ch(ctx, [522, 581]), "backward", "torch.autograd.backward("),
                                      (ctx.s("torch/autograd/__init__.py"), ch(ctx, [266, 347]), "backward", "_engine_run_backward(")],
                  [f"RuntimeError: Function '{ch(ctx, ['LogSoftmaxBackward0', 'SqrtBackward0', 'DivBackward0', 'PowBackward0', 'NativeLayerNormBackward0'])}' returned nan values in its {ch(ctx, ['0th', '1th'])} output."])
        pre = [f"{ctx.s('torch/autograd/graph.py')}:{ch(ctx, [744, 768, 825])}: UserWarning: Error detected in {ch(ctx, ['LogSoftmaxBackward0', 'SqrtBackward0', 'DivBackward0'])}. Traceback of forward call that caused the error:"]
        pre += [f'  File "{ctx.f(ctx.script)}", line {ri(ctx, 50, 500)}, in <module>', "    main()", f'  File "{ctx.f("models/model.py")}", line {ri(ctx, 50, 500)}, in forward', "    x = x / x.norm(dim=-1, keepdim=True)",
                " (Triggered internally at ../torch/csrc/autograd/python_anomaly_mode.cpp:111.)", "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass"]
        L, code = compose(ctx, pre + root)
        prov = "torch/csrc/autograd/engine.cpp anomaly mode \"Function 'XBackward0' returned nan values in its 0th output.\""
    elif v == 2:  # fairseq min loss scale
        root = tb(user_frames(ctx) + [(ctx.s("fairseq/optim/fp16_optimizer.py"), ch(ctx, [441, 447]), "clip_grad_norm", "self.scaler.check_overflow(grad_norm)"),
                                      (ctx.s("fairseq/optim/dynamic_loss_scaler.py"), ch(ctx, [61, 62]), "check_overflow", "raise FloatingPointError(")],
                  [f"FloatingPointError: Minimum loss scale reached ({ch(ctx, ['0.0001', '1e-05'])}). Your loss is probably exploding. Try lowering the learning rate, using gradient clipping or increasing the batch size."])
        over = [f"{ctx.ts('%Y-%m-%d %H:%M:%S')} | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: {2.0 ** -i:.6g}" for i in range(3, 12)]
        L, code = compose(ctx, over + root, style="plain", n_train=ri(ctx, 14, 200))
        prov = "fairseq/optim/dynamic_loss_scaler.py FloatingPointError 'Minimum loss scale reached' + fairseq.trainer 'gradient overflow detected' lines"
    elif v == 3:  # Keras TerminateOnNaN exit 0
        L = env_preamble(ctx) + train_noise(ctx, "keras", ri(ctx, 3, 20))
        b = ri(ctx, 10, 900)
        L += [f"{b}/1563 [====>.........................] - ETA: 4:12 - loss: nan - accuracy: 0.1000", f"Batch {b}: Invalid loss, terminating training",
              f"{b}/1563 [====>.........................] - {ri(ctx, 20, 300)}s {ri(ctx, 40, 300)}ms/step - loss: nan - accuracy: 0.1000", f"Saved model to {ctx.root}/saved_model"]
        code = 0
        prov = "keras/callbacks.py TerminateOnNaN 'Batch N: Invalid loss, terminating training' (exit 0)"
    elif v == 4:  # JAX debug nans
        root = tb([(ctx.f(ctx.script), ri(ctx, 100, 400), "<module>", "main()"), (ctx.f(ctx.script), ri(ctx, 100, 400), "main", "state, metrics = train_step(state, batch)")],
                  ["FloatingPointError: invalid value (nan) encountered in jit(train_step). Because jax_config.debug_nans.value and/or config.jax_debug_infs is set, the de-optimized function (i.e., the function as if the `jit` decorator were removed) was called in an attempt to get a more precise error message. However, the de-optimized function did not produce invalid values during its execution. This behavior can result from `jit` optimizations causing the invalid value to be produced. It may also arise from having nan/inf constants as outputs, like `jax.jit(lambda ...: jax.numpy.nan)(...)`. "])
        L, code = compose(ctx, root, style="jax")
        prov = "jax/_src/interpreters/pxla.py / dispatch.py debug_nans FloatingPointError wording"
    elif v == 5:  # Megatron nan grad norm assertion
        rk = ri(ctx, 0, 63)
        root = tb(user_frames(ctx) + [(ctx.s("megatron/core/distributed/param_and_grad_buffer.py"), ch(ctx, [116, 123]), "check_for_nan_in_grad", "assert not norm_is_nan, (")],
                  [f"AssertionError: Rank {rk}: found NaN in local grad norm in backward pass before data-parallel communication collective. Device: {rk % 8}, node: {ctx.host}"])
        L, code = compose(ctx, root, style="megatron", launcher="torchrun")
        prov = "Megatron-LM megatron/core/distributed/param_and_grad_buffer.py check_for_nan_in_grad assertion"
    else:  # custom loop: loss nan detected, exit 0 / custom raise
        n = ri(ctx, 30, 200)
        L = env_preamble(ctx) + train_noise(ctx, ch(ctx, ["nanogpt", "plain", "lightning"]), n, nan_at=ri(ctx, n // 2, n - 3))
        if r.random() < 0.5:
            L += [f"{ctx.ts_ms()} - ERROR - train - Loss is NaN at step {ri(ctx, 1000, 90000)}; aborting run", f"{ctx.ts_ms()} - INFO - train - saved emergency checkpoint to {ctx.root}/ckpt/nan_dump.pt"]
            code = 1 if r.random() < 0.5 else 0
        else:
            L += [f"Monitored metric val_loss = nan is not finite. Previous best value was {r.uniform(0.3, 3):.3f}. Signaling Trainer to stop.", "`Trainer.fit` stopped: `max_epochs` was not reached, early stopping triggered."] if r.random() < .5 else []
            code = 0
        prov = "Lightning EarlyStopping check_finite 'Monitored metric val_loss = nan is not finite. ... Signaling Trainer to stop.' / loss-curve going to nan"
    return dict(lines=L, code=code, prov=prov)


def m_oom_killer(ctx):
    r = ctx.rng
    v = variant(ctx, 5)
    rss = ri(ctx, 30, 900) * 1024 * 1024
    if v == 0:
        after = [bash_sig_line(ctx, 9), f"slurmstepd: error: Detected {ri(ctx, 1, 3)} oom_kill event{'s' if r.random() < .3 else ''} in StepId={ctx.jobid}.batch. Some of the step tasks have been OOM Killed."]
        L, code = compose(ctx, [], death=("exit", 137), launcher="slurm", pre_kind="slurm", after=after)
        prov = "Slurm slurmstepd 'Detected N oom_kill event in StepId=... Some of the step tasks have been OOM Killed.' (https://github.com/nextflow-io/nextflow/issues/5932)"
    elif v == 1:
        after = [f"slurmstepd: error: Detected 1 oom_kill event in StepId={ctx.jobid}.0. Some of the step tasks have been OOM Killed.", f"srun: error: {ctx.host}: task 0: Out Of Memory", "srun: Terminating StepId=" + str(ctx.jobid) + ".0"]
        L, code = compose(ctx, [], death=("exit", 0 if False else 137), launcher="slurm", pre_kind="slurm", after=after)
        prov = "Slurm srun 'task N: Out Of Memory' + oom_kill event (https://github.com/nextflow-io/nextflow/issues/5932)"
    elif v == 2:  # torchrun SIGKILL + kernel log appended by wrapper
        pid = ctx.pid + 1
        after = [f"[{ri(ctx, 100000, 9999999)}.{ri(ctx, 100000, 999999)}] Out of memory: Killed process {pid} (python) total-vm:{rss * 3}kB, anon-rss:{rss}kB, file-rss:{ri(ctx, 1000, 900000)}kB, shmem-rss:{ri(ctx, 0, 90000)}kB, UID:{ri(ctx, 1000, 60000)} pgtables:{ri(ctx, 10000, 900000)}kB oom_score_adj:0"]
        L, code = compose(ctx, after, death=("sig", 9), launcher="torchrun", root_rank=1, rank_style="none")
        prov = "Linux mm/oom_kill.c 'Out of memory: Killed process ... total-vm ... anon-rss' + torch elastic Signal 9 (SIGKILL) block"
    elif v == 3:  # k8s
        L = env_preamble(ctx, "k8s") + train_noise(ctx, pick_style(ctx), ri(ctx, 20, 300))
        L += [f"{ctx.iso()}Z ERROR controller: container {ctx.project}-trainer terminated: Reason: OOMKilled, ExitCode: 137",
              f"{ctx.iso()}Z INFO  controller: pod {ctx.project}-worker-0 status=Failed restarts={ri(ctx, 0, 3)}"]
        code = 137
        prov = "Kubernetes container status 'Reason: OOMKilled' / exit code 137 (kubernetes docs: assign-memory-resource)"
    else:  # memory cgroup + DataLoader workers killed
        wp = ri(ctx, 2000, 400000)
        root = ["ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)." if False else f"[{ri(ctx, 100000, 9999999)}.{ri(ctx, 100000, 999999)}] Memory cgroup out of memory: Killed process {wp} (pt_data_worker) total-vm:{rss * 2}kB, anon-rss:{rss}kB, file-rss:{ri(ctx, 1000, 90000)}kB, shmem-rss:0kB, UID:{ri(ctx, 1000, 60000)} pgtables:{ri(ctx, 1000, 90000)}kB oom_score_adj:0"]
        root += tb(user_frames(ctx) + [(ctx.s("torch/utils/data/dataloader.py"), ch(ctx, [1133, 1243, 1275]), "_try_get_data", "data = self._data_queue.get(timeout=timeout)"),
                                       (ctx.s("torch/utils/data/_utils/signal_handling.py"), 66, "handler", "_error_if_any_worker_fails()")],
                   [f"RuntimeError: DataLoader worker (pid {wp}) is killed by signal: Killed. "])
        L, code = compose(ctx, root, launcher=ch(ctx, ["python", "slurm"]))
        prov = "Linux memcg 'Memory cgroup out of memory: Killed process' + torch DataLoader 'is killed by signal: Killed.'"
    return dict(lines=L, code=code, prov=prov)

def m_traceback(ctx):
    r = ctx.rng
    v = variant(ctx, 8)
    launcher = None
    if v == 0:  # DataLoader KeyError re-raise
        key = ch(ctx, ["'input_ids'", "'label'", "'image'", "'caption'", "'text'", "1042"])
        inner = tb([(ctx.s("torch/utils/data/_utils/worker.py"), ch(ctx, [308, 309, 351]), "_worker_loop", "data = fetcher.fetch(index)  # type: ignore[possibly-undefined]"),
                    (ctx.s("torch/utils/data/_utils/fetch.py"), ch(ctx, [51, 52]), "fetch", "data = [self.dataset[idx] for idx in possibly_batched_index]"),
                    (ctx.f("data/dataset.py"), ri(ctx, 20, 200), "__getitem__", f"x = sample[{key}]")], [f"KeyError: {key}"], header="Original Traceback (most recent call last):")
        root = tb(user_frames(ctx) + [(ctx.s("torch/utils/data/dataloader.py"), ch(ctx, [631, 701]), "__next__", "data = self._next_data()"),
                                      (ctx.s("torch/utils/data/dataloader.py"), ch(ctx, [1346, 1465]), "_next_data", "return self._process_data(data)"),
                                      (ctx.s("torch/utils/data/dataloader.py"), ch(ctx, [1372, 1491]), "_process_data", "data.reraise()"),
                                      (ctx.s("torch/_utils.py"), ch(ctx, [694, 705, 722]), "reraise", "raise exception")],
                  [f"KeyError: Caught KeyError in DataLoader worker process {ri(ctx, 0, 7)}."] + inner)
        prov = "torch/_utils.py ExceptionWrapper.reraise 'Caught KeyError in DataLoader worker process N.' format"
    elif v == 1:
        root = tb(user_frames(ctx) + [(ctx.s("transformers/tokenization_utils_base.py"), ch(ctx, [2868, 3010, 3215]), "_get_padding_truncation_strategies", "raise ValueError(")],
                  ["ValueError: Asking to pad but the tokenizer does not have a padding token. Please select a token to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new pad token via `tokenizer.add_special_tokens({'pad_token': '[PAD]'})`."])
        prov = "transformers tokenization_utils_base.py pad-token ValueError wording"
    elif v == 2:
        root = tb(user_frames(ctx) + torch_module_frames(ctx, 2), [f"TypeError: {ch(ctx, ['forward', 'GPT.forward', 'LlamaForCausalLM.forward'])}() got an unexpected keyword argument '{ch(ctx, ['labels', 'token_type_ids', 'num_items_in_batch', 'return_dict'])}'"])
        prov = "CPython TypeError 'got an unexpected keyword argument' (HF transformers issue threads)"
    elif v == 3:  # chained exceptions
        inner = tb([(ctx.f("utils/config.py"), ri(ctx, 10, 90), "load_config", "return json.load(f)"),
                    ("/usr/lib/python3.10/json/__init__.py", 293, "load", "return loads(fp.read(),"),
                    ("/usr/lib/python3.10/json/decoder.py", 355, "raw_decode", "raise JSONDecodeError(\"Expecting value\", s, err.value) from None")],
                   [f"json.decoder.JSONDecodeError: Expecting value: line {ri(ctx, 1, 90)} column {ri(ctx, 1, 40)} (char {ri(ctx, 0, 4000)})"])
        outer = tb(user_frames(ctx, 2) + [(ctx.f("utils/config.py"), ri(ctx, 10, 90), "load_config", "raise ValueError(f\"could not parse config {path}\") from e")],
                   [f"ValueError: could not parse config {ctx.root}/configs/{ctx.project}.json"])
        root = inner + ["", "The above exception was the direct cause of the following exception:", ""] + outer
        prov = "CPython chained-exception format ('The above exception was the direct cause of the following exception:') with json.decoder.JSONDecodeError"
    elif v == 4:
        root = tb(user_frames(ctx) + [(ctx.s("omegaconf/dictconfig.py"), ch(ctx, [355, 359]), "_get_impl", "node = self._get_child(key=key, throw_on_missing_key=throw_on_missing_key)"),
                                      (ctx.s("omegaconf/base.py"), ch(ctx, [231, 237]), "_format_and_raise", "format_and_raise(")],
                  [f"omegaconf.errors.ConfigAttributeError: Key '{ch(ctx, ['lr', 'warmup_steps', 'grad_clip', 'num_workers'])}' is not in struct", f"    full_key: {ch(ctx, ['optim', 'trainer', 'data'])}.{ch(ctx, ['lr', 'warmup_steps'])}", "    object_type=dict"]
                  + ["", "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."])
        prov = "omegaconf ConfigAttributeError 'Key ... is not in struct' + Hydra HYDRA_FULL_ERROR hint"
    elif v == 5:  # torchrun, rank 3 raises IndexError, others NCCL-timeout
        k = ri(ctx, 1, min(ctx.world, 8) - 1) if ctx.world > 1 else 0
        root = tb(user_frames(ctx) + [(ctx.f("data/sampler.py"), ri(ctx, 10, 200), "__iter__", "yield self.buckets[b][i]")], ["IndexError: list index out of range"])
        seq = ri(ctx, 100, 90000)
        cons = [(j, watchdog_lines(ctx, j, seq, "ALLREDUCE", 600000)) for j in range(min(ctx.world, 8)) if j != k and r.random() < .7]
        L, code = compose(ctx, root, launcher="torchrun", root_rank=k, consequences=cons, rank_style="rankN")
        return dict(lines=L, code=code, prov="CPython IndexError on one rank; other ranks ProcessGroupNCCL watchdog timeouts; torchrun ChildFailedError block")
    elif v == 6:
        root = tb(user_frames(ctx) + [(ctx.s("lightning/pytorch/trainer/connectors/data_connector.py"), ch(ctx, [428, 433]), "_check_dataloader_iterable", "raise TypeError(")],
                  ["TypeError: An invalid dataloader was passed to `Trainer.fit(train_dataloaders=...)`. Found <bound method DataModule.train_dataloader of <__main__.DataModule object at 0x7f3a1c2b9e50>>."])
        prov = "Lightning data_connector._check_dataloader_iterable TypeError wording"
    else:
        root = tb(user_frames(ctx), [f"AttributeError: '{ch(ctx, ['DistributedDataParallel', 'NoneType', 'Tensor', 'LlamaConfig'])}' object has no attribute '{ch(ctx, ['generate', 'config', 'shape', 'rope_scaling', 'module'])}'"])
        prov = "CPython AttributeError wording"
    L, code = compose(ctx, root, launcher=launcher)
    return dict(lines=L, code=code, prov=prov)


def m_assertion(ctx):
    r = ctx.rng
    v = variant(ctx, 6)
    if v == 0:
        root = tb(user_frames(ctx) + [(ctx.s("torch/cuda/__init__.py"), ch(ctx, [239, 284, 310]), "_lazy_init", "raise AssertionError(\"Torch not compiled with CUDA enabled\")")], ["AssertionError: Torch not compiled with CUDA enabled"])
        prov = "torch/cuda/__init__.py _lazy_init 'Torch not compiled with CUDA enabled'"
    elif v == 1:
        bs = ri(ctx, 2, 16)
        root = tb(user_frames(ctx) + [(ctx.s("deepspeed/runtime/config.py"), ch(ctx, [692, 826, 893]), "_batch_assertion", "assert train_batch == micro_batch * grad_acc * self.world_size, (")],
                  [f"AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size {bs * 16} != {bs} * {ri(ctx, 1, 8)} * {ctx.world}"])
        prov = "deepspeed/runtime/config.py _batch_assertion wording"
    elif v == 2:
        t = ri(ctx, 1025, 9000)
        root = tb(user_frames(ctx) + torch_module_frames(ctx, 1) + [(ctx.f("model.py"), ri(ctx, 170, 200), "forward", 'assert t <= self.config.block_size, f"Cannot forward sequence of length {t}, block size is only {self.config.block_size}"')],
                  [f"AssertionError: Cannot forward sequence of length {t}, block size is only {ch(ctx, [256, 512, 1024])}"])
        prov = "karpathy/nanoGPT model.py GPT.forward block_size assertion"
    elif v == 3:
        root = tb(user_frames(ctx), ["AssertionError"])
        prov = "bare CPython AssertionError"
    elif v == 4:
        root = tb(user_frames(ctx) + [(ctx.f("data/collate.py"), ri(ctx, 10, 90), "collate", "assert len(ids) == len(mask), f\"{len(ids)} vs {len(mask)}\"")], [f"AssertionError: {ri(ctx, 100, 900)} vs {ri(ctx, 100, 900)}"])
        prov = "CPython AssertionError with message"
    else:
        root = tb(user_frames(ctx) + [(ctx.s("flax/core/scope.py"), ri(ctx, 800, 1000), "param", "assert abs_value_flat == value_flat or ...")] if r.random() < .5 else user_frames(ctx),
                  [f"AssertionError: expected shape {(ri(ctx, 1, 64), ri(ctx, 64, 4096))}, got {(ri(ctx, 1, 64), ri(ctx, 64, 4096))}"])
        prov = "CPython AssertionError (shape check)"
    L, code = compose(ctx, root)
    return dict(lines=L, code=code, prov=prov)


def m_runtime_error(ctx):
    r = ctx.rng
    v = variant(ctx, 7)
    libs = torch_module_frames(ctx, 2)
    if v == 0:
        a, b = ri(ctx, 2, 64), ri(ctx, 64, 4096)
        root = tb(user_frames(ctx) + libs + [(ctx.s("torch/nn/modules/linear.py"), 116, "forward", "return F.linear(input, self.weight, self.bias)")],
                  [f"RuntimeError: mat1 and mat2 shapes cannot be multiplied ({a}x{b} and {ri(ctx, 64, 4096)}x{ri(ctx, 2, 1000)})"])
        prov = "aten LinearAlgebra.cpp 'mat1 and mat2 shapes cannot be multiplied'"
    elif v == 1:
        ks = [f'"transformer.h.{i}.attn.c_attn.weight"' for i in range(ri(ctx, 2, 12))]
        root = tb(user_frames(ctx) + [(ctx.s("torch/nn/modules/module.py"), ch(ctx, [2152, 2189, 2584]), "load_state_dict", "raise RuntimeError('Error(s) in loading state_dict for {}:\\n\\t{}'.format(")],
                  [f"RuntimeError: Error(s) in loading state_dict for {ch(ctx, ['GPT', 'DistributedDataParallel', 'ResNet', 'VisionTransformer'])}:", f"\tMissing key(s) in state_dict: {', '.join(ks)}. ",
                   f"\tUnexpected key(s) in state_dict: {', '.join(k.replace('transformer', '_orig_mod.transformer') for k in ks)}. "])
        prov = "torch/nn/modules/module.py load_state_dict 'Error(s) in loading state_dict for X: Missing key(s) ... Unexpected key(s)'"
    elif v == 2:
        root = tb(user_frames(ctx) + [(ctx.s("torch/_tensor.py"), 522, "backward", "torch.autograd.backward("), (ctx.s("torch/autograd/__init__.py"), 266, "backward", "Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")],
                  [ch(ctx, ["RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",
                            "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.",
                            f"RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [{ri(ctx, 8, 512)}, {ri(ctx, 8, 512)}]], which is output 0 of ReluBackward0, is at version 2; expected version 1 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True)."])])
        prov = "torch/csrc/autograd engine RuntimeError wordings (grad_fn / backward twice / inplace version counter)"
    elif v == 3:
        root = tb(user_frames(ctx) + [(ctx.s("torch/nn/parallel/distributed.py"), ch(ctx, [1589, 1593, 1636]), "forward", "inputs, kwargs = self._pre_forward(*inputs, **kwargs)"),
                                      (ctx.s("torch/nn/parallel/distributed.py"), ch(ctx, [1480, 1484]), "_pre_forward", "if torch.is_grad_enabled() and self.reducer._rebuild_buckets():")],
                  ["RuntimeError: Expected to have finished reduction in the prior iteration before starting a new one. This error indicates that your module has parameters that were not used in producing loss. You can enable unused parameter detection by passing the keyword argument `find_unused_parameters=True` to `torch.nn.parallel.DistributedDataParallel`, and by ",
                   "making sure all `forward` function outputs participate in calculating loss. ",
                   "If you already have done the above, then the distributed data parallel module wasn't able to locate the output tensors in the return value of your module's `forward` function. Please include the loss function and the structure of the return value of `forward` of your module when reporting this issue (e.g. list, dict, iterable).",
                   f"Parameter indices which did not receive grad for rank {ri(ctx, 0, 7)}: {' '.join(str(ri(ctx, 100, 300)) for _ in range(ri(ctx, 1, 6)))}",
                   " In addition, you can set the environment variable TORCH_DISTRIBUTED_DEBUG to either INFO or DETAIL to print out information about which particular parameters did not receive gradient on this rank as part of this error"])
        L, code = compose(ctx, root, launcher="torchrun")
        return dict(lines=L, code=code, prov="torch/csrc/distributed/c10d/reducer.cpp unused-parameter RuntimeError wording")
    elif v == 4:
        inner = tb([(ctx.s("torch/utils/data/_utils/worker.py"), 308, "_worker_loop", "data = fetcher.fetch(index)  # type: ignore[possibly-undefined]"),
                    (ctx.s("torch/utils/data/_utils/fetch.py"), 54, "fetch", "return self.collate_fn(data)"),
                    (ctx.s("torch/utils/data/_utils/collate.py"), ch(ctx, [277, 316]), "default_collate", "return collate(batch, collate_fn_map=default_collate_fn_map)"),
                    (ctx.s("torch/utils/data/_utils/collate.py"), ch(ctx, [155, 214]), "collate_tensor_fn", "return torch.stack(batch, 0, out=out)")],
                   [f"RuntimeError: stack expects each tensor to be equal size, but got [3, {ri(ctx, 200, 600)}, {ri(ctx, 200, 600)}] at entry 0 and [3, {ri(ctx, 200, 600)}, {ri(ctx, 200, 600)}] at entry {ri(ctx, 1, 31)}"], header="Original Traceback (most recent call last):")
        root = tb(user_frames(ctx) + [(ctx.s("torch/utils/data/dataloader.py"), 631, "__next__", "data = self._next_data()"), (ctx.s("torch/_utils.py"), 705, "reraise", "raise exception")],
                  [f"RuntimeError: Caught RuntimeError in DataLoader worker process {ri(ctx, 0, 7)}."] + inner)
        prov = "torch default_collate stack size RuntimeError re-raised via DataLoader worker"
    elif v == 5:
        root = tb(user_frames(ctx) + libs, [f"RuntimeError: The size of tensor a ({ri(ctx, 2, 4096)}) must match the size of tensor b ({ri(ctx, 2, 4096)}) at non-singleton dimension {ri(ctx, 0, 3)}"])
        prov = "aten ExpandUtils 'The size of tensor a (x) must match the size of tensor b (y) at non-singleton dimension k'"
    else:
        root = tb(user_frames(ctx) + libs, [f"RuntimeError: shape '[{ri(ctx, 1, 64)}, -1, {ri(ctx, 8, 64)}, {ri(ctx, 32, 128)}]' is invalid for input of size {ri(ctx, 10**5, 10**8)}"])
        prov = "aten view/reshape 'shape ... is invalid for input of size'"
    L, code = compose(ctx, root)
    return dict(lines=L, code=code, prov=prov)


def m_gpu_hardware(ctx):
    r = ctx.rng
    v = variant(ctx, 6)
    bus = f"0000:{ch(ctx, ['1b', '3b', '5e', '86', 'b7', 'db', '18', '2a'])}:00"
    kt = lambda: f"[{ri(ctx, 100000, 9999999)}.{ri(ctx, 100000, 999999)}]"
    if v == 0:
        dmesg = [f"{kt()} NVRM: GPU at PCI:{bus}: GPU-{r.randint(10**7, 10**8):x}-{r.randint(1000, 9999):x}-{r.randint(1000, 9999):x}-{r.randint(1000, 9999):x}-{r.randint(10**11, 10**12):x}",
                 f"{kt()} NVRM: Xid (PCI:{bus}): 79, pid={ctx.pid}, name=python, GPU has fallen off the bus.", f"{kt()} NVRM: GPU {bus}.0: GPU has fallen off the bus."]
        root = tb(user_frames(ctx), ["RuntimeError: CUDA error: unspecified launch failure"] + CUDA_HINT)
        L, code = compose(ctx, root, after=["+ dmesg | grep NVRM | tail -3"] + dmesg + ["+ nvidia-smi", f"Unable to determine the device handle for GPU{bus}.0: Unknown Error"], launcher="slurm", pre_kind="slurm")
        prov = "NVRM 'Xid (PCI:...): 79, GPU has fallen off the bus' (https://github.com/wilicc/gpu-burn/issues/1, https://github.com/NVIDIA/NVSentinel/issues/155)"
    elif v == 1:
        root = tb(user_frames(ctx) + torch_module_frames(ctx, 2), ["RuntimeError: CUDA error: uncorrectable ECC error encountered"] + CUDA_HINT)
        after = [f"{kt()} NVRM: Xid (PCI:{bus}): 48, pid={ctx.pid}, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition {ri(ctx, 0, 11)}, subpartition {ri(ctx, 0, 1)}."]
        L, code = compose(ctx, root, after=after if r.random() < .6 else None)
        prov = "CUDA cudaErrorECCUncorrectable string 'uncorrectable ECC error encountered' + NVRM Xid 48 DBE"
    elif v == 2:
        root = [f"{kt()} NVRM: Xid (PCI:{bus}): {ch(ctx, [94, 95])}, pid={ctx.pid}, name=python, {ch(ctx, ['Contained: SM (0x1). RST: No, D-RST: No', 'Uncontained: FBHUB. RST: Yes, D-RST: No'])}",
                f"{kt()} NVRM: Xid (PCI:{bus}): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row marked for remapping, reset gpu to activate."]
        root += tb(user_frames(ctx), ["RuntimeError: CUDA error: an illegal memory access was encountered" if r.random() < .4 else "RuntimeError: CUDA error: uncorrectable ECC error encountered"] + CUDA_HINT)
        L, code = compose(ctx, root, launcher=ch(ctx, ["torchrun", "slurm"]))
        prov = "NVIDIA Xid 94/95 (contained/uncontained ECC) and Xid 63 row-remapper messages (NVIDIA Xid catalog, NVSentinel issues)"
    elif v == 3:
        root = tb(user_frames(ctx) + [(ctx.s("torch/cuda/__init__.py"), ch(ctx, [293, 302, 319]), "_lazy_init", "torch._C._cuda_init()")],
                  ["RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero."])
        after = ["+ nvidia-smi", f"Unable to determine the device handle for GPU{bus}.0: GPU is lost.  Reboot the system to recover this GPU"]
        L, code = compose(ctx, root, after=after, n_train=0, launcher="slurm", pre_kind="slurm")
        prov = "nvidia-smi 'Unable to determine the device handle for GPU...: GPU is lost.  Reboot the system to recover this GPU'"
    elif v == 4:  # NCCL reports device error after Xid 79 (root cause hardware)
        root = [f"{kt()} NVRM: Xid (PCI:{bus}): 79, pid={ctx.pid}, name=python, GPU has fallen off the bus.",
                f"{ctx.host}:{ctx.pid}:{ctx.pid + 200} [3] NCCL INFO [Service thread] Connection closed by localRank 3",
                f"{ctx.host}:{ctx.pid}:{ctx.pid + 90} [3] init.cc:{ch(ctx, [1931, 2053])} NCCL WARN Cuda failure 'unspecified launch failure'"]
        L, code = compose(ctx, root, death=("sig", 6), launcher="torchrun", root_rank=3)
        prov = "NVRM Xid 79 'GPU has fallen off the bus' followed by NCCL 'Cuda failure' warnings"
    else:  # JAX / XLA
        root = tb([(ctx.f(ctx.script), ri(ctx, 100, 400), "<module>", "main()")],
                  [f"jaxlib.xla_extension.XlaRuntimeError: INTERNAL: CUDA error: Could not synchronize CUDA stream: CUDA_ERROR_ECC_UNCORRECTABLE: uncorrectable ECC error encountered"])
        L, code = compose(ctx, root, style="jax", after=[f"{kt()} NVRM: Xid (PCI:{bus}): 48, pid={ctx.pid}, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 3, subpartition 0."])
        prov = "CUDA driver CUDA_ERROR_ECC_UNCORRECTABLE surfaced by XLA + Xid 48 DBE"
    return dict(lines=L, code=code, prov=prov)

def m_disk_full(ctx):
    r = ctx.rng
    v = variant(ctx, 6)
    if v == 0:
        root = tb(user_frames(ctx) + [(ctx.s("torch/serialization.py"), ch(ctx, [628, 850, 944]), "save", "_save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)"),
                                      (ctx.s("torch/serialization.py"), ch(ctx, [862, 1114]), "_save", "zip_file.write_record(name, storage, num_bytes)")],
                  [f"RuntimeError: [enforce fail at inline_container.cc:{ch(ctx, [588, 595, 764])}] . PytorchStreamWriter failed writing file data/{ri(ctx, 0, 300)}: file write failed"])
        root += ["", "During handling of the above exception, another exception occurred:", ""]
        root += tb(user_frames(ctx, 2) + [(ctx.s("torch/serialization.py"), ch(ctx, [627, 849]), "save", "with _open_zipfile_writer(f) as opened_zipfile:"),
                                          (ctx.s("torch/serialization.py"), ch(ctx, [475, 667]), "__exit__", "self.file_like.write_end_of_file()")],
                   [f"RuntimeError: [enforce fail at inline_container.cc:{ch(ctx, [424, 603])}] . unexpected pos {ri(ctx, 10**6, 10**9)} vs {ri(ctx, 10**6, 10**9)}"])
        after = [f"{ctx.ts_ms()} - WARNING - root - df: {ctx.root.split('/')[1]} 100% used (0 bytes free)"] if False else []
        root = [f"OSError: [Errno 28] No space left on device: '{ctx.root}/checkpoints/tmp-{ri(ctx, 1, 9999)}'" if False else f"{ctx.ts_ms()} - INFO - saving checkpoint to {ctx.root}/checkpoints/step_{ri(ctx, 1, 90) * 1000}.pt",
                f"tee: {ctx.root}/logs/train.log: No space left on device"] + root
        L, code = compose(ctx, root)
        prov = "torch caffe2/serialize/inline_container.cc 'PytorchStreamWriter failed writing file ... file write failed' + coreutils tee 'No space left on device'"
    elif v == 1:
        root = tb(user_frames(ctx) + [("/usr/lib/python3.10/shutil.py", 256, "copyfile", "copyfileobj(fsrc, fdst)"), ("/usr/lib/python3.10/shutil.py", 200, "copyfileobj", "fdst_write(buf)")],
                  [f"OSError: [Errno 28] No space left on device"])
        L, code = compose(ctx, root)
        prov = "CPython ENOSPC 'OSError: [Errno 28] No space left on device'"
    elif v == 2:
        root = tb(user_frames(ctx) + [(ctx.s("datasets/builder.py"), ch(ctx, [909, 1015]), "download_and_prepare", "raise OSError(")],
                  [f"OSError: Not enough disk space. Needed: {r.uniform(5, 900):.2f} GiB (download: {r.uniform(1, 300):.2f} GiB, generated: {r.uniform(1, 300):.2f} GiB, post-processed: Unknown size)"])
        L, code = compose(ctx, root, n_train=0)
        prov = "huggingface/datasets builder.py 'Not enough disk space. Needed: ...'"
    elif v == 3:  # writer aborts: std::runtime_error
        root = [f"{ctx.ts_ms()} - INFO - saving checkpoint to {ctx.root}/checkpoints/step_{ri(ctx, 1, 90) * 1000}",
                "terminate called after throwing an instance of 'std::runtime_error'", f"  what():  write failed: No space left on device"]
        L, code = compose(ctx, root, death=("sig", 6), launcher=ch(ctx, ["python", "slurm", "torchrun"]))
        prov = "libstdc++ terminate banner with ENOSPC strerror 'No space left on device' from a native checkpoint writer"
    elif v == 4:  # inductor / triton cache
        root = tb(user_frames(ctx) + [(ctx.s("torch/_inductor/codecache.py"), ch(ctx, [421, 480]), "write_atomic", "tmp_path.write_text(content)" if r.random() < .5 else "f.write(content)")],
                  [f"OSError: [Errno 28] No space left on device: '/tmp/torchinductor_{ctx.user}/{''.join(ch(ctx, 'abcdef0123456789') for _ in range(2))}/c{''.join(ch(ctx, 'abcdefghijklmnopqrstuvwxyz0123456789') for _ in range(40))}.py'"])
        L, code = compose(ctx, root)
        prov = "torch/_inductor/codecache.py write_atomic ENOSPC"
    else:  # TF checkpoint
        root = tb(user_frames(ctx), [f"tensorflow.python.framework.errors_impl.ResourceExhaustedError: {ctx.root}/ckpt/ckpt-{ri(ctx, 1, 90)}_temp/part-00000-of-00001.data-00000-of-00001.tempstate{ri(ctx, 10**18, 10**19)}; No space left on device [Op:SaveV2]"])
        L, code = compose(ctx, root, style="keras")
        prov = "tensorflow SaveV2 'ResourceExhaustedError: ...; No space left on device'"
    return dict(lines=L, code=code, prov=prov)


def m_walltime(ctx):
    r = ctx.rng
    v = variant(ctx, 6)
    if v == 0:
        after = ["srun: Job step aborted: Waiting up to 32 seconds for job step to finish.", slurm_cancel(ctx, "TIME LIMIT"), slurm_cancel(ctx, "TIME LIMIT", step=True)]
        if r.random() < .5:
            after.append(f"srun: error: {ctx.host}: tasks 0-{min(ctx.world, 8) - 1}: Terminated")
        L, code = compose(ctx, [], death=("exit", -15), launcher="slurm", pre_kind="slurm", after=after)
        prov = "Slurm slurmstepd '*** JOB N ON host CANCELLED AT ... DUE TO TIME LIMIT ***' (https://github.com/ZettaAI/zetta_utils/issues/671)"
    elif v == 1:
        L, code = compose(ctx, [slurm_cancel(ctx, "TIME LIMIT")], death=("exit", ch(ctx, [-15, -9])), launcher="slurm", pre_kind="slurm")
        prov = "Slurm 'CANCELLED AT ... DUE TO TIME LIMIT' (https://github.com/labsyspharm/mcmicro/issues/163)"
    elif v == 2:  # timeout(1)
        lim = ch(ctx, ["4h", "12h", "23h50m", "7200", "1d"])
        L, code = compose(ctx, [f"+ rc=124", f"[run.sh] {ctx.script} exited with status 124 (timeout {lim} reached)"], death=("exit", 124), launcher="python",
                          before=[f"+ timeout {lim} {ctx.pybin} {ctx.script} --config configs/{ctx.project}.yaml"])
        prov = "GNU coreutils timeout(1): exit status 124 when the command times out"
    elif v == 3:  # PBS
        lim = ch(ctx, [3600, 86400, 172800, 43200])
        L, code = compose(ctx, [f"=>> PBS: job killed: walltime {lim + ri(ctx, 1, 40)} exceeded limit {lim}"], death=("exit", ch(ctx, [-15, -9])), launcher="python")
        prov = "PBS/Torque '=>> PBS: job killed: walltime N exceeded limit M' (https://github.com/marbl/canu/issues/1214)"
    elif v == 4:  # LSF
        root = ["", "------------------------------------------------------------", f"Sender: LSF System <lsfadmin@{ctx.host}>", f"Subject: Job {ctx.jobid}: <{ctx.project}> in cluster <cluster1> Exited", "",
                "TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "Exited with exit code 140.", "", "Resource usage summary:", "",
                f"    CPU time :                                   {r.uniform(10000, 900000):.2f} sec.", f"    Max Memory :                                 {ri(ctx, 2000, 90000)} MB",
                f"    Run time :                                   {ri(ctx, 3600, 90000)} sec."]
        L, code = compose(ctx, root, death=("exit", 140), launcher="python")
        prov = "IBM LSF 'TERM_RUNLIMIT: job killed after reaching LSF run time limit. Exited with exit code 140.' (https://github.com/marbl/canu/issues/444)"
    else:  # SGE
        root = [f"{ctx.ts()} | training... step {ri(ctx, 1000, 90000)}", "", f"job {ctx.jobid} exceeded hard wallclock time - initiate terminate method"]
        L, code = compose(ctx, root, death=("exit", -9), launcher="python")
        prov = "Grid Engine h_rt enforcement ('exceeded hard wallclock time') as reported in SGE job messages"
    return dict(lines=L, code=code, prov=prov)


def m_preempted(ctx):
    r = ctx.rng
    v = variant(ctx, 6)
    if v == 0:
        L, code = compose(ctx, [slurm_cancel(ctx, "PREEMPTION")], death=("exit", -15), launcher="slurm", pre_kind="slurm")
        prov = "Slurm '*** JOB N ON host CANCELLED AT ... DUE TO PREEMPTION ***' (https://github.com/SystemsGenetics/GEMmaker/pull/242)"
    elif v == 1:  # lightning requeue, exit 0
        root = [f"[rank: 0] Received SIGTERM: 15" if False else "Handling auto-requeue signal: 10", f"Requeing job {ctx.jobid}...", f"Requeued SLURM job: {ctx.jobid}",
                f"Saving checkpoint to {ctx.root}/lightning_logs/version_{ri(ctx, 0, 40)}/checkpoints/hpc_ckpt_{ri(ctx, 1, 9)}.ckpt"]
        L, code = compose(ctx, root, death=("exit", 0), launcher="slurm", pre_kind="slurm", style="lightning")
        prov = "Lightning trainer/connectors/signal_connector.py SLURM auto-requeue ('Handling auto-requeue signal', 'Requeued SLURM job')"
    elif v == 2:  # GCP spot
        root = [f"{ctx.iso()}Z WARNING preemption-watcher: metadata server reports instance/preempted=TRUE",
                f"{ctx.iso()}Z INFO  trainer: preemption notice received; writing checkpoint to gs://{ctx.user}-ckpt/{ctx.project}/step_{ri(ctx, 1000, 90000)}",
                f"{ctx.iso()}Z INFO  trainer: checkpoint saved; exiting for preemption"]
        L, code = compose(ctx, root, death=("exit", 0), launcher="python", pre_kind="k8s")
        prov = "GCE metadata 'instance/preempted' Spot/preemptible VM notice (cloud.google.com/compute/docs/instances/spot#preemption-process)"
    elif v == 3:  # AWS spot
        root = [f"{ctx.iso()}Z WARN  spot-monitor: EC2 Spot Instance interruption notice: {{\"action\": \"terminate\", \"time\": \"{ctx.iso()}Z\"}}",
                f"{ctx.iso()}Z INFO  trainer: saving checkpoint before reclaim", "Terminated"]
        L, code = compose(ctx, root, death=("exit", -15), launcher="python", pre_kind="k8s")
        prov = "AWS EC2 Spot Instance interruption notice (instance-action metadata JSON {\"action\": \"terminate\", \"time\": ...})"
    elif v == 4:  # k8s node shutdown
        root = [f"{ctx.iso()}Z INFO  controller: Pod {ctx.project}-worker-{ri(ctx, 0, 7)} was terminated in response to imminent node shutdown.",
                f"{ctx.iso()}Z INFO  controller: job will be rescheduled (preempted) restartCount={ri(ctx, 1, 5)}"]
        L, code = compose(ctx, root, death=("exit", -15), launcher="python", pre_kind="k8s")
        prov = "Kubernetes graceful node shutdown status message 'Pod was terminated in response to imminent node shutdown.'"
    else:  # slurm requeue of preempted job, torchrun sees SIGTERM
        root = [slurm_cancel(ctx, "PREEMPTION"), f"slurmstepd: error: *** STEP {ctx.jobid}.0 ON {ctx.host} CANCELLED AT {ctx.iso()} DUE TO PREEMPTION ***"]
        L, code = compose(ctx, root, death=("exit", -15), launcher="slurm", pre_kind="slurm", style="megatron" if ctx.set == "dev" else "plain")
        prov = "Slurm PREEMPTION cancel banners for job and step"
    return dict(lines=L, code=code, prov=prov)


def m_interrupted(ctx):
    r = ctx.rng
    v = variant(ctx, 6)
    if v == 0:
        root = ["^C"] + tb(user_frames(ctx) + [(ctx.s("torch/utils/data/dataloader.py"), 631, "__next__", "data = self._next_data()"),
                                               ("/usr/lib/python3.10/multiprocessing/connection.py", 931, "wait", "ready = selector.select(timeout)"),
                                               ("/usr/lib/python3.10/selectors.py", 416, "select", "fd_event_list = self._selector.poll(timeout)")], ["KeyboardInterrupt"])
        L, code = compose(ctx, root, death=("sig", 2), launcher="python")
        prov = "CPython KeyboardInterrupt traceback on Ctrl-C (exit by SIGINT)"
    elif v == 1:  # torchrun SignalException
        g = ctx.glog("W")
        root = [f"{g} {ctx.pid - 7} torch/distributed/elastic/agent/server/api.py:{ch(ctx, [704, 723])}] Received Signals.SIGTERM death signal, shutting down workers",
                f"{ctx.glog('W')} {ctx.pid - 7} torch/distributed/elastic/multiprocessing/api.py:{ch(ctx, [858, 897])}] Sending process {ctx.pid} closing signal SIGTERM"]
        root += tb([(ctx.pybin.rsplit('/', 1)[0] + "/torchrun", 8, "<module>", "sys.exit(main())"),
                    (ctx.s("torch/distributed/run.py"), 919, "main", "run(args)"),
                    (ctx.s("torch/distributed/elastic/agent/server/api.py"), ch(ctx, [727, 734]), "run", "result = self._invoke_run(role)"),
                    (ctx.s("torch/distributed/elastic/multiprocessing/api.py"), ch(ctx, [62, 79, 84]), "_terminate_process_handler", "raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)")],
                   [f"torch.distributed.elastic.multiprocessing.api.SignalException: Process {ctx.pid - 7} got signal: 15"])
        L, code = compose(ctx, root, death=("exit", 1), launcher="python", before=torchrun_header(ctx))
        prov = "torch/distributed/elastic/multiprocessing/api.py _terminate_process_handler 'SignalException: Process N got signal: 15'"
    elif v == 2:  # scancel by user
        root = [slurm_cancel(ctx, None)]
        if r.random() < .5:
            root.insert(0, "srun: forcing job termination")
        L, code = compose(ctx, root, death=("exit", -15), launcher="slurm", pre_kind="slurm")
        prov = "Slurm user scancel banner '*** JOB N ON host CANCELLED AT <time> ***' (no DUE TO clause)"
    elif v == 3:  # graceful handler exit 0
        root = [f"{ctx.ts_ms()} - WARNING - train - Received signal 15 (SIGTERM); finishing current step and saving checkpoint",
                f"{ctx.ts_ms()} - INFO - train - Saved checkpoint to {ctx.root}/checkpoints/step_{ri(ctx, 1000, 90000)}.pt", f"{ctx.ts_ms()} - INFO - train - Exiting cleanly after SIGTERM."]
        L, code = compose(ctx, root, death=("exit", 0), launcher="python")
        prov = "user SIGTERM handler that checkpoints then exits 0 (pattern from torch elastic / Lightning docs)"
    elif v == 4:  # Lightning KeyboardInterrupt handling, exit 0
        root = ["", "Detected KeyboardInterrupt, attempting graceful shutdown ..."]
        L, code = compose(ctx, root, death=("exit", ch(ctx, [0, 1])), launcher="python", style="lightning")
        prov = "Lightning trainer/call.py _call_and_handle_interrupt 'Detected KeyboardInterrupt, attempting graceful shutdown ...'"
    else:  # HF / accelerate: KeyboardInterrupt inside accelerate launch
        root = ["^C" + ""] + tb(user_frames(ctx) + torch_module_frames(ctx, 1), ["KeyboardInterrupt"])
        L, code = compose(ctx, root, death=("exit", 130), launcher="python", before=[f"+ accelerate launch {ctx.script}"])
        prov = "KeyboardInterrupt in a child; wrapper shell reports 130 (128+SIGINT)"
    return dict(lines=L, code=code, prov=prov)


def m_native_abort(ctx):
    r = ctx.rng
    v = variant(ctx, 6)
    if v == 0:
        root = ["terminate called after throwing an instance of 'std::bad_alloc'", "  what():  std::bad_alloc"]
        L, code = compose(ctx, root, death=("sig", 6), launcher=ch(ctx, ["python", "slurm"]))
        prov = "libstdc++ terminate banner for std::bad_alloc (https://github.com/ljanyst/ssd-tensorflow/issues/8)"
    elif v == 1:
        root = [ch(ctx, ["free(): invalid pointer", "double free or corruption (!prev)", "corrupted size vs. prev_size", "munmap_chunk(): invalid pointer", "malloc(): unaligned tcache chunk detected"])]
        L, code = compose(ctx, root, death=("sig", 6), launcher=ch(ctx, ["python", "slurm", "torchrun"]))
        prov = "glibc malloc integrity-check abort messages (malloc/malloc.c malloc_printerr)"
    elif v == 2:
        root = [f"F{time.strftime('%m%d %H:%M:%S', time.localtime(ctx.tick()))}.{ri(ctx, 0, 999999):06d} {ctx.pid} {ch(ctx, ['external/xla/xla/service/gpu/gpu_executable.cc', 'external/xla/xla/pjrt/pjrt_stream_executor_client.cc', 'tensorflow/core/framework/tensor_shape.cc'])}:{ri(ctx, 100, 3000)}] Check failed: {ch(ctx, ['buffer_size >= 0', 'status.ok()', 'size >= 0 (-1 vs. 0)', 'd < dims() (1 vs. 1)'])} ",
                "*** Check failure stack trace: ***"] + [f"    @     0x{r.randint(10**13, 10**14):x}  {ch(ctx, ['absl::log_internal::LogMessageFatal::~LogMessageFatal()', 'xla::gpu::GpuExecutable::ExecuteThunks()', '(unknown)', 'tsl::thread::EigenEnvironment::CreateThread()::{lambda()#1}::operator()()'])}" for _ in range(r.randint(4, 12))] + ["Fatal Python error: Aborted", ""]
        L, code = compose(ctx, root, death=("sig", 6), style=ch(ctx, ["jax", "keras"]), launcher=ch(ctx, ["python", "slurm"]))
        prov = "absl/glog fatal 'Check failed: ...' + '*** Check failure stack trace: ***' (jax/tensorflow issue threads)"
    elif v == 3:
        root = ["terminate called after throwing an instance of 'c10::Error'", f"  what():  [enforce fail at {ch(ctx, ['inline_container.cc:227', 'context_gpu.cu:417', 'TensorImpl.h:1554'])}] . {ch(ctx, ['file in archive is not in a subdirectory: archive/data.pkl', 'PytorchStreamReader failed reading zip archive: failed finding central directory'])}",
                "Exception raised from ... (most recent call first):", f"frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x{r.randint(10**13, 10**14):x} in {ctx.site}/torch/lib/libc10.so)"]
        L, code = compose(ctx, root, death=("sig", 6), launcher=ch(ctx, ["python", "torchrun"]))
        prov = "libstdc++ terminate with c10::Error what() from libtorch C++ (pytorch/pytorch issue threads)"
    elif v == 4:
        root = ["Fatal Python error: Aborted", "", f"Thread 0x{r.randint(10**13, 10**14):x} (most recent call first):", f'  File "{ctx.s("torch/utils/data/dataloader.py")}", line 1133 in _try_get_data',
                f'  File "{ctx.f(ctx.script)}", line {ri(ctx, 50, 500)} in train', f'  File "{ctx.f(ctx.script)}", line {ri(ctx, 50, 500)} in <module>', ""]
        root = ["python3: " + ch(ctx, ["../nptl/pthread_mutex_lock.c:81: __pthread_mutex_lock: Assertion `mutex->__data.__owner == 0' failed.", "malloc.c:4302: _int_malloc: Assertion `(unsigned long) (size) >= (unsigned long) (nb)' failed."])] + root
        L, code = compose(ctx, root, death=("sig", 6), launcher="slurm")
        prov = "glibc internal assertion abort + CPython faulthandler 'Fatal Python error: Aborted'"
    else:
        root = [f"{ctx.f('build/lib/cuda_ext.so')}" if False else "terminate called recursively", "terminate called after throwing an instance of 'std::system_error'", "  what():  Resource temporarily unavailable"]
        L, code = compose(ctx, root, death=("sig", 6), launcher=ch(ctx, ["python", "torchrun"]))
        prov = "libstdc++ terminate with std::system_error EAGAIN (thread creation failure)"
    return dict(lines=L, code=code, prov=prov)


def m_exec_failure(ctx):
    r = ctx.rng
    v = variant(ctx, 6)
    sl = f"/var/spool/slurmd/job{ctx.jobid}/slurm_script"
    if v == 0:
        cmd = ch(ctx, ["torchrun", "deepspeed", "accelerate", "python", "nvidia-smi", "srun_wrapper.sh"])
        root = [f"{sl}: line {ri(ctx, 5, 60)}: {cmd}: command not found"]
        code = 127
        prov = "bash 'command not found' (exit 127)"
    elif v == 1:
        root = [f"{sl}: line {ri(ctx, 5, 60)}: {ctx.root}/scripts/launch.sh: Permission denied"]
        code = 126
        prov = "bash 'Permission denied' executing a non-executable script (exit 126)"
    elif v == 2:
        root = ["/usr/bin/env: 'python': No such file or directory" if r.random() < .5 else "/usr/bin/env: ‘python’: No such file or directory"]
        code = 127
        prov = "coreutils env 'No such file or directory' for a missing interpreter (exit 127)"
    elif v == 3:
        root = [f"bash: {ctx.root}/{ctx.script}: /usr/bin/python: bad interpreter: No such file or directory"]
        code = 126
        prov = "bash 'bad interpreter: No such file or directory' (exit 126)"
    elif v == 4:
        root = ["standard_init_linux.go:228: exec user process caused: exec format error"]
        code = 255 if False else 1
        prov = "container runtime 'exec ...: exec format error' (docker/containerd; CRLF or wrong-arch entrypoint)"
    else:
        root = [f"srun: error: {ctx.host}: task 0: Exited with exit code 2", f"slurmstepd: error: execve(): {ctx.script.split('/')[-1]}: No such file or directory"]
        code = 2
        prov = "Slurm slurmstepd 'execve(): X: No such file or directory'"
    pre = env_preamble(ctx, "slurm" if v in (0, 1, 5) else None) + setup_noise(ctx)
    L = pre + root
    if r.random() < .4:
        L += [f"Job {ctx.jobid} finished at {ctx.ts()} with status {code}"]
    return dict(lines=L, code=code, prov=prov)

def nvidia_smi(ctx, n=None):
    r = ctx.rng
    n = n or ch(ctx, [1, 2, 4, 8])
    L = [time.strftime("%a %b %d %H:%M:%S %Y", time.localtime(ctx.tick())),
         "+-----------------------------------------------------------------------------------------+",
         f"| NVIDIA-SMI {ctx.driver}             Driver Version: {ctx.driver}     CUDA Version: 12.{ri(ctx, 1, 6)}     |",
         "|-----------------------------------------+------------------------+----------------------+",
         "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
         "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
         "|=========================================+========================+======================|"]
    for i in range(n):
        L += [f"|   {i}  {ctx.gpu[:24]:<24}       On  |   00000000:{ch(ctx, ['1B', '3B', '5E', '86', 'B7', 'DB'])}:00.0 Off |                    0 |",
              f"| N/A   {ri(ctx, 28, 45)}C    P0             {ri(ctx, 50, 90)}W / {ch(ctx, [300, 400, 700])}W |       1MiB / {int(ctx.gpu_mem * 1024)}MiB |      0%      Default |",
              "+-----------------------------------------+------------------------+----------------------+"]
    return L


def setup_noise(ctx):
    r = ctx.rng
    L = []
    if r.random() < .7:
        L += ["+ nvidia-smi"] + nvidia_smi(ctx)
    if r.random() < .6:
        L += ["+ pip list 2>/dev/null | grep -E 'torch|transformers|accelerate|deepspeed'"] + [f"{p:<24}{v}" for p, v in
              [("accelerate", f"0.{ri(ctx, 20, 34)}.{ri(ctx, 0, 3)}"), ("deepspeed", f"0.{ri(ctx, 12, 16)}.{ri(ctx, 0, 9)}"), ("torch", ctx.torchver), ("transformers", f"4.{ri(ctx, 30, 46)}.{ri(ctx, 0, 3)}")] if r.random() < .8]
    if r.random() < .5:
        L += [f"+ export NCCL_DEBUG=WARN OMP_NUM_THREADS={ch(ctx, [1, 4, 8])} HF_HOME=/shared/hf_cache", f"+ cd {ctx.root}", "+ git rev-parse --short HEAD", f"{r.randint(0x1000000, 0xfffffff):07x}"]
    return L


def m_success(ctx):
    r = ctx.rng
    v = variant(ctx, 12)
    style = pick_style(ctx)
    L = env_preamble(ctx) + setup_noise(ctx)
    prov = ""
    if v == 0:  # apex/deepspeed fp16 overflow skipping, recovered
        n = ri(ctx, 40, 200)
        over = {}
        scale = 65536.0
        for k in sorted(r.sample(range(n), r.randint(2, 8))):
            over[k] = (lambda scale=scale, apex=(r.random() < .5): [f"Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to {scale / 2}" if apex else
                       f"[{ctx.ts_ms()}] [INFO] [loss_scaler.py:{ch(ctx, [183, 190])}:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {int(scale)}, reducing to {int(scale / 2)}"])
            scale /= 2
        L += train_noise(ctx, ch(ctx, ["deepspeed", "hf", "plain"]), n, grad_overflow=over)
        L += [f"{{'train_runtime': {r.uniform(500, 90000):.4f}, 'train_samples_per_second': {r.uniform(1, 90):.3f}, 'train_loss': {r.uniform(0.5, 2.5):.4f}, 'epoch': 3.0}}", f"Saving model checkpoint to {ctx.root}/outputs/final"]
        prov = "NVIDIA apex fp16_utils loss_scaler 'Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to' / deepspeed runtime/fp16/loss_scaler.py 'OVERFLOW! Rank 0 Skipping step'"
    elif v == 1:  # nanoGPT success
        L += [f"tokens per iteration will be: {ch(ctx, [491520, 524288, 16384])}", "Initializing a new model from scratch", f"number of parameters: {r.uniform(10, 125):.2f}M",
              f"num decayed parameter tensors: {ri(ctx, 20, 60)}, with {ri(ctx, 10**6, 10**8):,} parameters", f"num non-decayed parameter tensors: {ri(ctx, 20, 60)}, with {ri(ctx, 1000, 90000):,} parameters", "using fused AdamW: True", "compiling the model... (takes a ~minute)"]
        L += train_noise(ctx, "nanogpt", ri(ctx, 60, 400))
        L += [f"saving checkpoint to out-{ctx.project}", "nanoGPT training done."]
        prov = "karpathy/nanoGPT train.py log format ('iter N: loss X, time Yms, mfu Z%', 'saving checkpoint to out')"
    elif v == 2:  # handled + retried exception
        n = ri(ctx, 40, 200)
        tr = train_noise(ctx, style, n // 2)
        mid = len(tr)
        shard = ri(ctx, 0, 999)
        exc = [f"{ctx.ts_ms()} - ERROR - data.remote - error fetching shard {shard:05d}, will retry (attempt 1/5)"] + tb(
            [(ctx.f("data/remote.py"), ri(ctx, 20, 200), "fetch", "resp = session.get(url, timeout=30)"), (ctx.s("requests/sessions.py"), 602, "get", "return self.request(\"GET\", url, **kwargs)"),
             (ctx.s("requests/adapters.py"), ch(ctx, [532, 713]), "send", "raise ReadTimeout(e, request=request)")],
            [f"requests.exceptions.ReadTimeout: HTTPSConnectionPool(host='storage.example.org', port=443): Read timed out. (read timeout=30)"]) + [f"{ctx.ts_ms()} - INFO - data.remote - shard {shard:05d} fetched on attempt 2"]
        tr += exc + train_noise(ctx, style, n - n // 2, start_step=(n // 2) * 10)
        L += tr + [f"{ctx.ts_ms()} - INFO - train - training complete; best val_loss {r.uniform(0.5, 2):.4f}"]
        prov = "logging.exception-style handled traceback (requests ReadTimeout wording) followed by successful retry"
    elif v == 3:  # val_error metric, killed duplicates, val_loss nan harmless
        L += [f"{ctx.ts_ms()} - INFO - dedup - scanned {ri(ctx, 10**5, 10**7)} samples, killed {ri(ctx, 2, 9)} duplicates"]
        L += train_noise(ctx, "plain", ri(ctx, 30, 200))
        L += [f"epoch {e}: val_error={r.uniform(0.01, 0.3):.4f} val_acc={r.uniform(0.7, 0.99):.4f}" for e in range(ri(ctx, 2, 8))]
        L += ["final: val_loss nan (no val set)", f"final: train_loss {r.uniform(0.1, 2):.4f}  error_rate {r.uniform(0.01, 0.2):.4f}", "done."]
        prov = "composed harmless-keyword success (val_error, 'killed N duplicates', 'val_loss nan (no val set)')"
    elif v == 4:  # torchrun multi-rank success with destroy_process_group warning
        nr = min(ctx.world, 8)
        L += torchrun_header(ctx) + nccl_init_lines(ctx, nr) + train_noise(ctx, style, ri(ctx, 40, 200))
        for k in range(nr):
            L.append(f"[rank{k}]:[{ctx.glog('W')} ProcessGroupNCCL.cpp:{ch(ctx, [1168, 1250, 1496])}] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the progress of another member of the process group. This constraint has always been present,  but this warning has only recently started to be printed. In the future, this could become an error. (function operator())")
        prov = "torch ProcessGroupNCCL destructor warning 'process group has NOT been destroyed' printed on clean exit"
    elif v == 5:  # TF harmless E lines
        t = lambda: f"{ctx.ts('%Y-%m-%d %H:%M:%S')}.{ri(ctx, 100000, 999999)}"
        L += [f"{t()}: E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered",
              f"{t()}: E external/local_xla/xla/stream_executor/cuda/cuda_fft.cc:607] Unable to register cuFFT factory: Attempting to register factory for plugin cuFFT when one has already been registered",
              f"{t()}: E external/local_xla/xla/stream_executor/cuda/cuda_blas.cc:1515] Unable to register cuBLAS factory: Attempting to register factory for plugin cuBLAS when one has already been registered",
              f"{t()}: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT",
              f"{t()}: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1929] Created device /job:localhost/replica:0/task:0/device:GPU:0 with {ri(ctx, 10000, 79000)} MB memory:  -> device: 0, name: {ctx.gpu}, pci bus id: 0000:3b:00.0, compute capability: 8.0"]
        L += train_noise(ctx, "keras", ri(ctx, 5, 40)) + [f"INFO:tensorflow:Assets written to: {ctx.root}/saved_model/assets"]
        prov = "TensorFlow 2.15 harmless duplicate-factory E-level lines (cuda_dnn.cc 'Unable to register cuDNN factory') + TF-TRT warning"
    elif v == 6:  # skipped NaN steps that recover
        n = ri(ctx, 40, 300)
        tr = train_noise(ctx, style, n)
        for _ in range(r.randint(1, 4)):
            k = r.randrange(len(tr))
            tr.insert(k, f"WARNING: non-finite loss (nan) at step {ri(ctx, 100, 90000)}; skipping batch and zeroing grads")
        L += tr + [f"{ctx.ts_ms()} - INFO - train - finished {n} logging intervals; final loss {r.uniform(0.2, 2):.4f}"]
        prov = "composed: per-step NaN guard that skips batches and recovers"
    elif v == 7:  # Lightning success
        L += ["GPU available: True (cuda), used: True", "TPU available: False, using: 0 TPU cores", "HPU available: False, using: 0 HPUs",
              "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3]", "", "  | Name    | Type             | Params | Mode ", "---------------------------------------------------------",
              f"0 | model   | {ch(ctx, ['ResNet', 'ViT', 'Transformer'])}           | {r.uniform(1, 300):.1f} M | train", "1 | loss_fn | CrossEntropyLoss | 0      | train", "---------------------------------------------------------"]
        L += train_noise(ctx, "lightning", ri(ctx, 20, 120))
        L += [f"`Trainer.fit` stopped: `max_epochs={ri(ctx, 3, 100)}` reached."]
        prov = "Lightning ModelSummary table + '`Trainer.fit` stopped: `max_epochs=N` reached.'"
    elif v == 8:  # warnings containing 'error'
        L += [f"{ctx.s('pandas/io/parsers/readers.py')}:1215: FutureWarning: The error_bad_lines argument has been deprecated and will be removed in a future version. Use on_bad_lines in the future.",
              f"{ctx.s('sklearn/metrics/_regression.py')}:{ri(ctx, 400, 900)}: UserWarning: mean_squared_error is deprecated; use root_mean_squared_error instead" if False else f"{ctx.s('torch/nn/modules/loss.py')}:{ri(ctx, 500, 600)}: UserWarning: Using a target size (torch.Size([{ri(ctx, 2, 64)}])) that is different to the input size (torch.Size([{ri(ctx, 2, 64)}, 1])). This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
              "  return F.mse_loss(input, target, reduction=self.reduction)"]
        L += train_noise(ctx, style, ri(ctx, 30, 200)) + [f"{ctx.ts_ms()} - INFO - train - mean_absolute_error={r.uniform(0.01, 1):.4f} error_rate={r.uniform(0.0, 0.1):.4f}", "Training finished successfully."]
        prov = "pandas FutureWarning 'error_bad_lines' deprecation + torch mse_loss broadcasting UserWarning"
    elif v == 9:  # JAX success with XLA warnings
        L += [f"W{time.strftime('%m%d %H:%M:%S', time.localtime(ctx.tick()))}.{ri(ctx, 0, 999999):06d} {ri(ctx, 1000, 99999)} cuda_executor.cc:1040] Could not retrieve CUDA device attribute (81): UNKNOWN ERROR (1)"] if r.random() < .5 else []
        L += train_noise(ctx, "jax", ri(ctx, 40, 300)) + [f"I{time.strftime('%m%d %H:%M:%S', time.localtime(ctx.tick()))}.{ri(ctx, 0, 999999):06d} {ri(ctx, 1000, 99999)} checkpoints.py:{ri(ctx, 500, 1100)}] Saved checkpoint at {ctx.root}/ckpt/checkpoint_{ri(ctx, 1000, 90000)}", "Training finished."]
        prov = "XLA cuda_executor 'Could not retrieve CUDA device attribute ... UNKNOWN ERROR' harmless warning + flax checkpoints log"
    elif v == 10:  # auto batch size finder recovered OOM (handled)
        L += [f"{ctx.ts_ms()} - INFO - accelerate.utils.memory - Trying batch size {b}" for b in []]
        L += [f"{ctx.ts_ms()} - INFO - accelerate.utils.memory - Reducing batch size to {ch(ctx, [16, 32, 8])} after CUDA OOM in probe step"] if False else [
              f"{ctx.ts_ms()} - WARNING - train - probe step with batch size {ch(ctx, [64, 128])} failed (CUDA out of memory); halving batch size and retrying"]
        L += train_noise(ctx, style, ri(ctx, 40, 200)) + ["Training completed. Do not forget to share your model on huggingface.co/models =)"]
        prov = "HF Trainer closing line 'Training completed. Do not forget to share your model on huggingface.co/models =)' + handled OOM probe retry"
    else:  # megatron success with skipped iterations
        L += train_noise(ctx, "megatron", ri(ctx, 40, 200)) + [f"[after training is done] datetime: {ctx.ts()} ", f"saving checkpoint at iteration {ri(ctx, 1000, 90000):>8d} to {ctx.root}/checkpoints", f"  successfully saved checkpoint at iteration {ri(ctx, 1000, 90000):>8d} to {ctx.root}/checkpoints"]
        prov = "Megatron-LM training_log iteration line format + checkpointing messages"
    if r.random() < .5:
        L += wandb_teardown(ctx, failed=False)
    return dict(lines=L, code=0, prov=prov)

# --------------------------------------------------------------------------
# CAPTURED logs: really run small failing programs (CPU only) and keep their output
# --------------------------------------------------------------------------
PRELUDE = r'''
import os, sys, time, random, logging, warnings
random.seed(int(os.environ.get("CAP_SEED", "0")))
logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO, stream=sys.stdout)
log = logging.getLogger("train")
STEPS = int(os.environ.get("CAP_STEPS", "30"))
def progress(n=None):
    n = n or STEPS
    loss = random.uniform(3, 9)
    for s in range(1, n + 1):
        loss *= random.uniform(0.96, 1.0)
        if s % 4 != 3:
            log.info("step %d/%d | loss %.4f | lr %.2e | %.1f ms/step", s, n * 3, loss, 3e-4, random.uniform(80, 300))
        else:
            sys.stderr.write("\r%3d%%|%s| %d/%d [00:%02d<01:%02d, %.2fit/s]" % (100 * s // (n * 3), "#" * (s * 10 // (n * 3)), s, n * 3, s % 60, (n * 3 - s) % 60, random.uniform(2, 9)))
            sys.stderr.flush()
    sys.stderr.write("\n")
    sys.stdout.flush()
    return loss
'''

CAPTURES = {
    "div_zero": (["python"], r'''
log.info("loading eval set from %s", os.environ.get("CAP_DATA", "data/val"))
progress()
val_batches = []
total = sum(val_batches)
log.info("running validation")
avg = total / len(val_batches)
''', "CPython ZeroDivisionError, captured by running a real script"),
    "file_not_found": (["python", "torch"], r'''
import torch
progress()
ckpt = os.environ.get("CAP_PATH", "/nonexistent/ckpt.pt")
log.info("resuming from %s", ckpt)
state = torch.load(ckpt, map_location="cpu")
''', "torch.load on a missing checkpoint (real torch 2.x CPU output)"),
    "permission": (["python", "nobody"], r'''
progress()
out = os.environ.get("CAP_PATH")
log.info("saving checkpoint to %s", out)
with open(out, "wb") as f:
    f.write(b"x" * 100)
''', "real EACCES: write into a root-owned directory as user nobody"),
    "missing_module": (["python"], r'''
progress()
log.info("building model")
warnings.warn("torch.utils._pytree._register_pytree_node is deprecated. Please use torch.utils._pytree.register_pytree_node instead.", UserWarning)
import importlib
importlib.import_module(os.environ.get("CAP_MOD", "flash_attn"))
''', "CPython ModuleNotFoundError, captured"),
    "ram_oom": (["python", "torch"], r'''
import torch
progress()
log.info("materialising embedding table")
t = torch.empty(int(os.environ.get("CAP_N", "10000000000000")))
''', "torch DefaultCPUAllocator can't allocate memory (real CPU allocator message)"),
    "ram_oom_py": (["python"], r'''
import resource
resource.setrlimit(resource.RLIMIT_AS, (2 * 1024 ** 3, 2 * 1024 ** 3))
progress()
log.info("caching dataset in RAM")
cache = [bytearray(256 * 1024 ** 2) for _ in range(64)]
''', "CPython MemoryError under an address-space limit (RLIMIT_AS), captured"),
    "segfault": (["python"], r'''
import faulthandler, ctypes
faulthandler.enable()
progress()
log.info("calling custom CUDA-extension fallback kernel")
ctypes.string_at(0)
''', "real SIGSEGV (NULL dereference via ctypes) with faulthandler dump"),
    "segfault_bash": (["bash"], r'''
import ctypes
progress(STEPS * 2)
log.info("loading compiled tokenizer extension")
ctypes.string_at(0)
''', "real SIGSEGV under a bash batch script (bash prints 'Segmentation fault (core dumped)', status 139)"),
    "native_abort": (["python"], r'''
import ctypes
progress()
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
p = libc.malloc(64)
log.info("releasing pinned host buffer")
libc.free(ctypes.c_void_p(p + 16))
''', "real glibc abort 'free(): invalid pointer' (SIGABRT)"),
    "device_mismatch": (["python", "torch"], r'''
import torch
progress()
model = torch.nn.Linear(16, 16, device="meta")
log.info("materialising model from meta device")
model = model.to("cpu")
''', "real torch error moving a meta-device module ('Cannot copy out of meta tensor; no data!')"),
    "device_mismatch2": (["python", "torch"], r'''
import torch
progress()
model = torch.nn.Sequential(torch.nn.Linear(8, 8)).to("meta")
x = torch.randn(4, 8)
y = model(x)
''', "real torch meta-vs-cpu device check ('Tensor on device meta is not on the expected device cpu!')"),
    "nan_loss": (["python", "torch"], r'''
import torch
progress()
torch.autograd.set_detect_anomaly(True)
w = torch.tensor([-1.0, 2.0], requires_grad=True)
loss = torch.sqrt(w).sum()
log.info("loss %s", loss.item())
loss.backward()
''', "real torch anomaly-mode error \"Function 'SqrtBackward0' returned nan values in its 0th output.\""),
    "nan_loss_exit0": (["python", "torch"], r'''
import torch
torch.manual_seed(0)
m = torch.nn.Linear(4, 1)
opt = torch.optim.SGD(m.parameters(), lr=float(os.environ.get("CAP_LR", "1e6")))
x = torch.randn(64, 4) * 50
y = torch.randn(64, 1)
for step in range(1, STEPS + 1):
    loss = torch.nn.functional.mse_loss(m(x), y)
    opt.zero_grad(); loss.backward(); opt.step()
    log.info("step %d | loss %.4f", step, loss.item())
log.info("training finished; final loss %s", loss.item())
''', "real diverging SGD run whose loss becomes inf/nan and still exits 0"),
    "traceback": (["python", "torch"], r'''
import torch
from torch.utils.data import Dataset, DataLoader
class DS(Dataset):
    def __init__(self):
        self.rows = [{"input_ids": [1, 2, 3]} for _ in range(64)]
        self.rows[int(os.environ.get("CAP_BAD", "17"))] = {"text": "oops"}
    def __len__(self): return len(self.rows)
    def __getitem__(self, i): return torch.tensor(self.rows[i]["input_ids"])
progress()
for b in DataLoader(DS(), batch_size=4, num_workers=2):
    pass
''', "real DataLoader worker re-raise 'Caught KeyError in DataLoader worker process N. Original Traceback'"),
    "assertion": (["python"], r'''
progress()
seq_len, block = int(os.environ.get("CAP_T", "2048")), 1024
assert seq_len <= block, f"Cannot forward sequence of length {seq_len}, block size is only {block}"
''', "CPython AssertionError with message, captured"),
    "runtime_error": (["python", "torch"], r'''
import torch
progress()
head = torch.nn.Linear(int(os.environ.get("CAP_D", "768")), 10)
feats = torch.randn(8, 1024)
logits = head(feats)
''', "real torch 'mat1 and mat2 shapes cannot be multiplied'"),
    "interrupted": (["python", "sigint"], r'''
log.info("starting training")
import time as _t
for s in range(100000):
    log.info("step %d | loss %.4f | %.1f ms/step", s, 5.0 / (s + 1), 50.0 + s % 13)
    _t.sleep(0.05)
''', "real Ctrl-C: SIGINT delivered to a running training loop (KeyboardInterrupt, killed by SIGINT)"),
    "interrupted_graceful": (["python", "sigterm"], r'''
import signal
stop = {"f": False}
def handler(sig, frm):
    log.warning("Received signal %d (SIGTERM); will checkpoint and exit", sig)
    stop["f"] = True
signal.signal(signal.SIGTERM, handler)
import time as _t
s = 0
while not stop["f"]:
    s += 1
    log.info("step %d | loss %.4f", s, 5.0 / s)
    _t.sleep(0.05)
log.info("saved checkpoint to checkpoints/step_%d.pt", s)
log.info("exiting cleanly")
sys.exit(0)
''', "real SIGTERM delivered to a training loop with a graceful handler (exit 0)"),
    "walltime": (["bash_timeout"], r'''
import time as _t
for s in range(100000):
    log.info("step %d | loss %.4f | %.1f ms/step", s, 5.0 / (s + 1), 50.0 + s % 13)
    _t.sleep(0.05)
''', "real GNU timeout(1) expiry under a bash wrapper (status 124)"),
    "exec_failure": (["bash_cmd"], "", "real bash 'command not found' (status 127)"),
    "disk_full": (["python"], r'''
progress()
log.info("writing shard metadata")
with open("/dev/full", "w") as f:
    for i in range(10000):
        f.write("{\"shard\": %d, \"tokens\": 1048576}\n" % i)
''', "real ENOSPC from writing to /dev/full ('OSError: [Errno 28] No space left on device')"),
    "nccl": (["torchrun", "hang"], r'''
import datetime, torch, torch.distributed as dist
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=int(os.environ.get("CAP_TMO", "6"))))
r = dist.get_rank()
t = torch.ones(1024)
for s in range(1, 6):
    dist.all_reduce(t)
    log.info("rank %d step %d loss %.4f", r, s, 4.0 / s)
if r == 1:
    time.sleep(60)
dist.all_reduce(t)
''', "real gloo collective timeout under torchrun (rank 1 stalls); torch elastic ChildFailedError block"),
    "traceback_dist": (["torchrun"], r'''
import datetime, torch, torch.distributed as dist
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
r = dist.get_rank()
t = torch.ones(16)
for s in range(1, 4):
    dist.all_reduce(t)
    log.info("rank %d step %d ok", r, s)
if r == 1:
    batch = {"pixel_values": t}
    x = batch["input_ids"]
dist.all_reduce(t)
''', "real torchrun run where rank 1 raises KeyError; peer gloo error and the elastic Root Cause block are genuine"),
    "segfault_dist": (["torchrun"], r'''
import ctypes, torch, torch.distributed as dist
dist.init_process_group("gloo")
r = dist.get_rank()
log.info("rank %d ready", r)
progress()
if r == 0:
    ctypes.string_at(0)
time.sleep(3)
''', "real SIGSEGV in rank 0 under torchrun ('Signal 11 (SIGSEGV) received by PID')"),
    "success": (["python", "torch"], r'''
import torch
torch.manual_seed(int(os.environ.get("CAP_SEED", "0")))
m = torch.nn.Sequential(torch.nn.Linear(8, 32), torch.nn.ReLU(), torch.nn.Linear(32, 1))
opt = torch.optim.AdamW(m.parameters(), lr=1e-2)
sched = torch.optim.lr_scheduler.StepLR(opt, 60)
x = torch.randn(256, 8); y = x.sum(1, keepdim=True)
sched.step()
for step in range(1, STEPS + 1):
    loss = torch.nn.functional.mse_loss(m(x), y)
    opt.zero_grad(); loss.backward(); opt.step(); sched.step()
    if True:
        log.info("step %d | loss %.4f | val_error %.4f", step, loss.item(), loss.item() * 1.1)
log.info("final: val_loss nan (no val set)")
log.info("done; saved model to out/model.pt")
''', "real tiny CPU training run with a harmless lr_scheduler-order UserWarning (exit 0)"),
}

CAPTURE_LABEL = {"ram_oom_py": "ram_oom", "segfault_bash": "segfault", "device_mismatch2": "device_mismatch", "nan_loss_exit0": "nan_loss",
                 "interrupted_graceful": "interrupted", "traceback_dist": "traceback", "segfault_dist": "segfault"}


def have_torch():
    try:
        return subprocess.run([sys.executable, "-c", "import torch"], capture_output=True, timeout=120).returncode == 0
    except Exception:
        return False


def run_capture(name, rng, workroot, port):
    kinds, body, prov = CAPTURES[name]
    user, proj = rng.choice(USERS), rng.choice(PROJECTS)
    d = os.path.join(workroot, user, proj)
    os.makedirs(d, exist_ok=True)
    os.chmod(workroot, 0o755)
    script = os.path.join(d, rng.choice(["train.py", "main.py", "finetune.py", "pretrain.py"]))
    with open(script, "w") as f:
        f.write(PRELUDE + textwrap.dedent(body))
    os.chmod(script, 0o755)
    env = dict(os.environ, CAP_SEED=str(rng.randint(0, 10**6)), CAP_STEPS=str(rng.choice([45, 60, 90, 120, 200])),
               CAP_PATH=f"/nonexistent/{proj}/checkpoints/step_{rng.randint(1, 90) * 1000}.pt", CAP_MOD=rng.choice(["flash_attn", "apex", "deepspeed", "bitsandbytes", "xformers", "megablocks"]),
               CAP_N=str(rng.randint(10**12, 10**14)), CAP_BAD=str(rng.randint(0, 63)), CAP_T=str(rng.choice([1536, 2048, 4096])), CAP_D=str(rng.choice([512, 768, 2048])),
               CAP_LR=str(rng.choice([1e5, 1e6, 1e7])), CAP_TMO=str(rng.choice([5, 6, 8])), PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
    if name == "permission":
        ro = os.path.join(workroot, "ro_" + proj)
        os.makedirs(ro, exist_ok=True)
        os.chmod(ro, 0o755)
        env["CAP_PATH"] = os.path.join(ro, f"step_{rng.randint(1, 90) * 1000}.pt")
        os.chmod(d, 0o755)
        for p in (os.path.dirname(d),):
            os.chmod(p, 0o755)
    py = sys.executable
    timeout = 120
    if "torchrun" in kinds:
        torchrun = os.path.join(os.path.dirname(py), "torchrun")
        cmd = [torchrun if os.path.exists(torchrun) else "torchrun", "--nproc_per_node", "2", "--master_port", str(port), script]
    elif "nobody" in kinds:
        cmd = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", py, script]
    elif "bash" in kinds:
        sh = os.path.join(d, "run.sh")
        with open(sh, "w") as f:
            f.write(f"#!/bin/bash\necho \"job started on $(hostname) at $(date)\"\ncd {d}\n{py} {script} --epochs 3\n")
        cmd = ["bash", sh]
    elif "bash_timeout" in kinds:
        sh = os.path.join(d, "run.sh")
        with open(sh, "w") as f:
            f.write(f"#!/bin/bash\nset -x\ncd {d}\ntimeout {rng.choice([3, 4, 5])} {py} {script}\nrc=$?\necho \"train exited with status $rc\"\nexit $rc\n")
        cmd = ["bash", sh]
    elif "bash_cmd" in kinds:
        sh = os.path.join(d, "run.sh")
        tool = rng.choice(["deepspeed_launcher", "torchrun-nightly", "accelerate-launch", "srun_wrapper"])
        with open(sh, "w") as f:
            f.write(f"#!/bin/bash\necho \"job started at $(date)\"\necho \"python: $({py} --version)\"\ncd {d}\n{py} -m pip list 2>/dev/null | head -{rng.randint(45, 90)}\n{py} -c 'import json,sys; print(json.dumps({{\"world_size\": 8, \"config\": \"{proj}.yaml\"}}))'\n{tool} --num_gpus 8 {script} --deepspeed ds_config.json\n")
        cmd = ["bash", sh]
    else:
        cmd = [py, script]
    t0 = time.time()
    if "sigint" in kinds or "sigterm" in kinds:
        p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=d)
        time.sleep(rng.uniform(2.0, 4.0))
        p.send_signal(signal.SIGINT if "sigint" in kinds else signal.SIGTERM)
        out, _ = p.communicate(timeout=60)
        rc = p.returncode
    else:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=d, timeout=timeout)
        out, rc = p.stdout, p.returncode
    text = out.decode("utf-8", "replace")
    return text, rc, prov

# --------------------------------------------------------------------------
# set assembly
# --------------------------------------------------------------------------
COMPOSERS = {"cuda_oom": m_cuda_oom, "nccl": m_nccl, "cuda_runtime": m_cuda_runtime, "ram_oom": m_ram_oom, "segfault": m_segfault,
             "file_not_found": m_file_not_found, "permission": m_permission, "missing_module": m_missing_module, "div_zero": m_div_zero,
             "device_mismatch": m_device_mismatch, "nan_loss": m_nan_loss, "oom_killer": m_oom_killer, "traceback": m_traceback,
             "assertion": m_assertion, "runtime_error": m_runtime_error, "gpu_hardware": m_gpu_hardware, "disk_full": m_disk_full,
             "walltime": m_walltime, "preempted": m_preempted, "interrupted": m_interrupted, "native_abort": m_native_abort,
             "exec_failure": m_exec_failure, "success": m_success}

PLANS = {
    "frozen": dict(seed=20260415, per_class=6, success=18,
                   captures=["div_zero", "file_not_found", "permission", "missing_module", "ram_oom", "segfault", "native_abort", "device_mismatch",
                             "nan_loss", "traceback", "assertion", "runtime_error", "interrupted", "walltime", "exec_failure", "disk_full", "nccl",
                             "traceback_dist", "success", "success"]),
    "dev": dict(seed=77031, per_class=5, success=15,
                captures=["ram_oom_py", "segfault_bash", "device_mismatch2", "nan_loss_exit0", "interrupted_graceful", "segfault_dist", "div_zero",
                          "disk_full", "nccl", "missing_module", "walltime", "exec_failure", "runtime_error", "success", "success"]),
}


def pad_to_min(ctx, lines, minimum=40):
    """Composed logs shorter than `minimum` get more (pre-failure) setup noise at the top."""
    while len(lines) < minimum:
        lines = "\n".join(setup_noise(ctx) + nvidia_smi(ctx)).split("\n") + lines
    return lines


def clamp(lines, maximum=1500):
    lines = "\n".join(lines).split("\n")
    if len(lines) <= maximum:
        return lines
    # drop healthy-training lines from the middle of the first part, never the tail
    keep_tail = lines[-600:]
    head = lines[:-600]
    return head[:maximum - 600] + keep_tail


def build(setname, outdir, only_composed=False):
    plan = PLANS[setname]
    rng = random.Random(plan["seed"])
    logs_dir = os.path.join(outdir, "logs")
    if os.path.isdir(logs_dir):
        shutil.rmtree(logs_dir)
    os.makedirs(logs_dir)
    items = []  # (mode, source, text, code, prov, gpu, driver)
    # ---- captured
    caps = [] if only_composed else list(plan["captures"])
    torch_ok = have_torch()
    workroot = tempfile.mkdtemp(prefix="home-")
    os.chmod(workroot, 0o755)
    port = 29400 + rng.randint(0, 500)
    cap_count = {}
    for name in caps:
        kinds = CAPTURES[name][0]
        if ("torch" in kinds or "torchrun" in kinds) and not torch_ok:
            continue
        port += 1
        try:
            text, rc, prov = run_capture(name, random.Random(rng.randint(0, 10**9)), workroot, port)
        except Exception as e:  # a capture that could not run is skipped (composed logs fill the class)
            sys.stderr.write(f"capture {name} failed: {e}\n")
            continue
        mode = CAPTURE_LABEL.get(name, name)
        items.append((mode, "captured", text, rc, "captured on this machine: " + prov, "none", "none"))
        cap_count[mode] = cap_count.get(mode, 0) + 1
    shutil.rmtree(workroot, ignore_errors=True)
    # ---- composed
    for cls in CLASSES:
        want = plan["success"] if cls == "success" else plan["per_class"]
        koff = rng.randint(0, 99)
        for k in range(max(0, want - cap_count.get(cls, 0))):
            ctx = Ctx(random.Random(rng.randint(0, 10**12)), setname)
            ctx.k, ctx.koff = k, koff
            d = COMPOSERS[cls](ctx)
            lines = clamp(pad_to_min(ctx, "\n".join(d["lines"]).split("\n")))
            items.append((cls, "composed", "\n".join(lines) + "\n", d["code"], d["prov"], ctx.gpu, ctx.driver))
    rng.shuffle(items)
    rows = []
    for i, (mode, src, text, code, prov, gpu, drv) in enumerate(items, 1):
        lid = f"{setname}-{i:04d}"
        rel = f"logs/{lid}.log"
        with open(os.path.join(outdir, rel), "w", encoding="utf-8") as f:
            f.write(text)
        rows.append(dict(id=lid, mode=mode, source=src, log_path=rel, gpu=gpu, driver=drv, true_exit_code=int(code), provenance=prov))
    with open(os.path.join(outdir, "labels.jsonl"), "w") as f:
        for row in rows:
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    return rows


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser()
    ap.add_argument("--set", default=os.path.basename(here) if os.path.basename(here) in PLANS else "frozen")
    ap.add_argument("--out", default=None)
    ap.add_argument("--composed-only", action="store_true", help="skip running the capture programs")
    a = ap.parse_args()
    out = a.out or (here if os.path.basename(here) == a.set else os.path.join(here, a.set))
    os.makedirs(out, exist_ok=True)
    rows = build(a.set, out, a.composed_only)
    counts = {}
    for r_ in rows:
        counts.setdefault(r_["mode"], [0, 0])
        counts[r_["mode"]][0 if r_["source"] == "composed" else 1] += 1
    print(f"wrote {len(rows)} logs to {out}")
    for k in CLASSES:
        if k in counts:
            print(f"  {k:16s} composed={counts[k][0]} captured={counts[k][1]}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Rebuild the dev9 blind set: logs/<id>.log + labels.jsonl.

Stdlib only, seeded.  Captured logs (real runs on a CPU box, see captured/manifest.json)
are copied verbatim; composed logs are assembled from preludes and endings whose error
wording is taken from public sources (URL/project recorded per log in `provenance`).
"""
import json, os, random, shutil, datetime

HERE = os.path.dirname(os.path.abspath(__file__))
SET = "dev9"
R = random.Random(9009)

GPUS = [("NVIDIA A100-SXM4-80GB", 81920), ("NVIDIA A100-SXM4-40GB", 40960), ("NVIDIA H100 80GB HBM3", 81559),
        ("Tesla V100-SXM2-32GB", 32768), ("NVIDIA RTX A6000", 49140), ("NVIDIA L40S", 46068)]
DRIVERS = ["535.104.05", "535.161.08", "550.54.15", "545.23.08", "525.85.12", "550.90.07"]
USERS = ["mchen", "apatel", "jrosen", "lwei", "okafor", "sgarcia", "tnguyen"]
NODES = ["gpu%03d" % i for i in range(1, 40)] + ["dgx%02d" % i for i in range(1, 9)]
MODELS = ["roberta-base", "bert-base-uncased", "google/flan-t5-base", "meta-llama/Llama-2-7b-hf",
          "mistralai/Mistral-7B-v0.1", "gpt2-medium", "microsoft/deberta-v3-large", "EleutherAI/pythia-1.4b"]
MONTH0 = datetime.datetime(2026, 10, 1, 0, 0, 0)


def ts(dt, fmt="%Y-%m-%d %H:%M:%S"):
    return dt.strftime(fmt)


class Log:
    def __init__(self):
        self.lines = []
        self.ev = None
        self.alts = []
        self.rank = None

    def add(self, text):
        for s in text.split("\n"):
            self.lines.append(s)

    def mark(self, text, rank=None):
        """add text; its first line is the evidence line"""
        self.ev = len(self.lines) + 1
        self.rank = rank
        self.add(text)

    def alt(self, text):
        self.alts.append(len(self.lines) + 1)
        self.add(text)

    def nextno(self):
        return len(self.lines) + 1


# ----------------------------------------------------------------- preludes
def sched_header(L, ctx):
    s = ctx["sched"]
    if s == "slurm":
        L.add(f"SLURM_JOB_ID={ctx['jobid']} SLURM_JOB_NODELIST={ctx['node']} SLURM_NTASKS={ctx['ntasks']}")
        L.add(f"Job started: {ctx['start'].strftime('%a %b %d %H:%M:%S %Z%Y').replace('  ', ' ')}")
        L.add(f"CUDA_VISIBLE_DEVICES={','.join(str(i) for i in range(ctx['ngpu']))}")
    elif s == "pbs":
        L.add(f"PBS_JOBID={ctx['jobid']}.pbs01  PBS_O_WORKDIR=/home/{ctx['user']}/proj/{ctx['proj']}")
        if R.random() < 0.5:
            L.add("Warning: no access to tty (Bad file descriptor).")
            L.add("Thus no job control in this shell.")
        L.add(f"Running on {ctx['node']} at {ts(ctx['start'])}")
    elif s == "sge":
        L.add(f"JOB_ID={ctx['jobid']} HOSTNAME={ctx['node']} NSLOTS={4 * ctx['ngpu']}")
        L.add("Loading conda env 'ml311'")
    elif s == "nohup":
        L.add("nohup: ignoring input")
    elif s == "lsf":
        pass  # LSF puts its report on top; written at the end (see lsf_wrap)
    if R.random() < 0.55:
        for i in range(ctx["ngpu"]):
            L.add(f"GPU {i}: {ctx['gpu']} (UUID: GPU-{R.getrandbits(32):08x}-{R.getrandbits(16):04x}-{R.getrandbits(16):04x}-{R.getrandbits(16):04x}-{R.getrandbits(48):012x})")


def lsf_wrap(L, ctx, status_line, term_line=None):
    """LSF mails/appends a report whose header precedes the job output."""
    head = Log()
    start = ctx["start"]; end = ctx["end"]
    head.add(f"Sender: LSF System <lsfadmin@{ctx['node']}>")
    head.add(f"Subject: Job {ctx['jobid']}: <{ctx['proj']}> in cluster <hpc_uni> {'Done' if status_line.startswith('Successfully') else 'Exited'}")
    head.add("")
    head.add(f"Job <{ctx['proj']}> was submitted from host <login02> by user <{ctx['user']}> in cluster <hpc_uni> at {start.strftime('%a %b %d %H:%M:%S %Y')}")
    head.add(f"Job was executed on host(s) <{ctx['node']}>, in queue <gpu>, as user <{ctx['user']}> in cluster <hpc_uni> at {start.strftime('%a %b %d %H:%M:%S %Y')}")
    head.add(f"</home/{ctx['user']}> was used as the home directory.")
    head.add(f"</home/{ctx['user']}/proj/{ctx['proj']}> was used as the working directory.")
    head.add(f"Started at {start.strftime('%a %b %d %H:%M:%S %Y')}")
    head.add(f"Terminated at {end.strftime('%a %b %d %H:%M:%S %Y')}")
    head.add("Results reported at " + end.strftime('%a %b %d %H:%M:%S %Y'))
    head.add("")
    head.add("Your job looked like:")
    head.add("")
    head.add("------------------------------------------------------------")
    head.add("# LSBATCH: User input")
    head.add("./run_train.sh")
    head.add("------------------------------------------------------------")
    head.add("")
    tpos = None
    if term_line:
        tpos = head.nextno()
        head.add(term_line)
    spos = head.nextno()
    head.add(status_line)
    head.add("")
    head.add("Resource usage summary:")
    head.add("")
    head.add(f"    CPU time :                                   {R.randint(2000, 90000)}.{R.randint(10, 99)} sec.")
    head.add(f"    Max Memory :                                 {R.randint(6000, 60000)} MB")
    head.add(f"    Average Memory :                             {R.randint(3000, 6000)}.{R.randint(10, 99)} MB")
    head.add(f"    Total Requested Memory :                     -")
    head.add(f"    Delta Memory :                               -")
    head.add(f"    Max Swap :                                   -")
    head.add(f"    Max Processes :                              {R.randint(4, 40)}")
    head.add(f"    Max Threads :                                {R.randint(40, 400)}")
    head.add(f"    Run time :                                   {int((end - start).total_seconds())} sec.")
    head.add(f"    Turnaround time :                            {int((end - start).total_seconds()) + R.randint(10, 900)} sec.")
    head.add("")
    head.add("The output (if any) follows:")
    head.add("")
    off = len(head.lines)
    L.lines = head.lines + L.lines
    if L.ev is not None:
        L.ev += off
    L.alts = [a + off for a in L.alts]
    return tpos, spos


WARN_POOL = [
    ("/opt/conda/lib/python3.10/site-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()\n  return self.fget.__get__(instance, owner)()", "pytorch torch/_utils.py warning text"),
    ("/home/{user}/proj/{proj}/train.py:{ln}: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.\n  with torch.cuda.amp.autocast(dtype=torch.bfloat16):", "pytorch torch/cuda/amp/autocast_mode.py deprecation"),
    ("/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system is 8, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.\n  warnings.warn(_create_warning_msg(", "pytorch torch/utils/data/dataloader.py _create_warning_msg"),
    ("huggingface/tokenizers: The current process just got forked, after parallelism has already been used. Disabling parallelism to avoid deadlocks...\nTo disable this warning, you can either:\n\t- Avoid using `tokenizers` before the fork if possible\n\t- Explicitly set the environment variable TOKENIZERS_PARALLELISM=(true | false)", "huggingface/tokenizers bindings/python (fork warning)"),
    ("wandb: Network error (ReadTimeout), entering retry loop.", "wandb sdk retry message"),
    ("/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/_functions.py:68: UserWarning: Was asked to gather along dimension 0, but all input tensors were scalars; will instead unsqueeze and return a vector.\n  warnings.warn('Was asked to gather along dimension 0, but all '", "pytorch torch/nn/parallel/_functions.py Gather warning"),
    ("/opt/conda/lib/python3.10/site-packages/transformers/training_args.py:1525: FutureWarning: `evaluation_strategy` is deprecated and will be removed in version 4.46 of 🤗 Transformers. Use `eval_strategy` instead\n  warnings.warn(", "transformers training_args.py deprecation"),
]


def warnings_block(L, ctx, n):
    for w, _ in R.sample(WARN_POOL, n):
        reps = ctx["ranks"] if (ctx["ranks"] > 1 and not w.startswith("wandb")) else 1
        ln = R.randint(40, 300)
        for _r in range(reps):
            L.add(w.format(user=ctx["user"], proj=ctx["proj"], ln=ln))


def torchrun_banner(L, ctx):
    if ctx["ranks"] > 1:
        pid = R.randint(1000, 99999)
        us = R.randint(100000, 989999)
        pre = f"W{ctx['start'].strftime('%m%d %H:%M:%S')}.{us:06d} {pid} torch/distributed/run.py:793] "
        L.add(pre)
        L.add(pre + "*****************************************")
        L.add(pre + "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ")
        L.add(pre + "*****************************************")


def prelude_torch(L, ctx, steps):
    torchrun_banner(L, ctx)
    L.add(f"[{ts(ctx['start'])}] config: model={ctx['model']} bs={ctx['bs']} lr={ctx['lr']} amp={'fp16' if ctx.get('fp16note') else 'bf16'} world_size={ctx['ranks']}")
    warnings_block(L, ctx, R.randint(0, 2))
    loss = R.uniform(2.5, 4.0)
    t = ctx["start"]
    for i in range(steps):
        t += datetime.timedelta(seconds=R.randint(60, 400))
        loss *= R.uniform(0.93, 0.995)
        step = (i + 1) * ctx["log_every"]
        if i in (0, 1) and ctx.get("fp16note"):
            L.add(f"[{ts(t)}] NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: {64.0 / (2 ** i)}")
        L.add(f"[{ts(t)}] epoch {step // 1000} step {step} loss {loss:.4f} lr {ctx['lr']:.2e} grad_norm {R.uniform(0.2, 2.5):.3f} tok/s {R.randint(9000, 60000)}")
    ctx["t"] = t
    ctx["loss"] = loss
    return t


def prelude_hf(L, ctx, steps):
    torchrun_banner(L, ctx)
    m = ctx["model"]
    if "roberta" in m or "bert" in m or "deberta" in m:
        cls = {"roberta-base": "RobertaForSequenceClassification", "bert-base-uncased": "BertForSequenceClassification",
               "microsoft/deberta-v3-large": "DebertaV2ForSequenceClassification"}[m]
        L.add(f"Some weights of {cls} were not initialized from the model checkpoint at {m} and are newly initialized: ['classifier.bias', 'classifier.weight']")
        L.add("You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference.")
    warnings_block(L, ctx, R.randint(0, 2))
    total = steps * ctx["log_every"] * 3
    t = ctx["start"]
    loss = R.uniform(1.5, 3.2)
    for i in range(steps):
        t += datetime.timedelta(seconds=R.randint(100, 500))
        loss *= R.uniform(0.9, 0.995)
        step = (i + 1) * ctx["log_every"]
        el = int((t - ctx["start"]).total_seconds())
        L.add(f"{{'loss': {loss:.4f}, 'grad_norm': {R.uniform(0.5, 6.0):.6f}, 'learning_rate': {ctx['lr'] * (1 - step / total):.4e}, 'epoch': {step / (total / 3):.2f}}}")
        pct = int(100 * step / total)
        L.add(f" {pct:2d}%|{'█' * (pct // 10):<10}| {step}/{total} [{el // 3600:02d}:{el % 3600 // 60:02d}:{el % 60:02d}<{R.randint(1, 20):02d}:{R.randint(0, 59):02d}:{R.randint(0, 59):02d}, {R.uniform(1.1, 4.0):.2f}s/it]")
    ctx["t"] = t
    ctx["total"] = total
    ctx["loss"] = loss
    return t


def prelude_lightning(L, ctx, steps):
    L.add("Using bfloat16 Automatic Mixed Precision (AMP)")
    L.add("GPU available: True (cuda), used: True")
    L.add("TPU available: False, using: 0 TPU cores")
    L.add("HPU available: False, using: 0 HPUs")
    if ctx["ranks"] > 1:
        for r in range(ctx["ranks"]):
            L.add(f"Initializing distributed: GLOBAL_RANK: {r}, MEMBER: {r + 1}/{ctx['ranks']}")
        L.add("----------------------------------------------------------------------------------------------------")
        L.add("distributed_backend=nccl")
        L.add(f"All distributed processes registered. Starting with {ctx['ranks']} processes")
        L.add("----------------------------------------------------------------------------------------------------")
        L.add("")
    L.add(f"LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [{','.join(str(i) for i in range(ctx['ngpu']))}]")
    L.add("")
    L.add("  | Name      | Type             | Params | Mode ")
    L.add("-------------------------------------------------------")
    L.add(f"0 | backbone  | ResNet           | {R.randint(11, 60)}.{R.randint(1, 9)} M | train")
    L.add(f"1 | head      | Linear           | {R.randint(10, 900)} K  | train")
    L.add("2 | criterion | CrossEntropyLoss | 0      | train")
    L.add("-------------------------------------------------------")
    L.add("")
    if R.random() < 0.5:
        L.add("/opt/conda/lib/python3.10/site-packages/lightning/pytorch/trainer/connectors/data_connector.py:424: The 'val_dataloader' does not have many workers which may be a bottleneck. Consider increasing the value of the `num_workers` argument` to `num_workers=7` in the `DataLoader` to improve performance.")
    t = ctx["start"]
    loss = R.uniform(1.0, 2.5)
    nb = R.choice([782, 1251, 391, 2503])
    for ep in range(steps):
        t += datetime.timedelta(seconds=R.randint(300, 1500))
        loss *= R.uniform(0.85, 0.98)
        el = int((t - ctx["start"]).total_seconds()) // (ep + 1)
        L.add(f"Epoch {ep}: 100%|██████████| {nb}/{nb} [{el // 60:02d}:{el % 60:02d}<00:00, {R.uniform(2, 12):.2f}it/s, v_num={ctx['jobid'] % 1000}, train_loss={loss:.3f}, val_loss={loss * 1.1:.3f}, val_acc={min(0.99, 1 - loss / 3):.3f}]")
    ctx["t"] = t
    ctx["nb"] = nb
    ctx["loss"] = loss
    return t


def prelude_deepspeed(L, ctx, steps):
    t = ctx["start"]
    L.add(f"[{ts(t)},{R.randint(100, 999)}] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda (auto detect)")
    L.add(f"[{ts(t)},{R.randint(100, 999)}] [INFO] [comm.py:652:init_distributed] cdb=None")
    L.add(f"[{ts(t)},{R.randint(100, 999)}] [INFO] [comm.py:683:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl")
    L.add(f"[{ts(t)},{R.randint(100, 999)}] [INFO] [config.py:999:print] DeepSpeedEngine configuration:")
    L.add(f"[{ts(t)},{R.randint(100, 999)}] [INFO] [config.py:1003:print]   zero_optimization_stage ...... {R.choice([2, 3])}")
    L.add(f"[{ts(t)},{R.randint(100, 999)}] [INFO] [config.py:1003:print]   fp16_enabled ................. True")
    loss = R.uniform(2.0, 3.5)
    skipped = 0
    for i in range(steps):
        t += datetime.timedelta(seconds=R.randint(60, 300))
        step = (i + 1) * ctx["log_every"]
        if i < 3 and ctx.get("overflow", True):
            scale = 65536 // (2 ** i)
            L.add(f"[{ts(t)},{R.randint(100, 999)}] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {scale}, reducing to {scale // 2}")
            skipped += 1
        loss *= R.uniform(0.92, 0.995)
        L.add(f"[{ts(t)},{R.randint(100, 999)}] [INFO] [logging.py:96:log_dist] [Rank 0] step={step}, skipped={skipped}, lr=[{ctx['lr']:.6e}], mom=[(0.9, 0.95)]")
        L.add(f"step {step} | loss {loss:.4f} | {R.uniform(80, 300):.1f} TFLOPs")
    ctx["t"] = t
    ctx["loss"] = loss
    return t


def prelude_jax(L, ctx, steps):
    t = ctx["start"]
    devs = ", ".join(f"CudaDevice(id={i})" for i in range(ctx["ngpu"]))
    L.add(f"I{t.strftime('%m%d %H:%M:%S')}.{R.randint(100000, 999999)} {R.randint(10000, 99999)} train.py:61] JAX devices: [{devs}]")
    L.add(f"I{t.strftime('%m%d %H:%M:%S')}.{R.randint(100000, 999999)} {R.randint(10000, 99999)} train.py:88] Param count: {R.randint(80, 1400)}M")
    loss = R.uniform(3.0, 6.0)
    for i in range(steps):
        t += datetime.timedelta(seconds=R.randint(60, 300))
        loss *= R.uniform(0.9, 0.995)
        step = (i + 1) * ctx["log_every"]
        L.add(f"I{t.strftime('%m%d %H:%M:%S')}.{R.randint(100000, 999999)} {R.randint(10000, 99999)} train.py:142] [{step}] train/loss={loss:.4f} train/lr={ctx['lr']:.3e} steps_per_sec={R.uniform(1, 9):.2f}")
    ctx["t"] = t
    ctx["loss"] = loss
    return t


def prelude_vllm(L, ctx, steps):
    t = ctx["start"]
    d = t.strftime("%m-%d %H:%M:%S")
    L.add(f"INFO {d} [__init__.py:207] Automatically detected platform cuda.")
    L.add(f"INFO {d} [llm_engine.py:232] Initializing an LLM engine (v0.6.6) with config: model='{ctx['model']}', speculative_config=None, tokenizer='{ctx['model']}', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=4096, download_dir=None, load_format=LoadFormat.AUTO, tensor_parallel_size={ctx['ranks']}, pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, kv_cache_dtype=auto, seed=0")
    L.add(f"INFO {d} [model_runner.py:1094] Starting to load model {ctx['model']}...")
    L.add(f"Loading safetensors checkpoint shards: 100% Completed | 2/2 [00:0{R.randint(3, 9)}<00:00,  {R.uniform(0.2, 0.6):.2f}it/s]")
    L.add(f"INFO {d} [model_runner.py:1099] Loading model weights took {R.uniform(12, 14):.4f} GB")
    ctx["t"] = t
    return t


PRELUDE = {"torch": prelude_torch, "hf": prelude_hf, "lightning": prelude_lightning, "deepspeed": prelude_deepspeed,
           "jax": prelude_jax, "vllm": prelude_vllm}


# ----------------------------------------------------------------- endings
def frames_train(ctx):
    p = f"/home/{ctx['user']}/proj/{ctx['proj']}"
    if ctx["fw"] == "vllm":
        return [(f"{p}/run_generate.py", R.randint(150, 260), "<module>", "main(args)"),
                (f"{p}/run_generate.py", R.randint(60, 140), "main", "outputs = llm.generate(prompts, sampling_params)")]
    if ctx["fw"] == "jax":
        return [(f"{p}/train.py", R.randint(300, 520), "<module>", "app.run(main)"),
                (f"{p}/train.py", R.randint(150, 290), "main", "state, metrics = p_train_step(state, batch)")]
    return [(f"{p}/train.py", R.randint(300, 520), "<module>", "main(args)"),
            (f"{p}/train.py", R.randint(150, 290), "main", "train_one_epoch(model, loader, optimizer, scaler, epoch)")]


def tb(L, frames, final, prefix="", mark=True, rank=None, alt=False):
    """write a python traceback; final exception line is the evidence (if mark)"""
    L.add(prefix + "Traceback (most recent call last):")
    for f, ln, fn, code in frames:
        L.add(f'{prefix}  File "{f}", line {ln}, in {fn}')
        L.add(f"{prefix}    {code}")
    lines = final.split("\n")
    if mark:
        L.mark(prefix + lines[0], rank=rank)
    elif alt:
        L.alt(prefix + lines[0])
    else:
        L.add(prefix + lines[0])
    for x in lines[1:]:
        L.add(prefix + x)


def torchrun_fail(L, ctx, failing_rank, exitcode=1, sig=None, others_sigterm=True):
    t = ctx.get("t", ctx["start"]) + datetime.timedelta(seconds=R.randint(1, 30))
    pid0 = R.randint(20000, 90000)
    L.add(f"W{t.strftime('%m%d %H:%M:%S')}.{R.randint(100000, 999999)} {pid0 - 10} torch/distributed/elastic/multiprocessing/api.py:897] Sending process {pid0 + (1 if failing_rank == 0 else 0)} closing signal SIGTERM")
    L.add(f"E{t.strftime('%m%d %H:%M:%S')}.{R.randint(100000, 999999)} {pid0 - 10} torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: {exitcode}) local_rank: {failing_rank} (pid: {pid0 + failing_rank}) of binary: /opt/conda/bin/python3.10")
    L.add("Traceback (most recent call last):")
    L.add('  File "/opt/conda/bin/torchrun", line 8, in <module>')
    L.add("    sys.exit(main())")
    L.add('  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper')
    L.add("    return f(*args, **kwargs)")
    L.add('  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 919, in main')
    L.add("    run(args)")
    L.add('  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/run.py", line 910, in run')
    L.add("    elastic_launch(")
    L.add('  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 138, in __call__')
    L.add("    return launch_agent(self._config, self._entrypoint, list(args))")
    L.add('  File "/opt/conda/lib/python3.10/site-packages/torch/distributed/launcher/api.py", line 269, in launch_agent')
    L.add("    raise ChildFailedError(")
    L.add("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
    L.add("============================================================")
    L.add(f"{ctx['script']} FAILED")
    L.add("------------------------------------------------------------")
    L.add("Failures:")
    L.add("  <NO_OTHER_FAILURES>")
    L.add("------------------------------------------------------------")
    L.add("Root Cause (first observed failure):")
    L.add("[0]:")
    L.add(f"  time      : {t.strftime('%Y-%m-%d_%H:%M:%S')}")
    L.add(f"  host      : {ctx['node']}")
    L.add(f"  rank      : {failing_rank} (local_rank: {failing_rank})")
    if sig:
        L.add(f"  exitcode  : {exitcode} (pid: {pid0 + failing_rank})")
        L.add("  error_file: <N/A>")
        L.add(f"  traceback : Signal {-exitcode} ({sig}) received by PID {pid0 + failing_rank}")
    else:
        L.add(f"  exitcode  : {exitcode} (pid: {pid0 + failing_rank})")
        L.add("  error_file: <N/A>")
        L.add("  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
    L.add("============================================================")


def srun_fail(L, ctx, task, code=1):
    if ctx["sched"] == "slurm":
        L.add(f"srun: error: {ctx['node']}: task {task}: Exited with exit code {code}")


def slurm_cancel(L, ctx, reason, mark=True):
    t = ctx["end"].strftime("%Y-%m-%dT%H:%M:%S")
    line = f"slurmstepd: error: *** JOB {ctx['jobid']} ON {ctx['node']} CANCELLED AT {t}" + (f" DUE TO {reason} ***" if reason else " ***")
    if ctx["ranks"] > 1 or R.random() < 0.5:
        L.add("srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    if mark:
        L.mark(line)
    else:
        L.add(line)
    if R.random() < 0.6:
        L.alt(f"slurmstepd: error: *** STEP {ctx['jobid']}.0 ON {ctx['node']} CANCELLED AT {t}" + (f" DUE TO {reason} ***" if reason else " ***"))


# each ending returns (exit_code, provenance) and must set L.ev (except success)
def end_success(L, ctx):
    fw = ctx["fw"]
    t = ctx["t"] + datetime.timedelta(seconds=R.randint(30, 400))
    if R.random() < 0.35:
        L.add(f"'(ReadTimeoutError(\"HTTPSConnectionPool(host='huggingface.co', port=443): Read timed out. (read timeout=10)\"), '(Request ID: {R.getrandbits(64):016x})')' thrown while requesting HEAD https://huggingface.co/{ctx['model']}/resolve/main/config.json")
        L.add("Retrying in 1s [Retry 1/5].")
    if R.random() < 0.25 and ctx["ranks"] > 1:
        L.add(f"{ctx['node']}:{R.randint(10000, 99999)}:{R.randint(10000, 99999)} [1] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.1.{R.randint(0, 9)}.{R.randint(2, 250)}<{R.randint(30000, 60000)}> failed : Software caused connection abort")
        L.add(f"{ctx['node']}:{R.randint(10000, 99999)}:{R.randint(10000, 99999)} [1] NCCL INFO Call to connect returned Connection refused, retrying")
    if fw == "hf":
        tot = ctx["total"]
        L.add(f"{{'eval_loss': {ctx['loss'] * 1.05:.4f}, 'eval_accuracy': {R.uniform(0.7, 0.95):.4f}, 'eval_error_rate': {R.uniform(0.05, 0.3):.4f}, 'eval_runtime': {R.uniform(20, 200):.4f}, 'eval_samples_per_second': {R.uniform(50, 400):.3f}, 'eval_steps_per_second': {R.uniform(3, 20):.3f}, 'epoch': 3.0}}")
        L.add(f"{{'train_runtime': {R.uniform(3000, 40000):.4f}, 'train_samples_per_second': {R.uniform(5, 90):.3f}, 'train_steps_per_second': {R.uniform(0.2, 3):.3f}, 'train_loss': {ctx['loss'] * 1.3:.4f}, 'epoch': 3.0}}")
        L.add(f"100%|██████████| {tot}/{tot} [{R.randint(1, 11)}:{R.randint(10, 59)}:{R.randint(10, 59)}<00:00, {R.uniform(1, 4):.2f}s/it]")
        L.add(f"Saving model checkpoint to outputs/{ctx['proj']}/final")
    elif fw == "lightning":
        L.add(f"Epoch {ctx.get('epochs', 9)}: 100%|██████████| {ctx['nb']}/{ctx['nb']} [{R.randint(3, 20):02d}:{R.randint(10, 59):02d}<00:00, {R.uniform(2, 12):.2f}it/s, v_num={ctx['jobid'] % 1000}, train_loss={ctx['loss']:.3f}, val_loss={ctx['loss'] * 1.1:.3f}, val_acc={min(0.99, 1 - ctx['loss'] / 3):.3f}]")
        L.add(f"`Trainer.fit` stopped: `max_epochs={ctx.get('epochs', 9) + 1}` reached.")
        L.add("┏━━━━━━━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━━━━━━━━━━━━━━━━━━━━┓")
        L.add("┃        Test metric        ┃       DataLoader 0        ┃")
        L.add("┡━━━━━━━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━━━━━━━━━━━━━━━━━━━━┩")
        L.add(f"│         test_acc          │    {R.uniform(0.7, 0.95):.16f}    │")
        L.add(f"│        test_error         │    {R.uniform(0.05, 0.3):.16f}    │")
        L.add(f"│         test_loss         │    {ctx['loss'] * 1.1:.16f}    │")
        L.add("└───────────────────────────┴───────────────────────────┘")
    elif fw == "deepspeed":
        L.add(f"[{ts(t)},{R.randint(100, 999)}] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model checkpoint: outputs/{ctx['proj']}/global_step{R.randint(2000, 9000)}/mp_rank_00_model_states.pt")
        L.add(f"[{ts(t)},{R.randint(100, 999)}] [INFO] [torch_checkpoint_engine.py:21:save] [Torch] Saving outputs/{ctx['proj']}/global_step/zero_pp_rank_0_mp_rank_00_optim_states.pt...")
        L.add(f"eval | ppl {R.uniform(5, 30):.2f} | token_error_rate {R.uniform(0.2, 0.5):.4f}")
        L.add("training complete")
    elif fw == "jax":
        L.add(f"I{t.strftime('%m%d %H:%M:%S')}.{R.randint(100000, 999999)} {R.randint(10000, 99999)} train.py:201] eval: loss={ctx['loss'] * 1.05:.4f} error={R.uniform(0.05, 0.3):.4f} bits_per_byte={R.uniform(0.8, 1.3):.4f}")
        L.add(f"I{t.strftime('%m%d %H:%M:%S')}.{R.randint(100000, 999999)} {R.randint(10000, 99999)} checkpoints.py:1093] Saved checkpoint at ckpt/{ctx['proj']}/checkpoint_{R.randint(1000, 9000)}")
    elif fw == "vllm":
        n = R.choice([500, 1319, 2000, 164])
        d = t.strftime("%m-%d %H:%M:%S")
        L.add(f"INFO {d} [gpu_executor.py:122] # GPU blocks: {R.randint(2000, 30000)}, # CPU blocks: 2048")
        L.add(f"Processed prompts: 100%|██████████| {n}/{n} [{R.randint(1, 9):02d}:{R.randint(10, 59):02d}<00:00, {R.uniform(2, 40):.2f}it/s, est. speed input: {R.uniform(1000, 9000):.2f} toks/s, output: {R.uniform(300, 3000):.2f} toks/s]")
        L.add(f"wrote {n} generations to results/{ctx['proj']}.jsonl ; parse_error_count=0 ; exact_match={R.uniform(0.2, 0.8):.4f}")
    else:
        L.add(f"[{ts(t)}] eval: val_loss {ctx['loss'] * 1.05:.4f} top1_error {R.uniform(5, 30):.2f}% mean_abs_error {R.uniform(0.1, 1):.4f}")
        L.add(f"[{ts(t)}] saved checkpoint checkpoints/{ctx['proj']}/final.pt")
        L.add(f"[{ts(t)}] done")
    if ctx["ranks"] > 1 and fw in ("torch", "hf") and R.random() < 0.6:
        for r in R.sample(range(ctx["ranks"]), ctx["ranks"]):
            L.add(f"[rank{r}]:[W{t.strftime('%m%d %H:%M:%S')}.{R.randint(100000000, 999999999)} ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the progress of another member of the process group. This constraint has always been present,  but this warning has only been added since PyTorch 2.4 (function operator())")
    return 0, "composed success; ProcessGroupNCCL destroy warning text as quoted in public logs (PyTorch>=2.4); framework banners/warnings from pytorch, transformers, lightning, deepspeed, vllm sources; hub retry text from huggingface_hub; NCCL WARN text from NVIDIA/nccl misc/socket.cc"


def end_cuda_oom(L, ctx):
    gib_tot = {81920: 79.14, 40960: 39.39, 81559: 79.11, 32768: 31.74, 49140: 47.53, 46068: 44.53}[ctx["gpumem"]]
    req = R.choice(["20.00 MiB", "1.95 GiB", "512.00 MiB", "3.91 GiB", "224.00 MiB", "8.00 GiB"])
    free = R.choice(["11.06 MiB", "1.81 MiB", "405.69 MiB", "137.06 MiB"])
    alloc = gib_tot - R.uniform(0.6, 2.0)
    gidx = ctx.setdefault("oom_rank", R.randrange(ctx["ranks"]) if (ctx["ranks"] > 1 and ctx["fw"] != "vllm") else 0)
    msg = (f"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {req}. GPU {gidx} has a total capacity of {gib_tot:.2f} GiB of which {free} is free. "
           f"Including non-PyTorch memory, this process has {gib_tot - 0.05:.2f} GiB memory in use. Of the allocated memory {alloc:.2f} GiB is allocated by PyTorch, and {R.uniform(0.1, 0.9) * 1000:.2f} MiB is reserved by PyTorch but unallocated. "
           "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
    fw = ctx["fw"]
    prov = "wording: pytorch c10/cuda/CUDACachingAllocator.cpp OOM message as quoted in github.com/pytorch/pytorch/issues/16417 and github.com/murong-xu/CADS/issues/4"
    if fw == "jax":
        nbytes = R.randint(2, 30) * 1024 ** 3 + R.randint(0, 10 ** 8)
        fr = frames_train(ctx)
        tb(L, fr + [("/opt/conda/lib/python3.10/site-packages/jax/_src/interpreters/pxla.py", 1275, "__call__", "results = self.xla_executable.execute_sharded(")],
           f"jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate {nbytes} bytes.\nBufferAssignment OOM Debugging.\nBufferAssignment stats:\n             parameter allocation:    {R.uniform(1, 9):.2f}GiB\n              constant allocation:         0B\n        maybe_live_out allocation:    {R.uniform(1, 9):.2f}GiB\n     preallocated temp allocation:   {R.uniform(10, 40):.2f}GiB\n                 total allocation:   {R.uniform(40, 78):.2f}GiB")
        return 1, "wording: jax XlaRuntimeError RESOURCE_EXHAUSTED as in github.com/jax-ml/jax/issues/13428, github.com/patrickbryant1/AFProfile/issues/8"
    if fw == "vllm":
        d = ctx["t"].strftime("%m-%d %H:%M:%S")
        L.add(f"INFO {d} [worker.py:241] Memory profiling takes {R.uniform(3, 9):.2f} seconds")
        L.mark(f"ERROR {d} [engine.py:160] " + msg)
        L.add("Traceback (most recent call last):")
        L.add('  File "/opt/conda/lib/python3.10/site-packages/vllm/worker/model_runner.py", line 1355, in profile_run')
        L.add("    self.execute_model(model_input, kv_caches, intermediate_tensors)")
        L.alt(msg)
        return 1, prov + "; vLLM ERROR-prefixed form as in github.com/kaito-project/kaito/issues/976"
    if ctx["ranks"] > 1:
        r = gidx
        pre = f"[rank{r}]: "
        fr = frames_train(ctx) + [("/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", 1553, "_call_impl", "return forward_call(*args, **kwargs)")]
        tb(L, fr, msg, prefix=pre, rank=r)
        torchrun_fail(L, ctx, r)
        srun_fail(L, ctx, 0)
        return 1, prov + "; [rankN]: prefixed form as in github.com/OpenHelix-Team/cobra/issues/24; torchrun ChildFailedError from torch/distributed/elastic"
    fr = frames_train(ctx) + [("/opt/conda/lib/python3.10/site-packages/torch/_tensor.py", 521, "backward", "torch.autograd.backward(")]
    if R.random() < 0.4:
        msg2 = (f"RuntimeError: CUDA out of memory. Tried to allocate {req} (GPU 0; {gib_tot:.2f} GiB total capacity; {alloc:.2f} GiB already allocated; {free} free; {alloc + 0.3:.2f} GiB reserved in total by PyTorch) "
                "If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF")
        tb(L, fr, msg2)
        return 1, "wording: older pytorch OOM message (max_split_size_mb form) as quoted in github.com/pytorch/pytorch/issues/16417 thread"
    tb(L, fr, msg)
    return 1, prov


def end_nccl(L, ctx):
    kind = R.choice(["watchdog", "watchdog", "remote", "system"])
    n = max(ctx["ranks"], 2)
    t = ctx["t"] + datetime.timedelta(seconds=600)
    seq = R.randint(500, 90000)
    numel = R.randint(10 ** 5, 5 * 10 ** 8)
    if kind == "watchdog":
        order = list(range(n)); R.shuffle(order)
        for i, r in enumerate(order):
            line = (f"[rank{r}]:[E{t.strftime('%m%d %H:%M:%S')}.{R.randint(100000000, 999999999)} ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective operation timeout: "
                    f"WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000) ran for {600000 + R.randint(5, 99)} milliseconds before timing out.")
            if i == 0:
                L.mark(line, rank=r)
            else:
                L.add(line)
            L.add(f"[rank{r}]:[E{t.strftime('%m%d %H:%M:%S')}.{R.randint(100000000, 999999999)} ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank {r}] Exception (either an error or timeout) detected by watchdog at work: {seq}, last enqueued NCCL work: {seq + 2}, last completed NCCL work: {seq - 1}.")
        r = order[0]
        L.add(f"[rank{r}]:[E{t.strftime('%m%d %H:%M:%S')}.{R.randint(100000000, 999999999)} ProcessGroupNCCL.cpp:621] [Rank {r}] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.")
        L.add(f"[rank{r}]:[E{t.strftime('%m%d %H:%M:%S')}.{R.randint(100000000, 999999999)} ProcessGroupNCCL.cpp:627] [Rank {r}] To avoid data inconsistency, we are taking the entire process down.")
        L.add("terminate called after throwing an instance of 'c10::DistBackendError'")
        L.add(f"  what():  [PG 0 (default_pg) Rank {r}] Process group watchdog thread terminated with exception: [Rank {r}] Watchdog caught collective operation timeout: WorkNCCL(SeqNum={seq}, OpType=ALLREDUCE, NumelIn={numel}, NumelOut={numel}, Timeout(ms)=600000) ran for {600000 + R.randint(5, 99)} milliseconds before timing out.")
        ctx["t"] = t
        torchrun_fail(L, ctx, r, exitcode=-6, sig="SIGABRT")
        srun_fail(L, ctx, 0)
        return 1, "wording: ProcessGroupNCCL watchdog timeout lines as in github.com/hiyouga/LlamaFactory/issues/7396 and github.com/XPixelGroup/BasicSR/issues/737; terminate/DistBackendError from pytorch ProcessGroupNCCL.cpp"
    if kind == "remote":
        r = R.randrange(n)
        host = ctx["node"]
        L.add(f"{host}:{R.randint(10000, 99999)}:{R.randint(10000, 99999)} [{r}] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB ib0:10.3.{R.randint(0, 9)}.{R.randint(2, 250)}<0>")
        L.mark(f"{host}:{R.randint(10000, 99999)}:{R.randint(10000, 99999)} [{r}] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.3.{R.randint(0, 9)}.{R.randint(2, 250)}<{R.randint(30000, 60000)}> with error 12, opcode 0, len 0, vendor err 129 (Recv) localGid ::ffff:10.3.1.{R.randint(2, 250)} remoteGidsfe80::{R.getrandbits(16):x}:{R.getrandbits(16):x}", rank=r)
        fr = frames_train(ctx) + [("/opt/conda/lib/python3.10/site-packages/torch/distributed/c10d_logger.py", 83, "wrapper", "return func(*args, **kwargs)"),
                                  ("/opt/conda/lib/python3.10/site-packages/torch/distributed/distributed_c10d.py", 2288, "all_reduce", "work = group.allreduce([tensor], opts)")]
        tb(L, fr, f"torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, remote process exited or there was a network error, NCCL version 2.21.5\nncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\nLast error:\nNET/IB : Got completion from peer 10.3.1.{R.randint(2, 250)}<{R.randint(30000, 60000)}> with error 12, opcode 0, len 0, vendor err 129 (Recv) localGid ::ffff:10.3.1.{R.randint(2, 250)} remoteGidsfe80::1", prefix=f"[rank{r}]: ", mark=False, alt=True)
        torchrun_fail(L, ctx, r)
        srun_fail(L, ctx, 0)
        return 1, "wording: NET/IB completion error 12 + ncclRemoteError from github.com/tatsu-lab/stanford_alpaca/issues/207 and github.com/NVIDIA/nccl/issues/2076"
    r = R.randrange(n)
    fr = frames_train(ctx)[:1] + [(f"/home/{ctx['user']}/proj/{ctx['proj']}/train.py", 88, "setup", "model = DDP(model, device_ids=[local_rank])"),
                                   ("/opt/conda/lib/python3.10/site-packages/torch/nn/parallel/distributed.py", 825, "__init__", "_verify_param_shape_across_processes(self.process_group, parameters)"),
                                   ("/opt/conda/lib/python3.10/site-packages/torch/distributed/utils.py", 288, "_verify_param_shape_across_processes", "return dist._verify_params_across_processes(process_group, tensors, logger)")]
    tb(L, fr, "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5\nncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. \nLast error:\nsocketStartConnect: Connect to 10.1.0.12<54321> failed : Software caused connection abort", prefix=f"[rank{r}]: ", rank=r)
    torchrun_fail(L, ctx, r)
    srun_fail(L, ctx, 0)
    return 1, "wording: 'unhandled system error' DistBackendError from github.com/NVIDIA/nccl/issues/1657, github.com/pytorch/pytorch/issues/17349; ncclSystemError text from nccl src/misc/utils / pytorch NCCLUtils"


def end_cuda_runtime(L, ctx):
    kind = R.choice(["assert", "illegal", "cublas", "nokernel"])
    fr = frames_train(ctx)
    tail = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
    if kind == "assert":
        for i, th in enumerate(sorted(R.sample(range(64), 3))):
            line = f"../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [{th},0,0] Assertion `t >= 0 && t < n_classes` failed."
            if i == 0:
                L.mark(line)
            else:
                L.add(line)
        tb(L, fr + [(f"/home/{ctx['user']}/proj/{ctx['proj']}/train.py", 212, "train_one_epoch", "running_loss += loss.item()")],
           "RuntimeError: CUDA error: device-side assert triggered\n" + tail, mark=False, alt=True)
        return 1, "wording: device-side assert with `t >= 0 && t < n_classes` from github.com/layumi/Person_reID_baseline_pytorch/issues/372; trailer text from pytorch c10/cuda/CUDAException"
    if kind == "illegal":
        tb(L, fr + [("/opt/conda/lib/python3.10/site-packages/torch/_tensor.py", 521, "backward", "torch.autograd.backward(")],
           "RuntimeError: CUDA error: an illegal memory access was encountered\n" + tail)
        return 1, "wording: cudaErrorIllegalAddress string 'an illegal memory access was encountered' (CUDA runtime) with pytorch c10/cuda trailer, e.g. github.com/pytorch/pytorch/issues (illegal memory access reports)"
    if kind == "cublas":
        tb(L, fr + [("/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py", 117, "forward", "return F.linear(input, self.weight, self.bias)")],
           "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`")
        return 1, "wording: pytorch aten/src/ATen/cuda/CUDABlas.cpp TORCH_CUDABLAS_CHECK message"
    tb(L, fr[:1] + [(f"/home/{ctx['user']}/proj/{ctx['proj']}/train.py", 61, "main", "model = build_model(cfg).cuda()")],
       "RuntimeError: CUDA error: no kernel image is available for execution on the device\n" + tail)
    return 1, "wording: cudaErrorNoKernelImageForDevice string with pytorch trailer (seen in many pytorch issues about sm_XX support)"


def end_gpu_hw(L, ctx):
    kind = R.choice(["ecc", "lost", "ecc"])
    fr = frames_train(ctx)
    tail = ("CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.\n"
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1\nCompile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
    if kind == "ecc":
        pre = f"[rank{R.randrange(ctx['ranks'])}]: " if ctx["ranks"] > 1 else ""
        r = int(pre[5:-3]) if pre else None
        tb(L, fr, "RuntimeError: CUDA error: uncorrectable ECC error encountered\n" + tail, prefix=pre, rank=r)
        if ctx["ranks"] > 1:
            torchrun_fail(L, ctx, r)
        return 1, "wording: 'CUDA error: uncorrectable ECC error encountered' from github.com/vllm-project/vllm/issues/5222 and github.com/tloen/alpaca-lora/issues/123"
    tb(L, fr, "RuntimeError: CUDA error: unspecified launch failure\n" + tail, mark=False)
    L.add("+ nvidia-smi")
    L.mark(f"Unable to determine the device handle for GPU0000:{R.choice(['17', '41', '4F', 'B3'])}:00.0: Unknown Error")
    return 1, "wording: nvidia-smi 'Unable to determine the device handle for GPU...: Unknown Error' after GPU lost, from github.com/deepspeedai/DeepSpeed/issues/5482 and github.com/NVIDIA/open-gpu-kernel-modules/issues/387"


def end_walltime(L, ctx):
    s = ctx["sched"]
    if s == "pbs":
        lim = R.choice([86400, 172800, 43200])
        L.mark(f"=>> PBS: job killed: walltime {lim + R.randint(5, 60)} exceeded limit {lim}")
        return -15, "wording: '=>> PBS: job killed: walltime N exceeded limit N' from github.com/marbl/canu/issues/1214"
    if s == "lsf":
        ctx["lsf_term"] = "TERM_RUNLIMIT: job killed after reaching LSF run time limit."
        ctx["lsf_status"] = "Exited with exit code 140."
        return 140, "wording: LSF report 'TERM_RUNLIMIT: job killed after reaching LSF run time limit.' / 'Exited with exit code 140.' from github.com/marbl/canu/issues/444"
    if s in ("nohup", "sge"):
        # timeout(1) wrapper: no message from timeout itself; the lab script prints the status
        L.add(f"[{ts(ctx['end'])}] run_train.sh: training command exited with status 124")
        L.mark("run_train.sh: hit the 48h timeout(1) limit, resubmit with --resume")
        return 124, "composed: timeout(1) exit status 124 (GNU coreutils timeout documents 124 on time out); lab wrapper echo lines"
    slurm_cancel(L, ctx, "TIME LIMIT")
    return -15, "wording: slurmstepd '*** JOB N ON node CANCELLED AT ... DUE TO TIME LIMIT ***' from github.com/ZettaAI/zetta_utils/issues/671 and github.com/labsyspharm/mcmicro/issues/163"


def end_preempted(L, ctx):
    if ctx["fw"] == "lightning" and R.random() < 0.5:
        L.add("[rank: 0] Received SIGTERM: 15")
    slurm_cancel(L, ctx, "PREEMPTION")
    return -15, "wording: 'slurmstepd: error: *** JOB N ON node CANCELLED AT ... DUE TO PREEMPTION ***' from github.com/SystemsGenetics/GEMmaker/pull/242"


def end_interrupted(L, ctx):
    if ctx["sched"] == "slurm":
        slurm_cancel(L, ctx, None)
        return -15, "wording: scancel form 'slurmstepd: error: *** JOB N ON node CANCELLED AT ... ***' (no reason) as in github.com/chrisknewman/tusas/issues/149 / bcbio #741"
    fr = frames_train(ctx) + [("/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", 631, "__next__", "data = self._next_data()")]
    L.add("^C")
    tb(L, fr, "KeyboardInterrupt")
    return -2, "CPython KeyboardInterrupt traceback"


def end_oom_killer(L, ctx):
    if ctx["sched"] == "slurm":
        if R.random() < 0.5:
            fr = frames_train(ctx) + [("/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/signal_handling.py", 67, "handler", "_error_if_any_worker_fails()")]
            tb(L, fr, f"RuntimeError: DataLoader worker (pid {R.randint(10000, 99999)}) is killed by signal: Killed. ", mark=False, alt=True)
        L.mark(f"slurmstepd: error: Detected 1 oom_kill event in StepId={ctx['jobid']}.0. Some of the step tasks have been OOM Killed.")
        L.add(f"srun: error: {ctx['node']}: task 0: Out Of Memory")
        return 137, "wording: 'Detected 1 oom_kill event in StepId=... Some of the step tasks have been OOM Killed.' + 'srun: error: node: task 0: Out Of Memory' from github.com/nextflow-io/nextflow/issues/5932; DataLoader 'is killed by signal: Killed.' from pytorch torch/utils/data/_utils/signal_handling"
    L.mark(f"/home/{ctx['user']}/proj/{ctx['proj']}/run_train.sh: line 23: {R.randint(10000, 99999)} Killed                  python train.py --config configs/{ctx['proj']}.yaml")
    return 137, "composed: bash job-control 'Killed' report (same form as captured oom_killer run in this set)"


def end_disk(L, ctx):
    kind = R.choice(["quota", "streamwriter", "nospace"])
    p = f"/home/{ctx['user']}/proj/{ctx['proj']}"
    fr = frames_train(ctx)[:1] + [(f"{p}/train.py", 377, "save_checkpoint", "torch.save(state, path)"),
                                   ("/opt/conda/lib/python3.10/site-packages/torch/serialization.py", 652, "save", "_save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)")]
    if kind == "streamwriter":
        tb(L, fr + [("/opt/conda/lib/python3.10/site-packages/torch/serialization.py", 886, "_save", "zip_file.write_record(name, storage, num_bytes)")],
           f"RuntimeError: [enforce fail at inline_container.cc:778] . PytorchStreamWriter failed writing file data/{R.randint(2, 300)}: file write failed")
        return 1, "wording: PytorchStreamWriter 'file write failed' (disk full) from github.com/zai-org/ChatGLM-6B/issues/1166 and github.com/pytorch/pytorch/issues/121833"
    if kind == "quota":
        tb(L, fr[:2] + [("/opt/conda/lib/python3.10/site-packages/torch/serialization.py", 651, "save", "with _open_zipfile_writer(f) as opened_zipfile:")],
           f"OSError: [Errno 122] Disk quota exceeded: '/home/{ctx['user']}/scratch/ckpt/{ctx['proj']}/step_{R.randint(1000, 9000)}.pt'")
        return 1, "wording: 'OSError: [Errno 122] Disk quota exceeded' from github.com/open-mmlab/mmdetection/issues/12069 and github.com/KennthShang/HostG/issues/7"
    tb(L, fr[:1] + [(f"{p}/data/preprocess.py", 96, "write_shard", "np.save(out_path, arr)")],
       f"OSError: [Errno 28] No space left on device")
    return 1, "CPython OSError errno 28 strerror 'No space left on device' (same as captured disk_full run)"


def end_traceback(L, ctx):
    p = f"/home/{ctx['user']}/proj/{ctx['proj']}"
    choices = [
        ([(f"{p}/data/collate.py", 41, "__call__", 'labels = torch.tensor([ex["label"] for ex in batch])')], "KeyError: 'label'", "CPython KeyError"),
        ([(f"{p}/eval/metrics.py", 77, "compute_metrics", "preds, labels = eval_pred")], "ValueError: too many values to unpack (expected 2)", "CPython unpack ValueError"),
        ([("/opt/conda/lib/python3.10/site-packages/transformers/tokenization_utils_base.py", 2765, "_get_padding_truncation_strategies", "raise ValueError(")],
         "ValueError: Asking to pad but the tokenizer does not have a padding token. Please select a token to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new pad token via `tokenizer.add_special_tokens({'pad_token': '[PAD]'})`.",
         "transformers tokenization_utils_base.py padding ValueError"),
        ([(f"{p}/eval/generate.py", 133, "postprocess", "answer = match.group(1).strip()")], "AttributeError: 'NoneType' object has no attribute 'group'", "CPython AttributeError"),
        ([(f"{p}/data/dataset.py", 58, "__getitem__", "img = self.transform(Image.open(path))")],
         f"PIL.UnidentifiedImageError: cannot identify image file '/scratch/{ctx['user']}/imagenet/train/n0{R.randint(1000000, 9999999)}/img_{R.randint(1000, 9999)}.JPEG'", "Pillow PIL/Image.py open() error text"),
        ([(f"{p}/eval/metrics.py", 90, "compute_metrics", 'results["f1"] = f1_score(labels, preds, average=avg)')], "NameError: name 'avg' is not defined", "CPython NameError"),
        ([(f"{p}/data/dataset.py", 71, "__getitem__", "ids = self.index[idx]")], "IndexError: index 48213 is out of bounds for axis 0 with size 48000", "numpy IndexError text"),
        ([(f"{p}/configs/load.py", 22, "load_cfg", "return yaml.safe_load(f)")],
         'yaml.scanner.ScannerError: mapping values are not allowed here\n  in "configs/sweep.yaml", line 14, column 12', "PyYAML scanner error text"),
    ]
    frs, final, src = R.choice(choices)
    fr = frames_train(ctx) + frs
    if ctx["ranks"] > 1 and R.random() < 0.5:
        r = R.randrange(ctx["ranks"])
        tb(L, fr, final, prefix=f"[rank{r}]: ", rank=r)
        torchrun_fail(L, ctx, r)
        srun_fail(L, ctx, 0)
        return 1, src + "; torchrun ChildFailedError block from torch/distributed/elastic/multiprocessing/errors"
    if ctx["fw"] == "hf" and R.random() < 0.5:
        fr = fr[:1] + [("/opt/conda/lib/python3.10/site-packages/transformers/trainer.py", 1938, "train", "return inner_training_loop("),
                       ("/opt/conda/lib/python3.10/site-packages/transformers/trainer.py", 2279, "_inner_training_loop", "for step, inputs in enumerate(epoch_iterator):")] + frs
    tb(L, fr, final)
    srun_fail(L, ctx, 0)
    return 1, src


def end_file_not_found(L, ctx):
    p = f"/home/{ctx['user']}/proj/{ctx['proj']}"
    path = R.choice([f"/scratch/{ctx['user']}/data/{ctx['proj']}/train.arrow", f"{p}/checkpoints/last.ckpt", f"/datasets/coco/annotations/instances_val2017.json", f"{p}/outputs/vocab.json"])
    fr = frames_train(ctx)[:1] + [(f"{p}/data/dataset.py", 34, "__init__", "with open(path) as f:")]
    tb(L, fr, f"FileNotFoundError: [Errno 2] No such file or directory: '{path}'")
    srun_fail(L, ctx, 0)
    return 1, "CPython FileNotFoundError errno 2 text"


def end_missing_module(L, ctx):
    kind = R.choice(["mod", "so"])
    p = f"/home/{ctx['user']}/proj/{ctx['proj']}"
    if kind == "mod":
        m = R.choice(["deepspeed", "flash_attn", "peft", "timm", "bitsandbytes"])
        tb(L, [(f"{p}/train.py", 12, "<module>", f"import {m}")], f"ModuleNotFoundError: No module named '{m}'")
        return 1, "CPython ModuleNotFoundError text"
    tb(L, [(f"{p}/train.py", 3, "<module>", "import torch"), ("/opt/conda/lib/python3.10/site-packages/torch/__init__.py", 237, "<module>", "from torch._C import *  # noqa: F403")],
       "ImportError: libcudnn.so.8: cannot open shared object file: No such file or directory")
    return 1, "dynamic loader 'cannot open shared object file: No such file or directory' ImportError as in pytorch issues about missing libcudnn"


def end_permission(L, ctx):
    path = R.choice(["/projects/nlp-shared/checkpoints/", "/datasets/laion/.cache/", "/home/shared/hf_cache/hub/"]) + R.choice(["run_0412", "models--gpt2", "lock"])
    tb(L, frames_train(ctx)[:1] + [(f"/home/{ctx['user']}/proj/{ctx['proj']}/utils/io.py", 18, "ensure_dir", "os.makedirs(path, exist_ok=True)"),
                                   ("/opt/conda/lib/python3.10/os.py", 225, "makedirs", "mkdir(name, mode)")],
       f"PermissionError: [Errno 13] Permission denied: '{path}'")
    return 1, "CPython PermissionError errno 13 text"


def end_device_mismatch(L, ctx):
    tb(L, frames_train(ctx) + [("/opt/conda/lib/python3.10/site-packages/torch/nn/modules/linear.py", 117, "forward", "return F.linear(input, self.weight, self.bias)")],
       R.choice(["RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument mat1 in method wrapper_CUDA_addmm)",
                 "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cpu and cuda:0! (when checking argument for argument index in method wrapper_CUDA__index_select)"]))
    return 1, "wording: 'Expected all tensors to be on the same device...' from github.com/kijai/ComfyUI-FluxTrainer/issues/116 and github.com/wmyw96/FAST-NN/issues/1"


def end_nan(L, ctx):
    fw = ctx["fw"]
    t = ctx["t"]
    if fw == "deepspeed":
        for i, sc in enumerate([8, 4, 2, 1]):
            t += datetime.timedelta(seconds=R.randint(60, 200))
            line = f"[{ts(t)},{R.randint(100, 999)}] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: {sc}, reducing to {max(sc // 2, 1)}"
            if i == 0:
                L.alt(line)
            else:
                L.add(line)
        tb(L, frames_train(ctx) + [("/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/engine.py", 2169, "step", "self._take_model_step(lr_kwargs)"),
                                   ("/opt/conda/lib/python3.10/site-packages/deepspeed/runtime/fp16/loss_scaler.py", 175, "update_scale", 'raise Exception(')],
           "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.")
        return 1, "wording: DeepSpeed loss_scaler 'Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.' from github.com/ymcui/Chinese-LLaMA-Alpaca/issues/534"
    loss = ctx.get("loss", 2.0)
    step = 1000 * R.randint(3, 9)
    L.add(f"[{ts(t)}] step {step} loss {loss * 3.7:.4f} grad_norm {R.uniform(200, 9000):.1f}")
    L.mark(f"[{ts(t)}] step {step + 10} loss nan grad_norm nan")
    L.add(f"[{ts(t)}] step {step + 20} loss nan grad_norm nan")
    tb(L, frames_train(ctx), f"FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering the learning rate, using gradient clipping or increasing the batch size.", mark=False, alt=True)
    return 1, "wording: fairseq 'Minimum loss scale reached (0.0001). Your loss is probably exploding...' (fairseq/optim/dynamic_loss_scaler.py); nan loss lines composed"


def end_ram(L, ctx):
    kind = R.choice(["bad_alloc", "memerr"])
    if kind == "bad_alloc":
        L.mark("terminate called after throwing an instance of 'std::bad_alloc'")
        L.add("  what():  std::bad_alloc")
        L.add(f"/home/{ctx['user']}/proj/{ctx['proj']}/run_train.sh: line 19: {R.randint(10000, 99999)} Aborted                 (core dumped) python preprocess.py --num-proc 32")
        return 134, "libstdc++ terminate text for std::bad_alloc; bash job-control 'Aborted (core dumped)'"
    tb(L, frames_train(ctx)[:1] + [(f"/home/{ctx['user']}/proj/{ctx['proj']}/data/build_index.py", 64, "build", "feats = np.concatenate(chunks, axis=0)")],
       f"numpy.core._exceptions._ArrayMemoryError: Unable to allocate {R.randint(60, 900)}. GiB for an array with shape ({R.randint(10 ** 7, 10 ** 8)}, 768) and data type float32".replace(". GiB", f".{R.randint(1, 9)} GiB"))
    return 1, "numpy _ArrayMemoryError text (same form as captured ram_oom run)"


def end_segfault(L, ctx):
    if ctx["ranks"] > 1:
        r = R.randrange(ctx["ranks"])
        ctx["t"] = ctx["t"]
        L.mark("ERROR: Unexpected segmentation fault encountered in worker.", rank=r)
        pid = R.randint(10000, 99999)
        tb(L, frames_train(ctx) + [("/opt/conda/lib/python3.10/site-packages/torch/utils/data/dataloader.py", 1133, "_try_get_data", "raise RuntimeError(f'DataLoader worker (pid(s) {pids_str}) exited unexpectedly') from e")],
           f"RuntimeError: DataLoader worker (pid(s) {pid}) exited unexpectedly", prefix=f"[rank{r}]: ", mark=False, alt=True)
        torchrun_fail(L, ctx, r)
        return 1, "wording: pytorch DataLoader 'ERROR: Unexpected segmentation fault encountered in worker.' (torch/csrc/DataLoader.cpp) and 'DataLoader worker (pid(s) N) exited unexpectedly' (torch/utils/data/dataloader.py); torchrun root-cause block"
    L.mark(f"/home/{ctx['user']}/proj/{ctx['proj']}/run_train.sh: line 31: {R.randint(10000, 99999)} Segmentation fault      (core dumped) python train.py --config configs/{ctx['proj']}.yaml")
    return 139, "bash job-control 'Segmentation fault (core dumped)' report (same form as captured segfault runs)"


def end_native_abort(L, ctx):
    L.mark("terminate called without an active exception")
    L.add(f"/home/{ctx['user']}/proj/{ctx['proj']}/run_train.sh: line 27: {R.randint(10000, 99999)} Aborted                 (core dumped) python train.py --config configs/{ctx['proj']}.yaml")
    return 134, "libstdc++ 'terminate called without an active exception' (std::thread destroyed while joinable) + bash 'Aborted (core dumped)'"


def end_exec(L, ctx):
    if R.random() < 0.5:
        L.mark(f"/var/spool/slurmd/job{ctx['jobid']}/slurm_script: line 18: python: command not found" if ctx["sched"] == "slurm" else f"/home/{ctx['user']}/proj/{ctx['proj']}/run_train.sh: line 18: python: command not found")
        return 127, "bash 'command not found' (exit 127)"
    L.mark(f"/home/{ctx['user']}/proj/{ctx['proj']}/run_train.sh: line 9: /home/{ctx['user']}/bin/micromamba: cannot execute binary file: Exec format error")
    return 126, "bash 'cannot execute binary file: Exec format error' (exit 126)"


def end_div(L, ctx):
    tb(L, frames_train(ctx)[:1] + [(f"/home/{ctx['user']}/proj/{ctx['proj']}/eval/metrics.py", 55, "evaluate", "acc = correct / total")],
       R.choice(["ZeroDivisionError: division by zero", "ZeroDivisionError: float division by zero"]))
    return 1, "CPython ZeroDivisionError text"


def end_assert(L, ctx):
    if R.random() < 0.5:
        tb(L, frames_train(ctx)[:1] + [(f"/home/{ctx['user']}/proj/{ctx['proj']}/train.py", 40, "main", "model = model.cuda()"),
                                       ("/opt/conda/lib/python3.10/site-packages/torch/cuda/__init__.py", 310, "_lazy_init", 'raise AssertionError("Torch not compiled with CUDA enabled")')],
           "AssertionError: Torch not compiled with CUDA enabled")
        return 1, "pytorch torch/cuda/__init__.py _lazy_init AssertionError text"
    tb(L, frames_train(ctx) + [(f"/home/{ctx['user']}/proj/{ctx['proj']}/model/attn.py", 77, "forward", "assert q.shape[-1] % self.num_heads == 0")], "AssertionError")
    return 1, "CPython bare AssertionError"


def end_runtime(L, ctx):
    kind = R.choice(["state", "stack", "backward"])
    if kind == "state":
        tb(L, frames_train(ctx)[:1] + [("/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py", 2215, "load_state_dict", "raise RuntimeError('Error(s) in loading state_dict for {}:\\n\\t{}'.format(")],
           "RuntimeError: Error(s) in loading state_dict for ResNet:\n\tsize mismatch for fc.weight: copying a param with shape torch.Size([1000, 2048]) from checkpoint, the shape in current model is torch.Size([100, 2048]).\n\tsize mismatch for fc.bias: copying a param with shape torch.Size([1000]) from checkpoint, the shape in current model is torch.Size([100]).")
        return 1, "pytorch nn/modules/module.py load_state_dict error text"
    if kind == "stack":
        tb(L, frames_train(ctx) + [("/opt/conda/lib/python3.10/site-packages/torch/utils/data/_utils/collate.py", 171, "collate", "return torch.stack(batch, 0, out=out)")],
           "RuntimeError: stack expects each tensor to be equal size, but got [3, 224, 224] at entry 0 and [1, 224, 224] at entry 5")
        return 1, "pytorch aten stack size check text"
    tb(L, frames_train(ctx) + [("/opt/conda/lib/python3.10/site-packages/torch/_tensor.py", 521, "backward", "torch.autograd.backward(")],
       "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.")
    return 1, "pytorch autograd engine error text"


def end_unknown(L, ctx):
    if ctx["sched"] == "lsf":
        ctx["lsf_status"] = "Exited with exit code 1."
        return 1, "composed: LSF report with exit code only, no error in output"
    L.add(f"[{ts(ctx['t'])}] evaluating on held-out split ...")
    if ctx["sched"] == "slurm":
        srun_fail(L, ctx, 0)
    return 1, "composed: job ends with no error message"


ENDS = {"success": end_success, "cuda_oom": end_cuda_oom, "nccl": end_nccl, "cuda_runtime": end_cuda_runtime,
        "gpu_hardware": end_gpu_hw, "walltime": end_walltime, "preempted": end_preempted, "interrupted": end_interrupted,
        "oom_killer": end_oom_killer, "disk_full": end_disk, "traceback": end_traceback, "file_not_found": end_file_not_found,
        "missing_module": end_missing_module, "permission": end_permission, "device_mismatch": end_device_mismatch,
        "nan_loss": end_nan, "ram_oom": end_ram, "segfault": end_segfault, "native_abort": end_native_abort,
        "exec_failure": end_exec, "div_zero": end_div, "assertion": end_assert, "runtime_error": end_runtime, "unknown": end_unknown}

# composed counts per class (captured ones are added on top)
PLAN = {"success": 64, "traceback": 5, "cuda_oom": 10, "nccl": 6, "walltime": 5, "preempted": 5, "gpu_hardware": 4,
        "cuda_runtime": 4, "oom_killer": 2, "disk_full": 2, "file_not_found": 2, "missing_module": 1, "interrupted": 1,
        "permission": 1, "device_mismatch": 2, "nan_loss": 1, "ram_oom": 1, "segfault": 1, "native_abort": 1,
        "exec_failure": 1, "div_zero": 0, "assertion": 1, "runtime_error": 1, "unknown": 1}

FW_W = [("torch", 3), ("hf", 3), ("lightning", 2), ("deepspeed", 2), ("jax", 1), ("vllm", 1)]
SCHED_W = [("slurm", 6), ("pbs", 1), ("lsf", 1), ("sge", 1), ("nohup", 2)]


def wchoice(pairs):
    tot = sum(w for _, w in pairs)
    x = R.uniform(0, tot)
    for k, w in pairs:
        x -= w
        if x <= 0:
            return k
    return pairs[-1][0]


def compose(mode):
    fw = wchoice(FW_W)
    sched = wchoice(SCHED_W)
    if mode in ("nccl",) and fw in ("jax", "vllm"):
        fw = R.choice(["torch", "hf", "deepspeed"])
    if mode in ("nan_loss",) and fw not in ("deepspeed",):
        fw = "torch"
    if mode in ("preempted", "interrupted") and sched in ("lsf", "sge", "nohup") and mode == "preempted":
        sched = "slurm"
    if mode == "walltime" and sched == "sge":
        sched = "slurm"
    if mode == "oom_killer" and sched not in ("slurm",) and R.random() < 0.7:
        sched = "slurm"
    if mode == "interrupted" and sched not in ("slurm", "nohup"):
        sched = "nohup"
    gpu, mem = R.choice(GPUS)
    ranks = 1
    if fw in ("deepspeed",) or mode == "nccl":
        ranks = R.choice([2, 4, 8])
    elif fw in ("torch", "hf", "lightning") and R.random() < 0.4:
        ranks = R.choice([2, 4])
    elif fw == "vllm" and R.random() < 0.3:
        ranks = 2
    start = MONTH0 + datetime.timedelta(days=R.randint(0, 30), hours=R.randint(0, 23), minutes=R.randint(0, 59), seconds=R.randint(0, 59))
    ctx = {"fw": fw, "sched": sched, "gpu": gpu, "gpumem": mem, "driver": R.choice(DRIVERS), "ranks": ranks, "ngpu": min(ranks, 8),
           "user": R.choice(USERS), "node": R.choice(NODES), "jobid": R.randint(4100000, 4999999), "start": start,
           "model": R.choice(MODELS), "bs": R.choice([8, 16, 32, 64, 256]), "lr": R.choice([1e-4, 2e-5, 3e-4, 5e-5, 1e-3]),
           "log_every": R.choice([10, 50, 100, 200]), "proj": R.choice(["sentiment-ft", "llm-sft", "vit-pretrain", "asr-ctc", "rag-eval", "moe-ablate", "seg-unet"]),
           "ntasks": ranks, "script": "train.py", "fp16note": R.random() < 0.3}
    L = Log()
    sched_header(L, ctx)
    steps = R.randint(3, 14) if mode != "exec_failure" else 0
    if mode == "nan_loss":
        ctx["fp16note"] = True
    if mode == "exec_failure" or (mode == "missing_module" and R.random() < 0.8):
        ctx["t"] = start
        ctx["loss"] = 2.0
    else:
        PRELUDE[fw](L, ctx, steps)
        if fw == "vllm" and mode in ("traceback", "file_not_found", "unknown", "runtime_error"):
            pass
    if "t" not in ctx:
        ctx["t"] = start
    ctx["end"] = ctx["t"] + datetime.timedelta(seconds=R.randint(5, 600))
    code, prov = ENDS[mode](L, ctx)
    if ctx["sched"] == "lsf":
        status = ctx.get("lsf_status", "Successfully completed." if code == 0 else f"Exited with exit code {code if code > 0 else 128 - code}.")
        tpos, spos = lsf_wrap(L, ctx, status, ctx.get("lsf_term"))
        if mode == "walltime":
            L.ev = tpos
            L.alts.append(spos)
        if mode == "unknown":
            L.ev = None
            L.alts = []
        prov += "; LSF report layout from github.com/marbl/canu/issues/444"
    if mode == "unknown":
        L.ev = None
    if mode == "success":
        L.ev = None
        L.alts = []
        L.rank = None
    gpu_name = ctx["gpu"]
    return L, code, prov, gpu_name, ctx["driver"], ctx


def main():
    out_logs = os.path.join(HERE, "logs")
    if os.path.isdir(out_logs):
        shutil.rmtree(out_logs)
    os.makedirs(out_logs)
    entries = []
    for mode, n in PLAN.items():
        for _ in range(n):
            entries.append(("composed", mode))
    cap = json.load(open(os.path.join(HERE, "captured", "manifest.json")))
    capmeta = json.load(open(os.path.join(HERE, "captured", "evidence.json")))
    for name in sorted(cap):
        entries.append(("captured", name))
    R.shuffle(entries)
    labels = []
    for i, (src, key) in enumerate(entries, 1):
        lid = f"{SET}-{i:04d}"
        path = f"logs/{lid}.log"
        if src == "captured":
            m = cap[key]
            meta = capmeta[key]
            shutil.copyfile(os.path.join(HERE, "captured", key + ".log"), os.path.join(HERE, path))
            labels.append({"id": lid, "mode": m["mode"], "source": "captured", "log_path": path, "gpu": "none", "driver": "none",
                           "true_exit_code": m["rc"],
                           "provenance": f"captured: real run on this CPU machine (python3.11, torch 2.13.0+cpu) of a bash job script; command: {m['cmd'].splitlines()[-1][:160]}; file captured/{key}.log",
                           "evidence_line": meta["ev"], "evidence_alts": meta.get("alts", []), "rank": meta.get("rank")})
        else:
            L, code, prov, gpu, drv, ctx = compose(key)
            text = "\n".join(L.lines) + "\n"
            with open(os.path.join(HERE, path), "w") as f:
                f.write(text)
            labels.append({"id": lid, "mode": key, "source": "composed", "log_path": path, "gpu": gpu, "driver": drv,
                           "true_exit_code": code, "provenance": f"composed ({ctx['fw']}, {ctx['sched']}, ranks={ctx['ranks']}); " + prov,
                           "evidence_line": L.ev, "evidence_alts": L.alts if L.ev else [], "rank": L.rank if L.ev else None})
    with open(os.path.join(HERE, "labels.jsonl"), "w") as f:
        for l in labels:
            f.write(json.dumps(l, ensure_ascii=False) + "\n")
    print(f"wrote {len(labels)} logs")


if __name__ == "__main__":
    main()

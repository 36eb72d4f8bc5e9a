#!/usr/bin/env python3
"""Build the gpualert labelled log corpus: corpus/logs/*.log and corpus/labels.jsonl.

Two kinds of log:
  captured  a real failing Python program is run on this machine (stdout+stderr
            interleaved through one pipe) after it prints a realistic training
            prelude; scheduler lines may be appended after it ends.
  composed  GPU-only failures (CUDA OOM, NCCL, CUDA runtime, device mismatch, GPU
            hardware) built from the exact message formats of the frameworks,
            with the traceback structure they print.

Deterministic for a fixed seed (captured outputs differ only in pids/addresses).
Run:  python3 corpus/make_corpus.py
"""
import json
import os
import re
import random
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SEED = 20261202
HERE = os.path.dirname(os.path.abspath(__file__))
LOG_DIR = os.path.join(HERE, "logs")
PY = sys.executable  # real interpreter (not a pyenv shim)
SYS_PY = "/usr/bin/python3.11" if os.path.exists("/usr/bin/python3.11") else PY

# ---------------------------------------------------------------- provenance
P = {
    "oom2": "pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (2.x OutOfMemoryError text; seen verbatim in public issues, e.g. 'GPU 0 has a total capacity of ... of which ... is free')",
    "oom1": "pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (1.x 'CUDA out of memory. Tried to allocate ... (GPU 0; ... total capacity; ...)')",
    "jaxoom": "jax-ml/jax / openxla xla (jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate N bytes; public issues jax-ml/jax#13428, #22755)",
    "tfoom": "tensorflow/tensorflow core/common_runtime/bfc_allocator + errors_impl.ResourceExhaustedError 'OOM when allocating tensor with shape[...] ... by allocator GPU_0_bfc' (public issues tensorflow/models#7142)",
    "watchdog": "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp watchdog timeout text (public issues pytorch/pytorch#118369, hiyouga/LlamaFactory#7396)",
    "ncclerr": "pytorch/pytorch ProcessGroupNCCL.cpp 'NCCL error in: ... unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version' + NVIDIA/nccl ncclGetErrorString texts (public issues vllm-project/vllm#10523, NVIDIA/nccl#1381)",
    "cudaerr": "pytorch/pytorch c10/cuda/CUDAException.cpp c10_cuda_check_implementation ('CUDA kernel errors might be asynchronously reported...'; terminate/c10::Error form seen in public issues e.g. xieyuser/GS-LIVM#12)",
    "dsa": "pytorch/pytorch aten/src/ATen/native/cuda/IndexKernel.cu / Loss.cu device-side assertion text (public issues huggingface/accelerate#2539, kvcache-ai/ktransformers#467)",
    "devmm": "pytorch/pytorch aten TensorIterator/checkSameDevice 'Expected all tensors to be on the same device, but found at least two devices' (public issues haotian-liu/LLaVA#1081, Lung-Yi/rxn_yield_context#3)",
    "ecc": "CUDA runtime cudaErrorECCUncorrectable text via pytorch c10_cuda_check_implementation (public issues vllm-project/vllm#5222, jade-hpc-gpu#194)",
    "xid": "NVIDIA kernel driver NVRM Xid kernel-log format (Xid 79 'GPU has fallen off the bus': NVIDIA/open-gpu-kernel-modules#507, NVIDIA/NVSentinel#155; Xid 94/145 formats: leptonai/gpud#1174)",
    "slurm_tl": "SchedMD/slurm slurmstepd '*** JOB %u ON %s CANCELLED AT %s DUE TO TIME LIMIT ***' (public docs/issues)",
    "slurm_pre": "SchedMD/slurm slurmstepd '*** JOB ... CANCELLED AT ... DUE TO PREEMPTION ***' (SystemsGenetics/GEMmaker#242)",
    "slurm_cancel": "SchedMD/slurm slurmstepd '*** JOB ... CANCELLED AT ... ***' (scancel, no reason)",
    "slurm_oom": "SchedMD/slurm task/cgroup 'Detected 1 oom-kill event(s) in StepId=... cgroup. Some of your processes may have been killed by the cgroup out-of-memory handler.' + srun 'task 0: Out Of Memory' (OSC knowledge base page)",
    "pbs_wt": "PBS Pro/Torque MOM '=>> PBS: job killed: walltime N exceeded limit M'",
    "childfailed": "pytorch/pytorch torch/distributed/elastic/multiprocessing/errors (ChildFailedError summary; public issues Vision-CAIR/MiniGPT-4#237, hpcaitech/ColossalAI#3571)",
    "save": "pytorch/pytorch caffe2/serialize/inline_container.cc 'PytorchStreamWriter failed writing file data/N: file write failed' / 'unexpected pos' (public issues SWivid/F5-TTS#458, zai-org/ChatGLM-6B#1166)",
    "anomaly": "pytorch/pytorch torch/csrc/autograd/python_anomaly_mode / engine 'Function 'XBackward0' returned nan values in its 0th output.' (pytorch/pytorch#51196, #38714)",
    "fairseq": "facebookresearch/fairseq fairseq/optim/dynamic_loss_scaler.py 'Minimum loss scale reached (0.0001). Your loss is probably exploding...' (fairseq#1529)",
    "ds_overflow": "deepspeedai/DeepSpeed runtime/fp16/loss_scaler.py '[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: N, reducing to M' (ymcui/Chinese-LLaMA-Alpaca#534)",
    "gradscaler": "pytorch/pytorch torch/cuda/amp/grad_scaler.py FutureWarning text (karpathy/nanoGPT#635, Linesight-RL/linesight#51)",
    "ncclinfo": "NVIDIA/nccl INFO/WARN line format 'host:pid:tid [dev] NCCL INFO ...' (NVIDIA/nccl#1066, DeepSpeedExamples#310)",
}

GPUS = [("NVIDIA A100-SXM4-80GB", 79.15), ("NVIDIA H100 80GB HBM3", 79.11), ("Tesla V100-SXM2-32GB", 31.74),
        ("NVIDIA GeForce RTX 3090", 23.69), ("NVIDIA A40", 44.35), ("NVIDIA L40S", 44.52),
        ("NVIDIA A100-PCIE-40GB", 39.39), ("NVIDIA RTX A6000", 47.54)]
DRIVERS = ["535.129.03", "550.54.15", "525.105.17", "470.182.03", "545.23.08", "535.161.08", "560.35.03"]
USERS = ["jdoe", "mchen", "apatel", "skim", "lgarcia", "tnguyen", "rsmith", "ewang"]
PROJECTS = ["vit-pretrain", "llama-sft", "resnet50-imagenet", "diffusion-unet", "bert-ner", "gnn-molecules",
            "whisper-ft", "t5-summarize", "detr-coco", "ppo-atari"]
HOSTS = ["gpu-node-07", "gpu-a100-12", "dgx03", "h100-r2-n05", "gn1042", "node-c14", "sh03-12n09", "ga-0417"]


class Ctx(object):
    """Per-log random choices: framework, launcher, paths, ranks, gpu."""

    def __init__(self, rng, fw=None, composed=True):
        self.rng = rng
        self.fw = fw or rng.choice(["pt2", "pt2", "pt1", "lightning", "hf", "deepspeed", "plain"])
        self.user = rng.choice(USERS)
        self.proj = rng.choice(PROJECTS)
        self.host = rng.choice(HOSTS)
        self.jobid = str(rng.randint(100000, 9999999))
        self.pyver = rng.choice(["3.8", "3.9", "3.10", "3.10", "3.11"])
        env = rng.choice(["torch", "py310", "llm", "base"])
        self.site = rng.choice([
            "/opt/conda/lib/python%s/site-packages" % self.pyver,
            "/home/%s/miniconda3/envs/%s/lib/python%s/site-packages" % (self.user, env, self.pyver),
            "/usr/local/lib/python%s/dist-packages" % self.pyver,
            "/scratch/%s/venvs/%s/lib/python%s/site-packages" % (self.user, env, self.pyver)])
        self.pybin = self.site.split("/lib/python")[0] + "/bin/python"
        if "dist-packages" in self.site:
            self.pybin = "/usr/bin/python3"
        self.proot = "/home/%s/%s" % (self.user, self.proj)
        self.script = self.proot + "/" + rng.choice(["train.py", "train.py", "main.py", "run_train.py", "pretrain.py"])
        self.nranks = rng.choice([1, 1, 2, 4, 8]) if composed else 1
        self.launcher = "python"
        if self.nranks > 1:
            self.launcher = rng.choice(["torchrun", "torchrun", "srun", "deepspeed" if self.fw == "deepspeed" else "torchrun",
                                        "accelerate"])
        self.gpu, self.gmem = rng.choice(GPUS)
        self.driver = rng.choice(DRIVERS)
        self.slurm = rng.random() < 0.6
        self.t0 = 1700000000 + rng.randint(0, 40000000)
        self.pid = rng.randint(3000, 400000)
        self.ansi = rng.random() < 0.35
        self.tqdm = rng.random() < 0.6
        self.total_steps = rng.choice([500, 1000, 2000, 5000, 20000])

    def ts(self, off=0, fmt="%Y-%m-%d %H:%M:%S"):
        return time.strftime(fmt, time.gmtime(self.t0 + off))


# ---------------------------------------------------------------- noise
def tqdm_bar(rng, n, total, desc="", extra=""):
    frac = float(n) / total
    width = 10
    full = int(frac * width)
    rem = frac * width - full
    parts = " ▏▎▍▌▋▊▉"
    bar = "█" * full
    if full < width:
        bar += parts[int(rem * 8)] if int(rem * 8) else " "
        bar += " " * (width - full - 1)
    el = int(n / 36.0)
    left = int((total - n) / 36.0)
    return "%s%3d%%|%s| %d/%d [%02d:%02d<%02d:%02d, %5.2fit/s%s]" % (
        desc, int(frac * 100), bar, n, total, el // 60, el % 60, left // 60, left % 60,
        rng.uniform(3, 40), extra)


def tqdm_line(rng, start, stop, total, desc, loss, every):
    """One physical line holding many carriage-return redraws, as tqdm writes to a pipe."""
    out = []
    for n in range(start, stop + 1, every):
        out.append(tqdm_bar(rng, n, total, desc, ", loss=%.3f" % loss(n)))
    return "\r" + "\r".join(out)


def nccl_init(c):
    rng = c.rng
    lines = []
    nv = rng.choice(["2.18.1+cuda12.1", "2.19.3+cuda12.3", "2.14.3+cuda11.7", "2.20.5+cuda12.4", "2.21.5+cuda12.4"])
    ip = "10.%d.%d.%d" % (rng.randint(0, 250), rng.randint(0, 250), rng.randint(2, 250))
    pids = [c.pid + 11 + r for r in range(c.nranks)]
    for r in range(c.nranks):
        h = "%s:%d:%d [%d]" % (c.host, pids[r], pids[r], r)
        lines.append("%s NCCL INFO Bootstrap : Using eth0:%s<0>" % (h, ip))
        lines.append("%s NCCL INFO NET/Plugin : No plugin found (libnccl-net.so), using internal implementation" % h)
        if r == 0:
            lines.append("%s NCCL INFO cudaDriverVersion %d" % (h, rng.choice([12020, 12040, 12030, 11080])))
            lines.append("NCCL version %s" % nv)
    for r in range(c.nranks):
        h = "%s:%d:%d [%d]" % (c.host, pids[r], pids[r] + 220, r)
        if rng.random() < 0.3:
            lines.append("")
            lines.append("%s misc/nvmlwrap.cc:181 NCCL WARN nvmlDeviceGetHandleByPciBusId() failed: Not Found" % h)
        lines.append("%s NCCL INFO NET/IB : No device found." % h)
        lines.append("%s NCCL INFO NET/Socket : Using [0]eth0:%s<0>" % (h, ip))
        lines.append("%s NCCL INFO Using network Socket" % h)
        if r == 0:
            for ch in range(2):
                lines.append("%s NCCL INFO Channel %02d/02 :    %s" % (h, ch, "   ".join(str(i) for i in range(c.nranks))))
    for r in range(c.nranks):
        h = "%s:%d:%d [%d]" % (c.host, pids[r], pids[r] + 220, r)
        lines.append("%s NCCL INFO Connected all rings" % h)
        lines.append("%s NCCL INFO Connected all trees" % h)
        if rng.random() < 0.15:
            lines.append("")
            lines.append("%s transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : client reregistration" % h)
            lines.append("")
        lines.append("%s NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d busId %x000 - Init COMPLETE" % (
            h, rng.randint(0x550000000000, 0x56ffffffffff), r, c.nranks, r, rng.choice([0x7, 0xb, 0x48, 0x4c, 0x88, 0x8b, 0xc8, 0xcb])))
    return lines


WARNINGS = [
    ("{site}/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
     "  return self.fget.__get__(instance, owner)()"),
    ("{script}:{ln}: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead.",
     "  scaler = torch.cuda.amp.GradScaler(enabled=args.amp)"),
    ("{script}:{ln}: FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.",
     "  with torch.cuda.amp.autocast(dtype=torch.bfloat16):"),
    ("{site}/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system is 8, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
     "  warnings.warn(_create_warning_msg("),
    ("{site}/torch/utils/checkpoint.py:429: UserWarning: torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False explicitly. The default value of use_reentrant will be updated to be False in the future. To maintain current behavior, pass use_reentrant=True. It is recommended that you use use_reentrant=False. Refer to docs for more details on the differences between the two variants.",
     "  warnings.warn("),
    ("{site}/torchvision/models/_utils.py:208: UserWarning: The parameter 'pretrained' is deprecated since 0.13 and may be removed in the future, please use 'weights' instead.",
     "  warnings.warn("),
    ("{site}/transformers/optimization.py:411: FutureWarning: This implementation of AdamW is deprecated and will be removed in a future version. Use the PyTorch implementation torch.optim.AdamW instead, or set `no_deprecation_warning=True` to disable this warning",
     "  warnings.warn("),
    ("{site}/torch/optim/lr_scheduler.py:143: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value of the learning rate schedule. See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
     "  warnings.warn(\"Detected call of `lr_scheduler.step()` before `optimizer.step()`. \""),
]


def warnings_block(c, k):
    out = []
    for w, code in c.rng.sample(WARNINGS, k):
        out.append(w.format(site=c.site, script=c.script, ln=c.rng.randint(40, 300)))
        out.append(code)
    return out


def fw_prelude(c):
    rng = c.rng
    L = []
    if c.slurm:
        L.append("Job %s running on %s (partition %s), %d GPU(s)" % (c.jobid, c.host, rng.choice(["gpu", "a100", "h100", "gpu-long"]), max(c.nranks, 1)))
        L.append("+ module load cuda/%s" % rng.choice(["12.1", "11.8", "12.4"]))
        L.append("+ source activate %s" % rng.choice(["torch", "llm", "py310"]))
    L.append("+ %s %s --config configs/%s.yaml" % (
        {"python": "python", "torchrun": "torchrun --nproc_per_node=%d" % c.nranks,
         "srun": "srun --label python", "deepspeed": "deepspeed --num_gpus=%d" % c.nranks,
         "accelerate": "accelerate launch --num_processes %d" % c.nranks}[c.launcher], os.path.basename(c.script), c.proj))
    if c.launcher == "torchrun" and c.nranks > 1:
        if c.fw == "pt1":
            L.append("WARNING:torch.distributed.run:")
        else:
            L.append("[%s,%03d] torch.distributed.run: [WARNING] " % (c.ts(1), rng.randint(0, 999)))
        L.append("*****************************************")
        L.append("Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. ")
        L.append("*****************************************")
    if c.launcher == "accelerate":
        L.append("The following values were not passed to `accelerate launch` and had defaults used instead:")
        L.append("\t`--num_machines` was set to a value of `1`")
        L.append("\t`--mixed_precision` was set to a value of `'no'`")
        L.append("\t`--dynamo_backend` was set to a value of `'no'`")
        L.append("To avoid this warning pass in values for each of the problematic parameters or run `accelerate config`.")
    if c.fw == "deepspeed":
        for r in range(min(c.nranks, 2)):
            L.append("[%s,%03d] [INFO] [real_accelerator.py:161:get_accelerator] Setting ds_accelerator to cuda (auto detect)" % (c.ts(3), rng.randint(0, 999)))
        L.append("[%s,%03d] [INFO] [comm.py:637:init_distributed] cdb=None" % (c.ts(5), rng.randint(0, 999)))
        L.append("[%s,%03d] [INFO] [comm.py:668:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl" % (c.ts(5), rng.randint(0, 999)))
        L.append("[%s,%03d] [INFO] [logging.py:96:log_dist] [Rank 0] DeepSpeed info: version=%s, git-hash=unknown, git-branch=unknown" % (c.ts(9), rng.randint(0, 999), rng.choice(["0.12.6", "0.13.1", "0.14.0"])))
        L.append("[%s,%03d] [INFO] [config.py:988:print] DeepSpeedEngine configuration:" % (c.ts(9), rng.randint(0, 999)))
        for k, v in [("bfloat16_enabled", "True"), ("gradient_accumulation_steps", "4"), ("zero_enabled", "True"), ("zero_optimization_stage", "2")]:
            L.append("[%s,%03d] [INFO] [config.py:992:print]   %s %s %s" % (c.ts(9), rng.randint(0, 999), k, "." * (30 - len(k)), v))
    if c.fw == "lightning":
        L.append("Using 16bit Automatic Mixed Precision (AMP)" if rng.random() < 0.5 else "Using bfloat16 Automatic Mixed Precision (AMP)")
        L.append("GPU available: True (cuda), used: True")
        L.append("TPU available: False, using: 0 TPU cores")
        L.append("IPU available: False, using: 0 IPUs")
        L.append("HPU available: False, using: 0 HPUs")
        for r in range(max(c.nranks, 1)):
            L.append("Initializing distributed: GLOBAL_RANK: %d, MEMBER: %d/%d" % (r, r + 1, max(c.nranks, 1)))
        L.append("----------------------------------------------------------------------------------------------------")
        L.append("distributed_backend=nccl")
        L.append("All distributed processes registered. Starting with %d processes" % max(c.nranks, 1))
        L.append("----------------------------------------------------------------------------------------------------")
        L.append("")
        L.append("LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [%s]" % ",".join(str(i) for i in range(max(c.nranks, 1))))
        L.append("")
        L.append("  | Name      | Type             | Params")
        L.append("-----------------------------------------------")
        L.append("0 | model     | %-16s | %.1f M" % (rng.choice(["ResNet", "ViT", "UNet2DModel", "GPT"]), rng.uniform(10, 900)))
        L.append("1 | criterion | CrossEntropyLoss | 0     ")
        L.append("-----------------------------------------------")
    if c.fw == "hf":
        L.append("[INFO|configuration_utils.py:737] %s >> loading configuration file config.json" % c.ts(4, "%Y-%m-%d %H:%M:%S,") )
        if rng.random() < 0.6:
            L.append("Some weights of %s were not initialized from the model checkpoint at %s and are newly initialized: ['classifier.bias', 'classifier.weight']" % (
                rng.choice(["BertForSequenceClassification", "RobertaForTokenClassification", "DebertaV2ForSequenceClassification"]),
                rng.choice(["bert-base-uncased", "roberta-large", "microsoft/deberta-v3-base"])))
            L.append("You should probably TRAIN this model on a down-stream task to be able to use it for predictions and inference.")
        L.append("***** Running training *****")
        L.append("  Num examples = %s" % "{:,}".format(rng.randint(5000, 2000000)))
        L.append("  Num Epochs = %d" % rng.randint(1, 10))
        L.append("  Instantaneous batch size per device = %d" % rng.choice([8, 16, 32]))
        L.append("  Gradient Accumulation steps = %d" % rng.choice([1, 2, 4, 8]))
        L.append("  Total optimization steps = %s" % "{:,}".format(c.total_steps))
    if c.fw == "tf":
        L.append("%s.%06d: I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations." % (c.ts(2), rng.randint(0, 999999)))
        L.append("To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.")
        L.append("%s.%06d: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT" % (c.ts(3), rng.randint(0, 999999)))
        L.append("%s.%06d: I tensorflow/core/common_runtime/gpu/gpu_device.cc:1886] Created device /job:localhost/replica:0/task:0/device:GPU:0 with %d MB memory:  -> device: 0, name: %s, pci bus id: 0000:07:00.0, compute capability: 8.0" % (
            c.ts(5), rng.randint(0, 999999), int(c.gmem * 1000), c.gpu))
    if c.fw == "jax":
        L.append("jax %s, jaxlib %s, devices: [cuda(id=0)]" % (rng.choice(["0.4.23", "0.4.26", "0.4.30"]), rng.choice(["0.4.23", "0.4.26", "0.4.30"])))
        L.append("I%s.%06d %d xla_bridge.py:884] Unable to initialize backend 'rocm': NOT_FOUND: Could not find registered platform with name: \"rocm\". Available platform names are: CUDA" % (c.ts(2, "%m%d %H:%M:%S"), rng.randint(0, 999999), c.pid))
        L.append("I%s.%06d %d xla_bridge.py:884] Unable to initialize backend 'tpu': INTERNAL: Failed to open libtpu.so: libtpu.so: cannot open shared object file: No such file or directory" % (c.ts(2, "%m%d %H:%M:%S"), rng.randint(0, 999999), c.pid))
    if c.fw == "pt1" or c.fw == "pt2" or c.fw == "plain":
        L.append("=> creating model '%s'" % rng.choice(["resnet50", "vit_b_16", "convnext_tiny", "efficientnet_b3", "gpt2-medium"]))
        L.append("=> using %d GPU(s): %s" % (max(c.nranks, 1), c.gpu))
    return L


def caught_plugin_exception(c):
    """An exception caught and logged early (not the cause of the failure)."""
    rng = c.rng
    mod = rng.choice(["apex", "flash_attn", "xformers", "bitsandbytes", "wandb", "deepspeed.ops.adam"])
    return ["WARNING: failed to load optional plugin '%s':" % mod.split(".")[0],
            "Traceback (most recent call last):",
            '  File "%s/utils/plugins.py", line %d, in _load_plugins' % (c.proot, rng.randint(20, 90)),
            "    importlib.import_module(name)",
            '  File "/usr/lib/python%s/importlib/__init__.py", line 126, in import_module' % c.pyver,
            "    return _bootstrap._gcd_import(name[level:], package, level)",
            "ModuleNotFoundError: No module named '%s'" % mod,
            "continuing without %s (falling back to the reference implementation)" % mod.split(".")[0]]


def color(c, s, code):
    return "\x1b[%sm%s\x1b[0m" % (code, s) if c.ansi else s


def train_loop(c, n_lines, nan_blip=False, end_nan=False, big=False):
    """n_lines of training output; optionally one recovered loss=nan; optionally NaN at the end."""
    rng = c.rng
    L = []
    step = 0
    loss0 = rng.uniform(2.0, 9.0)
    epoch = 0
    blip_at = rng.randint(n_lines // 4, max(n_lines // 4 + 1, n_lines * 3 // 4)) if nan_blip else -1
    every = rng.choice([10, 20, 50, 100])
    i = 0
    while len(L) < n_lines:
        i += 1
        step += every
        loss = 0.15 + loss0 * (0.9995 ** step) + rng.uniform(0.0, 0.05)
        if end_nan and len(L) > n_lines * 0.8:
            loss = float("nan") if rng.random() < 0.85 else rng.uniform(1e3, 1e6)
        lr = 3e-4 * min(1.0, step / 2000.0)
        if c.tqdm and rng.random() < 0.03:
            tot = rng.choice([500, 1000, 1563, 2502])
            start = rng.randint(0, tot // 2)
            desc = "Epoch %d: " % epoch if c.fw == "lightning" else ""
            ev = rng.choice([3, 5, 7]) if big else rng.choice([7, 13, 25])
            L.append(tqdm_line(rng, start, min(tot, start + rng.randint(20, 120)), tot, desc,
                               lambda n, l=loss: (float("nan") if end_nan and len(L) > n_lines * 0.8 else l + rng.uniform(-0.02, 0.02)), ev))
            continue
        if i == blip_at or (blip_at > 0 and len(L) == blip_at):
            blip_at = -2
            L.append("step %d loss=nan lr=%.2e grad_norm=inf" % (step, lr))
            if c.fw == "deepspeed":
                L.append("[%s,%03d] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768" % (c.ts(step), rng.randint(0, 999)))
            else:
                L.append("found inf/nan in gradients at step %d, skipping optimizer step (loss scale 65536.0 -> 32768.0)" % step)
            continue
        sl = "%.4f" % loss
        if c.fw == "tf":
            tot = 1563
            k = rng.randint(1, tot)
            L.append("%4d/%d [%s] - ETA: %d:%02d - loss: %s - accuracy: %.4f" % (k, tot, ("=" * (29 * k // tot) + ">").ljust(30, ".")[:30], rng.randint(0, 9), rng.randint(0, 59), sl, rng.uniform(0.2, 0.9)))
            continue
        if c.fw == "hf":
            L.append("{'loss': %s, 'grad_norm': %.4f, 'learning_rate': %.4e, 'epoch': %.2f}" % (sl, rng.uniform(0.2, 3), lr, step / 3000.0))
        elif c.fw == "deepspeed" and rng.random() < 0.3:
            L.append("[%s,%03d] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, skipped=%d, lr=[%.6e], mom=[(0.9, 0.95)]" % (c.ts(step // 5), rng.randint(0, 999), step, rng.randint(0, 3), lr))
        elif c.fw == "lightning" and rng.random() < 0.2:
            L.append("Epoch %d, global step %d: 'val_loss' reached %.5f (best %.5f), saving model to '%s/checkpoints/epoch=%d-step=%d.ckpt' as top 3" % (
                epoch, step, loss * 1.1, loss * 1.1, c.proot, epoch, step))
        else:
            msg = "%s epoch %d step %6d loss=%s lr=%.3e %s" % (
                c.ts(step // 5), epoch, step, sl, lr,
                rng.choice(["", "tok/s=%d" % rng.randint(9000, 90000), "mem=%.1fG" % rng.uniform(5, c.gmem), "grad_norm=%.3f" % rng.uniform(0.1, 4)]))
            if c.ansi:
                msg = color(c, "[train]", "1;34") + " " + msg
            L.append(msg.rstrip())
        c.t_end = step // 5
        if rng.random() < 0.06:
            epoch += 1
            L.append(color(c, "[eval] epoch %d val_loss=%.4f val_error=%.3f top1_err=%.3f acc=%.4f" % (
                epoch - 1, loss * 1.08, rng.uniform(0.05, 0.4), rng.uniform(0.05, 0.4), rng.uniform(0.5, 0.95)), "32"))
            if rng.random() < 0.3:
                L.append("saved checkpoint to %s/ckpt/epoch_%03d.pt (%.1f GB)" % (c.proot, epoch - 1, rng.uniform(0.3, 14)))
            if rng.random() < 0.15:
                L.append("pruning: killed %d dead units in layer %d (no gradient in 500 steps)" % (rng.randint(1, 40), rng.randint(1, 24)))
            if rng.random() < 0.15:
                L.append("dataloader: worker respawned, error count for shard %d reset to 0" % rng.randint(0, 900))
    return L


def rank_prefix(lines, r, style):
    if style == "torch":
        return ["[rank%d]: %s" % (r, l) for l in lines]
    if style == "srun":
        return ["%d: %s" % (r, l) for l in lines]
    return list(lines)


def interleave(rng, seqs):
    seqs = [list(s) for s in seqs if s]
    out = []
    while seqs:
        i = rng.randrange(len(seqs))
        out.append(seqs[i].pop(0))
        if not seqs[i]:
            seqs.pop(i)
    return out


def noise_body(c, n_lines, nan_blip=None, end_nan=False, big=False, caught=None):
    rng = c.rng
    if nan_blip is None:
        nan_blip = rng.random() < 0.25
    if caught is None:
        caught = rng.random() < 0.2
    L = fw_prelude(c)
    tfj = c.fw in ("tf", "jax")
    L += warnings_block(c, 0 if tfj else rng.randint(0, 3))
    if caught:
        L += caught_plugin_exception(c)
    if not tfj and (c.nranks > 1 or rng.random() < 0.25):
        saved = c.nranks
        c.nranks = max(c.nranks, 2)
        L += nccl_init(c)
        c.nranks = saved
    L += warnings_block(c, 0 if tfj else rng.randint(0, 2))
    L += train_loop(c, max(5, n_lines - len(L)), nan_blip=nan_blip, end_nan=end_nan, big=big)
    if c.nranks > 1 and c.launcher == "srun":
        L = ["%d: %s" % (0 if rng.random() < 0.7 else rng.randrange(c.nranks), l) for l in L]
    return L


def pick_len(rng):
    x = rng.random()
    if x < 0.2:
        return rng.randint(15, 60)
    if x < 0.6:
        return rng.randint(60, 400)
    if x < 0.9:
        return rng.randint(400, 1500)
    if x < 0.99:
        return rng.randint(1500, 3000)
    return rng.randint(7000, 10000)  # the big ones


# ---------------------------------------------------------------- traceback helpers
def tb(frames):
    out = ["Traceback (most recent call last):"]
    for f, ln, fn, code in frames:
        out.append('  File "%s", line %d, in %s' % (f, ln, fn))
        if code:
            out.append("    " + code)
    return out


def user_frames(c, depth=None, call=None):
    rng = c.rng
    fr = [(c.script, rng.randint(300, 700), "<module>", "main(args)"),
          (c.script, rng.randint(150, 300), "main", call or "train_one_epoch(model, loader, optimizer, scaler, epoch)")]
    if depth is None or depth > 0:
        fr.append((c.script, rng.randint(60, 150), "train_one_epoch", "loss = train_step(model, batch, optimizer, scaler)"))
    return fr


def module_frames(c):
    if c.fw == "pt1":
        return [(c.site + "/torch/nn/modules/module.py", 1130, "_call_impl", "return forward_call(*input, **kwargs)")]
    ln = c.rng.choice([(1518, 1527), (1511, 1520), (1532, 1541), (1736, 1747)])
    return [(c.site + "/torch/nn/modules/module.py", ln[0], "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)"),
            (c.site + "/torch/nn/modules/module.py", ln[1], "_call_impl", "return forward_call(*args, **kwargs)")]


def forward_frames(c):
    rng = c.rng
    model = c.proot + "/models/" + rng.choice(["vit.py", "resnet.py", "transformer.py", "unet.py"])
    fr = [(c.script, rng.randint(60, 150), "train_step", "outputs = model(images)")]
    fr += module_frames(c)
    fr += [(model, rng.randint(40, 300), "forward", "x = blk(x)")]
    fr += module_frames(c)
    fr += [(model, rng.randint(40, 300), "forward", "x = x + self.attn(self.norm1(x))")]
    return fr


def backward_frames(c):
    rng = c.rng
    return [(c.script, rng.randint(60, 150), "train_step", "scaler.scale(loss).backward()"),
            (c.site + "/torch/_tensor.py", rng.choice([487, 492, 522, 581]), "backward", "torch.autograd.backward("),
            (c.site + "/torch/autograd/__init__.py", rng.choice([200, 251, 266, 347]), "backward",
             "Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")]


CUDA_TAIL = ["CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
             "For debugging consider passing CUDA_LAUNCH_BLOCKING=1."]


def cuda_tail(c):
    t = list(CUDA_TAIL)
    if c.fw != "pt1":
        t.append("Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.")
    return t


def cxx_frames(c, first, n=8, cuda=True):
    rng = c.rng
    lib = c.site + "/torch/lib/"
    fr = ["Exception raised from %s (most recent call first):" % first,
          "frame #0: c10::Error::Error(c10::SourceLocation, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> >) + 0x%x (0x%x in %slibc10.so)" % (rng.randint(0x40, 0x9f), rng.randint(0x7f0000000000, 0x7fffffffffff), lib),
          "frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::__cxx11::basic_string<char, std::char_traits<char>, std::allocator<char> > const&) + 0x%x (0x%x in %slibc10.so)" % (rng.randint(0x60, 0xff), rng.randint(0x7f0000000000, 0x7fffffffffff), lib),
          "frame #2: c10::cuda::c10_cuda_check_implementation(int, char const*, char const*, int, bool) + 0x%x (0x%x in %slibc10_cuda.so)" % (rng.randint(0x100, 0x5ff), rng.randint(0x7f0000000000, 0x7fffffffffff), lib)]
    if not cuda:
        fr[2] = "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x%x (0x%x in %slibtorch_cuda.so)" % (rng.randint(0x100, 0x2ff), rng.randint(0x7f0000000000, 0x7fffffffffff), lib)
        fr[3] = "frame #2: c10d::ProcessGroupNCCL::watchdogHandler() + 0x%x (0x%x in %slibtorch_cuda.so)" % (rng.randint(0x100, 0x2ff), rng.randint(0x7f0000000000, 0x7fffffffffff), lib)
    for i in range(3, n):
        fr.append("frame #%d: <unknown function> + 0x%x (0x%x in %s)" % (i, rng.randint(0x10000, 0x3ffffff), rng.randint(0x7f0000000000, 0x7fffffffffff),
                                                                      rng.choice([lib + "libtorch_cuda.so", lib + "libtorch_python.so", lib + "libc10.so", "/lib/x86_64-linux-gnu/libc.so.6"])))
    return fr


def child_failed(c, exitcode, root_rank=0, others=None, sig=None):
    rng = c.rng
    lib = c.site + "/torch/distributed"
    L = []
    pid = c.pid + 11 + root_rank
    for r in range(c.nranks):
        if r != root_rank and rng.random() < 0.7:
            if c.fw == "pt1":
                L.append("WARNING:torch.distributed.elastic.multiprocessing.api:Sending process %d closing signal SIGTERM" % (c.pid + 11 + r))
            else:
                L.append("W%s %d torch/distributed/elastic/multiprocessing/api.py:%d] Sending process %d closing signal SIGTERM" % (
                    c.ts(0, "%m%d %H:%M:%S") + ".%06d" % rng.randint(0, 999999), c.pid, rng.choice([858, 890, 897]), c.pid + 11 + r))
    if c.fw == "pt1":
        L.append("ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: %d) local_rank: %d (pid: %d) of binary: %s" % (exitcode, root_rank, pid, c.pybin))
    else:
        L.append("E%s %d torch/distributed/elastic/multiprocessing/api.py:%d] failed (exitcode: %d) local_rank: %d (pid: %d) of binary: %s" % (
            c.ts(0, "%m%d %H:%M:%S") + ".%06d" % rng.randint(0, 999999), c.pid, rng.choice([833, 862, 869]), exitcode, root_rank, pid, c.pybin))
    L += tb([(os.path.dirname(c.pybin).replace("/usr/bin", "/usr/local/bin") + "/torchrun", 8, "<module>", "sys.exit(main())"),
             (lib + "/elastic/multiprocessing/errors/__init__.py", rng.choice([346, 347, 355]), "wrapper", "return f(*args, **kwargs)"),
             (lib + "/run.py", rng.choice([794, 806, 812, 919]), "main", "run(args)"),
             (lib + "/run.py", rng.choice([785, 797, 803, 910]), "run", "elastic_launch("),
             (lib + "/launcher/api.py", rng.choice([132, 134, 138]), "__call__", "return launch_agent(self._config, self._entrypoint, list(args))"),
             (lib + "/launcher/api.py", rng.choice([246, 264, 269]), "launch_agent", "raise ChildFailedError(")])
    L.append("torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ")
    L.append("=" * 60)
    L.append("%s FAILED" % os.path.basename(c.script))
    L.append("-" * 60)
    L.append("Failures:")
    others = others or []

    def entry(r, code):
        e = ["[%d]:" % r, "  time      : %s" % c.ts(0, "%Y-%m-%d_%H:%M:%S"), "  host      : %s" % c.host,
             "  rank      : %d (local_rank: %d)" % (r, r), "  exitcode  : %d (pid: %d)" % (code, c.pid + 11 + r),
             "  error_file: <N/A>"]
        if code < 0:
            name = {6: "SIGABRT", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM", 7: "SIGBUS"}.get(-code, "SIG%d" % -code)
            e.append("  traceback : Signal %d (%s) received by PID %d" % (-code, name, c.pid + 11 + r))
        else:
            e.append("  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
        return e
    if not others:
        L.append("  <NO_OTHER_FAILURES>")
    for r, code in others:
        L += entry(r, code)
    L.append("-" * 60)
    L.append("Root Cause (first observed failure):")
    L += entry(root_rank, sig if sig is not None else exitcode)
    L.append("=" * 60)
    return L


def srun_tail(c, code=1, rank=None):
    rank = c.rng.randrange(max(c.nranks, 1)) if rank is None else rank
    L = ["srun: error: %s: task %d: Exited with exit code %d" % (c.host, rank, code)]
    if c.rng.random() < 0.5:
        L.insert(0, "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.")
    return L


def epilogue(c, state, code):
    rng = c.rng
    if not c.slurm or rng.random() < 0.4:
        return []
    if isinstance(code, int):
        code = "0:%d" % -code if code < 0 else "%d:0" % code
    el = rng.randint(60, 86000)
    return ["", "=" * 68,
            " Job %s epilogue on %s" % (c.jobid, c.host),
            " State: %-10s ExitCode: %s   Elapsed: %02d:%02d:%02d" % (state, code, el // 3600, el % 3600 // 60, el % 60),
            " MaxRSS: %.1fG   GPU util (mean): %d%%" % (rng.uniform(2, 300), rng.randint(0, 99)),
            "=" * 68]


# ---------------------------------------------------------------- composed failures
def rank_wrap(c, tb_lines, exc_exit=1, sig=None):
    """Place one rank's traceback in the log the way the launcher would, add launcher summary.
    Returns (lines, true_exit_code)."""
    rng = c.rng
    if c.nranks <= 1 or c.launcher == "python":
        return tb_lines, (sig if sig is not None else exc_exit)
    root = rng.randrange(c.nranks)
    if c.launcher == "srun":
        main = rank_prefix(tb_lines, root, "srun")
        s0 = getattr(c, "t_end", 200) * 5
        other = rank_prefix(["step %d loss=%.4f" % (s0 + 10 * k, rng.uniform(0.5, 3)) for k in range(rng.randint(1, 6))],
                            (root + 1) % c.nranks, "srun")
        return interleave(rng, [main, other]) + srun_tail(c, exc_exit if sig is None else 128 - sig, root), (exc_exit if sig is None else 128 - sig)
    style = "torch" if c.fw != "pt1" else "none"
    main = rank_prefix(tb_lines, root, style)
    seqs = [main]
    if rng.random() < 0.5 and c.nranks > 1:
        r2 = (root + 1) % c.nranks
        seqs.append(rank_prefix(tb_lines[:rng.randint(1, len(tb_lines))], r2, style))
    lines = interleave(rng, seqs)
    if c.launcher in ("torchrun", "accelerate", "deepspeed"):
        code = sig if sig is not None else exc_exit
        if c.launcher == "deepspeed" and rng.random() < 0.5:
            lines.append("[%s,%03d] [INFO] [launch.py:316:sigkill_handler] Killing subprocess %d" % (c.ts(0), rng.randint(0, 999), c.pid + 11 + root))
            lines.append("[%s,%03d] [ERROR] [launch.py:322:sigkill_handler] ['%s', '-u', '%s', '--local_rank=%d'] exits with return code = %d" % (
                c.ts(0), rng.randint(0, 999), c.pybin, os.path.basename(c.script), root, code))
            return lines, code
        lines += child_failed(c, code if code > 0 else code, root_rank=root)
        return lines, 1
    return lines, exc_exit


def f_cuda_oom(c):
    rng = c.rng
    a = rng.choice([20.0, 64.0, 128.0, 256.0, 512.0, 1.0, 1.5, 2.0, 3.91, 7.81, 12.0])
    unit = "MiB" if a >= 20 else "GiB"
    tot = c.gmem
    if c.fw == "jax":
        byt = rng.randint(10 ** 8, 4 * 10 ** 10)
        # JAX filters its own frames out of the printed traceback
        t = tb([(c.script, rng.randint(300, 500), "<module>", "main()"),
                (c.script, rng.randint(200, 300), "main", "state, metrics = train_step(state, batch)")])
        t += ["jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate %d bytes." % byt]
        if rng.random() < 0.5:
            t += ["BufferAssignment OOM Debugging.", "BufferAssignment stats:",
                  "             parameter allocation:    %.2fGiB" % rng.uniform(1, 20),
                  "              constant allocation:         0B",
                  "        maybe_live_out allocation:    %.2fGiB" % rng.uniform(1, 20),
                  "     preallocated temp allocation:    %.2fGiB" % rng.uniform(1, 20),
                  "                 total allocation:   %.2fGiB" % rng.uniform(20, 70)]
        t += ["--------------------",
              "For simplicity, JAX has removed its internal frames from the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to include these."]
        return t, 1, P["jaxoom"]
    if c.fw == "tf":
        shp = "[%d,%d,%d,%d]" % (rng.choice([32, 64, 128, 256]), rng.choice([56, 112, 224]), rng.choice([56, 112, 224]), rng.choice([64, 128, 256]))
        t = ["%s: W tensorflow/tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out of memory trying to allocate %.2fGiB (rounded to %d)requested by op %s" % (
            c.ts(0) + ".%06d" % rng.randint(0, 999999), rng.uniform(1, 8), rng.randint(10 ** 9, 8 * 10 ** 9), rng.choice(["Conv2D", "MatMul", "AddV2"])),
             "If the cause is memory fragmentation maybe the environment variable 'TF_GPU_ALLOCATOR=cuda_malloc_async' will improve the situation. "]
        t += tb([(c.script, rng.randint(100, 300), "<module>", "model.fit(train_ds, epochs=args.epochs, validation_data=val_ds)"),
                 (c.site + "/keras/src/utils/traceback_utils.py", 70, "error_handler", "raise e.with_traceback(filtered_tb) from None"),
                 (c.site + "/tensorflow/python/eager/execute.py", 53, "quick_execute", "tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,")])
        t += ["tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:", "",
              "OOM when allocating tensor with shape%s and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc" % shp,
              "\t [[{{node model/conv2d_%d/Conv2D}}]]" % rng.randint(1, 40),
              "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info. This isn't available when running in Eager mode.",
              " [Op:__inference_train_function_%d]" % rng.randint(1000, 99999)]
        return t, 1, P["tfoom"]
    where = backward_frames(c) if rng.random() < 0.5 else forward_frames(c) + [
        (c.site + "/torch/nn/modules/linear.py", rng.choice([114, 116, 125]), "forward", "return F.linear(input, self.weight, self.bias)")]
    frames = user_frames(c) + where
    if c.fw == "pt1":
        alloc = tot * rng.uniform(0.85, 0.97)
        msg = "RuntimeError: CUDA out of memory. Tried to allocate %.2f %s (GPU %d; %.2f GiB total capacity; %.2f GiB already allocated; %.2f MiB free; %.2f GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF" % (
            a, unit, 0, tot, alloc, rng.uniform(2, 900), alloc + rng.uniform(0.01, 1.5))
        prov = P["oom1"]
    else:
        free = rng.uniform(1, 900)
        used = tot - free / 1024.0
        pa = used * rng.uniform(0.8, 0.97)
        cls = rng.choice(["torch.OutOfMemoryError", "torch.cuda.OutOfMemoryError"])
        msg = "%s: CUDA out of memory. Tried to allocate %.2f %s. GPU 0 has a total capacity of %.2f GiB of which %.2f MiB is free. %s %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and %.2f MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)" % (
            cls, a, unit, tot, free, rng.choice(["Including non-PyTorch memory, this process has", "Process %d has" % (c.pid + 11)]), used, pa, rng.uniform(10, 2000))
        prov = P["oom2"]
    t, code = rank_wrap(c, tb(frames) + [msg])
    return t, code, prov


def f_nccl(c):
    rng = c.rng
    c.nranks = max(c.nranks, 2)
    if c.launcher == "python":
        c.launcher = "torchrun"
    kind = rng.choice(["watchdog", "watchdog", "backend", "remote"])
    if kind == "watchdog":
        seq = rng.randint(5, 500000)
        op = rng.choice(["ALLREDUCE", "_ALLGATHER_BASE", "_REDUCE_SCATTER_BASE", "BROADCAST"])
        n = rng.randint(1, 500000000)
        to = rng.choice([600000, 1800000])
        L = []
        for r in range(c.nranks):
            pre = "[rank%d]:[E%s ProcessGroupNCCL.cpp:%d] " % (r, c.ts(0, "%m%d %H:%M:%S") + ".%09d" % rng.randint(0, 999999999), 607) if c.fw != "pt1" else "[E ProcessGroupNCCL.cpp:%d] " % rng.choice([455, 737, 821])
            L.append(pre + "[Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=%d, NumelOut=%d, Timeout(ms)=%d) ran for %d milliseconds before timing out." % (
                r, seq, op, n, n, to, to + rng.randint(3, 120)))
        if c.fw == "pt1":
            L.append("[E ProcessGroupNCCL.cpp:414] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data. To avoid this inconsistency, we are taking the entire process down.")
            L.append("terminate called after throwing an instance of 'std::runtime_error'")
            L.append("  what():  [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, Timeout(ms)=%d) ran for %d milliseconds before timing out." % (seq, op, to, to + 17))
        else:
            for r in range(c.nranks):
                pre = "[rank%d]:[E%s ProcessGroupNCCL.cpp:%d] " % (r, c.ts(1, "%m%d %H:%M:%S") + ".%09d" % rng.randint(0, 999999999), 1664)
                L.append(pre + "[PG 0 Rank %d] Exception (either an error or timeout) detected by watchdog at work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d." % (r, seq, seq + 2, seq - 1))
            L.append("[rank0]:[E%s ProcessGroupNCCL.cpp:630] [Rank 0] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data." % c.ts(1, "%m%d %H:%M:%S"))
            L.append("[rank0]:[E%s ProcessGroupNCCL.cpp:636] [Rank 0] To avoid data inconsistency, we are taking the entire process down." % c.ts(1, "%m%d %H:%M:%S"))
            L.append("terminate called after throwing an instance of 'c10::DistBackendError'")
            L.append("  what():  [PG 0 Rank 0] Process group watchdog thread terminated with exception: [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=%d, NumelOut=%d, Timeout(ms)=%d) ran for %d milliseconds before timing out." % (seq, op, n, n, to, to + 60))
            L += cxx_frames(c, "checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609", 7, cuda=False)[:5]
        L += ["", "Fatal Python error: Aborted", ""] if rng.random() < 0.3 else []
        if c.launcher in ("torchrun", "accelerate", "deepspeed") and rng.random() < 0.8:
            L += child_failed(c, -6, root_rank=0, others=[(r, -6) for r in range(1, min(c.nranks, 3))], sig=-6)
            return L, 1, P["watchdog"] + "; " + P["childfailed"]
        return L, -6, P["watchdog"]
    if kind == "backend":
        ln = rng.choice([1275, 1331, 1691, 1727, 1970])
        nv = rng.choice(["2.14.3", "2.18.1", "2.19.3", "2.20.5"])
        err = rng.choice(["unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version %s\nncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ",
                          "unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version %s\nncclUnhandledCudaError: Call to CUDA function failed.",
                          "internal error - please report this issue to the NCCL developers, NCCL version %s\nncclInternalError: Internal check failed."]) % nv
        frames = user_frames(c, 0, "evaluate(model, val_loader, epoch)") + [(c.proot + "/utils/dist.py", rng.randint(20, 90), "barrier_all", "dist.barrier()"),
                                      (c.site + "/torch/distributed/c10d_logger.py", rng.choice([72, 75, 79]), "wrapper", "return func(*args, **kwargs)"),
                                      (c.site + "/torch/distributed/distributed_c10d.py", rng.choice([3696, 3439, 4166]), "barrier", "work = default_pg.barrier(opts=opts)")]
        cls = "torch.distributed.DistBackendError" if c.fw != "pt1" else "RuntimeError"
        t = tb(frames) + ["%s: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:%d, %s" % (cls, ln, err.split("\n")[0])] + err.split("\n")[1:]
        if "system" in err and rng.random() < 0.6:
            t.append("Last error:")
            t.append(rng.choice(["socketStartConnect: Connect to 10.0.3.12<43125> failed : Software caused connection abort",
                                 "Error while creating shared memory segment /dev/shm/nccl-Wd3aLt (size 9637888)"]))
        pre = []
        h = "%s:%d:%d [0]" % (c.host, c.pid + 11, c.pid + 240)
        pre.append("%s misc/socket.cc:%d NCCL WARN socketStartConnect: Connect to 10.0.3.12<43125> failed : Software caused connection abort" % (h, rng.choice([484, 538])))
        pre.append("%s NCCL INFO misc/socket.cc:%d -> 6" % (h, rng.choice([567, 568, 619])))
        L, code = rank_wrap(c, pre + t)
        return L, code, P["ncclerr"] + "; " + P["childfailed"]
    # remote
    nv = rng.choice(["2.18.1", "2.19.3", "2.21.5"])
    frames = user_frames(c) + backward_frames(c)
    t = tb(frames[:-1] + [(c.site + "/torch/nn/parallel/distributed.py", rng.choice([1515, 1589]), "forward", "inputs, kwargs = self._pre_forward(*inputs, **kwargs)")])
    t += ["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:%d, remote process exited or there was a network error, NCCL version %s" % (rng.choice([1691, 1970]), nv),
          "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
          "Last error:", "socketProgress: Connection closed by remote peer %s<%d>" % (rng.choice(HOSTS), rng.randint(30000, 60000))]
    L, code = rank_wrap(c, t)
    return L, code, P["ncclerr"]


def f_cuda_runtime(c):
    rng = c.rng
    kind = rng.choice(["ima_py", "ima_term", "dsa_index", "dsa_nll", "other"])
    if kind == "ima_term":
        L = ["terminate called after throwing an instance of 'c10::Error'",
             "  what():  CUDA error: an illegal memory access was encountered"] + cuda_tail(c) + [""]
        L += cxx_frames(c, "c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44", rng.randint(6, 14))
        L += [""]
        if rng.random() < 0.5:
            L += ["Fatal Python error: Aborted", "", "Thread 0x%016x (most recent call first):" % rng.randint(0x7f0000000000, 0x7fffffffffff),
                  '  File "%s/torch/utils/data/_utils/worker.py", line 308 in _worker_loop' % c.site, "",
                  "Current thread 0x%016x (most recent call first):" % rng.randint(0x7f0000000000, 0x7fffffffffff),
                  '  File "%s", line %d in train_step' % (c.script, rng.randint(60, 150)),
                  '  File "%s", line %d in train_one_epoch' % (c.script, rng.randint(150, 300)),
                  '  File "%s", line %d in main' % (c.script, rng.randint(150, 300)),
                  '  File "%s", line %d in <module>' % (c.script, rng.randint(300, 700))]
        if rng.random() < 0.5:
            L.append("Aborted (core dumped)")
        L2, code = rank_wrap(c, L, sig=-6)
        return L2, code, P["cudaerr"]
    if kind.startswith("dsa"):
        A = []
        nthreads = rng.randint(2, 40)
        for i in range(nthreads):
            if kind == "dsa_index":
                A.append("../aten/src/ATen/native/cuda/IndexKernel.cu:%d: operator(): block: [%d,0,0], thread: [%d,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && \"index out of bounds\"` failed." % (
                    rng.choice([92, 93, 94]), rng.randint(0, 200), i))
            else:
                A.append("../aten/src/ATen/native/cuda/Loss.cu:%d: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [%d,0,0] Assertion `t >= 0 && t < n_classes` failed." % (
                    rng.choice([240, 242, 250]), i))
        frames = user_frames(c) + [(c.script, rng.randint(60, 150), "train_step", "loss.item()" if rng.random() < 0.5 else "loss = criterion(outputs, targets)")]
        t = A + tb(frames) + ["RuntimeError: CUDA error: device-side assert triggered"] + cuda_tail(c)
        L, code = rank_wrap(c, t)
        return L, code, P["dsa"] + "; " + P["cudaerr"]
    msg = {"ima_py": "CUDA error: an illegal memory access was encountered",
           "other": rng.choice(["CUDA error: misaligned address", "CUDA error: an illegal instruction was encountered",
                                "CUDA error: unspecified launch failure",
                                "CUDA error: no kernel image is available for execution on the device",
                                "CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DFALT_TENSOR_OP)`"])}[kind]
    frames = user_frames(c) + (backward_frames(c) if rng.random() < 0.5 else forward_frames(c))
    t = tb(frames) + ["RuntimeError: " + msg] + cuda_tail(c)
    if rng.random() < 0.3:
        t += [""] + cxx_frames(c, "c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44", 6)
    L, code = rank_wrap(c, t)
    return L, code, P["cudaerr"]


def f_device_mismatch(c):
    rng = c.rng
    d = rng.choice(["cuda:0 and cpu", "cpu and cuda:0", "cuda:1 and cuda:0", "cuda:0 and cuda:3"])
    msg = rng.choice([
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, %s! (when checking argument for argument %s in method %s)" % (
            d, rng.choice(["mat1", "mat2", "index", "weight", "target"]), rng.choice(["wrapper_CUDA_addmm", "wrapper_CUDA_mm", "wrapper_CUDA__index_select", "wrapper_CUDA__native_layer_norm", "wrapper_CUDA_nll_loss_forward"])),
        "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, %s!" % d,
        "RuntimeError: Input type (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same",
        "RuntimeError: Input type (torch.FloatTensor) and weight type (torch.cuda.FloatTensor) should be the same or input should be a MKLDNN tensor and weight is a dense tensor",
    ])
    frames = user_frames(c) + forward_frames(c) + [
        rng.choice([(c.site + "/torch/nn/modules/linear.py", rng.choice([114, 116, 125]), "forward", "return F.linear(input, self.weight, self.bias)"),
                    (c.site + "/torch/nn/modules/conv.py", rng.choice([456, 460, 549]), "_conv_forward", "return F.conv2d(input, weight, bias, self.stride,"),
                    (c.site + "/torch/nn/modules/sparse.py", rng.choice([162, 163, 190]), "forward", "return F.embedding(")])]
    L, code = rank_wrap(c, tb(frames) + [msg])
    return L, code, P["devmm"]


def f_gpu_hardware(c):
    rng = c.rng
    kind = rng.choice(["ecc", "ecc", "bus", "nvlink", "ecc_tf"])
    pci = "0000:%02x:00" % rng.choice([0x07, 0x0b, 0x3b, 0x48, 0x4c, 0x88, 0x9b, 0xb3, 0xcb])
    if kind == "ecc":
        frames = user_frames(c) + (backward_frames(c) if rng.random() < 0.5 else forward_frames(c))
        t = tb(frames) + ["RuntimeError: CUDA error: uncorrectable ECC error encountered"] + cuda_tail(c)
        pre = []
        if rng.random() < 0.5:
            pre = ["[%s] kernel: NVRM: Xid (PCI:%s): 94, pid=%d, name=python, Contained ECC error" % (c.ts(0, "%b %d %H:%M:%S"), pci, c.pid + 11)]
        L, code = rank_wrap(c, t)
        return pre + L, code, P["ecc"] + ("; " + P["xid"] if pre else "")
    if kind == "ecc_tf":
        t = ["terminate called after throwing an instance of 'c10::Error'",
             "  what():  CUDA error: uncorrectable ECC error encountered"] + cuda_tail(c) + [""]
        t += cxx_frames(c, "c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:44", rng.randint(6, 12)) + [""]
        if rng.random() < 0.5:
            t.append("Aborted (core dumped)")
        L, code = rank_wrap(c, t, sig=-6)
        return L, code, P["ecc"] + "; " + P["cudaerr"]
    if kind == "bus":
        frames = user_frames(c) + backward_frames(c)
        t = tb(frames) + ["RuntimeError: CUDA error: unknown error"] + cuda_tail(c)
        L, code = rank_wrap(c, t)
        post = ["--- node health check (epilogue) ---",
                "[%s] kernel: NVRM: Xid (PCI:%s): 79, pid=%d, name=python, GPU has fallen off the bus." % (c.ts(2, "%b %d %H:%M:%S"), pci, c.pid + 11),
                "[%s] kernel: NVRM: GPU %s.0: GPU has fallen off the bus." % (c.ts(2, "%b %d %H:%M:%S"), pci),
                "Unable to determine the device handle for GPU%s.0: Unknown Error" % pci.upper().replace("0000:", "00000000:")]
        return L + post, code, P["xid"] + "; " + P["cudaerr"]
    # nvlink
    pre = ["[%s] kernel: NVRM: Xid (PCI:%s): 145, RLW_RXPIPE Nonfatal XC0 i0 Link %d (0x0409a0c2 0x00000008 0x00000001 0x00000000 0x00100000 0x00000004)" % (c.ts(0, "%b %d %H:%M:%S"), pci, rng.randint(0, 17)),
           "[%s] kernel: NVRM: Xid (PCI:%s): 149, NETIR_LINK_EVT Fatal XC0 i0 Link %02d (0x025001c6 0x00000000 0x00000000 0x00000000 0x00000000 0x00000000)" % (c.ts(1, "%b %d %H:%M:%S"), pci, rng.randint(0, 17))]
    c.nranks = max(c.nranks, 2)
    frames = user_frames(c) + backward_frames(c)
    t = tb(frames) + ["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
                      "ncclUnhandledCudaError: Call to CUDA function failed.", "Last error:", "Cuda failure 'uncorrectable NVLink error detected during the execution'"]
    L, code = rank_wrap(c, t)
    return pre + L, code, P["xid"] + "; " + P["ncclerr"]


def f_nan_composed(c):
    rng = c.rng
    kind = rng.choice(["anomaly", "fairseq", "ds", "lightning"])
    if kind == "anomaly":
        op = rng.choice(["MulBackward0", "PowBackward0", "DivBackward0", "MmBackward0", "LogSoftmaxBackward0", "SqrtBackward0"])
        pre = ["%s/torch/autograd/__init__.py:251: UserWarning: Error detected in %s. Traceback of forward call that caused the error:" % (c.site, op),
               '  File "%s", line %d, in <module>' % (c.script, rng.randint(300, 600)), "    main(args)",
               '  File "%s", line %d, in compute_loss' % (c.script, rng.randint(40, 120)), "    loss = (pred - target).pow(2).div(var).mean()",
               " (Triggered internally at ../torch/csrc/autograd/python_anomaly_mode.cpp:114.)", "  Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass"]
        t = pre + tb(user_frames(c) + backward_frames(c)) + ["RuntimeError: Function '%s' returned nan values in its %dth output." % (op, rng.choice([0, 0, 1]))]
        L, code = rank_wrap(c, t)
        return L, code, P["anomaly"]
    if kind == "fairseq":
        L = []
        s = 0.0001
        sc = 128.0
        while sc > s:
            sc /= 2
            L.append("%s | WARNING | fairseq.nan_detector | NaN detected in output of encoder.layers.%d.self_attn, shape: torch.Size([%d, 8, 512]), forward" % (c.ts(0), rng.randint(0, 11), rng.randint(20, 200))) if rng.random() < 0.1 else None
            L.append("%s | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: %s" % (c.ts(0), repr(sc)))
        L = [x for x in L if x]
        L += tb([(c.pybin.replace("/python", "/fairseq-train"), 8, "<module>", "sys.exit(cli_main())"),
                 (c.site + "/fairseq/trainer.py", 911, "train_step", "grad_norm = self.clip_grad_norm(self.cfg.optimization.clip_norm)"),
                 (c.site + "/fairseq/optim/fp16_optimizer.py", 200, "clip_grad_norm", "self.scaler.check_overflow(grad_norm)"),
                 (c.site + "/fairseq/optim/dynamic_loss_scaler.py", 61, "check_overflow", "raise FloatingPointError(")])
        L.append("FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering the learning rate, using gradient clipping or increasing the batch size.")
        return L, 1, P["fairseq"]
    if kind == "ds":
        L = []
        sc = 2 ** rng.randint(8, 16)
        while sc > 1:
            L.append("[%s,%03d] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d" % (c.ts(0), rng.randint(0, 999), sc, sc // 2))
            L.append("{'loss': nan, 'grad_norm': nan, 'learning_rate': %.4e, 'epoch': %.2f}" % (rng.uniform(1e-5, 3e-4), rng.uniform(0.1, 3)))
            sc //= 2
        L += tb(user_frames(c, 0, "model_engine.step()") + [(c.site + "/deepspeed/runtime/fp16/loss_scaler.py", 175, "update_scale", "raise Exception(")])
        L.append("Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.")
        L2, code = rank_wrap(c, L)
        return L2, code, P["ds_overflow"] + "; DeepSpeed loss_scaler.py 'Current loss scale already at minimum' (Firefly#68)"
    # lightning-style explicit check in user code
    L = ["Epoch %d:  %d%%|%s| %d/%d [..., loss=nan, v_num=%d]" % (rng.randint(0, 9), 37, "███▋      ", 370, 1000, rng.randint(0, 30))]
    L += tb(user_frames(c) + [(c.script, rng.randint(60, 150), "train_step", "raise ValueError(f\"loss is {loss.item()} at step {step}; stopping\")")])
    L.append("ValueError: loss is nan at step %d; stopping" % rng.randint(100, 90000))
    return L, 1, "user-code NaN guard (composed; lightning-style progress bar)"


COMPOSED = {"cuda_oom": f_cuda_oom, "nccl": f_nccl, "cuda_runtime": f_cuda_runtime,
            "device_mismatch": f_device_mismatch, "gpu_hardware": f_gpu_hardware}


def composed_torch_runtime(c):
    rng = c.rng
    msg = rng.choice([
        "RuntimeError: mat1 and mat2 shapes cannot be multiplied (%dx%d and %dx%d)" % (rng.choice([32, 64, 128]), rng.choice([512, 768, 2048]), rng.choice([256, 1024]), rng.choice([10, 1000])),
        "RuntimeError: The size of tensor a (%d) must match the size of tensor b (%d) at non-singleton dimension %d" % (rng.choice([128, 197, 512]), rng.choice([64, 196, 256]), rng.randint(0, 3)),
        "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.",
        "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn",
        "RuntimeError: Given groups=1, weight of size [64, 3, 7, 7], expected input[%d, 1, 224, 224] to have 3 channels, but got 1 channels instead" % rng.choice([8, 16, 32]),
        "RuntimeError: Error(s) in loading state_dict for %s:\n\tMissing key(s) in state_dict: \"head.weight\", \"head.bias\". \n\tUnexpected key(s) in state_dict: \"fc.weight\", \"fc.bias\". " % rng.choice(["ResNet", "VisionTransformer", "DistributedDataParallel"]),
    ])
    frames = user_frames(c) + forward_frames(c)
    L, code = rank_wrap(c, tb(frames) + msg.split("\n"))
    return L, code, "pytorch/pytorch aten shape/autograd/load_state_dict RuntimeError texts (composed)"


def composed_oom_killer(c):
    rng = c.rng
    L = []
    if c.launcher == "torchrun" and c.nranks > 1 and rng.random() < 0.5:
        L += child_failed(c, -9, root_rank=rng.randrange(c.nranks), sig=-9)
        L += ["slurmstepd: error: Detected 1 oom-kill event(s) in StepId=%s.0. Some of your processes may have been killed by the cgroup out-of-memory handler." % c.jobid]
        return L, 1, P["childfailed"] + "; " + P["slurm_oom"]
    L += ["slurmstepd: error: Detected %d oom-kill event(s) in StepId=%s.%s. Some of your processes may have been killed by the cgroup out-of-memory handler." % (rng.randint(1, 3), c.jobid, rng.choice(["batch", "0"]))]
    if rng.random() < 0.5:
        L.append("srun: error: %s: task 0: Out Of Memory" % c.host)
    return L, -9, P["slurm_oom"]


# ---------------------------------------------------------------- captured failures
CHILD_TEMPLATE = r'''
import sys, os, time, signal
def emit(path):
    with open(path, "rb") as f:
        for i, raw in enumerate(f):
            line = raw.decode("utf-8").rstrip("\n")
            (sys.stderr if line.startswith(("WARNING", "Traceback", "  File", "ModuleNotFoundError", "{site_marker}")) or "Warning:" in line else sys.stdout).write(line + "\n")
            if i % 50 == 0:
                sys.stdout.flush(); sys.stderr.flush()
    sys.stdout.flush(); sys.stderr.flush()

{helpers}

def main():
    emit({noise!r})
    {body}

if __name__ == "__main__":
    main()
'''

HELPERS = r'''
def load_shard(path):
    with open(path, "rb") as f:
        return f.read(16)

def compute_lr(base_lr, step, warmup):
    return base_lr * step / warmup

def average(values):
    return sum(values) / len(values)

def check_batch(batch, expected):
    assert len(batch) == expected, "batch size mismatch: got %d expected %d" % (len(batch), expected)

def get_cfg(cfg, key):
    return cfg[key]

def save_checkpoint(path, nbytes):
    with open(path, "wb") as f:
        for _ in range(nbytes // 4096 + 1):
            f.write(b"\0" * 4096)
            f.flush()
            os.fsync(f.fileno())

def train_step(w, lr, x, y):
    pred = w * x
    loss = (pred - y) ** 2
    grad = 2 * (pred - y) * x
    return w - lr * grad, loss

def run_training():
    step = int(os.environ.get("START_STEP", "0"))
    while True:
        step += 1
        print("step %d loss=%.4f" % (step, 0.2 + 30.0 / step), flush=True)
        time.sleep(0.05)
'''


def captured_body(mode, rng, tmp):
    """Return (body_code, prov, extra) for a captured failing program of this mode."""
    if mode == "div_zero":
        v = rng.choice([
            "lr = compute_lr(3e-4, 100, int(os.environ.get('WARMUP', '0')))",
            "print('mean val loss', average([]))",
            "tokens_per_sec = 4096 // int('0')",
            "scale = 1.0 / float(sum([0.0, 0.0]))",
            "ratio = 17 % 0",
            "steps_per_epoch = len([]) and 1; epochs = 1000 / steps_per_epoch"])
        return v, "captured: Python ZeroDivisionError"
    if mode == "file_not_found":
        p = rng.choice(["/data/imagenet/train/shard-%05d.tar" % rng.randint(0, 2000), "/scratch/%s/cache/tokenized/train.bin" % rng.choice(USERS),
                        "checkpoints/last.ckpt", "/datasets/coco/annotations/instances_train2017.json", "configs/%s.yaml" % rng.choice(PROJECTS)])
        v = rng.choice(["load_shard(%r)" % p, "import json; json.load(open(%r))" % p, "os.listdir(%r)" % os.path.dirname(p),
                        "import pathlib; pathlib.Path(%r).read_text()" % p])
        return v, "captured: Python FileNotFoundError"
    if mode == "permission":
        secret = os.path.join(tmp, "protected", "model_weights.bin")
        os.makedirs(os.path.dirname(secret), exist_ok=True)
        with open(secret, "wb") as f:
            f.write(b"x" * 64)
        os.chmod(secret, 0o000)
        os.chmod(os.path.dirname(secret), 0o755)
        ro = os.path.join(tmp, "ro_out")
        os.makedirs(ro, exist_ok=True)
        os.chmod(ro, 0o555)
        v = rng.choice(["load_shard(%r)" % secret, "save_checkpoint(%r, 100)" % os.path.join(ro, "ckpt_001.pt"),
                        "os.makedirs(%r)" % os.path.join(ro, "runs", "exp1")])
        return v, "captured: PermissionError (child run as uid 65534 via setpriv)"
    if mode == "missing_module":
        v = rng.choice(["import %s" % rng.choice(["apex", "flash_attn", "timm", "wandb", "deepspeed", "xformers", "einops", "bitsandbytes", "peft"]),
                        "from %s import %s" % (rng.choice(["transformers_custom", "mmcv", "detectron2"]), rng.choice(["Trainer", "Config", "build_model"])),
                        "import localmods; from localmods import FusedLayerNorm",
                        "try:\n        import flash_attn\n    except ImportError:\n        import xformers.ops"])
        return v, "captured: Python ModuleNotFoundError/ImportError"
    if mode == "assertion":
        v = rng.choice(["check_batch([1]*%d, %d)" % (rng.randint(1, 31), 32),
                        "x = [1.0, float('inf')]\n    assert all(v < 1e6 for v in x)",
                        "world = 3\n    assert 64 % world == 0, 'global batch %d not divisible by world size %d' % (64, world)",
                        "assert os.environ.get('NOPE_RANK') is not None"])
        return v, "captured: Python AssertionError"
    if mode == "traceback":
        v = rng.choice(["get_cfg({'lr': 1e-3}, 'weight_decay')", "int('12abc')", "[1, 2, 3][7]", "None.shape",
                        "'%d' % 'x'", "import json; json.loads('{\"a\": 1,')", "float('nan_value')",
                        "dict(a=1).update(3)", "b'\\xff\\xfe'.decode('utf-8')", "sorted([1, 'a'])", "undefined_name + 1",
                        "try:\n        get_cfg({'lr': 1e-3}, 'optimizer')\n    except KeyError as e:\n        raise ValueError('invalid config: missing optimizer section') from e"])
        return v, "captured: Python exception (non-RuntimeError)"
    if mode == "runtime_error":
        v = rng.choice(["d = {1: 1}\n    for k in d: d[k + 1] = 0",
                        "s = {1}\n    for k in s: s.add(k + 1)",
                        "raise RuntimeError('dataset shards exhausted before end of epoch %d' % 3)",
                        "raise RuntimeError('checkpoint step %d does not match scheduler step %d' % (4000, 3999))",
                        "def g():\n        yield next(iter([]))\n    list(g())"])
        return v, "captured: Python RuntimeError"
    if mode == "segfault":
        return rng.choice(["import ctypes, faulthandler; faulthandler.enable(); ctypes.string_at(0)", "import ctypes; ctypes.string_at(0)",
                           "import ctypes; ctypes.memmove(16, 1 << 20, 64)"]), "captured: SIGSEGV via ctypes.string_at(0), PYTHONFAULTHANDLER"
    if mode == "ram_oom":
        v = rng.choice(["import resource; resource.setrlimit(resource.RLIMIT_AS, (600*1024*1024, 600*1024*1024)); buf = bytearray(2 * 1024**3)",
                        "import resource; resource.setrlimit(resource.RLIMIT_AS, (600*1024*1024, 600*1024*1024)); xs = [0.0] * (500 * 1024**2)",
                        "import resource; resource.setrlimit(resource.RLIMIT_AS, (700*1024*1024, 700*1024*1024)); cache = [bytes(64 * 1024**2) for _ in range(40)]",
                        "import mmap; arena = mmap.mmap(-1, 1 << 46)",
                        "import mmap; pinned = [mmap.mmap(-1, 1 << 45) for _ in range(4)]"] + (
                        ["import ctypes, resource; resource.setrlimit(resource.RLIMIT_AS, (2*1024**3, 2*1024**3)); lib = ctypes.CDLL(%r); lib.prefetch_to_host.argtypes = [ctypes.c_size_t]; lib.prefetch_to_host(1 << 44)" % NATIVE_LIB[0]] * 2 if NATIVE_LIB else []))
        return v, "captured: host MemoryError / ENOMEM under RLIMIT_AS"
    if mode == "native_abort":
        v = rng.choice(["os.abort()",
                        "import ctypes; l = ctypes.CDLL(None); l.malloc.restype = ctypes.c_void_p; p = l.malloc(64); l.free(ctypes.c_void_p(p + 1))",
                        "import ctypes; l = ctypes.CDLL(None); l.malloc.restype = ctypes.c_void_p; p = l.malloc(64); l.free(ctypes.c_void_p(p)); l.free(ctypes.c_void_p(p))",
                        "os.kill(os.getpid(), signal.SIGBUS)", "os.kill(os.getpid(), signal.SIGILL)"])
        return v, "captured: SIGABRT/SIGBUS/SIGILL (os.abort, glibc free() checks, os.kill)"
    if mode == "unknown":
        v = rng.choice(["sys.exit(3)", "sys.exit(1)", "os._exit(2)", "sys.exit(255)", "raise SystemExit(4)"])
        return v, "captured: silent nonzero exit"
    if mode == "nan_loss":
        v = ("w, lr = 0.5, float(os.environ.get('LR', '0.9'))\n"
             "    for step in range(1, 400):\n"
             "        x = 3.0 + (step % 7)\n"
             "        try:\n"
             "            w, loss = train_step(w, lr, x, 2.0 * x)\n"
             "        except OverflowError:\n"
             "            w, loss = float('nan'), float('nan')\n"
             "        if step % 5 == 0 or loss != loss:\n"
             "            print('step %d loss=%s' % (step, loss), flush=True)\n"
             "        if loss != loss:\n"
             "            raise FloatingPointError('loss is NaN at step %d (lr=%g)' % (step, lr))")
        return v, "captured: pure-Python diverging SGD, NaN detected"
    if mode == "disk_full":
        return "save_checkpoint(os.path.join(os.environ['CKPT_DIR'], 'epoch_%03d.pt'), 1 << 20)" % rng.randint(0, 99), "captured: ENOSPC writing checkpoint to a 64k tmpfs"
    if mode in ("oom_killer", "walltime", "preempted", "interrupted", "interrupted_sigint", "walltime_kbi"):
        if mode == "walltime_kbi":
            return ("def _term(signum, frame):\n        raise KeyboardInterrupt\n    signal.signal(signal.SIGTERM, _term)\n    run_training()"), "captured: SIGTERM handler raising KeyboardInterrupt"
        return "run_training()", {"oom_killer": "captured: running child SIGKILLed (as the OOM killer does)",
                                  "walltime": "captured: running child SIGTERMed (as slurm does at the time limit)",
                                  "preempted": "captured: running child SIGTERMed (as slurm does on preemption)",
                                  "interrupted": "captured: running child SIGTERMed (scancel)",
                                  "interrupted_sigint": "captured: running child sent SIGINT (Ctrl-C)"}[mode]
    if mode == "success":
        return "print('training finished; best val_error=%.4f' % 0.1234)", "captured: clean exit"
    if mode == "nan_exit0":
        v = ("w, lr = 0.5, 0.9\n"
             "    for step in range(1, 300):\n"
             "        x = 3.0 + (step % 7)\n"
             "        try:\n"
             "            w, loss = train_step(w, lr, x, 2.0 * x)\n"
             "        except OverflowError:\n"
             "            w, loss = float('nan'), float('nan')\n"
             "        if step % 10 == 0:\n"
             "            print('step %d loss=%s' % (step, loss), flush=True)\n"
             "    print('done: final loss=%s' % loss)")
        return v, "captured: diverging loop that finishes with loss=nan (exit 0)"
    raise ValueError(mode)


def run_captured(mode, rng, c, n_lines, tmp_root, idx):
    tmp = os.path.join(tmp_root, "run%04d" % idx)
    os.makedirs(tmp)
    os.chmod(tmp, 0o755)
    body, prov = captured_body(mode, rng, tmp)
    noise = noise_body(c, n_lines, nan_blip=(rng.random() < 0.3) if mode != "nan_loss" else False,
                       big=(n_lines > 7000))
    npath = os.path.join(tmp, "noise.txt")
    with open(npath, "wb") as f:
        f.write(("\n".join(noise) + "\n").encode("utf-8"))
    os.chmod(npath, 0o644)
    if mode == "missing_module" and "localmods" in body:
        with open(os.path.join(tmp, "localmods.py"), "w") as f:
            f.write("LayerNorm = object\n")
    script = os.path.join(tmp, os.path.basename(c.script))
    with open(script, "w") as f:
        f.write(CHILD_TEMPLATE.format(helpers=HELPERS, noise=npath, body=body.replace("\n", "\n") if True else body,
                                      site_marker="/").replace("{site_marker}", "/"))
    os.chmod(script, 0o644)
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    env["PYTHONFAULTHANDLER"] = "1" if (mode in ("segfault", "native_abort") and rng.random() < 0.8) else ""
    if not env["PYTHONFAULTHANDLER"]:
        env.pop("PYTHONFAULTHANDLER")
    env["PYTHONIOENCODING"] = "utf-8"
    env["START_STEP"] = str(rng.randint(1000, 90000))
    py = PY
    if rng.random() < 0.35 and mode not in ("permission",):
        alt = rng.choice(["3.8.18", "3.10.13", "3.12.1", "3.9.18"])
        cand = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(PY))), alt, "bin", "python3")
        if os.path.exists(cand):
            py = cand
    argv = [py, script]
    if mode == "permission" and os.geteuid() == 0:
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", SYS_PY, script]
    mount = None
    if mode == "disk_full":
        mount = os.path.join(tmp, "ckpt")
        os.makedirs(mount)
        r = subprocess.call(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", mount],
                            stderr=subprocess.DEVNULL) if os.geteuid() == 0 else 1
        if r != 0:
            # not root: the checkpoint path is a link to /dev/full, which also fails with ENOSPC
            mount = None
            m = re.search(r"epoch_\d+\.pt", body)
            os.symlink("/dev/full", os.path.join(tmp, "ckpt", m.group(0)))
        env["CKPT_DIR"] = os.path.join(tmp, "ckpt")
    shell = mode in ("segfault", "oom_killer", "native_abort") and rng.random() < 0.35
    if shell:
        # run through a job script, so bash reports the signal death itself
        job = os.path.join(tmp, "job.sh")
        with open(job, "w") as f:
            f.write("#!/bin/bash\n%s %s --config configs/%s.yaml\n" % (py if mode != "permission" else SYS_PY, script, c.proj))
        argv = ["bash", job]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=tmp,
                         start_new_session=True)
    sig = {"oom_killer": signal.SIGKILL, "walltime": signal.SIGTERM, "preempted": signal.SIGTERM,
           "interrupted": signal.SIGTERM, "interrupted_sigint": signal.SIGINT, "walltime_kbi": signal.SIGTERM}.get(mode)
    if sig is not None:
        out = b""
        import select
        deadline = time.time() + 0.3 + rng.random() * 0.4
        while time.time() < deadline:
            r, _, _ = select.select([p.stdout], [], [], 0.05)
            if r:
                chunk = os.read(p.stdout.fileno(), 65536)
                if not chunk:
                    break
                out += chunk
        if shell:
            # signal the python grandchild, not bash
            kids = subprocess.check_output(["pgrep", "-P", str(p.pid)]).split()
            os.kill(int(kids[0]), sig)
        else:
            os.kill(p.pid, sig)
        rest, _ = p.communicate()
        out += rest
    else:
        try:
            out, _ = p.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            out, _ = p.communicate()
    code = p.returncode
    if mount:
        subprocess.call(["umount", mount])
    text = out.decode("utf-8", "replace").replace(tmp, os.path.dirname(c.script))
    text = scrub(text, c)
    return text, code, prov


def scrub(text, c):
    # interpreter install paths of this build machine -> the job's environment
    import re
    text = re.sub(r"/root/\.pyenv/versions/[0-9.]+/lib/python3\.[0-9]+", c.site.rsplit("/", 1)[0], text)
    text = re.sub(r"/root/\.pyenv/versions/[0-9.]+/bin/python3(\.[0-9]+)?", c.pybin, text)
    return text.replace("/usr/lib/python3.11", c.site.rsplit("/", 1)[0]).replace(SYS_PY, c.pybin)


NATIVE_LIB = []
NATIVE_SRC = r'''
#include <vector>
#include <cstddef>
extern "C" void prefetch_to_host(size_t n) {
    std::vector<char>* v = new std::vector<char>(n);
    (*v)[0] = 1;
}
'''


def build_native(tmp_root):
    src = os.path.join(tmp_root, "hostcache.cpp")
    so = os.path.join(tmp_root, "libhostcache.so")
    with open(src, "w") as f:
        f.write(NATIVE_SRC)
    if shutil.which("g++") and subprocess.call(["g++", "-O1", "-shared", "-fPIC", "-o", so, src]) == 0:
        os.chmod(so, 0o755)
        NATIVE_LIB.append(so)


# ---------------------------------------------------------------- assembly
def slurm_line(c, reason):
    t = c.ts(200000 + c.rng.randint(0, 50000), "%Y-%m-%dT%H:%M:%S")
    if reason == "time":
        return "slurmstepd: error: *** JOB %s ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (c.jobid, c.host, t)
    if reason == "preempt":
        return "slurmstepd: error: *** JOB %s ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (c.jobid, c.host, t)
    return "slurmstepd: error: *** JOB %s ON %s CANCELLED AT %s ***" % (c.jobid, c.host, t)


def build(mode, idx, rng, tmp_root, plan):
    """Return (text, exit, source, provenance, gpu, driver)."""
    kind = plan
    n = pick_len(rng)
    if kind == "captured":
        c = Ctx(rng, fw=rng.choice(["pt2", "pt1", "lightning", "hf", "plain", "deepspeed"]), composed=False)
        cm = mode
        if mode == "interrupted":
            cm = rng.choice(["interrupted_sigint", "interrupted_sigint", "interrupted"])
        if mode == "walltime":
            cm = rng.choice(["walltime", "walltime_kbi"])
        if mode == "nan_loss" and rng.random() < 0.35:
            cm = "nan_exit0"
        text, code, prov = run_captured(cm, rng, c, n, tmp_root, idx)
        tail = []
        if mode == "walltime":
            if rng.random() < 0.75 or not c.slurm:
                tail = [slurm_line(c, "time")]
                prov += "; " + P["slurm_tl"]
            else:
                tail = ["=>> PBS: job killed: walltime %d exceeded limit %d" % (7200 + rng.randint(5, 90), 7200)]
                prov += "; " + P["pbs_wt"]
        elif mode == "preempted":
            tail = [slurm_line(c, "preempt")]
            if rng.random() < 0.3:
                tail.append("slurmstepd: error: *** JOB %s STEPD TERMINATED ON %s AT %s DUE TO JOB NOT RUNNING ***" % (c.jobid, c.host, c.ts(30, "%Y-%m-%dT%H:%M:%S")))
            prov += "; " + P["slurm_pre"]
        elif mode == "interrupted" and cm == "interrupted":
            tail = [slurm_line(c, "cancel")]
            prov += "; " + P["slurm_cancel"]
        elif mode == "oom_killer":
            r = rng.random()
            if r < 0.45:
                tail = ["slurmstepd: error: Detected 1 oom-kill event(s) in StepId=%s.batch. Some of your processes may have been killed by the cgroup out-of-memory handler." % c.jobid]
                prov += "; " + P["slurm_oom"]
            elif r < 0.7 and "Killed" not in text[-300:]:
                tail = ["Killed"]
                prov += "; composed shell 'Killed' line"
        if mode == "walltime" and rng.random() < 0.4:
            tail = tail[:1] + (tail[1:] if len(tail) > 1 else [])
        text = text + ("\n".join(tail) + "\n" if tail else "")
        text += "\n".join(epilogue(c, {"walltime": "TIMEOUT", "preempted": "PREEMPTED", "oom_killer": "OUT_OF_MEMORY"}.get(mode, "FAILED" if code else "COMPLETED"), code))
        return text, code, "captured", prov, "none", "none"
    # composed
    c = Ctx(rng, fw=rng.choice(["pt2", "pt2", "pt1", "lightning", "hf", "deepspeed", "jax", "tf"]) if mode == "cuda_oom" else None)
    if c.fw in ("jax", "tf"):
        c.nranks, c.launcher = 1, "python"
    body = noise_body(c, n, big=(n > 7000))
    c.t0 += getattr(c, "t_end", 0) + rng.randint(1, 30)
    if mode in COMPOSED:
        fail, code, prov = COMPOSED[mode](c)
    elif mode == "runtime_error":
        fail, code, prov = composed_torch_runtime(c)
    elif mode == "oom_killer":
        fail, code, prov = composed_oom_killer(c)
    elif mode == "nan_loss":
        fail, code, prov = f_nan_composed(c)
    elif mode == "disk_full":
        fail, code, prov = composed_disk_full(c)
    elif mode == "success":
        fail, code, prov = composed_success(c)
    else:
        raise ValueError(mode)
    if code != 0 and mode != "success" and c.slurm and c.launcher == "srun" and not any(l.startswith("srun: error") for l in fail):
        fail += srun_tail(c, code if code > 0 else 128 - code)
    lines = body + fail + epilogue(c, "FAILED" if code else "COMPLETED", code)
    return "\n".join(lines) + "\n", code, "composed", prov, c.gpu, c.driver


def composed_disk_full(c):
    rng = c.rng
    kind = rng.choice(["torchsave", "quota", "hf"])
    ck = "%s/checkpoints/step_%d.pt" % (c.proot, rng.randint(1000, 90000))
    if kind == "torchsave":
        frames = user_frames(c, 0, "save_checkpoint(model, optimizer, ckpt_path)") + [(c.script, rng.randint(100, 300), "save_checkpoint", "torch.save(state, path)"),
                                      (c.site + "/torch/serialization.py", rng.choice([618, 652, 850]), "save", "_save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)"),
                                      (c.site + "/torch/serialization.py", rng.choice([882, 866, 1114]), "_save", "zip_file.write_record(name, storage, num_bytes)")]
        t = tb(frames) + ["RuntimeError: [enforce fail at inline_container.cc:%d] . PytorchStreamWriter failed writing file data/%d: file write failed" % (rng.choice([764, 778, 815]), rng.randint(0, 400)),
                          "", "During handling of the above exception, another exception occurred:", ""]
        t += tb(frames[:-2] + [(c.site + "/torch/serialization.py", rng.choice([617, 651, 849]), "save", "with _open_zipfile_writer(f) as opened_zipfile:"),
                               (c.site + "/torch/serialization.py", rng.choice([475, 499, 695]), "__exit__", "self.file_like.write_end_of_file()")])
        t += ["RuntimeError: [enforce fail at inline_container.cc:%d] . unexpected pos %d vs %d" % (rng.choice([595, 603]), rng.randint(10 ** 8, 10 ** 9), rng.randint(10 ** 8, 10 ** 9))]
        pre = ["saving checkpoint to %s" % ck]
        if rng.random() < 0.5:
            pre.append("WARNING: %s: only %d MiB free on %s" % ("disk-monitor", rng.randint(1, 200), os.path.dirname(ck)))
        L, code = rank_wrap(c, pre + t)
        return L, code, P["save"] + " (no explicit ENOSPC text; a practitioner reads the failed checkpoint write as disk full)"
    if kind == "quota":
        frames = user_frames(c, 0, "save_checkpoint(model, optimizer, ckpt_path)") + [(c.script, rng.randint(100, 300), "save_checkpoint", "torch.save(state, path)"),
                                      (c.site + "/torch/serialization.py", rng.choice([440, 618]), "save", "with _open_zipfile_writer(f) as opened_zipfile:"),
                                      (c.site + "/torch/serialization.py", rng.choice([315, 501]), "_open_zipfile_writer", "return container(name_or_buffer)")]
        t = tb(frames) + ["OSError: [Errno 122] Disk quota exceeded: '%s'" % ck] if rng.random() < 0.5 else tb(frames[:-2] + [(c.site + "/torch/serialization.py", 423, "save", "_save(obj, opened_zipfile, pickle_module, pickle_protocol)")]) + ["OSError: [Errno 122] Disk quota exceeded"]
        L, code = rank_wrap(c, t)
        return L, code, "Linux EDQUOT strerror 'Disk quota exceeded' (errno 122) raised through torch.save (composed)"
    frames = user_frames(c, 0, "trainer.train(resume_from_checkpoint=args.resume)") + [(c.site + "/transformers/trainer.py", rng.choice([1859, 2052, 2279]), "train", "return inner_training_loop("),
                                  (c.site + "/transformers/trainer.py", rng.choice([2291, 2548, 2744]), "_inner_training_loop", "self._maybe_log_save_evaluate(tr_loss, grad_norm, model, trial, epoch, ignore_keys_for_eval)"),
                                  (c.site + "/transformers/trainer.py", rng.choice([2732, 3007, 3219]), "_save_checkpoint", "self.save_model(output_dir, _internal_call=True)"),
                                  (c.site + "/safetensors/torch.py", 286, "save_file", "serialize_file(_flatten(tensors), filename, metadata=metadata)")]
    t = tb(frames) + ["safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: \"No space left on device\" })"]
    L, code = rank_wrap(c, t)
    return L, code, "huggingface/safetensors bindings/python error text 'Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: \"No space left on device\" })' (Rust io::Error Debug form; composed)"


def composed_success(c):
    rng = c.rng
    L = []
    if c.fw == "hf":
        L += ["", "", "Training completed. Do not forget to share your model on huggingface.co/models =)", "", "",
              "{'train_runtime': %.4f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %.3f, 'train_loss': %.6f, 'epoch': %.1f}" % (
                  rng.uniform(100, 90000), rng.uniform(5, 500), rng.uniform(0.1, 20), rng.uniform(0.2, 2), rng.randint(1, 10))]
    elif c.fw == "lightning":
        L += ["`Trainer.fit` stopped: `max_epochs=%d` reached." % rng.randint(1, 100)]
    elif c.fw == "deepspeed":
        L += ["[%s,%03d] [INFO] [launch.py:347:main] Process %d exits successfully." % (c.ts(0), rng.randint(0, 999), c.pid + 11 + r) for r in range(max(c.nranks, 1))]
    else:
        L += ["training done in %.1f h, best val_error=%.4f (epoch %d); no errors" % (rng.uniform(0.1, 70), rng.uniform(0.01, 0.3), rng.randint(1, 90))]
    if rng.random() < 0.3:
        L += ["wandb: Waiting for W&B process to finish... (success).", "wandb: Run summary:", "wandb:   train/loss %.5f" % rng.uniform(0.1, 2), "wandb: val/error_rate %.4f" % rng.uniform(0.01, 0.3)]
    return L, 0, "composed success: framework end-of-run lines"


# ---------------------------------------------------------------- plan
PLAN = [
    # (mode, n_captured, n_composed)
    ("cuda_oom", 0, 44), ("nccl", 0, 34), ("cuda_runtime", 0, 34), ("ram_oom", 34, 0), ("segfault", 32, 0),
    ("file_not_found", 32, 0), ("permission", 32, 0), ("missing_module", 32, 0), ("div_zero", 32, 0),
    ("device_mismatch", 0, 32), ("nan_loss", 16, 16), ("oom_killer", 22, 10), ("traceback", 34, 0),
    ("assertion", 32, 0), ("runtime_error", 20, 12),
    ("gpu_hardware", 0, 16), ("disk_full", 8, 8), ("walltime", 16, 0), ("preempted", 14, 0),
    ("interrupted", 16, 0), ("native_abort", 16, 0), ("exec_failure", 16, 0), ("unknown", 16, 0),
    ("success", 12, 28),
]


# ---------------------------------------------------------------- round two (issue 11)
# Appended after the original plan with a random generator of its own, so the first 666
# logs are unchanged. Captured: real torch (CPU build, gloo) and Python programs run here:
# torchrun with a failing rank, DataLoader worker exceptions and deaths, stop-signal handlers
# that exit 0, NaN runs that finish, timeout(1). Composed: exact wording from the cited
# sources for what needs a GPU, a scheduler or a cloud.
P2 = {
    "torchrun": "captured: torchrun --nproc-per-node 2 --master-port P, gloo backend (torch 2.13.0 CPU build); one rank raises",
    "dl": "captured: torch.utils.data.DataLoader(num_workers=2); the exception/death happens in a worker",
    "sigterm": "captured: a training loop whose SIGTERM/SIGINT handler saves a checkpoint and exits 0",
    "nan": "captured: torch SGD with a learning rate that diverges; the run finishes (exit 0)",
    "timeout": "captured: coreutils `timeout -v` around the training loop (exit 124)",
    "lightning": "Lightning pytorch/trainer/connectors/signal_connector.py _slurm_sigusr_handler_fn: 'Handling auto-requeue signal: {signum}', 'requeing job {job_id}...', 'Requeued SLURM job: {job_id}' (printed by a real SIGUSR1 handler here)",
    "submitit": "facebookincubator/submitit submitit/core/job_environment.py SignalHandler: 'Job has timed out. Ran N minutes out of requested M minutes.', 'Caught signal SIGUSR1 on HOST: this job is preempted.'/'timed-out.', 'Exiting gracefully after preemption/timeout.'",
    "spot": "AWS EC2 docs spot-instance-termination-notices ('Spot Instance interruption notice', instance-action); Kubernetes kubelet graceful node shutdown 'Pod was terminated in response to imminent node shutdown.'; GCE 'Instance was preempted' (ray-project/ray#63968 on reclaim notices)",
    "mpirun": "open-mpi mpirun help text 'Primary job  terminated normally, but 1 process returned a non-zero exit code...' and 'The first process to do so was: Process name: [[J,1],R] Exit code: C' (E3SM-Project/scream#2188, SPECFEM/specfem2d#1210)",
    "deepspeed": "deepspeedai/DeepSpeed deepspeed/launcher/launch.py sigkill_handler '[launch.py:N:sigkill_handler] Killing subprocess PID' / \"['python', '-u', 'train.py', '--local_rank=R', ...] exits with return code = C\" (DeepSpeed#5302, #3232)",
    "cudnn": "pytorch c10 CUDA/cuDNN/cuBLAS errors re-raised in RuntimeError: 'cuDNN error: CUDNN_STATUS_EXECUTION_FAILED', 'cublas runtime error : the GPU program failed to execute at .../THCBlas.cu:450' (SYSU-SAIL/DASR#89), 'CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm(...)`' (jadore801120/attention-is-all-you-need-pytorch#193), 'GET was unable to find an engine to execute this computation', 'Unable to find a valid cuDNN algorithm to run convolution'",
    "meta": "pytorch torch/_prims_common check_same_device 'Tensor on device meta is not on the expected device cpu!' (rupeshs/fastsdcpu#209, lm-sys/FastChat#580); MPS 'Placeholder storage has not been allocated on MPS device!'",
    "xid": "NVIDIA NVRM Xid kernel-log format (Xid 79 'GPU has fallen off the bus', NVIDIA/open-gpu-kernel-modules#507) with pytorch ProcessGroupNCCL watchdog timeouts on the other ranks (pytorch/pytorch#118369)",
    "hf_nan": "huggingface/transformers Trainer log dicts {'loss': ..., 'grad_norm': ..., 'learning_rate': ..., 'epoch': ...}; fp16 divergence shows loss 0.0 with grad_norm nan",
    "k8s_oom": "kubectl describe pod: Last State Terminated, Reason: OOMKilled, Exit Code: 137 (Kubernetes container status)",
}

TORCHRUN_SCRIPT = r'''
import os, sys, time
import torch, torch.distributed as dist
{record_import}
def emit_noise():
    path = os.environ.get("NOISE_FILE")
    if path and os.environ.get("RANK") == "0":
        with open(path) as f:
            for line in f:
                sys.stdout.write(line)
        sys.stdout.flush()
{record_deco}
def main():
    dist.init_process_group("gloo")
    rank = dist.get_rank()
    emit_noise()
    model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(8, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    for step in range({steps}):
        loss = model(torch.randn(16, 8)).pow(2).mean()
        opt.zero_grad(); loss.backward(); opt.step()
        print("rank %d step %d loss=%.4f" % (rank, step, loss.item()), flush=True)
    if rank == {bad_rank}:
        {failure}
    dist.barrier()
main()
'''

TORCHRUN_FAILURES = [
    ("file_not_found", "open('/data/shards/train-%05d.tar' % (17 + rank), 'rb')"),
    ("traceback", "cfg = {'lr': 0.1}; cfg['optimizer']"),
    ("div_zero", "tokens_per_step = 4096 // int(os.environ.get('GRAD_ACCUM', '0'))"),
    ("assertion", "assert torch.randn(3).shape[0] == 4, 'shard shape mismatch'"),
    ("missing_module", "import flash_attn_cuda_kernels"),
    ("traceback", "raise ValueError('shard %d has 0 samples' % (rank + 16))"),
]

DL_SCRIPT = r'''
import os, sys, signal
import torch
from torch.utils.data import Dataset, DataLoader
class Shards(Dataset):
    def __init__(self):
        self.index = dict((i, i * 2) for i in range(256) if i != {bad})
    def __len__(self):
        return 256
    def __getitem__(self, i):
        if i == {bad}:
            {failure}
        return torch.tensor([float(self.index[i])])
with open(os.environ["NOISE_FILE"]) as f:
    sys.stdout.write(f.read()); sys.stdout.flush()
dl = DataLoader(Shards(), batch_size=4, num_workers=2)
for epoch in range(2):
    for step, b in enumerate(dl):
        print("epoch %d step %d loss=%.4f" % (epoch, step, 1.0 / (1 + step)), flush=True)
'''

DL_FAILURES = [
    ("traceback", "return torch.tensor([float(self.index[i])])"),
    ("file_not_found", "open('/data/images/%08d.jpg' % i, 'rb')"),
    ("div_zero", "return torch.tensor([1.0 / (i - i)])"),
    ("assertion", "assert i != {bad}, 'corrupt sample %d' % i"),
    ("oom_killer", "os.kill(os.getpid(), signal.SIGKILL)"),
    ("segfault", "os.kill(os.getpid(), signal.SIGSEGV)"),
]

HANDLER_SCRIPT = r'''
import os, sys, signal, time
stop = []
signal.signal(signal.{sig}, lambda s, f: stop.append(s))
signal.signal(signal.SIGINT, lambda s, f: stop.append(s))
with open(os.environ["NOISE_FILE"]) as f:
    sys.stdout.write(f.read()); sys.stdout.flush()
step = int(os.environ.get("START_STEP", "100"))
print("Registered {sig} handler for checkpointing", flush=True)
while not stop:
    step += 1
    print("step %d loss=%.4f" % (step, 0.2 + 30.0 / step), flush=True)
    time.sleep(0.02)
{after}
print("checkpoint saved to ckpt/step_%d.pt; exiting" % step, flush=True)
'''

HANDLER_AFTER = {
    "sigterm": "print('Received %s at step %d: saving checkpoint' % (signal.Signals(stop[0]).name, step), flush=True)",
    "lightning": "print('Handling auto-requeue signal: %d' % stop[0], flush=True)\n"
                 "print('requeing job %s...' % os.environ['JOBID'], flush=True)\n"
                 "print('Requeued SLURM job: %s' % os.environ['JOBID'], flush=True)",
    "submitit_pre": "import socket\nprint('submitit WARNING (%s) - Caught signal SIGUSR1 on %s: this job is preempted.' % (time.strftime('%Y-%m-%d %H:%M:%S,000'), os.environ['HOST_NAME']), flush=True)\n"
                    "print('submitit INFO (%s) - Calling checkpoint method.' % time.strftime('%Y-%m-%d %H:%M:%S,000'), flush=True)",
    "submitit_out": "print('submitit INFO (%s) - Job has timed out. Ran %d minutes out of requested %d minutes.' % (time.strftime('%Y-%m-%d %H:%M:%S,000'), 1437, 1440), flush=True)\n"
                    "print('submitit WARNING (%s) - Caught signal SIGUSR1 on %s: this job is timed-out.' % (time.strftime('%Y-%m-%d %H:%M:%S,000'), os.environ['HOST_NAME']), flush=True)",
}

NAN_SCRIPT = r'''
import os, sys
import torch
with open(os.environ["NOISE_FILE"]) as f:
    sys.stdout.write(f.read()); sys.stdout.flush()
torch.manual_seed({seed})
model = torch.nn.Sequential(torch.nn.Linear(16, 64), torch.nn.ReLU(), torch.nn.Linear(64, 1))
opt = torch.optim.SGD(model.parameters(), lr={lr})
for step in range(1, {steps} + 1):
    x = torch.randn(32, 16) * 10
    loss = (model(x) - x.sum(1, keepdim=True)).pow(2).mean()
    opt.zero_grad(); loss.backward()
    gn = torch.nn.utils.clip_grad_norm_(model.parameters(), float('inf'))
    opt.step()
    if step % 10 == 0:
        print({fmt}, flush=True)
print({final}, flush=True)
'''

NAN_FORMATS = [
    ("'step %d loss=%.4f grad_norm=%.3f' % (step, loss.item(), gn.item())", "'done: final loss=%s' % loss.item()"),
    ("\"{'loss': %.4f, 'grad_norm': %s, 'learning_rate': 0.5, 'epoch': %.2f}\" % (loss.item(), gn.item(), step / 100)",
     "\"{'train_runtime': 81.2, 'train_loss': %s, 'epoch': 2.0}\" % loss.item()"),
    ("'it %d | loss %s | gnorm %s' % (step, loss.item(), gn.item())", "'***** train metrics *****\\n  train_loss = %s' % loss.item()"),
]


def torch_available():
    try:
        return subprocess.call([PY, "-c", "import torch"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0
    except OSError:
        return False


def _write(path, text):
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)


def _noise_file(c, tmp, n):
    path = os.path.join(tmp, "noise.txt")
    _write(path, "\n".join(noise_body(c, n, nan_blip=False)) + "\n")
    return path


def _run(argv, env, cwd, timeout=180, stop=None):
    p = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, cwd=cwd,
                         start_new_session=True)
    if stop is not None:
        time.sleep(stop[1])
        os.kill(p.pid, stop[0])
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
    return out.decode("utf-8", "replace"), p.returncode


def _env(noise, **extra):
    env = dict(os.environ)
    env.pop("PYTHONSTARTUP", None)
    env.update({"NOISE_FILE": noise, "PYTHONIOENCODING": "utf-8", "PYTHONUNBUFFERED": "1"})
    env.update(extra)
    return env


def r2_torchrun(rng, c, tmp, k):
    label, failure = TORCHRUN_FAILURES[k % len(TORCHRUN_FAILURES)]
    record = k % 2 == 1
    tee = k % 3 == 2
    script = os.path.join(tmp, os.path.basename(c.script))
    _write(script, TORCHRUN_SCRIPT.format(record_import="from torch.distributed.elastic.multiprocessing.errors import record" if record else "",
                                          record_deco="@record" if record else "", steps=rng.randint(2, 6),
                                          bad_rank=rng.choice([0, 1]), failure=failure))
    noise = _noise_file(c, tmp, pick_len(rng) // 2)
    argv = [os.path.join(os.path.dirname(PY), "torchrun"), "--nproc-per-node", "2", "--master-port",
            str(29500 + rng.randint(1, 2000))] + (["--tee", "3"] if tee else []) + [script]
    text, code = _run(argv, _env(noise, OMP_NUM_THREADS="1"), tmp)
    return text, code, label, "%s; %s%s" % (P2["torchrun"], "@record; " if record else "", "--tee 3" if tee else "plain")


def r2_dataloader(rng, c, tmp, k):
    label, failure = DL_FAILURES[k % len(DL_FAILURES)]
    bad = rng.randint(40, 200)
    script = os.path.join(tmp, os.path.basename(c.script))
    _write(script, DL_SCRIPT.format(bad=bad, failure=failure.replace("{bad}", str(bad))))
    text, code = _run([PY, script], _env(_noise_file(c, tmp, pick_len(rng) // 2)), tmp)
    return text, code, label, P2["dl"] + "; " + failure


def r2_handler(rng, c, tmp, k):
    kind = ["sigterm", "sigterm", "lightning", "submitit_pre", "submitit_out", "sigint"][k % 6]
    sig = {"lightning": "SIGUSR1", "submitit_pre": "SIGUSR1", "submitit_out": "SIGUSR1"}.get(kind, "SIGTERM")
    after = HANDLER_AFTER["sigterm" if kind == "sigint" else kind]
    script = os.path.join(tmp, os.path.basename(c.script))
    _write(script, HANDLER_SCRIPT.format(sig=sig, after=after))
    send = {"SIGUSR1": signal.SIGUSR1, "SIGTERM": signal.SIGTERM}[sig] if kind != "sigint" else signal.SIGINT
    text, code = _run([PY, script], _env(_noise_file(c, tmp, pick_len(rng) // 2), START_STEP=str(rng.randint(100, 9000)),
                                         JOBID=c.jobid, HOST_NAME=c.host), tmp, stop=(send, 1.0 + rng.random()))
    tail, label, prov = [], "interrupted", P2["sigterm"]
    if kind == "sigterm" and k % 12 == 1:
        tail, label, prov = [slurm_line(c, "preempt")], "preempted", prov + "; " + P["slurm_pre"]
    elif kind == "sigterm" and k % 12 == 7:
        tail, label, prov = [slurm_line(c, "time")], "walltime", prov + "; " + P["slurm_tl"]
    elif kind == "lightning":
        label, prov = "preempted", prov + "; " + P2["lightning"]
    elif kind == "submitit_pre":
        label, prov = "preempted", prov + "; " + P2["submitit"]
    elif kind == "submitit_out":
        label, prov = "walltime", prov + "; " + P2["submitit"]
    text = (text + "\n".join(tail) + "\n") if tail else text
    return text, code, label, prov


def r2_nan(rng, c, tmp, k):
    fmt, final = NAN_FORMATS[k % len(NAN_FORMATS)]
    script = os.path.join(tmp, os.path.basename(c.script))
    _write(script, NAN_SCRIPT.format(seed=rng.randint(0, 999), lr=rng.choice([0.5, 1.0, 2.0]), steps=rng.choice([60, 120, 200]),
                                     fmt=fmt, final=final))
    text, code = _run([PY, script], _env(_noise_file(c, tmp, pick_len(rng) // 2)), tmp)
    return text, code, "nan_loss", P2["nan"]


def r2_timeout(rng, c, tmp, k):
    script = os.path.join(tmp, os.path.basename(c.script))
    _write(script, CHILD_TEMPLATE.format(helpers=HELPERS, noise=_noise_file(c, tmp, pick_len(rng) // 2),
                                         body="run_training()", site_marker="/").replace("{site_marker}", "/"))
    text, code = _run(["timeout", "-v", "%.1f" % (1.0 + rng.random()), PY, script], _env("/dev/null", START_STEP="500"), tmp)
    return text, code, "walltime", P2["timeout"]


def r2_composed(rng, c, k):
    """(lines, exit code, label, provenance) of a composed round-two failure or success."""
    kind = R2_COMPOSED[k % len(R2_COMPOSED)]
    body = noise_body(c, pick_len(rng))
    t = c.ts(200000, "%Y-%m-%dT%H:%M:%SZ")
    if kind == "spot":
        line = rng.choice(["Received EC2 Spot Instance interruption notice: instance-action terminate at %s" % t,
                           "Pod was terminated in response to imminent node shutdown.",
                           "GCE instance was preempted; saving checkpoint"])
        return body + [line, "saving checkpoint to %s/ckpt/last.pt" % c.proot, "checkpoint saved"], 0, "preempted", P2["spot"]
    if kind == "mpirun":
        r = rng.randrange(1, 8)
        exc = rng.choice([("ZeroDivisionError: division by zero", "div_zero"),
                          ("FileNotFoundError: [Errno 2] No such file or directory: '/data/part-%03d.parquet'" % r, "file_not_found")])
        lines = ["[1,%d]<stderr>:%s" % (r, l) for l in tb(user_frames(c)) + [exc[0]]]
        lines += ["-" * 55, "Primary job  terminated normally, but 1 process returned",
                  "a non-zero exit code. Per user-direction, the job has been aborted.", "-" * 55, "-" * 74,
                  "mpirun detected that one or more processes exited with non-zero status, thus causing",
                  "the job to be terminated. The first process to do so was:", "",
                  "  Process name: [[%d,1],%d]" % (rng.randint(1000, 60000), r), "  Exit code:    1", "-" * 74]
        return ["[1,0]<stdout>:" + l for l in body] + lines, 1, exc[1], P2["mpirun"]
    if kind == "deepspeed":
        r = rng.randrange(0, 4)
        lines = tb(user_frames(c)) + ["KeyError: 'attention_mask'"]
        lines += ["[%s,%03d] [INFO] [launch.py:315:sigkill_handler] Killing subprocess %d" % (c.ts(0), rng.randint(0, 999), c.pid + i) for i in range(2)]
        lines += ["[%s,%03d] [ERROR] [launch.py:321:sigkill_handler] ['%s', '-u', '%s', '--local_rank=%d', '--deepspeed', 'ds.json'] exits with return code = 1"
                  % (c.ts(0), rng.randint(0, 999), c.pybin, os.path.basename(c.script), r)]
        return body + lines, 1, "traceback", P2["deepspeed"]
    if kind == "xid":
        xid = "[%s] NVRM: Xid (PCI:0000:%02x:00): 79, pid=%d, name=python, GPU has fallen off the bus." % (c.ts(0, "%a %b %d %H:%M:%S %Y"), rng.randint(0x10, 0xff), c.pid)
        wd = ["[rank%d]:[E ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600%03d milliseconds before timing out." % (r, r, 812, rng.randint(0, 999)) for r in range(3)]
        chatter = ["[rank%d]: step %d waiting for collective" % (r % 3, 900 + r) for r in range(rng.randint(5, 40))]
        return body + [xid] + chatter + wd + ["[rank0]:" + l for l in tb(user_frames(c)) + ["torch.distributed.DistBackendError: NCCL communicator was aborted on rank 0."]], 1, "gpu_hardware", P2["xid"]
    if kind == "cudnn":
        exc = rng.choice(["RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED",
                          "RuntimeError: cublas runtime error : the GPU program failed to execute at /pytorch/aten/src/THC/THCBlas.cu:450",
                          "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm( handle, opa, opb, m, n, k, &alpha, a, lda, b, ldb, &beta, c, ldc)`",
                          "RuntimeError: GET was unable to find an engine to execute this computation",
                          "RuntimeError: Unable to find a valid cuDNN algorithm to run convolution"])
        return body + tb(forward_frames(c)) + [exc], 1, "cuda_runtime", P2["cudnn"]
    if kind == "meta":
        exc = rng.choice(["RuntimeError: Tensor on device meta is not on the expected device cpu!",
                          "RuntimeError: Tensor on device cpu is not on the expected device meta!",
                          "RuntimeError: Placeholder storage has not been allocated on MPS device!"])
        return body + tb(forward_frames(c)) + [exc], 1, "device_mismatch", P2["meta"]
    if kind == "hf_nan":
        ok = ["{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.2e, 'epoch': %.2f}" % (rng.uniform(0.8, 2), rng.uniform(0.5, 3), 2e-5, i / 50.) for i in range(rng.randint(3, 20))]
        bad = ["{'loss': 0.0, 'grad_norm': nan, 'learning_rate': %.2e, 'epoch': %.2f}" % (2e-5, 0.5 + i / 50.) for i in range(rng.randint(4, 30))]
        end = ["{'train_runtime': %.4f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %.3f, 'train_loss': %.6f, 'epoch': 1.0}" % (rng.uniform(100, 9000), rng.uniform(5, 50), rng.uniform(0.1, 5), rng.uniform(0.2, 0.9))]
        return body + ok + bad + end, 0, "nan_loss", P2["hf_nan"]
    if kind == "k8s_oom":
        return body + ["+ kubectl describe pod trainer-0 | grep -A3 'Last State'", "    Last State:     Terminated",
                       "      Reason:       OOMKilled", "      Exit Code:    137"], 137, "oom_killer", P2["k8s_oom"]
    # noisy successes: harmless words after a run that ended well
    extra = rng.choice([
        ["[deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, reducing to 32768", "step 9000 loss=0.4121", "training done"],
        ["final: val_loss nan (no val set)", "training done in %.1f h" % rng.uniform(1, 40)],
        ["dedup: killed %d duplicates, kept %d samples" % (rng.randint(2, 90), rng.randint(1000, 99999)), "done"],
        ["nanoGPT checkpoint written to out/ckpt.pt; best val_error=0.%03d" % rng.randint(10, 999)],
        ["Registered SIGTERM handler for checkpointing", "step 9000 loss=0.4121", "training finished"],
    ])
    return body + extra, 0, "success", P["ds_overflow"] if "OVERFLOW" in extra[0] else "composed success: harmless words after a good end"


# Rules the logs above never fire: one composed log each, in the cited wording, so every rule
# of the table is backed by a corpus sample (tests/test_diagnosis.py checks it).
R2_BACKING = [
    # (label, exit code, lines, provenance)
    ("walltime", 140, ["", "-" * 60, "TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "Exited with exit code 140."],
     "IBM Spectrum LSF job report 'TERM_RUNLIMIT: job killed after reaching LSF run time limit.' (seen in FredslundMagnus/DeepLearningProject outputs)"),
    ("preempted", -15, ["TERM_PREEMPT: job killed after preemption.", "Exited with exit code 143."],
     "IBM Spectrum LSF exit reason TERM_PREEMPT 'job killed after preemption' (LSF documentation, job exit information)"),
    ("oom_killer", -9, ["+ dmesg -T | tail -n 1", "[{day}] Memory cgroup out of memory: Killed process {pid} (python) total-vm:92114812kB, anon-rss:61233212kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:121032kB oom_score_adj:0"],
     "Linux mm/oom_kill.c 'Memory cgroup out of memory: Killed process N (comm) total-vm:...' kernel log line"),
    ("oom_killer", 137, ["srun: error: {host}: task 0: Out Of Memory", "srun: Terminating StepId={job}.0"],
     "SchedMD Slurm srun 'task N: Out Of Memory' (OSC knowledge base page on out-of-memory jobs)"),
    ("interrupted", -15, ["TERM_OWNER: job killed by owner.", "Exited with exit code 130."],
     "IBM Spectrum LSF exit reason TERM_OWNER 'job killed by owner' (LSF documentation)"),
    ("oom_killer", 1, ["torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "=" * 60, "train.py FAILED", "-" * 60,
                       "Failures:", "  <NO_OTHER_FAILURES>", "-" * 60, "Root Cause (first observed failure):", "[0]:",
                       "  time      : {day}", "  host      : {host}", "  rank      : 0 (local_rank: 0)",
                       "  exitcode  : -9 (pid: {pid})", "  error_file: <N/A>", "  traceback : Signal 9 (SIGKILL) received by PID {pid}", "=" * 60],
     P["childfailed"] + " with 'Signal 9 (SIGKILL) received by PID N' (pytorch/pytorch torch/distributed/elastic/multiprocessing/api.py)"),
    ("gpu_hardware", 255, ["+ nvidia-smi", "Unable to determine the device handle for GPU 0000:3B:00.0: GPU is lost.  Reboot the system to recover this GPU"],
     "NVIDIA nvidia-smi 'Unable to determine the device handle for GPU ...: GPU is lost. Reboot the system to recover this GPU' (NVIDIA/nvidia-docker and open-gpu-kernel-modules issue threads)"),
    ("interrupted", 1, ["torch.distributed.elastic.multiprocessing.api.SignalException: Process {pid} got signal: 15"],
     "pytorch/pytorch torch/distributed/elastic/multiprocessing/api.py SignalException 'Process N got signal: S'"),
    ("cuda_oom", 1, ["RuntimeError: CUDA error: out of memory", "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect."],
     P["cudaerr"] + " with cudaErrorMemoryAllocation's text 'out of memory'"),
    ("nccl", 1, ["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:317, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3"],
     P["ncclerr"]),
    ("nccl", 1, ["RuntimeError: NCCL communicator was aborted on rank 1.  Original reason for failure was: [Rank 1] Watchdog caught collective operation timeout"],
     "pytorch/pytorch ProcessGroupNCCL.cpp 'NCCL communicator was aborted on rank N. Original reason for failure was: ...'"),
    ("nccl", 1, ["torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. 1/2 clients joined."],
     "pytorch/pytorch torch/distributed/elastic/utils/store.py DistStoreError 'Timed out after N seconds waiting for clients. K/M clients joined.'"),
    ("nccl", 1, ["RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.1.4.8]:6132"],
     "pytorch third_party gloo transport/tcp/pair.cc 'Connection closed by peer' (a peer host that went down; no other rank's error in the log)"),
    ("cuda_runtime", 1, ["RuntimeError: Found no NVIDIA driver on your system. Please check that you have an NVIDIA GPU and installed a driver from http://www.nvidia.com/Download/index.aspx"],
     "pytorch/pytorch torch/cuda/__init__.py _lazy_init 'Found no NVIDIA driver on your system.'"),
    ("native_abort", 1, ["ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).",
                         "RuntimeError: DataLoader worker (pid {pid}) is killed by signal: Bus error. It is possible that dataloader's workers are out of shared memory. Please try to raise your shared memory limit."],
     "pytorch/pytorch torch/utils/data/_utils/signal_handling.py / csrc/DataLoader.cpp 'insufficient shared memory (shm)' and 'is killed by signal: Bus error'"),
    ("file_not_found", 1, ["OSError: Can't load tokenizer for 'meta-llama/Llama-2-7b-hf'. If you were trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory with the same name. Otherwise, make sure 'meta-llama/Llama-2-7b-hf' is the correct path to a directory containing all relevant files for a LlamaTokenizerFast tokenizer."],
     "huggingface/transformers tokenization_utils_base.py \"Can't load tokenizer for '...'\""),
    ("nan_loss", 1, ["FloatingPointError: Loss became infinite or NaN at iteration=12345!", "loss_dict = {'loss_cls': nan, 'loss_box_reg': nan}"],
     "facebookresearch/detectron2 detectron2/engine/train_loop.py 'Loss became infinite or NaN at iteration={iter}!'"),
    ("nan_loss", 0, ["Monitored metric val_loss = nan is not finite. Previous best value was 0.412. Signaling Trainer to stop.", "`Trainer.fit` stopped: early stopping."],
     "Lightning pytorch/callbacks/early_stopping.py 'Monitored metric {monitor} = {current} is not finite. Previous best value was ... Signaling Trainer to stop.'"),
    ("disk_full", 1, ["OSError: Not enough disk space. Needed: 212.40 GiB (download: 80.10 GiB, generated: 132.30 GiB, post-processed: Unknown size)"],
     "huggingface/datasets src/datasets/builder.py download_and_prepare 'Not enough disk space. Needed: ... (download: ..., generated: ..., post-processed: ...)'"),
    ("walltime", -9, ["job {job} exceeded hard wallclock time - initiate terminate method"],
     "Grid Engine sge_execd job message on h_rt enforcement 'job N exceeded hard wallclock time - initiate terminate method'"),
    ("traceback", 1, ["Traceback (most recent call last):", '  File "{script}", line 212, in <module>', "    main(cfg)",
                      '  File "{script}", line 188, in main', "    batch = next(it)"],
     "a Python traceback whose exception line never reached the log (the process was torn down mid-write)"),
]


def r2_backing(rng, c, k):
    label, code, lines, prov = R2_BACKING[k]
    fill = {"day": c.ts(0, "%a %b %d %H:%M:%S %Y"), "pid": c.pid, "host": c.host, "job": c.jobid, "script": c.script}
    for key, value in fill.items():
        lines = [l.replace("{%s}" % key, str(value)) for l in lines]
    if lines[0].startswith(("RuntimeError", "torch.", "OSError", "FloatingPointError")):
        lines = tb(user_frames(c)) + lines
    return noise_body(c, pick_len(rng), nan_blip=False) + lines, code, label, prov


R2_COMPOSED = ["spot", "mpirun", "deepspeed", "xid", "cudnn", "meta", "hf_nan", "k8s_oom", "success"]
R2_CAPTURED = [(r2_torchrun, 6), (r2_dataloader, 6), (r2_handler, 12), (r2_nan, 6), (r2_timeout, 3)]
R2_COMPOSED_N = 27


def round_two(tmp_root, counts, labels):
    """Append the round-two logs (see the section comment)."""
    rng = random.Random(SEED + 2)
    have_torch = torch_available()
    if not have_torch:
        print("round two: torch is not importable (pip install torch==2.13.0): captured torch runs skipped")
    jobs = [(fn, k) for fn, n in R2_CAPTURED for k in range(n)] + [(None, k) for k in range(R2_COMPOSED_N)]
    jobs += [(r2_backing, k) for k in range(len(R2_BACKING))]
    for n, (fn, k) in enumerate(jobs):
        sub = random.Random(rng.getrandbits(64))
        c = Ctx(sub, fw=sub.choice(["pt2", "pt1", "lightning", "hf", "plain"]), composed=fn in (None, r2_backing))
        if fn is r2_backing:
            c.nranks, c.launcher = 1, "python"  # one rank: the rule's line is the whole story
        if fn is None or fn is r2_backing:
            lines, code, label, prov = (fn or r2_composed)(sub, c, k)
            text, src, gpu, drv = "\n".join(lines) + "\n", "composed", c.gpu, c.driver
        else:
            if fn in (r2_torchrun, r2_dataloader, r2_nan) and not have_torch:
                continue
            tmp = os.path.join(tmp_root, "r2_%04d" % n)
            os.makedirs(tmp)
            text, code, label, prov = fn(sub, c, tmp, k)
            text = scrub(text.replace(tmp, os.path.dirname(c.script)), c)
            src, gpu, drv = "captured", "none", "none"
        text += "\n".join(epilogue(c, "FAILED" if code else "COMPLETED", code))
        counts[label] = counts.get(label, 0) + 1
        name = "logs/%s-%04d.log" % (label, counts[label])
        with open(os.path.join(HERE, name), "wb") as f:
            f.write(text.encode("utf-8"))
        labels.append({"id": "%s-%04d" % (label, counts[label]), "mode": label, "source": src, "log_path": name,
                       "gpu": gpu, "driver": drv, "true_exit_code": code, "provenance": "round two: " + prov})


# ---------------------------------------------------------------- round three (issue 11, targets)
# Wording the rules learned in round three, each from the cited public source: older PyTorch
# (THC) and TensorFlow CUDA errors, CUDA set-up failures, device checks outside the main
# "same device" message, full disks as Go programs and SQLite say it, scheduler limits of PBS,
# Torque/Moab, LSF and Kubernetes, and shells and launchers that could not start the command.
# Appended after round two with a generator of its own: earlier logs are unchanged.
R3_BACKING = [
    # (label, exit code, lines, provenance)
    ("cuda_runtime", 1, ["THCudaCheck FAIL file=/pytorch/aten/src/THC/THCTensorCopy.cu line=102 error=59 : device-side assert triggered",
                         "RuntimeError: cuda runtime error (59) : device-side assert triggered at /pytorch/aten/src/THC/THCTensorCopy.cu:102"],
     "PyTorch < 1.0 THC 'THCudaCheck FAIL file=... line=... error=59 : device-side assert triggered' and 'cuda runtime error (59) : ... at ...cu:N' (pytorch/pytorch#44867, zhanghang1989/PyTorch-Encoding#23)"),
    ("cuda_oom", 1, ["THCudaCheck FAIL file=/pytorch/aten/src/THC/generic/THCStorage.cu line=58 error=2 : out of memory",
                     "RuntimeError: cuda runtime error (2) : out of memory at /pytorch/aten/src/THC/generic/THCStorage.cu:58"],
     "PyTorch < 1.0 THC allocator 'cuda runtime error (2) : out of memory at ...THCStorage.cu:58' (jiesutd/NCRFpp#121, levyfan/reid-mgn#9, pytorch/pytorch#465)"),
    ("cuda_runtime", 1, ["tensorflow.python.framework.errors_impl.InternalError: Blas GEMM launch failed : a.shape=(938, 256), b.shape=(256, 256), m=938, n=256, k=256",
                         "\t [[{{node lstm_1/while/MatMul_4}}]]"],
     "TensorFlow stream executor cuBLAS failure 'InternalError: Blas GEMM launch failed : a.shape=...' (tensorflow/tensorflow#34069, dabasajay/Image-Caption-Generator#20)"),
    ("cuda_runtime", 1, ["tensorflow.python.framework.errors_impl.UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed above.",
                         "\t [[{{node conv2d/Conv2D}}]]"],
     "TensorFlow conv_ops 'UnknownError: Failed to get convolution algorithm. This is probably because cuDNN failed to initialize...' (tensorflow/tensorflow#25160, mozilla/DeepSpeech#2211)"),
    ("cuda_runtime", 1, ["RuntimeError: The NVIDIA driver on your system is too old (found version 11040). Please update your GPU driver by downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx Alternatively, go to: https://pytorch.org to install a PyTorch version that has been compiled with your version of the CUDA driver."],
     "pytorch/pytorch torch/cuda/__init__.py _check_driver 'The NVIDIA driver on your system is too old (found version N)' (lllyasviel/Fooocus#1313, RangiLyu/nanodet#216)"),
    ("cuda_runtime", 1, ["RuntimeError: Unexpected error from cudaGetDeviceCount(). Did you run some cuda functions before calling NumCudaDevices() that might have already set an error? Error 804: forward compatibility was attempted on non supported HW"],
     "pytorch/pytorch c10/cuda/CUDAFunctions.cpp 'Unexpected error from cudaGetDeviceCount()...' (PKU-YuanGroup/Video-LLaVA#22, vllm-project/vllm#15335)"),
    ("cuda_runtime", 1, ["RuntimeError: CUDA unknown error - this may be due to an incorrectly set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the available devices to be zero."],
     "pytorch/pytorch c10/cuda/CUDAFunctions.cpp 'CUDA unknown error - this may be due to an incorrectly set up environment...' (pytorch/pytorch#49327, #65461)"),
    ("device_mismatch", 1, ["RuntimeError: expected device cuda:0 but got device cpu"],
     "PyTorch 1.x binary-op device check 'expected device cuda:0 but got device cpu' (alex-damian/pulse#24, sgrvinod/a-PyTorch-Tutorial-to-Object-Detection#26)"),
    ("device_mismatch", 1, ["RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but found one of them on device: cpu"],
     "pytorch/pytorch torch/nn/parallel/data_parallel.py DataParallel.forward device check (kennethwdk/MLCReID#5, JDAI-CV/FaceX-Zoo#68)"),
    ("device_mismatch", 1, ["RuntimeError: Input and parameter tensors are not at the same device, found input tensor at cpu and parameter tensor at cuda:0"],
     "pytorch/pytorch aten RNN input/parameter device check 'Input and parameter tensors are not at the same device, found input tensor at X and parameter tensor at Y' (MarWaltz/TUD_RL#21, coqui-ai/TTS#3985)"),
    ("disk_full", 1, ["sqlite3.OperationalError: database or disk is full"],
     "SQLite SQLITE_FULL text 'database or disk is full' as Python's sqlite3 raises it (optuna/optuna#5011, ArchiveTeam/wpull#238)"),
    ("disk_full", 125, ["+ docker run --gpus all --rm -v /scratch:/scratch trainer:latest python train.py",
                        "docker: write /var/lib/docker/tmp/GetImageBlob197301894: no space left on device."],
     "Docker (Go) lower-case strerror 'write /var/lib/docker/tmp/GetImageBlobN: no space left on device' (ENCODE-DCC/caper#173, docker/kitematic#2295)"),
    ("walltime", 271, ["=>> PBS: job killed: cput 36012 exceeded limit 36000"],
     "OpenPBS MOM resource-limit kill '=>> PBS: job killed: <resource> N exceeded limit M' for cput (openpbs/openpbs#390 on cput limits; walltime form in NOAA-EMC/EVS#78)"),
    ("walltime", -15, ["PBS Job Id: 3264864.mskcc-fe1.local", "Job Name:   train_gpt", "Aborted by PBS Server",
                       "Job exceeded its walltime limit. Job was aborted", "See Administrator for help", "Exit_status=-11"],
     "Torque pbs_server job mail 'Job exceeded its walltime limit. Job was aborted' (cBio/cbio-cluster#256)"),
    ("walltime", 152, ["TERM_CPULIMIT: job killed after reaching LSF CPU usage limit.", "Exited with exit code 152."],
     "IBM Spectrum LSF exit reason TERM_CPULIMIT 'job killed after reaching LSF CPU usage limit' (LSF documentation, job exit information; RUNLIMIT form in marbl/canu#444)"),
    ("interrupted", 130, ["TERM_ADMIN: job killed by root or LSF administrator.", "Exited with exit code 130."],
     "IBM Spectrum LSF exit reason TERM_ADMIN 'job killed by root or LSF administrator' (LSF documentation, job exit information)"),
    ("walltime", 1, ["+ kubectl describe job llama-sft | tail -n 3", "Events:", "  Type     Reason            Age   From            Message",
                     "  Warning  DeadlineExceeded  12s   job-controller  Job was active longer than specified deadline"],
     "kubernetes pkg/controller/job 'DeadlineExceeded: Job was active longer than specified deadline' (kubernetes/kubernetes#62134, #90551)"),
    ("exec_failure", 127, ["sh: 1: /opt/conda/envs/train/bin/torchrun: not found"],
     "dash 'sh: 1: CMD: not found' (AndyJZhao/GLEM#11, hiyouga/LlamaFactory#5217)"),
    ("exec_failure", 127, ["zsh: command not found: torchrun"],
     "zsh Src/exec.c 'command not found: %s' (the reason before the name, unlike bash)"),
    ("exec_failure", 255, ["[proxy:0:0@{host}] HYDU_create_process (utils/launch/launch.c:74): execvp error on file train.py (No such file or directory)"],
     "MPICH hydra utils/launch/launch.c HYDU_create_process 'execvp error on file %s (%s)' (older form 'execvp error (No such file or directory)' in pmodels/mpich#668)"),
    ("preempted", 0, ["[{ts}] WARNING received SIGTERM (pod termination grace period 30s)", "+ kubectl get events --field-selector involvedObject.name=trainer-0 | tail -n 1",
                      "12s   Normal   Preempted   pod/trainer-0   Preempted by pod 6b1f0c2e-3a4d-4f51-9d7e-0c2b8e4a91d3 on node {host}",
                      "[{ts}] saved checkpoint, exiting"],
     "kubernetes pkg/scheduler/framework/preemption/preemption.go Eventf(victim, ..., \"Preempted\", \"Preempting\", \"Preempted by pod %v on node %v\")"),
    ("walltime", 137, ["Killed", "+ qacct -j 201159 | egrep 'failed|exit_status|ru_wallclock'",
                       "failed       37  : qmaster enforced h_rt, h_cpu, or h_vmem limit", "exit_status  137                  (Killed)", "ru_wallclock 86402s"],
     "Grid Engine qacct failure code 37 SSTATE_QMASTER_ENFORCED_LIMIT ('qmaster enforced h_rt limit'; qacct text 'qmaster enforced h_rt, h_cpu, or h_vmem limit', as in PennLINC/babs docs)"),
    ("device_mismatch", 1, ["RuntimeError: Input tensor is not an XLA tensor: torch.FloatTensor"],
     "pytorch/xla torch_xla/csrc/aten_xla_bridge.cpp GetXlaTensor check 'Input tensor is not an XLA tensor: ...' (pytorch/xla#2960, #8532)"),
    ("nccl", 1, ["[{host}][[36432,1],3][btl_tcp_endpoint.c:803:mca_btl_tcp_endpoint_complete_connect] connect() to 10.1.3.89 failed: Connection refused (111)",
                 "-" * 74, "Primary job  terminated normally, but 1 process returned", "a non-zero exit code. Per user-direction, the job has been aborted.", "-" * 74],
     "open-mpi/ompi opal/mca/btl/tcp/btl_tcp_endpoint.c mca_btl_tcp_endpoint_complete_connect 'connect() to %s failed: %s (%d)' (open-mpi/ompi#7131; NVIDIA/nccl#241)"),
    ("nccl", -6, ["[rank0]:[E704 13:48:58.260494728 ProcessGroupNCCL.cpp:1746] [PG ID 0 PG GUID 0(default_pg) Rank 0] ProcessGroupNCCL's watchdog got stuck for 480 seconds without making progress in monitoring enqueued collectives. This typically indicates a NCCL/CUDA API (e.g., CudaEventDestroy) hang blocking the watchdog.",
                  "[rank0]:[F704 13:56:58.261311020 ProcessGroupNCCL.cpp:1554] [PG ID 0 PG GUID 0(default_pg) Rank 0] Terminating the process after attempting to dump debug info, due to ProcessGroupNCCL watchdog hang."],
     "pytorch/pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp heartbeat monitor 'ProcessGroupNCCL's watchdog got stuck for N seconds without making progress...' (hiyouga/LlamaFactory#8549, snowflakedb/ArcticTraining#219)"),
    ("nccl", 1, ["RuntimeError: NCCL Error 2: unhandled system error (run with NCCL_DEBUG=INFO for details)"],
     "pytorch/pytorch NCCL error text 'NCCL Error 2: unhandled system error' (Tencent-Hunyuan/HunyuanVideo#114, Arthur151/ROMP#80)"),
    ("nccl", 1, ["RuntimeError: Timed out initializing process group in store based barrier on rank: 7, for key: store_based_barrier_key:1 (world_size=8, worker_count=4, timeout=0:30:00)"],
     "pytorch/pytorch torch/distributed/distributed_c10d.py _store_based_barrier (NVIDIA/Megatron-LM#782, tczhangzhi/pytorch-distributed#18)"),
    ("ram_oom", 254, ["+ python preprocess.py --workers 32", "/var/spool/slurmd/job{job}/slurm_script: fork: Cannot allocate memory"],
     "bash 'fork: Cannot allocate memory' when the node's memory is exhausted (stanfordnlp/mac-network#29, mattshma/docs#14)"),
    ("cuda_oom", 1, ["RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: Attempting to reserve 10.51G at the bottom of memory. That was not possible. There are 8.97G free, 0B reserved, and 8.97G reservable."],
     "XLA TPU allocator 'RESOURCE_EXHAUSTED: Attempting to reserve N at the bottom of memory. That was not possible.' (huggingface/transformers#22328, pytorch/xla#3470)"),
    ("missing_module", 1, ["importlib.metadata.PackageNotFoundError: No package metadata was found for bitsandbytes"],
     "CPython Lib/importlib/metadata PackageNotFoundError 'No package metadata was found for X' (huggingface/diffusers#3194, Comfy-Org/ComfyUI#11766)"),
    ("nan_loss", 1, ["RuntimeError: The total norm of order 2.0 for gradients from `parameters` is non-finite, so it cannot be clipped. To disable this error and scale the gradients by the non-finite norm anyway, set `error_if_nonfinite=False`"],
     "pytorch/pytorch torch/nn/utils/clip_grad.py clip_grad_norm_(error_if_nonfinite=True) 'The total norm of order N for gradients from `parameters` is non-finite, so it cannot be clipped.'"),
    ("file_not_found", 255, ["+ singularity exec --nv /scratch/{host}/trainer.sif python train.py",
                             "FATAL:   could not open image /scratch/{host}/trainer.sif: failed to retrieve path for /scratch/{host}/trainer.sif: lstat /scratch/{host}/trainer.sif: no such file or directory"],
     "Singularity/Apptainer (Go, lower-case strerror) 'could not open image X: failed to retrieve path for X: lstat X: no such file or directory' (nipreps/fmriprep#2787, patrickbryant1/EvoBind#2)"),
    ("file_not_found", 1, ["huggingface_hub.utils._errors.EntryNotFoundError: 404 Client Error. (Request ID: Root=1-66b3c1b1-3e4783ad3150978f3308bc5c)", "",
                           "Entry Not Found for url: https://huggingface.co/lllyasviel/ControlNet/resolve/main/ControlNetHED.pth."],
     "huggingface_hub utils/_errors.py hf_raise_for_status EntryNotFoundError 'Entry Not Found for url: ...' (open-mmlab/PowerPaint#66, hmchuong/MaGGIe#5)"),
    ("preempted", 0, ['[{ts}] spot-watcher: GET /latest/meta-data/spot/instance-action -> {"action": "terminate", "time": "2026-01-02T03:06:05Z"}',
                      "[{ts}] saving checkpoint to /fsx/ckpt/last.pt", "[{ts}] checkpoint saved, exiting"],
     "AWS EC2 spot instance-action metadata JSON {\"action\": \"terminate\", \"time\": ...} (AWS docs: spot-instance-termination-notices)"),
    ("preempted", 0, ["[{ts}] preemption-watcher: metadata instance/preempted = TRUE", "[{ts}] checkpoint saved, exiting"],
     "Google Compute Engine metadata key instance/preempted turning TRUE on a Spot/preemptible VM (cloud.google.com/compute/docs/instances/spot, detecting preemption)"),
    ("preempted", 0, ['[{ts}] scheduled-events: {"DocumentIncarnation": 2, "Events": [{"EventId": "C7061BAC-AFDC-4513-B24B-AA5F13A16123", "EventStatus": "Scheduled", "EventType": "Preempt", "ResourceType": "VirtualMachine", "Resources": ["trainer_0"], "NotBefore": "Fri, 02 Jan 2026 03:06:35 GMT"}]}',
                      "[{ts}] checkpoint saved, exiting"],
     "Azure Instance Metadata Service scheduled event of EventType Preempt for a Spot VM (Azure docs: virtual-machines/linux/scheduled-events)"),
    ("preempted", 0, ["slurmstepd: error: *** JOB {job} ON {host} CANCELLED AT 2026-01-02T03:04:05 DUE TO JOB REQUEUE ***", "[{ts}] checkpoint saved, exiting"],
     "SchedMD/slurm src/slurmd/slurmstepd/req.c '*** %s ON %s CANCELLED AT %s DUE TO JOB REQUEUE ***'"),
    ("native_abort", -6, ["F0912 11:59:01.941641  741969 shape_tree.cc:54] Check failed: result->children_start_id >= 0 (-1 vs. 0)",
                          "*** Check failure stack trace: ***",
                          "    @     0x7f0e2365c1d4  absl::lts_20230802::log_internal::LogMessage::SendToLog()",
                          "    @     0x7f0e2365c579  absl::lts_20230802::log_internal::LogMessageFatal::~LogMessageFatal()",
                          "    @     0x7f0e2076c1f1  xla::internal::IndexTable::operator[]()"],
     "absl/glog fatal check 'F<date> ... file.cc:N] Check failed: ...' + '*** Check failure stack trace: ***' as XLA prints it (marin-community/marin#1921, jax-ml/jax#17730, tensorflow/tensorflow#46614)"),
]


def r3_backing(rng, c, k):
    label, code, lines, prov = R3_BACKING[k]
    lines = [l.replace("{host}", c.host).replace("{ts}", c.ts(0)).replace("{job}", str(c.jobid)) for l in lines]
    if lines[0].startswith(("RuntimeError", "tensorflow.", "sqlite3.", "THCudaCheck", "importlib.", "huggingface_hub.")):
        first = 1 if lines[0].startswith("THCudaCheck") else 0
        lines = lines[:first] + tb(user_frames(c)) + lines[first:]
    return noise_body(c, pick_len(rng), nan_blip=False) + lines, code, label, prov


# A real integer division by zero in native code: the kernel sends SIGFPE (FPE_INTDIV). Run as a
# binary from a job script (bash reports "Floating point exception") and through ctypes from
# Python (faulthandler's "Fatal Python error: Floating point exception", or no words at all).
FPE_SRC = r"""
#include <stdio.h>
#include <stdlib.h>
int per_bucket(int total, int buckets) { return total / buckets; }
int main(int argc, char **argv) {
    volatile int buckets = argc > 1 ? atoi(argv[1]) : 0;
    printf("ranking 123456 candidates into %d buckets\n", buckets);
    fflush(stdout);
    printf("%d per bucket\n", per_bucket(123456, buckets));
    return 0;
}
"""
R3_CAPTURED = [
    ("bash", "div_zero", "captured: a C program (gcc) divides an integer by zero under a bash job script: SIGFPE, bash's 'Floating point exception' line (exit 136)"),
    ("ctypes", "div_zero", "captured: Python calls a C function (ctypes) that divides an integer by zero, PYTHONFAULTHANDLER=1: SIGFPE, 'Fatal Python error: Floating point exception' (exit -8)"),
    ("ctypes_quiet", "div_zero", "captured: Python calls a C function (ctypes) that divides an integer by zero, no faulthandler: SIGFPE, no words (exit -8)"),
    ("kbd", "interrupted", "captured: a training loop whose `except KeyboardInterrupt:` saves the model and exits 0, in its own words ('Keyboard interrupt received, ...', the idiom common in public scripts); SIGINT sent as Ctrl-C would"),
]
KBD_SCRIPT = """import sys, time
sys.stdout.write(open(sys.argv[1]).read())
sys.stdout.flush()
step = 0
try:
    while True:
        step += 10
        print("step %d loss=%.4f" % (step, 2.0 / (1 + step / 1000.0)), flush=True)
        time.sleep(0.05)
except KeyboardInterrupt:
    print("Keyboard interrupt received, saving model and exiting...", flush=True)
    print("Saved checkpoint to checkpoints/interrupted-step%d.pt" % step, flush=True)
    sys.exit(0)
"""


def r3_fpe(kind, c, tmp):
    """(text, exit code) of a real SIGFPE run (see FPE_SRC), or of the Ctrl-C handler (KBD_SCRIPT)."""
    if kind == "kbd":
        script = os.path.join(tmp, "train.py")
        _write(script, KBD_SCRIPT)
        noise = _noise_file(c, tmp, pick_len(c.rng) // 2)
        return _run([PY, script, noise], _env(noise), tmp, stop=(signal.SIGINT, 1.5 + c.rng.random()))
    src, exe, so = (os.path.join(tmp, n) for n in ("ranker.c", "score_ranker", "libranker.so"))
    _write(src, FPE_SRC)
    if subprocess.call(["gcc", "-O0", "-o", exe, src]) or subprocess.call(["gcc", "-O0", "-shared", "-fPIC", "-o", so, src]):
        return None
    noise = _noise_file(c, tmp, pick_len(c.rng))
    if kind == "bash":
        job = os.path.join(tmp, "run_eval.sh")
        _write(job, "#!/bin/bash\ncat %s\necho '+ ./score_ranker --buckets 0'\n%s 0\n" % (noise, exe))
        return _run(["bash", job], _env(noise), tmp)
    script = os.path.join(tmp, "rank.py")
    _write(script, "import ctypes, sys\nsys.stdout.write(open(%r).read())\nsys.stdout.flush()\n"
                   "lib = ctypes.CDLL(%r)\nprint('bucketing candidates', flush=True)\nprint(lib.per_bucket(123456, 0))\n"
                   % (noise, so))
    extra = {"PYTHONFAULTHANDLER": "1"} if kind == "ctypes" else {}
    env = _env(noise, **extra)
    if kind != "ctypes":
        env.pop("PYTHONFAULTHANDLER", None)
    return _run([PY, script], env, tmp)


def _add_log(counts, labels, label, text, record):
    counts[label] = counts.get(label, 0) + 1
    name = "logs/%s-%04d.log" % (label, counts[label])
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(text.encode("utf-8"))
    rec = {"id": "%s-%04d" % (label, counts[label]), "mode": label, "source": record["source"], "log_path": name}
    rec.update((k, v) for k, v in record.items() if k not in rec)
    labels.append(rec)


def _add_backing_logs(rng, rows, backing, counts, labels, round_name):
    """One composed log per backing row, each from its own sub-seed of rng, appended."""
    for k in range(len(rows)):
        sub = random.Random(rng.getrandbits(64))
        c = Ctx(sub, fw=sub.choice(["pt2", "pt1", "lightning", "hf", "plain"]), composed=True)
        c.nranks, c.launcher = 1, "python"
        lines, code, label, prov = backing(sub, c, k)
        text = "\n".join(lines) + "\n" + "\n".join(epilogue(c, "FAILED" if code else "COMPLETED", code))
        _add_log(counts, labels, label, text, {"source": "composed", "gpu": c.gpu, "driver": c.driver,
                                              "true_exit_code": code, "provenance": round_name + ": " + prov})


def round_three(tmp_root, counts, labels):
    """Append the round-three logs (see the section comment)."""
    rng = random.Random(SEED + 3)
    _add_backing_logs(rng, R3_BACKING, r3_backing, counts, labels, "round three")
    for n, (kind, label, prov) in enumerate(R3_CAPTURED):
        sub = random.Random(rng.getrandbits(64))
        c = Ctx(sub, fw=sub.choice(["pt2", "pt1", "lightning", "hf", "plain"]), composed=False)
        tmp = os.path.join(tmp_root, "r3_%04d" % n)
        os.makedirs(tmp)
        got = r3_fpe(kind, c, tmp) if shutil.which("gcc") or kind == "kbd" else None
        if got is None:
            print("round three: gcc could not build the SIGFPE program: %s skipped" % kind)
            continue
        text, code = got
        text = scrub(text.replace(tmp, os.path.dirname(c.script)), c)
        text += "\n".join(epilogue(c, "FAILED", code))
        _add_log(counts, labels, label, text, {"source": "captured", "gpu": "none", "driver": "none",
                                                   "true_exit_code": code, "provenance": "round three: " + prov})


# ---------------------------------------------------------------- round four (issue 11, blind sets)
# Wording learned from the third and fourth blind sets' misses and the known gaps, each from the
# cited public source. Appended after round three with its own seed: earlier logs are unchanged,
# and new rows go at the end of R4_BACKING so that earlier round-four logs are too.
R4_BACKING = [
    # (label, exit code, lines, provenance)
    ("preempted", 137, ["slurmstepd: error: *** JOB {job} ON {host} CANCELLED AT {ts} DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
                        "srun: error: {host}: task 3: Killed"],
     "slurmstepd's format string '*** %s ON %s CANCELLED AT %s DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***' "
     "(Debian slurm-wlm 22.05 /usr/sbin/slurmstepd; the job state becomes NODE_FAIL)"),
    ("nccl", 1, ["{ts2} W tensorflow/core/framework/op_kernel.cc:1651] OP_REQUIRES failed at mpi_ops.cc:316 : Unknown: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused by an exception, you should see the exception in the log before the first shutdown message.",
                 "tensorflow.python.framework.errors_impl.UnknownError: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused by an exception, you should see the exception in the log before the first shutdown message.",
                 "\t [[{{node DistributedAdam_Allreduce/cond/HorovodAllreduce_grads_0}}]]"],
     "horovod/common/operations.cc SHUT_DOWN_ERROR through TensorFlow's op_kernel warning and UnknownError "
     "(horovod/horovod#3412, horovod/horovod#2097, NVIDIA/DeepLearningExamples#972): the other rank's exception was lost"),
    ("gpu_hardware", 1, ["[    8.600582] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x25:0x65:1468)",
                         "[    8.600674] NVRM: GPU 0000:3b:00.0: rm_init_adapter failed, device minor number 0",
                         "RuntimeError: No CUDA GPUs are available"],
     "NVIDIA kernel module 'NVRM: GPU %s: RmInitAdapter failed! (0x..:0x..:N)' and 'rm_init_adapter failed, device "
     "minor number N' as dmesg prints them in a job prologue (geerlingguy/raspberry-pi-pcie-devices#4, "
     "NVIDIA/open-gpu-kernel-modules issues); PyTorch torch/cuda/__init__.py 'No CUDA GPUs are available'"),
    ("cuda_oom", 1, ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.00 GiB. GPU 1 has a total capacity of 39.39 GiB of which 208.00 MiB is free. Including non-PyTorch memory, this process has 39.18 GiB memory in use. Of the allocated memory 36.02 GiB is allocated by PyTorch, and 2.61 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)",
                     "srun: error: {host}: task 1: Exited with exit code 1",
                     "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
                     "slurmstepd: error: *** STEP {job}.0 ON {host} CANCELLED AT {ts} ***",
                     "srun: error: {host}: tasks 0,2-3: Terminated"],
     "pytorch c10/cuda/CUDACachingAllocator.cpp OutOfMemoryError (2.x wording); srun ending the step after a task's "
     "non-zero exit, the bare STEP CANCELLED line after 'Exited with exit code' and 'Job step aborted' "
     "(aertslab/pySCENIC#456, SWIFTSIM/SWIFT#74, jiabowang/GAPIT#207)"),
    ("preempted", 143, ["$ gcloud compute operations list --filter=operationType=compute.instances.preempted",
                        "NAME                              TYPE                         TARGET                           HTTP_STATUS  STATUS  TIMESTAMP",
                        "systemevent-1712345678901-a1b2c3  compute.instances.preempted  us-central1-a/instances/{host}  200          DONE    {ts}"],
     "GCE's operation type for a reclaimed preemptible/spot VM, 'compute.instances.preempted', as `gcloud compute "
     "operations list` prints it (cloud.google.com/compute/docs/instances/preemptible#detecting_if_an_instance_was_preempted)"),
    ("assertion", 1, ["AssertionError: Torch not compiled with CUDA enabled"],
     "pytorch torch/cuda/__init__.py _lazy_init 'Torch not compiled with CUDA enabled' on a CPU-only build "
     "(pytorch/pytorch#30664, lllyasviel/Fooocus#1296)"),
    ("traceback", 2, ["usage: train.py [-h] --model MODEL [--lr LR] [--epochs EPOCHS] [--batch-size BATCH_SIZE]",
                      "train.py: error: argument --epochs: invalid int value: '10.0'"],
     "CPython Lib/argparse.py ArgumentParser.error: the usage line, then '%(prog)s: error: %(message)s' and exit 2; "
     "_get_value's 'invalid %(type)s value: %(value)r'"),
    ("file_not_found", 1, ["Primary config directory not found.",
                           "Check that the config directory '/scratch/{host}/conf' exists and readable", "",
                           "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."],
     "facebookresearch/hydra hydra/_internal/config_loader_impl.py MissingConfigException 'Primary config directory not "
     "found.\nCheck that the config directory ... exists and readable' (its test test_missing_bad_config_dir_error), "
     "printed by hydra/_internal/utils.py run_and_report with the HYDRA_FULL_ERROR line"),
    ("traceback", 1, ["Could not override 'trainer.max_ckpt_to_keep'.",
                      "To append to your config use +trainer.max_ckpt_to_keep=2",
                      "Key 'max_ckpt_to_keep' is not in struct", "    full_key: trainer.max_ckpt_to_keep",
                      "    object_type=dict", "",
                      "Set the environment variable HYDRA_FULL_ERROR=1 for a complete stack trace."],
     "facebookresearch/hydra config_loader_impl.py ConfigCompositionException 'Could not override ... To append to "
     "your config use +...' over omegaconf's 'Key ... is not in struct' (verl-project/verl#7295)"),
    ("preempted", 271, ["Terminated", "+ tracejob -n 1 {job}", "Job: {job}.pbs01", "",
                        "12/03/2026 10:41:07  S    Job preempted by requeuing"],
     "PBS Pro pbs_sched's 'Job preempted by requeuing' (PBSPro tests/functional/pbs_preemption.py schedlog_msg), as "
     "an epilogue's tracejob prints the scheduler's log line"),
    ("missing_module", 1, ["CUDA SETUP: Required library version not found: libbitsandbytes_cuda122.so. Maybe you need to compile it from source?",
                           "CUDA SETUP: Defaulting to libbitsandbytes_cpu.so...",
                           "RuntimeError: ",
                           "        CUDA Setup failed despite GPU being available. Please run the following command to get more information:",
                           "",
                           "        python -m bitsandbytes"],
     "bitsandbytes cuda_setup/main.py and cextension.py 'CUDA Setup failed despite GPU being available. Please run the "
     "following command ...' (bitsandbytes-foundation/bitsandbytes#175, OpenGVLab/InternVL Q&A)"),
    ("runtime_error", 1, ["ConnectionResetError: [Errno 104] Connection reset by peer", "",
                          "The above exception was the direct cause of the following exception:", "",
                          "RuntimeError: DataLoader worker (pid 13518) exited unexpectedly with exit code 3. Details are lost due to multiprocessing. Rerunning with num_workers=0 may give better error trace."],
     "pytorch torch/utils/data/dataloader.py _try_get_data 'DataLoader worker (pid(s) ...) exited unexpectedly' raised "
     "from the queue's ConnectionResetError, as a worker calling os._exit(3) gave it on this machine (torch 2.13 CPU)"),
    # round five (issue 22): the cause before its consequences
    ("nccl", 134, ["{host}:44110:44520 [1] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.1.4.8<43210> with status=12 opcode=0 len=0 vendor err 129 (Recv)",
                   "[rank1]:[E1016 03:33:45.319 ProcessGroupNCCL.cpp:1583] [PG 0 Rank 1] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.21.5",
                   "terminate called after throwing an instance of 'c10::DistBackendError'",
                   "srun: error: {host}: task 1: Aborted (core dumped)",
                   "slurmstepd: error: *** STEP {job}.0 ON {host} CANCELLED AT {ts} ***"],
     "issue 22: NCCL's InfiniBand plugin 'NET/IB : Got completion from peer ... with status=12 ... vendor err 129' "
     "(NVIDIA/nccl#1405, #1664), then ProcessGroupNCCL's watchdog terminate (pytorch/pytorch#118369) and srun's abort "
     "and step cancel: the transport error is the cause"),
    ("disk_full", 2, ["tar: /scratch/{host}/archive/run.tar: Wrote only 4096 of 10240 bytes",
                      "tar: Error is not recoverable: exiting now",
                      "Filesystem      Size  Used Avail Use% Mounted on",
                      "/dev/nvme0n1p1  1.8T  1.8T     0 100% /scratch"],
     "issue 22: GNU tar's short write 'Wrote only 4096 of 10240 bytes' then 'Error is not recoverable: exiting now' "
     "(engineering.adjust.com 'CephFS and max file size'), with df's row of a full file system"),
    ("permission", 1, ["/var/spool/slurmd/job{job}/slurm_script: line 21: /project/shared/runs/metrics.log: Permission denied"],
     "issue 22: bash's redirection error (redir.c: the target path, then strerror(EACCES)) for a log file in a "
     "directory the job cannot write"),
]


def r4_backing(rng, c, k):
    label, code, lines, prov = R4_BACKING[k]
    when = c.ts(200000, "%Y-%m-%dT%H:%M:%S")  # after the training lines, as Slurm writes it
    lines = [l.replace("{host}", c.host).replace("{ts}", when).replace("{job}", str(c.jobid))
             .replace("{ts2}", c.ts(200000, "%Y-%m-%d %H:%M:%S.%f")) for l in lines]
    cut = next((i for i, l in enumerate(lines) if l.startswith(("RuntimeError", "ValueError", "OSError", "tensorflow.", "torch."))), None)
    if cut is not None:
        lines = lines[:cut] + tb(user_frames(c)) + lines[cut:]
    return noise_body(c, pick_len(rng), nan_blip=False) + lines, code, label, prov


def round_four(counts, labels):
    """Append the round-four logs (see the section comment)."""
    _add_backing_logs(random.Random(SEED + 4), R4_BACKING, r4_backing, counts, labels, "round four")


def redo_round_four():
    """Rewrite only the round-four logs: the same bytes a full run writes for them (their own
    seed, ids numbered after the earlier logs), without re-running the captured programs."""
    with open(os.path.join(HERE, "labels.jsonl")) as f:
        labels = [json.loads(line) for line in f]
    for rec in labels:
        if rec["provenance"].startswith("round four: "):
            os.remove(os.path.join(HERE, rec["log_path"]))
    labels = [rec for rec in labels if not rec["provenance"].startswith("round four: ")]
    counts = {}  # the last number of each id prefix (relabelled logs keep their old prefix)
    for rec in labels:
        prefix, number = rec["id"].rsplit("-", 1)
        counts[prefix] = max(counts.get(prefix, 0), int(number))
    round_four(counts, labels)
    return labels


def exec_failure(rng, tmp_root, idx):
    tmp = os.path.join(tmp_root, "exec%04d" % idx)
    os.makedirs(tmp)
    c = Ctx(rng, composed=False)
    pre = []
    if True:
        pre = ["Job %s running on %s" % (c.jobid, c.host), "+ module load cuda/12.1", "+ nvidia-smi -L"] + [
            "GPU %d: %s (UUID: GPU-%08x-%04x-%04x-%04x-%012x)" % (i, c.gpu, rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(48)) for i in range(rng.choice([1, 2, 4, 8]))]
        pre += ["+ export %s=%s" % kv for kv in rng.sample([("NCCL_DEBUG", "INFO"), ("OMP_NUM_THREADS", "8"), ("HF_HOME", "/scratch/%s/hf" % c.user),
                                                           ("WANDB_MODE", "offline"), ("PYTHONUNBUFFERED", "1"), ("TORCH_DISTRIBUTED_DEBUG", "DETAIL"),
                                                           ("MASTER_PORT", "29500"), ("MASTER_ADDR", c.host), ("CUDA_DEVICE_MAX_CONNECTIONS", "1")], rng.randint(2, 9))]
        pre += ["+ cd %s" % c.proot, "+ git rev-parse --short HEAD", "%07x" % rng.getrandbits(28), "+ python3 -c 'import torch; print(torch.__version__, torch.cuda.is_available())'",
                "%s True" % rng.choice(["2.1.2+cu121", "2.3.1+cu121", "1.13.1+cu117", "2.4.0+cu124"])]
    kind = rng.choice(["notfound", "notfound", "noscript", "noexec", "badinterp"])
    job = os.path.join(tmp, "job.sh")
    script = os.path.join(tmp, "train.py")
    if kind == "notfound":
        cmd = rng.choice(["torchrun --nproc_per_node=4 train.py", "deepspeed train.py --deepspeed ds.json", "accelerate launch train.py", "pyhton train.py", "trian.sh"])
        body = cmd
        prov = "captured: bash 'command not found' (exit 127)"
    elif kind == "noscript":
        body = "python3 %s --config cfg.yaml" % os.path.join(tmp, rng.choice(["trian.py", "scripts/train.py", "src/main.py"]))
        prov = "captured: python can't open file (exit 2)"
    elif kind == "noexec":
        with open(script, "w") as f:
            f.write("#!/usr/bin/env python3\nprint('hi')\n")
        os.chmod(script, 0o644)
        body = "./train.py --epochs 10"
        prov = "captured: bash Permission denied on non-executable script (exit 126)"
    else:
        with open(script, "w") as f:
            f.write("#!/opt/conda/envs/missing/bin/python\nprint('hi')\n")
        os.chmod(script, 0o755)
        body = "./train.py --epochs 10"
        prov = "captured: shebang interpreter missing (bash 'cannot execute: required file not found' / 'bad interpreter')"
    with open(job, "w") as f:
        f.write("#!/bin/bash\ncd %s\n%s\n" % (tmp, body))
    # only the interpreter on PATH: launchers installed next to it (torchrun...) must stay "not found"
    bindir = os.path.join(tmp, "bin")
    os.makedirs(bindir)
    for name in ("python", "python3"):
        os.symlink(PY, os.path.join(bindir, name))
    p = subprocess.Popen(["bash", job], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=tmp, env={"PATH": bindir + ":/usr/bin:/bin", "HOME": "/tmp"})
    out, _ = p.communicate()
    text = out.decode("utf-8", "replace").replace(tmp, c.proot)
    lines = pre + ["+ " + body.replace(tmp, c.proot)]
    return "\n".join(lines) + "\n" + text + "\n".join(epilogue(c, "FAILED", p.returncode)), p.returncode, prov


def main():
    if sys.argv[1:] == ["--round-four"]:
        write_labels(redo_round_four())
        return
    rng = random.Random(SEED)
    if os.path.isdir(LOG_DIR):
        shutil.rmtree(LOG_DIR)
    os.makedirs(LOG_DIR)
    tmp_root = tempfile.mkdtemp(prefix="gpualert-corpus-")
    os.chmod(tmp_root, 0o755)
    build_native(tmp_root)
    labels = []
    counts = {}
    idx = 0
    t0 = time.time()
    try:
        for mode, ncap, ncomp in PLAN:
            kinds = ["captured"] * ncap + ["composed"] * ncomp
            for k, kind in enumerate(kinds):
                idx += 1
                sub = random.Random(rng.getrandbits(64))
                if mode == "exec_failure":
                    text, code, prov = exec_failure(sub, tmp_root, idx)
                    src, gpu, drv = "captured", "none", "none"
                else:
                    text, code, src, prov, gpu, drv = build(mode, idx, sub, tmp_root, kind)
                name = "logs/%s-%04d.log" % (mode, k + 1)
                counts[mode] = k + 1
                with open(os.path.join(HERE, name), "wb") as f:
                    f.write(text.encode("utf-8"))
                # python started and could not open the script: a missing file, whatever the
                # job script meant (labelled exec_failure before round three; id and name kept)
                label = "file_not_found" if "can't open file" in prov else mode
                labels.append({"id": "%s-%04d" % (mode, k + 1), "mode": label, "source": src, "log_path": name,
                               "gpu": gpu, "driver": drv, "true_exit_code": code, "provenance": prov})
        round_two(tmp_root, counts, labels)
        round_three(tmp_root, counts, labels)
        round_four(counts, labels)
    finally:
        subprocess.call("grep -q %s /proc/mounts && umount $(grep %s /proc/mounts | cut -d' ' -f2)" % (tmp_root, tmp_root), shell=True)
        shutil.rmtree(tmp_root, ignore_errors=True)
    write_labels(labels)
    print("wrote %d logs in %.1fs" % (len(labels), time.time() - t0))


def write_labels(labels):
    with open(os.path.join(HERE, "labels.jsonl"), "w") as f:
        for rec in labels:
            f.write(json.dumps(rec, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""dev7 blind set generator (stdlib only, Python 3.6+).
Usage: python3 make_set.py [--seed 20261208]
Writes logs/<id>.log and labels.jsonl. Captured logs are read from captured/ (produced once by capture.py
on this machine); composed logs are generated from exact message formats found in public sources."""
import json, os, random, sys

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20261208
if "--seed" in sys.argv:
    SEED = int(sys.argv[sys.argv.index("--seed") + 1])
PFX = "dev7"

GPUS = [("NVIDIA H100 80GB HBM3", "535.154.05", 81559), ("NVIDIA A100-SXM4-80GB", "535.129.03", 81920),
        ("NVIDIA A100-SXM4-40GB", "525.85.12", 40960), ("NVIDIA L40S", "550.54.15", 46068),
        ("NVIDIA H200", "560.35.03", 143771), ("NVIDIA A10G", "535.183.01", 23028),
        ("Tesla V100-SXM2-32GB", "470.182.03", 32768), ("NVIDIA GeForce RTX 4090", "550.90.07", 24564)]
MODELS = ["meta-llama/Meta-Llama-3-8B-Instruct", "mistralai/Mistral-7B-v0.1", "Qwen/Qwen2.5-7B-Instruct",
          "meta-llama/Llama-2-13b-hf", "google/gemma-2-9b", "Qwen/Qwen2-72B-Instruct", "microsoft/phi-2",
          "meta-llama/Llama-3.1-70B-Instruct", "tiiuae/falcon-7b", "HuggingFaceH4/zephyr-7b-beta"]
HOSTS = ["gpu-a100-017", "dgx-h100-04", "node-g12", "ip-10-0-41-7", "hpc-gpu-203", "trn-h200-11", "gcp-a3-3", "sky-8f2a-head"]
PY = ["/usr/local/lib/python3.10/dist-packages", "/opt/conda/lib/python3.11/site-packages",
      "/home/user/.venv/lib/python3.10/site-packages", "/workspace/env/lib/python3.12/site-packages"]


class Ctx(object):
    def __init__(self, rng, idx):
        self.r = rng
        self.idx = idx
        g = rng.choice(GPUS)
        self.gpu, self.driver, self.mem = g
        self.host = rng.choice(HOSTS)
        self.model = rng.choice(MODELS)
        self.py = rng.choice(PY)
        self.nranks = rng.choice([1, 2, 4, 8, 8, 8, 16])
        self.style = rng.choice(["torchrun", "torchrun", "srun", "mpirun", "plain", "deepspeed"])
        self.jobid = rng.randint(1200000, 9800000)
        self.pid = rng.randint(2000, 90000)
        self.mon = rng.randint(1, 12)
        self.day = rng.randint(1, 28)
        self.year = rng.choice([2023, 2024, 2024, 2025, 2025, 2026])
        self.h = rng.randint(0, 20)
        self.m = rng.randint(0, 59)
        self.s = rng.randint(0, 59)
        self.run = "%s-%s" % (rng.choice(["sft", "dpo", "pt", "lora", "qlora", "orpo", "rm"]), "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8)))

    def tick(self, sec=None):
        self.s += sec if sec is not None else self.r.randint(0, 9)
        while self.s >= 60:
            self.s -= 60; self.m += 1
        while self.m >= 60:
            self.m -= 60; self.h += 1
        if self.h >= 24:
            self.h = 23
        return self

    def ts(self):  # 2024-05-03 12:01:02,123
        self.tick()
        return "%04d-%02d-%02d %02d:%02d:%02d,%03d" % (self.year, self.mon, self.day, self.h, self.m, self.s, self.r.randint(0, 999))

    def iso(self):
        return "%04d-%02d-%02dT%02d:%02d:%02d" % (self.year, self.mon, self.day, self.h, self.m, self.s)

    def glog(self, lvl="W"):  # W1203 15:55:10.853000 26014
        self.tick(0)
        return "%s%02d%02d %02d:%02d:%02d.%06d %d" % (lvl, self.mon, self.day, self.h, self.m, self.s, self.r.randint(0, 999999), self.pid)

    def vts(self):  # vLLM "06-28 06:11:45"
        self.tick()
        return "%02d-%02d %02d:%02d:%02d" % (self.mon, self.day, self.h, self.m, self.s)

    def rp(self, rank, line):
        st = self.style
        if st == "torchrun":
            return "[rank%d]:%s" % (rank, line) if line.startswith("[") else "[rank%d]: %s" % (rank, line)
        if st == "srun":
            return "%d: %s" % (rank, line)
        if st == "mpirun":
            return "[1,%d]<stderr>:%s" % (rank, line)
        if st == "deepspeed":
            return "%s: %s" % (self.host, line)
        return line


# ---------------------------------------------------------------- noise
def nvidia_smi(c, n=None):
    n = n or min(c.nranks, 8)
    L = ["%s" % "Tue %s %2d %02d:%02d:%02d %d" % (["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"][c.mon - 1], c.day, c.h, c.m, c.s, c.year),
         "+-----------------------------------------------------------------------------------------+",
         "| NVIDIA-SMI %s              Driver Version: %s      CUDA Version: %s     |" % (c.driver, c.driver, c.r.choice(["12.2", "12.4", "12.6", "11.8"])),
         "|-----------------------------------------+------------------------+----------------------+",
         "| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |",
         "| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |",
         "|=========================================+========================+======================|"]
    for i in range(n):
        L.append("|   %d  %-24s    On  |   00000000:%02X:00.0 Off |                    0 |" % (i, c.gpu[:24], 0x18 + 0x10 * i))
        L.append("| N/A   %2dC    P0             %3dW /  700W |       %dMiB / %dMiB |      0%%      Default |" % (c.r.randint(28, 40), c.r.randint(60, 120), c.r.randint(1, 8), c.mem))
        L.append("+-----------------------------------------+------------------------+----------------------+")
    return L


def env_dump(c):
    L = ["PyTorch version: %s" % c.r.choice(["2.1.2+cu121", "2.3.1+cu121", "2.4.0+cu124", "2.5.1+cu124", "2.6.0+cu126"]),
         "Is debug build: False", "CUDA used to build PyTorch: 12.1", "ROCM used to build PyTorch: N/A", "",
         "OS: Ubuntu 22.04.4 LTS (x86_64)", "GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0",
         "Python version: 3.10.12 (main, Nov 20 2023, 15:14:05) [GCC 11.4.0] (64-bit runtime)",
         "Is CUDA available: True", "GPU models and configuration: %s" % "; ".join("GPU %d: %s" % (i, c.gpu) for i in range(min(c.nranks, 8))),
         "Nvidia driver version: %s" % c.driver, ""]
    return L


def pip_freeze(c):
    pk = ["accelerate==%s" % c.r.choice(["0.27.2", "0.34.2", "1.2.1"]), "bitsandbytes==%s" % c.r.choice(["0.43.1", "0.44.1", "0.45.0"]),
          "datasets==%s" % c.r.choice(["2.18.0", "2.21.0", "3.2.0"]), "deepspeed==%s" % c.r.choice(["0.14.0", "0.15.4", "0.16.2"]),
          "flash-attn==%s" % c.r.choice(["2.5.8", "2.6.3", "2.7.2.post1"]), "peft==%s" % c.r.choice(["0.10.0", "0.12.0", "0.14.0"]),
          "safetensors==0.4.5", "tokenizers==%s" % c.r.choice(["0.19.1", "0.20.3", "0.21.0"]),
          "torch==%s" % c.r.choice(["2.3.1", "2.4.1", "2.5.1"]), "transformers==%s" % c.r.choice(["4.40.2", "4.44.2", "4.46.3", "4.48.0"]),
          "triton==3.0.0", "trl==%s" % c.r.choice(["0.8.6", "0.11.4", "0.13.0"]), "wandb==0.18.7"]
    return ["$ pip freeze | grep -E 'torch|transformers|peft|trl|accelerate|deepspeed|flash|bitsandbytes|datasets|tokenizers|wandb|triton'"] + pk


def cfg_dump(c):
    L = ["***** training config *****"]
    kv = [("model_name_or_path", c.model), ("torch_dtype", c.r.choice(["bfloat16", "float16", "auto"])),
          ("attn_implementation", c.r.choice(["flash_attention_2", "sdpa", "eager"])), ("lora_r", c.r.choice([8, 16, 64])),
          ("lora_alpha", c.r.choice([16, 32, 128])), ("lora_dropout", 0.05), ("learning_rate", c.r.choice(["2e-5", "1e-4", "2e-4", "5e-7"])),
          ("per_device_train_batch_size", c.r.choice([1, 2, 4, 8])), ("gradient_accumulation_steps", c.r.choice([1, 4, 8, 16])),
          ("max_seq_length", c.r.choice([2048, 4096, 8192])), ("gradient_checkpointing", True), ("bf16", True),
          ("output_dir", "/checkpoints/%s" % c.run), ("report_to", "wandb"), ("save_steps", c.r.choice([100, 250, 500])),
          ("seed", 42), ("deepspeed", c.r.choice(["None", "configs/zero2.json", "configs/zero3_offload.json"]))]
    for k, v in kv:
        L.append("%s=%s," % (k, v))
    return L


WARN = [
    lambda c: ["%s/torch/utils/checkpoint.py:464: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. In version 2.4 we will raise an exception if use_reentrant is not passed. use_reentrant=False is recommended, but if you need to preserve the current default behavior, you can pass use_reentrant=True. Refer to docs for more details on the differences between the two variants." % c.py, "  warnings.warn("],
    lambda c: ["`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`."],
    lambda c: ["Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned or trained."],
    lambda c: ["huggingface/tokenizers: The current process just got forked, after parallelism has already been used. Disabling parallelism to avoid deadlocks...",
               "To disable this warning, you can either:", "\t- Avoid using `tokenizers` before the fork if possible", "\t- Explicitly set the environment variable TOKENIZERS_PARALLELISM=(true | false)"],
    lambda c: ["You're using a %s tokenizer. Please note that with a fast tokenizer, using the `__call__` method is faster than using a method to encode the text followed by a call to the `pad` method to get a padded encoding." % c.r.choice(["LlamaTokenizerFast", "Qwen2TokenizerFast", "GemmaTokenizerFast", "PreTrainedTokenizerFast"])],
    lambda c: ["%s/torch/_dynamo/eval_frame.py:600: UserWarning: torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly." % c.py],
    lambda c: ["%s/trl/trainer/sft_trainer.py:401: UserWarning: You passed a tokenizer with `padding_side` not equal to `right` to the SFTTrainer. This might lead to some unexpected behaviour due to overflow issues when training a model in half-precision. You might consider adding `tokenizer.padding_side = 'right'` to your code." % c.py, "  warnings.warn("],
    lambda c: ["%s/bitsandbytes/autograd/_functions.py:316: UserWarning: MatMul8bitLt: inputs will be cast from torch.float32 to float16 during quantization" % c.py, '  warnings.warn(f"MatMul8bitLt: inputs will be cast from {A.dtype} to float16 during quantization")'],
    lambda c: ["%s: FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead." % (c.py + "/accelerate/accelerator.py:488"), "  self.scaler = torch.cuda.amp.GradScaler(**kwargs)"],
    lambda c: ["[W reducer.cpp:1360] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward pass. This flag results in an extra traversal of the autograd graph every iteration,  which can adversely affect performance. If your model indeed never has any unused parameters in the forward pass, consider turning this flag off. Note that this warning may be a false positive if your model has flow control causing later iterations to have unused parameters. (function operator())"],
    lambda c: [c.glog("W") + " torch/_dynamo/convert_frame.py:1355] [0/8] torch._dynamo hit config.recompile_limit (8)",
               c.glog("W") + " torch/_dynamo/convert_frame.py:1355] [0/8]    function: 'forward' (%s/transformers/models/llama/modeling_llama.py:1147)" % c.py,
               c.glog("W") + " torch/_dynamo/convert_frame.py:1355] [0/8]    last reason: 0/7: L['input_ids'].size()[1] == 731",
               c.glog("W") + ' torch/_dynamo/convert_frame.py:1355] [0/8] To log all recompilation reasons, use TORCH_LOGS="recompiles".',
               c.glog("W") + " torch/_dynamo/convert_frame.py:1355] [0/8] To diagnose recompilation issues, see https://pytorch.org/docs/main/torch.compiler_troubleshooting.html"],
    lambda c: [c.glog("W") + " torch/_inductor/utils.py:1137] [0/0] Not enough SMs to use max_autotune_gemm mode"],
    lambda c: ["[%s] [WARNING] [stage3.py:2139:step] %d pytorch allocator cache flushes since last step. this happens when there is high memory pressure and is detrimental to performance. if this is happening frequently consider adjusting settings to reduce memory consumption. If you are unable to make the cache flushes go away consider adding get_accelerator().empty_cache() calls in your training loop to ensure that all ranks flush their caches at the same time" % (c.ts(), c.r.randint(1, 6))],
    lambda c: ["%s/transformers/trainer.py:3098: FutureWarning: `tokenizer` is deprecated and will be removed in version 5.0.0 for `SFTTrainer.__init__`. Use `processing_class` instead." % c.py],
    lambda c: ["wandb: WARNING Serializing object of type dict that is 262240 bytes"],
    lambda c: ["%s/torch/distributed/fsdp/_state_dict_utils.py:773: UserWarning: When using ``NO_SHARD`` for ``ShardingStrategy``, full_state_dict will be returned." % c.py, "  warnings.warn("],
    lambda c: ["Could not estimate the number of tokens of the input, floating-point operations will not be computed"],
]


def warnings_block(c, k=None):
    L = []
    for w in c.r.sample(WARN, k if k is not None else c.r.randint(1, 4)):
        L += w(c)
    return L


def nccl_init(c, n=None):
    L = []
    n = min(n or c.nranks, 8)
    ip = "10.%d.%d.%d" % (c.r.randint(0, 255), c.r.randint(0, 255), c.r.randint(2, 250))
    for r in range(n):
        L.append("%s:%d:%d [%d] NCCL INFO Bootstrap : Using eth0:%s<0>" % (c.host, c.pid + r, c.pid + r + 300, r, ip))
    L.append("%s:%d:%d [0] NCCL INFO NCCL version 2.%d.%d+cuda12.%d" % (c.host, c.pid, c.pid + 300, c.r.choice([18, 20, 21]), c.r.randint(1, 5), c.r.randint(1, 4)))
    L.append("%s:%d:%d [0] NCCL INFO NET/IB : No device found." % (c.host, c.pid, c.pid + 300))
    L.append("%s:%d:%d [0] NCCL INFO NET/Socket : Using [0]eth0:%s<0>" % (c.host, c.pid, c.pid + 300, ip))
    L.append("%s:%d:%d [0] NCCL INFO Using network Socket" % (c.host, c.pid, c.pid + 300))
    for r in range(n):
        L.append("%s:%d:%d [%d] NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x000 commId 0x%x - Init COMPLETE" % (
            c.host, c.pid + r, c.pid + r + 300, r, c.r.randint(0x55000000, 0x56ffffff), r, c.nranks, r, r, 0x18 + 0x10 * r, c.r.randint(1 << 40, 1 << 48)))
    return L


def ds_init(c):
    return ["[%s] [INFO] [real_accelerator.py:203:get_accelerator] Setting ds_accelerator to cuda (auto detect)" % c.ts(),
            "[%s] [INFO] [comm.py:652:init_distributed] cdb=None" % c.ts(),
            "[%s] [INFO] [comm.py:683:init_distributed] Initializing TorchBackend in DeepSpeed with backend nccl" % c.ts(),
            "Using %s/root/.cache/torch_extensions/py310_cu121 as PyTorch extensions root..." % "",
            "Loading extension module cpu_adam...", "Time to load cpu_adam op: %.4f seconds" % c.r.uniform(2, 30),
            "[%s] [INFO] [logging.py:128:log_dist] [Rank 0] DeepSpeed info: version=%s, git-hash=unknown, git-branch=unknown" % (c.ts(), c.r.choice(["0.14.0", "0.15.4", "0.16.2"])),
            "[%s] [INFO] [config.py:999:print]   zero_optimization ............ stage=%d offload_param=DeepSpeedZeroOffloadParamConfig(device='cpu', nvme_path=None, buffer_count=5, buffer_size=100000000, max_in_cpu=1000000000, pin_memory=True)" % (c.ts(), c.r.choice([2, 3]))]


def hf_load(c):
    n = c.r.choice([2, 4, 4, 6, 30])
    L = ["loading configuration file config.json from cache at /root/.cache/huggingface/hub/models--%s/snapshots/%s/config.json" % (c.model.replace("/", "--"), "%040x" % c.r.getrandbits(160))]
    bar = "".join("\rLoading checkpoint shards: %3d%%|%s| %d/%d [00:%02d<00:%02d, %.2fs/it]" % (100 * i // n, ("█" * (10 * i // n)).ljust(10), i, n, 2 * i, 2 * (n - i), c.r.uniform(0.8, 3)) for i in range(n + 1))
    L.append(bar)
    L.append("trainable params: {:,} || all params: {:,} || trainable%: {:.4f}".format(*(lambda a, b: (a, b, 100.0 * a / b))(c.r.choice([4194304, 20971520, 41943040, 167772160]), c.r.choice([6742609920, 7241732096, 8030261248, 13015864320]))))
    return L


def tqdm_train(c, total, upto, loss0=2.1, nan_from=None, every=10, prefix=""):
    """HF Trainer style: tqdm with \r and dict lines"""
    L = []
    loss = loss0
    cur = ""
    for s in range(1, upto + 1):
        el = s * c.r.uniform(2, 4)
        cur += "\r%s%3d%%|%s| %d/%d [%02d:%02d<%02d:%02d, %.2fs/it]" % (prefix, 100 * s // total, ("█" * (10 * s // total)).ljust(10), s, total, int(el) // 60 % 60, int(el) % 60, int((total - s) * 3) // 60 % 60, int((total - s) * 3) % 60, c.r.uniform(2, 4))
        if s % every == 0:
            loss = max(0.3, loss * c.r.uniform(0.93, 1.0))
            shown = "nan" if (nan_from is not None and s >= nan_from) else "%.4f" % loss
            gn = "nan" if (nan_from is not None and s >= nan_from) else "%.4f" % c.r.uniform(0.2, 3)
            L.append(cur)
            cur = ""
            L.append("{'loss': %s, 'grad_norm': %s, 'learning_rate': %.4e, 'epoch': %.2f}" % (shown, gn, 2e-4 * (1 - s / total), s / total * c.r.choice([1, 2, 3])))
    if cur:
        L.append(cur)
    return L


def megatron_iters(c, start, end, every=10, total=None, nan_from=None, skip_every=0):
    total = total or end * 10
    L = []
    loss = c.r.uniform(2.2, 9.0)
    sk = 0
    nn = 0
    for it in range(start, end + 1, every):
        loss = max(1.5, loss * c.r.uniform(0.97, 1.001))
        if skip_every and c.r.random() < 0.15:
            sk = 1
        else:
            sk = 0
        if nan_from is not None and it >= nan_from:
            nn += c.r.randint(1, every)
        ls = "nan" if (nan_from is not None and it >= nan_from) else "%.6E" % loss
        L.append(" [%s] iteration %8d/%8d | consumed samples: %12d | elapsed time per iteration (ms): %.1f | learning rate: %.6E | global batch size: %5d | lm loss: %s | loss scale: %.1f | grad norm: %s | number of skipped iterations: %3d | number of nan iterations: %3d |" % (
            "%04d-%02d-%02d %02d:%02d:%02d" % (c.year, c.mon, c.day, c.tick(c.r.randint(5, 30)).h, c.m, c.s), it, total, it * 1024, c.r.uniform(800, 5000), 3e-4 * min(1, it / 2000.0), 1024, ls, 1.0 if nan_from is None else 1.0,
            ("nan" if (nan_from is not None and it >= nan_from) else "%.3f" % c.r.uniform(0.15, 2.5)), sk, nn))
    return L


def ds_steps(c, s0, s1, overflow_at=()):
    L = []
    sc = 65536
    sk = 0
    for s in range(s0, s1 + 1, 10):
        if (overflow_at == "some" and c.r.random() < 0.2) or (overflow_at != "some" and s in overflow_at):
            L.append("[%s] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d" % (c.ts(), sc, sc // 2))
            sc //= 2; sk += 1
        L.append("[%s] [INFO] [logging.py:128:log_dist] [Rank 0] step=%d, skipped=%d, lr=[%.8e], mom=[(0.9, 0.95)]" % (c.ts(), s, sk, 2e-5))
        L.append("[%s] [INFO] [timer.py:264:stop] epoch=0/micro_step=%d/global_step=%d, RunningAvgSamplesPerSec=%.3f, CurrSamplesPerSec=%.3f, MemAllocated=%.2fGB, MaxMemAllocated=%.2fGB" % (c.ts(), s * 8, s, c.r.uniform(5, 60), c.r.uniform(5, 60), c.r.uniform(10, 60), c.r.uniform(30, 75)))
    return L


def vllm_start(c, tp=1):
    v = c.vts
    L = ["INFO %s [__init__.py:207] Automatically detected platform cuda." % v(),
         "INFO %s [api_server.py:912] vLLM API server version %s" % (v(), c.r.choice(["0.6.3.post1", "0.7.3", "0.8.4", "0.9.1"])),
         "INFO %s [config.py:549] This model supports multiple tasks: {'generate', 'embed', 'reward', 'score', 'classify'}. Defaulting to 'generate'." % v(),
         "INFO %s [llm_engine.py:234] Initializing a V0 LLM engine with config: model='%s', speculative_config=None, tokenizer='%s', skip_tokenizer_init=False, tokenizer_mode=auto, revision=None, trust_remote_code=False, dtype=torch.bfloat16, max_seq_len=%d, download_dir=None, load_format=LoadFormat.AUTO, tensor_parallel_size=%d, pipeline_parallel_size=1, disable_custom_all_reduce=False, quantization=None, enforce_eager=False, kv_cache_dtype=auto, seed=0, served_model_name=%s, use_v2_block_manager=True, enable_prefix_caching=False" % (v(), c.model, c.model, c.r.choice([8192, 32768, 131072]), tp, c.model),
         "INFO %s [cuda.py:230] Using Flash Attention backend." % v(),
         "INFO %s [model_runner.py:1110] Starting to load model %s..." % (v(), c.model),
         "INFO %s [model_runner.py:1115] Loading model weights took %.4f GB" % (v(), c.r.uniform(4, 70))]
    return L


def wandb_teardown(c, ok=True):
    L = ["wandb: %s" % ("Waiting for W&B process to finish... (success)." if ok else "Waiting for W&B process to finish... (failed 1). Press Control-C to abort syncing."),
         "wandb: ", "wandb: Run history:", "wandb:         train/epoch ▁▁▂▂▃▃▄▄▅▅▆▆▇▇██", "wandb:          train/loss █▆▅▄▄▃▃▃▂▂▂▂▁▁▁▁",
         "wandb: ", "wandb: 🚀 View run %s at: https://wandb.ai/lab/llm-finetune/runs/%s" % (c.run, c.run[-8:]),
         "wandb: Synced 6 W&B file(s), 0 media file(s), 2 artifact file(s) and 0 other file(s)",
         "wandb: Find logs at: ./wandb/run-%04d%02d%02d_%02d%02d%02d-%s/logs" % (c.year, c.mon, c.day, c.h, c.m, c.s, c.run[-8:])]
    return L


def torchrun_teardown(c, script, fail_rank, code, sig=None, others_term=True):
    L = []
    if others_term:
        for r in range(min(c.nranks, 8)):
            if r != fail_rank:
                L.append("%s torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM" % (c.glog("W"), c.pid + r))
    L.append("%s torch/distributed/elastic/multiprocessing/api.py:869] failed (exitcode: %d) local_rank: %d (pid: %d) of binary: /usr/bin/python3" % (c.glog("E"), code, fail_rank, c.pid + fail_rank))
    L += ["Traceback (most recent call last):", '  File "/usr/local/bin/torchrun", line 8, in <module>', "    sys.exit(main())",
          '  File "%s/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 355, in wrapper' % c.py, "    return f(*args, **kwargs)",
          '  File "%s/torch/distributed/run.py", line 919, in main' % c.py, "    run(args)",
          '  File "%s/torch/distributed/launcher/api.py", line 263, in launch_agent' % c.py, "    raise ChildFailedError(",
          "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
          "============================================================", "%s FAILED" % script,
          "------------------------------------------------------------", "Failures:", "  <NO_OTHER_FAILURES>",
          "------------------------------------------------------------", "Root Cause (first observed failure):", "[0]:",
          "  time      : %04d-%02d-%02d_%02d:%02d:%02d" % (c.year, c.mon, c.day, c.h, c.m, c.s), "  host      : %s" % c.host,
          "  rank      : %d (local_rank: %d)" % (fail_rank, fail_rank)]
    if sig:
        L.append("  exitcode  : %d (pid: %d)" % (code, c.pid + fail_rank))
        L.append("  error_file: <N/A>")
        L.append("  traceback : Signal %d (%s) received by PID %d" % (-code, sig, c.pid + fail_rank))
    else:
        L.append("  exitcode  : %d (pid: %d)" % (code, c.pid + fail_rank))
        L.append("  error_file: <N/A>")
        L.append("  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
    L.append("============================================================")
    return L


def slurm_tail(c, text):
    return ["slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s %s***" % (c.jobid, c.host, c.iso(), text + " " if text else "")]


def tb(c, frames, exc):
    L = ["Traceback (most recent call last):"]
    for f, ln, fn, code in frames:
        L.append('  File "%s", line %d, in %s' % (f, ln, fn))
        L.append("    " + code)
    L += exc if isinstance(exc, list) else [exc]
    return L


def ranked(c, lines, rank):
    return [c.rp(rank, l) for l in lines]


def trainer_frames(c, script="train_sft.py"):
    return [("/workspace/%s" % script, c.r.randint(140, 420), "<module>", "trainer.train()"),
            ("%s/transformers/trainer.py" % c.py, 2164, "train", "return inner_training_loop("),
            ("%s/transformers/trainer.py" % c.py, 2522, "_inner_training_loop", "tr_loss_step = self.training_step(model, inputs, num_items_in_batch)")]


def preamble(c, kind="hf"):
    L = []
    if c.r.random() < 0.5:
        L += ["+ srun --label python -u %s" % "train.py" if c.style == "srun" else "+ %s" % ("torchrun --nproc_per_node=%d train_sft.py --config recipes/sft.yaml" % min(c.nranks, 8))]
    if c.r.random() < 0.45:
        L += nvidia_smi(c)
    if c.r.random() < 0.3:
        L += env_dump(c)
    if c.r.random() < 0.4:
        L += pip_freeze(c)
    if kind in ("hf", "ds") and c.r.random() < 0.6:
        L += cfg_dump(c)
    if c.nranks > 1 and c.r.random() < 0.7:
        L += nccl_init(c)
    if kind == "ds" or c.r.random() < 0.2:
        L += ds_init(c)
    if kind in ("hf", "ds"):
        L += hf_load(c)
        if c.r.random() < 0.6:
            L += ["wandb: Currently logged in as: %s. Use `wandb login --relogin` to force relogin" % c.r.choice(["mlteam", "jdoe", "llm-lab"]),
                  "wandb: Tracking run with wandb version 0.18.7", "wandb: Run data is saved locally in /workspace/wandb/run-%04d%02d%02d_%02d%02d%02d-%s" % (c.year, c.mon, c.day, c.h, c.m, c.s, c.run[-8:]),
                  "wandb: 🚀 View run at https://wandb.ai/lab/llm-finetune/runs/%s" % c.run[-8:]]
    L += warnings_block(c)
    L += ["***** Running training *****", "  Num examples = {:,}".format(c.r.randint(5000, 900000)), "  Num Epochs = %d" % c.r.choice([1, 2, 3]),
          "  Instantaneous batch size per device = %d" % c.r.choice([1, 2, 4, 8]), "  Gradient Accumulation steps = %d" % c.r.choice([1, 4, 8, 16]),
          "  Total optimization steps = {:,}".format(c.r.randint(300, 20000))] if kind in ("hf", "ds") else []
    return L


# ---------------------------------------------------------------- scenario helpers
def progress(c, kind="hf", n=None, nan_from=None):
    if kind == "mega":
        n = n or c.r.randint(30, 160)
        return megatron_iters(c, 10, 10 * n, 10, nan_from=nan_from)
    if kind == "ds":
        n = n or c.r.randint(20, 90)
        return ds_steps(c, 10, 10 * n, "some") + tqdm_train(c, 2000, n * 3, every=3)
    n = n or c.r.randint(40, 400)
    tot = c.r.randint(n + 50, n * 4 + 100)
    L = tqdm_train(c, tot, n, nan_from=nan_from, every=c.r.choice([1, 2, 2, 5, 10]))
    if c.r.random() < 0.4:
        k = c.r.randint(0, len(L))
        L[k:k] = warnings_block(c, 1)
    return L


def CUDA_TAIL():
    return ["CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
            "For debugging consider passing CUDA_LAUNCH_BLOCKING=1", "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]


def oom_msg(c, gib, free, inuse, alloc, resv, dev=0):
    return ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU %d has a total capacity of %.2f GiB of which %.2f GiB is free. Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and %.2f GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)" % (gib, dev, c.mem / 1024.0 - 0.6, free, inuse, alloc, resv))


def other_ranks_nccl_after(c, bad, n=None):
    """consequences on other ranks after one rank died: watchdog timeouts, broken pipes"""
    L = []
    sq = c.r.randint(300, 90000)
    for r in range(min(c.nranks, 8)):
        if r == bad:
            continue
        L.append(c.rp(r, "[E%02d%02d %02d:%02d:%02d.%06d ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for %d milliseconds before timing out." % (c.mon, c.day, c.h, c.m, c.s, c.r.randint(0, 999999), r, sq, 1 << c.r.randint(10, 28), 1 << 20, 600000 + c.r.randint(5, 99))))
    return L


# ---------------------------------------------------------------- scenarios: each returns (lines, exit_code, provenance, exit0_failed?)
S = {}


def sc(label):
    def deco(f):
        S.setdefault(label, []).append(f)
        return f
    return deco


P_OOM = "pytorch c10/cuda/CUDACachingAllocator.cpp (torch.OutOfMemoryError message); https://github.com/pytorch/pytorch/issues/122057 style reports; generation OOM e.g. https://github.com/huggingface/transformers/issues (generate during eval)"


@sc("cuda_oom")
def oom_generate_eval(c):
    L = preamble(c) + progress(c)
    L += ["***** Running Evaluation *****", "  Num examples = %d" % c.r.randint(200, 2000), "  Batch size = %d" % c.r.choice([8, 16, 32])]
    L += ["\r  %d%%|%s| %d/%d [00:%02d<01:10, 1.1it/s]" % (i * 10, "█" * i, i, 10, i * 3) for i in range(4)]
    L += tb(c, [("/workspace/train_sft.py", 311, "<module>", "trainer.train()"),
                ("%s/transformers/trainer.py" % c.py, 2599, "_inner_training_loop", "self._maybe_log_save_evaluate(tr_loss, grad_norm, model, trial, epoch, ignore_keys_for_eval)"),
                ("%s/transformers/trainer_seq2seq.py" % c.py, 310, "prediction_step", "generated_tokens = self.model.generate(**generation_inputs, **gen_kwargs)"),
                ("%s/transformers/generation/utils.py" % c.py, 2215, "generate", "result = self._sample("),
                ("%s/transformers/models/llama/modeling_llama.py" % c.py, 1190, "forward", "logits = logits.float()")],
            oom_msg(c, c.r.uniform(2, 12), c.r.uniform(0.1, 1.5), c.mem / 1024.0 - 1.2, c.mem / 1024.0 - 4, c.r.uniform(0.5, 3)))
    L += wandb_teardown(c, ok=False)
    return L, 1, P_OOM + "; HF trainer_seq2seq.py prediction_step/generate frames", False


@sc("cuda_oom")
def oom_optimizer_step_ranks(c):
    c.style = c.r.choice(["torchrun", "srun"]); c.nranks = 8
    L = preamble(c) + progress(c)
    bad = c.r.randint(0, 7)
    e = tb(c, trainer_frames(c) + [("%s/accelerate/optimizer.py" % c.py, 172, "step", "self.optimizer.step(closure)"),
                                   ("%s/torch/optim/adamw.py" % c.py, 209, "step", "has_complex = self._init_group("),
                                   ("%s/torch/optim/adamw.py" % c.py, 152, "_init_group", "state[\"exp_avg_sq\"] = torch.zeros_like("),],
           oom_msg(c, c.r.uniform(0.5, 4), c.r.uniform(0.05, 0.5), c.mem / 1024.0 - 0.8, c.mem / 1024.0 - 3, c.r.uniform(0.3, 1.5), dev=bad))
    L += ranked(c, e, bad)
    L += other_ranks_nccl_after(c, bad)[:3]
    L += torchrun_teardown(c, "train_sft.py", bad, 1)
    return L, 1, P_OOM + "; torch/optim/adamw.py _init_group; torchrun ChildFailedError format (torch/distributed/elastic)", False


@sc("cuda_oom")
def oom_vllm_cudagraph(c):
    L = vllm_start(c, tp=c.r.choice([1, 2]))
    L += ["INFO %s [worker.py:267] Memory profiling takes %.2f seconds" % (c.vts(), c.r.uniform(2, 9)),
          "INFO %s [executor_base.py:111] # cuda blocks: %d, # CPU blocks: %d" % (c.vts(), c.r.randint(900, 9000), 2048),
          "INFO %s [model_runner.py:1434] Capturing cudagraphs for decoding. This may lead to unexpected consequences if the model is not static. To run the model in eager mode, set 'enforce_eager=True' or use '--enforce-eager' in the CLI. If out-of-memory error occurs during cudagraph capture, consider decreasing `gpu_memory_utilization` or switching to eager mode. You can also reduce the `max_num_seqs` as needed to decrease memory usage." % c.vts()]
    L += ["\rCapturing CUDA graph shapes:  %d%%|%s| %d/35 [00:%02d<00:20,  1.2it/s]" % (i * 100 // 35, "█" * (i * 10 // 35), i, i) for i in range(0, 23, 3)]
    e = tb(c, [("%s/vllm/entrypoints/openai/api_server.py" % c.py, 1049, "run_server", "async with build_async_engine_client(args) as engine_client:"),
               ("%s/vllm/worker/model_runner.py" % c.py, 1539, "capture_model", "graph_runner.capture(**capture_inputs)"),
               ("%s/vllm/worker/model_runner.py" % c.py, 1940, "capture", "with torch.cuda.graph(self._graph, pool=memory_pool, stream=stream):")],
           oom_msg(c, c.r.uniform(0.1, 1.0), c.r.uniform(0.02, 0.2), c.mem / 1024.0 - 0.6, c.mem / 1024.0 - 2, 0.3))
    L += ["ERROR %s [engine.py:400] %s" % (c.vts(), e[-1].split(": ", 1)[1][:120])] + e
    L += ["[rank0]:[W%02d%02d %02d:%02d:%02d.%06d ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the progress of another member of the process group. This constraint has always been present,  but this warning has only been added since PyTorch 2.4 (function operator())" % (c.mon, c.day, c.h, c.m, c.s, 123456)]
    return L, 1, P_OOM + "; vllm/worker/model_runner.py capture_model message; https://github.com/vllm-project/vllm/issues/5060", False


@sc("cuda_oom")
def oom_zero3_one_rank(c):
    c.style = "deepspeed"; c.nranks = 16
    L = preamble(c, "ds") + progress(c, "ds")
    bad = c.r.randint(1, 15)
    e = tb(c, [("/workspace/train.py", 201, "<module>", "model_engine.backward(loss)"),
               ("%s/deepspeed/runtime/engine.py" % c.py, 2020, "backward", "self.optimizer.backward(loss, retain_graph=retain_graph)"),
               ("%s/deepspeed/runtime/zero/stage3.py" % c.py, 2250, "backward", "self.loss_scaler.backward(loss.float(), retain_graph=retain_graph)"),
               ("%s/deepspeed/runtime/zero/stage3.py" % c.py, 1280, "__avg_scatter_grads", "grad_partitions_for_rank = reduce_scatter_coalesced(full_grads_for_rank, self.dp_process_group)")],
           oom_msg(c, c.r.uniform(1, 6), 0.31, c.mem / 1024.0 - 0.7, c.mem / 1024.0 - 5, 2.1, dev=bad % 8))
    L += ["%s: [RANK %d] %s" % (c.host, bad, x) for x in e]
    L += ["%s: [%s] [INFO] [launch.py:319:sigkill_handler] Killing subprocess %d" % (c.host, c.ts(), c.pid + i) for i in range(8)]
    L += ["%s: [%s] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '--local_rank=%d', '--deepspeed', 'configs/zero3_offload.json'] exits with return code = 1" % (c.host, c.ts(), bad % 8),
          "pdsh@%s: %s: ssh exited with exit code 1" % (HOSTS[0], c.host)]
    return L, 1, P_OOM + "; deepspeed/runtime/zero/stage3.py; deepspeed/launcher/launch.py sigkill_handler wording", False


@sc("cuda_oom")
def oom_megatron_tpu_xla(c):
    c.gpu, c.driver = "TPU v5e-8", "none"
    L = ["I%02d%02d %02d:%02d:%02d.%d  1 pjrt_api.cc:112] GetPjrtApi was found for tpu at /lib/libtpu.so" % (c.mon, c.day, c.h, c.m, c.s, 22),
         "I%02d%02d %02d:%02d:%02d.%d  1 pjrt_c_api_client.cc:110] PjRtCApiClient created." % (c.mon, c.day, c.h, c.m, c.s, 31)]
    L += warnings_block(c, 2) + progress(c, "hf", n=c.r.randint(10, 40))
    L += ["Traceback (most recent call last):", '  File "/workspace/train_fsdp_xla.py", line 288, in <module>', "    xm.mark_step()",
          '  File "%s/torch_xla/core/xla_model.py", line 1056, in mark_step' % c.py, "    torch_xla._XLAC._xla_step_marker(",
          "RuntimeError: Bad StatusOr access: RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate %.2fG. That was not possible. There are %.2fG free.; (0x0x0_HBM0)" % (c.r.uniform(1, 6), c.r.uniform(0.1, 0.9))]
    return L, 1, "torch_xla RESOURCE_EXHAUSTED 'Error allocating device buffer: Attempting to allocate' (https://github.com/pytorch/xla/issues/6064 style reports)", False


@sc("cuda_oom")
def oom_dpo_logits(c):
    L = preamble(c) + progress(c, n=c.r.randint(3, 30))
    L += tb(c, trainer_frames(c, "train_dpo.py") + [("%s/trl/trainer/dpo_trainer.py" % c.py, 1408, "compute_loss", 'loss, metrics = self.get_batch_loss_metrics(model, inputs, train_eval="train")'),
                                                 ("%s/trl/trainer/dpo_trainer.py" % c.py, 1206, "concatenated_forward", "all_logps = self.get_batch_logps(")],
            ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU 0 has a total capacity of %.2f GiB of which %d.00 MiB is free. Process %d has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and %.2f MiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)" % (c.r.uniform(3, 15), c.mem / 1024.0 - 0.6, c.r.randint(20, 400), c.pid, c.mem / 1024.0 - 0.8, c.mem / 1024.0 - 2.5, c.r.uniform(100, 900))])
    if c.r.random() < 0.6:
        L += wandb_teardown(c, ok=False)
    return L, 1, P_OOM + "; trl/trainer/dpo_trainer.py concatenated_forward", False


@sc("cuda_oom")
def oom_megatron_iter(c):
    c.style = "srun"; c.nranks = 32
    L = ["using world size: 32, data-parallel size: 4, context-parallel size: 1, tensor-model-parallel size: 8, pipeline-model-parallel size: 1",
         "> building GPT2BPETokenizer tokenizer ...", " > padded vocab (size: 50257) with 175 dummy tokens (new size: 50432)", "> initializing torch distributed ...",
         "[after model, optimizer, and learning rate scheduler are built] datetime: %04d-%02d-%02d %02d:%02d:%02d" % (c.year, c.mon, c.day, c.h, c.m, c.s),
         "done with setup ...", "training ..."]
    L += ["0: " + x for x in megatron_iters(c, 10, c.r.randint(3, 30) * 10)]
    bad = c.r.randint(0, 31)
    L += ["%d: %s" % (bad, x) for x in tb(c, [("/workspace/Megatron-LM/pretrain_gpt.py", 268, "<module>", "pretrain("),
                                             ("/workspace/Megatron-LM/megatron/training/training.py", 1080, "train", "train_step(forward_step_func,"),
                                             ("/workspace/Megatron-LM/megatron/core/pipeline_parallel/schedules.py", 430, "forward_backward_no_pipelining", "output_tensor = forward_step(")],
                                        oom_msg(c, c.r.uniform(1, 8), 0.2, c.mem / 1024.0 - 0.7, c.mem / 1024.0 - 3, 1.1, dev=bad % 8))]
    L += ["srun: error: %s: task %d: Exited with exit code 1" % (c.host, bad), "srun: Terminating StepId=%d.0" % c.jobid,
          "slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (c.jobid, c.host, c.iso())]
    L += ["srun: error: %s: tasks %d-%d: Terminated" % (c.r.choice(HOSTS), 0, 7)]
    return L, 1, P_OOM + "; Megatron-LM training.py iteration line format (https://github.com/NVIDIA/Megatron-LM/issues/1207); srun 'Exited with exit code' wording", False


# ---------------- nccl
P_WD = "torch ProcessGroupNCCL.cpp watchdog wording; https://github.com/hiyouga/LlamaFactory/issues/7396 ; https://github.com/pytorch/pytorch/issues/118369"


@sc("nccl")
def nccl_watchdog_slow_rank(c):
    c.style = "torchrun"; c.nranks = 8
    L = preamble(c) + progress(c)
    sq = c.r.randint(500, 20000)
    op = c.r.choice(["ALLREDUCE", "_ALLGATHER_BASE", "_REDUCE_SCATTER_BASE", "BROADCAST"])
    slow = c.r.randint(0, 7)
    for r in range(8):
        if r == slow:
            continue
        c.tick(0)
        L.append("[rank%d]:[E%02d%02d %02d:%02d:%02d.%06d ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=%d, NumelOut=%d, Timeout(ms)=1800000) ran for %d milliseconds before timing out." % (r, c.mon, c.day, c.h, c.m, c.s, c.r.randint(0, 999999), r, sq, op, 466119168, 466119168, 1800000 + c.r.randint(4, 99)))
    for r in range(8):
        if r == slow:
            continue
        L.append("[rank%d]:[E%02d%02d %02d:%02d:%02d.%06d ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank %d] Exception (either an error or timeout) detected by watchdog at work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d." % (r, c.mon, c.day, c.h, c.m, c.s, c.r.randint(0, 999999), r, sq, sq + 2, sq - 1))
        L.append("[rank%d]:[E%02d%02d %02d:%02d:%02d.%06d ProcessGroupNCCL.cpp:621] [Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data." % (r, c.mon, c.day, c.h, c.m, c.s, c.r.randint(0, 999999), r))
        L.append("[rank%d]:[E%02d%02d %02d:%02d:%02d.%06d ProcessGroupNCCL.cpp:627] [Rank %d] To avoid data inconsistency, we are taking the entire process down." % (r, c.mon, c.day, c.h, c.m, c.s, c.r.randint(0, 999999), r))
    r0 = 0 if slow != 0 else 1
    L += ["terminate called after throwing an instance of 'c10::DistBackendError'",
          "  what():  [PG 0 (default_pg) Rank %d] Process group watchdog thread terminated with exception: [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=1800000) ran for 1800043 milliseconds before timing out." % (r0, r0, sq, op),
          "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most recent call first):"]
    L += torchrun_teardown(c, "train_sft.py", r0, -6, sig="SIGABRT")
    return L, 1, P_WD + "; c10::DistBackendError terminate wording", False


@sc("nccl")
def nccl_remote_exited(c):
    c.style = c.r.choice(["srun", "torchrun"]); c.nranks = 16
    L = preamble(c) + progress(c)
    r = c.r.randint(0, 15)
    L += ranked(c, ["%s:%d:%d [%d] NCCL INFO [Service thread] Connection closed by localRank %d" % (c.host, c.pid, c.pid + 9, r % 8, (r + 1) % 8),
                    "%s:%d:%d [%d] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.2.4.%d<%d> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.2.4.9 remoteGids::ffff:10.2.4.%d hca mlx5_2" % (c.host, c.pid, c.pid + 11, r % 8, c.r.randint(2, 90), c.r.randint(30000, 60000), c.r.randint(2, 90))], r)
    L += ranked(c, tb(c, trainer_frames(c) + [("%s/torch/distributed/distributed_c10d.py" % c.py, 2288, "all_reduce", "work = group.allreduce([tensor], opts)")],
                      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, remote process exited or there was a network error, NCCL version 2.20.5\nncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.\nLast error:\nNET/IB : Got completion from peer 10.2.4.37<48122> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.2.4.9 remoteGids::ffff:10.2.4.37 hca mlx5_2".split("\n")), r)
    L += ["srun: error: %s: task %d: Exited with exit code 1" % (c.host, r), "srun: Job step aborted: Waiting up to 32 seconds for job step to finish."]
    return L, 1, "NCCL ncclRemoteError wording (nccl src/include/nccl.h.in / ProcessGroupNCCL.cpp) e.g. https://github.com/NVIDIA/nccl/issues/1609 ; IB status=12 vendor err 129 lines (net_ib.cc)", False


@sc("nccl")
def c10d_store_reset(c):
    c.style = "torchrun"; c.nranks = 16
    L = ["%s torch/distributed/run.py:793] " % c.glog("W"), "%s torch/distributed/run.py:793] *****************************************" % c.glog("W"),
         "%s torch/distributed/run.py:793] Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your system being overloaded, please further tune the variable for optimal performance in your application as needed. " % c.glog("W"),
         "%s torch/distributed/run.py:793] *****************************************" % c.glog("W")] + preamble(c) + progress(c)
    L += ["[rank3]: Traceback (most recent call last):", "[rank3]:   File \"/workspace/train.py\", line 177, in <module>", "[rank3]:     dist.barrier()",
          "[rank3]:   File \"%s/torch/distributed/distributed_c10d.py\", line 4159, in barrier" % c.py, "[rank3]:     work = default_pg.barrier(opts=opts)",
          "[rank3]: torch.distributed.DistNetworkError: [3] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Connection reset by peer",
          "[rank3]: Exception raised from recvBytes at ../torch/csrc/distributed/c10d/Utils.hpp:672 (most recent call first):"]
    L += torchrun_teardown(c, "train.py", 3, 1)
    return L, 1, "torch c10d ProcessGroupNCCL.cpp broadcastUniqueNCCLID 'store->get('0') got error: Connection reset by peer' (https://github.com/pytorch/pytorch/issues/ with DistNetworkError)", False


@sc("nccl")
def nccl_unhandled_system(c):
    c.style = "mpirun"; c.nranks = 8
    L = preamble(c) + progress(c, "mega")
    r = c.r.randint(0, 7)
    L += ranked(c, ["%s:%d:%d [%d] misc/socket.cc:484 NCCL WARN socketStartConnect: Connect to 10.0.3.%d<%d> failed : Software caused connection abort" % (c.host, c.pid, c.pid + 4, r, c.r.randint(2, 99), c.r.randint(30000, 60000)),
                    "%s:%d:%d [%d] NCCL INFO misc/socket.cc:565 -> 2" % (c.host, c.pid, c.pid + 4, r),
                    "%s:%d:%d [%d] NCCL INFO transport/net_socket.cc:339 -> 2" % (c.host, c.pid, c.pid + 4, r)], r)
    L += ranked(c, tb(c, [("pretrain_gpt.py", 241, "<module>", "pretrain(train_valid_test_datasets_provider,"),
                          ("%s/torch/distributed/distributed_c10d.py" % c.py, 2050, "all_reduce", "work = group.allreduce([tensor], opts)")],
                      "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1691, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3"), r)
    L += ["--------------------------------------------------------------------------", "Primary job  terminated normally, but 1 process returned", "a non-zero exit code. Per user-direction, the job has been aborted.",
          "--------------------------------------------------------------------------", "--------------------------------------------------------------------------",
          "mpirun detected that one or more processes exited with non-zero status, thus causing", "the job to be terminated. The first process to do so was:", "",
          "  Process name: [[%d,1],%d]" % (c.r.randint(10000, 60000), r), "  Exit code:    1", "--------------------------------------------------------------------------"]
    return L, 1, "NCCL 'unhandled system error' + socketStartConnect WARN (nccl src/misc/socket.cc); Open MPI 'mpirun detected that one or more processes exited with non-zero status' help text", False


@sc("nccl")
def nccl_accelerate_timeout_eval(c):
    c.style = "torchrun"; c.nranks = 4
    L = preamble(c) + progress(c)
    L += ["[rank1]:[E%02d%02d %02d:%02d:%02d.%06d ProcessGroupNCCL.cpp:616] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=_ALLGATHER_BASE, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 600041 milliseconds before timing out." % (c.mon, c.day, c.h, c.m, c.s, 1234, 11, 2048, 8192)]
    L += ["[rank2]:[E%02d%02d %02d:%02d:%02d.%06d ProcessGroupNCCL.cpp:616] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=_ALLGATHER_BASE, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 600052 milliseconds before timing out." % (c.mon, c.day, c.h, c.m, c.s, 5678, 11, 2048, 8192)]
    L += ["[rank1]:[E%02d%02d %02d:%02d:%02d ProcessGroupNCCL.cpp:1834] [PG ID 0 PG GUID 0(default_pg) Rank 1] Timeout at NCCL work: 11, last enqueued NCCL work: 11, last completed NCCL work: 10." % (c.mon, c.day, c.h, c.m, c.s)]
    L += ["[rank1]:[F%02d%02d %02d:%02d:%02d.%06d ProcessGroupNCCL.cpp:1575] [PG ID 0 PG GUID 0(default_pg) Rank 1] [PG ID 0 PG GUID 0(default_pg) Rank 1] Terminating the process after attempting to dump debug info, due to collective timeout or exception." % (c.mon, c.day, c.h, c.m, c.s, 1)]
    L += ["%s torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM" % (c.glog("W"), c.pid)]
    L += ["Traceback (most recent call last):", '  File "/usr/local/bin/accelerate", line 8, in <module>', "    sys.exit(main())",
          '  File "%s/accelerate/commands/launch.py" , line 1163, in launch_command' % c.py, "    multi_gpu_launcher(args)",
          "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ", "============================================================", "train_sft.py FAILED",
          "------------------------------------------------------------", "Root Cause (first observed failure):", "[0]:", "  rank      : 1 (local_rank: 1)",
          "  exitcode  : -6 (pid: %d)" % (c.pid + 1), "  error_file: <N/A>", "  traceback : Signal 6 (SIGABRT) received by PID %d" % (c.pid + 1), "============================================================"]
    return L, 1, P_WD + "; https://github.com/XPixelGroup/BasicSR/issues/737 (PG ID/GUID format); accelerate launch multi_gpu_launcher", False


# ---------------- cuda_runtime
P_IMA = "c10/cuda/CUDAException / c10_cuda_check 'CUDA error: an illegal memory access was encountered' + CUDA_LAUNCH_BLOCKING hint (pytorch c10/cuda/CUDAFunctions/CUDAException.cpp); https://github.com/vllm-project/vllm/issues/5901"


@sc("cuda_runtime")
def ima_triton_kernel(c):
    L = preamble(c) + progress(c)
    L += tb(c, trainer_frames(c) + [("/workspace/kernels/fused_ce.py", 212, "forward", "_cross_entropy_fwd[grid](logits, loss, lse, labels, n_cols, BLOCK_SIZE=BLOCK)"),
                                   ("%s/triton/runtime/jit.py" % c.py, 345, "<lambda>", "return lambda *args, **kwargs: self.run(grid=grid, warmup=False, *args, **kwargs)")],
            ["RuntimeError: CUDA error: an illegal memory access was encountered"] + CUDA_TAIL())
    if c.r.random() < 0.5:
        L += ["terminate called after throwing an instance of 'c10::Error'", "  what():  CUDA error: an illegal memory access was encountered",
              "Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):",
              "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f%x in %s/torch/lib/libc10.so)" % (c.r.getrandbits(36), c.py)]
        return L, -6, P_IMA + "; custom Triton kernel frames", False
    return L, 1, P_IMA + "; custom Triton kernel frames", False


@sc("cuda_runtime")
def device_assert_vocab(c):
    c.style = "torchrun"; c.nranks = c.r.choice([2, 4, 8])
    L = preamble(c) + ["Special tokens have been added in the vocabulary, make sure the associated word embeddings are fine-tuned or trained."] + progress(c, n=c.r.randint(1, 6))
    r = c.r.randint(0, c.nranks - 1)
    L += ranked(c, ["../aten/src/ATen/native/cuda/Indexing.cu:1236: indexSelectSmallIndex: block: [%d,0,0], thread: [%d,0,0] Assertion `srcIndex < srcSelectDimSize` failed." % (c.r.randint(0, 60), t) for t in range(c.r.randint(3, 30))], r)
    L += ranked(c, tb(c, trainer_frames(c) + [("%s/torch/nn/modules/sparse.py" % c.py, 190, "forward", "return F.embedding(")],
                      ["RuntimeError: CUDA error: device-side assert triggered"] + CUDA_TAIL()), r)
    L += torchrun_teardown(c, "train_sft.py", r, 1)
    return L, 1, "ATen Indexing.cu indexSelectSmallIndex assertion; 'CUDA error: device-side assert triggered' (c10/cuda/CUDAException.cpp); resize_token_embeddings forgotten after add_special_tokens", False


@sc("cuda_runtime")
def cublas_exec_failed(c):
    L = preamble(c) + progress(c)
    L += tb(c, trainer_frames(c) + [("%s/peft/tuners/lora/bnb.py" % c.py, 467, "forward", "result = self.base_layer(x, *args, **kwargs)"),
                                   ("%s/torch/nn/modules/linear.py" % c.py, 125, "forward", "return F.linear(input, self.weight, self.bias)")],
            "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, compute_type, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`")
    return L, 1, "aten/src/ATen/cuda/CUDABlas.cpp CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx(...)` wording (e.g. https://github.com/huggingface/peft/issues reports)", False


@sc("cuda_runtime")
def no_kernel_image(c):
    c.gpu, c.driver, c.mem = "Tesla V100-SXM2-32GB", "470.182.03", 32768
    L = preamble(c) + hf_load(c)
    L += tb(c, [("/workspace/serve.py", 44, "<module>", "out = model.generate(**inputs, max_new_tokens=256)"),
                ("%s/bitsandbytes/functional.py" % c.py, 1170, "dequantize_4bit", "lib.cdequantize_blockwise_bf16_nf4(")],
            ["RuntimeError: CUDA error: no kernel image is available for execution on the device"] + CUDA_TAIL())
    return L, 1, "CUDA 'no kernel image is available for execution on the device' (cudaErrorNoKernelImageForDevice via c10_cuda_check); bitsandbytes/functional.py dequantize_4bit", False


@sc("cuda_runtime")
def vllm_ima_engine_dead(c):
    L = vllm_start(c, 2) + ["INFO %s [metrics.py:455] Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Swapped: 0 reqs, Pending: %d reqs, GPU KV cache usage: %.1f%%, CPU KV cache usage: 0.0%%." % (c.vts(), c.r.uniform(100, 3000), c.r.uniform(100, 3000), c.r.randint(1, 60), c.r.randint(0, 9), c.r.uniform(3, 90)) for _ in range(c.r.randint(10, 80))]
    L += ["ERROR %s [async_llm_engine.py:57] Engine background task failed" % c.vts()]
    e = tb(c, [("%s/vllm/engine/async_llm_engine.py" % c.py, 47, "_log_task_completion", "return_value = task.result()"),
               ("%s/vllm/worker/model_runner_base.py" % c.py, 116, "_wrapper", "return func(*args, **kwargs)"),
               ("%s/vllm/worker/model_runner.py" % c.py, 1703, "execute_model", "output: SamplerOutput = self.model.sample(")],
           ["RuntimeError: CUDA error: an illegal memory access was encountered"] + CUDA_TAIL())
    L += ["ERROR %s [async_llm_engine.py:57] %s" % (c.vts(), x) for x in e]
    L += ["", "The above exception was the direct cause of the following exception:", "", "Traceback (most recent call last):",
          '  File "%s/vllm/engine/async_llm_engine.py", line 1029, in generate' % c.py, "    async for output in await self.add_request(",
          "vllm.engine.async_llm_engine.AsyncEngineDeadError: Background loop has errored already.",
          'INFO:     10.0.0.%d:51234 - "POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error' % c.r.randint(2, 200),
          "INFO %s [multiproc_worker_utils.py:124] Killing local vLLM worker processes" % c.vts(), "INFO:     Shutting down", "INFO:     Finished server process [%d]" % c.pid]
    return L, 1, P_IMA + "; https://github.com/vllm-project/vllm/issues/5060 (AsyncEngineDeadError: Background loop has errored already)", False


@sc("cuda_runtime")
def ima_flash_varlen_ranks(c):
    c.style = "srun"; c.nranks = 8
    L = preamble(c) + progress(c)
    r = c.r.randint(0, 7)
    L += ranked(c, tb(c, trainer_frames(c) + [("%s/flash_attn/flash_attn_interface.py" % c.py, 170, "_flash_attn_varlen_forward", "out, softmax_lse, S_dmask, rng_state = flash_attn_gpu.varlen_fwd(")],
                      ["RuntimeError: CUDA error: an illegal memory access was encountered"] + CUDA_TAIL()), r)
    L += other_ranks_nccl_after(c, r)
    L += ["srun: error: %s: task %d: Exited with exit code 1" % (c.host, r), "srun: error: %s: tasks 0-%d,%d-7: Aborted (core dumped)" % (c.host, max(0, r - 1), r + 1)]
    return L, 1, P_IMA + "; flash_attn/flash_attn_interface.py varlen_fwd frame (https://github.com/facebookresearch/locate-3d/issues/22)", False


@sc("cuda_runtime")
def cudnn_status(c):
    L = preamble(c) + progress(c)
    L += tb(c, trainer_frames(c) + [("%s/torch/nn/modules/conv.py" % c.py, 454, "_conv_forward", "return F.conv2d(input, weight, bias, self.stride,")],
            "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED")
    return L, 1, "aten cuDNN 'cuDNN error: CUDNN_STATUS_EXECUTION_FAILED' (aten/src/ATen/cudnn/Exceptions.h), vision tower of a VLM fine-tune", False


# ---------------- ram_oom
@sc("ram_oom")
def cpu_alloc_offload(c):
    L = preamble(c, "ds") + progress(c, "ds", n=3)
    L += tb(c, [("/workspace/train.py", 150, "<module>", "engine, opt, _, _ = deepspeed.initialize(model=model, config=ds_cfg)"),
                ("%s/deepspeed/runtime/zero/stage3.py" % c.py, 700, "_create_fp32_partitions", "self.fp32_partitioned_groups_flat.append(fp32_tensor.float())")],
            "RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate %d bytes. Error code 12 (Cannot allocate memory)" % c.r.randint(10 ** 10, 9 * 10 ** 10))
    return L, 1, "c10/core/impl/alloc_cpu.cpp 'DefaultCPUAllocator: can't allocate memory ... Error code 12 (Cannot allocate memory)' (https://github.com/pytorch/pytorch/issues reports); deepspeed ZeRO-3 offload", False


@sc("ram_oom")
def datasets_memoryerror(c):
    L = preamble(c, "plain") + ["Map (num_proc=%d):  %d%%|%s| %d/%d [00:%02d<%02d:00, %d examples/s]" % (8, p, "█" * (p // 10), p * 1000, 100000, p // 2, 9, 3000) for p in range(0, 70, 7)]
    L += tb(c, [("/workspace/prepare.py", 88, "<module>", "ds = ds.map(tokenize, batched=True, num_proc=8)"),
                ("%s/datasets/arrow_dataset.py" % c.py, 3035, "map", "for rank, done, content in iflatmap_unordered("),
                ("%s/datasets/table.py" % c.py, 1830, "concat_tables", "table = pa.concat_tables(tables)"),
                ("pyarrow/table.pxi", 5245, "pyarrow.lib.concat_tables", ""), ("pyarrow/error.pxi", 91, "pyarrow.lib.check_status", "")],
            "MemoryError")
    return L, 1, "datasets arrow_dataset.map / pyarrow check_status MemoryError (https://github.com/huggingface/datasets/issues reports on map OOM)", False


@sc("ram_oom")
def numpy_unable_alloc_packing(c):
    L = preamble(c, "plain") + ["Tokenizing: %d docs" % c.r.randint(10 ** 6, 10 ** 8)]
    L += tb(c, [("/workspace/tools/preprocess_data.py", 301, "main", "arr = np.concatenate(chunks)"), ("<__array_function__ internals>", 200, "concatenate", "")],
            "numpy.core._exceptions._ArrayMemoryError: Unable to allocate %.1f GiB for an array with shape (%d,) and data type int32" % (c.r.uniform(40, 400), c.r.randint(10 ** 10, 10 ** 11)))
    return L, 1, "numpy _ArrayMemoryError 'Unable to allocate ... for an array with shape' (numpy/core/src/multiarray); captured equivalent in this set", False


# ---------------- segfault
@sc("segfault")
def dataloader_segv(c):
    L = preamble(c) + progress(c)
    L += ["ERROR: Unexpected segmentation fault encountered in worker."]
    L += tb(c, trainer_frames(c) + [("%s/torch/utils/data/dataloader.py" % c.py, 1133, "_try_get_data", "data = self._data_queue.get(timeout=timeout)"),
                                   ("%s/torch/utils/data/_utils/signal_handling.py" % c.py, 67, "handler", "_error_if_any_worker_fails()")],
            ["RuntimeError: DataLoader worker (pid %d) is killed by signal: Segmentation fault. " % (c.pid + 77)])
    return L, 1, "torch/utils/data/_utils/signal_handling.py + DataLoader 'is killed by signal: Segmentation fault.' (torch/csrc/DataLoader.cpp 'Unexpected segmentation fault encountered in worker.')", False


@sc("segfault")
def tokenizers_fork_segv(c):
    L = preamble(c, "plain") + ["huggingface/tokenizers: The current process just got forked, after parallelism has already been used. Disabling parallelism to avoid deadlocks..."]
    L += ["Fatal Python error: Segmentation fault", "", "Thread 0x%016x (most recent call first):" % c.r.getrandbits(48),
          '  File "%s/tokenizers/implementations/base_tokenizer.py", line 272 in encode_batch' % c.py,
          '  File "%s/transformers/tokenization_utils_fast.py", line 528 in _batch_encode_plus' % c.py,
          '  File "/workspace/prepare.py", line 61 in tok', "", "Extension modules: numpy.core._multiarray_umath, torch._C, tokenizers, pyarrow.lib, (total: 41)"]
    L += ["/var/spool/slurmd/job%d/slurm_script: line 24: %d Segmentation fault      (core dumped) python prepare.py --num-proc 32" % (c.jobid, c.pid)]
    return L, 139, "CPython faulthandler 'Fatal Python error: Segmentation fault' format; bash 'Segmentation fault      (core dumped)' job message", False


@sc("segfault")
def torchrun_child_sigsegv(c):
    c.style = "torchrun"; c.nranks = 8
    L = preamble(c) + progress(c)
    r = c.r.randint(0, 7)
    L += other_ranks_nccl_after(c, r)[:2]
    L += torchrun_teardown(c, "train_qlora.py", r, -11, sig="SIGSEGV")
    return L, 1, "torch elastic ChildFailedError 'Signal 11 (SIGSEGV) received by PID' (torch/distributed/elastic/multiprocessing/errors)", False


@sc("segfault")
def bnb_segv_plain(c):
    L = preamble(c) + hf_load(c) + warnings_block(c, 2)
    L += ["Caught signal 11 (Segmentation fault: address not mapped to object at address 0x%x)" % c.r.getrandbits(40),
          "==== backtrace (tid: %d) ====" % c.pid, " 0 0x0000000000042520 __sigaction()  ???:0", " 1 0x00000000000b2f1a cdequantize_blockwise_fp16_nf4()  ???:0", "=================================",
          "Segmentation fault (core dumped)"]
    return L, 139, "UCX-style 'Caught signal 11 (Segmentation fault: address not mapped to object at address' (https://github.com/NVIDIA/Megatron-LM/issues/516 signal 7 variant)", False


# ---------------- file_not_found
@sc("file_not_found")
def hf_no_config(c):
    L = preamble(c, "plain")
    L += tb(c, [("/workspace/train_sft.py", 97, "<module>", "model = AutoModelForCausalLM.from_pretrained(args.model_path, torch_dtype=torch.bfloat16)"),
                ("%s/transformers/utils/hub.py" % c.py, 456, "cached_file", "raise EnvironmentError(")],
            "OSError: /checkpoints/%s/checkpoint-%d does not appear to have a file named config.json. Checkout 'https://huggingface.co//checkpoints/%s/checkpoint-%d/tree/None' for available files." % (c.run, 500, c.run, 500))
    return L, 1, "transformers/utils/hub.py cached_file 'does not appear to have a file named config.json. Checkout' wording", False


@sc("file_not_found")
def resume_ckpt_missing(c):
    c.style = "torchrun"; c.nranks = 4
    L = preamble(c)
    for r in range(4):
        L += ranked(c, tb(c, [("/workspace/train_sft.py", 402, "<module>", "trainer.train(resume_from_checkpoint=args.resume)"),
                              ("%s/transformers/trainer.py" % c.py, 2120, "train", 'raise ValueError(f"No valid checkpoint found in output directory ({args.output_dir})")')],
                          "ValueError: Can't find a valid checkpoint at /checkpoints/%s/checkpoint-3000" % c.run), r)
    L += torchrun_teardown(c, "train_sft.py", 0, 1)
    return L, 1, "transformers/trainer.py 'Can't find a valid checkpoint at' (raised as ValueError; label by cause: missing path)", False


@sc("file_not_found")
def datasets_data_files(c):
    L = preamble(c, "plain")
    L += tb(c, [("/workspace/train_dpo.py", 73, "<module>", 'ds = load_dataset("json", data_files=args.train_files, split="train", streaming=True)'),
                ("%s/datasets/data_files.py" % c.py, 411, "resolve_pattern", "raise FileNotFoundError(error_msg)")],
            "FileNotFoundError: Unable to find '/data/prefs/ultrafeedback_binarized/train-*.jsonl'")
    return L, 1, "datasets/data_files.py resolve_pattern \"Unable to find '...'\" wording", False


@sc("file_not_found")
def megatron_bin_missing(c):
    c.style = "srun"; c.nranks = 8
    L = ["> building train, validation, and test datasets ...", " > datasets target sizes (minimum size):", "    train:      %d" % c.r.randint(10 ** 6, 10 ** 8), "    validation: 10240", "    test:       10240"]
    for r in range(8):
        L += ranked(c, tb(c, [("/workspace/Megatron-LM/megatron/core/datasets/indexed_dataset.py", 500, "__init__", "self.bin_reader = _MMapBinReader(self.bin_path)"),
                              ("/workspace/Megatron-LM/megatron/core/datasets/indexed_dataset.py", 372, "__init__", 'self._bin_buffer_mmap = numpy.memmap(bin_path, mode="r", order="C")')],
                          "FileNotFoundError: [Errno 2] No such file or directory: '/lustre/data/redpajama/arxiv_text_document.bin'"), r)
    L += ["srun: error: %s: tasks 0-7: Exited with exit code 1" % c.host]
    return L, 1, "Megatron-LM megatron/core/datasets/indexed_dataset.py memmap frames; FileNotFoundError [Errno 2] wording", False


# ---------------- permission
@sc("permission")
def hf_cache_perm(c):
    L = preamble(c, "plain")
    L += tb(c, [("/workspace/train_sft.py", 81, "<module>", "tok = AutoTokenizer.from_pretrained(MODEL)"),
                ("%s/huggingface_hub/file_download.py" % c.py, 1396, "_hf_hub_download_to_cache_dir", "os.makedirs(os.path.dirname(blob_path), exist_ok=True)"),
                ("<frozen os>", 225, "makedirs", "")],
            "PermissionError: [Errno 13] Permission denied: '/shared/hf_cache/hub/models--%s'" % c.model.replace("/", "--"))
    return L, 1, "huggingface_hub/file_download.py makedirs frame; PermissionError [Errno 13] wording", False


@sc("permission")
def readonly_fs_ckpt(c):
    c.style = "torchrun"; c.nranks = 8
    L = preamble(c) + progress(c)
    L += ["Saving model checkpoint to /checkpoints/%s/checkpoint-%d" % (c.run, 1000)]
    L += ranked(c, tb(c, trainer_frames(c) + [("%s/transformers/trainer.py" % c.py, 3080, "_save_checkpoint", "self.save_model(output_dir, _internal_call=True)"),
                                             ("<frozen os>", 225, "makedirs", "")],
                      "OSError: [Errno 30] Read-only file system: '/checkpoints/%s/checkpoint-1000'" % c.run), 0)
    L += other_ranks_nccl_after(c, 0)[:4]
    L += torchrun_teardown(c, "train_sft.py", 0, 1)
    return L, 1, "OSError [Errno 30] Read-only file system (EROFS) on checkpoint save; transformers trainer._save_checkpoint", False


@sc("permission")
def wandb_dir_perm(c):
    L = preamble(c, "plain")
    L += ["wandb: ERROR Failed to create directory /project/wandb: [Errno 13] Permission denied: '/project/wandb'" if c.r.random() < 0.5 else "wandb: WARNING Path /project/wandb/ wasn't writable, using system temp directory."]
    L += tb(c, [("/workspace/train.py", 60, "<module>", "os.makedirs(args.output_dir, exist_ok=True)"), ("<frozen os>", 225, "makedirs", "")],
            "PermissionError: [Errno 13] Permission denied: '/project/outputs/%s'" % c.run)
    return L, 1, "wandb 'Path ... wasn't writable, using system temp directory' (wandb sdk); PermissionError [Errno 13]", False


# ---------------- missing_module
@sc("missing_module")
def flash_undefined_symbol(c):
    L = preamble(c, "plain")
    L += tb(c, [("/workspace/train_sft.py", 12, "<module>", "from flash_attn import flash_attn_func"),
                ("%s/flash_attn/__init__.py" % c.py, 3, "<module>", "from flash_attn.flash_attn_interface import ("),
                ("%s/flash_attn/flash_attn_interface.py" % c.py, 10, "<module>", "import flash_attn_2_cuda as flash_attn_cuda")],
            "ImportError: %s/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi" % c.py)
    return L, 1, "flash_attn_interface.py 'import flash_attn_2_cuda' + undefined symbol ImportError (https://github.com/Dao-AILab/flash-attention/issues/1506 and many)", False


@sc("missing_module")
def bnb_cuda_setup(c):
    L = preamble(c, "plain")
    L += ["", "===================================BUG REPORT===================================", "Welcome to bitsandbytes. For bug reports, please run", "", "python -m bitsandbytes", "",
          " and submit this information together with your error trace to: https://github.com/TimDettmers/bitsandbytes/issues",
          "================================================================================", "bin %s/bitsandbytes/libbitsandbytes_cpu.so" % c.py,
          "CUDA_SETUP: WARNING! libcudart.so not found in any environmental path. Searching in backup paths...",
          "CUDA SETUP: CUDA runtime path found: /usr/local/cuda/lib64/libcudart.so", "CUDA SETUP: Highest compute capability among GPUs detected: 8.0",
          "CUDA SETUP: Detected CUDA version 122", "CUDA SETUP: Required library version not found: libbitsandbytes_cuda122.so. Maybe you need to compile it from source?",
          "CUDA SETUP: Defaulting to libbitsandbytes_cpu.so..."]
    L += tb(c, [("/workspace/train_qlora.py", 9, "<module>", "import bitsandbytes as bnb"), ("%s/bitsandbytes/cuda_setup/main.py" % c.py, 166, "<module>", "raise RuntimeError('''")],
            ["RuntimeError: ", "        CUDA Setup failed despite GPU being available. Please run the following command to get more information:", "", "        python -m bitsandbytes", "",
             "        Inspect the output of the command and see if you can locate CUDA libraries. You might need to add them",
             "        to your LD_LIBRARY_PATH. If you suspect a bug, please take the information from python -m bitsandbytes",
             "        and open an issue at: https://github.com/TimDettmers/bitsandbytes/issues"])
    return L, 1, "bitsandbytes cuda_setup/main.py (https://github.com/bitsandbytes-foundation/bitsandbytes/issues/572, /492, /487): libbitsandbytes_cuda122.so not found -> CUDA Setup failed (missing native library)", False


@sc("missing_module")
def no_module_peft_ranks(c):
    c.style = c.r.choice(["torchrun", "srun"]); c.nranks = 4
    L = preamble(c, "plain")
    for r in range(4):
        L += ranked(c, tb(c, [("/workspace/train_dpo.py", 14, "<module>", "from trl import DPOConfig, DPOTrainer"),
                              ("%s/trl/__init__.py" % c.py, 5, "<module>", "from .import_utils import is_peft_available")],
                          "ModuleNotFoundError: No module named '%s'" % c.r.choice(["peft", "trl.trainer.dpo_config", "liger_kernel"])), r)
    if c.style == "torchrun":
        L += torchrun_teardown(c, "train_dpo.py", 0, 1, others_term=False)
    else:
        L += ["srun: error: %s: tasks 0-3: Exited with exit code 1" % c.host]
    return L, 1, "CPython ModuleNotFoundError wording; TRL import chain", False


@sc("missing_module")
def libcudart_missing(c):
    L = preamble(c, "plain")
    L += tb(c, [("/workspace/serve.py", 3, "<module>", "import vllm"), ("%s/vllm/_custom_ops.py" % c.py, 8, "<module>", "import vllm._C")],
            "ImportError: libcudart.so.12: cannot open shared object file: No such file or directory")
    return L, 1, "dlopen 'cannot open shared object file: No such file or directory' for libcudart.so.12 (vllm/_custom_ops.py import vllm._C)", False


@sc("missing_module")
def bnb_requires_version(c):
    L = preamble(c) + warnings_block(c, 2)
    L += tb(c, [("/workspace/train_qlora.py", 66, "<module>", "model = AutoModelForCausalLM.from_pretrained(MODEL, quantization_config=bnb_cfg, device_map='auto')"),
                ("%s/transformers/quantizers/quantizer_bnb_4bit.py" % c.py, 78, "validate_environment", "raise ImportError(")],
            "ImportError: Using `bitsandbytes` 4-bit quantization requires the latest version of bitsandbytes: `pip install -U bitsandbytes`")
    return L, 1, "transformers/quantizers/quantizer_bnb_4bit.py validate_environment ImportError wording", False


# ---------------- div_zero
@sc("div_zero")
def div_zero_throughput(c):
    L = preamble(c) + progress(c, n=c.r.randint(5, 50))
    L += tb(c, [("/workspace/train.py", 333, "<module>", "log_metrics(step, t0)"), ("/workspace/utils/metrics.py", 41, "log_metrics", "tok_per_s = tokens_seen / (time.time() - t0) / world_size // dp_group_size")],
            "ZeroDivisionError: float division by zero")
    return L, 1, "CPython ZeroDivisionError 'float division by zero' wording", False


@sc("div_zero")
def div_zero_grad_accum(c):
    c.style = "torchrun"; c.nranks = c.r.choice([8, 16])
    L = preamble(c)
    L += ranked(c, tb(c, [("/workspace/train.py", 120, "<module>", "grad_accum = global_batch // (micro_batch * world_size)"), ("/workspace/train.py", 121, "<module>", "steps_per_epoch = len(loader) // grad_accum")],
                      "ZeroDivisionError: integer division or modulo by zero"), 0)
    L += torchrun_teardown(c, "train.py", 0, 1)
    return L, 1, "CPython 'integer division or modulo by zero'", False


@sc("div_zero")
def div_zero_eval_empty(c):
    L = preamble(c) + progress(c)
    L += ["***** Running Evaluation *****", "  Num examples = 0", "  Batch size = 8"]
    L += tb(c, [("/workspace/eval_ppl.py", 88, "evaluate", "ppl = math.exp(total_loss / n_tokens)")], "ZeroDivisionError: division by zero")
    return L, 1, "CPython ZeroDivisionError 'division by zero'", False


# ---------------- device_mismatch
@sc("device_mismatch")
def dm_generate_cpu_inputs(c):
    L = preamble(c) + hf_load(c)
    L += tb(c, [("/workspace/eval_gen.py", 57, "<module>", "out = model.generate(input_ids=batch['input_ids'], max_new_tokens=512)"),
                ("%s/torch/nn/functional.py" % c.py, 2264, "embedding", "return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)")],
            "RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument index in method wrapper_CUDA__index_select)")
    return L, 1, "ATen 'Expected all tensors to be on the same device, but found at least two devices' (https://github.com/huggingface/accelerate/issues/2829)", False


@sc("device_mismatch")
def dm_meta_offload(c):
    L = preamble(c) + ["Some parameters are on the meta device because they were offloaded to the cpu."] + hf_load(c)
    L += tb(c, [("/workspace/merge_lora.py", 40, "<module>", "merged = model.merge_and_unload()"),
                ("%s/peft/tuners/lora/layer.py" % c.py, 470, "merge", "base_layer.weight.data += delta_weight"), ],
            "NotImplementedError: Cannot copy out of meta tensor; no data!")
    return L, 1, "transformers 'Some parameters are on the meta device because they were offloaded to the cpu.'; torch 'Cannot copy out of meta tensor; no data!' (https://github.com/vladmandic/sdnext/issues/3080)", False


@sc("device_mismatch")
def dm_tensor_meta_expected(c):
    L = preamble(c) + hf_load(c) + progress(c, n=c.r.randint(1, 5))
    L += tb(c, trainer_frames(c) + [("%s/accelerate/hooks.py" % c.py, 170, "new_forward", "output = module._old_forward(*args, **kwargs)")],
            "RuntimeError: Tensor on device meta is not on the expected device cuda:0!")
    return L, 1, "torch _prims_common check_same_device 'Tensor on device meta is not on the expected device' (https://github.com/huggingface/accelerate/issues/3542)", False


@sc("device_mismatch")
def dm_mps(c):
    c.gpu, c.driver = "Apple M2 Max (mps)", "none"
    L = ["Using device: mps"] + warnings_block(c, 1) + progress(c, n=c.r.randint(2, 10))
    L += tb(c, [("/Users/dev/llm/train_lora.py", 130, "<module>", "loss = model(**batch).loss"), ("%s/torch/nn/modules/linear.py" % c.py.replace("/usr/local/lib/python3.10/dist-packages", "/opt/homebrew/lib/python3.11/site-packages"), 125, "forward", "return F.linear(input, self.weight, self.bias)")],
            "RuntimeError: Tensor for argument weight is on cpu but expected on mps")
    return L, 1, "ATen checkDeviceType 'Tensor for argument weight is on cpu but expected on mps' wording", False


# ---------------- nan_loss
@sc("nan_loss")
def nan_megatron_exit(c):
    c.style = "srun"; c.nranks = 64
    n0 = c.r.randint(20, 60) * 10
    L = ["0: " + x for x in megatron_iters(c, 10, n0 + 200, 10, nan_from=n0)]
    L += ["0: Traceback (most recent call last):", '0:   File "/workspace/Megatron-LM/megatron/training/training.py", line 1027, in train', "0:     train_step(forward_step_func,",
          "0: AssertionError: Rank 0: found NaN in local grad norm in backward pass before data-parallel communication collective. Device: 0, node: %s" % c.host]
    L += ["srun: error: %s: task 0: Exited with exit code 1" % c.host]
    return L, 1, "Megatron-LM 'number of nan iterations' iteration line + 'found NaN in local grad norm in backward pass before data-parallel communication collective' (megatron/core/distributed/param_and_grad_buffer.py; https://github.com/Ascend/MindSpeed-Core-MS docs/faq/megatron070_grad_norm_nan.md)", False


@sc("nan_loss")
def nan_ds_min_scale(c):
    L = preamble(c, "ds")
    sc_ = 65536
    for i in range(16):
        L.append("[%s] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d" % (c.ts(), sc_, sc_ // 2)); sc_ //= 2
        L.append("\r %d%%|          | %d/2724 [%02d:%02d<86:19:20, 132.41s/it]" % (0, 300 + i, i, 10))
    L += tb(c, trainer_frames(c) + [("%s/deepspeed/runtime/fp16/loss_scaler.py" % c.py, 175, "update_scale", 'raise Exception(')],
            "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.")
    return L, 1, "deepspeed/runtime/fp16/loss_scaler.py (https://github.com/ymcui/Chinese-LLaMA-Alpaca/issues/534)", False


@sc("nan_loss")
def nan_hf_exit0(c):
    L = preamble(c) + progress(c, n=c.r.randint(150, 500), nan_from=c.r.randint(40, 120))
    L += ["", "", "Training completed. Do not forget to share your model on huggingface.co/models =)", "", "",
          "{'train_runtime': %.4f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %.3f, 'train_loss': nan, 'epoch': 1.0}" % (c.r.uniform(1000, 40000), c.r.uniform(1, 20), c.r.uniform(0.1, 2)),
          "Saving model checkpoint to /checkpoints/%s" % c.run] + wandb_teardown(c)
    return L, 0, "HF Trainer log dict / 'Training completed. Do not forget to share your model on huggingface.co/models =)' (transformers/trainer.py); train_loss nan to the end, exit 0", True


@sc("nan_loss")
def nan_fp16_grad_norm_exit0(c):
    c.style = "torchrun"; c.nranks = c.r.choice([2, 4])
    L = preamble(c) + progress(c, n=c.r.randint(100, 300), nan_from=c.r.randint(20, 90))
    L += ["Saving model checkpoint to /checkpoints/%s/checkpoint-final" % c.run, "{'train_runtime': 8123.1, 'train_loss': nan, 'epoch': 3.0}"]
    L += ["[rank%d]:[W%02d%02d ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the progress of another member of the process group. This constraint has always been present,  but this warning has only been added since PyTorch 2.4 (function operator())" % (r, c.mon, c.day) for r in range(c.nranks)]
    return L, 0, "HF Trainer 'grad_norm': nan log lines; ProcessGroupNCCL destroy_process_group warning (https://github.com/NVIDIA/nccl/issues/1410); fp16 divergence, exit 0", True


@sc("nan_loss")
def nan_nemo_lightning(c):
    L = preamble(c, "plain") + ["GPU available: True (cuda), used: True", "TPU available: False, using: 0 TPU cores", "HPU available: False, using: 0 HPUs",
                                "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]"]
    L += ["\rEpoch 0: : %d/%d [%02d:%02d<%02d:%02d, v_num=%s, reduced_train_loss=%s, global_step=%d.0, consumed_samples=%d.0, train_step_timing in s=%.2f]" % (s, 100000, s // 60, s % 60, 9, 0, c.run[-4:], "%.3f" % (3.2 - s / 1000.0) if s < 700 else "nan", s, s * 256, 1.1) for s in range(0, 900, 25)]
    L += tb(c, [("/opt/NeMo/examples/nlp/language_modeling/megatron_gpt_pretraining.py", 44, "main", "trainer.fit(model)"),
                ("%s/lightning/pytorch/callbacks/early_stopping.py" % c.py, 0 + 199, "_run_early_stopping_check", "should_stop, reason = self._evaluate_stopping_criteria(current)")],
            "RuntimeError: Monitored metric reduced_train_loss = nan is not finite. Previous best value was 2.531. Signaling Trainer to stop.")
    return L, 1, "lightning/pytorch/callbacks/early_stopping.py 'Monitored metric ... = nan is not finite' (check_finite); NeMo progress bar (https://github.com/pytorch/pytorch/issues/118369 excerpt)", False


@sc("nan_loss")
def nan_anomaly(c):
    L = preamble(c) + progress(c, n=c.r.randint(10, 60))
    L += ["%s/torch/autograd/graph.py:825: UserWarning: Error detected in SoftmaxBackward0. Traceback of forward call that caused the error:" % c.py,
          '  File "%s/transformers/models/llama/modeling_llama.py", line 345, in forward' % c.py, "    attn_weights = nn.functional.softmax(attn_weights, dim=-1, dtype=torch.float32).to(query_states.dtype)",
          " (Triggered internally at ../torch/csrc/autograd/python_anomaly_mode.cpp:111.)", "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass"]
    L += tb(c, trainer_frames(c) + [("%s/torch/autograd/__init__.py" % c.py, 347, "backward", "_engine_run_backward(")],
            "RuntimeError: Function 'SoftmaxBackward0' returned nan values in its 0th output.")
    return L, 1, "torch autograd anomaly mode 'Function 'SoftmaxBackward0' returned nan values in its 0th output.' (torch/csrc/autograd/engine.cpp)", False


# ---------------- oom_killer
@sc("oom_killer")
def slurm_oom_kill(c):
    c.style = "srun"
    L = preamble(c) + progress(c)
    L += ["slurmstepd: error: Detected 1 oom_kill event in StepId=%d.0. Some of the step tasks have been OOM Killed." % c.jobid,
          "srun: error: %s: task %d: Out Of Memory" % (c.host, c.r.randint(0, 7)), "srun: Terminating StepId=%d.0" % c.jobid]
    L += other_ranks_nccl_after(c, 0)[:2]
    return L, 137, "Slurm slurmstepd 'Detected 1 oom_kill event in StepId=... Some of the step tasks have been OOM Killed.' and srun 'task N: Out Of Memory' (src/slurmd/slurmstepd)", False


@sc("oom_killer")
def k8s_oomkilled(c):
    L = preamble(c) + progress(c)
    L += ["$ kubectl describe pod %s-worker-0" % c.run, "    State:          Terminated", "      Reason:       OOMKilled", "      Exit Code:    137",
          "      Started:      %s" % c.iso(), "    Last State:     Terminated", "    Restart Count:  0"]
    return L, 137, "Kubernetes pod status 'Reason: OOMKilled' / 'Exit Code: 137' (kubectl describe)", False


@sc("oom_killer")
def torchrun_sigkill_host(c):
    c.style = "torchrun"; c.nranks = 8
    L = preamble(c) + ["Loading checkpoint shards: 100%|██████████| 30/30 [04:11<00:00,  8.38s/it]"]
    L += ["[%.6f] Out of memory: Killed process %d (python3) total-vm:%dkB, anon-rss:%dkB, file-rss:0kB, shmem-rss:0kB, UID:0 pgtables:%dkB oom_score_adj:0" % (c.r.uniform(10000, 900000), c.pid + 3, c.r.randint(10 ** 8, 10 ** 9), c.r.randint(10 ** 8, 4 * 10 ** 8), c.r.randint(10 ** 5, 10 ** 6))]
    L += torchrun_teardown(c, "train_sft.py", 3, -9, sig="SIGKILL")
    return L, 1, "Linux kernel mm/oom_kill.c 'Out of memory: Killed process ... anon-rss' + torchrun 'Signal 9 (SIGKILL) received by PID' (full-precision 70B load on every rank)", False


@sc("oom_killer")
def bash_killed_datasets(c):
    L = preamble(c, "plain") + ["Map (num_proc=64):  %d%%|%s| %d/%d" % (p, "█" * (p // 10), p * 1000, 100000) for p in range(0, 60, 6)]
    L += ["/var/spool/slurmd/job%d/slurm_script: line 31: %d Killed                  python prepare_pretrain_data.py --num-proc 64" % (c.jobid, c.pid),
          "slurmstepd: error: Detected 3 oom_kill events in StepId=%d.batch. Some of the step tasks have been OOM Killed." % c.jobid]
    return L, 137, "bash 'Killed' job-control message + slurmstepd oom_kill event wording", False


@sc("oom_killer")
def dataloader_worker_killed(c):
    L = preamble(c) + progress(c)
    L += tb(c, trainer_frames(c) + [("%s/torch/utils/data/_utils/signal_handling.py" % c.py, 67, "handler", "_error_if_any_worker_fails()")],
            "RuntimeError: DataLoader worker (pid %d) is killed by signal: Killed. " % (c.pid + 12))
    L += ["", "The above exception was the direct cause of the following exception:", "",
          "Traceback (most recent call last):", '  File "/workspace/train_sft.py", line 299, in <module>', "    trainer.train()",
          "RuntimeError: DataLoader worker (pid(s) %d) exited unexpectedly" % (c.pid + 12)]
    L += ["[%.6f] Memory cgroup out of memory: Killed process %d (pt_data_worker) total-vm:%dkB, anon-rss:%dkB" % (c.r.uniform(1000, 90000), c.pid + 12, 40000000, 31000000)]
    return L, 1, "torch DataLoader 'is killed by signal: Killed.' + 'exited unexpectedly' chain; kernel 'Memory cgroup out of memory: Killed process'", False


# ---------------- traceback
@sc("traceback")
def tb_pad_token(c):
    L = preamble(c) + progress(c, n=1)
    L += tb(c, trainer_frames(c) + [("%s/transformers/tokenization_utils_base.py" % c.py, 2700, "_get_padding_truncation_strategies", "raise ValueError(")],
            "ValueError: Asking to pad but the tokenizer does not have a padding token. Please select a token to use as `pad_token` `(tokenizer.pad_token = tokenizer.eos_token e.g.)` or add a new pad token via `tokenizer.add_special_tokens({'pad_token': '[PAD]'})`.")
    return L, 1, "transformers/tokenization_utils_base.py padding error wording", False


@sc("traceback")
def tb_sft_kwarg(c):
    L = preamble(c, "plain")
    L += tb(c, [("/workspace/train_sft.py", 150, "<module>", "trainer = SFTTrainer(model=model, tokenizer=tok, train_dataset=ds, args=cfg)")],
            "TypeError: SFTTrainer.__init__() got an unexpected keyword argument 'tokenizer'")
    return L, 1, "TRL >=0.12 SFTTrainer signature change (tokenizer -> processing_class); CPython TypeError wording", False


@sc("traceback")
def tb_vllm_kv(c):
    L = vllm_start(c) + ["INFO %s [worker.py:267] Memory profiling takes 4.12 seconds" % c.vts(), "INFO %s [executor_base.py:111] # cuda blocks: %d, # CPU blocks: 2048" % (c.vts(), 458)]
    mx = c.r.choice([32768, 131072, 163840]); kv = c.r.randint(5000, 30000)
    L += ["[rank0]: " + x for x in tb(c, [("%s/vllm/worker/worker.py" % c.py, 565, "raise_if_cache_size_invalid", "raise ValueError(")],
                                     "ValueError: The model's max seq len (%d) is larger than the maximum number of tokens that can be stored in KV cache (%d). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing the engine." % (mx, kv))]
    L += ["INFO %s [multiproc_worker_utils.py:124] Killing local vLLM worker processes" % c.vts(),
          "/usr/lib/python3.12/multiprocessing/resource_tracker.py:254: UserWarning: resource_tracker: There appear to be 1 leaked semaphore objects to clean up at shutdown", "  warnings.warn('resource_tracker: There appear to be %d '"]
    return L, 1, "vllm/worker/worker.py raise_if_cache_size_invalid (https://github.com/vllm-project/vllm/issues/2418, /14452); config error, not a GPU OOM", False


@sc("traceback")
def tb_keyerror_chosen(c):
    L = preamble(c)
    L += ["Map:  %d%%|%s| %d/%d" % (p, "█" * (p // 10), p * 100, 62000) for p in range(0, 20, 4)]
    L += tb(c, [("/workspace/train_dpo.py", 120, "<module>", "train_ds = train_ds.map(apply_chat_template, fn_kwargs={'tokenizer': tok})"),
                ("%s/datasets/arrow_dataset.py" % c.py, 3552, "apply_function_on_filtered_inputs", "processed_inputs = function(*fn_args, *additional_args, **fn_kwargs)"),
                ("/workspace/train_dpo.py", 64, "apply_chat_template", 'prompt_messages = example["chosen"][:-1]')], "KeyError: 'chosen'")
    return L, 1, "datasets arrow_dataset.py map frame; KeyError", False


@sc("traceback")
def tb_index_error_chained(c):
    L = preamble(c) + progress(c, n=c.r.randint(5, 40))
    L += tb(c, trainer_frames(c) + [("/workspace/data/packed.py", 77, "__getitem__", "doc = self.index[i]")], "IndexError: list index out of range")
    L += ["", "During handling of the above exception, another exception occurred:", ""]
    L += tb(c, [("/workspace/train_sft.py", 305, "<module>", "trainer.train()"), ("/workspace/callbacks.py", 50, "on_exception", 'wandb.alert(title="crash", text=str(exc))')],
            "wandb.errors.UsageError: Run (%s) is finished. The call to `alert` will be ignored. Please make sure that you are using an active run." % c.run[-8:])
    return L, 1, "CPython chained exceptions ('During handling of the above exception'); IndexError root; wandb UsageError wording from wandb sdk", False


# ---------------- assertion
@sc("assertion")
def as_ds_batch(c):
    L = preamble(c, "ds")
    L += tb(c, [("/workspace/train.py", 140, "<module>", "engine, *_ = deepspeed.initialize(args=args, model=model, config=cfg)"),
                ("%s/deepspeed/runtime/config.py" % c.py, 885, "_batch_assertion", "assert train_batch == micro_batch * grad_acc * self.world_size, (")],
            "AssertionError: Check batch related parameters. train_batch_size is not equal to micro_batch_per_gpu * gradient_acc_step * world_size 256 != 4 * 8 * 4")
    return L, 1, "deepspeed/runtime/config.py _batch_assertion message", False


@sc("assertion")
def as_megatron_args(c):
    c.style = "srun"; c.nranks = 16
    L = ["using world size: 16, data-parallel size: 2, context-parallel size: 1, tensor-model-parallel size: 8, pipeline-model-parallel size: 1"]
    for r in range(c.r.randint(2, 16)):
        L += ranked(c, tb(c, [("/workspace/Megatron-LM/megatron/training/arguments.py", 420, "validate_args", "assert args.num_attention_heads % args.tensor_model_parallel_size == 0")], "AssertionError"), r)
    L += ["srun: error: %s: tasks 0-15: Exited with exit code 1" % c.host]
    return L, 1, "Megatron-LM megatron/training/arguments.py validate_args assertions", False


@sc("assertion")
def as_fsdp_flat(c):
    c.style = "torchrun"; c.nranks = 8
    L = preamble(c) + progress(c, n=c.r.randint(1, 5))
    L += ranked(c, tb(c, trainer_frames(c) + [("%s/torch/distributed/fsdp/_runtime_utils.py" % c.py, 690, "_pre_backward_hook", "_assert_in_training_states(state, [TrainingState.IDLE])")],
                      ["AssertionError: expects IDLE but got TrainingState.FORWARD_BACKWARD"]), 2)
    L += torchrun_teardown(c, "train_fsdp.py", 2, 1)
    return L, 1, "torch/distributed/fsdp/_runtime_utils.py _assert_in_training_states wording", False


# ---------------- runtime_error
@sc("runtime_error")
def rt_flash_ampere(c):
    c.gpu, c.driver, c.mem = "Tesla T4", "535.104.05", 15360
    L = preamble(c) + progress(c, n=1)
    L += tb(c, trainer_frames(c) + [("%s/flash_attn/flash_attn_interface.py" % c.py, 91, "_flash_attn_forward", "out, softmax_lse, S_dmask, rng_state = flash_attn_cuda.fwd(")],
            "RuntimeError: FlashAttention only supports Ampere GPUs or newer.")
    return L, 1, "flash-attn csrc 'FlashAttention only supports Ampere GPUs or newer.' (https://github.com/Dao-AILab/flash-attention/issues/762)", False


@sc("runtime_error")
def rt_no_grad_fn(c):
    L = preamble(c) + ["trainable params: 0 || all params: 6,738,415,616 || trainable%: 0.0000"] + progress(c, n=1)
    L += tb(c, trainer_frames(c) + [("%s/accelerate/accelerator.py" % c.py, 2241, "backward", "loss.backward(**kwargs)")],
            "RuntimeError: element 0 of tensors does not require grad and does not have a grad_fn")
    return L, 1, "torch autograd 'element 0 of tensors does not require grad and does not have a grad_fn' (gradient checkpointing + frozen LoRA inputs; peft issues)", False


@sc("runtime_error")
def rt_inductor(c):
    L = preamble(c) + warnings_block(c, 2)
    L += tb(c, trainer_frames(c) + [("%s/torch/_dynamo/output_graph.py" % c.py, 1465, "_call_user_compiler", "raise BackendCompilerFailed(self.compiler_fn, e) from e")],
            ["torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:", "CompilationError: at 12:4:", "    xindex = xoffset + tl.arange(0, XBLOCK)[:]",
             "    ^", "ValueError('arange\\'s range must be a power of 2')", "", "Set TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information", "", "",
             "You can suppress this exception and fall back to eager by setting:", "    import torch._dynamo", "    torch._dynamo.config.suppress_errors = True", ""])
    return L, 1, "torch/_dynamo/output_graph.py BackendCompilerFailed text + triton CompilationError (torch._dynamo.exc; TorchDynamoException subclasses RuntimeError)", False


@sc("runtime_error")
def rt_shape_lora(c):
    c.style = "torchrun"; c.nranks = 2
    L = preamble(c) + hf_load(c)
    for r in range(2):
        L += ranked(c, tb(c, [("/workspace/train.py", 90, "<module>", "model.load_state_dict(torch.load(args.adapter), strict=True)"),
                              ("%s/torch/nn/modules/module.py" % c.py, 2584, "load_state_dict", "raise RuntimeError(")],
                          ["RuntimeError: Error(s) in loading state_dict for PeftModelForCausalLM:", "\tsize mismatch for base_model.model.model.embed_tokens.weight: copying a param with shape torch.Size([128264, 4096]) from checkpoint, the shape in current model is torch.Size([128256, 4096])."]), r)
    L += torchrun_teardown(c, "train.py", 0, 1)
    return L, 1, "torch/nn/modules/module.py load_state_dict 'Error(s) in loading state_dict ... size mismatch for' wording", False


@sc("runtime_error")
def rt_backward_twice(c):
    L = preamble(c) + progress(c, n=c.r.randint(1, 3))
    L += tb(c, [("/workspace/train_ppo.py", 201, "<module>", "(pg_loss + vf_coef * vf_loss).backward()"), ("%s/torch/_tensor.py" % c.py, 581, "backward", "torch.autograd.backward(")],
            "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.")
    return L, 1, "torch autograd 'Trying to backward through the graph a second time' wording", False


# ---------------- gpu_hardware
@sc("gpu_hardware")
def hw_xid79_one_rank(c):
    c.style = "torchrun"; c.nranks = 8
    L = preamble(c) + progress(c)
    bad = c.r.randint(0, 7)
    L += ["[%d.%06d] NVRM: GPU at PCI:0000:%02x:00: GPU-%08x-5b28-3bf6-2a2d-1d5ecae7f6df" % (c.r.randint(10000, 900000), 1, 0x18 + 0x10 * bad, c.r.getrandbits(32)),
          "[%d.%06d] NVRM: Xid (PCI:0000:%02x:00): 79, pid=%d, GPU has fallen off the bus." % (c.r.randint(10000, 900000), 2, 0x18 + 0x10 * bad, c.pid + bad)]
    L += ranked(c, tb(c, trainer_frames(c), ["RuntimeError: CUDA error: unspecified launch failure"] + CUDA_TAIL()), bad)
    L += other_ranks_nccl_after(c, bad)
    L += ["[rank%d]: torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.20.5" % ((bad + 1) % 8),
          "[rank%d]: ncclUnhandledCudaError: Call to CUDA function failed." % ((bad + 1) % 8)]
    L += torchrun_teardown(c, "train_sft.py", bad, 1)
    L += ["$ nvidia-smi", "Unable to determine the device handle for GPU0000:%02X:00.0: Unknown Error" % (0x18 + 0x10 * bad)]
    return L, 1, "NVRM 'Xid (PCI:...): 79, pid=..., GPU has fallen off the bus.' (https://github.com/NVIDIA/open-gpu-kernel-modules/issues/888, https://github.com/wilicc/gpu-burn/issues/1); nvidia-smi 'Unable to determine the device handle' (https://github.com/rwth-i6/returnn/issues/1486); ncclUnhandledCudaError (https://github.com/NVIDIA/nccl/issues/1410)", False


@sc("gpu_hardware")
def hw_ecc_uncorrectable(c):
    c.style = "srun"; c.nranks = 8
    L = preamble(c) + progress(c, "mega")
    bad = c.r.randint(0, 7)
    L += ranked(c, tb(c, [("/workspace/Megatron-LM/megatron/training/training.py", 1080, "train", "train_step(forward_step_func,")],
                      ["RuntimeError: CUDA error: uncorrectable ECC error encountered"] + CUDA_TAIL()), bad)
    L += ["[%d.%06d] NVRM: Xid (PCI:0000:%02x:00): 48, pid=%d, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 6, subpartition 0." % (c.r.randint(10000, 900000), 9, 0x18 + 0x10 * bad, c.pid),
          "[%d.%06d] NVRM: Xid (PCI:0000:%02x:00): 63, pid=%d, Row Remapper: New row marked for remapping, reset gpu to activate." % (c.r.randint(10000, 900000), 10, 0x18 + 0x10 * bad, c.pid)]
    L += other_ranks_nccl_after(c, bad)[:5]
    L += ["srun: error: %s: task %d: Exited with exit code 1" % (c.host, bad)]
    return L, 1, "CUDA 'uncorrectable ECC error encountered' (cudaErrorECCUncorrectable); NVRM Xid 48 DBE and Xid 63 row remapper wording (NVIDIA Xid catalog docs)", False


@sc("gpu_hardware")
def hw_xid94_contained(c):
    L = preamble(c) + progress(c)
    L += ["[%d.%06d] NVRM: Xid (PCI:0000:%02x:00): 94, pid=%d, name=python, Contained: SM (0x1). RST: No, D-RST: No" % (c.r.randint(10000, 900000), 3, 0x4c, c.pid)]
    L += tb(c, trainer_frames(c), ["RuntimeError: CUDA error: uncorrectable ECC error encountered"] + CUDA_TAIL())
    return L, 1, "NVRM Xid 94 contained ECC error; CUDA 'uncorrectable ECC error encountered'", False


@sc("gpu_hardware")
def hw_gpu_lost_vllm(c):
    L = vllm_start(c, 4) + ["INFO %s [metrics.py:455] Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: %.1f%%, CPU KV cache usage: 0.0%%." % (c.vts(), c.r.uniform(100, 3000), c.r.uniform(100, 3000), c.r.randint(1, 60), c.r.uniform(3, 90)) for _ in range(c.r.randint(20, 100))]
    L += ["[%d.%06d] NVRM: Xid (PCI:0000:b3:00): 79, pid=%d, GPU has fallen off the bus." % (c.r.randint(10000, 900000), 4, c.pid),
          "[%d.%06d] NVRM: GPU 0000:b3:00.0: GPU has fallen off the bus." % (c.r.randint(10000, 900000), 5),
          "ERROR %s [multiproc_worker_utils.py:120] Worker VllmWorkerProcess pid %d died, exit code: -6" % (c.vts(), c.pid + 2),
          "INFO %s [multiproc_worker_utils.py:124] Killing local vLLM worker processes" % c.vts(),
          "ERROR %s [engine.py:366] RuntimeError: CUDA error: unknown error" % c.vts()]
    return L, 1, "NVRM Xid 79 (https://github.com/NVIDIA/NVSentinel/issues/155); vLLM multiproc_worker_utils 'Worker VllmWorkerProcess pid ... died, exit code' (https://github.com/vllm-project/vllm/issues/8189)", False


@sc("gpu_hardware")
def hw_nccl_ranks_xid74(c):
    c.style = "srun"; c.nranks = 16
    L = preamble(c) + progress(c, "ds")
    L += ["[%d.%06d] NVRM: Xid (PCI:0000:%02x:00): 74, pid=%d, name=python3, NVLink: fatal error detected on link 7(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)" % (c.r.randint(10000, 900000), 6, 0x5d, c.pid)]
    L += other_ranks_nccl_after(c, 3)
    L += ["srun: error: %s: tasks 0-15: Exited with exit code 1" % c.host]
    return L, 1, "NVRM Xid 74 NVLink fatal error wording (NVIDIA Xid docs); watchdog timeouts on the other ranks are consequences", False


# ---------------- disk_full
@sc("disk_full")
def df_enospc_safetensors(c):
    L = preamble(c) + progress(c) + ["Saving model checkpoint to /checkpoints/%s/checkpoint-%d" % (c.run, 2000)]
    L += tb(c, trainer_frames(c) + [("%s/transformers/modeling_utils.py" % c.py, 2793, "save_pretrained", "safe_save_file(shard, os.path.join(save_directory, shard_file), metadata={\"format\": \"pt\"})"),
                                   ("%s/safetensors/torch.py" % c.py, 286, "save_file", "serialize_file(_flatten(tensors), filename, metadata=metadata)")],
            "safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: \"No space left on device\" })")
    L += wandb_teardown(c, ok=False)
    return L, 1, "safetensors SafetensorError 'Error while serializing: IoError(Os { code: 28, kind: StorageFull, message: \"No space left on device\" })' (huggingface/safetensors issues)", False


@sc("disk_full")
def df_stream_writer(c):
    c.style = "torchrun"; c.nranks = 8
    L = preamble(c, "ds") + progress(c, "ds")
    L += ["[%s] [INFO] [logging.py:128:log_dist] [Rank 0] Saving model checkpoint: /checkpoints/%s/global_step%d/mp_rank_00_model_states.pt" % (c.ts(), c.run, 1500)]
    L += ranked(c, tb(c, [("%s/deepspeed/runtime/engine.py" % c.py, 3300, "_save_zero_checkpoint", "self.checkpoint_engine.save(zero_sd, zero_checkpoint_name)"),
                          ("%s/torch/serialization.py" % c.py, 652, "save", "with _open_zipfile_writer(f) as opened_zipfile:")],
                      "RuntimeError: [enforce fail at inline_container.cc:603] . unexpected pos 2351104 vs 2350992"), 0)
    L += ["[rank0]: Exception ignored in: <function _TemporaryFileWrapper.__del__>", "[rank0]: OSError: [Errno 28] No space left on device"]
    L += torchrun_teardown(c, "train.py", 0, 1)
    return L, 1, "torch serialization 'PytorchStreamWriter'/'[enforce fail at inline_container.cc] . unexpected pos' (caffe2/serialize/inline_container.cc) + OSError [Errno 28]", False


@sc("disk_full")
def df_quota(c):
    L = preamble(c, "plain") + ["Downloading shards: %d%%" % p for p in range(0, 80, 20)]
    L += tb(c, [("/workspace/dl.py", 20, "<module>", "snapshot_download(repo_id=MODEL, local_dir='/home/%s/models')" % "user"),
                ("%s/huggingface_hub/file_download.py" % c.py, 492, "http_get", "temp_file.write(chunk)")],
            "OSError: [Errno 122] Disk quota exceeded")
    return L, 1, "EDQUOT 'Disk quota exceeded' [Errno 122]; huggingface_hub http_get frame", False


@sc("disk_full")
def df_abort_dataset_cache(c):
    L = preamble(c, "plain")
    L += ["Generating train split: %d examples [%02d:%02d, %d examples/s]" % (n * 100000, n, 10, 40000) for n in range(1, 9)]
    L += tb(c, [("%s/datasets/builder.py" % c.py, 1990, "_prepare_split_single", "writer.write_table(table)"), ("pyarrow/io.pxi", 100, "pyarrow.lib.NativeFile.write", "")],
            "OSError: [Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device")
    L += ["", "The above exception was the direct cause of the following exception:", "", "datasets.exceptions.DatasetGenerationError: An error occurred while generating the dataset",
          "terminate called after throwing an instance of 'std::runtime_error'", "  what():  No space left on device", "Aborted (core dumped)"]
    return L, 134, "pyarrow 'Error writing bytes to file. Detail: [errno 28] No space left on device'; datasets DatasetGenerationError; abort follows ENOSPC (root cause disk)", False


# ---------------- walltime
@sc("walltime")
def wt_slurm_time_limit(c):
    c.style = "srun"
    L = preamble(c) + progress(c, c.r.choice(["hf", "mega"]))
    L += ["slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (c.jobid, c.host, c.iso()),
          "slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (c.jobid, c.host, c.iso()),
          "srun: Job step aborted: Waiting up to 32 seconds for job step to finish."]
    L += ["%d: [rank%d]: KeyboardInterrupt" % (r, r) if c.r.random() < 0.3 else "%d: Terminated" % r for r in range(min(c.nranks, 8))]
    L += wandb_teardown(c, ok=False)[:2]
    return L, 143, "Slurm '*** JOB %d ON %s CANCELLED AT %s DUE TO TIME LIMIT ***' (https://github.com/Nextomics/NextPolish/issues/122)", False


@sc("walltime")
def wt_pbs(c):
    L = preamble(c) + progress(c)
    L += ["=>> PBS: job killed: walltime %d exceeded limit %d" % (86400 + c.r.randint(5, 90), 86400)]
    return L, 271, "PBS/Torque '=>> PBS: job killed: walltime N exceeded limit N' (pbs_mom)", False


@sc("walltime")
def wt_lsf(c):
    L = preamble(c) + progress(c, "mega")
    L += ["User defined signal 2", "", "------------------------------------------------------------", "Sender: LSF System <lsfadmin@%s>" % c.host,
          "Subject: Job %d: <pretrain_llama> in cluster <summit> Exited" % c.jobid, "",
          "TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "Exited with exit code 140.", "", "Resource usage summary:", "", "    CPU time :                                   %d.00 sec." % c.r.randint(10 ** 5, 10 ** 7)]
    return L, 140, "LSF 'TERM_RUNLIMIT: job killed after reaching LSF run time limit.' (IBM Spectrum LSF job report)", False


@sc("walltime")
def wt_timeout_cmd(c):
    L = ["+ timeout 4h accelerate launch --config_file fsdp.yaml train_sft.py"] + preamble(c) + progress(c)
    L += ["+ status=124", "+ echo 'run ended with status 124'", "run ended with status 124"]
    return L, 124, "coreutils timeout(1) exit status 124 (see captured walltime log in this set)", False


# ---------------- preempted
@sc("preempted")
def pre_slurm(c):
    c.style = "srun"
    L = preamble(c) + progress(c)
    L += ["slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (c.jobid, c.host, c.iso()),
          "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.", "srun: error: %s: tasks 0-%d: Terminated" % (c.host, min(c.nranks, 8) - 1),
          "srun: Force Terminated StepId=%d.0" % c.jobid]
    return L, 143, "Slurm '*** JOB ... CANCELLED AT ... DUE TO PREEMPTION ***' (https://github.com/SystemsGenetics/GEMmaker/pull/242)", False


@sc("preempted")
def pre_slurm_requeue_exit0(c):
    c.style = "srun"
    L = preamble(c) + progress(c)
    L += ["slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (c.jobid, c.host, c.iso()),
          "[%s] Received SIGTERM (preemption notice). Saving checkpoint to /checkpoints/%s/checkpoint-preempt ..." % (c.ts(), c.run),
          "Saving model checkpoint to /checkpoints/%s/checkpoint-preempt" % c.run, "checkpoint saved; requeue requested (scontrol requeue %d); exiting cleanly" % c.jobid]
    L += wandb_teardown(c)
    return L, 0, "Slurm DUE TO PREEMPTION message; job's own SIGTERM handler checkpoints and exits 0 (requeue)", True


@sc("preempted")
def pre_gcp_spot(c):
    L = preamble(c) + progress(c)
    L += ["%s - WARNING - preemption_watcher - GCE metadata instance/preempted=TRUE; instance is being preempted (spot VM reclaimed)" % c.ts(),
          "%s - INFO - trainer - Saving emergency checkpoint to gs://llm-ckpts/%s/step-%d" % (c.ts(), c.run, c.r.randint(100, 9000)),
          "%s - INFO - trainer - Emergency checkpoint complete; exiting" % c.ts()]
    L += wandb_teardown(c)
    return L, 0, "GCE metadata server 'instance/preempted' = TRUE convention (Google Compute Engine spot/preemptible VM docs)", True


@sc("preempted")
def pre_aws_spot(c):
    L = preamble(c) + progress(c, "ds")
    L += ["%s [spot-watch] Spot interruption notice received: {\"action\": \"terminate\", \"time\": \"%sZ\"}" % (c.ts(), c.iso()),
          "%s [launcher] received SIGTERM from node shutdown; forwarding to children" % c.ts()]
    L += ["%s torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGTERM death signal, shutting down workers" % c.glog("W")]
    L += ["%s torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGTERM" % (c.glog("W"), c.pid + r) for r in range(min(c.nranks, 8))]
    L += ["torch.distributed.elastic.multiprocessing.api.SignalException: Process %d got signal: 15" % c.pid]
    return L, 1, "EC2 instance metadata spot/instance-action JSON ({\"action\": \"terminate\", \"time\": ...}); torch elastic 'Received Signals.SIGTERM death signal, shutting down workers' and SignalException wording", False


@sc("preempted")
def pre_k8s_node_shutdown(c):
    L = preamble(c) + progress(c)
    L += ["$ kubectl get pod %s-0 -o jsonpath='{.status}'" % c.run,
          "{\"message\":\"Pod was terminated in response to imminent node shutdown.\",\"phase\":\"Failed\",\"reason\":\"Terminated\"}"]
    return L, 143, "kubelet graceful node shutdown 'Pod was terminated in response to imminent node shutdown.'", False


@sc("preempted")
def pre_skypilot(c):
    L = preamble(c) + progress(c)
    L += ["I %02d-%02d %02d:%02d:%02d controller.py:%d] Cluster is preempted or failed. Recovering..." % (c.mon, c.day, c.h, c.m, c.s, 300),
          "I %02d-%02d %02d:%02d:%02d recovery_strategy.py:%d] Spot instance preempted; relaunching on a new node (resume from last checkpoint)." % (c.mon, c.day, c.h, c.m, c.s, 420),
          "Shared connection to 34.%d.%d.%d closed." % (c.r.randint(0, 255), c.r.randint(0, 255), c.r.randint(0, 255))]
    return L, 143, "SkyPilot managed-job controller 'Cluster is preempted or failed. Recovering...' wording (sky/jobs/controller.py)", False


# ---------------- interrupted
@sc("interrupted")
def int_scancel(c):
    c.style = "srun"
    L = preamble(c) + progress(c)
    L += ["slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s ***" % (c.jobid, c.host, c.iso()), "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
          "srun: got SIGCONT", "srun: forcing job termination"]
    L += wandb_teardown(c, ok=False)[:1]
    return L, 143, "Slurm scancel wording '*** JOB ... CANCELLED AT ... ***' without DUE TO (user cancel)", False


@sc("interrupted")
def int_keyboard_trainer(c):
    L = preamble(c) + progress(c)
    L += ["^C"] + tb(c, trainer_frames(c) + [("%s/torch/autograd/graph.py" % c.py, 825, "_engine_run_backward", "return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")], "KeyboardInterrupt")
    L += ["wandb: Ctrl + C detected. Stopping run.", "wandb: 🚀 View run %s at: https://wandb.ai/lab/llm-finetune/runs/%s" % (c.run, c.run[-8:])]
    return L, 130, "CPython KeyboardInterrupt traceback; wandb 'Ctrl + C detected. Stopping run.'", False


@sc("interrupted")
def int_sigterm_handler_exit0(c):
    c.style = "srun"
    L = preamble(c) + progress(c)
    L += ["slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s ***" % (c.jobid, c.host, c.iso()),
          "%s - WARNING - train - caught signal 15 (SIGTERM) from `scancel` by user; stopping after this step" % c.ts(),
          "Saving model checkpoint to /checkpoints/%s/checkpoint-last" % c.run, "%s - INFO - train - graceful shutdown complete, exit code 0" % c.ts()]
    return L, 0, "Slurm user-cancel wording (no DUE TO); graceful SIGTERM handler exits 0", True


@sc("interrupted")
def int_accelerate_sigint(c):
    c.style = "torchrun"; c.nranks = 4
    L = preamble(c) + progress(c)
    L += ["^C%s torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGINT death signal, shutting down workers" % c.glog("W")]
    L += ["%s torch/distributed/elastic/multiprocessing/api.py:897] Sending process %d closing signal SIGINT" % (c.glog("W"), c.pid + r) for r in range(4)]
    L += ["[rank%d]: KeyboardInterrupt" % r for r in range(4)]
    L += ["torch.distributed.elastic.multiprocessing.api.SignalException: Process %d got signal: 2" % c.pid]
    return L, 1, "torch elastic 'Received Signals.SIGINT death signal, shutting down workers' / SignalException 'got signal: 2'", False


# ---------------- native_abort
@sc("native_abort")
def ab_c10_error(c):
    L = preamble(c) + progress(c)
    L += ["terminate called after throwing an instance of 'c10::Error'", "  what():  could not create a primitive descriptor for a matmul primitive",
          "Exception raised from ... at ../aten/src/ATen/native/mkldnn/Matmul.cpp:300 (most recent call first):", "Fatal Python error: Aborted", "",
          "Current thread 0x%016x (most recent call first):" % c.r.getrandbits(48), '  File "/workspace/quantize_cpu.py", line 71 in <module>']
    return L, -6, "libstdc++ \"terminate called after throwing an instance of 'c10::Error'\"; CPython faulthandler 'Fatal Python error: Aborted'", False


@sc("native_abort")
def ab_glog_check(c):
    L = ["2024-0%d-%02d %02d:%02d:%02d.%06d: I external/xla/xla/service/service.cc:168] XLA service 0x55d7 initialized for platform CUDA (this does not guarantee that XLA will be used). Devices:" % (c.r.randint(1, 9), c.day, c.h, c.m, c.s, 1)]
    L += warnings_block(c, 1) + progress(c, n=c.r.randint(3, 20))
    L += ["F%02d%02d %02d:%02d:%02d.%06d %d hlo_instruction.cc:1234] Check failed: operand_shape.rank() == 2 (3 vs. 2) " % (c.mon, c.day, c.h, c.m, c.s, 2, c.pid),
          "*** Check failure stack trace: ***", "    @     0x7f%x  absl::lts_20230802::log_internal::LogMessageFatal::~LogMessageFatal()" % c.r.getrandbits(36), "Aborted (core dumped)"]
    return L, 134, "glog/absl 'Check failed:' + '*** Check failure stack trace: ***' (absl log_internal LogMessageFatal)", False


@sc("native_abort")
def ab_glibc_assert(c):
    L = preamble(c, "plain")
    L += ["python3: ../nptl/pthread_mutex_lock.c:94: ___pthread_mutex_lock: Assertion `mutex->__data.__owner == 0' failed.", "Aborted (core dumped)"]
    return L, 134, "glibc nptl assertion '___pthread_mutex_lock: Assertion `mutex->__data.__owner == 0' failed.'", False


# ---------------- exec_failure
@sc("exec_failure")
def ex_crlf(c):
    L = ["$ sbatch run_sft.sh", "Submitted batch job %d" % c.jobid, "$ cat slurm-%d.out" % c.jobid, "/usr/bin/env: 'python3\\r': No such file or directory"]
    return L, 127, "coreutils env \"/usr/bin/env: 'python3\\r': No such file or directory\" (script saved with CRLF line endings)", False


@sc("exec_failure")
def ex_exec_format(c):
    L = ["+ ./bin/llama-quantize models/ggml-model-f16.gguf models/ggml-model-Q4_K_M.gguf Q4_K_M", "bash: ./bin/llama-quantize: cannot execute binary file: Exec format error"]
    return L, 126, "bash 'cannot execute binary file: Exec format error' (aarch64 binary on x86_64)", False


# ---------------- unknown
@sc("unknown")
def unk_childfailed(c):
    c.style = "torchrun"; c.nranks = 8
    L = preamble(c) + progress(c)
    L += torchrun_teardown(c, "train_sft.py", c.r.randint(0, 7), 1)
    return L, 1, "torchrun ChildFailedError with error_file <N/A> and no worker traceback", False


@sc("unknown")
def unk_srun_exit2(c):
    c.style = "srun"
    L = preamble(c) + progress(c, "mega")
    L += ["srun: error: %s: task %d: Exited with exit code 2" % (c.host, c.r.randint(0, 7)), "srun: Terminating StepId=%d.0" % c.jobid]
    return L, 2, "srun 'task N: Exited with exit code 2', no cause printed", False


@sc("unknown")
def unk_silent_255(c):
    L = preamble(c) + progress(c)
    L += ["%s - INFO - train - step %d done" % (c.ts(), c.r.randint(100, 900)), "+ exit_code=255", "+ echo 'training exited with 255'", "training exited with 255"]
    return L, 255, "no error text; wrapper reports status 255", False


@sc("unknown")
def unk_ds_launcher(c):
    c.style = "deepspeed"
    L = preamble(c, "ds") + progress(c, "ds")
    L += ["%s: [%s] [INFO] [launch.py:351:main] Process %d exits successfully." % (c.host, c.ts(), c.pid + 1),
          "%s: [%s] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python3', '-u', 'train.py', '--local_rank=0'] exits with return code = 3" % (c.host, c.ts())]
    return L, 3, "deepspeed/launcher/launch.py sigkill_handler 'exits with return code =' with no worker error", False


# ---------------- success (noisy)
@sc("success")
def ok_sft(c):
    L = preamble(c) + progress(c, n=c.r.randint(100, 600))
    L += ["/usr/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: resource_tracker: There appear to be 1 leaked semaphore objects to clean up at shutdown",
          "{'eval_loss': %.4f, 'eval_runtime': %.2f, 'eval_samples_per_second': %.3f, 'eval_steps_per_second': %.3f, 'epoch': 1.0}" % (c.r.uniform(0.8, 2), c.r.uniform(20, 300), c.r.uniform(5, 50), c.r.uniform(0.5, 5)),
          "Training completed. Do not forget to share your model on huggingface.co/models =)", "",
          "{'train_runtime': %.4f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %.3f, 'train_loss': %.4f, 'epoch': 1.0}" % (c.r.uniform(1000, 40000), c.r.uniform(1, 20), c.r.uniform(0.1, 2), c.r.uniform(0.6, 1.6)),
          "Saving model checkpoint to /checkpoints/%s" % c.run] + wandb_teardown(c)
    return L, 0, "HF Trainer/TRL SFT output formats; harmless warnings (checkpoint use_reentrant, tokenizers fork, use_cache) from transformers/torch sources", False


@sc("success")
def ok_ds_overflow(c):
    L = preamble(c, "ds")
    L += ["[%s] [INFO] [loss_scaler.py:190:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: 65536, but hysteresis is 2. Reducing hysteresis to 1" % c.ts()]
    L += ds_steps(c, 10, 10 * c.r.randint(20, 80), "some")
    L += ["[%s] [INFO] [logging.py:128:log_dist] [Rank 0] Saving model checkpoint: /checkpoints/%s/global_step%d/mp_rank_00_model_states.pt" % (c.ts(), c.run, 800),
          "[%s] [INFO] [torch_checkpoint_engine.py:33:commit] [Torch] Checkpoint global_step800 is ready now!" % c.ts(),
          "$ python zero_to_fp32.py /checkpoints/%s /checkpoints/%s/pytorch_model.bin" % (c.run, c.run),
          "Processing zero checkpoint '/checkpoints/%s/global_step800'" % c.run, "Detected checkpoint of type zero stage 3, world_size: 8",
          "Parsing checkpoint created by deepspeed==0.15.4", "Reconstructed Trainable fp32 state dict with %d params %d elements" % (c.r.randint(200, 900), c.r.randint(10 ** 9, 10 ** 10)),
          "Saving fp32 state dict to /checkpoints/%s/pytorch_model.bin" % c.run]
    return L, 0, "DeepSpeed loss_scaler OVERFLOW/hysteresis lines that recover (https://github.com/deepspeedai/DeepSpeed/issues/931, https://github.com/bobo0810/LearnDeepSpeed/issues/1); zero_to_fp32.py consolidation output", False


@sc("success")
def ok_megatron_skips(c):
    c.style = "srun"
    L = ["using world size: %d, data-parallel size: %d, context-parallel size: 1, tensor-model-parallel size: 8, pipeline-model-parallel size: 1" % (c.nranks * 8, c.nranks), "training ..."]
    L += ["0: " + x for x in megatron_iters(c, 10, 10 * c.r.randint(40, 140), 10, skip_every=1)]
    L += ["0: [after training is done] datetime: %04d-%02d-%02d %02d:%02d:%02d" % (c.year, c.mon, c.day, c.h, c.m, c.s),
          "0: saving checkpoint at iteration %8d to /lustre/ckpt/%s in torch_dist format" % (1000, c.run), "0:   successfully saved checkpoint from iteration %8d to /lustre/ckpt/%s" % (1000, c.run),
          "0: ----------------------------------------------------------------------------------------------------------------",
          "0:  validation loss at iteration 1000 on validation set | lm loss value: 2.412231E+00 | lm loss PPL: 1.115866E+01 |", "0: ----------------------------------------------------------------------------------------------------------------"]
    return L, 0, "Megatron-LM iteration/validation line formats incl. 'number of skipped iterations' > 0 (megatron/training/training.py)", False


@sc("success")
def ok_vllm_batch(c):
    L = vllm_start(c) + ["INFO %s [executor_base.py:111] # cuda blocks: %d, # CPU blocks: 2048" % (c.vts(), c.r.randint(2000, 30000)),
                         "INFO %s [executor_base.py:116] Maximum concurrency for %d tokens per request: %.2fx" % (c.vts(), 8192, c.r.uniform(5, 80)),
                         "WARNING %s [scheduler.py:1560] Sequence group 12 is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space. This can affect the end-to-end performance. Increase gpu_memory_utilization or tensor_parallel_size to provide more KV cache memory. total_num_cumulative_preemption=1" % c.vts()]
    n = c.r.randint(10, 60)
    L += ["\rProcessed prompts: %3d%%|%s| %d/%d [%02d:%02d<00:00, %.2fit/s, est. speed input: %.2f toks/s, output: %.2f toks/s]" % (i * 100 // n, "█" * (i * 10 // n), i * 100, n * 100, i // 60, i % 60, c.r.uniform(1, 30), c.r.uniform(500, 9000), c.r.uniform(500, 9000)) for i in range(n + 1)]
    L += ["wrote %d generations to outputs/gen_%s.jsonl (0 errors, 3 retries after HTTP 429)" % (n * 100, c.run), "[rank0]:[W%02d%02d ProcessGroupNCCL.cpp:1250] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the progress of another member of the process group. This constraint has always been present,  but this warning has only been added since PyTorch 2.4 (function operator())" % (c.mon, c.day)]
    return L, 0, "vLLM scheduler 'is preempted by PreemptionMode.RECOMPUTE mode because there is not enough KV cache space' (harmless); Processed prompts tqdm; https://github.com/vllm-project/vllm/issues/14452", False


@sc("success")
def ok_compile_recompiles(c):
    L = preamble(c) + WARN[10](c) + WARN[11](c) + progress(c, n=c.r.randint(50, 300))
    L += ["%s - INFO - train - retrying shard download after error: ConnectionError('Connection aborted.') (attempt 2/5)" % c.ts(), "%s - INFO - train - shard download succeeded" % c.ts(),
          "%s - INFO - train - val_error=%.4f, nan_count=0, killed 2 zombie dataloader workers from previous run" % (c.ts(), c.r.uniform(0.1, 0.4)),
          "Training completed. Do not forget to share your model on huggingface.co/models =)"] + wandb_teardown(c)
    return L, 0, "torch._dynamo recompile_limit warning (https://github.com/pytorch/pytorch/issues/167504) without fullgraph is harmless; inductor 'Not enough SMs' warning", False


@sc("success")
def ok_ddp_ranks(c):
    c.style = c.r.choice(["torchrun", "mpirun", "srun"]); c.nranks = c.r.choice([2, 4, 8])
    L = preamble(c)
    for r in range(c.nranks):
        L += ranked(c, WARN[c.r.choice([0, 1, 9])](c), r)
    L += progress(c, n=c.r.randint(100, 400))
    L += ranked(c, ["%s - WARNING - accelerate - Non-finite loss detected at step %d; batch skipped (skip_nan_batches=True)" % (c.ts(), c.r.randint(10, 99))], 0)
    L += ["Training completed. Do not forget to share your model on huggingface.co/models =)"] + wandb_teardown(c)
    return L, 0, "multi-rank harmless warnings (DDP find_unused_parameters reducer.cpp, checkpoint use_reentrant); skipped non-finite batch handled", False


PLAN = {"cuda_oom": 7, "nccl": 6, "cuda_runtime": 7, "ram_oom": 4, "segfault": 4, "file_not_found": 4, "permission": 4, "missing_module": 5,
        "div_zero": 3, "device_mismatch": 4, "nan_loss": 8, "oom_killer": 5, "traceback": 5, "assertion": 3, "runtime_error": 5, "gpu_hardware": 6,
        "disk_full": 4, "walltime": 4, "preempted": 7, "interrupted": 5, "native_abort": 4, "exec_failure": 2, "unknown": 4, "success": 19}

CAPTURED = {  # name -> label, gpu
    "divzero_warmup": "div_zero", "ram_oom_numpy": "ram_oom", "disk_full_save": "disk_full", "fnf_tokenizer": "file_not_found",
    "missing_flash_attn": "missing_module", "perm_ckpt": "permission", "segv_ctypes": "segfault", "abort_native": "native_abort",
    "walltime_loop": "walltime", "sigint_loop": "interrupted", "meta_device": "device_mismatch", "nan_exit0": "nan_loss",
    "success_warn": "success", "keyerror_column": "traceback", "assert_collator": "assertion", "shape_runtime": "runtime_error",
    "exec_noexec": "exec_failure", "exec_notfound": "exec_failure", "gloo_timeout": "nccl"}


def metric_lines(c, k):
    L = []
    step = c.r.randint(1, 50)
    loss = c.r.uniform(1.5, 3.5)
    fmt = c.r.choice([0, 1, 2])
    for i in range(k):
        step += 1
        loss = max(0.4, loss * c.r.uniform(0.985, 1.01))
        if fmt == 0:
            L.append("%s - INFO - __main__ - step %d | loss %.4f | lr %.3e | grad_norm %.3f | tokens/s %d | mem %.1fGB" % (c.ts(), step, loss, 2e-5, c.r.uniform(0.2, 2.5), c.r.randint(2000, 90000), c.r.uniform(20, c.mem / 1024.0)))
        elif fmt == 1:
            L.append(c.rp(c.r.randint(0, max(0, min(c.nranks, 8) - 1)), "[%s] step=%d loss=%.4f ppl=%.2f throughput=%.1f samples/s" % (c.ts(), step, loss, 2.718 ** loss, c.r.uniform(5, 90))))
        else:
            L.append("{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.4e, 'epoch': %.2f}" % (loss, c.r.uniform(0.2, 3), 2e-4, step / 1000.0))
        if c.r.random() < 0.02:
            L += warnings_block(c, 1)
    return L


def fit_len(c, L, name):
    import math
    n = sum(x.count("\n") + 1 for x in L)
    target = int(math.exp(c.r.gauss(math.log(260), 0.75)))
    target = max(40, min(1400, target))
    if n < target and not name.startswith("ex_"):
        pos = max(1, int(len(L) * c.r.uniform(0.3, 0.6)))
        L = L[:pos] + metric_lines(c, target - n) + L[pos:]
    n = sum(x.count("\n") + 1 for x in L)
    extra = []
    while n + len(extra) < 40:
        extra += pip_freeze(c) + nvidia_smi(c, 2)
    if extra:
        L = extra + L
    if n > 1500:
        L = L[:700] + L[-700:]
    return L


def main():
    rng = random.Random(SEED)
    items = []
    for label in sorted(PLAN):
        fs = sorted(S[label], key=lambda f: 0 if "exit0" in f.__name__ or f.__name__ == "pre_gcp_spot" else 1)
        for k in range(PLAN[label]):
            items.append(("composed", label, fs[k % len(fs)].__name__, fs[k % len(fs)]))
    for name in sorted(CAPTURED):
        items.append(("captured", CAPTURED[name], name, None))
    rng.shuffle(items)
    os.makedirs(os.path.join(HERE, "logs"), exist_ok=True)
    for f in os.listdir(os.path.join(HERE, "logs")):
        if f.endswith(".log"):
            os.remove(os.path.join(HERE, "logs", f))
    recs = []
    for i, (src, label, name, fn) in enumerate(items, 1):
        iid = "%s-%04d" % (PFX, i)
        path = "logs/%s.log" % iid
        if src == "composed":
            c = Ctx(random.Random("%d-%d" % (SEED, i)), i)
            L, code, prov, _ = fn(c)
            L = fit_len(c, L, name)
            LL = "\n".join(L).split("\n")
            if len(LL) > 1480:
                LL = LL[:600] + LL[-860:]
            text = "\n".join(LL) + "\n"
            gpu, drv = c.gpu, c.driver
            prov = "composed (%s): %s" % (name, prov)
        else:
            with open(os.path.join(HERE, "captured", name + ".log"), "rb") as f:
                out = f.read().decode("utf-8", "replace")
            with open(os.path.join(HERE, "captured", name + ".json")) as f:
                meta = json.load(f)
            text = "$ %s\n%s" % (meta["cmd"], out)
            code = meta["rc"]
            gpu, drv = "none", "none"
            prov = "captured on this machine (python3.11, torch 2.x CPU): capture.py program '%s', command: %s" % (name, meta["cmd"])
        with open(os.path.join(HERE, path), "w", encoding="utf-8", newline="") as f:
            f.write(text)
        recs.append({"id": iid, "mode": label, "source": src, "log_path": path, "gpu": gpu, "driver": drv, "true_exit_code": code, "provenance": prov})
    with open(os.path.join(HERE, "labels.jsonl"), "w", encoding="utf-8") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n")
    print("wrote %d logs" % len(recs))


if __name__ == "__main__":
    main()

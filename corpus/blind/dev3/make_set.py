#!/usr/bin/env python3
"""dev3 blind held-out set generator (stdlib only, Python 3.6+).

Usage: python3 make_set.py [--seed 20261204]
Writes logs/<id>.log and labels.jsonl next to this file. Byte-identical per seed.
Captured logs are read from captured/<name>.out + captured/meta.json (recorded by capture.py).
"""
import json, os, random, sys

HERE = os.path.dirname(os.path.abspath(__file__))
SET = "dev3"

# ----------------------------------------------------------------------------------------------
# provenance snippets (exact wordings come from these sources)
# ----------------------------------------------------------------------------------------------
P = {
 "pt_oom2": "pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (OutOfMemoryError message, 2.x wording); https://github.com/hiyouga/LlamaFactory/issues/7396 (rank prefixes)",
 "pt_oom1": "pytorch/pytorch c10/cuda/CUDACachingAllocator.cpp (1.x 'CUDA out of memory. Tried to allocate ... reserved in total by PyTorch' wording)",
 "jax_oom": "jax/xla RESOURCE_EXHAUSTED wording: https://github.com/google-deepmind/alphafold/issues/1023, https://github.com/jax-ml/jax/issues/13428 (BufferAssignment OOM Debugging), https://github.com/ecmwf-lab/ai-models-graphcast/issues/18 (bfc 'Failed to allocate request')",
 "tf_oom": "tensorflow ResourceExhaustedError wording: https://github.com/Azure/MachineLearningNotebooks/issues/880, https://github.com/tensorflow/tensorflow/issues/4735",
 "vllm_oom": "vllm/worker/worker.py raise_if_cache_size_invalid / v1 kv_cache_utils.py: https://github.com/vllm-project/vllm/issues/10439, https://github.com/vllm-project/vllm/issues/17431",
 "nccl_wd": "pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp watchdog wording: https://github.com/hiyouga/LlamaFactory/issues/7396, https://github.com/XPixelGroup/BasicSR/issues/737, https://github.com/NVIDIA/Megatron-LM/issues/1207",
 "nccl_err": "pytorch ProcessGroupNCCL.cpp 'NCCL error in: ... unhandled system error' + NCCL socket.cc WARN wording; https://github.com/NVIDIA/nccl/issues/1409",
 "store": "pytorch torch/csrc/distributed/c10d/TCPStore.cpp / elastic rendezvous wording (DistStoreError timed out waiting for clients)",
 "cuda_rt": "pytorch c10/cuda/CUDAException.h (C10_CUDA_CHECK message: 'CUDA kernel errors might be asynchronously reported...'), aten/src/ATen/native/cuda/IndexKernel.cu device assert",
 "cublas": "pytorch aten/src/ATen/cuda/CUDABlas.cpp TORCH_CUDABLAS_CHECK wording (CUBLAS_STATUS_EXECUTION_FAILED when calling cublasGemmEx)",
 "cudnn_tf": "tensorflow stream_executor/cuda/cuda_dnn.cc: https://github.com/tensorflow/tensorflow/issues/14111, https://github.com/tensorflow/tensorflow/issues/24496",
 "xid": "NVIDIA driver NVRM Xid wording: https://github.com/NVIDIA/NVSentinel/issues/155, https://github.com/NVIDIA/open-gpu-kernel-modules/issues/507; nvidia-smi 'GPU is lost' wording",
 "oomk": "Linux mm/oom_kill.c 'Out of memory: Killed process' + Slurm src/plugins/task/cgroup 'Detected N oom_kill event' / srun 'Out Of Memory' wording",
 "k8s_oom": "kubectl describe pod Last State/OOMKilled/137: https://github.com/gimlet-io/gimlet/issues/649, https://github.com/openshift/origin/issues/7064",
 "pbs_mem": "PBS Pro/Torque MOM '=>> PBS: job killed: ... exceeded limit' wording: https://github.com/marbl/canu/issues/1214",
 "slurm_tl": "Slurm slurmstepd 'CANCELLED AT ... DUE TO TIME LIMIT': https://github.com/ZettaAI/zetta_utils/issues/671, https://github.com/desihub/desitarget/issues/628",
 "pbs_wt": "PBS '=>> PBS: job killed: walltime N exceeded limit N': https://github.com/marbl/canu/issues/1214, https://github.com/NOAA-EMC/EVS/pull/78",
 "slurm_pre": "Slurm slurmstepd 'CANCELLED AT ... DUE TO PREEMPTION' (src/slurmd/slurmstepd/req.c same format as TIME LIMIT, see https://github.com/ZettaAI/zetta_utils/issues/671)",
 "k8s_pre": "kubelet graceful node shutdown ('Pod was terminated in response to imminent node shutdown.') / GKE spot preemption",
 "slurm_cancel": "Slurm slurmstepd '*** JOB N ON host CANCELLED AT time ***' (scancel, no DUE TO clause), https://github.com/desihub/desitarget/issues/628 (srun teardown lines)",
 "lightning_int": "Lightning src/lightning/pytorch/trainer/call.py 'Detected KeyboardInterrupt, attempting graceful shutdown ...'",
 "abort": "pytorch c10 'terminate called after throwing an instance of c10::Error' / glog-absl 'Check failed' + '*** Check failure stack trace: ***': https://github.com/tensorflow/tensorflow/issues/14111",
 "segv": "PyTorch DataLoader worker signal handler (torch/csrc/DataLoader.cpp 'Unexpected segmentation fault encountered in worker.'), torch.distributed.elastic ChildFailedError summary",
 "keras_nan": "keras/callbacks.py TerminateOnNaN 'Batch N: Invalid loss, terminating training': https://github.com/keras-team/keras/issues/6747, https://github.com/keras-team/keras-tuner/issues/442",
 "megatron_nan": "Megatron-LM megatron/core/distributed/param_and_grad_buffer.py: https://github.com/NVIDIA/Megatron-LM/issues/780, https://github.com/alibaba/Pai-Megatron-Patch/issues/366",
 "ds_scale": "DeepSpeed runtime/fp16/loss_scaler.py OVERFLOW wording + 'Current loss scale already at minimum': https://github.com/ymcui/Chinese-LLaMA-Alpaca/issues/534, https://github.com/deepspeedai/DeepSpeed/issues/931",
 "inductor": "pytorch torch/_dynamo/output_graph.py BackendCompilerFailed wording: https://github.com/FoundationVision/Infinity/issues/31, https://github.com/pytorch/pytorch/issues/158384",
 "py": "CPython exception formats (traceback, chained-exception separators) and PyTorch/TF error strings from their sources",
 "enospc": "CPython OSError [Errno 28] / torch caffe2/serialize/inline_container.cc 'PytorchStreamWriter failed writing file' wording",
 "devmm": "pytorch aten/src/ATen/native/TensorIterator / TensorCompare 'Expected all tensors to be on the same device' wording; MPS 'Placeholder storage has not been allocated on MPS device!'",
 "exec": "bash execute_cmd.c messages (command not found / Permission denied / bad interpreter)",
}

# ----------------------------------------------------------------------------------------------
# noise
# ----------------------------------------------------------------------------------------------
GPUS = [("NVIDIA A100-SXM4-80GB", "535.129.03", 81920), ("NVIDIA H100 80GB HBM3", "550.54.15", 81559),
        ("Tesla V100-SXM2-32GB", "470.182.03", 32768), ("NVIDIA A10G", "525.85.12", 23028),
        ("NVIDIA RTX A6000", "530.30.02", 49140), ("NVIDIA L40S", "550.90.07", 46068)]
HOSTS = ["gpu-a100-017", "node0423", "ip-10-0-12-87", "dgx-h100-03", "cn-g214", "hpc-gpu12", "train-worker-2"]
USERS = ["jdoe", "mli", "akumar", "svc-train", "rgarcia", "tnguyen"]
MODELS = ["llama-7b", "gpt2-medium", "vit-b16", "t5-large", "resnet50", "mistral-7b", "bert-base-uncased", "unet-sd15"]


def ts(rng, base):
    return "2026-%02d-%02d %02d:%02d:%02d" % (base[0], base[1], base[2], base[3], base[4])


class Clock(object):
    def __init__(self, rng):
        self.t = [rng.randint(1, 11), rng.randint(1, 27), rng.randint(0, 20), rng.randint(0, 59), rng.randint(0, 59)]
        self.ms = rng.randint(0, 999)
        self.rng = rng

    def tick(self, sec=None):
        s = sec if sec is not None else self.rng.randint(0, 3)
        if s == 0:
            self.ms = min(999, self.ms + self.rng.randint(0, 150))
        else:
            self.ms = self.rng.randint(0, 999)
        self.t[4] += s
        while self.t[4] >= 60:
            self.t[4] -= 60; self.t[3] += 1
        while self.t[3] >= 60:
            self.t[3] -= 60; self.t[2] += 1
        if self.t[2] >= 24:
            self.t[2] = 23
        return self

    def iso(self):
        return "2026-%02d-%02d %02d:%02d:%02d,%03d" % (self.t[0], self.t[1], self.t[2], self.t[3], self.t[4], self.ms)

    def slurm(self):
        return "2026-%02d-%02dT%02d:%02d:%02d" % tuple(self.t)

    def glog(self):  # I1203 15:20:35.287000
        return "%02d%02d %02d:%02d:%02d.%06d" % (self.t[0], self.t[1], self.t[2], self.t[3], self.t[4], self.ms * 1000 + self.rng.randint(0, 999))

    def tf(self):
        return "2026-%02d-%02d %02d:%02d:%02d.%06d" % (self.t[0], self.t[1], self.t[2], self.t[3], self.t[4], self.ms * 1000 + self.rng.randint(0, 999))

    def vllm(self):
        return "%02d-%02d %02d:%02d:%02d" % tuple(self.t)


def nvidia_smi(rng, gpu, n):
    name, drv, mem = gpu
    cuda = {"535": "12.2", "550": "12.4", "470": "11.4", "525": "12.0", "530": "12.1"}[drv[:3]]
    L = ["+---------------------------------------------------------------------------------------+",
         "| NVIDIA-SMI %s              Driver Version: %s   CUDA Version: %s     |" % (drv, drv, cuda),
         "|-----------------------------------------+----------------------+----------------------+",
         "| GPU  Name                 Persistence-M | Bus-Id        Disp.A | Volatile Uncorr. ECC |",
         "| Fan  Temp   Perf          Pwr:Usage/Cap |         Memory-Usage | GPU-Util  Compute M. |",
         "|=========================================+======================+======================|"]
    for i in range(n):
        L.append("|   %d  %-22s On  | 00000000:%02X:00.0 Off |                    0 |" % (i, name[:22], 0x07 + i * 0x10))
        L.append("| N/A   %dC    P0              %dW / 400W |      %dMiB / %dMiB |      0%%      Default |" % (rng.randint(28, 41), rng.randint(55, 90), rng.randint(0, 7), mem))
        L.append("+-----------------------------------------+----------------------+----------------------+")
    L += ["", "+---------------------------------------------------------------------------------------+",
          "| Processes:                                                                            |",
          "|  GPU   GI   CI        PID   Type   Process name                            GPU Memory |",
          "|=======================================================================================|",
          "|  No running processes found                                                           |",
          "+---------------------------------------------------------------------------------------+"]
    return L


PIP = [("absl-py", "2.1.0"), ("accelerate", "0.27.2"), ("aiohttp", "3.9.3"), ("datasets", "2.18.0"), ("deepspeed", "0.14.0"),
       ("einops", "0.7.0"), ("filelock", "3.13.1"), ("flash-attn", "2.5.6"), ("fsspec", "2024.2.0"), ("huggingface-hub", "0.21.4"),
       ("jax", "0.4.26"), ("jaxlib", "0.4.26+cuda12.cudnn89"), ("numpy", "1.26.4"), ("nvidia-nccl-cu12", "2.19.3"),
       ("optax", "0.2.2"), ("packaging", "24.0"), ("protobuf", "4.25.3"), ("psutil", "5.9.8"), ("safetensors", "0.4.2"),
       ("sentencepiece", "0.2.0"), ("tensorboard", "2.16.2"), ("tensorflow", "2.15.1"), ("tokenizers", "0.15.2"),
       ("torch", "2.2.1"), ("tqdm", "4.66.2"), ("transformers", "4.39.1"), ("triton", "2.2.0"), ("vllm", "0.4.0"),
       ("wandb", "0.16.5"), ("xformers", "0.0.25")]


def pip_freeze(rng):
    k = rng.randint(10, len(PIP))
    return ["%s==%s" % p for p in sorted(rng.sample(PIP, k))]


def env_dump(rng, host, user, clock):
    L = ["+ hostname", host, "+ date", "Thu %s UTC 2026" % clock.slurm().replace("T", " "),
         "+ nvidia-smi -L"]
    L += ["GPU %d: NVIDIA GPU (UUID: GPU-%08x-%04x-%04x-%04x-%012x)" % (i, rng.getrandbits(32), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(16), rng.getrandbits(48)) for i in range(rng.choice([1, 2, 4, 8]))]
    L += ["+ env | grep -E 'CUDA|NCCL|SLURM|MASTER'",
          "CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7", "NCCL_DEBUG=%s" % rng.choice(["INFO", "WARN"]),
          "NCCL_SOCKET_IFNAME=%s" % rng.choice(["eth0", "ib0", "bond0"]), "MASTER_ADDR=%s" % host,
          "MASTER_PORT=%d" % rng.randint(20000, 40000), "HOME=/home/%s" % user,
          "CONDA_DEFAULT_ENV=%s" % rng.choice(["llm", "train", "jax", "tf215"])]
    return L


def config_dump(rng, model):
    keys = [("model_name_or_path", model), ("per_device_train_batch_size", rng.choice([4, 8, 16, 32])),
            ("gradient_accumulation_steps", rng.choice([1, 2, 4, 8])), ("learning_rate", rng.choice(["2e-5", "3e-4", "1e-4", "6e-4"])),
            ("weight_decay", 0.1), ("warmup_steps", rng.choice([100, 500, 2000])), ("max_steps", rng.choice([5000, 20000, 100000])),
            ("bf16", rng.choice(["true", "false"])), ("seed", rng.randint(0, 9999)), ("logging_steps", 10),
            ("save_steps", rng.choice([500, 1000, 2500])), ("output_dir", "/scratch/%s/runs/%s-%04d" % (rng.choice(USERS), model, rng.randint(0, 9999))),
            ("dataloader_num_workers", rng.choice([2, 4, 8])), ("report_to", rng.choice(["wandb", "tensorboard", "none"])),
            ("max_error_retries", 3), ("val_error_threshold", 0.05)]
    rng.shuffle(keys)
    return ["***** config *****"] + ["  %s: %s" % kv for kv in keys]


WARN_PT = [
 "/opt/conda/lib/python3.10/site-packages/torch/utils/checkpoint.py:460: UserWarning: torch.utils.checkpoint: please pass in use_reentrant=True or use_reentrant=False explicitly. The default value of use_reentrant will be updated to be False in the future. To maintain current behavior, pass use_reentrant=True. It is recommended that you use use_reentrant=False. Refer to docs for more details on the differences between the two variants.",
 "  warnings.warn(",
 "/opt/conda/lib/python3.10/site-packages/torch/_utils.py:831: UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
 "/opt/conda/lib/python3.10/site-packages/transformers/utils/generic.py:441: UserWarning: torch.utils._pytree._register_pytree_node is deprecated. Please use torch.utils._pytree.register_pytree_node instead.",
 "/opt/conda/lib/python3.10/site-packages/torch/optim/lr_scheduler.py:143: UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value of the learning rate schedule. See more details at https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
 "/opt/conda/lib/python3.10/site-packages/torch/nn/modules/module.py:1511: UserWarning: Using a target size (torch.Size([32])) that is different to the input size (torch.Size([32, 1])). This will likely lead to incorrect results due to broadcasting. Please ensure they have the same size.",
 "/opt/conda/lib/python3.10/site-packages/torch/cuda/amp/grad_scaler.py:126: UserWarning: torch.cuda.amp.GradScaler is enabled, but CUDA is not available.  Disabling.",
 "/opt/conda/lib/python3.10/site-packages/torch/distributed/fsdp/_init_utils.py:441: UserWarning: FSDP is switching to use `NO_SHARD` instead of ShardingStrategy.FULL_SHARD since the world size is 1.",
 "/opt/conda/lib/python3.10/site-packages/accelerate/accelerator.py:432: FutureWarning: Passing the following arguments to `Accelerator` is deprecated and will be removed in version 1.0 of Accelerate: dict_keys(['dispatch_batches', 'split_batches']). Please pass an `accelerate.DataLoaderConfiguration` instead: ",
 "/opt/conda/lib/python3.10/site-packages/torch/_inductor/compile_fx.py:140: UserWarning: TensorFloat32 tensor cores for float32 matrix multiplication available but not enabled. Consider setting `torch.set_float32_matmul_precision('high')` for better performance.",
 "/opt/conda/lib/python3.10/site-packages/transformers/deepspeed.py:23: FutureWarning: transformers.deepspeed module is deprecated and will be removed in a future version. Please import deepspeed modules directly from transformers.integrations",
 "`use_cache=True` is incompatible with gradient checkpointing. Setting `use_cache=False`...",
 "Token indices sequence length is longer than the specified maximum sequence length for this model (1377 > 1024). Running this sequence through the model will result in indexing errors",
]
WARN_TF = [
 "I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.",
 "To enable the following instructions: AVX2 AVX512F FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags.",
 "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT",
 "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered",
 "E external/local_xla/xla/stream_executor/cuda/cuda_blas.cc:1515] Unable to register cuBLAS factory: Attempting to register factory for plugin cuBLAS when one has already been registered",
 "I tensorflow/core/common_runtime/gpu/gpu_device.cc:1929] Created device /job:localhost/replica:0/task:0/device:GPU:0 with 78857 MB memory:  -> device: 0, name: NVIDIA A100-SXM4-80GB, pci bus id: 0000:07:00.0, compute capability: 8.0",
 "I external/local_xla/xla/service/service.cc:168] XLA service 0x7f3a5c0b2e40 initialized for platform CUDA (this does not guarantee that XLA will be used). Devices:",
 "I tensorflow/compiler/mlir/tensorflow/utils/dump_mlir_util.cc:269] disabling MLIR crash reproducer, set env var `MLIR_CRASH_REPRODUCER_DIRECTORY` to enable.",
 "I external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:454] Loaded cuDNN version 8906",
 "I0000 00:00:1712345678.123456   48213 device_compiler.h:186] Compiled cluster using XLA!  This line is logged at most once for the lifetime of the process.",
 "W tensorflow/core/kernels/data/cache_dataset_ops.cc:858] The calling iterator did not fully read the dataset being cached. In order to avoid unexpected truncation of the dataset, the partially cached contents of the dataset  will be discarded. This can happen if you have an input pipeline similar to `dataset.cache().take(k).repeat()`. You should use `dataset.take(k).cache().repeat()` instead.",
 "W tensorflow/core/framework/local_rendezvous.cc:404] Local rendezvous is aborting with status: OUT_OF_RANGE: End of sequence",
]
WARN_JAX = [
 "I0000 00:00:1712345678.555555   91823 pjrt_client.cc:452] Using BFC allocator.",
 "I0000 00:00:1712345678.556000   91823 gpu_helpers.cc:136] XLA backend allocating 63350823731 bytes on device 0 for BFCAllocator.",
 "I0000 00:00:1712345679.001234   91823 cuda_dnn.cc:530] Loaded cuDNN version 8907",
 "W external/xla/xla/service/gpu/nvptx_compiler.cc:742] The NVIDIA driver's CUDA version is 12.2 which is older than the ptxas CUDA version (12.4.131). Because the driver is older than the ptxas version, XLA is disabling parallel compilation, which may slow down compilation. You should update your NVIDIA driver or use the NVIDIA-provided CUDA forward compatibility packages.",
 "I0000 00:00:1712345690.777000   91823 service.cc:145] XLA service 0x55d5c7a4e0b0 initialized for platform CUDA (this does not guarantee that XLA will be used). Devices:",
 "WARNING:absl:Tensorflow library not found, tensorflow.io.gfile operations will use native shim calls. GCS paths (i.e. 'gs://...') cannot be accessed.",
 "I1203 10:01:02.123456 139876543210 checkpointer.py:164] Saving item to /ckpt/orbax/1000.",
 "W1203 10:01:02.223456 139876543210 utils.py:712] Using jax.numpy.DeviceArray is deprecated; use jax.Array instead.",
]


def nccl_info(rng, host, ranks):
    L = []
    ver = rng.choice(["2.18.1", "2.19.3", "2.20.5", "2.21.5"])
    for r in ranks:
        pid = rng.randint(1000, 99999)
        L.append("%s:%d:%d [%d] NCCL INFO Bootstrap : Using %s:10.%d.%d.%d<0>" % (host, pid, pid, r % 8, rng.choice(["eth0", "ib0"]), rng.randint(0, 9), rng.randint(0, 255), rng.randint(1, 254)))
        L.append("%s:%d:%d [%d] NCCL INFO cudaDriverVersion 12020" % (host, pid, pid, r % 8))
        L.append("NCCL version %s+cuda12.1" % ver if r == 0 else "%s:%d:%d [%d] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so)" % (host, pid, pid, r % 8))
        L.append("%s:%d:%d [%d] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB ib0:10.1.%d.%d<0>" % (host, pid, pid + 80, r % 8, rng.randint(0, 9), rng.randint(1, 254)))
        L.append("%s:%d:%d [%d] NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d nvmlDev %d busId %x0 commId 0x%x - Init COMPLETE" % (host, pid, pid + 80, r % 8, rng.getrandbits(44), r, len(ranks), r % 8, r % 8, 0x7 + r, rng.getrandbits(60)))
    return L


def tqdm_line(rng, done, total, extra=""):
    parts = []
    step = max(1, total // rng.randint(6, 14))
    k = 0
    for i in range(max(0, done - step * 5), done + 1, step):
        pct = int(100 * i / total)
        bar = "\u2588" * (pct // 10) + " " * (10 - pct // 10)
        parts.append("%3d%%|%s| %d/%d [%02d:%02d<%02d:%02d, %.2fit/s%s]" % (pct, bar, i, total, i // 60 % 60, i % 60, (total - i) // 60 % 60, (total - i) % 60, rng.uniform(1.1, 9.8), extra))
        k += 1
    return "\r".join(parts)


def keras_epoch(rng, epoch, epochs, steps, loss, nan_at=None):
    L = ["Epoch %d/%d" % (epoch, epochs)]
    parts = []
    for s in list(range(1, steps, max(1, steps // 12))) + [steps]:
        l = "nan" if (nan_at is not None and s >= nan_at) else "%.4f" % (loss * (1 - 0.002 * s))
        bar_done = int(30 * s / steps)
        bar = "=" * max(0, bar_done - 1) + (">" if bar_done < 30 else "=") + "." * (30 - bar_done)
        parts.append("%5d/%d [%s] - ETA: %ds - loss: %s - accuracy: %.4f" % (s, steps, bar, (steps - s) // 10, l, min(0.99, 0.3 + 0.01 * epoch + s / steps * 0.05)))
    L.append("\r".join(parts))
    vl = "nan" if nan_at is not None else "%.4f" % (loss * 0.93)
    L.append("%d/%d [==============================] - %ds %dms/step - loss: %s - accuracy: %.4f - val_loss: %s - val_accuracy: %.4f" % (steps, steps, rng.randint(40, 400), rng.randint(20, 300), "nan" if nan_at else "%.4f" % (loss * 0.97), 0.3 + 0.01 * epoch, vl, 0.31 + 0.01 * epoch))
    return L


def pt_steps(rng, n, start, loss, fmt, clock, ranks=(0,), style="plain", warn_rate=0.03, extra_noise=None):
    """per-step metric lines; style: plain, rank (torchrun [rankN]:), srun (N: ), mpi ([1,N]<stdout>:), hf (dict), ds"""
    L = []
    step = start
    for i in range(n):
        step += 1
        loss = max(0.05, loss * rng.uniform(0.990, 1.004))
        clock.tick(rng.randint(0, 2))
        r = rng.choice(ranks)
        if fmt == "hf":
            line = "{'loss': %.4f, 'grad_norm': %.4f, 'learning_rate': %.3e, 'epoch': %.2f}" % (loss, rng.uniform(0.2, 3.0), rng.uniform(1e-5, 3e-4), step / 1000.0)
        elif fmt == "megatron":
            line = " iteration %8d/  %d | consumed samples: %12d | elapsed time per iteration (ms): %.1f | learning rate: %.6E | global batch size:  %d | lm loss: %.6E | loss scale: 1.0 | grad norm: %.3f | number of skipped iterations:   0 | number of nan iterations:   0 |" % (step, 500000, step * 1024, rng.uniform(800, 2400), rng.uniform(1e-5, 3e-4), 1024, loss, rng.uniform(0.2, 2.5))
        elif fmt == "ds":
            line = "[%s] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, skipped=%d, lr=[%.6e], mom=[(0.9, 0.95)]" % (clock.iso(), step, rng.randint(0, 4), rng.uniform(1e-5, 3e-4))
        elif fmt == "jax":
            line = "I%s %d train.py:%d] [%d] train/loss=%.5f, train/learning_rate=%.6f, train/grad_norm=%.4f, steps_per_sec=%.3f" % (clock.glog(), 140000000000000 + r, 281, step, loss, rng.uniform(1e-5, 3e-4), rng.uniform(0.1, 2.0), rng.uniform(1.0, 6.0))
        elif fmt == "vllm":
            line = "INFO %s metrics.py:341] Avg prompt throughput: %.1f tokens/s, Avg generation throughput: %.1f tokens/s, Running: %d reqs, Swapped: 0 reqs, Pending: %d reqs, GPU KV cache usage: %.1f%%, CPU KV cache usage: 0.0%%." % (clock.vllm(), rng.uniform(0, 4000), rng.uniform(100, 3000), rng.randint(1, 256), rng.randint(0, 40), rng.uniform(1, 99))
        else:
            line = "%s | step %6d | loss %.4f | lr %.2e | tokens/s %d | mem %.1fGB" % (clock.iso(), step, loss, rng.uniform(1e-5, 3e-4), rng.randint(20000, 200000), rng.uniform(20, 70))
        L.append(prefix(line, r, style))
        if rng.random() < warn_rate and extra_noise:
            L.append(prefix(rng.choice(extra_noise), r, style))
    return L, step, loss


def prefix(line, r, style):
    if style == "rank":
        return "[rank%d]:%s" % (r, line) if line.startswith(("Traceback", "  ", "[rank")) is False and False else "[rank%d]:%s" % (r, line)
    if style == "srun":
        return "%d: %s" % (r, line)
    if style == "mpi":
        return "[1,%d]<stdout>:%s" % (r, line)
    if style == "mpierr":
        return "[1,%d]<stderr>:%s" % (r, line)
    return line


def pref_all(lines, r, style):
    return [prefix(l, r, style) for l in lines]


def interleave(rng, blocks):
    """blocks: list of lists; merge preserving order inside each block"""
    idx = [0] * len(blocks)
    out = []
    while True:
        live = [i for i in range(len(blocks)) if idx[i] < len(blocks[i])]
        if not live:
            return out
        i = rng.choice(live)
        k = rng.randint(1, 3)
        out.extend(blocks[i][idx[i]:idx[i] + k])
        idx[i] += k


def tb(frames, final, chained=None):
    L = []
    if chained:
        L += chained
    L.append("Traceback (most recent call last):")
    for f, ln, fn, code in frames:
        L.append('  File "%s", line %d, in %s' % (f, ln, fn))
        if code:
            L.append("    " + code)
    L += final if isinstance(final, list) else [final]
    return L


SP = "/opt/conda/lib/python3.10/site-packages"


def user_frames(rng, script="train.py"):
    return [("/workspace/%s" % script, rng.randint(300, 900), "<module>", "main()"),
            ("/workspace/%s" % script, rng.randint(100, 290), "main", "trainer.train()")]


def hf_frames(rng):
    return [(SP + "/transformers/trainer.py", 1624, "train", "return inner_training_loop("),
            (SP + "/transformers/trainer.py", 1961, "_inner_training_loop", "tr_loss_step = self.training_step(model, inputs)"),
            (SP + "/transformers/trainer.py", 2902, "training_step", "loss = self.compute_loss(model, inputs)"),
            (SP + "/transformers/trainer.py", 2925, "compute_loss", "outputs = model(**inputs)"),
            (SP + "/torch/nn/modules/module.py", 1511, "_wrapped_call_impl", "return self._call_impl(*args, **kwargs)"),
            (SP + "/torch/nn/modules/module.py", 1520, "_call_impl", "return forward_call(*args, **kwargs)")]


def torchrun_summary(rng, clock, host, rank, exitcode, others=(), sig=None):
    pid = rng.randint(10000, 99999)
    L = ["Traceback (most recent call last):",
         '  File "/opt/conda/bin/torchrun", line 8, in <module>',
         "    sys.exit(main())",
         '  File "%s/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 347, in wrapper' % SP,
         "    return f(*args, **kwargs)",
         '  File "%s/torch/distributed/run.py", line 812, in main' % SP,
         "    run(args)",
         '  File "%s/torch/distributed/run.py", line 803, in run' % SP,
         "    elastic_launch(",
         '  File "%s/torch/distributed/launcher/api.py", line 135, in __call__' % SP,
         "    return launch_agent(self._config, self._entrypoint, list(args))",
         '  File "%s/torch/distributed/launcher/api.py", line 268, in launch_agent' % SP,
         "    raise ChildFailedError(",
         "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ",
         "============================================================",
         "train.py FAILED",
         "------------------------------------------------------------",
         "Failures:"]
    if not others:
        L.append("  <NO_OTHER_FAILURES>")
    for k, (o, oc) in enumerate(others):
        L += ["[%d]:" % (k + 1), "  time      : %s" % clock.slurm().replace("T", "_"), "  host      : %s" % host,
              "  rank      : %d (local_rank: %d)" % (o, o % 8), "  exitcode  : %d (pid: %d)" % (oc, pid + o + 1),
              "  error_file: <N/A>", "  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html"]
    L += ["------------------------------------------------------------", "Root Cause (first observed failure):", "[0]:",
          "  time      : %s" % clock.slurm().replace("T", "_"), "  host      : %s" % host,
          "  rank      : %d (local_rank: %d)" % (rank, rank % 8), "  exitcode  : %d (pid: %d)" % (exitcode, pid),
          "  error_file: <N/A>"]
    if sig:
        L.append("  traceback : Signal %d (%s) received by PID %d" % (-exitcode, sig, pid))
    else:
        L.append("  traceback : To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html")
    L.append("============================================================")
    return L


def wandb_teardown(rng, ok=True):
    run = "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(8))
    L = ["wandb: Waiting for W&B process to finish... (%s)." % ("success" if ok else "failed 1"),
         "wandb: - 0.012 MB of 0.012 MB uploaded\rwandb: \\ 0.045 MB of 0.045 MB uploaded\rwandb: | 0.045 MB of 0.045 MB uploaded",
         "wandb: ", "wandb: Run history:", "wandb:   train/loss \u2588\u2586\u2585\u2584\u2583\u2583\u2582\u2582\u2581\u2581",
         "wandb:   train/lr \u2581\u2583\u2585\u2588\u2588\u2587\u2587\u2586\u2586\u2585", "wandb: ", "wandb: Run summary:",
         "wandb:   train/loss %.4f" % rng.uniform(0.5, 3), "wandb: ",
         "wandb: \U0001f680 View run %s at: https://wandb.ai/team/proj/runs/%s" % (rng.choice(MODELS) + "-sweep", run),
         "wandb: Synced 6 W&B file(s), 0 media file(s), 2 artifact file(s) and 0 other file(s)",
         "wandb: Find logs at: ./wandb/run-2026%02d%02d_%02d%02d%02d-%s/logs" % (rng.randint(1, 12), rng.randint(1, 28), rng.randint(0, 23), rng.randint(0, 59), rng.randint(0, 59), run)]
    return L


def slurm_header(rng, jobid, host, nodes, clock):
    return ["SLURM_JOB_ID=%d" % jobid, "SLURM_JOB_NODELIST=%s" % host, "SLURM_NNODES=%d" % nodes,
            "SLURM_NTASKS=%d" % (nodes * 8), "Job started at %s on %s" % (clock.slurm(), host)]


def pick_len(rng):
    u = rng.random()
    if u < 0.2:
        return rng.randint(40, 150)
    if u < 0.75:
        return rng.randint(150, 600)
    return rng.randint(600, 1500)


# ----------------------------------------------------------------------------------------------
# generic job builder
# ----------------------------------------------------------------------------------------------
class Job(object):
    def __init__(self, rng, style=None, fmt=None, world=None):
        self.rng = rng
        self.tclock = Clock(rng)
        self.clock = Clock(rng)
        self.clock.t = list(self.tclock.t)
        self.gpu = rng.choice(GPUS)
        self.host = rng.choice(HOSTS)
        self.user = rng.choice(USERS)
        self.model = rng.choice(MODELS)
        self.world = world or rng.choice([1, 2, 4, 8])
        self.style = style or rng.choice(["plain", "rank", "srun"])
        self.fmt = fmt or rng.choice(["plain", "hf", "megatron", "ds"])
        self.jobid = rng.randint(1000000, 9999999)
        self.step = rng.choice([0, 0, 1000, 25000])
        self.loss = rng.uniform(1.8, 7.5)
        self.target = pick_len(rng)
        self.endstep = self.step + max(8, self.target - 60)
        for _ in range(self.target // 30 + 1):
            self.clock.tick(30)

    def preamble(self, sched=None, tf=False, jax=False):
        rng = self.rng
        L = []
        if sched == "slurm":
            L += slurm_header(rng, self.jobid, self.host, max(1, self.world // 8), self.tclock)
        elif sched == "pbs":
            L += ["PBS_JOBID=%d.pbs01" % self.jobid, "PBS_O_WORKDIR=/home/%s/proj" % self.user, "Running on %s" % self.host]
        elif sched == "k8s":
            L += ["%sZ INFO  starting container trainer in pod %s-worker-0 (ns ml-train)" % (self.tclock.slurm(), self.model)]
        if rng.random() < 0.7:
            L += env_dump(rng, self.host, self.user, self.tclock)
        if rng.random() < 0.6:
            L += nvidia_smi(rng, self.gpu, min(8, self.world))
        if rng.random() < 0.4:
            L += ["+ pip freeze"] + pip_freeze(rng)
        if tf:
            L += ["%s: %s" % (self.tclock.tf(), w) for w in rng.sample(WARN_TF, rng.randint(4, 8))]
        if jax:
            L += rng.sample(WARN_JAX, rng.randint(3, 6))
        if self.world > 1 and rng.random() < 0.7:
            L += nccl_info(rng, self.host, list(range(min(self.world, 8))))
        if rng.random() < 0.7:
            L += config_dump(rng, self.model)
        if rng.random() < 0.6:
            L += rng.sample(WARN_PT, rng.randint(1, 4))
        return L

    def train(self, n=None, fmt=None, warn=WARN_PT):
        n = n if n is not None else max(5, self.target)
        lines, self.step, self.loss = pt_steps(self.rng, n, self.step, self.loss, fmt or self.fmt, self.tclock,
                                               ranks=list(range(min(self.world, 8))), style=self.style, extra_noise=warn)
        return lines

    def fill(self, pre, post_len):
        """number of training lines so that total ~ target"""
        return max(8, self.target - pre - post_len)

    def pr(self, lines, r):
        return pref_all(lines, r, self.style if self.style != "plain" else "plain")


def build(job, pre, fail, post, train_fmt=None, warn=WARN_PT):
    n = job.fill(len(pre), len(fail) + len(post))
    body = job.train(n, fmt=train_fmt, warn=warn)
    return pre + body + fail + post


# ----------------------------------------------------------------------------------------------
# scenarios: each returns (lines, exit_code, provenance, gpu_known)
# ----------------------------------------------------------------------------------------------
def oom_pt2_block(rng, gi=0):
    tot = rng.choice([79.15, 39.39, 23.68, 44.35])
    free = rng.uniform(0.05, 1.5)
    alloc = rng.uniform(tot * 0.7, tot * 0.9)
    resv = rng.uniform(0.1, 2.5)
    ask = rng.choice(["2.00 GiB", "512.00 MiB", "1.95 GiB", "784.00 MiB", "4.00 GiB", "20.00 MiB"])
    return ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %s. GPU %d has a total capacity of %.2f GiB of which %.2f GiB is free. Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and %.2f GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)" % (ask, gi, tot, free, tot - free, alloc, resv)]


def s_cuda_oom(rng, v):
    if v == 0:  # torchrun DDP/FSDP 2.x, one rank OOMs, others get watchdog/sigterm
        job = Job(rng, style="rank", fmt="hf", world=rng.choice([4, 8]))
        bad = rng.randrange(job.world)
        pre = job.preamble("slurm")
        fr = user_frames(rng) + hf_frames(rng) + [(SP + "/torch/distributed/fsdp/fully_sharded_data_parallel.py", 849, "forward", "output = self._fsdp_wrapped_module(*args, **kwargs)"),
                                                  (SP + "/transformers/models/llama/modeling_llama.py", 1176, "forward", "logits = logits.float()")]
        fail = job.pr(tb(fr, oom_pt2_block(rng, bad % 8)), bad)
        post = ["W%s %d site-packages/torch/distributed/elastic/multiprocessing/api.py:851] Sending process %d closing signal SIGTERM" % (job.clock.glog(), rng.randint(1000, 9999), rng.randint(10000, 99999)) for _ in range(job.world - 1)]
        post += ["E%s %d site-packages/torch/distributed/elastic/multiprocessing/api.py:826] failed (exitcode: 1) local_rank: %d (pid: %d) of binary: /opt/conda/bin/python" % (job.clock.glog(), rng.randint(1000, 9999), bad, rng.randint(10000, 99999))]
        post += torchrun_summary(rng, job.clock, job.host, bad, 1)
        post += ["srun: error: %s: task 0: Exited with exit code 1" % job.host]
        return build(job, pre, fail, post), 1, P["pt_oom2"], job.gpu
    if v == 1:  # 1.x wording, plain python, RuntimeError
        job = Job(rng, style="plain", fmt="plain", world=1)
        pre = job.preamble(None)
        total = rng.choice([15.78, 31.75, 10.76, 23.65])
        fail = tb(user_frames(rng) + [("/workspace/engine.py", 211, "train_one_epoch", "outputs = model(samples)"),
                                      (SP + "/torch/nn/modules/module.py", 1110, "_call_impl", "return forward_call(*input, **kwargs)")],
                  "RuntimeError: CUDA out of memory. Tried to allocate %d.00 MiB (GPU 0; %.2f GiB total capacity; %.2f GiB already allocated; %.2f MiB free; %.2f GiB reserved in total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to avoid fragmentation.  See documentation for Memory Management and PYTORCH_CUDA_ALLOC_CONF" % (rng.choice([20, 64, 128, 256, 1024]), total, total * 0.9, rng.uniform(2, 40), total * 0.93))
        return build(job, pre, fail, []), 1, P["pt_oom1"], job.gpu
    if v == 2:  # JAX XLA
        job = Job(rng, style="plain", fmt="jax", world=1)
        pre = job.preamble(None, jax=True)
        n = rng.randint(1, 9) * 1000000000 + rng.randint(0, 999999999)
        fail = ["W%s %d bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate %.2fGiB (rounded to %d)requested by op " % (job.clock.glog(), 91823, n / 2 ** 30, n),
                "W%s %d bfc_allocator.cc:491] ****************************************************************************************************_" % (job.clock.glog(), 91823),
                "E%s %d pjrt_stream_executor_client.cc:2826] Execution of replica 0 failed: RESOURCE_EXHAUSTED: Out of memory while trying to allocate %d bytes." % (job.clock.glog(), 91823, n)]
        fail += tb([("/workspace/train.py", 412, "<module>", "app.run(main)"), (SP + "/absl/app.py", 308, "run", "_run_main(main, args)"),
                    (SP + "/absl/app.py", 254, "_run_main", "sys.exit(main(argv))"), ("/workspace/train.py", 377, "main", "state, metrics = p_train_step(state, batch)")],
                   ["jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate %d bytes." % n,
                    "BufferAssignment OOM Debugging.", "BufferAssignment stats:",
                    "             parameter allocation:    %.2fGiB" % rng.uniform(1, 8), "              constant allocation:    48.5KiB",
                    "        maybe_live_out allocation:    %.2fGiB" % rng.uniform(1, 9), "     preallocated temp allocation:    %.2fGiB" % (n / 2 ** 30),
                    "                 total allocation:   %.2fGiB" % rng.uniform(12, 30), "              total fragmentation:  680.30MiB (4.60%)",
                    "--------------------", "For simplicity, JAX has removed its internal frames from the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to include these."])
        return build(job, pre, fail, [], train_fmt="jax", warn=WARN_JAX), 1, P["jax_oom"], job.gpu
    if v == 3:  # TF/Keras
        job = Job(rng, style="plain", fmt="plain", world=1)
        pre = job.preamble(None, tf=True)
        body = []
        for e in range(1, rng.randint(2, 5)):
            body += keras_epoch(rng, e, 50, rng.choice([250, 938, 1563]), job.loss * (0.9 ** e))
        shape = "[%d,%d,%d,%d]" % (rng.choice([64, 128, 256]), rng.choice([56, 112, 224]), rng.choice([56, 112, 224]), rng.choice([64, 128, 256]))
        fail = ["%s: W tensorflow/core/common_runtime/bfc_allocator.cc:485] ****************************************************************************************xxxxxxxxxxxx" % job.clock.tf(),
                "%s: W tensorflow/core/framework/op_kernel.cc:1839] OP_REQUIRES failed at conv_ops.cc:684 : RESOURCE_EXHAUSTED: OOM when allocating tensor with shape%s and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc" % (job.clock.tf(), shape)]
        fail += tb([("/workspace/train_keras.py", 188, "<module>", "history = model.fit(train_ds, validation_data=val_ds, epochs=50, callbacks=cbs)"),
                    (SP + "/keras/src/utils/traceback_utils.py", 70, "error_handler", "raise e.with_traceback(filtered_tb) from None"),
                    (SP + "/tensorflow/python/eager/execute.py", 53, "quick_execute", "tensors = pywrap_tfe.TFE_Py_Execute(ctx._handle, device_name, op_name,")],
                   ["tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:", "",
                    "Detected at node sequential/conv2d_3/Conv2D defined at (most recent call last):",
                    '  File "/workspace/train_keras.py", line 188, in <module>', "",
                    "OOM when allocating tensor with shape%s and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc" % shape,
                    "\t [[{{node sequential/conv2d_3/Conv2D}}]]",
                    "Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info. This isn't available when running in Eager mode.",
                    " [Op:__inference_train_function_8213]"])
        return pre + body + fail, 1, P["tf_oom"], job.gpu
    if v == 4:  # vLLM
        job = Job(rng, style="plain", fmt="vllm", world=1)
        c = job.clock
        pid = rng.randint(1000, 99999)
        L = ["INFO %s api_server.py:212] vLLM API server version 0.6.3.post1" % c.vllm(),
             "INFO %s api_server.py:213] args: Namespace(host='0.0.0.0', port=8000, model='/models/%s', tensor_parallel_size=1, gpu_memory_utilization=%.2f, max_model_len=32768, enforce_eager=False)" % (c.vllm(), job.model, rng.choice([0.5, 0.85, 0.9, 0.95])),
             "WARNING %s arg_utils.py:953] Chunked prefill is enabled by default for models with max_model_len > 32K. Currently, chunked prefill might not work with some features or models." % c.vllm(),
             "INFO %s llm_engine.py:237] Initializing an LLM engine (v0.6.3.post1) with config: model='/models/%s', dtype=torch.bfloat16, max_seq_len=32768, seed=0" % (c.vllm(), job.model),
             "INFO %s selector.py:135] Using Flash Attention backend." % c.vllm(),
             "INFO %s model_runner.py:1060] Starting to load model /models/%s..." % (c.vllm(), job.model)]
        L += ["Loading safetensors checkpoint shards: " + "\r".join("%3d%% Completed | %d/4 [00:%02d<00:%02d,  %.2fs/it]" % (k * 25, k, k * 3, (4 - k) * 3, rng.uniform(2, 4)) for k in range(5))]
        L += ["INFO %s model_runner.py:1071] Loading model weights took %.4f GB" % (c.tick().vllm(), rng.uniform(13, 16)),
              "INFO %s gpu_executor.py:122] # GPU blocks: 0, # CPU blocks: 2048" % c.tick().vllm(),
              "Process SpawnProcess-1:"]
        L += tb([("/usr/lib/python3.10/multiprocessing/process.py", 314, "_bootstrap", "self.run()"),
                 (SP + "/vllm/engine/multiprocessing/engine.py", 390, "run_mp_engine", "engine = MQLLMEngine.from_engine_args(engine_args=engine_args,"),
                 (SP + "/vllm/executor/gpu_executor.py", 125, "initialize_cache", "self.driver_worker.initialize_cache(num_gpu_blocks, num_cpu_blocks)"),
                 (SP + "/vllm/worker/worker.py", 264, "initialize_cache", "raise_if_cache_size_invalid(num_gpu_blocks,"),
                 (SP + "/vllm/worker/worker.py", 493, "raise_if_cache_size_invalid", 'raise ValueError("No available memory for the cache blocks. "')],
                "ValueError: No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing the engine.")
        L += tb([("/usr/local/bin/vllm", 8, "<module>", "sys.exit(main())"), (SP + "/vllm/entrypoints/openai/api_server.py", 585, "run_server", "async with build_async_engine_client(args) as engine_client:"),
                 (SP + "/vllm/entrypoints/openai/api_server.py", 192, "build_async_engine_client_from_engine_args", 'raise RuntimeError(')],
                "RuntimeError: Engine process failed to start")
        L += ["/usr/lib/python3.10/multiprocessing/resource_tracker.py:224: UserWarning: resource_tracker: There appear to be 1 leaked shared_memory objects to clean up at shutdown",
              "  warnings.warn('resource_tracker: There appear to be %d '"]
        return L, 1, P["vllm_oom"], job.gpu
    if v == 5:  # DeepSpeed ZeRO-3 via srun --label, OOM on one rank, NCCL consequences on others
        job = Job(rng, style="srun", fmt="ds", world=8)
        bad = rng.randrange(8)
        pre = job.preamble("slurm")
        fr = [("/workspace/pretrain.py", 402, "<module>", "main()"), ("/workspace/pretrain.py", 377, "main", "model_engine.backward(loss)"),
              (SP + "/deepspeed/utils/nvtx.py", 15, "wrapped_fn", "ret_val = func(*args, **kwargs)"),
              (SP + "/deepspeed/runtime/engine.py", 1976, "backward", "self.optimizer.backward(loss, retain_graph=retain_graph)"),
              (SP + "/deepspeed/runtime/zero/stage3.py", 2213, "backward", "self.loss_scaler.backward(loss.float(), retain_graph=retain_graph)"),
              (SP + "/torch/autograd/__init__.py", 266, "backward", "Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass")]
        fail = pref_all(tb(fr, oom_pt2_block(rng, bad)), bad, "srun")
        others = []
        for r in range(8):
            if r != bad:
                others.append(pref_all(["[%s] [E ProcessGroupNCCL.cpp:475] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=_ALLGATHER_BASE, NumelIn=%d, NumelOut=%d, Timeout(ms)=1800000) ran for 1800%03d milliseconds before timing out." % (job.clock.iso(), r, 88231, 4194304, 33554432, rng.randint(0, 999))], r, "srun"))
        post = interleave(rng, others)
        post += ["srun: error: %s: task %d: Exited with exit code 1" % (job.host, bad), "srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
                 "slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (job.jobid, job.host, job.clock.tick(30).slurm()),
                 "srun: error: %s: tasks %s: Terminated" % (job.host, ",".join(str(r) for r in range(8) if r != bad))]
        return build(job, pre, fail, post), 1, P["pt_oom2"] + "; " + P["nccl_wd"], job.gpu
    # v == 6: torch.compile inductor autotune OOM re-raised
    job = Job(rng, style="plain", fmt="plain", world=1)
    pre = job.preamble(None) + ["[%s] torch._dynamo.eval_frame: [INFO] Compiling graph for model.forward (mode=max-autotune)" % job.clock.iso()]
    fail = tb(user_frames(rng) + [(SP + "/torch/_dynamo/eval_frame.py", 451, "_fn", "return fn(*args, **kwargs)"),
                                  (SP + "/torch/_inductor/compile_fx.py", 1100, "compile_fx", "return aot_autograd("),
                                  (SP + "/torch/_inductor/codecache.py", 2317, "run", "return self.kernel(*args)")],
              ["torch._dynamo.exc.BackendCompilerFailed: backend='inductor' raised:"] + oom_pt2_block(rng, 0) +
              ["", "Set TORCH_LOGS=\"+dynamo\" and TORCHDYNAMO_VERBOSE=1 for more information", "",
               "", "You can suppress this exception and fall back to eager by setting:", "    import torch._dynamo", "    torch._dynamo.config.suppress_errors = True"])
    return build(job, pre, fail, []), 1, P["pt_oom2"] + "; " + P["inductor"], job.gpu


def s_nccl(rng, v):
    job = Job(rng, style=rng.choice(["rank", "srun"]), fmt=rng.choice(["hf", "megatron", "plain"]), world=8)
    pre = job.preamble("slurm")
    c = job.clock
    if v in (0, 1, 2):  # watchdog hang, all ranks
        op = rng.choice(["ALLREDUCE", "_ALLGATHER_BASE", "_REDUCE_SCATTER_BASE", "BROADCAST"])
        seq = rng.randint(100, 90000)
        blocks = []
        for r in range(8):
            b = ["[E%s ProcessGroupNCCL.cpp:%d] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 6000%02d milliseconds before timing out." % (c.glog(), 607 if v else 1537, r, seq, op, 466119168, 466119168, rng.randint(0, 99)),
                 "[E%s ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank %d] Exception (either an error or timeout) detected by watchdog at work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d." % (c.glog(), r, seq, seq + 2, seq - 1),
                 "[E%s ProcessGroupNCCL.cpp:621] [Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data." % (c.glog(), r),
                 "[E%s ProcessGroupNCCL.cpp:627] [Rank %d] To avoid data inconsistency, we are taking the entire process down." % (c.glog(), r)]
            if v == 2:
                b = ["[E ProcessGroupNCCL.cpp:828] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, Timeout(ms)=1800000) ran for 18%05d milliseconds before timing out." % (r, seq, op, rng.randint(0, 9999)),
                     "[E ProcessGroupNCCL.cpp:455] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.",
                     "[E ProcessGroupNCCL.cpp:460] To avoid data inconsistency, we are taking the entire process down.",
                     "terminate called after throwing an instance of 'std::runtime_error'",
                     "  what():  [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, Timeout(ms)=1800000) ran for 18%05d milliseconds before timing out." % (r, seq, op, rng.randint(0, 9999))]
            else:
                b += ["terminate called after throwing an instance of 'c10::DistBackendError'",
                      "  what():  [PG 0 (default_pg) Rank %d] Process group watchdog thread terminated with exception: [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=%s, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 6000%02d milliseconds before timing out." % (r, r, seq, op, 466119168, 466119168, rng.randint(0, 99)),
                      "Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:609 (most recent call first):",
                      "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f%010x in %s/torch/lib/libc10.so)" % (rng.getrandbits(36), SP),
                      "frame #1: c10d::ProcessGroupNCCL::WorkNCCL::checkTimeout(std::optional<std::chrono::duration<long, std::ratio<1l, 1000l> > >) + 0x1d2 (0x7f%010x in %s/torch/lib/libtorch_cuda.so)" % (rng.getrandbits(36), SP),
                      "frame #2: <unknown function> + 0xdc253 (0x7f%010x in /lib/x86_64-linux-gnu/libstdc++.so.6)" % rng.getrandbits(36)]
            blocks.append(pref_all(b, r, job.style))
        fail = interleave(rng, blocks)
        post = ["W%s 8123 torch/distributed/elastic/multiprocessing/api.py:858] Sending process %d closing signal SIGTERM" % (c.glog(), rng.randint(10000, 99999)) for _ in range(3)]
        post += torchrun_summary(rng, c, job.host, 0, -6, others=[(r, -6) for r in range(1, 4)], sig="SIGABRT")
        post += ["srun: error: %s: task 0: Exited with exit code 1" % job.host]
        return build(job, pre, fail, post), 1, P["nccl_wd"], job.gpu
    if v == 3:  # NCCL system error on one rank -> DistBackendError
        bad = rng.randrange(8)
        host2 = rng.choice(HOSTS)
        fail = pref_all(["%s:%d:%d [%d] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer %s.cluster.local<%d>" % (job.host, 4412, 5530, bad, host2, rng.randint(30000, 60000)),
                         "%s:%d:%d [%d] NCCL INFO transport/net_socket.cc:474 -> 6" % (job.host, 4412, 5530, bad)] +
                        tb(user_frames(rng) + [(SP + "/torch/nn/parallel/distributed.py", 1589, "forward", "inputs, kwargs = self._pre_forward(*inputs, **kwargs)"),
                                               (SP + "/torch/nn/parallel/distributed.py", 1480, "_pre_forward", "self._sync_buffers()")],
                           ["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, remote process exited or there was a network error, NCCL version 2.19.3",
                            "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.",
                            "Last error:", "Net : Connection closed by remote peer %s.cluster.local<%d>" % (host2, rng.randint(30000, 60000))]), bad, job.style)
        post = torchrun_summary(rng, c, job.host, bad, 1)
        return build(job, pre, fail, post), 1, P["nccl_err"], job.gpu
    if v == 4:  # 1.x unhandled system error at init (IB)
        fail = []
        for r in range(rng.randint(2, 8)):
            fail += pref_all(tb(user_frames(rng) + [(SP + "/torch/nn/parallel/distributed.py", 646, "__init__", "_verify_param_shape_across_processes(self.process_group, parameters)"),
                                                    (SP + "/torch/distributed/utils.py", 89, "_verify_param_shape_across_processes", "return dist._verify_params_across_processes(process_group, tensors, logger)")],
                                ["RuntimeError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1191, unhandled system error, NCCL version 2.10.3",
                                 "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. It can be also caused by unexpected exit of a remote peer, you can check NCCL warnings for failure reason and see if there is connection closure by a peer."]), r, job.style)
        job.target = min(job.target, 300)
        return pre[:60] + fail + ["ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: 1) local_rank: 0 (pid: %d) of binary: /opt/conda/bin/python" % rng.randint(1000, 99999)], 1, P["nccl_err"], job.gpu
    if v == 5:  # c10d store timeout at rendezvous
        L = pre[:80] + ["[W socket.cpp:663] [c10d] The client socket has failed to connect to [%s]:29500 (errno: 111 - Connection refused)." % job.host for _ in range(rng.randint(3, 30))]
        L += tb(user_frames(rng) + [(SP + "/torch/distributed/c10d_logger.py", 86, "wrapper", "func_return = func(*args, **kwargs)"),
                                    (SP + "/torch/distributed/distributed_c10d.py", 1305, "init_process_group", "store, rank, world_size = next(rendezvous_iterator)"),
                                    (SP + "/torch/distributed/rendezvous.py", 246, "_env_rendezvous_handler", "store = _create_c10d_store(master_addr, master_port, rank, world_size, timeout, use_libuv)")],
                ["torch.distributed.DistStoreError: Timed out after 1801 seconds waiting for clients. %d/%d clients joined." % (rng.randint(1, 7), 8)])
        L += ["srun: error: %s: task 0: Exited with exit code 1" % job.host]
        return L, 1, P["store"], job.gpu
    # v == 6 gloo/mpi: IB completion error
    fail = []
    for r in rng.sample(range(8), 3):
        fail += pref_all(["%s:%d:%d [%d] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.1.%d.%d<%d> with error 12, opcode 0, len 0, vendor err 129 (Send)" % (job.host, 3321 + r, 3400 + r, r, rng.randint(0, 9), rng.randint(1, 254), rng.randint(30000, 60000)),
                          "%s:%d:%d [%d] NCCL INFO include/net.h:35 -> 6" % (job.host, 3321 + r, 3400 + r, r)], r, "mpierr")
    fail += pref_all(tb(user_frames(rng), ["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.18.1",
                                            "ncclSystemError: System call (e.g. socket, malloc) or external library call failed or device error. ", "Last error:",
                                            "NET/IB : Got completion from peer 10.1.3.17<41234> with error 12, opcode 0, len 0, vendor err 129 (Send)"]), 0, "mpierr")
    post = ["--------------------------------------------------------------------------",
            "Primary job  terminated normally, but 1 process returned", "a non-zero exit code. Per user-direction, the job has been aborted.",
            "--------------------------------------------------------------------------",
            "--------------------------------------------------------------------------",
            "mpirun detected that one or more processes exited with non-zero status, thus causing", "the job to be terminated. The first process to do so was:", "",
            "  Process name: [[%d,1],0]" % rng.randint(10000, 60000), "  Exit code:    1", "--------------------------------------------------------------------------"]
    job.style = "mpi"
    return build(job, pre, fail, post), 1, P["nccl_err"] + "; Open MPI orterun error text (ompi/orte help-orterun.txt)", job.gpu


def s_cuda_runtime(rng, v):
    job = Job(rng, style=rng.choice(["plain", "rank", "srun"]), world=rng.choice([1, 4, 8]))
    pre = job.preamble(rng.choice([None, "slurm"]))
    r = rng.randrange(min(job.world, 8))
    async_tail = ["CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                  "For debugging consider passing CUDA_LAUNCH_BLOCKING=1", "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]
    if v == 0:
        fail = job.pr(tb(user_frames(rng) + [("/workspace/model.py", 88, "forward", "attn = flash_attn_func(q, k, v, causal=True)")], ["RuntimeError: CUDA error: an illegal memory access was encountered"] + async_tail), r)
    elif v == 1:  # device assert
        asserts = ['../aten/src/ATen/native/cuda/IndexKernel.cu:92: operator(): block: [%d,0,0], thread: [%d,0,0] Assertion `-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.' % (rng.randint(0, 900), t) for t in range(rng.randint(3, 40))]
        fail = job.pr(asserts + tb(user_frames(rng) + [(SP + "/torch/nn/functional.py", 2237, "embedding", "return torch.embedding(weight, input, padding_idx, scale_grad_by_freq, sparse)")], ["RuntimeError: CUDA error: device-side assert triggered"] + async_tail), r)
    elif v == 2:  # cublas
        fail = job.pr(tb(user_frames(rng) + [(SP + "/torch/nn/modules/linear.py", 116, "forward", "return F.linear(input, self.weight, self.bias)")],
                         "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16F, lda, b, CUDA_R_16F, ldb, &fbeta, c, CUDA_R_16F, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`"), r)
    elif v == 3:  # cudnn 1.x wrapped in chained exception
        first = tb(user_frames(rng) + [(SP + "/torch/nn/modules/conv.py", 443, "_conv_forward", "return F.conv2d(input, weight, bias, self.stride,")], "RuntimeError: cuDNN error: CUDNN_STATUS_EXECUTION_FAILED")
        second = tb([("/workspace/train.py", 512, "<module>", "main()"), ("/workspace/train.py", 498, "main", "raise RuntimeError(f\"training step {step} failed\") from e")], "RuntimeError: training step %d failed" % rng.randint(100, 90000))
        fail = job.pr(first + ["", "The above exception was the direct cause of the following exception:", ""] + second, r)
    elif v == 4:  # no kernel image
        fail = job.pr(tb(user_frames(rng), ["RuntimeError: CUDA error: no kernel image is available for execution on the device"] + async_tail), r)
    elif v == 5:  # TF cudnn handle -> check failed abort (root cause cudnn)
        pre = job.preamble(None, tf=True)
        c = job.clock
        fail = ["%s: E tensorflow/stream_executor/cuda/cuda_dnn.cc:371] could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR" % c.tf(),
                "%s: E tensorflow/stream_executor/cuda/cuda_dnn.cc:338] could not destroy cudnn handle: CUDNN_STATUS_BAD_PARAM" % c.tf(),
                "%s: F tensorflow/core/kernels/conv_ops.cc:672] Check failed: stream->parent()->GetConvolveAlgorithms( conv_parameters.ShouldIncludeWinogradNonfusedAlgo<T>(), &algorithms) " % c.tf(),
                "Aborted (core dumped)"]
        job.target = min(job.target, 400)
        return pre + keras_epoch(rng, 1, 30, 469, job.loss, None)[:1] + fail, 134, P["cudnn_tf"], job.gpu
    else:  # unspecified launch failure during backward, then CUDA error in a chained 'During handling'
        first = tb(user_frames(rng) + [(SP + "/torch/_tensor.py", 522, "backward", "torch.autograd.backward(")], ["RuntimeError: CUDA error: unspecified launch failure"] + async_tail)
        second = tb([("/workspace/train.py", 530, "<module>", "main()"), ("/workspace/train.py", 520, "main", "save_checkpoint(model, optimizer, step, emergency=True)"),
                     (SP + "/torch/serialization.py", 629, "save", "_save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)")], ["RuntimeError: CUDA error: unspecified launch failure"] + async_tail)
        fail = job.pr(first + ["", "During handling of the above exception, another exception occurred:", ""] + second, r)
    post = []
    if job.world > 1:
        post = torchrun_summary(rng, job.clock, job.host, r, 1)
    return build(job, pre, fail, post), 1, P["cuda_rt"] + ("; " + P["cublas"] if v == 2 else ""), job.gpu


def s_gpu_hw(rng, v):
    job = Job(rng, style=rng.choice(["rank", "srun"]), fmt=rng.choice(["hf", "megatron", "ds"]), world=8)
    pre = job.preamble("slurm")
    c = job.clock
    bad = rng.randrange(8)
    bus = "0000:%02x:00" % (0x07 + bad * 0x10)
    pid = rng.randint(10000, 99999)
    if v in (0, 1):  # Xid 79 fallen off bus; dmesg appended by prolog/epilog; others NCCL
        k = ["[%d.%06d] NVRM: GPU at PCI:%s: GPU-%08x-%04x" % (rng.randint(100000, 999999), rng.randint(0, 999999), bus, rng.getrandbits(32), rng.getrandbits(16)),
             "[%d.%06d] NVRM: Xid (PCI:%s): 79, pid=%d, GPU has fallen off the bus." % (rng.randint(100000, 999999), rng.randint(0, 999999), bus, pid),
             "[%d.%06d] NVRM: GPU %s.0: GPU has fallen off the bus." % (rng.randint(100000, 999999), rng.randint(0, 999999), bus)]
        badl = job.pr(tb(user_frames(rng), ["RuntimeError: CUDA error: unspecified launch failure", "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.", "For debugging consider passing CUDA_LAUNCH_BLOCKING=1"]), bad)
        others = [job.pr(["[E%s ProcessGroupNCCL.cpp:607] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for 6000%02d milliseconds before timing out." % (c.glog(), r, 51234, 1048576, 1048576, rng.randint(0, 99))], r) for r in range(8) if r != bad]
        fail = badl + interleave(rng, others)
        post = ["srun: error: %s: task %d: Exited with exit code 1" % (job.host, bad), "==== epilog: dmesg -T | tail ===="] + k + \
               ["+ nvidia-smi", "Unable to determine the device handle for GPU %s.0: GPU is lost.  Reboot the system to recover this GPU" % bus.upper()]
        if v == 1:
            post = k + post[:2]  # kernel lines captured to job output via syslog forwarder before srun
        return build(job, pre, fail, post), 1, P["xid"] + "; " + P["nccl_wd"], job.gpu
    if v in (2, 3):  # ECC uncorrectable
        fail = job.pr(tb(user_frames(rng) + [(SP + "/torch/optim/adamw.py", 599, "_multi_tensor_adamw", "exp_avg_sq_sqrt = torch._foreach_sqrt(device_exp_avg_sqs)")],
                         ["RuntimeError: CUDA error: uncorrectable ECC error encountered", "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.",
                          "For debugging consider passing CUDA_LAUNCH_BLOCKING=1", "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.", ""]), bad)
        xid = "NVRM: Xid (PCI:%s): 48, pid=%d, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition %d, subpartition 0." % (bus, pid, rng.randint(0, 7)) if v == 2 else \
              "NVRM: Xid (PCI:%s): 95, pid=%d, name=python, Uncontained: FBHUB. RST: Yes, D-RST: No" % (bus, pid)
        others = [job.pr(["[E%s ProcessGroupNCCL.cpp:1664] [PG 0 (default_pg) Rank %d] Exception (either an error or timeout) detected by watchdog at work: 7753, last enqueued NCCL work: 7755, last completed NCCL work: 7752." % (c.glog(), r)], r) for r in range(8) if r != bad]
        post = interleave(rng, others) + torchrun_summary(rng, c, job.host, bad, 1, others=[(r, -6) for r in range(8) if r != bad][:3]) + \
               ["[%s] kernel: %s" % (c.tick(5).slurm(), xid), "srun: error: %s: task 0: Exited with exit code 1" % job.host]
        return build(job, pre, fail, post), 1, P["xid"] + "; " + P["cuda_rt"], job.gpu
    # v 4/5: DCGM/nvidia-smi health + Xid 74/Xid 63 on k8s node
    fail = job.pr(tb(user_frames(rng), ["torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled cuda error (run with NCCL_DEBUG=INFO for details), NCCL version 2.19.3",
                                        "ncclUnhandledCudaError: Call to CUDA function failed.", "Last error:", "Cuda failure 'an illegal memory access was encountered'"]), (bad + 1) % 8)
    xid = ["NVRM: Xid (PCI:%s): 74, pid=%d, name=python, NVLink: fatal error detected on link %d(0x10000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)" % (bus, pid, rng.randint(0, 17)),
           "NVRM: Xid (PCI:%s): 45, pid=%d, name=python, Ch 00000008" % (bus, pid)] if v == 4 else \
          ["NVRM: Xid (PCI:%s): 79, pid=%d, GPU has fallen off the bus." % (bus, pid), "NVRM: The NVIDIA GPU %s.0" % bus, "NVRM: (PCI ID: 10de:2330) installed in this system has", "NVRM: fallen off the bus and is not responding to commands."]
    post = torchrun_summary(rng, c, job.host, (bad + 1) % 8, 1) + ["---- node %s kernel log (collected by health-check) ----" % job.host] + ["%s kernel: %s" % (c.slurm(), x) for x in xid]
    return build(job, pre, fail, post), 1, P["xid"] + "; " + P["nccl_err"], job.gpu


def s_oom_killer(rng, v):
    job = Job(rng, style=rng.choice(["plain", "srun"]), world=rng.choice([1, 8]))
    c = job.clock
    if v == 0:  # slurm cgroup
        pre = job.preamble("slurm")
        post = ["/var/spool/slurmd/job%d/slurm_script: line 42: %d Killed                  python train.py --config cfg.yaml" % (job.jobid, rng.randint(1000, 99999)),
                "slurmstepd: error: Detected 1 oom_kill event in StepId=%d.batch. Some of the step tasks have been OOM Killed." % job.jobid]
        return build(job, pre, [], post), 137, P["oomk"], job.gpu
    if v == 1:  # srun task OOM
        pre = job.preamble("slurm")
        post = ["slurmstepd: error: Detected 1 oom_kill event in StepId=%d.0. Some of the step tasks have been OOM Killed." % job.jobid,
                "srun: error: %s: task %d: Out Of Memory" % (job.host, rng.randrange(8)), "srun: Terminating StepId=%d.0" % job.jobid,
                "slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (job.jobid, job.host, c.slurm()),
                "srun: error: %s: tasks 1-7: Terminated" % job.host]
        return build(job, pre, [], post), 1, P["oomk"], job.gpu
    if v == 2:  # k8s describe
        job.style = "plain"
        pre = job.preamble("k8s")
        post = ["$ kubectl describe pod %s-worker-0 -n ml-train" % job.model, "Name:         %s-worker-0" % job.model, "Namespace:    ml-train",
                "Containers:", "  trainer:", "    State:          Terminated", "      Reason:       OOMKilled", "      Exit Code:    137",
                "      Started:      Tue, 01 Dec 2026 09:56:14 +0000", "      Finished:     Tue, 01 Dec 2026 11:02:47 +0000",
                "    Ready:          False", "    Restart Count:  0", "    Limits:", "      memory:          64Gi", "      nvidia.com/gpu:  1",
                "Events:", "  Type     Reason     Age   From     Message", "  ----     ------     ----  ----     -------",
                "  Warning  BackOff    2m    kubelet  Back-off restarting failed container trainer in pod %s-worker-0_ml-train" % job.model]
        return build(job, pre, [], post), 137, P["k8s_oom"], job.gpu
    if v == 3:  # DataLoader worker killed
        job.style = "plain"
        pre = job.preamble(None)
        wpid = rng.randint(10000, 99999)
        fail = ["ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm).".replace("bus error", "bus error") if False else
                "[%s] dmesg: Out of memory: Killed process %d (pt_data_worker) total-vm:%dkB, anon-rss:%dkB, file-rss:%dkB, shmem-rss:%dkB, UID:1000 pgtables:%dkB oom_score_adj:0" % (c.slurm(), wpid, rng.randint(30000000, 90000000), rng.randint(20000000, 60000000), rng.randint(10000, 90000), rng.randint(0, 9000), rng.randint(10000, 90000))]
        fail += tb(user_frames(rng) + [(SP + "/torch/utils/data/dataloader.py", 1133, "_try_get_data", "data = self._data_queue.get(timeout=timeout)"),
                                       ("/opt/conda/lib/python3.10/multiprocessing/queues.py", 113, "get", "if not self._poll(timeout):"),
                                       (SP + "/torch/utils/data/_utils/signal_handling.py", 66, "handler", "_error_if_any_worker_fails()")],
                   "RuntimeError: DataLoader worker (pid %d) is killed by signal: Killed. " % wpid)
        fail = ["Traceback (most recent call last):"] + fail[2:] if False else fail
        return build(job, pre, fail, []), 1, P["oomk"] + "; pytorch torch/utils/data/_utils/signal_handling.py ('DataLoader worker (pid N) is killed by signal: Killed.')", job.gpu
    if v == 4:  # PBS mem limit
        job.style = "plain"
        pre = job.preamble("pbs")
        post = ["=>> PBS: job killed: mem %dkb exceeded limit %dkb" % (rng.randint(67108865, 69000000), 67108864)]
        return build(job, pre, [], post), 271, P["pbs_mem"], job.gpu
    # v5 torchrun SIGKILL rank (host OOM), dmesg lines
    job.style = "rank"
    job.world = 8
    pre = job.preamble(None)
    bad = rng.randrange(8)
    post = ["W%s 4410 torch/distributed/elastic/multiprocessing/api.py:858] Sending process %d closing signal SIGTERM" % (c.glog(), rng.randint(10000, 99999)) for _ in range(7)]
    post += ["E%s 4410 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: -9) local_rank: %d (pid: %d) of binary: /opt/conda/bin/python3" % (c.glog(), bad, rng.randint(10000, 99999))]
    post += torchrun_summary(rng, c, job.host, bad, -9, sig="SIGKILL")
    post += ["+ dmesg | tail -2", "[%d.%06d] Memory cgroup out of memory: Killed process %d (python3) total-vm:%dkB, anon-rss:%dkB, file-rss:%dkB, shmem-rss:%dkB, UID:0 pgtables:%dkB oom_score_adj:0" % (rng.randint(10000, 999999), rng.randint(0, 999999), rng.randint(10000, 99999), rng.randint(90000000, 200000000), rng.randint(60000000, 120000000), rng.randint(100000, 900000), rng.randint(0, 99999), rng.randint(100000, 300000))]
    return build(job, pre, [], post), 1, P["oomk"], job.gpu


def s_walltime(rng, v):
    job = Job(rng, style=rng.choice(["plain", "srun"]), world=rng.choice([1, 8]))
    c = job.clock
    if v in (0, 1):
        pre = job.preamble("slurm")
        post = ["slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (job.jobid, job.host, c.tick(9).slurm())]
        if v == 1:
            post = ["srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
                    "slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (job.jobid, job.host, c.slurm()),
                    "slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO TIME LIMIT ***" % (job.jobid, job.host, c.slurm())]
            post += ["%d: Received SIGTERM, trying to save checkpoint..." % r for r in range(4)]
            post += ["%d: Checkpoint save failed: interrupted" % rng.randrange(8), "srun: error: %s: tasks 0-7: Terminated" % job.host,
                     "srun: Force Terminated StepId=%d.0" % job.jobid]
            post += wandb_teardown(rng, ok=False)
        return build(job, pre, [], post), 143 if v == 0 else 0 if False else 143, P["slurm_tl"], job.gpu
    if v in (2, 3):
        job.style = "plain"
        pre = job.preamble("pbs")
        lim = rng.choice([86400, 172800, 43200])
        post = ["=>> PBS: job killed: walltime %d exceeded limit %d" % (lim + rng.randint(1, 40), lim)]
        if v == 3:
            post = ["Terminated"] + post
        return build(job, pre, [], post), 271, P["pbs_wt"], job.gpu
    # v4 LSF
    job.style = "plain"
    pre = job.preamble(None)
    post = ["User defined signal 2", "", "------------------------------------------------------------",
            "Sender: LSF System <lsfadmin@%s>" % job.host, "Subject: Job %d: <train_%s> in cluster <hpc> Exited" % (job.jobid, job.model), "",
            "TERM_RUNLIMIT: job killed after reaching LSF run time limit.", "Exited with exit code 140.", "",
            "Resource usage summary:", "", "    CPU time :                                   %d.00 sec." % rng.randint(100000, 900000),
            "    Max Memory :                                 %d MB" % rng.randint(20000, 90000), "    Run time :                                   86412 sec."]
    return build(job, pre, [], post), 140, "IBM LSF job report 'TERM_RUNLIMIT: job killed after reaching LSF run time limit.' (LSF exit reason docs)", job.gpu


def s_preempted(rng, v):
    job = Job(rng, style=rng.choice(["plain", "srun"]), world=rng.choice([1, 8]))
    c = job.clock
    if v in (0, 1):
        pre = job.preamble("slurm")
        post = ["slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (job.jobid, job.host, c.tick(3).slurm())]
        ec = 143
        if v == 1:  # handler saves and exits 0
            post = ["slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (job.jobid, job.host, c.slurm()),
                    "[%s] Received signal SIGTERM: preemption detected, saving checkpoint to /scratch/ckpt/step_%d" % (c.iso(), job.endstep),
                    "[%s] Checkpoint saved (%.1f GB) in %.1fs; requeue requested" % (c.tick(20).iso(), rng.uniform(2, 30), rng.uniform(5, 60)),
                    "[%s] Exiting with status 0 so the job can be requeued" % c.iso()] + wandb_teardown(rng)
            ec = 0
        return build(job, pre, [], post), ec, P["slurm_pre"], job.gpu
    if v == 2:  # k8s node shutdown
        job.style = "plain"
        pre = job.preamble("k8s")
        post = ["%sZ INFO  received SIGTERM, shutting down trainer" % c.slurm(), "Saving model checkpoint to gs://bucket/%s/checkpoint-%d" % (job.model, job.endstep),
                "$ kubectl get pod %s-worker-0 -o jsonpath='{.status.reason}: {.status.message}'" % job.model,
                "Terminated: Pod was terminated in response to imminent node shutdown."]
        return build(job, pre, [], post), 0, P["k8s_pre"], job.gpu
    if v == 3:  # AWS spot
        job.style = "plain"
        pre = job.preamble(None)
        post = ["[%s] spot-watcher: GET http://169.254.169.254/latest/meta-data/spot/instance-action -> 200 {\"action\": \"terminate\", \"time\": \"%sZ\"}" % (c.iso(), c.tick(120).slurm()),
                "[%s] spot-watcher: Spot interruption notice received; instance will be reclaimed in 2 minutes" % c.iso(),
                "[%s] trainer: saving emergency checkpoint at step %d" % (c.tick(2).iso(), job.endstep), "[%s] trainer: checkpoint uploaded to s3://ml-ckpt/%s/step-%d" % (c.tick(40).iso(), job.model, job.endstep),
                "Connection to %s closed by remote host." % job.host]
        return build(job, pre, [], post), 255, "AWS EC2 spot instance-action metadata / 'Spot Instance interruption notice' (AWS EC2 docs); OpenSSH 'Connection to host closed by remote host.'", job.gpu
    if v == 4:  # slurm requeue message with lightning
        pre = job.preamble("slurm")
        post = ["slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO PREEMPTION ***" % (job.jobid, job.host, c.slurm()),
                "[rank: 0] Received SIGTERM: 15", "Handling auto-requeue signal: 15", "Requeing job %d..." % job.jobid, "Requeued SLURM job: %d" % job.jobid]
        return build(job, pre, [], post), 0, P["slurm_pre"] + "; Lightning src/lightning/pytorch/trainer/connectors/signal_connector.py ('Handling auto-requeue signal', 'Requeued SLURM job')", job.gpu
    # v5 GCE preemption via gcloud/TPU VM
    job.style = "plain"
    pre = job.preamble(None, jax=True)
    post = ["I%s 139 checkpointer.py:164] Saving item to gs://tpu-ckpt/%s/%d." % (c.glog(), job.model, job.endstep),
            "$ gcloud compute operations list --filter=operationType=compute.instances.preempted",
            "NAME                                                  TYPE                                   TARGET                     HTTP_STATUS  STATUS  TIMESTAMP",
            "systemevent-%d-%x  compute.instances.preempted  us-central2-b/instances/%s  200          DONE    2026-11-02T03:14:07.000-07:00" % (rng.randint(10 ** 12, 10 ** 13), rng.getrandbits(32), job.host)]
    return build(job, pre, [], post, train_fmt="jax", warn=WARN_JAX), 143, "Google Compute Engine 'compute.instances.preempted' operation (GCE preemptible docs)", job.gpu


def s_interrupted(rng, v):
    job = Job(rng, style="plain", world=1)
    c = job.clock
    if v == 0:  # scancel
        job.style = "srun"; job.world = 8
        pre = job.preamble("slurm")
        post = ["srun: Job step aborted: Waiting up to 32 seconds for job step to finish.",
                "slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s ***" % (job.jobid, job.host, c.slurm()),
                "slurmstepd: error: *** STEP %d.0 ON %s CANCELLED AT %s ***" % (job.jobid, job.host, c.slurm()),
                "srun: error: %s: tasks 0-7: Terminated" % job.host]
        return build(job, pre, [], post), 143, P["slurm_cancel"], job.gpu
    if v == 1:  # lightning KeyboardInterrupt graceful -> exit 0
        pre = job.preamble(None)
        post = ["Epoch 3:  41%|\u2588\u2588\u2588\u2588      | 2051/5000 [21:13<30:30,  1.61it/s, v_num=12, train_loss=0.412]^C/opt/conda/lib/python3.10/site-packages/lightning/pytorch/trainer/call.py:54: Detected KeyboardInterrupt, attempting graceful shutdown...",
                "`Trainer.fit` stopped: KeyboardInterrupt."] + wandb_teardown(rng)
        return build(job, pre, [], post), 0, P["lightning_int"], job.gpu
    # v2 HF accelerate / torchrun receiving SIGINT
    job.style = "rank"; job.world = 4
    pre = job.preamble(None)
    post = ["^CW%s 7721 torch/distributed/elastic/agent/server/api.py:704] Received Signals.SIGINT death signal, shutting down workers" % c.glog()]
    post += ["W%s 7721 torch/distributed/elastic/multiprocessing/api.py:858] Sending process %d closing signal SIGINT" % (c.glog(), rng.randint(10000, 99999)) for _ in range(4)]
    for r in range(4):
        post += pref_all(tb(user_frames(rng) + [(SP + "/accelerate/accelerator.py", 2013, "backward", "loss.backward(**kwargs)")], "KeyboardInterrupt"), r, "rank")
    post += ["Traceback (most recent call last):", '  File "/opt/conda/bin/accelerate", line 8, in <module>', "    sys.exit(main())",
             '  File "%s/torch/distributed/elastic/multiprocessing/api.py", line 79, in _terminate_process_handler' % SP,
             "    raise SignalException(f\"Process {os.getpid()} got signal: {sigval}\", sigval=sigval)",
             "torch.distributed.elastic.multiprocessing.api.SignalException: Process 7721 got signal: 2"]
    return build(job, pre, [], post), 1, "pytorch torch/distributed/elastic/agent/server/api.py + multiprocessing/api.py SignalException wording; HF accelerate launch", job.gpu


def s_native_abort(rng, v):
    job = Job(rng, style=rng.choice(["plain", "srun"]), world=rng.choice([1, 8]))
    pre = job.preamble(None)
    c = job.clock
    r = rng.randrange(min(8, job.world))
    if v == 0:  # c10::Error terminate (not CUDA) e.g. in DataLoader pin memory / custom op
        fail = ["terminate called after throwing an instance of 'c10::Error'",
                "  what():  Trying to free a pointer not allocated here",
                "Exception raised from raw_delete at ../c10/cuda/CUDACachingAllocator.cpp:2713 (most recent call first):",
                "frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x57 (0x7f%010x in %s/torch/lib/libc10.so)" % (rng.getrandbits(36), SP),
                "frame #1: c10::detail::torchCheckFail(char const*, char const*, unsigned int, std::string const&) + 0x64 (0x7f%010x in %s/torch/lib/libc10.so)" % (rng.getrandbits(36), SP),
                "", "Aborted (core dumped)"]
        ec = 134
    elif v == 1:  # absl check failed in jax
        pre = job.preamble(None, jax=True)
        fail = ["F%s %d pjrt_stream_executor_client.cc:1194] Check failed: on_device_shape_.IsArray() " % (c.glog(), rng.randint(1000, 99999)),
                "*** Check failure stack trace: ***", "    @     0x7f%010x  absl::lts_20230802::log_internal::LogMessageFatal::~LogMessageFatal()" % rng.getrandbits(36),
                "    @     0x7f%010x  xla::PjRtStreamExecutorBuffer::on_device_shape()" % rng.getrandbits(36), "    @     0x7f%010x  (unknown)" % rng.getrandbits(36),
                "Fatal Python error: Aborted", "", "Current thread 0x00007f%08x (most recent call first):" % rng.getrandbits(32),
                '  File "%s/jax/_src/interpreters/pxla.py", line 1229 in __call__' % SP, '  File "/workspace/train.py", line 377 in main', "Aborted (core dumped)"]
        ec = 134
    elif v == 2:  # glibc double free
        fail = ["double free or corruption (!prev)", "Aborted (core dumped)"]
        ec = 134
    else:  # TF check failed shape
        pre = job.preamble(None, tf=True)
        fail = ["%s: F tensorflow/core/framework/tensor_shape.cc:45] Check failed: NDIMS == dims() (2 vs. 3)Asking for tensor of 2 dimensions from a tensor of 3 dimensions" % c.tf(), "Aborted (core dumped)"]
        ec = 134
    if job.style == "srun":
        fail = pref_all(fail[:-1], r, "srun") + ["srun: error: %s: task %d: Aborted (core dumped)" % (job.host, r)]
        ec = 134
    return build(job, pre, fail, []), ec, P["abort"], job.gpu


def s_segfault(rng, v):
    job = Job(rng, style="plain", world=1)
    pre = job.preamble(None)
    c = job.clock
    if v == 0:  # dataloader worker segfault
        wpid = rng.randint(10000, 99999)
        fail = ["ERROR: Unexpected segmentation fault encountered in worker."]
        fail += tb(user_frames(rng) + [(SP + "/torch/utils/data/dataloader.py", 1133, "_try_get_data", "data = self._data_queue.get(timeout=timeout)"),
                                       (SP + "/torch/utils/data/_utils/signal_handling.py", 66, "handler", "_error_if_any_worker_fails()")],
                   "RuntimeError: DataLoader worker (pid %d) is killed by signal: Segmentation fault. " % wpid)
        fail2 = ["", "The above exception was the direct cause of the following exception:", ""] + \
            tb(user_frames(rng) + [(SP + "/torch/utils/data/dataloader.py", 1146, "_try_get_data", "raise RuntimeError(f'DataLoader worker (pid(s) {pids_str}) exited unexpectedly') from e")],
               "RuntimeError: DataLoader worker (pid(s) %d) exited unexpectedly" % wpid)
        return build(job, pre, fail + fail2, []), 1, P["segv"], job.gpu
    if v == 1:  # torchrun -11
        job.style = "rank"; job.world = 8
        bad = rng.randrange(8)
        post = ["E%s 5512 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: -11) local_rank: %d (pid: %d) of binary: /opt/conda/bin/python" % (c.glog(), bad, rng.randint(10000, 99999))]
        post += torchrun_summary(rng, c, job.host, bad, -11, sig="SIGSEGV")
        return build(job, pre, [], post), 1, P["segv"], job.gpu
    # v2 bash segfault
    fail = ["/var/spool/slurmd/job%d/slurm_script: line 31: %d Segmentation fault      (core dumped) python -u train.py --bf16" % (job.jobid, rng.randint(1000, 99999))]
    return build(job, pre, fail, []), 139, P["segv"] + "; bash 'Segmentation fault (core dumped)' job status line", job.gpu


def s_disk_full(rng, v):
    job = Job(rng, style="plain", world=1)
    pre = job.preamble(None)
    c = job.clock
    if v == 0:  # torch.save ENOSPC, chained
        ck = "/scratch/%s/ckpt/step_%d.pt" % (job.user, job.endstep)
        fail = ["[%s] Saving checkpoint to %s" % (c.iso(), ck)]
        fail += tb(user_frames(rng) + [("/workspace/utils/ckpt.py", 41, "save", "torch.save(state, f)"),
                                       (SP + "/torch/serialization.py", 629, "save", "_save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)"),
                                       (SP + "/torch/serialization.py", 863, "_save", "zip_file.write_record(name, storage, num_bytes)")],
                   "RuntimeError: [enforce fail at inline_container.cc:778] . PytorchStreamWriter failed writing file data/%d: file write failed" % rng.randint(10, 900))
        fail += ["", "During handling of the above exception, another exception occurred:", ""]
        fail += tb([("/workspace/utils/ckpt.py", 43, "save", "torch.save(state, f)"),
                    (SP + "/torch/serialization.py", 628, "save", "with _open_zipfile_writer(f) as opened_zipfile:"),
                    (SP + "/torch/serialization.py", 476, "__exit__", "self.file_like.write_end_of_file()")],
                   "RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos %d vs %d" % (rng.randint(10 ** 9, 5 * 10 ** 9), rng.randint(10 ** 9, 5 * 10 ** 9)))
        fail += ["$ df -h /scratch", "Filesystem      Size  Used Avail Use% Mounted on", "lustre01:/scratch  2.0P  2.0P     0 100% /scratch"]
        return build(job, pre, fail, []), 1, P["enospc"] + " (torch.save on a full filesystem: enforce-fail chain, df shows 100%)", job.gpu
    if v == 1:  # quota exceeded on HF datasets cache
        fail = tb(user_frames(rng) + [(SP + "/datasets/builder.py", 1973, "_prepare_split_single", "writer.write_table(table)"),
                                      (SP + "/datasets/arrow_writer.py", 584, "write_table", "self.pa_writer.write_table(pa_table, writer_batch_size)")],
                  "OSError: [Errno 122] Disk quota exceeded")
        fail = ["Generating train split: " + "\r".join("%d examples [%02d:%02d, %d examples/s]" % (k * 5000, k // 60, k % 60, rng.randint(3000, 9000)) for k in range(1, 12))] + fail
        return build(job, pre, fail, []), 1, P["enospc"] + "; HF datasets arrow_writer", job.gpu
    # v2: writer abort (c10::Error) after ENOSPC
    fail = ["[W%s] Warning: failed writing to /ckpt/shard_%02d.distcp: No space left on device" % (c.glog(), rng.randint(0, 63)),
            "terminate called after throwing an instance of 'c10::Error'",
            "  what():  [enforce fail at inline_container.cc:%d] . PytorchStreamWriter failed writing file data/%d: file write failed" % (rng.choice([588, 595, 778]), rng.randint(10, 900)),
            "frame #0: c10::ThrowEnforceNotMet(char const*, int, char const*, std::string const&, void const*) + 0x68 (0x7f%010x in %s/torch/lib/libc10.so)" % (rng.getrandbits(36), SP),
            "Aborted (core dumped)"]
    return build(job, pre, fail, []), 134, P["enospc"], job.gpu


def s_pytb(rng, v, kind):
    """python-exception classes"""
    job = Job(rng, style=rng.choice(["plain", "rank", "srun"]), world=rng.choice([1, 2, 8]))
    pre = job.preamble(rng.choice([None, "slurm"]))
    r = rng.randrange(min(8, job.world))
    fr = user_frames(rng)
    prov = P["py"]
    if kind == "file_not_found":
        final = [["FileNotFoundError: [Errno 2] No such file or directory: '/datasets/imagenet/train/n01440764/n01440764_10026.JPEG'"],
                 ["FileNotFoundError: Unable to find '/data/%s/tokenized/train-00000.arrow'" % job.model],
                 ["OSError: Can't load tokenizer for '/models/%s'. If you were trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory with the same name. Otherwise, make sure '/models/%s' is the correct path to a directory containing all relevant files for a LlamaTokenizerFast tokenizer." % (job.model, job.model)]][v % 3]
        if v % 3 == 2:
            fr = fr + [(SP + "/transformers/tokenization_utils_base.py", 2070, "from_pretrained", "raise EnvironmentError(")]
            prov += "; transformers tokenization_utils_base.py 'Can't load tokenizer for' (label: missing files/dir)"
    elif kind == "permission":
        final = [["PermissionError: [Errno 13] Permission denied: '/shared/checkpoints/%s/optimizer.pt'" % job.model],
                 ["OSError: [Errno 30] Read-only file system: '/models/%s/.cache'" % job.model],
                 ["PermissionError: [Errno 1] Operation not permitted: '/dev/shm/torch_%d'" % rng.randint(1000, 9999)]][v % 3]
    elif kind == "missing_module":
        final = [["ModuleNotFoundError: No module named 'flash_attn'"],
                 ["ImportError: libcudart.so.11.0: cannot open shared object file: No such file or directory"],
                 ["ImportError: %s/flash_attn_2_cuda.cpython-310-x86_64-linux-gnu.so: undefined symbol: _ZN3c104cuda9SetDeviceEi" % SP]][v % 3]
        fr = fr[:1] + [("/workspace/model.py", 12, "<module>", "from flash_attn import flash_attn_func")]
    elif kind == "div_zero":
        final = [["ZeroDivisionError: division by zero"], ["ZeroDivisionError: float division by zero"], ["ZeroDivisionError: integer division or modulo by zero"]][v % 3]
        fr = fr + [("/workspace/metrics.py", 57, "compute", ["acc = correct / total", "tok_per_sec = n_tokens / elapsed", "steps_per_epoch = len(ds) // (bs * world_size)"][v % 3])]
    elif kind == "device_mismatch":
        final = [["RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument index in method wrapper_CUDA__index_select)"],
                 ["RuntimeError: Expected object of device type cuda but got device type cpu for argument #1 'self' in call to _th_mm"],
                 ["RuntimeError: Placeholder storage has not been allocated on MPS device!"],
                 ["RuntimeError: Expected all tensors to be on the same device, but found at least two devices, xla:0 and cpu!"]][v % 4]
        prov = P["devmm"]
    elif kind == "traceback":
        final = [["KeyError: 'input_ids'"], ["TypeError: forward() got an unexpected keyword argument 'labels'"],
                 ["ValueError: Expected input batch_size (32) to match target batch_size (31)."], ["IndexError: list index out of range"]][v % 4]
    elif kind == "assertion":
        final = [["AssertionError: Sequence length 4097 exceeds max position embeddings 4096"], ["AssertionError"],
                 ["AssertionError: num_heads must divide tensor_model_parallel_size"]][v % 3]
        fr = fr + [("/workspace/megatron/model/transformer.py", 703, "__init__", "assert args.num_attention_heads % world_size == 0")]
    elif kind == "runtime_error":
        final = [["RuntimeError: mat1 and mat2 shapes cannot be multiplied (32x1024 and 768x3072)"],
                 ["RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward."],
                 ["RuntimeError: one of the variables needed for gradient computation has been modified by an inplace operation: [torch.cuda.FloatTensor [4096]] is at version 3; expected version 2 instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True)."],
                 ["RuntimeError: Error(s) in loading state_dict for LlamaForCausalLM:", "\tsize mismatch for model.embed_tokens.weight: copying a param with shape torch.Size([32000, 4096]) from checkpoint, the shape in current model is torch.Size([32001, 4096])."]][v % 4]
    lines = tb(fr, final)
    if kind == "traceback" and v % 4 == 0:  # dataloader re-raise
        lines = tb(fr + [(SP + "/torch/_utils.py", 722, "reraise", "raise exception")],
                   ["KeyError: Caught KeyError in DataLoader worker process %d." % rng.randint(0, 7), "Original Traceback (most recent call last):",
                    '  File "%s/torch/utils/data/_utils/worker.py", line 308, in _worker_loop' % SP, "    data = fetcher.fetch(index)",
                    '  File "/workspace/data.py", line 77, in __getitem__', "    ids = sample['input_ids']", "KeyError: 'input_ids'", ""])
    fail = job.pr(lines, r)
    post = []
    if job.world > 1:
        others = [r2 for r2 in range(min(8, job.world)) if r2 != r]
        cons = []
        for o in others[:rng.randint(1, len(others))]:
            cons.append(pref_all(["[W%s ProcessGroupNCCL.cpp:1168] [Rank %d] ProcessGroupNCCL destructor entered." % (job.clock.glog(), o)] if rng.random() < 0.5 else
                                 tb(user_frames(rng), ["RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:534] Connection closed by peer [10.0.0.%d]:23456" % rng.randint(2, 250)]), o, job.style))
        post = interleave(rng, cons) + torchrun_summary(rng, job.clock, job.host, r, 1)
    if rng.random() < 0.4:
        post += wandb_teardown(rng, ok=False)
    return build(job, pre, fail, post), 1, prov, job.gpu


def s_nan(rng, v):
    job = Job(rng, style="plain", world=1)
    c = job.clock
    if v == 0:  # keras TerminateOnNaN, exit 0
        pre = job.preamble(None, tf=True)
        body = []
        for e in range(1, rng.randint(3, 8)):
            body += keras_epoch(rng, e, 100, 625, job.loss * 0.95 ** e)
        bad = rng.randint(10, 600)
        body += ["Epoch %d/100" % (e + 1), "%5d/625 [====>.........................] - ETA: 1:02 - loss: nan - accuracy: 0.0982Batch %d: Invalid loss, terminating training" % (bad, bad - 1),
                 "%5d/625 [====>.........................] - %ds %dms/step - loss: nan - accuracy: 0.0982" % (bad, rng.randint(5, 90), rng.randint(20, 200)),
                 "Saved model to /models/%s/final.keras" % job.model]
        return pre + body, 0, P["keras_nan"], job.gpu
    if v == 1:  # megatron nan grad norm
        job.style = "srun"; job.world = 8
        pre = job.preamble("slurm")
        r = rng.randrange(8)
        fail = pref_all(tb([("/workspace/Megatron-LM/pretrain_gpt.py", 246, "<module>", "pretrain("),
                            ("/workspace/Megatron-LM/megatron/training/training.py", 1211, "train", "train_step(forward_step_func,"),
                            ("/workspace/Megatron-LM/megatron/core/distributed/param_and_grad_buffer.py", 115, "start_grad_sync", "assert not norm.isnan(), (")],
                           "AssertionError: Rank %d: found NaN in local grad norm in backward pass before data-parallel communication collective. Device: %d, node: %s" % (r, r, job.host)), r, "srun")
        post = ["srun: error: %s: task %d: Exited with exit code 1" % (job.host, r), "srun: Terminating StepId=%d.0" % job.jobid]
        return build(job, pre, fail, post, train_fmt="megatron"), 1, P["megatron_nan"], job.gpu
    if v == 2:  # deepspeed loss scale min
        pre = job.preamble(None)
        body = job.train(job.fill(len(pre), 40), fmt="ds")
        ov = []
        s = 2 ** 16
        while s >= 1:
            ov.append("[%s] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d" % (c.tick().iso(), s, max(1, s // 2)))
            s //= 2
        fail = tb(user_frames(rng) + [(SP + "/deepspeed/runtime/fp16/loss_scaler.py", 175, "update_scale", 'raise Exception(')],
                  "Exception: Current loss scale already at minimum - cannot decrease scale anymore. Exiting run.")
        return pre + body + ov + fail, 1, P["ds_scale"], job.gpu
    if v == 3:  # HF trainer nan to the end exit 0
        pre = job.preamble(None)
        body = job.train(max(20, job.target // 2), fmt="hf")
        for i in range(rng.randint(20, 300)):
            body.append("{'loss': nan, 'grad_norm': nan, 'learning_rate': %.3e, 'epoch': %.2f}" % (rng.uniform(1e-5, 2e-4), 1 + i / 100.0))
        body += ["{'eval_loss': nan, 'eval_runtime': 41.2, 'eval_samples_per_second': 121.4, 'epoch': 3.0}",
                 "{'train_runtime': %.1f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %.3f, 'train_loss': nan, 'epoch': 3.0}" % (rng.uniform(1000, 90000), rng.uniform(1, 90), rng.uniform(0.1, 3)),
                 "Saving model checkpoint to /output/%s/final" % job.model, "Training completed. Do not forget to share your model on huggingface.co/models =)"] + wandb_teardown(rng)
        return pre + body, 0, "transformers trainer.py log dicts / 'Training completed. Do not forget to share your model on huggingface.co/models =)'", job.gpu
    # v4 anomaly mode
    pre = job.preamble(None)
    fail = [SP + "/torch/autograd/graph.py:744: UserWarning: Error detected in LogSoftmaxBackward0. Traceback of forward call that caused the error:",
            '  File "/workspace/train.py", line 220, in <module>', "    loss = criterion(model(x), y)", " (Triggered internally at ../torch/csrc/autograd/python_anomaly_mode.cpp:111.)",
            "  return Variable._execution_engine.run_backward(  # Calls into the C++ engine to run the backward pass"]
    fail += tb(user_frames(rng) + [(SP + "/torch/_tensor.py", 522, "backward", "torch.autograd.backward(")], "RuntimeError: Function 'LogSoftmaxBackward0' returned nan values in its 0th output.")
    return build(job, pre, fail, []), 1, "pytorch torch/csrc/autograd/python_anomaly_mode.cpp + engine.cpp anomaly-mode 'returned nan values in its 0th output' wording", job.gpu


def s_exec(rng, v):
    job = Job(rng, style="plain", world=1)
    pre = job.preamble("slurm")[:rng.randint(10, 60)]
    if v == 0:
        return pre + ["/var/spool/slurmd/job%d/slurm_script: line 23: /opt/conda/envs/llm/bin/python: cannot execute binary file: Exec format error" % job.jobid], 126, P["exec"], job.gpu
    return pre + ["/var/spool/slurmd/job%d/slurm_script: ./scripts/train.sh: /bin/bash^M: bad interpreter: No such file or directory" % job.jobid], 126, P["exec"], job.gpu


def s_unknown(rng, v):
    job = Job(rng, style=rng.choice(["plain", "srun"]), world=rng.choice([1, 8]))
    pre = job.preamble("slurm")
    c = job.clock
    if v == 0:
        post = ["srun: error: %s: task 0: Exited with exit code 1" % job.host]
        return build(job, pre, [], post), 1, "Slurm srun exit summary only (no cause)", job.gpu
    if v == 1:
        job.style = "rank"; job.world = 4
        post = torchrun_summary(rng, c, job.host, rng.randrange(4), 1)
        return build(job, pre, [], post), 1, "torch.distributed.elastic ChildFailedError summary without child traceback", job.gpu
    if v == 2:
        post = ["Error: training exited with status 2", "+ exit 2"]
        return build(job, pre, [], post), 2, "generic wrapper script output", job.gpu
    post = ["$ kubectl describe pod %s-trainer-0 | grep -A4 'Last State'" % job.model, "    Last State:     Terminated", "      Reason:       Error", "      Exit Code:    1",
            "      Started:      Mon, 30 Nov 2026 02:11:09 +0000"]
    return build(job, pre, [], post), 1, "kubectl describe pod 'Reason: Error' (https://github.com/kubernetes/kubernetes/issues/122256)", job.gpu


def s_success(rng, v):
    job = Job(rng, world=rng.choice([1, 2, 4, 8]))
    c = job.clock
    kind = v % 7
    if kind == 0:  # deepspeed with recovered overflows
        pre = job.preamble(rng.choice([None, "slurm"]))
        body = []
        for blk in range(rng.randint(2, 6)):
            body += job.train(rng.randint(10, 120), fmt="ds")
            s = rng.choice([65536, 32768])
            for k in range(rng.randint(1, 4)):
                body.append("[%s] [INFO] [loss_scaler.py:183:update_scale] [deepspeed] OVERFLOW! Rank 0 Skipping step. Attempted loss scale: %d, reducing to %d" % (c.tick().iso(), s, s // 2))
                s //= 2
        post = ["[%s] [INFO] [logging.py:96:log_dist] [Rank 0] step=%d, skipped=%d, lr=[1.0e-05], mom=[(0.9, 0.95)]" % (c.iso(), job.endstep, rng.randint(3, 12)),
                "[%s] [INFO] [engine.py:3439:_save_zero_checkpoint] zero checkpoint saved /ckpt/global_step%d/zero_pp_rank_0_mp_rank_00_optim_states.pt" % (c.iso(), job.endstep),
                "Training finished. final val_error=%.4f (killed 3 duplicate samples during dedup)" % rng.uniform(0.01, 0.2)] + wandb_teardown(rng)
        return pre + body + post, 0, P["ds_scale"] + " (recovered overflow)", job.gpu
    if kind == 1:  # TF/keras with W lines, libcudart missing falls back? no: GPU ok, harmless warnings
        pre = job.preamble(None, tf=True)
        pre += ["%s: W tensorflow/stream_executor/platform/default/dso_loader.cc:64] Could not load dynamic library 'libnvinfer.so.7'; dlerror: libnvinfer.so.7: cannot open shared object file: No such file or directory" % c.tf(),
                "%s: W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT" % c.tf()]
        body = []
        for e in range(1, rng.randint(3, 12)):
            body += keras_epoch(rng, e, e + rng.randint(0, 3), rng.choice([313, 469, 1875]), job.loss * 0.9 ** e)
            if rng.random() < 0.3:
                body.append("Epoch %d: val_loss improved from %.5f to %.5f, saving model to /ckpt/best.keras" % (e, job.loss * 0.9 ** (e - 1), job.loss * 0.9 ** e))
        body += ["%s: W tensorflow/core/kernels/data/generator_dataset_op.cc:108] Error occurred when finalizing GeneratorDataset iterator: FAILED_PRECONDITION: Python interpreter state is not initialized. The process may be terminated." % c.tf(),
                 "\t [[{{node PyFunc}}]]"]
        return pre + body, 0, "tensorflow dso_loader.cc / generator_dataset_op.cc harmless warnings (https://github.com/tensorflow/tensorflow/issues/14048 style headers)", job.gpu
    if kind == 2:  # JAX run with absl warnings, nan-skip
        pre = job.preamble(None, jax=True)
        body = job.train(rng.randint(50, 900), fmt="jax", warn=WARN_JAX)
        body.insert(len(body) // 2, "W%s 139 train.py:301] Non-finite gradients at step %d (grad_norm=nan); skipping update (skipped_steps=1)" % (c.glog(), job.endstep - 40))
        body += ["I%s 139 checkpointer.py:164] Saving item to /ckpt/orbax/%d." % (c.glog(), job.endstep), "I%s 139 train.py:455] Finished training at step %d. Final eval: accuracy=0.7712 val_error=0.2288" % (c.glog(), job.endstep)]
        return pre + body, 0, P["jax_oom"] + " (absl log format); success", job.gpu
    if kind == 3:  # torchrun multi-rank with handled retries and NCCL INFO
        job.style = "rank"
        pre = job.preamble("slurm")
        body = job.train(max(30, job.target - len(pre) - 20), fmt="hf")
        k = len(body) // 3
        body[k:k] = ["[rank0]:WARNING:root:Failed to fetch shard s3://bucket/shard-00017.tar (ConnectionResetError: [Errno 104] Connection reset by peer); retry 1/5",
                     "[rank0]:INFO:root:Retry succeeded for shard-00017.tar"]
        body += ["[rank0]:{'train_runtime': %.1f, 'train_samples_per_second': %.2f, 'train_loss': %.4f, 'epoch': 3.0}" % (rng.uniform(1000, 50000), rng.uniform(10, 200), job.loss),
                 "[rank0]:***** eval metrics *****", "[rank0]:  eval_loss = %.4f" % (job.loss * 1.05), "[rank0]:  eval_error_rate = 0.0712",
                 "[rank0]:[W%s ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the progress of another member of the process group. This constraint has always been present,  but this warning has only recently been added to the process group. (function operator())" % c.glog()]
        return pre + body + wandb_teardown(rng), 0, P["nccl_wd"] + " (source file names only); pytorch ProcessGroupNCCL.cpp destructor warning", job.gpu
    if kind == 4:  # vLLM offline batch inference fine
        job.style = "plain"
        L = ["INFO %s llm_engine.py:237] Initializing an LLM engine (v0.6.3.post1) with config: model='/models/%s', dtype=torch.bfloat16, max_seq_len=8192" % (c.vllm(), job.model),
             "WARNING %s config.py:395] To see benefits of async output processing, enable CUDA graph. Since, enforce-eager is enabled, async output processor cannot be used" % c.vllm(),
             "INFO %s gpu_executor.py:122] # GPU blocks: %d, # CPU blocks: 2048" % (c.vllm(), rng.randint(2000, 30000)),
             "INFO %s model_runner.py:1383] Graph capturing finished in 11 secs." % c.vllm()]
        body = job.train(rng.randint(40, 700), fmt="vllm")
        prog = "Processed prompts: " + "\r".join("%3d%%|%s| %d/5000 [%02d:%02d<%02d:%02d, %.2fit/s, est. speed input: %.2f toks/s, output: %.2f toks/s]" % (k * 10, "\u2588" * k + " " * (10 - k), k * 500, k, k * 7 % 60, 10 - k, 0, rng.uniform(5, 40), rng.uniform(1000, 9000), rng.uniform(500, 4000)) for k in range(11))
        return L + body + [prog, "Wrote 5000 generations to /out/gen.jsonl (0 failed, 12 retried after timeout error)"], 0, P["vllm_oom"] + " (startup lines only)", job.gpu
    if kind == 5:  # megatron with skipped nan iterations but recovered
        job.style = "srun"; job.world = 8
        pre = job.preamble("slurm")
        body = job.train(max(30, job.target - len(pre)), fmt="megatron")
        k = len(body) // 2
        body[k] = body[k].replace("number of skipped iterations:   0 | number of nan iterations:   0", "number of skipped iterations:   1 | number of nan iterations:   1")
        body += ["0: [after training is done] datetime: 2026-11-03 04:12:55", "0: saving checkpoint at iteration %8d to /ckpt/megatron" % job.endstep,
                 "0:   successfully saved checkpoint at iteration %8d to /ckpt/megatron" % job.endstep,
                 "0: -----------------------------------------------------------------------------------------------",
                 "0:  validation loss at iteration %d on test set | lm loss value: %.6E | lm loss PPL: %.6E | " % (job.endstep, job.loss, 2.718 ** job.loss)]
        return pre + body, 0, P["megatron_nan"] + " (log format); success", job.gpu
    # kind 6: torch.compile with graph-break warnings + FSDP + handled exception
    pre = job.preamble(None)
    pre += ["W%s 4410 torch/_dynamo/convert_frame.py:762] torch._dynamo hit config.cache_size_limit (8)" % c.glog(),
            "W%s 4410 torch/_dynamo/convert_frame.py:762]    function: 'forward' (/workspace/model.py:88)" % c.glog(),
            "W%s 4410 torch/_dynamo/convert_frame.py:762]    last reason: 0/0: tensor 'L['x']' size mismatch at index 1. expected 512, actual 384" % c.glog(),
            "W%s 4410 torch/_dynamo/convert_frame.py:762] To log all recompilation reasons, use TORCH_LOGS=\"recompiles\"." % c.glog()]
    body = job.train(max(30, job.target - len(pre)))
    k = len(body) // 2
    body[k:k] = tb(user_frames(rng), "OSError: [Errno 5] Input/output error: '/mnt/nfs/data/shard_17.bin'")[0:0] + \
        ["WARNING:data:Error reading /mnt/nfs/data/shard_17.bin ([Errno 5] Input/output error); re-opening (attempt 2/3)", "INFO:data:shard_17.bin re-opened OK"]
    return pre + body + ["Done. Final model saved to /ckpt/final (val_error=%.3f, nan_count=0)" % rng.uniform(0.02, 0.3)], 0, "pytorch torch/_dynamo/convert_frame.py recompile warning wording; success", job.gpu


# ----------------------------------------------------------------------------------------------
PLAN = [("cuda_oom", s_cuda_oom, 7), ("nccl", s_nccl, 7), ("cuda_runtime", s_cuda_runtime, 7),
        ("gpu_hardware", s_gpu_hw, 6), ("oom_killer", s_oom_killer, 6), ("walltime", s_walltime, 5),
        ("preempted", s_preempted, 6), ("interrupted", s_interrupted, 3), ("native_abort", s_native_abort, 4),
        ("segfault", s_segfault, 3), ("disk_full", s_disk_full, 3), ("nan_loss", s_nan, 5), ("exec_failure", s_exec, 2),
        ("unknown", s_unknown, 4)]
PY_PLAN = [("file_not_found", 3), ("permission", 3), ("missing_module", 3), ("div_zero", 3), ("device_mismatch", 4),
           ("traceback", 3), ("assertion", 3), ("runtime_error", 4)]

CAPTURED = [  # name, mode, note
 ("torchrun_keyerror", "traceback", "torchrun --nproc_per_node=2 (gloo) DDP script; rank 1 raises KeyError, rank 0 gets gloo 'Connection closed by peer'"),
 ("torchrun_fnf", "file_not_found", "torchrun --nproc_per_node=2 (gloo); rank 0 opens a missing shard -> FileNotFoundError, rank 1 gloo consequence"),
 ("timeout_train", "walltime", "timeout 4 python3 training-loop stand-in (coreutils timeout, exit 124)"),
 ("enospc_ckpt", "disk_full", "python3 writing a checkpoint to /dev/full (ENOSPC)"),
 ("segv_ctypes", "segfault", "python3 -X faulthandler, ctypes.string_at(0) -> SIGSEGV"),
 ("memerror_ulimit", "ram_oom", "bash: ulimit -v 1500000; numpy.zeros((120000,4096)) -> numpy _ArrayMemoryError"),
 ("sigterm_ckpt", "interrupted", "python3 loop with SIGTERM handler; kill -TERM by hand; handler checkpoints and exits 0"),
 ("nan_run", "nan_loss", "python3 torch CPU MLP with lr=3.0 diverges to NaN, runs to completion, exit 0"),
 ("sigint_loop", "interrupted", "python3 loop, kill -INT -> KeyboardInterrupt traceback; bash wait status 130"),
 ("cmd_not_found", "exec_failure", "bash -c with a nonexistent launcher command (127)"),
 ("bad_interp", "exec_failure", "bash runs ./launch.py whose shebang interpreter does not exist (127, 'required file not found')"),
 ("not_exec", "exec_failure", "bash runs ./train.sh with mode 0644 (126 Permission denied)"),
 ("perm_denied", "permission", "runuser -u nobody python3 os.makedirs('/root/checkpoints/...') -> PermissionError"),
 ("missing_module", "missing_module", "python3 -c 'import deepspeed' (not installed)"),
 ("assert_fail", "assertion", "python3 assert on sequence length"),
 ("abort", "native_abort", "python3 -X faulthandler os.abort() -> SIGABRT"),
 ("dl_worker", "traceback", "torch DataLoader num_workers=2, dataset row missing key -> 'Caught KeyError in DataLoader worker process 0'"),
 ("meta_device", "device_mismatch", "torch nn.Linear built under torch.device('meta'), called with CPU input"),
 ("shape_mismatch", "runtime_error", "torch nn.Linear(768,10) on (16,1024) input -> mat1 and mat2 shapes cannot be multiplied"),
 ("zerodiv", "div_zero", "python3 accuracy with zero eval batches"),
]
CAP_EXTRA = {"memerror_ulimit": [("ram_oom", "numpy")]}


def s_ram(rng, v):
    job = Job(rng, style="plain", world=1)
    pre = job.preamble(None)
    if v == 0:
        fail = tb(user_frames(rng) + [("/workspace/data.py", 45, "load", "arr = np.concatenate(chunks)")], "numpy.core._exceptions._ArrayMemoryError: Unable to allocate %.1f GiB for an array with shape (%d, 4096) and data type float32" % (rng.uniform(50, 400), rng.randint(3 * 10 ** 6, 9 * 10 ** 7)))
    elif v == 1:
        fail = tb(user_frames(rng) + [("/workspace/data.py", 61, "build_index", "self.index = pickle.load(f)")], "MemoryError")
    else:
        fail = tb(user_frames(rng) + [(SP + "/torch/storage.py", 234, "_new_shared", "return cls._new_using_fd_cpu(size)")],
                  "RuntimeError: [enforce fail at alloc_cpu.cpp:117] err == 0. DefaultCPUAllocator: can't allocate memory: you tried to allocate %d bytes. Error code 12 (Cannot allocate memory)" % rng.randint(10 ** 10, 10 ** 11))
    return build(job, pre, fail, []), 1, P["py"] + "; numpy _ArrayMemoryError / c10/core/impl/alloc_cpu.cpp DefaultCPUAllocator wording", job.gpu


def cap_preamble(rng):
    user = rng.choice(USERS)
    L = ["+ hostname", "cpu-runner-%02d" % rng.randint(1, 40), "+ python3 -V", "Python 3.11.7", "+ nproc", "2",
         "+ env | grep -E 'OMP|PYTHON|HOME'", "OMP_NUM_THREADS=1", "PYTHONUNBUFFERED=1", "HOME=/home/%s" % user]
    L += ["+ pip freeze | head -%d" % 12] + ["%s==%s" % p for p in sorted(rng.sample(PIP, 12))]
    L += config_dump(rng, rng.choice(MODELS))
    L += rng.sample(WARN_PT, rng.randint(1, 3))
    return L


def main():
    seed = 20261204
    if "--seed" in sys.argv:
        seed = int(sys.argv[sys.argv.index("--seed") + 1])
    rng = random.Random(seed)
    items = []
    for mode, fn, n in PLAN:
        for v in range(n):
            items.append((mode, fn, v))
    for mode, n in PY_PLAN:
        for v in range(n):
            items.append((mode, (lambda k: (lambda r, vv: s_pytb(r, vv, k)))(mode), v))
    for v in range(3):
        items.append(("ram_oom", s_ram, v))
    for v in range(20):
        items.append(("success", s_success, v))
    meta = json.load(open(os.path.join(HERE, "captured", "meta.json")))
    for name, mode, note in CAPTURED:
        items.append((mode, ("CAP", name, note), 0))
    rng.shuffle(items)
    os.makedirs(os.path.join(HERE, "logs"), exist_ok=True)
    for f in os.listdir(os.path.join(HERE, "logs")):
        if f.endswith(".log"):
            os.remove(os.path.join(HERE, "logs", f))
    recs = []
    for i, (mode, fn, v) in enumerate(items):
        lid = "%s-%04d" % (SET, i + 1)
        sub = random.Random("%d-%d" % (seed, i))
        if isinstance(fn, tuple):
            name, note = fn[1], fn[2]
            raw = open(os.path.join(HERE, "captured", name + ".out"), "rb").read().decode("utf-8", "replace")
            cmd = meta[name]["cmd"]
            pre = []
            if i % 3 != 0 or raw.count("\n") < 40:
                pre = cap_preamble(sub)
            text = "\n".join(pre) + ("\n" if pre else "") + "$ " + " ".join(c if (" " not in c and "\n" not in c) else repr(c) for c in cmd) + "\n" + raw
            ec = meta[name]["rc"]
            src, prov, gpu, drv = "captured", "captured on this machine (python3.11, torch 2.x CPU): " + note, "none", "none"
        else:
            lines, ec, prov, g = fn(sub, v)
            if len(lines) < 40:
                pj = Job(sub)
                pad = env_dump(sub, pj.host, pj.user, pj.tclock) + config_dump(sub, pj.model) + ["+ pip freeze"] + pip_freeze(sub)
                lines = pad[:max(40 - len(lines), sub.randint(40, 70) - len(lines))] + lines
            text = "\n".join(lines) + "\n"
            src = "composed"
            gpu, drv = g[0], g[1]
        path = os.path.join("logs", lid + ".log")
        with open(os.path.join(HERE, path), "w", encoding="utf-8", newline="\n") as f:
            f.write(text)
        recs.append({"id": lid, "mode": mode, "source": src, "log_path": path, "gpu": gpu, "driver": drv,
                     "true_exit_code": ec, "provenance": prov})
    with open(os.path.join(HERE, "labels.jsonl"), "w", encoding="utf-8", newline="\n") as f:
        for r in recs:
            f.write(json.dumps(r, ensure_ascii=False, sort_keys=False) + "\n")
    print("wrote %d logs (seed %d)" % (len(recs), seed))


if __name__ == "__main__":
    main()

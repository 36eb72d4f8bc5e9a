#!/usr/bin/env python3
"""Runs small failing programs on this machine and records real output + exit code.
Output: captured/<name>.out and captured/meta.json. Not needed by make_set.py to re-run."""
import subprocess, json, os, sys, time
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "capture_src")
OUT = os.path.join(HERE, "captured")
os.makedirs(OUT, exist_ok=True)
W = "/tmp/dev3_work"; os.makedirs(W, exist_ok=True)
open(os.path.join(W, "train.sh"), "w").write("#!/bin/bash\necho starting\n")
os.chmod(os.path.join(W, "train.sh"), 0o644)
open(os.path.join(W, "launch.py"), "w").write("#!/opt/conda/envs/llm-train/bin/python\nprint('hi')\n")
os.chmod(os.path.join(W, "launch.py"), 0o755)
os.makedirs("/tmp/dev3_ro", exist_ok=True); os.chmod("/tmp/dev3_ro", 0o755)
P = "python3"
jobs = {
 "torchrun_keyerror": ["torchrun", "--nproc_per_node=2", "--master_port=29631", os.path.join(SRC, "ddp_fail.py"), "keyerror"],
 "torchrun_fnf": ["torchrun", "--nproc_per_node=2", "--master_port=29632", os.path.join(SRC, "ddp_fail.py"), "fnf"],
 "timeout_train": ["timeout", "4", P, "-u", "-c", "import time\nfor s in range(10000):\n    print(f'step {s} loss {2.5*0.99**s:.4f} lr 1e-4', flush=True); time.sleep(0.25)"],
 "enospc_ckpt": [P, "-c", "import os\nprint('saving checkpoint to /dev/full (ckpt dir)', flush=True)\nbuf = b'\\0' * (1 << 20)\nwith open('/dev/full', 'wb') as f:\n    for i in range(8):\n        f.write(buf)\n    f.flush()\n"],
 "segv_ctypes": [P, "-X", "faulthandler", "-c", "import ctypes\nprint('loading custom CUDA extension fused_adam (JIT) ... done', flush=True)\nprint('step 0 launching fused kernel', flush=True)\nctypes.string_at(0)\n"],
 "memerror_ulimit": ["bash", "-c", "ulimit -v 1500000; exec python3 -c \"import numpy as np\nprint('building feature cache', flush=True)\nfeats = np.zeros((120000, 4096), dtype=np.float32)\n\""],
 "sigterm_ckpt": ["bash", "-c", "python3 -u %s & pid=$!; sleep 2.5; kill -TERM $pid; wait $pid; echo \"trainer exited with status $?\"" % os.path.join(SRC, "sigterm_ckpt.py")],
 "nan_run": [P, "-u", os.path.join(SRC, "nan_run.py")],
 "sigint_loop": ["bash", "-c", "python3 -u -c \"import time, signal\nsignal.signal(signal.SIGINT, signal.default_int_handler)\nfor s in range(1000):\n    print(f'epoch 0 iter {s} loss {1.9-0.001*s:.4f}', flush=True); time.sleep(0.2)\" & pid=$!; sleep 2; kill -INT $pid; wait $pid"],
 "cmd_not_found": ["bash", "-c", "echo 'Launching job on '$(hostname); deepspeed_launcher --num_gpus 8 train.py --deepspeed ds_config.json"],
 "bad_interp": ["bash", "-c", "cd %s && ./launch.py --config configs/base.yaml" % W],
 "not_exec": ["bash", "-c", "cd %s && ./train.sh --nodes 2" % W],
 "perm_denied": ["runuser", "-u", "nobody", "--", P, "-c", "import os\nprint('writing checkpoint', flush=True)\nos.makedirs('/root/checkpoints/run42', exist_ok=True)\n"],
 "missing_module": [P, "-c", "import sys, numpy\nprint('numpy', numpy.__version__)\nimport deepspeed\n"],
 "assert_fail": [P, "-c", "import random\nrandom.seed(1)\nfor step in range(5):\n    seq_len = 2048 if step < 3 else 2049\n    print(f'step {step} seq_len {seq_len}', flush=True)\n    assert seq_len <= 2048, f'sequence length {seq_len} exceeds max_position_embeddings 2048'\n"],
 "abort": [P, "-X", "faulthandler", "-c", "import os\nprint('initializing NCCL communicator', flush=True)\nos.abort()\n"],
 "dl_worker": [P, os.path.join(SRC, "dl_worker.py")],
 "meta_device": [P, "-c", "import torch\nwith torch.device('meta'):\n    head = torch.nn.Linear(512, 10)\nprint('model built on meta device; 5130 params', flush=True)\nx = torch.randn(4, 512)\nprint(head(x).shape)\n"],
 "shape_mismatch": [P, "-c", "import torch\nm = torch.nn.Linear(768, 10)\nx = torch.randn(16, 1024)\nprint('batch', tuple(x.shape), flush=True)\nm(x)\n"],
 "zerodiv": [P, "-c", "n_valid = 0\ncorrect = 0\nprint('evaluating 0 batches', flush=True)\nacc = correct / n_valid\n"],
}
meta = {}
only = sys.argv[1:]
if os.path.exists(os.path.join(OUT, "meta.json")):
    meta = json.load(open(os.path.join(OUT, "meta.json")))
for name, cmd in jobs.items():
    if only and name not in only: continue
    t = time.time()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=W)
    open(os.path.join(OUT, name + ".out"), "wb").write(p.stdout)
    meta[name] = {"cmd": cmd, "rc": p.returncode}
    print(name, p.returncode, "%.1fs" % (time.time() - t), len(p.stdout.splitlines()), flush=True)
json.dump(meta, open(os.path.join(OUT, "meta.json"), "w"), indent=1, sort_keys=True)

#!/usr/bin/env python3
"""Run small failing programs for real on this machine and store their output + exit codes.
Run once: python3 capture.py  (writes captured/<name>.log and captured/<name>.json).
make_set.py only reads these stored captures, so the set is byte-identical per seed."""
import json, os, signal, subprocess, sys, time, textwrap
HERE = os.path.dirname(os.path.abspath(__file__))
CAP = os.path.join(HERE, "captured")
W = "/tmp/dev7cap"
os.makedirs(CAP, exist_ok=True)
os.makedirs(W, exist_ok=True)

COMMON = textwrap.dedent('''
import os, sys, time, math, warnings, logging
import torch, numpy as np
logging.basicConfig(format="%(asctime)s - %(levelname)s - %(name)s - %(message)s", level=logging.INFO)
log = logging.getLogger("sft")
torch.manual_seed(0)
class TinyLM(torch.nn.Module):
    def __init__(s, V=64, d=32):
        super().__init__(); s.emb = torch.nn.Embedding(V, d); s.l1 = torch.nn.Linear(d, d); s.head = torch.nn.Linear(d, V)
    def forward(s, x):
        return s.head(torch.tanh(s.l1(s.emb(x))))
def banner(name):
    log.info("torch %s numpy %s python %s", torch.__version__, np.__version__, sys.version.split()[0])
    log.info("CUDA available: %s ; falling back to cpu", torch.cuda.is_available())
    log.info("***** Running %s *****", name)
    m0 = TinyLM(); o0 = torch.optim.AdamW(m0.parameters(), lr=1e-3)
    for st in range(1, 46):
        xb = torch.randint(0, 64, (8, 16)); l0 = torch.nn.functional.cross_entropy(m0(xb).view(-1, 64), xb.view(-1))
        o0.zero_grad(); l0.backward(); o0.step()
        print(f"[warmup] step {st:3d}/45 loss={l0.item():.4f} lr=1.0e-03 tok/s={1000+st*3}", flush=True)
''')

PROGS = {}
PROGS["divzero_warmup"] = COMMON + textwrap.dedent('''
banner("training")
cfg = dict(max_steps=40, warmup_ratio=0.0, lr=2e-4, grad_accum=8, per_device_bs=1, world_size=1)
log.info("config %s", cfg)
warmup_steps = int(cfg["max_steps"] * cfg["warmup_ratio"])
def lr_lambda(step):
    # linear warmup then cosine
    if step < max(1, warmup_steps):
        return step / warmup_steps
    return 0.5 * (1 + math.cos(math.pi * step / cfg["max_steps"]))
m = TinyLM(); opt = torch.optim.AdamW(m.parameters(), lr=cfg["lr"])
sched = torch.optim.lr_scheduler.LambdaLR(opt, lr_lambda)
''')
PROGS["ram_oom_numpy"] = COMMON + textwrap.dedent('''
banner("pack_dataset")
n_docs, seq = 2_000_000, 8192
log.info("packing %d docs into seq_len=%d (int64)", n_docs, seq)
buf = np.zeros((n_docs, seq), dtype=np.int64)
''')
PROGS["disk_full_save"] = COMMON + textwrap.dedent('''
banner("training")
m = TinyLM(); opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
for step in range(1, 31):
    x = torch.randint(0, 64, (8, 16)); loss = torch.nn.functional.cross_entropy(m(x).view(-1, 64), x.view(-1))
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 10 == 0: print(f"{{'loss': {loss.item():.4f}, 'grad_norm': 1.0, 'learning_rate': 0.001, 'epoch': {step/30:.2f}}}", flush=True)
log.info("Saving model checkpoint to /dev/full (output_dir/checkpoint-30/model.pt)")
import io
buf = io.BytesIO(); torch.save({"model": m.state_dict(), "optim": opt.state_dict()}, buf)
with open("/dev/full", "wb") as f:
    f.write(buf.getvalue())
''')
PROGS["fnf_tokenizer"] = COMMON + textwrap.dedent('''
banner("tokenize")
import json
path = "/tmp/dev7cap/models/llama-3-8b-instruct/tokenizer.json"
log.info("loading tokenizer from %s", path)
with open(path) as f:
    tok = json.load(f)
''')
PROGS["missing_flash_attn"] = COMMON + textwrap.dedent('''
banner("model init")
log.info("attn_implementation=flash_attention_2 requested")
from flash_attn import flash_attn_func
''')
PROGS["perm_ckpt"] = COMMON + textwrap.dedent('''
banner("training")
m = TinyLM()
os.makedirs("/tmp/dev7cap/shared_ckpt", exist_ok=True)
# job step runs as the unprivileged service account (uid 65534) after setup
os.setgid(65534); os.setuid(65534)
log.info("Saving model checkpoint to /tmp/dev7cap/shared_ckpt/checkpoint-500")
with open("/tmp/dev7cap/shared_ckpt/checkpoint-500.pt", "wb") as f:
    torch.save(m.state_dict(), f)
''')
PROGS["segv_ctypes"] = COMMON + textwrap.dedent('''
import faulthandler, ctypes
faulthandler.enable()
banner("custom kernel bindings")
log.info("calling fused_rope_cpu ext (ctypes)")
ctypes.string_at(0)
''')
PROGS["abort_native"] = COMMON + textwrap.dedent('''
import faulthandler
faulthandler.enable()
banner("dataloader")
log.info("worker pool initialised; mmap index /tmp/dev7cap/data/train_text_document.idx")
sys.stdout.flush(); sys.stderr.flush()
os.abort()
''')
PROGS["walltime_loop"] = COMMON + textwrap.dedent('''
banner("pretraining")
m = TinyLM(); opt = torch.optim.AdamW(m.parameters(), lr=3e-4)
it = 0
while True:
    it += 1
    x = torch.randint(0, 64, (16, 32)); loss = torch.nn.functional.cross_entropy(m(x).view(-1, 64), x.view(-1))
    opt.zero_grad(); loss.backward(); opt.step()
    if it % 50 == 0:
        print(f" iteration {it:8d}/  100000 | consumed samples: {it*16:10d} | lm loss: {loss.item():.6E} | loss scale: 1.0 | number of skipped iterations:   0 | number of nan iterations:   0 |", flush=True)
''')
PROGS["sigint_loop"] = PROGS["walltime_loop"].replace('"pretraining"', '"sft"')
PROGS["meta_device"] = COMMON + textwrap.dedent('''
banner("lora merge")
log.info("init_empty_weights(): base model on meta, adapter loaded on cpu")
base = torch.nn.Linear(32, 32, device="meta")
x = torch.randn(4, 32)
y = base(x)
''')
PROGS["nan_exit0"] = COMMON + textwrap.dedent('''
banner("reward model regression head")
w = torch.zeros(16, requires_grad=True); opt = torch.optim.SGD([w], lr=3.0)
X = torch.randn(256, 16) * 2; y = X @ torch.randn(16)
for step in range(1, 121):
    loss = ((X @ w - y) ** 2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 5 == 0:
        print(f"{{'loss': {loss.item():.4f}, 'grad_norm': {w.grad.norm().item():.4f}, 'learning_rate': 3.0, 'epoch': {step/120:.2f}}}", flush=True)
log.info("Training completed. Saving final reward head to out/rm-final")
''')
PROGS["success_warn"] = COMMON + textwrap.dedent('''
banner("sft")
warnings.warn("`torch_dtype` is deprecated! Use `dtype` instead!", FutureWarning)
m = TinyLM(); opt = torch.optim.AdamW(m.parameters(), lr=1e-3)
skipped = 0
for step in range(1, 101):
    x = torch.randint(0, 64, (8, 16)); loss = torch.nn.functional.cross_entropy(m(x).view(-1, 64), x.view(-1))
    if step == 37:
        loss = loss * float("nan")
    if not torch.isfinite(loss):
        skipped += 1; log.warning("non-finite loss at step %d (nan), skipping batch", step); continue
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 10 == 0:
        print(f"{{'loss': {loss.item():.4f}, 'grad_norm': 0.9, 'learning_rate': 0.001, 'epoch': {step/100:.2f}}}", flush=True)
log.info("skipped %d nan steps; val_error=0.412; killed 0 stale workers", skipped)
log.info("Training completed. Do not forget to share your model on huggingface.co/models =)")
''')
PROGS["keyerror_column"] = COMMON + textwrap.dedent('''
banner("map")
rows = [{"prompt": "hi", "chosen": "a", "rejected": "b"} for _ in range(4)]
def fmt(ex): return {"input_ids": [ord(c) for c in ex["text"]]}
for r in rows: fmt(r)
''')
PROGS["assert_collator"] = COMMON + textwrap.dedent('''
banner("collate")
seqs = [list(range(10)), list(range(12))]
def collate(b):
    assert all(len(s) == len(b[0]) for s in b), "packing produced ragged sequences; set padding=True"
    return torch.tensor(b)
collate(seqs)
''')
PROGS["shape_runtime"] = COMMON + textwrap.dedent('''
banner("lora")
A = torch.nn.Linear(4096, 16, bias=False); x = torch.randn(2, 7, 2048)
A(x)
''')
PROGS["gloo_timeout"] = textwrap.dedent('''
import os, time, datetime, torch, torch.distributed as dist
dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=6))
r = dist.get_rank()
print(f"[rank{r}] world={dist.get_world_size()} starting step loop", flush=True)
t = torch.ones(4)
for step in range(3):
    dist.all_reduce(t)
    print(f"[rank{r}] step {step} ok", flush=True)
if r == 1:
    print("[rank1] evaluating on held-out shard (slow)...", flush=True)
    time.sleep(30)
dist.all_reduce(t)
''')

RUNS = [
    # name, argv (list) or shell string, kind
    ("divzero_warmup", [sys.executable, "divzero_warmup.py"], None),
    ("ram_oom_numpy", "ulimit -v 1500000; exec %s ram_oom_numpy.py" % sys.executable, None),
    ("disk_full_save", [sys.executable, "disk_full_save.py"], None),
    ("fnf_tokenizer", [sys.executable, "fnf_tokenizer.py"], None),
    ("missing_flash_attn", [sys.executable, "missing_flash_attn.py"], None),
    ("perm_ckpt", [sys.executable, "perm_ckpt.py"], None),
    ("segv_ctypes", [sys.executable, "segv_ctypes.py"], None),
    ("abort_native", "bash -c '%s abort_native.py'" % sys.executable, None),
    ("walltime_loop", ["timeout", "7", sys.executable, "walltime_loop.py"], None),
    ("sigint_loop", [sys.executable, "sigint_loop.py"], "sigint"),
    ("meta_device", [sys.executable, "meta_device.py"], None),
    ("nan_exit0", [sys.executable, "nan_exit0.py"], None),
    ("success_warn", [sys.executable, "success_warn.py"], None),
    ("keyerror_column", [sys.executable, "keyerror_column.py"], None),
    ("assert_collator", [sys.executable, "assert_collator.py"], None),
    ("shape_runtime", [sys.executable, "shape_runtime.py"], None),
    ("exec_noexec", "echo '== env =='; python3 -m pip list 2>/dev/null | head -45; printf '#!/bin/bash\\npython3 train.py\\n' > launch_sft.sh; chmod 644 launch_sft.sh; ./launch_sft.sh", None),
    ("exec_notfound", "echo '== env =='; python3 -m pip list 2>/dev/null | head -45; echo 'launching accelerate'; accelerate launch --num_processes 8 train_sft.py --config recipes/zephyr.yaml", None),
    ("gloo_timeout", ["timeout", "90", "torchrun", "--nproc_per_node=2", "--master_port=29533", "gloo_timeout.py"], None),
]

only = set(sys.argv[1:])
for name, cmd, kind in RUNS:
    if only and name not in only: continue
    if name in PROGS:
        with open(os.path.join(W, name + ".py"), "w") as f: f.write(PROGS[name])
    shell = isinstance(cmd, str)
    env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
    p = subprocess.Popen(cmd if not shell else ["bash", "-c", cmd], cwd=W, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    if kind == "sigint":
        time.sleep(11); p.send_signal(signal.SIGINT)
    out, _ = p.communicate()
    rc = p.returncode
    shown = cmd if shell else " ".join(os.path.basename(c) if c == sys.executable else c for c in cmd)
    with open(os.path.join(CAP, name + ".log"), "wb") as f: f.write(out)
    with open(os.path.join(CAP, name + ".json"), "w") as f: json.dump({"name": name, "cmd": shown, "rc": rc}, f)
    print(name, rc, len(out.splitlines()))

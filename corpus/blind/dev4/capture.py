#!/usr/bin/env python3
"""Run small failing programs on this machine; store raw output + exit code in captured/.
Run once; make_set.py reads captured/ deterministically."""
import os, subprocess, json, sys, time, signal, textwrap
HERE = os.path.dirname(os.path.abspath(__file__))
CAP = os.path.join(HERE, 'captured'); os.makedirs(CAP, exist_ok=True)
WD = '/tmp/dev4_cap'; os.makedirs(WD, exist_ok=True)
os.chdir(WD)
def w(name, text, mode=0o644):
    with open(name, 'w') as f: f.write(textwrap.dedent(text).lstrip('\n'))
    os.chmod(name, mode)

PROGS = {}
# 1 DataLoader worker KeyError
w('dl_keyerror.py', '''
import torch
from torch.utils.data import Dataset, DataLoader
class DS(Dataset):
    def __init__(self):
        self.items = [{"image": torch.randn(3, 8, 8), "label": i % 10} for i in range(64)]
    def __len__(self): return len(self.items)
    def __getitem__(self, i):
        it = self.items[i]
        if i == 37: it = {"img": it["image"]}
        return it["image"], it["label"]
dl = DataLoader(DS(), batch_size=8, num_workers=2)
for epoch in range(2):
    for step, (x, y) in enumerate(dl):
        print(f"epoch {epoch} step {step} loss {1.0/(step+1):.4f}", flush=True)
''')
PROGS['dl_keyerror'] = ['python3', 'dl_keyerror.py']
# 2 DataLoader worker killed by SIGSEGV
w('dl_segv.py', '''
import os, signal, torch
from torch.utils.data import Dataset, DataLoader
class DS(Dataset):
    def __len__(self): return 400
    def __getitem__(self, i):
        if i == 203: os.kill(os.getpid(), signal.SIGSEGV)
        return torch.randn(4), i % 3
dl = DataLoader(DS(), batch_size=16, num_workers=2)
for step, (x, y) in enumerate(dl):
    print(f"step {step} loss {x.mean().item():.4f}", flush=True)
''')
PROGS['dl_segv'] = ['python3', 'dl_segv.py']
# 3 DataLoader worker killed by SIGKILL (no cause shown)
w('dl_kill.py', '''
import os, signal, time, torch
from torch.utils.data import Dataset, DataLoader
class DS(Dataset):
    def __len__(self): return 400
    def __getitem__(self, i):
        if i == 150: os.kill(os.getpid(), signal.SIGKILL)
        return torch.randn(4), i % 3
dl = DataLoader(DS(), batch_size=16, num_workers=2)
for step, (x, y) in enumerate(dl):
    print(f"step {step} loss {x.mean().item():.4f}", flush=True)
''')
PROGS['dl_kill'] = ['python3', 'dl_kill.py']
# 4 torchrun gloo: rank 1 raises ValueError, rank 0 in all_reduce
w('ddp_gloo.py', '''
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
r = dist.get_rank()
t = torch.ones(4)
for step in range(3):
    dist.all_reduce(t)
    print(f"[rank{r}] step {step} sum {t.sum().item()}", flush=True)
if r == 1:
    cfg = {"lr": 0.1}
    raise ValueError(f"Unknown optimizer 'adamw8bit'. Choose from ['sgd', 'adam', 'adamw']")
dist.all_reduce(t)
print("done")
''')
PROGS['torchrun_gloo_valueerror'] = ['timeout', '60', 'torchrun', '--nproc_per_node=2', '--master_port=29511', 'ddp_gloo.py']
# 5 torchrun gloo: rank 0 shape mismatch RuntimeError
w('ddp_gloo_rt.py', '''
import os, torch, torch.distributed as dist
dist.init_process_group("gloo")
r = dist.get_rank()
w = torch.nn.Linear(128, 64)
x = torch.randn(8, 128 if r == 1 else 96)
dist.barrier()
y = w(x)
dist.all_reduce(y.sum().detach())
''')
PROGS['torchrun_gloo_shape'] = ['timeout', '60', 'torchrun', '--nproc_per_node=2', '--master_port=29512', 'ddp_gloo_rt.py']
# 6 chained: FileNotFoundError -> RuntimeError (direct cause)
w('chain_fnf.py', '''
import torch
def load_ckpt(p):
    try:
        return torch.load(p, map_location="cpu")
    except FileNotFoundError as e:
        raise RuntimeError(f"could not resume from checkpoint {p}") from e
print("Resuming from checkpoints/run7/last.ckpt", flush=True)
state = load_ckpt("checkpoints/run7/last.ckpt")
''')
PROGS['chain_fnf'] = ['python3', 'chain_fnf.py']
# 7 chained: ZeroDivisionError during handling -> KeyError
w('chain_div.py', '''
import logging
logging.basicConfig(format="%(asctime)s - %(levelname)s - %(message)s", level=logging.INFO)
log = logging.getLogger("train")
metrics = {"loss_sum": 12.5}
n_valid = 0
for epoch in range(3):
    log.info("epoch %d finished, evaluating", epoch)
    if epoch == 2:
        try:
            avg = metrics["loss_sum"] / n_valid
        except ZeroDivisionError:
            log.warning("empty validation split")
            avg = metrics["val_loss"]
    n_valid = 0
''')
PROGS['chain_div'] = ['python3', 'chain_div.py']
# 8 exec failures
w('run_train.sh', '''
#!/bin/bash
echo "launching on $(hostname -s 2>/dev/null || echo node)"
pythn train.py --config configs/base.yaml
''', 0o755)
PROGS['exec_127'] = ['bash', 'run_train.sh']
w('train_noexec.sh', '''
#!/bin/bash
python3 -c "print('training')"
''', 0o644)
w('launch_noexec.sh', '''
#!/bin/bash
set -e
echo "[launch] starting job"
./train_noexec.sh
''', 0o755)
PROGS['exec_126_noexec'] = ['bash', 'launch_noexec.sh']
w('train_py2.py', '''
#!/usr/bin/python2.7
print "hello"
''', 0o755)
w('launch_badinterp.sh', '''
#!/bin/bash
echo "[launch] host ok, starting"
./train_py2.py --epochs 10
''', 0o755)
PROGS['exec_badinterp'] = ['bash', 'launch_badinterp.sh']
# 9 permission: python writing into /proc (EACCES/EIO?) -> use read-only bind? use /proc/version
w('perm.py', '''
import os, json
print("saving run metadata", flush=True)
with open("/proc/version", "w") as f:
    json.dump({"run": 7}, f)
''')
PROGS['perm_proc'] = ['python3', 'perm.py']
# 10 assertion
w('assert_fail.py', '''
import torch
B, T, C = 4, 128, 64
block_size = 96
x = torch.randint(0, 50257, (B, T))
print(f"batch shape {tuple(x.shape)}", flush=True)
assert T <= block_size, f"Cannot forward sequence of length {T}, block size is only {block_size}"
''')
PROGS['assertion'] = ['python3', 'assert_fail.py']
# 11 zero division
w('zdiv.py', '''
samples = []
def evaluate(preds):
    correct = sum(1 for p in preds if p)
    return correct / len(preds)
print("running validation", flush=True)
acc = evaluate(samples)
''')
PROGS['zerodiv'] = ['python3', 'zdiv.py']
# 12 SIGINT handler exits 0
w('sigint_exit0.py', '''
import signal, sys, time, torch
model = torch.nn.Linear(4, 2)
def handler(sig, frame):
    print(f"Received signal {sig}; saving checkpoint to ckpt/interrupted.pt and exiting", flush=True)
    sys.exit(0)
signal.signal(signal.SIGINT, handler)
step = 0
while True:
    step += 1
    if step % 5 == 0: print(f"step {step} loss {1.0/step:.4f}", flush=True)
    time.sleep(0.1)
''')
# 13 SIGKILL run
w('long.py', '''
import time
step = 0
while True:
    step += 1
    print(f"iter {step} loss {2.0/step:.4f}", flush=True)
    time.sleep(0.2)
''')
# 14 MemoryError via ulimit -v
w('memerr.py', '''
import numpy as np
print("building feature cache", flush=True)
feats = [np.ones((1024, 1024, 64), dtype=np.float32) for _ in range(8)]
''')
PROGS['memerror_ulimit'] = ['bash', '-c', 'ulimit -v 1500000; python3 memerr.py']
w('memerr2.py', '''
big = []
print("loading corpus into memory", flush=True)
while True:
    big.append(bytearray(256 * 1024 * 1024))
''')
PROGS['memerror_py'] = ['bash', '-c', 'ulimit -v 1200000; python3 memerr2.py']
# 15 ENOSPC via /dev/full
w('enospc.py', '''
import torch
m = torch.nn.Linear(512, 512)
print("epoch 3 done, saving checkpoint", flush=True)
torch.save(m.state_dict(), "/dev/full")
''')
PROGS['enospc_torchsave'] = ['python3', 'enospc.py']
w('enospc2.py', '''
import numpy as np
arr = np.zeros((256, 1024), dtype=np.float32)
with open("/dev/full", "wb") as f:
    print("writing embeddings", flush=True)
    f.write(arr.tobytes())
''')
PROGS['enospc_write'] = ['python3', 'enospc2.py']
# 16 timeout(1)
PROGS['timeout124'] = ['timeout', '3', 'python3', 'long.py']
# 17 FileNotFoundError
w('fnf.py', '''
import torch
print("loading dataset index", flush=True)
with open("/data/imagenet/train_index.json") as f:
    idx = f.read()
''')
PROGS['fnf'] = ['python3', 'fnf.py']
# 18 ModuleNotFoundError
w('mnf.py', '''
import torch
from apex import amp
''')
PROGS['missing_apex'] = ['python3', 'mnf.py']
# 19 shape mismatch
w('shape.py', '''
import torch
m = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(784, 10))
x = torch.randn(32, 3, 28, 28)
print("forward pass", flush=True)
m(x)
''')
PROGS['shape_mismatch'] = ['python3', 'shape.py']
# 20 detect_anomaly NaN
w('anomaly.py', '''
import torch
torch.manual_seed(0)
w = torch.randn(4, requires_grad=True)
with torch.autograd.detect_anomaly():
    for step in range(3):
        y = torch.log(w - 5.0).sum() if step == 2 else (w * w).sum()
        print(f"step {step} loss {y.item()}", flush=True)
        y.backward()
''')
PROGS['anomaly_nan'] = ['python3', 'anomaly.py']
# 21 NaN to the end exit 0
w('nan_exit0.py', '''
import torch
torch.manual_seed(0)
m = torch.nn.Linear(16, 1)
opt = torch.optim.SGD(m.parameters(), lr=50.0)
x = torch.randn(64, 16) * 10; y = torch.randn(64, 1)
for step in range(40):
    loss = ((m(x) - y) ** 2).mean()
    opt.zero_grad(); loss.backward(); opt.step()
    if step % 2 == 0: print(f"step {step:3d} | loss {loss.item():.4f}", flush=True)
print("training finished, saved model to out/model.pt")
''')
PROGS['nan_exit0'] = ['python3', 'nan_exit0.py']
# 22 abort
w('abort.py', '''
import faulthandler, os, time
faulthandler.enable()
print("initializing custom op", flush=True)
os.abort()
''')
PROGS['abort'] = ['python3', 'abort.py']
# 23 segfault
w('segv.py', '''
import faulthandler, ctypes
faulthandler.enable()
print("loading native extension", flush=True)
ctypes.string_at(0)
''')
PROGS['segv'] = ['python3', 'segv.py']
# 24 meta device
w('meta.py', '''
import torch
with torch.device("meta"):
    m = torch.nn.Linear(16, 4)
x = torch.randn(2, 16)
print("materialized?", m.weight.device, flush=True)
out = m(x)
print(out.sum().item())
''')
PROGS['meta_device'] = ['python3', 'meta.py']

# permission: drop privileges then write into a root-owned 0700 dir
w('perm_setuid.py', '''
import os, torch
os.makedirs("/tmp/dev4_cap/shared_ckpt", exist_ok=True)
os.chmod("/tmp/dev4_cap/shared_ckpt", 0o700)
import io
m = torch.nn.Linear(8, 8)
buf = io.BytesIO(); torch.save(m.state_dict(), buf)
os.setgid(65534); os.setuid(65534)
print("epoch 1 complete; saving checkpoint", flush=True)
with open("/tmp/dev4_cap/shared_ckpt/epoch1.pt", "wb") as f:
    f.write(buf.getvalue())
''')
PROGS['perm_setuid'] = ['python3', 'perm_setuid.py']
# (perm_rofs removed: writing /proc/sys succeeded as root here)

def run(name, cmd, sig_after=None, sig=None):
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=dict(os.environ, PYTHONUNBUFFERED='1', OMP_NUM_THREADS='1'))
    if sig_after:
        time.sleep(sig_after); p.send_signal(sig)
    out, _ = p.communicate()
    rc = p.returncode
    with open(os.path.join(CAP, name + '.out'), 'wb') as f: f.write(out)
    with open(os.path.join(CAP, name + '.json'), 'w') as f:
        json.dump({'cmd': cmd, 'rc': rc, 'secs': round(time.time() - t0, 1)}, f)
    print(name, rc, flush=True)

only = sys.argv[1:]
for n, c in PROGS.items():
    if only and n not in only: continue
    run(n, c)
if not only or 'sigint_exit0' in only:
    run('sigint_exit0', ['python3', 'sigint_exit0.py'], 3.0, signal.SIGINT)
if not only or 'sigkill' in only:
    run('sigkill', ['python3', 'long.py'], 2.5, signal.SIGKILL)
if not only or 'sigkill_bash' in only:
    # bash wrapper: kill the python child with SIGKILL; bash reports "Killed"
    w('wrap.sh', '#!/bin/bash\npython3 long.py &\nPID=$!\nsleep 2.5\nkill -9 $PID\nwait $PID\n', 0o755)
    run('sigkill_bash', ['bash', 'wrap.sh'])

import subprocess, json, os, sys
CAP = "/tmp/b9-cap"; OUT = "/work/blind9/captured"
os.makedirs(OUT, exist_ok=True)
HDR = '''#!/bin/bash
echo "[{name}] start: $(date -u '+%Y-%m-%d %H:%M:%S') host=$(hostname) user=$(whoami)"
cd /tmp/b9-cap
export PYTHONUNBUFFERED=1 OMP_NUM_THREADS=1
'''
T = "python3 train.py"
jobs = [
 # successes
 ("ok_s0", "success", f"{T} --mode ok --steps 60 --seed 0"),
 ("ok_s1", "success", f"{T} --mode ok --steps 80 --seed 1 --lr 3e-3"),
 ("ok_s2_amp", "success", f"{T} --mode ok --steps 50 --seed 2 --amp"),
 ("ok_s3_amp", "success", f"{T} --mode ok --steps 100 --seed 3 --amp --bs 64 --log_every 20"),
 ("ok_retry", "success", f"{T} --mode retry --steps 40 --seed 4"),
 ("ok_retry2", "success", f"{T} --mode retry --steps 70 --seed 5 --amp"),
 ("ok_dist", "success", "torchrun --nproc_per_node 2 --master_port 29511 dist.py --mode ok --steps 40"),
 ("ok_dist2", "success", "torchrun --standalone --nproc_per_node 2 dist.py --mode ok --steps 30"),
 ("ok_evaldump", "success", "python3 evaldump.py && echo 'eval finished'"),
 ("ok_pack", "success", "./pack_buckets 16 && " + f"{T} --mode ok --steps 30 --seed 6"),
 ("ok_s7", "success", f"{T} --mode ok --steps 120 --seed 7 --log_every 30 --lr 1e-3"),
 ("ok_s8_amp", "success", f"{T} --mode ok --steps 40 --seed 8 --amp --log_every 5"),
 ("ok_wandb_fallback", "success", f"python3 -c 'import wandb' || echo 'wandb not available, logging to stdout only'\n{T} --mode ok --steps 30 --seed 9"),
 # failures
 ("keyerr", "traceback", f"{T} --mode keyerr --steps 60 --seed 10"),
 ("typeerr", "runtime_error", "python3 typeerr.py"),
 ("attrerr", "traceback", "python3 attrerr.py"),
 ("idxerr", "traceback", "python3 idxerr.py"),
 ("badjson", "traceback", "python3 badjson.py"),
 ("unicode", "traceback", "python3 unicode.py"),
 ("valerr", "traceback", "python3 valerr.py"),
 ("fnf_data", "file_not_found", f"{T} --mode fnf --data data/train_v2.jsonl"),
 ("fnf_ckpt", "file_not_found", f"{T} --mode ckpt_fnf --steps 20"),
 ("missing_wandb", "missing_module", f"{T} --mode missing_wandb"),
 ("missing_flash", "missing_module", f"{T} --mode missing_flash --amp"),
 ("zerodiv", "div_zero", f"{T} --mode zerodiv --steps 30 --seed 11"),
 ("fpe", "div_zero", "./pack_buckets 0"),
 ("assert", "assertion", f"{T} --mode assert --steps 30 --seed 12"),
 ("shape", "runtime_error", f"{T} --mode shape --steps 40 --seed 13"),
 ("anomaly", "nan_loss", f"{T} --mode anomaly --steps 40 --seed 14"),
 ("nanval", "nan_loss", f"{T} --mode nan --steps 60 --seed 15"),
 ("ram_torch", "ram_oom", f"{T} --mode ram --steps 40 --seed 16"),
 ("ram_numpy", "ram_oom", "python3 numpy_oom.py"),
 ("segv", "segfault", "python3 segv.py"),
 ("segv_fh", "segfault", "python3 segv.py --fh"),
 ("sigbus", "segfault", "python3 sigbus.py"),
 ("diskfull", "disk_full", f"{T} --mode diskfull --steps 30 --seed 17"),
 ("diskfull2", "disk_full", "python3 write_preds.py"),
 ("timeout", "walltime", f"timeout 6 {T} --mode sleep --steps 400 --seed 18 --log_every 2\nrc=$?\necho \"train.py exited with status $rc\"\nexit $rc"),
 ("sigterm", "interrupted", f"( sleep 5; kill -TERM $(pgrep -P $$ -f 'train.py --mode sleep') ) &\n{T} --mode sleep --steps 400 --seed 19 --log_every 2"),
 ("sigint", "interrupted", f"set -m\n{T} --mode sleep --steps 400 --seed 20 --log_every 2 &\npid=$!\nsleep 5\nkill -INT $pid\nwait $pid"),
 ("exec127", "exec_failure", "module load cuda/12.1 2>/dev/null\npythn train.py --mode ok"),
 ("exec126", "exec_failure", "chmod -x /tmp/b9-cap/run_eval.sh 2>/dev/null; printf 'python3 evaldump.py\\n' > /tmp/b9-cap/run_eval.sh; chmod -x run_eval.sh; ./run_eval.sh"),
 ("native", "native_abort", "./build_index"),
 ("silent", "unknown", f"{T} --mode silent --steps 30 --seed 21"),
 ("perm", "permission", "chown root:root results; chmod 755 results\nsetpriv --reuid=65534 --regid=65534 --clear-groups /usr/bin/python3 evaldump.py"),
 ("oomkill", "oom_killer", "echo $$ > /sys/fs/cgroup/memory/b9test/cgroup.procs\npython3 numpy_grow.py"),
 ("gloo_hang", "nccl", "PG_TIMEOUT=15 torchrun --nproc_per_node 2 --master_port 29512 dist.py --mode hang --steps 40"),
 ("dist_crash", "traceback", "torchrun --nproc_per_node 2 --master_port 29513 dist.py --mode crash --steps 40"),
]
sel = sys.argv[1:]
man = {}
if os.path.exists(f"{OUT}/manifest.json"): man = json.load(open(f"{OUT}/manifest.json"))
for name, mode, body in jobs:
    if sel and name not in sel: continue
    js = f"{CAP}/jobs/{name}.sh"
    open(js, "w").write(HDR.format(name=name) + body + "\n")
    with open(f"{OUT}/{name}.log", "wb") as f:
        r = subprocess.run(["bash", js], stdout=f, stderr=subprocess.STDOUT, timeout=300, cwd=CAP)
    man[name] = {"mode": mode, "rc": r.returncode, "cmd": body}
    print(name, mode, r.returncode, flush=True)
json.dump(man, open(f"{OUT}/manifest.json", "w"), indent=1)

#!/usr/bin/env python3
"""Run small failing programs on this machine; record real output and exit codes into captured/.
Run once (not part of make_set.py, so make_set.py stays byte-identical per seed)."""
import subprocess, os, json, shutil, signal, time, sys
HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "capsrc"); OUT = os.path.join(HERE, "captured")
PROJ = "/tmp/dev5proj"
shutil.rmtree(PROJ, ignore_errors=True); os.makedirs(PROJ)
NAMES = {"c01_divzero.py":"train_cls.py","c02_keyerror_worker.py":"train_text.py","c03_modnotfound.py":"train_llm.py",
 "c04_fnf_ckpt.py":"finetune.py","c05_enospc.py":"train_small.py","c06_numpy_alloc.py":"build_cache.py","c07_segv.py":"preprocess.py",
 "c08_abort.py":"serve_worker.py","c09_loop.py":"train_ae.py","c10_shape.py":"train_cnn.py","c11_meta.py":"load_sharded.py",
 "c12_gloo_timeout.py":"ddp_train.py","c13_assert.py":"prepare_vocab.py","c14_success.py":"train_reg.py","c15_nan.py":"train_linear.py",
 "c16_typeerror.py":"schedule.py","c17_argparse.py":"train.py","c18_sigint.py":"train_loop.py","c19_missing_cmd.sh":"run_ds.sh","c20_badinterp.py":"launch.py","c21_perm.py":"make_run_dir.py","c22_crlf.sh":"submit_train.sh","c23_noexec.sh":"run_train.sh"}
for k, v in NAMES.items():
    shutil.copy(os.path.join(SRC, k), os.path.join(PROJ, v))
os.chmod(os.path.join(PROJ, "launch.py"), 0o755)
env = dict(os.environ, PYTHONUNBUFFERED="1", OMP_NUM_THREADS="1")
PREAMBLE = r'''echo "== job $$ started $(date -u '+%Y-%m-%dT%H:%M:%S') on $(hostname) (user $(id -un))"
echo "== working dir: $PWD"
echo "== python: $(command -v python3) ($(python3 -V 2>&1))"
python3 -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__, 'cuda', torch.cuda.is_available()); print(torch.__config__.show())"
echo "== pip list (head)"
python3 -m pip list 2>/dev/null | head -${NPIP:-30}
echo "== nproc $(nproc); mem $(free -g | awk '/Mem:/{print $2}') GiB"
'''
import shlex
def run(key, argv, desc, shell=False, timeout=120, signal_after=None, sig=None):
    t0 = time.time()
    cmd = argv if isinstance(argv, str) else shlex.join(argv)
    script = PREAMBLE + "echo \"+ %s\"\n%s\n" % (cmd.replace('"', '\\"'), cmd)
    e2 = dict(env, NPIP=str(20 + (sum(map(ord, key)) % 25)))
    p = subprocess.Popen(["bash", "-c", script], cwd=PROJ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=e2,
                         preexec_fn=lambda: (signal.signal(signal.SIGINT, signal.SIG_DFL), os.setpgrp()))
    argv = ["bash", "-c", "<preamble>; " + cmd]
    if signal_after:
        time.sleep(signal_after + 4); os.killpg(p.pid, sig)
    out, _ = p.communicate(timeout=timeout)
    rc = p.returncode
    with open(os.path.join(OUT, key + ".log"), "wb") as f: f.write(out)
    with open(os.path.join(OUT, key + ".json"), "w") as f:
        json.dump({"rc": rc, "cmd": argv if isinstance(argv, str) else " ".join(argv), "desc": desc, "secs": round(time.time()-t0, 1)}, f)
    print(key, rc, len(out.splitlines()), flush=True)
py = sys.executable
only = sys.argv[1:]
jobs = [
 ("cap_divzero", [py, "train_cls.py"], "ZeroDivisionError in macro-F1 for a class never predicted", {}),
 ("cap_keyerror_worker", [py, "train_text.py"], "KeyError in Dataset.__getitem__ re-raised from DataLoader worker", {}),
 ("cap_modnotfound", [py, "train_llm.py"], "import of flash_attn, not installed", {}),
 ("cap_fnf_ckpt", [py, "finetune.py"], "torch.load of a missing checkpoint path", {}),
 ("cap_enospc", [py, "train_small.py"], "torch.save to /dev/full (ENOSPC)", {}),
 ("cap_numpy_alloc", "ulimit -v 3000000; exec %s build_cache.py" % py, "numpy allocation under ulimit -v 3GB", {"shell": True}),
 ("cap_segv", [py, "preprocess.py"], "ctypes.string_at(0) -> SIGSEGV with faulthandler", {}),
 ("cap_abort", [py, "serve_worker.py"], "os.abort() with faulthandler", {}),
 ("cap_timeout", ["timeout", "8", py, "train_ae.py"], "timeout(1) 8s around an endless training loop", {}),
 ("cap_shape", [py, "train_cnn.py"], "Linear input size mismatch (mat1 and mat2 shapes)", {}),
 ("cap_meta", [py, "load_sharded.py"], "module left on meta device, called with cpu input", {}),
 ("cap_gloo_timeout", "torchrun --nproc_per_node=2 --master_port=29561 ddp_train.py", "torchrun gloo 2 ranks, rank1 stalls, rank0 all_reduce times out (5s)", {"shell": True, "timeout": 180}),
 ("cap_assert", [py, "prepare_vocab.py"], "AssertionError on vocab size", {}),
 ("cap_success", [py, "-W", "default", "train_reg.py"], "small regression run that finishes with warnings", {}),
 ("cap_nan", [py, "train_linear.py"], "SGD lr too high: loss to inf/nan, exits 0", {}),
 ("cap_typeerror", [py, "schedule.py"], "lr from JSON is a str: TypeError", {}),
 ("cap_argparse", [py, "train.py", "--lr", "3e-4", "--batchsize", "64"], "argparse unrecognized/required args", {}),
 ("cap_sigint", [py, "train_loop.py"], "SIGINT (Ctrl-C) after 6s -> KeyboardInterrupt", {"signal_after": 6, "sig": signal.SIGINT}),
 ("cap_cmd_not_found", ["bash", "run_ds.sh"], "batch script calling a misspelled launcher (127)", {}),
 ("cap_bad_interp", ["bash", "-c", "./launch.py --config cfg.yaml"], "script with #!/usr/bin/env python3.9 that does not exist (127 via env)", {}),
 ("cap_perm", ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/python3", "make_run_dir.py"], "run as nobody, mkdir under a root-owned 755 dir -> PermissionError", {}),
 ("cap_crlf", ["bash", "-c", "chmod +x submit_train.sh && ./submit_train.sh"], "shell script saved with CRLF line endings (bad interpreter)", {}),
 ("cap_noexec", ["bash", "-c", "chmod -x run_train.sh; ./run_train.sh --epochs 10"], "script without exec bit (126)", {}),
 ("cap_sigterm", [py, "train_loop.py"], "SIGTERM by hand (kill) after 5s, no handler", {"signal_after": 5, "sig": signal.SIGTERM}),
]
for key, argv, desc, kw in jobs:
    if only and key not in only: continue
    run(key, argv, desc, **kw)

import subprocess, os, json, sys
H = 'echo "=== job $JOBNAME started $(date -u +%FT%TZ) on $(hostname) ==="; echo "cwd: $PWD"; python -c "import torch,sys;print(\'torch\',torch.__version__,\'threads\',torch.get_num_threads())"; '
T = "cd /tmp/b8-cap; "
jobs = {
 "walltime_int_1": T + H + "timeout -s INT 6 python train.py --steps 400 --sleep 0.05",
 "walltime_int_2": T + H + "timeout --signal=INT 4s python -u train.py --steps 1000 --sleep 0.02 --mode warn",
 "walltime_term": T + H + "timeout 5 python train.py --steps 400 --sleep 0.05; rc=$?; echo \"train.py exited with status $rc\"; exit $rc",
 "walltime_int_3": T + H + "set -e; timeout -s INT 3 python train.py --steps 400 --sleep 0.03; echo done",
 "disk_tar_1": T + H + "mkdir -p small/run && python train.py --steps 10 && dd if=/dev/urandom of=/tmp/b8-cap/payload.bin bs=1M count=3 status=none; echo 'archiving outputs'; tar cf small/run/outputs.tar payload.bin train.py; rc=$?; df -h small; exit $rc",
 "disk_tar_2": T + H + "python train.py --steps 10; echo '--- packing results ---'; tar czf - /tmp/b8-cap/payload.bin 2>/dev/null | cat > small/run/results.tgz; echo \"tar exit: ${PIPESTATUS[0]} ${PIPESTATUS[1]}\"; df -h /tmp/b8-cap/small; exit 1",
 "disk_torchsave_1": T + H + "python train.py --steps 40 --mode save --ckpt small/ckpt; rc=$?; df -h small; exit $rc",
 "disk_enospc_1": T + H + "python train.py --steps 40 --mode enospc --ckpt small/ckpt2",
 "perm_redirect_1": T + "mkdir -p /tmp/b8-cap/locked && chmod 755 /tmp/b8-cap/locked; runuser -u nobody -- bash -c 'cd /tmp/b8-cap; echo \"=== job started $(date -u +%FT%TZ) as $(id -un) ===\"; /usr/bin/python3 train_min.py > /tmp/b8-cap/locked/train.out; echo exit=$?; exit 1'",
 "perm_redirect_2": T + "runuser -u nobody -- bash -c 'cd /tmp/b8-cap; echo \"=== job started $(date -u +%FT%TZ) ===\"; /usr/bin/python3 train_min.py 2>&1 | tee /tmp/b8-cap/locked/train.log; exit ${PIPESTATUS[1]}'",
 "perm_python": T + "runuser -u nobody -- bash -c 'cd /tmp/b8-cap; echo \"=== job started $(date -u +%FT%TZ) ===\"; /usr/bin/python3 train_min.py /tmp/b8-cap/locked/ckpt/last.pkl'",
 "zerodiv_1": T + H + "python train.py --steps 30 --mode zerodiv",
 "sigfpe_1": T + H + "echo 'decomposing mesh for 0 ranks'; ./fpe 0; exit $?",
 "segv_1": T + H + "python train.py --steps 30 --mode segv; exit $?",
 "segv_2": T + H + "python -X faulthandler train.py --steps 30 --mode segv; exit $?",
 "memerr_1": T + H + "ulimit -v 4000000; python train.py --steps 30 --mode memerr",
 "badalloc_1": T + H + "ulimit -v 3000000; ./badalloc; exit $?",
 "missing_mod_1": T + H + "python -c 'import torch; print(torch.__version__); import apex; from apex import amp'",
 "missing_mod_2": T + H + "python -c 'import ctypes; print(\"loading kernels\"); ctypes.CDLL(\"libcudnn_cnn_infer.so.8\")'",
 "fnf_1": T + H + "python train.py --steps 30 --mode fnf --ckpt /tmp/b8-cap/nonexistent_run",
 "fnf_2": T + H + "python train.py --steps 10 --data /scratch/none && python eval.py --split val",
 "exec127": T + H + "python train.py --steps 10; torchrun_wrapper --nproc 8 train.py",
 "exec126": T + H + "printf '\\x7fELF\\x01\\x01garbage' > ./preprocess_bin; chmod +x ./preprocess_bin; ./preprocess_bin --shards 64",
 "assert_py": T + H + "python train.py --steps 30 --mode assert",
 "assert_c": T + H + "./cassert; exit $?",
 "terminate_cpp": T + H + "./terminate; exit $?",
 "shape_rt": T + H + "python train.py --steps 30 --mode shape",
 "keyerror": T + H + "python train.py --steps 30 --mode keyerror",
 "valerr_json": T + H + "python train.py --steps 30 --mode valerr",
 "nan_detr": T + H + "python train.py --steps 40 --mode detrnan",
 "nan_anomaly": T + H + "python train.py --steps 30 --mode anomaly",
 "int_term": T + H + "python train.py --steps 30 --mode selfterm; exit $?",
 "int_sigint": T + H + "python train.py --steps 30 --mode selfint; exit $?",
 "dist_hang": T + H + "torchrun --standalone --nproc-per-node 4 dist.py hang",
 "dist_zdiv": T + H + "torchrun --standalone --nproc-per-node 4 dist.py zdiv",
 "dist_kill": T + H + "torchrun --standalone --nproc-per-node 4 dist.py kill",
 "dist_ok": T + H + "torchrun --standalone --nproc-per-node 4 dist.py ok",
 "dist_ok_tee": T + H + "torchrun --standalone --nproc-per-node 2 --tee 3 dist.py ok",
 "ok_warn_1": T + H + "python train.py --steps 60 --mode warn",
 "ok_solver": T + H + "./solver",
 "ok_solver2": T + H + "for c in 1 2; do echo \"case $c\"; ./solver; done; echo 'all cases done'",
}
os.makedirs("out", exist_ok=True)
res = {}
sel = sys.argv[1:] or list(jobs)
for name in sel:
    env = dict(os.environ, JOBNAME=name, PYTHONUNBUFFERED="1")
    p = subprocess.run(["bash", "-c", jobs[name]], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, timeout=300)
    open(f"out/{name}.log", "wb").write(p.stdout)
    res[name] = p.returncode
    print(name, p.returncode, flush=True)
old = json.load(open("out/rc.json")) if os.path.exists("out/rc.json") else {}
old.update(res); json.dump(old, open("out/rc.json", "w"), indent=1)

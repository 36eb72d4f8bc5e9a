import subprocess, json, os, time, sys, signal
os.chdir(os.path.dirname(os.path.abspath(__file__)))
OUT="../captured"
meta={}
WRAP=set(os.environ.get("WRAP","").split(","))
def cap(name, cmd, label, desc, shell=True, pre=None, post=None, env=None):
    if name in WRAP: cmd="./job.sh "+cmd; desc=desc+" (run inside batch-style wrapper job.sh that prints env/torch config/pip list first)"
    if pre: subprocess.run(pre, shell=True)
    t=time.time()
    p=subprocess.Popen(cmd, shell=shell, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    if post: post(p)
    out,_=p.communicate()
    open(f"{OUT}/{name}.log","wb").write(out)
    meta[name]={"label":label,"rc":p.returncode,"desc":desc,"cmd":cmd,"secs":round(time.time()-t,1)}
    print(name, p.returncode, round(time.time()-t,1), flush=True)
    json.dump(meta[name], open(f"{OUT}/{name}.json","w"), indent=1, sort_keys=True)
which=sys.argv[1:]
def want(n): return not which or n in which
E=dict(os.environ, PYTHONUNBUFFERED="1")
if want("divzero"): cap("divzero","srun -N1 -n1 -J eval_cls python3 c_divzero.py","div_zero","srun -n1 python3 script dividing by zero-length validation set")
if want("missing_ckpt"): cap("missing_ckpt","srun -n1 -J bert-ft python3 c_missing_ckpt.py","file_not_found","srun: torch.load of a purged scratch checkpoint path")
if want("perm"): cap("perm","runuser -u nobody -- /usr/bin/python3 c_perm.py","permission","python3 run as unprivileged user 'nobody' creating a dir inside a root-owned 0755 shared project dir",pre="mkdir -p /tmp/dev6_proj/shared/results && chmod 755 /tmp/dev6_proj /tmp/dev6_proj/shared /tmp/dev6_proj/shared/results && cp c_perm.py /tmp/dev6_proj/ && chmod 644 c_perm.py")
if want("import"): cap("import","srun -n1 -J ds-train python3 c_import.py","missing_module","srun: import deepspeed in an env where it is not installed")
if want("segv"): cap("segv","python3 c_segv.py","segfault","python3 with faulthandler reading address 0 via ctypes (SIGSEGV)")
if want("segv_srun"): cap("segv_srun","srun -n1 -J fused python3 c_segv.py","segfault","srun: same SIGSEGV via ctypes, srun reports the step")
if want("abort"): cap("abort","srun -n1 -J nvf python3 c_abort.py","native_abort","srun: os.abort() with faulthandler (SIGABRT)")
if want("enospc"): cap("enospc","python3 c_enospc.py","disk_full","torch.save into /dev/full (ENOSPC)")
if want("memerr"): cap("memerr","bash -c 'ulimit -v 8000000; exec python3 c_memerr.py'","ram_oom","numpy allocation of 61 GB under ulimit -v 8GB")
if want("shape"): cap("shape","srun -n1 python3 c_shape.py","runtime_error","srun: Linear with wrong input width (mat1 and mat2 shapes)")
if want("metadev"): cap("metadev","python3 c_meta.py","device_mismatch","model built under torch.device('meta') called with a CPU tensor")
if want("workerkey"): cap("workerkey","srun -n1 -c2 python3 c_workerkey.py","traceback","srun: DataLoader worker KeyError re-raised in main process")
if want("assert"): cap("assert","python3 c_assert.py","assertion","config assert on hidden/heads divisibility")
if want("nan"): cap("nan","srun -n1 -J mlp-lr python3 c_nan.py","nan_loss","srun: SGD lr=1e4 diverges to NaN, exits 0")
if want("success"): cap("success","srun -n1 -J mlp python3 c_success.py","success","srun: small AdamW run with scheduler-order UserWarning, exits 0")
if want("gloo"): cap("gloo","timeout 120 torchrun --nproc_per_node=2 --master_port=29561 c_gloo.py","unknown","torchrun 2 ranks gloo: rank 1 dies (os._exit) after first allreduce; rank0's next allreduce fails",env=E)
if want("timeout"): cap("timeout","timeout 6 python3 c_sleep.py","walltime","coreutils timeout 6 around a training loop (exit 124)")
if want("badinterp"): cap("badinterp","./train_badinterp.sh","exec_failure","script with misspelled shebang interpreter (#!/usr/bin/env pythn3)")
if want("noexec"): cap("noexec","srun -n1 ./run_noexec.sh","exec_failure","srun of a script without exec bit")
if want("notfound"): cap("notfound","bash -c 'deepspeedd --num_gpus 1 train.py'","exec_failure","bash: mistyped launcher command (127)")
def cancel_after(p, s=5):
    time.sleep(s)
    q=subprocess.run("squeue -h -n dev6cancel -o %i",shell=True,capture_output=True,text=True).stdout.split()
    for j in q: subprocess.run(["scancel",j])
if want("scancel"): cap("scancel","srun -n1 -J dev6cancel python3 c_sigint.py","interrupted","srun job cancelled by its owner with scancel <jobid> after 5 s",post=cancel_after)
def sigint_after(p):
    time.sleep(5); os.killpg(p.pid, signal.SIGINT)
if want("sigint"): cap("sigint","python3 c_sigint.py","interrupted","interactive python3 loop, SIGINT (Ctrl-C) sent to the process group after 5 s",post=sigint_after)
if want("srunwall"): cap("srunwall","srun -n1 -t 1 -J dev6wall python3 c_sleep.py","walltime","srun -t 1 (1 minute limit) around a looping script; Slurm kills at time limit")
if want("gloo_to"): cap("gloo_to","timeout 120 torchrun --nproc_per_node=2 --master_port=29563 c_gloo_to.py","nccl","torchrun 2 ranks gloo, 6 s PG timeout: rank 1 stalls 25 s, rank 0's allreduce times out",env=E)
def cancel_after2(p, s=6):
    time.sleep(s)
    q=subprocess.run("squeue -h -n dev6term -o %i",shell=True,capture_output=True,text=True).stdout.split()
    for j in q: subprocess.run(["scancel","--signal=TERM",j])
if want("sigterm_handler"): cap("sigterm_handler","srun -n1 -J dev6term python3 c_sigterm_handler.py","interrupted","srun job; owner runs scancel --signal=TERM <jobid>; script's SIGTERM handler checkpoints and exits 0",post=cancel_after2)

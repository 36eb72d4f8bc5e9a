#!/usr/bin/env python3
"""dev4 blind held-out set generator (stdlib only, Python 3.6+).
Usage: python3 make_set.py [--seed 20261205] [--out DIR]
Composed logs are generated from the seed; captured logs embed the verbatim output of small
programs really run on this machine (see capture.py; raw output in captured/*.out, exit code in
captured/*.json), preceded by a generated launcher preamble."""
import json, os, random, sys, datetime

HERE = os.path.dirname(os.path.abspath(__file__))
SEED = 20261205
OUTDIR = HERE
args = sys.argv[1:]
if '--seed' in args: SEED = int(args[args.index('--seed') + 1])
if '--out' in args: OUTDIR = args[args.index('--out') + 1]
R = random.Random(SEED)
SET = 'dev4'

# ----------------------------------------------------------------- sources (exact wording)
SRC = {
 'slurm_time': 'slurm src/slurmd/slurmstepd (job_cancel msg); https://github.com/ZettaAI/zetta_utils/issues/671 ; https://github.com/desihub/desitarget/issues/628',
 'slurm_oom': 'slurm src/plugins/task/cgroup ("Detected %u oom_kill event"); https://github.com/equinor/ert/issues/7797 (dmesg oom lines)',
 'lsf': 'IBM LSF termination reasons (TERM_RUNLIMIT/TERM_MEMLIMIT/TERM_OWNER/TERM_PREEMPT) https://www.hpc.dtu.dk/lsf931/lsf_admin/termination_reasons_lsf.html ; https://www.ibm.com/docs/en/spectrum-lsf/10.1.0?topic=syntax-runtime-limit',
 'sge': 'Grid Engine qacct/sge_status failed codes https://www.systutorials.com/docs/linux/man/5-sge_status/ ; exit_status 137 hard limit https://doc.cc.in2p3.fr/en/Computing/accounting.html',
 'cuda_oom': 'pytorch c10/cuda/CUDACachingAllocator.cpp OutOfMemoryError text; https://github.com/pytorch/pytorch/issues/16417 ; https://github.com/murong-xu/CADS/issues/4',
 'nccl_wd': 'pytorch torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp watchdog; https://github.com/XPixelGroup/BasicSR/issues/737 ; https://github.com/hiyouga/LlamaFactory/issues/7396 ; https://github.com/sgl-project/sglang/issues/1693',
 'illegal': 'pytorch c10/cuda/CUDAException.cpp; https://github.com/evo-design/evo/issues/136 ; https://github.com/InternLM/lmdeploy/issues/3258',
 'dsa': 'pytorch aten/src/ATen/native/cuda/Loss.cu nll_loss assert; https://github.com/modelscope/ms-swift/issues/3267 ; https://github.com/layumi/Person_reID_baseline_pytorch/issues/372',
 'xid': 'NVIDIA driver NVRM Xid messages; https://github.com/NVIDIA/open-gpu-kernel-modules/issues/1151 ; https://github.com/NVIDIA/NVSentinel/issues/155',
 'oomk': 'linux mm/oom_kill.c messages; https://github.com/equinor/ert/issues/7797 ; https://github.com/kubernetes-sigs/aws-efs-csi-driver/issues/1218',
 'spot_aws': 'AWS EC2 Spot instance-action metadata https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/spot-instance-termination-notices.html',
 'gce': 'GCE metadata instance/preempted https://cloud.google.com/compute/docs/samples/compute-preemptible-check ; https://gist.github.com/ohsawa0515/f664763eb45bd430d294b233ceaa61f8',
 'azure': 'Azure Scheduled Events (EventType Preempt) https://learn.microsoft.com/azure/virtual-machines/linux/scheduled-events',
 'lightning_sig': 'lightning src/lightning/pytorch/trainer/connectors/signal_connector.py; https://github.com/Lightning-AI/pytorch-lightning/issues/20542 ; https://github.com/Lightning-AI/pytorch-lightning/issues/5969',
 'elastic': 'pytorch torch/distributed/elastic/multiprocessing/errors/__init__.py (ChildFailedError table)',
}

# ----------------------------------------------------------------- helpers
class Clock:
    def __init__(self):
        self.t = datetime.datetime(2026, R.randint(1, 11), R.randint(1, 28), R.randint(0, 22), R.randint(0, 59), R.randint(0, 59))
    def tick(self, lo=0.2, hi=4.0):
        self.t += datetime.timedelta(seconds=R.uniform(lo, hi)); return self.t
    def pylog(self):  # 2026-01-02 10:11:12,345
        t = self.tick(); return t.strftime('%Y-%m-%d %H:%M:%S') + ',%03d' % R.randint(0, 999)
    def iso(self): return self.tick().strftime('%Y-%m-%dT%H:%M:%S')
    def glog(self):  # I1203 10:11:12.345678
        t = self.tick(0.0, 0.5); return t.strftime('%m%d %H:%M:%S') + '.%06d' % R.randint(0, 999999)
    def tf(self):  # 2026-01-02 10:11:12.345678
        t = self.tick(0.0, 0.5); return t.strftime('%Y-%m-%d %H:%M:%S') + '.%06d' % R.randint(0, 999999)
    def ctime(self): return self.tick().strftime('%a %b %d %H:%M:%S %Y')
    def mm(self): return self.tick().strftime('%m/%d %H:%M:%S')

USERS = ['alice', 'bchen', 'kpatel', 'mlopez', 'svc-train', 'jdoe', 'nora', 'tkim']
GPUS = [('NVIDIA A100-SXM4-80GB', '535.129.03', 81920), ('NVIDIA H100 80GB HBM3', '550.54.15', 81559),
        ('NVIDIA GeForce RTX 3090', '525.105.17', 24576), ('Tesla V100-SXM2-32GB', '470.182.03', 32510),
        ('NVIDIA A10G', '535.104.05', 23028), ('NVIDIA L40S', '550.90.07', 46068), ('NVIDIA RTX A6000', '545.23.08', 49140)]
PROJ = ['resnet-sweep', 'llama-ft', 'seg-unet', 'asr-conformer', 'det-frcnn', 'vit-pretrain', 'gpt-small', 'mt-transformer', 'dino-ssl']

def host(): return R.choice(['gpu', 'node', 'dgx', 'a100-', 'hpc-g', 'ip-10-0-']) + '%02d' % R.randint(1, 40)
def pid(): return R.randint(1200, 98000)

def env_dump(user, proj, ngpu):
    lines = ['==== environment ====']
    ev = [('USER', user), ('HOME', '/home/' + user), ('PWD', '/home/%s/%s' % (user, proj)),
          ('PATH', '/home/%s/miniconda3/envs/%s/bin:/usr/local/cuda/bin:/usr/local/bin:/usr/bin:/bin' % (user, proj)),
          ('CUDA_VISIBLE_DEVICES', ','.join(str(i) for i in range(ngpu))), ('OMP_NUM_THREADS', str(R.choice([1, 4, 8]))),
          ('PYTHONUNBUFFERED', '1'), ('CONDA_DEFAULT_ENV', proj), ('LD_LIBRARY_PATH', '/usr/local/cuda/lib64:/usr/local/nccl/lib'),
          ('NCCL_DEBUG', R.choice(['INFO', 'WARN'])), ('TOKENIZERS_PARALLELISM', 'false'), ('WANDB_PROJECT', proj),
          ('HF_HOME', '/scratch/%s/hf_cache' % user), ('TORCH_HOME', '/scratch/%s/torch' % user)]
    R.shuffle(ev)
    for k, v in ev[:R.randint(6, len(ev))]: lines.append('%s=%s' % (k, v))
    return lines

PKGS = [('torch', ['2.1.2', '2.2.1', '2.3.1', '2.4.0', '2.5.1']), ('torchvision', ['0.16.2', '0.17.1', '0.18.1', '0.19.0']),
        ('numpy', ['1.24.4', '1.26.4', '2.0.1']), ('transformers', ['4.38.2', '4.41.2', '4.44.0', '4.46.3']),
        ('accelerate', ['0.27.2', '0.30.1', '1.1.1']), ('lightning', ['2.1.3', '2.2.5', '2.4.0']), ('timm', ['0.9.16', '1.0.9']),
        ('wandb', ['0.16.3', '0.17.5', '0.18.7']), ('tensorboard', ['2.15.1', '2.17.0']), ('datasets', ['2.18.0', '2.20.0', '3.1.0']),
        ('tqdm', ['4.66.2', '4.66.5']), ('nvidia-nccl-cu12', ['2.19.3', '2.20.5', '2.21.5']), ('mmengine', ['0.10.3', '0.10.4']),
        ('pyyaml', ['6.0.1']), ('einops', ['0.7.0', '0.8.0']), ('safetensors', ['0.4.2', '0.4.5']), ('scipy', ['1.11.4', '1.13.1']),
        ('pillow', ['10.2.0', '10.4.0']), ('omegaconf', ['2.3.0']), ('hydra-core', ['1.3.2']), ('ray', ['2.9.3', '2.35.0']),
        ('horovod', ['0.28.1']), ('keras', ['3.3.3', '3.6.0']), ('fairseq', ['0.12.2']), ('detectron2', ['0.6'])]
def pip_freeze():
    sel = R.sample(PKGS, R.randint(8, len(PKGS)))
    sel.sort()
    return ['$ pip freeze | grep -iE "torch|numpy|..."'] + ['%s==%s' % (n, R.choice(v)) for n, v in sel]

def nvsmi(gpu, drv, mem, n):
    cv = {'470': '11.4', '525': '12.0', '535': '12.2', '545': '12.3', '550': '12.4'}[drv[:3]]
    L = ['+-----------------------------------------------------------------------------------------+',
         '| NVIDIA-SMI %-18s Driver Version: %-14s CUDA Version: %-8s|' % (drv, drv, cv),
         '|-----------------------------------------+------------------------+----------------------+',
         '| GPU  Name                 Persistence-M | Bus-Id          Disp.A | Volatile Uncorr. ECC |',
         '| Fan  Temp   Perf          Pwr:Usage/Cap |           Memory-Usage | GPU-Util  Compute M. |',
         '|=========================================+========================+======================|']
    for i in range(n):
        L.append('|   %d  %-24s  On   |   00000000:%02X:00.0 Off |                    0 |' % (i, gpu[:24], 0x10 + 0x20 * i))
        L.append('| N/A   %2dC    P0             %3dW / %3dW |      %5dMiB / %5dMiB |      0%%      Default |' % (R.randint(28, 45), R.randint(55, 90), R.choice([300, 400, 350, 700]), R.randint(1, 9), mem))
        L.append('+-----------------------------------------+------------------------+----------------------+')
    return L

WARN_POOL = [
 "/usr/lib/python3/dist-packages/torch/utils/data/dataloader.py:558: UserWarning: This DataLoader will create 16 worker processes in total. Our suggested max number of worker in current system is 8, which is smaller than what this DataLoader is going to create. Please be aware that excessive worker creation might get DataLoader running slow or even freeze, lower the worker number to avoid potential slowness/freeze if necessary.",
 "  warnings.warn(",
 "FutureWarning: `torch.cuda.amp.GradScaler(args...)` is deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead.",
 "FutureWarning: `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda', args...)` instead.",
 "UserWarning: TypedStorage is deprecated. It will be removed in the future and UntypedStorage will be the only storage class. This should only matter to you if you are using storages directly.  To access UntypedStorage directly, use tensor.untyped_storage() instead of tensor.storage()",
 "FutureWarning: You are using `torch.load` with `weights_only=False` (the current default value), which uses the default pickle module implicitly. It is possible to construct malicious pickle data which will execute arbitrary code during unpickling.",
 "UserWarning: The given NumPy array is not writable, and PyTorch does not support non-writable tensors.",
 "DeprecationWarning: pkg_resources is deprecated as an API. See https://setuptools.pypa.io/en/latest/pkg_resources.html",
 "UserWarning: Detected call of `lr_scheduler.step()` before `optimizer.step()`. In PyTorch 1.1.0 and later, you should call them in the opposite order: `optimizer.step()` before `lr_scheduler.step()`.  Failure to do this will result in PyTorch skipping the first value of the learning rate schedule.",
 "W tensorflow/compiler/tf2tensorrt/utils/py_utils.cc:38] TF-TRT Warning: Could not find TensorRT",
 "I tensorflow/core/platform/cpu_feature_guard.cc:182] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations.",
 "E external/local_xla/xla/stream_executor/cuda/cuda_dnn.cc:9261] Unable to register cuDNN factory: Attempting to register factory for plugin cuDNN when one has already been registered",
 "huggingface/tokenizers: The current process just got forked, after parallelism has already been used. Disabling parallelism to avoid deadlocks...",
 "UserWarning: Grad strides do not match bucket view strides. This may indicate grad was not created according to the gradient layout contract, or that the param's strides changed since DDP was constructed.  This is not an error, but may impair performance.",
 "[W reducer.cpp:1346] Warning: find_unused_parameters=True was specified in DDP constructor, but did not find any unused parameters in the forward pass. This flag results in an extra traversal of the autograd graph every iteration,  which can adversely affect performance.",
]
def warns(k=None):
    return R.sample(WARN_POOL, k if k is not None else R.randint(1, 4))

def nccl_info(h, p, rank, n):
    L = ['%s:%d:%d [%d] NCCL INFO Bootstrap : Using eth0:10.%d.%d.%d<0>' % (h, p, p, rank, R.randint(0, 9), R.randint(0, 255), R.randint(2, 250)),
         '%s:%d:%d [%d] NCCL INFO NET/Plugin: No plugin found (libnccl-net.so), using internal implementation' % (h, p, p, rank),
         '%s:%d:%d [%d] NCCL INFO cudaDriverVersion %d' % (h, p, p, rank, R.choice([12020, 12040, 12030])),
         'NCCL version %s+cuda12.%d' % (R.choice(['2.19.3', '2.20.5', '2.21.5']), R.choice([1, 2, 4]))]
    for c in range(2):
        L.append('%s:%d:%d [%d] NCCL INFO Channel %02d/02 :    %s' % (h, p, p + 40, rank, c, ' '.join('%3d' % i for i in range(n))))
    L.append('%s:%d:%d [%d] NCCL INFO Connected all rings' % (h, p, p + 40, rank))
    L.append('%s:%d:%d [%d] NCCL INFO comm 0x%x rank %d nranks %d cudaDev %d busId %x0 - Init COMPLETE' % (h, p, p + 40, rank, R.randint(0x55d000000000, 0x55dfffffffff), rank, n, rank % 8, 1 + rank))
    return L

BAR_CH = ' ▏▎▍▌▋▊▉█'
def bar(frac, width=10):
    full = int(frac * width); rem = int((frac * width - full) * 8)
    s = '█' * full + (BAR_CH[rem] if full < width else '')
    return s.ljust(width)

def tqdm_line(desc, total, start, stop, nupd, extra=lambda i: ''):
    """one physical line, tqdm redraws separated by \\r"""
    segs = []
    rate = R.uniform(1.5, 12.0)
    for j in range(nupd + 1):
        i = start + (stop - start) * j // max(nupd, 1)
        frac = i / total
        el = int(i / rate); rem = int((total - i) / rate)
        segs.append('%s: %3d%%|%s| %d/%d [%02d:%02d<%02d:%02d, %5.2fit/s%s]' % (desc, int(frac * 100), bar(frac), i, total, el // 60 % 60, el % 60, rem // 60 % 60, rem % 60, rate, extra(i)))
    return '\r'.join(segs)

# ----------------------------------------------------------------- framework progress styles
def progress(fw, ck, nsteps, nanfrom=None, rank_prefix=''):
    """per-step training output in the style of a framework. nanfrom: step index from which loss is nan"""
    L = []
    loss = R.uniform(2.0, 7.0); floor = R.uniform(0.2, 1.6); rate = R.uniform(0.985, 0.998)
    def lv(i):
        nonlocal loss
        if nanfrom is not None and i >= nanfrom: return float('nan')
        loss = max(floor * R.uniform(0.95, 1.05), loss * rate * R.uniform(0.99, 1.012)); return loss
    def f(x): return 'nan' if x != x else '%.4f' % x
    ep = 0
    if fw == 'lightning':
        total = R.choice([250, 500, 782, 1563])
        for e in range(max(1, nsteps // 10)):
            L.append(tqdm_line('Epoch %d' % e, total, 0, total, R.randint(6, 14), lambda i: ', v_num=%s, train_loss=%s' % ('0', f(lv(i))) if True else ''))
            L.append('Validation DataLoader 0: 100%%|██████████| %d/%d [00:%02d<00:00, %.2fit/s]' % (40, 40, R.randint(3, 30), R.uniform(5, 30)))
            L.append("Epoch %d, global step %d: 'val_loss' reached %.5f (best %.5f), saving model to '/home/u/ckpt/epoch=%d-step=%d.ckpt' as top 3" % (e, (e + 1) * total, loss * 1.1, loss * 1.1, e, (e + 1) * total))
    elif fw == 'hf':
        for i in range(nsteps):
            L.append("{'loss': %s, 'grad_norm': %s, 'learning_rate': %.4e, 'epoch': %.2f}" % (f(lv(i)), 'nan' if (nanfrom is not None and i >= nanfrom) else '%.6f' % R.uniform(0.3, 4.0), 5e-5 * (1 - i / (nsteps + 5)), i * 0.05))
            if i % 7 == 6:
                L.append(tqdm_line(' %d' % 0, nsteps * 50, i * 50 - 40, i * 50, R.randint(3, 8)).lstrip())
    elif fw == 'timm':
        for i in range(nsteps):
            b = i * 50
            L.append('Train: %d [%4d/1251 (%3d%%)]  Loss: %s (%s)  Time: %.3fs, %7.2f/s  (%.3fs, %7.2f/s)  LR: %.3e  Data: %.3f (%.3f)' % (ep, b % 1251, b % 1251 * 100 // 1251, f(lv(i)), f(loss), R.uniform(0.3, 0.5), R.uniform(900, 1300), R.uniform(0.3, 0.5), R.uniform(900, 1300), 1e-3, R.uniform(0.005, 0.03), R.uniform(0.01, 0.05)))
            if b % 1251 > 1200: ep += 1; L.append('Test: [   0/48]  Time: 1.923 (1.923)  Loss:  %.4f (%.4f)  Acc@1: %.4f (%.4f)  Acc@5: %.4f (%.4f)' % (loss, loss, R.uniform(10, 70), R.uniform(10, 70), R.uniform(40, 90), R.uniform(40, 90)))
    elif fw == 'd2':
        for i in range(nsteps):
            it = 19 + 20 * i
            L.append('[%s d2.utils.events]:  eta: %d:%02d:%02d  iter: %d  total_loss: %s  loss_cls: %.3f  loss_box_reg: %.3f  loss_rpn_cls: %.3f  loss_rpn_loc: %.3f  time: %.4f  data_time: %.4f  lr: %.6f  max_mem: %dM' % (ck.mm(), R.randint(0, 9), R.randint(0, 59), R.randint(0, 59), it, f(lv(i)), loss * .4, loss * .3, loss * .1, loss * .1, R.uniform(.2, .6), R.uniform(.001, .02), 0.02 * min(1, it / 1000), R.randint(3000, 14000)))
    elif fw == 'fairseq':
        for i in range(nsteps):
            L.append('%s | INFO | train_inner | epoch %03d:    %d / 1124 loss=%s, nll_loss=%s, ppl=%s, wps=%d, ups=%.2f, wpb=%d, bsz=%d, num_updates=%d, lr=%.5e, gnorm=%s, loss_scale=%d, train_wall=%d, gb_free=%.1f, wall=%d' % (ck.pylog(), 1 + i // 10, 100 * (i % 10 + 1), f(lv(i)), f(loss * .9), '%.2f' % (2 ** min(loss, 20)) if loss == loss else 'nan', R.randint(20000, 60000), R.uniform(2, 6), R.randint(8000, 16000), R.randint(200, 500), 100 * (i + 1), 5e-4, '%.3f' % R.uniform(0.5, 3) if not (nanfrom is not None and i >= nanfrom) else 'nan', R.choice([64, 128, 32]), R.randint(20, 40), R.uniform(10, 60), 30 * (i + 1)))
    elif fw == 'mm':
        for i in range(nsteps):
            L.append('%s - mmengine - INFO - Epoch(train)  [%d][%4d/%d]  base_lr: 2.0000e-02 lr: 2.0000e-02  eta: %d:%02d:%02d  time: %.4f  data_time: %.4f  memory: %d  grad_norm: %s  loss: %s  loss_cls: %.4f  loss_bbox: %.4f' % (ck.mm(), 1 + i // 20, 50 * (i % 20 + 1), 1000, R.randint(1, 20), R.randint(0, 59), R.randint(0, 59), R.uniform(.3, .7), R.uniform(.005, .05), R.randint(4000, 20000), 'nan' if nanfrom is not None and i >= nanfrom else '%.4f' % R.uniform(1, 8), f(lv(i)), loss * .6, loss * .4))
    elif fw == 'keras':
        total = R.choice([469, 782, 1563])
        for e in range(max(1, nsteps // 8)):
            L.append('Epoch %d/%d' % (e + 1, 20))
            segs = []
            for j in range(1, 9):
                n = total * j // 8
                segs.append('%s/%d \x1b[32m%s\x1b[0m\x1b[37m%s\x1b[0m \x1b[1m%ds\x1b[0m %dms/step - accuracy: %.4f - loss: %s' % (str(n).rjust(len(str(total))), total, '━' * (20 * j // 8), '━' * (20 - 20 * j // 8), R.randint(1, 60), R.randint(8, 40), R.uniform(.1, .9), f(lv(e * 8 + j))))
            L.append('\r'.join(segs))
            L.append('%d/%d \x1b[32m━━━━━━━━━━━━━━━━━━━━\x1b[0m\x1b[37m\x1b[0m \x1b[1m%ds\x1b[0m %dms/step - accuracy: %.4f - loss: %s - val_accuracy: %.4f - val_loss: %s' % (total, total, R.randint(20, 90), R.randint(8, 40), R.uniform(.1, .9), f(loss), R.uniform(.1, .9), f(loss * 1.1)))
    elif fw == 'ray':
        for i in range(nsteps):
            L.append('(RayTrainWorker pid=%d, ip=10.0.%d.%d) {"epoch": %d, "step": %d, "loss": %s, "lr": %.2e}' % (R.randint(3000, 9000), R.randint(0, 3), R.randint(2, 200), i // 10, i * 20, f(lv(i)), 3e-4))
            if i % 9 == 4:
                L.append('Training finished iteration %d at %s. Total running time: %dmin %ds' % (i // 9 + 1, ck.iso().replace('T', ' '), i, R.randint(0, 59)))
    elif fw == 'horovod':
        for i in range(nsteps):
            r = R.randint(0, 3)
            L.append('[1,%d]<stdout>:Train Epoch: %d [%d/%d (%d%%)]\tLoss: %s' % (r, 1 + i // 10, (i % 10) * 6400, 60000, (i % 10) * 10, f(lv(i))))
    else:  # plain python logging / print
        fmt = R.choice(['log', 'print', 'rich'])
        for i in range(nsteps):
            msg = 'step %d/%d | loss %s | lr %.2e | %.1f samples/s' % (i * 10, nsteps * 10, f(lv(i)), 3e-4, R.uniform(200, 900))
            if fmt == 'log': L.append('%s - INFO - %s' % (ck.pylog(), msg))
            elif fmt == 'print': L.append(msg)
            else: L.append('\x1b[2m[%s]\x1b[0m \x1b[34mINFO    \x1b[0m %s' % (ck.tick().strftime('%H:%M:%S'), msg))
            if i % 12 == 11: L.append(tqdm_line('eval', 200, 0, 200, R.randint(4, 9)))
    return [rank_prefix + x for x in L]

def intersperse(L, extra):
    L = list(L)
    for e in extra:
        L.insert(R.randint(0, len(L)), e)
    return L

def wandb_teardown(failed, run):
    L = ['wandb: Waiting for W&B process to finish... (%s).' % ('failed 1' if failed else 'success'),
         'wandb: ', 'wandb: Run history:', 'wandb:      train/loss █▆▅▄▃▃▂▂▁▁', 'wandb: learning_rate ▁▂▃▄▅▆▇██', 'wandb: ',
         'wandb: Run summary:', 'wandb:   train/global_step %d' % R.randint(1000, 90000),
         'wandb: 🚀 View run %s at: https://wandb.ai/lab/proj/runs/%s' % (run, ''.join(R.choice('abcdefghijklmnopqrstuvwxyz0123456789') for _ in range(8))),
         'wandb: Synced 5 W&B file(s), 0 media file(s), 2 artifact file(s) and 0 other file(s)',
         'wandb: Find logs at: ./wandb/run-2026%04d_%06d-%s/logs' % (R.randint(101, 1231), R.randint(0, 235959), run)]
    return L

def py_tb(frames, exc_lines, prefix=''):
    L = [prefix + 'Traceback (most recent call last):']
    for fn, ln, func, code in frames:
        L.append(prefix + '  File "%s", line %d, in %s' % (fn, ln, func))
        if code: L.append(prefix + '    ' + code)
    L += [prefix + x for x in exc_lines]
    return L

SP = '/opt/conda/lib/python3.10/site-packages'
def torch_frames(kind):
    if kind == 'hf':
        return [('/home/u/proj/train.py', R.randint(100, 400), '<module>', 'main()'),
                ('/home/u/proj/train.py', R.randint(50, 99), 'main', 'trainer.train()'),
                (SP + '/transformers/trainer.py', 1938, 'train', 'return inner_training_loop('),
                (SP + '/transformers/trainer.py', 2279, '_inner_training_loop', 'tr_loss_step = self.training_step(model, inputs)'),
                (SP + '/transformers/trainer.py', 3318, 'training_step', 'loss = self.compute_loss(model, inputs)')]
    if kind == 'lightning':
        return [('/home/u/proj/train.py', R.randint(80, 300), '<module>', 'trainer.fit(model, datamodule=dm)'),
                (SP + '/lightning/pytorch/trainer/trainer.py', 538, 'fit', 'call._call_and_handle_interrupt('),
                (SP + '/lightning/pytorch/trainer/call.py', 47, '_call_and_handle_interrupt', 'return trainer_fn(*args, **kwargs)'),
                (SP + '/lightning/pytorch/loops/fit_loop.py', 205, 'run', 'self.advance()'),
                (SP + '/lightning/pytorch/loops/training_epoch_loop.py', 250, 'advance', 'batch_output = self.automatic_optimization.run(trainer.optimizers[0], batch_idx, kwargs)')]
    if kind == 'd2':
        return [('tools/train_net.py', 226, '<module>', 'launch('),
                ('/home/u/detectron2/detectron2/engine/launch.py', 84, 'launch', 'main_func(*args)'),
                ('tools/train_net.py', 213, 'main', 'return trainer.train()'),
                ('/home/u/detectron2/detectron2/engine/defaults.py', 486, 'train', 'super().train(self.start_iter, self.max_iter)'),
                ('/home/u/detectron2/detectron2/engine/train_loop.py', 155, 'train', 'self.run_step()')]
    if kind == 'mm':
        return [('tools/train.py', 121, '<module>', 'main()'), ('tools/train.py', 117, 'main', 'runner.train()'),
                (SP + '/mmengine/runner/runner.py', 1777, 'train', 'model = self.train_loop.run()  # type: ignore'),
                (SP + '/mmengine/runner/loops.py', 96, 'run', 'self.run_epoch()'),
                (SP + '/mmengine/runner/loops.py', 113, 'run_epoch', 'self.run_iter(idx, data_batch)')]
    if kind == 'fairseq':
        return [('/opt/conda/bin/fairseq-train', 8, '<module>', 'sys.exit(cli_main())'),
                (SP + '/fairseq_cli/train.py', 557, 'cli_main', 'distributed_utils.call_main(cfg, main)'),
                (SP + '/fairseq/distributed/utils.py', 369, 'call_main', 'main(cfg, **kwargs)'),
                (SP + '/fairseq_cli/train.py', 190, 'main', 'valid_losses, should_stop = train(cfg, trainer, task, epoch_itr)'),
                (SP + '/fairseq/trainer.py', 870, 'train_step', 'loss, sample_size_i, logging_output = self.task.train_step(')]
    if kind == 'timm':
        return [('train.py', 1200, '<module>', 'main()'), ('train.py', 870, 'main', 'train_metrics = train_one_epoch('),
                ('train.py', 985, 'train_one_epoch', 'loss = _forward()')]
    if kind == 'keras':
        return [('/home/u/proj/train_keras.py', 88, '<module>', 'model.fit(train_ds, validation_data=val_ds, epochs=20, callbacks=cbs)'),
                (SP + '/keras/src/utils/traceback_utils.py', 122, 'error_handler', 'raise e.with_traceback(filtered_tb) from None')]
    return [('/home/u/proj/train.py', R.randint(100, 400), '<module>', 'main(args)'),
            ('/home/u/proj/train.py', R.randint(50, 99), 'main', 'loss = train_one_epoch(model, loader, opt, scaler, epoch)'),
            ('/home/u/proj/engine.py', R.randint(20, 90), 'train_one_epoch', 'outputs = model(images)')]

def elastic_fail(ck, h, rank, exitcode, script='train.py', others=()):
    L = ['[%s] torch.distributed.elastic.multiprocessing.api: [WARNING] Sending process %d closing signal SIGTERM' % (ck.pylog(), pid()) for _ in others]
    L.append('[%s] torch.distributed.elastic.multiprocessing.api: [ERROR] failed (exitcode: %d) local_rank: %d (pid: %d) of binary: /opt/conda/bin/python' % (ck.pylog(), exitcode, rank, pid()))
    L += ['Traceback (most recent call last):', '  File "/opt/conda/bin/torchrun", line 8, in <module>', '    sys.exit(main())',
          '  File "%s/torch/distributed/elastic/multiprocessing/errors/__init__.py", line 348, in wrapper' % SP, '    return f(*args, **kwargs)',
          '  File "%s/torch/distributed/run.py", line 901, in main' % SP, '    run(args)',
          '  File "%s/torch/distributed/run.py", line 892, in run' % SP, '    elastic_launch(',
          '  File "%s/torch/distributed/launcher/api.py", line 133, in __call__' % SP, '    return launch_agent(self._config, self._entrypoint, list(args))',
          '  File "%s/torch/distributed/launcher/api.py", line 264, in launch_agent' % SP, '    raise ChildFailedError(',
          'torch.distributed.elastic.multiprocessing.errors.ChildFailedError: ', '============================================================',
          '%s FAILED' % script, '------------------------------------------------------------', 'Failures:', '  <NO_OTHER_FAILURES>',
          '------------------------------------------------------------', 'Root Cause (first observed failure):', '[0]:',
          '  time      : %s' % ck.tick().strftime('%Y-%m-%d_%H:%M:%S'), '  host      : %s' % h, '  rank      : %d (local_rank: %d)' % (rank, rank),
          '  exitcode  : %d (pid: %d)' % (exitcode, pid()), '  error_file: <N/A>',
          '  traceback : ' + ('Signal %d (%s) received by PID %d' % (-exitcode, {9: 'SIGKILL', 6: 'SIGABRT', 11: 'SIGSEGV', 15: 'SIGTERM'}[-exitcode], pid()) if exitcode < 0 else 'To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html'),
          '============================================================']
    return L

# ----------------------------------------------------------------- scheduler wrappers
def lsf_report(ck, user, h, status_lines, jobname, cmd, maxmem, reqmem, runtime):
    jid = R.randint(100000, 999999)
    end = ck.tick(); st = end - datetime.timedelta(seconds=runtime); sub = st - datetime.timedelta(seconds=R.randint(5, 3000))
    F = lambda t: t.strftime('%a %b %d %H:%M:%S %Y')
    return ['', '------------------------------------------------------------', 'Sender: LSF System <lsfadmin@%s>' % h,
            'Subject: Job %d: <%s> in cluster <hpc> %s' % (jid, jobname, 'Done' if status_lines[0].startswith('Successfully') else 'Exited'), '',
            'Job <%s> was submitted from host <login%d> by user <%s> in cluster <hpc> at %s' % (jobname, R.randint(1, 3), user, F(sub)),
            'Job was executed on host(s) <4*%s>, in queue <gpu>, as user <%s> in cluster <hpc> at %s' % (h, user, F(st)),
            '</home/%s> was used as the home directory.' % user, '</home/%s/%s> was used as the working directory.' % (user, jobname),
            'Started at %s' % F(st), 'Terminated at %s' % F(end), 'Results reported at %s' % F(end + datetime.timedelta(seconds=R.randint(1, 9))), '',
            'Your job looked like:', '', '------------------------------------------------------------', '# LSBATCH: User input', cmd,
            '------------------------------------------------------------', ''] + status_lines + ['',
            'Resource usage summary:', '',
            '    CPU time :                                   %.2f sec.' % R.uniform(1000, 90000),
            '    Max Memory :                                 %d MB' % maxmem, '    Average Memory :                             %d.%02d MB' % (maxmem * 0.7, R.randint(0, 99)),
            '    Total Requested Memory :                     %d.00 MB' % reqmem, '    Delta Memory :                               %d.00 MB' % (reqmem - maxmem),
            '    Max Swap :                                   -', '    Max Processes :                              %d' % R.randint(4, 40),
            '    Max Threads :                                %d' % R.randint(40, 300), '    Run time :                                   %d sec.' % runtime,
            '    Turnaround time :                            %d sec.' % (runtime + R.randint(5, 3000)), '',
            'The output (if any) is above this job summary.', '']

def sge_qacct(ck, user, h, exit_status, failed, maxvmem, hvmem, hrt, wall):
    return ['$ qacct -j %d' % R.randint(1000000, 9999999), '==============================================================',
            'qname        gpu.q', 'hostname     %s' % h, 'group        users', 'owner        %s' % user, 'project      NONE', 'department   defaultdepartment',
            'jobname      train.sh', 'jobnumber    %d' % R.randint(1000000, 9999999), 'taskid       undefined', 'account      sge', 'priority     0',
            'qsub_time    %s' % (ck.t - datetime.timedelta(seconds=wall + R.randint(10, 5000))).strftime('%a %b %d %H:%M:%S %Y'), 'start_time   %s' % (ck.t - datetime.timedelta(seconds=wall)).strftime('%a %b %d %H:%M:%S %Y'), 'end_time     %s' % ck.ctime(), 'granted_pe   smp', 'slots        8',
            'failed       %s' % failed, 'exit_status  %s' % exit_status, 'ru_wallclock %ds' % wall, 'ru_utime     %.3fs' % (wall * 3.1), 'ru_stime     %.3fs' % (wall * .2),
            'ru_maxrss    %.3fMB' % (maxvmem * 800), 'cpu          %.3fs' % (wall * 3.3), 'mem          %.3fGBs' % (wall * 5.1), 'io           %.3fGB' % R.uniform(1, 400),
            'iow          0.000s', 'maxvmem      %.3fG' % maxvmem, 'category     -U gpu -q gpu.q -l gpu=1,h_rt=%d,h_vmem=%dG -pe smp 8' % (hrt, hvmem), 'arid         undefined']

def slurm_head(user, h, jid, ngpu):
    return ['SLURM_JOB_ID=%d' % jid, 'SLURM_JOB_NODELIST=%s' % h, 'SLURM_NTASKS=%d' % ngpu, 'SLURM_GPUS_ON_NODE=%d' % ngpu,
            'Running on %s, job %d, started %s' % (h, jid, 'by ' + user)]

# ----------------------------------------------------------------- case builders
RECS = []
LOGS = []

def emit(label, lines, rc, prov, gpu, source='composed'):
    LOGS.append('\n'.join(lines) + '\n')
    RECS.append({'mode': label, 'source': source, 'gpu': gpu[0] if gpu else 'none', 'driver': gpu[1] if gpu else 'none',
                 'true_exit_code': rc, 'provenance': prov})

def base(fw, ngpu=None, gpu=None, nsteps=None, nanfrom=None, rank_prefix='', cpu=False, force_pre=False):
    """preamble + progress. returns (lines, ctx)"""
    ck = Clock(); user = R.choice(USERS); h = host(); proj = R.choice(PROJ)
    gpu = gpu or R.choice(GPUS); ngpu = ngpu or R.choice([1, 2, 4, 8])
    L = []
    fp = 2.0 if force_pre else 0.0
    if R.random() < 0.6 + fp: L += env_dump(user, proj, ngpu)
    if R.random() < 0.5 + fp: L += pip_freeze()
    if not cpu and R.random() < 0.6 + fp: L += ['$ nvidia-smi', ck.ctime()] + nvsmi(gpu[0], gpu[1], gpu[2], min(ngpu, 8))
    if R.random() < 0.6 + fp:
        L.append('%s - INFO - config:' % ck.pylog())
        cfg = {'model': R.choice(['resnet50', 'vit_base_patch16_224', 'llama-7b', 'unet', 'faster_rcnn_R_50_FPN']), 'batch_size': R.choice([16, 32, 64, 128, 256]),
               'lr': R.choice([1e-3, 3e-4, 5e-5, 0.1]), 'epochs': R.choice([10, 90, 300]), 'precision': R.choice(['bf16-mixed', '16-mixed', 'fp32']),
               'num_workers': R.choice([4, 8, 16]), 'seed': R.randint(0, 9999), 'grad_clip': R.choice([None, 1.0]), 'output_dir': '/scratch/%s/runs/%s' % (user, proj)}
        L += ['  %s: %s' % (k, v) for k, v in cfg.items()]
    if ngpu > 1 and R.random() < 0.6: L += nccl_info(h, pid(), 0, ngpu)
    n = nsteps if nsteps is not None else (R.randint(400, 760) if R.random() < 0.12 else R.randint(60, 420))
    prog = progress(fw, ck, n, nanfrom=nanfrom, rank_prefix=rank_prefix)
    L += intersperse(prog, warns())
    return L, dict(ck=ck, user=user, h=h, proj=proj, gpu=gpu, ngpu=ngpu)

def wrap(sched, L, ctx, rc, cause=None, extra_end=None):
    """scheduler framing. cause: 'ok', 'time', 'mem', 'owner', 'preempt', 'fail'"""
    ck, user, h = ctx['ck'], ctx['user'], ctx['h']
    if sched == 'nohup':
        return ['$ nohup python train.py --config configs/%s.yaml > out.log 2>&1 &' % ctx['proj'], 'nohup: ignoring input'] + L
    if sched == 'slurm':
        return slurm_head(user, h, R.randint(100000, 9999999), ctx['ngpu']) + L
    if sched == 'lsf':
        st = {'ok': ['Successfully completed.'], 'fail': ['Exited with exit code %d.' % rc],
              'time': ['TERM_RUNLIMIT: job killed after reaching LSF run time limit.', 'Exited with exit code %d.' % rc],
              'mem': ['TERM_MEMLIMIT: job killed after reaching LSF memory usage limit.', 'Exited with exit code %d.' % rc],
              'owner': ['TERM_OWNER: job killed by owner.', 'Exited with exit code %d.' % rc],
              'preempt': ['TERM_PREEMPT: job killed after preemption.', 'Exited with exit code %d.' % rc]}[cause or 'fail']
        req = R.choice([32000, 64000, 128000])
        mx = req if cause == 'mem' else int(req * R.uniform(0.2, 0.8))
        return L + lsf_report(ck, user, h, st, ctx['proj'], 'python train.py --config configs/%s.yaml' % ctx['proj'], mx, req, R.randint(3000, 86400))
    if sched == 'sge':
        return ['$ qsub -j y -o logs/ train.sh', 'Your job %d ("train.sh") has been submitted' % R.randint(1000000, 9999999)] + L
    return L

# ---- failure payloads: each returns list of decisive lines (+ aftermath)
def tb_block(kind, exc, prefix=''):
    return py_tb(torch_frames(kind), exc, prefix)

CUDA_TAIL = ['CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace below might be incorrect.',
             'For debugging consider passing CUDA_LAUNCH_BLOCKING=1', 'Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions.', '']

def oom_text(gpu):
    tot = gpu[2] / 1024.0
    a = R.uniform(0.2, 4.0)
    inuse = tot - R.uniform(0.01, 0.5)
    return ('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate %.2f GiB. GPU %d has a total capacity of %.2f GiB of which %.2f MiB is free. '
            'Including non-PyTorch memory, this process has %.2f GiB memory in use. Of the allocated memory %.2f GiB is allocated by PyTorch, and %.2f MiB is reserved by PyTorch but unallocated. '
            'If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)'
            % (a, 0, tot, R.uniform(1, 90), inuse, inuse - R.uniform(0.3, 2), R.uniform(10, 900)))

def rankify(lines, r): return ['[rank%d]: %s' % (r, x) for x in lines]

# ================================================================= the cases
def C(fn, *a, **k): CASES.append((fn, a, k))
CASES = []

# ---------- cuda_oom
def c_oom_hf():
    fw = R.choice(['hf', 'lightning', 'plain'])
    L, x = base(fw); g = x['gpu']
    L += tb_block(fw, ['  File "%s/torch/nn/modules/module.py", line 1553, in _wrapped_call_impl' % SP, '    return self._call_impl(*args, **kwargs)', oom_text(g)])
    if R.random() < 0.6: L += wandb_teardown(True, x['proj'])
    sched = R.choice(['nohup', 'lsf', 'slurm'])
    emit('cuda_oom', wrap(sched, L, x, 1, 'fail'), 1, SRC['cuda_oom'] + ('; ' + SRC['lsf'] if sched == 'lsf' else ''), g)
def c_oom_ddp_rank():
    # one rank OOMs, others then report NCCL errors later
    L, x = base(R.choice(['d2', 'plain', 'mm']), ngpu=4); g = x['gpu']; ck = x['ck']
    bad = R.randint(0, 3)
    L += rankify(tb_block('plain', [oom_text(g).replace('GPU 0', 'GPU %d' % bad)]), bad)
    for r in range(4):
        if r == bad: continue
        L.append('[rank%d]:[E%s ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for %d milliseconds before timing out.' % (r, ck.glog()[:-7], r, 4123, 2359296, 2359296, 600000 + R.randint(5, 90)))
    L += elastic_fail(ck, x['h'], bad, 1, others=[1, 2, 3])
    emit('cuda_oom', L, 1, SRC['cuda_oom'] + '; ' + SRC['nccl_wd'] + '; ' + SRC['elastic'], g)
def c_oom_jax():
    L, x = base('plain', gpu=GPUS[1]); g = x['gpu']
    L += ['%s: W external/xla/xla/tsl/framework/bfc_allocator.cc:497] Allocator (GPU_0_bfc) ran out of memory trying to allocate %.2fGiB (rounded to %d)requested by op ' % (x['ck'].tf(), 7.52, 8074035200),
          'jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8074035200 bytes.',
          '--------------------', 'For simplicity, JAX has removed its internal frames from the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to include these.']
    L = L[:-4] + py_tb([('/home/u/proj/train_jax.py', 211, '<module>', 'state, metrics = train_step(state, batch)')], ['jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate 8074035200 bytes.']) + L[-2:]
    emit('cuda_oom', wrap('nohup', L, x, 1), 1, 'jax/jaxlib xla pjrt RESOURCE_EXHAUSTED message; https://github.com/google/jax/issues (RESOURCE_EXHAUSTED: Out of memory while trying to allocate)', g)
def c_oom_keras():
    L, x = base('keras'); g = x['gpu']
    L += ['%s: W tensorflow/core/common_runtime/bfc_allocator.cc:479] Allocator (GPU_0_bfc) ran out of memory trying to allocate 1.53GiB (rounded to 1642070016)requested by op model/conv2d_12/Conv2D' % x['ck'].tf()]
    L += py_tb(torch_frames('keras'), ['tensorflow.python.framework.errors_impl.ResourceExhaustedError: Graph execution error:', '',
          'OOM when allocating tensor with shape[64,256,128,128] and type float on /job:localhost/replica:0/task:0/device:GPU:0 by allocator GPU_0_bfc',
          '\t [[{{node model/conv2d_12/Conv2D}}]]', 'Hint: If you want to see a list of allocated tensors when OOM happens, add report_tensor_allocations_upon_oom to RunOptions for current allocation info.', ' [Op:__inference_one_step_on_iterator_8123]'])
    emit('cuda_oom', wrap(R.choice(['sge', 'nohup']), L, x, 1), 1, 'tensorflow core/common_runtime/bfc_allocator.cc and ResourceExhaustedError OOM when allocating tensor; https://github.com/keras-team/keras/issues (OOM when allocating tensor)', g)

# ---------- nccl
def c_nccl_wd():
    L, x = base(R.choice(['lightning', 'hf', 'plain']), ngpu=8); ck = x['ck']
    seq = R.randint(1000, 90000)
    for r in R.sample(range(8), 8):
        L.append('[rank%d]:[E%s ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=%d, Timeout(ms)=1800000) ran for %d milliseconds before timing out.' % (r, ck.glog()[:-7], r, seq, 466119168, 466119168, 1800000 + R.randint(5, 90)))
        L.append('[rank%d]:[E%s ProcessGroupNCCL.cpp:1785] [PG ID 0 PG GUID 0(default_pg) Rank %d] Exception (either an error or timeout) detected by watchdog at work: %d, last enqueued NCCL work: %d, last completed NCCL work: %d.' % (r, ck.glog()[:-7], r, seq, seq + 2, seq - 1))
    r = R.randint(0, 7)
    L += ['[rank%d]:[E%s ProcessGroupNCCL.cpp:630] [Rank %d] Some NCCL operations have failed or timed out. Due to the asynchronous nature of CUDA kernels, subsequent GPU operations might run on corrupted/incomplete data.' % (r, ck.glog()[:-7], r),
          '[rank%d]:[E%s ProcessGroupNCCL.cpp:636] [Rank %d] To avoid data inconsistency, we are taking the entire process down.' % (r, ck.glog()[:-7], r),
          "terminate called after throwing an instance of 'c10::DistBackendError'",
          '  what():  [PG ID 0 PG GUID 0(default_pg) Rank %d] Process group watchdog thread terminated with exception: [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=1800000) ran for 1800081 milliseconds before timing out.' % (r, r, seq),
          'Exception raised from checkTimeout at ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:618 (most recent call first):']
    L += elastic_fail(ck, x['h'], r, -6, others=range(7))
    emit('nccl', wrap(R.choice(['slurm', 'nohup']), L, x, 1), 1, SRC['nccl_wd'] + '; ' + SRC['elastic'], x['gpu'])
def c_nccl_remote():
    L, x = base('plain', ngpu=4); ck = x['ck']; h = x['h']
    r = R.randint(1, 3); p = pid()
    L += ['%s:%d:%d [%d] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.%d.%d<%d> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.1.2 remoteGidsfe80::' % (h, p, p + 80, r, R.randint(0, 9), R.randint(2, 200), R.randint(30000, 60000)),
          '%s:%d:%d [%d] NCCL INFO transport/net.cc:1134 -> 6' % (h, p, p + 80, r), '%s:%d:%d [%d] NCCL INFO proxy.cc:698 -> 6' % (h, p, p + 80, r)]
    L += rankify(tb_block('plain', ['  File "%s/torch/distributed/c10d_logger.py", line 79, in wrapper' % SP, '    return func(*args, **kwargs)',
          'torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/NCCLUtils.hpp:275, remote process exited or there was a network error, NCCL version 2.20.5',
          'ncclRemoteError: A call failed possibly due to a network error or a remote process exiting prematurely.',
          'Last error:', 'NET/IB : Got completion from peer 10.0.3.17<36219> with status=12 opcode=0 len=0 vendor err 129 (Recv) localGid ::ffff:10.0.1.2 remoteGidsfe80::']), r)
    L += elastic_fail(ck, h, r, 1, others=[0, 1, 2])
    emit('nccl', wrap('slurm', L, x, 1), 1, 'NCCL src/transport/net_ib.cc NET/IB completion error; pytorch NCCLUtils.hpp ncclRemoteError text; https://github.com/NVIDIA/nccl/issues (status=12 vendor err 129)', x['gpu'])
def c_nccl_horovod():
    L, x = base('horovod', ngpu=4); ck = x['ck']
    L += ['[1,2]<stderr>:[%s: E /tmp/pip-install/horovod/common/operations.cc:697] Horovod background loop uncaught exception: [/opt/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error [10.0.0.12]:32915: Connection reset by peer' % ck.iso(),
          '[1,0]<stderr>:Traceback (most recent call last):', '[1,0]<stderr>:  File "train_hvd.py", line 161, in <module>', '[1,0]<stderr>:    train(epoch)',
          '[1,0]<stderr>:  File "%s/horovod/torch/mpi_ops.py", line 1116, in synchronize' % SP, '[1,0]<stderr>:    raise HorovodInternalError(e)',
          '[1,0]<stderr>:horovod.common.exceptions.HorovodInternalError: Horovod has been shut down. This was caused by an exception on one of the ranks or an attempt to allreduce, allgather or broadcast a tensor after one of the ranks finished execution. If the shutdown was caused by an exception, you should see the exception in the log before the first shutdown message.',
          '--------------------------------------------------------------------------', 'Primary job  terminated normally, but 1 process returned',
          'a non-zero exit code. Per user-direction, the job has been aborted.', '--------------------------------------------------------------------------',
          '--------------------------------------------------------------------------', 'mpirun detected that one or more processes exited with non-zero status, thus causing',
          'the job to be terminated. The first process to do so was:', '', '  Process name: [[%d,1],0]' % R.randint(10000, 60000), '  Exit code:    1', '--------------------------------------------------------------------------']
    emit('nccl', wrap('lsf', L, x, 1, 'fail'), 1, 'horovod common/operations.cc and torch/mpi_ops.py HorovodInternalError text; gloo tcp/pair.cc Read error; Open MPI mpirun abort banner; ' + SRC['lsf'], x['gpu'])
def c_nccl_store():
    L, x = base(R.choice(['ray', 'plain']), ngpu=2)
    L += tb_block('plain', ['  File "%s/torch/distributed/distributed_c10d.py", line 4159, in barrier' % SP, '    work = default_pg.barrier(opts=opts)',
        'torch.distributed.DistNetworkError: Connection reset by peer'], prefix='(RayTrainWorker pid=%d) ' % pid() if 'ray' in L[-1][:40] else '')
    L += ['[%s] torch.distributed.elastic.agent.server.api: [WARNING] Received Sockets: [TCPStore] recvValue failed: Connection reset by peer' % x['ck'].pylog()] if R.random() < 0.3 else []
    emit('nccl', wrap('nohup', L, x, 1), 1, 'pytorch torch/csrc/distributed/c10d TCPStore / DistNetworkError ("Connection reset by peer"); https://github.com/pytorch/pytorch/issues (DistNetworkError Connection reset by peer)', x['gpu'])
def c_nccl_gloo_timeout():
    L, x = base('plain', ngpu=2, cpu=True)
    L += rankify(tb_block('plain', ['  File "%s/torch/distributed/distributed_c10d.py", line 2501, in all_reduce' % SP, '    work.wait()',
        'RuntimeError: [../third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:81] Timed out waiting 1800000ms for recv operation to complete']), 0)
    L += elastic_fail(x['ck'], x['h'], 0, 1, others=[1])
    emit('nccl', wrap('sge', L, x, 1), 1, 'gloo transport/tcp/unbound_buffer.cc "Timed out waiting ... for recv operation to complete"; https://github.com/pytorch/pytorch/issues (gloo unbound_buffer.cc Timed out waiting)', None)

# ---------- cuda_runtime
def c_illegal():
    fw = R.choice(['hf', 'lightning', 'plain', 'timm'])
    L, x = base(fw)
    L += tb_block(fw, ['  File "%s/torch/_tensor.py", line 521, in backward' % SP, '    torch.autograd.backward(', 'RuntimeError: CUDA error: an illegal memory access was encountered'] + CUDA_TAIL)
    if R.random() < 0.5:
        L += ["terminate called after throwing an instance of 'c10::Error'", '  what():  CUDA error: an illegal memory access was encountered'] + CUDA_TAIL[:-1] + [
              'Exception raised from c10_cuda_check_implementation at ../c10/cuda/CUDAException.cpp:43 (most recent call first):',
              'frame #0: c10::Error::Error(c10::SourceLocation, std::string) + 0x96 (0x7f%x in %s/torch/lib/libc10.so)' % (R.randint(0x10000000, 0xfffffff0), SP)]
        rc = -6 if R.random() < 0.5 else 134
    else: rc = 1
    emit('cuda_runtime', wrap('nohup' if rc != 134 else 'slurm', L, x, rc), rc, SRC['illegal'], x['gpu'])
def c_dsa():
    L, x = base(R.choice(['plain', 'hf']))
    for t in range(R.randint(3, 40)):
        L.append('../aten/src/ATen/native/cuda/Loss.cu:250: nll_loss_forward_reduce_cuda_kernel_2d: block: [0,0,0], thread: [%d,0,0] Assertion `t >= 0 && t < n_classes` failed.' % t)
    L += tb_block('plain', ['RuntimeError: CUDA error: device-side assert triggered'] + CUDA_TAIL)
    emit('cuda_runtime', wrap(R.choice(['nohup', 'lsf']), L, x, 1, 'fail'), 1, SRC['dsa'], x['gpu'])
def c_cublas():
    L, x = base(R.choice(['hf', 'fairseq']))
    L += tb_block('plain', ['  File "%s/torch/nn/modules/linear.py", line 117, in forward' % SP, '    return F.linear(input, self.weight, self.bias)',
        'RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasGemmEx( handle, opa, opb, m, n, k, &falpha, a, CUDA_R_16BF, lda, b, CUDA_R_16BF, ldb, &fbeta, c, CUDA_R_16BF, ldc, CUDA_R_32F, CUBLAS_GEMM_DEFAULT_TENSOR_OP)`'])
    emit('cuda_runtime', wrap('slurm', L, x, 1), 1, 'pytorch aten/src/ATen/cuda/CUDABlas.cpp TORCH_CUDABLAS_CHECK; https://github.com/pytorch/pytorch/issues (CUBLAS_STATUS_EXECUTION_FAILED when calling cublasGemmEx)', x['gpu'])
def c_cudnn():
    L, x = base(R.choice(['d2', 'mm', 'timm']))
    L += tb_block('plain', ['  File "%s/torch/nn/modules/conv.py", line 456, in _conv_forward' % SP, '    return F.conv2d(input, weight, bias, self.stride,',
        'RuntimeError: cuDNN error: CUDNN_STATUS_INTERNAL_ERROR', 'You can try to repro this exception using the following code snippet. If that doesn\'t trigger the error, please include your original repro script when reporting this issue.'])
    emit('cuda_runtime', wrap(R.choice(['nohup', 'sge']), L, x, 1), 1, 'pytorch aten/src/ATen/native/cudnn (cuDNN error: CUDNN_STATUS_INTERNAL_ERROR); https://github.com/pytorch/pytorch/issues (CUDNN_STATUS_INTERNAL_ERROR)', x['gpu'])
def c_cuda_wrapped():
    # CUDA error re-raised inside another RuntimeError (chained)
    L, x = base('lightning')
    L += tb_block('plain', ['RuntimeError: CUDA error: unspecified launch failure'] + CUDA_TAIL[:-1])
    L += ['', 'The above exception was the direct cause of the following exception:', '']
    L += tb_block('lightning', ['RuntimeError: Error in training_step at batch_idx=%d: CUDA error: unspecified launch failure' % R.randint(10, 9999)])
    emit('cuda_runtime', wrap('nohup', L, x, 1), 1, 'pytorch c10/cuda/CUDAException.cpp ("unspecified launch failure"); https://github.com/pytorch/pytorch/issues (CUDA error: unspecified launch failure)', x['gpu'])

# ---------- ram_oom
def c_ram_np():
    L, x = base('plain', cpu=True)
    L += py_tb([('/home/u/proj/prep.py', 77, '<module>', 'feats = np.zeros((n_items, 4096), dtype=np.float64)')],
               ['numpy.core._exceptions._ArrayMemoryError: Unable to allocate 763. GiB for an array with shape (25000000, 4096) and data type float64'])
    emit('ram_oom', wrap('nohup', L, x, 1), 1, 'numpy numpy/core/src/multiarray (Unable to allocate ... for an array with shape); https://github.com/numpy/numpy/issues (_ArrayMemoryError Unable to allocate)', None)
def c_ram_cpu_alloc():
    L, x = base(R.choice(['hf', 'plain']))
    L += tb_block('plain', ['RuntimeError: [enforce fail at alloc_cpu.cpp:114] data. DefaultCPUAllocator: not enough memory: you tried to allocate 34359738368 bytes.'])
    emit('ram_oom', wrap('lsf', L, x, 1, 'fail'), 1, 'pytorch c10/core/impl/alloc_cpu.cpp DefaultCPUAllocator: not enough memory; https://github.com/pytorch/pytorch/issues (DefaultCPUAllocator: not enough memory)', x['gpu'])

# ---------- segfault
def c_segv_native():
    L, x = base(R.choice(['plain', 'd2']))
    L += ['Fatal Python error: Segmentation fault', '', 'Thread 0x%016x (most recent call first):' % R.randint(2 ** 44, 2 ** 47),
          '  File "%s/torch/utils/data/_utils/worker.py", line 308 in _worker_loop' % SP, '', 'Current thread 0x%016x (most recent call first):' % R.randint(2 ** 44, 2 ** 47),
          '  File "%s/torch/nn/modules/conv.py", line 456 in _conv_forward' % SP, '  File "/home/u/proj/train.py", line 201 in train_one_epoch', '  File "/home/u/proj/train.py", line 322 in <module>', '',
          'Extension modules: numpy.core._multiarray_umath, torch._C, torch._C._fft, PIL._imaging (total: 41)', 'Segmentation fault (core dumped)']
    emit('segfault', wrap('nohup', L, x, 139), 139, 'CPython Python/faulthandler.c ("Fatal Python error: Segmentation fault", "Extension modules:"); bash "Segmentation fault (core dumped)"', x['gpu'])
def c_segv_rank():
    L, x = base('plain', ngpu=4)
    L += ['[rank2]:[W%s socket.cpp:464] [c10d] The server socket has failed to listen on any local network address.' % x['ck'].glog()[:-7]] if R.random() < 0.3 else []
    L += ['!!!!!!! Segfault encountered !!!!!!!', '  File "<unknown>", line 0, in ncclGroupEnd', '']
    L += elastic_fail(x['ck'], x['h'], 2, -11, others=[0, 1, 3])
    emit('segfault', wrap('slurm', L, x, 1), 1, 'Lightning/ DeepSpeed-style segfault banner; pytorch elastic ChildFailedError "Signal 11 (SIGSEGV) received by PID"; ' + SRC['elastic'], x['gpu'])
def c_segv_slurm():
    L, x = base(R.choice(['mm', 'fairseq']))
    L += ['srun: error: %s: task 0: Segmentation fault (core dumped)' % x['h']]
    emit('segfault', wrap('slurm', L, x, 139), 139, 'slurm src/srun task exit reporting ("srun: error: <node>: task N: Segmentation fault"); format as in https://github.com/desihub/desitarget/issues/628 (srun: error: ...: tasks ...: Terminated)', x['gpu'])

# ---------- file_not_found
def c_fnf_hf():
    L, x = base('hf', nsteps=R.randint(3, 20), force_pre=True)
    L += tb_block('hf', ["OSError: Can't load tokenizer for 'meta-llama/Llama-2-7b-hf'. If you were trying to load it from 'https://huggingface.co/models', make sure you don't have a local directory with the same name. Otherwise, make sure 'meta-llama/Llama-2-7b-hf' is the correct path to a directory containing all relevant files for a LlamaTokenizerFast tokenizer."])
    emit('file_not_found', wrap('nohup', L, x, 1), 1, "transformers tokenization_utils_base.py (Can't load tokenizer for ...); https://github.com/huggingface/transformers/issues (Can't load tokenizer for)", x['gpu'])
def c_fnf_d2():
    L, x = base('d2', nsteps=R.randint(3, 30))
    L += tb_block('d2', ['  File "/home/u/detectron2/detectron2/data/datasets/coco.py", line 69, in load_coco_json', '    with PathManager.open(json_file) as f:',
        "FileNotFoundError: [Errno 2] No such file or directory: 'datasets/coco/annotations/instances_val2017.json'"])
    emit('file_not_found', wrap(R.choice(['lsf', 'sge']), L, x, 1, 'fail'), 1, 'detectron2 data/datasets/coco.py load_coco_json; CPython FileNotFoundError [Errno 2] wording', x['gpu'])
def c_fnf_shell():
    L, x = base('plain', nsteps=R.randint(40, 90))
    L += ["cp: cannot create regular file '/mnt/results/%s/final.pt': No such file or directory" % x['proj'],
          '%s - ERROR - post-training copy failed, exiting with status 1' % x['ck'].pylog()]
    emit('file_not_found', wrap('slurm', L, x, 1), 1, 'GNU coreutils cp error format ("cannot create regular file ...: No such file or directory")', x['gpu'])

# ---------- permission
def c_perm_ckpt():
    fw = R.choice(['lightning', 'hf', 'mm'])
    L, x = base(fw)
    L += tb_block(fw, ['  File "%s/torch/serialization.py", line 651, in save' % SP, '    with _open_zipfile_writer(f) as opened_zipfile:',
        "PermissionError: [Errno 13] Permission denied: '/shared/checkpoints/%s/epoch_3.pt'" % x['proj']])
    emit('permission', wrap(R.choice(['nohup', 'lsf']), L, x, 1, 'fail'), 1, 'CPython PermissionError [Errno 13] wording; torch/serialization.py save path', x['gpu'])
def c_perm_rofs():
    L, x = base('plain')
    L += py_tb([('/home/u/proj/train.py', 410, '<module>', 'os.makedirs(out_dir, exist_ok=True)'), ('<frozen os>', 225, 'makedirs', None)],
               ["OSError: [Errno 30] Read-only file system: '/data/outputs/%s'" % x['proj']])
    emit('permission', wrap('sge', L, x, 1), 1, 'CPython OSError [Errno 30] Read-only file system wording', x['gpu'])
def c_perm_chain():
    L, x = base('fairseq')
    L += py_tb([('%s/fairseq/checkpoint_utils.py' % SP, 112, 'save_checkpoint', 'trainer.save_checkpoint(checkpoints[0], extra_state)')],
               ["PermissionError: [Errno 13] Permission denied: 'checkpoints/checkpoint_last.pt'"])
    L += ['', 'During handling of the above exception, another exception occurred:', '']
    L += tb_block('fairseq', ["  File \"%s/fairseq/file_io.py\", line 171, in async_close" % SP, "    self._async_handler.close()",
                              "AttributeError: 'NoneType' object has no attribute 'close'"])
    emit('permission', wrap('nohup', L, x, 1), 1, 'fairseq checkpoint_utils.py save path; CPython chained-exception wording "During handling of the above exception"', x['gpu'])

# ---------- missing_module
def c_mm_so():
    L, x = base('plain', nsteps=0, force_pre=True)
    L += py_tb([('/home/u/proj/train.py', 3, '<module>', 'import torch'), ('%s/torch/__init__.py' % SP, 367, '<module>', 'from torch._C import *  # noqa: F403')],
               ['ImportError: libcudnn.so.9: cannot open shared object file: No such file or directory'])
    emit('missing_module', wrap(R.choice(['slurm', 'sge']), L, x, 1), 1, 'glibc dlopen error text via torch/__init__.py; https://github.com/pytorch/pytorch/issues (libcudnn.so: cannot open shared object file)', x['gpu'])
def c_mm_flash():
    L, x = base('hf', nsteps=R.randint(2, 6), force_pre=True)
    L += tb_block('hf', ['ImportError: FlashAttention2 has been toggled on, but it cannot be used due to the following error: the package flash_attn seems to be not installed. Please refer to the documentation of https://huggingface.co/docs/transformers/perf_infer_gpu_one#flashattention-2 to install Flash Attention 2.'])
    emit('missing_module', wrap('nohup', L, x, 1), 1, 'transformers modeling_utils.py _check_and_enable_flash_attn_2; https://github.com/huggingface/transformers/issues (flash_attn seems to be not installed)', x['gpu'])
def c_mm_horovod():
    L, x = base('horovod', nsteps=0, force_pre=True)
    L = L + ['[1,%d]<stderr>:Traceback (most recent call last):' % r for r in range(1)] + [
        '[1,0]<stderr>:  File "train_hvd.py", line 7, in <module>', '[1,0]<stderr>:    import horovod.torch as hvd',
        '[1,0]<stderr>:ModuleNotFoundError: No module named \'horovod.torch\'', '--------------------------------------------------------------------------',
        'Primary job  terminated normally, but 1 process returned', 'a non-zero exit code. Per user-direction, the job has been aborted.', '--------------------------------------------------------------------------']
    emit('missing_module', wrap('lsf', L, x, 1, 'fail'), 1, 'CPython ModuleNotFoundError wording; Open MPI mpirun abort banner; ' + SRC['lsf'], x['gpu'])

# ---------- div_zero
def c_div_lr():
    L, x = base(R.choice(['plain', 'timm']))
    L += tb_block('plain', ['  File "/home/u/proj/sched.py", line 31, in get_lr', '    warm = step / self.warmup_steps', 'ZeroDivisionError: division by zero'])
    emit('div_zero', wrap(R.choice(['nohup', 'slurm']), L, x, 1), 1, 'CPython ZeroDivisionError wording', x['gpu'])
def c_div_fairseq():
    L, x = base('fairseq')
    L += tb_block('fairseq', ['  File "%s/fairseq/logging/meters.py", line 122, in smoothed_value' % SP, '    return self.sum / self.count', 'ZeroDivisionError: float division by zero'])
    emit('div_zero', wrap('lsf', L, x, 1, 'fail'), 1, 'CPython ZeroDivisionError wording; fairseq logging/meters.py', x['gpu'])

# ---------- device_mismatch
def c_dev_cuda_cpu():
    fw = R.choice(['plain', 'lightning', 'hf'])
    L, x = base(fw, nsteps=R.randint(3, 40))
    L += tb_block(fw, ['RuntimeError: Expected all tensors to be on the same device, but found at least two devices, cuda:0 and cpu! (when checking argument for argument mat1 in method wrapper_CUDA_addmm)'])
    emit('device_mismatch', wrap('nohup', L, x, 1), 1, 'pytorch aten/src/ATen/native/TensorCompare / TensorIterator device check; https://github.com/pytorch/pytorch/issues (Expected all tensors to be on the same device)', x['gpu'])
def c_dev_meta():
    L, x = base('hf', nsteps=R.randint(1, 5), force_pre=True)
    L += tb_block('hf', ['NotImplementedError: Cannot copy out of meta tensor; no data! Please use torch.nn.Module.to_empty() instead of torch.nn.Module.to() when moving module from meta to a different device.'])
    emit('device_mismatch', wrap('slurm', L, x, 1), 1, 'pytorch torch/nn/modules/module.py meta-tensor copy error; https://github.com/huggingface/accelerate/issues (Cannot copy out of meta tensor; no data!)', x['gpu'])
def c_dev_mps():
    L, x = base('plain', cpu=True, nsteps=R.randint(5, 40))
    L += tb_block('plain', ['RuntimeError: Tensor for argument #2 \'mat1\' is on CPU, but expected it to be on GPU (while checking arguments for addmm)'.replace('GPU', 'GPU')])
    L[-1] = "RuntimeError: Placeholder storage has not been allocated on MPS device!"
    emit('device_mismatch', wrap('nohup', L, x, 1), 1, 'pytorch aten/src/ATen/native/mps/OperationUtils.mm ("Placeholder storage has not been allocated on MPS device!"); https://github.com/pytorch/pytorch/issues/130790 ; https://github.com/EleutherAI/lm-evaluation-harness/issues/1131', ('Apple M2 Max (mps)', 'none', 0))
def c_dev_xla():
    L, x = base('plain', cpu=True, nsteps=R.randint(5, 40))
    L += tb_block('plain', ["RuntimeError: torch_xla/csrc/aten_xla_bridge.cpp:110 : Check failed: xtensor ", "*** Begin stack trace ***", "\ttsl::CurrentStackTrace()", "\ttorch_xla::bridge::GetXlaTensor(at::Tensor const&)", "*** End stack trace ***",
        "Input tensor is not an XLA tensor: CPUFloatType"])
    emit('device_mismatch', wrap('nohup', L, x, 1), 1, 'torch_xla csrc/aten_xla_bridge.cpp ("Input tensor is not an XLA tensor"); https://github.com/pytorch/xla/issues (Input tensor is not an XLA tensor)', ('TPU v4-8', 'none', 0))

# ---------- nan_loss
def c_nan_exit0():
    fw = R.choice(['hf', 'fairseq', 'mm', 'plain', 'd2'])
    n = R.randint(60, 200); L, x = base(fw, nsteps=n, nanfrom=R.randint(n // 4, n // 2))
    L += ['%s - INFO - Training completed. Saving final model to %s/final' % (x['ck'].pylog(), '/scratch/runs/' + x['proj'])]
    if R.random() < 0.6: L += wandb_teardown(False, x['proj'])
    emit('nan_loss', wrap(R.choice(['nohup', 'lsf', 'slurm']), L, x, 0, 'ok'), 0, 'composed metric lines (framework progress formats); nan propagation to the end, exit 0', x['gpu'])
def c_nan_d2():
    n = R.randint(30, 90); L, x = base('d2', nsteps=n, nanfrom=n - 1)
    L += tb_block('d2', ['  File "/home/u/detectron2/detectron2/engine/train_loop.py", line 346, in _write_metrics', '    raise FloatingPointError(',
        'FloatingPointError: Loss became infinite or NaN at iteration=%d!' % (19 + 20 * (n - 1)), "loss_dict = {'loss_cls': nan, 'loss_box_reg': nan, 'loss_rpn_cls': 0.6931, 'loss_rpn_loc': nan}"])
    emit('nan_loss', wrap('nohup', L, x, 1), 1, 'detectron2 engine/train_loop.py ("Loss became infinite or NaN at iteration="); https://github.com/facebookresearch/detectron2/issues (FloatingPointError: Loss became infinite or NaN)', x['gpu'])
def c_nan_fairseq():
    n = R.randint(30, 90); L, x = base('fairseq', nsteps=n)
    for i in range(R.randint(3, 8)):
        L.append('%s | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: %s' % (x['ck'].pylog(), 2.0 ** (-i)))
    L += tb_block('fairseq', ['  File "%s/fairseq/optim/dynamic_loss_scaler.py", line 61, in check_overflow' % SP, '    raise FloatingPointError(',
        'FloatingPointError: Minimum loss scale reached (0.0001). Your loss is probably exploding. Try lowering the learning rate, using gradient clipping or increasing the batch size.'])
    emit('nan_loss', wrap('slurm', L, x, 1), 1, 'fairseq optim/dynamic_loss_scaler.py + trainer.py gradient overflow NOTE; https://github.com/facebookresearch/fairseq/issues/1529 ; https://github.com/facebookresearch/fairseq/issues/512', x['gpu'])

# ---------- oom_killer
def c_oomk_slurm():
    L, x = base(R.choice(['plain', 'hf', 'timm']))
    jid = R.randint(1000000, 9999999)
    L += ['/var/spool/slurmd/job%d/slurm_script: line 24: %d Killed                  python train.py --config configs/%s.yaml' % (jid, pid(), x['proj']),
          'slurmstepd: error: Detected 1 oom_kill event in StepId=%d.batch. Some of the step tasks have been OOM Killed.' % jid]
    emit('oom_killer', wrap('slurm', L, x, 137), 137, SRC['slurm_oom'], x['gpu'])
def c_oomk_dmesg():
    L, x = base(R.choice(['lightning', 'plain']))
    p = pid()
    L += ['Killed', '$ dmesg -T | tail -3',
          '[%s] oom-kill:constraint=CONSTRAINT_NONE,nodemask=(null),cpuset=/,mems_allowed=0-1,global_oom,task_memcg=/user.slice/user-1000.slice/session-3.scope,task=python,pid=%d,uid=1000' % (x['ck'].ctime(), p),
          '[%s] Out of memory: Killed process %d (python) total-vm:%dkB, anon-rss:%dkB, file-rss:%dkB, shmem-rss:%dkB, UID:1000 pgtables:%dkB oom_score_adj:0' % (x['ck'].ctime(), p, R.randint(10 ** 8, 4 * 10 ** 8), R.randint(10 ** 8, 2 * 10 ** 8), R.randint(10 ** 4, 10 ** 5), R.randint(10 ** 5, 10 ** 7), R.randint(10 ** 5, 10 ** 6)),
          '[%s] oom_reaper: reaped process %d (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB' % (x['ck'].ctime(), p)]
    emit('oom_killer', wrap('nohup', L, x, -9), -9, SRC['oomk'], x['gpu'])
def c_oomk_k8s():
    L, x = base(R.choice(['ray', 'hf']))
    L += ['', '$ kubectl describe pod %s-trainer-0 | sed -n "/Last State/,/Exit Code/p"' % x['proj'], '    Last State:     Terminated', '      Reason:       OOMKilled', '      Exit Code:    137',
          '      Started:      %s' % x['ck'].ctime(), '      Finished:     %s' % x['ck'].ctime()]
    emit('oom_killer', L, 137, 'Kubernetes pod container status (Reason: OOMKilled, Exit Code: 137); https://github.com/kubernetes/kubernetes/issues (OOMKilled exit code 137)', x['gpu'])
def c_oomk_lsf():
    L, x = base(R.choice(['mm', 'plain']))
    emit('oom_killer', wrap('lsf', L, x, 137, 'mem'), 137, SRC['lsf'], x['gpu'])
def c_oomk_sge():
    L, x = base(R.choice(['plain', 'keras']))
    L = wrap('sge', L, x, 137) + sge_qacct(x['ck'], x['user'], x['h'], 137, '100 : assumedly after job', 64.0 + R.uniform(0.0, 0.9), 64, 172800, R.randint(3000, 60000))
    emit('oom_killer', L, 137, SRC['sge'] + ' (maxvmem reaching h_vmem, exit_status 137)', x['gpu'])
def c_oomk_torchrun():
    L, x = base('plain', ngpu=4)
    L += elastic_fail(x['ck'], x['h'], 1, -9, others=[0, 2, 3])
    L += ['slurmstepd: error: Detected 1 oom_kill event in StepId=%d.0. Some of the step tasks have been OOM Killed.' % R.randint(1000000, 9999999),
          'srun: error: %s: task 0: Out Of Memory' % x['h']]
    emit('oom_killer', wrap('slurm', L, x, 1), 1, SRC['slurm_oom'] + '; ' + SRC['elastic'], x['gpu'])

# ---------- traceback
def c_tb_type():
    fw = R.choice(['lightning', 'hf', 'mm', 'timm'])
    L, x = base(fw, nsteps=R.randint(5, 100))
    L += tb_block(fw, ['  File "/home/u/proj/model.py", line 88, in forward', '    x = self.head(x, mask)', "TypeError: forward() takes 2 positional arguments but 3 were given"])
    emit('traceback', wrap(R.choice(['nohup', 'slurm', 'lsf']), L, x, 1, 'fail'), 1, 'CPython TypeError wording', x['gpu'])
def c_tb_value_mm():
    L, x = base('mm', nsteps=R.randint(5, 30))
    L += tb_block('mm', ['  File "%s/mmengine/registry/build_functions.py", line 100, in build_from_cfg' % SP, '    raise type(e)(',
        "KeyError: 'CustomCocoDataset is not in the mmdet::dataset registry. Please check whether the value of `CustomCocoDataset` is correct or it was registered as expected. More details can be found at https://mmengine.readthedocs.io/en/latest/advanced_tutorials/config.html#import-the-custom-module'"])
    emit('traceback', wrap('sge', L, x, 1), 1, 'mmengine registry/build_functions.py ("is not in the ... registry"); https://github.com/open-mmlab/mmdetection/issues (is not in the mmdet::dataset registry)', x['gpu'])
def c_tb_ray():
    L, x = base('ray')
    L += ['%s\tERROR tune_controller.py:1331 -- Trial task failed for trial TorchTrainer_%05x_00000' % (x['ck'].pylog(), R.randint(0, 0xfffff)),
          'ray.exceptions.RayTaskError(IndexError): \x1b[36mray::_Inner.train()\x1b[39m (pid=%d, ip=10.0.1.7, actor_id=%032x, repr=TorchTrainer)' % (pid(), R.randint(0, 2 ** 127)),
          '  File "/home/u/proj/train_ray.py", line 64, in train_func', '    label = self.label_map[idx]', 'IndexError: list index out of range',
          '', 'Training errored after %d iterations at %s. Total running time: %dmin %ds' % (R.randint(1, 9), x['ck'].iso().replace('T', ' '), R.randint(1, 59), R.randint(0, 59))]
    emit('traceback', wrap('nohup', L, x, 1), 1, 'ray python/ray/tune/execution/tune_controller.py ("Trial task failed for trial"); ray.exceptions.RayTaskError format', x['gpu'])

# ---------- assertion
def c_assert_plain():
    L, x = base(R.choice(['plain', 'timm']), nsteps=R.randint(3, 60))
    L += tb_block('plain', ['  File "/home/u/proj/model.py", line 120, in forward', "    assert x.shape[-1] == self.dim, f'expected dim {self.dim}, got {x.shape[-1]}'", 'AssertionError: expected dim 768, got 1024'])
    emit('assertion', wrap(R.choice(['nohup', 'sge']), L, x, 1), 1, 'CPython AssertionError wording', x['gpu'])
def c_assert_d2():
    L, x = base('d2', nsteps=R.randint(3, 50))
    L += tb_block('d2', ['  File "/home/u/detectron2/detectron2/structures/boxes.py", line 160, in __init__', '    assert tensor.dim() == 2 and tensor.size(-1) == 4, tensor.size()', 'AssertionError: torch.Size([0])'])
    emit('assertion', wrap('lsf', L, x, 1, 'fail'), 1, 'detectron2 structures/boxes.py Boxes assertion; https://github.com/facebookresearch/detectron2/issues (AssertionError torch.Size)', x['gpu'])
def c_assert_rank():
    L, x = base('plain', ngpu=2)
    L += rankify(tb_block('plain', ['  File "%s/torch/nn/parallel/distributed.py", line 1139, in _sync_buffers' % SP, '    assert len(self.module_buffers) > 0', 'AssertionError']), 1)
    L += elastic_fail(x['ck'], x['h'], 1, 1, others=[0])
    emit('assertion', wrap('slurm', L, x, 1), 1, 'CPython bare AssertionError; ' + SRC['elastic'], x['gpu'])

# ---------- runtime_error
def c_rt_shape():
    fw = R.choice(['lightning', 'timm', 'plain'])
    L, x = base(fw, nsteps=R.randint(2, 30))
    L += tb_block(fw, ['  File "%s/torch/nn/modules/linear.py", line 117, in forward' % SP, '    return F.linear(input, self.weight, self.bias)', 'RuntimeError: mat1 and mat2 shapes cannot be multiplied (64x2048 and 1024x1000)'])
    emit('runtime_error', wrap('nohup', L, x, 1), 1, 'pytorch aten/src/ATen/native/LinearAlgebra.cpp ("mat1 and mat2 shapes cannot be multiplied")', x['gpu'])
def c_rt_backward():
    L, x = base(R.choice(['hf', 'plain']))
    L += tb_block('plain', ['  File "%s/torch/autograd/__init__.py", line 289, in backward' % SP, '    _engine_run_backward(',
        'RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.'])
    emit('runtime_error', wrap('slurm', L, x, 1), 1, 'pytorch torch/csrc/autograd (backward through the graph a second time)', x['gpu'])
def c_rt_statedict():
    L, x = base('lightning', nsteps=2, force_pre=True)
    L += tb_block('lightning', ['RuntimeError: Error(s) in loading state_dict for ResNet:', '\tsize mismatch for fc.weight: copying a param with shape torch.Size([1000, 2048]) from checkpoint, the shape in current model is torch.Size([10, 2048]).',
        '\tsize mismatch for fc.bias: copying a param with shape torch.Size([1000]) from checkpoint, the shape in current model is torch.Size([10]).'])
    emit('runtime_error', wrap('lsf', L, x, 1, 'fail'), 1, 'pytorch torch/nn/modules/module.py load_state_dict ("Error(s) in loading state_dict for")', x['gpu'])

# ---------- gpu_hardware
def c_xid79():
    L, x = base('plain', ngpu=8); ck = x['ck']; bad = R.randint(0, 7)
    L += ['[%s] NVRM: Xid (PCI:0000:%02x:00): 79, pid=%d, GPU has fallen off the bus.' % (ck.ctime(), 0x10 + 0x20 * bad, pid()),
          '[%s] NVRM: GPU 0000:%02x:00.0: GPU has fallen off the bus.' % (ck.ctime(), 0x10 + 0x20 * bad)]
    L += rankify(tb_block('plain', ['RuntimeError: CUDA error: unspecified launch failure'] + CUDA_TAIL), bad)
    for r in range(8):
        if r != bad:
            L.append('[rank%d]:[E%s ProcessGroupNCCL.cpp:616] [Rank %d] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=%d, OpType=ALLREDUCE, NumelIn=%d, NumelOut=%d, Timeout(ms)=600000) ran for %d milliseconds before timing out.' % (r, ck.glog()[:-7], r, 88123, 25690112, 25690112, 600000 + R.randint(5, 90)))
    L += elastic_fail(ck, x['h'], bad, 1, others=range(7))
    emit('gpu_hardware', wrap('slurm', L, x, 1), 1, SRC['xid'] + '; ' + SRC['nccl_wd'], x['gpu'])
def c_ecc():
    L, x = base(R.choice(['hf', 'lightning']))
    L += tb_block('plain', ['RuntimeError: CUDA error: uncorrectable ECC error encountered'] + CUDA_TAIL)
    L += ['$ nvidia-smi -q -d ECC | grep -A3 "Volatile"', '        Volatile', '            SRAM Correctable              : 0', '            SRAM Uncorrectable            : 2', '            DRAM Correctable              : 0']
    emit('gpu_hardware', wrap(R.choice(['nohup', 'lsf']), L, x, 1, 'fail'), 1, 'CUDA cudaErrorECCUncorrectable string ("uncorrectable ECC error encountered") via c10/cuda/CUDAException.cpp; nvidia-smi -q ECC fields', x['gpu'])
def c_xid48_dmesg():
    L, x = base('d2', ngpu=2)
    L += ['NVRM: Xid (PCI:0000:3b:00): 48, pid=%d, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 3, subpartition 0.' % pid(),
          'NVRM: Xid (PCI:0000:3b:00): 63, pid=%d, Row Remapper: New row (0x0000000000a3f1e0) marked for remapping, reset gpu to activate.' % pid()]
    L += tb_block('d2', ['RuntimeError: CUDA error: an illegal memory access was encountered'] + CUDA_TAIL)
    emit('gpu_hardware', wrap('sge', L, x, 1), 1, SRC['xid'] + ' (Xid 48 DBE, Xid 63 row remapping); https://docs.nvidia.com/deploy/xid-errors/', x['gpu'])
def c_gpu_lost():
    L, x = base('plain', ngpu=4)
    L += ['Unable to determine the device handle for GPU0000:%02X:00.0: Unknown Error' % (0x10 + 0x20 * R.randint(0, 3)) , '$ nvidia-smi', 'Unable to determine the device handle for GPU0000:51:00.0: GPU is lost.  Reboot the system to recover this GPU']
    L += tb_block('plain', ['RuntimeError: CUDA error: unknown error'] + CUDA_TAIL)
    emit('gpu_hardware', wrap('slurm', L, x, 1), 1, 'nvidia-smi "GPU is lost.  Reboot the system to recover this GPU"; https://github.com/NVIDIA/open-gpu-kernel-modules/issues/507', x['gpu'])

# ---------- disk_full
def c_disk_ckpt():
    fw = R.choice(['lightning', 'hf', 'plain'])
    L, x = base(fw)
    L += py_tb([('%s/torch/serialization.py' % SP, 652, 'save', '_save(obj, opened_zipfile, pickle_module, pickle_protocol, _disable_byteorder_record)'),
                ('%s/torch/serialization.py' % SP, 886, '_save', 'zip_file.write_record(name, storage, num_bytes)')],
               ['RuntimeError: [enforce fail at inline_container.cc:778] . PytorchStreamWriter failed writing file data/%d: file write failed' % R.randint(1, 400)])
    L += ['', 'During handling of the above exception, another exception occurred:', ''] + tb_block(fw, ['  File "%s/torch/serialization.py", line 651, in save' % SP, '    with _open_zipfile_writer(f) as opened_zipfile:',
        '  File "%s/torch/serialization.py", line 499, in __exit__' % SP, '    self.file_like.write_end_of_file()',
        'RuntimeError: [enforce fail at inline_container.cc:603] . unexpected pos 2749056640 vs 2749056528'])
    L += ['$ df -h /scratch', 'Filesystem      Size  Used Avail Use% Mounted on', '/dev/nvme1n1    3.5T  3.5T     0 100% /scratch']
    emit('disk_full', wrap('nohup', L, x, 1), 1, 'pytorch caffe2/serialize/inline_container.cc ("unexpected pos"); https://github.com/YuanGongND/ast/issues/30 ; https://github.com/pytorch/pytorch/issues/121833; coreutils df format', x['gpu'])
def c_disk_abort():
    L, x = base(R.choice(['plain', 'fairseq']))
    L += ['%s - ERROR - failed writing shard: [Errno 28] No space left on device' % x['ck'].pylog(),
          "terminate called after throwing an instance of 'std::runtime_error'", '  what():  write failed: No space left on device', 'Aborted (core dumped)']
    emit('disk_full', wrap('slurm', L, x, 134), 134, 'CPython OSError [Errno 28]; libstdc++ terminate banner; bash "Aborted (core dumped)"', x['gpu'])
def c_disk_quota():
    L, x = base('hf')
    L += tb_block('hf', ['  File "%s/safetensors/torch.py", line 286, in save_file' % SP, '    serialize_file(_flatten(tensors), filename, metadata=metadata)',
        'safetensors_rust.SafetensorError: Error while serializing: IoError(Os { code: 122, kind: FilesystemQuotaExceeded, message: "Disk quota exceeded" })'])
    emit('disk_full', wrap('lsf', L, x, 1, 'fail'), 1, 'safetensors bindings SafetensorError IoError Os format (Rust std io error, EDQUOT "Disk quota exceeded"); https://github.com/huggingface/safetensors/issues', x['gpu'])

# ---------- walltime
def c_wt_slurm():
    fw = R.choice(['lightning', 'plain', 'hf'])
    L, x = base(fw); ck = x['ck']; jid = R.randint(1000000, 9999999)
    L += ['slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO TIME LIMIT ***' % (jid, x['h'], ck.iso())]
    if fw == 'lightning':
        L += ['[rank: 0] Received SIGTERM: 15', 'Bypassing SIGTERM: 15']
    L += ['[%s] torch.distributed.elastic.agent.server.api: [WARNING] Received Signals.SIGTERM death signal, shutting down workers' % ck.pylog(),
          '[%s] torch.distributed.elastic.multiprocessing.api: [WARNING] Closing process %d via signal SIGTERM' % (ck.pylog(), pid())] if R.random() < 0.5 else []
    L += wandb_teardown(True, x['proj']) if R.random() < 0.4 else []
    emit('walltime', wrap('slurm', L, x, 143), 143, SRC['slurm_time'] + ('; ' + SRC['lightning_sig'] if fw == 'lightning' else ''), x['gpu'])
def c_wt_lsf():
    L, x = base(R.choice(['mm', 'timm']))
    L += ['User defined signal 2'] if R.random() < 0.5 else []
    emit('walltime', wrap('lsf', L, x, 140, 'time'), 140, SRC['lsf'], x['gpu'])
def c_wt_sge():
    L, x = base(R.choice(['keras', 'plain']))
    hrt = R.choice([14400, 43200, 86400])
    L = wrap('sge', L, x, 137) + sge_qacct(x['ck'], x['user'], x['h'], 137, '37  : qmaster enforced h_rt, h_cpu, or h_vmem limit', R.uniform(5, 20), 64, hrt, hrt + R.randint(1, 40))
    emit('walltime', L, 137, SRC['sge'] + ' (failed 37 qmaster enforced h_rt limit; ru_wallclock == h_rt)', x['gpu'])
def c_wt_pbs():
    L, x = base('plain')
    L += ['=>> PBS: job killed: walltime %d exceeded limit %d' % (86400 + R.randint(1, 90), 86400)]
    emit('walltime', L, 271, 'Torque/PBS MOM message ("=>> PBS: job killed: walltime ... exceeded limit ..."); https://github.com/marbl/canu/issues/1214 ; https://github.com/biocore/qiime/issues/1048', x['gpu'])

# ---------- preempted
def c_pre_slurm():
    L, x = base(R.choice(['plain', 'hf']))
    jid = R.randint(1000000, 9999999)
    L += ['slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO PREEMPTION ***' % (jid, x['h'], x['ck'].iso())]
    emit('preempted', wrap('slurm', L, x, 143), 143, 'slurm slurmstepd job cancel message "DUE TO PREEMPTION"; ' + SRC['slurm_time'], x['gpu'])
def c_pre_lightning_requeue():
    L, x = base('lightning')
    jid = R.randint(1000000, 9999999)
    L += ['Handling auto-requeue signal: 10', 'Requeing job %d...' % jid, 'Requeued SLURM job: %d' % jid]
    L += ['slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s DUE TO JOB REQUEUE ***' % (jid, x['h'], x['ck'].iso())]
    emit('preempted', wrap('slurm', L, x, 0), 0, SRC['lightning_sig'] + ' (auto-requeue messages); slurm "DUE TO JOB REQUEUE"', x['gpu'])
def c_pre_aws():
    L, x = base(R.choice(['hf', 'plain', 'ray']))
    ck = x['ck']; t = ck.iso()
    L += ['%s - WARNING - spot_watcher - instance-action: {"action": "terminate", "time": "%sZ"}' % (ck.pylog(), t),
          '%s - WARNING - spot_watcher - Spot interruption notice received; saving checkpoint to s3://%s-ckpt/step_%d' % (ck.pylog(), x['proj'], R.randint(1000, 90000)),
          '%s - INFO - checkpoint saved, exiting cleanly so the job can resume on a new instance' % ck.pylog()]
    L += wandb_teardown(False, x['proj']) if R.random() < 0.5 else []
    emit('preempted', wrap('nohup', L, x, 0), 0, SRC['spot_aws'] + ' (instance-action JSON)', x['gpu'])
def c_pre_gce():
    L, x = base(R.choice(['plain', 'keras']))
    L += ['%s - WARNING - metadata: instance/preempted = TRUE' % x['ck'].pylog(), '', 'Broadcast message from root@%s (%s):' % (x['h'], x['ck'].ctime()), '', 'The system is going down for poweroff NOW!', 'Terminated']
    emit('preempted', wrap('nohup', L, x, 143), 143, SRC['gce'] + '; systemd shutdown broadcast wording', x['gpu'])
def c_pre_azure():
    L, x = base('plain')
    L += ['%s - WARNING - scheduled_events - {"DocumentIncarnation": %d, "Events": [{"EventId": "%08X-%04X-%04X-%04X-%012X", "EventType": "Preempt", "ResourceType": "VirtualMachine", "Resources": ["%s"], "EventStatus": "Scheduled", "NotBefore": "%s GMT", "Description": "", "EventSource": "Platform", "DurationInSeconds": -1}]}' % (x['ck'].pylog(), R.randint(1, 9), R.randint(0, 2**32-1), R.randint(0, 65535), R.randint(0, 65535), R.randint(0, 65535), R.randint(0, 2**48-1), x['h'], x['ck'].ctime()),
          '%s - INFO - Preempt event scheduled, writing checkpoint and exiting' % x['ck'].pylog(), '%s - INFO - saved checkpoint ckpt/last.pt' % x['ck'].pylog()]
    emit('preempted', wrap('nohup', L, x, 0), 0, SRC['azure'], x['gpu'])
def c_pre_lsf():
    L, x = base('timm')
    emit('preempted', wrap('lsf', L, x, 130, 'preempt'), 130, SRC['lsf'], x['gpu'])

# ---------- interrupted
def c_int_scancel():
    L, x = base(R.choice(['plain', 'mm']))
    jid = R.randint(1000000, 9999999)
    L += ['slurmstepd: error: *** JOB %d ON %s CANCELLED AT %s ***' % (jid, x['h'], x['ck'].iso())]
    L += ['srun: Job step aborted: Waiting up to 32 seconds for job step to finish.'] if R.random() < 0.5 else []
    emit('interrupted', wrap('slurm', L, x, 143), 143, 'slurm slurmstepd cancel message without reason (scancel); https://github.com/ZettaAI/zetta_utils/issues/671', x['gpu'])
def c_int_ctrlc():
    fw = R.choice(['plain', 'timm', 'fairseq'])
    L, x = base(fw)
    L += ['^C'] + tb_block(fw, ['  File "%s/torch/utils/data/dataloader.py", line 1285, in _get_data' % SP, '    success, data = self._try_get_data()', 'KeyboardInterrupt'])
    L = ['$ python train.py --config configs/%s.yaml' % x['proj']] + L
    emit('interrupted', L, -2, 'CPython KeyboardInterrupt traceback (foreground run, Ctrl-C; interpreter re-raises SIGINT -> -2)', x['gpu'])
def c_int_hf_sigterm():
    L, x = base('hf')
    L += ['%s - WARNING - Received SIGTERM; saving checkpoint to %s/checkpoint-%d and stopping training' % (x['ck'].pylog(), '/scratch/runs/' + x['proj'], R.randint(500, 9000)),
          "{'train_runtime': %.4f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %.3f, 'train_loss': %.4f, 'epoch': %.2f}" % (R.uniform(1000, 90000), R.uniform(10, 200), R.uniform(0.1, 3), R.uniform(0.5, 2), R.uniform(0.1, 2)),
          '%s - INFO - Exiting after SIGTERM (sent by kill %d from user %s)' % (x['ck'].pylog(), pid(), x['user'])]
    emit('interrupted', wrap('nohup', L, x, 0), 0, 'composed graceful SIGTERM handler around HF Trainer summary dict; handler exits 0', x['gpu'])
def c_int_bkill():
    L, x = base('d2')
    emit('interrupted', wrap('lsf', L, x, 130, 'owner'), 130, SRC['lsf'], x['gpu'])

# ---------- native_abort
def c_abort_check():
    L, x = base('plain')
    L += ['F%s %d graph_executor.cc:212] Check failed: node->outputs().size() == 1 (2 vs. 1) ' % (x['ck'].glog(), pid()), '*** Check failure stack trace: ***',
          '    @     0x7f%x  google::LogMessage::Fail()' % R.randint(0x10000000, 0xfffffff0), '    @     0x7f%x  google::LogMessage::SendToLog()' % R.randint(0x10000000, 0xfffffff0),
          '    @     0x7f%x  google::LogMessageFatal::~LogMessageFatal()' % R.randint(0x10000000, 0xfffffff0), 'Aborted (core dumped)']
    emit('native_abort', wrap('nohup', L, x, 134), 134, 'glog logging.cc ("Check failed:", "*** Check failure stack trace: ***"); bash Aborted (core dumped)', x['gpu'])
def c_abort_terminate():
    L, x = base(R.choice(['hf', 'plain']))
    L += ["terminate called after throwing an instance of 'std::bad_alloc'", '  what():  std::bad_alloc'] if False else ["terminate called after throwing an instance of 'std::system_error'", "  what():  Resource deadlock avoided", 'Fatal Python error: Aborted', '', 'Current thread 0x%016x (most recent call first):' % R.randint(2 ** 44, 2 ** 47), '  <no Python frame>']
    emit('native_abort', wrap('slurm', L, x, 134), 134, 'libstdc++ terminate banner; CPython faulthandler "Fatal Python error: Aborted"', x['gpu'])
def c_abort_glibc():
    L, x = base('plain', cpu=True)
    L += ['python: ../nptl/pthread_mutex_lock.c:81: __pthread_mutex_lock: Assertion `mutex->__data.__owner == 0\' failed.', 'Aborted (core dumped)']
    emit('native_abort', wrap('nohup', L, x, 134), 134, 'glibc nptl/pthread_mutex_lock.c assertion text (__pthread_mutex_lock: Assertion `mutex->__data.__owner == 0\' failed.)', None)

# ---------- exec_failure
def c_exec_slurm():
    L, x = base('plain', nsteps=1)
    jid = R.randint(100000, 9999999)
    L = slurm_head(x['user'], x['h'], jid, 1) + ['+ module load cuda/12.2', '+ source /home/%s/miniconda3/bin/activate %s' % (x['user'], x['proj']), '+ env'] + env_dump(x['user'], x['proj'], 1)[1:] + ['+ pip freeze'] + pip_freeze()[1:] + [
         '+ torchrun --nproc_per_node=1 train.py --config configs/%s.yaml' % x['proj'], '/var/spool/slurmd/job%d/slurm_script: line 18: torchrun: command not found' % jid]
    emit('exec_failure', L, 127, 'bash "command not found" (127) in a Slurm batch script', None)
def c_exec_format():
    L, x = base('plain', nsteps=0, force_pre=True)
    L = L + ['./bin/preprocess: ./bin/preprocess: cannot execute binary file: Exec format error' if R.random() < 0.5 else 'bash: ./bin/preprocess: cannot execute binary file: Exec format error']
    emit('exec_failure', wrap('nohup', L, x, 126), 126, 'bash "cannot execute binary file: Exec format error" (126)', None)

# ---------- unknown
def c_unknown_exit1():
    L, x = base(R.choice(['plain', 'hf']))
    L += ['%s - INFO - step done' % x['ck'].pylog()]
    emit('unknown', wrap('lsf', L, x, 1, 'fail'), 1, 'composed; LSF report with "Exited with exit code 1." and no error in the output; ' + SRC['lsf'], x['gpu'])
def c_unknown_srun():
    L, x = base('mm')
    L += ['srun: error: %s: task 0: Exited with exit code 255' % x['h']]
    emit('unknown', wrap('slurm', L, x, 255), 255, 'slurm srun task exit reporting ("task 0: Exited with exit code"), no cause printed', x['gpu'])

# ---------- success (noisy)
def s_generic():
    fw = R.choice(['lightning', 'hf', 'timm', 'd2', 'fairseq', 'mm', 'keras', 'ray', 'horovod', 'plain'])
    L, x = base(fw, nsteps=(R.randint(400, 760) if R.random() < 0.2 else R.randint(60, 360))); ck = x['ck']
    noise = []
    k = R.randint(2, 5)
    pool = [
        '%s | INFO | fairseq.trainer | NOTE: gradient overflow detected, ignoring gradient, setting loss scale to: 32768.0' % ck.pylog(),
        '[%s] Gradient overflow.  Skipping step, loss scaler 0 reducing loss scale to 16384.0' % ck.tick().strftime('%Y-%m-%d %H:%M:%S'),
        '%s - WARNING - Skipping batch 1834: loss is nan (nan_skip_count=1/100)' % ck.pylog(),
        '%s - WARNING - Failed to fetch shard 00042 (ConnectionResetError), retrying 1/5 in 2.0s' % ck.pylog(),
        '%s - INFO - retry succeeded for shard 00042' % ck.pylog(),
        '%s - INFO - eval: val_error=0.0812 val_loss=0.3311 top1_error=8.12' % ck.pylog(),
        '%s - INFO - dedup: killed 3 duplicates from the manifest' % ck.pylog(),
        '%s - INFO - no checkpoint found at ckpt/last.pt (FileNotFoundError handled), starting from scratch' % ck.pylog(),
        'UserWarning: NaN values in target were masked out (nan_policy="omit")',
        'INFO: Error tracking disabled (sentry not configured)',
        "DeprecationWarning: 'error_on_missing' is deprecated and will be removed in v2.0, use 'strict' instead",
        '%s - INFO - nanoGPT-style config loaded: n_layer=12 n_head=12 n_embd=768' % ck.pylog(),
        '%s - WARNING - worker 3 timed out fetching sample 91817, re-queued' % ck.pylog(),
        'Note: NumExpr detected 32 cores but "NUMEXPR_MAX_THREADS" not set, so enforcing safe limit of 8.',
        '%s - INFO - early stopping patience 3/10 (no improvement in val_error)' % ck.pylog(),
    ]
    noise = R.sample(pool, k)
    L = intersperse(L, noise)
    if fw == 'hf':
        L += ["{'train_runtime': %.4f, 'train_samples_per_second': %.3f, 'train_steps_per_second': %.3f, 'train_loss': %.4f, 'epoch': %.1f}" % (R.uniform(1000, 90000), R.uniform(10, 200), R.uniform(0.1, 3), R.uniform(0.5, 2), 3.0),
              '***** train metrics *****', '  epoch                    =        3.0', '  train_loss               =     %.4f' % R.uniform(0.4, 1.5)]
    elif fw == 'lightning':
        L += ['`Trainer.fit` stopped: `max_epochs=%d` reached.' % R.choice([10, 20, 90])]
    elif fw == 'd2':
        L += ['[%s d2.engine.hooks]: Overall training speed: %d iterations in %d:%02d:%02d (%.4f s / it)' % (ck.mm(), R.randint(9000, 90000), R.randint(1, 20), R.randint(0, 59), R.randint(0, 59), R.uniform(0.2, 0.6)),
              '[%s d2.engine.hooks]: Total training time: %d:%02d:%02d (0:%02d:%02d on hooks)' % (ck.mm(), R.randint(1, 20), R.randint(0, 59), R.randint(0, 59), R.randint(0, 59), R.randint(0, 59))]
    elif fw == 'fairseq':
        L += ['%s | INFO | fairseq_cli.train | done training in %.1f seconds' % (ck.pylog(), R.uniform(1000, 90000))]
    elif fw == 'ray':
        L += ['Training completed after %d iterations at %s. Total running time: %dmin %ds' % (R.randint(10, 99), ck.iso().replace('T', ' '), R.randint(1, 59), R.randint(0, 59))]
    elif fw == 'mm':
        L += ['%s - mmengine - INFO - Saving checkpoint at %d epochs' % (ck.mm(), 12), '%s - mmengine - INFO - bbox_mAP_copypaste: 0.412 0.623 0.447 0.241 0.452 0.538' % ck.mm()]
    else:
        L += ['%s - INFO - training finished; best val_error %.4f; model saved to %s' % (ck.pylog(), R.uniform(0.02, 0.3), '/scratch/runs/%s/final.pt' % x['proj'])]
    if x['ngpu'] > 1 and R.random() < 0.5:
        L += ['[rank0]:[W%s ProcessGroupNCCL.cpp:1168] Warning: WARNING: process group has NOT been destroyed before we destruct ProcessGroupNCCL. On normal program exit, the application should call destroy_process_group to ensure that any pending NCCL operations have finished in this process. In rare cases this process can exit before this point and block the progress of another member of the process group. This constraint has always been present,  but this warning has only recently been added. For more info, please see https://pytorch.org/docs/stable/distributed.html#shutdown (function operator())' % ck.glog()[:-7]]
    if R.random() < 0.5: L += wandb_teardown(False, x['proj'])
    sched = R.choice(['nohup', 'slurm', 'lsf', 'sge', 'nohup'])
    L = wrap(sched, L, x, 0, 'ok')
    if sched == 'sge' and R.random() < 0.6:
        L += sge_qacct(ck, x['user'], x['h'], 0, '0', R.uniform(5, 40), 64, 172800, R.randint(3000, 60000))
    emit('success', L, 0, 'composed noisy success; harmless-warning wording from pytorch/transformers/fairseq/apex sources (gradient overflow NOTE, ProcessGroupNCCL destroy warning, DataLoader worker UserWarning); scheduler framing ' + (SRC['lsf'] if sched == 'lsf' else SRC['sge'] if sched == 'sge' else 'slurm/nohup'), x['gpu'])

# ----------------------------------------------------------------- captured
CAPTURED = [
 ('dl_keyerror', 'traceback', 'DataLoader(num_workers=2) whose Dataset.__getitem__ raises KeyError in a worker; re-raised in main process'),
 ('dl_segv', 'segfault', 'DataLoader worker that SIGSEGVs itself; main process RuntimeError "DataLoader worker ... killed by signal: Segmentation fault"'),
 ('dl_kill', 'unknown', 'DataLoader worker killed by SIGKILL with no cause shown ("killed by signal: Killed")'),
 ('torchrun_gloo_valueerror', 'traceback', 'torchrun --nproc_per_node=2, gloo backend; rank 1 raises ValueError after 3 all_reduce steps, rank 0 blocked in all_reduce'),
 ('torchrun_gloo_shape', 'runtime_error', 'torchrun --nproc_per_node=2, gloo backend; rank 0 Linear shape mismatch after barrier'),
 ('chain_fnf', 'file_not_found', 'torch.load of a missing checkpoint wrapped in RuntimeError ... from e (direct cause chain)'),
 ('chain_div', 'div_zero', 'ZeroDivisionError in validation averaging; handler fallback raises KeyError (During handling ... chain)'),
 ('exec_127', 'exec_failure', 'bash script calling a misspelled interpreter (pythn) -> 127'),
 ('exec_126_noexec', 'exec_failure', 'bash launcher running ./train_noexec.sh without x bit -> Permission denied, 126'),
 ('exec_badinterp', 'exec_failure', 'bash launcher running a script with #!/usr/bin/python2.7 shebang (missing interpreter) -> 127'),
 ('assertion', 'assertion', 'python assert on sequence length vs block size'),
 ('zerodiv', 'div_zero', 'accuracy over an empty list -> ZeroDivisionError'),
 ('memerror_ulimit', 'ram_oom', 'numpy allocations under ulimit -v 1500000'),
 ('memerror_py', 'ram_oom', 'bytearray allocations under ulimit -v 1200000 -> MemoryError'),
 ('enospc_torchsave', 'disk_full', 'torch.save to /dev/full (ENOSPC)'),
 ('enospc_write', 'disk_full', 'file write to /dev/full (ENOSPC)'),
 ('timeout124', 'walltime', 'timeout 3 python3 long.py -> 124'),
 ('fnf', 'file_not_found', 'open() of a missing dataset index file'),
 ('missing_apex', 'missing_module', 'from apex import amp (apex not installed)'),
 ('shape_mismatch', 'runtime_error', 'Linear(784,10) on flattened 3x28x28 input'),
 ('anomaly_nan', 'nan_loss', 'torch.autograd.detect_anomaly with log of negative values -> NaN in backward'),
 ('nan_exit0', 'nan_loss', 'SGD lr=50 diverges to nan, loop continues and exits 0'),
 ('abort', 'native_abort', 'os.abort() with faulthandler enabled'),
 ('segv', 'segfault', 'ctypes.string_at(0) with faulthandler enabled'),
 ('meta_device', 'device_mismatch', 'Linear created under torch.device("meta") applied to a CPU tensor'),
 ('sigint_exit0', 'interrupted', 'training loop with SIGINT handler that exits 0; SIGINT sent after 3 s'),
 ('sigkill', 'unknown', 'training loop killed with SIGKILL after 2.5 s (no message)'),
 ('sigkill_bash', 'unknown', 'bash wrapper whose python child is killed with SIGKILL; bash reports Killed'),
 ('perm_setuid', 'permission', 'process drops to uid 65534 then torch.save into a root-owned 0700 directory'),
]

def captured_case(name, label, desc):
    p = os.path.join(HERE, 'captured', name + '.out')
    if not os.path.exists(p): return False
    raw = open(p, 'rb').read().decode('utf-8', 'replace')
    meta = json.load(open(os.path.join(HERE, 'captured', name + '.json')))
    rc = meta['rc']
    if name == 'sigkill_bash': rc = 128 + 9 if rc == 137 else rc
    # verify label sanity against real exit codes
    ck = Clock(); user = R.choice(USERS); proj = R.choice(PROJ)
    pre = ['# captured on the generator host (CPU only); launcher preamble below is generated', '$ cd /home/%s/%s' % (user, proj)]
    pre += env_dump(user, proj, 0)[:R.randint(5, 9)] + pip_freeze()[:R.randint(8, 20)]
    pre += ['$ python -m torch.utils.collect_env', 'Collecting environment information...', 'PyTorch version: 2.%d.%d+cpu' % (R.randint(1, 5), R.randint(0, 2)), 'Is debug build: False',
            'CUDA used to build PyTorch: None', 'ROCM used to build PyTorch: N/A', '', 'OS: Ubuntu 22.04.4 LTS (x86_64)', 'GCC version: (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0',
            'Clang version: Could not collect', 'CMake version: version 3.%d.%d' % (R.randint(22, 30), R.randint(0, 5)), 'Libc version: glibc-2.35', '',
            'Python version: 3.11.7 (main, Jan 29 2024, 16:03:57) [GCC 11.4.0] (64-bit runtime)', 'Is CUDA available: False', 'CUDA runtime version: No CUDA',
            'CUDA_MODULE_LOADING set to: N/A', 'GPU models and configuration: No CUDA', 'Nvidia driver version: No CUDA', 'cuDNN version: No CUDA',
            'HIP runtime version: N/A', 'MIOpen runtime version: N/A', 'Is XNNPACK available: True', '', 'CPU:', 'Architecture:                       x86_64',
            'CPU op-mode(s):                     32-bit, 64-bit', 'CPU(s):                             2', 'Thread(s) per core:                 %d' % R.choice([1, 2]), '']
    pre += ['%s - INFO - starting: %s' % (ck.pylog(), ' '.join(meta['cmd']))]
    body = raw.replace('/tmp/dev4_cap', '/home/%s/%s' % (user, proj))
    LOGS.append('\n'.join(pre) + '\n' + body + ('' if body.endswith('\n') else '\n'))
    RECS.append({'mode': label, 'source': 'captured', 'gpu': 'none', 'driver': 'none', 'true_exit_code': rc,
                 'provenance': 'captured on this machine (python3.11, torch 2.x CPU): ' + desc + '; cmd: ' + ' '.join(meta['cmd'])})
    return True

# ----------------------------------------------------------------- plan
PLAN = [
 (c_oom_hf, 2), (c_oom_ddp_rank, 1), (c_oom_jax, 1), (c_oom_keras, 1),
 (c_nccl_wd, 2), (c_nccl_remote, 1), (c_nccl_horovod, 1), (c_nccl_store, 1), (c_nccl_gloo_timeout, 1),
 (c_illegal, 2), (c_dsa, 1), (c_cublas, 1), (c_cudnn, 1), (c_cuda_wrapped, 1),
 (c_ram_np, 1), (c_ram_cpu_alloc, 1),
 (c_segv_native, 1), (c_segv_rank, 1), (c_segv_slurm, 1),
 (c_fnf_hf, 1), (c_fnf_d2, 1), (c_fnf_shell, 1),
 (c_perm_ckpt, 1), (c_perm_rofs, 1), (c_perm_chain, 1),
 (c_mm_so, 1), (c_mm_flash, 1), (c_mm_horovod, 1),
 (c_div_lr, 1), (c_div_fairseq, 1),
 (c_dev_cuda_cpu, 2), (c_dev_meta, 1), (c_dev_mps, 1), (c_dev_xla, 1),
 (c_nan_exit0, 2), (c_nan_d2, 1), (c_nan_fairseq, 1),
 (c_oomk_slurm, 1), (c_oomk_dmesg, 1), (c_oomk_k8s, 1), (c_oomk_lsf, 1), (c_oomk_sge, 1), (c_oomk_torchrun, 1),
 (c_tb_type, 1), (c_tb_value_mm, 1), (c_tb_ray, 1),
 (c_assert_plain, 1), (c_assert_d2, 1), (c_assert_rank, 1),
 (c_rt_shape, 1), (c_rt_backward, 1), (c_rt_statedict, 1),
 (c_xid79, 2), (c_ecc, 1), (c_xid48_dmesg, 1), (c_gpu_lost, 1),
 (c_disk_ckpt, 1), (c_disk_abort, 1), (c_disk_quota, 1),
 (c_wt_slurm, 2), (c_wt_lsf, 1), (c_wt_sge, 1), (c_wt_pbs, 1),
 (c_pre_slurm, 1), (c_pre_lightning_requeue, 1), (c_pre_aws, 1), (c_pre_gce, 1), (c_pre_azure, 1), (c_pre_lsf, 1),
 (c_int_scancel, 1), (c_int_ctrlc, 1), (c_int_hf_sigterm, 1), (c_int_bkill, 1),
 (c_abort_check, 1), (c_abort_terminate, 1), (c_abort_glibc, 1),
 (c_exec_slurm, 1), (c_exec_format, 1),
 (c_unknown_exit1, 1),
 (s_generic, 21),
]

def main():
    jobs = []
    for fn, n in PLAN: jobs += [fn] * n
    jobs += [('cap', c) for c in CAPTURED]
    R.shuffle(jobs)
    for j in jobs:
        if isinstance(j, tuple): captured_case(*j[1])
        else: j()
    logdir = os.path.join(OUTDIR, 'logs'); os.makedirs(logdir, exist_ok=True)
    for f in os.listdir(logdir):
        if f.endswith('.log'): os.remove(os.path.join(logdir, f))
    with open(os.path.join(OUTDIR, 'labels.jsonl'), 'w') as lf:
        for i, (rec, txt) in enumerate(zip(RECS, LOGS)):
            rid = '%s-%04d' % (SET, i + 1)
            with open(os.path.join(logdir, rid + '.log'), 'w', encoding='utf-8', newline='') as f: f.write(txt)
            out = {'id': rid, 'mode': rec['mode'], 'source': rec['source'], 'log_path': 'logs/%s.log' % rid, 'gpu': rec['gpu'], 'driver': rec['driver'],
                   'true_exit_code': rec['true_exit_code'], 'provenance': rec['provenance']}
            lf.write(json.dumps(out, ensure_ascii=False) + '\n')
    print('wrote %d logs' % len(RECS))

if __name__ == '__main__':
    main()

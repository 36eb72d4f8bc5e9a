"""Representative runs for the golden, PNG and browser tests of the message (pure values), and
the RunResult, artifact and delivery helpers the message, delivery and outbox tests share."""
import os
import time

from _load import load_gpualert

N = load_gpualert()
T0 = 1764748800.0  # 2025-12-03 08:00:00 UTC


def _metrics(text, **extra):
    m = N.metrics_from_chunks([text])
    m.update(extra)
    return m


def _gpu(minutes, util=lambda i: 85.0, mem=lambda i: 70.0):
    series = [[i * 60.0, util(i), mem(i)] for i in range(minutes)]
    return {"samples": minutes, "duration_s": (minutes - 1) * 60.0, "idle": False, "notes": [],
            "gpus": [{"index": 0, "name": "NVIDIA H100 80GB HBM3", "mem_used_peak_mib": 57100.0,
                      "mem_total_mib": 81559.0, "util_mean_pct": 84.8, "util_max_pct": 100.0,
                      "temp_max_c": 71.0, "ecc_delta": 0}], "series": series}


def _result(**kw):
    base = dict(status="FAILED", name="train.py", argv=["torchrun", "--nproc-per-node", "4", "train.py"],
                host="gpu041", cwd="/home/ana/resnet", start=T0, end=T0 + 2 * 3600 + 13 * 60,
                exit_code=1, exit_status=1, signal_name=None,
                classification=N.Classification(None, None, None, None, None, None),
                log_path="/home/ana/.local/state/gpualert/runs/r1/output.log",
                run_dir="/home/ana/.local/state/gpualert/runs/r1", tail=[], rusage={},
                scheduler={}, notes=[], gpu={}, metrics={})
    base.update(kw)
    return N.RunResult(**base)


def failure_with_ranks():
    log = "".join("[default0]:epoch %d step %d loss=%.4f lr=0.0003\n" % (s // 500, s, 6.9 / (1 + s / 800.0))
                  for s in range(0, 9001, 50))
    tail = ["[default0]:epoch 17 step 9000 loss=0.5080 lr=0.0003",
            "[default3]:Traceback (most recent call last):",
            '[default3]:  File "/home/ana/resnet/train.py", line 212, in <module>',
            "[default3]:    main()",
            '[default3]:  File "/home/ana/resnet/train.py", line 160, in train_step',
            "[default3]:    logits = model(images)",
            "[default3]:             ^^^^^^^^^^^^^",
            '[default3]:  File "/opt/venv/lib/python3.11/site-packages/torch/nn/modules/module.py", line 1736, in _wrapped_call_impl',
            "[default3]:    return self._call_impl(*args, **kwargs)",
            "[default3]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.11 GiB of which 1.2 GiB is free.",
            "torch.distributed.elastic.multiprocessing.errors.ChildFailedError:",
            "Root Cause (first observed failure):",
            "[0]:",
            "  time      : 2025-12-03_10:13:00",
            "  host      : gpu041",
            "  rank      : 3 (local_rank: 3)",
            "  exitcode  : 1 (pid: 51234)"]
    c = N.Classification("cuda_oom", "cuda_oom", "tried to allocate 2.00 GiB", 18234, tail[9][11:],
                         "Reduce the batch size, or use gradient accumulation / checkpointing.")
    ckpt = {"path": "/home/ana/resnet/checkpoints/step_8500.pt", "mtime": T0 + 3600 + 55 * 60,
            "size": 98 * 1024 * 1024}
    return _result(classification=c, tail=tail, metrics=_metrics(log, checkpoint=ckpt),
                   scheduler={"kind": "slurm", "job_id": "4242", "label": "4242", "job_name": "resnet",
                              "partition": "gpu", "submit_dir": "/home/ana/resnet",
                              "end_time": T0 + 4 * 3600},
                   gpu=_gpu(133, util=lambda i: 90.0 - (i % 7), mem=lambda i: 60 + i * 0.25),
                   rusage={"maxrss_kib": 12 * 1024 * 1024, "utime_s": 7000.5, "stime_s": 12.2})


def success_with_metrics():
    lines = []
    for n in range(1, 61):
        lines.append(str({"loss": round(2.2 * 0.96 ** n + 0.3, 4), "grad_norm": 1.5,
                          "learning_rate": 5e-05, "epoch": round(n * 0.05, 2)}))
        if n % 20 == 0:
            lines.append(str({"eval_loss": round(2.0 * 0.97 ** n + 0.35, 4),
                              "eval_accuracy": round(0.5 + n / 150.0, 4), "epoch": n * 0.05}))
    lines.append(" 100%|##########| 1200/1200 [41:02<00:00,  2.31it/s]")
    ckpt = {"path": "/home/ana/bert/out/checkpoint-1200", "mtime": T0 + 41 * 60, "size": None}
    return _result(status="SUCCESS", name="finetune.py", argv=["python", "finetune.py"],
                   cwd="/home/ana/bert", end=T0 + 41 * 60 + 10, exit_code=0, exit_status=0,
                   metrics=_metrics("\n".join(lines) + "\n", checkpoint=ckpt),
                   gpu=_gpu(41), tail=lines[-3:])


def timeout_after_warning():
    log = "".join("Epoch %d/%d\n1563/1563 [==============================] - 95s 61ms/step - "
                  "loss: %.4f - accuracy: %.4f - val_loss: %.4f - val_accuracy: %.4f\n" % (
                      e, 100, 1.8 / e ** 0.5, 0.95 - 0.5 / e, 1.9 / e ** 0.5, 0.93 - 0.5 / e)
                  for e in range(1, 76))
    c = N.Classification("walltime", "walltime", None, None, "Slurm state TIMEOUT",
                         "Ask for more time (--time), or resume from the last checkpoint.")
    return _result(status="TIMEOUT", name="keras_fit.py", argv=["python", "keras_fit.py"],
                   end=T0 + 12 * 3600, exit_code=-15, exit_status=143, signal_name="SIGTERM",
                   classification=c, metrics=_metrics(log),
                   scheduler={"kind": "slurm", "job_id": "4300", "array_job_id": "4299",
                              "array_task_id": "7", "label": "4299_7", "end_time": T0 + 12 * 3600},
                   notes=["scheduler: Slurm state TIMEOUT"],
                   tail=log.splitlines()[-4:])


REPRESENTATIVE = {"failure_with_ranks": failure_with_ranks, "success_with_metrics": success_with_metrics,
                  "timeout_after_warning": timeout_after_warning}


def array_summary():
    entries = []
    for task in range(12):
        failed = task in (3, 7, 11)
        entries.append({"task": str(task), "status": "FAILED" if failed else "SUCCESS",
                        "class": ("nan_loss" if task == 11 else "cuda_runtime") if failed else None,
                        "exit": 1 if failed else 0, "host": "gpu0%02d" % (task % 4),
                        "duration_s": 600.0 + 30 * task, "metric": "loss %.3f" % (0.3 + task / 100.0),
                        "log": "/home/ana/sweep/logs/task%d/output.log" % task})
    summary = N.summarize_array("4301", entries, 13)
    summary["missing"] = [("12", "NODE_FAIL")]
    return N.make_result("FAILED", "array 4301", host="gpu003", array=summary,
                         classification=N.make_verdict("cuda_runtime", N.array_subject(summary)),
                         tail=N.summary_lines(summary),
                         scheduler={"kind": "slurm", "job_id": "4312", "array_job_id": "4301",
                                    "array_task_id": "11", "label": "4301"})


REPRESENTATIVE["array_summary"] = array_summary


# ---- one RunResult, artifacts and deliver() for the message, delivery and outbox tests ----

HOUR = 3600.0


def make_result(tmp_path, **kw):
    run_dir = tmp_path / "run"
    run_dir.mkdir(exist_ok=True)
    log = run_dir / "job.log"
    if not log.exists():
        log.write_text("step 1\nstep 2\nRuntimeError: CUDA out of memory.\n")
    base = dict(
        status="FAILED", name="train.py", argv=["python", "train.py", "--note", "a b"],
        host="gpu041", cwd=str(tmp_path), start=1000.0, end=1000.0 + 2 * HOUR + 13 * 60,
        exit_code=1, exit_status=1, signal_name=None,
        classification=N.Classification("cuda_oom", "cuda_oom", "tried to allocate 2.00 GiB",
                                         1234, "RuntimeError: CUDA out of memory.",
                                         "Reduce the batch size."),
        log_path=str(log), run_dir=str(run_dir),
        tail=["step 1", "step 2", "RuntimeError: CUDA out of memory."],
        rusage={"maxrss_kib": 12 * 1024 * 1024, "utime_s": 7000.5, "stime_s": 12.25},
        scheduler={}, notes=[], gpu={})
    base.update(kw)
    return N.RunResult(**base)


def outbox_files(cfg):
    d = cfg["outbox"]
    return sorted(n for n in os.listdir(d) if n.endswith(".eml")) if os.path.isdir(d) else []


# ---------------------------------------------------------------- artifacts

def _touch(path, size=10, mtime=None):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"x" * size)
    if mtime is not None:
        os.utime(str(path), (mtime, mtime))
    return str(path)


# ---------------------------------------------------------------- delivery: real servers

def _deliver(tmp_path, cfg, **result_kw):
    msg, _ = N.build_message(make_result(tmp_path, **result_kw), cfg)
    t0 = time.monotonic()
    out = N.deliver(msg, cfg)
    return out, time.monotonic() - t0

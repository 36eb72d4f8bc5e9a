"""Facts about the run read from its log and the machine: metrics in the shapes PyTorch, HF
Trainer, Lightning, Keras and JAX/flax loops print, progress and speed, the checkpoint to resume
from (the run's own), peak memory (the job's own cgroup, a launcher's workers), GPU samples, and
the time-limit warning's forecast."""
import email
import email.policy
import json
import math
import os
import re
import shutil
import signal
import subprocess
import textwrap
import time
import unittest

import pytest

from _load import load_gpualert
from wrapper_helpers import (FIRST_SCREEN, FakeRun, PY, SCRIPT, _alive, base, child, first_screen,
                             isolated_env, only, outbox_messages, plain_text, row, run_gpualert,
                             run_in, run_json, run_json_path, wait_for, write_executable)


N = load_gpualert()


def metrics_of(text, wanted=None):
    return N.metrics_from_chunks([text], wanted)


def pytorch_mnist_log(epochs=3, batches=10):
    # pytorch/examples mnist/main.py: the train() and test() print formats
    lines = []
    for epoch in range(1, epochs + 1):
        for b in range(batches):
            loss = 2.3 / (epoch * batches + b)
            lines.append('Train Epoch: {} [{}/{} ({:.0f}%)]\tLoss: {:.6f}'.format(
                epoch, b * 640, 60000, 100.0 * b / batches, loss))
        lines.append('\nTest set: Average loss: {:.4f}, Accuracy: {}/{} ({:.0f}%)\n'.format(
            0.1 / epoch, 9000 + epoch, 10000, 90.0 + epoch))
    return "\n".join(lines) + "\n"


def hf_trainer_log(steps=6):
    # transformers ProgressCallback.on_log: str(dict) written under the tqdm bar
    lines = []
    for n in range(1, steps + 1):
        lines.append(" %d%%|##        | %d/%d [00:%02d<00:10,  4.98it/s]" % (n * 10, n * 50, 312, n))
        lines.append(str({"loss": round(2.0 - 0.25 * n, 4), "grad_norm": 3.5,
                          "learning_rate": 5e-05 * (1 - n / 10.0), "epoch": round(n * 0.16, 2)}))
    lines.append(str({"eval_loss": 0.93, "eval_accuracy": 0.61, "eval_runtime": 3.2,
                      "eval_samples_per_second": 312.5, "epoch": 1.0}))
    lines.append(str({"train_runtime": 62.5, "train_samples_per_second": 40.0,
                      "train_loss": 1.23, "epoch": 1.0}))
    return "\n".join(lines) + "\n"


def lightning_log():
    # Lightning's TQDMProgressBar: "Epoch N: pct|bar| n/total [elapsed<left, rate, postfix]",
    # redrawn with \r; postfix from self.log(..., prog_bar=True) and v_num
    out = []
    for epoch in range(2):
        for n in (100, 200, 300, 400):
            loss = 3.9 - epoch - n / 400.0
            out.append("\rEpoch %d:  %d%%|####      | %d/400 [00:%02d<00:07, 44.5it/s, v_num=0, "
                       "train_loss=%.3f]" % (epoch, n // 4, n, n // 40, loss))
        out.append("\rEpoch %d: 100%%|##########| 400/400 [00:10<00:00, 40.1it/s, v_num=0, "
                   "train_loss=%.3f, val_loss=%.3f, val_acc=%.3f]\n" % (
                       epoch, 2.9 - epoch, 3.0 - epoch, 0.5 + 0.2 * epoch))
    return "".join(out)


def keras_log(epochs=3):
    # Keras 3 ProgBar at verbose=1 (a non-tty gets the final line of each epoch)
    out = []
    for e in range(1, epochs + 1):
        out.append("Epoch %d/%d" % (e, epochs))
        out.append("1875/1875 \u2501\u2501\u2501\u2501\u2501\u2501\u2501\u2501 3s 1ms/step - "
                   "accuracy: %.4f - loss: %.4f - val_accuracy: %.4f - val_loss: %.4f" % (
                       0.85 + 0.03 * e, 0.5 / e, 0.86 + 0.03 * e, 0.45 / e))
    return "\n".join(out) + "\n"


def flax_log(epochs=4):
    # flax examples/mnist train.py: logging.info('epoch:% 3d, train_loss: %.4f, ...')
    return "".join(
        "I1203 08:12:%02d.123456 140234 train.py:148] epoch:% 3d, train_loss: %.4f, "
        "train_accuracy: %.2f, test_loss: %.4f, test_accuracy: %.2f\n" % (
            e, e, 0.3 / e, 90 + e, 0.2 / e, 91 + e) for e in range(1, epochs + 1))


def jsonl_log(steps=5):
    return "".join(json.dumps({"step": s * 100, "train/loss": 1.0 / s, "lr": 1e-3}) + "\n"
                   for s in range(1, steps + 1))


class TestShapes(unittest.TestCase):
    def test_pytorch_mnist(self):
        m = metrics_of(pytorch_mnist_log())
        self.assertEqual(m["main"][0], "loss")
        loss = m["series"]["loss"]
        self.assertEqual(loss["x"], "epoch")
        self.assertEqual(loss["count"], 30)
        self.assertAlmostEqual(loss["first"]["value"], 0.23, places=5)
        self.assertAlmostEqual(loss["best"]["value"], 2.3 / 39, places=5)
        self.assertIn("average_loss", m["main"])  # the test-set line
        self.assertGreater(loss["last"]["x"], loss["first"]["x"])  # epoch + fraction of batches

    def test_hf_trainer(self):
        m = metrics_of(hf_trainer_log())
        loss = m["series"]["loss"]
        self.assertEqual(loss["x"], "epoch")
        self.assertEqual([p[0] for p in loss["points"]], [0.16, 0.32, 0.48, 0.64, 0.8, 0.96])
        self.assertEqual(loss["last"]["value"], 0.5)
        self.assertEqual(loss["best"], {"x": 0.96, "value": 0.5})
        self.assertIn("eval_loss", m["main"])
        self.assertIn("eval_accuracy", m["main"])
        self.assertNotIn("learning_rate", m["main"])
        # the Trainer's closing train_samples_per_second is the speed stated last; the
        # evaluation's eval_samples_per_second before it is not the training's
        self.assertEqual(m["throughput"], "40.0 samples/s")

    def test_lightning_postfix(self):
        m = metrics_of(lightning_log())
        self.assertEqual(m["main"][0], "train_loss")
        tl = m["series"]["train_loss"]
        self.assertEqual(tl["x"], "epoch")
        xs = [p[0] for p in tl["points"]]
        self.assertEqual(xs, sorted(xs))
        self.assertEqual(xs[0], 0.25)
        self.assertEqual(tl["last"]["value"], 1.9)
        self.assertEqual(m["series"]["val_acc"]["best"]["value"], 0.7)
        self.assertNotIn("v_num", m["series"])

    def test_keras(self):
        m = metrics_of(keras_log())
        self.assertEqual(m["main"], ["loss", "val_loss", "accuracy", "val_accuracy"])
        acc = m["series"]["accuracy"]
        self.assertEqual(acc["x"], "epoch")
        self.assertEqual([p[0] for p in acc["points"]], [1.0, 2.0, 3.0])
        self.assertEqual(acc["best"]["value"], 0.94)
        self.assertEqual(m["series"]["loss"]["best"], {"x": 3.0, "value": round(0.5 / 3, 4)})

    def test_flax_absl(self):
        m = metrics_of(flax_log())
        self.assertEqual(m["main"], ["train_loss", "test_loss", "train_accuracy", "test_accuracy"])
        self.assertEqual(m["series"]["test_accuracy"]["last"], {"x": 4, "value": 95})
        self.assertNotIn("train.py", m["others"])

    def test_json_lines_steps(self):
        m = metrics_of(jsonl_log())
        s = m["series"]["train/loss"]
        self.assertEqual(s["x"], "step")
        self.assertEqual(s["first"], {"x": 100, "value": 1})
        self.assertEqual(m["progress"]["step"], 500)
        self.assertEqual(m["others"].get("lr"), 0.001)

    def test_nanogpt_spaced_pairs(self):
        text = "".join("iter %d: loss %.4f, time 12.34ms, mfu 30.12%%\n" % (i, 4.0 - i / 1000.0)
                       for i in range(0, 500, 10))
        text += "step 500: train loss 2.1000, val loss 2.3000\n"
        m = metrics_of(text)
        self.assertEqual(m["series"]["loss"]["x"], "step")
        self.assertEqual(m["series"]["loss"]["last"], {"x": 490, "value": 3.51})
        self.assertEqual(m["series"]["val_loss"]["last"], {"x": 500, "value": 2.3})

    def test_nan_kept_as_last_not_best(self):
        text = "step=1 loss=2.0\nstep=2 loss=1.5\nstep=3 loss=nan\n"
        s = metrics_of(text)["series"]["loss"]
        self.assertEqual(s["last"]["value"], "nan")
        self.assertEqual(s["best"], {"x": 2, "value": 1.5})
        self.assertEqual(s["nonfinite"], 1)
        json.dumps(s, allow_nan=False)  # run.json stays strict JSON

    def test_noise_is_not_metrics(self):
        text = ("Namespace(batch_size=64, epochs=10, lr=0.01, seed=1)\n"
                "2026-12-03 08:12:34,123 INFO started at 12:30:45 pid=1234\n"
                "Downloading http://yann.lecun.com/exdb/mnist/train-images-idx3-ubyte.gz\n"
                "Traceback (most recent call last):\n  File \"train.py\", line 12, in <module>\n"
                "return_code: 1 loss_scale: 65536 loss_weight: 0.5\n")
        m = metrics_of(text)
        self.assertEqual(m["main"], [])
        self.assertEqual(m["records"], 0)

    def test_interleaved_ranks_keep_rank_zero(self):
        lines = []
        for step in range(1, 6):
            lines.append("[rank1]: step=%d loss=%.2f" % (step, 9.0))
            lines.append("[rank0]: step=%d loss=%.2f" % (step, 1.0 / step))
        lines.append("[rank0]:[W1203 08:00:00 ProcessGroupNCCL.cpp:1234] Warning: something")
        m = metrics_of("\n".join(lines))
        self.assertEqual(m["series"]["loss"]["count"], 5)
        self.assertEqual(m["series"]["loss"]["last"]["value"], 0.2)

    def test_srun_label_prefix(self):
        text = "".join("%d: epoch %d loss: %.4f\n" % (r, e, r + 1.0 / e)
                       for e in range(1, 4) for r in (1, 0))
        m = metrics_of(text)
        self.assertEqual(m["series"]["loss"]["last"]["value"], 0.3333)

    def test_wanted_metric(self):
        m = metrics_of(hf_trainer_log(), wanted=["grad_norm", "bleu"])
        self.assertEqual(m["main"], ["grad_norm"])
        self.assertEqual(m["notes"], ["--metric bleu: not found in the log"])
        self.assertIsNone(m["series"]["grad_norm"]["direction"])

    def test_gpualert_records_are_skipped(self):
        text = ("=== gpualert run started (gpualert 0.1.0) ===\ncommand: python t.py\npid: 99\n"
                "start: 2026-12-03T08:00:00\nepoch: 1 loss: 0.5\n"
                "=== gpualert command ended ===\nduration: 3s\nexit: 0\n")
        m = metrics_of(text)
        self.assertEqual(m["series"]["loss"]["count"], 1)
        self.assertNotIn("pid", m["others"])


#: (line as a library or loop prints it, the speed it states); each number belongs to the
#: unit or label written next to it, never to the metric beside it.
SPEED_LINES = (
    ("step 70 loss 0.3586 it/s 9.8", "9.8 it/s"),                         # a loop's label
    ("step 100 it/s: 9.8 loss=0.4", "9.8 it/s"),
    ("Epoch 0:  45%|####      | 180/400 [00:04<00:05, 44.5it/s, v_num=0, train_loss=0.3]",
     "44.5 it/s"),                                                         # Lightning/tqdm
    (" 30%|###       | 150/500 [00:30<01:10,  4.98s/it]", "4.98 s/it"),  # tqdm, slow steps
    ("  0%|          | 0/500 [00:00<?, ?it/s]", None),                    # tqdm before a rate
    ("| epoch   1 |   200/ 2983 batches | lr 20.00 | ms/batch 25.03 | loss  7.59 | ppl  1982.66",
     "25.03 ms/batch"),                                                    # word_language_model
    ("1875/1875 \u2501\u2501\u2501\u2501 3s 1ms/step - accuracy: 0.9 - loss: 0.3",
     "1 ms/step"),                                                         # Keras 3
    ("{'train_runtime': 62.5, 'train_samples_per_second': 40.0, 'train_loss': 1.23}",
     "40.0 samples/s"),                                                    # HF Trainer's end
    ("{'eval_loss': 0.93, 'eval_samples_per_second': 312.5, 'epoch': 1.0}", None),
    ("speed 9.8 it/s", "9.8 it/s"),
    ("throughput: 1234.5 tokens/s, loss 2.1", "1234.5 tokens/s"),
    ("samples/sec: 310.2 loss=0.3", "310.2 samples/sec"),
    ("step 5 | loss 0.3 | 12.5 samples/s | lr 3e-4", "12.5 samples/s"),
    ("tokens_per_sec=12345 loss=2", "12345 tokens/s"),
    ("loss 0.35 12.3it/s", "12.3 it/s"),
    ("0.5 it/s, loss 0.3", "0.5 it/s"),
    ("Downloading: 100%|###| 1.2MB/s", None),                              # not a training speed
    ("at 12:00:01 loss 0.3", None),
    ("copied 1.5bits/s", None),
)


class TestSpeedAndProgress(unittest.TestCase):
    def test_speed_is_the_number_bound_to_its_unit(self):
        for line, speed in SPEED_LINES:
            with self.subTest(line=line):
                self.assertEqual(N.parse_rate(line), speed)

    def test_a_line_of_many_units_stays_cheap(self):
        import time
        start = time.perf_counter()
        for line in ("it/s " * 800, "1 " * 2000 + "it/s", "saved " + " .x" * 1300):
            N.parse_rate(line)
            N.saved_checkpoint_paths(line)
        self.assertLess(time.perf_counter() - start, 0.5)  # was 0.12 s a line: quadratic

    def test_speed_is_not_the_loss(self):
        m = metrics_of("step 60 loss 0.41 it/s 9.6\nstep 70 loss 0.3586 it/s 9.8\n")
        self.assertEqual(m["throughput"], "9.8 it/s")
        self.assertEqual(m["series"]["loss"]["last"], {"x": 70, "value": 0.3586})

    def test_step_count_keeps_its_total(self):
        for text in ("Step 50/500 loss: 0.2\n", "step [50/500] loss=0.2\n",
                     "Iter: 50/500, loss 0.2\n", "global_step 50/500 | loss 0.2\n"):
            with self.subTest(text=text):
                m = metrics_of(text)
                self.assertEqual(m["progress"]["step"], 50)
                self.assertEqual(m["progress"]["step_total"], 500)
                self.assertEqual(N.progress_text(m), "step 50/500 (10%); loss 0.2")

    def test_epoch_count_keeps_its_total(self):
        m = metrics_of(keras_log(epochs=3))
        self.assertEqual(m["progress"]["epoch_total"], 3)
        self.assertTrue(N.progress_text(m).startswith("epoch 3/3;"))

    def test_no_total_no_fraction(self):
        m = metrics_of(jsonl_log())
        self.assertNotIn("step_total", m["progress"])
        self.assertTrue(N.progress_text(m).startswith("step 500;"))

    def test_a_batch_count_is_not_the_runs_progress(self):
        m = metrics_of(pytorch_mnist_log())  # "[640/60000 (1%)]" counts samples of an epoch
        self.assertNotIn("step_total", m["progress"])


class TestDownsample(unittest.TestCase):
    def test_bounded_and_keeps_extremes(self):
        pts = [(i, math.sin(i / 50.0)) for i in range(100000)]
        pts[61234] = (61234, -5.0)  # a spike survives
        out = N.downsample(pts, 300)
        self.assertLessEqual(len(out), 300)
        self.assertEqual(out[0], pts[0])
        self.assertEqual(out[-1], pts[-1])
        self.assertIn((61234, -5.0), out)
        self.assertEqual([p[0] for p in out], sorted(p[0] for p in out))

    def test_long_log_series_bounded(self):
        text = "".join("step=%d loss=%.5f\n" % (i, 1.0 / (i + 1)) for i in range(20000))
        s = metrics_of(text)["series"]["loss"]
        self.assertEqual(s["count"], 20000)
        self.assertLessEqual(len(s["points"]), N.METRIC_POINTS_MAX)


class TestSample(unittest.TestCase):
    def test_large_log_sampled_first_and_last_exact(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "output.log")
            with open(path, "w") as f:
                for i in range(300000):
                    f.write("step=%d loss=%.6f lr=0.001 some padding text to make it longer\n"
                            % (i, 10.0 / (i + 1)))
            size = os.path.getsize(path)
            m = N.extract_log_metrics(path)
        self.assertTrue(m["sampled"])
        self.assertEqual(m["log_bytes"], size)
        self.assertLess(m["sampled_bytes"], size / 5)
        s = m["series"]["loss"]
        self.assertEqual(s["first"], {"x": 0, "value": 10})
        self.assertEqual(s["last"]["x"], 299999)
        self.assertLessEqual(len(s["points"]), N.METRIC_POINTS_MAX)
        # the middle of the run is represented, not only head and tail
        xs = [p[0] for p in s["points"]]
        self.assertTrue(any(100000 < x < 200000 for x in xs))

    def test_no_metrics_gives_empty(self):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "output.log")
            with open(path, "w") as f:
                f.write("hello\nworld\n")
            self.assertEqual(N.extract_log_metrics(path), {})


class TestRunJson(unittest.TestCase):
    """The real wrapper: metrics from the child's output land in run.json."""

    def run_child(self, code, *extra):
        import pathlib
        import tempfile
        from wrapper_helpers import child, isolated_env, run_gpualert, run_json
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="gpualert-metrics-"))
        self.addCleanup(__import__("shutil").rmtree, str(tmp), True)
        args = ["--log-dir", str(tmp / "logs"), "--outbox", str(tmp / "outbox"), "--dry-run",
                "--quiet"] + list(extra) + ["--"] + child(code)
        proc = run_gpualert(tmp, args, env=isolated_env(tmp))
        return proc, run_json(tmp)

    def test_success_metrics_in_run_json(self):
        code = ("for s in range(1, 51): print('step=%d loss=%.3f acc=%.2f' % "
                "(s, 2.0 / s, 0.5 + s / 100.0))")
        proc, record = self.run_child(code)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        m = record["metrics"]
        self.assertEqual(m["main"], ["loss", "acc"])
        self.assertEqual(m["series"]["loss"]["last"], {"x": 50, "value": 0.04})
        self.assertEqual(m["series"]["acc"]["best"], {"x": 50, "value": 1.0})
        self.assertEqual(m["progress"]["step"], 50)
        self.assertFalse(m["sampled"])

    def test_metric_option_picks_the_series(self):
        code = "for s in range(1, 4): print('step=%d loss=%.1f grad_norm=%.1f' % (s, 1.0 / s, s))"
        proc, record = self.run_child(code, "--metric", "grad_norm", "--metric", "nope")
        self.assertEqual(record["metrics"]["main"], ["grad_norm"])
        self.assertEqual(record["metrics"]["notes"], ["--metric nope: not found in the log"])


# An HF-Trainer-shaped run: a dict per logging step, a checkpoint folder every 200 steps with
# the Trainer's own save line; the loss goes NaN at step 340 (epoch 1.7).
HF_NAN_RUN = (
    "import os, sys\n"
    "out = sys.argv[1]\n"
    "for step in range(20, 620, 20):\n"
    "    loss = 2.0 - step / 1000.0 if step < 340 else float('nan')\n"
    "    print({'loss': loss, 'grad_norm': 1.0, 'learning_rate': 1e-4, 'epoch': step / 200.0})\n"
    "    if step % 200 == 0:\n"
    "        d = os.path.join(out, 'checkpoint-%d' % step)\n"
    "        os.makedirs(d)\n"
    "        open(os.path.join(d, 'model.safetensors'), 'w').write('w')\n"
    "        print('Saving model checkpoint to %s' % d)\n"
    "raise SystemExit(1)\n")


def hf_nan(out):
    return HF_NAN_RUN.replace("sys.argv[1]", repr(str(out)))


class TestProgressAndSpeed(object):
    def test_step_count_and_speed_each_keep_their_own_number(self, tmp_path):
        code = ("print('Step 40/500 loss: 0.25 it/s 9.7')\n"
                "print('Step 50/500 loss: 0.2 it/s 9.8')\n"
                "raise SystemExit(1)\n")
        run_in(tmp_path, code)
        screen = first_screen(tmp_path)
        assert row(screen, "Progress").startswith("step 50/500 (10%)"), screen
        assert row(screen, "Speed").startswith("9.8 it/s"), screen

    def test_rank_0_states_the_speed(self, tmp_path):
        # attack 2, finding 6: the last rank to print a speed won
        for prefix in ("[rank%d]: ", "[1,%d]<stdout>: ", "%d: "):
            text = (prefix % 0 + "step 10 loss 0.5 4.2 it/s\n") + (prefix % 1 + "Speed: 0.5 it/s\n")
            assert N.metrics_from_chunks([text])["throughput"] == "4.2 it/s", prefix
        assert N.metrics_from_chunks(["[rank1]: Speed: 0.5 it/s\n"])["throughput"] == "0.5 it/s"
        run_in(tmp_path, "print('[rank0]: step 10 loss 0.5 4.2 it/s')\n"
                         "print('[rank1]: Speed: 0.5 it/s')\nraise SystemExit(1)\n")
        assert row(first_screen(tmp_path), "Speed").startswith("4.2 it/s")

    def test_a_tqdm_bar_keeps_its_count(self, tmp_path):
        # attack 2, minor: Progress ignored tqdm's N/M
        code = ("import sys\n"
                "for n in (100, 450):\n"
                "    sys.stderr.write('\\r %d%%|####  | %d/1000 [00:10<00:12, 44.5it/s, loss=0.52]' % (n // 10, n))\n"
                "sys.stderr.write('\\n')\n"
                "raise SystemExit(1)\n")
        run_in(tmp_path, code)
        screen = first_screen(tmp_path)
        assert row(screen, "Progress").startswith("step 450/1000 (45%)"), screen
        keras = N.metrics_from_chunks(["Epoch 3/10\n1875/1875 [====] loss: 0.5\n"])
        assert keras["progress"]["step"] is None  # an epoch's batch count is not the run's steps

    def test_a_bar_of_100000_updates_ends_at_its_last(self, tmp_path):
        """One line of 100,000 \\r updates, longer than the sampled tail: the tail's first
        \\r starts a line, not the \\n that ends the bar (Progress said step 95093)."""
        code = ("import sys\n"
                "w = sys.stderr.write\n"
                "print('epoch 1 loss 2.5', flush=True)\n"
                "for i in range(1, 100001):\n"
                "    w('\\r %3d%%|#####| %d/100000 [00:10<00:00, 9000.00it/s, loss=%.4f]'"
                " % (i // 1000, i, 1.0 / i ** 0.1))\n"
                "w('\\n')\n"
                "raise SystemExit(1)\n")
        run_in(tmp_path, code)
        screen = first_screen(tmp_path)
        assert row(screen, "Progress").startswith("step 100k/100k (100%)"), screen
        assert "loss 0.3162" in row(screen, "Progress"), screen  # 1 / 100000 ** 0.1
        progress = run_json(tmp_path)["metrics"]["progress"]
        assert (progress["step"], progress["step_total"]) == (100000, 100000)

    def test_the_loss_is_not_the_speed(self, tmp_path):
        run_in(tmp_path, "print('step 70 loss 0.3586 it/s 9.8')\nraise SystemExit(1)\n")
        screen = first_screen(tmp_path)
        assert row(screen, "Speed").startswith("9.8 it/s"), screen
        assert "0.3586" not in row(screen, "Speed")


class TestCheckpointAfterNan(object):
    def test_offers_the_last_checkpoint_before_the_first_nan(self, tmp_path):
        proc = run_in(tmp_path, hf_nan(tmp_path / "out"))
        assert proc.returncode == 1
        screen = first_screen(tmp_path)
        ckpt = row(screen, "Checkpoint")
        assert ckpt.startswith(str(tmp_path / "out" / "checkpoint-200") + ","), screen
        assert "the 2 written after the first non-finite loss (epoch 1.7) are not offered" in ckpt
        assert "checkpoint-600" not in screen and "checkpoint-400" not in screen
        assert run_json(tmp_path)["metrics"]["checkpoint"]["path"].endswith("checkpoint-200")

    def test_the_first_nan_of_any_rank_counts(self, tmp_path):
        # attack 2, finding 5: rank 1's finite losses undid rank 0's NaN
        code = ("import os\n"
                "os.makedirs('ckpt')\n"
                "for step in range(28, 36):\n"
                "    for rank, nan_at in ((0, 31), (1, 33)):\n"
                "        loss = 'nan' if step >= nan_at else 2.0 - step / 100.0\n"
                "        print('[rank%d]: step=%d loss=%s' % (rank, step, loss))\n"
                "    if step in (30, 32):\n"
                "        open('ckpt/step_%d.pt' % step, 'w').write('w')\n"
                "        print('[rank0]: saved ckpt/step_%d.pt' % step)\n"
                "raise SystemExit(1)\n")
        run_in(tmp_path, code)
        ckpt = row(first_screen(tmp_path), "Checkpoint")
        assert ckpt.startswith(str(tmp_path / "ckpt" / "step_30.pt")), ckpt
        assert "(step 31)" in ckpt, ckpt

    def test_a_rank_whose_loss_stays_finite_does_not_hide_another_ranks_nan(self):
        text = "".join("[rank0]: step=%d loss=%s\n[rank1]: step=%d loss=1.0\n"
                       % (s, "nan" if s >= 50 else 1.0, s) for s in range(10, 110, 10))
        text += "[rank0]: Saving model checkpoint to out/checkpoint-100\n"
        metrics = N.metrics_from_chunks([text])
        assert metrics["first_nonfinite"]["step"] == 50
        assert metrics["saved"][-1]["after_nonfinite"] is True

    def test_files_named_by_step_without_save_lines(self, tmp_path):
        code = ("import os\n"
                "os.makedirs('ckpt')\n"
                "for step in range(20, 620, 20):\n"
                "    loss = 2.0 - step / 1000.0 if step < 340 else float('nan')\n"
                "    print('step=%d loss=%s' % (step, loss))\n"
                "    if step % 200 == 0:\n"
                "        open('ckpt/step_%d.pt' % step, 'w').write('w')\n"
                "raise SystemExit(1)\n")
        run_in(tmp_path, code)
        ckpt = row(first_screen(tmp_path), "Checkpoint")
        assert ckpt.startswith(str(tmp_path / "ckpt" / "step_200.pt")), ckpt
        assert "(step 340)" in ckpt

    def test_none_before_the_nan_says_so(self, tmp_path):
        code = ("import os\n"
                "print('step=1 loss=nan')\n"
                "os.makedirs('out/checkpoint-2')\n"
                "print('Saving model checkpoint to out/checkpoint-2')\n"
                "raise SystemExit(1)\n")
        run_in(tmp_path, code)
        ckpt = row(first_screen(tmp_path), "Checkpoint")
        assert ckpt.startswith("none written before the first non-finite loss (step 1)"), ckpt

    def test_the_picture_runs_to_the_end_and_marks_the_nan(self):
        text = "".join("step=%d loss=%s\n" % (s, 2.0 - s / 1000.0 if s < 340 else "nan")
                       for s in range(20, 620, 20))
        metrics = N.metrics_from_chunks([text])
        png, layout = N.render_plot(metrics, None)
        box = layout[0]
        assert box["xmax"] == 600  # the last step reported, not the last finite one (320)
        from test_message_render import decode_png
        width, height, rows = decode_png(png)
        shade = N.PLOT_PALETTE[N._SHADE]
        nan_px = box["to_px"](340, box["ymin"])[0]
        mid = (box["y0"] + box["y1"]) // 2 + 5  # off the grid line
        assert rows[mid][nan_px + 10] == shade and rows[mid][box["x1"] - 2] == shade
        assert rows[mid][nan_px - 10] != shade
        assert "non-finite from step 340" in N.plot_alt_text(metrics, None)


class TestCheckpointFromTheRun(object):
    def test_a_checkpoint_the_log_saves_outside_the_working_directory(self, tmp_path):
        scratch = tmp_path / "scratch" / "run"
        code = ("import os\n"
                "d = %r\n"
                "os.makedirs(d)\n"
                "open(os.path.join(d, 'model.safetensors'), 'w').write('w')\n"
                "print('Saving model checkpoint to %%s' %% d)\n"
                "raise SystemExit(1)\n") % str(scratch / "checkpoint-600")
        run_in(tmp_path, code, cwd=tmp_path / "work")
        ckpt = row(first_screen(tmp_path), "Checkpoint")
        assert ckpt and ckpt.startswith(str(scratch / "checkpoint-600") + ","), ckpt

    def test_a_previous_jobs_checkpoint_is_not_offered(self, tmp_path):
        old = tmp_path / "out" / "checkpoint-600"
        os.makedirs(str(old))
        before = time.time() - 1.25  # written by the job before, just before this one started
        os.utime(str(old), (before, before))
        run_in(tmp_path, "print('step=1 loss=2.0')\nraise SystemExit(1)\n")
        assert row(first_screen(tmp_path), "Checkpoint") is None
        assert "checkpoint" not in run_json(tmp_path)["metrics"]

    def test_a_log_named_checkpoint_from_before_the_run_is_not_offered(self, tmp_path):
        old = tmp_path / "scratch" / "checkpoint-600"
        os.makedirs(str(old))
        before = time.time() - 3600
        os.utime(str(old), (before, before))
        run_in(tmp_path, "print('Saving model checkpoint to %s')\nraise SystemExit(1)\n" % old)
        assert row(first_screen(tmp_path), "Checkpoint") is None

    def test_two_runs_in_one_directory_each_offer_their_own_save(self, tmp_path):
        # attack 2, finding 1: array tasks sharing a working directory crossed checkpoints
        def task(me, other):
            return ("import os, time\n"
                    "other = 'ck-%s/checkpoint-6'\n"
                    "if %r == 'B':\n"
                    "    end = time.time() + 30\n"
                    "    while not os.path.exists('ck-A/checkpoint-6/w') and time.time() < end:\n"
                    "        time.sleep(0.05)\n"
                    "os.makedirs('ck-%s/checkpoint-6')\n"
                    "open('ck-%s/checkpoint-6/w', 'w').write('w')\n"
                    "print('Saving model checkpoint to ck-%s/checkpoint-6', flush=True)\n"
                    "end = time.time() + 30\n"
                    "while not os.path.exists(other + '/w') and time.time() < end:\n"
                    "    time.sleep(0.05)\n"
                    "raise SystemExit(1)\n") % (other, me, me, me, me)
        procs = {}
        for me, other in (("A", "B"), ("B", "A")):
            folder = tmp_path / me
            procs[me] = subprocess.Popen([PY, SCRIPT] + base(folder) + ["--"] + child(task(me, other)),
                                         env=isolated_env(folder), cwd=str(tmp_path),
                                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        for me in procs:
            procs[me].communicate(timeout=60)
        for me in procs:
            path = run_json(tmp_path / me)["metrics"]["checkpoint"]["path"]
            assert path == str(tmp_path / ("ck-%s" % me) / "checkpoint-6"), (me, path)

    def test_a_named_save_beats_a_scanned_file(self):
        scanned = {"path": "/w/ck-B/checkpoint-6", "mtime": 20.0}
        named = {"path": "/w/ck-A/checkpoint-6", "mtime": 10.0, "named": True}
        assert N.choose_checkpoint([scanned, named], {})["path"] == "/w/ck-A/checkpoint-6"
        assert N.choose_checkpoint([scanned], {})["path"] == "/w/ck-B/checkpoint-6"

    def test_save_lines_between_the_sampled_blocks_count(self, tmp_path):
        # attack 2, finding 7: a big log's save lines fell between the sampled blocks
        scratch = tmp_path / "scratch"
        code = ("import os, sys\n"
                "filler = ('step=1 loss=2.0 ' + 'x' * 90 + '\\n') * 10000\n"
                "for n in range(1, 9):\n"
                "    sys.stdout.write(filler)\n"
                "    d = os.path.join(%r, 'checkpoint-%%d' %% (n * 100))\n"
                "    os.makedirs(d)\n"
                "    print('Saving model checkpoint to %%s' %% d)\n"
                "sys.stdout.write(filler)\n"
                "print('RuntimeError: CUDA error: an illegal memory access was encountered')\n"
                "raise SystemExit(1)\n") % str(scratch)
        run_in(tmp_path, code, cwd=tmp_path / "work")
        log = only(str(tmp_path / "logs" / "*" / "output.log"))
        chunks, _ = N.read_log_sample(log)
        assert len(chunks) > 1 and "checkpoint-800" not in "".join(chunks)  # the sample misses it
        saved = [s["path"] for s in N.extract_log_metrics(log)["saved"]]
        assert saved == [str(scratch / ("checkpoint-%d" % (n * 100))) for n in range(1, 9)], saved
        ckpt = row(first_screen(tmp_path), "Checkpoint")
        assert ckpt and ckpt.startswith(str(scratch / "checkpoint-800") + ","), ckpt

    def test_paths_with_a_space_are_named(self):
        # attack 2, finding 8: a quoted Lightning path, an HF path with a space
        assert "/x/my runs/v0/epoch=1-step=200.ckpt" in N.saved_checkpoint_paths(
            "Epoch 1, global step 200: 'val_loss' reached 0.5, saving model to "
            "'/x/my runs/v0/epoch=1-step=200.ckpt' as top 1")
        assert "/x/my runs/checkpoint-6" in N.saved_checkpoint_paths(
            "Saving model checkpoint to /x/my runs/checkpoint-6")

    def test_a_future_dated_old_checkpoint_loses_to_the_logs_save(self, tmp_path):
        # attack 2, finding 8: a previous job's checkpoint-5 dated in the future (clock skew)
        old = tmp_path / "out" / "checkpoint-5"
        os.makedirs(str(old))
        future = time.time() + 3600
        os.utime(str(old), (future, future))
        run_in(tmp_path, "import os\nos.makedirs('out/checkpoint-10')\n"
                         "print('Saving model checkpoint to out/checkpoint-10')\nraise SystemExit(1)\n")
        ckpt = row(first_screen(tmp_path), "Checkpoint")
        assert ckpt.startswith(str(tmp_path / "out" / "checkpoint-10") + ","), ckpt

    def test_a_lightning_save_with_a_space_is_offered(self, tmp_path):
        where = tmp_path / "my runs" / "v0"
        run_in(tmp_path, "import os\nos.makedirs(%r)\nopen(%r, 'w').write('w')\n"
                         "print(\"saving model to '%s' as top 1\")\nraise SystemExit(1)\n"
                         % (str(where), str(where / "epoch=1-step=200.ckpt"), where / "epoch=1-step=200.ckpt"),
               cwd=tmp_path / "work")  # outside the working directory: only the save line names it
        ckpt = row(first_screen(tmp_path), "Checkpoint")
        assert ckpt and ckpt.startswith(str(where / "epoch=1-step=200.ckpt") + " "), ckpt

    def test_a_save_stamped_by_the_coarse_file_clock_just_before_the_signal_is_its_answer(self):
        """CI (load): step_24.pt, saved at once in answer to SIGUSR1, carried an mtime a few ms
        before the signal's time.time(), as the kernel stamps files from its coarse clock, so
        the answer was taken to be the later routine save, step_80.pt."""
        N = load_gpualert()
        signals = [("SIGUSR1", 1000.0, "kill")]
        found = [{"path": "/w/step_24.pt", "mtime": 999.996}, {"path": "/w/step_80.pt", "mtime": 1001.1},
                 {"path": "/w/step_10.pt", "mtime": 990.0}]
        assert N.choose_checkpoint(found, {}, signals)["answer"]["path"] == "/w/step_24.pt"

    def test_the_checkpoint_written_in_answer_to_sigusr1_is_named(self, tmp_path):
        code = ("import signal, time\n"
                "def save(s, f):\n"
                "    open('step_24.pt', 'w').write('w')\n"
                "    print('saved step_24.pt', flush=True)\n"
                "signal.signal(signal.SIGUSR1, save)\n"
                "print('ready', flush=True)\n"
                "end = time.time() + 20\n"
                "import os\n"
                "while time.time() < end and not os.path.exists('step_24.pt'):\n"
                "    time.sleep(0.05)\n"
                "time.sleep(1.1)\n"  # the routine save comes later, by the clock's second too
                "open('step_80.pt', 'w').write('w')\n"
                "print('saved step_80.pt', flush=True)\n"
                "raise SystemExit(3)\n")
        proc = subprocess.Popen([PY, SCRIPT] + base(tmp_path) + ["--"] + child(code),
                                env=isolated_env(tmp_path), cwd=str(tmp_path),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        while proc.stdout.readline() not in (b"ready\n", b""):
            pass
        proc.send_signal(signal.SIGUSR1)
        proc.communicate(timeout=60)
        assert proc.returncode == 3
        wait_for(lambda: outbox_messages(tmp_path), 10, 0.1, "the message")
        text = plain_text(tmp_path)
        assert "was passed on to the job; it then wrote %s" % (tmp_path / "step_24.pt") in text, text
        assert row(text, "Checkpoint").startswith(str(tmp_path / "step_80.pt"))  # the newest to resume
        record = run_json(tmp_path)["metrics"]["checkpoint"]
        assert record["answer"]["path"] == str(tmp_path / "step_24.pt")


class TestJobsOwnMemory(object):
    def details(self, tmp_path):
        text = plain_text(tmp_path)
        return text[text.index("Details:"):]

    def test_bin_true_is_not_given_the_wrappers_peak(self, tmp_path):
        subprocess.run([PY, SCRIPT] + base(tmp_path) + ["--notify", "always", "--", "/bin/true"],
                       env=isolated_env(tmp_path), cwd=str(tmp_path), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
        usage = run_json_rusage(tmp_path)
        details = self.details(tmp_path)
        peak = row(details, "Peak RSS")
        assert peak.startswith("not measured: below the wrapper's own"), details
        assert usage["maxrss_kib"] <= usage["fork_rss_kib"] * 1.02 + 512  # what the kernel said
        assert len([l for l in details.splitlines() if l.strip().startswith("CPU time")]) == 1

    def test_a_10_mib_job_gets_its_own_peak(self, tmp_path):
        code = "import time\nx = bytearray(10 << 20)\ntime.sleep(3)\n"
        subprocess.run([PY, SCRIPT] + base(tmp_path) + ["--notify", "always", "--"] + child(code),
                       env=isolated_env(tmp_path), cwd=str(tmp_path), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
        usage = run_json_rusage(tmp_path)
        details = self.details(tmp_path)
        fork_mib = usage["fork_rss_kib"] / 1024.0
        assert usage["maxrss_kib"] <= usage["fork_rss_kib"] * 1.02 + 512  # the kernel's: the fork's
        for line in details.splitlines():
            if "Peak" in line and "MiB" in line and "wrapper's own" not in line:
                mib = float(line.split("MiB")[0].split()[-1])
                assert mib < fork_mib * 0.9, (line, fork_mib)  # the job's ~20 MiB, not ~45
        assert row(details, "Peak memory, process tree"), details
        assert len([l for l in details.splitlines() if l.strip().startswith("CPU time")]) == 1

    def test_one_cpu_line_and_the_launchers_figures_are_its_own(self):
        rows = dict(N._resource_rows({"maxrss_kib": 26 << 10, "fork_rss_kib": 40 << 10,
                                      "utime_s": 0.01, "launcher": "srun", "tree_samples": 3,
                                      "tree_peak_rss_kib": 5 << 20, "tree_cpu_s": 3600}))
        assert [k for k in rows if "CPU" in k] == ["CPU time, process tree (srun's own)"]
        assert "Peak RSS" not in rows and "Peak RSS (srun's own)" not in rows
        rows = dict(N._resource_rows({"maxrss_kib": 12 << 20, "fork_rss_kib": 40 << 10,
                                      "utime_s": 5, "tree_samples": 3, "tree_cpu_s": 4,
                                      "tree_peak_rss_kib": 11 << 20}))
        assert rows["Peak RSS"] == "12.0 GiB (largest process)"
        assert [k for k in rows if "CPU" in k] == ["CPU time"]


def run_json_rusage(tmp):
    import json
    with open(run_json_path(tmp)) as handle:
        record = json.load(handle)
    return record["rusage"]


def test_a_run_that_recovered_from_a_nan_keeps_its_newest_checkpoint():
    text = ("step=100 loss=2.0\nstep=200 loss=nan\nstep=300 loss=1.5\n"
            "Saving model checkpoint to out/checkpoint-300\nstep=400 loss=1.4\n")
    metrics = N.metrics_from_chunks([text])
    assert "first_nonfinite" not in metrics
    assert metrics["saved"] == [{"path": "out/checkpoint-300", "after_nonfinite": False}]


class TestTimeLimitWarning(object):
    def test_the_warning_says_whether_the_run_will_finish(self, tmp_path):
        code = ("import signal, sys, time\n"
                "signal.signal(signal.SIGUSR1, lambda s, f: None)\n"
                "open('step_4000.pt', 'w').write('w')\n"
                "print('Step 4000/5000 loss: 0.3 it/s 9.8', flush=True)\n"
                "print('ready', flush=True)\n"
                "time.sleep(3)\n"
                "sys.exit(0)\n")
        env = isolated_env(tmp_path, SLURM_JOB_ID="4242", SLURM_JOB_NAME="train",
                           SLURM_JOB_END_TIME=str(int(time.time()) + 60))
        proc = subprocess.Popen([PY, SCRIPT] + base(tmp_path) + ["--"] + child(code), env=env,
                                cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        while proc.stdout.readline() not in (b"ready\n", b""):
            pass
        proc.send_signal(signal.SIGUSR1)
        proc.communicate(timeout=60)
        texts = []
        for path in outbox_messages(tmp_path):
            with open(path, "rb") as handle:
                msg = email.message_from_binary_file(handle, policy=email.policy.default)
            if msg["X-Gpualert-Status"] == "WARNING":
                texts.append(msg.get_body(("plain",)).get_content())
        assert len(texts) == 1, outbox_messages(tmp_path)
        screen = "\n".join(texts[0].splitlines()[:FIRST_SCREEN])
        assert row(screen, "Progress").startswith("step 4000/5000 (80%)"), screen
        finish = row(screen, "Finish")
        assert finish.startswith("it will NOT finish before the limit: 1000 steps to go at 9.8 it/s "
                                 "need about 1m42s"), finish
        assert re.search(r"; the newest checkpoint was written \d+s ago$", finish), finish


G = load_gpualert()

# ---- honest resource figures ----

WORKERS = ("import subprocess, sys\n"
           "work = 'b = bytearray(150 << 20); print(\"worker up\", flush=True); import time; time.sleep(3)'\n"
           "procs = [subprocess.Popen([sys.executable, '-c', work]) for _ in range(3)]\n"
           "for p in procs: p.wait()\n")


def test_a_launchers_workers_are_summed_and_said_to_be_sampled(tmp_path):
    own = G.own_cgroup_kind(G.read_cgroup_memory().get("path"), os.environ)
    if own:
        pytest.skip("this process has a cgroup of its own (%s): its figures are used" % own)
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(WORKERS))
    assert proc.returncode == 0
    usage = run_json(tmp_path)["rusage"]
    assert usage["maxrss_kib"] < 300 << 10  # the launcher's rusage: one worker's at most
    assert usage["tree_peak_rss_kib"] >= 400 << 10, usage  # three at once, summed
    assert usage["tree_samples"] >= 1


@pytest.mark.parametrize("path,env,want", [
    ("/slurm/uid_1000/job_4242/step_0/task_0", {"SLURM_JOB_ID": "4242"}, "Slurm job 4242"),
    ("/system.slice/slurmstepd.scope/job_4242/step_0/user/task_0", {"SLURM_JOB_ID": "4242"},
     "Slurm job 4242"),
    ("/user.slice/user-1000.slice/session-3.scope", {"SLURM_JOB_ID": "4242"}, None),  # task/none
    ("/system.slice/slurmstepd.scope", {"SLURM_JOB_ID": "4242"}, None),
    ("/slurm/uid_1000/job_42/step_0", {"SLURM_JOB_ID": "4242"}, None),
    ("/system.slice/run-r0a1b2c3.scope", {}, "systemd scope run-r0a1b2c3.scope"),
    ("/", {}, None),
])
def test_only_the_jobs_own_cgroup_is_called_the_jobs(path, env, want):
    assert G.own_cgroup_kind(path, env) == want


def test_a_shared_cgroup_is_never_called_the_jobs():
    notes = G._memory_notes({}, {"path": "/sys/fs/cgroup/user.slice/user-0.slice/session-3.scope",
                                 "peak_bytes": 5 << 30})
    assert not any("job's cgroup" in n for n in notes), notes
    assert any("no cgroup of the job's own" in n for n in notes)


def test_srun_figures_are_labelled_as_sruns_own():
    rows = dict(G._resource_rows({"maxrss_kib": 26 << 10, "utime_s": 0.01, "launcher": "srun"}))
    assert "Peak RSS (srun's own)" in rows and "CPU time (srun's own)" in rows


cluster = load_gpualert()

# nvidia-smi --query-gpu=index,name,memory.used,memory.total,utilization.gpu,temperature.gpu,
# power.draw,ecc.errors.uncorrected.volatile.total --format=csv,noheader,nounits (A100 and
# consumer-card rows as public projects record them: [N/A] / [Not Supported] where unsupported).
SMI_ROWS = (
    "0, NVIDIA A100-SXM4-80GB, 67542, 81920, 96, 61, 312.45, 0\n"
    "1, NVIDIA A100-SXM4-80GB, 3, 81920, 0, 29, 61.00, 0\n"
    "2, NVIDIA GeForce RTX 3050 Laptop GPU, 1843, 4096, 30, 58, [N/A], [N/A]\n"
    "3, NVIDIA GeForce GTX 1080, 0, 8192, [Not Supported], 35, 5.12, [Not Supported]\n")
SMI_DRIVER_FAILURE = ("NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
                      "Make sure that the latest NVIDIA driver is installed and running.\n")


# ---- cgroup memory ----

def _write(path, text):
    os.makedirs(os.path.dirname(str(path)), exist_ok=True)
    with open(str(path), "w") as f:
        f.write(text)


def test_cgroup_v2(tmp_path):
    proc, root = tmp_path / "proc", tmp_path / "cg"
    _write(proc / "self" / "cgroup", "0::/system.slice/slurmstepd.scope/job_7/step_batch/user/task_0\n")
    _write(root / "cgroup.controllers", "cpuset cpu io memory pids\n")
    job = root / "system.slice" / "slurmstepd.scope" / "job_7"
    leaf = job / "step_batch" / "user" / "task_0"
    _write(leaf / "memory.events", "low 0\nhigh 0\nmax 12\noom 2\noom_kill 1\noom_group_kill 0\n")
    _write(leaf / "memory.peak", "4294967296\n")
    _write(leaf / "memory.max", "max\n")
    for d in (leaf.parent, leaf.parent.parent):
        _write(d / "memory.max", "max\n")
    _write(job / "memory.max", "8589934592\n")
    got = cluster.read_cgroup_memory(proc_root=str(proc), cgroup_root=str(root))
    assert got["version"] == 2 and got["path"] == str(leaf)
    assert (got["oom_kill"], got["oom"], got["peak_bytes"], got["limit_bytes"]) == (1, 2, 4294967296, 8589934592)
    assert got["notes"] == []


def test_cgroup_v1_hybrid(tmp_path):
    proc, root = tmp_path / "proc", tmp_path / "cg"
    # the layout of this very machine: v1 memory controller next to an empty unified hierarchy
    _write(proc / "123" / "cgroup", "9:name=systemd:/\n4:memory:/process_api/4d4a\n0::/\n")
    leaf = root / "memory" / "process_api" / "4d4a"
    _write(leaf / "memory.oom_control", "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n")
    _write(leaf / "memory.failcnt", "17\n")
    _write(leaf / "memory.max_usage_in_bytes", "597970944\n")
    _write(leaf / "memory.limit_in_bytes", "1073741824\n")
    _write(root / "memory" / "process_api" / "memory.limit_in_bytes", "9223372036854771712\n")
    _write(root / "memory" / "memory.limit_in_bytes", "9223372036854771712\n")
    got = cluster.read_cgroup_memory(123, proc_root=str(proc), cgroup_root=str(root))
    assert got["version"] == 1
    assert (got["oom_kill"], got["failcnt"], got["peak_bytes"], got["limit_bytes"]) == (3, 17, 597970944, 1073741824)


def test_cgroup_namespace_root_and_unreadable(tmp_path):
    proc, root = tmp_path / "proc", tmp_path / "cg"
    _write(proc / "self" / "cgroup", "0::/\n")
    _write(root / "cgroup.controllers", "memory\n")
    _write(root / "memory.events", "oom 0\noom_kill 0\n")
    got = cluster.read_cgroup_memory(proc_root=str(proc), cgroup_root=str(root))
    assert got["oom_kill"] == 0 and got["path"] == str(root)
    os.remove(str(root / "memory.events"))
    got = cluster.read_cgroup_memory(proc_root=str(proc), cgroup_root=str(root))
    assert got["oom_kill"] is None and any("memory.events" in n for n in got["notes"])
    got = cluster.read_cgroup_memory(pid=999999999, proc_root=str(proc), cgroup_root=str(root))
    assert got["version"] is None and got["notes"]


def test_cgroup_on_this_machine_never_raises():
    got = cluster.read_cgroup_memory()
    assert set(["oom_kill", "notes", "version"]) <= set(got)


# ---- GPUs ----

def test_query_gpus_parses_real_rows():
    gpus, notes = cluster.query_gpus(run=FakeRun({"nvidia-smi": (0, SMI_ROWS)}), environ={})
    assert notes == [] and len(gpus) == 4
    assert gpus[0] == {"index": 0, "name": "NVIDIA A100-SXM4-80GB", "mem_used_mib": 67542.0,
                       "mem_total_mib": 81920.0, "util_pct": 96.0, "temp_c": 61.0, "power_w": 312.45,
                       "ecc_uncorrected": 0}
    assert gpus[2]["power_w"] is None and gpus[2]["ecc_uncorrected"] is None
    assert gpus[3]["util_pct"] is None and gpus[3]["name"] == "NVIDIA GeForce GTX 1080"


def test_query_gpus_failures_become_notes():
    assert cluster.query_gpus(run=FakeRun({}))[1][0].startswith("nvidia-smi missing or no answer")
    gpus, notes = cluster.query_gpus(run=FakeRun({"nvidia-smi": (9, SMI_DRIVER_FAILURE)}))
    assert gpus == [] and "exit 9" in notes[0] and "couldn't communicate" in notes[0]


def test_query_gpus_keeps_the_jobs_gpus():
    run = FakeRun({"nvidia-smi": (0, SMI_ROWS)})
    gpus, _ = cluster.query_gpus(run=run, environ={"CUDA_VISIBLE_DEVICES": "1,3"})
    assert [g["index"] for g in gpus] == [1, 3]
    gpus, _ = cluster.query_gpus(run=run, environ={"CUDA_VISIBLE_DEVICES": "GPU-5c1b"})
    assert len(gpus) == 4


def _fake_smi(tmp_path, body):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(exist_ok=True)
    exe = bin_dir / "nvidia-smi"
    write_executable(exe, "#!/bin/sh\n" + body)
    return str(bin_dir)


def test_gpu_sampler_with_a_fake_nvidia_smi(tmp_path, monkeypatch):
    # each call bumps a counter: memory grows and one ECC error appears on GPU 1
    count = tmp_path / "count"
    body = textwrap.dedent("""\
        n=$(cat %s 2>/dev/null || echo 0); n=$((n+1)); echo $n > %s
        echo "0, NVIDIA A100-SXM4-80GB, $((1000*n)), 81920, 50, 60, 250.00, 0"
        if [ $n -ge 3 ]; then e=1; else e=0; fi
        echo "1, NVIDIA A100-SXM4-80GB, 3, 81920, 0, 29, 61.00, $e"
        """) % (count, count)
    monkeypatch.setenv("PATH", _fake_smi(tmp_path, body) + os.pathsep + os.environ["PATH"])
    monkeypatch.delenv("CUDA_VISIBLE_DEVICES", raising=False)
    sampler = cluster.GpuSampler(interval=0.05).start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and len(sampler.samples) < 3:  # poll, never a fixed sleep
        time.sleep(0.02)
    summary = sampler.stop()
    n = int(count.read_text())
    assert summary["samples"] == n >= 3
    g0, g1 = summary["gpus"]
    assert g0["mem_used_peak_mib"] == 1000.0 * n and g0["util_mean_pct"] == 50.0
    assert (g1["ecc_start"], g1["ecc_end"], g1["ecc_delta"]) == (0, 1, 1)
    assert summary["ecc_delta"] == 1 and summary["idle"] is False and summary["notes"] == []


def test_gpu_sampler_interval_zero_samples_start_and_end(tmp_path, monkeypatch):
    body = 'echo "0, NVIDIA A100-SXM4-80GB, 3, 81920, 0, 29, 61.00, 0"\n'
    monkeypatch.setenv("PATH", _fake_smi(tmp_path, body) + os.pathsep + os.environ["PATH"])
    sampler = cluster.GpuSampler(interval=0).start()
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not sampler.samples:  # the start sample is in
        time.sleep(0.02)
    assert sampler.stop()["samples"] == 2


def test_gpu_sampler_hanging_nvidia_smi_is_bounded(tmp_path, monkeypatch):
    pid_file = tmp_path / "pid"
    body = "sleep 60 &\necho $! > %s\nwait\n" % pid_file
    monkeypatch.setenv("PATH", _fake_smi(tmp_path, body) + os.pathsep + os.environ["PATH"])
    t0 = time.time()
    sampler = cluster.GpuSampler(interval=0.1, timeout=3).start()
    assert time.time() - t0 < 2.0  # start never waits for nvidia-smi (that would take 3 s)
    summary = sampler.stop()
    assert time.time() - t0 < 12.0
    assert summary["samples"] == 0 and "no answer within 3s" in summary["notes"][0]
    assert not _alive(int(pid_file.read_text()))


def test_gpu_sampler_without_nvidia_smi(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))
    sampler = cluster.GpuSampler(interval=60).start()
    summary = sampler.stop()
    assert summary["samples"] == 0 and summary["gpus"] == [] and summary["notes"]


def test_idle_flag_needs_a_long_run():
    idle_row = [{"index": 0, "name": "A", "mem_used_mib": 3.0, "mem_total_mib": 10.0, "util_pct": 0.0,
                 "temp_c": 30.0, "power_w": 60.0, "ecc_uncorrected": 0}]
    long_run = [(t, idle_row) for t in (0.0, 400.0, 900.0)]
    assert cluster.summarize_gpu_samples(long_run)["idle"] is True
    assert cluster.summarize_gpu_samples(long_run[:2])["idle"] is False
    assert cluster.summarize_gpu_samples([]) == {}


if __name__ == "__main__":
    unittest.main()


# ---- real transformers 5 output (tests/fixtures/real/versions.json) ----

REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures", "real")


def _real(name):
    with open(os.path.join(REAL, name), encoding="utf-8") as handle:
        return handle.read()


def _hf_checkpoints(root, steps_per_epoch=64):
    """checkpoint-10 ... checkpoint-60 as the run left them, with trainer_state.json's epoch."""
    for step in range(10, 61, 10):
        d = root / "out" / "hf_nan" / ("checkpoint-%d" % step)
        d.mkdir(parents=True)
        (d / "trainer_state.json").write_text(json.dumps({"epoch": step / float(steps_per_epoch),
                                                          "global_step": step}))


def test_hf5_nan_run_offers_the_last_checkpoint_before_the_divergence(tmp_path):
    """transformers 5.25: grad_norm nan from step 24 (epoch 0.375), the loss logged as '0' by
    logging_nan_inf_filter, no save line, a 'Writing model shards 1/1' bar at every save."""
    metrics = N.metrics_from_chunks([_real("hf_trainer_nan_tf5.log")])
    assert metrics["first_nonfinite"] == {"step": None, "epoch": 0.375}
    assert metrics["progress"]["step"] == 60 and metrics["progress"]["step_total"] == 60
    assert metrics["series"]["loss"]["best"]["value"] == 6.057  # never the placeholder 0
    start = time.time() - 1
    _hf_checkpoints(tmp_path)
    found = N.find_checkpoints(str(tmp_path), start)
    ckpt = N.choose_checkpoint(found, metrics)
    assert os.path.basename(ckpt["path"]) == "checkpoint-20" and ckpt["later_nonfinite"] == 4


def test_an_isolated_inf_grad_norm_of_an_amp_scaler_is_no_divergence():
    path = os.path.join(os.path.dirname(REAL), "..", "captured", "amp_gradscaler_inf_on_last_step.log")
    with open(path, encoding="utf-8") as handle:
        metrics = N.metrics_from_chunks([handle.read()])
    assert "first_nonfinite" not in metrics


def test_a_persisting_nonfinite_grad_norm_marks_the_divergence():
    text = "".join("{'loss': %s, 'grad_norm': %s, 'step': %d}\n" % (2.0, g, s)
                   for s, g in ((10, "1.0"), (20, "nan"), (30, "1.0"), (40, "nan"), (50, "nan"), (60, "nan")))
    assert N.metrics_from_chunks([text])["first_nonfinite"]["step"] == 40


def test_save_and_load_bars_are_not_the_runs_progress():
    text = ("Loading weights: 100%|██████████| 16/16 [00:00<00:00, 8534.77it/s]\n"
            " 40%|████      | 24/60 [00:05<00:07,  4.98it/s]\n"
            "Writing model shards: 100%|██████████| 1/1 [00:00<00:00, 295.69it/s]\n")
    metrics = N.metrics_from_chunks([text + "{'loss': 2.0, 'epoch': 0.4}\n"])
    assert (metrics["progress"]["step"], metrics["progress"]["step_total"]) == (24, 60)
    assert metrics["throughput"] == "4.98 it/s"


@pytest.mark.parametrize("line, path", [
    ("Saving model checkpoint to /w/ckpt_42/step_200.pt", "/w/ckpt_42/step_200.pt"),
    ("Saving model checkpoint to out/checkpoint-500", "out/checkpoint-500"),
    ("Model weights saved in out/checkpoint-500/model.safetensors", "out/checkpoint-500"),
])
def test_the_checkpoint_is_what_the_log_named(line, path):
    assert N.saved_checkpoint_paths(line) == [path]


def test_a_checkpoint_the_run_failed_to_load_is_not_offered(tmp_path):
    """torch 2.13: resume_truncated.py wrote ckpt/epoch_3.pt, cut it short and failed to load it."""
    start = time.time() - 1
    (tmp_path / "ckpt").mkdir()
    (tmp_path / "ckpt" / "epoch_3.pt").write_bytes(b"PK\x03\x04 cut")
    log = tmp_path / "logs" / "run1" / "output.log"
    log.parent.mkdir(parents=True)
    log.write_text(_real("resume_truncated_torch.log").replace("/tmp/h8-run/resume", str(tmp_path)))
    assert N.find_checkpoints(str(tmp_path), start)  # the scan finds it...
    metrics = N.run_metrics(str(log), str(tmp_path), start, str(log.parent))
    assert "checkpoint" not in metrics  # ...but the run read it, it did not write it


def test_no_checkpoint_when_another_run_beside_this_one_may_have_written_it(tmp_path):
    start = time.time() - 1
    proj = tmp_path / "proj"
    (proj / "out" / "wall3").mkdir(parents=True)
    logs = tmp_path / "logs"
    for name, job in (("mine", "57"), ("theirs", "56")):
        (logs / name).mkdir(parents=True)
        (logs / name / "output.log").write_text(
            "=== gpualert run started (gpualert 0.1.0) ===\ncommand: python x.py\ncwd: %s\n"
            "scheduler: job_id=%s kind=slurm\nstep 1 loss 2.0\n" % (proj, job))
    (proj / "out" / "wall3" / "step_140.pt").write_bytes(b"w")
    metrics = N.run_metrics(str(logs / "mine" / "output.log"), str(proj), start, str(logs / "mine"))
    assert "checkpoint" not in metrics and metrics["checkpoint_untold"]
    shutil.rmtree(str(logs / "theirs"))  # alone in the folder: the file is this run's
    metrics = N.run_metrics(str(logs / "mine" / "output.log"), str(proj), start, str(logs / "mine"))
    assert metrics["checkpoint"]["path"].endswith("step_140.pt")


def test_a_scanned_file_whose_ctime_predates_the_run_is_not_offered(tmp_path):
    (tmp_path / "step_9.pt").write_bytes(b"w")
    start = time.time() + 2
    os.utime(str(tmp_path / "step_9.pt"), (start + 1, start + 1))  # an mtime can be set
    assert N.find_checkpoints(str(tmp_path), start) == []

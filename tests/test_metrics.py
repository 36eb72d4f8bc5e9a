"""Metrics from training logs: the shapes PyTorch, HF Trainer, Lightning, Keras and JAX/flax
loops print (made here with the libraries' own format strings), noisy and multi-rank logs,
the bounded sample of a large log, and --metric."""
import json
import math
import os
import unittest

from _load import load_gpualert

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


if __name__ == "__main__":
    unittest.main()


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

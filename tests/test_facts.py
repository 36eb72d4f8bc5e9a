"""The facts a researcher acts on from the first screen (issue 21), black-box through the real
file: the checkpoint to resume from (the run's own, not a poisoned or a previous job's),
progress and speed as the log states them, and the picture that shows where the loss broke."""
import email
import re
import email.policy
import os
import signal
import subprocess
import time

from _load import load_gpualert
from wrapper_helpers import PY, SCRIPT, base, child, isolated_env, only, outbox_messages, \
    run_json, wait_for

N = load_gpualert()
FIRST_SCREEN = 25  # lines of the plain part a phone shows without scrolling


def plain_text(tmp):
    """The plain part of the one message the run left in the outbox."""
    paths = outbox_messages(tmp)
    assert len(paths) == 1, paths
    with open(paths[0], "rb") as handle:
        msg = email.message_from_binary_file(handle, policy=email.policy.default)
    return msg.get_body(("plain",)).get_content()


def first_screen(tmp):
    return "\n".join(plain_text(tmp).splitlines()[:FIRST_SCREEN])


def row(text, label):
    """The value of a 'Label:   value' row of the first screen, or None."""
    for line in text.splitlines():
        if line.strip().startswith(label + ":"):
            return line.split(":", 1)[1].strip()
    return None


def run_in(tmp, code, cwd=None, extra=()):
    cwd = cwd or tmp
    os.makedirs(str(cwd), exist_ok=True)
    return subprocess.run([PY, SCRIPT] + base(tmp) + list(extra) + ["--"] + child(code),
                          env=isolated_env(tmp), cwd=str(cwd), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, timeout=60)


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



class TestLineInYourFile(object):
    CODE = "print('hello')\nprint('step=1 loss=2.0')\nimport nosuchmodule_i21\n"

    def test_the_line_is_the_job_output_files_line(self, tmp_path):
        out = tmp_path / "slurm-777.out"
        out.write_text("module load cuda\nrunning on node7\n")  # the batch script's lines first
        with open(str(out), "ab") as handle:
            subprocess.run([PY, SCRIPT] + base(tmp_path) + ["--"] + child(self.CODE),
                           env=isolated_env(tmp_path), cwd=str(tmp_path), stdout=handle,
                           stderr=subprocess.STDOUT, timeout=60)
        screen = first_screen(tmp_path)
        place, evidence = row(screen, "Line").split(": ", 1)
        name, number = place.split(":")
        assert name == "slurm-777.out", screen
        assert out.read_text().splitlines()[int(number) - 1] == evidence
        assert "(slurm-777.out:%s)" % number in out.read_text()  # the stderr summary too

    def test_without_an_output_file_the_run_logs_line_says_so(self, tmp_path):
        run_in(tmp_path, self.CODE)  # stdout and stderr are pipes
        place, evidence = row(first_screen(tmp_path), "Line").split(": ", 1)
        name, number = place.split(":")
        assert name == "output.log"
        log = [l for l in open(os.path.join(os.path.dirname(run_json_path(tmp_path)), "output.log"))]
        assert log[int(number) - 1].rstrip("\n") == evidence

    def test_stderr_elsewhere_is_not_mapped(self, tmp_path):
        out, err = tmp_path / "slurm-5.out", tmp_path / "slurm-5.err"
        with open(str(out), "wb") as o, open(str(err), "wb") as e:
            subprocess.run([PY, SCRIPT] + base(tmp_path) + ["--"] + child(self.CODE),
                           env=isolated_env(tmp_path), cwd=str(tmp_path), stdout=o, stderr=e,
                           timeout=60)
        assert row(first_screen(tmp_path), "Line").startswith("output.log:")


def run_json_path(tmp):
    from wrapper_helpers import run_dir
    return os.path.join(run_dir(tmp), "run.json")


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
        assert [k for k in rows if "CPU" in k] == ["CPU time, process tree"]
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


class TestAdviceFitsTheCause(object):
    def test_a_missing_module_under_slurm_is_not_offered_a_requeue(self, tmp_path):
        env = isolated_env(tmp_path, SLURM_JOB_ID="17", SLURM_SUBMIT_DIR=str(tmp_path))
        subprocess.run([PY, SCRIPT] + base(tmp_path) + ["--"] + child("import nosuchmodule_i21"),
                       env=env, cwd=str(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=60)
        screen = first_screen(tmp_path)
        assert "missing_module" in screen
        assert "requeue 17" not in plain_text(tmp_path)
        assert row(screen, "Resubmit") == ("sbatch again from %s once the cause is fixed "
                                           "(a requeue reruns the same failure)" % tmp_path)

    def test_a_time_limit_asks_for_more_time_with_the_figure(self):
        from messages import timeout_after_warning
        result = timeout_after_warning()
        rows = dict(N.brief_for(result).fields)
        assert "requeue" not in rows["Resubmit"]
        assert rows["Resubmit"].startswith("sbatch --time=17:45:00 again, resuming from the last checkpoint")
        assert "its limit was 12h00m; it reached epoch 75/100" in rows["Resubmit"]

    def test_no_time_advice_below_the_real_limit(self):
        # attack 2, finding 4: UNLIMITED (or a limit never read) is no "its limit was 6s"
        from messages import timeout_after_warning
        result = timeout_after_warning()
        sched = dict(result.scheduler, limit_s=None, end_time=None)
        for extra in ({"unlimited": True}, {}):
            rows = dict(N.brief_for(result._replace(scheduler=dict(sched, **extra))).fields)
            assert "--time=" not in rows["Resubmit"] and "its limit was" not in rows["Resubmit"], rows
        rows = dict(N.brief_for(result._replace(scheduler=dict(sched, unlimited=True))).fields)
        assert "UNLIMITED" in rows["Resubmit"]

    def test_a_preemption_is_requeued(self):
        from messages import timeout_after_warning
        result = timeout_after_warning()
        c = result.classification._replace(cls="preempted", rule="slurm_preempted")
        rows = dict(N.brief_for(result._replace(classification=c, status="PREEMPTED")).fields)
        assert rows["Resubmit"].startswith("scontrol requeue 4299_7")  # the task, never the whole array

    def test_a_memory_error_under_ulimit_v_names_the_limit(self, tmp_path):
        limit_kib = 700000
        code = "x = bytearray(2 << 30)"
        cmd = "ulimit -v %d; exec \"$@\"" % limit_kib
        subprocess.run(["bash", "-c", cmd, "bash", PY, SCRIPT] + base(tmp_path) + ["--"] + child(code),
                       env=isolated_env(tmp_path), cwd=str(tmp_path), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
        screen = first_screen(tmp_path)
        assert "ram_oom" in screen, screen
        advice = row(screen, "Next")
        assert "address-space limit (ulimit -v: %s)" % N._format_size(limit_kib * 1024) in advice
        assert "request more memory" not in advice

    def test_gpualerts_own_timeout_says_so(self, tmp_path):
        subprocess.run([PY, SCRIPT] + base(tmp_path) + ["--timeout", "1", "--", "sleep", "20"],
                       env=isolated_env(tmp_path), cwd=str(tmp_path), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=60)
        advice = row(first_screen(tmp_path), "Next")
        assert advice.startswith("gpualert's own --timeout stopped the command, not the scheduler. "
                                 "Rerun with a longer --timeout"), advice
        assert "ask for more time" not in advice


def test_a_run_that_recovered_from_a_nan_keeps_its_newest_checkpoint():
    text = ("step=100 loss=2.0\nstep=200 loss=nan\nstep=300 loss=1.5\n"
            "Saving model checkpoint to out/checkpoint-300\nstep=400 loss=1.4\n")
    metrics = N.metrics_from_chunks([text])
    assert "first_nonfinite" not in metrics
    assert metrics["saved"] == [{"path": "out/checkpoint-300", "after_nonfinite": False}]


def test_a_recovered_nan_is_not_shaded_to_the_end():
    text = "".join("step=%d loss=%s\n" % (s, "nan" if s == 200 else 2.0 - s / 1000.0)
                   for s in range(20, 620, 20))
    series = N.metrics_from_chunks([text])["series"]["loss"]
    assert series["nonfinite"] == 1 and "first_nonfinite_x" not in series


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
                                 "need about 1m"), finish
        assert re.search(r"; the newest checkpoint was written \d+s ago$", finish), finish

"""The message a researcher acts on: golden text parts of representative runs, the picture
(decoded here with zlib alone: valid PNG, size bound, curves where the data says), and the
HTML part rendered by a real headless Chromium at 400 px.

GPUALERT_REGOLD=1 rewrites tests/golden/*.txt; GPUALERT_SCREENSHOTS=DIR keeps the screenshots.
"""
import email
import email.policy
import os
import pathlib
import shutil
import struct
import subprocess
import tempfile
import time
import unittest
import zlib

os.environ["TZ"] = "UTC"
time.tzset()

from messages import N, REPRESENTATIVE  # noqa: E402

GOLDEN = pathlib.Path(__file__).resolve().parent / "golden"


def decode_png(data):
    """-> (width, height, rows of (r, g, b) tuples). Palette (3) and RGB(A) (2, 6), 8-bit,
    all five scanline filters; every chunk's CRC checked."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, chunks = 8, []
    while pos < len(data):
        n, = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        crc, = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc, "bad CRC in %r" % kind
        chunks.append((kind, body))
        pos += 12 + n
    assert chunks[0][0] == b"IHDR" and chunks[-1][0] == b"IEND"
    w, h, depth, ctype, _, _, interlace = struct.unpack(">IIBBBBB", chunks[0][1])
    assert depth == 8 and interlace == 0 and ctype in (2, 3, 6)
    palette = None
    for kind, body in chunks:
        if kind == b"PLTE":
            palette = [tuple(body[i:i + 3]) for i in range(0, len(body), 3)]
    raw = zlib.decompress(b"".join(body for kind, body in chunks if kind == b"IDAT"))
    bpp = {2: 3, 3: 1, 6: 4}[ctype]
    stride, prev, rows = w * bpp, bytearray(w * bpp), []
    for y in range(h):
        ftype, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b = prev[i]
            c = prev[i - bpp] if i >= bpp else 0
            if ftype == 1:
                line[i] = (line[i] + a) & 255
            elif ftype == 2:
                line[i] = (line[i] + b) & 255
            elif ftype == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif ftype == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        prev = line
        if ctype == 3:
            rows.append([palette[v] for v in line])
        else:
            rows.append([tuple(line[i:i + 3]) for i in range(0, stride, bpp)])
    return w, h, rows


def near(rows, x, y, colour, radius=2):
    for yy in range(max(0, y - radius), min(len(rows), y + radius + 1)):
        for xx in range(max(0, x - radius), min(len(rows[0]), x + radius + 1)):
            if rows[yy][xx] == colour:
                return True
    return False


class TestGoldenText(unittest.TestCase):
    def test_text_parts(self):
        for name, make in sorted(REPRESENTATIVE.items()):
            with self.subTest(name=name):
                text = N.render_text(make(), [])
                path = GOLDEN / (name + ".txt")
                if os.environ.get("GPUALERT_REGOLD"):
                    path.write_text(text, encoding="utf-8")
                self.assertEqual(text, path.read_text(encoding="utf-8"))

    def test_what_you_need_comes_first(self):
        text = N.render_text(REPRESENTATIVE["failure_with_ranks"](), [])
        head = text.split("Details:")[0]
        for needle in ("on rank 3", "/home/ana/resnet/train.py:160 in train_step",
                       "step 9000", "loss 0.5", "checkpoints/step_8500.pt",
                       "work since then is lost", "2h13m of 4h00m allowed",
                       "Reduce the batch size",
                       "sbatch again from /home/ana/resnet once the cause is fixed"):
            self.assertIn(needle, head)
        self.assertNotIn("^^^^", text)
        self.assertIn("[1 library frame omitted]", text)
        self.assertNotIn("site-packages", text)

    def test_success_says_something(self):
        r = REPRESENTATIVE["success_with_metrics"]()
        text = N.render_text(r, [])
        head = text.split("Details:")[0]
        for needle in ("Result:", "loss 0.4", "eval_accuracy 0.9", "2.31 it/s", "GPU0 84.8% busy",
                       "checkpoint-1200"):
            self.assertIn(needle, head)
        self.assertNotIn("Cause:", text)
        self.assertTrue(N.render_subject(r).startswith("[gpualert] SUCCESS finetune.py: loss 0.4"))


class TestSubjects(unittest.TestCase):
    def test_array_tasks_differ_within_50_chars(self):
        r = REPRESENTATIVE["timeout_after_warning"]()
        r = r._replace(classification=N.Classification("cuda_runtime_error", None, None, None, None, None))
        heads = set()
        for task in range(10):
            sched = dict(r.scheduler, array_task_id=str(task), label="4299_%d" % task)
            s = N.render_subject(r._replace(scheduler=sched, name="a_rather_long_job_name_here"))
            heads.add(s[:50])
            self.assertIn("4299_%d" % task, s[:50])
            self.assertIn("TIMEOUT", s[:50])
        self.assertEqual(len(heads), 10)

    def test_folded_subject_has_no_empty_first_line(self):
        for name in ("x" * 200, "tr\u00e4in-" * 30, "a/" * 60, "train.py"):
            for host in ("gpu041", "node-" + "y" * 80):
                r = REPRESENTATIVE["failure_with_ranks"]()._replace(name=name, host=host)
                msg, _ = N.build_message(r, dict(N.default_config(), to=["a@b.c"]))
                # as sent: the message's own policy, with LF and with SMTP's CRLF
                for data in (N._wire_bytes(msg), msg.as_bytes(policy=msg.policy.clone(linesep="\r\n"))):
                    head = data.split(b"\n\n")[0].split(b"\r\n\r\n")[0]
                    line = [l for l in head.splitlines() if l.startswith(b"Subject:")][0]
                    self.assertTrue(line[len(b"Subject:"):].strip().startswith(b"[gpualert]"), line)


class TestPicture(unittest.TestCase):
    def test_png_valid_bounded_and_curves_where_the_data_says(self):
        r = REPRESENTATIVE["failure_with_ranks"]()
        png, layout = N.render_plot(r.metrics, r.gpu)
        self.assertLessEqual(len(png), N.PLOT_MAX_BYTES)
        w, h, rows = decode_png(png)
        self.assertEqual((w, h), (N.PLOT_WIDTH, N.PLOT_PANEL_HEIGHT * len(layout)))
        panels = N.plot_panels(r.metrics, r.gpu)
        self.assertEqual([p["title"] for p in panels], ["loss", "gpu"])
        for panel, box in zip(panels, layout):
            for name, colour, points in panel["series"]:
                rgb = N.PLOT_PALETTE[colour]
                for x, y in points:
                    px, py = box["to_px"](x, y)
                    self.assertTrue(near(rows, px, py, rgb), (name, x, y, px, py))
        # and not where it does not: the loss curve never comes near the top-right corner
        box, rgb = layout[0], N.PLOT_PALETTE[panels[0]["series"][0][1]]
        self.assertFalse(near(rows, box["x1"] - 3, box["y0"] + 3, rgb))

    def test_no_data_no_picture(self):
        self.assertEqual(N.render_plot({}, {}), (None, []))

    def test_inline_image_by_content_id(self):
        r = REPRESENTATIVE["success_with_metrics"]()
        msg, _ = N.build_message(r, dict(N.default_config(), to=["a@b.c"]))
        parsed = email.message_from_bytes(msg.as_bytes(), policy=email.policy.default)
        related = [p for p in parsed.walk() if p.get_content_type() == "multipart/related"]
        self.assertEqual(len(related), 1)
        image = [p for p in related[0].iter_parts() if p.get_content_type() == "image/png"][0]
        html = parsed.get_body(("html",)).get_content()
        cid = image["Content-ID"].strip("<>")
        self.assertIn('src="cid:%s"' % cid, html)
        self.assertIn('alt="Curves: loss from', html)
        self.assertEqual(image.get_content_disposition(), "inline")
        decode_png(image.get_content())
        plain = parsed.get_body(("plain",)).get_content()
        self.assertTrue(any(ch in plain for ch in N.SPARK_CHARS))

    def test_no_plots_option(self):
        r = REPRESENTATIVE["success_with_metrics"]()
        msg, _ = N.build_message(r, dict(N.default_config(), to=["a@b.c"], no_plots=True))
        self.assertFalse(any(p.get_content_type() == "image/png" for p in msg.walk()))
        self.assertNotIn("cid:", msg.get_body(("html",)).get_content())

    def test_picture_counts_in_the_budget(self):
        r = REPRESENTATIVE["failure_with_ranks"]()
        for budget in (20 * 1024, 60 * 1024):
            cfg = dict(N.default_config(), to=["a@b.c"], budget=budget)
            msg, _ = N.build_message(r, cfg)
            self.assertLessEqual(N._wire_size(msg), budget)


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync",
                  "--hide-scrollbars", "--virtual-time-budget=3000"]


@unittest.skipUnless(find_chromium(), "no chromium here (.ci/chromium-setup.sh installs it)")
class TestBrowser(unittest.TestCase):
    """What a mail client shows: the HTML part with its cid: image resolved to the image part."""

    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="gpualert-chromium-")
        self.addCleanup(shutil.rmtree, self.tmp, True)

    def chromium(self, *args):
        profile = tempfile.mkdtemp(dir=self.tmp, prefix="profile-")
        argv = [find_chromium()] + CHROMIUM_FLAGS + ["--user-data-dir=" + profile] + list(args)
        return subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)

    def page_for(self, result, name):
        msg, _ = N.build_message(result, dict(N.default_config(), to=["a@b.c"]))
        parsed = email.message_from_bytes(msg.as_bytes(), policy=email.policy.default)
        html = parsed.get_body(("html",)).get_content()
        for part in parsed.walk():
            if part.get_content_type() == "image/png":
                path = os.path.join(self.tmp, name + "-inline.png")
                with open(path, "wb") as f:
                    f.write(part.get_content())
                html = html.replace("cid:" + part["Content-ID"].strip("<>"), "file://" + path)
        page = os.path.join(self.tmp, name + ".html")
        with open(page, "w", encoding="utf-8") as f:
            f.write(html)
        return page, html

    def test_inline_image_shows_and_nothing_scrolls_sideways_at_400px(self):
        keep = os.environ.get("GPUALERT_SCREENSHOTS")
        for name, make in sorted(REPRESENTATIVE.items()):
            with self.subTest(name=name):
                result = make()
                page, html = self.page_for(result, name)
                shot = os.path.join(self.tmp, name + ".png")
                proc = self.chromium("--window-size=400,2400", "--screenshot=" + shot, "file://" + page)
                self.assertTrue(os.path.exists(shot), proc.stderr[-2000:])
                w, h, rows = decode_png(open(shot, "rb").read())
                self.assertEqual(w, 400)
                seen = set(px for row in rows for px in row)
                panels = N.plot_panels(result.metrics, result.gpu)
                for _, colour, _ in (panels[0]["series"] if panels else ()):
                    self.assertIn(N.PLOT_PALETTE[colour], seen)  # the image was displayed
                probe = page + ".probe.html"
                with open(probe, "w", encoding="utf-8") as f:
                    f.write(html.replace("</body>", "<script>window.onload=function(){"
                            "document.title='SW='+document.documentElement.scrollWidth+"
                            "' CW='+document.documentElement.clientWidth}</script></body>"))
                dom = self.chromium("--window-size=400,2400", "--dump-dom", "file://" + probe)
                text = dom.stdout.decode("utf-8", "replace")
                import re
                m = re.search(r"<title>SW=(\d+) CW=(\d+)</title>", text)
                self.assertIsNotNone(m, text[-500:] + dom.stderr.decode()[-1000:])
                self.assertLessEqual(int(m.group(1)), int(m.group(2)), "horizontal scrolling at 400 px")
                if keep:
                    os.makedirs(keep, exist_ok=True)
                    shutil.copy(shot, os.path.join(keep, name + ".png"))


if __name__ == "__main__":
    unittest.main()


def _smtp_sink(case):
    """A real SMTP server (aiosmtpd) closed when the test ends; skips the test without it."""
    import sys
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
    try:
        from conftest import SmtpServer
        sink = SmtpServer(None)
    except ImportError:
        case.skipTest("aiosmtpd is not installed (pip install aiosmtpd)")
    case.addCleanup(sink.close)
    return sink


class TestThread(unittest.TestCase):
    """The real wrapper under a (simulated) Slurm job: the time-limit warning and the final
    message are one thread, the warning tells the real start and command, and the final one
    says the warning was passed on and what the job wrote after it."""

    def test_warning_and_final_are_one_thread(self):
        import signal
        sink = _smtp_sink(self)
        from wrapper_helpers import PY, SCRIPT, child, isolated_env
        tmp = pathlib.Path(tempfile.mkdtemp(prefix="gpualert-thread-"))
        self.addCleanup(shutil.rmtree, str(tmp), True)
        code = ("import signal, sys, time\n"
                "def save(s, f):\n"
                "    open('ckpt.pt', 'wb').write(b'w' * 10)\n"
                "    print('checkpoint saved', flush=True)\n"
                "    sys.exit(0)\n"
                "signal.signal(signal.SIGUSR1, save)\n"
                "print('step=1 loss=2.0', flush=True)\n"
                "time.sleep(1.5)\n"  # the warning's Duration must be the run's, not 0s
                "print('ready', flush=True)\n"
                "time.sleep(30)\n")
        env = isolated_env(tmp, SLURM_JOB_ID="4242", SLURM_JOB_NAME="train", GPUALERT_SENDMAIL="none")
        args = ["--log-dir", str(tmp / "logs"), "--outbox", str(tmp / "outbox"), "--to", "o@example.org",
                "--smtp", sink.addr, "--"]
        started = time.time()
        proc = subprocess.Popen([PY, SCRIPT] + args + child(code), env=env, cwd=str(tmp),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        while proc.stdout.readline() not in (b"ready\n", b""):
            pass
        proc.send_signal(signal.SIGUSR1)
        proc.communicate(timeout=60)
        msgs = [email.message_from_bytes(m.data, policy=email.policy.default) for m in sink.wait_for(2, timeout=30)]
        warning = [m for m in msgs if m["X-Gpualert-Status"] == "WARNING"][0]
        final = [m for m in msgs if m["X-Gpualert-Status"] == "SUCCESS"][0]
        ids = {m["Message-ID"] for m in msgs}
        self.assertEqual(len(ids), 2)
        later, earlier = (final, warning) if final["In-Reply-To"] else (warning, final)
        self.assertEqual(later["In-Reply-To"], earlier["Message-ID"])
        self.assertEqual(later["References"], earlier["Message-ID"])
        text = warning.get_body(("plain",)).get_content()
        self.assertIn("ready", text)
        self.assertRegex(text, r"Command:\s+\S*python\S* -c")
        start_line = [l for l in text.splitlines() if "Started:" in l][0]
        self.assertIn(time.strftime("%H:%M:%S", time.localtime(started))[:5], start_line)
        self.assertRegex(text, r"Duration:\s+[1-9]\d*s")
        body = final.get_body(("plain",)).get_content()
        self.assertIn("earlier notice: WARNING at", body)
        self.assertRegex(body, r"SIGUSR1 at [\d:]+ was passed on to the job; it then wrote \S*ckpt.pt")


class TestArraySummary(unittest.TestCase):
    def test_subject_counts_and_every_task_listed(self):
        r = REPRESENTATIVE["array_summary"]()
        self.assertEqual(N.render_subject(r), "[gpualert] FAILED array 4301: 9 ok, 3 failed, 1 never reported "
                                              "(cuda_runtime 2, nan_loss 1) on gpu003")
        text = N.render_text(r, [])
        for task in range(12):
            self.assertRegex(text, r"\n  %d +(SUCCESS|FAILED) " % task)
        self.assertRegex(text, r"\n  12 +never reported .*scheduler: NODE_FAIL")
        self.assertIn("/home/ana/sweep/logs/task7/output.log", text)
        self.assertIn("loss 0.37", text)

    def test_a_task_that_never_reported_completes_the_set(self):
        d = tempfile.mkdtemp(prefix="gpualert-array-")
        self.addCleanup(shutil.rmtree, d, True)
        s = N.ArraySummary(d, "55", task_count=3)
        self.assertIsNone(s.record(0, "SUCCESS", ended_elsewhere=lambda: {"1": "RUNNING"}))
        summary = s.record(2, "FAILED", "nccl", ended_elsewhere=lambda: {"0": "COMPLETED", "1": "NODE_FAIL"})
        self.assertEqual(summary["missing"], [("1", "NODE_FAIL")])
        self.assertIn("1 never reported", N.array_subject(summary))

    def test_sacct_states_of_array_tasks(self):
        out = "4301_0|COMPLETED|0:0\n4301_1|RUNNING|0:0\n4301_[2-5]|PENDING|0:0\n4301_6|NODE_FAIL|0:0\n"
        self.assertEqual(N.slurm_array_ended("4301", run=lambda argv: (0, out)),
                         {"0": "COMPLETED", "6": "NODE_FAIL"})
        self.assertEqual(N.slurm_array_ended("4301", run=lambda argv: None), {})


class TestArrayEndToEnd(unittest.TestCase):
    """Real wrapper runs as tasks of one (simulated) Slurm array, a real SMTP server."""

    def setUp(self):
        self.sink = _smtp_sink(self)
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="gpualert-array-"))
        self.addCleanup(shutil.rmtree, str(self.tmp), True)

    def task(self, n, count, code, *extra):
        from wrapper_helpers import PY, SCRIPT, child, isolated_env
        env = isolated_env(self.tmp, SLURM_JOB_ID=str(4400 + n), SLURM_ARRAY_JOB_ID="4400",
                           SLURM_ARRAY_TASK_ID=str(n), SLURM_ARRAY_TASK_COUNT=str(count),
                           GPUALERT_SENDMAIL="none")
        args = ["--log-dir", str(self.tmp / "logs"), "--outbox", str(self.tmp / "outbox"),
                "--to", "o@example.org", "--smtp", self.sink.addr] + list(extra) + ["--"]
        return subprocess.run([PY, SCRIPT] + args + child(code), env=env, cwd=str(self.tmp),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)

    def test_one_summary_past_the_hourly_cap_and_no_foreign_files(self):
        from wrapper_helpers import PY, SCRIPT, child, isolated_env
        env = isolated_env(self.tmp, GPUALERT_SENDMAIL="none")
        subprocess.run([PY, SCRIPT, "--smtp", self.sink.addr, "--to", "o@example.org", "--max-per-hour", "1",
                        "--log-dir", str(self.tmp / "logs"), "--"] + child("pass"), env=env, timeout=60)
        self.assertEqual(len(self.sink.wait_for(1)), 1)  # the hourly cap of 1 is used up
        for n in range(4):
            code = ("import sys; open('metrics-%d.jsonl', 'w').write('{}'); "
                    "print('step=10 loss=%.2f'); sys.exit(%d)" % (n, 0.5 + n, 1 if n == 2 else 0))
            proc = self.task(n, 4, code, "--array-summary", "--max-per-hour", "1")
            self.assertEqual(proc.returncode, 1 if n == 2 else 0, proc.stderr)
        msgs = self.sink.wait_for(2, timeout=30)
        self.assertEqual(len(msgs), 2, [m.data[:200] for m in msgs])
        summary = email.message_from_bytes(msgs[1].data, policy=email.policy.default)
        self.assertTrue(summary["Subject"].startswith("[gpualert] FAILED array 4400: 3 ok, 1 failed"), summary["Subject"])
        text = summary.get_body(("plain",)).get_content()
        for n in range(4):
            self.assertRegex(text, r"\n  %d +(SUCCESS|FAILED) " % n)
        self.assertIn("loss 1.5", text)
        self.assertEqual([a.get_filename() for a in summary.iter_attachments()], [])

    def test_each_sends_the_tasks_too_without_other_tasks_files(self):
        for n in range(2):
            self.task(n, 2, "open('metrics-%d.jsonl', 'w').write('{}'); print('done')" % n,
                      "--array-summary=each")
        msgs = [email.message_from_bytes(m.data, policy=email.policy.default)
                for m in self.sink.wait_for(3, timeout=30)]
        self.assertEqual(len(msgs), 3)
        self.assertEqual(sum(1 for m in msgs if "array 4400:" in m["Subject"]), 1)
        for m in msgs:
            names = [a.get_filename() for a in m.iter_attachments()]
            self.assertFalse([x for x in names if x.startswith("metrics-")], names)


class TestOptions(unittest.TestCase):
    def test_array_summary_values(self):
        cli = N.parse_command_line(["--array-summary=each", "--", "true"])
        self.assertEqual(cli.flags["array_summary"], "each")
        cli = N.parse_command_line(["--array-summary", "--", "true"])
        self.assertIs(cli.flags["array_summary"], True)
        with self.assertRaises(N.UsageError):
            N.parse_command_line(["--array-summary=sometimes", "--", "true"])

    def test_durations_have_a_sane_maximum(self):
        # --smtp-timeout 1e12 was accepted, then delivery failed with an OverflowError.
        for flag, value in (("--smtp-timeout", "1e12"), ("--timeout", "400d"),
                            ("--stall", "9000:00:00"), ("--gpu-interval", "1e300")):
            with self.assertRaises(N.UsageError):
                N.parse_command_line([flag, value, "--", "true"])
        cli = N.parse_command_line(["--smtp-timeout", "600", "--timeout", "366d", "--", "true"])
        self.assertEqual(cli.flags["timeout"], 366 * 86400.0)


class TestHostile(unittest.TestCase):
    """Inputs a shared cluster produces: absurd values, giant lines, crowded folders."""

    def test_absurd_metric_values_still_give_the_full_message(self):
        text = "".join("step=%d loss=%s\n" % (i, v) for i, v in enumerate(
            ["1e308", "-1e308", "nan", "inf", "5", "-inf", "1e308"]))
        r = REPRESENTATIVE["success_with_metrics"]()._replace(metrics=N.metrics_from_chunks([text]))
        msg, _ = N.build_message(r, dict(N.default_config(), to=["a@b.c"]))
        plain = msg.get_body(("plain",)).get_content()
        self.assertIn("What you need:", plain)
        self.assertIn("loss", plain)
        self.assertNotIn("rendering failed", msg["Subject"])

    def test_a_log_without_line_breaks(self):
        d = tempfile.mkdtemp(prefix="gpualert-hostile-")
        self.addCleanup(shutil.rmtree, d, True)
        path = os.path.join(d, "output.log")
        with open(path, "wb") as f:
            f.write(b"loss=1.0 " * (4 * 1024 * 1024 // 9))  # one 4 MiB line (a tqdm bar never ended)
        t = time.perf_counter()
        self.assertEqual(N.extract_log_metrics(path), {})
        self.assertLess(time.perf_counter() - t, 5.0)  # generous: bounded work, not a timing claim

    def test_newest_checkpoint_and_a_crowded_folder(self):
        d = tempfile.mkdtemp(prefix="gpualert-ckpt-")
        self.addCleanup(shutil.rmtree, d, True)
        crowd = os.path.join(d, "data")
        os.makedirs(crowd)
        for i in range(N.CHECKPOINT_MAX_SCAN + 500):
            open(os.path.join(crowd, "x%05d.npy" % i), "w").close()
        os.makedirs(os.path.join(d, "ckpt"))
        old = os.path.join(d, "ckpt", "step_100.pt")
        new = os.path.join(d, "ckpt", "step_200.pt")
        for path, age in ((old, 100), (new, 10)):
            with open(path, "wb") as f:
                f.write(b"w")
            os.utime(path, (time.time() - age, time.time() - age))
        found = N.newest_checkpoint(d, time.time() - 1000)
        self.assertEqual(found["path"], new)
        self.assertIsNone(N.newest_checkpoint(d, time.time() + 1000))  # older than the run: not its

    def test_log_attachments_are_text(self):
        item = N._item("output.log", b"x", [])
        self.assertEqual((item["maintype"], item["subtype"]), ("text", "plain"))
        self.assertEqual(N._item("metrics.jsonl", b"{}", [])["maintype"], "text")
        self.assertEqual(N._item("output.log.gz", b"x", [])["subtype"], "gzip")

    def test_byte_counts_are_readable(self):
        self.assertEqual(N.readable_bytes("tried to allocate 68719476736 bytes"),
                         "tried to allocate 64.0 GiB (68719476736 bytes)")
        self.assertEqual(N.readable_bytes("read 512 bytes"), "read 512 bytes")


class TestOwnCtrlC(unittest.TestCase):
    """A person presses Ctrl-C at the terminal the run started from (a real pty)."""

    def run_at_terminal(self, *options):
        import pty
        import select
        sink = _smtp_sink(self)
        from wrapper_helpers import PY, SCRIPT, isolated_env
        tmp = tempfile.mkdtemp(prefix="gpualert-ctrlc-")
        self.addCleanup(shutil.rmtree, tmp, True)
        env = isolated_env(pathlib.Path(tmp), GPUALERT_SENDMAIL="none")
        argv = [PY, SCRIPT, "--smtp", sink.addr, "--to", "o@example.org", "--log-dir", tmp + "/logs",
                "--outbox", tmp + "/outbox"] + list(options) + [
                "--", PY, "-c", "import time; print('ready', flush=True); time.sleep(60)"]
        pid, master = pty.fork()
        if pid == 0:  # the child: a session whose controlling terminal is the pty
            os.execve(PY, argv, env)
        out, deadline = b"", time.monotonic() + 30
        while b"ready" not in out and time.monotonic() < deadline:
            if select.select([master], [], [], 0.5)[0]:
                out += os.read(master, 4096)
        os.write(master, b"\x03")  # the terminal's interrupt character: SIGINT from the kernel
        while time.monotonic() < deadline:
            if select.select([master], [], [], 0.5)[0]:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    break
                if not chunk:
                    break
                out += chunk
        _, status = os.waitpid(pid, 0)
        os.close(master)
        return os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1, out, sink

    def test_no_mail_for_your_own_ctrl_c(self):
        code, out, sink = self.run_at_terminal()
        self.assertEqual(code, 130, out)
        self.assertIn(b"your own Ctrl-C", out)
        self.assertEqual(sink.wait_for(1, timeout=1.0), [])

    def test_notify_always_given_sends_it(self):
        code, out, sink = self.run_at_terminal("--notify", "always")
        self.assertEqual(code, 130, out)
        self.assertEqual(len(sink.wait_for(1, timeout=10)), 1)


class TestCli(unittest.TestCase):
    def run_cli(self, *args, **env):
        from wrapper_helpers import PY, SCRIPT, isolated_env
        tmp = tempfile.mkdtemp(prefix="gpualert-cli-")
        self.addCleanup(shutil.rmtree, tmp, True)
        e = isolated_env(pathlib.Path(tmp), **env)
        return subprocess.run([PY, SCRIPT] + list(args), env=e, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True, timeout=60)

    def test_help_subcommand(self):
        proc = self.run_cli("help")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("Synopsis", proc.stdout)

    def test_config_says_what_would_really_be_used(self):
        proc = self.run_cli("config", "--smtp", "relay.example.org:587", USER="carol", LOGNAME="carol")
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn("would deliver: smtp relay.example.org:587", proc.stdout)
        self.assertIn("would send to: carol", proc.stdout)
        self.assertRegex(proc.stdout, r"budget\s+= \d+\.\d MiB \(\d+ bytes\)")
        proc = self.run_cli("config")  # the test environment says --sendmail none
        self.assertIn("would deliver: outbox", proc.stdout)


class TestArrayWithoutAccounting(unittest.TestCase):
    """Slurm with AccountingStorageType=accounting_storage/none: sacct refuses, squeue
    answers. Nine tasks fail, one never reports (its node died): one summary, not none."""

    def setUp(self):
        self.sink = _smtp_sink(self)
        self.tmp = pathlib.Path(tempfile.mkdtemp(prefix="gpualert-array-noacct-"))
        self.addCleanup(shutil.rmtree, str(self.tmp), True)
        self.bin = self.tmp / "slurm-bin"
        self.bin.mkdir()
        for name, body in (
                ("sacct", 'echo "sacct: error: Slurm accounting storage is disabled" >&2; exit 1'),
                # the asking task and those still pending; task 9 (its node died) has left
                ("squeue", 'i=$SLURM_ARRAY_TASK_ID; while [ $i -le 8 ]; do '
                           'echo "4500_$i PENDING"; i=$((i+1)); done')):
            path = self.bin / name
            path.write_text("#!/bin/sh\n%s\n" % body)
            path.chmod(0o755)

    def test_a_task_that_never_reports_does_not_silence_the_summary(self):
        from wrapper_helpers import PY, SCRIPT, child, isolated_env
        for n in range(9):
            env = isolated_env(self.tmp, SLURM_JOB_ID=str(4500 + n), SLURM_ARRAY_JOB_ID="4500",
                               SLURM_ARRAY_TASK_ID=str(n), SLURM_ARRAY_TASK_COUNT="10",
                               SLURM_ARRAY_TASK_MIN="0", SLURM_ARRAY_TASK_MAX="9",
                               SLURM_ARRAY_TASK_STEP="1")
            env["PATH"] = str(self.bin) + os.pathsep + env["PATH"]
            proc = subprocess.run(
                [PY, SCRIPT, "--log-dir", str(self.tmp / "logs"), "--outbox", str(self.tmp / "outbox"),
                 "--to", "o@example.org", "--smtp", self.sink.addr, "--array-summary", "--"] +
                child("raise SystemExit(1)"), env=env, cwd=str(self.tmp), stdout=subprocess.PIPE,
                stderr=subprocess.PIPE, timeout=60)
            self.assertEqual(proc.returncode, 1, proc.stderr)
        msgs = self.sink.wait_for(1, timeout=30)
        self.assertEqual(len(msgs), 1, [m.data[:600] for m in msgs])
        summary = email.message_from_bytes(msgs[0].data, policy=email.policy.default)
        self.assertIn("9 failed, 1 never reported", summary["Subject"])
        self.assertIn("not in the queue", summary.get_body(("plain",)).get_content())

    def test_the_queue_answers_only_for_tasks_it_no_longer_lists(self):
        def run(argv):
            if argv[0] == "sacct":
                return (1, "")
            return (0, "4501_2 RUNNING\n4501_3 PENDING\n")
        self.assertEqual(N.slurm_array_ended("4501", run=run, task_ids=["0", "1", "2", "3"]),
                         {"0": "ended, not in the queue (no accounting to say how)",
                          "1": "ended, not in the queue (no accounting to say how)"})
        self.assertEqual(N.slurm_array_ended("4501", run=lambda argv: (0, ""), task_ids=["0"]), {})
        self.assertEqual(N.slurm_array_ended("4501", run=run, task_ids=None), {})
        self.assertIsNone(N.array_task_ids({"SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "9",
                                            "SLURM_ARRAY_TASK_COUNT": "4"}))
        self.assertEqual(N.array_task_ids({"SLURM_ARRAY_TASK_MIN": "1", "SLURM_ARRAY_TASK_MAX": "7",
                                           "SLURM_ARRAY_TASK_STEP": "3"}), ["1", "4", "7"])

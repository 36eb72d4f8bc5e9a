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

import pytest

from _load import load_gpualert
from messages import REPRESENTATIVE


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


N = load_gpualert()


# ---- numbers in the summary and the picture ----

def test_numbers_past_the_largest_unit_are_scientific():
    assert N.format_number(1e15) == "1e+15"
    assert N.format_number(-1e308) == "-1e+308"
    assert N.format_number(2.5e13) == "2.5e+13"
    assert N.format_number(1.5e9) == "1.5G"  # the units still serve the ordinary range
    assert N.format_number(123456) == "123k"


def _series(values):
    points = [[i, v] for i, v in enumerate(values)]
    return {"points": points, "direction": "min", "x": "step",
            "first": {"x": 0, "value": values[0]}, "last": {"x": len(values) - 1, "value": values[-1]}}


@pytest.mark.parametrize("values", [
    [1.0 / (i + 1) for i in range(30)],                # ends at 0.03333: a 7-character tick
    [-1.0 / (i + 1) for i in range(30)],               # -0.03333: 8 characters
    [1e15 / (i + 1) for i in range(30)],
])
def test_every_tick_label_is_inside_the_picture(values):
    """The y tick labels were drawn right-aligned to the axis whatever their width: `0.03333`
    lost its first digit, `-1.23e-05` three characters, off the left edge."""
    metrics = {"main": ["loss"], "series": {"loss": _series(values)}}
    png, layout = N.render_plot(metrics, {})
    w, h, rows = decode_png(png)
    ink = N.PLOT_PALETTE[1]
    left_edge = [y for y in range(h) if ink in rows[y][:2]]
    assert left_edge == [], "ink touches the left edge at rows %s" % left_edge[:5]


def test_a_recovered_nan_is_not_shaded_to_the_end():
    text = "".join("step=%d loss=%s\n" % (s, "nan" if s == 200 else 2.0 - s / 1000.0)
                   for s in range(20, 620, 20))
    series = N.metrics_from_chunks([text])["series"]["loss"]
    assert series["nonfinite"] == 1 and "first_nonfinite_x" not in series


if __name__ == "__main__":
    unittest.main()

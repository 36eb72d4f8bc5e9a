# ==== Notify ====
"""Notification part of gpualert: artifacts, attachment budget, rendering, message, delivery, outbox.

Spliced into gpualert.py by the lead. Stdlib only; heavy modules are imported inside functions.
Public names: find_artifacts, plan_attachments, render_subject, render_text, render_html,
build_message, deliver, save_to_outbox, resend_outbox, cmd_resend, cmd_test_email.
"""
import collections
import errno
import io
import os
import re
import stat
import subprocess
import sys
import threading
import time

# -- interface copy: removed on splice --
Classification = collections.namedtuple(
    "Classification", "cls rule detail line evidence remediation")
RunResult = collections.namedtuple(
    "RunResult", "status name argv host cwd start end exit_code exit_status "
    "signal_name classification log_path run_dir tail rusage scheduler notes gpu")
# -- end interface copy --

#: Bound on the whole delivery (DNS, connect, TLS, AUTH, DATA, the 552 retry), seconds.
MAIL_TIMEOUT_S = 30.0
#: Default size bound of one serialized message (CRLF line ends, base64 included), bytes.
MAIL_BUDGET_BYTES = 10 * 1024 * 1024
#: Default artifact discovery: result-like names under cwd, new or changed since the start.
ARTIFACT_PATTERNS = ("*.json", "*.jsonl", "*.csv", "*.tsv", "*.yaml", "*.yml", "*.txt",
                     "*.md", "*.log", "*.png", "*.jpg", "*.jpeg", "*.svg", "*.pdf", "*.html")
ARTIFACT_SKIP_DIRS = frozenset((".git", ".hg", ".svn", "__pycache__", ".venv", "venv", "env",
                                "node_modules", ".cache", "wandb", ".ipynb_checkpoints",
                                "site-packages", ".tox", ".mypy_cache", ".pytest_cache"))
ARTIFACT_MAX_DEPTH = 5        # cwd is depth 0; reaches Hydra's outputs/DATE/TIME/.hydra/
ARTIFACT_MAX_SCAN = 5000      # directory entries examined, at most
ARTIFACT_MAX_FILES = 200      # candidates returned, at most
ARTIFACT_MTIME_SLACK_S = 2.0  # coarse file-system timestamps (FAT, some NFS) round down
ATTACH_MAX_FILES = 20         # individual attachments; more go into one zip
ZIP_MAX_MEMBERS = 200
ZIP_MEMBER_MAX_BYTES = 64 * 1024 * 1024   # never read a bigger file into the zip
GZIP_MAX_INPUT_BYTES = 512 * 1024 * 1024  # never gzip a bigger log (time bound)
GZIP_MAX_RATIO = 40           # a log this much bigger than the room left will not fit gzipped
LOG_EXCERPT_HEAD_BYTES = 64 * 1024
PART_OVERHEAD_BYTES = 400     # MIME headers + boundary of one attachment part
BODY_SAFETY_BYTES = 4096      # slack for header folding and manifest estimate errors
SUBJECT_MAX_CHARS = 200
TAIL_LINE_MAX_CHARS = 500
RESEND_MAX_S = 300.0          # bound on one `resend` run
SENDMAIL_CANDIDATES = ("/usr/sbin/sendmail", "/usr/lib/sendmail")
_CONTROL_RE = re.compile(u"[\x00-\x1f\x7f-\x9f\u2028\u2029]+")
_TAIL_CONTROL_RE = re.compile(u"[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029]")
SendResult = collections.namedtuple("SendResult", "ok detail size_rejected transport_down")


class _ArtifactList(list):
    """A list of paths that remembers whether discovery stopped at a bound."""
    truncated = False


# ---- small pure helpers ----

def _clean(value, limit=None):
    """One line of text: control characters (CR, LF, ESC...) become spaces; bounded length."""
    if value is None:
        return ""
    text = _CONTROL_RE.sub(" ", str(value))
    text = re.sub(r"\s{2,}", " ", text).strip()
    if limit and len(text) > limit:
        text = text[:max(0, limit - 3)] + "..."
    return text


def _describe(exc):
    """An exception as one short line."""
    text = _clean(exc, 300) or repr(exc)
    return "%s: %s" % (type(exc).__name__, text)


def _format_size(n):
    if n is None:
        return "?"
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return ("%d %s" % (value, unit)) if unit == "B" else ("%.1f %s" % (value, unit))
        value /= 1024.0


def _format_duration(seconds):
    """12m, 2h13m, 45s; None -> '?'."""
    if seconds is None:
        return "?"
    s = int(max(0, seconds))
    if s < 60:
        return "%ds" % s
    if s < 3600:
        return "%dm" % (s // 60)
    return "%dh%02dm" % (s // 3600, (s % 3600) // 60)


def _format_time(epoch):
    if not epoch:
        return "-"
    return time.strftime("%Y-%m-%d %H:%M:%S %z", time.localtime(epoch))


def _classification(result):
    c = getattr(result, "classification", None)
    if c is None:
        return Classification(None, None, None, None, None, None)
    return c


def _duration_s(result):
    if not result.start:
        return None
    end = result.end if result.end else time.time()
    return end - result.start


def _exit_brief(result):
    """'exit 1', 'SIGSEGV', 'running', 'not started'."""
    if result.signal_name:
        return _clean(result.signal_name, 16)
    if result.exit_code is not None:
        return "exit %d" % result.exit_code
    if result.status == "STALLED" or result.end is None:
        return "running"
    return "not started"


def _job_label(sched):
    """'4242_7' for an array task, else the job id, else ''."""
    sched = sched or {}
    if sched.get("array_job_id") and sched.get("array_task_id") not in (None, ""):
        return _clean("%s_%s" % (sched["array_job_id"], sched["array_task_id"]), 40)
    return _clean(sched.get("job_id"), 40)


def _hostname():
    import socket
    name = re.sub(r"[^A-Za-z0-9.-]", "", socket.gethostname() or "")
    return name or "localhost"


def _shell_command(argv):
    import shlex
    return _clean(" ".join(shlex.quote(str(a)) for a in (argv or [])), 2000)


# ==== Artifacts ====

def find_artifacts(cwd, globs, since, exclude=()):
    """Candidate artifact files (absolute paths) for the message; stat only, never reads content.

    With globs (relative to cwd, `**` allowed): every regular file they match. Without: files
    under cwd matching ARTIFACT_PATTERNS created or modified at/after `since`, skipping VCS,
    venv and cache folders, bounded by ARTIFACT_MAX_DEPTH/SCAN/FILES. Paths under `exclude`
    (the run dir, the log dir) are left out. The list's .truncated is True if a bound was hit.
    """
    skip = [os.path.realpath(p) for p in exclude if p]
    if not cwd or not os.path.isdir(cwd):
        return _ArtifactList()
    found = _glob_artifacts(cwd, globs) if globs else _scan_artifacts(cwd, since)
    out = _ArtifactList(p for p in found if not _is_under(os.path.realpath(p), skip))
    out.truncated = found.truncated
    return out


def _is_under(path, dirs):
    for d in dirs:
        if path == d or path.startswith(d.rstrip(os.sep) + os.sep):
            return True
    return False


def _glob_artifacts(cwd, globs):
    import glob
    out, seen = _ArtifactList(), set()
    for pattern in globs:
        full = os.path.join(cwd, os.path.expanduser(pattern))
        for path in glob.iglob(full, recursive=True):
            if len(out) >= ARTIFACT_MAX_FILES:
                out.truncated = True
                return out
            path = os.path.abspath(path)
            if path not in seen and os.path.isfile(path):
                seen.add(path)
                out.append(path)
    return out


def _scan_artifacts(cwd, since):
    """Breadth-first walk (shallow results first) with bounded depth, entries and results."""
    import itertools
    out, queue, scanned = _ArtifactList(), collections.deque([(cwd, 0)]), 0
    cutoff = (since or 0) - ARTIFACT_MTIME_SLACK_S
    while queue:
        folder, depth = queue.popleft()
        try:
            with os.scandir(folder) as it:
                entries = sorted(itertools.islice(it, ARTIFACT_MAX_SCAN - scanned + 1),
                                 key=lambda e: e.name)
        except OSError:
            continue
        for entry in entries:
            scanned += 1
            if scanned > ARTIFACT_MAX_SCAN or len(out) >= ARTIFACT_MAX_FILES:
                out.truncated = True
                return out
            _consider_entry(entry, depth, cutoff, queue, out)
    return out


def _consider_entry(entry, depth, cutoff, queue, out):
    import fnmatch
    try:
        if entry.is_symlink():  # never follow: loops, and links to datasets/checkpoints
            return
        if entry.is_dir():
            if depth + 1 < ARTIFACT_MAX_DEPTH and entry.name not in ARTIFACT_SKIP_DIRS \
                    and not entry.name.endswith(".egg-info"):
                queue.append((entry.path, depth + 1))
            return
        name = entry.name.lower()
        if not entry.is_file() or not any(fnmatch.fnmatchcase(name, p) for p in ARTIFACT_PATTERNS):
            return
        st = entry.stat()
        if max(st.st_mtime, st.st_ctime) >= cutoff:
            out.append(os.path.abspath(entry.path))
    except OSError:
        pass


# ==== Attachment budget ====

def _attach_cost(nbytes, filename):
    """Serialized size of one base64 attachment part: 4/3, CRLF every 76 chars, headers."""
    b64 = 4 * ((nbytes + 2) // 3)
    return b64 + 2 * ((b64 + 75) // 76) + PART_OVERHEAD_BYTES + 6 * len(filename.encode("utf-8"))


def _raw_capacity(allowance, filename):
    """The most raw bytes whose attachment part fits in `allowance` serialized bytes."""
    fixed = PART_OVERHEAD_BYTES + 6 * len(filename.encode("utf-8"))
    if allowance <= fixed + 8:
        return 0
    n = int((allowance - fixed) * 3 * 76 / (4.0 * 78))
    while n > 0 and _attach_cost(n, filename) > allowance:
        n -= 3
    return max(0, n)


def _row(path, base, kind):
    if base and path and _is_under(os.path.abspath(path), [os.path.abspath(base)]):
        name = os.path.relpath(path, base)
    else:
        name = path or "-"
    return {"name": name, "path": path, "size": None, "disposition": "", "kind": kind}


def _item(filename, data, rows):
    import mimetypes
    ctype = mimetypes.guess_type(filename)[0] or "application/octet-stream"
    if filename.endswith(".gz"):
        ctype = "application/gzip"
    maintype, subtype = ctype.split("/", 1)
    return {"filename": filename, "data": data, "maintype": maintype, "subtype": subtype,
            "cost": _attach_cost(len(data), filename), "rows": rows}


def _read_at_most(path, size):
    with open(path, "rb") as f:
        return f.read(size)


def plan_attachments(log_path, artifacts, budget, base=None):
    """Decide what to attach within `budget` serialized bytes (attachment parts only).

    Returns (plan, manifest). plan: list of dicts {filename, data, maintype, subtype, cost, rows}.
    manifest: one dict {name, path, size, disposition, kind} per candidate (the log first), so
    nothing is dropped silently. Sizes come from stat before any file is opened; a file is read
    only when its stat size says it can fit. The log is always represented: whole, gzip'd,
    or a head+tail excerpt naming the full path.
    """
    budget = max(0, int(budget))
    infos, art_rows = _stat_artifacts(artifacts, base)
    small = [_attach_cost(s, os.path.basename(p)) for s, p, r in infos[:ATTACH_MAX_FILES]]
    reserve = min(sum(c for c in small if c <= budget), budget // 2)
    log_item, log_row = _plan_log(log_path, budget - reserve, base)
    plan = [log_item] if log_item else []
    left = budget - (log_item["cost"] if log_item else 0)
    plan.extend(_plan_files(infos, left))
    manifest = ([log_row] if log_row else []) + art_rows
    if getattr(artifacts, "truncated", False):
        note = _row(None, None, "note")
        note.update(name="(more files)", disposition="not listed: artifact search stopped at "
                    "%d files / %d entries" % (ARTIFACT_MAX_FILES, ARTIFACT_MAX_SCAN))
        manifest.append(note)
    return plan, manifest


def _stat_artifacts(paths, base):
    """[(size, path, row)] sorted by size for regular files; rows for all, in input order."""
    infos, rows = [], []
    for path in paths or ():
        row = _row(path, base, "artifact")
        rows.append(row)
        try:
            st = os.stat(path)
        except OSError as exc:
            row["disposition"] = "unreadable: %s" % (exc.strerror or exc)
            continue
        row["size"] = st.st_size
        if not stat.S_ISREG(st.st_mode):
            row["disposition"] = "not a regular file"
            continue
        infos.append((st.st_size, path, row))
    infos.sort(key=lambda t: (t[0], t[1]))
    return infos, rows


def _plan_log(log_path, allowance, base):
    if not log_path:
        return None, None
    row = _row(log_path, base, "log")
    try:
        row["size"] = os.stat(log_path).st_size
        return _log_item(log_path, row["size"], allowance, row), row
    except OSError as exc:
        row["disposition"] = "unreadable: %s (the last lines are in the body)" % (
            exc.strerror or exc)
        return None, row


def _log_item(path, size, allowance, row):
    name = os.path.basename(path) or "job.log"
    if _attach_cost(size, name) <= allowance:
        row["disposition"] = "attached"
        return _item(name, _read_at_most(path, size), [row])
    cap = _raw_capacity(allowance, name + ".gz")
    if cap >= 1024 and size <= min(GZIP_MAX_INPUT_BYTES, GZIP_MAX_RATIO * cap):
        data = _gzip_bounded(path, size, cap)
        if data is not None:
            row["disposition"] = "attached gzip-compressed as %s.gz (%s)" % (
                name, _format_size(len(data)))
            return _item(name + ".gz", data, [row])
    cap = _raw_capacity(allowance, name + ".excerpt.txt")
    if cap < 1024 + len(path.encode("utf-8")):
        row["disposition"] = "too large: %s (not attached; last lines in the body)" % path
        return None
    row["disposition"] = "excerpt attached (head+tail) as %s.excerpt.txt; full log: %s" % (
        name, path)
    return _item(name + ".excerpt.txt", _log_excerpt(path, size, cap), [row])


def _gzip_bounded(path, size, cap):
    """gzip the first `size` bytes of path in 1 MiB chunks; None as soon as it exceeds cap."""
    import gzip
    buf = io.BytesIO()
    gz = gzip.GzipFile(filename="", mode="wb", fileobj=buf, compresslevel=6, mtime=0)
    with open(path, "rb") as src:
        left = size
        while left > 0:
            chunk = src.read(min(1 << 20, left))
            if not chunk:
                break
            left -= len(chunk)
            gz.write(chunk)
            if buf.tell() > cap:
                return None
    gz.close()
    data = buf.getvalue()
    return data if len(data) <= cap else None


def _log_excerpt(path, size, cap):
    """Head and tail of the log, cut at line breaks, with a marker naming the full log."""
    room = cap - 300 - len(path.encode("utf-8"))
    head_n = min(LOG_EXCERPT_HEAD_BYTES, room // 4)
    tail_n = room - head_n
    with open(path, "rb") as f:
        head = f.read(head_n)
        f.seek(max(len(head), size - tail_n))
        tail = f.read(tail_n)
    if b"\n" in head:
        head = head[:head.rindex(b"\n") + 1]
    if b"\n" in tail[:-1]:
        tail = tail[tail.index(b"\n") + 1:]
    omitted = max(0, size - len(head) - len(tail))
    marker = "\n[... gpualert: %d bytes omitted here; the full log is %s ...]\n\n" % (
        omitted, path)
    return head + marker.encode("utf-8", "replace") + tail


def _plan_files(infos, allowance):
    """Attach the smallest files individually; the overflow goes into one zip."""
    items, overflow, used = [], [], set()
    for size, path, row in infos:
        name = _unique_name(os.path.basename(path), used)
        cost = _attach_cost(size, name)
        if len(items) >= ATTACH_MAX_FILES or cost > allowance:
            used.discard(name)
            overflow.append((size, path, row))
            continue
        try:
            data = _read_at_most(path, size)
        except OSError as exc:
            used.discard(name)
            row["disposition"] = "unreadable: %s" % (exc.strerror or exc)
            continue
        row["disposition"] = "attached" + ("" if name == os.path.basename(path)
                                           else " as %s" % name)
        items.append(_item(name, data, [row]))
        allowance -= items[-1]["cost"]
    zipped = _plan_zip(overflow, allowance)
    return items + ([zipped] if zipped else [])


def _unique_name(name, used):
    stem, ext = os.path.splitext(name or "file")
    candidate, n = name or "file", 1
    while candidate in used:
        n += 1
        candidate = "%s-%d%s" % (stem, n, ext)
    used.add(candidate)
    return candidate


def _plan_zip(overflow, allowance):
    cap = _raw_capacity(allowance, "artifacts.zip")
    members = []
    for size, path, row in overflow:
        if len(members) >= ZIP_MAX_MEMBERS:
            row["disposition"] = "over file count limit (%d attached + %d zipped)" % (
                ATTACH_MAX_FILES, ZIP_MAX_MEMBERS)
        elif cap < 1024 or size > min(ZIP_MEMBER_MAX_BYTES, 20 * cap):
            row["disposition"] = "too large: %s" % path
        else:
            members.append((size, path, row))
    if not members:
        return None
    data, rows = _build_zip(members, cap)
    return _item("artifacts.zip", data, rows) if rows else None


def _build_zip(members, cap):
    """Add members while the archive stays under cap (each compressed once to measure)."""
    import zipfile
    import zlib
    buf, rows = io.BytesIO(), []
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for size, path, row in members:
            try:
                raw = _read_at_most(path, size)
            except OSError as exc:
                row["disposition"] = "unreadable: %s" % (exc.strerror or exc)
                continue
            need = len(zlib.compress(raw, 6)) + 2 * (len(row["name"].encode("utf-8")) + 80)
            if buf.tell() + need + 22 + 60 * (len(rows) + 1) > cap:
                row["disposition"] = "too large: %s" % path
                continue
            zf.writestr(row["name"].replace(os.sep, "/").lstrip("/"), raw)
            row["disposition"] = "in zip (artifacts.zip)"
            rows.append(row)
    data = buf.getvalue()
    if len(data) > cap:
        for row in rows:
            row["disposition"] = "too large: %s" % row["path"]
        return data, []
    return data, rows


# ==== Rendering ====

def render_subject(result):
    """One filterable line: [gpualert] STATUS class: name on host (exit|signal, duration, job)."""
    status = _clean(result.status or "UNKNOWN", 20).upper().replace(" ", "_")
    cls = _clean(_classification(result).cls, 40).replace(" ", "_")
    head = "[gpualert] %s%s:" % (status, " " + cls if cls else "")
    where = "%s on %s" % (_clean(result.name, 60) or "job", _clean(result.host, 40) or "?")
    extra = [_exit_brief(result), _format_duration(_duration_s(result))]
    job = _job_label(result.scheduler)
    if job:
        extra.append("job " + job)
    return _clean("%s %s (%s)" % (head, where, ", ".join(extra)), SUBJECT_MAX_CHARS)


def _summary_rows(result):
    """(label, value) pairs shared by the text and HTML bodies; values are one line each."""
    c = _classification(result)
    cause = c.cls or ("none (clean exit)" if result.status == "SUCCESS" else "unknown")
    if c.rule and c.rule != c.cls:
        cause += " (rule %s)" % c.rule
    if c.detail:
        cause += ": " + str(c.detail)
    rows = [("Status", result.status), ("Cause", cause)]
    if c.evidence:
        rows.append(("Evidence", ("line %s: " % c.line if c.line else "") + str(c.evidence)))
    if c.remediation:
        rows.append(("Remedy", c.remediation))
    rows += [("Command", _shell_command(result.argv)), ("Host", result.host),
             ("Directory", result.cwd), ("Started", _format_time(result.start)),
             ("Ended", _format_time(result.end) if result.end else "(still running)"),
             ("Duration", _format_duration(_duration_s(result))), ("Exit", _exit_long(result))]
    rows += _resource_rows(result.rusage or {}) + _scheduler_rows(result.scheduler or {})
    rows.append(("Log", result.log_path or "(none)"))
    if result.run_dir:
        rows.append(("Run record", os.path.join(result.run_dir, "run.json")))
    if result.gpu:
        rows.append(("GPU", _format_mapping(result.gpu)))
    return [(label, _clean(value, 2000)) for label, value in rows]


def _exit_long(result):
    if result.signal_name:
        text = "killed by %s" % result.signal_name
    elif result.exit_code is not None:
        text = "exit code %d" % result.exit_code
    else:
        text = _exit_brief(result)
    if result.exit_status is not None:
        text += " (wrapper exit status %s)" % result.exit_status
    return text


def _resource_rows(rusage):
    rows = []
    if rusage.get("maxrss_kib"):
        rows.append(("Peak RSS", _format_size(int(rusage["maxrss_kib"]) * 1024)))
    if "utime_s" in rusage or "stime_s" in rusage:
        rows.append(("CPU time", "user %.1f s, system %.1f s" % (
            float(rusage.get("utime_s") or 0), float(rusage.get("stime_s") or 0))))
    return rows


def _scheduler_rows(sched):
    if not sched:
        return []
    parts = ["%s job %s" % (sched.get("kind") or "scheduler", _job_label(sched) or "?")]
    for key in ("job_name", "partition", "nodelist", "account", "submit_dir"):
        if sched.get(key):
            parts.append("%s %s" % (key.replace("_", " "), sched[key]))
    return [("Scheduler", ", ".join(parts))]


def _format_mapping(value, limit=600):
    if isinstance(value, dict):
        text = ", ".join("%s=%s" % (k, _format_mapping(v, 120)) for k, v in sorted(value.items()))
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(_format_mapping(v, 120) for v in value) + "]"
    else:
        text = str(value)
    return _clean(text, limit)


def _tail_lines(result):
    out = []
    for line in result.tail or ():
        line = _TAIL_CONTROL_RE.sub("", str(line).rstrip("\r\n"))
        out.append(line[:TAIL_LINE_MAX_CHARS] + (" [...]" if len(line) > TAIL_LINE_MAX_CHARS
                                                 else ""))
    return out


def _is_evidence(line, evidence):
    ev = (evidence or "").strip()
    return bool(ev) and (ev in line or line.strip() in ev and len(line.strip()) > 10)


def _manifest_lines(manifest):
    if not manifest:
        return ["  (none)"]
    return ["  %-40s %10s  %s" % (r["name"], _format_size(r["size"]), r["disposition"])
            for r in manifest]


def render_text(result, manifest):
    """The plain-text body (pure)."""
    c = _classification(result)
    lines = [render_subject(result)[len("[gpualert] "):], ""]
    lines += ["%-11s %s" % (label + ":", value) for label, value in _summary_rows(result)]
    if result.notes:
        lines += ["", "Notes:"] + ["  - " + _clean(n, 1000) for n in result.notes]
    tail = _tail_lines(result)
    lines += ["", "Last %d lines of output (>> marks the evidence line):" % len(tail)]
    lines += [(">> " if _is_evidence(t, c.evidence) else "   ") + t for t in tail]
    lines += ["", "Attachments and artifacts:"] + _manifest_lines(manifest)
    return "\n".join(lines) + "\n"


def render_html(result, manifest):
    """The HTML alternative (pure): a table, evidence highlighted, tail in <pre>."""
    import html
    esc = html.escape
    c = _classification(result)
    color = {"SUCCESS": "#1a7f37", "COMPLETED": "#9a6700", "TEST": "#0969da"}.get(
        result.status, "#cf222e")
    out = ['<html><body style="font-family:sans-serif">',
           '<h2 style="color:%s">%s</h2>' % (color, esc(render_subject(result)[11:])),
           '<table cellpadding="4" style="border-collapse:collapse">']
    for label, value in _summary_rows(result):
        style = ' style="background:#fff3b0"' if label == "Evidence" else ""
        value = "<code>%s</code>" % esc(value) if label in ("Evidence", "Command") else esc(value)
        out.append('<tr><th align="left" valign="top">%s</th><td%s>%s</td></tr>' % (
            esc(label), style, value))
    out.append("</table>")
    if result.notes:
        out.append("<h3>Notes</h3><ul>%s</ul>" % "".join(
            "<li>%s</li>" % esc(_clean(n, 1000)) for n in result.notes))
    tail = _tail_lines(result)
    out.append("<h3>Last %d lines of output</h3>" % len(tail))
    out.append('<pre style="background:#f6f8fa;padding:8px;font-size:12px">%s</pre>' % "\n".join(
        ('<mark>%s</mark>' % esc(t)) if _is_evidence(t, c.evidence) else esc(t) for t in tail))
    out.append("<h3>Attachments and artifacts</h3>" + _manifest_html(manifest))
    out.append("</body></html>")
    return "\n".join(out) + "\n"


def _manifest_html(manifest):
    import html
    if not manifest:
        return "<p>(none)</p>"
    rows = ["<tr><td>%s</td><td align=\"right\">%s</td><td>%s</td></tr>" % (
        html.escape(r["name"]), html.escape(_format_size(r["size"])),
        html.escape(r["disposition"])) for r in manifest]
    return ('<table cellpadding="3" border="1" style="border-collapse:collapse">'
            "<tr><th>file</th><th>size</th><th>disposition</th></tr>%s</table>" % "".join(rows))


# ==== Message ====

def build_message(result, cfg):
    """(EmailMessage, manifest) for a RunResult. Never raises: any internal error gives a
    minimal text message that says so. The serialized message stays within cfg budget."""
    try:
        return _build_full(result, cfg)
    except Exception as exc:  # a rendering bug must not cost the user the notification
        return _build_minimal(result, cfg, exc), []


def _build_full(result, cfg):
    budget = int(cfg.get("budget") or MAIL_BUDGET_BYTES)
    artifacts = _collect_artifacts(result, cfg)
    probe = [{"name": "x" * 50, "size": 0, "disposition": "y" * 90, "path": None}] * (
        len(artifacts) + 2)
    body_cost = _wire_size(_assemble(result, cfg, [], probe)) + BODY_SAFETY_BYTES
    log_path = None if result.status == "TEST" else result.log_path
    plan, manifest = plan_attachments(log_path, artifacts, budget - body_cost, base=result.cwd)
    msg = _fit_budget(result, cfg, plan, manifest, budget)
    msg.gpualert_slim = lambda reason: _slim_rebuild(result, cfg, manifest, reason, msg)
    return msg, manifest


def _collect_artifacts(result, cfg):
    if result.status in ("TEST", "STALLED"):
        return []
    skip = [result.run_dir, os.path.dirname(result.log_path or "")]
    try:
        return find_artifacts(result.cwd, cfg.get("artifacts") or (), result.start, skip)
    except Exception:  # discovery is best effort; the log and the body still go out
        return []


def _assemble(result, cfg, plan, manifest, html=True):
    from email.message import EmailMessage
    msg = EmailMessage()
    _set_headers(msg, result, cfg)
    msg.set_content(render_text(result, manifest), subtype="plain", cte="quoted-printable")
    if html:
        msg.add_alternative(render_html(result, manifest), subtype="html", cte="quoted-printable")
    for it in plan:
        msg.add_attachment(it["data"], maintype=it["maintype"], subtype=it["subtype"],
                           filename=it["filename"])
    return msg


def _fit_budget(result, cfg, plan, manifest, budget):
    """Assemble; while over budget drop the biggest attachment (saying so), then thin the body."""
    plan = list(plan)
    while True:
        msg = _assemble(result, cfg, plan, manifest)
        if _wire_size(msg) <= budget or not plan:
            break
        victim = max(plan, key=lambda it: it["cost"])
        plan.remove(victim)
        for row in victim["rows"]:
            row["disposition"] = "too large: %s (dropped to keep the message under %s)" % (
                row["path"], _format_size(budget))
    if _wire_size(msg) <= budget:
        return msg
    for keep in (None, 20, 0):  # only tiny budgets get here: text only, fewer tail lines
        thin = result if keep is None else result._replace(
            tail=list(result.tail or [])[-keep:] if keep else [])
        msg = _assemble(thin, cfg, [], manifest, html=False)
        if _wire_size(msg) <= budget:
            break
    return msg


def _set_headers(msg, result, cfg):
    from email.utils import formatdate, make_msgid
    host = _hostname()
    c = _classification(result)
    msg["From"] = _from_addr(cfg, host)
    msg["To"] = ", ".join(_recipients(cfg))
    msg["Subject"] = render_subject(result)
    msg["Date"] = formatdate(localtime=True)
    msg["Message-ID"] = make_msgid("gpualert", domain=host)  # domain given: no DNS lookup
    msg["Auto-Submitted"] = "auto-generated"
    msg["X-Gpualert-Status"] = _clean(result.status, 20) or "UNKNOWN"
    msg["X-Gpualert-Class"] = _clean(c.cls, 40) or "none"
    if _job_label(result.scheduler):
        msg["X-Gpualert-Job"] = _job_label(result.scheduler)
    if result.run_dir:
        msg["X-Gpualert-Run-Dir"] = _clean(result.run_dir, 500)


def _from_addr(cfg, host):
    if cfg.get("from_addr"):
        return _clean(cfg["from_addr"], 300)
    import getpass
    try:
        user = re.sub(r"[^A-Za-z0-9._+-]", "", getpass.getuser()) or "gpualert"
    except Exception:
        user = "gpualert"
    return "gpualert <%s@%s>" % (user, host)


def _recipients(cfg):
    to = cfg.get("to") or []
    if isinstance(to, str):
        to = to.split(",")
    out = [_clean(a, 300) for a in to if _clean(a)]
    if not out:  # like Slurm's --mail-user default: the submitting user, delivered locally
        import getpass
        try:
            out = [getpass.getuser()]
        except Exception:
            out = ["root"]
    return out


def _wire_size(msg):
    """Size as sent over SMTP (CRLF line ends)."""
    data = msg.as_bytes()
    return len(data) + data.count(b"\n") - data.count(b"\r\n")


def _slim_rebuild(result, cfg, manifest, reason, original):
    """The same message without attachments; every file row says why."""
    rows = []
    for row in manifest:
        row = dict(row)
        if row["path"] and row["disposition"].startswith(("attached", "in zip", "excerpt")):
            row["disposition"] = "not attached (%s): %s" % (reason, row["path"])
        rows.append(row)
    note = "Attachments removed: %s." % reason
    thin = result._replace(notes=[note] + list(result.notes or []))
    msg = _assemble(thin, cfg, [], rows)
    msg.replace_header("Message-ID", original["Message-ID"])
    return msg


def _build_minimal(result, cfg, exc):
    from email.message import EmailMessage
    msg = EmailMessage()
    try:
        msg["From"] = _from_addr(cfg, _hostname())
        msg["To"] = ", ".join(_recipients(cfg))
        msg["Subject"] = "[gpualert] %s: %s (message rendering failed)" % (
            _clean(getattr(result, "status", "?"), 20), _clean(getattr(result, "name", "?"), 60))
        msg["X-Gpualert-Status"] = _clean(getattr(result, "status", ""), 20) or "UNKNOWN"
        body = ["gpualert could not render the full message: %s" % _describe(exc), ""]
        for field in getattr(result, "_fields", ()):
            body.append("%s: %s" % (field, _clean(repr(getattr(result, field)), 2000)))
        msg.set_content("\n".join(body) + "\n", cte="quoted-printable")
    except Exception:
        pass
    return msg


# ==== Delivery ====

def deliver(msg, cfg):
    """Send msg with the configured transport; on any failure save it to the outbox.

    Returns {"outcome": "sent"|"outbox"|"dry-run", "transport": str, "detail": str,
    "outbox_path": str or None}. Bounded by cfg smtp_timeout overall. Never raises.
    """
    try:
        return _deliver(msg, cfg)
    except BaseException as exc:  # never let mail change the job's fate, not even Ctrl-C
        return _outbox_result(msg, cfg, "internal error: %s" % _describe(exc), "none")


def _outcome(outcome, transport, detail, path=None):
    return {"outcome": outcome, "transport": transport, "detail": detail, "outbox_path": path}


def _deliver(msg, cfg):
    data = msg if isinstance(msg, bytes) else msg.as_bytes()
    if cfg.get("dry_run"):
        path = _save_anywhere(data, _dry_run_dirs(cfg, data), "dry run")[0]
        return _outcome("dry-run", "none", "dry run: not sent; message saved to %s" % path, path)
    kind, where = _choose_transport(cfg)
    if kind in ("outbox", "missing"):
        return _outbox_result(data, cfg, where, "outbox" if kind == "outbox" else "sendmail")
    deadline = time.monotonic() + _mail_timeout(cfg)
    res = _send_with_slim_retry(msg, data, cfg, (kind, where), deadline)
    if res.ok:
        return _outcome("sent", kind, res.detail)
    return _outbox_result(data, cfg, res.detail, kind)


def _mail_timeout(cfg):
    try:
        return max(0.5, float(cfg.get("smtp_timeout") or MAIL_TIMEOUT_S))
    except (TypeError, ValueError):
        return MAIL_TIMEOUT_S


def _send_with_slim_retry(msg, data, cfg, transport, deadline):
    res = _send_bytes(data, cfg, transport, deadline)
    if res.ok or not res.size_rejected or time.monotonic() >= deadline:
        return res
    reason = "the relay rejected the message size: %s" % res.detail
    try:
        slim = _slim_message(msg, data, reason)
    except Exception as exc:
        return SendResult(False, "%s; slim message failed: %s" % (res.detail, _describe(exc)),
                          True, False)
    again = _send_bytes(slim, cfg, transport, deadline)
    if again.ok:
        return SendResult(True, "%s; sent WITHOUT attachments (%s)" % (again.detail, reason),
                          False, False)
    return SendResult(False, "%s; retry without attachments also failed: %s" % (
        res.detail, again.detail), True, again.transport_down)


def _slim_message(msg, data, reason):
    """Bytes of the message without attachments: rebuilt if we built it, else stripped."""
    hook = getattr(msg, "gpualert_slim", None)
    if hook is not None:
        return hook(reason).as_bytes()
    from email import policy
    from email.message import EmailMessage
    from email.parser import BytesParser
    parsed = BytesParser(policy=policy.default).parsebytes(data)
    names = ["%s" % (a.get_filename() or "unnamed") for a in parsed.iter_attachments()]
    body = parsed.get_body(("plain",))
    text = body.get_content() if body is not None else ""
    slim = EmailMessage()
    for key, value in parsed.items():
        if key.lower() not in ("content-type", "content-transfer-encoding", "mime-version",
                               "content-disposition"):
            slim[key] = value
    note = "NOTE: attachments removed (%s): %s\n\n" % (reason, ", ".join(names) or "none")
    slim.set_content(note + text, cte="quoted-printable")
    return slim.as_bytes()


def _choose_transport(cfg):
    """('smtp', hostport) | ('sendmail', path) | ('missing', why) | ('outbox', why)."""
    if cfg.get("smtp"):
        return "smtp", str(cfg["smtp"])
    asked = cfg.get("sendmail")
    path = asked or _find_sendmail()
    if path:
        return "sendmail", path
    if asked is not None:
        return "missing", "sendmail requested but not found on PATH or in %s" % (
            ", ".join(SENDMAIL_CANDIDATES))
    return "outbox", "no mail transport configured (no smtp relay set, no sendmail found)"


def _find_sendmail():
    import shutil
    found = shutil.which("sendmail")
    if found:
        return found
    for path in SENDMAIL_CANDIDATES:
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return None


def _send_bytes(data, cfg, transport, deadline):
    kind, where = transport
    if kind == "smtp":
        return _send_smtp_bounded(data, cfg, deadline)
    return _send_sendmail(data, where, deadline)


def _envelope(data, cfg):
    from email import policy
    from email.parser import BytesHeaderParser
    from email.utils import getaddresses, parseaddr
    head = BytesHeaderParser(policy=policy.compat32).parsebytes(data)
    sender = cfg.get("from_addr") or head.get("From") or ""
    sender = parseaddr(str(sender))[1]
    fields = [str(v) for k in ("To", "Cc", "Bcc") for v in (head.get_all(k) or [])]
    rcpts = [addr for _, addr in getaddresses(fields) if addr]
    return sender, rcpts


# ---- SMTP ----

def _send_smtp_bounded(data, cfg, deadline):
    """Run the SMTP session in a daemon thread and give up at the deadline (getaddrinfo and a
    mute relay cannot be interrupted otherwise); the abandoned socket is shut down."""
    state = {"stage": "resolve/connect", "conn": None, "result": None, "cancelled": False}
    worker = threading.Thread(target=_smtp_worker, args=(data, cfg, deadline, state),
                              name="gpualert-smtp")
    worker.daemon = True
    worker.start()
    worker.join(max(0.0, deadline - time.monotonic()))
    if worker.is_alive() or state["result"] is None:
        state["cancelled"] = True
        _abort_conn(state["conn"])
        return SendResult(False, "SMTP %s: timed out during %s (smtp_timeout %gs)" % (
            cfg["smtp"], state["stage"], _mail_timeout(cfg)), False, True)
    return state["result"]


def _abort_conn(conn):
    import socket
    sock = getattr(conn, "sock", None)
    try:
        if sock is not None:
            sock.shutdown(socket.SHUT_RDWR)  # wakes a recv blocked in the worker thread
        if conn is not None:
            conn.close()
    except Exception:
        pass


def _smtp_worker(data, cfg, deadline, state):
    try:
        state["result"] = _smtp_session(data, cfg, deadline, state)
    except BaseException as exc:
        state["result"] = _smtp_failure(exc, cfg, state["stage"])


def _parse_hostport(spec):
    spec = str(spec).strip()
    m = re.match(r"^\[([^\]]+)\](?::(\d+))?$", spec) or re.match(r"^([^:]+)(?::(\d+))?$", spec)
    if not m:
        raise ValueError("bad smtp relay %r (want host[:port])" % spec)
    return m.group(1), int(m.group(2) or 25)


def _tls_mode(cfg, port):
    mode = str(cfg.get("smtp_tls") or "").lower()
    if mode in ("ssl", "tls", "smtps"):
        return "ssl"
    if mode in ("starttls", "none"):
        return mode
    return "ssl" if port == 465 else "auto"


def _smtp_session(data, cfg, deadline, state):
    import smtplib
    import ssl
    host, port = _parse_hostport(cfg["smtp"])
    mode = _tls_mode(cfg, port)
    timeout = max(0.1, deadline - time.monotonic())
    if mode == "ssl":
        state["stage"] = "connect+TLS"
        conn = smtplib.SMTP_SSL(host, port, local_hostname=_hostname(), timeout=timeout,
                                context=ssl.create_default_context())
    else:
        conn = smtplib.SMTP(host, port, local_hostname=_hostname(), timeout=timeout)
    state["conn"] = conn
    try:
        _smtp_prepare(conn, cfg, mode, state)
        sender, rcpts = _envelope(data, cfg)
        if not rcpts:
            raise ValueError("no recipients in To/Cc")
        if state["cancelled"]:
            return SendResult(False, "cancelled", False, True)
        state["stage"] = "MAIL/RCPT/DATA"
        refused = conn.sendmail(sender, rcpts, _to_crlf(data))
    finally:
        _quit_quietly(conn)
    detail = "SMTP %s accepted it for %s" % (cfg["smtp"], ", ".join(rcpts))
    if refused:
        detail += " (refused: %s)" % ", ".join(sorted(refused))
    return SendResult(True, detail, False, False)


def _smtp_prepare(conn, cfg, mode, state):
    import ssl
    state["stage"] = "greeting/EHLO"
    conn.ehlo_or_helo_if_needed()
    tls = mode == "ssl"
    if mode == "starttls" or (mode == "auto" and conn.has_extn("starttls")):
        if not conn.has_extn("starttls"):
            raise ValueError("relay does not offer STARTTLS (smtp_tls=starttls)")
        state["stage"] = "STARTTLS"
        conn.starttls(context=ssl.create_default_context())  # verifies; honours SSL_CERT_FILE
        conn.ehlo()
        tls = True
    if cfg.get("smtp_user"):
        if not tls and mode != "none":
            raise ValueError("refusing to send the SMTP password unencrypted "
                             "(relay offers no STARTTLS; set smtp_tls=none to allow)")
        state["stage"] = "AUTH"
        conn.login(str(cfg["smtp_user"]), str(cfg.get("smtp_password") or ""))


def _quit_quietly(conn):
    try:
        conn.quit()
    except Exception:
        try:
            conn.close()
        except Exception:
            pass


def _to_crlf(data):
    return re.sub(b"\r?\n", b"\r\n", data)


def _smtp_failure(exc, cfg, stage):
    """Map an exception to a SendResult with a one-line reason."""
    import smtplib
    import socket
    import ssl
    where = "SMTP %s" % cfg.get("smtp")
    code, text = _smtp_code(exc)
    if code is not None:
        size = code == 552 or (500 <= code < 600 and "size" in text.lower())
        down = isinstance(exc, (smtplib.SMTPAuthenticationError, smtplib.SMTPHeloError))
        return SendResult(False, "%s rejected during %s: %d %s" % (where, stage, code, text),
                          size, down)
    if isinstance(exc, ssl.SSLError) or isinstance(exc, ssl.CertificateError):
        why = "TLS failed during %s: %s" % (stage, _describe(exc))
    elif isinstance(exc, socket.gaierror):
        why = "cannot resolve relay host: %s" % _describe(exc)
    elif isinstance(exc, ConnectionRefusedError):
        why = "connection refused"
    elif isinstance(exc, socket.timeout):
        why = "timed out during %s" % stage
    elif isinstance(exc, smtplib.SMTPServerDisconnected):
        why = "relay closed the connection during %s" % stage
    else:
        why = "failed during %s: %s" % (stage, _describe(exc))
    return SendResult(False, "%s: %s" % (where, why), False, True)


def _smtp_code(exc):
    """(code, text) of an SMTP rejection, or (None, '')."""
    import smtplib
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        codes = list((exc.recipients or {}).values())
        if codes:
            code, text = codes[0]
            return code, _clean(_text(text), 200)
    code = getattr(exc, "smtp_code", None)
    if isinstance(code, int) and code >= 400:
        return code, _clean(_text(getattr(exc, "smtp_error", "")), 200)
    return None, ""


def _text(value):
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else str(value)


# ---- sendmail ----

def _send_sendmail(data, path, deadline):
    argv = [path, "-t", "-oi"]
    try:  # own session: at the deadline the whole group is killed, helpers included
        proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)
    except OSError as exc:
        return SendResult(False, "cannot run %s: %s" % (path, exc.strerror or exc), False, True)
    try:
        _, err = proc.communicate(data, timeout=max(0.1, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        return SendResult(False, "%s -t -oi timed out" % path, False, True)
    if proc.returncode != 0:
        last = _clean(_text(err).strip().splitlines()[-1] if err.strip() else "", 200)
        return SendResult(False, "%s -t -oi exited with status %d%s" % (
            path, proc.returncode, (": " + last) if last else ""), False, False)
    return SendResult(True, "handed to %s -t -oi" % path, False, False)


def _kill_group(proc):
    import signal
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except OSError:
        pass
    try:
        proc.communicate(timeout=1)
    except Exception:
        pass


# ==== Outbox ====

def _outbox_dir(cfg):
    return os.path.expanduser(cfg.get("outbox") or os.path.join("~", ".gpualert", "outbox"))


def save_to_outbox(msg, outbox_dir, reason):
    """Write msg (EmailMessage or bytes) atomically as <UTC time>-<pid>-<rand>.eml, mode 0600,
    in outbox_dir (created 0700). Returns the path; raises OSError if it cannot."""
    data = msg if isinstance(msg, bytes) else msg.as_bytes()
    stamp = "X-Gpualert-Outbox-Reason: %s\n" % _clean(reason, 300)
    data = stamp.encode("ascii", "replace") + data
    os.makedirs(outbox_dir, mode=0o700, exist_ok=True)
    now = time.time()
    name = "%s.%06dZ-%d-%s.eml" % (time.strftime("%Y%m%dT%H%M%S", time.gmtime(now)),
                                   int((now % 1) * 1e6), os.getpid(), os.urandom(3).hex())
    tmp = os.path.join(outbox_dir, ".tmp-" + name)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(outbox_dir, name))
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    return os.path.join(outbox_dir, name)


def _header_from_bytes(data, name):
    try:
        from email import policy
        from email.parser import BytesHeaderParser
        value = BytesHeaderParser(policy=policy.compat32).parsebytes(data).get(name)
        return str(value).strip() if value else None
    except Exception:
        return None


def _fallback_dirs(cfg, data):
    import tempfile
    dirs = [_outbox_dir(cfg)]
    run_dir = _header_from_bytes(data, "X-Gpualert-Run-Dir") or cfg.get("run_dir")
    if run_dir:
        dirs.append(run_dir)
    if cfg.get("log_dir"):
        dirs.append(os.path.join(os.path.expanduser(cfg["log_dir"]), "outbox"))
    dirs.append(os.path.join(tempfile.gettempdir(), "gpualert-outbox-%d" % os.getuid()))
    return dirs


def _dry_run_dirs(cfg, data):
    """Never the outbox: a dry-run message must not be sent by a later resend."""
    import tempfile
    run_dir = _header_from_bytes(data, "X-Gpualert-Run-Dir") or cfg.get("run_dir")
    return ([run_dir] if run_dir else []) + [
        os.path.join(tempfile.gettempdir(), "gpualert-dry-run-%d" % os.getuid())]


def _save_anywhere(data, dirs, reason):
    """(path, [errors]) for the first directory that takes the message; path None if none."""
    errors, seen = [], set()
    for folder in dirs:
        if folder in seen:
            continue
        seen.add(folder)
        try:
            return save_to_outbox(data, folder, reason), errors
        except Exception as exc:
            errors.append("%s: %s" % (folder, _describe(exc)))
    return None, errors


def _outbox_result(msg, cfg, reason, transport):
    try:
        data = msg if isinstance(msg, bytes) else msg.as_bytes()
        path, errors = _save_anywhere(data, _fallback_dirs(cfg, data), reason)
    except BaseException as exc:
        data, path, errors = None, None, [_describe(exc)]
    if path:
        detail = "not sent (%s); saved to %s" % (reason, path)
        if errors:
            detail += " [outbox unusable: %s]" % "; ".join(errors)
        return _outcome("outbox", transport, detail, path)
    _emergency_dump(data, msg)
    return _outcome("outbox", transport, "not sent (%s) and could not be saved (%s); "
                    "the message was written to stderr" % (reason, "; ".join(errors)))


def _emergency_dump(data, msg):
    """Last resort so no message is lost: the raw message (bounded) on stderr."""
    try:
        if data is None:
            data = str(msg).encode("utf-8", "replace")
        sys.stderr.write(data[:1 << 20].decode("utf-8", "replace") + "\n")
        sys.stderr.flush()
    except Exception:
        pass


def _outbox_files(outbox):
    try:
        names = sorted(n for n in os.listdir(outbox) if n.endswith(".eml")
                       and not n.startswith(".tmp-"))
    except OSError:
        return []
    return [os.path.join(outbox, n) for n in names]


def _lock_outbox(outbox):
    """An exclusive non-blocking lock fd, None if unsupported, False if another holds it."""
    try:
        import fcntl
        fd = os.open(os.path.join(outbox, ".lock"), os.O_WRONLY | os.O_CREAT, 0o600)
    except (ImportError, OSError):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        return fd
    except OSError:
        os.close(fd)
        return False


def resend_outbox(cfg):
    """Send every outboxed message, oldest first, with the configured transport; delete each
    delivered one. Stops early when the relay itself is down or after RESEND_MAX_S.
    Returns {"sent", "failed", "remaining", "outbox", "details": [str]}."""
    outbox = _outbox_dir(cfg)
    files = _outbox_files(outbox)
    counts = {"sent": 0, "failed": 0, "remaining": len(files), "outbox": outbox, "details": []}
    kind, where = _choose_transport(cfg)
    if not files or kind in ("outbox", "missing"):
        if files:
            counts["details"].append(where)
        return counts
    lock = _lock_outbox(outbox)
    if lock is False:
        counts["details"].append("another resend is running on %s" % outbox)
        return counts
    try:
        _resend_files(files, cfg, (kind, where), counts)
    finally:
        if lock:
            os.close(lock)
    counts["remaining"] = len(files) - counts["sent"]
    return counts


def _resend_files(files, cfg, transport, counts):
    stop_at = time.monotonic() + max(RESEND_MAX_S, 4 * _mail_timeout(cfg))
    for path in files:
        if time.monotonic() >= stop_at:
            counts["details"].append("stopped: resend time limit reached")
            return
        try:
            with open(path, "rb") as f:
                data = f.read()
        except OSError as exc:
            counts["failed"] += 1
            counts["details"].append("%s: %s" % (path, _describe(exc)))
            continue
        deadline = time.monotonic() + _mail_timeout(cfg)
        res = _send_with_slim_retry(data, data, cfg, transport, deadline)
        if res.ok:
            _remove_quietly(path)
            counts["sent"] += 1
            continue
        counts["failed"] += 1
        counts["details"].append("%s: %s" % (os.path.basename(path), res.detail))
        if res.transport_down:
            counts["details"].append("stopped: the transport is not usable now")
            return


def _remove_quietly(path):
    try:
        os.remove(path)
    except OSError as exc:
        if exc.errno != errno.ENOENT:
            sys.stderr.write("gpualert: warning: sent but could not remove %s: %s\n" % (
                path, exc.strerror))


def cmd_resend(args, cfg):
    """`gpualert resend`: flush the outbox. 0 if nothing is left, else 1."""
    counts = resend_outbox(cfg)
    print("gpualert: resend: %d sent, %d failed, %d remaining in %s" % (
        counts["sent"], counts["failed"], counts["remaining"], counts["outbox"]))
    for line in counts["details"][:20]:
        sys.stderr.write("gpualert:   %s\n" % line)
    return 0 if counts["remaining"] == 0 else 1


def _test_result(cfg):
    now = time.time()
    kind, where = _choose_transport(cfg)
    return RunResult(
        status="TEST", name="test-email", argv=["gpualert", "test-email"], host=_hostname(),
        cwd=os.getcwd(), start=now, end=now, exit_code=0, exit_status=0, signal_name=None,
        classification=Classification(None, None, None, None, None, None), log_path=None,
        run_dir=None, tail=["This is a test message from gpualert."], rusage={}, scheduler={},
        notes=["transport: %s %s" % (kind, where)], gpu={})


def cmd_test_email(args, cfg):
    """`gpualert test-email`: send a small message; 0 if sent (or dry run), else 1."""
    msg, _ = build_message(_test_result(cfg), cfg)
    out = deliver(msg, cfg)
    print("gpualert: test email %s via %s: %s" % (out["outcome"], out["transport"],
                                                   out["detail"]))
    return 0 if out["outcome"] in ("sent", "dry-run") else 1

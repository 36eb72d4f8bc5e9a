"""The durable log and the process boundary (real processes, real pipes, a pty, a tiny tmpfs):
the header on disk before the child starts, streams live and logged raw in 2>&1 order, a full
disk leaves a marked gap, grandchildren are drained and not killed, the footer, and the evidence
scan of the log (the follower while it grows, grep and wc and their fallbacks, bounded tails)."""
import contextlib
import os
import pty
import signal
import subprocess
import time

import pytest

from _load import load_gpualert
from wrapper_helpers import (PY, SCRIPT, _end_terminal, _read_until, base, child, closed_port,
                             isolated_env, log_text, outbox_messages, parse, plain_text, run_gpualert,
                             run_in, run_json, write_executable)


G = load_gpualert()


def wait_for(predicate, seconds=30.0, step=0.05):
    deadline = time.time() + seconds
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(step)
    return predicate()


def exited(proc):
    return proc.poll() is not None


def body_of(log):
    """The child's output in the log: between the header block and the footer."""
    start = log.index(b"=== gpualert run started")
    start = log.index(b"\n", log.index(b"gpualert: ", start)) + 1
    return log[start:log.index(b"=== gpualert command ended")]


# ---- control never waits on a reader ----

BIG_THEN_SLEEP = "import os, time\nfor _ in range(160): os.write(1, b'x' * 65536)\ntime.sleep(60)\n"


@contextlib.contextmanager
def _behind_a_stalled_reader(tmp_path, options, code):
    """The wrapper running `code` with its stdout into a pipe whose reader never reads (we
    hold its end, like `| sleep 25`). -> the wrapper's Popen; killed on the way out."""
    r, w = os.pipe()
    proc = None
    try:
        proc = subprocess.Popen([PY, SCRIPT] + base(tmp_path) + options + ["--"] + child(code),
                                stdout=w, stderr=subprocess.PIPE, env=isolated_env(tmp_path),
                                cwd=str(tmp_path))
        os.close(w)
        w = None
        yield proc
    finally:
        os.close(r)
        if w is not None:
            os.close(w)
        if proc is not None and proc.poll() is None:
            proc.kill()


def test_a_stalled_reader_does_not_hold_the_timeout(tmp_path):
    with _behind_a_stalled_reader(tmp_path, ["--timeout", "2"], BIG_THEN_SLEEP) as proc:
        assert wait_for(lambda: exited(proc), 40), "the wrapper waited for the reader"
        assert proc.returncode == 128 + signal.SIGTERM
        assert run_json(tmp_path)["status"] == "TIMEOUT"


def test_a_stalled_reader_does_not_hold_the_message_or_the_exit(tmp_path):
    # 1.5 MiB: more than the reader's pipe takes, less than the wrapper holds for it (as tee
    # would block, a child writing more than that waits for the reader while it runs)
    code = "import os\nfor _ in range(24): os.write(1, b'x' * 65536)\nraise SystemExit(3)\n"
    relay_down = ["--smtp", "127.0.0.1:%d" % closed_port()]
    with _behind_a_stalled_reader(tmp_path, relay_down, code) as proc:
        assert wait_for(lambda: exited(proc), 40), "the wrapper waited for the reader"
        assert proc.returncode == 3
        assert len(outbox_messages(tmp_path)) == 1
        assert b"stopped copying" in proc.stderr.read()


def test_sigterm_reaches_the_child_while_the_reader_is_stalled(tmp_path):
    code = ("import os, signal, sys, time\n"
            "signal.signal(signal.SIGTERM, lambda s, f: os._exit(9))\n"
            "open('ready', 'w').close()\n"
            "while True: os.write(1, b'y' * 65536)\n")
    with _behind_a_stalled_reader(tmp_path, [], code) as proc:
        assert wait_for(lambda: os.path.exists(str(tmp_path / "ready")))
        assert wait_for(lambda: len(log_text(tmp_path)) > 1 << 20)
        proc.send_signal(signal.SIGTERM)
        assert wait_for(lambda: exited(proc), 40), "SIGTERM waited for the reader"
        assert proc.returncode == 9


def test_ctrl_s_on_a_terminal_does_not_hold_the_exit(tmp_path):
    code = ("import os\nfor i in range(4000): os.write(1, b'line %05d ' % i + b'z' * 200 + b'\\n')\n"
            "raise SystemExit(4)\n")
    pid, fd = pty.fork()
    if pid == 0:  # pragma: no cover - the wrapper on the terminal
        os.chdir(str(tmp_path))
        os.execve(PY, [PY, SCRIPT] + base(tmp_path) + ["--"] + child(code), isolated_env(tmp_path))
    try:
        _read_until(fd, b"line 00010")
        os.write(fd, b"\x13")  # Ctrl-S: the terminal stops taking output (XOFF)
        done = wait_for(lambda: os.waitpid(pid, os.WNOHANG)[0] == pid and True, 40)
        assert done, "the wrapper waited for Ctrl-Q"
    finally:
        os.write(fd, b"\x11")
        _read_until(fd, b"\x00", 1)
        _end_terminal(pid, fd)
    assert b"=== gpualert command ended" in log_text(tmp_path)


# ---- 2>&1 order when stdout and stderr are one file ----

ALTERNATING = ("import sys\n"
               "for i in range(2000):\n"
               "    s = (sys.stdout, sys.stderr)[i % 2]\n"
               "    s.write('line %04d\\n' % i); s.flush()\n")


def test_one_output_file_gets_the_2_and_1_order(tmp_path):
    expected = b"".join(b"line %04d\n" % i for i in range(2000))
    with open(str(tmp_path / "out"), "wb") as out:
        proc = subprocess.run([PY, SCRIPT] + base(tmp_path) + ["--"] + child(ALTERNATING), stdout=out,
                              stderr=subprocess.STDOUT, env=isolated_env(tmp_path), cwd=str(tmp_path),
                              timeout=60)
    assert proc.returncode == 0
    assert body_of(log_text(tmp_path)) == expected
    terminal = (tmp_path / "out").read_bytes()
    assert terminal[:len(expected)] == expected


def test_separate_outputs_keep_every_line(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(ALTERNATING))
    assert proc.stdout.count(b"\n") == 1000
    assert proc.stderr.startswith(b"line 0001\n")
    lines = body_of(log_text(tmp_path)).splitlines()
    assert sorted(lines) == [b"line %04d" % i for i in range(2000)]


# ---- the log survives a full disk ----

@pytest.fixture
def tiny_disk(tmp_path):
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")  # conftest marks its tests needs_root
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.call(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)]) != 0:
        pytest.skip("cannot mount a tmpfs here")
    yield disk
    subprocess.call(["umount", "-l", str(disk)])


STEPS = ("import os, sys, time\n"
         "for i in range(40):\n"
         "    print('step %02d ' % i + 'x' * 9000, flush=True)  # past a page: tmpfs needs a new one\n"
         "    if i == 9:\n"
         "        open('filled', 'w').close()\n"
         "        while not os.path.exists('freed'): time.sleep(0.02)\n"
         "    time.sleep(0.02)\n")


def test_a_transient_full_disk_leaves_a_marked_gap_and_the_log_goes_on(tmp_path, tiny_disk):
    args = ["--log-dir", str(tiny_disk), "--outbox", str(tmp_path / "outbox"), "--"] + child(STEPS)
    proc = subprocess.Popen([PY, SCRIPT] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env=isolated_env(tmp_path), cwd=str(tmp_path))
    try:
        assert wait_for(lambda: os.path.exists(str(tmp_path / "filled")))
        filler = str(tiny_disk / "filler")
        subprocess.call(["dd", "if=/dev/zero", "of=" + filler, "bs=64k"], stderr=subprocess.DEVNULL)
        open(str(tmp_path / "freed"), "w").close()  # steps 10-12 find the disk full
        seen = b""
        while b"step 13" not in seen:
            line = proc.stdout.readline()
            assert line, "the output stream ended early"
            seen += line
        os.unlink(filler)  # space returns mid-run
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    logs = [os.path.join(d, f) for d, _, fs in os.walk(str(tiny_disk)) for f in fs if f.endswith(".log")]
    log = open(logs[0], "rb").read()
    assert b"step 00" in log and b"step 39 " in log
    assert b"bytes not logged: No space left on device]" in log, log[-3000:]
    gap = log.index(b"bytes not logged: No space left on device]")
    assert log.index(b"step 09") < gap < log.index(b"step 39")
    assert b"=== gpualert command ended" in log


# ---- grandchildren are drained, not killed ----

UPLOADER = ("import subprocess, sys\n"
            "subprocess.Popen(['sh', '-c', 'for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo upload $i; "
            "sleep 0.25; done; echo finished > uploaded'])\n"
            "print('child done', flush=True)\n"
            "raise SystemExit(6)\n")


def test_a_background_writer_is_drained_into_the_log(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(UPLOADER))
    assert proc.returncode == 6
    assert wait_for(lambda: (tmp_path / "uploaded").exists(), 20)
    log = log_text(tmp_path)
    assert b"upload 12\n" in log


def test_a_background_writer_outliving_drain_is_not_killed(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--drain", "0.5", "--"] + child(UPLOADER))
    assert proc.returncode == 6
    assert wait_for(lambda: (tmp_path / "uploaded").exists(), 20), "the writer died of SIGPIPE"
    assert b"discarded" in log_text(tmp_path)


# ---- footers on their own line ----

def test_the_footer_starts_its_own_line(tmp_path):
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child("import sys; sys.stdout.write('no newline')"))
    assert proc.returncode == 0
    assert b"no newline\n=== gpualert command ended ===" in log_text(tmp_path)
# ---- the whole log is evidence ----

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
       "capacity of 79.15 GiB of which 1.23 GiB is free.")
OOM_TRACEBACK = ("Traceback (most recent call last):\n"
                 '  File "train.py", line 88, in <module>\n'
                 "    loss = model(batch).sum()\n" + OOM)
WATCHDOG = ("[rank{r}]:[E ProcessGroupNCCL.cpp:607] [Rank {r}] Watchdog caught collective operation "
            "timeout: WorkNCCL(SeqNum=4127, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) "
            "ran 600117 milliseconds before timing out.")


def _classify_run(tmp_path, head, tail_line, count):
    code = ("import sys\nsys.stdout.write(%r + '\\n')\n"
            "for i in range(%d): sys.stdout.write(%r.format(r=i %% 7 + 1, i=i) + '\\n')\n"
            "raise SystemExit(1)\n" % (head, count, tail_line))
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(code))
    assert proc.returncode == 1
    return run_json(tmp_path)


def test_a_bare_oom_line_before_510_info_lines_is_found(tmp_path):
    record = _classify_run(tmp_path, OOM, "INFO step {i} done, saving shard", 510)
    assert record["class"] == "cuda_oom", record["classification"]


def test_an_oom_traceback_before_2000_lines_is_found(tmp_path):
    record = _classify_run(tmp_path, OOM_TRACEBACK, "INFO rank {r} teardown: releasing buffers {i}", 2000)
    assert record["class"] == "cuda_oom", record["classification"]


def test_an_oom_before_other_ranks_nccl_watchdog_lines_is_the_cause(tmp_path):
    record = _classify_run(tmp_path, OOM_TRACEBACK, WATCHDOG, 2500)  # about 500 KiB
    assert record["class"] == "cuda_oom", record["classification"]


# ---- the evidence grep follows the log while the child runs ----

def _append(path, data):
    with open(str(path), "ab") as f:
        f.write(data)


def _followed(path, after_line=0):
    """An EvidenceFollower on path; skips where grep is missing (find_evidence then scans in Python)."""
    try:
        return G.EvidenceFollower(str(path), after_line)
    except OSError as exc:
        pytest.skip("no grep here: %s" % exc)


def test_the_follower_scans_while_the_log_grows_and_finds_what_the_scan_after_the_exit_finds(tmp_path):
    log = tmp_path / "output.log"
    _append(log, b"=== gpualert run started ===\ncommand: python train.py --on Error\n")
    follower = _followed(log, after_line=2)
    _append(log, OOM_TRACEBACK.encode() + b"\n")  # early
    _append(log, b"INFO step 1 done\n" * 20000)
    assert wait_for(lambda: follower.fed == os.path.getsize(str(log)), 10), "not read while growing"
    _append(log, b"garbage \x00\xff\xfe\x80 not utf-8 \x00\x00\n" * 100)  # a binary region
    _append(log, b"INFO step 2 done, then RuntimeErr")  # a decisive line cut across two writes
    assert wait_for(lambda: follower.fed == os.path.getsize(str(log)), 10)
    _append(log, b"or: CUDA error: an illegal memory access was encountered\n")
    _append(log, b"INFO teardown\n" * 5000 + b"Killed\n")  # late, and no newline at the very end
    _append(log, b"FATAL: last words")
    found = follower.result(10)
    assert found == G.find_evidence(str(log), after_line=2)
    lines = dict(found)
    assert lines[6].startswith("torch.OutOfMemoryError")
    assert ("INFO step 2 done, then RuntimeError: CUDA error: an illegal memory access was "
            "encountered") in lines.values()
    assert "Killed" in lines.values() and "FATAL: last words" in lines.values()
    assert not any("--on Error" in text for text in lines.values())  # the header is not evidence
    assert follower.proc.returncode is not None  # grep is reaped


def test_the_follower_keeps_the_first_lines_like_the_scan(tmp_path):
    log = tmp_path / "output.log"
    log.write_bytes(b"")
    follower = _followed(log)
    for n in range(3):
        _append(log, b"".join(b"ValueError: bad sample %d\nINFO ok\n" % (n * 1000 + i) for i in range(1000)))
    found = follower.result(10)
    assert found == G.find_evidence(str(log))
    assert len(found) == G.EVIDENCE_MAX_LINES and found[0] == (1, "ValueError: bad sample 0")


def test_the_follower_gives_up_at_its_deadline_with_what_it_has(tmp_path):
    log = tmp_path / "output.log"
    log.write_bytes(b"Traceback (most recent call last):\n")
    follower = _followed(log)
    assert wait_for(lambda: follower.fed > 0, 10)
    os.kill(follower.proc.pid, signal.SIGSTOP)  # a grep that makes no progress at all
    try:
        _append(log, b"INFO more\n" * 1000)
        t0 = time.time()
        found = follower.result(0.5)
        assert time.time() - t0 < 5
    finally:
        try:
            os.kill(follower.proc.pid, signal.SIGCONT)
        except OSError:
            pass
    assert found in ([], [(1, "Traceback (most recent call last):")])
    assert follower.proc.returncode is not None


def test_the_classifier_gets_the_tail_bound_from_a_line_start():
    pump = G.ChildPump(0, {}, None, {})
    pump.output.add(b"first line\n" + b"x" * 100 + b"\n" + b"y" * (G.TAIL_BYTES + 5) + b"\n" + b"last\n")
    tail = pump.tail_bytes()
    # the line that starts before the window: its last bytes, marked as clipped
    assert tail == b"[...] " + b"y" * (G.TAIL_LINE_MAX_CHARS - 6) + b"\nlast\n"
    pump = G.ChildPump(0, {}, None, {})
    pump.output.add(b"a\n" * (G.TAIL_BYTES // 2 + 10))
    assert pump.tail_bytes().startswith(b"a\n") and len(pump.tail_bytes()) <= G.TAIL_BYTES
    pump = G.ChildPump(0, {}, None, {})  # the window starts exactly at a line start: kept whole
    window = b"w" * 10 + b"\n" + b"v" * (G.TAIL_BYTES - 12) + b"\n"
    pump.output.add(b"z" * 99 + b"\n" + window)
    assert pump.tail_bytes() == window


# ---- the work after the exit, prepared while the child runs ----

def test_the_rule_table_is_compiled_once_when_two_threads_ask_at_once():
    import threading
    saved = list(G._COMPILED_RULES)
    del G._COMPILED_RULES[:]
    try:
        threads = [threading.Thread(target=G.compiled_rules) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(30)
        assert len(G.compiled_rules()) == len(G.FAILURE_RULES)
    finally:
        G._COMPILED_RULES[:] = saved or G._COMPILED_RULES


def test_nothing_is_warmed_for_a_command_that_already_ended():
    import threading
    exited = threading.Event()
    exited.set()
    saved = list(G._COMPILED_RULES)
    del G._COMPILED_RULES[:]
    try:
        G.warm_up(exited)
        assert G._COMPILED_RULES == []  # the work after the exit compiles it if it needs it
    finally:
        G._COMPILED_RULES[:] = saved


def test_a_command_that_ends_at_once_is_not_kept_waiting_for_a_walk_over_proc():
    sampler = G.TreeSampler(os.getpid()).start()
    figures = sampler.stop()
    assert figures["tree_samples"] == 0  # its own rusage is exact; no sample taken at its start
    sampler = G.TreeSampler(os.getpid(), interval_s=0.05).start()
    assert wait_for(lambda: sampler.samples >= 2, 10)
    assert sampler.stop()["tree_peak_rss_kib"] > 0


def test_a_finished_log_shared_by_two_greps_gives_what_one_grep_gives(tmp_path, monkeypatch):
    """The rest at the end split at a line boundary halfway: lines in either half, one right
    at the split, the marker line of the first half never returned, numbers exact."""
    log = tmp_path / "output.log"
    body = [b"INFO line %d of ordinary output\n" % i for i in range(4000)]
    for n in (0, 1500, 1999, 2000, 2001, 3999):  # about the middle: 2000
        body[n] = b"RuntimeError: failure number %d\n" % n
    body.append(b"Killed")  # no newline at the end
    log.write_bytes(b"".join(body))
    one = G.EvidenceScan(str(log)).result(10)
    monkeypatch.setattr(G, "EVIDENCE_SPLIT_BYTES", 1000)
    scan = G.EvidenceFollower(str(log), finished=True)
    found = scan.result(10)
    assert scan.second is not None, "the rest was not shared"
    assert found == one
    assert [n for n, _ in found] == [1, 1501, 2000, 2001, 2002, 4000, 4001]
    assert not any("first half" in text for _, text in found)
    assert scan.second.returncode is not None and scan.proc.returncode is not None


def test_two_greps_keep_the_first_lines_when_the_first_half_has_enough(tmp_path, monkeypatch):
    log = tmp_path / "output.log"
    log.write_bytes(b"".join(b"ValueError: bad sample %d\n" % i for i in range(3000)))
    monkeypatch.setattr(G, "EVIDENCE_SPLIT_BYTES", 1000)
    found = G.find_evidence(str(log))
    assert found == G.EvidenceScan(str(log)).result(10)
    assert len(found) == G.EVIDENCE_MAX_LINES and found[-1] == (1000, "ValueError: bad sample 999")


def test_two_greps_fill_up_from_the_second_half(tmp_path, monkeypatch):
    log = tmp_path / "output.log"
    log.write_bytes(b"INFO x\n" * 2000 + b"".join(b"ValueError: bad %d\n" % i for i in range(1500)))
    monkeypatch.setattr(G, "EVIDENCE_SPLIT_BYTES", 1000)
    found = G.find_evidence(str(log), after_line=5)
    assert found == G.EvidenceScan(str(log), 5).result(10)
    assert len(found) == G.EVIDENCE_MAX_LINES and found[0] == (2001, "ValueError: bad 0")


def test_the_tails_first_line_number_is_the_same_counted_by_wc(tmp_path, monkeypatch):
    log = tmp_path / "output.log"
    log.write_bytes(b"".join(b"line %d\n" % i for i in range(50000)) + b"partial last")
    slow = G.read_tail(str(log), max_bytes=4096)
    monkeypatch.setattr(G, "WC_MIN_BYTES", 1)
    fast = G.read_tail(str(log), max_bytes=4096)
    assert fast == slow
    assert fast[0].startswith("line ") and fast[1] == int(fast[0].split()[1]) + 1


def test_a_signal_to_our_group_does_not_reach_the_evidence_grep(tmp_path):
    log = tmp_path / "output.log"
    log.write_bytes(b"Traceback (most recent call last):\n")
    follower = _followed(log)
    try:
        assert os.getpgid(follower.proc.pid) != os.getpgrp()  # timeout(1), Ctrl-C, kill 0
    finally:
        follower.result(10)


def test_an_evidence_grep_killed_by_someone_else_is_replaced_by_a_whole_scan(tmp_path):
    log = tmp_path / "output.log"
    log.write_bytes(b"INFO start\n")
    follower = _followed(log)
    assert wait_for(lambda: follower.fed > 0, 10)
    os.kill(follower.proc.pid, signal.SIGTERM)
    assert wait_for(lambda: follower.proc.poll() is not None, 10)
    _append(log, b"INFO x\n" * 100 + b"RuntimeError: late\n")
    assert follower.result(10) == [(102, "RuntimeError: late")]


def test_the_tail_keeps_the_reads_themselves_and_stays_bounded_for_tiny_reads():
    pump = G.ChildPump(0, {}, None, {})
    reads = [b"line %d\n" % i for i in range(300000)]  # a slow writer: one line per read
    for data in reads:
        pump.output.add(data)
    whole = b"".join(reads)
    assert len(pump.output.pieces) <= G.TAIL_MAX_PIECES + 1  # joined, not 300,000 objects
    assert whole.endswith(pump.tail) and len(pump.tail) <= 2 * G.TAIL_BYTES
    window = whole[-G.TAIL_BYTES:]
    assert pump.tail_bytes() == b"[...] " + window
    big = G.ChildPump(0, {}, None, {})
    chunk = b"x" * 1000 + b"\n"
    for _ in range(5000):
        big.output.add(chunk)
    assert big.output.pieces[-1] is chunk  # the read object itself, no copy
    assert G.TAIL_BYTES <= len(big.tail) <= 2 * G.TAIL_BYTES


def test_without_grep_and_wc_the_evidence_and_the_line_numbers_are_the_same(tmp_path, monkeypatch):
    log = tmp_path / "output.log"
    log.write_bytes(b"INFO x\n" * 5000 + b"RuntimeError: once\n" + b"INFO y\n" * 5000)
    with_tools = (G.find_evidence(str(log)), G.read_tail(str(log), 4096))
    monkeypatch.setattr(G, "EVIDENCE_SPLIT_BYTES", 1000)
    monkeypatch.setattr(G, "WC_MIN_BYTES", 1)
    monkeypatch.setenv("PATH", str(tmp_path / "nothing-here"))
    assert (G.find_evidence(str(log)), G.read_tail(str(log), 4096)) == with_tools
    assert with_tools[0] == [(5001, "RuntimeError: once")]


def test_the_evidence_grep_gives_way_while_the_job_runs_and_not_after(tmp_path):
    log = tmp_path / "output.log"
    log.write_bytes(b"INFO\n")
    follower = _followed(log)
    try:  # relative to ours, so this holds under `nice` too
        want = min(19, os.getpriority(os.PRIO_PROCESS, 0) + G.FOLLOW_NICE)
        assert os.getpriority(os.PRIO_PROCESS, follower.proc.pid) == want
    finally:
        follower.result(10)
    finished = G.EvidenceFollower(str(log), finished=True)
    try:
        assert os.getpriority(os.PRIO_PROCESS, finished.proc.pid) == os.getpriority(os.PRIO_PROCESS, 0)
    except ProcessLookupError:
        pass  # it is done already: it never waited niced
    finally:
        finished.result(10)


def test_the_evidence_grep_goes_back_to_the_callers_niceness_not_to_0(tmp_path, monkeypatch):
    """Run under `nice -n 7`: grep gives way from 7, and at the job's end goes back to 7. It
    was set to an absolute 0, which as root raised it above a niced job (review: 0 == 19)."""
    log = tmp_path / "output.log"
    log.write_bytes(b"INFO\n")
    set_to = []
    real_get = os.getpriority
    monkeypatch.setattr(os, "getpriority", lambda which, who: 7 if who == 0 else real_get(which, who))
    monkeypatch.setattr(os, "setpriority", lambda which, who, value: set_to.append((who, value)))
    follower = _followed(log)
    pid = follower.proc.pid
    assert follower.result(10) == []
    assert set_to == [(pid, 7 + G.FOLLOW_NICE), (pid, 7)]
    set_to[:] = []
    monkeypatch.setattr(os, "getpriority", lambda which, who: 15 if who == 0 else real_get(which, who))
    follower = _followed(log)
    pid = follower.proc.pid
    follower.result(10)
    assert set_to == [(pid, 19), (pid, 15)]  # never past 19, the kernel's bound


@pytest.mark.needs_root  # real priorities: only root may raise one
def test_as_root_under_nice_the_evidence_grep_never_gets_above_us(tmp_path):
    """The review run's failure, with real priorities: as root under `nice -n 19`, the grep of a
    finished log was set to 0, above the job (assert 0 == 19)."""
    log = tmp_path / "output.log"
    log.write_bytes(b"INFO\n" * 1000 + b"RuntimeError: x\n")
    code = ("import os, sys; sys.path.insert(0, %r); from _load import load_gpualert\n"
            "G, set_to, real = load_gpualert(), [], os.setpriority\n"
            "os.setpriority = lambda which, who, value: set_to.append(value) or real(which, who, value)\n"
            "for finished in (True, False):\n"
            "    f = G.EvidenceFollower(%r, finished=finished)\n"
            "    assert f.result(10) == [(1001, 'RuntimeError: x')]\n"
            "print(os.getpriority(os.PRIO_PROCESS, 0), sorted(set(set_to)))\n"
            ) % (os.path.dirname(os.path.abspath(__file__)), str(log))
    out = subprocess.check_output(["nice", "-n", "19", PY, "-c", code], timeout=60).decode()
    assert out.split(None, 1) == ["19", "[19]\n"]


def test_where_sendfile_cannot_write_to_a_pipe_the_log_is_fed_through_memory(tmp_path, monkeypatch):
    import errno

    def no_sendfile(*args):
        raise OSError(errno.EINVAL, "sendfile to a pipe not supported here")
    log = tmp_path / "output.log"
    log.write_bytes(b"INFO\n" * 300000 + b"RuntimeError: x\n" + b"INFO\n" * 10)
    want = G.EvidenceScan(str(log)).result(10)
    monkeypatch.setattr(os, "sendfile", no_sendfile)
    monkeypatch.setattr(G, "EVIDENCE_SPLIT_BYTES", 1000)
    assert G.find_evidence(str(log)) == want == [(300001, "RuntimeError: x")]
    follower = _followed(log)
    assert follower.result(10) == want


def test_a_log_truncated_while_followed_is_scanned_whole_again(tmp_path):
    """`: > output.log` mid-run (to free quota): the follower kept an OOM line that no longer
    exists and never read what came after, below its old offset."""
    log = tmp_path / "output.log"
    log.write_bytes(b"INFO start\n" + b"INFO step\n" * 50 + b"torch.OutOfMemoryError: CUDA out of memory\n")
    follower = _followed(log)
    assert wait_for(lambda: follower.fed >= log.stat().st_size, 10)
    with open(str(log), "r+b") as handle:
        handle.truncate(0)
    _append(log, b"INFO again\n" + b"RuntimeError: NCCL error in: ProcessGroupNCCL.cpp\n")
    assert follower.result(10) == [(2, "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp")]


@pytest.mark.parametrize("fake_grep", [
    # busybox's grep has no --line-buffered: it exits 2 at once
    "echo 'grep: unrecognized option' >&2\nexit 2\n",
    # the reader saw grep's output end before grep's exit status was there (a busy machine: CI
    # failed the case above once); result() took the empty output for "nothing found"
    "exec 1>&-\nsleep 0.5\necho 'grep: unrecognized option' >&2\nexit 2\n",
], ids=["refuses-its-options", "closes-its-output-first"])
def test_a_failing_grep_is_judged_by_its_exit_status_and_gives_way_to_the_python_scan(tmp_path, fake_grep):
    """A grep that fails (exit 2) hands the evidence to the scan in Python: it must not be empty."""
    fake = tmp_path / "bin"
    fake.mkdir()
    write_executable(fake / "grep", "#!/bin/sh\n" + fake_grep)
    log = tmp_path / "output.log"
    log.write_bytes(b"INFO a\n" * 10 + b"KeyError: 'shard'\n" + b"INFO b\n" * 10)
    old = os.environ["PATH"]
    os.environ["PATH"] = str(fake) + os.pathsep + old
    try:
        assert G.find_evidence(str(log)) == [(11, "KeyError: 'shard'")]
        follower = G.EvidenceFollower(str(log), 0)
        assert follower.result(10) == [(11, "KeyError: 'shard'")]
    finally:
        os.environ["PATH"] = old


def test_a_log_truncated_and_refilled_past_the_old_size_is_scanned_whole_again(tmp_path):
    log = tmp_path / "output.log"
    log.write_bytes(b"INFO start\n" + b"torch.OutOfMemoryError: CUDA out of memory\n")
    follower = _followed(log)
    assert wait_for(lambda: follower.fed >= log.stat().st_size, 10)
    with open(str(log), "r+b") as handle:  # truncated and refilled before the next look
        handle.truncate(0)
        handle.write(b"RuntimeError: NCCL error in: ProcessGroupNCCL.cpp\n" + b"INFO more output\n" * 20)
    assert follower.result(10) == [(1, "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp")]


def test_a_log_rewritten_while_it_is_sent_is_scanned_whole_again(tmp_path, monkeypatch):
    # The last bytes grep was given were read after the send: a log truncated and refilled
    # during the send looked unchanged, and the old log's lines stood (seen once under load).
    log = tmp_path / "output.log"
    log.write_bytes(b"INFO start\n" + b"torch.OutOfMemoryError: CUDA out of memory\n")
    send = G.EvidenceFollower._send

    def rewritten_during_the_send(self, count):
        sent = send(self, count)
        if not getattr(self, "rewrote", False):
            self.rewrote = True
            with open(str(log), "r+b") as handle:
                handle.truncate(0)
                handle.write(b"RuntimeError: NCCL error in: ProcessGroupNCCL.cpp\n" + b"INFO more output\n" * 20)
        return sent

    monkeypatch.setattr(G.EvidenceFollower, "_send", rewritten_during_the_send)
    follower = _followed(log)
    assert follower.result(10) == [(1, "RuntimeError: NCCL error in: ProcessGroupNCCL.cpp")]


# ---- the log exists, with a header, before the child ----

def test_header_is_on_disk_before_the_child_starts(tmp_path):
    probe = ("import glob; p = glob.glob(%r)[0]; text = open(p).read(); "
             "print('HEADER-SEEN' if 'run started' in text and 'command:' in text else 'NO-HEADER')"
             % str(tmp_path / "logs" / "*" / "output.log"))
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(probe))
    assert proc.returncode == 0
    assert b"HEADER-SEEN" in proc.stdout


def test_signal_death_ends_the_log_with_a_footer(tmp_path):
    code = "print('last words', flush=True); import os; os.kill(os.getpid(), 9)"
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(code))
    assert proc.returncode == 137
    log = log_text(tmp_path).decode()
    assert "last words" in log
    assert log.index("last words") < log.index("command ended")
    assert "signal: SIGKILL (exit status 137)" in log


def test_unbuffered_child_last_line_survives_sigkill(tmp_path):
    # Without PYTHONUNBUFFERED the print sits in the child's buffer when SIGKILL lands.
    code = "import os, sys; print('sentinel-before-kill'); os.kill(os.getpid(), 9)"
    run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(code))
    assert b"sentinel-before-kill" in log_text(tmp_path)


# ---- streaming ----

def test_streams_are_separate_live_and_logged_raw(tmp_path):
    code = ("import sys, os\n"
            "os.write(1, b'out-1\\n'); os.write(2, b'err-1\\n')\n"
            "os.write(1, bytes(range(256)) + b'\\n')\n"
            "os.write(1, b'\\r 10%|#  |\\r 50%|##   |\\r100%|#####|\\n')\n"
            "os.write(2, b'\\xff\\xfe invalid utf8\\n')\n")
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(code))
    assert proc.stdout.startswith(b"out-1\n" + bytes(range(256)) + b"\n")
    assert proc.stderr.startswith(b"err-1\n\xff\xfe invalid utf8\n")
    log = log_text(tmp_path)
    body = log.split(b"output follows ===\n", 1)[-1] if b"output follows" in log else log
    assert bytes(range(256)) + b"\n" in body
    assert b"\r 10%|#  |\r 50%" in body and b"\xff\xfe invalid utf8" in body
    assert body.index(b"out-1") < body.index(b"err-1") < body.index(bytes(range(256)))


def test_a_huge_line_without_newline_is_streamed_whole(tmp_path):
    code = "import os\nfor _ in range(160): os.write(1, b'x' * 65536)\n"  # 10 MiB, one line
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(code))
    assert proc.returncode == 0
    assert len(proc.stdout) == 160 * 65536
    assert log_text(tmp_path).count(b"x") >= 160 * 65536


@pytest.mark.parametrize("after", [b"", b"\nTraceback (most recent call last):\nRuntimeError: boom\n"],
                         ids=["alone", "then-a-traceback"])
def test_the_last_lines_carry_the_end_of_a_line_of_40_mb(tmp_path, after):
    """What the job printed last is a giant line's end; its start is long gone from the tail.
    The message shows that end, marked as clipped (it showed a piece from the line's middle,
    or nothing of the line when short lines followed it)."""
    code = ("import os\n"
            "block = b'abcdefghij' * 6554\n"
            "for _ in range(640): os.write(1, block)\n"  # 42 MB, no line break
            "os.write(1, b'THE-END-OF-THE-LINE' + %r)\n"
            "raise SystemExit(1)\n" % after)
    assert run_in(tmp_path, code).returncode == 1
    text = plain_text(tmp_path)
    last = text[text.index("Last "):].splitlines()
    line = [s for s in last if "THE-END-OF-THE-LINE" in s]
    assert line and "[...] " in line[0] and len(line[0].strip()) <= G.TAIL_LINE_MAX_CHARS, last[:4]
    if after:
        assert "RuntimeError: boom" in "\n".join(last[last.index(line[0]):])


def test_the_evidence_scan_of_one_300_mb_line_stays_under_200_mib(tmp_path):
    """grep holds a whole line in memory: it is given a line's first EVIDENCE_LINE_BYTES only
    (a 435 MiB process before). The peak of every process `classify` ran, measured by the
    kernel (RUSAGE_CHILDREN of a parent of our own, where nothing else ran)."""
    log = tmp_path / "output.log"
    with open(str(log), "wb") as handle:
        block = b"x" * (1 << 20)
        for _ in range(300):
            handle.write(block)
        handle.write(b"\nRuntimeError: CUDA error: an illegal memory access was encountered\n")
    probe = ("import resource, subprocess, sys\n"
             "out = subprocess.run([sys.executable, %r, 'classify', %r], stdout=subprocess.PIPE).stdout\n"
             "print(out.decode())\n"
             "print('PEAK_KIB %%d' %% resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             % (SCRIPT, str(log)))
    out = subprocess.run([PY, "-c", probe], stdout=subprocess.PIPE, env=isolated_env(tmp_path),
                         timeout=60).stdout.decode()
    assert "cuda_error" in out and "line 2" in out, out
    peak_mib = int(out.split("PEAK_KIB ")[1]) / 1024.0
    assert peak_mib < 200, peak_mib


def test_lines_past_the_bound_reach_grep_clipped_with_their_numbers(tmp_path, monkeypatch):
    """Every line break reaches grep, over-long lines only their first bytes: the numbers are
    the log's, whichever scan runs (two greps, one, the follower as the log grows, Python)."""
    monkeypatch.setattr(G, "EVIDENCE_LINE_BYTES", 4096)
    monkeypatch.setattr(G, "FOLLOW_CHUNK_BYTES", 10000)  # a line's cut spans several sends
    parts = [b"INFO a\n" * 100, b"x" * 100000 + b"\n", b"RuntimeError: one\n",
             b"y" * 3000 + b" Exception: within the bound\n", b"z" * 50000, b"z" * 50000 + b"\n\n\n",
             b"Killed\n", b"w" * 200000]
    want = [(102, "RuntimeError: one"), (103, "y" * 3000 + " Exception: within the bound"), (107, "Killed")]
    log = tmp_path / "output.log"
    log.write_bytes(b"".join(parts))
    assert G.find_evidence(str(log)) == G.EvidenceScan(str(log)).result(10) == want
    assert G._scan_evidence(str(log), 10) == want
    monkeypatch.setattr(G, "EVIDENCE_SPLIT_BYTES", 1000)
    scan = G.EvidenceFollower(str(log), finished=True)
    assert scan.result(10) == want and scan.second is not None
    log.write_bytes(b"")
    follower = _followed(log)
    for part in parts:
        _append(log, part)
        assert wait_for(lambda: follower.fed >= log.stat().st_size, 10)
    assert follower.result(10) == want


def test_grandchild_holding_the_pipe_does_not_hang_the_wrapper(tmp_path):
    code = "import subprocess; subprocess.Popen(['sleep', '30']); raise SystemExit(4)"
    started = time.time()
    proc = run_gpualert(tmp_path, base(tmp_path) + ["--"] + child(code))
    assert proc.returncode == 4
    assert time.time() - started < 20


# ---- descriptors 0-2 closed at start ----

def test_closed_stdout_does_not_put_the_output_in_the_log_twice(tmp_path):
    """`gpualert.py -- cmd >&-`: the log was opened on the free descriptor 1, so the copy
    meant for our stdout went into the log as well (every line twice)."""
    argv = [PY, SCRIPT, "--max-per-hour", "0"] + base(tmp_path) + ["--"] + child(
        "print('hello-out' + '-7f3a'); raise SystemExit(3)")
    proc = subprocess.run(argv, env=isolated_env(tmp_path), cwd=str(tmp_path), timeout=60,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          preexec_fn=lambda: os.close(1))
    assert proc.returncode == 3, proc.stderr
    assert log_text(tmp_path).count(b"hello-out-7f3a") == 1, log_text(tmp_path)


def test_closed_stdout_and_stderr_keep_gpualert_lines_out_of_its_files(tmp_path):
    """With 1 and 2 closed, gpualert's own lines and the child's output must not land in the
    log, run.json or the saved message through a reused descriptor."""
    argv = [PY, SCRIPT, "--max-per-hour", "0"] + base(tmp_path) + ["--"] + child(
        "import sys; print('out' + '-9c1e'); sys.stderr.write('err' + '-9c1e\\n'); raise SystemExit(4)")

    def close_both():
        os.close(1)
        os.close(2)
    proc = subprocess.run(argv, env=isolated_env(tmp_path), cwd=str(tmp_path), timeout=60,
                          preexec_fn=close_both)
    assert proc.returncode == 4
    log = log_text(tmp_path)
    assert log.count(b"out-9c1e") == 1 and log.count(b"err-9c1e") == 1, log
    assert b"gpualert: FAILED" not in log
    saved = outbox_messages(tmp_path)
    assert len(saved) == 1
    with open(saved[0], "rb") as handle:
        assert b"gpualert: FAILED" not in handle.read()


@pytest.mark.needs_root  # mounting a tiny tmpfs
def test_full_log_disk_does_not_stop_the_child_or_the_stream(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    if subprocess.call(["mount", "-t", "tmpfs", "-o", "size=64k", "tmpfs", str(disk)]) != 0:
        pytest.skip("cannot mount tmpfs here")
    try:
        code = "import sys\nfor i in range(20000): print('line %06d ' % i + 'x' * 40)\nraise SystemExit(6)"
        proc = run_gpualert(tmp_path, ["--log-dir", str(disk), "--outbox", str(tmp_path / "outbox"), "--"]
                            + child(code))
        assert proc.returncode == 6
        assert proc.stdout.count(b"\n") == 20000  # the terminal stream is complete
        eml = outbox_messages(tmp_path)
        assert len(eml) == 1
        text = parse(open(eml[0], "rb").read()).get_body(("plain",)).get_content()
        assert "log write failed" in text
    finally:
        subprocess.call(["umount", str(disk)])

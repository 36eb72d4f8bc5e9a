#!/usr/bin/env python3
"""Compatibility smoke test: the wrapper and `classify` under every Python 3.6-3.13 found.

Standard library only, so it runs before anything is installed. Looks for interpreters on
PATH (python3.6 ... python3.13) and under pyenv's versions folder; exits 1 if any found
interpreter fails a check, 2 if none of 3.6-3.13 is found at all.
"""
import glob
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "gpualert.py")
MINORS = range(6, 14)


def find_interpreters():
    found = {}
    roots = [os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")]
    for minor in MINORS:
        candidates = []
        for root in roots:
            candidates += sorted(glob.glob(os.path.join(root, "versions", "3.%d.*" % minor, "bin", "python3")))
        candidates.append(shutil.which("python3.%d" % minor))
        for path in candidates:
            if path and "/shims/" not in path and _runs(path):
                found["3.%d" % minor] = path
                break
    return found


def _runs(python):
    try:
        return subprocess.call([python, "-c", "pass"], stderr=subprocess.DEVNULL) == 0
    except OSError:
        return False


def check(python, tmp):
    # GPUALERT_SENDMAIL=none: the crash run's message must not go through the host's own
    # sendmail to whoever runs this (it mailed them one per Python); TMPDIR: nothing in /tmp
    env = dict(os.environ, XDG_STATE_HOME=os.path.join(tmp, "state"),
               XDG_CONFIG_HOME=os.path.join(tmp, "config"), PATH="/usr/bin:/bin",
               GPUALERT_SENDMAIL="none", TMPDIR=tmp)
    env.pop("GPUALERT_CONFIG", None)
    crash = [python, SCRIPT, "--quiet", "--log-dir", os.path.join(tmp, "logs"), "--",
             python, "-c", "print('step 1'); d = {}; d['missing']"]
    proc = subprocess.run(crash, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    problems = []
    if proc.returncode != 1:
        problems.append("run: exit %s, wanted 1: %s" % (proc.returncode, proc.stderr[-300:]))
    logs = glob.glob(os.path.join(tmp, "logs", "*", "output.log"))
    if len(logs) != 1:
        return problems + ["run: expected one log, found %d" % len(logs)]
    proc = subprocess.run([python, SCRIPT, "classify", "--exit-code", "1", "--json", logs[0]],
                          env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=60)
    if proc.returncode != 0 or b'"class": "traceback"' not in proc.stdout:
        problems.append("classify: exit %s, output %r" % (proc.returncode, proc.stdout[-300:]))
    problems += check_delivery(python, tmp, env)
    killed = [python, SCRIPT, "--quiet", "--notify", "never", "--log-dir", os.path.join(tmp, "k"),
              "--", python, "-c", "import os; os.kill(os.getpid(), 9)"]
    code = subprocess.call(killed, env=env, timeout=60)
    if code != 137:
        problems.append("SIGKILL'd child: exit %s, wanted 137" % code)
    return problems


def check_delivery(python, tmp, env):
    """Build the MIME message and hand it to a sendmail stand-in (a real executable)."""
    fake = os.path.join(tmp, "sendmail")
    received = os.path.join(tmp, "received.eml")
    with open(fake + ".new", "w") as handle:  # renamed into place, as wrapper_helpers.write_executable
        handle.write("#!/bin/sh\ncat > %s\n" % received)
    os.chmod(fake + ".new", 0o755)
    os.replace(fake + ".new", fake)
    argv = [python, SCRIPT, "--quiet", "--sendmail", fake, "--to", "me@example.org",
            "--log-dir", os.path.join(tmp, "d"), "--", python, "-c", "raise SystemExit(4)"]
    code = subprocess.call(argv, env=env, timeout=60)
    text = open(received, "rb").read() if os.path.exists(received) else b""
    if code != 4 or b"Subject: [gpualert] FAILED" not in text:
        return ["sendmail delivery: exit %s, message %r" % (code, text[:200])]
    return []


def main():
    found = find_interpreters()
    if not found:
        print("compat: no Python 3.6-3.13 found")
        return 2
    failed = 0
    for version, python in sorted(found.items(), key=lambda kv: int(kv[0].split(".")[1])):
        tmp = tempfile.mkdtemp(prefix="gpualert-compat-")
        try:
            problems = check(python, tmp)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
        print("compat: Python %s (%s): %s" % (version, python, "ok" if not problems else "FAILED"))
        for problem in problems:
            print("    " + problem)
        failed += bool(problems)
    missing = [("3.%d" % m) for m in MINORS if "3.%d" % m not in found]
    if missing:
        print("compat: not found here: %s" % ", ".join(missing))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

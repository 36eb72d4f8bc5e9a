"""Installing gpualert the ways the README says, with the real interpreters pyenv holds:
pip 18 (Python 3.6's) needs a setup.py; a too-old Python says which version it needs."""
import glob
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _pyenv_python(prefix):
    root = os.environ.get("PYENV_ROOT")  # CI's user pass: user-executable copies (.ci/user-setup.sh)
    try:
        root = root or subprocess.run(["pyenv", "root"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                      universal_newlines=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        root = os.path.expanduser("~/.pyenv")
    found = sorted(glob.glob(os.path.join(root or "/nonexistent", "versions", prefix + "*", "bin", "python")))
    return found[-1] if found else None


def _copy_source(tmp_path):
    src = tmp_path / "src"
    os.makedirs(str(src))
    for name in ("gpualert.py", "setup.py", "setup.cfg", "pyproject.toml", "README.md"):
        if os.path.exists(os.path.join(ROOT, name)):
            shutil.copy(os.path.join(ROOT, name), str(src / name))
    return src


def _pip_install(python, tmp_path, *extra):
    home = tmp_path / "home"
    os.makedirs(str(home), exist_ok=True)
    env = dict(os.environ, HOME=str(home), PIP_DISABLE_PIP_VERSION_CHECK="1")
    env.pop("PYTHONUSERBASE", None)
    env.pop("VIRTUAL_ENV", None)
    proc = subprocess.run([python, "-m", "pip", "install", "--user"] + list(extra) + ["."],
                          cwd=str(_copy_source(tmp_path)), env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    return proc, home


#: the interpreter the suite runs under, or the one its venv was made from (pip refuses
#: --user inside a venv, and a user types the README's line with their own python3)
BASE_PYTHON = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)

@pytest.mark.parametrize("prefix", ["3.6", BASE_PYTHON])
def test_pip_install_user_gives_a_working_command(tmp_path, prefix):
    python = _pyenv_python(prefix) if prefix == "3.6" else prefix
    if python is None:
        pytest.skip("no Python %s under pyenv" % prefix)
    if _externally_managed(python):
        pytest.skip("%s is externally managed: the README's venv line is tested instead" % python)
    if prefix == "3.6":  # offline, with its own setuptools: pip 18 runs setup.py install
        proc, home = _pip_install(python, tmp_path, "--no-build-isolation", "--no-index")
    else:  # the README's line as typed: pip fetches the build backend pyproject.toml names
        proc, home = _pip_install(python, tmp_path)
        if proc.returncode != 0 and ("No matching distribution" in proc.stdout
                                     or "Could not find a version" in proc.stdout):
            pytest.skip("no package index reachable for the build backend: %s" % proc.stdout[-300:])
    assert proc.returncode == 0, proc.stdout[-3000:]
    command = glob.glob(str(home / ".local" / "bin" / "gpualert"))
    assert command, proc.stdout[-2000:]
    ran = subprocess.run([command[0], "--version"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True, timeout=60, env=dict(os.environ, HOME=str(home)))
    assert ran.returncode == 0 and ran.stdout.startswith("gpualert "), ran.stderr


def _externally_managed(python):
    code = "import os, sysconfig; print(os.path.exists(os.path.join(sysconfig.get_paths()['stdlib'], 'EXTERNALLY-MANAGED')))"
    out = subprocess.run([python, "-c", code], stdout=subprocess.PIPE, universal_newlines=True, timeout=60)
    return out.stdout.strip() == "True"


@pytest.mark.parametrize("python", sorted(set(p for p in ("/usr/bin/python3", sys.executable)
                                                   if os.path.exists(p))))
def test_the_readme_venv_line_works_where_the_system_python_is_externally_managed(tmp_path, python):
    if not _externally_managed(python):
        pytest.skip("%s is not externally managed (pip install --user is the README's line)" % python)
    venv = str(tmp_path / "venv")
    made = subprocess.run([python, "-m", "venv", venv], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          universal_newlines=True, timeout=300)
    if made.returncode != 0:
        pytest.skip("no venv module here: %s" % made.stdout[-300:])
    # the README's line as it is: pip fetches the build backend (setuptools) it declares
    proc = subprocess.run([os.path.join(venv, "bin", "pip"), "install", "."],
                          cwd=str(_copy_source(tmp_path)), stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, universal_newlines=True, timeout=300)
    if proc.returncode != 0 and ("No matching distribution" in proc.stdout
                                 or "Could not find a version" in proc.stdout):
        pytest.skip("no package index reachable for the build backend: %s" % proc.stdout[-300:])
    assert proc.returncode == 0, proc.stdout[-3000:]
    ran = subprocess.run([os.path.join(venv, "bin", "gpualert"), "--version"], stdout=subprocess.PIPE,
                         universal_newlines=True, timeout=60)
    assert ran.stdout.startswith("gpualert "), ran.stdout


def test_python_2_running_the_file_is_told_which_python_it_needs():
    python = _pyenv_python("2.") or shutil.which("python2")
    if python is None:
        pytest.skip("no Python 2 here (pyenv or python2)")
    proc = subprocess.run([python, os.path.join(ROOT, "gpualert.py"), "--", "true"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=60)
    assert proc.returncode != 0
    assert "gpualert needs Python 3.6 or newer" in proc.stderr, proc.stderr


def test_pip_on_python_2_says_which_python_it_needs(tmp_path):
    python = _pyenv_python("2.")
    if python is None or subprocess.run([python, "-m", "pip", "--version"],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode:
        pytest.skip("no Python 2 with pip under pyenv")
    proc, _ = _pip_install(python, tmp_path, "--no-build-isolation", "--no-index")
    assert proc.returncode != 0
    assert "needs Python 3.6 or newer" in proc.stdout or "requires a different Python" in proc.stdout, \
        proc.stdout[-3000:]


def test_the_readme_plain_file_line_works_on_a_fresh_account(tmp_path):
    # a new account has no ~/bin: the README's own line must make it
    with open(os.path.join(ROOT, "README.md")) as f:
        (line,) = [l.split("#")[0].strip() for l in f if "cp gpualert.py ~/bin/" in l
                   and l.startswith("    ")]
    home = tmp_path / "home"
    os.makedirs(str(home))
    env = dict(os.environ, HOME=str(home))
    proc = subprocess.run(["bash", "-c", line + " && ~/bin/gpualert.py --version"], cwd=ROOT, env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=60)
    assert proc.returncode == 0 and proc.stdout.startswith("gpualert "), proc.stderr

"""The one module loader, shared by the tests and eval.py: import a file by path (STYLE 2.8),
never an installed copy; one gpualert module for all tests."""
import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "gpualert.py"


def load_module(path, name="gpualert_under_test"):
    """Import the Python file at `path` as module `name` (replacing one of that name)."""
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # register before exec, as the importlib docs do
    spec.loader.exec_module(module)
    return module


def load_gpualert():
    """This checkout's gpualert.py as the module `gpualert`, loaded once."""
    cached = sys.modules.get("gpualert")
    if cached is not None and getattr(cached, "__file__", None) == str(SCRIPT):
        return cached
    return load_module(SCRIPT, "gpualert")

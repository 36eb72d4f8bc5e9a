"""Import gpualert.py by path (STYLE 2.8), never an installed copy; one module for all tests."""
import importlib.util
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "gpualert.py"


def load_gpualert():
    if "gpualert" in sys.modules and getattr(sys.modules["gpualert"], "__file__", None) == str(SCRIPT):
        return sys.modules["gpualert"]
    spec = importlib.util.spec_from_file_location("gpualert", str(SCRIPT))
    module = importlib.util.module_from_spec(spec)
    sys.modules["gpualert"] = module  # register before exec, as the importlib docs do
    spec.loader.exec_module(module)
    return module

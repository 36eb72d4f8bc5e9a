"""A shim for pip < 19 (Python 3.6's pip 18 needs a setup.py); everything is in setup.cfg.
Written to parse on Python 2 too, so an install there says why it cannot work."""
import sys

if sys.version_info < (3, 6):
    sys.exit("gpualert needs Python 3.6 or newer (this is Python %d.%d)" % sys.version_info[:2])

from setuptools import setup

setup()

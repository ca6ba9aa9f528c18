#!/usr/bin/python3
"""tools/export_torch.py: the qwasm exporter run from a clone (the package python/qwasm_export; installed, it is
the qwasm-export command). Scripts in tools/ import it as `from export_torch import export`. docs/exporter.md."""
import os
import sys

sys.dont_write_bytecode = True  # keep the source tree free of __pycache__
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "python"))

from qwasm_export import *  # noqa: E402,F401,F403
from qwasm_export.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())

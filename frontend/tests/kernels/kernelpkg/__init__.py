"""A package of kernels and helpers (frontend/tests/kernels/kernelpkg, label frontend): kernels in
ops/ import helpers from util/ by relative and absolute imports, as nki-library's kernels do.

Like nki-library's top-level __init__.py (which discovers and imports every submodule with
importlib), this file is host code outside the kernel language: importing a submodule of the
package does not run it, taking a name from it does (and is refused: ops/init_user.py).
"""

import importlib

VERSION = importlib.import_module("math").pi

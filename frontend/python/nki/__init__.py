"""The top-level `nki` package name, an alias of ncverify's `neuronxcc.nki` stand-in."""
import sys

import neuronxcc.nki as _nki
from neuronxcc.nki import *  # noqa: F401,F403
from neuronxcc.nki import compiler, isa, language, typing  # noqa: F401

for _name in ("compiler", "isa", "language", "typing"):
    sys.modules["nki." + _name] = getattr(_nki, _name)
jit = _nki.jit
baremetal = _nki.baremetal

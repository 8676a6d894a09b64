"""A relative import above the top-level package."""

import neuronxcc.nki.language as nl
from neuronxcc import nki

from ...outside import helper


@nki.jit
def escape(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out

"""Imports a module of its package that is outside the kernel language (util/evil.py)."""

import neuronxcc.nki.language as nl
from neuronxcc import nki

from ..util.evil import collect


@nki.jit
def tampering(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out

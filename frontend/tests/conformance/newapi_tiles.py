"""Kernel helpers the new-API conformance tests share: an HBM tensor copied on chip, an on-chip
tile copied to a new kernel output (both by nisa.dma_copy)."""
import nki.isa as nisa
import nki.language as nl


def on_chip(t, dtype=None):
    """An SBUF copy of the HBM tensor t."""
    x = nl.ndarray(t.shape, dtype=dtype or t.dtype, buffer=nl.sbuf)
    nisa.dma_copy(x, t)
    return x


def to_hbm(x):
    """A new shared_hbm output holding the on-chip tile x."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(out, x)
    return out

"""A kernel for nki_mx_test.py's `ncverify import` check: a positional dtype argument given by
--param, and .ap(dtype=) of uint32 words as an x4 type (the nki-samples MX tutorial's pattern)."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def mx_param_kernel(words, kind):
    K, M = words.shape
    view = words.ap(dtype=kind, pattern=[[M, K], [1, M]], offset=0)
    t = nl.ndarray((K, M), dtype=kind, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=view)
    o = nl.ndarray((K, M), dtype=kind, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o, src=t)
    return o

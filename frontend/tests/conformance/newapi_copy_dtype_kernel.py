"""A kernel that passes NKI 0.1.0's `dtype=` to nisa.tensor_copy, as nki-samples' matrix-
multiplication tutorial does: equal to dst.dtype it is taken (the `.nkir` header notes that NKI
0.2.0+ rejects it), different it is refused at the call's line (newapi_simulate_test.py)."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def copied(x, cast_to_bf16=False):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    u = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    if cast_to_bf16:
        nisa.tensor_copy(dst=u, src=t, dtype=nl.bfloat16)
    else:
        nisa.tensor_copy(dst=u, src=t, dtype=out.dtype)
    nisa.dma_copy(dst=out, src=u)
    return out

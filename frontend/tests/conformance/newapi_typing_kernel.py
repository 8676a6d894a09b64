"""A kernel of today's API (`import nki`) whose arguments are annotated with the legacy
`neuronxcc.nki.typing` names, as nki-library d2ad3a5's router_topk.py annotates its outputs:
annotations carry no semantics, so it is traced with the new API's (newapi_packages_test.py)."""

import neuronxcc.nki.typing as nt
import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def affine_rows(x: nt.tensor, out: nt.mutable_tensor):
    """out = x * 2 + 1, written into the output argument; x read through an access pattern."""
    rows, cols = x.shape
    t = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.ap(pattern=[[cols, rows], [1, cols]], offset=0))
    r = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=r, data=t, op0=nl.multiply, operand0=2.0, op1=nl.add, operand1=1.0)
    nisa.dma_copy(dst=out, src=r)

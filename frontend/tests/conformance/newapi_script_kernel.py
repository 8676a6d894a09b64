"""A kernel file of today's API that is also a script: its module-level code calls the kernel
through nki.simulate and checks the result. `ncverify import newapi_script_kernel.py:negated`
traces the kernel anyway (loading stops at the module-level call); imported in Python, the call
is simulated (newapi_simulate_test.py)."""

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def negated(x):
    n, m = x.shape
    assert n <= 128
    out = nl.ndarray((n, m), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((n, m), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    u = nl.ndarray((n, m), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=-1.0)
    nisa.dma_copy(dst=out, src=u)
    return out


x = np.arange(32, dtype=np.float32).reshape(4, 8)
result = nki.simulate(negated)(x)
assert (result == -x).all()

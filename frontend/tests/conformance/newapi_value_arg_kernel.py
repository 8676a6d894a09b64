"""A kernel that takes a Python value positionally and without a default, as the SDK's
average_pool2d (`pool_size`) and transpose2d (`shape2D`) examples do: `ncverify import ...
--param factor=3` makes it a value, not a tensor (newapi_simulate_test.py, `ValueArguments`)."""

import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def scaled(x, factor):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=float(factor))
    nisa.dma_copy(dst=out, src=t)
    return out

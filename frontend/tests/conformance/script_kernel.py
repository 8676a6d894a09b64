"""A kernel file that is also a script (as many published kernels are): its module-level code
builds arrays, calls the kernel on them and checks the result. `ncverify import
script_kernel.py:halve` traces the kernel anyway (loading stops at the module-level call);
imported in Python, the call is simulated."""

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit
def halve(x):
    n, m = x.shape
    assert n <= 128
    out = nl.ndarray((n, m), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(x), 0.5))
    return out


@nki.jit
def scale_by_width(x, scale=None):
    """x * scale, the scale 1/sqrt(width) unless given (a float computed from a shape)."""
    n, width = x.shape
    assert n <= 128
    scale = scale or width ** -0.5
    out = nl.ndarray((n, width), dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(x), scale))
    return out


x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
halved = halve(x)
assert np.array_equal(halved, x / 2), "the module-level call computed the wrong value"


@nki.jit
def defined_after_the_call(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(x))
    return out

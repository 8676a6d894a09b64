"""NKI kernels that the front end must refuse, each with a clear `FILE.py:LINE: why` (the tests
check the line numbers named in the comments: keep each error on its line)."""

import numpy as np
from scipy.special import softmax  # noqa: F401  (not installed: a placeholder until used)

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit
def unsupported_call(a):
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = nl.where(t, t, t)  # error: not modelled
    nl.store(out, value=u)
    return out


@nki.jit
def symbolic_branch(a):
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    if n > 256:  # error: needs the value of n
        nl.store(out, value=nl.load(a))
    return out


@nki.jit
def failing_assert(a):
    n, m = a.shape
    assert n <= 128, "rows must fit one tile"  # error
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out


@nki.jit
def own_exception(a, mode="fast"):
    n, m = a.shape
    if mode != "fast":
        raise ValueError("mode %s is not implemented" % mode)  # error
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.load(a))
    return out


@nki.jit
def hbm_matmul(a):
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm)
    p = nisa.nc_matmul(stationary=a, moving=a)  # error: operands in HBM
    nl.store(out, value=p)
    return out


@nki.jit
def shape_mismatch(a):
    n, m = a.shape
    assert n == 128 and m == 64
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    u = nl.add(t, t[:, 0:32])  # error: [128, 64] + [128, 32]
    nl.store(out, value=u)
    return out


@nki.jit
def too_many_partitions(a):
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    big = nl.ndarray((256, m), dtype=a.dtype)  # error: 256 partitions
    big[...] = nl.load(a)
    nl.store(out, value=big)
    return out


@nki.jit
def uses_missing_module(a):
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    w = softmax(np.zeros(3))  # error: scipy is not there
    nl.store(out, value=nl.load(a) * float(w[0]))
    return out


@nki.jit
def int_of_shape(a):
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    tiles = [0] * int(n)  # error: int() of a symbolic shape
    nl.store(out, value=nl.load(a))
    return out, tiles


@nki.jit
def no_output(a):
    n, m = a.shape
    t = nl.load(a)
    return t  # error: returns an on-chip tile


@nki.jit
def data_branch(a):
    """A branch on tensor values (data-dependent): refused; loop splitting is for conditions on
    loop variables, the program id and params."""
    n, m = a.shape
    assert n == 256 and m == 64
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        t = nl.load(a[nl.ds(i * 128, 128), :])
        if t > 0.5:  # error: depends on tensor values
            nl.store(out[nl.ds(i * 128, 128), :], value=t)
    return out


@nki.jit
def nonaffine_branch(a):
    """A product of the loop variable with itself: not affine, no exact split."""
    n, m = a.shape
    assert n == 256 and m == 64
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(2):
        if i * i == 1:  # error: not affine in i
            nl.store(out[nl.ds(i * 128, 128), :], value=nl.load(a[nl.ds(i * 128, 128), :]))
    return out

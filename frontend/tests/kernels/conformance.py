"""Kernels for the `conformance` tests (tools/tests/frontend_conformance_test.cpp): each uses one
documented argument of a neuronxcc.nki call, and the test runs it on the interpreter with inputs
it chose and compares every output element with a value it computed itself."""

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc.nki.language import par_dim


@nki.jit
def transpose_flag_wide_moving(q, k):
    """is_transpose=True is a hint (ISA nc_matmul: "a transpose operation with moving as an
    identity matrix"); the Tensor engine still computes stationary.T @ moving, here a
    [128, 128] x [128, 512] product."""
    d, n = q.shape
    d2, m = k.shape
    assert d == 128 and n == 128 and d2 == d and m == 512
    out = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm)
    qs = nl.load(q)
    ks = nl.load(k)
    p = nisa.nc_matmul(stationary=qs, moving=ks, is_transpose=True, is_moving_onezero=False)
    nl.store(out, value=nisa.tensor_copy(p))
    return out


@nki.jit
def transpose_by_identity(a):
    """The documented use of is_transpose: the identity as the moving tile gives a.T."""
    n, m = a.shape
    assert n == 128 and m == 128
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    ident = nl.load(nl.shared_constant(np.identity(128, dtype=np.int8), dtype=nl.float32))
    x = nl.load(a)
    p = nisa.nc_matmul(x, ident, is_transpose=True, is_moving_onezero=True)
    nl.store(out, value=nisa.tensor_copy(p))
    return out


@nki.jit
def pe_tiled_matmul(a, b):
    """tile_position/tile_size place a 64-row matmul in the lower half of the PE array; the
    product is the same."""
    k, m = a.shape
    k2, n = b.shape
    assert k == 64 and m == 64 and k2 == k and n == 512
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    p = nisa.nc_matmul(nl.load(a), nl.load(b), tile_position=(64, 0), tile_size=(64, 128))
    nl.store(out, value=nisa.tensor_copy(p))
    return out


@nki.jit
def accumulator_registers(a, b):
    """reduce_cmd as given: the first activation only adds a's rows into the Scalar engine's
    registers (no reduce_res), the second adds b's and reads the registers out."""
    n, m = a.shape
    assert n == 128 and m == 64 and b.shape == a.shape
    out = nl.ndarray((n, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    nisa.activation(nl.copy, x, reduce_op=np.add, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    regs = nl.ndarray((par_dim(n), 1), dtype=nl.float32)
    nisa.activation(nl.copy, y, reduce_op=np.add, reduce_res=regs,
                    reduce_cmd=nisa.reduce_cmd.reduce)
    nl.store(out, value=regs)
    return out


@nki.jit
def reductions_keepdims(a):
    """keepdims=True keeps the reduced axis (size 1); a negated sum of each row."""
    n, m = a.shape
    assert n == 128 and m == 64
    out = nl.ndarray((n, 2), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    s = nisa.tensor_reduce(np.add, x, axis=1, keepdims=True, negate=True)
    t = nl.max(x, axis=1, keepdims=True)
    nl.store(out[:, 0:1], value=s)
    nl.store(out[:, 1:2], value=t)
    return out


@nki.jit
def hints_keep_values(a):
    """Arguments that change when or how the hardware does something, not the values: nl.full's
    lazy_initialization, a loop's precise_schedule, dma_copy's dge_mode=swdge, ncc.no_reorder."""
    n, m = a.shape
    assert n == 128 and m == 64
    out = nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm)
    two = nl.full((par_dim(n), m), 2.0, dtype=nl.float32, buffer=nl.sbuf,
                  lazy_initialization=False)
    for i in nl.affine_range(1, precise_schedule=True):
        with ncc.no_reorder():
            y = nl.add(nl.load(a), two)
        nisa.dma_copy(dst=out, src=y, dge_mode=nisa.dge_mode.swdge)
    return out

"""Kernels that pass an argument the front end does not run as documented, or one the
neuronxcc.nki API does not have: each must stop the trace at the marked line, naming the call
and the argument (tools/tests/frontend_conformance_test.cpp finds the line by its text)."""

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from neuronxcc.nki.language import par_dim


def _square(a, n, m):
    assert n == 128 and m == 128
    return nl.ndarray((n, m), dtype=nl.float32, buffer=nl.shared_hbm), nl.load(a)


# ---- arguments the API does not have


@nki.jit
def unknown_keyword(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    p = nisa.nc_matmul(stationary=x, moving=x, transpose_moving=True)  # refused: unknown
    nl.store(out, value=p)
    return out


@nki.jit
def newer_api_dst(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    y = nl.ndarray((128, 128), dtype=nl.float32)
    nisa.tensor_tensor(dst=y, data1=x, data2=x, op=nl.add)  # refused: the newer API's dst=
    nl.store(out, value=y)
    return out


@nki.jit
def misspelt_load_keyword(a):
    n, m = a.shape
    out, _ = _square(a, n, m)
    x = nl.load(a, dtyp=nl.bfloat16)  # refused: unknown keyword
    nl.store(out, value=x)
    return out


@nki.jit
def keyword_only_by_position(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    y = nisa.tensor_copy(x, None, nl.bfloat16)  # refused: mask and dtype are keyword-only
    nl.store(out, value=y)
    return out


@nki.jit
def loop_keyword(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    for i in nl.affine_range(2, unroll_factor=2):  # refused: not a loop argument
        nl.store(out, value=x)
    return out


@nki.jit
def program_id_without_axis(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    i = nl.program_id()  # refused: axis is required
    nl.store(out[i * 0:128, :], value=x)
    return out


# ---- documented arguments the model does not run


@nki.jit
def matmul_perf_mode(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    p = nisa.nc_matmul(x, x, perf_mode="double_row_gen3")  # refused: perf_mode
    nl.store(out, value=p)
    return out


@nki.jit
def matmul_tile_position_alone(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    p = nisa.nc_matmul(x, x, tile_position=(0, 0))  # refused: tile_size missing
    nl.store(out, value=p)
    return out


@nki.jit
def matmul_tile_too_small(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    p = nisa.nc_matmul(x, x, tile_position=(0, 0), tile_size=(64, 128))  # refused: 64 rows
    nl.store(out, value=p)
    return out


@nki.jit
def dma_read_modify_write(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    nisa.dma_copy(dst=out, src=x, dst_rmw_op=np.multiply)  # refused: add is the only op
    return out


@nki.jit
def dma_oob_skip(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    nisa.dma_copy(dst=out, src=x, oob_mode=nisa.oob_mode.skip)  # refused: no indirect index
    return out


@nki.jit
def dma_dge_mode(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    nisa.dma_copy(dst=out, src=x, dge_mode=nisa.dge_mode.hwdge)  # refused: dge_mode
    return out


@nki.jit
def masked_iota(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    i_p, i_f = nl.mgrid[0:128, 0:128]
    idx = nisa.iota(i_p + i_f, dtype=nl.int32, mask=(i_f < 64))  # refused: mask
    nl.store(out, value=nisa.tensor_copy(idx, dtype=nl.float32))
    return out


@nki.jit
def masked_memset(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    i_p, i_f = nl.mgrid[0:128, 0:128]
    z = nisa.memset((128, 128), 1.0, nl.float32, mask=(i_f < 64))  # refused: mask
    nl.store(out, value=z)
    return out


@nki.jit
def scalar_reduce_reversed(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    r = nl.ndarray((par_dim(128), 1), dtype=nl.float32)
    y = nisa.tensor_scalar_reduce(  # refused: reverse0
        data=x, op0=np.subtract, operand0=1.0, reduce_op=np.add, reduce_res=r, reverse0=True)
    nl.store(out, value=y)
    return out


@nki.jit
def activation_max_reduce(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    r = nl.ndarray((par_dim(128), 1), dtype=nl.float32)
    y = nisa.activation(np.exp, x, reduce_op=np.max, reduce_res=r,  # refused: reduce_op=max
                        reduce_cmd=nisa.reduce_cmd.reset_reduce)
    nl.store(out, value=y)
    return out


@nki.jit
def transpose_on_gpsimd(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    y = nisa.nc_transpose(x[0:32, 0:32], engine=nisa.gpsimd_engine)  # refused: engine
    nl.store(out[0:32, 0:32], value=y)
    return out


@nki.jit
def tensor_tensor_on_scalar(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    y = nisa.tensor_tensor(x, x, np.add, engine=nisa.scalar_engine)  # refused: engine
    nl.store(out, value=y)
    return out


@nki.jit
def gpsimd_reads_psum(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    p = nisa.nc_matmul(x, x)
    y = nisa.tensor_copy(p, engine=nisa.gpsimd_engine)  # refused: GpSimd cannot read PSUM
    nl.store(out, value=y)
    return out


@nki.jit
def predicated_copy_casts(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    y = nl.ndarray((128, 128), dtype=nl.float32)
    pred = nl.greater(x, 0.0, dtype=nl.uint8)
    nisa.tensor_copy_predicated(src=x, dst=y, predicate=pred,  # refused: dtype
                                dtype=nl.bfloat16)
    nl.store(out, value=y)
    return out


@nki.jit
def psum_alloc_offset(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    acc = nl.ndarray((128, 128), dtype=nl.float32,
                     buffer=ncc.psum.mod_alloc(base_bank=0, base_addr=512))  # refused: base_addr
    acc[...] = nisa.nc_matmul(x, x)
    nl.store(out, value=acc)
    return out


@nki.jit
def activation_reduce_max(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    r = nl.ndarray((par_dim(128), 1), dtype=nl.float32)
    y = nisa.activation_reduce(np.exp, x, reduce_op=np.max, reduce_res=r)  # refused: reduce_op
    nl.store(out, value=y)
    return out


@nki.jit
def tensor_scalar_on_tensor_engine(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    y = nisa.tensor_scalar(x, np.add, 1.0, engine=nisa.tensor_engine)  # refused: engine
    nl.store(out, value=y)
    return out


@nki.jit
def memset_on_scalar(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    z = nisa.memset((128, 128), 0.0, nl.float32, engine=nisa.scalar_engine)  # refused: engine
    nl.store(out, value=z)
    return out


@nki.jit
def matmul_tile_unaligned(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    p = nisa.nc_matmul(x[0:64, 0:64], x[0:64, :],  # refused: 16 is not a multiple of 32
                       tile_position=(16, 0), tile_size=(64, 128))
    nl.store(out[0:64, :], value=p)
    return out


@nki.jit
def matmul_tile_32_by_32(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    p = nisa.nc_matmul(x[0:32, 0:32], x[0:32, :],  # refused: (32, 32) on NeuronCore-v2
                       tile_position=(0, 0), tile_size=(32, 32))
    nl.store(out[0:32, :], value=p)
    return out


@nki.jit
def sbuf_alloc_partition(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    t = nl.ndarray((32, 128), dtype=nl.float32,
                   buffer=ncc.sbuf.mod_alloc(base_addr=0, base_partition=32))  # refused
    t[...] = nl.load(a[0:32, :])
    nl.store(out[0:32, :], value=t)
    return out


@nki.jit
def psum_alloc_free_tiles(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    acc = nl.ndarray((128, 128), dtype=nl.float32,
                     buffer=ncc.psum.mod_alloc(base_bank=0, num_free_tiles=(2,)))  # refused
    acc[...] = nisa.nc_matmul(x, x)
    nl.store(out, value=acc)
    return out


@nki.jit
def no_reorder_with_argument(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    with ncc.no_reorder(True):  # refused: no_reorder takes no argument
        nl.store(out, value=x)
    return out


@nki.jit
def negated_bitwise_reduce(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    i = nisa.tensor_copy(x, dtype=nl.uint32)
    r = nisa.tensor_reduce(np.bitwise_or, i, axis=1, negate=True)  # refused: negate
    nl.store(out[:, 0:1], value=nisa.tensor_copy(r, dtype=nl.float32))
    return out


@nki.jit
def matmul_accumulate_flag(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    p = nisa.nc_matmul(x, x, accumulate=True)  # refused: the newer API's accumulate
    nl.store(out, value=p)
    return out


@nki.jit
def matmul_mixed_fp32(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    xb = nisa.tensor_copy(x, dtype=nl.bfloat16)
    p = nisa.nc_matmul(x, xb)  # refused: fp32 with bf16
    nl.store(out, value=p)
    return out


@nki.jit
def matmul_integer_operand(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    xi = nisa.tensor_copy(x, dtype=nl.int32)
    p = nisa.nc_matmul(xi, xi)  # refused: int32 is not a Tensor-engine dtype
    nl.store(out, value=p)
    return out


# ---- partition counts that do not broadcast: refused at the call, never emitted as an
# instruction that the ISA rules then fail at run time


@nki.jit
def column_over_other_partitions(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    col = nl.load(a[0:64, 0:1])
    z = nl.add(x, col)  # refused: 64 partitions against 128, neither is one
    nl.store(out, value=z)
    return out


# ---- memory accesses the model does not make


@nki.jit
def index_tile_into_sbuf(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    idx = nisa.iota(nl.arange(128)[:, None], dtype=np.int32)
    y = nl.copy(x[idx, nl.arange(128)[None, :]])  # refused: indirect addressing of SBUF
    nl.store(out, value=y)
    return out


@nki.jit
def two_index_tiles(a):
    n, m = a.shape
    out, _ = _square(a, n, m)
    idx = nisa.iota(nl.arange(128)[:, None], dtype=np.int32)
    y = nl.load(a[idx, idx])  # refused: one dim is offset, not two
    nl.store(out, value=y)
    return out


@nki.jit
def float_index_tile(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    y = nl.load(a[x[:, 0:1], nl.arange(128)[None, :]])  # refused: indices are integers
    nl.store(out, value=y)
    return out


@nki.jit
def symbolic_indexed_dim(a):
    n, m = a.shape
    out, _ = _square(a, n, m)
    idx = nisa.iota(nl.arange(128)[:, None], dtype=np.int32)
    y = nl.load(a[idx, nl.arange(128)[None, :]])  # refused: indices checked against n, not known
    nl.store(out, value=y)
    return out


@nki.jit
def masked_indirect_load(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    scratch = nl.ndarray((128, 128), dtype=nl.float32, buffer=nl.hbm)  # a size known here
    nl.store(scratch, value=x)
    idx = nisa.iota(nl.arange(128)[:, None], dtype=np.int32)
    i_f = nl.arange(128)[None, :]
    y = nl.load(scratch[idx, i_f], mask=(i_f < 64))  # refused: the mask would narrow the indices
    nl.store(out, value=y)
    return out


@nki.jit
def dma_transpose_from_psum(a):
    n, m = a.shape
    out, x = _square(a, n, m)
    p = nisa.nc_transpose(x)
    y = nisa.dma_transpose(p)  # refused: the page's source is in HBM or SBUF
    nl.store(out, value=y)
    return out


@nki.jit
def dma_transpose_other_axes(a):
    n, m = a.shape
    out, _ = _square(a, n, m)
    y = nisa.dma_transpose(a, axes=(0, 1))  # refused: not a documented permutation
    nl.store(out, value=y)
    return out

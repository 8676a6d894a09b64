"""`nki.isa` of NKI 0.2-0.6: every call writes its destination `dst`, the first argument, and
returns nothing; the output dtype is `dst.dtype`; there is no `dtype=` or `mask=` (Neuron SDK
2.27 release notes: "all nki.isa APIs have dst as an input param", "removed dtype and mask
support"). The signatures are the 0.6 reference's (aws-neuron-sdk nki/api/nki/isa/__init__.py
at 81ce03ae; https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/nki.isa.html).
Each call records the same IR instruction as the legacy stand-in (ops.py), writing `dst`."""

from .. import errors, ops, trace
from .. import isa as legacy
from ..program import Enum
from ..signatures import api, refuse
from ..tiles import as_view
from .constants import (current_version, dge_mode, engine, gpsimd_engine,  # noqa: F401
                        matmul_perf_mode, nc_version, oob_mode, reduce_cmd, scalar_engine,
                        tensor_engine, unknown_engine, vector_engine)
from .constants import dma_engine  # noqa: F401


def _dst(call, dst, where=("sbuf", "psum")):
    """The destination's view; compute engines write SBUF or PSUM only."""
    v = as_view(dst, "dst")
    if v.tensor.mem not in where:
        raise errors.NkiError("%s: dst is in %s; this call writes %s" %
                              (call, _mem_name(v.tensor.mem), " or ".join(
                                  _mem_name(m) for m in where)))
    return v


def _mem_name(mem):
    return {"hbm": "HBM", "sbuf": "SBUF", "psum": "PSUM"}[mem]


def _name_arg(call, name):
    """name= labels the instruction for scheduling (kernel.with_schedule()); it changes no
    value."""
    if name is not None and not isinstance(name, str):
        raise errors.NkiError("%s: name= takes a string, not %r" % (call, name))


def _same_elements(call, dst, src, what="src"):
    """The ISA's rule for element-wise calls: dst and the input have the same partition count
    and the same number of elements per partition (checked where the sizes are known)."""
    ld, ls = dst.logical_lins(), src.logical_lins()
    if ld == ls:  # the same sizes (most calls): the same counts, whatever the params' values
        return
    r = trace.current().evaluate
    pd, ps = r(ld[0]), r(ls[0])
    fd, fs = r(ops._free_size(dst)), r(ops._free_size(src))
    if all(x.is_const() for x in (pd, ps, fd, fs)) and (pd != ps or fd != fs):
        raise errors.NkiError("%s: dst %s and %s %s differ in partitions or elements per "
                              "partition" % (call, tuple(dst.shape), what, tuple(src.shape)))


def _stale_dtype_keyword(call, dst, dtype):
    """`dtype=` on a destination-first call: the NKI 0.1.0 (SDK 2.27) form that nki-samples'
    matrix-multiplication tutorial still writes (`tensor_copy(dst=, src=, dtype=result.dtype)`).
    NKI 0.1.0 ignored unknown keywords and 0.2.0 made them an error (release notes 0.2.0, "Fixed
    invalid keyword arguments being silently ignored"); the output dtype is dst.dtype either
    way. Equal to dst.dtype, every reading (the keyword ignored, the keyword obeyed, the output
    in dst.dtype) gives the same values, so it is taken and the `.nkir` header says NKI 0.2.0+
    rejects it; a different dtype means different values under those readings, so it is
    refused naming both dtypes (frontend/README.md, "dtype= on nisa.tensor_copy")."""
    from ..dtypes import DType, normalize

    want = normalize(dtype)
    have = DType(dst.tensor.dtype)
    if want != have:
        raise errors.NkiError(
            "%s: dtype=%r differs from dst.dtype %r; the output dtype is dst.dtype (NKI 0.2-0.6 "
            "has no dtype= here and rejects the keyword; NKI 0.1.0 ignored it), so the call "
            "means different values as written and as run: allocate dst as %r or drop dtype=" %
            (call, want, have, want))
    import os

    where = errors.user_location()
    note = ("%s:%d: %s(dtype=%r) equals dst.dtype and is ignored, as NKI 0.1.0 did; NKI 0.2.0+ "
            "rejects the keyword (unexpected keyword argument)" %
            (os.path.basename(where[0]) if where else "?", where[1] if where else 0, call, want))
    notes = trace.current().header_notes
    if note not in notes:
        notes.append(note)


def _engine(call, e, allowed):
    if isinstance(e, int) and not isinstance(e, bool):
        raise errors.NkiError("%s: engine=%d: a raw integer is not an engine since NKI 0.3.0; "
                              "use nisa.engine.<name>" % (call, e))
    return legacy._eng(e, call, allowed)


# ------------------------------------------------------------------ target queries

@api("nisa.get_nc_version")
def get_nc_version():
    """The NeuronCore version of the generation the kernel is traced for (`--gen`: trn1 is
    gen2, trn2 gen3, trn3 gen4)."""
    return current_version()


@api("nisa.get_nc_sub_version")
def get_nc_sub_version():
    raise errors.NkiError("nisa.get_nc_sub_version() is not modelled: the silicon sub-version "
                          "(0 or 1) is not part of the model's generations")


# ------------------------------------------------------------------ data movement

@api("nisa.tensor_copy")
def tensor_copy(dst, src, engine=unknown_engine, name=None, *, dtype=None):
    """dst = src on the Vector, Scalar or GpSimd engine; a dtype change goes through fp32.
    `dtype=` is not in the 0.2-0.6 signature; it is taken only when it names dst's dtype
    (`_stale_dtype_keyword`)."""
    _name_arg("nisa.tensor_copy", name)
    from .views import row_major

    with row_major():  # element i of src to element i of dst, in row-major order
        _tensor_copy(dst, src, engine, dtype)


def _tensor_copy(dst, src, engine, dtype):
    d = _dst("nisa.tensor_copy", dst)
    if dtype is not None:
        _stale_dtype_keyword("nisa.tensor_copy", d, dtype)
    eng = _engine("nisa.tensor_copy", engine, ("vector", "scalar", "gpsimd"))
    s = as_view(src, "src")
    if s.tensor.mem == "hbm":
        raise errors.NkiError("nisa.tensor_copy: src is in HBM; an engine copies on-chip tiles "
                              "(nisa.dma_copy moves HBM)")
    if eng == "gpsimd" and "psum" in (s.tensor.mem, d.tensor.mem):
        raise errors.NkiError("nisa.tensor_copy: the GpSimd engine cannot access PSUM")
    _same_elements("nisa.tensor_copy", d, s)
    ops.copy(s, engine=eng, out=d)  # (src's access as checked: ops.copy would make it again)


@api("nisa.memset")
def memset(dst, value, engine=unknown_engine, name=None):
    """dst = value everywhere. Since NKI 0.3.0 the value's type matches dst's dtype: an integer
    tile takes an integer (release notes, "Breaking changes")."""
    _name_arg("nisa.memset", name)
    d = _dst("nisa.memset", dst)
    eng = _engine("nisa.memset", engine, ("vector", "gpsimd"))
    if eng == "gpsimd" and d.tensor.mem == "psum":
        raise errors.NkiError("nisa.memset: the GpSimd engine cannot access PSUM")
    if not ops.is_scalar(value) and not isinstance(value, bool):
        raise errors.NkiError("nisa.memset: value must be a compile-time number, not %r" %
                              (value,))
    if d.tensor.dtype.startswith(("int", "uint")) and not float(value).is_integer():
        raise errors.NkiError("nisa.memset: a %s tile takes an integer value, not %r" %
                              (d.tensor.dtype, value))
    if d.tensor.dtype.startswith(("int", "uint")) and isinstance(value, float):
        raise errors.NkiError("nisa.memset: a %s tile takes an integer value; %r is a float "
                              "(NKI 0.3.0: the value's type matches dst.dtype)" %
                              (d.tensor.dtype, value))
    ops.memset_view(d, value, eng)


# ------------------------------------------------------------------ element-wise compute

@api("nisa.tensor_tensor")
def tensor_tensor(dst, data1, data2, op, engine=unknown_engine, name=None):
    """dst = data1 op data2 element by element, computed in fp32 and cast to dst.dtype; the
    inputs have dst's partitions and elements per partition (no broadcasting)."""
    _name_arg("nisa.tensor_tensor", name)
    d = _dst("nisa.tensor_tensor", dst)
    eng = _engine("nisa.tensor_tensor", engine, ("vector", "gpsimd"))
    a, b = ops._v(data1, "data1"), ops._v(data2, "data2")
    for what, v in (("data1", a), ("data2", b)):
        if v.tensor.mem == "hbm":
            raise errors.NkiError("nisa.tensor_tensor: %s is in HBM" % what)
        _same_elements("nisa.tensor_tensor", d, v, what)
    if a.tensor.mem == "psum" and b.tensor.mem == "psum":
        raise errors.NkiError("nisa.tensor_tensor: data1 and data2 cannot both be in PSUM")
    args = [(None, d), (None, a), (None, b), ("op", Enum(ops.alu_name(op)))]
    trace.current().instr("tensor_tensor", args + ops._engine_arg(eng))


@api("nisa.tensor_scalar")
def tensor_scalar(dst, data, op0, operand0, reverse0=False, op1=None, operand1=None,
                  reverse1=False, engine=unknown_engine, name=None):
    """dst = (data op0 operand0) op1 operand1, operands scalars or one value per partition."""
    _name_arg("nisa.tensor_scalar", name)
    d = _dst("nisa.tensor_scalar", dst)
    eng = _engine("nisa.tensor_scalar", engine, ("vector", "scalar", "gpsimd"))
    v = as_view(data, "data")
    _same_elements("nisa.tensor_scalar", d, v, "data")
    if op1 is None and (operand1 is not None or reverse1):
        raise errors.NkiError("nisa.tensor_scalar: operand1/reverse1 given without op1")
    unary0 = unary_op0("nisa.tensor_scalar", op0, operand0, reverse0)
    if unary0 is not None:
        eng = _unary_engine("nisa.tensor_scalar", unary0[0], eng)
    # (data's access as checked: ops.tensor_scalar would make the same one again, and nothing
    # in between makes another access that could split a tensor's dims, refine.py)
    ops.tensor_scalar(v, op0, operand0, reverse0, op1, operand1, reverse1, engine=eng, out=d,
                      unary0=unary0)


def unary_op0(call, op0, operand0, reverse0):
    """ops.unary_op0 with the generation rule of NKI 0.4.0's release notes: square and relu "are
    now accepted as op0 on trn3" (NeuronCore-v4); abs and rsqrt since 0.2.0 ("Fixed missing ALU
    operators (rsqrt, abs, power)"), reciprocal from the shared page's table."""
    unary0 = ops.unary_op0(call, op0, operand0, reverse0)
    if unary0 is not None and unary0[0] in ("square", "relu") and \
            current_version() < nc_version.gen4:
        raise errors.NkiError("%s: op0=nl.%s is accepted on NeuronCore-v4 (trn3) only (NKI 0.4.0 "
                              "release notes); this kernel is traced for NeuronCore-v%d" %
                              (call, unary0[0], int(current_version())))
    return unary0


def _unary_engine(call, name, eng):
    """The engine of a tensor_scalar with a unary op0. The page: engine=gpsimd is "only allowed
    for rsqrt"; the Scalar engine's operator combinations it lists (trn2) have no unary operator,
    and none are listed for trn3, so engine=scalar is refused. The shared page runs rsqrt "on
    GpSIMD Engine with nki.isa.tensor_scalar(op0=nl.rsqrt, operand0=0.0)": the compiler's choice
    (engine unknown) is taken to be GpSimd for rsqrt; the other unary operators go to the Vector
    engine (model/compiler: an operator other than add/multiply is Vector-only)."""
    if eng == "scalar":
        raise errors.NkiError("%s: engine=nisa.scalar_engine with the unary op0=nl.%s: the page "
                              "lists the Scalar engine's operators (multiply, add) and no unary "
                              "one" % (call, name))
    if eng == "gpsimd" and name != "rsqrt":
        raise errors.NkiError("%s: engine=nisa.gpsimd_engine is \"only allowed for rsqrt\" (the "
                              "page), not op0=nl.%s" % (call, name))
    if eng is None and name == "rsqrt":
        return "gpsimd"
    return eng


@api("nisa.reciprocal")
def reciprocal(dst, data, name=None):
    _name_arg("nisa.reciprocal", name)
    d = _dst("nisa.reciprocal", dst)
    _same_elements("nisa.reciprocal", d, as_view(data, "data"), "data")
    ops.reciprocal(data, out=d)


@api("nisa.activation")
def activation(dst, op, data, bias=None, scale=1.0, reduce_op=None, reduce_res=None,
               reduce_cmd=reduce_cmd.idle, name=None):
    """dst = op(data * scale + bias) on the Scalar engine (fp32, cast to dst.dtype); the
    accumulator follows reduce_cmd and reduce_res reads it out."""
    _name_arg("nisa.activation", name)
    d = _dst("nisa.activation", dst)
    _same_elements("nisa.activation", d, as_view(data, "data"), "data")
    cmd = legacy._reduce_cmd(reduce_cmd, "nisa.activation")
    if reduce_op is not None and ops.alu_name(reduce_op, "reduce_op") != "add":
        refuse("nisa.activation", "reduce_op", reduce_op, "the accumulator reduces with nl.add")
    _check_bias("nisa.activation", bias)
    ops.activation(op, data, bias=bias, scale=scale, reduce_res=reduce_res, reduce_cmd=cmd,
                   out=d)


def _check_bias(call, bias):
    """bias is a [N, 1] vector (a scalar too from NeuronCore-v3); its free size must be 1
    (validated since NKI 0.2.0)."""
    if bias is None:
        return
    if ops.is_scalar(bias):
        if current_version() < nc_version.gen3:
            raise errors.NkiError("%s: a scalar bias needs NeuronCore-v3 or newer; on trn1 the "
                                  "bias is a [N, 1] tile" % call)
        return
    v = as_view(bias, "bias")
    f = trace.current().evaluate(ops._free_size(v))
    if f.is_const() and f.const != 1:
        raise errors.NkiError("%s: bias must be one value per partition ([N, 1]); this one has "
                              "%d per partition" % (call, f.const))


@api("nisa.activation_reduce")
def activation_reduce(dst, op, data, reduce_op, reduce_res, bias=None, scale=1.0, name=None):
    """activation(..., reduce_cmd=reset_reduce, reduce_res=reduce_res)."""
    _name_arg("nisa.activation_reduce", name)
    d = _dst("nisa.activation_reduce", dst)
    _same_elements("nisa.activation_reduce", d, as_view(data, "data"), "data")
    if ops.alu_name(reduce_op, "reduce_op") != "add":
        refuse("nisa.activation_reduce", "reduce_op", reduce_op,
               "the model's accumulator reduces with nl.add")
    _check_bias("nisa.activation_reduce", bias)
    ops.activation(op, data, bias=bias, scale=scale, reduce_res=reduce_res,
                   reduce_cmd="reset_reduce", out=d)


@api("nisa.tensor_reduce")
def tensor_reduce(dst, op, data, axis, negate=False, keepdims=False, name=None):
    """dst = op over the free axes `axis` (the last ones, since NKI 0.3.0 the actual
    dimensions), optionally negated."""
    _name_arg("nisa.tensor_reduce", name)
    d = _dst("nisa.tensor_reduce", dst)
    name_ = ops.alu_name(op)
    if negate and name_.startswith(("bitwise_", "shift_", "logical_")):
        raise errors.NkiError("nisa.tensor_reduce: negate=True applies to arithmetic operators "
                              "only, not %s" % name_)
    v = as_view(data, "data")
    r = trace.current().evaluate
    pd, pv = r(d.logical_lins()[0]), r(v.logical_lins()[0])
    if pd.is_const() and pv.is_const() and pd != pv:
        raise errors.NkiError("nisa.tensor_reduce: dst has %d partitions, data %d" %
                              (pd.const, pv.const))
    from .views import ir_axes

    ops.reduce(name_, data, ir_axes(data, axis, "nisa.tensor_reduce"), negate=bool(negate),
               keepdims=bool(keepdims), out=d)


# The Tensor-engine, DMA, pattern and register calls live in their own modules.
from .dma import dma_compute, dma_copy, dma_transpose  # noqa: E402,F401
from .patterns import affine_select, iota  # noqa: E402,F401
from .registers import (register_alloc, register_load, register_move,  # noqa: E402,F401
                        register_store)
from .tensor_engine import nc_matmul, nc_transpose  # noqa: E402,F401

# The other compute calls of the 0.6 API, one concern per module.
from .isa_arith import (scalar_tensor_tensor, tensor_copy_predicated,  # noqa: E402,F401
                        tensor_scalar_reduce)
from .isa_gathers import local_gather, nc_n_gather, nc_stream_shuffle  # noqa: E402,F401
from .isa_gen4 import activate2, exponential  # noqa: E402,F401
from .isa_random import (dropout, rand2, rand_get_state, rand_set_state, rng,  # noqa: E402,F401
                         set_rng_seed)
from .isa_scans import (bn_aggr, bn_stats, tensor_partition_reduce,  # noqa: E402,F401
                        tensor_scalar_cumulative, tensor_tensor_scan)
from .isa_selects import range_select, select_reduce, sequence_bounds  # noqa: E402,F401
from .isa_top8 import max8, nc_find_index8, nc_match_replace8  # noqa: E402,F401
from .isa_mx import nc_matmul_mx, quantize_mx  # noqa: E402,F401
from .isa_unmodelled import core_barrier, nonzero_with_count, topk  # noqa: E402,F401
from .sendrecv import sendrecv  # noqa: E402,F401

"""Stand-ins for the top-8 family and dropout of `neuronxcc.nki.isa` (nisa.max8,
nisa.nc_find_index8, nisa.nc_match_replace8, nisa.dropout), each one instruction as the ISA page
documents it (NKI API reference, Neuron SDK 2.26 nki.isa pages; docstrings in aws-neuron/
aws-neuron-sdk general/nki/api/nki/isa/__init__.py). frontend/README.md "Arguments of every call"
says what each argument does here; model/semantics/README.md what each instruction computes."""

from . import errors, ops, rules, trace
from .expr import Lin
from .signatures import api, refuse
from .tiles import Tile, as_view

_INDEX_DTYPES = ("uint16", "uint32")


def _masked(x, mask):
    if mask is None or not isinstance(x, Tile):
        return x
    from .masks import apply_mask

    return Tile(apply_mask(x._view, mask))


def _known(lin):
    v = trace.current().evaluate(lin)
    return v.const if v.is_const() else None


def _check_free(call, view, lo, hi, what="data"):
    """Elements per partition within [lo, hi] where the trace knows them (the interpreter and
    the solver check the symbolic case: Rule::top8_source_size)."""
    n = _known(ops._free_size(view))
    if n is not None and not lo <= n <= hi:
        raise errors.NkiError("%s: the %s tile has %d elements per partition; the instruction "
                              "reads %d to %d" % (call, what, n, lo, hi))


def _check_rank(call, view, most, what):
    if len(view.order) > most:
        raise errors.NkiError("%s: %s is %d-dimensional; the ISA takes up to %d dimensions"
                              % (call, what, len(view.order), most))


def _eight(call, view, what):
    """An 8-value operand: 8 elements per partition where known (Rule::top8_values)."""
    n = _known(ops._free_size(view))
    if n is not None and n != 8:
        raise errors.NkiError("%s: %s holds %d values per partition; it must hold exactly 8"
                              % (call, what, n))


def _same_partitions(call, a, b, what):
    pa, pb = _known(a.logical_lins()[0]), _known(b.logical_lins()[0])
    if pa is not None and pb is not None and pa != pb:
        raise errors.NkiError("%s: %s has %d partitions and the data %d; they must match"
                              % (call, what, pb, pa))


def _eight_tile(tr, rows, dtype):
    return rules.result_tile(tr, "sbuf", dtype, [rows, Lin.of(8)], tr.assigned_name())


@api("nisa.max8")
def max8(*, src, mask=None, dtype=None):
    # ISA-OLD max8: reads up to 5-D src in fp32, writes [par_dim, 8] descending; dtype casts the
    # output (default: src's dtype).
    tr = trace.current()
    v = ops._v(_masked(src, mask), "src")
    _check_rank("nisa.max8", v, 5, "src")
    _check_free("nisa.max8", v, 8, 16384, "src")
    t = _eight_tile(tr, v.logical_lins()[0], ops._dtype(dtype, v.tensor.dtype))
    dst = t.full_view()
    tr.instr("max8", [(None, dst), (None, v)], produces=t)
    return Tile(dst)


@api("nisa.nc_find_index8")
def nc_find_index8(*, data, vals, mask=None, dtype=None):
    # ISA-OLD nc_find_index8: the mask applies to data only; dtype uint16 or uint32 (default
    # uint32).
    tr = trace.current()
    d = ops._v(_masked(data, mask), "data")
    vv = ops._v(vals, "vals")
    _check_rank("nisa.nc_find_index8", d, 5, "data")
    _check_rank("nisa.nc_find_index8", vv, 3, "vals")
    _check_free("nisa.nc_find_index8", d, 8, 16384)
    _eight("nisa.nc_find_index8", vv, "vals")
    _same_partitions("nisa.nc_find_index8", d, vv, "vals")
    out_dt = ops._dtype(dtype, "uint32")
    if out_dt not in _INDEX_DTYPES:
        raise errors.NkiError("nisa.nc_find_index8: dtype= is uint16 or uint32, not %s" % out_dt)
    t = _eight_tile(tr, d.logical_lins()[0], out_dt)
    dst = t.full_view()
    tr.instr("nc_find_index8", [(None, dst), ("data", d), ("vals", vv)], produces=t)
    return Tile(dst)


@api("nisa.nc_match_replace8")
def nc_match_replace8(*, data, vals, imm, dst_idx=None, mask=None, dtype=None):
    # ISA-OLD nc_match_replace8: the result has data's shape and dtype (or dtype=); dst_idx, when
    # given, receives the flattened indices (a tile the kernel owns, written in place); the mask
    # applies to data.
    tr = trace.current()
    d = ops._v(_masked(data, mask), "data")
    vv = ops._v(vals, "vals")
    _check_rank("nisa.nc_match_replace8", d, 5, "data")
    _check_rank("nisa.nc_match_replace8", vv, 3, "vals")
    _check_free("nisa.nc_match_replace8", d, 1, 16384)
    _eight("nisa.nc_match_replace8", vv, "vals")
    _same_partitions("nisa.nc_match_replace8", d, vv, "vals")
    if not ops.is_scalar(imm):
        raise errors.NkiError("nisa.nc_match_replace8: imm= is a float32 constant, not %r"
                              % (imm,))
    args = [None, ("data", d), ("vals", vv), ("imm", float(imm))]
    if dst_idx is not None:
        iv = as_view(dst_idx, "dst_idx")
        if iv.tensor.mem not in ("sbuf", "psum"):
            raise errors.NkiError("nisa.nc_match_replace8: dst_idx is an on-chip tile (SBUF or "
                                  "PSUM), not an HBM tensor")
        _eight("nisa.nc_match_replace8", iv, "dst_idx")
        _same_partitions("nisa.nc_match_replace8", d, iv, "dst_idx")
        args.append(("dst_idx", iv))
    out, t = ops._out(tr, None, d, ops._dtype(dtype, d.tensor.dtype))
    args[0] = (None, out)
    tr.instr("nc_match_replace8", args, produces=t)
    return Tile(out)


@api("nisa.dropout")
def dropout(data, prob, *, mask=None, dtype=None):
    # ISA-OLD dropout: prob is a scalar or a [data.shape[0], 1] tile of drop probabilities; no
    # rescaling of the kept values is documented, and none is done. Integer data keeps its dtype
    # and takes an fp32 prob (validated in the model).
    tr = trace.current()
    v = ops._v(_masked(data, mask), "data")
    out_dt = ops._dtype(dtype, v.tensor.dtype)
    if ops.is_scalar(prob):
        p = float(prob)
    else:
        p = ops._v(_masked(prob, mask), "prob")
        n = _known(ops._free_size(p))
        if n is not None and n != 1:
            raise errors.NkiError("nisa.dropout: prob is a scalar or a [partitions, 1] tile; "
                                  "this one has %d elements per partition" % n)
        ops._check_partitions_agree(v, p, "nisa.dropout")
    if v.tensor.dtype not in ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2") and \
            out_dt != v.tensor.dtype:
        refuse("nisa.dropout", "dtype", dtype, "the ISA keeps integer data's dtype")
    dst, t = ops._out(tr, None, v, out_dt)
    tr.instr("dropout", [(None, dst), (None, v), ("prob", p)], produces=t)
    return Tile(dst)

"""`nki.isa` 0.6, the top-8 family: max8, nc_find_index8, nc_match_replace8 (docstrings:
aws-neuron-sdk nki/api/nki/isa/__init__.py at 81ce03ae). The instructions are the legacy
stand-ins' (isa_top8.py), writing `dst`, with the two results NKI 0.6 defines where the legacy
pages left them undefined (release notes 0.6.0, "matching hardware"): nc_find_index8 gives
duplicate values successive occurrences and an all-ones index for a value not found
(`successive`), nc_match_replace8 processes the values 7..0 (`reverse`)."""

from .. import errors, ops, trace
from .. import isa_top8 as legacy
from ..signatures import api
from ..tiles import as_view
from . import isa as core

_INDEX_DTYPES = ("uint16", "uint32")


def _on_chip(call, v, what):
    if v.tensor.mem == "hbm":
        raise errors.NkiError("%s: %s is in HBM; the Vector engine reads SBUF or PSUM" %
                              (call, what))


def _data_and_vals(call, data, vals, lo, what="data"):
    d = ops._v(data, what)
    _on_chip(call, d, what)
    legacy._check_rank(call, d, 5, what)
    legacy._check_free(call, d, lo, 16384, what)
    if vals is None:
        return d, None
    vv = ops._v(vals, "vals")
    _on_chip(call, vv, "vals")
    legacy._check_rank(call, vv, 3, "vals")
    legacy._eight(call, vv, "vals")
    legacy._same_partitions(call, d, vv, "vals")
    return d, vv


def _eight_dst(call, dst, data, what="dst"):
    v = core._dst(call, dst)
    legacy._eight(call, v, what)
    legacy._same_partitions(call, data, v, what)
    return v


@api("nisa.max8")
def max8(dst, src, name=None):
    """dst [P, 8] = the 8 largest values of each partition of src (8 to 16,384 elements,
    compared in fp32), descending, cast to dst.dtype."""
    call = "nisa.max8"
    core._name_arg(call, name)
    s, _ = _data_and_vals(call, src, None, 8, "src")
    d = _eight_dst(call, dst, s)
    trace.current().instr("max8", [(None, d), (None, s)])


@api("nisa.nc_find_index8")
def nc_find_index8(dst, data, vals, name=None):
    """dst [P, 8] (uint16 or uint32) = the index of the first occurrence of each of the 8 values
    in data's partition; a duplicate value takes the next occurrence, a value with none gives
    all ones (0xFFFF / 0xFFFFFFFF)."""
    call = "nisa.nc_find_index8"
    core._name_arg(call, name)
    d, vv = _data_and_vals(call, data, vals, 8)
    out = _eight_dst(call, dst, d)
    if out.tensor.dtype not in _INDEX_DTYPES:
        raise errors.NkiError("%s: dst is %s; the indices are uint16 or uint32 (the page)" %
                              (call, out.tensor.dtype))
    trace.current().instr("nc_find_index8", [(None, out), ("data", d), ("vals", vv),
                                             ("successive", True)])


@api("nisa.nc_match_replace8")
def nc_match_replace8(dst, data, vals, imm, dst_idx=None, name=None):
    """dst = data with the first occurrence of each of the 8 values replaced by imm (values
    processed 7..0, so duplicates pair the first occurrence with the highest slot); dst_idx
    [P, 8] receives the indices. A value the data does not hold has no documented result: the
    run stops there."""
    call = "nisa.nc_match_replace8"
    core._name_arg(call, name)
    d, vv = _data_and_vals(call, data, vals, 1)
    out = core._dst(call, dst)
    core._same_elements(call, out, d, "data")
    if not ops.is_scalar(imm):
        raise errors.NkiError("%s: imm= is a float32 constant, not %r" % (call, imm))
    args = [(None, out), ("data", d), ("vals", vv), ("imm", float(imm))]
    if dst_idx is not None:
        iv = as_view(dst_idx, "dst_idx")
        if iv.tensor.mem not in ("sbuf", "psum"):
            raise errors.NkiError("%s: dst_idx is an on-chip tile (SBUF or PSUM), not an HBM "
                                  "tensor" % call)
        legacy._eight(call, iv, "dst_idx")
        legacy._same_partitions(call, d, iv, "dst_idx")
        args.append(("dst_idx", iv))
    args.append(("reverse", True))
    trace.current().instr("nc_match_replace8", args)

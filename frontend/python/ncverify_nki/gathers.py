"""Stand-ins for the gathers and the stream shuffle: nisa.local_gather, nisa.nc_stream_shuffle
and nl.gather_flattened, each one instruction of the model (model/semantics/gather.cpp) as the
NKI API reference of Neuron SDK 2.26 documents it (the neuronxcc.nki pages; docstrings in
aws-neuron/aws-neuron-sdk general/nki/api/nki/isa/__init__.py and .../language/__init__.py at
0521004c). frontend/README.md "Arguments of every call" says what each argument does here.

What the pages leave undefined is a failure of the run, never a made-up value: an index whose
elements lie outside its source fails the simulated call (out_of_bounds) at the kernel's line.
"""

import numbers

import numpy as np

from . import errors, ops, rules, trace
from .expr import Lin
from .signatures import api, refuse
from .tiles import Tile, as_view

_GROUP = 16  # partitions per GpSimd core (local_gather)
_QUADRANT = 32  # partitions per shuffle quadrant
_KEEP = 255  # the shuffle_mask entry that leaves a partition unchanged


def _known(lin):
    v = trace.current().evaluate(lin)
    return v.const if v.is_const() else None


def _int_arg(call, arg, x):
    """A Python (or NumPy) integer, or a symbolic one whose value the trace knows."""
    if isinstance(x, (bool, np.bool_)):
        raise errors.NkiError("%s: %s= takes an integer, not %r" % (call, arg, x))
    if isinstance(x, (numbers.Integral, np.integer)):
        return int(x)
    if isinstance(x, Lin):
        v = _known(x)
        if v is not None:
            return v
        refuse(call, arg, x, "a value that varies with loop variables or params: the instruction "
               "takes a constant")
    raise errors.NkiError("%s: %s= takes an integer, not %s" % (call, arg, type(x).__name__))


def _partitions(view):
    return _known(view.logical_lins()[0])


def _sbuf(call, view, what):
    if view.tensor.mem != "sbuf":
        raise errors.NkiError("%s: %s is in %s; the GpSimd engine that runs this instruction "
                              "reads and writes SBUF only" % (call, what, view.tensor.mem.upper()))


@api("nisa.local_gather")
def local_gather(src_buffer, index, num_elem_per_idx=1, num_valid_indices=None, *, mask=None):
    call = "nisa.local_gather"
    if mask is not None:
        refuse(call, "mask", mask, "a predicate on the gather's output is not modelled")
    tr = trace.current()
    src = ops._v(src_buffer, "src_buffer")
    idx = ops._v(index, "index")
    _sbuf(call, src, "src_buffer")
    _sbuf(call, idx, "index")
    if idx.tensor.dtype != "uint16":
        raise errors.NkiError("%s: index is %s; the indices must be uint16 (the page)" %
                              (call, idx.tensor.dtype))
    e = _int_arg(call, "num_elem_per_idx", num_elem_per_idx)
    if e not in (1, 2, 4, 8, 16, 32):
        raise errors.NkiError("%s: num_elem_per_idx=%d; it must be 1, 2, 4, 8, 16 or 32" %
                              (call, e))
    # None: every index of the core's 16 partitions. 0 means the same in the page's NumPy
    # semantics (`num_valid_indices if num_valid_indices else index.size / num_active_cores`).
    nv = 0 if num_valid_indices is None else _int_arg(call, "num_valid_indices",
                                                      num_valid_indices)
    ps, pi = _partitions(src), _partitions(idx)
    if ps is not None and pi is not None and ps != pi:
        raise errors.NkiError("%s: src_buffer has %d partitions and index %d; they must match" %
                              (call, ps, pi))
    if ps is not None and ps % _GROUP:
        raise errors.NkiError("%s: src_buffer has %d partitions; the count must be a multiple "
                              "of 16 (16 per GpSimd core)" % (call, ps))
    per_core = ops._free_size(idx).scale(_GROUP)
    known = _known(per_core)
    if nv < 0 or nv > 4096 or (known is not None and nv > known):
        raise errors.NkiError("%s: num_valid_indices=%d; it must be at most the %s indices a "
                              "core's 16 partitions of index hold, and at most 4096" %
                              (call, nv, "?" if known is None else known))
    if nv == 0 and known is not None and known > 4096:
        raise errors.NkiError("%s: %d indices per core (all of index's); a core gathers at "
                              "most 4096" % (call, known))
    n = Lin.of(nv) if nv else per_core
    # The result: [partitions, n, num_elem_per_idx], src_buffer's dtype (no cast; the page's
    # NumPy semantics build the output as (128, num_valid_indices, num_elem_per_idx)).
    t = rules.result_tile(tr, "sbuf", src.tensor.dtype, [src.logical_lins()[0], n, Lin.of(e)],
                          tr.assigned_name())
    dst = t.full_view()
    args = [(None, dst), (None, src), ("index", idx), ("num_elem_per_idx", e)]
    if nv:
        args.append(("num_valid_indices", nv))
    tr.instr("local_gather", args, produces=t)
    return Tile(dst)


def _mask_entries(call, shuffle_mask):
    if not isinstance(shuffle_mask, (list, tuple)):
        raise errors.NkiError("%s: shuffle_mask= takes a list of 32 integers, not %s" %
                              (call, type(shuffle_mask).__name__))
    if len(shuffle_mask) != _QUADRANT:
        raise errors.NkiError("%s: shuffle_mask has %d entries; it takes 32 (one per partition "
                              "of a quadrant)" % (call, len(shuffle_mask)))
    out = []
    for k, m in enumerate(shuffle_mask):
        v = _int_arg(call, "shuffle_mask", m)
        if not (0 <= v < _QUADRANT or v == _KEEP):
            raise errors.NkiError("%s: shuffle_mask[%d] = %d; an entry is a partition of the "
                                  "quadrant (0..31) or 255 (leave the partition)" % (call, k, v))
        out.append(v)
    return out


@api("nisa.nc_stream_shuffle")
def nc_stream_shuffle(src, dst, shuffle_mask, *, dtype=None, mask=None):
    call = "nisa.nc_stream_shuffle"
    if mask is not None:
        refuse(call, "mask", mask, "a predicate on dst's locations is not modelled")
    tr = trace.current()
    s = ops._v(src, "src")
    d = as_view(dst, "dst")
    for v, what in ((s, "src"), (d, "dst")):
        if v.tensor.mem == "hbm":
            raise errors.NkiError("%s: %s is in HBM; the Vector engine reads and writes SBUF or "
                                  "PSUM tiles" % (call, what))
    if d.tensor.dtype != s.tensor.dtype:
        raise errors.NkiError("%s: dst is %s and src %s; dst must have src's dtype (the page)" %
                              (call, d.tensor.dtype, s.tensor.dtype))
    if dtype is not None and ops._dtype(dtype, None) != d.tensor.dtype:
        # dst is given by reference and has src's dtype: a different dtype cannot be honoured.
        raise errors.NkiError("%s: dtype=%s, but dst is %s and must have src's dtype (the page: "
                              "no cast)" % (call, ops._dtype(dtype, None), d.tensor.dtype))
    fs, fd = _known(ops._free_size(s)), _known(ops._free_size(d))
    if fs is not None and fd is not None and fs != fd:
        raise errors.NkiError("%s: src has %d elements per partition and dst %d; they must "
                              "match" % (call, fs, fd))
    tr.instr("nc_stream_shuffle", [(None, d), (None, s),
                                   ("shuffle_mask", _mask_entries(call, shuffle_mask))])


@api("nl.gather_flattened")
def gather_flattened(data, indices, *, mask=None, dtype=None):
    call = "nl.gather_flattened"
    if mask is not None:
        refuse(call, "mask", mask, "a predicate on the gather's output is not modelled")
    tr = trace.current()
    d = ops._v(data, "data")
    i = ops._v(indices, "indices")
    for v, what in ((d, "data"), (i, "indices")):
        if not 2 <= len(v.order) <= 4:
            raise errors.NkiError("%s: %s is %d-dimensional; data and indices must be 2-, 3- or "
                                  "4-dimensional (the page)" % (call, what, len(v.order)))
    if i.tensor.dtype != "uint32":
        raise errors.NkiError("%s: indices is %s; the indices must be uint32 (the page)" %
                              (call, i.tensor.dtype))
    # The gather runs on the GpSimd engine (the ISA's nc_n_gather), which cannot read PSUM: the
    # compiler copies a PSUM operand to SBUF first.
    if d.tensor.mem == "psum":
        d = rules.evict(tr, d)
    if i.tensor.mem == "psum":
        i = rules.evict(tr, i)
    pd, pi = _partitions(d), _partitions(i)
    if pd is not None and pi is not None and pd != pi:
        raise errors.NkiError("%s: data has %d partitions and indices %d; each partition "
                              "gathers from its own row, so they must match" % (call, pd, pi))
    dst, t = ops._out(tr, None, i, ops._dtype(dtype, d.tensor.dtype), tr.assigned_name())
    tr.instr("gather_flattened", [(None, dst), (None, d), ("indices", i)], produces=t)
    return Tile(dst)

"""Stand-ins for nisa.bn_stats and nisa.bn_aggr (one Vector-engine instruction each,
model/semantics/bn_stats.cpp), as the neuronxcc.nki.isa pages of Neuron SDK 2.26 document them:
https://awsdocs-neuron.readthedocs-hosted.com/en/v2.26.1/nki/api/generated/nki.isa.bn_stats.html
and .../nki.isa.bn_aggr.html."""

from . import errors, ops, trace
from .expr import Lin
from .signatures import api
from .tiles import Tile

_BN_STATS_FMAX = 512  # the page: "must not exceed 512 (nl.tile_size.bn_stats_fmax)"


def _masked(x, mask):
    if mask is None or not isinstance(x, Tile):
        return x
    from .masks import apply_mask

    return Tile(apply_mask(x._view, mask))


def _stats(op, data, mask, dtype, cols, check):
    tr = trace.current()
    v = ops._v(_masked(data, mask), "data")
    free = tr.evaluate(ops._free_size(v))
    check(free)
    rows = v.logical_lins()[0]
    t = tr.temp("sbuf", ops._dtype(dtype, v.tensor.dtype), [rows, Lin.of(cols)], None)
    dst = t.full_view()
    tr.instr(op, [(None, dst), (None, v)], produces=t)
    return Tile(dst)


@api("nisa.bn_stats")
def bn_stats(data, *, mask=None, dtype=None):
    def check(free):
        if free.is_const() and free.const > _BN_STATS_FMAX:
            raise errors.NkiError("nisa.bn_stats: %d elements per partition; the page allows at "
                                  "most 512 (nl.tile_size.bn_stats_fmax): split the tile and "
                                  "aggregate the outputs with one bn_aggr" % free.const)

    return _stats("bn_stats", data, mask, dtype, 6, check)


@api("nisa.bn_aggr")
def bn_aggr(data, *, mask=None, dtype=None):
    def check(free):
        if free.is_const() and free.const % 3:
            raise errors.NkiError("nisa.bn_aggr: %d elements per partition; the input holds "
                                  "(count, mean, variance * count) triples from bn_stats, so a "
                                  "multiple of 3" % free.const)

    return _stats("bn_aggr", data, mask, dtype, 2, check)

"""Stand-ins for the random calls of `neuronxcc.nki.language`: nl.rand and nl.dropout (NKI API
reference, Neuron SDK 2.26 nki.language pages; docstrings in aws-neuron/aws-neuron-sdk
general/nki/api/nki/language/__init__.py). The hardware's generator cannot be reproduced: the
model draws from its own (model/semantics/random.h), the program records the draw, and `check`
and `equiv` of such a kernel are unknown, never PASS/FAIL on made-up numbers."""

from . import errors, ops, rules, trace
from .dtypes import normalize
from .expr import Lin
from .signatures import api, refuse
from .tiles import Tile

_FLOATS = ("fp32", "bf16", "fp16", "fp8_e4m3", "fp8_e5m2")


@api("nl.rand")
def rand(shape, dtype="float32"):
    # LANG-OLD rand: a tile of `shape` and `dtype` with values uniform between 0 and 1, in SBUF.
    from .language import par_dim

    tr = trace.current()
    dt = normalize(dtype).name
    if dt not in _FLOATS:
        raise errors.NkiError("nl.rand: dtype=%s; values uniform in [0, 1) need a float dtype"
                              % dt)
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    if any(isinstance(s, par_dim) for s in shape[1:]):
        raise errors.NkiError("nl.rand: the partition dim is the first one")
    dims = [Lin.of(s.size if isinstance(s, par_dim) else s) for s in shape]
    if dims[0].is_const() and not 1 <= dims[0].const <= 128:
        raise errors.NkiError("nl.rand: an on-chip tile has at most 128 partitions; this one "
                              "has %d" % dims[0].const)
    t = rules.result_tile(tr, "sbuf", dt, dims, tr.assigned_name())
    dst = t.full_view()
    tr.instr("rand", [(None, dst)], produces=t)
    return Tile(dst)


@api("nl.dropout")
def dropout(x, rate, *, dtype=None, mask=None):
    # LANG-OLD dropout: rate is a scalar or a tile with one element. One element for every
    # partition would be a broadcast across partitions, which the model does not do: refused
    # unless x has one partition.
    from .isa_top8 import dropout as isa_dropout

    if not ops.is_scalar(rate):
        v = ops._v(rate, "rate")
        n = trace.current().evaluate(ops._free_size(v).mul(v.logical_lins()[0]))
        if n.is_const() and n.const != 1:
            raise errors.NkiError("nl.dropout: rate is a scalar or a tile with 1 element; this "
                                  "one has %d" % n.const)
        ops._check_partitions_agree(ops._v(x, "x"), v, "nl.dropout rate")
    return isa_dropout(x, prob=rate, mask=mask, dtype=dtype)


@api("nl.random_seed")
def random_seed(seed, *, mask=None):
    refuse("nl.random_seed", "seed", seed,
           "the hardware generator's sequence for a seed is not documented, so the model's "
           "values could not follow it; the model's own generator has a fixed seed")

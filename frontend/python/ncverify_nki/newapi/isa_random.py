"""`nki.isa` 0.6 random numbers: dropout, rng, rand2, set_rng_seed, rand_set_state,
rand_get_state (docstrings: aws-neuron-sdk nki/api/nki/isa/__init__.py at 81ce03ae).

The hardware's generator (XORWOW) and its state are not reproducible by the model. dropout keeps
the legacy stand-in's instruction: the drop decisions come from the model's own draws and the
program records that its values are random (model/semantics/README.md "Random values"), so no
verdict rests on them. The calls whose result *is* the generator's output or state (rng, rand2,
rand_get_state) or that set the state a later draw would follow (set_rng_seed, rand_set_state)
are refused: a run could only invent those values."""

from .. import errors, ops, trace
from ..signatures import api, refuse
from . import isa as core
from .constants import engine


@api("nisa.dropout")
def dropout(dst, data, prob, name=None):
    """dst = 0 where a draw in [0, 1) falls below the drop probability, else data (no
    rescaling, as the page documents none). prob: a number or a [P, 1] tile. dst.dtype must be
    data.dtype (the page)."""
    call = "nisa.dropout"
    core._name_arg(call, name)
    d = core._dst(call, dst)
    v = ops._v(data, "data")
    if v.tensor.mem == "hbm":
        raise errors.NkiError("%s: data is in HBM; the Vector engine reads SBUF or PSUM" % call)
    if d.tensor.dtype != v.tensor.dtype:
        raise errors.NkiError("%s: dst is %s and data %s; the output dtype must match the "
                              "input's (the page)" % (call, d.tensor.dtype, v.tensor.dtype))
    core._same_elements(call, d, v, "data")
    if ops.is_scalar(prob):
        p = float(prob)
    else:
        p = ops._v(prob, "prob")
        if not ops._is_column(p):
            raise errors.NkiError("%s: prob is a number or a tile of shape (data.shape[0], 1); "
                                  "this one is %s" % (call, tuple(p.shape)))
        ops._check_partitions_agree(v, p, call)
        if not v.tensor.dtype.startswith(("fp", "bf")) and p.tensor.dtype != "fp32":
            raise errors.NkiError("%s: with %s data the prob tile must be float32 (the page); "
                                  "this one is %s" % (call, v.tensor.dtype, p.tensor.dtype))
    trace.current().instr("dropout", [(None, d), (None, v), ("prob", p)])


_WHY = "the hardware's generator (XORWOW) and its state are not reproducible by the model"


@api("nisa.rng")
def rng(dst, engine=engine.vector, name=None):
    core._name_arg("nisa.rng", name)
    refuse("nisa.rng", "dst", "a tile", "its values are 32 raw bits of the hardware's generator "
           "per element; " + _WHY)


@api("nisa.rand2")
def rand2(dst, min, max, name=None):  # noqa: A002 (the page's names)
    core._name_arg("nisa.rand2", name)
    refuse("nisa.rand2", "dst", "a tile", "its values are the hardware generator's uniform "
           "draws; " + _WHY)


@api("nisa.set_rng_seed")
def set_rng_seed(src_seeds, name=None):
    core._name_arg("nisa.set_rng_seed", name)
    refuse("nisa.set_rng_seed", "src_seeds", "a tile", "seeding fixes the sequence later draws "
           "follow; " + _WHY)


@api("nisa.rand_set_state")
def rand_set_state(src_seeds, engine=engine.gpsimd, name=None):
    core._name_arg("nisa.rand_set_state", name)
    refuse("nisa.rand_set_state", "src_seeds", "a tile", "setting the state fixes the sequence "
           "later draws follow; " + _WHY)


@api("nisa.rand_get_state")
def rand_get_state(dst, engine=engine.gpsimd, name=None):
    core._name_arg("nisa.rand_get_state", name)
    refuse("nisa.rand_get_state", "dst", "a tile", "its values are the generator's state; " +
           _WHY)

"""`nki.collectives` (NKI 0.2.0+; the 0.6 reference's nki.collectives page, aws-neuron-sdk
`nki/api/nki/collectives/__init__.py` at 81ce03ae): communication between NeuronCores. The model
is one NeuronCore, so each documented name can be imported (nki-library's modules import
`ReplicaGroup` and the calls at module level, and annotate with them) and refuses at the kernel's
line when called."""

from .. import errors, ops

_WHY = "collectives move data between NeuronCores; the model is one NeuronCore"


def _refused(name):
    call = "nki.collectives." + name

    def f(*args, **kw):
        raise errors.NkiError("%s is not modelled (%s)" % (call, _WHY))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = "%s: refused (%s)." % (call, _WHY)
    ops.UNMODELLED[f] = _WHY
    return f


NAMES = ("ReplicaGroup", "all_reduce", "all_gather", "all_gather_v", "reduce_scatter",
         "all_to_all", "all_to_all_v", "collective_permute", "collective_permute_implicit",
         "collective_permute_implicit_reduce",
         "collective_permute_implicit_current_processing_rank_id", "rank_id")
for _n in NAMES:
    globals()[_n] = _refused(_n)

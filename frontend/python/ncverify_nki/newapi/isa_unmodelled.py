"""`nki.isa` 0.6 calls the model has no instruction for: nonzero_with_count, topk, and the
multi-core barrier core_barrier (docstrings: aws-neuron-sdk nki/api/nki/isa/__init__.py at
81ce03ae; sendrecv is modelled, sendrecv.py). Each has its
documented signature, so a misspelt argument is named as such, and stops the trace at the
kernel's line with the reason; none is approximated by other instructions."""

from .. import errors
from ..signatures import api
from . import isa as core
from .constants import engine


def _unmodelled(call, name, why):
    core._name_arg(call, name)
    raise errors.NkiError("%s is not modelled (%s)" % (call, why))


@api("nisa.nonzero_with_count")
def nonzero_with_count(dst, src, index_offset=0, padding_val=-1, name=None):
    _unmodelled("nisa.nonzero_with_count", name, "the model has no GpSimd instruction that "
                "compacts indices; the values would have to be invented")


@api("nisa.topk")
def topk(val_dst, idx_dst, src, n, name=None):
    _unmodelled("nisa.topk", name, "the model has no GpSimd top-K instruction over the "
                "16-partition snake layout (max8 and nc_find_index8 are the Vector engine's "
                "top-8)")


_MULTI_CORE = ("the model has no barrier between NeuronCores (the cores of a logical "
               "NeuronCore, LNC2); its only core-to-core instruction is nisa.sendrecv's "
               "exchange")


@api("nisa.core_barrier")
def core_barrier(data, cores, engine=engine.gpsimd, name=None):
    _unmodelled("nisa.core_barrier", name, _MULTI_CORE)


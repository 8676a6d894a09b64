"""The enums of `nki.isa` (and `nki.isa.constants`), NKI 0.6: engine, reduce_cmd, dge_mode,
oob_mode, matmul_perf_mode, nc_version, dma_engine (the `nki.isa` reference page's enum classes,
aws-neuron-sdk nki/api/nki/isa/__init__.py at 81ce03ae). Raw integers are not accepted for any of
them since NKI 0.3.0 (release notes, "Breaking changes"): a call compares its argument with the
members, so a number is refused where the call reads it."""

import enum

from .. import trace
from ..isa import _Engine, dge_mode, gpsimd_engine, oob_mode, reduce_cmd  # noqa: F401
from ..isa import scalar_engine, tensor_engine, unknown_engine, vector_engine  # noqa: F401
from ..sealed import SealedClass

dma_engine_queue = _Engine("dma")
sync_engine = _Engine("sync")


class engine(metaclass=SealedClass):  # noqa: N801 (nisa.engine.vector)
    tensor = tensor_engine
    vector = vector_engine
    scalar = scalar_engine
    gpsimd = gpsimd_engine
    dma = dma_engine_queue
    sync = sync_engine
    unknown = unknown_engine


class matmul_perf_mode(metaclass=SealedClass):  # noqa: N801
    none = "none"
    double_row = "double_row"


class dma_engine(metaclass=SealedClass):  # noqa: N801 (sendrecv's DMA engine)
    dma = "dma"
    gpsimd_dma = "gpsimd_dma"


class nc_version(enum.IntEnum):  # noqa: N801
    """NeuronCore generations, ordered: kernels compare them (`>= nc_version.gen3`, and some
    nki-library code with plain integers, `>= 3`)."""
    gen2 = 2  # Trn1 / Inf2
    gen3 = 3  # Trn2
    gen4 = 4  # Trn3


# The model's generations (`--gen`, nki.jit(platform_target=)) and their NeuronCore versions.
_VERSION_OF = {None: nc_version.gen2, "trn1": nc_version.gen2, "trn2": nc_version.gen3,
               "trn3": nc_version.gen4}


def current_version():
    """The NeuronCore version of the generation the kernel is traced for."""
    return _VERSION_OF[trace.current().generation]

"""A kernel inside a package: its helpers come by a relative import two levels up, an absolute
import of a submodule from a package, `from . import` of a sibling and a plain `import a.b.c`
(which binds the top-level package). `scaled_copy_flat` computes the same without helpers."""

import kernelpkg.util.factors
import neuronxcc.nki.language as nl
from neuronxcc import nki

from kernelpkg.util import scale

from ..util.tiling import RowTiler
from . import common


@nki.jit
def scaled_copy(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    tiler = RowTiler(a.shape[0])
    for i in nl.affine_range(tiler.count()):
        t = nl.load(a[tiler.rows(i), :])
        nl.store(out[tiler.rows(i), :], value=common.shifted(scale.scaled(t)))
    return out


@nki.jit
def scaled_copy_flat(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // kernelpkg.util.factors.TILE_ROWS):
        t = nl.load(a[i * 128:(i + 1) * 128, :])
        nl.store(out[i * 128:(i + 1) * 128, :], value=nl.add(nl.multiply(t, 2.0), 1.0))
    return out

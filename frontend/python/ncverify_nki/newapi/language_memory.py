"""The data-movement calls of `nki.language` in NKI 0.3.0-0.6 (the 0.6 reference: aws-neuron-sdk
nki/api/nki/language/__init__.py at 81ce03ae): nl.load / nl.store / nl.load_transpose2d between
HBM and SBUF, nl.gather_flattened, the shared constants, nl.device_print. No `mask=` (removed in
NKI 0.2.0: migration guide, "What features in neuronxcc.nki.* are not available in nki.*")."""

import numpy as np

from .. import errors, gathers, ops, rules, trace
from .. import language as legacy
from ..dtypes import normalize, uint8
from ..signatures import api, refuse
from ..tiles import Tile, as_view
from .views import owned


def _dtype(dtype, call):
    from .language import _dtype as checked

    return checked(dtype, call) if dtype is not None else None


@api("nl.load")
def load(src, dtype=None):
    """A new SBUF tile with the values of the HBM tensor `src` (a DMA; a dtype change is the
    DMA's cast through fp32). A shared constant (nl.shared_constant) loads too."""
    dt = _dtype(dtype, "nl.load")
    if not isinstance(src, legacy._Constant):
        v = as_view(src, "nl.load: src")
        if v.tensor.mem != "hbm":
            raise errors.NkiError("nl.load: src '%s' is in %s; nl.load reads HBM (nl.copy copies "
                                  "an on-chip tile)" % (v.tensor.name, v.tensor.mem.upper()))
        # a fresh tile the kernel holds only as a view: its dims may be split (views.owned)
        return owned(legacy.load(src, dtype=dt))
    return legacy.load(src, dtype=dt)


@api("nl.store")
def store(dst, value):
    """dst (HBM) = value (an SBUF tile), by a DMA. A PSUM value is refused: "nki.language.store
    does not support PSUM tiles directly" (release notes 0.3.0, Known Issues; a DMA reads no
    PSUM since 0.3.0)."""
    if ops.is_scalar(value) or isinstance(value, bool):
        raise errors.NkiError("nl.store: value is the number %r; the new API stores an SBUF tile "
                              "(nisa.memset one first)" % (value,))
    v = as_view(value, "nl.store: value")
    if v.tensor.mem == "psum":
        raise errors.NkiError("nl.store: value '%s' is in PSUM; nl.store does not take PSUM "
                              "tiles (NKI release notes, Known Issues): copy it to SBUF with "
                              "nisa.tensor_copy or nl.copy first" % v.tensor.name)
    if v.tensor.mem == "hbm":
        raise errors.NkiError("nl.store: value '%s' is in HBM; nl.store writes an SBUF tile to "
                              "HBM (nisa.dma_copy copies HBM to HBM)" % v.tensor.name)
    legacy.store(dst, value)


@api("nl.load_transpose2d")
def load_transpose2d(src, dtype=None):
    """A new SBUF tile with the 2-D HBM tensor `src` transposed."""
    v = as_view(src, "nl.load_transpose2d: src")
    if v.tensor.mem != "hbm":
        raise errors.NkiError("nl.load_transpose2d: src '%s' is in %s; it reads HBM" %
                              (v.tensor.name, v.tensor.mem.upper()))
    return legacy.load_transpose2d(src, dtype=_dtype(dtype, "nl.load_transpose2d"))


@api("nl.gather_flattened")
def gather_flattened(data, indices, axis=0, dtype=None):
    """out[p, i] = data[p, indices[p, i]] over each partition's flattened free elements (the
    legacy call's semantics; the 0.6 reference adds `axis`, default 0, without saying what
    another axis gathers)."""
    if axis != 0:
        refuse("nl.gather_flattened", "axis", axis, "the reference does not say what a gather "
               "along another axis reads")
    return gathers.gather_flattened(data, indices, dtype=_dtype(dtype, "nl.gather_flattened"))


@api("nl.shared_constant")
def shared_constant(constant):
    """Constant data the kernel reads with nl.load. The IR holds no constant data: a load of an
    identity or of a matrix of one value is generated on chip (rules.constant_tile); other data,
    and a `.npy` path (the file would be read while tracing, which the sandbox does not allow),
    are refused."""
    if isinstance(constant, str):
        refuse("nl.shared_constant", "constant", constant, "a .npy file is not read while "
               "tracing; the model's constants are generated on chip")
    values = np.asarray(constant)
    if values.ndim != 2:
        raise errors.NkiError("nl.shared_constant: the constant is %d-dimensional; the model's "
                              "constants are 2-D ([partitions, free])" % values.ndim)
    return legacy._Constant(values, normalize(values.dtype))


@api("nl.shared_identity_matrix")
def shared_identity_matrix(n, dtype=uint8, dst=None):
    """The n x n identity in SBUF (0.6 reference: "Create an identity matrix in SBUF"; dtype
    defaults to nl.uint8), generated on chip by a memset and an affine_select; with `dst`, written
    into dst (an SBUF tensor of that shape) by a copy, and dst returned."""
    dt = normalize(_dtype(dtype, "nl.shared_identity_matrix") or uint8).name
    if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= 128:
        raise errors.NkiError("nl.shared_identity_matrix: n=%r; an identity tile has 1 to 128 "
                              "partitions" % (n,))
    tr = trace.current()
    eye = rules.constant_tile(tr, np.identity(n), dt)
    # what nc_matmul(is_transpose=True) needs to know its moving tile is an identity
    from .tensor_engine import _writes

    eye.tensor.identity_n = n
    eye.tensor.identity_writes = _writes(tr, eye.tensor)
    if dst is None:
        return Tile(eye)
    d = as_view(dst, "nl.shared_identity_matrix: dst")
    if d.tensor.mem != "sbuf":
        raise errors.NkiError("nl.shared_identity_matrix: dst is in %s; the identity is an SBUF "
                              "tile" % d.tensor.mem.upper())
    shape = [tr.evaluate(x) for x in d.logical_lins()]
    if len(shape) != 2 or any(not x.is_const() or x.const != n for x in shape):
        raise errors.NkiError("nl.shared_identity_matrix: dst is %s, not (%d, %d)" %
                              (tuple(d.shape), n, n))
    if d.tensor.dtype != dt:
        raise errors.NkiError("nl.shared_identity_matrix: dst is %s, dtype %s" %
                              (d.tensor.dtype, dt))
    ops.copy(Tile(eye), out=d)
    return dst


@api("nl.device_print")
def device_print(print_prefix, tensor):
    """Prints on the device: nothing the model computes. The prefix is a constant string
    (evaluated at trace time); the tensor is in SBUF or HBM (the reference)."""
    if not isinstance(print_prefix, str):
        raise errors.NkiError("nl.device_print: print_prefix must be a constant string, not %r" %
                              (print_prefix,))
    v = as_view(tensor, "nl.device_print: tensor")
    if v.tensor.mem == "psum":
        raise errors.NkiError("nl.device_print: tensor '%s' is in PSUM; it prints SBUF or HBM "
                              "tensors" % v.tensor.name)

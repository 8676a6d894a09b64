"""`nki.language` of NKI 0.2-0.6 (the 0.6 reference: aws-neuron-sdk nki/api/nki/language/
__init__.py at 81ce03ae; https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/
nki.language.html): tensors are created with `nl.ndarray(shape, dtype, buffer=)`, whose buffer
defaults to SBUF (NKI 0.3.0) and must be a buffer object, not a string; `nl.hbm` is
`nl.private_hbm`; a kernel's outputs are `nl.shared_hbm` tensors. What the new API keeps from the
legacy one (loops, `nl.ds`, launch queries, the element-wise and reduction calls as ISA op
constants) is the legacy stand-in's."""

from .. import errors, trace
from .. import language as legacy
from ..dtypes import (bfloat16, bool_, float8_e4m3, float8_e5m2, float16, float32,  # noqa: F401
                      int32, tfloat32, uint8, uint16, uint32)
from ..dtypes import DType
from ..sealed import SealedClass
from ..signatures import api

# ---------------------------------------------------------------- buffers

sbuf = legacy.sbuf
psum = legacy.psum
private_hbm = legacy.private_hbm
hbm = private_hbm  # "nl.hbm: alias of private_hbm" (the 0.6 reference's constants)
shared_hbm = legacy.shared_hbm
_BUFFERS = (sbuf, psum, private_hbm, shared_hbm)


def is_hbm(buffer):
    return buffer in (private_hbm, shared_hbm)


def is_on_chip(buffer):
    return buffer in (sbuf, psum)


def is_psum(buffer):
    return buffer is psum


def is_sbuf(buffer):
    return buffer is sbuf


# ---------------------------------------------------------------- dtypes

float8_e4m3fn = DType("fp8_e4m3fn")  # NKI 0.2.0


class _Unmodelled:
    """A dtype of the new API that the model cannot compute: naming it is fine, a tensor of it
    is refused (dtypes.normalize names it)."""

    def __init__(self, name, why):
        self.__name__, self.why = name, why

    def __repr__(self):
        return "nl." + self.__name__


int8 = _Unmodelled("int8", "the model has no 8-bit integer arithmetic")
int16 = _Unmodelled("int16", "the model has no 16-bit integer arithmetic")
float8_e4m3fn_x4 = _Unmodelled("float8_e4m3fn_x4", "packed x4 types are MX matmul operands")
float8_e5m2_x4 = _Unmodelled("float8_e5m2_x4", "packed x4 types are MX matmul operands")
float4_e2m1fn_x4 = _Unmodelled("float4_e2m1fn_x4", "packed x4 types are MX matmul operands")
float8_e8m0fnu = _Unmodelled("float8_e8m0fnu", "MX scale dtype")


def _dtype(dtype, call):
    if isinstance(dtype, _Unmodelled):
        raise errors.NkiError("%s: dtype nl.%s is not modelled (%s)" %
                              (call, dtype.__name__, dtype.why))
    return dtype


# ---------------------------------------------------------------- tensors

def _buffer(buffer, call):
    if isinstance(buffer, str):
        raise errors.NkiError("%s: buffer=%r: since NKI 0.3.0 a buffer is nl.sbuf, nl.psum, "
                              "nl.hbm, nl.private_hbm or nl.shared_hbm, not a string" %
                              (call, buffer))
    if buffer not in _BUFFERS:
        raise errors.NkiError("%s: buffer= takes nl.sbuf, nl.psum, nl.hbm, nl.private_hbm or "
                              "nl.shared_hbm, not %r" % (call, buffer))
    return buffer


def _address(address, call):
    if address is not None:
        from ..signatures import refuse

        refuse(call, "address", address, "a fixed on-chip address places the tensor where the "
               "kernel says, and tensors whose addresses overlap share bytes; the model "
               "allocates each tensor apart")


def _name(name, call):
    if not isinstance(name, str):
        raise errors.NkiError("%s: name= takes a string, not %r" % (call, name))
    return name or None


@api("nl.ndarray")
def ndarray(shape, dtype, buffer=sbuf, name="", address=None):
    """A tensor; its memory is not initialised (the language guide, "Creating Tensors")."""
    _address(address, "nl.ndarray")
    return legacy.allocate(shape, _dtype(dtype, "nl.ndarray"), _buffer(buffer, "nl.ndarray"),
                           _name(name, "nl.ndarray"))


@api("nl.zeros")
def zeros(shape, dtype, buffer=sbuf, name=""):
    return legacy.allocate(shape, _dtype(dtype, "nl.zeros"), _buffer(buffer, "nl.zeros"),
                           _name(name, "nl.zeros"), zero=True)


@api("nl.ones")
def ones(shape, dtype, buffer=sbuf, name=""):
    return legacy.allocate(shape, _dtype(dtype, "nl.ones"), _buffer(buffer, "nl.ones"),
                           _name(name, "nl.ones"), fill=1.0)


@api("nl.full")
def full(shape, fill_value, dtype, buffer=sbuf, name=""):
    return legacy.allocate(shape, _dtype(dtype, "nl.full"), _buffer(buffer, "nl.full"),
                           _name(name, "nl.full"), fill=fill_value)


@api("nl.zeros_like")
def zeros_like(a, dtype=None, buffer=sbuf, name=""):
    return zeros(a.shape, dtype if dtype is not None else a.dtype, buffer=buffer, name=name)


@api("nl.empty_like")
def empty_like(a, dtype=None, buffer=sbuf, name=""):
    return ndarray(a.shape, dtype if dtype is not None else a.dtype, buffer=buffer, name=name)


class tile_size(metaclass=SealedClass):  # noqa: N801
    """nl.tile_size: the limits the 0.6 reference names; values as the legacy page and the ISA
    pages give them (nc_matmul: 128 partitions, stationary free size 128, moving 512; a PSUM bank
    is 2 KiB per partition, 512 fp32, 8 banks)."""

    pmax = 128
    psum_fmax = 512  # deprecated in NKI 0.4.0 (psum_bank_fmax), still read by nki-library
    psum_bank_fmax = 512
    psum_num_banks = 8
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512


# ---------------------------------------------------------------- classes

class NKIObject:
    """nl.NKIObject: the base of a kernel's config classes (dataclasses or not); the compiler
    copies an instance's fields (the language guide, "Class Support"). Here an instance is an
    ordinary Python object: the trace reads its fields as values."""

    def __init__(self, **kwargs):
        for k, v in kwargs.items():
            setattr(self, k, v)


# ---------------------------------------------------------------- memory movement

@api("nl.load")
def load(src, dtype=None):
    """nl.load (re-introduced in NKI 0.3.0, without mask=): an SBUF tile of src's values."""
    return legacy.load(src, dtype=dtype)


@api("nl.store")
def store(dst, value):
    """nl.store (NKI 0.3.0, without mask=): dst (HBM) = value."""
    return legacy.store(dst, value)


# ---------------------------------------------------------------- what the new API keeps

ds = legacy.ds
affine_range = legacy.affine_range
sequential_range = legacy.sequential_range
static_range = legacy.static_range
program_id = legacy.program_id
num_programs = legacy.num_programs
program_ndim = legacy.program_ndim
shared_constant = legacy.shared_constant
shared_identity_matrix = legacy.shared_identity_matrix
device_print = legacy.device_print

# Operators and activation functions, passed to nki.isa calls as `op=` (the shared page
# nki.api.shared: ALU operators and activation functions).
add, subtract, multiply, maximum, minimum = (legacy.add, legacy.subtract, legacy.multiply,
                                             legacy.maximum, legacy.minimum)
divide, power = legacy.divide, legacy.power
equal, not_equal = legacy.equal, legacy.not_equal
greater, greater_equal, less, less_equal = (legacy.greater, legacy.greater_equal, legacy.less,
                                            legacy.less_equal)
bitwise_and, bitwise_or, bitwise_xor = legacy.bitwise_and, legacy.bitwise_or, legacy.bitwise_xor
exp, log, tanh, sigmoid, relu, gelu, silu = (legacy.exp, legacy.log, legacy.tanh, legacy.sigmoid,
                                             legacy.relu, legacy.gelu, legacy.silu)
square, sqrt, rsqrt, sin, abs, reciprocal = (legacy.square, legacy.sqrt,  # noqa: A001
                                             legacy.rsqrt, legacy.sin, legacy.abs,
                                             legacy.reciprocal)
copy = legacy.copy

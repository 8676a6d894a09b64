"""`nki.language` of NKI 0.2-0.6 (the 0.6 reference: aws-neuron-sdk nki/api/nki/language/
__init__.py at 81ce03ae; https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/
nki.language.html): tensors are created with `nl.ndarray(shape, dtype, buffer=)`, whose buffer
defaults to SBUF (NKI 0.3.0) and must be a buffer object, not a string; `nl.hbm` is
`nl.private_hbm`; a kernel's outputs are `nl.shared_hbm` tensors. What the new API keeps from the
legacy one (loops, `nl.ds`) is the legacy stand-in's; the compute calls and operator names are in
language_compute.py, the data-movement calls in language_memory.py."""

import builtins as _builtins

from .. import allocation as _allocation  # (module level, under '_': nl re-exports this module)
from .. import errors, trace
from .. import language as legacy
from .. import language_random
from ..dtypes import (bfloat16, bool_, float8_e4m3, float8_e5m2, float16, float32,  # noqa: F401
                      int32, tfloat32, uint8, uint16, uint32)
from ..dtypes import DType
from ..expr import Lin as _Lin, SymInt as _SymInt
from ..sealed import SealedClass
from ..signatures import api
from ..tiles import as_view
from .views import owned
from .views import owned_tensor as _owned_tensor

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
# nl.bool: not in the 0.6 reference (its boolean is bool_, "boolean stored as uint8", the shared
# page's dtype table), but nki-library's resolve_dtype_to_nki (utils/kernel_helpers.py, in the
# attention kernels' closure) maps NumPy's 'bool' to it, so the compiler accepts the name; it is
# taken as bool_, a byte.
bool = bool_  # noqa: A001 (the name nki-library uses)


class _Unmodelled:
    """A dtype of the new API that the model cannot compute: naming it is fine, a tensor of it
    is refused (dtypes.normalize names it)."""

    def __init__(self, name, why):
        self.__name__, self.why = name, why

    def __repr__(self):
        return "nl." + self.__name__


int8 = _Unmodelled("int8", "the model has no 8-bit integer arithmetic")
int16 = _Unmodelled("int16", "the model has no 16-bit integer arithmetic")
# MX packed dtypes (NKI 0.6 dtype list; MX deep dive "Data Tensor": float8_*_x4 hold four fp8
# values in 32 bits, float4_e2m1fn_x4 four fp4 values in 16 bits). Engines other than
# nisa.quantize_mx / nisa.nc_matmul_mx do not compute with them; DMA copies them unchanged.
float8_e4m3fn_x4 = DType("fp8_e4m3fn_x4")
float8_e5m2_x4 = DType("fp8_e5m2_x4")
float4_e2m1fn_x4 = DType("fp4_e2m1fn_x4")
float8_e8m0fnu = _Unmodelled("float8_e8m0fnu", "the model takes MX scales as uint8 bytes, which "
                             "the quantize_mx/nc_matmul_mx docstrings accept; an E8M0 tile's "
                             "conversions to and from other dtypes are not documented")


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


PSUM_BANK_BYTES = 2048  # "each bank holding up to 2KB" (migration guide, allocation API)


def _address(address, buffer, call):
    """address=(partition_offset, free_offset) (NKI 0.2.0; migration guide "Improved allocation
    API"): the first partition and the byte offset within each partition (the guide's examples
    and nki-library's allocator count bytes: `n_k * 2` for bf16, `bank_id * 2048` in PSUM; its
    prose says "element offset", which those examples contradict). PSUM tensors start on a 2 KiB
    bank boundary (the guide: "the compiler will throw an error otherwise"). Returns the direct
    allocation legacy.allocate applies (allocation.py), or None."""
    if address is None:
        return None

    def integer(a):
        return isinstance(a, (int, _SymInt)) and not isinstance(a, _builtins.bool)

    if not isinstance(address, (tuple, list)) or len(address) != 2 or not _builtins.all(
            integer(a) for a in address):
        raise errors.NkiError("%s: address=%r; it is (partition_offset, free_offset), two "
                              "integers" % (call, address))
    tr = trace.current()
    part, off = (tr.evaluate(_Lin.of(a)) for a in address)
    if is_hbm(buffer):
        raise errors.NkiError("%s: address= places SBUF or PSUM tensors; this one is in %r" %
                              (call, buffer))
    if not part.is_const():
        raise errors.NkiError("%s: address=%r: the partition offset must be known while tracing "
                              "(fix what it depends on with --param)" % (call, tuple(address)))
    part = part.const
    if off.is_const():
        off = off.const
    elif buffer is psum and (off.const % PSUM_BANK_BYTES or _builtins.any(
            c % PSUM_BANK_BYTES for _, c in off.terms)):
        # An offset of loop variables (nki-library's `(grp_idx % 2) * 8192 + 6144`) starts a
        # bank for every value when each coefficient and the constant are whole banks.
        raise errors.NkiError("%s: address=%r: a PSUM offset that varies must be a whole number "
                              "of %d-byte banks for every value (each coefficient and the "
                              "constant a multiple of %d), to start a bank" %
                              (call, tuple(address), PSUM_BANK_BYTES, PSUM_BANK_BYTES))
    # A symbolic SBUF offset (one depending on a loop index) is a placement per iteration; the
    # interpreter checks each against the memory when the tensor comes alive.
    if not 0 <= part < 128 or (isinstance(off, int) and off < 0):
        raise errors.NkiError("%s: address=%r: the partition offset is in [0, 128) and the byte "
                              "offset is not negative" % (call, tuple(address)))
    if buffer is psum and isinstance(off, int) and off % PSUM_BANK_BYTES:
        raise errors.NkiError("%s: address=%r: a PSUM tensor starts at a bank boundary (a "
                              "multiple of %d bytes; migration guide, \"Improved allocation "
                              "API\")" % (call, tuple(address), PSUM_BANK_BYTES))
    if _check_layout not in tr.at_end:
        tr.at_end.append(_check_layout)
    if buffer is psum and isinstance(off, int):
        return _allocation.ModAlloc(buffer, base_partition=part, base_bank=off // PSUM_BANK_BYTES)
    if buffer is psum:  # a bank that varies with loop variables: its byte offset as given
        return _allocation.ModAlloc(buffer, base_partition=part, base_addr=off)
    return _allocation.ModAlloc(buffer, base_partition=part, base_addr=off)


def _check_layout(tr):
    """A kernel that places some tensors of a memory by address= and leaves others to the
    compiler: the compiler's allocation avoids the explicit addresses, the model's layout of the
    others (model/ir/allocator.h) does not, so the model would report clobbered reads hardware
    does not have. Such a mix is refused; explicit tensors alone are checked as written (inside
    the memory; two sharing bytes may not both hold values a later read needs: the
    interpreter's clobbered-read check)."""
    from ..program import BufferDecl

    placed, auto = {}, {}

    def walk(stmts):
        for st in stmts:
            if isinstance(st, BufferDecl) and not st.tensor.dead:
                t = st.tensor
                (placed if t.placement is not None else auto).setdefault(t.mem, t.name)
            for sub in (getattr(st, "body", None), getattr(st, "peel", None)):
                if isinstance(sub, list):
                    walk(sub)

    walk(tr.root)
    for mem in sorted(set(placed) & set(auto)):
        # named at the first instruction that uses the unplaced tensor (the call that made a
        # compiler temporary, such as dma_compute's fp32 staging tile)
        line = _first_use(tr.root, auto[mem])
        where = (errors._kernel_file, line) if line and errors._kernel_file else None
        raise errors.NkiError("%s tensor '%s' has an address= and '%s' has none (or is a "
                              "compiler temporary%s): the model lays out the tensors without an "
                              "address apart from each other but not from the addressed ones, "
                              "so it cannot check this mix; give every %s tensor an address, "
                              "or none" % (mem.upper(), placed[mem], auto[mem],
                                           ", made or first used here" if where else "",
                                           mem.upper()), where)


def _first_use(stmts, name):
    """The kernel line of the first instruction naming tensor `name` (0: none)."""
    for st in stmts:
        for sub in (getattr(st, "body", None), getattr(st, "peel", None)):
            if isinstance(sub, list):
                found = _first_use(sub, name)
                if found:
                    return found
        views = st.views() if hasattr(st, "views") else ()
        if any(v.tensor.name == name for v in views):
            return getattr(st, "line", 0) or 0
    return 0


def _name(name, call):
    if name is None:  # nki-library's SbufManager passes name=None for a tensor it does not name
        return None
    if not isinstance(name, str):
        raise errors.NkiError("%s: name= takes a string, not %r" % (call, name))
    return name or None


# ---------------------------------------------------------------- par_dim

@api("nl.par_dim")
def par_dim(size):
    """NKI 0.2's partition-dim marker. The `nki` package had it: nki-library used
    `nki.language.par_dim` until its 2.29.0 release (NKI 0.3.0; aws-neuron-sdk
    release-notes/components/nki-lib.rst: "Removed usage of nki.language.par_dim throughout the
    library"), and the current perf guide still writes `nl.ndarray((nl.par_dim(128), 512),
    buffer=nl.sbuf)` (nki/deep-dives/nki_perf_guide.rst). Since NKI 0.2 a tensor's partition
    dim is its first (the migration guide, "Removing block dimensions from NKI kernels"), so the
    marker is accepted there, where it names the dim it is and changes nothing; anywhere else
    it would make the dims before it block dimensions, which are removed: refused
    (`_plain_shape`)."""
    return legacy.par_dim(size)


def _plain_shape(shape, call):
    """The shape with a leading nl.par_dim(n) read as n; a par_dim anywhere else refused."""
    if not isinstance(shape, (tuple, list)):
        return shape
    out = []
    for k, s in enumerate(shape):
        if isinstance(s, legacy.par_dim):
            if k != 0:
                raise errors.NkiError(
                    "%s: nl.par_dim at position %d of the shape would make the dims before it "
                    "block dimensions, which NKI 0.2 removed (the migration guide, \"Removing "
                    "block dimensions from NKI kernels\": fold them into the free dims or use a "
                    "list of tensors); the partition dim is a tensor's first" % (call, k))
            s = s.size
        out.append(s)
    return tuple(out)


@api("nl.ndarray")
def ndarray(shape, dtype, buffer=sbuf, name="", address=None):
    """A tensor; its memory is not initialised (the language guide, "Creating Tensors")."""
    buf = _buffer(buffer, "nl.ndarray")
    alloc = _address(address, buf, "nl.ndarray")
    return _owned_tensor(legacy.allocate_tensor(_plain_shape(shape, "nl.ndarray"),
                                                _dtype(dtype, "nl.ndarray"), alloc or buf,
                                                _name(name, "nl.ndarray")))


@api("nl.zeros")
def zeros(shape, dtype, buffer=sbuf, name=""):
    return _owned_tensor(legacy.allocate_tensor(_plain_shape(shape, "nl.zeros"),
                                                _dtype(dtype, "nl.zeros"),
                                                _buffer(buffer, "nl.zeros"),
                                                _name(name, "nl.zeros"), zero=True))


@api("nl.ones")
def ones(shape, dtype, buffer=sbuf, name=""):
    return _owned_tensor(legacy.allocate_tensor(_plain_shape(shape, "nl.ones"),
                                                _dtype(dtype, "nl.ones"),
                                                _buffer(buffer, "nl.ones"),
                                                _name(name, "nl.ones"), fill=1.0))


@api("nl.full")
def full(shape, fill_value, dtype, buffer=sbuf, name=""):
    return _owned_tensor(legacy.allocate_tensor(_plain_shape(shape, "nl.full"),
                                                _dtype(dtype, "nl.full"),
                                                _buffer(buffer, "nl.full"),
                                                _name(name, "nl.full"), fill=fill_value))


@api("nl.zeros_like")
def zeros_like(x, dtype=None, buffer=None, name=""):
    """The 0.6 reference: buffer "defaults to sbuf"."""
    return zeros(x.shape, dtype if dtype is not None else x.dtype,
                 buffer=sbuf if buffer is None else buffer, name=name)


@api("nl.empty_like")
def empty_like(x, dtype=None, buffer=None, name=""):
    """The 0.6 reference: dtype and buffer default to x's ("default: same as x"; an HBM x gives
    a private_hbm tensor, a kernel output a shared_hbm one)."""
    if buffer is None:
        t = as_view(x, "nl.empty_like: x").tensor
        buffer = {"sbuf": sbuf, "psum": psum}.get(t.mem) or \
            (shared_hbm if t.role == "output" else private_hbm)
    return ndarray(x.shape, dtype if dtype is not None else x.dtype, buffer=buffer, name=name)


class _TileSizeLimits(SealedClass):
    """The SBUF sizes of nl.tile_size depend on the generation the kernel is traced for (NKI
    0.4.0's byte constants): class properties of the metaclass."""

    # Usable SBUF bytes per partition (the model's hw_config: trn1 176 KiB of 192 (ALLOC);
    # trn2 212984 of 224 KiB and trn3 245752 of 256 KiB (KLR's total_available_sbuf_size,
    # unconfirmed)); the SBUF is 128 partitions of 192, 224, 256 KiB.
    _USABLE = {2: 176 * 1024, 3: 212984, 4: 245752}
    _PER_PARTITION = {2: 192 * 1024, 3: 224 * 1024, 4: 256 * 1024}

    @property
    def total_available_sbuf_size(cls):
        """Usable SBUF bytes per partition (deprecated in NKI 0.4.0 for sbuf_fmax_bytes)."""
        from .constants import current_version

        return cls._USABLE[int(current_version())]

    @property
    def sbuf_fmax_bytes(cls):
        return cls.total_available_sbuf_size

    @property
    def sbuf_fmax(cls):
        """The same in fp32 elements."""
        return cls.total_available_sbuf_size // 4

    @property
    def sbuf_size_bytes(cls):
        """The whole SBUF: 128 partitions."""
        from .constants import current_version

        return 128 * cls._PER_PARTITION[int(current_version())]


class tile_size(metaclass=_TileSizeLimits):  # noqa: N801
    """nl.tile_size: the limits the 0.6 reference names; values as the legacy page and the ISA
    pages give them (nc_matmul: 128 partitions, stationary free size 128, moving 512; a PSUM bank
    is 2 KiB per partition, 512 fp32, 8 banks). psum_min_align and sbuf_min_align (older pages)
    have no documented value and are not given. psum_num_banks is 8; the v2.30.0 page's 7 under
    NKI_DMA_TRANSPOSE_AS_PE_TRANSPOSE=true (bank 7 kept for nc_transpose) is not modelled."""

    pmax = 128
    psum_fmax = 512  # deprecated in NKI 0.4.0 (psum_bank_fmax), still read by nki-library
    psum_bank_fmax = 512
    psum_bank_fmax_bytes = 2048
    psum_num_banks = 8
    gemm_stationary_fmax = 128
    gemm_moving_fmax = 512
    bn_stats_fmax = 512


# ---------------------------------------------------------------- classes

def _plain_fields(cls):
    """The class-level data attributes (not annotated, not methods or descriptors) of the
    classes between `cls` and NKIObject, in order."""
    out = []
    for base in reversed(cls.__mro__):
        if base is object or base.__name__ == "NKIObject" and base.__module__ == __name__:
            continue
        annotated = base.__dict__.get("__annotations__", {})
        for name, value in base.__dict__.items():
            if name.startswith("__") or name in annotated or name in out or callable(value) or \
                    isinstance(value, (staticmethod, classmethod, property)):
                continue
            out.append(name)
    return out


def _fields_of(cls):
    """The fields of the compiler's default __init__, in order: the annotated names (the
    guide's example), then the plain class attributes (`_plain_fields`)."""
    fields = []
    for base in reversed(cls.__mro__):
        for name in base.__dict__.get("__annotations__", {}):
            if name not in fields:
                fields.append(name)
    return fields + [n for n in _plain_fields(cls) if n not in fields]


class NKIObject:
    """nl.NKIObject: the base of a kernel's config classes; the compiler copies an instance's
    fields (`__dict__`) into the kernel (the language guide, "Class Support"). Here an instance is
    an ordinary Python object: the trace reads its fields as values.

    "classes with and without the @dataclass decorator will be compiled in the same way": a
    subclass without an __init__ of its own gets the guide's default one (this one): each
    annotated field a parameter in order, its class value the default (None if it has none),
    then `__post_init__()`; plain class attributes (`x = None`, no annotation) are fields too,
    after the annotated ones. A @dataclass subclass has dataclasses' own __init__, which takes
    precedence (field(default_factory=...) included), unless it has plain class attributes
    (__init_subclass__ below). The class itself keeps the 0.6 reference's
    `NKIObject(**kwargs)`."""

    def __init__(self, *args, **kwargs):
        cls = type(self)
        fields = _fields_of(cls)
        if not fields:
            if args:
                raise errors.NkiError("%s() takes keyword arguments only (it declares no "
                                      "fields)" % cls.__name__)
            for k, v in kwargs.items():
                setattr(self, k, v)
            return
        if len(args) > len(fields):
            raise errors.NkiError("%s() takes %d field values, %d given" %
                                  (cls.__name__, len(fields), len(args)))
        given = dict(zip(fields, args))
        for name, value in kwargs.items():
            if name not in fields:
                raise errors.NkiError("%s() has no field '%s' (its fields: %s)" %
                                      (cls.__name__, name, ", ".join(fields)))
            if name in given:
                raise errors.NkiError("%s(): field '%s' given twice" % (cls.__name__, name))
            given[name] = value
        for name in fields:
            setattr(self, name, given[name] if name in given else getattr(cls, name, None))
        post = getattr(self, "__post_init__", None)
        if post is not None:
            post()

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        # A class whose fields are plain class attributes (nki-library's attention_cte.py:
        # `@dataclass class SectionParams(nl.NKIObject): section_idx = None`, built with
        # SectionParams(section_idx=...)) keeps the default __init__ even under @dataclass, whose
        # own would take no field (it sees annotations only) while the compiler's takes them
        # ("classes with and without the @dataclass decorator will be compiled in the same
        # way"). @dataclass leaves an __init__ the class already has.
        if "__init__" not in cls.__dict__ and _plain_fields(cls):
            cls.__init__ = NKIObject.__init__


# ---------------------------------------------------------------- launch and scheduling

@api("nl.program_id")
def program_id(axis=0):
    """The program's index along `axis` of the launch grid (axis defaults to 0 since NKI
    0.3.0)."""
    return legacy.program_id(axis)


@api("nl.num_programs")
def num_programs(axes=0):
    """The number of programs along `axes` (an axis or a tuple of them; 0 by default since NKI
    0.3.0, release notes "num_programs axes default changed from None to 0")."""
    if isinstance(axes, (tuple, list)):
        n = 1
        for a in axes:
            n = n * legacy.num_programs(a)
        return n
    return legacy.num_programs(axes)


program_ndim = legacy.program_ndim


class _NoReorder:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@api("nl.no_reorder")
def no_reorder():
    """`with nl.no_reorder():` keeps the block's instructions in program order in the
    compiler's schedule (NKI 0.2.0). The model issues each engine's instructions in program order
    anyway, so it changes no value and no dependence."""
    return _NoReorder()


# ---------------------------------------------------------------- random numbers

@api("nl.rand")
def rand(shape, dtype, buffer=sbuf, name=""):
    """A new tile of values uniform in [0, 1): the model draws from its own generator (the
    hardware's sequence is not documented), so checks of such a kernel are unknown
    (language_random.py)."""
    if _buffer(buffer, "nl.rand") is not sbuf:
        raise errors.NkiError("nl.rand: buffer=%r; the model generates random tiles in SBUF" %
                              (buffer,))
    return language_random.rand(shape, _dtype(dtype, "nl.rand"))


@api("nl.random_seed")
def random_seed(seed):
    return language_random.random_seed(seed)


@api("nl.dropout")
def dropout(x, rate, dtype=None):
    return language_random.dropout(x, rate, dtype=_dtype(dtype, "nl.dropout") if dtype is not
                                   None else None)


# ---------------------------------------------------------------- what the new API keeps

ds = legacy.ds
# Python loops with Python's semantics, and the on-device loops (loops.py)
from .loops import (affine_range, dynamic_range, fori_loop, sequential_range,  # noqa: E402,F401
                    static_range, while_loop)

# The compute calls and the operator / activation-function names (language_compute.py), the
# data-movement calls (language_memory.py).
from .language_compute import (  # noqa: E402,F401
    abs, abs_max, abs_min, add, all, arctan, average, bitwise_and, bitwise_or, bitwise_xor,
    broadcast_to,
    bypass, ceil, copy, cos, divide, equal, erf, erf_dx, exp, floor, fmod, gelu, gelu_apprx_sigmoid,
    gelu_apprx_sigmoid_dx, gelu_apprx_tanh, gelu_dx, greater, greater_equal, invert, left_shift,
    less, less_equal, log, logical_and, logical_not, logical_or, logical_xor, matmul, max,
    maximum, mean, min, minimum, mish, mod, multiply, negative, not_equal, power, prelu, prod,
    reciprocal, relu, right_shift, rms_norm, rsqrt, sigmoid, sign, silu, silu_dx, sin, softmax,
    softplus, sqrt, square, subtract, sum, tan, tanh, transpose, trunc, var, where)
from .language_memory import (device_print, gather_flattened, load, load_transpose2d,  # noqa
                              shared_constant, shared_identity_matrix, store)

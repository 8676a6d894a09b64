"""The compute calls of `nki.language` in NKI 0.3.0-0.6 ("convenience wrappers around nki.isa",
experimental; the 0.6 reference: aws-neuron-sdk nki/api/nki/language/__init__.py at 81ce03ae) and
the operator and activation-function names of the shared page (nki/api/nki.api.shared.rst,
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/nki.api.shared.html).

Each function is both a call (`c = nl.add(a, b)`: a new SBUF tile) and an op constant for the
nki.isa calls (`nisa.tensor_tensor(dst, a, b, op=nl.add)`): ops.ALU/ops.ACT map it to the
model's operator. A name the model does not compute is refused, as a call and as an `op=`
(ops.UNMODELLED), with the reason. The calls follow the documented limits of the release notes
(NKI 0.3.0-0.5.0 "Known Issues", carried forward to 0.6.0): no `nl.divide`, no broadcasting in
binary calls, no scalar exponent in `nl.power`, `nl.matmul` only with `transpose_x=True`."""

from .. import errors, ops, trace
from ..signatures import api, refuse
from ..tiles import Tile, as_view

# ---------------------------------------------------------------- operands


def _dtype(dtype, call):
    from .language import _dtype as checked

    return checked(dtype, call) if dtype is not None else None


def _tile(x, call, what="x"):
    """An on-chip operand's view: the calls compute on SBUF or PSUM tiles."""
    if ops.is_scalar(x) or isinstance(x, bool):
        raise errors.NkiError("%s: %s must be a tile, not the number %r" % (call, what, x))
    v = as_view(x, "%s: %s" % (call, what))
    if v.tensor.mem == "hbm":
        raise errors.NkiError("%s: %s is in HBM; the nl compute calls take SBUF or PSUM tiles "
                              "(nl.load or nisa.dma_copy it first)" % (call, what))
    return v


def _shape(v):
    r = trace.current().evaluate
    return [r(x) for x in v.logical_lins()]


def _same_shape(call, a, b):
    """Release notes 0.3.0-0.5.0, Known Issues: "Binary operations do not support broadcasting
    — Operations like nl.add(a, b) require both operands to have the same shape"."""
    sa, sb = _shape(a), _shape(b)
    if len(sa) != len(sb) or any(x != y for x, y in zip(sa, sb)):
        raise errors.NkiError("%s: operands of shapes %s and %s; the nl binary calls do not "
                              "broadcast (NKI release notes, Known Issues): give tiles of one "
                              "shape, or use nisa.tensor_scalar for a per-partition column" %
                              (call, tuple(a.shape), tuple(b.shape)))


_INTS = ("int32", "uint8", "uint16", "uint32")


def _integers(call, *views):
    for v in views:
        if v.tensor.dtype not in _INTS:
            raise errors.NkiError("%s: the inputs must be integer typed (the reference); this "
                                  "one is %s" % (call, v.tensor.dtype))


# ---------------------------------------------------------------- element-wise binary

def _binary(name, op, integer=False, tile_exponent=False):
    call = "nl." + name

    def f(x, y, dtype=None):
        dt = _dtype(dtype, call)
        if ops.is_scalar(x) and ops.is_scalar(y):
            raise errors.NkiError("%s: at least one of x, y must be a tile" % call)
        views = [_tile(v, call, w) for v, w in ((x, "x"), (y, "y")) if not ops.is_scalar(v)]
        if len(views) == 2:
            _same_shape(call, *views)
        if integer:
            _integers(call, *views)
        if tile_exponent and ops.is_scalar(y):
            raise errors.NkiError("%s: a scalar exponent is not supported; both operands are "
                                  "tiles (NKI release notes, Known Issues: nl.power(tile, "
                                  "scalar))" % call)
        return ops.binary(op, x, y, dtype=dt)

    f.__name__ = f.__qualname__ = name
    f = api(call)(f)
    ops.ALU[f] = op
    return f


add = _binary("add", "add")
subtract = _binary("subtract", "subtract")
multiply = _binary("multiply", "multiply")
maximum = _binary("maximum", "max")
minimum = _binary("minimum", "min")
power = _binary("power", "pow", tile_exponent=True)
equal = _binary("equal", "is_equal")
not_equal = _binary("not_equal", "not_equal")
greater = _binary("greater", "is_gt")
greater_equal = _binary("greater_equal", "is_ge")
less = _binary("less", "is_lt")
less_equal = _binary("less_equal", "is_le")
bitwise_and = _binary("bitwise_and", "bitwise_and", integer=True)
bitwise_or = _binary("bitwise_or", "bitwise_or", integer=True)
bitwise_xor = _binary("bitwise_xor", "bitwise_xor", integer=True)
# The shared page: left_shift is the arithmetic and the logical shift left, right_shift the
# logical shift right (the arithmetic one is "Not supported"); the model's shift_right is
# logical.
left_shift = _binary("left_shift", "shift_left", integer=True)
right_shift = _binary("right_shift", "shift_right", integer=True)


# ---------------------------------------------------------------- element-wise unary

def _activation(name, func=None, no_psum=None):
    """nl.<name>(x, dtype=None): the activation function on the Scalar engine, as the model
    computes nisa.activation(op=nl.<name>)."""
    call = "nl." + name
    func = func or name

    def f(x, dtype=None):
        dt = _dtype(dtype, call)
        v = _tile(x, call)
        if no_psum and v.tensor.mem == "psum":
            raise errors.NkiError("%s: x is in PSUM; %s" % (call, no_psum))
        return ops.activation(func, Tile(v), dtype=dt)

    f.__name__ = f.__qualname__ = name
    f = api(call)(f)
    ops.ACT[f] = func
    return f


exp = _activation("exp")
log = _activation("log")
tanh = _activation("tanh")
sigmoid = _activation("sigmoid")
relu = _activation("relu")
gelu = _activation("gelu")
silu = _activation("silu")
square = _activation("square")
sqrt = _activation("sqrt")
# NKI 0.5.0: nl.rsqrt runs on the GpSimd engine "with higher numerical precision" and takes no
# PSUM input (release notes 0.5.0, Improvements). The model computes the Scalar engine's rsqrt.
rsqrt = _activation("rsqrt", no_psum="nl.rsqrt runs on the GpSimd engine, which cannot read "
                    "PSUM (NKI 0.5.0 release notes)")
sin = _activation("sin")
abs = _activation("abs")  # noqa: A001 (NKI's name)


@api("nl.reciprocal")
def reciprocal(x, dtype=None):
    return ops.reciprocal(Tile(_tile(x, "nl.reciprocal")), dtype=_dtype(dtype, "nl.reciprocal"))


@api("nl.negative")
def negative(x, dtype=None):
    """-x: x times -1 (exact, signed zeros included)."""
    return ops.binary("multiply", Tile(_tile(x, "nl.negative")), -1.0,
                      dtype=_dtype(dtype, "nl.negative"))


@api("nl.copy")
def copy(x, dtype=None):
    """A new SBUF tile with x's values: since NKI 0.6.0 a Vector-engine tensor_copy, bit-exact
    when the dtypes agree (release notes 0.6.0; the 0.3.0-0.5.0 Scalar-engine copy through fp32
    that could not cross buffers is the older behaviour). x is in SBUF or PSUM."""
    v = _tile(x, "nl.copy")
    return ops.copy(Tile(v), dtype=_dtype(dtype, "nl.copy"), engine="vector")


ops.ACT[reciprocal] = "reciprocal"
ops.ACT[copy] = "copy"


# ---------------------------------------------------------------- reductions

def _reduction(name, op):
    call = "nl." + name

    def f(x, axis, dtype=None, keepdims=False):
        v = _tile(x, call)
        return ops.reduce(op, Tile(v), axis, dtype=_dtype(dtype, call), keepdims=bool(keepdims))

    f.__name__ = f.__qualname__ = name
    f = api(call)(f)
    ops.ALU[f] = op
    return f


sum = _reduction("sum", "add")  # noqa: A001
max = _reduction("max", "max")  # noqa: A001
min = _reduction("min", "min")  # noqa: A001
prod = _reduction("prod", "multiply")


@api("nl.broadcast_to")
def broadcast_to(x, shape, dtype=None):
    """x (an SBUF or PSUM tile, "the source tile in SBUF or PSUM") broadcast to `shape` of the
    same rank, each dim equal or from 1: x itself when the shapes agree (a copy when `dtype`
    differs), else a new SBUF tile (the legacy call's partition and free-dim broadcasts)."""
    from .. import language as legacy

    v = _tile(x, "nl.broadcast_to")
    dt = _dtype(dtype, "nl.broadcast_to")
    out = legacy.broadcast_to(Tile(v), shape=shape)
    ov = as_view(out)
    if dt is not None and ops._dtype(dt, None) != ov.tensor.dtype:
        return ops.copy(out, dtype=dt, engine="vector")
    return out


# ---------------------------------------------------------------- Tensor engine

@api("nl.matmul")
def matmul(x, y, transpose_x=False):
    """x.T @ y into a new fp32 PSUM tile. transpose_x=False is refused: "nki.language.matmul
    without transpose_x=True is not supported" (release notes 0.3.0-0.5.0, Known Issues, carried
    forward to 0.6.0)."""
    if transpose_x is not True:
        refuse("nl.matmul", "transpose_x", transpose_x, "NKI's nl.matmul supports only "
               "transpose_x=True (release notes, Known Issues); pass x as [K, M]")
    vx, vy = _tile(x, "nl.matmul", "x"), _tile(y, "nl.matmul", "y")
    for v, what, fmax in ((vx, "x", 128), (vy, "y", 512)):
        if v.tensor.mem != "sbuf":
            raise errors.NkiError("nl.matmul: %s is in PSUM; the operands are SBUF tiles" % what)
        if len(v.order) != 2:
            raise errors.NkiError("nl.matmul: %s is %d-dimensional; the operands are 2-D tiles" %
                                  (what, len(v.order)))
        p, f = _shape(v)
        if (p.is_const() and p.const > 128) or (f.is_const() and f.const > fmax):
            raise errors.NkiError("nl.matmul: %s is %s; the reference allows at most 128 "
                                  "partitions and %d free elements" % (what, tuple(v.shape), fmax))
    kx, ky = _shape(vx)[0], _shape(vy)[0]
    if kx != ky:
        raise errors.NkiError("nl.matmul: x %s and y %s: with transpose_x=True both have the "
                              "contraction dim as partitions" % (tuple(vx.shape), tuple(vy.shape)))
    return ops.matmul(Tile(vx), Tile(vy), trace.current().assigned_name())


@api("nl.transpose")
def transpose(x, dtype=None):
    """The 2-D tile with its partition and free dims swapped (Tensor or Vector engine, the
    compiler's choice by shape)."""
    v = _tile(x, "nl.transpose")
    if len(v.order) != 2:
        raise errors.NkiError("nl.transpose: x is %d-dimensional; it transposes a 2-D tile" %
                              len(v.order))
    return ops.transpose(Tile(v), None, _dtype(dtype, "nl.transpose"))


# ---------------------------------------------------------------- what the model does not compute

def _unmodelled(name, why, doc_signature="x, dtype=None"):
    call = "nl." + name

    def f(*args, **kw):
        raise errors.NkiError("%s is not modelled (%s)" % (call, why))

    f.__name__ = f.__qualname__ = name
    f.__doc__ = "nl.%s(%s): refused (%s)." % (name, doc_signature, why)
    ops.UNMODELLED[f] = why
    return f


_NO_ACT = "the model's Scalar engine has no %s function (its functions: copy, exp, log, relu, " \
          "sigmoid, tanh, gelu, silu, square, sqrt, rsqrt, reciprocal, sin, abs)"
_NO_ALU = "the model's ALU has no %s operator"
_NO_LOWERING = "the compiler's instruction sequence for it is not documented, so the model " \
               "could not follow its rounding"

# Activation functions of the shared page the model has no table for.
gelu_dx = _unmodelled("gelu_dx", _NO_ACT % "gelu_dx")
gelu_apprx_tanh = _unmodelled("gelu_apprx_tanh", _NO_ACT % "gelu_apprx_tanh")
gelu_apprx_sigmoid = _unmodelled("gelu_apprx_sigmoid", _NO_ACT % "gelu_apprx_sigmoid")
gelu_apprx_sigmoid_dx = _unmodelled("gelu_apprx_sigmoid_dx", _NO_ACT % "gelu_apprx_sigmoid_dx")
silu_dx = _unmodelled("silu_dx", _NO_ACT % "silu_dx")
softplus = _unmodelled("softplus", _NO_ACT % "softplus")
mish = _unmodelled("mish", _NO_ACT % "mish")
erf = _unmodelled("erf", _NO_ACT % "erf")
erf_dx = _unmodelled("erf_dx", _NO_ACT % "erf_dx")
arctan = _unmodelled("arctan", _NO_ACT % "arctan")
sign = _unmodelled("sign", _NO_ACT % "sign")
prelu = _unmodelled("prelu", _NO_ACT % "prelu" + "; nisa.activation's relu_param is not "
                    "modelled either")
cos = _unmodelled("cos", _NO_ACT % "cos")
tan = _unmodelled("tan", _NO_ACT % "tan")
ceil = _unmodelled("ceil", _NO_LOWERING)
floor = _unmodelled("floor", _NO_LOWERING)
trunc = _unmodelled("trunc", _NO_LOWERING)

# ALU operators of the shared page the model has not got (or computes otherwise).
logical_and = _unmodelled("logical_and", _NO_ALU % "logical_and", "x, y, dtype=None")
logical_or = _unmodelled("logical_or", _NO_ALU % "logical_or", "x, y, dtype=None")
logical_xor = _unmodelled("logical_xor", _NO_ALU % "logical_xor", "x, y, dtype=None")
_ABS = "NKI 0.4.0's %s returns the signed input of %s magnitude (ties give y; the 0.6 " \
       "reference), the model's ALU op of that name the magnitude itself"
abs_max = _unmodelled("abs_max", _ABS % ("nl.abs_max", "larger"), "x, y, dtype=None")
abs_min = _unmodelled("abs_min", _ABS % ("nl.abs_min", "smaller"), "x, y, dtype=None")
average = _unmodelled("average", "nl.average has no documentation (the 0.6 reference names it "
                      "without a docstring)")
divide = _unmodelled("divide", "\"nki.language.divide is not supported — Division is not "
                     "available as a hardware instruction\" (release notes, Known Issues); "
                     "multiply by nl.reciprocal(y)", "x, y, dtype=None")
fmod = _unmodelled("fmod", "\"Modulo operations are not available as hardware instructions\" "
                   "(release notes, Known Issues)", "x, y, dtype=None")
mod = _unmodelled("mod", "\"Modulo operations are not available as hardware instructions\" "
                  "(release notes, Known Issues)", "x, y, dtype=None")

# Composite calls whose lowering the reference does not give.
mean = _unmodelled("mean", _NO_LOWERING, "x, axis, dtype=None, keepdims=False")
var = _unmodelled("var", _NO_LOWERING, "x, axis, dtype=None, keepdims=False")
all = _unmodelled("all", _NO_ALU % "logical_and" + " (nl.all reduces with it)",  # noqa: A001
                  "x, axis, dtype=None")
softmax = _unmodelled("softmax", _NO_LOWERING, "x, axis=-1, dtype=None")
rms_norm = _unmodelled("rms_norm", _NO_LOWERING,
                       "x, w, axis, n, epsilon=1e-06, dtype=None, compute_dtype=None")
where = _unmodelled("where", _NO_LOWERING, "condition, x, y, dtype=None")


# All ones of each integer dtype as the fp32 immediate of a tensor_scalar (exact up to 16 bits;
# int32's is -1). uint32's 2^32-1 is no fp32 value.
_ALL_ONES = {"int32": -1.0, "uint8": 255.0, "uint16": 65535.0}


def _xor_with(call, x, dtype, value_of):
    v = _tile(x, call)
    _integers(call, v)
    value = value_of(v.tensor.dtype)
    if value is None:
        raise errors.NkiError("%s: x is uint32; its all-ones mask is no fp32 immediate, so the "
                              "model's tensor_scalar cannot hold it" % call)
    return ops.binary("bitwise_xor", Tile(v), value, dtype=_dtype(dtype, call))


@api("nl.invert")
def invert(x, dtype=None):
    """Bitwise NOT of an integer tile: "Implemented as XOR with all-ones" (the reference), a
    tensor_scalar bitwise_xor with the dtype's all-ones (int32, uint8, uint16)."""
    return _xor_with("nl.invert", x, dtype, _ALL_ONES.get)


@api("nl.logical_not")
def logical_not(x, dtype=None):
    """"Implemented as XOR with 1, so inputs should be boolean-like (0 or 1 values)" (the
    reference): a tensor_scalar bitwise_xor with 1 of an integer tile (a float tile's XOR would
    act on its bit pattern, which the model's value-level bitwise operators do not)."""
    return _xor_with("nl.logical_not", x, dtype, lambda dt: 1.0)


# As op= constants they are the shared page's unary bitvec / logical operators, which the
# model's ALU has not got.
ops.UNMODELLED[invert] = _NO_ALU % "bitwise-not"
ops.UNMODELLED[logical_not] = _NO_ALU % "logical-not"


class _Bypass:
    """nl.bypass (NKI 0.4.0): "No-op operator that passes data through unchanged", the op0/op1
    of nisa.tensor_scalar that skips that stage (ops.tensor_scalar drops it)."""

    __name__ = "bypass"

    def __repr__(self):
        return "nl.bypass"


bypass = _Bypass()
ops.BYPASS.append(bypass)
ops.UNMODELLED[bypass] = "nl.bypass skips a stage of nisa.tensor_scalar (op0/op1) only"

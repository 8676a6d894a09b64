"""ncverify as an NKI simulator: a kernel called from Python with NumPy arrays (`kernel(a, b)`
under `@nki.jit(mode="simulation")`, `nki.simulate_kernel(kernel, *arrays)`,
`nki.simulate(kernel)(*arrays)`, `kernel[grid](...)`) is traced at the arrays' concrete shapes
and dtypes (main.trace_kernel, the tracer `ncverify import` runs) and the program runs on
ncverify's C++ interpreter with every dynamic check, on those arrays: `ncverify run PROGRAM
--inputs-from DIR --outputs-to DIR` (.npy files). The outputs come back as NumPy arrays; an
input the kernel writes is updated in place, as the NKI simulator does.

This runs in the user's own process (their test file, like pytest runs it): the sandbox of
`ncverify import` guards against hostile candidates and is not armed here.
"""

import inspect
import json
import os
import re
import shutil
import subprocess
import warnings
import tempfile

from . import dialect, errors, trace, unrolling
from .newapi import refine
from .expr import Lin
from .program import Tensor
from .tiles import Tile, tensor_of

# The dtype names NumPy (and ml_dtypes, when installed) gives each .nkir dtype.
_FROM_NUMPY = {
    "float32": "fp32", "float16": "fp16", "int32": "int32", "uint8": "uint8", "bool": "uint8",
    "uint16": "uint16", "uint32": "uint32", "bfloat16": "bf16", "float8_e5m2": "fp8_e5m2",
    "float8_e4m3fn": "fp8_e4m3fn", "float8_e4m3": "fp8_e4m3",
}
# NKI dtypes (nl.int8, nl.int16) without a NumPy-side twin in the model: refused, saying so.
_NOT_MODELLED = {"int8": "the model has no 8-bit integer arithmetic",
                 "int16": "the model has no 16-bit integer arithmetic"}
# How each dtype travels in a .npy file: its own NumPy type, or its bit pattern for the types
# NumPy lacks (bf16, fp8), which the C++ codec reads as raw bits (model/interp/npy.h).
_WIRE = {"fp32": "<f4", "fp16": "<f2", "int32": "<i4", "uint8": "|u1", "uint16": "<u2",
         "uint32": "<u4", "bf16": "<u2", "fp8_e4m3": "|u1", "fp8_e4m3fn": "|u1",
         "fp8_e5m2": "|u1",
         # MX packed: the raw words, as the host holds them (uint32 / uint16 NumPy arrays)
         "fp8_e4m3fn_x4": "<u4", "fp8_e5m2_x4": "<u4", "fp4_e2m1fn_x4": "<u2"}


class SimulationError(Exception):
    """The kernel could not be simulated."""


class KernelNotTraced(SimulationError):
    """The front end refused the kernel (an unsupported call or argument): `FILE.py:LINE: what
    and why`, as `ncverify import` reports it."""

    def __init__(self, message, where=None):
        super().__init__(message if where is None else "%s:%d: %s" % (where[0], where[1],
                                                                      message))
        self.where = where


class DynamicCheckFailure(SimulationError, AssertionError):
    """A dynamic check of the interpreter failed: the check's kind, the instruction (its text),
    the kernel line that made it, the loop indices and params of the failing instance. An
    AssertionError too, as the NKI simulator raises for a hardware constraint it validates (NKI
    CPU Simulator guide, "Hardware Constraint Validation")."""

    def __init__(self, error):
        super().__init__(error.get("message", "dynamic-check failure"))
        self.kind = error.get("kind")
        self.instruction = error.get("instruction_text")
        source = error.get("source") or {}
        self.file = source.get("file")
        self.line = source.get("line")
        self.loop_indices = dict(error.get("loop_indices") or {})
        self.params = dict(error.get("params") or {})
        self.core = error.get("core")
        self.detail = error.get("detail")


class OutOfBoundsAccess(DynamicCheckFailure, IndexError):
    """An access outside its tensor (the NKI simulator raises IndexError for these). An index
    read by indirect addressing outside its declared range is one too: the front end declares
    the indexed dim's whole range (tiles._indirect_view)."""


class UnwrittenOutput(UserWarning):
    """A kernel returned an output it wrote only in part (a scatter, say). On hardware the other
    elements hold whatever the buffer held; here they hold 0xFF bytes (NaN in every float dtype),
    so that a comparison that reads them fails instead of matching an invented value."""

    def __init__(self, name, count):
        super().__init__("output '%s': %d element(s) the kernel never wrote (they hold 0xFF "
                         "bytes: NaN for floats)" % (name, count))
        self.output, self.count = name, count


class UndefinedValuesUnused(UserWarning):
    """The kernel read bytes no instruction wrote, or gave an activation function an input outside
    its documented range (where the hardware's output is undefined). The model reran the kernel
    with other values there and no returned output changed, so the values returned are the
    kernel's whatever the hardware holds there (model/interp/README.md, "Poison and uninitialized
    reads", "Undefined values"). Where an output does depend on them the run fails instead
    (DynamicCheckFailure)."""

    def __init__(self, message):
        super().__init__(message)


class CapacitySpill(UserWarning):
    """The kernel's live on-chip buffers exceed SBUF or PSUM. The Neuron compiler's automatic
    allocation spills such data to the next memory level, so the kernel runs (slower) and its values
    are the ones returned; whether the compiler's allocation succeeds is its choice, which the model
    does not make."""

    def __init__(self, message):
        super().__init__(message)


# The interpreter's detail for an indirect index that sends a row outside its tensor names the
# row's first element in the whole tensor (model/interp/resolve.cpp, flat_element).
_FLAT_ELEMENT = re.compile(r"flat element (-?\d+) of (\d+)")


def _failure(error):
    if error.get("kind") in ("out_of_bounds", "indirect_range"):
        flat = _FLAT_ELEMENT.search(error.get("detail") or "")
        if flat:
            return _index_error(error, int(flat.group(1)), int(flat.group(2)))
        return OutOfBoundsAccess(error)
    return DynamicCheckFailure(error)


def is_dynamic_check(exc):
    """Whether `exc` reports a failed dynamic check: a DynamicCheckFailure, or the plain
    IndexError of an indirect index outside its tensor (_index_error)."""
    return isinstance(exc, DynamicCheckFailure) or getattr(exc, "dynamic_check", False) is True


def check_message(exc):
    """The interpreter's paragraph about a failed dynamic check (is_dynamic_check)."""
    return getattr(exc, "message", None) if not isinstance(exc, DynamicCheckFailure) else str(exc)


def _index_error(error, flat, size):
    """An indirect index (t[idx_tile, ...], oob_mode.error) outside its tensor. The NKI simulator
    raises NumPy's IndexError for it, of exactly that type and with NumPy's words about the
    flattened tensor (the vendor's dma_copy examples check `type(exc) == IndexError` and the
    text), so this is a plain IndexError with that message. What a DynamicCheckFailure carries is
    kept: the same attributes (.kind, .instruction, .file, .line, .loop_indices, .params, .core,
    .detail; .message: the interpreter's paragraph), and that paragraph as a note, which
    tracebacks print. Unlike a DynamicCheckFailure it is not an AssertionError."""
    info = DynamicCheckFailure(error)
    e = IndexError("index %d is out of bounds for axis 0 with size %d" % (flat, size))
    for name in ("kind", "instruction", "file", "line", "loop_indices", "params", "core",
                 "detail"):
        setattr(e, name, getattr(info, name))
    e.message = str(info)
    e.dynamic_check = True  # is_dynamic_check() and the runner's CHECK
    if hasattr(e, "add_note"):  # Python 3.11+
        e.add_note("ncverify: " + str(info))
    return e


def ncverify_binary():
    """$NCVERIFY, else the build tree's binary of the checkout this module is in, else `ncverify`
    on PATH."""
    env = os.environ.get("NCVERIFY")
    if env:
        return env
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__)))))
    built = os.path.join(root, "build", "default", "tools", "ncverify")
    if os.path.isfile(built) and os.access(built, os.X_OK):
        return built
    found = shutil.which("ncverify")
    if found:
        return found
    raise SimulationError("cannot find the ncverify binary: set NCVERIFY to its path (it is "
                          "build/default/tools/ncverify after a build)")


def _np():
    import numpy as np

    return np


def _ml_dtypes():
    try:
        import ml_dtypes

        return ml_dtypes
    except ImportError:
        return None


def array_dtype(arr, name):
    """The .nkir dtype of a NumPy array argument."""
    key = arr.dtype.name
    if key in _NOT_MODELLED:
        raise KernelNotTraced("argument %s: NumPy dtype %s is an NKI tensor dtype the model does "
                              "not compute (%s)" % (name, key, _NOT_MODELLED[key]))
    if key not in _FROM_NUMPY:
        raise SimulationError("argument %s: NumPy dtype %s is not an NKI tensor dtype (float32, "
                              "float16, bfloat16, float8, int32, uint8/16/32); convert it with "
                              ".astype(np.float32)" % (name, key))
    return _FROM_NUMPY[key]


def _to_wire(arr, dtype):
    np = _np()
    if dtype in ("bf16", "fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2"):
        return np.ascontiguousarray(arr).view(_WIRE[dtype])
    return np.ascontiguousarray(arr, dtype=_WIRE[dtype])


def from_wire(bits, dtype):
    """An output as the NKI simulator returns it: bf16/fp8 as ml_dtypes arrays when ml_dtypes is
    installed (the simulator's precise mode stores them so), else as float32 arrays holding the
    exact bf16/fp8 values (every one is a float32 value)."""
    np = _np()
    if dtype not in ("bf16", "fp8_e4m3", "fp8_e4m3fn", "fp8_e5m2"):
        return bits.astype(_WIRE[dtype].replace("<", "").replace("|", ""), copy=False)
    ml = _ml_dtypes()
    if ml is not None:
        names = {"bf16": "bfloat16", "fp8_e4m3": "float8_e4m3", "fp8_e4m3fn": "float8_e4m3fn",
                 "fp8_e5m2": "float8_e5m2"}
        if hasattr(ml, names[dtype]):
            return bits.view(getattr(ml, names[dtype]))
    if dtype == "bf16":
        return (bits.astype(np.uint32) << 16).view(np.float32)
    return _decode_fp8(bits, dtype)


def _decode_fp8(bits, dtype):
    """fp8 bit patterns to float32 (model/numerics: e4m3 legacy IEEE-like with bias 7, e4m3fn
    without Inf and a single NaN, e5m2 IEEE-like with bias 15)."""
    np = _np()
    exp_bits, man_bits = (5, 2) if dtype == "fp8_e5m2" else (4, 3)
    bias = (1 << (exp_bits - 1)) - 1
    table = np.empty(256, dtype=np.float32)
    for b in range(256):
        sign = -1.0 if b & 0x80 else 1.0
        e = (b >> man_bits) & ((1 << exp_bits) - 1)
        m = b & ((1 << man_bits) - 1)
        if e == (1 << exp_bits) - 1 and dtype != "fp8_e4m3fn":
            v = float("inf") if m == 0 else float("nan")
        elif dtype == "fp8_e4m3fn" and e == 15 and m == 7:
            v = float("nan")
        elif e == 0:
            v = m / (1 << man_bits) * 2.0 ** (1 - bias)
        else:
            v = (1 + m / (1 << man_bits)) * 2.0 ** (e - bias)
        table[b] = sign * v
    return table[bits]


def _grid_of(grid):
    if grid is None:
        return None
    axes = grid if isinstance(grid, (tuple, list)) else (grid,)
    out = []
    for g in axes:
        size = getattr(g, "size", g)  # nl.nc(2) and spmd_dim(...) carry their size
        if not isinstance(size, int) or size < 1:
            raise SimulationError("launch grid %r: each axis is a positive integer" % (grid,))
        out.append(Lin.of(size))
    return out


def trace_for_arrays(func, args, kwargs, grid=None, generation=None):
    """Traces `func` with NumPy arrays at their concrete shapes and dtypes (every other argument
    is passed as it is). Returns (.nkir text, the kernel's result (Tiles), {HBM tensor name:
    (the argument's array, dtype)} for the array arguments)."""
    path = inspect.getsourcefile(func) or func.__code__.co_filename
    sig = inspect.signature(func)
    try:
        sig.bind(*args, **kwargs)
    except TypeError as e:
        raise SimulationError("%s: %s" % (func.__name__, e)) from None
    source_index = trace.SourceIndex()
    errors.set_kernel_file(path)
    try:
        # the whole trace, again from the start when the new dialect finds loops to unroll
        return unrolling.retrying(lambda unroll: _trace_once(
            func, path, sig, args, kwargs, grid, generation, source_index, unroll))
    except errors.NkiError as e:
        raise KernelNotTraced(e.message, e.where) from None
    finally:
        errors.set_kernel_file(None)


def _trace_once(func, path, sig, args, kwargs, grid, generation, source_index, unroll):
    from . import main

    np = _np()
    bound = sig.bind(*args, **kwargs)
    tr = trace.Tracer(func.__name__, source_index)
    tr.unroll = unroll
    tr.generation = generation
    tr.dialect = dialect.of_file(func.__code__.co_filename)
    tr.source_file = os.path.basename(path)
    tr.grid = _grid_of(grid)
    arrays = {}

    def tensor_for(name, value):
        if not isinstance(value, np.ndarray):
            return value
        if value.ndim == 0:
            raise SimulationError("argument %s is a 0-d array; a tensor has at least one dim"
                                  % name)
        dtype = array_dtype(value, name)
        t = Tensor(tr.unique(name), "hbm", dtype, [Lin.of(int(d)) for d in value.shape],
                   "input")
        tr.hbm.append(t)
        arrays[t.name] = (value, dtype)
        tile = Tile(t.full_view())
        refine.register_tile(tile)  # rewritten if a view splits its dims (new API)
        return tile

    for name, value in list(bound.arguments.items()):
        kind = sig.parameters[name].kind
        if kind == inspect.Parameter.VAR_POSITIONAL:
            bound.arguments[name] = tuple(tensor_for("%s_%d" % (name, k), v)
                                          for k, v in enumerate(value))
        elif kind == inspect.Parameter.VAR_KEYWORD:
            bound.arguments[name] = {k: tensor_for(k, v) for k, v in value.items()}
        else:
            bound.arguments[name] = tensor_for(name, value)
    header = ["traced by ncverify's simulator from %s:%s" % (os.path.basename(path),
                                                            func.__name__)]
    result, text = main.trace_kernel(tr, func, path, list(bound.args), dict(bound.kwargs),
                                     header)
    if _carry_initial_values(tr, arrays):
        text = tr.text(header)
    return text, result, arrays, tr


def _carry_initial_values(tr, arrays):
    """An argument the kernel both reads and writes (an in-place update) is an output of the
    program, and the model's outputs start uninitialized (its inputs are read-only): such an
    argument gets an input twin holding the array, copied into the output by one DMA before the
    kernel's first instruction, so the kernel reads the values it was given. (An argument the
    kernel only writes needs none; the elements it leaves unwritten come back as the
    interpreter's poison, NaN, not as the array's previous values.) Returns whether any was
    added."""
    from .program import Instr

    added = False
    for t in list(tr.hbm):
        if t.name in arrays and t.role == "output" and t.read_elsewhere:
            src = Tensor(tr.unique(t.name + "_initial"), "hbm", t.dtype, t.shape, "input")
            tr.hbm.append(src)
            tr.root.insert(0, Instr("dma_copy", [[None, t.storage_view()],
                                                 [None, src.storage_view()]], line=0))
            arrays[src.name] = arrays[t.name]
            added = True
    return added


def simulate(func, args, kwargs, grid=None, platform_target=None):
    """Runs `func` on the arrays (see the module doc) on the generation `platform_target` names
    (trn1 when None); returns what the kernel returns, with NumPy arrays in place of its HBM
    tensors."""
    np = _np()
    from .main import generation_of

    gen = "trn1" if platform_target is None else generation_of(platform_target)
    if gen is None:
        raise SimulationError("platform_target=%r: the model has trn1 (and inf2), trn2 and trn3" %
                              (platform_target,))
    text, result, arrays, tr = trace_for_arrays(func, args, kwargs, grid, gen)
    work = tempfile.mkdtemp(prefix="ncverify-sim-")
    try:
        program = os.path.join(work, "kernel.nkir")
        with open(program, "w") as f:
            f.write(text)
        ins, outs = os.path.join(work, "in"), os.path.join(work, "out")
        os.mkdir(ins)
        storage = {t.name: _sizes(tr, t.shape) for t in tr.hbm if t.name in arrays}
        for name, (arr, dtype) in arrays.items():
            # a tensor whose dims a view split (newapi/refine.py): the same bytes, row-major
            np.save(os.path.join(ins, name + ".npy"),
                    _to_wire(arr.reshape(storage.get(name) or arr.shape), dtype))
        cmd = [ncverify_binary(), "run", program, "--gen", gen, "--inputs-from", ins,
               "--outputs-to", outs, "--json", "--allow-unwritten-outputs"]
        done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        if done.returncode not in (0, 1):
            raise SimulationError("ncverify run failed (exit %d): %s" %
                                  (done.returncode, done.stderr.decode(errors="replace").strip()))
        report = json.loads(done.stdout.decode())
        if report.get("error"):
            raise _failure(report["error"])
        for name, count in sorted((report.get("unwritten_outputs") or {}).items()):
            warnings.warn(UnwrittenOutput(name, count), stacklevel=3)
        if report.get("spill"):
            warnings.warn(CapacitySpill(report["spill"].get("detail", "")), stacklevel=3)
        for note in ("unwritten_read", "undefined_activation"):
            if report.get(note):
                warnings.warn(UndefinedValuesUnused(report[note].get("message", "")), stacklevel=3)
        values = {}
        for t in tr.hbm:
            if t.role != "output":
                continue
            bits = np.load(os.path.join(outs, t.name + ".npy"))
            shape = t.__dict__.get("interface_shape")
            if shape is not None:  # the kernel's own shape of a tensor declared split
                bits = bits.reshape(_sizes(tr, shape))
            values[t.name] = from_wire(bits, t.dtype)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, (arr, dtype) in arrays.items():
        if name in values:  # an input the kernel wrote: updated in place
            arr[...] = values[name].astype(arr.dtype, copy=False) if arr.dtype != \
                values[name].dtype else values[name]
    return _returned(result, values, arrays, tr)


def _sizes(tr, shape):
    """The sizes of a traced shape as ints (None when one is not known)."""
    vals = [tr.evaluate(Lin.of(d)) for d in shape]
    return tuple(v.const for v in vals) if all(v.is_const() for v in vals) else None


def _returned(result, values, arrays, tr):
    if isinstance(result, Tile):
        name = tensor_of(result).name
        value = arrays[name][0] if name in arrays else values[name]
        if "_base" in result.__dict__:  # a view of today's API (`return out.reshape(...)`)
            return _as_view_shape(result, value, tr, name)
        return value
    if isinstance(result, (tuple, list)):
        return type(result)(_returned(r, values, arrays, tr) for r in result)
    return result


def _as_view_shape(view, value, tr, name):
    """The returned tensor in the shape of the view the kernel returned: a reshape of all of it
    (the same elements in row-major order); a view of part of it is not one array the simulator
    can hand back."""
    shape = _sizes(tr, [getattr(s, "lin", s) for s in view.shape])
    count = 1
    for n in shape or ():
        count *= n
    if shape is None or count != value.size:
        raise SimulationError("the kernel returns a view of '%s' with shape %s, not all of its "
                              "%d elements: return the tensor (or a reshape of all of it)" %
                              (name, tuple(view.shape), value.size))
    return value.reshape(shape)

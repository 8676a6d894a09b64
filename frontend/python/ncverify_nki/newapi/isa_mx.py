"""The MX (microscaling) calls of `nki.isa`, NeuronCore-v4 only: quantize_mx (Vector engine) and
nc_matmul_mx (Tensor engine), one IR instruction each (model/semantics/mx.cpp). Sources: the
docstrings of aws-neuron-sdk nki/api/nki/isa/__init__.py (pages
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.isa.quantize_mx.html
and .../nki.isa.nc_matmul_mx.html) and the MX deep dive nki/deep-dives/mxfp-matmul.rst:
- a scaling group is 8 partitions x 4 values (one packed x4 element), one scale byte per group;
- the scales of data on P > 32 partitions sit in the first 4 rows of the data's 32-partition
  quadrant, so a scale tile spans P rows ([P // 8, F] when P <= 32);
- quantize_mx takes bf16/fp16 in SBUF, writes fp8 x4 (no fp4) and uint8 scales, and its scale is
  2^(floor(log2 max|v|) - (Emax - 1)) (2^-127 for an all-zero group);
- nc_matmul_mx multiplies packed stationary [K, M] and moving [K, N] tiles (fp8/fp4 x4) with
  their scales into fp32 or bf16 PSUM; K a multiple of 32 up to 128, M even up to 128, N up to
  4096 (fp32) / 8192 (bf16).
Scales are uint8 bytes (E8M0 values 2^(b - 127), 0xFF NaN); float8_e8m0fnu tiles are refused
(language.py) because no conversion of that dtype is documented."""

import numpy as np

from .. import errors, trace
from ..ops import _free_size
from ..signatures import refuse
from ..signatures import api
from ..tiles import as_view
from ..expr import Lin, SymBool
from .constants import current_version, nc_version
from .isa import _dst, _name_arg
from .tensor_engine import _earlier_regions, _remember_region

_QMX = "nisa.quantize_mx"
_MMX = "nisa.nc_matmul_mx"
_PACKED = ("fp8_e4m3fn_x4", "fp8_e5m2_x4", "fp4_e2m1fn_x4")


def _gen4(call):
    if current_version() < nc_version.gen4:
        raise errors.NkiError("%s exists on NeuronCore-v4 and newer only (the docstring: "
                              "\"Available only on NeuronCore-v4 and newer\"); trace the kernel "
                              "with --gen trn3" % call)


def _const(lin):
    v = trace.current().evaluate(Lin.of(lin))
    return v.const if v.is_const() else None


def _rows_free(view):
    return _const(view.logical_lins()[0]), _const(_free_size(view))


def _sbuf(call, view, arg):
    if view.tensor.mem != "sbuf":
        raise errors.NkiError("%s: %s is in %s; the docstring asks for SBUF" %
                              (call, arg, view.tensor.mem.upper()))


def _mx_rows(call, rows, arg):
    if rows is not None and (rows % 32 or not 0 < rows <= 128):
        raise errors.NkiError("%s: %s spans %d partitions; the docstring asks for a multiple of "
                              "32, at most 128 (an MX group is 8 partitions of one 32-partition "
                              "quadrant)" % (call, arg, rows))


def _scale(call, scale, arg, data_rows, data_free):
    """The scale tile: uint8 in SBUF with a column per packed data element and the rows the
    quadrant layout needs (rows 32q .. 32q + 3 of each quadrant q the data spans)."""
    v = as_view(scale, arg)
    _sbuf(call, v, arg)
    if v.tensor.dtype != "uint8":
        raise errors.NkiError("%s: %s is %s; the model takes MX scales as uint8 E8M0 bytes" %
                              (call, arg, v.tensor.dtype))
    rows, free = _rows_free(v)
    if data_rows is not None and rows is not None:
        need = (data_rows - 1) // 32 * 32 + ((data_rows - 1) // 8) % 4 + 1
        if rows < need:
            raise errors.NkiError("%s: %s has %d rows; data on %d partitions keeps its scales in "
                                  "the first 4 rows of each 32-partition quadrant it spans, which "
                                  "needs %d rows (the MX deep dive, \"Scale Tensor\": a [P, F] "
                                  "scale tile when P > 32)" % (call, arg, rows, data_rows, need))
    if data_free is not None and free is not None and free != data_free:
        raise errors.NkiError("%s: %s has %d elements per partition; one scale per packed data "
                              "element needs %d" % (call, arg, free, data_free))
    return v


@api("nisa.quantize_mx")
def quantize_mx(dst, src, dst_scale, name=None):
    """dst [P, F] (fp8 x4) and dst_scale = the MX quantisation of src [P, 4F] (bf16/fp16)."""
    _name_arg(_QMX, name)
    _gen4(_QMX)
    d = _dst(_QMX, dst, ("sbuf",))
    s = as_view(src, "src")
    _sbuf(_QMX, s, "src")
    if s.tensor.dtype not in ("bf16", "fp16"):
        raise errors.NkiError("%s: src is %s; the docstring asks for float16 or bfloat16" %
                              (_QMX, s.tensor.dtype))
    if d.tensor.dtype not in ("fp8_e4m3fn_x4", "fp8_e5m2_x4"):
        raise errors.NkiError("%s: dst is %s; quantize_mx writes float8_e4m3fn_x4 or "
                              "float8_e5m2_x4 (\"Quantize-MX does not support an FP4 output\", the "
                              "MX deep dive)" % (_QMX, d.tensor.dtype))
    p, f = _rows_free(s)
    _mx_rows(_QMX, p, "src")
    if f is not None and f % 4:
        raise errors.NkiError("%s: src has %d elements per partition; the docstring asks for a "
                              "multiple of 4 (four values pack into one x4 element)" % (_QMX, f))
    dp, df = _rows_free(d)
    if None not in (p, f, dp, df) and (dp != p or df * 4 != f):
        raise errors.NkiError("%s: dst is %s; src %s packs into [%d, %d]" %
                              (_QMX, tuple(d.shape), tuple(s.shape), p, f // 4))
    sc = _scale(_QMX, dst_scale, "dst_scale", p, None if f is None else f // 4)
    trace.current().instr("quantize_mx", [(None, d), (None, s), ("dst_scale", sc)])


def _pair(v, arg):
    if v is None:
        return None
    if not isinstance(v, (tuple, list)) or len(v) != 2:
        raise errors.NkiError("%s: %s= takes a (row, column) pair, not %r" % (_MMX, arg, v))
    out = []
    for x in v:
        try:
            out.append(_const(Lin.of(x)))
        except TypeError:
            raise errors.NkiError("%s: %s= holds integers or affine expressions, not %r" %
                                  (_MMX, arg, v)) from None
    return out


def _check_tiling(tile_position, tile_size, rows):
    """Row tiling only (the docstring, "Tiling Mode"): tile_size (row_size, 128) with row_size
    128, 64 or 32; tile_position (start_row, 0), start_row a multiple of row_size inside the
    array; the stationary partitions fit row_size. The product is the same in every tile."""
    pos, size = _pair(tile_position, "tile_position"), _pair(tile_size, "tile_size")
    if pos is None and size is None:
        return
    if pos is None or size is None:
        raise errors.NkiError("%s: tile_position and tile_size must both be set to enable "
                              "tiling mode (only %s is)" %
                              (_MMX, "tile_position" if pos is not None else "tile_size"))
    if None in pos or None in size:
        refuse(_MMX, "tile_position", tile_position, "the tile values depend on a loop variable "
               "or an open shape; the model checks them when they are known")
    if size[0] not in (128, 64, 32) or size[1] != 128:
        raise errors.NkiError("%s: tile_size %r: row_size is 128, 64 or 32 and column_size "
                              "128 (row tiling only)" % (_MMX, tuple(size)))
    if pos[1] != 0 or pos[0] % size[0] or not 0 <= pos[0] <= 128 - size[0]:
        raise errors.NkiError("%s: tile_position %r: start_column is 0 and start_row a multiple "
                              "of row_size %d inside the 128-row array" %
                              (_MMX, tuple(pos), size[0]))
    if rows is not None and rows > size[0]:
        raise errors.NkiError("%s: the stationary tile's %d partitions exceed row_size %d" %
                              (_MMX, rows, size[0]))


def _accumulate(accumulate, d):
    """The flag the instruction records. True adds to dst (the interpreter reports a read of a
    location nothing wrote); False overwrites; None adds where an earlier matmul of the trace
    wrote dst's region and overwrites where none did (the docstring's auto-detection). Inside a
    loop the earlier iterations' writes are not known at trace time: None is refused there."""
    if isinstance(accumulate, (bool, np.bool_)):
        return bool(accumulate)
    if isinstance(accumulate, SymBool):
        try:
            return bool(accumulate)
        except errors.NkiError as e:
            raise errors.NkiError("%s: accumulate=%s: %s" % (_MMX, accumulate.text(), e.message))
    if accumulate is not None:
        raise errors.NkiError("%s: accumulate= takes None, True or False, not %r" %
                              (_MMX, accumulate))
    if trace.current().loops:
        refuse(_MMX, "accumulate", None, "inside a loop whether a PSUM location was written by "
               "an earlier iteration is not known when the kernel is traced; pass "
               "accumulate=False for the first product and True after (or a condition such as "
               "k > 0)")
    return _earlier_regions(d) == "inside"


@api("nisa.nc_matmul_mx")
def nc_matmul_mx(dst, stationary, moving, stationary_scale, moving_scale, tile_position=None,
                 tile_size=None, accumulate=None, name=None):
    """dst [M, N] (PSUM, fp32 or bf16) (+)= the MX product of stationary [K, M] and moving
    [K, N] (x4 packed) with their scales, contracting over K partitions x 4 packed values."""
    _name_arg(_MMX, name)
    _gen4(_MMX)
    d = _dst(_MMX, dst, ("psum",))
    if d.tensor.dtype not in ("fp32", "bf16"):
        raise errors.NkiError("%s: dst is %s; the docstring allows float32 or bfloat16" %
                              (_MMX, d.tensor.dtype))
    s, m = as_view(stationary, "stationary"), as_view(moving, "moving")
    for arg, v in (("stationary", s), ("moving", m)):
        _sbuf(_MMX, v, arg)
        if v.tensor.dtype not in _PACKED:
            raise errors.NkiError("%s: %s is %s; the docstring asks for float8_e5m2_x4, "
                                  "float8_e4m3fn_x4 or float4_e2m1fn_x4" %
                                  (_MMX, arg, v.tensor.dtype))
    k, mm = _rows_free(s)
    km, n = _rows_free(m)
    if None not in (k, km) and k != km:
        raise errors.NkiError("%s: stationary has %d partitions, moving %d: the contraction is "
                              "over partitions" % (_MMX, k, km))
    _mx_rows(_MMX, k, "stationary")
    if mm is not None and (mm % 2 or mm > 128):
        raise errors.NkiError("%s: stationary has %d elements per partition; the docstring asks "
                              "for an even number, at most 128" % (_MMX, mm))
    limit = 8192 if d.tensor.dtype == "bf16" else 4096
    if n is not None and n > limit:
        raise errors.NkiError("%s: moving has %d elements per partition; at most %d for a %s "
                              "dst (8 PSUM banks)" % (_MMX, n, limit, d.tensor.dtype))
    dr, df = _rows_free(d)
    if None not in (mm, n, dr, df) and (dr, df) != (mm, n):
        raise errors.NkiError("%s: dst is %s; the product is [%d, %d]" %
                              (_MMX, tuple(d.shape), mm, n))
    ss = _scale(_MMX, stationary_scale, "stationary_scale", k, mm)
    ms = _scale(_MMX, moving_scale, "moving_scale", k, n)
    _check_tiling(tile_position, tile_size, k)
    flag = _accumulate(accumulate, d)
    trace.current().instr("matmul_mx", [(None, d), ("stationary", s), ("moving", m),
                                        ("stationary_scale", ss), ("moving_scale", ms),
                                        ("accumulate", flag)])
    _remember_region(d)

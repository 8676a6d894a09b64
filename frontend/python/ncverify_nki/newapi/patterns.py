"""The pattern calls of `nki.isa` (NKI 0.2-0.6) on the GpSimd engine: iota and affine_select. Both
evaluate `offset + p * channel_multiplier + sum_k step_k * idx_k` over an access pattern
`[[step_w, num_w], ..., [step_x, num_x]]` (up to 4 pairs) that walks each partition's elements of
dst in order; the product of the nums is dst's element count per partition. Sources: the 0.6
reference's docstrings (aws-neuron-sdk nki/api/nki/isa/__init__.py at 81ce03ae;
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.isa.iota.html and
.../nki.isa.affine_select.html) and the NKI 0.3.0 release notes (iota's offset defaults to 0;
affine_select's offset became a keyword after cmp_op)."""

from fractions import Fraction

from .. import errors, ops, trace
from .. import language as legacy_nl
from ..expr import Lin
from ..program import AxisSteps, Enum
from ..signatures import api
from ..tiles import as_view
from .isa import _dst, _name_arg, _same_elements

# nl comparison operators (ops.alu_name) to the IR's comparisons of `value cmp 0`.
_CMP = {"is_equal": "eq", "not_equal": "ne", "is_gt": "gt", "is_ge": "ge", "is_lt": "lt",
        "is_le": "le"}


def _int(call, what, x):
    """A compile-time integer (a Python int or a shape the kernel fixed)."""
    try:
        lin = trace.current().evaluate(Lin.of(x))
    except TypeError:
        lin = None
    if isinstance(x, bool) or lin is None or not lin.is_const():
        raise errors.NkiError("%s: %s must be a compile-time integer, not %r" % (call, what, x))
    return lin.const


def _pattern(call, pattern):
    """[(step, num)]: steps compile-time integers, nums positive sizes (symbolic allowed)."""
    if not isinstance(pattern, (list, tuple)) or not 1 <= len(pattern) <= 4 or any(
            not isinstance(e, (list, tuple)) or len(e) != 2 for e in pattern):
        raise errors.NkiError("%s: pattern= takes 1 to 4 [step, num] pairs, not %r" %
                              (call, pattern))
    out = []
    for step, num in pattern:
        s = _int(call, "a pattern step", step)
        try:
            n = trace.current().evaluate(Lin.of(num))
        except TypeError:
            raise errors.NkiError("%s: a pattern num must be a size, not %r" % (call, num)) \
                from None
        if n.is_const() and n.const < 1:
            raise errors.NkiError("%s: a pattern num must be positive, not %d" % (call, n.const))
        out.append((s, n))
    return out


def _steps(call, pattern, d):
    """The step of each free axis of dst's view, so that the IR's `sum_k steps[k] * i_k` over
    dst's axes equals the pattern's value at the same element (dst's elements per partition in
    row-major order). Where the pattern's dims and dst's free dims are the same sizes the steps
    carry over; with known sizes a pattern dim may span several of dst's dims or the reverse,
    as long as the value stays affine in each of dst's indices (a contiguous merge)."""
    r = trace.current().evaluate
    dims = [r(n) for n in d.logical_lins()[1:]]
    pat = [(s, n) for s, n in pattern if n != Lin.of(1)]
    axes = [k for k, n in enumerate(dims) if n != Lin.of(1)]
    total_p, total_d = Lin.of(1), Lin.of(1)
    for _, n in pat:
        total_p = total_p.mul(n)
    for k in axes:
        total_d = total_d.mul(dims[k])
    total_p, total_d = r(total_p), r(total_d)
    diff = r(total_p.sub(total_d))
    if diff.is_const() and diff.const != 0:
        raise errors.NkiError("%s: the pattern has %s elements, dst %s per partition; they must "
                              "match" % (call, total_p.text(), total_d.text()))
    coefs = {}
    if len(pat) == len(axes) and all(r(n.sub(dims[k])) == Lin.of(0)
                                     for (_, n), k in zip(pat, axes)):
        for (s, _), k in zip(pat, axes):
            coefs[k + 1] = s
        return AxisSteps(coefs, len(d.order))
    if not all(n.is_const() for _, n in pat) or not all(dims[k].is_const() for k in axes):
        raise errors.NkiError("%s: the pattern's dims %s do not match dst's free dims %s, and "
                              "their sizes are not all known to match them up" %
                              (call, [n.text() for _, n in pat], [n.text() for n in dims]))
    # Strides of each dim in the flattened per-partition index: pattern dim j covers
    # [lo_j, lo_j * num_j), dst axis k covers [lo'_k, lo'_k * size_k).
    pnums = [n.const for _, n in pat]
    dsizes = [dims[k].const for k in axes]
    plo, dlo = _strides(pnums), _strides(dsizes)
    bounds = sorted(set(plo + dlo + [total_p.const]))
    if any(b2 % b1 for b1, b2 in zip(bounds, bounds[1:])):
        raise errors.NkiError("%s: the pattern's dims %s cannot be matched to dst's free dims %s "
                              "(no common refinement)" % (call, pnums, dsizes))
    for m, k in enumerate(axes):
        ratio = None
        for b in bounds[:-1]:
            if not dlo[m] <= b < dlo[m] * dsizes[m]:
                continue
            j = next(j for j in range(len(pnums)) if plo[j] <= b < plo[j] * pnums[j])
            here = Fraction(pat[j][0] * dlo[m], plo[j])
            if ratio is not None and here != ratio or here.denominator != 1:
                raise errors.NkiError("%s: the pattern %s is not affine in dst's free index %d "
                                      "(of size %d): the model's iota/affine_select take one "
                                      "step per dst dim" % (call, [[s, n] for s, n in zip(
                                          [p[0] for p in pat], pnums)], k + 1, dsizes[m]))
            ratio = here
        coefs[k + 1] = int(ratio)
    return AxisSteps(coefs, len(d.order))


def _strides(sizes):
    out, acc = [], 1
    for n in reversed(sizes):
        out.append(acc)
        acc *= n
    return list(reversed(out))


def _check_partitions(call, d):
    p = trace.current().evaluate(d.logical_lins()[0])
    if p.is_const() and p.const > 128:
        raise errors.NkiError("%s: dst has %d partitions; at most 128" % (call, p.const))


def _offset(call, offset):
    if isinstance(offset, bool):
        raise errors.NkiError("%s: offset= takes an integer, not %r" % (call, offset))
    try:
        return Lin.of(offset)
    except TypeError:
        raise errors.NkiError("%s: offset= takes an integer (or an affine expression of loop "
                              "variables and shapes), not %r" % (call, offset)) from None


@api("nisa.iota")
def iota(dst, pattern, offset=0, channel_multiplier=0, name=None):
    """dst[p, ...] = offset + p * channel_multiplier + the pattern's value at each element,
    computed in int32 and cast to dst.dtype; dst in SBUF."""
    call = "nisa.iota"
    _name_arg(call, name)
    d = _dst(call, dst, ("sbuf",))
    _check_partitions(call, d)
    cm = _int(call, "channel_multiplier", channel_multiplier)
    d, steps = _steps_splitting_dst(call, _pattern(call, pattern), dst, d)
    trace.current().instr("iota", [(None, d), ("offset", _offset(call, offset)),
                                   ("channel_multiplier", cm), ("steps", steps)])


def _steps_splitting_dst(call, pat, dst, d):
    """(view, steps) for iota: _steps on dst's view; where the pattern is not affine in dst's one
    free dim (nki-library's cascaded_max: [[0, 3], [132, 24]] into a [1, 72] tile, a value that
    restarts every 24 elements), dst's view split into the pattern's dims (the same elements in
    the same order, refine.py: one IR access per dim), whose steps are then the pattern's."""
    try:
        return d, _steps(call, pat, d)
    except errors.NkiError as first:
        r = trace.current().evaluate
        dims = [r(n) for n in d.logical_lins()[1:]]
        free = [k for k, n in enumerate(dims) if n != Lin.of(1)]
        sizes = [n for _, n in pat if n != Lin.of(1)]
        if len(free) != 1 or len(sizes) < 2 or not all(n.is_const() for n in sizes) or \
                not dims[free[0]].is_const():
            raise first
        total = 1
        for n in sizes:
            total *= n.const
        if total != dims[free[0]].const:
            raise first
        from .views import NkiTensor

        try:
            split = NkiTensor.of(dst).reshape_dim(free[0] + 1, [n.const for n in sizes])
            v = as_view(split, "dst")
            return v, _steps(call, pat, v)
        except errors.NkiError:
            raise first from None


@api("nisa.affine_select")
def affine_select(dst, pattern, channel_multiplier, on_true_tile, on_false_value,
                  cmp_op=legacy_nl.equal, offset=0, name=None):
    """dst = on_true_tile where cmp_op(value, 0), else on_false_value (an fp32 scalar); value is
    iota's; dst and on_true_tile in SBUF with the same partitions and elements per partition; a
    selected element whose dtype differs goes through fp32. cmp_op defaults to nl.equal (the
    0.3.0+ signature: `affine_select(dst, pattern, channel_multiplier, on_true_tile,
    on_false_value, cmp_op=equal, offset=0)`)."""
    call = "nisa.affine_select"
    _name_arg(call, name)
    d = _dst(call, dst, ("sbuf",))
    _check_partitions(call, d)
    if ops.is_scalar(on_true_tile) and not ops.is_scalar(on_false_value):
        raise errors.NkiError("%s: on_true_tile is a number and on_false_value a tile: this is "
                              "the NKI 0.2.0 order (dst, pattern, offset, channel_multiplier, "
                              "...); since NKI 0.3.0 offset is a keyword after cmp_op" % call)
    v = as_view(on_true_tile, "on_true_tile")
    if v.tensor.mem != "sbuf":
        raise errors.NkiError("%s: on_true_tile is in %s; it must be in SBUF" %
                              (call, v.tensor.mem.upper()))
    _same_elements(call, d, v, "on_true_tile")
    if not ops.is_scalar(on_false_value):
        raise errors.NkiError("%s: on_false_value must be a number (fp32), not %r" %
                              (call, on_false_value))
    cmp = ops.alu_name(cmp_op, "cmp_op")
    if cmp not in _CMP:
        raise errors.NkiError("%s: cmp_op must be a comparison (nl.equal, not_equal, greater, "
                              "greater_equal, less, less_equal), not %s" % (call, cmp))
    cm = _int(call, "channel_multiplier", channel_multiplier)
    steps = _steps(call, _pattern(call, pattern), d)
    trace.current().instr("affine_select", [
        (None, d), ("on_true", v), ("offset", _offset(call, offset)),
        ("channel_multiplier", cm), ("steps", steps), ("cmp", Enum(_CMP[cmp])),
        ("on_false", float(on_false_value))])

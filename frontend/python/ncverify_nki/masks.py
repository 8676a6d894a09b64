"""`mask=` on an NKI call: the instruction covers only the grid points where the mask holds.
The model has no per-element predicate on instructions, so a mask becomes a smaller access:
each condition must bound one tile axis (`i + b < n`, `i + b >= n`, with coefficient +-1), and
shrinks or shifts that axis. A mask that is one condition on loop variables, the program id or
params (no index grid: `mask=q_tile < k_tile`) holds or fails for the whole tile; it is decided,
splitting the enclosing loop where iterations differ (splitting.py), and where it fails the
instruction is not recorded (it writes nothing). Anything else is refused."""

from . import errors
from .expr import Lin, Predicate, SymBool
from .program import View


def apply_mask(view, mask):
    view.refuse_indirect("mask=")
    if isinstance(mask, (SymBool, bool)):
        return _whole_tile(view, mask)
    if not isinstance(mask, Predicate):
        raise errors.NkiError("mask= must be an affine comparison of index grids")
    dims = [list(d) for d in view.dims]
    for expr, op in mask.conds:
        axes = [a for a, c in expr.coefs.items() if c]
        if len(axes) != 1 or abs(expr.coefs[axes[0]]) != 1:
            raise errors.NkiError("a mask condition must bound one grid axis with coefficient "
                                  "1 (e.g. i_p + base < n); this one does not")
        a = axes[0] + len(view.order) - len(expr.shape)
        if a < 0 or a >= len(view.order):
            continue
        if expr.coefs[axes[0]] < 0:
            expr = -expr
            op = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}[op]
        s = view.order[a]
        start, size, step = dims[s]
        if size == Lin.of(1):
            continue  # a broadcast operand: the axis has one element
        bound = expr.base.neg()  # i OP bound
        if op in ("<", "<="):
            n = bound.add(Lin.of(1)) if op == "<=" else bound
            dims[s] = [start, size.minmax("min", n), step]
        elif op in (">", ">="):
            lo = bound.add(Lin.of(1)) if op == ">" else bound
            dims[s] = [start.add(lo.scale(step)), size.sub(lo), step]
        else:
            raise errors.NkiError("a mask condition with %s is not a bound" % op)
    from . import trace

    trace.current().last_mask = mask  # trace.Tracer.instr keeps it on the call's fresh result
    return View(view.tensor, dims, list(view.order))


def _whole_tile(view, mask):
    """A mask without index grids: the view as it is when it holds, else a copy marked so that
    the instruction reading it is left out (trace.Tracer.instr)."""
    if bool(mask):
        return view
    out = View(view.tensor, [list(d) for d in view.dims], list(view.order))
    out.masked_out = True
    return out

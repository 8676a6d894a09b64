"""Per-program tracing: a kernel whose Python needs the value of `nl.program_id` (issue 45;
frontend/README.md "Kernels that need the program id's value").

The tracer keeps the program id symbolic (`program_id`, the implicit param of the IR: one
program, run once per instance of the launch grid, each instance with its own SBUF and PSUM and
all of them sharing HBM). A Python decision on it (an `if` outside every loop, `int()`, a
`range()` bound that must be unrolled, a list index, a size) has no single answer, so such a
kernel is traced once per program id p, with `nl.program_id` the Python int p, and each trace's
statements go into the one program under a guard loop that runs them on instance p only:

    for only_program<p> in sequential_range(max(program_id, p), min(program_id, p) + 1) { ... }

one iteration when program_id == p and none otherwise (the IR needed nothing new: loop bounds
are expressions with min and max, as loop splitting's guards already are).

- On-chip tensors are made per pass: each instance has its own SBUF and PSUM, and the guards
  are sibling scopes, so their buffers never live together.
- `nl.shared_hbm` tensors (above all the kernel's outputs) are one tensor for every instance:
  pass p's k-th shared_hbm allocation is pass 0's k-th tensor, and a pass that allocates another
  count, shape or dtype, or returns other tensors, is refused (`SharedMismatch` messages).
- `nl.private_hbm` / `nl.hbm` tensors are made per pass (each instance's own scratch).
- Loop unrolling (unrolling.py `retrying`) composes: `NeedsProgramId` restarts the whole trace
  with per-program tracing on and the loops unrolled so far kept; a `NeedsUnroll` during a pass
  restarts it again with per-program tracing kept.
- Both dialects get it (a legacy kernel needing the value was refused before; nothing that
  traced changes).
- `nisa.sendrecv`: each program's call is its own statement under its guard, writing the peer's
  dst; the calls are paired in order once every pass is traced (newapi/sendrecv.py `link`), and
  the interpreter's rendezvous pairs two such statements (model/interp/README.md "SPMD").
"""

import os

from . import errors
from .expr import Lin, name_lin
from .program import Loop

PROGRAM_ID = "program_id"
# The interpreter's limit on program instances (model/ir/program.h kMaxGrid): a larger grid is
# an invalid program anyway, and tracing per program would make that many copies.
MAX_GRID = 64


class NeedsProgramId(BaseException):
    """The kernel's Python needs the program id's value: re-trace once per program. A
    BaseException so that a kernel's `except Exception` does not swallow it (the tracer also
    keeps it: `Tracer.pending_unroll`)."""

    def __init__(self, reason, where=None):
        super().__init__(reason)
        self.reason = reason
        self.where = where or errors.user_location()


def grid_size(tr):
    """The number of program instances when the launch grid is a known constant, else None."""
    if tr.grid is None:
        return None
    g = Lin.of(1)
    for axis in tr.grid:
        g = g.mul(axis)
    g = tr.evaluate(g)
    return g.const if g.is_const() else None


def request(tr, lin, what):
    """The NeedsProgramId for `what`, a Python use of `lin`, when `lin` mentions the program id
    and the kernel can be traced per program (a known grid of at most MAX_GRID programs); else
    None (the caller's own error applies)."""
    if tr is None or tr.program_value is not None:
        return None
    if PROGRAM_ID not in tr.resolve(Lin.of(lin)).names():
        return None
    g = grid_size(tr)
    if g is None or not 1 <= g <= MAX_GRID:
        return None
    where = errors.user_location()
    at = "%s:%d" % (os.path.basename(where[0]), where[1]) if where else "the kernel"
    exc = NeedsProgramId("%s: %s needs the value of %s" % (at, what, Lin.of(lin).text()), where)
    tr.pending_unroll = tr.pending_unroll or exc
    return exc


def program_id_value(tr, axis):
    """nl.program_id(axis) in pass `tr.program_value` (row-major over the grid's axes)."""
    inner = 1
    for g in tr.grid[axis + 1:]:
        inner *= tr.evaluate(g).const
    return (tr.program_value // inner) % tr.evaluate(tr.grid[axis]).const


def shared_hbm(tr, shape, dtype, make):
    """The `nl.shared_hbm` tensor of this allocation: a new one (`make()`) outside per-program
    tracing and in pass 0, pass 0's tensor of the same allocation order in the later passes."""
    if tr.program_value is None:
        return make()
    k = len(tr.pass_shared)
    if tr.program_value == 0:
        t = make()
        tr.first_shared.append(t)
    else:
        if k >= len(tr.first_shared):
            raise errors.NkiError(
                "program %d allocates more nl.shared_hbm tensors than program 0 (%d): the "
                "kernel is traced once per program id (its Python needs the value), and a "
                "shared_hbm tensor is one tensor for every program, matched by allocation order"
                % (tr.program_value, len(tr.first_shared)))
        t = tr.first_shared[k]
        mine = [tr.evaluate(Lin.of(d)) for d in shape]
        theirs = [tr.evaluate(d) for d in t.shape]
        if len(mine) != len(theirs) or any(a != b for a, b in zip(mine, theirs)) or \
                dtype != t.dtype:
            raise errors.NkiError(
                "nl.shared_hbm tensor #%d ('%s'): program %d allocates it as %s [%s], program 0 "
                "as %s [%s]; the kernel is traced once per program id (its Python needs the "
                "value), and a shared_hbm tensor is one tensor for every program, matched by "
                "allocation order" %
                (k + 1, t.name, tr.program_value, dtype, ", ".join(a.text() for a in mine),
                 t.dtype, ", ".join(b.text() for b in theirs)))
    tr.pass_shared.append(t)
    return t


def _returned_names(result):
    from .tiles import Tile, tensor_of

    results = result if isinstance(result, (tuple, list)) else [result]
    return [tensor_of(r).name if isinstance(r, Tile) else None for r in results]


def trace_passes(tr, call, where):
    """Runs `call()` (the kernel, once) for each program id under its guard; returns the last
    pass's result (every pass returns the same shared tensors)."""
    first = None
    result = None
    outer, guards = tr.stack[-1], []
    tr.sendrecvs = []
    for p in range(grid_size(tr)):
        tr.program_value = p
        tr.pass_shared = []
        pid = name_lin(PROGRAM_ID)
        guard = Loop(tr.unique("only_program%d" % p), "sequential_range",
                     pid.minmax("max", Lin.of(p)), pid.minmax("min", Lin.of(p)).add(Lin.of(1)),
                     1)
        tr.emit(guard)
        tr.stack.append(guard.body)
        result = call()
        if tr.stack[-1] is not guard.body:
            raise errors.NkiError("a traced loop was left open (break out of a loop?)")
        tr.stack.pop()
        if not guard.body:
            tr.stack[-1].remove(guard)  # this program does nothing
        else:
            guards.append(guard)
        if len(tr.pass_shared) != len(tr.first_shared):
            raise errors.NkiError(
                "program %d allocates %d nl.shared_hbm tensors, program 0 %d: the kernel is "
                "traced once per program id (its Python needs the value), and a shared_hbm "
                "tensor is one tensor for every program, matched by allocation order" %
                (p, len(tr.pass_shared), len(tr.first_shared)), where)
        names = _returned_names(result)
        if first is None:
            first = names
        elif names != first:
            raise errors.NkiError(
                "program %d returns %s, program 0 %s: the kernel is traced once per program id "
                "(its Python needs the value), and every program must return the same tensors" %
                (p, _names_text(names), _names_text(first)), where)
    if tr.sendrecvs:  # the programs' nisa.sendrecv calls write each other's dst
        from .newapi import sendrecv

        sendrecv.link(tr, outer, guards)
    return result


def _names_text(names):
    return "(%s)" % ", ".join(n if n is not None else "a non-tensor" for n in names)


def header(tr):
    """The `.nkir` header line saying the program id was fixed per program."""
    return ("traced once per program: %s; program_id was fixed to 0..%d in turn, each trace "
            "under a loop only_program<p> that runs only on instance p (nl.shared_hbm tensors "
            "are shared by allocation order; on-chip and nl.private_hbm tensors are each "
            "program's own)" % (tr.per_program_reason, grid_size(tr) - 1))

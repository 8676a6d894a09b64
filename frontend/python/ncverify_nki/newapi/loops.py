"""The new API's loops (nki.language, NKI 0.2-0.6; frontend/README.md "Loops of the new API").

`range`, `nl.affine_range`, `nl.sequential_range` and `nl.static_range` are documented aliases
of Python's range, fully unrolled when NKI specialises the kernel (the language docstrings and
the dynamic-loops deep dive, `nki/deep-dives/nki-dynamic-loops.rst`). Unrolled or not, a Python
loop has Python's semantics; the tracer keeps a `for` loop over one of them a loop of the
program (traced once with a symbolic variable) as long as that stands for every iteration, and
unrolls it otherwise (unrolling.py). `range` and `sequential_range` become sequential loops,
`affine_range` an affine one (it still promises independent iterations, which loop splitting
by residue classes relies on); `static_range` unrolls whenever its bounds are known. Iterated
anywhere but directly by a `for` statement (a comprehension, `list()`, `zip()`), each is a plain
Python range and needs known bounds.

`nl.dynamic_range` and `nl.fori_loop` are on-device loops (a hardware loop instruction; the
body is traced once and its index is a register, which Python code cannot read): with bounds
the program's params and loop variables express, they are sequential loops of the program. The
IR has no registers (model/ir/program.h: a loop's bounds are expressions of params and outer
loop variables), so bounds held in a register (`nisa.register_load`), `nl.while_loop` and
`while reg:` are refused.
"""

import dis
import sys

import numpy as np

from .. import errors, per_program, trace
from ..expr import Lin, SymInt

_GET_ITER = dis.opmap["GET_ITER"]
_FOR_ITER = dis.opmap["FOR_ITER"]
_CACHE = dis.opmap.get("CACHE", -1)
_EXTENDED_ARG = dis.opmap["EXTENDED_ARG"]


def _is_int(x):
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _bound(call, what, x):
    if _is_int(x):
        return int(x)
    if isinstance(x, SymInt):
        return x
    raise errors.NkiError(
        "%s: the %s is a %s; a loop's bounds must be integers the program's params and loop "
        "variables express (the model has no registers: a trip count held on the device is "
        "not modelled)" % (call, what, type(x).__name__))


def _step(call, step):
    if isinstance(step, SymInt) or not _is_int(step) or step <= 0:
        raise errors.NkiError("%s: the step must be a positive integer constant (got %r)" %
                              (call, step))
    return int(step)


def _directly_in_for():
    """Whether the caller of __iter__ is a `for` statement iterating this object itself (the
    frame's instruction is GET_ITER followed by FOR_ITER), not a comprehension, list() or
    zip()."""
    f = sys._getframe(2)
    return _ops(f.f_code.co_code, f.f_lasti, 2) == [_GET_ITER, _FOR_ITER]


class PythonRange:
    """range / affine_range / sequential_range / static_range of the new dialect."""

    def __init__(self, call, kind, start, stop=None, step=1, unroll_known=False):
        if stop is None:
            start, stop = 0, start
        # (through the instance dict, as program.Tensor.__init__: one per `for` iteration of
        # an enclosing unrolled loop)
        self.__dict__.update(call=call, kind=kind, start=_bound(call, "start", start),
                             stop=_bound(call, "stop", stop), step=_step(call, step),
                             unroll_known=unroll_known)

    def _known(self):
        tr = trace.current()
        s, e = tr.evaluate(Lin.of(self.start)), tr.evaluate(Lin.of(self.stop))
        return (s.const, e.const) if s.is_const() and e.is_const() else None

    def __iter__(self):
        tr = trace.current()
        direct = _directly_in_for()
        if not direct or (self.unroll_known and self._known() is not None):
            known = self._known()
            if known is None:
                for x in (self.start, self.stop):
                    exc = per_program.request(tr, Lin.of(x), "%s iterated in Python" % self.call)
                    if exc is not None:
                        raise exc
                names = [n for x in (self.start, self.stop)
                         for n in tr.resolve(Lin.of(x)).names() if n in tr.params]
                raise errors.NkiError(
                    "%s(%s, %s) iterated %s runs its values in Python, which needs them: "
                    "%s" % (self.call, Lin.of(self.start).text(), Lin.of(self.stop).text(),
                            "outside a `for` statement (a comprehension, list(), zip())"
                            if not direct else "as static_range",
                            "fix %s" % " ".join("--param %s=VALUE" % n for n in names)
                            if names else "they are only known on the device"))
            for x in (self.start, self.stop):
                tr.note_fixed(Lin.of(x), "%s unrolled" % self.call)
            return iter(range(known[0], known[1], self.step))
        where = errors.user_location()
        return tr.iterate(self.kind, self.start, self.stop, self.step, _loop_var_name(tr, where),
                          where=where)

    def __len__(self):
        known = self._known()
        if known is None:
            raise errors.NkiError("len() of %s with symbolic bounds" % self.call)
        return len(range(known[0], known[1], self.step))


def _loop_var_name(tr, where):
    import ast

    node = tr.src.statement(*where) if where else None
    if isinstance(node, ast.For) and isinstance(node.target, ast.Name):
        return node.target.id
    return "i"


_LOOP_HINTS = ("precise_schedule", "directives")  # scheduling hints, as language._LOOP_HINTS


def _hints(call, kw):
    for k in kw:
        if k not in _LOOP_HINTS:
            raise errors.NkiError("%s: unknown keyword argument '%s' (it takes start, stop, "
                                  "step)" % (call, k))


def python_range(builtin_range, args):
    """The kernel's builtin `range` in the new dialect: the range a `for` statement iterates
    directly may stay a loop of the program; anywhere else (`list(range(n))`, `reversed(...)`,
    `len(...)`) it is Python's own range, which needs known values."""
    if len(args) == 3 and all(_is_int(a) for a in args) and args[2] < 0:
        # a countdown over known values (nki-library's allocators: range(n - 1, -1, -1)) is
        # Python's own range: the program's loops count up
        return builtin_range(*args)
    if _call_feeds_for(sys._getframe(2)) and 1 <= len(args) <= 3:
        return PythonRange("range", "sequential_range", *args)
    return builtin_range(*args)


def _call_feeds_for(f):
    """Whether the call the frame `f` is making is the iterable of a `for` statement: its next
    instructions (past inline caches) are GET_ITER and FOR_ITER."""
    return _ops(f.f_code.co_code, f.f_lasti + 2, 2) == [_GET_ITER, _FOR_ITER]


def _ops(code, at, n):
    """The first `n` opcodes from byte offset `at`, past inline caches and EXTENDED_ARG
    prefixes (a long loop body's FOR_ITER has one)."""
    ops = []
    while 0 <= at < len(code) and len(ops) < n:
        if code[at] not in (_CACHE, _EXTENDED_ARG):
            ops.append(code[at])
        at += 2
    return ops


def affine_range(start, stop=None, step=1, **kw):
    _hints("nl.affine_range", kw)
    return PythonRange("nl.affine_range", "affine_range", start, stop, step)


def sequential_range(start, stop=None, step=1, **kw):
    _hints("nl.sequential_range", kw)
    return PythonRange("nl.sequential_range", "sequential_range", start, stop, step)


def static_range(start, stop=None, step=1):
    return PythonRange("nl.static_range", "sequential_range", start, stop, step,
                       unroll_known=True)


class _DeviceRange:
    def __init__(self, call, start, stop, step):
        if stop is None:
            start, stop = 0, start
        self.call = call
        self.start = _bound(call, "start", start)
        self.stop = _bound(call, "stop", stop)
        self.step = _step(call, step)

    def __iter__(self):
        tr = trace.current()
        where = errors.user_location()
        return tr.iterate("sequential_range", self.start, self.stop, self.step,
                          _loop_var_name(tr, where), where=where, dynamic=True)


def dynamic_range(start, stop=None, step=1):
    return _DeviceRange("nl.dynamic_range", start, stop, step)


def fori_loop(lower, upper, body_fun, step=1):
    """`for i in range(lower, upper, step): body_fun(i)` on the device: the body is traced
    once, `i` a register (read-only; its Python value is unknown); the body returns nothing."""
    if not callable(body_fun):
        raise errors.NkiError("nl.fori_loop: body_fun must be a function of the loop index")
    loop = _DeviceRange("nl.fori_loop", lower, upper, step)
    tr = trace.current()
    name = getattr(getattr(body_fun, "__code__", None), "co_varnames", ("i",))[:1] or ("i",)
    for i in tr.iterate("sequential_range", loop.start, loop.stop, loop.step, name[0],
                        where=errors.user_location(), dynamic=True):
        out = body_fun(i)
        if out is not None:
            raise errors.NkiError("nl.fori_loop: body_fun returns %s; the body of an "
                                  "on-device loop returns nothing" % type(out).__name__)


def while_loop(init, body_fun):
    raise errors.NkiError(
        "nl.while_loop is not modelled: its trip count depends on a register the body updates "
        "on the device, and the IR's loops have bounds fixed by the params and outer loop "
        "variables (no registers, no data-dependent loop)")


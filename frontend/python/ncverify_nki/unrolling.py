"""Loops under the new API's Python semantics (issue 45; frontend/README.md "Loops of the new API").

In the `nki` dialect every `for` loop except an on-device one (`nl.dynamic_range`,
`nl.fori_loop`) is a Python loop: its body runs once per iteration, with Python's semantics
(`count += 1` in `range(8)` leaves 8). The tracer still traces a loop's body once, with a
symbolic variable, so that the program keeps the loop and `prove` covers every shape. That is
only right when nothing the Python program can see depends on the iteration. This module finds
the cases where it does, and the trace is then run again from the start with that loop unrolled:

- the loop variable is needed as a Python int: a list/tuple/dict index (`bufs[i]`), `int(i)`,
  `range(i)`, float arithmetic, a dict key, a Python `if` no loop split can express
  (expr._value_error, trace.Tracer.truth_of);
- the body changes Python state that existed before the loop: a list, dict or set it grows or
  writes (`outs.append(t)`), an attribute of an object (`cfg.n = ...`), or a name it rebinds
  when the old value is read in the body before the new one is bound (`acc = acc + x`,
  `count += 1`: loop-carried) or the name is read after the loop (`Snapshot`).

`NeedsUnroll` names the loops (file, line of the `for`); `retrying` runs the trace again with
them in the set of loops to unroll, at most MAX_ATTEMPTS times. An unrolled loop needs known
bounds; with symbolic ones the error names the loop's line, why it was unrolled and the params
to fix.

The legacy dialect (`neuronxcc.nki`) never gets here: its loops are traced once, as NKI 0.1
did.
"""

import ast
import linecache
import math
import os
import sys

from . import errors

MAX_ATTEMPTS = 64  # traces of one kernel (each adds at least one loop to unroll)
# A loop whose bounds are constants (no param) and that runs at most this many iterations is
# unrolled at once in the new dialect: the program is the same for every shape either way, and
# it saves a re-trace for the many small Python loops of the new API's kernels (`for k in
# range(2): bufs[k]...`).
SMALL_TRIP_COUNT = 8


class NeedsUnroll(BaseException):
    """A symbolic loop whose body cannot stand for every iteration: re-trace with `keys`
    unrolled. A BaseException so that a kernel's `except Exception` does not swallow it (the
    tracer also keeps it: `Tracer.pending_unroll`)."""

    def __init__(self, keys, reason, where=None):
        super().__init__(reason)
        self.keys = dict.fromkeys(keys, reason)  # key -> why it is unrolled
        self.reason = reason
        self.where = where or errors.user_location()


def loop_key(where):
    """The identity of a source loop across traces: (absolute file, line of the `for`)."""
    return (os.path.abspath(where[0]), where[1]) if where else None


def key_text(key):
    return "%s:%d" % (os.path.basename(key[0]), key[1])


class Unrolls(dict):
    """The loops to unroll in a trace (loop key -> reason) and, when the kernel's Python needs
    the program id's value, why (`per_program`: the trace runs once per program,
    per_program.py)."""

    per_program = None

    def copy_all(self):
        out = Unrolls(self)
        out.per_program = self.per_program
        return out


def retrying(attempt):
    """Runs `attempt(unroll)` (unroll: an Unrolls, loop key -> reason) until no loop needs
    unrolling; a per_program.NeedsProgramId turns per-program tracing on for the next ones."""
    from .per_program import NeedsProgramId

    unroll = Unrolls()
    for _ in range(MAX_ATTEMPTS):
        try:
            return attempt(unroll.copy_all())
        except NeedsProgramId as e:
            if unroll.per_program is not None:
                raise errors.NkiError("internal: per-program tracing was asked for twice (%s)" %
                                      e.reason, e.where)
            unroll.per_program = e.reason
        except NeedsUnroll as e:
            fresh = {k: r for k, r in e.keys.items() if k not in unroll}
            if not fresh:
                raise errors.NkiError("internal: the loop at %s was asked to unroll twice (%s)"
                                      % (", ".join(key_text(k) for k in e.keys), e.reason),
                                      e.where)
            unroll.update(fresh)
    raise errors.NkiError("more than %d re-traces to unroll the kernel's loops (loops unrolled "
                          "so far: %s)" % (MAX_ATTEMPTS, ", ".join(key_text(k) for k in unroll)))


# ---- Python state a loop body may change
_MAX_DEPTH = 4
_OPAQUE_MODULES = ("ncverify_nki", "neuronxcc", "nki", "numpy", "ml_dtypes", "builtins", "enum",
                   "types", "typing", "functools")


def _is_plain(v):
    return v is None or isinstance(v, (bool, int, float, complex, str, bytes))


# An object's identity as an int: object.__hash__ is its address rotated (one int per live
# object, as id()), and is not audited. id() raises a `builtins.id` audit event, which the
# sandbox's hook (a Python function) sees: the fingerprints below take one per container and
# object every iteration of every loop, hundreds of thousands in a large unrolled trace.
_identity = object.__hash__


def _fingerprint(v, depth=0):
    """What of `v` a loop body could change that Python code can see: the identities in a
    container (and the containers within it), an object's attributes. Front-end objects (tiles,
    symbolic ints) and modules, functions and classes are compared by identity only."""
    if _is_plain(v):
        return (type(v), v) if not (isinstance(v, float) and math.isnan(v)) else (float, "nan")
    if depth >= _MAX_DEPTH:
        return _identity(v)
    if isinstance(v, (list, tuple)):
        return (type(v), _identity(v), tuple(_fingerprint(x, depth + 1) for x in v))
    if isinstance(v, dict):
        return (dict, _identity(v), tuple((_fingerprint(k, depth + 1), _fingerprint(x, depth + 1))
                                   for k, x in v.items()))
    if isinstance(v, (set, frozenset)):
        return (type(v), _identity(v), frozenset(_fingerprint(x, depth + 1) for x in v))
    module = getattr(type(v), "__module__", "") or ""
    if module.split(".")[0] in _OPAQUE_MODULES or isinstance(v, type) or callable(v):
        return _identity(v)
    attrs = getattr(v, "__dict__", None)
    if not isinstance(attrs, dict):
        return _identity(v)
    return (type(v), _identity(v), tuple((k, _fingerprint(x, depth + 1))
                                  for k, x in sorted(attrs.items())))


def _same_binding(a, b):
    if a is b:
        return True
    if _is_plain(a) and _is_plain(b):
        return type(a) is type(b) and _fingerprint(a) == _fingerprint(b)
    from .expr import SymInt

    return isinstance(a, SymInt) and isinstance(b, SymInt) and a.lin == b.lin


class Snapshot:
    """The Python state of the frame that runs a loop, taken before its first iteration, to
    tell what the body changed (`changes`)."""

    def __init__(self, frame, loop_node, func_node):
        self.frame = frame
        self.loop_node, self.func_node = loop_node, func_node
        target = loop_node.target.id if isinstance(getattr(loop_node, "target", None),
                                                   ast.Name) else None
        self.target = target
        self.locals = {k: v for k, v in frame.f_locals.items() if k != target}
        self.prints = {k: _fingerprint(v) for k, v in self.locals.items()}
        self.globals = frame.f_globals
        self.global_prints = {k: _fingerprint(v) for k, v in self._kernel_globals().items()}

    def _kernel_globals(self):
        return {k: v for k, v in self.globals.items()
                if not k.startswith("__") and not callable(v) and not isinstance(v, type)
                and type(v).__name__ != "module"}

    def predicted(self):
        """Why the body, as written, will need Python iterations given what the names it uses
        hold now (a Python list indexed by the loop variable, a list grown, an attribute or
        a counter of an outer object written, int()/range() of the loop variable), or None.
        Saves a re-trace; `changes` and expr._value_error remain the checks."""
        for kind, name, line in _hazards(self.loop_node):
            v = self.locals.get(name, _MISSING) if name is not None else None
            if kind == "call":
                return "line %d needs the loop variable's Python value (%s())" % (line, name)
            if v is _MISSING or not _read_before_bound(self.loop_node.body, name):
                continue  # not bound before the loop, or the body's own value
            if kind == "index" and isinstance(v, (list, tuple, dict)):
                return "line %d indexes the Python %s `%s` by the loop variable" % (
                    line, type(v).__name__, name)
            if kind in ("mutate", "store_item") and isinstance(v, (list, dict, set)):
                return "line %d changes the Python %s `%s`, made before the loop" % (
                    line, type(v).__name__, name)
            if kind == "aug" and (_is_plain(v) or isinstance(v, (list, tuple))):
                return "line %d updates `%s`, bound before the loop" % (line, name)
            if kind == "attr" and _fingerprint(v) != _identity(v):
                return "line %d writes an attribute of `%s`, made before the loop" % (
                    line, name)
        return None

    def changes(self):
        """Why the body's Python effects depend on the iteration, or None."""
        now = self.frame.f_locals
        for name, old in self.locals.items():
            if name not in now:
                return "deletes `%s`, bound before the loop" % name
            new = now[name]
            if not _same_binding(old, new):
                if _carried_or_read_after(self.func_node, self.loop_node, name):
                    return ("rebinds `%s`, bound before the loop, and the value is read in "
                            "a later iteration or after the loop" % name)
                continue
            if _fingerprint(new) != self.prints[name]:
                return "changes `%s` (a Python %s made before the loop)" % (
                    name, type(new).__name__)
        for name, fp in self.global_prints.items():
            new = self.globals.get(name)
            if _fingerprint(new) != fp:
                return "changes the module's `%s`" % name
        return None


def snapshot_at(where):
    """The Snapshot of the kernel frame running the `for` statement at `where`, or None when
    the loop is not a `for` statement of the kernel's source (then it cannot stand for Python
    iterations at all: the caller unrolls)."""
    if where is None:
        return None
    f = sys._getframe(1)
    while f is not None and not (errors.is_front_end_file(f.f_code.co_filename) is False and
                                 not f.f_code.co_filename.startswith("<")):
        f = f.f_back
    if f is None:
        return None
    loop, func = source_nodes(f.f_code.co_filename, f.f_lineno)
    return Snapshot(f, loop, func)


_MISSING = object()
_MUTATORS = ("append", "extend", "insert", "pop", "remove", "clear", "update", "setdefault",
             "add", "discard", "popitem", "sort", "reverse")
_VALUE_CALLS = ("int", "float", "bool", "str")  # not range(): a loop bound may be a variable
_hazard_cache = {}


def _hazards(loop):
    """(kind, name, line) of what a loop body does that needs Python iterations when `name`
    holds a Python container (or object) made before the loop: kind index (NAME[... v ...]),
    mutate (NAME.append(...)), store_item (NAME[...] = ...), aug (NAME += ...), attr
    (NAME.x = ...), call (int(... v ...), range(v)): v the loop variable."""
    if loop is None:
        return ()
    if id(loop) in _hazard_cache:
        return _hazard_cache[id(loop)][1]
    var = loop.target.id if isinstance(loop.target, ast.Name) else None
    out = []

    def mentions_var(node):
        return var is not None and any(isinstance(n, ast.Name) and n.id == var
                                       for n in ast.walk(node))

    for node in _surely_run(loop.body):
        if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name) and \
                mentions_var(node.slice):
            out.append(("index", node.value.id, node.lineno))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.attr in _MUTATORS:
            out.append(("mutate", node.func.value.id, node.lineno))
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in _VALUE_CALLS and any(mentions_var(a) for a in node.args):
            out.append(("call", node.func.id, node.lineno))
        elif isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Subscript) and isinstance(t.value, ast.Name):
                    out.append(("store_item", t.value.id, node.lineno))
                elif isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name):
                    out.append(("attr", t.value.id, node.lineno))
                elif isinstance(node, ast.AugAssign) and isinstance(t, ast.Name):
                    out.append(("aug", t.id, node.lineno))
    _hazard_cache[id(loop)] = (loop, tuple(out))  # the node is kept: its id stays its own
    return _hazard_cache[id(loop)][1]


def _surely_run(stmts):
    """The nodes of `stmts` that run whenever the statements do: not those under an `if`,
    `while`, `except` or `else` (a hazard in a branch not taken is no hazard), nor in nested
    function definitions."""
    for s in stmts:
        if isinstance(s, (ast.If, ast.While)):
            yield from _walk_expr(s.test)
            continue
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(s, (ast.For, ast.AsyncFor)):
            yield from _walk_expr(s.iter)
            yield from _surely_run(s.body)
            continue
        if isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                yield from _walk_expr(item.context_expr)
            yield from _surely_run(s.body)
            continue
        if isinstance(s, ast.Try):
            yield from _surely_run(s.body)
            yield from _surely_run(s.finalbody)
            continue
        yield from ast.walk(s)


def _walk_expr(node):
    return ast.walk(node) if node is not None else ()


# ---- where a rebound name is read
_trees = {}


_nodes = {}


def source_nodes(filename, line):
    """The `for` statement at `line` of `filename` and the function around it (AST nodes), or
    (None, None)."""
    if (filename, line) not in _nodes:
        _nodes[(filename, line)] = _find_nodes(filename, line)
    return _nodes[(filename, line)]


_loops_by_line = {}  # filename -> {line: (`for` node, innermost function around it)}


def _find_nodes(filename, line):
    if filename not in _loops_by_line:
        _loops_by_line[filename] = _index_loops(filename)
    return _loops_by_line[filename].get(line, (None, None))


def _index_loops(filename):
    """Every `for` statement of the file by line, with the innermost function around it; built
    once per file (a large kernel file has many loops, and walking its tree per loop cost
    seconds)."""
    if filename not in _trees:
        try:
            tree = ast.parse("".join(linecache.getlines(filename)))
        except (SyntaxError, ValueError):
            tree = None
        _trees[filename] = tree
    tree = _trees[filename]
    index = {}
    if tree is None:
        return index
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for sub in ast.walk(node):
                if isinstance(sub, ast.For):
                    best = index.get(sub.lineno)
                    if best is None or node.lineno >= best[1].lineno:
                        index[sub.lineno] = (sub, node)
    return index


_carried = {}


def _carried_or_read_after(func, loop, name):
    key = (id(func), id(loop), name)  # the nodes live in _trees: their ids stay theirs
    if key not in _carried:
        _carried[key] = _find_carried_or_read_after(func, loop, name)
    return _carried[key]


def _find_carried_or_read_after(func, loop, name):
    """Whether the value a loop body binds to `name` can be read by a later iteration (the
    body reads it before binding it on every path) or after the loop (anywhere after it in the
    function, or anywhere in an enclosing loop). Unknown source: True."""
    if func is None or loop is None:
        return True
    if _declared_nonlocal(func, name):
        return True
    if _read_before_bound(loop.body, name):
        return True
    end = loop.end_lineno or loop.lineno
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Load):
            if node.lineno > end:
                return True
    for outer in ast.walk(func):  # an enclosing loop reads it in its next iteration
        if isinstance(outer, (ast.For, ast.While)) and outer is not loop and \
                outer.lineno < loop.lineno and (outer.end_lineno or 0) >= end:
            for node in ast.walk(outer):
                if isinstance(node, ast.Name) and node.id == name and \
                        isinstance(node.ctx, ast.Load) and not loop.lineno <= node.lineno <= end:
                    return True
    return False


def _declared_nonlocal(func, name):
    return any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names
               for n in ast.walk(func))


def _read_before_bound(stmts, name):
    """Whether running `stmts` in order may read `name` before binding it. A binding inside a
    compound statement (if, with, loop, try) may not happen, so it binds nothing for what
    follows."""
    for s in stmts:
        if isinstance(s, (ast.Assign, ast.AnnAssign)):
            value = s.value
            if value is not None and _reads(value, name):
                return True
            targets = s.targets if isinstance(s, ast.Assign) else [s.target]
            if any(_reads(t, name) for t in targets):  # x[i] = ... reads x
                return True
            if any(_binds(t, name) for t in targets):
                return False
            continue
        if isinstance(s, ast.AugAssign):
            if _reads(s.value, name) or _binds(s.target, name) or _reads(s.target, name):
                return True
            continue
        if _reads(s, name):
            return True
    return False


def _reads(node, name):
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
               for n in ast.walk(node))


def _binds(target, name):
    if isinstance(target, ast.Name):
        return target.id == name
    if isinstance(target, (ast.Tuple, ast.List)):
        return any(_binds(t, name) for t in target.elts)
    if isinstance(target, ast.Starred):
        return _binds(target.value, name)
    return False

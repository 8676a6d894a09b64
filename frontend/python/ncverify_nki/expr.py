"""Symbolic integers for traced shapes, loop variables and tile index grids.

A traced kernel computes with Python ints when a value is known and with `SymInt`s when it
depends on a shape param, a loop variable or the program id. A SymInt is a linear combination
of atoms (names, and the non-linear nodes floor-div, mod, product, min, max) plus a constant;
that normal form makes `i*128 - j*128` and `(a + 1) - 1` simplify on their own, and it prints
in the `.nkir` expression grammar. Index grids (`nl.arange`, `nl.mgrid`) are `IndexExpr`s:
affine in the tile's axes, with a symbolic base.
"""

import types

from . import errors

_set = object.__setattr__
# The Lin of each int constant made so far (Lins are immutable, so one serves every use): the
# sizes and starts of an unrolled kernel are a few constants used hundreds of thousands of times.
_CONSTANTS = {}

class Lin:
    """An integer-valued linear form: const + sum(coef * atom). Immutable."""

    __slots__ = ("terms", "const")

    def __init__(self, terms=(), const=0):
        # The front end's own writes skip the sealed __setattr__'s look at the caller
        # (sandbox._seal), which a kernel's writes get: a kernel cannot reach __init__
        # (kernel_language refuses underscore attributes), and Lins are made by the million.
        _set(self, "terms", terms)  # tuple of (atom, coef), sorted by atom key, coef != 0
        _set(self, "const", const)

    @staticmethod
    def of(x):
        if x.__class__ is int:  # (the most common argument: a size or a start)
            lin = _CONSTANTS.get(x)
            if lin is None:
                lin = Lin((), x)
                if len(_CONSTANTS) < 4096:
                    _CONSTANTS[x] = lin
            return lin
        if isinstance(x, Lin):
            return x
        if isinstance(x, SymInt):
            return x.lin
        if isinstance(x, bool):
            raise TypeError("a bool is not an index")
        if isinstance(x, int):
            return Lin((), x)
        try:  # numpy integers
            import numbers

            if isinstance(x, numbers.Integral):
                return Lin((), int(x))
        except ImportError:
            pass
        raise TypeError("expected an integer, got %s" % type(x).__name__)

    def is_const(self):
        return not self.terms

    def key(self):
        return (tuple((a.key(), c) for a, c in self.terms), self.const)

    def __eq__(self, other):
        if self is other:
            return True
        if not isinstance(other, Lin):
            return False
        if not self.terms or not other.terms:  # a constant (most sizes): no keys to build
            return not self.terms and not other.terms and self.const == other.const
        return self.key() == other.key()

    def __hash__(self):
        return hash(self.key())

    def add(self, other):
        acc = {}
        order = []
        for a, c in self.terms + other.terms:
            k = a.key()
            if k not in acc:
                acc[k] = [a, 0]
                order.append(k)
            acc[k][1] += c
        terms = tuple(sorted(((acc[k][0], acc[k][1]) for k in order if acc[k][1] != 0),
                             key=lambda t: t[0].key()))
        return Lin(terms, self.const + other.const)

    def scale(self, c):
        if c == 0:
            return Lin((), 0)
        return Lin(tuple((a, k * c) for a, k in self.terms), self.const * c)

    def neg(self):
        return self.scale(-1)

    def sub(self, other):
        return self.add(other.neg())

    def mul(self, other):
        if self.is_const():
            return other.scale(self.const)
        if other.is_const():
            return self.scale(other.const)
        a, b = sorted([self, other], key=lambda x: str(x.key()))
        return Lin(((Atom("mul", (a, b)), 1),), 0)

    def floordiv(self, c):
        if c <= 0:
            raise errors.NkiError("floor division by %d: the model divides by positive "
                                  "constants only" % c)
        if self.is_const():
            return Lin((), self.const // c)
        if all(k % c == 0 for _, k in self.terms) and self.const % c == 0:
            return Lin(tuple((a, k // c) for a, k in self.terms), self.const // c)
        if c == 1:
            return self
        return Lin(((Atom("floordiv", (self, c)), 1),), 0)

    def mod(self, c):
        if c <= 0:
            raise errors.NkiError("modulo by %d: the model takes remainders of positive "
                                  "constants only" % c)
        if self.is_const():
            return Lin((), self.const % c)
        if all(k % c == 0 for _, k in self.terms):
            return Lin((), self.const % c)
        return Lin(((Atom("mod", (self, c)), 1),), 0)

    def minmax(self, kind, other):
        if self.is_const() and other.is_const():
            f = min if kind == "min" else max
            return Lin((), f(self.const, other.const))
        if self == other:
            return self
        a, b = sorted([self, other], key=lambda x: str(x.key()))
        return Lin(((Atom(kind, (a, b)), 1),), 0)

    def names(self):
        out = []
        for a, _ in self.terms:
            for n in a.names():
                if n not in out:
                    out.append(n)
        return out

    def subst(self, env):
        """Replaces names by Lins (env: name -> Lin) and folds again."""
        out = Lin((), self.const)
        for a, c in self.terms:
            out = out.add(a.subst(env).scale(c))
        return out

    def text(self):
        if not self.terms:  # a constant (most sizes and starts the printer writes)
            return str(self.const)
        parts = []
        for a, c in self.terms:
            t = a.text()
            if c == 1:
                parts.append(("+", t))
            elif c == -1:
                parts.append(("-", t))
            elif c < 0:
                parts.append(("-", "%s * %d" % (t, -c)))
            else:
                parts.append(("+", "%s * %d" % (t, c)))
        if self.const or not parts:
            parts.append(("+" if self.const >= 0 else "-", str(abs(self.const))))
        s = ""
        for i, (sign, t) in enumerate(parts):
            if i == 0:
                s = t if sign == "+" else "-" + t if t[0].isdigit() else "-(%s)" % t
            else:
                s += " %s %s" % (sign, t)
        return s

    def __repr__(self):
        return self.text()


# The constants every full view and unit size needs (a Lin is immutable, so one of each is
# shared rather than made per access).
ZERO = Lin((), 0)
ONE = Lin((), 1)
_CONSTANTS.update({0: ZERO, 1: ONE})


class Atom:
    """A name (kind 'name') or a non-linear node over Lins."""

    __slots__ = ("kind", "args")

    def __init__(self, kind, args):
        _set(self, "kind", kind)  # as Lin.__init__
        _set(self, "args", args)

    def key(self):
        if self.kind == "name":
            return ("name", self.args)
        return (self.kind,) + tuple(a.key() if isinstance(a, Lin) else a for a in self.args)

    def names(self):
        if self.kind == "name":
            return [self.args]
        out = []
        for a in self.args:
            if isinstance(a, Lin):
                out += a.names()
        return out

    def subst(self, env):
        if self.kind == "name":
            return env.get(self.args, Lin(((self, 1),), 0))
        a = self.args[0].subst(env)
        if self.kind == "floordiv":
            return a.floordiv(self.args[1])
        if self.kind == "mod":
            return a.mod(self.args[1])
        b = self.args[1].subst(env)
        if self.kind == "mul":
            return a.mul(b)
        return a.minmax(self.kind, b)

    def text(self):
        if self.kind == "name":
            return self.args
        a = self.args[0]
        if self.kind in ("floordiv", "mod"):
            op = "//" if self.kind == "floordiv" else "%"
            return "(%s) %s %d" % (a.text(), op, self.args[1])
        b = self.args[1]
        if self.kind == "mul":
            return "(%s) * (%s)" % (a.text(), b.text())
        return "%s(%s, %s)" % (self.kind, a.text(), b.text())


def name_lin(name):
    return Lin(((Atom("name", name), 1),), 0)


def _value_error(lin, what):
    from . import trace

    tr = trace._current
    if tr is not None:
        exc = tr.needs_value(lin, what)  # the new dialect unrolls the loop (unrolling.py)
        if exc is not None:
            return exc
        from . import per_program

        exc = per_program.request(tr, lin, what)  # traced once per program id
        if exc is not None:
            return exc
    names = lin.names()
    params = [n for n in names if errors.is_param_name(n)]
    if params:
        fix = " ".join("--param %s=VALUE" % p for p in params)
        return errors.NkiError(
            "%s needs the value of %s, which is symbolic here; fix it with %s" %
            (what, ", ".join(params), fix))
    return errors.NkiError(
        "%s needs the value of %s, which is only known on the device (a loop variable or the "
        "program id); the model traces Python control flow once" % (what, lin.text()))


class SymInt:
    """A Python-visible symbolic integer."""

    __slots__ = ("lin",)

    def __init__(self, lin):
        _set(self, "lin", lin)  # as Lin.__init__

    @staticmethod
    def make(lin):
        return lin.const if lin.is_const() else SymInt(lin)

    def _bin(self, other, f):
        try:
            o = Lin.of(other)
        except TypeError:
            return NotImplemented
        return SymInt.make(f(self.lin, o))

    def _float_op(self, other, f, text):
        """Float arithmetic on a shape (`d ** -0.5`, `1.0 / d`, `d * 0.5`): a Python float of
        the value the params fix; a symbolic shape has none (an instruction's immediates are
        constants in the program), so that is an error naming the param to fix."""
        v = self._known()
        if v is None:
            raise _value_error(self.lin, "float arithmetic on a shape (%s)" % text)
        return f(v, other)

    def __add__(self, o):
        if isinstance(o, IndexExpr):
            return NotImplemented
        if isinstance(o, float):
            return self._float_op(o, lambda a, b: a + b, "%s + %r" % (self, o))
        return self._bin(o, Lin.add)

    def __radd__(self, o):
        if isinstance(o, float):
            return self._float_op(o, lambda a, b: b + a, "%r + %s" % (o, self))
        return self._bin(o, lambda a, b: b.add(a))

    def __sub__(self, o):
        if isinstance(o, IndexExpr):
            return NotImplemented
        if isinstance(o, float):
            return self._float_op(o, lambda a, b: a - b, "%s - %r" % (self, o))
        return self._bin(o, Lin.sub)

    def __rsub__(self, o):
        if isinstance(o, float):
            return self._float_op(o, lambda a, b: b - a, "%r - %s" % (o, self))
        return self._bin(o, lambda a, b: b.sub(a))

    def __mul__(self, o):
        if isinstance(o, IndexExpr):
            return NotImplemented
        if isinstance(o, float):
            return self._float_op(o, lambda a, b: a * b, "%s * %r" % (self, o))
        return self._bin(o, Lin.mul)

    def __rmul__(self, o):
        if isinstance(o, float):
            return self._float_op(o, lambda a, b: b * a, "%r * %s" % (o, self))
        return self._bin(o, lambda a, b: b.mul(a))

    def __pow__(self, o):
        if isinstance(o, int) and not isinstance(o, bool) and 0 <= o <= 8:
            out = Lin.of(1)
            for _ in range(o):
                out = out.mul(self.lin)
            return SymInt.make(out)
        if isinstance(o, (int, float)) and not isinstance(o, bool):
            return self._float_op(o, lambda a, b: a ** b, "%s ** %r" % (self, o))
        return NotImplemented

    def __rpow__(self, o):
        if isinstance(o, (int, float)) and not isinstance(o, bool):
            return self._float_op(o, lambda a, b: b ** a, "%r ** %s" % (o, self))
        return NotImplemented

    def __floordiv__(self, o):
        if isinstance(o, SymInt):
            raise _value_error(o.lin, "division by a symbolic value")
        return self._bin(o, lambda a, b: a.floordiv(b.const))

    def __rfloordiv__(self, o):
        raise _value_error(self.lin, "division by a symbolic value")

    def __mod__(self, o):
        if isinstance(o, SymInt):
            raise _value_error(o.lin, "a remainder by a symbolic value")
        return self._bin(o, lambda a, b: a.mod(b.const))

    def __rmod__(self, o):
        raise _value_error(self.lin, "a remainder by a symbolic value")

    def __truediv__(self, o):
        if isinstance(o, SymInt):
            v = o._known()
            if v is None:
                raise _value_error(o.lin, "true division (/) by a shape (%s / %s)" % (self, o))
            o = v
        if not isinstance(o, (int, float)) or isinstance(o, bool):
            return NotImplemented
        return self._float_op(o, lambda a, b: a / b, "%s / %r" % (self, o))

    def __rtruediv__(self, o):
        if not isinstance(o, (int, float)) or isinstance(o, bool):
            return NotImplemented
        return self._float_op(o, lambda a, b: b / a, "%r / %s" % (o, self))

    def __float__(self):
        v = self._known()
        if v is None:
            raise _value_error(self.lin, "float()")
        return float(v)

    def __neg__(self):
        return SymInt.make(self.lin.neg())

    def __pos__(self):
        return self

    def _cmp(self, o, op):
        try:
            rhs = Lin.of(o)
        except TypeError:
            return NotImplemented
        return SymBool(op, self.lin, rhs)

    def __eq__(self, o):
        if isinstance(o, (tuple, list, str, type(None))):
            return False
        return self._cmp(o, "==")

    def __ne__(self, o):
        if isinstance(o, (tuple, list, str, type(None))):
            return True
        return self._cmp(o, "!=")

    def __lt__(self, o):
        return self._cmp(o, "<")

    def __le__(self, o):
        return self._cmp(o, "<=")

    def __gt__(self, o):
        return self._cmp(o, ">")

    def __ge__(self, o):
        return self._cmp(o, ">=")

    def __hash__(self):
        from . import trace

        if trace.python_loops(trace._current):  # a dict key needs the Python value
            exc = trace._current.needs_value(self.lin, "a dict key or set member")
            if exc is not None:
                raise exc
        return hash(self.lin)

    def _known(self):
        """The value when the asserts made it a constant (`assert d == 128`), else None."""
        from . import trace

        if trace._current is None:
            return None
        lin = trace._current.evaluate(self.lin)
        if lin.is_const():
            trace._current.note_fixed(self.lin, "a Python value")
            return lin.const
        return None

    def __index__(self):
        v = self._known()
        if v is None:
            raise _value_error(self.lin, "this use (an index, range() or a size)")
        return v

    def __int__(self):
        v = self._known()
        if v is None:
            raise _value_error(self.lin, "int()")
        return v

    def __bool__(self):
        v = self._known()
        if v is None:
            return bool(SymBool("!=", self.lin, Lin.of(0)))  # `if n:` is `if n != 0:`
        return v != 0

    def __repr__(self):
        return self.lin.text()

    __str__ = __repr__

    def __format__(self, spec):
        return format(self.lin.text(), spec if spec and spec[-1] not in "dxX" else "")


class SymBool:
    """A relation between symbolic integers; its truth value is needed by `if` and `assert`."""

    def __init__(self, op, lhs, rhs):
        self.op, self.lhs, self.rhs = op, lhs, rhs

    def decided(self):
        """True/False when the relation holds or fails for every value, else None."""
        d = self.lhs.sub(self.rhs)
        from . import trace

        if trace._current is not None:
            e = trace._current.evaluate(d)
            if e.is_const() and not d.is_const():
                trace._current.note_fixed(d, "a Python comparison")
            d = e
        if d.is_const():
            v = d.const
            return {"<": v < 0, "<=": v <= 0, ">": v > 0, ">=": v >= 0, "==": v == 0,
                    "!=": v != 0}[self.op]
        return None

    def __bool__(self):
        d = self.decided()
        if d is not None:
            return d
        from . import trace

        return trace.current().truth_of(self)

    def __and__(self, other):
        if other is True:
            return self
        if other is False:
            return False
        if isinstance(other, SymBool):
            return _Conj([self, other])
        return NotImplemented

    __rand__ = __and__

    def __or__(self, other):
        if other is False:
            return self
        if other is True:
            return True
        if isinstance(other, SymBool):
            return _Disj([self, other])
        return NotImplemented

    __ror__ = __or__

    # A relation used as a number: Python's bool is the int 0 or 1, and kernels count with it
    # (nki-library attention_tkg.py:2093, `1 + (n > 1 and not fa) + should_prep_sink`, where
    # should_prep_sink is `... and fa_tile_idx == 0`). Its truth is decided as an `if` on it
    # would be (splitting the enclosing loop, unrolling it, or tracing once per program).
    def __int__(self):
        return 1 if bool(self) else 0

    __index__ = __int__

    def __add__(self, other):
        return int(self) + other

    def __radd__(self, other):
        return other + int(self)

    def __sub__(self, other):
        return int(self) - other

    def __rsub__(self, other):
        return other - int(self)

    def __mul__(self, other):
        return int(self) * other

    def __rmul__(self, other):
        return other * int(self)

    def text(self):
        return "%s %s %s" % (self.lhs.text(), self.op, self.rhs.text())

    def __repr__(self):
        return self.text()


class _Conj(SymBool):
    """`a & b` of relations; true only when every one is."""

    def __init__(self, parts):
        self.parts = parts

    def decided(self):
        ds = [p.decided() for p in self.parts]
        if any(d is False for d in ds):
            return False
        return True if all(d is True for d in ds) else None

    def __bool__(self):
        d = self.decided()
        if d is not None:
            return d
        return all(bool(p) for p in self.parts)

    def __and__(self, other):
        if other is True:
            return self
        if other is False:
            return False
        if isinstance(other, SymBool):
            return _Conj(self.parts + [other])
        return NotImplemented

    __rand__ = __and__

    def text(self):
        return " & ".join(p.text() for p in self.parts)


class _Disj(SymBool):
    """`a | b` of relations; true when any one is (each decided in turn, as `or` does)."""

    def __init__(self, parts):
        self.parts = parts

    def decided(self):
        ds = [p.decided() for p in self.parts]
        if any(d is True for d in ds):
            return True
        return False if all(d is False for d in ds) else None

    def __bool__(self):
        d = self.decided()
        if d is not None:
            return d
        return any(bool(p) for p in self.parts)

    def __or__(self, other):
        if other is False:
            return self
        if other is True:
            return True
        if isinstance(other, SymBool):
            return _Disj(self.parts + [other])
        return NotImplemented

    __ror__ = __or__

    def text(self):
        return " | ".join("(%s)" % p.text() for p in self.parts)


class IndexExpr:
    """An affine index over a tile's axes: base + sum(coef[axis] * i_axis), broadcast to `shape`.

    `nl.arange(n)[:, None]` is axis 0 of shape (n, 1); `[None, :]` is axis 1 of shape (1, n).
    """

    def __init__(self, coefs, base, shape):
        # axis -> int coefficient (non-zero); read-only: a kernel holds index expressions
        self.coefs = types.MappingProxyType(dict(coefs))
        self.base = base  # Lin
        self.shape = tuple(shape)  # per axis: a size (int or Lin) or 1

    @staticmethod
    def arange(start, stop):
        n = Lin.of(stop).sub(Lin.of(start))
        return IndexExpr({0: 1}, Lin.of(start), (SymInt.make(n),))

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        if len(self.shape) != 1:
            raise errors.NkiError("an index grid can be expanded with [:, None] only once")
        axes = [k for k, v in enumerate(key) if isinstance(v, slice)]
        if len(axes) != 1 or any(v is not None and not isinstance(v, slice) for v in key):
            raise errors.NkiError("expand an nl.arange with one ':' and None elsewhere, "
                                  "e.g. [:, None]")
        axis = axes[0]
        shape = tuple(self.shape[0] if k == axis else 1 for k in range(len(key)))
        coefs = {axis: self.coefs[0]} if 0 in self.coefs else {}
        return IndexExpr(coefs, self.base, shape)

    def _merge_shape(self, other_shape):
        a, b = list(self.shape), list(other_shape)
        n = max(len(a), len(b))
        a = [1] * (n - len(a)) + a
        b = [1] * (n - len(b)) + b
        out = []
        for x, y in zip(a, b):
            if _is_one(x):
                out.append(y)
            elif _is_one(y) or Lin.of(x) == Lin.of(y):
                out.append(x)
            else:
                raise errors.NkiError("index grids of sizes %s and %s do not broadcast" % (x, y))
        return tuple(out)

    def _shift(self, other):
        shape = self.shape
        nd = len(shape)
        if isinstance(other, IndexExpr):
            shape = self._merge_shape(other.shape)
            off_a, off_b = len(shape) - nd, len(shape) - len(other.shape)
            coefs = {a + off_a: c for a, c in self.coefs.items()}
            for a, c in other.coefs.items():
                coefs[a + off_b] = coefs.get(a + off_b, 0) + c
            coefs = {a: c for a, c in coefs.items() if c}
            return IndexExpr(coefs, self.base.add(other.base), shape)
        return IndexExpr(self.coefs, self.base.add(Lin.of(other)), shape)

    def __add__(self, o):
        try:
            return self._shift(o)
        except TypeError:
            return NotImplemented

    __radd__ = __add__

    def __neg__(self):
        return IndexExpr({a: -c for a, c in self.coefs.items()}, self.base.neg(), self.shape)

    def __sub__(self, o):
        if isinstance(o, IndexExpr):
            return self._shift(-o)
        try:
            return self._shift(Lin.of(o).neg())
        except TypeError:
            return NotImplemented

    def __rsub__(self, o):
        return (-self)._shift(o)

    def __mul__(self, o):
        if isinstance(o, IndexExpr):
            raise errors.NkiError("a product of two index grids is not affine")
        try:
            c = Lin.of(o)
        except TypeError:
            return NotImplemented
        if not c.is_const():
            raise errors.NkiError("an index grid scaled by a symbolic value (%s) is not affine"
                                  % c.text())
        k = c.const
        return IndexExpr({a: v * k for a, v in self.coefs.items() if v * k}, self.base.scale(k),
                         self.shape)

    __rmul__ = __mul__

    def _cmp(self, o, op):
        return Predicate([(self - o, op)])

    def __lt__(self, o):
        return self._cmp(o, "<")

    def __le__(self, o):
        return self._cmp(o, "<=")

    def __gt__(self, o):
        return self._cmp(o, ">")

    def __ge__(self, o):
        return self._cmp(o, ">=")

    def __eq__(self, o):
        return self._cmp(o, "==")

    def __ne__(self, o):
        return self._cmp(o, "!=")

    __hash__ = object.__hash__

    def __bool__(self):
        raise errors.NkiError("an index grid has no truth value (it is one value per element)")


def _in_and_or():
    """Whether the kernel statement being run holds an `and`/`or` of comparisons."""
    import ast

    from . import trace

    where = errors.user_location()
    tr = trace._current
    if where is None or tr is None:
        return False
    node = tr.src.statement(*where)
    if node is None:
        return False
    return any(isinstance(n, ast.BoolOp) and any(isinstance(v, ast.Compare) for v in n.values)
               for n in ast.walk(node))


def _is_one(x):
    return not isinstance(x, SymInt) and x == 1


class Predicate:
    """A conjunction of affine conditions `expr OP 0` over a tile's axes (masks, affine_select)."""

    def __init__(self, conds):
        self.conds = tuple(conds)  # (IndexExpr, op) pairs, each meaning expr op 0

    def __and__(self, o):
        if not isinstance(o, Predicate):
            raise errors.NkiError("a mask combines with & only with another affine condition")
        return Predicate(self.conds + o.conds)

    __rand__ = __and__

    def __bool__(self):
        if _in_and_or():
            # Python's `and`/`or` call bool() on their first operand and pass on one operand
            # only, so the call never sees the other condition. NKI combines mask conditions
            # with & and documents that `and` is not supported for masks (NKI known issues,
            # SDK 2.23: "Masks conjunction").
            raise errors.NkiError("mask conditions joined with Python's `and`/`or`: Python "
                                  "keeps one of the two (it calls bool() on the first), so the "
                                  "mask is unknown; NKI combines masks with & and does not "
                                  "support `and` for masks (NKI known issues); write "
                                  "(a) & (b)")
        raise errors.NkiError("an affine condition has no truth value in Python; pass it as "
                              "mask= or pred=")

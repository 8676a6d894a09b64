"""Loop splitting: a Python `if` on loop variables, the program id and params, traced exactly.

The IR has no branch, so an affine condition the iterations decide differently splits the
enclosing loop's iteration space into pieces on which it is constant (loop splitting / index-set
splitting, as polyhedral compilers do), each piece an ordinary loop whose body is traced with the
branch it takes. The bounds stay expressions over params and outer loop variables (min/max
clamp a boundary into the piece), so the program is still symbolic and `prove` covers every
shape.

Every relation is reduced to primitives `x < 0` (x an integer linear form): `a <= b` is
`a - b - 1 < 0`, `a == b` is `a - b - 1 < 0 and b - a - 1 < 0`, `!=` its negation. A primitive
`c*v + r < 0`, v the innermost loop variable it mentions and r free of v, holds on one side of
the boundary B = ceil(-r / c) (c > 0: v < B; c < 0: v >= floor(r / -c) + 1), B moved onto the
loop's step lattice and clamped into [start, stop]. A primitive without loop variables (params,
program id) guards the innermost loop: its first piece is [start, start + [x < 0] * (stop -
start)), its second the rest, one of them empty at run time.

A split records the primitive's truth as a *fact* of each piece: the range of the primitive's
linear part (divided by the gcd of its coefficients, sign fixed) throughout the piece. Later
conditions in the body, and the same condition when the next piece is traced, are decided from
the facts of the enclosing pieces and interval bounds of params (their domain), loop variables
(their bounds) and the program id (the grid) before any further split.

A remainder of the loop variable (`(a*v + b) % m`) splits an affine_range into residue classes:
P = m / gcd(a*step, m) strided loops, on each of which the remainder is a constant (a
substitution the piece records); P is at most MAX_RESIDUE_PIECES.

A floor division as the only term with the loop variable (`c * ((a*v + b) // m) + r < 0`) is
the primitive `a*v + b < m * ceil(-r / c)` (c > 0; the mirror image for c < 0), split as above.

Refused: a condition whose loop variable appears inside another non-linear term (`i * j`,
`min(i, 3)`, a floor division beside other terms with i: no finite set of intervals or residue
classes describes it exactly), a remainder in a sequential loop (residue classes would reorder
its iterations). A condition on tensor values never
gets here (a tile has no truth value, tiles.py).
"""

import math

from . import errors
from .expr import Lin

INF = math.inf


def decided(tr, rel):
    """True/False when `rel` holds (fails) throughout the current pieces, else None."""
    prims = _primitives(tr, rel)
    if prims is None:
        return None
    kind, xs = prims
    truths = [_decide_lt0(tr, x) for x in xs]
    if kind == "lt":
        return truths[0]
    # kind eq / ne: conjunction of two primitives
    if any(t is False for t in truths):
        conj = False
    elif all(t is True for t in truths):
        conj = True
    else:
        return None
    return conj if kind == "eq" else not conj


def split(tr, rel):
    """The truth of `rel` in the piece being traced, splitting an enclosing loop when the
    iterations decide it differently."""
    kind, xs = _primitives(tr, rel)
    if kind == "lt":
        return _prim_truth(tr, xs[0], rel)
    conj = _prim_truth(tr, xs[0], rel) and _prim_truth(tr, xs[1], rel)
    return conj if kind == "eq" else not conj


def _primitives(tr, rel):
    x = tr.evaluate(rel.lhs.sub(rel.rhs))
    one = Lin.of(1)
    if rel.op == "<":
        return "lt", [x]
    if rel.op == "<=":
        return "lt", [x.sub(one)]
    if rel.op == ">":
        return "lt", [x.neg()]
    if rel.op == ">=":
        return "lt", [x.neg().sub(one)]
    if rel.op in ("==", "!="):
        return ("eq" if rel.op == "==" else "ne"), [x.sub(one), x.neg().sub(one)]
    return None


# ---- ranges
def lin_range(tr, lin):
    """[lo, hi] of an integer linear form (lo may be -inf, hi inf): interval bounds of its
    atoms, narrowed by the facts of the enclosing pieces about its linear part."""
    lin = _substituted(tr, tr.evaluate(lin))
    lo = hi = lin.const
    for atom, c in lin.terms:
        a_lo, a_hi = _atom_range(tr, atom)
        ends = [_times(c, a_lo), _times(c, a_hi)]
        lo, hi = lo + min(ends), hi + max(ends)
    if lin.terms:
        key, sign, g = _canon(lin)
        for loop in tr.loops:
            f = loop.facts.get(key)
            if f is None:
                continue
            ends = [_times(sign * g, f[0]), _times(sign * g, f[1])]
            lo, hi = max(lo, min(ends) + lin.const), min(hi, max(ends) + lin.const)
    return lo, hi


def _substituted(tr, lin):
    """`lin` with the remainders a residue-class piece fixes replaced by their values."""
    substs = {}
    for loop in tr.loops:
        substs.update(loop.substs)
    if not substs or not any(a.key() in substs for a, _ in lin.terms):
        return lin
    out = Lin((), lin.const)
    for a, c in lin.terms:
        out = out.add(substs[a.key()].scale(c) if a.key() in substs else Lin(((a, c),), 0))
    return out


def _times(c, x):
    return 0 if c == 0 else c * x


def _atom_range(tr, atom):
    if atom.kind == "name":
        name = atom.args
        loop = next((l for l in reversed(tr.loops) if l.var == name), None)
        if loop is not None:
            s_lo, s_hi = lin_range(tr, loop.start)
            hi = lin_range(tr, loop.stop)[1] - 1
            if s_lo == s_hi and hi != INF and loop.step > 1:  # the last value of the lattice
                hi = s_lo + (hi - s_lo) // loop.step * loop.step
            return s_lo, hi
        p = tr.params.get(name)
        if p is not None:
            return p.lo, p.hi
        if name == "program_id" and tr.grid is not None:
            g = Lin.of(1)
            for axis in tr.grid:
                g = g.mul(axis)
            return 0, lin_range(tr, g)[1] - 1
        return -INF, INF
    if atom.kind == "floordiv":
        lo, hi = lin_range(tr, atom.args[0])
        c = atom.args[1]
        return (lo if lo == -INF else lo // c), (hi if hi == INF else hi // c)
    if atom.kind == "mod":
        lo, hi = lin_range(tr, atom.args[0])
        c = atom.args[1]
        if lo != -INF and hi != INF and lo // c == hi // c:
            return lo % c, hi % c
        return 0, atom.args[1] - 1
    a, b = lin_range(tr, atom.args[0]), lin_range(tr, atom.args[1])
    if atom.kind == "min":
        return min(a[0], b[0]), min(a[1], b[1])
    if atom.kind == "max":
        return max(a[0], b[0]), max(a[1], b[1])
    if INF in (abs(a[0]), abs(a[1]), abs(b[0]), abs(b[1])):
        return -INF, INF
    prods = [x * y for x in a for y in b]
    return min(prods), max(prods)


def _canon(lin):
    """The linear part of `lin` as (key, sign, g): lin - const = sign * g * y, y's first
    coefficient positive and its coefficients coprime; key names y."""
    g = 0
    for _, c in lin.terms:
        g = math.gcd(g, abs(c))
    sign = 1 if lin.terms[0][1] > 0 else -1
    y = Lin(tuple((a, c // (sign * g)) for a, c in lin.terms), 0)
    return y.key(), sign, g


def _decide_lt0(tr, x):
    lo, hi = lin_range(tr, x)
    if hi < 0:
        return True
    if lo >= 0:
        return False
    return None


def _add_fact(facts, x, truth):
    """Records in `facts` that `x < 0` is `truth` throughout a piece."""
    key, sign, g = _canon(x)
    k = x.const
    lo, hi = facts.get(key, (-INF, INF))
    # x = sign*g*y + k
    if truth and sign > 0:  # g*y <= -k - 1
        hi = min(hi, (-k - 1) // g)
    elif truth:  # -g*y <= -k - 1
        lo = max(lo, _ceil_div(k + 1, g))
    elif sign > 0:  # g*y >= -k
        lo = max(lo, _ceil_div(-k, g))
    else:  # -g*y >= -k
        hi = min(hi, k // g)
    facts[key] = (lo, hi)


def add_bound_facts(loop):
    """A loop piece's own bounds as facts: start <= v < stop (their correlation with the
    params and outer variables is what interval bounds lose)."""
    from .expr import name_lin

    v = name_lin(loop.var)
    if not loop.stop.sub(v).is_const():
        _add_fact(loop.facts, v.sub(loop.stop), True)
    if not loop.start.sub(v).is_const():
        _add_fact(loop.facts, loop.start.sub(v).sub(Lin.of(1)), True)


def _ceil_div(a, b):
    return -((-a) // b)


# ---- bounds as expressions
def _le(tr, a, b):
    """a <= b wherever both are defined: by ranges, or through a min/max that a is."""
    if lin_range(tr, a.sub(b))[1] <= 0:
        return True
    if a.const == 0 and len(a.terms) == 1 and a.terms[0][1] == 1 and \
            a.terms[0][0].kind in ("min", "max"):
        atom = a.terms[0][0]
        parts = [_le(tr, x, b) for x in atom.args]
        return all(parts) if atom.kind == "max" else any(parts)
    return False


def smin(tr, a, b):
    """min(a, b), folded when the ranges decide it."""
    if _le(tr, a, b):
        return a
    if _le(tr, b, a):
        return b
    return a.minmax("min", b)


def smax(tr, a, b):
    if _le(tr, b, a):
        return a
    if _le(tr, a, b):
        return b
    return a.minmax("max", b)


def _empty(tr, start, stop):
    return lin_range(tr, stop.sub(start))[1] <= 0


# ---- splitting
def _prim_truth(tr, x, rel):
    """The truth of `x < 0` in the piece being traced, splitting a loop if needed."""
    x = _substituted(tr, tr.evaluate(x))
    d = _decide_lt0(tr, x)
    if d is not None:
        return d
    names = x.names()
    inner = [l for l in tr.loops if l.var in names]
    strange = [n for n in names if n not in tr.params and n != "program_id" and
               not any(l.var == n for l in inner)]
    if strange:
        raise errors.NkiError(
            "this branch depends on %s, and %s is the variable of a loop that has ended "
            "(only known on the device)" % (rel.text(), strange[0]))
    loop = inner[-1] if inner else tr.loops[-1]
    v = loop.var
    c = 0
    for atom, k in x.terms:
        if atom.kind == "name" and atom.args == v:
            c = k
        elif atom.kind == "mod" and _coef(atom.args[0], v) is not None:
            return _split_residues(tr, loop, atom, x, rel)
        elif atom.kind == "floordiv" and _coef(atom.args[0], v) is not None and \
                _coef(x.sub(Lin(((atom, k),), 0)), v) is None and \
                v not in x.sub(Lin(((atom, k),), 0)).names():
            return _prim_truth(tr, _without_floor(atom, k, x), rel)
        elif v in atom.names():
            raise errors.NkiError(
                "this branch depends on %s, which is not affine in the loop variable %s (it "
                "appears in %s); the program has no branch, and only an affine condition "
                "splits the loop exactly" % (rel.text(), v, atom.text()))
    s, e, step = loop.start, loop.stop, loop.step
    r = x.sub(_var(x, v).scale(c)) if c else x
    if c == 0:
        # guard: the whole piece when x < 0, else none of it
        ind = smin(tr, Lin.of(1), smax(tr, Lin.of(0), r.neg()))
        b = s.add(ind.mul(e.sub(s)))
        first_true = True
    else:
        if c > 0:
            b = r.neg().add(Lin.of(c - 1)).floordiv(c)  # x < 0  <=>  v < b
            first_true = True
        else:
            b = r.floordiv(-c).add(Lin.of(1))  # x < 0  <=>  v >= b
            first_true = False
        if step > 1:  # the first value of the loop's lattice at or after b
            b = s.add(b.sub(s).add(Lin.of(step - 1)).floordiv(step).scale(step))
        b = smin(tr, smax(tr, b, s), e)
    if _empty(tr, s, b):
        _add_fact(loop.facts, x, not first_true)
        return not first_true
    if _empty(tr, b, e):
        _add_fact(loop.facts, x, first_true)
        return first_true
    rest = dict(loop.facts)
    _add_fact(rest, x, not first_true)
    loop.pending.insert(0, (b, e, step, rest, dict(loop.substs)))
    loop.stop = b
    _add_fact(loop.facts, x, first_true)
    return first_true


def _without_floor(atom, c, x):
    """`c * (y // m) + r < 0` (y // m the only term with the loop variable) as a primitive
    linear in y: with Q = ceil(-r / c), `y < m * Q` for c > 0; with Q = floor(r / -c) + 1,
    `y >= m * Q` for c < 0 (floor(y / m) < Q  <=>  y < m * Q for integers)."""
    y, m = atom.args
    r = x.sub(Lin(((atom, c),), 0))
    if c > 0:
        q = r.neg().add(Lin.of(c - 1)).floordiv(c)
        return y.sub(q.scale(m))
    q = r.floordiv(-c).add(Lin.of(1))
    return y.sub(q.scale(m)).neg().sub(Lin.of(1))


MAX_RESIDUE_PIECES = 16  # a remainder splits a loop into at most this many strided loops


def _coef(lin, v):
    """The coefficient of the name v in `lin` when v appears only as a plain term, else None."""
    c = None
    for atom, k in lin.terms:
        if atom.kind == "name" and atom.args == v:
            c = k
        elif v in atom.names():
            return None
    return c


def _split_residues(tr, loop, atom, x, rel):
    """`(a*v + b) % m` in a condition: the loop splits into residue classes of its iterations,
    P = m / gcd(a*step, m) strided loops (start + r*step, step*P), on each of which the remainder
    is the constant (a*(start + r*step) + b) % m; the condition is then decided or split again.
    Residue classes reorder iterations, which only affine_range allows."""
    v, k, m = loop.var, loop.step, atom.args[1]
    a = _coef(atom.args[0], v)
    period = m // math.gcd(abs(a) * k, m)
    if period > 1 and loop.kind != "affine_range":
        raise errors.NkiError(
            "this branch depends on %s, whose remainder takes turns over the iterations of a "
            "%s; splitting it into residue classes would reorder them (only affine_range "
            "iterations are independent)" % (rel.text(), loop.kind))
    if period > MAX_RESIDUE_PIECES:
        raise errors.NkiError(
            "this branch depends on %s, which splits the loop over %s into %d residue classes "
            "(at most %d)" % (rel.text(), v, period, MAX_RESIDUE_PIECES))
    s, e = loop.start, loop.stop
    key = atom.key()

    def value(r):
        return atom.args[0].subst({v: s.add(Lin.of(r * k))}).mod(m)

    for r in range(period - 1, 0, -1):
        start = smin(tr, s.add(Lin.of(r * k)), e)
        if not _empty(tr, start, e):
            substs = dict(loop.substs)
            substs[key] = value(r)
            loop.pending.insert(0, (start, e, k * period, dict(loop.facts), substs))
    loop.step = k * period
    loop.substs[key] = value(0)
    return _prim_truth(tr, x, rel)


def _var(x, v):
    for atom, _ in x.terms:
        if atom.kind == "name" and atom.args == v:
            return Lin(((atom, 1),), 0)
    raise AssertionError(v)

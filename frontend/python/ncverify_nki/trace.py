"""The trace in progress: params and their domain, the statement tree, names, and the rules for
Python truth values of symbolic shapes (an `assert` becomes the param domain, any other branch
on a symbolic value is an error that names the param)."""

import ast
import linecache
import math

from . import errors, splitting
from .expr import Lin, SymBool, name_lin
from .program import BufferDecl, Indirect, Instr, Loop, Tensor, View, ZeroInit

DEFAULT_MAX = 65536  # upper bound of a shape param no assert bounds (documented in README)

_current = None


def current():
    if _current is None:
        raise errors.NkiError("NKI calls are only traced inside the kernel function")
    return _current


def start(tracer):
    global _current
    _current = tracer


def stop():
    global _current
    _current = None


class Param:
    def __init__(self, name, fixed=None):
        self.name = name
        self.named = False  # named by the kernel's own variables (kept even when pinned)
        self.lo, self.hi, self.mult = 1, DEFAULT_MAX, 1
        self.fixed = fixed
        if fixed is not None:
            self.lo = self.hi = fixed


class SourceIndex:
    """Statements of a Python file by line, to tell an assert from an `if` and to name temps."""

    def __init__(self):
        self.by_file = {}

    def statement(self, filename, line):
        if filename not in self.by_file:
            text = "".join(linecache.getlines(filename))
            index = {}
            try:
                tree = ast.parse(text)
            except SyntaxError:
                tree = None
            if tree is not None:
                for node in ast.walk(tree):
                    if isinstance(node, ast.stmt):
                        end = getattr(node, "end_lineno", node.lineno) or node.lineno
                        if isinstance(node, (ast.For, ast.While, ast.If, ast.With,
                                             ast.FunctionDef, ast.Try)):
                            end = node.lineno  # the header line only
                        for ln in range(node.lineno, end + 1):
                            prev = index.get(ln)
                            if prev is None or _span(node) <= _span(prev):
                                index[ln] = node
            self.by_file[filename] = index
        return self.by_file[filename].get(line)


def _span(node):
    return (getattr(node, "end_lineno", node.lineno) or node.lineno) - node.lineno


_NKIR_KEYWORDS = ("kernel", "param", "require", "grid", "input", "output", "scratch", "buffer",
                  "for", "in", "range", "affine", "sequential", "min", "max", "divides",
                  "program_id", "nan", "inf", "at", "bufs", "multiple_of")


class Tracer:
    def __init__(self, kernel_name, source_index):
        self.kernel_name = kernel_name
        self.src = source_index
        self.params = {}  # name -> Param, in creation order
        self.aliases = {}  # param name -> Lin it equals (asserted)
        self.requires = []  # (Lin, rel, Lin)
        self.grid = None  # list of Lins, one per launch-grid axis
        self.hbm = []  # input/output/scratch tensors in declaration order
        self.root = []
        self.stack = [self.root]
        self.loops = []
        # The .nkir keywords name nothing (model/ir/validate.cpp is_reserved): a kernel's
        # `output = nl.ndarray(...)` becomes `output_2`.
        self.names = set(_NKIR_KEYWORDS)
        self._probe = {}  # base name -> where unique() resumes probing (names only grow, but
        # a closed loop frees its variable's name: close_loop clears this)
        self.queues = {}  # HBM tensor name -> DMA queue
        self.source_file = None  # the `.nkir` `source` line: the kernel file the `@line`s count in
        # The generation the kernel is written for, when its decorator names one
        # (`platform_target=`): calls that exist from NeuronCore-v3 on are accepted for trn2/trn3.
        self.generation = None
        # The NKI API the kernel is written in (dialect.py): "neuronxcc" (legacy) or "nki".
        self.dialect = "neuronxcc"
        # Checks of the whole program, run once the kernel returned (main.trace_kernel): each
        # takes the tracer and raises NkiError (newapi.language: explicit addresses).
        self.at_end = []

    # ---- names
    def unique(self, base):
        """`base`, else the first free `base_k` (k = 2, 3, ...). `_probe[base]` is a k below which
        every `base_k` is taken, so a kernel that allocates thousands of tensors from one line
        (nki-library's allocators) does not probe them all again each time."""
        base = base or "t"
        if base not in self.names:
            self.names.add(base)
            return base
        k = self._probe.get(base, 2)
        name = "%s_%d" % (base, k)
        while name in self.names:
            k += 1
            name = "%s_%d" % (base, k)
        self.names.add(name)
        self._probe[base] = k + 1
        return name

    def assigned_name(self, default="t"):
        """The target of the user's `NAME = ...` line, for naming a result."""
        where = errors.user_location()
        if where is None:
            return default
        node = self.src.statement(*where)
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            return node.targets[0].id
        if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            return node.target.id
        return default

    # ---- params
    def param(self, name, fixed=None):
        p = Param(self.unique(name), fixed)
        self.params[p.name] = p
        errors.register_param_name(p.name)
        return p

    def evaluate(self, lin):
        """`lin` with asserted equalities substituted and every param whose domain is a single
        value replaced by it: what Python-level decisions (if, int(), range()) may use."""
        lin = self.resolve(lin)
        fixed = {n: Lin.of(p.lo) for n, p in self.params.items()
                 if p.lo == p.hi and n in lin.names()}
        return lin.subst(fixed) if fixed else lin

    def resolve(self, lin):
        for _ in range(64):
            names = [n for n in lin.names() if n in self.aliases]
            if not names:
                return lin
            lin = lin.subst({n: self.aliases[n] for n in names})
        raise errors.NkiError("asserted shape equalities are circular")

    # ---- statements
    def emit(self, stmt):
        self.stack[-1].append(stmt)
        return stmt

    def declare(self, tensor, bufs=None):
        tensor.decl = self.emit(BufferDecl(tensor, bufs or tensor.bufs))
        tensor.block = self.stack[-1]
        return tensor

    def temp(self, mem, dtype, shape, hint=None):
        if mem in ("sbuf", "psum") and shape and shape[0].is_const() and shape[0].const > 128:
            # The program would fail validation; say so at the kernel's line instead (the
            # SDK's layout-violation example: nl.load of 256 rows).
            raise errors.NkiError("a tile of %d partitions: an on-chip tile has at most 128 "
                                  "(its first dim is the partition dim); split the access into "
                                  "tiles of at most 128 rows" % shape[0].const)
        name = self.unique(hint or self.assigned_name())
        return self.declare(Tensor(name, mem, dtype, shape))

    def zero_init(self, tensor, zeros=True):
        """A PSUM tile whose first matmul accumulation may overwrite it: nl.zeros (zeros=True,
        read as zeros if something reads it first) or a fresh nl.ndarray (read before any write
        it stays uninitialised, which the interpreter reports)."""
        tensor.zero_state = "pending"
        tensor.zero_fill = zeros
        tensor.matmul_only = True
        self.emit(ZeroInit(tensor))

    def instr(self, op, args, produces=None):
        ins = Instr(op, [list(a) for a in args])
        # the mask= its operands were narrowed by (masks.apply_mask), kept on a fresh result
        # so that `dst[...] = call(..., mask=m)` narrows dst the same way (tiles.assign)
        mask, self.last_mask = getattr(self, "last_mask", None), None
        if produces is not None:
            produces.producers.append(ins)
            if mask is not None:
                produces.mask_applied = mask
        if any(getattr(v, "masked_out", False) for v in ins.views()):
            return ins  # a mask= that fails for the whole tile: the instruction writes nothing
        for v in ins.views():
            self.note_use(v, ins)
        return self.emit(ins)

    def note_use(self, view, ins):
        t = view.tensor
        if ins not in t.producers and ins.args and ins.args[0][1] is not view:
            t.read_elsewhere = True
            if t.zero_state == "pending":
                t.zero_state = "needed" if t.zero_fill else "unset"
        if ins.args and ins.args[0][1] is view and ins.op != "matmul":
            t.matmul_only = False
        if ins.args and ins.args[0][1] is view and t.zero_state == "pending" and \
                ins.op != "matmul":
            t.zero_state = "covered" if view.covers_whole() else \
                ("needed" if t.zero_fill else "unset")

    def queue_for(self, tensor):
        if tensor.name not in self.queues:
            # 16 DMA queues per engine (DMA; model/hw/hw_config.h kDmaQueues)
            self.queues[tensor.name] = len(self.queues) % 16
        return self.queues[tensor.name]

    # ---- loops
    def open_loop(self, kind, start, stop, step, var_hint):
        var = self.unique(var_hint or "i")
        loop = Loop(var, kind, Lin.of(start), Lin.of(stop), step)
        # Loop splitting (splitting.py): the pieces still to trace after this one, the facts
        # (relations decided by a split) that hold throughout this piece, and the pieces of
        # the same source loop traced so far (this one last).
        loop.pending, loop.facts, loop.family, loop.substs = [], {}, [loop], {}
        splitting.add_bound_facts(loop)
        self.emit(loop)
        self.stack.append(loop.body)
        self.loops.append(loop)
        return loop

    def iterate(self, kind, start, stop, step, var_hint):
        """A traced loop: the body runs once with a symbolic variable, and once more for every
        further piece a condition on the variable split it into (`splitting.split`), each piece
        an ordinary loop of the program, in iteration order."""
        from .expr import SymInt

        loop = self.open_loop(kind, start, stop, step, var_hint)
        family = loop.family
        while True:
            yield SymInt(name_lin(loop.var))
            pending = loop.pending
            self.close_loop(loop)
            if not pending:
                return
            a, b, piece_step, facts, substs = pending[0]
            loop = self.open_loop(kind, a, b, piece_step, loop.var)
            loop.pending, loop.facts, loop.family = pending[1:], dict(facts), family
            loop.substs = dict(substs)
            splitting.add_bound_facts(loop)
            family.append(loop)

    def close_loop(self, loop):
        if not self.loops or self.loops[-1] is not loop:
            raise errors.NkiError("loops must nest: a loop ended while an inner one was open "
                                  "(a `break` out of a traced loop is not supported)")
        self.loops.pop()
        self.stack.pop()
        self.names.discard(loop.var)
        self._probe.clear()
        if not loop.body and (len(loop.family) > 1 or loop.pending):
            self.stack[-1].remove(loop)  # a piece whose branch does nothing
            return
        if loop.peel:
            if len(loop.family) > 1 or loop.pending:
                # a loop split into pieces (a piece may run no iteration): the group's tile is
                # zeroed before the first piece and every matmul accumulates
                block = self.stack[-1]
                at = next(k for k, s in enumerate(block) if any(s is f for f in loop.family))
                block[at:at] = [Instr("memset", [[None, ins.group_view], ["value", 0.0]],
                                      line=ins.line)
                                for ins in loop.peel]
                return
            self._peel(loop)

    def _peel(self, loop):
        """The first iteration of `loop` overwrites a zeroed PSUM tile: emit it separately with
        the matmul not accumulating, then the rest of the loop accumulating. Falls back to an
        explicit memset when the body declares buffers (a copy would duplicate them)."""
        loop.body[:] = [s for s in loop.body
                        if not (isinstance(s, BufferDecl) and s.tensor.dead)]
        block = self.stack[-1]
        at = next(k for k, s in enumerate(block) if s is loop)
        if any(isinstance(s, (BufferDecl, Loop, ZeroInit)) for s in loop.body):
            # zero the group's tile right before the loop instead
            block[at:at] = [Instr("memset", [[None, ins.group_view], ["value", 0.0]],
                                  line=ins.line)
                            for ins in loop.peel]
            return
        env = {loop.var: loop.start}
        first = []
        for s in loop.body:
            c = Instr(s.op, [[k, _subst_value(v, env)] for k, v in s.args], line=s.line)
            if s in loop.peel:
                c.set("accumulate", False)
            first.append(c)
        block[at:at] = first
        loop.start = loop.start.add(Lin.of(loop.step))

    # ---- truth values
    def truth_of(self, rel):
        """The truth value of a relation the shapes alone do not decide: decided over the
        params' domains and the enclosing loops' ranges when every case agrees; an `assert`
        becomes the param domain; otherwise an affine condition on loop variables, the program
        id and params splits the enclosing loop (splitting.py)."""
        where = errors.user_location()
        node = self.src.statement(*where) if where else None
        is_assert = isinstance(node, ast.Assert)
        # an assert keeps the rules it always had (it may narrow the domain); a branch is
        # decided over the params' domains and the pieces' facts as well
        decided = self.decided_over_loops(rel) if is_assert else splitting.decided(self, rel)
        if decided is not None:
            return decided
        if is_assert:
            for sub in ast.walk(node.test):
                if isinstance(sub, (ast.BoolOp, ast.UnaryOp)) and \
                        isinstance(getattr(sub, "op", None), (ast.Or, ast.Not)):
                    raise errors.NkiError(
                        "an assert with 'or' / 'not' on symbolic shapes (%s) cannot become the "
                        "param domain; fix the params with --param" % rel.text())
            self.assume(rel)
            return True
        if self.loops:
            return splitting.split(self, rel)
        names = [n for n in self.resolve(rel.lhs.sub(rel.rhs)).names() if n in self.params]
        if names:
            raise errors.NkiError(
                "this branch needs the value of %s (%s is symbolic); fix it with %s" %
                (", ".join(names), rel.text(),
                 " ".join("--param %s=VALUE" % n for n in names)))
        raise errors.NkiError("this branch depends on %s outside every loop: the program has "
                              "no branch, and loop splitting needs an enclosing loop" %
                              rel.text())

    def bounds(self, lin):
        """[lo, hi] of a linear form over loop variables with known ranges, else None."""
        lin = self.evaluate(lin)
        lo = hi = lin.const
        for atom, c in lin.terms:
            if atom.kind != "name":
                return None
            loop = next((l for l in self.loops if l.var == atom.args), None)
            if loop is None:
                return None
            start, stop = self.evaluate(loop.start), self.evaluate(loop.stop)
            if not (start.is_const() and stop.is_const()) or stop.const <= start.const:
                return None
            last = start.const + (stop.const - start.const - 1) // loop.step * loop.step
            a, b = c * start.const, c * last
            lo, hi = lo + min(a, b), hi + max(a, b)
        return lo, hi

    def decided_over_loops(self, rel):
        """True/False when `rel` holds (fails) in every iteration of the enclosing loops (the
        rule for asserts)."""
        b = self.bounds(rel.lhs.sub(rel.rhs))
        if b is None:
            return None
        lo, hi = b
        table = {"<": (hi < 0, lo >= 0), "<=": (hi <= 0, lo > 0), ">": (lo > 0, hi <= 0),
                 ">=": (lo >= 0, hi < 0), "==": (lo == hi == 0, lo > 0 or hi < 0),
                 "!=": (lo > 0 or hi < 0, lo == hi == 0)}
        always, never = table[rel.op]
        return True if always else False if never else None

    def assume(self, rel):
        lhs, rhs, op = self.resolve(rel.lhs), self.resolve(rel.rhs), rel.op
        d = SymBool(op, lhs, rhs).decided()
        if d is not None:
            if not d:
                raise errors.NkiError("assertion fails for every shape: %s" % rel.text())
            return
        if op in (">", ">="):
            lhs, rhs, op = rhs, lhs, {">": "<", ">=": "<="}[op]
        single = _bare_param(lhs, self.params)
        single_r = _bare_param(rhs, self.params)
        if op == "==":
            if single and single_r and list(self.params).index(single) < \
                    list(self.params).index(single_r):
                return self._alias(single_r, lhs)  # keep the name the kernel gave first
            if single and rhs.is_const() and self.params[single].named:
                return self._pin(single, rhs.const)
            if single_r and lhs.is_const() and self.params[single_r].named:
                return self._pin(single_r, lhs.const)
            if single and single not in rhs.names():
                return self._alias(single, rhs)
            if single_r and single_r not in lhs.names():
                return self._alias(single_r, lhs)
            m = _mod_of_param(lhs, self.params)
            if m and rhs == Lin.of(0):
                p = self.params[m[0]]
                p.mult = p.mult * m[1] // math.gcd(p.mult, m[1])
                p.lo = -(-p.lo // p.mult) * p.mult
                p.hi = p.hi // p.mult * p.mult
                return
        if op in ("<", "<="):
            if single and rhs.is_const():
                self.params[single].hi = min(self.params[single].hi,
                                             rhs.const - (1 if op == "<" else 0))
                return
            if single_r and lhs.is_const():
                self.params[single_r].lo = max(self.params[single_r].lo,
                                               lhs.const + (1 if op == "<" else 0))
                return
        self.requires.append((lhs, op, rhs))

    def _pin(self, name, value):
        """`assert d == 128` on a dim the kernel named: the param keeps its name, with the
        single-value domain [128, 128] (a registered twin declares it the same way; commands
        fill such a param in themselves)."""
        p = self.params[name]
        if not (p.lo <= value <= p.hi and value % p.mult == 0):
            raise errors.NkiError("assertion %s == %d contradicts its domain [%d, %d]" %
                                  (name, value, p.lo, p.hi))
        p.lo = p.hi = value

    def _alias(self, name, value):
        p = self.params[name]
        self.aliases[name] = value
        target = _bare_param(value, self.params)
        if target:
            q = self.params[target]
            q.lo, q.hi = max(q.lo, p.lo), min(q.hi, p.hi)
            q.mult = q.mult * p.mult // math.gcd(q.mult, p.mult)
        elif value.is_const():
            if not (p.lo <= value.const <= p.hi and value.const % p.mult == 0):
                raise errors.NkiError("assertion contradicts the domain of %s" % name)
        else:
            if p.lo > 1:
                self.requires.append((Lin.of(p.lo), "<=", value))
            if p.hi < DEFAULT_MAX:
                self.requires.append((value, "<=", Lin.of(p.hi)))

    # ---- SPMD
    def program_id(self, axis):
        from .expr import SymInt

        if self.grid is None:
            raise errors.NkiError("nl.program_id without a launch grid: give --grid N (the "
                                  "kernel[N] of the launch)")
        if not 0 <= axis < len(self.grid):
            raise errors.NkiError("nl.program_id: axis=%d is outside the launch grid's %d axes" %
                                  (axis, len(self.grid)))
        pid = name_lin("program_id")
        inner = Lin.of(1)
        for g in self.grid[axis + 1:]:
            inner = inner.mul(g)
        if not inner.is_const() or (axis > 0 and not self.grid[axis].is_const()):
            raise errors.NkiError("program_id(%d) of a grid with symbolic inner axes: fix the "
                                  "grid's params with --param" % axis)
        v = pid.floordiv(inner.const) if inner.const > 1 else pid
        if axis > 0:
            v = v.mod(self.grid[axis].const)
        return SymInt.make(v)

    def num_programs(self, axis):
        from .expr import SymInt

        if self.grid is None:
            return 1
        if axis is None:
            g = Lin.of(1)
            for a in self.grid:
                g = g.mul(a)
            return SymInt.make(g)
        return SymInt.make(self.grid[axis])

    # ---- output
    def live_params(self):
        return [p for n, p in self.params.items() if n not in self.aliases]

    def text(self, header_comments, options=None):
        """The program as .nkir; `options` (name -> value text) is its `options` line: the
        keyword arguments it was traced with, which `check --like` takes as build options."""
        from .program import Printer

        pr = Printer(self.resolve)
        out = ["# " + c for c in header_comments]
        out.append("kernel %s" % self.kernel_name)
        if options:
            out.append("options " + " ".join("%s=%s" % kv for kv in sorted(options.items())))
        if self.source_file:
            out.append("source %s" % _quoted(self.source_file))
        used = set()
        for t in self.hbm:
            for d in t.shape:
                used.update(self.resolve(d).names())
        for p in self.live_params():
            line = "param %s in [%d, %d]" % (p.name, p.lo, p.hi)
            if p.mult > 1:
                line += " multiple_of %d" % p.mult
            out.append(line)
        for lhs, op, rhs in self.requires:
            out.append("require %s %s %s" % (pr.lin(lhs), op, pr.lin(rhs)))
        if self.grid is not None:
            g = Lin.of(1)
            for axis in self.grid:
                g = g.mul(axis)
            out.append("grid %s" % pr.lin(g))
        for t in self.hbm:
            out.append("%s %s : hbm %s [%s]" % (t.role, t.name, t.dtype,
                                                ", ".join(pr.lin(d) for d in t.shape)))
        out.append("")
        pr.statements(self.root, 0, out)
        return "\n".join(out) + "\n"


def _quoted(name):
    """`name` as a `.nkir` string, escaped as the C++ printer does (backslash, quote, control
    bytes as \\xHH) so that the text parses back to the same name."""
    out = []
    for c in name:
        if c in '"\\':
            out.append("\\" + c)
        elif ord(c) < 0x20 or ord(c) == 0x7f:
            out.append("\\x%02x" % ord(c))
        else:
            out.append(c)
    return '"%s"' % "".join(out)


def _bare_param(lin, params):
    if lin.const == 0 and len(lin.terms) == 1 and lin.terms[0][1] == 1:
        a = lin.terms[0][0]
        if a.kind == "name" and a.args in params:
            return a.args
    return None


def _mod_of_param(lin, params):
    if lin.const == 0 and len(lin.terms) == 1 and lin.terms[0][1] == 1:
        a = lin.terms[0][0]
        if a.kind == "mod":
            p = _bare_param(a.args[0], params)
            if p:
                return (p, a.args[1])
    return None


def _subst_value(v, env):
    if isinstance(v, View):
        out = View(v.tensor, [[s.subst(env), n.subst(env), st] for s, n, st in v.dims],
                   list(v.order), v.units)
        out.partition_leads = getattr(v, "partition_leads", False)  # newapi/views.py
        if v.indirect is not None:
            ind = v.indirect
            out.indirect = Indirect(ind.dim, _subst_value(ind.offsets, env), ind.lo, ind.hi)
        return out
    if isinstance(v, Lin):
        return v.subst(env)
    return v

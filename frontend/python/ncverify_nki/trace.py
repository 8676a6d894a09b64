"""The trace in progress: params and their domain, the statement tree, names, and the rules for
Python truth values of symbolic shapes (an `assert` becomes the param domain, any other branch
on a symbolic value is an error that names the param)."""

import ast
import linecache
import math

from . import errors, per_program, splitting, unrolling
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


def python_loops(tr):
    """Whether `tr` traces the new API (`import nki`), whose loops have Python's semantics
    (unrolling.py); the legacy `neuronxcc.nki` traces every loop once."""
    return tr is not None and getattr(tr, "dialect", None) == "nki"


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
        self.targets = {}  # (file, line) -> the name its `NAME = ...` assigns, or None

    def assigned(self, filename, line):
        """The NAME of the statement `NAME = ...` (or `NAME: T = ...`) at the line, else None."""
        key = (filename, line)
        if key in self.targets:
            return self.targets[key]
        node = self.statement(filename, line)
        name = None
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            name = node.targets[0].id
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            name = node.target.id
        self.targets[key] = name
        return name

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
        self._next_suffix = {}  # base -> the first suffix unique() may find free
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
        # The new dialect's loops (unrolling.py): the source loops to unroll in this trace
        # (key -> why), the loop key and kind of every loop variable of this trace, the
        # NeedsUnroll raised (kept even if the kernel catches it), and per param given by
        # --param the lines that needed its value (key -> [(line, why)]).
        self.unroll = {}
        self.loop_vars = {}
        self.pending_unroll = None
        self.fixed_uses = {}
        # lines for the `.nkir` header, each naming its line: a reading the trace took where
        # the source allows two (tensor_copy(dtype=), an affine_range made sequential)
        self.header_notes = []
        # Per-program tracing (per_program.py): the program id of the pass being traced (None:
        # program_id is symbolic), the nl.shared_hbm tensors of pass 0 and of this pass in
        # allocation order.
        self.program_value = None
        self.first_shared, self.pass_shared = [], []
        # nisa.sendrecv calls of the passes, paired when every pass is traced (newapi/sendrecv.py)
        self.sendrecvs = []

    @property
    def per_program_reason(self):
        """Why the kernel is traced once per program (None: it is not)."""
        return getattr(self.unroll, "per_program", None)

    # ---- names
    def unique(self, base):
        """`base`, else the first free `base_k` (k = 2, 3, ...). `_next_suffix[base]` is a k below
        which every `base_k` is taken, so a kernel that allocates thousands of tensors from one
        line (nki-library's allocators, an unrolled loop) does not probe them all again."""
        base = base or "t"
        name, k = base, 2
        if name in self.names:
            # base_2 .. base_(k-1) are taken (no name was freed since): an unrolled loop names
            # thousands of copies of one temp, and scanning from 2 each time was quadratic
            k = self._next_suffix.get(base, 2)
            name = "%s_%d" % (base, k)
        while name in self.names:
            k += 1
            name = "%s_%d" % (base, k)
        self._next_suffix[base] = k + 1 if name != base else k
        self.names.add(name)
        return name

    def assigned_name(self, default="t"):
        """The target of the user's `NAME = ...` line, for naming a result."""
        where = errors.user_location()
        if where is None:
            return default
        name = self.src.assigned(*where)
        return default if name is None else name

    # ---- params
    def param(self, name, fixed=None):
        p = Param(self.unique(name), fixed)
        self.params[p.name] = p
        errors.register_param_name(p.name)
        return p

    def evaluate(self, lin):
        """`lin` with asserted equalities substituted and every param whose domain is a single
        value replaced by it: what Python-level decisions (if, int(), range()) may use."""
        if not lin.terms:  # a constant (most sizes): nothing to resolve or substitute
            return lin
        lin = self.resolve(lin)
        terms = lin.terms
        if not terms:
            return lin
        if len(terms) == 1 and not lin.const and terms[0][1] == 1 and \
                terms[0][0].kind == "name":
            # one param (a size the kernel named: `d, n = q.shape`): its value when its domain
            # is one value (what the substitution below gives), else itself
            p = self.params.get(terms[0][0].args)
            return Lin.of(p.lo) if p is not None and p.lo == p.hi else lin
        names = lin.names()
        fixed = {n: Lin.of(p.lo) for n, p in self.params.items()
                 if p.lo == p.hi and n in names}
        return lin.subst(fixed) if fixed else lin

    def resolve(self, lin):
        terms = lin.terms
        if not terms or not self.aliases:  # (asked for every size the printer writes)
            return lin
        if len(terms) == 1 and not lin.const and terms[0][1] == 1 and \
                terms[0][0].kind == "name":
            # a name asserted equal to a constant (`assert d == 128`; most symbolic sizes): the
            # constant, which the substitution below also arrives at
            to = self.aliases.get(terms[0][0].args)
            if to is not None and not to.terms:
                return to
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

    def sizes_known(self, shape):
        """A size of the program id (a tensor's shape is params only, model/ir/validate.cpp):
        the kernel is traced once per program (per_program.py)."""
        if self.program_value is not None:  # per_program.request asks for nothing then
            return
        for d in shape:
            lin = Lin.of(d)
            # (request's own test first: the message is made only for a size that names the
            # program id; nearly every size is a constant or a shape param)
            if not lin.terms or per_program.PROGRAM_ID not in self.resolve(lin).names():
                continue
            exc = per_program.request(self, lin, "a tensor's size (%s)" % lin.text())
            if exc is not None:
                raise exc

    def loop_free_sizes(self, sizes):
        """`sizes` with each size that names a loop variable replaced by its value when it is
        the same in every iteration (`min(n, i * 128 + 128) - i * 128` over a loop whose split
        left one iteration): a tensor's shape is params only (model/ir/validate.cpp). A size
        that varies is the loop variable's Python value (the new dialect unrolls the loop), else
        an error at the kernel's line."""
        out = []
        for d in sizes:
            lin = Lin.of(d)
            if not lin.terms or not any(n in self.loop_vars for n in self.resolve(lin).names()):
                out.append(d)
                continue
            b = self.bounds(lin)
            if b is not None and b[0] == b[1]:
                out.append(Lin.of(b[0]))
                continue
            exc = self.needs_value(lin, "a tensor's size (%s)" % lin.text())
            if exc is not None:
                raise exc
            raise errors.NkiError("a tensor's size (%s) changes with a loop variable; a "
                                  "tensor's shape may use shape params only" % lin.text())
        return out

    def declare(self, tensor, bufs=None):
        self.sizes_known(tensor.shape)
        # (through the instance dict, as program.Tensor.__init__: once per tensor made)
        tensor.__dict__.update(decl=self.emit(BufferDecl(tensor, bufs or tensor.bufs)),
                               block=self.stack[-1])
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
        # (through the instance dict, as program.Tensor.__init__: every PSUM tile made)
        tensor.__dict__.update(zero_state="pending", zero_fill=zeros, matmul_only=True)
        self.emit(ZeroInit(tensor))

    def instr(self, op, args, produces=None):
        ins = Instr(op, [list(a) for a in args])
        # the mask= its operands were narrowed by (masks.apply_mask), kept on a fresh result
        # so that `dst[...] = call(..., mask=m)` narrows dst the same way (tiles.assign)
        # (cleared only when set: a write to the tracer, a sealed object, looks at the stack)
        mask = getattr(self, "last_mask", None)
        if mask is not None:
            self.last_mask = None
        if produces is not None:
            produces.producers.append(ins)
            if mask is not None:
                produces.mask_applied = mask
        views = ins.views()
        for v in views:
            if getattr(v, "masked_out", False):
                return ins  # a mask= that fails for the whole tile: the instruction writes nothing
        # The operands are read before the destination is written: `tensor_tensor z, z, t` on
        # an nl.zeros PSUM tile reads the zeros (its fill is needed), whereas the destination
        # first would mark the tile wholly overwritten and drop the fill (the interpreter then
        # reported an uninitialised read of a correct kernel).
        dst = ins.args[0][1] if ins.args else None
        for v in views:
            if v is not dst:
                self.note_use(v, ins)
        if any(v is dst for v in views):
            if any(a[1] is dst for a in ins.args[1:]):  # the same view also an operand
                self.note_use(dst, ins, read=True)
            self.note_use(dst, ins)
        self.stack[-1].append(ins)  # (emit, inline)
        return ins

    def note_use(self, view, ins, read=False):
        t = view.tensor
        args = ins.args
        if not args:
            return
        # (the flags are written through the instance dict, and only when they change: a write
        # to a sealed object looks at the caller's frame, sandbox._seal, and this runs for every
        # operand of every call)
        if read or args[0][1] is not view:  # read
            if ins not in t.producers:
                if not t.read_elsewhere:
                    t.__dict__["read_elsewhere"] = True
                if t.zero_state == "pending":
                    t.__dict__["zero_state"] = "needed" if t.zero_fill else "unset"
            return
        if ins.op != "matmul":  # written by another instruction than a matmul
            if t.matmul_only:
                t.__dict__["matmul_only"] = False
            if t.zero_state == "pending":
                t.__dict__["zero_state"] = "covered" if view.covers_whole() else \
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

    def iterate(self, kind, start, stop, step, var_hint, where=None, dynamic=False):
        """A traced loop: the body runs once with a symbolic variable, and once more for every
        further piece a condition on the variable split it into (`splitting.split`), each piece
        an ordinary loop of the program, in iteration order. In the new dialect (`where`: the
        `for` statement's file and line) a Python loop is unrolled instead when an earlier
        trace found that its body cannot stand for every iteration, or when its bounds are
        small constants; after each piece the body's Python effects are checked
        (unrolling.py). `dynamic`: an on-device loop (nl.fori_loop, nl.dynamic_range), traced
        once as NKI does; its variable is a register, never a Python value."""
        from .expr import SymInt

        key = unrolling.loop_key(where)
        snapshot = None
        if python_loops(self) and not dynamic:
            if key in self.unroll:
                yield from self._unrolled(start, stop, step, key, self.unroll[key])
                return
            s, e = Lin.of(start), Lin.of(stop)
            se, ee = self.evaluate(s), self.evaluate(e)
            if se.is_const() and ee.is_const() and \
                    len(range(se.const, ee.const, step)) <= unrolling.SMALL_TRIP_COUNT:
                for b in (s, e):
                    self.note_fixed(b, "a loop of %d iterations unrolled: its bounds were known"
                                    % len(range(se.const, ee.const, step)))
                yield from range(se.const, ee.const, step)
                return
            snapshot = unrolling.snapshot_at(where)
            why = snapshot.predicted() if snapshot is not None else None
            if why is not None:  # what the body does needs Python iterations: no re-trace
                self.unroll[key] = why
                yield from self._unrolled(start, stop, step, key, why)
                return
        loop = self.open_loop(kind, start, stop, step, var_hint)
        loop.key = key
        if python_loops(self):
            self.loop_vars[loop.var] = (key, dynamic)
        family = loop.family
        while True:
            yield SymInt(name_lin(loop.var))
            if snapshot is not None:
                why = snapshot.changes()
                if why is not None:
                    raise self.unroll_loops([key], "its body %s" % why)
            pending = loop.pending
            self.close_loop(loop)
            if python_loops(self) and kind == "affine_range" and not dynamic:
                from .newapi import carried

                carried.settle(self, loop, step, where)
            if not pending:
                return
            a, b, piece_step, facts, substs = pending[0]
            self.names.discard(loop.var)  # the next piece keeps the variable's name
            loop = self.open_loop(kind, a, b, piece_step, loop.var)
            loop.key = key
            loop.pending, loop.facts, loop.family = pending[1:], dict(facts), family
            loop.substs = dict(substs)
            splitting.add_bound_facts(loop)
            family.append(loop)

    def _unrolled(self, start, stop, step, key, why):
        """The iterations of a loop the new dialect unrolls (its bounds must be known)."""
        bounds = [self.evaluate(Lin.of(start)), self.evaluate(Lin.of(stop))]
        names = [n for b in bounds for n in self.resolve(b).names()]
        if not all(b.is_const() for b in bounds):
            for b in bounds:
                exc = per_program.request(self, b, "a loop unrolled (%s)" % why)
                if exc is not None:
                    raise exc
            params = [n for n in names if n in self.params]
            fix = "; fix %s" % " ".join("--param %s=VALUE" % n for n in dict.fromkeys(params)) \
                if params else ""
            raise errors.NkiError(
                "this loop runs its body's Python code once per iteration and must be unrolled "
                "(%s), but its bounds (%s, %s) are symbolic%s" %
                (why, bounds[0].text(), bounds[1].text(), fix))
        for b in (start, stop):
            self.note_fixed(Lin.of(b), "loop unrolled: %s" % why)
        return iter(range(bounds[0].const, bounds[1].const, step))

    def unroll_loops(self, keys, why):
        """A NeedsUnroll for the loops `keys`, kept (a kernel may catch it)."""
        exc = unrolling.NeedsUnroll([k for k in keys if k is not None], why)
        if not exc.keys:
            return errors.NkiError(why)
        self.pending_unroll = self.pending_unroll or exc
        return exc

    def needs_value(self, lin, what):
        """In the new dialect, the exception for `what` (a Python use of a value) on `lin`
        when it mentions a loop variable: re-trace with those loops unrolled, or an error for
        an on-device loop's register. None: the caller's own error applies."""
        if not python_loops(self):
            return None
        loops = [self.loop_vars[n] for n in lin.names() if n in self.loop_vars]
        if not loops:
            return None
        if any(dynamic for _, dynamic in loops):
            return errors.NkiError(
                "%s needs a Python value of %s, the index of an on-device loop (nl.fori_loop / "
                "nl.dynamic_range): a register of the device, usable only in indices and loop "
                "bounds (NKI raises TypeError too)" % (what, lin.text()))
        where = errors.user_location()
        return self.unroll_loops(
            [k for k, _ in loops],
            "line %d needs the loop variable's Python value: %s" %
            (where[1] if where else 0, what))

    def note_fixed(self, lin, why):
        """Records that a Python decision at the current line needed the value of params the
        user fixed with --param (the `.nkir` header lists them, `fixed_report`)."""
        if not python_loops(self):
            return
        names = [n for n in self.resolve(lin).names()
                 if n in self.params and self.params[n].fixed is not None]
        if not names:
            return
        where = errors.user_location()
        if where is not None and isinstance(self.src.statement(*where), ast.Assert):
            return  # an assert on a symbolic shape becomes its domain: no value needed
        line = where[1] if where else 0
        for n in names:
            uses = self.fixed_uses.setdefault(n, [])
            if (line, why) not in uses and len(uses) < 4:
                uses.append((line, why))

    def fixed_report(self):
        """Header lines: per param the user fixed, whether the trace needed its value, where."""
        out = []
        for n, p in self.params.items():
            if p.fixed is None or n in self.aliases or not python_loops(self):
                continue
            uses = self.fixed_uses.get(n)
            if uses:
                out.append("param %s fixed to %d; its value was used by: %s" % (
                    n, p.fixed, "; ".join("line %d (%s)" % u for u in uses)))
            else:
                out.append("param %s fixed to %d by --param; no Python decision needed it "
                           "(leave it out to prove for its whole domain)" % (n, p.fixed))
        return out

    def left_loops(self):
        """New dialect: the NeedsUnroll for loops still open when an enclosing one ends or the
        kernel returns (left by `break` or `return`: Python iterations, unrolled), else None."""
        keys = [getattr(l, "key", None) for l in self.loops]
        if not python_loops(self) or not any(keys):
            return None
        return self.unroll_loops(keys, "the body leaves the loop early (break or return)")

    def close_loop(self, loop):
        if not self.loops or self.loops[-1] is not loop:
            if loop in self.loops:
                self.loops = self.loops[self.loops.index(loop) + 1:]
                exc = self.left_loops()
                if exc is not None:
                    raise exc
            raise errors.NkiError("loops must nest: a loop ended while an inner one was open "
                                  "(a `break` out of a traced loop is not supported)")
        self.loops.pop()
        self.stack.pop()
        if not python_loops(self):  # the new dialect keeps an ended loop's name (needs_value)
            self.names.discard(loop.var)
            self._next_suffix.clear()  # a name is free again
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
        lin = self.resolve(rel.lhs.sub(rel.rhs))
        if self.loops:
            if not python_loops(self):
                try:
                    return splitting.split(self, rel)
                except errors.NkiError as e:
                    raise per_program.request(self, lin, "a Python `if` on %s" % rel.text()) \
                        or e
            self._python_if(lin, rel)
            try:
                return splitting.split(self, rel)
            except errors.NkiError as e:
                exc = self.needs_value(lin, "a Python `if` that no loop split expresses (%s)" %
                                       e.message) or \
                    per_program.request(self, lin, "a Python `if` on %s" % rel.text())
                raise exc or e
        if python_loops(self):
            self._python_if(lin, rel)
        exc = per_program.request(self, lin, "a Python `if` on %s outside every loop" %
                                  rel.text())
        if exc is not None:
            raise exc
        names = [n for n in lin.names() if n in self.params]
        if names:
            raise errors.NkiError(
                "this branch needs the value of %s (%s is symbolic); fix it with %s" %
                (", ".join(names), rel.text(),
                 " ".join("--param %s=VALUE" % n for n in names)))
        raise errors.NkiError("this branch depends on %s outside every loop: the program has "
                              "no branch, and loop splitting needs an enclosing loop" %
                              rel.text())

    def _python_if(self, lin, rel):
        """New dialect: an `if` on a register (an on-device loop's index) is an error, one on
        the variable of a loop that has ended unrolls that loop (Python's value is its last)."""
        open_vars = {l.var for l in self.loops}
        bad = [n for n in lin.names() if n in self.loop_vars and
               (self.loop_vars[n][1] or n not in open_vars)]
        if bad:
            exc = self.needs_value(Lin.of(0).add(name_lin(bad[0])),
                                   "a Python `if` on %s" % rel.text())
            if exc is not None:
                raise exc

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
        if per_program.PROGRAM_ID in lhs.names() or per_program.PROGRAM_ID in rhs.names():
            # A program's domain (its `require` lines) is over params only, and the program id
            # is none: the kernel is traced once per program, where the id is a number.
            exc = per_program.request(self, lhs.sub(rhs), "an assertion (%s)" % rel.text())
            if exc is not None:
                raise exc
            raise errors.NkiError("assertion %s names the program id, which a program's domain "
                                  "cannot state (a launch grid of known size, at most %d "
                                  "programs, is traced once per program)" %
                                  (rel.text(), per_program.MAX_GRID))
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
        if self.program_value is not None and (lhs, op, rhs) in self.requires:
            return  # the same assert in a later per-program pass
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
        if self.program_value is not None:  # a per-program pass (per_program.py)
            return per_program.program_id_value(self, axis)
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
            line = "%s %s : hbm %s [%s]" % (t.role, t.name, t.dtype,
                                            ", ".join(pr.lin(d) for d in t.shape))
            shape = t.__dict__.get("interface_shape")
            if shape is not None and t.role in ("input", "output"):
                # a view split its dims (newapi/refine.py): the same bytes, row-major; `run`
                # takes and gives arrays in the kernel's shape
                line += " interface [%s]" % ", ".join(pr.lin(d) for d in shape)
            out.append(line)
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

"""An `nl.affine_range` loop of the new API whose iterations depend on each other.

Since NKI 0.2 `affine_range` is "an alias for Python's range()", fully unrolled (the 0.6
nki.language docstring): its iterations run in order, and a body may read what an earlier
iteration wrote (the SDK's fused_mamba v1/v2 add every state's product into one SBUF tile
allocated before the loop). The tracer keeps such a loop a loop of the program (loops.py); an
affine loop of the IR promises independent iterations (the interpreter reports a carried
dependency, the compiler rotates its tiles), so a body that carries a dependency makes the loop
sequential instead (frontend/README.md, "Loops of the new API").
"""

import re

from .. import errors
from ..program import BufferDecl, Instr, Printer, View

# Named arguments an instruction writes besides its destination (the first argument).
_WRITTEN = ("reduce_res",)


class _Walk:
    """The body's accesses in program order: the tensors it declares, and per tensor made
    outside the body whether it is written, and the reads that no earlier write of the same
    iteration covers (each instruction's reads come before its writes)."""

    def __init__(self, printer):
        self.printer = printer
        self.local, self.written, self.covered = set(), set(), {}
        self.exposed = {}  # tensor id -> [(view, its text)] read before this iteration wrote it

    def text(self, v):
        try:
            return self.printer.access(v)
        except errors.NkiError:  # not one region (several blocks at once): never covered
            return None

    def walk(self, stmts, depth):
        for s in stmts:
            if isinstance(s, BufferDecl):
                self.local.add(id(s.tensor))
            elif isinstance(s, Instr):
                views = [(k, name, v) for k, (name, v) in enumerate(s.args)
                         if isinstance(v, View)]
                for k, name, v in views:
                    if not ((k == 0 and name is None) or name in _WRITTEN):
                        self.read(v)
                    if v.indirect is not None:
                        self.read(v.indirect.offsets)
                for k, name, v in views:
                    if (k == 0 and name is None) or name in _WRITTEN:
                        self.write(v, depth)
            elif isinstance(getattr(s, "body", None), list):
                self.walk(s.body, depth + 1)

    def read(self, v):
        key = id(v.tensor)
        cover = self.covered.get(key, set())
        text = self.text(v)
        if "*" in cover or (text is not None and text in cover):
            return
        self.exposed.setdefault(key, []).append((v, text))

    def write(self, v, depth):
        key = id(v.tensor)
        self.written.add(key)
        if depth == 0:  # a write inside an inner loop covers only part of each iteration
            text = "*" if v.covers_whole() else self.text(v)
            if text is not None:
                self.covered.setdefault(key, set()).add(text)


def carried_through(loop, resolve):
    """The name of a tensor made before `loop` that an iteration of its body may read after an
    earlier iteration wrote it: the body writes it and reads it where no earlier write of the
    same iteration covers the read, other than an update of one region that moves with the loop
    variable (`x[i] = f(x[i])`); None when there is none."""
    w = _Walk(Printer(resolve))
    w.walk(loop.body, 0)
    var = re.compile(r"\b%s\b" % re.escape(loop.var))
    for key, reads in w.exposed.items():
        if key in w.local or key not in w.written:
            continue
        if all(text is not None and var.search(text) and text in w.covered.get(key, ())
               for _, text in reads):
            continue  # each read is of the region the same iteration then writes
        return reads[0][0].tensor.name
    return None


def settle(tr, loop, step, where):
    """After a piece of a new-API `affine_range` loop is traced: make it sequential when its
    body carries a dependency (noted in the `.nkir` header), or, when a remainder split made it
    strided (residue classes run out of order), ask for the loop to be unrolled."""
    name = carried_through(loop, tr.resolve)
    if name is None:
        return
    if any(piece.step != step for piece in loop.family):
        raise tr.unroll_loops([loop.key], "its iterations depend on each other through '%s' "
                              "and a remainder split would run them out of order" % name)
    loop.kind = "sequential_range"
    note = ("line %d: nl.affine_range loop '%s' reads in one iteration what an earlier one "
            "wrote (through '%s'); affine_range is Python's range since NKI 0.2, so it is a "
            "sequential loop of the program" % (where[1] if where else 0, loop.var, name))
    if note not in tr.header_notes:
        tr.header_notes.append(note)

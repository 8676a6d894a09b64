"""`nki.isa.sendrecv` (NKI 0.2-0.6; the 0.6 reference's docstring, aws-neuron-sdk
nki/api/nki/isa/__init__.py at 81ce03ae, https://awsdocs-neuron.readthedocs-hosted.com/en/latest/
nki/api/generated/nki.isa.sendrecv.html): the two NeuronCores of a logical NeuronCore (LNC2)
exchange tiles. The current core sends its `src` tile to the `dst` location of core
`send_to_rank` while it receives, from core `recv_from_rank`, into its own `dst`; both tiles in
SBUF, of one dtype and one shape; ranks 0 or 1; NeuronCore-v3 or newer.

The model's instruction is a DMA into the peer's buffer (an access naming another core, `.core(r)`
in `.nkir`), which the interpreter runs as a rendezvous: a core waits at it until the core it
names reaches its side, then both move their tiles in one step (model/interp/README.md "SPMD").
So the exchange is priced as the DMA of the tile it is (dma_engine.gpsimd_dma, the GpSimd
engine's own low-latency DMA, is priced as that DMA too; its documented size limit is checked).

- One trace for every program (the kernel's Python never needs the program id's value): the call
  is one statement, `dma_copy dst'.core(send_to_rank), src`, with the ranks expressions in
  program_id; each core's side is the same statement. dst' is dst with the program id replaced
  by send_to_rank: the location the peer's own execution names as its dst. The pairing is checked at trace time for
  every core of the grid: the core that core c sends to receives from c.
- Traced once per program (per_program.py): each program's call is its own statement under its
  own guard. Program p's k-th call writes the dst of the k-th call of program q = send_to_rank,
  which must receive from p with the same pipe_id and a dst of src's dtype, partition count and
  elements per partition: checked when every pass is traced (`link`), refused otherwise at the call's line. The dst tensors that
  calls pair are one buffer, declared once outside the guards (each core its own copy, as any
  buffer), so a core's write lands in the buffer its peer reads. Each call must be outside the
  kernel's traced loops (the k-th execution is then the k-th call) and its dst declared at the
  kernel's top level.
- pipe_id: calls of one pipe synchronise. The model pairs the k-th call of one core with the k-th
  of its peer whatever the pipe, so differing pipe_ids across a pair are refused, not guessed.
"""

from .. import errors, trace
from ..expr import Lin
from ..signatures import api
from ..tiles import as_view
from .constants import current_version, dma_engine, nc_version
from .isa import _name_arg

_CALL = "nisa.sendrecv"
_ENGINES = ("dma", "gpsimd_dma")
# dma_engine.gpsimd_dma: at most this many bytes per partition, by the dtype's width (the page).
_GPSIMD_BYTES = {4: 1024, 2: 512, 1: 256}


def written_core(send):
    """The core whose dst a call's DMA writes: the one it sends to (the page: "sends its src tile
    to the dst location of the target NeuronCore specified by send_to_rank"). The differential
    test plants a wrong answer here and checks that its comparison catches it."""
    return send


@api("nisa.sendrecv")
def sendrecv(src, dst, send_to_rank, recv_from_rank, pipe_id, dma_engine=dma_engine.dma,
             name=None):
    _name_arg(_CALL, name)
    tr = trace.current()
    s, d = as_view(src, "src"), as_view(dst, "dst")
    if current_version() < nc_version.gen3:
        raise errors.NkiError("%s needs NeuronCore-v3 or newer (--gen trn2 or trn3; LNC2); this "
                              "kernel is traced for NeuronCore-v%d" %
                              (_CALL, int(current_version())))
    for what, v in (("src", s), ("dst", d)):
        if v.tensor.mem != "sbuf":
            raise errors.NkiError("%s: %s is in %s; src and dst must both be in SBUF" %
                                  (_CALL, what, v.tensor.mem.upper()))
        if v.indirect is not None:
            raise errors.NkiError("%s: %s is an indirectly addressed access; the page's src and "
                                  "dst are tiles" % (_CALL, what))
    if s.tensor.dtype != d.tensor.dtype:
        raise errors.NkiError("%s: src is %s, dst %s; they must have the same data type" %
                              (_CALL, s.tensor.dtype, d.tensor.dtype))
    _same_shape(tr, s, d, "src", "dst", "they must have the same shape and layout")
    if isinstance(pipe_id, bool) or not isinstance(pipe_id, int) or pipe_id < 0:
        raise errors.NkiError("%s: pipe_id= takes a non-negative Python int (the synchronisation "
                              "group), not %r" % (_CALL, pipe_id))
    engine = _engine(dma_engine)
    if engine == "gpsimd_dma":
        _gpsimd_size(tr, s)
    grid = _lnc2_grid(tr)
    send = _rank(tr, send_to_rank, "send_to_rank")
    recv = _rank(tr, recv_from_rank, "recv_from_rank")
    queue = tr.queue_for(s.tensor)
    if tr.program_value is None:
        _check_pairing(tr, send, recv, grid)
        # the peer's dst is the dst argument of the peer's own execution of this statement:
        # the view with the program id the peer's (`out[:, (1 - pid) * F]` on core c names
        # columns (1 - s) * F of core s = send(c)), not this core's view
        peer_dst = _at_program(d, send)
        tr.instr("dma_copy", [(None, _on_core(peer_dst, written_core(send))), (None, s),
                              ("queue", queue)])
        return None
    # traced once per program: program p's side now, its dst filled in by `link`
    if tr.loops:
        raise errors.NkiError("%s inside a traced loop of a kernel traced once per program id "
                              "(%s) is not modelled: each program's calls are paired in order, "
                              "and a loop's trip count may differ between programs" %
                              (_CALL, tr.per_program_reason))
    p = tr.program_value
    for what, r in (("send_to_rank", send), ("recv_from_rank", recv)):
        if not r.is_const() or r.const not in range(grid):
            raise errors.NkiError("%s: %s is %s in program %d; it must be 0 or 1" %
                                  (_CALL, what, r.text(), p))
    ins = tr.instr("dma_copy", [(None, _on_core(d, Lin.of(written_core(send.const)))), (None, s),
                                ("queue", queue)])
    tr.sendrecvs.append(dict(program=p, k=sum(1 for r in tr.sendrecvs if r["program"] == p),
                             ins=ins, src=s, dst=d, send=send.const, recv=recv.const,
                             pipe=pipe_id, line=errors.kernel_line(),
                             where=errors.user_location(), body=tr.stack[-1]))
    return None


def _engine(value):
    if isinstance(value, int) and not isinstance(value, bool):
        raise errors.NkiError("%s: dma_engine=%d: a raw integer is not an engine; use "
                              "nisa.dma_engine.dma or nisa.dma_engine.gpsimd_dma" % (_CALL, value))
    if not isinstance(value, str) or value not in _ENGINES:
        raise errors.NkiError("%s: dma_engine= takes nisa.dma_engine.dma or "
                              "nisa.dma_engine.gpsimd_dma, not %r" % (_CALL, value))
    return value


def _gpsimd_size(tr, s):
    from ..program import DTYPE_BYTES

    width = DTYPE_BYTES[s.tensor.dtype]
    per_partition = Lin.of(width)
    for size in s.logical_lins()[1:]:
        per_partition = per_partition.mul(size)
    per_partition = tr.evaluate(per_partition)
    limit = _GPSIMD_BYTES.get(width)
    if limit is None or not per_partition.is_const():
        raise errors.NkiError("%s: dma_engine=gpsimd_dma moves at most 1024, 512 or 256 bytes "
                              "per partition for 32-, 16- or 8-bit types; this tile's %s bytes "
                              "per partition (%s) cannot be checked" %
                              (_CALL, per_partition.text(), s.tensor.dtype))
    if per_partition.const > limit:
        raise errors.NkiError("%s: dma_engine=gpsimd_dma moves at most %d bytes per partition "
                              "of a %d-bit type; this tile has %d" %
                              (_CALL, limit, 8 * width, per_partition.const))


def _lnc2_grid(tr):
    from .. import per_program

    g = per_program.grid_size(tr)
    if g != 2:
        raise errors.NkiError("%s exchanges tiles between the two NeuronCores of a logical "
                              "NeuronCore: it needs an LNC2 launch (kernel[2], a grid of 2); "
                              "this kernel's grid is %s" %
                              (_CALL, "unknown" if g is None else g))
    return g


def _rank(tr, value, what):
    try:
        lin = Lin.of(value)
    except TypeError:
        raise errors.NkiError("%s: %s= takes an integer rank (0 or 1), not %r" %
                              (_CALL, what, value)) from None
    return tr.evaluate(lin)


def _check_pairing(tr, send, recv, grid):
    """One statement for every core: for each core c, the core it sends to and the core it
    receives from are ranks, and the core c sends to receives from c."""
    from ..per_program import PROGRAM_ID

    def at(lin, c):
        v = lin.subst({PROGRAM_ID: Lin.of(c)})
        v = tr.evaluate(v)
        return v.const if v.is_const() else None

    for c in range(grid):
        s, r = at(send, c), at(recv, c)
        for what, lin, v in (("send_to_rank", send, s), ("recv_from_rank", recv, r)):
            if v is None or v not in range(grid):
                raise errors.NkiError("%s: %s = %s is %s on core %d; it must be 0 or 1" %
                                      (_CALL, what, lin.text(), "not a constant" if v is None
                                       else v, c))
        back = at(recv, s)
        if back != c:
            raise errors.NkiError("%s: core %d sends to core %d (send_to_rank = %s), which "
                                  "receives from core %d (recv_from_rank = %s): the two sides "
                                  "of an exchange must name each other" %
                                  (_CALL, c, s, send.text(), back, recv.text()))


def _same_shape(tr, a, b, what_a, what_b, why):
    la = [tr.evaluate(Lin.of(x)) for x in a.logical_lins()]
    lb = [tr.evaluate(Lin.of(x)) for x in b.logical_lins()]
    if len(la) != len(lb) or any(x != y for x, y in zip(la, lb)):
        raise errors.NkiError("%s: %s is [%s], %s [%s]; %s" %
                              (_CALL, what_a, ", ".join(x.text() for x in la), what_b,
                               ", ".join(y.text() for y in lb), why))


def _at_program(view, pid):
    """`view` with the program id replaced by `pid` (a Lin)."""
    from ..per_program import PROGRAM_ID

    env = {PROGRAM_ID: pid}
    return view.with_dims([[Lin.of(a).subst(env), Lin.of(n).subst(env), st]
                           for a, n, st in view.dims])


def _on_core(view, core):
    out = view.with_dims([list(x) for x in view.dims])
    out.__dict__.update(units=view.units, core=Lin.of(core))
    return out


# ------------------------------------------------------------------ traced once per program


def link(tr, outer, guards):
    """After every pass (per_program.trace_passes): program p's k-th call writes the dst of
    program q's k-th call (q its send_to_rank), the paired dst tensors become one buffer declared
    in `outer` before the first of `guards`. Refused at the call's line when the programs' calls
    do not pair."""
    calls = {}
    for r in tr.sendrecvs:
        calls.setdefault(r["program"], []).append(r)
    if not calls:
        return
    parent = {}

    def find(t):
        while parent.get(id(t), t) is not t:
            t = parent[id(t)]
        return t

    for p in sorted(calls):
        for r in calls[p]:
            _top_level_dst(tr, r)
            q = written_core(r["send"])
            theirs = calls.get(q, [])
            if r["k"] >= len(theirs):
                _refuse(r, "program %d's call #%d sends to program %d, which makes %d "
                        "nisa.sendrecv call%s" % (p, r["k"] + 1, q, len(theirs),
                                                  "" if len(theirs) == 1 else "s"))
            peer = theirs[r["k"]]
            if peer["recv"] != p:
                _refuse(r, "program %d's call #%d sends to program %d, whose call #%d (line %d) "
                        "receives from program %d: the k-th calls of two programs pair" %
                        (p, r["k"] + 1, q, r["k"] + 1, peer["line"], peer["recv"]))
            if peer["pipe"] != r["pipe"]:
                _refuse(r, "program %d's call #%d has pipe_id=%d, program %d's call #%d (line %d) "
                        "pipe_id=%d: the model pairs calls in order, which calls of different "
                        "pipes need not follow" % (p, r["k"] + 1, r["pipe"], q, r["k"] + 1,
                                                  peer["line"], peer["pipe"]))
            if peer["dst"].tensor.dtype != r["src"].tensor.dtype:
                _refuse(r, "program %d sends %s, program %d's dst (line %d) is %s" %
                        (p, r["src"].tensor.dtype, q, peer["line"], peer["dst"].tensor.dtype))
            _same_layout(tr, r, peer, p, q)
            r["ins"].args[0][1] = _on_core(peer["dst"], Lin.of(q))
            a, b = find(r["dst"].tensor), find(peer["dst"].tensor)
            if a is not b:
                parent[id(b)] = a
    # one buffer per group of paired dst tensors, named as its first member
    groups = {}
    for r in tr.sendrecvs:
        t = r["dst"].tensor
        groups.setdefault(id(find(t)), (find(t), {}))[1][id(t)] = (t, r)
    first = min(outer.index(g) for g in guards if any(g is s for s in outer))
    for rep, members in groups.values():
        for t, r in members.values():
            if t is not rep:
                _same_buffer(tr, rep, t, r)
        for t, _ in members.values():
            t.block.remove(t.decl)
            if t is not rep:
                t.__dict__.update(name=rep.name)
        rep.__dict__.update(block=outer)
        outer.insert(first, rep.decl)
        first += 1


def _same_layout(tr, r, peer, p, q):
    """Program p's src lands in program q's dst: the page's rule for the two tiles of one call,
    "the same partition dimension size and the same number of elements per partition" (each
    program's own src and dst also have one shape; two programs' views of one exchange may
    differ in how the free elements are split, as nki-library's attention_tkg reshapes its
    result in one program only)."""
    def layout(v):
        lins = [tr.evaluate(Lin.of(x)) for x in v.logical_lins()]
        free = Lin.of(1)
        for x in lins[1:]:
            free = free.mul(x)
        return lins[0], tr.evaluate(free)

    (pa, fa), (pb, fb) = layout(r["src"]), layout(peer["dst"])
    if pa != pb or fa != fb:
        _refuse(r, "program %d's src is %s partitions of %s elements, program %d's dst (line %d) "
                "%s of %s: an exchange moves a tile of one partition count and one number of "
                "elements per partition" % (p, pa.text(), fa.text(), q, peer["line"], pb.text(),
                                            fb.text()))


def _top_level_dst(tr, r):
    t = r["dst"].tensor
    if t.block is not r["body"] or t.decl not in t.block:
        _refuse(r, "its dst '%s' is not declared at the kernel's top level in program %d (a "
                "kernel traced once per program id has each program's side under its own guard; "
                "the model makes the paired dst tensors one buffer declared outside the guards)"
                % (t.name, r["program"]))
    if t.dead:
        _refuse(r, "its dst '%s' was replaced by another tensor" % t.name)


def _same_buffer(tr, a, b, r):
    def text(t):
        return ("%s %s [%s]%s" % (t.mem, t.dtype, ", ".join(tr.resolve(x).text() for x in t.shape),
                                  "" if t.placement is None else " at (%s)" % ", ".join(
                                      tr.resolve(Lin.of(x)).text() for x in t.placement)))

    plain = all(t.fold is None and t.logical is None and t.bufs is None and
                all(m is None for m in t.mods) for t in (a, b))
    if not plain or text(a) != text(b):
        _refuse(r, "the dst tensors it pairs, '%s' (%s) and '%s' (%s), are not declared alike: "
                "the model makes them one buffer" % (a.name, text(a), b.name, text(b)))


def _refuse(r, why):
    raise errors.NkiError("%s: %s" % (_CALL, why), r["where"])

"""The Tensor-engine calls of `nki.isa` (NKI 0.2-0.6): nc_matmul and nc_transpose, with the rules
that depend on the generation the kernel is traced for (`--gen`; get_nc_version()). Sources: the
0.6 reference's docstrings (aws-neuron-sdk nki/api/nki/isa/__init__.py at 81ce03ae, pages
https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/generated/nki.isa.nc_matmul.html
and .../nki.isa.nc_transpose.html) and the Trainium2 architecture guide ("transpose mode",
nki/guides/architecture/trainium2_arch.rst)."""

import numpy as np

from .. import errors, ops, tiles, trace
from ..expr import Lin, SymBool
from ..program import Enum
from ..signatures import api, refuse
from ..tiles import as_view
from .constants import current_version, matmul_perf_mode, nc_version, unknown_engine
from .isa import _dst, _engine, _name_arg, _same_elements

_MM = "nisa.nc_matmul"


# ------------------------------------------------------------------ nc_matmul

@api("nisa.nc_matmul")
def nc_matmul(dst, stationary, moving, is_stationary_onezero=False, is_moving_onezero=False,
              is_transpose=False, accumulate=None, tile_position=(), tile_size=(),
              perf_mode=matmul_perf_mode.none, name=None):
    """dst (PSUM) = stationary.T @ moving, accumulated in fp32 (the page's "Accumulation mode"):
    accumulate=False overwrites dst; True adds to what a matmul wrote there; None (the default)
    overwrites at the first matmul writing a PSUM location and adds at the later ones. An
    `accumulate=(k > 0)` whose value depends on a loop variable splits the loop where it changes
    (splitting.py), each piece with its own constant flag."""
    _name_arg(_MM, name)
    d = _dst(_MM, dst, ("psum",))
    gen = current_version()
    for arg, v in (("is_stationary_onezero", is_stationary_onezero),
                   ("is_moving_onezero", is_moving_onezero), ("is_transpose", is_transpose)):
        if not isinstance(v, (bool, np.bool_)):
            raise errors.NkiError("%s: %s= takes True or False, not %r" % (_MM, arg, v))
    _check_perf_mode(perf_mode)
    flag = _accumulate_flag(accumulate)
    if is_transpose and gen >= nc_version.gen3:
        # (its dst dtype is stationary's: the transpose mode writes 16-bit PSUM for 16-bit data)
        _transpose_mode(d, stationary, moving, flag, tile_position, tile_size)
        return
    _check_dst_dtype(d, gen)
    _no_earlier_transpose_mode(d, flag)
    if flag is not None and any(loop.substs for loop in trace.current().loops):
        refuse(_MM, "accumulate", accumulate, "an enclosing affine_range was split into residue "
               "classes of its iterations (a condition on a remainder), which reorders them, "
               "and an explicit flag makes the order matter")
    _check_tiling(tile_position, tile_size, stationary, gen)
    s, m = _check_sizes(stationary, moving, d, tile_size, gen)
    if s.tensor is m.tensor:  # (moving's access may have split the dims of stationary's)
        s, m = stationary, moving
    # is_transpose on NeuronCore-v2 only labels the instruction for the profiler; the
    # is_*_onezero hints change only the speed of an fp32 operand: the values are the same.
    # (The operands' accesses as checked: ops.matmul would make the same ones again.)
    result = ops.matmul(s, m, d.tensor.name + "_mm")
    r = as_view(result, "result")
    _same_elements(_MM, d, r, "stationary.T @ moving")
    if flag is None:
        _unmodelled_accumulation(d, gen, "accumulate=None adds to a location written before")
        if _earlier_regions(d) == "inside":  # every location written before by a matmul: it adds
            _write(d, r, True, gen)
        else:
            group = _first_writes_follow_the_groups(d)
            tiles.accumulate_matmul(d, r, group)
    else:
        _write(d, r, flag, gen)
    _remember_loops(d)
    _remember_region(d)


def _transpose_mode(d, stationary, moving, flag, tile_position, tile_size):
    """nc_matmul(is_transpose=True) from NeuronCore-v3: the Tensor engine's transpose mode, "bit-
    accurate data transpose" of stationary when moving is an identity matrix (the nc_matmul page,
    "Transpose mode"; nc_transpose is documented as this call). Modelled as that transpose (the
    model's Tensor-engine transpose, which moves bits, as nisa.nc_transpose) when moving is
    provably an identity: a diagonal square block, of stationary's partition count, of an
    nl.shared_identity_matrix tile nothing else writes (checked again when the trace ends, for a
    write later in a loop). What the mode computes with another moving tile is not documented:
    refused. So is accumulating in transpose mode (accumulate=True, or None onto a location a
    matmul wrote), and tiling, which the page does not describe with it."""
    tr = trace.current()
    s, m = as_view(stationary, "stationary"), as_view(moving, "moving")
    if tile_position or tile_size:
        refuse(_MM, "tile_position", tile_position, "with is_transpose=True: the page does not "
               "describe transpose mode with Tensor-engine tiling")
    k = tr.evaluate(s.logical_lins()[0])
    if not _is_identity_block(tr, m, k):
        refuse(_MM, "is_transpose", True, "from NeuronCore-v3 it turns on the Tensor engine's "
               "transpose mode, which moves stationary's bits when moving is an identity matrix; "
               "the model knows moving is one only when it is a diagonal block, of stationary's "
               "partition count, of an nl.shared_identity_matrix tile nothing else wrote, and "
               "what the mode computes otherwise is not documented (nisa.nc_transpose(dst, "
               "data) transposes)")
    if flag is True or (flag is None and _earlier_regions(d) is not None) or \
            (flag is None and _box(d) is None and getattr(d.tensor, "matmul_loop_keys", None)):
        refuse(_MM, "accumulate", flag, "with is_transpose=True onto a location a matmul wrote: "
               "what transpose mode adds is not documented (the transpose overwrites)")
    _tensor_engine_dtypes(d, s)
    r = tr.evaluate
    p, f = r(s.logical_lins()[0]), r(ops._free_size(s))
    pd, fd = r(d.logical_lins()[0]), r(ops._free_size(d))
    if all(x.is_const() for x in (p, f, pd, fd)) and (pd.const, fd.const) != (f.const, p.const):
        raise errors.NkiError("%s: dst %s is not stationary %s transposed (is_transpose=True)" %
                              (_MM, tuple(d.shape), tuple(s.shape)))
    tr.instr("transpose", [(None, d), (None, s), ("engine", Enum("tensor"))])
    d.tensor.transpose_mode_written = True
    uses = getattr(tr, "identity_uses", None)
    if uses is None:
        uses = tr.identity_uses = []
        tr.at_end.append(_identities_unchanged)
    uses.append((m.tensor, errors.user_location()))


def _is_identity_block(tr, m, k):
    """Whether view `m` is provably the k x k identity: a diagonal block [a:a+k, a:a+k] (unit
    steps) of an nl.shared_identity_matrix tile that only its own construction wrote."""
    n = getattr(m.tensor, "identity_n", None)
    if n is None:
        n = _built_identity(tr, m.tensor)
        if n is not None:
            m.tensor.identity_n, m.tensor.identity_writes = n, 2
    if n is None or m.indirect is not None or not k.is_const() or len(m.dims) != 2:
        return False
    if _writes(tr, m.tensor) != m.tensor.identity_writes:
        return False
    (a, sa, ta), (b, sb, tb) = [(tr.evaluate(Lin.of(x)), tr.evaluate(Lin.of(y)), z)
                                for x, y, z in m.dims]
    return all(x.is_const() for x in (a, sa, b, sb)) and ta == tb == 1 and \
        a.const == b.const and sa.const == sb.const == k.const and a.const + k.const <= n


def _built_identity(tr, tensor):
    """n when the only writes of SBUF tensor `tensor` ([n, n]) are, in order, a memset of 1 over
    all of it and an affine_select over all of it keeping it where c * (p - f) == 0 (c != 0:
    channel_multiplier c, free step -c, offset 0, nl.equal) and writing 0 elsewhere: the n x n
    identity, as nki-library's cascaded_max builds it; else None."""
    ins = _writers(tr, tensor)
    if tensor.mem != "sbuf" or len(ins) != 2 or [i.op for i in ins] != ["memset", "affine_select"]:
        return None
    full = _full_square(tr, ins[0].args[0][1])
    if full is None or _full_square(tr, ins[1].args[0][1]) != full:
        return None
    on_true, steps = ins[1].get("on_true"), ins[1].get("steps")
    c = ins[1].get("channel_multiplier")
    offset = ins[1].get("offset")
    if ins[0].get("value") != 1.0 or on_true is None or on_true.tensor is not tensor or \
            _full_square(tr, on_true) != full or ins[1].get("on_false") != 0.0 or \
            getattr(ins[1].get("cmp"), "name", None) != "eq" or not c or \
            steps is None or steps.coefs != {1: -c} or \
            tr.evaluate(Lin.of(offset if offset is not None else 0)) != Lin.of(0):
        return None
    return full


def _full_square(tr, view):
    """n when `view` covers all of its [n, n] tensor with unit steps in storage order."""
    if view is None or view.indirect is not None or len(view.dims) != 2 or view.perm():
        return None
    sizes = []
    for start, size, step in view.dims:
        a, n = tr.evaluate(Lin.of(start)), tr.evaluate(Lin.of(size))
        if not (a.is_const() and n.is_const()) or a.const != 0 or step != 1:
            return None
        sizes.append(n.const)
    shape = [tr.evaluate(Lin.of(x)) for x in view.tensor.shape]
    if sizes[0] != sizes[1] or any(not x.is_const() or x.const != sizes[0] for x in shape):
        return None
    return sizes[0]


def _writers(tr, tensor):
    """The recorded instructions that write `tensor` (their first view), in program order."""
    out = []

    def walk(stmts):
        for st in stmts:
            body = getattr(st, "body", None)
            if body is not None:
                walk(body)
            elif getattr(st, "args", None) and getattr(st.args[0][1], "tensor", None) is tensor:
                out.append(st)
    walk(tr.root)
    return out


def _writes(tr, tensor):
    """How many recorded instructions write `tensor` (their first view)."""
    count, todo = 0, [tr.root]
    while todo:
        for st in todo.pop():
            body = getattr(st, "body", None)
            if body is not None:
                todo.append(body)
            elif getattr(st, "args", None) and getattr(st.args[0][1], "tensor", None) is tensor:
                count += 1
    return count


def _identities_unchanged(tr):
    """At the end of the trace: no identity a transpose-mode matmul relied on was written after
    it (in a later iteration of a loop, say)."""
    for tensor, line in tr.identity_uses:
        if _writes(tr, tensor) != tensor.identity_writes:
            raise errors.NkiError("%s: is_transpose=True relies on moving being the identity, but "
                                  "the kernel writes that nl.shared_identity_matrix tile later; "
                                  "what transpose mode computes with another moving tile is not "
                                  "documented" % _MM, line)


def _no_earlier_transpose_mode(d, flag):
    """A matmul that may add (accumulate True or None) onto a tensor a transpose-mode matmul
    wrote: whether the hardware counts that write as a matmul's is not documented."""
    if flag is not False and getattr(d.tensor, "transpose_mode_written", False):
        refuse(_MM, "accumulate", flag, "into '%s', which an is_transpose=True matmul wrote: "
               "whether that write starts an accumulation is not documented (pass "
               "accumulate=False)" % d.tensor.name)


def _first_writes_follow_the_groups(d):
    """accumulate=None in symbolic loops: tiles.accumulate_matmul decides first writes by
    accumulation groups (the legacy `+=` rule: a group restarts each time its loops are entered;
    a block no group wrote yet starts one). That is the page's rule per PSUM location only when
    every loop from dst's declaration down to the last loop picking dst's block picks it (an
    outer loop that does not revisits the same locations, which then add) and no matmul wrote
    the tensor in another loop nest before (its locations may be these). Otherwise the loops
    are unrolled (a re-trace), so that the locations are known and `_earlier_regions` decides;
    with symbolic bounds the unroller refuses, naming the params to fix. Returns the
    accumulation group of d (tiles._group_key), which tiles.accumulate_matmul reads next."""
    tr = trace.current()
    z = d.tensor
    group = tiles._group_key(tr, d)
    key, _, loops, used, last = group
    earlier = getattr(z, "matmul_loop_keys", None)
    if earlier is not None and _box(d) is not None and not getattr(z, "matmul_unknown", False):
        earlier = None  # every location known: `_earlier_regions` found them disjoint
    if earlier is not None and key not in z.group_keys:
        keys = set(earlier) | {l.key for l in loops}
        why = ("nc_matmul(accumulate=None) into '%s', which a matmul in another loop nest wrote "
               "before: whether a location was written is known only per iteration" % z.name)
    else:
        revisiting = [l for l in loops[:last + 1] if l.var not in used]
        if not revisiting:
            return group
        keys = {l.key for l in revisiting}
        why = ("nc_matmul(accumulate=None) into '%s' in a loop that does not pick its block "
               "(variable %s): its later iterations add to the locations the first one wrote" %
               (z.name, revisiting[0].var))
    raise tr.unroll_loops(keys, why)


def _remember_loops(d):
    """The symbolic loops (their source keys) under which a matmul wrote dst's tensor."""
    tr = trace.current()
    z = d.tensor
    depth = next((k for k, b in enumerate(tr.stack) if b is z.block), len(tr.stack) - 1)
    # (through the instance dict, as program.Tensor.__init__: every nc_matmul comes here)
    z.__dict__["matmul_loop_keys"] = set(getattr(z, "matmul_loop_keys", None) or ()) | \
        {l.key for l in tr.loops[depth:]}
    if _box(d) is None:
        z.matmul_unknown = True  # some location it wrote is not known when traced


def _box(view):
    """The rectangle of storage a view covers, [(start, stop)] per dim, when it is known (no
    loop variable in it, unit steps); else None."""
    ev = trace.current().evaluate
    if view.indirect is not None:
        return None
    box = []
    for start, size, step in view.dims:
        a, n = ev(Lin.of(start)), ev(Lin.of(size))
        if not (a.is_const() and n.is_const()) or step != 1:
            return None
        box.append((a.const, a.const + n.const))
    return box


def _earlier_regions(d):
    """How dst's locations relate to the known regions earlier nc_matmul calls wrote in its
    tensor: "inside" their union (each location was written: accumulate=None adds), "partial"
    (some were, some not: refused, as one instruction cannot add on part of its tile and
    overwrite the rest, which the rule per PSUM location asks (NKI 0.6.0 simulator fix,
    "overlapping PSUM regions")), or None (disjoint or unknown: the accumulation groups of
    tiles.accumulate_matmul decide)."""
    mine = _box(d)
    if mine is None:
        return None
    hits = [o for o in getattr(d.tensor, "matmul_regions", [])
            if all(a < d2 and c < b for (a, b), (c, d2) in zip(mine, o))]
    if not hits:
        return None
    if _covered(mine, hits):
        return "inside"
    raise errors.NkiError("%s: dst %s is partly a region of '%s' an earlier matmul wrote: per "
                          "PSUM location the written part would accumulate and the rest be "
                          "overwritten, which one matmul instruction of the model cannot do" %
                          (_MM, tuple(d.shape), d.tensor.name))


def _covered(box, regions, max_cells=1 << 16):
    """Whether the union of `regions` covers `box` (cells between the regions' bounds)."""
    cuts = []
    for k, (lo, hi) in enumerate(box):
        cs = {lo, hi}
        for r in regions:
            cs.update(x for x in r[k] if lo < x < hi)
        cuts.append(sorted(cs))
    cells = 1
    for c in cuts:
        cells *= len(c) - 1
    if cells > max_cells:
        return False
    import itertools

    for cell in itertools.product(*[range(len(c) - 1) for c in cuts]):
        lows = [cuts[k][i] for k, i in enumerate(cell)]
        if not any(all(r[k][0] <= x < r[k][1] for k, x in enumerate(lows)) for r in regions):
            return False
    return True


def _remember_region(d):
    box = _box(d)
    if box is not None:
        # (through the instance dict, as program.Tensor.__init__)
        d.tensor.__dict__.setdefault("matmul_regions", []).append(box)


def _accumulate_flag(accumulate):
    """None, or the flag's truth for the iterations being traced. A relation of loop variables
    (SymBool) is decided by splitting the loop it depends on; one on shapes the kernel leaves
    open is an error (trace.Tracer.truth_of)."""
    if accumulate is None or isinstance(accumulate, (bool, np.bool_)):
        return None if accumulate is None else bool(accumulate)
    if isinstance(accumulate, SymBool):
        try:
            return bool(accumulate)
        except errors.NkiError as e:
            raise errors.NkiError("%s: accumulate=%s: %s" % (_MM, accumulate.text(), e.message))
    raise errors.NkiError("%s: accumulate= takes None, True or False (or a condition such as "
                          "k > 0), not %r" % (_MM, accumulate))


def _written_by_other(z):
    """Whether a non-matmul instruction wrote PSUM tensor `z` (memset, tensor_copy, an
    activation, nl.zeros' fill once it is needed): a matmul accumulating onto that is undefined
    on NeuronCore-v2 and -v3 (the page's note under "Accumulation mode")."""
    return not z.matmul_only


def _unmodelled_accumulation(d, gen, what):
    z = d.tensor
    if _written_by_other(z) and gen < nc_version.gen4:
        raise errors.NkiError("%s: %s, but '%s' was written by an instruction other than a "
                              "matmul (a memset or a copy): on NeuronCore-v2 and -v3 a matmul "
                              "accumulating onto such a value is undefined on hardware (the "
                              "nc_matmul page, \"Accumulation mode\")" % (_MM, what, z.name))


def _write(d, r, accumulate, gen):
    """The product written to dst with an explicit flag: False overwrites, True adds to what a
    matmul (or, from NeuronCore-v4, any instruction) wrote there."""
    tr = trace.current()
    z = d.tensor
    ins = r.tensor.producers[0]
    if accumulate:
        fresh = z.matmul_only and not z.group_keys
        if fresh and not (z.zero_state == "pending" and z.zero_fill):
            raise errors.NkiError("%s: accumulate=True into '%s', which nothing has written: "
                                  "accumulating into an uninitialised PSUM location is undefined "
                                  "on all targets (the nc_matmul page); the first matmul of an "
                                  "accumulation overwrites (accumulate=False or None)" %
                                  (_MM, z.name))
        if fresh:  # nl.zeros: its zeros are a memset's, and this matmul reads them
            if gen < nc_version.gen4:
                raise errors.NkiError("%s: accumulate=True into '%s', which only nl.zeros has "
                                      "written: on NeuronCore-v2 and -v3 a matmul accumulating "
                                      "onto a memset's value is undefined on hardware (the "
                                      "nc_matmul page); use accumulate=False or None for the "
                                      "first matmul" % (_MM, z.name))
            z.zero_state = "needed"
        _unmodelled_accumulation(d, gen, "accumulate=True")
    if not tiles._retarget(tr, r, d):
        raise errors.NkiError("%s: internal: the product could not be written to dst" % _MM)
    ins.set("accumulate", bool(accumulate))


def _check_perf_mode(perf_mode):
    if isinstance(perf_mode, int) and not isinstance(perf_mode, bool):
        raise errors.NkiError("%s: perf_mode=%d: a raw integer is not a mode since NKI 0.3.0; "
                              "use nisa.matmul_perf_mode.<name>" % (_MM, perf_mode))
    if perf_mode in (None, matmul_perf_mode.none):
        return
    if perf_mode == matmul_perf_mode.double_row:
        refuse(_MM, "perf_mode", perf_mode, "the FP8 double-row mode (NeuronCore-v3 and -v4) "
               "packs two rows of the contraction into the first free dim; the model's Tensor "
               "engine has no such mode")
    raise errors.NkiError("%s: perf_mode= takes nisa.matmul_perf_mode.none or .double_row, not "
                          "%r" % (_MM, perf_mode))


def _check_dst_dtype(d, gen):
    """fp32 on NeuronCore-v2 and -v3; fp32 or bf16 from NeuronCore-v4 (the page's "Data
    types")."""
    dt = d.tensor.dtype
    if dt == "fp32" or (dt == "bf16" and gen >= nc_version.gen4):
        return
    if dt == "bf16":
        raise errors.NkiError("%s: dst is bf16; a bf16 matmul destination needs NeuronCore-v4 "
                              "(--gen trn3): before it the Tensor engine writes fp32 PSUM" % _MM)
    raise errors.NkiError("%s: dst is %s; the Tensor engine writes fp32 PSUM (bf16 from "
                          "NeuronCore-v4)" % (_MM, dt))


def _pair(v, arg):
    if not isinstance(v, (tuple, list)) or len(v) not in (0, 2):
        raise errors.NkiError("%s: %s= takes a (row, column) pair, not %r" % (_MM, arg, v))
    try:
        return [Lin.of(x) for x in v]
    except TypeError:
        raise errors.NkiError("%s: %s= holds integers or affine expressions, not %r" %
                              (_MM, arg, v)) from None


def _check_tiling(tile_position, tile_size, stationary, gen):
    """PE tiling places the matmul in part of the 128x128 PE array; the product is the same.
    The page's rules, where the values are known: both set or neither; tile sizes 128, 64 or
    (from NeuronCore-v3) 32 per axis; each start a multiple of its size inside the array; the
    stationary tile fits the tile (rows: partitions, columns: free size)."""
    pos, size = _pair(tile_position, "tile_position"), _pair(tile_size, "tile_size")
    if not pos and not size:
        return
    if not pos or not size:
        raise errors.NkiError("%s: tile_position and tile_size must both be set to enable PE "
                              "tiling (only %s is)" %
                              (_MM, "tile_position" if pos else "tile_size"))
    sizes_ok = (32, 64, 128) if gen >= nc_version.gen3 else (64, 128)
    for axis, p, s in (("row", pos[0], size[0]), ("column", pos[1], size[1])):
        if s.is_const() and s.const not in sizes_ok:
            raise errors.NkiError("%s: tile_size %s %d: a PE tile is %s on %s" %
                                  (_MM, axis, s.const, " or ".join(map(str, sizes_ok)),
                                   "NeuronCore-v3 and newer" if gen >= nc_version.gen3
                                   else "NeuronCore-v2 (32 from NeuronCore-v3)"))
        if p.is_const() and s.is_const() and (p.const % s.const or
                                              not 0 <= p.const <= 128 - s.const):
            raise errors.NkiError("%s: tile_position %s %d: a start is a multiple of the tile "
                                  "size %d inside the 128-wide array" %
                                  (_MM, axis, p.const, s.const))
    v = as_view(stationary, "stationary")
    r = trace.current().evaluate
    rows, cols = r(v.logical_lins()[0]), r(ops._free_size(v))
    for what, need, have in (("rows (partitions)", rows, size[0]),
                             ("columns (free size)", cols, size[1])):
        if need.is_const() and have.is_const() and need.const > have.const:
            raise errors.NkiError("%s: tile_size %s %d is smaller than the stationary tile's %d"
                                  % (_MM, what, have.const, need.const))


def _check_sizes(stationary, moving, d, tile_size, gen):
    """The page's "Tile size": partitions of the operands equal and at most 128; stationary's
    free size at most 128; moving's at most 512 (one PSUM bank of fp32) on NeuronCore-v2/-v3,
    4096 (fp32 dst) or 8192 (bf16 dst) from NeuronCore-v4. Returns the operands' accesses."""
    r = trace.current().evaluate
    s, m = as_view(stationary, "stationary"), as_view(moving, "moving")
    for what, v in (("stationary", s), ("moving", m)):
        if v.tensor.mem != "sbuf":
            raise errors.NkiError("%s: %s is in %s; the Tensor engine reads SBUF" %
                                  (_MM, what, v.tensor.mem.upper()))
    ks, km = r(s.logical_lins()[0]), r(m.logical_lins()[0])
    if ks.is_const() and km.is_const() and ks.const != km.const:
        raise errors.NkiError("%s: stationary has %d partitions, moving %d: the contraction is "
                              "over partitions" % (_MM, ks.const, km.const))
    fs, fm = r(ops._free_size(s)), r(ops._free_size(m))
    if ks.is_const() and ks.const > 128:
        raise errors.NkiError("%s: the operands have %d partitions; at most 128" % (_MM, ks.const))
    if fs.is_const() and fs.const > 128:
        raise errors.NkiError("%s: stationary's free size is %d; at most 128 (it becomes dst's "
                              "partitions)" % (_MM, fs.const))
    if gen >= nc_version.gen4:
        limit = 8192 if d.tensor.dtype == "bf16" else 4096
    else:
        limit = 512
    if fm.is_const() and fm.const > limit:
        raise errors.NkiError("%s: moving's free size is %d; at most %d on %s" %
                              (_MM, fm.const, limit, "NeuronCore-v%d" % (int(gen))))
    return s, m


# ------------------------------------------------------------------ nc_transpose

_TR = "nisa.nc_transpose"


@api("nisa.nc_transpose")
def nc_transpose(dst, data, engine=unknown_engine, name=None):
    """dst = data with its partition and (flattened) free axes swapped. The Tensor engine reads
    SBUF and writes PSUM, up to 128x128; the Vector engine reads and writes SBUF or PSUM, up to
    32x32. Unpinned, the engine follows dst's buffer (PSUM: Tensor, SBUF: Vector; the NKI 0.4.0
    release notes). dtype: the Vector engine and, from NeuronCore-v3, the Tensor engine's
    transpose mode keep the input dtype (dst.dtype == data.dtype); on NeuronCore-v2 the Tensor
    engine's transpose is a matmul with an identity and writes fp32 PSUM (trainium2_arch,
    "transpose mode")."""
    _name_arg(_TR, name)
    d = _dst(_TR, dst)
    v = ops._v(data, "data")
    eng = _engine(_TR, engine, ("tensor", "vector"))
    if eng is None:
        eng = "tensor" if d.tensor.mem == "psum" else "vector"
    limit = 128 if eng == "tensor" else 32
    r = trace.current().evaluate
    p, f = r(v.logical_lins()[0]), r(ops._free_size(v))
    if (p.is_const() and p.const > limit) or (f.is_const() and f.const > limit):
        raise errors.NkiError("%s: the %s engine transposes up to %dx%d; data is %s" %
                              (_TR, eng.capitalize(), limit, limit, tuple(v.shape)))
    if v.tensor.mem == "hbm":
        raise errors.NkiError("%s: data is in HBM; a transpose reads SBUF or PSUM "
                              "(nisa.dma_transpose reads HBM)" % _TR)
    if eng == "tensor":
        _tensor_engine_dtypes(d, v)
    elif d.tensor.dtype != v.tensor.dtype:
        raise errors.NkiError("%s: dst.dtype (%s) must equal data.dtype (%s): the Vector engine "
                              "moves elements unchanged" % (_TR, d.tensor.dtype, v.tensor.dtype))
    pd, fd = r(d.logical_lins()[0]), r(ops._free_size(d))
    if all(x.is_const() for x in (p, f, pd, fd)) and (pd.const, fd.const) != (f.const, p.const):
        raise errors.NkiError("%s: dst %s is not data %s transposed" %
                              (_TR, tuple(d.shape), tuple(v.shape)))
    trace.current().instr("transpose", [(None, d), (None, v), ("engine", Enum(eng))])


def _tensor_engine_dtypes(d, v):
    if v.tensor.mem != "sbuf" or d.tensor.mem != "psum":
        raise errors.NkiError("%s: the Tensor engine reads SBUF and writes PSUM (data is in %s, "
                              "dst in %s)" % (_TR, v.tensor.mem.upper(), d.tensor.mem.upper()))
    if not v.tensor.dtype.startswith(("fp", "bf", "tf")):
        refuse(_TR, "data", "a %s tile" % v.tensor.dtype, "the model's Tensor-engine transpose "
               "is a float matmul (integers: engine=nisa.engine.vector, up to 32x32)")
    if current_version() < nc_version.gen3:
        if d.tensor.dtype != "fp32":
            raise errors.NkiError("%s: on NeuronCore-v2 the Tensor engine's transpose is a "
                                  "matmul and writes fp32 PSUM; dst is %s" % (_TR, d.tensor.dtype))
        return
    if d.tensor.dtype != v.tensor.dtype:
        raise errors.NkiError("%s: dst.dtype (%s) must equal data.dtype (%s): from "
                              "NeuronCore-v3 the Tensor engine's transpose mode keeps the dtype"
                              % (_TR, d.tensor.dtype, v.tensor.dtype))
    if v.tensor.dtype.startswith("fp8"):
        refuse(_TR, "data", "an fp8 tile", "the transpose mode writes fp8 as 16-bit PSUM "
               "elements (the upper 8 bits zero), which the model does not")

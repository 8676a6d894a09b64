"""Loops of the new API (`import nki`): Python loops with Python's semantics. A loop stays a loop
of the program while its body stands for every iteration, and is unrolled when the body's Python
effects depend on the iteration (ncverify_nki/unrolling.py). Each kernel that must unroll has a
twin computing the same values in a form that stays a loop (or needs no loop), so a wrong
unrolling changes the output bits. Used by tools/tests/frontend_loops_test.cpp."""

import dataclasses

import nki
import nki.language as nl

TILE = 128


@nki.jit
def stays_a_loop(a):
    """A body with no Python effect: one symbolic affine loop."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(n // TILE):
        t = nl.load(a[nl.ds(j * TILE, TILE), :])
        u = nl.add(t, 1.0)
        nl.store(out[nl.ds(j * TILE, TILE), :], value=u)
    return out


@nki.jit
def causal_prefix_sums(a):
    """A triangular loop (`range(q + 1)` inside the loop over q): both stay loops of the
    program, the inner one's bound the outer variable."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    for q in nl.affine_range(n // TILE):
        acc = nl.zeros((TILE, m), dtype=nl.float32, buffer=nl.sbuf)
        for k in range(q + 1):
            acc[...] = nl.add(acc, nl.load(a[nl.ds(k * TILE, TILE), :]))
        nl.store(out[nl.ds(q * TILE, TILE), :], value=acc)
    return out


@nki.jit
def rebinds_before_reading(a):
    """`t` is bound before the loop and rebound in the body before any read, and never read after
    it: the loop stays a loop."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a[0:TILE, :])
    nl.store(out[0:TILE, :], value=t)
    for j in range(n // TILE):
        t = nl.load(a[nl.ds(j * TILE, TILE), :])
        nl.store(out[nl.ds(j * TILE, TILE), :], value=t)
    return out


@nki.jit
def appends_to_a_list(a):
    """The body appends to a list made before the loop; the second loop reads the list by the
    loop variable. Python: one tile per iteration, in order."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    tiles = []
    for j in nl.affine_range(n // TILE):
        tiles.append(nl.load(a[nl.ds(j * TILE, TILE), :]))
    for j in nl.affine_range(len(tiles)):
        nl.store(out[nl.ds(j * TILE, TILE), :], value=nl.multiply(tiles[j], float(len(tiles))))
    return out


@nki.jit
def appends_to_a_list_twin(a):
    """appends_to_a_list without the list: every tile scaled by the tile count."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(n // TILE):
        t = nl.load(a[nl.ds(j * TILE, TILE), :])
        nl.store(out[nl.ds(j * TILE, TILE), :], value=nl.multiply(t, float(n // TILE)))
    return out


@nki.jit
def counts_iterations(a):
    """`count += 1` in the body: after the loop count is the trip count (Python's semantics)."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((TILE, m), dtype=a.dtype, buffer=nl.shared_hbm)
    count = 0
    for j in nl.sequential_range(n // TILE):
        count += 1
    t = nl.load(a[0:TILE, :])
    nl.store(out, value=nl.add(t, float(count)))
    return out


@nki.jit
def counts_iterations_twin(a):
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((TILE, m), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a[0:TILE, :])
    nl.store(out, value=nl.add(t, float(n // TILE)))
    return out


@nki.jit
def rotating_buffers(a):
    """A Python list of two SBUF tensors indexed by the loop variable (`bufs[j % 2]`)."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    bufs = [nl.ndarray((TILE, m), dtype=a.dtype, buffer=nl.sbuf) for _ in range(2)]
    for j in nl.affine_range(n // TILE):
        k = j % 2
        b = bufs[k]
        b[...] = nl.add(nl.load(a[nl.ds(j * TILE, TILE), :]), float(1 + k))
        nl.store(out[nl.ds(j * TILE, TILE), :], value=b)
    return out


@nki.jit
def rotating_buffers_twin(a):
    """rotating_buffers with the `+1 / +2` decided by a split of the loop (no list)."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(n // TILE):
        t = nl.load(a[nl.ds(j * TILE, TILE), :])
        if j % 2 == 0:
            u = nl.add(t, 1.0)
        else:
            u = nl.add(t, 2.0)
        nl.store(out[nl.ds(j * TILE, TILE), :], value=u)
    return out


@nki.jit
def carried_rebinding(a):
    """`acc = nl.add(acc, t)`: each iteration reads the tile the previous one bound (a Python
    rebinding; the symbolic body would read the first `acc` every time)."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((TILE, m), dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((TILE, m), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.affine_range(n // TILE):
        t = nl.load(a[nl.ds(j * TILE, TILE), :])
        acc = nl.add(acc, t)
    nl.store(out, value=acc)
    return out


@nki.jit
def carried_in_place(a):
    """carried_rebinding's twin: the sum accumulated in place in one tile (a sequential loop)."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((TILE, m), dtype=a.dtype, buffer=nl.shared_hbm)
    acc = nl.zeros((TILE, m), dtype=nl.float32, buffer=nl.sbuf)
    for j in nl.sequential_range(n // TILE):
        t = nl.load(a[nl.ds(j * TILE, TILE), :])
        acc[...] = nl.add(acc, t)
    nl.store(out, value=acc)
    return out


@dataclasses.dataclass
class Progress:
    tiles: int = 0

    def advance(self):
        self.tiles += 1


@nki.jit
def writes_a_config(a):
    """An attribute write, through a method, on an object made before the loop."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((TILE, m), dtype=a.dtype, buffer=nl.shared_hbm)
    cfg = Progress()
    for j in nl.affine_range(n // TILE):
        cfg.advance()
    t = nl.load(a[0:TILE, :])
    nl.store(out, value=nl.add(t, float(cfg.tiles)))
    return out


@nki.jit
def breaks_early(a):
    """`break` at the third tile: Python runs three iterations."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(n // TILE):
        nl.store(out[nl.ds(j * TILE, TILE), :], value=nl.load(a[nl.ds(j * TILE, TILE), :]))
        if j == 2:
            break
    return out


@nki.jit
def on_device_loop(a):
    """nl.fori_loop with bounds the params express: a sequential loop of the program."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)

    def body(j):
        nl.store(out[nl.ds(j * TILE, TILE), :], value=nl.load(a[nl.ds(j * TILE, TILE), :]))

    nl.fori_loop(0, n // TILE, body)
    return out


@nki.jit
def on_device_loop_python_index(a):
    """The index of an on-device loop is a register: a Python list index needs its value."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 4096 and m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    bufs = [nl.ndarray((TILE, m), dtype=a.dtype, buffer=nl.sbuf) for _ in range(2)]
    for j in nl.dynamic_range(n // TILE):
        b = bufs[j % 2]
        b[...] = nl.load(a[nl.ds(j * TILE, TILE), :])
        nl.store(out[nl.ds(j * TILE, TILE), :], value=b)
    return out


@nki.jit
def while_on_device(a):
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)

    def body(r):
        nl.store(out, value=nl.load(a))
        return r

    nl.while_loop(1, body)
    return out


@nki.jit
def counts_down(a):
    """A countdown over known values (`range(3, -1, -1)`, as nki-library's allocators write it)
    is Python's own range: the scale is order[0] * 10 + order[-1] = 30."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    order = []
    for i in range(3, -1, -1):
        order.append(i)
    t = nl.load(a)
    nl.store(out, nl.multiply(t, float(order[0] * 10 + order[-1])))
    return out

"""Python `if`s on loop variables that the iterations decide differently. The front end splits
the loop into pieces on which the condition is constant (splitting.py); each kernel here has an
unrolled twin (`static_range`: every condition decided on Python ints while tracing, no
splitting) that must compute the same bits, and a `broken=True` variant with the condition off
by one tile that must not. Used by tools/tests/frontend_test.cpp (FrontendLoopSplitting)."""

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

TILE = 128


def _is_last(j, n_tiles, broken):
    return (j + 2) == n_tiles if broken else (j + 1) == n_tiles


@nki.jit
def last_tile_doubled(a, broken=False):
    """Rows in 128-row tiles: every tile plus one, the last tile doubled instead (the last
    iteration peels off the loop)."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 1024 and m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    n_tiles = n // TILE
    for j in nl.affine_range(n_tiles):
        t = nl.load(a[nl.ds(j * TILE, TILE), :])
        if _is_last(j, n_tiles, broken):
            r = nl.multiply(t, 2.0)
        else:
            r = nl.add(t, 1.0)
        nl.store(out[nl.ds(j * TILE, TILE), :], value=r)
    return out


@nki.jit
def last_tile_doubled_unrolled(a):
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    n_tiles = n // TILE
    for j in nl.static_range(n_tiles):
        t = nl.load(a[nl.ds(j * TILE, TILE), :])
        if _is_last(j, n_tiles, False):
            r = nl.multiply(t, 2.0)
        else:
            r = nl.add(t, 1.0)
        nl.store(out[nl.ds(j * TILE, TILE), :], value=r)
    return out


def _even(j, broken):
    return j % 2 == (1 if broken else 0)


def _second_band(j, broken):
    """Tiles 3..5: a floor division of the loop variable."""
    return (j * TILE) // 384 == (0 if broken else 1)


RULES = {"even": _even, "band": _second_band}


@nki.jit
def tile_rule(a, rule="even", broken=False):
    """Rows in 128-row tiles: the tiles the rule picks doubled, the others plus one. `even`
    splits the loop into residue classes (two strided loops), `band` into three intervals."""
    n, m = a.shape
    assert n % TILE == 0 and n <= 1024 and m <= 512
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    for j in nl.affine_range(n // TILE):
        t = nl.load(a[nl.ds(j * TILE, TILE), :])
        if RULES[rule](j, broken):
            r = nl.multiply(t, 2.0)
        else:
            r = nl.add(t, 1.0)
        nl.store(out[nl.ds(j * TILE, TILE), :], value=r)
    return out


@nki.jit
def tile_rule_unrolled(a, rule="even"):
    n, m = a.shape
    out = nl.ndarray((n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    for j in nl.static_range(n // TILE):
        t = nl.load(a[nl.ds(j * TILE, TILE), :])
        if RULES[rule](j, False):
            r = nl.multiply(t, 2.0)
        else:
            r = nl.add(t, 1.0)
        nl.store(out[nl.ds(j * TILE, TILE), :], value=r)
    return out


def _visible(q_tile, k_tile, window, broken):
    """Causal (key tile at or before the query tile), and within `window` tiles when window > 0:
    conditions over two loop variables, so the inner loop's pieces depend on the outer one."""
    causal = q_tile > k_tile if broken else q_tile >= k_tile
    if window > 0:
        return causal and q_tile - k_tile < window
    return causal


@nki.jit
def tile_mask(a, window=0, broken=False):
    """A square matrix in 128x128 tiles: visible tiles scaled by 3, the others zero."""
    n, n2 = a.shape
    assert n == n2 and n % TILE == 0 and n <= 1024
    out = nl.ndarray((n, n), dtype=a.dtype, buffer=nl.shared_hbm)
    n_tiles = n // TILE
    for q in nl.affine_range(n_tiles):
        for k in nl.affine_range(n_tiles):
            rows, cols = nl.ds(q * TILE, TILE), nl.ds(k * TILE, TILE)
            if _visible(q, k, window, broken):
                t = nl.load(a[rows, cols])
                nl.store(out[rows, cols], value=nl.multiply(t, 3.0))
            else:
                z = nl.zeros((TILE, TILE), dtype=a.dtype, buffer=nl.sbuf)
                nl.store(out[rows, cols], value=z)
    return out


@nki.jit
def tile_mask_unrolled(a, window=0):
    n, n2 = a.shape
    assert n == n2
    out = nl.ndarray((n, n), dtype=a.dtype, buffer=nl.shared_hbm)
    n_tiles = n // TILE
    for q in nl.static_range(n_tiles):
        for k in nl.static_range(n_tiles):
            rows, cols = nl.ds(q * TILE, TILE), nl.ds(k * TILE, TILE)
            if _visible(q, k, window, False):
                t = nl.load(a[rows, cols])
                nl.store(out[rows, cols], value=nl.multiply(t, 3.0))
            else:
                z = nl.zeros((TILE, TILE), dtype=a.dtype, buffer=nl.sbuf)
                nl.store(out[rows, cols], value=z)
    return out


@nki.jit
def first_program_doubles(a):
    """A condition on the program id inside a loop: the loop is guarded (one piece per side,
    one of them empty at run time)."""
    n, m = a.shape
    assert n == 256 and m == 64
    out = nl.ndarray((2, n, m), dtype=a.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    for j in nl.affine_range(n // TILE):
        t = nl.load(a[nl.ds(j * TILE, TILE), :])
        if pid == 0:
            r = nl.multiply(t, 2.0)
        else:
            r = nl.add(t, 1.0)
        nl.store(out[pid, nl.ds(j * TILE, TILE), :], value=r)
    return out


@nki.jit
def scaled_by_inverse_sqrt(a, scale=None):
    """The softmax-style default scale d ** -0.5 of a shape: a float of the value --param gives d
    (an instruction's immediate is a constant of the program)."""
    n, d = a.shape
    assert n == TILE and d <= 512
    scale = scale or d ** -0.5
    out = nl.ndarray((n, d), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(a), scale))
    return out

"""Kernels whose Python needs the value of nl.program_id (per-program tracing, frontend/README.md
"Kernels that need the program id's value"), run by per_program_test.py with a launch grid of
2: each program writes its half of the rows of `out`."""

import nki
import nki.isa as nisa
import nki.language as nl


def first_program_copies(a):
    """A top-level `if` on the program id: program 0 copies the first half, program 1 writes
    the second half doubled."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    half = rows // 2
    t = nl.ndarray((half, cols), dtype=a.dtype, buffer=nl.sbuf)
    if nl.program_id(0) == 0:
        nisa.dma_copy(dst=t, src=a[0:half, :])
        nisa.dma_copy(dst=out[0:half, :], src=t)
    else:
        nisa.dma_copy(dst=t, src=a[half:rows, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(dst=out[half:rows, :], src=t)
    return out


def first_program_copies_twice(a):
    """Broken: both programs write the first half (the second half is never written)."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    half = rows // 2
    t = nl.ndarray((half, cols), dtype=a.dtype, buffer=nl.sbuf)
    if nl.program_id(0) == 0:
        nisa.dma_copy(dst=t, src=a[0:half, :])
        nisa.dma_copy(dst=out[0:half, :], src=t)
    else:
        nisa.dma_copy(dst=t, src=a[half:rows, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(dst=out[0:half, :], src=t)
    return out


SCALES = [1.0, 2.0, 3.0, 4.0]


def tile_blocks(a):
    """`range(pid * N, (pid + 1) * N)` over 32-row tiles whose body indexes a Python list by
    the loop variable: the loop is unrolled, so its bounds need the program id's value. Tile i
    of out is tile i of a times SCALES[i]; each program does N = tiles / 2 of them."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    n = rows // 32 // nl.num_programs()
    pid = nl.program_id(0)
    for i in range(pid * n, (pid + 1) * n):
        t = nl.ndarray((32, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 32:(i + 1) * 32, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=SCALES[i])
        nisa.dma_copy(dst=out[i * 32:(i + 1) * 32, :], src=t)
    return out


def tile_blocks_same_half(a):
    """Broken: every program runs the tiles of program 0 (`range(0, n)`: the first half twice,
    the second half never)."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    n = rows // 32 // nl.num_programs()
    pid = nl.program_id(0)
    for i in range(pid * 0, (pid * 0 + 1) * n):
        t = nl.ndarray((32, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 32:(i + 1) * 32, :])
        nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=SCALES[i])
        nisa.dma_copy(dst=out[i * 32:(i + 1) * 32, :], src=t)
    return out


def symbolic_row_blocks(a):
    """`range(pid * N, (pid + 1) * N)` whose body needs no Python value: the loop stays one loop
    with program_id in its bounds (no per-program trace)."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    n = rows // 32 // nl.num_programs()
    pid = nl.program_id(0)
    for i in range(pid * n, (pid + 1) * n):
        t = nl.ndarray((32, cols), dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[i * 32:(i + 1) * 32, :])
        nisa.dma_copy(dst=out[i * 32:(i + 1) * 32, :], src=t)
    return out


def big_tiles_per_program(a):
    """Each program holds a 96 KiB-per-partition SBUF tile: together 192 KiB, more than an
    SBUF partition, but each instance has its own SBUF and the passes' scopes are siblings."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    half = rows // 2
    pid = nl.program_id(0)
    big = nl.ndarray((half, 24576), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=big[:, 0:cols], src=a[pid * half:(pid + 1) * half, :])
    if pid == 1:
        nisa.tensor_scalar(dst=big[:, 0:cols], data=big[:, 0:cols], op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=out[pid * half:(pid + 1) * half, :], src=big[:, 0:cols])
    return out


def outputs_disagree(a):
    """Program 1 allocates its output with another shape than program 0's: refused."""
    rows, cols = a.shape
    pid = nl.program_id(0)
    if pid == 0:
        out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    else:
        out = nl.ndarray((rows // 2, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((rows // 2, cols), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[0:rows // 2, :])
    nisa.dma_copy(dst=out[0:rows // 2, :], src=t)
    return out


def output_count_disagrees(a):
    """Program 0 allocates a shared_hbm scratch tensor that program 1 does not: refused."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    half = rows // 2
    pid = nl.program_id(0)
    t = nl.ndarray((half, cols), dtype=a.dtype, buffer=nl.sbuf)
    if pid == 0:
        spare = nl.ndarray((half, cols), dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=spare, src=a[0:half, :])
    nisa.dma_copy(dst=t, src=a[pid * half:(pid + 1) * half, :])
    nisa.dma_copy(dst=out[pid * half:(pid + 1) * half, :], src=t)
    return out


def sized_by_program(a):
    """A tile whose size is the program id's: program 0 copies 32 rows, program 1 the other 96
    (tile sizes are constants of the program, so each program is its own trace)."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    pid = nl.program_id(0)
    first = pid * 32
    n = 32 + pid * (rows - 64)
    t = nl.ndarray((n, cols), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[first:first + n, :])
    nisa.dma_copy(dst=out[first:first + n, :], src=t)
    return out


def too_big_in_program_1(a):
    """Program 1 alone holds 256 KiB per partition, more than an SBUF partition: the memory
    peak is the largest program's, and this one does not fit."""
    rows, cols = a.shape
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    half = rows // 2
    pid = nl.program_id(0)
    width = cols if pid == 0 else 65536
    t = nl.ndarray((half, width), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t[:, 0:cols], src=a[pid * half:(pid + 1) * half, :])
    nisa.dma_copy(dst=out[pid * half:(pid + 1) * half, :], src=t[:, 0:cols])
    return out


def asserts_on_the_program_id(a):
    """An assertion that names the program id (nki-library's attention_tkg asserts on
    `program_id * n`): each program's trace states it with the id's value. Each program copies
    its half of the rows."""
    rows, cols = a.shape
    half = rows // 2
    pid = nl.program_id(0)
    assert pid * half + half <= rows
    out = nl.ndarray((rows, cols), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((half, cols), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[nl.ds(pid * half, half), :])
    nisa.dma_copy(dst=out[nl.ds(pid * half, half), :], src=t)
    return out

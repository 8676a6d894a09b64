"""A legacy-dialect (`neuronxcc.nki`) kernel whose Python needs nl.program_id's value: the
legacy dialect is traced per program too (per_program_test.py)."""

import neuronxcc.nki as nki
import neuronxcc.nki.language as nl

ROWS = 128


@nki.jit
def halves_by_program(x):
    """Program 0 negates the first 128 rows, program 1 the next 128 rows doubled: a Python `if`
    on the program id outside every loop, and a Python list indexed by it."""
    n, m = x.shape
    out = nl.ndarray((n, m), dtype=x.dtype, buffer=nl.shared_hbm)
    p = nl.program_id(0)
    first = [0, ROWS][p]
    t = nl.load(x[first:first + ROWS, :])
    if p == 0:
        nl.store(out[first:first + ROWS, :], value=nl.negative(t))
    else:
        nl.store(out[first:first + ROWS, :], value=nl.multiply(t, 2.0))
    return out

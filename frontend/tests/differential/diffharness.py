"""The differential harness: NKI calls run through ncverify's simulator (front end + `ncverify
run`) on random small shapes and values, compared with NumPy implementations of the calls'
documented semantics written in the test files (never with the front end's own code).

- Seeds. Each case draws its shapes and values from `case.rng`, seeded from the case's name and
  the base seed (`NCVERIFY_DIFF_SEED`, default 45). A mismatch names the case, its seed and the
  command that replays it. `NCVERIFY_DIFF_ROUNDS=N` runs every case with N seeds (the default
  tier runs one).
- Tolerances. `exact` for bit-exact paths (copies, integer and bitwise ops, DMA of the same
  dtype, selects, the documented fp32 arithmetic of one operation); the reference is computed
  in fp32 and then cast exactly as the documentation says (bf16 round-to-nearest-even:
  `to_bf16`, Debian has no ml_dtypes), so a rounded output is compared exactly too. `rtol`/`atol`
  where the documentation leaves the result approximate (ScalarE activation functions, sums whose
  order is not documented); each use states its reason.
- Coverage. Each case declares the (call, argument) pairs it exercises (`covers=`); while the case
  runs, the front end's signature binder (ncverify_nki.signatures.OBSERVERS) records every call
  and the arguments the kernel passed, and the case fails if a declared pair was not passed.
  coverage_test.py checks that the declarations together cover every argument of every call.
"""

import contextlib
import os
import sys
import zlib

import numpy as np

# The conformance tests' helper that picks a new-API kernel's generation (targets.py).
sys.path.append(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "conformance"))

from ncverify_nki import signatures
from ncverify_nki.simulate import KernelNotTraced

BASE_SEED = int(os.environ.get("NCVERIFY_DIFF_SEED", "45"))
ROUNDS = int(os.environ.get("NCVERIFY_DIFF_ROUNDS", "1"))

def dialect_of(module):
    """The dialect of a stand-in module: the new `nki` API lives in ncverify_nki.newapi."""
    return "nki" if ".newapi" in module else "neuronxcc"


# ------------------------------------------------------------------------------ rounding


def to_bf16(x):
    """float32 -> the nearest bfloat16 (ties to even), returned as float32. NaN stays NaN,
    infinities stay infinite, values beyond bf16's range round to infinity."""
    f = np.asarray(x, dtype=np.float32)
    bits = f.view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000).astype(np.uint32)
    out = rounded.view(np.float32)
    return np.where(np.isnan(f), f, out).astype(np.float32)


def cast(x, dtype):
    """The documented conversion of fp32 compute results to an output dtype: round to nearest
    even for floats; for integers the conversion of an integral fp32 value (the tests keep
    integer results integral and in range, where every conversion agrees)."""
    x = np.asarray(x, dtype=np.float32)
    if dtype in ("float32", np.float32):
        return x
    if dtype in ("bfloat16",):
        return to_bf16(x)
    if dtype in ("float16", np.float16):
        return x.astype(np.float16).astype(np.float32)
    return x.astype(dtype)


# ------------------------------------------------------------------------------ cases


class Mismatch(AssertionError):
    """The simulator's output differs from the documented semantics."""


class Case:
    """One differential case: a name, a seed, a generator, and the (call, argument) pairs it
    declares it exercises."""

    def __init__(self, name, seed, covers, file="FILE.py"):
        self.name, self.seed, self.file = name, seed, file
        self.rng = np.random.default_rng(seed)
        self.covers = covers
        self.seen = set()

    # values ---------------------------------------------------------------------------------

    def shape(self, parts=(1, 128), free=(1, 64)):
        """A random [partitions, free] shape within the bounds (inclusive)."""
        return (int(self.rng.integers(parts[0], parts[1] + 1)),
                int(self.rng.integers(free[0], free[1] + 1)))

    def floats(self, shape, lo=-4.0, hi=4.0, dtype=np.float32):
        return self.rng.uniform(lo, hi, size=shape).astype(dtype)

    def ints(self, shape, lo, hi, dtype=np.int32):
        """Integers in [lo, hi] (inclusive)."""
        return self.rng.integers(lo, hi + 1, size=shape).astype(dtype)

    def bf16_values(self, shape, lo=-4.0, hi=4.0):
        """float32 values that are exactly bfloat16 (inputs that a cast to bf16 keeps)."""
        return to_bf16(self.floats(shape, lo, hi))

    # comparison -----------------------------------------------------------------------------

    def check(self, what, got, want, rtol=0.0, atol=0.0):
        """Exact unless a tolerance is given; NaN matches NaN. Raises Mismatch naming the case,
        the seed and the first differing element."""
        got = np.asarray(got)
        want = np.asarray(want)
        if got.shape != want.shape:
            raise Mismatch("%s: %s: shape %s, the documented semantics give %s%s" %
                           (self.name, what, got.shape, want.shape, self.replay()))
        g = got.astype(np.float64)
        w = want.astype(np.float64)
        same = (g == w) | (np.isnan(g) & np.isnan(w))
        if rtol or atol:
            same |= np.abs(g - w) <= atol + rtol * np.abs(w)
        if not same.all():
            bad = np.argwhere(~same)
            i = tuple(int(k) for k in bad[0])
            raise Mismatch("%s: %s: %d of %d elements differ; first at %s: simulator %r, "
                           "documented %r (rtol=%g, atol=%g)%s" %
                           (self.name, what, len(bad), same.size, i, got[i].item(),
                            want[i].item(), rtol, atol, self.replay()))

    def replay(self):
        return ("\n  seed %d; replay: NCVERIFY_DIFF_SEED=%d python3 -m ncverify_nki.run %s -k %s"
                % (self.seed, BASE_SEED, self.file, self.name))

    # refusals -------------------------------------------------------------------------------

    def refused(self, kernel, args, kwargs, call, arg, at):
        """The kernel must be refused by the front end with an error naming `arg` (the argument,
        or for a call refused as a whole the call) at the line of `at` (the function in the
        test file that makes the call)."""
        try:
            kernel(*args, **kwargs)
        except KernelNotTraced as e:
            msg = str(e)
            if arg not in msg:
                raise Mismatch("%s: %s refused, but the error does not name %s: %s%s" %
                               (self.name, call, arg, msg, self.replay())) from None
            line = at.__code__.co_firstlineno
            if e.where is None or e.where[1] != line:
                raise Mismatch("%s: refused at %s, not at the call's line %d: %s%s" %
                               (self.name, e.where, line, msg, self.replay())) from None
            return msg
        raise Mismatch("%s: %s=%s... was not refused (the model does not run it as "
                       "documented)%s" % (self.name, call, arg, self.replay()))


def _seed(name, round_):
    return (BASE_SEED * 1000003 + zlib.crc32(name.encode()) + round_ * 7919) % 2**32


def run_case(name, body):
    """Runs `body(case)` ROUNDS times with different seeds. The (call, argument) pairs that
    coverage_table.TABLE assigns to `name` are the case's claims: each must have been passed by
    a kernel of the case, else the case fails."""
    import coverage_table

    claims = coverage_table.claims_of(name)
    file = os.path.relpath(sys._getframe(1).f_code.co_filename)
    for r in range(ROUNDS):
        c = Case(name, _seed(name, r), claims, file)
        with _observing(c):
            body(c)
        _check_claims(c)


@contextlib.contextmanager
def _observing(c):
    def observe(module, qualname, sig, arguments):
        for n, v in arguments.items():
            if not _is_default(v, sig.parameters[n].default):
                c.seen.add((dialect_of(module), qualname, n))

    signatures.OBSERVERS.append(observe)
    try:
        yield
    finally:
        signatures.OBSERVERS.remove(observe)


def _is_default(value, default):
    """An argument passed with its default value (`mask=None`, `reverse0=False`) exercises
    nothing: it does not count as covering the argument."""
    if value is default:
        return True
    plain = (bool, int, float, str)
    return type(value) in plain and type(default) in plain and type(value) is type(default) \
        and value == default


def _check_claims(c):
    missing = [e for e in c.covers if e not in c.seen]
    if missing:
        raise AssertionError("%s: coverage_table says it exercises %s, but no kernel of it "
                             "passed %s" % (c.name, ", ".join("%s(%s=)" % (m[1], m[2])
                                                              for m in missing),
                                            "them" if len(missing) > 1 else "it"))

"""Per-program tracing (frontend/README.md "Kernels that need the program id's value"): kernels
whose Python needs nl.program_id's value, launched on two logical cores (`kernel[2]` on trn2,
`ncverify import --grid 2`), run on the simulator against NumPy, proved, and the broken
variants caught; shared_hbm allocations that differ between programs refused. Run by `python3 -m
ncverify_nki.run` (ctest label `frontend`)."""

import os
import subprocess
import tempfile
import unittest
import warnings

import numpy as np

import nki
import per_program_kernels as kernels
import per_program_legacy_kernels as legacy_kernels
from ncverify_nki.simulate import KernelNotTraced, UnwrittenOutput, ncverify_binary

HERE = os.path.dirname(os.path.abspath(__file__))
KERNELS = os.path.join(HERE, "per_program_kernels.py")
PYTHON_DIR = os.path.join(os.path.dirname(os.path.dirname(HERE)), "python")
TARGET = "NEURON_PLATFORM_TARGET_OVERRIDE"


def ncverify(*args):
    # the binary runs this checkout's tracer, whichever build it is
    env = dict(os.environ, NCVERIFY_FRONTEND_DIR=PYTHON_DIR)
    return subprocess.run([ncverify_binary(), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, env=env)


_imports = {}


def imported(func):
    """`ncverify import` of `func` on a 128 x 64 input with a grid of 2 (once per function)."""
    if func not in _imports:
        _imports[func] = ncverify("import", "%s:%s" % (KERNELS, func), "--input",
                                  "a=fp32[128,64]", "--grid", "2")
    return _imports[func]


def rows_of(rows=128, seed=0):
    return np.random.default_rng(seed).standard_normal((rows, 64)).astype(np.float32)


class _Lnc2(unittest.TestCase):
    """Two logical cores: the trn2 target."""

    def setUp(self):
        self._target = os.environ.get(TARGET)
        os.environ[TARGET] = "trn2"  # logical cores of two

    def tearDown(self):
        if self._target is None:
            os.environ.pop(TARGET, None)
        else:
            os.environ[TARGET] = self._target

    def run_lnc2(self, func, a):
        return nki.jit(func)[2](a)


class OnTheSimulator(_Lnc2):
    """Kernels called as `kernel[2](array)` against NumPy."""

    def test_a_top_level_if_on_the_program_id(self):
        a = rows_of()
        want = np.concatenate([a[:64], 2 * a[64:]])
        np.testing.assert_array_equal(self.run_lnc2(kernels.first_program_copies, a), want)

    def test_both_programs_writing_one_half_is_caught(self):
        a = rows_of()
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            got = self.run_lnc2(kernels.first_program_copies_twice, a)
        self.assertTrue(any(isinstance(w.message, UnwrittenOutput) for w in caught))
        want = np.concatenate([a[:64], 2 * a[64:]])
        self.assertFalse(np.array_equal(got, want))
        self.assertTrue(np.isnan(got[64:]).all())  # never written: the interpreter's poison

    def test_a_range_from_the_program_id_unrolled(self):
        a = rows_of()
        want = a * np.repeat(np.array(kernels.SCALES, np.float32), 32)[:, None]
        np.testing.assert_array_equal(self.run_lnc2(kernels.tile_blocks, a), want)

    def test_every_program_running_program_0s_range_is_caught(self):
        a = rows_of()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UnwrittenOutput)
            got = self.run_lnc2(kernels.tile_blocks_same_half, a)
        want = a * np.repeat(np.array(kernels.SCALES, np.float32), 32)[:, None]
        np.testing.assert_array_equal(got[:64], want[:64])
        self.assertTrue(np.isnan(got[64:]).all())

    def test_a_tile_size_from_the_program_id(self):
        a = rows_of()
        np.testing.assert_array_equal(self.run_lnc2(kernels.sized_by_program, a), a)

    def test_each_program_has_its_own_sbuf(self):
        a = rows_of()
        want = np.concatenate([a[:64], a[64:] + 1])
        np.testing.assert_array_equal(self.run_lnc2(kernels.big_tiles_per_program, a), want)

    def test_the_legacy_dialect_is_traced_per_program(self):
        x = rows_of(rows=256)
        want = np.concatenate([-x[:128], 2 * x[128:]])
        np.testing.assert_array_equal(legacy_kernels.halves_by_program[2](x), want)


class Imported(_Lnc2):
    """`ncverify import --grid 2`, `dump`, and the refusals."""

    def test_the_program_says_it_was_traced_per_program(self):
        r = imported("first_program_copies")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("# traced once per program: per_program_kernels.py:17: a Python `if` on "
                      "program_id == 0 outside every loop", r.stdout)
        self.assertIn("for only_program0 in sequential_range(max(program_id, 0), "
                      "min(program_id, 0) + 1) {", r.stdout)
        self.assertIn("for only_program1 in sequential_range(max(program_id, 1), "
                      "min(program_id, 1) + 1) {", r.stdout)
        self.assertEqual(r.stdout.count("output out : hbm fp32 [128, 64]"), 1)
        with tempfile.TemporaryDirectory() as d:  # the .nkir parser reads the guards back
            path = os.path.join(d, "traced.nkir")
            with open(path, "w") as f:
                f.write(r.stdout)
            dumped = ncverify("dump", path)
        self.assertEqual(dumped.returncode, 0, dumped.stderr)
        self.assertIn("for only_program1 in sequential_range(max(program_id, 1), "
                      "min(program_id, 1) + 1) {", dumped.stdout)

    def test_an_assertion_on_the_program_id_is_traced_per_program(self):
        # (was: a `require` over program_id, which the IR rejects as "not a param")
        r = ncverify("import", "%s:asserts_on_the_program_id" % KERNELS, "--shape", "a=rows,cols",
                     "--grid", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("an assertion (", r.stdout)
        self.assertIn("only_program1", r.stdout)
        self.assertNotIn("require", [line.split(" ")[0] for line in r.stdout.splitlines()
                                     if "program_id" in line and "sequential_range" not in line])

    def test_a_kernel_that_needs_no_value_keeps_program_id_symbolic(self):
        r = imported("symbolic_row_blocks")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertNotIn("traced once per program", r.stdout)
        self.assertNotIn("only_program", r.stdout)
        self.assertIn("program_id", r.stdout)

    def test_a_shared_output_allocated_differently_is_refused(self):
        r = imported("outputs_disagree")
        self.assertEqual(r.returncode, 2)
        self.assertIn("per_program_kernels.py:113: nl.shared_hbm tensor #1 ('out'): program 1 "
                      "allocates it as fp32 [64, 64], program 0 as fp32 [128, 64]", r.stderr)
        with self.assertRaisesRegex(KernelNotTraced, r"program 1 allocates it as fp32 \[64, 64\]"):
            self.run_lnc2(kernels.outputs_disagree, rows_of())

    def test_a_shared_scratch_only_one_program_allocates_is_refused(self):
        r = imported("output_count_disagrees")
        self.assertEqual(r.returncode, 2)
        self.assertIn("program 1 allocates 1 nl.shared_hbm tensors, program 0 2", r.stderr)


class Proved(_Lnc2):
    """`ncverify prove` of the traced programs."""

    def prove(self, func):
        r = imported(func)
        self.assertEqual(r.returncode, 0, r.stderr)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, func + ".nkir")
            with open(path, "w") as f:
                f.write(r.stdout)
            return ncverify("prove", path)

    def test_prove_covers_both_programs(self):
        for func in ("first_program_copies", "tile_blocks"):
            p = self.prove(func)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            self.assertIn("PROVED", p.stdout)

    def test_the_programs_sbuf_does_not_add_up(self):
        # 96 KiB per partition in each program: 192 KiB together would not fit (176 KiB usable)
        p = self.prove("big_tiles_per_program")
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"allocation: \d+ proved, 0 counterexample, 0 unknown")

    def test_one_program_too_big_for_sbuf_is_refuted(self):
        p = self.prove("too_big_in_program_1")
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"allocation: \d+ proved, [1-9]\d* counterexample")
        self.assertIn("262144", p.stdout)

    def test_a_proof_fails_in_the_second_programs_trace(self):
        # an out-of-bounds read only program 1 makes: the proof must see inside its guard
        r = imported("tile_blocks")
        self.assertEqual(r.returncode, 0, r.stderr)
        text = r.stdout.replace("a[96:+32, :]", "a[112:+32, :]")
        self.assertNotEqual(text, r.stdout)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "broken.nkir")
            with open(path, "w") as f:
                f.write(text)
            p = ncverify("prove", path)
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertRegex(p.stdout, r"bounds: \d+ proved, [1-9]\d* counterexample")


if __name__ == "__main__":
    unittest.main()

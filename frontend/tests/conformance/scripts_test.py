"""Kernel files that are scripts (module-level code that calls the kernel): `ncverify import`
traces them, and importing one in Python simulates its call. Run by `python3 -m
ncverify_nki.run` (ctest label `conformance`)."""

import os
import subprocess
import unittest

import numpy as np

from ncverify_nki.simulate import ncverify_binary

HERE = os.path.dirname(os.path.abspath(__file__))
SCRIPT = os.path.join(HERE, "script_kernel.py")


def call_line():
    return [n for n, text in enumerate(open(SCRIPT), 1) if text.startswith("halved = ")][0]


def ncverify(*args):
    return subprocess.run([ncverify_binary(), *args], stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)


class ScriptFiles(unittest.TestCase):
    def test_import_traces_a_kernel_of_a_script(self):
        r = ncverify("import", SCRIPT + ":halve")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertTrue(r.stdout.startswith("# traced by ncverify import from script_kernel.py"))
        self.assertIn("input x : hbm fp32 [n, m]", r.stdout)
        self.assertIn("tensor_scalar", r.stdout)

    def test_check_runs_the_traced_kernel(self):
        r = ncverify("run", SCRIPT + ":halve", "--param", "n=128", "--param", "m=64")
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)
        self.assertIn("result: ok", r.stdout)

    def test_definitions_after_the_call_are_unknown_and_said_so(self):
        r = ncverify("import", SCRIPT + ":defined_after_the_call")
        self.assertEqual(r.returncode, 2)
        self.assertIn("module-level code called a kernel at line %d" % call_line(), r.stderr)

    def test_a_float_of_a_shape_needs_the_shape(self):
        r = ncverify("import", SCRIPT + ":scale_by_width")
        self.assertEqual(r.returncode, 2)
        self.assertIn("script_kernel.py:%d: float arithmetic on a shape" % self.line_of("scale = "),
                      r.stderr)
        self.assertIn("--param width=VALUE", r.stderr)
        r = ncverify("import", SCRIPT + ":scale_by_width", "--param", "width=64")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("operand0=0.125", r.stdout)

    def test_a_float_of_a_shape_is_a_float_in_the_simulator(self):
        import script_kernel

        x = np.linspace(-4, 4, 128 * 16, dtype=np.float32).reshape(128, 16)
        np.testing.assert_array_equal(script_kernel.scale_by_width(x), x * np.float32(0.25))
        np.testing.assert_array_equal(script_kernel.scale_by_width(x, scale=2.0), x * 2)

    def line_of(self, prefix):
        return [n for n, text in enumerate(open(SCRIPT), 1) if text.strip().startswith(prefix)][0]

    def test_importing_the_script_simulates_its_call(self):
        import script_kernel

        x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
        np.testing.assert_array_equal(script_kernel.halved, x / 2)


if __name__ == "__main__":
    unittest.main()


# A kernel file whose `if __name__ == "__main__":` block is a harness that reaches past the
# kernel language (a forbidden module, exit(), open()): the block never runs in the tracer (the
# file is loaded as a module), so it is dropped before the check; the same statements anywhere
# else are refused as before.
MAIN_HARNESS = '''import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def doubled(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=out, src=t)
    return out


if __name__ == "__main__":
    import subprocess
    subprocess.run(["neuron-ls"])
    open("/tmp/out.txt", "w").write("x")
    exit(1)
'''


class MainBlocks(unittest.TestCase):
    def trace(self, text, name="harness.py"):
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, name)
            with open(path, "w") as fh:
                fh.write(text)
            return ncverify("run", path + ":doubled", "--input", "x=fp32[128,32]")

    def test_a_harness_in_the_main_block_is_not_the_kernel(self):
        r = self.trace(MAIN_HARNESS)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("result: ok", r.stdout)

    def test_the_same_harness_elsewhere_is_refused(self):
        for cond in ('if __name__ == "__main__" or True:',):  # (not exactly the main test)
            r = self.trace(MAIN_HARNESS.replace('if __name__ == "__main__":', cond))
            self.assertEqual(r.returncode, 2, cond + r.stdout)
            self.assertIn("harness.py:17: tamper: imports subprocess", r.stderr)

    def test_the_else_branch_is_kept_and_checked(self):
        r = self.trace(MAIN_HARNESS + "else:\n    exit(0)\n")
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("harness.py:22: tamper: uses exit", r.stderr)


# A harness's `print("Latency: {:.3f} ms".format(t))` outside the main block (ucb-bar/autocomp's
# trn harnesses print so in benchmark_nki): a format spec is text, its '.' a precision, not an
# attribute read; a field nested in the spec is a field and reads nothing either. The check is
# the kernel language's own (`check_file`), called in-process: milliseconds, no tracer run.
class FormatTemplates(unittest.TestCase):
    def check(self, line):
        from ncverify_nki import kernel_language
        source = "def report(t):\n    print(%s)\n" % line
        return kernel_language.check_file("harness.py", [HERE], None, source)

    def test_a_precision_in_the_spec_is_accepted(self):
        for line in ('"Latency: {:.3f} ms (P99)".format(t)', '"{0:>{1}.{2}f}".format(t, 9, 3)',
                     '"{a:,.2f}".format(a=t)'):
            self.check(line)  # no Tamper

    def test_an_attribute_or_item_read_is_refused_in_the_spec_too(self):
        from ncverify_nki import kernel_language
        for line in ('"{0.__class__}".format(t)', '"{t[0]}".format(t=t)',
                     '"{:{0.__class__}}".format(t)', '"{0:{1[0]}}".format(t, (3,))'):
            with self.assertRaises(kernel_language.Tamper, msg=line) as c:
                self.check(line)
            self.assertIn("reads attributes or items", str(c.exception))

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

    def test_importing_the_script_simulates_its_call(self):
        import script_kernel

        x = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)
        np.testing.assert_array_equal(script_kernel.halved, x / 2)


if __name__ == "__main__":
    unittest.main()

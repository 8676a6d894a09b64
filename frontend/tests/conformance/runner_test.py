"""The runner itself (`python3 -m ncverify_nki.run`): what it collects, how it reports each
outcome and its exit codes, on small test files written here. Run by the runner (ctest label
`conformance`), each case in a child runner so that its exit code is seen."""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

from ncverify_nki import simulate  # noqa: E402

STAND_INS = os.path.dirname(os.path.dirname(os.path.abspath(simulate.__file__)))

KERNEL = '''
import numpy as np
import neuronxcc.nki as nki
import neuronxcc.nki.language as nl


@nki.jit(mode="simulation")
def negate(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.negative(nl.load(x)))
    return out
'''


def run_file(body, *flags):
    """The runner's JSON report and exit code for a test file holding KERNEL and `body`."""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "case_test.py")
        with open(path, "w") as f:
            f.write(KERNEL + textwrap.dedent(body))
        env = dict(os.environ, PYTHONPATH=STAND_INS)
        done = subprocess.run([sys.executable, "-m", "ncverify_nki.run", "--json", path, *flags],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              universal_newlines=True)
    outcomes = {}
    if done.stdout.strip():
        for r in json.loads(done.stdout)["results"]:
            outcomes[r["test"].split("::", 1)[1]] = (r["outcome"], r["message"])
    return done.returncode, outcomes


class Runner(unittest.TestCase):
    def test_unittest_and_pytest_style_tests_with_their_outcomes(self):
        code, got = run_file('''
            import unittest
            import pytest

            X = np.arange(128 * 8, dtype=np.float32).reshape(128, 8)

            class Cases(unittest.TestCase):
                def test_passes(self):
                    np.testing.assert_array_equal(negate(X), -X)

                def test_fails(self):
                    self.assertTrue(np.array_equal(negate(X), X))

                def test_fails_in_a_subtest(self):
                    for rows in (128, 64):
                        with self.subTest(rows=rows):
                            self.assertEqual(negate(X[:rows]).shape[0], 128)

                def test_passes_every_subtest(self):
                    for rows in (128, 64):
                        with self.subTest(rows=rows):
                            self.assertEqual(negate(X[:rows]).shape[0], rows)

                @pytest.mark.xfail(reason="known")
                def test_marked_xfail(self):
                    self.assertTrue(False)

            @pytest.mark.parametrize("rows", [128, 64])
            def test_rows(rows):
                x = X[:rows]
                assert np.array_equal(negate(x), -x)

            @pytest.mark.skip(reason="not today")
            def test_skipped():
                raise RuntimeError("must not run")

            class TestPlain:
                def test_method(self):
                    with pytest.raises(ZeroDivisionError):
                        1 / 0

            def test_wants_a_fixture(tmp_path):
                pass
        ''')
        self.assertEqual(code, 1)
        self.assertEqual(got["Cases::test_passes"][0], "pass")
        self.assertEqual(got["Cases::test_fails"][0], "fail")
        self.assertIn("case_test.py:", got["Cases::test_fails"][1])
        # A failing subTest fails its test (unittest's base result only records it).
        self.assertEqual(got["Cases::test_fails_in_a_subtest"][0], "fail")
        self.assertIn("case_test.py:", got["Cases::test_fails_in_a_subtest"][1])
        self.assertEqual(got["Cases::test_passes_every_subtest"][0], "pass")
        self.assertEqual(got["Cases::test_marked_xfail"][0], "xfail")
        self.assertEqual(got["test_rows[128]"][0], "pass")
        self.assertEqual(got["test_rows[64]"][0], "pass")
        self.assertEqual(got["test_skipped"], ("skip", "not today"))
        self.assertEqual(got["TestPlain::test_method"][0], "pass")
        self.assertEqual(got["test_wants_a_fixture"][0], "error")
        self.assertIn("tmp_path", got["test_wants_a_fixture"][1])

    def test_k_selects_and_a_clean_run_exits_zero(self):
        code, got = run_file('''
            def test_one():
                x = np.ones((128, 2), np.float32)
                assert (negate(x) == -1).all()

            def test_two():
                assert False
        ''', "-k", "one")
        self.assertEqual(code, 0)
        self.assertEqual(list(got), ["test_one"])

    def test_nothing_collected_is_not_a_pass(self):
        code, got = run_file("\n", "-k", "absent")
        self.assertEqual(code, 5)
        self.assertEqual(got, {})

    def test_dynamic_check_and_refusal_outcomes(self):
        code, got = run_file('''
            @nki.jit
            def past_the_end(x):
                out = nl.ndarray((128, 4), dtype=x.dtype, buffer=nl.shared_hbm)
                nl.store(out, value=nl.load(x[nl.ds(64, 128), :]))
                return out

            @nki.jit
            def uses_where(x):
                out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
                t = nl.load(x)
                nl.store(out, value=nl.where(t > 0, t, 0.0))
                return out

            def test_check():
                past_the_end(np.zeros((128, 4), np.float32))

            def test_refused():
                uses_where(np.zeros((128, 4), np.float32))
        ''')
        self.assertEqual(code, 1)
        self.assertEqual(got["test_check"][0], "check")
        self.assertIn("[out_of_bounds]", got["test_check"][1])
        self.assertEqual(got["test_refused"][0], "refused")
        self.assertIn("nl.where is not modelled", got["test_refused"][1])

    def test_class_fixtures_run_once_around_their_tests(self):
        code, got = run_file('''
            import unittest
            LOG = []

            def setUpModule():
                LOG.append("module")

            class A(unittest.TestCase):
                @classmethod
                def setUpClass(cls):
                    LOG.append("A")

                @classmethod
                def tearDownClass(cls):
                    LOG.append("/A")

                def test_1(self):
                    self.assertEqual(LOG, ["module", "A"])

                def test_2(self):
                    self.assertEqual(LOG, ["module", "A"])

            class B(unittest.TestCase):
                @classmethod
                def setUpClass(cls):
                    raise RuntimeError("no B today")

                def test_b(self):
                    pass

            def test_after():
                assert LOG == ["module", "A", "/A"], LOG
        ''')
        self.assertEqual(got["A::test_1"][0], "pass")
        self.assertEqual(got["A::test_2"][0], "pass")
        self.assertEqual(got["B::test_b"][0], "error")
        self.assertIn("no B today", got["B::test_b"][1])
        self.assertEqual(got["test_after"][0], "pass")


if __name__ == "__main__":
    unittest.main()

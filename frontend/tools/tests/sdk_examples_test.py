"""Tests of frontend/tools/sdk_examples.py that need no checkout of the vendor's repositories:
the wire format, the NumPy references, the comparison, the verdicts, the kernel scan, the
argument checks; and, with the built ncverify (NCVERIFY), whole rows on a stand-in checkout
that this test writes (ncverify's own kernels under the examples' paths). Run by ctest (label
frontend) as `python3 sdk_examples_test.py`."""

import io
import json
import os
import sys
import tempfile
import unittest
from contextlib import redirect_stderr, redirect_stdout

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import sdk_examples as tool  # noqa: E402


def quiet_main(argv):
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        code = tool.main(argv)
    return code, out.getvalue(), err.getvalue()


class Wire(unittest.TestCase):
    def test_bf16_rounds_to_nearest_even_and_decodes(self):
        values = np.array([1.0, 1.0 + 2 ** -8, 1.0 + 3 * 2 ** -8, -2.5, 3.0e38])
        wire, seen = tool.to_wire(values, "bf16")
        self.assertEqual(wire.dtype, np.uint16)
        # 1 + 2^-8 is halfway between 1 and 1 + 2^-7: even (1.0); 1 + 3*2^-8 rounds up to even
        np.testing.assert_array_equal(seen[:4], [1.0, 1.0, 1.0 + 2 ** -6, -2.5])
        np.testing.assert_array_equal(tool.from_wire(wire, "bf16"), seen)
        self.assertEqual(wire[0], 0x3F80)

    def test_fp16_and_fp32_are_themselves(self):
        v = np.array([0.1, -3.0])
        wire, seen = tool.to_wire(v, "fp16")
        self.assertEqual(wire.dtype, np.float16)
        np.testing.assert_array_equal(seen, v.astype(np.float16).astype(np.float64))
        wire, seen = tool.to_wire(v, "fp32")
        self.assertEqual(wire.dtype, np.float32)

    def test_an_unknown_dtype_is_a_usage_error(self):
        with self.assertRaises(tool.Usage):
            tool.to_wire(np.zeros(2), "int8")


class References(unittest.TestCase):
    def test_matmul_is_lhsT_transposed_times_rhs(self):
        lhs_t, rhs = np.arange(6.0).reshape(3, 2), np.arange(12.0).reshape(3, 4)
        np.testing.assert_array_equal(tool.ref_matmul([lhs_t, rhs], {})[0], lhs_t.T @ rhs)

    def test_pools(self):
        x = np.arange(2 * 4 * 4, dtype=np.float64).reshape(2, 4, 4)
        avg = tool.ref_avgpool([x], {"pool_size": 2})[0]
        mx = tool.ref_maxpool([x], {"sz_pool": 2})[0]
        self.assertEqual(avg.shape, (2, 2, 2))
        self.assertEqual(avg[0, 0, 0], (0 + 1 + 4 + 5) / 4)
        self.assertEqual(mx[1, 1, 1], 31)

    def test_transpose2d_and_split(self):
        a = np.arange(24.0).reshape(2, 12)
        t = tool.ref_transpose2d([a], {"shape2D": "(3,4)"})[0]
        np.testing.assert_array_equal(t[0].reshape(4, 3), a[0].reshape(3, 4).T)
        even, odd = tool.ref_split_columns([np.arange(10.0).reshape(2, 5)], {})
        np.testing.assert_array_equal(even[0], [0, 2, 4])
        np.testing.assert_array_equal(odd[1], [6, 8])

    def test_mamba_is_the_sequential_scan(self):
        rng = np.random.default_rng(1)
        b, c, n, s = 1, 3, 2, 5
        delta, u = rng.random((b, c, s)), rng.standard_normal((b, c, s))
        a, bb, cc = -rng.random((c, n)), rng.standard_normal((b, n, s)), \
            rng.standard_normal((b, n, s))
        got = tool.ref_mamba([delta, u, a, bb, cc], {})[0]
        for ch in range(c):  # one channel by hand
            h = np.zeros(n)
            for t in range(s):
                h = np.exp(delta[0, ch, t] * a[ch]) * h + delta[0, ch, t] * bb[0, :, t] * \
                    u[0, ch, t]
                self.assertAlmostEqual(got[0, ch, t], float((cc[0, :, t] * h).sum()))


class Judging(unittest.TestCase):
    def example(self, expect="run"):
        return tool.Example("sdk", "x.py", "k", [("a", "fp32", (2, 2), tool.gen_normal)],
                            tool.ref_exp, rtol=1e-3, atol=0, expect=expect, why="the docs",
                            refusal="too wide")

    def test_compare_names_the_worst_element(self):
        want = np.ones((2, 3))
        got = want.copy()
        self.assertIsNone(tool.compare(got, want, 1e-3, 0))
        got[1, 2] = 1.5
        got[0, 0] = 1.01
        msg = tool.compare(got, want, 1e-3, 0)
        self.assertIn("2 of 6 elements differ; largest at (1, 2): 1.5, reference 1.0", msg)
        self.assertIn("shape (3,)", tool.compare(np.ones(3), want, 0, 0))

    def test_exit_codes_of_run(self):
        e = self.example()
        self.assertEqual(tool.judge_run(e, 2, "", "ncverify: f.py:3: why\nmore"),
                         ("refused", "ncverify: f.py:3: why"))
        status, detail = tool.judge_run(e, 1, json.dumps({"error": {"kind": "bounds"}}), "")
        self.assertEqual(status, "check failed")
        self.assertIn("bounds", detail)
        self.assertIsNone(tool.judge_run(e, 0, "{}", ""))
        expected = self.example("refused")
        self.assertEqual(tool.judge_run(expected, 2, "", "ncverify: x.py:3: too wide")[0],
                         "refused as expected")
        self.assertEqual(tool.judge_run(expected, 2, "", "ncverify: x.py:3: other")[0],
                         "refused")  # refused, but not for the reason the docs give
        self.assertEqual(tool.judge_run(expected, 0, "{}", "")[0], "differs")

    def test_values(self):
        e = self.example()
        x = np.zeros((2, 2))
        self.assertEqual(tool.judge_values(e, [x], [("out", np.ones((2, 2)))])[0],
                         "ran+checked")
        status, detail = tool.judge_values(e, [x], [("out", np.full((2, 2), 1.1))])
        self.assertEqual(status, "differs")
        self.assertTrue(detail.startswith("out: 4 of 4 elements differ"), detail)
        self.assertEqual(tool.judge_values(e, [x], [])[0], "differs")


    def test_several_outputs_follow_the_catalogues_return_order(self):
        e = tool.Example("sdk", "x.py", "k", [], tool.ref_split_columns, rtol=0, atol=0,
                         outputs=("even", "odd"))
        x = np.arange(10.0).reshape(2, 5)
        listed = [("odd", x[:, 1::2]), ("even_2", x[:, 0::2])]  # as `run --json` sorts them
        self.assertEqual(tool.judge_values(e, [x], listed)[0], "ran+checked")
        e.outputs = ()
        status, detail = tool.judge_values(e, [x], listed)
        self.assertEqual(status, "differs")
        self.assertIn("do not match the catalogue's (none given)", detail)
        e.outputs = ("even", "od")
        self.assertEqual(tool.judge_values(e, [x], listed)[0], "differs")


class Scan(unittest.TestCase):
    def test_kernels_of_the_new_api_only(self):
        new = "import nki\nimport nki.language as nl\n\n@nki.jit\ndef k(a):\n  pass\n" \
              "@nki.jit(mode='x')\n@other\ndef k2(a):\n  pass\ndef helper():\n  pass\n"
        self.assertEqual(tool.kernels_in(new), ["k", "k2"])
        self.assertEqual(tool.kernels_in(new.replace("import nki\n",
                                                     "import neuronxcc.nki as nki\n")), [])
        self.assertEqual(tool.kernels_in("import numpy\n@nki.jit\ndef k():\n  pass\n"), [])

    def test_catalogue_ids_are_unique_and_inputs_generate(self):
        rows = tool.catalogue()
        ids = [e.id for e in rows]
        self.assertEqual(len(ids), len(set(ids)))
        rng = np.random.default_rng(0)
        for e in rows:
            self.assertIn(e.checkout, tool.ROOTS)
            self.assertIn(e.expect, ("run", "refused"))
            self.assertEqual(e.expect == "refused", bool(e.refusal), e.id)
            small = sum(int(np.prod(s)) for _, _, s, _ in e.inputs) <= 100000
            if e.reference is not None and e.expect == "run" and small:
                rng2 = np.random.default_rng(1)
                ins = [tool.to_wire(g(rng2, s), d)[1] for _, d, s, g in e.inputs]
                if len(e.reference(ins, e.params)) > 1:  # several outputs: the order is named
                    self.assertTrue(e.outputs, e.id)
            for name, dtype, shape, gen in e.inputs:
                self.assertEqual(gen(rng, shape).shape, tuple(shape), e.id)
                self.assertIn(dtype, ("fp32", "fp16", "bf16"))


class Arguments(unittest.TestCase):
    def test_bad_arguments_exit_2(self):
        with tempfile.TemporaryDirectory() as d:
            self.assertEqual(quiet_main([])[0], 2)
            code, _, err = quiet_main(["--sdk", d])
            self.assertEqual(code, 2)
            self.assertIn("has no nki/examples/", err)
            os.makedirs(os.path.join(d, "nki", "examples"))
            self.assertEqual(quiet_main(["--sdk", d, "--gen", "trn9"])[0], 2)
            existing = os.path.join(d, "rows.json")
            with open(existing, "w") as f:
                f.write("keep")
            code, _, err = quiet_main(["--sdk", d, "--json", existing])
            self.assertEqual(code, 2)
            self.assertIn("--force replaces it", err)
            with open(existing) as f:
                self.assertEqual(f.read(), "keep")
            self.assertEqual(quiet_main(["--sdk", d, "--no-such-option"])[0], 2)

    def test_list_names_catalogue_rows_and_unlisted_kernels(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "nki", "examples", "extra"))
            with open(os.path.join(d, "nki", "examples", "extra", "k.py"), "w") as f:
                f.write("import nki\n@nki.jit\ndef brand_new(x):\n  return x\n")
            code, out, _ = quiet_main(["--sdk", d, "--list"])
            self.assertEqual(code, 0)
            self.assertIn("sdk:extra/k.py:brand_new", out.splitlines())
            self.assertIn("sdk:index-case-1.py:tensor_split_kernel_", out.splitlines())


# ncverify's own kernel under the path of the SDK's tensor_addition example: a + b, or with
# WRONG a - b, so that the row's comparison is seen to fail.
_ADD = '''import nki
import nki.isa as nisa
import nki.language as nl


@nki.jit
def nki_tensor_add(a_input, b_input):
    out = nl.ndarray(a_input.shape, dtype=a_input.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(a_input.shape[0] // 128):
        for n in nl.affine_range(a_input.shape[1] // 512):
            a = nl.ndarray((128, 512), dtype=a_input.dtype, buffer=nl.sbuf)
            b = nl.ndarray((128, 512), dtype=a_input.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=a, src=a_input[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512])
            nisa.dma_copy(dst=b, src=b_input[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512])
            nisa.tensor_tensor(dst=a, data1=a, data2=b, op=nl.OP)
            nisa.dma_copy(dst=out[m * 128:(m + 1) * 128, n * 512:(n + 1) * 512], src=a)
    return out
'''


@unittest.skipUnless(os.environ.get("NCVERIFY"), "needs the built ncverify (NCVERIFY)")
class Rows(unittest.TestCase):
    def run_on(self, op):
        with tempfile.TemporaryDirectory() as d:
            folder = os.path.join(d, "nki", "examples", "tensor_addition")
            os.makedirs(folder)
            with open(os.path.join(folder, "tensor_addition_nki_kernels.py"), "w") as f:
                f.write(_ADD.replace("OP", op))
            rows = os.path.join(d, "rows.json")
            code, out, err = quiet_main(["--sdk", d, "--ncverify", os.environ["NCVERIFY"],
                                         "--only", "tensor_addition|index-case-1", "--json",
                                         rows])
            self.assertEqual(code, 0, err)
            with open(rows) as f:
                return {r["id"].split(":")[2]: r for r in json.load(f)}, out

    def test_a_right_kernel_is_checked_and_benched(self):
        rows, out = self.run_on("add")
        row = rows["nki_tensor_add"]
        self.assertEqual(row["status"], "ran+checked", row)
        self.assertGreater(row["latency_us"], 0)
        self.assertEqual(rows["tensor_split_kernel_"]["status"], "missing")
        self.assertIn("2 rows: 1 missing, 1 ran+checked", out)

    def test_a_wrong_kernel_differs(self):
        rows, _ = self.run_on("subtract")
        self.assertEqual(rows["nki_tensor_add"]["status"], "differs")
        self.assertIn("elements differ", rows["nki_tensor_add"]["detail"])


if __name__ == "__main__":
    unittest.main()

"""Today's `nki.isa` (NKI 0.6, destination-first) under the simulator, the compound element-wise
calls: scalar_tensor_tensor, tensor_scalar_reduce, tensor_copy_predicated, and the
NeuronCore-v4 calls exponential and activate2. ncverify's own kernels, each compared with NumPy
values computed here from the 0.6 pages' descriptions, and every argument exercised or refused at
the kernel's line. Run by `python3 -m ncverify_nki.run` (ctest label `conformance`)."""

import unittest

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
from newapi_tiles import on_chip, to_hbm
from targets import default, on
from ncverify_nki.simulate import KernelNotTraced

# Written for trn1 unless a kernel names its generation (targets.py).
default("trn1")


def to_bf16(x):
    """float32 -> the nearest bfloat16 (ties to even), held in float32 (finite values)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000).astype(np.uint32)
    return bits.view(np.float32)




# --- scalar_tensor_tensor ----------------------------------------------------------------------

@nki.jit
def stt(a, b, col, mode):
    ta, tb, tc = on_chip(a), on_chip(b), on_chip(col)
    if mode == "scalar":
        r = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(r, ta, nl.multiply, 2.0, nl.subtract, tb)
    elif mode == "column_reversed":
        r = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(dst=r, data=ta, op0=nl.subtract, operand0=tc, op1=nl.subtract,
                                  operand1=tb, reverse0=True, reverse1=True, name="stt")
    elif mode == "bf16":
        r = nl.ndarray(a.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.scalar_tensor_tensor(r, ta, nl.multiply, tc, nl.add, tb)
    else:  # in_place: dst is operand1
        nisa.scalar_tensor_tensor(tb, ta, nl.add, 1.0, nl.multiply, tb)
        r = tb
    return to_hbm(r)


@nki.jit
def stt_with(a, mode):
    ta = on_chip(a)
    r = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    if mode == "bitvec":
        nisa.scalar_tensor_tensor(r, ta, nl.bitwise_and, 1.0, nl.add, ta)
    elif mode == "both_psum":
        p = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.psum)
        nisa.tensor_copy(p, ta)
        nisa.scalar_tensor_tensor(r, p, nl.add, 1.0, nl.add, p)
    elif mode == "wide_operand0":
        nisa.scalar_tensor_tensor(r, ta, nl.add, ta, nl.add, ta)
    else:  # dtype
        nisa.scalar_tensor_tensor(r, ta, nl.add, 1.0, nl.add, ta, dtype=nl.float32)
    return to_hbm(r)


class ScalarTensorTensor(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(45)
        self.a = rng.uniform(-4, 4, (128, 64)).astype(np.float32)
        self.b = rng.uniform(-4, 4, (128, 64)).astype(np.float32)
        self.c = rng.uniform(-4, 4, (128, 1)).astype(np.float32)

    def test_scalar_operand0(self):
        np.testing.assert_array_equal(stt(self.a, self.b, self.c, "scalar"),
                                      self.a * np.float32(2) - self.b)

    def test_column_operand0_and_both_operands_reversed(self):
        want = self.b - (self.c - self.a)
        np.testing.assert_array_equal(stt(self.a, self.b, self.c, "column_reversed"), want)

    def test_the_intermediate_stays_fp32_for_a_bf16_dst(self):
        want = to_bf16(self.a * self.c + self.b)  # one rounding, at the end
        got = np.asarray(stt(self.a, self.b, self.c, "bf16"), dtype=np.float32)
        np.testing.assert_array_equal(got, want)
        twice = to_bf16(to_bf16(self.a * self.c) + self.b)
        self.assertTrue((got != twice).any())  # a bf16 intermediate would differ somewhere

    def test_dst_may_be_operand1(self):
        np.testing.assert_array_equal(stt(self.a, self.b, self.c, "in_place"),
                                      (self.a + np.float32(1)) * self.b)

    def test_refusals_at_the_kernel_line(self):
        for mode, words in (("bitvec", "op0=bitwise_and is a bitvec operator"),
                            ("both_psum", "cannot both be in PSUM"),
                            ("wide_operand0", "operand0= is a number or a tile of shape"),
                            ("dtype", "unknown keyword argument 'dtype'")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    stt_with(self.a, mode)
                self.assertIn("newapi_arith_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


# --- tensor_scalar_reduce ----------------------------------------------------------------------

@nki.jit
def tsr(a, col, mode):
    ta, tc = on_chip(a), on_chip(col)
    r = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    rr = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    if mode == "add":
        nisa.tensor_scalar_reduce(r, ta, nl.multiply, 0.5, nl.add, rr)
    elif mode == "max_negated":
        nisa.tensor_scalar_reduce(dst=r, data=ta, op0=nl.subtract, operand0=tc,
                                  reduce_op=nl.maximum, reduce_res=rr, reduce_res_negate=True)
    elif mode == "multiply":
        nisa.tensor_scalar_reduce(r, ta, nl.add, 0.0, nl.multiply, rr,
                                  reduce_cmd=nisa.reduce_cmd.reset_reduce)
    elif mode == "abs":  # a unary op0 with operand0 0 (nki-library's rmsnorm_quant)
        nisa.tensor_scalar_reduce(dst=r, data=ta, op0=nl.abs, operand0=0.0,
                                  reduce_op=nl.maximum, reduce_res=rr)
    elif mode == "abs_none":
        nisa.tensor_scalar_reduce(r, ta, nl.abs, None, nl.add, rr)
    else:  # min
        nisa.tensor_scalar_reduce(r, ta, nl.multiply, tc, nl.minimum, rr)
    return to_hbm(r), to_hbm(rr)


@nki.jit
def tsr_with(a, mode):
    ta = on_chip(a)
    r = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    rr = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    if mode == "reduce":
        nisa.tensor_scalar_reduce(r, ta, nl.add, 0.0, nl.add, rr, reduce_cmd=nisa.reduce_cmd.reduce)
    elif mode == "load_reduce":
        nisa.tensor_scalar_reduce(r, ta, nl.add, 0.0, nl.add, rr,
                                  reduce_cmd=nisa.reduce_cmd.load_reduce, reduce_init=1.0)
    elif mode == "init_without_load":
        nisa.tensor_scalar_reduce(r, ta, nl.add, 0.0, nl.add, rr, reduce_init=1.0)
    elif mode == "no_reduce_res":
        nisa.tensor_scalar_reduce(r, ta, nl.add, 0.0, nl.add)
    elif mode == "reverse0":
        nisa.tensor_scalar_reduce(r, ta, nl.subtract, 1.0, nl.add, rr, reverse0=True)
    elif mode == "abs_operand":
        nisa.tensor_scalar_reduce(r, ta, nl.abs, 1.0, nl.add, rr)
    else:  # divide
        nisa.tensor_scalar_reduce(r, ta, nl.add, 0.0, nl.divide, rr)
    return to_hbm(rr)


class TensorScalarReduce(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(7)
        # Integers: every sum and product below is exact, whatever the order.
        self.a = rng.integers(-8, 9, (64, 32)).astype(np.float32)
        self.c = rng.integers(-3, 4, (64, 1)).astype(np.float32)

    def test_add_reduction_from_zero(self):
        r, rr = tsr(self.a, self.c, "add")
        np.testing.assert_array_equal(r, self.a * np.float32(0.5))
        np.testing.assert_array_equal(rr, (self.a * np.float32(0.5)).sum(axis=1, keepdims=True))

    def test_max_with_a_column_operand_negated_on_the_way_out(self):
        r, rr = tsr(self.a, self.c, "max_negated")
        np.testing.assert_array_equal(r, self.a - self.c)
        np.testing.assert_array_equal(rr, -(self.a - self.c).max(axis=1, keepdims=True))

    def test_multiply_and_min_reductions(self):
        signs = np.sign(self.a) + (self.a == 0)  # +-1: the product is exact
        _, rr = tsr(signs, self.c, "multiply")
        np.testing.assert_array_equal(rr, signs.prod(axis=1, keepdims=True))
        r, rr = tsr(self.a, self.c, "min")
        np.testing.assert_array_equal(rr, (self.a * self.c).min(axis=1, keepdims=True))

    def test_unary_abs_op0(self):
        r, rr = tsr(self.a, self.c, "abs")
        np.testing.assert_array_equal(r, np.abs(self.a))
        np.testing.assert_array_equal(rr, np.abs(self.a).max(axis=1, keepdims=True))
        _, rr = tsr(self.a, self.c, "abs_none")
        np.testing.assert_array_equal(rr, np.abs(self.a).sum(axis=1, keepdims=True))

    def test_refusals_at_the_kernel_line(self):
        for mode, words in (("abs_operand", "op0=nl.abs is a unary operator; operand0 must be "
                                             "None or 0"),
                            ("reduce", "reduce_cmd='reduce' is not modelled"),
                            ("load_reduce", "reduce_cmd='load_reduce' is not modelled"),
                            ("init_without_load", "reduce_init= is read by reduce_cmd=load_reduce"),
                            ("no_reduce_res", "reduce_res=None is not modelled"),
                            ("reverse0", "reverse0=True is not modelled"),
                            ("divide", "reduce_op divide")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    tsr_with(self.a, mode)
                self.assertIn("newapi_arith_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


# --- tensor_copy_predicated --------------------------------------------------------------------

@nki.jit
def copy_where(old, src, sel, mode):
    d, s, t = on_chip(old), on_chip(src), on_chip(sel)
    pred = nl.ndarray(sel.shape, dtype=nl.uint8, buffer=nl.sbuf)
    nisa.tensor_scalar(pred, t, nl.greater, 0.0)
    if mode == "tile":
        nisa.tensor_copy_predicated(d, s, pred)
    elif mode == "reversed":
        nisa.tensor_copy_predicated(dst=d, src=s, predicate=pred, reverse_pred=True)
    elif mode == "scalar":
        nisa.tensor_copy_predicated(d, 7.0, pred, name="fill")
    elif mode == "float_predicate":
        nisa.tensor_copy_predicated(d, s, t)
    else:  # dtypes
        h = nl.ndarray(src.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.tensor_copy(h, s)
        nisa.tensor_copy_predicated(d, h, pred)
    return to_hbm(d)


class TensorCopyPredicated(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(3)
        self.old = rng.uniform(-1, 1, (32, 48)).astype(np.float32)
        self.src = rng.uniform(-1, 1, (32, 48)).astype(np.float32)
        self.sel = rng.uniform(-1, 1, (32, 48)).astype(np.float32)

    def test_tile_scalar_and_reversed_predicate(self):
        on = self.sel > 0
        np.testing.assert_array_equal(copy_where(self.old, self.src, self.sel, "tile"),
                                      np.where(on, self.src, self.old))
        np.testing.assert_array_equal(copy_where(self.old, self.src, self.sel, "reversed"),
                                      np.where(on, self.old, self.src))
        np.testing.assert_array_equal(copy_where(self.old, self.src, self.sel, "scalar"),
                                      np.where(on, np.float32(7), self.old))

    def test_refusals_at_the_kernel_line(self):
        for mode, words in (("float_predicate", "uint8, uint16 or uint32 tile"),
                            ("dtypes", "src and dst must share a dtype")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    copy_where(self.old, self.src, self.sel, mode)
                self.assertIn("newapi_arith_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


# --- NeuronCore-v4: exponential and activate2 --------------------------------------------------

def exp_kernel(a, col, mode):
    ta, tc = on_chip(a), on_chip(col)
    r = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    if mode == "scalar":
        nisa.exponential(r, ta, max_value=1.5)
    elif mode == "column":
        nisa.exponential(dst=r, src=ta, max_value=tc, name="e")
    elif mode == "sum":
        rr = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.exponential(r, ta, reduce_res=rr, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    elif mode == "idle_res":
        rr = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
        nisa.exponential(r, ta, reduce_res=rr)
    else:  # init
        nisa.exponential(r, ta, reduce_init=2.0)
    return to_hbm(r)


exp_trn3 = on("trn3")(exp_kernel)
exp_trn2 = on("trn2")(exp_kernel)


def act2_kernel(a, col, mode):
    ta, tc = on_chip(a), on_chip(col)
    r = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    rr = nl.ndarray((a.shape[0], 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(rr, 0.0)
    if mode == "scale_bias":
        nisa.activate2(r, nl.relu, ta, tc, 0.5, nl.multiply, nl.add)
    elif mode == "minus_reversed":
        nisa.activate2(r, nl.relu, ta, tc, 3.0, nl.multiply, nl.subtract, reverse1=True)
    elif mode == "minus_column":
        nisa.activate2(r, nl.relu, ta, 1.0, tc, nl.multiply, nl.subtract,
                       reduce_op=nl.add, reduce_res=rr, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    elif mode == "subtract_from":
        nisa.activate2(dst=r, op=nl.relu, data=ta, imm0=tc, imm1=0.0, op0=nl.subtract, op1=None,
                       reverse0=True, name="a2")
    elif mode == "bypass":
        nisa.activate2(r, nl.relu, ta, 0.0, 0.0, None, None)
    elif mode == "relu_param":
        nisa.activate2(r, nl.relu, ta, 1.0, 0.0, nl.multiply, None, relu_param=0.1)
    elif mode == "max_reduce":
        nisa.activate2(r, nl.relu, ta, 1.0, 0.0, nl.multiply, None, reduce_op=nl.maximum,
                       reduce_res=rr, reduce_cmd=nisa.reduce_cmd.reset_reduce)
    else:  # pair
        nisa.activate2(r, nl.relu, ta, 1.0, 2.0, nl.add, nl.add)
    return to_hbm(r), to_hbm(rr)


act2_trn3 = on("trn3")(act2_kernel)
act2_trn1 = nki.jit(act2_kernel)


class NeuronCoreV4Calls(unittest.TestCase):
    def setUp(self):
        rng = np.random.default_rng(11)
        self.a = rng.integers(-6, 7, (64, 40)).astype(np.float32)
        self.c = rng.integers(-3, 4, (64, 1)).astype(np.float32)

    def test_exponential_subtracts_a_scalar_or_a_column(self):
        np.testing.assert_allclose(exp_trn3(self.a, self.c, "scalar"),
                                   np.exp(self.a - np.float32(1.5)), rtol=2e-6)
        np.testing.assert_allclose(exp_trn3(self.a, self.c, "column"), np.exp(self.a - self.c),
                                   rtol=2e-6)

    def test_exponential_refusals(self):
        for kernel, mode, words in (
                (exp_trn2, "scalar", "NeuronCore-v4 (trn3) only"),
                (exp_trn3, "sum", "reduce_cmd='reset_reduce' is not modelled"),
                (exp_trn3, "idle_res", "reduce_res='a tile' is not modelled"),
                (exp_trn3, "init", "reduce_init= must be unset or 0.0")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    kernel(self.a, self.c, mode)
                self.assertIn("newapi_arith_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))

    def test_activate2_pairs(self):
        a, c = self.a, self.c
        relu = lambda x: np.maximum(x, np.float32(0))  # noqa: E731
        np.testing.assert_array_equal(act2_trn3(a, c, "scale_bias")[0],
                                      relu(a * c + np.float32(0.5)))
        np.testing.assert_array_equal(act2_trn3(a, c, "minus_reversed")[0],
                                      relu(np.float32(3) - a * c))
        np.testing.assert_array_equal(act2_trn3(a, c, "subtract_from")[0], relu(c - a))
        np.testing.assert_array_equal(act2_trn3(a, c, "bypass")[0], relu(a))
        r, rr = act2_trn3(a, c, "minus_column")
        np.testing.assert_array_equal(r, relu(a - c))
        np.testing.assert_array_equal(rr, relu(a - c).sum(axis=1, keepdims=True))

    def test_activate2_refusals(self):
        for kernel, mode, words in (
                (act2_trn1, "bypass", "NeuronCore-v4 (trn3) only"),
                (act2_trn3, "relu_param", "relu_param=0.1 is not modelled"),
                (act2_trn3, "max_reduce", "reduce_op=maximum is not modelled"),
                (act2_trn3, "pair", "(op0, op1) = (add, add) is not one of the six pairs")):
            with self.subTest(mode=mode):
                with self.assertRaises(KernelNotTraced) as caught:
                    kernel(self.a, self.c, mode)
                self.assertIn("newapi_arith_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


if __name__ == "__main__":
    unittest.main()

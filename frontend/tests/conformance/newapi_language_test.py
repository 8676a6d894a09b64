"""ncverify as an NKI simulator for the new API's `nki.language` (NKI 0.3.0-0.6): the compute and
data-movement calls with their 0.6 signatures, the operator names as `op=` constants of nki.isa
calls, nl.ndarray(address=), NKIObject config classes, launch-query defaults, and the refusals
of what the model does not compute. Each kernel is ncverify's own, checked against NumPy here.
Run by `python3 -m ncverify_nki.run` (ctest label `conformance`)."""

import enum
import os
import subprocess
import tempfile
import unittest
from dataclasses import dataclass, field

import numpy as np

import nki
import nki.dtype as nt
import nki.isa as nisa
import nki.language as nl
from targets import target
from ncverify_nki.simulate import DynamicCheckFailure, KernelNotTraced

# A kernel for `ncverify import --param`: an NKIObject config without @dataclass and an Enum.
_CONFIGURED_KERNEL = """
import enum
import nki
import nki.language as nl


class Cfg(nl.NKIObject):
    scale: float = 2.0
    bias: float = 0.0


class Mode(enum.Enum):
    A = 1
    B = 2


@nki.jit
def k(a, cfg=Cfg(), mode=Mode.A):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    y = nl.add(nl.multiply(nl.load(a), cfg.scale), cfg.bias)
    if mode == Mode.B:
        y = nl.exp(y)
    nl.store(out, y)
    return out
"""

# ------------------------------------------------------------------ compute calls


@nki.jit
def binaries(a, b):
    """Tile-tile and tile-scalar calls of one shape: [P, F] each."""
    out = nl.ndarray((8,) + a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x, y = nl.load(a), nl.load(b)
    for k, t in enumerate((nl.add(x, y), nl.subtract(x, y), nl.multiply(x, 2.0),
                           nl.subtract(1.0, x), nl.maximum(x, y), nl.minimum(x, 0.25),
                           nl.power(y, x), nl.greater(x, y, dtype=nl.float32))):
        nl.store(out[k], t)
    return out


@nki.jit
def integer_ops(a, b):
    out = nl.ndarray((5,) + a.shape, dtype=nl.int32, buffer=nl.shared_hbm)
    x, y = nl.load(a), nl.load(b)
    for k, t in enumerate((nl.bitwise_and(x, y), nl.bitwise_or(x, y), nl.bitwise_xor(x, y),
                           nl.left_shift(x, 2), nl.right_shift(x, 1))):
        nl.store(out[k], t)
    return out


@nki.jit
def nots(a):
    """nl.invert and nl.logical_not of an integer tile (XOR with all-ones, with 1)."""
    out = nl.ndarray((2,) + a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    nl.store(out[0], nl.invert(x))
    nl.store(out[1], nl.logical_not(nl.bitwise_and(x, 1)))
    return out


@nki.jit
def unaries(a):
    out = nl.ndarray((9,) + a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    for k, t in enumerate((nl.exp(x), nl.log(x), nl.sqrt(x), nl.rsqrt(x), nl.tanh(x),
                           nl.square(x), nl.reciprocal(x), nl.negative(x), nl.abs(nl.negative(x)))):
        nl.store(out[k], t)
    return out


@nki.jit
def reductions(a):
    p = a.shape[0]
    out = nl.ndarray((4, p, 1), dtype=nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    nl.store(out[0], nl.sum(x, axis=1))
    nl.store(out[1], nl.max(x, axis=1, keepdims=True))
    nl.store(out[2], nl.min(x, axis=[1]))
    nl.store(out[3], nl.prod(x, axis=1))
    return out


@nki.jit
def matmul_copy(xt, y):
    """x.T @ y in PSUM, nl.copy to SBUF with a dtype change, then stored."""
    out = nl.ndarray((xt.shape[1], y.shape[1]), dtype=nl.bfloat16, buffer=nl.shared_hbm)
    prod = nl.matmul(nl.load(xt), nl.load(y), transpose_x=True)
    nl.store(out, nl.copy(prod, dtype=nl.bfloat16))
    return out


@nki.jit
def transposes(a):
    out = nl.ndarray((2, a.shape[1], a.shape[0]), dtype=a.dtype, buffer=nl.shared_hbm)
    nl.store(out[0], nl.copy(nl.transpose(nl.load(a))))
    nl.store(out[1], nl.load_transpose2d(a))
    return out


@nki.jit
def broadcasts_to(row, col):
    """nl.broadcast_to: [1, F] -> [P, F], [P, 1] -> [P, F], and a same-shape dtype cast."""
    p, f = col.shape[0], row.shape[1]
    out = nl.ndarray((2, p, f), dtype=nl.float32, buffer=nl.shared_hbm)
    cast = nl.ndarray((1, f), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out[0], nl.broadcast_to(nl.load(row), (p, f)))
    nl.store(out[1], nl.broadcast_to(nl.load(col), (p, f)))
    same = nl.broadcast_to(nl.load(row), (1, f), dtype=nl.bfloat16)
    nl.store(cast, nl.copy(same, dtype=nl.float32))
    return out, cast


@nki.jit
def identity_product(a):
    """identity.T @ a == a; the identity also written into a given tile (dst=)."""
    n = a.shape[0]
    out = nl.ndarray((2, n, n), dtype=nl.float32, buffer=nl.shared_hbm)
    eye = nl.shared_identity_matrix(n, dtype=nl.float32)
    nl.store(out[0], nl.copy(nl.matmul(eye, nl.load(a), transpose_x=True)))
    given = nl.ndarray((n, n), dtype=nl.float32, buffer=nl.sbuf)
    nl.shared_identity_matrix(n, dtype=nl.float32, dst=given)
    nl.store(out[1], given)
    return out


@nki.jit
def op_constants(a, b):
    """The nl names as op= of nki.isa calls; nl.bypass skips a tensor_scalar stage."""
    out = nl.ndarray((4,) + a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    x, y = nl.load(a), nl.load(b)
    t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(t, x, y, op=nl.multiply)
    nl.store(out[0], t)
    u = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(u, op=nl.exp, data=x)
    nl.store(out[1], u)
    v = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(v, x, op0=nl.add, operand0=3.0, op1=nl.bypass, operand1=0.0)
    nl.store(out[2], v)
    w = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(w, x, op0=nl.bypass, operand0=0.0, op1=nl.maximum, operand1=0.5)
    nl.store(out[3], w)
    return out


# ------------------------------------------------------------------ address=


@nki.jit
def placed(a):
    """Every SBUF and PSUM tensor at an address; `first` and `second` share bytes but `first`
    is never read after `second` is written."""
    p, f = a.shape
    out = nl.ndarray((2, p, f), dtype=nl.float32, buffer=nl.shared_hbm)
    first = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf, address=(0, 0))
    nisa.dma_copy(first, a)
    nisa.dma_copy(out[0], first)
    second = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf, address=(0, 0))
    nisa.tensor_scalar(second, first, op0=nl.multiply, operand0=2.0)
    eye = nl.ndarray((p, p), dtype=nl.float32, buffer=nl.sbuf, address=(0, 4 * f))
    nisa.memset(eye, 1.0)
    acc = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.psum, address=(0, 3 * 2048))
    nisa.nc_matmul(acc, eye, second)
    res = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf, address=(0, 4 * f + 4 * p))
    nisa.tensor_copy(res, acc)
    nisa.dma_copy(out[1], res)
    return out


@nki.jit
def rotating(a):
    """Addresses that depend on the loop index: two rotating places per tensor."""
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(a.shape[0] // 32):
        t = nl.ndarray((32, a.shape[1]), dtype=nl.float32, buffer=nl.sbuf,
                       address=(0, (i % 2) * 512))
        nisa.dma_copy(t, a[i * 32:(i + 1) * 32, :])
        u = nl.ndarray((32, a.shape[1]), dtype=nl.float32, buffer=nl.sbuf,
                       address=(32, (i % 2) * 512))
        nisa.tensor_scalar(u, t, op0=nl.multiply, operand0=2.0)
        nisa.dma_copy(out[i * 32:(i + 1) * 32, :], u)
    return out


@nki.jit
def clobbered(a):
    """`second` is placed over `first` while `first` is still read."""
    p, f = a.shape
    out = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.shared_hbm)
    first = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf, address=(0, 0))
    second = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf, address=(0, 8))
    nisa.dma_copy(first, a)
    nisa.memset(second, 1.0)
    nisa.tensor_tensor(second, first, second, op=nl.add)
    nisa.dma_copy(out, second)
    return out


@nki.jit
def mixed_placement(a):
    out = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    first = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf, address=(0, 0))
    other = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(first, a)
    nisa.tensor_copy(other, first)
    nisa.dma_copy(out, other)
    return out


@nki.jit
def psum_off_bank(a):
    t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.psum, address=(0, 512))
    return t


@nki.jit
def psum_banks_by_loop(a, b):
    """A PSUM tile whose bank follows the loop variable, as nki-library's
    `(grp_idx % 2) * 8192 + 6144`: every value starts a bank. Twelve iterations keep the loop
    symbolic, so the placement is an expression of g."""
    K, M = a.shape
    N = b.shape[1]
    out = nl.ndarray((12 * M, N), dtype=nl.float32, buffer=nl.shared_hbm)
    at = nl.ndarray((K, M), dtype=a.dtype, buffer=nl.sbuf, address=(0, 0))
    bt = nl.ndarray((K, N), dtype=b.dtype, buffer=nl.sbuf, address=(0, 4096))
    for g in nl.affine_range(12):
        acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum,
                         address=(0, (g % 2) * 2048 + 4096))
        nisa.dma_copy(dst=at, src=a)
        nisa.dma_copy(dst=bt, src=b)
        nisa.nc_matmul(acc, at, bt)
        res = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.sbuf, address=(0, 8192))
        nisa.tensor_scalar(res, acc, nl.multiply, float(1 + g % 2))
        nisa.dma_copy(dst=out[g * M:(g + 1) * M, :], src=res)
    return out


@nki.jit
def psum_half_banks_by_loop(a):
    for g in nl.affine_range(12):
        t = nl.ndarray((16, 8), dtype=nl.float32, buffer=nl.psum,  # noqa: F841 (refused)
                       address=(0, (g % 2) * 1024))
    return a


# ------------------------------------------------------------------ classes, launch queries


class Scale(nl.NKIObject):
    """No @dataclass: the compiler's default __init__ (fields in order, defaults, then
    __post_init__)."""

    factor: float = 1.0
    offset: float = None

    def __post_init__(self):
        if self.offset is None:
            self.offset = 0.5


@dataclass
class Shift(nl.NKIObject):
    """@dataclass: dataclasses' own __init__ (a default_factory field included)."""

    amount: float = 0.0
    extra: list = field(default_factory=lambda: [0.25])


class Mode(enum.Enum):
    DOUBLE = 1
    NEGATE = 2


@nki.jit
def configured(a, cfg=Scale(3.0), shift=Shift(1.0), mode=Mode.NEGATE):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.add(nl.multiply(x, cfg.factor), cfg.offset + shift.amount + shift.extra[0])
    if mode == Mode.NEGATE:
        y = nl.negative(y)
    nl.store(out, y)
    return out


def _cast(x, dtype: nki.dtype = nl.bfloat16):
    return nl.copy(x, dtype=dtype)


@nki.jit
def annotated(a):
    """nki.dtype as an annotation (nki-library's habit) and as a module of dtypes."""
    out = nl.ndarray(a.shape, dtype=nt.bfloat16, buffer=nl.shared_hbm)
    nl.store(out, _cast(nl.load(a)))
    return out


@nki.jit
def limits(a):
    """nl.tile_size's byte constants (NKI 0.4.0) and nl.empty_like of an HBM input (a private
    HBM tensor, same shape and dtype)."""
    out = nl.ndarray((1, 4), dtype=nl.float32, buffer=nl.shared_hbm)
    scratch = nl.empty_like(a)
    nisa.dma_copy(scratch, a)
    t = nl.ndarray((1, 4), dtype=nl.float32, buffer=nl.sbuf)
    for k, v in enumerate((nl.tile_size.total_available_sbuf_size, nl.tile_size.sbuf_fmax,
                           nl.tile_size.psum_bank_fmax_bytes, nl.tile_size.pmax)):
        nisa.memset(t[0:1, k:k + 1], float(v))
    back = nl.load(scratch[0:1, 0:4])
    nl.store(out, nl.add(t, back))
    return out


@nki.jit
def blocks(a):
    """Program nl.program_id() (axis 0 by default) of nl.num_programs() writes its block."""
    p = nl.program_id()
    n = nl.num_programs()
    rows = a.shape[0] // n
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    x = nl.load(a[p * rows:(p + 1) * rows, :])
    # num_programs of a tuple of axes is their product: here n again, so this adds 1.0
    one = float(nl.program_ndim() * nl.num_programs(axes=(0,)) // n)
    nl.store(out[p * rows:(p + 1) * rows, :], nl.add(x, one))
    return out


# ------------------------------------------------------------------ refused


@nki.jit
def divides(a):
    x = nl.load(a)
    return nl.divide(x, x)


@nki.jit
def broadcasts(a, col):
    return nl.add(nl.load(a), nl.load(col))


@nki.jit
def scalar_power(a):
    return nl.power(nl.load(a), 2.0)


@nki.jit
def plain_matmul(a):
    x = nl.load(a)
    return nl.matmul(x, x)


@nki.jit
def erf_call(a):
    return nl.erf(nl.load(a))


@nki.jit
def unmodelled_activation(a):
    x = nl.load(a)
    t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.activation(t, op=nl.gelu_apprx_tanh, data=x)
    return t


@nki.jit
def abs_max_op(a):
    x = nl.load(a)
    t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_tensor(t, x, x, op=nl.abs_max)
    return t


@nki.jit
def logical_and_op(a):
    x = nl.load(a)
    t = nl.ndarray(a.shape, dtype=nl.int32, buffer=nl.sbuf)
    nisa.tensor_tensor(t, x, x, op=nl.logical_and)
    return t


@nki.jit
def invert_op(a):
    x = nl.load(a)
    t = nl.ndarray(a.shape, dtype=nl.int32, buffer=nl.sbuf)
    nisa.tensor_scalar(t, x, op0=nl.invert, operand0=0)
    return t


@nki.jit
def unary_alu_op(a):
    x = nl.load(a)
    t = nl.ndarray(a.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_scalar(t, x, op0=nl.add, operand0=1.0, op1=nl.square, operand1=0.0)
    return t


@nki.jit
def store_psum(a, b):
    out = nl.ndarray((a.shape[1], b.shape[1]), dtype=nl.float32, buffer=nl.shared_hbm)
    nl.store(out, nl.matmul(nl.load(a), nl.load(b), transpose_x=True))
    return out


@nki.jit
def masked_load(a):
    return nl.load(a, mask=None)


class NewLanguageTest(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(45)

    def rand(self, *shape, lo=0.5, hi=2.0):
        return self.rng.uniform(lo, hi, shape).astype(np.float32)

    def test_binary_calls_tile_tile_and_tile_scalar(self):
        a, b = self.rand(64, 96), self.rand(64, 96)
        got = nki.simulate(binaries)(a, b)
        want = [a + b, a - b, a * 2, 1 - a, np.maximum(a, b), np.minimum(a, 0.25),
                np.power(b, a), (a > b).astype(np.float32)]
        for k, w in enumerate(want):
            np.testing.assert_allclose(got[k], w, rtol=1e-5, err_msg="output %d" % k)

    def test_bitwise_and_shift_calls_on_integers(self):
        a = self.rng.integers(0, 1 << 20, (32, 40)).astype(np.int32)
        b = self.rng.integers(0, 1 << 20, (32, 40)).astype(np.int32)
        got = nki.simulate(integer_ops)(a, b)
        for k, w in enumerate((a & b, a | b, a ^ b, a << 2, a >> 1)):
            np.testing.assert_array_equal(got[k], w, err_msg="output %d" % k)

    def test_invert_and_logical_not_of_integers(self):
        for dt in (np.int32, np.uint8, np.uint16):
            a = self.rng.integers(0, 200, (16, 12)).astype(dt)
            got = nki.simulate(nots)(a)
            np.testing.assert_array_equal(got[0], ~a, err_msg=str(dt))
            np.testing.assert_array_equal(got[1], 1 - (a & 1), err_msg=str(dt))
        self.refused(nots, np.zeros((4, 4), np.uint32), says=["all-ones mask is no fp32"])

    def test_unary_calls(self):
        a = self.rand(128, 64)
        got = nki.simulate(unaries)(a)
        want = [np.exp(a), np.log(a), np.sqrt(a), 1 / np.sqrt(a), np.tanh(a), a * a, 1 / a, -a,
                a]
        for k, w in enumerate(want):
            np.testing.assert_allclose(got[k], w, rtol=1e-4, err_msg="output %d" % k)

    def test_reductions_of_the_free_axis(self):
        a = self.rand(100, 16, lo=0.9, hi=1.1)
        got = nki.simulate(reductions)(a)
        for k, w in enumerate((a.sum(1), a.max(1), a.min(1), a.prod(1))):
            np.testing.assert_allclose(got[k][:, 0], w, rtol=1e-5, err_msg="output %d" % k)

    def test_matmul_with_transposed_x_then_copy_to_sbuf(self):
        xt, y = self.rand(128, 64), self.rand(128, 96)
        got = nki.simulate(matmul_copy)(xt, y)
        np.testing.assert_allclose(got.astype(np.float32), xt.T @ y, rtol=1e-2)

    def test_transpose_and_load_transpose2d(self):
        a = self.rand(32, 24)
        got = nki.simulate(transposes)(a)
        np.testing.assert_array_equal(got[0], a.T)
        np.testing.assert_array_equal(got[1], a.T)

    def test_broadcast_to(self):
        row, col = self.rand(1, 40), self.rand(64, 1)
        got, cast = nki.simulate(broadcasts_to)(row, col)
        np.testing.assert_array_equal(got[0], np.broadcast_to(row, (64, 40)))
        np.testing.assert_array_equal(got[1], np.broadcast_to(col, (64, 40)))
        np.testing.assert_allclose(cast, row, rtol=2 ** -8)  # through bf16
        self.assertFalse(np.array_equal(cast, row))  # rounded: the dtype= cast happened

    def test_shared_identity_matrix(self):
        a = self.rand(64, 64)
        got = nki.simulate(identity_product)(a)
        np.testing.assert_allclose(got[0], a, rtol=1e-6)
        np.testing.assert_array_equal(got[1], np.identity(64, np.float32))

    def test_operator_names_as_isa_op_constants(self):
        a, b = self.rand(16, 8, lo=-1.0), self.rand(16, 8)
        got = nki.simulate(op_constants)(a, b)
        np.testing.assert_allclose(got[0], a * b, rtol=1e-6)
        np.testing.assert_allclose(got[1], np.exp(a), rtol=1e-4)
        np.testing.assert_allclose(got[2], a + 3.0, rtol=1e-6)
        np.testing.assert_allclose(got[3], np.maximum(a, 0.5), rtol=1e-6)

    def test_explicit_addresses_sharing_bytes_one_after_the_other(self):
        a = self.rand(128, 32)
        got = nki.simulate(placed)(a)
        np.testing.assert_array_equal(got[0], a)
        # eye is all ones: each row of ones.T @ (2a) is the column sums of 2a
        np.testing.assert_allclose(got[1], np.broadcast_to(2 * a.sum(0), a.shape), rtol=1e-5)

    def test_explicit_addresses_per_loop_iteration(self):
        a = self.rand(128, 64)
        np.testing.assert_array_equal(nki.simulate(rotating)(a), 2 * a)

    def test_explicit_addresses_overlapping_while_read_fail(self):
        with self.assertRaises(DynamicCheckFailure) as caught:
            nki.simulate(clobbered)(self.rand(16, 8))
        self.assertIn("overlap while both are live", str(caught.exception))

    def test_explicit_and_compiler_placed_mix_is_refused(self):
        with self.assertRaises(KernelNotTraced) as caught:
            nki.simulate(mixed_placement)(self.rand(16, 8))
        self.assertIn("give every SBUF tensor an address, or none", str(caught.exception))
        # named at the first instruction using the unplaced tensor
        import inspect
        src, first = inspect.getsourcelines(mixed_placement)
        line = first + [k for k, t in enumerate(src) if "tensor_copy(other" in t][0]
        self.assertEqual(caught.exception.where[1], line, str(caught.exception))

    def test_psum_address_off_a_bank_boundary_is_refused(self):
        with self.assertRaises(KernelNotTraced) as caught:
            nki.simulate(psum_off_bank)(self.rand(16, 8))
        self.assertIn("bank boundary", str(caught.exception))

    def test_psum_address_by_loop_variable_starts_a_bank_for_every_value(self):
        a, b = self.rand(64, 32), self.rand(64, 128)
        want = np.concatenate([(1 + g % 2) * (a.T @ b) for g in range(12)])
        np.testing.assert_allclose(nki.simulate(psum_banks_by_loop)(a, b), want, rtol=1e-5,
                                   atol=1e-5)

    def test_psum_address_by_loop_variable_off_a_bank_is_refused(self):
        with self.assertRaises(KernelNotTraced) as caught:
            nki.simulate(psum_half_banks_by_loop)(self.rand(16, 8))
        self.assertIn("a whole number of 2048-byte banks for every value", str(caught.exception))

    def test_nkiobject_without_dataclass_dataclass_and_enum_arguments(self):
        a = self.rand(8, 8)
        got = nki.simulate(configured)(a)
        np.testing.assert_allclose(got, -(a * 3.0 + 1.75), rtol=1e-6)
        got = nki.simulate(configured)(a, cfg=Scale(factor=2.0, offset=1.0), mode=Mode.DOUBLE)
        np.testing.assert_allclose(got, a * 2.0 + 2.25, rtol=1e-6)

    def test_nki_dtype_module_and_annotation(self):
        a = np.array([[1.0, 1.00390625, 3.5]] * 4, np.float32)  # 1 + 2^-8 rounds to 1 in bf16
        got = nki.simulate(annotated)(a)
        np.testing.assert_array_equal(np.asarray(got, np.float32), [[1.0, 1.0, 3.5]] * 4)

    def test_tile_size_constants_of_trn1_and_empty_like(self):
        a = np.zeros((4, 8), np.float32)
        with target("trn1"):
            got = nki.simulate(limits)(a)
        np.testing.assert_array_equal(got, [[176 * 1024, 176 * 256, 2048, 128]])

    def test_program_id_and_num_programs_default_to_axis_0(self):
        a = self.rand(256, 8)
        got = blocks[2](a)
        np.testing.assert_allclose(got, a + 1.0, rtol=1e-6)

    def test_import_takes_nkiobject_and_enum_params(self):
        """`--param cfg.bias=1.5` replaces a field of an NKIObject (its __dict__), `cfg=Cfg(..)`
        builds one, `mode=Mode.B` names an enum member; a field it has not is a usage error."""
        # the front end of this tree: the folder holding the `nki` stand-in
        stand_ins = os.path.dirname(os.path.dirname(os.path.abspath(nki.__file__)))
        env = dict(os.environ, NCVERIFY_FRONTEND_DIR=stand_ins)
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "configured.py")
            with open(path, "w") as f:
                f.write(_CONFIGURED_KERNEL)

            def imp(*params):
                args = [os.environ["NCVERIFY"], "import", path + ":k", "--input",
                        "a=fp32[128,64]"]
                for p in params:
                    args += ["--param", p]
                return subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      env=env, text=True, timeout=60)

            done = imp("cfg.bias=1.5")
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("op0=multiply, operand0=2", done.stdout)
            self.assertIn("op0=add, operand0=1.5", done.stdout)
            done = imp("cfg=Cfg(scale=3.0)", "mode=Mode.B")
            self.assertEqual(done.returncode, 0, done.stderr)
            self.assertIn("op0=multiply, operand0=3", done.stdout)
            self.assertIn("func=exp", done.stdout)
            done = imp("cfg.nope=1")
            self.assertEqual(done.returncode, 2)
            self.assertIn("Cfg has no field nope (its fields: scale, bias)", done.stderr)

    def refused(self, kernel, *args, says):
        with self.assertRaises(KernelNotTraced) as caught:
            nki.simulate(kernel)(*args)
        for s in says:
            self.assertIn(s, str(caught.exception))

    def test_documented_limits_are_refused_with_the_reason(self):
        a = self.rand(16, 8)
        self.refused(divides, a, says=["nl.divide is not modelled", "Division is not available"])
        self.refused(broadcasts, a, self.rand(16, 1), says=["do not broadcast"])
        self.refused(scalar_power, a, says=["scalar exponent"])
        self.refused(plain_matmul, a, says=["transpose_x=False is not modelled"])
        self.refused(store_psum, self.rand(16, 8), self.rand(16, 8), says=["is in PSUM"])
        self.refused(masked_load, a, says=["unknown keyword argument 'mask'"])

    def test_unmodelled_functions_are_refused_as_calls_and_as_op(self):
        a = self.rand(16, 8)
        self.refused(erf_call, a, says=["nl.erf is not modelled", "no erf function"])
        self.refused(unmodelled_activation, a, says=["gelu_apprx_tanh is not modelled"])
        self.refused(abs_max_op, a, says=["abs_max is not modelled", "signed input"])
        ints = np.zeros((16, 8), np.int32)
        self.refused(logical_and_op, ints, says=["op logical_and is not modelled",
                                                 "no logical_and operator"])
        self.refused(invert_op, ints, says=["op0 invert is not modelled", "no bitwise-not"])
        self.refused(unary_alu_op, a, says=["op1 square is a unary operator",
                                            "tensor_scalar_reduce op0 only"])


if __name__ == "__main__":
    unittest.main()

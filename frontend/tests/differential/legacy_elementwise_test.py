"""Differential cases, legacy dialect (neuronxcc.nki), elementwise and reducing calls:
nisa.tensor_tensor, tensor_scalar, tensor_copy, reciprocal, activation, activation_reduce,
tensor_reduce, tensor_scalar_reduce and the nl arithmetic, math, comparison and reduction calls.
Each reference below is the call's documented semantics (NKI API reference, neuronxcc.nki, SDK
2.26: https://awsdocs-neuron.readthedocs-hosted.com/en/v2.26.1/nki/api/nki.isa.html and
nki.language.html; "Supported Math Operators" and "NKI Type Promotion" on nki.api.shared),
written here in NumPy. Run by `python3 -m ncverify_nki.run` (ctest label `frontend`)."""

import math
import unittest

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from diffharness import cast, run_case, to_bf16


@nki.jit
def tiles_kernel(*arrays, body):
    """Loads every array into SBUF, runs `body` on the tiles and stores each tile it returns."""
    outs = []
    for r in body(*[nl.load(a) for a in arrays]):
        o = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(o, r)
        outs.append(o)
    return tuple(outs)


def run(body, *arrays):
    return tiles_kernel(*arrays, body=body)


# The ALU operators' documented meaning (nki.api.shared "Supported Math Operators"): arithmetic
# ones in float32, comparisons give 1.0 or 0.0; bitvec ones on the integers' bit patterns.
F32 = np.float32
ARITH = [
    (np.add, lambda a, b: F32(a) + F32(b)),
    (np.subtract, lambda a, b: F32(a) - F32(b)),
    (np.multiply, lambda a, b: F32(a) * F32(b)),
    (np.maximum, lambda a, b: np.maximum(F32(a), F32(b))),
    (np.minimum, lambda a, b: np.minimum(F32(a), F32(b))),
    (np.divide, lambda a, b: F32(a) / F32(b)),
    (nl.equal, lambda a, b: (F32(a) == F32(b)).astype(F32)),
    (nl.not_equal, lambda a, b: (F32(a) != F32(b)).astype(F32)),
    (nl.greater, lambda a, b: (F32(a) > F32(b)).astype(F32)),
    (nl.greater_equal, lambda a, b: (F32(a) >= F32(b)).astype(F32)),
    (nl.less, lambda a, b: (F32(a) < F32(b)).astype(F32)),
    (nl.less_equal, lambda a, b: (F32(a) <= F32(b)).astype(F32)),
]
BITVEC = [
    (np.bitwise_and, np.bitwise_and),
    (np.bitwise_or, np.bitwise_or),
    (np.bitwise_xor, np.bitwise_xor),
]


def away_from_zero(c, shape):
    """Denominators: |x| in [0.5, 4]."""
    return (c.floats(shape, 0.5, 4.0) * np.where(c.rng.random(shape) < 0.5, -1, 1)).astype(F32)


def with_ties(c, a):
    """b equal to a in about a third of the places (so comparisons see equality)."""
    b = c.floats(a.shape)
    return np.where(c.rng.random(a.shape) < 0.35, a, b).astype(F32)


class TensorTensor(unittest.TestCase):
    def test_tt_ops(self):
        def body(c):
            a = c.floats(c.shape())
            b = with_ties(c, a)
            b[np.abs(b) < 0.25] = 0.5  # divide
            outs = run(lambda ta, tb: [nisa.tensor_tensor(ta, tb, op) for op, _ in ARITH]
                       + [nisa.tensor_tensor(data1=ta, data2=tb, op=np.subtract)], a, b)
            for (op, ref), got in zip(ARITH, outs):
                c.check("tensor_tensor(%s)" % op.__name__, got, ref(a, b))
            c.check("tensor_tensor(data1=, data2=, subtract)", outs[-1], a - b)
        run_case("tt_ops", body)

    def test_tt_bitvec(self):
        def body(c):
            shape = c.shape()
            a, b = c.ints(shape, 0, 2**20), c.ints(shape, 0, 2**20)
            outs = run(lambda ta, tb: [nisa.tensor_tensor(ta, tb, op) for op, _ in BITVEC], a, b)
            for (op, ref), got in zip(BITVEC, outs):
                c.check("tensor_tensor(%s) int32" % op.__name__, got, ref(a, b))
        run_case("tt_bitvec", body)

    def test_tt_int32_exact(self):
        """"integer add, multiply, or subtract ... run on the GpSimd Engine" exactly, not "in
        float32 math" (tensor_tensor page; nki.api.shared: "32-bit integer Add and Multiply
        are only supported on GpSIMD Engine"): int32 sums and differences beyond 2^24 are exact
        (model/semantics tensor_tensor_native_int; was a known failure, int32-gpsimd-arith)."""
        def body(c):
            shape = c.shape()
            a, b = c.ints(shape, 2**24, 2**29), c.ints(shape, -2**20, 2**20)
            outs = run(lambda ta, tb: [
                nisa.tensor_tensor(ta, tb, np.add, engine=nisa.gpsimd_engine),
                nisa.tensor_tensor(ta, tb, np.subtract, engine=nisa.gpsimd_engine)], a, b)
            c.check("int32 add on GpSimd", outs[0], a + b)
            c.check("int32 subtract on GpSimd", outs[1], a - b)
        run_case("tt_int32_exact", body)

    def test_tt_dtype_engine(self):
        """dtype= casts the fp32 result; engine= picks the engine, not the values."""
        def body(c):
            shape = c.shape()
            a, b = c.floats(shape), c.floats(shape)
            outs = run(lambda ta, tb: [
                nisa.tensor_tensor(ta, tb, np.add, dtype=nl.bfloat16),
                nisa.tensor_tensor(ta, tb, np.multiply, dtype=nl.float16),
                nisa.tensor_tensor(ta, tb, np.subtract, engine=nisa.vector_engine),
                nisa.tensor_tensor(ta, tb, np.add, engine=nisa.gpsimd_engine),
            ], a, b)
            c.check("dtype=bfloat16", outs[0], to_bf16(a + b))
            c.check("dtype=float16", outs[1], cast(a * b, "float16"))
            c.check("engine=vector", outs[2], a - b)
            c.check("engine=gpsimd", outs[3], a + b)
        run_case("tt_dtype_engine", body)

    def test_tt_promotion(self):
        """Without dtype=, the output has "the data type of the input tiles, or whichever input
        type has the highest precision" (tensor_tensor's dtype parameter; NKI Type Promotion:
        (bf16, fp32) -> fp32, (fp16, bf16) -> fp32, (int, float) -> the float)."""
        def body(c):
            shape = c.shape()
            a, b = c.floats(shape), c.floats(shape)

            def k(ta, tb, ti):
                a16 = nisa.tensor_copy(ta, dtype=nl.bfloat16)
                h16 = nisa.tensor_copy(tb, dtype=nl.float16)
                return [nisa.tensor_tensor(a16, tb, np.add), nisa.tensor_tensor(tb, a16, np.add),
                        nisa.tensor_tensor(a16, h16, np.add), nisa.tensor_tensor(ti, tb, np.add)]
            i = c.ints(shape, -100, 100)
            outs = run(k, a, b, i)
            ab, bh = to_bf16(a), cast(b, "float16")
            c.check("tensor_tensor(bf16, fp32) is fp32", outs[0], ab + b)
            c.check("tensor_tensor(fp32, bf16) is fp32", outs[1], b + ab)
            c.check("tensor_tensor(bf16, fp16) is fp32", outs[2], ab + bh)
            c.check("tensor_tensor(int32, fp32) is fp32", outs[3], i.astype(F32) + b)
        run_case("tt_promotion", body)

    def test_tt_mask(self):
        """mask= limits the instruction to the elements where it holds."""
        def body(c):
            p, f = c.shape(free=(2, 64))
            k = int(c.rng.integers(1, f))
            a, b = c.floats((p, f)), c.floats((p, f))

            def kern(ta, tb):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                return [nisa.tensor_tensor(ta[i_p, i_f], tb[i_p, i_f], np.add, mask=(i_f < k))]
            got, = run(kern, a, b)
            c.check("tensor_tensor(mask=i_f < %d)" % k, got[:, :k], (a + b)[:, :k])
        run_case("tt_mask", body)

    def test_masked_assign(self):
        """`d[i_p, i_f] = call(..., mask=m)` (the nki-mask page's way to write part of a
        tile) writes the elements where m holds; the rest of d keeps its value. Found by this
        test: the destination was not narrowed by the mask (a shape_rule failure at run time);
        fixed in tiles.assign."""
        def body(c):
            p, f = c.shape(free=(2, 64))
            k = int(c.rng.integers(1, f))
            a, b = c.floats((p, f)), c.floats((p, f))

            def kern(ta, tb):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                d = nl.zeros((p, f), dtype=nl.float32)
                d[i_p, i_f] = nisa.tensor_tensor(ta[i_p, i_f], tb[i_p, i_f], np.add,
                                                 mask=(i_f < k))
                e = nl.copy(tb)
                e[i_p, i_f] = nl.multiply(ta[i_p, i_f], 2.0, mask=(i_f >= k))
                g = nl.copy(ta)
                g[i_p, i_f] = nisa.activation(np.exp, tb[i_p, i_f], mask=(i_p < 1))
                return [d, e, g]
            d, e, g = run(kern, a, b)
            before = np.arange(f)[None, :] < k
            c.check("masked assignment, i_f < %d" % k, d, np.where(before, a + b, 0))
            c.check("masked assignment, i_f >= %d" % k, e, np.where(before, b, a * 2))
            c.check("masked assignment, i_p < 1", g,
                    np.where(np.arange(p)[:, None] < 1, np.exp(b.astype(np.float64)), a),
                    ACT_RTOL, ACT_ATOL)
        run_case("masked_assign", body)

    def test_tt_refused_engine(self):
        def body(c):
            a = c.floats(c.shape())
            call = lambda ta: nisa.tensor_tensor(ta, ta, np.add, engine=nisa.tensor_engine)  # noqa
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call(t)]}, "nisa.tensor_tensor",
                      "engine", call)
            psum = lambda t: nisa.nc_transpose(t, engine=nisa.tensor_engine)  # noqa: E731
            call2 = lambda t: nisa.tensor_tensor(data1=psum(t), data2=psum(t), op=np.add)  # noqa
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call2(t)]}, "nisa.tensor_tensor",
                      "data2", call2)
        run_case("tt_refused_engine", body)


class TensorScalar(unittest.TestCase):
    def test_ts_two_ops(self):
        """(data op0 operand0) op1 operand1, reverse0/reverse1 swapping each operator's inputs,
        operands scalars or [P, 1] columns, all in fp32."""
        def body(c):
            p, f = c.shape()
            a = c.floats((p, f))
            col0, col1 = c.floats((p, 1)), c.floats((p, 1))
            s0, s1 = float(F32(c.rng.uniform(-3, 3))), float(F32(c.rng.uniform(-3, 3)))
            outs = run(lambda ta, tc0, tc1: [
                nisa.tensor_scalar(ta, np.subtract, s0),
                nisa.tensor_scalar(ta, np.subtract, s0, reverse0=True),
                nisa.tensor_scalar(ta, np.multiply, tc0, False, np.subtract, tc1),
                nisa.tensor_scalar(ta, np.subtract, tc0, True, np.subtract, s1, True),
                nisa.tensor_scalar(data=ta, op0=np.maximum, operand0=s0, reverse0=False,
                                   op1=np.subtract, operand1=tc1, reverse1=True),
            ], a, col0, col1)
            c.check("data - s0", outs[0], a - F32(s0))
            c.check("s0 - data (reverse0)", outs[1], F32(s0) - a)
            c.check("data * col0 - col1", outs[2], a * col0 - col1)
            c.check("s1 - (col0 - data) (reverse0, reverse1)", outs[3], F32(s1) - (col0 - a))
            c.check("col1 - max(data, s0) (reverse1)", outs[4], col1 - np.maximum(a, F32(s0)))
        run_case("ts_two_ops", body)

    def test_ts_dtype_engine_mask(self):
        def body(c):
            p, f = c.shape(free=(2, 48))
            k = int(c.rng.integers(1, f))
            a = c.floats((p, f))

            def kern(ta):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                d = nisa.tensor_scalar(ta[i_p, i_f], np.add, 1.5, mask=(i_f < k))
                return [nisa.tensor_scalar(ta, np.multiply, 3.0, dtype=nl.bfloat16),
                        nisa.tensor_scalar(ta, np.multiply, 3.0, op1=np.add, operand1=1.0,
                                           engine=nisa.scalar_engine),
                        nisa.tensor_scalar(ta, np.add, 2.0, engine=nisa.vector_engine),
                        d]
            outs = run(kern, a)
            c.check("dtype=bfloat16", outs[0], to_bf16(a * F32(3)))
            c.check("engine=scalar", outs[1], a * F32(3) + F32(1))
            c.check("engine=vector", outs[2], a + F32(2))
            c.check("mask", outs[3][:, :k], (a + F32(1.5))[:, :k])
        run_case("ts_dtype_engine_mask", body)

    def test_ts_refused_engine(self):
        def body(c):
            a = c.floats(c.shape())
            call = lambda t: nisa.tensor_scalar(t, np.add, 1.0, engine=nisa.tensor_engine)  # noqa
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call(t)]}, "nisa.tensor_scalar",
                      "engine", call)
        run_case("ts_refused_engine", body)


class CopiesAndReciprocal(unittest.TestCase):
    def test_copy_reciprocal(self):
        """tensor_copy: the same values, cast to dtype=; reciprocal: 1/x in fp32."""
        def body(c):
            p, f = c.shape(free=(2, 48))
            k = int(c.rng.integers(1, f))
            a = c.floats((p, f))
            d = away_from_zero(c, (p, f))

            def kern(ta, td):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                z = nisa.tensor_copy(ta[i_p, i_f], mask=(i_f < k))
                r = nisa.reciprocal(td[i_p, i_f], mask=(i_f < k))
                return [nisa.tensor_copy(src=ta), nisa.tensor_copy(ta, dtype=nl.bfloat16),
                        nisa.tensor_copy(ta, engine=nisa.vector_engine),
                        nisa.tensor_copy(ta, engine=nisa.gpsimd_engine), z,
                        nisa.reciprocal(data=td), nisa.reciprocal(td, dtype=nl.bfloat16), r,
                        nl.copy(src=ta), nl.copy(ta, dtype=nl.float16),
                        nl.reciprocal(x=td), nl.reciprocal(td, dtype=nl.bfloat16),
                        nl.copy(ta[i_p, i_f], mask=(i_f < k)),
                        nl.reciprocal(td[i_p, i_f], mask=(i_f < k))]
            outs = run(kern, a, d)
            c.check("tensor_copy", outs[0], a)
            c.check("tensor_copy(dtype=bf16)", outs[1], to_bf16(a))
            c.check("tensor_copy(engine=vector)", outs[2], a)
            c.check("tensor_copy(engine=gpsimd)", outs[3], a)
            c.check("tensor_copy(mask)", outs[4][:, :k], a[:, :k])
            c.check("reciprocal", outs[5], F32(1) / d)
            c.check("reciprocal(dtype=bf16)", outs[6], to_bf16(F32(1) / d))
            c.check("reciprocal(mask)", outs[7][:, :k], (F32(1) / d)[:, :k])
            c.check("nl.copy", outs[8], a)
            c.check("nl.copy(dtype=fp16)", outs[9], cast(a, "float16"))
            c.check("nl.reciprocal", outs[10], F32(1) / d)
            c.check("nl.reciprocal(dtype=bf16)", outs[11], to_bf16(F32(1) / d))
            c.check("nl.copy(mask)", outs[12][:, :k], a[:, :k])
            c.check("nl.reciprocal(mask)", outs[13][:, :k], (F32(1) / d)[:, :k])
        run_case("copy_reciprocal", body)

    def test_copy_refused(self):
        def body(c):
            a = c.floats(c.shape())
            call = lambda t: nisa.tensor_copy(t, engine=nisa.tensor_engine)  # noqa: E731
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call(t)]}, "nisa.tensor_copy",
                      "engine", call)
        run_case("copy_refused_engine", body)


# Activation functions (nki.api.shared "Supported Activation Functions"): ScalarE approximates
# them with piece-wise polynomials, so the documented result is the function within a relative
# tolerance. ACT_RTOL is the tolerance this test states (the pages give no accuracy figure).
ACT_RTOL, ACT_ATOL = 1e-5, 1e-6
_erf = np.vectorize(math.erf)
ACTS = [
    (np.exp, nl.exp, np.exp, (-4, 4)),
    (np.log, nl.log, np.log, (0.1, 8)),
    (np.tanh, nl.tanh, np.tanh, (-4, 4)),
    (None, nl.sigmoid, lambda x: 1 / (1 + np.exp(-x)), (-6, 6)),
    (None, nl.relu, lambda x: np.maximum(x, 0), (-4, 4)),
    (None, nl.gelu, lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), (-4, 4)),
    (None, nl.silu, lambda x: x / (1 + np.exp(-x)), (-6, 6)),
    (np.square, nl.square, np.square, (-4, 4)),
    (np.sqrt, nl.sqrt, np.sqrt, (0.01, 8)),
    (None, nl.rsqrt, lambda x: 1 / np.sqrt(x), (0.05, 8)),
    (np.sin, nl.sin, np.sin, (-3, 3)),
    (np.abs, nl.abs, np.abs, (-4, 4)),
]


class Activation(unittest.TestCase):
    def test_act_functions(self):
        """nl.<f>(x) and nisa.activation(op=f, data): f(data * scale + bias) in fp32; dtype=
        rounds the fp32 result (bf16: the approximation may move it by one bf16 step at a
        rounding boundary); mask= limits the elements computed."""
        def body(c):
            p, f = c.shape(free=(2, 32))
            k = int(c.rng.integers(1, f))
            xs = [c.floats((p, f), lo, hi) for _, _, _, (lo, hi) in ACTS]

            def kern(*ts):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                out = []
                for (_, nlf, _, _), t in zip(ACTS, ts):
                    out += [nlf(x=t), nisa.activation(op=nlf, data=t),
                            nlf(t, dtype=nl.bfloat16), nlf(t[i_p, i_f], mask=(i_f < k))]
                return out
            outs = run(kern, *xs)
            for j, ((_, nlf, ref, _), x) in enumerate(zip(ACTS, xs)):
                want = ref(x.astype(np.float64))
                name = nlf.__name__
                c.check("nl.%s" % name, outs[4 * j], want, ACT_RTOL, ACT_ATOL)
                c.check("activation(%s)" % name, outs[4 * j + 1], want, ACT_RTOL, ACT_ATOL)
                c.check("nl.%s dtype=bf16" % name, outs[4 * j + 2], to_bf16(want), 2 ** -7,
                        ACT_ATOL)
                c.check("nl.%s mask" % name, outs[4 * j + 3][:, :k], want[:, :k], ACT_RTOL,
                        ACT_ATOL)
        run_case("act_functions", body)

    def test_act_scale_bias_dtype(self):
        def body(c):
            p, f = c.shape(free=(2, 32))
            k = int(c.rng.integers(1, f))
            x = c.floats((p, f), -1, 1)
            bias, scale = c.floats((p, 1), -1, 1), c.floats((p, 1), -2, 2)
            s = float(F32(c.rng.uniform(-2, 2)))

            def kern(tx, tb, ts):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                z = nisa.activation(np.exp, tx[i_p, i_f], mask=(i_f < k))
                return [nisa.activation(np.exp, tx, bias=tb, scale=s),
                        nisa.activation(np.exp, tx, bias=tb, scale=ts),
                        nisa.activation(np.tanh, tx, scale=s, dtype=nl.bfloat16),
                        nl.exp(tx, dtype=nl.bfloat16), z,
                        nl.exp(tx[i_p, i_f], mask=(i_f < k))]
            outs = run(kern, x, bias, scale)
            x64 = x.astype(np.float64)
            c.check("exp(x*s+bias)", outs[0], np.exp(x64 * s + bias), ACT_RTOL, ACT_ATOL)
            c.check("exp(x*scale_col+bias)", outs[1], np.exp(x64 * scale + bias), ACT_RTOL,
                    ACT_ATOL)
            # bf16 outputs: the fp32 result rounded to bf16; the approximation may move it by
            # one bf16 step at a rounding boundary.
            c.check("tanh dtype=bf16", outs[2], to_bf16(np.tanh(x64 * s)), 2 ** -7, ACT_ATOL)
            c.check("nl.exp dtype=bf16", outs[3], to_bf16(np.exp(x64)), 2 ** -7, ACT_ATOL)
            c.check("activation mask", outs[4][:, :k], np.exp(x64)[:, :k], ACT_RTOL, ACT_ATOL)
            # nl.exp with a mask into a fresh tile: only the masked part is defined.
            c.check("nl.exp mask", outs[5][:, :k], np.exp(x64)[:, :k], ACT_RTOL, ACT_ATOL)
        run_case("act_scale_bias_dtype", body)

    def test_act_reduce(self):
        """reduce_res = sum over the free axis of the activation's output (reduce_op add);
        reduce_cmd reset_reduce starts from 0, reduce keeps adding to the registers."""
        def body(c):
            p, f = c.shape(free=(2, 32))
            k = int(c.rng.integers(1, f))
            x, y = c.floats((p, f), -1, 1), c.floats((p, f), -1, 1)
            bias = c.floats((p, 1), -1, 1)

            def kern(tx, ty, tb):
                r1 = nl.ndarray((p, 1), dtype=nl.float32)
                r2 = nl.ndarray((p, 1), dtype=nl.float32)
                r3 = nl.ndarray((p, 1), dtype=nl.float32)
                o1 = nisa.activation(np.exp, tx, reduce_op=np.add, reduce_res=r1,
                                     reduce_cmd=nisa.reduce_cmd.reset_reduce)
                o2 = nisa.activation(np.exp, ty, reduce_op=np.add, reduce_res=r2,
                                     reduce_cmd=nisa.reduce_cmd.reduce)
                o3 = nisa.activation_reduce(op=np.square, data=tx, reduce_op=np.add,
                                            reduce_res=r3, bias=tb, scale=2.0,
                                            dtype=nl.bfloat16)
                i_p, i_f = nl.mgrid[0:p, 0:f]
                r4 = nl.ndarray((p, 1), dtype=nl.float32)
                nisa.activation_reduce(np.exp, tx[i_p, i_f], reduce_op=np.add, reduce_res=r4,
                                       mask=(i_f < k))
                return [o1, o2, o3, r1, r2, r3, r4]
            outs = run(kern, x, y, bias)
            ex, ey = np.exp(x.astype(np.float64)), np.exp(y.astype(np.float64))
            sq = np.square(2.0 * x.astype(np.float64) + bias)
            c.check("activation out", outs[0], ex, ACT_RTOL, ACT_ATOL)
            c.check("activation out 2", outs[1], ey, ACT_RTOL, ACT_ATOL)
            c.check("activation_reduce out bf16", outs[2], to_bf16(sq), 2 ** -7, ACT_ATOL)
            # the order of the fp32 additions is not documented: a sum tolerance
            c.check("reset_reduce", outs[3], ex.sum(1, keepdims=True), 1e-5, 1e-5)
            c.check("reduce (continues)", outs[4], (ex.sum(1) + ey.sum(1))[:, None], 1e-5, 1e-5)
            c.check("activation_reduce res", outs[5], sq.sum(1, keepdims=True), 1e-5, 1e-5)
            c.check("activation_reduce mask res", outs[6], ex[:, :k].sum(1, keepdims=True),
                    1e-5, 1e-5)
        run_case("act_reduce", body)

    def test_act_refused(self):
        def body(c):
            a = c.floats(c.shape(free=(1, 8)))
            r = lambda t: nl.ndarray((t.shape[0], 1), dtype=nl.float32)  # noqa: E731
            call1 = lambda t: nisa.activation(np.exp, t, reduce_op=np.maximum, reduce_res=r(t))  # noqa
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call1(t)]}, "nisa.activation",
                      "reduce_op", call1)
            call2 = lambda t: nisa.activation_reduce(np.exp, t, reduce_op=np.maximum, reduce_res=r(t))  # noqa
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call2(t)]},
                      "nisa.activation_reduce", "reduce_op", call2)
        run_case("act_refused_reduce_op", body)


class Reductions(unittest.TestCase):
    def test_tensor_reduce(self):
        """op over the innermost free axes in fp32; negate multiplies by -1; keepdims keeps the
        reduced axes as size 1."""
        def body(c):
            p, f = c.shape(free=(1, 32))
            g = int(c.rng.integers(1, 5))
            x = c.ints((p, f), -8, 8).astype(F32)  # small integers: sums are exact in any order
            x3 = c.ints((p, g, f), -8, 8).astype(F32)
            b = c.ints((p, f), 0, 2**16)

            def kern(tx, tx3, tb):
                return [nisa.tensor_reduce(np.add, tx, axis=1),
                        nisa.tensor_reduce(op=np.maximum, data=tx, axis=[1], negate=True),
                        nisa.tensor_reduce(np.minimum, tx3, axis=(1, 2), keepdims=True),
                        nisa.tensor_reduce(np.add, tx3, axis=2, dtype=nl.bfloat16),
                        nisa.tensor_reduce(np.bitwise_or, tb, axis=1),
                        nl.sum(x=tx, axis=1, dtype=nl.bfloat16, keepdims=True),
                        nl.max(x=tx3, axis=2, keepdims=True, dtype=nl.bfloat16),
                        nl.min(x=tx, axis=1, dtype=nl.bfloat16, keepdims=True)]
            outs = run(kern, x, x3, b)
            c.check("sum", outs[0], x.sum(1, keepdims=True))
            c.check("-max", outs[1], -x.max(1, keepdims=True))
            c.check("min keepdims", outs[2], x3.min((1, 2), keepdims=True))
            c.check("sum axis 2 bf16", outs[3], to_bf16(x3.sum(2)))
            c.check("bitwise_or", outs[4], np.bitwise_or.reduce(b, axis=1, keepdims=True))
            c.check("nl.sum", outs[5], to_bf16(x.sum(1, keepdims=True)))
            c.check("nl.max keepdims", outs[6], to_bf16(x3.max(2, keepdims=True)))
            c.check("nl.min bf16", outs[7], to_bf16(x.min(1, keepdims=True)))
        run_case("tensor_reduce", body)

    def test_tensor_reduce_mask(self):
        def body(c):
            p, f = c.shape(free=(2, 32))
            k = int(c.rng.integers(1, f))
            x = c.ints((p, f), -8, 8).astype(F32)

            def kern(tx):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                return [nisa.tensor_reduce(np.add, tx[i_p, i_f], axis=1, mask=(i_f < k)),
                        nl.sum(tx[i_p, i_f], axis=1, mask=(i_f < k)),
                        nl.max(tx[i_p, i_f], axis=1, mask=(i_f < k)),
                        nl.min(tx[i_p, i_f], axis=1, mask=(i_f < k))]
            outs = run(kern, x)
            c.check("masked sum", outs[0], x[:, :k].sum(1, keepdims=True))
            c.check("nl.sum masked", outs[1], x[:, :k].sum(1, keepdims=True))
            c.check("nl.max masked", outs[2], x[:, :k].max(1, keepdims=True))
            c.check("nl.min masked", outs[3], x[:, :k].min(1, keepdims=True))
        run_case("tensor_reduce_mask", body)

    def test_tensor_scalar_reduce(self):
        """result = data op0 operand0; reduce_res = reduce_op over the free axes."""
        def body(c):
            p, f = c.shape(free=(2, 32))
            k = int(c.rng.integers(1, f))
            x = c.ints((p, f), -8, 8).astype(F32)
            col = c.ints((p, 1), -3, 3).astype(F32)

            def kern(tx, tc):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                r1 = nl.ndarray((p, 1), dtype=nl.float32)
                r2 = nl.ndarray((p, 1), dtype=nl.float32)
                r3 = nl.ndarray((p, 1), dtype=nl.float32)
                o1 = nisa.tensor_scalar_reduce(data=tx, op0=np.add, operand0=2.0,
                                               reduce_op=np.add, reduce_res=r1)
                o2 = nisa.tensor_scalar_reduce(data=tx, op0=np.multiply, operand0=tc,
                                               reduce_op=np.maximum, reduce_res=r2,
                                               dtype=nl.bfloat16, reverse0=False)
                z = nisa.tensor_scalar_reduce(
                    data=tx[i_p, i_f], op0=np.subtract, operand0=1.0, reduce_op=np.minimum,
                    reduce_res=r3, mask=(i_f < k))
                return [o1, r1, o2, r2, z, r3]
            outs = run(kern, x, col)
            c.check("data + 2", outs[0], x + 2)
            c.check("sum(data + 2)", outs[1], (x + 2).sum(1, keepdims=True))
            c.check("data * col (bf16)", outs[2], to_bf16(x * col))
            c.check("max(data * col)", outs[3], (x * col).max(1, keepdims=True))
            c.check("masked data - 1", outs[4][:, :k], (x - 1)[:, :k])
            c.check("masked min", outs[5], (x - 1)[:, :k].min(1, keepdims=True))
        run_case("tensor_scalar_reduce", body)

    def test_reduce_refused(self):
        def body(c):
            a = c.floats(c.shape(free=(2, 8)))
            call = lambda t: nisa.tensor_scalar_reduce(  # noqa: E731
                data=t, op0=np.add, operand0=1.0, reduce_op=np.add, reverse0=True,
                reduce_res=nl.ndarray((t.shape[0], 1), dtype=nl.float32))
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call(t)]},
                      "nisa.tensor_scalar_reduce", "reverse0", call)
            call2 = lambda t: nisa.tensor_reduce(np.bitwise_or, t, axis=1, negate=True)  # noqa
            c.refused(tiles_kernel, (a.astype(np.int32),), {"body": lambda t: [call2(t)]},
                      "nisa.tensor_reduce", "negate", call2)
        run_case("reduce_refused", body)


class LanguageArithmetic(unittest.TestCase):
    def test_nl_binary(self):
        """nl.<op>(x, y): elementwise with NumPy broadcasting, fp32 math, the promoted dtype."""
        ops = [(nl.add, np.add), (nl.subtract, np.subtract), (nl.multiply, np.multiply),
               (nl.divide, np.divide), (nl.maximum, np.maximum), (nl.minimum, np.minimum),
               (nl.greater, np.greater), (nl.greater_equal, np.greater_equal),
               (nl.less, np.less), (nl.less_equal, np.less_equal), (nl.equal, np.equal),
               (nl.not_equal, np.not_equal)]

        def body(c):
            p, f = c.shape(free=(2, 64))
            k = int(c.rng.integers(1, f))
            x = c.floats((p, f))
            y = with_ties(c, x)
            y[np.abs(y) < 0.25] = 0.5
            col = away_from_zero(c, (p, 1))

            def kern(tx, ty, tc):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                out = [nlop(x=tx, y=ty) for nlop, _ in ops]
                out += [nl.subtract(tx, tc), nl.divide(tc, tx), nl.subtract(2.0, tx)]
                out += [nlop(tx, ty, dtype=nl.bfloat16) for nlop, _ in ops]
                out += [nlop(tx[i_p, i_f], ty[i_p, i_f], mask=(i_f < k)) for nlop, _ in ops]
                return out
            outs = run(kern, x, y, col)
            n = len(ops)
            for j, (nlop, ref) in enumerate(ops):
                want = ref(x, y).astype(F32)
                c.check("nl.%s" % nlop.__name__, outs[j], want)
                c.check("nl.%s dtype=bf16" % nlop.__name__, outs[n + 3 + j], to_bf16(want))
                c.check("nl.%s mask" % nlop.__name__, outs[2 * n + 3 + j][:, :k],
                        want[:, :k])
            c.check("x - column", outs[n], x - col)
            c.check("column / x", outs[n + 1], col / x)
            c.check("2 - x", outs[n + 2], F32(2) - x)
        run_case("nl_binary", body)

    def test_nl_binary_int_mask(self):
        def body(c):
            p, f = c.shape(free=(2, 32))
            k = int(c.rng.integers(1, f))
            a, b = c.ints((p, f), 0, 2**16), c.ints((p, f), 0, 2**16)
            x, y = c.floats((p, f), 0.5, 2.0), c.floats((p, f), -2, 2)

            def kern(ta, tb, tx, ty):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                return [nl.bitwise_and(ta, tb), nl.bitwise_or(ta, tb), nl.bitwise_xor(ta, tb),
                        nl.power(tx, ty), nl.add(tx[i_p, i_f], ty[i_p, i_f], mask=(i_f < k)),
                        nl.negative(x=tx), nl.negative(tx, dtype=nl.bfloat16),
                        nl.negative(tx[i_p, i_f], mask=(i_f < k)),
                        nl.bitwise_and(ta, tb, dtype=nl.uint32),
                        nl.bitwise_or(ta, tb, dtype=nl.uint32),
                        nl.bitwise_xor(ta, tb, dtype=nl.uint32),
                        nl.bitwise_and(ta[i_p, i_f], tb[i_p, i_f], mask=(i_f < k)),
                        nl.bitwise_or(ta[i_p, i_f], tb[i_p, i_f], mask=(i_f < k)),
                        nl.bitwise_xor(ta[i_p, i_f], tb[i_p, i_f], mask=(i_f < k)),
                        nl.power(tx, ty, dtype=nl.bfloat16),
                        nl.power(tx[i_p, i_f], ty[i_p, i_f], mask=(i_f < k))]
            outs = run(kern, a, b, x, y)
            c.check("bitwise_and", outs[0], a & b)
            c.check("bitwise_or", outs[1], a | b)
            c.check("bitwise_xor", outs[2], a ^ b)
            # power: fp32 math; the pages give no accuracy for pow, one ulp is allowed
            pw = np.power(x.astype(np.float64), y)
            c.check("power", outs[3], pw, 2e-7, 0)
            c.check("add mask", outs[4][:, :k], (x + y)[:, :k])
            for j, ref in enumerate((a & b, a | b, a ^ b)):
                c.check("bitwise %d dtype=uint32" % j, outs[8 + j], ref.astype(np.uint32))
                c.check("bitwise %d mask" % j, outs[11 + j][:, :k], ref[:, :k])
            c.check("power bf16", outs[14], to_bf16(pw), 2 ** -8, 0)
            c.check("power mask", outs[15][:, :k], pw[:, :k], 2e-7, 0)
            c.check("negative", outs[5], -x)
            c.check("negative bf16", outs[6], to_bf16(-x))
            c.check("negative mask", outs[7][:, :k], -x[:, :k])
        run_case("nl_binary_int_mask", body)

    def test_nl_promotion(self):
        """NKI Type Promotion: (bf16, fp32) -> fp32; (fp16, bf16) -> fp32 (a new widened type);
        a float scalar is weakly typed as fp32: (fp16, 1.2) -> fp32."""
        def body(c):
            shape = c.shape()
            x, y = c.floats(shape), c.floats(shape)

            def kern(tx, ty):
                xb = nl.copy(tx, dtype=nl.bfloat16)
                yh = nl.copy(ty, dtype=nl.float16)
                return [nl.add(xb, ty), nl.multiply(xb, yh)]
            outs = run(kern, x, y)
            xb, yh = to_bf16(x), cast(y, "float16")
            c.check("add(bf16, fp32) is fp32", outs[0], xb + y)
            c.check("multiply(bf16, fp16) is fp32", outs[1], xb * yh)
        run_case("nl_promotion", body)

    def test_nl_weak_scalar(self):
        """"Weakly typed scalars ... floating --> float32", so nl.add(fp16_tile, 1.2) is fp32
        (NKI Type Promotion, "Weakly Typed Scalar Type Inference"; ops._weak)."""
        def body(c):
            y = c.floats(c.shape())
            outs = run(lambda ty: [nl.add(nl.copy(ty, dtype=nl.float16), 1.2)], y)
            c.check("add(fp16, 1.2) is fp32", outs[0], cast(y, "float16") + F32(1.2))
        run_case("nl_weak_scalar", body)


if __name__ == "__main__":
    unittest.main()

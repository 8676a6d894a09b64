"""Differential cases, new dialect (`import nki`): the nki.language calls (NKI 0.3.0-0.6
"convenience" API: element-wise math, reductions, matmul, transposes, memory and creation
calls). References: the documented semantics of aws-neuron-sdk nki/api/nki/language/__init__.py
at 81ce03ae (NKI 0.6; the pages https://awsdocs-neuron.readthedocs-hosted.com/en/latest/nki/api/
nki.language.html), written in NumPy; arithmetic in fp32, results cast to the dtype. Written
against the documentation, not the implementation. Run by `python3 -m ncverify_nki.run` (ctest
label `frontend`)."""

import math
import unittest

import numpy as np

import nki
import nki.collectives as ncc
import nki.isa as nisa
import nki.language as nl
from coverage_table import UNSUPPORTED
from diffharness import run_case, to_bf16

F32 = np.float32
ACT_RTOL, ACT_ATOL = 1e-5, 1e-6  # ScalarE approximations (the pages give no figure)
_erf = np.vectorize(math.erf)


@nki.jit
def lang_kernel(*arrays, body):
    """nl.load of every array, `body` on the tiles, nl.store of each tile it returns."""
    outs = []
    for r in body(*[nl.load(a) for a in arrays]):
        o = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(o, r)
        outs.append(o)
    return tuple(outs)


@nki.jit
def hbm_kernel(*arrays, body):
    return tuple(body(*arrays))


def run(body, *arrays):
    return lang_kernel(*arrays, body=body)


UNARY = [
    (nl.exp, np.exp, (-4, 4), True), (nl.log, np.log, (0.1, 8), True),
    (nl.tanh, np.tanh, (-4, 4), True), (nl.sigmoid, lambda x: 1 / (1 + np.exp(-x)), (-6, 6), True),
    (nl.relu, lambda x: np.maximum(x, 0), (-4, 4), True),
    (nl.gelu, lambda x: 0.5 * x * (1 + _erf(x / np.sqrt(2))), (-4, 4), True),
    (nl.silu, lambda x: x / (1 + np.exp(-x)), (-6, 6), True),
    (nl.square, np.square, (-4, 4), True), (nl.sqrt, np.sqrt, (0.01, 8), True),
    (nl.rsqrt, lambda x: 1 / np.sqrt(x), (0.05, 8), True), (nl.sin, np.sin, (-3, 3), True),
    (nl.abs, np.abs, (-4, 4), False), (nl.negative, np.negative, (-4, 4), False),
    (nl.copy, lambda x: x, (-4, 4), False), (nl.reciprocal, lambda x: 1 / x, (0.5, 4), False),
]
BINARY = [(nl.add, np.add), (nl.subtract, np.subtract), (nl.multiply, np.multiply),
          (nl.maximum, np.maximum), (nl.minimum, np.minimum), (nl.equal, np.equal),
          (nl.not_equal, np.not_equal), (nl.greater, np.greater),
          (nl.greater_equal, np.greater_equal), (nl.less, np.less),
          (nl.less_equal, np.less_equal)]
INT_BINARY = [(nl.bitwise_and, np.bitwise_and), (nl.bitwise_or, np.bitwise_or),
              (nl.bitwise_xor, np.bitwise_xor), (nl.left_shift, np.left_shift),
              (nl.right_shift, np.right_shift)]


class Math(unittest.TestCase):
    def test_unary(self):
        """f(x) in fp32 (ScalarE functions within ACT_RTOL; abs, negative, copy and
        reciprocal exact); dtype= rounds the result."""
        def body(c):
            shape = c.shape(free=(1, 32))
            xs = [c.floats(shape, lo, hi) for _, _, (lo, hi), _ in UNARY]

            def kern(*ts):
                out = []
                for (f, _, _, _), t in zip(UNARY, ts):
                    out += [f(x=t), f(t, dtype=nl.bfloat16)]
                return out
            outs = run(kern, *xs)
            for j, ((f, ref, _, approx), x) in enumerate(zip(UNARY, xs)):
                want = ref(x.astype(np.float64))
                tol = (ACT_RTOL, ACT_ATOL) if approx else (0, 0)
                c.check("nl.%s" % f.__name__, outs[2 * j], want if approx else want.astype(F32),
                        *tol)
                c.check("nl.%s bf16" % f.__name__, outs[2 * j + 1], to_bf16(want),
                        2 ** -7 if approx else 0, ACT_ATOL if approx else 0)
        run_case("nkl_unary", body)

    def test_binary(self):
        """x op y, element-wise in fp32 (comparisons 1.0/0.0); dtype= rounds."""
        def body(c):
            p, f = c.shape()
            x = c.floats((p, f))
            y = np.where(c.rng.random((p, f)) < 0.3, x, c.floats((p, f))).astype(F32)
            px, py = c.floats((p, f), 0.5, 2), c.floats((p, f), -2, 2)

            def kern(tx, ty, tpx, tpy):
                out = [op(x=tx, y=ty) for op, _ in BINARY]
                out += [op(tx, ty, dtype=nl.bfloat16) for op, _ in BINARY]
                out += [nl.power(x=tpx, y=tpy), nl.power(tpx, tpy, dtype=nl.bfloat16),
                        nl.add(tx, 1.5), nl.subtract(2.0, tx)]
                return out
            outs = run(kern, x, y, px, py)
            n = len(BINARY)
            for j, (op, ref) in enumerate(BINARY):
                want = ref(x, y).astype(F32)
                c.check("nl.%s" % op.__name__, outs[j], want)
                c.check("nl.%s bf16" % op.__name__, outs[n + j], to_bf16(want))
            pw = np.power(px.astype(np.float64), py)
            c.check("nl.power", outs[2 * n], pw, 2e-7, 0)
            c.check("nl.power bf16", outs[2 * n + 1], to_bf16(pw), 2 ** -8, 0)
            c.check("x + 1.5", outs[2 * n + 2], x + F32(1.5))
            c.check("2 - x", outs[2 * n + 3], F32(2) - x)
        run_case("nkl_binary", body)

    def test_integer(self):
        """Bitwise operators and shifts on the integers' bits; invert is XOR with all-ones,
        logical_not XOR with 1 (the pages)."""
        def body(c):
            shape = c.shape()
            a, b = c.ints(shape, 0, 2**20), c.ints(shape, 0, 2**20)
            s = c.ints(shape, 0, 8)
            z = c.ints(shape, 0, 1)

            def kern(ta, tb, ts, tz):
                out = []
                for op, _ in INT_BINARY:
                    y = ts if op in (nl.left_shift, nl.right_shift) else tb
                    out += [op(x=ta, y=y), op(ta, y, dtype=nl.uint32)]
                out += [nl.invert(x=ta), nl.invert(ta, dtype=nl.int32), nl.logical_not(x=tz),
                        nl.logical_not(tz, dtype=nl.int32)]
                return out
            outs = run(kern, a, b, s, z)
            for j, (op, ref) in enumerate(INT_BINARY):
                y = s if op in (nl.left_shift, nl.right_shift) else b
                want = ref(a, y)
                c.check("nl.%s" % op.__name__, outs[2 * j], want)
                c.check("nl.%s uint32" % op.__name__, outs[2 * j + 1], want.astype(np.uint32))
            k = 2 * len(INT_BINARY)
            c.check("nl.invert", outs[k], ~a)
            c.check("nl.invert int32", outs[k + 1], ~a)
            c.check("nl.logical_not", outs[k + 2], z ^ 1)
            c.check("nl.logical_not int32", outs[k + 3], z ^ 1)
        run_case("nkl_integer", body)

    def test_reductions(self):
        """sum/max/min/prod over the last free axes; keepdims keeps them as size 1; dtype=
        rounds. Small integers: exact in any order."""
        def body(c):
            p, f = c.shape(free=(1, 16))
            g = int(c.rng.integers(1, 4))
            x = c.ints((p, g, f), -2, 2).astype(F32)

            def kern(tx):
                return [nl.sum(x=tx, axis=2), nl.max(x=tx, axis=(1, 2), keepdims=True),
                        nl.min(tx, axis=2, dtype=nl.bfloat16, keepdims=True),
                        nl.prod(x=tx, axis=2, dtype=nl.float32, keepdims=False),
                        nl.sum(tx, axis=[2], keepdims=True, dtype=nl.bfloat16),
                        nl.max(tx, 2, dtype=nl.bfloat16), nl.prod(tx, 2, keepdims=True)]
            outs = run(kern, x)
            c.check("nl.sum", outs[0], x.sum(2))
            c.check("nl.max (1, 2) keepdims", outs[1], x.max((1, 2), keepdims=True))
            c.check("nl.min bf16 keepdims", outs[2], to_bf16(x.min(2, keepdims=True)))
            c.check("nl.prod", outs[3], x.prod(2))
            c.check("nl.sum keepdims bf16", outs[4], to_bf16(x.sum(2, keepdims=True)))
            c.check("nl.max bf16", outs[5], to_bf16(x.max(2)))
            c.check("nl.prod keepdims", outs[6], x.prod(2, keepdims=True))
        run_case("nkl_reductions", body)


class MatmulTranspose(unittest.TestCase):
    def test_matmul_transpose_broadcast(self):
        """matmul: x @ y (transpose_x=True: x.T @ y), fp32 in PSUM, copied to SBUF by nl.copy;
        transpose: the 2-D transpose; broadcast_to: NumPy broadcasting (dtype= casts)."""
        def body(c):
            kk, m, n = int(c.rng.integers(1, 129)), int(c.rng.integers(1, 129)), \
                int(c.rng.integers(1, 513))
            s = c.ints((kk, m), -4, 4).astype(F32)
            mv = c.ints((kk, n), -4, 4).astype(F32)
            x = c.ints((m, kk), -4, 4).astype(F32)
            row = c.floats((1, 16))
            col = c.floats((kk, 1))

            def kern(ts, tm, tx, tr, tc):
                return [nl.copy(nl.matmul(x=ts, y=tm, transpose_x=True)),
                        nl.copy(nl.transpose(x=ts)), nl.copy(nl.transpose(ts, dtype=nl.bfloat16)),
                        nl.broadcast_to(x=tr, shape=(kk, 16)),
                        nl.broadcast_to(tc, shape=(kk, 16), dtype=nl.bfloat16)]
            outs = run(kern, s, mv, x, row, col)
            c.check("nl.matmul transpose_x", outs[0], s.T @ mv)
            c.check("nl.transpose", outs[1], s.T)
            c.check("nl.transpose bf16", outs[2], to_bf16(s.T))
            c.check("nl.broadcast_to row", outs[3], np.broadcast_to(row, (kk, 16)))
            c.check("nl.broadcast_to column bf16", outs[4],
                    to_bf16(np.broadcast_to(col, (kk, 16))))
        run_case("nkl_matmul_transpose", body)


class Memory(unittest.TestCase):
    def test_load_store_gather(self):
        """load: SBUF tile of the HBM data (dtype= casts); store writes HBM; load_transpose2d:
        the 2-D transpose; gather_flattened: out[p, j] = data[p].flatten()[indices[p, j]]."""
        def body(c):
            p, f = c.shape(parts=(1, 128), free=(1, 64))
            a = c.floats((p, f))
            n = int(c.rng.integers(1, 32))
            idx = c.ints((p, n), 0, f - 1, np.uint32)

            def kern(ha, hi):
                o1 = nl.ndarray((p, f), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                o2 = nl.ndarray((f, p), dtype=nl.float32, buffer=nl.shared_hbm)
                o3 = nl.ndarray((p, n), dtype=nl.float32, buffer=nl.shared_hbm)
                o4 = nl.ndarray((p, n), dtype=nl.bfloat16, buffer=nl.shared_hbm)
                nl.store(dst=o1, value=nl.load(src=ha, dtype=nl.bfloat16))
                nl.store(o2, nl.load_transpose2d(src=ha, dtype=nl.float32))
                t, ti = nl.load(ha), nl.load(hi)
                nl.store(o3, nl.gather_flattened(data=t, indices=ti))
                nl.store(o4, nl.gather_flattened(t, ti, dtype=nl.bfloat16))
                nl.device_print(print_prefix="t", tensor=t)
                return [o1, o2, o3, o4]
            o1, o2, o3, o4 = hbm_kernel(a, idx, body=kern)
            want = np.take_along_axis(a, idx.astype(np.int64), 1)
            c.check("load bf16", o1, to_bf16(a))
            c.check("load_transpose2d", o2, a.T)
            c.check("gather_flattened", o3, want)
            c.check("gather_flattened bf16", o4, to_bf16(want))
        run_case("nkl_memory", body)

    def test_creation(self):
        """zeros/ones/full fill (here PSUM tiles); ndarray/empty_like allocate (written before read); zeros_like
        fills with 0; an explicit address= places the tile, the values are the same;
        shared_identity_matrix: the identity; shared_constant: the array in HBM."""
        def body(c):
            p, f = c.shape(free=(1, 32))
            v = float(F32(c.rng.uniform(-5, 5)))
            a = c.floats((p, f))
            n = int(c.rng.integers(1, 129))

            def kern(ta):
                z = nl.copy(nl.zeros(shape=(p, f), dtype=nl.float32, buffer=nl.psum, name="z"))
                o = nl.copy(nl.ones(shape=(p, f), dtype=nl.float32, buffer=nl.psum, name="o"),
                            dtype=nl.bfloat16)
                fu = nl.copy(nl.full(shape=(p, f), fill_value=v, dtype=nl.float32,
                                     buffer=nl.psum, name="fu"))
                e = nl.ndarray(shape=(p, f), dtype=nl.float32, buffer=nl.sbuf, name="e")
                nisa.tensor_copy(e, ta)
                zl = nl.zeros_like(x=ta, dtype=nl.bfloat16, buffer=nl.sbuf, name="zl")
                el = nl.empty_like(x=ta, dtype=nl.float32, buffer=nl.sbuf, name="el")
                nisa.tensor_scalar(el, ta, nl.multiply, -1.0)
                ident = nl.shared_identity_matrix(n=n, dtype=nl.float32)
                ident2 = nl.ndarray((n, n), dtype=nl.bfloat16, buffer=nl.sbuf)
                nl.shared_identity_matrix(n, dtype=nl.bfloat16, dst=ident2)
                const = nl.load(nl.shared_constant(constant=np.full((p, f), v, F32)))
                # zeros accumulated into in place: the instruction reads the zeros first
                acc = nl.zeros(shape=(p, f), dtype=nl.float32, buffer=nl.psum)
                nisa.tensor_tensor(dst=acc, data1=acc, data2=ta, op=nl.add)
                return [z, o, fu, e, zl, el, ident, ident2, const, nl.copy(acc)]
            outs = run(kern, a)
            c.check("zeros", outs[0], np.zeros((p, f)))
            c.check("ones bf16", outs[1], np.ones((p, f)))
            c.check("full", outs[2], np.full((p, f), v, F32))
            c.check("ndarray written", outs[3], a)
            c.check("zeros_like", outs[4], np.zeros((p, f)))
            c.check("empty_like written", outs[5], -a)
            c.check("shared_identity_matrix", outs[6], np.identity(n))
            c.check("shared_identity_matrix(dst=)", outs[7], np.identity(n))
            c.check("shared_constant", outs[8], np.full((p, f), v, F32))
            c.check("zeros accumulated in place", outs[9], a)
        run_case("nkl_creation", body)

    def test_par_dim(self):
        """nl.par_dim(n) as a shape's first dim (NKI 0.2's marker, ucb-bar/autocomp's
        trn-tutorial-nki2 GEMM writes it): the tensor of shape (n, ...), values as NumPy's; at
        any other position it would make block dimensions (removed since NKI 0.2): refused at
        the line."""
        def body(c):
            p, f = c.shape(free=(1, 64))
            a = c.floats((p, f))

            def kern(ta):
                t = nl.ndarray((nl.par_dim(size=p), f), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_scalar(t, ta, nl.multiply, 2.0)
                z = nl.zeros((nl.par_dim(p), f), dtype=nl.float32, buffer=nl.sbuf)
                s = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf)
                nisa.tensor_tensor(dst=s, data1=z, data2=ta, op=nl.add)
                return [t, s]
            outs = run(kern, a)
            c.check("par_dim ndarray", outs[0], 2 * a)
            c.check("par_dim zeros", outs[1], a)
            call = lambda t: nl.ndarray((2, nl.par_dim(p), f), dtype=nl.float32)  # noqa: E731
            c.refused(lang_kernel, (a,), {"body": lambda t: [nl.copy(call(t)[0])]},
                      "nl.par_dim", "block dimensions", call)
        run_case("nkl_par_dim", body)

    def test_address(self):
        """nl.ndarray(address=(partition, byte)) places the tile; the values are the same."""
        def body(c):
            p, f = c.shape(free=(1, 64))
            a = c.floats((p, f))

            def kern(ha):
                o = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.shared_hbm)
                t = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf, address=(0, 4096))
                u = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.sbuf, address=(0, 8192))
                nisa.dma_copy(dst=t, src=ha)
                nisa.tensor_scalar(u, t, nl.add, 1.0)
                nisa.dma_copy(dst=o, src=u)
                return [o]
            o, = hbm_kernel(a, body=kern)
            c.check("through addressed tiles", o, a + F32(1))
        run_case("nkl_address", body)

    def test_random_and_launch(self):
        """dropout rate 0 keeps, 1 drops (no rescaling); rand in [0, 1); program_id /
        num_programs along axis 1 of a [1, 2] launch grid; no_reorder changes nothing."""
        def body(c):
            p, f = c.shape(parts=(2, 128), free=(1, 32))
            x = c.floats((p, f), 1, 2)

            def kern(hx):
                o = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.shared_hbm)
                o2 = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.shared_hbm)
                o3 = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.shared_hbm)
                o4 = nl.ndarray((2, f), dtype=nl.float32, buffer=nl.shared_hbm)
                o5 = nl.ndarray((1, nl.num_programs(axes=(0,))), dtype=nl.float32,
                                buffer=nl.shared_hbm)
                t = nl.load(hx)
                with nl.no_reorder():
                    nl.store(o, nl.dropout(x=t, rate=0.0, dtype=nl.float32))
                    nl.store(o2, nl.dropout(t, 1.0))
                nl.store(o3, nl.rand(shape=(p, f), dtype=nl.float32, name="r"))
                pid = nl.program_id(axis=0)
                nl.store(o4[nl.ds(pid, 1), :], nl.load(hx[nl.ds(pid, 1), :]))
                nl.store(o5, nl.full((1, 2), 1.0, nl.float32))
                return [o, o2, o3, o4, o5]
            o, o2, o3, o4, o5 = hbm_kernel[2](x, body=kern)
            c.check("dropout rate 0", o, x)
            c.check("dropout rate 1", o2, np.zeros((p, f)))
            c.check("rand in [0, 1)", ((o3 >= 0) & (o3 < 1)).astype(F32), np.ones((p, f)))
            c.check("program_id", o4, x[:2])
            c.check("num_programs", o5.shape, (1, 2))
            # an LNC launch has one axis: another axis is refused at the call
            pid_axis_1 = lambda hx: [nl.program_id(axis=1)]  # noqa: E731
            c.refused(hbm_kernel[2], (x,), {"body": pid_axis_1}, "nl.program_id", "axis=1",
                      pid_axis_1)
        run_case("nkl_random_launch", body)

    def test_comparison_counted_as_int(self):
        """A comparison of a loop variable used as a number is Python's bool, 0 or 1 (nki-library
        attention_tkg.py counts with one): over a loop too long to unroll, tile i keeps its
        first `1 + (i == 0) + (i >= n - 2)` columns and zeroes the rest."""
        def body(c):
            n = int(c.rng.integers(70, 90))  # tiles (more than the unrolled small loops)
            f = 4
            x = c.floats((n * 8, f))

            def kern(hx):
                o = nl.ndarray((n * 8, f), dtype=nl.float32, buffer=nl.shared_hbm)
                for i in nl.affine_range(n):
                    w = 1 + (i == 0) + (i >= n - 2)
                    t = nl.ndarray((8, f), dtype=nl.float32, buffer=nl.sbuf)
                    nisa.dma_copy(dst=t, src=hx[nl.ds(i * 8, 8), :])
                    nisa.memset(t[:, w:f], value=0.0)
                    nisa.dma_copy(dst=o[nl.ds(i * 8, 8), :], src=t)
                return [o]
            o, = hbm_kernel(x, body=kern)
            want = x.copy().reshape(n, 8, f)
            for i in range(n):
                want[i, :, 1 + int(i == 0) + int(i >= n - 2):] = 0
            c.check("columns kept per tile", o, want.reshape(n * 8, f))
        run_case("nkl_bool_as_int", body)

    def test_refused(self):
        def body(c):
            a = c.floats((8, 8))
            call = lambda t: nl.random_seed(seed=3) or t  # noqa: E731
            c.refused(lang_kernel, (a,), {"body": lambda t: [call(t)]}, "nl.random_seed",
                      "seed", call)
            idx = c.ints((8, 2), 0, 7, np.uint32)
            call2 = lambda t, ti: nl.gather_flattened(t, ti, axis=1)  # noqa: E731
            c.refused(lang_kernel, (a, idx), {"body": lambda t, ti: [call2(t, ti)]},
                      "nl.gather_flattened", "axis", call2)
            call4 = lambda t: nl.rand((8, 8), nl.float32, buffer=nl.psum)  # noqa: E731
            c.refused(lang_kernel, (a,), {"body": lambda t: [nl.copy(call4(t))]}, "nl.rand",
                      "buffer", call4)
            call3 = lambda t: nl.matmul(x=t, y=t, transpose_x=False)  # noqa: E731
            c.refused(lang_kernel, (a,), {"body": lambda t: [nl.copy(call3(t))]}, "nl.matmul",
                      "transpose_x", call3)
        run_case("nkl_refused", body)


class Unsupported(unittest.TestCase):
    def test_unsupported_calls(self):
        """Each new-dialect call refused as a whole (coverage_table.UNSUPPORTED) is refused at
        the kernel's line, naming it."""
        def body(c):
            a = c.floats((8, 8))
            for module, names in UNSUPPORTED["nki"].items():
                m = {"nki.language": nl, "nki.isa": nisa, "nki.collectives": ncc}[module]
                for n in names:
                    fn = getattr(m, n)
                    call = lambda t: fn(t)  # noqa: E731
                    c.refused(lang_kernel, (a,), {"body": lambda t: [call(t)]},
                              "%s.%s" % (module, n), n, call)
        run_case("nki_unsupported_calls", body)


if __name__ == "__main__":
    unittest.main()

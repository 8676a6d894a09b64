"""Differential cases, new dialect: the nki.isa compute calls of NKI 0.6 added in issue 45
(scalar_tensor_tensor, tensor_scalar_reduce, tensor_copy_predicated, the scans, bn_stats/bn_aggr,
tensor_partition_reduce, the top-8 calls, the selects, the gathers, dropout, the NeuronCore-v4
calls) against NumPy implementations of their documented semantics (aws-neuron-sdk
nki/api/nki/isa/__init__.py, NKI 0.6), and the calls and arguments the front end refuses, each
refused at the kernel's line naming it. Written against the documentation, not the
implementation. Run by `python3 -m ncverify_nki.run` (ctest label `frontend`)."""

import unittest

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
from diffharness import run_case, to_bf16
from targets import default, on

# Written for trn1 unless a kernel names its generation (targets.py).
default("trn1")

F32 = np.float32


def _sbuf_body(arrays, body):
    tiles = []
    for a in arrays:
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        tiles.append(t)
    outs = []
    for r in body(*tiles):
        o = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=o, src=r)
        outs.append(o)
    return tuple(outs)


@nki.jit
def sbuf_kernel(*arrays, body):
    """Copies every array into an SBUF tile, runs `body` on the tiles and copies each SBUF tile
    it returns to an HBM output."""
    return _sbuf_body(arrays, body)


@on("trn2")
def sbuf_kernel_trn2(*arrays, body):
    return _sbuf_body(arrays, body)


@on("trn3")
def sbuf_kernel_trn3(*arrays, body):
    return _sbuf_body(arrays, body)


def run(body, *arrays):
    return sbuf_kernel(*arrays, body=body)


def sb(shape, dtype=nl.float32):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)


class Arith(unittest.TestCase):
    def test_arith(self):
        """scalar_tensor_tensor: dst = (data op0 operand0) op1 operand1, reverse0/reverse1 swap
        each operator's inputs; tensor_scalar_reduce: dst = data op0 operand0, reduce_res =
        reduce_op over the free elements (reduce_res_negate: its negation); all in fp32, cast
        to dst.dtype. tensor_copy_predicated: dst = src where predicate (xor reverse_pred), else
        dst unchanged."""
        def body(c):
            p, f = c.shape(free=(1, 32))
            a, b = c.floats((p, f)), c.floats((p, f))
            col = c.floats((p, 1))
            s = float(F32(c.rng.uniform(-3, 3)))
            ai = c.ints((p, f), -8, 8).astype(F32)
            pred = c.ints((p, f), 0, 1, np.uint8)
            init = c.floats((p, f))

            def kern(ta, tb, tc, tai, tp, tinit):
                d1, d2, d3 = sb((p, f)), sb((p, f)), sb((p, f), nl.bfloat16)
                nisa.scalar_tensor_tensor(d1, ta, nl.subtract, s, nl.multiply, tb)
                nisa.scalar_tensor_tensor(dst=d2, data=ta, op0=nl.subtract, operand0=tc,
                                          op1=nl.subtract, operand1=tb, reverse0=True,
                                          reverse1=True, name="stt")
                nisa.scalar_tensor_tensor(d3, ta, nl.multiply, tc, nl.add, tb)
                r1, rr1, r2, rr2 = sb((p, f)), sb((p, 1)), sb((p, f)), sb((p, 1))
                nisa.tensor_scalar_reduce(r1, tai, nl.add, 1.0, nl.add, rr1)
                nisa.tensor_scalar_reduce(dst=r2, data=ta, op0=nl.multiply, operand0=tc,
                                          reduce_op=nl.maximum, reduce_res=rr2,
                                          reduce_res_negate=True, name="tsr")
                nisa.tensor_copy_predicated(tinit, ta, tp)
                d4 = sb((p, f))
                nisa.tensor_copy(d4, tb)
                nisa.tensor_copy_predicated(dst=d4, src=ta, predicate=tp, reverse_pred=True,
                                            name="tcp")
                d5 = sb((p, f))
                nisa.tensor_copy(d5, tb)
                nisa.tensor_copy_predicated(d5, s, tp)
                return [d1, d2, d3, r1, rr1, r2, rr2, tinit, d4, d5]
            o = run(kern, a, b, col, ai, pred, init)
            c.check("(data - s) * operand1", o[0], (a - F32(s)) * b)
            c.check("operand1 - (col - data)", o[1], b - (col - a))
            c.check("data * col + operand1 to bf16", o[2], to_bf16(a * col + b))
            c.check("tensor_scalar_reduce data + 1", o[3], ai + 1)
            c.check("tensor_scalar_reduce sum (small integers)", o[4],
                    (ai + 1).sum(1, keepdims=True))
            c.check("tensor_scalar_reduce data * col", o[5], a * col)
            c.check("tensor_scalar_reduce -max", o[6], -(a * col).max(1, keepdims=True))
            c.check("tensor_copy_predicated", o[7], np.where(pred != 0, a, init))
            c.check("tensor_copy_predicated reverse_pred", o[8], np.where(pred == 0, a, b))
            c.check("tensor_copy_predicated of a scalar", o[9], np.where(pred != 0, F32(s), b))
        run_case("nkc_arith", body)


class UnaryAlu(unittest.TestCase):
    def test_unary_operators_as_op0(self):
        """The shared page's unary ALU operators (abs, square, relu, rsqrt, reciprocal) as
        tensor_scalar / tensor_scalar_reduce op0 with operand0 None or 0: dst = op0(data) (then
        op1 operand1), computed in fp32 and cast to dst.dtype (the tensor_scalar page). abs,
        reciprocal, square, relu and max reductions are exact in fp32 (one IEEE rounding);
        rsqrt's precision is not documented, so it is compared with the real 1/sqrt(x) within
        one fp32 ulp (2^-23 relative). square and relu are op0 on trn3 only (NKI 0.4.0)."""
        def body(c):
            p, f = c.shape(free=(1, 48))
            a = c.floats((p, f))
            pos = c.floats((p, f), 0.01, 100.0)
            col = c.floats((p, 1))
            eng = nisa.engine

            def kern(ta, tpos, tc):
                d1, d2, d3, d4 = sb((p, f)), sb((p, f)), sb((p, f)), sb((p, f), nl.bfloat16)
                d5, r5, rr5 = sb((p, f)), sb((p, f)), sb((p, 1))
                nisa.tensor_scalar(d1, tpos, nl.rsqrt, 0.0, engine=eng.gpsimd)
                nisa.tensor_scalar(dst=d2, data=tpos, op0=nl.rsqrt, operand0=None,
                                   op1=nl.multiply, operand1=tc)
                nisa.tensor_scalar(d3, ta, nl.reciprocal, None, engine=eng.vector)
                nisa.tensor_scalar(d4, ta, nl.abs, 0, op1=nl.subtract, operand1=1.5,
                                   reverse1=True)
                nisa.tensor_scalar(d5, tpos, nl.rsqrt, 0.0, engine=eng.vector)
                nisa.tensor_scalar_reduce(r5, ta, nl.reciprocal, None, nl.maximum, rr5)
                return [d1, d2, d3, d4, d5, r5, rr5]
            o = run(kern, a, pos, col)
            rs = 1.0 / np.sqrt(pos.astype(np.float64))
            ulp = 2.0 ** -23
            c.check("rsqrt(data) on gpsimd", o[0], rs, ulp)
            c.check("rsqrt(data) * col", o[1], rs * col, 2 * ulp)
            c.check("reciprocal(data)", o[2], F32(1) / a)
            c.check("1.5 - abs(data) to bf16", o[3], to_bf16(F32(1.5) - np.abs(a)))
            c.check("rsqrt(data) on vector", o[4], rs, ulp)
            c.check("tensor_scalar_reduce reciprocal(data)", o[5], F32(1) / a)
            c.check("tensor_scalar_reduce max of reciprocals", o[6],
                    (F32(1) / a).max(1, keepdims=True))

            def kern3(ta, tc):
                d1, d2, r3, rr3 = sb((p, f)), sb((p, f)), sb((p, f)), sb((p, 1))
                nisa.tensor_scalar(d1, ta, nl.square, 0.0, op1=nl.add, operand1=tc)
                nisa.tensor_scalar(d2, ta, nl.relu, None)
                nisa.tensor_scalar_reduce(r3, ta, nl.square, 0.0, nl.maximum, rr3)
                return [d1, d2, r3, rr3]
            o = sbuf_kernel_trn3(a, col, body=kern3)
            c.check("square(data) + col", o[0], a * a + col)
            c.check("relu(data)", o[1], np.maximum(a, F32(0)))
            c.check("tensor_scalar_reduce square(data)", o[2], a * a)
            c.check("tensor_scalar_reduce max of squares", o[3], (a * a).max(1, keepdims=True))
        run_case("nkc_unary_alu", body)

    def test_unary_operators_elsewhere_are_refused(self):
        """What the pages leave open is refused at the kernel's line naming the argument: a
        unary op1, tensor_tensor's or scalar_tensor_tensor's op, operand0 other than None or 0,
        reverse0, engine=gpsimd for an operator other than rsqrt (the page), engine=scalar,
        square/relu before trn3."""
        def body(c):
            a = c.floats((8, 8))
            eng = nisa.engine
            cases = [
                (sbuf_kernel, "nisa.tensor_scalar", "op1",
                 lambda t: nisa.tensor_scalar(sb((8, 8)), t, nl.add, 1.0, op1=nl.rsqrt,
                                              operand1=0.0)),
                (sbuf_kernel, "nisa.tensor_scalar", "operand0",
                 lambda t: nisa.tensor_scalar(sb((8, 8)), t, nl.rsqrt, 1.0)),
                (sbuf_kernel, "nisa.tensor_scalar", "reverse0",
                 lambda t: nisa.tensor_scalar(sb((8, 8)), t, nl.abs, 0.0, reverse0=True)),
                (sbuf_kernel, "nisa.tensor_scalar", "engine",
                 lambda t: nisa.tensor_scalar(sb((8, 8)), t, nl.abs, 0.0, engine=eng.gpsimd)),
                (sbuf_kernel, "nisa.tensor_scalar", "engine",
                 lambda t: nisa.tensor_scalar(sb((8, 8)), t, nl.rsqrt, 0.0, engine=eng.scalar)),
                (sbuf_kernel_trn2, "nisa.tensor_scalar", "op0",
                 lambda t: nisa.tensor_scalar(sb((8, 8)), t, nl.square, 0.0)),
                (sbuf_kernel_trn2, "nisa.tensor_scalar_reduce", "op0",
                 lambda t: nisa.tensor_scalar_reduce(sb((8, 8)), t, nl.relu, 0.0, nl.add,
                                                     sb((8, 1)))),
                (sbuf_kernel, "nisa.tensor_scalar_reduce", "operand0",
                 lambda t: nisa.tensor_scalar_reduce(sb((8, 8)), t, nl.abs, t[:, 0:1], nl.add,
                                                     sb((8, 1)))),
                (sbuf_kernel, "nisa.tensor_tensor", "op",
                 lambda t: nisa.tensor_tensor(sb((8, 8)), t, t, nl.rsqrt)),
                (sbuf_kernel, "nisa.scalar_tensor_tensor", "op0",
                 lambda t: nisa.scalar_tensor_tensor(sb((8, 8)), t, nl.abs, 0.0, nl.add, t)),
            ]
            for kernel, call, arg, fn in cases:
                c.refused(kernel, (a,), {"body": lambda t, fn=fn: [(fn(t), t)[1]]}, call, arg,
                          fn)
        run_case("nkc_unary_refused", body)


class Scans(unittest.TestCase):
    def test_scans(self):
        """tensor_tensor_scan: r[0] = op1(op0(data0[0], initial), data1[0]), r[i] =
        op1(op0(data0[i], r[i-1]), data1[i]) (reverse0/1 swap the operators' inputs);
        tensor_scalar_cumulative: reg = op1(op0(src[i], imm0), reg), dst[i] = reg, from the
        identity (reset_reduce) or imm1 (load_reduce). Values are small integers: every fp32
        step is exact."""
        def body(c):
            p, f = c.shape(free=(1, 16))
            d0, d1 = c.ints((p, f), -3, 3).astype(F32), c.ints((p, f), -3, 3).astype(F32)
            ini = c.ints((p, 1), -3, 3).astype(F32)
            k = float(c.rng.integers(-2, 3))

            def kern(t0, t1, ti):
                s1, s2, s3, s4 = sb((p, f)), sb((p, f)), sb((p, f)), sb((p, f))
                nisa.tensor_tensor_scan(s1, t0, t1, 1.0, nl.multiply, nl.add)
                nisa.tensor_tensor_scan(dst=s2, data0=t0, data1=t1, initial=ti,
                                        op0=nl.subtract, op1=nl.subtract, reverse0=True,
                                        reverse1=True, name="scan")
                nisa.tensor_scalar_cumulative(s3, t0, nl.add, nl.add, k)
                nisa.tensor_scalar_cumulative(dst=s4, src=t0, op0=nl.multiply, op1=nl.maximum,
                                              imm0=2.0, imm1=k,
                                              reduce_cmd=nisa.reduce_cmd.load_reduce,
                                              name="cum")
                s5, s6 = sb((p, f)), sb((p, f))
                nisa.tensor_scalar_cumulative(s5, t0, nl.subtract, nl.subtract, k)
                nisa.tensor_scalar_cumulative(s6, t0, nl.maximum, nl.minimum, 0.0)
                return [s1, s2, s3, s4, s5, s6]
            o = run(kern, d0, d1, ini)
            w1, w2 = np.zeros((p, f), F32), np.zeros((p, f), F32)
            prev1, prev2 = np.full((p,), 1.0, F32), ini[:, 0]
            w3, w4 = np.zeros((p, f), F32), np.zeros((p, f), F32)
            reg3, reg4 = np.zeros((p,), F32), np.full((p,), k, F32)
            w5, w6 = np.zeros((p, f), F32), np.zeros((p, f), F32)
            reg5, reg6 = np.zeros((p,), F32), np.full((p,), np.inf, F32)
            for i in range(f):
                prev1 = d0[:, i] * prev1 + d1[:, i]
                prev2 = d1[:, i] - (prev2 - d0[:, i])
                reg3 = (d0[:, i] + F32(k)) + reg3
                reg4 = np.maximum(d0[:, i] * 2, reg4)
                reg5 = (d0[:, i] - F32(k)) - reg5
                reg6 = np.minimum(np.maximum(d0[:, i], 0), reg6)
                w1[:, i], w2[:, i], w3[:, i], w4[:, i] = prev1, prev2, reg3, reg4
                w5[:, i], w6[:, i] = reg5, reg6
            c.check("scan multiply/add from 1.0", o[0], w1)
            c.check("scan reversed subtracts from a column", o[1], w2)
            c.check("cumulative add from 0 (reset_reduce)", o[2], w3)
            c.check("cumulative max from imm1 (load_reduce)", o[3], w4)
            c.check("cumulative subtract: reg = (src - imm0) - reg, from 0", o[4], w5)
            c.check("cumulative min from +inf", o[5], w6)
        run_case("nkc_scans", body)

    def test_stats_partition_reduce(self):
        """bn_stats: per partition (count, mean, variance * count) of the even-indexed then the
        odd-indexed elements; bn_aggr: the mean and variance of the whole row from those
        tuples (fp32; the order of the sums is not documented: rtol 1e-5).
        tensor_partition_reduce: op across the partitions (small integers: exact)."""
        def body(c):
            p, f = c.shape(parts=(2, 64), free=(2, 48))
            x = c.floats((p, f), -2, 2)
            xi = c.ints((p, f), -8, 8).astype(F32)
            bits = c.ints((p, f), 0, 255)

            def kern(tx, ti, tb):
                st, mv = sb((p, 6)), sb((p, 2))
                nisa.bn_stats(st, tx)
                nisa.bn_aggr(dst=mv, data=st, name="aggr")
                st2 = sb((p, 6))
                nisa.bn_stats(dst=st2, data=tx, name="stats")
                r1, r2 = sb((1, f)), sb((1, f))
                nisa.tensor_partition_reduce(r1, nl.add, ti)
                nisa.tensor_partition_reduce(dst=r2, op=nl.maximum, data=ti, name="pr")
                r3, r4 = sb((1, f), nl.int32), sb((1, f), nl.int32)
                nisa.tensor_partition_reduce(r3, nl.bitwise_or, tb)
                nisa.tensor_partition_reduce(r4, nl.bitwise_and, tb)
                return [st, mv, st2, r1, r2, r3, r4]
            o = run(kern, x, xi, bits)
            x64 = x.astype(np.float64)
            ev, od = x64[:, 0::2], x64[:, 1::2]
            want = np.stack([np.full(p, ev.shape[1]), ev.mean(1), ev.var(1) * ev.shape[1],
                             np.full(p, od.shape[1]), od.mean(1), od.var(1) * od.shape[1]], 1)
            c.check("bn_stats", o[0], want, 1e-5, 1e-5)
            c.check("bn_stats (keywords)", o[2], want, 1e-5, 1e-5)
            c.check("bn_aggr", o[1], np.stack([x64.mean(1), x64.var(1)], 1), 1e-5, 1e-5)
            c.check("partition sum", o[3], xi.sum(0, keepdims=True))
            c.check("partition max", o[4], xi.max(0, keepdims=True))
            c.check("partition bitwise_or", o[5], np.bitwise_or.reduce(bits, 0, keepdims=True))
            c.check("partition bitwise_and", o[6], np.bitwise_and.reduce(bits, 0, keepdims=True))
        run_case("nkc_stats", body)


class Top8Gathers(unittest.TestCase):
    def test_top8(self):
        """max8: the 8 largest values per partition, descending; nc_find_index8: the index of
        the first occurrence of each of the 8 vals (uint32); nc_match_replace8: data with the
        first occurrence of each val replaced by imm, dst_idx their indices."""
        def body(c):
            p, f = c.shape(free=(8, 40))
            # distinct values per partition: first occurrences are unambiguous
            x = np.stack([c.rng.permutation(f).astype(F32) - f / 2 for _ in range(p)])
            imm = float(F32(c.rng.uniform(-100, -50)))

            def kern(tx):
                m = sb((p, 8))
                nisa.max8(m, tx)
                m2 = sb((p, 8))
                nisa.max8(dst=m2, src=tx, name="m8")
                i1 = sb((p, 8), nl.uint32)
                nisa.nc_find_index8(dst=i1, data=tx, vals=m, name="fi")
                r, ri = sb((p, f)), sb((p, 8), nl.uint32)
                nisa.nc_match_replace8(dst=r, data=tx, vals=m, imm=imm, dst_idx=ri, name="mr")
                m3 = sb((p, 8), nl.bfloat16)
                nisa.max8(m3, tx)
                miss, i2 = sb((p, 8)), sb((p, 8), nl.uint32)
                nisa.memset(miss, 1000.5)
                nisa.nc_find_index8(i2, tx, miss)
                return [m, m2, i1, r, ri, m3, i2]
            o = run(kern, x)
            top = -np.sort(-x, 1)[:, :8]
            idx = np.argsort(-x, 1, kind="stable")[:, :8]
            rep = x.copy()
            np.put_along_axis(rep, idx, F32(imm), 1)
            c.check("max8", o[0], top)
            c.check("max8 (keywords)", o[1], top)
            c.check("nc_find_index8", o[2], idx.astype(np.uint32))
            c.check("nc_match_replace8", o[3], rep)
            c.check("nc_match_replace8 dst_idx", o[4], idx.astype(np.uint32))
            c.check("max8 to bf16", o[5], to_bf16(top))
            c.check("nc_find_index8 of absent values: 0xFFFFFFFF", o[6],
                    np.full((p, 8), 0xFFFFFFFF, np.uint32))
        run_case("nkc_top8", body)

    def test_gathers(self):
        """nc_n_gather: per partition, dst = flattened data[indices]; nc_stream_shuffle: in
        each 32-partition quadrant output partition i copies input partition mask[i] (255:
        unchanged)."""
        def body(c):
            p = 32 * int(c.rng.integers(1, 5))
            f = int(c.rng.integers(1, 16))
            g = int(c.rng.integers(1, 4))
            n = int(c.rng.integers(1, 24))
            x = c.floats((p, g, f))
            idx = c.ints((p, n), 0, g * f - 1, np.uint32)
            mask = [int(v) for v in c.rng.integers(0, 32, 32)]
            for i in c.rng.choice(32, 4, replace=False):
                mask[i] = 255
            y, before = c.floats((p, f)), c.floats((p, f))

            def kern(tx, ti, ty, tbefore):
                d1, d2 = sb((p, n)), sb((p, n))
                nisa.nc_n_gather(d1, tx, ti)
                nisa.nc_n_gather(dst=d2, data=tx, indices=ti, name="ng")
                nisa.nc_stream_shuffle(dst=tbefore, src=ty, shuffle_mask=mask, name="sh")
                return [d1, d2, tbefore]
            o = run(kern, x, idx, y, before)
            flat = x.reshape(p, g * f)
            want = np.take_along_axis(flat, idx.astype(np.int64), 1)
            c.check("nc_n_gather", o[0], want)
            c.check("nc_n_gather (keywords)", o[1], want)
            sh = before.copy()
            for q in range(p // 32):
                for i, m in enumerate(mask):
                    if m != 255:
                        sh[32 * q + i] = y[32 * q + m]
            c.check("nc_stream_shuffle", o[2], sh)
        run_case("nkc_gathers", body)


    def test_local_gather(self):
        """local_gather, the page's NumPy semantics (test_nki_isa_local_gather.py): each
        16-partition core flattens its slice of `index` partition-first (order 'F'), keeps the
        first num_valid_indices, and every partition of the slice takes num_elem_per_idx
        contiguous elements of its own row of src_buffer at each index (an element offset:
        the example passes index * num_elem_per_idx)."""
        def body(c):
            p = 16 * int(c.rng.integers(1, 5))
            k, g = int(c.rng.integers(1, 5)), int(c.rng.integers(2, 17))
            n = int(c.rng.choice([2, 4, 8]))
            nv = int(c.rng.integers(1, 16 * k))
            src1, src2 = c.floats((p, g)), c.floats((p, g, n))
            idx1 = np.tile(c.ints((16, k), 0, g - 1, np.uint16), (p // 16, 1))
            grp = np.tile(c.ints((16, k), 0, g - 1, np.uint16), (p // 16, 1))
            idx2 = (grp * n).astype(np.uint16)

            def kern(t1, t2, ti1, ti2):
                d1, d2 = sb((p, 16 * k)), sb((p, nv, n))
                nisa.local_gather(d1, t1, ti1)
                nisa.local_gather(dst=d2, src_buffer=t2, index=ti2, num_elem_per_idx=n,
                                  num_valid_indices=nv, name="lg")
                return [d1, d2]
            o = run(kern, src1, src2, idx1, idx2)
            w1, w2 = np.zeros((p, 16 * k), F32), np.zeros((p, nv, n), F32)
            for core in range(p // 16):
                sl = slice(16 * core, 16 * core + 16)
                w1[sl] = np.take(src1[sl], idx1[sl].flatten(order="F").astype(np.int64), 1)
                w2[sl] = np.take(src2[sl], grp[sl].flatten(order="F")[:nv].astype(np.int64), 1)
            c.check("local_gather", o[0], w1)
            c.check("local_gather num_elem_per_idx, num_valid_indices", o[1], w2)
        run_case("nkc_local_gather", body)


def _sequence_bounds(seq):
    """The page's NumPy equivalent (test_nki_isa_sequence_bounds.py): per element the start
    and the end (exclusive) of its segment; padding (id 0) gets n and -1."""
    n = len(seq)
    lo, hi = np.zeros(n, F32), np.zeros(n, F32)
    lo[0] = 0 if seq[0] != 0 else n
    for i in range(1, n):
        lo[i] = n if seq[i] == 0 else lo[i - 1] if seq[i] == seq[i - 1] else i
    hi[-1] = n if seq[-1] != 0 else -1
    for i in range(n - 2, -1, -1):
        hi[i] = -1 if seq[i] == 0 else hi[i + 1] if seq[i] == seq[i + 1] else i + 1
    return np.stack([lo, hi])[None]


class Selects(unittest.TestCase):
    def test_sequence_bounds(self):
        """sequence_bounds on one partition of runs of segment ids (0: padding)."""
        def body(c):
            ids = []
            while len(ids) < 2:
                for _ in range(int(c.rng.integers(1, 8))):
                    ids += [int(c.rng.integers(0, 6))] * int(c.rng.integers(1, 6))
            n = len(ids)
            seg = np.array([ids], F32)

            def kern(ts, tsi):
                d1, d2 = sb((1, 2, n)), sb((1, 2, n), nl.int32)
                nisa.sequence_bounds(d1, ts)
                nisa.sequence_bounds(dst=d2, segment_ids=tsi, name="sb")
                return [d1, d2]
            o = run(kern, seg, seg.astype(np.int32))
            want = _sequence_bounds(seg[0])
            c.check("sequence_bounds fp32", o[0], want)
            c.check("sequence_bounds int32", o[1], want.astype(np.int32))
        run_case("nkc_sequence_bounds", body)


    def test_select_reduce(self):
        """select_reduce: dst = where(predicate xor reverse_pred, on_true, on_false);
        reduce_res = the row max (reset_reduce). range_select (NeuronCore-v3+): dst =
        on_true_tile where comp_op0(range_start + i, bound0) and comp_op1(range_start + i,
        bound1), else FP32_MIN; the first call resets the Vector accumulator (reset_reduce,
        the default), the second continues it (reduce) and reads it out: the max of both."""
        def body(c):
            p, f = c.shape(free=(1, 40))
            t = c.floats((p, f))
            pred = c.ints((p, f), 0, 1, np.uint8)
            col = c.floats((p, 1))
            b0 = c.ints((p, 1), -2, f).astype(F32)
            b1 = c.ints((p, 1), 0, f + 4).astype(F32)
            start = int(c.rng.integers(1, 5))

            def kern(tt, tp, tc, tb0, tb1):
                d1, d2, rr = sb((p, f)), sb((p, f)), sb((p, 1))
                nisa.select_reduce(d1, tp, tt, -5.0)
                nisa.select_reduce(dst=d2, predicate=tp, on_true=tt, on_false=tc,
                                   reduce_res=rr, reduce_cmd=nisa.reduce_cmd.reset_reduce,
                                   reduce_op=nl.maximum, reverse_pred=True, name="sr")
                r1, r2, rr2 = sb((p, f)), sb((p, f)), sb((p, 1))
                nisa.range_select(r1, tt, nl.greater_equal, nl.less, tb0, tb1)
                nisa.range_select(dst=r2, on_true_tile=tt, comp_op0=nl.greater,
                                  comp_op1=nl.less_equal, bound0=tb0, bound1=tb1,
                                  reduce_cmd=nisa.reduce_cmd.reduce, reduce_res=rr2,
                                  reduce_op=nl.maximum, range_start=start, name="rs")
                return [d1, d2, rr, r1, r2, rr2]
            o = sbuf_kernel_trn2(t, pred, col, b0, b1, body=kern)
            c.check("select_reduce scalar on_false", o[0], np.where(pred != 0, t, F32(-5)))
            s2 = np.where(pred == 0, t, col)
            c.check("select_reduce reverse_pred", o[1], s2)
            c.check("select_reduce max", o[2], s2.max(1, keepdims=True))
            fmin = np.finfo(F32).min
            i0 = np.arange(f, dtype=F32)[None, :]
            c.check("range_select", o[3], np.where((i0 >= b0) & (i0 < b1), t, fmin))
            i1 = i0 + start
            r2 = np.where((i1 > b0) & (i1 <= b1), t, fmin)
            c.check("range_select range_start", o[4], r2)
            both = np.maximum(o[3].max(1, keepdims=True), r2.max(1, keepdims=True))
            c.check("range_select max continued (reduce) over both calls", o[5], both)
        run_case("nkc_selects", body)

    def test_dropout(self):
        """dropout: prob 1.0 drops every element, 0.0 keeps every one (the page's fixed points;
        no rescaling); prob a [P, 1] tile per partition."""
        def body(c):
            p, f = c.shape(free=(2, 32))
            x = c.floats((p, f), 1, 2)
            probs = np.where(c.rng.random((p, 1)) < 0.5, 0.0, 1.0).astype(F32)

            def kern(tx, tp):
                d1, d2, d3 = sb((p, f)), sb((p, f)), sb((p, f))
                nisa.dropout(d1, tx, 1.0)
                nisa.dropout(dst=d2, data=tx, prob=tp, name="drop")
                nisa.dropout(d3, tx, 0.5)
                return [d1, d2, d3]
            o = run(kern, x, probs)
            c.check("dropout prob 1", o[0], np.zeros((p, f)))
            c.check("dropout per-partition prob", o[1], np.where(probs == 1.0, 0, x))
            c.check("dropout 0.5: kept or 0", np.where(o[2] == 0, x, o[2]), x)
        run_case("nkc_dropout", body)


class Gen4(unittest.TestCase):
    def test_exponential_activate2(self):
        """NeuronCore-v4: exponential: dst = exp(src - max_value) (fp32; an activation
        function: rtol 1e-5); activate2: dst = op((data op0 imm0) op1 imm1), reverse0/reverse1
        swap the inputs, reduce_res = the row sums (reduce_op add, reset_reduce)."""
        def body(c):
            p, f = c.shape(free=(1, 32))
            x = c.floats((p, f), -1, 1)
            col, col2 = c.floats((p, 1), -1, 1), c.floats((p, 1), -1, 1)

            def kern(tx, tc, tc2):
                e1, e2 = sb((p, f)), sb((p, f))
                nisa.exponential(e1, tx)
                nisa.exponential(dst=e2, src=tx, max_value=tc, name="e")
                a1, a2, rr = sb((p, f)), sb((p, f)), sb((p, 1))
                nisa.activate2(a1, nl.exp, tx, tc, 0.5, nl.multiply, nl.add)
                nisa.activate2(dst=a2, op=nl.tanh, data=tx, imm0=tc, imm1=tc2,
                               op0=nl.multiply, op1=nl.subtract, reverse0=True, reverse1=True,
                               reduce_op=nl.add, reduce_res=rr,
                               reduce_cmd=nisa.reduce_cmd.reset_reduce, name="a2")
                e3, b1, b2, b3, b4 = sb((p, f)), sb((p, f)), sb((p, f)), sb((p, f)), \
                    sb((p, f))
                nisa.exponential(e3, tx, max_value=0.75)
                nisa.activate2(b1, nl.exp, tx, tc, 0.0, nl.add, nl.bypass)
                nisa.activate2(b2, nl.exp, tx, tc, 0.0, nl.subtract, nl.bypass, reverse0=True)
                nisa.activate2(b3, nl.tanh, tx, 0.0, 0.0, nl.bypass, nl.bypass)
                nisa.activate2(b4, nl.exp, tx, 3.0, tc2, nl.multiply, nl.subtract)
                return [e1, e2, a1, a2, rr, e3, b1, b2, b3, b4]
            o = sbuf_kernel_trn3(x, col, col2, body=kern)
            x64 = x.astype(np.float64)
            c.check("exp(src)", o[0], np.exp(x64), 1e-5, 1e-6)
            c.check("exp(src - max_value)", o[1], np.exp(x64 - col), 1e-5, 1e-6)
            c.check("exp(data * imm0 + 0.5)", o[2], np.exp(x64 * col + 0.5), 1e-5, 1e-6)
            t = np.tanh(col2 - col * x64)
            c.check("tanh(imm1 - imm0 * data)", o[3], t, 1e-5, 1e-6)
            c.check("activate2 row sums", o[4], t.sum(1, keepdims=True), 1e-5, 1e-5)
            c.check("exp(src - 0.75)", o[5], np.exp(x64 - 0.75), 1e-5, 1e-6)
            c.check("exp(data + imm0)", o[6], np.exp(x64 + col), 1e-5, 1e-6)
            c.check("exp(imm0 - data)", o[7], np.exp(col - x64), 1e-5, 1e-6)
            c.check("tanh(data) (bypass, bypass)", o[8], np.tanh(x64), 1e-5, 1e-6)
            c.check("exp(data * 3 - imm1)", o[9], np.exp(x64 * 3 - col2), 1e-5, 1e-6)
        run_case("nkc_gen4", body)


class Refused(unittest.TestCase):
    def test_refused_arguments(self):
        """Documented arguments the model does not run, refused at the kernel's line naming
        them."""
        def body(c):
            a = c.floats((8, 8))
            rc = nisa.reduce_cmd
            cases = [
                (sbuf_kernel, "nisa.tensor_scalar_reduce", "reverse0",
                 lambda t: nisa.tensor_scalar_reduce(sb((8, 8)), t, nl.subtract, 1.0, nl.add,
                                                     sb((8, 1)), reverse0=True)),
                (sbuf_kernel, "nisa.tensor_scalar_reduce", "reduce_cmd",
                 lambda t: nisa.tensor_scalar_reduce(sb((8, 8)), t, nl.add, 1.0, nl.add,
                                                     sb((8, 1)), reduce_cmd=rc.load_reduce,
                                                     reduce_init=2.0)),
                (sbuf_kernel, "nisa.tensor_partition_reduce", "op",
                 lambda t: nisa.tensor_partition_reduce(sb((1, 8)), "average", t)),
                (sbuf_kernel_trn2, "nisa.range_select", "on_false_value",
                 lambda t: nisa.range_select(sb((8, 8)), t, nl.greater_equal, nl.less,
                                             t[:, 0:1], t[:, 1:2], on_false_value=0.0)),
                (sbuf_kernel_trn3, "nisa.exponential", "reduce_cmd",
                 lambda t: nisa.exponential(sb((8, 8)), t, reduce_cmd=rc.load_reduce,
                                            reduce_init=1.0)),
                (sbuf_kernel_trn3, "nisa.exponential", "reduce_res",
                 lambda t: nisa.exponential(sb((8, 8)), t, reduce_res=sb((8, 1)))),
                (sbuf_kernel_trn3, "nisa.activate2", "relu_param",
                 lambda t: nisa.activate2(sb((8, 8)), nl.relu, t, 1.0, 0.0, nl.multiply,
                                          None, relu_param=0.1)),
                (sbuf_kernel_trn3, "nisa.activate2", "reduce_op",
                 lambda t: nisa.activate2(sb((8, 8)), nl.exp, t, 1.0, 0.0, nl.multiply, None,
                                          reduce_op=nl.maximum, reduce_res=sb((8, 1)),
                                          reduce_cmd=rc.reset_reduce)),
            ]
            # reduce_init is read by load_reduce only (the pages): its refusal names both
            cases += [(k, call, "reduce_init", fn) for k, call, arg, fn in cases
                      if arg == "reduce_cmd"]
            for kernel, call, arg, fn in cases:
                c.refused(kernel, (a,), {"body": lambda t, fn=fn: [(fn(t), t)[1]]}, call, arg,
                          fn)
        run_case("nkc_refused", body)

    def test_unmodelled_calls(self):
        """The calls refused as a whole (random state, data-dependent sizes, collectives),
        each called with all its arguments and refused at the kernel's line naming the
        call."""
        def body(c):
            a = c.floats((8, 8))
            cases = [
                ("nisa.rng", lambda t: nisa.rng(dst=t, engine=nisa.engine.gpsimd, name="r")),
                ("nisa.rand2", lambda t: nisa.rand2(dst=t, min=0.0, max=1.0, name="r")),
                ("nisa.rand_get_state",
                 lambda t: nisa.rand_get_state(dst=t, engine=nisa.engine.vector, name="r")),
                ("nisa.rand_set_state",
                 lambda t: nisa.rand_set_state(src_seeds=t, engine=nisa.engine.vector,
                                               name="r")),
                ("nisa.set_rng_seed", lambda t: nisa.set_rng_seed(src_seeds=t, name="r")),
                ("nisa.nonzero_with_count",
                 lambda t: nisa.nonzero_with_count(dst=t, src=t, index_offset=1,
                                                   padding_val=-2, name="n")),
                ("nisa.topk", lambda t: nisa.topk(val_dst=t, idx_dst=t, src=t, n=8, name="k")),
                ("nisa.core_barrier",
                 lambda t: nisa.core_barrier(data=t, cores=[0, 1], engine=nisa.engine.vector,
                                             name="b")),
            ]
            for call, fn in cases:
                c.refused(sbuf_kernel, (a,), {"body": lambda t, fn=fn: [(fn(t), t)[1]]}, call,
                          call.split(".")[1], fn)
        run_case("nkc_unmodelled", body)


if __name__ == "__main__":
    unittest.main()

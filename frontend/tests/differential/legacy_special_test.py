"""Differential cases, legacy dialect (neuronxcc.nki): selects, scans, statistics, top-8,
gathers, shuffles and random calls: nisa.tensor_copy_predicated, select_reduce, range_select,
sequence_bounds, tensor_partition_reduce, tensor_tensor_scan, tensor_scalar_cumulative,
bn_stats, bn_aggr, max8, nc_find_index8, nc_match_replace8, local_gather, nc_stream_shuffle,
dropout; nl.gather_flattened, rand, dropout, random_seed. References: the calls' documented
semantics (NKI API reference, neuronxcc.nki, SDK 2.26:
https://awsdocs-neuron.readthedocs-hosted.com/en/v2.26.1/nki/api/nki.isa.html, with the NumPy
equivalents the pages give) written here in NumPy. Run by `python3 -m ncverify_nki.run`
(ctest label `frontend`)."""

import unittest

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from diffharness import run_case, to_bf16

F32 = np.float32
FP32_MIN = float(np.finfo(np.float32).min)


@nki.jit
def tiles_kernel(*arrays, body):
    """Loads every array into SBUF, runs `body` on the tiles and stores each tile it returns."""
    outs = []
    for r in body(*[nl.load(a) for a in arrays]):
        o = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(o, r)
        outs.append(o)
    return tuple(outs)


@nki.jit(platform_target="trn2")
def tiles_kernel_trn2(*arrays, body):
    """tiles_kernel for a NeuronCore-v3 (trn2) target."""
    outs = []
    for r in body(*[nl.load(a) for a in arrays]):
        o = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(o, r)
        outs.append(o)
    return tuple(outs)


def run(body, *arrays):
    return tiles_kernel(*arrays, body=body)


class Selects(unittest.TestCase):
    def test_copy_predicated(self):
        """dst = src where predicate != 0 (reverse_pred: where it is 0), else dst unchanged; a
        number as src is copied where the predicate holds."""
        def body(c):
            p, f = c.shape(free=(1, 48))
            k = int(c.rng.integers(1, f + 1))
            src, dst = c.floats((p, f)), c.floats((p, f))
            pred = c.ints((p, f), 0, 1, np.uint8)

            def kern(ts, td, tp):
                d1, d2, d3 = nl.copy(td), nl.copy(td), nl.copy(td)
                nisa.tensor_copy_predicated(src=ts, dst=d1, predicate=tp)
                nisa.tensor_copy_predicated(src=2.5, dst=d2, predicate=tp, reverse_pred=True,
                                            dtype=nl.float32)
                i_p, i_f = nl.mgrid[0:p, 0:f]
                nisa.tensor_copy_predicated(src=ts[i_p, i_f], dst=d3[i_p, i_f],
                                            predicate=tp[i_p, i_f], mask=(i_f < k))
                return [d1, d2, d3]
            outs = run(kern, src, dst, pred)
            c.check("copy_predicated", outs[0], np.where(pred != 0, src, dst))
            c.check("copy_predicated reverse_pred, scalar", outs[1],
                    np.where(pred == 0, F32(2.5), dst))
            c.check("copy_predicated mask", outs[2],
                    np.where((pred != 0) & (np.arange(f)[None, :] < k), src, dst))
        run_case("copy_predicated", body)

    def test_select_reduce(self):
        """dst = where(pred, on_true, on_false) (reverse_pred inverts); reduce_res = max over
        the free axis (reset_reduce from -inf; reduce continues)."""
        def body(c):
            p, f = c.shape(free=(2, 48))
            k = int(c.rng.integers(1, f))
            t1, t2 = c.floats((p, f)), c.floats((p, f))
            pred = c.ints((p, f), 0, 1, np.uint8)
            col = c.floats((p, 1))
            v = float(F32(c.rng.uniform(-5, 5)))

            def kern(ta, tb, tp, tc):
                d1 = nl.ndarray((p, f), dtype=nl.float32)
                d2 = nl.ndarray((p, f), dtype=nl.float32)
                r = nl.ndarray((p, 1), dtype=nl.float32)
                nisa.select_reduce(dst=d1, predicate=tp, on_true=ta, on_false=v,
                                   reduce_cmd=nisa.reduce_cmd.reset_reduce,
                                   reduce_op=nl.max)
                nisa.select_reduce(dst=d2, predicate=tp, on_true=tb, on_false=tc,
                                   reduce_res=r, reduce_cmd=nisa.reduce_cmd.reduce,
                                   reverse_pred=True, dtype=nl.float32)
                d3 = nl.copy(ta)
                i_p, i_f = nl.mgrid[0:p, 0:f]
                nisa.select_reduce(dst=d3[i_p, i_f], predicate=tp[i_p, i_f],
                                   on_true=tb[i_p, i_f], on_false=v, mask=(i_f < k))
                return [d1, d2, r, d3]
            outs = run(kern, t1, t2, pred, col)
            s1 = np.where(pred != 0, t1, F32(v))
            s2 = np.where(pred == 0, t2, col)
            c.check("select_reduce", outs[0], s1)
            c.check("select_reduce reverse_pred column", outs[1], s2)
            c.check("select_reduce reduce continues", outs[2],
                    np.maximum(s1.max(1), s2.max(1))[:, None])
            before = np.arange(f)[None, :] < k
            c.check("select_reduce mask", outs[3],
                    np.where(before, np.where(pred != 0, t2, F32(v)), t1))
        run_case("select_reduce", body)

    def test_range_select(self):
        """(trn2) indices = range_start + arange(free); keep on_true where comp_op0(idx,
        bound0) & comp_op1(idx, bound1), else on_false_value; reduce_res = max."""
        cmps = [(np.greater_equal, np.greater_equal), (np.less, np.less),
                (np.greater, np.greater), (np.less_equal, np.less_equal), (np.equal, np.equal)]

        def body(c):
            p, f = c.shape(free=(2, 48))
            k = int(c.rng.integers(1, f))
            t = c.floats((p, f))
            start = int(c.rng.integers(1, 100))  # 0 is the default (the second call)
            b0 = c.ints((p, 1), start - 5, start + f).astype(F32)
            b1 = c.ints((p, 1), start, start + f + 5).astype(F32)
            k0 = int(c.rng.integers(0, len(cmps)))
            k1 = int(c.rng.integers(0, len(cmps)))
            op0, op1 = cmps[k0][0], cmps[k1][0]

            def kern(tt, tb0, tb1):
                r = nl.ndarray((p, 1), dtype=nl.float32)
                o1 = nisa.range_select(on_true_tile=tt, comp_op0=op0, comp_op1=op1,
                                       bound0=tb0, bound1=tb1, range_start=start,
                                       reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_res=r,
                                       reduce_op=nl.max, on_false_value=nl.fp32.min)
                o2 = nisa.range_select(on_true_tile=tt, comp_op0=np.greater_equal,
                                       comp_op1=np.less, bound0=tb0, bound1=tb1,
                                       dtype=nl.bfloat16)
                i_p, i_f = nl.mgrid[0:p, 0:f]
                o3 = nisa.range_select(on_true_tile=tt[i_p, i_f], comp_op0=np.greater_equal,
                                       comp_op1=np.less, bound0=tb0, bound1=tb1,
                                       mask=(i_f < k))
                return [o1, r, o2, o3]
            outs = tiles_kernel_trn2(t, b0, b1, body=kern)
            idx = (start + np.arange(f))[None, :].astype(F32)
            keep = op0(idx, b0) & op1(idx, b1)
            s = np.where(keep, t, F32(FP32_MIN))
            c.check("range_select", outs[0], s)
            c.check("range_select reduce_res", outs[1], s.max(1, keepdims=True))
            idx0 = np.arange(f)[None, :].astype(F32)  # range_start's default 0
            keep2 = (idx0 >= b0) & (idx0 < b1)
            c.check("range_select bf16", outs[2], to_bf16(np.where(keep2, t, F32(FP32_MIN))))
            c.check("range_select mask", outs[3][:, :k], np.where(keep2, t, F32(FP32_MIN))[:, :k])
            call = lambda tt, tb0, tb1: nisa.range_select(  # noqa: E731
                on_true_tile=tt, comp_op0=np.less, comp_op1=np.less, bound0=tb0, bound1=tb1,
                on_false_value=0.0)
            c.refused(tiles_kernel_trn2, (t, b0, b1), {"body": lambda *ts: [call(*ts)]},
                      "nisa.range_select", "on_false_value", call)
        run_case("range_select", body)

    def test_sequence_bounds(self):
        """The page's NumPy: per element the [start, end) of its segment; id 0 (padding) gives
        start n, end -1."""
        def body(c):
            n = int(c.rng.integers(1, 64))
            ids = np.sort(c.ints((1, n), 0, 5))
            ids = np.where(c.rng.random((1, n)) < 0.2, 0, ids).astype(np.int32)

            def ref(seq):
                lo, hi = np.zeros(n), np.zeros(n)
                lo[0] = 0 if seq[0] != 0 else n
                for i in range(1, n):
                    lo[i] = n if seq[i] == 0 else (lo[i - 1] if seq[i] == seq[i - 1] else i)
                hi[-1] = n if seq[-1] != 0 else -1
                for i in range(n - 2, -1, -1):
                    hi[i] = -1 if seq[i] == 0 else (hi[i + 1] if seq[i] == seq[i + 1] else i + 1)
                return np.vstack((lo, hi))[None]
            outs = run(lambda ti: [nisa.sequence_bounds(segment_ids=ti),
                                   nisa.sequence_bounds(segment_ids=ti, dtype=nl.float32)], ids)
            c.check("sequence_bounds int32", outs[0], ref(ids[0]).astype(np.int32))
            c.check("sequence_bounds fp32", outs[1], ref(ids[0]).astype(F32))
        run_case("sequence_bounds", body)

    def test_partition_reduce(self):
        """op across the partitions: a [1, F] result (the page gives no order: small
        integers keep sums exact in any order)."""
        def body(c):
            p, f = c.shape(free=(2, 32))
            k = int(c.rng.integers(1, f))
            x = c.ints((p, f), -8, 8).astype(F32)
            b = c.ints((p, f), 0, 2**16)
            grid = lambda: nl.mgrid[0:p, 0:f]  # noqa: E731
            outs = run(lambda tx, tb: [
                nisa.tensor_partition_reduce(np.add, tx),
                nisa.tensor_partition_reduce(op=np.maximum, data=tx, dtype=nl.bfloat16),
                nisa.tensor_partition_reduce(np.add, tx[grid()], mask=(grid()[1] < k)),
                nisa.tensor_partition_reduce(np.bitwise_or, tb),
                nisa.tensor_partition_reduce(np.bitwise_and, tb)], x, b)
            c.check("partition add", outs[0], x.sum(0, keepdims=True))
            c.check("partition max bf16", outs[1], to_bf16(x.max(0, keepdims=True)))
            c.check("partition add mask", outs[2][:, :k], x.sum(0, keepdims=True)[:, :k])
            c.check("partition or", outs[3], np.bitwise_or.reduce(b, 0, keepdims=True))
            c.check("partition and", outs[4], np.bitwise_and.reduce(b, 0, keepdims=True))
        run_case("partition_reduce", body)


class Scans(unittest.TestCase):
    def test_tensor_tensor_scan(self):
        """acc = initial; acc = op1(op0(data0[i], acc), data1[i]) (reverse0: op0(acc, data0);
        reverse1: op1(data1, x)); fp32 math; each output is acc cast to dtype."""
        def body(c):
            p, f = c.shape(free=(2, 32))
            k = int(c.rng.integers(1, f))
            grid = lambda: nl.mgrid[0:p, 0:f]  # noqa: E731
            a, b = c.floats((p, f), -1, 1), c.floats((p, f), -1, 1)
            init = c.floats((p, 1), -1, 1)
            s = float(F32(c.rng.uniform(-1, 1)))

            def scan(init_v, op0, op1, r0=False, r1=False):
                acc = np.broadcast_to(np.asarray(init_v, F32), (p, 1))[:, 0].copy()
                out = np.zeros((p, f), F32)
                for i in range(f):
                    x = op0(acc, a[:, i]) if r0 else op0(a[:, i], acc)
                    acc = (op1(b[:, i], x) if r1 else op1(x, b[:, i])).astype(F32)
                    out[:, i] = acc
                return out
            outs = run(lambda ta, tb, ti: [
                nisa.tensor_tensor_scan(data0=ta, data1=tb, initial=s, op0=np.multiply,
                                        op1=np.add),
                nisa.tensor_tensor_scan(ta, tb, ti, np.subtract, np.maximum, reverse0=True,
                                        reverse1=True, dtype=nl.bfloat16),
                nisa.tensor_tensor_scan(ta, tb, ti, np.add, np.subtract, False, True),
                nisa.tensor_tensor_scan(ta[grid()], tb[grid()], s, np.multiply, np.add,
                                        mask=(grid()[1] < k))], a, b, init)
            c.check("scan multiply/add", outs[0], scan(s, np.multiply, np.add))
            c.check("scan reversed bf16", outs[1],
                    to_bf16(scan(init, np.subtract, np.maximum, True, True)))
            c.check("scan add/subtract reverse1", outs[2],
                    scan(init, np.add, np.subtract, False, True))
            c.check("scan mask", outs[3][:, :k], scan(s, np.multiply, np.add)[:, :k])
        run_case("tensor_tensor_scan", body)

    def test_scalar_cumulative(self):
        """reg = start; reg = op1(op0(src[i], imm0), reg); dst[i] = reg (reset_reduce: start is
        op1's identity; load_reduce: imm1; reduce: the register the last call left)."""
        def body(c):
            p, f = c.shape(free=(1, 32))
            x, y = c.floats((p, f), -1, 1), c.floats((p, f), -1, 1)
            imm = c.floats((p, 1), -1, 1)
            s, s1 = float(F32(c.rng.uniform(-1, 1))), float(F32(c.rng.uniform(-1, 1)))

            def cum(src, op0, imm0, op1, start):
                reg = np.broadcast_to(np.asarray(start, F32), (p, 1))[:, 0].copy()
                imm0 = np.broadcast_to(np.asarray(imm0, F32), (p, 1))[:, 0]
                out = np.zeros((p, f), F32)
                for i in range(f):
                    reg = op1(op0(src[:, i], imm0), reg).astype(F32)
                    out[:, i] = reg
                return out, reg[:, None]

            def kern(tx, ty, ti):
                d1 = nl.ndarray((p, f), dtype=nl.float32)
                d2 = nl.ndarray((p, f), dtype=nl.float32)
                d3 = nl.ndarray((p, f), dtype=nl.float32)
                nisa.tensor_scalar_cumulative(dst=d1, src=tx, op0=np.multiply, op1=np.add,
                                              imm0=ti)
                nisa.tensor_scalar_cumulative(d2, ty, np.add, np.add, s,
                                              reduce_cmd=nisa.reduce_cmd.reduce)
                nisa.tensor_scalar_cumulative(d3, tx, np.subtract, np.maximum, s, imm1=s1,
                                              reduce_cmd=nisa.reduce_cmd.load_reduce)
                return [d1, d2, d3]
            outs = run(kern, x, y, imm)
            w1, reg = cum(x, np.multiply, imm, np.add, 0.0)
            w2, _ = cum(y, np.add, s, np.add, reg)
            w3, _ = cum(x, np.subtract, s, np.maximum, s1)
            c.check("cumulative reset_reduce", outs[0], w1)
            c.check("cumulative reduce", outs[1], w2)
            c.check("cumulative load_reduce", outs[2], w3)
        run_case("scalar_cumulative", body)


class Statistics(unittest.TestCase):
    def test_bn(self):
        """bn_stats: (count, mean, var*count) of the even then the odd elements; bn_aggr: the
        mean and variance of all. fp32 math whose order is not documented: a tolerance."""
        def body(c):
            p, f = c.shape(free=(2, 512))
            k = int(c.rng.integers(1, f))
            x = c.floats((p, f), -2, 2)

            def kern(tx):
                st = nisa.bn_stats(data=tx, dtype=nl.float32)
                i_p, i_f = nl.mgrid[0:p, 0:f]
                sm = nisa.bn_stats(tx[i_p, i_f], mask=(i_f < k))
                i_p6, i_f6 = nl.mgrid[0:p, 0:6]
                return [st, nisa.bn_aggr(data=st, dtype=nl.float32),
                        nisa.bn_aggr(nisa.bn_stats(tx, dtype=nl.bfloat16)),
                        nisa.bn_aggr(sm), nisa.bn_aggr(st[i_p6, i_f6], mask=(i_f6 < 3))]
            outs = run(kern, x)
            x64 = x.astype(np.float64)
            ev, od = x64[:, 0::2], x64[:, 1::2]
            stats = np.stack([np.full(p, ev.shape[1]), ev.mean(1), ev.var(1) * ev.shape[1],
                              np.full(p, od.shape[1]), od.mean(1), od.var(1) * od.shape[1]], 1)
            c.check("bn_stats", outs[0], stats, 1e-5, 1e-5)
            c.check("bn_aggr", outs[1], np.stack([x64.mean(1), x64.var(1)], 1), 1e-5, 1e-5)
            # bf16 statistics (rounded) aggregated: a bf16-sized tolerance
            c.check("bn_aggr of bf16 stats", outs[2], np.stack([x64.mean(1), x64.var(1)], 1),
                    2 ** -6, 2 ** -6)
            xk = x64[:, :k]
            c.check("bn_stats mask", outs[3], np.stack([xk.mean(1), xk.var(1)], 1), 1e-5, 1e-5)
            c.check("bn_aggr mask (the even triple)", outs[4],
                    np.stack([ev.mean(1), ev.var(1)], 1), 1e-5, 1e-5)
        run_case("bn_stats_aggr", body)


class TopEight(unittest.TestCase):
    def test_top8(self):
        """max8: the 8 largest per partition, descending; nc_find_index8: the index of the
        first occurrence of each of 8 values; nc_match_replace8: the first occurrence of each
        replaced by imm (dst_idx: their indices)."""
        def body(c):
            p, f = c.shape(free=(9, 64))
            k = int(c.rng.integers(8, f))
            # distinct values per row, so "first occurrence" is the occurrence
            x = np.stack([c.rng.permutation(f) for _ in range(p)]).astype(F32) - f / 2
            imm = float(F32(c.rng.uniform(-100, -50)))

            def kern(tx):
                m8 = nisa.max8(src=tx, dtype=nl.float32)
                idx = nisa.nc_find_index8(data=tx, vals=m8, dtype=nl.uint32)
                idx16 = nisa.nc_find_index8(data=tx, vals=m8, dtype=nl.uint16)
                dst_idx = nl.ndarray((p, 8), dtype=nl.uint32)
                rep = nisa.nc_match_replace8(data=tx, vals=m8, imm=imm, dst_idx=dst_idx,
                                             dtype=nl.float32)
                i_p, i_f = nl.mgrid[0:p, 0:f]
                mm = nisa.max8(src=tx[i_p, i_f], mask=(i_f < k))
                mi = nisa.nc_find_index8(data=tx[i_p, i_f], vals=mm, mask=(i_f < k))
                mr = nisa.nc_match_replace8(data=tx[i_p, i_f], vals=mm, imm=imm, mask=(i_f < k))
                return [m8, idx, idx16, rep, dst_idx, nisa.max8(src=tx, dtype=nl.bfloat16),
                        mm, mi, mr]
            outs = run(kern, x)
            order = np.argsort(-x, axis=1, kind="stable")[:, :8]
            top = np.take_along_axis(x, order, 1)
            rep = x.copy()
            np.put_along_axis(rep, order, F32(imm), 1)
            c.check("max8", outs[0], top)
            c.check("nc_find_index8", outs[1], order.astype(np.uint32))
            c.check("nc_find_index8 uint16", outs[2], order.astype(np.uint16))
            c.check("nc_match_replace8", outs[3], rep)
            c.check("nc_match_replace8 dst_idx", outs[4], order.astype(np.uint32))
            c.check("max8 bf16", outs[5], to_bf16(top))
            xk = x[:, :k]
            order_k = np.argsort(-xk, axis=1, kind="stable")[:, :8]
            rep_k = xk.copy()
            np.put_along_axis(rep_k, order_k, F32(imm), 1)
            c.check("max8 mask", outs[6], np.take_along_axis(xk, order_k, 1))
            c.check("nc_find_index8 mask", outs[7], order_k.astype(np.uint32))
            c.check("nc_match_replace8 mask", outs[8][:, :k], rep_k)
        run_case("top8", body)


class Gathers(unittest.TestCase):
    def test_local_gather(self):
        """The page's NumPy: per 16-partition core, the indices flattened partition-first
        (order='F'), the first num_valid_indices of them, each taking num_elem_per_idx
        contiguous elements of that core's src_buffer (the page's example passes the element
        offsets index * num_elem_per_idx to the instruction)."""
        def body(c):
            cores = int(c.rng.integers(1, 9))
            p = 16 * cores
            epi = int(c.rng.choice([2, 4]))  # 1 is the default: the default-valued call below
            f_elems = int(c.rng.integers(1, 9))
            src = c.floats((p, f_elems * epi))
            ni = int(c.rng.integers(1, 5))
            idx = c.ints((p, ni), 0, f_elems - 1, np.uint16)
            nvalid = int(c.rng.integers(1, 16 * ni + 1))

            def ref(n_valid):
                out = np.zeros((p, n_valid, epi), F32)
                blocks = src.reshape(p, f_elems, epi)
                for core in range(cores):
                    sl = slice(16 * core, 16 * core + 16)
                    ind = idx[sl].flatten(order="F")[:n_valid]
                    out[sl] = np.take(blocks[sl], ind, axis=1)
                return out
            outs = run(lambda ts, ti, ti1: [
                nisa.local_gather(src_buffer=ts, index=ti, num_elem_per_idx=epi,
                                  num_valid_indices=nvalid),
                nisa.local_gather(ts, ti, epi),
                nisa.local_gather(ts, ti1)], src, (idx * epi).astype(np.uint16), idx)
            c.check("local_gather num_valid_indices", outs[0].reshape(p, nvalid, epi),
                    ref(nvalid))
            c.check("local_gather all", outs[1].reshape(p, 16 * ni, epi), ref(16 * ni))
            # num_elem_per_idx's default 1: each index an element of the core's partitions
            flat = np.zeros((p, 16 * ni), F32)
            for core in range(cores):
                sl = slice(16 * core, 16 * core + 16)
                flat[sl] = np.take(src[sl], idx[sl].flatten(order="F"), axis=1)
            c.check("local_gather one element per index", outs[2].reshape(p, 16 * ni), flat)
        run_case("local_gather", body)

    def test_stream_shuffle(self):
        """dst partition i of each 32-partition quadrant = src partition shuffle_mask[i] of the
        same quadrant; 255 leaves dst's partition unchanged."""
        def body(c):
            q = int(c.rng.integers(1, 5))
            p, f = 32 * q, int(c.rng.integers(1, 32))
            src, dst = c.floats((p, f)), c.floats((p, f))
            mask = [int(v) for v in c.rng.integers(0, 32, 32)]
            for i in c.rng.choice(32, 4, replace=False):
                mask[int(i)] = 255

            def kern(ts, td):
                d = nl.copy(td)
                nisa.nc_stream_shuffle(src=ts, dst=d, shuffle_mask=mask, dtype=nl.float32)
                d2 = nl.copy(td)
                nisa.nc_stream_shuffle(ts, d2, mask)
                return [d, d2]
            outs = run(kern, src, dst)
            want = dst.copy()
            for qq in range(q):
                for i, m in enumerate(mask):
                    if m != 255:
                        want[32 * qq + i] = src[32 * qq + m]
            c.check("nc_stream_shuffle", outs[0], want)
            c.check("nc_stream_shuffle positional", outs[1], want)
        run_case("stream_shuffle", body)

    def test_gather_flattened(self):
        """out[p, j] = data[p].flatten()[indices[p, j]] (uint32 indices); dtype= casts."""
        def body(c):
            p, f = c.shape(free=(1, 64))
            n = int(c.rng.integers(1, 64))
            data = c.floats((p, f))
            idx = c.ints((p, n), 0, f - 1, np.uint32)
            outs = run(lambda td, ti: [nl.gather_flattened(data=td, indices=ti),
                                       nl.gather_flattened(td, ti, dtype=nl.bfloat16)],
                       data, idx)
            want = np.take_along_axis(data, idx.astype(np.int64), 1)
            c.check("gather_flattened", outs[0], want)
            c.check("gather_flattened bf16", outs[1], to_bf16(want))
        run_case("gather_flattened", body)

    def test_gathers_refused(self):
        def body(c):
            a = c.floats((16, 8))
            i = c.ints((16, 2), 0, 7, np.uint16)
            grid = lambda: nl.arange(16)[:, None]  # noqa: E731
            call = lambda t, ti: nisa.local_gather(t, ti, mask=(grid() < 8))  # noqa: E731
            c.refused(tiles_kernel, (a, i), {"body": lambda t, ti: [call(t, ti)]},
                      "nisa.local_gather", "mask", call)
            call2 = lambda t, d: nisa.nc_stream_shuffle(t, d, list(range(32)), mask=(grid() < 8))  # noqa
            c.refused(tiles_kernel, (a, a), {"body": lambda t, d: [call2(t, d) or d]},
                      "nisa.nc_stream_shuffle", "mask", call2)
            i32 = i.astype(np.uint32)
            call3 = lambda t, ti: nl.gather_flattened(t, ti, mask=(grid() < 8))  # noqa: E731
            c.refused(tiles_kernel, (a, i32), {"body": lambda t, ti: [call3(t, ti)]},
                      "nl.gather_flattened", "mask", call3)
        run_case("gathers_refused", body)


class Random(unittest.TestCase):
    def test_dropout(self):
        """prob 1.0 drops every element, 0.0 keeps every one (the page's two fixed points);
        with other probabilities each element is either kept or 0. No rescaling."""
        def body(c):
            p, f = c.shape(free=(2, 64))
            k = int(c.rng.integers(1, f))
            x = c.floats((p, f), 1, 2)
            probs = np.where(c.rng.random((p, 1)) < 0.5, 0.0, 1.0).astype(F32)

            def kern(tx, tp):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                return [nisa.dropout(tx, 1.0), nisa.dropout(data=tx, prob=0.0,
                                                            dtype=nl.bfloat16),
                        nisa.dropout(tx, tp), nl.dropout(x=tx, rate=0.0, dtype=nl.bfloat16),
                        nl.dropout(tx, 1.0), nisa.dropout(tx, 0.5),
                        nl.rand(shape=(p, f), dtype=nl.float32),
                        nisa.dropout(tx[i_p, i_f], 0.0, mask=(i_f < k)),
                        nl.dropout(tx[i_p, i_f], 0.0, mask=(i_f < k))]
            outs = run(kern, x, probs)
            c.check("dropout prob 1", outs[0], np.zeros((p, f)))
            c.check("dropout prob 0 bf16", outs[1], to_bf16(x))
            c.check("dropout per-partition prob", outs[2], np.where(probs == 1.0, 0, x))
            c.check("nl.dropout rate 0 bf16", outs[3], to_bf16(x))
            c.check("nl.dropout rate 1", outs[4], np.zeros((p, f)))
            half = outs[5]
            c.check("dropout 0.5: kept or 0", np.where(half == 0, x, half), x)
            r = outs[6]
            c.check("nl.rand in [0, 1)", ((r >= 0) & (r < 1)).astype(F32), np.ones((p, f)))
            c.check("dropout mask", outs[7][:, :k], x[:, :k])
            c.check("nl.dropout mask", outs[8][:, :k], x[:, :k])
        run_case("dropout_rand", body)

    def test_random_refused(self):
        def body(c):
            a = c.floats((8, 8))
            call = lambda t: nl.random_seed(seed=1, mask=(nl.arange(8)[:, None] < 4)) or t  # noqa
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call(t)]}, "nl.random_seed",
                      "seed", call)
            call2 = lambda t: nisa.dropout(nl.copy(t, dtype=nl.int32), 0.5, dtype=nl.float32)  # noqa
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call2(t)]}, "nisa.dropout",
                      "dtype", call2)
        run_case("random_refused", body)


if __name__ == "__main__":
    unittest.main()

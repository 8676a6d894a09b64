"""Differential cases, legacy dialect (neuronxcc.nki): data movement, creation, constants,
transposes and matmuls: nisa.dma_copy, dma_transpose, memset, iota, affine_select,
nc_transpose, nc_matmul; nl.load, store, load_transpose2d, ndarray, zeros, ones, full,
empty_like, zeros_like, broadcast_to, transpose, matmul, shared_constant,
shared_identity_matrix, arange, ds, static_range, program_id, num_programs, program_ndim,
device_print. References: the calls' documented semantics (NKI API reference, neuronxcc.nki,
SDK 2.26: https://awsdocs-neuron.readthedocs-hosted.com/en/v2.26.1/nki/api/nki.isa.html,
nki.language.html) in NumPy. Run by `python3 -m ncverify_nki.run` (ctest label `frontend`)."""

import unittest

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.compiler as ncc
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from diffharness import run_case, to_bf16

F32 = np.float32


@nki.jit
def tiles_kernel(*arrays, body):
    """Loads every array into SBUF, runs `body` on the tiles and stores each tile it returns."""
    outs = []
    for r in body(*[nl.load(a) for a in arrays]):
        o = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(o, r)
        outs.append(o)
    return tuple(outs)


@nki.jit
def hbm_kernel(*arrays, body):
    """`body` gets the HBM tensors and returns the HBM outputs it made."""
    return tuple(body(*arrays))


@nki.jit(platform_target="trn2")
def hbm_kernel_trn2(*arrays, body):
    """hbm_kernel for a NeuronCore-v3 (trn2) target."""
    return tuple(body(*arrays))


def run(body, *arrays):
    return tiles_kernel(*arrays, body=body)


def out_like(shape, dtype):
    return nl.ndarray(shape, dtype=dtype, buffer=nl.shared_hbm)


class DmaCopy(unittest.TestCase):
    def test_dma_copy(self):
        """dst = src through the DMA engines (a cast between dtypes goes through fp32); mask=
        limits the copy; dge_mode picks who makes the descriptors, not the bytes."""
        def body(c):
            p, f = c.shape(free=(2, 64))
            k = int(c.rng.integers(1, f))
            a = c.floats((p, f))

            def kern(ha):
                o1, o2, o3 = out_like((p, f), nl.float32), out_like((p, f), nl.bfloat16), \
                    out_like((p, f), nl.float32)
                t = nl.ndarray((p, f), dtype=nl.float32)
                nisa.dma_copy(dst=t, src=ha)
                nisa.dma_copy(dst=o1, src=t, dge_mode=nisa.dge_mode.swdge)
                nisa.dma_copy(dst=o2, src=ha, dge_mode=nisa.dge_mode.none)
                i_p, i_f = nl.mgrid[0:p, 0:f]
                nl.store(o3, 0.0)
                nisa.dma_copy(dst=o3[i_p, i_f], src=t[i_p, i_f], mask=(i_f < k))
                return [o1, o2, o3]
            o1, o2, o3 = hbm_kernel(a, body=kern)
            c.check("dma_copy same dtype", o1, a)
            c.check("dma_copy to bf16", o2, to_bf16(a))
            c.check("dma_copy mask", o3, np.where(np.arange(f)[None, :] < k, a, 0))
        run_case("dma_copy", body)

    def test_dma_copy_indirect(self):
        """An indirect gather with oob_mode.skip leaves rows whose index is outside alone;
        dst_rmw_op=np.add adds the source to the destination rows (fp32)."""
        def body(c):
            rows, m = int(c.rng.integers(4, 20)), int(c.rng.integers(1, 16))
            n = int(c.rng.integers(1, 16))
            table = c.floats((rows, m))
            ids = c.ints((n,), -3, rows + 3)
            base = c.floats((rows, m))
            add_ids = c.rng.permutation(rows)[:n % rows + 1].astype(np.int32)
            vals = c.floats((len(add_ids), m))

            def kern(ht, hi, hb, ha, hv):
                o1, o2 = out_like((n, m), nl.float32), out_like((rows, m), nl.float32)
                col = nl.load(hi[nl.arange(n)[:, None]])
                g = nisa.memset(shape=(n, m), value=7.0, dtype=nl.float32)
                ir, ic = nl.mgrid[0:n, 0:m]
                nisa.dma_copy(dst=g[ir, ic], src=ht[col, ic], oob_mode=nisa.oob_mode.skip)
                nl.store(o1, g)
                nl.store(o2, nl.load(hb))
                acol = nl.load(ha[nl.arange(len(add_ids))[:, None]])
                nisa.dma_copy(dst=o2[acol, nl.arange(m)[None, :]], src=nl.load(hv),
                              dst_rmw_op=np.add)
                return [o1, o2]
            o1, o2 = hbm_kernel(table, ids, base, add_ids, vals, body=kern)
            inside = (ids >= 0) & (ids < rows)
            want1 = np.full((n, m), 7.0, F32)
            want1[inside] = table[ids[inside]]
            want2 = base.copy()
            want2[add_ids] += vals
            c.check("gather oob_mode.skip", o1, want1)
            c.check("scatter dst_rmw_op=add", o2, want2)
        run_case("dma_copy_indirect", body)

    def test_dma_hwdge_trn2(self):
        def body(c):
            p, f = c.shape(free=(1, 32))
            a = c.floats((p, f))

            def kern(ha):
                o = out_like((p, f), nl.float32)
                nisa.dma_copy(dst=o, src=ha, dge_mode=nisa.dge_mode.hwdge)
                return [o]
            o, = hbm_kernel_trn2(a, body=kern)
            c.check("dma_copy hwdge (trn2)", o, a)
        run_case("dma_hwdge", body)

    def test_dma_refused(self):
        def body(c):
            a = c.floats((8, 8))
            call = lambda ha, o: nisa.dma_copy(dst=o, src=ha, dge_mode=nisa.dge_mode.hwdge)  # noqa
            c.refused(hbm_kernel, (a,), {"body": lambda ha: [
                call(ha, out_like((8, 8), nl.float32)) or out_like((8, 8), nl.float32)]},
                "nisa.dma_copy", "dge_mode", call)
            call2 = lambda ha, o: nisa.dma_copy(dst=o, src=ha, dst_rmw_op=np.multiply)  # noqa
            c.refused(hbm_kernel, (a,), {"body": lambda ha: [
                call2(ha, out_like((8, 8), nl.float32)) or out_like((8, 8), nl.float32)]},
                "nisa.dma_copy", "dst_rmw_op", call2)
            call3 = lambda ha, o: nisa.dma_copy(dst=o, src=ha, oob_mode=nisa.oob_mode.skip)  # noqa
            c.refused(hbm_kernel, (a,), {"body": lambda ha: [
                call3(ha, out_like((8, 8), nl.float32)) or out_like((8, 8), nl.float32)]},
                "nisa.dma_copy", "oob_mode", call3)
        run_case("dma_refused", body)

    def test_dma_transpose(self):
        """dma_transpose: the source's axes permuted ((1, 0); (2, 1, 0); (3, 1, 2, 0)); dtype=
        casts."""
        def body(c):
            p, f = c.shape(parts=(1, 64), free=(1, 64))
            a = c.floats((p, f))
            g = int(c.rng.integers(1, 4))
            b = c.floats((g, 4, 8))

            def kern(ha, hb):
                t1 = nisa.dma_transpose(ha)
                t2 = nisa.dma_transpose(src=nl.load(ha), axes=(1, 0), dtype=nl.bfloat16)
                t3 = nisa.dma_transpose(hb, axes=(2, 1, 0))
                i_p, i_f = nl.mgrid[0:p, 0:f]
                t4 = nisa.dma_transpose(ha[i_p, i_f], mask=(i_p < p))
                outs = []
                for t in (t1, t2, t3, t4):
                    o = out_like(t.shape, t.dtype)
                    nl.store(o, t)
                    outs.append(o)
                return outs
            o1, o2, o3, o4 = hbm_kernel(a, b, body=kern)
            c.check("dma_transpose 2-D", o1, a.T)
            c.check("dma_transpose SBUF bf16", o2, to_bf16(a.T))
            c.check("dma_transpose 3-D", o3, b.transpose(2, 1, 0))
            c.check("dma_transpose mask", o4, a.T)
        run_case("dma_transpose", body)

    def test_dma_transpose_hwdge(self):
        def body(c):
            f = int(c.rng.integers(1, 129))
            a = c.floats((16, f))

            def kern(ha):
                hb = nl.copy(nl.load(ha), dtype=nl.bfloat16)
                t = nisa.dma_transpose(hb, dge_mode=nisa.dge_mode.hwdge)
                o = out_like(t.shape, t.dtype)
                nl.store(o, t)
                return [o]
            o, = hbm_kernel_trn2(a, body=kern)
            c.check("dma_transpose hwdge", o, to_bf16(a).T)
        run_case("dma_transpose_hwdge", body)

    def test_dma_transpose_refused(self):
        def body(c):
            a = c.floats((8, 8))
            call = lambda ha: nisa.dma_transpose(ha, axes=(0, 1))  # noqa: E731
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call(t)]}, "nisa.dma_transpose",
                      "axes", call)
            call2 = lambda t: nisa.dma_transpose(nisa.nc_transpose(t, engine=nisa.tensor_engine))  # noqa
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call2(t)]}, "nisa.dma_transpose",
                      "src", call2)
        run_case("dma_transpose_refused", body)


class LoadStore(unittest.TestCase):
    def test_load_store(self):
        """nl.load: an SBUF tile of the HBM data (dtype= casts; mask= limits); nl.store writes
        HBM (a number stores that number everywhere); load_transpose2d: the 2-D transpose."""
        def body(c):
            p, f = c.shape(parts=(2, 128), free=(2, 64))
            k, kp = int(c.rng.integers(1, f)), int(c.rng.integers(1, p))
            a = c.floats((p, f))
            s = float(F32(c.rng.uniform(-5, 5)))

            def kern(ha):
                o1, o2, o3 = out_like((p, f), nl.float32), out_like((p, f), nl.float32), \
                    out_like((p, f), nl.float32)
                o4, o5 = out_like((f, p), nl.float32), out_like((p, f), nl.float32)
                o6 = out_like((p, f), nl.float32)
                i_p, i_f = nl.mgrid[0:p, 0:f]
                nl.store(dst=o1, value=nl.load(src=ha, dtype=nl.bfloat16))
                nl.store(o2, s)
                nl.store(o3, 0.0)
                both = (i_p < kp) & (i_f < k)
                nl.store(o3[i_p, i_f], nl.load(ha[i_p, i_f], mask=both), mask=both)
                buf = nl.zeros((p, f), dtype=nl.float32)
                buf[i_p, i_f] = nl.load(ha[i_p, i_f], mask=both)
                nl.store(o6, buf)
                nl.store(o4, nl.load_transpose2d(src=ha, dtype=nl.float32))
                nl.store(o5, nl.load(ha))
                return [o1, o2, o3, o4, o5, o6]
            o1, o2, o3, o4, o5, o6 = hbm_kernel(a, body=kern)
            c.check("load dtype=bf16", o1, to_bf16(a))
            c.check("store scalar", o2, np.full((p, f), s, F32))
            w = np.zeros((p, f), F32)
            w[:kp, :k] = a[:kp, :k]
            c.check("load/store masks", o3, w)
            c.check("masked load assigned into a zeroed tile", o6, w)
            c.check("load_transpose2d", o4, a.T)
            c.check("load", o5, a)
        run_case("load_store", body)

    def test_load_transpose2d_mask(self):
        def body(c):
            p, f = c.shape(parts=(2, 64), free=(2, 64))
            k = int(c.rng.integers(1, p))
            a = c.floats((p, f))

            def kern(ha):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                t = nl.load_transpose2d(ha[i_p, i_f], mask=(i_p < k))
                o = out_like(t.shape, nl.float32)
                nl.store(o, t)
                return [o]
            o, = hbm_kernel(a, body=kern)
            c.check("load_transpose2d mask", o[:, :k], a.T[:, :k])
        run_case("load_transpose2d_mask", body)


class Creation(unittest.TestCase):
    def test_creation(self):
        """zeros/ones/full fill; ndarray/empty_like allocate (written before read); zeros_like
        fills with 0; memset fills; iota writes the affine expression's values."""
        def body(c):
            p, f = c.shape(free=(1, 32))
            v = float(F32(c.rng.uniform(-9, 9)))
            a = c.floats((p, f))

            def kern(ta):
                z = nl.zeros((p, f), dtype=nl.float32, buffer=nl.sbuf, name="z",
                             lazy_initialization=False)
                o = nl.ones(shape=(p, f), dtype=nl.bfloat16, buffer=nl.sbuf, name="o",
                            lazy_initialization=False)
                fu = nl.full((p, f), v, nl.float32, buffer=nl.sbuf, name="fu",
                             lazy_initialization=False)
                e = nl.ndarray((p, f), nl.float32, buffer=nl.sbuf, name="e",
                               lazy_initialization=False)
                e[...] = nl.copy(ta)
                el = nl.empty_like(ta, dtype=nl.float32, buffer=nl.sbuf, name="el",
                                   lazy_initialization=False)
                el[...] = nl.negative(ta)
                zl = nl.zeros_like(a=ta, dtype=nl.bfloat16, buffer=nl.sbuf, name="zl",
                                   lazy_initialization=False)
                ps = nl.zeros((p, f), nl.float32, buffer=nl.psum)
                m1 = nisa.memset(shape=(p, f), value=v, dtype=nl.float32)
                m2 = nisa.memset((p, f), 3, nl.int32, engine=nisa.gpsimd_engine)
                i_p, i_f = nl.mgrid[0:p, 0:f]
                io = nisa.iota(expr=i_p * 3 + i_f * 2 + 5, dtype=nl.int32)
                io2 = nisa.iota(nl.arange(f)[None, :] + 0 * nl.arange(p)[:, None], nl.float32)
                return [z, o, fu, e, el, zl, ps, m1, m2, io, io2]
            outs = run(kern, a)
            ip, jf = np.mgrid[0:p, 0:f]
            c.check("zeros", outs[0], np.zeros((p, f)))
            c.check("ones bf16", outs[1], np.ones((p, f)))
            c.check("full", outs[2], np.full((p, f), v, F32))
            c.check("ndarray written", outs[3], a)
            c.check("empty_like written", outs[4], -a)
            c.check("zeros_like", outs[5], np.zeros((p, f)))
            c.check("zeros psum", outs[6], np.zeros((p, f)))
            c.check("memset", outs[7], np.full((p, f), v, F32))
            c.check("memset int32 gpsimd", outs[8], np.full((p, f), 3, np.int32))
            c.check("iota", outs[9], (ip * 3 + jf * 2 + 5).astype(np.int32))
            c.check("iota fp32", outs[10], jf.astype(F32))
        run_case("creation", body)

    def test_creation_refused(self):
        def body(c):
            a = c.floats((8, 8))
            grid = lambda: nl.mgrid[0:8, 0:8]  # noqa: E731
            call = lambda t: nisa.memset((8, 8), 1.0, nl.float32, mask=(grid()[1] < 4))  # noqa
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call(t)]}, "nisa.memset", "mask",
                      call)
            call2 = lambda t: nisa.iota(grid()[1], nl.int32, mask=(grid()[1] < 4))  # noqa
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call2(t)]}, "nisa.iota", "mask",
                      call2)
            call3 = lambda t: nisa.memset((8, 8), 1.0, nl.float32, engine=nisa.scalar_engine)  # noqa
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call3(t)]}, "nisa.memset",
                      "engine", call3)
        run_case("creation_refused", body)

    def test_affine_select(self):
        """out = on_true where the affine predicate holds, else on_false_value; dtype= casts."""
        def body(c):
            p, f = c.shape(free=(1, 64))
            a = c.floats((p, f))
            off = int(c.rng.integers(-f, f))
            v = float(F32(c.rng.uniform(-9, 9)))

            def kern(ta):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                return [nisa.affine_select(pred=(i_p - i_f + off >= 0), on_true_tile=ta,
                                           on_false_value=v),
                        nisa.affine_select(i_f - i_p < 0, ta, v, dtype=nl.bfloat16),
                        nisa.affine_select((i_p - i_f == 0), ta[i_p, i_f], v,
                                           mask=(i_f < f))]
            outs = run(kern, a)
            ip, jf = np.mgrid[0:p, 0:f]
            c.check("affine_select >=", outs[0], np.where(ip - jf + off >= 0, a, F32(v)))
            c.check("affine_select < bf16", outs[1], to_bf16(np.where(jf - ip < 0, a, F32(v))))
            c.check("affine_select == mask", outs[2], np.where(ip == jf, a, F32(v)))
        run_case("affine_select", body)

    def test_broadcast_constants(self):
        """broadcast_to: NumPy broadcasting; shared_constant/shared_identity_matrix: the
        constant's values (identity and constant matrices)."""
        def body(c):
            p, f = c.shape(parts=(2, 128), free=(1, 32))
            row, col = c.floats((1, f)), c.floats((p, 1))
            n = int(c.rng.integers(1, 129))
            v = float(F32(c.rng.uniform(-3, 3)))

            def kern(tr, tc):
                return [nl.broadcast_to(src=tr, shape=(p, f)), nl.broadcast_to(tc, shape=(p, f)),
                        nl.load(nl.shared_identity_matrix(n=n, dtype=nl.float32)),
                        nl.load(nl.shared_constant(constant=np.full((p, f), v), dtype=nl.float32))]
            outs = run(kern, row, col)
            c.check("broadcast_to row", outs[0], np.broadcast_to(row, (p, f)))
            c.check("broadcast_to column", outs[1], np.broadcast_to(col, (p, f)))
            c.check("shared_identity_matrix", outs[2], np.identity(n))
            c.check("shared_constant", outs[3], np.full((p, f), v, F32))
        run_case("broadcast_constants", body)


class TransposeMatmul(unittest.TestCase):
    def test_transposes(self):
        """nc_transpose / nl.transpose: the 2-D transpose (exact for finite values); dtype=
        casts."""
        def body(c):
            p, f = c.shape(parts=(1, 128), free=(1, 128))
            a = c.floats((p, f))
            s = c.floats((min(p, 32), min(f, 32)))

            def kern(ta, ts):
                i_p, i_f = nl.mgrid[0:p, 0:f]
                return [nisa.nc_transpose(data=ta), nisa.nc_transpose(ta, dtype=nl.bfloat16),
                        nisa.nc_transpose(ta, engine=nisa.tensor_engine),
                        nisa.nc_transpose(ts, engine=nisa.vector_engine),
                        nisa.nc_transpose(ta[i_p, i_f], mask=(i_p < p)),
                        nl.transpose(x=ta), nl.transpose(ta, dtype=nl.bfloat16),
                        nl.transpose(ta[i_p, i_f], mask=(i_f < f))]
            outs = run(kern, a, s)
            c.check("nc_transpose", outs[0], a.T)
            c.check("nc_transpose bf16", outs[1], to_bf16(a.T))
            c.check("nc_transpose tensor", outs[2], a.T)
            c.check("nc_transpose vector", outs[3], s.T)
            c.check("nc_transpose mask", outs[4], a.T)
            c.check("nl.transpose", outs[5], a.T)
            c.check("nl.transpose bf16", outs[6], to_bf16(a.T))
            c.check("nl.transpose mask", outs[7], a.T)
        run_case("transposes", body)

    def test_matmul(self):
        """nc_matmul: stationary.T @ moving in fp32 (PSUM); the flags are hints with the same
        product; tile_position/tile_size place it in part of the PE array. nl.matmul: x @ y
        (transpose_x=True: x is given transposed, x.T @ y). Products of small integers are
        exact in any order."""
        def body(c):
            kk, m = int(c.rng.integers(1, 129)), int(c.rng.integers(1, 129))
            n = int(c.rng.integers(1, 513))
            s = c.ints((kk, m), -4, 4).astype(F32)
            mv = c.ints((kk, n), -4, 4).astype(F32)
            x = c.ints((m, kk), -4, 4).astype(F32)
            s64 = c.ints((64, 64), -4, 4).astype(F32)
            m64 = c.ints((64, n), -4, 4).astype(F32)

            s01 = c.ints((kk, m), 0, 1).astype(F32)
            m01 = c.ints((kk, n), 0, 1).astype(F32)
            sq = c.ints((kk, kk), -4, 4).astype(F32)

            def kern(ts, tm, tx, ts64, tm64, t01, m01, tsq, tid):
                i_k, i_m = nl.mgrid[0:kk, 0:m]
                i_k2, i_n = nl.mgrid[0:kk, 0:n]
                # each product copied to SBUF at once: ten live PSUM tiles would not fit
                calls = [lambda: nisa.nc_matmul(stationary=ts, moving=tm),
                         lambda: nisa.nc_matmul(t01, tm, is_stationary_onezero=True),
                         lambda: nisa.nc_matmul(ts64, tm64, tile_position=(64, 0),
                                                tile_size=(64, 64)),
                         lambda: nisa.nc_matmul(ts[i_k, i_m], tm[i_k2, i_n], mask=(i_k < kk)),
                         lambda: nisa.nc_matmul(ts, tm, perf_mode="none"),
                         lambda: nl.matmul(x=tx, y=tm),
                         lambda: nl.matmul(ts, tm, transpose_x=True),
                         lambda: nl.matmul(ts[i_k, i_m], tm[i_k2, i_n], transpose_x=True,
                                           mask=(i_k < kk)),
                         lambda: nisa.nc_matmul(ts, m01, is_moving_onezero=True),
                         lambda: nisa.nc_matmul(tsq, tid, is_transpose=True)]
                return [nl.copy(f()) for f in calls]
            outs = run(kern, s, mv, x, s64, m64, s01, m01, sq, np.identity(kk, F32))
            want = s.T @ mv
            c.check("nc_matmul", outs[0], want)
            c.check("nc_matmul is_stationary_onezero", outs[1], s01.T @ mv)
            c.check("nc_matmul PE tile", outs[2], s64.T @ m64)
            c.check("nc_matmul mask", outs[3], want)
            c.check("nc_matmul perf_mode none", outs[4], want)
            c.check("nl.matmul", outs[5], x @ mv)
            c.check("nl.matmul transpose_x", outs[6], want)
            c.check("nl.matmul mask", outs[7], want)
            c.check("nc_matmul is_moving_onezero", outs[8], s.T @ m01)
            c.check("nc_matmul is_transpose (moving = I)", outs[9], sq.T)
        run_case("matmul", body)

    def test_matmul_bf16(self):
        """bf16 operands: the products of bf16 values summed in fp32 (small integers: exact)."""
        def body(c):
            kk, m, n = int(c.rng.integers(1, 129)), int(c.rng.integers(1, 129)), \
                int(c.rng.integers(1, 513))
            s = c.ints((kk, m), -4, 4).astype(F32)
            mv = c.ints((kk, n), -4, 4).astype(F32)
            outs = run(lambda ts, tm: [nisa.nc_matmul(nl.copy(ts, dtype=nl.bfloat16),
                                                      nl.copy(tm, dtype=nl.bfloat16),
                                                      is_transpose=False)], s, mv)
            c.check("nc_matmul bf16", outs[0], s.T @ mv)
        run_case("matmul_bf16", body)

    def test_matmul_refused(self):
        def body(c):
            a = c.floats((8, 8))
            call = lambda t: nisa.nc_matmul(t, t, perf_mode="double_row")  # noqa: E731
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call(t)]}, "nisa.nc_matmul",
                      "perf_mode", call)
        run_case("matmul_refused", body)


class IndexingAndLoops(unittest.TestCase):
    def test_indexing_loops(self):
        """arange/ds/static_range/affine_range/sequential_range index and iterate as
        documented; program_id/num_programs/program_ndim of a one-program launch; device_print
        prints nothing and changes nothing."""
        def body(c):
            p, f = c.shape(parts=(2, 128), free=(4, 64))
            a = c.floats((p, f))
            s0 = int(c.rng.integers(0, f - 2))
            sz = int(c.rng.integers(1, f - s0))

            def kern(ha):
                o1, o2, o3 = out_like((p, sz), nl.float32), out_like((p, f), nl.float32), \
                    out_like((2, f), nl.float32)
                t = nl.load(ha[nl.arange(p)[:, None], nl.arange(start=s0, stop=s0 + sz)[None, :]])
                nl.store(o1, nl.load(ha[:, nl.ds(start=s0, size=sz)]) + t * 0.0)
                nl.device_print(prefix="t", x=t, mask=(nl.arange(p)[:, None] < 1))
                for j in nl.static_range(0, f, 2):
                    nl.store(o2[:, nl.ds(j, 1)], nl.load(ha[:, nl.ds(j, 1)]))
                for j in nl.affine_range(1, f, 2):
                    nl.store(o2[:, nl.ds(j, 1)], nl.load(ha[:, nl.ds(j, 1)]))
                for j in nl.sequential_range(1):
                    pid = nl.program_id(axis=0)
                    nl.store(o3[nl.ds(pid, 1), :], nl.load(ha[nl.ds(pid, 1), :]))
                o4 = out_like((1, nl.num_programs(axes=0) * 10 + nl.program_ndim()), nl.float32)
                nl.store(o4, 1.0)
                return [o1, o2, o3, o4]
            o1, o2, o3, o4 = hbm_kernel[2](a, body=kern)
            c.check("arange / ds", o1, a[:, s0:s0 + sz])
            c.check("static/affine range", o2, a)
            c.check("program_id (grid [2])", o3, a[:2])
            c.check("num_programs * 10 + program_ndim", o4.shape, (1, 21))
        run_case("indexing_loops", body)



def allocated_kernel(a, b):
    """Direct allocation and the compiler's options change where tiles live and how the kernel
    is compiled, never the values: out = (a + b) * 2 and a.T @ b through allocated buffers."""
    p, f = a.shape
    out = nl.ndarray((p, f), dtype=nl.float32, buffer=nl.shared_hbm)
    prod = nl.ndarray((f, f), dtype=nl.float32, buffer=nl.shared_hbm)
    sb = nl.ndarray((2, nl.par_dim(p), f), dtype=nl.float32,
                    buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))
    sb2 = nl.ndarray((2, nl.par_dim(p), f), dtype=nl.float32,
                     buffer=ncc.sbuf.alloc(lambda idx, pdim_size, fdim_size:
                                           (0, 4096 + idx[0] * fdim_size * 4)))
    ps = nl.ndarray((2, nl.par_dim(f), f), dtype=nl.float32,
                    buffer=ncc.psum.mod_alloc(base_bank=0, num_bank_tiles=(2,)))
    ps2 = nl.ndarray((1, nl.par_dim(f), f), dtype=nl.float32,
                     buffer=ncc.psum.alloc(lambda idx, pdim_size, fdim_size: (2 + idx[0], 0, 0)))
    with ncc.no_reorder():
        sb[0] = nl.load(a)
        sb[1] = nl.load(b)
        sb2[0] = nisa.tensor_tensor(sb[0], sb[1], np.add)
        sb2[1] = nisa.tensor_scalar(sb2[0], np.multiply, 2.0)
        ps[1] = nisa.nc_matmul(sb[0], sb[1])
        ps2[0] = nisa.nc_matmul(sb[0], sb[1])
    nl.store(out, sb2[1])
    nl.store(prod, nisa.tensor_tensor(ps[1], nl.copy(ps2[0]), np.add))
    return out, prod


class FacadeHelpers(unittest.TestCase):
    def test_undocumented_helpers_are_refused(self):
        """`nl.allocate` and `nl.normalize` were in the kernel language's facade and the
        stand-in module but are the stand-in's own helpers (language.allocate, dtypes.normalize),
        not calls of the neuronxcc.nki.language pages: found by coverage_test, now refused at
        the kernel's line like any name the stand-ins lack."""
        def body(c):
            a = c.floats((8, 8))
            call = lambda t: nl.allocate((8, 8), nl.float32, None)  # noqa: E731
            c.refused(tiles_kernel, (a,), {"body": lambda t: [(call(t), t)[1]]},
                      "nl.allocate", "allocate", call)
            call2 = lambda t: nl.normalize(nl.float32)  # noqa: E731
            c.refused(tiles_kernel, (a,), {"body": lambda t: [(call2(t), t)[1]]},
                      "nl.normalize", "normalize", call2)
        run_case("facade_helpers", body)


class Compiler(unittest.TestCase):
    def test_compiler_alloc(self):
        def body(c):
            p, f = c.shape(free=(1, 64))
            a, b = c.ints((p, f), -4, 4).astype(F32), c.ints((p, f), -4, 4).astype(F32)
            # the compiler's decorators, applied here (where the case observes the calls)
            kern = nki.jit(ncc.enable_stack_allocator(log_level=10)(ncc.disable_stack_allocator(
                ncc.force_auto_alloc(ncc.skip_middle_end_transformations(
                    ncc.enable_stack_allocator(func=allocated_kernel))))))
            out, prod = kern(a, b)
            c.check("(a + b) * 2 through allocated tiles", out, (a + b) * 2)
            c.check("2 a.T @ b through allocated PSUM", prod, 2 * (a.T @ b))
        run_case("compiler_alloc", body)

    def test_compiler_refused(self):
        def body(c):
            a = c.floats((8, 8))
            call = lambda t: nl.ndarray((2, nl.par_dim(8), 8), dtype=nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0, base_partition=32))  # noqa
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call(t)]}, "ncc.sbuf.mod_alloc",
                      "base_partition", call)
            call2 = lambda t: ncc.sbuf.mod_alloc(base_addr=0, num_par_tiles=(2,))  # noqa: E731
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call2(t)]}, "ncc.sbuf.mod_alloc",
                      "num_par_tiles", call2)
            call3 = lambda t: ncc.psum.mod_alloc(base_bank=0, base_addr=64)  # noqa: E731
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call3(t)]}, "ncc.psum.mod_alloc",
                      "base_addr", call3)
            call4 = lambda t: ncc.psum.mod_alloc(base_bank=0, base_partition=32)  # noqa: E731
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call4(t)]}, "ncc.psum.mod_alloc",
                      "base_partition", call4)
            call5 = lambda t: ncc.psum.mod_alloc(base_bank=0, num_par_tiles=(2,))  # noqa: E731
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call5(t)]}, "ncc.psum.mod_alloc",
                      "num_par_tiles", call5)
            call6 = lambda t: ncc.psum.mod_alloc(base_bank=0, num_free_tiles=(2,))  # noqa: E731
            c.refused(tiles_kernel, (a,), {"body": lambda t: [call6(t)]}, "ncc.psum.mod_alloc",
                      "num_free_tiles", call6)
        run_case("compiler_refused", body)


if __name__ == "__main__":
    unittest.main()

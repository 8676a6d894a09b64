"""Today's `nki.isa` (NKI 0.6, destination-first) under the simulator: the top-8 family (max8,
nc_find_index8 with 0.6's all-ones miss and successive duplicates, nc_match_replace8 with 0.6's
reverse tie-break), the gathers (local_gather, nc_n_gather, nc_stream_shuffle with dst first),
dropout, and the calls the model refuses (random numbers, MX, nonzero_with_count, topk, the
multi-core calls), each at the kernel's line. Run by `python3 -m ncverify_nki.run` (ctest label
`conformance`)."""

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




def refused(test, kernel, args, words):
    with test.assertRaises(KernelNotTraced) as caught:
        kernel(*args)
    test.assertIn("newapi_top8_gathers_test.py:", str(caught.exception))
    test.assertIn(words, str(caught.exception))


# --- the top-8 family --------------------------------------------------------------------------

@nki.jit
def top8(data, vals, mode):
    d, v = on_chip(data), on_chip(vals)
    p = data.shape[0]
    if mode == "max8":
        r = nl.ndarray((p, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.max8(r, d)
        return to_hbm(r), to_hbm(r)
    if mode in ("find32", "find16"):
        r = nl.ndarray((p, 8), dtype=nl.uint32 if mode == "find32" else nl.uint16,
                       buffer=nl.sbuf)
        nisa.nc_find_index8(dst=r, data=d, vals=v, name="f")
        return to_hbm(r), to_hbm(r)
    if mode == "replace":
        r = nl.ndarray(data.shape, dtype=nl.float32, buffer=nl.sbuf)
        idx = nl.ndarray((p, 8), dtype=nl.uint32, buffer=nl.sbuf)
        nisa.nc_match_replace8(r, d, v, -1.0, dst_idx=idx)
        return to_hbm(r), to_hbm(idx)
    if mode == "find_float":
        r = nl.ndarray((p, 8), dtype=nl.float32, buffer=nl.sbuf)
        nisa.nc_find_index8(r, d, v)
    else:  # max8 into 4 values
        r = nl.ndarray((p, 4), dtype=nl.float32, buffer=nl.sbuf)
        nisa.max8(r, d)
    return to_hbm(r), to_hbm(r)


class Top8(unittest.TestCase):
    def setUp(self):
        row = np.array([1, 2, 3, 4, 8, 8, 8, 8, 8, 8, 8], np.float32)
        self.data = np.tile(row, (16, 1))

    def test_max8(self):
        x = np.random.default_rng(8).uniform(-1, 1, (32, 40)).astype(np.float32)
        r, _ = top8(x, np.zeros((32, 8), np.float32), "max8")
        np.testing.assert_array_equal(r, -np.sort(-x, axis=1)[:, :8])

    def test_find_index8_successive_occurrences_and_all_ones_for_a_miss(self):
        vals = np.tile(np.array([3, 8, 8, 42, 8, 1, 1, 8], np.float32), (16, 1))
        r, _ = top8(self.data, vals, "find32")
        want = np.array([2, 4, 5, 0xFFFFFFFF, 6, 0, 0xFFFFFFFF, 7], np.uint32)
        np.testing.assert_array_equal(r, np.tile(want, (16, 1)))
        r, _ = top8(self.data, vals, "find16")
        np.testing.assert_array_equal(r, np.tile(np.where(want == 0xFFFFFFFF, 0xFFFF, want)
                                                 .astype(np.uint16), (16, 1)))

    def test_match_replace8_pairs_duplicates_in_reverse(self):
        # The page's example: dst_idx is [2, 10, 9, 8, 7, 6, 5, 4].
        vals = np.tile(np.array([3, 8, 8, 8, 8, 8, 8, 8], np.float32), (16, 1))
        r, idx = top8(self.data, vals, "replace")
        np.testing.assert_array_equal(idx, np.tile(np.array([2, 10, 9, 8, 7, 6, 5, 4],
                                                            np.uint32), (16, 1)))
        want = self.data.copy()
        want[:, [2, 4, 5, 6, 7, 8, 9, 10]] = -1
        np.testing.assert_array_equal(r, want)

    def test_refusals(self):
        v = np.zeros((16, 8), np.float32)
        refused(self, top8, (self.data, v, "find_float"), "the indices are uint16 or uint32")
        refused(self, top8, (self.data, v, "max8_narrow"), "holds 4 values per partition")


# --- gathers and the stream shuffle ------------------------------------------------------------

@nki.jit
def local(src, index, mode):
    s, i = on_chip(src), on_chip(index)
    p = src.shape[0]
    if mode == "one":
        r = nl.ndarray((p, 16), dtype=nl.float32, buffer=nl.sbuf)
        nisa.local_gather(r, s, i)
    elif mode == "pairs":
        r = nl.ndarray((p, 2 * 10), dtype=nl.float32, buffer=nl.sbuf)
        nisa.local_gather(dst=r, src_buffer=s, index=i, num_elem_per_idx=2, num_valid_indices=10,
                          name="g")
    else:  # wrong dst size
        r = nl.ndarray((p, 3), dtype=nl.float32, buffer=nl.sbuf)
        nisa.local_gather(r, s, i)
    return to_hbm(r)


def golden_local(src, index, e=1, nv=None):
    p = src.shape[0]
    out = []
    for g in range(0, p, 16):
        flat = index[g:g + 16].reshape(-1, order="F")  # partition first
        flat = flat[:nv] if nv else flat
        for r in range(g, g + 16):
            out.append(np.concatenate([src[r, j:j + e] for j in flat]))
    return np.array(out, np.float32)


@nki.jit
def n_gather(data, indices, mode):
    d, i = on_chip(data), on_chip(indices)
    if mode == "ok":
        r = nl.ndarray(indices.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.nc_n_gather(r, d, i)
    else:  # a casting dst
        r = nl.ndarray(indices.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.nc_n_gather(dst=r, data=d, indices=i, name="n")
    return to_hbm(r)


@nki.jit
def shuffle(old, src, mask):
    d, s = on_chip(old), on_chip(src)
    nisa.nc_stream_shuffle(d, s, mask)
    return to_hbm(d)


class Gathers(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(9)
        self.src = self.rng.uniform(-1, 1, (32, 8)).astype(np.float32)

    def test_local_gather(self):
        index = self.rng.integers(0, 8, (32, 1)).astype(np.uint16)
        np.testing.assert_array_equal(local(self.src, index, "one"),
                                      golden_local(self.src, index))
        index = self.rng.integers(0, 7, (32, 1)).astype(np.uint16)
        np.testing.assert_array_equal(local(self.src, index, "pairs"),
                                      golden_local(self.src, index, 2, 10))
        refused(self, local, (self.src, index, "wrong"), "dst holds 3 elements per partition")

    def test_nc_n_gather(self):
        data = self.rng.uniform(-1, 1, (64, 4, 4)).astype(np.float32)
        idx = self.rng.integers(0, 16, (64, 5)).astype(np.uint32)
        want = np.take_along_axis(data.reshape(64, 16), idx.astype(np.int64), axis=1)
        np.testing.assert_array_equal(n_gather(data, idx, "ok"), want)
        refused(self, n_gather, (data, idx, "cast"), "dst must have data's dtype")

    def test_stream_shuffle_takes_dst_first(self):
        old = np.full((32, 4), 7.0, np.float32)
        src = np.arange(128, dtype=np.float32).reshape(32, 4)
        mask = [31 - i for i in range(32)]
        mask[5] = 255
        want = src[::-1].copy()
        want[5] = 7.0  # 255 leaves dst's partition as it was
        np.testing.assert_array_equal(shuffle(old, src, mask), want)


# --- dropout and the refused calls -------------------------------------------------------------

@nki.jit
def drop(x, p, mode):
    t = on_chip(x)
    r = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    if mode == "scalar":
        nisa.dropout(r, t, p)
    elif mode == "column":
        nisa.dropout(dst=r, data=t, prob=on_chip(p), name="d")
    else:  # cast
        r = nl.ndarray(x.shape, dtype=nl.bfloat16, buffer=nl.sbuf)
        nisa.dropout(r, t, 0.5)
    return to_hbm(r)


def unmodelled_kernel(x, mode):
    t = on_chip(x)
    u = nl.ndarray(x.shape, dtype=nl.uint32, buffer=nl.sbuf)
    r = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    if mode == "rng":
        nisa.rng(u)
    elif mode == "rand2":
        nisa.rand2(r, 0.0, 1.0)
    elif mode == "set_rng_seed":
        nisa.set_rng_seed(u[0:1, 0:1])
    elif mode == "rand_set_state":
        nisa.rand_set_state(u)
    elif mode == "rand_get_state":
        nisa.rand_get_state(u, engine=nisa.engine.gpsimd)
    elif mode == "quantize_mx":
        nisa.quantize_mx(r, t, u)
    elif mode == "nc_matmul_mx":
        nisa.nc_matmul_mx(r, t, t, u, u, accumulate=False)
    elif mode == "nonzero_with_count":
        nisa.nonzero_with_count(u, t, index_offset=0, padding_val=-1)
    elif mode == "topk":
        nisa.topk(r, u, t, n=16)
    elif mode == "core_barrier":
        nisa.core_barrier(t, (0, 1))
    elif mode == "sendrecv":
        nisa.sendrecv(t, r, send_to_rank=1, recv_from_rank=1, pipe_id=0)
    else:  # a misspelt argument of a refused call is still named as such
        nisa.topk(r, u, t, k=16)
    return to_hbm(r)


unmodelled = on("trn3")(unmodelled_kernel)


class RandomAndUnmodelled(unittest.TestCase):
    def test_dropout(self):
        x = np.random.default_rng(4).uniform(1, 2, (128, 64)).astype(np.float32)
        np.testing.assert_array_equal(drop(x, 0.0, "scalar"), x)
        np.testing.assert_array_equal(drop(x, 1.0, "scalar"), np.zeros_like(x))
        probs = np.where(np.arange(128) % 2 == 0, 0.0, 1.0).astype(np.float32).reshape(128, 1)
        got = drop(x, probs, "column")
        np.testing.assert_array_equal(got[0::2], x[0::2])
        np.testing.assert_array_equal(got[1::2], 0.0)
        refused(self, drop, (x, 0.5, "cast"), "the output dtype must match the input's")

    def test_refused_calls_say_why(self):
        x = np.ones((16, 16), np.float32)
        for mode, words in (
                ("rng", "nisa.rng: dst='a tile' is not modelled"),
                ("rand2", "nisa.rand2: dst='a tile' is not modelled"),
                ("set_rng_seed", "nisa.set_rng_seed: src_seeds='a tile' is not modelled"),
                ("rand_set_state", "nisa.rand_set_state: src_seeds='a tile' is not modelled"),
                ("rand_get_state", "nisa.rand_get_state: dst='a tile' is not modelled"),
                # modelled (newapi/isa_mx.py); these operands are not MX ones
                ("quantize_mx", "nisa.quantize_mx: src is fp32; the docstring asks for "
                                "float16 or bfloat16"),
                ("nc_matmul_mx", "nisa.nc_matmul_mx: dst is in SBUF; this call writes PSUM"),
                ("nonzero_with_count", "nisa.nonzero_with_count is not modelled"),
                ("topk", "nisa.topk is not modelled"),
                ("core_barrier", "nisa.core_barrier is not modelled"),
                # modelled (newapi/sendrecv.py); this launch has one core
                ("sendrecv", "nisa.sendrecv exchanges tiles between the two NeuronCores of a "
                             "logical NeuronCore: it needs an LNC2 launch"),
                ("misspelt", "nisa.topk: unknown keyword argument 'k'")):
            with self.subTest(mode=mode):
                refused(self, unmodelled, (x, mode), words)


if __name__ == "__main__":
    unittest.main()

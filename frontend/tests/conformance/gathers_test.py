"""The gathers and the stream shuffle under the simulator (nisa.local_gather,
nisa.nc_stream_shuffle, nl.gather_flattened): ncverify's own kernels, each compared with NumPy
values computed here from the pages' descriptions, an index outside its source failing the call
with the kernel's line, and every argument either exercised or refused at the kernel's line. Run
by `python3 -m ncverify_nki.run` (ctest label `conformance`)."""

import unittest

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from ncverify_nki.simulate import DynamicCheckFailure, KernelNotTraced


def golden_local_gather(src, index, per_idx, valid):
    """Per block of 16 partitions: the block's indices read down the partitions first, the first
    `valid` kept; each partition then copies `per_idx` consecutive elements of its own row from
    every index."""
    parts = src.shape[0]
    rows = src.reshape(parts, -1)
    out = np.zeros((parts, valid, per_idx), dtype=src.dtype)
    for first in range(0, parts, 16):
        block = index[first:first + 16].reshape(16, -1)
        starts = [int(block[j % 16, j // 16]) for j in range(valid)]
        for p in range(first, first + 16):
            for j, s in enumerate(starts):
                out[p, j, :] = rows[p, s:s + per_idx]
    return out


def golden_shuffle(dst, src, mask):
    """Partition q * 32 + i of dst takes partition q * 32 + mask[i] of src; 255 keeps dst's."""
    out = dst.copy()
    for p in range(dst.shape[0]):
        m = mask[p % 32]
        if m != 255:
            out[p] = src[p - p % 32 + m]
    return out


def to_bf16(x):
    """float32 -> the nearest bfloat16 (ties to even), held in float32 (finite values)."""
    bits = np.asarray(x, dtype=np.float32).view(np.uint32)
    bits = (bits + (((bits >> 16) & 1) + 0x7FFF)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


@nki.jit
def gather_rows(src, index, per_idx=1, valid=None):
    """local_gather of a [P, F] tile by a [P, K] uint16 index tile."""
    parts = src.shape[0]
    count = valid if valid else 16 * index.shape[1]
    out = nl.ndarray((parts, count, per_idx), dtype=src.dtype, buffer=nl.shared_hbm)
    t = nl.load(src)
    i = nl.load(index)
    if valid is None:
        g = nisa.local_gather(t, i, num_elem_per_idx=per_idx)
    else:
        g = nisa.local_gather(t, i, per_idx, valid)
    nl.store(out, value=g)
    return out


@nki.jit
def local_gather_with(src, index, mode):
    out = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.load(src)
    i = nl.load(index)
    if mode == "mask":
        g = nisa.local_gather(t, i, mask=(nl.arange(128)[:, None] < 64))
    elif mode == "three":
        g = nisa.local_gather(t, i, num_elem_per_idx=3)
    elif mode == "uint32":
        g = nisa.local_gather(t, nl.copy(i, dtype=nl.uint32))
    elif mode == "24_partitions":
        g = nisa.local_gather(t[0:24, :], i[0:24, :])
    else:
        g = nisa.local_gather(t, i, num_valid_indices=65)
    nl.store(out[0:128, 0:64], value=g[:, 0:64, 0])
    return out


@nki.jit
def shuffle_into_fresh(src, mask):
    """nc_stream_shuffle of a loaded tile into a fresh SBUF tile."""
    parts, width = src.shape
    out = nl.ndarray((parts, width), dtype=src.dtype, buffer=nl.shared_hbm)
    a = nl.load(src)
    b = nl.ndarray((parts, width), dtype=src.dtype, buffer=nl.sbuf)
    nisa.nc_stream_shuffle(src=a, dst=b, shuffle_mask=mask)
    nl.store(out, value=b)
    return out


@nki.jit
def shuffle_in_place(src, mask):
    out = nl.ndarray(src.shape, dtype=src.dtype, buffer=nl.shared_hbm)
    a = nl.load(src)
    nisa.nc_stream_shuffle(a, a, mask)
    nl.store(out, value=a)
    return out


@nki.jit
def shuffle_over(old, row, mask):
    """dst holds `old`; one partition `row` is shuffled over it (255 entries keep old rows)."""
    out = nl.ndarray(old.shape, dtype=old.dtype, buffer=nl.shared_hbm)
    d = nl.load(old)
    r = nl.load(row)
    nisa.nc_stream_shuffle(r[0:1, :], d, mask, dtype=old.dtype)
    nl.store(out, value=d)
    return out


@nki.jit
def shuffle_with(src, mode):
    out = nl.ndarray((32, 16), dtype=nl.float32, buffer=nl.shared_hbm)
    a = nl.load(src)
    b = nl.ndarray((32, 16), dtype=nl.float32, buffer=nl.sbuf)
    mask = list(range(32))
    if mode == "mask":
        nisa.nc_stream_shuffle(a, b, mask, mask=(nl.arange(32)[:, None] < 16))
    elif mode == "short":
        nisa.nc_stream_shuffle(a, b, mask[:31])
    elif mode == "entry":
        nisa.nc_stream_shuffle(a, b, mask[:31] + [40])
    elif mode == "dtype":
        nisa.nc_stream_shuffle(a, b, mask, dtype=nl.bfloat16)
    elif mode == "hbm":
        nisa.nc_stream_shuffle(a, out, mask)
    else:
        nisa.nc_stream_shuffle(a[0:1, :], b, [1] * 32)  # partition 1 of a one-partition source
    nl.store(out, value=b)
    return out


@nki.jit
def gather_flat(data, indices, dtype=None):
    out = nl.ndarray(indices.shape, dtype=dtype or data.dtype, buffer=nl.shared_hbm)
    d = nl.load(data)
    i = nl.load(indices)
    nl.store(out, value=nl.gather_flattened(d, i, dtype=dtype))
    return out


@nki.jit
def gather_flat_with(data, indices, mode):
    out = nl.ndarray((128, 8), dtype=nl.float32, buffer=nl.shared_hbm)
    d = nl.load(data)
    i = nl.load(indices)
    if mode == "int32":
        g = nl.gather_flattened(d, nl.copy(i, dtype=nl.int32))
    elif mode == "mask":
        g = nl.gather_flattened(d, i, mask=(nl.arange(128)[:, None] < 64))
    else:
        g = nl.gather_flattened(d, i, axis=1)
    nl.store(out, value=g)
    return out


def refused(test, kernel, *args, words):
    with test.assertRaises(KernelNotTraced) as caught:
        kernel(*args)
    test.assertIn("gathers_test.py:", str(caught.exception))
    test.assertIn(words, str(caught.exception))


class LocalGather(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(16)

    def test_each_core_gathers_with_its_own_indices(self):
        src = self.rng.uniform(-100, 100, (128, 96)).astype(np.float32)
        for per_idx, valid in ((1, None), (4, 50), (32, 9)):
            with self.subTest(per_idx=per_idx, valid=valid):
                index = self.rng.integers(0, 96 - per_idx + 1, (128, 4)).astype(np.uint16)
                got = gather_rows(src, index, per_idx, valid)
                want = golden_local_gather(src, index, per_idx, valid or 64)
                np.testing.assert_array_equal(got, want)

    def test_values_move_bit_for_bit_in_any_dtype(self):
        src = self.rng.integers(-2 ** 31, 2 ** 31 - 1, (32, 40)).astype(np.int32)
        index = self.rng.integers(0, 39, (32, 2)).astype(np.uint16)
        np.testing.assert_array_equal(gather_rows(src, index, 2, 20),
                                      golden_local_gather(src, index, 2, 20))

    def test_an_index_past_the_row_fails_the_call_at_its_line(self):
        src = np.zeros((16, 8), dtype=np.float32)
        index = np.full((16, 1), 6, dtype=np.uint16)
        index[9, 0] = 7  # elements 7 and 8 of an 8-element row
        with self.assertRaises(DynamicCheckFailure) as caught:
            gather_rows(src, index, 2)
        self.assertEqual(caught.exception.kind, "out_of_bounds")
        self.assertTrue(caught.exception.file.endswith("gathers_test.py"))
        self.assertIn("[9, 0] = 7", str(caught.exception))

    def test_refusals_name_the_argument_at_the_kernel_line(self):
        src = np.zeros((128, 64), dtype=np.float32)
        index = np.zeros((128, 4), dtype=np.uint16)
        for mode, words in (("mask", "is not modelled (a predicate"),
                            ("three", "num_elem_per_idx=3"),
                            ("uint32", "must be uint16"),
                            ("24_partitions", "multiple of 16"),
                            ("too_many", "num_valid_indices=65")):
            with self.subTest(mode=mode):
                refused(self, local_gather_with, src, index, mode, words=words)


class StreamShuffle(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(32)

    def test_each_quadrant_is_shuffled_with_the_same_mask(self):
        src = self.rng.uniform(-1, 1, (128, 24)).astype(np.float32)
        mask = [31 - i for i in range(32)]
        got = shuffle_into_fresh(src, mask)
        np.testing.assert_array_equal(got, golden_shuffle(np.zeros_like(src), src, mask))

    def test_in_place_reads_every_source_partition_first(self):
        src = self.rng.uniform(-1, 1, (64, 8)).astype(np.float32)
        mask = [(i + 5) % 32 for i in range(32)]
        np.testing.assert_array_equal(shuffle_in_place(src, mask), golden_shuffle(src, src, mask))

    def test_a_broadcast_and_255_entries_that_keep_their_partitions(self):
        old = self.rng.uniform(-1, 1, (32, 8)).astype(np.float32)
        row = self.rng.uniform(-1, 1, (1, 8)).astype(np.float32)
        mask = [255 if i % 3 == 0 else 0 for i in range(32)]
        got = shuffle_over(old, row, mask)
        want = old.copy()
        for p in range(32):
            if mask[p] != 255:
                want[p] = row[0]
        np.testing.assert_array_equal(got, want)

    def test_refusals_name_the_argument_at_the_kernel_line(self):
        src = np.zeros((32, 16), dtype=np.float32)
        for mode, words in (("mask", "is not modelled (a predicate"),
                            ("short", "shuffle_mask has 31 entries"),
                            ("entry", "shuffle_mask[31] = 40"),
                            ("dtype", "but dst is fp32"),
                            ("hbm", "dst is in HBM")):
            with self.subTest(mode=mode):
                refused(self, shuffle_with, src, mode, words=words)

    def test_a_partition_the_source_does_not_have_fails_the_call(self):
        with self.assertRaises(DynamicCheckFailure) as caught:
            shuffle_with(np.zeros((32, 16), dtype=np.float32), "missing_partition")
        self.assertIn("copies partition 1 of source", str(caught.exception))


class GatherFlattened(unittest.TestCase):
    def setUp(self):
        self.rng = np.random.default_rng(8)

    def test_indices_address_the_flattened_free_dims(self):
        data = self.rng.uniform(-10, 10, (64, 4, 6)).astype(np.float32)
        indices = self.rng.integers(0, 24, (64, 3, 5)).astype(np.uint32)
        got = gather_flat(data, indices)
        want = np.take_along_axis(data.reshape(64, -1), indices.reshape(64, -1), axis=-1)
        np.testing.assert_array_equal(got, want.reshape(indices.shape))
        got16 = gather_flat(data, indices, nl.bfloat16)
        np.testing.assert_array_equal(np.asarray(got16, dtype=np.float32),
                                      to_bf16(want).reshape(indices.shape))

    def test_an_index_past_the_row_fails_the_call_at_its_line(self):
        data = np.zeros((16, 10), dtype=np.float32)
        indices = np.zeros((16, 3), dtype=np.uint32)
        indices[2, 1] = 10
        with self.assertRaises(DynamicCheckFailure) as caught:
            gather_flat(data, indices)
        self.assertEqual(caught.exception.kind, "out_of_bounds")
        self.assertIn("[2, 1] = 10", str(caught.exception))

    def test_refusals_name_the_argument_at_the_kernel_line(self):
        data = np.zeros((128, 16), dtype=np.float32)
        indices = np.zeros((128, 8), dtype=np.uint32)
        for mode, words in (("int32", "must be uint32"),
                            ("mask", "is not modelled (a predicate"),
                            ("axis", "unknown keyword argument 'axis'")):
            with self.subTest(mode=mode):
                refused(self, gather_flat_with, data, indices, mode, words=words)


if __name__ == "__main__":
    unittest.main()

"""The gathers and the stream shuffle under the simulator (nisa.local_gather so far):
ncverify's own kernels, each compared with NumPy
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


if __name__ == "__main__":
    unittest.main()

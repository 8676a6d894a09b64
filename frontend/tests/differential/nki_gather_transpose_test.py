"""Differential cases, new dialect: nisa.dma_transpose of an indirect source (`src.ap(...,
vector_offset=indices, indirect_dim=0)`, the software-DGE gather-transpose) against a NumPy
statement of the 0.6 docstring (aws-neuron-sdk nki/api/nki/isa/__init__.py at 81ce03ae, "DMA
Indirect Transpose Constraints": `flat_indices = indices.T.flatten()[:src.shape[0]]; gathered =
src[flat_indices, :]; dst = gathered.T`, the permutation of the rank: [1, 0], [2, 1, 0],
[3, 1, 2, 0]), in 2-D and in the 4-D form nki-library's attention_tkg uses (blocks of a paged KV
cache gathered and transposed); and the documented constraints, each refused at the call's line.
Written against the documentation, not the implementation. Run by `python3 -m ncverify_nki.run`
(ctest label `frontend`)."""

import unittest

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
from diffharness import run_case
from targets import default, target

default("trn2")  # the indirect transpose is TRN2+

AXES = {2: (1, 0), 3: (2, 1, 0), 4: (3, 1, 2, 0)}


def documented(cache, indices):
    """The docstring's three lines, with the rank's permutation. `src` there is the view the
    access pattern makes: one row per index (its leading pair counts indices.shape[0]) over the
    rows of `cache`."""
    rows = indices.shape[0]
    flat = indices.T.flatten()[:rows]
    gathered = cache[flat]  # src[flat_indices, :] of the rows the pattern reads
    return np.transpose(gathered, AXES[gathered.ndim])


def load_indices(idx_hbm, dtype=nl.uint32):
    t = nl.ndarray(idx_hbm.shape, dtype=dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=idx_hbm)
    return t


@nki.jit
def gather_t2(src_hbm, idx_hbm, call=None, idx_dtype=nl.uint32):
    """Rows idx[r] of a [T, C] source, transposed into [C, R]; `call(dst, ap)` replaces the
    documented call (the refusals)."""
    _, c = src_hbm.shape
    r = idx_hbm.shape[0]
    out = nl.ndarray((c, r), dtype=src_hbm.dtype, buffer=nl.shared_hbm)
    ix = load_indices(idx_hbm, idx_dtype)
    dst = nl.ndarray((c, r), dtype=src_hbm.dtype, buffer=nl.sbuf)
    ap = src_hbm.ap(pattern=[[c, r], [1, c]], vector_offset=ix, indirect_dim=0)
    if call is None:
        nisa.dma_transpose(dst=dst, src=ap, axes=(1, 0))
    else:
        call(dst, ap)
    nisa.dma_copy(dst=out, src=dst)
    return out


@nki.jit
def gather_t4(src_hbm, idx_hbm):
    """attention_tkg's form: blocks idx[r] of a [T, 1, B, D] cache, [R, 1, B, D] transposed with
    (3, 1, 2, 0) into [D, 1, B, R] (software DGE named)."""
    _, _, b, d = src_hbm.shape
    r = idx_hbm.shape[0]
    out = nl.ndarray((d, 1, b, r), dtype=src_hbm.dtype, buffer=nl.shared_hbm)
    ix = load_indices(idx_hbm)
    dst = nl.ndarray((d, 1, b, r), dtype=src_hbm.dtype, buffer=nl.sbuf)
    ap = src_hbm.ap(pattern=[[b * d, r], [b * d, 1], [d, b], [1, d]], vector_offset=ix,
                    indirect_dim=0)
    nisa.dma_transpose(dst=dst, src=ap, axes=(3, 1, 2, 0), dge_mode=nisa.dge_mode.swdge)
    nisa.dma_copy(dst=out, src=dst)
    return out


class GatherTranspose(unittest.TestCase):
    def test_2d(self):
        def body(c):
            r = 16 * int(c.rng.integers(1, 9))
            t, cols = int(c.rng.integers(1, 300)), int(c.rng.integers(1, 129))
            src = c.floats((t, cols)).astype(np.float16)
            idx = c.ints((r, 1), 0, t - 1, np.uint32)
            c.check("gather-transpose [%d, %d] by %d rows" % (t, cols, r), gather_t2(src, idx),
                    documented(src, idx))
        run_case("nkg_2d", body)

    def test_4d_blocks(self):
        def body(c):
            r = 16 * int(c.rng.integers(1, 9))
            t, b, d = int(c.rng.integers(1, 100)), int(c.rng.integers(1, 9)), \
                int(c.rng.integers(1, 129))
            src = c.floats((t, 1, b, d)).astype(np.float16)
            idx = c.ints((r, 1), 0, t - 1, np.uint32)
            c.check("gather-transpose of blocks [%d, 1, %d, %d] by %d" % (t, b, d, r),
                    gather_t4(src, idx), documented(src, idx))
        run_case("nkg_4d", body)

    def test_refused(self):
        def body(c):
            src = c.floats((64, 32)).astype(np.float16)
            idx = c.ints((32, 1), 0, 63, np.uint32)
            hw = lambda dst, ap: nisa.dma_transpose(dst=dst, src=ap, dge_mode=nisa.dge_mode.hwdge)  # noqa: E501,E731
            skip = lambda dst, ap: nisa.dma_transpose(dst=dst, src=ap, oob_mode=nisa.oob_mode.skip)  # noqa: E501,E731
            for call, arg in ((hw, "dge_mode=hwdge"), (skip, "oob_mode")):
                c.refused(gather_t2, (src, idx), {"call": call}, "nisa.dma_transpose", arg, call)
            plain = lambda dst, ap: nisa.dma_transpose(dst=dst, src=ap)  # noqa: E731
            for what, s, i, kw in (
                    ("a 2-byte dtype", src.astype(np.float32), idx, {}),
                    ("a multiple of 16", src, c.ints((24, 1), 0, 63, np.uint32), {}),
                    ("uint32", src, idx.astype(np.int32), {"idx_dtype": nl.int32})):
                # (src.shape[-1] <= 128 is dst's partition count: an SBUF tile's limit first)
                c.refused(gather_t2, (s, i), dict(kw, call=plain), "nisa.dma_transpose", what,
                          plain)
            with target("trn1"):
                c.refused(gather_t2, (src, idx), {"call": plain}, "nisa.dma_transpose",
                          "NeuronCore-v3", plain)
        run_case("nkg_refused", body)


if __name__ == "__main__":
    unittest.main()

"""Tensor views of the new API (`import nki`, NKI 0.2-0.6) under the simulator: indexing rules,
`nl.ds`, `.ap(...)` access patterns, the 0.5 NkiTensor view methods and attributes, each compared
with NumPy values computed here from the reference's definitions (the access-pattern deep dive:
element (i, ...) is storage[offset + sum(step_k * i_k)]); what the IR cannot address is refused at
the kernel's line with the reason. Run by `python3 -m ncverify_nki.run` (ctest label
`conformance`)."""

import unittest

import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl
from ncverify_nki.simulate import KernelNotTraced

SEEN = {}  # attributes a kernel read while it was traced


def ap_golden(storage, pattern, offset):
    """The deep dive's loop: flatten the storage, read offset + sum(step * index)."""
    flat = storage.reshape(-1)
    shape = [n for _, n in pattern]
    idx = np.full(shape, offset, dtype=np.int64)
    for k, (step, n) in enumerate(pattern):
        ax = [1] * len(shape)
        ax[k] = n
        idx = idx + (np.arange(n) * step).reshape(ax)
    return flat[idx]


def load(a, shape, dtype=nl.float32):
    t = nl.ndarray(shape, dtype=dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a)
    return t


def store(t, shape):
    out = nl.ndarray(shape, dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def ap_on_chip(a, pattern, offset, out_shape):
    """An SBUF tile copied through t.ap(pattern, offset) by the Vector engine."""
    t = load(a, a.shape)
    u = nl.ndarray(out_shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(u, t.ap(pattern, offset=offset))
    return store(u, out_shape)


@nki.jit
def ap_from_hbm(a, pattern, offset, out_shape):
    """An HBM tensor read through a.ap(pattern, offset) by a DMA."""
    u = nl.ndarray(out_shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=a.ap(pattern=pattern, offset=offset))
    return store(u, out_shape)


@nki.jit
def ap_chained(a):
    """offset=None inherits the view's offset; an inner .ap has no effect on an outer one."""
    t = load(a, (128, 64))
    s = t[:, 8:40]
    u = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(u, s.ap([[64, 128], [1, 16]]))  # starts at s.offset = 8
    v = nl.ndarray((128, 16), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(v, t.ap([[64, 128], [2, 32]]).ap([[64, 128], [1, 16]], offset=4))
    w = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(w[:, 0:16], u)
    nisa.tensor_copy(w[:, 16:32], v)
    return store(w, (128, 32))


@nki.jit
def ds_in_loop(a):
    """nl.ds with a loop variable start: each iteration doubles one 16-column block."""
    t = load(a, (128, 64))
    u = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    for i in nl.affine_range(4):
        nisa.tensor_scalar(u[:, nl.ds(i * 16, 16)], t[:, nl.ds(i * 16, 16)], nl.multiply,
                           2.0)
    return store(u, (128, 64))


@nki.jit
def hbm_ds_rows(a):
    """An HBM tensor's rows picked by nl.ds with a loop variable, stored in reverse blocks."""
    out = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(4):
        t = nl.ndarray((32, 32), dtype=nl.float32, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a[nl.ds(i * 32, 32), :])
        nisa.dma_copy(dst=out[nl.ds(96 - i * 32, 32), :], src=t)
    return out


@nki.jit
def indexing_rules(a, h):
    """The __getitem__ rules: an on-chip int on dim 0 keeps a size-1 partition dim; results stay
    2-D on chip; an HBM int drops the dim; negative indices, step slices and `...`."""
    t = load(a, (128, 64))
    SEEN["row"] = t[3].shape
    SEEN["col"] = t[:, 5].shape
    SEEN["hbm_row"] = h[2].shape
    SEEN["hbm_elem"] = h[2, 3].shape
    SEEN["ellipsis"] = t[..., 0:8].shape
    u = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(u[:, 0:16], t[:, 0:64:4])  # step slice
    nisa.tensor_copy(u[:, 16:17], t[:, -1])  # negative index, kept [128, 1]
    nisa.tensor_copy(u[:, 17:32], t[..., -15:])  # `...` and a negative bound
    r = nl.ndarray((1, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=r, src=h[2])  # an HBM row: [64]
    o = store(u, (128, 32))
    o2 = nl.ndarray((1, 64), dtype=nl.float32, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=o2, src=r)
    return o, o2


@nki.jit
def view_methods(a):
    """slice, select, permute, expand_dim, broadcast, squeeze_dim, flatten_dims, reshape_dim,
    reshape and rearrange on a [128, 4, 8] SBUF tile, each copied out."""
    t = load(a, (128, 4, 8))
    SEEN["attrs"] = (t.shape, t.strides, t.offset, t.ndim, t.size, t.dtype == nl.float32,
                     t.buffer == nl.sbuf, t.is_contiguous(), t.is_indirect(),
                     t.get_pattern())
    s = t.slice(1, 1, 4, 2)  # [128, 2, 8]
    SEEN["slice"] = (s.shape, s.strides, s.offset, s.get_pattern(), s.is_contiguous())
    p = t.permute((0, 2, 1))  # [128, 8, 4]
    SEEN["permute"] = (p.shape, p.strides)
    e = t.select(1, 2).expand_dim(1)  # [128, 1, 8]
    b = e.broadcast(1, 3)  # [128, 3, 8], step 0
    SEEN["broadcast"] = (b.shape, b.strides)
    q = e.squeeze_dim(1)  # [128, 8]
    f = t.flatten_dims(1, 2)  # [128, 32]
    g = f.reshape_dim(1, (4, -1))  # back to [128, 4, 8]
    r = t.reshape((128, 32))
    w = t.rearrange(('p', 'h', 'w'), ('p', 'w', 'h'))
    SEEN["flat"] = (f.shape, f.strides, g.shape, r.shape, w.shape)
    outs = []
    for part in (s, p, b, q, f, g, r, w):
        u = nl.ndarray(part.shape, dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(u, part)
        outs.append(store(u, part.shape))
    return tuple(outs)


@nki.jit
def more_views(a, h):
    """rearrange with groups on both sides, an HBM argument merged by reshape, the attributes of
    HBM tensors and of an .ap view, vector_select of a 3-D HBM tensor."""
    t = load(a, (128, 64))
    r = t.rearrange(('p', ('h', 'w')), ('p', 'w', 'h'), {'h': 4})  # [128, 16, 4]
    try:
        t.rearrange(('p', ('h', 'w')), ('p', ('w', 'h')), {'h': 4})
        SEEN["merge_permuted"] = "made"
    except Exception as e:  # merging permuted dims is not a view (flatten_dims: contiguous)
        SEEN["merge_permuted"] = str(e)
    SEEN["rearrange"] = (r.shape, r.strides, r.is_contiguous())
    u = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(u.reshape_dim(1, (16, 4)), t.reshape_dim(1, (4, 16)).permute((0, 2, 1)))
    m = h.reshape((8 * 16, 32))  # [8, 16, 32] merged
    v = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=v, src=m)
    p = load(a, (128, 64)).ap([[64, 128], [2, 8], [16, 3]], offset=1)
    SEEN["hbm"] = (h.buffer == nl.hbm, h.strides, m.shape, m.strides, h[3].offset,
                   p.get_pattern(), p.offset, p.shape)
    w = nl.ndarray((128, 8, 3), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(w, p)
    return store(u, (128, 64)), store(v, (128, 32)), store(w, (128, 8, 3))


@nki.jit
def pooled(x, k):
    """A k x k max pool of x [C, H, W] as one 5-D .ap view of the SBUF copy
    [C, H/k, W/k, k, k] reduced over its last two dims (the pattern of the deep dive's pooling
    examples); the buffer's H and W dims are split to make it one access. Then a sum over a
    dim merged by flatten_dims (two storage dims of the access)."""
    c, h, w = x.shape
    t = nl.ndarray((c, h, w), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    view = t.ap([[h * w, c], [k * w, h // k], [k, w // k], [w, k], [1, k]])
    m = nl.ndarray((c, h // k, w // k), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(m, nl.maximum, view, axis=(3, 4))
    s = nl.ndarray((c, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_reduce(s, nl.add, m.flatten_dims(1, 2), axis=1)
    return store(m, (c, h // k, w // k)), store(s, (c, 1))


@nki.jit
def gather_rows(a, idx, how):
    """Rows of an HBM tensor picked at run time by an int32 column in SBUF."""
    offsets = nl.ndarray((16, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=offsets, src=idx)
    u = nl.ndarray((16, 32), dtype=nl.float32, buffer=nl.sbuf)
    if how == "vector_select":
        src = a.vector_select(0, offsets)
        SEEN["indirect"] = (src.is_indirect(), src.shape)
    else:
        src = a.ap([[32, 16], [1, 32]], 0, vector_offset=offsets, indirect_dim=0)
    nisa.dma_copy(dst=u, src=src)
    return store(u, (16, 32))


@nki.jit
def scalar_row(a, idx, how):
    """One row of an HBM tensor at a run-time index held in a (1, 1) SBUF tensor."""
    i = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=i, src=idx)
    u = nl.ndarray((1, 32), dtype=nl.float32, buffer=nl.sbuf)
    if how == "select":
        src = a.select(0, i)  # a is [8, 1, 32]: the row left is [1, 32]
    else:
        src = a.ap([[32, 1], [1, 32]], offset=0, scalar_offset=i, indirect_dim=0)
    nisa.dma_copy(dst=u, src=src)
    return store(u, (1, 32))


@nki.jit
def scalar_dynamic_dma(a):
    """The deep dive's example: A [512, 512]; rows 3*128.. read at a run-time offset on dim 0."""
    batch_idx = nl.ndarray((1, 1), nl.int32, buffer=nl.sbuf)
    nisa.memset(batch_idx, value=3 * 128)
    result = nl.ndarray((128, 256), a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(src=a.ap(pattern=[[512, 128], [1, 256]], offset=0, scalar_offset=batch_idx,
                           indirect_dim=0), dst=result[...])
    return result


@nki.jit
def batch_select(a, idx):
    """The deep dive's scalar_dynamic_select: a [4, 128, 64] in HBM, the batch at a run-time
    index; then a column block of an SBUF tile at a run-time index (a free dim)."""
    i = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
    nisa.dma_copy(dst=i, src=idx)
    t = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a.select(0, i))
    u = nl.ndarray((128, 1), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(u, t.reshape((128, 64)).select(1, i).expand_dim(1))
    return store(t, (128, 64)), store(u, (128, 1))


@nki.jit
def split_views(a):
    """Views that step twice through one storage dim of an SBUF buffer: reshape_dim of a free
    dim, then an .ap with two pairs in one row (the buffers' dims are split, refine.py)."""
    t = load(a, (128, 64))
    u = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(u.reshape_dim(1, (8, 4)), t[:, 0:32].reshape_dim(1, (4, 8)).permute((0, 2, 1)))
    v = nl.ndarray((128, 16, 4), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(v, t.ap([[64, 128], [1, 16], [16, 4]]))
    w = nl.ndarray((128, 2, 32), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(w, t.reshape((128, 2, 32)))
    q = load(a, (128, 64))
    held = q[:, 20:28]  # a view the kernel holds while q's dim is split
    rows = q[:, 17:64:16]  # one element of each row of 16 from the second on
    nisa.tensor_copy(w.reshape((128, 4, 16)), q.reshape_dim(1, (4, 16)))
    x = nl.ndarray((128, 11), dtype=nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(x[:, 0:8], held)
    nisa.tensor_copy(x[:, 8:11], rows)
    return (store(u, (128, 32)), store(v, (128, 16, 4)), store(w, (128, 2, 32)),
            store(x, (128, 11)))


@nki.jit
def scratch_split(a):
    """A private HBM scratch tensor read through a reshape that splits its free dim."""
    s = nl.ndarray((128, 64), dtype=nl.float32, buffer=nl.private_hbm)
    nisa.dma_copy(dst=s, src=a)
    t = nl.ndarray((128, 16, 4), dtype=nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=s.reshape((128, 4, 16)).permute((0, 2, 1)))
    SEEN["scratch"] = s.buffer == nl.private_hbm
    return store(t, (128, 16, 4))


@nki.jit
def argument_blocks(a):
    """A kernel argument [256, 64] viewed as [2, 128, 64] (a reshape that splits its dim, which
    is not an access) and indexed by a loop variable: each block is one access again."""
    t = nl.ndarray((128, 2, 64), dtype=nl.float32, buffer=nl.sbuf)
    for k in nl.affine_range(2):
        nisa.dma_copy(dst=t[:, k, :], src=a.reshape((2, 128, 64)).permute((1, 0, 2))[:, k, :])
    SEEN["flat"] = (a.reshape((2, 128, 64)).strides, a.reshape((2, 128, 64))[1].offset)
    return store(t, (128, 2, 64))


@nki.jit
def refused(a, what):
    t = load(a, (128, 64))
    u = nl.ndarray((128, 32), dtype=nl.float32, buffer=nl.sbuf)
    if what == "every_other_partition":
        nisa.tensor_copy(u[0:64, :], t.ap([[128, 64], [1, 32]]))
    elif what == "dtype":
        nisa.tensor_copy(u, t.ap([[64, 128], [1, 32]], dtype=nl.int32))
    elif what == "view":
        nisa.tensor_copy(u, t.view(nl.bfloat16))
    elif what == "split_hbm_argument":  # an argument's dim is split unless an access straddles
        nisa.dma_copy(dst=u, src=a[:, 8:40])
        nisa.dma_copy(dst=u, src=a.reshape((128, 4, 16))[:, :, 0:8])
    elif what == "split_straddled":
        nisa.tensor_copy(u, t[:, 8:40])
        nisa.tensor_copy(u.reshape_dim(1, (4, 8)), t.reshape((128, 4, 16))[:, :, 0:8])
    elif what == "pair_across_rows":
        nisa.tensor_copy(u, t.ap([[64, 128], [1, 32]], offset=48))  # columns 48..79
    elif what == "vector_offset_on_chip":
        i = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(i, 0)
        nisa.tensor_copy(u, t.ap([[64, 128], [1, 32]], vector_offset=i, indirect_dim=0))
    elif what == "scalar_on_partitions":
        i = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(i, 0)
        nisa.tensor_copy(u, t.select(0, i))
    elif what == "tensor_index":
        i = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(i, 0)
        nisa.dma_copy(dst=u, src=a[i, 0:32])
    elif what == "negative_step":
        nisa.tensor_copy(u, t[:, 63:0:-2])
    elif what == "slice_across_split_rows":  # t's dim 1 split into (4, 16) by the .ap first
        v = nl.ndarray((128, 4, 4), dtype=nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(v, t.ap([[64, 128], [16, 4], [1, 4]]))
        nisa.tensor_copy(u[:, 0:20], t[:, 8:28])
    elif what == "across_split_rows":
        # a permuted reshape (not one contiguous run) splits t's dim into rows of 16
        nisa.tensor_copy(u.reshape_dim(1, (16, 2)),
                         t[:, 0:32].reshape_dim(1, (2, 16)).permute((0, 2, 1)))
        nisa.tensor_copy(u[:, 0:8], t.ap([[64, 128], [2, 8]], offset=5))  # 5..19: across 16
    elif what == "tensor_indirection":
        i = nl.ndarray((128, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(i, 0)
        nisa.tensor_copy(u, t.indirect(i, 32))
    elif what == "offset_scale_undocumented":  # a stride of 64, sizes after it of 48
        i = nl.ndarray((1, 1), dtype=nl.int32, buffer=nl.sbuf)
        nisa.memset(i, 0)
        nisa.dma_copy(dst=u, src=a[:, 0:48].ap([[64, 128], [1, 32]], 0, scalar_offset=i,
                                                indirect_dim=0))
    elif what == "partition_broadcast":
        nisa.tensor_copy(u, t[0:1, 0:32].broadcast(0, 128))
    elif what == "permute_partition":
        nisa.tensor_copy(u, t[0:32, 0:128 // 4].permute((1, 0)))
    return store(u, (128, 32))


class Views(unittest.TestCase):
    def setUp(self):
        self.a = np.arange(128 * 64, dtype=np.float32).reshape(128, 64)

    def test_ap_strided_free_dim_on_chip(self):
        pattern = [[64, 128], [2, 16]]
        r = ap_on_chip(self.a, pattern, 8, (128, 16))
        np.testing.assert_array_equal(r, ap_golden(self.a, pattern, 8))

    def test_ap_permutes_and_broadcasts_free_dims(self):
        a = self.a.reshape(128, 4, 16)
        pattern = [[64, 128], [1, 8], [16, 4]]  # the two free dims swapped, half of each row
        r = ap_on_chip(a, pattern, 3, (128, 8, 4))
        np.testing.assert_array_equal(r, ap_golden(a, pattern, 3))
        pattern = [[64, 128], [0, 3], [1, 16]]  # step 0: one row repeated
        r = ap_on_chip(a, pattern, 32, (128, 3, 16))
        np.testing.assert_array_equal(r, ap_golden(a, pattern, 32))

    def test_ap_over_whole_hbm_rows_and_an_offset_past_a_row(self):
        a = self.a.reshape(4, 32, 64)
        pattern = [[64, 64], [1, 64]]  # 64 rows across dims 0 and 1
        r = ap_from_hbm(a, pattern, 64 * 32, (64, 64))
        np.testing.assert_array_equal(r, ap_golden(a, pattern, 64 * 32))
        pattern = [[128, 16], [1, 32]]  # every other row, 32 columns from column 16 of row 33
        r = ap_from_hbm(a, pattern, 33 * 64 + 16, (16, 32))
        np.testing.assert_array_equal(r, ap_golden(a, pattern, 33 * 64 + 16))

    def test_ap_over_rows_of_two_hbm_dims_not_whole_ones(self):
        # nki-library rmsnorm_tkg at B = 63, S = 32: 1008 of the 2016 rows of a [B, S, H] input
        # per program. 21 rows of a [7, 6, 16] tensor from row 21 are no run of whole rows of
        # dim 1 (6): the tensor is declared with dims 0 and 1 merged ([42, 16]).
        a = np.arange(7 * 6 * 16, dtype=np.float32).reshape(7, 6, 16)
        for pattern, offset, shape in (([[16, 21], [1, 16]], 21 * 16, (21, 16)),
                                       ([[16, 21], [1, 8], [8, 2]], 3 * 16, (21, 8, 2)),
                                       ([[32, 10], [1, 16]], 16, (10, 16))):
            with self.subTest(pattern=pattern, offset=offset):
                r = ap_from_hbm(a, pattern, offset, shape)
                np.testing.assert_array_equal(r, ap_golden(a, pattern, offset))

    def test_ap_offset_none_inherits_and_chained_ap_is_overridden(self):
        r = ap_chained(self.a)
        np.testing.assert_array_equal(r[:, 0:16], self.a[:, 8:24])
        np.testing.assert_array_equal(r[:, 16:32], self.a[:, 4:20])

    def test_ds_with_a_loop_variable(self):
        np.testing.assert_array_equal(ds_in_loop(self.a), self.a * 2)
        r = hbm_ds_rows(self.a[:, 0:32].copy())
        want = np.concatenate([self.a[96:128, 0:32], self.a[64:96, 0:32], self.a[32:64, 0:32],
                               self.a[0:32, 0:32]])
        np.testing.assert_array_equal(r, want)

    def test_indexing_rules(self):
        h = np.arange(8 * 64, dtype=np.float32).reshape(8, 64)
        o, o2 = indexing_rules(self.a, h)
        self.assertEqual(SEEN["row"], (1, 64))
        self.assertEqual(SEEN["col"], (128, 1))
        self.assertEqual(SEEN["hbm_row"], (64,))
        self.assertEqual(SEEN["hbm_elem"], (1,))
        self.assertEqual(SEEN["ellipsis"], (128, 8))
        np.testing.assert_array_equal(o[:, 0:16], self.a[:, 0:64:4])
        np.testing.assert_array_equal(o[:, 16], self.a[:, -1])
        np.testing.assert_array_equal(o[:, 17:32], self.a[:, -15:])
        np.testing.assert_array_equal(o2[0], h[2])

    def test_view_methods_and_attributes(self):
        a = self.a[:, 0:32].copy().reshape(128, 4, 8)
        r = view_methods(a)
        self.assertEqual(SEEN["attrs"], ((128, 4, 8), (32, 8, 1), 0, 3, 128 * 32, True, True,
                                         True, False, [[32, 128], [8, 4], [1, 8]]))
        self.assertEqual(SEEN["slice"], ((128, 2, 8), (32, 16, 1), 8,
                                         [[32, 128], [16, 2], [1, 8]], False))
        self.assertEqual(SEEN["permute"], ((128, 8, 4), (32, 1, 8)))
        self.assertEqual(SEEN["broadcast"], ((128, 3, 8), (32, 0, 1)))
        self.assertEqual(SEEN["flat"], ((128, 32), (32, 1), (128, 4, 8), (128, 32), (128, 8, 4)))
        want = [a[:, 1:4:2, :], a.transpose(0, 2, 1), np.repeat(a[:, 2:3, :], 3, axis=1),
                a[:, 2, :], a.reshape(128, -1), a, a.reshape(128, -1), a.transpose(0, 2, 1)]
        self.assertEqual(len(r), len(want))
        for got, w in zip(r, want):
            np.testing.assert_array_equal(got, w)

    def test_rearrange_merges_and_attributes_of_hbm_and_ap_views(self):
        h = np.arange(8 * 16 * 32, dtype=np.float32).reshape(8, 16, 32)
        u, v, w = more_views(self.a, h)
        self.assertEqual(SEEN["rearrange"], ((128, 16, 4), (64, 1, 16), False))
        self.assertIn("not contiguous in memory", SEEN["merge_permuted"])
        self.assertEqual(SEEN["hbm"], (True, (512, 32, 1), (128, 32), (32, 1), 1536,
                                       [[64, 128], [2, 8], [16, 3]], 1, (128, 8, 3)))
        np.testing.assert_array_equal(
            u, self.a.reshape(128, 4, 16).transpose(0, 2, 1).reshape(128, 64))
        np.testing.assert_array_equal(v, h.reshape(128, 32))
        np.testing.assert_array_equal(w, ap_golden(self.a, [[64, 128], [2, 8], [16, 3]], 1))

    def test_a_pooling_pattern_and_a_reduction_over_merged_dims(self):
        x = np.random.RandomState(0).standard_normal((16, 8, 12)).astype(np.float32)
        m, s = pooled(x, 2)
        want = x.reshape(16, 4, 2, 6, 2).max(axis=(2, 4))
        np.testing.assert_array_equal(m, want)
        np.testing.assert_allclose(s[:, 0], want.reshape(16, -1).sum(axis=1), rtol=1e-5)

    def test_rows_gathered_at_run_time(self):
        a = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
        idx = np.array([[5], [0], [63], [7]] * 4, dtype=np.int32)
        np.testing.assert_array_equal(gather_rows(a, idx, "vector_select"), a[idx[:, 0]])
        self.assertEqual(SEEN["indirect"], (True, (16, 32)))
        np.testing.assert_array_equal(gather_rows(a, idx, "ap"), a[idx[:, 0]])

    def test_a_scalar_offset_picks_one_row(self):
        a = np.arange(8 * 32, dtype=np.float32).reshape(8, 1, 32)
        idx = np.array([[6]], dtype=np.int32)
        np.testing.assert_array_equal(scalar_row(a, idx, "select"), a[6])
        np.testing.assert_array_equal(scalar_row(a.reshape(8, 32), idx, "ap"), a[6])

    def test_a_scalar_offset_shared_by_many_rows(self):
        a = np.arange(512 * 512, dtype=np.float32).reshape(512, 512)
        np.testing.assert_array_equal(scalar_dynamic_dma(a), a[384:512, 0:256])
        b = np.arange(4 * 128 * 64, dtype=np.float32).reshape(4, 128, 64)
        t, u = batch_select(b, np.array([[3]], dtype=np.int32))
        np.testing.assert_array_equal(t, b[3])
        np.testing.assert_array_equal(u[:, 0], b[3][:, 3])

    def test_views_stepping_twice_through_one_storage_dim(self):
        u, v, w, x = split_views(self.a)
        np.testing.assert_array_equal(x, np.concatenate([self.a[:, 20:28], self.a[:, 17:64:16]],
                                                        axis=1))
        np.testing.assert_array_equal(
            u, self.a[:, 0:32].reshape(128, 4, 8).transpose(0, 2, 1).reshape(128, 32))
        np.testing.assert_array_equal(v, ap_golden(self.a, [[64, 128], [1, 16], [16, 4]], 0))
        np.testing.assert_array_equal(w, self.a.reshape(128, 2, 32))  # written twice, same

    def test_a_split_argument_indexed_back_to_an_access(self):
        a = np.arange(256 * 64, dtype=np.float32).reshape(256, 64)
        r = argument_blocks(a)
        self.assertEqual(SEEN["flat"], ((128 * 64, 64, 1), 128 * 64))
        np.testing.assert_array_equal(r, a.reshape(2, 128, 64).transpose(1, 0, 2))

    def test_a_private_hbm_dim_split(self):
        r = scratch_split(self.a)
        self.assertTrue(SEEN["scratch"])
        np.testing.assert_array_equal(r, self.a.reshape(128, 4, 16).transpose(0, 2, 1))

    def test_what_the_ir_cannot_address_is_refused_with_the_reason(self):
        cases = {
            "every_other_partition": "reading every other partition is not allowed",
            "dtype": "no reinterpretation",
            "view": "no reinterpretation",
            "split_hbm_argument": "the earlier access a[:, 8:+32] is not one access",
            "split_straddled": "the earlier access t[:, 8:+32] is not one access",
            "pair_across_rows": "pair 1 [1, 32]",
            "vector_offset_on_chip": "never addressed at run time",
            "scalar_on_partitions": "free dims only",
            "tensor_index": "the new API indexes with integers, slices and nl.ds",
            "partition_broadcast": "cannot be broadcast by a view",
            "negative_step": "a slice step must be a positive integer",
            "across_split_rows": "pair 1 [2, 8]",
            "slice_across_split_rows": "(elements 8..27, step 1, in rows of 16) neither covers "
                                       "whole rows",
            "tensor_indirection": "Tensor Indirection, NeuronCore-v4) is not modelled",
            "offset_scale_undocumented": "which one NKI scales by is not documented",
            "permute_partition": "keeps its partition dim first",
        }
        for what, words in cases.items():
            with self.subTest(what=what):
                with self.assertRaises(KernelNotTraced) as caught:
                    refused(self.a, what)
                self.assertIn("views_test.py:", str(caught.exception))
                self.assertIn(words, str(caught.exception))


def _row_sums(x):
    n, f = x.shape
    t = nl.ndarray((n, f), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x)
    s = nl.ndarray((n, 1), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_reduce(dst=s, op=nl.add, data=t, axis=1)
    out = nl.ndarray((n, 1), dtype=x.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=s)
    return out


@nki.jit
def row_sums_reshaped(x):
    """Row sums of x [2 * m, F] returned as [2, m, 1]: a reshape of the whole [2 * m, 1] output
    (nki-library's cascaded_max returns `max_values.reshape(out_shape)`)."""
    return _row_sums(x).reshape((2, x.shape[0] // 2, 1))


@nki.jit
def row_sums_part(x):
    """A view of part of the output returned."""
    return _row_sums(x)[0:2]


class ReturnedViews(unittest.TestCase):
    def test_a_reshaped_output_comes_back_in_its_shape(self):
        x = np.random.default_rng(5).standard_normal((6, 8)).astype(np.float32)
        got = row_sums_reshaped(x)
        self.assertEqual(got.shape, (2, 3, 1))
        np.testing.assert_allclose(got, x.sum(1, dtype=np.float64).reshape(2, 3, 1), rtol=1e-6)

    def test_a_part_of_an_output_is_not_an_array_to_hand_back(self):
        from ncverify_nki.simulate import SimulationError
        x = np.ones((6, 8), np.float32)
        with self.assertRaises(SimulationError) as caught:
            row_sums_part(x)
        self.assertIn("not all of its 6 elements", str(caught.exception))


if __name__ == "__main__":
    unittest.main()

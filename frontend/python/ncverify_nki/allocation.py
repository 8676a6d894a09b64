"""Direct allocation (`buffer=ncc.sbuf.mod_alloc(...)`, `ncc.psum.mod_alloc(...)`, the
allocated kernels' API) mapped to explicit placements: the tensor is placed at the given
partition and byte offset, and each NKI block dim with `num_free_tiles=(n, ...)` keeps n
physical tiles, the block index taken modulo n (the rotation the allocator performs)."""

from . import errors
from .expr import Lin

PSUM_BANK_BYTES = 2048  # per partition: 8 banks x 2 KiB = 16 KiB of PSUM (ARCH2; NKILIB)


class ModAlloc:
    def __init__(self, memory, base_partition=0, base_addr=0, base_bank=None, num_tiles=None):
        # (through the instance dict, as program.Tensor.__init__: nki-library's allocators make
        # one per tensor)
        self.__dict__.update(memory=memory, base_partition=base_partition, base_addr=base_addr,
                             base_bank=base_bank,
                             num_tiles=tuple(num_tiles) if num_tiles else None)


class CallableAlloc:
    def __init__(self, memory, func):
        self.__dict__.update(memory=memory, func=func)  # (as ModAlloc.__init__)


def _callable(alloc, tensor, nblock):
    """`alloc(func)`: func(idx=block index tuple, pdim_size=, fdim_size=) gives each block's place
    (PSUM: bank, partition, byte in the bank; SBUF: partition, byte). The blocks must be evenly
    spaced (an affine function of the block index); the tensor then becomes one buffer whose
    free dim runs from block 0's first byte to the last block's last byte, block b at b * stride
    (the block dims fold into the free dim: see program.Printer)."""
    import itertools

    from .program import DTYPE_BYTES

    from . import trace

    ev = trace.current().evaluate
    counts = []
    for d in [ev(x) for x in tensor.shape[1:1 + nblock]]:
        if not d.is_const():
            raise errors.NkiError("a function allocator needs the block counts known; fix the "
                                  "params they depend on with --param")
        counts.append(d.const)
    free = [ev(x) for x in tensor.shape[1 + nblock:]]
    if len(free) != 1 or not free[0].is_const():  # no block dims: one call, idx=()
        raise errors.NkiError("a function allocator is modelled for [blocks..., P, F] tensors "
                              "with a known F")
    p = ev(tensor.shape[0])
    place = {}
    for idx in itertools.product(*[range(c) for c in counts]):
        got = alloc.func(idx=idx, pdim_size=p.const if p.is_const() else p,
                         fdim_size=free[0].const)
        got = tuple(int(x) for x in got)
        if alloc.memory.mem == "psum":
            bank, part, byte = (got + (0, 0))[:3]
            place[idx] = (part, bank * PSUM_BANK_BYTES + byte)
        else:
            part, byte = (got + (0,))[:2]
            place[idx] = (part, byte)
    base = place[(0,) * nblock]
    elem = DTYPE_BYTES[tensor.dtype]
    strides = []
    for k in range(nblock):
        one = tuple(1 if j == k else 0 for j in range(nblock))
        strides.append(place[one][1] - base[1] if counts[k] > 1 else 0)
    for idx, (part, byte) in place.items():
        want = base[1] + sum(i * st for i, st in zip(idx, strides))
        if part != base[0] or byte != want:
            raise errors.NkiError("the allocator places the blocks of '%s' unevenly (block %s at "
                                  "partition %d byte %d); the model needs an affine placement" %
                                  (tensor.name, idx, part, byte))
    tile_bytes = free[0].const * elem
    if any(st % elem or (0 < st < tile_bytes) for st in strides) or any(st < 0 for st in strides):
        raise errors.NkiError("the allocator's blocks of '%s' overlap or are misaligned" %
                              tensor.name)
    tensor.logical = list(tensor.shape)
    tensor.fold = {1 + k: strides[k] // elem for k in range(nblock)}
    span = free[0].const + sum((c - 1) * st // elem for c, st in zip(counts, strides))
    tensor.shape = [p, Lin.of(span)]
    tensor.placement = (Lin.of(base[0]), Lin.of(base[1]))


def apply(alloc, tensor, par_pos):
    if isinstance(alloc, CallableAlloc):
        return _callable(alloc, tensor, par_pos)
    nblock = par_pos  # block dims are the NKI dims before par_dim: storage dims 1..nblock
    # Counts beyond the block dims describe tiles already in the tensor's free dims (the
    # allocated tutorial kernels pass num_buffers for a [P, n, F] tensor): nothing to rotate.
    n = tuple(alloc.num_tiles or ())[:nblock]
    for k, count in enumerate(n):
        s = 1 + k
        tensor.mods[s] = int(count)
        tensor.shape[s] = Lin.of(int(count))
    offset = Lin.of(0 if alloc.base_addr is None else alloc.base_addr)
    if alloc.memory.mem == "psum" and not (alloc.base_bank is None and
                                           isinstance(alloc.base_addr, Lin)):
        offset = Lin.of((0 if alloc.base_bank is None else alloc.base_bank) * PSUM_BANK_BYTES)
    # (a PSUM byte offset that varies with loop variables, bank-aligned for every value, comes
    # as base_addr: newapi/language.py _address)
    if alloc.memory.mem == "psum":
        from .program import DTYPE_BYTES

        f = Lin.of(1)
        for d in tensor.shape[1 + nblock:]:
            f = f.mul(d)
        if nblock and f.is_const() and f.const * DTYPE_BYTES[tensor.dtype] < PSUM_BANK_BYTES:
            # one bank per tile: pad the last free dim to a bank so tiles keep their banks
            last = len(tensor.shape) - 1
            tensor.logical = list(tensor.shape)
            tensor.shape[last] = Lin.of(PSUM_BANK_BYTES // DTYPE_BYTES[tensor.dtype] //
                                        (f.const // tensor.shape[last].const))
    tensor.placement = (Lin.of(0 if alloc.base_partition is None else alloc.base_partition), offset)

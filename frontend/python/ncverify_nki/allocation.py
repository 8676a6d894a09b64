"""Direct allocation (`buffer=ncc.sbuf.mod_alloc(...)`, `ncc.psum.mod_alloc(...)`, the
allocated kernels' API) mapped to explicit placements: the tensor is placed at the given
partition and byte offset, and each NKI block dim with `num_free_tiles=(n, ...)` keeps n
physical tiles, the block index taken modulo n (the rotation the allocator performs)."""

from . import errors
from .expr import Lin

PSUM_BANK_BYTES = 2048  # per partition: 8 banks x 2 KiB = 16 KiB of PSUM (ARCH2; NKILIB)


class ModAlloc:
    def __init__(self, memory, base_partition=0, base_addr=0, base_bank=None, num_tiles=None):
        self.memory = memory
        self.base_partition = base_partition
        self.base_addr = base_addr
        self.base_bank = base_bank
        self.num_tiles = tuple(num_tiles) if num_tiles else None


class CallableAlloc:
    def __init__(self, memory, func):
        self.memory, self.func = memory, func


def apply(alloc, tensor, par_pos):
    if isinstance(alloc, CallableAlloc):
        raise errors.NkiError("an allocator given as a Python function is not modelled (its "
                              "addresses depend on concrete block indices); use mod_alloc")
    nblock = par_pos  # block dims are the NKI dims before par_dim: storage dims 1..nblock
    # Counts beyond the block dims describe tiles already in the tensor's free dims (the
    # allocated tutorial kernels pass num_buffers for a [P, n, F] tensor): nothing to rotate.
    n = tuple(alloc.num_tiles or ())[:nblock]
    for k, count in enumerate(n):
        s = 1 + k
        tensor.mods[s] = int(count)
        tensor.shape[s] = Lin.of(int(count))
    offset = Lin.of(0 if alloc.base_addr is None else alloc.base_addr)
    if alloc.memory.mem == "psum":
        offset = Lin.of((0 if alloc.base_bank is None else alloc.base_bank) * PSUM_BANK_BYTES)
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

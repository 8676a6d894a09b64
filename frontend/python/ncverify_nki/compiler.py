"""Stand-in for `neuronxcc.nki.compiler` (ncc): decorators that change compilation only, and the
direct-allocation API (allocation.py)."""

from .allocation import CallableAlloc, ModAlloc
from .kernel_api import pass_through
from .sealed import SealedClass

skip_middle_end_transformations = pass_through
force_auto_alloc = pass_through
enable_stack_allocator = pass_through
disable_stack_allocator = pass_through


class _Memory:
    def __init__(self, name):
        from . import language

        self.memory = getattr(language, name)

    def mod_alloc(self, base_addr=0, base_partition=0, num_par_tiles=None, num_free_tiles=None,
                  base_bank=None, num_bank_tiles=None, **kw):
        tiles = num_free_tiles if num_free_tiles is not None else num_bank_tiles
        m = ModAlloc(self.memory, base_partition, base_addr, base_bank, tiles)
        m.memory = self.memory
        return m

    def alloc(self, func):
        c = CallableAlloc(self.memory, func)
        return c


sbuf = _Memory("sbuf")
psum = _Memory("psum")


class no_reorder(metaclass=SealedClass):  # noqa: N801
    """`with ncc.no_reorder():` keeps the compiler from reordering the block; the model issues
    every engine in program order anyway, so it changes nothing here."""

    def __init__(self, *args, **kwargs):
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

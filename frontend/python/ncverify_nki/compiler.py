"""Stand-in for `neuronxcc.nki.compiler` (ncc): decorators that change compilation only, and the
direct-allocation API (allocation.py)."""

from .allocation import CallableAlloc, ModAlloc
from .kernel_api import pass_through
from .sealed import SealedClass
from .signatures import api, refuse

# Decorators that change compilation, not semantics (the kernel is traced as written), with the
# signatures of their pages (general/nki/api/nki/compiler/__init__.py at 2.26.0): used bare
# (`@ncc.force_auto_alloc`) or called (`@ncc.enable_stack_allocator(log_level=10)`).


@api("ncc.skip_middle_end_transformations")
def skip_middle_end_transformations(func=None):
    return pass_through(func) if func is not None else pass_through


@api("ncc.force_auto_alloc")
def force_auto_alloc(func=None):
    return pass_through(func) if func is not None else pass_through


@api("ncc.enable_stack_allocator")
def enable_stack_allocator(func=None, log_level=50):
    return pass_through(func) if func is not None else pass_through


@api("ncc.disable_stack_allocator")
def disable_stack_allocator(func=None):
    return pass_through(func) if func is not None else pass_through


def _no_par_tiles(call, num_par_tiles, base_partition):
    if tuple(num_par_tiles or ()) not in ((), (1,)):
        refuse(call, "num_par_tiles", num_par_tiles,
               "tiles along the partition dim are not placed by the model")
    if base_partition != 0:
        refuse(call, "base_partition", base_partition, "the page says it must be 0")


class _Sbuf:
    """ncc.sbuf (neuronxcc.nki.compiler.sbuf: mod_alloc, alloc; NKI API reference, Neuron SDK
    2.26, general/nki/api/nki/compiler/sbuf.py)."""

    def __init__(self):
        from . import language

        self.memory = language.sbuf

    @api("ncc.sbuf.mod_alloc")
    def mod_alloc(self, *, base_addr, base_partition=0, num_par_tiles=(), num_free_tiles=()):
        _no_par_tiles("ncc.sbuf.mod_alloc", num_par_tiles, base_partition)
        return ModAlloc(self.memory, base_partition, base_addr, None, num_free_tiles)

    @api("ncc.sbuf.alloc")
    def alloc(self, func):
        return CallableAlloc(self.memory, func)


class _Psum:
    """ncc.psum (neuronxcc.nki.compiler.psum: mod_alloc, alloc; general/nki/api/nki/compiler/
    psum.py at 2.26): a tensor's tiles rotate over num_bank_tiles banks from base_bank."""

    def __init__(self):
        from . import language

        self.memory = language.psum

    @api("ncc.psum.mod_alloc")
    def mod_alloc(self, *, base_bank, base_addr=0, base_partition=0, num_bank_tiles=(),
                  num_par_tiles=(), num_free_tiles=()):
        _no_par_tiles("ncc.psum.mod_alloc", num_par_tiles, base_partition)
        if base_addr != 0:
            refuse("ncc.psum.mod_alloc", "base_addr", base_addr, "the page says it must be 0")
        if tuple(num_free_tiles or ()) not in ((), (1,)):
            refuse("ncc.psum.mod_alloc", "num_free_tiles", num_free_tiles,
                   "several tiles in one PSUM bank are not placed by the model")
        return ModAlloc(self.memory, base_partition, 0, base_bank, num_bank_tiles)

    @api("ncc.psum.alloc")
    def alloc(self, func):
        return CallableAlloc(self.memory, func)


sbuf = _Sbuf()
psum = _Psum()


class _NoReorder(metaclass=SealedClass):
    """`with ncc.no_reorder():` keeps the compiler from reordering the block (also passed as a
    loop's `directives=`); the model issues every engine in program order anyway, so it changes
    nothing here."""

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


@api("ncc.no_reorder")
def no_reorder():
    return _NoReorder()

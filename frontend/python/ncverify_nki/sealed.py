"""The metaclass of the stand-ins' classes a kernel can name (nl.par_dim, nl.tile_size,
nisa.engine, nisa.reduce_cmd, ncc.no_reorder, nt.tensor): their attributes are the stand-ins'
to set. sandbox.py installs the guard that refuses a write made by the kernel's code; before it
does (while the stand-ins load) every write is allowed."""


class SealedClass(type):
    guard = None  # (cls, name) -> None, raises to refuse; set by sandbox.seal_stand_in_classes

    def __setattr__(cls, name, value):
        if SealedClass.guard is not None:
            SealedClass.guard(cls, name)
        super().__setattr__(name, value)

    def __delattr__(cls, name):
        if SealedClass.guard is not None:
            SealedClass.guard(cls, name)
        super().__delattr__(name)

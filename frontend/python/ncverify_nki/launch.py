"""The launch grid's axes as NKI spells them at a call, `kernel[nl.spmd_dim(nl.nc(2), 2), 2]`:
`nl.nc(n)` (the n physical NeuronCores of a logical one) and `nl.spmd_dim(...)` (an axis split
across them). They choose which physical core runs which program, not what a program computes,
so an axis is its size: the product of its parts (`nl.nc(2) * 2` is an axis of 4 programs)."""

from . import errors


class GridAxis:
    def __init__(self, size):
        self.size = size

    def __mul__(self, other):
        return GridAxis(self.size * _size(other))

    __rmul__ = __mul__

    def __repr__(self):
        return "grid axis of %d" % self.size


def _size(part):
    size = getattr(part, "size", part)
    if not isinstance(size, int) or isinstance(size, bool) or size < 1:
        raise errors.NkiError("a launch grid axis is built from positive integers, not %r" %
                              (part,))
    return size


def nc(n):
    """nl.nc(n): n physical NeuronCores."""
    return GridAxis(_size(n))


def spmd_dim(*parts):
    """nl.spmd_dim(a, b, ...): one grid axis of a * b * ... programs."""
    size = 1
    for p in parts:
        size *= _size(p)
    return GridAxis(size)

"""A kernel whose helper module imports a dunder of its sibling."""
from neuronxcc import nki

from ..util import dunder  # noqa: F401


@nki.jit
def dunder_user(a):
    return a

"""Arithmetic on tiles."""

import neuronxcc.nki.language as nl

from .factors import _SCALE


def scaled(t):
    return nl.multiply(t, _SCALE)

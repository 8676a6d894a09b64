"""Arithmetic on tiles."""

import neuronxcc.nki.language as nl

from .factors import SCALE


def scaled(t):
    return nl.multiply(t, SCALE)

"""A module of the package that reaches past the kernel language: the kernel that imports it is
refused before any line runs."""

import gc


def collect():
    return gc.collect()

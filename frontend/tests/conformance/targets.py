"""Test helper: the generation a new-API kernel runs on. NKI 0.3.0+ picks the simulator's target
with the NEURON_PLATFORM_TARGET_OVERRIDE environment variable (`nki.jit(platform_target=)`, NKI
0.2's way, is an error there; the simulator's default without it is trn3, as the vendor's: frontend/README.md)."""
import contextlib
import functools
import os

import nki

_VAR = "NEURON_PLATFORM_TARGET_OVERRIDE"


@contextlib.contextmanager
def target(gen):
    """Runs the body with the target set to `gen`, then restores the previous setting."""
    old = os.environ.get(_VAR)
    os.environ[_VAR] = gen
    try:
        yield
    finally:
        if old is None:
            del os.environ[_VAR]
        else:
            os.environ[_VAR] = old


def on(gen):
    """Decorator: an `nki.jit` kernel whose every call runs on `gen`."""

    def wrap(func):
        kernel = nki.jit(func)

        @functools.wraps(func)
        def call(*args, **kwargs):
            with target(gen):
                return kernel(*args, **kwargs)

        return call

    return wrap


def default(gen):
    """Sets the target of this test process (each conformance file runs in its own) unless the
    environment names one."""
    os.environ.setdefault(_VAR, gen)

"""ncverify's stand-in for `neuronxcc.nki` (see ncverify_nki)."""
from ncverify_nki.kernel_api import (Kernel, baremetal, benchmark, jit, profile,  # noqa: F401
                                     simulate, simulate_kernel, trace)

from . import compiler, isa, language, typing  # noqa: F401,E402

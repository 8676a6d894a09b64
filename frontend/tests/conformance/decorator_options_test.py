"""The options of nki.jit, nki.baremetal, nki.benchmark and nki.profile: the documented ones are
accepted (they name files and run counts on a device and change no value), anything else stops
at the decoration; `platform_target` picks the generation the kernel runs on, and with it the
calls that exist there (hardware DGE from NeuronCore-v3). Run by `python3 -m ncverify_nki.run`
(ctest label `conformance`)."""

import unittest

import numpy as np

import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl
from ncverify_nki.errors import NkiError
from ncverify_nki.simulate import KernelNotTraced


def double(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    nl.store(out, value=nl.multiply(nl.load(x), 2.0))
    return out


def hw_dge_copy(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.load(x)
    u = nl.zeros_like(t, buffer=nl.sbuf)
    nisa.dma_copy(dst=u, src=t, dge_mode=nisa.dge_mode.hwdge)
    nl.store(out, value=u)
    return out


class DecoratorOptionsTest(unittest.TestCase):
    def test_documented_options_change_no_value(self):
        x = np.arange(12, dtype=np.float32).reshape(3, 4)
        kernels = [
            nki.jit(double, mode="benchmark", warmup=2, iters=3, save_neff_name="k.neff"),
            nki.jit(mode="baremetal", artifacts_dir="/tmp/a", additional_compile_opt="-O1")(double),
            nki.baremetal(save_trace_name="k.ntff")(double),
            nki.benchmark(warmup=1, iters=1)(double),
            nki.profile(working_directory="/tmp/p", overwrite=True, profile_nth=2)(double),
            nki.jit(mode="simulation", platform_target="inf2")(double),
        ]
        for k in kernels:
            np.testing.assert_array_equal(k(x), 2 * x)

    def test_anything_else_stops_at_the_decoration(self):
        with self.assertRaisesRegex(NkiError, "nki.jit: unknown keyword argument 'warm_up'"):
            nki.jit(double, warm_up=3)
        with self.assertRaisesRegex(NkiError, "nki.profile: unknown keyword argument 'iters'"):
            nki.profile(iters=3)
        with self.assertRaisesRegex(NkiError, "nki.jit: mode='cuda' is not one of"):
            nki.jit(mode="cuda")
        with self.assertRaisesRegex(NkiError, "nki.jit: platform_target='trn9' is not one of"):
            nki.jit(platform_target="trn9")

    def test_hardware_dge_needs_a_trn2_target(self):
        x = np.arange(8, dtype=np.float32).reshape(2, 4)
        on_trn2 = nki.jit(mode="simulation", platform_target="trn2")(hw_dge_copy)
        np.testing.assert_array_equal(on_trn2(x), x)
        with self.assertRaisesRegex(KernelNotTraced, "dge_mode='hwdge' is not modelled"):
            nki.jit(mode="simulation")(hw_dge_copy)(x)


if __name__ == "__main__":
    unittest.main()

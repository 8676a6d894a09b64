"""ncverify as the NKI simulator for kernels of today's API (the top-level `nki` package, NKI
0.2-0.6): every way a test calls one — `nki.simulate(kernel)(...)`, a plain call with
NKI_SIMULATOR=1 (and without it), `kernel[2]` on two logical cores — the target from
NEURON_PLATFORM_TARGET_OVERRIDE, inputs updated in place, outputs in shared HBM, and what is
refused. The kernels are ncverify's own, each checked against NumPy. Run by `python3 -m
ncverify_nki.run` (ctest label `conformance`)."""

import importlib
import os
import subprocess
import unittest
import warnings
from unittest import mock

import numpy as np

import newapi_carried_kernel as carried_kernel
import newapi_copy_dtype_kernel as copy_dtype_kernel
import nki
import nki.isa as nisa
import nki.language as nl
from ncverify_nki.errors import NkiError
from ncverify_nki.simulate import (DynamicCheckFailure, KernelNotTraced, SimulationError,
                                   UnwrittenOutput, ncverify_binary)

TARGET = "NEURON_PLATFORM_TARGET_OVERRIDE"
SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "newapi_script_kernel.py")
CARRIED = os.path.join(os.path.dirname(os.path.abspath(__file__)), "newapi_carried_kernel.py")
VALUE_ARG = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                         "newapi_value_arg_kernel.py")
COPY_DTYPE = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          "newapi_copy_dtype_kernel.py")


def _on_chip(t, buffer=nl.sbuf):
    return nl.ndarray(t.shape, dtype=t.dtype, buffer=buffer)


def _loaded(src):
    t = _on_chip(src)
    nisa.dma_copy(dst=t, src=src)
    return t


@nki.jit
def add(a, b):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    s = _on_chip(a)
    nisa.tensor_tensor(dst=s, data1=_loaded(a), data2=_loaded(b), op=nl.add)
    nisa.dma_copy(dst=out, src=s)
    return out


def scaled_by_lnc(x):
    """A plain function (no decorator): out = x * num_programs(), each logical core on its own
    block of rows, and the LNC overview's pattern of a Python `if` on the core count."""
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    cores = nl.num_programs()
    rows = x.shape[0] // cores
    if cores == 1:
        first = 0
    else:
        first = nl.program_id(0) * rows
    t = nl.ndarray((rows, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x[first:first + rows, :])
    u = nl.ndarray((rows, x.shape[1]), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=float(cores))
    nisa.dma_copy(dst=out[first:first + rows, :], src=u)
    return out


@nki.jit()
def version_filled(x):
    """Every element = the NeuronCore version the kernel runs on (2, 3 or 4)."""
    out = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.shared_hbm)
    t = nl.ndarray(x.shape, dtype=nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=t, value=float(int(nisa.get_nc_version())))
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit(mode="simulation")  # mode= is ignored since NKI 0.3.0
def doubled_in_place(x):
    t = _loaded(x)
    u = _on_chip(x)
    nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=2.0)
    nisa.dma_copy(dst=x, src=u)


@nki.jit(mode="trace", additional_compile_opt="--O1")
def plus_one_into(x, result):
    u = _on_chip(x)
    nisa.tensor_scalar(dst=u, data=_loaded(x), op0=nl.add, operand0=1.0)
    nisa.dma_copy(dst=result, src=u)


@nki.jit
def first_half_only(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    half = x.shape[0] // 2
    nisa.dma_copy(dst=out[0:half, :], src=x[0:half, :])
    return out


@nki.jit
def returns_private_hbm(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.hbm)
    nisa.dma_copy(dst=out, src=x)
    return out


@nki.jit
def returns_a_tile(x):
    return _loaded(x)


@nki.jit
def legacy_style_matmul(x):
    """neuronxcc.nki's `psum = nisa.nc_matmul(stationary, moving)` in a kernel of today's API."""
    t = _loaded(x)
    return nisa.nc_matmul(t, t)


@nki.jit
def reads_unwritten_sbuf(x):
    out = nl.ndarray(x.shape, dtype=x.dtype, buffer=nl.shared_hbm)
    never_written = _on_chip(x)
    s = _on_chip(x)
    nisa.tensor_tensor(dst=s, data1=_loaded(x), data2=never_written, op=nl.add)
    nisa.dma_copy(dst=out, src=s)
    return out


@nki.jit
def matmul_blocks(lhs_t, rhs):
    """out = lhs_t.T @ rhs, one 128 x 512 PSUM block per output block, the contraction in
    128-row chunks accumulated into it (the first matmul into a PSUM location overwrites it,
    the later ones add: accumulate=None)."""
    k, m = lhs_t.shape
    _, n = rhs.shape
    out = nl.ndarray((m, n), dtype=nl.float32, buffer=nl.shared_hbm)
    for i in nl.affine_range(m // 128):
        for j in nl.affine_range(n // 512):
            acc = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.psum)
            for c in nl.affine_range(k // 128):
                a = nl.ndarray((128, 128), dtype=lhs_t.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhs_t[c * 128:(c + 1) * 128, i * 128:(i + 1) * 128])
                b = nl.ndarray((128, 512), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b, src=rhs[c * 128:(c + 1) * 128, j * 512:(j + 1) * 512])
                nisa.nc_matmul(dst=acc, stationary=a, moving=b)
            s = nl.ndarray((128, 512), dtype=nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=s, src=acc)
            nisa.dma_copy(dst=out[i * 128:(i + 1) * 128, j * 512:(j + 1) * 512], src=s)
    return out


def arrays(rows=128, cols=64, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal((rows, cols)).astype(np.float32) for _ in range(2)]


class Calls(unittest.TestCase):
    def setUp(self):
        p = mock.patch.dict(os.environ, {})
        p.start()
        self.addCleanup(p.stop)
        for k in ("NKI_SIMULATOR", TARGET):
            os.environ.pop(k, None)

    def test_nki_simulate_of_a_jit_kernel(self):
        a, b = arrays()
        np.testing.assert_array_equal(nki.simulate(add)(a, b), a + b)

    def test_nki_simulator_1_makes_a_plain_call_simulate(self):
        a, b = arrays(seed=1)
        os.environ["NKI_SIMULATOR"] = "1"
        np.testing.assert_array_equal(add(a, b), a + b)

    def test_a_plain_call_simulates_without_the_variable_too(self):
        # ncverify has no NeuronDevice: a call with NumPy arrays can only be simulated.
        a, b = arrays(seed=2)
        np.testing.assert_array_equal(add(a, b), a + b)

    def test_nki_simulator_asking_for_hardware_is_refused(self):
        a, b = arrays()
        os.environ["NKI_SIMULATOR"] = "0"
        with self.assertRaisesRegex(SimulationError, "NKI_SIMULATOR='0' asks to run add on a "
                                    "NeuronDevice"):
            add(a, b)
        np.testing.assert_array_equal(nki.simulate(add)(a, b), a + b)  # explicit: still runs

    def test_a_plain_function_is_wrapped_and_one_core_is_the_default(self):
        x, _ = arrays()
        np.testing.assert_array_equal(nki.simulate(scaled_by_lnc)(x), x)
        np.testing.assert_array_equal(nki.jit(scaled_by_lnc)[1](x), x)

    def test_two_logical_cores(self):
        x, _ = arrays(rows=256)
        k = nki.jit(scaled_by_lnc)
        np.testing.assert_array_equal(k[2](x), 2 * x)
        np.testing.assert_array_equal(nki.simulate(k[2])(x), 2 * x)
        np.testing.assert_array_equal(nki.simulate(k)[2](x), 2 * x)

    def test_the_brackets_hold_one_lnc_degree(self):
        k = nki.jit(scaled_by_lnc)
        for bad in ((1, 2), 0, 1.0, True):
            with self.assertRaisesRegex(NkiError, r"kernel\[.*\]: the"):
                k[bad]

    def test_trn1_has_no_logical_cores_of_two(self):
        x, _ = arrays(rows=256)
        os.environ[TARGET] = "trn1"
        with self.assertRaisesRegex(SimulationError, r"scaled_by_lnc\[2\]: trn1 .* at most 1"):
            nki.jit(scaled_by_lnc)[2](x)


class Targets(unittest.TestCase):
    def setUp(self):
        p = mock.patch.dict(os.environ, {})
        p.start()
        self.addCleanup(p.stop)
        os.environ.pop(TARGET, None)

    def version(self):
        x = np.zeros((4, 8), dtype=np.float32)
        v = nki.simulate(version_filled)(x)
        self.assertTrue((v == v[0, 0]).all())
        return int(v[0, 0])

    def test_unset_is_trn3(self):
        self.assertEqual(self.version(), 4)

    def test_each_documented_value(self):
        for value, version in (("trn1", 2), ("inf2", 2), ("gen2", 2), ("trn2", 3),
                               ("gen3", 3), ("trn3", 4), ("gen4", 4)):
            os.environ[TARGET] = value
            self.assertEqual(self.version(), version, value)

    def test_another_value_is_refused(self):
        os.environ[TARGET] = "trn9"
        with self.assertRaisesRegex(SimulationError, "NEURON_PLATFORM_TARGET_OVERRIDE='trn9'"):
            self.version()


class Arguments(unittest.TestCase):
    def test_an_input_the_kernel_writes_is_updated_in_place(self):
        x, _ = arrays(rows=32)
        given = x.copy()
        self.assertIsNone(nki.simulate(doubled_in_place)(x))
        np.testing.assert_array_equal(x, 2 * given)

    def test_a_write_only_argument_receives_the_result(self):
        x, _ = arrays(rows=32)
        result = np.zeros_like(x)
        plus_one_into(x, result)
        np.testing.assert_array_equal(result, x + 1.0)

    def test_unwritten_output_elements_are_nan_with_a_warning(self):
        x, _ = arrays(rows=8)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            out = first_half_only(x)
        np.testing.assert_array_equal(out[:4], x[:4])
        self.assertTrue(np.isnan(out[4:]).all())
        self.assertTrue(any(isinstance(w.message, UnwrittenOutput) for w in caught))


class Matmul(unittest.TestCase):
    def test_blocks_accumulated_in_psum(self):
        rng = np.random.default_rng(3)
        lhs_t = rng.standard_normal((256, 256)).astype(np.float32)
        rhs = rng.standard_normal((256, 1024)).astype(np.float32)
        out = nki.simulate(matmul_blocks)(lhs_t, rhs)
        np.testing.assert_allclose(out, lhs_t.T.astype(np.float64) @ rhs, rtol=1e-4, atol=1e-4)


class Scripts(unittest.TestCase):
    def test_import_traces_the_kernel_of_a_script(self):
        r = subprocess.run([ncverify_binary(), "import", SCRIPT + ":negated"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("input x : hbm fp32 [n, m]", r.stdout)
        self.assertIn("tensor_scalar", r.stdout)

    def test_importing_the_script_simulates_its_call(self):
        module = importlib.import_module("newapi_script_kernel")
        np.testing.assert_array_equal(module.result, -module.x)


class CarriedDependencies(unittest.TestCase):
    """An nl.affine_range is Python's range since NKI 0.2: a body that reads what an earlier
    iteration wrote is a sequential loop of the program, independent iterations stay affine
    (frontend/README.md, "Loops of the new API")."""

    def _loops(self, kernel, shape):
        r = subprocess.run([ncverify_binary(), "import", CARRIED + ":" + kernel, "--input",
                            "x=fp32[%d,%d]" % shape], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return [line.strip() for line in r.stdout.splitlines() if "_range(" in line or
                line.startswith("# line")]

    def test_an_accumulation_across_iterations_is_sequential(self):
        x = np.random.default_rng(5).standard_normal((8, 48)).astype(np.float32)
        got = nki.simulate(carried_kernel.running_sums)(x)
        want = np.cumsum(x.reshape(8, 12, 4), axis=1).reshape(8, 48)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        loops = self._loops("running_sums", (8, 48))
        self.assertIn("for j in sequential_range(12) {", loops)
        self.assertIn("# line 18: nl.affine_range loop 'j' reads in one iteration what an "
                      "earlier one wrote (through 'acc'); affine_range is Python's range since "
                      "NKI 0.2, so it is a sequential loop of the program", loops)

    def test_independent_iterations_stay_affine(self):
        x = np.random.default_rng(6).standard_normal((8, 48)).astype(np.float32)
        np.testing.assert_array_equal(nki.simulate(carried_kernel.doubled_in_blocks)(x), 2 * x)
        self.assertEqual(self._loops("doubled_in_blocks", (8, 48)),
                         ["for j in affine_range(12) {"])
        y = np.random.default_rng(7).standard_normal((12, 16)).astype(np.float32)
        np.testing.assert_array_equal(nki.simulate(carried_kernel.broadcast_rows)(y),
                                      np.repeat(y, 8, axis=0))
        self.assertEqual(self._loops("broadcast_rows", (12, 16)),
                         ["for j in affine_range(12) {"])


class ValueArguments(unittest.TestCase):
    """A parameter without a default is a tensor unless --param gives it a value."""

    def _ncverify(self, *args):
        return subprocess.run([ncverify_binary()] + list(args), stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, universal_newlines=True)

    def test_param_makes_a_positional_parameter_a_value(self):
        r = self._ncverify("import", VALUE_ARG + ":scaled", "--input", "x=fp32[4,8]",
                           "--param", "factor=3")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("# kernel arguments: factor=3", r.stdout)
        self.assertIn("op0=multiply, operand0=3", r.stdout)
        self.assertNotIn("input factor", r.stdout)

    def test_without_param_it_is_a_tensor(self):
        r = self._ncverify("import", VALUE_ARG + ":scaled", "--input", "x=fp32[4,8]")
        self.assertEqual(r.returncode, 2)
        self.assertIn("cannot tell the rank of tensor argument 'factor'", r.stderr)


class StaleDtypeKeyword(unittest.TestCase):
    """nisa.tensor_copy(dtype=) of NKI 0.1.0 (frontend/README.md, "dtype= on
    nisa.tensor_copy")."""

    def _import(self, *extra):
        return subprocess.run([ncverify_binary(), "import", COPY_DTYPE + ":copied",
                               "--input", "x=fp32[4,8]"] +
                              list(extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True)

    def test_equal_to_dst_dtype_is_taken_with_a_header_note(self):
        r = self._import()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("# newapi_copy_dtype_kernel.py:19: nisa.tensor_copy(dtype=nl.float32) "
                      "equals dst.dtype and is ignored, as NKI 0.1.0 did; NKI 0.2.0+ rejects "
                      "the keyword", r.stdout)
        x = np.arange(32, dtype=np.float32).reshape(4, 8)
        np.testing.assert_array_equal(nki.simulate(copy_dtype_kernel.copied)(x), x)

    def test_another_dtype_is_refused_at_its_line(self):
        r = self._import("--param", "cast_to_bf16=true")
        self.assertEqual(r.returncode, 2)
        self.assertIn("newapi_copy_dtype_kernel.py:17: nisa.tensor_copy: dtype=nl.bfloat16 "
                      "differs from dst.dtype nl.float32", r.stderr)


@nki.jit
def _version_filled(a):
    """The NeuronCore version the kernel is traced for, in every element."""
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.memset(dst=t, value=float(nisa.get_nc_version().value))
    nisa.dma_copy(dst=out, src=t)
    return out


class Refusals(unittest.TestCase):
    def test_platform_target_names_the_generation_as_in_nki_0_2(self):
        """NKI 0.2's `platform_target=` (an error from 0.3.0 on; nki-samples 6905a68's mxfp
        tutorial passes it): the generation the kernel runs on; a value outside the targets,
        or NEURON_PLATFORM_TARGET_OVERRIDE naming another generation, refused."""
        x = np.zeros((4, 8), np.float32)
        for target, version in (("trn2", 3), ("gen3", 3), ("inf2", 2), ("trn3", 4)):
            got = nki.jit(platform_target=target)(_version_filled.func)(x)
            np.testing.assert_array_equal(got, np.full((4, 8), version, np.float32), target)
        with mock.patch.dict(os.environ, {"NEURON_PLATFORM_TARGET_OVERRIDE": "gen3"}):
            got = nki.jit(platform_target="trn2")(_version_filled.func)(x)  # the same one
            np.testing.assert_array_equal(got, np.full((4, 8), 3, np.float32))
        with mock.patch.dict(os.environ, {"NEURON_PLATFORM_TARGET_OVERRIDE": "trn3"}):
            with self.assertRaisesRegex(SimulationError, "platform_target='trn2', "
                                        "NEURON_PLATFORM_TARGET_OVERRIDE='trn3' another"):
                nki.jit(platform_target="trn2")(_version_filled.func)(x)
        with self.assertRaisesRegex(NkiError, "platform_target='trn9' is not one of the "
                                    "targets"):
            nki.jit(platform_target="trn9")
        with self.assertRaisesRegex(NkiError, "platform_target="):
            nki.jit(add.func, platform_target="trn9")

    def test_compile_options_are_accepted_and_ignored(self):
        """nki-library's qkv.py decorates with these debugging and compiler options."""
        wrapped = nki.jit(mode="auto", debug_kernel=True, show_compiler_tb=True,
                          experimental_flags="skip-non-top-level-shared-hbm-check")(add.func)
        x, y = arrays(rows=8)
        np.testing.assert_array_equal(wrapped(x, y), x + y)

    def test_an_unknown_option_stops_at_the_decoration(self):
        with self.assertRaisesRegex(NkiError, "nki.jit: unknown keyword argument 'warmup'"):
            nki.jit(warmup=3)

    def test_outputs_are_shared_hbm(self):
        x, _ = arrays(rows=8)
        with self.assertRaisesRegex(KernelNotTraced, r"nl.private_hbm \(nl.hbm\) tensor.*nl.shared_hbm"):
            returns_private_hbm(x)
        with self.assertRaisesRegex(KernelNotTraced, "returns an on-chip tile"):
            returns_a_tile(x)

    def test_a_legacy_style_call_is_told_the_destination_comes_first(self):
        x, _ = arrays(rows=8)
        with self.assertRaisesRegex(KernelNotTraced, "nisa.nc_matmul: missing argument "
                                    "'moving'; since NKI 0.2 nki.isa calls take their "
                                    "destination first and return nothing"):
            legacy_style_matmul(x)

    def test_an_int8_argument_is_refused_by_name(self):
        x = np.zeros((4, 8), dtype=np.int8)
        with self.assertRaisesRegex(KernelNotTraced, "argument a: NumPy dtype int8 is an NKI "
                                    "tensor dtype the model does not compute"):
            add(x, x)

    def test_reading_unwritten_memory_is_a_check_failure(self):
        # The vendor's simulator fills fresh tensors with NaN; ncverify stops at the read.
        x, _ = arrays(rows=8)
        with self.assertRaises(DynamicCheckFailure) as e:
            reads_unwritten_sbuf(x)
        self.assertEqual(e.exception.kind, "uninitialized_read")


if __name__ == "__main__":
    unittest.main()

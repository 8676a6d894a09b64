"""`nki.jit` and `nki.simulate` of NKI 0.2-0.6 (the 0.6 reference: aws-neuron-sdk
nki/api/nki/__init__.py; the NKI CPU Simulator guide nki/guides/nki_simulator.rst; the LNC
overview nki/get-started/about/lnc.rst; the 0.3.0 update guide, nki/migration/index.rst).

- `nki.jit(fn=None, **kwargs)`: `platform_target=` is NKI 0.2's way to name the target (the 0.3.0
  update guide: "deprecated", and "raises an error in NKI 0.3.0"; the target then comes from
  NEURON_PLATFORM_TARGET_OVERRIDE). The front end covers NKI 0.2-0.6 and kernels written for 0.2
  pass it (nki-samples 6905a68's mxfp tutorial, `platform_target='trn3'`), so it is accepted as 0.2
  reads it: the kernel's generation (a value outside the guide's list, or an environment
  variable or `--gen` naming another generation, is refused); `mode=` is deprecated and ignored;
  the compiler's artifact options are accepted and change no value; any other keyword stops at
  the decoration.
- `kernel[lnc]`: the Logical NeuronCore degree, one number (1 or 2; 2 from NeuronCore-v3 on).
- A call with NumPy arrays runs on ncverify's simulator (simulate.py): with NKI_SIMULATOR=1 as
  the guide says, and also without it, since ncverify has no NeuronDevice to run on (unless
  NKI_SIMULATOR names another value: that asks for hardware, which is refused).
- `nki.simulate(kernel)`: the kernel (or a plain function) that always runs on the simulator.

The target is read when the kernel is called (scripts set the variable after importing nki).
"""

import os

from .. import errors, kernel_api

SIMULATOR_ENV = "NKI_SIMULATOR"
TARGET_ENV = "NEURON_PLATFORM_TARGET_OVERRIDE"
# The guide's values of NEURON_PLATFORM_TARGET_OVERRIDE, to the model's generations.
TARGETS = {"trn1": "trn1", "inf2": "trn1", "gen2": "trn1", "trn2": "trn2", "gen3": "trn2",
           "trn3": "trn3", "gen4": "trn3"}
# Unset: the guide's simulator uses the chip it detects, else trn3; ncverify detects none.
DEFAULT_TARGET = "trn3"
# The largest LNC degree of each generation: NeuronCore-v2 has no logical cores of two (LNC2
# and the calls that need it, sendrecv and core_barrier, are NeuronCore-v3 on).
MAX_LNC = {"trn1": 1, "trn2": 2, "trn3": 2}
# Keywords of a compile on a device that change no value (the legacy decorators' docstrings;
# nki-samples passes additional_compile_opt to nki.jit; nki-library's qkv.py passes
# debug_kernel, show_compiler_tb and experimental_flags, the 0.6 `jit(fn=None, **kwargs)` lists
# none of them): accepted and ignored.
_COMPILE_OPTIONS = ("additional_compile_opt", "save_neff_name", "save_trace_name",
                    "artifacts_dir", "debug_kernel", "show_compiler_tb", "experimental_flags")


def target_generation():
    """The model's generation for NEURON_PLATFORM_TARGET_OVERRIDE (trn3 when unset)."""
    value = os.environ.get(TARGET_ENV, "")
    if value == "":
        return DEFAULT_TARGET
    if value not in TARGETS:
        from .. import simulate as sim

        raise sim.SimulationError("%s=%r: the supported values are trn1|inf2|gen2, trn2|gen3 "
                                  "and trn3|gen4" % (TARGET_ENV, value))
    return TARGETS[value]


def _check_options(kwargs):
    for k in kwargs:
        if k == "platform_target":
            if kwargs[k] not in TARGETS:
                raise errors.NkiError("nki.jit: platform_target=%r is not one of the targets "
                                      "trn1|inf2|gen2, trn2|gen3, trn3|gen4 (NKI 0.2; since NKI "
                                      "0.3.0 the %s environment variable names the target)" %
                                      (kwargs[k], TARGET_ENV))
            continue
        if k != "mode" and k not in _COMPILE_OPTIONS:
            raise errors.NkiError("nki.jit: unknown keyword argument '%s' (accepted: mode, which "
                                  "is ignored since NKI 0.3.0, and the compile options %s)" %
                                  (k, ", ".join(_COMPILE_OPTIONS)))


def _lnc_of(key):
    if isinstance(key, bool) or not isinstance(key, int):
        raise errors.NkiError("kernel[%r]: the brackets hold one number, the LNC degree (1 or "
                              "2)" % (key,))
    if key < 1:
        raise errors.NkiError("kernel[%d]: the LNC degree is at least 1" % key)
    return key


class Kernel(kernel_api.Kernel):
    """What `nki.jit` returns: called with NumPy arrays it runs on the simulator; indexed,
    `kernel[lnc]`, it launches on `lnc` logical cores; while a kernel is traced, a call inlines
    it (nki-library d2ad3a5 calls jit-decorated kernels from kernels, moe_cte.py)."""

    def __init__(self, func, lnc=1, simulate=False, **options):
        super().__init__(func, None, **options)
        self.lnc = lnc
        self.always_simulate = simulate  # nki.simulate(kernel): whatever NKI_SIMULATOR says

    def __getitem__(self, key):
        return Kernel(self.func, _lnc_of(key), self.always_simulate, **self.options)

    def __call__(self, *args, **kwargs):
        from .. import trace

        if trace._current is not None:  # a kernel called while tracing: inline it
            return self.func(*args, **kwargs)
        kernel_api.outside_a_trace()
        from .. import simulate as sim

        wanted = os.environ.get(SIMULATOR_ENV, "")
        if not self.always_simulate and wanted not in ("", "1"):
            raise sim.SimulationError("%s=%r asks to run %s on a NeuronDevice; ncverify has "
                                      "none and only simulates (unset it, set it to 1, or call "
                                      "nki.simulate(kernel))" %
                                      (SIMULATOR_ENV, wanted, self.func.__name__))
        gen = target_generation()
        declared = self.options.get("platform_target")
        if declared is not None:  # NKI 0.2's decorator names the target (see the module doc)
            if os.environ.get(TARGET_ENV, "") not in ("", *[t for t, g in TARGETS.items()
                                                             if g == TARGETS[declared]]):
                raise sim.SimulationError("%s: the decorator says platform_target=%r, %s=%r "
                                          "another generation" %
                                          (self.func.__name__, declared, TARGET_ENV,
                                           os.environ.get(TARGET_ENV)))
            gen = TARGETS[declared]
        if self.lnc > MAX_LNC[gen]:
            raise sim.SimulationError("%s[%d]: %s (%s=%s) has logical cores of at most %d" %
                                      (self.func.__name__, self.lnc, gen, TARGET_ENV,
                                       os.environ.get(TARGET_ENV) or "unset", MAX_LNC[gen]))
        # Every launch has an LNC degree (1 by default), so nl.program_id(0) is 0 and
        # nl.num_programs() 1 without brackets, as the LNC overview says.
        return sim.simulate(self.func, args, kwargs, [self.lnc], gen)


def jit(fn=None, **kwargs):
    """nki.jit: `@nki.jit`, `@nki.jit()`, `@nki.jit(mode=...)`, `nki.jit(f)`."""
    _check_options(kwargs)
    if fn is None:
        return lambda f: _wrap(f, kwargs)
    if not callable(fn):
        raise errors.NkiError("nki.jit takes the kernel function and keyword options, not %r" %
                              (fn,))
    return _wrap(fn, kwargs)


def _wrap(f, options):
    if isinstance(f, Kernel):
        return f
    return Kernel(kernel_api.unwrap(f), **options)


def simulate(kernel):
    """nki.simulate(kernel): the kernel (a plain function is wrapped; `kernel[2]` keeps its LNC
    degree) run on the simulator when called, whatever NKI_SIMULATOR says."""
    if isinstance(kernel, Kernel):
        return Kernel(kernel.func, kernel.lnc, True, **kernel.options)
    if not callable(kernel):
        raise errors.NkiError("nki.simulate takes a kernel, not %r" % (kernel,))
    return Kernel(kernel_api.unwrap(kernel), simulate=True)

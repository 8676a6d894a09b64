"""The decorators and top-level names of `neuronxcc.nki` (nki.jit, nki.baremetal, ...): they
wrap the kernel function so that the front end can find and trace it; nothing runs on import."""

import functools


class ModuleLevelCall(BaseException):
    """A kernel called by the module-level code of a file `ncverify import` is loading (a script
    that runs its kernel on NumPy arrays when it is imported). The tracer stops running that
    module there and traces the kernel it was asked for with what the module defined so far
    (main.load_module). A BaseException, so a harness's `except Exception` does not catch it."""

    def __init__(self, where):
        super().__init__(where)
        self.where = where


_loading_for_trace = False  # set by main.load_module while it runs the kernel's file
_in_tracer = False  # this process is `ncverify import`'s tracer: it never simulates


def loading_for_trace(flag):
    global _loading_for_trace, _in_tracer
    _loading_for_trace = flag
    _in_tracer = True


def outside_a_trace():
    """A kernel called from Python, not from a kernel being traced: in the file `ncverify import`
    is loading it stops the module there (ModuleLevelCall); elsewhere in the tracer's process it
    is an error; in the user's own process the caller simulates it."""
    from . import errors

    if _loading_for_trace:
        raise ModuleLevelCall(errors.user_location())
    if _in_tracer:
        raise errors.NkiError("a kernel is traced by ncverify, not called from Python here")


class Kernel:
    """What @nki.jit returns: callable (inlined while tracing; simulated on ncverify's
    interpreter when called with NumPy arrays from Python, simulate.py), indexable with a launch
    grid, and unwrappable."""

    def __init__(self, func, grid=None, **options):
        self.func = func
        self.grid = grid
        self.options = options
        functools.update_wrapper(self, func)

    def __getitem__(self, grid):
        return Kernel(self.func, grid, **self.options)

    def __call__(self, *args, **kwargs):
        from . import trace

        if trace._current is not None:  # a helper kernel called while tracing: inline it
            return self.func(*args, **kwargs)
        outside_a_trace()
        from . import simulate as sim

        return sim.simulate(self.func, args, kwargs, self.grid,
                            self.options.get("platform_target"))


# The keyword options of each decorator, from its docstring in neuronxcc.nki (Neuron SDK 2.26:
# aws-neuron/aws-neuron-sdk general/nki/api/nki/__init__.py at commit 49ee15c5). They name files,
# directories, iteration counts and compiler flags of a run on a device: none changes what the
# kernel computes, so the trace ignores them. `platform_target` is not on the pages; the SDK's own
# examples pass it (nki/test) and the simulator runs on that generation (simulate.py); the tracer
# accepts the calls of that generation (trace.Tracer.generation).
_ARTIFACTS = ("save_neff_name", "save_trace_name", "additional_compile_opt")
_OPTIONS = {
    "baremetal": _ARTIFACTS + ("artifacts_dir",),
    "benchmark": _ARTIFACTS + ("warmup", "iters"),
    "profile": _ARTIFACTS + ("working_directory", "overwrite", "profile_nth"),
}
_OPTIONS["jit"] = ("mode", "platform_target") + tuple(
    sorted(set(_OPTIONS["baremetal"] + _OPTIONS["benchmark"])))
_OPTIONS["trace"] = ("mode", "platform_target")
# The page's modes, and "trace", which nki-samples' reference kernels pass (attention.py).
_JIT_MODES = ("jax", "torchxla", "baremetal", "benchmark", "simulation", "auto", "trace")
_PLATFORMS = ("trn1", "inf2", "gen2", "trn2", "gen3", "trn3", "gen4")


def _check_options(name, kwargs):
    from . import errors

    for k, v in kwargs.items():
        if k not in _OPTIONS[name]:
            raise errors.NkiError("nki.%s: unknown keyword argument '%s' (the page's options: %s)"
                                  % (name, k, ", ".join(_OPTIONS[name])))
    mode = kwargs.get("mode", "auto")
    if mode not in _JIT_MODES:
        raise errors.NkiError("nki.%s: mode=%r is not one of %s" % (name, mode, _JIT_MODES))
    target = kwargs.get("platform_target")
    if target is not None and target not in _PLATFORMS:
        raise errors.NkiError("nki.%s: platform_target=%r is not one of %s" %
                              (name, target, _PLATFORMS))


def _decorator_for(name):
    def decorate(*args, **kwargs):
        _check_options(name, kwargs)
        if args and callable(args[0]):  # nki.jit(f) or nki.jit(f, mode=...)
            f = args[0]
            return f if isinstance(f, Kernel) else Kernel(f, **kwargs)
        if args:
            from . import errors

            raise errors.NkiError("nki.%s takes the kernel function and keyword options" % name)
        return lambda f: f if isinstance(f, Kernel) else Kernel(f, **kwargs)

    return decorate


jit = _decorator_for("jit")
baremetal = _decorator_for("baremetal")
trace = _decorator_for("trace")


def simulate_kernel(kernel, *args, **kwargs):
    """nki.simulate_kernel(kernel, *arrays): the kernel run on the arrays (see Kernel)."""
    if not isinstance(kernel, Kernel):
        kernel = Kernel(unwrap(kernel))
    return kernel(*args, **kwargs)


def simulate(kernel):
    """nki.simulate(kernel): a callable that runs the kernel on NumPy arrays."""
    if not isinstance(kernel, Kernel):
        kernel = Kernel(unwrap(kernel))
    return kernel


benchmark = _decorator_for("benchmark")
profile = _decorator_for("profile")


def unwrap(obj):
    seen = 0
    while seen < 16:
        if isinstance(obj, Kernel):
            obj = obj.func
        elif hasattr(obj, "__wrapped__"):
            obj = obj.__wrapped__
        elif hasattr(obj, "func") and callable(getattr(obj, "func")):
            obj = obj.func
        else:
            return obj
        seen += 1
    return obj


def pass_through(*args, **kwargs):
    """A decorator that changes compilation, not semantics (skip_middle_end_transformations,
    force_auto_alloc, enable_stack_allocator, ...): the function is traced as written."""
    if len(args) == 1 and callable(args[0]) and not kwargs:
        return args[0]
    return lambda f: f

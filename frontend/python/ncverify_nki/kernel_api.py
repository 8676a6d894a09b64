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
        from . import errors, trace

        if trace._current is not None:  # a helper kernel called while tracing: inline it
            return self.func(*args, **kwargs)
        if _loading_for_trace:
            raise ModuleLevelCall(errors.user_location())
        if _in_tracer:
            raise errors.NkiError("a kernel is traced by ncverify, not called from Python here")
        from . import simulate as sim

        return sim.simulate(self.func, args, kwargs, self.grid,
                            self.options.get("platform_target"))


def _decorator(*args, **kwargs):
    if args and callable(args[0]):  # nki.jit(f) or nki.jit(f, mode=...)
        f = args[0]
        return f if isinstance(f, Kernel) else Kernel(f, **kwargs)
    return lambda f: f if isinstance(f, Kernel) else Kernel(f, **kwargs)


jit = _decorator
baremetal = _decorator
trace = _decorator


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


def benchmark(*args, **kwargs):
    return _decorator(*args, **kwargs)


def profile(*args, **kwargs):
    return _decorator(*args, **kwargs)


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

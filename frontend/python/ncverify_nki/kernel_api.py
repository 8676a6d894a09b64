"""The decorators and top-level names of `neuronxcc.nki` (nki.jit, nki.baremetal, ...): they
wrap the kernel function so that the front end can find and trace it; nothing runs on import."""

import functools


class Kernel:
    """What @nki.jit returns: callable, indexable with a launch grid, and unwrappable."""

    def __init__(self, func, **options):
        self.func = func
        self.options = options
        functools.update_wrapper(self, func)

    def __getitem__(self, grid):
        return self

    def __call__(self, *args, **kwargs):
        from . import errors, trace

        if trace._current is not None:  # a helper kernel called while tracing: inline it
            return self.func(*args, **kwargs)
        raise errors.NkiError("a kernel is traced by ncverify, not called from Python here")


def _decorator(*args, **kwargs):
    if len(args) == 1 and callable(args[0]) and not kwargs:
        f = args[0]
        return f if isinstance(f, Kernel) else Kernel(f)
    return lambda f: f if isinstance(f, Kernel) else Kernel(f, **kwargs)


jit = _decorator
baremetal = _decorator
trace = _decorator
simulate_kernel = None


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

"""Compile-time integers of the new API's views: the value the trace knows of a symbolic size
or index (asserts and --param fix them), and the checks that need one."""

from .. import errors, trace
from ..expr import Lin


def const(x):
    """The integer value of x when the trace knows it, else None."""
    lin = trace.current().evaluate(Lin.of(x))
    return lin.const if lin.is_const() else None


def same(a, b):
    ev = trace.current().evaluate
    return ev(Lin.of(a)) == ev(Lin.of(b))


def integer(x, what):
    """A compile-time integer argument (a number or a symbolic shape the trace knows)."""
    if isinstance(x, bool):
        raise errors.NkiError("%s must be an integer, not %r" % (what, x))
    try:
        lin = Lin.of(x)
    except TypeError:
        raise errors.NkiError("%s must be an integer, not %r" % (what, x))
    v = const(lin)
    if v is None:
        raise errors.NkiError("%s (%s) must be known when the kernel is traced; give the sizes "
                              "it depends on with --param" % (what, lin.text()))
    return v


def mem_name(mem):
    return {"hbm": "HBM", "sbuf": "SBUF", "psum": "PSUM"}[mem]

"""The arguments of each NKI call, bound as the NKI API reference documents them.

Every `nl.*`/`nisa.*`/`ncc.*` stand-in is declared with the documented signature of its call
(positional order, keyword-only arguments, defaults) and wrapped by `api`: a call that passes an
argument the documentation does not have, too many positional arguments, or misses a required
one stops the trace with an `NkiError` at the kernel's line naming the call and the argument
(never Python's own TypeError, never a keyword swallowed by `**kw`). An argument the
documentation has but the model does not implement is refused by `refuse` with the reason; the
table in frontend/README.md lists every call and argument.
"""

import functools
import inspect

from . import errors

# Keywords of the newer `nki.isa`/`nki.language` API (NKI 0.x, with `dst=`), which the
# neuronxcc.nki API this front end stands in for does not have: named in the error, so that a
# kernel written for the other API is told why.
_NEWER_API = {
    "dst": "the newer nki API's output argument; neuronxcc.nki calls return their result",
    "accumulate": "the newer nki API's accumulation flag; in neuronxcc.nki a matmul accumulates "
                  "with `psum_tile += nisa.nc_matmul(...)`",
    "name": "the newer nki API's instruction name",
}


# Every documented call: (the module that defines it, qualname) -> its signature. The
# differential tests (frontend/tests/differential) enumerate the calls and their arguments here.
SIGNATURES = {}

# Functions called with (module, qualname, signature, the arguments the kernel passed by name)
# on every call whose arguments bind: the differential tests record which arguments a case
# exercised. Empty while tracing for `import`; the tracer never reads it.
OBSERVERS = []


def api(qualname):
    """Decorator: binds the call's arguments against the function's own (documented) signature
    first, so that a wrong argument is a located NkiError naming `qualname` and the argument."""

    def wrap(f):
        sig = inspect.signature(f)
        SIGNATURES[(f.__module__, qualname)] = sig
        # Whether arguments bind depends only on how many are positional and which keywords
        # are given (Signature.bind never looks at a value): the shapes that bound once are
        # remembered, as binding costs more than many of the calls themselves. (The keywords
        # in the order given: another order is another entry, bound once more.)
        binds = set()

        @functools.wraps(f)
        def call(*args, **kw):
            shape = (len(args), tuple(kw)) if kw else len(args)
            if shape not in binds or OBSERVERS:
                try:
                    bound = sig.bind(*args, **kw)
                except TypeError as e:
                    raise errors.NkiError("%s: %s" % (qualname, _why(sig, args, kw, e))) \
                        from None
                binds.add(shape)
                for observe in OBSERVERS:
                    observe(f.__module__, qualname, sig, dict(bound.arguments))
            return f(*args, **kw)

        # The kernel sees only `call`: no route to the unchecked function through __wrapped__.
        del call.__wrapped__
        return call

    return wrap


def _why(sig, args, kw, e):
    params = sig.parameters
    known = [n for n in params]
    for k in kw:
        if k not in params:
            extra = _NEWER_API.get(k)
            return "unknown keyword argument '%s'%s (the documented arguments are %s)" % (
                k, "" if extra is None else ": " + extra, ", ".join(known))
    positional = [n for n, p in params.items()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if len(args) > len(positional):
        keyword_only = [n for n, p in params.items() if p.kind == p.KEYWORD_ONLY]
        return "takes %d positional argument%s%s, %d given%s" % (
            len(positional), "" if len(positional) == 1 else "s",
            " (%s)" % ", ".join(positional) if positional else "", len(args),
            "; %s %s keyword-only" % (", ".join(keyword_only),
                                      "is" if len(keyword_only) == 1 else "are")
            if keyword_only else "")
    for k, n in enumerate(positional):
        if k < len(args) and n in kw:
            return "argument '%s' given twice (by position and by keyword)" % n
    missing = [n for n, p in params.items() if p.default is p.empty and
               p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD) and n not in kw and
               (n not in positional or positional.index(n) >= len(args))]
    if missing:
        hint = ""
        if positional[:1] == ["dst"] and len(args) + len(kw) < len(positional):
            # NKI 0.2+: `nisa.nc_matmul(a, b)` of neuronxcc.nki binds a to dst, b to stationary
            hint = ("; since NKI 0.2 nki.isa calls take their destination first and return "
                    "nothing (`nisa.call(dst, ...)`; the migration guide): `t = nisa.call(...)` "
                    "is the neuronxcc.nki form")
        return "missing argument '%s'%s" % (missing[0], hint)
    return str(e)


def refuse(qualname, arg, value, why):
    """Stops the trace: `arg=value` of `qualname` is documented but not what the model runs."""
    raise errors.NkiError("%s: %s=%s is not modelled (%s)" % (qualname, arg, _show(value), why))


def _show(value):
    if isinstance(value, (str, tuple, list)):
        return repr(value)
    if isinstance(value, (bool, int, float)) or value is None:
        return str(value)
    name = getattr(value, "__name__", None)
    if name:
        return name
    return "..." if type(value).__repr__ is object.__repr__ else repr(value)

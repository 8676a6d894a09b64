"""The few `pytest` names NKI test files use, for run.py when pytest is not installed (it is not
required): `pytest.mark.NAME(...)` decorators recorded as pytest records them (a `pytestmark`
list of marks with .name, .args, .kwargs), `pytest.raises`, `pytest.skip`, `pytest.fail`,
`pytest.approx`. run.py honours the marks skip, skipif, xfail and parametrize. With pytest
installed, run.py uses the real module and reads its marks the same way."""

import math


class Mark:
    def __init__(self, name, args, kwargs):
        self.name, self.args, self.kwargs = name, args, kwargs


class MarkDecorator:
    def __init__(self, name, args=(), kwargs=None):
        self.mark = Mark(name, tuple(args), dict(kwargs or {}))

    def __call__(self, *args, **kwargs):
        # As pytest: one function or class and nothing else applies the mark; anything else
        # gives the mark its arguments.
        import inspect

        if len(args) == 1 and not kwargs and (inspect.isfunction(args[0]) or
                                              inspect.isclass(args[0])):
            target = args[0]
            marks = list(getattr(target, "pytestmark", []))
            marks.append(self.mark)
            target.pytestmark = marks
            return target
        return MarkDecorator(self.mark.name, args, kwargs)


class _MarkGenerator:
    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        return MarkDecorator(name)


mark = _MarkGenerator()


class SkipTest(Exception):
    pass


class FailTest(AssertionError):
    pass


def skip(reason=""):
    raise SkipTest(reason)


def fail(reason=""):
    raise FailTest(reason)


class _Raises:
    def __init__(self, expected, match):
        self.expected, self.match = expected, match
        self.value = None

    def __enter__(self):
        return self

    def __exit__(self, kind, value, tb):
        if kind is None:
            raise AssertionError("DID NOT RAISE %s" % (self.expected,))
        if not issubclass(kind, self.expected):
            return False
        if self.match is not None:
            import re

            if not re.search(self.match, str(value)):
                raise AssertionError("pattern %r not found in %r" % (self.match, str(value)))
        self.value = value
        self.type = kind
        return True


def raises(expected, *args, match=None, **kwargs):
    if args:  # pytest.raises(E, func, *args)
        with _Raises(expected, match) as r:
            args[0](*args[1:], **kwargs)
        return r
    return _Raises(expected, match)


class _Approx:
    def __init__(self, expected, rel, abs_):
        self.expected, self.rel, self.abs = expected, rel, abs_

    def __eq__(self, actual):
        try:
            import numpy as np

            return bool(np.allclose(actual, self.expected, rtol=self.rel,
                                    atol=self.abs, equal_nan=False))
        except ImportError:
            return math.isclose(actual, self.expected, rel_tol=self.rel, abs_tol=self.abs)

    def __repr__(self):
        return "approx(%r)" % (self.expected,)


def approx(expected, rel=1e-6, abs=1e-12):  # noqa: A002 (pytest's own argument name)
    return _Approx(expected, rel, abs)

"""`python3 -m ncverify_nki.run FILE.py... [-k TEXT] [-v] [--json]`: runs an NKI test file as
it is, with every kernel it calls on NumPy arrays simulated by ncverify (simulate.py).

The file is imported under its own name (not `__main__`, so its `unittest.main()` block does not
run) with the folder of the stand-in `neuronxcc`/`nki` packages first on the path, then its own
folder (as pytest inserts it). Its tests are collected as unittest and pytest collect them: the
`unittest.TestCase` classes' test methods, module-level `test*` functions, and the methods of
`Test*` classes that are not TestCases; `-k TEXT` keeps the tests whose id contains TEXT. pytest
is not required: without it a small stand-in serves `pytest.mark` (skip, skipif, xfail and
parametrize are honoured, on functions and on TestCase methods alike), `pytest.raises`,
`pytest.skip`, `pytest.fail` and `pytest.approx`; fixtures are not served (a test that asks for
one is an error naming it).

Each test ends as one of: pass; fail (an assertion failed); check (a dynamic check of the
interpreter failed in a kernel: the check, the instruction, the kernel line, the loop indices);
refused (the front end cannot trace a kernel: `FILE.py:LINE: what and why`); error (any other
exception); skip; xfail; xpass. setUpModule, setUpClass, tearDownClass and tearDownModule run
as unittest runs them. Exit 0 when nothing failed, 1 otherwise, 2 when no file could be loaded,
5 when no test was collected (as pytest).
"""

import argparse
import importlib.util
import inspect
import itertools
import json
import os
import sys
import time
import traceback
import unittest

_STAND_INS = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _prepare_path(test_file):
    if _STAND_INS in sys.path:
        sys.path.remove(_STAND_INS)
    sys.path.insert(0, _STAND_INS)
    folder = os.path.dirname(os.path.abspath(test_file))
    if folder not in sys.path:
        sys.path.insert(1, folder)
    try:
        import pytest  # noqa: F401
    except ImportError:
        from . import pytest_shim

        sys.modules["pytest"] = pytest_shim


def load(test_file):
    _prepare_path(test_file)
    name = os.path.splitext(os.path.basename(test_file))[0]
    spec = importlib.util.spec_from_file_location(name, os.path.abspath(test_file))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _marks(obj):
    return [m for m in getattr(obj, "pytestmark", [])]


def _mark_outcome(marks):
    """('skip', reason) / ('xfail', reason) / None for a test's marks."""
    xfail = None
    for m in marks:
        if m.name == "skip":
            return ("skip", m.kwargs.get("reason", m.args[0] if m.args else ""))
        if m.name == "skipif":
            cond = m.args[0] if m.args else m.kwargs.get("condition", False)
            if cond:
                return ("skip", m.kwargs.get("reason", ""))
        if m.name == "xfail":
            cond = m.args[0] if m.args else m.kwargs.get("condition", True)
            if cond:
                xfail = ("xfail", m.kwargs.get("reason", ""))
    return xfail


class Test:
    def __init__(self, test_id, call, marks):
        self.id, self.call, self.marks = test_id, call, marks


def _parametrized(func, marks):
    """(suffix, kwargs) for each parameter set of the function's parametrize marks."""
    sets = [("", {})]
    for m in reversed([m for m in marks if m.name == "parametrize"]):
        names = m.args[0]
        names = [n.strip() for n in names.split(",")] if isinstance(names, str) else list(names)
        values = list(m.args[1] if len(m.args) > 1 else m.kwargs.get("argvalues", []))
        ids = m.kwargs.get("ids")
        new = []
        for (suffix, kw), (k, v) in itertools.product(sets, enumerate(values)):
            v = getattr(v, "values", v)  # pytest.param(...)
            row = (v,) if len(names) == 1 else tuple(v)
            label = ids[k] if ids and k < len(ids) else "-".join(str(x) for x in row)
            new.append((suffix + ("-" if suffix else "") + str(label),
                        dict(kw, **dict(zip(names, row)))))
        sets = new
    return [("[%s]" % s if s else "", kw) for s, kw in sets]


def _function_tests(prefix, func, bind_self=None):
    marks = _marks(func)
    out = []
    for suffix, kw in _parametrized(func, marks):
        wanted = [p for p in inspect.signature(func).parameters if p not in kw]
        if bind_self is not None:
            wanted = wanted[1:]

        def call(func=func, kw=kw, wanted=wanted):
            if wanted:
                raise TypeError("the test asks for the pytest fixture(s) %s, which this runner "
                                "does not provide" % ", ".join(wanted))
            if bind_self is not None:
                obj = bind_self()
                if hasattr(obj, "setup_method"):
                    obj.setup_method(func)
                try:
                    return func(obj, **kw)
                finally:
                    if hasattr(obj, "teardown_method"):
                        obj.teardown_method(func)
            return func(**kw)

        out.append(Test(prefix + suffix, call, marks))
    return out


def collect(module, file_label):
    tests = []
    loader = unittest.TestLoader()
    for name, obj in list(vars(module).items()):
        if getattr(obj, "__module__", None) != module.__name__:
            continue
        if inspect.isclass(obj) and issubclass(obj, unittest.TestCase):
            for method in loader.getTestCaseNames(obj):
                case = obj(method)
                marks = _marks(getattr(obj, method)) + _marks(obj)
                tests.append(Test("%s::%s::%s" % (file_label, name, method), case, marks))
        elif inspect.isclass(obj) and name.startswith("Test"):
            for mname, m in vars(obj).items():
                if mname.startswith("test") and callable(m):
                    tests.extend(_function_tests("%s::%s::%s" % (file_label, name, mname), m,
                                                 bind_self=obj))
        elif inspect.isfunction(obj) and name.startswith("test"):
            tests.extend(_function_tests("%s::%s" % (file_label, name), obj))
    return tests


def _classify(exc):
    from . import simulate

    if isinstance(exc, simulate.KernelNotTraced):
        return "refused"
    if simulate.is_dynamic_check(exc):
        return "check"
    if isinstance(exc, AssertionError):
        return "fail"
    if isinstance(exc, (unittest.SkipTest,)) or type(exc).__name__ == "SkipTest":
        return "skip"
    return "error"


class _Result(unittest.TestResult):
    def __init__(self):
        super().__init__()
        self.outcome = ("pass", None)

    def addError(self, test, err):
        self.outcome = (_classify(err[1]), err)

    def addFailure(self, test, err):
        self.outcome = (_classify(err[1]), err)

    def addSubTest(self, test, subtest, err):
        # A failing `with self.subTest(...)` block fails its test, as under unittest's own
        # runner (the base class only records it in self.failures); the first one is reported.
        if err is not None and self.outcome[0] == "pass":
            self.outcome = (_classify(err[1]), err)

    def addSkip(self, test, reason):
        self.outcome = ("skip", reason)

    def addExpectedFailure(self, test, err):
        self.outcome = ("xfail", err)

    def addUnexpectedSuccess(self, test):
        self.outcome = ("xpass", None)


class _ClassFixtures:
    """setUpModule/setUpClass before a TestCase class's first test and tearDownClass (and
    tearDownModule) after its last, as unittest's suites run them (each test still reports its
    own outcome). A failing setUpClass fails every test of the class with its error."""

    def __init__(self):
        self.current = None  # (module, class) whose setUpClass ran
        self.error = None
        self.modules = set()

    def run_one(self, case, result):
        cls = type(case)
        if self.current is not cls:
            self.close()
            self.error = None
            try:
                mod = sys.modules.get(cls.__module__)
                if mod is not None and mod not in self.modules:
                    self.modules.add(mod)
                    getattr(mod, "setUpModule", lambda: None)()
                cls.setUpClass()
            except BaseException as e:  # noqa: B902
                if isinstance(e, KeyboardInterrupt):
                    raise
                self.error = (type(e), e, e.__traceback__)
            self.current = cls
        if self.error is not None:
            if isinstance(self.error[1], unittest.SkipTest):
                result.addSkip(case, str(self.error[1]))
            else:
                result.addError(case, self.error)
            return
        case.run(result)

    def close(self):
        if self.current is not None and self.error is None:
            try:
                self.current.tearDownClass()
            except Exception:  # noqa: B902 (reported on stderr; the tests have their outcomes)
                traceback.print_exc()
        self.current = None

    def close_modules(self):
        self.close()
        for mod in self.modules:
            try:
                getattr(mod, "tearDownModule", lambda: None)()
            except Exception:  # noqa: B902
                traceback.print_exc()
        self.modules.clear()


_fixtures = _ClassFixtures()


def run_test(test):
    """(outcome, message) of one test."""
    marked = _mark_outcome(test.marks)
    if marked and marked[0] == "skip":
        return "skip", marked[1]
    if isinstance(test.call, unittest.TestCase):
        result = _Result()
        _fixtures.run_one(test.call, result)
        outcome, info = result.outcome
    else:
        try:
            test.call()
            outcome, info = "pass", None
        except BaseException as e:  # noqa: B902 (a test may raise anything)
            if isinstance(e, KeyboardInterrupt):
                raise
            outcome, info = _classify(e), (type(e), e, e.__traceback__)
    if marked and marked[0] == "xfail":
        if outcome == "pass":
            return "xpass", marked[1]
        if outcome not in ("skip",):
            return "xfail", "%s (%s)" % (marked[1], _message(outcome, info))
    return outcome, _message(outcome, info)


_LIBRARIES = {os.path.dirname(unittest.__file__).rsplit(os.sep, 1)[0]}  # the stdlib


def _library_file(filename):
    """A frame of the stand-ins, the standard library or an installed package (numpy.testing
    raising for the user's assert), not of the user's files."""
    path = os.path.abspath(filename)
    return path.startswith(_STAND_INS + os.sep) or filename.startswith("<") or \
        any(path.startswith(lib + os.sep) for lib in _LIBRARIES) or \
        os.sep + "dist-packages" + os.sep in path or os.sep + "site-packages" + os.sep in path


def _message(outcome, info):
    if info is None:
        return ""
    if isinstance(info, str):
        return info
    kind, exc, tb = info
    from . import simulate

    if simulate.is_dynamic_check(exc):
        return simulate.check_message(exc)
    if isinstance(exc, simulate.KernelNotTraced):
        return str(exc)
    where = ""
    frames = traceback.extract_tb(tb)
    for fr in reversed(frames):  # the innermost frame of the user's own files
        if not _library_file(fr.filename):
            where = "%s:%d: " % (fr.filename, fr.lineno)
            break
    text = str(exc) or (frames[-1].line if frames else "")
    return "%s%s: %s" % (where, kind.__name__, text)


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python3 -m ncverify_nki.run",
                                 description="Run NKI test files with ncverify as the simulator")
    ap.add_argument("files", nargs="+")
    ap.add_argument("-k", dest="keyword", default=None, help="run the tests whose id has TEXT")
    ap.add_argument("-v", "--verbose", action="store_true", help="a traceback for each error")
    ap.add_argument("--json", action="store_true", help="one JSON object on standard output")
    args = ap.parse_args(argv)
    results = []
    load_failed = False
    for f in args.files:
        if not os.path.isfile(f):
            sys.stderr.write("%s: no such file\n" % f)
            return 2
        label = os.path.basename(f)
        try:
            module = load(f)
        except BaseException as e:  # noqa: B902 (the file's own import-time code)
            from . import simulate

            load_failed = True
            kind = _classify(e) if isinstance(e, simulate.SimulationError) else "error"
            msg = _message(kind, (type(e), e, e.__traceback__))
            results.append({"test": label, "outcome": "load-" + kind, "message": msg,
                            "seconds": 0.0})
            if not args.json:
                print("%-8s %s: %s" % ("LOAD", label, msg), flush=True)
            continue
        for test in collect(module, label):
            if args.keyword and args.keyword not in test.id:
                continue
            start = time.monotonic()
            outcome, msg = run_test(test)
            seconds = time.monotonic() - start
            results.append({"test": test.id, "outcome": outcome, "message": msg,
                            "seconds": round(seconds, 3)})
            if not args.json:
                line = "%-8s %s (%.2f s)" % (outcome.upper(), test.id, seconds)
                if msg and outcome != "pass":
                    line += "\n         " + msg.replace("\n", "\n         ")
                print(line, flush=True)
    _fixtures.close_modules()
    counts = {}
    for r in results:
        counts[r["outcome"]] = counts.get(r["outcome"], 0) + 1
    bad = sum(n for k, n in counts.items() if k not in ("pass", "skip", "xfail"))
    if args.json:
        print(json.dumps({"results": results, "counts": counts}, indent=1))
    else:
        print("%d tests: %s" % (len(results), ", ".join("%d %s" % (n, k)
                                                         for k, n in sorted(counts.items()))))
    if load_failed and not results:
        return 2
    if not results:
        sys.stderr.write("no tests collected\n")
        return 5  # as pytest: a run that ran nothing is not a pass
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

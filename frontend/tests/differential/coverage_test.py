"""Coverage of the differential tests: every argument of every call of both dialects is
exercised by a differential case or by a refusal case (coverage_table.TABLE), every name of
each dialect's API facade is accounted for, and the calls refused as a whole are refused at the
kernel's line. Run by `python3 -m ncverify_nki.run` (ctest label `frontend`)."""

import glob
import importlib
import os
import re
import unittest

import neuronxcc.nki as nki  # registers the legacy nisa, nl and ncc calls
import neuronxcc.nki.language as nl
from coverage_table import OTHER, TABLE, UNSUPPORTED
from diffharness import dialect_of, run_case
from ncverify_nki import allowlist, signatures

HERE = os.path.dirname(os.path.abspath(__file__))

# The qualname prefix of each facade module's calls (signatures.api's names).
_PREFIX = {"neuronxcc.nki.isa": "nisa.", "neuronxcc.nki.language": "nl.",
           "neuronxcc.nki.compiler": "ncc.", "nki.isa": "nisa.", "nki.language": "nl.",
           "nki.compiler": "ncc."}


def _load_new_dialect():
    """Imports the new dialect's modules when they exist (issue 45), so that their calls are
    registered too."""
    for mod in ("nki.isa", "nki.language"):
        if mod in allowlist.NKI_API:
            importlib.import_module(mod)


def _dialect_of_facade(module):
    return "neuronxcc" if module.startswith("neuronxcc") else "nki"


def _registered():
    """{(dialect, qualname): [argument names]} of every registered call."""
    _load_new_dialect()
    out = {}
    for (module, qualname), sig in signatures.SIGNATURES.items():
        names = [n for n, p in sig.parameters.items()
                 if n != "self" and p.kind != p.VAR_KEYWORD]
        out[(dialect_of(module), qualname)] = names
    return out


def _case_names():
    """The names of the cases the test files of this folder run (run_case("NAME", ...))."""
    names = set()
    for path in glob.glob(os.path.join(HERE, "*_test.py")):
        with open(path) as f:
            names.update(re.findall(r'run_case\(\s*"([A-Za-z0-9_]+)"', f.read()))
    return names


@nki.jit
def tiles_kernel(*arrays, body):
    outs = []
    for r in body(*[nl.load(a) for a in arrays]):
        o = nl.ndarray(r.shape, dtype=r.dtype, buffer=nl.shared_hbm)
        nl.store(o, r)
        outs.append(o)
    return tuple(outs)


class Coverage(unittest.TestCase):
    def test_every_argument_of_every_call_has_a_case(self):
        missing, stale = [], []
        registered = _registered()
        for (dialect, call), args in sorted(registered.items()):
            rows = TABLE.get(dialect, {}).get(call)
            if rows is None:
                missing.append("%s %s (the whole call)" % (dialect, call))
                continue
            missing += ["%s %s(%s=)" % (dialect, call, a) for a in args if a not in rows]
            stale += ["%s %s(%s=)" % (dialect, call, a) for a in rows if a not in args]
        for dialect, calls in TABLE.items():
            stale += ["%s %s" % (dialect, c) for c in calls if (dialect, c) not in registered]
        self.assertEqual(missing, [], "arguments no differential or refusal case covers")
        self.assertEqual(stale, [], "coverage_table rows for arguments the calls do not have")

    def test_every_case_in_the_table_exists(self):
        cases = _case_names()
        unknown = sorted({case for calls in TABLE.values() for args in calls.values()
                          for v in args.values()
                          for case in ((v,) if isinstance(v, str) else v)} - cases)
        self.assertEqual(unknown, [], "coverage_table names cases no test file runs")

    def test_every_facade_name_is_accounted_for(self):
        registered = _registered()
        unaccounted, stale = [], []
        for module, names in allowlist.NKI_API.items():
            dialect = _dialect_of_facade(module)
            prefix = _PREFIX.get(module)
            unsupported = UNSUPPORTED.get(dialect, {}).get(module, ())
            other = OTHER.get(dialect, {}).get(module, {})
            for n in names:
                call = prefix + n if prefix else None
                if (dialect, call) in registered or n in unsupported or n in other:
                    continue
                unaccounted.append("%s.%s" % (module, n))
            stale += ["%s.%s" % (module, n) for n in list(unsupported) + list(other)
                      if n not in names]
        self.assertEqual(unaccounted, [], "facade names with no case and no reason")
        self.assertEqual(stale, [], "coverage_table lists names the facade does not have")

    def test_unsupported_calls(self):
        """Each call refused as a whole is refused at the kernel's line, naming it."""
        def body(c):
            a = c.floats((8, 8))
            for dialect, modules in UNSUPPORTED.items():
                if dialect != "neuronxcc":
                    continue  # the new dialect's: nki_language_test.py (a kernel file of it)
                for module, names in modules.items():
                    m = importlib.import_module(module)
                    for n in names:
                        fn = getattr(m, n)
                        call = lambda t: fn(t)  # noqa: E731
                        c.refused(tiles_kernel, (a,), {"body": lambda t: [call(t)]},
                                  "%s.%s" % (module, n), n, call)
        run_case("unsupported_calls", body)


if __name__ == "__main__":
    unittest.main()

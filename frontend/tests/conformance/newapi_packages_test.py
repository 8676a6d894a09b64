"""Kernels of today's API in a package, as nki-library's are: a local module whose dataclasses
have string annotations (`from __future__ import annotations`: dataclasses resolves them through
sys.modules[cls.__module__], so the front end enters the kernel's local modules there, never
under a name that is already taken or that Python finds elsewhere), and names of
nki.collectives imported at module level (importable; a call is refused). Each package is
written to a temporary folder and traced by `ncverify import`. Run by `python3 -m
ncverify_nki.run` (ctest label `conformance`)."""

import ast
import os
import subprocess
import sys
import tempfile
import unittest

import newapi_fallback_kernel as fallback_kernel
import newapi_typing_kernel as typing_kernel
import nki
import numpy as np
from ncverify_nki import dialect, sandbox
from ncverify_nki.simulate import ncverify_binary

CONFIG = '''from __future__ import annotations

from dataclasses import dataclass, field
from typing import ClassVar


@dataclass
class Tiling:
    rows: "int" = 128  # a quoted annotation, as nki-library's configs have
    cols: int = 64
    names: list[str] = field(default_factory=list)
    LIMIT: ClassVar[int] = 512
'''

KERNEL = '''from __future__ import annotations

import nki
import nki.isa as nisa
import nki.language as nl

try:
    from nki.collectives import ReplicaGroup, all_reduce
except ImportError:
    ReplicaGroup = None

from .config import Tiling


@nki.jit
def copy_rows(x, reduce=False):
    t = Tiling()
    out = nl.ndarray((t.rows, t.cols), dtype=x.dtype, buffer=nl.shared_hbm)
    s = nl.ndarray((t.rows, t.cols), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=s, src=x[0:t.rows, 0:t.cols])
    if reduce:
        all_reduce([s], [s], ReplicaGroup([[0, 1]]), nl.add)
    nisa.dma_copy(dst=out, src=s)
    return out
'''


def write_package(root, name):
    pkg = os.path.join(root, name)
    os.makedirs(pkg)
    for f, text in (("__init__.py", ""), ("config.py", CONFIG), ("kernel.py", KERNEL)):
        with open(os.path.join(pkg, f), "w") as fh:
            fh.write(text)
    return os.path.join(pkg, "kernel.py")


def ncverify(*args):
    return subprocess.run([ncverify_binary()] + list(args), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True)


class Packages(unittest.TestCase):
    def test_dataclasses_with_string_annotations_load(self):
        with tempfile.TemporaryDirectory() as d:
            r = ncverify("import", write_package(d, "ncv_tiled_pkg") + ":copy_rows",
                         "--input", "x=fp32[128,64]")
            self.assertEqual(r.returncode, 0, r.stderr)
            self.assertIn("dma_copy out", r.stdout)

    def test_a_collective_call_is_refused_at_its_line(self):
        with tempfile.TemporaryDirectory() as d:
            r = ncverify("import", write_package(d, "ncv_tiled_pkg") + ":copy_rows",
                         "--input", "x=fp32[128,64]", "--param", "reduce=true")
            self.assertEqual(r.returncode, 2)
            self.assertIn("kernel.py:22: nki.collectives.ReplicaGroup is not modelled "
                          "(collectives move data between NeuronCores", r.stderr)


class Registration(unittest.TestCase):
    """sandbox._may_register: which local top-level packages enter sys.modules."""

    def test_a_fresh_name_may(self):
        with tempfile.TemporaryDirectory() as d:
            init = os.path.join(d, "ncv_fresh_pkg_for_test", "__init__.py")
            self.assertTrue(sandbox._may_register("ncv_fresh_pkg_for_test", init))

    def test_a_loaded_module_never_does(self):
        self.assertIn("unittest", sys.modules)
        self.assertFalse(sandbox._may_register("unittest", "/elsewhere/unittest/__init__.py"))

    def test_a_module_python_finds_elsewhere_never_does(self):
        self.assertNotIn("email", sys.modules)  # the standard library's, not yet imported
        self.assertFalse(sandbox._may_register("email", "/kernels/email/__init__.py"))


if __name__ == "__main__":
    unittest.main()


# The typing kernel with one more import, of the legacy API's language module: that import has
# the legacy semantics, so the kernel imports both APIs and is refused.
LEGACY_TWIN = open(typing_kernel.__file__).read().replace(
    "import nki\n", "import nki\nimport neuronxcc.nki.language as legacy_nl\n")


class LegacyTypingAnnotations(unittest.TestCase):
    """`neuronxcc.nki.typing` in a kernel of today's API: annotations only (nki-library's
    router_topk.py), so the kernel keeps the new API's semantics; any other neuronxcc import
    is the legacy API, and with `nki` as well the kernel is refused (both APIs)."""

    def dialect(self, src):
        return dialect.of_trees([ast.parse(src)])

    def test_the_typing_module_alone_leaves_the_new_api(self):
        for src in ("import nki\nimport neuronxcc.nki.typing as nt\n",
                    "import nki\nfrom neuronxcc.nki import typing as nt\n",
                    "import nki.isa as nisa\nfrom neuronxcc.nki.typing import mutable_tensor\n"):
            self.assertEqual(self.dialect(src), dialect.NEW, src)

    def test_any_other_neuronxcc_import_is_legacy(self):
        for src in ("import nki\nimport neuronxcc.nki.language as nl\n",
                    "import nki\nfrom neuronxcc.nki import typing, language\n",
                    "import nki\nfrom neuronxcc import nki as legacy\n",
                    "import nki\nimport neuronxcc.nki as legacy\n",
                    "import neuronxcc.nki.typing as nt\n"):
            self.assertEqual(self.dialect(src), dialect.LEGACY, src)

    def test_simulated_against_numpy(self):
        rng = np.random.default_rng(45)
        x = rng.standard_normal((128, 64)).astype(np.float32)
        out = np.zeros_like(x)
        nki.simulate(typing_kernel.affine_rows)(x, out)
        want = (x * np.float32(2.0)).astype(np.float32) + np.float32(1.0)
        self.assertTrue(np.array_equal(out, want), "max diff %g" % np.max(np.abs(out - want)))

    def test_a_legacy_language_import_as_well_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "legacy_twin.py")
            with open(path, "w") as fh:
                fh.write(LEGACY_TWIN)
            r = ncverify("import", path + ":affine_rows", "--input", "x=fp32[128,64]",
                         "--input", "out=fp32[128,64]")
            self.assertEqual(r.returncode, 2, r.stdout)
            # refused at the legacy import, naming the nki import: both APIs in one kernel
            self.assertIn("legacy_twin.py:7: this kernel imports the legacy neuronxcc.nki API "
                          "here and today's nki API at %s:6" % path, r.stderr)

    def test_conflict_names_the_first_import_of_each(self):
        files = {"a.py": ("", ast.parse("import os\nimport nki.isa as nisa\n")),
                 "b.py": ("", ast.parse("import neuronxcc.nki.typing as nt\n"
                                        "from neuronxcc.nki import language\n"))}
        self.assertEqual(dialect.conflict(files), (("a.py", 2), ("b.py", 2)))
        files["b.py"] = ("", ast.parse("import neuronxcc.nki.typing as nt\n"))
        self.assertIsNone(dialect.conflict(files))
        files["a.py"] = ("", ast.parse("try:\n    import nki\nexcept ImportError:\n"
                                       "    import neuronxcc.nki as nki\n"))
        self.assertIsNone(dialect.conflict(files))

# The fallback kernel with its legacy imports moved out of the except handler: they run, so the
# kernel imports both APIs and is refused.
FALLBACK_TWIN = open(fallback_kernel.__file__).read().replace(
    "except ImportError:\n    import neuronxcc.nki as nki\n", "finally:\n    import neuronxcc.nki as nki\n")


class FallbackImports(unittest.TestCase):
    """`try: import nki ... except ImportError: import neuronxcc.nki ...`: the handler runs only
    where `nki` is missing, so the kernel is traced with today's API."""

    def dialect(self, src):
        return dialect.of_trees([ast.parse(src)])

    def test_imports_in_an_import_error_handler_do_not_count(self):
        for handler in ("except ImportError:", "except ModuleNotFoundError:",
                        "except (ImportError, AttributeError):", "except:"):
            src = "try:\n    import nki.isa as nisa\n%s\n    import neuronxcc.nki.isa as nisa\n" \
                % handler
            self.assertEqual(self.dialect(src), dialect.NEW, src)

    def test_other_handlers_and_other_try_bodies_count(self):
        for src in (
                # a handler of another exception may run: the legacy import counts
                "try:\n    import nki\nexcept ValueError:\n    import neuronxcc.nki as nki\n",
                # the try body does not import nki: its handler is not a fallback from nki
                "import nki\ntry:\n    import torch\nexcept ImportError:\n"
                "    import neuronxcc.nki.language as nl\n",
                # the legacy import in the body, nki in the handler: legacy
                "try:\n    import neuronxcc.nki as nki\nexcept ImportError:\n    import nki\n"):
            self.assertEqual(self.dialect(src), dialect.LEGACY, src)

    def test_simulated_against_numpy(self):
        rng = np.random.default_rng(7)
        x = rng.standard_normal((96, 64)).astype(np.float32)
        out = nki.simulate(fallback_kernel.transposed)(x)
        self.assertTrue(np.array_equal(out, x.T))

    def test_imported_by_the_command_line(self):
        r = ncverify("import", fallback_kernel.__file__ + ":transposed", "--input",
                     "x=fp32[96,64]")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("transpose p[", r.stdout)

    def test_a_legacy_import_that_runs_is_refused(self):
        self.assertNotEqual(FALLBACK_TWIN, open(fallback_kernel.__file__).read())
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "fallback_twin.py")
            with open(path, "w") as fh:
                fh.write(FALLBACK_TWIN)
            r = ncverify("import", path + ":transposed", "--input", "x=fp32[96,64]")
            self.assertEqual(r.returncode, 2, r.stdout)
            self.assertIn("fallback_twin.py:10: this kernel imports the legacy neuronxcc.nki "
                          "API here", r.stderr)


# The fallback kernel with a stub in its handler that the kernel language refuses (a dunder
# written): the handler never runs where nki is served, so it is not checked...
FALLBACK_STUB = open(fallback_kernel.__file__).read().replace(
    "    import neuronxcc.nki.language as nl\n",
    "    import neuronxcc.nki.language as nl\n\n    def _stub(fn):\n"
    "        fn.__wrapped__ = fn\n        return fn\n")
# ...unless the try body imports something else as well, which the handler may stand in for.
STUB_AFTER_OTHER_IMPORTS = FALLBACK_STUB.replace("    import nki\n", "    import nki\n    import torch\n")


class UnreachableFallbacks(unittest.TestCase):
    def trace(self, text):
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "stub_kernel.py")
            with open(path, "w") as fh:
                fh.write(text)
            return ncverify("import", path + ":transposed", "--input", "x=fp32[96,64]")

    def test_a_handler_that_cannot_run_is_not_checked(self):
        self.assertIn("__wrapped__", FALLBACK_STUB)
        r = self.trace(FALLBACK_STUB)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("transpose p[", r.stdout)

    def test_a_handler_that_may_run_is_checked(self):
        self.assertIn("import torch", STUB_AFTER_OTHER_IMPORTS)
        r = self.trace(STUB_AFTER_OTHER_IMPORTS)
        self.assertEqual(r.returncode, 2, r.stdout)
        self.assertIn("stub_kernel.py:16: tamper: reads attribute __wrapped__", r.stderr)

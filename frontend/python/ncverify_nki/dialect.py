"""Which NKI API a kernel is written in: the legacy `neuronxcc.nki` (calls return their results,
`dtype=`/`mask=`) or today's `nki` package (NKI 0.2-0.6: destination-first calls). The two share
names (`nl`, `nisa`) but not semantics, so the kernel's own imports decide: a file that imports
`neuronxcc` is legacy (since NKI 0.4.0 `neuronxcc.nki` inside an `nki` kernel is a compile error,
Neuron SDK 2.30 release notes), one that imports only `nki` is the new API."""

import ast

LEGACY = "neuronxcc"
NEW = "nki"


def of_trees(trees):
    """The dialect of a kernel whose file and local modules parse to `trees`. A kernel that
    imports `nki` and, of `neuronxcc`, only `neuronxcc.nki.typing` is the new API: that module's
    names (`tensor`, `mutable_tensor`, `scalar`) are annotations, the same in `nki.typing`, so
    they carry no semantics of the legacy API (nki-library d2ad3a5's
    `core/router_topk/router_topk.py` annotates its output arguments with
    `neuronxcc.nki.typing.mutable_tensor` and is otherwise written in the new API).

    An import in the `except ImportError:` handler of a `try` whose body imports `nki` does not
    count: it runs only when `nki` is missing, and the stand-ins serve `nki` (public kernels
    written for both SDK layouts do `try: import nki ... except ImportError: import
    neuronxcc.nki as nki ...`, and run with the new API wherever `nki` exists)."""
    kinds = {kind for tree in trees for _, kind in _imports(tree)}
    if "legacy" in kinds or ("typing" in kinds and "new" not in kinds):
        return LEGACY
    return NEW if "new" in kinds else LEGACY


def conflict(files):
    """For a kernel whose files ({path: (source, tree)}) import both APIs with their semantics
    (`nki` and a `neuronxcc` module other than the typing annotations, outside fallbacks): the
    first import of each, ((path, line), (path, line)); else None. Such a kernel would run the
    new API's stand-ins under the legacy API's rules; since NKI 0.4.0 `neuronxcc.nki` inside a
    kernel is a compile error (migration guide, "neuronxcc.nki.* inside kernels")."""
    first = {}
    for path, (_, tree) in files.items():
        if tree is None:
            continue
        for node, kind in _imports(tree):
            if kind in ("new", "legacy"):
                where = (path, node.lineno)
                if kind not in first or where < first[kind]:
                    first[kind] = where
    if "new" in first and "legacy" in first:
        return first["new"], first["legacy"]
    return None


def _imports(tree):
    """(node, kind) for each import of an NKI package in `tree` that runs: kind "new" (`nki`),
    "legacy" (`neuronxcc`, other than the typing annotations) or "typing"
    (`neuronxcc.nki.typing`); imports in fallback handlers are left out."""
    fallbacks = _fallback_imports(tree)
    for node in ast.walk(tree):
        if id(node) in fallbacks:
            continue
        if isinstance(node, ast.Import):
            for a in node.names:
                root = a.name.split(".")[0]
                if root == NEW:
                    yield node, "new"
                elif root == LEGACY:
                    yield node, "typing" if _typing_only(a.name, ()) else "legacy"
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            root = node.module.split(".")[0]
            if root == NEW:
                yield node, "new"
            elif root == LEGACY:
                typing = _typing_only(node.module, [a.name for a in node.names])
                yield node, "typing" if typing else "legacy"


_TYPING = "neuronxcc.nki.typing"
_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")


def _fallback_imports(tree):
    """ids of the import nodes inside `except ImportError` (or ModuleNotFoundError, or a bare
    `except`) handlers of a `try` whose body imports the `nki` package."""
    out = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.Try) or not _imports_nki(node.body):
            continue
        for handler in node.handlers:
            if _catches_import_errors(handler.type):
                for stmt in handler.body:
                    out.update(id(n) for n in ast.walk(stmt)
                               if isinstance(n, (ast.Import, ast.ImportFrom)))
    return out


def _imports_nki(stmts):
    for stmt in stmts:
        for n in ast.walk(stmt):
            if isinstance(n, ast.Import) and any(a.name.split(".")[0] == NEW for a in n.names):
                return True
            if isinstance(n, ast.ImportFrom) and n.module and not n.level and \
                    n.module.split(".")[0] == NEW:
                return True
    return False


def _catches_import_errors(t):
    if t is None:
        return True
    names = t.elts if isinstance(t, ast.Tuple) else [t]
    return any(isinstance(n, ast.Name) and n.id in _IMPORT_ERRORS for n in names)


def _typing_only(module, names):
    """Whether `import MODULE` / `from MODULE import NAMES` brings in only neuronxcc.nki.typing
    (or its names)."""
    if module == _TYPING:
        return True
    return module == "neuronxcc.nki" and bool(names) and all(n == "typing" for n in names)


def of_file(path):
    """The dialect of the kernel defined in `path` (the simulator's kernels, which run outside
    the tracer's checked loading)."""
    try:
        with open(path, encoding="utf-8") as f:
            return of_trees([ast.parse(f.read(), path)])
    except (OSError, SyntaxError, ValueError):
        return LEGACY

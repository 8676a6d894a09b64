"""Which NKI API a kernel is written in: the legacy `neuronxcc.nki` (calls return their results,
`dtype=`/`mask=`) or today's `nki` package (NKI 0.2-0.6: destination-first calls). The two share
names (`nl`, `nisa`) but not semantics, so the kernel's own imports decide: a file that imports
`neuronxcc` is legacy (since NKI 0.4.0 `neuronxcc.nki` inside an `nki` kernel is a compile error,
Neuron SDK 2.30 release notes), one that imports only `nki` is the new API."""

import ast

LEGACY = "neuronxcc"
NEW = "nki"


def of_trees(trees):
    """The dialect of a kernel whose file and local modules parse to `trees`."""
    roots = set()
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                roots.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                roots.add(node.module.split(".")[0])
    if LEGACY in roots:
        return LEGACY
    return NEW if NEW in roots else LEGACY


def of_file(path):
    """The dialect of the kernel defined in `path` (the simulator's kernels, which run outside
    the tracer's checked loading)."""
    try:
        with open(path, encoding="utf-8") as f:
            return of_trees([ast.parse(f.read(), path)])
    except (OSError, SyntaxError, ValueError):
        return LEGACY

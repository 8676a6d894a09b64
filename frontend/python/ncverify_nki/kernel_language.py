"""The kernel language, checked before any of it runs: the kernel file and every local module it
imports are parsed and held against allowlist.py. A construct outside the NKI subset that could
reach the tracer or the host is tampering (`Tamper`, reported as such by `adopt`); a construct
that is merely unsupported is an ordinary error. Nothing of the file has run when either is
raised.
"""

import ast
import os
import string

from . import allowlist, errors


# The builtin that checks a read, write or deletion of a private attribute (`x._name`) when it runs
# (sandbox.kernel_private); a dunder, so no kernel can name it.
PRIVATE_CHECK = "__ncverify_private__"


class Tamper(Exception):
    """A kernel that reaches past the NKI language: into the tracer, the interpreter or the
    host. `where` is (file, line)."""

    def __init__(self, message, where):
        super().__init__(message)
        self.message = message
        self.where = where


def module_kind(name):
    """How an import of module `name` is served: 'nki' (the stand-ins' facade), 'numpy', 'pure'
    (a facade of an allowed standard module), 'forbidden' (refused as tampering), 'host' (an
    inert placeholder whose use is tampering), or 'other' (a local module when one is found next
    to the kernel, else an inert placeholder)."""
    root = name.split(".")[0]
    if root in allowlist.NKI_PACKAGES:
        return "nki"
    if name == "__future__":  # compiler directives (allowlist.PURE_MODULES)
        return "pure"
    if root in allowlist.REFUSED_MODULES or root.startswith("_") or \
            root.startswith("ncverify"):
        return "forbidden"
    if root in allowlist.HOST_MODULES:
        return "host"
    if name == "numpy" or (name.startswith("numpy.") and
                           name.split(".", 1)[1] in allowlist.NUMPY_SUBMODULES):
        return "numpy"
    if name in allowlist.PURE_MODULES:
        return "pure"
    return "other"


def local_module_file(name, directories):
    """The file of local module `name` (a .py file or a package's __init__.py under one of
    `directories`, the first that has it), or None."""
    parts = name.split(".")
    for directory in directories:
        base = os.path.join(directory, *parts)
        for candidate in (base + ".py", os.path.join(base, "__init__.py")):
            if os.path.isfile(candidate):
                return os.path.abspath(candidate)
    return None


def package_of_file(path):
    """Where a file sits in a package: (the directory holding its top-level package, the file's
    dotted module name, the dotted name of its package) found by walking up the directories that
    have an __init__.py; None when the file's directory is not a package."""
    directory = os.path.dirname(os.path.abspath(path))
    parts = []
    while os.path.isfile(os.path.join(directory, "__init__.py")) and \
            os.path.basename(directory).isidentifier():
        parts.insert(0, os.path.basename(directory))
        directory = os.path.dirname(directory)
    if not parts:
        return None
    stem = os.path.splitext(os.path.basename(path))[0]
    package = ".".join(parts)
    name = package if stem == "__init__" else package + "." + stem
    return directory, name, package


def resolve_relative(package, level, module, where):
    """The absolute name of `from <level dots><module> import ...` in a module of `package`."""
    if package is None:
        raise errors.NkiError("a relative import (from %s%s import ...) in a file that is not in "
                              "a package (no __init__.py beside it)" % ("." * level, module or ""),
                              where)
    parts = package.split(".")
    if level - 1 >= len(parts):
        raise errors.NkiError("a relative import (from %s%s import ...) goes above the top-level "
                              "package %s" % ("." * level, module or "", parts[0]), where)
    base = parts[:len(parts) - (level - 1)]
    return ".".join(base + ([module] if module else []))


def _format_fields_are_plain(text):
    """True when a str.format template only names positional or keyword arguments: a field such
    as {0.__class__} or {x[k]} reads attributes or items of its argument. A field's format spec
    is text ('{:.3f}': its '.' is a precision) except for the fields nested in it
    ('{:{0.__class__}}'), which are checked the same way (Python's format-string syntax,
    https://docs.python.org/3/library/string.html#format-string-syntax: "A format_spec field can
    also include nested replacement fields within it")."""
    try:
        for _, field, spec, _ in string.Formatter().parse(text):
            if field and ("." in field or "[" in field):
                return False
            if spec and not _format_fields_are_plain(spec):
                return False
    except ValueError:
        return False
    return True


class _Checker(ast.NodeVisitor):
    def __init__(self, path, directories, package):
        self.path = path
        self.directories = directories  # where local modules are looked for
        self.package = package  # the dotted package the file is in, or None
        self.local_modules = {}  # module name -> file
        self.module_names = set()  # names an import binds (writes to their attributes refused)
        self.nki_names = set()  # names bound to the NKI modules (their facades check '_' names)
        self.bound = set()  # every name the file binds anywhere
        self.private_attributes = []  # `x._name` nodes, checked when they run

    def fail(self, node, message):
        raise Tamper(message, (self.path, getattr(node, "lineno", 0)))

    # ------------------------------------------------------------------ imports
    def _import(self, node, name):
        kind = module_kind(name)
        if kind == "forbidden":
            self.fail(node, "imports %s: a kernel may import the NKI modules, numpy and pure "
                            "standard modules (%s), not modules that reach the interpreter's "
                            "internals, the OS or the tracer" % (name, ", ".join(sorted(
                                allowlist.PURE_MODULES))))
        if kind == "other":
            f = local_module_file(name, self.directories)
            if f is not None:
                self.local_modules[name] = f

    def visit_Import(self, node):
        for alias in node.names:
            self._import(node, alias.name)
            if module_kind(alias.name) in ("nki", "numpy", "pure"):
                self.module_names.add((alias.asname or alias.name).split(".")[0])
            if module_kind(alias.name) == "nki":
                self.nki_names.add((alias.asname or alias.name).split(".")[0])
        self.generic_visit(node)

    def visit_ImportFrom(self, node):
        module = node.module
        if node.level:  # from .m import x, from ..pkg.m import x: a module of the file's package
            module = resolve_relative(self.package, node.level, node.module,
                                      (self.path, node.lineno))
        kind = module_kind(module)
        if kind == "forbidden":
            self._import(node, module)
        submodules = 0
        for alias in node.names:
            own = kind == "other" and local_module_file(module, self.directories) is not None
            if alias.name.startswith("__") or (alias.name.startswith("_") and not own):
                # A private name of the kernel's own module (nki-library's `from .mlp_parameters
                # import _Q_HEIGHT`) is its own code, checked like the rest; a dunder reaches the
                # interpreter, another module's private name its internals.
                self.fail(node, "imports %s from %s: names starting with '_' are private to the "
                                "module" % (alias.name, module))
            full = module + "." + alias.name
            if kind == "other" and local_module_file(full, self.directories):
                self.local_modules[full] = local_module_file(full, self.directories)
                submodules += 1
            if kind == "nki":
                self.nki_names.add(alias.asname or alias.name)
            if kind in ("nki", "numpy", "pure"):  # read-only names
                self.module_names.add(alias.asname or alias.name)
        # The module itself runs unless every name imported is a submodule of it (a package's
        # __init__.py runs only when a name is taken from it: README "Kernels in a package")
        if kind != "other" or submodules < len(node.names):
            self._import(node, module)
            if node.level and module not in self.local_modules:
                raise errors.NkiError("a relative import (from %s%s import %s): the package has "
                                      "no module %s" % ("." * node.level, node.module or "",
                                                        ", ".join(a.name for a in node.names),
                                                        module), (self.path, node.lineno))
        self.generic_visit(node)

    # --------------------------------------------------------------- attributes
    def visit_Attribute(self, node):
        if node.attr.startswith("_") and not node.attr.startswith("__") and \
                not self._nki_private(node):
            # self._stats, allocator._current_address: a private name of the kernel's own
            # objects, checked when it runs (sandbox.kernel_private: only objects of the kernel's
            # own classes and its own modules)
            self.private_attributes.append(node)
        elif node.attr.startswith("_") and not self._super_dunder(node) and \
                not self._nki_private(node):
            self.fail(node, "reads attribute %s: names starting with '_' reach the interpreter's "
                            "internals (dunders) or the NKI stand-ins' private state" % node.attr)
        if node.attr in allowlist.FORBIDDEN_ATTRIBUTES:
            self.fail(node, "reads attribute %s: it leads from an object to frames, code, "
                            "globals, raw memory or files" % node.attr)
        if isinstance(node.ctx, (ast.Store, ast.Del)):
            root = node.value
            while isinstance(root, ast.Attribute):
                root = root.value
            if isinstance(root, ast.Name) and root.id in self.module_names:
                self.fail(node, "writes attribute %s of module %s: the NKI stand-ins and the "
                                "modules a kernel imports are read-only" % (node.attr, root.id))
        self.generic_visit(node)

    def _nki_private(self, node):
        # nisa._tiled_offloaded_fma: a private name of the Neuron SDK's own module, which a kernel
        # file may name (nki-samples' llama3_transformer.py); the facade decides when it runs (the
        # front end's own names are tampering, others are not served)
        return not node.attr.startswith("__") and isinstance(node.value, ast.Name) and \
            node.value.id in self.nki_names and isinstance(node.ctx, ast.Load)

    @staticmethod
    def _super_dunder(node):
        # super().__init__(...) in a config class's constructor (the zero-argument form only: it
        # names the class being defined, never one of the stand-ins')
        return node.attr in ("__init__", "__post_init__") and isinstance(node.value, ast.Call) \
            and isinstance(node.value.func, ast.Name) and node.value.func.id == "super" and \
            not node.value.args and not node.value.keywords

    def visit_MatchClass(self, node):
        # `case object(_view=v)` reads the attribute `_view` without an attribute expression
        for attr in node.kwd_attrs:
            if attr.startswith("_") or attr in allowlist.FORBIDDEN_ATTRIBUTES:
                self.fail(node, "a class pattern reads attribute %s: names starting with '_' and "
                                "the interpreter's attributes are out of the kernel language" %
                          attr)
        self.generic_visit(node)

    # -------------------------------------------------------------------- names
    def visit_Name(self, node):
        name = node.id
        if name.startswith("__") and name.endswith("__") and len(name) > 4:
            if name not in allowlist.ALLOWED_DUNDER_NAMES or not isinstance(node.ctx, ast.Load):
                self.fail(node, "uses %s: the module's and the interpreter's dunder names are out "
                                "of the kernel language (only reading %s is allowed)" %
                          (name, " and ".join(allowlist.ALLOWED_DUNDER_NAMES)))
        if name in allowlist.FORBIDDEN_BUILTINS and name not in self.bound:
            self.fail(node, "uses %s: code from strings, files, namespaces and attributes by "
                            "computed name are out of the kernel language" % name)

    def visit_Call(self, node):
        f = node.func
        if isinstance(f, ast.Name) and f.id in ("getattr", "hasattr") and f.id not in self.bound:
            name = node.args[1] if len(node.args) >= 2 else None
            constant = isinstance(name, ast.Constant) and isinstance(name.value, str)
            if constant and (name.value.startswith("_") or
                             name.value in allowlist.FORBIDDEN_ATTRIBUTES):
                self.fail(node, "%s(..., %r): names starting with '_' and the interpreter's "
                                "attributes are out of the kernel language" % (f.id, name.value))
            # (a computed name is checked when the call runs: sandbox._checked_getattr)
        if isinstance(f, ast.Attribute) and f.attr == "format":
            template = f.value
            if not (isinstance(template, ast.Constant) and isinstance(template.value, str)):
                self.fail(node, "calls .format on a computed string: a format template can read "
                                "attributes of its arguments ({0.attr}); use an f-string")
            if not _format_fields_are_plain(template.value):
                self.fail(node, "the format template %r reads attributes or items of its "
                                "arguments" % template.value)
        self.generic_visit(node)


def _bound_names(tree):
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            out.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, ast.arg):
            out.add(node.arg)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                out.add((alias.asname or alias.name).split(".")[0])
    return out


def _drop_main_blocks(tree):
    """Empties the body of each top-level `if __name__ == "__main__":` (its `else` stays): the
    tracer loads every file as a module, never as __main__, so that body never runs, and what it
    holds (a test harness calling exit(), subprocess, open(), ...) is neither checked nor kept.
    What is checked is what runs: the emptied tree is the one executed."""
    for node in tree.body:
        if isinstance(node, ast.If) and _is_main_test(node.test):
            node.body = [ast.copy_location(ast.Pass(), node)]


_IMPORT_ERRORS = ("ImportError", "ModuleNotFoundError")


def _drop_unreachable_fallbacks(tree):
    """Empties the `except ImportError:` (or ModuleNotFoundError, or bare) handlers of each `try`
    whose body only imports served modules of the `nki` package (and binds constants): the
    stand-ins serve those imports, so the handler never runs (public kernels written for both
    SDK layouts fall back to neuronxcc.nki or to a stub there). What is checked is what runs."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Try) and node.body and all(_serves(st) for st in node.body):
            for handler in node.handlers:
                if _catches_import_errors(handler.type):
                    handler.body = [ast.copy_location(ast.Pass(), handler)]


def _serves(stmt):
    """An import of served nki modules only, or a name bound to a constant."""
    if isinstance(stmt, ast.Import):
        return all(a.name in allowlist.NKI_API and a.name.split(".")[0] == "nki"
                   for a in stmt.names)
    if isinstance(stmt, ast.Assign):
        return isinstance(stmt.value, ast.Constant) and \
            all(isinstance(t, ast.Name) for t in stmt.targets)
    return isinstance(stmt, ast.Pass)


def _catches_import_errors(t):
    if t is None:
        return True
    names = t.elts if isinstance(t, ast.Tuple) else [t]
    return any(isinstance(n, ast.Name) and n.id in _IMPORT_ERRORS for n in names)


def _is_main_test(test):
    """`__name__ == "__main__"` or `"__main__" == __name__`."""
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and
            isinstance(test.ops[0], ast.Eq)):
        return False
    sides = (test.left, test.comparators[0])
    names = [x for x in sides if isinstance(x, ast.Name) and x.id == "__name__"]
    mains = [x for x in sides if isinstance(x, ast.Constant) and x.value == "__main__"]
    return len(names) == 1 and len(mains) == 1


def read_source(path):
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as e:
        raise errors.NkiError("cannot read %s: %s" % (path, e.strerror), (path, 0))
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise errors.NkiError("%s is not UTF-8 text (byte %d)" % (path, e.start), (path, 0))


def check_file(path, directories, package, source):
    """Checks one file's source (a module of `package`, None outside a package); returns (tree,
    {local module name: file})."""
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as e:
        raise errors.NkiError("syntax error: %s" % e.msg, (path, e.lineno or 0))
    except ValueError as e:  # null bytes
        raise errors.NkiError("cannot parse: %s" % e, (path, 0))
    _drop_main_blocks(tree)
    _drop_unreachable_fallbacks(tree)
    checker = _Checker(path, directories, package)
    checker.bound = _bound_names(tree)
    checker.visit(tree)
    for node in checker.private_attributes:
        # x._name becomes PRIVATE_CHECK(x, "_name")._name: the check sees the object before any
        # load, store or delete of the name (the check cannot be named by a kernel: a dunder)
        check = ast.Call(func=ast.Name(id=PRIVATE_CHECK, ctx=ast.Load()),
                         args=[node.value, ast.Constant(node.attr)], keywords=[])
        node.value = ast.copy_location(check, node.value)
    ast.fix_missing_locations(tree)
    return tree, checker.local_modules


class CheckedKernel:
    """The kernel file and its local modules, checked. `files`: file -> (source, tree); `names`:
    local module name -> file; `packages`: module name -> the package it is in (None outside
    one); `kernel`: the kernel file; `kernel_name`: its dotted name when it sits in a package
    (None otherwise)."""

    def __init__(self, kernel, kernel_name):
        self.kernel = kernel
        self.kernel_name = kernel_name
        self.files = {}
        self.names = {}
        self.packages = {}


def _package_of_name(name, path):
    if os.path.basename(path) == "__init__.py":
        return name
    return name.rpartition(".")[0] or None


def check_kernel(path):
    """Checks the kernel file and, transitively, every local module it imports: modules found
    next to the kernel file and, when the kernel file sits in a package, the modules of that
    package's tree (absolute imports from its top-level package and relative imports). Returns a
    CheckedKernel. Raises Tamper or errors.NkiError."""
    path = os.path.abspath(path)
    directories = [os.path.dirname(path)]
    place = package_of_file(path)
    kernel_name, kernel_package = None, None
    if place is not None:
        root, kernel_name, kernel_package = place
        directories.append(root)
    out = CheckedKernel(path, kernel_name)
    pending = [(kernel_name, path, kernel_package)]
    done = set()
    while pending:
        name, f, package = pending.pop()
        if (name, f) in done:
            continue
        done.add((name, f))
        if f not in out.files:
            out.files[f] = (read_source(f), None)
        source = out.files[f][0]
        tree, local = check_file(f, directories, package, source)
        out.files[f] = (source, tree)
        if name is not None:
            out.names[name] = f
            out.packages[name] = package
        for sub, sub_file in local.items():
            pending.append((sub, sub_file, _package_of_name(sub, sub_file)))
    return out

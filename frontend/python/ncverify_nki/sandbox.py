"""The kernel's runtime, the second line behind kernel_language.py's check: what the running
kernel can reach. Its modules execute with builtins limited to allowlist.BUILTINS, an import
function that serves facades (only the documented names of the NKI stand-ins and of the allowed
modules; inert placeholders for anything else), attribute writes to the stand-ins' objects
and classes refused unless made by the stand-ins themselves (and type() of their objects), and an
audit hook that refuses files opened for writing, processes, sockets, ctypes and the garbage
collector's object lists. Every refusal is recorded: a kernel that catches the exception is still
reported as tampering (`tamper_record()`).
"""

import builtins
import os
import sys
import types

from . import allowlist, errors
from .kernel_language import PRIVATE_CHECK, Tamper, module_kind, resolve_relative

_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
_FRONT_END_DIR = os.path.dirname(_PACKAGE_DIR)
_first_tamper = []  # [(message, where)]: the first refusal, kept even if the kernel catches it


def tamper(message):
    """Refuses what the running kernel attempted; the refusal stands even if it is caught."""
    where = errors.user_location()
    if not _first_tamper:
        _first_tamper.append((message, where))
    raise Tamper(message, where)


def tamper_record():
    """(message, where) of the first refusal, or None."""
    return _first_tamper[0] if _first_tamper else None


_kernel_files = set()  # the kernel file and its local modules (KernelModules)
_getframe = sys._getframe


def _made_by_kernel(frame):
    """True when the kernel's code is the nearest of the kernel and the front end on the stack
    from `frame` out: a write the kernel made, directly or through a standard function it called
    (functools.update_wrapper), not one the stand-ins made (even through the same function)."""
    while frame is not None:
        kind = _file_kind.get(frame.f_code.co_filename)
        if kind is None:
            kind = _classify(frame.f_code.co_filename)
        if kind == "kernel":
            return True
        if kind == "front end":
            return False
        frame = frame.f_back
    return False


# co_filename -> "kernel" | "front end" | "other", for _made_by_kernel (every attribute write
# of a sealed object asks: a traced kernel makes millions). Emptied when a kernel file is added.
_file_kind = {}


def _classify(name):
    kind = "kernel" if name in _kernel_files else \
        "front end" if name.startswith(_FRONT_END_DIR + os.sep) else "other"
    _file_kind[name] = kind
    return kind


# ------------------------------------------------------------------------------------ facades


# What each facade stands for, kept out of the facade itself (an attribute of it would be one
# attribute read away from the stand-ins' internals): id(facade) -> (module, refused names).
_facade_sources = {}


class Facade(types.ModuleType):
    """A read-only module holding only the listed names of the module it stands for. Reaching a
    `refused` name of it (None: any other name the module has, the stand-ins' internals) is
    tampering; any other unlisted name is merely not served."""

    def __init__(self, name, source, names, refused=None):
        super().__init__(name)
        _facade_sources[id(self)] = (source, refused)
        for n in names:
            if hasattr(source, n):
                object.__setattr__(self, n, getattr(source, n))
        self.publish()

    def publish(self):
        """`__all__` (what `from M import *` takes): every name set so far."""
        names = [n for n in vars(self) if not n.startswith("_")]
        object.__setattr__(self, "__all__", names)

    def __getattr__(self, attr):
        source, refused = _facade_sources[id(self)]
        if not attr.startswith("__") and hasattr(source, attr) and \
                (refused is None or attr in refused):
            tamper("%s.%s is outside the kernel language (allowlist.py)" % (self.__name__, attr))
        raise AttributeError("%s has no %s the kernel language serves (allowlist.py)" %
                             (self.__name__, attr))

    def __setattr__(self, attr, value):
        tamper("sets %s.%s: the modules a kernel imports are read-only" % (self.__name__, attr))

    def __delattr__(self, attr):
        tamper("deletes %s.%s: the modules a kernel imports are read-only" %
               (self.__name__, attr))

    def __repr__(self):
        return "<module %r>" % self.__name__


def _public_values(module):
    return tuple(n for n, v in vars(module).items()
                 if not n.startswith("_") and not isinstance(v, types.ModuleType))


def _numpy_facade(np):
    fac = Facade("numpy", np, [n for n in _public_values(np) if n not in allowlist.NUMPY_REFUSED],
                 allowlist.NUMPY_REFUSED)
    for sub in allowlist.NUMPY_SUBMODULES:
        module = getattr(np, sub)
        object.__setattr__(fac, sub, Facade("numpy." + sub, module, _public_values(module), ()))
    fac.publish()
    return fac


class _Placeholder(types.ModuleType):
    """A module the kernel imports that the kernel language does not serve (torch, scipy, os,
    its test utilities): importing works, calling into it while tracing is an error at that line
    (tampering for the host's modules, allowlist.HOST_MODULES)."""

    def __init__(self, name, host):
        super().__init__(name)
        object.__setattr__(self, "_missing", _Missing(name, host))

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        if self.__name__ == "os" and attr in _EMPTY_ENVIRONMENT:
            return _EMPTY_ENVIRONMENT[attr]()
        return getattr(object.__getattribute__(self, "_missing"), attr)

    def __setattr__(self, attr, value):
        pass  # (a harness's module-level setting: nothing to do here)


def _getenv(key, default=None):
    return default


# The environment a kernel reads is empty: nki-library's logging.py reads its log levels from
# `os.environ` when it is imported; the tracer's own environment is minimal anyway, and a trace
# must not depend on the user's. `os.environ` is a fresh empty dict at each use (a harness's
# `os.environ[...] = "1"` sets nothing that lasts), `os.getenv(key, default)` is the default.
_EMPTY_ENVIRONMENT = {"environ": dict, "getenv": lambda: _getenv}


class _Missing:
    """A name inside a placeholder module (os.environ, torch.float32, logging.INFO)."""

    def __init__(self, name, host):
        object.__setattr__(self, "name", name)
        object.__setattr__(self, "host", host)

    def __getattr__(self, attr):
        if attr.startswith("__"):
            raise AttributeError(attr)
        return _Missing("%s.%s" % (self.name, attr), self.host)

    def __setattr__(self, attr, value):
        pass

    def __getitem__(self, key):
        return _Missing("%s[...]" % self.name, self.host)

    def __setitem__(self, key, value):
        pass  # os.environ["NEURON_FRAMEWORK_DEBUG"] = "1": a setting for the real compiler

    def _use(self, what):
        if self.host:
            tamper("%s %s: the host's modules are placeholders, and using one is out of the "
                   "kernel language" % (what, self.name))
        raise errors.NkiError("%s is not available to the front end (its module is served as a "
                              "placeholder); a kernel may import it but not call it while "
                              "tracing" % self.name)

    def __call__(self, *a, **k):
        self._use("calls")

    def __mro_entries__(self, bases):
        # `class T(unittest.TestCase)`: a test harness's class, which tracing never uses
        return (object,)

    def __iter__(self):
        self._use("iterates over")

    def __contains__(self, item):
        self._use("searches")


_registered = set()  # names of the kernel's local modules this process put in sys.modules


def _may_register(top, local_path):
    """Whether the kernel's local modules under the top-level name `top` may be entered in
    sys.modules: never a name that is already there (the standard library's, an installed
    module's, the front end's own) unless this process registered it for an earlier trace,
    nor one Python would find somewhere else on its path (an installed package the kernel's
    folder shadows): such a registration would hand that module's importers the kernel's
    code."""
    import importlib.util

    if any(n == top or n.startswith(top + ".") for n in sys.modules if n not in _registered):
        return False
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return False
    if spec is None:
        return True
    here = os.path.realpath(local_path) if local_path else None
    found = [os.path.realpath(spec.origin)] if spec.origin else []
    found += [os.path.realpath(os.path.join(d, "__init__.py"))
              for d in (spec.submodule_search_locations or ())]
    return here is not None and here in found


class KernelModules:
    """The kernel's view of the module system: facades, placeholders and its own local modules
    (already checked by kernel_language.check_kernel), run with the limited builtins."""

    def __init__(self, checked, extra_builtins):
        import numpy

        import neuronxcc.nki  # noqa: F401  (the stand-ins, loaded before the kernel runs)
        import neuronxcc.nki.compiler  # noqa: F401
        import neuronxcc.nki.isa  # noqa: F401
        import neuronxcc.nki.isa.constants  # noqa: F401
        import neuronxcc.nki.language  # noqa: F401
        import neuronxcc.nki.typing  # noqa: F401
        import nki  # noqa: F401  (today's API, its own stand-in: ncverify_nki.newapi)
        import nki.collectives  # noqa: F401
        import nki.isa  # noqa: F401
        import nki.isa.constants  # noqa: F401
        import nki.language  # noqa: F401
        import nki.typing  # noqa: F401

        self.checked = checked  # kernel_language.CheckedKernel
        _kernel_files.update(checked.files)
        _file_kind.clear()
        self.local_by_name = dict(checked.names)
        self.loaded = {}
        self.namespaces = {}  # packages whose __init__.py has not run: their submodules only
        self._package_of = {}  # id(module globals) -> the package its relative imports start at
        self._own_classes = set()  # classes kernel_private found to be the kernel's own
        self.kernel_module_name = None  # the name the kernel file runs as (kernel_module)
        self.facades = {}
        for name in sorted(allowlist.NKI_API, key=lambda n: -n.count(".")):
            names = allowlist.NKI_API[name]
            self.facades[name] = Facade(name, sys.modules[name], ())
            fac = self.facades[name]
            for n in names:
                sub = self.facades.get(name + "." + n)
                value = sub if sub is not None else getattr(sys.modules[name], n, None)
                if value is not None or hasattr(sys.modules[name], n):
                    object.__setattr__(fac, n, value)
            fac.publish()
        self.facades["numpy"] = _numpy_facade(numpy)
        for sub in allowlist.NUMPY_SUBMODULES:
            self.facades["numpy." + sub] = getattr(self.facades["numpy"], sub)
        for name, names in allowlist.PURE_MODULES.items():
            real = __import__(name)
            self.facades[name] = Facade(name, real, names or _public_values(real),
                                        allowlist.PURE_REFUSED.get(name, ()))
        self.builtins = self._builtins(extra_builtins)
        # Top-level packages of the kernel's local modules that may be entered in sys.modules
        # (decided now, before the sandbox is armed: finding a module reads the file system).
        self.registrable = {top for top in {n.split(".")[0] for n in self.local_by_name}
                            if _may_register(top, self.local_by_name.get(top))}

    def _builtins(self, extra):
        b = {n: getattr(builtins, n) for n in allowlist.BUILTINS if hasattr(builtins, n)}
        b["__import__"] = self.import_module
        b["getattr"] = _checked_getattr
        b["hasattr"] = _checked_hasattr
        b["type"] = _checked_type
        b[PRIVATE_CHECK] = self.kernel_private
        b.update(extra)
        return b

    def module_for_file(self, name, path, package=None):
        module = types.ModuleType(name)
        module.__dict__["__builtins__"] = self.builtins
        module.__dict__["__file__"] = path
        self._package_of[id(module.__dict__)] = package
        return module

    def kernel_private(self, obj, name):
        """`obj._name` in the kernel's code: allowed on the kernel's own modules and on objects
        and classes of the kernel's own classes (Python's private-by-convention names, which
        nki-library's helpers use: `self._print`, `allocator._current_address`), tampering on
        anything else (the stand-ins' private state, the interpreter's objects). A class counts
        as the kernel's when every class in its MRO was defined by the kernel's files (or is
        `object` or the stand-in `NKIObject` base, which holds no state of the stand-ins') and
        its metaclass is `type` (not EnumType, whose private methods read other modules)."""
        if isinstance(obj, types.ModuleType):
            if any(obj is m for m in self.loaded.values()) or \
                    any(obj is m for m in self.namespaces.values()):
                return obj
            tamper("reads %s of module %s: private names of modules other than the kernel's "
                   "own are outside the kernel language" % (name, obj.__name__))
        if isinstance(obj, super):  # super()._helper(): the class of the object it binds
            cls = obj.__self_class__
        else:
            cls = obj if isinstance(obj, type) else type(obj)
        if cls in self._own_classes:  # (a class's MRO and metaclass cannot change after)
            return obj
        names = set(self.loaded) | {m.__name__ for m in self.loaded.values()} | \
            {self.kernel_module_name}
        bases = _kernel_bases()
        if type(cls) is not type and type(cls) not in bases:
            tamper("reads %s of %r: private names of objects other than the kernel's own are "
                   "outside the kernel language" % (name, cls.__name__))
        for k in cls.__mro__:
            if k is not object and k not in bases and k.__module__ not in names:
                tamper("reads %s of a %s object: private names of objects other than the "
                       "kernel's own are outside the kernel language" % (name, k.__name__))
        self._own_classes.add(cls)
        return obj

    def kernel_module(self, name):
        """The module the kernel file runs as (`name`, not its own dotted name: its `__main__`
        block must not run); a module of its package importing it gets this same module."""
        checked = self.checked
        package = checked.packages.get(checked.kernel_name)
        module = self.module_for_file(name, checked.kernel, package)
        self.kernel_module_name = name
        if checked.kernel_name is not None:
            self.loaded[checked.kernel_name] = module
        return module

    def run_module(self, module, path):
        _, tree = self.checked.files[path]
        exec(compile(tree, path, "exec"), module.__dict__)  # noqa: S102 (checked source)

    def _nki_placeholder(self, name):
        """A placeholder for an NKI submodule the front end does not stand in for
        (neuronxcc.nki.nccl, neuronxcc.nki._private.private_api), hung on its parent so that
        `import neuronxcc.nki.nccl as nccl` finds it by attribute."""
        parts = name.split(".")
        for k in range(2, len(parts) + 1):
            prefix = ".".join(parts[:k])
            if prefix not in self.facades:
                self.facades[prefix] = _Placeholder(prefix, False)
                object.__setattr__(self.facades[".".join(parts[:k - 1])], parts[k - 1],
                                   self.facades[prefix])
        return self.facades[name]

    def _local(self, name):
        if name in self.loaded:
            return self.loaded[name]
        path = self.local_by_name[name]
        module = self.module_for_file(name, path, self.checked.packages.get(name))
        self.loaded[name] = module
        self.namespaces.pop(name, None)
        if name.split(".")[0] in self.registrable:
            # dataclasses resolves string annotations (`from __future__ import annotations`,
            # nki-library's modules) through sys.modules[cls.__module__]
            sys.modules[name] = module
            _registered.add(name)
        self.run_module(module, path)
        return module

    def _package(self, name):
        """Package `name` as the kernel sees it: its module when its __init__.py ran, else a
        namespace holding the submodules imported so far."""
        if name in self.loaded:
            return self.loaded[name]
        if name not in self.namespaces:
            self.namespaces[name] = types.ModuleType(name)
        return self.namespaces[name]

    def _hang(self, name, module):
        """Sets module `name` as an attribute of its parent packages (`import a.b.c` binds `a`,
        whose `b.c` is the module); returns the top-level package."""
        parts = name.split(".")
        for k in range(len(parts) - 1, 0, -1):
            parent = self._package(".".join(parts[:k]))
            parent.__dict__[parts[k]] = module
            module = parent
        return module

    def import_module(self, name, globals=None, locals=None, fromlist=(), level=0):
        if level:
            package = self._package_of.get(id(globals))
            name = resolve_relative(package, level, name, errors.user_location())
        kind = module_kind(name)
        if kind == "forbidden":
            tamper("imports %s while running" % name)
        top = name.split(".")[0]
        if kind == "host":
            return _Placeholder(name if fromlist else top, True)
        if kind in ("nki", "numpy", "pure"):
            leaf = self.facades.get(name)
            if leaf is None and kind == "nki":
                leaf = self._nki_placeholder(name)
            elif leaf is None:
                leaf = _Placeholder(name, False)
            return leaf if fromlist else self.facades.get(top, leaf)
        if not fromlist:
            if name in self.local_by_name:
                return self._hang(name, self._local(name))
            return _Placeholder(top, False)
        submodules = [f for f in fromlist if name + "." + f in self.local_by_name]
        if name in self.local_by_name and len(submodules) < len(fromlist):
            leaf = self._local(name)  # a name taken from the module itself: it runs
        elif submodules:
            leaf = self._package(name)
            self._hang(name, leaf)
        else:
            return _Placeholder(name, False)
        for f in submodules:
            leaf.__dict__[f] = self._local(name + "." + f)
        return leaf


def _kernel_bases():
    """Classes of the stand-ins a kernel's own classes may derive from without their private
    names becoming the stand-ins': `nl.NKIObject` (a marker base of config objects) and its
    metaclass."""
    out = set()
    for module in ("nki.language", "neuronxcc.nki.language"):
        base = getattr(sys.modules.get(module), "NKIObject", None)
        if isinstance(base, type):
            out.update((base, type(base)))
    out.discard(type)
    return out


def _checked_type(*args):
    """type(): the class of a value, except of the front end's own objects (a stand-in's class
    is the way to rewrite it for every object at once); type(name, bases, dict) as usual."""
    if len(args) == 1:
        cls = type(args[0])
        if str(getattr(cls, "__module__", "")).startswith("ncverify_nki"):
            tamper("type() of the front end's %s object: its class is outside the kernel "
                   "language" % cls.__name__)
        return cls
    return type(*args)


def _refused_attribute(name):
    return not isinstance(name, str) or name.startswith("_") or \
        name in allowlist.FORBIDDEN_ATTRIBUTES


def _checked_getattr(obj, name, *default):
    if _refused_attribute(name):
        tamper("getattr(..., %r): names starting with '_' and the interpreter's attributes are "
               "out of the kernel language" % (name,))
    return getattr(obj, name, *default)


def _checked_hasattr(obj, name):
    if _refused_attribute(name):
        tamper("hasattr(..., %r): names starting with '_' and the interpreter's attributes are "
               "out of the kernel language" % (name,))
    return hasattr(obj, name)


# ----------------------------------------------------------------- the stand-ins' objects


def seal_stand_in_classes():
    """Attribute writes to objects of the stand-ins' classes (tiles, index expressions, dtypes,
    buffers, ranges, allocators) and to the classes a kernel can name (sealed.SealedClass) are
    the stand-ins' alone: one made from the kernel's code is tampering."""
    from .sealed import SealedClass

    def guard(cls, name):
        if _made_by_kernel(sys._getframe(2)):
            tamper("sets attribute %s of the front end's class %s" % (name, cls.__name__))

    SealedClass.guard = guard
    kernel_bases = _kernel_bases()
    for mod_name, mod in list(sys.modules.items()):
        if not mod_name.startswith("ncverify_nki") or mod is None:
            continue
        for value in list(vars(mod).values()):
            if isinstance(value, type) and value.__module__ == mod_name and \
                    not issubclass(value, BaseException) and value is not Facade and \
                    not issubclass(value, types.ModuleType) and value is not _Missing and \
                    not issubclass(value, type) and value not in kernel_bases:
                # (nl.NKIObject is the base of the kernel's own config classes: their objects
                # hold the kernel's data, which the kernel's code sets)
                _seal(value)


def _seal(cls):
    if cls.__dict__.get("_sealed"):
        return
    base_set = cls.__setattr__
    base_del = cls.__delattr__

    def __setattr__(self, name, value):
        frame = _getframe(1)
        # (the front end's own writes, nearly all of them, in one look-up)
        if _file_kind.get(frame.f_code.co_filename) != "front end" and _made_by_kernel(frame):
            tamper("sets attribute %s of the front end's %s object" % (name, cls.__name__))
        base_set(self, name, value)

    def __delattr__(self, name):
        if _made_by_kernel(sys._getframe(1)):
            tamper("deletes attribute %s of the front end's %s object" % (name, cls.__name__))
        base_del(self, name)

    type.__setattr__(cls, "__setattr__", __setattr__)
    type.__setattr__(cls, "__delattr__", __delattr__)
    type.__setattr__(cls, "_sealed", True)


# ------------------------------------------------------------------------------ audit hook

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
_REFUSED_EVENTS = frozenset((
    "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "os.kill",
    "os.killpg", "os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown",
    "os.truncate", "os.link", "os.symlink", "os.utime", "os.putenv", "os.unsetenv", "os.chdir",
    "os.chflags", "os.setxattr", "os.removexattr", "os.startfile", "subprocess.Popen",
    "shutil.copyfile", "shutil.copymode", "shutil.copystat", "shutil.copytree", "shutil.move",
    "shutil.rmtree", "shutil.chown", "shutil.make_archive", "shutil.unpack_archive",
    "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.addaudithook",
    "sys.settrace", "sys.setprofile", "sys._current_frames", "sys.setrecursionlimit",
    "code.__new__", "function.__new__", "marshal.loads", "marshal.load", "pickle.find_class",
    "builtins.input", "builtins.breakpoint", "mmap.__new__", "cpython.run_command",
    "cpython.run_file", "cpython.run_module", "tempfile.mkstemp", "tempfile.mkdtemp",
    "webbrowser.open", "urllib.Request", "ftplib.connect", "http.client.connect",
))
_REFUSED_PREFIXES = ("ctypes.", "socket.", "subprocess.", "winreg.", "_winapi.", "msvcrt.",
                     "sqlite3.", "resource.", "signal.", "syslog.", "fcntl.", "os.exec",
                     "os.spawn", "os.posix_spawn")
_armed = []
# Events whose name alone lets them through (neither refused nor judged by their arguments, as
# "open" and "import" are): the front end's own frame walks raise "sys._getframe" and
# "object.__getattr__" (for f_code) hundreds of thousands of times in a large trace, so each
# name is judged once.
_allowed_events = set()


def _audit(event, args):
    if not _armed or event in _allowed_events:
        return
    if event == "open":
        path, mode, flags = (tuple(args) + (None, None))[:3]
        writes = (isinstance(mode, str) and any(c in mode for c in "wax+")) or \
            (isinstance(flags, int) and flags & _WRITE_FLAGS)
        if writes:
            _armed.clear()  # the refusal itself must not be audited again
            try:
                tamper("opens %s for writing: a kernel writes nothing outside its tensors" %
                       (path,))
            finally:
                _armed.append(True)
        return
    if event == "import":
        if module_kind(args[0]) == "forbidden" and args[0].split(".")[0] not in sys.modules:
            _refuse(event, "imports %s" % args[0])
        return
    if event in _REFUSED_EVENTS or event.startswith(_REFUSED_PREFIXES):
        _refuse(event, "attempts %s" % event)
    else:
        _allowed_events.add(event)


def _refuse(event, message):
    _armed.clear()
    try:
        tamper(message + ": a kernel reaches nothing beyond its tensors and the NKI API")
    finally:
        _armed.append(True)


def arm():
    """From here on the audit hook refuses (installed once; it cannot be removed)."""
    if not getattr(arm, "installed", False):
        sys.addaudithook(_audit)
        arm.installed = True
    _armed.append(True)


def disarm():
    _armed.clear()

"""Errors of the front end, located at the user's line.

Every error the user sees reads `FILE.py:LINE: what and why`. The line is the innermost frame
of the traceback (or of the current stack) that is not inside the front end itself: the kernel
line that made the call.
"""

import os
import sys

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_param_names = set()
_kernel_file = None  # abspath of the traced kernel's file (set_kernel_file)


class NkiError(Exception):
    """A kernel the front end cannot trace: unsupported call, bad argument, NKI rule broken."""

    def __init__(self, message, where=None):
        super().__init__(message)
        self.message = message
        self.where = where or user_location()


class NotModelled(NkiError, AttributeError):
    """A name of an NKI module that the stand-ins do not have (an AttributeError too, so that
    hasattr() and the import machinery see a missing attribute)."""


def missing_name(module_label):
    """A module `__getattr__` for the stand-in `module_label` (`nisa`, `nl`, ...): a name it does
    not have is refused at the kernel's line, as the names it lists as not modelled are."""

    def __getattr__(name):
        if name.startswith("_"):
            raise AttributeError(name)
        raise NotModelled("%s.%s is not modelled by ncverify's front end" % (module_label, name))

    return __getattr__


def is_front_end_file(filename):
    known = _front_end_files.get(filename)
    if known is None:
        known = _front_end_files[filename] = \
            os.path.abspath(filename).startswith(_PACKAGE_DIR + os.sep)
    return known


_front_end_files = {}  # filename -> is_front_end_file (asked for every frame of every call)
_abspaths = {}


def _abspath(filename):
    """os.path.abspath, remembered (the working directory does not change while tracing)."""
    a = _abspaths.get(filename)
    if a is None:
        a = _abspaths[filename] = os.path.abspath(filename)
    return a


# The walks below pass the frames of this package (front-end files) by their module's name,
# tested inline (they pass several such frames per call): reading frame.f_code raises an audit
# event, which the sandbox's hook (a Python function) sees.


def user_location(frame=None):
    """(file, line) of the innermost user frame on the current stack."""
    f = frame or sys._getframe(1)
    while f is not None:
        name = f.f_globals.get("__name__")  # a frame of this package: passed
        if isinstance(name, str) and name.startswith("ncverify_nki."):
            f = f.f_back
            continue
        name = f.f_code.co_filename
        front = _front_end_files.get(name)  # (inline: asked for every frame of every call)
        if front is None:
            front = is_front_end_file(name)
        if not front and not name.startswith("<"):
            return (name, f.f_lineno)
        f = f.f_back
    return None


def set_kernel_file(path):
    """The file whose lines kernel_line() reports (None: none)."""
    global _kernel_file
    _kernel_file = os.path.abspath(path) if path else None


def kernel_line(frame=None):
    """The line of the kernel's file that made the current call: the innermost frame in that
    file, so a call inside a helper module the kernel imports is attributed to the kernel line
    that called the helper (the line the `.nkir` `@line` names). 0 when there is none."""
    if _kernel_file is None:
        return 0
    f = frame or sys._getframe(1)
    while f is not None:
        name = f.f_globals.get("__name__")  # a frame of this package: passed
        if isinstance(name, str) and name.startswith("ncverify_nki."):
            f = f.f_back
            continue
        name = f.f_code.co_filename
        path = _abspaths.get(name)  # (inline, as in user_location)
        if path is None:
            path = _abspath(name)
        if path == _kernel_file and not name.startswith("<"):
            return f.f_lineno
        f = f.f_back
    return 0


def traceback_location(tb):
    """(file, line) of the innermost user frame of a traceback."""
    where = None
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if not is_front_end_file(name) and not name.startswith("<"):
            where = (name, tb.tb_lineno)
        tb = tb.tb_next
    return where


def register_param_name(name):
    _param_names.add(name)


def is_param_name(name):
    return name in _param_names

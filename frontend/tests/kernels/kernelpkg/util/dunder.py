"""A module of the package that takes a dunder of a sibling: the interpreter's, refused."""
from .factors import __builtins__  # noqa: F401

"""The kernel language's allow-list: what a kernel file (and every local module it imports) may
use, each entry with its reason. kernel_language.py checks a file against it before a line of
the file runs; sandbox.py gives the running kernel only what is listed here.

An NKI kernel is a restricted Python: the NKI compiler traces the function body and accepts
control flow, arithmetic, calls of `nki.language`/`nki.isa` and helpers, and nothing that reaches
the host (files, processes, the interpreter's internals). ncverify's tracer runs the kernel in
Python, so whatever Python allows beyond that subset would let a kernel read or rewrite the
tracer's record of it. Everything not listed here is refused at its line.
"""

# ------------------------------------------------------------------------------------- imports

# The NKI packages: the kernel gets ncverify's stand-ins for them (the trace is what they record),
# each seen through a facade that holds only the documented API (NKI_API below).
NKI_PACKAGES = ("neuronxcc", "nki")

# Pure modules a kernel may import, with the names of each it may use. Each name is a value
# (function, class, constant) with no way back to the interpreter: no module objects, nothing that
# opens files, spawns processes or reads attributes by a computed name.
PURE_MODULES = {
    # Arithmetic on Python numbers (kernels compute scales, tile counts): every public name of
    # `math` is a function or a float.
    "math": None,  # None: every public name that is not a module
    # Loop helpers: pure iterator constructors.
    "itertools": None,
    # Config objects (nki-samples' FlashConfig is a dataclass).
    "dataclasses": ("dataclass", "field", "fields", "replace", "asdict", "astuple",
                    "is_dataclass", "FrozenInstanceError", "InitVar", "MISSING", "KW_ONLY"),
    # Annotations only.
    "typing": ("Any", "Callable", "Dict", "List", "Optional", "Sequence", "Tuple", "Union",
               "Iterable", "Iterator", "Mapping", "NamedTuple", "Literal", "Final", "ClassVar",
               "TypeVar", "Generic", "Set", "FrozenSet", "Type", "cast", "overload",
               "TYPE_CHECKING"),
    # reduce/partial/lru_cache/wraps are plain combinators (no attribute access by name).
    "functools": ("reduce", "partial", "lru_cache", "cache", "wraps", "total_ordering",
                  "cached_property", "update_wrapper"),
    # Enumerations of kernel options.
    "enum": ("Enum", "IntEnum", "Flag", "IntFlag", "auto", "unique"),
    # Containers.
    "collections": ("namedtuple", "OrderedDict", "defaultdict", "deque", "Counter"),
    # Abstract config bases.
    "abc": ("ABC", "abstractmethod"),
    # `from __future__ import annotations` (string annotations in config dataclasses): compiler
    # directives, whose values are feature records.
    "__future__": ("annotations",),
    # Copies of config objects.
    "copy": ("copy", "deepcopy"),
    # Arithmetic as functions (nki-samples' attention.py: reduce(operator.mul, shape)); without
    # attrgetter and methodcaller (PURE_REFUSED).
    "operator": ("add", "sub", "mul", "truediv", "floordiv", "mod", "neg", "pos", "abs",
                 "pow", "eq", "ne", "lt", "le", "gt", "ge", "and_", "or_", "xor", "not_",
                 "index", "itemgetter", "iadd", "imul", "matmul"),
}

# numpy: kernels name dtypes (np.float32), pass ufuncs as ALU ops (nisa.tensor_scalar(op0=np.add)),
# and compute constants (np.sqrt, np.finfo, np.random in a module-level test tensor). Every public
# name but the submodules and the names below, which read or write files (np.load, np.save*,
# np.fromfile, np.memmap, np.loadtxt, np.genfromtxt, np.DataSource, np.fromregex) or reach raw
# memory (np.frombuffer, np.from_dlpack; np.lib.stride_tricks.as_strided reads and writes any
# address, np.ctypeslib reaches ctypes). Using one is tampering.
NUMPY_REFUSED = (
    "load", "save", "savez", "savez_compressed", "savetxt", "loadtxt", "genfromtxt", "fromfile",
    "fromregex", "memmap", "DataSource", "frombuffer", "from_dlpack", "recfromcsv", "recfromtxt",
    "lib", "ctypeslib", "core", "compat", "testing", "f2py", "distutils", "char", "rec", "ma",
    "matrixlib", "emath", "version", "polynomial", "add_newdoc", "deprecate", "info", "source",
    "who", "lookfor", "show_config", "get_include", "byte_bounds", "seterrcall",
)
# numpy's pure submodules, served as facades of their public functions.
NUMPY_SUBMODULES = ("random", "linalg", "fft", "math")

# Names of the pure modules whose use is tampering (any other unlisted name is merely not
# served): operator.attrgetter and methodcaller read attributes by a computed name;
# typing.get_type_hints evaluates annotation strings as code.
PURE_REFUSED = {
    "operator": ("attrgetter", "methodcaller"),
    "typing": ("get_type_hints", "ForwardRef"),
}

# The names of the NKI stand-ins a kernel may use: the documented API of each module (the NKI API
# reference's nki.language, nki.isa, nki.compiler, nki.typing pages, and neuronxcc.nki's
# decorators); never the tracer's own modules and classes that the stand-ins import (trace,
# errors, rules, ops, program, tiles, expr: reading them would let a kernel rewrite its record).
NKI_API = {
    "neuronxcc": ("nki",),
    "neuronxcc.nki": ("jit", "baremetal", "benchmark", "profile", "simulate_kernel", "simulate",
                      "trace",
                      "language", "isa", "compiler", "typing"),
    "neuronxcc.nki.language": (
        # memories and dims
        "sbuf", "psum", "hbm", "private_hbm", "shared_hbm", "par_dim", "tile_size",
        # dtypes
        "bfloat16", "bool_", "float16", "float32", "float8_e4m3", "float8_e5m2", "fp16",
        "fp32", "int32", "tfloat32", "uint16", "uint32", "uint8",
        # creation, memory and indexing
        "ndarray", "zeros", "ones", "full", "zeros_like", "empty_like", "shared_constant",
        "shared_identity_matrix",
        "load", "store", "load_transpose2d", "load_transpose", "copy", "arange", "mgrid", "ds",
        "affine_range", "sequential_range", "static_range", "program_id", "num_programs",
        "program_ndim", "spmd_dim", "broadcast_to", "expand_dims", "gather_flattened",
        "atomic_rmw", "device_print", "random_seed", "rand", "dropout", "nc",
        # arithmetic, math, comparison, logic
        "abs", "add", "subtract", "multiply", "divide", "power", "maximum", "minimum",
        "negative", "reciprocal", "exp", "log", "sqrt", "rsqrt", "square", "sin", "cos", "tan",
        "tanh", "arctan", "erf", "sigmoid", "relu", "gelu", "silu", "sign", "ceil", "floor",
        "trunc", "equal", "not_equal", "greater", "greater_equal", "less", "less_equal",
        "logical_and", "logical_or", "bitwise_and", "bitwise_or", "bitwise_xor", "invert",
        "where", "select",
        # reductions, matmul, normalisation
        "sum", "max", "min", "mean", "var", "all_reduce", "matmul", "transpose", "softmax",
        "layer_norm", "rms_norm",
    ),
    "neuronxcc.nki.isa": (
        "activation", "activation_reduce", "affine_select", "bn_aggr", "bn_stats",
        "builtin", "core_barrier", "dge_mode", "dma_copy", "dma_transpose", "dropout", "engine",
        "exponential", "gpsimd_engine", "iota", "iota_partition", "local_gather", "max8",
        "memset", "nc_find_index8", "nc_match_replace8", "nc_matmul", "nc_matmul_mx",
        "nc_stream_shuffle", "nc_transpose", "oob_mode", "quantize_mx", "rand2", "range_select",
        "reciprocal", "reduce_cmd", "rng", "scalar_engine", "scalar_tensor_tensor",
        "select_reduce", "sendrecv", "sequence_bounds", "tensor_copy", "tensor_copy_dynamic_dst",
        "tensor_copy_dynamic_src", "tensor_copy_predicated", "tensor_engine",
        "tensor_partition_reduce", "tensor_reduce", "tensor_scalar", "tensor_scalar_reduce",
        "tensor_tensor", "tensor_tensor_scan", "tensor_scalar_cumulative", "unknown_engine",
        "vector_engine",
        "constants",
    ),
    "neuronxcc.nki.isa.constants": ("dge_mode", "oob_mode"),
    "neuronxcc.nki.compiler": (
        "skip_middle_end_transformations", "force_auto_alloc", "enable_stack_allocator",
        "disable_stack_allocator", "sbuf", "psum", "no_reorder",
    ),
    "neuronxcc.nki.typing": ("tensor", "mutable_tensor", "scalar"),
}
# The top-level `nki` package: today's API (NKI 0.2-0.6, ncverify_nki/newapi), the names of the
# 0.6 reference's nki, nki.language, nki.isa and nki.collectives pages that the stand-in has.
NKI_API.update({
    "nki": ("jit", "simulate", "language", "isa", "collectives", "typing", "dtype"),
    # nki.dtype: undocumented; nki-library's annotations and tests name it (nki/dtype.py)
    "nki.dtype": (
        "bfloat16", "bool_", "float16", "float32", "float8_e4m3", "float8_e4m3fn", "float8_e5m2",
        "float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4", "float8_e8m0fnu", "int8",
        "int16", "int32", "tfloat32", "uint8", "uint16", "uint32",
    ),
    "nki.language": (
        "sbuf", "psum", "hbm", "private_hbm", "shared_hbm", "is_hbm", "is_on_chip", "is_psum",
        "is_sbuf", "tile_size", "par_dim",
        "bfloat16", "bool_", "float16", "float32", "float8_e4m3", "float8_e4m3fn", "float8_e5m2",
        "float8_e4m3fn_x4", "float8_e5m2_x4", "float4_e2m1fn_x4", "float8_e8m0fnu", "int8",
        "int16", "int32", "tfloat32", "uint8", "uint16", "uint32",
        "ndarray", "zeros", "ones", "full", "zeros_like", "empty_like", "shared_constant",
        "shared_identity_matrix", "NKIObject", "load", "store", "ds", "affine_range", "sequential_range",
        "static_range", "program_id", "num_programs", "program_ndim", "device_print",
        "fori_loop", "dynamic_range", "while_loop",
        "no_reorder", "rand", "random_seed", "dropout", "bool",
        # data movement (newapi/language_memory.py)
        "load", "store", "load_transpose2d", "gather_flattened",
        # compute calls and operator / activation names (newapi/language_compute.py)
        "add", "subtract", "multiply", "divide", "power", "maximum", "minimum", "equal",
        "not_equal", "greater", "greater_equal", "less", "less_equal", "bitwise_and",
        "bitwise_or", "bitwise_xor", "left_shift", "right_shift", "invert", "logical_and",
        "logical_or", "logical_xor", "logical_not", "abs_max", "abs_min", "average", "bypass",
        "fmod", "mod", "exp", "log", "tanh", "sigmoid", "relu", "gelu", "silu", "square",
        "sqrt", "rsqrt", "sin", "cos", "tan", "arctan", "abs", "reciprocal", "copy", "negative",
        "sign", "ceil", "floor", "trunc", "prelu", "gelu_dx", "gelu_apprx_tanh",
        "gelu_apprx_sigmoid", "gelu_apprx_sigmoid_dx", "silu_dx", "softplus", "mish", "erf",
        "erf_dx", "sum", "max", "min", "prod", "mean", "var", "all", "softmax", "rms_norm",
        "where", "matmul", "transpose", "broadcast_to",
    ),
    "nki.isa": (
        "activation", "activation_reduce", "dma_copy", "get_nc_sub_version", "get_nc_version",
        "memset", "nc_matmul", "nc_transpose", "reciprocal", "tensor_copy", "tensor_reduce",
        "tensor_scalar", "tensor_tensor",
        "dma_transpose", "dma_compute", "iota", "affine_select", "register_alloc",
        "register_move", "register_load", "register_store",
        # compute calls of ncverify_nki/newapi/isa_*.py
        "scalar_tensor_tensor", "tensor_scalar_reduce", "tensor_copy_predicated",
        "tensor_partition_reduce", "tensor_scalar_cumulative", "tensor_tensor_scan", "bn_stats",
        "bn_aggr", "max8", "nc_find_index8", "nc_match_replace8", "local_gather", "nc_n_gather",
        "nc_stream_shuffle", "select_reduce", "range_select", "sequence_bounds", "exponential",
        "activate2", "dropout", "rng", "rand2", "rand_set_state", "rand_get_state",
        "set_rng_seed", "quantize_mx", "nc_matmul_mx", "nonzero_with_count", "topk",
        "core_barrier", "sendrecv",
        "engine", "reduce_cmd", "dge_mode", "oob_mode", "matmul_perf_mode", "nc_version",
        "dma_engine", "tensor_engine", "vector_engine", "scalar_engine", "gpsimd_engine",
        "unknown_engine", "constants",
    ),
    "nki.isa.constants": ("dge_mode", "oob_mode", "matmul_perf_mode", "engine", "reduce_cmd",
                          "nc_version", "dma_engine"),
    # every documented name imports; calling one is refused (one NeuronCore)
    "nki.collectives": ("ReplicaGroup", "all_reduce", "all_gather", "all_gather_v",
                        "reduce_scatter", "all_to_all", "all_to_all_v", "collective_permute",
                        "collective_permute_implicit", "collective_permute_implicit_reduce",
                        "collective_permute_implicit_current_processing_rank_id", "rank_id"),
    "nki.typing": ("tensor", "mutable_tensor", "scalar"),
})

# Modules whose import is refused as tampering: each has no use in a kernel file (not even in its
# test harness) and reaches the interpreter's objects, frames and code (gc, inspect, builtins,
# types, code, codeop, dis, marshal, pickle, copyreg, weakref, tracemalloc, faulthandler, atexit,
# importlib, pkgutil, runpy, site, zipimport, sysconfig), raw memory or the OS below Python
# (ctypes, cffi, mmap, fcntl, resource, posix, pty, termios, _thread, _io, _posixsubprocess), other
# processes and the network (subprocess, multiprocessing, concurrent, socket, ssl, signal,
# selectors, select, asyncio), attributes by computed name (operator.attrgetter/methodcaller:
# operator is served as a facade without them, see PURE_MODULES), or ncverify's own tracer.
REFUSED_MODULES = (
    "gc", "inspect", "builtins", "types", "code", "codeop", "dis", "marshal", "pickle", "copyreg",
    "weakref", "tracemalloc", "faulthandler", "atexit", "importlib", "pkgutil", "runpy", "site",
    "zipimport", "sysconfig", "ctypes", "cffi", "mmap", "fcntl", "resource", "posix", "pty",
    "termios", "_thread", "_io", "_posixsubprocess", "_ctypes", "_socket", "subprocess",
    "multiprocessing", "concurrent", "socket", "ssl", "signal", "selectors", "select", "asyncio",
    "ncverify_nki", "ncverify_trace",
)

# The host's modules, which kernel files import for their test harness (nki-samples'
# attention_kernels.py runs `import os; os.environ[...] = "1"` at module level, its
# `__main__` blocks rename files): imported as inert placeholders, never loaded. Reading
# attributes and setting items of one does nothing; calling into one, or iterating or searching
# one (`"ncverify_nki" in sys.modules`), while the kernel is loaded or traced is tampering.
HOST_MODULES = (
    "os", "sys", "io", "pathlib", "shutil", "tempfile", "glob", "posixpath", "genericpath",
    "threading", "platform", "contextvars", "traceback", "linecache", "string",
)

# Any other module (torch, scipy, pytest, logging, json, time, the kernel's test utilities):
# imported as an inert placeholder, never loaded; calling into one while tracing is an error at
# that line (kernels import such modules for their test harness, which does not run under the
# tracer).

# ----------------------------------------------------------------------------------- builtins

# The builtins a kernel may call or name. Left out, with the reason: open, input, print's file=
# (files and the terminal), exec, eval, compile, __import__ (code from strings and imports past
# this list), globals, locals, vars, dir (namespaces: the way to the tracer's modules),
# setattr/delattr (getattr and hasattr are served checked: no name starting with "_" and none of
# FORBIDDEN_ATTRIBUTES; nki-samples' flash_fwd reads getattr(nl, config.lse_dtype)), breakpoint, help, exit, quit, memoryview (raw buffers),
# classmethod/staticmethod are allowed (class bodies), object is allowed (a base class).
BUILTINS = (
    "abs", "all", "any", "ascii", "bin", "bool", "bytearray", "bytes", "callable", "chr",
    "classmethod", "complex", "dict", "divmod", "enumerate", "filter", "float", "format",
    "frozenset", "hasattr", "hash", "hex", "id", "int", "isinstance", "issubclass", "iter",
    "len", "list", "map", "max", "min", "next", "object", "oct", "ord", "pow", "print",
    "property", "range", "repr", "reversed", "round", "set", "slice", "sorted", "staticmethod",
    "str", "sum", "super", "tuple", "type", "zip", "getattr", "NotImplemented", "Ellipsis",
    "None", "True", "False",
    # what a `class` statement calls (the kernel may not name it: FORBIDDEN_BUILTINS)
    "__build_class__",
    # exceptions a kernel raises or catches
    "BaseException", "Exception", "ArithmeticError", "AssertionError", "AttributeError",
    "IndexError", "KeyError", "LookupError", "NotImplementedError", "OverflowError",
    "RuntimeError", "StopIteration", "TypeError", "ValueError", "ZeroDivisionError",
    "Warning", "UserWarning", "DeprecationWarning",
    # `try: from nki.collectives import ReplicaGroup / except ImportError:` (nki-library)
    "ImportError", "ModuleNotFoundError",
)

# Builtins whose mere use (call or name) in the kernel's source is tampering.
FORBIDDEN_BUILTINS = (
    "open", "exec", "eval", "compile", "__import__", "globals", "locals", "vars", "dir",
    "breakpoint", "input", "help", "exit", "quit", "setattr", "delattr", "memoryview",
    "__builtins__", "__loader__", "__spec__", "__build_class__",
)

# ------------------------------------------------------------------------------- attributes

# Attribute names no kernel reads or writes: the interpreter's ways from an object to frames,
# code, globals and raw memory. (Every name starting with "_" is refused as well: dunders reach
# the interpreter, and single-underscore names are the stand-ins' private state.)
FORBIDDEN_ATTRIBUTES = (
    "gi_frame", "gi_code", "gi_yieldfrom", "gi_running", "cr_frame", "cr_code", "cr_await",
    "ag_frame", "ag_code", "ag_await", "f_back", "f_globals", "f_locals", "f_builtins", "f_code",
    "f_trace", "f_lasti", "tb_frame", "tb_next", "tb_lasti", "co_code", "co_consts",
    "co_names", "func_globals", "func_code", "mro", "ctypes", "ctypeslib", "tofile", "dump",
    "dumps", "format_map", "with_traceback",
)

# Dunder names a kernel may read as plain names: `if __name__ == "__main__":` guards a file's
# test harness, `__file__` locates its data.
ALLOWED_DUNDER_NAMES = ("__name__", "__file__")

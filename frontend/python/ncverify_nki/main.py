"""Command line of the front end (see ../ncverify_trace.py): loads the user's file, binds the
kernel's arguments (tensors become symbolic-shape HBM inputs, keyword arguments take --param
values), runs the kernel under the tracer and prints `.nkir`."""

import argparse
import ast
import builtins
import contextlib
import dataclasses
import gc
import inspect
import linecache
import os
import re
import sys
import textwrap
import traceback

from . import dialect, errors, kernel_language, per_program, sandbox, trace, unrolling
from .newapi import refine
from .dtypes import normalize
from .expr import Lin, SymInt, name_lin
from .program import Tensor
from .tiles import Tile, tensor_of


class UsageError(Exception):
    pass


# nki.jit(platform_target=...) to the model's generation (inf2 is NeuronCore-v2, as trn1).
GENERATIONS = {"trn1": "trn1", "inf2": "trn1", "gen2": "trn1", "trn2": "trn2", "gen3": "trn2",
               "trn3": "trn3", "gen4": "trn3"}


def generation_of(platform_target):
    return None if platform_target is None else GENERATIONS.get(str(platform_target))


def _generation(gen, platform_target):
    """The generation a kernel is traced for: --gen, else its decorator's platform_target (None:
    trn1). The two must agree when both are given: a kernel written for trn2 that uses trn2's
    calls is not a trn1 kernel."""
    declared = generation_of(platform_target)
    if gen is None:
        return declared
    if gen not in ("trn1", "trn2", "trn3"):
        raise UsageError("--gen %s: the model's generations are trn1, trn2 and trn3" % gen)
    if declared is not None and declared != gen:
        raise UsageError("--gen %s: the kernel's decorator says platform_target=%r (%s); trace "
                         "it for that generation or change the decorator" %
                         (gen, platform_target, declared))
    return gen


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="ncverify_trace", add_help=True)
    ap.add_argument("target")
    ap.add_argument("--param", action="append", default=[])
    ap.add_argument("--option", action="append", default=[])
    ap.add_argument("--input", action="append", default=[])
    ap.add_argument("--shape", action="append", default=[])
    ap.add_argument("--grid", default=None)
    # The generation to trace for (ncverify's --gen): get_nc_version() and the calls that exist
    # from one generation on follow it. Without it, the kernel's platform_target, else trn1.
    ap.add_argument("--gen", default=None)
    # The program goes to this file descriptor (ncverify's channel, which the kernel's code
    # cannot reach); without it, to standard output (a developer running the tracer by hand).
    ap.add_argument("--program-fd", type=int, default=None)
    return ap.parse_args(argv)


def _assignments(items, flag):
    out = {}
    for a in items:
        if "=" not in a:
            raise UsageError("%s %s: expected NAME=VALUE" % (flag, a))
        k, v = a.split("=", 1)
        if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.]*", k):
            raise UsageError("%s %s: '%s' is not a name" % (flag, a, k))
        if k in out:
            raise UsageError("%s %s is given twice" % (flag, k))
        out[k] = v
    return out


def _python_value(text):
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    try:
        return ast.literal_eval(text)
    except (ValueError, SyntaxError):
        return text


def _kwarg_value(text, namespace, name):
    """A keyword argument's value, read as data, never run as code: a literal (`true`, `512`,
    `'bf16'`, `(1, 2)`), a member of one of the kernel's own enums (`Mode.FAST`), a call of one
    of the kernel's own config classes with such arguments (`FlashConfig(training=False)`), else
    a bare word is the string itself (`--param mode=fast`). Anything else is refused."""
    value = _python_value(text)
    if value is not text:
        return value
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError:
        return text
    if isinstance(tree.body, ast.Name) and tree.body.id not in namespace:
        return text
    try:
        return _data_value(tree.body, namespace)
    except _NotData as e:
        raise UsageError("--param %s=%s: %s; a value is a literal (number, string, true/false, "
                         "None, tuple), a member of one of the kernel's enums, or a call of one "
                         "of the kernel's own classes with such arguments" % (name, text, e))


class _NotData(Exception):
    pass


def _kernel_class(node, namespace):
    """The class `node` names in the kernel's module, if the kernel's files define it."""
    if not isinstance(node, ast.Name) or node.id not in namespace:
        return None
    value = namespace[node.id]
    if isinstance(value, type) and value.__module__ == KERNEL_MODULE:
        return value
    if isinstance(value, type) and value.__module__ in _local_module_names:
        return value
    return None


def _data_value(node, namespace):
    if isinstance(node, ast.Name) and node.id in ("true", "false", "True", "False"):
        return node.id.lower() == "true"
    if isinstance(node, (ast.Constant, ast.UnaryOp)):
        try:
            return ast.literal_eval(node)
        except ValueError:
            raise _NotData("%s is not a literal" % ast.unparse(node))
    if isinstance(node, (ast.Tuple, ast.List)):
        values = [_data_value(e, namespace) for e in node.elts]
        return tuple(values) if isinstance(node, ast.Tuple) else values
    if isinstance(node, ast.Attribute) and _kernel_class(node.value, namespace) is not None:
        cls = _kernel_class(node.value, namespace)
        import enum

        if issubclass(cls, enum.Enum) and node.attr in cls.__members__:
            return cls[node.attr]
        raise _NotData("%s is not a member of the kernel's enum %s" %
                       (node.attr, node.value.id))
    if isinstance(node, ast.Call):
        cls = _kernel_class(node.func, namespace)
        if cls is None:
            raise _NotData("%s is not a class the kernel's files define" % ast.unparse(node.func))
        args = [_data_value(a, namespace) for a in node.args]
        kwargs = {}
        for k in node.keywords:
            if k.arg is None:
                raise _NotData("**%s is not a literal argument" % ast.unparse(k.value))
            kwargs[k.arg] = _data_value(k.value, namespace)
        return cls(*args, **kwargs)
    raise _NotData("%s is an expression" % ast.unparse(node))


def _with_field(base, head, field, value):
    from .newapi.language import NKIObject

    if isinstance(base, NKIObject) and not dataclasses.is_dataclass(base):
        # An nl.NKIObject is its __dict__ (the language guide, "Class Support": the compiler
        # copies the object dictionary): a copy with the field replaced.
        if field not in vars(base):
            raise UsageError("--param %s.%s: %s has no field %s (its fields: %s)" %
                             (head, field, type(base).__name__, field, ", ".join(vars(base))))
        import copy

        new = copy.copy(base)
        setattr(new, field, value)
        return new
    if base is None or not dataclasses.is_dataclass(base):
        raise UsageError("--param %s.%s: the argument %s is %r, not a config object; give the "
                         "whole object, e.g. --param \"%s=Config(%s=...)\"" %
                         (head, field, head, base, head, field))
    if field not in {f.name for f in dataclasses.fields(base)}:
        raise UsageError("--param %s.%s: %s has no field %s" % (head, field,
                                                                type(base).__name__, field))
    return dataclasses.replace(base, **{field: value})


# What the .nkir `options` line can hold as a value (model/nkir/NKIR.md): an identifier or a
# decimal number. A keyword argument given as anything else (a Python expression, a config field)
# is only in the provenance comment.
_OPTION_WORD = re.compile(r"^(?:[A-Za-z_][A-Za-z0-9_]*|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)$")

_RANGE = re.compile(r"^(\d+)\.\.(\d+)(?:/(\d+))?$")


# The module name the kernel file runs as (not __main__: its test harness does not run).
KERNEL_MODULE = "ncverify_user_kernel"
_local_module_names = set()  # the kernel's local modules (their classes may build --param values)


def load_module(path):
    """Checks the kernel file and its local modules against the kernel language, then runs the
    file with the sandbox armed (sandbox.py). Returns the module."""
    path = os.path.abspath(path)
    checked = kernel_language.check_kernel(path)
    _dialect_of[path] = dialect.of_trees([tree for _, tree in checked.files.values()])
    both = dialect.conflict(checked.files)
    if both is not None:
        (new_file, new_line), where = both
        raise errors.NkiError(
            "this kernel imports the legacy neuronxcc.nki API here and today's nki API at "
            "%s:%d: the two give the same calls different semantics, and since NKI 0.4.0 "
            "neuronxcc.nki inside a kernel is a compile error (NKI migration guide); import "
            "one of them (neuronxcc.nki.typing annotations, and fallbacks in an `except "
            "ImportError:` after `import nki`, are fine)" % (new_file, new_line), where)
    modules = sandbox.KernelModules(checked, {"range": _python_range(builtins.range)})
    sandbox.seal_stand_in_classes()
    module = modules.kernel_module(KERNEL_MODULE)
    sys.modules[KERNEL_MODULE] = module
    _local_module_names.update(modules.local_by_name)
    sandbox.arm()
    from . import kernel_api

    kernel_api.loading_for_trace(True)
    try:
        modules.run_module(module, path)
    except kernel_api.ModuleLevelCall as call:
        # A script that runs its kernel when loaded: the module stops at that call (what it
        # defined so far is kept) and the kernel asked for is traced from that (README "Files
        # that are scripts").
        _stopped_at[path] = call.where
    finally:
        kernel_api.loading_for_trace(False)
    return module


_dialect_of = {}  # kernel file -> the NKI API it is written in (dialect.py)
_stopped_at = {}  # kernel file -> (file, line) of the module-level kernel call that stopped it


def shape_names(func, tensor_args):
    """Names the kernel gives its input dims (`d_head, seqlen = q.shape`, `n = q.shape[1]`) and
    the rank each unpacking implies."""
    try:
        src = inspect.getsource(func)
    except (OSError, TypeError):
        return {}
    tree = ast.parse(textwrap.dedent(src))
    names = {a: {} for a in tensor_args}
    ranks = {a: 0 for a in tensor_args}
    groups = []

    def shape_of(node):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id in ("tuple", "list") and len(node.args) == 1:
            node = node.args[0]
        if isinstance(node, ast.Attribute) and node.attr == "shape" and \
                isinstance(node.value, ast.Name) and node.value.id in names:
            return node.value.id
        return None

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            tgt, val = node.targets[0], node.value
            arg = shape_of(val)
            if arg and isinstance(tgt, (ast.Tuple, ast.List)):
                ranks[arg] = max(ranks[arg], len(tgt.elts))
                for k, e in enumerate(tgt.elts):
                    if isinstance(e, ast.Name) and e.id != "_":
                        names[arg].setdefault(k, e.id)
            if isinstance(val, ast.Subscript) and shape_of(val.value) and \
                    isinstance(val.slice, ast.Constant) and isinstance(val.slice.value, int) \
                    and isinstance(tgt, ast.Name):
                arg, k = shape_of(val.value), val.slice.value
                if k >= 0:
                    ranks[arg] = max(ranks[arg], k + 1)
                    names[arg].setdefault(k, tgt.id)
        if isinstance(node, ast.Subscript) and shape_of(node.value) and \
                isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, int):
            arg = shape_of(node.value)
            if node.slice.value >= 0:
                ranks[arg] = max(ranks[arg], node.slice.value + 1)
        if isinstance(node, ast.Compare):
            operands = [node.left] + list(node.comparators)
            group = [shape_of(o) for o in operands if shape_of(o)]
            tuples = [len(o.elts) for o in operands if isinstance(o, (ast.Tuple, ast.List))]
            if group:
                groups.append((group, tuples))
    for _ in range(len(groups)):  # shapes compared with each other have one rank
        for group, tuples in groups:
            r = max([ranks[a] for a in group] + tuples)
            for a in group:
                ranks[a] = r
    return {a: (ranks[a], names[a]) for a in tensor_args}


_shape_names_of = {}


def _scanned_shape_names(func, tensor_args):
    """shape_names, once per kernel: every re-trace (unrolling.retrying) binds the arguments
    again, and reading and parsing the kernel's source is a third of a short attempt for a
    large kernel file. (Read-only for the caller.)"""
    key = (func, tensor_args)
    if key not in _shape_names_of:
        _shape_names_of[key] = shape_names(func, tensor_args)
    return _shape_names_of[key]


_INPUT = re.compile(r"^([A-Za-z0-9_]+)(?:\[([^\]]*)\])?$")


def bind(tr, func, args, file_label):
    sig = inspect.signature(func)
    params = _assignments(args.param, "--param")
    options = _assignments(args.option, "--option")
    inputs = _assignments(args.input, "--input")
    shapes = _assignments(args.shape, "--shape")
    tensor_args, kwargs, none_args = [], {}, []
    for name, p in sig.parameters.items():
        if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            continue
        if params.get(name, "").lower() == "none" and name not in inputs:
            none_args.append(name)  # --param seed=None: an optional tensor left out
            params.pop(name)
            continue
        # A parameter without a default is a tensor, unless --param gives it a value: the
        # SDK's examples take Python values positionally (average_pool2d's `pool_size`,
        # transpose2d's `shape2D`, called as kernel(in_tensor, 2)).
        value = name in params and p.default is inspect.Parameter.empty
        if name in inputs or name in shapes or (p.default is inspect.Parameter.empty and
                                                not value):
            tensor_args.append(name)
        else:
            # a keyword argument; one without a default needs its --param (a dtype, a flag)
            kwargs[name] = None if p.default is inspect.Parameter.empty else p.default
    for k in list(inputs) + list(shapes):
        if k not in tensor_args:
            raise UsageError("--input/--shape %s: the kernel has no tensor argument %s "
                             "(tensor arguments: %s)" % (k, k, ", ".join(tensor_args)))
    used = set()
    given_kwargs = {}
    recorded = {}  # the program's `options` line: keyword arguments given as one word
    for k, v in list(params.items()) + list(options.items()):
        if k in kwargs:
            given_kwargs[k] = _kwarg_value(v, func.__globals__, k)
            used.add(k)
            if _OPTION_WORD.fullmatch(v):
                recorded[k] = v
            else:
                recorded.pop(k, None)
    for k, v in params.items():  # config.field=VALUE: a field of a config object argument
        head, _, field = k.partition(".")
        if field and head in kwargs:
            base = given_kwargs.get(head, kwargs[head])
            given_kwargs[head] = _with_field(base, head, field, _python_value(v))
            used.add(k)
    scanned = _scanned_shape_names(func, tuple(tensor_args))
    dim_specs = {}
    default_names = set()
    for a in tensor_args:
        dtype = "fp32"
        dims = None
        if a in inputs:
            m = _INPUT.match(inputs[a])
            if not m:
                raise UsageError("--input %s=%s: expected DTYPE or DTYPE[d0,d1,...]" %
                                 (a, inputs[a]))
            try:
                dtype = normalize(m.group(1)).name
            except errors.NkiError as e:
                raise UsageError("--input %s: %s" % (a, e.message))
            if m.group(2) is not None:
                dims = [d.strip() for d in m.group(2).split(",")]
        if a in shapes:
            if dims is not None:
                raise UsageError("--shape %s and --input %s[...] both give its shape" % (a, a))
            dims = [d.strip() for d in shapes[a].split(",")]
        if dims is None:
            rank, names = scanned.get(a, (0, {}))
            if rank == 0:
                raise UsageError("%s: cannot tell the rank of tensor argument '%s' (the kernel "
                                 "never unpacks its .shape); give --shape %s=NAME,NAME,... or "
                                 "--input %s=DTYPE[d0,d1,...]" % (file_label, a, a, a))
            dims = [names.get(k, "%s_%d" % (a, k)) for k in range(rank)]
            default_names.update("%s_%d" % (a, k) for k in range(rank) if k not in names)
        dim_specs[a] = (dtype, dims)
    # shape params: fixed values, domains
    sizes = {}
    for a, (dtype, dims) in dim_specs.items():
        lins = []
        for d in dims:
            if re.fullmatch(r"\d+", d):
                lins.append(Lin.of(int(d)))
                continue
            if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", d):
                raise UsageError("shape of %s: '%s' is neither a size nor a name" % (a, d))
            if d not in sizes:
                if d in kwargs:
                    raise UsageError("shape name %s is also a keyword argument of the kernel" % d)
                fixed, rng = None, None
                if d in params:
                    used.add(d)
                    m = _RANGE.match(params[d])
                    if m:
                        rng = (int(m.group(1)), int(m.group(2)), int(m.group(3) or 1))
                    elif re.fullmatch(r"\d+", params[d]):
                        fixed = int(params[d])
                    else:
                        raise UsageError("--param %s=%s: a shape takes an integer or a domain "
                                         "LO..HI[/MULTIPLE]" % (d, params[d]))
                p = tr.param(d, fixed)
                p.named = d not in default_names
                if rng:
                    p.lo, p.hi, p.mult = rng
                    if p.lo < 1 or p.hi < p.lo or p.lo % p.mult or p.hi % p.mult:
                        raise UsageError("--param %s=%s: domain must be 1 <= LO <= HI, both "
                                         "multiples of the multiple" % (d, params[d]))
                # the new dialect keeps a fixed shape a param with one value, so that the
                # trace can say which Python decisions needed it (Tracer.fixed_report)
                sizes[d] = Lin.of(fixed) if fixed is not None and \
                    not trace.python_loops(tr) else name_lin(p.name)
            lins.append(sizes[d])
        t = Tensor(tr.unique(a), "hbm", dtype, lins, "input")
        tr.hbm.append(t)
        dim_specs[a] = Tile(t.full_view())
        refine.register_tile(dim_specs[a])  # rewritten if a view splits its dims (new API)
    unknown = [k for k in params if k not in used]
    if unknown:
        raise UsageError("--param %s: the kernel has no keyword argument or shape named %s "
                         "(keyword arguments: %s; shapes: %s)" %
                         (unknown[0], unknown[0], ", ".join(kwargs) or "none",
                          ", ".join(sizes) or "none"))
    if args.grid:
        tr.grid = []
        for g in args.grid.split(","):
            g = g.strip()
            if re.fullmatch(r"\d+", g):
                tr.grid.append(Lin.of(int(g)))
            elif g in sizes:
                tr.grid.append(sizes[g])
            else:
                raise UsageError("--grid %s: '%s' is neither a number nor a shape name (%s)" %
                                 (args.grid, g, ", ".join(sizes) or "none"))
    # Tensors go positionally up to the first parameter that is not one, the rest by name
    # (nki-library's attention_cte takes its optional tensors k_prior, sink, ... after `scale`).
    call_args, bound_kwargs = [], dict(given_kwargs)
    positional = True
    for name, p in sig.parameters.items():
        if name not in tensor_args:
            positional = False
        elif positional and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            call_args.append(dim_specs[name])
        else:
            bound_kwargs[name] = dim_specs[name]
    bound_kwargs.update({a: None for a in none_args})
    notes = ["%s=%r" % (k, v) for k, v in given_kwargs.items()] + \
        ["%s=None" % a for a in none_args]
    unknown_fields = [k for k in params if "." in k and k not in used]
    if unknown_fields:
        raise UsageError("--param %s: the kernel has no keyword argument %s" %
                         (unknown_fields[0], unknown_fields[0].split(".")[0]))
    return call_args, tensor_args, bound_kwargs, notes, recorded


def _python_range(builtin_range):
    """The kernel's `range`: NKI replaces Python range(...) in a kernel by sequential_range
    (LANG-OLD, nki.language.sequential_range). With known bounds the loop unrolls (the same
    values, in order); with a symbolic bound it is a sequential loop."""
    from .language import sequential_range

    def nki_range(*a):
        if trace.python_loops(trace._current):  # the new dialect (newapi/loops.py)
            from .newapi.loops import python_range

            return python_range(builtin_range, a)
        if any(isinstance(x, SymInt) for x in a):
            return sequential_range(*a)
        return builtin_range(*a)

    return nki_range


def run(argv):
    args = parse_args(argv)
    if ":" not in args.target:
        raise UsageError("%s: expected FILE.py:FUNCTION" % args.target)
    path, func_name = args.target.rsplit(":", 1)
    if not os.path.isfile(path):
        raise UsageError("%s: no such file" % path)
    module = load_module(path)
    if not hasattr(module, func_name):
        funcs = [n for n, v in vars(module).items()
                 if callable(v) and getattr(v, "__module__", None) == module.__name__]
        stopped = _stopped_at.get(os.path.abspath(path))
        note = "" if stopped is None else (
            "; the file's module-level code called a kernel at line %d, where loading stopped, "
            "so what it defines after that line is unknown" % stopped[1])
        raise UsageError("%s has no function %s (functions: %s)%s" %
                         (path, func_name, ", ".join(funcs) or "none", note))
    from .kernel_api import unwrap

    kernel = getattr(module, func_name)
    func = unwrap(kernel)
    if not inspect.isfunction(func):
        raise UsageError("%s:%s is not a function" % (path, func_name))
    source_index = trace.SourceIndex()

    def attempt(unroll):
        # the whole trace, again from the start when the new dialect finds loops to unroll
        # (unrolling.py)
        tr = trace.Tracer(re.sub(r"\W", "_", func_name), source_index)
        tr.unroll = unroll
        tr.generation = _generation(args.gen,
                                    getattr(kernel, "options", {}).get("platform_target"))
        tr.dialect = _dialect_of.get(os.path.abspath(path), dialect.LEGACY)
        # Instructions name the line of this file that made them (`@line`); the basename keeps
        # the text independent of where the file was traced from.
        tr.source_file = os.path.basename(path)
        errors.set_kernel_file(path)
        call_args, tensor_args, kwargs, notes, recorded = bind(tr, func, args, path)
        header = ["traced by ncverify import from %s:%s" % (os.path.basename(path), func_name)]
        if notes:
            header.append("kernel arguments: " + ", ".join(notes))
        return trace_kernel(tr, func, path, call_args, kwargs, header, recorded)[1]

    return unrolling.retrying(attempt)


def trace_kernel(tr, func, path, call_args, kwargs, header, recorded=None):
    """Runs the kernel on its bound arguments under the tracer `tr`; returns (what the kernel
    returned, the program's `.nkir` text). `import` and the simulator (simulate.py) both trace
    through here."""
    with _growing_heap():
        return _trace_kernel(tr, func, path, call_args, kwargs, header, recorded)


@contextlib.contextmanager
def _growing_heap():
    """Python's collector while a trace runs. The program the trace builds only grows, and each
    full collection walks all of it: with the default thresholds they were a fifth of an
    unrolled kernel's tracing time. Full collections therefore wait for the trace to end; young
    and middle ones run as usual (they free the short-lived cycles). A trace that ended by an
    exception (a re-trace that unrolls more loops, unrolling.retrying) is collected when the
    next one starts, so its abandoned program does not stay in memory during the next one."""
    if _abandoned_trace:
        _abandoned_trace.clear()
        gc.collect()
    saved = gc.get_threshold()
    gc.set_threshold(saved[0], saved[1], _NO_FULL_COLLECTION)
    try:
        yield
    except BaseException:
        _abandoned_trace.append(True)
        raise
    finally:
        gc.set_threshold(*saved)


# (a full collection after this many middle ones: never, for any trace that fits in memory)
_NO_FULL_COLLECTION = 1 << 30
_abandoned_trace = []  # [True] after a trace ended by an exception, until it is collected


def _trace_kernel(tr, func, path, call_args, kwargs, header, recorded):
    def call():
        trace.start(tr)
        try:
            result = func(*call_args, **kwargs)
        except errors.NkiError:
            if tr.pending_unroll is not None:  # an error after the kernel caught a re-trace
                raise tr.pending_unroll from None
            raise
        finally:
            trace.stop()
        if tr.pending_unroll is not None:  # the kernel caught it; the trace is not the program
            raise tr.pending_unroll
        left = tr.left_loops() if tr.loops else None
        if left is not None:
            raise left
        return result

    where = (os.path.abspath(path), _def_line(func))
    if tr.per_program_reason is not None:  # its Python needs the program id's value
        result = per_program.trace_passes(tr, call, where)
        header = header + [per_program.header(tr)]
    else:
        result = call()
    if tr.unroll:
        header = header + ["loops unrolled (their bodies' Python effects depend on the "
                           "iteration): " + "; ".join(
                               "%s (%s)" % (unrolling.key_text(k), why)
                               for k, why in sorted(tr.unroll.items()))]
    header = header + tr.fixed_report() + tr.header_notes
    _mark_outputs(tr, result, where)
    if tr.loops:
        raise errors.NkiError("a traced loop was left open (break out of a loop?)")
    for check in tr.at_end:
        check(tr)
    return result, tr.text(header, recorded)


def _def_line(func):
    """The line of `def` (co_firstlineno is the first decorator's)."""
    line = func.__code__.co_firstlineno
    filename = func.__code__.co_filename
    while linecache.getline(filename, line).lstrip().startswith("@"):
        line += 1
    return line


def _mark_outputs(tr, result, where):
    written = set()

    from .program import Instr, Loop

    def walk(stmts):
        # (by exact class, no subclasses: this visits every statement of an unrolled kernel)
        for s in stmts:
            c = s.__class__
            if c is Instr:
                if s.args:
                    t = getattr(s.args[0][1], "tensor", None)
                    if t is not None:
                        written.add(t.name)
            elif c is Loop:
                walk(s.body)

    walk(tr.root)
    for t in tr.hbm:
        if t.role == "input" and t.name in written:
            t.role = "output"
    results = result if isinstance(result, (tuple, list)) else [result]
    for r in results:
        if isinstance(r, Tile) and tensor_of(r).mem != "hbm":
            raise errors.NkiError("the kernel returns an on-chip tile; a kernel returns HBM "
                                  "tensors (nl.ndarray(..., buffer=nl.shared_hbm))", where)
    returned = {tensor_of(r).name for r in results if isinstance(r, Tile)}
    if tr.dialect == dialect.NEW:
        # NKI 0.3.0 (release notes, "Breaking changes"): a kernel's outputs are nl.shared_hbm
        # tensors; returning an nl.hbm / nl.private_hbm one fails to compile.
        for t in tr.hbm:
            if t.name in returned and t.kind_given == "scratch":
                raise errors.NkiError("the kernel returns '%s', an nl.private_hbm (nl.hbm) "
                                      "tensor; since NKI 0.3.0 a kernel's outputs are "
                                      "nl.shared_hbm tensors" % t.name, where)
    for t in tr.hbm:  # a returned HBM tensor is an output, whatever buffer made it (nl.hbm too)
        if t.name in returned and t.role == "scratch":
            t.role = "output"
    if returned:
        # shared_hbm tensors the kernel keeps to itself are scratch, not outputs
        for t in tr.hbm:
            if t.role == "output" and t.name not in returned and t.kind_given == "output":
                t.role = "scratch"
    if not any(t.role == "output" for t in tr.hbm):
        raise errors.NkiError("the kernel writes no HBM output", where)


# Exit codes: 0 the program was written; 2 the kernel cannot be traced (or bad usage); 3 the
# kernel reached past the NKI language (kernel_language.Tamper or a sandbox refusal), whatever it
# did afterwards; 4 it ran out of memory under the limit.
EXIT_TAMPER = 3
EXIT_LIMIT = 4  # ran out of memory under the tracer's limit


class _NullOutput:
    """Where the kernel's prints go: nowhere (the program has its own channel)."""

    def write(self, text):
        return len(text)

    def flush(self):
        pass


def _write_program(text, fd):
    data = text.encode("utf-8")
    if fd is None:
        sys.__stdout__.write(text)
        sys.__stdout__.flush()
        return
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def main(argv):
    sys.stdout = _NullOutput()
    # This process traces one kernel, writes its program and exits: Python's collector stays
    # off. Every collection walks the objects made since the last, and the program a trace
    # builds only grows: with the full collections deferred to the trace's end
    # (_growing_heap), the young and middle ones were still a fifth of an unrolled kernel's
    # tracing time. What the tracer makes is freed by reference counts; a re-trace still
    # collects the program its predecessor abandoned (_growing_heap). The peak memory of an
    # unrolled flash attention is the same.
    gc.disable()
    try:
        text = run(argv)
        if sandbox.tamper_record() is not None:
            return _report_tamper(*sandbox.tamper_record())
        sandbox.disarm()
        _write_program(text, parse_args(argv).program_fd)
        return 0
    except kernel_language.Tamper as e:
        record = sandbox.tamper_record() or (e.message, e.where)
        return _report_tamper(*record)
    except BaseException as e:  # noqa: B902 (a kernel may raise anything, SystemExit too)
        sandbox.disarm()
        if sandbox.tamper_record() is not None:  # refused, caught, then failed otherwise
            return _report_tamper(*sandbox.tamper_record())
        return _report_error(e)


def _report_tamper(message, where):
    sandbox.disarm()
    sys.stderr.write("%s: tamper: %s\n" % (_where(where), message))
    return EXIT_TAMPER


def _report_error(e):
    if isinstance(e, SystemExit):
        sys.stderr.write("ncverify import: the kernel file raised SystemExit(%s) while it was "
                         "loaded or traced\n" % (e.code,))
    elif isinstance(e, UsageError):
        sys.stderr.write("%s\n" % e)
    elif isinstance(e, errors.NkiError):
        sys.stderr.write("%s: %s\n" % (_where(e.where), e.message))
    elif isinstance(e, RecursionError):
        sys.stderr.write("ncverify import: the kernel recursed too deeply\n")
    elif isinstance(e, MemoryError):
        sys.stderr.write("ncverify import: tracing the kernel ran out of memory (the tracer's "
                         "address space is limited by --memory-budget-mib)\n")
        return EXIT_LIMIT
    elif isinstance(e, SyntaxError):
        sys.stderr.write("%s:%s: syntax error: %s\n" % (e.filename, e.lineno, e.msg))
    elif isinstance(e, KeyboardInterrupt):
        sys.stderr.write("ncverify import: interrupted\n")
    else:  # the kernel's own exception (assert, TypeError, ...)
        where = errors.traceback_location(e.__traceback__)
        what = "assertion failed" if isinstance(e, AssertionError) else type(e).__name__
        msg = str(e)
        if not msg and where is not None:
            msg = linecache.getline(where[0], where[1]).strip()
        sys.stderr.write("%s: the kernel raised %s%s\n" % (_where(where), what,
                                                          ": " + msg if msg else ""))
        if os.environ.get("NCVERIFY_FRONTEND_DEBUG"):
            traceback.print_exc()
    return 2


def _where(where):
    if where is None:
        return "ncverify import"
    return "%s:%d" % where

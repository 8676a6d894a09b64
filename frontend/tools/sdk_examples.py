#!/usr/bin/env python3
"""The vendor's new-API NKI examples through ncverify, one row per kernel and generation.

    python3 frontend/tools/sdk_examples.py [--sdk DIR] [--samples DIR] [--ncverify BIN]
        [--gen trn2[,trn3]] [--only REGEX] [--no-bench] [--timeout S] [--list]
        [--json FILE [--force]] [--scratch DIR]

--sdk is a local checkout of aws-neuron/aws-neuron-sdk (its `nki/examples/**`; issue 45 names
81ce03ae), --samples one of aws-neuron/nki-samples (the matrix-multiplication tutorial of
`src/nki_samples/tutorials/`; 6905a68); at least one of them. Nothing of either is copied into
this repository: the catalogue below (ours) says, for each example kernel, the shapes and dtypes
its own harness calls it with (the harnesses use torch, JAX or a device, which are not here) and
a NumPy reference of what it computes, written from the example's docstring and harness. For
each row the script
  1. writes seeded random inputs as .npy files (bf16 as its bit pattern),
  2. runs `ncverify run FILE.py:KERNEL --inputs-from IN --outputs-to OUT --json` (the front end
     traces the unmodified file, the interpreter runs it with every dynamic check) and compares
     each output with the NumPy reference on the same (rounded) inputs,
  3. runs `ncverify bench FILE.py:KERNEL --json` (the timing model's latency),
and prints one row: `ran+checked` (the outputs match the reference), `differs` (they do not:
the largest error and where), `check failed` (a dynamic check of the interpreter failed),
`refused` (the front end's reason, its first line), `refused as expected` (an example the
documentation shows failing), `missing` (not in the checkout), plus the bench latency or the
reason bench gave none. A new-API kernel in the scanned folders that the catalogue does not list
is a row `not in the catalogue`. The exit status is 0 when every row ran (whatever its status),
2 on bad arguments or an unreadable checkout.
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SDK_ROOT = "nki/examples"
SAMPLES_ROOT = "src/nki_samples/tutorials"
ROOTS = {"sdk": SDK_ROOT, "samples": SAMPLES_ROOT}


class Usage(Exception):
    pass


def _np():
    import numpy as np

    return np


# ------------------------------------------------------------------ values on the wire

def to_wire(values, dtype):
    """(the array to save as .npy, the values the kernel sees) for float64 `values` in the .nkir
    dtype `dtype`: fp32/fp16 as themselves, bf16 as its bit pattern (round to nearest even), as
    `ncverify run --inputs-from` reads them."""
    np = _np()
    if dtype == "fp32":
        a = values.astype(np.float32)
        return a, a.astype(np.float64)
    if dtype == "fp16":
        a = values.astype(np.float16)
        return a, a.astype(np.float64)
    if dtype == "bf16":
        bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
        rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16
        wire = rounded.astype(np.uint16)
        return wire, from_wire(wire, "bf16")
    raise Usage("the catalogue uses dtype %s, which this script does not write" % dtype)


def from_wire(array, dtype):
    """float64 values of an output `ncverify run --outputs-to` wrote in `dtype`."""
    np = _np()
    if dtype == "bf16":
        return (array.astype(np.uint32) << 16).view(np.float32).astype(np.float64)
    return array.astype(np.float64)


# ------------------------------------------------------------------ NumPy references
# Each takes the inputs' values (float64, as the kernel sees them) and the row's params.

def ref_add(ins, params):
    return [ins[0] + ins[1]]


def ref_matmul(ins, params):
    """result = lhsT.T @ rhs (the tutorial's docstrings: lhsT is [K, M], rhs [K, N])."""
    return [ins[0].T @ ins[1]]


def ref_exp(ins, params):
    return [_np().exp(ins[0])]


def ref_split_columns(ins, params):
    """index-case-1: the even columns, then the odd ones."""
    return [ins[0][:, 0::2], ins[0][:, 1::2]]


def _pools(x, p):
    c, h, w = x.shape
    return x.reshape(c, h // p, p, w // p, p)


def ref_avgpool(ins, params):
    p = int(params["pool_size"])
    return [_pools(ins[0], p).mean(axis=(2, 4))]


def ref_maxpool(ins, params):
    p = int(params["sz_pool"])
    return [_pools(ins[0], p).max(axis=(2, 4))]


def ref_transpose2d(ins, params):
    """Each partition's [X*Y] row read as an X x Y matrix and transposed (shape2D = (X, Y))."""
    x, y = (int(v) for v in params["shape2D"].strip("()").split(","))
    a = ins[0]
    return [a.reshape(a.shape[0], x, y).transpose(0, 2, 1).reshape(a.shape[0], x * y)]


def ref_mamba(ins, params):
    """The selective scan of mamba_torch.py's docstring: per batch, channel and state,
    h_t = exp(delta_t * A) * h_{t-1} + delta_t * B_t * u_t, and y_t = sum over states of
    C_t * h_t."""
    np = _np()
    delta, u, a, b, c = ins
    decay = np.exp(delta[:, :, None, :] * a[None, :, :, None])
    drive = delta[:, :, None, :] * b[:, None, :, :] * u[:, :, None, :]
    h = np.zeros(decay.shape[:-1])
    y = np.zeros(delta.shape)
    for t in range(delta.shape[-1]):
        h = decay[..., t] * h + drive[..., t]
        y[..., t] = (c[:, None, :, t] * h).sum(axis=-1)
    return [y]


# ------------------------------------------------------------------ input generators

def gen_normal(rng, shape):
    return rng.standard_normal(shape)


def gen_unit(rng, shape):
    return rng.random(shape)


def gen_small_positive(rng, shape):
    return rng.uniform(0.0, 0.1, shape)


def gen_negative(rng, shape):
    return -rng.uniform(0.5, 1.5, shape)


def gen_exp_range(rng, shape):
    return rng.uniform(-2.0, 2.0, shape)


def gen_arange(rng, shape):
    np = _np()
    return np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)


# ------------------------------------------------------------------ the catalogue


class Example:
    """One kernel of one example file and the call its harness makes."""

    def __init__(self, checkout, path, kernel, inputs, reference=None, params=None, rtol=1e-5,
                 atol=1e-6, variant="", expect="run", why="", refusal="", outputs=()):
        self.checkout, self.path, self.kernel = checkout, path, kernel
        self.inputs = inputs  # [(name, dtype, shape, generator)]
        self.reference, self.params = reference, dict(params or {})
        self.rtol, self.atol, self.variant = rtol, atol, variant
        # the kernel's output variables in the order it returns them (the reference's order),
        # needed when it returns more than one: `ncverify run --json` lists outputs by name
        self.outputs = tuple(outputs)
        # expect: run | refused; a refusal counts as expected only when its reason contains
        # `refusal` (the front end refusing for another reason is a plain `refused` row)
        self.expect, self.why, self.refusal = expect, why, refusal

    @property
    def id(self):
        return "%s:%s:%s%s" % (self.checkout, self.path, self.kernel,
                               "[%s]" % self.variant if self.variant else "")

    def args(self):
        out = []
        for name, dtype, shape, _ in self.inputs:
            out += ["--input", "%s=%s[%s]" % (name, dtype, ",".join(str(s) for s in shape))]
        for k, v in sorted(self.params.items()):
            out += ["--param", "%s=%s" % (k, v)]
        return out


def _add_inputs(dtype, shape):
    return [("a_input", dtype, shape, gen_normal), ("b_input", dtype, shape, gen_normal)]


def _matmul(checkout, path, kernel, k, m, n, dtype, why="", refusal=""):
    """A matmul row: lhsT [K, M], rhs [K, N] (the torch harness's lhs.T and rhs). bf16 inputs
    with fp32 accumulation: the harness's own tolerance (rtol 1e-2)."""
    bf16 = dtype == "bf16"
    return Example(checkout, path, kernel,
                   [("lhsT", dtype, (k, m), gen_unit), ("rhs", dtype, (k, n), gen_unit)],
                   ref_matmul, rtol=1e-2 if bf16 else 1e-4, atol=1e-4 if bf16 else 1e-4,
                   variant=dtype, expect="refused" if why else "run", why=why,
                   refusal=refusal if why else "")


def catalogue():
    """Every new-API kernel of the two checkouts, called as its harness calls it (shapes and
    dtypes from the harness; random values where the harness uses ones or aranges, so that a
    wrong index shows)."""
    sdk_mm = "matrix_multiplication/matrix_multiplication_nki_kernels.py"
    samples_mm = "matrix_multiplication/matrix_multiplication_nki_kernels.py"
    mamba = "fused_mamba/mamba_nki_kernels.py"
    # mamba_nki_kernels.py's defaults: batch 1, seq_len 2048, channels 256, state_size 16
    mamba_inputs = [("delta", "fp32", (1, 256, 2048), gen_small_positive),
                    ("u", "fp32", (1, 256, 2048), gen_normal),
                    ("A", "fp32", (256, 16), gen_negative),
                    ("B", "fp32", (1, 16, 2048), gen_normal),
                    ("C", "fp32", (1, 16, 2048), gen_normal)]
    rows = [
        Example("sdk", "getting_started_baremetal.py", "nki_tensor_add_kernel",
                _add_inputs("fp16", (4, 3)), ref_add, rtol=1e-3, atol=1e-3),
        Example("sdk", "getting_started_torch.py", "nki_tensor_add_kernel",
                _add_inputs("fp16", (4, 3)), ref_add, rtol=1e-3, atol=1e-3),
        Example("sdk", "getting_started_jax.py", "nki_tensor_add_kernel",
                _add_inputs("fp16", (4, 3)), ref_add, rtol=1e-3, atol=1e-3),
        Example("sdk", "simulate/nki_simulate_example.py", "add_kernel",
                [("a_ptr", "fp32", (128, 512), gen_unit), ("b_ptr", "fp32", (128, 512),
                                                           gen_unit)], ref_add),
        Example("sdk", "tensor_addition/tensor_addition_nki_kernels.py", "nki_tensor_add",
                _add_inputs("fp32", (256, 1024)), ref_add),
        Example("sdk", "index-case-1.py", "tensor_split_kernel_",
                [("in_tensor", "bf16", (4, 5), gen_arange)], ref_split_columns, rtol=0, atol=0,
                outputs=("out_tensor_even", "out_tensor_odd")),
        Example("sdk", "index-case-3.py", "tensor_maxpool_kernel_",
                [("in_tensor", "bf16", (2, 6, 6), gen_normal)], ref_maxpool,
                params={"sz_pool": 2}, rtol=0, atol=0),
        Example("sdk", "layout-pass.py", "tensor_exp_kernel_",
                [("in_tensor", "bf16", (128, 512), gen_exp_range)], ref_exp, rtol=1e-2,
                atol=1e-2),
        Example("sdk", "layout-violation.py", "tensor_exp_kernel_",
                [("in_tensor", "bf16", (256, 512), gen_exp_range)], ref_exp, expect="refused",
                why="the page that shows it says a tile of 256 partitions must fail",
                refusal="a tile of 256 partitions"),
        Example("sdk", "layout-loop.py", "tensor_exp_kernel_",
                [("in_tensor", "bf16", (256, 512), gen_exp_range)], ref_exp, expect="refused",
                why="a documentation fragment: imports torch_neuronx's nki_jit, uses an "
                    "undefined i_f", refusal="torch_neuronx.nki_jit is not available"),
        Example("sdk", "layout-dynamic-loop.py", "tensor_exp_kernel_",
                [("in_tensor", "bf16", (256, 512), gen_exp_range)], ref_exp, expect="refused",
                why="a documentation fragment: not Python (an unclosed parenthesis)",
                refusal="syntax error"),
        Example("sdk", "average_pool2d/average_pool2d_nki_kernels.py", "tensor_avgpool_kernel",
                [("in_tensor", "fp16", (2, 6, 6), gen_normal)], ref_avgpool,
                params={"pool_size": 2}, rtol=2e-3, atol=2e-3),
        Example("sdk", "transpose2d/transpose2d_nki_kernels.py", "tensor_transpose2D_kernel_",
                [("in_tensor", "fp32", (5, 12), gen_normal)], ref_transpose2d,
                params={"shape2D": "(3,4)"}, rtol=0, atol=0, variant="fp32"),
    ]
    for v in ("mamba_v1", "mamba_v2", "mamba_v3"):
        rows.append(Example("sdk", mamba, v, mamba_inputs, ref_mamba, rtol=1e-3, atol=1e-3))
    # the torch harness: basic at 64 x 128 x 512, the others at lhs (4096, 1024) @ (1024, 2048)
    for checkout, path in (("sdk", sdk_mm), ("samples", samples_mm)):
        for dtype in ("bf16", "fp32"):
            rows.append(_matmul(checkout, path, "nki_matmul_basic_", 128, 64, 512, dtype))
            for kernel in ("nki_matmul_tiled_", "nki_matmul_block_free_dimension_",
                           "nki_matmul_fully_optimized_"):
                rows.append(_matmul(checkout, path, kernel, 1024, 4096, 2048, dtype))
            why = ""
            if checkout == "samples" and dtype == "bf16":
                why = ("tensor_copy(dst=res_sb, ..., dtype=result.dtype) with an fp32 res_sb and "
                       "bf16 inputs: dtype= differs from dst.dtype (frontend/README.md, "
                       "\"dtype= on nisa.tensor_copy\")")
            rows.append(_matmul(checkout, path, "nki_matmul_hoist_load_", 1024, 4096, 2048,
                                dtype, why, "differs from dst.dtype"))
    return rows


# ------------------------------------------------------------------ new-API kernels in a tree

_NEW_API = re.compile(r"^\s*(import nki\b|from nki\b|import nki\.)", re.M)
_KERNEL = re.compile(r"^\s*@(?:nki\.jit|nki_jit)\b[^\n]*\n(?:\s*@[^\n]*\n)*\s*def\s+(\w+)", re.M)


def kernels_in(text):
    """The kernels a file of the new API defines (functions decorated with @nki.jit), or []
    for a file that does not import the top-level nki package or imports neuronxcc."""
    if not _NEW_API.search(text) or "neuronxcc" in text:
        return []
    return _KERNEL.findall(text)


def scan(root):
    """(path relative to root, kernel) of every new-API kernel under root."""
    out = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for f in sorted(files):
            if not f.endswith(".py"):
                continue
            p = os.path.join(folder, f)
            try:
                with open(p, encoding="utf-8", errors="replace") as fh:
                    text = fh.read()
            except OSError:
                continue
            out += [(os.path.relpath(p, root), k) for k in kernels_in(text)]
    return out


# ------------------------------------------------------------------ judging a row


def first_error(text):
    for line in text.splitlines():
        if line.strip():
            return line.strip()
    return "(no message)"


def compare(got, want, rtol, atol):
    """None when every element of `got` is within atol + rtol * |want| of `want`, else a
    sentence with the largest error and its index."""
    np = _np()
    if got.shape != want.shape:
        return "shape %s, the reference's %s" % (got.shape, want.shape)
    err = np.abs(got - want)
    bad = ~(err <= atol + rtol * np.abs(want))
    if not bad.any():
        return None
    i = np.unravel_index(int(np.argmax(np.where(bad, err, -1.0))), got.shape)
    return "%d of %d elements differ; largest at %s: %r, reference %r" % (
        int(bad.sum()), got.size, tuple(int(v) for v in i), float(got[i]), float(want[i]))


def judge_run(example, returncode, stdout, stderr):
    """(status, detail) of a row from `ncverify run`'s exit status and output, or None when the
    run passed and its values are to be compared (judge_values)."""
    if returncode == 2:
        reason = first_error(stderr)
        if example.expect == "refused" and example.refusal in stderr:
            return "refused as expected", "%s (%s)" % (reason, example.why)
        return "refused", reason
    if returncode == 1:
        try:
            error = json.loads(stdout).get("error")
        except ValueError:
            error = None
        return "check failed", str(error or first_error(stderr))
    if returncode != 0:
        return "refused", "ncverify run exited %d: %s" % (returncode, first_error(stderr))
    if example.expect == "refused":
        return "differs", "ran, but the example should fail: %s" % example.why
    return None


def in_return_order(example, outputs):
    """The run's outputs [(.nkir name, values)] in the order the kernel returns them: by the
    catalogue's variable names (a .nkir name is the variable's, or it with a `_N` suffix when
    the name was taken); None when the catalogue does not say and there are several."""
    if len(outputs) <= 1:
        return outputs
    if len(example.outputs) != len(outputs):
        return None
    ordered = []
    for var in example.outputs:
        match = [o for o in outputs if re.fullmatch(r"%s(_\d+)?" % re.escape(var), o[0])]
        if len(match) != 1:
            return None
        ordered.append(match[0])
    return ordered


def judge_values(example, inputs, outputs):
    """(status, detail) of a run that passed: each output against the reference."""
    want = example.reference(inputs, example.params)
    if len(want) != len(outputs):
        return "differs", "%d outputs, the reference has %d" % (len(outputs), len(want))
    ordered = in_return_order(example, outputs)
    if ordered is None:
        return "differs", "outputs %s do not match the catalogue's %s" % (
            ", ".join(n for n, _ in outputs), ", ".join(example.outputs) or "(none given)")
    outputs = ordered
    for (name, got), ref in zip(outputs, want):
        why = compare(got, ref, example.rtol, example.atol)
        if why:
            return "differs", "%s: %s" % (name, why)
    return "ran+checked", "%d output%s within rtol %g atol %g" % (
        len(outputs), "" if len(outputs) == 1 else "s", example.rtol, example.atol)


# ------------------------------------------------------------------ running


def _env(timeout):
    return dict(os.environ, NCVERIFY_FRONTEND_TIMEOUT_S=str(timeout))


def run_row(example, file, ncverify, gen, scratch, timeout, bench, seed):
    np = _np()
    row = {"id": example.id, "gen": gen, "file": file}
    target = "%s:%s" % (file, example.kernel)
    args = example.args() + ["--gen", gen]
    work = tempfile.mkdtemp(dir=scratch)
    ind, outd = os.path.join(work, "in"), os.path.join(work, "out")
    os.makedirs(ind)
    rng = np.random.default_rng(seed)
    seen = []
    for name, dtype, shape, gen_values in example.inputs:
        wire, values = to_wire(gen_values(rng, shape), dtype)
        np.save(os.path.join(ind, name + ".npy"), wire)
        seen.append(values)
    command = [ncverify, "run", target] + args + ["--inputs-from", ind, "--outputs-to", outd,
                                                  "--json"]
    row["command"] = command
    try:
        r = subprocess.run(command, capture_output=True, text=True, env=_env(timeout),
                           timeout=timeout * 2)
        verdict = judge_run(example, r.returncode, r.stdout, r.stderr)
        if verdict is None:
            listed = json.loads(r.stdout)["outputs"]
            outputs = [(o["name"], from_wire(np.load(os.path.join(outd, o["name"] + ".npy")),
                                             o["dtype"])) for o in listed]
            verdict = judge_values(example, seen, outputs)
    except subprocess.TimeoutExpired:
        verdict = ("refused", "ncverify run took longer than %d s" % (timeout * 2))
    row["status"], row["detail"] = verdict
    row["bench"] = "-"
    if bench and row["status"] in ("ran+checked", "differs", "check failed"):
        command = [ncverify, "bench", target] + args + ["--json"]
        try:
            b = subprocess.run(command, capture_output=True, text=True, env=_env(timeout),
                               timeout=timeout * 2)
            if b.returncode == 0:
                row["latency_us"] = json.loads(b.stdout)["latency_us"]
                row["bench"] = "%.2f us" % row["latency_us"]
            else:
                row["bench"] = "no latency: " + first_error(b.stderr)
        except subprocess.TimeoutExpired:
            row["bench"] = "no latency: bench took longer than %d s" % (timeout * 2)
    shutil.rmtree(work, ignore_errors=True)
    return row


def rows_for(checkouts, only):
    """(example or None, file or None, row id) for every catalogue entry of the given checkouts
    and every new-API kernel found in them that the catalogue does not list."""
    listed = [e for e in catalogue() if e.checkout in checkouts]
    known = {(e.checkout, e.path, e.kernel) for e in listed}
    out = []
    for e in listed:
        base = os.path.join(checkouts[e.checkout], ROOTS[e.checkout])
        out.append((e, os.path.join(base, e.path), e.id))
    for name, root in sorted(checkouts.items()):
        base = os.path.join(root, ROOTS[name])
        for path, kernel in scan(base):
            if (name, path, kernel) not in known:
                out.append((None, os.path.join(base, path), "%s:%s:%s" % (name, path, kernel)))
    if only:
        out = [r for r in out if re.search(only, r[2])]
    return out


def main(argv):
    ap = argparse.ArgumentParser(prog="sdk_examples.py")
    ap.add_argument("--sdk", help="a local aws-neuron-sdk checkout (its nki/examples/)")
    ap.add_argument("--samples", help="a local nki-samples checkout (its tutorials)")
    ap.add_argument("--ncverify", default="ncverify")
    ap.add_argument("--gen", default="trn2", help="generations, comma-separated (trn1..trn3)")
    ap.add_argument("--only", default=None, help="rows whose id matches this regex")
    ap.add_argument("--no-bench", action="store_true", help="run and check only")
    ap.add_argument("--timeout", type=int, default=300, help="seconds per trace")
    ap.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    ap.add_argument("--list", action="store_true", help="print the rows' ids, run nothing")
    ap.add_argument("--json", default=None, help="write the rows here")
    ap.add_argument("--force", action="store_true", help="let --json replace an existing file")
    ap.add_argument("--scratch", default=None,
                    help="an empty folder for the inputs and outputs (default: a temporary "
                         "folder, removed afterwards)")
    try:
        args = ap.parse_args(argv)
    except SystemExit as e:
        return 2 if e.code else 0
    try:
        checkouts = {}
        for name, root, inside in (("sdk", args.sdk, SDK_ROOT),
                                   ("samples", args.samples, SAMPLES_ROOT)):
            if root is None:
                continue
            root = os.path.abspath(root)
            if not os.path.isdir(os.path.join(root, inside)):
                raise Usage("--%s %s has no %s/ (not a checkout of the %s repository?)" % (
                    name, root, inside, "aws-neuron-sdk" if name == "sdk" else "nki-samples"))
            checkouts[name] = root
        if not checkouts:
            raise Usage("give --sdk DIR, --samples DIR or both")
        gens = args.gen.split(",")
        for g in gens:
            if g not in ("trn1", "trn2", "trn3"):
                raise Usage("--gen %s: one of trn1, trn2, trn3" % g)
        if args.json and os.path.exists(args.json) and not args.force:
            raise Usage("--json %s exists; --force replaces it" % args.json)
        if args.scratch and os.path.exists(args.scratch) and os.listdir(args.scratch):
            raise Usage("--scratch %s is not empty" % args.scratch)
    except Usage as e:
        sys.stderr.write("sdk_examples.py: %s\n" % e)
        return 2
    rows = rows_for(checkouts, args.only)
    if args.list:
        for _, _, rid in rows:
            print(rid)
        return 0
    scratch = args.scratch or tempfile.mkdtemp(prefix="ncv_sdk_examples_")
    os.makedirs(scratch, exist_ok=True)
    done = []
    try:
        for example, file, rid in rows:
            for gen in gens:
                if example is None:
                    row = {"id": rid, "gen": gen, "status": "not in the catalogue",
                           "detail": "a new-API kernel this script has no harness call for",
                           "bench": "-"}
                elif not os.path.isfile(file):
                    row = {"id": rid, "gen": gen, "status": "missing",
                           "detail": "%s is not in the checkout" % file, "bench": "-"}
                else:
                    row = run_row(example, file, args.ncverify, gen, scratch, args.timeout,
                                  not args.no_bench, args.seed)
                done.append(row)
                print("%-86s %-4s %-20s %-14s %s" % (row["id"], gen, row["status"],
                                                     row["bench"], row["detail"]), flush=True)
    finally:
        if not args.scratch:
            shutil.rmtree(scratch, ignore_errors=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(done, f, indent=1)
    counts = {}
    for r in done:
        counts[r["status"]] = counts.get(r["status"], 0) + 1
    print("%d rows: %s" % (len(done), ", ".join("%d %s" % (n, s)
                                                for s, n in sorted(counts.items()))))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

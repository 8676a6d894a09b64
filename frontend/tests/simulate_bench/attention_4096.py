"""The simulator's speed on a 4096-token attention kernel (bench/simulate_bench.cpp runs this):
ncverify's rendition of the SD attention tutorial kernel (../kernels/sd_attention_rendition.py)
called on NumPy arrays as a test file calls it, with the time of the trace at the arrays' shapes,
of the run on the interpreter, and of the whole call printed (measured, never asserted). The
output is compared with a float64 NumPy attention so that a fast wrong answer is not a result."""

import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "kernels"))

from ncverify_nki import simulate  # noqa: E402
from ncverify_nki.kernel_api import unwrap  # noqa: E402
from sd_attention_rendition import sd_attention  # noqa: E402


def main(seqlen=4096, d_head=64):
    rng = np.random.default_rng(0)
    q, k, v = (rng.uniform(-1, 1, (seqlen, d_head)).astype(np.float32) for _ in range(3))
    start = time.monotonic()
    text, _, _, _ = simulate.trace_for_arrays(unwrap(sd_attention), (q, k, v), {})
    trace_s = time.monotonic() - start
    start = time.monotonic()
    out = sd_attention(q, k, v)
    call_s = time.monotonic() - start
    s = (q.astype(np.float64) * 0.125) @ k.astype(np.float64).T
    p = np.exp(s - s.max(axis=1, keepdims=True))
    golden = (p / p.sum(axis=1, keepdims=True)) @ v.astype(np.float64)
    err = float(np.abs(out - golden).max())
    print("seqlen %d d_head %d: trace %.2f s (%d program lines), trace + run %.2f s, "
          "max |out - float64 attention| %.2e" % (seqlen, d_head, trace_s,
                                                  text.count("\n"), call_s, err))
    return 0 if err < 2e-2 else 1


if __name__ == "__main__":
    sys.exit(main(*[int(a) for a in sys.argv[1:]]))

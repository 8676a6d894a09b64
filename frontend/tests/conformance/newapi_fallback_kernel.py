"""A kernel of today's API that falls back to the legacy namespace when `nki` is missing, as
public kernels written for both SDK layouts do: the fallback imports never run where `nki`
exists, so it is traced with the new API's semantics (newapi_packages_test.py)."""

try:
    import nki
    import nki.isa as nisa
    import nki.language as nl
except ImportError:
    import neuronxcc.nki as nki
    import neuronxcc.nki.isa as nisa
    import neuronxcc.nki.language as nl


@nki.jit
def transposed(x):
    """out = x.T for x [rows, cols], rows and cols <= 128, through the Tensor engine; x read
    through an access pattern (a method of today's tensors)."""
    rows, cols = x.shape
    out = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((rows, cols), dtype=x.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=x.ap(pattern=[[cols, rows], [1, cols]], offset=0))
    p = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.psum)
    nisa.nc_transpose(dst=p, data=t)
    s = nl.ndarray((cols, rows), dtype=x.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=s, src=p)
    nisa.dma_copy(dst=out, src=s)
    return out

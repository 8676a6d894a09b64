"""A legacy-API kernel whose decorator names its generation (neuronxcc.nki's
nki.jit(platform_target=)): `ncverify import --gen` that contradicts it is a usage error, and the
hardware-DGE DMA it makes is accepted only because it targets trn2."""
import neuronxcc.nki as nki
import neuronxcc.nki.isa as nisa
import neuronxcc.nki.language as nl


@nki.jit(platform_target="trn2")
def for_trn2(a):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a, dge_mode=nisa.dge_mode.hwdge)
    nisa.dma_copy(dst=out, src=t)
    return out

"""A new-API kernel that names its generation in its decorator: an error since NKI 0.3.0 (the
target is NEURON_PLATFORM_TARGET_OVERRIDE's, or `ncverify --gen`)."""
import nki
import nki.language as nl


@nki.jit(platform_target="trn2")
def for_trn2(a):
    return nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)

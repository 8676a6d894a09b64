"""A new-API kernel that names its generation in its decorator, as NKI 0.2 did (an error since NKI
0.3.0, where NEURON_PLATFORM_TARGET_OVERRIDE names it): traced for trn2; a `--gen` naming
another generation is a usage error."""
import nki
import nki.language as nl


@nki.jit(platform_target="trn2")
def for_trn2(a):
    return nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)

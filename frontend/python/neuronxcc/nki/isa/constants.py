"""`neuronxcc.nki.isa.constants`: the enums kernels import from it (the same objects as
`nisa.dge_mode` and `nisa.oob_mode`)."""
from ncverify_nki.isa import dge_mode, oob_mode  # noqa: F401
from ncverify_nki.errors import missing_name as _missing_name  # noqa: E402

__getattr__ = _missing_name("nisa.constants")

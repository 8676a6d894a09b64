"""`nki.isa.constants`: the enums nki-library imports from it (the same objects as
`nisa.oob_mode`, `nisa.dge_mode`, ...)."""
from ncverify_nki.newapi.constants import (dge_mode, dma_engine, engine,  # noqa: F401
                                           matmul_perf_mode, nc_version, oob_mode, reduce_cmd)
from ncverify_nki.errors import missing_name as _missing_name  # noqa: E402

__getattr__ = _missing_name("nisa.constants")

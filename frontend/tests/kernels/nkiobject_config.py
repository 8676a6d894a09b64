"""nki-library's idioms outside packages (tools/tests/frontend_nkilib_idioms_test.cpp): a config
class deriving from nl.NKIObject with @dataclass, passed as a kernel argument (`--param
"cfg=TileCfg(...)"`) and built as a default; a private method of it; log levels read from
os.environ when the module loads (nki-library's utils/logging.py does)."""

import os
from dataclasses import dataclass

import nki
import nki.isa as nisa
import nki.language as nl

LEVELS = {key: value for key, value in os.environ.items() if key.startswith("NCV_LOG")}
SCALE_OVERRIDE = os.getenv("NCV_SCALE", None)


@dataclass
class TileCfg(nl.NKIObject):
    rows: int = 128
    scale: float = 2.0

    def _factor(self):
        return self.scale if SCALE_OVERRIDE is None else float(SCALE_OVERRIDE)


@nki.jit
def scaled(a, cfg=TileCfg()):
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((cfg.rows, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=a[0:cfg.rows, :])
    nisa.tensor_scalar(dst=t, data=t, op0=nl.multiply, operand0=cfg._factor())
    nisa.dma_copy(dst=out[0:cfg.rows, :], src=t)
    return out


@dataclass
class Section(nl.NKIObject):
    index = None  # plain class attributes as fields (nki-library's SectionParams)
    offset = None


@nki.jit
def sectioned(a):
    s = Section(index=1, offset=64)
    out = nl.ndarray((64, a.shape[1]), dtype=a.dtype, buffer=nl.shared_hbm)
    t = nl.ndarray((64, a.shape[1]), dtype=a.dtype, buffer=nl.sbuf, name=None)
    nisa.dma_copy(dst=t, src=a[s.offset:s.offset + 64, :])
    nisa.dma_copy(dst=out, src=t)
    return out


@nki.jit
def dtype_names(a):
    # nki-library's allocator sizes a tensor by its dtype's name (utils/allocator.py)
    assert str(nl.float8_e4m3) == "float8_e4m3" and str(nl.bfloat16) == "bfloat16", \
        "dtype names: %s %s" % (nl.float8_e4m3, nl.bfloat16)
    out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
    nisa.dma_copy(dst=out, src=a)
    return out

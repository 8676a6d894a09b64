"""ncverify's stand-in for the top-level `nki` package (NKI 0.2-0.6, the new API; see
ncverify_nki.newapi). `neuronxcc.nki` is the legacy API, a separate stand-in."""
from ncverify_nki.newapi.kernel import jit, simulate  # noqa: F401
from ncverify_nki.errors import missing_name as _missing_name  # noqa: E402

from . import collectives, dtype, isa, language, typing  # noqa: F401,E402

__getattr__ = _missing_name("nki")

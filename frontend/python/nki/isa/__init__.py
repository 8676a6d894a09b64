from ncverify_nki.newapi.isa import *  # noqa: F401,F403
from ncverify_nki.errors import missing_name as _missing_name  # noqa: E402

from . import constants  # noqa: F401,E402

__getattr__ = _missing_name("nisa")

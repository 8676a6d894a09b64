from ncverify_nki.nki_typing import *  # noqa: F401,F403
from ncverify_nki.errors import missing_name as _missing_name  # noqa: E402

__getattr__ = _missing_name("nt")

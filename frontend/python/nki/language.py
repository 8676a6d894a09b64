from ncverify_nki.newapi.language import *  # noqa: F401,F403
from ncverify_nki.newapi.language import tile_size  # noqa: F401
from ncverify_nki.errors import missing_name as _missing_name  # noqa: E402

__getattr__ = _missing_name("nl")

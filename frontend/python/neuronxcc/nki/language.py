from ncverify_nki.language import *  # noqa: F401,F403
from ncverify_nki.language import par_dim, tile_size  # noqa: F401

# The stand-in's own helpers that `import *` brings along are not calls of the
# neuronxcc.nki.language pages: a kernel naming them is refused like any missing name.
del allocate, normalize  # noqa: F821
from ncverify_nki.errors import missing_name as _missing_name  # noqa: E402

__getattr__ = _missing_name("nl")

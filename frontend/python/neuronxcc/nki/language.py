from ncverify_nki.language import *  # noqa: F401,F403
from ncverify_nki.language import par_dim, tile_size  # noqa: F401

from nkilib_src.nkilib.core.attention.attention_tkg_utils import AttnTKGConfig
from test.integration.nkilib.core.attention.test_attention_tkg_utils import AttnTKGTestParams

import nki.language as nl

attention_tkg_fast_configs = [
    [AttnTKGConfig(2, 1, 3, 256, 512, 64, 0, tp_k_prior=True, use_pos_id=True, fuse_rope=True),
     AttnTKGTestParams()],
]

attention_tkg_slow_configs = [
    [AttnTKGConfig(4, 2, 5, 1024, 1024, 128, 32, qk_in_sb=True),
     AttnTKGTestParams(dtype=nl.float32, test_sink=True, sliding_window=128)],
]

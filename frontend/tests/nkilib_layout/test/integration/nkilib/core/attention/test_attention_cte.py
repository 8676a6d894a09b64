import numpy as np
import pytest

try:
    from test.integration.nkilib.core.attention.test_attention_cte_model_config import (
        attention_cte_model_configs,
    )
except ImportError:
    attention_cte_model_configs = []


class TestRangedAttentionCTEKernels:
    def run_attention_cte_test(self, **kwargs):
        pass

    small_params = "bs, seqlen_q, d, dtype, causal_mask, tp_q"
    small_perms = [
        [1, 256, 64, np.float32, True, True],
        [2, 200, 64, np.float32, False, True],
    ]

    @pytest.mark.parametrize(small_params, small_perms)
    @pytest.mark.parametrize("cache_softmax", [False, True])
    def test_small(self, test_manager, bs, seqlen_q, d, dtype, causal_mask, tp_q, cache_softmax):
        is_negative_test_case = False
        if seqlen_q % 128 != 0 and cache_softmax:
            is_negative_test_case = True
        compiler_args = CompilerArgs(logical_nc_config=1)
        with assert_negative_test_case(is_negative_test_case):
            self.run_attention_cte_test(
                compiler_args=compiler_args,
                bool_dims={CAUSAL_MASK_DIM_NAME: causal_mask, TP_Q_DIM_NAME: tp_q,
                           TP_OUT_DIM_NAME: False, TP_K_DIM_NAME: False, SINK_DIM_NAME: bs > 1},
                bs=bs, bs_kv=bs, cache_softmax=cache_softmax, cp_degree=None, d=d, dtype=dtype,
                seqlen_kv=seqlen_q * 2, seqlen_kv_prior=None, seqlen_q=seqlen_q,
                sliding_window=0, softmax_scale=0.5, cp_rank_id=None, use_cp=False)

    @pytest.mark.coverage_parametrize(bs=[1, 2])
    def test_sweep(self, bs):
        self.run_attention_cte_test(bs=bs)

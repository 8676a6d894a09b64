"""ncverify's entry point for nki-library's `attention_tkg` (not library code): `attention_tkg`
takes its output tensor and an SBUF manager from its caller, so it is traced through this
`@nki.jit` kernel, which makes them as nki-library's own test does for each configuration
(`test_attention_tkg.py`: the output in HBM or SBUF by `cfg.out_in_sb`, the RoPE'd keys when
`cfg.fuse_rope`, Q and K copied to SBUF first when `cfg.qk_in_sb`, an `SbufManager` over the SBUF
less 16 KiB for the compiler). nkilib_attention.py places this file beside a link to the
library's `nkilib` package. `dtype` is the name of the output dtype (`bfloat16`, `float32`)."""

import nki
import nki.isa as nisa
import nki.language as nl
from nkilib.core.attention.attention_tkg import attention_tkg
from nkilib.core.attention.attention_tkg_utils import AttnTKGConfig
from nkilib.core.utils.allocator import SbufManager
from nkilib.core.utils.logging import Logger

# SBUF the kernel's manager leaves to the compiler (the library's test leaves the same).
COMPILER_SBUF_BYTES = 16 * 1024


@nki.jit
def attention_tkg_entry(q, k_active, v_active, k_prior, v_prior, mask, inv_freqs=None,
                        rope_pos_ids=None, start_pos_ids=None, sink=None,
                        active_blocks_table=None, cfg=AttnTKGConfig(), dtype="bfloat16",
                        lnc=1):
    out_dtype = getattr(nl, dtype)
    sbm = SbufManager(0, nl.tile_size.total_available_sbuf_size - COMPILER_SBUF_BYTES,
                      Logger("SBM"))
    sbm.open_scope()
    rows = cfg.bs * cfg.q_head * cfg.s_active
    out_shape = (cfg.d_head, rows) if cfg.out_in_sb else (cfg.bs, cfg.q_head, cfg.d_head,
                                                          cfg.s_active)
    k_out_shape = (cfg.d_head, cfg.bs * cfg.s_active) if cfg.k_out_in_sb else \
        (cfg.bs, 1, cfg.d_head, cfg.s_active)
    if cfg.out_in_sb:
        out_sb = sbm.alloc_stack(out_shape, dtype=out_dtype, buffer=nl.sbuf)
    else:
        out = nl.ndarray(out_shape, dtype=out_dtype, buffer=nl.shared_hbm)
        out_sb = out
    k_out = None
    if cfg.fuse_rope:
        if cfg.k_out_in_sb:
            k_out = sbm.alloc_stack(k_out_shape, dtype=out_dtype, buffer=nl.sbuf)
        else:
            k_out = nl.ndarray(k_out_shape, dtype=out_dtype, buffer=nl.shared_hbm)
    if cfg.qk_in_sb:
        q_in = sbm.alloc_stack(q.shape, dtype=q.dtype, buffer=nl.sbuf)
        k_in = sbm.alloc_stack(k_active.shape, dtype=k_active.dtype, buffer=nl.sbuf)
        nisa.dma_copy(q_in, q)
        nisa.dma_copy(k_in, k_active)
    else:
        q_in, k_in = q, k_active
    attn_out, k_out = attention_tkg(q_in, k_in, v_active, k_prior, v_prior, mask, out_sb, cfg,
                                    sbm, inv_freqs, rope_pos_ids, start_pos_ids, sink,
                                    active_blocks_table, k_out)
    if cfg.out_in_sb:
        # the HBM output is `out` whatever cfg.out_in_sb (the test names it attn_out_hbm)
        out = nl.ndarray(attn_out.shape, dtype=attn_out.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=attn_out)
        attn_out = out
    if cfg.fuse_rope and cfg.k_out_in_sb:
        k_hbm = nl.ndarray(k_out.shape, dtype=k_out.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=k_hbm, src=k_out)
        k_out = k_hbm
    sbm.close_scope()
    if cfg.fuse_rope:
        return attn_out, k_out
    return attn_out

from dataclasses import dataclass


@dataclass
class AttnTKGConfig:
    bs: int = 0
    q_head: int = 0
    s_active: int = 0
    curr_sprior: int = 0
    full_sprior: int = 0
    d_head: int = 0
    block_len: int = 0
    tp_k_prior: bool = False
    use_pos_id: bool = False
    fuse_rope: bool = False
    qk_in_sb: bool = False

from dataclasses import dataclass

import nki.language as nl


@dataclass
class AttnTKGTestParams:
    dtype: str = nl.bfloat16
    test_sink: bool = False
    fp8_kv: bool = False
    sliding_window: int = 0

"""`nki.collectives` (NKI 0.2.0+): communication between NeuronCores. The model is one
NeuronCore: every documented name imports and is refused at the kernel's line when called
(ncverify_nki/newapi/collectives.py); any other name is missing_name's refusal."""
from ncverify_nki.errors import missing_name as _missing_name
from ncverify_nki.newapi.collectives import (  # noqa: F401
    ReplicaGroup, all_gather, all_gather_v, all_reduce, all_to_all, all_to_all_v,
    collective_permute, collective_permute_implicit, collective_permute_implicit_current_processing_rank_id,
    collective_permute_implicit_reduce, rank_id, reduce_scatter)

__getattr__ = _missing_name("nki.collectives")

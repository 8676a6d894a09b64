"""`nki.collectives` (NKI 0.2.0+): communication between NeuronCores. The model is one
NeuronCore, so every collective is refused at the kernel's line (missing_name)."""
from ncverify_nki.errors import missing_name as _missing_name

__getattr__ = _missing_name("nki.collectives")

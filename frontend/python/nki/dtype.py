"""`nki.dtype`: not in the 0.6 reference, but nki-library annotates dtype arguments with it
(`compute_dtype: nki.dtype = nl.bfloat16`, 26 places) and its tests import it as a module of
dtypes (`import nki.dtype as nt`; `nt.float8_e4m3`), so the compiler has such a module. Here it
holds nki.language's dtype names; an annotation may name the module itself."""
from ncverify_nki.newapi.language import (  # noqa: F401
    bfloat16, bool_, float4_e2m1fn_x4, float8_e4m3, float8_e4m3fn, float8_e4m3fn_x4,
    float8_e5m2, float8_e5m2_x4, float8_e8m0fnu, float16, float32, int8, int16, int32, tfloat32,
    uint8, uint16, uint32)
from ncverify_nki.errors import missing_name as _missing_name  # noqa: E402

__getattr__ = _missing_name("nki.dtype")

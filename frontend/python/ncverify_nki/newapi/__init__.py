"""Today's NKI API (the top-level `nki` package, NKI 0.2-0.6) on ncverify's tracer.

The calls are destination-first (`nisa.tensor_copy(dst, src)`), take no `dtype=`/`mask=`, and
their output dtype is `dst.dtype`; buffers are chosen by `nl.ndarray(..., buffer=)`. The
instructions recorded are the legacy stand-in's (ops.py, tiles.py, rules.py): only signatures
and the rules the new API changed live here (frontend/README.md "The nki package")."""

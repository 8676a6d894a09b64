"""NKI dtypes and their `.nkir` names. A kernel may spell a dtype as `nl.bfloat16`, `np.float32`,
`np.dtype('float32')` or a string; all normalise to one DType."""

from . import errors


class DType:
    __slots__ = ("name",)

    def __init__(self, name):
        self.name = name  # the .nkir dtype name

    def __eq__(self, other):
        try:
            return normalize(other).name == self.name
        except errors.NkiError:
            return False

    def __ne__(self, other):
        return not self.__eq__(other)

    def __hash__(self):
        return hash(self.name)

    def __repr__(self):
        return "nl.%s" % _NKI_NAME.get(self.name, self.name)

    def __str__(self):
        # the dtype's NKI name: nki-library's allocator sizes tensors by
        # `str(dtype) in ["float8e4", "float8_e4m3", ...]` (utils/allocator.py, sizeinbytes)
        return _NKI_NAME.get(self.name, self.name)

    @property
    def dtype(self):
        """What np.dtype(nl.bfloat16) sees: the numpy dtype; for bf16 and fp8, which numpy lacks,
        ml_dtypes' type when ml_dtypes is installed (as the NKI simulator stores them), else raw
        bytes of the right size, so that `.itemsize` arithmetic works."""
        import numpy as np

        ml = _ml_dtypes()
        if self.name in _ML_DTYPES and hasattr(ml, _ML_DTYPES[self.name]):
            return np.dtype(getattr(ml, _ML_DTYPES[self.name]))
        return np.dtype(_NUMPY.get(self.name) or "V%d" % self.itemsize)

    @property
    def itemsize(self):
        from .program import DTYPE_BYTES

        return DTYPE_BYTES[self.name]


_ALIASES = {
    "float32": "fp32", "fp32": "fp32", "tfloat32": "fp32",
    "bfloat16": "bf16", "bf16": "bf16",
    "float16": "fp16", "fp16": "fp16", "half": "fp16",
    "float8_e4m3": "fp8_e4m3", "fp8_e4m3": "fp8_e4m3", "float8_e4m3fn": "fp8_e4m3fn",
    "fp8_e4m3fn": "fp8_e4m3fn", "float8_e5m2": "fp8_e5m2", "fp8_e5m2": "fp8_e5m2",
    "int32": "int32", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32",
    "int8": None, "int16": None, "float64": None, "bool": "uint8", "bool_": "uint8",
    # MX packed operands of nisa.quantize_mx / nisa.nc_matmul_mx (the new dialect, trn3)
    "float8_e4m3fn_x4": "fp8_e4m3fn_x4", "fp8_e4m3fn_x4": "fp8_e4m3fn_x4",
    "float8_e5m2_x4": "fp8_e5m2_x4", "fp8_e5m2_x4": "fp8_e5m2_x4",
    "float4_e2m1fn_x4": "fp4_e2m1fn_x4", "fp4_e2m1fn_x4": "fp4_e2m1fn_x4",
}
_NUMPY = {"fp32": "float32", "fp16": "float16", "int32": "int32", "uint8": "uint8",
          "uint16": "uint16", "uint32": "uint32"}
_ml = []  # [ml_dtypes or None], looked up once


def _ml_dtypes():
    if not _ml:
        try:
            import ml_dtypes
        except ImportError:
            ml_dtypes = None
        _ml.append(ml_dtypes)
    return _ml[0]


_ML_DTYPES = {"bf16": "bfloat16", "fp8_e4m3": "float8_e4m3", "fp8_e4m3fn": "float8_e4m3fn",
              "fp8_e5m2": "float8_e5m2"}
_NKI_NAME = {"fp32": "float32", "bf16": "bfloat16", "fp16": "float16", "fp8_e4m3": "float8_e4m3",
             "fp8_e4m3fn": "float8_e4m3fn", "fp8_e5m2": "float8_e5m2",
             "fp8_e4m3fn_x4": "float8_e4m3fn_x4", "fp8_e5m2_x4": "float8_e5m2_x4",
             "fp4_e2m1fn_x4": "float4_e2m1fn_x4"}


def normalize(d):
    if isinstance(d, DType):
        return d
    key = None
    if isinstance(d, str):
        key = d
    else:
        try:
            import numpy as np

            key = np.dtype(d).name
        except Exception:
            key = getattr(d, "__name__", None) or str(d)
    name = _ALIASES.get(key, "missing")
    if name is None or name == "missing":
        raise errors.NkiError("dtype %s is not one the model supports (fp32, bf16, fp16, fp8, "
                              "int32, uint8/16/32)" % key)
    return DType(name)


float32 = DType("fp32")
bfloat16 = DType("bf16")
float16 = DType("fp16")
tfloat32 = DType("fp32")
float8_e4m3 = DType("fp8_e4m3")
float8_e5m2 = DType("fp8_e5m2")
int32 = DType("int32")
uint8 = DType("uint8")
uint16 = DType("uint16")
uint32 = DType("uint32")
bool_ = DType("uint8")

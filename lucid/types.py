"""Lucid's dtype system: one logical type name for both backends.

A ``Numeric`` is a *logical* dtype: a base kind (``int``, ``float``, ``complex``, ``bool``) and
a width in bits.  ``Numeric.cpu`` is the NumPy dtype that stores it and ``Numeric.gpu`` the MLX
dtype.  The two are not always the same width: MLX's GPUs have no float64, so ``Float64`` on
the "gpu" device is stored as float32 while the tensor still *reports* ``Float64``.  That policy
is one function, :func:`gpu_float64_storage_bits`, so it can be read and tested in one place.

Bit-free presets (``Float``, ``Int``, ``Complex``) carry no width; they take it from the data
(:meth:`Numeric.auto_parse`): float64 data given ``dtype=lucid.Float`` stays 64-bit on the CPU.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = [
    "Numeric",
    "Bool",
    "Int",
    "Int8",
    "Int16",
    "Int32",
    "Int64",
    "UInt8",
    "Float",
    "Float16",
    "Float32",
    "Float64",
    "Complex",
    "Complex64",
    "to_numeric_type",
    "as_numeric",
    "gpu_float64_storage_bits",
    "set_default_dtype",
    "get_default_dtype",
]

_BASE_NAMES = {bool: "bool", int: "int", float: "float", complex: "complex"}


def gpu_float64_storage_bits(mlx_default_is_gpu: bool) -> int:
    """How many bits store a logical Float64 on the "gpu" device.

    MLX GPUs (Metal, CUDA) have no float64 kernels, so there a Float64 tensor is stored as
    float32; MLX's CPU device (Linux ``mlx[cpu]``) has float64 and keeps all 64 bits.  The
    tensor's logical dtype stays ``Float64`` either way.
    """
    return 32 if mlx_default_is_gpu else 64


def _mlx_default_is_gpu() -> bool:
    """True when MLX is installed and its default device is a GPU (Metal or CUDA)."""
    try:
        import mlx.core as mx
    except ImportError:
        return False
    return mx.default_device().type == mx.DeviceType.gpu


class Numeric:
    """A logical dtype: ``Numeric(base_dtype, bits)``.

    >>> Float32 = Numeric(float, 32)
    >>> Float32.cpu
    dtype('float32')
    >>> Numeric(float, None).is_bit_free
    True
    """

    __slots__ = ("base_dtype", "bits", "unsigned")

    def __init__(self, base_dtype: type, bits: int | None, unsigned: bool = False) -> None:
        if base_dtype not in _BASE_NAMES:
            raise TypeError(
                f"Numeric: base_dtype must be bool, int, float or complex, got {base_dtype!r}"
            )
        if bits is not None and not isinstance(bits, int):
            raise TypeError(f"Numeric: bits must be an int or None, got {bits!r}")
        self.base_dtype = base_dtype
        self.bits = bits
        self.unsigned = unsigned
        if bits is not None:
            np.dtype(self._np_name(bits))  # raises TypeError for widths NumPy lacks

    # -- names ---------------------------------------------------------------------------
    @property
    def base_str(self) -> str:
        return _BASE_NAMES[self.base_dtype]

    def _np_name(self, bits: int) -> str:
        if self.base_dtype is bool:
            return "bool"
        return ("u" if self.unsigned else "") + self.base_str + str(bits)

    @property
    def name(self) -> str:
        """The preset's name: ``Float32``, ``Int`` (bit-free), ``Bool``."""
        if self.base_dtype is bool:
            return "Bool"
        stem = ("U" if self.unsigned else "") + self.base_str.capitalize()
        return stem if self.bits is None else f"{stem}{self.bits}"

    @property
    def is_bit_free(self) -> bool:
        return self.bits is None

    @property
    def is_floating_point(self) -> bool:
        return self.base_dtype is float

    @property
    def is_complex(self) -> bool:
        return self.base_dtype is complex

    # -- backend dtypes ------------------------------------------------------------------
    @property
    def cpu(self) -> np.dtype | None:
        """The NumPy dtype that stores this type (None for a bit-free preset)."""
        return None if self.bits is None else np.dtype(self._np_name(self.bits))

    @property
    def gpu(self) -> Any:
        """The MLX dtype that stores this type on the "gpu" device (None when bit-free)."""
        if self.bits is None:
            return None
        import mlx.core as mx

        if self.base_dtype is bool:
            return mx.bool_
        bits = self.bits
        if self.base_dtype is float and bits == 64:
            bits = gpu_float64_storage_bits(_mlx_default_is_gpu())
        stored = getattr(mx, self._np_name(bits), None)
        if stored is None:  # complex128: MLX's widest complex type is complex64
            raise TypeError(
                f"{self.name} cannot be stored on 'gpu': MLX has no {self._np_name(bits)}. Keep "
                "the tensor on 'cpu', or convert it first: x.astype(lucid.Complex64).to('gpu')"
            )
        return stored

    def parse(self, device: str) -> Any:
        """The backend dtype for ``device`` ("cpu" → NumPy, "gpu" → MLX)."""
        return self.cpu if device == "cpu" else self.gpu

    def auto_parse(self, data_dtype: Any, device: str = "cpu") -> Any:
        """Resolve a bit-free preset against the dtype of existing data.

        The width comes from the data: ``Float`` on int64 data is float64, on float32 data
        float32; ``Complex`` on float32 data is complex64.  A fixed-width type ignores the data.
        """
        if self.bits is not None:
            return self.parse(device)
        return self.resolve_bits(data_dtype).parse(device)

    def resolve_bits(self, data_dtype: Any) -> Numeric:
        """The fixed-width Numeric a bit-free preset becomes for data of ``data_dtype``."""
        if self.bits is not None:
            return self
        bits = _dtype_bits(data_dtype)
        if self.base_dtype is float:
            bits = min(max(bits, 16), 64)
        elif self.base_dtype is complex:
            bits = 64 if bits <= 32 else 128
        elif self.base_dtype is int:
            bits = min(max(bits, 8), 64)
        else:
            bits = 8
        return Numeric(self.base_dtype, bits)

    # -- identity ------------------------------------------------------------------------
    def __eq__(self, other: object) -> bool:
        other = _maybe_numeric(other)
        if not isinstance(other, Numeric):
            return NotImplemented
        return (self.base_dtype, self.bits, self.unsigned) == (
            other.base_dtype,
            other.bits,
            other.unsigned,
        )

    def __hash__(self) -> int:
        return hash((self.base_dtype, self.bits, self.unsigned))

    def __repr__(self) -> str:
        extra = ", unsigned=True" if self.unsigned else ""
        return (
            f"lucid.types.Numeric(base_dtype={self.base_str}, bits={self.bits}{extra})"
        )

    def __str__(self) -> str:
        return self.name


def _dtype_bits(data_dtype: Any) -> int:
    """Width in bits of a NumPy or MLX dtype (MLX dtypes expose ``size`` in bytes)."""
    size = getattr(data_dtype, "size", None)
    if isinstance(size, int) and not isinstance(data_dtype, np.dtype):
        return size * 8
    try:
        return np.dtype(data_dtype).itemsize * 8
    except TypeError as exc:
        raise TypeError(f"Unsupported dtype {data_dtype!r}: cannot read its width") from exc


Bool = Numeric(bool, 8)
Int = Numeric(int, None)
Int8 = Numeric(int, 8)
Int16 = Numeric(int, 16)
Int32 = Numeric(int, 32)
Int64 = Numeric(int, 64)
UInt8 = Numeric(int, 8, unsigned=True)
Float = Numeric(float, None)
Float16 = Numeric(float, 16)
Float32 = Numeric(float, 32)
Float64 = Numeric(float, 64)
Complex = Numeric(complex, None)
Complex64 = Numeric(complex, 64)
Complex128 = Numeric(complex, 128)

_BUILTINS = {bool: Bool, int: Int, float: Float, complex: Complex}

# NumPy dtype -> Numeric.  Built once; Tensor.dtype reads it on every call.
_NP_TO_NUMERIC: dict[np.dtype, Numeric] = {
    np.dtype(t.cpu): t
    for t in (Bool, Int8, Int16, Int32, Int64, UInt8, Float16, Float32, Float64, Complex64,
              Complex128)
}
for _bits in (16, 32, 64):
    _NP_TO_NUMERIC[np.dtype(f"uint{_bits}")] = Numeric(int, _bits, unsigned=True)


_SEEN: dict[Any, Numeric] = {}


def to_numeric_type(data_dtype: Any) -> Numeric:
    """Map a NumPy or MLX dtype (or a builtin type) to its Numeric.

    Raises ``TypeError("Unsupported dtype ...")`` for anything that is not a number or a bool
    (strings, objects, datetimes).
    """
    if isinstance(data_dtype, Numeric):
        return data_dtype
    try:
        return _SEEN[data_dtype]  # the hot path: a dtype object met before
    except (KeyError, TypeError):
        pass
    if data_dtype in _BUILTINS:
        return _BUILTINS[data_dtype]
    try:
        found = _NP_TO_NUMERIC.get(np.dtype(data_dtype))
    except TypeError:
        found = None
    if found is None:
        found = _mlx_to_numeric(data_dtype)
    if found is not None:
        _SEEN[data_dtype] = found
    else:
        raise TypeError(
            f"Unsupported dtype {data_dtype!r}: Lucid tensors hold bool, int, uint, float or "
            "complex numbers (use one of lucid.Bool, lucid.Int*, lucid.Float*, lucid.Complex64)"
        )
    return found


def _mlx_to_numeric(data_dtype: Any) -> Numeric | None:
    name = str(data_dtype).rsplit(".", 1)[-1]
    if name == "bool_":
        name = "bool"
    if name == "bfloat16":
        return None
    try:
        return _NP_TO_NUMERIC.get(np.dtype(name))
    except TypeError:
        return None


def _maybe_numeric(dtype: Any) -> Any:
    try:
        return to_numeric_type(dtype)
    except TypeError:
        return dtype


def as_numeric(dtype: Any) -> Numeric:
    """Accept a Numeric, a builtin (bool/int/float/complex) or a NumPy/MLX dtype."""
    if isinstance(dtype, Numeric):
        return dtype
    return to_numeric_type(dtype)


# --------------------------------------------------------------------------------------------
# PyTorch's names for the presets, and the default floating-point dtype

#: ``lucid.float32``, ``lucid.long``, ... (PyTorch's spellings; ``lucid/__init__`` publishes
#: them).  As in PyTorch, ``float`` is 32 bits and ``int`` 32 bits, unlike the bit-free
#: ``lucid.Float`` / ``lucid.Int`` and the builtins, which take NumPy's 64.
PYTORCH_NAMES: dict[str, Numeric] = {
    "bool": Bool,
    "uint8": UInt8,
    "int8": Int8,
    "int16": Int16, "short": Int16,
    "int32": Int32, "int": Int32,
    "int64": Int64, "long": Int64,
    "float16": Float16, "half": Float16,
    "float32": Float32, "float": Float32,
    "float64": Float64, "double": Float64,
    "complex64": Complex64, "cfloat": Complex64,
    "complex128": Complex128, "cdouble": Complex128,
}

#: what a Python float (and a creation function without ``dtype``) becomes: Float64, NumPy's
#: and Lucid's rule, until :func:`set_default_dtype` says otherwise.
_DEFAULT_FLOAT = [Float64]


def set_default_dtype(dtype: Any) -> None:
    """Make ``dtype`` (Float32 or Float64; Float16 too) the dtype of Python floats and of the
    creation and random functions called without ``dtype`` (``lucid.ones(3)``,
    ``lucid.tensor([1.5])``, ``lucid.randn(2)``).  Lucid's default is Float64 (NumPy's);
    ``lucid.set_default_dtype(lucid.float32)`` gives PyTorch's.  Layers' weights are Float32
    either way.  Integer data (``lucid.tensor([1, 2])``) stays Int64.
    """
    numeric = as_numeric(dtype)
    if not numeric.is_floating_point or numeric.bits is None:
        raise TypeError(
            f"set_default_dtype: expected a floating-point dtype with a width (lucid.float32, "
            f"lucid.float64, lucid.float16), got {dtype!r}"
        )
    _DEFAULT_FLOAT[0] = numeric


def get_default_dtype() -> Numeric:
    """The dtype of Python floats and of float creation without ``dtype`` (Float64 unless
    :func:`set_default_dtype` changed it)."""
    return _DEFAULT_FLOAT[0]

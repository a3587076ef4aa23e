"""lucid.types.Numeric: presets, backend dtypes, bit-free resolution, the gpu float64 policy."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid import types
from lucid.types import Numeric, gpu_float64_storage_bits, to_numeric_type


@pytest.mark.parametrize(
    "preset,np_dtype",
    [
        (lucid.Int8, np.int8), (lucid.Int16, np.int16), (lucid.Int32, np.int32),
        (lucid.Int64, np.int64), (lucid.Float16, np.float16), (lucid.Float32, np.float32),
        (lucid.Float64, np.float64), (lucid.Complex64, np.complex64),
    ],
)
def test_fixed_presets_map_to_numpy(preset, np_dtype):
    assert preset.cpu == np.dtype(np_dtype)
    assert preset.parse("cpu") == np.dtype(np_dtype)
    assert to_numeric_type(np_dtype) == preset
    assert to_numeric_type(np.dtype(np_dtype)) is preset


def test_top_level_presets_exist():
    for name in ("Int", "Int8", "Int16", "Int32", "Int64", "Float", "Float16", "Float32",
                 "Float64", "Complex", "Complex64"):
        assert isinstance(getattr(lucid, name), Numeric)


def test_bit_free_presets_take_width_from_data():
    assert lucid.Float.is_bit_free and lucid.Float.cpu is None
    assert lucid.Float.auto_parse(np.float64) == np.float64
    assert lucid.Float.auto_parse(np.dtype(np.float32)) == np.float32
    assert lucid.Float.auto_parse(np.int64) == np.float64
    assert lucid.Int.auto_parse(np.float32) == np.int32
    assert lucid.Complex.auto_parse(np.float32) == np.complex64
    assert lucid.Complex.auto_parse(np.float64) == np.complex128


def test_seed_001_bit_free_example():
    data = np.array([1.0, 2.0], dtype=np.float64)
    x = lucid.tensor(data, dtype=lucid.Float)
    assert x.dtype == lucid.Float64  # float64 data stays 64-bit on the CPU
    assert x.data.dtype == np.float64


def test_seed_001_explicit_float64_example():
    x = lucid.tensor([1.0, 2.0, 3.0], dtype=lucid.Float64)
    assert x.device == "cpu"
    assert x.dtype == lucid.Float64
    assert repr(x.dtype) == "lucid.types.Numeric(base_dtype=float, bits=64)"


def test_equality_is_symmetric_and_hashable():
    assert lucid.Float32 == Numeric(float, 32)
    assert Numeric(float, 32) == lucid.Float32
    assert lucid.Float32 == np.float32 and np.dtype("float32") == lucid.Float32.cpu
    assert lucid.Float32 != lucid.Float64
    assert lucid.Float != lucid.Float64
    assert len({lucid.Float32, Numeric(float, 32)}) == 1


@pytest.mark.parametrize(
    "dtype,name",
    [(np.complex128, "Complex128"), (np.uint8, "UInt8"), (np.bool_, "Bool"),
     (np.uint16, "UInt16")],
)
def test_to_numeric_type_covers_other_numpy_dtypes(dtype, name):
    assert to_numeric_type(dtype).name == name
    assert to_numeric_type(dtype).cpu == np.dtype(dtype)


@pytest.mark.parametrize("bad", [np.str_, object, "datetime64[s]", np.void])
def test_unsupported_dtype_raises(bad):
    with pytest.raises(TypeError, match="Unsupported dtype"):
        to_numeric_type(bad)


def test_tensor_rejects_unsupported_dtype_and_data():
    with pytest.raises(TypeError, match="Unsupported dtype"):
        lucid.Tensor(np.array(["a", "b"]))
    with pytest.raises(TypeError, match="Unsupported dtype"):
        lucid.Tensor([1.0], dtype=str)


def test_builtins_accepted_wherever_a_dtype_is():
    assert lucid.Tensor([1, 2], dtype=float).dtype == lucid.Float64
    assert lucid.Tensor([1.5, 2.5], dtype=int).dtype == lucid.Int64
    assert lucid.Tensor([0, 2], dtype=bool).dtype == types.Bool
    assert lucid.Tensor([1.0]).astype(float).dtype == lucid.Float64
    assert lucid.Tensor(np.ones(2, np.float32)).astype(lucid.Float).dtype == lucid.Float32


def test_gpu_float64_policy_is_one_function_tested_both_ways():
    assert gpu_float64_storage_bits(mlx_default_is_gpu=True) == 32  # Metal / CUDA
    assert gpu_float64_storage_bits(mlx_default_is_gpu=False) == 64  # MLX's CPU device


def test_invalid_numeric_construction():
    with pytest.raises(TypeError, match="base_dtype must be"):
        Numeric(str, 8)
    with pytest.raises(TypeError):
        Numeric(float, 8)  # NumPy has no float8


def test_python_scalars_follow_numpy_defaults():
    assert lucid.Tensor(1.5).dtype == lucid.Float64
    assert lucid.Tensor(3).dtype == lucid.Int64
    assert lucid.Tensor([True]).dtype == types.Bool


def test_weak_python_scalars_keep_the_tensor_dtype():
    x = lucid.Tensor(np.ones(3, np.float32))
    assert (x + 2.5).dtype == lucid.Float32
    assert (2 * x).dtype == lucid.Float32
    i = lucid.Tensor(np.ones(3, np.int32))
    assert (i + 2).dtype == lucid.Int32
    assert (i + 2.5).dtype == lucid.Float64

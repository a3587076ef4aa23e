"""The "gpu" device (MLX): device rules of seed 000, ``parse_mlx_indexing``, logical dtypes on
gpu and the Float64 policy (seed 001), differentiable moves, laziness, creation with
``device=``, availability, warnings and a missing MLX.

On Linux with ``mlx[cpu]`` the "gpu" runs on MLX's CPU device; everything here is the real MLX
code path.  What depends on a real GPU (Metal/CUDA: Float64 stored as float32) is tested by
injecting the policy (``lucid.types._mlx_default_is_gpu``).
"""

from __future__ import annotations

import re
import sys
import warnings

import numpy as np
import pytest

mx = pytest.importorskip("mlx.core", reason="MLX is not installed; `make test` installs mlx[cpu]")

import lucid  # noqa: E402
import lucid.types  # noqa: E402
from lucid import backends  # noqa: E402
from lucid.backends import mlx_backend  # noqa: E402
from lucid.backends.mlx_backend import (  # noqa: E402
    GPUNotAvailableWarning,
    MLXBackend,
    has_gpu,
    parse_mlx_indexing,
)
from lucid.shapes import fmt  # noqa: E402
from lucid.types import Bool, UInt8, to_numeric_type  # noqa: E402

with warnings.catch_warnings():  # load the backend once; its one-time warning is tested below
    warnings.simplefilter("ignore", GPUNotAvailableWarning)
    backends.get_backend("gpu")

#: how a logical Float64 is stored on this host's "gpu" (float64 on MLX's CPU device)
F64_STORAGE = mx.float32 if has_gpu() else mx.float64


def gpu(data, **kw):
    """A fixed (not free) gpu tensor from a NumPy array."""
    return lucid.Tensor(np.asarray(data), device="gpu", **kw)


def cpu(data, **kw):
    """A fixed (not free) cpu tensor from a NumPy array."""
    return lucid.Tensor(np.asarray(data), **kw)


@pytest.fixture
def gpu_policy(monkeypatch):
    """Make Lucid believe MLX's default device is a GPU (Metal/CUDA: no float64 there)."""
    monkeypatch.setattr(lucid.types, "_mlx_default_is_gpu", lambda: True)


@pytest.fixture
def fresh_registry(monkeypatch):
    """Forget the loaded gpu backend for one test; monkeypatch restores the registry after."""
    monkeypatch.delitem(backends.BACKENDS, "gpu", raising=False)
    monkeypatch.setitem(backends.BY_XP, mx, backends.BY_XP[mx])


@pytest.fixture
def mlx_missing(monkeypatch, fresh_registry):
    """Behave as if MLX were not installed (the import of the MLX backend fails)."""
    monkeypatch.setitem(sys.modules, "lucid.backends.mlx_backend", None)


# --------------------------------------------------------------------------------------------
# seed 000: free tensors follow the op's device; fixed tensors on two devices are an error


def test_seed_000_free_list_tensor_adopts_the_op_device():
    a = lucid.Tensor([1, 2])  # cpu, is_free=True (from a list)
    b = lucid.Tensor([3, 4]).to("gpu")
    c = lucid.add(a, b)  # a moves to gpu for the op
    assert c.device == "gpu"
    assert isinstance(c.data, mx.array) and c.data.dtype == mx.int64
    assert c.tolist() == [4, 6] and c.dtype == lucid.Int64
    assert a.is_free and a.device == "cpu"  # the move made a new tensor; a stays where it was


def test_free_gpu_tensor_meeting_a_cpu_tensor_goes_to_cpu():
    g = lucid.Tensor([1.0, 2.0], requires_grad=True, device="gpu")  # free: made from a list
    c = cpu([3.0, 4.0], requires_grad=True)  # fixed: made from an array
    assert g.is_free and not c.is_free
    for r in (g * c, c * g):
        assert r.device == "cpu" and isinstance(r.data, np.ndarray) and not r.is_free
        np.testing.assert_array_equal(r.numpy(), [3.0, 8.0])
    (g * c).sum().backward()
    assert isinstance(g.grad, mx.array)  # the gradient travelled back to the gpu leaf
    np.testing.assert_array_equal(np.array(g.grad), [3.0, 4.0])
    assert isinstance(c.grad, np.ndarray)
    np.testing.assert_array_equal(c.grad, [1.0, 2.0])


def test_fixed_gpu_tensor_pulls_free_operands_to_gpu():
    x = gpu([1.0, 2.0])
    for r in (x + [10.0, 20.0], [10.0, 20.0] + x, x * 3.0, lucid.Tensor([1.0, 1.0]) - x,
              cpu([5.0, 5.0]).free() * x):
        assert r.device == "gpu" and isinstance(r.data, mx.array)
    np.testing.assert_array_equal((cpu([5.0, 5.0]).free() * x).numpy(), [5.0, 10.0])


def test_two_free_tensors_on_two_devices_meet_on_gpu():
    r = lucid.Tensor([1.0]) + lucid.Tensor([2.0]).to("gpu")
    assert r.device == "gpu" and r.is_free


@pytest.mark.parametrize(
    "name,fn,a_shape,b_shape",
    [
        ("add", lucid.add, (2, 3), (2, 3)),
        ("mul", lucid.mul, (2, 3), (3,)),
        ("matmul", lucid.matmul, (2, 3), (3, 4)),
        ("sub", lambda a, b: a - b, (4,), (4,)),
    ],
)
def test_fixed_tensors_on_two_devices_raise_naming_op_shapes_devices(name, fn, a_shape, b_shape):
    a, b = cpu(np.ones(a_shape)), gpu(np.ones(b_shape))
    with pytest.raises(RuntimeError) as info:
        fn(a, b)
    msg = str(info.value)
    assert msg.startswith(f"{name}: inputs are on different devices"), msg
    assert f"{fmt(a_shape)} on 'cpu'" in msg and f"{fmt(b_shape)} on 'gpu'" in msg
    assert ".to('gpu')" in msg and ".to('cpu')" in msg


def test_where_with_fixed_tensors_on_two_devices_raises():
    with pytest.raises(RuntimeError, match=r"^where: inputs are on different devices"):
        lucid.where(cpu([True]), gpu([1.0]), 0.0)


# --------------------------------------------------------------------------------------------
# parse_mlx_indexing: seed 000's table


def _same(parsed, want):
    assert isinstance(parsed, mx.array) and parsed.dtype == mx.int32
    assert np.array(parsed).tolist() == want


@pytest.mark.parametrize("index,want", [(True, 1), (False, 0)])
def test_parse_python_bool_becomes_1_or_0(index, want):
    out = parse_mlx_indexing(index)
    assert out == want and type(out) is int


def test_parse_mx_bool_mask_becomes_int32_positions():
    _same(parse_mlx_indexing(mx.array([True, False, True, True])), [0, 2, 3])
    _same(parse_mlx_indexing(mx.array([False, False])), [])


def test_parse_list_of_bools_becomes_int32_positions():
    _same(parse_mlx_indexing([False, True, True]), [1, 2])


def test_parse_list_of_ints_becomes_an_int32_array():
    _same(parse_mlx_indexing([3, 0, -1, 0]), [3, 0, -1, 0])


@pytest.mark.parametrize("index", [2, -1, slice(1, None, 2), None, Ellipsis])
def test_parse_leaves_other_indices_unchanged(index):
    assert parse_mlx_indexing(index) == index


def test_parse_leaves_an_int_mx_array_unchanged():
    idx = mx.array([1, 0])
    assert parse_mlx_indexing(idx) is idx


def test_parse_tuple_is_parsed_part_by_part():
    out = parse_mlx_indexing((True, [0, 2], mx.array([False, True]), slice(None), 1, None))
    assert isinstance(out, tuple) and len(out) == 6
    assert out[0] == 1 and type(out[0]) is int
    _same(out[1], [0, 2])
    _same(out[2], [1])
    assert out[3] == slice(None) and out[4] == 1 and out[5] is None


@pytest.mark.parametrize(
    "index", [np.array([0, 1]), np.array([True, False]), np.zeros((2, 2), int)],
    ids=["ints", "bools", "2d"],
)
def test_parse_numpy_array_is_a_type_error(index):
    with pytest.raises(TypeError, match="GPU tensors do not support CPU tensor or NumPy array"):
        parse_mlx_indexing(index)


def test_parse_tuple_holding_a_numpy_array_is_a_type_error_naming_the_position():
    with pytest.raises(TypeError, match=r"NumPy array at position 1 of the index"):
        parse_mlx_indexing((0, np.array([1])))


@pytest.mark.parametrize(
    "index",
    [[True, False, True, False, True], [4, 0, 0], mx.array([False, True, False, True, True]),
     (slice(None), [1, 0]), 3, slice(1, 4)],
    ids=["bool-list", "int-list", "mx-mask", "tuple", "int", "slice"],
)
def test_parsed_index_selects_what_numpy_selects(index):
    # (a Python bool is the exception: the table makes it 1/0, where NumPy reads x[True] as a
    # 0-d mask that adds an axis; Lucid's own indexing rejects it with a TypeError)
    host = np.arange(10).reshape(5, 2) if isinstance(index, tuple) else np.arange(5)
    np_index = index
    if isinstance(index, mx.array):
        np_index = np.array(index)
    want = host[np_index]
    got = mx.array(host)[parse_mlx_indexing(index)]
    np.testing.assert_array_equal(np.array(got), want)


# --------------------------------------------------------------------------------------------
# indexing gpu tensors


@pytest.mark.parametrize(
    "index,where",
    [
        (np.array([0, 1]), "position 0"),
        (np.array([True, False, True]), "position 0"),
        ((0, np.array([1])), "position 1"),
    ],
)
def test_gpu_tensor_indexed_by_a_numpy_array_is_a_type_error(index, where):
    x = gpu(np.arange(12.0).reshape(3, 4))
    with pytest.raises(TypeError) as info:
        x[index]
    msg = str(info.value)
    assert msg.startswith("getitem: GPU tensors do not support CPU tensor or NumPy array indexing")
    assert where in msg and "device='gpu'" in msg
    with pytest.raises(TypeError, match=r"^__setitem__: GPU tensors do not support"):
        x[index] = 0.0


def test_gpu_tensor_indexed_by_a_cpu_tensor_is_a_type_error():
    x = gpu(np.arange(12.0).reshape(3, 4))
    for index in (lucid.Tensor([0, 1]), cpu([0, 1]), cpu([True, False, True])):
        with pytest.raises(TypeError) as info:
            x[index]
        assert str(info.value) == (
            "getitem: an index tensor on 'cpu' cannot index a tensor on 'gpu'; move the index "
            "first (index.to('gpu'))"
        )
    with pytest.raises(TypeError, match=r"^__setitem__: an index tensor on 'cpu'"):
        x[cpu([0])] = 1.0


def test_cpu_tensor_indexed_by_a_gpu_tensor_is_a_type_error():
    with pytest.raises(TypeError, match=r"index tensor on 'gpu' cannot index a tensor on 'cpu'"):
        cpu([1.0, 2.0])[gpu([0])]


INDEXES = {
    "int-list": lambda dev: [2, 0, 2],
    "int-tensor": lambda dev: lucid.Tensor(np.array([1, 1, 0]), device=dev),
    "bool-list": lambda dev: [True, False, True],
    "bool-mask-tensor": lambda dev: lucid.Tensor(np.arange(12).reshape(3, 4) % 3 == 0, device=dev),
    "tuple-with-tensor": lambda dev: (lucid.Tensor(np.array([2, 2]), device=dev), slice(1, 3)),
    "tuple-lists": lambda dev: ([0, 2, 2], [3, 1, 1]),
    "negative-list": lambda dev: [-1, -3],
    "basic": lambda dev: (slice(None, None, 2), None, 1),
}


@pytest.mark.parametrize("name", list(INDEXES))
def test_gpu_indexing_matches_cpu_with_gradient_scatter(name):
    host = np.arange(12.0).reshape(3, 4)
    results = {}
    for dev in ("cpu", "gpu"):
        x = lucid.Tensor(host, requires_grad=True, device=dev)
        y = x[INDEXES[name](dev)]
        w = lucid.Tensor(np.arange(1.0, 1.0 + y.size).reshape(y.shape), device=dev)
        (y * w).sum().backward()  # a weight per pick: repeated picks must add up
        results[dev] = (y, x.grad)
    (yc, gc), (yg, gg) = results["cpu"], results["gpu"]
    assert yg.device == "gpu" and yg.shape == yc.shape and yg.dtype == yc.dtype
    np.testing.assert_array_equal(yg.numpy(), yc.numpy())
    assert isinstance(gg, mx.array) and isinstance(gc, np.ndarray)
    np.testing.assert_array_equal(np.array(gg), gc)


def test_gpu_list_index_with_repeats_accumulates_gradient():
    x = gpu([10.0, 20.0, 30.0], requires_grad=True)
    x[[0, 0, 2, 0]].sum().backward()
    np.testing.assert_array_equal(np.array(x.grad), [3.0, 0.0, 1.0])


def test_gpu_setitem_with_list_and_gpu_tensor_indices():
    x = gpu(np.zeros(5))
    x[[0, 2]] = 5.0
    x[lucid.Tensor(np.array([4]), device="gpu")] = 7.0
    x[[False, True, False, False, False]] = 1.0
    assert x.device == "gpu" and x.tolist() == [5.0, 1.0, 5.0, 0.0, 7.0]


# --------------------------------------------------------------------------------------------
# Numeric on gpu (seed 001)


def test_seed_001_float64_moves_to_gpu_and_keeps_its_logical_dtype():
    x = lucid.tensor([1.0, 2.0, 3.0], dtype=lucid.Float64)
    assert x.device == "cpu"
    assert x.dtype == lucid.types.Numeric(base_dtype=float, bits=64)
    x_gpu = x.to("gpu")
    assert x_gpu.device == "gpu"
    assert x_gpu.dtype == lucid.Float64  # logical
    assert x_gpu.data.dtype == F64_STORAGE  # float64 on MLX's CPU device, float32 on a GPU
    assert x_gpu.numpy().dtype == np.float64
    np.testing.assert_array_equal(x_gpu.numpy(), [1.0, 2.0, 3.0])


def test_seed_001_bit_free_float_follows_the_data():
    data = np.array([1.0, 2.0], dtype=np.float64)
    x = lucid.tensor(data, dtype=lucid.Float)
    assert x.dtype == lucid.Float64
    y = x.to("gpu")
    assert y.dtype == lucid.Float64 and y.data.dtype == F64_STORAGE
    z = lucid.tensor(np.ones(2, np.float32), dtype=lucid.Float, device="gpu")
    assert z.dtype == lucid.Float32 and z.data.dtype == mx.float32


@pytest.mark.parametrize(
    "numeric,stored",
    [
        (lucid.Int8, mx.int8),
        (lucid.Int16, mx.int16),
        (lucid.Int32, mx.int32),
        (lucid.Int64, mx.int64),
        (UInt8, mx.uint8),
        (lucid.Float16, mx.float16),
        (lucid.Float32, mx.float32),
        (lucid.Complex64, mx.complex64),
        (Bool, mx.bool_),
    ],
)
def test_presets_store_their_mlx_dtype_on_gpu(numeric, stored):
    assert numeric.gpu == stored and numeric.parse("gpu") == stored
    t = lucid.Tensor([1, 0, 1], dtype=numeric, device="gpu")
    assert t.data.dtype == stored and t.dtype == numeric
    assert t.numpy().dtype == numeric.cpu
    np.testing.assert_array_equal(t.numpy(), np.array([1, 0, 1]).astype(numeric.cpu))


def test_bit_free_presets_resolve_against_mlx_dtypes():
    assert lucid.Float.gpu is None and lucid.Int.gpu is None
    assert lucid.Float.auto_parse(mx.float16, device="gpu") == mx.float16
    assert lucid.Float.auto_parse(mx.int32, device="gpu") == mx.float32
    assert lucid.Int.auto_parse(mx.int32, device="gpu") == mx.int32
    assert lucid.Complex.auto_parse(mx.float32, device="gpu") == mx.complex64


@pytest.mark.parametrize(
    "mlx_dtype,numeric",
    [
        (mx.float16, lucid.Float16),
        (mx.float32, lucid.Float32),
        (mx.float64, lucid.Float64),
        (mx.int8, lucid.Int8),
        (mx.int16, lucid.Int16),
        (mx.int32, lucid.Int32),
        (mx.int64, lucid.Int64),
        (mx.uint8, UInt8),
        (mx.complex64, lucid.Complex64),
        (mx.bool_, Bool),
    ],
)
def test_to_numeric_type_maps_mlx_dtypes(mlx_dtype, numeric):
    assert to_numeric_type(mlx_dtype) == numeric
    assert numeric == to_numeric_type(mlx_dtype)  # equality is symmetric


def test_to_numeric_type_rejects_bfloat16():
    with pytest.raises(TypeError, match=r"^Unsupported dtype mlx.core.bfloat16"):
        to_numeric_type(mx.bfloat16)


def test_bool_tensors_on_gpu_are_mx_bool():
    b = lucid.Tensor([True, False], device="gpu")
    assert b.data.dtype == mx.bool_ and b.dtype == Bool
    x = gpu([1.0, -2.0, 3.0])
    for m in (x > 0.0, x == 3.0, lucid.logical_not(x > 0.0), x.astype(bool)):
        assert m.device == "gpu" and m.data.dtype == mx.bool_ and m.dtype == Bool
    assert (x > 0.0).tolist() == [True, False, True]


# -- the Float64 policy, as on a Metal/CUDA GPU ------------------------------------------------


def test_policy_on_a_gpu_float64_is_stored_as_float32(gpu_policy):
    assert lucid.Float64.gpu is mx.float32
    assert lucid.Float64.parse("gpu") is mx.float32
    assert lucid.Float64.cpu == np.float64  # the CPU is unaffected
    assert lucid.Float32.gpu is mx.float32 and lucid.Float16.gpu is mx.float16
    assert lucid.Int64.gpu is mx.int64 and lucid.Complex64.gpu is mx.complex64


def test_policy_on_mlx_cpu_float64_stays_float64(monkeypatch):
    monkeypatch.setattr(lucid.types, "_mlx_default_is_gpu", lambda: False)
    assert lucid.Float64.gpu is mx.float64
    t = lucid.Tensor([1.0], dtype=lucid.Float64, device="gpu")
    assert t.data.dtype == mx.float64 and t.dtype == lucid.Float64


def test_policy_default_reads_mlx_default_device():
    assert lucid.types._mlx_default_is_gpu() == (mx.default_device().type == mx.DeviceType.gpu)
    assert lucid.types._mlx_default_is_gpu() == has_gpu()


def test_policy_float64_tensor_reports_float64_and_reads_back_float64(gpu_policy):
    values = [1.0, 2.0 + 1e-12, 3.0]
    x = lucid.Tensor(values, dtype=lucid.Float64, device="gpu")
    assert x.data.dtype == mx.float32 and x.dtype == lucid.Float64
    assert x.numpy().dtype == np.float64
    np.testing.assert_array_equal(x.numpy(), np.array(values, np.float32).astype(np.float64))
    assert "dtype" not in repr(x)  # Float64 is the default, so repr does not name it
    back = x.to("cpu")
    assert back.device == "cpu" and back.dtype == lucid.Float64
    assert isinstance(back.data, np.ndarray) and back.data.dtype == np.float64
    y = lucid.tensor(values, dtype=lucid.Float64).to("gpu")  # cpu -> gpu
    assert y.data.dtype == mx.float32 and y.dtype == lucid.Float64
    assert x.detach().dtype == lucid.Float64


@pytest.mark.parametrize(
    "name,fn,ref",
    [
        ("add", lambda x: lucid.add(x, x), lambda h: h + h),
        ("exp", lucid.exp, np.exp),
        ("matmul", lambda x: lucid.matmul(x.reshape(1, 3), x.reshape(3, 1)),
         lambda h: h.reshape(1, 3) @ h.reshape(3, 1)),
        ("sum", lucid.sum, np.sum),
        ("mean", lambda x: x.mean(), np.mean),
        ("scalar", lambda x: x * 2.5, lambda h: h * 2.5),
        ("float32 operand", lambda x: x + gpu(np.ones(1, np.float32)), lambda h: h + 1.0),
        ("index", lambda x: x[[2, 0]], lambda h: h[[2, 0]]),
        ("reshape", lambda x: x.reshape(3, 1), lambda h: h.reshape(3, 1)),
    ],
)
def test_policy_ops_on_a_float64_tensor_still_report_float64(gpu_policy, name, fn, ref):
    host = np.array([0.5, 1.0, 2.0])
    x = lucid.Tensor(host, dtype=lucid.Float64, device="gpu")
    y = fn(x)
    assert y.device == "gpu" and y.data.dtype == mx.float32
    assert y.dtype == lucid.Float64, name
    assert y.numpy().dtype == np.float64
    np.testing.assert_allclose(y.numpy(), ref(host), rtol=1e-6)
    assert y.to("cpu").data.dtype == np.float64


def test_policy_comparisons_give_bool(gpu_policy):
    x = lucid.Tensor([1.0, 2.0], dtype=lucid.Float64, device="gpu")
    m = x > 1.5
    assert m.dtype == Bool and m.data.dtype == mx.bool_


def test_policy_gradients_keep_their_devices_and_widths(gpu_policy):
    leaf = lucid.Tensor([1.0, 2.0], dtype=lucid.Float64, requires_grad=True)  # cpu
    on_gpu = leaf.to("gpu")
    assert on_gpu.data.dtype == mx.float32 and on_gpu.dtype == lucid.Float64
    (on_gpu * on_gpu).sum().backward()
    assert isinstance(leaf.grad, np.ndarray) and leaf.grad.dtype == np.float64
    np.testing.assert_array_equal(leaf.grad, [2.0, 4.0])
    g = lucid.Tensor([1.0, 2.0], dtype=lucid.Float64, requires_grad=True, device="gpu")
    lucid.exp(g).sum().backward()
    assert isinstance(g.grad, mx.array) and g.grad.dtype == mx.float32
    np.testing.assert_allclose(np.array(g.grad), np.exp([1.0, 2.0]), rtol=1e-6)


def test_policy_applies_to_creation_functions(gpu_policy):
    for t in (lucid.zeros(2, 3, dtype=lucid.Float64, device="gpu"),
              lucid.ones(2, device="gpu"),  # float64 by default
              lucid.linspace(0, 1, 5, device="gpu"),
              lucid.eye(2, device="gpu"),
              lucid.full((2,), 0.5, device="gpu"),
              lucid.arange(0.0, 1.0, 0.5, device="gpu")):
        assert t.data.dtype == mx.float32 and t.dtype == lucid.Float64
    z = lucid.zeros_like(lucid.ones(3, dtype=lucid.Float64, device="gpu"))
    assert z.device == "gpu" and z.data.dtype == mx.float32 and z.dtype == lucid.Float64


def test_policy_astype_float32_of_a_float64_tensor_reports_float32(gpu_policy):
    x = lucid.Tensor([1.0, 2.0], dtype=lucid.Float64, device="gpu")
    y = x.astype(lucid.Float32)
    assert y.dtype == lucid.Float32
    assert y.to("cpu").data.dtype == np.float32


def test_policy_astype_float64_of_a_float32_tensor_reports_float64(gpu_policy):
    x = lucid.Tensor([1.0, 2.0], dtype=lucid.Float32, device="gpu")
    y = x.astype(lucid.Float64)
    assert y.data.dtype == mx.float32
    assert y.dtype == lucid.Float64
    assert y.numpy().dtype == np.float64


def test_policy_weak_float_with_an_int_gpu_tensor_stores_no_float64(gpu_policy):
    x = lucid.Tensor([1, 2], dtype=lucid.Int32, device="gpu")
    y = x * 2.5
    assert y.data.dtype != mx.float64
    assert y.dtype == lucid.Float64  # NumPy 2's rule: int32 array * Python float -> float64
    np.testing.assert_array_equal(y.numpy(), [2.5, 5.0])


# -- the same logical dtype on both devices (seed 001: "the same script shows the same dtypes")

DTYPE_PARITY = {
    "int/int": lambda d: lucid.Tensor(np.array([1, 2]), device=d) / lucid.Tensor(
        np.array([2, 2]), device=d),
    "int mean": lambda d: lucid.Tensor(np.array([1, 2]), device=d).mean(),
    "exp(int)": lambda d: lucid.exp(lucid.Tensor(np.array([1, 2]), device=d)),
    "sqrt(int)": lambda d: lucid.sqrt(lucid.Tensor(np.array([1, 4]), device=d)),
    "int32 sum": lambda d: lucid.Tensor(np.array([1, 2], np.int32), device=d).sum(),
    "bool sum": lambda d: lucid.Tensor(np.array([True, True]), device=d).sum(),
    "float32+int64": lambda d: lucid.Tensor(np.array([1.5], np.float32), device=d)
    + lucid.Tensor(np.array([1]), device=d),
}


def test_integer_matmul_on_gpu_multiplies_exactly_as_cpu():
    # MLX multiplies floats only: integer products are NumPy's, moved back (past 2^24, where
    # a float32 product would round)
    a = lucid.Tensor(np.array([[1, 2**25]]), device="gpu")
    b = lucid.Tensor(np.array([[3], [4]]), device="gpu")
    y = a @ b
    assert y.device == "gpu" and y.dtype == lucid.Int64
    np.testing.assert_array_equal(y.numpy(), (a.cpu() @ b.cpu()).numpy())
    assert y.item() == 3 + 4 * 2**25


@pytest.mark.parametrize("name", ["int+int", "int*2", "int32*2.5", "float16+float16",
                                  "bool&bool", "int8+uint8", "float32+float64"])
def test_dtype_parity_that_holds(name):
    cases = {
        "int+int": lambda d: lucid.Tensor(np.array([1, 2]), device=d) + lucid.Tensor(
            np.array([3, 4]), device=d),
        "int*2": lambda d: lucid.Tensor(np.array([1, 2], np.int32), device=d) * 2,
        "int32*2.5": lambda d: lucid.Tensor(np.array([1, 2], np.int32), device=d) * 2.5,
        "float16+float16": lambda d: lucid.Tensor(np.ones(2, np.float16), device=d) * 2.0,
        "bool&bool": lambda d: lucid.logical_and(lucid.Tensor(np.array([True, False]), device=d),
                                                 lucid.Tensor(np.array([True, True]), device=d)),
        "int8+uint8": lambda d: lucid.Tensor(np.array([1], np.int8), device=d)
        + lucid.Tensor(np.array([1], np.uint8), device=d),
        "float32+float64": lambda d: lucid.Tensor(np.array([1.0], np.float32), device=d)
        + lucid.Tensor(np.array([1.0]), device=d),
    }
    c, g = cases[name]("cpu"), cases[name]("gpu")
    assert g.dtype == c.dtype, (g.dtype, c.dtype)
    np.testing.assert_allclose(g.numpy(), c.numpy(), rtol=1e-6)


@pytest.mark.parametrize("name", list(DTYPE_PARITY))
def test_dtype_parity_for_integer_inputs(name):
    c, g = DTYPE_PARITY[name]("cpu"), DTYPE_PARITY[name]("gpu")
    assert g.dtype == c.dtype, (g.dtype, c.dtype)
    np.testing.assert_allclose(g.numpy(), c.numpy(), rtol=1e-6)


# --------------------------------------------------------------------------------------------
# Tensor.to / .cpu() / .gpu(): a differentiable op


def test_to_is_an_op_in_the_graph():
    x = cpu([1.0, 2.0], requires_grad=True)
    y = x.to("gpu")
    assert y.device == "gpu" and isinstance(y.data, mx.array)
    assert y.op_name == "ToDevice" and y._prev == (x,) and not y.is_leaf
    assert x.to("cpu") is x and y.to("gpu") is y  # already there: the tensor itself
    assert x.gpu().device == "gpu" and y.cpu().device == "cpu"
    with lucid.count_flops():
        assert x.to("gpu").flops == 0  # a copy costs no arithmetic


def test_to_keeps_freeness_values_and_dtype():
    free = lucid.Tensor([1, 2]).to("gpu")
    fixed = cpu(np.array([1, 2], np.int16)).to("gpu")
    assert free.is_free and not fixed.is_free
    assert fixed.dtype == lucid.Int16 and fixed.data.dtype == mx.int16
    back = fixed.to("cpu")
    assert back.data.dtype == np.int16 and back.tolist() == [1, 2]


def test_to_an_unknown_device_is_a_value_error():
    with pytest.raises(ValueError, match=r"^Unknown device 'tpu': expected one of"):
        cpu([1.0]).to("tpu")


def _loss(x, w):
    return (lucid.tanh(x * w) * x).sum()


def test_gradient_flows_back_across_devices_to_a_cpu_leaf():
    host, weights = np.array([0.3, -1.2, 2.0]), np.array([1.5, 0.5, -2.0])
    ref = cpu(host, requires_grad=True)
    _loss(ref, cpu(weights)).backward()
    x = cpu(host, requires_grad=True)
    loss = _loss(x.to("gpu"), gpu(weights))
    assert loss.device == "gpu"
    loss.backward()
    assert isinstance(x.grad, np.ndarray) and x.grad.dtype == np.float64
    np.testing.assert_allclose(x.grad, ref.grad, rtol=1e-6)


def test_gradient_through_cpu_gpu_cpu_round_trip():
    host = np.array([1.0, 2.0])
    x = cpu(host, requires_grad=True)
    z = x.gpu().exp().cpu() * 3.0
    assert z.device == "cpu" and isinstance(z.data, np.ndarray)
    z.sum().backward()
    assert isinstance(x.grad, np.ndarray)
    np.testing.assert_allclose(x.grad, 3 * np.exp(host), rtol=1e-6)


def test_gpu_leaf_gets_an_mx_array_gradient_that_accumulates():
    g = gpu([1.0, 2.0], requires_grad=True)
    (g.cpu() ** 2).sum().backward()  # through the cpu and back
    assert isinstance(g.grad, mx.array)
    np.testing.assert_array_equal(np.array(g.grad), [2.0, 4.0])
    (g * 3.0).sum().backward()  # accumulates across calls
    np.testing.assert_array_equal(np.array(g.grad), [5.0, 7.0])


def test_backward_works_on_lazy_data_without_eval():
    x = gpu(np.linspace(-1, 1, 5), requires_grad=True)
    y = ((x * x + lucid.sin(x)) * 2.0).sum()  # never evaluated explicitly
    y.backward()
    np.testing.assert_allclose(np.array(x.grad), 2 * (2 * np.linspace(-1, 1, 5)
                                                      + np.cos(np.linspace(-1, 1, 5))), rtol=1e-6)
    np.testing.assert_allclose(y.item(), 2 * np.sum(np.linspace(-1, 1, 5) ** 2
                                                    + np.sin(np.linspace(-1, 1, 5))), rtol=1e-6)


def test_eval_returns_self_and_keeps_values_and_graph():
    x = gpu([1.0, 2.0, 3.0], requires_grad=True)
    loss = (x * x).sum()
    before = loss.data
    assert loss.eval() is loss  # seed 000: loss.eval() before loss.backward()
    assert isinstance(loss.data, mx.array)
    assert loss.item() == 14.0 and np.array(before).item() == 14.0
    loss.backward()  # eval cut MLX's graph, not Lucid's
    np.testing.assert_array_equal(np.array(x.grad), [2.0, 4.0, 6.0])
    c = cpu([1.0])
    assert c.eval() is c and c.tolist() == [1.0]


def test_evaluate_accepts_tensors_arrays_and_none():
    x = gpu([1.0, 2.0], requires_grad=True)
    y = x * 2.0
    y.sum().backward()
    raw = mx.array([3.0]) + 1
    assert lucid.evaluate(x, None, y, cpu([1.0]), x.grad, raw) is None
    lucid.evaluate()
    lucid.evaluate(None)
    assert y.tolist() == [2.0, 4.0] and np.array(raw).tolist() == [4.0]
    np.testing.assert_array_equal(np.array(x.grad), [2.0, 2.0])


def test_tensor_of_a_gpu_tensor_copies_to_the_requested_device():
    g = gpu([1.0, 2.0])
    assert lucid.Tensor(g).device == "cpu" and isinstance(lucid.Tensor(g).data, np.ndarray)
    again = lucid.Tensor(g, device="gpu")
    assert again.device == "gpu" and again.tolist() == [1.0, 2.0]


# --------------------------------------------------------------------------------------------
# device= on every creation function

CREATION = {
    "zeros": (lambda **kw: lucid.zeros(2, 3, **kw), np.zeros((2, 3))),
    "ones": (lambda **kw: lucid.ones((2, 3), **kw), np.ones((2, 3))),
    "full-int": (lambda **kw: lucid.full((2, 2), 7, **kw), np.full((2, 2), 7)),
    "full-float": (lambda **kw: lucid.full(3, 2.5, **kw), np.full(3, 2.5)),
    "eye": (lambda **kw: lucid.eye(3, 4, 1, **kw), np.eye(3, 4, 1)),
    "arange-int": (lambda **kw: lucid.arange(5, **kw), np.arange(5)),
    "arange-float": (lambda **kw: lucid.arange(0, 1, 0.25, **kw), np.arange(0, 1, 0.25)),
    "linspace": (lambda **kw: lucid.linspace(0, 1, 5, **kw), np.linspace(0, 1, 5)),
    "zeros_like": (lambda **kw: lucid.zeros_like(cpu(np.ones((2, 2))), **kw), np.zeros((2, 2))),
    "ones_like": (lambda **kw: lucid.ones_like(np.ones(3, np.int32), **kw), np.ones(3, np.int32)),
    "full_like": (lambda **kw: lucid.full_like(cpu([1.0, 2.0]), 4, **kw), np.full(2, 4.0)),
}


@pytest.mark.parametrize("name", list(CREATION))
def test_creation_on_gpu_matches_numpy(name):
    make, want = CREATION[name]
    t = make(device="gpu")
    assert t.device == "gpu" and isinstance(t.data, mx.array)
    assert t.shape == want.shape
    assert t.dtype == to_numeric_type(want.dtype)
    np.testing.assert_array_equal(t.numpy(), want)
    assert t.is_leaf and not t.requires_grad


@pytest.mark.parametrize("name", list(CREATION))
@pytest.mark.parametrize("dtype", [lucid.Float32, lucid.Float16, lucid.Int32])
def test_creation_on_gpu_with_dtype(name, dtype):
    make, want = CREATION[name]
    t = make(device="gpu", dtype=dtype)
    assert t.device == "gpu" and t.dtype == dtype and t.data.dtype == dtype.gpu
    np.testing.assert_array_equal(t.numpy(), want.astype(dtype.cpu))


@pytest.mark.parametrize("fn", [lucid.empty, lucid.zeros, lucid.ones])
def test_empty_zeros_ones_on_gpu_shape_and_dtype(fn):
    t = fn((2, 0, 3), device="gpu")
    assert t.device == "gpu" and t.shape == (2, 0, 3) and t.dtype == lucid.Float64
    t = fn(4, device="gpu", dtype=lucid.Int8)
    assert t.shape == (4,) and t.data.dtype == mx.int8


def test_like_functions_follow_a_gpu_tensor_and_can_override():
    g = gpu(np.ones((2, 3), np.float32))
    for t in (lucid.zeros_like(g), lucid.ones_like(g), lucid.empty_like(g),
              lucid.full_like(g, 5)):
        assert t.device == "gpu" and t.shape == (2, 3) and t.dtype == lucid.Float32
    assert lucid.full_like(g, 5).tolist() == [[5.0] * 3] * 2
    c = lucid.zeros_like(g, device="cpu", dtype=lucid.Int16)
    assert c.device == "cpu" and c.dtype == lucid.Int16


def test_creation_on_gpu_can_require_grad():
    w = lucid.zeros(3, device="gpu", requires_grad=True, dtype=lucid.Float32)
    (w * gpu(np.array([1.0, 2.0, 3.0], np.float32))).sum().backward()
    assert isinstance(w.grad, mx.array)
    np.testing.assert_array_equal(np.array(w.grad), [1.0, 2.0, 3.0])


def test_creation_rejects_an_unknown_device():
    with pytest.raises(ValueError, match=r"Unknown device 'tpu'"):
        lucid.zeros(2, device="tpu")


# --------------------------------------------------------------------------------------------
# availability and the one-time warning


def test_gpu_status_on_this_host():
    assert has_gpu() == (mx.default_device().type == mx.DeviceType.gpu)
    if has_gpu():
        assert lucid.gpu_status() == "gpu" and lucid.gpu_available()
    else:  # Linux with mlx[cpu]: the CI case
        assert lucid.gpu_status() == "mlx-cpu"
        assert lucid.gpu_available() is False


def test_gpu_status_with_a_real_gpu(monkeypatch):
    monkeypatch.setattr(mlx_backend, "has_gpu", lambda: True)
    assert lucid.gpu_status() == "gpu" and lucid.gpu_available() is True


def test_gpu_status_without_mlx(mlx_missing):
    assert lucid.gpu_status() == "missing" and lucid.gpu_available() is False


def test_no_gpu_warning_is_issued_once_when_the_backend_loads(monkeypatch, fresh_registry):
    monkeypatch.setattr(mlx_backend, "has_gpu", lambda: False)
    with pytest.warns(GPUNotAvailableWarning, match=r"^MLX has no GPU here; gpu tensors run on "
                                                    r"MLX's CPU device") as record:
        backend = backends.get_backend("gpu")
    assert len([w for w in record if w.category is GPUNotAvailableWarning]) == 1
    assert isinstance(backend, MLXBackend) and backends.BACKENDS["gpu"] is backend
    assert backends.BY_XP[mx] is backend
    with warnings.catch_warnings():
        warnings.simplefilter("error", GPUNotAvailableWarning)  # a second warning would raise
        assert backends.get_backend("gpu") is backend
        lucid.Tensor([1.0], device="gpu")
        lucid.Tensor([1.0]).to("gpu")
    assert issubclass(GPUNotAvailableWarning, UserWarning)


def test_first_gpu_tensor_triggers_the_warning(monkeypatch, fresh_registry):
    monkeypatch.setattr(mlx_backend, "has_gpu", lambda: False)
    with pytest.warns(GPUNotAvailableWarning):
        t = lucid.Tensor([1.0, 2.0]).to("gpu")
    assert t.device == "gpu" and t.tolist() == [1.0, 2.0]


def test_no_warning_when_mlx_has_a_gpu(monkeypatch, fresh_registry):
    monkeypatch.setattr(mlx_backend, "has_gpu", lambda: True)
    with warnings.catch_warnings():
        warnings.simplefilter("error", GPUNotAvailableWarning)
        assert isinstance(backends.get_backend("gpu"), MLXBackend)


# --------------------------------------------------------------------------------------------
# MLX not installed

INSTALL_HELP = [r"needs MLX, which is not installed", r"pip install mlx",
                r"pip install 'mlx\[cpu\]'", r"pip install 'mlx\[cuda\]'"]


@pytest.mark.parametrize(
    "move",
    [
        lambda: lucid.Tensor([1.0]).to("gpu"),
        lambda: lucid.Tensor([1.0]).gpu(),
        lambda: lucid.Tensor([1.0], device="gpu"),
        lambda: lucid.zeros(2, device="gpu"),
        lambda: backends.get_backend("gpu"),
    ],
    ids=["to", "gpu()", "Tensor", "zeros", "get_backend"],
)
@pytest.mark.parametrize("how", ["load_gpu returns None", "import fails"])
def test_without_mlx_gpu_use_says_how_to_install(monkeypatch, fresh_registry, move, how):
    if how == "load_gpu returns None":
        monkeypatch.setattr(backends, "_load_gpu", lambda: None)
    else:
        monkeypatch.setitem(sys.modules, "lucid.backends.mlx_backend", None)
    with pytest.raises(RuntimeError) as info:
        move()
    msg = str(info.value)
    assert msg.startswith("The 'gpu' device needs MLX")
    for pattern in INSTALL_HELP:
        assert re.search(pattern, msg), (pattern, msg)
    assert "gpu" not in backends.BACKENDS


def test_without_mlx_cpu_work_continues(mlx_missing):
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    y = (lucid.exp(x) * x).sum()
    y.backward()
    np.testing.assert_allclose(x.grad, np.exp([1.0, 2.0]) * (1 + np.array([1.0, 2.0])))
    assert lucid.zeros(2).device == "cpu"
    with pytest.raises(RuntimeError, match="needs MLX"):
        x.to("gpu")
    assert lucid.ones(3).sum().item() == 3.0  # still fine after the failed move


def test_types_policy_without_mlx_is_no_gpu(monkeypatch):
    monkeypatch.setitem(sys.modules, "mlx.core", None)
    assert lucid.types._mlx_default_is_gpu() is False


# --------------------------------------------------------------------------------------------
# weak Python scalars and NumPy arrays meeting gpu tensors


@pytest.mark.parametrize(
    "dtype,scalar,want",
    [
        (np.float32, 2.5, lucid.Float32),
        (np.float32, 2, lucid.Float32),
        (np.float16, 2.5, lucid.Float16),
        (np.int32, 2, lucid.Int32),
        (np.int32, 2.5, lucid.Float64),  # NumPy 2: an int array meets a float -> float64
        (np.int8, True, lucid.Int8),
    ],
)
def test_weak_python_scalars_keep_the_tensor_dtype_on_gpu(dtype, scalar, want):
    x = gpu(np.array([1, 2], dtype))
    for y in (x * scalar, scalar * x, x + scalar, scalar - x):
        assert y.device == "gpu" and y.dtype == want, (y.dtype, want)
    ref = cpu(np.array([1, 2], dtype)) * scalar
    assert ref.dtype == want  # the same rule on the cpu
    np.testing.assert_array_equal((x * scalar).numpy(), ref.numpy())


def test_float32_gpu_tensor_times_a_float_stays_float32():
    x = lucid.Tensor([1.0, 2.0], dtype=lucid.Float32, device="gpu")
    y = x * 2.5
    assert y.dtype == lucid.Float32 and y.data.dtype == mx.float32 and y.device == "gpu"
    assert y.tolist() == [2.5, 5.0]


@pytest.mark.parametrize(
    "array,want",
    [
        (np.array([10.0, 20.0], np.float32), lucid.Float32),
        (np.array([10.0, 20.0]), lucid.Float64),  # a float64 array is not weak
        (np.array([10, 20], np.int8), lucid.Float32),
    ],
)
def test_numpy_array_meeting_a_gpu_tensor_goes_to_the_gpu(array, want):
    x = gpu(np.array([1.0, 2.0], np.float32), requires_grad=True)
    for y in (x + array, array + x, lucid.mul(x, array)):
        assert y.device == "gpu" and isinstance(y.data, mx.array) and y.dtype == want
    np.testing.assert_allclose((x + array).numpy(), np.array([1.0, 2.0], np.float32) + array)
    (x * array).sum().backward()
    assert isinstance(x.grad, mx.array) and x.grad.dtype == mx.float32
    np.testing.assert_array_equal(np.array(x.grad), array.astype(np.float32))

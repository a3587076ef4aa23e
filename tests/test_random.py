"""lucid.random: determinism under seed, the same values on both devices, dtypes and devices,
distribution sanity (generous bounds) and errors."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import lucid
import lucid.random as R  # noqa: N812
import lucid.types

HAS_MLX = importlib.util.find_spec("mlx") is not None
needs_mlx = pytest.mark.skipif(not HAS_MLX, reason="MLX is not installed")
DEVICES = ["cpu", pytest.param("gpu", marks=needs_mlx)]

# one call of every sampler (shape (3, 4) where a shape is taken)
SAMPLERS = {
    "rand": lambda **kw: R.rand(3, 4, **kw),
    "randn": lambda **kw: R.randn(3, 4, **kw),
    "uniform": lambda **kw: R.uniform(-2.0, 5.0, (3, 4), **kw),
    "bernoulli": lambda **kw: R.bernoulli(0.4, (3, 4), **kw),
    "randint": lambda **kw: R.randint(-5, 9, (3, 4), **kw),
    "permutation": lambda **kw: R.permutation(12, **kw),
}
FLOAT_SAMPLERS = ["rand", "randn", "uniform", "bernoulli"]
INT_SAMPLERS = ["randint", "permutation"]


def _draw(name, seed, **kw):
    R.seed(seed)
    return SAMPLERS[name](**kw)


# --------------------------------------------------------------------------------------------
# seed, determinism and state


@pytest.mark.parametrize("name", list(SAMPLERS))
def test_same_seed_same_values_other_seed_other_values(name):
    a, b, c = _draw(name, 123), _draw(name, 123), _draw(name, 124)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    assert not np.array_equal(a.numpy(), c.numpy())


def test_values_are_numpys_generator_draws():
    R.seed(7)
    np.testing.assert_array_equal(R.rand(5).numpy(), np.random.default_rng(7).random(5))
    R.seed(7)
    np.testing.assert_array_equal(
        R.randn(2, 3).numpy(), np.random.default_rng(7).standard_normal((2, 3))
    )


def test_seed_restarts_the_stream_and_draws_advance_it():
    R.seed(0)
    first, second = R.rand(4).numpy(), R.rand(4).numpy()
    assert not np.array_equal(first, second)
    R.seed(0)
    np.testing.assert_array_equal(R.rand(4).numpy(), first)
    np.testing.assert_array_equal(R.rand(4).numpy(), second)


def test_all_samplers_share_one_stream():
    R.seed(1)
    R.randint(10, size=3)
    after_randint = R.rand(2).numpy()
    R.seed(1)
    assert not np.array_equal(R.rand(2).numpy(), after_randint)


def test_seed_accepts_numpy_ints_and_none():
    R.seed(np.int64(5))
    a = R.rand(3).numpy()
    R.seed(5)
    np.testing.assert_array_equal(R.rand(3).numpy(), a)
    R.seed(None)  # fresh entropy: just must not fail
    assert R.rand(2).shape == (2,)


def test_get_state_set_state_round_trip():
    R.seed(3)
    state = R.get_state()
    a = R.randn(4).numpy()
    R.rand(10)  # move on
    R.set_state(state)
    np.testing.assert_array_equal(R.randn(4).numpy(), a)
    state["state"]["state"] = 0  # the snapshot is a copy: editing it changes nothing
    R.set_state(R.get_state())


@pytest.mark.parametrize("bad", [{"bit_generator": "MT19937"}, {}, "not a state"])
def test_set_state_rejects_foreign_states(bad):
    with pytest.raises(ValueError, match=r"^set_state: not a state returned by"):
        R.set_state(bad)


@pytest.mark.parametrize("bad,exc", [(-1, ValueError), (1.5, TypeError), (True, TypeError)])
def test_seed_rejects_bad_values(bad, exc):
    with pytest.raises(exc, match=r"^seed: n must be"):
        R.seed(bad)


# --------------------------------------------------------------------------------------------
# the same values on both devices


@needs_mlx
@pytest.mark.parametrize("name", list(SAMPLERS))
def test_same_seed_same_values_on_cpu_and_gpu(name):
    import mlx.core as mx

    cpu, gpu = _draw(name, 99), _draw(name, 99, device="gpu")
    assert cpu.device == "cpu" and isinstance(cpu.data, np.ndarray)
    assert gpu.device == "gpu" and isinstance(gpu.data, mx.array)
    assert gpu.dtype == cpu.dtype
    np.testing.assert_array_equal(gpu.numpy(), cpu.numpy())


@needs_mlx
def test_float16_values_are_the_same_rounding_on_both_devices():
    cpu = _draw("randn", 5, dtype=lucid.Float16)
    gpu = _draw("randn", 5, dtype=lucid.Float16, device="gpu")
    np.testing.assert_array_equal(gpu.numpy(), cpu.numpy())
    np.testing.assert_array_equal(
        cpu.numpy(), np.random.default_rng(5).standard_normal((3, 4)).astype(np.float16)
    )


# --------------------------------------------------------------------------------------------
# seed examples (001, 002)


def test_seed_002_rand_takes_a_shape_tuple():
    x = lucid.random.rand((1, 3, 32, 32))
    assert x.shape == (1, 3, 32, 32) and x.dtype == lucid.Float64 and x.device == "cpu"


@needs_mlx
def test_seed_001_permutation_int16_on_gpu():
    import mlx.core as mx

    perm = lucid.random.permutation(10, dtype=lucid.Int16, device="gpu")
    assert perm.dtype == lucid.Int16
    assert perm.device == "gpu"
    assert isinstance(perm.data, mx.array) and perm.data.dtype == mx.int16
    assert sorted(perm.tolist()) == list(range(10))


@needs_mlx
def test_seed_001_top_level_randn_float16_on_gpu():
    import mlx.core as mx

    x = lucid.randn(2, 2, dtype=lucid.Float16, device="gpu")
    assert x.shape == (2, 2) and x.dtype == lucid.Float16 and x.device == "gpu"
    assert x.data.dtype == mx.float16
    x32 = x.astype(lucid.Float32)
    assert x32.dtype == lucid.Float32 and x32.data.dtype == mx.float32


def test_top_level_exports_are_the_module_functions():
    assert lucid.random is R
    assert lucid.rand is R.rand and lucid.randn is R.randn


# --------------------------------------------------------------------------------------------
# shapes, dtypes and devices


@pytest.mark.parametrize("fn", [R.rand, R.randn])
def test_shape_spellings_agree(fn):
    R.seed(0)
    a = fn(2, 3)
    R.seed(0)
    b = fn((2, 3))
    R.seed(0)
    c = fn([2, 3])
    assert a.shape == b.shape == c.shape == (2, 3)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(a.numpy(), c.numpy())
    assert fn().shape == () and fn(0).shape == (0,) and fn(2, 0).shape == (2, 0)


@pytest.mark.parametrize(
    "call,shape",
    [
        (lambda: R.randint(5), ()),
        (lambda: R.randint(5, size=4), (4,)),
        (lambda: R.randint(0, 5, (2, 3)), (2, 3)),
        (lambda: R.uniform(), ()),
        (lambda: R.uniform(size=3), (3,)),
        (lambda: R.uniform(0, 1, [2, 2]), (2, 2)),
        (lambda: R.bernoulli(0.5), ()),
        (lambda: R.bernoulli(0.5, 3), (3,)),
        (lambda: R.bernoulli(lucid.Tensor([[0.1, 0.9]])), (1, 2)),
        (lambda: R.bernoulli(lucid.Tensor([0.1, 0.9]), size=(3, 2)), (3, 2)),
        (lambda: R.permutation(0), (0,)),
        (lambda: R.permutation(6), (6,)),
    ],
)
def test_size_follows_numpy(call, shape):
    assert call().shape == shape


@pytest.mark.parametrize("name", FLOAT_SAMPLERS)
def test_float_samplers_default_to_float64(name):
    t = _draw(name, 0)
    assert t.dtype == lucid.Float64 and t.data.dtype == np.float64


@pytest.mark.parametrize("name", INT_SAMPLERS)
def test_int_samplers_default_to_int64(name):
    t = _draw(name, 0)
    assert t.dtype == lucid.Int64 and t.data.dtype == np.int64


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", FLOAT_SAMPLERS)
@pytest.mark.parametrize(
    "dtype,want",
    [
        (lucid.Float16, lucid.Float16),
        (lucid.Float32, lucid.Float32),
        (lucid.Float64, lucid.Float64),
        (lucid.Float, lucid.Float64),  # bit-free: the width of the float64 draws
        (float, lucid.Float64),
        (np.float32, lucid.Float32),
    ],
)
def test_float_samplers_dtype_and_device(name, dtype, want, device):
    t = _draw(name, 0, dtype=dtype, device=device)
    assert t.dtype == want and t.device == device
    assert lucid.types.to_numeric_type(t.data.dtype) == want
    assert t.is_leaf and not t.requires_grad


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("name", INT_SAMPLERS)
@pytest.mark.parametrize(
    "dtype,want",
    [
        (lucid.Int8, lucid.Int8),
        (lucid.Int16, lucid.Int16),
        (lucid.Int32, lucid.Int32),
        (lucid.Int, lucid.Int64),
        (int, lucid.Int64),
        (np.int32, lucid.Int32),
        (lucid.Float32, lucid.Float32),  # as in PyTorch: small integers stored as floats
    ],
)
def test_int_samplers_dtype_and_device(name, dtype, want, device):
    R.seed(0)
    ref = SAMPLERS[name]().numpy()
    t = _draw(name, 0, dtype=dtype, device=device)
    assert t.dtype == want and t.device == device
    assert lucid.types.to_numeric_type(t.data.dtype) == want
    np.testing.assert_array_equal(t.numpy(), ref.astype(want.cpu))


def test_randint_accepts_unsigned_dtypes_that_fit():
    t = R.randint(0, 256, size=50, dtype=np.uint8)
    assert t.dtype == lucid.types.UInt8
    assert t.numpy().min() >= 0 and t.numpy().max() <= 255


@pytest.mark.parametrize("name", FLOAT_SAMPLERS)
def test_float_samplers_can_make_trainable_leaves(name):
    t = _draw(name, 0, dtype=lucid.Float32, requires_grad=True)
    assert t.requires_grad and t.is_leaf
    (t * 3.0).sum().backward()
    np.testing.assert_array_equal(t.grad, np.full(t.shape, 3.0, np.float32))


# --------------------------------------------------------------------------------------------
# distributions (generous bounds: 200,000 draws, seeded)

N = 200_000


def test_rand_is_uniform_on_the_unit_interval():
    R.seed(10)
    x = R.rand(N).numpy()
    assert x.min() >= 0.0 and x.max() < 1.0
    assert abs(x.mean() - 0.5) < 0.01
    assert abs(x.var() - 1 / 12) < 0.005
    counts = np.histogram(x, bins=10, range=(0, 1))[0]
    assert np.all(np.abs(counts / N - 0.1) < 0.01)


def test_randn_is_standard_normal():
    R.seed(11)
    x = R.randn(N).numpy()
    assert abs(x.mean()) < 0.02
    assert abs(x.std() - 1.0) < 0.02
    assert abs(np.mean(np.abs(x) < 1.0) - 0.6827) < 0.01  # one sigma holds 68.27 %


def test_uniform_covers_low_to_high():
    R.seed(12)
    x = R.uniform(-2.0, 3.0, N).numpy()
    assert x.min() >= -2.0 and x.max() < 3.0
    assert abs(x.mean() - 0.5) < 0.05
    assert abs(x.var() - 25 / 12) < 0.1


def test_randint_is_uniform_over_low_to_high_minus_one():
    R.seed(13)
    x = R.randint(3, 7, size=N).numpy()
    values, counts = np.unique(x, return_counts=True)
    assert values.tolist() == [3, 4, 5, 6]
    assert np.all(np.abs(counts / N - 0.25) < 0.01)
    assert set(np.unique(R.randint(4, size=1000).numpy()).tolist()) == {0, 1, 2, 3}


@pytest.mark.parametrize("p", [0.0, 0.3, 1.0])
def test_bernoulli_frequency_matches_p(p):
    R.seed(14)
    x = R.bernoulli(p, N).numpy()
    assert set(np.unique(x).tolist()) <= {0.0, 1.0}
    assert abs(x.mean() - p) < 0.01


def test_bernoulli_with_a_tensor_of_probabilities():
    R.seed(15)
    p = lucid.Tensor(np.array([0.0, 0.25, 1.0], np.float32))
    x = R.bernoulli(p, size=(N, 3)).numpy()
    assert x.dtype == np.float32  # dtype follows a floating-point p
    np.testing.assert_array_equal(x[:, 0], 0.0)
    np.testing.assert_array_equal(x[:, 2], 1.0)
    assert abs(x[:, 1].mean() - 0.25) < 0.01


def test_bernoulli_gives_p_no_gradient():
    p = lucid.Tensor([0.5, 0.5], requires_grad=True)
    x = R.bernoulli(p)
    assert not x.requires_grad and x.is_leaf


@needs_mlx
def test_bernoulli_follows_a_gpu_p_and_an_int_p():
    p = lucid.Tensor([0.2, 0.8], dtype=lucid.Float16, device="gpu")
    x = R.bernoulli(p)
    assert x.device == "gpu" and x.dtype == lucid.Float16
    assert R.bernoulli(p, device="cpu").device == "cpu"
    y = R.bernoulli(lucid.Tensor([0, 1]))  # integer probabilities: the dtype stays Float64
    assert y.dtype == lucid.Float64 and y.tolist() == [0.0, 1.0]


def test_permutation_is_a_permutation_and_varies():
    R.seed(16)
    perms = [R.permutation(20).numpy() for _ in range(5)]
    for p in perms:
        assert sorted(p.tolist()) == list(range(20))
    assert len({tuple(p) for p in perms}) == 5
    # every position sees every value over many draws
    firsts = {int(R.permutation(5).numpy()[0]) for _ in range(200)}
    assert firsts == {0, 1, 2, 3, 4}


@pytest.mark.parametrize("dtype,bound", [(lucid.Float16, 1.0), (lucid.Float32, 1.0),
                                         (lucid.Float64, 1.0)])
def test_rounding_to_a_narrower_float_never_reaches_the_upper_bound(monkeypatch, dtype, bound):
    """A float64 draw just below 1 rounds to 1.0 in float32/float16; it must step down."""

    class Fake:
        def random(self, shape):
            return np.full(shape, np.nextafter(1.0, 0.0))

    monkeypatch.setattr(R, "_GENERATOR", Fake())
    x = R.rand(4, dtype=dtype).numpy()
    assert np.all(x < bound)
    np.testing.assert_array_equal(x, np.nextafter(dtype.cpu.type(1), dtype.cpu.type(0)))
    u = R.uniform(0.0, 4.0, 3, dtype=dtype).numpy()
    assert np.all(u < 4.0)


# --------------------------------------------------------------------------------------------
# permutation of a tensor


@pytest.mark.parametrize("device", DEVICES)
def test_permutation_of_a_tensor_shuffles_rows_with_gradient(device):
    x = lucid.Tensor(np.arange(8.0).reshape(4, 2), requires_grad=True, device=device)
    R.seed(17)
    order = R.permutation(4).numpy()
    R.seed(17)
    y = R.permutation(x)
    assert y.device == device and y.dtype == lucid.Float64
    np.testing.assert_array_equal(y.numpy(), np.arange(8.0).reshape(4, 2)[order])
    w = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0], [7.0, 8.0]])
    (y * lucid.Tensor(w, device=device)).sum().backward()
    want = np.empty_like(w)
    want[order] = w  # row i of y came from row order[i] of x
    np.testing.assert_array_equal(np.asarray(x.grad), want)


@needs_mlx
def test_permutation_of_a_tensor_with_dtype_and_device():
    x = lucid.Tensor(np.arange(6).reshape(3, 2))
    y = R.permutation(x, dtype=lucid.Float32, device="gpu")
    assert y.device == "gpu" and y.dtype == lucid.Float32
    assert sorted(map(tuple, y.tolist())) == [(0.0, 1.0), (2.0, 3.0), (4.0, 5.0)]


# --------------------------------------------------------------------------------------------
# the Float64-on-an-MLX-GPU policy


@needs_mlx
def test_float64_on_an_mlx_gpu_is_stored_float32_and_stays_below_one(monkeypatch):
    import mlx.core as mx

    monkeypatch.setattr(lucid.types, "_mlx_default_is_gpu", lambda: True)
    R.seed(18)
    cpu = R.rand(1000)
    R.seed(18)
    gpu = R.rand(1000, dtype=lucid.Float64, device="gpu")
    assert gpu.dtype == lucid.Float64 and gpu.data.dtype == mx.float32
    values = gpu.numpy()
    assert values.dtype == np.float64 and values.max() < 1.0
    np.testing.assert_allclose(values, cpu.numpy(), rtol=1e-7)


# --------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: R.rand(-1), r"^rand: negative size -1"),
        (lambda: R.randn(2, -3), r"^randn: negative size -3"),
        (lambda: R.uniform(0, 1, (2, -1)), r"^uniform: negative size -1"),
        (lambda: R.bernoulli(0.5, -2), r"^bernoulli: negative size -2"),
        (lambda: R.randint(0, 3, (-1,)), r"^randint: negative size -1"),
        (lambda: R.permutation(-4), r"^permutation: n must be >= 0, got -4"),
        (lambda: R.bernoulli(1.5), r"^bernoulli: probabilities must lie in \[0, 1\], got 1.5"),
        (lambda: R.bernoulli(-0.1), r"^bernoulli: probabilities must lie in \[0, 1\]"),
        (lambda: R.bernoulli(lucid.Tensor([0.5, float("nan")])), r"^bernoulli: .* got nan"),
        (lambda: R.bernoulli(float("nan")), r"^bernoulli: p must be finite"),
        (lambda: R.bernoulli(lucid.Tensor([0.5, 0.5]), size=3), r"^bernoulli: p of shape"),
        (lambda: R.randint(3, 3), r"^randint: high \(3\) must be greater than low \(3\)"),
        (lambda: R.randint(5, 2), r"^randint: high \(2\) must be greater than low \(5\)"),
        (lambda: R.randint(0), r"^randint: high \(0\) must be greater than low \(0\)"),
        (lambda: R.uniform(1.0, 1.0), r"^uniform: high \(1.0\) must be greater than low"),
        (lambda: R.uniform(2.0, -1.0), r"^uniform: high \(-1.0\) must be greater than low"),
        (lambda: R.uniform(0.0, float("inf")), r"^uniform: high must be finite"),
        (lambda: R.randint(0, 300, dtype=lucid.Int8), r"^randint: values 0..299 do not fit"),
        (lambda: R.randint(-1, 3, dtype=np.uint8), r"^randint: values -1..2 do not fit"),
        (lambda: R.permutation(200, dtype=lucid.Int8), r"^permutation: values 0..199"),
        (lambda: R.randint(0, 5000, dtype=lucid.Float16), r"^randint: Float16 holds integers"),
        (lambda: R.permutation(lucid.Tensor(3.0)), r"^permutation: a 0-d tensor"),
        (lambda: R.rand(2, device="tpu"), r"^rand: Unknown device 'tpu'"),
        (lambda: R.randint(4, device="tpu"), r"^randint: Unknown device 'tpu'"),
    ],
)
def test_bad_values_raise_value_error_naming_the_function(call, match):
    with pytest.raises(ValueError, match=match):
        call()


@pytest.mark.parametrize(
    "call,match",
    [
        (lambda: R.rand(2.5), r"^rand: shape entries must be ints"),
        (lambda: R.randint(0.5, 3), r"^randint: low must be an int"),
        (lambda: R.randint(0, True), r"^randint: high must be an int"),
        (lambda: R.uniform("a", 1.0), r"^uniform: low must be a real number"),
        (lambda: R.bernoulli("0.5"), r"^bernoulli: p must be a real number"),
        (lambda: R.permutation([1, 2, 3]), r"^permutation: expected an int n or a Tensor"),
        (lambda: R.permutation(2.0), r"^permutation: expected an int n or a Tensor"),
        (lambda: R.rand(2, dtype=lucid.Int32), r"^rand: dtype must be a floating-point type"),
        (lambda: R.randn(2, dtype=bool), r"^randn: dtype must be a floating-point type"),
        (lambda: R.bernoulli(0.5, dtype=lucid.Complex64), r"^bernoulli: dtype must be"),
        (lambda: R.randint(3, dtype=bool), r"^randint: dtype must be an integer or floating"),
        (lambda: R.permutation(3, dtype=lucid.Complex64), r"^permutation: dtype must be"),
        (lambda: R.rand(2, dtype=object), r"Unsupported dtype"),
    ],
)
def test_bad_types_raise_type_error(call, match):
    with pytest.raises(TypeError, match=match):
        call()


def test_a_call_that_raises_draws_nothing():
    R.seed(19)
    state = R.get_state()
    for call in (lambda: R.rand(2, dtype=lucid.Int8), lambda: R.randint(0, 999, dtype=lucid.Int8),
                 lambda: R.uniform(1, 0, 3), lambda: R.rand(3, device="tpu"),
                 lambda: R.bernoulli(2.0, 3)):
        with pytest.raises((TypeError, ValueError)):
            call()
    assert R.get_state() == state


def test_a_gpu_draw_without_mlx_says_how_to_install_and_draws_nothing(monkeypatch):
    from lucid import backends

    monkeypatch.delitem(backends.BACKENDS, "gpu", raising=False)
    monkeypatch.setattr(backends, "_load_gpu", lambda: None)  # as if MLX were not installed
    R.seed(20)
    state = R.get_state()
    for call in (lambda: R.rand(2, device="gpu"), lambda: R.randn(2, device="gpu"),
                 lambda: R.uniform(size=2, device="gpu"), lambda: R.bernoulli(0.5, 2, device="gpu"),
                 lambda: R.randint(3, size=2, device="gpu"),
                 lambda: R.permutation(4, device="gpu"),
                 lambda: R.permutation(lucid.Tensor([1.0, 2.0]), device="gpu")):
        with pytest.raises(RuntimeError, match=r"needs MLX, which is not installed.*pip install"):
            call()
    assert R.get_state() == state
    assert R.rand(2).device == "cpu"  # the cpu keeps working

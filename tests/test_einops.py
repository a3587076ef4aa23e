"""lucid.einops: einops' patterns on Lucid tensors, checked against einops on NumPy arrays
(float64), by finite differences, on "gpu" against "cpu", and for clear errors."""

from __future__ import annotations

import einops as np_einops
import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from lucid.einops import EinopsError, einsum, pack, parse_shape, rearrange, reduce, repeat

RNG = np.random.default_rng(0)
X = RNG.standard_normal((2, 3, 4, 6))
V = RNG.standard_normal((4, 6))

# (function name, pattern, kwargs / reduction, input)
CASES = [
    ("rearrange", "b c h w -> b (h w) c", {}, X),
    ("rearrange", "b c h w -> w h c b", {}, X),
    ("rearrange", "b c (h p) w -> (b p) c h w", {"p": 2}, X),
    ("rearrange", "b c h (w two) -> b c h w two", {"two": 2}, X),
    ("rearrange", "b ... w -> w ... b", {}, X),
    ("reduce", "b c h w -> b c", "mean", X),
    ("reduce", "b c (h 2) (w 2) -> b c h w", "max", X),
    ("reduce", "b c h w -> c", "sum", X),
    ("reduce", "b c h w -> b 1 h w", "min", X),
    ("reduce", "b c h w -> h w", "prod", X * 0 + 0.9 + X * 0.05),
    ("repeat", "h w -> h w c", {"c": 3}, V),
    ("repeat", "h w -> (h 2) (w 3)", {}, V),
    ("repeat", "h w -> (r h) w", {"r": 2}, V),
    ("repeat", "h w -> b h w", {"b": 2}, V),
]
IDS = [f"{fn}:{pattern}" for fn, pattern, _, _ in CASES]


def _call(module, fn, pattern, arg, x):
    f = getattr(module, fn)
    if fn == "reduce":
        return f(x, pattern, arg)
    return f(x, pattern, **arg)


@pytest.mark.parametrize("fn,pattern,arg,x", CASES, ids=IDS)
def test_matches_einops_on_numpy_float64(fn, pattern, arg, x):
    got = _call(lucid.einops, fn, pattern, arg, lucid.Tensor(x))
    want = _call(np_einops, fn, pattern, arg, x)
    assert isinstance(got, lucid.Tensor) and got.dtype == lucid.Float64
    assert got.shape == want.shape
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("fn,pattern,arg,x", CASES, ids=IDS)
def test_gradients_match_finite_differences(fn, pattern, arg, x):
    t = lucid.Tensor(x, requires_grad=True)
    assert gradcheck(lambda a: _call(lucid.einops, fn, pattern, arg, a), t,
                     eps=1e-6, atol=1e-5, rtol=1e-3)


@pytest.mark.parametrize("fn,pattern,arg,x", CASES, ids=IDS)
def test_gpu_matches_cpu(fn, pattern, arg, x):
    pytest.importorskip("mlx.core")
    out = {}
    for device in ("cpu", "gpu"):
        t = lucid.Tensor(x.astype(np.float32), requires_grad=True, device=device)
        y = _call(lucid.einops, fn, pattern, arg, t)
        (y * y).sum().backward()
        assert y.device == device and t.grad is not None
        out[device] = (y.numpy(), np.asarray(lucid.Tensor(t.grad, device=device).numpy()))
    np.testing.assert_allclose(out["gpu"][0], out["cpu"][0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(out["gpu"][1], out["cpu"][1], rtol=1e-4, atol=1e-5)


def test_repeat_gradient_sums_the_copies():
    v = lucid.Tensor(V, requires_grad=True)
    repeat(v, "h w -> h w c", c=3).sum().backward()
    np.testing.assert_array_equal(v.grad, np.full(V.shape, 3.0))


def test_einsum_with_named_axes():
    a, b = RNG.standard_normal((2, 3, 4)), RNG.standard_normal((2, 4, 5))
    got = einsum(lucid.Tensor(a), lucid.Tensor(b), "batch i j, batch j k -> batch i k")
    np.testing.assert_allclose(got.numpy(), a @ b, rtol=1e-12)
    assert gradcheck(lambda x, y: einsum(x, y, "batch i j, batch j k -> batch i k"),
                     lucid.Tensor(a, requires_grad=True), lucid.Tensor(b, requires_grad=True))
    diag = einsum(lucid.Tensor(V[:, :4]), "i i ->")  # a repeated name: the trace
    np.testing.assert_allclose(diag.item(), np.trace(V[:, :4]))


def test_list_of_tensors_is_stacked_and_arrays_are_promoted():
    parts = [lucid.Tensor(V), lucid.Tensor(V * 2)]
    got = rearrange(parts, "n h w -> h (n w)")
    np.testing.assert_allclose(got.numpy(), np_einops.rearrange([V, V * 2], "n h w -> h (n w)"))
    assert isinstance(rearrange(V, "h w -> w h"), lucid.Tensor)


def test_pack_and_parse_shape():
    packed, shapes = pack([lucid.Tensor(X), lucid.Tensor(V)], "* w")
    assert packed.shape == (2 * 3 * 4 + 4, 6)
    assert parse_shape(lucid.Tensor(X), "b c _ _") == {"b": 2, "c": 3}


def test_importable_from_the_package():
    assert lucid.einops.rearrange is rearrange


@pytest.mark.parametrize("call,match", [
    (lambda: rearrange(lucid.Tensor(X), "b c -> c b"),
     r"(?s)^lucid\.einops\.rearrange: Error while processing rearrange-reduction pattern "
     r"\"b c -> c b\".*Wrong shape: expected 2 dims\. Received 4-dim tensor"),
    (lambda: rearrange(lucid.Tensor(X), "b c h w -> b c h"),
     r"(?s)^lucid\.einops\.rearrange: .*Identifiers only on one side of expression"),
    (lambda: reduce(lucid.Tensor(X), "b c h w -> b c", "median"),
     r"(?s)^lucid\.einops\.reduce: .*Unknown reduction median"),
    (lambda: repeat(lucid.Tensor(V), "h w -> h w c"),
     r"(?s)^lucid\.einops\.repeat: .*Specify sizes for new axes in repeat: \{'c'\}"),
    (lambda: rearrange(lucid.Tensor(X), "b c (h p) w -> b c h p w", p=5),
     r"(?s)^lucid\.einops\.rearrange: .*Shape mismatch, can't divide axis of length 4 in chunks "
     r"of 5"),
    (lambda: einsum(lucid.Tensor(V), lucid.Tensor(V)),
     r"(?s)^lucid\.einops\.einsum: give the tensors first and the pattern \(a string\) last"),
])
def test_bad_patterns_raise_named_errors(call, match):
    with pytest.raises(EinopsError, match=match):
        call()

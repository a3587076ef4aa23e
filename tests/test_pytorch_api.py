"""PyTorch's spellings on Lucid: each behaves as in PyTorch, or raises naming Lucid's.

The four calls where Lucid 2.x (NumPy) and PyTorch disagree each have a decision, held here
(README, "Coming from PyTorch"): ``transpose`` with two ints, ``max``/``min`` with a dim,
``std``/``var`` defaults and ``size``.  Values are checked against NumPy float64 references.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

import lucid
from lucid import nn

X = np.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
X3 = np.arange(24.0).reshape(2, 3, 4)


def t(a, **kw):
    return lucid.tensor(a, **kw)


# --------------------------------------------------------------------------------------------
# the four decisions


def test_transpose_with_two_ints_swaps_axes_as_pytorch():
    np.testing.assert_array_equal(t(X).transpose(0, 1).numpy(), X.T)
    np.testing.assert_array_equal(t(X).transpose(1, 0).numpy(), X.T)
    np.testing.assert_array_equal(t(X3).transpose(0, 2).numpy(), np.swapaxes(X3, 0, 2))
    np.testing.assert_array_equal(lucid.transpose(t(X3), -1, 1).numpy(), np.swapaxes(X3, -1, 1))
    # a tuple is NumPy's permutation; permute is PyTorch's name for it
    np.testing.assert_array_equal(t(X3).transpose((2, 0, 1)).numpy(), X3.transpose(2, 0, 1))
    np.testing.assert_array_equal(t(X3).permute(2, 0, 1).numpy(), X3.transpose(2, 0, 1))
    np.testing.assert_array_equal(lucid.permute(t(X3), (1, 2, 0)).numpy(),
                                  X3.transpose(1, 2, 0))
    np.testing.assert_array_equal(t(X3).transpose().numpy(), X3.T)
    with pytest.raises(ValueError, match="transpose: axes .* give one entry per axis .*swap"):
        t(X3).transpose((1, 0))


def test_transpose_swap_gradient():
    x = t(X3, requires_grad=True)
    w = np.random.default_rng(0).standard_normal((4, 3, 2))
    (x.transpose(0, 2) * t(w)).sum().backward()
    np.testing.assert_allclose(x.grad, np.swapaxes(w, 0, 2))


def test_max_min_with_a_dim_give_values_and_indices():
    out = t(X).max(1)
    assert isinstance(out, tuple) and out._fields == ("values", "indices")
    np.testing.assert_array_equal(out.values.numpy(), X.max(axis=1))
    np.testing.assert_array_equal(out.indices.numpy(), X.argmax(axis=1))
    _, predicted = t(X).max(1)  # the accuracy idiom: indices, never values
    assert predicted.tolist() == [1, 2]
    values, indices = lucid.min(t(X), dim=0, keepdim=True)
    np.testing.assert_array_equal(values.numpy(), X.min(axis=0, keepdims=True))
    np.testing.assert_array_equal(indices.numpy(), X.argmin(axis=0)[None])
    assert lucid.max(t(X), 0).indices.dtype == lucid.int64


def test_max_min_keep_numpys_meaning_for_axis_and_no_dim():
    assert t(X).max().item() == 6.0
    np.testing.assert_array_equal(t(X).max(axis=1).numpy(), X.max(axis=1))  # values alone
    np.testing.assert_array_equal(lucid.min(t(X3), dim=(0, 2)).numpy(), X3.min(axis=(0, 2)))
    # two tensors: the elementwise maximum (torch.max(a, b))
    np.testing.assert_array_equal(lucid.max(t(X), t(X[::-1].copy())).numpy(),
                                  np.maximum(X, X[::-1]))


def test_max_with_dim_gradient_reaches_the_winners():
    x = t(X, requires_grad=True)
    x.max(1).values.sum().backward()
    want = np.zeros_like(X)
    want[[0, 1], X.argmax(axis=1)] = 1
    np.testing.assert_array_equal(x.grad, want)


def test_std_var_apply_bessels_correction_by_default():
    np.testing.assert_allclose(t(X).std().item(), X.std(ddof=1))
    np.testing.assert_allclose(t(X).var().item(), X.var(ddof=1))
    np.testing.assert_allclose(t(X).var(1).numpy(), X.var(axis=1, ddof=1))
    np.testing.assert_allclose(t(X).std(dim=0, keepdim=True).numpy(),
                               X.std(axis=0, ddof=1, keepdims=True))
    np.testing.assert_allclose(lucid.var(t(X), 1, False).numpy(), X.var(axis=1, ddof=0))
    np.testing.assert_allclose(t(X).var(correction=0).item(), X.var())
    np.testing.assert_allclose(t(X).std(unbiased=False).item(), X.std())
    np.testing.assert_allclose(t(X).std(ddof=0).item(), X.std())


def test_std_var_keep_numpys_ddof_0_under_the_axis_keyword():
    np.testing.assert_allclose(t(X).std(axis=0).numpy(), X.std(axis=0))
    np.testing.assert_allclose(lucid.var(t(X), axis=1).numpy(), X.var(axis=1))
    np.testing.assert_allclose(t(X).var(axis=1, ddof=1).numpy(), X.var(axis=1, ddof=1))
    # axis=None spelled out is NumPy's "every axis", with NumPy's default too
    np.testing.assert_allclose(lucid.std(t(X), axis=None).numpy(), X.std())
    np.testing.assert_allclose(t(2.5).std(axis=None).numpy(), 0.0)  # one value: no spread
    with pytest.raises(TypeError, match="var: got both dim= and axis="):
        t(X).var(0, axis=1)


def test_size_is_an_int_and_pytorchs_method():
    x = lucid.zeros(2, 3)
    assert x.size == 6 and x.size + 1 == 7 and isinstance(x.size, int)  # Lucid 2.x, NumPy
    assert x.size() == (2, 3) and x.size(0) == 2 and x.size(-1) == 3  # PyTorch
    assert lucid.zeros(4).view(x.size(0), -1).shape == (2, 2)
    with pytest.raises(IndexError, match=r"size\(2\): the tensor of shape \(2,3\) has 2"):
        x.size(2)
    with pytest.raises(TypeError, match="size"):
        x.size("0")


# --------------------------------------------------------------------------------------------
# dim= / keepdim= wherever axis= / keepdims= is taken


@pytest.mark.parametrize("call,ref", [
    (lambda x: x.sum(dim=1, keepdim=True), lambda a: a.sum(axis=1, keepdims=True)),
    (lambda x: lucid.mean(x, dim=0), lambda a: a.mean(axis=0)),
    (lambda x: lucid.argmax(x, dim=1), lambda a: a.argmax(axis=1)),
    (lambda x: x.argmin(dim=0, keepdim=True), lambda a: a.argmin(axis=0)[None]),
    (lambda x: lucid.softmax(x, dim=1),
     lambda a: np.exp(a) / np.exp(a).sum(axis=1, keepdims=True)),
    (lambda x: lucid.log_softmax(x, dim=-1),
     lambda a: a - np.log(np.exp(a).sum(axis=-1, keepdims=True))),
    (lambda x: lucid.cat([x, x], dim=1), lambda a: np.concatenate([a, a], axis=1)),
    (lambda x: lucid.stack([x, x], dim=1), lambda a: np.stack([a, a], axis=1)),
    (lambda x: lucid.split(x, 1, dim=1)[2], lambda a: a[:, 2:3]),
    (lambda x: x.topk(2, dim=1)[1], lambda a: np.argsort(-a, axis=1)[:, :2]),
    (lambda x: x.cumsum(dim=1), lambda a: a.cumsum(axis=1)),
    (lambda x: x.unsqueeze(dim=0), lambda a: a[None]),
    (lambda x: x.flatten(start_dim=0), lambda a: a.reshape(-1)),
    (lambda x: x.norm(dim=1), lambda a: np.linalg.norm(a, axis=1)),
    (lambda x: lucid.logsumexp(x, dim=1), lambda a: np.log(np.exp(a).sum(axis=1))),
])
def test_dim_and_keepdim_keywords(call, ref):
    np.testing.assert_allclose(call(t(X)).numpy(), ref(X))


def test_dim_and_axis_together_is_an_error():
    with pytest.raises(TypeError, match="sum: got both dim= .* and axis="):
        t(X).sum(dim=0, axis=1)


# --------------------------------------------------------------------------------------------
# dtypes


def test_pytorch_dtype_names():
    assert lucid.float is lucid.float32 is lucid.Float32
    assert lucid.double is lucid.float64 is lucid.Float64
    assert lucid.half is lucid.float16 and lucid.long is lucid.int64 is lucid.Int64
    assert lucid.int is lucid.int32 and lucid.bool is lucid.Bool
    assert lucid.zeros(2, dtype=lucid.long).dtype == lucid.Int64


def test_dtype_conversion_methods():
    x = t(X)
    assert x.float().dtype == lucid.float32 and x.double() is x
    assert x.long().dtype == lucid.int64 and x.int().dtype == lucid.int32
    assert x.half().dtype == lucid.float16 and x.bool().dtype == lucid.bool
    assert x.type(lucid.float32).dtype == lucid.float32
    assert x.type("lucid.LongTensor").dtype == lucid.int64
    assert x.type() == "lucid.Float64"
    assert x.type_as(t([1], dtype=lucid.int32)).dtype == lucid.int32
    assert x.to(lucid.float32).dtype == lucid.float32
    assert x.to("cpu", lucid.float16).dtype == lucid.float16
    assert x.to(t([1])).dtype == lucid.int64
    assert x.is_floating_point() and not x.long().is_floating_point()
    np.testing.assert_array_equal(t([1.7, -1.7]).long().numpy(), [1, -1])
    with pytest.raises(TypeError, match="unknown dtype name 'lucid.NopeTensor'"):
        x.type("lucid.NopeTensor")


def test_dtype_cast_keeps_the_gradient():
    x = t(X, requires_grad=True)
    (x.float() * 2).sum().backward()
    np.testing.assert_array_equal(x.grad, np.full_like(X, 2.0))
    assert x.grad.dtype == np.float64


def test_default_dtype():
    assert lucid.get_default_dtype() == lucid.float64  # Lucid's rule: NumPy's float64
    assert lucid.ones(2).dtype == lucid.float64 and t([1.5]).dtype == lucid.float64
    lucid.set_default_dtype(lucid.float32)
    try:
        assert lucid.get_default_dtype() == lucid.float32
        assert lucid.ones(2).dtype == lucid.float32 and lucid.zeros(2, 2).dtype == lucid.float32
        assert lucid.randn(3).dtype == lucid.float32 and lucid.rand(2).dtype == lucid.float32
        assert t([1.5]).dtype == lucid.float32 and lucid.arange(0.0, 1.0, 0.5).dtype == \
            lucid.float32
        assert t([1, 2]).dtype == lucid.int64 and lucid.arange(3).dtype == lucid.int64
        assert t(np.ones(2)).dtype == lucid.float64  # a NumPy array keeps its dtype
        assert lucid.ones(2, dtype=lucid.float64).dtype == lucid.float64
    finally:
        lucid.set_default_dtype(lucid.float64)
    with pytest.raises(TypeError, match="set_default_dtype: expected a floating-point"):
        lucid.set_default_dtype(lucid.int64)


# --------------------------------------------------------------------------------------------
# shapes and elements


def test_view_and_shape_methods():
    x = t(X3)
    assert x.view(6, -1).shape == (6, 4) and x.view((4, 6)).shape == (4, 6)
    assert x.view(-1).shape == (24,) and x.view_as(lucid.zeros(4, 6)).shape == (4, 6)
    assert x.reshape_as(lucid.zeros(6, 4)).shape == (6, 4)
    assert t([1.0]).expand_as(x).shape == (2, 3, 4)
    assert x.contiguous() is x and x.is_contiguous()
    assert x.numel() == 24 == lucid.numel(x) == x.nelement()
    assert x.dim() == 3 == x.ndimension()
    np.testing.assert_array_equal(t(X).t().numpy(), X.T)
    assert t([1.0, 2.0]).t().shape == (2,)
    assert x.element_size() == 8 and x.float().element_size() == 4
    with pytest.raises(ValueError, match="t: expects a tensor of at most 2 dimensions"):
        x.t()
    with pytest.raises(TypeError, match="view: reinterpreting .* x.astype"):
        x.view(lucid.float32)


def test_view_gradient_flows_as_reshape():
    x = t(X, requires_grad=True)
    (x.view(3, 2) * t(np.arange(6.0).reshape(3, 2))).sum().backward()
    np.testing.assert_array_equal(x.grad, np.arange(6.0).reshape(2, 3))


def test_arithmetic_and_comparison_methods():
    x, y = t(X), t(X[::-1].copy())
    np.testing.assert_array_equal(x.pow(2).numpy(), X**2)
    np.testing.assert_array_equal(x.eq(y).numpy(), X == X[::-1])
    np.testing.assert_array_equal(x.ne(y).numpy(), X != X[::-1])
    np.testing.assert_array_equal(x.gt(2).numpy(), X > 2)
    np.testing.assert_array_equal(x.le(2).numpy(), X <= 2)
    np.testing.assert_array_equal(x.add(y, alpha=2).numpy(), X + 2 * X[::-1])
    np.testing.assert_array_equal(x.sub(y).numpy(), X - X[::-1])
    np.testing.assert_array_equal(x.mul(y).numpy(), X * X[::-1])
    np.testing.assert_array_equal(x.div(2).numpy(), X / 2)
    np.testing.assert_array_equal(x.neg().numpy(), -X)
    np.testing.assert_array_equal(lucid.mm(x, y.t()).numpy(), X @ X[::-1].T)
    np.testing.assert_array_equal(lucid.bmm(t(X3), t(X3).transpose(1, 2)).numpy(),
                                  X3 @ X3.transpose(0, 2, 1))


def test_index_on_integer_tensors():
    classes = ["cat", "dog", "emu"]
    assert classes[t(2)] == "emu" and classes[lucid.argmax(t([0.1, 0.9, 0.0]))] == "dog"
    assert range(10)[t(np.int32(3))] == 3
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        classes[t(1.0)]
    with pytest.raises(TypeError, match="only integer tensors of a single element"):
        classes[t([0, 1])]


# --------------------------------------------------------------------------------------------
# creation and random


def test_like_and_new_creators():
    x = t(X, dtype=lucid.float32)
    for fn in (lucid.randn_like, lucid.rand_like, lucid.zeros_like, lucid.ones_like):
        out = fn(x)
        assert out.shape == (2, 3) and out.dtype == lucid.float32
    r = lucid.randint_like(x, 5)
    assert r.shape == (2, 3) and r.dtype == lucid.float32
    assert set(r.numpy().ravel()) <= set(range(5))


def test_from_numpy_keeps_the_dtype_and_shares_the_memory():
    a = np.arange(3, dtype=np.float32)
    x = lucid.from_numpy(a)
    assert x.dtype == lucid.float32 and x.tolist() == [0.0, 1.0, 2.0]
    np.add(a, 1, out=a)  # PyTorch's tutorial: a change in the array shows in the tensor
    assert x.tolist() == [1.0, 2.0, 3.0]
    with pytest.raises(TypeError, match="Unsupported dtype|string|object"):
        lucid.from_numpy(np.array(["a"]))
    assert lucid.from_numpy(np.arange(3)).dtype == lucid.int64
    assert lucid.is_tensor(x) and not lucid.is_tensor(a)
    assert lucid.as_tensor(x) is x and lucid.as_tensor([1, 2]).dtype == lucid.int64
    with pytest.raises(TypeError, match="from_numpy: expected a NumPy array, got list"):
        lucid.from_numpy([1, 2])


def test_manual_seed_makes_draws_repeat():
    lucid.manual_seed(3)
    a = (lucid.randn(4), lucid.randint(10, (3,)), lucid.randperm(5))
    lucid.manual_seed(3)
    b = (lucid.randn(4), lucid.randint(10, (3,)), lucid.randperm(5))
    for u, v in zip(a, b):
        np.testing.assert_array_equal(u.numpy(), v.numpy())
    assert lucid.random.get_seed() == 3


def test_randint_pytorch_and_numpy_forms():
    lucid.manual_seed(0)
    high_size = lucid.randint(10, (2, 3))
    assert high_size.shape == (2, 3) and high_size.dtype == lucid.int64
    assert 0 <= high_size.numpy().min() and high_size.numpy().max() < 10
    low_high_size = lucid.randint(5, 8, (100,))
    assert set(low_high_size.tolist()) <= {5, 6, 7}
    assert lucid.randint(3, 4).shape == ()  # NumPy's randint(low, high): one value
    assert lucid.randint(5, 8, size=(2,)).shape == (2,)


def test_randperm_is_a_permutation():
    p = lucid.randperm(10)
    assert sorted(p.tolist()) == list(range(10)) and p.dtype == lucid.int64


def test_generator_is_an_independent_stream():
    g1 = lucid.Generator().manual_seed(42)
    g2 = lucid.Generator().manual_seed(42)
    a = lucid.randperm(8, generator=g1)
    lucid.randn(5)  # the module's stream does not touch g2
    np.testing.assert_array_equal(a.numpy(), lucid.randperm(8, generator=g2).numpy())
    assert g1.initial_seed() == 42
    with pytest.raises(TypeError, match="generator must be a lucid.Generator"):
        lucid.randperm(3, generator=np.random.default_rng())


def test_normal_moments_and_shapes():
    lucid.manual_seed(0)
    x = lucid.normal(2.0, 3.0, (20000,))
    assert abs(x.numpy().mean() - 2.0) < 0.1 and abs(x.numpy().std() - 3.0) < 0.1
    m = lucid.normal(t([0.0, 100.0]), t([1e-9, 1e-9]))
    np.testing.assert_allclose(m.numpy(), [0.0, 100.0], atol=1e-6)
    assert lucid.normal(t([[0.0]], dtype=lucid.float32), 1.0).dtype == lucid.float32
    with pytest.raises(ValueError, match="normal: std must be >= 0"):
        lucid.normal(0.0, -1.0, (2,))


def test_multinomial_frequencies_and_rules():
    lucid.manual_seed(0)
    w = t([1.0, 0.0, 3.0])
    draws = lucid.multinomial(w, 4000, replacement=True).numpy()
    assert draws.dtype == np.int64 and 1 not in draws
    assert abs((draws == 2).mean() - 0.75) < 0.03
    rows = lucid.multinomial(t([[1.0, 1.0, 0.0], [0.0, 1.0, 1.0]]), 2)
    assert rows.shape == (2, 2)
    assert sorted(rows.numpy()[0]) == [0, 1] and sorted(rows.numpy()[1]) == [1, 2]
    with pytest.raises(ValueError, match="multinomial: cannot draw 3 samples without"):
        lucid.multinomial(w, 3)
    with pytest.raises(ValueError, match="weights must be finite, >= 0"):
        lucid.multinomial(t([-1.0, 2.0]), 1)


# --------------------------------------------------------------------------------------------
# autograd spellings


def test_requires_grad_and_detach_in_place():
    x = lucid.ones(3)
    assert x.requires_grad_() is x and x.requires_grad
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 2.0, 2.0])
    with pytest.raises(TypeError, match="requires_grad_: only floating-point"):
        t([1, 2]).requires_grad_()
    y = x * 2
    assert y.detach_() is y and not y.requires_grad and y.grad_fn is None


def test_clone_is_a_copy_in_the_graph():
    x = t(X, requires_grad=True)
    c = x.clone()
    assert c is not x and not np.shares_memory(c.data, x.data)
    (c * 3).sum().backward()
    np.testing.assert_array_equal(x.grad, np.full_like(X, 3.0))


def test_grad_fn_and_next_functions():
    a = t([1.0, 2.0], requires_grad=True)
    b = t([3.0, 4.0])
    y = (a * b).sum()
    assert y.grad_fn.name() == "Sum" and a.grad_fn is None and b.grad_fn is None
    ((mul, _),) = y.grad_fn.next_functions
    assert mul.name() == "Mul"
    (leaf, _), (none, _) = mul.next_functions
    assert leaf.name() == "AccumulateGrad" and leaf.variable is a and none is None
    assert leaf.next_functions == ()
    with lucid.no_grad():
        assert (a * 2).grad_fn is None
    with pytest.raises(AttributeError):
        y.grad_fn = None  # read-only


def test_inference_mode_and_set_grad_enabled():
    a = t([1.0], requires_grad=True)
    with lucid.inference_mode():
        assert not (a * 2).requires_grad

    @lucid.inference_mode()
    def f(x):
        return x * 2

    assert not f(a).requires_grad and (a * 2).requires_grad
    try:
        lucid.set_grad_enabled(False)
        assert not lucid.grad_enabled()
    finally:
        lucid.set_grad_enabled(True)
    assert lucid.grad_enabled()
    with lucid.set_grad_enabled(False):
        assert not (a * 2).requires_grad
    assert lucid.grad_enabled()
    with lucid.no_grad():
        with lucid.set_grad_enabled(True):
            assert (a * 2).requires_grad
        assert not lucid.grad_enabled()


# --------------------------------------------------------------------------------------------
# devices


def test_device_aliases():
    assert lucid.device("cuda") == "gpu" and lucid.device("cuda:0") == "gpu"
    assert lucid.device("mps") == "gpu" and lucid.device("cpu") == "cpu"
    d = lucid.device("cuda:1")
    assert d.type == "cuda" and d.index == 1 and repr(d) == "device(type='cuda', index=1)"
    assert lucid.device("cpu").type == "cpu"
    assert t([1.0], device=lucid.device("cpu")).device == "cpu"
    assert lucid.zeros(2, device="cpu:0").device == "cpu"
    with pytest.raises(ValueError, match=r"Unknown device 'tpu'.*'cuda'"):
        lucid.device("tpu")


def test_a_tensors_device_reads_as_pytorchs_and_as_lucids_string():
    x = lucid.zeros(2)
    assert x.device.type == "cpu" and x.device.index is None and str(x.device) == "cpu"
    assert x.device == "cpu" and x.device != "gpu" and x.device != "cuda"
    assert x.device == lucid.device("cpu") and isinstance(x.device, lucid.device)
    assert isinstance(x.device, str) and repr(x.device) == "'cpu'"  # messages stay as they were
    assert {"cpu": 1}[x.device] == 1 and (x * 2).device.type == "cpu"
    assert x.detach().device.type == "cpu" and x.sum().device.index is None


def test_a_gpu_tensors_device_equals_pytorchs_names_for_it():
    pytest.importorskip("mlx.core")
    for g in (lucid.zeros(2, device="gpu"), lucid.zeros(2).to("cuda"), lucid.ones(1).cuda() * 2,
              nn.Linear(2, 1).to(lucid.device("cuda")).weight):
        d = g.device
        assert d.type == "gpu" and d.index == 0 and str(d) == "gpu" and repr(d) == "'gpu'"
        assert d == "gpu" and d == "cuda" and d == "cuda:0" and d == "mps" and d != "cpu"
        assert not (d != "cuda") and d == lucid.device("cuda") and {"gpu": 1}[d] == 1
        assert g.to(d).device is d and lucid.ones(1, device=d).device == "gpu"


def test_availability_answers_for_the_gpu_device():
    real_gpu = lucid.gpu_available()
    metal = lucid.backends.mps.metal()
    assert lucid.cuda.is_available() is (real_gpu and not metal)  # NVIDIA, as PyTorch's
    assert lucid.backends.mps.is_available() is (real_gpu and metal)  # Apple, as PyTorch's
    assert lucid.accelerator.is_available() is real_gpu
    assert lucid.cuda.device_count() == int(real_gpu and not metal)
    acc = lucid.accelerator.current_accelerator()
    assert (acc is None) if not real_gpu else (acc == "gpu")
    lucid.backends.cudnn.benchmark = True  # accepted, changes nothing
    device = "cuda" if lucid.cuda.is_available() else "cpu"
    assert lucid.ones(2, device=device).device in ("cpu", "gpu")


def test_cuda_names_mean_the_gpu_device():
    pytest.importorskip("mlx.core")
    x = t([1.0, 2.0], device="cuda")
    assert x.device == "gpu" and x.to("cpu").device == "cpu"
    assert t([1.0]).to("cuda:0").device == "gpu" and t([1.0]).cuda().device == "gpu"
    m = nn.Linear(2, 1).to(lucid.device("mps"))
    assert m.weight.device == "gpu"


# --------------------------------------------------------------------------------------------
# nn


@pytest.mark.parametrize("layer", [nn.ReLU, nn.SiLU, nn.SELU, nn.ReLU6, nn.Hardswish,
                                   nn.Hardsigmoid, nn.Mish])
def test_layers_accept_inplace(layer):
    m = layer(True)
    assert m.inplace and "inplace=True" in repr(m)
    x = t(X - 3.0)
    np.testing.assert_array_equal(m(x).numpy(), layer()(x).numpy())
    np.testing.assert_array_equal(x.numpy(), X - 3.0)  # the input is left as it was
    with pytest.raises(TypeError, match="inplace must be True or False"):
        layer("yes")


def test_other_layers_accept_pytorchs_keywords():
    assert nn.LeakyReLU(0.2, inplace=True).inplace and nn.ELU(1.0, True).inplace
    assert nn.Dropout(0.5, inplace=True).inplace
    x = t(X)
    np.testing.assert_allclose(nn.Softmax(dim=0)(x).numpy(),
                               np.exp(X) / np.exp(X).sum(axis=0))
    np.testing.assert_allclose(nn.LogSoftmax(dim=1)(x).numpy(),
                               X - np.log(np.exp(X).sum(axis=1, keepdims=True)))
    assert nn.Flatten(start_dim=0)(t(X3)).shape == (24,)


def test_zero_grad_set_to_none():
    m = nn.Linear(3, 2)
    m(lucid.ones(1, 3, dtype=lucid.float32)).sum().backward()
    m.zero_grad(set_to_none=False)
    assert m.weight.grad is not None and not np.any(m.weight.grad)
    m.zero_grad()
    assert m.weight.grad is None


def test_load_state_dict_copies_into_the_parameters_dtype():
    m = nn.Linear(3, 2, dtype=lucid.float64)
    sd = {"weight": np.arange(6, dtype=np.float32).reshape(2, 3),
          "bias": np.ones(2, dtype=np.float32)}
    m.load_state_dict(sd)
    assert m.weight.dtype == lucid.float64 and m.weight.data.dtype == np.float64
    np.testing.assert_array_equal(m.weight.numpy(), sd["weight"])
    f32 = nn.Linear(3, 2)
    f32.load_state_dict({k: v.astype(np.float64) for k, v in sd.items()})
    assert f32.weight.dtype == lucid.float32
    with pytest.raises(RuntimeError, match="weight: dtype Complex128 .* cannot be copied"):
        f32.load_state_dict({"weight": sd["weight"].astype(complex), "bias": sd["bias"]})


def test_module_dtype_methods():
    m = nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2))
    m.double()
    assert all(p.dtype == lucid.float64 for p in m.parameters())
    assert m[1].running_mean.dtype == lucid.float64
    assert m[1].num_batches_tracked.dtype == lucid.int64  # integers stay
    m.float()
    assert all(p.dtype == lucid.float32 for p in m.parameters())
    m.to("cpu", lucid.float64)
    assert m[0].weight.dtype == lucid.float64


# --------------------------------------------------------------------------------------------
# repeat (the fifth disagreement), new_*, legacy constructors, load(map_location=)


def test_repeat_method_tiles_as_pytorch():
    x = t(X)
    np.testing.assert_array_equal(x.repeat(2, 1).numpy(), np.tile(X, (2, 1)))
    np.testing.assert_array_equal(x.repeat((1, 3)).numpy(), np.tile(X, (1, 3)))
    np.testing.assert_array_equal(x.repeat(2, 1, 1).numpy(), np.tile(X, (2, 1, 1)))
    np.testing.assert_array_equal(t([1.0, 2.0]).repeat(2).numpy(), [1.0, 2.0, 1.0, 2.0])
    with pytest.raises(ValueError, match="repeat: x.repeat.*tiles.*repeat_interleave"):
        x.repeat(2)


def test_repeat_keeps_numpys_meaning_under_its_keywords():
    x = t(X)
    np.testing.assert_array_equal(x.repeat(2, axis=1).numpy(), np.repeat(X, 2, axis=1))
    np.testing.assert_array_equal(x.repeat(repeats=2).numpy(), np.repeat(X, 2))
    np.testing.assert_array_equal(lucid.repeat(x, 2, 0).numpy(), np.repeat(X, 2, axis=0))
    np.testing.assert_array_equal(lucid.repeat_interleave(x, 2, dim=1).numpy(),
                                  np.repeat(X, 2, axis=1))
    np.testing.assert_array_equal(x.repeat_interleave(t([1, 0, 2]), dim=1).numpy(),
                                  np.repeat(X, [1, 0, 2], axis=1))


def test_repeat_gradient():
    x = t(X, requires_grad=True)
    x.repeat(2, 3).sum().backward()
    np.testing.assert_array_equal(x.grad, np.full_like(X, 6.0))


def test_new_creators_take_this_tensors_dtype_and_device():
    x = t(X, dtype=lucid.float32)
    z = x.new_zeros(2, 4)
    assert z.shape == (2, 4) and z.dtype == lucid.float32 and not z.numpy().any()
    assert x.new_ones((3,)).tolist() == [1.0, 1.0, 1.0] and x.new_ones(3).dtype == lucid.float32
    assert x.new_full((2,), 7).tolist() == [7.0, 7.0] and x.new_full(2, 7).dtype == lucid.float32
    assert x.new_empty(5).shape == (5,)
    n = x.new_tensor([1, 2])
    assert n.dtype == lucid.float32 and n.tolist() == [1.0, 2.0]
    assert x.new_zeros(2, dtype=lucid.long).dtype == lucid.int64
    assert x.new_ones(2, requires_grad=True).requires_grad


def test_legacy_constructors():
    assert lucid.FloatTensor([1, 2]).dtype == lucid.float32
    assert lucid.LongTensor([1.0, 2.0]).tolist() == [1, 2]
    assert lucid.FloatTensor(2, 3).shape == (2, 3)
    assert lucid.BoolTensor([1, 0]).dtype == lucid.bool


def test_load_accepts_pytorchs_keywords(tmp_path):
    path = tmp_path / "w.lucid"
    lucid.save({"w": t(X)}, path)
    out = lucid.load(path, map_location="cpu", weights_only=True)
    np.testing.assert_array_equal(out["w"].numpy(), X)
    out = lucid.load(path, map_location=lucid.device("cpu"))
    assert out["w"].device == "cpu"


# --------------------------------------------------------------------------------------------
# .grad and .data


def test_grad_answers_pytorchs_in_place_idioms():
    w = t([1.0, 2.0, 3.0], requires_grad=True)
    (w * w).sum().backward()
    assert isinstance(w.grad, np.ndarray) and repr(w.grad) == "array([2., 4., 6.])"
    np.testing.assert_allclose(w.grad.norm().item(), np.linalg.norm([2.0, 4.0, 6.0]))
    assert w.grad.size() == (3,) and w.grad.size == 3
    assert w.grad.data.mul_(0.5) is w.grad
    np.testing.assert_array_equal(w.grad, [1.0, 2.0, 3.0])
    w.grad.add_(t([1.0, 1.0, 1.0]), alpha=2)
    np.testing.assert_array_equal(w.grad, [3.0, 4.0, 5.0])
    assert type(w.grad * 2) is np.ndarray  # NumPy's results are plain arrays
    w.grad.zero_()
    (w * w).sum().backward()  # accumulates into the zeroed gradient, as PyTorch
    np.testing.assert_array_equal(w.grad, [2.0, 4.0, 6.0])
    assert w.grad.clone().tolist() == [2.0, 4.0, 6.0]


def test_sgd_from_scratch_as_d2l_writes_it():
    # d2l's sgd: param -= lr * param.grad / batch_size; param.grad.zero_()
    rng = np.random.default_rng(0)
    X_np, true_w = rng.standard_normal((64, 2)), np.array([2.0, -3.4])
    y_np = X_np @ true_w + 4.2
    w, b = lucid.zeros(2, requires_grad=True), lucid.zeros(1, requires_grad=True)
    for _ in range(200):
        loss = ((lucid.tensor(X_np) @ w + b - lucid.tensor(y_np)) ** 2 / 2).sum()
        loss.backward()
        with lucid.no_grad():
            for param in (w, b):
                param -= 0.1 * param.grad / 64
                param.grad.zero_()
    np.testing.assert_allclose(w.numpy(), true_w, atol=1e-3)
    np.testing.assert_allclose(b.numpy(), [4.2], atol=1e-3)


def test_data_is_the_array_and_in_place_numpy_updates_work():
    p = t([1.0, 2.0], requires_grad=True)
    (p * 3).sum().backward()
    p.data -= 0.5 * p.grad  # PyTorch's p.data -= lr * p.grad
    np.testing.assert_array_equal(p.numpy(), [-0.5, 0.5])
    assert (p * p).sum().data.item() == 0.5


def test_parameter_data_answers_pytorchs_in_place_idioms():
    m = nn.Linear(3, 2)
    lucid.manual_seed(0)
    m.weight.data.normal_(0.0, 0.02)  # DCGAN's weights_init
    first = m.weight.numpy().copy()
    lucid.manual_seed(0)
    m.weight.data.normal_(0.0, 0.02)
    np.testing.assert_array_equal(m.weight.numpy(), first)  # one seed governs the draw
    assert abs(first.std() - 0.02) < 0.02 and m.weight.dtype == lucid.float32
    m.bias.data.fill_(0)
    assert m.bias.tolist() == [0.0, 0.0]
    m.weight.data.uniform_(-0.1, 0.1)
    assert np.all(np.abs(m.weight.numpy()) <= 0.1)
    m(lucid.ones(1, 3, dtype=lucid.float32)).sum().backward()
    before = m.weight.numpy().copy()
    for p in m.parameters():  # the word-language-model example's update
        p.data.add_(p.grad, alpha=-0.5)
    np.testing.assert_allclose(m.weight.numpy(), before - 0.5, rtol=1e-6)
    m.weight.data.clamp_(-0.01, 0.01)  # WGAN's clipping
    assert np.all(np.abs(m.weight.numpy()) <= 0.01)
    assert type(m.weight.numpy()) is np.ndarray and repr(m.bias.data).startswith("array(")
    lucid.optim.SGD(m.parameters(), lr=0.1).step()  # still itself after an optimizer step
    m.bias.data.zero_()
    assert m.bias.tolist() == [0.0, 0.0]


def test_init_fills_a_parameters_data_in_place():
    # the DCGAN tutorial's weights_init: nn.init.normal_(m.weight.data, 0.0, 0.02)
    conv, twin = nn.Conv2d(1, 4, 3), nn.Conv2d(1, 4, 3)
    weight = conv.weight
    lucid.manual_seed(0)
    out = nn.init.normal_(conv.weight.data, 1.0, 0.02)
    assert np.shares_memory(out, conv.weight.numpy()) and conv.weight is weight
    lucid.manual_seed(0)
    want = nn.init.normal_(twin.weight, 1.0, 0.02).numpy()
    np.testing.assert_array_equal(conv.weight.numpy(), want)
    nn.init.constant_(conv.bias.data, 0)
    assert conv.bias.tolist() == [0.0] * 4
    nn.init.xavier_uniform_(conv.weight.data)
    assert conv.weight.dtype == lucid.float32


def test_more_pytorch_names():
    x = t(X)
    assert lucid.allclose(x, x + 1e-9) and not lucid.allclose(x, x + 1e-3)
    np.testing.assert_array_equal(lucid.isclose(x, t(X[::-1].copy())).numpy(),
                                  np.isclose(X, X[::-1]))
    np.testing.assert_allclose(x.rsqrt().numpy(), 1 / np.sqrt(X))
    np.testing.assert_array_equal(x.index_select(1, t([2, 0])).numpy(), X[:, [2, 0]])
    np.testing.assert_array_equal(lucid.masked_select(x, x > 2).numpy(), X[X > 2])
    np.testing.assert_array_equal(x.masked_select(t([True, False, True])).numpy(),
                                  X[:, [0, 2]].ravel())
    assert [u.tolist() for u in x.unbind(1)] == [list(c) for c in X.T]
    np.testing.assert_array_equal(lucid.flip(x, (0, 1)).numpy(), X[::-1, ::-1])
    np.testing.assert_array_equal(x.flip(1).numpy(), X[:, ::-1])
    np.testing.assert_array_equal(x.tril().numpy(), np.tril(X))
    np.testing.assert_array_equal(x.clone().masked_fill_(x > 3, 0).numpy(),
                                  np.where(X > 3, 0, X))
    assert lucid.bernoulli(t([0.0, 1.0])).tolist() == [0.0, 1.0]


def test_flip_and_index_select_gradients():
    x = t(X, requires_grad=True)
    w = np.arange(6.0).reshape(2, 3)
    (x.flip(1) * t(w)).sum().backward()
    np.testing.assert_array_equal(x.grad, w[:, ::-1])


def test_retain_grad_and_random_fills():
    x = t([1.0, 2.0], requires_grad=True)
    y = x * 3
    y.retain_grad()
    (y * y).sum().backward()
    np.testing.assert_array_equal(y.grad, [6.0, 12.0])
    lucid.manual_seed(1)
    with lucid.no_grad():
        a = lucid.zeros(1000).uniform_(-2, 3)
        b = lucid.zeros(1000).normal_(5.0, 0.1)
    assert a.numpy().min() >= -2 and a.numpy().max() < 3
    assert abs(b.numpy().mean() - 5.0) < 0.02
    w = lucid.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf Variable that requires grad"):
        w.normal_()


def test_state_dict_values_answer_size_and_clone():
    sd = nn.Linear(3, 2).state_dict()
    assert sd["weight"].size() == (2, 3) and sd["bias"].size(0) == 2
    assert isinstance(sd["weight"], np.ndarray) and repr(sd["bias"]).startswith("array(")
    assert lucid.is_tensor(sd["weight"].clone())


def test_module_requires_grad_unflatten_and_flatten_parameters():
    net = nn.Sequential(nn.Linear(2, 3), nn.Unflatten(1, (3, 1)))
    assert net(lucid.ones(4, 2, dtype=lucid.float32)).shape == (4, 3, 1)
    assert net.requires_grad_(False) is net
    assert not any(p.requires_grad for p in net.parameters())
    out = net(lucid.ones(1, 2, dtype=lucid.float32))
    assert not out.requires_grad
    net.requires_grad_()
    assert all(p.requires_grad for p in net.parameters())
    lstm = nn.LSTM(2, 3)
    assert lstm.flatten_parameters() is None  # accepted; nothing to pack


def test_amp_names_pass_through():
    scaler = lucid.cuda.amp.GradScaler(enabled=True)
    m = nn.Linear(2, 1)
    opt = lucid.optim.SGD(m.parameters(), lr=0.1)
    loss = m(lucid.ones(1, 2, dtype=lucid.float32)).sum()
    assert scaler.scale(loss) is loss
    scaler.scale(loss).backward()
    before = m.weight.numpy().copy()
    scaler.unscale_(opt)
    scaler.step(opt)
    scaler.update()
    np.testing.assert_allclose(m.weight.numpy(), before - 0.1, rtol=1e-6)
    with lucid.amp.autocast("cpu", enabled=False):
        pass
    with pytest.raises(NotImplementedError, match="autocast: Lucid has no automatic mixed"):
        lucid.autocast(device_type="cuda", dtype=lucid.float16)
    lucid.backends.cuda.matmul.allow_tf32 = True  # accepted
    assert not t([1.0]).is_cuda


def test_pytorchs_legacy_tensor_of_a_shape_is_a_float32_tensor_of_that_shape():
    assert lucid.Tensor(2, 3).shape == (2, 3) and lucid.Tensor(2, 3).dtype == lucid.float32
    assert lucid.linspace(0, 1, steps=3).tolist() == [0.0, 0.5, 1.0]


def test_indexing_takes_a_range_and_tensor_slice_bounds():
    y_hat = t([[0.1, 0.3, 0.6], [0.3, 0.2, 0.5]])
    np.testing.assert_array_equal(y_hat[range(2), t([0, 2])].numpy(), [0.1, 0.5])  # d2l
    data = lucid.arange(10)
    i = lucid.randint(0, 5, (1,))[0]
    assert data[i:i + 3].tolist() == list(range(int(i), int(i) + 3))
    with pytest.raises(TypeError, match="slice bound .* is a Tensor"):
        data[t(1.0):3]


def test_a_scalar_tensor_takes_a_format_spec():
    assert f"{t(3.14159):.2f}" == "3.14" and f"{t(7):>3d}" == "  7"
    assert f"{t([1.0, 2.0])}" == str(t([1.0, 2.0]))


def test_size_survives_copy():
    import copy

    s = copy.deepcopy(lucid.zeros(2, 3).size)
    assert s == 6 and s() == (2, 3)


def test_size_call_gives_pytorchs_size_tuple():
    x = lucid.zeros(2, 3)
    assert x.size() == lucid.Size([2, 3]) == (2, 3) and x.shape == lucid.Size([2, 3])
    assert isinstance(x.size(), tuple) and x.size().numel() == 6
    assert repr(x.size()) == "lucid.Size([2, 3])"


def test_numpy_results_of_grad_and_data_are_plain_arrays():
    # PyTorch's methods stay on .grad / .data themselves: nothing computed from them leaks
    m = nn.Linear(3, 2)
    m(lucid.ones(1, 3, dtype=lucid.float32)).sum().backward()
    w, g = m.weight.data, m.weight.grad
    for out in (w * 2, g + 1, np.ones((1, 2), np.float32) @ w, np.sum(g, axis=0)):
        assert not hasattr(out, "zero_"), type(out)
    y = m(lucid.ones(1, 3, dtype=lucid.float32))
    assert type(y._data) is np.ndarray  # the engine keeps plain arrays; .data views them
    assert isinstance(y.data, np.ndarray) and np.shares_memory(y.data, y._data)


# --------------------------------------------------------------------------------------------
# .data and .grad on every tensor and both devices: PyTorch's idioms, NumPy float64 references

DEVICES = ["cpu", pytest.param("gpu", marks=[
    pytest.mark.filterwarnings("ignore"),  # MLX on a CPU says so once
    pytest.mark.skipif(importlib.util.find_spec("mlx") is None, reason="MLX not installed")])]


def _f64(x):
    return np.asarray(x.numpy() if isinstance(x, lucid.Tensor) else x, dtype=np.float64)


@pytest.mark.parametrize("device", DEVICES)
def test_data_of_any_tensor_takes_pytorchs_in_place_idioms(device):
    ref = np.array([[1.0, -2.0], [3.0, 0.5]])
    y = lucid.tensor(ref, device=device) * 2  # a tensor an op made, not a parameter
    np.testing.assert_allclose(y.data.norm().item(), np.linalg.norm(2 * ref))
    assert y.data.norm().device == device and y.data.norm(1).item() == 13.0
    y.data.add_(lucid.ones(2, 2, device=device), alpha=3)
    np.testing.assert_allclose(_f64(y), 2 * ref + 3)
    y.data.mul_(0.5).sub_(1)
    np.testing.assert_allclose(_f64(y), (2 * ref + 3) / 2 - 1)
    y.data.div_(2.0)
    np.testing.assert_allclose(_f64(y), ((2 * ref + 3) / 2 - 1) / 2)
    y.data.clamp_(min=-0.25, max=0.5)
    np.testing.assert_allclose(_f64(y), np.clip(((2 * ref + 3) / 2 - 1) / 2, -0.25, 0.5))
    y.data.copy_(ref[::-1])  # a NumPy source
    np.testing.assert_array_equal(_f64(y), ref[::-1])
    y.data.copy_(lucid.tensor(ref, device=device))  # a Tensor source
    np.testing.assert_array_equal(_f64(y), ref)
    y.data.fill_(7)
    np.testing.assert_array_equal(_f64(y), np.full((2, 2), 7.0))
    y.data.zero_()
    np.testing.assert_array_equal(_f64(y), np.zeros((2, 2)))
    assert y.dtype == lucid.float64 and y.device == device


@pytest.mark.parametrize("device", DEVICES)
def test_data_random_fills_follow_lucids_seed_on_both_devices(device):
    x = lucid.zeros(4, 5, device=device)
    lucid.manual_seed(3)
    x.data.normal_(1.0, 0.5)
    first = _f64(x)
    lucid.manual_seed(3)
    want = 1.0 + 0.5 * np.random.default_rng(3).standard_normal((4, 5))
    x.data.normal_(1.0, 0.5)
    np.testing.assert_array_equal(_f64(x), first)
    assert abs(first.mean() - 1.0) < 0.5 and first.shape == want.shape
    x.data.uniform_(-0.1, 0.1)
    assert np.all(np.abs(_f64(x)) <= 0.1) and x.device == device


@pytest.mark.parametrize("device", DEVICES)
def test_grad_takes_pytorchs_in_place_idioms_on_both_devices(device):
    w = lucid.tensor([1.0, 2.0, 3.0], requires_grad=True, device=device)
    (w * w).sum().backward()
    np.testing.assert_allclose(w.grad.norm().item(), np.linalg.norm([2.0, 4.0, 6.0]))
    assert w.grad.size() == (3,) and w.grad.numel() == 3 and w.grad.dim() == 1
    assert w.grad.data is w.grad
    w.grad.data.mul_(0.5)
    np.testing.assert_array_equal(_f64(w.grad.clone()), [1.0, 2.0, 3.0])
    w.grad.zero_()
    (w * w).sum().backward()  # accumulates into the zeroed gradient, as PyTorch does
    np.testing.assert_array_equal(np.array(w.grad), [2.0, 4.0, 6.0])
    with lucid.no_grad():
        w.data.add_(w.grad, alpha=-0.5)  # the word-language-model example's update
    np.testing.assert_array_equal(_f64(w), [0.0, 0.0, 0.0])


@pytest.mark.parametrize("device", DEVICES)
def test_data_changes_are_not_recorded_and_leave_gradients_alone(device):
    # PyTorch: .data is detached; writing through it is invisible to autograd
    x = lucid.tensor([1.0, 2.0], requires_grad=True, device=device)
    y = (x * 3).sum()
    version = x._version
    x.data.mul_(10)
    assert x._version == version and x.requires_grad
    y.backward()
    np.testing.assert_array_equal(np.array(x.grad), [3.0, 3.0])
    np.testing.assert_array_equal(_f64(x), [10.0, 20.0])


@pytest.mark.parametrize("device", DEVICES)
def test_data_assignment_and_item_writes_reach_the_tensor(device):
    x = lucid.zeros(3, device=device)
    x.data = lucid.tensor([1.0, 2.0, 3.0], device=device)  # PyTorch's x.data = other
    np.testing.assert_array_equal(_f64(x), [1.0, 2.0, 3.0])
    x.data[1] = 9.0
    np.testing.assert_array_equal(_f64(x), [1.0, 9.0, 3.0])
    x.data -= 1.0  # NumPy's in-place operator on the array
    np.testing.assert_array_equal(_f64(x), [0.0, 8.0, 2.0])
    other = "gpu" if device == "cpu" else "cpu"
    with pytest.raises(RuntimeError, match=rf"x is on '{device}' and y on '{other}'.*\.to"):
        x.data = lucid.zeros(3, device=other)


@pytest.mark.parametrize("device", DEVICES)
def test_parameter_data_idioms_on_both_devices(device):
    m = nn.Linear(3, 2).to(device)
    m.weight.data.fill_(0.5)
    m.bias.data.zero_()
    x_np = np.array([[1.0, 2.0, 3.0]], np.float32)
    m(lucid.tensor(x_np, device=device)).sum().backward()
    for p in m.parameters():
        p.data.add_(p.grad, alpha=-0.1)
        p.grad.zero_()
    np.testing.assert_allclose(_f64(m.weight), 0.5 - 0.1 * np.repeat(x_np, 2, 0), rtol=1e-6)
    np.testing.assert_allclose(_f64(m.bias), [-0.1, -0.1], rtol=1e-6)
    assert all(np.all(np.array(p.grad) == 0) for p in m.parameters())
    nn.init.normal_(m.weight.data, 0.0, 0.02)  # DCGAN's weights_init through .data
    assert m.weight.device == device and m.weight.dtype == lucid.float32


@pytest.mark.parametrize("device", DEVICES)
def test_numpy_methods_that_pytorch_spells_alike_refuse_or_follow_pytorch(device):
    x = lucid.tensor([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]], device=device)
    values, indices = x.data.max(1)  # PyTorch's (values, indices), as x.max(1)
    assert values.tolist() == [5.0, 6.0] and indices.tolist() == [1, 2]
    assert x.data.max(1)[1].tolist() == [1, 2]  # the classic output.data.max(1)[1]
    assert x.data.min(dim=0).indices.tolist() == [0, 1, 0]
    assert x.data.max(1, keepdim=True).values.shape == (2, 1)
    np.testing.assert_array_equal(np.array(x.data.max(axis=1)), [5.0, 6.0])  # NumPy's keyword
    if device == "cpu":  # NumPy's functions call the method with NumPy's keywords
        np.testing.assert_array_equal(np.max(x.data, 1), [5.0, 6.0])
    with pytest.raises(TypeError, match=r"std\(\).*ddof=1"):
        x.data.std()
    with pytest.raises(TypeError, match=r"var\(0,\).*ddof=0"):
        x.data.var(0)
    np.testing.assert_allclose(np.array(x.data.var(axis=0)), [2.25, 2.25, 2.25])  # NumPy's
    ref = np.array([[1.0, 5.0, 3.0], [4.0, 2.0, 6.0]])
    assert float(x.data.max()) == 6.0 and list(np.array(x.data.max(axis=1))) == [5.0, 6.0]
    np.testing.assert_allclose(float(x.data.std(ddof=1)), ref.std(ddof=1), rtol=1e-6)
    np.testing.assert_array_equal(np.array(x.data.transpose(0, 1)), ref.T)  # PyTorch's swap
    with pytest.raises(TypeError, match=r"repeat\(2, 1\).*lucid\.tile.*axis=0"):
        x.data.repeat(2, 1)
    with pytest.raises(TypeError, match=r"sort\(\).*in place.*\(values, indices\)"):
        x.data.sort()
    np.testing.assert_array_equal(np.array(x.data.repeat(2, axis=0)), ref.repeat(2, axis=0))
    np.testing.assert_array_equal(np.sort(x.data), np.sort(ref))  # NumPy's functions work
    assert x.data.sort(dim=1, descending=True).indices.tolist() == [[1, 2, 0], [2, 0, 1]]
    np.testing.assert_array_equal(np.array(np.nonzero(x.data > 2)), np.nonzero(ref > 2))
    assert _f64(x).tolist() == ref.tolist()  # none of these changed x


@pytest.mark.parametrize("device", DEVICES)
def test_tensor_methods_numpy_lacks_run_on_the_data_as_a_tensor(device):
    ref = np.array([[1.0, -2.0], [3.0, 4.0]])
    x = lucid.tensor(ref, device=device)
    out = x.data.cpu()  # the old idiom loss.data.cpu().numpy()
    assert isinstance(out, lucid.Tensor) and out.device == "cpu"
    np.testing.assert_array_equal(out.numpy(), ref)
    assert x.data.float().dtype == lucid.float32 and x.data.long().tolist() == [[1, -2], [3, 4]]
    np.testing.assert_array_equal(_f64(x.data.clamp(0, 1)), np.clip(ref, 0, 1))
    assert x.data.unsqueeze(0).shape == (1, 2, 2) and x.data.view(-1).shape == (4,)
    assert x.data.view(4, 1).device == device and x.data.flatten(0).shape == (4,)
    assert x.data.eq(x).all().item() is True
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        x.data.nothing  # noqa: B018


def test_backward_takes_pytorchs_gradient_keyword():
    # "A Gentle Introduction to torch.autograd"
    a = t([2.0, 3.0], requires_grad=True)
    b = t([6.0, 4.0], requires_grad=True)
    q = 3 * a**3 - b**2
    q.backward(gradient=t([1.0, 1.0]))
    assert (9 * a**2 == a.grad).all() and (-2 * b == b.grad).all()
    with pytest.raises(TypeError, match="both grad and gradient="):
        (a * 2).backward(t([1.0, 1.0]), gradient=t([1.0, 1.0]))


@pytest.mark.parametrize("device", DEVICES)
def test_equal_is_pytorchs_one_bool_and_eq_is_elementwise(device):
    a = lucid.tensor([1.0, 2.0], device=device)
    assert lucid.equal(a, lucid.tensor([1.0, 2.0], device=device)) is True
    assert a.equal(lucid.tensor([1.0, 3.0], device=device)) is False
    assert lucid.equal(a, lucid.tensor([[1.0, 2.0]], device=device)) is False  # shapes differ
    assert lucid.equal(lucid.tensor([np.nan]), lucid.tensor([np.nan])) is False
    assert lucid.eq(a, lucid.tensor([1.0, 3.0], device=device)).tolist() == [True, False]
    assert a.eq(lucid.tensor([1.0, 3.0], device=device)).tolist() == [True, False]
    assert (a == lucid.tensor([0.0, 2.0], device=device)).tolist() == [False, True]
    with pytest.raises(ValueError, match=r"lucid.equal\(a, b\) is one bool"):
        assert a == a


def test_optimizer_takes_frozen_parameters_and_skips_them():
    # PyTorch's fine-tuning: freeze everything, replace the head, optimise model.parameters()
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))
    for param in model.parameters():
        param.requires_grad = False
    model[2] = nn.Linear(8, 2)
    frozen = model[0].weight.numpy().copy()
    head = model[2].weight.numpy().copy()
    opt = lucid.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    model(lucid.ones(3, 4, dtype=lucid.float32)).sum().backward()
    opt.step()
    np.testing.assert_array_equal(model[0].weight.numpy(), frozen)
    assert not np.array_equal(model[2].weight.numpy(), head)
    with pytest.raises(IndexError, match="Sequential: index 5 out of range"):
        model[5] = nn.ReLU()
    with pytest.raises(ValueError, match="does not require grad"):
        lucid.optim.SGD([nn.Buffer(np.ones(2))], lr=0.1)


def test_samplers_take_a_generator():
    # makemore's g = torch.Generator().manual_seed(2147483647); torch.randn((27, 10), generator=g)
    draws = []
    for _ in range(2):
        g = lucid.Generator().manual_seed(2147483647)
        draws.append([lucid.randn((27, 10), generator=g).numpy(),
                      lucid.rand(3, generator=g).numpy(),
                      lucid.randint(0, 5, (4,), generator=g).numpy(),
                      lucid.bernoulli(0.5, size=(6,), generator=g).numpy(),
                      lucid.multinomial(t([0.2, 0.8]), 3, replacement=True, generator=g).numpy()])
        lucid.randn(5)  # the module's stream is a different one
    for a, b in zip(*draws):
        np.testing.assert_array_equal(a, b)


# --------------------------------------------------------------------------------------------
# the sweep of common spellings: each behaves as PyTorch's, or raises naming Lucid's


def test_where_with_a_condition_alone_gives_the_indices_as_pytorch():
    a = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
    rows, cols = lucid.where(t(a) > 1)
    want = np.nonzero(a > 1)
    assert rows.tolist() == want[0].tolist() and cols.tolist() == want[1].tolist()
    np.testing.assert_array_equal(lucid.where(t(a) > 1, t(a), 0.0).numpy(), np.where(a > 1, a, 0))
    with pytest.raises(TypeError, match=r"where\(cond, a, b\) takes both a and b"):
        lucid.where(t(a) > 1, t(a))


def test_norm_is_a_function_too():
    a = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
    np.testing.assert_allclose(lucid.norm(t(a), dim=1).numpy(), np.linalg.norm(a, axis=1))
    np.testing.assert_allclose(lucid.norm(t(a), 1).item(), np.abs(a).sum())
    np.testing.assert_allclose(t(a).norm(p="fro").item(), np.linalg.norm(a))


def test_reductions_take_pytorchs_dtype_keyword_and_cast_first():
    a = np.array([[1.5, 2.25], [3.0, 4.125]])
    s = t(a).sum(dtype=lucid.float32)
    assert s.dtype == lucid.float32 and s.item() == np.float32(a).sum()
    m = lucid.mean(t(a), dim=0, dtype=lucid.float32)
    assert m.dtype == lucid.float32
    np.testing.assert_allclose(m.numpy(), a.mean(0), rtol=1e-7)
    i = lucid.tensor([[1, 2], [3, 4]]).sum(1, dtype=lucid.float64)
    assert i.dtype == lucid.float64 and i.tolist() == [3.0, 7.0]
    p = lucid.softmax(t(a), dim=1, dtype=lucid.float32)
    e = np.exp(a - a.max(1, keepdims=True))
    np.testing.assert_allclose(p.numpy(), e / e.sum(1, keepdims=True), rtol=1e-6)
    assert p.dtype == lucid.float32 and t(a).cumsum(0, dtype=lucid.float32).dtype == lucid.float32


@pytest.mark.parametrize("device", DEVICES)
def test_sort_and_topk_give_named_tuples_and_pytorchs_order_of_ties(device):
    v = np.array([3.0, 1.0, 2.0, 1.0, 3.0])
    out = lucid.tensor(v, device=device).sort(descending=True)
    assert out.values.tolist() == [3.0, 3.0, 2.0, 1.0, 1.0]
    assert out.indices.tolist() == [0, 4, 2, 1, 3]  # equal values keep their order
    values, indices = lucid.sort(lucid.tensor(v, device=device))
    assert values.tolist() == sorted(v) and v[indices.numpy()].tolist() == sorted(v)
    top = lucid.topk(lucid.tensor(v, device=device), 2)
    assert top.values.tolist() == [3.0, 3.0] and top.indices.tolist() == [0, 4]
    b = lucid.tensor([True, False, True], device=device).sort(descending=True)
    assert b.values.tolist() == [True, True, False] and b.indices.tolist() == [0, 2, 1]


def test_squeeze_of_an_axis_that_is_not_one_raises_and_names_pytorchs_meaning():
    x = lucid.zeros(2, 3)
    with pytest.raises(ValueError, match=r"cannot squeeze axis 1.*PyTorch would hand the "
                                         r"tensor back unchanged.*if x.shape\[d\] == 1 else x"):
        x.squeeze(1)
    assert x[None].squeeze(0).shape == (2, 3) and lucid.zeros(2, 1).squeeze(-1).shape == (2,)


def test_clamp_takes_tensor_bounds_as_pytorch():
    a = np.array([[3.0, 1.0, 2.0], [0.5, 4.0, -1.0]])
    lo, hi = a[::-1].copy(), np.full((2, 3), 2.5)
    x = t(a, requires_grad=True)
    out = lucid.clamp(x, min=t(lo), max=t(hi))
    np.testing.assert_array_equal(out.numpy(), np.minimum(np.maximum(a, lo), hi))
    out.sum().backward()  # 1 where x is inside its bounds, 0 where clamped
    np.testing.assert_array_equal(x.grad, ((a > lo) & (a < hi)).astype(float))
    np.testing.assert_array_equal(t(a).clamp(min=t(lo)).numpy(), np.maximum(a, lo))


def test_unique_takes_pytorchs_sorted_argument():
    values, counts = lucid.unique(t([3.0, 1.0, 3.0, 2.0]), sorted=True, return_counts=True)
    assert values.tolist() == [1.0, 2.0, 3.0] and counts.tolist() == [1, 1, 2]
    assert lucid.unique(t([2.0, 1.0, 2.0]), True).tolist() == [1.0, 2.0]  # PyTorch's order


@pytest.mark.parametrize("device", DEVICES)
def test_add_takes_pytorchs_old_order_a_number_then_the_tensor(device):
    # older PyTorch examples: p.data.add_(-lr, p.grad.data); PyTorch 2 still takes it
    g = np.array([1.0, -2.0, 4.0])
    x = lucid.zeros(3, device=device)
    x.add_(-0.5, lucid.tensor(g, device=device))
    np.testing.assert_array_equal(_f64(x), -0.5 * g)
    x.data.add_(-0.5, lucid.tensor(g, device=device))
    np.testing.assert_array_equal(_f64(x), -1.0 * g)
    x.sub_(0.25, lucid.tensor(g, device=device))
    np.testing.assert_array_equal(_f64(x), -1.25 * g)


def test_pytorchs_names_asin_acos_atan_amax_amin_true_and_floor_divide():
    a = np.array([[-0.5, 0.25, 0.75], [0.1, -0.9, 0.3]])
    x = lucid.Tensor(a, requires_grad=True)
    for name, ref in (("asin", np.arcsin), ("acos", np.arccos), ("atan", np.arctan)):
        np.testing.assert_allclose(getattr(lucid, name)(x).numpy(), ref(a), rtol=1e-12)
        np.testing.assert_allclose(getattr(x, name)().numpy(), ref(a), rtol=1e-12)
    np.testing.assert_array_equal(lucid.amax(x, 1).numpy(), a.max(1))
    np.testing.assert_array_equal(x.amin(dim=0, keepdim=True).numpy(), a.min(0, keepdims=True))
    assert lucid.amax(x).item() == a.max() and lucid.amin(x, dim=(0, 1)).item() == a.min()
    lucid.amax(x, 1).sum().backward()  # the values carry the gradient
    np.testing.assert_array_equal(np.asarray(x.grad), (a == a.max(1, keepdims=True)) * 1.0)
    np.testing.assert_array_equal(lucid.true_divide(x, 2.0).numpy(), a / 2)
    np.testing.assert_array_equal(lucid.floor_divide(x, 0.25).numpy(), a // 0.25)

"""Convolution and pooling beyond the spec table: pixel-by-pixel loop references (values and
gradients), the adjoint identity of conv_transpose2d, max-pool tie routing, adaptive pooling,
the layers (shapes, init, repr, dtype/device), the seed 002 FLOPs example and the layouts the
fast paths rely on."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.nn import functional as F

RNG = np.random.default_rng(1234)


def rnd(*shape):
    return RNG.standard_normal(shape)


def _mlx():
    try:
        import mlx.core  # noqa: F401
    except ImportError:
        return False
    return True


needs_mlx = pytest.mark.skipif(not _mlx(), reason="MLX is not installed")


# -- loop references: one output pixel at a time ------------------------------------------------


def _pair(v):
    return (v, v) if isinstance(v, int) else tuple(v)


def loop_conv2d(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """y[n, o, i, j] = b[o] + sum_{c, u, v} w[o, c, u, v] · x[n, g·Cg + c, i·s + u·d - p, ...]."""
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    og = o // groups
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((n, o, ho, wo))
    for ni, oi, i, j in itertools.product(range(n), range(o), range(ho), range(wo)):
        g = oi // og
        total = 0.0 if b is None else b[oi]
        for ci, u, v in itertools.product(range(cg), range(kh), range(kw)):
            r, s = i * sh + u * dh - ph, j * sw + v * dw - pw
            if 0 <= r < h and 0 <= s < wd:
                total += w[oi, ci, u, v] * x[ni, g * cg + ci, r, s]
        y[ni, oi, i, j] = total
    return y


def loop_conv2d_grads(x, w, gy, stride=1, padding=0, dilation=1, groups=1):
    """dL/dx and dL/dw of sum(gy · conv2d(x, w)), by the same loops."""
    (sh, sw), (ph, pw), (dh, dw) = _pair(stride), _pair(padding), _pair(dilation)
    n, c, h, wd = x.shape
    o, cg, kh, kw = w.shape
    og = o // groups
    gx, gw = np.zeros_like(x), np.zeros_like(w)
    for ni, oi, i, j in itertools.product(*[range(s) for s in gy.shape]):
        g = oi // og
        for ci, u, v in itertools.product(range(cg), range(kh), range(kw)):
            r, s = i * sh + u * dh - ph, j * sw + v * dw - pw
            if 0 <= r < h and 0 <= s < wd:
                gx[ni, g * cg + ci, r, s] += w[oi, ci, u, v] * gy[ni, oi, i, j]
                gw[oi, ci, u, v] += x[ni, g * cg + ci, r, s] * gy[ni, oi, i, j]
    return gx, gw


def loop_pool2d(x, kernel, stride=None, padding=0, dilation=1, mode="max"):
    (kh, kw) = _pair(kernel)
    (sh, sw) = (kh, kw) if stride is None else _pair(stride)
    (ph, pw), (dh, dw) = _pair(padding), _pair(dilation)
    n, c, h, wd = x.shape
    ho = (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1
    wo = (wd + 2 * pw - dw * (kw - 1) - 1) // sw + 1
    y = np.zeros((n, c, ho, wo))
    for ni, ci, i, j in itertools.product(range(n), range(c), range(ho), range(wo)):
        vals = []
        for u, v in itertools.product(range(kh), range(kw)):
            r, s = i * sh + u * dh - ph, j * sw + v * dw - pw
            inside = 0 <= r < h and 0 <= s < wd
            vals.append(x[ni, ci, r, s] if inside else (-np.inf if mode == "max" else 0.0))
        y[ni, ci, i, j] = max(vals) if mode == "max" else sum(vals) / len(vals)
    return y


CONV_CASES = [
    dict(),
    dict(padding=1),
    dict(stride=2, padding=1),
    dict(stride=(2, 1), padding=(0, 2), dilation=(1, 2)),
    dict(padding=2, dilation=2),
    dict(stride=3, padding=1, groups=2),
    dict(padding=1, groups=4),
]


@pytest.mark.parametrize("kw", CONV_CASES, ids=[str(k) for k in CONV_CASES])
def test_conv2d_matches_a_pixel_loop_in_values_and_gradients(kw):
    groups = kw.get("groups", 1)
    x, w, b = rnd(2, 4, 7, 6), rnd(4, 4 // groups, 3, 2), rnd(4)
    xt, wt, bt = (lucid.Tensor(a, requires_grad=True) for a in (x, w, b))
    y = F.conv2d(xt, wt, bt, **kw)
    want = loop_conv2d(x, w, b, **kw)
    assert y.shape == want.shape
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-12, atol=1e-12)
    gy = rnd(*want.shape)
    (y * lucid.Tensor(gy)).sum().backward()
    gx, gw = loop_conv2d_grads(x, w, gy, **kw)
    np.testing.assert_allclose(xt.grad, gx, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(wt.grad, gw, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(bt.grad, gy.sum(axis=(0, 2, 3)), rtol=1e-12)


def test_conv2d_float32_matches_the_loop_and_stays_float32():
    x, w = rnd(2, 3, 9, 9).astype(np.float32), rnd(5, 3, 3, 3).astype(np.float32)
    y = F.conv2d(lucid.Tensor(x), lucid.Tensor(w), padding=1)
    assert y.dtype == lucid.Float32 and y.data.dtype == np.float32
    np.testing.assert_allclose(y.numpy(), loop_conv2d(x.astype(np.float64), w, padding=1),
                               rtol=1e-4, atol=1e-4)


ADJOINT_CASES = [
    dict(size=(6, 5)),
    dict(size=(7, 8), stride=2, padding=1),
    dict(size=(8, 7), stride=(3, 2), padding=(1, 0), dilation=(1, 2)),
    dict(size=(9, 9), stride=2, padding=2, dilation=2, groups=2),
]


@pytest.mark.parametrize("case", ADJOINT_CASES, ids=[str(c) for c in ADJOINT_CASES])
def test_conv_transpose2d_is_the_adjoint_of_conv2d(case):
    """<conv2d(x, w), y> = <x, conv_transpose2d(y, w)>, with output_padding chosen so that
    conv_transpose2d maps back onto x's size."""
    case = dict(case)
    size = case.pop("size")
    groups = case.get("groups", 1)
    stride, padding = _pair(case.get("stride", 1)), _pair(case.get("padding", 0))
    dilation = _pair(case.get("dilation", 1))
    x, w = rnd(2, 4, *size), rnd(6, 4 // groups, 3, 3)
    cy = F.conv2d(lucid.Tensor(x), lucid.Tensor(w), **case)
    y = rnd(*cy.shape)
    extra = tuple((s + 2 * p - d * 2 - 1) % st
                  for s, p, d, st in zip(size, padding, dilation, stride))
    ty = F.conv_transpose2d(lucid.Tensor(y), lucid.Tensor(w), output_padding=extra, **case)
    assert ty.shape == x.shape
    np.testing.assert_allclose(np.sum(cy.numpy() * y), np.sum(x * ty.numpy()), rtol=1e-12)


def test_conv_transpose2d_inverts_the_shape_of_a_strided_conv2d():
    x = lucid.random.rand((1, 3, 17, 16))
    down = nn.Conv2d(3, 8, 3, stride=2, padding=1, dtype=lucid.Float64)
    up = nn.ConvTranspose2d(8, 3, 3, stride=2, padding=1, output_padding=(0, 1),
                            dtype=lucid.Float64)
    assert up(down(x)).shape == x.shape


@pytest.mark.parametrize("kw", [
    dict(kernel=2), dict(kernel=3, stride=2, padding=1), dict(kernel=(2, 3), stride=1),
    dict(kernel=3, stride=2, padding=1, dilation=2),
], ids=lambda k: str(k))
def test_max_pool2d_matches_a_pixel_loop(kw):
    x = rnd(2, 3, 9, 8)
    k = kw.pop("kernel")
    y = F.max_pool2d(lucid.Tensor(x), k, **kw)
    np.testing.assert_array_equal(y.numpy(), loop_pool2d(x, k, mode="max", **kw))


@pytest.mark.parametrize("kw", [
    dict(kernel=2), dict(kernel=3, stride=2, padding=1), dict(kernel=(2, 3), stride=1),
], ids=lambda k: str(k))
def test_avg_pool2d_matches_a_pixel_loop(kw):
    x = rnd(2, 3, 9, 8)
    k = kw.pop("kernel")
    y = F.avg_pool2d(lucid.Tensor(x), k, **kw)
    np.testing.assert_allclose(y.numpy(), loop_pool2d(x, k, mode="avg", **kw), rtol=1e-12)


def test_max_pool_routes_a_tied_window_to_its_first_maximum():
    # each 2x2 window holds one value four times (ReLU's zeros make such ties common)
    x = lucid.Tensor(np.kron(np.array([[1.0, 2.0], [3.0, 0.0]]), np.ones((2, 2)))[None, None],
                     requires_grad=True)
    F.max_pool2d(x, 2).sum().backward()
    want = np.kron(np.ones((2, 2)), np.array([[1.0, 0.0], [0.0, 0.0]]))
    np.testing.assert_array_equal(x.grad[0, 0], want)


def test_max_pool_overlapping_windows_sum_their_gradients():
    x = lucid.Tensor(np.array([[[0.0, 5.0, 1.0, 2.0]]]), requires_grad=True)
    y = F.max_pool1d(x, 2, stride=1)  # windows (0,5) (5,1) (1,2): 5 wins twice
    np.testing.assert_array_equal(y.numpy(), [[[5.0, 5.0, 2.0]]])
    y.backward(np.array([[[1.0, 10.0, 100.0]]]))
    np.testing.assert_array_equal(x.grad, [[[0.0, 11.0, 0.0, 100.0]]])


def test_pool_gradients_with_many_channel_blocks():
    # large enough that NumPy's backward works through several blocks of channels
    x = rnd(8, 10, 128, 128).astype(np.float32)
    for fn, mode in ((F.max_pool2d, "max"), (F.avg_pool2d, "avg")):
        xt = lucid.Tensor(x, requires_grad=True)
        y = fn(xt, 2)
        g = rnd(*y.shape).astype(np.float32)
        y.backward(g)
        if mode == "max":
            win = x.reshape(8, 10, 64, 2, 64, 2).transpose(0, 1, 2, 4, 3, 5).reshape(
                8, 10, 64, 64, 4)
            arg = win.argmax(-1)
            want = np.zeros_like(win)
            np.put_along_axis(want, arg[..., None], g[..., None], axis=-1)
            want = want.reshape(8, 10, 64, 64, 2, 2).transpose(0, 1, 2, 4, 3, 5).reshape(
                x.shape)
        else:
            want = np.repeat(np.repeat(g / 4, 2, axis=2), 2, axis=3)
        np.testing.assert_allclose(xt.grad, want, rtol=1e-6)


# -- adaptive average pooling --------------------------------------------------------------------


def _adaptive_reference(x, oh, ow):
    n, c, h, w = x.shape
    y = np.zeros((n, c, oh, ow))
    for i, j in itertools.product(range(oh), range(ow)):
        r0, r1 = (i * h) // oh, -((-(i + 1) * h) // oh)
        c0, c1 = (j * w) // ow, -((-(j + 1) * w) // ow)
        y[:, :, i, j] = x[:, :, r0:r1, c0:c1].mean(axis=(2, 3))
    return y


@pytest.mark.parametrize("size,out", [((8, 6), (4, 3)), ((7, 5), (3, 2)), ((5, 5), 1),
                                      ((6, 9), (None, 4)), ((4, 4), (4, 4))])
def test_adaptive_avg_pool2d_matches_the_window_definition(size, out):
    x = rnd(2, 3, *size)
    y = F.adaptive_avg_pool2d(lucid.Tensor(x), out)
    oh, ow = (out, out) if isinstance(out, int) else out
    oh, ow = size[0] if oh is None else oh, size[1] if ow is None else ow
    np.testing.assert_allclose(y.numpy(), _adaptive_reference(x, oh, ow), rtol=1e-12)
    assert lucid.autograd.gradcheck(lambda t: F.adaptive_avg_pool2d(t, out),
                                    lucid.Tensor(x, requires_grad=True))


def test_adaptive_avg_pool2d_uses_the_pool_op_when_it_divides_and_matmul_otherwise():
    x = lucid.Tensor(rnd(1, 2, 8, 8), requires_grad=True)
    assert type(F.adaptive_avg_pool2d(x, 4)._op).name == "avg_pool"
    assert type(F.adaptive_avg_pool2d(x, 3)._op).name == "matmul"
    assert F.adaptive_avg_pool2d(lucid.Tensor(rnd(3, 7, 5)), 2).shape == (3, 2, 2)


def test_adaptive_avg_pool2d_errors():
    x = lucid.Tensor(rnd(1, 2, 4, 4))
    with pytest.raises(ValueError, match=r"^adaptive_avg_pool2d: output_size entries must be "
                                         r"positive ints or None, got \(0, 2\)$"):
        F.adaptive_avg_pool2d(x, (0, 2))
    with pytest.raises(TypeError, match=r"^adaptive_avg_pool2d: output_size must be an int or "
                                        r"an \(h, w\) pair"):
        F.adaptive_avg_pool2d(x, (1, 2, 3))
    with pytest.raises(ValueError, match=r"^adaptive_avg_pool2d: input of shape \(4,4\) has 2 "
                                         r"dimensions; expected 4"):
        F.adaptive_avg_pool2d(lucid.Tensor(rnd(4, 4)), 2)


# -- unfold ------------------------------------------------------------------------------------


def test_conv2d_is_a_matmul_with_unfold():
    x, w = rnd(2, 3, 6, 5), rnd(4, 3, 3, 2)
    y = F.conv2d(lucid.Tensor(x), lucid.Tensor(w), stride=(1, 2), padding=1)
    cols = F.unfold(lucid.Tensor(x), (3, 2), padding=1, stride=(1, 2))
    via = (lucid.Tensor(w.reshape(4, -1)) @ cols).reshape(y.shape)
    np.testing.assert_allclose(via.numpy(), y.numpy(), rtol=1e-12)


# -- layers --------------------------------------------------------------------------------------


def test_layers_have_pytorch_shaped_parameters_and_reprs():
    c = nn.Conv2d(3, 16, kernel_size=3, padding=1)
    assert c.weight.shape == (16, 3, 3, 3) and c.bias.shape == (16,)
    assert repr(c) == "Conv2d(3, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))"
    g = nn.Conv2d(4, 8, (3, 5), stride=2, dilation=(1, 2), groups=2, bias=False)
    assert g.weight.shape == (8, 2, 3, 5) and g.bias is None
    assert repr(g) == ("Conv2d(4, 8, kernel_size=(3, 5), stride=(2, 2), dilation=(1, 2), "
                       "groups=2, bias=False)")
    assert list(dict(g.named_parameters())) == ["weight"]
    assert list(c.state_dict()) == ["weight", "bias"]
    one = nn.Conv1d(2, 6, 5, padding="same")
    assert one.weight.shape == (6, 2, 5)
    assert repr(one) == "Conv1d(2, 6, kernel_size=(5,), stride=(1,), padding=same)"
    t = nn.ConvTranspose2d(8, 4, 3, stride=2, padding=1, output_padding=1, groups=2)
    assert t.weight.shape == (8, 2, 3, 3) and t.bias.shape == (4,)
    assert repr(t) == ("ConvTranspose2d(8, 4, kernel_size=(3, 3), stride=(2, 2), "
                       "padding=(1, 1), output_padding=(1, 1), groups=2)")
    assert repr(nn.MaxPool2d(2)) == "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1)"
    assert repr(nn.AvgPool1d(3, 2, 1)) == "AvgPool1d(kernel_size=3, stride=2, padding=1)"
    assert repr(nn.AdaptiveAvgPool2d((1, 1))) == "AdaptiveAvgPool2d(output_size=(1, 1))"


def test_conv_init_is_kaiming_uniform_a_sqrt5_and_seeded():
    lucid.random.seed(7)
    c = nn.Conv2d(16, 32, 3)
    bound = 1 / math.sqrt(16 * 9)  # gain sqrt(1/3) · sqrt(3) / sqrt(fan_in)
    w, b = c.weight.numpy(), c.bias.numpy()
    assert c.weight.dtype == lucid.Float32 and c.weight.requires_grad
    assert np.abs(w).max() <= bound and np.abs(b).max() <= bound
    np.testing.assert_allclose(w.std(), bound / math.sqrt(3), rtol=0.05)
    lucid.random.seed(7)
    np.testing.assert_array_equal(nn.Conv2d(16, 32, 3).weight.numpy(), w)
    t = nn.ConvTranspose2d(16, 8, 3, groups=2)  # fan_in = weight.shape[1]·k·k = 4·9
    assert np.abs(t.weight.numpy()).max() <= 1 / math.sqrt(4 * 9)


def test_layer_dtype_argument():
    c = nn.Conv2d(2, 3, 3, dtype=lucid.Float64)
    assert c.weight.dtype == lucid.Float64 and c.bias.dtype == lucid.Float64
    y = c(lucid.Tensor(rnd(1, 2, 5, 5)))
    assert y.dtype == lucid.Float64 and y.shape == (1, 3, 3, 3)


def test_layer_argument_errors():
    with pytest.raises(ValueError, match=r"^Conv2d: in_channels \(3\) must be divisible by "
                                         r"groups \(2\)$"):
        nn.Conv2d(3, 4, 3, groups=2)
    with pytest.raises(ValueError, match=r"^Conv2d: out_channels must be a positive int"):
        nn.Conv2d(3, 0, 3)
    with pytest.raises(ValueError, match=r"^Conv2d: kernel_size=\(3, 3, 3\) has 3 entries"):
        nn.Conv2d(3, 4, (3, 3, 3))
    with pytest.raises(ValueError, match=r"^ConvTranspose2d: padding='same' is not supported"):
        nn.ConvTranspose2d(3, 4, 3, padding="same")


def test_layers_train_a_small_cnn_step():
    lucid.random.seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
                          nn.Conv2d(4, 8, 3, padding=1), nn.ReLU(), nn.AvgPool2d(2),
                          nn.AdaptiveAvgPool2d(1))
    x = lucid.Tensor(rnd(4, 1, 8, 8).astype(np.float32))
    out = model(x)
    assert out.shape == (4, 8, 1, 1)
    out.sum().backward()
    for p in model.parameters():
        assert p.grad is not None and p.grad.shape == p.shape and p.grad.dtype == np.float32
        assert np.abs(p.grad).sum() > 0


def test_seed_002_flops_example():
    model = nn.Sequential(
        nn.Conv2d(3, 16, kernel_size=3, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 32, kernel_size=3, padding=1),
    )
    x = lucid.random.rand((1, 3, 32, 32))
    with lucid.count_flops():
        y = model(x)
    conv1 = 1 * 16 * 32 * 32 * 3 * 9  # N·Cout·prod(out)·Cin·prod(k) MACs
    conv2 = 1 * 32 * 32 * 32 * 16 * 9
    bias1, relu, bias2 = 16 * 32 * 32, 16 * 32 * 32, 32 * 32 * 32  # one per output element
    assert y.flops == conv1 + bias1 + relu + conv2 + bias2 == 5_226_496
    print(f"FLOPs(MACs): {y.flops:,}")


# -- layouts, devices, dtypes ---------------------------------------------------------------------


def test_conv_output_is_channels_first_batch_last_in_memory_and_feeds_the_next_layer():
    x = lucid.Tensor(rnd(4, 3, 6, 6).astype(np.float32))
    w1, w2 = (lucid.Tensor(rnd(5, 3, 3, 3).astype(np.float32)),
              lucid.Tensor(rnd(2, 5, 3, 3).astype(np.float32)))
    h = F.conv2d(x, w1, padding=1)
    assert h.shape == (4, 5, 6, 6)
    assert np.transpose(h.data, (1, 2, 3, 0)).flags.c_contiguous  # the (Cout, H, W, N) GEMM
    r = F.max_pool2d(F.relu(h), 2)  # elementwise ops and pooling keep that memory order
    assert np.transpose(r.data, (1, 2, 3, 0)).flags.c_contiguous
    y = F.conv2d(h, w2)
    want = loop_conv2d(loop_conv2d(x.numpy().astype(np.float64), w1.numpy(), padding=1),
                       w2.numpy())
    np.testing.assert_allclose(y.numpy(), want, rtol=1e-4, atol=1e-4)


def test_mixed_float64_input_and_float32_weight():
    x = lucid.random.rand((1, 3, 5, 5), requires_grad=True)  # Float64
    conv = nn.Conv2d(3, 2, 3)
    y = conv(x)
    assert y.dtype == lucid.Float64
    y.sum().backward()
    assert x.grad.dtype == np.float64 and conv.weight.grad.dtype == np.float32


@needs_mlx
def test_conv_layers_run_on_gpu_and_match_cpu():
    lucid.random.seed(3)
    model = nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.MaxPool2d(2),
                          nn.ConvTranspose2d(4, 2, 3, stride=2, padding=1, output_padding=1))
    x = rnd(2, 2, 6, 6).astype(np.float32)
    cpu = model(lucid.Tensor(x))
    cpu.sum().backward()
    grads = [p.grad.copy() for p in model.parameters()]
    for p in model.parameters():
        p.grad = None
    model.to("gpu")
    gpu = model(lucid.Tensor(x, device="gpu"))
    assert gpu.device == "gpu"
    gpu.sum().backward()
    np.testing.assert_allclose(gpu.numpy(), cpu.numpy(), rtol=1e-4, atol=1e-5)
    for p, want in zip(model.parameters(), grads):
        np.testing.assert_allclose(np.array(p.grad), want, rtol=1e-4, atol=1e-4)


def test_matches_pytorch_when_installed():
    torch = pytest.importorskip("torch")
    x, w, b = rnd(2, 4, 9, 8), rnd(6, 2, 3, 3), rnd(6)
    cases = [
        (lambda m, *a: m.conv2d(*a, stride=2, padding=1, dilation=1, groups=2), (x, w, b)),
        (lambda m, *a: m.conv_transpose2d(*a, stride=2, padding=1, output_padding=1, groups=2),
         (x, rnd(4, 3, 3, 3), rnd(6))),
        (lambda m, a: m.max_pool2d(a, 3, 2, 1), (x,)),
        (lambda m, a: m.avg_pool2d(a, 3, 2, 1), (x,)),
        (lambda m, a: m.adaptive_avg_pool2d(a, (4, 3)), (x,)),
        (lambda m, a: m.unfold(a, (2, 3), padding=1, stride=(2, 1)), (x,)),
    ]
    for fn, arrays in cases:
        ours = [lucid.Tensor(a, requires_grad=True) for a in arrays]
        theirs = [torch.tensor(a, requires_grad=True) for a in arrays]
        y, ty = fn(F, *ours), fn(torch.nn.functional, *theirs)
        np.testing.assert_allclose(y.numpy(), ty.detach().numpy(), rtol=1e-10, atol=1e-12)
        g = rnd(*y.shape)
        y.backward(g)
        ty.backward(torch.tensor(g))
        for a, ta in zip(ours, theirs):
            np.testing.assert_allclose(a.grad, ta.grad.numpy(), rtol=1e-10, atol=1e-12)


def test_conv_frees_its_columns_only_when_the_graph_is_released():
    """Backward drops conv's saved im2col columns early (before dcols is allocated) only on the
    last backward: with retain_graph=True a second backward still works and doubles the grads."""
    x = lucid.Tensor(rnd(2, 3, 5, 5), requires_grad=True)
    w = lucid.Tensor(rnd(4, 3, 3, 3), requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    loss = (y * y).sum()
    loss.backward(retain_graph=True)
    gx, gw = x.grad.copy(), w.grad.copy()
    assert "cols" in y._op.__dict__
    loss.backward()
    np.testing.assert_allclose(x.grad, 2 * gx, rtol=1e-12)
    np.testing.assert_allclose(w.grad, 2 * gw, rtol=1e-12)
    assert not y._op.__dict__  # released
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        loss.backward()

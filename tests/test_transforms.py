"""lucid.data.transforms against NumPy references (and PyTorch's interpolate / grid_sample,
which torchvision's tensor transforms call, when PyTorch is importable): values, layouts,
dtypes, devices, seeding through lucid.random, and error messages."""

from __future__ import annotations

import importlib.util
import math
import re

import numpy as np
import pytest

import lucid
from lucid.autograd import gradcheck
from lucid.data import transforms as T

HAS_MLX = importlib.util.find_spec("mlx") is not None
DEVICES = ["cpu", pytest.param("gpu", marks=pytest.mark.skipif(not HAS_MLX,
                                                              reason="MLX is not installed"))]
RNG = np.random.default_rng(5)


def _img(h=6, w=8, c=3, dtype=np.uint8):
    if dtype == np.uint8:
        return RNG.integers(0, 256, (h, w, c) if c else (h, w), dtype=np.uint8)
    return RNG.random((h, w, c) if c else (h, w)).astype(dtype)


# --------------------------------------------------------------------------------------------
# ToTensor, Normalize


def test_to_tensor_moves_channels_first_and_scales_uint8():
    img = _img(5, 7, 3)
    t = T.ToTensor()(img)
    assert t.dtype == lucid.Float32 and t.shape == (3, 5, 7) and t.device == "cpu"
    np.testing.assert_array_equal(t.numpy(), img.transpose(2, 0, 1).astype(np.float32) / 255)
    grey = T.ToTensor()(img[..., 0])
    assert grey.shape == (1, 5, 7)
    assert t.numpy().min() >= 0 and t.numpy().max() <= 1
    floats = RNG.random((4, 5, 2))                         # not uint8: values kept, as torchvision
    tf = T.ToTensor()(floats)
    assert tf.dtype == lucid.Float64
    np.testing.assert_array_equal(tf.numpy(), floats.transpose(2, 0, 1))


def test_to_tensor_errors():
    with pytest.raises(TypeError, match=re.escape("ToTensor: expects a NumPy image (H, W) or "
                                                  "(H, W, C), got Tensor (it is one already)")):
        T.ToTensor()(lucid.zeros(3, 4, 4))
    with pytest.raises(ValueError, match=re.escape("ToTensor: a NumPy image must be (H, W) or "
                                                   "(H, W, C), got shape (1, 2, 3, 4)")):
        T.ToTensor()(np.zeros((1, 2, 3, 4), np.uint8))


@pytest.mark.parametrize("device", DEVICES)
def test_normalize_per_channel(device):
    x = RNG.random((2, 3, 4, 5)).astype(np.float32)
    mean, std = (0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)
    out = T.Normalize(mean, std)(lucid.Tensor(x, device=device))
    assert out.device == device and out.dtype == lucid.Float32 and out.shape == x.shape
    ref = (x.astype(np.float64) - np.array(mean)[:, None, None]) / np.array(std)[:, None, None]
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-5, atol=1e-6)
    one = T.Normalize(0.5, 0.25)(lucid.Tensor(x, device=device))   # one value for all channels
    np.testing.assert_allclose(one.numpy(), (x - 0.5) / 0.25, rtol=1e-6)


def test_normalize_inplace_and_gradient():
    x = lucid.Tensor(RNG.random((3, 2, 2)).astype(np.float32))
    before = x.numpy().copy()
    out = T.Normalize((1.0, 2.0, 3.0), (2.0, 4.0, 8.0), inplace=True)(x)
    assert out is x
    np.testing.assert_allclose(x.numpy(), (before - [[[1]], [[2]], [[3]]]) / [[[2]], [[4]], [[8]]],
                               rtol=1e-6)
    xg = lucid.Tensor(RNG.random((3, 2, 2)), requires_grad=True)
    assert gradcheck(lambda t: T.Normalize((0.1, 0.2, 0.3), (0.5, 2.0, 3.0))(t), xg)


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: T.Normalize((0.5,), (0.5,))(np.zeros((1, 2, 2), np.float32)), TypeError,
     "Normalize: expects a Tensor (..., C, H, W), got ndarray; apply ToTensor() first"),
    (lambda: T.Normalize((0.5,), (0.5,))(lucid.zeros(2, 2)), ValueError,
     "Normalize: expects a Tensor image (..., C, H, W), got shape (2, 2)"),
    (lambda: T.Normalize((0.5,), (0.5,))(lucid.Tensor(np.zeros((1, 2, 2), np.uint8))),
     TypeError, "Normalize: expects a float Tensor, got UInt8"),
    (lambda: T.Normalize((0.5, 0.5), (0.5, 0.5))(lucid.zeros(3, 2, 2)), ValueError,
     "Normalize: mean has 2 values for an image of 3 channels (shape (3, 2, 2))"),
    (lambda: T.Normalize((0.5,), (0.0,)), ValueError,
     "Normalize: std (0.0,) contains a zero, which would divide by zero"),
])
def test_normalize_errors(call, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        call()


# --------------------------------------------------------------------------------------------
# Resize


def test_resize_size_semantics():
    img = _img(20, 30)
    assert T.Resize(10)(img).shape == (10, 15, 3)            # smaller edge -> 10
    assert T.Resize(7)(img).shape == (7, 10, 3)              # int(7 * 30 / 20) = int(10.5)
    assert T.Resize([7])(img).shape == (7, 10, 3)
    assert T.Resize(10)(img.transpose(1, 0, 2)).shape == (15, 10, 3)
    assert T.Resize((9, 4))(img).shape == (9, 4, 3)
    assert T.Resize(10, max_size=12)(img).shape == (8, 12, 3)   # long edge 15 > 12: 12, int(8)
    assert T.Resize(10, max_size=16)(img).shape == (10, 15, 3)
    t = lucid.Tensor(RNG.random((2, 3, 20, 30)).astype(np.float32))
    out = T.Resize(10)(t)
    assert out.shape == (2, 3, 10, 15) and out.dtype == lucid.Float32


def test_resize_bilinear_against_numpy_references():
    row = RNG.random(12)
    img = np.tile(row, (4, 1))                                # constant down the columns
    # upsampling (and any size without antialias): interpolation at the pixel centres,
    # source x = (i + 0.5) * in / out - 0.5, clamped to the image (np.interp clamps)
    for out_w, aa in ((30, True), (30, False), (5, False), (12, True)):
        src = (np.arange(out_w) + 0.5) * 12 / out_w - 0.5
        got = T.Resize((4, out_w), antialias=aa)(img)
        np.testing.assert_allclose(got, np.tile(np.interp(src, np.arange(12), row), (4, 1)),
                                   rtol=1e-12, atol=1e-12)
    # halving with antialias: a triangle twice as wide, weights 1/8, 3/8, 3/8, 1/8 around
    # the two covered pixels (renormalised at the border)
    got = T.Resize((4, 6))(img)[0]
    inner = [(row[2 * i - 1] + 3 * row[2 * i] + 3 * row[2 * i + 1] + row[2 * i + 2]) / 8
             for i in range(1, 5)]
    np.testing.assert_allclose(got[1:5], inner, rtol=1e-12)
    np.testing.assert_allclose(got[0], (3 * row[0] + 3 * row[1] + row[2]) / 7, rtol=1e-12)


def test_resize_keeps_integer_images_integer_and_nearest_copies_pixels():
    img = _img(9, 13)
    out = T.Resize((5, 6))(img)
    ref = T.Resize((5, 6))(img.astype(np.float64))
    assert out.dtype == np.uint8
    np.testing.assert_array_equal(out, np.clip(np.rint(ref), 0, 255).astype(np.uint8))
    near = T.Resize((4, 5), interpolation="nearest")(img)
    rows, cols = np.floor(np.arange(4) * 9 / 4).astype(int), np.floor(np.arange(5) * 13 / 5)
    np.testing.assert_array_equal(near, img[rows][:, cols.astype(int)])


@pytest.mark.parametrize("device", DEVICES)
def test_resize_on_a_tensor_keeps_device_and_dtype(device):
    x = RNG.random((3, 8, 10)).astype(np.float32)
    out = T.Resize((4, 5))(lucid.Tensor(x, device=device))
    assert out.device == device and out.dtype == lucid.Float32
    np.testing.assert_allclose(out.numpy(), T.Resize((4, 5))(x.transpose(1, 2, 0))
                               .transpose(2, 0, 1), rtol=1e-6)


def test_resize_matches_pytorch_interpolate():
    torch = pytest.importorskip("torch")
    x = RNG.random((2, 3, 13, 17))
    for size in ((5, 7), (26, 40), (6, 30), (13, 17)):
        for aa in (True, False):
            ref = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode="bilinear",
                                                  align_corners=False, antialias=aa).numpy()
            got = T.Resize(size, antialias=aa)(lucid.Tensor(x)).numpy()
            np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
        ref = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode="nearest")
        got = T.Resize(size, interpolation="nearest")(lucid.Tensor(x))
        np.testing.assert_array_equal(got.numpy(), ref.numpy())


@pytest.mark.parametrize("call,msg", [
    (lambda: T.Resize(0), "Resize: size must hold positive ints, got 0"),
    (lambda: T.Resize((1, 2, 3)),
     "Resize: size must be an int or a sequence (h, w), got (1, 2, 3)"),
    (lambda: T.Resize((4, 4), max_size=10), "Resize: max_size applies only when size is one "
                                             "number (the smaller edge), got size=(4, 4)"),
    (lambda: T.Resize(10, max_size=10), "Resize: max_size (10) must be an int larger than size"),
    (lambda: T.Resize(4, interpolation="bicubic"),
     "Resize: interpolation must be 'bilinear' or 'nearest', got 'bicubic'"),
])
def test_resize_errors(call, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        call()


# --------------------------------------------------------------------------------------------
# CenterCrop, RandomCrop


def test_center_crop_rounds_like_python_and_pads_small_images():
    img = _img(5, 6)
    # top = round((5 - 2) / 2) = round(1.5) = 2, left = round((6 - 3) / 2) = round(1.5) = 2
    np.testing.assert_array_equal(T.CenterCrop((2, 3))(img), img[2:4, 2:5])
    # 7 - 4 = 3: top = round(1.5) = 2 ... and 8 - 4 = 4: left = 2
    sq = _img(7, 8, 0)
    np.testing.assert_array_equal(T.CenterCrop(4)(sq), sq[2:6, 2:6])
    # larger than the image: zeros around it, the odd pixel at the bottom/right
    small = _img(3, 3)
    out = T.CenterCrop((6, 5))(small)
    assert out.shape == (6, 5, 3)
    np.testing.assert_array_equal(out[1:4, 1:4], small)
    mask = np.ones((6, 5), bool)
    mask[1:4, 1:4] = False
    assert np.all(out[mask] == 0)
    t = lucid.Tensor(img.transpose(2, 0, 1))
    np.testing.assert_array_equal(T.CenterCrop((2, 3))(t).numpy(), img[2:4, 2:5].transpose(2, 0, 1))


def test_random_crop_takes_the_window_lucid_random_draws():
    img = _img(10, 12)
    lucid.random.seed(4)
    outs = [T.RandomCrop((4, 5))(img) for _ in range(30)]
    lucid.random.seed(4)
    for out in outs:
        top = lucid.random.randint(0, 10 - 4 + 1).item()        # top first, then left
        left = lucid.random.randint(0, 12 - 5 + 1).item()
        np.testing.assert_array_equal(out, img[top:top + 4, left:left + 5])
    # every corner can come up
    lucid.random.seed(0)
    tops = {T.RandomCrop.get_params(10, 12, (8, 12))[0] for _ in range(200)}
    assert tops == {0, 1, 2}
    state = lucid.random.get_state()                           # a full-size crop draws nothing
    np.testing.assert_array_equal(T.RandomCrop((10, 12))(img), img)
    assert lucid.random.get_state() == state


@pytest.mark.parametrize("mode", ["constant", "edge", "reflect", "symmetric"])
def test_random_crop_padding_modes_match_numpy_pad(mode):
    img = _img(5, 6)
    size = (5 + 1 + 3, 6 + 2 + 4)                  # the whole padded image: the crop is all of it
    crop = T.RandomCrop(size, padding=(2, 1, 4, 3), padding_mode=mode, fill=(7, 8, 9))
    out = crop(img)
    widths = ((1, 3), (2, 4), (0, 0))
    if mode == "constant":
        ref = np.stack([np.pad(img[..., c], widths[:2], constant_values=v)
                        for c, v in enumerate((7, 8, 9))], axis=-1)
    else:
        ref = np.pad(img, widths, mode=mode)
    np.testing.assert_array_equal(out, ref)
    assert out.dtype == np.uint8


def test_random_crop_padding_forms_and_pad_if_needed():
    img = _img(4, 4, 0)
    assert T.RandomCrop(8, padding=2)(img).shape == (8, 8)
    out = T.RandomCrop((6, 8), padding=(2, 1))(img)         # left/right 2, top/bottom 1
    np.testing.assert_array_equal(out, np.pad(img, ((1, 1), (2, 2))))
    out = T.RandomCrop((8, 6), pad_if_needed=True, fill=5)(img)
    # each short side is padded by its whole shortfall on both ends, then cropped
    assert out.shape == (8, 6)
    lucid.random.seed(1)
    out = T.RandomCrop((8, 6), pad_if_needed=True, fill=5)(img)
    lucid.random.seed(1)
    top, left = lucid.random.randint(0, 5).item(), lucid.random.randint(0, 3).item()
    padded = np.pad(img, ((4, 4), (2, 2)), constant_values=5)
    np.testing.assert_array_equal(out, padded[top:top + 8, left:left + 6])


@pytest.mark.parametrize("call,exc,msg", [
    (lambda: T.RandomCrop(5)(_img(4, 8)), ValueError, "RandomCrop: the crop size (5, 5) (height, "
     "width) is larger than the image (4, 8); pass padding or pad_if_needed=True"),
    (lambda: T.RandomCrop(4, padding=4, padding_mode="reflect")(_img(4, 8)), ValueError,
     "RandomCrop: reflect padding must be smaller than the image side it extends: padding "
     "(left, top, right, bottom) = (4, 4, 4, 4) on an image of 4x8 (height x width)"),
    (lambda: T.RandomCrop(4, padding_mode="wrap"), ValueError,
     "RandomCrop: padding_mode must be 'constant', 'edge', 'reflect' or 'symmetric', got 'wrap'"),
    (lambda: T.RandomCrop(4, padding=-1), ValueError,
     "RandomCrop: padding must hold non-negative ints, got -1"),
    (lambda: T.RandomCrop(4, padding=(1, 2, 3)), ValueError,
     "RandomCrop: padding must be an int or a sequence of 1, 2 or 4 ints, got (1, 2, 3)"),
    (lambda: T.RandomCrop(4, padding=1, fill=300)(_img(4, 4)), ValueError,
     "RandomCrop: fill 300 is not a value of a uint8 image (integers 0..255)"),
    (lambda: T.RandomCrop(4, padding=1, fill=(1, 2))(_img(4, 4)), ValueError,
     "RandomCrop: fill must be a number or one value per channel (3), got (1, 2)"),
    (lambda: T.RandomCrop(4, fill="red"), TypeError,
     "RandomCrop: fill must be a number or a sequence of numbers (one per channel), got 'red'"),
    (lambda: T.RandomCrop(2)([[1, 2], [3, 4]]), TypeError,
     "RandomCrop: expected a NumPy image (H, W[, C]) or a Tensor (..., C, H, W), got list"),
    (lambda: T.RandomCrop(2)(np.zeros((1, 2, 3, 4))), ValueError,
     "RandomCrop: a NumPy image must be (H, W) or (H, W, C), got shape (1, 2, 3, 4)"),
    (lambda: T.RandomCrop(2)(lucid.zeros(3, 4, 4, requires_grad=True)), ValueError,
     "RandomCrop: the tensor requires grad; transforms prepare data outside the graph. "
     "Pass x.detach()"),
])
def test_crop_errors(call, exc, msg):
    with pytest.raises(exc, match=re.escape(msg)):
        call()


# --------------------------------------------------------------------------------------------
# RandomHorizontalFlip


@pytest.mark.parametrize("device", DEVICES)
def test_horizontal_flip_follows_lucid_random(device):
    img = _img(3, 5)
    t = lucid.Tensor(img.transpose(2, 0, 1), device=device)
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=1.0)(img), img[:, ::-1])
    np.testing.assert_array_equal(T.RandomHorizontalFlip(p=0.0)(img), img)
    flipped = T.RandomHorizontalFlip(p=1.0)(t)
    assert flipped.device == device and flipped.dtype == lucid.types.UInt8
    np.testing.assert_array_equal(flipped.numpy(), img[:, ::-1].transpose(2, 0, 1))
    lucid.random.seed(9)
    outs = [T.RandomHorizontalFlip(p=0.3)(img) for _ in range(40)]
    lucid.random.seed(9)
    flips = [lucid.random.rand().item() < 0.3 for _ in range(40)]
    for out, flip in zip(outs, flips):
        np.testing.assert_array_equal(out, img[:, ::-1] if flip else img)
    assert 0 < sum(flips) < 40


def test_horizontal_flip_errors():
    with pytest.raises(ValueError, match=re.escape("RandomHorizontalFlip: p must be a "
                                                   "probability in [0, 1], got 1.5")):
        T.RandomHorizontalFlip(1.5)


# --------------------------------------------------------------------------------------------
# RandomRotation


def test_rotation_by_quarter_and_half_turns_matches_numpy():
    sq = _img(6, 6)
    for mode in ("nearest", "bilinear"):
        quarter = T.RandomRotation((90, 90), interpolation=mode)(sq)       # counter-clockwise
        np.testing.assert_array_equal(quarter, np.rot90(sq, 1, axes=(0, 1)))
        half = T.RandomRotation((180, 180), interpolation=mode)(sq)
        np.testing.assert_array_equal(half, sq[::-1, ::-1])
        np.testing.assert_array_equal(T.RandomRotation(0, interpolation=mode)(sq), sq)
    odd = _img(5, 5, 0).astype(np.float64)
    np.testing.assert_allclose(T.RandomRotation((-90, -90), interpolation="bilinear")(odd),
                               np.rot90(odd, -1), atol=1e-12)


def test_rotation_fill_and_expand_sizes():
    img = np.full((4, 6, 3), 100, np.uint8)
    out = T.RandomRotation((90, 90), fill=(1, 2, 3))(img)
    # a 6-wide image turned upright in a 6-wide frame: one column on each side is outside
    assert np.all(out[:, 0] == [1, 2, 3]) and np.all(out[:, -1] == [1, 2, 3])
    assert np.all(out[:, 1:-1] == 100)
    assert T.RandomRotation((90, 90), expand=True)(img).shape == (6, 4, 3)
    # 45 degrees of a 10x10 square: half-diagonal 5 * sqrt(2) = 7.07 -> ceil(12.07) - floor(-2.07)
    assert T.RandomRotation((45, 45), expand=True)(_img(10, 10, 0)).shape == (16, 16)


def test_rotation_angle_comes_from_lucid_random():
    rot = T.RandomRotation(30)
    assert rot.degrees == (-30.0, 30.0)
    lucid.random.seed(11)
    angles = [rot.get_params() for _ in range(5)]
    lucid.random.seed(11)
    assert angles == [-30.0 + 60.0 * lucid.random.rand().item() for _ in range(5)]
    img = _img(8, 8)
    lucid.random.seed(11)
    a = [T.RandomRotation(30, interpolation="bilinear")(img) for _ in range(3)]
    lucid.random.seed(11)
    b = [T.RandomRotation(30, interpolation="bilinear")(img) for _ in range(3)]
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert not np.array_equal(a[0], a[1])


def _torchvision_rotate(torch, img, angle, mode, fill, center=None, expand_to=None):
    """torchvision's tensor rotation written out in torch ops (its grid, grid_sample, its
    fill blend), in float64 -- the reference for Lucid's NumPy version."""
    h, w = img.shape[-2:]
    oh, ow = expand_to or (h, w)
    cx, cy = (0.0, 0.0) if center is None else (center[0] - 0.5 * w, center[1] - 0.5 * h)
    rot = math.radians(-angle)                          # torchvision passes -angle
    a, b, c, d = math.cos(rot), -math.sin(rot), math.sin(rot), math.cos(rot)
    m = [d, -b, 0.0, -c, a, 0.0]
    m[2] += m[0] * -cx + m[1] * -cy + cx
    m[5] += m[3] * -cx + m[4] * -cy + cy
    theta = torch.tensor(m, dtype=torch.float64).reshape(1, 2, 3)
    base = torch.empty(1, oh, ow, 3, dtype=torch.float64)
    base[..., 0].copy_(torch.linspace(-ow * 0.5 + 0.5, ow * 0.5 - 0.5, ow, dtype=torch.float64))
    base[..., 1].copy_(torch.linspace(-oh * 0.5 + 0.5, oh * 0.5 - 0.5, oh,
                                      dtype=torch.float64).unsqueeze(-1))
    base[..., 2].fill_(1)
    scaled = theta.transpose(1, 2) / torch.tensor([0.5 * w, 0.5 * h], dtype=torch.float64)
    grid = base.view(1, oh * ow, 3).bmm(scaled).view(1, oh, ow, 2)
    x = torch.tensor(img, dtype=torch.float64)[None]
    x = torch.cat([x, torch.ones_like(x[:, :1])], 1)
    y = torch.nn.functional.grid_sample(x, grid, mode=mode, padding_mode="zeros",
                                        align_corners=False)
    mask, y = y[:, -1:].expand_as(y[:, :-1]), y[:, :-1]
    f = torch.tensor(fill, dtype=torch.float64).view(1, -1, 1, 1).expand_as(y)
    if mode == "nearest":
        y = torch.where(mask < 0.5, f, y)
    else:
        y = y * mask + (1 - mask) * f
    return y[0].numpy()


def test_rotation_matches_torchvisions_grid_sample_path():
    torch = pytest.importorskip("torch")
    x = RNG.random((3, 11, 14))
    fill = [0.1, 0.2, 0.3]
    for angle in (17.3, -45.0, 123.4, 90.0):
        for center in (None, (3.0, 4.5)):
            got = T.RandomRotation((angle, angle), interpolation="bilinear", center=center,
                                   fill=fill)(lucid.Tensor(x)).numpy()
            ref = _torchvision_rotate(torch, x, angle, "bilinear", fill, center)
            np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    # nearest, at angles where no source point falls exactly halfway between two pixels
    for angle in (17.3, 123.4, 180.0):
        got = T.RandomRotation((angle, angle), fill=fill)(lucid.Tensor(x)).numpy()
        np.testing.assert_array_equal(got, _torchvision_rotate(torch, x, angle, "nearest", fill))
    got = T.RandomRotation((17.3, 17.3), interpolation="bilinear", expand=True,
                           fill=fill)(lucid.Tensor(x)).numpy()
    assert got.shape == (3, 15, 18)
    np.testing.assert_allclose(got, _torchvision_rotate(torch, x, 17.3, "bilinear", fill,
                                                        expand_to=(15, 18)), atol=1e-12)


@pytest.mark.parametrize("call,msg", [
    (lambda: T.RandomRotation(-5), "RandomRotation: degrees given as one number must be >= 0 "
                                   "(it means the range (-degrees, degrees)), got -5"),
    (lambda: T.RandomRotation((10, -10)), "RandomRotation: degrees (min, max) must have "
                                          "min <= max, got (10, -10)"),
    (lambda: T.RandomRotation((1, 2, 3)), "RandomRotation: degrees must be a number or a "
                                          "sequence (min, max) in degrees, got (1, 2, 3)"),
    (lambda: T.RandomRotation(5, interpolation="bicubic"),
     "RandomRotation: interpolation must be 'nearest' or 'bilinear', got 'bicubic'"),
    (lambda: T.RandomRotation(5, center=3), "RandomRotation: center must be (x, y) in pixels"),
])
def test_rotation_errors(call, msg):
    with pytest.raises(ValueError, match=re.escape(msg)):
        call()


# --------------------------------------------------------------------------------------------
# Compose, Lambda, a whole pipeline


def test_compose_and_lambda_apply_in_order():
    tf = T.Compose([T.Lambda(lambda x: x + 1), T.Lambda(lambda x: x * 10)])
    assert tf(2) == 30
    assert "Lambda(<lambda>)" in repr(tf)
    with pytest.raises(TypeError, match=re.escape("Lambda: the argument must be callable, "
                                                  "got int")):
        T.Lambda(3)
    with pytest.raises(TypeError, match=re.escape("Compose: transform 1 (int) is not callable")):
        T.Compose([T.ToTensor(), 3])
    with pytest.raises(TypeError, match="Compose: transforms must be a list of callables"):
        T.Compose(T.ToTensor())


def test_a_seeded_augmentation_pipeline_repeats():
    img = _img(32, 32)
    tf = T.Compose([T.RandomCrop(32, padding=4), T.RandomHorizontalFlip(),
                    T.RandomRotation(10), T.ToTensor(),
                    T.Normalize((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616))])
    lucid.random.seed(21)
    first = [tf(img).numpy() for _ in range(4)]
    lucid.random.seed(21)
    again = [tf(img).numpy() for _ in range(4)]
    for a, b in zip(first, again):
        assert a.shape == (3, 32, 32) and a.dtype == np.float32
        np.testing.assert_array_equal(a, b)
    assert not np.array_equal(first[0], first[1])


def test_against_torchvision_functional_when_it_is_installed():
    # torchvision is not a test dependency; where it is installed, its tensor ops must agree
    pytest.importorskip("torch")
    TF = pytest.importorskip("torchvision.transforms.functional")
    import torch
    from torchvision.transforms import InterpolationMode

    x = RNG.random((3, 11, 14))
    tx, lx = torch.tensor(x), lucid.Tensor(x)
    for size in (7, (5, 9), (20, 30)):
        np.testing.assert_allclose(T.Resize(size)(lx).numpy(),
                                   TF.resize(tx, size, antialias=True).numpy(), atol=1e-12)
    for size in (4, (6, 9), (13, 17)):
        np.testing.assert_array_equal(T.CenterCrop(size)(lx).numpy(),
                                      TF.center_crop(tx, size).numpy())
    for mode in ("constant", "edge", "reflect", "symmetric"):
        crop = T.RandomCrop((11 + 1 + 3, 14 + 2 + 4), padding=(2, 1, 4, 3), padding_mode=mode)
        np.testing.assert_array_equal(crop(lx).numpy(),
                                      TF.pad(tx, [2, 1, 4, 3], padding_mode=mode).numpy())
    for angle in (17.3, -45.0, 123.4):
        got = T.RandomRotation((angle, angle), interpolation="bilinear", fill=[0.1, 0.2, 0.3])
        ref = TF.rotate(tx, angle, interpolation=InterpolationMode.BILINEAR,
                        fill=[0.1, 0.2, 0.3])
        np.testing.assert_allclose(got(lx).numpy(), ref.numpy(), atol=1e-12)
    np.testing.assert_array_equal(T.RandomHorizontalFlip(1.0)(lx).numpy(), TF.hflip(tx).numpy())

"""lucid.vision: torchvision's datasets (FakeData, MNIST/CIFAR10's signature), transforms and
utils.make_grid / save_image (PNG written with zlib + struct, read back here byte by byte)."""

from __future__ import annotations

import io
import struct
import zlib

import numpy as np
import pytest

import lucid
import lucid.vision
from lucid.utils.data import DataLoader
from lucid.vision import datasets, transforms, utils


def read_png(data: bytes) -> np.ndarray:
    """A minimal PNG reader (8-bit, filter 0 rows) checking every chunk's CRC."""
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, chunks = 8, []
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + body) & 0xFFFFFFFF
        chunks.append((kind, body))
        pos += 12 + n
    assert [k for k, _ in chunks] == [b"IHDR", b"IDAT", b"IEND"]
    w, h, depth, colour, *_ = struct.unpack(">IIBBBBB", chunks[0][1])
    c = {0: 1, 2: 3, 6: 4}[colour]
    rows = np.frombuffer(zlib.decompress(chunks[1][1]), np.uint8).reshape(h, 1 + w * c)
    assert depth == 8 and not rows[:, 0].any()
    return rows[:, 1:].reshape(h, w, c)


def test_make_grid_tiles_with_padding_as_torchvision():
    a = np.arange(8, dtype=np.float32).reshape(2, 1, 2, 2) / 10
    grid = utils.make_grid(lucid.Tensor(a), nrow=2, padding=1, pad_value=0.5)
    assert grid.shape == (3, 4, 7) and grid.dtype == lucid.Float32
    g = grid.numpy()
    expected = np.full((4, 7), 0.5, np.float32)
    expected[1:3, 1:3], expected[1:3, 4:6] = a[0, 0], a[1, 0]
    for ch in range(3):  # one channel shown as three
        np.testing.assert_allclose(g[ch], expected, rtol=1e-6)
    # three images, two per row: a second row, the empty cell left at pad_value
    three = utils.make_grid(lucid.Tensor(np.ones((3, 3, 2, 2))), nrow=2, padding=0)
    np.testing.assert_array_equal(three.numpy()[:, 2:, 2:], 0)
    assert utils.make_grid(lucid.Tensor(np.ones((1, 3, 5, 4)))).shape == (3, 5, 4)


def test_make_grid_normalize_and_errors():
    a = np.array([[[[-1.0, 1.0]]], [[[0.0, 3.0]]]])  # (2, 1, 1, 2)
    whole = utils.make_grid(lucid.Tensor(a), padding=0, normalize=True).numpy()[0]
    np.testing.assert_allclose(whole, [[0, 0.5, 0.25, 1]])
    each = utils.make_grid(lucid.Tensor(a), padding=0, normalize=True, scale_each=True)
    np.testing.assert_allclose(each.numpy()[0], [[0, 1, 0, 1]])
    ranged = utils.make_grid(lucid.Tensor(a), padding=0, normalize=True, value_range=(0, 2))
    np.testing.assert_allclose(ranged.numpy()[0], [[0, 0.5, 0, 1]])
    with pytest.raises(ValueError, match="make_grid: expects images"):
        utils.make_grid(lucid.Tensor(np.zeros((1, 1, 1, 2, 2))))
    with pytest.raises(ValueError, match="nrow"):
        utils.make_grid(lucid.Tensor(np.zeros((2, 3, 2, 2))), nrow=0)


def test_save_image_writes_the_pixels_torchvision_writes(tmp_path):
    rng = np.random.default_rng(0)
    batch = rng.random((4, 3, 5, 6))
    path = tmp_path / "grid.png"
    utils.save_image(lucid.Tensor(batch), path, nrow=2, padding=2)
    pixels = read_png(path.read_bytes())
    grid = utils.make_grid(lucid.Tensor(batch), nrow=2, padding=2).numpy()
    expected = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    np.testing.assert_array_equal(pixels, expected)
    assert pixels.shape == (2 * 7 + 2, 2 * 8 + 2, 3)
    assert [p.name for p in tmp_path.iterdir()] == ["grid.png"]  # no temporary file left
    buf = io.BytesIO()
    utils.save_image(lucid.Tensor(batch[0]), buf)
    np.testing.assert_array_equal(read_png(buf.getvalue()),
                                  np.clip(batch[0] * 255 + 0.5, 0, 255).astype(np.uint8)
                                  .transpose(1, 2, 0))
    with pytest.raises(ValueError, match="only PNG"):
        utils.save_image(lucid.Tensor(batch), tmp_path / "grid.jpg")


def test_save_image_failure_leaves_the_old_file(tmp_path):
    path = tmp_path / "keep.png"
    path.write_bytes(b"old")
    with pytest.raises(TypeError):
        utils.save_image("not a tensor", path)
    assert path.read_bytes() == b"old" and len(list(tmp_path.iterdir())) == 1


def test_fake_data_is_deterministic_per_index_and_feeds_a_pipeline():
    tf = transforms.Compose([transforms.ToTensor(), transforms.Normalize((0.5,), (0.5,))])
    ds = datasets.FakeData(size=10, image_size=(1, 6, 5), num_classes=4, transform=tf)
    x, y = ds[3]
    assert x.shape == (1, 6, 5) and x.dtype == lucid.Float32 and 0 <= y < 4
    raw = datasets.FakeData(size=10, image_size=(1, 6, 5), num_classes=4)[3][0]
    assert raw.dtype == np.uint8 and raw.shape == (6, 5)
    np.testing.assert_allclose(x.numpy()[0], (raw / 255 - 0.5) / 0.5, atol=1e-6)
    np.testing.assert_array_equal(ds[3][0].numpy(), x.numpy())
    shifted = datasets.FakeData(size=10, image_size=(1, 6, 5), random_offset=1)
    np.testing.assert_array_equal(shifted[2][0], datasets.FakeData(
        size=10, image_size=(1, 6, 5))[3][0])
    xb, yb = next(iter(DataLoader(ds, batch_size=4, num_workers=2)))
    assert xb.shape == (4, 1, 6, 5) and yb.dtype == lucid.Int64
    rgb = datasets.FakeData(size=2, image_size=(3, 4, 4))[0][0]
    assert rgb.shape == (4, 4, 3)
    with pytest.raises(ValueError, match="image_size"):
        datasets.FakeData(image_size=(4, 4))
    with pytest.raises(IndexError):
        ds[10]


def test_datasets_keep_torchvision_signatures():
    assert datasets.MNIST is lucid.data.datasets.MNIST
    assert datasets.CIFAR10 is lucid.data.datasets.CIFAR10
    assert lucid.vision.datasets.FashionMNIST is lucid.data.datasets.FashionMNIST


def test_new_transforms():
    img = np.arange(12, dtype=np.uint8).reshape(3, 4)
    np.testing.assert_array_equal(transforms.RandomVerticalFlip(p=1.0)(img), img[::-1])
    np.testing.assert_array_equal(transforms.RandomVerticalFlip(p=0.0)(img), img)
    padded = transforms.Pad((1, 2), fill=9)(img)
    assert padded.shape == (7, 6) and padded[0, 0] == 9 and padded[2, 1] == img[0, 0]
    rgb = np.stack([np.full((2, 2), 100), np.full((2, 2), 50), np.full((2, 2), 200)],
                   axis=-1).astype(np.uint8)
    grey = transforms.Grayscale()(rgb)
    assert grey.shape == (2, 2, 1)
    assert grey[0, 0, 0] == round(0.299 * 100 + 0.587 * 50 + 0.114 * 200)
    t = lucid.Tensor(np.moveaxis(rgb, -1, 0).astype(np.float32) / 255)
    assert transforms.Grayscale(3)(t).shape == (3, 2, 2)
    lucid.random.seed(0)
    crop = transforms.RandomResizedCrop(4)
    big = np.random.default_rng(0).integers(0, 255, (20, 30, 3), dtype=np.uint8)
    out = crop(big)
    assert out.shape == (4, 4, 3) and out.dtype == np.uint8
    lucid.random.seed(0)
    top, left, h, w = crop.get_params(20, 30)
    assert 0 < h <= 20 and 0 < w <= 30 and 0.08 * 600 * 0.7 <= h * w <= 600
    with pytest.raises(ValueError, match="scale"):
        transforms.RandomResizedCrop(4, scale=(0.5, 0.1))


def test_models_are_lucid_models_under_torchvision_names():
    m = lucid.vision.models.resnet18(num_classes=10)
    assert isinstance(m, lucid.vision.models.ResNet) and m.fc.weight.shape == (10, 512)
    keys = list(m.state_dict())
    assert keys[:2] == ["conv1.weight", "bn1.weight"] and keys[-2:] == ["fc.weight", "fc.bias"]
    assert lucid.vision.models.vgg11.__name__ == "vgg11"  # (a VGG is too big to build here)
    with pytest.raises(ValueError, match="resnet18: Lucid has no pretrained weights"):
        lucid.vision.models.resnet18(weights="IMAGENET1K_V1")
    with pytest.raises(ValueError, match="vgg16: .*load_state_dict"):
        lucid.vision.models.vgg16(pretrained=True)


def test_to_pil_image_gives_the_numpy_image_back():
    img = np.random.default_rng(1).integers(0, 256, (5, 4, 3), dtype=np.uint8)
    t = transforms.ToTensor()(img)
    np.testing.assert_array_equal(transforms.ToPILImage()(t), img)  # 255 * (v / 255) -> v
    grey = transforms.ToPILImage()(lucid.Tensor(np.full((1, 2, 2), 0.5, np.float32)))
    np.testing.assert_array_equal(grey, np.full((2, 2), 127, np.uint8))
    assert transforms.ToPILImage()(img) is img
    with pytest.raises(ValueError, match="mode 'RGB' needs 3 channels"):
        transforms.ToPILImage("RGB")(lucid.Tensor(np.zeros((1, 2, 2))))
    with pytest.raises(ValueError, match="1, 3 or 4 channels"):
        transforms.ToPILImage()(lucid.Tensor(np.zeros((2, 2, 2))))


def test_transforms_v2_to_image_and_to_dtype():
    from lucid.vision.transforms import v2

    img = np.arange(24, dtype=np.uint8).reshape(2, 4, 3)
    t = v2.ToImage()(img)
    assert t.shape == (3, 2, 4) and t.dtype == lucid.UInt8
    np.testing.assert_array_equal(t.numpy(), img.transpose(2, 0, 1))
    tf = v2.Compose([v2.ToImage(), v2.ToDtype(lucid.Float32, scale=True),
                     v2.Normalize((0.5, 0.5, 0.5), (0.5, 0.5, 0.5))])
    out = tf(img)
    assert out.dtype == lucid.Float32
    np.testing.assert_allclose(out.numpy(), (img.transpose(2, 0, 1) / 255 - 0.5) / 0.5,
                               atol=1e-6)
    np.testing.assert_array_equal(v2.ToDtype(lucid.Float32)(t).numpy(), t.numpy())
    assert v2.RandomHorizontalFlip is transforms.RandomHorizontalFlip
    with pytest.raises(TypeError, match="apply ToImage"):
        v2.ToDtype(lucid.Float32)(img)

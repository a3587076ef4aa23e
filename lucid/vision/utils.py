"""torchvision's ``utils.make_grid`` and ``utils.save_image``: a batch of images as one
picture, and that picture written as a PNG file.

    save_image(fake_images, "samples.png", nrow=8, normalize=True)

The PNG is written with the standard library alone (``zlib`` compresses the rows, ``struct``
packs the chunks; the format is in the PNG specification, RFC 2083), to a temporary file
renamed over the target, so an interrupted save never leaves half a picture.
"""

from __future__ import annotations

import math
import numbers
import os
import struct
import tempfile
import zlib
from collections.abc import Sequence
from typing import IO, Any

import numpy as np

from lucid.tensor import Tensor

__all__ = ["make_grid", "save_image", "png_bytes"]


def _as_batch(tensor: Any) -> tuple[np.ndarray, Any, str]:
    """``tensor`` (a Tensor or a list of Tensors) as a float64 array (B, C, H, W), with its
    dtype and device."""
    if isinstance(tensor, (list, tuple)):
        if not tensor or not all(isinstance(t, Tensor) for t in tensor):
            raise TypeError("make_grid: expects a Tensor or a non-empty list of Tensors")
        shapes = {t.shape for t in tensor}
        if len(shapes) > 1:
            raise ValueError(f"make_grid: the images have different shapes {sorted(shapes)}; "
                             "resize them to one shape first")
        dtype, device = tensor[0].dtype, tensor[0].device
        a = np.stack([t.numpy() for t in tensor])
    elif isinstance(tensor, Tensor):
        dtype, device, a = tensor.dtype, tensor.device, tensor.numpy()
    else:
        raise TypeError(f"make_grid: expects a Tensor (B, C, H, W) or a list of Tensors, got "
                        f"{type(tensor).__name__}")
    if a.ndim == 2:  # one single-channel image
        a = a[None]
    if a.ndim == 3:  # one image (C, H, W)
        a = a[None]
    if a.ndim != 4:
        raise ValueError(f"make_grid: expects images (B, C, H, W), (C, H, W) or (H, W), got "
                         f"shape {tuple(a.shape)}")
    if a.shape[1] == 1:  # single-channel images are shown as grey RGB, as torchvision
        a = np.repeat(a, 3, axis=1)
    return a.astype(np.float64), dtype, device


def _normalize(a: np.ndarray, value_range: Sequence[float] | None) -> np.ndarray:
    """Map ``value_range`` (default: the array's min and max) to [0, 1], clipping."""
    low, high = (float(a.min()), float(a.max())) if value_range is None else value_range
    return (np.clip(a, low, high) - low) / max(high - low, 1e-5)


def make_grid(tensor: Any, nrow: int = 8, padding: int = 2, normalize: bool = False,
              value_range: Sequence[float] | None = None, scale_each: bool = False,
              pad_value: float = 0.0) -> Tensor:
    """Tile a batch of images ``(B, C, H, W)`` into one image ``(C, H', W')``.

    ``nrow`` images per row, ``padding`` pixels of ``pad_value`` around each;
    ``normalize=True`` maps ``value_range`` (default: the batch's min and max; with
    ``scale_each``, each image's own) to [0, 1].  Single-channel images become 3 grey
    channels; a batch of one image comes back without the grid (torchvision's rules).
    """
    if isinstance(nrow, bool) or not isinstance(nrow, numbers.Integral) or nrow < 1:
        raise ValueError(f"make_grid: nrow must be an int >= 1, got {nrow!r}")
    if isinstance(padding, bool) or not isinstance(padding, numbers.Integral) or padding < 0:
        raise ValueError(f"make_grid: padding must be an int >= 0, got {padding!r}")
    a, dtype, device = _as_batch(tensor)
    if normalize:
        a = (np.stack([_normalize(img, value_range) for img in a]) if scale_each
             else _normalize(a, value_range))
    if a.shape[0] == 1:
        return Tensor(a[0], dtype=dtype, device=device)
    b, c, h, w = a.shape
    cols = min(nrow, b)
    rows = math.ceil(b / cols)
    cell_h, cell_w = h + padding, w + padding
    grid = np.full((c, rows * cell_h + padding, cols * cell_w + padding), pad_value,
                   dtype=np.float64)
    for k in range(b):
        top, left = (k // cols) * cell_h + padding, (k % cols) * cell_w + padding
        grid[:, top:top + h, left:left + w] = a[k]
    return Tensor(grid, dtype=dtype, device=device)


def png_bytes(pixels: np.ndarray) -> bytes:
    """A PNG file holding ``pixels``, uint8 ``(H, W)`` (grey), ``(H, W, 3)`` (RGB) or
    ``(H, W, 4)`` (RGBA).

    A PNG is an 8-byte signature and chunks (length, type, data, CRC-32 of type + data):
    ``IHDR`` (size, bit depth 8, colour type), ``IDAT`` (the rows, each led by a filter byte
    0 = "none", compressed with zlib) and ``IEND``.
    """
    if pixels.dtype != np.uint8:
        raise TypeError(f"png_bytes: expects uint8 pixels, got {pixels.dtype}")
    if pixels.ndim == 2:
        pixels = pixels[:, :, None]
    if pixels.ndim != 3 or pixels.shape[2] not in (1, 3, 4):
        raise ValueError(f"png_bytes: expects (H, W), (H, W, 3) or (H, W, 4) pixels, got "
                         f"shape {pixels.shape}")
    h, w, c = pixels.shape
    colour_type = {1: 0, 3: 2, 4: 6}[c]  # grey, RGB, RGBA

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    rows = np.concatenate([np.zeros((h, 1), np.uint8), pixels.reshape(h, w * c)], axis=1)
    header = struct.pack(">IIBBBBB", w, h, 8, colour_type, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header)
            + chunk(b"IDAT", zlib.compress(rows.tobytes(), 6)) + chunk(b"IEND", b""))


def save_image(tensor: Any, fp: str | os.PathLike | IO[bytes], format: str | None = None,
               **kwargs: Any) -> None:
    """Write ``tensor`` (images in [0, 1]: a batch, one image, or a list) as a PNG.

    The batch is tiled by :func:`make_grid` (``nrow``, ``padding``, ``normalize``, ...
    pass through), scaled to bytes as torchvision does (``x * 255 + 0.5``, clipped, truncated)
    and written to ``fp``: a path (replaced atomically) or a binary file object.
    """
    if format is not None and format.lower() != "png":
        raise ValueError(f"save_image: only PNG is written (no image library is needed for "
                         f"it), got format={format!r}")
    if isinstance(fp, (str, os.PathLike)) and os.path.splitext(os.fspath(fp))[1].lower() not in (
            ".png", ""):
        raise ValueError(f"save_image: {os.fspath(fp)!r}: only PNG files are written; name the "
                         "file *.png")
    grid = make_grid(tensor, **kwargs).numpy().astype(np.float64)
    pixels = np.clip(grid * 255 + 0.5, 0, 255).astype(np.uint8).transpose(1, 2, 0)
    data = png_bytes(pixels)
    if not isinstance(fp, (str, os.PathLike)):
        fp.write(data)
        return
    path = os.fspath(fp)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(dir=folder, prefix=".tmp-", suffix=".png")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise

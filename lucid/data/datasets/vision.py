"""Image datasets: MNIST, Fashion-MNIST and CIFAR-10, read from their original files.

Each has torchvision's signature and attributes::

    train = MNIST("~/data", train=True, download=True, transform=transforms.ToTensor())
    image, label = train[0]             # transform(uint8 array (28, 28)), an int
    loader = DataLoader(train, batch_size=64, shuffle=True)   # (64, 1, 28, 28), (64,)

* ``root`` is the cache folder: MNIST keeps its four ``.gz`` files in ``root/MNIST/raw/`` (the
  layout torchvision uses, so a folder torchvision filled works here too), CIFAR-10 its
  batches in ``root/cifar-10-batches-py/`` and the archive they come from in ``root``.
* ``download=True`` fetches what is missing from the class's ``mirrors`` (a list of base URLs;
  change it to use another server), checks every file's MD5 checksum, and writes each file
  atomically.  Files already there and intact are used as they are: no request is made.
* Without the internet, copy the files into the folder; the error message says which ones.

Where Lucid differs from torchvision: a sample's image is the raw uint8 NumPy array
(``(H, W)`` for MNIST, ``(H, W, 3)`` for CIFAR-10) where torchvision makes a PIL image of
it; :mod:`lucid.data.transforms` takes these arrays as torchvision's take PIL images.  MNIST
fetches only the two files of the split asked for.
"""

from __future__ import annotations

import gzip
import math
import os
import struct
import tarfile
import zlib
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from lucid.data.dataset import Dataset, _check_index
from lucid.data.datasets.batch_reader import read_batch
from lucid.data.datasets.download import ensure_files, md5sum, save_checked
from lucid.tensor import Tensor
from lucid.types import Int64, UInt8

__all__ = ["MNIST", "FashionMNIST", "CIFAR10", "read_idx"]


# --------------------------------------------------------------------------------------------
# the IDX format (MNIST's): a magic number, the sizes, the values -- big-endian throughout

#: IDX type codes (the third byte of the magic number) and the values they stand for
_IDX_TYPES = {0x08: ">u1", 0x09: ">i1", 0x0B: ">i2", 0x0C: ">i4", 0x0D: ">f4", 0x0E: ">f8"}


def read_idx(path: str | os.PathLike) -> np.ndarray:
    """The array in an IDX file (gzip-compressed when its name ends in ``.gz``).

    The file is ``0x00 0x00 <type> <ndim>``, then ``ndim`` sizes as big-endian uint32, then
    the values in C order: ``0x08`` unsigned bytes (MNIST's images and labels), ``0x09``
    signed bytes, ``0x0B``/``0x0C`` 16/32-bit ints, ``0x0D``/``0x0E`` 32/64-bit floats.

    The header is read first and the size it declares is checked before the values are read:
    against the file's size, or -- compressed -- against the most a gzip stream of that size
    can inflate to, and then while inflating (a small .gz that inflates to gigabytes is refused
    once it passes the declared size, never read whole).
    """
    path = Path(path)
    try:
        if path.suffix == ".gz":
            with gzip.open(path, "rb") as f:
                return _read_idx(path, f, _MAX_INFLATION * path.stat().st_size)
        with open(path, "rb") as f:
            return _read_idx(path, f, path.stat().st_size)
    except (OSError, EOFError, zlib.error) as exc:
        raise ValueError(f"read_idx: {path} is not a readable gzip file ({exc})") from None


#: deflate's best compression ratio is about 1032:1; a .gz file of n bytes inflates to less
#: than this many times n
_MAX_INFLATION = 1100
#: how much is read (and inflated) at a time
_CHUNK = 1 << 20


def _read_idx(path: Path, f: Any, most: int) -> np.ndarray:
    """The IDX array read from ``f``, a stream of at most ``most`` bytes."""
    magic = f.read(4)
    if len(magic) < 4 or magic[0] != 0 or magic[1] != 0 or magic[2] not in _IDX_TYPES:
        raise ValueError(f"read_idx: {path} is not an IDX file (its first bytes are "
                         f"{magic[:4].hex(' ')}, expected 00 00 <type> <ndim>)")
    dtype, ndim = np.dtype(_IDX_TYPES[magic[2]]), magic[3]
    sizes = f.read(4 * ndim)
    if len(sizes) < 4 * ndim:
        raise ValueError(f"read_idx: {path} ends inside its header")
    shape = struct.unpack(f">{ndim}I", sizes)
    expected = math.prod(shape) * dtype.itemsize
    if expected > most:
        raise ValueError(f"read_idx: {path} declares shape {shape} ({expected} bytes of values), "
                         f"more than a file of {path.stat().st_size} bytes can hold")
    body = _read_at_most(f, expected + 1)  # one byte more: is there anything after the values?
    if len(body) != expected:
        held = f"{len(body)} bytes" if len(body) < expected else "more bytes"
        raise ValueError(f"read_idx: {path} declares shape {shape} ({expected} bytes of "
                         f"values) but holds {held} after its header")
    values = np.frombuffer(body, dtype=dtype).reshape(shape)
    return values.astype(dtype.newbyteorder("="))  # native byte order, and a writable copy


def _read_at_most(f: Any, n: int) -> bytes:
    """Up to ``n`` bytes of ``f``, read (and inflated) a chunk at a time, never more."""
    parts, left = [], n
    while left:
        part = f.read(min(left, _CHUNK))
        if not part:
            break
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


# --------------------------------------------------------------------------------------------
# what the three datasets share


class _VisionDataset(Dataset):
    """``(root, train, transform, target_transform)``, checked; items through the transforms."""

    classes: list[str] = []

    def __init__(self, root: str | os.PathLike, train: bool, transform: Callable | None,
                 target_transform: Callable | None) -> None:
        who = type(self).__name__
        if not isinstance(root, (str, os.PathLike)):
            raise TypeError(f"{who}: root must be a folder path (str or pathlib.Path), got "
                            f"{type(root).__name__}")
        if not isinstance(train, (bool, np.bool_)):
            raise TypeError(f"{who}: train must be True or False, got {train!r}")
        for name, fn in (("transform", transform), ("target_transform", target_transform)):
            if fn is not None and not callable(fn):
                raise TypeError(f"{who}: {name} must be callable or None, got "
                                f"{type(fn).__name__}")
        self.root = os.path.expanduser(os.fspath(root))
        self.train = bool(train)
        self.transform = transform
        self.target_transform = target_transform

    @property
    def class_to_idx(self) -> dict[str, int]:
        return {name: i for i, name in enumerate(self.classes)}

    def _image(self, i: int) -> np.ndarray:
        raise NotImplementedError

    def _target(self, i: int) -> int:
        raise NotImplementedError

    def __getitem__(self, index: int) -> tuple[Any, Any]:
        """``(transform(image), target_transform(label))``; the image a fresh uint8 array."""
        i = _check_index(index, len(self), type(self).__name__)
        image, target = self._image(i), self._target(i)
        if self.transform is not None:
            image = self.transform(image)
        if self.target_transform is not None:
            target = self.target_transform(target)
        return image, target

    def __repr__(self) -> str:
        split = "train" if self.train else "test"
        lines = [f"{type(self).__name__}({split} split, {len(self)} samples, "
                 f"{len(self.classes)} classes, root={self.root!r})"]
        if self.transform is not None:
            lines.append(f"  transform: {self.transform!r}")
        if self.target_transform is not None:
            lines.append(f"  target_transform: {self.target_transform!r}")
        return "\n".join(lines)


def _check_labels(who: str, labels: np.ndarray, n_classes: int, where: str) -> None:
    if labels.size and (labels.min() < 0 or labels.max() >= n_classes):
        raise ValueError(f"{who}: {where} holds label {int(labels.max())} (or a negative one); "
                         f"labels must lie in 0..{n_classes - 1}")


# --------------------------------------------------------------------------------------------
# MNIST and Fashion-MNIST


class MNIST(_VisionDataset):
    """The MNIST handwritten digits: 60,000 training and 10,000 test images, 28x28 grey.

    ``MNIST(root, train=True, transform=None, target_transform=None, download=False)``

    * ``ds[i]`` is ``(image, label)``: the image a uint8 array of shape (28, 28) (0 = black
      background, 255 = ink) passed through ``transform``; the label an int 0..9 passed
      through ``target_transform``.
    * ``ds.data`` holds all images as one UInt8 Tensor (N, 28, 28), ``ds.targets`` the labels
      as an Int64 Tensor (N,), ``ds.classes`` their names -- as torchvision.
    * The files are ``root/MNIST/raw/{train,t10k}-{images-idx3,labels-idx1}-ubyte.gz``, in
      the IDX format (see :func:`read_idx`).
    """

    # The S3 copy first: yann.lecun.com has answered downloads with errors since 2023.
    mirrors = [
        "https://ossci-datasets.s3.amazonaws.com/mnist/",
        "http://yann.lecun.com/exdb/mnist/",
    ]
    resources = [
        ("train-images-idx3-ubyte.gz", "f68b3c2dcbeaaa9fbdd348bbdeb94873"),
        ("train-labels-idx1-ubyte.gz", "d53e105ee54ea40749a09fcbcd1e9432"),
        ("t10k-images-idx3-ubyte.gz", "9fb629c4189551a2d022fa330f9573f3"),
        ("t10k-labels-idx1-ubyte.gz", "ec29112dd5afa0611ce80d1b7f02629c"),
    ]
    classes = ["0 - zero", "1 - one", "2 - two", "3 - three", "4 - four", "5 - five",
               "6 - six", "7 - seven", "8 - eight", "9 - nine"]

    def __init__(self, root: str | os.PathLike, train: bool = True,
                 transform: Callable | None = None, target_transform: Callable | None = None,
                 download: bool = False) -> None:
        super().__init__(root, train, transform, target_transform)
        who = type(self).__name__
        prefix = "train" if self.train else "t10k"
        files = [(name, md5) for name, md5 in self.resources if name.startswith(prefix)]
        images_path, labels_path = ensure_files(
            who, self.raw_folder, files, self.mirrors, download,
            how_to_get=f"they are at {self.mirrors[0]}<name>" if self.mirrors else "")
        images, labels = read_idx(images_path), read_idx(labels_path)
        if images.ndim != 3 or images.dtype != np.uint8:
            raise ValueError(f"{who}: {images_path} holds a {images.dtype} array of shape "
                             f"{images.shape}, expected uint8 images (N, H, W)")
        if labels.ndim != 1 or labels.shape[0] != images.shape[0]:
            raise ValueError(f"{who}: {labels_path} holds {labels.shape} labels for "
                             f"{images.shape[0]} images; expected one label per image")
        _check_labels(who, labels, len(self.classes), str(labels_path))
        self.data = Tensor(images, dtype=UInt8)
        self.targets = Tensor(labels, dtype=Int64)

    @property
    def raw_folder(self) -> str:
        """Where the files are: ``root/<class name>/raw`` (torchvision's layout)."""
        return os.path.join(self.root, type(self).__name__, "raw")

    def __len__(self) -> int:
        return self.data.shape[0]

    def _image(self, i: int) -> np.ndarray:
        return self.data.numpy()[i].copy()

    def _target(self, i: int) -> int:
        return int(self.targets.numpy()[i])


class FashionMNIST(MNIST):
    """Fashion-MNIST: Zalando's 28x28 grey images of clothes, in MNIST's format and sizes.

    Same signature, attributes and files as :class:`MNIST`, in ``root/FashionMNIST/raw``.
    """

    mirrors = ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    resources = [
        ("train-images-idx3-ubyte.gz", "8d4fb7e6c68d591d4c3dfef9ec88bf0d"),
        ("train-labels-idx1-ubyte.gz", "25c81989df183df01b3e8a0aad5dffbe"),
        ("t10k-images-idx3-ubyte.gz", "bef4ecab320f06d8554ea6380940ec79"),
        ("t10k-labels-idx1-ubyte.gz", "bb300cfdad3c16e7a12a480ee83cd310"),
    ]
    classes = ["T-shirt/top", "Trouser", "Pullover", "Dress", "Coat", "Sandal", "Shirt",
               "Sneaker", "Bag", "Ankle boot"]


# --------------------------------------------------------------------------------------------
# CIFAR-10


class CIFAR10(_VisionDataset):
    """CIFAR-10: 50,000 training and 10,000 test colour images, 32x32, in ten classes.

    ``CIFAR10(root, train=True, transform=None, target_transform=None, download=False)``

    * ``ds[i]`` is ``(image, label)``: the image a uint8 array (32, 32, 3) (height, width,
      RGB) passed through ``transform``; the label an int 0..9.
    * ``ds.data`` is a uint8 NumPy array (N, 32, 32, 3), ``ds.targets`` a list of ints,
      ``ds.classes`` the names from ``batches.meta`` -- as torchvision.
    * The files are the "python version": ``root/cifar-10-python.tar.gz`` (the archive) and
      what it holds, ``root/cifar-10-batches-py/{data_batch_1..5, test_batch, batches.meta}``.
      Given the archive alone, the batches are taken out of it.  Each batch stores 10,000
      images as rows of 3072 bytes (1024 red, then green, then blue, each row-major 32x32) and
      their labels, as a Python dict serialised by Python 2: Lucid reads it with its own
      reader (:mod:`lucid.data.datasets.batch_reader`), which builds only arrays, lists and
      strings and never runs code from the file.
    """

    base_folder = "cifar-10-batches-py"
    mirrors = ["https://www.cs.toronto.edu/~kriz/"]
    filename = "cifar-10-python.tar.gz"
    tgz_md5 = "c58f30108f718f92721af3b95e74349a"
    train_list = [
        ["data_batch_1", "c99cafc152244af753f735de768cd75f"],
        ["data_batch_2", "d4bba439e000b95fd0a9bffe97cbabec"],
        ["data_batch_3", "54ebc095f3ab1f0389bbae665268c751"],
        ["data_batch_4", "634d18415352ddfa80567beed471001a"],
        ["data_batch_5", "482c414d41f54cd18b22e5b47cb7c3cb"],
    ]
    test_list = [["test_batch", "40351d587109b95175f43aff81a1287e"]]
    meta = {"filename": "batches.meta", "key": "label_names",
            "md5": "5ff9c542aee3614f3951f8cda6e48888"}

    def __init__(self, root: str | os.PathLike, train: bool = True,
                 transform: Callable | None = None, target_transform: Callable | None = None,
                 download: bool = False) -> None:
        super().__init__(root, train, transform, target_transform)
        who = type(self).__name__
        batches = [tuple(entry) for entry in (self.train_list if self.train else self.test_list)]
        self._ensure_batches([*batches, (self.meta["filename"], self.meta["md5"])], download)
        folder = Path(self.root) / self.base_folder
        meta = self._read(folder / self.meta["filename"])
        names = meta.get(self.meta["key"])
        if isinstance(names, list):  # Python 3 writers store the names as bytes
            names = [s.decode("latin1") if isinstance(s, bytes) else s for s in names]
        if not isinstance(names, list) or not all(isinstance(s, str) for s in names):
            raise ValueError(f"{who}: {folder / self.meta['filename']} has no list of class "
                             f"names under {self.meta['key']!r}")
        self.classes = names
        images, labels = [], []
        for name, _ in batches:
            x, y = self._batch(folder / name)
            images.append(x)
            labels.extend(y)
        data = np.vstack(images).reshape(-1, 3, 32, 32)   # rows: 1024 red, green, blue
        self.data = np.ascontiguousarray(data.transpose(0, 2, 3, 1))   # -> (N, H, W, C)
        self.targets = labels
        _check_labels(who, np.asarray(labels), len(self.classes), str(folder))

    # -- files ----------------------------------------------------------------------------

    def _ensure_batches(self, needed: list[tuple[str, str]], download: bool) -> None:
        """Every needed batch file, intact, in ``root/base_folder``; from the archive if not."""
        folder, root = Path(self.root) / self.base_folder, Path(self.root)
        state = {}
        for name, md5 in needed:
            path = folder / name
            state[name] = "missing" if not path.is_file() else (
                "ok" if md5sum(path) == md5 else "corrupt")
        if all(s == "ok" for s in state.values()):
            return
        corrupt = [name for name, s in state.items() if s == "corrupt"]
        if corrupt and not download:
            path = folder / corrupt[0]
            raise RuntimeError(
                f"CIFAR10: {path} is corrupt or incomplete: its MD5 checksum is "
                f"{md5sum(path)}, expected {dict(needed)[corrupt[0]]}. Delete it and pass "
                "download=True to get it again (or copy a good copy there)")
        archive = root / self.filename
        if not download and not archive.is_file():
            missing = ", ".join(name for name, s in state.items() if s != "ok")
            raise FileNotFoundError(
                f"CIFAR10: the dataset files are not in {folder}: expected {missing} (or the "
                f"archive {self.filename}, which holds them, in {root}). Pass download=True "
                f"to fetch the archive (from {self.mirrors[0] if self.mirrors else 'a mirror'}"
                f"), or, without the internet, copy {self.filename} into {root}")
        ensure_files("CIFAR10", root, [(self.filename, self.tgz_md5)], self.mirrors, download)
        folder.mkdir(parents=True, exist_ok=True)
        self._extract(archive, [(n, m) for n, m in needed if state[n] != "ok"])

    def _extract(self, archive: Path, members: list[tuple[str, str]]) -> None:
        """Copy ``members`` out of the archive one by one (never ``extractall``: the names
        inside an archive decide nothing here), each checked by MD5, each written atomically."""
        folder = Path(self.root) / self.base_folder
        with tarfile.open(archive, "r:gz") as tar:
            for name, md5 in members:
                inner = f"{self.base_folder}/{name}"
                try:
                    member = tar.getmember(inner)
                except KeyError:
                    raise RuntimeError(f"CIFAR10: {archive} has no {inner}; it is not the "
                                       "CIFAR-10 python archive") from None
                source = tar.extractfile(member) if member.isfile() else None
                if source is None:
                    raise RuntimeError(f"CIFAR10: {inner} in {archive} is not a file")
                try:
                    save_checked(folder / name, iter(partial(source.read, 1 << 20), b""), md5)
                except ValueError as exc:
                    raise RuntimeError(f"CIFAR10: {inner} in {archive}: {exc}") from None

    # -- reading --------------------------------------------------------------------------

    @staticmethod
    def _read(path: Path) -> dict:
        entry = read_batch(path.read_bytes(), source=str(path))
        # Python 3 writers store the keys as bytes (b"data"), Python 2's as str ("data")
        return {k.decode("latin1") if isinstance(k, bytes) else k: v for k, v in entry.items()}

    def _batch(self, path: Path) -> tuple[np.ndarray, list[int]]:
        entry = self._read(path)
        data = entry.get("data")
        labels = entry.get("labels", entry.get("fine_labels"))
        if not (isinstance(data, np.ndarray) and data.dtype == np.uint8 and data.ndim == 2
                and data.shape[1] == 3 * 32 * 32):
            what = f"{data.dtype} {data.shape}" if isinstance(data, np.ndarray) else repr(
                type(data).__name__)
            raise ValueError(f"CIFAR10: {path}: 'data' is {what}, expected uint8 rows of "
                             "3072 bytes")
        if not isinstance(labels, list) or len(labels) != data.shape[0] or not all(
                isinstance(v, (int, np.integer)) and not isinstance(v, bool) for v in labels):
            raise ValueError(f"CIFAR10: {path}: 'labels' is not a list of {data.shape[0]} ints, "
                             "one per image")
        return data, [int(v) for v in labels]

    def __len__(self) -> int:
        return len(self.data)

    def _image(self, i: int) -> np.ndarray:
        return self.data[i].copy()

    def _target(self, i: int) -> int:
        return self.targets[i]

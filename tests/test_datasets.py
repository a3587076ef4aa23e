"""lucid.data.datasets: MNIST, FashionMNIST and CIFAR10 on small files written here in the real
formats (IDX in gzip; the CIFAR tar.gz of pickled batches, laid out byte for byte as Python 2's
cPickle wrote them) and served from a local HTTP server on 127.0.0.1 -- no internet.  Also the
pickle-subset reader that reads the batches without running code."""

from __future__ import annotations

import gzip
import hashlib
import http.server
import io
import pickle  # the TEST writes pickles; the package never imports it
import re
import struct
import tarfile
import threading
from pathlib import Path

import numpy as np
import pytest

import lucid
from lucid.data import DataLoader
from lucid.data import transforms as T
from lucid.data.datasets import CIFAR10, MNIST, FashionMNIST, read_idx
from lucid.data.datasets.batch_reader import read_batch

RNG = np.random.default_rng(15)


# --------------------------------------------------------------------------------------------
# a local server that counts its requests


class _Server:
    def __init__(self, folder: Path) -> None:
        self.folder, self.requests = folder, []
        server = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def __init__(self, *args, **kwargs):
                super().__init__(*args, directory=str(server.folder), **kwargs)

            def do_GET(self):  # noqa: N802 (http.server's name)
                server.requests.append(self.path)
                super().do_GET()

            def log_message(self, *args):  # keep the test output quiet
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/"
        self.thread = threading.Thread(target=self.httpd.serve_forever, args=(0.02,),
                                       daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def server(tmp_path):
    folder = tmp_path / "served"
    folder.mkdir()
    s = _Server(folder)
    yield s
    s.close()


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def _dead_url() -> str:
    """A URL on 127.0.0.1 where nothing listens (a port just closed)."""
    s = http.server.HTTPServer(("127.0.0.1", 0), http.server.BaseHTTPRequestHandler)
    port = s.server_address[1]
    s.server_close()
    return f"http://127.0.0.1:{port}/"


# --------------------------------------------------------------------------------------------
# MNIST files: IDX, gzip


def _idx(arr: np.ndarray) -> bytes:
    """The IDX bytes of a uint8 array: 00 00 08 <ndim>, the sizes (big-endian), the values."""
    header = bytes([0, 0, 0x08, arr.ndim]) + struct.pack(f">{arr.ndim}I", *arr.shape)
    return gzip.compress(header + arr.astype(np.uint8).tobytes(), mtime=0)


def _mnist_files(folder: Path, n_train=7, n_test=3):
    images = {"train": RNG.integers(0, 256, (n_train, 28, 28), dtype=np.uint8),
              "t10k": RNG.integers(0, 256, (n_test, 28, 28), dtype=np.uint8)}
    labels = {"train": RNG.integers(0, 10, n_train, dtype=np.uint8),
              "t10k": RNG.integers(0, 10, n_test, dtype=np.uint8)}
    resources = []
    for split in ("train", "t10k"):
        for name, data in ((f"{split}-images-idx3-ubyte.gz", _idx(images[split])),
                           (f"{split}-labels-idx1-ubyte.gz", _idx(labels[split]))):
            (folder / name).write_bytes(data)
            resources.append((name, _md5(data)))
    return images, labels, resources


def _mnist_class(mirrors, resources, name="MNIST", base=MNIST):
    """The dataset class with its mirrors and checksums pointed at the test files (the
    folder under root is named after the class, as torchvision's)."""
    return type(name, (base,), {"mirrors": mirrors, "resources": resources})


def test_mnist_downloads_checks_and_reads_the_values(server, tmp_path):
    images, labels, resources = _mnist_files(server.folder)
    Mnist = _mnist_class([server.url], resources)
    root = tmp_path / "cache"
    ds = Mnist(root, train=True, download=True)
    assert sorted(server.requests) == ["/train-images-idx3-ubyte.gz",
                                       "/train-labels-idx1-ubyte.gz"]
    raw = root / "MNIST" / "raw"
    assert sorted(p.name for p in raw.iterdir()) == ["train-images-idx3-ubyte.gz",
                                                     "train-labels-idx1-ubyte.gz"]
    assert len(ds) == 7
    assert ds.data.dtype == lucid.types.UInt8 and ds.data.shape == (7, 28, 28)
    assert ds.targets.dtype == lucid.Int64
    np.testing.assert_array_equal(ds.data.numpy(), images["train"])
    np.testing.assert_array_equal(ds.targets.numpy(), labels["train"])
    for i in (0, 6, -1):
        img, label = ds[i]
        assert isinstance(img, np.ndarray) and img.dtype == np.uint8 and img.shape == (28, 28)
        np.testing.assert_array_equal(img, images["train"][i])
        assert type(label) is int and label == labels["train"][i]
    assert ds.classes[3] == "3 - three" and ds.class_to_idx["9 - nine"] == 9
    test = Mnist(root, train=False, download=True)
    np.testing.assert_array_equal(test.data.numpy(), images["t10k"])
    assert len(server.requests) == 4


def test_mnist_second_construction_makes_no_request_and_reads_offline(server, tmp_path):
    images, _, resources = _mnist_files(server.folder)
    root = tmp_path / "cache"
    _mnist_class([server.url], resources)(root, download=True)
    assert len(server.requests) == 2
    again = _mnist_class([server.url], resources)(root, download=True)
    assert len(server.requests) == 2                  # verified files: no request
    offline = _mnist_class([_dead_url()], resources)(root, download=False)
    np.testing.assert_array_equal(offline.data.numpy(), again.data.numpy())
    np.testing.assert_array_equal(offline.data.numpy(), images["train"])


def test_mnist_missing_files_error_names_the_folder_and_files(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        MNIST(tmp_path)
    msg = str(info.value)
    folder = str(tmp_path / "MNIST" / "raw")
    assert folder in msg
    assert "train-images-idx3-ubyte.gz, train-labels-idx1-ubyte.gz" in msg
    assert "download=True" in msg and "copy those files into that folder" in msg
    assert "https://ossci-datasets.s3.amazonaws.com/mnist/" in msg


def test_mnist_corrupt_local_file_is_an_error_and_download_replaces_it(server, tmp_path):
    images, _, resources = _mnist_files(server.folder)
    Mnist = _mnist_class([server.url], resources)
    root = tmp_path / "cache"
    Mnist(root, download=True)
    target = root / "MNIST" / "raw" / "train-images-idx3-ubyte.gz"
    target.write_bytes(target.read_bytes()[:-5])        # a cut-off copy
    bad = hashlib.md5(target.read_bytes()).hexdigest()
    with pytest.raises(RuntimeError, match=re.escape(f"{target} is corrupt or incomplete: its "
                                                     f"MD5 checksum is {bad}, expected "
                                                     f"{resources[0][1]}")):
        Mnist(root, download=False)
    ds = Mnist(root, download=True)                      # fetched again, replaced
    assert server.requests.count("/train-images-idx3-ubyte.gz") == 2
    np.testing.assert_array_equal(ds.data.numpy(), images["train"])


def test_mnist_download_with_a_bad_checksum_leaves_nothing_behind(server, tmp_path):
    _, _, resources = _mnist_files(server.folder)
    wrong = [(name, "0" * 32) if name.startswith("train-images") else (name, md5)
             for name, md5 in resources]
    root = tmp_path / "cache"
    with pytest.raises(RuntimeError) as info:
        _mnist_class([server.url], wrong)(root, download=True)
    msg = str(info.value)
    assert "could not download train-images-idx3-ubyte.gz" in msg
    assert f"expected {'0' * 32}" in msg and server.url in msg
    assert sorted(p.name for p in (root / "MNIST" / "raw").iterdir()) == []


def test_mnist_tries_the_next_mirror_and_reports_every_failure(server, tmp_path):
    images, _, resources = _mnist_files(server.folder)
    (server.folder / "empty").mkdir()
    mirrors = [server.url + "empty/", server.url]        # the first answers 404
    ds = _mnist_class(mirrors, resources)(tmp_path / "a", download=True)
    np.testing.assert_array_equal(ds.data.numpy(), images["train"])
    assert server.requests[:2] == ["/empty/train-images-idx3-ubyte.gz",
                                   "/train-images-idx3-ubyte.gz"]
    dead = _dead_url()
    with pytest.raises(RuntimeError) as info:
        _mnist_class([dead, server.url + "empty/"], resources)(tmp_path / "b", download=True)
    msg = str(info.value)
    assert f"{dead}train-images-idx3-ubyte.gz: " in msg
    assert f"{server.url}empty/train-images-idx3-ubyte.gz: HTTP error 404 (File not found)" in msg
    assert f"copy train-images-idx3-ubyte.gz (MD5 {resources[0][1]}) into" in msg


def test_fashion_mnist_has_its_own_folder_mirrors_and_classes(server, tmp_path):
    images, labels, resources = _mnist_files(server.folder)
    assert FashionMNIST.mirrors == ["http://fashion-mnist.s3-website.eu-central-1.amazonaws.com/"]
    Fashion = _mnist_class([server.url], resources, name="FashionMNIST", base=FashionMNIST)
    ds = Fashion(tmp_path, train=False, download=True)
    assert (tmp_path / "FashionMNIST" / "raw" / "t10k-images-idx3-ubyte.gz").is_file()
    np.testing.assert_array_equal(ds.data.numpy(), images["t10k"])
    assert ds.classes[9] == "Ankle boot" and ds[1][1] == labels["t10k"][1]


def test_mnist_through_transforms_and_a_dataloader(server, tmp_path):
    images, labels, resources = _mnist_files(server.folder)
    tf = T.Compose([T.ToTensor(), T.Normalize((0.1307,), (0.3081,))])
    ds = _mnist_class([server.url], resources)(tmp_path, download=True, transform=tf,
                                                 target_transform=lambda y: y + 100)
    x0, y0 = ds[0]
    assert x0.shape == (1, 28, 28) and x0.dtype == lucid.Float32 and y0 == labels["train"][0] + 100
    batches = list(DataLoader(ds, batch_size=4))
    assert [b[0].shape for b in batches] == [(4, 1, 28, 28), (3, 1, 28, 28)]
    xb, yb = batches[0]
    assert xb.dtype == lucid.Float32 and yb.dtype == lucid.Int64
    ref = (images["train"][:4, None].astype(np.float32) / np.float32(255) - np.float32(0.1307)) \
        / np.float32(0.3081)
    np.testing.assert_allclose(xb.numpy(), ref, rtol=1e-6, atol=1e-6)
    np.testing.assert_array_equal(yb.numpy(), labels["train"][:4].astype(np.int64) + 100)


def test_mnist_argument_errors(tmp_path):
    with pytest.raises(TypeError, match="MNIST: root must be a folder path"):
        MNIST(3)
    with pytest.raises(TypeError, match="MNIST: train must be True or False, got 'yes'"):
        MNIST(tmp_path, train="yes")
    with pytest.raises(TypeError, match="MNIST: transform must be callable or None, got int"):
        MNIST(tmp_path, transform=3)


def test_read_idx_checks_the_header_and_the_size(tmp_path):
    arr = RNG.integers(0, 256, (2, 3, 4), dtype=np.uint8)
    good = tmp_path / "x-idx3-ubyte.gz"
    good.write_bytes(_idx(arr))
    np.testing.assert_array_equal(read_idx(good), arr)
    floats = tmp_path / "f-idx2"
    values = RNG.standard_normal((3, 2))
    floats.write_bytes(bytes([0, 0, 0x0E, 2]) + struct.pack(">2I", 3, 2)
                       + values.astype(">f8").tobytes())
    np.testing.assert_array_equal(read_idx(floats), values)
    bad = tmp_path / "bad.gz"
    bad.write_bytes(gzip.compress(b"\x00\x00\x07\x01" + b"\x00" * 8))
    with pytest.raises(ValueError, match=r"is not an IDX file \(its first bytes are 00 00 07 01"):
        read_idx(bad)
    short = tmp_path / "short.gz"
    short.write_bytes(gzip.compress(gzip.decompress(_idx(arr))[:-1]))
    with pytest.raises(ValueError, match=r"declares shape \(2, 3, 4\) \(24 bytes of values\) "
                                         r"but holds 23 bytes"):
        read_idx(short)
    notgz = tmp_path / "plain.gz"
    notgz.write_bytes(b"not gzip")
    with pytest.raises(ValueError, match="is not a readable gzip file"):
        read_idx(notgz)


# --------------------------------------------------------------------------------------------
# CIFAR-10 files: a tar.gz of pickled batches


class _Py2Pickle:
    """Writes a dict the way Python 2's cPickle (protocol 2) did for the CIFAR batches: str
    as SHORT_BINSTRING/BINSTRING, a memo entry after each object, the array through
    numpy.core.multiarray._reconstruct and a BUILD with (version, shape, dtype, fortran,
    bytes)."""

    def __init__(self):
        self.out, self.memo = io.BytesIO(), 0

    def put(self):
        self.memo += 1
        self.out.write(b"q" + bytes([self.memo]) if self.memo < 256
                       else b"r" + struct.pack("<I", self.memo))

    def str_(self, s: bytes):
        self.out.write((b"U" + bytes([len(s)]) if len(s) < 256
                        else b"T" + struct.pack("<i", len(s))) + s)
        self.put()

    def int_(self, n: int):
        if 0 <= n < 256:
            self.out.write(b"K" + bytes([n]))
        elif 0 <= n < 65536:
            self.out.write(b"M" + struct.pack("<H", n))
        else:
            self.out.write(b"J" + struct.pack("<i", n))

    def array(self, a: np.ndarray):
        w = self.out.write
        w(b"cnumpy.core.multiarray\n_reconstruct\n")
        self.put()
        w(b"cnumpy\nndarray\n")
        self.put()
        w(b"K\x00\x85")
        self.str_(b"b")
        w(b"\x87R")
        self.put()
        w(b"(K\x01")                                        # state: (1, shape, dtype, ...)
        for n in a.shape:
            self.int_(n)
        w({1: b"\x85", 2: b"\x86"}[a.ndim])
        self.put()
        w(b"cnumpy\ndtype\n")
        self.put()
        self.str_(b"u1")
        w(b"K\x00K\x01\x87R")
        self.put()
        w(b"(K\x03")
        self.str_(b"|")
        w(b"NNNJ\xff\xff\xff\xffJ\xff\xff\xff\xffK\x00tb\x89")
        self.str_(a.tobytes())
        w(b"tb")

    def dump(self, d: dict) -> bytes:
        self.out.write(b"\x80\x02}")
        self.put()
        self.out.write(b"(")
        for key, value in d.items():
            self.str_(key.encode())
            if isinstance(value, np.ndarray):
                self.array(value)
            elif isinstance(value, list):
                self.out.write(b"]")
                self.put()
                self.out.write(b"(")
                for v in value:
                    self.int_(v) if isinstance(v, int) else self.str_(v.encode())
                self.out.write(b"e")
            elif isinstance(value, int):
                self.int_(value)
            else:
                self.str_(value.encode())
        self.out.write(b"u.")
        return self.out.getvalue()


CLASSES = ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship",
           "truck"]


def _cifar_archive(folder: Path, writer: str = "py2", n: int = 3):
    """A cifar-10-python.tar.gz with batches of ``n`` images; returns the arrays, labels and
    the class attributes that point CIFAR10 at it."""
    def dump(d):
        if writer == "py2":
            return _Py2Pickle().dump(d)
        protocol = int(writer[-1])               # "py3-2": Python 3's pickle, protocol 2
        return pickle.dumps({k.encode(): ([v.encode() for v in val]
                                          if isinstance(val, list) and val
                                          and isinstance(val[0], str) else val)
                             for k, val in d.items()}, protocol=protocol)

    names = [f"data_batch_{i}" for i in range(1, 6)] + ["test_batch"]
    rows, labels, files = {}, {}, {}
    for i, name in enumerate(names):
        rows[name] = RNG.integers(0, 256, (n, 3072), dtype=np.uint8)
        labels[name] = [int(v) for v in RNG.integers(0, 10, n)]
        files[name] = dump({"batch_label": f"batch {i}", "labels": labels[name],
                            "data": rows[name],
                            "filenames": [f"img_{i}_{j}.png" for j in range(n)]})
    files["batches.meta"] = dump({"num_cases_per_batch": n, "label_names": CLASSES,
                                  "num_vis": 3072})
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(f"cifar-10-batches-py/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    archive = buf.getvalue()
    (folder / "cifar-10-python.tar.gz").write_bytes(archive)
    attrs = {"tgz_md5": _md5(archive),
             "train_list": [[nm, _md5(files[nm])] for nm in names[:5]],
             "test_list": [["test_batch", _md5(files["test_batch"])]],
             "meta": {"filename": "batches.meta", "key": "label_names",
                      "md5": _md5(files["batches.meta"])}}
    return rows, labels, attrs


def _cifar_class(mirrors, attrs):
    return type("CIFAR10", (CIFAR10,), {"mirrors": mirrors, **attrs})


def _images(rows):
    """The reference layout: row = 1024 red, 1024 green, 1024 blue, each 32x32 row-major."""
    return rows.reshape(-1, 3, 32, 32).transpose(0, 2, 3, 1)


def test_the_py2_writer_here_matches_pythons_own_reading():
    # the hand-written Python 2 layout is a real pickle: Python's reader agrees
    d = {"data": RNG.integers(0, 256, (2, 6), dtype=np.uint8), "labels": [1, 300, 70000],
         "batch_label": "x" * 300}
    loaded = pickle.loads(_Py2Pickle().dump(d), encoding="latin1")
    np.testing.assert_array_equal(loaded["data"], d["data"])
    assert loaded["labels"] == d["labels"] and loaded["batch_label"] == d["batch_label"]


@pytest.mark.parametrize("writer", ["py2", "py3-2", "py3-5"])
def test_cifar10_downloads_extracts_and_reads_the_values(server, tmp_path, writer):
    rows, labels, attrs = _cifar_archive(server.folder, writer)
    Cifar = _cifar_class([server.url], attrs)
    root = tmp_path / "cache"
    train = Cifar(root, train=True, download=True)
    assert server.requests == ["/cifar-10-python.tar.gz"]
    assert (root / "cifar-10-python.tar.gz").is_file()
    assert len(train) == 15 and train.data.shape == (15, 32, 32, 3)
    assert train.data.dtype == np.uint8
    expected = np.concatenate([_images(rows[f"data_batch_{i}"]) for i in range(1, 6)])
    np.testing.assert_array_equal(train.data, expected)
    assert train.targets == sum((labels[f"data_batch_{i}"] for i in range(1, 6)), [])
    assert train.classes == CLASSES and train.class_to_idx["truck"] == 9
    img, label = train[4]
    assert img.shape == (32, 32, 3) and label == labels["data_batch_2"][1]
    # pixel (h, w) of channel c is byte c * 1024 + h * 32 + w of the row
    assert img[5, 7, 2] == rows["data_batch_2"][1][2 * 1024 + 5 * 32 + 7]
    test = Cifar(root, train=False, download=True)
    np.testing.assert_array_equal(test.data, _images(rows["test_batch"]))
    assert test.targets == labels["test_batch"]
    assert server.requests == ["/cifar-10-python.tar.gz"]         # no second request


def test_cifar10_reads_offline_from_the_batches_or_from_the_archive(server, tmp_path):
    rows, labels, attrs = _cifar_archive(server.folder)
    root = tmp_path / "cache"
    _cifar_class([server.url], attrs)(root, train=False, download=True)
    (root / "cifar-10-python.tar.gz").unlink()
    offline = _cifar_class([_dead_url()], attrs)
    np.testing.assert_array_equal(offline(root, train=False).data, _images(rows["test_batch"]))
    # the archive alone, copied by hand: the batches are taken out of it, no download
    copied = tmp_path / "copied"
    copied.mkdir()
    (copied / "cifar-10-python.tar.gz").write_bytes(
        (server.folder / "cifar-10-python.tar.gz").read_bytes())
    ds = offline(copied, train=True)
    assert ds.targets[:3] == labels["data_batch_1"]
    assert sorted(p.name for p in (copied / "cifar-10-batches-py").iterdir()) == [
        "batches.meta", "data_batch_1", "data_batch_2", "data_batch_3", "data_batch_4",
        "data_batch_5"]
    assert len(server.requests) == 1


def test_cifar10_missing_files_error_names_the_folder_files_and_archive(tmp_path):
    with pytest.raises(FileNotFoundError) as info:
        CIFAR10(tmp_path, train=False)
    msg = str(info.value)
    assert f"the dataset files are not in {tmp_path / 'cifar-10-batches-py'}" in msg
    assert "expected test_batch, batches.meta" in msg
    assert f"or the archive cifar-10-python.tar.gz, which holds them, in {tmp_path}" in msg
    assert "download=True" in msg and "https://www.cs.toronto.edu/~kriz/" in msg


def test_cifar10_corrupt_batch_or_archive_is_an_error_naming_it(server, tmp_path):
    _, _, attrs = _cifar_archive(server.folder)
    Cifar = _cifar_class([server.url], attrs)
    root = tmp_path / "cache"
    Cifar(root, train=False, download=True)
    batch = root / "cifar-10-batches-py" / "test_batch"
    data = bytearray(batch.read_bytes())
    data[-10] ^= 0xFF
    batch.write_bytes(bytes(data))
    with pytest.raises(RuntimeError, match=re.escape(f"{batch} is corrupt or incomplete")):
        Cifar(root, train=False)
    ds = Cifar(root, train=False, download=True)            # re-extracted from the archive
    assert len(ds) == 3 and server.requests == ["/cifar-10-python.tar.gz"]
    archive = tmp_path / "other" / "cifar-10-python.tar.gz"
    archive.parent.mkdir()
    archive.write_bytes(b"not the archive")
    bad = _md5(b"not the archive")
    with pytest.raises(RuntimeError, match=re.escape(f"{archive} is corrupt or incomplete: its "
                                                      f"MD5 checksum is {bad}")):
        Cifar(archive.parent, train=False)


def test_cifar10_refuses_a_batch_that_asks_to_run_code(server, tmp_path):
    _, _, attrs = _cifar_archive(server.folder)
    root = tmp_path / "cache"
    _cifar_class([server.url], attrs)(root, train=False, download=True)
    batch = root / "cifar-10-batches-py" / "test_batch"
    marker = tmp_path / "ran"
    batch.write_bytes(pickle.dumps({"data": _Evil(marker), "labels": [1]}, protocol=2))
    attrs["test_list"] = [["test_batch", _md5(batch.read_bytes())]]
    with pytest.raises(ValueError, match="test_batch: cannot read this pickle safely: it asks "
                                         "for .*_touch, which this reader does not construct"):
        _cifar_class([server.url], attrs)(root, train=False)
    assert not marker.exists()


# --------------------------------------------------------------------------------------------
# the pickle-subset reader


def _touch(path):
    Path(path).touch()


class _Evil:
    """Pickles as "call _touch(path)": unpickling it with pickle would create the file."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (_touch, (str(self.path),))


def test_reader_reads_python2_numpy_pickles():
    # arrays pickled by Python 2 NumPy (these bytes are NumPy's own fixtures for old pickles)
    f4 = (b"\x80\x02cnumpy.core._internal\n_reconstruct\nq\x01cnumpy\nndarray\nq\x02K\x00\x85U"
          b"\x01b\x87Rq\x03(K\x04\x85cnumpy\ndtype\nq\x04U\x02f4K\x00K\x01\x87Rq\x05(U\x01<NNJ"
          b"\xff\xff\xff\xffJ\xff\xff\xff\xfftb\x89U\x10\x00\x00\x80?\x00\x00\x00@\x00\x00@@"
          b"\x00\x00\x80@tb")
    i1 = (b"\x80\x02cnumpy.core._internal\n_reconstruct\nq\x01cnumpy\nndarray\nq\x02K\x00\x85U"
          b"\x01b\x87Rq\x03(K\x01K\x04\x85cnumpy\ndtype\nq\x04U\x02i1K\x00K\x01\x87Rq\x05(K\x01U"
          b"\x01|NNJ\xff\xff\xff\xffJ\xff\xff\xff\xfftb\x89U\x04\x01\x02\x03\x04tb")
    for body, expected in ((f4, np.array([1, 2, 3, 4], np.float32)),
                           (i1, np.array([1, 2, 3, 4], np.int8))):
        out = read_batch(b"\x80\x02}U\x01a" + body[2:] + b"s.")
        assert out["a"].dtype == expected.dtype
        np.testing.assert_array_equal(out["a"], expected)


@pytest.mark.parametrize("protocol", [1, 2, 3, 4, 5])
def test_reader_matches_pickle_on_the_subset(protocol):
    d = {"data": RNG.integers(0, 256, (4, 6), dtype=np.uint8), b"raw": b"\x00\xff",
         "empty": b"", "labels": [0, 255, 256, 65536, -1, 2 ** 40, -(2 ** 70)],
         "names": ["a", "é"], "f": 1.5, "none": None, "flags": (True, False),
         "big_endian": np.arange(6, dtype=">i4").reshape(2, 3),
         "fortran": np.asfortranarray(RNG.standard_normal((2, 3))), "scalar": np.int64(7)}
    out = read_batch(pickle.dumps(d, protocol=protocol))
    ref = pickle.loads(pickle.dumps(d, protocol=protocol))
    assert out.keys() == ref.keys()
    for key, value in ref.items():
        if isinstance(value, np.ndarray):
            # native byte order always (NumPy's own reader keeps '>i4' under protocol 5)
            assert out[key].dtype == value.dtype.newbyteorder("=")
            assert out[key].shape == value.shape
            np.testing.assert_array_equal(out[key], value)
            assert out[key].flags.writeable
        else:
            assert out[key] == value and type(out[key]) is type(value)


@pytest.mark.parametrize("payload,message", [
    (pickle.dumps({"a": np.array([1, "x"], dtype=object)}, protocol=2),
     "dtype ('O8',) is not a boolean, integer or float type"),
    (pickle.dumps({"a": np.zeros(2, dtype=[("x", "<i4")])}, protocol=2),
     "is not a boolean, integer or float type"),
    (pickle.dumps({"a": {1, 2}}, protocol=2), "it asks for __builtin__.set"),
    (pickle.dumps([1, 2], protocol=2), "the file holds a list, not a dict"),
    (pickle.dumps({"a": 1}, protocol=0), "opcode b'V' at byte 5 is not supported"),
    (pickle.dumps({"a": list(range(5))}, protocol=2)[:-3], "the file ends early"),
    (b"\x80\x02}U\x01ah\x07s.", "GET of memo entry 7, which was never stored"),
])
def test_reader_refuses_everything_else_with_a_reason(payload, message):
    with pytest.raises(ValueError, match=re.escape(message)):
        read_batch(payload, source="batch_x")
    with pytest.raises(ValueError, match="^batch_x: cannot read this pickle safely"):
        read_batch(payload, source="batch_x")


def test_reader_refuses_a_callable_without_calling_it(tmp_path):
    marker = tmp_path / "ran"
    for protocol in (2, 4, 5):
        with pytest.raises(ValueError, match=r"it asks for \S*_touch, which this reader does "
                                             "not construct"):
            read_batch(pickle.dumps({"x": _Evil(marker)}, protocol=protocol))
    assert not marker.exists()


def test_the_package_never_imports_pickle():
    # `grep -rn pickle lucid`: only the reader, which never imports it, may mention it
    root = Path(lucid.__file__).parent
    mentions = {p.relative_to(root).as_posix() for p in root.rglob("*.py")
                if "pickle" in p.read_text(encoding="utf-8").lower()}
    assert mentions == {"data/datasets/batch_reader.py"}
    source = (root / "data/datasets/batch_reader.py").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(import|from)\s+(c?pickle|pickletools|_pickle|copyreg)\b",
                         source, re.M)
    assert re.findall(r"^\s*(?:import|from)\s+([\w.]+)", source, re.M) == [
        "__future__", "math", "re", "struct", "typing", "numpy"]


def test_reader_answers_damaged_files_with_value_errors_only():
    # random byte changes, cuts and insertions in real pickles: never another exception
    rng = np.random.default_rng(0)
    d = {"data": rng.integers(0, 256, (3, 8), dtype=np.uint8), "labels": [1, 2, 300, 70000],
         "batch_label": "batch 1"}
    seeds = [pickle.dumps(d, protocol=p) for p in (1, 2, 3, 4, 5)] + [_Py2Pickle().dump(d)]
    for it in range(3000):
        data = bytearray(seeds[it % len(seeds)])
        for _ in range(rng.integers(1, 4)):
            i, kind = int(rng.integers(0, len(data))), rng.integers(0, 3)
            if kind == 0:
                data[i] = int(rng.integers(0, 256))
            elif kind == 1:
                del data[i:i + int(rng.integers(1, 5))]
            else:
                data[i:i] = rng.integers(0, 256, int(rng.integers(1, 4))).astype(np.uint8).tobytes()
        try:
            out = read_batch(bytes(data))
        except ValueError:
            continue
        assert isinstance(out, dict)

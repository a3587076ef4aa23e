"""``lucid.save`` / ``lucid.load``: tensors and state dicts in a safe, inspectable file format.

Loading a file must never run code from it, so the format holds only numbers and text, in the
layout of `safetensors <https://github.com/huggingface/safetensors>`_::

    [ 8 bytes ]  N, the header's length (unsigned little-endian)
    [ N bytes ]  the header: UTF-8 JSON (padded with spaces to a multiple of 8 bytes)
    [ rest    ]  the arrays' raw bytes (little-endian, C order), back to back

The header maps each array's name to ``{"dtype": "F32", "shape": [2, 3], "data_offsets":
[begin, end]}`` (byte offsets into the data section) and keeps, in
``"__metadata__": {"format": "lucid", "tree": ...}``, a JSON description of the saved object
(nested dicts, lists, numbers, strings; arrays by name).  A flat state dict of real arrays is
thus also a valid safetensors file, and a safetensors file without a Lucid tree loads as a dict
of tensors.

What can be saved: Tensors (and Parameters/Buffers), NumPy arrays and scalars, and dicts (str
or int keys), lists and tuples of them, numbers, strings, booleans and None -- so module and
optimizer state dicts, and scheduler state.  What loads back is the same structure; Tensors
come back on ``device`` (NumPy arrays stay NumPy arrays).  Round trips are bit-exact (NaN
payloads included): the bytes written are the array's bytes.

Every field of a file is checked before it is used: a truncated or crafted file raises
``ValueError`` saying what is wrong, never reads past its data or allocates from a bogus size.
Caps keep a hostile file cheap to refuse: a header of at most ``MAX_HEADER_BYTES``, at most
``MAX_ARRAYS`` arrays (counted in the raw bytes, then -- whatever the spelling -- while the
header is parsed), integers of at most 20 digits and
an object tree at most ``MAX_DEPTH`` levels deep.

Saving is atomic: the file is written under a temporary name beside the target, flushed to
disk and renamed over it, so a save that fails midway (disk full, an exception, a killed
process) leaves the previous file exactly as it was.
"""

from __future__ import annotations

import contextlib
import copy
import io
import json
import math
import os
import secrets
import stat
import struct
import warnings
import weakref
from typing import IO, Any

import numpy as np

from lucid.backends import check_device
from lucid.nn.module import Module
from lucid.nn.parameter import Buffer, Parameter
from lucid.tensor import Tensor
from lucid.types import to_numeric_type

__all__ = ["save", "load"]

FORMAT = "lucid"
VERSION = "1"

#: the largest header accepted (the same cap as safetensors): a bigger length field means a
#: corrupt or hostile file, and reading it would allocate that much memory
MAX_HEADER_BYTES = 100_000_000
#: the most arrays a file may list (ResNet-50's state dict has about 320; a file of 200,000
#: empty arrays would otherwise cost seconds and hundreds of MB to read)
MAX_ARRAYS = 50_000
#: the deepest the object tree may nest (a state dict is 2-3 levels deep)
MAX_DEPTH = 100

#: file dtype code <-> NumPy dtype (always little-endian in the file)
DTYPES: dict[str, np.dtype] = {
    "BOOL": np.dtype("bool"),
    "U8": np.dtype("<u1"),
    "U16": np.dtype("<u2"),
    "U32": np.dtype("<u4"),
    "U64": np.dtype("<u8"),
    "I8": np.dtype("<i1"),
    "I16": np.dtype("<i2"),
    "I32": np.dtype("<i4"),
    "I64": np.dtype("<i8"),
    "F16": np.dtype("<f2"),
    "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"),
    "C64": np.dtype("<c8"),
    "C128": np.dtype("<c16"),
}
_CODES = {dt.newbyteorder("="): code for code, dt in DTYPES.items()}
_TENSOR_CLASSES = {"Tensor": Tensor, "Parameter": Parameter, "Buffer": Buffer}


# ============================================================================================
# save


def save(obj: Any, path: str | os.PathLike | IO[bytes]) -> None:
    """Write ``obj`` (a Tensor, a state dict, ...) to ``path`` (a file name or a binary file).

    >>> lucid.save(model.state_dict(), "model.lucid")
    >>> model.load_state_dict(lucid.load("model.lucid"))

    ``lucid.save(model, path)`` (PyTorch's whole-module save) saves ``model.state_dict()``
    -- a file holds numbers and text, never code -- and marks the file with the module's
    class.  ``lucid.load`` of that file in the same Python process (a training script that
    saves its best model and reloads it at the end) gives a copy of the module holding the
    saved weights, as PyTorch does; in another process, where the module cannot be rebuilt
    from the file, it gives the state dict and a warning naming ``load_state_dict``.
    """
    module = None
    if isinstance(obj, Module):
        module, obj = obj, obj.state_dict()
    arrays: list[tuple[str, np.ndarray]] = []
    tree = _Encoder(arrays).encode(obj, (), set())
    header: dict[str, Any] = {"__metadata__": {
        "format": FORMAT, "version": VERSION,
        "tree": json.dumps(tree, separators=(",", ":"), allow_nan=False),
    }}
    if module is not None:
        token = secrets.token_hex(8)
        _SAVED_MODULES[token] = weakref.ref(module)
        header["__metadata__"].update(module=type(module).__name__, token=token)
    chunks = []
    offset = 0
    for name, arr in arrays:
        data = arr.tobytes()  # C order; ``arr`` is already little-endian
        header[name] = {"dtype": _CODES[arr.dtype.newbyteorder("=")], "shape": list(arr.shape),
                        "data_offsets": [offset, offset + len(data)]}
        chunks.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":"), allow_nan=False).encode("utf-8")
    head += b" " * (-len(head) % 8)  # so the data section starts 8-byte aligned
    blob = b"".join([struct.pack("<Q", len(head)), head, *chunks])
    if hasattr(path, "write"):
        path.write(blob)
    else:
        _write_atomically(os.fspath(path), blob)


def _write_atomically(path: str, blob: bytes) -> None:
    """Write ``blob`` to ``path`` so that a reader only ever sees the old file or the new one.

    The bytes go to a temporary file beside ``path`` (same directory, so same file system),
    are flushed to disk, and only then is the temporary file renamed over ``path`` -- a rename
    is atomic.  If anything fails or is interrupted midway (disk full, an exception, Ctrl-C)
    the old file is untouched and the temporary file is removed (after a killed process it is
    left as ``.<name>.*.tmp``, never under the real name).  The new file gets the permissions
    of the one it replaces, or those of any new file (the umask's), as ``open`` would.
    """
    directory = os.path.dirname(os.path.abspath(path))
    keep = _check_target(path, directory)
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{secrets.token_hex(8)}.tmp")
    fd = _NOT_OPENED
    try:
        fd = _open_new(path, tmp)
        _write_all(fd, blob)
        if keep is not None:
            os.chmod(tmp, keep)
        os.fsync(fd)
        fd = _close(fd)
        os.replace(tmp, path)
    except BaseException:
        if fd >= 0:
            with contextlib.suppress(OSError):
                os.close(fd)
        if fd != _NOT_OPENED:  # ours to remove (a name that was taken is not)
            with contextlib.suppress(OSError):
                os.unlink(tmp)
        raise
    _sync_directory(directory)


_NOT_OPENED, _CLOSED = -1, -2


def _check_target(path: str, directory: str) -> int | None:
    """Refuse a path that cannot be written, naming it (not the temporary file); return the
    permission bits of the file it replaces (None for a new file)."""
    if not os.path.isdir(directory):
        raise FileNotFoundError(
            f"lucid.save: cannot write {path!r}: the folder {directory!r} does not exist; "
            f"create it first (os.makedirs({directory!r}, exist_ok=True))"
        )
    if os.path.isdir(path):
        raise IsADirectoryError(f"lucid.save: {path!r} is a folder; give a file name inside "
                                f"it, e.g. {os.path.join(path, 'model.lucid')!r}")
    try:
        return stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        return None


def _open_new(path: str, tmp: str) -> int:
    """Create ``tmp`` for writing; mode 0o666 less the umask, as ``open`` gives new files."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_BINARY", 0)
    try:
        return os.open(tmp, flags, 0o666)
    except OSError as exc:
        raise type(exc)(exc.errno, f"lucid.save: cannot write {path!r}: {exc.strerror} "
                                   "(its folder must be writable)") from None


def _write_all(fd: int, blob: bytes) -> None:
    view = memoryview(blob)
    while view:
        view = view[os.write(fd, view):]


def _close(fd: int) -> int:
    os.close(fd)
    return _CLOSED


def _sync_directory(directory: str) -> None:
    """Make the rename itself durable (POSIX); a no-op where directories cannot be opened."""
    if not hasattr(os, "O_DIRECTORY"):
        return
    try:
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class _Encoder:
    """Turn an object into a JSON tree, moving its arrays out to ``arrays`` under unique names.

    Tree nodes: JSON null/bool/int/float/str stand for themselves and a JSON list for a list;
    every other node is an object with one tag: ``{"dict": [[key, value], ...]}``,
    ``{"tuple": [...]}``, ``{"float": "nan" | "inf" | "-inf"}``, ``{"ndarray": name}``,
    ``{"scalar": name}`` (a NumPy scalar) or ``{"tensor": name, "class": ..., "requires_grad":
    ...}``.
    """

    def __init__(self, arrays: list[tuple[str, np.ndarray]]) -> None:
        self.arrays = arrays
        self.names: set[str] = {"__metadata__"}

    def encode(self, obj: Any, path: tuple, active: set[int]) -> Any:
        if obj is None or isinstance(obj, (bool, str)):
            return obj
        if isinstance(obj, np.generic):  # before int/float: np.float64 is a float subclass
            return {"scalar": self._add(np.asarray(obj), path)}
        if isinstance(obj, int):
            return obj
        if isinstance(obj, float):
            return obj if math.isfinite(obj) else {"float": repr(obj)}
        if isinstance(obj, Tensor):
            node = {"tensor": self._add(obj.numpy(), path), "class": "Tensor",
                    "requires_grad": obj.requires_grad}
            for cls_name in ("Parameter", "Buffer"):
                if isinstance(obj, _TENSOR_CLASSES[cls_name]):
                    node["class"] = cls_name
            return node
        if isinstance(obj, np.ndarray):
            return {"ndarray": self._add(obj, path)}
        if isinstance(obj, (dict, list, tuple)):
            if id(obj) in active:
                raise ValueError(f"lucid.save: {_where(path)} contains itself (a cycle)")
            active.add(id(obj))
            try:
                if isinstance(obj, dict):
                    items = []
                    for key, value in obj.items():
                        if isinstance(key, bool) or not isinstance(key, (str, int)):
                            raise TypeError(
                                f"lucid.save: dict keys must be str or int, got {key!r} "
                                f"({type(key).__name__}) at {_where(path)}"
                            )
                        items.append([key, self.encode(value, (*path, key), active)])
                    return {"dict": items}
                values = [self.encode(v, (*path, i), active) for i, v in enumerate(obj)]
                return values if isinstance(obj, list) else {"tuple": values}
            finally:
                active.discard(id(obj))
        hint = " (save module.state_dict())" if isinstance(obj, Module) else ""
        raise TypeError(
            f"lucid.save: cannot save a {type(obj).__name__} at {_where(path)}{hint}; a Lucid "
            "file holds Tensors, NumPy arrays, numbers, strings, None, and dicts, lists and "
            "tuples of them"
        )

    def _add(self, arr: np.ndarray, path: tuple) -> str:
        dtype = arr.dtype
        if dtype.newbyteorder("=") not in _CODES:
            raise TypeError(
                f"lucid.save: cannot save an array of dtype {dtype} at {_where(path)}; "
                f"supported: {', '.join(str(d) for d in _CODES)}"
            )
        arr = arr.astype(dtype.newbyteorder("<"), order="C", copy=False)  # keeps 0-d arrays 0-d
        name = base = ".".join(str(k) for k in path) or "tensor"
        n = 1
        while name in self.names:  # e.g. a key "a.b" next to a nested {"a": {"b": ...}}
            name = f"{base}~{n}"
            n += 1
        self.names.add(name)
        self.arrays.append((name, arr))
        return name


def _where(path: tuple) -> str:
    return "the top level" if not path else "key " + "".join(f"[{k!r}]" for k in path)


# ============================================================================================
# load


@contextlib.contextmanager
def safe_globals(safe_globals: Any) -> Any:
    """PyTorch's ``with torch.serialization.safe_globals([...]): torch.load(f)`` (the classes
    its loader may build): accepted and not needed -- a Lucid file holds no code, so every
    load is safe."""
    yield


def add_safe_globals(safe_globals: Any) -> None:
    """PyTorch's allow-list for its loader; nothing to allow in Lucid (see safe_globals)."""


#: token written in a file by ``save(module, path)`` -> the module (while it lives): what
#: ``load`` copies to give a module back in the same process
_SAVED_MODULES: dict[str, Any] = {}


def _as_module(metadata: Any, state: Any, source: str) -> Any:
    """The module a ``save(module, path)`` file stands for, if that module still lives in
    this process: a copy holding the saved state.  Otherwise the state dict, with a warning."""
    ref = _SAVED_MODULES.get(metadata.get("token", "")) if isinstance(metadata, dict) else None
    live = ref() if ref is not None else None
    if live is None:
        warnings.warn(
            f"lucid.load: {source} holds the state dict of a {metadata.get('module')} saved "
            "with lucid.save(model, path); Lucid files hold no code, so the module cannot be "
            "rebuilt here: build it, then model.load_state_dict(lucid.load(path))",
            UserWarning, stacklevel=3)
        return state
    module = copy.deepcopy(live)
    module.load_state_dict(state)
    return module


def load(path: str | os.PathLike | IO[bytes], device: str = "cpu", *,
         map_location: Any = None, weights_only: bool = True) -> Any:
    """Read an object written by :func:`save`; Tensors are placed on ``device``.

    PyTorch's keywords are accepted: ``map_location`` names the device (as ``device``;
    "cuda" means "gpu"), and ``weights_only`` changes nothing -- a Lucid file holds tensors,
    numbers, strings and containers only, never code, so every load is weights-only.

    Raises ``ValueError`` for anything that is not a valid file: truncated, a header length
    beyond the file (or beyond a sane cap), bad JSON, an unknown dtype, byte ranges that are
    negative, overlap, leave gaps or do not match ``shape x itemsize``, a broken tree.
    """
    if map_location is not None:
        device = str(map_location)
    device = check_device(device)
    if isinstance(path, io.TextIOBase):
        raise TypeError(
            f"lucid.load: {getattr(path, 'name', 'the file')!r} is open in text mode; a Lucid "
            "file is binary: open it in binary mode, open(path, 'rb'), or pass the path itself"
        )
    if hasattr(path, "read"):
        raw = path.read()
        source = getattr(path, "name", "the file")
    else:
        source = os.fspath(path)
        with open(source, "rb") as f:
            raw = f.read()
    if not isinstance(raw, (bytes, bytearray)):
        raise TypeError(
            f"lucid.load: reading {getattr(path, 'name', 'the file')!r} gave "
            f"{type(raw).__name__}, not bytes; open the file in binary mode: open(path, 'rb')"
        )
    decoder = _Decoder(bytes(raw), str(source), device)
    out = decoder.run()
    if isinstance(decoder.metadata, dict) and "module" in decoder.metadata:
        module = _as_module(decoder.metadata, out, str(source))
        return module.to(device) if isinstance(module, Module) else module
    return out


class _Decoder:
    def __init__(self, raw: bytes, source: str, device: str) -> None:
        self.raw = raw
        self.source = source
        self.device = device
        self.metadata: Any = None

    def fail(self, message: str) -> ValueError:
        return ValueError(f"lucid.load: {self.source}: {message}")

    def run(self) -> Any:
        header, data_start = self._header()
        metadata = self.metadata = header.pop("__metadata__", None)
        entries = self._entries(header, len(self.raw) - data_start)
        self.arrays = {name: self._array(name, entry, data_start)
                       for name, entry in entries.items()}
        tree = self._flat() if metadata is None else self._tree_text(metadata)
        self.used: set[str] = set()
        try:
            out = self._decode(tree)
        except RecursionError:
            raise self.fail("the object tree is nested too deeply") from None
        unused = sorted(set(self.arrays) - self.used)
        if unused:
            raise self.fail(f"array(s) {unused[:5]} are in the header but not in the tree")
        return out

    # -- the header ----------------------------------------------------------------------
    def _header(self) -> tuple[dict[str, Any], int]:
        raw = self.raw
        if len(raw) < 8:
            raise self.fail(
                f"truncated: {len(raw)} bytes, but a Lucid file starts with an 8-byte header "
                "length"
            )
        (n,) = struct.unpack("<Q", raw[:8])
        if n > MAX_HEADER_BYTES:
            raise self.fail(
                f"header length {n} is larger than the {MAX_HEADER_BYTES}-byte cap: not a Lucid "
                "file, or a corrupt one"
            )
        if n > len(raw) - 8:
            raise self.fail(
                f"header length {n} is larger than the file ({len(raw)} bytes): truncated or "
                "corrupt"
            )
        plain = raw.count(b'"data_offsets"', 8, 8 + n)  # the usual spelling: refused unread
        if plain > MAX_ARRAYS:
            raise self.fail(
                f"the header lists {plain} arrays, more than the cap of {MAX_ARRAYS}: not a "
                "file Lucid writes (a model's state dict has hundreds), refused unread"
            )
        try:
            text = raw[8:8 + n].decode("utf-8")
            # sizes and offsets: 20 digits is 10^20.  Each array's entry is one JSON object
            # (the metadata one more): counted as they are parsed, whatever their spelling
            # ("data\u005foffsets" is "data_offsets" too), and the parse stops past the cap
            header = _json(text, max_digits=20, max_objects=MAX_ARRAYS + 1)
        except UnicodeDecodeError:
            raise self.fail("the header is not UTF-8 text") from None
        except _TooManyObjects:
            raise self.fail(
                f"the header lists more than {MAX_ARRAYS} arrays, the cap: not a file Lucid "
                "writes (a model's state dict has hundreds), refused"
            ) from None
        except (json.JSONDecodeError, _NonStandardJSON) as exc:
            raise self.fail(f"the header is not valid JSON ({exc})") from None
        except RecursionError:
            raise self.fail("the header is nested too deeply") from None
        if not isinstance(header, dict):
            raise self.fail(f"the header must be a JSON object, got {type(header).__name__}")
        return header, 8 + n

    def _entries(self, header: dict[str, Any], data_len: int) -> dict[str, dict[str, Any]]:
        """Check every array's entry, and that the byte ranges tile the data section."""
        spans = []
        for name, entry in header.items():
            if not isinstance(entry, dict) or set(entry) != {"dtype", "shape", "data_offsets"}:
                raise self.fail(
                    f"array {name!r}: an entry must have exactly the keys dtype, shape and "
                    f"data_offsets, got {entry!r:.120}"
                )
            code = entry["dtype"]
            if not isinstance(code, str) or code not in DTYPES:
                raise self.fail(
                    f"array {name!r}: unknown dtype {code!r} (known: {', '.join(DTYPES)})"
                )
            shape = entry["shape"]
            if not isinstance(shape, list) or not all(
                    type(d) is int and d >= 0 for d in shape):
                raise self.fail(
                    f"array {name!r}: shape must be a list of non-negative ints, got {shape!r}"
                )
            offsets = entry["data_offsets"]
            if not (isinstance(offsets, list) and len(offsets) == 2
                    and all(type(o) is int for o in offsets)):
                raise self.fail(
                    f"array {name!r}: data_offsets must be [begin, end] ints, got {offsets!r}"
                )
            begin, end = offsets
            if begin < 0 or end < begin:
                raise self.fail(
                    f"array {name!r}: data_offsets [{begin}, {end}] must satisfy "
                    "0 <= begin <= end"
                )
            if end > data_len:
                raise self.fail(
                    f"array {name!r}: bytes [{begin}, {end}) run past the end of the data "
                    f"section ({data_len} bytes): truncated or corrupt"
                )
            expected = math.prod(shape) * DTYPES[code].itemsize
            if end - begin != expected:
                raise self.fail(
                    f"array {name!r}: shape {tuple(shape)} of {code} needs {expected} bytes, but "
                    f"its byte range [{begin}, {end}) holds {end - begin}"
                )
            spans.append((begin, end, name))
        spans.sort()
        position, previous = 0, None
        for begin, end, name in spans:
            if begin < position:
                raise self.fail(
                    f"arrays {previous!r} and {name!r} have overlapping byte ranges "
                    f"(... {position}) and [{begin}, {end})"
                )
            if begin > position:
                raise self.fail(f"bytes [{position}, {begin}) belong to no array")
            position, previous = end, name
        if position != data_len:
            raise self.fail(
                f"the arrays cover {position} bytes but the data section has {data_len}: "
                "trailing bytes"
            )
        return {name: header[name] for _, _, name in spans}

    def _array(self, name: str, entry: dict[str, Any], data_start: int) -> np.ndarray:
        dtype = DTYPES[entry["dtype"]]
        begin, end = entry["data_offsets"]
        arr = np.frombuffer(self.raw, dtype=dtype, count=(end - begin) // dtype.itemsize,
                            offset=data_start + begin)
        if dtype == np.bool_ and arr.view(np.uint8).max(initial=0) > 1:
            raise self.fail(f"array {name!r}: a BOOL array holds bytes other than 0 and 1")
        try:
            return arr.reshape(entry["shape"]).astype(dtype.newbyteorder("="))  # writable copy
        except (ValueError, OverflowError) as exc:  # e.g. shape [0, 10**30]
            raise self.fail(f"array {name!r}: shape {entry['shape']} is unusable ({exc})") from None

    # -- the tree ------------------------------------------------------------------------
    def _tree_text(self, metadata: Any) -> Any:
        if not isinstance(metadata, dict) or not all(
                isinstance(v, str) for v in metadata.values()):
            raise self.fail("__metadata__ must be an object of strings")
        if metadata.get("format") != FORMAT or "tree" not in metadata:
            return self._flat()  # metadata from another program
        if metadata.get("version") != VERSION:
            raise self.fail(
                f"format version {metadata.get('version')!r}; this Lucid reads version {VERSION}"
            )
        try:
            return _json(metadata["tree"], max_digits=4300)  # Python's own int-string limit
        except (json.JSONDecodeError, _NonStandardJSON) as exc:
            raise self.fail(f"the object tree is not valid JSON ({exc})") from None
        except RecursionError:
            raise self.fail("the object tree is nested too deeply") from None

    def _flat(self) -> Any:
        """A safetensors file written by another program: a dict of its arrays as Tensors,
        in file order."""
        return {"dict": [[name, {"tensor": name, "class": "Tensor", "requires_grad": False}]
                         for name in self.arrays]}

    def _decode(self, node: Any, depth: int = 0) -> Any:
        if node is None or isinstance(node, (bool, int, float, str)):
            return node
        if depth > MAX_DEPTH:
            raise self.fail(f"the object tree nests deeper than the cap of {MAX_DEPTH} levels")
        depth += 1
        if isinstance(node, list):
            return [self._decode(item, depth) for item in node]
        if not isinstance(node, dict):
            raise self.fail(f"unexpected node in the object tree: {node!r:.80}")
        if "tensor" in node:
            if not set(node) <= {"tensor", "class", "requires_grad"}:
                raise self.fail(f"bad tensor node {node!r:.120}")
            cls = node.get("class", "Tensor")
            grad = node.get("requires_grad", False)
            if cls not in _TENSOR_CLASSES or not isinstance(grad, bool):
                raise self.fail(f"bad tensor node {node!r:.120}")
            name = node["tensor"]
            return self._tensor(self._take(name), cls, grad, name)
        if len(node) != 1:
            raise self.fail(f"unexpected node in the object tree: {node!r:.120}")
        ((tag, body),) = node.items()
        if tag == "dict":
            if not isinstance(body, list):
                raise self.fail("a dict node must hold a list of [key, value] pairs")
            out: dict[Any, Any] = {}
            for pair in body:
                if not (isinstance(pair, list) and len(pair) == 2) or isinstance(
                        pair[0], bool) or not isinstance(pair[0], (str, int)):
                    raise self.fail(f"bad dict item {pair!r:.80}: expected [str or int key, "
                                    "value]")
                if pair[0] in out:
                    raise self.fail(f"duplicate dict key {pair[0]!r}")
                out[pair[0]] = self._decode(pair[1], depth)
            return out
        if tag == "tuple":
            if not isinstance(body, list):
                raise self.fail("a tuple node must hold a list")
            return tuple(self._decode(item, depth) for item in body)
        if tag == "float":
            if body not in ("nan", "inf", "-inf"):
                raise self.fail(f"bad float node {body!r}")
            return float(body)
        if tag == "ndarray":
            return self._take(body)
        if tag == "scalar":
            arr = self._take(body)
            if arr.shape != ():
                raise self.fail(f"scalar {body!r} has shape {arr.shape}, expected ()")
            return arr[()]
        raise self.fail(f"unknown node {tag!r} in the object tree")

    def _take(self, name: Any) -> np.ndarray:
        if not isinstance(name, str) or name not in self.arrays:
            raise self.fail(f"the object tree refers to a missing array {name!r:.80}")
        if name in self.used:
            raise self.fail(f"the object tree uses array {name!r} twice")
        self.used.add(name)
        return self.arrays[name]

    def _tensor(self, arr: np.ndarray, cls: str, requires_grad: bool, name: str) -> Tensor:
        try:
            dtype = to_numeric_type(arr.dtype)
            if cls == "Tensor":
                return Tensor(arr, requires_grad=requires_grad, dtype=dtype, device=self.device)
            return _TENSOR_CLASSES[cls](arr, dtype=dtype, device=self.device)
        except TypeError as exc:  # e.g. an integer Parameter: it could not require grad
            raise self.fail(f"array {name!r} cannot be a {cls}: {exc}") from None


class _NonStandardJSON(ValueError):
    pass


class _TooManyObjects(Exception):
    """The JSON text holds more objects than the caller allows."""


def _json(text: str, max_digits: int, max_objects: int | None = None) -> Any:
    """JSON as a Lucid file may hold it: no NaN/Infinity, no integer over ``max_digits``, and
    (if given) at most ``max_objects`` objects ``{...}`` -- the parse stops at the one past."""

    def parse_int(digits: str) -> int:
        n = len(digits.lstrip("-"))
        if n > max_digits:
            raise _NonStandardJSON(f"an integer of {n} digits, more than {max_digits}")
        return int(digits)

    count = 0

    def make_object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        nonlocal count
        count += 1
        if max_objects is not None and count > max_objects:
            raise _TooManyObjects
        return dict(pairs)

    return json.loads(text, parse_constant=_reject_constant, parse_int=parse_int,
                      object_pairs_hook=make_object)


def _reject_constant(name: str) -> Any:
    """Python's json reads NaN/Infinity, which JSON does not have; a Lucid header never
    contains them."""
    raise _NonStandardJSON(f"{name} is not JSON")

"""A reader for the small part of the pickle format that the CIFAR batch files use.

CIFAR-10's "python version" stores each batch as a pickled dict (written by Python 2's
``cPickle``): ``{"data": uint8 array (10000, 3072), "labels": [6, 9, ...], "batch_label": ...,
"filenames": [...]}``.  Python's own ``pickle.load`` would read it, but unpickling *runs code*:
a pickle names functions to call, and a crafted file can name any function in the interpreter.
Lucid never does that.  This module walks the opcodes itself and builds only

* dicts, lists and tuples; ints, floats, bools, None; strings and bytes;
* NumPy arrays and scalars of booleans, integers and floats, from their raw bytes.

A pickle that asks for anything else -- another class or function, an object array, a
structured dtype, an opcode outside this list -- is refused with a ``ValueError`` that says
what it asked for.  Nothing named in the file is imported or called: the few NumPy
reconstructors the format refers to are recognised by name and replaced by the code below.

Strings written by Python 2 come back as ``str``, decoded as Latin-1 (what
``pickle.load(f, encoding="latin1")`` gives, and what torchvision uses), so the keys are
``"data"``, ``"labels"``.  Bytes written by Python 3 come back as ``bytes``.
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any

import numpy as np

__all__ = ["read_batch"]

# The numpy reconstructors the format names, under the module paths NumPy has used for them.
_NUMPY_CORE = ("numpy.core.multiarray", "numpy._core.multiarray",
               "numpy.core._multiarray_umath", "numpy._core._multiarray_umath",
               "numpy.core._internal")
# dtype codes we build: bool, signed/unsigned ints and floats of 1, 2, 4 or 8 bytes
_DTYPE_CODE = re.compile(r"^[biuf][1248]$")


class _Global:
    """A name a pickle refers to (``module.name``), never imported: REDUCE looks it up."""

    def __init__(self, module: str, name: str) -> None:
        self.module, self.name = module, name

    @property
    def key(self) -> str:
        return f"{self.module}.{self.name}"


class _Dtype:
    """A NumPy dtype under construction: its code from REDUCE, its byte order from BUILD."""

    def __init__(self, code: str) -> None:
        self.code, self.order = code, "|"

    def resolve(self) -> np.dtype:
        dtype = np.dtype(self.code)
        return dtype.newbyteorder(self.order) if self.order in "<>" else dtype


class _Array:
    """An array under construction: ``_reconstruct`` makes it empty, BUILD fills it."""

    def __init__(self) -> None:
        self.array: np.ndarray | None = None


class _Reader:
    def __init__(self, data: bytes, source: str) -> None:
        self.data, self.source, self.pos = data, source, 0
        self.stack: list[Any] = []
        self.marks: list[int] = []
        self.memo: dict[int, Any] = {}

    # -- errors and raw reads ------------------------------------------------------------

    def fail(self, why: str) -> ValueError:
        return ValueError(
            f"{self.source}: cannot read this pickle safely: {why}. Lucid reads only dicts of "
            "numbers, strings, lists and NumPy arrays (the CIFAR batch files) and never runs "
            "code from a file; if the file is meant to be a CIFAR batch, it is damaged: delete "
            "it and download it again"
        )

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > len(self.data):
            raise self.fail(f"the file ends early (byte {self.pos} needs {n} more bytes)")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return out

    def unpack(self, fmt: str) -> Any:
        return struct.unpack(fmt, self.take(struct.calcsize(fmt)))[0]

    def line(self) -> str:
        end = self.data.find(b"\n", self.pos)
        if end < 0:
            raise self.fail(f"a text argument at byte {self.pos} has no end of line")
        out = self.data[self.pos:end].decode("latin1")
        self.pos = end + 1
        return out

    def pop_mark(self) -> list[Any]:
        if not self.marks:
            raise self.fail(f"an opcode at byte {self.pos - 1} needs a MARK that is not there")
        start = self.marks.pop()
        items, self.stack[start:] = self.stack[start:], []
        return items

    def pop(self, n: int = 1) -> list[Any]:
        if len(self.stack) < n:
            raise self.fail(f"the opcode at byte {self.pos - 1} needs {n} values on the stack")
        items, self.stack[len(self.stack) - n:] = self.stack[len(self.stack) - n:], []
        return items

    # -- the walk ------------------------------------------------------------------------

    def run(self) -> Any:
        while True:
            at = self.pos
            code = self.take(1)
            op = _OPCODES.get(code)
            if op is None:
                raise self.fail(f"opcode {code!r} at byte {at} is not supported")
            if op is _stop:
                if len(self.stack) != 1 or self.marks:
                    raise self.fail("the stack does not end with exactly one value")
                return _finish(self, self.stack.pop())
            op(self)


# -- opcode handlers (one small function each; the table below maps bytes to them) ---------

def _stop(r: _Reader) -> None:  # handled in run()
    raise AssertionError


def _push(value: Any):
    def op(r: _Reader) -> None:
        r.stack.append(value)
    return op


def _push_read(read):
    def op(r: _Reader) -> None:
        r.stack.append(read(r))
    return op


def _proto(r: _Reader) -> None:
    version = r.take(1)[0]
    if version > 5:
        raise r.fail(f"pickle protocol {version} is newer than 5")


def _frame(r: _Reader) -> None:
    r.take(8)  # a frame's length: the opcodes follow as usual


def _mark(r: _Reader) -> None:
    r.marks.append(len(r.stack))


def _int_line(r: _Reader) -> int | bool:
    text = r.line()
    if text in ("00", "01"):  # protocols 0 and 1 write False/True this way
        return text == "01"
    try:
        return int(text)
    except ValueError:
        raise r.fail(f"INT argument {text!r} is not an integer") from None


def _long_line(r: _Reader) -> int:
    text = r.line()
    try:
        return int(text[:-1] if text.endswith("L") else text)
    except ValueError:
        raise r.fail(f"LONG argument {text!r} is not an integer") from None


def _long(nbytes_fmt: str):
    def read(r: _Reader) -> int:
        return int.from_bytes(r.take(r.unpack(nbytes_fmt)), "little", signed=True)
    return read


def _text(nbytes_fmt: str, kind: str):
    def read(r: _Reader) -> str | bytes:
        raw = r.take(r.unpack(nbytes_fmt))
        if kind == "bytes":
            return bytes(raw)
        if kind == "py2str":  # Python 2 ``str``: Latin-1, as pickle.load(encoding="latin1")
            return raw.decode("latin1")
        try:
            return raw.decode("utf-8")
        except UnicodeDecodeError:
            raise r.fail("a unicode string is not valid UTF-8") from None
    return read


def _collection(build):
    def op(r: _Reader) -> None:
        r.stack.append(build(r, r.pop_mark()))
    return op


def _dict_from(r: _Reader, items: list[Any]) -> dict:
    if len(items) % 2:
        raise r.fail("a dict has a key without a value")
    out: dict = {}
    for k, v in zip(items[::2], items[1::2]):
        _setitem(r, out, k, v)
    return out


def _setitem(r: _Reader, target: Any, key: Any, value: Any) -> None:
    if not isinstance(target, dict):
        raise r.fail(f"SETITEM on a {type(target).__name__}, not a dict")
    if not isinstance(key, (str, bytes, int)):
        raise r.fail(f"a dict key of type {type(key).__name__}")
    target[key] = value


def _setitems(r: _Reader) -> None:
    items = r.pop_mark()
    (target,) = r.pop()
    r.stack.append(target)
    if len(items) % 2:
        raise r.fail("SETITEMS has a key without a value")
    for k, v in zip(items[::2], items[1::2]):
        _setitem(r, target, k, v)


def _setitem_op(r: _Reader) -> None:
    target, key, value = r.pop(3)
    r.stack.append(target)
    _setitem(r, target, key, value)


def _append(r: _Reader) -> None:
    target, value = r.pop(2)
    if not isinstance(target, list):
        raise r.fail(f"APPEND to a {type(target).__name__}, not a list")
    target.append(value)
    r.stack.append(target)


def _appends(r: _Reader) -> None:
    items = r.pop_mark()
    (target,) = r.pop()
    if not isinstance(target, list):
        raise r.fail(f"APPENDS to a {type(target).__name__}, not a list")
    target.extend(items)
    r.stack.append(target)


def _tuple_n(n: int):
    def op(r: _Reader) -> None:
        r.stack.append(tuple(r.pop(n)))
    return op


def _put(read_index):
    def op(r: _Reader) -> None:
        if not r.stack:
            raise r.fail("PUT with an empty stack")
        r.memo[read_index(r)] = r.stack[-1]
    return op


def _memoize(r: _Reader) -> None:
    if not r.stack:
        raise r.fail("MEMOIZE with an empty stack")
    r.memo[len(r.memo)] = r.stack[-1]


def _get(read_index):
    def op(r: _Reader) -> None:
        i = read_index(r)
        if i not in r.memo:
            raise r.fail(f"GET of memo entry {i}, which was never stored")
        r.stack.append(r.memo[i])
    return op


def _text_index(r: _Reader) -> int:
    text = r.line()
    if not text.isdigit():
        raise r.fail(f"memo index {text!r} is not a number")
    return int(text)


def _global(r: _Reader) -> None:
    module = r.line()
    r.stack.append(_Global(module, r.line()))


def _stack_global(r: _Reader) -> None:
    module, name = r.pop(2)
    if not (isinstance(module, str) and isinstance(name, str)):
        raise r.fail("STACK_GLOBAL needs two strings")
    r.stack.append(_Global(module, name))


def _reduce(r: _Reader) -> None:
    func, args = r.pop(2)
    if not isinstance(func, _Global) or not isinstance(args, tuple):
        raise r.fail("REDUCE needs a name and a tuple of arguments")
    build = _CONSTRUCTORS.get((func.module, func.name))
    if build is None and func.module in _NUMPY_CORE:
        build = _CONSTRUCTORS.get(("numpy.core.multiarray", func.name))
    if build is None:
        raise r.fail(f"it asks for {func.key}, which this reader does not construct")
    r.stack.append(build(r, args))


def _build(r: _Reader) -> None:
    target, state = r.pop(2)
    if isinstance(target, _Dtype):
        _build_dtype(r, target, state)
    elif isinstance(target, _Array):
        target.array = _build_array(r, state)
    else:
        raise r.fail(f"BUILD (setting an object's state) on a {type(target).__name__}")
    r.stack.append(target)


# -- the NumPy reconstructors, written here instead of imported ----------------------------

def _new_array(r: _Reader, args: tuple) -> _Array:
    """``_reconstruct(ndarray, (0,), b"b")``: an empty array that BUILD fills."""
    if not (len(args) == 3 and isinstance(args[0], _Global) and args[0].key == "numpy.ndarray"):
        raise r.fail("_reconstruct is asked for something other than a plain numpy.ndarray")
    return _Array()


def _new_dtype(r: _Reader, args: tuple) -> _Dtype:
    """``dtype("u1", False, True)``: a dtype from its code (booleans, ints, floats only)."""
    if not args or not isinstance(args[0], str) or not _DTYPE_CODE.match(args[0]):
        raise r.fail(f"dtype {args[:1]!r} is not a boolean, integer or float type")
    return _Dtype(args[0])


def _build_dtype(r: _Reader, target: _Dtype, state: Any) -> None:
    # NumPy's dtype state, by length: (byteorder, subarray, fields, elsize, alignment) in the
    # oldest files; a version first in 6-tuples; names after the subarray from 7 on.  Only
    # plain dtypes are built: no sub-arrays, no fields.
    if not isinstance(state, tuple) or len(state) < 5:
        raise r.fail("a dtype's state is not a tuple")
    if len(state) == 5:
        order, sub, names, fields = state[0], state[1], None, state[2]
    elif len(state) == 6:
        order, sub, names, fields = state[1], state[2], None, state[3]
    else:
        order, sub, names, fields = state[1:5]
    if order not in ("<", ">", "|", "=") or sub is not None or names is not None or fields:
        raise r.fail("a structured or sub-array dtype")
    target.order = order


def _dtype_of(r: _Reader, value: Any) -> np.dtype:
    if not isinstance(value, _Dtype):
        raise r.fail("an array's dtype is not a dtype")
    return value.resolve()


def _shape_of(r: _Reader, value: Any) -> tuple[int, ...]:
    if not (isinstance(value, tuple) and all(isinstance(n, int) and not isinstance(n, bool)
                                             and n >= 0 for n in value)):
        raise r.fail(f"an array's shape {value!r} is not a tuple of sizes")
    return value


def _from_raw(r: _Reader, raw: Any, dtype: np.dtype, shape: tuple[int, ...],
              fortran: bool) -> np.ndarray:
    if isinstance(raw, str):  # Python 2 wrote the bytes as a str; Latin-1 gives them back
        raw = raw.encode("latin1")
    if not isinstance(raw, (bytes, bytearray)):
        raise r.fail("an array's values are not raw bytes (an object array?)")
    expected = math.prod(shape) * dtype.itemsize   # exact: no int64 overflow to fool it
    if len(raw) != expected:
        raise r.fail(f"an array of shape {shape} and dtype {dtype} needs {expected} bytes, "
                     f"the file holds {len(raw)}")
    # a writable array of its own, in native byte order (as NumPy's own unpickling gives)
    flat = np.frombuffer(raw, dtype=dtype).astype(dtype.newbyteorder("="))
    return flat.reshape(shape, order="F" if fortran else "C")


def _build_array(r: _Reader, state: Any) -> np.ndarray:
    # state: (version, shape, dtype, is_fortran, raw bytes); older files leave out the version
    if not isinstance(state, tuple) or len(state) not in (4, 5):
        raise r.fail("an array's state is not (shape, dtype, is_fortran, data)")
    shape, dtype, fortran, raw = state[-4:]
    return _from_raw(r, raw, _dtype_of(r, dtype), _shape_of(r, shape), bool(fortran))


def _frombuffer(r: _Reader, args: tuple) -> _Array:
    """Protocol 5's ``_frombuffer(buffer, dtype, shape, order)``."""
    if len(args) != 4 or args[3] not in ("C", "F"):
        raise r.fail("_frombuffer needs (buffer, dtype, shape, order)")
    out = _Array()
    out.array = _from_raw(r, args[0], _dtype_of(r, args[1]), _shape_of(r, args[2]),
                          args[3] == "F")
    return out


def _scalar(r: _Reader, args: tuple) -> np.generic:
    """``scalar(dtype, raw)``: one NumPy number."""
    if len(args) != 2:
        raise r.fail("scalar needs (dtype, bytes)")
    return _from_raw(r, args[1], _dtype_of(r, args[0]), (), False)[()]


def _encode(r: _Reader, args: tuple) -> bytes:
    """``_codecs.encode(text, "latin1")``: how protocol 2 writes Python 3 bytes."""
    if len(args) != 2 or not isinstance(args[0], str) or args[1] not in ("latin1", "latin-1"):
        raise r.fail("_codecs.encode is asked for something other than Latin-1 bytes")
    return args[0].encode("latin1")


def _empty_bytes(r: _Reader, args: tuple) -> bytes:
    if args:
        raise r.fail("bytes() with arguments")
    return b""


_CONSTRUCTORS = {
    ("numpy.core.multiarray", "_reconstruct"): _new_array,
    ("numpy.core.multiarray", "scalar"): _scalar,
    ("numpy", "dtype"): _new_dtype,
    ("numpy.core.numeric", "_frombuffer"): _frombuffer,
    ("numpy._core.numeric", "_frombuffer"): _frombuffer,
    ("_codecs", "encode"): _encode,
    ("__builtin__", "bytes"): _empty_bytes,
    ("builtins", "bytes"): _empty_bytes,
}

_OPCODES = {
    b".": _stop, b"\x80": _proto, b"\x95": _frame, b"(": _mark,
    b"N": _push(None), b"\x88": _push(True), b"\x89": _push(False),
    b"I": _push_read(_int_line), b"L": _push_read(_long_line),
    b"J": _push_read(lambda r: r.unpack("<i")),
    b"K": _push_read(lambda r: r.unpack("<B")),
    b"M": _push_read(lambda r: r.unpack("<H")),
    b"\x8a": _push_read(_long("<B")), b"\x8b": _push_read(_long("<i")),
    b"G": _push_read(lambda r: r.unpack(">d")),
    b"U": _push_read(_text("<B", "py2str")), b"T": _push_read(_text("<i", "py2str")),
    b"\x8c": _push_read(_text("<B", "utf8")), b"X": _push_read(_text("<I", "utf8")),
    b"\x8d": _push_read(_text("<Q", "utf8")),
    b"C": _push_read(_text("<B", "bytes")), b"B": _push_read(_text("<I", "bytes")),
    b"\x8e": _push_read(_text("<Q", "bytes")), b"\x96": _push_read(_text("<Q", "bytes")),
    b"}": _push_read(lambda r: {}), b"]": _push_read(lambda r: []),
    b")": _push(()),
    b"d": _collection(_dict_from), b"l": _collection(lambda r, items: items),
    b"t": _collection(lambda r, items: tuple(items)),
    b"\x85": _tuple_n(1), b"\x86": _tuple_n(2), b"\x87": _tuple_n(3),
    b"s": _setitem_op, b"u": _setitems, b"a": _append, b"e": _appends,
    b"p": _put(_text_index), b"q": _put(lambda r: r.unpack("<B")),
    b"r": _put(lambda r: r.unpack("<I")), b"\x94": _memoize,
    b"g": _get(_text_index), b"h": _get(lambda r: r.unpack("<B")),
    b"j": _get(lambda r: r.unpack("<I")),
    b"c": _global, b"\x93": _stack_global, b"R": _reduce, b"b": _build,
}

_LEAVES = (str, bytes, int, float, bool, type(None), np.ndarray, np.generic)


def _finish(r: _Reader, value: Any) -> dict:
    """The result with every array under construction replaced by its array; a dict."""
    if not isinstance(value, dict):
        raise r.fail(f"the file holds a {type(value).__name__}, not a dict")
    return _resolve(r, value, depth=0)


def _resolve(r: _Reader, value: Any, depth: int) -> Any:
    if depth > 4:
        raise r.fail("values nest more than four levels deep")
    if isinstance(value, _Array):
        if value.array is None:
            raise r.fail("an array was started but never filled")
        return value.array
    if isinstance(value, dict):
        return {k: _resolve(r, v, depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [_resolve(r, v, depth + 1) for v in value]
        return items if isinstance(value, list) else tuple(items)
    if not isinstance(value, _LEAVES):
        raise r.fail(f"a value of type {type(value).__name__} is left over")
    return value


def read_batch(data: bytes, source: str = "file") -> dict:
    """The dict stored in ``data`` (the bytes of a pickle file), built without running code.

    ``source`` names the file in error messages.  Raises ``ValueError`` for anything outside
    the subset described in this module's docstring.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"read_batch: data must be bytes, got {type(data).__name__}")
    return _Reader(bytes(data), source).run()

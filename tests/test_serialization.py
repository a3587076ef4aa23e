"""lucid.save / lucid.load: bit-exact round trips (hypothesis), devices, module and optimizer
state, and a clear ValueError for every kind of broken or crafted file."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import pathlib
import re
import struct

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lucid
from lucid.nn import Buffer, Module, Parameter
from lucid.optim import Adam
from lucid.serialization import DTYPES, MAX_HEADER_BYTES, load, save

HAS_MLX = importlib.util.find_spec("mlx") is not None
needs_mlx = pytest.mark.skipif(not HAS_MLX, reason="MLX is not installed")
DEVICES = ["cpu", pytest.param("gpu", marks=needs_mlx)]
ROOT = pathlib.Path(__file__).resolve().parents[1]


def _round_trip(obj, device="cpu"):
    buf = io.BytesIO()
    save(obj, buf)
    buf.seek(0)
    return load(buf, device=device)


def _bits(a):
    """An array's exact identity: dtype, shape and bytes (NaN payloads and -0.0 included)."""
    a = np.asarray(a)
    return a.dtype.str, a.shape, a.tobytes()


def _same(a, b):
    """Structural equality with arrays compared bit for bit."""
    if isinstance(a, lucid.Tensor):
        assert isinstance(b, lucid.Tensor) and type(b) is type(a)
        assert b.requires_grad == a.requires_grad and b.dtype == a.dtype
        assert _bits(a.numpy()) == _bits(b.numpy())
    elif isinstance(a, (np.ndarray, np.generic)):
        assert type(b) is type(a) and _bits(a) == _bits(b)
    elif isinstance(a, dict):
        assert type(b) is dict and list(a) == list(b)
        for k in a:
            _same(a[k], b[k])
    elif isinstance(a, (list, tuple)):
        assert type(b) is type(a) and len(a) == len(b)
        for x, y in zip(a, b):
            _same(x, y)
    elif isinstance(a, float) and a != a:
        assert isinstance(b, float) and b != b
    else:
        assert type(b) is type(a) and b == a


# --------------------------------------------------------------------------------------------
# round trips

DTYPE_NAMES = ["float16", "float32", "float64", "int8", "int16", "int32", "int64", "uint8",
               "bool", "complex64", "complex128"]

arrays = st.sampled_from(DTYPE_NAMES).flatmap(lambda dt: hnp.arrays(
    np.dtype(dt), hnp.array_shapes(min_dims=0, max_dims=3, min_side=0, max_side=4),
    elements=None if dt == "bool" else hnp.from_dtype(np.dtype(dt), allow_nan=True,
                                                      allow_infinity=True)))
leaves = st.one_of(
    arrays,
    st.none(), st.booleans(), st.integers(-2**70, 2**70), st.text(max_size=8),
    st.floats(allow_nan=True, allow_infinity=True),
)
keys = st.one_of(st.text(max_size=6), st.integers(-5, 5))
trees = st.recursive(
    leaves,
    lambda kids: st.one_of(
        st.lists(kids, max_size=4),
        st.lists(kids, max_size=3).map(tuple),
        st.dictionaries(keys, kids, max_size=4),
    ),
    max_leaves=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.dictionaries(st.text(min_size=1, max_size=10), arrays, max_size=6))
def test_state_dict_of_arrays_round_trips_bit_exactly(sd):
    out = _round_trip(sd)
    _same(sd, out)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(trees)
def test_nested_structures_round_trip(obj):
    _same(obj, _round_trip(obj))


@pytest.mark.parametrize("dtype", DTYPE_NAMES)
def test_tensor_round_trip_every_dtype(dtype):
    rng = np.random.default_rng(0)
    values = (rng.standard_normal((3, 4)) * 100).astype(dtype)
    if dtype.startswith("float"):
        values[0, :3] = [np.nan, -0.0, np.inf]
        values.view(np.uint8)[-1] ^= 1  # an arbitrary last bit
    t = lucid.Tensor(values)
    back = _round_trip(t)
    assert isinstance(back, lucid.Tensor) and back.device == "cpu"
    assert _bits(back.numpy()) == _bits(values)


def test_nan_payloads_survive():
    payload = np.array([0x7FF8_0000_DEAD_BEEF], dtype=np.uint64).view(np.float64)
    back = _round_trip({"x": payload})["x"]
    assert back.view(np.uint64)[0] == 0x7FF8_0000_DEAD_BEEF


@pytest.mark.parametrize("device", DEVICES)
def test_tensor_lands_on_the_requested_device(device):
    t = lucid.Tensor(np.arange(6, dtype=np.float32).reshape(2, 3), requires_grad=True)
    back = _round_trip(t, device=device)
    assert back.device == device and back.requires_grad and back.dtype == lucid.Float32
    np.testing.assert_array_equal(back.numpy(), t.numpy())


def test_parameter_and_buffer_classes_come_back():
    obj = {"w": Parameter(np.ones(2)), "rm": Buffer(np.zeros(2)), "t": lucid.Tensor([1, 2]),
           "np": np.ones(2), "scalar": np.float32(2.5), "step": 3}
    _same(obj, _round_trip(obj))


@needs_mlx
def test_gpu_tensors_saved_then_loaded_on_cpu_and_gpu():
    sd = {"w": lucid.Tensor(np.linspace(0, 1, 6, dtype=np.float32), device="gpu"),
          "b": Parameter(np.ones(2, np.float16), device="gpu")}
    on_cpu = _round_trip(sd)
    assert all(t.device == "cpu" for t in on_cpu.values())
    assert on_cpu["b"].dtype == lucid.Float16 and isinstance(on_cpu["b"], Parameter)
    np.testing.assert_array_equal(on_cpu["w"].numpy(), sd["w"].numpy())
    on_gpu = _round_trip(sd, device="gpu")
    assert on_gpu["w"].device == "gpu"


class _Net(Module):
    def __init__(self, seed=0):
        super().__init__()
        rng = np.random.default_rng(seed)
        self.w = Parameter(rng.standard_normal((3, 2)).astype(np.float32))
        self.b = Parameter(rng.standard_normal(2).astype(np.float32))
        self.steps = Buffer(np.array([7], np.int64))


@pytest.mark.parametrize("device", DEVICES)
def test_module_state_dict_to_file_and_back(tmp_path, device):
    net = _Net(0).to(device)
    path = tmp_path / "net.lucid"
    save(net.state_dict(), path)  # a pathlib.Path
    other = _Net(1)
    other.load_state_dict(load(str(path)))  # a str
    for key, value in net.state_dict().items():
        assert _bits(other.state_dict()[key]) == _bits(value)


def test_optimizer_state_dict_keeps_int_keys_and_betas_tuple():
    p = Parameter(np.ones(3))
    opt = Adam([p], lr=0.1, amsgrad=True)
    p.grad = np.ones(3)
    opt.step()
    sd = _round_trip(opt.state_dict())
    assert list(sd["state"]) == [0] and sd["param_groups"][0]["betas"] == (0.9, 0.999)
    _same(opt.state_dict(), sd)


def test_file_is_safetensors_layout():
    buf = io.BytesIO()
    save({"fc.weight": np.ones((2, 2), np.float32), "fc.bias": np.zeros(2, np.int64)}, buf)
    raw = buf.getvalue()
    (n,) = struct.unpack("<Q", raw[:8])
    assert n % 8 == 0
    header = json.loads(raw[8:8 + n])
    assert header["fc.weight"] == {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}
    assert header["fc.bias"] == {"dtype": "I64", "shape": [2], "data_offsets": [16, 32]}
    assert header["__metadata__"]["format"] == "lucid"
    assert len(raw) == 8 + n + 32
    assert raw[8 + n:8 + n + 16] == np.ones((2, 2), "<f4").tobytes()


def test_a_plain_safetensors_file_loads_as_a_dict_of_tensors():
    data = np.arange(4, dtype="<f4").tobytes() + np.array([1, 0], "<i2").tobytes()
    header = {"b": {"dtype": "I16", "shape": [2], "data_offsets": [16, 20]},
              "a": {"dtype": "F32", "shape": [2, 2], "data_offsets": [0, 16]}}
    out = load(io.BytesIO(_craft(header, data)))
    assert list(out) == ["a", "b"]
    np.testing.assert_array_equal(out["a"].numpy(), [[0, 1], [2, 3]])
    assert out["b"].dtype == lucid.Int16


# --------------------------------------------------------------------------------------------
# what cannot be saved


@pytest.mark.parametrize("obj,exc,match", [
    ({"m": _Net()}, TypeError, "state_dict"),  # (a whole module saves its state: a warning)
    ({"f": lambda: 0}, TypeError, "cannot save a function"),
    ({"s": {1, 2}}, TypeError, "cannot save a set"),
    ({1.5: np.ones(1)}, TypeError, "keys must be str or int"),
    ({True: 1}, TypeError, "keys must be str or int"),
    ({"o": np.array([object()])}, TypeError, "dtype object"),
    ({"u": np.array(["abc"])}, TypeError, "dtype <U3"),
])
def test_unsaveable_objects_raise_type_error(obj, exc, match):
    with pytest.raises(exc, match=match):
        save(obj, io.BytesIO())


def test_cycles_are_refused():
    a = {"x": 1}
    a["self"] = [a]
    with pytest.raises(ValueError, match="cycle"):
        save(a, io.BytesIO())


def test_shared_values_are_fine():
    w = np.ones(2)
    out = _round_trip({"a": w, "b": w, "c": [w]})
    assert out["a"] is not out["b"]
    np.testing.assert_array_equal(out["c"][0], w)


# --------------------------------------------------------------------------------------------
# broken and crafted files


def _craft(header, data=b"", length=None):
    head = json.dumps(header).encode() if not isinstance(header, bytes) else header
    return struct.pack("<Q", len(head) if length is None else length) + head + data


def _tree(node):
    return {"format": "lucid", "version": "1", "tree": json.dumps(node)}


def _load_bytes(raw):
    return load(io.BytesIO(raw))


GOOD = {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
GOOD_DATA = np.ones(2, "<f4").tobytes()

CRAFTED = {
    "empty file": (b"", "truncated"),
    "7 bytes": (b"\x01" * 7, "truncated"),
    "header longer than the file": (_craft(GOOD, GOOD_DATA, length=10_000), "larger than the file"),
    "header beyond the cap": (struct.pack("<Q", MAX_HEADER_BYTES + 1) + b"{}",
                              "larger than the"),
    "2**64-1 header length": (b"\xff" * 8 + b"{}", "cap"),
    "invalid JSON": (_craft(b'{"a": '), "not valid JSON"),
    "not UTF-8": (_craft(b'{"\xff": 1}'), "not UTF-8"),
    "NaN in the header": (_craft(b'{"a": NaN}'), "not valid JSON"),
    "header is a list": (_craft(b"[1, 2]"), "must be a JSON object"),
    "entry is not an object": (_craft({"a": 3}), "exactly the keys"),
    "entry with an extra key": (_craft({"a": {**GOOD["a"], "x": 1}}, GOOD_DATA),
                                "exactly the keys"),
    "unknown dtype": (_craft({"a": {**GOOD["a"], "dtype": "F128"}}, GOOD_DATA), "unknown dtype"),
    "lowercase dtype": (_craft({"a": {**GOOD["a"], "dtype": "f32"}}, GOOD_DATA), "unknown dtype"),
    "negative dim": (_craft({"a": {**GOOD["a"], "shape": [-2]}}, GOOD_DATA), "non-negative ints"),
    "bool dim": (_craft({"a": {**GOOD["a"], "shape": [True, 2]}}, GOOD_DATA), "non-negative"),
    "float dim": (_craft({"a": {**GOOD["a"], "shape": [2.0]}}, GOOD_DATA), "non-negative ints"),
    "negative offset": (_craft({"a": {**GOOD["a"], "data_offsets": [-8, 0]}}, GOOD_DATA),
                        "0 <= begin <= end"),
    "end before begin": (_craft({"a": {**GOOD["a"], "data_offsets": [8, 0]}}, GOOD_DATA),
                         "0 <= begin <= end"),
    "offsets not a pair": (_craft({"a": {**GOOD["a"], "data_offsets": [0]}}, GOOD_DATA),
                           r"\[begin, end\]"),
    "offset past the data": (_craft({"a": {**GOOD["a"], "data_offsets": [0, 8]}}, b"\0" * 4),
                             "past the end"),
    "shape x itemsize mismatch": (_craft({"a": {**GOOD["a"], "shape": [3]}}, GOOD_DATA),
                                  "needs 12 bytes"),
    "huge shape": (_craft({"a": {**GOOD["a"], "shape": [2**62, 2**62]}}, GOOD_DATA),
                   "needs"),
    "overlapping ranges": (_craft({"a": GOOD["a"],
                                   "b": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}},
                                  GOOD_DATA), "overlapping"),
    "a gap": (_craft({"a": {**GOOD["a"], "data_offsets": [4, 12]}}, b"\0" * 12),
              "belong to no array"),
    "trailing bytes": (_craft(GOOD, GOOD_DATA + b"\0" * 8), "trailing bytes"),
    "bool bytes other than 0/1": (_craft({"a": {"dtype": "BOOL", "shape": [2],
                                                "data_offsets": [0, 2]}}, b"\x00\x02"),
                                  "other than 0 and 1"),
    "metadata not strings": (_craft({"__metadata__": {"tree": 1}}), "object of strings"),
    "tree not JSON": (_craft({"__metadata__": {**_tree(0), "tree": "{"}}), "not valid JSON"),
    "future version": (_craft({"__metadata__": {**_tree(0), "version": "9"}}), "version"),
    "missing array": (_craft({"__metadata__": _tree({"ndarray": "zz"})}), "missing array"),
    "array used twice": (_craft({**GOOD, "__metadata__": _tree([{"ndarray": "a"},
                                                                {"ndarray": "a"}])}, GOOD_DATA),
                         "twice"),
    "array not in the tree": (_craft({**GOOD, "__metadata__": _tree(1)}, GOOD_DATA),
                              "not in the tree"),
    "unknown tag": (_craft({"__metadata__": _tree({"code": "import os"})}), "unknown node"),
    "two tags": (_craft({"__metadata__": _tree({"tuple": [], "dict": []})}), "unexpected node"),
    "bad dict body": (_craft({"__metadata__": _tree({"dict": {"a": 1}})}), "pairs"),
    "bad dict key": (_craft({"__metadata__": _tree({"dict": [[[1], 2]]})}), "bad dict item"),
    "duplicate dict key": (_craft({"__metadata__": _tree({"dict": [["k", 1], ["k", 2]]})}),
                           "duplicate"),
    "bad float node": (_craft({"__metadata__": _tree({"float": "1e999"})}), "bad float"),
    "bad tensor class": (_craft({**GOOD, "__metadata__": _tree(
        {"tensor": "a", "class": "os.system"})}, GOOD_DATA), "bad tensor node"),
    "int Parameter": (_craft({"a": {"dtype": "I32", "shape": [2], "data_offsets": [0, 8]},
                              "__metadata__": _tree({"tensor": "a", "class": "Parameter"})},
                             GOOD_DATA), "cannot be a Parameter"),
    "scalar with a shape": (_craft({**GOOD, "__metadata__": _tree({"scalar": "a"})}, GOOD_DATA),
                            "expected ()"),
    "deep nesting": (_craft({"__metadata__": {**_tree(0), "tree": "[" * 10**5 + "]" * 10**5}}),
                     "nested too deeply"),
}


@pytest.mark.parametrize("raw,match", list(CRAFTED.values()), ids=list(CRAFTED))
def test_broken_files_raise_a_clear_value_error(raw, match):
    with pytest.raises(ValueError, match=match) as info:
        _load_bytes(raw)
    assert str(info.value).startswith("lucid.load:")


def test_every_truncation_of_a_valid_file_is_a_value_error():
    buf = io.BytesIO()
    save({"w": np.arange(6, dtype=np.float32), "meta": {"step": 3, "name": "x"}}, buf)
    raw = buf.getvalue()
    assert _load_bytes(raw)["meta"]["step"] == 3
    for cut in range(len(raw)):
        with pytest.raises(ValueError):
            _load_bytes(raw[:cut])


@settings(max_examples=200, deadline=None)
@given(st.data())
def test_random_byte_flips_never_escape_as_other_errors(data):
    buf = io.BytesIO()
    save({"w": np.arange(4, dtype=np.float32), "b": np.array([True, False]),
          "g": {"lr": 0.1, "betas": (0.9, 0.99)}}, buf)
    raw = bytearray(buf.getvalue())
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(raw) - 1))
        raw[i] = data.draw(st.integers(0, 255))
    try:
        _load_bytes(bytes(raw))  # a flip inside the array bytes still loads: that is fine
    except ValueError:
        pass


def test_load_checks_the_device_and_binary_mode(tmp_path):
    path = tmp_path / "t.lucid"
    save(lucid.Tensor([1.0]), path)
    with pytest.raises(ValueError, match="Unknown device"):
        load(path, device="tpu")
    with pytest.raises(TypeError, match="binary mode"):
        with open(path, encoding="latin-1") as f:
            load(f)


# --------------------------------------------------------------------------------------------
# no unsafe deserialisation anywhere in the package

FORBIDDEN = re.compile(r"pickle|allow_pickle\s*=\s*True", re.IGNORECASE)
# The CIFAR batch reader walks a subset of the pickle format by hand and never executes it: it
# may name the format it reads, but must import none of the modules that run pickles.
READER = pathlib.Path("lucid/data/datasets/batch_reader.py")
READER_FORBIDDEN = re.compile(
    r"^\s*(import|from)\s+(c?pickle|_pickle|pickletools|copyreg)\b|allow_pickle\s*=\s*True")


def test_no_pickle_anywhere_in_the_packages():
    offenders = []
    for package in ("lucid", "lucid_viz"):
        for path in sorted((ROOT / package).rglob("*")):
            if not path.is_file() or "__pycache__" in path.parts:
                continue
            text = path.read_bytes().decode("utf-8", errors="replace")
            forbidden = READER_FORBIDDEN if path.relative_to(ROOT) == READER else FORBIDDEN
            for number, line in enumerate(text.splitlines(), start=1):
                if forbidden.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "pickle found in the package:\n" + "\n".join(offenders)


def test_save_and_load_are_lucid_top_level_functions():
    assert lucid.save is save and lucid.load is load
    assert lucid.optim.Adam is Adam and lucid.data.DataLoader is not None


def test_file_dtype_table_is_the_documented_one():
    assert set(DTYPES) == {"BOOL", "U8", "U16", "U32", "U64", "I8", "I16", "I32", "I64", "F16",
                           "F32", "F64", "C64", "C128"}


# -- nothing lost: atomic saves ----------------------------------------------------------------


def _state(value: float) -> dict:
    return {"w": lucid.Tensor(np.full((64, 64), value, np.float32)), "step": int(value)}


def test_a_save_that_fails_midway_leaves_the_old_file(tmp_path, monkeypatch):
    path = tmp_path / "model.lucid"
    lucid.save(_state(1.0), path)

    def disk_full(fd):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", disk_full)
    with pytest.raises(OSError, match="No space left"):
        lucid.save(_state(2.0), path)
    monkeypatch.undo()
    old = lucid.load(path)
    assert old["step"] == 1 and np.all(old["w"].numpy() == 1.0)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["model.lucid"]  # no temp file left


def test_a_process_killed_while_saving_leaves_the_old_file(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    path = tmp_path / "model.lucid"
    lucid.save(_state(1.0), path)
    marker = tmp_path / "writing"
    child = subprocess.Popen([sys.executable, "-c", f"""
import os, time, numpy as np, lucid
def stall(fd):  # the new bytes are written, not yet renamed into place: die here
    open({str(marker)!r}, "w").close()
    time.sleep(60)
os.fsync = stall
lucid.save({{"w": lucid.Tensor(np.full((512, 512), 2.0, np.float32)), "step": 2}}, {str(path)!r})
"""])
    try:
        deadline = time.monotonic() + 60
        while not marker.exists():
            assert child.poll() is None, "the saving process ended early"
            assert time.monotonic() < deadline, "the saving process never got to write"
            time.sleep(0.05)
        child.send_signal(signal.SIGKILL)
        child.wait(30)
    finally:
        if child.poll() is None:
            child.kill()
    old = lucid.load(path)
    assert old["step"] == 1 and old["w"].shape == (64, 64)


# -- crafted files refused cheaply, with errors that say what is wrong --------------------------


def _file(header: bytes, data: bytes = b"") -> bytes:
    header += b" " * (-len(header) % 8)
    return struct.pack("<Q", len(header)) + header + data


def test_load_from_a_text_mode_file_says_open_it_in_binary(tmp_path):
    path = tmp_path / "model.lucid"
    lucid.save(_state(1.0), path)
    with open(path) as f:  # text mode
        with pytest.raises(TypeError, match=r"lucid.load: .*model.lucid' is open in text mode.*"
                                            r"open\(path, 'rb'\)"):
            lucid.load(f)


def test_a_header_with_a_huge_integer_is_refused(tmp_path):
    path = tmp_path / "big.lucid"
    digits = "9" * 5000
    path.write_bytes(_file(
        f'{{"a":{{"dtype":"F32","shape":[{digits}],"data_offsets":[0,4]}}}}'.encode()))
    with pytest.raises(ValueError, match=r"lucid.load: .*not valid JSON \(an integer of 5000 "
                                         r"digits, more than 20\)"):
        lucid.load(path)


def test_a_file_listing_too_many_arrays_is_refused_fast(tmp_path):
    import time

    entries = ",".join(f'"a{i}":{{"dtype":"F32","shape":[0],"data_offsets":[0,0]}}'
                       for i in range(200_000))
    path = tmp_path / "many.lucid"
    path.write_bytes(_file(("{" + entries + "}").encode()))
    assert path.stat().st_size > 10_000_000
    start = time.perf_counter()
    with pytest.raises(ValueError, match=r"lists 200000 arrays, more than the cap of 50000"):
        lucid.load(path)
    assert time.perf_counter() - start < 1.0


def test_a_deeply_nested_tree_is_refused(tmp_path):
    tree = "[" * 500 + "]" * 500
    meta = json.dumps({"__metadata__": {"format": "lucid", "version": "1", "tree": tree}})
    path = tmp_path / "deep.lucid"
    path.write_bytes(_file(meta.encode()))
    with pytest.raises(ValueError, match=r"nests deeper than the cap of 100 levels"):
        lucid.load(path)

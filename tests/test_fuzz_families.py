"""Random programs by family, checked against NumPy (or einops on NumPy) in float64, "gpu"
against "cpu" in float32, and gradients against finite differences (property-based).

The families a second random generator found faults in: higher-order gradients, linear
algebra, einsum, einops, indexing with random index tensors (and assignment), dtype
promotion, reductions, and layers loaded from PyTorch-shaped state dicts.  Shapes include
axes of size 0.  Wherever NumPy refuses, Lucid must refuse too, with an error that starts
with the op's name, on both devices alike; wherever NumPy answers, Lucid must give its
answer.  Nothing may crash or hang the interpreter.

``make test`` runs a short sample of each family (``LUCID_FUZZ_EXAMPLES`` / 8 examples);
``make fuzz`` sets ``LUCID_FUZZ_EXAMPLES`` high for long runs.
"""

from __future__ import annotations

import math
import os
import re
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

import lucid
from lucid import nn
from lucid.autograd import grad

pytest.importorskip("mlx.core", reason="MLX is not installed; `make test` installs mlx[cpu]")

EXAMPLES = max(int(os.environ.get("LUCID_FUZZ_EXAMPLES", "200")) // 8, 10)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 25,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                       HealthCheck.filter_too_much])
LUCID_ERRORS = (ValueError, TypeError, IndexError, RuntimeError, OverflowError,
                np.linalg.LinAlgError)
NAMED = re.compile(r"^(backward through )?[A-Za-z_][A-Za-z_0-9.\[\]]*( \w+)?:")
DEVICES = ("cpu", "gpu")


def _quiet(fn: Callable[[], Any]) -> Any:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return fn()


def _lucid_error(exc: BaseException) -> str:
    """The kind of a Lucid error; fails the test if it is raw or names no op."""
    assert isinstance(exc, LUCID_ERRORS), f"a raw error: {type(exc).__name__}: {exc}"
    assert NAMED.match(str(exc)), f"an error that names no op: {type(exc).__name__}: {exc}"
    return type(exc).__name__


def _close(got: np.ndarray, want: np.ndarray, rtol: float, what: str) -> None:
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, f"{what}: shape {got.shape} vs {want.shape}"
    if got.size:
        scale = max(1.0, float(np.nanmax(np.abs(np.where(np.isfinite(want), want, 0)))))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol * scale, err_msg=what,
                                   equal_nan=True)


def _fd(f: Callable[[np.ndarray], float], x: np.ndarray, eps: float = 1e-6) -> np.ndarray:
    """df/dx by central differences (float64)."""
    x = np.array(x, dtype=np.float64)
    out = np.zeros(x.shape)
    for j in range(x.size):
        plus, minus = x.copy(), x.copy()
        plus.flat[j] += eps
        minus.flat[j] -= eps
        out.flat[j] = (f(plus) - f(minus)) / (2 * eps)
    return out


def _values(shape: tuple[int, ...], seed: int, low: float = 0.1, high: float = 1.5):
    rng = np.random.default_rng(seed)
    mag = rng.uniform(low, high, size=shape)
    return np.asarray(mag * rng.choice([-1.0, 1.0], size=shape))  # an array even when 0-d


def _weights(shape: tuple[int, ...]) -> np.ndarray:
    return np.random.default_rng(7).uniform(0.5, 1.5, size=shape)


shapes = st.lists(st.integers(0, 3), min_size=0, max_size=3).map(tuple)


# -- reductions ------------------------------------------------------------------------------
REDUCTIONS = {  # name -> (lucid, numpy, differentiable)
    "sum": (lucid.sum, np.sum, True), "mean": (lucid.mean, np.mean, True),
    "prod": (lucid.prod, np.prod, True), "max": (lucid.max, np.max, True),
    "min": (lucid.min, np.min, True), "var": (lucid.var, np.var, True),
    "std": (lucid.std, np.std, True),
    "logsumexp": (lucid.logsumexp, lambda a, axis, keepdims: np.log(np.sum(
        np.exp(a), axis=axis, keepdims=keepdims)), True),
    "all": (lucid.all, np.all, False), "any": (lucid.any, np.any, False),
}


@FUZZ
@given(shape=shapes, name=st.sampled_from(sorted(REDUCTIONS)), seed=st.integers(0, 999),
       axis=st.one_of(st.none(), st.integers(-3, 2), st.lists(st.integers(-3, 2),
                                                              min_size=1, max_size=2)),
       keepdims=st.booleans())
def test_reductions(shape, name, seed, axis, keepdims):
    fn, ref, smooth = REDUCTIONS[name]
    axis = tuple(axis) if isinstance(axis, list) else axis
    xa = _values(shape, seed)
    if name in ("all", "any"):
        xa = np.asarray(xa > 0)  # (an array: NumPy's scalar .all() ignores its axis)
    if shape == () and type(axis) is int and axis in (0, -1):
        axis_ref = None  # a 0-d tensor's "axis 0" is itself (PyTorch; NumPy for most)
    else:
        axis_ref = axis
    try:
        want = _quiet(lambda: np.asarray(ref(xa, axis=axis_ref, keepdims=keepdims)))
    except (ValueError, TypeError, IndexError) as exc:  # NumPy refuses: so must Lucid
        want = exc
    refused = []
    for device in DEVICES:
        x = lucid.Tensor(xa, requires_grad=smooth, device=device)
        try:
            y = _quiet(lambda x=x: fn(x, axis=axis, keepdims=keepdims))
        except Exception as exc:  # noqa: BLE001  (checked: a Lucid error naming the op)
            refused.append(_lucid_error(exc))
            if not isinstance(want, Exception):
                # Lucid may refuse where NumPy gives NaN of nothing (var over no elements)
                assert not np.all(np.isfinite(want)), (name, exc)
            continue
        assert not isinstance(want, Exception), f"{name}{shape} axis={axis}: NumPy refuses"
        _close(y.numpy(), want, 1e-5 if device == "gpu" else 1e-12, f"{name} on {device}")
        # NumPy's dtype on both devices (a sum of nothing on "gpu" came back float32)
        assert y.dtype == lucid.types.to_numeric_type(want.dtype), (name, device, y.dtype)
    assert len(refused) in (0, len(DEVICES)), f"{name}: only one device refuses: {refused}"
    if refused or not smooth or isinstance(want, Exception) or not np.all(np.isfinite(want)):
        return
    x = lucid.Tensor(xa, requires_grad=True)
    y = fn(x, axis=axis, keepdims=keepdims)
    w = _weights(y.shape)
    (y * lucid.Tensor(w)).sum().backward()
    if name in ("max", "min") and xa.size:  # ties are kinks: samples are distinct w.p. 1
        assume(len(np.unique(xa)) == xa.size)
    numeric = _fd(lambda v: float(np.sum(np.asarray(ref(v, axis=axis_ref, keepdims=keepdims))
                                         * w)), xa)
    _close(np.array(x.grad), numeric, 1e-4, f"d {name}")


# -- random index tensors --------------------------------------------------------------------
@st.composite
def index_cases(draw):
    shape = tuple(draw(st.lists(st.integers(0, 3), min_size=1, max_size=4)))
    parts: list[Any] = []
    for size in shape:
        kind = draw(st.sampled_from(["int", "slice", "array", "mask", "full", "none"]))
        if kind == "int" and size:
            parts.append(draw(st.integers(-size, size - 1)))
        elif kind == "slice":
            parts.append(slice(draw(st.integers(-3, 3)), draw(st.one_of(st.none(),
                         st.integers(-3, 3))), draw(st.sampled_from([1, 2, -1, -2]))))
        elif kind == "array" and size:
            n = draw(st.integers(0, 3))
            parts.append(np.array(draw(st.lists(st.integers(-size, size - 1), min_size=n,
                                                max_size=n)), dtype=np.int64))
        elif kind == "mask":
            parts.append(np.array(draw(st.lists(st.booleans(), min_size=size, max_size=size)),
                                  dtype=bool))
        elif kind == "none":
            parts.append(None)
            parts.append(slice(None))
        else:
            parts.append(slice(None))
    return shape, tuple(parts)


def _index_outcome(shape, parts, device):
    xa = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float64).reshape(shape)
    x = lucid.Tensor(xa, requires_grad=True, device=device)
    idx = tuple(lucid.Tensor(p, device=device) if isinstance(p, np.ndarray) else p
                for p in parts)
    try:
        y = x[idx]
        w = _weights(y.shape)
        (y * lucid.Tensor(w, device=device)).sum().backward()
        z = lucid.Tensor(xa, device=device)
        z[idx] = lucid.Tensor(-w, device=device)
    except Exception as exc:  # noqa: BLE001  (checked: a Lucid error naming the op)
        return _lucid_error(exc)
    return y.numpy(), np.array(x.grad), z.numpy()


@FUZZ
@given(case=index_cases())
def test_random_index_tensors(case):
    shape, parts = case
    xa = np.arange(1, int(np.prod(shape)) + 1, dtype=np.float64).reshape(shape)
    try:
        want_y = xa[parts]
    except (IndexError, ValueError):
        want = "refused"
    else:
        w = _weights(want_y.shape)
        want_g = np.zeros(shape)
        np.add.at(want_g, parts, w)
        want_z = xa.copy()
        want_z[parts] = -w
        want = (want_y, want_g, want_z)
    for device in DEVICES:
        got = _index_outcome(shape, parts, device)
        if want == "refused":
            assert isinstance(got, str), f"{parts} on {shape}: NumPy refuses, Lucid gives {got}"
            continue
        assert not isinstance(got, str), f"{parts} on {shape} on {device}: {got}"
        for g, r, what in zip(got, want, ("x[index]", "its gradient", "x[index] = v")):
            np.testing.assert_array_equal(g, r, err_msg=f"{what}: {parts} on {shape}, {device}")


# -- float functions of integers and bools ---------------------------------------------------
UNARY_FLOAT = {"exp": (lucid.exp, np.exp), "log": (lucid.log, np.log),
               "sqrt": (lucid.sqrt, np.sqrt), "tanh": (lucid.tanh, np.tanh),
               "sin": (lucid.sin, np.sin),
               "sigmoid": (lucid.sigmoid, lambda a: 1 / (1 + np.exp(-a))),
               "erf": (lucid.erf, np.vectorize(math.erf, otypes=[np.float64])),
               "softplus": (lucid.nn.functional.softplus, lambda a: np.log1p(np.exp(a))),
               "silu": (lucid.nn.functional.silu, lambda a: a / (1 + np.exp(-a))),
               "mish": (lucid.nn.functional.mish, lambda a: a * np.tanh(np.log1p(np.exp(a))))}


@FUZZ
@given(dtype=st.sampled_from(["bool", "uint8", "int8", "int16", "int32", "int64"]),
       name=st.sampled_from(sorted(UNARY_FLOAT)), seed=st.integers(0, 99))
def test_float_functions_of_integers_give_numpys_float(dtype, name, seed):
    """exp, erf, ... of an integer tensor: NumPy's float for it (int64 -> float64, int8 ->
    float16), the same on both devices.  (erf of an int64 tensor was truncated back to int;
    sigmoid, softplus, silu and mish of a uint8 tensor were 0 or inf: -|x| wrapped around.)"""
    fn, ref = UNARY_FLOAT[name]
    xa = np.random.default_rng(seed).integers(0 if dtype in ("bool", "uint8") else -3, 4,
                                              size=(2, 3)).astype(dtype)
    want_dtype = np.exp(xa).dtype  # NumPy's float for this integer type
    want = _quiet(lambda: ref(xa.astype(np.float64)))
    for device in DEVICES:
        y = _quiet(lambda device=device: fn(lucid.Tensor(xa, device=device)))
        assert y.dtype == lucid.types.to_numeric_type(want_dtype), (name, dtype, device)
        _close(y.numpy().astype(np.float64), want, 1e-2 if want_dtype == np.float16 else 1e-5,
               f"{name}({dtype}) on {device}")


# -- cross-entropy: weights, ignore_index, label smoothing -----------------------------------
def _ce_reference(x, t, w, eps, ignore, reduction):
    """PyTorch's cross_entropy in float64 (class indices): (1 - eps) * weighted NLL + eps *
    the cross-entropy against the uniform target; 0 for ignored samples; "mean" divides by
    the weights of the samples kept."""
    c = x.shape[1]
    logp = x - x.max(1, keepdims=True)
    logp = logp - np.log(np.exp(logp).sum(1, keepdims=True))
    w = np.ones(c) if w is None else w
    kept = t != ignore
    safe = np.where(kept, t, 0)
    nll = -w[safe] * np.take_along_axis(logp, safe[:, None], 1)[:, 0]
    per = np.where(kept, (1 - eps) * nll - eps * (logp * w).sum(1) / c, 0.0)
    if reduction == "none":
        return per
    return per.sum() if reduction == "sum" else per.sum() / np.where(kept, w[safe], 0).sum()


@FUZZ
@given(n=st.integers(1, 4), c=st.integers(2, 4), seed=st.integers(0, 999),
       weighted=st.booleans(), eps=st.sampled_from([0.0, 0.1, 0.5]),
       ignore=st.sampled_from([-100, 0, 1]), reduction=st.sampled_from(["mean", "sum", "none"]))
def test_cross_entropy_against_pytorchs_definition(n, c, seed, weighted, eps, ignore,
                                                   reduction):
    rng = np.random.default_rng(seed)
    xa, t = rng.normal(size=(n, c)), rng.integers(0, c, n)
    w = rng.uniform(0.5, 2.0, c) if weighted else None
    want = _ce_reference(xa, t, w, eps, ignore, reduction)
    every_ignored = bool(np.all(t == ignore))
    for device in DEVICES:
        x = lucid.Tensor(xa, requires_grad=True, device=device)
        y = _quiet(lambda x=x, device=device: lucid.nn.functional.cross_entropy(
            x, lucid.Tensor(t, device=device), None if w is None else lucid.Tensor(
                w, device=device), ignore_index=ignore, reduction=reduction,
            label_smoothing=eps))
        _close(y.numpy(), want, 1e-6 if device == "gpu" else 1e-10, f"loss on {device}")
        _quiet(lambda y=y: y.sum().backward())
        if every_ignored:  # nothing to learn from: gradients 0 (the mean itself is NaN)
            numeric = np.zeros_like(xa)
        else:
            numeric = _fd(lambda v: float(np.sum(_ce_reference(v, t, w, eps, ignore,
                                                                reduction))), xa)
        _close(np.array(x.grad), numeric, 1e-5, f"d loss on {device}")


# -- dtype promotion -------------------------------------------------------------------------
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
BINARY = {"+": np.add, "-": np.subtract, "*": np.multiply, "/": np.true_divide,
          "//": np.floor_divide, "<": np.less, "==": np.equal, "max": np.maximum}
LUCID_BINARY = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
                "/": lambda a, b: a / b, "//": lambda a, b: a // b, "<": lambda a, b: a < b,
                "==": lambda a, b: a == b, "max": lambda a, b: lucid.maximum(a, b)}


@FUZZ
@given(a=st.sampled_from(DTYPES), b=st.one_of(st.sampled_from(DTYPES), st.sampled_from(
       ["py-int", "py-float", "py-bool"])), op=st.sampled_from(sorted(BINARY)),
       seed=st.integers(0, 99))
def test_dtype_promotion(a, b, op, seed):
    rng = np.random.default_rng(seed)
    xa = rng.integers(1, 5, size=(2, 3)).astype(a)
    other: Any = {"py-int": 3, "py-float": 2.5, "py-bool": True}.get(b)
    oa = rng.integers(1, 5, size=(2, 3)).astype(b) if other is None else other
    try:
        want = _quiet(lambda: np.asarray(BINARY[op](xa, oa)))
    except (TypeError, ValueError, OverflowError, np.exceptions.DTypePromotionError):
        want = None
    for device in DEVICES:
        x = lucid.Tensor(xa, device=device)
        o = lucid.Tensor(oa, device=device) if other is None else other
        try:
            y = _quiet(lambda x=x, o=o: LUCID_BINARY[op](x, o))
        except Exception as exc:  # noqa: BLE001  (checked: a Lucid error naming the op)
            _lucid_error(exc)
            assert want is None, f"{a} {op} {b} on {device}: NumPy gives {want.dtype}"
            continue
        assert want is not None, f"{a} {op} {b} on {device}: NumPy refuses, Lucid gives {y}"
        assert y.dtype == lucid.types.to_numeric_type(want.dtype), (a, op, b, device, y.dtype)
        _close(y.numpy().astype(np.float64), want.astype(np.float64),
               1e-3 if "float16" in (a, b) else 1e-6, f"{a} {op} {b} on {device}")


# -- einsum ----------------------------------------------------------------------------------
@st.composite
def einsum_cases(draw):
    labels = "ijkl"
    sizes = {c: draw(st.integers(0, 3)) for c in labels}
    n_ops = draw(st.integers(1, 3))
    terms = ["".join(draw(st.lists(st.sampled_from(labels), min_size=0, max_size=3,
                                   unique=True))) for _ in range(n_ops)]
    used = sorted(set("".join(terms)))
    out = "".join(draw(st.permutations(used))[:draw(st.integers(0, len(used)))])
    return ",".join(terms) + "->" + out, [tuple(sizes[c] for c in t) for t in terms]


@FUZZ
@given(case=einsum_cases(), seed=st.integers(0, 999))
def test_einsum(case, seed):
    equation, shapes_ = case
    arrays = [_values(s, seed + i) for i, s in enumerate(shapes_)]
    want = np.einsum(equation, *arrays)
    w = _weights(want.shape)
    for device in DEVICES:
        ts = [lucid.Tensor(a, requires_grad=True, device=device) for a in arrays]
        y = lucid.einsum(equation, *ts)
        _close(y.numpy(), want, 1e-5 if device == "gpu" else 1e-10, f"{equation} {device}")
        (y * lucid.Tensor(w, device=device)).sum().backward()
        for i, (t, a) in enumerate(zip(ts, arrays)):
            def f(v, i=i):
                args = list(arrays)
                args[i] = v
                return float(np.sum(np.einsum(equation, *args) * w))
            got = np.zeros(a.shape) if t.grad is None else np.array(t.grad)
            _close(got, _fd(f, a), 1e-4, f"d {equation} / operand {i} on {device}")


# -- einops ----------------------------------------------------------------------------------
@st.composite
def einops_cases(draw):
    import einops  # noqa: F401  (the reference; a dev dependency)

    names = ["a", "b", "c", "d"][:draw(st.integers(1, 4))]
    sizes = {n: draw(st.integers(0, 3)) for n in names}
    order = draw(st.permutations(names))
    # group a run of adjacent output axes: (b c)
    start = draw(st.integers(0, len(order) - 1))
    stop = draw(st.integers(start + 1, len(order)))
    grouped = list(order[:start]) + ["(" + " ".join(order[start:stop]) + ")"] + list(
        order[stop:])
    kind = draw(st.sampled_from(["rearrange", "reduce", "repeat"]))
    if kind == "reduce":
        dropped = draw(st.sampled_from(names))
        grouped = [g for g in grouped if g != dropped]
        grouped = [" ".join(x for x in g.strip("()").split() if x != dropped) if "(" in g else g
                   for g in grouped]
        grouped = ["(" + g + ")" if " " in g else g for g in grouped if g]
        extra = {"reduction": draw(st.sampled_from(["sum", "mean", "max", "min"]))}
    elif kind == "repeat":
        grouped = grouped + ["e"]
        extra = {"e": 2}
    else:
        extra = {}
    return kind, f"{' '.join(names)} -> {' '.join(grouped)}", tuple(sizes[n] for n in names), extra


@FUZZ
@given(case=einops_cases(), seed=st.integers(0, 999))
def test_einops(case, seed):
    import einops

    kind, pattern, shape, extra = case
    xa = _values(shape, seed)
    reduction = extra.pop("reduction", None)
    args = (reduction,) if reduction else ()
    try:
        want = getattr(einops, kind)(xa, pattern, *args, **extra)
    except (einops.EinopsError, ValueError):  # (NumPy's: the max of nothing)
        want = None
    for device in DEVICES:
        x = lucid.Tensor(xa, requires_grad=True, device=device)
        try:
            y = getattr(lucid.einops, kind)(x, pattern, *args, **extra)
        except Exception as exc:  # noqa: BLE001  (checked below)
            assert want is None or (reduction in ("max", "min") and 0 in shape), (pattern, exc)
            assert isinstance(exc, (lucid.einops.EinopsError, *LUCID_ERRORS)), exc
            continue
        assert want is not None, f"{pattern}: einops refuses, Lucid gives {y.shape}"
        _close(y.numpy(), want, 1e-5 if device == "gpu" else 1e-12, f"{kind} {pattern}")
        if reduction in ("max", "min"):
            continue
        w = _weights(want.shape)
        (y * lucid.Tensor(w, device=device)).sum().backward()
        numeric = _fd(lambda v, w=w: float(np.sum(
            getattr(einops, kind)(v, pattern, *args, **extra) * w)), xa)
        got = np.zeros(shape) if x.grad is None else np.array(x.grad)
        _close(got, numeric, 1e-4, f"d {kind} {pattern} on {device}")


# -- linear algebra --------------------------------------------------------------------------
def _spd(batch, n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((*batch, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


LINALG = {  # name -> (input maker, lucid -> sign-free outputs, numpy reference)
    "inv": ("square", lambda a: L.inv(a), np.linalg.inv),
    "det": ("square", lambda a: L.det(a), np.linalg.det),
    "slogdet": ("square", lambda a: L.slogdet(a)[1], lambda a: np.linalg.slogdet(a)[1]),
    "solve": ("square", lambda a: L.solve(a, a * 0.5 + 1.0),
              lambda a: np.linalg.solve(a, a * 0.5 + 1.0)),
    "cholesky": ("spd", lambda a: L.cholesky(a), np.linalg.cholesky),
    "eigh": ("spd", lambda a: L.eigh(a)[0], lambda a: np.linalg.eigh(a)[0]),
    "qr": ("any", lambda a: _qr_product(a), lambda a: np.matmul(*np.linalg.qr(a))),
    "svdvals": ("any", lambda a: L.svdvals(a), lambda a: np.linalg.svd(a, compute_uv=False)),
    "pinv": ("any", lambda a: L.pinv(a), np.linalg.pinv),
    "matrix_power": ("square", lambda a: L.matrix_power(a, 3),
                     lambda a: np.linalg.matrix_power(a, 3)),
    "fro": ("any", lambda a: L.matrix_norm(a), lambda a: np.linalg.norm(a, axis=(-2, -1))),
}
L = lucid.linalg


def _qr_product(a):
    q, r = L.qr(a)
    return q @ r


@FUZZ
@given(name=st.sampled_from(sorted(LINALG)), batch=st.sampled_from([(), (2,), (0,), (2, 0)]),
       n=st.integers(0, 3), m=st.integers(1, 3), seed=st.integers(0, 999))
def test_linalg(name, batch, n, m, seed):
    kind, fn, ref = LINALG[name]
    if kind == "spd":
        xa = _spd(batch, n, seed)
    elif kind == "square":
        xa = _values((*batch, n, n), seed) + 3 * np.eye(n)  # well conditioned
    else:
        xa = _values((*batch, m, n), seed)
        if n and m and name in ("qr", "svdvals", "pinv"):  # distinct singular values
            s = np.linalg.svd(xa, compute_uv=False)
            assume(s.size == 0 or (np.min(s) > 0.2 and (s.shape[-1] < 2 or np.min(
                -np.diff(s, axis=-1)) > 0.2)))
    want = _quiet(lambda: ref(xa))
    w = _weights(np.shape(want))
    for device in DEVICES:
        x = lucid.Tensor(xa, requires_grad=True, device=device)
        y = _quiet(lambda x=x: fn(x))
        _close(y.numpy(), want, 1e-4 if device == "gpu" else 1e-9, f"{name} {device}")
        if not np.all(np.isfinite(want)):
            continue
        (y * lucid.Tensor(w, device=device)).sum().backward()
        got = np.zeros(xa.shape) if x.grad is None else np.array(x.grad)
        sym = kind == "spd"  # the routines read one triangle: differentiate symmetrically
        if device == "cpu":
            numeric = _fd(lambda v, sym=sym: float(np.sum(ref(
                (v + np.swapaxes(v, -1, -2)) / 2 if sym else v) * w)), xa)
            if sym:
                got = (got + np.swapaxes(got, -1, -2)) / 2
            _close(got, numeric, 1e-4, f"d {name}")
        else:
            assert np.all(np.isfinite(got)), f"d {name} on gpu"


# -- higher-order gradients ------------------------------------------------------------------
SMOOTH = {
    "tanh": lucid.tanh, "sigmoid": lucid.sigmoid, "softplus": lucid.softplus,
    "silu": lucid.silu, "mish": lambda x: lucid.nn.functional.mish(x),
    "gelu": lambda x: lucid.gelu(x, approximate="tanh"), "exp": lambda x: lucid.exp(x * 0.5),
    "square": lambda x: x * x, "sin": lucid.sin, "log1p_sq": lambda x: lucid.log(1 + x * x),
    "softmax": lambda x: lucid.softmax(x, axis=-1), "sum_keep": lambda x: x.sum(
        axis=-1, keepdims=True) * x, "matmul": lambda x: x @ x.mT if x.ndim >= 2 else x * x,
    "std": lambda x: x.std(axis=-1, keepdims=True) + x,
}


@FUZZ
@given(shape=st.sampled_from([(3,), (2, 3), (2, 2)]),
       chain=st.lists(st.sampled_from(sorted(SMOOTH)), min_size=1, max_size=3),
       seed=st.integers(0, 999), zero=st.booleans())
def test_higher_order_gradients(shape, chain, seed, zero):
    xa = _values(shape, seed)
    if zero:
        xa.reshape(-1)[0] = 0.0  # exact zeros are common inputs (after relu, padding)
    v = _weights(shape)

    def f(x):
        for name in chain:
            x = SMOOTH[name](x)
        return x

    def first_grad(values, device="cpu", create=False):
        x = lucid.Tensor(values, requires_grad=True, device=device)
        y = f(x)
        (g,) = grad((y * lucid.Tensor(_weights(y.shape), device=device)).sum(), [x],
                    create_graph=create)
        return x, g

    seconds = {}
    for device in DEVICES:
        x, g = _quiet(lambda d=device: first_grad(xa, d, True))
        (h,) = _quiet(lambda x=x, g=g, d=device: grad((g * lucid.Tensor(v, device=d)).sum(),
                                                      [x]))
        seconds[device] = h.numpy()
    numeric = _fd(lambda z: float(np.sum(_quiet(lambda: first_grad(z)[1].numpy()) * v)), xa)
    if np.all(np.isfinite(numeric)) and np.abs(numeric).max(initial=0) < 1e6:
        _close(seconds["cpu"], numeric, 2e-4, f"d2 {chain}")
        _close(seconds["gpu"], seconds["cpu"], 1e-3, f"d2 {chain} gpu")


# -- layers loaded from PyTorch-shaped state dicts -------------------------------------------
def _conv2d_ref(x, w, b, stride, padding):
    n, c, h, wd = x.shape
    o, _, kh, kw = w.shape
    xp = np.pad(x, ((0, 0), (0, 0), (padding, padding), (padding, padding)))
    oh, ow = (h + 2 * padding - kh) // stride + 1, (wd + 2 * padding - kw) // stride + 1
    y = np.zeros((n, o, oh, ow))
    for i in range(oh):
        for j in range(ow):
            patch = xp[:, :, i * stride:i * stride + kh, j * stride:j * stride + kw]
            y[:, :, i, j] = np.einsum("nchw,ochw->no", patch, w)
    return y + b[None, :, None, None]


LAYERS = {  # name -> (layer, PyTorch's state dict shapes, input shape, NumPy forward)
    "Linear": (lambda: nn.Linear(4, 3), {"weight": (3, 4), "bias": (3,)}, (2, 4),
               lambda sd, x: x @ sd["weight"].T + sd["bias"]),
    "Conv2d": (lambda: nn.Conv2d(2, 3, 3, stride=2, padding=1),
               {"weight": (3, 2, 3, 3), "bias": (3,)}, (1, 2, 5, 5),
               lambda sd, x: _conv2d_ref(x, sd["weight"], sd["bias"], 2, 1)),
    "LayerNorm": (lambda: nn.LayerNorm(4), {"weight": (4,), "bias": (4,)}, (3, 4),
                  lambda sd, x: (x - x.mean(-1, keepdims=True)) / np.sqrt(
                      x.var(-1, keepdims=True) + 1e-5) * sd["weight"] + sd["bias"]),
    "BatchNorm1d": (lambda: nn.BatchNorm1d(3).eval(),
                    {"weight": (3,), "bias": (3,), "running_mean": (3,), "running_var": (3,),
                     "num_batches_tracked": ()}, (4, 3),
                    lambda sd, x: (x - sd["running_mean"]) / np.sqrt(
                        sd["running_var"] + 1e-5) * sd["weight"] + sd["bias"]),
    "Embedding": (lambda: nn.Embedding(5, 3), {"weight": (5, 3)}, None,
                  lambda sd, idx: sd["weight"][idx]),
}


@FUZZ
@given(name=st.sampled_from(sorted(LAYERS)), seed=st.integers(0, 999))
def test_layers_loaded_from_pytorch_shaped_state_dicts(name, seed):
    make, keys, in_shape, ref = LAYERS[name]
    rng = np.random.default_rng(seed)
    sd = {}
    for key, shape in keys.items():
        if key == "num_batches_tracked":
            sd[key] = np.array(int(rng.integers(0, 100)))
        elif key == "running_var":
            sd[key] = rng.uniform(0.5, 2.0, shape).astype(np.float32)
        else:
            sd[key] = rng.standard_normal(shape).astype(np.float32)
    if in_shape is None:
        xa = rng.integers(0, 5, (2, 3))
    else:
        xa = rng.standard_normal(in_shape).astype(np.float32)
    want = ref({k: v.astype(np.float64) for k, v in sd.items()},
               xa if in_shape is None else xa.astype(np.float64))
    for device in DEVICES:
        layer = make()
        layer.load_state_dict(sd)  # strict: every PyTorch key, no other
        layer.to(device)
        y = layer(lucid.Tensor(xa, device=device))
        _close(y.numpy(), want, 1e-4, f"{name} on {device}")
        assert sorted(layer.state_dict()) == sorted(sd)

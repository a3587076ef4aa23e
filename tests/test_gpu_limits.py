"""No input hangs or crashes the "gpu" device: every op family on empty, non-contiguous and
huge inputs, in fresh interpreters with a time limit.

MLX hangs on some empty arrays (a reduction over an empty axis of a transposed array, in a
fraction of fresh processes), kills the process on others (SIGFPE in ``inv`` of a (0, 0)
matrix) and segfaults summing a broadcast view of 2^40 elements.  Lucid keeps such arrays
from it (lucid/backends/fallback.py).  A hang or a crash shows only in a process of its own,
and only sometimes, so each family's cases run in several fresh interpreters; each case
compares "gpu" with "cpu" (values, shapes, dtypes and gradients, or the same kind of error).

``python tests/test_gpu_limits.py SEED`` runs every case once (in an order drawn from SEED)
and prints ``ok N``.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lucid
import lucid.einops as E
import lucid.nn.functional as F
from lucid import linalg as L

# -- the cases: each builds its output from T(shape), a fresh tensor of the case's device ----
#: name -> fn(T) -> Tensor or tuple of Tensors.  ``T(shape, t=True)`` has its first and last axes
#: swapped from a contiguous array (non-contiguous, the case that hung).
CASES: dict[str, Callable[[Callable[..., Any]], Any]] = {}


def case(name: str) -> Callable:
    def register(fn: Callable) -> Callable:
        CASES[name] = fn
        return fn
    return register


_REDUCTIONS = {
    "sum": lambda x, a: x.sum(axis=a), "mean": lambda x, a: x.mean(axis=a),
    "prod": lambda x, a: x.prod(axis=a), "var": lambda x, a: x.var(axis=a),
    "logsumexp": lambda x, a: lucid.logsumexp(x, axis=a),
    "cumsum": lambda x, a: lucid.cumsum(x, axis=a),
    "cumprod": lambda x, a: lucid.cumprod(x, axis=a),
    "all": lambda x, a: lucid.all(x, axis=a), "any": lambda x, a: lucid.any(x, axis=a),
    "softmax": lambda x, a: lucid.softmax(x, axis=a),
    "log_softmax": lambda x, a: lucid.log_softmax(x, axis=a),
}
for _name, _fn in _REDUCTIONS.items():
    for _axis in (0, 1, 2, None):
        if _axis is None and _name in ("cumsum", "cumprod", "softmax", "log_softmax"):
            continue
        for _t in (False, True):
            CASES[f"{_name}(axis={_axis}, transposed={_t})"] = (
                lambda T, f=_fn, a=_axis, t=_t: f(T((3, 0, 4), t=t), a))
CASES["max over the non-empty axes"] = lambda T: T((3, 0, 4), t=True).max(axis=0)
CASES["all of nothing"] = lambda T: lucid.all(T((0,)))
CASES["any of nothing"] = lambda T: lucid.any(T((0,)))
CASES["all of a (0, 3) float tensor"] = lambda T: lucid.all(T((0, 3)))
CASES["any of a (0, 3) float tensor"] = lambda T: lucid.any(T((0, 3)))
CASES["all of nothing, transposed"] = lambda T: lucid.all(T((2, 0), t=True) > 0)
CASES["any of nothing, transposed"] = lambda T: lucid.any(T((2, 0), t=True) > 0)
CASES["argmax over a full axis"] = lambda T: lucid.argmax(T((0, 3), t=True), axis=1)

# elementwise and shape
CASES["exp, add, mul"] = lambda T: (T((0, 3)).exp() + T((1, 3))) * T((0, 1))
CASES["broadcast to empty"] = lambda T: lucid.broadcast_to(T((1, 3)), (0, 3)) * 2
CASES["diagonal of a broadcast with an empty tensor"] = (
    lambda T: lucid.diagonal(T((3, 3)) + T((0, 3, 3)), axis1=1, axis2=2))
CASES["concatenate with an empty part"] = lambda T: lucid.concatenate([T((2, 3)), T((0, 3))])
CASES["stack of empties"] = lambda T: lucid.stack([T((0, 2), t=True), T((0, 2), t=True)])
CASES["pad, tile, repeat"] = lambda T: (lucid.pad(T((0, 2)), ((1, 1), (0, 0))),
                                        lucid.tile(T((2, 0)), (2, 3)), lucid.repeat(T((3,)), 0))
CASES["slice to empty"] = lambda T: T((4, 3))[:, 1:1].sum(axis=1)
CASES["fancy index with no indices"] = lambda T: T((4, 3))[lucid.Tensor(
    np.zeros(0, np.int64), device=T.device)]
CASES["gather with an empty index"] = lambda T: lucid.gather(
    T((3, 4)), 1, lucid.Tensor(np.zeros((3, 0), np.int64), device=T.device))
CASES["sort and topk of empties"] = lambda T: (lucid.sort(T((2, 0)), axis=1)[0],
                                               lucid.topk(T((2, 5)), 0, axis=1)[0])
CASES["where and masked_fill"] = lambda T: lucid.where(T((0, 3)) > 0, T((0, 3)), T((1, 3)))

# contractions
CASES["matmul (3,0)@(0,4)"] = lambda T: T((3, 0)) @ T((0, 4))
CASES["matmul (0,3)@(3,4), transposed"] = lambda T: T((0, 3), t=True).mT @ T((0, 4))
CASES["matmul of empty batches"] = lambda T: T((0, 2, 3)) @ T((3, 4))
CASES["einsum over an empty index"] = lambda T: lucid.einsum("ij,jk->ik", T((2, 0)), T((0, 3)))
CASES["tensordot"] = lambda T: lucid.tensordot(T((2, 0, 3)), T((0, 3, 4)), axes=2)
CASES["einops"] = lambda T: (E.rearrange(T((0, 2, 3)), "b h w -> b (h w)"),
                             E.reduce(T((2, 0, 3)), "a b c -> a c", "sum"))

# linear algebra: the (0, 0) and (2, 0, 0) matrices killed the interpreter
for _shape in ((0, 0), (2, 0, 0)):
    CASES[f"inv {_shape}"] = lambda T, s=_shape: L.inv(T(s))
    CASES[f"det {_shape}"] = lambda T, s=_shape: L.det(T(s))
    CASES[f"slogdet {_shape}"] = lambda T, s=_shape: L.slogdet(T(s))
    CASES[f"cholesky {_shape}"] = lambda T, s=_shape: L.cholesky(T(s))
    CASES[f"qr {_shape}"] = lambda T, s=_shape: L.qr(T(s))
    CASES[f"solve {_shape}"] = lambda T, s=_shape: L.solve(T(s), T(s))
    CASES[f"svd {_shape}"] = lambda T, s=_shape: L.svd(T(s), full_matrices=False)
    CASES[f"eigh {_shape}"] = lambda T, s=_shape: L.eigh(T(s))
    CASES[f"pinv {_shape}"] = lambda T, s=_shape: L.pinv(T(s))
    CASES[f"matrix_power {_shape}"] = lambda T, s=_shape: L.matrix_power(T(s), 3)
for _name, _fn in {"inv": L.inv, "det": L.det, "cholesky": L.cholesky, "pinv": L.pinv,
                   "qr": L.qr, "svd": lambda a: L.svd(a, full_matrices=False),
                   "eigh": L.eigh, "slogdet": L.slogdet}.items():
    CASES[f"{_name} of an empty batch (0,3,3)"] = lambda T, f=_fn: f(T((0, 3, 3)))
CASES["norms of empties"] = lambda T: (L.vector_norm(T((0, 3)), axis=0),
                                       L.matrix_norm(T((2, 0, 0))))

# layers
CASES["linear, 0 in-features"] = lambda T: F.linear(T((4, 0)), T((3, 0)), T((3,)))
CASES["linear, empty batch"] = lambda T: F.linear(T((0, 5)), T((3, 5)), T((3,)))
CASES["conv2d, empty batch"] = lambda T: F.conv2d(T((0, 2, 5, 5)), T((3, 2, 3, 3)))
CASES["conv2d, 0 out-channels"] = lambda T: F.conv2d(T((1, 2, 5, 5)), T((0, 2, 3, 3)))
CASES["conv1d, 0 in-channels"] = lambda T: F.conv1d(T((1, 0, 5)), T((2, 0, 3)))
CASES["conv_transpose2d, empty batch"] = lambda T: F.conv_transpose2d(T((0, 2, 3, 3)),
                                                                      T((2, 3, 2, 2)))
CASES["pools, empty batch"] = lambda T: (F.max_pool2d(T((0, 1, 4, 4)), 2),
                                         F.avg_pool2d(T((0, 1, 4, 4)), 2))
CASES["layer_norm over 0 features"] = lambda T: F.layer_norm(T((2, 0)), (0,))
CASES["attention, no keys"] = lambda T: F.scaled_dot_product_attention(
    T((1, 2, 4)), T((1, 0, 4)), T((1, 0, 4)))
CASES["attention, no queries"] = lambda T: F.scaled_dot_product_attention(
    T((1, 0, 4)), T((1, 3, 4)), T((1, 3, 4)))
CASES["cross_entropy of no samples"] = lambda T: F.cross_entropy(
    T((0, 5)), lucid.Tensor(np.zeros(0, np.int64), device=T.device), reduction="sum")
CASES["embedding of no tokens"] = lambda T: F.embedding(
    lucid.Tensor(np.zeros((2, 0), np.int64), device=T.device), T((5, 3)))


# -- running one case on both devices --------------------------------------------------------
class _Maker:
    """``T(shape, t=False)``: a tensor of ``shape`` on ``device`` that requires grad, with
    the same values on both devices; ``t=True`` makes it the transpose of a contiguous array."""

    def __init__(self, device: str, seed: int) -> None:
        self.device = device
        self.rng = np.random.default_rng(seed)
        self.made: list[lucid.Tensor] = []

    def __call__(self, shape: tuple[int, ...], t: bool = False) -> lucid.Tensor:
        values = self.rng.standard_normal(shape[::-1] if t else shape).astype(np.float32)
        x = lucid.Tensor(values, requires_grad=True, device=self.device)
        self.made.append(x)
        return lucid.swapaxes(x, 0, len(shape) - 1) if t else x


def _outcome(fn: Callable, device: str) -> Any:
    """What ``fn`` gives on ``device``: its outputs and the gradients of their float sum, or
    the kind of error it raised."""
    T = _Maker(device, seed=0)
    try:
        out = fn(T)
        outs = out if isinstance(out, tuple) else (out,)
        floats = [o for o in outs if o.dtype.is_floating_point and o.requires_grad]
        if floats:
            total = floats[0].sum()
            for o in floats[1:]:
                total = total + o.sum()
            total.backward()
        return ([(o.shape, o.dtype, o.numpy()) for o in outs],
                [None if x.grad is None else np.array(x.grad) for x in T.made])
    except Exception as exc:  # compared by kind: both devices must refuse alike
        return f"{type(exc).__name__}: {exc}"


def _same(name: str, cpu: Any, gpu: Any) -> None:
    if isinstance(cpu, str) or isinstance(gpu, str):
        kind = lambda r: r.split(":")[0] if isinstance(r, str) else "a result"  # noqa: E731
        assert kind(cpu) == kind(gpu), f"{name}: cpu gives {cpu!r}, gpu {gpu!r}"
        return
    (outs_c, grads_c), (outs_g, grads_g) = cpu, gpu
    for (shape_c, dtype_c, vc), (shape_g, dtype_g, vg) in zip(outs_c, outs_g):
        assert (shape_c, dtype_c) == (shape_g, dtype_g), f"{name}: {shape_c} vs {shape_g}"
        np.testing.assert_allclose(vg, vc, rtol=1e-4, atol=1e-5, err_msg=name)
    for gc, gg in zip(grads_c, grads_g):
        assert (gc is None) == (gg is None), name
        if gc is not None:
            np.testing.assert_allclose(gg, gc, rtol=1e-4, atol=1e-5, err_msg=name)


def run_all(seed: int) -> int:
    """Every case on "cpu" and "gpu", in an order drawn from ``seed``; returns the count."""
    names = sorted(CASES)
    random.Random(seed).shuffle(names)
    with np.errstate(all="ignore"):
        for name in names:
            _same(name, _outcome(CASES[name], "cpu"), _outcome(CASES[name], "gpu"))
    return len(names)


# -- the tests: fresh interpreters, a time limit, the exit signal -----------------------------
def _fresh_runs(args: list[list[str]], limit: float) -> list[tuple[int, str]]:
    """Run ``python -c CODE`` for each argument list at once, each in a fresh interpreter;
    a process past ``limit`` seconds is killed (a hang)."""
    procs = [subprocess.Popen([sys.executable, *a], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True) for a in args]
    results = []
    for p in procs:
        try:
            out, err = p.communicate(timeout=limit)
        except subprocess.TimeoutExpired:
            p.kill()
            p.communicate()
            results.append((None, "hung (killed after the time limit)"))
            continue
        results.append((p.returncode, out + err[-3000:]))
    return results


def _signal_name(rc: int | None) -> str:
    if rc is None or rc >= 0:
        return f"exit code {rc}"
    return signal.Signals(-rc).name


def test_every_family_on_empty_and_transposed_inputs_in_fresh_gpu_processes():
    runs = _fresh_runs([[__file__, str(seed)] for seed in range(4)], limit=90)
    for rc, text in runs:
        assert rc == 0, f"{_signal_name(rc)}:\n{text}"
        assert text.startswith(f"ok {len(CASES)}"), text


HUGE = {
    "a sum of a broadcast view of 2^40 elements": (
        "lucid.broadcast_to(lucid.ones((1, 1), device='gpu'), (2**20, 2**20)).sum()",
        "broadcast_to"),
    "a product past 2^31 elements": (
        "lucid.ones((2**16, 1), device='gpu') * lucid.ones((1, 2**16), device='gpu')", "mul"),
    "tile to a 2^40-long axis": ("lucid.tile(lucid.ones((2,), device='gpu'), (2**39,))", "tile"),
    "repeat to a 2^40-long axis": (
        "lucid.repeat(lucid.ones((2,), device='gpu'), 2**39)", "repeat"),
    "pad to a 2^40-long axis": ("lucid.pad(lucid.ones((2,), device='gpu'), (2**40, 0))", "pad"),
}


def test_sizes_past_the_gpu_limit_are_refused_naming_the_op_in_fresh_processes():
    code = ("import warnings; warnings.simplefilter('ignore'); import lucid\n"
            "try:\n    {expr}\nexcept OverflowError as e:\n    print(e)\n")
    names = list(HUGE)
    runs = _fresh_runs([["-c", code.format(expr=HUGE[n][0])] for n in names], limit=60)
    for name, (rc, text) in zip(names, runs):
        assert rc == 0, f"{name}: {_signal_name(rc)}:\n{text}"
        op = HUGE[name][1]
        assert text.startswith(f"{op}: ") and "32-bit" in text, f"{name}: {text}"


def test_complex128_on_gpu_says_what_to_do():
    with pytest.raises(TypeError, match=r"Complex128 cannot be stored on 'gpu': MLX has no "
                       r"complex128.*astype\(lucid.Complex64\)"):
        lucid.Tensor(np.zeros(2, np.complex128), device="gpu")
    z = lucid.Tensor(np.array([1 + 2j], np.complex128)).astype(lucid.Complex64).to("gpu")
    assert z.dtype == lucid.Complex64 and z.numpy()[0] == 1 + 2j


if __name__ == "__main__":
    warnings.simplefilter("ignore")
    print(f"ok {run_all(int(sys.argv[1]))}")


@pytest.mark.parametrize("dtype", [np.float64, np.float16, np.int64, np.bool_])
def test_a_reduction_of_nothing_on_gpu_keeps_numpys_dtype(dtype):
    """A sum over an empty array is computed with NumPy, whose answer is a NumPy scalar
    (np.float64(0.0)); MLX reads a scalar as a Python number, so it came back float32."""
    data = np.zeros((0, 3), dtype)
    for name, f, ref in [
        ("sum", lambda t: t.sum(), np.sum(data)),
        ("prod", lambda t: t.prod(), np.prod(data)),
        ("einsum", lambda t: lucid.einsum("ij->", t), np.einsum("ij->", data)),
    ]:
        for device in ("cpu", "gpu"):
            y = f(lucid.Tensor(data, device=device))
            assert y.dtype == lucid.types.to_numeric_type(np.asarray(ref).dtype), (name, device)
            assert y.item() == ref.item()

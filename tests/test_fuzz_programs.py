"""Random programs of 3-8 public ops on random shapes, checked end to end (property-based).

Each example draws an input (0-d, or axes of size 0, 1, 2 or 3) and a program: a list of steps
such as ``tanh``, ``x + other``, ``sum(axis=1, keepdims=True)``, ``reshape(-1)``,
``softmax(axis=0)`` or ``x @ x.T``.  A step may not fit the shape it meets; then the call must
fail with a Lucid error that names an op -- and fail the same way on both devices.  When the
program runs, four things must hold:

* "cpu" and "gpu" agree in float32: values and gradients;
* in float64 the gradients match central finite differences;
* nothing crashes the interpreter (a crash would end the test session);
* every error is a Lucid error (ValueError, TypeError, IndexError or RuntimeError) whose
  message starts with the op's name.

``make test`` runs a bounded number of examples; ``make fuzz`` sets ``LUCID_FUZZ_EXAMPLES``
high for long runs.
"""

from __future__ import annotations

import os
import re
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lucid

pytest.importorskip("mlx.core", reason="MLX is not installed; `make test` installs mlx[cpu]")

EXAMPLES = int(os.environ.get("LUCID_FUZZ_EXAMPLES", "200"))
LUCID_ERRORS = (ValueError, TypeError, IndexError, RuntimeError)
#: a Lucid error message starts with the op's (or function's) name and a colon
NAMED = re.compile(r"^(backward through )?[A-Za-z_][A-Za-z_0-9.\[\]]*( \w+)?:")

# -- the steps a program is made of: name -> (function of (x, other, arg), argument strategy) --
# Every step is smooth where the samples land (no max/min ties, no kinks at exactly 0 that
# finite differences would straddle): abs/relu see |x| > 0 because inputs avoid [-0.05, 0.05].
UNARY = {
    "neg": lambda x: -x,
    "exp": lambda x: lucid.exp(x * 0.5),
    "tanh": lucid.tanh,
    "sin": lucid.sin,
    "square": lambda x: x * x,
    "sigmoid": lucid.sigmoid,
    "softplus": lucid.softplus,
    "log1p_sq": lambda x: lucid.log(1 + x * x),
    "sqrt_shift": lambda x: lucid.sqrt(x * x + 1),
    "silu": lucid.silu,
    "gelu_tanh": lambda x: lucid.gelu(x, approximate="tanh"),
    "scale": lambda x: x * 1.5 - 0.25,
}


def _axis(x, raw):
    return raw % max(x.ndim, 1) if raw is not None else None


STEPS = {
    **{name: (lambda x, other, arg, f=f: f(x)) for name, f in UNARY.items()},
    "add_other": lambda x, other, arg: x + other,
    "mul_other": lambda x, other, arg: x * other,
    "sub_from_other": lambda x, other, arg: other - x,
    "div_by_other": lambda x, other, arg: x / (other * other + 1),
    "maximum_other": lambda x, other, arg: lucid.maximum(x, other + 10.0),
    "sum": lambda x, other, arg: lucid.sum(x, axis=_axis(x, arg[0]), keepdims=arg[1]),
    "mean": lambda x, other, arg: lucid.mean(x, axis=_axis(x, arg[0]), keepdims=arg[1]),
    "logsumexp": lambda x, other, arg: lucid.logsumexp(x, axis=_axis(x, arg[0]),
                                                      keepdims=arg[1]),
    "softmax": lambda x, other, arg: lucid.softmax(x, axis=arg[0] or 0),
    "log_softmax": lambda x, other, arg: lucid.log_softmax(x, axis=arg[0] or 0),
    "cumsum": lambda x, other, arg: lucid.cumsum(x, axis=arg[0] or 0),
    "reshape_flat": lambda x, other, arg: x.reshape(-1),
    "transpose": lambda x, other, arg: x.T,
    "unsqueeze": lambda x, other, arg: lucid.unsqueeze(x, 0),
    "squeeze": lambda x, other, arg: lucid.squeeze(x),
    "slice": lambda x, other, arg: x[1:] if x.ndim else x,
    "flip_index": lambda x, other, arg: x[::-1] if x.ndim else x,
    "concat_other": lambda x, other, arg: lucid.concatenate([x, other * 2.0], axis=0),
    "matmul_self": lambda x, other, arg: x @ x.mT if x.ndim >= 2 else x @ x,
    "var": lambda x, other, arg: lucid.var(x, axis=_axis(x, arg[0])),
    "where_pos": lambda x, other, arg: lucid.where(other > 0, x, x * 0.5),
    "abs": lambda x, other, arg: lucid.abs(x),
    "relu": lambda x, other, arg: lucid.relu(x),
    "clip": lambda x, other, arg: lucid.clip(x, -1.0, 1.0),
    "pow_other": lambda x, other, arg: (x * x + 1) ** (other * 0.5),
    "pad": lambda x, other, arg: lucid.pad(x, 1),
    "repeat": lambda x, other, arg: lucid.repeat(x, 2, axis=_axis(x, arg[0])),
    "tile": lambda x, other, arg: lucid.tile(x, 2),
    "stack_other": lambda x, other, arg: lucid.stack([x, other], axis=0),
    "broadcast": lambda x, other, arg: lucid.broadcast_to(x, (2, *x.shape)),
    "swapaxes": lambda x, other, arg: lucid.swapaxes(x, 0, -1),
    "first": lambda x, other, arg: x[0],
    "take_rows": lambda x, other, arg: x[[0, 0, -1]] if x.ndim else x,
    "sort_values": lambda x, other, arg: lucid.sort(x, axis=-1)[0],
    "flatten": lambda x, other, arg: lucid.flatten(x),
}

dims = st.integers(0, 3)
shapes = st.lists(dims, min_size=0, max_size=3).map(tuple)
step_args = st.tuples(st.one_of(st.none(), st.integers(-3, 3)), st.booleans())
programs = st.lists(st.tuples(st.sampled_from(sorted(STEPS)), step_args), min_size=3,
                    max_size=8)


def _samples(shape, seed):
    """Values in +-[0.05, 1.5] (away from 0: no kink is straddled by finite differences)."""
    rng = np.random.default_rng(seed)
    mag = rng.uniform(0.05, 1.5, size=shape)
    return np.asarray(mag * rng.choice([-1.0, 1.0], size=shape), dtype=np.float64)


#: steps that grow the tensor are skipped past this many elements (keeps examples small)
MAX_SIZE = 512
GROWING = {"pad", "repeat", "tile", "stack_other", "broadcast", "concat_other", "take_rows",
           "matmul_self"}


def _run(program, x, other):
    for name, arg in program:
        if name in GROWING and x.size > MAX_SIZE // 4:
            continue
        x = STEPS[name](x, other, arg)
    return x


def _outcome(program, xa, oa, device, dtype):
    """(output, input gradient) of ``sum(program(x) * w)``, or the error it raised."""
    x = lucid.Tensor(xa.astype(dtype), requires_grad=True, device=device)
    other = lucid.Tensor(oa.astype(dtype), device=device)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = _run(program, x, other)
            w = lucid.Tensor(np.random.default_rng(1).uniform(0.5, 1.5, y.shape).astype(dtype),
                             device=device)
            (y * w).sum().backward()
    except LUCID_ERRORS as exc:
        assert NAMED.match(str(exc)), f"an error that names no op: {type(exc).__name__}: {exc}"
        return exc
    return y.numpy(), (np.zeros(x.shape) if x.grad is None else np.array(x.grad))


def _finite_differences(program, xa, oa, eps=1e-6):
    """d sum(program(x) * w) / dx by central differences, in float64 on "cpu"."""
    other = lucid.Tensor(oa)

    def f(values):
        with lucid.no_grad(), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = _run(program, lucid.Tensor(values), other)
        w = np.random.default_rng(1).uniform(0.5, 1.5, y.shape)
        return float(np.sum(y.numpy() * w))

    grad = np.zeros(xa.shape)
    flat = grad.reshape(-1)
    for j in range(xa.size):
        plus, minus = xa.copy(), xa.copy()
        plus.reshape(-1)[j] += eps
        minus.reshape(-1)[j] -= eps
        flat[j] = (f(plus) - f(minus)) / (2 * eps)
    return grad


@settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 200,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(shape=shapes, program=programs, seed=st.integers(0, 2**16))
def test_random_programs(shape, program, seed):
    xa = _samples(shape, seed)
    oa = _samples(shape, seed + 1)

    exact = _outcome(program, xa, oa, "cpu", np.float64)
    cpu = _outcome(program, xa, oa, "cpu", np.float32)
    gpu = _outcome(program, xa, oa, "gpu", np.float32)

    # the same program fails the same way everywhere, or runs everywhere
    kinds = [type(o) if isinstance(o, Exception) else None for o in (exact, cpu, gpu)]
    assert kinds[0] == kinds[1] == kinds[2], (program, shape, exact, cpu, gpu)
    if isinstance(exact, Exception):
        return

    # cpu and gpu agree in float32
    (cv, cg), (gv, gg) = cpu, gpu
    assert cv.shape == gv.shape
    scale = max(1.0, float(np.max(np.abs(cv), initial=0.0)))
    np.testing.assert_allclose(gv, cv, atol=1e-4 * scale, rtol=1e-3)
    gscale = max(1.0, float(np.max(np.abs(cg), initial=0.0)))
    np.testing.assert_allclose(gg, cg, atol=1e-4 * gscale, rtol=1e-3)

    # float64 gradients match finite differences
    value, grad = exact
    if np.all(np.isfinite(value)) and np.all(np.abs(value) < 1e6):
        numeric = _finite_differences(program, xa, oa)
        np.testing.assert_allclose(grad, numeric, atol=1e-5 * max(1.0, np.abs(numeric).max(
            initial=0.0)), rtol=1e-4)

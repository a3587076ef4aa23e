"""``grad`` (gradients as values, leaves untouched) and ``gradcheck`` (autograd vs finite
differences), both public so learners can call them on their own functions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lucid.autograd import engine
from lucid.autograd.mode import no_grad
from lucid.backends import get_backend
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import Float64, to_numeric_type


def _as_tuple(x: Any) -> tuple[Tensor, ...]:
    return (x,) if isinstance(x, Tensor) else tuple(x)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    retain_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Tensor | None, ...]:
    """d(outputs)/d(inputs) as a tuple of Tensors, without touching any ``.grad``.

    Each output is seeded with ones (or its entry of ``grad_outputs``); gradients of several
    outputs add up.  An input the outputs do not depend on raises, unless ``allow_unused``.
    """
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    seeds = [None] * len(outs) if grad_outputs is None else list(_as_tuple(grad_outputs))
    totals: list[Any] = [None] * len(ins)
    for k, (out, seed) in enumerate(zip(outs, seeds)):
        if not out.requires_grad:
            raise RuntimeError(
                f"grad(): output {k} (shape {fmt(out.shape)}) does not require grad; no graph "
                "was recorded for it."
            )
        backend = get_backend(out.device)
        seed = backend.xp.ones_like(out.data) if seed is None else (
            seed.data if isinstance(seed, Tensor) else backend.asarray(seed))
        capture: dict = {t: None for t in ins}
        last = k == len(outs) - 1
        engine.run_backward(out, seed, retain_graph=retain_graph or not last, capture=capture)
        for i, t in enumerate(ins):
            g = capture[t]
            if g is not None:
                totals[i] = g if totals[i] is None else totals[i] + g
    result = []
    for i, (t, g) in enumerate(zip(ins, totals)):
        if g is None and not allow_unused:
            raise RuntimeError(
                f"grad(): input {i} (shape {fmt(t.shape)}) is not used to compute the "
                "outputs. Pass allow_unused=True to get None for it."
            )
        result.append(None if g is None else Tensor._wrap(g, t.device))
    return tuple(result)


class GradcheckError(AssertionError):
    """Raised by :func:`gradcheck` when autograd and finite differences disagree."""


def _check_precision(i: int, t: Tensor, eps: float) -> None:
    """Finite differences with a small ``eps`` need float64 values *and* float64 arithmetic:
    anything coarser needs a coarse ``eps`` (and tolerances to match)."""
    if eps >= 1e-4:
        return
    stored = to_numeric_type(t.data.dtype)  # what holds the values (MLX or NumPy dtype)
    if stored == Float64 and t.device == "cpu":
        return
    if t.device != "cpu" and t.dtype == Float64:
        what = (f"is a Float64 tensor on {t.device!r}, where MLX "
                + ("stores it as float32" if stored != Float64 else
                   "computes exp, log and the other functions only to float32 accuracy")
                + " (see the README's dtype table)")
    else:
        what = f"has dtype {t.dtype.name}"
    raise ValueError(
        f"gradcheck: input {i} {what}; finite differences with eps={eps} need float64 values "
        "and arithmetic. Check on 'cpu' with dtype=lucid.Float64, or pass eps=1e-3, "
        "atol=1e-3, rtol=1e-2 for a coarser float32-level check."
    )


def gradcheck(
    fn: Callable[..., Any],
    *inputs: Tensor,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    seed: int = 0,
) -> bool:
    """Check ``fn``'s gradients against central finite differences; True or GradcheckError.

    Every input with ``requires_grad=True`` is checked; its values must be stored in float64
    unless ``eps`` is coarse (>= 1e-4, with tolerances to match).  With a fixed
    random vector ``v`` per output, ``L = sum(fn(*inputs) * v)`` is differentiated twice:

    * by autograd (one backward pass), and
    * numerically, element by element:  dL/dx_i ~ (L(x + eps e_i) - L(x - eps e_i)) / (2 eps).

    A random ``v`` makes every entry of the Jacobian count, so a wrong rule almost surely shows.
    They must agree to ``|analytic - numeric| <= atol + rtol * |numeric|``.
    """
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradcheck: no input has requires_grad=True; nothing to check")
    for i in checked:
        _check_precision(i, inputs[i], eps)
    rng = np.random.default_rng(seed)
    outs = _as_tuple(fn(*inputs))
    outs = tuple(o for o in outs if o.requires_grad)
    if not outs:
        raise ValueError("gradcheck: fn's output does not require grad (is it connected?)")
    weights = [rng.standard_normal(o.shape) for o in outs]

    def objective() -> float:
        with no_grad():
            res = _as_tuple(fn(*inputs))
        res = [r for r in res if np.issubdtype(np.asarray(r.numpy()).dtype, np.inexact)]
        return float(sum(np.sum(r.numpy() * w) for r, w in zip(res, weights)))

    analytic = grad(outs, [inputs[i] for i in checked],
                    grad_outputs=[Tensor._wrap(get_backend(o.device).asarray(w, dtype=o.data.dtype),
                                               o.device) for w, o in zip(weights, outs)],
                    allow_unused=True)
    for i, a in zip(checked, analytic):
        t = inputs[i]
        a = np.zeros(t.shape) if a is None else np.asarray(a.numpy(), dtype=np.float64)
        backend = get_backend(t.device)
        original = t.data
        host = backend.to_numpy(original)  # perturbed on the host, then put back on t's device
        numeric = np.zeros(t.shape)
        flat = numeric.reshape(-1)
        try:
            for j in range(t.size):
                plus = host.copy()
                plus.reshape(-1)[j] += eps
                t.data = backend.asarray(plus, dtype=original.dtype)
                f_plus = objective()
                minus = host.copy()
                minus.reshape(-1)[j] -= eps
                t.data = backend.asarray(minus, dtype=original.dtype)
                f_minus = objective()
                flat[j] = (f_plus - f_minus) / (2 * eps)
        finally:
            t.data = original
        bad = np.abs(a - numeric) > atol + rtol * np.abs(numeric)
        if bad.any():
            k = np.unravel_index(int(np.argmax(np.abs(a - numeric) * bad)), t.shape)
            raise GradcheckError(
                f"gradcheck: gradient of input {i} (shape {fmt(t.shape)}) is wrong at index "
                f"{tuple(int(x) for x in k)}: autograd gives {a[k]:.8g}, finite differences "
                f"give {numeric[k]:.8g} ({int(bad.sum())} of {t.size} entries differ; "
                f"eps={eps}, atol={atol}, rtol={rtol})"
            )
    return True

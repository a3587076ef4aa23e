"""``grad`` (gradients as values, leaves untouched) and ``gradcheck`` (autograd vs finite
differences), both public so learners can call them on their own functions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lucid.backends import get_backend
from lucid.engine.mode import enable_grad, no_grad
from lucid.engine.walk import run_backward
from lucid.ops import FUNCTIONS
from lucid.ops.graph_xp import GraphRules
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import Float64, to_numeric_type


def _as_tuple(x: Any) -> tuple[Tensor, ...]:
    return (x,) if isinstance(x, Tensor) else tuple(x)


def grad(
    outputs: Tensor | Sequence[Tensor],
    inputs: Tensor | Sequence[Tensor],
    grad_outputs: Any = None,
    retain_graph: bool | None = None,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Tensor | None, ...]:
    """d(outputs)/d(inputs) as a tuple of Tensors, without touching any ``.grad``.

    Each output is seeded with ones (or its entry of ``grad_outputs``); gradients of several
    outputs add up.  An input the outputs do not depend on raises, unless ``allow_unused``.
    ``create_graph=True`` records the backward pass, so the gradients have graphs and can be
    differentiated again (``retain_graph`` then defaults to True, as in PyTorch).
    """
    if retain_graph is None:
        retain_graph = create_graph
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
        if seed is None:
            seed = backend.xp.ones_like(out._data)
        elif not isinstance(seed, Tensor):
            seed = backend.asarray(seed)
        elif not create_graph:  # with create_graph a seed keeps its graph (jvp's double vjp)
            seed = seed._data
        capture: dict = {t: None for t in ins}
        last = k == len(outs) - 1
        run_backward(out, seed, retain_graph=retain_graph or not last, capture=capture,
                     rules=GraphRules() if create_graph else None)
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
        result.append(None if g is None else g if isinstance(g, Tensor) else
                      Tensor._wrap(g, t.device))
    return tuple(result)


class GradcheckError(AssertionError):
    """Raised by :func:`gradcheck` when autograd and finite differences disagree."""


def _check_precision(i: int, t: Tensor, eps: float) -> None:
    """Finite differences with a small ``eps`` need float64 values *and* float64 arithmetic:
    anything coarser needs a coarse ``eps`` (and tolerances to match)."""
    if eps >= 1e-4:
        return
    stored = to_numeric_type(t._data.dtype)  # what holds the values (MLX or NumPy dtype)
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
                    grad_outputs=[Tensor._wrap(get_backend(o.device).asarray(
                        w, dtype=o._data.dtype), o.device) for w, o in zip(weights, outs)],
                    allow_unused=True)
    for i, a in zip(checked, analytic):
        t = inputs[i]
        a = np.zeros(t.shape) if a is None else np.asarray(a.numpy(), dtype=np.float64)
        numeric = np.array([(up - down) / (2 * eps) for up, down in
                            _central_values(t, eps, objective)]).reshape(t.shape)
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


def gradgradcheck(
    fn: Callable[..., Any],
    *inputs: Tensor,
    eps: float = 1e-6,
    atol: float = 1e-5,
    rtol: float = 1e-3,
    seed: int = 0,
) -> bool:
    """Check ``fn``'s *second* derivatives against finite differences of its first ones.

    With a fixed random ``u`` per output, ``G(x) = grad(fn(x), x, grad_outputs=u,
    create_graph=True)`` is the vector-Jacobian product, itself a function of the inputs built
    by the backward rules running on Lucid ops; :func:`gradcheck` then compares ``G``'s
    gradient (a backward through the recorded backward pass) with finite differences of ``G``
    (first-order backward passes at ``x ± eps``).  A gradient that does not depend on the
    inputs at all (``fn`` linear in them) must then stay put under the perturbation: its
    second derivative is 0, and that is checked too.  True, or :class:`GradcheckError`.
    """
    checked = [i for i, t in enumerate(inputs) if isinstance(t, Tensor) and t.requires_grad]
    if not checked:
        raise ValueError("gradgradcheck: no input has requires_grad=True; nothing to check")
    rng = np.random.default_rng(seed)
    outs = [o for o in _as_tuple(fn(*inputs)) if o.requires_grad]
    if not outs:
        raise ValueError("gradgradcheck: fn's output does not require grad (is it connected?)")
    us = [Tensor._wrap(get_backend(o.device).asarray(rng.standard_normal(o.shape),
                                                     dtype=o._data.dtype), o.device)
          for o in outs]

    def first(*xs: Tensor) -> tuple[Tensor, ...]:
        with enable_grad():
            res = [o for o in _as_tuple(fn(*xs)) if o.requires_grad]
            grads = grad(res, [xs[i] for i in checked], grad_outputs=us[:len(res)],
                         create_graph=True, allow_unused=True)
        return tuple(g for g in grads if g is not None)

    if any(g.requires_grad for g in first(*inputs)):
        return gradcheck(lambda *xs: tuple(g for g in first(*xs) if g.requires_grad), *inputs,
                         eps=eps, atol=atol, rtol=rtol, seed=seed + 1)
    # the first derivatives were recorded as constants: their finite differences must be 0
    def gradients() -> list:
        return [g.numpy() for g in first(*inputs)]

    for i in checked:
        for j, (ups, downs) in enumerate(_central_values(inputs[i], eps, gradients)):
            for up, down in zip(ups, downs):
                slope = np.max(np.abs(up - down), initial=0.0) / (2 * eps)
                if slope > atol:
                    raise GradcheckError(
                        f"gradgradcheck: the gradient was recorded as a constant, but it "
                        f"changes when input {i} moves at index {j} (slope {slope:.6g}): "
                        "its second derivative is not 0, so a backward rule leaves the "
                        "graph (a float() or an array where a Tensor op belongs)")
    return True


def _central_values(t: Tensor, eps: float, evaluate: Callable[[], Any]) -> list[tuple]:
    """The finite-difference loop both checks share: for each element j of ``t``,
    ``(evaluate() at x + eps e_j, evaluate() at x - eps e_j)``.  Each shifted copy is made on
    the host and put on ``t``'s device; ``t`` gets its own values back afterwards."""
    backend = get_backend(t.device)
    original = t._data
    host = backend.to_numpy(original)
    values = []
    try:
        for j in range(t.size):
            pair = []
            for step in (eps, -eps):
                shifted = host.copy()
                shifted.reshape(-1)[j] += step
                t._data = backend.asarray(shifted, dtype=original.dtype)
                pair.append(evaluate())
            values.append(tuple(pair))
    finally:
        t._data = original
    return values


# -- PyTorch's torch.autograd.functional: Jacobians, Hessians and their products ---------------

def _inputs(inputs: Any) -> tuple[tuple[Tensor, ...], bool]:
    """The inputs as fresh leaves that require grad (the caller's are not touched), and
    whether one Tensor (not a tuple) was given."""
    single = isinstance(inputs, Tensor)
    xs = (inputs,) if single else tuple(inputs)
    for k, x in enumerate(xs):
        if not isinstance(x, Tensor):
            raise TypeError(f"inputs[{k}] is a {type(x).__name__}; give Tensors")
    return tuple(_leaf(x) for x in xs), single


def _leaf(x: Tensor) -> Tensor:
    t = Tensor._wrap(x._data, x.device, requires_grad=True)
    t._dtype = x._dtype
    return t


def _zeros_like(x: Tensor) -> Tensor:
    return Tensor._wrap(get_backend(x.device).xp.zeros_like(x._data), x.device)


def _as_seed(v: Any, like: Tensor, what: str) -> Tensor:
    v = v if isinstance(v, Tensor) else Tensor(v, dtype=like.dtype, device=like.device)
    if v.shape != like.shape:
        raise ValueError(f"{what}: v has shape {fmt(v.shape)}, expected {fmt(like.shape)}")
    return v


def vjp(func: Callable[..., Any], inputs: Any, v: Any = None,
        create_graph: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), vᵀ J)``: the vector-Jacobian product, one backward pass.  ``v`` has
    the output's shape (may be omitted for a scalar output)."""
    xs, single = _inputs(inputs)
    with enable_grad():
        out = func(*xs)
        if v is None:
            if out.size != 1:
                raise ValueError(f"vjp: the output has shape {fmt(out.shape)}; give v of that "
                                 "shape (it may be omitted for a scalar output only)")
            v = Tensor._wrap(get_backend(out.device).xp.ones_like(out._data), out.device)
        v = _as_seed(v, out, "vjp")
        grads = grad(out, xs, grad_outputs=v, create_graph=create_graph, allow_unused=True)
    grads = tuple(_zeros_like(x) if g is None else g for x, g in zip(xs, grads))
    out = out if create_graph else out.detach()
    return out, (grads[0] if single else grads)


def jvp(func: Callable[..., Any], inputs: Any, v: Any,
        create_graph: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), J v)``: the Jacobian-vector product (forward-mode derivative along
    ``v``), computed, as PyTorch does, with two backward passes: ``uᵀ J`` for a dummy ``u``
    recorded as a graph, then its gradient with respect to ``u`` along ``v``."""
    xs, single = _inputs(inputs)
    vs = (v,) if single else tuple(v)
    vs = tuple(_as_seed(t, x, "jvp") for t, x in zip(vs, xs))
    with enable_grad():
        out = func(*xs)
        u = Tensor._wrap(get_backend(out.device).xp.zeros_like(out._data), out.device,
                         requires_grad=True)
        g = grad(out, xs, grad_outputs=u, create_graph=True, allow_unused=True)
        pairs = [(gi, vi) for gi, vi in zip(g, vs) if gi is not None and gi.requires_grad]
        if not pairs:
            return out.detach(), _zeros_like(out)
        (jv,) = grad([gi for gi, _ in pairs], u, grad_outputs=[vi for _, vi in pairs],
                     create_graph=create_graph, allow_unused=True)
    jv = _zeros_like(out) if jv is None else jv
    return (out if create_graph else out.detach()), jv


def jacobian(func: Callable[..., Any], inputs: Any, create_graph: bool = False) -> Any:
    """The Jacobian of ``func`` at ``inputs``: for one input and one output, a Tensor of shape
    ``output.shape + input.shape`` (row by row: one backward pass per output element); for a
    tuple of inputs, a tuple of such Tensors."""
    xs, single = _inputs(inputs)
    with enable_grad():
        out = func(*xs)
        rows: list[list[Tensor]] = [[] for _ in xs]
        backend = get_backend(out.device)
        for k in range(out.size):
            e = np.zeros(out.size)
            e[k] = 1.0
            seed = Tensor._wrap(backend.asarray(e.reshape(out.shape), dtype=out._data.dtype),
                                out.device)
            gs = grad(out, xs, grad_outputs=seed, retain_graph=True, create_graph=create_graph,
                      allow_unused=True)
            for i, (x, g) in enumerate(zip(xs, gs)):
                rows[i].append(_zeros_like(x) if g is None else g)
    jac = tuple(_stack_rows(r, out.shape, x.shape) for r, x in zip(rows, xs))
    return jac[0] if single else jac


def _stack_rows(rows: list[Tensor], out_shape: tuple[int, ...],
                in_shape: tuple[int, ...]) -> Tensor:
    """Rows d out_k / d x, each of x's shape, as one Tensor of shape out_shape + in_shape
    (kept as a graph when the rows have one: stacked by the ``stack`` op)."""
    stacked = FUNCTIONS["stack"](rows)
    return stacked.reshape(out_shape + in_shape)


def hessian(func: Callable[..., Any], inputs: Any, create_graph: bool = False) -> Any:
    """The Hessian of a scalar ``func`` at ``inputs``: for one input of shape ``s``, a Tensor
    of shape ``s + s`` -- the Jacobian of the gradient."""
    xs, single = _inputs(inputs)
    if not single:
        raise NotImplementedError("hessian: one input Tensor (flatten and concatenate several)")

    def gradient(x: Tensor) -> Tensor:
        out = func(x)
        if out.size != 1:
            raise ValueError(f"hessian: func must return a scalar, got shape {fmt(out.shape)}")
        (g,) = grad(out, x, create_graph=True)
        return g

    return jacobian(gradient, xs[0], create_graph=create_graph)


def hvp(func: Callable[..., Any], inputs: Any, v: Any,
        create_graph: bool = False) -> tuple[Any, Any]:
    """``(func(inputs), H v)``: the Hessian-vector product of a scalar ``func``, two backward
    passes and no Hessian (the Hessian is symmetric, so ``vᵀ H = (H v)ᵀ``)."""
    xs, single = _inputs(inputs)
    vs = (v,) if single else tuple(v)
    vs = tuple(_as_seed(t, x, "hvp") for t, x in zip(vs, xs))
    with enable_grad():
        out = func(*xs)
        if out.size != 1:
            raise ValueError(f"hvp: func must return a scalar, got shape {fmt(out.shape)}")
        gs = grad(out, xs, create_graph=True, allow_unused=True)
        pairs = [(g, w) for g, w in zip(gs, vs) if g is not None and g.requires_grad]
        hv = grad([g for g, _ in pairs], xs, grad_outputs=[w for _, w in pairs],
                  create_graph=create_graph, allow_unused=True) if pairs else (None,) * len(xs)
    hv = tuple(_zeros_like(x) if h is None else h for x, h in zip(xs, hv))
    return (out if create_graph else out.detach()), (hv[0] if single else hv)

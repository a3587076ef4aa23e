"""Recurrent cells as single ops: one LSTM step, and a whole sequence of them.

An LSTM step made of the catalogue's ops is seventeen ops (W_hh·h, four slices, three
sigmoids, two tanh, products and sums), each with its own backward and its own gradient
arrays to add up.  :class:`LSTMStep` does the same arithmetic in one op: one matrix product,
then the gates on whole arrays, and its backward writes the four gates' gradients into one
array.  The result is the same as the composite's (a test holds them together, values and
gradients).  Drawn, a step is this op, its multiply-adds counted as MACs, the rest as FLOPs.
Its gradient for ``W_hh`` is returned as a :class:`~lucid.engine.grads.FactoredGrad`: the
walk gathers the T steps' factors and multiplies them once, one large matrix product instead
of T small ones added up.

:class:`LSTMSequence` runs the T steps of one layer and direction as one op, the same step
functions in a loop: what ``nn.LSTM`` runs when nobody is drawing or counting (PyTorch's LSTM
is one op too).  It keeps every step's activations in one array, so its backward writes each
step's gradient straight into the input projection's, and ``W_hh``'s gradient is one product.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.backends import backend_for
from lucid.engine.grads import FactoredGrad, PartGrad
from lucid.ops.base import Op
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["LSTMStep", "LSTMSequence"]

_CONSTANTS: dict[tuple, tuple[Any, Any, Any]] = {}


def _gate_constants(xp: Any, like: Any, k: int) -> tuple[Any, Any, Any]:
    """Per gate column (i, f, g, o, each ``k`` wide): the scale s = (½, ½, 1, ½), the shift
    (½, ½, 0, ½) and s², as arrays of ``like``'s kind and dtype.

    With a = tanh(s·z), s·a + shift is σ(z) for i, f, o (σ(z) = ½ tanh(z/2) + ½, an
    identity) and tanh(z) for g: all four activations in two passes over the whole array.
    Their derivative with respect to z is s²·(1 - a²) = s² - (act - shift)², from the
    activations alone."""
    raw = like._data if isinstance(like, Tensor) else like
    key = (type(raw), raw.dtype, k)
    found = _CONSTANTS.get(key)
    if found is None:
        scale = np.repeat([0.5, 0.5, 1.0, 0.5], k)
        shift = np.repeat([0.5, 0.5, 0.0, 0.5], k)
        make = backend_for(xp).asarray
        found = _CONSTANTS[key] = (make(scale, raw.dtype), make(shift, raw.dtype),
                                   make(scale * scale, raw.dtype))
    return found


class _Into:
    """The arithmetic of the step, written once for every namespace: NumPy's functions write
    their result into ``out`` when one is given (the step then makes no temporary array);
    those of any other namespace (MLX, or Lucid ops under ``create_graph``) ignore ``out`` and
    return a new array."""

    def __init__(self, xp: Any) -> None:
        self.xp = xp

    def __getattr__(self, name: str) -> Any:
        fn = getattr(self.xp, name)
        if self.xp is np:
            return fn
        return lambda *args, out=None: fn(*args)


def _step_forward(xp: Any, z: Any, c: Any, k: int, h_out: Any = None, c_out: Any = None,
                  tc_out: Any = None) -> tuple[Any, Any, Any, Any]:
    """One step from its pre-activations z = xw + h W_hhᵀ and the previous c: the gate
    activations (i, f, g, o side by side), tanh(c'), h' and c'.

    Given NumPy arrays ``h_out``, ``c_out`` (and ``tc_out``), h', c' (and tanh(c')) are
    written into them and z itself becomes the activations: the same arithmetic in place."""
    u = _Into(xp)
    scale, shift, _ = _gate_constants(xp, z, k)
    za = z if h_out is not None else None  # where the activations go: z itself, or anew
    act = u.add(u.multiply(u.tanh(u.multiply(z, scale, out=za), out=za), scale, out=za),
                shift, out=za)  # tanh(s·z)·s + shift
    i, f, g, o = act[..., :k], act[..., k:2 * k], act[..., 2 * k:3 * k], act[..., 3 * k:]
    c2 = u.add(u.multiply(f, c, out=c_out), i * g, out=c_out)  # c' = f⊙c + i⊙g
    tc = u.tanh(c2, out=tc_out)
    return act, tc, u.multiply(o, tc, out=h_out), c2  # h' = o⊙tanh(c')


def _step_backward(xp: Any, gh: Any, gc: Any, act: Any, tc: Any, c: Any, k: int,
                   dz_out: Any = None) -> tuple[Any, Any]:
    """One step's backward from the gradients gh, gc of h' and c': dc' and dz (= dxw).
    Given a NumPy array ``dz_out``, dz is written into it."""
    u = _Into(xp)
    _, shift, scale2 = _gate_constants(xp, tc, k)
    i, g, o = act[..., :k], act[..., 2 * k:3 * k], act[..., 3 * k:]
    dc2 = 1 - tc * tc  # dc' = gc + gh⊙o⊙(1 - t²)
    dc2 = u.add(u.multiply(u.multiply(dc2, o, out=dc2), gh, out=dc2), gc, out=dc2)
    pairs = [(dc2, g), (dc2, c), (dc2, i), (gh, tc)]
    if dz_out is None:
        dz = xp.concatenate([a * b for a, b in pairs], axis=-1)
    else:
        dz = dz_out
        for n, (a, b) in enumerate(pairs):
            np.multiply(a, b, out=dz[..., n * k:(n + 1) * k])
    d = act - shift
    d = u.subtract(scale2, u.multiply(d, d, out=d), out=d)  # s² - (act - shift)²
    return dc2, u.multiply(dz, d, out=dz_out)


def _check_shapes(op: Op, xw_t: Any, w: Any, state: Any, what: str) -> int:
    """The hidden size H, once the shapes agree (else an error naming all three)."""
    shape = tuple(state.shape)
    k = shape[-1] if shape else 0
    if len(shape) < 2 or shape[0] != 2 or tuple(xw_t.shape) != (*shape[1:-1], 4 * k) or \
            tuple(w.shape) != (4 * k, k):
        raise op.error(f"projection {what}, weight {fmt(tuple(w.shape))} and state "
                       f"{fmt(shape)}: the state must be h and c stacked, (2, ..., H), the "
                       "projection (..., 4·H) and the weight (4·H, H)")
    return k


def _same_numpy(*arrays: Any) -> bool:
    """Whether the in-place NumPy path applies: NumPy arrays of one dtype."""
    first = arrays[0]
    return isinstance(first, np.ndarray) and all(
        isinstance(a, np.ndarray) and a.dtype == first.dtype for a in arrays[1:])


class LSTMStep(Op):
    """One LSTM step: z = xw + h W_hhᵀ; i, f, g, o = σ, σ, tanh, σ of z's four blocks
    (PyTorch's gate order); c' = f⊙c + i⊙g; h' = o⊙tanh(c').

    Computed as (s and shift per block, see :func:`_gate_constants`)::

        z = xw + h W_hhᵀ;   a = tanh(s⊙z);   i, f, g, o = s⊙a + shift   (σ for i, f, o)
        c' = f⊙c + i⊙g;     h' = o⊙tanh(c')

    ``xw`` (…, 4H) is the input's projection W_ih·x + b_ih + b_hh (both biases, added once
    outside the loop) -- or, with ``t``, the projections of every time step, (T, …, 4H), of
    which step ``t`` is read.  ``w_hh`` is (4H, H); ``state`` is h and c stacked, (2, …, H),
    and so is the result.  Backward, with t = tanh(c') and the incoming gradients gh, gc of h'
    and c':

        dc' = gc + gh⊙o⊙(1 - t²)
        dz  = [dc'⊙g, dc'⊙c, dc'⊙i, gh⊙t] ⊙ (s² - (act - shift)²)   = dxw (step t)
        dh  = dz W_hh;   dc = dc'⊙f;   dW_hh = dzᵀ h

    Only the gradients of the inputs that need one are computed.  Counts, per sample: forward
    4H·H MACs and 25 FLOPs per hidden value (z 4, activations 16, c' 3, h' 2); backward 26
    FLOPs per hidden value for dz and dc, plus 4H·H MACs for each of dh and dW_hh wanted.
    """

    name = "lstm_step"
    function = None  # nn.LSTM and nn.LSTMCell call it; no lucid.lstm_step
    inputs = ("xw", "w_hh", "state")
    saves_inputs = (1, 2)  # W_hh and the state (h for dW_hh, c for dz); the gates are kept
    wants_needs = True  # a gradient only for the inputs that need one
    counts_macs = True

    def __init__(self, t: int | None = None) -> None:
        self.step = t

    def forward(self, xp, xw, w, state):
        xw_t = xw if self.step is None else xw[self.step]
        k = _check_shapes(self, xw_t, w, state, f"{fmt(tuple(xw.shape))} (step {self.step})")
        h, c = state[0], state[1]
        self.h, self.c, self.w = h, c, w
        self.xw_shape, self.xw_dtype = tuple(xw.shape), xw.dtype
        z = xp.matmul(h, w.T)
        self.in_place = _same_numpy(z, xw_t, c)
        if self.in_place:  # NumPy: the same arithmetic, written into fresh arrays in place
            z += xw_t
            out = np.empty((2, *c.shape), c.dtype)
            self.act, self.t, _, _ = _step_forward(np, z, c, k, out[0], out[1])
            return out
        self.act, self.t, h2, c2 = _step_forward(xp, z + xw_t, c, k)
        return xp.stack([h2, c2])

    def backward(self, xp, g):
        act, t, needs = self.act, self.t, self.needs
        k = t.shape[-1]
        gh, gc = g[0], g[1]
        in_place = self.in_place and _same_numpy(g, act)
        if in_place:
            dc2, dz = _step_backward(np, gh, gc, act, t, self.c, k,
                                     np.empty(act.shape, act.dtype))
        else:
            dc2, dz = _step_backward(xp, gh, gc, act, t, self.c, k)
        dxw = dw = dstate = None
        if needs[0]:
            # x[t]'s part of the whole input projection's gradient: the walk adds it into place
            dxw = dz if self.step is None else PartGrad(self.xw_shape, self.xw_dtype,
                                                        (self.step,), dz)
        if needs[1]:  # the walk multiplies all steps' factors at once
            dw = FactoredGrad(dz.reshape(-1, 4 * k), self.h.reshape(-1, k), self.w.dtype)
        f = act[..., k:2 * k]
        if needs[2] and in_place:
            dstate = np.empty((2, *dc2.shape), dc2.dtype)
            np.matmul(dz, self.w, out=dstate[0])
            np.multiply(dc2, f, out=dstate[1])
        elif needs[2]:
            dstate = xp.stack([xp.matmul(dz, self.w), dc2 * f])
        return (dxw, dw, dstate)

    def forward_flops(self, out, xw, w, state):
        return _step_macs(state) + 25 * state.size // 2

    def backward_flops(self, out, xw, w, state):
        needs = self.needs
        return (25 + needs[2]) * state.size // 2 + _step_macs(state) * (needs[1] + needs[2])

    def macs_of(self, flops, flops_bwd, out, xw, w, state):
        macs = _step_macs(state)
        return macs, macs * (self.needs[1] + self.needs[2])


def _step_macs(state: Any) -> int:
    """MACs of one step's h W_hhᵀ (and of each of its backward products): (samples·H) hidden
    values, 4H multiply-adds each."""
    return (state.size // 2) * 4 * state.shape[-1]


class LSTMSequence(Op):
    """All steps of one LSTM layer and direction as one op: the LSTM step (z = xw_t + h W_hhᵀ,
    the gates, c', h') for t = 0, 1, …, T-1, or T-1, …, 0 in reverse.

    The same arithmetic as :class:`LSTMStep` at each step.

    ``xw`` (T, …, 4H) holds the input projections of all steps, ``w_hh`` is (4H, H) and
    ``state`` the initial h and c stacked, (2, …, H).  Returns h and c of every step, (2, T,
    …, H), in time order (``[0]`` is the layer's output).  Backward runs the steps in reverse,
    writing each step's dz into dxw; then dW_hh = Σ_t dz_tᵀ h_(t-1) is one product.  Counts:
    T times :class:`LSTMStep`'s, with the state of every step but the first needing its
    gradient.
    """

    name = "lstm_sequence"
    function = None  # nn.LSTM calls it; no lucid.lstm_sequence
    inputs = ("xw", "w_hh", "state")
    saves_inputs = (1, 2)
    saves_output = True  # backward reads the h and c of every step
    wants_needs = True
    counts_macs = True

    def __init__(self, reverse: bool = False) -> None:
        self.reverse = reverse

    def _order(self, steps: int) -> range:
        return range(steps - 1, -1, -1) if self.reverse else range(steps)

    def forward(self, xp, xw, w, state):
        if xw.ndim < 1 or xw.shape[0] < 1:
            raise self.error(f"projection {fmt(tuple(xw.shape))}: needs at least one step")
        k = _check_shapes(self, xw[0], w, state, f"{fmt(tuple(xw.shape))} (T steps)")
        steps = xw.shape[0]
        self.w, self.state = w, state
        h, c = state[0], state[1]
        if _same_numpy(xw, w, state):  # NumPy: every step written into three arrays
            out = np.empty((2, steps, *c.shape), c.dtype)
            acts = np.empty(xw.shape, xw.dtype)
            tcs = np.empty((steps, *c.shape), c.dtype)
            for t in self._order(steps):
                z = np.matmul(h, w.T, out=acts[t])
                z += xw[t]
                _step_forward(np, z, c, k, out[0, t], out[1, t], tcs[t])
                h, c = out[0, t], out[1, t]
            self.acts, self.tcs, self.out = acts, tcs, out
            return out
        acts, tcs, hs, cs = ([None] * steps for _ in range(4))
        for t in self._order(steps):
            acts[t], tcs[t], hs[t], cs[t] = _step_forward(xp, xp.matmul(h, w.T) + xw[t], c, k)
            h, c = hs[t], cs[t]
        self.acts, self.tcs, self.out = acts, tcs, None
        self.hs, self.cs = hs, cs
        return xp.stack([xp.stack(hs), xp.stack(cs)])

    def backward(self, xp, g):
        needs = self.needs
        order = list(self._order(len(self.acts)))
        if self.out is not None and _same_numpy(g, self.out):
            dxw, dh, dc = self._backward_in_place(g, order)
        else:
            dxw, dh, dc = self._backward_any(xp, g, order)
        dw = None
        if needs[1]:  # Σ_t dz_tᵀ h_(t-1): all steps' rows in one product
            dw = self._weight_grad(xp, dxw, order)
        dstate = xp.stack([dh, dc]) if needs[2] else None
        return (dxw if needs[0] else None), dw, dstate

    def _backward_any(self, xp, g, order):
        """The steps' backward in reverse, on any namespace: (dxw, dh0, dc0)."""
        state, k = self.state, self.state.shape[-1]
        dzs = [None] * len(order)
        dh = dc = None
        for n in range(len(order) - 1, -1, -1):
            t = order[n]
            act = self.acts[t]
            gh = g[0, t] if dh is None else g[0, t] + dh
            gc = g[1, t] if dc is None else g[1, t] + dc
            c_prev = state[1] if n == 0 else self._c(order[n - 1])
            dc2, dzs[t] = _step_backward(xp, gh, gc, act, self.tcs[t], c_prev, k)
            if n > 0 or self.needs[2]:  # the initial state's gradient only when it needs one
                dh, dc = xp.matmul(dzs[t], self.w), dc2 * act[..., k:2 * k]
        return xp.stack(dzs), dh, dc

    def _backward_in_place(self, g, order):
        """:meth:`_backward_any` on NumPy arrays: each step's dz written into dxw, the
        running dh and dc kept in two arrays."""
        state, w, k = self.state, self.w, self.state.shape[-1]
        dxw = np.empty(self.acts.shape, self.acts.dtype)
        dh, dc = np.empty(state[0].shape, dxw.dtype), np.empty(state[1].shape, dxw.dtype)
        for n in range(len(order) - 1, -1, -1):
            t = order[n]
            act = self.acts[t]
            if n == len(order) - 1:  # the last step: only the outputs' gradient
                gh, gc = g[0, t], g[1, t]
            else:
                gh, gc = np.add(g[0, t], dh, out=dh), np.add(g[1, t], dc, out=dc)
            c_prev = state[1] if n == 0 else self.out[1, order[n - 1]]
            dc2, _ = _step_backward(np, gh, gc, act, self.tcs[t], c_prev, k, dxw[t])
            if n > 0 or self.needs[2]:
                np.matmul(dxw[t], w, out=dh)
                np.multiply(dc2, act[..., k:2 * k], out=dc)
        return dxw, dh, dc

    def _weight_grad(self, xp, dxw, order):
        """dW_hh = Σ_t dz_tᵀ h_(t-1): the first step read the initial h, every later step
        the h of the step before it -- the outputs shifted by one step."""
        k, first = self.state.shape[-1], order[0]
        dw = xp.matmul(dxw[first].reshape(-1, 4 * k).T, self.state[0].reshape(-1, k))
        if len(order) == 1:
            return dw
        if self.out is not None:  # h of steps 0..T-2 (forward) or 1..T-1 (reverse)
            hs = self.out[0, 1:] if self.reverse else self.out[0, :-1]
        else:
            hs = xp.stack(self.hs[1:] if self.reverse else self.hs[:-1])
        dz = dxw[:-1] if self.reverse else dxw[1:]
        rows = hs.size // k
        return dw + xp.matmul(dz.reshape(rows, 4 * k).T, hs.reshape(rows, k))

    def _c(self, t):
        return self.out[1, t] if self.out is not None else self.cs[t]

    def forward_flops(self, out, xw, w, state):
        return xw.shape[0] * (_step_macs(state) + 25 * state.size // 2)

    def backward_flops(self, out, xw, w, state):
        steps, needs, hidden = xw.shape[0], self.needs, state.size // 2
        macs = _step_macs(state) * (steps - 1 + needs[2] + steps * needs[1])
        return hidden * (26 * (steps - 1) + 25 + needs[2]) + macs

    def macs_of(self, flops, flops_bwd, out, xw, w, state):
        steps, needs = xw.shape[0], self.needs
        macs = _step_macs(state)
        return steps * macs, macs * (steps - 1 + needs[2] + steps * needs[1])

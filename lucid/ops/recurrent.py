"""Recurrent cells as single ops: one LSTM step, matrix product and gate arithmetic.

An LSTM step made of the catalogue's ops is seventeen ops (W_hh·h, four slices, three
sigmoids, two tanh, products and sums), each with its own backward and its own gradient
arrays to add up.  :class:`LSTMStep` does the same arithmetic in one op: one matrix product,
then the gates on whole arrays, and its backward writes the four gates' gradients into one
array.  The result is the same as the composite's (a test holds them together, values and
gradients).  Drawn, a step is this op (its multiply-adds counted as MACs, the rest as FLOPs)
and the ``h`` handed on.

Its gradient for ``W_hh`` is returned as a :class:`~lucid.autograd.engine.FactoredGrad`: the
walk gathers the T steps' factors and multiplies them once, one large matrix product instead
of T small ones added up (the way PyTorch's LSTM computes its weight gradients).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lucid.autograd.engine import FactoredGrad, PartGrad
from lucid.backends import backend_for
from lucid.ops.base import Op
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["LSTMStep"]

_CONSTANTS: dict[tuple, tuple[Any, Any, Any]] = {}


def _gate_constants(xp: Any, like: Any, k: int) -> tuple[Any, Any, Any]:
    """Per gate column (i, f, g, o, each ``k`` wide): the scale s = (½, ½, 1, ½), the shift
    (½, ½, 0, ½) and s², as arrays of ``like``'s kind and dtype.

    With a = tanh(s·z), s·a + shift is σ(z) for i, f, o (σ(z) = ½ tanh(z/2) + ½, an
    identity) and tanh(z) for g: all four activations in two passes over the whole array.
    Their derivative with respect to z is s²·(1 - a²) = s² - (act - shift)², from the
    activations alone."""
    raw = like.data if isinstance(like, Tensor) else like
    key = (type(raw), raw.dtype, k)
    found = _CONSTANTS.get(key)
    if found is None:
        scale = np.repeat([0.5, 0.5, 1.0, 0.5], k)
        shift = np.repeat([0.5, 0.5, 0.0, 0.5], k)
        make = backend_for(xp).asarray
        found = _CONSTANTS[key] = (make(scale, raw.dtype), make(shift, raw.dtype),
                                   make(scale * scale, raw.dtype))
    return found


class LSTMStep(Op):
    """One LSTM step (PyTorch's formulas, gate order input, forget, cell, output):

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
        shape = tuple(state.shape)
        k = shape[-1]
        want = (*shape[1:-1], 4 * k)
        xw_t = xw if self.step is None else xw[self.step]
        if len(shape) < 2 or shape[0] != 2 or tuple(xw_t.shape) != want or \
                tuple(w.shape) != (4 * k, k):
            raise self.error(f"projection {fmt(tuple(xw.shape))} (step {self.step}), weight "
                             f"{fmt(tuple(w.shape))} and state {fmt(shape)}: the state must "
                             "be h and c stacked, (2, ..., H), the projection (..., 4·H) and "
                             "the weight (4·H, H)")
        h, c = state[0], state[1]
        self.h, self.c, self.w = h, c, w
        self.shape, self.dtype = shape, state.dtype
        self.xw_shape, self.xw_dtype = tuple(xw.shape), xw.dtype
        z = xp.matmul(h, w.T)
        self.in_place = type(z) is np.ndarray and z.dtype == xw_t.dtype == c.dtype
        if self.in_place:  # NumPy: the same arithmetic, written into fresh arrays in place
            return self._forward_in_place(z, xw_t, c, k)
        z = z + xw_t
        scale, shift, _ = _gate_constants(xp, z, k)
        act = xp.tanh(z * scale) * scale + shift
        i, f, g, o = act[..., :k], act[..., k:2 * k], act[..., 2 * k:3 * k], act[..., 3 * k:]
        c2 = f * c + i * g
        self.act, self.t = act, xp.tanh(c2)
        return xp.stack([o * self.t, c2])

    def _forward_in_place(self, z, xw_t, c, k):
        z += xw_t
        scale, shift, _ = _gate_constants(np, z, k)
        z *= scale
        self.act = act = np.tanh(z, out=z)
        act *= scale
        act += shift
        out = np.empty((2, *c.shape), c.dtype)
        c2 = np.multiply(act[..., k:2 * k], c, out=out[1])
        c2 += act[..., :k] * act[..., 2 * k:3 * k]
        self.t = np.tanh(c2)
        np.multiply(act[..., 3 * k:], self.t, out=out[0])
        return out

    def backward(self, xp, g):
        act, t, needs = self.act, self.t, self.needs
        k = t.shape[-1]
        i, f, gg, o = act[..., :k], act[..., k:2 * k], act[..., 2 * k:3 * k], act[..., 3 * k:]
        gh, gc = g[0], g[1]
        _, shift, scale2 = _gate_constants(xp, t, k)
        in_place = self.in_place and type(g) is np.ndarray and g.dtype == act.dtype
        if in_place:
            dc2, dz = self._dz_in_place(gh, gc, i, f, gg, o, t, act, shift, scale2, k)
        else:
            dc2 = gc + gh * o * (1 - t * t)
            u = act - shift
            dz = xp.concatenate([dc2 * gg, dc2 * self.c, dc2 * i, gh * t], axis=-1) * \
                (scale2 - u * u)
        graph = isinstance(g, Tensor)  # create_graph: whole arrays, as Lucid ops
        dxw = dw = dstate = None
        if needs[0]:
            dxw = dz if self.step is None else self._part(xp, graph, self.xw_shape,
                                                          self.xw_dtype, self.step, dz)
        if needs[1]:
            h = self.h
            if graph:
                dw = xp.matmul(dz.reshape(-1, 4 * k).T, h.reshape(-1, k))
            else:  # the walk multiplies all steps' factors at once
                dw = FactoredGrad(dz.reshape(-1, 4 * k), h.reshape(-1, k))
        if needs[2] and in_place:
            dstate = np.empty((2, *dc2.shape), dc2.dtype)
            np.matmul(dz, self.w, out=dstate[0])
            np.multiply(dc2, f, out=dstate[1])
        elif needs[2]:
            dstate = xp.stack([xp.matmul(dz, self.w), dc2 * f])
        return (dxw, dw, dstate)

    def _dz_in_place(self, gh, gc, i, f, gg, o, t, act, shift, scale2, k):
        """dc' and dz of :meth:`backward`, in fresh NumPy arrays written in place."""
        dc2 = t * t
        np.subtract(1, dc2, out=dc2)
        dc2 *= o
        dc2 *= gh
        dc2 += gc
        dz = np.empty(act.shape, act.dtype)
        np.multiply(dc2, gg, out=dz[..., :k])
        np.multiply(dc2, self.c, out=dz[..., k:2 * k])
        np.multiply(dc2, i, out=dz[..., 2 * k:3 * k])
        np.multiply(gh, t, out=dz[..., 3 * k:])
        d = act - shift
        d *= d
        np.subtract(scale2, d, out=d)
        dz *= d
        return dc2, dz

    @staticmethod
    def _part(xp, graph, shape, dtype, index, value):
        """The gradient of a whole array that is ``value`` at ``[index]`` and 0 elsewhere."""
        if graph:
            return backend_for(xp).scatter_add(shape, dtype, (index,), value)
        return PartGrad(shape, dtype, (index,), value)  # the walk adds it into place

    def _macs(self, state):
        k = state.shape[-1]
        return (state.size // 2) * 4 * k  # (samples·H) hidden values, each 4H·H / H MACs

    def forward_flops(self, out, xw, w, state):
        return self._macs(state) + 25 * state.size // 2

    def backward_flops(self, out, xw, w, state):
        needs = self.needs
        flops = (5 + 20 * (needs[0] or needs[1] or needs[2]) + needs[2]) * state.size // 2
        return flops + self._macs(state) * (needs[1] + needs[2])

    def macs_of(self, flops, flops_bwd, out, xw, w, state):
        macs = self._macs(state)
        return macs, macs * (self.needs[1] + self.needs[2])

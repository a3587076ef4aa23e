"""Ctrl-C during backward and in grad-mode switches: all or nothing.

A KeyboardInterrupt is injected at every line Lucid runs during the call (tests/interrupts.py);
after each, the gradients are either all as before the call or all as after it, no gradient
is left in flight on a node, the grad mode is the one the call started in, and training goes on.
"""

from __future__ import annotations

import numpy as np

import lucid
from lucid import nn
from lucid.engine.mode import MODE
from tests.interrupts import at_every_line


def _model():
    rng = np.random.default_rng(0)
    lin1, lin2 = nn.Linear(3, 4), nn.Linear(4, 2)
    x = lucid.tensor(rng.standard_normal((5, 3)))
    params = [*lin1.parameters(), *lin2.parameters()]
    for p in params:  # the same values in every run
        p.data = rng.standard_normal(p.shape).astype(p.data.dtype)
    return lin1, lin2, x, params


def _loss(lin1, lin2, x):
    h = lucid.tanh(lin1(x))
    return (lin2(h) ** 2).sum() + (h[1:3] * 2.0).sum()  # a part gradient (h[1:3]) too


def _grads(params):
    return [None if p.grad is None else np.array(p.grad) for p in params]


def test_backward_interrupted_at_any_line_leaves_every_grad_before_or_after():
    lin1, lin2, x, params = _model()
    _loss(lin1, lin2, x).backward()
    before = _grads(params)  # one backward already ran: the next one accumulates
    _loss(lin1, lin2, x).backward()
    after = _grads(params)

    def setup():
        lin1, lin2, x, params = _model()
        _loss(lin1, lin2, x).backward()
        loss = _loss(lin1, lin2, x)
        return loss, params

    def check(state, interrupted):
        loss, params = state
        got = _grads(params)
        same = [np.array_equal(g, b) for g, b in zip(got, before)]
        done = [np.allclose(g, a, rtol=1e-12, atol=0) for g, a in zip(got, after)]
        assert all(same) or all(done), (interrupted, same, done)
        stack = [loss]
        while stack:  # no gradient left in flight anywhere in the graph
            node = stack.pop()
            assert node._g is None
            stack.extend(node._prev)
        for p in params:  # and training goes on: a fresh step adds one more gradient
            p.grad = None
        lin1, lin2, x, _ = _model()
        _loss(lin1, lin2, x).backward()
        assert lucid.grad_enabled() and not MODE.blocks

    count = at_every_line(setup, lambda s: s[0].backward(), check)
    assert count > 50  # the walk really ran Lucid's lines


def test_no_grad_function_interrupted_at_any_line_restores_grad_mode():
    @lucid.no_grad()
    def update(w):
        return w * 2.0

    def setup():
        return lucid.tensor([1.0, 2.0], requires_grad=True)

    def check(w, interrupted):
        assert lucid.grad_enabled() is True and MODE.blocks == []
        assert (w * 3.0).requires_grad  # graphs are recorded again

    assert at_every_line(setup, update, check) > 5

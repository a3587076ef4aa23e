"""Ctrl-C and the mode blocks: ``with lucid.no_grad():`` (bare, in a training step),
``enable_grad`` inside it, ``set_grad_enabled``, ``count_flops`` and ``record_ops``.

An interrupt at any line -- Lucid's, or the step's own lines here, the ``with`` line that
ends the block included -- must leave the thread with grad on, counting off and no block
open, and the next training step must compute the right gradients.  (tests/interrupts.py
injects the KeyboardInterrupts; the step's lines are interrupted too because ``folder`` is
the repository, not only ``lucid/``.)
"""

from __future__ import annotations

import contextlib
import signal
import threading
from pathlib import Path

import numpy as np
import pytest
from interrupts import at_every_line

import lucid
from lucid.engine.mode import MODE, record_ops, recording

REPO = str(Path(__file__).resolve().parent.parent)  # Lucid's lines and this file's

X = np.linspace(-1, 1, 20).reshape(5, 4)
Y = np.array([0, 2, 1, 2, 0])
LR = 0.1


def _modes_as_before() -> None:
    assert lucid.grad_enabled() and not lucid.flops_enabled() and recording() is None
    assert MODE.blocks == []


# -- d2l's softmax regression from scratch -------------------------------------------------
def _params() -> list[lucid.Tensor]:
    rng = np.random.default_rng(0)
    w = lucid.tensor(rng.normal(0, 0.1, (4, 3)), requires_grad=True)
    b = lucid.tensor(np.zeros(3), requires_grad=True)
    return [w, b]


def _net(params, x):
    w, b = params
    logits = lucid.matmul(x, w) + b
    e = lucid.exp(logits)
    return e / e.sum(1, keepdims=True)


def _loss(p_hat, y):
    return -lucid.log(p_hat[list(range(len(Y))), y])


def _reference_grads(w: np.ndarray, b: np.ndarray) -> list[np.ndarray]:
    """d(sum of cross-entropies)/d(w, b) in float64: softmax minus one-hot."""
    logits = X @ w + b
    p = np.exp(logits - logits.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    d = p - np.eye(3)[Y]
    return [X.T @ d, d.sum(0)]


def _step_bare_block(params) -> None:
    x, y = lucid.tensor(X), lucid.tensor(Y)
    l = _loss(_net(params, x), y)
    l.sum().backward()
    with lucid.no_grad():
        for p in params:
            p -= LR * p.grad
            p.grad.zero_()


@lucid.no_grad()
def _sgd(params, lr):
    for p in params:
        p -= lr * p.grad
        p.grad.zero_()


def _step_decorated(params) -> None:
    x, y = lucid.tensor(X), lucid.tensor(Y)
    _loss(_net(params, x), y).sum().backward()
    _sgd(params, LR)


def _training_goes_on(params) -> None:
    """A fresh step records a graph and gives the float64 reference gradients."""
    for p in params:
        p.grad = None
    w, b = (p.numpy().copy() for p in params)
    out = _net(params, lucid.tensor(X))
    assert out.requires_grad, "nothing recorded: the thread is still in no-grad mode"
    _loss(out, lucid.tensor(Y)).sum().backward()
    for p, ref in zip(params, _reference_grads(w, b)):
        np.testing.assert_allclose(p.grad.numpy(), ref, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("step", [_step_bare_block, _step_decorated],
                         ids=["bare-with-block", "decorated-sgd"])
def test_a_training_step_interrupted_at_any_line_leaves_training_able_to_go_on(step):
    def check(params, interrupted):
        _training_goes_on(params)
        _modes_as_before()

    count = at_every_line(_params, step, check, folder=REPO)
    assert count > 100  # the step really ran (the forward, backward and update lines)


def test_nested_blocks_interrupted_at_any_line_leave_grad_on():
    def nested(w):
        with lucid.no_grad():
            a = w * 2.0
            with lucid.enable_grad():
                b = w * 3.0
                with lucid.no_grad():
                    c = w * 4.0
                d = w * 5.0
            e = w * 6.0
        assert [t.requires_grad for t in (a, b, c, d, e)] == [False, True, False, True, False]

    def check(w, interrupted):
        _modes_as_before()
        assert (w * 2.0).requires_grad

    assert at_every_line(lambda: lucid.tensor([1.0, 2.0], requires_grad=True), nested, check,
                         folder=REPO) > 20


def _in_set_grad_enabled(w):
    with lucid.set_grad_enabled(False):
        (w * 2.0).sum()


def _in_inference_mode(w):
    with lucid.inference_mode():
        (w * 2.0).sum()


def _in_count_flops(w):
    with lucid.count_flops():
        (w * 2.0).sum()


def _in_record_ops(w):
    with record_ops():
        (w * 2.0).sum()


@pytest.mark.parametrize("run", [_in_set_grad_enabled, _in_inference_mode, _in_count_flops,
                                 _in_record_ops])
def test_every_mode_block_interrupted_at_any_line_puts_the_modes_back(run):
    def check(w, interrupted):
        _modes_as_before()
        y = w * 2.0
        assert y.requires_grad and y.flops == 0  # recorded again, and not counted

    assert at_every_line(lambda: lucid.tensor([1.0, 2.0], requires_grad=True), run, check,
                         folder=REPO) > 5


def test_set_grad_enabled_as_a_bare_call_still_switches_for_good():
    lucid.set_grad_enabled(False)
    try:
        w = lucid.tensor([1.0], requires_grad=True)
        assert not lucid.grad_enabled() and not (w * 2).requires_grad
        with lucid.enable_grad():
            assert (w * 2).requires_grad
        assert not lucid.grad_enabled()
    finally:
        lucid.set_grad_enabled(True)
    assert lucid.grad_enabled() and MODE.blocks == []


# -- the blocks behave as PyTorch's ----------------------------------------------------------
def test_enable_grad_inside_no_grad_ends_back_in_no_grad():
    w = lucid.tensor([1.0, 2.0], requires_grad=True)
    with lucid.no_grad():
        with lucid.enable_grad():
            assert (w * 2).requires_grad
        assert not (w * 2).requires_grad
        assert not lucid.grad_enabled()
    assert (w * 2).requires_grad


def test_a_block_entered_by_hand_through_exitstack_or_twice_restores_the_mode():
    w = lucid.tensor([1.0], requires_grad=True)
    by_hand = lucid.no_grad()
    by_hand.__enter__()
    assert not (w * 2).requires_grad
    by_hand.__exit__(None, None, None)
    assert (w * 2).requires_grad

    with contextlib.ExitStack() as stack:
        stack.enter_context(lucid.no_grad())
        assert not (w * 2).requires_grad
    assert (w * 2).requires_grad

    shared = lucid.no_grad()
    with shared:
        with shared:
            assert not lucid.grad_enabled()
        assert not lucid.grad_enabled()
    assert lucid.grad_enabled() and MODE.blocks == []


def test_the_exit_looked_up_before_the_enter_works_too():
    """Python 3.14's ``with`` looks ``__exit__`` up before ``__enter__``."""
    shared = lucid.no_grad()
    exit_outer, enter_outer = shared.__exit__, shared.__enter__
    enter_outer()
    exit_inner, enter_inner = shared.__exit__, shared.__enter__
    enter_inner()
    assert not lucid.grad_enabled()
    exit_inner(None, None, None)
    del exit_inner
    assert not lucid.grad_enabled()
    exit_outer(None, None, None)
    del exit_outer
    assert lucid.grad_enabled() and MODE.blocks == []


def test_an_exception_through_the_block_restores_the_mode():
    with pytest.raises(ValueError, match="inside"):
        with lucid.no_grad():
            raise ValueError("inside")
    assert lucid.grad_enabled() and MODE.blocks == []


def test_a_generator_closed_inside_its_block_restores_the_mode():
    w = lucid.tensor([1.0], requires_grad=True)

    def batches():
        with lucid.no_grad():
            yield (w * 2).requires_grad
            yield (w * 2).requires_grad

    gen = batches()
    assert next(gen) is False
    gen.close()
    assert lucid.grad_enabled() and MODE.blocks == []


def test_a_block_in_one_thread_is_invisible_to_another():
    seen = {}
    inside, done = threading.Event(), threading.Event()

    def other():
        inside.wait(5)
        seen["other"] = lucid.grad_enabled()
        done.set()

    t = threading.Thread(target=other)
    t.start()
    with lucid.no_grad():
        inside.set()
        done.wait(5)
        assert not lucid.grad_enabled()
    t.join(5)
    assert seen == {"other": True} and lucid.grad_enabled()


# -- a real signal ---------------------------------------------------------------------------
@pytest.mark.skipif(not hasattr(signal, "setitimer"), reason="needs POSIX interval timers")
def test_real_sigalrm_interrupts_anywhere_in_training_steps_never_leave_no_grad_mode():
    """A timer raises KeyboardInterrupt at a random moment (as Ctrl-C does: Python checks for
    signals between bytecodes) in a loop of steps with a bare ``no_grad`` block, 600 times.
    (Before the blocks' exits were C, about 2% of the interrupts left the thread in no-grad
    mode.)"""
    armed = [False]

    def handler(signum, frame):
        if armed[0]:
            armed[0] = False
            raise KeyboardInterrupt

    previous = signal.signal(signal.SIGALRM, handler)
    rng = np.random.default_rng(0)
    params = _params()
    x, y = lucid.tensor(X), lucid.tensor(Y)
    stuck = 0
    try:
        for _ in range(600):
            armed[0] = True
            try:
                signal.setitimer(signal.ITIMER_REAL, rng.uniform(1e-5, 3e-4))
                for _ in range(3):
                    _loss(_net(params, x), y).sum().backward()
                    with lucid.no_grad():
                        for p in params:
                            p -= 1e-3 * p.grad
                            p.grad.zero_()
            except KeyboardInterrupt:
                pass
            armed[0] = False
            signal.setitimer(signal.ITIMER_REAL, 0)
            if not _net(params, x).requires_grad:
                stuck += 1
                lucid.set_grad_enabled(True)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
    assert stuck == 0
    _modes_as_before()

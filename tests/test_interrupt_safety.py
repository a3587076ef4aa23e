"""Ctrl-C at every line of ``optimizer.step``, ``load_state_dict``, ``scheduler.step`` and
``lucid.save``: the state afterwards is as before the call or as after it, never in between,
and training goes on (tests/interrupts.py injects the KeyboardInterrupts)."""

from __future__ import annotations

import os

import numpy as np
import pytest
from interrupts import at_every_line

import lucid
from lucid import nn
from lucid.engine.mode import MODE
from lucid.optim import SGD, Adam, lr_scheduler


def _grad_mode_as_before() -> None:
    """``optimizer.step`` switches grad mode off for its computation; an interrupt anywhere in
    it (the switch itself included) must leave the mode on, with nothing left to restore."""
    assert lucid.grad_enabled() and MODE.blocks == []


def _model(seed: int = 0, norm: bool = True) -> nn.Module:
    lucid.random.seed(seed)
    if not norm:  # fewer parameters, fewer lines to interrupt
        return nn.Sequential(nn.Linear(3, 2), nn.Linear(2, 2))
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def _backward(model: nn.Module) -> None:
    x = lucid.Tensor(np.linspace(-1, 1, 15, dtype=np.float32).reshape(5, 3))
    model(x).sum().backward()


def _values(model: nn.Module) -> list[np.ndarray]:
    return [v.copy() for v in model.state_dict().values()]


def _which(now: list, before: list, after: list) -> str:
    """"before" or "after" when ``now`` equals one of them entirely, else "in between"."""
    def same(a, b):
        return all(np.array_equal(x, y) for x, y in zip(a, b))
    if same(now, before):
        return "before"
    if same(now, after):
        return "after"
    return "in between"


# -- optimizer.step --------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda ps: SGD(ps, lr=0.1, momentum=0.9),
    lambda ps: Adam(ps, lr=0.01, amsgrad=True),
], ids=["SGD-momentum", "Adam-amsgrad"])
def test_optimizer_step_is_all_or_nothing_under_ctrl_c(make):
    def setup():
        model = _model(norm=False)
        opt = make(model.parameters())
        _backward(model)
        opt.step()  # a second step: the state (momenta, step counts) exists already
        opt.zero_grad()
        _backward(model)
        return model, opt

    model, opt = setup()
    before = _values(model)
    opt.step()
    after = _values(model)
    steps_after = [opt.state[p].get("step") for p in model.parameters()]

    seen = set()

    def check(state, interrupted):
        _grad_mode_as_before()
        model, opt = state
        where = _which(_values(model), before, after)
        assert where != "in between", "some parameters moved, others not"
        steps = [opt.state[p].get("step") for p in model.parameters()]
        assert len(set(map(str, steps))) == 1, f"step counts disagree: {steps}"
        if where == "after":
            assert steps == steps_after
        seen.add(where)
        # training goes on: a step from either state gives a parameter update of the rule
        opt.zero_grad()
        _backward(model)
        opt.step()
        assert all(np.isfinite(v).all() for v in _values(model))

    lines = at_every_line(setup, lambda s: s[1].step(), check)
    assert lines > 50 and seen == {"before", "after"}


def test_optimizer_load_state_dict_is_all_or_nothing_under_ctrl_c():
    donor_model = _model(1, norm=False)
    donor = Adam(donor_model.parameters(), lr=0.05)
    _backward(donor_model)
    donor.step()
    saved = donor.state_dict()

    def setup():
        model = _model(norm=False)
        return model, Adam(model.parameters(), lr=0.01)

    def check(state, interrupted):
        model, opt = state
        lr, n_state = opt.param_groups[0]["lr"], len(opt.state)
        assert (lr, n_state) in [(0.01, 0), (0.05, len(saved["state"]))], (lr, n_state)
        _backward(model)
        opt.step()

    assert at_every_line(setup, lambda s: s[1].load_state_dict(saved), check) > 20


# -- Module.load_state_dict ------------------------------------------------------------------
def test_module_load_state_dict_is_all_or_nothing_under_ctrl_c():
    new = _model(7).state_dict()
    before = _values(_model())
    after = [v.copy() for v in new.values()]
    first = [p._version for p in _model().parameters()]

    def check(model, interrupted):
        _grad_mode_as_before()
        where = _which(_values(model), before, after)
        assert where != "in between", "the model is part old, part new"
        bumps = {p._version - v for p, v in zip(model.parameters(), first)}
        assert bumps == {0 if where == "before" else 1}, bumps
        _backward(model)  # training goes on
        assert all(p.grad is not None for p in model.parameters())

    assert at_every_line(_model, lambda m: m.load_state_dict(new), check) > 20


# -- scheduler.step --------------------------------------------------------------------------
def _opt() -> SGD:
    return SGD(_model(norm=False).parameters(), lr=0.1, momentum=0.9)


SCHEDULERS = {
    "StepLR": (lambda o: lr_scheduler.StepLR(o, step_size=1, gamma=0.5), ()),
    "OneCycleLR": (lambda o: lr_scheduler.OneCycleLR(o, max_lr=1.0, total_steps=10), ()),
    "ReduceLROnPlateau": (lambda o: lr_scheduler.ReduceLROnPlateau(o, patience=0), (5.0,)),
    "SequentialLR": (lambda o: lr_scheduler.SequentialLR(
        o, [lr_scheduler.LinearLR(o, 0.5, total_iters=2),
            lr_scheduler.ExponentialLR(o, 0.9)], milestones=[1]), ()),
}


def _schedule_state(sched) -> tuple:
    groups = sched.optimizer.param_groups
    inner = tuple(s.last_epoch for s in getattr(sched, "_schedulers", []))
    return (sched.last_epoch, inner, tuple(g["lr"] for g in groups),
            tuple(g["momentum"] for g in groups), tuple(sched.get_last_lr()))


@pytest.mark.parametrize("name", list(SCHEDULERS))
def test_scheduler_step_is_all_or_nothing_under_ctrl_c(name):
    make, args = SCHEDULERS[name]

    def setup():
        sched = make(_opt())
        if name == "ReduceLROnPlateau":
            sched.step(1.0)  # the best so far: the next worse metric cuts the rate
        return sched

    sched = setup()
    before = _schedule_state(sched)
    sched.step(*args)
    after = _schedule_state(sched)
    assert before != after

    def check(sched, interrupted):
        now = _schedule_state(sched)
        assert now in (before, after), f"{now} is neither {before} nor {after}"
        sched.step(*args)  # and it goes on

    assert at_every_line(setup, lambda s: s.step(*args), check) > 5


def test_scheduler_load_state_dict_is_all_or_nothing_under_ctrl_c():
    make, _ = SCHEDULERS["SequentialLR"]
    donor = make(_opt())
    for _ in range(3):
        donor.step()
    saved = donor.state_dict()
    fresh = _schedule_state(make(_opt()))
    loaded = _schedule_state(donor)

    def check(sched, interrupted):
        assert _schedule_state(sched) in (fresh, loaded)
        sched.step()

    assert at_every_line(lambda: make(_opt()), lambda s: s.load_state_dict(saved), check) > 10


# -- lucid.save ------------------------------------------------------------------------------
def test_save_leaves_the_old_file_or_the_new_one_and_no_temporary_file(tmp_path):
    path = tmp_path / "model.lucid"
    old_state = {"w": lucid.zeros((2, 3)), "step": 1}
    new_state = {"w": lucid.ones((2, 3)), "step": 2}

    def setup():
        lucid.save(old_state, path)
        return path

    def check(path, interrupted):
        assert sorted(os.listdir(tmp_path)) == ["model.lucid"], os.listdir(tmp_path)
        got = lucid.load(path)
        which = [np.array_equal(got["w"].numpy(), s["w"].numpy()) and got["step"] == s["step"]
                 for s in (old_state, new_state)]
        assert any(which), "the file is neither the old one nor the new one"
        lucid.save(new_state, path)  # saving again works

    assert at_every_line(setup, lambda p: lucid.save(new_state, p), check) > 20

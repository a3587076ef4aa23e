"""lucid.optim.lr_scheduler: every schedule against its closed form, epoch by epoch;
ReduceLROnPlateau scenarios; state_dict round trips; errors."""

from __future__ import annotations

import io
import math

import numpy as np
import pytest

from lucid.nn import Parameter
from lucid.optim import SGD, Adagrad, Adam
from lucid.optim.lr_scheduler import (
    CosineAnnealingLR,
    CyclicLR,
    ExponentialLR,
    LambdaLR,
    LinearLR,
    LRScheduler,
    MultiStepLR,
    NoamScheduler,
    OneCycleLR,
    ReduceLROnPlateau,
    SequentialLR,
    StepLR,
)
from lucid.serialization import load, save


def _opt(*lrs):
    """An optimizer with one param group per learning rate."""
    return SGD([{"params": [Parameter(np.ones(1))], "lr": lr} for lr in lrs], lr=lrs[0])


def _trace(sched, epochs):
    """The learning rates of every group for epochs 0..epochs-1 (one step() per epoch)."""
    out = []
    for _ in range(epochs):
        out.append([g["lr"] for g in sched.optimizer.param_groups])
        assert sched.get_last_lr() == out[-1]
        sched.step()
    return out


CLOSED_FORMS = {
    "StepLR": (lambda o: StepLR(o, step_size=3, gamma=0.5),
               lambda base, e: base * 0.5 ** (e // 3)),
    "MultiStepLR": (lambda o: MultiStepLR(o, milestones=[2, 5, 5, 9], gamma=0.1),
                    lambda base, e: base * 0.1 ** sum(m <= e for m in [2, 5, 5, 9])),
    "ExponentialLR": (lambda o: ExponentialLR(o, gamma=0.9),
                      lambda base, e: base * 0.9**e),
    "CosineAnnealingLR": (lambda o: CosineAnnealingLR(o, T_max=10, eta_min=0.001),
                          lambda base, e: 0.001 + (base - 0.001) * (1 + math.cos(math.pi * e / 10))
                          / 2),
    "LambdaLR": (lambda o: LambdaLR(o, lambda e: 1 / (1 + e)),
                 lambda base, e: base / (1 + e)),
    "LinearLR": (lambda o: LinearLR(o, start_factor=0.25, end_factor=0.75, total_iters=8),
                 lambda base, e: base * (0.25 + 0.5 * min(e, 8) / 8)),
    # absolute rates: the group's own lr is not used
    "NoamScheduler": (lambda o: NoamScheduler(o, model_size=64, warmup_steps=6, factor=2.0),
                      lambda base, e: 2.0 / 8 * min(max(e, 1) ** -0.5, max(e, 1) / 6**1.5)),
}


@pytest.mark.parametrize("name", list(CLOSED_FORMS))
def test_schedule_matches_closed_form_for_every_group(name):
    make, form = CLOSED_FORMS[name]
    opt = _opt(0.1, 0.03)
    sched = make(opt)
    assert sched.last_epoch == 0
    assert sched.base_lrs == [0.1, 0.03]
    trace = _trace(sched, 25)
    assert sched.last_epoch == 25
    for epoch, lrs in enumerate(trace):
        for base, lr in zip([0.1, 0.03], lrs):
            assert lr == pytest.approx(form(base, epoch), rel=1e-12, abs=1e-15), (epoch, base)


def test_step_lr_values_by_hand():
    opt = _opt(1.0)
    sched = StepLR(opt, step_size=2, gamma=0.1)
    lrs = [lr for (lr,) in _trace(sched, 6)]
    assert lrs == pytest.approx([1.0, 1.0, 0.1, 0.1, 0.01, 0.01])


def test_step_lr_takes_a_whole_number_float_step_size_as_pytorchs_tutorials_pass_it():
    by_float = [lr for (lr,) in _trace(StepLR(_opt(1.0), 2.0, gamma=0.1), 6)]
    assert by_float == pytest.approx([1.0, 1.0, 0.1, 0.1, 0.01, 0.01])


def test_cosine_reaches_eta_min_at_t_max_and_is_halfway_in_the_middle():
    opt = _opt(0.2)
    sched = CosineAnnealingLR(opt, T_max=8, eta_min=0.02)
    lrs = [lr for (lr,) in _trace(sched, 9)]
    assert lrs[0] == pytest.approx(0.2)
    assert lrs[4] == pytest.approx(0.11)  # (0.2 + 0.02) / 2
    assert lrs[8] == pytest.approx(0.02)


def test_lambda_lr_with_one_function_per_group():
    opt = _opt(1.0, 2.0)
    sched = LambdaLR(opt, [lambda e: 0.5**e, lambda e: 1.0 + e])
    trace = _trace(sched, 4)
    assert trace == [[1.0, 2.0], [0.5, 4.0], [0.25, 6.0], [0.125, 8.0]]


def test_step_with_explicit_epoch_jumps_there():
    opt = _opt(1.0)
    sched = ExponentialLR(opt, gamma=0.5)
    sched.step(epoch=4)
    assert sched.last_epoch == 4 and opt.param_groups[0]["lr"] == pytest.approx(1 / 16)


def test_scheduler_drives_the_optimizer_steps():
    p = Parameter(np.array([0.0]))
    opt = SGD([p], lr=1.0)
    sched = StepLR(opt, step_size=1, gamma=0.5)
    for _ in range(3):
        p.grad = np.array([-1.0])
        opt.step()
        sched.step()
    assert p.item() == pytest.approx(1.0 + 0.5 + 0.25)


def test_state_dict_round_trip_continues_identically():
    opt_a = _opt(0.1, 0.05)
    a = MultiStepLR(opt_a, milestones=[3, 6], gamma=0.2)
    _trace(a, 4)
    saved = a.state_dict()
    assert "optimizer" not in saved and saved["last_epoch"] == 4
    # a fresh optimizer and scheduler, then both restored (PyTorch's order: build the
    # scheduler first -- building it resets the groups' lr -- then load both state dicts)
    opt_b = _opt(0.1, 0.05)
    b = MultiStepLR(opt_b, milestones=[1], gamma=0.9)
    opt_b.load_state_dict(opt_a.state_dict())
    b.load_state_dict(saved)
    assert b.milestones == [3, 6] and b.last_epoch == 4
    assert _trace(b, 5) == _trace(a, 5)


def test_lambda_functions_are_not_saved():
    sched = LambdaLR(_opt(1.0), lambda e: 0.5)
    assert "lr_lambdas" not in sched.state_dict()


def test_resuming_with_last_epoch_uses_initial_lr():
    opt = _opt(0.8)
    first = StepLR(opt, step_size=2, gamma=0.5)
    _trace(first, 3)  # the groups now carry initial_lr = 0.8
    assert opt.param_groups[0]["initial_lr"] == 0.8
    resumed = StepLR(opt, step_size=2, gamma=0.5, last_epoch=2)
    assert resumed.last_epoch == 3 and resumed.get_last_lr() == [pytest.approx(0.4)]
    with pytest.raises(KeyError, match="initial_lr"):
        StepLR(_opt(0.1), step_size=2, last_epoch=5)


# --------------------------------------------------------------------------------------------
# ReduceLROnPlateau


def test_plateau_reduces_after_patience_bad_epochs():
    opt = _opt(1.0)
    sched = ReduceLROnPlateau(opt, mode="min", factor=0.5, patience=2)
    lrs = []
    for metric in [10, 9, 9, 9, 9, 9, 9, 9]:
        sched.step(metric)
        lrs.append(opt.param_groups[0]["lr"])
    # better at 10, 9; then bad epochs 1, 2, 3 -> cut (3 > patience); counting restarts
    assert lrs == [1.0, 1.0, 1.0, 1.0, 0.5, 0.5, 0.5, 0.25]
    assert sched.get_last_lr() == [0.25] and sched.last_epoch == 8


def test_plateau_threshold_rel_and_abs():
    # rel: 9.95 is not better than 10 * (1 - 0.01) = 9.9, so it counts as a bad epoch
    rel = ReduceLROnPlateau(_opt(1.0), threshold=0.01, threshold_mode="rel", patience=0)
    rel.step(10.0)
    rel.step(9.95)
    assert rel.optimizer.param_groups[0]["lr"] == pytest.approx(0.1)
    # abs: 9.95 is better than 10 - 0.01
    ab = ReduceLROnPlateau(_opt(1.0), threshold=0.01, threshold_mode="abs", patience=0)
    ab.step(10.0)
    ab.step(9.95)
    assert ab.optimizer.param_groups[0]["lr"] == 1.0 and ab.best == 9.95


def test_plateau_max_mode_cooldown_and_min_lr():
    opt = _opt(1.0, 0.5)
    sched = ReduceLROnPlateau(opt, mode="max", factor=0.1, patience=0, cooldown=2,
                              min_lr=[0.05, 0.0])
    lrs = []
    for metric in [0.5, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6, 0.6]:
        sched.step(metric)
        lrs.append([g["lr"] for g in opt.param_groups])
    # epoch 3: first bad epoch -> cut, cooldown 2 epochs (4, 5) ignore bad epochs, epoch 6 cuts
    # again; group 0 stops at its min_lr 0.05
    expected = [[1.0, 0.5], [1.0, 0.5], [0.1, 0.05], [0.1, 0.05], [0.1, 0.05],
                [0.05, 0.005], [0.05, 0.005], [0.05, 0.005]]
    np.testing.assert_allclose(lrs, expected, rtol=1e-12)


def test_plateau_state_dict_round_trip():
    opt = _opt(1.0)
    a = ReduceLROnPlateau(opt, patience=1, factor=0.5)
    for m in [3.0, 2.0, 2.5]:
        a.step(m)
    b = ReduceLROnPlateau(_opt(1.0))
    b.load_state_dict(a.state_dict())
    assert (b.best, b.num_bad_epochs, b.patience, b.factor) == (2.0, 1, 1, 0.5)


def test_plateau_matches_pytorch_when_available():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    metrics = np.round(np.cumsum(rng.normal(-0.05, 0.3, 60)), 1).tolist()
    kw = {"mode": "min", "factor": 0.3, "patience": 3, "threshold": 0.02, "cooldown": 2,
          "min_lr": 1e-3}
    ours = ReduceLROnPlateau(_opt(1.0), **kw)
    tp = torch.zeros(1, requires_grad=True)
    theirs = torch.optim.lr_scheduler.ReduceLROnPlateau(torch.optim.SGD([tp], lr=1.0), **kw)
    for m in metrics:
        ours.step(m)
        theirs.step(m)
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)


@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR"])
def test_closed_forms_match_pytorch_when_available(name):
    torch = pytest.importorskip("torch")
    make, _ = CLOSED_FORMS[name]
    ours = make(_opt(0.1))
    tp = torch.zeros(1, requires_grad=True)
    topt = torch.optim.SGD([tp], lr=0.1)
    kwargs = {"StepLR": {"step_size": 3, "gamma": 0.5},
              "MultiStepLR": {"milestones": [2, 5, 5, 9], "gamma": 0.1},
              "ExponentialLR": {"gamma": 0.9},
              "CosineAnnealingLR": {"T_max": 10, "eta_min": 0.001}}[name]
    theirs = getattr(torch.optim.lr_scheduler, name)(topt, **kwargs)
    for _ in range(15):
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-9)
        topt.step()
        ours.step()
        theirs.step()


# --------------------------------------------------------------------------------------------
# errors


@pytest.mark.parametrize("make,exc,match", [
    (lambda o: StepLR("not an optimizer", 3), TypeError, "optimizer"),
    (lambda o: StepLR(o, 0), ValueError, "step_size must be >= 1"),
    (lambda o: StepLR(o, 2.5), TypeError, "step_size must be an int"),
    (lambda o: MultiStepLR(o, [5, 2]), ValueError, "increasing"),
    (lambda o: ExponentialLR(o, gamma=-1), ValueError, "gamma"),
    (lambda o: CosineAnnealingLR(o, T_max=0), ValueError, "T_max"),
    (lambda o: LambdaLR(o, [lambda e: 1.0, lambda e: 1.0]), ValueError, "one per param group"),
    (lambda o: ReduceLROnPlateau(o, mode="up"), ValueError, "mode"),
    (lambda o: ReduceLROnPlateau(o, factor=1.0), ValueError, "factor must be < 1"),
    (lambda o: ReduceLROnPlateau(o, threshold_mode="pct"), ValueError, "threshold_mode"),
    (lambda o: ReduceLROnPlateau(o, patience=-1), ValueError, "patience"),
    (lambda o: ReduceLROnPlateau(o, min_lr=[0.1, 0.2]), ValueError, "min_lr"),
    (lambda o: StepLR(o, 2, last_epoch=-2), ValueError, "last_epoch"),
])
def test_errors(make, exc, match):
    with pytest.raises(exc, match=match):
        make(_opt(0.1))


def test_plateau_rejects_nan_metric_and_base_class_needs_lr_at():
    sched = ReduceLROnPlateau(_opt(0.1))
    with pytest.raises(ValueError, match="NaN"):
        sched.step(float("nan"))
    with pytest.raises(NotImplementedError, match="lr_at"):
        LRScheduler(Adam([Parameter(np.ones(1))]))


@pytest.mark.parametrize("name", list(CLOSED_FORMS))
def test_resuming_from_state_dicts_continues_the_same_schedule(name):
    """Save optimizer + scheduler after 4 epochs, build fresh ones, load both: the learning
    rates go on exactly as an uninterrupted run's (PyTorch's resume; StepLR(3, 0.5) from 0.1
    resumes at 0.05, not 0.1)."""
    make, _ = CLOSED_FORMS[name]
    whole = make(_opt(0.1, 0.03))
    expected = _trace(whole, 10)

    first = make(_opt(0.1, 0.03))
    _trace(first, 4)
    opt2 = _opt(0.1, 0.03)
    opt2.load_state_dict(first.optimizer.state_dict())
    second = make(opt2)
    second.load_state_dict(first.state_dict())
    np.testing.assert_allclose(_trace(second, 6), expected[4:], rtol=1e-12)


def test_resume_of_step_lr_from_the_issue():
    opt = SGD([Parameter(np.ones(2))], lr=0.1)
    s = StepLR(opt, 3, 0.5)
    for _ in range(4):
        s.step()
    opt2 = SGD([Parameter(np.ones(2))], lr=0.1)
    opt2.load_state_dict(opt.state_dict())
    s2 = StepLR(opt2, 3, 0.5)
    s2.load_state_dict(s.state_dict())
    assert opt2.param_groups[0]["lr"] == pytest.approx(0.05)


# -- resuming: every scheduler, every order, through a file ---------------------------------

METRICS = [1.0, 0.9, 0.95, 0.96, 0.97, 0.98, 0.5, 0.6, 0.7, 0.8, 0.9, 0.9, 0.9, 0.9]
ALL_KINDS = {**{name: make for name, (make, _) in CLOSED_FORMS.items()},
             "ReduceLROnPlateau": lambda o: ReduceLROnPlateau(o, patience=1, cooldown=1,
                                                              factor=0.5, min_lr=[0.0, 0.01]),
             "OneCycleLR": lambda o: OneCycleLR(o, max_lr=[1.0, 0.3], total_steps=20),
             "CyclicLR": lambda o: CyclicLR(o, base_lr=0.01, max_lr=[0.1, 0.05], step_size_up=3,
                                            step_size_down=2, mode="triangular2"),
             # resumed in the middle scheduler; the run goes on past the second milestone
             "SequentialLR": lambda o: SequentialLR(
                 o, [LinearLR(o, start_factor=0.5, total_iters=3), ExponentialLR(o, 0.8),
                     StepLR(o, 2, 0.5)], milestones=[3, 8])}


def _adam(*lrs):
    """Adam this time: its betas come back from a file as a list."""
    return Adam([{"params": [Parameter(np.ones(1))], "lr": lr} for lr in lrs], lr=lrs[0])


def _epochs(sched, metrics):
    """The rates every group trains with, epoch after epoch (a plateau scheduler is told the
    epoch's metric, the others just step)."""
    out = []
    for m in metrics:
        out.append([g["lr"] for g in sched.optimizer.param_groups])
        assert sched.get_last_lr() == out[-1]
        if type(sched).__name__ == "ReduceLROnPlateau":  # Lucid's or PyTorch's
            sched.step(m)
        else:
            sched.step()
    return out


@pytest.mark.parametrize("order", ["optimizer-first", "scheduler-first"])
@pytest.mark.parametrize("name", list(ALL_KINDS))
def test_every_scheduler_resumed_from_a_file_continues_the_uninterrupted_run(name, order):
    make = ALL_KINDS[name]
    whole = _epochs(make(_adam(0.1, 0.03)), METRICS)

    first = make(_adam(0.1, 0.03))
    _epochs(first, METRICS[:5])
    buf = io.BytesIO()
    save({"optim": first.optimizer.state_dict(), "sched": first.state_dict()}, buf)
    buf.seek(0)
    saved = load(buf)

    opt = _adam(0.5, 0.5)  # built with other rates: the saved ones must win
    if order == "optimizer-first":  # PyTorch's recipe
        opt.load_state_dict(saved["optim"])
        second = make(opt)
    else:
        second = make(opt)
        opt.load_state_dict(saved["optim"])
    second.load_state_dict(saved["sched"])
    assert second.last_epoch == first.last_epoch
    assert _epochs(second, METRICS[5:]) == whole[5:]


# no training here, so PyTorch's schedulers step without optimizer steps
@pytest.mark.filterwarnings("ignore:Detected call of `lr_scheduler.step\\(\\)`")
@pytest.mark.parametrize("name", ["StepLR", "MultiStepLR", "ExponentialLR", "CosineAnnealingLR",
                                  "ReduceLROnPlateau", "CyclicLR"])
def test_resumed_rates_match_pytorchs_resume_when_available(name):
    """Resumed PyTorch's way (optimizer state, new scheduler, scheduler state), both give the
    same rates.  (LambdaLR is left out: PyTorch trains the first resumed epoch at
    base_lr * lr_lambda(0) -- building the scheduler sets it and loading its state does not
    undo it -- where Lucid continues the run.  So are LinearLR, which PyTorch builds on the
    loaded rate, scaling it by start_factor again, and OneCycleLR and SequentialLR, whose
    construction PyTorch's load_state_dict does not undo either: the optimizer's rate and the
    scheduler's last rate disagree after PyTorch's resume.  Their rates without a resume are
    compared with PyTorch below.)"""
    torch = pytest.importorskip("torch")
    sched_mod = torch.optim.lr_scheduler

    def torch_make(o):
        return {"StepLR": lambda: sched_mod.StepLR(o, 3, 0.5),
                "MultiStepLR": lambda: sched_mod.MultiStepLR(o, [2, 5, 5, 9], 0.1),
                "ExponentialLR": lambda: sched_mod.ExponentialLR(o, 0.9),
                "CosineAnnealingLR": lambda: sched_mod.CosineAnnealingLR(o, 10, 0.001),
                "ReduceLROnPlateau": lambda: sched_mod.ReduceLROnPlateau(
                    o, patience=1, cooldown=1, factor=0.5, min_lr=[0.0, 0.01]),
                "CyclicLR": lambda: sched_mod.CyclicLR(o, 0.01, [0.1, 0.05], 3, 2,
                                                       "triangular2")}[name]()

    def torch_opt():
        return torch.optim.Adam([{"params": [torch.zeros(1, requires_grad=True)], "lr": lr}
                                 for lr in (0.1, 0.03)], lr=0.1)

    traces = []
    for make_opt, make in ((torch_opt, torch_make), (lambda: _adam(0.1, 0.03), ALL_KINDS[name])):
        first = make(make_opt())
        _epochs(first, METRICS[:5])
        opt = make_opt()
        opt.load_state_dict(first.optimizer.state_dict())
        second = make(opt)
        second.load_state_dict(first.state_dict())
        traces.append(_epochs(second, METRICS[5:]))
    np.testing.assert_allclose(traces[1], traces[0], rtol=1e-12)


SETTINGS = {"StepLR": ["step_size", "gamma"], "MultiStepLR": ["milestones", "gamma"],
            "ExponentialLR": ["gamma"], "CosineAnnealingLR": ["T_max", "eta_min"],
            "LambdaLR": [], "ReduceLROnPlateau": ["factor", "mode", "patience"],
            "LinearLR": ["start_factor", "end_factor", "total_iters"],
            "NoamScheduler": ["model_size", "warmup_steps", "factor"],
            "OneCycleLR": ["total_steps", "pct_start", "max_lrs", "cycle_momentum"],
            "CyclicLR": ["total_size", "step_ratio", "max_lrs", "mode", "gamma", "cycle_momentum"],
            "SequentialLR": ["_schedulers", "_milestones"]}


@pytest.mark.parametrize("saver,loader", [(s, t) for s in ALL_KINDS for t in ALL_KINDS if s != t])
def test_a_scheduler_state_dict_of_another_kind_is_refused_unchanged(saver, loader):
    """An ExponentialLR's state loaded into a StepLR would quietly replace its gamma and keep
    its step_size; any other kind's state is refused, naming what does not fit."""
    donor = ALL_KINDS[saver](_adam(0.1, 0.03))
    _epochs(donor, METRICS[:3])
    sched = ALL_KINDS[loader](_adam(0.1, 0.03))
    _epochs(sched, METRICS[:2])
    before = (sched.state_dict(), [g["lr"] for g in sched.optimizer.param_groups])
    with pytest.raises(ValueError, match=rf"^{loader}\.load_state_dict: this state dict does not "
                                         rf"fit a {loader}.*saved by another kind of "
                                         r"scheduler.*Nothing was changed\.$") as info:
        sched.load_state_dict(donor.state_dict())
    for key in set(SETTINGS[saver]) ^ set(SETTINGS[loader]):
        assert key in str(info.value)
    assert sched.state_dict() == before[0]
    assert [g["lr"] for g in sched.optimizer.param_groups] == before[1]


def test_state_dicts_hold_copies_of_lists_both_ways():
    sched = MultiStepLR(_opt(0.1, 0.03), milestones=[2, 4])
    saved = sched.state_dict()
    saved["base_lrs"][0] = 9.0
    saved["milestones"].append(6)
    assert sched.base_lrs == [0.1, 0.03] and sched.milestones == [2, 4]
    other = MultiStepLR(_opt(0.1, 0.03), milestones=[1])
    other.load_state_dict(saved)
    saved["milestones"].append(8)
    assert other.milestones == [2, 4, 6]


# --------------------------------------------------------------------------------------------
# LinearLR, OneCycleLR, CyclicLR, NoamScheduler, SequentialLR


def _sgd_momentum(*lrs):
    return SGD([{"params": [Parameter(np.ones(1))], "lr": lr} for lr in lrs], lr=lrs[0],
               momentum=0.9)


def _momenta(sched):
    """The momentum (SGD) or beta1 (Adam) of every group."""
    return [g["betas"][0] if "betas" in g else g["momentum"]
            for g in sched.optimizer.param_groups]


def test_linear_lr_defaults_warm_up_by_thirds():
    sched = LinearLR(_opt(0.3))  # start_factor 1/3, end_factor 1, total_iters 5
    lrs = [lr for (lr,) in _trace(sched, 8)]
    want = [0.3 * (1 / 3 + (2 / 3) * min(e, 5) / 5) for e in range(8)]
    assert lrs == pytest.approx(want, rel=1e-14)
    assert lrs[0] == pytest.approx(0.1) and lrs[5:] == pytest.approx([0.3] * 3)


def test_one_cycle_two_phases_by_hand():
    """T = 10, pct_start 0.3: up (cosine) from max_lr / 25 over steps 0..2, then down to
    initial / 1e4 over steps 2..9; the momentum goes the other way, 0.95 -> 0.85 -> 0.95."""
    sched = OneCycleLR(_sgd_momentum(0.1), max_lr=1.0, total_steps=10)
    lrs, moms = [], []
    for _ in range(11):
        lrs.append(sched.get_last_lr()[0])
        moms.append(_momenta(sched)[0])
        if len(lrs) < 11:
            sched.step()
    initial, low = 1.0 / 25, 1.0 / 25 / 1e4

    def cos(start, end, pct):
        return end + (start - end) * (1 + math.cos(math.pi * pct)) / 2

    want = [cos(initial, 1.0, s / 2) if s <= 2 else cos(1.0, low, (s - 2) / 7)
            for s in range(11)]
    want_m = [cos(0.95, 0.85, s / 2) if s <= 2 else cos(0.85, 0.95, (s - 2) / 7)
              for s in range(11)]
    assert lrs == pytest.approx(want, rel=1e-12)
    assert moms == pytest.approx(want_m, rel=1e-12)
    assert lrs[0] == pytest.approx(0.04) and lrs[2] == 1.0 and lrs[9] == pytest.approx(low)
    group = sched.optimizer.param_groups[0]  # PyTorch's group keys
    assert (group["initial_lr"], group["max_lr"], group["max_momentum"]) == (0.04, 1.0, 0.95)


def test_one_cycle_three_phase_linear_and_epochs_times_steps():
    sched = OneCycleLR(_opt(0.1), max_lr=2.0, epochs=2, steps_per_epoch=5, pct_start=0.3,
                       anneal_strategy="linear", three_phase=True, div_factor=10,
                       final_div_factor=100, cycle_momentum=False)
    assert sched.total_steps == 10
    lrs = [lr for (lr,) in _trace(sched, 10)]
    # phase ends at 2, 4, 9: 0.2 -> 2.0 -> 0.2 -> 0.002, each a straight line
    want = [0.2 + 0.9 * s for s in range(3)] + [2.0 - 0.9 * (s - 2) for s in (3, 4)] + [
        0.2 + (0.002 - 0.2) * (s - 4) / 5 for s in range(5, 10)]
    assert lrs == pytest.approx(want, rel=1e-12)


def test_one_cycle_refuses_a_step_past_total_steps_and_changes_nothing():
    sched = OneCycleLR(_adam(0.1), max_lr=1.0, total_steps=4)
    for _ in range(4):
        sched.step()
    before = (sched.state_dict(), [dict(g) for g in sched.optimizer.param_groups])
    with pytest.raises(ValueError, match=r"^OneCycleLR: stepped 5 times, past total_steps = 4; "
                                         r"build it with the number of batches"):
        sched.step()
    assert sched.state_dict() == before[0] and sched.last_epoch == 4
    assert [dict(g) for g in sched.optimizer.param_groups] == before[1]


def test_cyclic_lr_triangle_modes_by_hand():
    tri = CyclicLR(_sgd_momentum(0.5), base_lr=0.1, max_lr=0.5, step_size_up=2)
    assert [lr for (lr,) in _trace(tri, 9)] == pytest.approx(
        [0.1, 0.3, 0.5, 0.3, 0.1, 0.3, 0.5, 0.3, 0.1], rel=1e-12)
    half = CyclicLR(_sgd_momentum(0.5), base_lr=0.1, max_lr=0.5, step_size_up=1,
                    step_size_down=3, mode="triangular2", cycle_momentum=False)
    # up in 1 step, down in 3; the second cycle is half as tall
    assert [lr for (lr,) in _trace(half, 9)] == pytest.approx(
        [0.1, 0.5, 0.1 + 0.4 * 2 / 3, 0.1 + 0.4 / 3, 0.1, 0.3, 0.1 + 0.2 * 2 / 3,
         0.1 + 0.2 / 3, 0.1], rel=1e-12)
    assert _momenta(half) == [0.9]  # not cycled: SGD's own momentum
    exp = CyclicLR(_opt(1.0), base_lr=0.1, max_lr=0.5, step_size_up=2, mode="exp_range",
                   gamma=0.9, cycle_momentum=False)
    heights = [0, 0.5, 1, 0.5, 0, 0.5, 1]
    assert [lr for (lr,) in _trace(exp, 7)] == pytest.approx(
        [0.1 + 0.4 * h * 0.9**s for s, h in enumerate(heights)], rel=1e-12)


def test_cyclic_lr_cycles_momentum_against_the_rate_and_sets_base_lr():
    opt = _sgd_momentum(0.7, 0.7)
    sched = CyclicLR(opt, base_lr=[0.1, 0.2], max_lr=0.5, step_size_up=2,
                     base_momentum=0.8, max_momentum=0.9)
    assert [g["lr"] for g in opt.param_groups] == [0.1, 0.2]  # building sets base_lr
    moms = []
    for _ in range(5):
        moms.append(_momenta(sched))
        sched.step()
    np.testing.assert_allclose(moms, [[0.9, 0.9], [0.85, 0.85], [0.8, 0.8], [0.85, 0.85],
                                      [0.9, 0.9]], rtol=1e-12)
    calls = []
    custom = CyclicLR(_opt(1.0), 0.1, 0.5, step_size_up=2, cycle_momentum=False,
                      scale_fn=lambda x: calls.append(x) or 0.5, scale_mode="iterations")
    _trace(custom, 3)  # epochs 0..3: the function gets the step number
    assert calls == [0, 1, 2, 3] and "scale_fn" not in custom.state_dict()
    assert custom.get_last_lr() == [pytest.approx(0.1 + 0.4 * 0.5 * 0.5)]  # half way down


def test_noam_peaks_at_warmup_then_decays_as_inverse_sqrt():
    sched = NoamScheduler(_opt(1.0, 5.0), model_size=512, warmup_steps=4000)
    lrs = []
    for step in range(0, 8001):
        if step in (0, 1, 2000, 4000, 8000):
            lrs.append(sched.get_last_lr())
        sched.step()
    peak = 512**-0.5 * 4000**-0.5
    assert lrs[2][0] == pytest.approx(peak / 2, rel=1e-12)  # half way up the warm-up
    assert lrs[3] == [pytest.approx(peak, rel=1e-12)] * 2  # both groups: absolute rates
    assert lrs[4][0] == pytest.approx(peak / math.sqrt(2), rel=1e-12)
    assert lrs[0] == lrs[1]  # step 0 takes step 1's rate


def test_sequential_lr_hands_over_at_the_milestones():
    opt = _opt(1.0)
    sched = SequentialLR(opt, [LinearLR(opt, start_factor=0.25, total_iters=4),
                               ExponentialLR(opt, gamma=0.5), StepLR(opt, 2, 0.1)],
                         milestones=[3, 6])
    lrs = [lr for (lr,) in _trace(sched, 10)]
    # LinearLR for epochs 0-2, ExponentialLR restarted at 3 (its epoch 0), StepLR from 6
    want = [0.25, 0.4375, 0.625, 1.0, 0.5, 0.25, 1.0, 1.0, 0.1, 0.1]
    assert lrs == pytest.approx(want, rel=1e-12)


@pytest.mark.parametrize("name", ["LinearLR", "OneCycleLR", "CyclicLR", "SequentialLR"])
@pytest.mark.parametrize("optimizer", ["SGD", "Adam"])
def test_new_schedules_match_pytorch_when_available(name, optimizer):
    """Rates and momenta (SGD's momentum, Adam's beta1), step by step, for two groups."""
    torch = pytest.importorskip("torch")
    ts = torch.optim.lr_scheduler
    kw = {"lr": 0.1, "momentum": 0.9} if optimizer == "SGD" else {}
    builds = {
        "LinearLR": lambda m, o: m.LinearLR(o, start_factor=0.05, end_factor=0.5,
                                            total_iters=13),
        "OneCycleLR": lambda m, o: m.OneCycleLR(o, max_lr=[1.0, 0.5], total_steps=30,
                                                pct_start=0.25, three_phase=True),
        "CyclicLR": lambda m, o: m.CyclicLR(o, base_lr=[0.01, 0.02], max_lr=0.1,
                                            step_size_up=3, step_size_down=5,
                                            mode="exp_range", gamma=0.97),
        "SequentialLR": lambda m, o: m.SequentialLR(
            o, [m.LinearLR(o, start_factor=0.1, total_iters=4), m.ExponentialLR(o, 0.9),
                m.CosineAnnealingLR(o, T_max=6)], milestones=[5, 12]),
    }
    import lucid.optim.lr_scheduler as ours_mod
    from lucid import optim as ours_optim

    ours_opt = getattr(ours_optim, optimizer)(
        [{"params": [Parameter(np.ones(1))], "lr": lr} for lr in (0.1, 0.03)], **kw)
    theirs_opt = getattr(torch.optim, optimizer)(
        [{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in (0.1, 0.03)],
        **kw)
    ours, theirs = builds[name](ours_mod, ours_opt), builds[name](ts, theirs_opt)
    key = "momentum" if optimizer == "SGD" else "betas"
    for _ in range(30):
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)
        assert [g["lr"] for g in ours_opt.param_groups] == pytest.approx(
            [g["lr"] for g in theirs_opt.param_groups], rel=1e-12)
        assert [g[key] for g in ours_opt.param_groups] == [g[key] for g in
                                                           theirs_opt.param_groups]
        theirs_opt.step()
        ours.step()
        theirs.step()


@pytest.mark.parametrize("name", ["OneCycleLR", "CyclicLR"])
def test_a_cycled_momentum_resumes_with_the_rate(name):
    """PyTorch's resume leaves beta1 at the value its constructor wrote until the next step;
    Lucid's load_state_dict sets the momentum of the saved step too."""
    make = ALL_KINDS[name]
    whole = make(_adam(0.1, 0.03))
    for _ in range(6):
        whole.step()
    first = make(_adam(0.1, 0.03))
    for _ in range(6):
        first.step()
    opt = _adam(0.1, 0.03)
    second = make(opt)
    opt.load_state_dict(first.optimizer.state_dict())
    second.load_state_dict(first.state_dict())
    assert _momenta(second) == _momenta(whole) != _momenta(make(_adam(0.1, 0.03)))


def test_a_sequential_state_dict_that_one_inner_scheduler_refuses_changes_nothing():
    def make(o, second):
        return SequentialLR(o, [LinearLR(o, start_factor=0.5, total_iters=2), second],
                            milestones=[2])

    donor_opt = _opt(0.1)
    donor = make(donor_opt, StepLR(donor_opt, 2))
    _trace(donor, 4)
    opt = _opt(0.1)
    sched = make(opt, ExponentialLR(opt, 0.5))  # the second scheduler is of another kind
    _trace(sched, 1)
    before = (sched.state_dict(), [g["lr"] for g in opt.param_groups])
    with pytest.raises(ValueError, match=r"^ExponentialLR\.load_state_dict: this state dict does "
                                         r"not fit a ExponentialLR"):
        sched.load_state_dict(donor.state_dict())
    assert sched.state_dict() == before[0]
    assert [g["lr"] for g in opt.param_groups] == before[1]


@pytest.mark.parametrize("make,exc,match", [
    (lambda o: LinearLR(o, start_factor=0.0), ValueError, "start_factor must be > 0"),
    (lambda o: LinearLR(o, end_factor=1.5), ValueError, "end_factor must be <= 1"),
    (lambda o: LinearLR(o, total_iters=0), ValueError, "total_iters must be >= 1"),
    (lambda o: OneCycleLR(o, max_lr=1.0), ValueError, "give total_steps, or epochs and "
                                                      "steps_per_epoch"),
    (lambda o: OneCycleLR(o, max_lr=1.0, total_steps=0), ValueError, "total_steps must be >= 1"),
    (lambda o: OneCycleLR(o, max_lr=1.0, total_steps=5, pct_start=1.5), ValueError,
     "pct_start must be <= 1"),
    (lambda o: OneCycleLR(o, max_lr=1.0, total_steps=5, anneal_strategy="exp"), ValueError,
     "anneal_strategy must be 'cos' or 'linear'"),
    (lambda o: OneCycleLR(o, max_lr=[1.0, 2.0], total_steps=5), ValueError,
     r"max_lr has 2 values, the optimizer has 1 param group"),
    (lambda o: OneCycleLR(Adagrad([Parameter(np.ones(1))]), max_lr=1.0, total_steps=5),
     ValueError, r"OneCycleLR: cycle_momentum=True needs an optimizer with a momentum or betas "
                 r"hyperparameter .*Adagrad has neither\. Pass cycle_momentum=False"),
    (lambda o: CyclicLR(o, 0.1, 1.0, mode="sine"), ValueError, "mode must be 'triangular'"),
    (lambda o: CyclicLR(o, 0.1, 1.0, step_size_up=0), ValueError, "step_size_up must be >= 1"),
    (lambda o: CyclicLR(o, 0.1, 1.0, scale_fn=3), TypeError, "scale_fn must be a function"),
    (lambda o: CyclicLR(Adagrad([Parameter(np.ones(1))]), 0.1, 1.0), ValueError,
     "CyclicLR: cycle_momentum=True needs"),
    (lambda o: NoamScheduler(o, model_size=0, warmup_steps=10), ValueError, "model_size"),
    (lambda o: NoamScheduler(o, 512, 10, factor=0.0), ValueError, "factor must be > 0"),
    (lambda o: SequentialLR(o, [], []), ValueError, "at least one scheduler"),
    (lambda o: SequentialLR(o, [StepLR(o, 2), StepLR(o, 3)], []), ValueError,
     r"one milestone fewer than schedulers, got 2 scheduler\(s\) and 0 milestone"),
    (lambda o: SequentialLR(o, [StepLR(_opt(0.1), 2)], []), ValueError, "another optimizer"),
    (lambda o: SequentialLR(o, [StepLR(o, 2), ReduceLROnPlateau(o)], [3]), ValueError,
     "ReduceLROnPlateau, which needs a metric"),
])
def test_new_scheduler_errors(make, exc, match):
    with pytest.raises(exc, match=match):
        make(_sgd_momentum(0.1))

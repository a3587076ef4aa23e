"""The module recorder: one record of which module call made each op, read by summarize,
lucid_viz and the %lucid_flops magic."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.engine.mode import MODE, record_ops, recording


class Block(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Linear(3, 3)
        self.act = nn.ReLU()

    def forward(self, x):
        return self.act(self.fc(x)) + x  # the add runs in Block's own forward


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        h = self.block(x)
        h = self.block.act(h)  # a module called a second time
        return self.head(h).sum()


def _ops(rec):
    return [(type(t._op).__name__, t._op.module) for t in rec.ops]


def test_each_op_carries_the_innermost_module_path():
    net, x = Net(), lucid.Tensor(np.ones((4, 3)))
    with record_ops() as rec:
        net(x)
    assert _ops(rec) == [
        ("Linear", "block.fc"), ("ReLU", "block.act"), ("Add", "block"),
        ("ReLU", "block.act"), ("Linear", "head"), ("Sum", ""),
    ]
    calls = [(c.path, c.parent, c.start, c.stop) for c in rec.calls]
    assert calls == [("", None, 0, 6), ("block", 0, 0, 3), ("block.fc", 1, 0, 1),
                     ("block.act", 1, 1, 2), ("block.act", 0, 3, 4), ("head", 0, 4, 5)]
    assert rec.calls[2].inputs[0] is x and rec.calls[2].output is rec.ops[0]


def test_nothing_is_recorded_outside_and_module_paths_need_a_recorder():
    net, x = Net(), lucid.Tensor(np.ones((4, 3)), requires_grad=True)
    assert recording() is None
    y = net(x)
    op = y._op
    assert getattr(op, "module", None) is None  # no recorder: no stamp
    with record_ops(root_name=lambda m: "model") as rec:
        net(x)
    assert rec.calls[0].path == "model" and rec.calls[1].path == "model.block"
    assert recording() is None


def test_an_exception_inside_a_module_leaves_the_recorder_consistent():
    class Boom(nn.Module):
        def forward(self, x):
            x = x * 2
            raise ValueError("boom")

    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.boom = Boom()

        def forward(self, x):
            try:
                self.boom(x)
            except ValueError:
                pass
            return x + 1  # must be credited to Outer, not to the failed Boom call

    with record_ops() as rec:
        Outer()(lucid.Tensor([1.0]))
    assert _ops(rec) == [("Mul", "boom"), ("Add", "")]
    assert [(c.path, c.stop, c.output) for c in rec.calls][1] == ("boom", 1, None)
    assert rec.path is None


def test_modules_made_on_the_fly_are_named_by_class_under_their_caller():
    class Wrapper(nn.Module):
        def forward(self, x):
            return nn.ReLU()(x)

    with record_ops() as rec:
        Wrapper()(lucid.Tensor([1.0, -1.0]))
    assert [c.path for c in rec.calls] == ["", "ReLU"]


def test_summary_and_drawing_read_the_same_record():
    from lucid.models.util import summarize

    net = Net()
    summary = summarize(net, (4, 3), print_summary=False)
    assert [r.name for r in summary.rows] == ["block.fc", "block.act", "block.act", "head"]
    lucid_viz = pytest.importorskip("lucid_viz")
    graph = lucid_viz.trace(net, lucid.Tensor(np.ones((4, 3))))
    assert {n.module for n in graph.nodes if not n.is_leaf} == {"block.fc", "block.act",
                                                                "block", "head", ""}


# -- time steps ----------------------------------------------------------------------------

def test_a_recurrent_layer_marks_each_time_step_of_each_loop():
    lucid.random.seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True)
    with record_ops() as rec:
        lstm(lucid.random.rand((3, 2, 3)))
    marks = [(s.call, s.loop, s.t) for s in rec.steps]
    assert marks == [(0, loop, t) for loop, ts in (
        ("layer 0 forward", (0, 1, 2)), ("layer 0 reverse", (2, 1, 0)),
        ("layer 1 forward", (0, 1, 2)), ("layer 1 reverse", (2, 1, 0))) for t in ts]
    # each step covers its own stretch of the tape, the same ops in every step: the step op
    # (W_hh h and the gates, reading the step's slice of the input projection)
    names = [type(t._op).__name__ for t in rec.ops]
    kinds = {tuple(names[s.start:s.stop]) for s in rec.steps}
    assert kinds == {("LSTMStep",)}
    assert all(a.stop <= b.start for a, b in zip(rec.steps, rec.steps[1:]))
    # the loop's end closes its last step: the stacking of the outputs is in no step
    after = rec.steps[2].stop
    assert names[after] == "Stack" and not any(s.start <= after < s.stop for s in rec.steps)


def test_a_step_left_open_ends_with_its_call_and_marks_outside_calls_work():
    class Loop(nn.Module):
        def forward(self, x):
            rec = MODE.recorder
            for t in range(3):
                rec.begin_step(t)
                x = x * 2
                if t == 1:
                    raise ValueError("boom")
            return x

    class Outer(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.loop = Loop()

        def forward(self, x):
            try:
                self.loop(x)
            except ValueError:
                pass
            return x + 1  # after the failed loop: in no step

    with record_ops() as rec:
        Outer()(lucid.Tensor([1.0]))
        rec.begin_step(7, "mine")  # a loop outside every module call
        lucid.Tensor([1.0]) * 3
        rec.end_step()
    assert [(s.call, s.loop, s.t, s.start, s.stop) for s in rec.steps] == [
        (1, "", 0, 0, 1), (1, "", 1, 1, 2), (None, "mine", 7, 3, 4)]
    assert rec._open_steps == []


def test_no_recorder_no_step_marks(monkeypatch):
    from lucid.engine.recorder import Recorder

    def refuse(*args):
        raise AssertionError("a step was marked with no recorder on")

    monkeypatch.setattr(Recorder, "begin_step", refuse)
    monkeypatch.setattr(Recorder, "end_step", refuse)
    lucid.random.seed(0)
    out, _ = nn.GRU(3, 4)(lucid.random.rand((4, 2, 3)))  # runs: the loop only tests `rec`
    assert out.shape == (4, 2, 4)

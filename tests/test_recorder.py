"""The module recorder: one record of which module call made each op, read by summarize,
lucid_viz and the %lucid_flops magic."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.autograd.mode import MODE, record_ops


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
    assert MODE.recorder is None
    y = net(x)
    op = y._op
    assert getattr(op, "module", None) is None  # no recorder: no stamp
    with record_ops(root_name=lambda m: "model") as rec:
        net(x)
    assert rec.calls[0].path == "model" and rec.calls[1].path == "model.block"
    assert MODE.recorder is None


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

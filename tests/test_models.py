"""lucid.models: MLP, LeNet-5, ResNet-18 and summarize (seed 002's example)."""

from __future__ import annotations

import numpy as np

import lucid
import lucid.nn as nn
from lucid.cost import Cost
from lucid.models import MLP, LeNet5, summarize


def test_mlp_layout_and_forward():
    model = MLP(784, [512, 512], 10)
    assert [type(m).__name__ for m in model] == ["Linear", "ReLU", "Linear", "ReLU", "Linear"]
    assert sum(p.size for p in model.parameters()) == 784 * 512 + 512 + 512 * 512 + 512 + 5130
    out = model(lucid.zeros(3, 784, dtype=lucid.Float32))
    assert out.shape == (3, 10) and out.dtype == lucid.Float32


def test_lenet5_shapes():
    model = LeNet5(num_classes=10)
    assert model(lucid.zeros(2, 1, 32, 32, dtype=lucid.Float32)).shape == (2, 10)
    assert sum(p.size for p in model.parameters()) == 61_706  # the classic count


def test_seed_002_summarize_resnet_18_runs_as_written(capsys):
    from lucid.models.imgclf.resnet import resnet_18
    from lucid.models.util import summarize as summarize_from_util

    model = resnet_18(num_classes=10)
    summary = summarize_from_util(model, input_shape=(1, 3, 32, 32))
    printed = capsys.readouterr().out
    assert "Total MACs" in printed and "Total FLOPs" in printed
    assert "Total params: 11,181,642" in printed
    assert "Layer (type)" in printed and printed.count("MACs") >= 2  # a column named by unit
    assert summary.total_params == 11_181_642
    first = summary.rows[0]
    assert (first.name, first.kind) == ("conv1", "Conv2d")
    assert first.input_shape == (1, 3, 32, 32) and first.output_shape == (1, 64, 16, 16)
    assert first.macs == 64 * 16 * 16 * 3 * 7 * 7  # MACs: Cout * out pixels * Cin * k*k
    assert first.flops == 0  # a convolution without bias: multiply-adds only
    assert first.params == 64 * 3 * 7 * 7
    fc = summary.rows[-1]
    assert (fc.name, fc.output_shape, fc.params) == ("fc", (1, 10), 5130)
    # every op is credited once: the rows plus ops outside leaf layers make the total
    assert sum(r.macs for r in summary.rows) + summary.other.macs == summary.total_macs
    assert sum(r.flops for r in summary.rows) + summary.other.flops == summary.total_flops
    assert summary.other.flops > 0  # the residual additions live in BasicBlock.forward
    with lucid.no_grad(), lucid.count_flops():
        y = model.eval()(lucid.zeros(1, 3, 32, 32, dtype=lucid.Float32))
    assert y.flops == summary.total.seed_count


def test_summarize_counts_a_small_model_by_hand():
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU(), nn.Linear(3, 2))
    s = summarize(model, (5, 4), print_summary=False)
    assert [r.macs for r in s.rows] == [5 * 4 * 3, 0, 5 * 3 * 2]  # the products
    assert [r.flops for r in s.rows] == [5 * 3, 15, 5 * 2]  # bias adds, ReLU
    assert [r.params for r in s.rows] == [15, 0, 8]
    assert (s.total_macs, s.total_flops) == (60 + 30, 15 + 15 + 10)
    assert "Everything in FLOPs: 220 (2 x MACs + FLOPs)" in str(s)
    assert "Linear" in str(s) and "(5, 4)" in str(s)


def test_summarize_lists_calls_in_the_order_they_ran():
    class Twice(nn.Module):
        """One ReLU used at two places, as ResNet's BasicBlock does."""

        def __init__(self):
            super().__init__()
            self.fc1 = nn.Linear(4, 3)
            self.act = nn.ReLU()
            self.fc2 = nn.Linear(3, 3)

        def forward(self, x):
            return self.act(self.fc2(self.act(self.fc1(x))))

    s = summarize(Twice(), (2, 4), print_summary=False)
    assert [r.name for r in s.rows] == ["fc1", "act", "fc2", "act"]
    assert [r.params for r in s.rows] == [15, 0, 12, 0]
    assert [r.macs for r in s.rows] == [2 * 4 * 3, 0, 2 * 3 * 3, 0]
    assert [r.flops for r in s.rows] == [6, 6, 6, 6]
    assert s.other == Cost()


def test_resnet_18_trains_a_step_on_both_devices():
    import pytest

    pytest.importorskip("mlx.core")
    from lucid.models import resnet_18

    lucid.random.seed(0)
    model = resnet_18(num_classes=3)
    x = lucid.random.randn(2, 3, 32, 32, dtype=lucid.Float32)
    ref = model.eval()(x).numpy()
    model.to("gpu")
    out = model(x.to("gpu"))
    np.testing.assert_allclose(out.numpy(), ref, rtol=2e-3, atol=2e-3)


def test_models_are_float32_throughout_by_default():
    from lucid.models import resnet_18

    for model in (MLP(4, [3], 2), LeNet5(), resnet_18(num_classes=3)):
        assert {p.dtype for p in model.parameters()} == {lucid.Float32}
    x = lucid.zeros(1, 3, 32, 32, dtype=lucid.Float32)
    assert resnet_18(num_classes=3).eval()(x).dtype == lucid.Float32

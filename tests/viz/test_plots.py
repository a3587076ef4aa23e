"""lucid_viz.plots: the data behind each bar and line, read back from the returned Figure."""

from __future__ import annotations

import math

import numpy as np
import pytest

pytest.importorskip("matplotlib", reason="matplotlib is not installed")

from matplotlib.figure import Figure  # noqa: E402

import lucid  # noqa: E402
from lucid import nn  # noqa: E402
from lucid.models import summarize  # noqa: E402
from lucid_viz import grad_norms, plot_flops_per_layer, plot_grad_norms, plot_loss  # noqa: E402


def seed_conv():
    lucid.random.seed(0)
    return nn.Sequential(nn.Conv2d(3, 16, kernel_size=3, padding=1), nn.ReLU(),
                         nn.Conv2d(16, 32, kernel_size=3, padding=1))


def bars(fig: Figure) -> tuple[list[str], list[float]]:
    ax = fig.axes[0]
    return ([t.get_text() for t in ax.get_yticklabels()],
            [p.get_width() for p in ax.patches])


def test_flops_per_layer_from_a_model_and_from_a_summary():
    model = seed_conv()
    fig = plot_flops_per_layer(model, (1, 3, 32, 32))
    assert isinstance(fig, Figure)
    names, widths = bars(fig)
    assert names == ["0 (Conv2d)", "1 (ReLU)", "2 (Conv2d)"]
    # one bar of MACs per layer (the products), then one of FLOPs (the bias adds, ReLU)
    assert widths == [442_368, 0, 4_718_592, 16_384, 16_384, 32_768]
    assert "total 5,160,960 MACs + 65,536 FLOPs" in fig.axes[0].get_title()
    assert [t.get_text() for t in fig.axes[0].get_legend().get_texts()] == [
        "MACs (multiply-adds: matmul, linear, conv)", "FLOPs (every other operation)"]

    summary = summarize(model, (1, 3, 32, 32), print_summary=False)
    in_flops = plot_flops_per_layer(summary, flops_unit="FLOPs")
    assert bars(in_flops)[1] == [2 * 442_368 + 16_384, 16_384, 2 * 4_718_592 + 32_768]
    assert "a multiply-add counts 2" in in_flops.axes[0].get_xlabel()
    assert bars(plot_flops_per_layer(summary, flops_unit="2*MACs"))[1] == bars(in_flops)[1]


def test_flops_per_layer_lists_ops_outside_layers():
    from lucid.models.imgclf.resnet import resnet_18

    summary = summarize(resnet_18(num_classes=10), (2, 3, 32, 32), print_summary=False)
    names, widths = bars(plot_flops_per_layer(summary, flops_unit="FLOPs"))
    assert names[-1] == "(ops outside leaf layers)" and widths[-1] == summary.other.in_flops
    assert sum(widths) == summary.total.in_flops


def test_flops_per_layer_needs_an_input_shape():
    with pytest.raises(ValueError, match="input shape"):
        plot_flops_per_layer(seed_conv())
    with pytest.raises(ValueError, match="flops_unit"):
        plot_flops_per_layer(seed_conv(), (1, 3, 8, 8), flops_unit="GMACs")


def test_grad_norms_per_layer():
    lucid.random.seed(3)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    assert grad_norms(model) == {}  # no backward yet
    model(lucid.random.rand((5, 4))).sum().backward()
    norms = grad_norms(model)
    assert list(norms) == ["0", "2"]  # layers with parameters, in order; ReLU has none
    for layer in ("0", "2"):
        m = list(model)[int(layer)]
        expected = math.sqrt(sum(float(np.sum(np.asarray(p.grad, dtype=np.float64) ** 2))
                                 for p in m.parameters()))
        assert norms[layer] == pytest.approx(expected, rel=1e-12)


def test_grad_norm_lines_one_per_layer():
    history = [{"0": 1.0, "2": 0.5}, {"0": 0.1, "2": 0.4}, {"0": 0.01, "2": 0.3, "4": 1.0}]
    fig = plot_grad_norms(history)
    ax = fig.axes[0]
    assert [line.get_label() for line in ax.lines] == ["0", "2", "4"]
    assert list(ax.lines[0].get_ydata()) == [1.0, 0.1, 0.01]
    assert np.isnan(ax.lines[2].get_ydata()[0])  # "4" had no gradient at step 0
    assert ax.get_yscale() == "log"
    assert plot_grad_norms(history, log=False).axes[0].get_yscale() == "linear"
    many = plot_grad_norms([{f"layer{i}": 1.0 + i for i in range(20)}])
    assert len(many.axes) == 2  # a colour bar instead of a 20-entry legend


def test_grad_norm_ylim():
    history = [{"0": 1e-30, "2": 0.5}, {"0": 1e-31, "2": 0.4}]
    assert plot_grad_norms(history, ylim=(1e-6, 10)).axes[0].get_ylim() == (1e-6, 10)
    for bad in ((1.0, 0.1), (0.0, 1.0), (1.0,)):
        with pytest.raises(ValueError, match=r"^plot_grad_norms: ylim must be \(low, high\)"):
            plot_grad_norms(history, ylim=bad)
    assert plot_grad_norms(history, log=False, ylim=(0.0, 1.0)).axes[0].get_ylim() == (0, 1)


def test_loss_curves():
    fig = plot_loss([3.0, 2.0, 1.5, 1.2], val=[2.5, 1.4])
    ax = fig.axes[0]
    train, val = ax.lines
    assert list(train.get_xdata()) == [1, 2, 3, 4] and list(train.get_ydata()) == [3, 2, 1.5, 1.2]
    assert list(val.get_xdata()) == [2.0, 4.0]  # one per epoch, spread over the steps
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["train", "validation"]
    assert len(plot_loss([1.0, 0.5]).axes[0].lines) == 1


def test_figures_are_deterministic_and_display_in_notebooks():
    one = plot_loss([3.0, 2.0, 1.0])._repr_png_()
    two = plot_loss([3.0, 2.0, 1.0])._repr_png_()
    assert one.startswith(b"\x89PNG") and one == two

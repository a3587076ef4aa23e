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
from lucid_viz import (  # noqa: E402
    grad_norms,
    plot_attention,
    plot_flops_per_layer,
    plot_grad_norms,
    plot_loss,
)


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


# -- attention maps -------------------------------------------------------------------------

def maps(fig: Figure) -> list:
    """The panels that show a map (the colour bar is an axes too), in order."""
    return [ax for ax in fig.axes if ax.images and ax.get_label() != "<colorbar>"]


def ticks(ax) -> tuple[list[str], list[str]]:
    return ([t.get_text() for t in ax.get_yticklabels()],
            [t.get_text() for t in ax.get_xticklabels()])


def test_attention_one_panel_per_head_from_multi_head_attention():
    lucid.random.seed(0)
    mha = nn.MultiHeadAttention(8, 2)
    x = lucid.random.randn((3, 5, 8))
    _, w = mha(x, x, x, average_attn_weights=False)  # (N, heads, L, S) = (3, 2, 5, 5)
    fig = plot_attention(w, ["the", "cat", "sat", "on", "it"], sample=2)
    panels = maps(fig)
    assert [ax.get_title() for ax in panels] == ["head 0", "head 1"]
    for h, ax in enumerate(panels):
        np.testing.assert_array_equal(ax.images[0].get_array(), w.numpy()[2, h])
        assert ticks(ax) == (["the", "cat", "sat", "on", "it"],) * 2  # queries rows, keys cols
        assert ax.get_ylabel() == "query (attending)" and ax.get_xlabel() == "key (attended to)"
        assert ax.images[0].get_clim() == (0.0, float(w.numpy()[2].max()))  # one shared scale
    bar = [ax for ax in fig.axes if ax not in panels]
    # the colour bar's word sits across its top: along a short bar it ran past both ends
    assert [ax.get_title(loc="left") for ax in bar] == ["weight"]
    assert fig._suptitle.get_text() == "Attention weights (sequence 2)"
    assert fig._repr_png_().startswith(b"\x89PNG")


def test_attention_of_an_encoder_layer_and_a_plain_map():
    lucid.random.seed(1)
    layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, batch_first=True)
    layer.eval()
    layer(lucid.random.randn((1, 4, 8)))
    weights = layer.attn_weights  # averaged over the heads: (N, L, S) = (1, 4, 4)
    fig = plot_attention(weights, "abcd", sample=0)  # a string: one token per character
    (ax,) = maps(fig)
    np.testing.assert_array_equal(ax.images[0].get_array(), weights.numpy()[0])
    assert ticks(ax) == (["a", "b", "c", "d"],) * 2
    assert ax.get_title() == ""  # one map: no head to name
    # the weights written in the cells of a small map, row by row
    assert [t.get_text() for t in ax.texts] == [f"{v:.2f}" for v in weights.numpy()[0].ravel()]

    plain = np.array([[0.25, 0.75], [1.0, 0.0]])  # (L, S) as a NumPy array, positions as ticks
    (ax,) = maps(plot_attention(plain, vmax=1.0, values=False))
    np.testing.assert_array_equal(ax.images[0].get_array(), plain)
    assert ticks(ax) == (["0", "1"], ["0", "1"]) and len(ax.texts) == 0
    assert ax.images[0].get_clim() == (0.0, 1.0)


def test_cross_attention_labels_queries_and_keys_apart():
    w = np.full((2, 3, 4), 0.25)  # (heads, L=3 queries, S=4 keys)
    fig = plot_attention(w, query_tokens=["le", "chat", "noir"],
                         key_tokens=["the", "black", "cat", "<eos>"])
    assert [ticks(ax) for ax in maps(fig)] == [(["le", "chat", "noir"],
                                                ["the", "black", "cat", "<eos>"])] * 2


def test_attention_errors_name_the_shapes():
    w = np.full((2, 2, 3, 3), 1 / 3)
    with pytest.raises(ValueError, match=r"^plot_attention: weights of shape \(2,2,3,3\) hold 2 "
                                         r"sequences \(N, heads, L, S\); pick one with "
                                         r"sample=0 \.\.\. 1$"):
        plot_attention(w)
    with pytest.raises(ValueError, match=r"^plot_attention: sample=2 is out of range for the 2 "
                                         r"sequences of weights of shape \(2,2,3,3\)$"):
        plot_attention(w, sample=2)
    with pytest.raises(ValueError, match=r"^plot_attention: sample=0 picks a sequence of a batch"
                                         r".*weights of shape \(3,3\) have no batch axis$"):
        plot_attention(w[0, 0], sample=0)
    with pytest.raises(ValueError, match=r"^plot_attention: weights must be \(L, S\), "
                                         r".*got shape \(3,\)$"):
        plot_attention(np.ones(3))
    with pytest.raises(ValueError, match=r"^plot_attention: 2 tokens for the 3 queries \(rows\) "
                                         r"of weights of shape \(2,3,3\); give one token each"):
        plot_attention(w[0], ["a", "b"])
    with pytest.raises(ValueError, match=r"^plot_attention: 4 tokens for the 3 keys \(columns\) "
                                         r"of weights of shape \(3,3\)"):
        plot_attention(w[0, 0], query_tokens="abc", key_tokens="abcd")
    with pytest.raises(ValueError, match=r"^plot_attention: attention weights are probabilities, "
                                         r">= 0, but these reach -1; pass the weights after"):
        plot_attention(np.array([[1.0, -1.0], [0.5, 0.5]]))
    with pytest.raises(ValueError, match=r"^plot_attention: vmax, the top of the colour scale, "
                                         r"must be > 0, got 0"):
        plot_attention(w[0, 0], vmax=0)
    with pytest.raises(TypeError, match=r"^plot_attention: weights must be numbers"):
        plot_attention(np.array([["a", "b"], ["c", "d"]]))


def test_every_figure_fits_the_page_with_text_a_room_can_read():
    """At most 9 inches wide (wider ones are shrunk by the notebook, their text with them),
    no text under 11 pt, ticks included -- for every plot, also a 16-head attention grid."""
    import matplotlib.text

    from lucid_viz.plots import MAX_WIDTH, MIN_PT

    lucid.random.seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    history = [{f"layer{i}": 1.0 / (s + i + 1) for i in range(14)} for s in range(5)]
    w = lucid.softmax(lucid.random.randn(16, 3, 3), axis=-1)
    figures = [plot_flops_per_layer(model, (2, 4)), plot_loss([3, 2, 1]),
               plot_grad_norms(history), plot_attention(w)]
    for fig in figures:
        fig.canvas.draw()  # ticks are made at drawing time
        assert fig.get_size_inches()[0] <= MAX_WIDTH
        sizes = [t.get_fontsize() for t in fig.findobj(matplotlib.text.Text)
                 if t.get_text() and t.get_visible()]
        assert sizes and min(sizes) >= MIN_PT, (fig, min(sizes))

"""Pictures that fit the room: drawings scale to the notebook's width, keep node text >= 12 CSS
px at 592 px (JupyterLab at 1024x768, file browser open), lay themselves out another way when
they would not and say so; one-line legends that name only what the picture has."""

from __future__ import annotations

import html
import re

import numpy as np
import pytest

import lucid
from lucid import nn
from lucid.models import resnet_18
from lucid_viz import draw, fit, graphviz_bin, trace
from tests.viz.test_render import title
from tests.viz.test_rollup_steps import loop, tagger

needs_dot = pytest.mark.skipif(graphviz_bin.find_dot() is None,
                               reason="no Graphviz here (pip install graphviz-pure)")


def neuron():
    """micrograd's neuron, every tensor named."""
    x1 = lucid.Tensor(2.0, requires_grad=True, name="x1")
    x2 = lucid.Tensor(0.0, requires_grad=True, name="x2")
    w1 = lucid.Tensor(-3.0, requires_grad=True, name="w1")
    w2 = lucid.Tensor(1.0, requires_grad=True, name="w2")
    b = lucid.Tensor(6.8813735870195432, requires_grad=True, name="b")
    n = x1 * w1 + x2 * w2 + b
    n.name = "n"
    return lucid.tanh(n)


def basic_block():
    lucid.random.seed(0)
    return resnet_18(num_classes=10).layer1[0], lucid.zeros(1, 64, 8, 8, dtype=lucid.Float32)


def legend(dot: str) -> list[str]:
    """The words of the legend, in order (the label of the cluster around the picture)."""
    label = re.search(r'subgraph "cluster_legend" \{\n\s*label=<(.*)>; labelloc=b', dot)
    return re.findall(r"<TD(?: ALIGN=\"LEFT\")?>([^<]+)</TD>", label[1]) if label else []


def test_node_text_size_follows_the_scale_to_the_page():
    svg = '<svg width="888pt" height="300pt" viewBox="0 0 888 300">'
    # 888 pt = 1184 px, scaled into 592 px: half size, 11 pt = 14.67 px -> 7.33 px
    assert fit.node_text_px(svg) == pytest.approx(11 * 4 / 3 / 2)
    assert fit.node_text_px(svg, 1184) == pytest.approx(11 * 4 / 3)  # never scaled up
    assert fit.node_text_px(svg, 1184, 200) == pytest.approx(11 * 4 / 3 * 200 / 400)
    # wider than the narrowest page: as wide as its container (JupyterLab's <img> would not
    # shrink a fixed width), its size still readable from the viewBox
    scaled = fit.scale_to_page(svg)
    assert scaled.startswith('<svg width="100%" style="max-width:1776px;height:auto" viewBox=')
    assert fit.svg_size(scaled) == pytest.approx((1184, 400))
    small = '<svg width="300pt" height="100pt" viewBox="0 0 300 100">'
    assert fit.scale_to_page(small).startswith('<svg style="max-width:100%;height:auto" width=')


@needs_dot
@pytest.mark.parametrize("make", [basic_block, lambda: tagger(6), lambda: loop()],
                         ids=["op-level BasicBlock", "rolled-up LSTM", "cell in a loop"])
def test_a_graph_too_wide_lays_itself_out_again_and_says_so(make):
    model, x = make()
    asked = draw(model, x, fit=False)
    assert fit.node_text_px(asked.svg()) < fit.FLOOR_PX  # as asked: unreadable at 592 px
    drawing = draw(model, x)
    assert fit.node_text_px(drawing.svg()) >= fit.FLOOR_PX
    assert "to fit the page" in title(drawing.dot()).replace("\n", " ")
    assert '<svg width="100%"' in drawing.svg()  # scales to the page


@needs_dot
def test_a_graph_that_fits_is_drawn_as_asked():
    with lucid.count_flops():
        y = neuron()
    drawing = draw(y, show=("data", "grad"))
    assert "to fit the page" not in title(drawing.dot())
    assert drawing.dot() == draw(y, show=("data", "grad"), fit=False).dot()
    assert fit.node_text_px(drawing.svg()) >= fit.FLOOR_PX
    assert fit.node_text_px(drawing.svg(), 844) >= fit.FLOOR_PX


@needs_dot
def test_fewer_details_when_that_is_enough():
    model, x = tagger(6)
    dot = draw(model, x).dot()
    words = title(dot).replace("\n", " ")
    assert "shape, dtype left out of the nodes to fit the page" in words
    assert "(6,2,4) Float64" not in dot  # no shape lines in the nodes
    assert "LSTM step × 6" in dot  # and still the rolled-up steps


def test_legend_names_only_what_the_picture_has():
    lucid.random.seed(0)
    x = lucid.random.randn(3, 4, requires_grad=True)
    y = (x * 2.0).sum()  # not counted, no parameters, no modules, one device
    assert legend(draw(y, fit=False).dot()) == ["ops", "inputs"]
    with lucid.count_flops():
        y = (x * 2.0).sum()
    # no multiply-adds here: the unit line speaks of FLOPs only
    assert legend(draw(y, fit=False).dot()) == ["ops", "inputs",
                                                "FLOPs: one per element operation"]
    model = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    words = legend(draw(model, x, depth=1, fit=False).dot())
    assert words[0] == "modules" and "cpu" not in " ".join(words)  # one device: no device key
    assert words[-1].startswith("MACs: multiply-adds")


def test_the_guard_picture_lists_no_modules_it_does_not_have():
    lucid.random.seed(0)
    x = lucid.random.randn(4, requires_grad=True)
    y = x
    for _ in range(30):
        y = lucid.tanh(y * 1.01)
    drawing = draw(y.sum(), max_nodes=12, fit=False)
    assert "modules" not in legend(drawing.dot())
    assert "more nodes" in drawing.dot()


@needs_dot
def test_the_guard_picture_fits_the_page():
    lucid.random.seed(0)
    x = lucid.random.randn(4, requires_grad=True)
    y = x
    for _ in range(30):
        y = lucid.tanh(y * 1.01)
    svg = draw(y.sum(), max_nodes=12).svg()
    assert fit.node_text_px(svg) >= fit.FLOOR_PX


def test_edge_notes_of_a_roll_up_never_run_into_each_other():
    """The words of the edges into a roll-up ("every call (× 8)") sit on their source, one
    line each, instead of side by side over the edges ("every call (× 20every call (× 20)")."""
    model, x = loop()
    dot = draw(model, x, fit=False).dot()
    edge_words = re.findall(r'-> "[^"]+" \[label=" ([^"]+)"', dot)
    assert not [w for w in edge_words if w.startswith("every")]
    graph = trace(model, x)
    weights = [n.id for n in graph.nodes if n.role == "parameter"]
    for nid in weights:
        label = re.search(rf'"{nid}" \[label="((?:[^"\\]|\\.)*)"', dot)[1]
        assert label.endswith("\\n→ every call (× 8)")


@needs_dot
def test_two_devices_get_a_device_key():
    pytest.importorskip("mlx.core", reason="MLX is not installed")
    from tests.viz.test_render import mixed_graph

    words = legend(draw(mixed_graph(), fit=False).dot())
    assert "cpu ops" in words and "gpu ops" in words
    assert "data copied to another device" in words


def test_a_node_whose_gradient_was_freed_says_so_and_names_the_fix():
    y = neuron()
    y.backward()
    dot = draw(y, show=("grad",), fit=False).dot()
    assert "grad freed by backward()" in dot
    assert ("backward(keep_grad=True), or draw before backward()"
            in html.unescape(title(dot)).replace("\n", " "))
    y = neuron()
    y.backward(keep_grad=True)
    assert "freed" not in draw(y, show=("grad",), fit=False).dot()


def test_draw_from_the_loss_boxes_a_module_as_draw_of_the_model_does():
    class Net(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.fc = nn.Linear(4, 3)

        def forward(self, x):
            return self.fc(x)

    lucid.random.seed(0)
    net, x = Net(), lucid.random.randn(2, 4)
    loss = lucid.tanh(net(x)).sum()
    dot = draw(loss, fit=False).dot()
    clusters = [c for c in re.findall(r'subgraph "cluster_([^"]+)"', dot) if c != "legend"]
    assert clusters == ["fc"]  # one box: not "fc (call 1)" for the weight and "fc (call 2)"
    box = dot[dot.index('subgraph "cluster_fc"'):]
    box = box[:box.index("}")]
    assert "fc.weight" in box and "fc.bias" in box and "Linear" in box  # the op inside too
    assert "Tanh" not in box and "Sum" not in box


def test_show_errors_name_the_public_call():
    y = neuron()
    with pytest.raises(ValueError, match=r"^draw: show may hold"):
        draw(y, show="value")
    with pytest.raises(ValueError, match=r"^to_dot: show may hold"):
        from lucid_viz import to_dot

        to_dot(trace(y), show="value")
    with pytest.raises(ValueError, match=r"^draw: flops_unit"):
        draw(y, flops_unit="GFLOPs")


def test_creation_functions_take_a_name():
    t = lucid.ones(2)
    made = [lucid.random.randn(2, name="a"), lucid.random.rand(2, name="a"),
            lucid.random.uniform(size=2, name="a"), lucid.random.bernoulli(0.5, size=2, name="a"),
            lucid.random.randint(3, size=2, name="a"), lucid.zeros(2, name="a"),
            lucid.ones(2, name="a"), lucid.empty(2, name="a"), lucid.full((2,), 1.0, name="a"),
            lucid.eye(2, name="a"), lucid.arange(3, name="a"), lucid.linspace(0, 1, 3, name="a"),
            lucid.zeros_like(t, name="a"), lucid.ones_like(t, name="a"),
            lucid.empty_like(t, name="a"), lucid.full_like(t, 2.0, name="a")]
    assert [m.name for m in made] == ["a"] * len(made)
    np.testing.assert_array_equal(lucid.eye(2, name="I").numpy(), np.eye(2))


def test_a_collapsed_loop_draws_its_slices_once():
    """Collapsed to depth 1, a cell called in a loop is one box, and the loop's slices x[t]
    that feed it -- identical ops side by side -- one node "× 8", not eight."""
    model, x = loop()
    dot = draw(model, x, depth=1, fit=False).dot()
    slices = re.findall(r'\[label="(GetItem n\d+(?:\\n[^"]*)?)"', dot)
    assert len(slices) == 1 and "× 8, one drawn" in slices[0]
    every = draw(model, x, fit=False, rollup=False, max_nodes=None).dot()
    assert "one drawn" not in every  # as asked: every op (the GRU cell's own slices too)

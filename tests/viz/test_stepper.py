"""The backward stepper: frames replay the engine's own walk, with the engine's own gradients."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.cost import Cost
from lucid_viz.dot import HIGHLIGHT
from lucid_viz.graph import trace
from lucid_viz.stepper import (
    DONE,
    FULL_VALUES,
    KEY,
    PASSED,
    GradView,
    Stepper,
    local_rule,
    step_backward,
)


def small_loss(count=True):
    """L = sum(tanh(x @ w + b) * sum(x)): broadcasting, a reused input, a scalar output."""
    lucid.random.seed(0)
    x = lucid.random.randn(3, 4, requires_grad=True)
    w = lucid.random.randn(4, 5, requires_grad=True)
    b = lucid.zeros(5, requires_grad=True)
    if count:
        with lucid.count_flops():
            loss = ((x @ w + b).tanh() * x.sum()).sum()
    else:
        loss = ((x @ w + b).tanh() * x.sum()).sum()
    return loss, (x, w, b)


def mlp_loss():
    lucid.random.seed(1)
    model = nn.Sequential(nn.Linear(6, 16), nn.ReLU(), nn.Linear(16, 3))
    x = lucid.random.randn(8, 6)
    t = lucid.random.randn(8, 3)
    with lucid.count_flops():
        loss = nn.MSELoss()(model(x), t)
    return loss, model


def engine_order(loss):
    """The order the engine's backward visits nodes, recorded by hooks on every node."""
    graph = trace(loss)
    ids = {id(graph.tensor(n.id)): n.id for n in graph.nodes}
    seen, handles = [], []
    for node in graph.nodes:
        t = graph.tensor(node.id)
        if t.requires_grad:
            handles.append(t.register_hook(lambda g, _t=t: seen.append(ids[id(_t)])))
    loss.backward(retain_graph=True)
    for h in handles:
        h.remove()
    return seen


@pytest.mark.parametrize("make", [lambda: small_loss()[0], lambda: mlp_loss()[0]])
def test_frame_sequence_is_the_engines_backward_order(make):
    loss = make()
    stepper = step_backward(loss)
    assert [f.node for f in stepper.frames] == engine_order(loss)
    assert [f.step for f in stepper.frames] == list(range(len(stepper.frames)))


def test_gradients_are_the_engines():
    loss, (x, w, b) = small_loss()
    stepper = step_backward(loss)
    graph = stepper.graph
    leaf = {id(graph.tensor(n)): n for n in graph.order}
    gx, gw, gb = lucid.autograd.grad(loss, [x, w, b], retain_graph=True)
    by_node = {f.node: f for f in stepper.frames}
    for t, g in ((x, gx), (w, gw), (b, gb)):
        frame = by_node[leaf[id(t)]]
        view = frame.grad_in
        assert view.shape == t.shape
        if view.values is not None:
            np.testing.assert_array_equal(np.asarray(view.values), g.numpy())
        assert view.norm == pytest.approx(float(np.linalg.norm(g.numpy())), rel=1e-12)
        assert frame.grads_out == () and frame.edges == ()
    root = stepper.frames[0]
    assert root.node == graph.output and root.grad_in.values == 1.0
    # the bias was broadcast over 3 rows: what the Add sends it is summed to its shape (5,)
    add = next(f for f in stepper.frames if f.op == "Add")
    to_b = next(o for o in add.grads_out if o.src == leaf[id(b)])
    assert to_b.grad.shape == (5,)
    np.testing.assert_allclose(np.asarray(to_b.grad.values), gb.numpy(), rtol=1e-12)
    # x is used twice (matmul, sum): its complete gradient is the sum of what both send it
    sends = [o.grad for f in stepper.frames for o in f.grads_out if o.src == leaf[id(x)]]
    assert len(sends) == 2
    np.testing.assert_allclose(sum(np.asarray(s.values) for s in sends), gx.numpy(),
                               rtol=1e-12)


def test_edges_are_the_ones_carrying_gradients():
    loss, _ = small_loss()
    stepper = step_backward(loss)
    graph = stepper.graph
    for f in stepper.frames:
        assert set(f.edges) == {(src, f.node) for src in graph.inputs_of(f.node)
                                if graph.tensor(src).requires_grad}


def test_large_gradients_are_summarised():
    loss, model = mlp_loss()
    stepper = step_backward(loss)
    weight = model[0].weight  # (16, 6): 96 elements
    frame = next(f for f in stepper.frames
                 if stepper.graph.tensor(f.node) is weight)
    view = frame.grad_in
    assert view.values is None and view.shape == (16, 6)
    loss.backward(retain_graph=True)
    g = np.asarray(weight.grad)
    assert (view.norm, view.min, view.max) == pytest.approx(
        (float(np.linalg.norm(g)), float(g.min()), float(g.max())), rel=1e-6)
    assert "|g| =" in view.text() and "shape (16, 6)" in view.text()
    small = GradView.of(np.arange(FULL_VALUES, dtype=np.float64))
    assert small.values == list(range(FULL_VALUES))


def test_local_rules_come_from_the_op_docstrings():
    loss, _ = small_loss()
    stepper = step_backward(loss)
    rules = {f.op: f.rule for f in stepper.frames}
    assert rules["Tanh"] == ("y = tanh x. dy/dx = 1 - tanh^2 x = 1 - y^2, so backward reuses "
                             "the output.")
    assert rules["MatMul"].endswith("dL/da = g @ b^T, dL/db = a^T @ g.")
    assert rules["input"].startswith("a leaf")
    tanh_op = next(stepper.graph.tensor(f.node)._op for f in stepper.frames if f.op == "Tanh")
    assert local_rule(tanh_op) == rules["Tanh"]


def test_running_backward_flops():
    loss, _ = small_loss()
    stepper = step_backward(loss)
    running = Cost()
    for f in stepper.frames:
        running = running + f.flops_bwd
        assert f.flops_bwd_total == running
    assert stepper.frames[-1].flops_bwd_total == stepper.graph.cost(backward=True)
    assert stepper.graph.cost(backward=True).seed_count == stepper.graph.total_flops_bwd > 0
    uncounted = step_backward(small_loss(count=False)[0])
    assert all(f.flops_bwd_total is None for f in uncounted.frames)
    # a graph recorded outside count_flops() says nothing of FLOPs, anywhere
    for k in range(1, len(uncounted) + 1):
        assert "FLOP" not in uncounted.frame_text(k) and "count" not in uncounted.frame_text(k)
        assert "FLOP" not in uncounted.panel_html(k) and "FLOP" not in uncounted.frame_dot(k)
    assert "FLOP" not in repr(uncounted)
    assert "running total 44 FLOPs" in stepper.frame_text(2) and "so far" in stepper.frame_dot(2)


def test_no_grad_is_touched_and_the_graph_is_retained():
    loss, (x, w, b) = small_loss()
    step_backward(loss)
    assert x.grad is None and w.grad is None and b.grad is None
    assert all(t._hooks in (None, {}) for t in (x, w, b, loss))
    loss.backward()  # the graph is still there
    assert x.grad is not None
    loss2, _ = small_loss()
    step_backward(loss2, retain_graph=False)
    with pytest.raises(RuntimeError, match="already released"):
        loss2.backward()


def test_a_graph_from_trace_names_parameters():
    loss, model = mlp_loss()
    stepper = step_backward(trace(loss))
    assert [f.node for f in stepper.frames] == engine_order(loss)
    lucid.random.seed(2)
    x = lucid.random.randn(4, 6)
    graph = trace(model, x)  # the model's output graph, with parameter names
    stepper = step_backward(graph)
    labels = [f.label for f in stepper.frames]
    assert any(s.startswith("0.weight (parameter)") for s in labels)


def test_a_tensor_without_grad_is_refused():
    with pytest.raises(RuntimeError, match="does not require grad"):
        step_backward(lucid.ones(3) * 2)
    with pytest.raises(TypeError):
        step_backward([1, 2, 3])


def test_frames_are_deterministic():
    a = step_backward(small_loss()[0])
    b = step_backward(small_loss()[0])
    assert a.frames == b.frames
    texts = [a.frame_text(k) for k in range(1, len(a) + 1)]
    assert texts == [b.frame_text(k) for k in range(1, len(b) + 1)]
    assert not any(re.search(r"0x[0-9a-fA-F]{4,}", t) for t in texts)
    assert re.fullmatch(r"Stepper\(9 frames over 9 nodes, backward work \d+ MACs \+ \d+ FLOPs\)",
                        repr(a))


def test_across_devices():
    pytest.importorskip("mlx.core")
    lucid.random.seed(0)
    x = lucid.random.randn(3, 4, requires_grad=True)
    w = lucid.random.randn(4, 2, requires_grad=True, device="gpu")
    with lucid.count_flops():
        loss = (x.to("gpu") @ w).tanh().to("cpu").sum()
    stepper = step_backward(loss)
    assert [f.node for f in stepper.frames] == engine_order(loss)
    assert [f.op for f in stepper.frames][:5] == ["Sum", "ToDevice", "Tanh", "MatMul",
                                                  "ToDevice"]
    gx, gw = lucid.autograd.grad(loss, [x, w], retain_graph=True)
    for t, g in ((x, gx), (w, gw)):
        frame = next(f for f in stepper.frames if stepper.graph.tensor(f.node) is t)
        np.testing.assert_allclose(np.asarray(frame.grad_in.values), g.numpy(), rtol=1e-6)


def test_gpu_gradients():
    pytest.importorskip("mlx.core")
    lucid.random.seed(0)
    x = lucid.random.randn(3, 4, requires_grad=True, device="gpu")
    w = lucid.random.randn(4, 2, requires_grad=True, device="gpu")
    with lucid.count_flops():
        loss = (x @ w).sigmoid().sum()
    stepper = step_backward(loss)
    assert [f.node for f in stepper.frames] == engine_order(loss)
    gx = lucid.autograd.grad(loss, x, retain_graph=True)[0]
    frame = next(f for f in stepper.frames if stepper.graph.tensor(f.node) is x)
    np.testing.assert_allclose(np.asarray(frame.grad_in.values), gx.numpy(), rtol=1e-6)


# -- pictures (need lucid_viz.render) -----------------------------------------------------------
@pytest.fixture
def render():
    import lucid_viz.render

    return lucid_viz.render


@pytest.fixture
def graphviz_bin(render):
    from lucid_viz import graphviz_bin

    return graphviz_bin


def test_frame_dot_highlights_the_node_and_is_cached(render):
    stepper = step_backward(small_loss()[0])
    dots = [stepper.frame_dot(k) for k in range(1, len(stepper) + 1)]
    assert len(set(dots)) == len(dots)  # each frame highlights something different
    assert stepper.frame_dot(4) is dots[3]


def test_depth_draws_modules_as_boxes(render):
    _, model = mlp_loss()
    lucid.random.seed(3)
    stepper = step_backward(trace(model, lucid.random.randn(2, 6)), depth=1)
    dot = stepper.frame_dot(2)
    boxed = next(line for line in dot.splitlines() if line.lstrip().startswith('"m:1"'))
    assert 'penwidth="3"' in boxed  # step 2 is the ReLU, inside module 1's box
    with pytest.raises(ValueError, match="depth must be None"):
        step_backward(small_loss()[0], depth=0)


def test_frame_svg_and_static_fallback(graphviz_bin):
    if graphviz_bin.find_dot() is None:
        pytest.skip("no Graphviz binary")
    stepper = step_backward(small_loss()[0])
    svg = stepper.frame_svg(len(stepper))
    assert svg is not None and "<svg" in svg
    bundle = stepper._repr_mimebundle_()
    # the static picture is the last frame with its legend drawn in (no player to hold it)
    static = bundle["image/svg+xml"]
    assert static == stepper.static_svg() and "at work" in static and "at work" not in svg
    assert 'height:auto"' in static  # scaled to the page
    assert bundle["text/plain"].startswith("Stepper(9 frames")


def test_no_graphviz_binary_falls_back_to_text(monkeypatch, graphviz_bin):
    def missing(*args, **kwargs):
        raise graphviz_bin.GraphvizNotFound("no dot here")

    monkeypatch.setattr(graphviz_bin, "render", missing)
    stepper = step_backward(small_loss()[0])
    assert stepper.frame_svg(1) is None
    assert "step 1:" in stepper.picture_html(1) and "<svg" not in stepper.picture_html(1)
    bundle = stepper._repr_mimebundle_()
    assert "image/svg+xml" not in bundle
    assert "no Graphviz binary found" in bundle["text/plain"]


def test_display_never_raises(monkeypatch, render):
    def broken(*args, **kwargs):
        raise ValueError("renderer bug")

    monkeypatch.setattr(render, "to_dot", broken)
    bundle = step_backward(small_loss()[0])._repr_mimebundle_()
    assert "could not draw the frame: ValueError: renderer bug" in bundle["text/plain"]


def test_widget_plays_the_frames(monkeypatch, graphviz_bin):
    w = pytest.importorskip("ipywidgets")
    monkeypatch.setattr(graphviz_bin, "render", lambda dot, fmt="svg": b"<svg>frame</svg>")
    stepper = step_backward(small_loss()[0])
    box = stepper.widget()
    controls, view = box.children
    picture, panel = view.children
    play, slider = controls.children
    assert isinstance(play, w.Play) and isinstance(slider, w.IntSlider)
    # one numbering: the slider counts 1..n as the frame titles do
    assert (play.min, play.max, slider.min, slider.max) == (1, 9, 1, 9) == (1, 9, 1, len(stepper))
    assert slider.value == 1 and "step 1/9" in panel.value
    assert picture.value.startswith("<div style='height:560px;width:100%'><div style='height:"
                                    "516px'><svg>frame</svg></div><div class='lucid-legend'")
    # fixed heights, so the page does not jump between frames; the panel beside the picture,
    # so picture + controls fit the notebook of a 1024x768 projector (about 640 px high)
    assert (picture.layout.height, panel.layout.height) == ("570px", "570px")
    assert (picture.layout.width, panel.layout.width) == ("60%", "40%")
    assert 570 + 40 <= 640
    slider.value = 5
    assert "step 5/9" in panel.value
    bundle = stepper._repr_mimebundle_()
    assert "application/vnd.jupyter.widget-view+json" in bundle
    assert bundle["image/svg+xml"].startswith("<svg")


def test_a_frame_is_scaled_into_its_fixed_box(monkeypatch, graphviz_bin):
    monkeypatch.setattr(graphviz_bin, "render", lambda dot, fmt="svg":
                        b'<svg width="1585pt" height="900pt" viewBox="0 0 1585 900"><g/></svg>')
    html_text = step_backward(small_loss()[0]).picture_html(1)
    assert html_text.startswith("<div style='height:560px;width:100%'><div style='height:516px'>"
                                "<svg width=\"100%\" height=\"100%\"")
    assert 'viewBox="0 0 1585 900"' in html_text  # proportions kept


def test_save_html_is_self_contained_and_deterministic(tmp_path, monkeypatch, graphviz_bin):
    monkeypatch.setattr(graphviz_bin, "render",
                        lambda dot, fmt="svg": b'<?xml version="1.0"?>\n<svg>f</svg>')
    a = step_backward(small_loss()[0]).save_html(tmp_path / "a.html")
    b = step_backward(small_loss()[0]).save_html(tmp_path / "b.html")
    text = a.read_text(encoding="utf-8")
    assert text == b.read_text(encoding="utf-8")
    assert text.count("class='lucid-frame'") == 9 and text.count("<svg>f</svg>") == 9
    assert "<?xml" not in text
    assert "<script>" in text and 'type="range"' in text and "lucid-play" in text
    assert "http://" not in text.replace("http://www.w3.org", "") and "src=" not in text
    assert not re.search(r"0x[0-9a-fA-F]{4,}", text)


def test_stepper_is_a_stepper():
    assert isinstance(step_backward(small_loss()[0]), Stepper)


def test_every_highlight_of_a_frame_is_explained_in_its_legend():
    stepper = step_backward(small_loss()[0])
    legend = stepper.picture_html(3)  # the line under the player's picture
    static = stepper.static_svg() or ""  # the picture shown where widgets do not run
    for text in ("at work", "done", "gradient flowing (against the arrow)", "gradient passed"):
        assert f"> {text}</span>" in legend, text
        assert not static or f">{text}</text>" in static, text  # one line under the picture
    assert {HIGHLIGHT, DONE, PASSED} <= {colour for colour, _ in KEY}


# -- the stepper for the back row -------------------------------------------------------------

def chapter_03_loss():
    """Chapter 03's graph: L = sum(tanh(w * x + b)), w, x and b named."""
    w = lucid.Tensor(np.array([0.5, -0.3]), requires_grad=True, name="w")
    x = lucid.Tensor(np.array([1.0, 2.0]), name="x")
    b = lucid.Tensor(0.1, requires_grad=True, name="b")
    with lucid.count_flops():
        return lucid.tanh(w * x + b).sum()


def neuron_loss():
    """micrograd's 10-node neuron."""
    from tests.viz.test_fit import neuron

    return neuron()


@pytest.mark.parametrize("make", [chapter_03_loss, neuron_loss], ids=["chapter 03", "neuron"])
def test_frames_show_values_and_arrived_gradients_in_text_a_room_can_read(make, graphviz_bin):
    if graphviz_bin.find_dot() is None:
        pytest.skip("no Graphviz binary")
    from lucid_viz import fit
    from lucid_viz.stepper import LEGEND_HEIGHT, PICTURE_HEIGHT, PICTURE_SHARE, PLAYER_PX

    stepper = step_backward(make())
    box = (PLAYER_PX * PICTURE_SHARE, PICTURE_HEIGHT - LEGEND_HEIGHT)  # the player at 1024x768
    for k in range(1, len(stepper) + 1):
        svg = stepper.frame_svg(k)
        assert fit.node_text_px(svg, *box) >= fit.FLOOR_PX, k
    # step 1 is the output: its gradient (ones) has arrived, no other has
    first = stepper.frame_dot(1)
    out = stepper.frames[0].node
    assert re.search(rf'"{out}" \[label="[^"]*\\ngrad 1"', first)
    assert first.count("grad ?") == sum(n.requires_grad for n in stepper.graph.nodes) - 1
    last = stepper.frame_dot(len(stepper))
    assert "grad ?" not in last and "data " in last  # every value and every gradient


def test_frame_numbers_count_from_one_as_the_player_does():
    stepper = step_backward(small_loss()[0])
    assert stepper.frame_text(1).startswith("step 1: ")
    assert stepper.frame_text(len(stepper)).startswith(f"step {len(stepper)}: ")
    for bad in (0, len(stepper) + 1):
        with pytest.raises(IndexError, match=r"steps are numbered 1 to 9, as the player"):
            stepper.frame_text(bad)


def test_step_backward_after_backward_says_to_step_first():
    loss, _ = small_loss()
    loss.backward()
    with pytest.raises(RuntimeError, match=r"step_backward: backward\(\) has already run on "
                                           r"this graph.*Call step_backward\(loss\) before "
                                           r"loss.backward\(\)"):
        step_backward(loss)
    loss, _ = small_loss()
    loss.backward(retain_graph=True)
    assert len(step_backward(loss)) == 9  # a kept graph can still be stepped through

"""What a lecture needs on the pictures: names, values and gradients on the nodes, broadcasting
explained in backward, text that fits its picture."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid_viz
from lucid_viz import graphviz_bin
from lucid_viz.graph import summed_axes, trace
from lucid_viz.stepper import step_backward
from lucid_viz.svgfit import fit_text, text_extents


def _neuron():
    """micrograd's neuron: o = tanh(x1 w1 + x2 w2 + b), every tensor named."""
    x1 = lucid.Tensor(2.0, requires_grad=True, name="x1")
    x2 = lucid.Tensor(0.0, requires_grad=True, name="x2")
    w1 = lucid.Tensor(-3.0, requires_grad=True, name="w1")
    w2 = lucid.Tensor(1.0, requires_grad=True, name="w2")
    b = lucid.Tensor(6.8813735870195432, requires_grad=True, name="b")
    n = x1 * w1 + x2 * w2 + b
    n.name = "n"
    o = lucid.tanh(n)
    o.name = "o"
    return o, (x1, x2, w1, w2, b, n)


def _title(dot):
    return re.search(r'graph \[.*label="((?:[^"\\]|\\.)*)"\];', dot)[1]


def _labels(dot):
    return dict(re.findall(r'^\s+"(n\d+)" \[label="((?:[^"\\]|\\.)*)"', dot, re.M))


# -- names ---------------------------------------------------------------------------------

def test_names_are_set_at_creation_or_later_and_shown_by_repr():
    t = lucid.Tensor([1.0, 2.0], name="w")
    assert t.name == "w" and "name='w'" in repr(t)
    t.name = "v"
    assert t.name == "v"
    assert lucid.Tensor(1.0).name is None and (t * 2).name is None
    with pytest.raises(TypeError, match="Tensor: name must be a string or None, got int"):
        lucid.Tensor(1.0, name=3)


def test_parameters_are_named_by_their_module_path():
    model = nn.Sequential(nn.Linear(3, 4), nn.Sequential(nn.ReLU(), nn.Linear(4, 2)))
    assert [p.name for p in model.parameters()] == [n for n, _ in model.named_parameters()] == [
        "0.weight", "0.bias", "1.1.weight", "1.1.bias"]
    from lucid.models.imgclf import resnet_18

    net = resnet_18(num_classes=10)
    assert all(p.name == n for n, p in net.named_parameters())
    assert all(b.name == n for n, b in net.named_buffers())
    own = nn.Parameter(lucid.zeros(2))
    own.name = "my_scale"
    holder = nn.Module()
    holder.scale = own
    assert own.name == "my_scale"  # a name the user chose is kept


def test_errors_name_the_tensor():
    a = lucid.Tensor(np.ones(2), name="a")
    b = lucid.Tensor(np.ones(2), name="b", device="gpu")
    with pytest.raises(RuntimeError, match=r"'a' \(2,\) on 'cpu', 'b' \(2,\) on 'gpu'"):
        lucid.add(a, b)
    w = lucid.Tensor([1.0, 2.0], requires_grad=True, name="w")
    y = (w * w).sum()
    w.data[0] = 5.0
    w._version += 1
    with pytest.raises(RuntimeError, match=r"input 0 \('w', shape \(2,\)\) was modified"):
        y.backward()


def test_nodes_show_names_and_unnamed_leaves_say_what_they_are():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    w = lucid.Tensor([3.0, 4.0], requires_grad=True, name="w")
    with lucid.count_flops():
        y = (x * w * 2.0).sum()
    labels = _labels(lucid_viz.draw(y).dot())
    firsts = {k: v.split("\\n")[0] for k, v in labels.items()}
    assert firsts == {"n0": "input n0", "n1": "w", "n2": "Mul n2", "n3": "constant n3",
                      "n4": "Mul n4", "n5": "Sum n5 (output)"}
    stepper = step_backward(y)
    assert {stepper.names[k] for k in firsts} == {"input n0", "w", "Mul n2", "constant n3",
                                                   "Mul n4", "Sum n5"}
    assert any(line.startswith("  -> w (input 1)") for k in range(1, len(stepper) + 1)
               for line in stepper.frame_text(k).splitlines())


# -- values and gradients on the nodes --------------------------------------------------------

def test_the_micrograd_neuron_shows_every_value_and_gradient():
    o, (x1, x2, w1, w2, b, n) = _neuron()
    o.backward(keep_grad=True)
    drawing = lucid_viz.draw(o, rankdir="LR", show=("data", "grad"))
    labels = _labels(drawing.dot())
    # micrograd draws 10 values and 5 op nodes; Lucid's ops are nodes with values: 10 in all
    assert len(labels) == 10 <= 15
    by_first = {v.split("\\n")[0]: v.split("\\n")[1:] for v in labels.values()}
    assert by_first["x1"] == ["data 2", "grad -1.5"]
    assert by_first["w1"] == ["data -3", "grad 1"]
    assert by_first["x2"] == ["data 0", "grad 0.5"]
    assert by_first["w2"] == ["data 1", "grad 0"]
    assert by_first["b"] == ["data 6.881", "grad 0.5"]
    assert by_first["n = Add"] == ["data 0.8814", "grad 0.5"]
    assert by_first["o = Tanh (output)"] == ["data 0.7071", "grad 1"]
    assert by_first["Mul n2"] == ["data -6", "grad 0.5"]
    # values checked against NumPy, not just copied
    z = 2.0 * -3.0 + 0.0 * 1.0 + 6.8813735870195432
    assert f"{np.tanh(z):.4g}" == "0.7071" and f"{1 - np.tanh(z) ** 2:.4g}" == "0.5"


def test_gradients_while_the_graph_is_alive_come_from_one_walk_that_writes_no_grad():
    o, tensors = _neuron()
    labels = _labels(lucid_viz.draw(o, show=("grad",)).dot())
    assert "grad -1.5" in labels["n0"] and "grad 0.5" in labels["n8"]
    assert all(t.grad is None for t in tensors)
    o.backward()  # the graph is still usable
    assert float(tensors[0].grad) == pytest.approx(-1.5)
    # after a plain backward the graph is released: leaves show .grad, the rest say so
    labels = _labels(lucid_viz.draw(o, show=("grad",)).dot())
    assert "grad -1.5" in labels["n0"] and "grad freed by backward()" in labels["n8"]
    # and the title names the fix, in a student's words
    dot = lucid_viz.draw(o, show=("grad",)).dot()
    assert "backward(keep_grad=True), or draw before backward()" in _title(dot).replace("\\n", " ")


def test_large_tensors_show_a_summary_and_show_is_checked():
    lucid.random.seed(0)
    x = lucid.random.randn(4, 5, requires_grad=True)
    y = (x * 2.0).sum()
    label = _labels(lucid_viz.draw(y, show=("data", "shape", "device", "bytes")).dot())["n0"]
    a = x.numpy()
    assert f"data mean {a.mean():.4g} std {a.std():.4g}" in label
    assert f"min {a.min():.4g} max {a.max():.4g}" in label
    assert "(4,5)" in label and "on cpu" in label and "160 bytes" in label
    with pytest.raises(ValueError, match=r"^draw: show may hold .*got 'value'"):  # public call
        lucid_viz.draw(y, show=("value",))


# -- broadcasting in backward -------------------------------------------------------------

def test_summed_axes():
    assert summed_axes((), (2,)) == (0,)
    assert summed_axes((3, 1), (3, 4)) == (1,)
    assert summed_axes((4,), (2, 3, 4)) == (0, 1)
    assert summed_axes((1, 4), (2, 3, 4)) == (0, 1)
    assert summed_axes((2, 3), (2, 3)) == ()


def test_trace_records_the_broadcast_and_the_stepper_explains_it():
    x = lucid.Tensor([0.5, -1.0], name="x")
    w = lucid.Tensor([0.8, 0.3], requires_grad=True, name="w")
    b = lucid.Tensor(0.1, requires_grad=True, name="b")
    loss = lucid.tanh(w * x + b).sum()
    graph = trace(loss)
    broadcast = [e for e in graph.edges if e.broadcast]
    assert [(graph.node(e.src).name, e.summed) for e in broadcast] == [("b", (0,))]
    stepper = step_backward(loss)
    add = next(f for f in stepper.frames if f.op == "Add")
    to_b = add.grads_out[1]
    z = np.array([0.8 * 0.5 + 0.1, 0.3 * -1.0 + 0.1])
    per_copy = 1 - np.tanh(z) ** 2
    assert to_b.summed == (0,) and to_b.before.shape == (2,) and to_b.grad.shape == ()
    np.testing.assert_allclose(to_b.before.values, per_copy, rtol=1e-12)
    assert to_b.grad.values == pytest.approx(per_copy.sum(), rel=1e-12)
    text = to_b.text()
    assert text.startswith("sum over axis 0: (2,) → (): [0.7864, 0.961] → 1.747 = 0.7864 + 0.961")
    assert "broadcast" in text


# -- text that fits ------------------------------------------------------------------------

def test_every_text_fits_the_picture_in_a_wide_font():
    if graphviz_bin.find_dot() is None:
        pytest.skip("no Graphviz dot")
    o, _ = _neuron()
    with lucid.count_flops():
        y = lucid.tanh(o * 2.0)
    title = "A title much longer than this small graph is wide, " * 3
    svg = lucid_viz.draw(y, title=title).svg()
    view = [float(v) for v in re.search(r'viewBox="([-\d. ]+)"', svg)[1].split()]
    for left, right, text in text_extents(svg):
        assert view[0] <= left and right <= view[0] + view[2], text
    assert max(len(t) for _, _, t in text_extents(svg)) <= 60  # titles wrap
    for size in re.findall(r'font-size="([\d.]+)"', svg):
        assert float(size) >= 11  # pt: readable from the back of the room


def test_fit_text_widens_a_canvas_that_clips():
    svg = ('<svg width="100pt" height="50pt"\n viewBox="0.00 0.00 100.00 50.00" x="1">'
           '<g id="graph0" class="graph" transform="scale(1 1) rotate(0) translate(4 46)">'
           '<text text-anchor="middle" x="46" y="-30" font-size="14.00">'
           'a title far wider than the picture</text></g></svg>')
    fitted = fit_text(svg)
    (left, right, _), = text_extents(fitted)
    view = [float(v) for v in re.search(r'viewBox="([-\d. ]+)"', fitted)[1].split()]
    assert view[0] <= left and right <= view[0] + view[2]
    assert fit_text(fitted) == fitted  # already fits: unchanged


def test_cluster_labels_are_drawn_over_the_edges_that_cross_them():
    if graphviz_bin.find_dot() is None:
        pytest.skip("no Graphviz dot")
    model = nn.Sequential(nn.Linear(4, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 2)))
    svg = lucid_viz.draw(model, lucid.zeros(2, 4)).svg()  # op by op: modules are clusters
    last_edge = svg.rfind('class="edge"')
    for label in ("0 (Linear)", "1 (Sequential)", "1.1 (Linear)"):
        at = svg.rfind(f">{label}</text>")
        assert at > last_edge, label  # drawn again after every edge ...
        backing = svg.rfind("<rect", 0, at)
        assert backing > last_edge and 'fill="white"' in svg[backing:at]  # ... on white

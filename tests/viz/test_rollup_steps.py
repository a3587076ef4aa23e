"""Recurrent layers in a drawing: one cluster per time step, identical steps rolled up into one
("LSTM step × T") with their total FLOPs, labelled edges in and out, and ``rollup=False`` for
every step; a cell called in a loop rolls up the same way."""

from __future__ import annotations

import html
import re

import pytest

import lucid
from lucid import nn
from lucid_viz import draw as draw_fitted
from lucid_viz import graphviz_bin, trace
from lucid_viz.dot import sum_cost
from lucid_viz.magic import count_source
from lucid_viz.view import build_view
from tests.viz.test_render import clusters, edges, nodes, title

needs_dot = pytest.mark.skipif(graphviz_bin.find_dot() is None,
                               reason="no Graphviz here (pip install graphviz-pure)")

_CLUSTER = re.compile(r'subgraph "cluster_([^"]+)" \{\n\s*label="((?:[^"\\]|\\.)*)"')


def cluster_labels(dot: str) -> dict[str, str]:
    return {m[1]: m[2].replace("\\n", "\n") for m in _CLUSTER.finditer(dot)
            if m[1] != "legend"}


def draw(*args, **options):
    """The view asked for: these tests read how steps roll up, not how a picture is then
    laid out to fit the page (tests/viz/test_fit.py)."""
    return draw_fitted(*args, fit=options.pop("fit", False), **options)


def node_label(dot: str, node_id: str) -> str:
    return nodes(dot)[node_id][0]


class Tagger(nn.Module):
    """An LSTM over the sequence and a linear head on its last output."""

    def __init__(self, device: str = "cpu") -> None:
        super().__init__()
        self.lstm = nn.LSTM(3, 4, device=device)
        self.fc = nn.Linear(4, 2, device=device)

    def forward(self, x):
        out, _ = self.lstm(x)
        return self.fc(out[-1])


def tagger(steps: int, device: str = "cpu"):
    lucid.random.seed(0)
    return Tagger(device), lucid.random.rand((steps, 2, 3)).to(device)


def stepped(graph, t=None):
    return [n for n in graph.nodes if n.step is not None and (t is None or n.step.t == t)]


# -- the graph model: every op keeps its time step ------------------------------------------

def test_each_op_of_a_step_carries_its_step_and_the_graph_keeps_every_op():
    model, x = tagger(6)
    graph = trace(model, x)
    ops = stepped(graph)
    assert {(n.step.module, n.step.call, n.step.loop) for n in ops} == {("lstm", 1, "")}
    assert sorted({n.step.t for n in ops}) == list(range(6))
    assert all(n.step.n == n.step.t for n in ops)  # a forward loop runs t = 0, 1, ...
    per_step = len(stepped(graph, 0))
    assert per_step >= 1 and all(len(stepped(graph, t)) == per_step for t in range(6))
    assert [n.op for n in stepped(graph, 0)] == [n.op for n in stepped(graph, 5)]
    # the ops before and after the loop are the layer's, in no step
    outside = [n for n in graph.nodes if n.module == "lstm" and n.step is None]
    assert {"Linear", "Stack"} <= {n.op for n in outside}
    assert all(n.call in (0, 1) for n in graph.nodes)  # each module ran once


def test_the_magic_counts_every_step():
    model, x = tagger(6)
    report, _ = count_source("y = model(x)", {"model": model, "x": x})
    ops = {row.op: row.count for row in report.ops}
    assert ops["LSTMStep"] == 6 and ops["Linear"] == 2  # one per step (W_hh h and the gates);
    # W_ih x once for all steps, and the tagger's head


# -- rolled up (the default) and unrolled ----------------------------------------------------

@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_an_lstm_rolls_its_steps_up_into_one_cluster(device):
    model, x = tagger(6, device)
    graph = trace(model, x)
    dot = draw(model, x).dot()
    labels = cluster_labels(dot)
    assert list(labels) == ["lstm", "lstm.step t=0", "fc"]
    head, span, total = labels["lstm.step t=0"].split("\n")
    assert (head, span) == ("LSTM step × 6", "t = 0 ... 5, one step drawn")
    # the rolled-up cluster's count is the total over all six steps, and says so
    assert total == "total of 6 steps: " + sum_cost(stepped(graph)).text()
    one = sum_cost(stepped(graph, 0))
    assert sum_cost(stepped(graph)).macs == 6 * one.macs and one.macs > 0
    # one step is drawn: every other step's nodes are drawn by their counterparts
    per_step = len(stepped(graph, 0))
    assert len(nodes(dot)) == len(graph.nodes) - 5 * per_step
    assert title(dot).endswith(f"drawn as {len(nodes(dot))}")


def test_a_32_step_lstm_is_drawn_as_small_as_a_one_step_one():
    model, x = tagger(32)
    long = draw(model, x).dot()
    model, x = tagger(1)
    short = draw(model, x).dot()
    assert len(nodes(long)) == len(nodes(short))
    assert cluster_labels(short)["lstm.step t=0"].startswith("LSTM step t=0\n")
    assert cluster_labels(long)["lstm.step t=0"].startswith("LSTM step × 32\n")


def test_edges_into_and_out_of_the_roll_up_say_which_steps_they_carry():
    model, x = tagger(6)
    graph = trace(model, x)
    dot = draw(model, x).dot()
    drawn = edges(dot)
    by_name = {n.name: n.id for n in graph.nodes if n.name}
    rolled = {n.id for n in stepped(graph, 0)}  # step 0 is the one drawn
    # a parameter feeds every step
    w_hh = [(a, b) for a, b in drawn if a == by_name["lstm.weight_hh_l0"]]
    assert len(w_hh) == 1 and w_hh[0][1] in rolled
    # (said on the parameter, not on its edge: edge labels side by side ran into each other)
    assert drawn[w_hh[0]] == ""
    assert node_label(dot, w_hh[0][0]).endswith("\n→ every step (× 6)")
    # the sequence's projection feeds every step, every step's h goes to the stacked output
    stack = [n.id for n in graph.nodes if n.op == "Stack"][-1]  # (the first stacks h0 and c0)
    into_stack = [(a, b) for a, b in drawn if b == stack]
    assert [drawn[e] for e in into_stack] == [' [label=" every step (× 6)"]']
    # the initial state (h0 and c0 stacked) feeds the first step only
    first = [(a, b) for a, b in drawn if "→ first step" in node_label(dot, a)]
    assert len(first) == 1 and all(b in rolled and a not in rolled for a, b in first)
    # the state (h and c) goes on to the next step: a dashed edge inside the drawn step, not
    # ranking it
    nxt = {e: attrs for e, attrs in drawn.items() if "next step" in attrs}
    assert len(nxt) == 1 and all(a in rolled and b in rolled for a, b in nxt)
    assert all('style="dashed", constraint="false"' in attrs for attrs in nxt.values())


def test_every_graph_node_is_drawn_by_some_node_of_the_view():
    model, x = tagger(6)
    graph = trace(model, x)
    view, _ = build_view(graph, None, depth=None, max_nodes=None, rollup=True)
    assert set(view.where) == {n.id for n in graph.nodes}
    for s in view.shown.values():  # a rolled-up node stands for the same op at every step
        assert len({graph.node(m).op for m in s.members}) == 1
        assert len(s.members) in (1, 6)


def test_rollup_false_draws_every_step():
    model, x = tagger(6)
    graph = trace(model, x)
    dot = draw(model, x, rollup=False, max_nodes=None).dot()
    labels = cluster_labels(dot)
    assert [k for k in labels if "step" in k] == [f"lstm.step t={t}" for t in range(6)]
    for t in range(6):
        assert labels[f"lstm.step t={t}"] == ("LSTM step t=" + str(t) + "\n"
                                              + sum_cost(stepped(graph, t)).text())
    assert len(nodes(dot)) == len(graph.nodes)
    assert "×" not in dot and "next step" not in dot


def test_a_layer_box_counts_its_time_steps():
    model, x = tagger(6)
    drawn = nodes(draw(model, x, depth=1).dot())
    assert drawn["m:lstm"][0].startswith("lstm (LSTM)\n(6,2,4) Float64\n6 time steps\n")


def test_stacked_bidirectional_layers_roll_each_loop_up():
    lucid.random.seed(0)
    gru = nn.GRU(3, 4, num_layers=2, bidirectional=True)
    x = lucid.random.rand((5, 2, 3))
    dot = draw(gru, x).dot()  # the layer itself: it returns (output, h_n)
    assert "the graph of output[0] of the 2 values the\nmodel returned" in title(dot)
    heads = sorted(label.split("\n")[:2] for label in cluster_labels(dot).values())
    assert heads == [["GRU layer 0 forward step × 5", "t = 0 ... 4, one step drawn"],
                     ["GRU layer 0 reverse step × 5", "t = 4 ... 0, one step drawn"],
                     ["GRU layer 1 forward step × 5", "t = 0 ... 4, one step drawn"],
                     ["GRU layer 1 reverse step × 5", "t = 4 ... 0, one step drawn"]]


def test_padded_steps_roll_up_too_and_a_function_names_its_layer_by_class():
    lucid.random.seed(0)
    lstm = nn.LSTM(3, 4)
    x = lucid.random.rand((5, 2, 3))
    dot = draw(lambda x: lstm(x, lengths=[5, 3])[0], x).dot()
    labels = cluster_labels(dot)
    assert labels["LSTM"].startswith("LSTM (LSTM)\n")
    # every step keeps or updates the whole state (h and c together) the same way: one roll-up
    assert labels["LSTM.step t=0"].startswith("LSTM step × 5\nt = 0 ... 4, one step drawn\n")


# -- a cell called in a loop -----------------------------------------------------------------

class Loop(nn.Module):
    """A GRU written by hand: one GRUCell called once per time step."""

    def __init__(self, zero_state: bool) -> None:
        super().__init__()
        self.cell = nn.GRUCell(3, 4)
        self.zero_state = zero_state

    def forward(self, x):
        h = lucid.zeros(x.shape[1], 4) if self.zero_state else None
        for t in range(x.shape[0]):
            h = self.cell(x[t], h)
        return h


def loop(zero_state: bool = True):
    lucid.random.seed(0)
    return Loop(zero_state), lucid.random.rand((8, 2, 3))


def test_a_cell_called_in_a_loop_rolls_its_calls_up():
    model, x = loop()
    graph = trace(model, x)
    assert sorted({n.call for n in graph.nodes if n.module == "cell"}) == list(range(1, 9))
    dot = draw(model, x).dot()
    labels = cluster_labels(dot)
    assert list(labels) == ["cell", "cell#1"]  # the weights, and the drawn call
    assert labels["cell"] == "cell (GRUCell)"  # (weights only: no count)
    head, span, total = labels["cell#1"].split("\n")
    assert (head, span) == ("cell (GRUCell) × 8 calls", "calls 1 ... 8, one drawn")
    ops = [n for n in graph.nodes if n.module == "cell"]
    assert total == "total of 8 calls: " + sum_cost(ops).text()
    drawn = edges(dot)
    # x[t], sliced outside the cell for call t, rolls up with the calls
    x_id = next(n.id for n in graph.nodes if n.role == "input" and n.shape == (8, 2, 3))
    assert [attrs for (a, _), attrs in drawn.items() if a == x_id] == [""]
    assert node_label(dot, x_id).endswith("\n→ every call (× 8)")
    assert sum("next call" in attrs for attrs in drawn.values()) == 2  # h feeds two ops
    # the output is the last call's: drawn by its counterpart, which says so
    out = [label for label, attrs in nodes(dot).values() if 'peripheries="2"' in attrs]
    assert len(out) == 1 and out[0].endswith("\n(the output: at the last call)")
    constants = [n for n in graph.nodes if n.role == "constant"]  # the 1 in 1 - z, one a call
    assert len(constants) == 8
    per_call = len([n for n in ops if n.call == 1]) + 2  # with its x[t] and its constant
    assert len(nodes(dot)) == len(graph.nodes) - 7 * per_call


def test_a_first_call_that_differs_is_drawn_apart():
    model, x = loop(zero_state=False)  # call 1 makes the zero state itself
    labels = cluster_labels(draw(model, x).dot())
    assert labels["cell#1"].startswith("cell (GRUCell) (call 1)\n")
    assert labels["cell#2"].startswith("cell (GRUCell) × 7 calls\ncalls 2 ... 8, one drawn\n")
    drawn = nodes(draw(model, x, depth=1).dot())
    assert drawn["m:cell"][0].split("\n")[::2][:2] == ["cell (GRUCell)", "8 calls"]


class Twice(nn.Module):
    def __init__(self, between: bool) -> None:
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.between = between

    def forward(self, x):
        h = self.fc(x)
        if self.between:
            h = lucid.tanh(h) * 2.0
        return self.fc(h)


def test_only_calls_that_feed_each_other_roll_up():
    lucid.random.seed(0)
    x = lucid.random.rand((2, 4))
    chained = cluster_labels(draw(Twice(between=False), x).dot())
    assert chained["fc#1"].startswith("fc (Linear) × 2 calls\n")
    # ops between the two calls: rolled up, an edge would run back up the page
    apart = cluster_labels(draw(Twice(between=True), x).dot())
    assert apart["fc#1"].startswith("fc (Linear) (call 1)\n")
    assert apart["fc#2"].startswith("fc (Linear) (call 2)\n")


# -- other renderers -------------------------------------------------------------------------

def test_mermaid_shows_the_same_roll_up():
    model, x = tagger(6)
    text = draw(model, x).to_mermaid()
    assert "LSTM step × 6<br/>t = 0 ... 5, one step drawn<br/>total of 6 steps: " in text
    assert re.search(r' -->\|"every step \(× 6\)"\| ', text)
    assert len(re.findall(r' -\.->\|"next step"\| ', text)) == 1


@needs_dot
def test_the_rolled_up_drawing_renders_as_svg():
    model, x = tagger(32)
    svg = html.unescape(draw(model, x).svg())
    assert "LSTM step × 32" in svg and "total of 32 steps: " in svg
    assert "→ every step (× 32)" in svg and "next step" in svg
    full = html.unescape(draw(model, x, rollup=False, max_nodes=None).svg())
    assert all(f"LSTM step t={t}" in full for t in (0, 17, 31)) and "×" not in full
    assert clusters(draw(model, x).dot()) == ["lstm", "lstm.step t=0", "fc"]

"""The DOT writer: a view of the graph model as Graphviz DOT text.

``to_dot(graph)`` turns a :class:`lucid_viz.graph.Graph` into DOT text.  What the picture shows:

* **Nodes** -- an op with its output shape, logical dtype and FLOPs; a parameter or buffer by
  its module path (``layer1.0.conv1.weight``); inputs and constants.
* **Devices** -- fill colours from a cpu palette (blues) and a gpu palette (oranges), a legend,
  and an edge where data moves between devices drawn bold and dashed with a ``→ gpu`` label.
* **Counts** -- per node and in total in the title, in honest units: MACs (multiply-adds) for
  matmul, linear layers and convolutions, FLOPs for every other op (one per element
  operation); ``flops_unit="FLOPs"`` shows everything in FLOPs (a multiply-add is 2).  The
  convention is stated once, in the legend.

Which nodes are drawn, and grouped how (clusters, collapsed modules, roll-ups, the node-count
guard), is the view's business (:mod:`lucid_viz.view`); this module only writes it out.  The
output is a pure function of the graph and the options: ids come from the graph model (``n0``,
``n1`` ... and module paths), never from memory addresses, so the same seeded run gives the
same DOT text byte for byte.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from lucid.backends import get_backend
from lucid.cost import Cost, check_unit
from lucid.shapes import fmt
from lucid_viz.graph import Edge, Graph, Node
from lucid_viz.values import value_lines
from lucid_viz.view import DEFAULT_MAX_NODES, ModuleInfo, _Shown, _View, build_view

__all__ = ["PALETTES", "COMMUNICATION", "HIGHLIGHT", "CROSS_DEVICE", "sum_cost", "to_dot"]

# Fill colours per device and role group; ``line`` is the border.  Lower-case hex: that is how
# Graphviz writes them into the SVG.
PALETTES: dict[str, dict[str, str]] = {
    "cpu": {"op": "#cfe2f3", "parameter": "#9fc5e8", "data": "#eef5fc", "module": "#b7d4ef",
            "line": "#3d6fa6"},
    "gpu": {"op": "#fde3c8", "parameter": "#f9c08f", "data": "#fff4e8", "module": "#f8c99a",
            "line": "#b8651b"},
}
_OTHER = {"op": "#e6e6e6", "parameter": "#cccccc", "data": "#f5f5f5", "module": "#d9d9d9",
          "line": "#666666"}
#: a collective (all-reduce, all-gather, DDP's gradient sync): data leaves the process there
COMMUNICATION = {"fill": "#d9ead3", "line": "#38761d"}
HIGHLIGHT = "#d62728"  # default colour of highlighted nodes and edges (the backward stepper)
CROSS_DEVICE = "#7b3294"  # an edge along which data is copied to another device
FONT_PT = 11  # node text (pt): readable from the back of a lecture hall
_ROLE_GROUP = {"intermediate": "op", "output": "op", "parameter": "parameter",
               "buffer": "parameter", "input": "data", "constant": "data"}

# -- labels ------------------------------------------------------------------------------

def _q(text: str) -> str:
    """A DOT double-quoted string (``\\n`` breaks a line)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _shape(shape: tuple[int, ...]) -> str:
    return "scalar" if shape == () else fmt(shape)


def _cost_text(cost: Cost | None, unit: str) -> str:
    return "not counted" if cost is None else cost.text(unit)


def sum_cost(nodes: Iterable[Node], backward: bool = False) -> Cost | None:
    """The summed count of the ops among ``nodes``; None when none of them was counted."""
    costs = [n.cost(backward) for n in nodes if not n.is_leaf]
    counted = [c for c in costs if c is not None]
    if costs and not counted:
        return None
    total = Cost()
    for c in counted:
        total = total + c
    return total


#: what a node may show (``show=``); every node also names itself on its first line
SHOW = ("name", "shape", "dtype", "device", "flops", "bytes", "data", "grad")
DEFAULT_SHOW = ("name", "shape", "dtype", "flops")


@dataclass(frozen=True)
class _Opts:
    unit: str  # "MACs" (multiply-adds as MACs, the rest as FLOPs) or "FLOPs"
    backward: bool
    types: Mapping[str, str]
    counted: bool = True  # the graph was recorded under count_flops (else no count lines)
    show: tuple[str, ...] = DEFAULT_SHOW
    grads: Mapping[str, Any] | None = None  # node id -> dL/dnode (when "grad" is shown)


def check_show(show: Any, where: str) -> tuple[str, ...]:
    """``show`` as a tuple of :data:`SHOW` entries, else a clear error naming ``where``."""
    if isinstance(show, str):
        show = (show,)
    show = tuple(show)
    unknown = [s for s in show if s not in SHOW]
    if unknown:
        raise ValueError(f"{where}: show may hold {', '.join(map(repr, SHOW))}; got "
                         f"{', '.join(map(repr, unknown))}")
    return show


def options(graph: Graph, flops_unit: str, backward: bool, modules: ModuleInfo | None,
            where: str, show: Any = DEFAULT_SHOW) -> _Opts:
    """The label options of a picture of ``graph`` (``where`` names the caller in errors)."""
    ops = [n for n in graph.nodes if not n.is_leaf]
    show = check_show(show, where)
    return _Opts(check_unit(flops_unit, f"{where}: flops_unit"), backward,
                 dict(modules.types) if modules is not None else {},
                 counted=not ops or any(n.flops is not None for n in ops), show=show,
                 grads=graph.grads() if "grad" in show else None)


def _values(graph: Graph, node_id: str) -> Any:
    try:
        return graph.tensor(node_id).numpy()
    except KeyError:  # a graph model without its live tensors
        return None


def _first_line(n: Node, o: _Opts) -> str:
    """The node's name (or what it is and its id), as tables about the graph call it."""
    if n.is_leaf:
        head = n.title
        if n.role == "buffer":
            head += " (buffer)"
        elif n.role == "parameter" and not n.requires_grad:
            head += " (frozen)"
        return head
    head = f"{n.name} = {n.op}" if n.name is not None else n.title
    return head + (" (output)" if n.role == "output" else "")


def _node_label(graph: Graph, n: Node, o: _Opts, note: str | None) -> str:
    lines = [_first_line(n, o)]
    if n.traffic:
        lines.append(n.traffic)
    typed = " ".join(x for k, x in (("shape", _shape(n.shape)), ("dtype", n.dtype))
                     if k in o.show)
    if typed:
        lines.append(typed)
    if "device" in o.show:
        lines.append(f"on {n.device}")
    if "bytes" in o.show:
        lines.append(f"{n.bytes:,} bytes")
    small_constant = n.role == "constant" and all(d == 1 for d in n.shape)
    if "data" in o.show or small_constant:  # a constant 2 is drawn as its value
        values = _values(graph, n.id)
        if values is not None:
            lines += value_lines("data" if "data" in o.show else "value", values)
    if o.grads is not None and n.requires_grad:
        g = o.grads.get(n.id)
        lines += (["grad not kept"] if g is None else
                  value_lines("grad", get_backend(n.device).to_numpy(g)))
    if not n.is_leaf and o.counted and "flops" in o.show:
        lines.append(_cost_text(n.cost(), o.unit))
        if o.backward:
            lines.append("bwd " + _cost_text(n.cost(True), o.unit))
    if note:
        lines.append(note)
    return "\n".join(lines)


def _rolled_note(graph: Graph, view: _View, s: _Shown, notes: Mapping[str, str]) -> str | None:
    """A node's note; a rolled-up node that stands for the output says so."""
    note = notes.get(s.id)
    if graph.output in s.members and s.id != graph.output:
        unit = next((view.units[s.path[:k]] for k in range(len(s.path), 0, -1)
                     if s.path[:k] in view.units), None)
        what = unit.what if unit is not None else "step"
        note = "\n".join(x for x in (note, f"(the output: this op at the last {what})") if x)
    return note


def _repeats(nodes: list[Node], path: str) -> str | None:
    """What a box says about repeats: "32 time steps" for a recurrent layer, "8 calls" for
    a layer called 8 times; None for neither."""
    loops: dict[tuple, set[int]] = defaultdict(set)
    for n in nodes:
        if n.step is not None:
            loops[(n.step.module, n.step.call, n.step.loop)].add(n.step.t)
    if loops:
        counts = sorted({len(ts) for ts in loops.values()})
        steps = f"{counts[0]:,} time steps" if len(counts) == 1 else "time steps"
        return steps if len(loops) == 1 else f"{len(loops)} loops of {steps}"
    calls = {n.call for n in nodes if not n.is_leaf and n.module == path}
    return f"{len(calls):,} calls" if len(calls) > 1 else None


def _box_label(graph: Graph, s: _Shown, o: _Opts, out: Node) -> str:
    nodes = [graph.node(m) for m in s.members]
    path = ".".join(s.path)
    kind = o.types.get(path)
    if s.kind == "roll":
        lines = [f"{kind or 'block'} × {s.count}", f"{path} ... {s.last_path}"]
    elif s.kind == "rest":
        lines = [f"... {len(nodes)} more nodes"]
    else:
        call = f" (call {s.id.rsplit('#', 1)[1]})" if "#" in s.id else ""
        lines = [path + (f" ({kind})" if kind else "") + call]
    lines.append(f"{_shape(out.shape)} {out.dtype}")
    repeats = _repeats(nodes, path) if s.kind == "box" else None
    if repeats:
        lines.append(repeats)
    if o.counted:
        lines.append(_cost_text(sum_cost(nodes), o.unit))
        if o.backward:
            lines.append("bwd " + _cost_text(sum_cost(nodes, True), o.unit))
    n_params = sum(_numel(n.shape) for n in nodes if n.role == "parameter")
    if n_params:
        lines.append(f"{n_params:,} params")
    devices = sorted({n.device for n in nodes})
    if len(devices) > 1:
        lines.append("devices: " + ", ".join(devices))
    return "\n".join(lines)


def _numel(shape: tuple[int, ...]) -> int:
    size = 1
    for d in shape:
        size *= d
    return size


# -- DOT -----------------------------------------------------------------------------------

def _normalise_nodes(h: Iterable[str] | Mapping[str, str]) -> dict[str, str]:
    if isinstance(h, str):  # one id, not its characters
        h = [h]
    if isinstance(h, Mapping):
        return {str(k): str(v) for k, v in h.items()}
    return {str(k): HIGHLIGHT for k in h}


def _edge_key(e: Any) -> tuple[str, str]:
    if isinstance(e, Edge):
        return e.src, e.dst
    src, dst = e
    return str(src), str(dst)


def _normalise_edges(h: Iterable[Any] | Mapping[Any, str]) -> dict[tuple[str, str], str]:
    if isinstance(h, Edge) or (isinstance(h, tuple) and len(h) == 2
                               and all(isinstance(x, str) for x in h)):
        h = [h]  # one edge
    if isinstance(h, Mapping):
        return {_edge_key(k): str(v) for k, v in h.items()}
    return {_edge_key(k): HIGHLIGHT for k in h}


def to_dot(
    graph: Graph,
    *,
    depth: int | None = None,
    max_nodes: int | None = DEFAULT_MAX_NODES,
    highlight_nodes: Iterable[str] | Mapping[str, str] = (),
    highlight_edges: Iterable[Any] | Mapping[Any, str] = (),
    notes: Mapping[str, str] | None = None,
    key: Iterable[tuple[str, str]] = (),
    flops_unit: str = "MACs",
    backward: bool = False,
    show: Any = DEFAULT_SHOW,
    title: str | None = None,
    legend: bool | str = True,
    rollup: bool = True,
    rankdir: str = "TB",
    modules: ModuleInfo | None = None,
) -> str:
    """The DOT text of ``graph``; deterministic for a given graph and options.

    ``depth``: ``None`` draws every op, each module as a cluster; ``depth=k`` (k >= 1) draws
    the modules ``k`` levels down (``layer1`` is level 1, ``layer1.0`` level 2), and layers
    (modules without sub-modules) above that level, as one box each with summed FLOPs; the
    modules above are clusters, and ops written in a container's own ``forward`` (a residual
    add) stay visible inside it.  Chains of identical sibling boxes roll up into one
    "Kind × n" box (``rollup=False`` keeps them apart).  A layer called twice (a shared ReLU)
    becomes one box per call.

    Recurrent layers (``nn.RNN``/``LSTM``/``GRU``) draw each time step as a cluster ("LSTM
    step t=3"); the identical steps of a loop roll up into one drawn step, "LSTM step × 32",
    whose FLOPs line is the total over all its steps, with labelled edges into and out of it
    ("every step (× 32)", "first step") and a dashed "next step" edge for the state it hands
    on.  A cell called in a loop, each call fed by the one before, rolls up the same way
    ("cell (LSTMCell) × 32 calls").  ``rollup=False`` draws every step (with
    ``max_nodes=None`` for a long sequence, or the node guard collapses the layer).

    ``max_nodes`` (default 150; ``None`` turns the guard off): if the view has more drawn nodes,
    it collapses one module level at a time until it fits, and, if even one level is too many,
    keeps the nodes nearest the output and folds the rest into one box.  The title says so.

    ``highlight_nodes`` / ``highlight_edges`` -- the backward stepper's API, kept stable: the
    node ids of :class:`~lucid_viz.graph.Graph` (``"n12"``) to draw with a thick coloured
    border, and the edges, as ``(src, dst)`` id pairs or :class:`~lucid_viz.graph.Edge`
    objects, to draw thick and coloured.  Either may be a mapping to a colour
    (``{"n12": "#d62728"}``) instead of a plain collection (which uses :data:`HIGHLIGHT`).  A
    highlighted node inside a collapsed box highlights the box; an edge inside a box is not
    drawn.  ``notes`` adds one line under a node's label (``{"n12": "grad norm 0.31"}``).
    ``key`` explains colours in the legend: ``(colour, text)`` pairs (``("#d62728", "the node
    being processed")``; an entry whose text starts with "edge:" is drawn as an edge).
    ``legend``: True (devices, the key and the unit caption), False (none), or ``"key"`` (the
    key and the caption only: the backward stepper's frames).

    ``flops_unit``: ``"MACs"`` (multiply-adds of matmul/linear/conv as MACs, every other op in
    FLOPs) or ``"FLOPs"`` (everything in FLOPs, a multiply-add counted as 2; ``"2*MACs"`` is
    the same).  ``backward=True`` adds backward counts.

    ``show``: what each node shows besides its name (or what it is and its id: ``input n0``,
    ``Mul n2``, the same words the backward stepper's table uses), any of ``"name"``,
    ``"shape"``, ``"dtype"``, ``"device"``, ``"flops"``, ``"bytes"``, ``"data"``, ``"grad"``;
    default ``("name", "shape", "dtype", "flops")``.  ``"data"`` and ``"grad"`` show every
    value of a tensor of at most 8 elements, and mean, std, min and max of a larger one.
    Gradients are the tensors' ``.grad`` (every node's after ``backward(keep_grad=True)``),
    or, while the graph is alive, computed by one backward walk that writes no ``.grad``.

    ``modules`` (from
    :func:`trace_with_modules`) places ops run in a container's own ``forward`` and names
    module classes; without it they are inferred from the graph.
    """
    if depth is not None and (not isinstance(depth, int) or depth < 1):
        raise ValueError(f"to_dot: depth must be None (every op) or an int >= 1, got {depth!r}")
    if max_nodes is not None and max_nodes < 2:
        raise ValueError(f"to_dot: max_nodes must be None or at least 2, got {max_nodes!r}")
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"to_dot: rankdir must be TB, LR, BT or RL, got {rankdir!r}")
    o = options(graph, flops_unit, backward, modules, "to_dot", show)
    view, guard_note = build_view(graph, modules, depth=depth, max_nodes=max_nodes,
                                  rollup=rollup)
    consumers: dict[str, list[str]] = defaultdict(list)
    for e in graph.edges:
        consumers[e.src].append(e.dst)
    return _emit(graph, view, o, title, guard_note, legend, rankdir,
                 _normalise_nodes(highlight_nodes), _normalise_edges(highlight_edges),
                 notes or {}, consumers, list(key))


#: the longest line of a title before it wraps (characters): a title never sets the width
TITLE_WIDTH = 44


def wrap(text: str, width: int = TITLE_WIDTH) -> list[str]:
    """``text`` as lines of at most ``width`` characters, broken at spaces (each existing line
    break kept); a single word longer than ``width`` stays whole."""
    lines: list[str] = []
    for para in text.split("\n"):
        line = ""
        for word in para.split(" "):
            if line and len(line) + 1 + len(word) > width:
                lines.append(line)
                line = word
            else:
                line = f"{line} {word}" if line else word
        lines.append(line)
    return lines


def caption(unit: str, width: int = 30) -> str:
    """The unit convention, the picture's caption (in its legend), in lines of ``width``."""
    if unit == "FLOPs":
        sentences = ["FLOPs: one per element operation;",
                     "a multiply-add (matmul, linear, convolution) counts 2"]
    else:
        sentences = ["MACs: multiply-adds (matmul, linear, convolution);",
                     "FLOPs: every other operation"]
    return "\n".join(line for s in sentences for line in wrap(s, width))


def _title(graph: Graph, o: _Opts, title: str | None, guard_note: str | None,
           legend: bool, width: int = TITLE_WIDTH) -> str:
    ops = [n for n in graph.nodes if not n.is_leaf]
    lines = wrap(title or (o.types.get("") or "Lucid graph"), width)
    if graph.note:
        lines += wrap(graph.note, width)
    if not o.counted:
        if "flops" in o.show:
            lines += wrap("not counted: record the graph inside lucid.count_flops(), or "
                          "draw(model, input)", width)
    elif "flops" in o.show:
        lines += wrap("forward: " + _cost_text(sum_cost(graph.nodes), o.unit), width)
        if o.backward:
            lines += wrap("backward: " + _cost_text(sum_cost(graph.nodes, True), o.unit),
                          width)
        if not legend:  # the caption has no legend to sit in
            lines += wrap(caption(o.unit, 10**6).replace("\n", " "), width)
    uncounted = sorted({n.op for n in ops if n.flops is None})
    if uncounted and len(uncounted) < len({n.op for n in ops}):
        lines += wrap("not counted: " + ", ".join(uncounted), width)
    lines.append(f"{len(graph.nodes)} nodes, {len(ops)} ops")
    if guard_note:
        lines += wrap(guard_note, width)
    return "\n".join(lines)


def _emit(graph: Graph, view: _View, o: _Opts, title: str | None, guard_note: str | None,
          legend: bool, rankdir: str, hl_nodes: dict[str, str],
          hl_edges: dict[tuple[str, str], str], notes: Mapping[str, str],
          consumers: Mapping[str, list[str]], key: list[tuple[str, str]]) -> str:
    lines = [
        "digraph lucid {",
        f"  graph [rankdir={rankdir}, labelloc=t, fontname=\"Helvetica\", fontsize=14, "
        f"nodesep=0.3, ranksep=0.4, label={_q(_title(graph, o, title, guard_note, legend))}];",
        # the margin leaves room for fonts wider than Graphviz's estimate (DejaVu Sans)
        f'  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize={FONT_PT}, '
        'penwidth=1, margin="0.16,0.06"];',
        '  edge [color="#666666", arrowsize=0.7, fontname="Helvetica", fontsize=11];',
    ]
    devices_seen: dict[str, set[str]] = defaultdict(set)
    talks: list[bool] = []  # a collective was drawn: the legend names its colour

    def node_stmt(s: _Shown) -> str:
        highlight = next((hl_nodes[m] for m in s.members if m in hl_nodes), None)
        if s.kind == "node":
            n = graph.node(s.id)
            group = _ROLE_GROUP.get(n.role, "op")
            pal = PALETTES.get(n.device, _OTHER)
            devices_seen[n.device].add(group)
            attrs = {"label": _node_label(graph, n, o, _rolled_note(graph, view, s, notes)),
                     "fillcolor": pal[group], "color": pal["line"],
                     "tooltip": f"{n.id} in {'.'.join(s.path) or '(top level)'}"
                     + (f" (and {len(s.members) - 1} more, rolled up)"
                        if len(s.members) > 1 else "")}
            if n.traffic is not None:  # communication: coloured apart from the devices
                attrs.update(fillcolor=COMMUNICATION["fill"], color=COMMUNICATION["line"],
                             penwidth="2")
                talks.append(True)
            if group == "parameter":
                attrs["shape"] = "cylinder"
                attrs["style"] = "filled"
            elif n.role == "input":
                attrs["shape"] = "ellipse"
                attrs["style"] = "filled"
            elif n.role == "constant":
                attrs["shape"] = "ellipse"
                attrs["style"] = "filled,dashed"
            elif n.role == "output" or graph.output in s.members:
                attrs["peripheries"] = "2"
        else:
            member_set = set(s.members)
            out = box_output(graph, s, consumers)
            pal = PALETTES.get(out.device, _OTHER)
            devices_seen[out.device].add("module")
            attrs = {"label": _box_label(graph, s, o, out), "fillcolor": pal["module"],
                     "color": pal["line"], "shape": "box3d" if s.kind == "roll" else "box",
                     "style": "filled",
                     "tooltip": f"{s.id}: {len(s.members)} nodes"}
            if s.kind == "rest":
                attrs["style"] = "filled,dashed"
            if graph.output in member_set:
                attrs["peripheries"] = "2"
        if highlight:
            attrs["color"] = highlight
            attrs["penwidth"] = "3"
        return f"{_q(s.id)} [{_attrs(attrs)}];"

    # Clusters: a tree of module paths, children in order of first appearance.
    tree: dict[tuple[str, ...], list[Any]] = defaultdict(list)
    flops_in: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for s in view.shown.values():
        chain = s.path if s.kind == "node" else s.path[:-1]
        for i in range(len(chain)):
            parent, child = chain[:i], chain[:i + 1]
            if ("cluster", child) not in tree[parent]:
                tree[parent].append(("cluster", child))
        tree[chain].append(("shown", s))
        for i in range(1, len(chain) + 1):
            flops_in[chain[:i]].extend(s.members)

    def emit_cluster(path: tuple[str, ...], indent: str) -> None:
        for kind, item in tree[path]:
            if kind == "shown":
                lines.append(indent + node_stmt(item))
                continue
            name = ".".join(item)
            label = view.cluster_label(item, o.types)
            inside = [graph.node(m) for m in flops_in[item]]
            total = sum_cost(inside)
            if total is not None and o.counted and not all(n.is_leaf for n in inside):
                label += "\n" + view.count_prefix(item) + total.text(o.unit)
            lines.append(f"{indent}subgraph {_q('cluster_' + name)} {{")
            lines.append(f'{indent}  label={_q(label)}; style="rounded"; color="#9a9a9a"; '
                         f'fontsize=12; labeljust=l;')
            emit_cluster(item, indent + "  ")
            lines.append(indent + "}")

    emit_cluster((), "  ")

    # Edges between drawn nodes, once each, in graph order.
    drawn: dict[tuple[str, str], dict[str, Any]] = {}
    for e in graph.edges:
        a, b = view.where[e.src], view.where[e.dst]
        if a == b and (a, b) not in view.recurrent:
            continue
        info = drawn.setdefault((a, b), {"to": set(), "hl": None})
        src, dst = graph.node(e.src), graph.node(e.dst)
        if src.device != dst.device:
            info["to"].add(dst.device)
        if (e.src, e.dst) in hl_edges and info["hl"] is None:
            info["hl"] = hl_edges[(e.src, e.dst)]
    crossing = False
    for (a, b), info in drawn.items():
        attrs: dict[str, str] = {}
        words = view.edge_notes.get((a, b)) or view.recurrent.get((a, b))
        if words:  # into or out of a roll-up: which steps it carries
            attrs["label"] = " " + words
        if (a, b) in view.recurrent:  # back to the top of the rolled-up step: not a rank
            attrs.update(style="dashed", constraint="false")
        if info["to"]:
            crossing = True
            attrs.update(style="bold,dashed", color=CROSS_DEVICE, fontcolor=CROSS_DEVICE,
                         label=" → " + ", ".join(sorted(info["to"]))
                         + (f"; {words}" if words else ""))
        if info["hl"]:
            attrs.update(color=info["hl"], penwidth="2.5")
        lines.append(f"  {_q(a)} -> {_q(b)}" + (f" [{_attrs(attrs)}]" if attrs else "") + ";")

    if legend and devices_seen:
        lines.append('  subgraph "cluster_legend" {')
        lines.append('    label="legend"; style="rounded"; color="#bbbbbb"; fontsize=11;')
        names = {"op": "ops", "parameter": "parameters", "data": "inputs",
                 "module": "modules"}
        shapes = {"op": "box", "parameter": "cylinder", "data": "ellipse", "module": "box"}
        styles = {"op": "rounded,filled"}
        anchors: list[str] = []  # one per entry, stacked in one column (not one wide row)
        for device in sorted(devices_seen) if legend != "key" else ():
            pal = PALETTES.get(device, _OTHER)
            for group in ("op", "module", "parameter", "data"):
                if group in devices_seen[device]:
                    anchors.append(f"legend:{device}:{group}")
                    lines.append(f"    {_q(anchors[-1])} "
                                 f"[label={_q(f'{device} {names[group]}')}, "
                                 f"fillcolor=\"{pal[group]}\", color=\"{pal['line']}\", "
                                 f"shape={shapes[group]}, "
                                 f"style={_q(styles.get(group, 'filled'))}, fontsize=11];")
        if talks and legend != "key":
            anchors.append("legend:communication")
            lines.append(f'    "legend:communication" [label="communication between ranks", '
                         f'fillcolor="{COMMUNICATION["fill"]}", color="{COMMUNICATION["line"]}", '
                         'penwidth=2, shape=box, style="rounded,filled", fontsize=11];')
        edge_keys = [("legend:copy", "data copied to another device", CROSS_DEVICE,
                      "bold,dashed")] if crossing else []
        for i, (color, text) in enumerate(key):  # what the highlight colours mean
            if text.startswith("edge:"):
                edge_keys.append((f"legend:key{i}", text[5:].strip(), color, "solid"))
            else:
                anchors.append(f"legend:key{i}")
                lines.append(f'    "legend:key{i}" [label={_q(text)}, fillcolor="white", '
                             f'color="{color}", penwidth=3, shape=box, '
                             'style="rounded,filled", fontsize=11];')
        for name, text, color, style in edge_keys:  # a short coloured arrow and its words
            anchors.append(f"{name}:a")
            lines.append(f'    "{name}:a" [label="", shape=point, width=0.05];')
            lines.append(f'    "{name}:b" [label={_q(text)}, shape=plaintext, style=solid, '
                         'fontsize=11];')
            lines.append(f'    "{name}:a" -> "{name}:b" [color="{color}", style="{style}", '
                         'penwidth=2.5];')
            lines.append(f'    {{ rank=same; "{name}:a"; "{name}:b"; }}')
        if o.counted and "flops" in o.show:  # the unit convention, stated once
            anchors.append("legend:units")
            lines.append(f'    "legend:units" [label={_q(caption(o.unit))}, shape=plaintext, '
                         'style=solid, fontsize=11];')
        if rankdir in ("TB", "BT"):  # one column beside the graph, not one wide row
            for upper, lower in zip(anchors, anchors[1:]):
                lines.append(f'    {_q(upper)} -> {_q(lower)} [style=invis];')
        else:  # left to right, one rank is one column
            lines.append("    { rank=same; " + " ".join(f"{_q(a)};" for a in anchors) + " }")
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def box_output(graph: Graph, s: _Shown, consumers: Mapping[str, list[str]]) -> Node:
    """The node a module box stands for: its last member whose value leaves the box."""
    outs = [graph.node(m) for m in s.members]
    member_set = set(s.members)
    leaving = [n for n in outs if n.id == graph.output
               or any(c not in member_set for c in consumers.get(n.id, ()))]
    return (leaving or outs)[-1]


def _attrs(attrs: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={_q(v)}" for k, v in attrs.items())

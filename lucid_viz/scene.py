"""The scene: what a picture of the graph says, in words and kinds, before any file format.

:mod:`lucid_viz.view` decides which nodes are drawn (clusters, collapsed modules, roll-ups);
this module decides what each drawn thing says and how it looks -- the labels, the cluster
tree with its labels, the edges and their notes, the title and the legend -- and hands the
result, a :class:`Scene`, to the writers: :mod:`lucid_viz.dot` (Graphviz) and
:mod:`lucid_viz.mermaid`.  The writers only spell it out in their syntax, so the two pictures
always say the same.

What a picture shows:

* **Nodes** -- an op with its output shape, logical dtype and FLOPs; a parameter or buffer by
  its module path (``layer1.0.conv1.weight``); inputs and constants; with ``show=("data",
  "grad")`` the values and gradients.
* **Devices** -- fill colours from a cpu palette (blues) and a gpu palette (oranges); an edge
  where data moves between devices is drawn bold and dashed with a ``→ gpu`` label.
* **Counts** -- per node and in total in the title, in honest units: MACs (multiply-adds) for
  matmul, linear layers and convolutions, FLOPs for every other op; ``flops_unit="FLOPs"``
  shows everything in FLOPs (a multiply-add is 2).  The convention is stated once, in the
  legend.
* **The legend** -- one line under the picture, naming only what the picture has: the kinds of
  node drawn (with their device when there are several), copies between devices, the colours a
  caller explains (``key``), and the unit convention when counts are shown.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from lucid.backends import get_backend
from lucid.cost import Cost, check_unit
from lucid.shapes import fmt
from lucid_viz.graph import Edge, Graph, Node
from lucid_viz.values import value_lines
from lucid_viz.view import DEFAULT_MAX_NODES, ModuleInfo, _Shown, _View, build_view

__all__ = ["PALETTES", "COMMUNICATION", "HIGHLIGHT", "CROSS_DEVICE", "DEFAULT_SHOW", "SHOW",
           "Cluster", "Item", "Key", "Link", "Scene", "build_scene", "check_show", "sum_cost"]

# Fill colours per device and role group; ``line`` is the border.  Lower-case hex: that is how
# Graphviz writes them into the SVG.
PALETTES: dict[str, dict[str, str]] = {
    "cpu": {"op": "#cfe2f3", "parameter": "#9fc5e8", "data": "#eef5fc", "module": "#b7d4ef",
            "line": "#3d6fa6"},
    "gpu": {"op": "#fde3c8", "parameter": "#f9c08f", "data": "#fff4e8", "module": "#f8c99a",
            "line": "#b8651b"},
}
OTHER = {"op": "#e6e6e6", "parameter": "#cccccc", "data": "#f5f5f5", "module": "#d9d9d9",
         "rest": "#f2f2f2", "line": "#666666"}
#: a collective (all-reduce, all-gather, DDP's gradient sync): data leaves the process there
COMMUNICATION = {"fill": "#d9ead3", "line": "#38761d"}
HIGHLIGHT = "#d62728"  # default colour of highlighted nodes and edges (the backward stepper)
CROSS_DEVICE = "#7b3294"  # an edge along which data is copied to another device
ROLE_GROUP = {"intermediate": "op", "output": "op", "parameter": "parameter",
              "buffer": "parameter", "input": "data", "constant": "data"}
_GROUP_WORDS = {"op": "ops", "parameter": "parameters", "data": "inputs", "module": "modules"}

#: what a node may show (``show=``); every node also names itself on its first line
SHOW = ("name", "shape", "dtype", "device", "flops", "bytes", "data", "grad")
DEFAULT_SHOW = ("name", "shape", "dtype", "flops")
#: the longest line of a title before it wraps (characters): a title never sets the width
TITLE_WIDTH = 44
#: the longest line of the legend (characters) before it starts a second one
LEGEND_WIDTH = 80
#: what a node says when ``backward()`` freed its gradient
FREED = "grad freed by backward()"


# -- the scene -------------------------------------------------------------------------------

@dataclass(frozen=True)
class Item:
    """One drawn node: a graph node, a collapsed module box, a roll-up, or the folded rest."""

    id: str
    label: str
    group: str  # op | parameter | data | module | rest | communication: picks the fill colour
    device: str
    form: str  # op | parameter | input | constant | box | roll | rest: picks the shape
    output: bool  # it stands for the graph's output (drawn with a double border)
    tooltip: str
    highlight: str | None = None  # a border colour (the stepper's node at work)

    @property
    def fill(self) -> str:
        if self.group == "communication":
            return COMMUNICATION["fill"]
        return PALETTES.get(self.device, OTHER).get(self.group, OTHER["rest"])

    @property
    def line(self) -> str:
        if self.highlight is None and self.group == "communication":
            return COMMUNICATION["line"]
        return self.highlight or PALETTES.get(self.device, OTHER)["line"]


@dataclass
class Cluster:
    """A module (or a call, a time step, a roll-up of steps) drawn as a box around its items."""

    name: str  # "layer1.0", "lstm.step t=0"
    label: str
    items: list[Item | Cluster] = field(default_factory=list)


@dataclass(frozen=True)
class Link:
    """One drawn edge; ``kind`` is "data", "copy" (to another device) or "recurrent" (a
    rolled-up step handing its state to the next)."""

    src: str
    dst: str
    label: str = ""
    kind: str = "data"
    highlight: str | None = None


@dataclass(frozen=True)
class Key:
    """One legend entry: a ``fill`` swatch, a ``border`` swatch, an ``edge`` or plain ``text``."""

    kind: str
    colour: str
    line: str
    text: str


@dataclass
class Scene:
    title: str
    rankdir: str
    items: list[Item | Cluster]  # the top level
    links: list[Link]
    legend: list[Key]
    legend_width: int = LEGEND_WIDTH  # characters in a row of the legend


# -- counts and words ------------------------------------------------------------------------

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


def caption(unit: str, macs: bool = True) -> str:
    """The unit convention in one sentence; without multiply-adds in the graph, only FLOPs."""
    if not macs:
        return "FLOPs: one per element operation"
    if unit == "FLOPs":
        return "FLOPs: one per element operation; a multiply-add (matmul, linear, conv) is 2"
    return "MACs: multiply-adds (matmul, linear, conv); FLOPs: every other operation"


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


@dataclass(frozen=True)
class _Opts:
    unit: str  # "MACs" (multiply-adds as MACs, the rest as FLOPs) or "FLOPs"
    backward: bool
    types: Mapping[str, str]
    counted: bool = True  # the graph was recorded under count_flops (else no count lines)
    show: tuple[str, ...] = DEFAULT_SHOW
    grads: Mapping[str, Any] | None = None  # node id -> dL/dnode (when "grad" is shown)
    arrived: bool = False  # grads are those arrived so far (the stepper): missing = not yet

    @property
    def flops(self) -> bool:
        return self.counted and "flops" in self.show


def _opts(graph: Graph, flops_unit: str, backward: bool, modules: ModuleInfo | None,
          where: str, show: Any, grads: Mapping[str, Any] | None) -> _Opts:
    ops = [n for n in graph.nodes if not n.is_leaf]
    show = check_show(show, where)
    if grads is None and "grad" in show:
        grads = graph.grads()
        arrived = False
    else:
        arrived = grads is not None
    return _Opts(check_unit(flops_unit, f"{where}: flops_unit"), backward,
                 dict(modules.types) if modules is not None else {},
                 counted=not ops or any(n.flops is not None for n in ops), show=show,
                 grads=grads, arrived=arrived)


# -- labels ------------------------------------------------------------------------------

def _values(graph: Graph, node_id: str) -> Any:
    try:
        return graph.tensor(node_id).numpy()
    except KeyError:  # a graph model without its live tensors
        return None


def _first_line(n: Node) -> str:
    """The node's name (or what it is and its id), as tables about the graph call it."""
    if n.is_leaf:
        if n.role == "buffer":
            return n.title + " (buffer)"
        if n.role == "parameter" and not n.requires_grad:
            return n.title + " (frozen)"
        return n.title
    head = f"{n.name} = {n.op}" if n.name is not None else n.title
    return head + (" (output)" if n.role == "output" else "")


def _grad_lines(n: Node, o: _Opts) -> list[str]:
    if o.grads is None or not n.requires_grad:
        return []
    g = o.grads.get(n.id)
    if g is None:
        return ["grad ?"] if o.arrived else [FREED]  # (? : not arrived yet)
    if not isinstance(g, np.ndarray):  # a backend array (the stepper hands NumPy already)
        g = get_backend(n.device).to_numpy(g)
    return value_lines("grad", g)


def node_label(graph: Graph, n: Node, o: _Opts, note: str | None) -> str:
    lines = [_first_line(n)]
    if n.traffic:  # a collective says what it moves
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
    lines += _grad_lines(n, o)
    if not n.is_leaf and o.flops:
        lines.append(_cost_text(n.cost(), o.unit))
        if o.backward:
            lines.append("bwd " + _cost_text(n.cost(True), o.unit))
    if note:
        lines.append(note)
    return "\n".join(lines)


def _rolled_note(graph: Graph, view: _View, s: _Shown, note: str | None) -> str | None:
    """A node's note; a rolled-up node that stands for the output says so."""
    if graph.output in s.members and s.id != graph.output:
        unit = next((view.units[s.path[:k]] for k in range(len(s.path), 0, -1)
                     if s.path[:k] in view.units), None)
        what = unit.what if unit is not None else "step"
        note = "\n".join(x for x in (note, f"(the output: at the last {what})") if x)
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


def _box_head(s: _Shown, kind: str | None, count: int) -> list[str]:
    path = ".".join(s.path)
    if s.kind == "roll":
        return [f"{kind or 'block'} × {s.count}", f"{path} ... {s.last_path}"]
    if s.kind == "rest":
        return [f"... {count} more nodes"]
    call = f" (call {s.id.rsplit('#', 1)[1]})" if "#" in s.id else ""
    return [path + (f" ({kind})" if kind else "") + call]


def box_label(graph: Graph, s: _Shown, o: _Opts, out: Node) -> str:
    nodes = [graph.node(m) for m in s.members]
    path = ".".join(s.path)
    lines = _box_head(s, o.types.get(path), len(nodes))
    if "shape" in o.show or "dtype" in o.show:
        lines.append(f"{_shape(out.shape)} {out.dtype}")
    repeats = _repeats(nodes, path) if s.kind == "box" else None
    if repeats:
        lines.append(repeats)
    if o.flops:
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


def title_text(graph: Graph, o: _Opts, title: str | None, notes: list[str],
               totals: bool = True, width: int = TITLE_WIDTH) -> str:
    """The title: its name, the graph's note, the totals and what the view left out."""
    ops = [n for n in graph.nodes if not n.is_leaf]
    lines = wrap(title or (o.types.get("") or "Lucid graph"), width)
    if graph.note:
        lines += wrap(graph.note, width)
    if totals and not o.counted and "flops" in o.show:
        lines += wrap("not counted: record the graph inside lucid.count_flops(), or "
                      "draw(model, input)", width)
    elif totals and o.counted:  # (also when the nodes leave their counts out)
        lines += wrap("forward: " + _cost_text(sum_cost(graph.nodes), o.unit), width)
        if o.backward:
            lines += wrap("backward: " + _cost_text(sum_cost(graph.nodes, True), o.unit),
                          width)
    uncounted = sorted({n.op for n in ops if n.flops is None})
    if totals and uncounted and len(uncounted) < len({n.op for n in ops}):
        lines += wrap("not counted: " + ", ".join(uncounted), width)
    if totals:
        lines.append(f"{len(graph.nodes)} nodes, {len(ops)} ops")
    for note in notes:
        lines += wrap(note, width)
    return "\n".join(lines)


def _freed_note(graph: Graph, o: _Opts) -> list[str]:
    """One title line when ``backward()`` freed gradients the nodes would show."""
    if o.grads is None or o.arrived:
        return []
    if all(n.id in o.grads for n in graph.nodes if n.requires_grad):
        return []
    return ["grads of the inner nodes were freed by backward(): call "
            "backward(keep_grad=True), or draw before backward()"]


# -- from the view to the scene ----------------------------------------------------------------

def box_output(graph: Graph, s: _Shown, consumers: Mapping[str, list[str]]) -> Node:
    """The node a module box stands for: its last member whose value leaves the box."""
    outs = [graph.node(m) for m in s.members]
    member_set = set(s.members)
    leaving = [n for n in outs if n.id == graph.output
               or any(c not in member_set for c in consumers.get(n.id, ()))]
    return (leaving or outs)[-1]


def _in_unit(view: _View, s: _Shown) -> bool:
    return any(s.path[:k] in view.units for k in range(len(s.path), 0, -1))


def _source_notes(view: _View) -> dict[str, str]:
    """The notes of edges into a roll-up, moved onto their source ("→ every step (× 32)"):
    a line on a node cannot land on another edge's words, as edge labels side by side did."""
    words: dict[str, set[str]] = defaultdict(set)
    for (a, _b), text in view.edge_notes.items():
        if a in view.shown and not _in_unit(view, view.shown[a]):
            words[a].add(text)
    return {a: "→ " + ws.pop() for a, ws in words.items() if len(ws) == 1}


def _params_label(graph: Graph, s: _Shown, o: _Opts, note: str | None) -> str:
    """Parameters drawn as one node: a line each (name and shape), the shared note."""
    lines = []
    for m in s.members:
        n = graph.node(m)
        lines.append(n.title + (f" {_shape(n.shape)}" if "shape" in o.show else ""))
    return "\n".join(lines + ([note] if note else []))


def _item(graph: Graph, view: _View, s: _Shown, o: _Opts, ctx: dict[str, Any]) -> Item:
    highlight = next((ctx["hl_nodes"][m] for m in s.members if m in ctx["hl_nodes"]), None)
    if s.kind == "params":
        n = graph.node(s.id)
        note = ctx["moved"].get(s.id) or ctx["notes"].get(s.id)
        return Item(s.id, _params_label(graph, s, o, note), "parameter", n.device, "parameter",
                    False, f"{len(s.members)} parameters of {'.'.join(s.path)}", highlight)
    if s.kind != "node":
        out = box_output(graph, s, ctx["consumers"])
        return Item(s.id, box_label(graph, s, o, out), "rest" if s.kind == "rest" else "module",
                    out.device, s.kind if s.kind != "node" else "box",
                    graph.output in s.members, f"{s.id}: {len(s.members)} nodes", highlight)
    n = graph.node(s.id)
    note = "\n".join(x for x in (ctx["notes"].get(s.id), ctx["moved"].get(s.id)) if x) or None
    form = {"parameter": "parameter", "buffer": "parameter", "input": "input",
            "constant": "constant"}.get(n.role, "op")
    more = f" (and {len(s.members) - 1} more, rolled up)" if len(s.members) > 1 else ""
    if s.count > 1:  # identical ops side by side, drawn once
        note = "\n".join(x for x in (f"× {s.count}, one drawn", note) if x)
    return Item(s.id, node_label(graph, n, o, _rolled_note(graph, view, s, note)),
                "communication" if n.traffic else ROLE_GROUP.get(n.role, "op"), n.device, form,
                n.role == "output" or graph.output in s.members,
                f"{n.id} in {'.'.join(s.path) or '(top level)'}{more}", highlight)


def _cluster_label(graph: Graph, view: _View, path: tuple[str, ...], members: list[str],
                   o: _Opts) -> str:
    label = view.cluster_label(path, o.types)
    inside = [graph.node(m) for m in members]
    total = sum_cost(inside)
    if total is not None and o.counted and not all(n.is_leaf for n in inside):
        label += "\n" + view.count_prefix(path) + total.text(o.unit)
    return label


def _tree(graph: Graph, view: _View, o: _Opts, ctx: dict[str, Any]) -> list[Item | Cluster]:
    """The cluster tree: module paths, children in order of first appearance."""
    top = Cluster("", "")
    clusters: dict[tuple[str, ...], Cluster] = {(): top}
    members: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for s in view.shown.values():
        chain = s.path if s.kind in ("node", "params") else s.path[:-1]  # (a box is its path)
        for i in range(1, len(chain) + 1):
            if chain[:i] not in clusters:
                clusters[chain[:i]] = Cluster(".".join(chain[:i]), "")
                clusters[chain[:i - 1]].items.append(clusters[chain[:i]])
            members[chain[:i]].extend(s.members)
        clusters[chain].items.append(_item(graph, view, s, o, ctx))
    for path, cluster in clusters.items():
        if path:
            cluster.label = _cluster_label(graph, view, path, members[path], o)
    return top.items


def _links(graph: Graph, view: _View, ctx: dict[str, Any]) -> list[Link]:
    """Edges between drawn nodes, once each, in graph order."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    for e in graph.edges:
        a, b = view.where[e.src], view.where[e.dst]
        if a == b and (a, b) not in view.recurrent:
            continue
        info = found.setdefault((a, b), {"to": set(), "hl": None})
        if graph.node(e.src).device != graph.node(e.dst).device:
            info["to"].add(graph.node(e.dst).device)
        if (e.src, e.dst) in ctx["hl_edges"] and info["hl"] is None:
            info["hl"] = ctx["hl_edges"][(e.src, e.dst)]
    links = []
    for (a, b), info in found.items():
        words = view.recurrent.get((a, b)) or ("" if a in ctx["moved"]
                                               else view.edge_notes.get((a, b), ""))
        kind = "recurrent" if (a, b) in view.recurrent else "data"
        if info["to"]:
            kind = "copy"
            words = "→ " + ", ".join(sorted(info["to"])) + (f"; {words}" if words else "")
        links.append(Link(a, b, words, kind, info["hl"]))
    return links


def _legend(items: list[Item], links: list[Link], key: list[tuple[str, str]], o: _Opts,
            legend: bool | str, macs: bool) -> list[Key]:
    """Only what the picture has: kinds of node (and their device when there are several),
    copies between devices, the caller's colours, the unit convention when counts show."""
    if not legend:
        return []
    keys: list[Key] = []
    if legend != "key":
        devices = sorted({i.device for i in items if i.group != "rest"})
        for device in devices:
            for group in ("op", "module", "parameter", "data"):
                if any(i.device == device and i.group == group for i in items):
                    words = _GROUP_WORDS[group]
                    pal = PALETTES.get(device, OTHER)
                    keys.append(Key("fill", pal[group], pal["line"],
                                    f"{device} {words}" if len(devices) > 1 else words))
        if any(i.group == "communication" for i in items):
            keys.append(Key("fill", COMMUNICATION["fill"], COMMUNICATION["line"],
                            "communication between ranks"))
        if any(link.kind == "copy" for link in links):
            keys.append(Key("edge", CROSS_DEVICE, "bold,dashed", "data copied to another device"))
    for colour, text in key:
        if text.startswith("edge:"):
            keys.append(Key("edge", colour, "solid", text[5:].strip()))
        else:
            keys.append(Key("border", colour, colour, text))
    if o.counted and legend != "key" and any(i.group != "data" for i in items):
        keys.append(Key("text", "", "", caption(o.unit, macs)))
    return keys


def _flatten(items: Iterable[Item | Cluster]) -> list[Item]:
    out: list[Item] = []
    for x in items:
        out += _flatten(x.items) if isinstance(x, Cluster) else [x]
    return out


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


def check_options(where: str, depth: Any, max_nodes: Any, rankdir: Any) -> None:
    if depth is not None and (not isinstance(depth, int) or depth < 1):
        raise ValueError(f"{where}: depth must be None (every op) or an int >= 1, got "
                         f"{depth!r}")
    if max_nodes is not None and max_nodes < 2:
        raise ValueError(f"{where}: max_nodes must be None or at least 2, got {max_nodes!r}")
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"{where}: rankdir must be TB, LR, BT or RL, got {rankdir!r}")


def build_scene(
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
    totals: bool = True,
    grads: Mapping[str, Any] | None = None,
    layout_note: str | None = None,
    where: str = "to_dot",
    fold_params: bool = False,
) -> Scene:
    """The scene of ``graph``; the options are :func:`lucid_viz.dot.to_dot`'s.  ``where``
    names the public call in error messages."""
    check_options(where, depth, max_nodes, rankdir)
    o = _opts(graph, flops_unit, backward, modules, where, show, grads)
    view, guard_note = build_view(graph, modules, depth=depth, max_nodes=max_nodes,
                                  rollup=rollup, fold_params=fold_params)
    consumers: dict[str, list[str]] = defaultdict(list)
    for e in graph.edges:
        consumers[e.src].append(e.dst)
    ctx = {"hl_nodes": _normalise_nodes(highlight_nodes),
           "hl_edges": _normalise_edges(highlight_edges), "notes": notes or {},
           "consumers": consumers, "moved": _source_notes(view)}
    items = _tree(graph, view, o, ctx)
    links = _links(graph, view, ctx)
    macs = any(n.macs for n in graph.nodes)
    keys = _legend(_flatten(items), links, list(key), o, legend, macs)
    head_notes = [x for x in (guard_note, layout_note) if x] + _freed_note(graph, o)
    text = title_text(graph, o, title, head_notes, totals)
    if not legend and o.counted and totals:  # the caption has no legend to sit in
        text += "\n" + "\n".join(wrap(caption(o.unit, macs)))
    # a stepper frame's legend sits under a narrow picture: two short rows, not one wide one
    return Scene(text, rankdir, items, links, keys,
                 TITLE_WIDTH if legend == "key" else LEGEND_WIDTH)

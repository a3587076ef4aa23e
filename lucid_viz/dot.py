"""The DOT writer: a view of the graph model as Graphviz DOT text.

``to_dot(graph)`` turns a :class:`lucid_viz.graph.Graph` into DOT text.  What the picture shows:

* **Nodes** -- an op with its output shape, logical dtype and FLOPs; a parameter or buffer by
  its module path (``layer1.0.conv1.weight``); inputs and constants.
* **Devices** -- fill colours from a cpu palette (blues) and a gpu palette (oranges), a legend,
  and an edge where data moves between devices drawn bold and dashed with a ``→ gpu`` label.
* **FLOPs** -- per node and in total in the title, in the seed's unit: MACs (a multiply-add
  counts once for matmul and convolution; an elementwise op counts its output elements), or
  ``flops_unit="2*MACs"`` to count the multiply and the add separately.

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

from lucid.shapes import fmt
from lucid_viz.graph import Edge, Graph, Node
from lucid_viz.view import DEFAULT_MAX_NODES, ModuleInfo, _Shown, _View, build_view

__all__ = ["PALETTES", "HIGHLIGHT", "CROSS_DEVICE", "sum_flops", "to_dot"]

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
HIGHLIGHT = "#d62728"  # default colour of highlighted nodes and edges (the backward stepper)
CROSS_DEVICE = "#7b3294"  # an edge along which data is copied to another device
_ROLE_GROUP = {"intermediate": "op", "output": "op", "parameter": "parameter",
               "buffer": "parameter", "input": "data", "constant": "data"}
_UNITS = {"MACs": 1, "2*MACs": 2, "2·MACs": 2}

# -- labels ------------------------------------------------------------------------------

def _q(text: str) -> str:
    """A DOT double-quoted string (``\\n`` breaks a line)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _shape(shape: tuple[int, ...]) -> str:
    return "scalar" if shape == () else fmt(shape)


def _flops_text(flops: int | None, scale: int, unit: str) -> str:
    return "FLOPs uncounted" if flops is None else f"{flops * scale:,} {unit}"


def sum_flops(nodes: Iterable[Node], backward: bool = False) -> int | None:
    values = [n.flops_bwd if backward else n.flops for n in nodes if not n.is_leaf]
    counted = [v for v in values if v is not None]
    return sum(counted) if counted or not values else None


def _constant_text(graph: Graph, node: Node) -> str:
    if node.shape == () or all(d == 1 for d in node.shape):
        try:
            return f"{graph.tensor(node.id).item():g}"
        except (KeyError, TypeError, ValueError):  # a graph without live tensors, a bool
            pass
    return "constant"


@dataclass(frozen=True)
class _Opts:
    scale: int
    unit: str
    backward: bool
    types: Mapping[str, str]


def _node_label(graph: Graph, n: Node, o: _Opts, note: str | None) -> str:
    typed = f"{_shape(n.shape)} {n.dtype}"
    if n.role in ("parameter", "buffer"):
        lines = [n.name or n.role, typed]
        if n.role == "buffer":
            lines[0] += " (buffer)"
        elif not n.requires_grad:
            lines[0] += " (frozen)"
    elif n.role == "constant":
        lines = [_constant_text(graph, n), typed]
    elif n.role == "input":
        lines = ["input", typed]
    else:
        lines = [n.op + (" (output)" if n.role == "output" else ""), typed,
                 _flops_text(n.flops, o.scale, o.unit)]
        if o.backward:
            lines.append("bwd " + _flops_text(n.flops_bwd, o.scale, o.unit))
    if note:
        lines.append(note)
    return "\n".join(lines)


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
    lines.append(_flops_text(sum_flops(nodes), o.scale, o.unit))
    if o.backward:
        lines.append("bwd " + _flops_text(sum_flops(nodes, True), o.scale, o.unit))
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
    title: str | None = None,
    legend: bool = True,
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

    ``flops_unit``: ``"MACs"`` (the seed's convention) or ``"2*MACs"`` (labels then say
    "FLOPs", every count doubled).  ``backward=True`` adds backward FLOPs.  ``modules`` (from
    :func:`trace_with_modules`) places ops run in a container's own ``forward`` and names
    module classes; without it they are inferred from the graph.
    """
    if flops_unit not in _UNITS:
        raise ValueError(f"to_dot: flops_unit must be one of {sorted(_UNITS)}, got "
                         f"{flops_unit!r}")
    if depth is not None and (not isinstance(depth, int) or depth < 1):
        raise ValueError(f"to_dot: depth must be None (every op) or an int >= 1, got {depth!r}")
    if max_nodes is not None and max_nodes < 2:
        raise ValueError(f"to_dot: max_nodes must be None or at least 2, got {max_nodes!r}")
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"to_dot: rankdir must be TB, LR, BT or RL, got {rankdir!r}")
    scale = _UNITS[flops_unit]
    o = _Opts(scale, "MACs" if scale == 1 else "FLOPs", backward,
              dict(modules.types) if modules is not None else {})
    view, guard_note = build_view(graph, modules, depth=depth, max_nodes=max_nodes,
                                  rollup=rollup)
    consumers: dict[str, list[str]] = defaultdict(list)
    for e in graph.edges:
        consumers[e.src].append(e.dst)
    return _emit(graph, view, o, title, guard_note, legend, rankdir,
                 _normalise_nodes(highlight_nodes), _normalise_edges(highlight_edges),
                 notes or {}, consumers, list(key))


def _title(graph: Graph, o: _Opts, title: str | None, guard_note: str | None) -> str:
    ops = [n for n in graph.nodes if not n.is_leaf]
    head = title or (o.types.get("") or "Lucid graph")
    lines = [head]
    total = sum_flops(graph.nodes)
    if total is None or (ops and all(n.flops is None for n in ops)):
        lines.append("FLOPs not counted: record the graph inside lucid.count_flops(), "
                     "or draw(model, input)")
    else:
        text = f"total {total * o.scale:,} {o.unit} forward"
        if o.backward:
            bwd = sum_flops(graph.nodes, True) or 0
            text += f", {bwd * o.scale:,} {o.unit} backward"
        lines.append(text)
        lines.append("unit: MACs (matmul/conv: one per multiply-add; elementwise: one per "
                     "output element)" if o.scale == 1 else
                     "unit: FLOPs = 2*MACs (multiply and add counted separately)")
    uncounted = sorted({n.op for n in ops if n.flops is None})
    if uncounted and len(uncounted) < len({n.op for n in ops}):
        lines.append("uncounted ops: " + ", ".join(uncounted))
    lines.append(f"{len(graph.nodes)} nodes, {len(ops)} ops"
                 + (f", {guard_note}" if guard_note else ""))
    return "\n".join(lines)


def _emit(graph: Graph, view: _View, o: _Opts, title: str | None, guard_note: str | None,
          legend: bool, rankdir: str, hl_nodes: dict[str, str],
          hl_edges: dict[tuple[str, str], str], notes: Mapping[str, str],
          consumers: Mapping[str, list[str]], key: list[tuple[str, str]]) -> str:
    lines = [
        "digraph lucid {",
        f"  graph [rankdir={rankdir}, labelloc=t, fontname=\"Helvetica\", fontsize=12, "
        f"nodesep=0.25, ranksep=0.35, label={_q(_title(graph, o, title, guard_note))}];",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=9, '
        'penwidth=1];',
        '  edge [color="#666666", arrowsize=0.6, fontname="Helvetica", fontsize=8];',
    ]
    devices_seen: dict[str, set[str]] = defaultdict(set)

    def node_stmt(s: _Shown) -> str:
        highlight = next((hl_nodes[m] for m in s.members if m in hl_nodes), None)
        if s.kind == "node":
            n = graph.node(s.id)
            group = _ROLE_GROUP.get(n.role, "op")
            pal = PALETTES.get(n.device, _OTHER)
            devices_seen[n.device].add(group)
            attrs = {"label": _node_label(graph, n, o, notes.get(n.id)),
                     "fillcolor": pal[group], "color": pal["line"],
                     "tooltip": f"{n.id} in {'.'.join(s.path) or '(top level)'}"}
            if group == "parameter":
                attrs["shape"] = "cylinder"
                attrs["style"] = "filled"
            elif n.role == "input":
                attrs["shape"] = "ellipse"
                attrs["style"] = "filled"
            elif n.role == "constant":
                attrs["shape"] = "ellipse"
                attrs["style"] = "filled,dashed"
            elif n.role == "output":
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
            label = name + (f" ({o.types[name]})" if name in o.types else "")
            total = sum_flops(graph.node(m) for m in flops_in[item])
            if total is not None:
                label += f"\n{total * o.scale:,} {o.unit}"
            lines.append(f"{indent}subgraph {_q('cluster_' + name)} {{")
            lines.append(f'{indent}  label={_q(label)}; style="rounded"; color="#9a9a9a"; '
                         f'fontsize=10; labeljust=l;')
            emit_cluster(item, indent + "  ")
            lines.append(indent + "}")

    emit_cluster((), "  ")

    # Edges between drawn nodes, once each, in graph order.
    drawn: dict[tuple[str, str], dict[str, Any]] = {}
    for e in graph.edges:
        a, b = view.where[e.src], view.where[e.dst]
        if a == b:
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
        if info["to"]:
            crossing = True
            attrs.update(style="bold,dashed", color=CROSS_DEVICE, fontcolor=CROSS_DEVICE,
                         label=" → " + ", ".join(sorted(info["to"])))
        if info["hl"]:
            attrs.update(color=info["hl"], penwidth="2.5")
        lines.append(f"  {_q(a)} -> {_q(b)}" + (f" [{_attrs(attrs)}]" if attrs else "") + ";")

    if legend and devices_seen:
        lines.append('  subgraph "cluster_legend" {')
        lines.append('    label="legend"; style="rounded"; color="#bbbbbb"; fontsize=9;')
        names = {"op": "ops", "parameter": "parameters", "data": "inputs",
                 "module": "modules"}
        shapes = {"op": "box", "parameter": "cylinder", "data": "ellipse", "module": "box"}
        styles = {"op": "rounded,filled"}
        for device in sorted(devices_seen):
            pal = PALETTES.get(device, _OTHER)
            for group in ("op", "module", "parameter", "data"):
                if group in devices_seen[device]:
                    lines.append(f"    {_q(f'legend:{device}:{group}')} "
                                 f"[label={_q(f'{device} {names[group]}')}, "
                                 f"fillcolor=\"{pal[group]}\", color=\"{pal['line']}\", "
                                 f"shape={shapes[group]}, "
                                 f"style={_q(styles.get(group, 'filled'))}, fontsize=8];")
        if crossing:
            lines.append('    "legend:copy:a" [label="", shape=point, width=0.05];')
            lines.append('    "legend:copy:b" [label="data copied to another device", '
                         'shape=plaintext, style=solid, fontsize=8];')
            lines.append(f'    "legend:copy:a" -> "legend:copy:b" [style="bold,dashed", '
                         f'color="{CROSS_DEVICE}"];')
        for i, (color, text) in enumerate(key):  # what the highlight colours mean
            if text.startswith("edge:"):
                lines.append(f'    "legend:key{i}:a" [label="", shape=point, width=0.05];')
                lines.append(f'    "legend:key{i}:b" [label={_q(text[5:].strip())}, '
                             'shape=plaintext, style=solid, fontsize=8];')
                lines.append(f'    "legend:key{i}:a" -> "legend:key{i}:b" [color="{color}", '
                             'penwidth=2.5];')
                lines.append(f'    {{ rank=same; "legend:key{i}:a"; "legend:key{i}:b"; }}')
            else:
                lines.append(f'    "legend:key{i}" [label={_q(text)}, fillcolor="white", '
                             f'color="{color}", penwidth=3, shape=box, '
                             'style="rounded,filled", fontsize=8];')
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

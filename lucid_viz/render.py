"""Draw the graph model as Graphviz DOT, and show it in a notebook.

``to_dot(graph)`` turns a :class:`lucid_viz.graph.Graph` into DOT text; ``draw(...)`` wraps it in
a :class:`Drawing` that Jupyter displays as SVG.  What the picture shows:

* **Nodes** -- an op with its output shape, logical dtype and FLOPs; a parameter or buffer by
  its module path (``layer1.0.conv1.weight``); inputs and constants.
* **Devices** -- fill colours from a cpu palette (blues) and a gpu palette (oranges), a legend,
  and an edge where data moves between devices drawn bold and dashed with a ``→ gpu`` label.
* **FLOPs** -- per node and in total in the title, in the seed's unit: MACs (a multiply-add
  counts once for matmul and convolution; an elementwise op counts its output elements), or
  ``flops_unit="2*MACs"`` to count the multiply and the add separately.
* **Modules** -- each module is a cluster; ``depth=k`` draws modules ``k`` levels down as one
  box each (FLOPs summed), and repeated sibling blocks of identical structure roll up into one
  box ("BasicBlock × 2").
* **A node-count guard** -- beyond ``max_nodes`` the view collapses deeper levels by itself (and
  says so in the title) rather than draw an unreadable wall.

The output is a pure function of the graph and the options: ids come from the graph model
(``n0``, ``n1`` ... and module paths), never from memory addresses, so the same seeded run gives
the same DOT text byte for byte.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid_viz import graphviz_bin
from lucid_viz.graph import Edge, Graph, Node, trace, trace_model

__all__ = [
    "PALETTES",
    "HIGHLIGHT",
    "Drawing",
    "ModuleInfo",
    "draw",
    "to_dot",
    "trace_with_modules",
]

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
DEFAULT_MAX_NODES = 150


@dataclass(frozen=True)
class ModuleInfo:
    """What a model run adds to the graph: the module each op ran in, and module class names.

    ``scopes`` maps a node id to the *innermost* module path whose ``forward`` produced it
    (``"layer1.0"`` for the residual add written in ``BasicBlock.forward``; ``""`` for the top
    level); ``types`` maps a module path to its class name (``"" -> "ResNet"``).
    """

    scopes: Mapping[str, str] = field(default_factory=dict)
    types: Mapping[str, str] = field(default_factory=dict)


def trace_with_modules(model: Any, *inputs: Any, train: bool = False
                       ) -> tuple[Graph, ModuleInfo]:
    """``trace(model, *inputs)`` plus the module path of every op and every module's class.

    Runs in eval mode unless ``train=True`` (a drawing shows inference, and BatchNorm refuses a
    batch of one in training mode), restoring the model's mode afterwards.  Each op node's
    module is the innermost module call that made it, as the module recorder stamped it
    (``Node.module``): the residual add of a ResNet block belongs to the block.
    """
    was_training = getattr(model, "training", False)
    if not train and hasattr(model, "eval"):
        model.eval()
    try:
        graph, types = trace_model(model, *inputs)
    finally:
        if hasattr(model, "train"):
            model.train(was_training)
    scopes = {n.id: n.module for n in graph.nodes if not n.is_leaf and n.module is not None}
    return graph, ModuleInfo(scopes, types)


# -- module paths ---------------------------------------------------------------------------

def _parts(path: str) -> tuple[str, ...]:
    return tuple(path.split(".")) if path else ()


def _parent(path: str) -> str:
    return path.rsplit(".", 1)[0] if "." in path else ""


def _common(a: tuple[str, ...], b: tuple[str, ...]) -> tuple[str, ...]:
    n = 0
    while n < min(len(a), len(b)) and a[n] == b[n]:
        n += 1
    return a[:n]


def _node_scopes(graph: Graph, modules: ModuleInfo | None, consumers: Mapping[str, list[str]],
                 producers: Mapping[str, list[str]]) -> dict[str, str]:
    """The module path every node is drawn in ("" = top level)."""
    if modules is not None and modules.scopes:
        ops = dict(modules.scopes)
    else:  # each op node carries the module call that made it (None: made outside a model)
        ops = {n.id: n.module for n in graph.nodes if not n.is_leaf and n.module is not None}
    scopes: dict[str, str] = {}
    for n in graph.nodes:
        if n.role in ("parameter", "buffer") and n.name:
            scopes[n.id] = _parent(n.name)  # owned by the module that registered it
        elif not n.is_leaf:
            scopes[n.id] = ops.get(n.id, "")
    for n in graph.nodes:  # a constant sits with the op that uses it (eps in a BatchNorm)
        if n.id not in scopes:
            users = {scopes.get(c, "") for c in consumers.get(n.id, ())}
            scopes[n.id] = users.pop() if n.role == "constant" and len(users) == 1 else ""
    return scopes


# -- the view: which graph nodes become which drawn nodes --------------------------------------

@dataclass
class _Shown:
    """One drawn node: a graph node, a collapsed module box, a roll-up, or the truncated rest."""

    id: str
    kind: str  # node | box | roll | rest
    members: list[str]
    path: tuple[str, ...]  # the module it is, or sits in
    count: int = 1  # blocks in a roll-up
    last_path: str = ""  # the last block's path, for a roll-up's label


@dataclass
class _View:
    shown: dict[str, _Shown]
    where: dict[str, str]  # graph node id -> drawn node id


def _components(members: list[str], edges: list[Edge]) -> list[list[str]]:
    """Split a module's nodes into connected pieces (a layer called twice is two boxes)."""
    root = {m: m for m in members}
    pos = {m: i for i, m in enumerate(members)}

    def find(x: str) -> str:
        while root[x] != x:
            root[x] = root[root[x]]
            x = root[x]
        return x

    for e in edges:
        if e.src in root and e.dst in root:
            a, b = find(e.src), find(e.dst)
            if a != b:
                root[max(a, b, key=pos.__getitem__)] = min(a, b, key=pos.__getitem__)
    groups: dict[str, list[str]] = {}
    for m in members:
        groups.setdefault(find(m), []).append(m)
    return list(groups.values())


def _leaf_paths(scopes: Mapping[str, str], types: Mapping[str, str]) -> set[tuple[str, ...]]:
    """Module paths with no sub-modules (layers): their insides are ops, not modules."""
    paths = {_parts(p) for p in list(scopes.values()) + list(types)}
    inner = {p[:i] for p in paths for i in range(len(p))}
    return {p for p in paths if p and p not in inner}


def _build_view(graph: Graph, scopes: Mapping[str, str], depth: int | None,
                leaves: set[tuple[str, ...]]) -> _View:
    """Drawn nodes at ``depth``: modules that deep, and layers above it, become boxes."""
    shown: dict[str, _Shown] = {}
    boxes: dict[tuple[str, ...], list[str]] = {}
    order: list[tuple[str, str | tuple[str, ...]]] = []  # first appearance, for stable output
    for n in graph.nodes:
        parts = _parts(scopes[n.id])
        if depth is not None and (len(parts) >= depth or parts in leaves):
            key = parts[:depth]
            if key not in boxes:
                boxes[key] = []
                order.append(("box", key))
            boxes[key].append(n.id)
        else:
            order.append(("node", n.id))
            shown[n.id] = _Shown(n.id, "node", [n.id], parts)
    key_of = {m: key for key, members in boxes.items() for m in members}
    inside: dict[tuple[str, ...], list[Edge]] = defaultdict(list)
    for e in graph.edges:
        key = key_of.get(e.src)
        if key is not None and key == key_of.get(e.dst):
            inside[key].append(e)
    ordered: dict[str, _Shown] = {}
    for kind, key in order:
        if kind == "node":
            ordered[key] = shown[key]  # type: ignore[index]
            continue
        pieces = _components(boxes[key], inside[key])  # type: ignore[index]
        path = ".".join(key)
        for i, piece in enumerate(pieces, 1):
            sid = f"m:{path}" if len(pieces) == 1 else f"m:{path}#{i}"
            ordered[sid] = _Shown(sid, "box", piece, key)  # type: ignore[arg-type]
    where = {m: s.id for s in ordered.values() for m in s.members}
    return _View(ordered, where)


def _signature(graph: Graph, box: _Shown, types: Mapping[str, str],
               out_edges: Mapping[str, list[Edge]]) -> tuple:
    """What must match for two sibling boxes to roll up: ops, shapes, dtypes, wiring."""
    prefix = ".".join(box.path) + "."
    local = {m: i for i, m in enumerate(box.members)}
    nodes = []
    for m in box.members:
        n = graph.node(m)
        name = n.name[len(prefix):] if n.name and n.name.startswith(prefix) else n.name
        role = "intermediate" if n.role == "output" else n.role
        nodes.append((n.op, n.shape, n.dtype, n.device, role, name))
    wiring = sorted((local[e.src], local[e.dst], e.index) for m in box.members
                    for e in out_edges.get(m, ()) if e.dst in local)
    return types.get(".".join(box.path)), tuple(nodes), tuple(wiring)


def _roll_up(graph: Graph, view: _View, types: Mapping[str, str],
             out_edges: Mapping[str, list[Edge]]) -> _View:
    """Merge chains of identical sibling boxes (block i feeds only block i+1) into one box."""
    outs: dict[str, set[str]] = defaultdict(set)
    ins: dict[str, set[str]] = defaultdict(set)
    for e in graph.edges:
        a, b = view.where[e.src], view.where[e.dst]
        if a != b:
            outs[a].add(b)
            ins[b].add(a)
    sigs: dict[str, tuple] = {}

    def sig(s: _Shown) -> tuple:
        if s.id not in sigs:
            sigs[s.id] = _signature(graph, s, types, out_edges)
        return sigs[s.id]

    merged_into: dict[str, str] = {}
    for s in view.shown.values():
        if s.kind != "box" or s.id in merged_into or "#" in s.id:
            continue
        chain = [s]
        while True:
            cur = chain[-1]
            nxt_ids = outs.get(cur.id, set())
            if len(nxt_ids) != 1:
                break
            nxt = view.shown[next(iter(nxt_ids))]
            if (nxt.kind != "box" or "#" in nxt.id or nxt.path[:-1] != s.path[:-1]
                    or ins.get(nxt.id) != {cur.id} or sig(nxt) != sig(s)):
                break
            chain.append(nxt)
        if len(chain) > 1:
            for other in chain[1:]:
                merged_into[other.id] = s.id
            s.kind = "roll"
            s.count = len(chain)
            s.last_path = ".".join(chain[-1].path)
            s.members = [m for c in chain for m in c.members]
    if not merged_into:
        return view
    shown = {k: v for k, v in view.shown.items() if k not in merged_into}
    return _View(shown, {m: s.id for s in shown.values() for m in s.members})


def _truncate(graph: Graph, view: _View, keep: int) -> _View:
    """Keep the ``keep`` drawn nodes nearest the output; fold the rest into one box."""
    preds: dict[str, list[str]] = defaultdict(list)
    for e in graph.edges:
        a, b = view.where[e.src], view.where[e.dst]
        if a != b and a not in preds[b]:
            preds[b].append(a)
    start = view.where[graph.output]
    kept = [start]
    seen = {start}
    i = 0
    while i < len(kept) and len(kept) < keep:
        for p in preds[kept[i]]:
            if p not in seen and len(kept) < keep:
                seen.add(p)
                kept.append(p)
        i += 1
    rest = [m for s in view.shown.values() if s.id not in seen for m in s.members]
    shown = {k: v for k, v in view.shown.items() if k in seen}
    if rest:
        shown["rest"] = _Shown("rest", "rest", rest, ())
    return _View(shown, {m: s.id for s in shown.values() for m in s.members})


# -- labels ------------------------------------------------------------------------------

def _q(text: str) -> str:
    """A DOT double-quoted string (``\\n`` breaks a line)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _shape(shape: tuple[int, ...]) -> str:
    return "scalar" if shape == () else fmt(shape)


def _flops_text(flops: int | None, scale: int, unit: str) -> str:
    return "FLOPs uncounted" if flops is None else f"{flops * scale:,} {unit}"


def _sum_flops(nodes: Iterable[Node], backward: bool = False) -> int | None:
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
    lines.append(_flops_text(_sum_flops(nodes), o.scale, o.unit))
    if o.backward:
        lines.append("bwd " + _flops_text(_sum_flops(nodes, True), o.scale, o.unit))
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
    consumers: dict[str, list[str]] = defaultdict(list)
    producers: dict[str, list[str]] = defaultdict(list)
    out_edges: dict[str, list[Edge]] = defaultdict(list)
    for e in graph.edges:
        consumers[e.src].append(e.dst)
        producers[e.dst].append(e.src)
        out_edges[e.src].append(e)
    scopes = _node_scopes(graph, modules, consumers, producers)
    leaves = _leaf_paths(scopes, o.types)

    def view_at(k: int | None) -> _View:
        v = _build_view(graph, scopes, k, leaves)
        return _roll_up(graph, v, o.types, out_edges) if rollup and k is not None else v

    view = view_at(depth)
    guard_note = None
    if max_nodes is not None and len(view.shown) > max_nodes:
        wanted = len(view.shown)
        deepest = max((len(_parts(s)) for s in scopes.values()), default=0)
        start = deepest if depth is None or depth > deepest else depth - 1
        for k in range(start, 0, -1):
            view = view_at(k)
            if len(view.shown) <= max_nodes:
                guard_note = (f"collapsed to depth={k}: the requested view has {wanted} nodes, "
                              f"more than max_nodes={max_nodes}")
                break
        else:
            view = _truncate(graph, view_at(1) if deepest else view, max_nodes - 1)
            guard_note = (f"showing the {len(view.shown) - 1} nodes nearest the output: even "
                          f"collapsed the view has more than max_nodes={max_nodes}")
    if len(view.shown) != len(graph.nodes):
        drawn = f"drawn as {len(view.shown)}"
        guard_note = drawn if guard_note is None else f"{drawn}; {guard_note}"
    return _emit(graph, view, o, title, guard_note, legend, rankdir,
                 _normalise_nodes(highlight_nodes), _normalise_edges(highlight_edges),
                 notes or {}, consumers)


def _title(graph: Graph, o: _Opts, title: str | None, guard_note: str | None) -> str:
    ops = [n for n in graph.nodes if not n.is_leaf]
    head = title or (o.types.get("") or "Lucid graph")
    lines = [head]
    total = _sum_flops(graph.nodes)
    if total is None or (ops and all(n.flops is None for n in ops)):
        lines.append("FLOPs not counted: record the graph inside lucid.count_flops(), "
                     "or draw(model, input)")
    else:
        text = f"total {total * o.scale:,} {o.unit} forward"
        if o.backward:
            bwd = _sum_flops(graph.nodes, True) or 0
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
          consumers: Mapping[str, list[str]]) -> str:
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
            outs = [graph.node(m) for m in s.members]
            member_set = set(s.members)
            leaving = [n for n in outs if n.id == graph.output
                       or any(c not in member_set for c in consumers.get(n.id, ()))]
            out = (leaving or outs)[-1]
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
            total = _sum_flops(graph.node(m) for m in flops_in[item])
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
        lines.append("  }")
    lines.append("}")
    return "\n".join(lines) + "\n"


def _attrs(attrs: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={_q(v)}" for k, v in attrs.items())


# -- draw / Drawing ------------------------------------------------------------------------

_DOT_OPTIONS = ("depth", "max_nodes", "highlight_nodes", "highlight_edges", "notes",
                "flops_unit", "backward", "title", "legend", "rollup", "rankdir")


class Drawing:
    """A drawn graph: ``.dot()``, ``.svg()``, ``.save(path)``, and rich display in Jupyter.

    The DOT text is made once, when the drawing is; Graphviz runs on the first ``.svg()`` (or
    display) and its result is kept.  Displaying never raises: without a working Graphviz the
    notebook shows the DOT source and a one-line hint instead of the picture.
    """

    def __init__(self, graph: Graph, *, modules: ModuleInfo | None = None,
                 **options: Any) -> None:
        unknown = sorted(set(options) - set(_DOT_OPTIONS))
        if unknown:
            raise TypeError(f"draw: unknown option(s) {', '.join(unknown)}; "
                            f"expected some of {', '.join(_DOT_OPTIONS)}")
        self.graph = graph
        self.modules = modules
        self.options = options
        self._dot = to_dot(graph, modules=modules, **options)
        self._svg: str | None = None

    def dot(self) -> str:
        """The Graphviz DOT source."""
        return self._dot

    def svg(self) -> str:
        """The SVG picture (runs Graphviz once; see :mod:`lucid_viz.graphviz_bin`)."""
        if self._svg is None:
            self._svg = graphviz_bin.render(self._dot, "svg").decode("utf-8")
        return self._svg

    def png(self) -> bytes:
        return graphviz_bin.render(self._dot, "png")

    def save(self, path: str | Path) -> Path:
        """Write the drawing; the suffix picks the format: ``.svg``, ``.png`` or ``.dot``."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix in (".dot", ".gv"):
            path.write_text(self._dot, encoding="utf-8")
        elif suffix == ".svg":
            path.write_text(self.svg(), encoding="utf-8")
        elif suffix == ".png":
            path.write_bytes(self.png())
        else:
            raise ValueError(f"Drawing.save: unknown suffix {suffix!r} in {str(path)!r}; "
                             f"use .svg, .png or .dot")
        return path

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, str]:
        try:
            bundle = {"image/svg+xml": self.svg(), "text/plain": repr(self)}
        except Exception as err:  # noqa: BLE001 -- display must never raise; say what happened
            bundle = {"text/plain": f"{_hint(err)}\n\n{self._dot}"}
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include} or bundle
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude} or bundle
        return bundle

    def __repr__(self) -> str:
        ops = [n for n in self.graph.nodes if not n.is_leaf]
        flops = _sum_flops(ops)
        counted = f", {flops:,} MACs" if ops and flops is not None else ""
        return f"<lucid_viz.Drawing: {len(self.graph.nodes)} nodes, {len(ops)} ops{counted}>"


def _hint(err: Exception) -> str:
    if isinstance(err, graphviz_bin.GraphvizNotFound):
        reason = str(err).splitlines()[0]
        if graphviz_bin.HINT in reason:
            return f"lucid_viz: no Graphviz found, showing the DOT source; {graphviz_bin.HINT}"
        return f"lucid_viz: showing the DOT source; {reason}"
    first = (str(err).splitlines() or [""])[0]
    return (f"lucid_viz: Graphviz failed ({type(err).__name__}: {first}), showing the DOT "
            f"source; {graphviz_bin.HINT}")


def draw(target: Any, *inputs: Any, train: bool = False, **options: Any) -> Drawing:
    """Draw a graph: ``draw(tensor)``, ``draw(graph)`` or ``draw(model, *inputs)``.

    A tensor is traced as it stands (run it inside ``lucid.count_flops()`` to see FLOPs); a
    model is run once on ``inputs`` (in eval mode unless ``train=True``), which also names its
    modules.  ``options`` are :func:`to_dot`'s: ``depth``, ``max_nodes``, ``highlight_nodes``,
    ``highlight_edges``, ``notes``, ``flops_unit``, ``backward``, ``title``, ``legend``,
    ``rollup``, ``rankdir``.  In a notebook the result displays as SVG.
    """
    if isinstance(target, Graph):
        if inputs:
            raise TypeError("draw(graph) takes no inputs")
        return Drawing(target, **options)
    if isinstance(target, Tensor):
        if inputs:
            raise TypeError("draw(tensor) takes no inputs; use draw(model, *inputs)")
        return Drawing(trace(target), **options)
    if not callable(target):
        raise TypeError(f"draw: expected a Tensor, a Graph or a model, got "
                        f"{type(target).__name__}")
    graph, modules = trace_with_modules(target, *inputs, train=train)
    return Drawing(graph, modules=modules, **options)

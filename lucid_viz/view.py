"""The view: which graph nodes a drawing shows, and as what.

A drawing does not always show every node of the graph model.  This module decides, from the
graph, the module path of each node (read from the module recorder, ``Node.module``) and the
options, what is drawn:

* **Modules** -- each module is a cluster; ``depth=k`` draws modules ``k`` levels down as one
  box each (FLOPs summed), and repeated sibling blocks of identical structure roll up into one
  box ("BasicBlock × 2").
* **A node-count guard** -- beyond ``max_nodes`` the view collapses deeper levels by itself
  rather than draw an unreadable wall (``_truncate`` keeps the last resort).

The result is a :class:`_View`: the drawn nodes (graph nodes, module boxes, roll-ups) and the
edges between them.  :mod:`lucid_viz.dot` writes it as Graphviz DOT.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from lucid_viz.graph import Edge, Graph, trace_model

__all__ = ["DEFAULT_MAX_NODES", "ModuleInfo", "build_view", "trace_with_modules"]

#: beyond this many drawn nodes the view collapses itself (``max_nodes``)
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
    _split_calls(graph, shown, leaves)
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


def _split_calls(graph: Graph, shown: dict[str, _Shown], leaves: set[tuple[str, ...]]) -> None:
    """A layer called twice (one ReLU after bn1 and after the residual add) gets one cluster
    per call, ``relu#1`` and ``relu#2``: in one cluster, an edge would run from its second
    call back up to the layers between the two."""
    by_path: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for sid, s in shown.items():
        if s.path in leaves:
            by_path[s.path].append(sid)
    for path, members in by_path.items():
        member_set = set(members)
        pieces = _components(members, [e for e in graph.edges
                                       if e.src in member_set and e.dst in member_set])
        if len(pieces) > 1:
            for i, piece in enumerate(pieces, 1):
                for sid in piece:
                    shown[sid] = _Shown(sid, "node", shown[sid].members,
                                        path[:-1] + (f"{path[-1]}#{i}",))


def call_label(name: str, types: Mapping[str, str]) -> str:
    """A cluster's label: ``layer1.0 (BasicBlock)``, or ``relu (ReLU) (call 2)`` for one call
    of a layer called more than once (its path ends in ``#2``)."""
    base, _, call = name.rpartition("#") if "#" in name else (name, "", "")
    label = base + (f" ({types[base]})" if base in types else "")
    return label + (f" (call {call})" if call else "")


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


def build_view(graph: Graph, modules: ModuleInfo | None, *, depth: int | None,
               max_nodes: int | None, rollup: bool) -> tuple[_View, str | None]:
    """What a drawing of ``graph`` shows, and a note for the title when that is not every node.

    Modules become clusters; ``depth=k`` draws the modules ``k`` levels down as one box each;
    identical sibling boxes roll up (``rollup``); past ``max_nodes`` the view collapses one
    module level at a time until it fits, and if even one level is too many it keeps the nodes
    nearest the output (see :func:`lucid_viz.dot.to_dot` for the options in full).
    """
    types = dict(modules.types) if modules is not None else {}
    consumers: dict[str, list[str]] = defaultdict(list)
    producers: dict[str, list[str]] = defaultdict(list)
    out_edges: dict[str, list[Edge]] = defaultdict(list)
    for e in graph.edges:
        consumers[e.src].append(e.dst)
        producers[e.dst].append(e.src)
        out_edges[e.src].append(e)
    scopes = _node_scopes(graph, modules, consumers, producers)
    leaves = _leaf_paths(scopes, types)

    def view_at(k: int | None) -> _View:
        v = _build_view(graph, scopes, k, leaves)
        return _roll_up(graph, v, types, out_edges) if rollup and k is not None else v

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
    return view, guard_note

"""The view: which graph nodes a drawing shows, and as what.

A drawing does not always show every node of the graph model.  This module decides, from the
graph, the module path of each node (read from the module recorder, ``Node.module``) and the
options, what is drawn:

* **Modules** -- each module is a cluster; ``depth=k`` draws modules ``k`` levels down as one
  box each (FLOPs summed), and repeated sibling blocks of identical structure roll up into one
  box ("BasicBlock × 2").  A layer called several times is one cluster per call.
* **Time steps** -- each time step of a recurrent layer (``Node.step``) is a cluster of its own
  inside the layer's ("LSTM step t=3"), and the identical steps of a loop roll up into one
  drawn step ("LSTM step × 32"): the other steps' nodes are drawn by the first one's, the
  edges into and out of the roll-up say which steps they carry ("every step (× 32)", "first
  step"), and a dashed edge carries the state on to the next step.  A cell module called in a
  loop (each call fed by the one before) rolls up the same way ("× 32 calls").
* **A node-count guard** -- beyond ``max_nodes`` the view collapses deeper levels by itself
  rather than draw an unreadable wall (``_truncate`` keeps the last resort).

The result is a :class:`_View`: the drawn nodes (graph nodes, module boxes, roll-ups) and the
edges between them.  :mod:`lucid_viz.scene` puts it into words (labels, cluster labels, the
legend), and :mod:`lucid_viz.dot` and :mod:`lucid_viz.mermaid` write that.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from lucid_viz.graph import Edge, Graph, Step, trace_model

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
    for n in graph.nodes:  # an op recorded outside a model run sits with the parameters it
        # reads when they are one module's (the Linear op of fc.weight and fc.bias is fc's)
        if not n.is_leaf and n.id not in ops:
            owners = {scopes[p] for p in producers.get(n.id, ())
                      if graph.node(p).role in ("parameter", "buffer") and p in scopes}
            if len(owners) == 1:
                scopes[n.id] = owners.pop()
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
    kind: str  # node | params (a module's parameters as one) | box | roll | rest
    members: list[str]
    path: tuple[str, ...]  # the module it is, or sits in
    count: int = 1  # blocks in a roll-up
    last_path: str = ""  # the last block's path, for a roll-up's label


@dataclass
class _Unit:
    """One cluster of a family that may roll up: a time step of a loop, or a call of a layer."""

    path: tuple[str, ...]  # the cluster
    family: tuple  # the units that may roll up together: one loop of one call, or one layer
    n: int  # its place in the family, in the order they ran
    what: str  # "step" or "call"
    kind: str  # the class of the module running it ("LSTM")
    loop: str  # which loop of the call ("" for its only one)
    index: int  # the time step t, or the call's number
    count: int = 1  # after a roll-up: how many units it stands for
    last: int = 0  # after a roll-up: the last one's index


@dataclass
class _View:
    shown: dict[str, _Shown]
    where: dict[str, str]  # graph node id -> drawn node id
    units: dict[tuple[str, ...], _Unit] = field(default_factory=dict)  # by cluster path
    #: drawn edges into / out of a roll-up -> which of its steps they carry ("first step")
    edge_notes: dict[tuple[str, str], str] = field(default_factory=dict)
    #: drawn edges that carry the state from one rolled-up step on to the next -> "next step"
    recurrent: dict[tuple[str, str], str] = field(default_factory=dict)

    def cluster_label(self, path: tuple[str, ...], types: Mapping[str, str]) -> str:
        """The label of the cluster at ``path``: a module (``call_label``), a time step
        ("LSTM step t=3") or a roll-up ("LSTM step × 32")."""
        unit = self.units.get(path)
        if unit is None:
            return call_label(".".join(path), types)
        if unit.what == "call":
            if unit.count == 1:
                return call_label(".".join(path), types)
            layer = call_label(".".join(path).rpartition("#")[0], types)
            return (f"{layer} × {unit.count} calls\n"
                    f"calls {unit.index} ... {unit.last}, one drawn")
        name = " ".join(x for x in (unit.kind, unit.loop) if x)
        if unit.count == 1:
            return f"{name} step t={unit.index}"
        return (f"{name} step × {unit.count}\n"
                f"t = {unit.index} ... {unit.last}, one step drawn")

    def count_prefix(self, path: tuple[str, ...]) -> str:
        """What a cluster's FLOPs line starts with: "total of 32 steps: " for a roll-up."""
        unit = self.units.get(path)
        if unit is None or unit.count == 1:
            return ""
        return f"total of {unit.count} {unit.what}s: "


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
                leaves: set[tuple[str, ...]], marks: Mapping[str, tuple[int, Step | None]],
                types: Mapping[str, str]) -> _View:
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
    units = _split_calls(graph, shown, leaves, marks, types)
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
    return _View(ordered, where, units)


def _node_marks(graph: Graph, consumers: Mapping[str, list[str]]
                ) -> dict[str, tuple[int, Step | None]]:
    """Each node's call number and time step (a constant has those of the ops it feeds)."""
    marks = {n.id: (n.call, n.step) for n in graph.nodes if not n.is_leaf}
    for n in graph.nodes:
        if n.role == "constant":
            found = {marks.get(c, (0, None)) for c in consumers.get(n.id, ())}
            if len(found) == 1:
                marks[n.id] = found.pop()
    return marks


def _split_calls(graph: Graph, shown: dict[str, _Shown], leaves: set[tuple[str, ...]],
                 marks: Mapping[str, tuple[int, Step | None]], types: Mapping[str, str]
                 ) -> dict[tuple[str, ...], _Unit]:
    """Clusters for calls and time steps; returns those that may roll up, by cluster path.

    A layer called twice (one ReLU after bn1 and after the residual add) gets one cluster
    per call, ``relu#1`` and ``relu#2``: in one cluster, an edge would run from its second
    call back up to the layers between the two.  The calls are the recorded ones when the
    graph has them (a cell called in a loop, each call fed by the one before, is one connected
    piece), else the connected pieces.  Each time step of a loop is a cluster inside the
    cluster of the call that ran the loop.
    """
    by_path: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for sid, s in shown.items():
        if s.path in leaves:
            by_path[s.path].append(sid)
    split: set[tuple[str, ...]] = set()  # layers drawn one cluster per recorded call
    for path, members in by_path.items():
        calls = {graph.node(m).call for m in members if not graph.node(m).is_leaf}
        if len(calls) > 1 and 0 not in calls:
            split.add(path)
            continue
        member_set = set(members)
        pieces = _components(members, [e for e in graph.edges
                                       if e.src in member_set and e.dst in member_set])
        if len(pieces) > 1:
            for i, piece in enumerate(pieces, 1):
                for sid in piece:
                    shown[sid] = _Shown(sid, "node", shown[sid].members,
                                        path[:-1] + (f"{path[-1]}#{i}",))
    stepped = {_parts(step.module) for _, step in marks.values() if step is not None}
    units: dict[tuple[str, ...], _Unit] = {}
    for sid, s in shown.items():
        call, step = marks.get(sid, (0, None))
        parts = s.path
        if parts in split and call:
            unit = _Unit(parts[:-1] + (f"{parts[-1]}#{call}",), ("call", parts), call, "call",
                         types.get(".".join(parts), ""), "", call)
            parts = unit.path
            if s.path not in stepped:  # (a layer whose steps are marked rolls its steps)
                units.setdefault(unit.path, unit)
        if step is not None:
            owner = _parts(step.module)
            if owner in split:
                owner = owner[:-1] + (f"{owner[-1]}#{step.call}",)
            if parts[:len(owner)] == owner:
                label = f"{step.loop} step t={step.t}".strip()
                if owner == _parts(step.module) and step.call > 1:  # (owner not split)
                    label = f"call {step.call} {label}"
                here = owner + (label,)
                units.setdefault(here, _Unit(here, ("step", owner, step.loop), step.n, "step",
                                             types.get(step.module, ""), step.loop, step.t))
                parts = here + parts[len(owner):]
        if parts != s.path:
            shown[sid] = _Shown(sid, "node", s.members, parts)
    return units


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


def _drawn_links(graph: Graph, view: _View) -> tuple[dict[str, set[str]], dict[str, set[str]]]:
    """Which drawn nodes each drawn node feeds (``outs``) and is fed by (``ins``): the graph's
    edges between different nodes of ``view``."""
    outs: dict[str, set[str]] = defaultdict(set)
    ins: dict[str, set[str]] = defaultdict(set)
    for e in graph.edges:
        a, b = view.where[e.src], view.where[e.dst]
        if a != b:
            outs[a].add(b)
            ins[b].add(a)
    return outs, ins


def _roll_up(graph: Graph, view: _View, types: Mapping[str, str],
             out_edges: Mapping[str, list[Edge]]) -> _View:
    """Merge chains of identical sibling boxes (block i feeds only block i+1) into one box."""
    outs, ins = _drawn_links(graph, view)
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
    return replace(view, shown=shown, where={m: s.id for s in shown.values() for m in s.members})


def _roll_units(graph: Graph, view: _View, consumers: Mapping[str, list[str]],
                out_edges: Mapping[str, list[Edge]]) -> _View:
    """Roll up runs of identical units of one family -- the steps of one loop, or the calls
    of one cell each fed by the one before -- into the first unit of the run.

    The first unit is drawn; every node of the others is drawn by its counterpart there (the
    same op at the same place), so the edges between steps become edges inside the drawn one
    (``recurrent``), and the edges from outside say which steps they carry (``edge_notes``).
    An op outside the units that feeds one unit only (the slice ``x[t]`` a loop hands to its
    step t) rolls up with it, staying where it is drawn.  Units roll only if they match
    exactly: the same ops, shapes, dtypes and wiring, in the same order.
    """
    unit_of: dict[str, tuple[str, ...]] = {}  # drawn node -> its (innermost) unit's path
    for sid, s in view.shown.items():
        if s.kind == "node":
            for k in range(len(s.path), 0, -1):
                if s.path[:k] in view.units:
                    unit_of[sid] = s.path[:k]
                    break
    if not unit_of:
        return view
    roller = _Roller(graph, view, unit_of, _satellites(graph, view, unit_of, consumers),
                     out_edges)
    families: dict[tuple, list[_Unit]] = defaultdict(list)
    for u in roller.members:
        families[view.units[u].family].append(view.units[u])
    for family in families.values():
        family.sort(key=lambda unit: unit.n)
        for run in roller.runs(family):
            roller.merge(run)
    if not roller.position:
        return view
    return _roll_notes(graph, view, roller.shown, roller.units, roller.position)


class _Roller:
    """The units of a view as they roll up: which nodes each holds, which runs match, and
    (``position``) where each graph node of a rolled run now sits (its roll-up, its place)."""

    def __init__(self, graph: Graph, view: _View, unit_of: Mapping[str, tuple[str, ...]],
                 satellites: Mapping[tuple[str, ...], list[str]],
                 out_edges: Mapping[str, list[Edge]]) -> None:
        self.graph, self.view, self.unit_of = graph, view, unit_of
        self.satellites, self.out_edges = satellites, out_edges
        self.members: dict[tuple[str, ...], list[str]] = defaultdict(list)
        for sid, u in unit_of.items():
            self.members[u].append(sid)
        self.shown = dict(view.shown)
        self.units = dict(view.units)
        self.position: dict[str, tuple[tuple[str, ...], int]] = {}

    def signature(self, u: tuple[str, ...], ids: list[str]) -> tuple:
        """What must match for two units to roll up: ops, shapes, places and wiring."""
        local = {m: i for i, m in enumerate(ids)}
        nodes = []
        for m in ids:
            n = self.graph.node(m)
            inside = (tuple(p.split("#")[0] for p in self.view.shown[m].path[len(u):])
                      if m in self.unit_of else None)  # None: a satellite, drawn outside
            role = "intermediate" if n.role == "output" else n.role
            nodes.append((n.op, n.shape, n.dtype, n.device, role, n.name, inside))
        wiring = sorted((local[e.src], local[e.dst], e.index) for m in ids
                        for e in self.out_edges.get(m, ()) if e.dst in local)
        return tuple(nodes), tuple(wiring)

    def feeds(self, a: tuple[str, ...], b: tuple[str, ...]) -> bool:
        inside_b = set(self.members[b])
        return any(e.dst in inside_b for m in self.members[a]
                   for e in self.out_edges.get(m, ()))

    def runs(self, family: list[_Unit]) -> list[list[_Unit]]:
        """The runs of two or more identical units in a row (calls: each fed by the last)."""
        found, i = [], 0
        while i < len(family):
            run = [family[i]]
            first = self.signature(run[0].path, self.members[run[0].path])
            for nxt in family[i + 1:]:
                if (nxt.n != run[-1].n + 1
                        or self.signature(nxt.path, self.members[nxt.path]) != first
                        or (nxt.what == "call" and not self.feeds(run[-1].path, nxt.path))):
                    break
                run.append(nxt)
            i += len(run)
            if len(run) > 1:
                found.append(run)
        return found

    def merge(self, run: list[_Unit]) -> None:
        """Draw every unit of ``run`` by the first one's nodes."""
        rep = run[0]
        # the satellites roll up with the units if each unit has the same ones (the initial
        # state that feeds only the first step stays apart)
        with_sats = len({self.signature(u.path, self.members[u.path] + self.satellites[u.path])
                         for u in run}) == 1
        ids = {u.path: self.members[u.path] + (self.satellites[u.path] if with_sats else [])
               for u in run}
        for k, unit in enumerate(run):
            for a, b in zip(ids[rep.path], ids[unit.path]):
                for m in self.shown[b].members:
                    self.position[m] = (rep.path, k)
                if unit is not rep:
                    self.shown[a].members.extend(self.shown.pop(b).members)
            if unit is not rep:
                del self.units[unit.path]
        self.units[rep.path] = replace(rep, count=len(run), last=run[-1].index)


def _roll_notes(graph: Graph, view: _View, shown: dict[str, _Shown],
                units: dict[tuple[str, ...], _Unit],
                position: Mapping[str, tuple[tuple[str, ...], int]]) -> _View:
    """The rolled-up view: edges from one step to the next drawn inside the roll-up
    ("next step"), edges into and out of it saying which steps they carry."""
    where = {m: s.id for s in shown.values() for m in s.members}
    carried: dict[tuple[str, str], tuple[tuple[str, ...], set[int]]] = {}
    recurrent: dict[tuple[str, str], str] = {}
    for e in graph.edges:
        src, dst = position.get(e.src), position.get(e.dst)
        if src is None and dst is None:
            continue
        a, b = where[e.src], where[e.dst]
        if src is not None and dst is not None and src[0] == dst[0]:
            if src[1] != dst[1]:  # from one step to the next, drawn inside the roll-up
                recurrent[(a, b)] = f"next {units[src[0]].what}"
            continue
        roll, k = dst if dst is not None else src  # type: ignore[misc]
        carried.setdefault((a, b), (roll, set()))[1].add(k)
    notes = dict(view.edge_notes)
    for key, (roll, ks) in carried.items():
        notes[key] = _carried(ks, units[roll].count, units[roll].what)
    return _View(shown, where, units, notes, {**view.recurrent, **recurrent})


def _satellites(graph: Graph, view: _View, unit_of: Mapping[str, tuple[str, ...]],
                consumers: Mapping[str, list[str]]) -> dict[tuple[str, ...], list[str]]:
    """The ops (and constants) outside every unit, drawn beside one, that feed that unit only:
    ``x[t]`` sliced by a loop for the call of its cell at step t."""
    owner = dict(unit_of)
    found: dict[tuple[str, ...], list[str]] = defaultdict(list)
    changed = True
    while changed:  # consumers first (the graph lists inputs first), so one pass usually does
        changed = False
        for sid in reversed(list(view.shown)):
            s = view.shown[sid]
            if s.kind != "node" or sid in owner:
                continue
            if graph.node(sid).role not in ("intermediate", "constant"):
                continue
            users = {owner.get(c) for c in consumers.get(sid, ())}
            unit = users.pop() if len(users) == 1 else None
            if unit is not None and s.path == unit[:-1]:
                owner[sid] = unit
                found[unit].append(sid)
                changed = True
    place = {sid: i for i, sid in enumerate(view.shown)}
    for unit in found:  # in the order of the graph, as the units' own nodes
        found[unit].sort(key=place.__getitem__)
    return found


def _carried(ks: set[int], count: int, what: str) -> str:
    """Which of a roll-up's ``count`` steps (or calls) an edge into or out of it carries."""
    if len(ks) == count:
        return f"every {what} (× {count})"
    if ks == {0}:
        return f"first {what}"
    if ks == {count - 1}:
        return f"last {what}"
    return f"{len(ks)} of {count} {what}s"


def _fold_parallel(graph: Graph, view: _View) -> _View:
    """Fold identical ops side by side -- the same op, shape and place, fed by the same drawn
    nodes and feeding the same ones -- into the first: a loop's 20 slices ``x[t]`` feeding a
    collapsed cell are drawn as one node "× 20" (a view with modules collapsed only)."""
    outs, ins = _drawn_links(graph, view)
    first: dict[tuple, _Shown] = {}
    merged: set[str] = set()
    for sid, s in view.shown.items():
        n = graph.node(sid) if s.kind == "node" else None
        if n is None or n.is_leaf or len(s.members) > 1 or not ins[sid]:
            continue
        key = (n.op, n.shape, n.dtype, n.device, s.path, frozenset(ins[sid]),
               frozenset(outs[sid]))
        if key not in first:
            first[key] = s
            continue
        first[key].members.extend(s.members)
        first[key].count += 1
        merged.add(sid)
    if not merged:
        return view
    shown = {k: v for k, v in view.shown.items() if k not in merged}
    return replace(view, shown=shown, where={m: s.id for s in shown.values() for m in s.members})


def _fold_params(graph: Graph, view: _View) -> _View:
    """Draw the parameters of one module that feed the same drawn ops as one node ("params"):
    a weight and its bias side by side become one."""
    outs, _ = _drawn_links(graph, view)
    first: dict[tuple, _Shown] = {}
    merged: set[str] = set()
    for sid, s in view.shown.items():
        if s.kind != "node" or graph.node(sid).role not in ("parameter", "buffer"):
            continue
        key = (s.path, frozenset(outs[sid]))
        if key not in first:
            first[key] = s
            continue
        first[key].kind = "params"
        first[key].members.extend(s.members)
        merged.add(sid)
    if not merged:
        return view
    shown = {k: v for k, v in view.shown.items() if k not in merged}
    return replace(view, shown=shown, where={m: s.id for s in shown.values() for m in s.members})


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
    return replace(view, shown=shown, where={m: s.id for s in shown.values() for m in s.members})


def build_view(graph: Graph, modules: ModuleInfo | None, *, depth: int | None,
               max_nodes: int | None, rollup: bool, fold_params: bool = False
               ) -> tuple[_View, str | None]:
    """What a drawing of ``graph`` shows, and a note for the title when that is not every node.

    Modules become clusters; ``depth=k`` draws the modules ``k`` levels down as one box each;
    identical sibling boxes roll up (``rollup``); past ``max_nodes`` the view collapses one
    module level at a time until it fits, and if even one level is too many it keeps the nodes
    nearest the output (see :func:`lucid_viz.dot.to_dot` for the options in full).
    ``fold_params`` draws the parameters of one module that feed the same ops as one node.
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
    marks = _node_marks(graph, consumers)

    def view_at(k: int | None) -> _View:
        v = _build_view(graph, scopes, k, leaves, marks, types)
        if not rollup:
            return v
        v = _roll_units(graph, v, consumers, out_edges)
        if k is None:  # every op drawn: each one
            return v
        return _fold_parallel(graph, _roll_up(graph, v, types, out_edges))

    view = view_at(depth)
    if fold_params:
        view = _fold_params(graph, view)
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

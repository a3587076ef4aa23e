"""The same view of a graph as Mermaid text: ``Drawing.to_mermaid()`` / ``to_mermaid(graph)``.

GitHub and JupyterLab render a Markdown ```` ```mermaid ```` block as a chart, so a graph can be
pasted into an issue, a README or a notebook's Markdown cell without Graphviz.  The chart holds
what the DOT picture holds: the same view (:func:`lucid_viz.view.build_view`: module clusters,
collapsed boxes, roll-ups, the node guard), the same labels (names, shapes, dtypes, FLOPs with
their unit), the same device colours, and dashed edges where data moves between devices.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from lucid_viz.dot import (
    _OTHER,
    _ROLE_GROUP,
    DEFAULT_SHOW,
    PALETTES,
    _box_label,
    _node_label,
    _rolled_note,
    _title,
    box_output,
    options,
    sum_cost,
)
from lucid_viz.graph import Graph
from lucid_viz.view import DEFAULT_MAX_NODES, ModuleInfo, _Shown, build_view

__all__ = ["to_mermaid"]


def _text(label: str) -> str:
    """A Mermaid quoted label: lines joined with <br/>, quotes as entities."""
    return label.replace("&", "#amp;").replace('"', "#quot;").replace("\n", "<br/>")


def to_mermaid(
    graph: Graph,
    *,
    depth: int | None = None,
    max_nodes: int | None = DEFAULT_MAX_NODES,
    flops_unit: str = "MACs",
    backward: bool = False,
    show: Any = DEFAULT_SHOW,
    title: str | None = None,
    rollup: bool = True,
    rankdir: str = "TB",
    modules: ModuleInfo | None = None,
) -> str:
    """The Mermaid ``flowchart`` of ``graph``; the options mean what they mean for
    :func:`lucid_viz.dot.to_dot`.  Deterministic: the same graph gives the same text."""
    if rankdir not in ("TB", "LR", "BT", "RL"):
        raise ValueError(f"to_mermaid: rankdir must be TB, LR, BT or RL, got {rankdir!r}")
    o = options(graph, flops_unit, backward, modules, "to_mermaid", show)
    view, guard_note = build_view(graph, modules, depth=depth, max_nodes=max_nodes,
                                  rollup=rollup)
    consumers: dict[str, list[str]] = defaultdict(list)
    for e in graph.edges:
        consumers[e.src].append(e.dst)

    ids: dict[str, str] = {}

    def mid(key: str) -> str:  # Mermaid ids: letters, digits and _, unique
        if key not in ids:
            base = re.sub(r"\W", "_", key)
            ids[key] = base if base not in ids.values() else f"{base}_{len(ids)}"
        return ids[key]

    # one line: Mermaid wraps titles itself; the unit convention goes with it (no legend)
    head = " / ".join(_title(graph, o, title, guard_note, legend=False, width=10**6)
                      .split("\n")).replace('"', "'")
    lines = ["---", f'title: "{head}"', "---", f"flowchart {rankdir}"]
    styles: dict[str, tuple[str, str]] = {}  # class name -> (fill, line)
    members: dict[str, list[str]] = defaultdict(list)  # class name -> Mermaid ids

    def node_line(s: _Shown) -> str:
        if s.kind == "node":
            n = graph.node(s.id)
            group = _ROLE_GROUP.get(n.role, "op")
            device = n.device
            label = _node_label(graph, n, o, _rolled_note(graph, view, s, {}))
            opening, closing = {"parameter": ("[(", ")]"), "data": ("([", "])")}.get(
                group, ("[", "]"))
        else:
            out = box_output(graph, s, consumers)
            group, device = "module", out.device
            label = _box_label(graph, s, o, out)
            opening, closing = "[[", "]]"
        pal = PALETTES.get(device, _OTHER)
        cls = f"{device}_{group}"
        styles[cls] = (pal[group], pal["line"])
        members[cls].append(mid(s.id))
        return f'{mid(s.id)}{opening}"{_text(label)}"{closing}'

    # module clusters as nested subgraphs, children in order of first appearance
    tree: dict[tuple[str, ...], list[Any]] = defaultdict(list)
    inside: dict[tuple[str, ...], list[str]] = defaultdict(list)
    for s in view.shown.values():
        chain = s.path if s.kind == "node" else s.path[:-1]
        for i in range(len(chain)):
            if ("cluster", chain[:i + 1]) not in tree[chain[:i]]:
                tree[chain[:i]].append(("cluster", chain[:i + 1]))
        tree[chain].append(("shown", s))
        for i in range(1, len(chain) + 1):
            inside[chain[:i]].extend(s.members)

    def emit(path: tuple[str, ...], indent: str) -> None:
        for kind, item in tree[path]:
            if kind == "shown":
                lines.append(indent + node_line(item))
                continue
            name = ".".join(item)
            label = view.cluster_label(item, o.types)
            nodes = [graph.node(m) for m in inside[item]]
            total = sum_cost(nodes)
            if total is not None and o.counted and not all(n.is_leaf for n in nodes):
                label += "\n" + view.count_prefix(item) + total.text(o.unit)
            lines.append(f'{indent}subgraph {mid("cluster:" + name)}["{_text(label)}"]')
            emit(item, indent + "  ")
            lines.append(indent + "end")

    emit((), "  ")

    seen: dict[tuple[str, str], set[str]] = {}
    for e in graph.edges:
        a, b = view.where[e.src], view.where[e.dst]
        if a == b and (a, b) not in view.recurrent:
            continue
        moves = seen.setdefault((a, b), set())
        src, dst = graph.node(e.src), graph.node(e.dst)
        if src.device != dst.device:
            moves.add(dst.device)
    for (a, b), moves in seen.items():
        # which steps of a roll-up the edge carries, as the DOT picture says
        words = [w for w in (view.edge_notes.get((a, b)) or view.recurrent.get((a, b)),) if w]
        if moves:  # data copied to another device: dashed, labelled like the DOT picture
            words.insert(0, "→ " + ", ".join(sorted(moves)))
        text = f'|"{_text("; ".join(words))}"|' if words else ""
        arrow = "-.->" if moves or (a, b) in view.recurrent else "-->"
        lines.append(f"  {mid(a)} {arrow}{text} {mid(b)}")
    for cls in sorted(styles):
        fill, line = styles[cls]
        lines.append(f"  classDef {cls} fill:{fill},stroke:{line},color:#000")
        lines.append(f"  class {','.join(members[cls])} {cls}")
    return "\n".join(lines) + "\n"


def mermaid_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The drawing options Mermaid understands (highlights, notes and legends are DOT's)."""
    keep = ("depth", "max_nodes", "flops_unit", "backward", "show", "title", "rollup",
            "rankdir")
    return {k: v for k, v in options.items() if k in keep}

"""The same scene as Mermaid text: ``Drawing.to_mermaid()`` / ``to_mermaid(graph)``.

GitHub and JupyterLab render a Markdown ```` ```mermaid ```` block as a chart, so a graph can be
pasted into an issue, a README or a notebook's Markdown cell without Graphviz.  The chart holds
what the DOT picture holds -- it writes the same :class:`lucid_viz.scene.Scene`: the same view
(module clusters, collapsed boxes, roll-ups, the node guard), the same labels (names, shapes,
dtypes, FLOPs with their unit), the same device colours, and dashed edges where data moves
between devices.  Mermaid draws no legend: the unit convention goes into the title.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping
from typing import Any

from lucid_viz.graph import Graph
from lucid_viz.scene import DEFAULT_SHOW, Cluster, Item, Scene, build_scene
from lucid_viz.view import DEFAULT_MAX_NODES, ModuleInfo

__all__ = ["to_mermaid", "write_mermaid"]

_BRACKETS = {"parameter": ("[(", ")]"), "input": ("([", "])"), "constant": ("([", "])"),
             "box": ("[[", "]]"), "roll": ("[[", "]]"), "rest": ("[[", "]]")}


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
    where: str = "to_mermaid",
) -> str:
    """The Mermaid ``flowchart`` of ``graph``; the options mean what they mean for
    :func:`lucid_viz.dot.to_dot`.  Deterministic: the same graph gives the same text."""
    return write_mermaid(build_scene(
        graph, depth=depth, max_nodes=max_nodes, flops_unit=flops_unit, backward=backward,
        show=show, title=title, legend=False, rollup=rollup, rankdir=rankdir, modules=modules,
        where=where))


class _Ids:
    """Mermaid ids: letters, digits and _, unique."""

    def __init__(self) -> None:
        self.ids: dict[str, str] = {}

    def __call__(self, key: str) -> str:
        if key not in self.ids:
            base = re.sub(r"\W", "_", key)
            self.ids[key] = base if base not in self.ids.values() else f"{base}_{len(self.ids)}"
        return self.ids[key]


def write_mermaid(scene: Scene) -> str:
    """The Mermaid text of a scene."""
    mid = _Ids()
    head = " / ".join(scene.title.split("\n")).replace('"', "'")  # Mermaid wraps it itself
    lines = ["---", f'title: "{head}"', "---", f"flowchart {scene.rankdir}"]
    classes: dict[str, tuple[str, str]] = {}  # class name -> (fill, line)
    members: dict[str, list[str]] = defaultdict(list)  # class name -> Mermaid ids
    _write_items(scene.items, "  ", lines, mid, (classes, members))
    for link in scene.links:
        text = f'|"{_text(link.label)}"|' if link.label else ""
        arrow = "-.->" if link.kind in ("copy", "recurrent") else "-->"
        lines.append(f"  {mid(link.src)} {arrow}{text} {mid(link.dst)}")
    for cls in sorted(classes):
        fill, line = classes[cls]
        lines.append(f"  classDef {cls} fill:{fill},stroke:{line},color:#000")
        lines.append(f"  class {','.join(members[cls])} {cls}")
    return "\n".join(lines) + "\n"


def _write_items(items: list[Item | Cluster], indent: str, lines: list[str], mid: _Ids,
                 styles: tuple[dict[str, tuple[str, str]], dict[str, list[str]]]) -> None:
    classes, members = styles
    for item in items:
        if isinstance(item, Cluster):
            lines.append(f'{indent}subgraph {mid("cluster:" + item.name)}["{_text(item.label)}"]')
            _write_items(item.items, indent + "  ", lines, mid, styles)
            lines.append(indent + "end")
            continue
        opening, closing = _BRACKETS.get(item.form, ("[", "]"))
        cls = f"{item.device}_{item.group}"
        classes[cls] = (item.fill, item.line)
        members[cls].append(mid(item.id))
        lines.append(f'{indent}{mid(item.id)}{opening}"{_text(item.label)}"{closing}')


def mermaid_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """The drawing options Mermaid understands (highlights, notes and legends are DOT's)."""
    keep = ("depth", "max_nodes", "flops_unit", "backward", "show", "title", "rollup",
            "rankdir")
    return {k: v for k, v in options.items() if k in keep}

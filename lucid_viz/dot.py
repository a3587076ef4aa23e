"""The DOT writer: a :class:`lucid_viz.scene.Scene` as Graphviz DOT text.

What the picture says -- labels, clusters, edge notes, title, legend -- is the scene's business
(:mod:`lucid_viz.scene`), which nodes are drawn the view's (:mod:`lucid_viz.view`); this module
only spells it out in DOT.  The output is a pure function of the graph and the options: ids
come from the graph model (``n0``, ``n1`` ... and module paths), never from memory addresses,
so the same seeded run gives the same DOT text byte for byte.
"""

from __future__ import annotations

import html
from collections.abc import Iterable, Mapping
from typing import Any

from lucid_viz.graph import Graph
from lucid_viz.scene import (
    CROSS_DEVICE,
    DEFAULT_SHOW,
    HIGHLIGHT,
    LEGEND_WIDTH,
    PALETTES,
    Cluster,
    Item,
    Key,
    Link,
    Scene,
    build_scene,
    sum_cost,
)
from lucid_viz.view import DEFAULT_MAX_NODES, ModuleInfo

__all__ = ["PALETTES", "HIGHLIGHT", "CROSS_DEVICE", "FONT_PT", "sum_cost", "to_dot",
           "write_dot"]

FONT_PT = 11  # node text (pt): at natural size 14.7 CSS px, readable from the back of a hall
_SHAPES = {"op": ("box", "rounded,filled"), "parameter": ("cylinder", "filled"),
           "input": ("ellipse", "filled"), "constant": ("ellipse", "filled,dashed"),
           "box": ("box", "filled"), "roll": ("box3d", "filled"), "rest": ("box", "filled,dashed")}


def _q(text: str) -> str:
    """A DOT double-quoted string (``\\n`` breaks a line)."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _attrs(attrs: Mapping[str, str]) -> str:
    return ", ".join(f"{k}={_q(v)}" for k, v in attrs.items())


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
    totals: bool = True,
    grads: Mapping[str, Any] | None = None,
    layout_note: str | None = None,
    where: str = "to_dot",
    fold_params: bool = False,
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
    ``legend``: True (the kinds of node drawn, their devices when there are several, the key
    and the unit caption, on one line under the picture), False (none), or ``"key"`` (the key
    and the caption only: the backward stepper's frames).

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

    ``totals=False`` leaves the totals out of the title (the stepper's frames); ``grads``
    (node id -> gradient) shows those gradients instead of the graph's, a missing one as "not
    yet" (the gradients arrived so far in a stepper frame); ``layout_note`` is one more title
    line (what :func:`lucid_viz.draw` changed to fit the page); ``fold_params=True`` draws
    the parameters of one module that feed the same ops as one node.

    ``modules`` (from
    :func:`trace_with_modules`) places ops run in a container's own ``forward`` and names
    module classes; without it they are inferred from the graph.
    """
    return write_dot(build_scene(
        graph, depth=depth, max_nodes=max_nodes, highlight_nodes=highlight_nodes,
        highlight_edges=highlight_edges, notes=notes, key=key, flops_unit=flops_unit,
        backward=backward, show=show, title=title, legend=legend, rollup=rollup,
        rankdir=rankdir, modules=modules, totals=totals, grads=grads, layout_note=layout_note,
        where=where, fold_params=fold_params))


def write_dot(scene: Scene) -> str:
    """The DOT text of a scene.  The legend is the label of an invisible cluster around the
    whole picture, at its foot: one line under the picture, whichever way it is laid out."""
    lines = [
        "digraph lucid {",
        f"  graph [rankdir={scene.rankdir}, labelloc=t, fontname=\"Helvetica\", fontsize=14, "
        f"nodesep=0.25, ranksep=0.3, label={_q(scene.title)}];",
        # the margin leaves room for fonts wider than Graphviz's estimate (DejaVu Sans)
        f'  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize={FONT_PT}, '
        'penwidth=1, margin="0.11,0.05"];',
        '  edge [color="#666666", arrowsize=0.7, fontname="Helvetica", fontsize=11];',
    ]
    indent = "  "
    if scene.legend:
        lines.append('  subgraph "cluster_legend" {')
        lines.append(f"    label=<{_legend_table(scene.legend, scene.legend_width)}>; "
                     "labelloc=b; labeljust=c; "
                     'peripheries=0; fontsize=11;')
        indent = "    "
    _write_items(scene.items, indent, lines)
    if scene.legend:
        lines.append("  }")
    lines += ["  " + _edge_stmt(link) for link in scene.links]
    lines.append("}")
    return "\n".join(lines) + "\n"


def _node_stmt(item: Item) -> str:
    shape, style = _SHAPES[item.form]
    attrs = {"label": item.label, "fillcolor": item.fill, "color": item.line,
             "tooltip": item.tooltip}
    if shape != "box" or style != "rounded,filled":
        attrs.update(shape=shape, style=style)
    if item.output:
        attrs["peripheries"] = "2"
    if item.highlight:
        attrs["penwidth"] = "3"
    elif item.group == "communication":  # a collective: drawn apart from the devices' ops
        attrs["penwidth"] = "2"
    return f"{_q(item.id)} [{_attrs(attrs)}];"


def _write_items(items: list[Item | Cluster], indent: str, lines: list[str]) -> None:
    for item in items:
        if isinstance(item, Item):
            lines.append(indent + _node_stmt(item))
            continue
        lines.append(f"{indent}subgraph {_q('cluster_' + item.name)} {{")
        # (peripheries: the legend's cluster around the picture has none; these do)
        lines.append(f'{indent}  label={_q(item.label)}; style="rounded"; color="#9a9a9a"; '
                     'peripheries=1; fontsize=12; labeljust=l; labelloc=t;')
        _write_items(item.items, indent + "  ", lines)
        lines.append(indent + "}")


def _edge_stmt(link: Link) -> str:
    attrs: dict[str, str] = {}
    if link.label:
        attrs["label"] = " " + link.label
    if link.kind == "recurrent":  # back to the top of the rolled-up step: not a rank
        attrs.update(style="dashed", constraint="false")
    elif link.kind == "copy":
        attrs.update(style="bold,dashed", color=CROSS_DEVICE, fontcolor=CROSS_DEVICE)
    if link.highlight:
        attrs.update(color=link.highlight, penwidth="2.5")
    return f"{_q(link.src)} -> {_q(link.dst)}" + (f" [{_attrs(attrs)}]" if attrs else "") + ";"


def _legend_cells(k: Key) -> str:
    text = html.escape(k.text)
    if k.kind == "fill":
        swatch = f'<TD BGCOLOR="{k.colour}" COLOR="{k.line}" BORDER="1" WIDTH="16"> </TD>'
    elif k.kind == "border":
        swatch = f'<TD COLOR="{k.colour}" BORDER="3" WIDTH="16"> </TD>'
    elif k.kind == "edge":
        dashed = "- - ▶" if "dashed" in k.line else "──▶"
        swatch = f'<TD><FONT COLOR="{k.colour}">{dashed}</FONT></TD>'
    else:
        return f"<TD>{text}</TD>"
    return f'{swatch}<TD ALIGN="LEFT">{text}</TD>'


def _legend_table(keys: list[Key], width: int = LEGEND_WIDTH) -> str:
    """The legend as an HTML-like table: entries side by side, a new row past ``width``
    characters."""
    rows: list[list[Key]] = [[]]
    used = 0
    for k in keys:
        size = len(k.text) + 4
        if rows[-1] and used + size > width:
            rows.append([])
            used = 0
        rows[-1].append(k)
        used += size
    body = "".join("<TR><TD><TABLE BORDER=\"0\" CELLSPACING=\"4\"><TR>"
                   + "".join(_legend_cells(k) for k in row) + "</TR></TABLE></TD></TR>"
                   for row in rows)
    return f'<TABLE BORDER="0" CELLSPACING="0">{body}</TABLE>'

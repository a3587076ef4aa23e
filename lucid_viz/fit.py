"""Pictures that fit the room: a drawing is laid out so that, scaled to the notebook's width,
its node text stays readable from the back of a lecture hall.

A notebook shows an SVG at most as wide as its output area, scaled down to it when wider
(:func:`scale_to_page` makes every picture do so, in JupyterLab, nbviewer and exported HTML
alike).  Scaling shrinks the text with the picture, so a wide graph drawn as it is would have
unreadable nodes.  On a 1024x768 projector the output area is 844 CSS px wide, and 592 px
with JupyterLab's file browser open (:data:`PAGE_PX`); node text must stay at least
:data:`FLOOR_PX` there.  A picture whose text would fall below that is laid out again, in the
first of these ways that fits (:func:`layouts`):

1. the other way round (left to right instead of top to bottom): a graph wide because of many
   inputs side by side -- the weights of a rolled-up recurrent cell -- stacks them instead;
2. a layer's parameters drawn as one node (a weight and its bias side by side);
3. fewer details per node (name and count, no shape or dtype line; then the name alone,
   the clusters keeping the counts), each both ways round and with the parameters as one;
4. modules collapsed one level at a time (``depth``), each of the above again;
5. the node-count guard at a small size (the nodes nearest the output).

The title says what was changed, so nothing is left out silently.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from lucid_viz.dot import FONT_PT
from lucid_viz.graph import Graph
from lucid_viz.view import ModuleInfo

__all__ = ["FLOOR_PX", "PAGE_PX", "TALL_PX", "layouts", "node_text_px", "page_height_px",
           "scale_to_page", "svg_size"]

#: the narrowest notebook output area a picture must fit (CSS px): JupyterLab at 1024x768
#: with the file browser open (844 px with it closed)
PAGE_PX = 592
#: the smallest node text a picture may have there (CSS px)
FLOOR_PX = 12.0
#: taller than this (CSS px, one and a half 768-px screens), a picture that fits tries the
#: other way round and fewer details for a shorter one (it never collapses for height)
TALL_PX = 1152
_PX_PER_PT = 4 / 3
_SIZE = re.compile(r'<svg (?:style="[^"]*" )?width="([\d.]+)pt" height="([\d.]+)pt"')
_SCALED = re.compile(r'<svg width="100%" style="[^"]*"\s+'
                     r'viewBox="[-\d.]+ [-\d.]+ ([\d.]+) ([\d.]+)"')
_FLIP = {"TB": "LR", "LR": "TB", "BT": "RL", "RL": "BT"}
_WORDS = {"LR": "laid out left to right", "RL": "laid out right to left",
          "TB": "laid out top to bottom", "BT": "laid out bottom to top"}
#: what "fewer details" keeps of a node's lines, and then what "fewest" keeps
_BRIEF = ("name", "flops", "data", "grad")
_BARE = ("name", "data", "grad")
_LEAST = ("name", "grad")  # (a stepper frame: the gradients are its story)


def svg_size(svg: str) -> tuple[float, float]:
    """The picture's natural width and height in CSS px (Graphviz writes points)."""
    m = _SIZE.search(svg) or _SCALED.search(svg)  # (scaled: the viewBox is in pt)
    if m is None:
        raise ValueError("svg_size: not a Graphviz SVG (no width/height in pt)")
    return float(m[1]) * _PX_PER_PT, float(m[2]) * _PX_PER_PT


def node_text_px(svg: str, width_px: float = PAGE_PX, height_px: float | None = None) -> float:
    """How tall node text is (CSS px) once the picture is scaled into ``width_px`` (and
    ``height_px``, for a box of fixed height such as a stepper frame); never scaled up."""
    if _SIZE.search(svg) is None and _SCALED.search(svg) is None:  # nothing to measure
        return FONT_PT * _PX_PER_PT
    w, h = svg_size(svg)
    scale = min(1.0, width_px / w, height_px / h if height_px else 1.0)
    return FONT_PT * _PX_PER_PT * scale


def page_height_px(svg: str, width_px: float = PAGE_PX) -> float:
    """How tall the picture is (CSS px) once scaled into ``width_px``."""
    w, h = svg_size(svg)
    return h * min(1.0, width_px / w)


def scale_to_page(svg: str) -> str:
    """The SVG scaled to its container wherever it is shown, its proportions kept (its
    ``viewBox``).

    JupyterLab shows an SVG output as an ``<img>`` that keeps the picture's own width, however
    narrow the page: a picture wider than the narrowest page (:data:`PAGE_PX`) is therefore
    made as wide as its container (``width="100%"``; at most half as large again as its
    natural size where the page allows an inline one to grow); a narrower one keeps its size,
    and shrinks only if its container is narrower still."""
    m = _SIZE.search(svg)
    if m is None:
        return svg
    width = float(m[1]) * _PX_PER_PT
    if width <= PAGE_PX:
        return re.sub(r"<svg (?!style=)", '<svg style="max-width:100%;height:auto" ', svg,
                      count=1)
    return (svg[:m.start()] + f'<svg width="100%" style="max-width:{1.5 * width:.0f}px;'
            'height:auto"' + svg[m.end():])


def _deepest(graph: Graph, modules: ModuleInfo | None) -> int:
    paths = [n.module for n in graph.nodes if n.module]
    paths += [n.name.rsplit(".", 1)[0] for n in graph.nodes
              if n.role in ("parameter", "buffer") and n.name and "." in n.name]
    if modules is not None:
        paths += [p for p in modules.types if p]
    return max((len(p.split(".")) for p in paths), default=0)


def _ways(options: dict[str, Any]) -> Iterator[tuple[dict[str, Any], list[str]]]:
    """At each level of detail (as asked, fewer, fewest): as it is, the other way round, and
    with a layer's parameters drawn as one node."""
    rankdir = options.get("rankdir", "TB")
    show = options.get("show", ("name", "shape", "dtype", "flops"))
    show = (show,) if isinstance(show, str) else tuple(show)
    flip = _FLIP[rankdir]
    levels = [(show, [])]
    for keep in (_BRIEF, _BARE, _LEAST):
        fewer = tuple(s for s in show if s in keep) or ("name",)
        if fewer != levels[-1][0]:
            left = ", ".join(s for s in show if s not in keep)
            levels.append((fewer, [f"{left} left out of the nodes"]))
    for level, (fewer, words) in enumerate(levels):
        change = {"show": fewer} if level else {}
        if level:
            yield change, words
        yield {**change, "rankdir": flip}, [_WORDS[flip], *words]
        yield {**change, "fold_params": True}, ["a layer's parameters drawn as one node", *words]


def layouts(graph: Graph, modules: ModuleInfo | None, options: dict[str, Any]
            ) -> Iterator[tuple[dict[str, Any], str | None]]:
    """The layouts to try, in order: (options to change, the title's note on the change)."""
    yield {}, None
    for change, words in _ways(options):
        yield change, " and ".join(words) + " to fit the page"
    depth = options.get("depth")
    deepest = _deepest(graph, modules)
    start = deepest if depth is None else min(depth - 1, deepest)
    for k in range(start, 0, -1):
        collapsed = {"depth": k}
        yield collapsed, f"modules drawn {k} level{'s' * (k > 1)} deep to fit the page"
        for change, words in _ways(options):
            note = " and ".join([f"modules drawn {k} level{'s' * (k > 1)} deep", *words])
            yield {**collapsed, **change}, note + " to fit the page"
    if options.get("max_nodes", 1) is not None:
        yield {"max_nodes": 24}, None  # the guard's own note says what it kept

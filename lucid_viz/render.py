"""Show the graph model in a notebook: ``draw(...)`` and the :class:`Drawing` it returns.

``draw(tensor)``, ``draw(graph)`` or ``draw(model, x)`` builds the view
(:mod:`lucid_viz.view`: which nodes, clusters and collapsed modules are shown), writes it as
DOT (:mod:`lucid_viz.dot`) and wraps it in a :class:`Drawing` that Jupyter displays as SVG.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lucid.tensor import Tensor
from lucid_viz import fit, graphviz_bin
from lucid_viz.dot import HIGHLIGHT, PALETTES, sum_cost, to_dot
from lucid_viz.graph import Graph, trace
from lucid_viz.mermaid import mermaid_options, to_mermaid
from lucid_viz.view import ModuleInfo, trace_with_modules

__all__ = [
    "PALETTES",
    "HIGHLIGHT",
    "Drawing",
    "ModuleInfo",
    "draw",
    "to_dot",
    "to_mermaid",
    "trace_with_modules",
]


# -- draw / Drawing ------------------------------------------------------------------------

_DOT_OPTIONS = ("depth", "max_nodes", "highlight_nodes", "highlight_edges", "notes",
                "flops_unit", "backward", "show", "title", "legend", "rollup", "rankdir", "fit")


class Drawing:
    """A drawn graph: ``.dot()``, ``.svg()``, ``.save(path)``, and rich display in Jupyter.

    The picture fits the notebook's width with node text large enough to read from the back
    of a room (:mod:`lucid_viz.fit`): when the layout asked for would not, the drawing lays
    itself out another way -- left to right, fewer details per node, modules collapsed -- and
    its title says so (``fit=False`` keeps the layout asked for).  Graphviz runs on the first
    ``.dot()``, ``.svg()`` or display, and its result is kept.  Displaying never raises:
    without a working Graphviz the notebook shows the DOT source and a one-line hint instead
    of the picture.
    """

    def __init__(self, graph: Graph, *, modules: ModuleInfo | None = None,
                 **options: Any) -> None:
        unknown = sorted(set(options) - set(_DOT_OPTIONS))
        if unknown:
            raise TypeError(f"draw: unknown option(s) {', '.join(unknown)}; "
                            f"expected some of {', '.join(_DOT_OPTIONS)}")
        self.graph = graph
        self.modules = modules
        self.fit = options.pop("fit", True)
        self.options = options
        # made now, so that a wrong option fails at draw(), not at display
        self._asked = to_dot(graph, modules=modules, where="draw", **options)
        self._chosen: tuple[str, str | None] | None = None  # (DOT, SVG) once laid out

    def _layout(self) -> tuple[str, str | None]:
        """The first layout whose node text stays readable at the page's width (the one
        asked for when none does better); its SVG, or None without Graphviz."""
        if self._chosen is None:
            try:
                self._chosen = self._first_that_fits()
            except graphviz_bin.GraphvizNotFound:
                self._chosen = (self._asked, None)
        return self._chosen

    def _first_that_fits(self) -> tuple[str, str]:
        """Readable at the page's width first; then, among the layouts with the same view
        (the other way round, fewer details), the shortest if the first is taller than
        :data:`lucid_viz.fit.TALL_PX`."""
        best: tuple[float, str, str] | None = None
        tall: tuple[float, str, str] | None = None
        tries = fit.layouts(self.graph, self.modules, self.options) if self.fit else [({}, None)]
        for change, note in tries:
            if tall is not None and ("depth" in change or "max_nodes" in change):
                break  # a tall picture is no reason to show less of the graph
            if tall is not None and "flops" not in change.get("show", ("flops",)):
                continue  # nor to drop the counts
            dot = self._asked if not change else to_dot(
                self.graph, modules=self.modules, where="draw", layout_note=note,
                **{**self.options, **change})
            svg = graphviz_bin.render(dot, "svg").decode("utf-8")
            size = fit.node_text_px(svg)
            if size >= fit.FLOOR_PX:
                height = fit.page_height_px(svg)
                if height <= fit.TALL_PX:
                    return dot, svg
                if tall is None or height < tall[0]:
                    tall = (height, dot, svg)
            elif best is None or size > best[0] + 0.5:  # (a layout must be clearly better)
                best = (size, dot, svg)
        chosen = tall or best
        assert chosen is not None
        return chosen[1], chosen[2]

    def dot(self) -> str:
        """The Graphviz DOT source of the picture as drawn."""
        return self._layout()[0]
    def to_mermaid(self) -> str:
        """The same picture as Mermaid text, for a ```` ```mermaid ```` block on GitHub or in
        a Markdown cell (highlights and notes are the DOT picture's only)."""
        return to_mermaid(self.graph, modules=self.modules, where="draw",
                          **mermaid_options(self.options))

    def svg(self) -> str:
        """The SVG picture, scaled to the width of wherever it is shown (runs Graphviz; see
        :mod:`lucid_viz.graphviz_bin`)."""
        svg = self._layout()[1]
        if svg is None:  # no Graphviz: say so, as render() does
            graphviz_bin.dot_binary()
            raise graphviz_bin.GraphvizNotFound(graphviz_bin.HINT)
        return fit.scale_to_page(svg)

    def png(self) -> bytes:
        return graphviz_bin.render(self.dot(), "png")

    def save(self, path: str | Path) -> Path:
        """Write the drawing; the suffix picks the format: ``.svg``, ``.png`` or ``.dot``."""
        path = Path(path)
        suffix = path.suffix.lower()
        if suffix in (".dot", ".gv"):
            path.write_text(self.dot(), encoding="utf-8")
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
            bundle = {"text/plain": f"{_hint(err)}\n\n{self._asked}"}
        if include:
            bundle = {k: v for k, v in bundle.items() if k in include} or bundle
        if exclude:
            bundle = {k: v for k, v in bundle.items() if k not in exclude} or bundle
        return bundle

    def __repr__(self) -> str:
        ops = [n for n in self.graph.nodes if not n.is_leaf]
        cost = sum_cost(ops)
        counted = f", {cost.text()}" if ops and cost is not None else ""
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
    ``highlight_edges``, ``notes``, ``flops_unit``, ``backward``, ``show`` (what each node
    shows: ``show=("data", "grad")`` puts values and gradients on the nodes), ``title``,
    ``legend``, ``rollup`` (True: identical blocks, and the time steps of a recurrent layer,
    are drawn once, "LSTM step × 32"; False: every one), ``rankdir``, and ``fit`` (True: a
    picture too wide to read at the page's width lays itself out another way and says so).
    A model that returns a tuple (``nn.LSTM``) is drawn from its first item.  In a notebook
    the result displays as SVG, scaled to the page's width.
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

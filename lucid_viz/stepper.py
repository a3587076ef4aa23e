"""The backward stepper: the backward pass replayed one node at a time, as data, then as pictures.

``step_backward(loss)`` runs Lucid's real backward walk once (the engine's own
``run_backward``), watching it: a hook on every node records the gradient that arrives there
(dL/d node, complete when the walk reaches the node), and the walk's ``observe`` callback
reports what each op's backward rule sends to its inputs.  Nothing is recomputed here, and
nothing lands in any ``.grad``: the replay is a look, not a training step.

Frame ``k`` is the ``k``-th node of the walk's order (``Graph.order``, which is
``lucid.engine.walk.topological_order``): the node being processed, its op's local
derivative rule (the first paragraph of the op class's docstring, where each op states it),
the gradient arriving, the gradients leaving along each input edge -- and, where an input was
broadcast in the forward pass, the sum that brings its gradient back to the input's shape, with
the values before and after -- and the backward count (MACs and FLOPs) spent so far.
Frames are plain data (:class:`Frame`); the pictures -- an SVG per frame with
the node and its edges highlighted, an ipywidgets player, a self-contained HTML animation --
are drawn from them on demand and cached.
"""

from __future__ import annotations

import html
import inspect
import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from lucid.backends import BACKENDS, get_backend
from lucid.cost import Cost
from lucid.engine.walk import run_backward
from lucid.shapes import broadcasts_to, sum_to
from lucid.tensor import Tensor
from lucid_viz import fit, graphviz_bin, render
from lucid_viz.graph import Graph, summed_axes, trace

__all__ = ["GradView", "OutGrad", "Frame", "Stepper", "step_backward", "local_rule"]

#: tensors with at most this many elements show every value; larger ones a summary
FULL_VALUES = 16
#: the player's fixed layout (CSS px): the picture and, beside it, the gradient panel, both this
#: high; with the controls a frame fits the notebook of a 1024x768 projector and the page
#: never jumps from frame to frame
PICTURE_HEIGHT = 560
PANEL_HEIGHT = 560
#: the picture's share of the player's width (the panel has the rest)
PICTURE_SHARE = 0.6
#: the height of the legend line under the picture (CSS px)
LEGEND_HEIGHT = 44
#: the output width the frames are laid out for: JupyterLab at 1024x768 (CSS px)
PLAYER_PX = 844
#: what each node of a frame shows: its name, its value and the gradient arrived so far
FRAME_SHOW = ("name", "data", "grad")

DONE = "#2ca02c"  # border of a node whose gradient is complete and already passed on
PASSED = "#f0a0a0"  # an edge that has already carried its gradient
#: the legend of a frame: what each highlight means, and which way the gradient goes
KEY = (
    (render.HIGHLIGHT, "at work"),
    (DONE, "done"),
    (render.HIGHLIGHT, "edge: gradient flowing (against the arrow)"),
    (PASSED, "edge: gradient passed"),
)


@dataclass(frozen=True)
class GradView:
    """A gradient as a class reads it: every value when small, shape + L2 norm + range when not."""

    shape: tuple[int, ...]
    norm: float
    min: float
    max: float
    values: Any = None  # nested lists of floats (a float for a scalar); None when summarised

    @classmethod
    def of(cls, array: np.ndarray) -> GradView:
        a = np.asarray(array)
        if np.iscomplexobj(a):
            a = a.real
        a = a.astype(np.float64, copy=False)
        if a.size == 0:
            return cls(tuple(a.shape), 0.0, 0.0, 0.0, [])
        return cls(
            shape=tuple(int(s) for s in a.shape),
            norm=float(np.sqrt(np.sum(a * a))),
            min=float(a.min()),
            max=float(a.max()),
            values=a.tolist() if a.size <= FULL_VALUES else None,
        )

    def text(self) -> str:
        if self.values is not None:
            return f"{_fmt_values(self.values)}  shape {self.shape}"
        return (f"shape {self.shape}  |g| = {self.norm:.4g}  "
                f"min {self.min:.4g}  max {self.max:.4g}")


def _fmt_values(values: Any) -> str:
    """Nested lists of floats as ``[[0.25, -1.5], [3, 0]]``, four significant digits each
    (a negative zero reads 0: the sign of a zero means nothing to a reader)."""
    if isinstance(values, list):
        return "[" + ", ".join(_fmt_values(v) for v in values) + "]"
    return f"{values + 0.0:.4g}"


@dataclass(frozen=True)
class OutGrad:
    """The gradient one node sends to one input (``index`` counts the op's inputs from 0).

    When the input was broadcast in the forward pass (a scalar bias added to a vector), the
    rule's gradient has the output's shape and is summed over ``summed`` (axes of that shape)
    down to the input's shape: ``before`` is the rule's gradient, ``grad`` the sum.
    """

    src: str  # the input's node id
    index: int
    grad: GradView | None  # None: the input needs no gradient (a constant) or the rule gave none
    summed: tuple[int, ...] = ()
    before: GradView | None = None

    def text(self) -> str:
        if self.grad is None:
            return "nothing (needs no gradient)"
        if self.before is None:
            return self.grad.text()
        axes = ", ".join(map(str, self.summed))
        plural = "axes" if len(self.summed) > 1 else "axis"
        total = ""
        if self.before.values is not None and self.grad.values is not None and \
                not self.grad.shape and len(self.before.shape) == 1:
            total = " = " + " + ".join(f"{v:.4g}" for v in self.before.values)
        return (f"sum over {plural} {axes}: {_shape_text(self.before.shape)} → "
                f"{_shape_text(self.grad.shape)}: {_values_text(self.before)} → "
                f"{_values_text(self.grad)}{total} (the input was broadcast to "
                f"{_shape_text(self.before.shape)} in the forward pass, so its gradient is "
                "the sum of the rule's gradient over the copies)")


def _values_text(view: GradView) -> str:
    return _fmt_values(view.values) if view.values is not None else view.text()


def _shape_text(shape: tuple[int, ...]) -> str:
    return "()" if not shape else "(" + ", ".join(map(str, shape)) + ("," if len(shape) == 1
                                                                      else "") + ")"


@dataclass(frozen=True)
class Frame:
    """One step of the backward walk, as plain data."""

    step: int  # 0-based position in the walk
    node: str  # the node being processed
    op: str  # its op's class name, or its role for a leaf ("parameter", "input")
    label: str  # "n3 Tanh (3, 5) Float32", "n1 parameter fc1.weight (4, 3) Float32"
    rule: str  # the local derivative rule, from the op's docstring
    grad_in: GradView | None  # dL/d(node); None when no gradient reached it
    grads_out: tuple[OutGrad, ...]  # one per input of the op (empty for a leaf)
    edges: tuple[tuple[str, str], ...]  # (input, node): the edges that carry gradients back
    flops_bwd: Cost | None  # this op's backward count (None: the graph was not counted)
    flops_bwd_total: Cost | None  # running sum over frames 0..step

    def text(self, names: dict[str, str] | None = None) -> str:
        """The frame as a few lines of text (the panel beside the picture, and the fallback)."""
        names = names or {}
        lines = [f"step {self.step + 1}: {self.label}", f"  rule: {self.rule}"]
        arriving = "no gradient reached this node" if self.grad_in is None else \
            self.grad_in.text()
        lines.append(f"  {_d(names.get(self.node, self.node))} arriving: {arriving}")
        for out in self.grads_out:
            who = names.get(out.src, out.src)
            lines.append(f"  -> {who} (input {out.index}): {out.text()}")
        if self.flops_bwd_total is not None:  # a graph not counted says nothing of FLOPs
            lines.append(f"  backward work: this node {_count(self.flops_bwd)}, "
                         f"running total {_count(self.flops_bwd_total)}")
        return "\n".join(lines)


def _d(who: str) -> str:
    """``dL/dw`` for a name, ``dL/d(Mul n2)`` for a node called by its kind and id."""
    return f"dL/d{who}" if " " not in who else f"dL/d({who})"


def _count(c: Cost | None) -> str:
    return "— (not counted)" if c is None else c.text()


def local_rule(op: Any) -> str:
    """The op's local derivative rule: the first paragraph of its class docstring, one line."""
    doc = inspect.getdoc(type(op)) or ""
    first = doc.split("\n\n")[0]
    text = " ".join(first.split()).rstrip(":")
    return text or f"{type(op).__name__}: no rule documented"


_LEAF_RULES = {
    "parameter": "a leaf: dL/dθ is complete here; backward() adds it to .grad",
    "input": "a leaf: dL/dx is complete here; backward() adds it to .grad",
    "buffer": "a leaf (buffer): no gradient flows into buffers",
    "constant": "a leaf (constant): no gradient flows into constants",
}


def step_backward(loss: Tensor | Graph, *, depth: int | None = None,
                  retain_graph: bool = True) -> Stepper:
    """Replay ``loss``'s backward pass one node at a time; returns a :class:`Stepper`.

    ``loss`` is a tensor (any shape; the seed is ones, as in ``loss.backward()``) or a
    :class:`~lucid_viz.graph.Graph` from ``trace(...)`` (which also names parameters and layers).
    Build it inside ``lucid.count_flops()`` to see the running backward FLOPs ("—" otherwise).
    The walk is Lucid's real one; no ``.grad`` is touched.  ``retain_graph=False`` releases
    the graph afterwards, as a plain ``backward()`` would.  ``depth`` is passed to the renderer
    (module clusters).
    """
    if depth is not None and (not isinstance(depth, int) or depth < 1):
        raise ValueError(f"step_backward: depth must be None (every op) or an int >= 1, got "
                         f"{depth!r}")
    if isinstance(loss, Graph):
        graph = loss
        root = graph.tensor(graph.output)
    elif isinstance(loss, Tensor):
        root = loss
        graph = trace(loss)
    else:
        raise TypeError(f"step_backward: expected a Tensor or a Graph, got {type(loss).__name__}")
    if root._op is not None and root._op.versions is None:  # backward() ran and freed it
        raise RuntimeError(
            "step_backward: backward() has already run on this graph and released it, so "
            "there is no walk left to step through. Call step_backward(loss) before "
            "loss.backward() (it touches no .grad), or run the forward pass again; "
            "loss.backward(retain_graph=True) would keep the graph.")
    if not root.requires_grad or not graph.order:
        raise RuntimeError(
            f"step_backward: the tensor (shape {root.shape}) does not require grad, so there is "
            "no backward pass to step through. Create the inputs with requires_grad=True and run "
            "the forward pass outside lucid.no_grad()."
        )
    arriving, sent, before = _replay(root, graph, retain_graph)
    return Stepper(graph, _frames(graph, arriving, sent, before), depth=depth,
                   arrived=arriving)


def _numpy(array: Any, device: str) -> np.ndarray:
    if isinstance(array, np.ndarray):  # fallback ops compute their backward with NumPy
        return array.copy()
    return np.array(BACKENDS[device].to_numpy(array), copy=True)


def _replay(root: Tensor, graph: Graph, retain_graph: bool) -> tuple[dict, dict, dict]:
    """Run the engine's backward once and record what it computes at each node.

    Returns ``arriving`` (node id -> dL/dnode as NumPy), ``sent`` (node id -> the gradient
    each input received from it, already summed to the input's shape as the engine does) and
    ``before`` (node id -> each gradient as the rule returned it, before that sum).
    """
    arriving: dict[str, np.ndarray] = {}
    reached: list[str] = []
    sent: dict[str, list[np.ndarray | None]] = {}
    before: dict[str, list[np.ndarray | None]] = {}
    handles = []
    ids: dict[int, str] = {}
    for nid in graph.order:
        t = graph.tensor(nid)
        ids[id(t)] = nid

        def hook(g: Tensor, _nid: str = nid, _device: str = t.device) -> None:
            reached.append(_nid)
            arriving[_nid] = _numpy(g.data, _device)

        handles.append(t.register_hook(hook))  # runs after any hooks the user registered

    def observe(node: Tensor, grads: tuple) -> None:  # the engine shows us each rule's result
        nid = ids[id(node)]
        before[nid], sent[nid] = _sent(node, grads)

    backend = get_backend(root.device)
    try:
        # ``capture={}``: the engine's functional mode (autograd.grad) -- no .grad is written.
        run_backward(root, backend.xp.ones_like(root.data), retain_graph=retain_graph,
                     capture={}, observe=observe)
    finally:
        for h in handles:
            h.remove()
    expected = [nid for nid in graph.order if nid in arriving]
    if reached != expected:  # the graph model and the engine disagree: a bug, say so
        raise RuntimeError(f"step_backward: the engine visited {reached}, the graph says "
                           f"{expected}")
    return arriving, sent, before


def _sent(node: Tensor, grads: tuple) -> tuple[list, list]:
    """What each input of ``node`` receives from its rule, as NumPy: as the rule returned it,
    and summed down to the input's shape where it came back broadcast (as the engine does
    next)."""
    raw: list[np.ndarray | None] = []
    out: list[np.ndarray | None] = []
    for parent, pg in zip(node._prev, grads):
        if pg is None or not parent.requires_grad:
            raw.append(None)
            out.append(None)
            continue
        a = _numpy(pg, parent.device)  # a gradient lives on its input's device
        raw.append(a)
        if a.shape != parent.shape and broadcasts_to(parent.shape, a.shape):
            a = sum_to(np, a, parent.shape)
        out.append(a)
    return raw, out


def _out_grad(src: str, k: int, grad: Any, raw: Any) -> OutGrad:
    if grad is None:
        return OutGrad(src, k, None)
    if raw is not None and raw.shape != grad.shape:  # summed down: show both
        return OutGrad(src, k, GradView.of(grad), summed_axes(tuple(grad.shape), raw.shape),
                       GradView.of(raw))
    return OutGrad(src, k, GradView.of(grad))


def _frames(graph: Graph, arriving: dict, sent: dict, before: dict) -> list[Frame]:
    frames: list[Frame] = []
    total: Cost | None = Cost()
    for step, nid in enumerate(graph.order):
        node = graph.node(nid)
        t = graph.tensor(nid)
        shape = f"{node.shape} {node.dtype}"
        if t._op is None:
            label = f"{node.title} ({node.role}) {shape}" if node.name else \
                f"{node.title} {shape}"
            rule = _LEAF_RULES.get(node.role, "a leaf")
            flops: Cost | None = Cost()
            outs: tuple[OutGrad, ...] = ()
        else:
            label = f"{node.title} {shape}" + (f" in {node.module}" if node.module else "")
            rule = local_rule(t._op)
            flops = node.cost(backward=True)
            grads = sent.get(nid)
            raws = before.get(nid)
            inputs = graph.inputs_of(nid)
            outs = tuple(
                _out_grad(src, k, None if grads is None else grads[k],
                          None if raws is None else raws[k])
                for k, src in enumerate(inputs)
            )
        if flops is None or total is None:
            total = None
        else:
            total = total + flops
        edges = tuple(dict.fromkeys((o.src, nid) for o in outs if o.grad is not None))
        g = arriving.get(nid)
        frames.append(Frame(
            step=step, node=nid, op=node.op, label=label, rule=rule,
            grad_in=None if g is None else GradView.of(g), grads_out=outs, edges=edges,
            flops_bwd=flops, flops_bwd_total=total,
        ))
    return frames


class Stepper:
    """The frames of one backward pass, and the ways to look at them.

    ``frames`` is the data.  Steps are numbered as the player numbers them, 1 to n:
    ``frame_text(k)``, ``frame_dot(k)`` and ``frame_svg(k)`` give step ``k`` (pictures are
    cached); ``widget()`` is the ipywidgets player; ``save_html(path)`` a player without a
    kernel.  Each picture shows every node's value and the gradients that have arrived so far,
    the node at work in red, and is laid out once for all frames so that its text stays
    readable at the player's size (:mod:`lucid_viz.fit`).  Displayed in a notebook it is the
    widget, with the final frame as a static SVG for viewers that cannot run widgets (GitHub,
    nbviewer).
    """

    def __init__(self, graph: Graph, frames: list[Frame], depth: int | None = None,
                 arrived: dict[str, Any] | None = None) -> None:
        self.graph = graph
        self.frames = frames
        self.depth = depth
        self.arrived = arrived or {}  # node id -> dL/dnode, as NumPy
        self._dot: dict[int, str] = {}
        self._svg: dict[int, str | None] = {}
        self._layout: dict[str, Any] | None = None  # what the frames change to fit
        self.names = {n.id: n.title for n in graph.nodes}  # as the pictures call them
        self.counted = frames[-1].flops_bwd_total is not None if frames else False

    def __len__(self) -> int:
        return len(self.frames)

    def __repr__(self) -> str:
        work = f", backward work {_count(self.frames[-1].flops_bwd_total)}" if self.counted \
            else ""
        return f"Stepper({len(self.frames)} frames over {len(self.graph.nodes)} nodes{work})"

    def _frame(self, k: int) -> Frame:
        """Step ``k``, numbered 1 to n as the player shows it."""
        if not isinstance(k, int) or not 1 <= k <= len(self.frames):
            raise IndexError(f"Stepper: step {k!r} does not exist; steps are numbered 1 to "
                             f"{len(self.frames)}, as the player shows them")
        return self.frames[k - 1]

    # -- one frame -------------------------------------------------------------------------
    def _frame_dot(self, k: int, layout: dict[str, Any], legend: bool = False) -> str:
        f = self._frame(k)
        title = f"backward step {k}/{len(self.frames)}: {self.names.get(f.node, f.node)}"
        if self.counted:
            title += f"; so far {_count(f.flops_bwd_total)}"
        # The node at work and its edges in red; nodes whose gradient is complete, and
        # the edges that already carried theirs, in calmer colours: the wave moving back.
        done = self.frames[:k - 1]
        nodes = {p.node: DONE for p in done}
        nodes[f.node] = render.HIGHLIGHT
        edges = {e: PASSED for p in done for e in p.edges}
        edges.update({e: render.HIGHLIGHT for e in f.edges})
        grads = {p.node: self.arrived[p.node] for p in self.frames[:k] if p.node in self.arrived}
        options = {"depth": self.depth, "show": FRAME_SHOW, **layout}
        return render.to_dot(
            self.graph, highlight_nodes=nodes, highlight_edges=edges, backward=True,
            title=title, key=KEY, legend="key" if legend else False, totals=False, grads=grads,
            where="step_backward", **options)

    def _fitted_layout(self) -> dict[str, Any]:
        """The layout of every frame: the first (:func:`lucid_viz.fit.layouts`) whose last
        frame, the one with every gradient on it, keeps node text readable in the player;
        when none does, the one with the largest text."""
        if self._layout is None:
            self._layout = {}
            box = (PLAYER_PX * PICTURE_SHARE, PICTURE_HEIGHT - LEGEND_HEIGHT)
            options = {"depth": self.depth, "show": FRAME_SHOW}
            best = 0.0
            for change, note in fit.layouts(self.graph, None, options):
                try:
                    svg = graphviz_bin.render(self._frame_dot(len(self), change), "svg")
                except graphviz_bin.GraphvizNotFound:
                    break
                size = fit.node_text_px(svg.decode("utf-8"), *box)
                if size > best + 0.5:  # (a layout must be clearly better)
                    best, self._layout = size, {**change, "layout_note": note}
                if size >= fit.FLOOR_PX:
                    break
        return self._layout

    def frame_dot(self, k: int) -> str:
        """Graphviz source of step ``k`` (1 to n): the node at work and its edges highlighted,
        values and the gradients arrived so far on the nodes.  Its legend is the player's line
        under the picture (:data:`KEY`), the same for every frame."""
        dot = self._dot.get(k)
        if dot is None:
            dot = self._dot[k] = self._frame_dot(k, self._fitted_layout())
        return dot

    def frame_svg(self, k: int) -> str | None:
        """Step ``k`` (1 to n) as SVG text, or None when no Graphviz binary is available."""
        if k not in self._svg:
            try:
                svg = graphviz_bin.render(self.frame_dot(k), fmt="svg").decode("utf-8")
            except graphviz_bin.GraphvizNotFound:  # no binary: the callers show text instead
                svg = None
            self._svg[k] = svg
        return self._svg[k]

    def static_svg(self) -> str | None:
        """The last frame with its legend in the picture: what viewers without widgets show
        (GitHub, nbviewer); None without Graphviz."""
        try:
            dot = self._frame_dot(len(self), self._fitted_layout(), legend=True)
            return fit.scale_to_page(graphviz_bin.render(dot, fmt="svg").decode("utf-8"))
        except graphviz_bin.GraphvizNotFound:
            return None

    def frame_text(self, k: int) -> str:
        """Step ``k`` (1 to n, as the player numbers them) as a few lines of text."""
        return self._frame(k).text(self.names)

    def panel_html(self, k: int) -> str:
        """The gradient panel of step ``k`` (HTML), in type large enough for a lecture hall."""
        f = self._frame(k)
        rows = [
            ("rule", f.rule),
            (f"{_d(self.names.get(f.node, f.node))} arriving",
             "no gradient reached this node" if f.grad_in is None else f.grad_in.text()),
        ]
        for out in f.grads_out:
            rows.append((f"→ {self.names.get(out.src, out.src)} (input {out.index})",
                         out.text()))
        if self.counted:  # a graph not counted says nothing of FLOPs
            rows.append(("backward work", f"this node {_count(f.flops_bwd)}, running total "
                                          f"{_count(f.flops_bwd_total)}"))
        body = "".join(
            f"<tr><th style='text-align:left;padding:4px 0.8em 4px 0'>{html.escape(a)}</th>"
            f"<td style='font-family:monospace;font-size:15px;padding:4px 0'>"
            f"{html.escape(b)}</td></tr>"
            for a, b in rows)
        return (f"<div class='lucid-panel' style='height:{PANEL_HEIGHT}px;overflow:auto;"
                f"font-size:16px;line-height:1.35'>"
                f"<div style='font-weight:bold;font-size:17px'>step {k}/{len(self.frames)}: "
                f"{html.escape(f.label)}</div><table style='border-collapse:collapse'>{body}"
                "</table></div>")

    def picture_html(self, k: int) -> str:
        """Step ``k``'s picture: the SVG, or (no Graphviz binary) the frame as text."""
        svg = self.frame_svg(k)
        if svg is not None:  # as large as the box allows, whatever the graph's size
            return (f"<div style='height:{PICTURE_HEIGHT}px;width:100%'>"
                    f"<div style='height:{PICTURE_HEIGHT - LEGEND_HEIGHT}px'>"
                    f"{_fit_box(_strip_xml_header(svg))}</div>{_legend_html()}</div>")
        return (f"<pre>{html.escape(self.frame_text(k))}</pre><p><i>No Graphviz binary found, "
                f"showing the frame as text: {html.escape(graphviz_bin.HINT)}.</i></p>")

    # -- the player --------------------------------------------------------------------------
    def widget(self) -> Any:
        """An ipywidgets player: Play + slider (linked in the browser), the picture, the panel."""
        import ipywidgets as w  # late: widgets are optional (the notebooks extra)

        # steps count 1..n on the slider, as in the frame titles ("step 3/6")
        n = len(self.frames)
        play = w.Play(value=1, min=1, max=n, step=1, interval=900, description="play")
        slider = w.IntSlider(value=1, min=1, max=n, step=1, description="step",
                             continuous_update=True)
        w.jslink((play, "value"), (slider, "value"))
        # fixed heights: the page does not jump from frame to frame
        share = round(100 * PICTURE_SHARE)
        picture = w.HTML(layout=w.Layout(height=f"{PICTURE_HEIGHT + 10}px", width=f"{share}%"))
        panel = w.HTML(layout=w.Layout(height=f"{PANEL_HEIGHT + 10}px",
                                       width=f"{100 - share}%"))

        def show(change: Any = None) -> None:
            picture.value = self.picture_html(slider.value)
            panel.value = self.panel_html(slider.value)

        slider.observe(show, names="value")
        show()
        return w.VBox([w.HBox([play, slider]), w.HBox([picture, panel])])

    def _repr_mimebundle_(self, include: Any = None, exclude: Any = None) -> dict[str, Any]:
        """The widget where widgets run, the final frame as SVG (and text) everywhere else."""
        last = len(self.frames)
        text = repr(self) + "\n" + self.frame_text(last)
        bundle: dict[str, Any] = {}
        try:
            svg = self.static_svg()
            if svg is not None:
                bundle["image/svg+xml"] = svg
            else:
                text += f"\n(no Graphviz binary found, so no picture: {graphviz_bin.HINT})"
        except Exception as exc:  # display must never raise; say what went wrong instead
            text += f"\n(could not draw the frame: {type(exc).__name__}: {exc})"
        try:
            import ipywidgets  # noqa: F401
        except ImportError:
            pass  # no widgets: the static picture is the display
        else:
            try:
                view = self.widget()._repr_mimebundle_()
            except Exception as exc:  # a broken widget stack still gets the static picture
                text += f"\n(widget unavailable: {type(exc).__name__}: {exc})"
            else:
                if view:
                    bundle.update({k: v for k, v in view.items() if k != "text/plain"})
        bundle["text/plain"] = text
        return bundle

    def save_html(self, path: str | Path) -> Path:
        """Write every frame (picture + panel) and a small JS player to one HTML file."""
        path = Path(path)
        frames = [
            f"<div class='lucid-frame' style='display:{'flex' if k == 0 else 'none'}'>"
            f"{self.picture_html(k + 1)}{self.panel_html(k + 1)}</div>"
            for k in range(len(self.frames))
        ]
        doc = _PAGE.format(
            title=html.escape(f"Lucid backward stepper: {len(self.frames)} steps"),
            last=len(self.frames) - 1, count=len(self.frames),
            frames="\n".join(frames), labels=json.dumps([f.label for f in self.frames]),
        )
        path.write_text(doc, encoding="utf-8")
        return path


def _legend_html() -> str:
    """:data:`KEY` as one line of HTML: a swatch and its words per entry."""
    parts = []
    for colour, text in KEY:
        if text.startswith("edge:"):
            swatch = f"<span style='color:{colour};font-weight:bold'>&#x2500;&#x25B6;</span>"
            text = text[5:].strip()
        else:
            swatch = (f"<span style='display:inline-block;width:14px;height:10px;"
                      f"border:3px solid {colour};border-radius:3px'></span>")
        parts.append(f"<span style='white-space:nowrap;margin-right:12px'>{swatch} "
                     f"{html.escape(text)}</span>")
    return (f"<div class='lucid-legend' style='height:{LEGEND_HEIGHT}px;font-size:14px;"
            f"text-align:center;line-height:20px;padding-top:2px'>{''.join(parts)}</div>")


def _fit_box(svg: str) -> str:
    """The SVG drawn at the size of its box (its viewBox keeps the proportions)."""
    return re.sub(r'<svg width="[\d.]+pt" height="[\d.]+pt"',
                  '<svg width="100%" height="100%" preserveAspectRatio="xMidYMin meet"', svg,
                  count=1)


def _strip_xml_header(svg: str) -> str:
    """Inline SVG for HTML: drop the ``<?xml ...?>`` and ``<!DOCTYPE ...>`` preamble."""
    start = svg.find("<svg")
    return svg[start:] if start >= 0 else svg


_PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: sans-serif; margin: 1em; }}
.lucid-controls {{ display: flex; gap: 1em; align-items: center; margin-bottom: 0.5em; }}
.lucid-controls input[type=range] {{ width: 24em; }}
.lucid-frame {{ gap: 1em; }}
.lucid-frame > div:first-child {{ flex: 3; }}
.lucid-frame > .lucid-panel {{ flex: 2; }}
.lucid-panel table {{ border-collapse: collapse; margin-top: 0.5em; }}
.lucid-panel th, .lucid-panel td {{ vertical-align: top; padding: 2px 6px; }}
</style></head>
<body>
<h3>{title}</h3>
<div class="lucid-controls">
  <button id="lucid-play" type="button">play</button>
  <input id="lucid-step" type="range" min="0" max="{last}" value="0">
  <span id="lucid-label"></span>
</div>
{frames}
<script>
(function () {{
  var frames = document.querySelectorAll(".lucid-frame");
  var labels = {labels};
  var slider = document.getElementById("lucid-step");
  var button = document.getElementById("lucid-play");
  var label = document.getElementById("lucid-label");
  var timer = null;
  function show(k) {{
    for (var i = 0; i < frames.length; i++) {{
      frames[i].style.display = i === k ? "flex" : "none";
    }}
    slider.value = k;
    label.textContent = "step " + (k + 1) + " / {count}: " + labels[k];
  }}
  function stop() {{ clearInterval(timer); timer = null; button.textContent = "play"; }}
  slider.addEventListener("input", function () {{ stop(); show(parseInt(slider.value, 10)); }});
  button.addEventListener("click", function () {{
    if (timer !== null) {{ stop(); return; }}
    if (parseInt(slider.value, 10) >= {last}) {{ show(0); }}
    button.textContent = "pause";
    timer = setInterval(function () {{
      var k = parseInt(slider.value, 10) + 1;
      if (k > {last}) {{ stop(); return; }}
      show(k);
    }}, 900);
  }});
  show(0);
}})();
</script>
</body></html>
"""

"""matplotlib plots where a picture beats a table: FLOPs per layer, gradient norms, losses.

Each function returns a :class:`matplotlib.figure.Figure` built without ``pyplot``: no global
figure state, no GUI backend needed (it works under Agg and in a headless kernel), and a
notebook cell that ends with the figure shows it once (``_repr_png_``), not twice.  The data
come from Lucid itself (:func:`lucid.models.summarize`, parameter ``.grad``), so a plot is as
deterministic as the run that fed it.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
from matplotlib import colormaps
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from matplotlib.ticker import FuncFormatter

from lucid.backends import get_backend
from lucid.cost import Cost, check_unit
from lucid.models.util import Summary, summarize

__all__ = ["grad_norms", "plot_flops_per_layer", "plot_grad_norms", "plot_loss"]


class LucidFigure(Figure):
    """A Figure that shows itself in Jupyter without ``pyplot`` (``_repr_png_``)."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", bbox_inches="tight", metadata={"Software": None})
        return buf.getvalue()


def _figure(width: float, height: float) -> Figure:
    return LucidFigure(figsize=(width, height), layout="constrained")


def plot_flops_per_layer(model_or_summary: Any, input_shape: tuple[int, ...] | None = None,
                         *, flops_unit: str = "MACs", title: str | None = None) -> Figure:
    """A horizontal bar per layer: how the forward work of one input spreads over the model.

    Pass a model and ``input_shape`` (it runs :func:`lucid.models.summarize` once, silently),
    or a :class:`~lucid.models.util.Summary` you already have.  ``flops_unit="MACs"``: each
    bar is a layer's multiply-adds (MACs, dark) followed by its other operations (FLOPs,
    light), as ``summarize`` counts them; ``flops_unit="FLOPs"`` (or ``"2*MACs"``): one bar in
    FLOPs, a multiply-add counted as 2.
    """
    if isinstance(model_or_summary, Summary):
        summary = model_or_summary
    else:
        if input_shape is None:
            raise ValueError("plot_flops_per_layer(model, input_shape): give the input shape "
                             "to run the model on, e.g. (1, 3, 32, 32), or pass a Summary")
        summary = summarize(model_or_summary, input_shape, print_summary=False)
    unit = check_unit(flops_unit, "plot_flops_per_layer: flops_unit")
    names = [f"{r.name} ({r.kind})" for r in summary.rows]
    costs = [r.cost for r in summary.rows]
    if summary.other != Cost():
        names.append("(ops outside leaf layers)")
        costs.append(summary.other)
    fig = _figure(8, max(2.5, 0.28 * len(names) + 1.2))
    ax = fig.add_subplot()
    y = np.arange(len(names))
    if unit == "FLOPs":
        ax.barh(y, [c.in_flops for c in costs], color="#3d6fa6")
        ax.set_xlabel("FLOPs (a multiply-add counts 2)")
    else:
        macs = [c.macs for c in costs]
        ax.barh(y, macs, color="#3d6fa6", label="MACs (multiply-adds: matmul, linear, conv)")
        ax.barh(y, [c.flops for c in costs], left=macs, color="#9fc5e8",
                label="FLOPs (every other operation)")
        ax.set_xlabel("MACs and FLOPs (one per multiply-add / per other operation)")
        ax.legend(loc="lower right", fontsize=8)
    ax.set_yticks(y, names, fontsize=8)
    ax.set_ylim(len(names) - 0.5, -0.5)  # first layer on top, the order data flows
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_title(title or f"{summary.model}: work per layer (total {summary.total.text(unit)})",
                 fontsize=10)
    ax.grid(axis="x", alpha=0.3)
    return fig


def grad_norms(model: Any) -> dict[str, float]:
    """The L2 norm of each layer's parameter gradients, after ``loss.backward()``.

    A layer is the module that owns the parameters (``"layer1.0.conv1"`` for
    ``layer1.0.conv1.weight`` and ``.bias``); its norm is ``sqrt(sum of squared entries)`` over
    all of them.  Layers whose parameters have no gradient yet are left out.  Append one dict
    per training step to a list and give it to :func:`plot_grad_norms`.
    """
    squares: dict[str, float] = {}
    for name, p in model.named_parameters():
        if p.grad is None:
            continue
        layer = name.rsplit(".", 1)[0] if "." in name else name
        g = np.asarray(get_backend(p.device).to_numpy(p.grad), dtype=np.float64)
        squares[layer] = squares.get(layer, 0.0) + float(np.sum(g * g))
    return {layer: math.sqrt(s) for layer, s in squares.items()}


def plot_grad_norms(history: Sequence[Mapping[str, float]], *, log: bool = True,
                    title: str | None = None,
                    ylim: tuple[float, float] | None = None) -> Figure:
    """Gradient norm per layer across training steps: the vanishing/exploding picture.

    ``history`` holds one ``{layer: norm}`` dict per step (see :func:`grad_norms`).  Lines are
    coloured from the first layer (dark) to the last (light), so a fan that opens towards the
    input side shows gradients shrinking on their way back.  ``log=True`` uses a log scale;
    ``ylim=(low, high)`` fixes the vertical range (norms that vanish to 1e-30 would otherwise
    stretch a log axis until the healthy layers are a flat line at the top).
    """
    if ylim is not None and (len(ylim) != 2 or not ylim[0] < ylim[1]
                             or (log and ylim[0] <= 0)):
        scale = " and low > 0 on a log scale" if log else ""
        raise ValueError(
            f"plot_grad_norms: ylim must be (low, high) with low < high{scale}, got {ylim!r}"
        )
    layers: list[str] = []
    for step in history:
        for layer in step:
            if layer not in layers:
                layers.append(layer)
    fig = _figure(8, 4.5)
    ax = fig.add_subplot()
    cmap = colormaps["viridis"]
    steps = np.arange(len(history))
    for i, layer in enumerate(layers):
        values = np.array([step.get(layer, np.nan) for step in history], dtype=np.float64)
        colour = cmap(i / max(1, len(layers) - 1) * 0.9)
        ax.plot(steps, values, color=colour, label=layer, linewidth=1.2)
    if log and history and any(v > 0 for step in history for v in step.values()):
        ax.set_yscale("log")
    ax.set_xlabel("training step")
    if ylim is not None:
        ax.set_ylim(*ylim)
    ax.set_ylabel("gradient L2 norm")
    ax.set_title(title or "Gradient norm per layer", fontsize=10)
    ax.grid(alpha=0.3)
    if layers and len(layers) <= 12:
        ax.legend(fontsize=7, loc="best")
    elif layers:
        bar = fig.colorbar(ScalarMappable(Normalize(0, len(layers) - 1), cmap), ax=ax)
        bar.set_label(f"layer index ({layers[0]} ... {layers[-1]})", fontsize=8)
    return fig


def plot_loss(losses: Sequence[float], val: Sequence[float] | None = None, *,
              log: bool = False, title: str | None = None) -> Figure:
    """Training loss per step, and, optionally, validation loss.

    ``val`` may be shorter (one value per epoch): its points are spread evenly over the
    training steps, the last at the last step.
    """
    fig = _figure(7, 4)
    ax = fig.add_subplot()
    train = np.asarray([float(v) for v in losses], dtype=np.float64)
    steps = np.arange(1, len(train) + 1)
    ax.plot(steps, train, color="#3d6fa6", linewidth=1.2, label="train")
    if val is not None and len(val):
        v = np.asarray([float(x) for x in val], dtype=np.float64)
        span = len(train) if len(train) else len(v)
        xs = np.arange(1, len(v) + 1) * (span / len(v))
        ax.plot(xs, v, color="#b8651b", marker="o", markersize=3, linewidth=1.2,
                label="validation")
    if log:
        ax.set_yscale("log")
    ax.set_xlabel("step")
    ax.set_ylabel("loss")
    ax.set_title(title or "Loss", fontsize=10)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig

"""matplotlib plots where a picture beats a table: FLOPs per layer, gradient norms, losses,
attention maps.

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
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["grad_norms", "plot_attention", "plot_flops_per_layer", "plot_grad_norms",
           "plot_loss"]


class LucidFigure(Figure):
    """A Figure that shows itself in Jupyter without ``pyplot`` (``_repr_png_``)."""

    def _repr_png_(self) -> bytes:
        buf = io.BytesIO()
        self.savefig(buf, format="png", bbox_inches="tight", metadata={"Software": None})
        return buf.getvalue()


#: a figure's widest (inches): wider ones are shrunk by the notebook, and their text with them
MAX_WIDTH = 9.0
#: the smallest text of a figure (pt): readable on a projector at the notebook's width
MIN_PT = 11.0


def _figure(width: float, height: float) -> Figure:
    if width > MAX_WIDTH:  # never wider than the page: the proportions kept
        width, height = MAX_WIDTH, height * MAX_WIDTH / width
    return LucidFigure(figsize=(width, height), layout="constrained")


def _readable(fig: Figure) -> Figure:
    """Every text of ``fig`` at least :data:`MIN_PT`: ticks (also those drawn later), labels,
    legends and notes."""
    for ax in fig.axes:
        ax.tick_params(labelsize=MIN_PT)
    for text in fig.findobj(lambda a: hasattr(a, "get_fontsize") and hasattr(a, "get_text")):
        if text.get_fontsize() < MIN_PT:
            text.set_fontsize(MIN_PT)
    return fig


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
        ax.legend(loc="lower right", fontsize=11)
    ax.set_yticks(y, names, fontsize=11)
    ax.set_ylim(len(names) - 0.5, -0.5)  # first layer on top, the order data flows
    ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:,.0f}"))
    ax.set_title(title or f"{summary.model}: work per layer (total {summary.total.text(unit)})",
                 fontsize=11)
    ax.grid(axis="x", alpha=0.3)
    return _readable(fig)


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
    ax.set_title(title or "Gradient norm per layer", fontsize=12)
    ax.grid(alpha=0.3)
    if layers and len(layers) <= 12:
        ax.legend(fontsize=11, loc="best")
    elif layers:
        bar = fig.colorbar(ScalarMappable(Normalize(0, len(layers) - 1), cmap), ax=ax)
        bar.set_label(f"layer index ({layers[0]} ... {layers[-1]})", fontsize=11)
    return _readable(fig)


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
    ax.set_title(title or "Loss", fontsize=12)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=11)
    return _readable(fig)


def plot_attention(weights: Any, tokens: Sequence[Any] | str | None = None, *,
                   query_tokens: Sequence[Any] | str | None = None,
                   key_tokens: Sequence[Any] | str | None = None, sample: int | None = None,
                   vmax: float | None = None, values: bool | None = None,
                   title: str | None = None) -> Figure:
    """Attention maps: how much each query (a row) attends to each key (a column).

    Row i of a map is ``softmax(q_i · K^T / sqrt(d))``: the weights with which query i mixes
    the values, each between 0 and 1, summing to 1 along the row.  ``weights`` is a Tensor or
    an array of shape (L, S), or (heads, L, S) -- one panel per head -- or (N, heads, L, S),
    with L queries and S keys.  ``sample=i`` says that the first axis is the batch and plots
    sequence i: ``plot_attention(layer.attn_weights, tokens, sample=0)`` for a
    ``TransformerEncoderLayer`` (which keeps the weights averaged over its heads, (N, L, S)),
    or ``MultiHeadAttention``'s returned weights ((N, L, S), or (N, heads, L, S) with
    ``average_attn_weights=False``).  A batch of one needs no ``sample``.

    ``tokens`` label the rows and the columns (self-attention: queries and keys are the same
    sequence); ``query_tokens`` / ``key_tokens`` label them apart (cross-attention, a decoder
    reading an encoder's output).  A string is one token per character.  Without tokens the
    positions 0, 1, ... are shown.  All panels share one colour scale, from 0 to ``vmax``
    (default: the largest weight shown); ``values`` writes each weight in its cell (default:
    when a map is at most 12 by 12).
    """
    where = "plot_attention"
    data, shape = _attention_data(where, weights, sample)
    heads = data.ndim == 3
    maps = data if heads else data[None]
    n_query, n_key = maps.shape[1:]
    rows = _token_labels(where, query_tokens if query_tokens is not None else tokens,
                         n_query, "queries (rows)", shape)
    cols = _token_labels(where, key_tokens if key_tokens is not None else tokens,
                         n_key, "keys (columns)", shape)
    finite = maps[np.isfinite(maps)]  # (a query whose keys are all masked has NaN weights)
    if finite.size and finite.min() < 0:
        raise ValueError(f"{where}: attention weights are probabilities, >= 0, but these reach "
                         f"{finite.min():.4g}; pass the weights after the softmax, not the "
                         "scores before it")
    if vmax is not None and not vmax > 0:
        raise ValueError(f"{where}: vmax, the top of the colour scale, must be > 0, got {vmax}")
    top = vmax if vmax is not None else float(finite.max()) if finite.size else 1.0
    top = top if top > 0 else 1.0  # all weights 0: a scale from 0 to 1 still reads correctly
    if values is None:
        values = n_query <= 12 and n_key <= 12

    n = maps.shape[0]
    ncols = min(n, 4)
    nrows = math.ceil(n / ncols)
    side = min(8.0, max(2.8, 0.28 * max(n_query, n_key) + 1.2))  # inches per panel
    fig = _figure(side * ncols + 1.2, side * nrows + 0.6)
    cmap = colormaps["viridis"]
    image = None
    for h in range(n):
        ax = fig.add_subplot(nrows, ncols, h + 1)
        image = ax.imshow(maps[h], cmap=cmap, vmin=0.0, vmax=top, aspect="equal",
                          interpolation="nearest")
        ax.set_xticks(np.arange(n_key), cols, fontsize=11,
                      rotation=90 if max(map(len, cols), default=0) > 2 else 0)
        ax.set_yticks(np.arange(n_query), rows, fontsize=11)
        ax.set_xlabel("key (attended to)", fontsize=11)
        ax.set_ylabel("query (attending)", fontsize=11)
        if heads:
            ax.set_title(f"head {h}", fontsize=12)
        if values:
            for i in range(n_query):
                for j in range(n_key):
                    v = maps[h, i, j]
                    ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=11,
                            color="black" if v > 0.6 * top else "white")
    bar = fig.colorbar(image, ax=fig.axes, shrink=0.8)
    # above the bar, across: a label along a short bar ran past both of its ends
    bar.ax.set_title("weight", fontsize=11, loc="left")
    bar.ax.tick_params(labelsize=11)
    which = f" (sequence {sample})" if sample is not None else ""
    fig.suptitle(title or f"Attention weights{which}", fontsize=13)
    return _readable(fig)


def _attention_data(where: str, weights: Any, sample: int | None) -> tuple[np.ndarray, str]:
    """The weights to plot as floats, one map (L, S) or one per head (heads, L, S), and the
    shape they were given in (for messages)."""
    data = np.asarray(weights.numpy() if isinstance(weights, Tensor) else weights)
    if data.dtype.kind not in "fiu":
        raise TypeError(f"{where}: weights must be numbers, got an array of {data.dtype}")
    data = data.astype(np.float64)
    shape = fmt(data.shape)
    if sample is not None:
        if data.ndim not in (3, 4):
            raise ValueError(f"{where}: sample={sample} picks a sequence of a batch, (N, L, S) "
                             f"or (N, heads, L, S); weights of shape {shape} have no batch axis")
        if not -data.shape[0] <= sample < data.shape[0]:
            raise ValueError(f"{where}: sample={sample} is out of range for the "
                             f"{data.shape[0]} sequences of weights of shape {shape}")
        data = data[sample]
    elif data.ndim == 4:
        if data.shape[0] != 1:
            raise ValueError(f"{where}: weights of shape {shape} hold {data.shape[0]} "
                             f"sequences (N, heads, L, S); pick one with sample=0 ... "
                             f"{data.shape[0] - 1}")
        data = data[0]
    if data.ndim not in (2, 3):
        raise ValueError(f"{where}: weights must be (L, S), (heads, L, S) or (N, heads, L, S) "
                         f"(with sample=i for a batch), got shape {shape}")
    return data, shape


def _token_labels(where: str, tokens: Sequence[Any] | str | None, count: int, what: str,
                  shape: str) -> list[str]:
    """The tick labels of one axis: the tokens as text, or the positions 0 ... count-1."""
    if tokens is None:
        return [str(i) for i in range(count)]
    labels = [str(t) for t in (list(tokens) if isinstance(tokens, str) else tokens)]
    if len(labels) != count:
        raise ValueError(f"{where}: {len(labels)} tokens for the {count} {what} of weights of "
                         f"shape {shape}; give one token each (query_tokens= and key_tokens= "
                         "label queries and keys apart, as cross-attention needs)")
    return labels

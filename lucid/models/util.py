"""``summarize(model, input_shape)``: a per-layer table of shapes, parameters and FLOPs.

The model runs once on zeros inside :func:`lucid.autograd.mode.record_ops`, whose recorder
notes each module call and the ops it ran; each call of a leaf module (one without children)
is a row, so each op's FLOPs are credited to exactly one layer.  FLOPs are counted as the seed
does: MACs for matmul and convolution, one per output element for elementwise ops (multiply by
2 for "2·MACs").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lucid.autograd.mode import no_grad, record_ops
from lucid.creation import zeros
from lucid.tensor import Tensor

__all__ = ["summarize", "Summary", "LayerRow"]


@dataclass
class LayerRow:
    name: str
    kind: str
    input_shape: tuple[int, ...] | None
    output_shape: tuple[int, ...] | None
    params: int
    flops: int


@dataclass
class Summary:
    """What :func:`summarize` measured; ``print(summary)`` shows the table."""

    model: str
    rows: list[LayerRow] = field(default_factory=list)
    total_params: int = 0
    trainable_params: int = 0
    total_flops: int = 0
    other_flops: int = 0  # ops run outside any leaf module (e.g. ``x + residual`` in forward)

    def __str__(self) -> str:
        head = ("Layer (type)", "Input Shape", "Output Shape", "Param #", "FLOPs")
        body = [
            (f"{r.name} ({r.kind})", _shape(r.input_shape), _shape(r.output_shape),
             f"{r.params:,}", f"{r.flops:,}")
            for r in self.rows
        ]
        if self.other_flops:
            body.append(("(ops outside leaf layers)", "", "", "", f"{self.other_flops:,}"))
        widths = [max(len(x) for x in col) for col in zip(head, *body)]
        line = "  ".join(f"{{:<{w}}}" for w in widths[:3]) + "  " + "  ".join(
            f"{{:>{w}}}" for w in widths[3:])
        rule = "=" * (sum(widths) + 2 * (len(widths) - 1))
        out = [f"Summary of {self.model}", rule, line.format(*head), rule]
        out += [line.format(*row) for row in body]
        out += [
            rule,
            f"Total params: {self.total_params:,}",
            f"Trainable params: {self.trainable_params:,}",
            f"Non-trainable params: {self.total_params - self.trainable_params:,}",
            f"Total FLOPs: {self.total_flops:,} (MACs; x2 = {2 * self.total_flops:,} FLOPs "
            "counting multiply and add separately)",
        ]
        return "\n".join(out)

    __repr__ = __str__


def _shape(shape: tuple[int, ...] | None) -> str:
    return "-" if shape is None else str(tuple(shape))


def _first_shape(value: Any) -> tuple[int, ...] | None:
    if isinstance(value, Tensor):
        return value.shape
    if isinstance(value, (tuple, list)) and value and isinstance(value[0], Tensor):
        return value[0].shape
    return None


def summarize(model: Any, input_shape: tuple[int, ...], dtype: Any = None,
              device: str | None = None, print_summary: bool = True) -> Summary:
    """Run ``model`` once on zeros of ``input_shape`` and report every leaf layer.

    ``dtype``/``device`` default to those of the model's first parameter.  Prints the table
    (unless ``print_summary=False``) and returns the :class:`Summary`.
    """
    params = list(model.parameters())
    first = params[0] if params else None
    dtype = dtype or (first.dtype if first is not None else None)
    device = device or (first.device if first is not None else "cpu")
    x = zeros(*input_shape, dtype=dtype, device=device)

    was_training = model.training
    model.eval()
    try:
        with no_grad(), record_ops() as rec:
            model(x)
    finally:
        model.train(was_training)

    summary = Summary(type(model).__name__)
    credited = 0
    shown: set[int] = set()
    leaves = {id(m) for _, m in model.named_modules() if not list(m.children())}
    for call in rec.calls:  # in the order they ran; the leaf layers are the rows
        module = call.module
        if id(module) not in leaves:
            continue
        flops = sum(getattr(t._op, "flops", 0) for t in rec.ops[call.start:call.stop])
        credited += flops
        # a module called twice (one ReLU used at two places) shows its parameters once
        n_params = 0 if id(module) in shown else sum(
            p.size for p in module.parameters(recurse=False))
        shown.add(id(module))
        summary.rows.append(LayerRow(call.path, type(module).__name__,
                                     _first_shape(call.inputs), _first_shape(call.output),
                                     n_params, flops))
    summary.total_params = sum(p.size for p in params)
    summary.trainable_params = sum(p.size for p in params if p.requires_grad)
    summary.total_flops = sum(getattr(t._op, "flops", 0) for t in rec.ops)
    summary.other_flops = summary.total_flops - credited
    if print_summary:
        print(summary)
    return summary

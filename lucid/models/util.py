"""``summarize(model, input_shape)``: a per-layer table of shapes, parameters and counts.

The model runs once on zeros inside :func:`lucid.engine.mode.record_ops`, whose recorder
notes each module call and the ops it ran; each call of a leaf module (one without children)
is a row, so each op's count is credited to exactly one layer.  ``depth=k`` lists the modules
``k`` levels down instead (``layer1`` is level 1, ``layer1.0`` level 2), and the layers above
that level: a row is then a module's whole call -- its layers and the arithmetic of its own
``forward``, such as a residual add -- the same totals ``draw(model, x, depth=k)`` and
``%lucid_flops`` show.  Counts are in honest units
(:mod:`lucid.cost`): MACs for the multiply-adds of matmul, linear layers and convolutions,
FLOPs for every other op; the footer also gives everything in FLOPs (1 MAC = 2 FLOPs).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lucid.cost import CONVENTION, Cost, total_cost
from lucid.creation import zeros
from lucid.engine.mode import no_grad, record_ops
from lucid.nn.parallel import DistributedDataParallel
from lucid.tensor import Tensor

__all__ = ["summarize", "Summary", "LayerRow"]


@dataclass
class LayerRow:
    name: str
    kind: str
    input_shape: tuple[int, ...] | None
    output_shape: tuple[int, ...] | None
    params: int
    macs: int  # multiply-adds (matmul, linear, convolution)
    flops: int  # every other operation

    @property
    def cost(self) -> Cost:
        return Cost(self.macs, self.flops)


@dataclass
class Summary:
    """What :func:`summarize` measured; ``print(summary)`` shows the table.

    ``modules`` maps every module path that ran ("" is the model, "layer1", "layer1.0", ...)
    to the cost of everything that ran inside its calls, children and the module's own
    ``forward`` arithmetic (a residual add) included: the totals a drawing's clusters show.
    """

    model: str
    rows: list[LayerRow] = field(default_factory=list)
    total_params: int = 0
    trainable_params: int = 0
    total: Cost = field(default_factory=Cost)
    other: Cost = field(default_factory=Cost)  # ops outside the rows (``x + residual``)
    depth: int | None = None  # the rows' level (None: every leaf layer)
    modules: dict[str, Cost] = field(default_factory=dict)
    #: for a DistributedDataParallel model: what one training step all-reduces
    #: (``bytes_all_reduced``, ``all_reduces``, ``bytes_sent``), else None
    communication: dict[str, int] | None = None

    @property
    def total_macs(self) -> int:
        return self.total.macs

    @property
    def total_flops(self) -> int:
        """FLOPs of the ops that are not multiply-adds (see ``total_macs`` for those)."""
        return self.total.flops

    def __str__(self) -> str:
        head = ("Layer (type)", "Input Shape", "Output Shape", "Param #", "MACs", "FLOPs")
        body = [
            (f"{r.name} ({r.kind})", _shape(r.input_shape), _shape(r.output_shape),
             f"{r.params:,}", f"{r.macs:,}", f"{r.flops:,}")
            for r in self.rows
        ]
        if self.other != Cost():
            where = "leaf layers" if self.depth is None else "these modules"
            body.append((f"(ops outside {where})", "", "", "", f"{self.other.macs:,}",
                         f"{self.other.flops:,}"))
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
            f"Total MACs: {self.total.macs:,}",
            f"Total FLOPs: {self.total.flops:,} (besides the MACs)",
            f"Everything in FLOPs: {self.total.in_flops:,} (2 x MACs + FLOPs)",
            f"({CONVENTION})",
        ]
        if self.communication is not None:
            c = self.communication
            out.append(f"All-reduced per training step: {c['bytes_all_reduced']:,} bytes of "
                       f"gradients in {c['all_reduces']:,} all-reduce(s); this rank sends "
                       f"{c['bytes_sent']:,} bytes (ring: 2(N-1)/N of them)")
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
              device: str | None = None, print_summary: bool = True,
              depth: int | None = None) -> Summary:
    """Run ``model`` once on zeros of ``input_shape`` and report every leaf layer, or with
    ``depth=k`` every module ``k`` levels down (and the layers above that level), each with
    the total of everything its calls ran.

    ``dtype``/``device`` default to those of the model's first parameter.  Prints the table
    (unless ``print_summary=False``) and returns the :class:`Summary`.
    """
    if depth is not None and (not isinstance(depth, int) or depth < 1):
        raise ValueError(f"summarize: depth must be None (every leaf layer) or an int >= 1, "
                         f"got {depth!r}")
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

    summary = Summary(type(model).__name__, depth=depth)
    leaves = {id(m) for _, m in model.named_modules() if not list(m.children())}
    credited = Cost()
    shown: set[int] = set()
    for call in rec.calls:  # in the order they ran
        cost = total_cost(t._op for t in rec.ops[call.start:call.stop])
        summary.modules[call.path] = summary.modules.get(call.path, Cost()) + cost
        if not _is_row(call.path, id(call.module) in leaves, depth):
            continue
        credited = credited + cost
        summary.rows.append(_row(call, cost, shown))
    summary.total_params = sum(p.size for p in params)
    summary.trainable_params = sum(p.size for p in params if p.requires_grad)
    summary.total = total_cost(t._op for t in rec.ops)
    summary.other = Cost(summary.total.macs - credited.macs,
                         summary.total.flops - credited.flops)
    if isinstance(model, DistributedDataParallel):
        summary.communication = model.bytes_per_step()
    if print_summary:
        print(summary)
    return summary


def _is_row(path: str, leaf: bool, depth: int | None) -> bool:
    """A module call is a row: a leaf layer (depth None); at ``depth=k``, a module ``k``
    levels down, or a layer above that level."""
    level = len(path.split(".")) if path else 0
    if depth is None:
        return leaf
    return level == depth or (leaf and 0 < level < depth)


def _row(call: Any, cost: Cost, shown: set[int]) -> LayerRow:
    module = call.module
    # a module called twice (one ReLU used at two places) shows its parameters once
    n_params = 0 if id(module) in shown else sum(p.size for p in module.parameters())
    shown.add(id(module))
    return LayerRow(call.path, type(module).__name__, _first_shape(call.inputs),
                    _first_shape(call.output), n_params, cost.macs, cost.flops)

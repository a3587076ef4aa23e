"""What the counted work is, in honest units: MACs for multiply-adds, FLOPs for the rest.

Under ``lucid.count_flops()`` every op records one number per pass, ``op.flops`` (forward) and
``op.flops_bwd`` (backward), in Lucid's convention: a matmul or a convolution counts one per
multiply-add (a MAC), every other op one per element operation (a FLOP). ``Tensor.flops`` sums
those numbers as Lucid 2.x did; ``Tensor.cost`` keeps the units apart. The two units are not
the same size -- a multiply-add is two floating-point operations -- so wherever counts are
*shown* (``summarize``, the drawings of ``lucid_viz``, ``%lucid_flops``) they are split:
``op.macs`` / ``op.macs_bwd`` say how many of an op's count are MACs, and a :class:`Cost` keeps
the two parts apart::

    Cost(macs=2_359_296, flops=16_576).text()          # '2,359,296 MACs + 16,576 FLOPs'
    Cost(macs=2_359_296, flops=16_576).text("FLOPs")   # '4,735,168 FLOPs'  (1 MAC = 2 FLOPs)

The collectives of ``lucid.distributed`` do no arithmetic worth counting; what they cost is
traffic, kept beside the work as ``bytes_sent`` (the bytes this process sends)::

    Cost(flops=0, bytes_sent=1_048_576).text()         # '0 FLOPs + 1,048,576 bytes sent'
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

__all__ = ["CONVENTION", "UNITS", "Cost", "check_unit", "op_cost", "total_cost"]

#: the two ways counts are shown: "MACs" (multiply-adds as MACs, the rest as FLOPs) or
#: "FLOPs" (everything in FLOPs, a multiply-add counted as 2)
UNITS = ("MACs", "FLOPs")

#: the convention, in one sentence, for captions and table footers
CONVENTION = ("MACs: multiply-adds of matmul, linear and convolution, one per multiply-add; "
              "FLOPs: every other operation, one per element; 1 MAC = 2 FLOPs")


def _plural(n: int, unit: str) -> str:
    return f"{n:,} {unit if n != 1 else unit[:-1]}"


@dataclass(frozen=True)
class Cost:
    """A count of work: ``macs`` multiply-adds and ``flops`` other floating-point operations;
    and of traffic: ``bytes_sent`` to other processes (collectives)."""

    macs: int = 0
    flops: int = 0
    bytes_sent: int = 0

    def __add__(self, other: Cost) -> Cost:
        return Cost(self.macs + other.macs, self.flops + other.flops,
                    self.bytes_sent + other.bytes_sent)

    @property
    def in_flops(self) -> int:
        """Everything in FLOPs: a multiply-add is a multiply and an add."""
        return 2 * self.macs + self.flops

    @property
    def seed_count(self) -> int:
        """Lucid's single number (``Tensor.flops``): MACs and FLOPs added as they are."""
        return self.macs + self.flops

    def __str__(self) -> str:
        return self.text()

    def text(self, unit: str = "MACs") -> str:
        """``'9,437,184 MACs + 90,880 FLOPs'`` (a part that is 0 is left out), or with
        ``unit="FLOPs"`` everything in FLOPs; bytes sent, when there are any, follow."""
        if check_unit(unit, "Cost.text") == "FLOPs":
            parts = [_plural(self.in_flops, "FLOPs")]
        else:
            parts = [_plural(self.macs, "MACs")] if self.macs else []
            if self.flops or not parts:
                parts.append(_plural(self.flops, "FLOPs"))
        if self.bytes_sent:
            parts.append(f"{self.bytes_sent:,} bytes sent")
        return " + ".join(parts)


def check_unit(unit: str, where: str) -> str:
    """``unit`` as one of :data:`UNITS` ("2*MACs" is accepted for "FLOPs"), else a ValueError
    naming ``where``."""
    if unit in ("2*MACs", "2·MACs"):
        return "FLOPs"
    if unit not in UNITS:
        raise ValueError(f"{where}: the unit must be 'MACs' (multiply-adds as MACs, the rest as "
                         f"FLOPs) or 'FLOPs' (everything in FLOPs), got {unit!r}")
    return unit


def op_cost(op: Any, backward: bool = False) -> Cost | None:
    """The recorded cost of one op's forward (or backward) pass; None when it was not counted
    (the graph was recorded outside ``count_flops()``)."""
    total = getattr(op, "flops_bwd" if backward else "flops", None)
    if total is None:
        return None
    macs = getattr(op, "macs_bwd" if backward else "macs", 0)
    sent = getattr(op, "bytes_sent_bwd" if backward else "bytes_sent", 0)
    return Cost(macs, total - macs, sent)


def total_cost(ops: Iterable[Any], backward: bool = False) -> Cost:
    """The summed cost of ``ops`` (ops that were not counted add nothing)."""
    total = Cost()
    for op in ops:
        cost = op_cost(op, backward)
        if cost is not None:
            total = total + cost
    return total

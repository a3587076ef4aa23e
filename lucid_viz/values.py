"""A tensor's numbers as a few short lines for a node of a picture.

Small tensors (at most :data:`SMALL` elements) show every value, four significant digits each;
larger ones a summary -- mean, standard deviation, minimum and maximum -- so a node never grows
wider than a few words.
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["SMALL", "value_lines"]

#: tensors with at most this many elements show every value on their node
SMALL = 8


def _num(x: float) -> str:
    return f"{x:.4g}"


def _nested(values: Any) -> str:
    if isinstance(values, list):
        return "[" + ", ".join(_nested(v) for v in values) + "]"
    return _num(values)


def value_lines(label: str, array: Any) -> list[str]:
    """``["data 0.7864"]``, ``["grad [0.25, -1.5]"]`` or, for a large tensor,
    ``["data mean 0.012 std 0.98", "min -2.1 max 2.4"]``."""
    a = np.asarray(array)
    if a.dtype == bool:
        a = a.astype(np.int64)
    if np.iscomplexobj(a):
        return [f"{label} complex, {a.size} values"]
    a = a.astype(np.float64, copy=False)
    if a.size == 0:
        return [f"{label} (empty)"]
    if a.size <= SMALL:
        return [f"{label} {_nested(a.tolist())}"]
    return [f"{label} mean {_num(float(a.mean()))} std {_num(float(a.std()))}",
            f"min {_num(float(a.min()))} max {_num(float(a.max()))}"]

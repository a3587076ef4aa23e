"""Activation functions as plain functions: ``F.relu(x)``, ``F.softmax(x, axis=1)`` ...

These are the public functions of every op in :mod:`lucid.ops.activation` (a new activation
op appears here by itself), plus ``tanh``, the elementwise op of :mod:`lucid.ops.elementwise`;
the op classes hold the formulas, their derivatives and their FLOPs rules.
"""

from __future__ import annotations

from lucid.ops import FUNCTIONS, activation, tanh  # noqa: F401  (re-exported)

_ACTIVATIONS = {name: fn for name, fn in FUNCTIONS.items() if fn.__module__ == activation.__name__}
globals().update(_ACTIVATIONS)

__all__ = sorted([*_ACTIVATIONS, "tanh"])

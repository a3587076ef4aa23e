"""Activation functions as plain functions: ``F.relu(x)``, ``F.softmax(x, axis=1)`` ...

Each is one op of :mod:`lucid.ops.activation` (``tanh`` is the elementwise op of
:mod:`lucid.ops.elementwise`); the op classes there hold the formulas, their derivatives and
their FLOPs rules.
"""

from __future__ import annotations

from lucid.ops import elu, gelu, leaky_relu, log_softmax, relu, sigmoid, silu, softmax, tanh

__all__ = [
    "relu",
    "leaky_relu",
    "elu",
    "gelu",
    "silu",
    "sigmoid",
    "tanh",
    "softmax",
    "log_softmax",
]

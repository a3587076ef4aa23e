"""Activations: elementwise nonlinearities, and softmax / log-softmax along one axis.

Every op here *could* be written from the primitives of ``elementwise.py`` and
``reduction.py`` -- and ``tests/test_nn_layers.py`` checks that each one matches that
composite, values and gradients (exact GELU, which needs an erf primitive Lucid does not
have, is checked against its derivative formula instead).  They are single ops because a
network calls them on every batch: one op means one dispatch, one saved array and one backward
rule written from the simplified derivative instead of the chain of small rules autodiff
would compose.

Numerical stability: softmax and log-softmax subtract the row maximum before ``exp`` (the
result is unchanged, since softmax(x) = softmax(x - c), and ``exp`` never overflows); sigmoid
and softplus evaluate ``exp(-|x|)``, which never overflows either.

FLOPs convention (n = elements of the input, m = rows, i.e. n / size of the softmax axis): the
arithmetic operations and comparisons the rule performs per element, a transcendental
function (exp, log, tanh, erf) counting as one and a select (``where``) as zero; each docstring
lists the count.  Reductions inside softmax count one per input element, as in
``reduction.py``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lucid.ops.base import Op
from lucid.ops.elementwise import Elementwise, _erf
from lucid.shapes import normalize_axis

SQRT_HALF = math.sqrt(0.5)
INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
GELU_K = 0.044715

# --------------------------------------------------------------------------------------------
# helpers shared by the rules


def _sigmoid(xp: Any, x: Any) -> Any:
    """1 / (1 + e^-x) without overflow, as  e^min(x, 0) / (1 + e^-|x|):

    for x >= 0 that is 1 / (1 + e^-x); for x < 0 it is e^x / (1 + e^x), the same value with
    numerator and denominator multiplied by e^x.  Neither exponent is ever positive, so
    nothing overflows, and no branch (``where``) is needed.
    7 operations per element: min, exp, abs, neg, exp, add, divide.

    MLX has its own sigmoid, and so has the namespace of Lucid ops that ``create_graph``
    runs backward rules on (``lucid.sigmoid``, whose rule y(1 - y) is smooth): min and abs
    have kinks at 0, so derivatives taken through this formula are wrong there from the third
    order on (silu's third derivative at 0 would be 1/8, not 0).
    """
    own = getattr(xp, "sigmoid", None)
    if own is not None:
        return own(x)
    x = _as_float(xp, x)
    return xp.exp(xp.minimum(x, 0)) / (1 + xp.exp(-xp.abs(x)))


def _as_float(xp: Any, x: Any) -> Any:
    """An integer or bool array as a float one: -|x| of a uint8 wraps around to a large
    positive number.  With NumPy, the float its own functions give (int64 -> float64,
    uint8 -> float16); with MLX, float32 (the dispatcher then casts to NumPy's)."""
    if not str(x.dtype).rsplit(".", 1)[-1].startswith(("int", "uint", "bool")):
        return x  # (floats; and Tensors, under create_graph, whose dtypes read "Float64")
    if isinstance(x, np.ndarray):
        return x.astype(np.result_type(x.dtype, np.float16))
    return x.astype(xp.float32)


def _softplus(xp: Any, x: Any) -> Any:
    """log(1 + e^x) without overflow, as max(x, 0) + log(1 + e^-|x|); under ``create_graph``
    Lucid's softplus op, whose derivatives are exact at 0 (see :func:`_sigmoid`)."""
    own = getattr(xp, "softplus", None)
    if own is not None:
        return own(x)
    x = _as_float(xp, x)
    return xp.maximum(x, 0) + xp.log1p(xp.exp(-xp.abs(x)))




# --------------------------------------------------------------------------------------------
# activations


class ReLU(Elementwise):
    """y = max(x, 0).   dy/dx = 1 where x > 0, else 0 (0 at x = 0, as PyTorch).

    Backward reads only the output: y > 0 exactly where x > 0.
    FLOPs: forward 1 (max), backward 2 (compare, multiply) per element.
    """

    name = "relu"
    method = True
    saves_inputs = False
    saves_output = True
    bwd_cost = 2

    def forward(self, xp, x):
        self.y = xp.maximum(x, 0)
        return self.y

    def backward(self, xp, g):
        # g * mask rather than where(mask, g, 0): on NumPy the multiply is several times faster
        return (g * (self.y > 0),)


class LeakyReLU(Elementwise):
    """y = x for x > 0, a·x otherwise (a = ``negative_slope``).   dy/dx = 1 or a.

    FLOPs: forward 2 (compare, multiply), backward 2 (compare, multiply) per element.
    """

    name = "leaky_relu"
    fwd_cost = 2
    bwd_cost = 2

    def __init__(self, negative_slope: float = 0.01) -> None:
        self.slope = float(negative_slope)

    def forward(self, xp, x):
        self.x = x
        return xp.where(x > 0, x, x * self.slope)

    def backward(self, xp, g):
        return (xp.where(self.x > 0, g, g * self.slope),)


class ELU(Elementwise):
    """y = x for x > 0, α(e^x - 1) otherwise.   dy/dx = 1 for x > 0, α e^x = y + α otherwise.

    ``expm1`` is evaluated at min(x, 0) so that large positive x (whose branch is not taken)
    never overflow.  FLOPs: forward 4 (min, expm1, multiply, compare), backward 3 (compare,
    add, multiply) per element.
    """

    name = "elu"
    saves_output = True
    fwd_cost = 4
    bwd_cost = 3

    def __init__(self, alpha: float = 1.0) -> None:
        self.alpha = float(alpha)

    def forward(self, xp, x):
        self.x = x
        self.y = xp.where(x > 0, x, self.alpha * xp.expm1(xp.minimum(x, 0)))
        return self.y

    def backward(self, xp, g):
        return (xp.where(self.x > 0, g, g * (self.y + self.alpha)),)


class SELU(Elementwise):
    """y = λ·x for x > 0, λ·α(e^x - 1) otherwise, with PyTorch's constants α = 1.67326...,
    λ = 1.05070... (self-normalising: zero mean, unit variance stay so through the layers).
    dy/dx = λ for x > 0, λα e^x = y + λα otherwise.

    FLOPs: forward 5 (min, expm1, two multiplies, compare), backward 3 per element.
    """

    name = "selu"
    saves_output = True
    fwd_cost = 5
    bwd_cost = 3
    ALPHA = 1.6732632423543772848170429916717
    SCALE = 1.0507009873554804934193349852946

    def forward(self, xp, x):
        self.x = x
        self.y = self.SCALE * xp.where(x > 0, x, self.ALPHA * xp.expm1(xp.minimum(x, 0)))
        return self.y

    def backward(self, xp, g):
        return (xp.where(self.x > 0, g * self.SCALE, g * (self.y + self.SCALE * self.ALPHA)),)


class ReLU6(Elementwise):
    """y = min(max(x, 0), 6).   dy/dx = 1 for 0 < x < 6, else 0 (as PyTorch at the corners).

    FLOPs: forward 2 (max, min), backward 3 (two compares, a multiply) per element.
    """

    name = "relu6"
    fwd_cost = 2
    bwd_cost = 3

    def forward(self, xp, x):
        self.x = x
        return xp.minimum(xp.maximum(x, 0), 6)

    def backward(self, xp, g):
        x = self.x
        return (xp.where((x > 0) & (x < 6), g, 0 * g),)


class Hardsigmoid(Elementwise):
    """y = relu6(x + 3) / 6: 0 below -3, 1 above 3, linear between.
    dy/dx = 1/6 for -3 < x < 3, else 0.

    FLOPs: forward 4 (add, max, min, divide), backward 3 per element.
    """

    name = "hardsigmoid"
    fwd_cost = 4
    bwd_cost = 3

    def forward(self, xp, x):
        self.x = x
        return xp.minimum(xp.maximum(x + 3, 0), 6) / 6

    def backward(self, xp, g):
        x = self.x
        return (xp.where((x > -3) & (x < 3), g / 6, 0 * g),)


class Hardswish(Elementwise):
    """y = x · relu6(x + 3) / 6 (MobileNetV3).   dy/dx = 0 for x <= -3, 1 for x >= 3, and
    x/3 + 1/2 between (PyTorch's choice at the corners: 0 at -3, 1 at 3).

    FLOPs: forward 5 (add, max, min, multiply, divide), backward 5 per element.
    """

    name = "hardswish"
    fwd_cost = 5
    bwd_cost = 5

    def forward(self, xp, x):
        self.x = x
        return x * xp.minimum(xp.maximum(x + 3, 0), 6) / 6

    def backward(self, xp, g):
        x = self.x
        return (xp.where(x <= -3, 0 * g, xp.where(x < 3, g * (x / 3 + 0.5), g)),)


class Mish(Elementwise):
    """y = x · tanh(softplus(x)), softplus(x) = log(1 + e^x) (Misra 2019).
    dy/dx = t + x (1 - t²) σ(x), with t = tanh(softplus(x)) and σ the logistic sigmoid
    (σ = d softplus / dx).

    softplus is computed as max(x, 0) + log(1 + e^(-|x|)), which never overflows.
    FLOPs: forward 8, backward 9 per element.
    """

    name = "mish"
    fwd_cost = 8
    bwd_cost = 9

    def forward(self, xp, x):
        self.x = x
        self.t = xp.tanh(_softplus(xp, x))
        return x * self.t

    def backward(self, xp, g):
        x, t = self.x, self.t
        return (g * (t + x * (1 - t * t) * _sigmoid(xp, x)),)


class GELU(Elementwise):
    """Gaussian error linear unit, y = x·Φ(x) with Φ the standard normal CDF.

    ``approximate="none"`` (PyTorch's default): Φ(x) = (1 + erf(x/√2)) / 2 and
        dy/dx = Φ(x) + x·φ(x),  φ(x) = e^(-x²/2) / √(2π).
    FLOPs: forward 5, backward 7 per element.  (NumPy has no erf: on "cpu" it is Python's
    ``math.erf`` per element -- exact but slow; use the tanh form for speed.)

    ``approximate="tanh"``: Φ(x) ≈ (1 + tanh(u)) / 2 with u = √(2/π)(x + 0.044715 x³), and
        dy/dx = (1 + t)/2 + (x/2)(1 - t²)·√(2/π)(1 + 3·0.044715 x²),  t = tanh(u).
    FLOPs: forward 9, backward 13 per element.
    """

    name = "gelu"

    def __init__(self, approximate: str = "none") -> None:
        if approximate not in ("none", "tanh"):
            raise self.error(f"approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate
        self.fwd_cost, self.bwd_cost = (5, 7) if approximate == "none" else (9, 13)

    def forward(self, xp, x):
        self.x = x
        if self.approximate == "none":
            self.cdf = 0.5 * (1 + _erf(xp, x * SQRT_HALF))
            return x * self.cdf
        self.t = xp.tanh(SQRT_2_OVER_PI * (x + GELU_K * (x * x * x)))
        return 0.5 * x * (1 + self.t)

    def backward(self, xp, g):
        x = self.x
        if self.approximate == "none":
            pdf = xp.exp(-0.5 * (x * x)) * INV_SQRT_2PI
            return (g * (self.cdf + x * pdf),)
        t = self.t
        du = SQRT_2_OVER_PI * (1 + (3 * GELU_K) * (x * x))
        return (g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * du),)


class SiLU(Elementwise):
    """SiLU (swish), y = x·σ(x).   dy/dx = σ(x)(1 + x(1 - σ(x))).

    FLOPs: forward 8 (the stable sigmoid's 7, one multiply), backward 5 per element.
    """

    name = "silu"
    fwd_cost = 8
    bwd_cost = 5

    def forward(self, xp, x):
        self.x = x
        self.s = _sigmoid(xp, x)
        return x * self.s

    def backward(self, xp, g):
        s = self.s
        return (g * s * (1 + self.x * (1 - s)),)


class Sigmoid(Elementwise):
    """y = σ(x) = 1 / (1 + e^-x).   dy/dx = σ(x)(1 - σ(x)) = y(1 - y): backward reuses y.

    Computed from exponents that are never positive, so it never overflows.
    FLOPs: forward 7, backward 3 per element.
    """

    name = "sigmoid"
    method = True
    saves_inputs = False
    saves_output = True
    fwd_cost = 7
    bwd_cost = 3

    def forward(self, xp, x):
        self.y = _sigmoid(xp, x)
        return self.y

    def backward(self, xp, g):
        y = self.y
        return (g * y * (1 - y),)


class Softplus(Elementwise):
    """y = log(1 + e^(βx)) / β   (β = ``beta``, 1 by default).   dy/dx = σ(βx).

    Computed as  (max(βx, 0) + log(1 + e^(-|βx|))) / β,  whose exponent is never positive, so
    nothing overflows for large |x| (log(1 + e^x) taken literally is inf from x ≈ 89 in
    float32).  Where βx > ``threshold`` the result is x itself, as PyTorch does.  A negative
    β is allowed (PyTorch allows it too): y = -softplus(-x) for β = -1.
    FLOPs: forward 8 (multiply, abs, neg, exp, log1p, divide, max, add), backward 9 (the
    stable sigmoid's 7, the multiply by β inside it, the multiply by g) per element.
    """

    name = "softplus"
    fwd_cost = 8
    bwd_cost = 9

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        self.beta = float(beta)
        self.threshold = float(threshold)
        if self.beta == 0:
            raise self.error("beta must be nonzero (y = log(1 + e^(beta x)) / beta)")

    def forward(self, xp, x):
        self.x = x = _as_float(xp, x)
        bx = x * self.beta if self.beta != 1 else x
        y = (xp.maximum(bx, 0) + xp.log1p(xp.exp(-xp.abs(bx)))) / self.beta
        return xp.where(bx > self.threshold, x, y)

    def backward(self, xp, g):
        bx = self.x * self.beta if self.beta != 1 else self.x
        return (xp.where(bx > self.threshold, g, g * _sigmoid(xp, bx)),)


# --------------------------------------------------------------------------------------------
# softmax and log-softmax along one axis


class _AlongAxis(Op):
    """An op that normalises along one ``axis`` (softmax, log-softmax)."""

    def __init__(self, axis: int = -1) -> None:
        self.axis = axis

    def setup(self, x: Any) -> int:
        if x.ndim == 0:
            raise self.error(
                "needs a tensor with at least 1 dimension, got a 0-d tensor (a scalar); "
                "reshape it first, e.g. x.reshape(1)"
            )
        axis = normalize_axis(self.name, self.axis, x.ndim)
        self.ax = axis
        return axis

    def empty(self, xp: Any, x: Any) -> Any:
        """An empty input: nothing to normalise (and a max over no elements has no value)."""
        self.y = xp.zeros(x.shape, dtype=x.dtype)
        return self.y

    @staticmethod
    def rows(out: Any, ax: int) -> int:
        """m: how many independent rows the axis splits the tensor into."""
        return out.size // out.shape[ax] if out.shape[ax] else 0


class Softmax(_AlongAxis):
    """y_i = e^(x_i) / sum_j e^(x_j) along ``axis`` (computed as e^(x_i - max) / sum ...).

    Jacobian dy_i/dx_j = y_i (δ_ij - y_j), so the vector-Jacobian product is
        dL/dx = y ⊙ (g - sum_j g_j y_j)     (the sum along the axis, broadcast back).
    FLOPs: forward 5n (max, subtract, exp, sum, divide), backward 4n (multiply, sum,
    subtract, multiply).
    """

    name = "softmax"
    method = True
    saves_inputs = False
    saves_output = True

    def forward(self, xp, x):
        ax = self.setup(x)
        if x.size == 0:
            return self.empty(xp, x)
        e = xp.exp(x - xp.max(x, axis=ax, keepdims=True))
        self.y = e / xp.sum(e, axis=ax, keepdims=True)
        return self.y

    def backward(self, xp, g):
        y = self.y
        return (y * (g - xp.sum(g * y, axis=self.ax, keepdims=True)),)

    def forward_flops(self, out, x):
        return 5 * out.size

    def backward_flops(self, out, x):
        return 4 * out.size


class LogSoftmax(_AlongAxis):
    """y_i = x_i - log sum_j e^(x_j) along ``axis`` (the log-sum-exp taken after subtracting
    the maximum, so it never overflows).

    dy_i/dx_j = δ_ij - softmax_j, so  dL/dx = g - softmax(x) ⊙ sum_j g_j,  softmax = e^y.
    FLOPs: forward 5n + m (max, subtract, exp, sum, subtract; one log per row), backward 4n
    (exp, sum, multiply, subtract).
    """

    name = "log_softmax"
    method = True
    saves_inputs = False
    saves_output = True

    def forward(self, xp, x):
        ax = self.setup(x)
        if x.size == 0:
            return self.empty(xp, x)
        z = x - xp.max(x, axis=ax, keepdims=True)
        self.y = z - xp.log(xp.sum(xp.exp(z), axis=ax, keepdims=True))
        return self.y

    def backward(self, xp, g):
        return (g - xp.exp(self.y) * xp.sum(g, axis=self.ax, keepdims=True),)

    def forward_flops(self, out, x):
        return 5 * out.size + self.rows(out, self.ax)

    def backward_flops(self, out, x):
        return 4 * out.size

"""Weight initialisation: fill a Parameter in place with values of a chosen scale.

Why the scale matters: a layer y = W x with fan_in inputs sums fan_in terms, so
Var(y) = fan_in · Var(W) · Var(x).  Keeping activations (and gradients) at a steady size
through many layers means choosing Var(W) ~ 1/fan_in:

* **Xavier/Glorot** (tanh, sigmoid, linear): Var(W) = gain² · 2 / (fan_in + fan_out), a
  compromise between the forward (fan_in) and backward (fan_out) passes;
* **Kaiming/He** (ReLU family): Var(W) = gain² / fan, with gain² = 2 for ReLU because ReLU
  zeroes half its inputs.

A uniform distribution U(-b, b) has variance b²/3, so the uniform variants use
b = sqrt(3 · Var).  Every function fills the tensor in place (under ``no_grad``, keeping its
dtype and device), draws from ``lucid.random`` (so ``lucid.random.seed`` makes it
reproducible) and returns the tensor, as PyTorch's ``torch.nn.init`` does.

The trailing underscore is PyTorch's mark of an in-place function; Lucid 2.x spelled the same
functions without it (``kaiming_normal``, ``xavier_uniform``, ``zeros`` ...).  Both spellings
are here and are the same function objects, so ``init.kaiming_normal is init.kaiming_normal_``.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from lucid import random
from lucid.engine.mode import no_grad
from lucid.shapes import fmt
from lucid.tensor import Tensor, TensorIdioms

__all__ = [
    "calculate_gain",
    "uniform_",
    "normal_",
    "constant_",
    "zeros_",
    "ones_",
    "xavier_uniform_",
    "xavier_normal_",
    "kaiming_uniform_",
    "kaiming_normal_",
    "orthogonal_",
    "trunc_normal_",
    "eye_",
    # Lucid 2.x's names, without the trailing underscore: the same functions
    "uniform",
    "normal",
    "constant",
    "zeros",
    "ones",
    "xavier_uniform",
    "xavier_normal",
    "kaiming_uniform",
    "kaiming_normal",
]


def calculate_gain(nonlinearity: str, param: float | None = None) -> float:
    """The recommended gain for ``nonlinearity`` (PyTorch's table).

    ================================  ====================================
    linear, conv*, sigmoid, identity  1
    tanh                              5/3
    relu                              sqrt(2)
    leaky_relu                        sqrt(2 / (1 + slope²)), slope = param or 0.01
    selu                              3/4
    ================================  ====================================
    """
    linear = ("linear", "identity", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
              "conv_transpose2d", "conv_transpose3d", "sigmoid")
    if nonlinearity in linear:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            slope = 0.01
        elif isinstance(param, bool) or not isinstance(param, (int, float)):
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a number")
        else:
            slope = float(param)
        return math.sqrt(2.0 / (1 + slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"calculate_gain: unsupported nonlinearity {nonlinearity!r}")


def _calculate_fan_in_and_fan_out(tensor: Tensor) -> tuple[int, int]:
    """(fan_in, fan_out) of a weight of shape (out, in, *kernel): in·k and out·k, k = prod(kernel).

    A Linear weight (out, in) has fan_in = in, fan_out = out; a Conv2d weight
    (out, in/groups, kh, kw) has fan_in = in/groups · kh · kw.
    """
    if tensor.ndim < 2:
        raise ValueError(
            f"Fan in and fan out can not be computed for a tensor with fewer than 2 dimensions "
            f"(shape {fmt(tensor.shape)})"
        )
    receptive = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _fan(tensor: Tensor, mode: str) -> int:
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"kaiming init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def _fill(fn: str, tensor: Tensor, values: Tensor) -> Tensor:
    """Write ``values`` into ``tensor`` in place (its dtype and device kept); returns it."""
    with no_grad():
        tensor._data = values._data
        tensor._dtype = values._dtype
        tensor._version += 1
    return tensor


def _check(fn: str, tensor: Any) -> None:
    if not isinstance(tensor, Tensor):
        raise TypeError(f"{fn}: expected a Tensor (or Parameter), got {type(tensor).__name__}")
    if not tensor.dtype.is_floating_point:
        raise TypeError(f"{fn}: needs a floating-point tensor, got {tensor.dtype.name}")


def uniform_(tensor: Tensor, a: float = 0.0, b: float = 1.0) -> Tensor:
    """Fill with samples from U(a, b)."""
    _check("uniform_", tensor)
    if not b > a:
        raise ValueError(f"uniform_: b ({b}) must be greater than a ({a})")
    values = random.uniform(a, b, size=tensor.shape, dtype=tensor.dtype, device=tensor.device)
    return _fill("uniform_", tensor, values)


def normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0) -> Tensor:
    """Fill with samples from N(mean, std²)."""
    _check("normal_", tensor)
    if not std >= 0:
        raise ValueError(f"normal_: std must be >= 0, got {std}")
    with no_grad():
        values = random.randn(tensor.shape, dtype=tensor.dtype, device=tensor.device) * std
        values = values + mean
    return _fill("normal_", tensor, values)


def constant_(tensor: Tensor, val: float) -> Tensor:
    """Fill with the value ``val``."""
    _check("constant_", tensor)
    values = Tensor(np.full(tensor.shape, val), dtype=tensor.dtype, device=tensor.device)
    return _fill("constant_", tensor, values)


def zeros_(tensor: Tensor) -> Tensor:
    """Fill with 0."""
    return constant_(tensor, 0.0)


def ones_(tensor: Tensor) -> Tensor:
    """Fill with 1."""
    return constant_(tensor, 1.0)


def xavier_uniform_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot uniform: U(-b, b), b = gain · sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(tensor, -bound, bound)


def xavier_normal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Glorot normal: N(0, std²), std = gain · sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / (fan_in + fan_out)))


def kaiming_uniform_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu") -> Tensor:
    """He uniform: U(-b, b), b = gain · sqrt(3 / fan), gain = calculate_gain(nonlinearity, a).

    ``nn.Linear`` uses a = sqrt(5), for which b = 1/sqrt(fan_in) (PyTorch's default).
    """
    fan = _fan(tensor, mode)
    if fan == 0:
        raise ValueError(f"kaiming_uniform_: tensor of shape {fmt(tensor.shape)} has fan 0")
    bound = calculate_gain(nonlinearity, a) * math.sqrt(3.0 / fan)
    return uniform_(tensor, -bound, bound)


def kaiming_normal_(tensor: Tensor, a: float = 0.0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu") -> Tensor:
    """He normal: N(0, std²), std = gain / sqrt(fan), gain = calculate_gain(nonlinearity, a)."""
    fan = _fan(tensor, mode)
    if fan == 0:
        raise ValueError(f"kaiming_normal_: tensor of shape {fmt(tensor.shape)} has fan 0")
    return normal_(tensor, 0.0, calculate_gain(nonlinearity, a) / math.sqrt(fan))


def orthogonal_(tensor: Tensor, gain: float = 1.0) -> Tensor:
    """Fill with a (semi-)orthogonal matrix times ``gain`` (Saxe et al. 2013; PyTorch's
    recipe): the tensor seen as rows x cols (its first axis by the rest), the Q of the QR
    decomposition of a Gaussian matrix, its columns' signs fixed by R's diagonal so that Q is
    uniformly distributed.  Rows (or columns, whichever are fewer) are then orthonormal:
    W W^T = gain^2 I when rows <= cols."""
    _check("orthogonal_", tensor)
    if tensor.ndim < 2:
        raise ValueError(f"orthogonal_: needs a tensor of 2 or more dimensions, got shape "
                         f"{fmt(tensor.shape)}")
    rows = tensor.shape[0]
    cols = tensor.size // rows if rows else 0
    flat = random.randn((rows, cols), dtype="float64").numpy()
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))  # makes the decomposition unique: Q is Haar-distributed
    if rows < cols:
        q = q.T
    values = Tensor(q.reshape(tensor.shape) * gain, dtype=tensor.dtype, device=tensor.device)
    return _fill("orthogonal_", tensor, values)


def trunc_normal_(tensor: Tensor, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0) -> Tensor:
    """Fill with samples from N(mean, std²) truncated to [a, b] (absolute bounds, as in
    PyTorch): draws outside the bounds are drawn again."""
    _check("trunc_normal_", tensor)
    if not std > 0 or not a < b:
        raise ValueError(f"trunc_normal_: needs std > 0 and a < b, got std={std}, a={a}, b={b}")
    values = random.randn((tensor.size,), dtype="float64").numpy() * std + mean
    bad = (values < a) | (values > b)
    while bad.any():  # the fraction redrawn shrinks geometrically
        values[bad] = random.randn((int(bad.sum()),), dtype="float64").numpy() * std + mean
        bad = (values < a) | (values > b)
    values = Tensor(values.reshape(tensor.shape), dtype=tensor.dtype, device=tensor.device)
    return _fill("trunc_normal_", tensor, values)


def eye_(tensor: Tensor) -> Tensor:
    """Fill a 2-D tensor with the identity matrix (ones on the diagonal, as far as it goes)."""
    _check("eye_", tensor)
    if tensor.ndim != 2:
        raise ValueError(f"eye_: needs a 2-D tensor, got shape {fmt(tensor.shape)}")
    values = Tensor(np.eye(*tensor.shape), dtype=tensor.dtype, device=tensor.device)
    return _fill("eye_", tensor, values)


def _accept_data(init: Any) -> Any:
    """``init`` also filling a parameter's ``.data`` (PyTorch's ``nn.init.normal_(m.weight.data,
    0.0, 0.02)``): a backend array with PyTorch's methods (:class:`lucid.tensor.TensorIdioms`),
    filled in place and returned."""

    @functools.wraps(init)
    def fill(tensor: Any, *args: Any, **kwargs: Any) -> Any:
        if not isinstance(tensor, TensorIdioms):
            return init(tensor, *args, **kwargs)
        view = Tensor._wrap(tensor._plain(), tensor._device)
        return tensor.copy_(init(view, *args, **kwargs))

    return fill


uniform_ = _accept_data(uniform_)
normal_ = _accept_data(normal_)
constant_ = _accept_data(constant_)
zeros_ = _accept_data(zeros_)
ones_ = _accept_data(ones_)
xavier_uniform_ = _accept_data(xavier_uniform_)
xavier_normal_ = _accept_data(xavier_normal_)
kaiming_uniform_ = _accept_data(kaiming_uniform_)
kaiming_normal_ = _accept_data(kaiming_normal_)
orthogonal_ = _accept_data(orthogonal_)
trunc_normal_ = _accept_data(trunc_normal_)
eye_ = _accept_data(eye_)

# Lucid 2.x's spellings (no trailing underscore): aliases, not copies
uniform = uniform_
normal = normal_
constant = constant_
zeros = zeros_
ones = ones_
xavier_uniform = xavier_uniform_
xavier_normal = xavier_normal_
kaiming_uniform = kaiming_uniform_
kaiming_normal = kaiming_normal_

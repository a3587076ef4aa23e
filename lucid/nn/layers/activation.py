"""Activation layers: each wraps one function of ``lucid.nn.functional``.

``inplace=`` (PyTorch's ``nn.ReLU(inplace=True)``, also ``nn.ReLU(True)``) is accepted and
changes nothing but the layer's printout: Lucid records no in-place ops in a graph, so the
layer returns a new tensor with the same values and gradients (the input is left as it was).
"""

from __future__ import annotations

from lucid.nn import functional as F
from lucid.nn.module import Module
from lucid.nn.parameter import Parameter
from lucid.tensor import Tensor


def _inplace(inplace: object) -> bool:
    if not isinstance(inplace, bool):
        raise TypeError(f"inplace must be True or False, got {inplace!r}")
    return inplace


__all__ = [
    "ReLU",
    "LeakyReLU",
    "ELU",
    "GELU",
    "SiLU",
    "Sigmoid",
    "Tanh",
    "Softmax",
    "LogSoftmax",
    "SELU",
    "Softplus",
    "Mish",
    "Hardswish",
    "Hardsigmoid",
    "ReLU6",
    "PReLU",
    "Hardtanh",
    "LogSigmoid",
    "Softsign",
    "GLU",
    "Softmin",
    "Threshold",
]


class ReLU(Module):
    """y = max(x, 0)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = _inplace(inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, x: Tensor) -> Tensor:
        return F.relu(x)


class LeakyReLU(Module):
    """y = x for x > 0, negative_slope·x otherwise."""

    def __init__(self, negative_slope: float = 0.01, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = _inplace(inplace)

    def forward(self, x: Tensor) -> Tensor:
        return F.leaky_relu(x, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}"


class ELU(Module):
    """y = x for x > 0, alpha·(e^x - 1) otherwise."""

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = _inplace(inplace)

    def forward(self, x: Tensor) -> Tensor:
        return F.elu(x, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}"


class GELU(Module):
    """y = x·Φ(x) (``approximate="tanh"`` for the tanh approximation)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"GELU: approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: Tensor) -> Tensor:
        return F.gelu(x, self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={self.approximate!r}"


class SiLU(Module):
    """y = x·sigmoid(x)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = _inplace(inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, x: Tensor) -> Tensor:
        return F.silu(x)


class Sigmoid(Module):
    """y = 1 / (1 + e^-x)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.sigmoid(x)


class Tanh(Module):
    """y = tanh(x)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.tanh(x)


class Softmax(Module):
    """y = softmax(x) along ``axis`` (each slice along it sums to 1)."""

    def __init__(self, axis: int = -1, *, dim: int | None = None) -> None:
        super().__init__()
        self.axis = axis if dim is None else dim  # dim=: PyTorch's name

    def forward(self, x: Tensor) -> Tensor:
        return F.softmax(x, self.axis)

    def extra_repr(self) -> str:
        return f"axis={self.axis}"


class LogSoftmax(Module):
    """y = log(softmax(x)) along ``axis``, computed stably."""

    def __init__(self, axis: int = -1, *, dim: int | None = None) -> None:
        super().__init__()
        self.axis = axis if dim is None else dim  # dim=: PyTorch's name

    def forward(self, x: Tensor) -> Tensor:
        return F.log_softmax(x, self.axis)

    def extra_repr(self) -> str:
        return f"axis={self.axis}"


class SELU(Module):
    """y = scale·(x if x > 0 else alpha·(e^x - 1)), PyTorch's self-normalising constants."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = _inplace(inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, x: Tensor) -> Tensor:
        return F.selu(x)


class Softplus(Module):
    """y = log(1 + e^(beta·x)) / beta, linear (y = x) where beta·x > threshold."""

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, x: Tensor) -> Tensor:
        return F.softplus(x, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class Mish(Module):
    """y = x·tanh(softplus(x))."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = _inplace(inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, x: Tensor) -> Tensor:
        return F.mish(x)


class Hardswish(Module):
    """y = x·relu6(x + 3)/6."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = _inplace(inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, x: Tensor) -> Tensor:
        return F.hardswish(x)


class Hardsigmoid(Module):
    """y = relu6(x + 3)/6."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = _inplace(inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, x: Tensor) -> Tensor:
        return F.hardsigmoid(x)


class ReLU6(Module):
    """y = min(max(x, 0), 6)."""

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = _inplace(inplace)

    def extra_repr(self) -> str:
        return "inplace=True" if self.inplace else ""

    def forward(self, x: Tensor) -> Tensor:
        return F.relu6(x)


class PReLU(Module):
    """max(x, 0) + a min(x, 0) with a learned slope ``a`` (one, or one per channel)."""

    def __init__(self, num_parameters: int = 1, init: float = 0.25) -> None:
        super().__init__()
        self.num_parameters = num_parameters
        self.weight = Parameter(Tensor([init] * num_parameters, dtype="float32"))

    def forward(self, x: Tensor) -> Tensor:
        return F.prelu(x, self.weight)

    def extra_repr(self) -> str:
        return f"num_parameters={self.num_parameters}"


class Hardtanh(Module):
    """x clipped to [min_val, max_val]."""

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0,
                 inplace: bool = False) -> None:
        super().__init__()
        self.min_val, self.max_val = min_val, max_val

    def forward(self, x: Tensor) -> Tensor:
        return F.hardtanh(x, self.min_val, self.max_val)


class LogSigmoid(Module):
    """log(sigmoid(x)), without overflow."""

    def forward(self, x: Tensor) -> Tensor:
        return F.logsigmoid(x)


class Softsign(Module):
    """x / (1 + |x|)."""

    def forward(self, x: Tensor) -> Tensor:
        return F.softsign(x)


class GLU(Module):
    """a * sigmoid(b), a and b the halves of the input along ``dim``."""

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.glu(x, self.dim)


class Softmin(Module):
    """softmax(-x) along ``dim``."""

    def __init__(self, dim: int | None = None) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, x: Tensor) -> Tensor:
        return F.softmin(x, self.dim)


class Threshold(Module):
    """x where x > threshold, else ``value``."""

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold, self.value = threshold, value

    def forward(self, x: Tensor) -> Tensor:
        return F.threshold(x, self.threshold, self.value)

"""The Tensor: an array, the graph node that made it, and its gradient.

A Tensor is three things at once:

* **data** -- the values, a backend array (``np.ndarray`` on "cpu", ``mx.array`` on "gpu");
* **graph metadata** -- ``_op`` (the operation object that produced it; its class name is the
  op's display name) and ``_prev`` (the input tensors of that op).  Leaves have neither;
* **gradient state** -- ``requires_grad``, ``keep_grad`` and ``grad`` (a backend array of the
  tensor's shape, or None).

Arithmetic, comparison and indexing methods are attached by :mod:`lucid.ops` (the op layer sits
above this module; imports flow one way).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from lucid import types
from lucid.backends import check_device, get_backend
from lucid.cost import Cost, total_cost
from lucid.engine.walk import nodes_below
from lucid.shapes import fmt

_PY_SCALARS = (bool, int, float, complex)


class RemovableHandle:
    """Returned by :meth:`Tensor.register_hook`; call it (or ``.remove()``) to remove the hook."""

    __slots__ = ("_hooks", "_key")

    def __init__(self, hooks: dict, key: int) -> None:
        self._hooks = hooks
        self._key = key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)

    __call__ = remove


class Tensor:
    """``Tensor(data, requires_grad=False, keep_grad=False, dtype=None, device="cpu",
    name=None)``.

    ``data`` may be a Python scalar or (nested) list, a NumPy array or another Tensor.  Python
    floats become float64 and ints int64 (NumPy's defaults).  ``dtype`` accepts a
    :class:`lucid.types.Numeric` (``lucid.Float32``), a builtin (``float``) or a NumPy dtype.
    ``name`` (also settable later: ``t.name = "w"``) labels the tensor where students see it:
    its node in ``lucid_viz`` pictures, the backward stepper, error messages.  A module names
    its parameters by their path (``fc1.weight``) unless they already have a name.
    """

    __slots__ = (
        "data",
        "grad",
        "requires_grad",
        "keep_grad",
        "device",
        "_prev",
        "_op",
        "_version",
        "_hooks",
        "_g",
        "_free",
        "_dtype",
        "name",
        "__weakref__",
    )

    # NumPy must hand binary operators back to us (``np.float32(2) * t`` -> Tensor.__rmul__).
    __array_ufunc__ = None

    def __init__(
        self,
        data: Any,
        requires_grad: bool = False,
        keep_grad: bool = False,
        dtype: Any = None,
        device: str = "cpu",
        name: str | None = None,
    ) -> None:
        check_device(device)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Tensor: name must be a string or None, got {type(name).__name__}")
        backend = get_backend(device)
        free = isinstance(data, (*_PY_SCALARS, list, tuple))
        if isinstance(data, Tensor):
            data = data.numpy() if data.device != "cpu" else data.data
        elif not isinstance(data, (np.ndarray, *_PY_SCALARS, list, tuple, np.generic)):
            data = _foreign_to_numpy(data)
        arr = np.array(data)  # a copy: later changes to the caller's array do not leak in
        logical = None
        if dtype is not None:
            numeric = types.as_numeric(dtype).resolve_bits(arr.dtype)
            arr = arr.astype(numeric.cpu, copy=False)
        else:
            numeric = types.to_numeric_type(arr.dtype)  # rejects strings, objects, ...
        if device != "cpu":
            stored = numeric.parse(device)
            arr = backend.asarray(arr, dtype=stored)
            if types.to_numeric_type(arr.dtype) != numeric:
                logical = numeric  # e.g. Float64 stored as float32 on an MLX GPU
        if requires_grad and not (numeric.is_floating_point or numeric.is_complex):
            raise TypeError(
                f"Tensor: requires_grad=True needs a floating-point or complex dtype, got "
                f"{numeric.name}. Pass dtype=lucid.Float32 (or lucid.Float64), or write the "
                "values as floats (1.0 instead of 1)."
            )
        self.data = arr
        self.grad = None
        self.requires_grad = bool(requires_grad)
        self.keep_grad = bool(keep_grad)
        self.device = device
        self._prev = ()
        self._op = None
        self._version = 0
        self._hooks = None
        self._g = None
        self._free = free
        self._dtype = logical
        self.name = name

    @classmethod
    def _wrap(cls, data: Any, device: str, requires_grad: bool = False) -> Tensor:
        """Wrap an existing backend array without copying or checking (internal fast path)."""
        t = object.__new__(cls)
        t.data = data
        t.grad = None
        t.requires_grad = requires_grad
        t.keep_grad = False
        t.device = device
        t._prev = ()
        t._op = None
        t._version = 0
        t._hooks = None
        t._g = None
        t._free = False
        t._dtype = None
        t.name = None
        return t

    # -- basic properties ----------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self.data.shape)

    @property
    def ndim(self) -> int:
        return self.data.ndim

    @property
    def size(self) -> int:
        """Number of elements (an int property, as in Lucid and NumPy)."""
        return int(self.data.size)

    @property
    def dtype(self) -> types.Numeric:
        """The logical dtype (a :class:`lucid.types.Numeric`)."""
        if self._dtype is not None:
            return self._dtype
        return types.to_numeric_type(self.data.dtype)

    @property
    def is_leaf(self) -> bool:
        """True for tensors no recorded op produced (inputs, parameters) or that need no grad."""
        return self._op is None or not self.requires_grad

    @property
    def is_free(self) -> bool:
        """A free tensor adopts the device of the op it meets (Python scalars, lists, free())."""
        return self._free

    def free(self) -> Tensor:
        """Mark this tensor free to move to whatever device an op needs; returns self."""
        self._free = True
        return self

    # -- conversion ----------------------------------------------------------------------
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array (shares memory on "cpu"; a copy from "gpu")."""
        arr = get_backend(self.device).to_numpy(self.data)
        if self._dtype is not None:  # stored narrower than it reports (Float64 on an MLX GPU)
            arr = arr.astype(self._dtype.cpu)
        return arr

    def __array__(self, dtype: Any = None, copy: Any = None) -> np.ndarray:
        arr = self.numpy()
        return arr if dtype is None else arr.astype(dtype)

    def tolist(self) -> Any:
        return self.numpy().tolist()

    def item(self) -> bool | int | float | complex:
        """The single value as a Python number whose type follows the dtype (never the value)."""
        if self.size != 1:
            raise ValueError(
                f"item(): only a tensor with one element can be converted to a Python number; "
                f"this one has shape {fmt(self.shape)} ({self.size} elements). Index it first."
            )
        return self.numpy().reshape(()).item()

    def detach(self) -> Tensor:
        """The same values, cut from the graph (shares the data array)."""
        t = Tensor._wrap(self.data, self.device)
        t._dtype = self._dtype
        return t

    # ``to``, ``cpu`` and ``gpu`` are ops (the move is part of the graph): lucid/ops/device.py

    def eval(self) -> Tensor:
        """Force evaluation of lazy (MLX) data now and cut MLX's own graph behind it.

        MLX records work lazily; calling ``loss.eval()`` before ``loss.backward()`` (Lucid 2.x)
        makes the value concrete.  On the eager "cpu" device this does nothing.  Returns self.
        """
        if self.device != "cpu":
            backend = get_backend(self.device)
            self.data = backend.stop_gradient(self.data)
            backend.evaluate(self.data, self.grad)
        return self

    # -- autograd (``backward`` is attached by the op layer: lucid/ops/backward.py) ---------
    def register_hook(self, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
        """Call ``hook(grad)`` when this tensor's gradient is complete during backward.

        The hook may return a replacement gradient.  Returns a handle; call it (or its
        ``remove()``) to remove the hook.
        """
        if not self.requires_grad:
            raise RuntimeError(
                "register_hook(): this tensor does not require grad, so no gradient will reach "
                "it. Create it with requires_grad=True."
            )
        if self._hooks is None:
            self._hooks = {}
        key = max(self._hooks, default=-1) + 1
        self._hooks[key] = _array_hook(hook, self.device, self.shape)
        return RemovableHandle(self._hooks, key)

    def zero_grad(self) -> None:
        self.grad = None

    @property
    def op_name(self) -> str:
        """Display name of the op that made this tensor ("leaf" for leaves)."""
        return "leaf" if self._op is None else type(self._op).__name__

    @property
    def flops(self) -> int:
        """Lucid's single count of forward work recorded (inside ``count_flops()``) for the graph
        below this tensor: every op's count added as it is -- multiply-adds (MACs) of
        matmul/linear/conv and the FLOPs of every other op.  :attr:`cost` keeps the two apart.

        Counts each node once (:func:`~lucid.engine.walk.nodes_below`), so a tensor reused
        along two paths is not counted twice.
        """
        return self.cost.seed_count

    @property
    def cost(self) -> Cost:
        """The forward work recorded for the graph below this tensor in honest units:
        ``Cost(macs=..., flops=...)``; ``str(y.cost)`` reads ``'60 MACs + 45 FLOPs'`` and
        ``y.cost.in_flops`` gives everything in FLOPs (see :mod:`lucid.cost`)."""
        return total_cost([node._op for node in nodes_below(self) if node._op is not None])

    # -- Python protocol -----------------------------------------------------------------
    __hash__ = object.__hash__  # __eq__ is elementwise; identity hashing keeps sets working

    def __len__(self) -> int:
        if self.ndim == 0:
            raise TypeError("len() of a 0-d tensor")
        return self.data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                f"The truth value of a tensor with {self.size} elements is ambiguous; use "
                "lucid.any(...) / lucid.all(...) or compare one element."
            )
        return bool(self.item())

    def __float__(self) -> float:
        return float(self.item())

    def __int__(self) -> int:
        return int(self.item())

    def __repr__(self) -> str:
        body = np.array2string(
            self.numpy(), separator=", ", prefix="Tensor(", threshold=100, precision=4
        )
        extra = ""
        if self.device != "cpu":
            extra += f", device={self.device!r}"
        dtype = self.dtype
        if dtype not in (types.Float64, types.Int64, types.Bool):
            extra += f", dtype={dtype.name}"
        if self.requires_grad:
            extra += ", requires_grad=True" if self._op is None else f", op={self.op_name}"
        if self.name is not None:
            extra += f", name={self.name!r}"
        return f"Tensor({body}{extra})"

    def describe(self) -> str:
        """How error messages name this tensor: ``'w' (3, 4)`` when named, else its shape."""
        shape = fmt(self.shape)
        return f"{self.name!r} {shape}" if self.name is not None else shape


def _array_hook(hook: Callable[[Tensor], Any], device: str, shape: tuple[int, ...]) -> Callable:
    """``hook`` as the backward walk calls it: array in, array (or None) out.

    The walk deals in backend arrays only (it sits below this module); the user's hook sees
    the gradient as a Tensor, and a replacement it returns must keep the tensor's shape.
    """

    def on_gradient(g: Any) -> Any:
        out = hook(Tensor._wrap(g, device))
        if out is None:
            return None
        name = getattr(hook, "__name__", hook)
        backend = get_backend(device)
        if isinstance(out, Tensor):
            if out.device != device:
                raise RuntimeError(
                    f"hook {name!r} returned a gradient on {out.device!r} for a tensor on "
                    f"{device!r}; return it on the tensor's device (grad.to({device!r}))"
                )
            data = out.data
        elif isinstance(out, backend.array_type):
            data = out
        else:
            raise TypeError(
                f"hook {name!r} returned {type(out).__name__}; a gradient hook returns a Tensor "
                "of the gradient's shape (a replacement) or None (to keep the gradient)"
            )
        if tuple(data.shape) != shape:
            raise RuntimeError(
                f"hook {name!r} returned a gradient of shape "
                f"{fmt(tuple(data.shape))} for a tensor of shape {fmt(shape)}"
            )
        return data

    return on_gradient


def _foreign_to_numpy(data: Any) -> np.ndarray:
    """Arrays from other libraries (MLX, ...) through the buffer/array protocol."""
    try:
        return np.asarray(data)
    except Exception as exc:  # noqa: BLE001 -- re-raised with the type named
        raise TypeError(
            f"Tensor: cannot build a tensor from {type(data).__name__}; pass a number, a list, "
            "a NumPy array or a Tensor"
        ) from exc


def tensor(
    data: Any,
    requires_grad: bool = False,
    keep_grad: bool = False,
    dtype: Any = None,
    device: str = "cpu",
) -> Tensor:
    """Build a Tensor (the function spelling of ``lucid.Tensor(...)``)."""
    return Tensor(data, requires_grad=requires_grad, keep_grad=keep_grad, dtype=dtype,
                  device=device)


__all__ = ["Tensor", "tensor", "RemovableHandle"]

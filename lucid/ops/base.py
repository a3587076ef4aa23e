"""The ``Op`` base class, the op registry and the dispatcher ``apply``.

One operation is one class holding everything about it (STYLE #1)::

    class Exp(Op):
        '''y = e^x.   dy/dx = e^x = y, so backward reuses the output.'''
        name = "exp"
        saves_output = True
        def forward(self, xp, x):           self.y = xp.exp(x); return self.y
        def backward(self, xp, g):          return (g * self.y,)
        def forward_flops(self, out, x):    return out.size
        def backward_flops(self, out, x):   return out.size

``forward`` and ``backward`` receive ``xp``, the array namespace of the device the op runs on
(``numpy`` for "cpu", ``mlx.core`` for "gpu"), and plain backend arrays, never Tensors.  The
op checks its inputs at the top of ``forward`` (before any work) and keeps whatever backward
needs on ``self``.  ``backward(g)`` returns one gradient per input (None where there is none).

:func:`apply` is the single path every op call takes: promote arguments to tensors, choose the
device, run ``forward``, wrap the result and -- only when a gradient or a FLOPs count is wanted
-- record ``_op``/``_prev`` on it.
"""

from __future__ import annotations

import copy
import itertools
from typing import Any, ClassVar

import numpy as np

from lucid.autograd.mode import MODE
from lucid.backends import BACKENDS, fallback
from lucid.shapes import fmt
from lucid.tensor import _PY_SCALARS, Tensor
from lucid.types import Float32, Float64, to_numeric_type

REGISTRY: dict[str, type[Op]] = {}


class Op:
    """Base class of every operation.  Subclasses set ``name`` to register themselves."""

    # ``seq`` (when the op ran: the backward walk visits ops latest first), ``versions`` (input
    # versions at forward; None once the graph is released), ``flops`` and ``flops_bwd``
    # (recorded under count_flops) are the engine's; everything an op saves for its backward
    # goes in ``__dict__`` and is dropped by ``release``.
    __slots__ = ("__dict__", "seq", "versions", "flops", "flops_bwd")

    name: ClassVar[str] = ""
    differentiable: ClassVar[bool] = True
    #: gradients may come back at the broadcast shape and are summed down to the input's shape
    broadcasts: ClassVar[bool] = False
    #: backward reads the inputs' values (so in-place changes to them are an error)
    saves_inputs: ClassVar[bool] = True
    #: backward reads the output's value
    saves_output: ClassVar[bool] = False
    #: record ``self.needs`` (which inputs require grad) so backward can skip dead work
    wants_needs: ClassVar[bool] = False
    #: before backward, the engine sets ``self.final`` (True when the graph is released right
    #: after it) so backward can free a large saved buffer as soon as it has used it
    wants_final: ClassVar[bool] = False
    final: bool = False
    #: the "gpu" backend lacks this op: run it with NumPy and move the result (warns once)
    fallback: ClassVar[bool] = False
    #: on "gpu", give results the dtype NumPy would (MLX promotes integers differently)
    numpy_dtypes: ClassVar[bool] = True

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("name")
        if name:
            if name in REGISTRY:
                raise RuntimeError(f"op name {name!r} registered twice")
            REGISTRY[name] = cls

    def forward(self, xp: Any, *xs: Any) -> Any:
        raise NotImplementedError

    def backward(self, xp: Any, g: Any) -> tuple[Any, ...]:
        raise NotImplementedError(f"{self.name}: no backward rule")

    def forward_flops(self, out: Any, *xs: Any) -> int:
        """FLOPs of the forward pass (MACs for matmul/conv; elements for elementwise ops)."""
        raise NotImplementedError(f"{self.name}: no FLOPs rule")

    def backward_flops(self, out: Any, *xs: Any) -> int:
        """FLOPs of this op's backward rule, counted the same way."""
        raise NotImplementedError(f"{self.name}: no backward FLOPs rule")

    def release(self) -> None:
        """Drop what was saved for backward; a second backward then raises."""
        self.__dict__.clear()
        self.versions = None

    def error(self, message: str, kind: type[Exception] = ValueError) -> Exception:
        """An exception whose message starts with this op's name."""
        return kind(f"{self.name}: {message}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


# Python scalars take the dtype of the tensor they meet (NumPy 2's "weak scalar" rule):
# float32 tensor + 2.5 stays float32, int32 tensor + 2.5 becomes float64.
_WEAK_DTYPE: dict[tuple[Any, type], Any] = {}


def _weak_dtype(like: Any, value: Any) -> Any:
    key = (like, type(value))
    dtype = _WEAK_DTYPE.get(key)
    if dtype is None:
        np_like = like if isinstance(like, np.dtype) else to_numeric_type(like).cpu
        dtype = _WEAK_DTYPE[key] = np.result_type(np_like, value)
    return dtype


def _promote(op: Op, args: tuple[Any, ...]) -> tuple[Tensor, ...]:
    """Turn scalars, lists and arrays among ``args`` into free tensors.

    A Python scalar is made directly on the device of the first tensor argument, with the
    dtype the weak-scalar rule gives; lists and arrays become free "cpu" tensors, which the
    device resolution then moves to the op's device.
    """
    ref = next((a for a in args if isinstance(a, Tensor)), None)
    out = []
    for a in args:
        if isinstance(a, Tensor):
            out.append(a)
        elif isinstance(a, _PY_SCALARS) and ref is not None:
            value = np.asarray(a, dtype=_weak_dtype(ref.data.dtype, a))
            t = Tensor._wrap(BACKENDS[ref.device].asarray(value), ref.device)
            t._free = True
            out.append(t)
        elif (ref is not None and ref.device != "cpu"
              and isinstance(a, BACKENDS[ref.device].array_type)):
            # a raw MLX array meeting a gpu tensor (``w -= lr * w.grad``): wrap it as is, not
            # through NumPy and back (which copies twice and forces MLX to evaluate mid-step)
            t = Tensor._wrap(a, ref.device)
            t._free = True
            out.append(t)
        else:
            try:
                t = Tensor(a)
            except TypeError as exc:
                raise op.error(
                    f"cannot use an argument of type {type(a).__name__} as a tensor "
                    "(expected a Tensor, a number, a list or a NumPy array)",
                    TypeError,
                ) from exc
            t._free = True
            out.append(t)
    return tuple(out)


def _resolve_device(op: Op, args: tuple[Tensor, ...]) -> tuple[str, tuple[Tensor, ...]]:
    """Pick the op's device; free tensors follow it, fixed ones on another device are an error."""
    fixed = {a.device for a in args if not a._free}
    if len(fixed) > 1:
        listed = ", ".join(f"{fmt(a.shape)} on {a.device!r}" for a in args)
        raise RuntimeError(
            f"{op.name}: inputs are on different devices ({listed}). Move them to one device "
            "first, e.g. x.to('gpu') or x.to('cpu')."
        )
    if fixed:
        device = fixed.pop()
    else:
        device = "gpu" if any(a.device == "gpu" for a in args) else "cpu"
    return device, tuple(a if a.device == device else a.to(device) for a in args)


def apply(op: Op, *args: Any) -> Tensor:
    """Run ``op`` on ``args`` and return the result Tensor, recording the graph if needed.

    This is the hot path of the whole engine (every ``a + b`` goes through it), so it is
    written plainly: one pass over the inputs, no closures, nothing recorded unless wanted.
    """
    for a in args:
        if not isinstance(a, Tensor):
            args = _promote(op, args)
            break
    first = args[0]
    device = first.device
    requires = False
    free = True
    logical = None
    for a in args:
        if a.device != device:
            device, args = _resolve_device(op, args)
            first = args[0]
        if a.requires_grad:
            requires = True
        if not a._free:
            free = False
        if a._dtype is not None:
            logical = a._dtype
    backend = BACKENDS[device]
    n = len(args)
    if op.fallback and device != "cpu":
        data = fallback.forward(op, backend, [a.data for a in args])
    elif n == 1:
        data = op.forward(backend.xp, first.data)
    elif n == 2:
        data = op.forward(backend.xp, first.data, args[1].data)
    else:
        data = op.forward(backend.xp, *[a.data for a in args])

    if device != "cpu" and op.numpy_dtypes:
        for a in args:
            if a.data.dtype not in backend.float_dtypes:  # ints/bools: MLX and NumPy differ
                data, logical = _numpy_result_dtype(op, args, data, logical)
                break

    out = _new(Tensor)
    out.data = data
    out.grad = None
    out.keep_grad = False
    out.device = device
    out._version = 0
    out._hooks = None
    out._g = None
    out._free = free
    out._dtype = None if logical is None else _logical_result(logical, data)
    mode = MODE
    requires = requires and mode.grad and op.differentiable
    out.requires_grad = requires
    if requires or mode.flops:
        out._prev = args
        out._op = op
        op.seq = next(_SEQ)
        if not op.saves_inputs:
            op.versions = ()
        elif n == 1:
            op.versions = (first._version,)
        else:
            op.versions = tuple([a._version for a in args])
        if op.wants_needs:
            op.needs = tuple([a.requires_grad for a in args])
        if mode.flops:  # rules return Python ints (the op table checks it)
            if n == 1:
                xs = (first.data,)
            elif n == 2:
                xs = (first.data, args[1].data)
            else:
                xs = [a.data for a in args]
            op.flops = op.forward_flops(data, *xs)
            op.flops_bwd = op.backward_flops(data, *xs) if requires else 0
            if mode.tape is not None:
                mode.tape.append(out)
    else:
        out._prev = ()
        out._op = None
    return out


_new = object.__new__
_SEQ = itertools.count()  # numbers recorded ops in the order they ran

# (op class, input dtypes) -> the dtype NumPy gives, learnt once by running the op with NumPy.
_NUMPY_DTYPE: dict[tuple, Any] = {}


def _numpy_result_dtype(op: Op, args: tuple[Tensor, ...], data: Any, logical: Any) -> tuple:
    """Make a "gpu" result carry the dtype the "cpu" device gives for the same inputs.

    MLX and NumPy agree on floats but not on integers: ``exp`` of int64 is float32 in MLX and
    float64 in NumPy, an int32 ``sum`` stays int32 in MLX and becomes int64 in NumPy.  The
    logical dtype must not depend on the device, so the first time an op meets a combination
    of non-float input dtypes it runs once with NumPy to learn the answer, and gpu results are
    cast to it (Float64 then follows the gpu storage policy).
    """
    key = (type(op), tuple(str(a.data.dtype) for a in args))
    want = _NUMPY_DTYPE.get(key)
    if want is None:
        probe = copy.copy(op)
        probe.__dict__ = dict(op.__dict__)
        with np.errstate(all="ignore"):
            ref = probe.forward(np, *[a.numpy() for a in args])
        want = _NUMPY_DTYPE[key] = to_numeric_type(ref.dtype)
    if to_numeric_type(data.dtype) != want:
        data = data.astype(want.parse(args[0].device))
        logical = want if to_numeric_type(data.dtype) != want else None
    return data, logical


def _logical_result(logical: Any, data: Any) -> Any:
    """The logical dtype of a result whose inputs were stored narrower than they report.

    On an MLX GPU a Float64 tensor is stored as float32; float32 results computed from it
    still report Float64 (anything else -- bools, indices -- reports what it holds).
    """
    if logical == Float64 and to_numeric_type(data.dtype) == Float32:
        return Float64
    return None  # the result holds what it reports


def numel(shape: tuple[int, ...]) -> int:
    n = 1
    for s in shape:
        n *= s
    return n

"""The Tensor: an array, the graph node that made it, and its gradient.

A Tensor is three things at once:

* **data** -- the values, a backend array (``np.ndarray`` on "cpu", ``mx.array`` on "gpu"),
  kept in the slot ``_data`` that the engine reads; ``x.data`` hands it out with PyTorch's
  tensor methods added (:class:`TensorIdioms`: ``p.data.add_(g, alpha=-lr)``, ``y.data.norm()``);
* **graph metadata** -- ``_op`` (the operation object that produced it; its class name is the
  op's display name) and ``_prev`` (the input tensors of that op).  Leaves have neither;
* **gradient state** -- ``requires_grad``, ``keep_grad`` and ``grad`` (a backend array of the
  tensor's shape with the same methods -- ``p.grad.zero_()`` -- or None);
* **device** -- a :class:`lucid.device`, which is also the string "cpu" or "gpu".

Arithmetic, comparison and indexing methods are attached by :mod:`lucid.ops` (the op layer sits
above this module; imports flow one way).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from lucid import types
from lucid.backends import TENSOR_DEVICES, check_device, get_backend
from lucid.cost import Cost, total_cost
from lucid.engine.walk import nodes_below
from lucid.shapes import fmt

_PY_SCALARS = (bool, int, float, complex)

# object.__new__ read once: Tensor._wrap, which makes every op's result, calls it
_new_object = object.__new__


class RemovableHandle:
    """Returned by :meth:`Tensor.register_hook`; call it (or ``.remove()``) to remove the hook."""

    __slots__ = ("_hooks", "_key")

    def __init__(self, hooks: dict, key: int) -> None:
        self._hooks = hooks
        self._key = key

    def remove(self) -> None:
        self._hooks.pop(self._key, None)

    __call__ = remove


class Size(tuple):
    """A shape, PyTorch's ``torch.Size``: a tuple of axis lengths (``x.size()``), with
    ``numel()``, the product.  ``x.shape`` is the plain tuple."""

    def numel(self) -> int:
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self) -> str:
        return f"lucid.Size({list(self)})"


class Numel(int):
    """``x.size``: the element count that is also PyTorch's ``size`` method: ``int(x.size)``
    is the number of elements (Lucid, NumPy), ``x.size()`` the shape (a :class:`Size`) and
    ``x.size(d)`` the length of axis ``d`` (PyTorch).  Arithmetic and comparisons treat it as
    the plain int it is."""

    def __new__(cls, n: int, shape: tuple[int, ...] = ()) -> Numel:
        self = super().__new__(cls, n)
        self.shape = tuple(shape)
        return self

    def __reduce__(self) -> tuple:
        return (Numel, (int(self), self.shape))  # a copy keeps the shape

    def __call__(self, dim: int | None = None) -> Size | int:
        if dim is None:
            return Size(self.shape)
        if isinstance(dim, bool) or not isinstance(dim, (int, np.integer)):
            raise TypeError(f"size(dim): dim must be an int, got {dim!r}")
        nd = len(self.shape)
        if not -nd <= dim < nd:
            raise IndexError(f"size({dim}): the tensor of shape {fmt(self.shape)} has {nd} "
                             f"dimension(s), so dim must lie in [{-nd}, {nd - 1}]")
        return self.shape[dim]


class TensorIdioms:
    """PyTorch's Tensor methods on ``x.data`` and ``x.grad``, which in Lucid are backend arrays.

    PyTorch code treats ``p.data`` and ``p.grad`` as tensors: ``p.grad.zero_()``,
    ``p.data.add_(p.grad, alpha=-lr)``, ``m.weight.data.normal_(0.0, 0.02)``,
    ``p.data.clamp_(-c, c)``, ``y.data.norm()``, ``p.grad.data``, ``p.data.size()``.  Lucid
    keeps them the arrays they are (NumPy on "cpu", MLX on "gpu": every NumPy / MLX function
    takes them, and arithmetic on them gives plain arrays) and adds these methods.  The
    in-place ones write into the tensor's own storage and return it, as through PyTorch's
    ``.data``: no version is bumped and no graph records them (do them between training
    steps, as PyTorch programs do).

    NumPy's own methods keep NumPy's meaning, except where one call means two things:

    * ``max(1)`` / ``min(1)``: PyTorch's ``(values, indices)``, as a Tensor's
      (``max(axis=1)`` is NumPy's values);
    * ``std()`` / ``var()`` (divide by n, or n - 1), ``repeat(2)`` (each element, or the
      whole) and ``sort()`` (in place, or a new ``(values, indices)``) raise and name both
      spellings, unless NumPy's keywords (``axis=``, ``ddof=``, ``kind=``) or PyTorch's
      (``dim=``, ``descending=``) say which is meant;
    * ``transpose(0, 1)`` swaps the two axes, and ``view(2, -1)`` / ``flatten(1)`` reshape,
      as PyTorch's do.

    A Tensor method NumPy lacks (``x.data.cpu()``, ``.float()``, ``.clamp(0, 1)``,
    ``.unsqueeze(0)``) runs on a Tensor holding the array and gives a Tensor, as PyTorch's.
    """

    __slots__ = ()

    @property
    def data(self) -> TensorIdioms:
        """The array itself (PyTorch's ``p.grad.data``)."""
        return self

    @property
    def size(self) -> Numel:
        return Numel(int(np.prod(self.shape, dtype=np.int64)), tuple(self.shape))

    def numel(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def dim(self) -> int:
        return len(self.shape)

    def _put(self, values: Any) -> TensorIdioms:
        """Write ``values`` (broadcast, cast to this dtype) into this array's storage."""
        raise NotImplementedError

    def zero_(self) -> TensorIdioms:
        return self._put(0)

    def fill_(self, value: Any) -> TensorIdioms:
        return self._put(_host(value))

    def copy_(self, src: Any) -> TensorIdioms:
        return self._put(_host(src))

    def add_(self, other: Any, alpha: Any = 1) -> TensorIdioms:
        return self._put(self._np() + alpha * _host(other))

    def sub_(self, other: Any, alpha: Any = 1) -> TensorIdioms:
        return self._put(self._np() - alpha * _host(other))

    def mul_(self, other: Any) -> TensorIdioms:
        return self._put(self._np() * _host(other))

    def div_(self, other: Any) -> TensorIdioms:
        return self._put(self._np() / _host(other))

    def clamp_(self, min: Any = None, max: Any = None) -> TensorIdioms:  # noqa: A002
        return self._put(np.clip(self._np(), _host(min), _host(max)))

    def uniform_(self, a: float = 0.0, b: float = 1.0) -> TensorIdioms:
        """Fill with samples of U[a, b) from Lucid's random stream (``lucid.manual_seed``)."""
        return self._put(RANDOM_STREAM.uniform(a, b, tuple(self.shape)))

    def normal_(self, mean: float = 0.0, std: float = 1.0) -> TensorIdioms:
        """Fill with samples of N(mean, std^2) from Lucid's random stream."""
        return self._put(mean + std * RANDOM_STREAM.standard_normal(tuple(self.shape)))

    def norm(self, p: Any = 2) -> Tensor:
        """The vector p-norm of all elements, a 0-d Tensor (PyTorch's ``p.grad.norm()``)."""
        return Tensor(np.linalg.norm(self._np().ravel(), ord=p), device=self._device)

    def numpy(self) -> np.ndarray:
        return self._np()

    def clone(self) -> Tensor:
        """A Tensor holding a copy of the values (cut from any graph)."""
        return Tensor(self._np(), device=self._device)

    detach = clone

    # -- NumPy methods whose PyTorch call means something else ----------------------------
    def max(self, *args: Any, **kwargs: Any) -> Any:
        """``max(1)`` / ``max(dim=1)``: PyTorch's ``(values, indices)`` (the classic
        ``output.data.max(1)[1]``), as ``x.max(1)`` of a Tensor; ``max()`` and NumPy's
        ``max(axis=1)``: NumPy's values."""
        if _pytorch_extremum_call(args, kwargs):
            return self._as_tensor().max(*args, **kwargs)
        return self._np_method("max", *args, **kwargs)

    def min(self, *args: Any, **kwargs: Any) -> Any:
        """As :meth:`max`."""
        if _pytorch_extremum_call(args, kwargs):
            return self._as_tensor().min(*args, **kwargs)
        return self._np_method("min", *args, **kwargs)

    def std(self, *args: Any, **kwargs: Any) -> Any:
        _refuse_spread(self, "std", args, kwargs)
        return self._np_method("std", *args, **kwargs)

    def var(self, *args: Any, **kwargs: Any) -> Any:
        _refuse_spread(self, "var", args, kwargs)
        return self._np_method("var", *args, **kwargs)

    def sort(self, *args: Any, **kwargs: Any) -> Any:
        """NumPy's keywords (``axis=``, ``kind=``, as ``np.sort`` calls it): NumPy's in-place
        sort; PyTorch's (``dim=``, ``descending=``): PyTorch's ``(values, indices)``."""
        if kwargs and not args and set(kwargs) & {"axis", "kind", "order"}:
            return self._np_method("sort", **kwargs)
        if kwargs and not args and set(kwargs) <= {"dim", "descending", "stable"}:
            return self._as_tensor().sort(**kwargs)
        _refuse(self, f"sort{args}", "NumPy sorts the array in place and returns None, "
                "PyTorch returns (values, indices) and leaves it as it was: write "
                "lucid.sort(x) (or x.sort()) for PyTorch's, np.sort(x.data) for a sorted copy")

    def repeat(self, *args: Any, **kwargs: Any) -> Any:
        if "axis" not in kwargs:  # NumPy: each element repeated; PyTorch: the whole tiled
            _refuse(self, f"repeat{args}", "NumPy repeats each element, PyTorch tiles the "
                    "whole array: write lucid.tile(x, reps) for PyTorch's, or NumPy's keyword "
                    ".repeat(n, axis=0)")
        return self._np_method("repeat", *args, **kwargs)

    def view(self, *args: Any) -> Any:
        """``view(2, -1)`` (ints): PyTorch's reshape, as a Tensor; ``view(dtype)``: NumPy's."""
        shape = args[0] if len(args) == 1 and isinstance(args[0], (tuple, list)) else args
        if shape and all(isinstance(n, (int, np.integer)) and not isinstance(n, bool)
                         for n in shape):
            return self._as_tensor().reshape(tuple(shape))
        return self._np_method("view", *args)

    def flatten(self, *args: Any, **kwargs: Any) -> Any:
        """``flatten(1)`` (PyTorch's start_dim), as a Tensor; ``flatten()`` / ``flatten("F")``
        are NumPy's."""
        if args and isinstance(args[0], (int, np.integer)) or "start_dim" in kwargs:
            return self._as_tensor().flatten(*args, **kwargs)
        return self._np_method("flatten", *args, **kwargs)

    def _as_tensor(self) -> Tensor:
        """A Tensor holding this array itself (no copy; not in any graph)."""
        return Tensor._wrap(self._plain(), self._device)

    def __getattr__(self, name: str) -> Any:
        # A Tensor method NumPy (or MLX) lacks -- x.data.cpu(), .float(), .clamp(0, 1),
        # .unsqueeze(0), .eq(y) -- is the Tensor's, run on a Tensor holding this array.
        if name.startswith("_") or not hasattr(Tensor, name):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")
        return getattr(self._as_tensor(), name)

    def transpose(self, *axes: Any) -> Any:
        """Two ints swap those two axes (PyTorch's ``x.transpose(0, 1)``).  NumPy would read
        them as a permutation, which agrees on ``(1, 0)`` of a matrix, means nothing on
        ``(0, 1)`` and fails on any other number of axes; other calls are NumPy's."""
        if len(axes) == 2 and all(isinstance(a, (int, np.integer)) for a in axes):
            return self._np_method("swapaxes", *axes)
        return self._np_method("transpose", *axes)


def _refuse(arr: Any, call: str, why: str) -> None:
    raise TypeError(
        f"{call} on x.data or x.grad, which in Lucid is a backend array ({type(arr).__name__} "
        f"of shape {fmt(tuple(arr.shape))}) with PyTorch's tensor methods added: {why}"
    )


def _pytorch_extremum_call(args: tuple, kwargs: dict) -> bool:
    """``max(1)``, ``max(1, keepdim=True)``, ``max(dim=1)``: the call as PyTorch spells it
    (NumPy's own calls name ``axis=``, as ``np.max(a, 1)`` does when it calls the method)."""
    return bool(args and isinstance(args[0], (int, np.integer)) or "dim" in kwargs
                or "keepdim" in kwargs)


def _refuse_spread(arr: Any, name: str, args: tuple, kwargs: dict) -> None:
    # NumPy divides by n, PyTorch by n - 1 (Bessel); NumPy's keywords say which is meant
    if "ddof" not in kwargs and "axis" not in kwargs:
        _refuse(arr, f"{name}{args}",
                f"NumPy divides by n, PyTorch by n - 1. Say which: .{name}(ddof=0) (NumPy's) "
                f"or .{name}(ddof=1) (PyTorch's)")


class InPlaceArray(TensorIdioms, np.ndarray):
    """``x.data`` and ``x.grad`` on "cpu": a NumPy array (a view: the tensor's own memory)
    with PyTorch's tensor methods (:class:`TensorIdioms`).  NumPy takes it anywhere, and its
    arithmetic gives plain arrays; ``repr`` shows it as the NumPy array it is."""

    # With a plain array among the inputs NumPy wraps the result as that one (in C: no call
    # here); with these alone, __array_wrap__ below makes it plain too.
    __array_priority__ = -1.0
    _device = "cpu"

    def __array_wrap__(self, array: Any, context: Any = None, return_scalar: bool = False):
        # results of NumPy's functions are plain arrays: only .grad / .data carry the methods
        if return_scalar:
            return array[()]
        return np.ndarray.view(array, np.ndarray) if isinstance(array, InPlaceArray) else array

    def __repr__(self) -> str:
        return repr(self._np())

    def _np(self) -> np.ndarray:
        return np.ndarray.view(self, np.ndarray)  # (not self.view: ours reshapes)

    _plain = _np

    def _np_method(self, name: str, *args: Any, **kwargs: Any) -> Any:
        return getattr(np.ndarray, name)(self._np(), *args, **kwargs)

    def _put(self, values: Any) -> InPlaceArray:
        self._np()[...] = values  # the tensor's memory (this is a view of it)
        return self


_MLX_CLASS: list[type] = []


def mlx_in_place(array: Any) -> Any:
    """``array`` (the ``mx.array`` a tensor holds) as ``x.data`` / ``x.grad`` on "gpu": an
    ``mx.array`` of the same values with PyTorch's tensor methods.  MLX arrays are values, not
    memory; what MLX does have is item assignment (``a[...] = v``), which gives the Python
    object ``a`` a new value, seen by everything that holds that object.  So the in-place
    methods assign into the tensor's own array object as well as into this one.  The class is
    made on first use: MLX is optional."""
    if not _MLX_CLASS:
        _MLX_CLASS.append(_make_mlx_class())
    out = _MLX_CLASS[0](array)
    out._raw = array  # the tensor's own array object
    return out


def _make_mlx_class() -> type:
    import mlx.core as mx  # only reached with a gpu array in hand

    class MLXInPlaceArray(TensorIdioms, mx.array):
        """``x.data`` / ``x.grad`` on "gpu" (see :func:`mlx_in_place`)."""

        _device = "gpu"

        def _plain(self) -> Any:
            return self._raw

        def _np(self) -> np.ndarray:
            return np.array(self._raw)

        def _np_method(self, name: str, *args: Any, **kwargs: Any) -> Any:
            method = getattr(mx.array, name, None)  # MLX has some as functions only
            if method is None:
                return getattr(mx, name)(self._raw, *args, **kwargs)
            return method(self._raw, *args, **kwargs)

        def _put(self, values: Any) -> Any:
            if not isinstance(values, mx.array):
                values = mx.array(np.ascontiguousarray(values))
            self[...] = mx.broadcast_to(values.astype(self.dtype), self.shape)
            return self

        def __setitem__(self, index: Any, value: Any) -> None:  # x.data[i] = v
            mx.array.__setitem__(self._raw, index, value)  # the tensor's array object
            mx.array.__setitem__(self, index, value)

    def in_place(op: str) -> Any:
        def update(self: Any, other: Any) -> Any:  # x.data -= v: into the tensor's array too
            self[...] = getattr(mx.array, op)(self._raw, other).astype(self.dtype)
            return self

        return update

    for name in ("add", "sub", "mul", "truediv", "floordiv", "pow"):
        setattr(MLXInPlaceArray, f"__i{name}__", in_place(f"__{name}__"))
    return MLXInPlaceArray


def _host(x: Any) -> Any:
    """A value for :class:`TensorIdioms` arithmetic: NumPy (from a Tensor, an MLX array) or a
    Python number as it is."""
    if isinstance(x, Tensor):
        return x.numpy()
    if x is None or isinstance(x, (*_PY_SCALARS, np.ndarray, np.generic)):
        return x
    return np.asarray(x)


#: Lucid's one random stream: ``uniform_`` / ``normal_`` draw from it, and so does every
#: function of ``lucid.random``, whose ``seed`` rewinds it in place (the object never changes)
RANDOM_STREAM: np.random.Generator = np.random.default_rng()


def _is_size(value: Any) -> bool:
    """An int that is not a bool: a size in PyTorch's legacy ``torch.Tensor(2, 3)``."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


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
        "_data",
        "_grad",
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
        if _is_size(requires_grad):  # PyTorch's legacy torch.Tensor(2, 3): a shape
            if not _is_size(data):
                raise TypeError(
                    f"Tensor({data!r}, {requires_grad!r}, ...): the second argument is "
                    "requires_grad (True/False), not a size; for values write "
                    "lucid.tensor(data)")
            sizes = [data, requires_grad]
            for extra in (keep_grad, dtype, device):
                if not _is_size(extra):
                    break
                sizes.append(extra)
            # an uninitialised float32 tensor in PyTorch (the old way to make a parameter
            # before an nn.init call); zeros here
            data = np.zeros([int(n) for n in sizes], dtype=np.float32)
            requires_grad, keep_grad = False, False
            dtype = None if _is_size(dtype) else dtype
            device = "cpu" if _is_size(device) else device
        device = check_device(device)
        if name is not None and not isinstance(name, str):
            raise TypeError(f"Tensor: name must be a string or None, got {type(name).__name__}")
        backend = get_backend(device)
        free = isinstance(data, (*_PY_SCALARS, list, tuple))
        if isinstance(data, Tensor):
            data = data.numpy() if data.device != "cpu" else data._data
        elif not isinstance(data, (np.ndarray, *_PY_SCALARS, list, tuple, np.generic)):
            data = _foreign_to_numpy(data)
        arr = np.array(data)  # a copy: later changes to the caller's array do not leak in
        logical = None
        if dtype is not None:
            numeric = types.as_numeric(dtype).resolve_bits(arr.dtype)
            arr = arr.astype(numeric.cpu, copy=False)
        else:
            numeric = types.to_numeric_type(arr.dtype)  # rejects strings, objects, ...
            if free and numeric == types.Float64 and numeric != types.get_default_dtype():
                numeric = types.get_default_dtype()  # set_default_dtype(lucid.float32)
                arr = arr.astype(numeric.cpu)
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
        self._data = arr
        self._grad = None
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
        t = _new_object(cls)
        t._data = data
        t._grad = None
        t.requires_grad = requires_grad
        t.keep_grad = False
        t.device = TENSOR_DEVICES[device]  # the device object (x.device.type), from a name
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
        return tuple(self._data.shape)

    @property
    def ndim(self) -> int:
        return self._data.ndim

    @property
    def size(self) -> Numel:
        """Number of elements, an int (Lucid's and NumPy's property) that can also be called as
        PyTorch's method: ``x.size`` is 6 for a (2, 3) tensor, ``x.size()`` is ``(2, 3)`` and
        ``x.size(1)`` is 3.  Both spellings are common in the code students bring, so the
        value is an int that answers a call (see :class:`Numel`) rather than either one alone.
        """
        return Numel(self._data.size, tuple(self._data.shape))

    @property
    def dtype(self) -> types.Numeric:
        """The logical dtype (a :class:`lucid.types.Numeric`)."""
        if self._dtype is not None:
            return self._dtype
        return types.to_numeric_type(self._data.dtype)

    def _set_grad(self, value: Any) -> None:
        if type(value) is np.ndarray:  # a view, no copy: the same memory, PyTorch's methods
            value = value.view(InPlaceArray)
        elif self.device != "cpu" and value is not None \
                and not isinstance(value, (Tensor, TensorIdioms)):
            value = mlx_in_place(value)  # stored as is: its in-place methods change it here
        self._grad = value

    def _get_data(self) -> Any:
        data = self._data
        if type(data) is np.ndarray:  # a view, no copy: the tensor's memory, PyTorch's methods
            return data.view(InPlaceArray)
        if self.device == "cpu":
            return data
        return mlx_in_place(data)

    def _set_data(self, value: Any) -> None:
        if isinstance(value, Tensor):  # PyTorch's x.data = y: x now holds y's values
            if value.device != self.device:
                raise RuntimeError(
                    f"x.data = y: x is on {self.device!r} and y on {value.device!r}; move y "
                    f"first: x.data = y.to({self.device!r})"
                )
            self._dtype = value._dtype
            value = value._data
        elif isinstance(value, TensorIdioms):
            value = value._plain()
        self._data = value

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
        arr = get_backend(self.device).to_numpy(self._data)
        if type(arr) is InPlaceArray:  # a parameter's data: hand out the plain array
            arr = np.ndarray.view(arr, np.ndarray)
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
        t = Tensor._wrap(self._data, self.device)
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
            self._data = backend.stop_gradient(self._data)
            backend.evaluate(self._data, self.grad)
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
        return self._data.shape[0]

    def __iter__(self) -> Iterator[Tensor]:
        for i in range(len(self)):
            yield self[i]

    def __bool__(self) -> bool:
        if self.size != 1:
            raise ValueError(
                f"The truth value of a tensor with {self.size} elements is ambiguous; use "
                "lucid.any(...) / lucid.all(...) or compare one element; lucid.equal(a, b) "
                "is one bool (same shape, all elements equal), as PyTorch's torch.equal."
            )
        return bool(self.item())

    def __format__(self, spec: str) -> str:
        """``f"{loss:.4f}"``: with a format spec, a 0-d tensor formats as its number (as in
        PyTorch); without one (``f"{loss}"``) it shows as ``str`` does."""
        if self.ndim == 0 and spec:
            return format(self.item(), spec)
        return format(str(self), spec)

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


#: ``x.grad``: dL/d(this tensor) after ``backward()``, a backend array of the tensor's shape (or
#: None; a Tensor after ``backward(create_graph=True)``) with PyTorch's tensor methods
#: (:class:`TensorIdioms`: ``p.grad.zero_()``, ``p.grad.data``, ``p.grad.norm()``): on "cpu" an
#: :class:`InPlaceArray`, on "gpu" an ``mx.array``.  Every NumPy / MLX function takes it and
#: gives plain arrays back.  (Reads go straight to the slot: optimizers read it every step.)
Tensor.grad = property(Tensor._grad.__get__, Tensor._set_grad, doc="dL/d(this tensor), see "
                       "lucid/tensor.py: a backend array with PyTorch's in-place methods, or "
                       "None")

#: ``x.data``: the tensor's values, as in Lucid 2.x a backend array (``np.ndarray`` on "cpu",
#: ``mx.array`` on "gpu"), seen with PyTorch's tensor methods (:class:`TensorIdioms`).  This is
#: PyTorch's ``.data`` as far as its idioms go: the same storage, cut from the graph, and
#: in-place changes through it are not recorded (``p.data.add_(g, alpha=-lr)``,
#: ``w.data.normal_(0, 0.02)``, ``y.data.norm()``); ``x.data = y`` gives x the values of the
#: tensor (or array) y.  It stays an array, not a Tensor, so NumPy code and Lucid 2.x programs
#: that read ``x.data`` keep working.  The engine itself reads the raw slot ``x._data``.
Tensor.data = property(Tensor._get_data, Tensor._set_data, doc="the values: a backend array "
                       "with PyTorch's in-place methods (see lucid/tensor.py)")


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
            data = out._data
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


__all__ = ["Tensor", "tensor", "RemovableHandle", "Size", "Numel", "TensorIdioms", "InPlaceArray"]

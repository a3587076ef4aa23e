"""PyTorch's spellings beside Lucid's: a program written for PyTorch runs with ``torch``
renamed ``lucid`` and gives PyTorch's results, and Lucid's own (NumPy-style) calls keep working.

What lives here is only *spelling*: every function below calls an op of the catalogue, so
gradients, FLOPs and drawings are the ops' own.  Three kinds of thing:

* **keywords** -- ``dim=`` / ``keepdim=`` (and ``start_dim``, ``dim0`` ...) are accepted
  wherever ``axis=`` / ``keepdims=`` are (:func:`_accept_pytorch_keywords`);
* **methods and functions PyTorch has under another name** -- ``x.view``, ``x.float()``,
  ``x.numel()``, ``lucid.cat``, ``x.new_zeros`` ...;
* **calls whose meaning differs** -- decided once each, in the docstring of the function
  that decides and in README's "Coming from PyTorch": ``max``/``min`` with a dim give
  ``(values, indices)``; ``transpose(d0, d1)`` swaps two axes (lucid/ops/shape.py);
  ``std``/``var`` apply Bessel's correction (lucid/ops/reduction.py); ``x.size`` is an int
  that can be called (lucid/tensor.py).
"""

from __future__ import annotations

import functools
import inspect
from collections import namedtuple
from typing import Any

import numpy as np

from lucid.ops import inplace
from lucid.ops.base import FUNCTIONS, METHODS, public
from lucid.tensor import RANDOM_STREAM, Tensor
from lucid.types import PYTORCH_NAMES, Numeric, as_numeric

# --------------------------------------------------------------------------------------------
# dim= / keepdim=: PyTorch's keyword names for NumPy's axis= / keepdims=

#: PyTorch keyword -> Lucid's (NumPy's) keyword
PYTORCH_KEYWORDS = {"dim": "axis", "keepdim": "keepdims", "start_dim": "start_axis",
                    "end_dim": "end_axis", "dim0": "axis1", "dim1": "axis2", "dims": "axes"}


#: functions whose ``dtype=`` casts the input first, as in PyTorch (``x.sum(dtype=lucid.int64)``,
#: ``x.mean(dtype=lucid.float64)``, ``softmax(x, 1, dtype=...)``)
CASTS_INPUT = ("sum", "mean", "prod", "cumsum", "cumprod", "softmax", "log_softmax", "norm",
               "nansum", "nanmean", "logsumexp")


def _accept_pytorch_keywords(name: str, fn: Any) -> Any:
    """``fn`` accepting PyTorch's keyword names too (``dim=1`` means ``axis=1``, and
    ``dtype=`` casts the input of a reduction first); ``fn`` itself when it takes none."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return fn
    renames = {t: n for t, n in PYTORCH_KEYWORDS.items() if n in params and t not in params}
    casts = name in CASTS_INPUT and "dtype" not in params
    if not renames and not casts:
        return fn

    @functools.wraps(fn)
    def accepting(*args: Any, **kwargs: Any) -> Any:
        if casts and "dtype" in kwargs:
            dtype = kwargs.pop("dtype")
            if dtype is not None and args:
                args = (FUNCTIONS["astype"](args[0], dtype), *args[1:])
        if kwargs:
            for torch_name, lucid_name in renames.items():
                if torch_name in kwargs:
                    if lucid_name in kwargs:
                        raise TypeError(f"{name}: got both {torch_name}= (PyTorch's name) and "
                                        f"{lucid_name}= (NumPy's); give one of them")
                    kwargs[lucid_name] = kwargs.pop(torch_name)
        return fn(*args, **kwargs)

    return accepting


def _translate_keywords() -> None:
    """Wrap every published function and method once (an alias stays the same object)."""
    done: dict[int, Any] = {}

    def wrapped(name: str, fn: Any) -> Any:
        if id(fn) not in done:
            done[id(fn)] = _accept_pytorch_keywords(name, fn)
        return done[id(fn)]

    for name, fn in list(FUNCTIONS.items()):
        FUNCTIONS[name] = wrapped(name, fn)
    for name, fn in list(METHODS.items()):
        if not isinstance(fn, property):
            METHODS[name] = wrapped(name, fn)
            setattr(Tensor, name, METHODS[name])


def _method(fn: Any = None, *, name: str | None = None) -> Any:
    """Attach ``fn`` as a Tensor method (after tensor_methods.py has attached the catalogue)."""

    def attach(f: Any) -> Any:
        key = name or f.__name__
        METHODS[key] = f
        setattr(Tensor, key, f)
        return f

    return attach if fn is None else attach(fn)


# --------------------------------------------------------------------------------------------
# max / min with a dim: (values, indices)

#: what ``x.max(dim)`` returns, as PyTorch's ``torch.return_types.max``: a named tuple
MaxMin = namedtuple("MaxMin", ["values", "indices"])


def _extremum(which: str) -> Any:
    reduce, arg, pairwise = FUNCTIONS[which], FUNCTIONS["arg" + which], FUNCTIONS[which + "imum"]

    def extremum(x: Any, dim: Any = None, keepdim: bool = False, *, axis: Any = None,
                 keepdims: bool | None = None) -> Any:
        keep = keepdim if keepdims is None else keepdims
        if isinstance(dim, Tensor):  # torch.max(a, b): the elementwise maximum
            return pairwise(x, dim)
        if dim is not None and axis is not None:
            raise TypeError(f"{which}: got both dim= and axis=; give one of them")
        if axis is not None or dim is None or isinstance(dim, (tuple, list)):
            return reduce(x, axis=dim if axis is None else axis, keepdims=keep)
        return MaxMin(reduce(x, axis=dim, keepdims=keep), arg(x, axis=dim, keepdims=keep))

    extremum.__name__ = extremum.__qualname__ = which
    extremum.__doc__ = f"""``{which}(x)``: the {which}imum of all elements.
    ``{which}(x, dim)`` / ``x.{which}(dim)`` / ``{which}(x, dim=d, keepdim=...)``: PyTorch's
    named tuple ``(values, indices)`` along ``dim`` (``_, predicted = out.{which}(1)``).
    ``{which}(x, axis=...)``: NumPy's and Lucid 2.x's meaning, the values alone (also for a
    tuple of axes).  ``{which}(a, b)`` with two tensors: the elementwise ``{which}imum``.

    Why: ``out.max(1)`` is PyTorch's accuracy idiom; giving values there would silently make
    ``predicted`` a value.  The keyword ``axis=`` is NumPy's, so it keeps NumPy's answer.
    Gradients flow through ``values`` (ties split evenly, see :class:`lucid.ops.reduction.Max`).
    """
    return extremum


def _publish_extrema() -> None:
    for which in ("max", "min"):
        fn = _extremum(which)
        FUNCTIONS[which] = fn
        METHODS[which] = fn
        setattr(Tensor, which, fn)


# --------------------------------------------------------------------------------------------
# std / var: Bessel's correction by default


#: ``axis=`` not given at all (``axis=None`` given is NumPy's spelling of "every axis")
_NO_AXIS = object()


def _spread(which: str) -> Any:
    reduce = FUNCTIONS[which]

    def spread(x: Any, dim: Any = None, unbiased: bool | None = None, keepdim: bool = False,
               *, correction: int | None = None, ddof: int | None = None,
               axis: Any = _NO_AXIS, keepdims: bool | None = None) -> Any:
        numpy_style = axis is not _NO_AXIS
        axis = None if axis is _NO_AXIS else axis
        if dim is not None and axis is not None:
            raise TypeError(f"{which}: got both dim= and axis=; give one of them")
        keep = keepdim if keepdims is None else keepdims
        if ddof is None and correction is None and unbiased is None:
            ddof = 0 if numpy_style else 1  # NumPy's keyword (even axis=None): NumPy's default
        return reduce(x, axis=dim if axis is None else axis, keepdims=keep,
                      ddof=0 if ddof is None else ddof, correction=correction,
                      unbiased=unbiased)

    spread.__name__ = spread.__qualname__ = which
    spread.__doc__ = f"""``{which}(x, dim=None, unbiased=None, keepdim=False, *,
    correction=None, ddof=None)``: the {'standard deviation' if which == 'std' else 'variance'}
    over ``dim`` (all elements by default), dividing by ``n - correction``.

    The default is PyTorch's: Bessel's correction, ``correction=1`` (the unbiased sample
    estimate), so ``x.{which}()``, ``x.{which}(0)`` and ``x.{which}(dim=0)`` give PyTorch's
    numbers.  ``correction=0``, ``unbiased=False`` or ``ddof=0`` give the population value,
    and so does NumPy's keyword ``axis=`` when no correction is named (``x.{which}(axis=0)``
    keeps NumPy's and Lucid 2.x's ``ddof=0``).  Why: a PyTorch program normalising with
    ``x.{which}()`` must not get a silently different number, while code written for NumPy
    (``axis=``) keeps its own.  See :class:`lucid.ops.reduction.Var` for the gradient.
    """
    return spread


def _publish_spreads() -> None:
    for which in ("std", "var"):
        fn = _spread(which)
        FUNCTIONS[which] = fn
        METHODS[which] = fn
        setattr(Tensor, which, fn)


# --------------------------------------------------------------------------------------------
# dtypes: x.float(), x.type(lucid.long), lucid.FloatTensor ...

#: PyTorch's legacy tensor-type names (``x.type('lucid.FloatTensor')``)
_TENSOR_TYPES = {"FloatTensor": "float32", "DoubleTensor": "float64", "HalfTensor": "float16",
                 "LongTensor": "int64", "IntTensor": "int32", "ShortTensor": "int16",
                 "CharTensor": "int8", "ByteTensor": "uint8", "BoolTensor": "bool"}


def _numeric(fn: str, dtype: Any) -> Numeric:
    if isinstance(dtype, str):
        stem = dtype.rsplit(".", 1)[-1]
        stem = _TENSOR_TYPES.get(stem, stem)
        if stem in PYTORCH_NAMES:
            return PYTORCH_NAMES[stem]
        raise TypeError(f"{fn}: unknown dtype name {dtype!r}; pass a dtype such as "
                        "lucid.float32 or lucid.long")
    return as_numeric(dtype)


def _caster(method: str, dtype: Numeric) -> Any:
    def cast(self: Tensor) -> Tensor:
        return self if self.dtype == dtype else FUNCTIONS["astype"](self, dtype)

    cast.__name__ = cast.__qualname__ = method
    cast.__doc__ = f"``x.{method}()``: ``x`` as {dtype.name} (PyTorch's spelling of " \
                   f"``x.astype(lucid.{dtype.name})``); ``x`` itself when it already is."
    return cast


for _method_name, _dtype_name in (("float", "float32"), ("double", "float64"),
                                  ("half", "float16"), ("long", "int64"), ("int", "int32"),
                                  ("short", "int16"), ("char", "int8"), ("byte", "uint8"),
                                  ("bool", "bool")):
    _method(_caster(_method_name, PYTORCH_NAMES[_dtype_name]))


@_method(name="type")
def type_(self: Tensor, dtype: Any = None) -> Any:
    """``x.type()``: the type's name (``'lucid.Float32'``); ``x.type(dtype)``: ``x`` cast to
    ``dtype`` (a dtype, or PyTorch's names: ``'lucid.FloatTensor'``)."""
    if dtype is None:
        return f"lucid.{self.dtype.name}"
    numeric = _numeric("type", dtype)
    return self if self.dtype == numeric else FUNCTIONS["astype"](self, numeric)


@_method
def type_as(self: Tensor, other: Tensor) -> Tensor:
    """``x`` cast to ``other``'s dtype."""
    return type_(self, other.dtype)


@_method
def is_floating_point(self: Tensor) -> bool:
    return self.dtype.is_floating_point


@_method
def is_complex(self: Tensor) -> bool:
    return self.dtype.is_complex


@_method
def element_size(self: Tensor) -> int:
    """Bytes per element, as stored."""
    return int(self._data.dtype.itemsize) if hasattr(self._data.dtype, "itemsize") else \
        int(self._data.dtype.size)


# --------------------------------------------------------------------------------------------
# shapes: x.view, x.permute, x.t(), x.numel(), x.dim() ...


@_method
def view(self: Tensor, *shape: Any) -> Tensor:
    """``x.view(2, -1)``: PyTorch's name for ``x.reshape(2, -1)``.

    Lucid's tensors have no strides, so every reshape is allowed (PyTorch refuses ``view`` on
    some transposed tensors and asks for ``reshape``; Lucid never needs to).  In-place updates
    rebind a tensor's data instead of writing into it, so the view never sees later changes of
    the original -- the result's values are the same, and gradients flow as through reshape.
    ``x.view(dtype)`` (reinterpreting the bytes) is not supported: use ``x.astype(dtype)``.
    """
    if len(shape) == 1 and not isinstance(shape[0], (int, np.integer, tuple, list)):
        raise TypeError(f"view: reinterpreting the bytes as {shape[0]!r} is not supported; "
                        "x.astype(dtype) converts the values")
    return FUNCTIONS["reshape"](self, *shape)


@_method
def view_as(self: Tensor, other: Tensor) -> Tensor:
    """``x.view(other.shape)``."""
    return FUNCTIONS["reshape"](self, other.shape)


@_method
def reshape_as(self: Tensor, other: Tensor) -> Tensor:
    return FUNCTIONS["reshape"](self, other.shape)


@_method
def expand_as(self: Tensor, other: Tensor) -> Tensor:
    return FUNCTIONS["broadcast_to"](self, other.shape)


@public(method=True)
def permute(x: Any, *dims: Any) -> Tensor:
    """``x.permute(2, 0, 1)`` (or ``permute(x, (2, 0, 1))``): the axes reordered, so that
    ``y.shape[k] = x.shape[dims[k]]``.  PyTorch's name for NumPy's ``transpose(x, axes)``."""
    if len(dims) == 1 and isinstance(dims[0], (tuple, list)):
        dims = tuple(dims[0])
    return FUNCTIONS["transpose"](x, tuple(dims))


@public(method=True)
def t(x: Any) -> Tensor:
    """The transpose of a matrix (a vector or a scalar is returned as it is), PyTorch's
    ``x.t()``; tensors of 3 or more dimensions are refused (use ``transpose(d0, d1)``)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    if x.ndim > 2:
        raise ValueError(f"t: expects a tensor of at most 2 dimensions, got shape {x.shape}; "
                         "use x.transpose(d0, d1) or x.permute(...)")
    return x if x.ndim < 2 else FUNCTIONS["transpose"](x, 1, 0)


@public(method=True)
def numel(x: Any) -> int:
    """The number of elements (``x.numel()``; Lucid's ``x.size`` is the same int)."""
    return int(x.size) if isinstance(x, Tensor) else int(np.size(x))


@_method
def nelement(self: Tensor) -> int:
    return int(self.size)


@_method
def dim(self: Tensor) -> int:
    """The number of dimensions (``x.ndim``)."""
    return self.ndim


_method(dim, name="ndimension")


@_method
def contiguous(self: Tensor) -> Tensor:
    """``x`` itself: Lucid's tensors have no strides, so every tensor is contiguous."""
    return self


@_method
def is_contiguous(self: Tensor) -> bool:
    return True


@public(name="cat")
def cat(tensors: Any, dim: int = 0, *, axis: int | None = None) -> Tensor:
    """PyTorch's name for :func:`lucid.concatenate`: ``cat([a, b], dim=1)``."""
    return FUNCTIONS["concatenate"](tensors, dim if axis is None else axis)


_UNSET = object()


@_method
def repeat(self: Tensor, *sizes: Any, repeats: Any = _UNSET, axis: Any = _UNSET) -> Tensor:
    """``x.repeat(2, 3)``: PyTorch's meaning, ``x`` tiled -- 2 copies along the first axis, 3
    along the second (``lucid.tile``); one size per dimension (more add leading axes).

    NumPy's (and Lucid 2.x's) ``repeat`` -- each element repeated -- is kept under its keyword
    spelling ``x.repeat(2, axis=0)`` / ``x.repeat(repeats=2)``, as the function
    ``lucid.repeat(x, 2, axis=0)`` and as PyTorch's ``repeat_interleave``.  Why: the method is
    PyTorch code's ``pos.repeat(batch, 1)``; NumPy would read it as "each element twice along
    axis 1" and silently give another tensor.
    """
    if repeats is not _UNSET or axis is not _UNSET:
        if sizes and repeats is not _UNSET:
            raise TypeError("repeat: got sizes and repeats=; give one of them")
        count = sizes[0] if sizes else repeats
        return FUNCTIONS["repeat"](self, count, None if axis is _UNSET else axis)
    if len(sizes) == 1 and isinstance(sizes[0], (tuple, list)):
        sizes = tuple(sizes[0])
    if len(sizes) < self.ndim:
        raise ValueError(
            f"repeat: x.repeat(*sizes) tiles (PyTorch's meaning) and needs one size per "
            f"dimension ({self.ndim}), got {tuple(sizes)}; for NumPy's repeat (each element "
            "n times) write x.repeat(n, axis=d) or lucid.repeat_interleave(x, n, dim=d)")
    return FUNCTIONS["tile"](self, tuple(sizes))


@public(method=True)
def repeat_interleave(x: Any, repeats: Any, dim: int | None = None) -> Tensor:
    """Each element repeated ``repeats`` times along ``dim`` (flattened when None): PyTorch's
    name for NumPy's ``repeat`` (``lucid.repeat(x, repeats, axis=dim)``)."""
    if isinstance(repeats, Tensor):
        repeats = repeats.tolist()
    return FUNCTIONS["repeat"](x, repeats, dim)


# --------------------------------------------------------------------------------------------
# new tensors like this one: x.new_zeros(2, 3), x.new_tensor(data)


def _new(self: Tensor, values: np.ndarray, dtype: Any, device: Any,
         requires_grad: bool) -> Tensor:
    return Tensor(values, dtype=self.dtype if dtype is None else dtype,
                  device=self.device if device is None else device,
                  requires_grad=requires_grad)


def _new_shape(size: tuple) -> tuple:
    return tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) else size


@_method
def new_zeros(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """Zeros of ``size`` with this tensor's dtype and device (each overridable)."""
    return _new(self, np.zeros(_new_shape(size)), dtype, device, requires_grad)


@_method
def new_ones(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
             requires_grad: bool = False) -> Tensor:
    """Ones of ``size`` with this tensor's dtype and device (each overridable)."""
    return _new(self, np.ones(_new_shape(size)), dtype, device, requires_grad)


@_method
def new_empty(self: Tensor, *size: Any, dtype: Any = None, device: Any = None,
              requires_grad: bool = False) -> Tensor:
    """An unfilled tensor of ``size`` (Lucid fills it with zeros) with this tensor's dtype and
    device."""
    return _new(self, np.zeros(_new_shape(size)), dtype, device, requires_grad)


@_method
def new_full(self: Tensor, size: Any, fill_value: Any, *, dtype: Any = None,
             device: Any = None, requires_grad: bool = False) -> Tensor:
    """``size`` filled with ``fill_value``, with this tensor's dtype and device."""
    shape = tuple(size) if isinstance(size, (tuple, list)) else (size,)
    return _new(self, np.full(shape, fill_value), dtype, device, requires_grad)


@_method
def new_tensor(self: Tensor, data: Any, *, dtype: Any = None, device: Any = None,
               requires_grad: bool = False) -> Tensor:
    """``data`` as a tensor with this tensor's dtype and device (a copy, cut from any graph)."""
    values = data.numpy() if isinstance(data, Tensor) else np.asarray(data)
    return _new(self, values, dtype, device, requires_grad)


# --------------------------------------------------------------------------------------------
# arithmetic and comparison methods under PyTorch's names


def _binary_method(name: str, fn_name: str) -> None:
    fn = FUNCTIONS[fn_name]

    def method(self: Tensor, other: Any, **options: Any) -> Tensor:
        return fn(self, other, **options)  # x.div(y, rounding_mode="floor")

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"``x.{name}(y)``: the same as ``lucid.{fn_name}(x, y)``."
    _method(method)


for _name, _fn_name in (("pow", "pow"), ("eq", "eq"), ("ne", "not_equal"),
                        ("lt", "less"), ("le", "less_equal"), ("gt", "greater"),
                        ("ge", "greater_equal"), ("mul", "mul"), ("div", "div"),
                        ("maximum", "maximum"), ("minimum", "minimum")):
    _binary_method(_name, _fn_name)


@_method
def add(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    """``x + alpha * other``."""
    return self + (other if alpha == 1 else alpha * other)


@_method
def sub(self: Tensor, other: Any, alpha: Any = 1) -> Tensor:
    """``x - alpha * other``."""
    return self - (other if alpha == 1 else alpha * other)


@_method
def neg(self: Tensor) -> Tensor:
    return -self


@public(name="mm")
def mm(a: Any, b: Any) -> Tensor:
    """PyTorch's name for the product of two matrices (:func:`lucid.matmul`)."""
    return FUNCTIONS["matmul"](a, b)


@public(name="bmm")
def bmm(a: Any, b: Any) -> Tensor:
    """PyTorch's name for a batch of matrix products (:func:`lucid.matmul` on 3-D tensors)."""
    return FUNCTIONS["matmul"](a, b)


_method(mm)
_method(bmm)


# --------------------------------------------------------------------------------------------
# autograd spellings: requires_grad_, detach_, clone, grad_fn


@_method
def requires_grad_(self: Tensor, requires_grad: bool = True) -> Tensor:
    """Set ``requires_grad`` in place (leaves only, float dtypes only); returns ``x``."""
    if requires_grad and not (self.dtype.is_floating_point or self.dtype.is_complex):
        raise TypeError(f"requires_grad_: only floating-point tensors can require grad, this "
                        f"one is {self.dtype.name}; cast it first (x.float())")
    if not self.is_leaf and not requires_grad:
        raise RuntimeError("requires_grad_(False) on a tensor made by an op: use x.detach()")
    self.requires_grad = bool(requires_grad)
    return self


@_method
def detach_(self: Tensor) -> Tensor:
    """Cut ``x`` from its graph in place (it becomes a leaf that needs no grad)."""
    self._op = None
    self._prev = ()
    self.requires_grad = False
    return self


@_method
def clone(self: Tensor) -> Tensor:
    """A copy of ``x`` that stays in the graph (gradients flow back to ``x``)."""
    out = FUNCTIONS["astype"](self, self.dtype)
    if out._data is self._data:
        out._data = self._data.copy() if hasattr(self._data, "copy") else self._data
    return out


class Node:
    """A read-only view of one recorded op, PyTorch's ``grad_fn``: ``name()`` (the op's
    class, e.g. ``'Mul'``; PyTorch writes ``'MulBackward0'``) and ``next_functions``, one
    ``(node, 0)`` pair per input -- the input's own ``grad_fn``, an ``AccumulateGrad`` for a
    leaf that requires grad, or ``None`` for an input that needs no gradient."""

    __slots__ = ("_tensor",)

    def __init__(self, tensor: Tensor) -> None:
        self._tensor = tensor

    def name(self) -> str:
        t = self._tensor
        return "AccumulateGrad" if t._op is None else type(t._op).__name__

    @property
    def variable(self) -> Tensor:
        """The leaf an ``AccumulateGrad`` node writes ``.grad`` into."""
        return self._tensor

    @property
    def next_functions(self) -> tuple[tuple[Node | None, int], ...]:
        if self._tensor._op is None:
            return ()
        return tuple((_node_of(p), 0) for p in self._tensor._prev)

    def __repr__(self) -> str:
        return f"<{self.name()}>"


def _node_of(t: Tensor) -> Node | None:
    if not t.requires_grad:
        return None
    return Node(t)


def grad_fn(self: Tensor) -> Node | None:
    """The op that made ``x`` as a graph node (None for a leaf, or when nothing was recorded)."""
    if self._op is None or not self.requires_grad:
        return None
    return Node(self)


METHODS["grad_fn"] = property(grad_fn)
Tensor.grad_fn = METHODS["grad_fn"]


def _index(self: Tensor) -> int:
    """A 0-d (or one-element) integer tensor used as a Python index: ``classes[label]``."""
    if self.dtype.base_dtype not in (int, bool) or self.size != 1:
        raise TypeError(f"only integer tensors of a single element can be converted to an "
                        f"index; this one is {self.dtype.name} of shape {self.shape}")
    return int(self.item())


Tensor.__index__ = _index


Tensor.is_cuda = property(lambda self: self.device == "gpu",
                          doc="True on the \"gpu\" device (PyTorch's name for it: cuda).")
Tensor.is_cpu = property(lambda self: self.device == "cpu", doc="True on the \"cpu\" device.")
Tensor.is_xpu = property(lambda self: False, doc="False: Lucid has no Intel XPU device.")
Tensor.is_meta = property(lambda self: False, doc="False: every Lucid tensor holds its values.")


@_method
def cuda(self: Tensor, device: Any = None) -> Tensor:
    """PyTorch's ``x.cuda()``: ``x.to("gpu")`` (MLX's device)."""
    return self.to("gpu")


# --------------------------------------------------------------------------------------------
# a few more of PyTorch's names, built from the ops above (their gradients are the ops')


@public
def allclose(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8,
             equal_nan: bool = False) -> bool:
    """True when every ``|a - b| <= atol + rtol·|b|`` (NumPy's and PyTorch's ``allclose``)."""
    return bool(np.allclose(_host(a), _host(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


@public
def isclose(a: Any, b: Any, rtol: float = 1e-5, atol: float = 1e-8,
            equal_nan: bool = False) -> Tensor:
    """Elementwise ``|a - b| <= atol + rtol·|b|`` as a Bool tensor (no gradient)."""
    return Tensor(np.isclose(_host(a), _host(b), rtol=rtol, atol=atol, equal_nan=equal_nan))


@public
def equal(a: Any, b: Any) -> bool:
    """PyTorch's ``torch.equal``: one Python bool, True when ``a`` and ``b`` have the same
    shape and every element is equal (NaN equals nothing).  Elementwise comparison, a Bool
    tensor, is ``lucid.eq(a, b)`` / ``a == b``.  (Lucid 2.x had no public ``equal``; this
    one follows PyTorch, so a renamed ``if torch.equal(out1, out2):`` means the same.)"""
    a, b = _host(a), _host(b)
    return a.shape == b.shape and bool(np.array_equal(a, b))


def _host(a: Any) -> Any:
    return a.numpy() if isinstance(a, Tensor) else np.asarray(a)


_method(allclose)
_method(isclose)
_method(equal)


@public(method=True)
def rsqrt(x: Any) -> Tensor:
    """1 / sqrt(x)."""
    return FUNCTIONS["reciprocal"](FUNCTIONS["sqrt"](x))


@public(method=True)
def index_select(x: Any, dim: int, index: Any) -> Tensor:
    """The slices of ``x`` at ``index`` (1-D integers) along ``dim``: ``x[..., index, ...]``."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    d = dim % x.ndim if x.ndim else 0
    return x[(slice(None),) * d + (index,)]


@public(method=True)
def masked_select(x: Any, mask: Any) -> Tensor:
    """The elements of ``x`` where ``mask`` is True, as a 1-D tensor (``x[mask]``)."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    mask = mask if isinstance(mask, Tensor) else Tensor(mask)
    if mask.shape != x.shape:
        mask = FUNCTIONS["broadcast_to"](mask, x.shape)
    return x[mask]


@public(method=True)
def unbind(x: Any, dim: int = 0) -> tuple[Tensor, ...]:
    """The slices of ``x`` along ``dim``, each without that axis."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    d = dim % x.ndim
    return tuple(x[(slice(None),) * d + (i,)] for i in range(x.shape[d]))


@public(method=True)
def flip(x: Any, dims: Any) -> Tensor:
    """``x`` with the order of its elements reversed along each axis in ``dims``."""
    x = x if isinstance(x, Tensor) else Tensor(x)
    for d in (dims,) if isinstance(dims, int) else tuple(dims):
        n = x.shape[d]
        x = index_select(x, d, Tensor(np.arange(n - 1, -1, -1), device=x.device))
    return x


@_method
def retain_grad(self: Tensor) -> None:
    """Keep this (non-leaf) tensor's gradient in ``.grad`` after backward (Lucid's
    ``keep_grad=True``)."""
    self.keep_grad = True


for _name in ("tril", "triu", "trace", "diag", "where"):
    if _name in FUNCTIONS and _name not in METHODS:
        _method(FUNCTIONS[_name], name=_name)


def _random_fill(name: str, draw: Any) -> Any:
    def fill(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
        values = Tensor(draw(RANDOM_STREAM, self.shape, *args, **kwargs), device=self.device)
        return self.copy_(values)

    fill.__name__ = fill.__qualname__ = name
    fill.__doc__ = f"``x.{name}(...)``: fill ``x`` in place with samples from Lucid's random " \
                   "stream (inside ``lucid.no_grad()`` for a tensor that requires grad)."
    return fill


_method(_random_fill("uniform_", lambda g, shape, a=0.0, b=1.0: g.uniform(a, b, shape)))
_method(_random_fill("normal_",
                     lambda g, shape, mean=0.0, std=1.0: mean + std * g.standard_normal(shape)))


@_method
def masked_fill_(self: Tensor, mask: Any, value: Any) -> Tensor:
    """``x.masked_fill(mask, value)`` written into ``x`` (in place)."""
    return self.copy_(FUNCTIONS["masked_fill"](self.detach(), mask, value))


# --------------------------------------------------------------------------------------------
# x.to(device), x.to(dtype), x.to(other), x.to(device, dtype)


def device_and_dtype(fn: str, args: tuple, kwargs: dict) -> tuple[str | None, Numeric | None]:
    """Read PyTorch's ``to`` arguments: a device (a string or ``lucid.device``), a dtype, a
    Tensor (its device and dtype), in any of PyTorch's orders, or ``device=`` / ``dtype=``;
    ``non_blocking=`` and ``copy=`` are accepted and change nothing."""
    kwargs = dict(kwargs)
    kwargs.pop("non_blocking", None)
    kwargs.pop("copy", None)
    device, dtype = kwargs.pop("device", None), kwargs.pop("dtype", None)
    if kwargs:
        raise TypeError(f"{fn}: unexpected keyword argument(s) {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, str):
            device = a
        elif isinstance(a, bool):  # PyTorch's positional non_blocking
            continue
        elif a is not None:
            dtype = _numeric(fn, a)
    if device is not None:
        from lucid.backends import check_device

        device = check_device(device)
    return device, (None if dtype is None else as_numeric(dtype))


_move = Tensor.to  # ops/device.py's move between devices


@_method(name="to")
def to(self: Tensor, *args: Any, **kwargs: Any) -> Tensor:
    """``x.to("gpu")``, ``x.to(lucid.float32)``, ``x.to(other)``, ``x.to("cuda", lucid.half)``:
    this tensor on that device and/or of that dtype (PyTorch's ``to``), recorded in the graph
    (gradients flow back); the tensor itself when nothing changes.  "cuda"/"mps" mean "gpu"."""
    device, dtype = device_and_dtype("to", args, kwargs)
    out = self if device is None else _move(self, device)
    return out if dtype is None or out.dtype == dtype else FUNCTIONS["astype"](out, dtype)


# --------------------------------------------------------------------------------------------
# PyTorch's names for functions Lucid has under NumPy's


def _same_as(name: str, target: str) -> None:
    """``lucid.<name>`` and ``x.<name>()``: PyTorch's name for ``lucid.<target>``."""
    fn = FUNCTIONS[target]

    def same(*args: Any, **kwargs: Any) -> Any:
        return fn(*args, **kwargs)

    same.__name__ = same.__qualname__ = name
    same.__doc__ = f"PyTorch's name for :func:`lucid.{target}` (the same op)."
    public(same, method=True, name=name)
    _method(same, name=name)


for _name, _target in (("asin", "arcsin"), ("acos", "arccos"), ("atan", "arctan"),
                       ("true_divide", "div"), ("floor_divide", "floordiv")):
    _same_as(_name, _target)


def _values_only(which: str) -> Any:
    def extremum_values(x: Any, dim: Any = None, keepdim: bool = False) -> Tensor:
        return FUNCTIONS[which](x, axis=dim, keepdims=keepdim)  # axis=: the values alone

    name = "a" + which
    extremum_values.__name__ = extremum_values.__qualname__ = name
    extremum_values.__doc__ = (f"``{name}(x, dim=None, keepdim=False)``: the {which}imum along "
                               f"``dim`` (an int or a tuple; every axis when None), the "
                               f"values alone (PyTorch's ``torch.{name}``).")
    return extremum_values


__all__ = ["MaxMin", "Node", "PYTORCH_KEYWORDS", "device_and_dtype"]

_publish_extrema()
_publish_spreads()
for _which in ("max", "min"):
    _method(public(_values_only(_which), method=True))
_translate_keywords()


# --------------------------------------------------------------------------------------------
# out=: PyTorch's functions can write their result into a tensor given as ``out``
# (``torch.matmul(a, b, out=y)``, the tensors tutorial).  The operators (``a @ b``) and the
# methods keep the plain functions: only a call that names ``out`` pays for it.

# (Not the one-input math functions: ``lucid.tanh(x)`` sits in hot loops, and a wrapper is a
# Python call more on every call.)
_OUT_FUNCTIONS = ("matmul", "mm", "bmm", "mul", "add", "sub", "div", "true_divide", "pow",
                  "maximum", "minimum", "floor_divide", "remainder", "clamp", "cat", "stack",
                  "sum", "mean", "prod", "cumsum", "where")


def _with_out(name: str) -> None:
    fn = FUNCTIONS[name]

    @functools.wraps(fn)
    def with_out(*args: Any, out: Any = None, **kwargs: Any) -> Any:
        result = fn(*args, **kwargs)
        return result if out is None else inplace.store_out(name, out, result)

    for other, same in list(FUNCTIONS.items()):  # its second names too (lucid.multiply)
        if same is fn:
            FUNCTIONS[other] = with_out


for _name in _OUT_FUNCTIONS:
    if _name in FUNCTIONS:
        _with_out(_name)

"""The ``Op`` base class, the catalogue's registries and the dispatcher ``apply``.

One operation is one class holding everything about it: its name, its public
function, whether it is a Tensor method, the values it keeps for backward, forward, backward
and FLOPs::

    class Exp(Elementwise):
        '''y = e^x.   dy/dx = e^x = y, so backward reuses the output.'''
        name = "exp"              # registers the op: lucid.exp(x) ...
        method = True             # ... and x.exp()
        saves_inputs = False      # backward reads only the output
        saves_output = True
        def forward(self, xp, x):    self.y = xp.exp(x); return self.y
        def backward(self, xp, g):   return (g * self.y,)

``forward`` and ``backward`` receive ``xp``, the array namespace of the device the op runs on
(``numpy`` for "cpu", ``mlx.core`` for "gpu"), and plain backend arrays, never Tensors.  The
op checks its inputs at the top of ``forward`` (before any work) and keeps whatever backward
needs on ``self``.  ``backward(g)`` returns one gradient per input (None where there is none).

Registering a class is all it takes to publish it: the public function ``lucid.<function>``
is derived from the class (its tensor ``inputs`` first, then the parameters of its
``__init__``), and so are its Tensor method and Python operator.  Functions built from other
ops, with no class of their own (``split``, ``hstack``), register with :func:`public`.

:func:`apply` is the single path every op call takes: make the arguments tensors, choose the
device, run ``forward``, wrap the result and -- only when a gradient or a FLOPs count is wanted
-- record the graph on it.
"""

from __future__ import annotations

import copy
import inspect
import itertools
import re
from collections.abc import Callable
from typing import Any, ClassVar

import numpy as np

from lucid.backends import BACKENDS, TENSOR_DEVICES, fallback
from lucid.engine.mode import MODE, flops_enabled, grad_enabled, settle
from lucid.shapes import fmt
from lucid.tensor import _PY_SCALARS, Tensor
from lucid.types import Float32, Float64, to_numeric_type

#: op name -> op class (every class that sets ``name``)
REGISTRY: dict[str, type[Op]] = {}
#: public function name -> function: ``lucid.<name>`` (op classes and :func:`public` ones)
FUNCTIONS: dict[str, Callable[..., Any]] = {}
#: Tensor attribute -> function (or property): ``x.<name>``
METHODS: dict[str, Any] = {}
#: Python operator ("+", "-x", "==", "@", "[]", ...) -> the function that computes it
OPERATORS: dict[str, Callable[..., Any]] = {}


class Op:
    """Base class of every operation.  Subclasses set ``name`` to register themselves.

    Subclassing ``Op`` without a ``name`` is the stable public API for an op of your own
    (``lucid.Op``; README, "Your own op"): ``forward(xp, *inputs)``, ``backward(xp, g)``,
    ``forward_flops`` / ``backward_flops``, ``inputs``, ``saves_inputs``, ``saves_output``,
    ``counts_macs``, ``Op.apply(*inputs, **params)`` and ``error(message)`` keep their meaning
    across releases.
    """

    # ``seq`` (when the op ran: the backward walk visits ops latest first), ``versions`` (the
    # saved inputs' versions at forward; None once the graph is released), ``flops`` and
    # ``flops_bwd`` (recorded under count_flops, with ``macs`` and ``macs_bwd``: how many of
    # them are multiply-adds), ``bytes_sent`` and ``bytes_sent_bwd`` (recorded alike for an op
    # that ``communicates``) and ``module`` (the module call that ran it, set by a recorder)
    # are the engine's; everything an op saves for its backward goes in ``__dict__``, which
    # the backward walk clears once the op's rule has run (unless the graph is retained).
    __slots__ = ("__dict__", "seq", "versions", "flops", "flops_bwd", "macs", "macs_bwd",
                 "bytes_sent", "bytes_sent_bwd", "module")

    # -- what the op is called, and where it is published --------------------------------
    #: registers the op; error messages start with it
    name: ClassVar[str] = ""
    #: the public function ``lucid.<function>``: defaults to ``name``; None publishes none
    function: ClassVar[str | None]
    #: also a Tensor method of the function's name (``x.exp()``)
    method: ClassVar[bool] = False
    #: the Python operator it computes: "+", "-", "*", "/", "//", "**", "@", "==", "!=", "<",
    #: "<=", ">", ">=", "&", "|", "^", "-x", "~x", "abs(x)" or "[]" (see tensor_methods.py)
    operator: ClassVar[str | None] = None
    #: names of the tensor arguments the function takes first (its parameters follow)
    inputs: ClassVar[tuple[str, ...]] = ("x",)

    # -- what backward needs -------------------------------------------------------------
    #: which inputs backward reads: True (all), False (none) or a tuple of input positions.
    #: An in-place change to one of them after the forward pass is an error at backward.
    saves_inputs: ClassVar[bool | tuple[int, ...]] = True
    #: backward reads the output's value
    saves_output: ClassVar[bool] = False
    #: record ``self.needs`` (which inputs require grad) so backward can skip dead work
    #: (under count_flops every op has ``self.needs``: its backward FLOPs rule reads it)
    wants_needs: ClassVar[bool] = False
    #: before backward, the engine sets ``self.final`` (True when the graph is released right
    #: after it) so backward can free a large saved buffer as soon as it has used it
    wants_final: ClassVar[bool] = False
    final: bool = False

    # -- how it runs ---------------------------------------------------------------------
    differentiable: ClassVar[bool] = True
    #: gradients may come back at the broadcast shape and are summed down to the input's shape
    broadcasts: ClassVar[bool] = False
    #: the "gpu" backend lacks this op: run it with NumPy and move the result (warns once)
    fallback: ClassVar[bool] = False
    #: on "gpu", give results the dtype NumPy would (MLX promotes integers differently)
    numpy_dtypes: ClassVar[bool] = True

    # -- what it costs -------------------------------------------------------------------
    #: its FLOPs rules count multiply-adds (MACs: matmul, convolution); every other op counts
    #: floating-point operations (FLOPs).  See :mod:`lucid.cost`.
    counts_macs: ClassVar[bool] = False
    #: it moves data between processes (a collective of lucid.distributed): under count_flops
    #: its ``bytes_rule`` records the bytes this process sends, forward and backward
    communicates: ClassVar[bool] = False

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        name = cls.__dict__.get("name")
        if not name:
            return  # a family base class (Elementwise, Reduce, ...): nothing to register
        if name in REGISTRY:
            raise RuntimeError(f"op name {name!r} registered twice")
        REGISTRY[name] = cls
        _publish(cls)

    @classmethod
    def apply(cls, *inputs: Any, **params: Any) -> Tensor:
        """Run a new ``cls(**params)`` on ``inputs``: ``Cube.apply(x)``.  An op object keeps
        what its backward needs, so every call makes a fresh one."""
        return apply(cls(**params), *inputs)

    def forward(self, xp: Any, *xs: Any) -> Any:
        raise self.error("no forward rule: define forward(self, xp, x) returning an array",
                         NotImplementedError)

    def backward(self, xp: Any, g: Any) -> tuple[Any, ...]:
        raise self.error("no backward rule: define backward(self, xp, g) returning one "
                         "gradient per input", NotImplementedError)

    def forward_flops(self, out: Any, *xs: Any) -> int:
        """Operations of the forward pass: multiply-adds (MACs) for matmul/conv, one FLOP per
        output element for elementwise ops."""
        raise self.error("no FLOPs rule: define forward_flops(self, out, x) returning the "
                         "number of operations (counting FLOPs and drawing need it)",
                         NotImplementedError)

    def backward_flops(self, out: Any, *xs: Any) -> int:
        """Operations of this op's backward rule, counted the same way: only the gradients
        the rule computes, those of the inputs in ``self.needs``."""
        raise self.error("no backward FLOPs rule: define backward_flops(self, out, x) "
                         "returning the number of operations of backward", NotImplementedError)

    def macs_of(self, flops: int, flops_bwd: int, out: Any, *xs: Any) -> tuple[int, int]:
        """How many of the forward and backward counts of a ``counts_macs`` op are
        multiply-adds (the rest are FLOPs): all of them, unless the op says otherwise (a
        linear layer's bias add is a FLOP).  Not called for other ops: they count FLOPs."""
        return flops, flops_bwd

    def bytes_rule(self, out: Any, *xs: Any) -> tuple[int, int]:
        """Bytes this process sends over the network, forward and backward (only an op that
        ``communicates`` has this rule)."""
        raise self.error("no bytes rule: an op that communicates defines bytes_rule(self, out, "
                         "x) returning (bytes sent forward, bytes sent backward)",
                         NotImplementedError)

    def error(self, message: str, kind: type[Exception] = ValueError) -> Exception:
        """An exception whose message starts with this op's name (its class name when it has
        none: an op of your own)."""
        return kind(f"{self.name or type(self).__name__}: {message}")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"


# --------------------------------------------------------------------------------------------
# publishing: lucid.<function>, x.<method>() and Python operators, derived from the classes


def _publish(cls: type[Op]) -> None:
    """Derive ``cls``'s public function and enter it in FUNCTIONS, METHODS and OPERATORS."""
    fn_name = cls.__dict__.get("function", cls.name)
    fn = _function_of(cls, fn_name or cls.name)
    if fn_name:
        _enter(fn_name, fn, method=cls.method)
    if cls.operator:
        OPERATORS[cls.operator] = fn


def _function_of(cls: type[Op], fn_name: str) -> Callable[..., Any]:
    """The function users call for ``cls``: ``fn(*inputs, *params)`` -> ``apply(cls(*params),
    *inputs)``.  A class whose arguments follow another order defines a classmethod ``call``,
    which is then the function."""
    if hasattr(cls, "call"):
        call = cls.call  # type: ignore[attr-defined]

        def fn(*args: Any, **kwargs: Any) -> Any:
            return call(*args, **kwargs)

        signature = _signature(call)
    else:
        fn, signature = _default_function(cls, fn_name)
    fn.__name__ = fn.__qualname__ = fn_name
    fn.__code__ = _renamed(fn.__code__, fn_name)  # Python's own argument errors name it
    fn.__doc__ = cls.__doc__
    fn.__module__ = cls.__module__
    fn.__signature__ = signature  # type: ignore[attr-defined]
    return fn


def _default_function(cls: type[Op], fn_name: str) -> tuple[Callable[..., Any], Any]:
    n = len(cls.inputs)
    params = []  # the op's own parameters: its __init__'s, less self
    if cls.__init__ is not object.__init__:
        params = list(_signature(cls.__init__).parameters.values())[1:]
    takes_params = bool(params)
    tensors = [inspect.Parameter(i, inspect.Parameter.POSITIONAL_ONLY) for i in cls.inputs]
    signature = inspect.Signature(tensors + params)
    # The common cases get a plain function of their own (every ``a + b`` goes through one).
    if not takes_params and n == 1:

        def fn(x):
            return apply(cls(), x)
    elif not takes_params and n == 2:

        def fn(a, b):
            return apply(cls(), a, b)
    else:

        def fn(*args, **kwargs):
            if len(args) < n:
                raise _call_error(fn_name, signature, args, kwargs)
            try:
                op = cls(*args[n:], **kwargs)
            except TypeError as exc:  # a wrong argument list, or a parameter of a wrong type
                raise _call_error(fn_name, signature, args, kwargs) or exc from None
            return apply(op, *args[:n])

    return fn, signature


def _signature(fn: Callable[..., Any]) -> inspect.Signature:
    """``fn``'s signature with its annotations as types, not strings (for ``help``)."""
    try:
        return inspect.signature(fn, eval_str=True)
    except (NameError, TypeError):
        return inspect.signature(fn)


def _call_error(fn_name: str, signature: Any, args: tuple, kwargs: dict) -> TypeError | None:
    """The TypeError for arguments that do not fit ``signature`` (None when they do)."""
    try:
        signature.bind(*args, **kwargs)
    except TypeError as exc:
        return TypeError(f"{fn_name}{signature}: {exc}")
    return None


def _renamed(code: Any, name: str) -> Any:
    if hasattr(code, "co_qualname"):  # Python 3.11+
        return code.replace(co_name=name, co_qualname=name)
    return code.replace(co_name=name)


def _enter(name: str, fn: Any, method: bool = False, prop: bool = False) -> None:
    if name in FUNCTIONS and FUNCTIONS[name] is not fn:
        raise RuntimeError(f"public function {name!r} defined twice")
    FUNCTIONS[name] = fn
    if method or prop:
        METHODS[name] = property(fn) if prop else fn


def public(fn: Callable[..., Any] | None = None, *, method: bool = False,
           function: bool = True, prop: bool = False, name: str | None = None) -> Any:
    """Publish a function built from ops (no class of its own) beside the op functions.

    ``@public`` makes ``lucid.<name>``; ``method=True`` also ``x.<name>(...)``;
    ``prop=True`` makes a Tensor property (``x.T``); ``function=False`` publishes the Tensor
    method alone (``x.to("gpu")``); ``name`` overrides the function's own name.
    """

    def register(f: Callable[..., Any]) -> Callable[..., Any]:
        key = name or f.__name__
        if function:
            _enter(key, f, method=method, prop=prop)
        elif method or prop:
            METHODS[key] = property(f) if prop else f
        return f

    return register if fn is None else register(fn)


# --------------------------------------------------------------------------------------------
# apply: the path every op call takes


def apply(op: Op, *args: Any) -> Tensor:
    """Run ``op`` on ``args`` and return the result Tensor.  Every op call comes through here:

    1. arguments that are not Tensors (numbers, lists, arrays) become *free* tensors, and the
       op's device is chosen (free tensors move to it) -- nothing to do in the usual case,
       tensors that already share one device;
    2. ``op.forward`` runs on that device's array namespace;
    3. the result is wrapped in a Tensor, which becomes a graph node (``_op``, ``_prev``) only
       when a gradient or a FLOPs count is wanted.
    """
    __tracebackhide__ = True  # IPython shows the caller's line, not this frame
    first = args[0]
    for a in args:  # (``is``: a tensor's device is one of two objects, and the gpu one
        if not isinstance(a, Tensor) or a.device is not first.device:  # compares in Python)
            args = _as_tensors(op, args)            # 1. numbers, lists, arrays -> tensors
            device, args = _pick_device(op, args)   #    on the one device the op runs on
            break
    else:
        device = a.device
    backend = BACKENDS[device]                      # 2. forward on that device's arrays
    try:
        if backend.max_size is None:  # NumPy: the op's forward as is
            n = len(args)
            if n == 2:  # spelled out: the commonest calls skip building a list
                data = op.forward(backend.xp, args[0]._data, args[1]._data)
            elif n == 1:
                data = op.forward(backend.xp, args[0]._data)
            else:
                data = op.forward(backend.xp, *[a._data for a in args])
        else:  # MLX: never an empty or oversized array, NumPy for an op it lacks
            data = _forward_within_limits(op, backend, args)
    except (TypeError, ValueError, OverflowError) as exc:
        raise _forward_error(op, device, args, exc) from None
    return _result(op, data, device, args)          # 3. the result, a graph node if wanted


def _as_tensors(op: Op, args: tuple[Any, ...]) -> tuple[Tensor, ...]:
    """``args`` with every non-Tensor turned into a *free* tensor (one that follows the op's
    device): a Python scalar takes the dtype of the tensor it meets (``float32 + 2.5`` stays
    float32, NumPy 2's "weak scalar" rule); lists and arrays become "cpu" tensors."""
    for a in args:
        if not isinstance(a, Tensor):
            break
    else:
        return args  # the usual case: all tensors already
    ref = next((a for a in args if isinstance(a, Tensor)), None)
    return tuple(a if isinstance(a, Tensor) else _free_tensor(op, a, ref) for a in args)


def _free_tensor(op: Op, a: Any, ref: Tensor | None) -> Tensor:
    if isinstance(a, _PY_SCALARS) and ref is not None:
        dtype = _weak_dtype(ref._data.dtype, a)
        try:
            value = np.asarray(a, dtype=dtype)
        except OverflowError:  # an int the tensor's integer dtype cannot hold (uint8 + 300)
            info = np.iinfo(dtype)
            raise op.error(
                f"the Python int {a} does not fit the {ref.dtype.name} tensor it meets (whose "
                f"values run {info.min}..{info.max}; a Python number takes the tensor's dtype). "
                "Convert the tensor first, e.g. x.astype(lucid.Int64), or use a value in range",
                OverflowError,
            ) from None
        t = Tensor._wrap(BACKENDS[ref.device].asarray(value), ref.device)
    elif ref is not None and ref.device != "cpu" and isinstance(a, BACKENDS[ref.device].array_type):
        # a raw MLX array meeting a gpu tensor (``w -= lr * w.grad``): wrap it as is, not
        # through NumPy and back (which copies twice and forces MLX to evaluate mid-step)
        t = Tensor._wrap(a, ref.device)
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
    return t


# Python scalars take the dtype of the tensor they meet: float32 tensor + 2.5 stays float32,
# int32 tensor + 2.5 becomes float64.  Learnt once per (dtype, scalar type) from NumPy.
_WEAK_DTYPE: dict[tuple[Any, type], Any] = {}


def _weak_dtype(like: Any, value: Any) -> Any:
    key = (like, type(value))
    dtype = _WEAK_DTYPE.get(key)
    if dtype is None:
        np_like = like if isinstance(like, np.dtype) else to_numeric_type(like).cpu
        dtype = _WEAK_DTYPE[key] = np.result_type(np_like, value)
    return dtype


def _pick_device(op: Op, args: tuple[Tensor, ...]) -> tuple[str, tuple[Tensor, ...]]:
    """The op's device: the one its inputs share, else the one device of its *fixed* inputs
    (free tensors are moved there); fixed inputs on two devices are an error."""
    device = args[0].device
    for a in args:
        if a.device != device:
            break
    else:
        return TENSOR_DEVICES[device], args  # one device already (an equal object: the op's)
    fixed = {a.device for a in args if not a._free}
    if len(fixed) > 1:
        listed = ", ".join(f"{a.describe()} on {a.device!r}" for a in args)
        raise op.error(f"inputs are on different devices ({listed}). Move them to one device "
                       "first, e.g. x.to('gpu') or x.to('cpu').", RuntimeError)
    if fixed:
        device = fixed.pop()
    else:
        device = "gpu" if any(a.device == "gpu" for a in args) else "cpu"
    device = TENSOR_DEVICES[device]  # the device object itself (a name or an equal object)
    return device, tuple(a if a.device == device else a.to(device) for a in args)


def _forward_error(op: Op, device: str, args: tuple[Tensor, ...], exc: Exception) -> Exception:
    """The error for a forward that the array library refused: the dtypes (bool - bool), the
    values (ints to negative powers) or a size past what it can index (OverflowError)."""
    if not isinstance(exc, OverflowError):
        return _named(op, args, exc)
    shapes = ", ".join(fmt(a.shape) for a in args)
    return op.error(f"inputs {shapes} on {device!r}: {exc} (the \"gpu\" device's sizes are "
                    "32-bit integers: split the work into smaller pieces, or compute it on "
                    "'cpu')"
                    if device != "cpu" else f"inputs {shapes}: {exc}", OverflowError)


def _forward_within_limits(op: Op, backend: Any, args: tuple[Tensor, ...]) -> Any:
    """``op.forward`` on a device whose arrays have size limits (MLX).  (A function of its
    own: the closure below would cost every op call two cells if it sat in apply.)"""
    return fallback.run_within_limits(
        op, backend, [a._data for a in args],
        lambda: flops_enabled() or (grad_enabled() and op.differentiable
                                    and any(a.requires_grad for a in args)))


#: how Lucid's own messages start: a name and a colon
_NAMES_AN_OP = re.compile(r"^[A-Za-z_][A-Za-z_0-9.\[\]]*( \w+)?: ")


def _named(op: Op, args: tuple[Tensor, ...], exc: Exception) -> Exception:
    """``exc`` as it is when it names the op already; else (NumPy's own words: "numpy
    boolean subtract, the `-` operator, is not supported ...") with the op and the dtypes."""
    if _NAMES_AN_OP.match(str(exc)):  # "conv2d: input has dtype Int64; ..."
        return exc
    dtypes = ", ".join(a.dtype.name for a in args)
    return op.error(f"inputs of dtype {dtypes}: {exc}", type(exc))


def _result(op: Op, data: Any, device: str, args: tuple[Tensor, ...]) -> Tensor:
    """The result Tensor: free only if every input was, needing a gradient if any input does
    (while grad mode is on and the op is differentiable).  It becomes a graph node only
    when a gradient or a FLOPs count is wanted; otherwise nothing is recorded.

    A graph node knows its op (``_op``) and its inputs (``_prev``); the op knows when it ran
    (``seq``: the backward walk visits ops latest first), the versions of the inputs its
    backward will read (to find an in-place change made since), and, while counting, its
    FLOPs.  (Recorded here, not in a function of its own: this runs once per op.)
    """
    if len(args) == 2:  # spelled out: the commonest case skips a loop
        a, b = args
        free = a._free and b._free
        requires = a.requires_grad or b.requires_grad
        logical = a._dtype if b._dtype is None else b._dtype
    else:
        free, requires, logical = True, False, None
        for a in args:
            if not a._free:
                free = False
            if a.requires_grad:
                requires = True
            if a._dtype is not None:
                logical = a._dtype
    if device is not _CPU and op.numpy_dtypes:
        data, logical = _numpy_result_dtype(op, args, data, logical)
    if MODE.fast:  # grad on, not counting, no mode block open: the training loop
        grad, counting = True, False
    else:  # a no_grad loop or a count_flops() block: one probe of the innermost block
        probe = MODE.probe
        if probe is not None and not probe():
            settle()
        grad, counting = MODE.grad, MODE.flops
    out = _wrap(data, device, requires and grad and op.differentiable)
    out._free = free
    if logical is not None:
        out._dtype = _logical_result(logical, data)
    if not (out.requires_grad or counting):
        return out
    out._op = op  # a graph node
    out._prev = args
    op.seq = next(_SEQ)
    # The usual cases spelled out (two inputs, all or none saved): before Python 3.12 a list
    # comprehension is a function call of its own.
    two = len(args) == 2
    saved = op.saves_inputs
    if saved is True:
        op.versions = ((args[0]._version, args[1]._version) if two else
                       tuple([a._version for a in args]))
    elif not saved:
        op.versions = ()
    else:
        op.versions = tuple([args[i]._version for i in saved])
    if op.wants_needs:
        op.needs = ((args[0].requires_grad, args[1].requires_grad) if two else
                    tuple([a.requires_grad for a in args]))
    if counting:
        _count_flops(op, out, args)
    return out


_SEQ = itertools.count()  # numbers recorded ops in the order they ran

_CPU = TENSOR_DEVICES["cpu"]  # the "cpu" device object (compared by identity: once per op)

# Tensor._wrap looked up once: read off the class, a classmethod makes a new bound method
# at every call, and _result runs once per op.
_wrap = Tensor._wrap


def extra_output(array: Any, like: Tensor) -> Tensor:
    """A further result an op left on itself (sort's indices, slogdet's sign) as a Tensor
    beside its main result ``like``.  On "gpu" an op with empty arrays runs with NumPy
    (``fallback.run_within_limits``), so the array is brought to ``like``'s device."""
    return Tensor._wrap(BACKENDS[like.device].asarray(array), like.device)


def _count_flops(op: Op, out: Tensor, args: tuple[Tensor, ...]) -> None:
    """Store the op's forward and backward FLOPs on it (rules return Python ints)."""
    y = out._data
    grad = out.requires_grad  # the backward rule counts only if there will be a backward
    n = len(args)
    # The one- and two-input rules called with their arguments spelled out: a call with *xs
    # builds a tuple and takes Python's slow path, and this runs for every op counted.
    if n == 1:
        x = args[0]._data
        op.flops = op.forward_flops(y, x)
        op.flops_bwd = op.backward_flops(y, x) if grad else 0
    elif n == 2:
        a, b = args
        if grad and not op.wants_needs:  # the rule counts only the gradients computed
            op.needs = (a.requires_grad, b.requires_grad)
        a, b = a._data, b._data
        op.flops = op.forward_flops(y, a, b)
        op.flops_bwd = op.backward_flops(y, a, b) if grad else 0
    else:
        if grad and not op.wants_needs:
            op.needs = tuple([a.requires_grad for a in args])
        xs = [a._data for a in args]
        op.flops = op.forward_flops(y, *xs)
        op.flops_bwd = op.backward_flops(y, *xs) if grad else 0
    if op.counts_macs or op.communicates:
        _count_macs_and_bytes(op, y, [a._data for a in args], grad)
    recorder = MODE.recorder
    if recorder is not None:  # a module recorder is on: the op goes on its tape
        recorder.record(out)


def _count_macs_and_bytes(op: Op, y: Any, xs: list, grad: bool) -> None:
    """How many of an op's counts are multiply-adds, and what a collective sends."""
    if op.counts_macs:  # (left unset otherwise: lucid.cost reads a missing count as 0 MACs)
        op.macs, op.macs_bwd = op.macs_of(op.flops, op.flops_bwd, y, *xs)
    if op.communicates:  # a collective: its cost is bytes on the wire, not arithmetic
        sent, sent_bwd = op.bytes_rule(y, *xs)
        op.bytes_sent, op.bytes_sent_bwd = sent, (sent_bwd if grad else 0)


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
    floats = BACKENDS[args[0].device].float_dtypes
    for a in args:
        if a._data.dtype not in floats:
            break
    else:
        return data, logical  # all floats: MLX and NumPy agree
    key = (type(op), tuple(str(a._data.dtype) for a in args))
    want = _NUMPY_DTYPE.get(key)
    if want is None:
        probe = copy.copy(op)
        probe.__dict__ = dict(op.__dict__)
        try:
            with np.errstate(all="ignore"):
                ref = probe.forward(np, *[a.numpy() for a in args])
        except (TypeError, ValueError) as exc:  # NumPy refuses what MLX computed: refuse
            raise _named(op, args, exc) from None  # on both devices
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

"""``lucid.autograd.Function``: PyTorch's API for an operation of your own, on ``lucid.Op``.

    class MyReLU(lucid.autograd.Function):
        '''y = max(x, 0).   dy/dx = 1 where x > 0, else 0.'''

        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x.clamp(min=0)

        @staticmethod
        def backward(ctx, grad_output):
            (x,) = ctx.saved_tensors
            return grad_output * (x > 0)

    y = MyReLU.apply(x)

``forward(ctx, *args)`` computes the result from Tensors with Lucid's operations (no graph is
recorded inside it; PyTorch 2's style, ``forward(*args)`` plus ``setup_context(ctx, inputs,
output)``, works too); ``backward(ctx, grad_output)`` returns dL/d(input) for each argument of
``forward`` (None where there is none: a number, an input that needs no gradient), given
dL/d(output).  ``ctx`` carries what backward needs:

* ``ctx.save_for_backward(*tensors)`` / ``ctx.saved_tensors`` -- tensors (inputs or the output)
  kept for backward; changing an input in place before backward is an error;
* ``ctx.needs_input_grad`` -- one bool per argument of ``forward``: skip gradients nobody wants;
* ``ctx.mark_non_differentiable(output)`` -- the output is an index or a mask: no gradient;
* any other attribute (``ctx.scale = 2.0``) -- values that are not tensors.

``forward`` may return a tuple of outputs; ``backward(ctx, *grad_outputs)`` then gets one
gradient for each (zeros for those marked non-differentiable).

How it fits Lucid: each ``Function`` subclass gets a twin :class:`lucid.Op` subclass of the
same name and docstring, and ``apply`` runs that op.  So a Function is a graph node like any
other: ``lucid_viz`` draws it by its class name, the backward stepper shows its docstring, it
runs on "cpu" and "gpu" alike, and under ``count_flops()`` its cost is what the operations
inside ``forward`` (and, once run, ``backward``) cost.  With ``create_graph=True`` its backward
is recorded as a graph too (second derivatives), as long as ``forward`` and ``backward`` use
Lucid operations.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, ClassVar

from lucid.backends import backend_for
from lucid.cost import Cost
from lucid.engine.mode import (
    enable_grad,
    flops_enabled,
    grad_enabled,
    switch_modes,
)
from lucid.ops.base import Op, apply
from lucid.ops.graph_xp import NotTwiceDifferentiable
from lucid.tensor import Tensor

__all__ = ["Function", "FunctionCtx", "once_differentiable", "Variable"]


class FunctionCtx:
    """The ``ctx`` that ``forward`` fills and ``backward`` reads (one per call)."""

    def __init__(self, needs_input_grad: tuple[bool, ...]) -> None:
        self.needs_input_grad = needs_input_grad
        self._saved: tuple[Any, ...] = ()
        self._non_differentiable: list[Any] = []
        self.materialize_grads = True

    def save_for_backward(self, *tensors: Any) -> None:
        """Keep ``tensors`` (Tensors or None) for backward, where ``ctx.saved_tensors`` gives
        them back in the same order."""
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward: argument {i} is a {type(t).__name__}; only "
                                "Tensors (or None) are saved this way. Keep other values as "
                                "attributes: ctx.name = value")
        self._saved = tensors

    @property
    def saved_tensors(self) -> tuple[Any, ...]:
        """The tensors given to ``save_for_backward``."""
        return self._saved

    def mark_non_differentiable(self, *outputs: Any) -> None:
        """Declare ``forward``'s output not differentiable (an index, a mask): the result
        does not require grad, and backward is never called for it."""
        self._non_differentiable.extend(outputs)

    def set_materialize_grads(self, value: bool) -> None:
        """Accepted for PyTorch's sake: backward always gets a Tensor for each Tensor output
        (zeros for the non-differentiable ones), as with PyTorch's default."""
        self.materialize_grads = bool(value)


class _FunctionOp(Op):
    """The op that runs a :class:`Function`: its forward and backward call the Function's."""

    function: ClassVar[Any] = None  # the Function subclass (set on each twin class)
    counts_macs = True  # the inner ops' multiply-adds stay MACs (see macs_of)

    def __init__(self, args: Sequence[Any], ctx: FunctionCtx) -> None:
        # forward's arguments, the Tensor inputs left out (None): the graph holds those
        self.slots = [i for i, a in enumerate(args) if isinstance(a, Tensor)]
        self.args = [None if isinstance(a, Tensor) else a for a in args]
        self.ctx = ctx

    def _call(self, tensors: Sequence[Tensor]) -> Any:
        args = list(self.args)
        for slot, t in zip(self.slots, tensors):
            args[slot] = t
        fn = self.function
        if fn.setup_context is Function.setup_context:  # the classic style: forward(ctx, ...)
            return fn.forward(self.ctx, *args)
        out = fn.forward(*args)  # PyTorch 2's style: forward(...), then setup_context
        fn.setup_context(self.ctx, tuple(args), out)
        return out

    def forward(self, xp: Any, *xs: Any) -> Any:
        if xs and isinstance(xs[0], Tensor):  # create_graph: forward re-run on the inputs
            self.ctx = FunctionCtx(self.ctx.needs_input_grad)  # (this op is the engine's copy)
            with enable_grad():
                return self._pack(xp, self._call(xs), graph=True)
        device = backend_for(xp).device
        inputs = [Tensor._wrap(x, device) for x in xs]  # the arrays, seen as plain tensors
        counted = flops_enabled()
        with _inner(counted):
            out = self._pack(xp, self._call(inputs), graph=False)
        self.inner_cost = _cost_of(counted, *self.outputs)
        if not self.shapes:  # every output marked non-differentiable
            self.differentiable = False
        return out._data

    def _pack(self, xp: Any, out: Any, graph: bool) -> Tensor:
        """Forward's output as the op's one result.  One Tensor is the result itself.  Several
        outputs (a tuple) become one flat tensor of the differentiable ones, one after
        another (``apply`` cuts it back into the outputs, so gradients flow to each piece);
        outputs marked non-differentiable and non-Tensors are handed back as they are."""
        many = isinstance(out, (tuple, list))
        outs = tuple(out) if many else (out,)
        if not many and not isinstance(out, Tensor):
            raise self.error(f"forward must return a Tensor (or a tuple of them), got "
                             f"{type(out).__name__}", TypeError)
        marked = self.ctx._non_differentiable
        self.many, self.outputs = many, outs
        self.diff = [isinstance(o, Tensor) and not any(o is m for m in marked) for o in outs]
        picked = [o for o, d in zip(outs, self.diff) if d]
        self.shapes = [o.shape for o in picked]
        if not many:
            return out
        if not picked:
            return outs[0] if isinstance(outs[0], Tensor) else Tensor._wrap(xp.zeros(()),
                                                                             "cpu")
        if len({o.dtype for o in picked}) > 1:
            raise self.error("forward returned differentiable outputs of different dtypes ("
                             + ", ".join(o.dtype.name for o in picked) + "); cast them to one",
                             TypeError)
        if len(picked) == 1:
            return picked[0]
        if graph:  # xp's concatenate is Lucid's: the packing is recorded
            return xp.concatenate([o.reshape(-1) for o in picked])
        flat = xp.concatenate([o._data.reshape(-1) for o in picked])
        return Tensor._wrap(flat, picked[0].device)

    def backward(self, xp: Any, g: Any) -> tuple[Any, ...]:
        if isinstance(g, Tensor):  # create_graph: backward recorded as a graph
            if getattr(self.function.backward, "once_differentiable", False):
                raise NotTwiceDifferentiable(
                    f"{self.function.__name__}.backward is marked @once_differentiable")
            with enable_grad():
                grads = self.function.backward(self.ctx, *self._unpack(xp, g, g.device))
                return self._gradients(grads, g.device, True)
        device = backend_for(xp).device
        counted = getattr(self, "flops", None) is not None
        with _inner(counted):
            grads = self.function.backward(self.ctx, *self._unpack(xp, g, device))
            out = self._gradients(grads, device, False)
        if counted:
            cost = _cost_of(counted, *[t for t in self.last_grads if t is not None])
            self.flops_bwd, self.macs_bwd = cost.seed_count, cost.macs
        return out

    def _unpack(self, xp: Any, g: Any, device: str) -> list[Any]:
        """The packed gradient cut into one gradient per output of forward (zeros for the
        non-differentiable Tensors, None for anything else), as Tensors."""
        wrap = (lambda a: a) if isinstance(g, Tensor) else (lambda a: Tensor._wrap(a, device))
        if not self.many:
            return [wrap(g)]
        grads, start = [], 0
        pieces = iter(self.shapes)
        for o, d in zip(self.outputs, self.diff):
            if d:
                shape = next(pieces)
                size = 1
                for n in shape:
                    size *= n
                grads.append(wrap(g.reshape(shape) if len(self.shapes) == 1 else
                                  g[start:start + size].reshape(shape)))
                start += size
            elif isinstance(o, Tensor):  # PyTorch gives zeros for these (materialize_grads)
                grads.append(Tensor._wrap(xp.zeros(o.shape, dtype=g.dtype), device)
                             if not isinstance(g, Tensor) else g.new_zeros(o.shape))
            else:
                grads.append(None)
        return grads

    def _gradients(self, grads: Any, device: str, as_tensors: bool) -> tuple[Any, ...]:
        """Backward's answer, one entry per argument of forward, as one array per input."""
        if not isinstance(grads, tuple):
            grads = (grads,)
        n = len(self.args)
        if len(grads) < n or any(g is not None for g in grads[n:]):
            raise self.error(f"backward returned {len(grads)} gradients for {n} arguments of "
                             "forward; return one per argument (None where there is none)",
                             ValueError)
        for i, g in enumerate(grads[:n]):
            if g is not None and i not in self.slots:
                raise self.error(f"backward returned a gradient for argument {i}, which is not a "
                                 f"Tensor ({type(self.args[i]).__name__}); return None there",
                                 ValueError)
        picked = []
        for slot in self.slots:
            g = grads[slot]
            if g is not None and not isinstance(g, Tensor):
                raise self.error(f"backward returned a {type(g).__name__} as the gradient of "
                                 f"argument {slot}; return a Tensor (or None)", TypeError)
            if g is not None and g.device != device:
                g = g.to(device)
            picked.append(g)
        self.last_grads = picked
        if as_tensors:
            return tuple(picked)
        return tuple(None if g is None else g._data for g in picked)

    def unpack_outputs(self, packed: Tensor) -> tuple[Any, ...]:
        """Forward's outputs from the op's packed result: each differentiable one a slice of
        it, reshaped (a graph node: its gradient flows into the packed result)."""
        results, start = [], 0
        pieces = iter(self.shapes)
        for o, d in zip(self.outputs, self.diff):
            if not d:
                results.append(o.detach() if isinstance(o, Tensor) else o)
                continue
            shape = next(pieces)
            size = 1
            for n in shape:
                size *= n
            results.append(packed if len(self.shapes) == 1 else
                           packed[start:start + size].reshape(shape))
            start += size
        return tuple(results)

    def forward_flops(self, out: Any, *xs: Any) -> int:
        return self.inner_cost.seed_count

    def backward_flops(self, out: Any, *xs: Any) -> int:
        return 0  # not known before backward runs; backward records its own count

    def macs_of(self, flops: int, flops_bwd: int, out: Any, *xs: Any) -> tuple[int, int]:
        return self.inner_cost.macs, 0


def _inner(counted: bool) -> switch_modes:
    """The modes a Function's body runs in, as plain computation: no graph for gradients,
    the module recorder paused (the Function is one op of the model, not the ops inside it),
    and -- when the Function is counted -- the inner ops' FLOPs recorded to be added up."""
    if counted:
        return switch_modes(grad=False, flops=True, recorder=None)
    return switch_modes(grad=False, recorder=None)


def _cost_of(counted: bool, *tensors: Tensor) -> Cost:
    """What the graph below ``tensors`` cost (nothing when not counted)."""
    total = Cost()
    if counted:
        for t in tensors:
            total = total + t.cost
    return total


def once_differentiable(backward: Any) -> Any:
    """Decorate a Function's ``backward`` that is not made of Lucid operations (it computes
    with NumPy, say): ``create_graph=True`` through it is then a clear error instead of a
    wrong second derivative.  (Put it under ``@staticmethod``, as in PyTorch.)"""
    backward.once_differentiable = True
    return backward


def Variable(data: Any, requires_grad: bool = False, volatile: bool = False) -> Tensor:
    """PyTorch's pre-0.4 wrapper, kept for old programs: Variables and Tensors have been one
    thing since, so this gives a Tensor (``data`` detached; ``requires_grad`` as asked)."""
    t = data.detach() if isinstance(data, Tensor) else Tensor(data)
    t.requires_grad = bool(requires_grad) and not volatile
    return t


class Function:
    """Base class of an operation of your own, PyTorch's way (see the module docstring).

    Subclass it, define the static methods ``forward(ctx, *args)`` and
    ``backward(ctx, grad_output)``, and call ``YourFunction.apply(*args)`` (never ``forward``
    directly: ``apply`` is what records the node in the graph).
    """

    _op: ClassVar[type[_FunctionOp]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # its twin op: named and documented as the Function, so drawings and the stepper say
        # "MyReLU" and show its docstring
        cls._op = type(cls.__name__, (_FunctionOp,), {
            "__doc__": cls.__doc__ or f"{cls.__name__}: a lucid.autograd.Function.",
            "__module__": cls.__module__, "__qualname__": cls.__qualname__, "function": cls})
        cls._op.name = cls.__name__  # set after the class is made: named, not published

    @staticmethod
    def forward(ctx: FunctionCtx, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError("define forward(ctx, *args) as a @staticmethod returning "
                                  "a Tensor")

    @staticmethod
    def setup_context(ctx: FunctionCtx, inputs: tuple[Any, ...], output: Any) -> None:
        """PyTorch 2's other style: define ``forward(*args)`` without ``ctx`` and this method,
        which fills ``ctx`` from the inputs and the output (``ctx.save_for_backward(...)``)."""

    @staticmethod
    def backward(ctx: FunctionCtx, *grad_outputs: Any) -> Any:
        raise NotImplementedError("define backward(ctx, grad_output) as a @staticmethod "
                                  "returning one gradient per argument of forward")

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Tensor:
        """Run ``forward`` on ``args`` and record one graph node whose backward calls
        ``backward``.  Tensor arguments are the node's inputs; other arguments (numbers,
        flags) are passed through and get no gradient."""
        if cls is Function:
            raise TypeError("Function.apply: subclass lucid.autograd.Function and call "
                            "YourFunction.apply(...)")
        if kwargs:
            raise TypeError(f"{cls.__name__}.apply: pass the arguments positionally (as "
                            f"PyTorch's Function.apply), got keywords {sorted(kwargs)}")
        recording = grad_enabled()
        needs = tuple(isinstance(a, Tensor) and a.requires_grad and recording for a in args)
        op = cls._op(args, FunctionCtx(needs))
        tensors = [a for a in args if isinstance(a, Tensor)]
        if not tensors:
            raise TypeError(f"{cls.__name__}.apply: no Tensor among the arguments; a Function "
                            "needs at least one Tensor input")
        packed = apply(op, *tensors)  # the single path every op call takes
        if not op.many:
            return packed
        return op.unpack_outputs(packed)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # PyTorch's old style (MyFunction()(x)) is gone there too
        raise TypeError(f"{type(self).__name__}: call {type(self).__name__}.apply(...) instead "
                        "of making an instance (Functions are used through their static "
                        "methods)")

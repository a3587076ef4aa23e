"""``Tensor.backward``: seed the walk and choose its rules.

The walk itself (``lucid.engine.walk``) sits below the Tensor and knows nothing of the ops; a
backward that records its own graph (``create_graph=True``) runs every rule on Lucid ops
(:class:`~lucid.ops.graph_xp.GraphRules`), so the method that picks the rules lives here, in
the op layer, and is attached to Tensor like every other method.
"""

from __future__ import annotations

from typing import Any

from lucid.backends import get_backend
from lucid.engine.walk import run_backward
from lucid.ops.base import public
from lucid.ops.graph_xp import GraphRules
from lucid.shapes import fmt
from lucid.tensor import Tensor


@public(function=False, method=True)
def backward(
    self: Tensor, grad: Any = None, keep_grad: bool = False, retain_graph: bool | None = None,
    create_graph: bool = False, *, gradient: Any = None,
) -> None:
    """Accumulate d(self)/d(leaf) into every leaf's ``.grad``.

    With no ``grad`` the seed is ones of this tensor's shape (Lucid's semantics: the same
    as ``self.sum().backward()``).  ``keep_grad=True`` keeps intermediate gradients for
    this call; ``retain_graph=True`` keeps the graph for another backward.
    ``create_graph=True`` records the backward pass itself: each ``.grad`` is then a
    Tensor with a graph (differentiate it again: a gradient penalty, a Hessian-vector
    product); the graph is kept (``retain_graph`` defaults to ``create_graph``, as in
    PyTorch).  ``gradient=`` is PyTorch's name for ``grad``.
    """
    if gradient is not None:
        if grad is not None:
            raise TypeError("backward(): got both grad and gradient= (PyTorch's name for "
                            "it); give one of them")
        grad = gradient
    if retain_graph is None:
        retain_graph = create_graph
    if not self.requires_grad:
        raise RuntimeError(
            "backward(): this tensor does not require grad, so no graph was recorded for "
            f"it (shape {fmt(self.shape)}, op {self.op_name}). Create the inputs with "
            "requires_grad=True and run the forward pass outside lucid.no_grad()."
        )
    backend = get_backend(self.device)
    if grad is None:
        seed = backend.xp.ones_like(self._data)
    else:
        seed = grad._data if isinstance(grad, Tensor) else backend.asarray(grad)
        if tuple(seed.shape) != self.shape:
            raise ValueError(
                f"backward(): grad has shape {fmt(tuple(seed.shape))} but the tensor has "
                f"shape {fmt(self.shape)}; they must match."
            )
        if seed.dtype != self._data.dtype:
            seed = seed.astype(self._data.dtype)
    run_backward(self, seed, keep_grad=keep_grad, retain_graph=retain_graph,
                 rules=GraphRules() if create_graph else None)

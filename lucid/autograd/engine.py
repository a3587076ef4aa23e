"""The backward walk: reverse-mode autodiff over the graph of Tensors.

Every Tensor made by an op remembers the op (``_op``) and its inputs (``_prev``).  Backward
from a tensor ``L``:

1. seed ``dL/dL`` (ones of L's shape, unless a gradient is given);
2. order the graph so each node comes after every node that uses it (a topological order,
   built with an explicit stack: a 100,000-op chain must not hit Python's recursion limit);
3. visit each node *once*, in that order.  When a node is reached, every path to it has
   already delivered its contribution, so its gradient is complete:

       dL/dx = sum over children y of  dL/dy * dy/dx

   The node's op turns that gradient into one gradient per input (its local backward rule),
   and each input *adds* it to what it has received so far.

Gradients in flight live in ``Tensor._g``; only leaves (and tensors asked to ``keep_grad``)
keep theirs in ``.grad``, accumulating across backward calls as in PyTorch.  Afterwards each
op drops what it saved for backward ("the graph is released") unless ``retain_graph=True``.
"""

from __future__ import annotations

import gc
from typing import Any

from lucid.backends import BACKENDS, fallback
from lucid.shapes import broadcasts_to, fmt, sum_to


def topological_order(root: Any) -> list[Any]:
    """Nodes that need a gradient, each once, ``root`` first and every node before its inputs.

    Iterative depth-first search.  A node is expanded the first time it is popped (``visited``)
    and emitted after all its inputs (``done`` marker), so shared sub-graphs and an op that
    uses the same input twice (``x * x``) still put each node in the order exactly once.
    """
    order: list[Any] = []
    visited = set()
    stack = [(root, False)]
    push = stack.append
    pop = stack.pop
    while stack:
        node, done = pop()
        if done:
            order.append(node)
            continue
        if node in visited:
            continue
        visited.add(node)
        op = node._op
        if op is not None and op.versions is None:
            raise released_error(node)  # before any gradient has been touched
        push((node, True))
        for parent in node._prev:
            if parent.requires_grad and parent not in visited:
                push((parent, False))
    order.reverse()
    return order


def released_error(node: Any) -> RuntimeError:
    return RuntimeError(
        f"backward through {type(node._op).__name__}: its graph was already released by an "
        "earlier backward(). Pass retain_graph=True to that first backward() if you need to "
        "run backward through the same graph again."
    )


def run_backward(
    root: Any,
    seed: Any,
    keep_grad: bool = False,
    retain_graph: bool = False,
    capture: dict | None = None,
) -> None:
    """Propagate ``seed`` (= dL/droot) to every node below ``root``.

    With ``capture`` (a dict keyed by tensors), the complete gradient of each captured tensor
    is stored there instead of being accumulated into leaves' ``.grad`` (``autograd.grad``).
    """
    # The walk allocates many small objects but never a reference cycle, so Python's cyclic
    # garbage collector has nothing to find here; pausing it keeps its full passes over a large
    # graph from turning a linear walk into a superlinear one.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        _walk(root, seed, keep_grad, retain_graph, capture)
    finally:
        if gc_was_enabled:
            gc.enable()


def _walk(root: Any, seed: Any, keep_grad: bool, retain_graph: bool,
          capture: dict | None) -> None:
    order = topological_order(root)
    root._g = seed
    try:
        for node in order:
            g = node._g
            node._g = None
            if g is None:
                continue
            if node._hooks:
                g = _run_hooks(node, g)
            op = node._op
            if capture is not None:
                if node in capture:
                    capture[node] = g
            elif op is None or keep_grad or node.keep_grad:
                # Leaves keep their gradient in memory of their own: an in-place update of one
                # .grad (clipping, an optimizer) must never change another tensor's.  Gradients
                # passed straight through to a leaf were copied below; views are copied here.
                if node.grad is None:
                    node.grad = BACKENDS[node.device].own(g) if op is None else g
                else:
                    node.grad = node.grad + g
            if op is None:
                continue
            prev = node._prev
            versions = op.versions
            if versions:  # inputs the op saved must still be the values it saw
                for parent, saved in zip(prev, versions):
                    if parent._version != saved:
                        raise _version_error(node, op)
            if op.saves_output and node._version:
                raise _version_error(node, op)
            backend = BACKENDS[node.device]
            if op.wants_final:
                op.final = not retain_graph
            if op.fallback and node.device != "cpu":
                grads = fallback.backward(op, backend, g)
            else:
                grads = op.backward(backend.xp, g)
            if not retain_graph:
                op.release()
            for parent, pg in zip(prev, grads):
                if pg is None or not parent.requires_grad:
                    continue
                if pg is g and parent._op is None:  # passed through (add): not the leaf's own
                    pg = backend.copy(pg)
                pdata = parent.data
                if pg.shape != pdata.shape:
                    pg = _fit_shape(op, pg, parent)
                gd, pd = pg.dtype, pdata.dtype  # read once: MLX makes a new object per read
                if gd is not pd and gd != pd:
                    pg = pg.astype(pd)
                if parent._g is None:
                    parent._g = pg
                else:
                    parent._g = parent._g + pg
    except BaseException:
        for node in order:  # an exception mid-walk must not leave gradients in flight
            node._g = None
        raise


def _run_hooks(node: Any, g: Any) -> Any:
    from lucid.tensor import Tensor  # hooks see Tensors; engine sits below tensor.py

    for hook in list(node._hooks.values()):
        out = hook(Tensor._wrap(g, node.device))
        if out is not None:
            data = out.data if isinstance(out, Tensor) else out
            if tuple(data.shape) != node.shape:
                raise RuntimeError(
                    f"hook {getattr(hook, '__name__', hook)!r} returned a gradient of shape "
                    f"{fmt(tuple(data.shape))} for a tensor of shape {fmt(node.shape)}"
                )
            g = data
    return g


def _version_error(node: Any, op: Any) -> RuntimeError:
    """The error for a value saved at forward time that an in-place op changed since."""
    name = type(op).__name__
    for i, (parent, saved) in enumerate(zip(node._prev, op.versions)):
        if parent._version != saved:
            return RuntimeError(
                f"backward through {name}: input {i} (shape {fmt(parent.shape)}) was modified "
                f"in place after the forward pass (version {saved} at forward, "
                f"{parent._version} now), but {name} saved it for backward. Use an "
                "out-of-place operation (x = x + y) instead of the in-place one."
            )
    return RuntimeError(
        f"backward through {name}: its output (shape {fmt(node.shape)}) was modified in place "
        f"after the forward pass (version 0 at forward, {node._version} now), but {name} "
        "saved it for backward. Use an out-of-place operation instead."
    )


def _fit_shape(op: Any, g: Any, parent: Any) -> Any:
    """Sum a broadcast gradient down to its input's shape; anything else is a bug in a rule."""
    shape = parent.shape
    if op.broadcasts and broadcasts_to(shape, tuple(g.shape)):
        return sum_to(BACKENDS[parent.device].xp, g, shape)
    raise RuntimeError(
        f"{type(op).__name__}.backward returned a gradient of shape {fmt(tuple(g.shape))} for "
        f"an input of shape {fmt(shape)}: the rule is wrong (gradients are never silently "
        "reshaped)"
    )

"""The backward walk: reverse-mode autodiff over the graph of Tensors.

Every Tensor made by an op remembers the op (``_op``) and its inputs (``_prev``); every op
also remembers when it ran (``op.seq``, a number that grows with each recorded op).  Backward
from a tensor ``L``:

1. seed ``dL/dL`` (ones of L's shape, unless a gradient is given);
2. visit the nodes in *reverse order of creation*, each once.  An op can only use tensors
   that existed before it, so every node that consumes ``x`` was created after ``x``: by the
   time ``x`` is reached, all of them have been visited and have delivered their
   contributions.  Its gradient is complete:

       dL/dx = sum over children y of  dL/dy * dy/dx

   The node's op turns that gradient into one gradient per input (its local backward rule),
   and each input *adds* it to what it has received so far.

A node enters the queue the first time a gradient reaches it, so the walk touches only the
part of the graph that leads back from ``L``; the queue is a heap keyed by ``seq`` (latest
first).  No recursion anywhere: a 100,000-op chain is an ordinary loop.  Leaves (tensors no
op made) are visited last, in the order gradients first reached them.

Gradients in flight live in ``Tensor._g``; only leaves (and tensors asked to ``keep_grad``)
keep theirs in ``.grad``, accumulating across backward calls as in PyTorch.  Each op drops what
it saved for backward ("the graph is released") right after its rule has run, unless
``retain_graph=True``.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any

from lucid.backends import BACKENDS, fallback
from lucid.shapes import broadcasts_to, fmt, sum_to


def topological_order(root: Any) -> list[Any]:
    """The nodes :func:`run_backward` visits from ``root``, in the order it visits them.

    ``root`` first, then every node that needs a gradient, latest-created first (so each
    comes after all the nodes that use it), then the leaves in the order gradients first
    reach them.  The same walk as the engine's, without the gradients.
    """
    if root._op is None:
        return [root]
    order: list[Any] = []
    leaves: list[Any] = []
    seen = {root}
    heap = [(-root._op.seq, root)]
    while heap:
        node = heappop(heap)[1]
        order.append(node)
        for parent in node._prev:
            if parent.requires_grad and parent not in seen:
                seen.add(parent)
                if parent._op is None:
                    leaves.append(parent)
                else:
                    heappush(heap, (-parent._op.seq, parent))
    return order + leaves


def released_error(node: Any) -> RuntimeError:
    return RuntimeError(
        f"backward through {type(node._op).__name__}: its graph was already released by an "
        "earlier backward(). Pass retain_graph=True to that first backward() if you need to "
        "run backward through the same graph again."
    )


class PartGrad:
    """dL/dx of an op that reads one part of ``x`` (``x[2:5]``, ``x[t]``): ``g`` inside
    ``x[index]``, zero everywhere else.

    Basic-indexing ops return this instead of a full array of zeros with ``g`` written in, and
    the walk adds ``g`` into place.  A loop that reads ``x[t]`` for every ``t`` (an RNN over
    the time steps of one input projection) then builds one full-size gradient, not one per
    step.  ``index`` selects each element at most once (basic indexing), so adding in place
    is exact.
    """

    __slots__ = ("shape", "dtype", "index", "g")

    def __init__(self, shape: tuple, dtype: Any, index: Any, g: Any) -> None:
        self.shape, self.dtype, self.index, self.g = shape, dtype, index, g

    def dense(self, xp: Any) -> Any:
        """The full gradient: zeros of x's shape with ``g`` in ``x[index]``."""
        dx = xp.zeros(self.shape, dtype=self.dtype)
        dx[self.index] = self.g
        return dx

    def add_to(self, acc: Any) -> Any:
        """``acc`` plus this gradient, written into ``acc`` (which only the walk holds)."""
        acc[self.index] += self.g  # NumPy: in place; MLX: ``acc`` takes the new value
        return acc


class FactoredGrad:
    """dL/dW of a weight used at several steps, kept as its factors: the sum over the steps k
    of g_kᵀ x_k (each g_k (rows, out), each x_k (rows, in)), computed when W's gradient is
    complete as one product of the stacked factors, [g_1; g_2; …]ᵀ [x_1; x_2; …].

    A recurrent layer's W_hh is used at every time step; added up step by step its gradient
    costs T small matrix products and T full-size additions, stacked it costs one large
    product.  An op returns this for such a weight; the walk gathers the factors and hands
    every hook, capture and ``.grad`` the product, an ordinary array.
    """

    __slots__ = ("gs", "xs")

    def __init__(self, g: Any, x: Any) -> None:
        self.gs, self.xs = [g], [x]

    def dense(self, xp: Any) -> Any:
        """The gradient itself: Σ g_kᵀ x_k, one matrix product."""
        if len(self.gs) == 1:
            return xp.matmul(self.gs[0].T, self.xs[0])
        return xp.matmul(xp.concatenate(self.gs).T, xp.concatenate(self.xs))


#: The namespace of Lucid ops that backward rules run on when ``create_graph=True`` (set by
#: ``lucid.ops.graph_xp`` when the op catalogue loads; the engine sits below the ops).
GRAPH_XP: Any = None


def run_backward(
    root: Any,
    seed: Any,
    keep_grad: bool = False,
    retain_graph: bool = False,
    capture: dict | None = None,
    observe: Callable[[Any, tuple], None] | None = None,
    create_graph: bool = False,
) -> None:
    """Propagate ``seed`` (= dL/droot) to every node below ``root``.

    With ``capture`` (a dict keyed by tensors), the complete gradient of each captured tensor
    is stored there instead of being accumulated into leaves' ``.grad`` (``autograd.grad``).
    ``observe(node, grads)``, if given, sees what each node's backward rule returned (one
    gradient per input, before broadcast gradients are summed down): how lucid_viz's stepper
    watches the walk without touching an op.

    ``create_graph=True``: the gradients are Tensors with graphs of their own (so they can be
    differentiated again).  Each rule runs on :data:`GRAPH_XP`, a namespace of Lucid ops, with
    the values it saved recomputed as Tensors -- the same rule serves every order.  The graph
    is kept (as ``retain_graph=True``).
    """
    if root._op is not None and root._op.versions is None:
        raise released_error(root)  # before any gradient has been touched
    if create_graph:
        _walk_graph(root, seed, keep_grad, capture)
        return
    # The walk allocates many small objects but never a reference cycle, so Python's cyclic
    # garbage collector has nothing to find here; pausing it keeps its full passes over a large
    # graph from turning a linear walk into a superlinear one.
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        _walk(root, seed, keep_grad, retain_graph, capture, observe)
    finally:
        if gc_was_enabled:
            gc.enable()


def _walk(root: Any, seed: Any, keep_grad: bool, retain_graph: bool,
          capture: dict | None, observe: Callable[[Any, tuple], None] | None) -> None:
    """Visit every node that leads back from ``root``, each once, latest-created first."""
    heap: list[tuple[int, Any]] = []  # nodes made by ops, keyed by -seq (latest first)
    leaves: list[Any] = []  # nodes no op made, in the order gradients first reached them
    owned: set = set()  # nodes whose gradient array only this walk holds (see _send_part)
    root._g = seed
    if root._op is None:
        leaves.append(root)
    else:
        heap.append((-root._op.seq, root))
    try:
        while heap:
            node = heappop(heap)[1]
            g = _take(node)  # every contribution has arrived: take the sum off the node
            if capture is not None:
                if node in capture:
                    capture[node] = g
            elif keep_grad or node.keep_grad:
                node.grad = g if node.grad is None else node.grad + g
            grads = _local_backward(node, g, retain_graph)  # one gradient per input
            if observe is not None:
                observe(node, _dense(node, grads))
            for parent, pg in zip(node._prev, grads):
                if pg is not None and parent.requires_grad:
                    if type(pg) is PartGrad:
                        _send_part(parent, pg, heap, leaves, owned)
                    elif type(pg) is FactoredGrad:
                        _send_factored(parent, pg, heap, leaves)
                    else:
                        _send(node, parent, pg, g, heap, leaves)
        for leaf in leaves:
            _finish_leaf(leaf, capture)
    except BaseException:
        for _, node in heap:  # an exception mid-walk must not leave gradients in flight
            node._g = None
        for node in leaves:
            node._g = None
        raise


def _walk_graph(root: Any, seed: Any, keep_grad: bool, capture: dict | None) -> None:
    """The walk of :func:`_walk`, with gradients that are Tensors recorded as a graph."""
    gx = GRAPH_XP
    heap: list[tuple[int, Any]] = []
    leaves: list[Any] = []
    with gx.recording():
        root._g = gx.tensor(seed, root.device)
        if root._op is None:
            leaves.append(root)
        else:
            heap.append((-root._op.seq, root))
        try:
            while heap:
                node = heappop(heap)[1]
                g = node._g
                node._g = None
                if node._hooks:
                    raise RuntimeError(
                        f"backward(create_graph=True): a tensor of shape {fmt(node.shape)} has a "
                        "hook; hooks see arrays, not graphs. Remove the hook (handle.remove()) "
                        "or differentiate without create_graph."
                    )
                if capture is not None:
                    if node in capture:
                        capture[node] = g
                elif keep_grad or node.keep_grad:
                    node.grad = g if node.grad is None else node.grad + g
                grads = gx.backward(node, g)  # the node's rule, on Lucid ops
                for parent, pg in zip(node._prev, grads):
                    if pg is None or not parent.requires_grad:
                        continue
                    if pg.shape != parent.shape:
                        if not (node._op.broadcasts and broadcasts_to(parent.shape, pg.shape)):
                            _fit_shape(node._op, pg, parent)  # raises: the rule is wrong
                        pg = sum_to(gx, pg, parent.shape)
                    if pg.dtype != parent.dtype:
                        pg = pg.astype(parent.dtype)
                    if parent._g is None:
                        parent._g = pg
                        if parent._op is None:
                            leaves.append(parent)
                        else:
                            heappush(heap, (-parent._op.seq, parent))
                    else:
                        parent._g = parent._g + pg
            for leaf in leaves:
                g = leaf._g
                leaf._g = None
                if capture is not None:
                    if leaf in capture:
                        capture[leaf] = g
                else:  # a Tensor with its graph, as PyTorch leaves it
                    leaf.grad = g if leaf.grad is None else leaf.grad + g
        except BaseException:
            for _, node in heap:
                node._g = None
            for node in leaves:
                node._g = None
            raise


def _local_backward(node: Any, g: Any, retain_graph: bool) -> tuple[Any, ...]:
    """The node's op turns dL/dnode into one gradient per input (its backward rule), after
    checking that the values it saved are still the ones it saw (an in-place change since the
    forward pass is an error); then it drops them, unless the graph is kept."""
    op = node._op
    versions = op.versions
    if versions:  # the inputs it saved must still hold the values it saw
        saved = node._prev if op.saves_inputs is True else _saved_inputs(node, op)
        for parent, version in zip(saved, versions):
            if parent._version != version:
                raise _version_error(node, op)
    elif versions is None:
        raise released_error(node)
    if op.saves_output and node._version:
        raise _version_error(node, op)
    if op.wants_final:
        op.final = not retain_graph
    backend = BACKENDS[node.device]
    if op.fallback and node.device != "cpu":
        grads = fallback.backward(op, backend, g)
    else:
        grads = op.backward(backend.xp, g)
    if not retain_graph:
        op.release()
    return grads


def _saved_inputs(node: Any, op: Any) -> Any:
    """The inputs whose versions ``op.versions`` holds: those ``saves_inputs`` names."""
    return [node._prev[i] for i in op.saves_inputs]


def _send(node: Any, parent: Any, pg: Any, g: Any, heap: list, leaves: list) -> None:
    """Add ``pg`` (one input's share of dL/dnode) to the gradient ``parent`` has received."""
    if pg is g and parent._op is None:  # passed through (add): not the leaf's own array
        pg = BACKENDS[parent.device].copy(pg)
    pdata = parent.data
    if pg.shape != pdata.shape:
        pg = _fit_shape(node._op, pg, parent)
    gd, pd = pg.dtype, pdata.dtype  # read once: MLX makes a new object per read
    if gd is not pd and gd != pd:
        pg = pg.astype(pd)
    if parent._g is None:  # the first gradient to reach parent: queue it
        parent._g = pg
        if parent._op is None:
            leaves.append(parent)
        else:
            heappush(heap, (-parent._op.seq, parent))
    else:
        acc = parent._g
        if type(acc) is FactoredGrad:
            acc = _product(parent, acc)
        parent._g = acc + pg


def _send_part(parent: Any, pg: PartGrad, heap: list, leaves: list, owned: set) -> None:
    """Add a gradient that lives in one part of ``parent`` into the gradient it has received.

    The first part starts a zero array that the walk owns; later parts are added into it in
    place.  A gradient array that arrived whole may be shared (an add passes the same array to
    both inputs), so it is copied once before anything is written into it."""
    acc = parent._g
    if acc is None:
        parent._g = pg.dense(BACKENDS[parent.device].xp)
        owned.add(parent)
        if parent._op is None:
            leaves.append(parent)
        else:
            heappush(heap, (-parent._op.seq, parent))
        return
    if type(acc) is FactoredGrad:
        acc = _product(parent, acc)  # a fresh array
        owned.add(parent)
    elif parent not in owned:
        acc = BACKENDS[parent.device].copy(acc)
        owned.add(parent)
    parent._g = pg.add_to(acc)


def _send_factored(parent: Any, pg: FactoredGrad, heap: list, leaves: list) -> None:
    """Gather a :class:`FactoredGrad`'s factors into the gradient ``parent`` has received
    (added as an array when an array arrived first)."""
    acc = parent._g
    if acc is None:
        parent._g = FactoredGrad.__new__(FactoredGrad)  # the walk's own lists, not pg's
        parent._g.gs, parent._g.xs = list(pg.gs), list(pg.xs)
        if parent._op is None:
            leaves.append(parent)
        else:
            heappush(heap, (-parent._op.seq, parent))
    elif type(acc) is FactoredGrad:
        acc.gs += pg.gs
        acc.xs += pg.xs
    else:
        parent._g = acc + _product(parent, pg)


def _product(node: Any, pg: FactoredGrad) -> Any:
    """A :class:`FactoredGrad` multiplied out, in ``node``'s dtype."""
    g = pg.dense(BACKENDS[node.device].xp)
    gd, nd = g.dtype, node.data.dtype
    return g if gd is nd or gd == nd else g.astype(nd)


def _dense(node: Any, grads: tuple) -> tuple:
    """``grads`` with every :class:`PartGrad` and :class:`FactoredGrad` written out in full
    (for ``observe``)."""
    xp = BACKENDS[node.device].xp
    return tuple(pg.dense(xp) if type(pg) in (PartGrad, FactoredGrad) else pg for pg in grads)


def _take(node: Any) -> Any:
    """Take ``node``'s complete gradient off it: multiplied out if it arrived as factors, then
    through the node's hooks."""
    g = node._g
    node._g = None
    if type(g) is FactoredGrad:
        g = _product(node, g)
    return _run_hooks(node, g) if node._hooks else g


def _finish_leaf(leaf: Any, capture: dict | None) -> None:
    """Hand a leaf its complete gradient: into ``capture``, or added to ``leaf.grad``."""
    g = _take(leaf)
    if capture is not None:
        if leaf in capture:
            capture[leaf] = g
    elif leaf.grad is None:
        # A leaf keeps its gradient in memory of its own: an in-place update of one .grad
        # (clipping, an optimizer) must never change another tensor's.  Gradients passed
        # straight through to a leaf were copied in _send; views are copied here.
        leaf.grad = BACKENDS[leaf.device].own(g)
    else:
        leaf.grad = leaf.grad + g


def _run_hooks(node: Any, g: Any) -> Any:
    """Each hook sees the gradient (an array: hooks are wrapped when registered, see
    ``Tensor.register_hook``) and may return a replacement."""
    for hook in list(node._hooks.values()):
        out = hook(g)
        if out is not None:
            g = out
    return g


def _version_error(node: Any, op: Any) -> RuntimeError:
    """The error for a value saved at forward time that an in-place op changed since."""
    name = type(op).__name__
    positions = range(len(node._prev)) if op.saves_inputs is True else (op.saves_inputs or ())
    for i, saved in zip(positions, op.versions):
        parent = node._prev[i]
        if parent._version != saved:
            return RuntimeError(
                f"backward through {name}: input {i} ({_named(parent)}) was modified "
                f"in place after the forward pass (version {saved} at forward, "
                f"{parent._version} now), but {name} saved it for backward. Use an "
                "out-of-place operation (x = x + y) instead of the in-place one."
            )
    return RuntimeError(
        f"backward through {name}: its output (shape {fmt(node.shape)}) was modified in place "
        f"after the forward pass (version 0 at forward, {node._version} now), but {name} "
        "saved it for backward. Use an out-of-place operation instead."
    )


def _named(t: Any) -> str:
    """``shape (3, 4)``, or ``'w', shape (3, 4)`` for a named tensor."""
    name = getattr(t, "name", None)
    return f"{name!r}, shape {fmt(t.shape)}" if name is not None else f"shape {fmt(t.shape)}"


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

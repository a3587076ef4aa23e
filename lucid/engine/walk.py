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

Gradients in flight are summed in ``Tensor._g`` (a plain array, until a part or factors
arrive: then a :class:`~lucid.engine.grads.Total`); only leaves (and tensors asked to
``keep_grad``) keep theirs in ``.grad``, accumulating across backward calls as in PyTorch,
and all of them are written when the walk is done (an interrupt leaves every ``.grad`` as it
was).  What differs between a first-order walk (arrays) and one that records its own graph
(``create_graph=True``: Tensors) lives in a *rules* object: :class:`ArrayRules` here,
``GraphRules`` in the ops layer (:func:`run_backward` lists what a rules object does).  What
an op saved for backward is dropped ("the graph is released") right after its rule has run,
unless ``retain_graph=True``.
"""

from __future__ import annotations

import gc
from collections.abc import Callable
from heapq import heappop, heappush
from typing import Any

from lucid.backends import BACKENDS, fallback
from lucid.engine.grads import KINDS, Total
from lucid.shapes import broadcasts_to, fmt, sum_to


def _defer_full_collections() -> None:
    """Let Python's garbage collector rescan a growing graph rarely.

    The collector sorts tracked objects into three generations.  The young two are collected
    every 700 and 7,000 allocations; a *full* pass, over every tracked object, follows every
    10th pass of the middle one, once the objects that survived since the last full pass
    number a quarter of those it kept.  A graph of Tensors is such a survivor (three tracked
    objects a node: the Tensor, its op, its tuple of inputs), and it holds no reference
    cycle, so while a long graph is built each full pass rescans all of it for nothing:
    building and walking a 100,000-op chain cost 1.8-2x per node what a 1,000-op chain
    did, against 1.3x with no full pass.  Lucid asks for a full pass after every 100th pass
    of the middle generation instead of every 10th (about 700,000 allocations: a graph of
    some 200,000 nodes).  The young generations are collected as often as before, garbage
    in cycles still goes (at the latest at the next full pass), and ``gc.collect()``,
    ``gc.disable()`` and a program's own ``gc.set_threshold`` work as ever: Lucid changes
    only Python's default thresholds, once, when it is imported.
    """
    if gc.get_threshold() == (700, 10, 10):
        gc.set_threshold(700, 10, 100)


_defer_full_collections()


def run_backward(
    root: Any,
    seed: Any,
    keep_grad: bool = False,
    retain_graph: bool = False,
    capture: dict | None = None,
    observe: Callable[[Any, tuple], None] | None = None,
    rules: Any = None,
) -> None:
    """Propagate ``seed`` (= dL/droot) to every node below ``root``.

    With ``capture`` (a dict keyed by tensors), the complete gradient of each captured tensor
    is stored there instead of being accumulated into ``.grad`` (``autograd.grad``).
    ``observe(node, grads)``, if given, sees what each node's backward rule returned (one
    gradient per input, before broadcast gradients are summed down): how lucid_viz's stepper
    watches the walk without touching an op.

    ``rules`` says how a node's rule runs and how gradients are added: on arrays
    (:class:`ArrayRules`, the default), or on Lucid ops so that the gradients are Tensors with
    graphs of their own (``create_graph=True``; the ops layer's ``GraphRules``).  Both have
    the same methods: ``seed(root, seed)``; ``backward(node)``, which takes the node's
    complete gradient ``g`` off it and returns ``g`` with its rule's gradient for each input;
    ``send(node, parent, pg, g)``, which adds one of those to what ``parent`` has received;
    ``take(leaf)``; ``keep(node, g)``, the new ``.grad``; and ``with rules:`` around the walk.
    """
    if root._op is not None and root._op.versions is None:
        raise released_error(root)  # before any gradient has been touched
    rules = rules or ArrayRules(retain_graph, observe)
    with rules:
        _deliver(_walk(root, rules.seed(root, seed), rules, keep_grad, capture), rules, capture)


def _walk(root: Any, seed: Any, rules: Any, keep_grad: bool, capture: dict | None) -> list:
    """Visit every node that leads back from ``root``, each once, latest-created first;
    returns (node, dL/dnode) for the nodes whose gradient is wanted (kept or captured)."""
    heap: list = []  # nodes made by ops, keyed by -seq (latest first)
    leaves: list = []  # nodes no op made, in the order gradients first reached them
    wanted: list = []
    backward, send = rules.backward, rules.send
    node = root
    try:
        _enqueue(root, heap, leaves)
        root._g = seed
        while heap:
            order, node = heappop(heap)
            # every contribution has arrived: the sum g, and what the node's rule makes of it
            g, grads = backward(node)  # (one gradient per input)
            if (node in capture) if capture is not None else (keep_grad or node.keep_grad):
                wanted.append((node, g))
            for parent, pg in zip(node._prev, grads):
                if pg is not None and parent.requires_grad:
                    if parent._g is None:  # the first gradient to reach parent: queue it
                        op = parent._op  # (_enqueue, spelled out: once per edge)
                        if op is None:
                            leaves.append(parent)
                        elif -op.seq < order:  # (made after this node, which the heap
                            raise written_after_use(parent, node)  # has given up already)
                        else:
                            heappush(heap, (-op.seq, parent))
                    send(node, parent, pg, g)  # added to what parent has received
        return wanted + [(leaf, rules.take(leaf)) for leaf in leaves]
    except BaseException:  # an exception (Ctrl-C) mid-walk leaves no gradient in flight
        for n in [node] + [n for _, n in heap] + leaves:
            n._g = None
        raise


def written_after_use(parent: Any, node: Any) -> RuntimeError:
    """A node's input was made *after* the node: only an in-place write recorded into a graph
    (``x[i] = v`` makes ``x`` a new node) can do that, after ``x`` had already been used."""
    return RuntimeError(
        f"backward through {type(node._op).__name__}: its input (shape "
        f"{fmt(parent.shape)}) was written in place (x[...] = value) after this op used it, "
        "and its gradient would have to reach the value it had before. Write into a new "
        "tensor (x = x.clone(); x[...] = value), or write before using x."
    )


def _enqueue(node: Any, heap: list, leaves: list) -> None:
    """Queue a node: a leaf in ``leaves``, a node made by an op in the heap.  Its gradient
    (``node._g``) is set right after: a node holding one is always in a list."""
    if node._op is None:
        leaves.append(node)
    else:
        heappush(heap, (-node._op.seq, node))


def _deliver(wanted: list, rules: Any, capture: dict | None) -> None:
    """Hand out the complete gradients: into ``capture``, or into ``.grad`` -- every one or
    none, so that an interrupt (Ctrl-C) never leaves some parameters with a new gradient and
    others without."""
    if capture is not None:
        for node, g in wanted:
            if node in capture:
                capture[node] = g
        return
    new = [(node, rules.keep(node, g)) for node, g in wanted]
    old = [node.grad for node, _ in new]
    try:
        for node, g in new:
            node.grad = g
    except BaseException:
        for (node, _), g in zip(new, old):
            node.grad = g
        raise


class ArrayRules:
    """How the first-order walk runs: each node's rule on the device's arrays, gradients added
    as arrays, hooks applied, the saved values released after use (unless ``retain_graph``)."""

    def __init__(self, retain_graph: bool = False,
                 observe: Callable[[Any, tuple], None] | None = None) -> None:
        self.retain_graph = retain_graph
        self.observe = observe
        self.gc_was_enabled = True

    # ``with rules:`` is how run_backward runs the walk.  The walk allocates many small
    # objects but never a reference cycle, so Python's cyclic garbage collector has nothing
    # to find here; pausing it keeps its full passes over a large graph from turning a
    # linear walk into a superlinear one.  (A user's gc.disable() stays as it was.)
    def __enter__(self) -> None:
        self.gc_was_enabled = gc.isenabled()
        gc.disable()

    def __exit__(self, *exc: object) -> None:
        if self.gc_was_enabled:
            gc.enable()

    def seed(self, root: Any, seed: Any) -> Any:
        return seed

    def take(self, node: Any) -> Any:
        """Take ``node``'s complete gradient off it, through its hooks (a leaf's; a node made
        by an op has its gradient taken by :meth:`backward`)."""
        g, node._g = node._g, None
        if type(g) is Total:  # parts or factors arrived: add them up now
            g = g.value()
        return _run_hooks(node, g) if node._hooks else g

    def backward(self, node: Any) -> tuple:
        """Take ``node``'s complete gradient (as :meth:`take` does), and have its op turn it
        into one gradient per input (its backward rule), after checking that the values it
        saved are still the ones it saw (an in-place change since the forward pass is an
        error); then it drops them, unless the graph is kept."""
        g, node._g = node._g, None  # (take, spelled out: once per node)
        if type(g) is Total:
            g = g.value()
        if node._hooks:
            g = _run_hooks(node, g)
        op = node._op
        if op.versions or op.versions is None or node._version:  # something to check
            _check_saved(node, op)
        if op.wants_final:
            op.final = not self.retain_graph
        backend = BACKENDS[node.device]
        if op.fallback and node.device != "cpu":
            grads = fallback.backward(op, backend, g)
        else:
            grads = op.backward(backend.xp, g)
        if not self.retain_graph:  # release the graph: drop what the op saved for backward
            op.__dict__.clear()  # (a second backward then finds versions None and raises)
            op.versions = None
        if self.observe is not None:
            self.observe(node, _dense(grads, backend.xp))
        return g, grads

    def send(self, node: Any, parent: Any, pg: Any, g: Any) -> None:
        """Add ``pg`` (one input's share of dL/dnode) to ``parent``'s total: summed down to
        its shape where it came back broadcast, in its dtype."""
        if type(pg) in _KINDS:
            return pg.add_to(parent)  # parts and factors are made for their input
        if pg is g and parent._op is None:  # passed through (add): not the leaf's own array
            pg = BACKENDS[parent.device].copy(pg)
        pdata = parent._data
        if pg.shape != pdata.shape:
            pg = _fit_shape(node._op, pg, parent)
        gd, pd = pg.dtype, pdata.dtype  # read once: MLX makes a new object per read
        if gd is not pd and gd != pd:
            pg = pg.astype(pd)
        total = parent._g  # None, an array, or a Total (which adds an array to itself)
        parent._g = pg if total is None else total + pg

    def keep(self, node: Any, g: Any) -> Any:
        """The new ``.grad`` of a node whose gradient is kept."""
        if node.grad is not None:
            return node.grad + g
        # A leaf keeps its gradient in memory of its own: an in-place update of one .grad
        # (clipping, an optimizer) must never change another tensor's.
        return BACKENDS[node.device].own(g) if node._op is None else g


def _dense(grads: tuple, xp: Any) -> tuple:
    """A rule's gradients with parts and factors written out as arrays (what ``observe``
    sees)."""
    return tuple(pg.dense(xp) if isinstance(pg, KINDS) else pg for pg in grads)


# The kinds as a set: ``type(pg) in _KINDS`` is the cheapest test of the many arrays that
# are neither (isinstance walks the array type's bases; a tuple compares each kind).
_KINDS = frozenset(KINDS)


def nodes_below(root: Any, grad_only: bool = False) -> list[Any]:
    """Every node of the graph below ``root`` (``root`` included), once each, every node after
    its inputs (inputs left to right): a depth-first walk, iterative, so a 100,000-op chain
    needs no recursion.  ``grad_only``: only the nodes a gradient reaches (``root`` and the
    inputs that require grad)."""
    order: list[Any] = []
    seen: set[int] = set()
    stack: list[tuple[Any, bool]] = [(root, False)]
    while stack:
        node, inputs_done = stack.pop()
        if inputs_done:
            order.append(node)
        elif id(node) not in seen:
            seen.add(id(node))
            stack.append((node, True))
            for parent in reversed(node._prev):  # reversed: the first input is visited first
                if id(parent) not in seen and (parent.requires_grad or not grad_only):
                    stack.append((parent, False))
    return order


def topological_order(root: Any) -> list[Any]:
    """The nodes :func:`run_backward` visits from ``root``, in the order it visits them:
    ``root`` first, then every node that needs a gradient, latest-created first (so each
    comes after all the nodes that use it), then the leaves in the order gradients first
    reach them."""
    made = sorted((n for n in nodes_below(root, grad_only=True) if n._op is not None),
                  key=lambda n: -n._op.seq)
    if not made:
        return [root]
    leaves = {id(p): p for n in made for p in n._prev if p.requires_grad and p._op is None}
    return made + list(leaves.values())


def released_error(node: Any) -> RuntimeError:
    return RuntimeError(
        f"backward through {type(node._op).__name__}: its graph was already released by an "
        "earlier backward(). Pass retain_graph=True to that first backward() if you need to "
        "run backward through the same graph again."
    )


def _check_saved(node: Any, op: Any) -> None:
    """Raise if what ``op`` saved for its backward is gone (an earlier backward released it)
    or was changed in place since the forward pass: a saved input (the inputs its
    ``versions`` are of) or its output."""
    versions = op.versions
    if versions is None:
        raise released_error(node)
    if node._version and op.saves_output:
        raise _version_error(node, op)
    if not versions:
        return
    saved = node._prev if op.saves_inputs is True else [node._prev[i] for i in op.saves_inputs]
    if len(versions) == 2:  # spelled out: the commonest case (a product, a matmul)
        changed = saved[0]._version != versions[0] or saved[1]._version != versions[1]
    else:
        changed = any(parent._version != version for parent, version in zip(saved, versions))
    if changed:
        raise _version_error(node, op)


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
    if op.broadcasts and broadcasts_to(parent.shape, tuple(g.shape)):
        return sum_to(BACKENDS[parent.device].xp, g, parent.shape)
    raise shape_error(op, g, parent)


def shape_error(op: Any, g: Any, parent: Any) -> RuntimeError:
    """The error for a rule that returned a gradient of the wrong shape."""
    return RuntimeError(
        f"{type(op).__name__}.backward returned a gradient of shape {fmt(tuple(g.shape))} for "
        f"an input of shape {fmt(parent.shape)}: the rule is wrong (gradients are never "
        "silently reshaped)"
    )

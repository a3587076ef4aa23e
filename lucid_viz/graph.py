"""The graph model: a tensor's DAG turned into plain data, once, for every renderer to read.

``trace(y)`` walks ``y._prev`` down to the leaves and records, per node, what a class needs to
see: the op, shape, logical dtype, device, forward and backward FLOPs, activation bytes, and the
node's role (input, parameter, buffer, constant, intermediate, output).  ``trace(model, x)`` also
runs the model and names parameters by their module path and each op by the module call it ran
in (read from the recorder of :func:`lucid.engine.mode.record_ops`, never from hooks).

A recurrent layer's ops also carry the time step that made them (``Node.step``, from the step
marks of the recorder), and an op of a module called several times which call it was
(``Node.call``), so a drawing can cluster each step and roll identical steps up.

Ids are positions in a deterministic walk (``n0`` is a leaf, the output comes last), never
``id()`` or memory addresses, so the same seeded run always gives the same picture.
``Graph.order`` is the backward walk's own order (``lucid.engine.walk.topological_order``),
so a stepper replays exactly what ``backward()`` does.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from lucid.backends import get_backend
from lucid.cost import Cost
from lucid.engine.mode import record_ops
from lucid.engine.recorder import Recorder
from lucid.engine.walk import nodes_below, run_backward, topological_order
from lucid.nn.parameter import Buffer, Parameter
from lucid.tensor import Tensor

__all__ = ["Node", "Edge", "Graph", "Step", "summed_axes", "trace", "trace_model"]


@dataclass(frozen=True)
class Step:
    """The time step of a loop an op ran in, as the layer running the loop marked it
    (:meth:`lucid.engine.recorder.Recorder.begin_step`).

    ``module`` and ``call`` name the module call running the loop (``"lstm"``, its first
    call); ``loop`` which of its loops (``""`` for its only one, ``"layer 1 reverse"``); ``t``
    the time step (the index of the sequence element it reads); ``n`` the step's place in its
    loop, in the order the steps ran (0, 1, ...; a reverse loop runs t = L-1 first).
    """

    module: str
    call: int
    loop: str
    t: int
    n: int


@dataclass(frozen=True)
class Node:
    id: str
    op: str  # the op's class name ("MatMul"); for leaves, the role ("input", "parameter" ...)
    shape: tuple[int, ...]
    dtype: str  # logical dtype name ("Float32")
    device: str
    role: str  # input | parameter | buffer | constant | intermediate | output
    requires_grad: bool
    flops: int | None  # forward count (None when not counted: trace under count_flops)
    flops_bwd: int | None
    bytes: int  # size of the node's value
    name: str | None = None  # the tensor's name: a parameter's path ("fc1.weight"), t.name
    module: str | None = None  # the innermost module call that made it ("layer1.0.conv1"),
    # as the module recorder stamped the op; "" is the model's own forward, None: no model
    macs: int = 0  # how many of ``flops`` / ``flops_bwd`` are multiply-adds (lucid.cost)
    macs_bwd: int = 0
    call: int = 0  # which call of ``module`` made it: 1 for the first, ... (0: not recorded)
    step: Step | None = None  # the time step of a loop that made it (a recurrent layer's)
    # a collective (an op that ``communicates``): what it moves, in words, and the bytes this
    # process sends forward and backward (recorded under count_flops)
    traffic: str | None = None
    bytes_sent: int = 0
    bytes_sent_bwd: int = 0

    def cost(self, backward: bool = False) -> Cost | None:
        """The node's forward (or backward) count as MACs and FLOPs (and bytes sent, for a
        collective); None if not counted."""
        total = self.flops_bwd if backward else self.flops
        if total is None:
            return None
        macs = self.macs_bwd if backward else self.macs
        return Cost(macs, total - macs, self.bytes_sent_bwd if backward else self.bytes_sent)

    @property
    def is_leaf(self) -> bool:
        return self.role in ("input", "parameter", "buffer", "constant")

    @property
    def title(self) -> str:
        """What pictures and tables call the node, so the two always agree: its name when it
        has one (``w``, ``fc1.weight``), else what it is and its id (``input n0``,
        ``Mul n2``)."""
        if self.name is not None:
            return self.name
        return f"{self.op} {self.id}"


@dataclass(frozen=True)
class Edge:
    src: str  # the input
    dst: str  # the node computed from it
    index: int  # which input of dst (an op may use one tensor twice: x * x)
    #: the input was broadcast to dst's shape, so in backward its gradient is summed over
    #: these axes of dst's shape (then reshaped to the input's shape); () when not broadcast
    summed: tuple[int, ...] = ()

    @property
    def broadcast(self) -> bool:
        return bool(self.summed)


def summed_axes(in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> tuple[int, ...]:
    """The axes of ``out_shape`` a gradient is summed over to come back to ``in_shape`` (the
    leading axes broadcasting added, and the axes where the input had size 1)."""
    lead = len(out_shape) - len(in_shape)
    return tuple(range(lead)) + tuple(
        lead + i for i, d in enumerate(in_shape) if d == 1 and out_shape[lead + i] != 1)


@dataclass
class Graph:
    nodes: list[Node]
    edges: list[Edge]
    order: list[str]  # backward order: the output first, each node before its inputs
    output: str
    #: what a picture's title adds about the graph ("output[0] of the 2 the model returned")
    note: str = ""
    _tensors: dict[str, Tensor] = field(default_factory=dict, repr=False, compare=False)

    def node(self, node_id: str) -> Node:
        return self._by_id[node_id]

    def tensor(self, node_id: str) -> Tensor:
        """The live tensor behind a node (for steppers that show gradient values)."""
        return self._tensors[node_id]

    @property
    def _by_id(self) -> dict[str, Node]:
        cache = self.__dict__.get("_index")
        if cache is None:
            cache = self.__dict__["_index"] = {n.id: n for n in self.nodes}
        return cache

    def grads(self) -> dict[str, Any]:
        """dL/dnode for every node that has one, as backend arrays: a tensor's ``.grad`` when
        it kept one (leaves after ``backward()``, every node after
        ``backward(keep_grad=True)``); otherwise, while the graph is still alive, from one
        backward walk of the output that writes no ``.grad`` (seed: ones)."""
        found = {nid: t.grad for nid, t in self._tensors.items() if t.grad is not None}
        root = self._tensors.get(self.output)
        missing = [nid for nid in self.order if nid not in found]
        if missing and root is not None and (root._op is None or root._op.versions is not None):
            capture = {self._tensors[nid]: None for nid in missing}
            run_backward(root, get_backend(root.device).xp.ones_like(root.data),
                         retain_graph=True, capture=capture)
            ids = {id(t): nid for nid, t in self._tensors.items()}
            found.update({ids[id(t)]: g for t, g in capture.items() if g is not None})
        return found

    def inputs_of(self, node_id: str) -> list[str]:
        return [e.src for e in sorted((e for e in self.edges if e.dst == node_id),
                                      key=lambda e: e.index)]

    @property
    def total_flops(self) -> int:
        """Lucid's single number: every op's count added as it is (see :meth:`cost`)."""
        return sum(n.flops or 0 for n in self.nodes)

    @property
    def total_flops_bwd(self) -> int:
        return sum(n.flops_bwd or 0 for n in self.nodes)

    def cost(self, backward: bool = False) -> Cost:
        """The graph's forward (or backward) count, MACs and FLOPs apart."""
        total = Cost()
        for n in self.nodes:
            c = n.cost(backward)
            if c is not None:
                total = total + c
        return total


def _nbytes(t: Tensor) -> int:
    data = t.data
    nbytes = getattr(data, "nbytes", None)
    return int(nbytes) if nbytes is not None else t.size * t.dtype.cpu.itemsize


def trace(target: Any, *inputs: Any) -> Graph:
    """The graph below a tensor, or the graph of ``model(*inputs)``.

    ``trace(y)`` reads the graph ``y`` already has (record it with ``requires_grad`` inputs or
    inside ``lucid.count_flops()``; FLOPs appear when it was counted).  ``trace(model, x)`` runs
    the model once with FLOPs counting on and names parameters, buffers and layers.  A model
    that returns a tuple (``nn.LSTM`` returns ``(output, (h_n, c_n))``) is traced from its
    first item, and the graph's ``note`` says so.
    """
    if isinstance(target, Tensor):
        if inputs:
            raise TypeError("trace(tensor) takes no inputs; use trace(model, *inputs)")
        return _build(target, names={})
    graph, _ = trace_model(target, *inputs)
    return graph


def trace_model(model: Any, *inputs: Any) -> tuple[Graph, dict[str, str]]:
    """``trace(model, *inputs)`` and the class name of every module path that ran ("" is the
    model itself), from one recorded run (:func:`lucid.engine.mode.record_ops`)."""
    if not callable(model):
        raise TypeError(f"trace: expected a Tensor or a model, got {type(model).__name__}")
    names: dict[int, tuple[str, str]] = {}
    for name, p in getattr(model, "named_parameters", lambda: [])():
        names[id(p)] = ("parameter", name)
    for name, b in getattr(model, "named_buffers", lambda: [])():
        names[id(b)] = ("buffer", name)
    # the model is "" (its layers are "fc1", ...); a module a plain function calls is named
    # by its class ("LSTMCell"), not "" as well
    with record_ops(root_name=lambda m: "" if m is model else type(m).__name__) as rec:
        out = model(*inputs)
    note = ""
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], Tensor):
        note = f"the graph of output[0] of the {len(out)} values the model returned"
        out = out[0]
    if not isinstance(out, Tensor):
        raise TypeError(f"trace: the model returned {type(out).__name__}, not a Tensor "
                        "(or a tuple that starts with one)")
    types: dict[str, str] = {}
    for call in rec.calls:
        types.setdefault(call.path, type(call.module).__name__)
    graph = _build(out, names=names, marks=_marks(rec))
    graph.note = note
    return graph, types


def _marks(rec: Recorder) -> dict[int, tuple[int, Step | None]]:
    """id(op result) -> (which call of its module made it, its time step), from the record.

    Calls and steps each cover a stretch of the tape, nested; an op belongs to the innermost
    of each (the latest one to start that covers it)."""
    n_ops = len(rec.ops)
    call_of: list[int | None] = [None] * n_ops
    for i, call in enumerate(rec.calls):
        stop = n_ops if call.stop is None else call.stop
        call_of[call.start:stop] = [i] * (stop - call.start)
    seen: dict[str, int] = {}
    number: list[int] = []  # call index -> which call of its path it is (1, 2, ...)
    for call in rec.calls:
        seen[call.path] = seen.get(call.path, 0) + 1
        number.append(seen[call.path])
    step_of: list[Step | None] = [None] * n_ops
    runs: dict[tuple[int | None, str], int] = {}  # (call, loop) -> steps marked so far
    for mark in rec.steps:
        key = (mark.call, mark.loop)
        runs[key] = runs.get(key, -1) + 1
        owner = rec.calls[mark.call] if mark.call is not None else None
        step = Step(owner.path if owner else "", number[mark.call] if owner else 0, mark.loop,
                    mark.t, runs[key])
        stop = n_ops if mark.stop is None else mark.stop
        step_of[mark.start:stop] = [step] * (stop - mark.start)
    return {id(t): (0 if call_of[i] is None else number[call_of[i]], step_of[i])
            for i, t in enumerate(rec.ops)}


def _traffic(op: Any) -> dict[str, Any]:
    """What a collective moves: its own words (``op.traffic()``) and the bytes it sent."""
    words = op.traffic() if hasattr(op, "traffic") else type(op).__name__
    return {"traffic": words, "bytes_sent": getattr(op, "bytes_sent", 0),
            "bytes_sent_bwd": getattr(op, "bytes_sent_bwd", 0)}


def _build(root: Tensor, names: dict[int, tuple[str, str]],
           marks: dict[int, tuple[int, Step | None]] | None = None) -> Graph:
    tensors = nodes_below(root)
    ids = {id(t): f"n{i}" for i, t in enumerate(tensors)}
    nodes: list[Node] = []
    edges: list[Edge] = []
    by_id: dict[str, Tensor] = {}
    for t in tensors:
        nid = ids[id(t)]
        by_id[nid] = t
        op = t._op
        known = names.get(id(t))
        call, step = (marks or {}).get(id(t), (0, None))
        if t is root and op is not None:
            role = "output"
        elif op is not None:
            role = "intermediate"
        elif known is not None:
            role = known[0]
        elif isinstance(t, Parameter):  # unnamed: trace(tensor) has no model to name it by
            role = "parameter"
        elif isinstance(t, Buffer):
            role = "buffer"
        elif t._free and not t.requires_grad:
            role = "constant"
        else:
            role = "input"
        nodes.append(Node(
            id=nid,
            op=type(op).__name__ if op is not None else role,
            shape=t.shape,
            dtype=t.dtype.name,
            device=t.device,
            role=role,
            requires_grad=t.requires_grad,
            flops=getattr(op, "flops", None) if op is not None else None,
            flops_bwd=getattr(op, "flops_bwd", None) if op is not None else None,
            bytes=_nbytes(t),
            name=known[1] if known else t.name,
            module=getattr(op, "module", None) if op is not None else None,
            macs=getattr(op, "macs", 0) if op is not None else 0,
            macs_bwd=getattr(op, "macs_bwd", 0) if op is not None else 0,
            call=call,
            step=step,
            **(_traffic(op) if op is not None and op.communicates else {}),
        ))
        for k, parent in enumerate(t._prev):
            summed = ()
            if op.broadcasts and parent.shape != t.shape and parent.requires_grad:
                summed = summed_axes(parent.shape, t.shape)
            edges.append(Edge(ids[id(parent)], nid, k, summed))
    order = [ids[id(t)] for t in topological_order(root)] if root.requires_grad else []
    return Graph(nodes, edges, order, ids[id(root)], _tensors=by_id)

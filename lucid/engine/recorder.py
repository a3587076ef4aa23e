"""The module recorder: which module call produced each op.

While a :class:`Recorder` is on (``with lucid.autograd.record_ops(...) as rec:``), every op
result is appended to ``rec.ops`` in execution order -- the *tape* -- and every module call
to ``rec.calls``: the module, its dotted path ("layer1.0.conv1"), the call it ran inside, its
inputs and output, and which stretch of the tape it covers.  Each recorded op is stamped with
the path of the innermost module call running when it was made (``op.module``).

``Module.__call__`` tells the recorder when a call starts and ends; the dispatcher hands it each
op.  Per-layer tables (``summarize``), the drawings of ``lucid_viz`` and the ``%lucid_flops``
magic all read this one record -- nothing patches a class or installs hooks to find out.

A layer that loops over time (``nn.LSTM``) also marks its time steps, so that a drawing can
show one cluster per step and roll the identical steps up ("step × 32")::

    rec = recording()            # read once: with no recorder on, the loop pays one test a step
    for t in range(steps):
        if rec is not None:
            rec.begin_step(t)    # the ops made from here on are step t ...
        h = cell(x[t], h)
    if rec is not None:
        rec.end_step()           # ... until the next mark, or the end of the loop

The marks go to ``rec.steps``, one :class:`StepMark` per step, each covering a stretch of the
tape, like a module call.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

__all__ = ["ModuleCall", "Recorder", "StepMark"]


@dataclass
class ModuleCall:
    """One call of a module while recording.

    ``recorder.ops[start:stop]`` are the ops it ran (its inner calls' included); ``parent`` is
    the index in ``recorder.calls`` of the call it ran inside (None for an outermost call).
    """

    module: Any
    path: str
    parent: int | None
    inputs: tuple
    start: int
    stop: int | None = None  # None while the call runs
    output: Any = None


@dataclass
class StepMark:
    """One time step of a loop, as the layer running the loop marked it.

    ``recorder.ops[start:stop]`` are the ops of the step (the calls it made included);
    ``call`` is the index in ``recorder.calls`` of the module call running the loop (None for
    a loop outside every call); ``loop`` names the loop among the call's loops ("" for its
    only one, "layer 1 reverse"); ``t`` is the time step, the index of the sequence element
    the step reads (a reverse loop marks t = L-1 first).
    """

    call: int | None
    loop: str
    t: int
    start: int
    stop: int | None = None  # None while the step runs


class Recorder:
    """The tape of op results and the list of module calls of one recording.

    ``root_name(module)`` names an outermost call ("" by default, so the layers of a model
    are "fc1", "layer1.0" ...; the magic passes the notebook variable's name).  A call inside
    it is named by the root's ``named_modules()``; a module that is not registered under the
    root (made on the fly) by its class, below the call it ran in.
    """

    def __init__(self, root_name: Callable[[Any], str] | None = None) -> None:
        self.ops: list[Any] = []
        self.calls: list[ModuleCall] = []
        self.steps: list[StepMark] = []
        self._open: list[int] = []  # indices of the calls running now, innermost last
        self._open_steps: list[int] = []  # indices of the steps running now, innermost last
        self._root_name = root_name or (lambda module: "")
        self._names: dict[int, dict[int, str]] = {}  # root call -> {id(module): its name}

    @property
    def path(self) -> str | None:
        """The path of the innermost module call running now (None outside every call)."""
        return self.calls[self._open[-1]].path if self._open else None

    def record(self, out: Any) -> None:
        """An op just made ``out``: put it on the tape, stamped with the running module."""
        self.ops.append(out)
        out._op.module = self.path

    def enter(self, module: Any, inputs: tuple) -> int:
        """A module call starts; returns its index for :meth:`exit`."""
        parent = self._open[-1] if self._open else None
        self.calls.append(ModuleCall(module, self._path_of(module, parent), parent, inputs,
                                     len(self.ops)))
        index = len(self.calls) - 1
        self._open.append(index)
        return index

    def exit(self, index: int, output: Any) -> None:
        """The call ``index`` returned ``output`` (None when it raised)."""
        call = self.calls[index]
        call.stop = len(self.ops)
        call.output = output
        while self._open and self._open.pop() != index:
            pass  # (an inner call that raised was closed by its own exit already)
        while self._open_steps and _at_or_in(self.steps[self._open_steps[-1]].call, index):
            self._close_step()  # a loop left unfinished (it raised) ends with its call

    def begin_step(self, t: int, loop: str = "") -> None:
        """The running module call's loop ``loop`` starts time step ``t``: the ops made from
        now on belong to it, until the next :meth:`begin_step` of this call, its
        :meth:`end_step`, or the end of the call."""
        call = self._open[-1] if self._open else None
        if self._open_steps and self.steps[self._open_steps[-1]].call == call:
            self._close_step()  # the previous step of this call's loop
        self.steps.append(StepMark(call, loop, t, len(self.ops)))
        self._open_steps.append(len(self.steps) - 1)

    def end_step(self) -> None:
        """The running module call's loop is over: its last step ends here."""
        call = self._open[-1] if self._open else None
        if self._open_steps and self.steps[self._open_steps[-1]].call == call:
            self._close_step()

    def _close_step(self) -> None:
        self.steps[self._open_steps.pop()].stop = len(self.ops)

    def _path_of(self, module: Any, parent: int | None) -> str:
        if parent is None:
            return self._root_name(module)
        root = parent
        while self.calls[root].parent is not None:
            root = self.calls[root].parent
        names = self._names.get(root)
        if names is None:
            named = getattr(self.calls[root].module, "named_modules", lambda: [])()
            names = self._names[root] = {id(m): n for n, m in named}
        name = names.get(id(module))
        base = self.calls[root].path if name else self.calls[parent].path
        name = name or type(module).__name__
        return f"{base}.{name}" if base else name


def _at_or_in(call: int | None, index: int) -> bool:
    """A step of the call ``call`` ends when the call ``index`` does: it is that call or one
    it made (calls are numbered in the order they start, so those made by it come after)."""
    return call is not None and call >= index

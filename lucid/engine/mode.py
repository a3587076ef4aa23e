"""The switches the dispatcher reads on every op: grad mode and FLOPs counting.

They are attributes of one small object, ``MODE``, and they are *per thread*, as in
PyTorch: ``no_grad()`` in one thread leaves another thread's backward pass alone.  Each
thread starts with grad on and counting off.  The dispatcher's hot path reads one of them,
``MODE.fast``: True while grad is on, counting is off and no mode block is open -- the
training loop -- and otherwise it probes the innermost open block (see below).

Ctrl-C and the end of a ``with`` block
--------------------------------------
``with lucid.no_grad(): ...`` must give grad mode back when the block ends, however it ends.
A ``__exit__`` written in Python cannot promise that: a KeyboardInterrupt can land on its
first line, before the mode is put back, and the thread would stay in no-grad mode for good
(the next ``loss.backward()`` finds nothing recorded).  No ``try``/``finally`` inside
``__exit__`` helps, since the interrupt can land before the ``try`` itself.

So the end of a block runs no Python at all.  The ``with`` statement's exit is a C callable:
the block's lock's own ``__exit__`` (which releases it), wrapped in a ``functools.partial``
that the block watches through a weak reference.  The statement keeps that exit on its
frame's stack while the block is open and drops it when the block ends -- after calling
it, or when the frame unwinds without calling it -- so "the block is open" is simply "its
exit is still alive".  The modes are put back a moment later, by :func:`settle`, which every
reader of the modes calls first while a block is open (the dispatcher only when the
innermost block's probe, a weak-reference call, says it has ended).
"""

from __future__ import annotations

import _thread
import functools
import opcode
import sys
import threading
import weakref
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from lucid.engine.recorder import Recorder

F = TypeVar("F", bound=Callable[..., Any])


class _Mode(threading.local):
    """One set of switches per thread (``__init__`` runs in each thread on first use)."""

    def __init__(self) -> None:
        self.grad = True  # record graphs for autograd
        self.flops = False  # record each op's FLOPs (and keep the graph even without grad)
        self.recorder: Recorder | None = None  # the module recorder, while one is on
        self.blocks: list[_Block] = []  # the mode blocks open in this thread, outermost first
        self.fast = True  # grad on, counting off, no block open: nothing to ask
        self.probe: Callable[[], Any] | None = None  # the innermost block's probe


MODE = _Mode()


class _Block:
    """One open ``with`` block of a mode switch: the modes to put back when it ends, a lock
    held while it is open, and ``probe()``, falsy once the block has ended."""

    __slots__ = ("switch", "lock", "before", "probe", "watched")

    def __init__(self, switch: _Switch, before: tuple[bool, bool, Recorder | None]) -> None:
        self.switch = switch
        self.lock = _thread.allocate_lock()
        self.before = before
        # Entered by hand (``cm.__enter__()``): open while the lock is held.  Entered by a
        # ``with`` statement: open while the statement's exit lives (see _Exit).
        self.probe: Callable[[], Any] = self.lock.locked
        self.watched = False  # True once a with statement holds its exit

    def opening(self) -> bool:
        """Its with statement looked ``__exit__`` up but has not entered it yet."""
        return self.watched and not self.lock.locked() and self.probe() is not None


def _publish() -> None:
    """Set what the dispatcher reads from the switches and the open blocks."""
    blocks = MODE.blocks
    MODE.probe = blocks[-1].probe if blocks else None
    MODE.fast = MODE.grad and not MODE.flops and not blocks


def settle() -> None:
    """Put back the modes saved by the outermost block that has ended, and forget it with
    every block opened inside it (those have ended too, or were never entered)."""
    blocks = MODE.blocks
    for i, block in enumerate(blocks):
        if not block.probe():
            MODE.grad, MODE.flops, MODE.recorder = block.before
            del blocks[i:]  # (an interrupt before this line: the next settle does it again)
            break
    _publish()


def grad_enabled() -> bool:
    """True when operations record a graph for backward."""
    if MODE.blocks:
        settle()
    return MODE.grad


def flops_enabled() -> bool:
    """True inside ``lucid.count_flops()``."""
    if MODE.blocks:
        settle()
    return MODE.flops


def recording() -> Recorder | None:
    """The module recorder of :func:`record_ops`, while one is on (else None)."""
    return MODE.recorder if flops_enabled() else None  # a recorder always counts FLOPs


class _Enter:
    """``__enter__`` of a mode switch.  Looked up by the ``with`` statement before it runs
    the block, it opens the block -- saves the modes, switches them -- and hands back the
    block's C ``lock.acquire`` for the statement to call: from then on only C runs until the
    block's body starts, so no interrupt can fall between the switch and the lock."""

    def __get__(self, switch: _Switch | None, owner: type | None = None) -> Any:
        if switch is None:  # type(cm).__enter__(cm), as contextlib.ExitStack calls it
            return lambda cm: cm._open().lock.acquire()
        block = switch._innermost()
        if block is None or not block.opening():
            block = switch._open()
        return block.lock.acquire


class _Exit:
    """``__exit__`` of a mode switch: the block's lock's own ``__exit__`` (C), which releases
    it, wrapped in a (C) ``partial`` that the block watches.  The modes are put back by the
    next :func:`settle`."""

    def __get__(self, switch: _Switch | None, owner: type | None = None) -> Any:
        if switch is None:  # type(cm).__exit__(cm, *exc), as contextlib.ExitStack calls it
            return lambda cm, *exc: cm._entered().lock.release()
        block = switch._innermost()
        if block is None or block.watched:  # Python 3.14 looks __exit__ up first: a new block
            block = switch._open()
        exit = functools.partial(block.lock.__exit__)
        block.probe, block.watched = weakref.ref(exit), True  # alive: the exit; dropped: None
        _publish()
        return exit


class _Switch:
    """A context manager that sets some modes for the length of a ``with`` block, then puts
    the previous ones back (see the module's docstring for how)."""

    __enter__ = _Enter()
    __exit__ = _Exit()

    def _switch(self) -> None:
        """Set this switch's modes (the block is already open)."""
        raise NotImplementedError

    def _before(self) -> tuple[bool, bool, Recorder | None]:
        """The modes the block puts back when it ends."""
        return MODE.grad, MODE.flops, MODE.recorder

    def _open(self) -> _Block:
        settle()  # first put back the modes of blocks that have ended
        block = _Block(self, self._before())
        MODE.blocks.append(block)
        _publish()  # ops probe the block from now on
        self._switch()  # (an interrupt before the lock is taken: the block counts as ended)
        return block

    def _innermost(self) -> _Block | None:
        """This switch's innermost block in this thread (a switch may be re-entered)."""
        for block in reversed(MODE.blocks):
            if block.switch is self:
                return block
        return None

    def _entered(self) -> _Block:
        block = self._innermost()
        if block is None:
            raise RuntimeError(f"{type(self).__name__}: __exit__ without __enter__ in this "
                               "thread")
        return block


class switch_modes(_Switch):  # noqa: N801 -- used like a function
    """``with switch_modes(grad=False, recorder=None): ...``: the given modes for the block
    (those not given are left as they are)."""

    _KEEP: Any = object()

    def __init__(self, grad: Any = _KEEP, flops: Any = _KEEP, recorder: Any = _KEEP) -> None:
        self.modes = {name: value for name, value in
                      (("grad", grad), ("flops", flops), ("recorder", recorder))
                      if value is not self._KEEP}

    def _switch(self) -> None:
        for name, value in self.modes.items():
            setattr(MODE, name, value)


class _GradMode(_Switch):
    """Context manager *and* decorator that sets grad mode, restoring the previous one."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def _switch(self) -> None:
        MODE.grad = self.enabled

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                with _GradMode(self.enabled):
                    return fn(*args, **kwargs)
            finally:
                settle()  # put the mode back now rather than at the next op

        return wrapper  # type: ignore[return-value]


def _mode_or_decorated(enabled: bool, fn: Any) -> Any:
    if fn is None:
        return _GradMode(enabled)
    if not callable(fn):
        name = "no_grad" if not enabled else "enable_grad"
        raise TypeError(
            f"{name}() takes no arguments, got {fn!r}; use `with lucid.{name}():` or decorate "
            f"a function with @lucid.{name}"
        )
    return _GradMode(enabled)(fn)


def no_grad(fn: Any = None) -> Any:
    """Disable graph recording: ``with lucid.no_grad(): ...``, ``@lucid.no_grad()`` or
    ``@lucid.no_grad`` (as PyTorch allows both decorator spellings).

    Nothing is recorded inside (zero cost): results have ``requires_grad=False`` and no
    ``_op``/``_prev`` -- unless FLOPs counting is on, which keeps the graph to count it.
    """
    return _mode_or_decorated(False, fn)


def enable_grad(fn: Any = None) -> Any:
    """Re-enable graph recording inside a ``no_grad`` block (a context manager, or a
    decorator with or without parentheses)."""
    return _mode_or_decorated(True, fn)


def inference_mode(mode: Any = True) -> Any:
    """PyTorch's ``inference_mode``: the same as :func:`no_grad` in Lucid (a context manager
    or a decorator, with or without parentheses); ``inference_mode(False)`` records."""
    if callable(mode):
        return _GradMode(False)(mode)
    return _GradMode(not mode)


class set_grad_enabled(_GradMode):  # noqa: N801 -- PyTorch's name
    """``lucid.set_grad_enabled(False)``: switch graph recording off (or on) *now*, for this
    thread, as PyTorch's call does; used in ``with``, it restores the previous mode on exit
    (and as a decorator it sets the mode for each call)."""

    def __init__(self, enabled: bool) -> None:
        super().__init__(bool(enabled))
        self.previous = grad_enabled()
        # ``with set_grad_enabled(False):`` switches when the block opens, like no_grad():
        # switched here, an interrupt before the block opened would leave it switched.
        if not _opens_a_with(sys._getframe(1)):
            MODE.grad = self.enabled
            _publish()

    def _before(self) -> tuple[bool, bool, Recorder | None]:
        return self.previous, MODE.flops, MODE.recorder  # the mode before the call

    def __call__(self, fn: F) -> F:
        MODE.grad = self.previous  # decorating does not switch the mode itself
        _publish()
        return _GradMode(self.enabled)(fn)


#: the instructions that open a ``with`` block (3.10: SETUP_WITH; 3.11-3.13: BEFORE_WITH)
_WITH_OPCODES = {opcode.opmap[name] for name in ("SETUP_WITH", "BEFORE_WITH")
                 if name in opcode.opmap}
_CACHE = opcode.opmap.get("CACHE")


def _opens_a_with(frame: Any) -> bool:
    """Whether the call ``frame`` is making is a ``with`` statement's context expression:
    the caller's next instruction (after the call's inline caches) opens the block."""
    code, i = frame.f_code.co_code, frame.f_lasti + 2
    while i < len(code) and code[i] == _CACHE:
        i += 2
    return i < len(code) and code[i] in _WITH_OPCODES


class count_flops(_Switch):  # noqa: N801 -- used like a function
    """Record FLOPs for every op run inside the block; read them with ``tensor.flops``.

    Nests and restores the previous state.  While on, the graph is kept even under
    ``no_grad`` so inference FLOPs can be summed.  Off (the default) it costs nothing.
    """

    def _switch(self) -> None:
        MODE.flops = True


@contextmanager
def record_ops(root_name: Callable[[Any], str] | None = None) -> Iterator[Recorder]:
    """Count FLOPs and record every op and every module call: yields the
    :class:`~lucid.engine.recorder.Recorder` (``rec.ops``, ``rec.calls``; each op's
    ``op.module`` is the path of the module call that made it).

    Per-layer reports read it: ``summarize``, ``lucid_viz.trace``/``draw``, ``%lucid_flops``.
    """
    recorder = Recorder(root_name)
    with switch_modes(flops=True, recorder=recorder):
        yield recorder

"""The switches the dispatcher reads on every op: grad mode and FLOPs counting.

Both are attributes of one small object, ``MODE``, so the hot path pays one attribute read
each.  They are *per thread*, as in PyTorch: ``no_grad()`` in one thread leaves another
thread's backward pass alone.  Each thread starts with grad on and counting off.
"""

from __future__ import annotations

import functools
import threading
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
        self.saved: list[bool] = []  # grad modes to restore, innermost last


MODE = _Mode()


def grad_enabled() -> bool:
    """True when operations record a graph for backward."""
    return MODE.grad


class _GradMode:
    """Context manager *and* decorator that sets grad mode, restoring the previous one."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    # The mode to restore is kept per thread (one manager object may be entered by several
    # threads at once); ``with`` blocks nest within a thread, so a stack suffices.
    def __enter__(self) -> None:
        MODE.saved.append(MODE.grad)
        MODE.grad = self.enabled

    def __exit__(self, *exc: object) -> None:
        MODE.grad = MODE.saved.pop()

    def __call__(self, fn: F) -> F:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            depth, grad = len(MODE.saved), MODE.grad
            try:
                with _GradMode(self.enabled):
                    return fn(*args, **kwargs)
            finally:
                # A Ctrl-C that lands inside __enter__ or __exit__ themselves (between the
                # push and the switch, or before the restore) must not leave the thread in
                # this mode: put back exactly the state the call started from.
                del MODE.saved[depth:]
                MODE.grad = grad

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
        self.previous = MODE.grad
        MODE.grad = self.enabled

    def __enter__(self) -> None:
        MODE.saved.append(self.previous)

    def __exit__(self, *exc: object) -> None:
        MODE.grad = MODE.saved.pop()

    def __call__(self, fn: F) -> F:
        MODE.grad = self.previous  # decorating does not switch the mode itself
        return _GradMode(self.enabled)(fn)


@contextmanager
def count_flops() -> Iterator[None]:
    """Record FLOPs for every op run inside the block; read them with ``tensor.flops``.

    Nests and restores the previous state.  While on, the graph is kept even under
    ``no_grad`` so inference FLOPs can be summed.  Off (the default) it costs nothing.
    """
    prev = MODE.flops
    try:  # switched inside the try: an interrupt right after the switch still restores it
        MODE.flops = True
        yield
    finally:
        MODE.flops = prev


@contextmanager
def record_ops(root_name: Callable[[Any], str] | None = None) -> Iterator[Recorder]:
    """Count FLOPs and record every op and every module call: yields the
    :class:`~lucid.engine.recorder.Recorder` (``rec.ops``, ``rec.calls``; each op's
    ``op.module`` is the path of the module call that made it).

    Per-layer reports read it: ``summarize``, ``lucid_viz.trace``/``draw``, ``%lucid_flops``.
    """
    prev = MODE.recorder
    recorder = Recorder(root_name)
    try:
        MODE.recorder = recorder
        with count_flops():
            yield recorder
    finally:
        MODE.recorder = prev


def flops_enabled() -> bool:
    """True inside ``lucid.count_flops()``."""
    return MODE.flops

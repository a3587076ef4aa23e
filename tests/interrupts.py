"""Ctrl-C at every line: a test helper that interrupts a call at each line Lucid runs in it.

A teacher stops a long cell with Ctrl-C (a ``KeyboardInterrupt``) at whatever line Lucid
happens to be running.  Lucid promises that its state-changing calls (``backward``,
``optimizer.step``, ``load_state_dict``, ``scheduler.step``, ``lucid.save``, a ``no_grad``
block) are all or nothing under such an interrupt: gradients, modes, parameters, optimizer and
scheduler state and files are either as before the call or as after it, never in between, and
training can go on.

This module tests that the way the faults were found.  A trace function (``sys.settrace``)
counts the lines executed in Lucid's own source files while the call runs, and raises a
``KeyboardInterrupt`` at line ``k``; :func:`at_every_line` does that for k = 1, 2, 3, ... on
fresh state each time, until the call runs to its end without reaching line k, and hands the
state to a check after each run::

    def setup():
        model = nn.Linear(2, 1)
        opt = SGD(model.parameters(), lr=0.1)
        ...
        return model, opt

    def check(state, interrupted):
        model, opt = state
        assert_before_or_after(...)     # never in between
        opt.step()                      # and training goes on

    count = at_every_line(setup, lambda s: s[1].step(), check)
    assert count > 10                   # the call really ran Lucid's lines

Python unsets a trace function that raises, so each run is interrupted once, as a single
Ctrl-C would; whatever the call does on its way out (a ``finally`` that restores a mode, a
rollback) runs untraced.  A call that swallows the interrupt (returns normally although it
was interrupted) fails the test: Ctrl-C must stop the cell.
"""

from __future__ import annotations

import linecache
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lucid

#: Lucid's source folder: only lines in files under it are counted and interrupted
LUCID_DIR = str(Path(lucid.__file__).resolve().parent)


class _Injector:
    """A trace function that raises KeyboardInterrupt at the ``k``-th line run under
    ``folder`` (counting from 1) and counts the lines it saw."""

    def __init__(self, k: int, folder: str) -> None:
        self.k = k
        self.folder = folder
        self.lines = 0
        self.fired = False

    def on_call(self, frame: Any, event: str, arg: Any) -> Any:
        """Global tracer: trace a new frame line by line only if its code is Lucid's."""
        if self.fired or not frame.f_code.co_filename.startswith(self.folder):
            return None
        return self.on_line

    def on_line(self, frame: Any, event: str, arg: Any) -> Any:
        """Local tracer: count each line; at the k-th, raise as a Ctrl-C would."""
        if self.fired:
            return None
        if event == "line" and not _is_pass(frame):
            self.lines += 1
            if self.lines == self.k:
                self.fired = True
                raise KeyboardInterrupt(f"injected at Lucid line {self.k}")
        return self.on_line


def _is_pass(frame: Any) -> bool:
    """The line is a bare ``pass``.  No Ctrl-C can land there (``pass`` runs no instruction at
    which Python checks for signals), and raising from a trace function at a ``pass`` inside an
    ``except`` block leaves Python 3.11 believing, from then on, that it is still handling that
    block's exception: every later exception in the test session would carry it as its
    ``__context__``."""
    return linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip() == "pass"


def run_interrupted_at(call: Callable[[], Any], k: int, folder: str = LUCID_DIR) -> bool:
    """Run ``call()`` with a KeyboardInterrupt injected at the ``k``-th Lucid line.

    Returns True if the interrupt was injected (and came out of the call, as it must), False
    if the call finished before reaching line ``k``.  Any other exception propagates.
    """
    injector = _Injector(k, folder)
    previous = sys.gettrace()
    sys.settrace(injector.on_call)
    try:
        call()
    except KeyboardInterrupt:
        if not injector.fired:
            raise  # a real Ctrl-C from the person running the tests
        return True
    finally:
        sys.settrace(previous)
    if injector.fired:
        raise AssertionError(
            f"the call swallowed a KeyboardInterrupt injected at Lucid line {k} and returned "
            "normally: Ctrl-C must stop the call"
        )
    return False


def at_every_line(setup: Callable[[], Any], call: Callable[[Any], Any],
                  check: Callable[[Any, bool], None], *, folder: str = LUCID_DIR,
                  limit: int = 100_000) -> int:
    """Interrupt ``call(setup())`` at each Lucid line in turn, checking the state each time.

    For k = 1, 2, ...: ``state = setup()`` (fresh, untraced), then ``call(state)`` with a
    KeyboardInterrupt at the k-th line run in ``folder``, then ``check(state, interrupted)``
    (untraced) -- ``interrupted`` is False on the last run, the one that finished before line
    k.  Returns the number of lines the call runs (how many interrupts were tried).
    """
    for k in range(1, limit + 1):
        state = setup()
        interrupted = run_interrupted_at(lambda s=state: call(s), k, folder)
        check(state, interrupted)
        if not interrupted:
            return k - 1
    raise AssertionError(f"the call still ran after {limit} interrupted lines; raise the limit")

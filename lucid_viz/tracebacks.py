"""Short tracebacks in a notebook: a wrong call shows the student's line and Lucid's message.

``mlp(x)`` with the wrong width used to print a dozen frames of Lucid's own code --
``Module.__call__``, ``Sequential.forward``, ``apply``, the op's forward -- before the one line a
student needs: ``linear: input (32,5) and weight (16,4): ...``.  Lucid's internal frames carry
``__tracebackhide__ = True``, which IPython honours, except for the frame that raised; so in
IPython (and Jupyter) :func:`install` also cuts the traceback after the last frame of the
user's own code when everything below it is Lucid's: what is left is the user's line and the
message.  Only errors of bad input are cut (ValueError, TypeError, IndexError, RuntimeError);
plain Python tracebacks stay as they are, and ``short_tracebacks(False)`` turns this off.
"""

from __future__ import annotations

import re
import sys
import types
from typing import Any

__all__ = ["install", "short_tracebacks", "trim"]

_ANSI = re.compile(r"\x1b\[[0-9;]*m")

#: the errors Lucid raises for bad input
KINDS = (ValueError, TypeError, IndexError, RuntimeError)


def _is_lucid(frame: types.FrameType) -> bool:
    return frame.f_globals.get("__name__", "").split(".")[0] in ("lucid", "lucid_viz")


def trim(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` ending at the user's last frame when every frame below it is Lucid's (a copy:
    the exception keeps its full traceback for ``%debug``); else ``tb`` itself."""
    entries = []
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    users = [i for i, e in enumerate(entries) if not _is_lucid(e.tb_frame)]
    if not users or users[-1] == len(entries) - 1:
        return entries[0] if entries else None
    kept: types.TracebackType | None = None
    for e in reversed(entries[:users[-1] + 1]):
        kept = types.TracebackType(kept, e.tb_frame, e.tb_lasti, e.tb_lineno)
    return kept


def _short(shell: Any, etype: type, value: BaseException, tb: Any,
           tb_offset: int | None = None) -> list[str]:
    """IPython's handler for :data:`KINDS`: show the trimmed traceback as IPython would."""
    sys.last_type, sys.last_value, sys.last_traceback = etype, value, tb  # %debug sees all
    stb = shell.InteractiveTB.structured_traceback(etype, value, trim(tb), tb_offset=tb_offset)
    if stb and not _ANSI.sub("", stb[0]).strip("- \n"):  # IPython's rule of dashes: one line
        stb = stb[1:]  # less before the message (a student reads from the top)
    shell._showtraceback(etype, value, stb)  # the kernel sends it to the notebook
    return stb


def install(shell: Any = None) -> bool:
    """Cut Lucid's frames from bad-input errors in this IPython shell; False when there is
    none, or when another package already set IPython's custom exception handler."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return False
        shell = get_ipython()
    if shell is None or not hasattr(shell, "set_custom_exc"):
        return False
    if shell.custom_exceptions not in ((), KINDS):  # someone else's: leave it
        return False
    shell.set_custom_exc(KINDS, _short)
    return True


def short_tracebacks(on: bool = True, shell: Any = None) -> bool:
    """Turn the short tracebacks on (the default in a notebook) or off; True when done."""
    if on:
        return install(shell)
    if shell is None:
        from IPython import get_ipython

        shell = get_ipython()
    if shell is None or shell.custom_exceptions != KINDS:
        return False
    shell.set_custom_exc((), None)
    return True

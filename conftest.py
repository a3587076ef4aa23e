"""Hooks for the whole test run (`make test`), for the course's notebooks under nbval.

* Every kernel nbval starts inherits this process's environment: it gets one BLAS/OpenMP thread,
  as the kernels of `notebooks/course.py build` and of `make lab` do (``KERNEL_ENV`` in
  course.py says why).
* At the end, a table of how long each chapter took to run (kernel start included), slowest
  first, marking every chapter over the course's budget of a minute.
"""

from __future__ import annotations

import importlib.util
import os
from collections import defaultdict
from pathlib import Path

_COURSE = Path(__file__).resolve().parent / "notebooks" / "course.py"
BUDGET_S = 60.0  # a chapter should Run All in under a minute on a busy 2-core machine


def _kernel_env() -> dict[str, str]:
    spec = importlib.util.spec_from_file_location("_course_for_conftest", _COURSE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.KERNEL_ENV


for _name, _value in _kernel_env().items():
    os.environ.setdefault(_name, _value)  # a value set by the caller wins

_seconds: dict[str, float] = defaultdict(float)


def pytest_runtest_logreport(report):
    """Add every phase of every notebook cell (nbval's items are ``<notebook>::Cell N``)."""
    path = report.nodeid.split("::", 1)[0]
    if path.endswith(".ipynb"):
        _seconds[Path(path).stem] += report.duration


def pytest_terminal_summary(terminalreporter):
    if not _seconds:
        return
    write = terminalreporter.write_line
    terminalreporter.write_sep("=", "time per chapter (nbval, kernel start included)")
    for chapter, seconds in sorted(_seconds.items(), key=lambda kv: -kv[1]):
        over = f"  over the {BUDGET_S:.0f} s budget" if seconds > BUDGET_S else ""
        write(f"{seconds:7.1f} s  {chapter}{over}")
    write(f"{sum(_seconds.values()):7.1f} s  in all, {len(_seconds)} chapters")

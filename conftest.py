"""Hooks for the whole test run (`make test`), for the course's notebooks under nbval.

* Every kernel nbval starts inherits this process's environment: it gets one BLAS/OpenMP thread,
  as the kernels of `notebooks/course.py build` and of `make lab` do (``KERNEL_ENV`` in
  course.py says why).
* At the end, a table of how long each chapter took to run (kernel start included), slowest
  first, marking every chapter over the course's budget of a minute. Beside the wall-clock
  time it gives the CPU time of the chapter's kernel (and of any program the chapter ran, such
  as Graphviz), which does not depend on how busy the machine was: on two cores that another
  process keeps busy, a chapter gets about two thirds of a core, so its wall time there is
  about 1.5 times its CPU time.
"""

from __future__ import annotations

import importlib.util
import os
import resource
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
_cpu: dict[str, float] = defaultdict(float)
_children_cpu = [0.0]  # CPU seconds of the finished child processes at the last report


def _finished_children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def pytest_runtest_logreport(report):
    """Add every phase of every notebook cell (nbval's items are ``<notebook>::Cell N``). A
    kernel's CPU time is counted when it exits, at its notebook's last teardown."""
    path = report.nodeid.split("::", 1)[0]
    now = _finished_children_cpu()
    if path.endswith(".ipynb"):
        _seconds[Path(path).stem] += report.duration
        _cpu[Path(path).stem] += now - _children_cpu[0]
    _children_cpu[0] = now


def pytest_terminal_summary(terminalreporter):
    if not _seconds:
        return
    write = terminalreporter.write_line
    terminalreporter.write_sep("=", "time per chapter (nbval, kernel start included)")
    write("   wall  kernel CPU  chapter")
    for chapter, seconds in sorted(_seconds.items(), key=lambda kv: -kv[1]):
        over = f"  over the {BUDGET_S:.0f} s budget" if seconds > BUDGET_S else ""
        write(f"{seconds:6.1f} s  {_cpu[chapter]:8.1f} s  {chapter}{over}")
    write(f"{sum(_seconds.values()):6.1f} s  {sum(_cpu.values()):8.1f} s  "
          f"in all, {len(_seconds)} chapters")

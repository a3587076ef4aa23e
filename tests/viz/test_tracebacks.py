"""Short tracebacks: in IPython a wrong call shows the user's line and Lucid's message, not the
frames of Lucid's own code."""

from __future__ import annotations

import re

import pytest

import lucid
from lucid import nn
from lucid_viz import tracebacks

IPython = pytest.importorskip("IPython")


@pytest.fixture
def shell(capsys):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance(colors="nocolor")
    assert tracebacks.install(shell)
    yield shell
    tracebacks.short_tracebacks(False, shell)


def run(shell, capsys, code: str) -> list[str]:
    capsys.readouterr()
    shell.run_cell(code)
    out = capsys.readouterr()
    text = re.sub(r"\x1b\[[0-9;]*m", "", out.out + out.err)  # colours off (a shared shell)
    return text.splitlines()


SETUP = ("import lucid\nfrom lucid import nn\nlucid.random.seed(0)\n"
         "mlp = nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 2))\n"
         "x = lucid.random.randn(32, 5)")
MESSAGE = "ValueError: linear: input (32,5) and weight (16,4)"


def test_a_wrong_width_shows_the_users_line_then_the_message(shell, capsys):
    run(shell, capsys, SETUP)
    lines = run(shell, capsys, "mlp(x)")
    # within the first 5 lines as shown, blank ones counted
    assert any(line.startswith(MESSAGE) for line in lines[:5]), lines
    assert "----> 1 mlp(x)" in lines
    assert not [line for line in lines if "lucid/" in line]  # no frame of Lucid's code
    # the exception keeps its full traceback for %debug
    import sys

    frames = 0
    tb = sys.last_traceback
    while tb is not None:
        frames += 1
        tb = tb.tb_next
    assert frames > 5


def test_the_users_own_forward_stays_in_the_traceback(shell, capsys):
    run(shell, capsys, SETUP + "\nclass Net(nn.Module):\n    def __init__(self):\n"
        "        super().__init__()\n        self.body = mlp\n"
        "    def forward(self, x):\n        return self.body(x * 2)\nnet = Net()")
    lines = run(shell, capsys, "net(x)")
    assert any("return self.body(x * 2)" in line for line in lines)  # the user's line
    assert lines[-1].startswith(MESSAGE)
    assert not [line for line in lines if "lucid/" in line]


def test_off_shows_everything_and_a_bug_outside_lucid_is_untouched(shell, capsys):
    run(shell, capsys, "def f():\n    raise ValueError('mine')")
    lines = run(shell, capsys, "f()")
    assert any("raise ValueError('mine')" in line for line in lines)
    assert tracebacks.short_tracebacks(False, shell)
    run(shell, capsys, SETUP)
    lines = run(shell, capsys, "mlp(x)")
    assert any("lucid/ops/contraction.py" in line for line in lines)  # the raising frame shows


def test_trim_keeps_a_traceback_without_lucid_frames():
    try:
        raise ValueError("plain")
    except ValueError as err:
        tb = err.__traceback__
    assert tracebacks.trim(tb) is tb
    assert tracebacks.trim(None) is None


def test_lucid_frames_are_marked_hidden():
    """IPython alone (no lucid_viz) hides the frames that say __tracebackhide__."""
    import inspect

    from lucid.nn import containers, module
    from lucid.ops import base

    for fn in (base.apply, module.Module.__call__, module.Module._call,
               containers.Sequential.forward):
        assert "__tracebackhide__ = True" in inspect.getsource(fn), fn
    assert lucid and nn  # (imported for the shell's namespace above)

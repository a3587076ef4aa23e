"""%lucid_flops / %%lucid_flops: the summary line and the tables, exactly, on known cells."""

from __future__ import annotations

import re

import pytest

pytest.importorskip("IPython")

from IPython.core.error import UsageError  # noqa: E402
from IPython.core.interactiveshell import InteractiveShell  # noqa: E402
from IPython.utils.capture import capture_output  # noqa: E402

import lucid  # noqa: E402
from lucid.cost import Cost  # noqa: E402
from lucid.engine.mode import recording  # noqa: E402
from lucid.engine.recorder import Recorder  # noqa: E402
from lucid.nn.module import Module  # noqa: E402
from lucid_viz.magic import FlopsReport, _report, load_ipython_extension  # noqa: E402

SETUP = """
import lucid
import lucid.nn as nn
lucid.random.seed(0)
a = lucid.random.randn(3, 4, requires_grad=True)
b = lucid.random.randn(4, 5)
model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
loss_fn = nn.MSELoss()
x = lucid.random.randn(5, 4)
t = lucid.random.randn(5, 2)
"""

OP_TABLE = """\
op      count  forward (MACs / FLOPs)
-------------------------------------
MatMul      1                 60 MACs
Tanh        1                15 FLOPs
total       2      60 MACs + 15 FLOPs

(no lucid.nn modules were called)"""


@pytest.fixture(scope="module")
def shell():
    ip = InteractiveShell.instance()
    load_ipython_extension(ip)
    result = ip.run_cell(SETUP)
    assert result.success
    return ip


def run(shell, line, cell=None):
    """Run the magic; return (stdout lines, display outputs, return value)."""
    with capture_output() as cap:
        if cell is None:
            value = shell.run_line_magic("lucid_flops", line)
        else:
            value = shell.run_cell_magic("lucid_flops", line, cell)
    return cap.stdout, cap.outputs, value


def test_cell_summary_line_and_op_table(shell):
    out, outputs, value = run(shell, "", "y = a @ b\ny.tanh()")
    assert value is None
    first = out.splitlines()[0]
    assert first == ("lucid_flops: forward 60 MACs + 15 FLOPs (everything in FLOPs, 1 MAC = "
                     "2 FLOPs: 135) in 2 ops")
    assert len(outputs) == 1
    assert outputs[0].data["text/plain"] == OP_TABLE
    html = outputs[0].data["text/html"]
    assert html.count("<table>") == 1 and "<td style='text-align:left;white-space:pre'>MatMul" \
        in html


def test_the_cell_ran_in_the_user_namespace(shell):
    run(shell, "", "z_from_magic = (a @ b).tanh()")
    assert shell.user_ns["z_from_magic"].shape == (3, 5)


def test_backward_counts_each_ops_backward_rule(shell):
    out, outputs, _ = run(shell, "--backward", "y = a @ b\ny.tanh()")
    # the recorded ops' own backward rules (b needs no gradient, so matmul pays for dL/da only)
    tape_bwd = _independent_backward_flops(shell, "(a @ b).tanh()")
    assert tape_bwd == 60 + 45
    assert out.splitlines()[0] == ("lucid_flops: forward 60 MACs + 15 FLOPs, backward 60 MACs "
                                   "+ 45 FLOPs (everything in FLOPs, 1 MAC = 2 FLOPs: 300) in "
                                   "2 ops")
    assert outputs[0].data["text/plain"].splitlines()[:6] == [
        "op      count  forward (MACs / FLOPs)  backward (MACs / FLOPs)",
        "--------------------------------------------------------------",
        "MatMul      1                 60 MACs                  60 MACs",
        "Tanh        1                15 FLOPs                 45 FLOPs",
        "total       2      60 MACs + 15 FLOPs       60 MACs + 45 FLOPs",
        "",
    ]


def _independent_backward_flops(shell, expr):
    with lucid.count_flops():
        y = eval(expr, shell.user_ns)
    total, seen, stack = 0, set(), [y]
    while stack:
        node = stack.pop()
        if id(node) in seen or node._op is None:
            continue
        seen.add(id(node))
        total += node._op.flops_bwd
        stack.extend(node._prev)
    return total


def test_backward_of_a_scalar_last_value_counts_only_its_graph(shell):
    # ``unused`` requires grad but the last value does not depend on it: not in its backward
    out, _, _ = run(shell, "--backward", "unused = a * 2\n(a @ b).sum()")
    assert out.splitlines()[0] == ("lucid_flops: forward 60 MACs + 27 FLOPs, backward 60 MACs "
                                   "(everything in FLOPs, 1 MAC = 2 FLOPs: 267) in 3 ops")


def test_module_table_with_depth(shell):
    cell = "loss = loss_fn(model(x), t)\nloss"
    out, outputs, _ = run(shell, "--depth 1", cell)
    assert out.splitlines()[0] == ("lucid_flops: forward 240 MACs + 121 FLOPs (everything in "
                                   "FLOPs, 1 MAC = 2 FLOPs: 601) in 6 ops")
    modules = outputs[0].data["text/plain"].split("\n\n")[1]
    assert modules == """\
module     type        calls  forward (MACs / FLOPs)
----------------------------------------------------
model      Sequential      1     240 MACs + 90 FLOPs
  model.0  Linear          1     160 MACs + 40 FLOPs
  model.1  ReLU            1                40 FLOPs
  model.2  Linear          1      80 MACs + 10 FLOPs
loss_fn    MSELoss         1                31 FLOPs"""
    _, outputs, _ = run(shell, "--depth 0", cell)
    rows = outputs[0].data["text/plain"].split("\n\n")[1].splitlines()[2:]
    assert [r.split()[0] for r in rows] == ["model", "loss_fn"]


def test_ops_outside_modules_get_their_own_row(shell):
    _, outputs, _ = run(shell, "", "model(x) * 2")
    rows = outputs[0].data["text/plain"].split("\n\n")[1].splitlines()
    assert rows[-1].split() == ["(outside", "modules)", "10", "FLOPs"]


def test_module_forward_equals_its_ops(shell):
    report = run(shell, "-o", "model(x)")[2]
    by_path = {r.path: r.forward for r in report.modules}
    assert by_path["model"] == by_path["model.0"] + by_path["model.1"] + by_path["model.2"]
    assert by_path["model"] == report.forward
    with lucid.count_flops():
        y = model_output(shell)
    assert report.forward.seed_count == y.flops


def model_output(shell):
    return shell.user_ns["model"](shell.user_ns["x"])


def test_line_magic(shell):
    out, outputs, value = run(shell, "(a @ b).tanh()")
    assert value is None
    assert out.splitlines()[0] == ("lucid_flops: forward 60 MACs + 15 FLOPs (everything in FLOPs, "
                                   "1 MAC = 2 FLOPs: 135) in 2 ops")
    assert outputs[0].data["text/plain"] == OP_TABLE
    out, _, _ = run(shell, "--backward --depth=0 (a @ b).tanh()")
    assert out.splitlines()[0].startswith("lucid_flops: forward 60 MACs + 15 FLOPs, backward "
                                          "60 MACs + 45 FLOPs")


def test_o_returns_a_report_with_a_stable_repr(shell):
    out, outputs, report = run(shell, "-o", "y = a @ b\ny.tanh()")
    assert isinstance(report, FlopsReport)
    assert outputs == []  # the returned report is what IPython shows
    assert out.splitlines() == [report.summary]
    assert (report.forward, report.backward, report.n_ops) == (Cost(60, 15), None, 2)
    assert repr(report) == OP_TABLE
    assert not re.search(r"0x[0-9a-fA-F]{4,}", repr(report))
    again = run(shell, "-o", "y = a @ b\ny.tanh()")[2]
    assert repr(again) == repr(report) and again == report
    assert "<table>" in report._repr_html_()


def test_uncounted_ops_are_listed_by_name():
    x = lucid.Tensor([1.0, 2.0], requires_grad=True)
    y = x * 3  # recorded for autograd, but not inside count_flops: no FLOPs on the op
    rec = Recorder()
    rec.ops.append(y)
    report = _report(rec, None, backward=False, depth=None)
    assert report.uncounted == ["Mul"]
    assert report.summary.endswith("; not counted: Mul")
    assert repr(report).endswith("ops not counted (no count recorded): Mul")


def test_the_magic_patches_nothing_and_stops_recording_when_the_cell_fails(shell):
    original = Module.__call__
    with pytest.raises(ZeroDivisionError):
        shell.run_cell_magic("lucid_flops", "", "model(x)\n1 / 0")
    assert Module.__call__ is original
    assert recording() is None and not lucid.flops_enabled()


def test_no_module_of_lucid_viz_replaces_a_method_of_lucid():
    """lucid_viz reads the recorder; it never assigns to a lucid class or module."""
    import pathlib

    import lucid_viz

    root = pathlib.Path(lucid_viz.__file__).parent
    patch = re.compile(r"^\s*(Module|Tensor|lucid(\.\w+)*)\.\w+\s*=[^=]", re.M)
    for path in root.glob("*.py"):
        source = path.read_text(encoding="utf-8")
        assert not patch.search(source), f"{path.name} assigns to a lucid attribute"
        assert "setattr(" not in source, path.name
        # nor shadows an op's method on an instance (the stepper observes the walk instead)
        assert not re.search(r"__dict__\[\s*['\"](backward|forward)", source), path.name


def test_usage_errors(shell):
    with pytest.raises(UsageError, match="unknown option '--bogus'"):
        shell.run_cell_magic("lucid_flops", "--bogus", "model(x)")
    with pytest.raises(UsageError, match=r"unknown option '--bogus'. Usage: %lucid_flops"):
        shell.run_line_magic("lucid_flops", "--bogus model(x)")  # not a SyntaxError
    with pytest.raises(UsageError, match="--depth needs a whole number"):
        shell.run_line_magic("lucid_flops", "--depth x model(x)")
    with pytest.raises(UsageError, match="nothing to run"):
        shell.run_line_magic("lucid_flops", "--backward")


def test_cell_with_magics_inside_is_transformed(shell):
    out, _, _ = run(shell, "", "%time y = a @ b\ny.tanh()")
    assert ("lucid_flops: forward 60 MACs + 15 FLOPs (everything in FLOPs, 1 MAC = 2 FLOPs: "
            "135) in 2 ops") in out


def test_load_ext_of_the_magic_module():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "lucid_viz.magic")
    assert "lucid_flops" in ip.magics_manager.magics["cell"]


def test_load_ext():
    ip = InteractiveShell.instance()
    ip.run_line_magic("load_ext", "lucid_viz")
    assert "lucid_flops" in ip.magics_manager.magics["cell"]
    assert "lucid_flops" in ip.magics_manager.magics["line"]

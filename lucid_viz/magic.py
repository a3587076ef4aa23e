"""``%load_ext lucid_viz``: the ``%lucid_flops`` line magic and ``%%lucid_flops`` cell magic.

::

    %lucid_flops model(x)                  # count one expression
    %%lucid_flops --backward --depth 1 -o  # count a cell; backward too; modules 1 level deep
    loss = loss_fn(model(x), y)
    loss

The code runs in the notebook's namespace inside :func:`lucid.engine.mode.record_ops`, so
every op is counted and kept, in order, on the recorder's tape, and every module call is noted
with the stretch of the tape it ran: a module's row is everything that ran inside its call,
children included.  Top-level modules are named by the notebook variable that holds them
(``model``, ``loss_fn``).  Nothing of ``lucid`` is patched or hooked to do this.

Output: one summary line, then a per-op and a per-module table.  Counts are in honest units
(:mod:`lucid.cost`): MACs for the multiply-adds of matmul, linear layers and convolutions,
FLOPs for every other op; the line also gives everything in FLOPs (1 MAC = 2 FLOPs).
``--backward`` adds each op's backward count (only the gradients it computes): for the ops a
backward from the cell's last value would visit when that value is a scalar tensor requiring
grad, else for every recorded op that requires grad.  Nothing is differentiated by the magic
itself.

IPython is imported only when the magic runs, so ``import lucid_viz`` does not need it.
"""

from __future__ import annotations

import ast
import html
from dataclasses import dataclass, field
from typing import Any

from lucid.cost import Cost, op_cost
from lucid.engine.mode import record_ops
from lucid.engine.recorder import Recorder
from lucid.engine.walk import nodes_below
from lucid.tensor import Tensor

__all__ = ["FlopsReport", "OpRow", "ModuleRow", "count_source", "load_ipython_extension"]

OUTSIDE = "(outside modules)"


@dataclass(frozen=True)
class OpRow:
    op: str  # the op's class name ("MatMul")
    count: int
    forward: Cost
    backward: Cost


@dataclass(frozen=True)
class ModuleRow:
    path: str  # "model.fc1"; OUTSIDE for ops run outside every module
    kind: str  # the module's class name
    calls: int
    forward: Cost  # everything that ran inside the module's calls, children included
    backward: Cost

    @property
    def depth(self) -> int:
        return 0 if self.path == OUTSIDE else self.path.count(".")


@dataclass
class FlopsReport:
    """What ``%%lucid_flops`` measured: totals, a per-op table and a per-module table.

    ``repr`` is the text tables (stable: no addresses, no timings); ``_repr_html_`` the same
    as HTML.  ``backward`` is None unless ``--backward`` was asked for.
    """

    forward: Cost
    backward: Cost | None
    n_ops: int
    ops: list[OpRow] = field(default_factory=list)
    modules: list[ModuleRow] = field(default_factory=list)
    uncounted: list[str] = field(default_factory=list)  # op names without a count
    depth: int | None = None

    @property
    def total(self) -> Cost:
        return self.forward + (self.backward or Cost())

    @property
    def summary(self) -> str:
        """The one deterministic line the magic prints first."""
        ops = f"in {self.n_ops:,} op{'s' if self.n_ops != 1 else ''}"
        if self.backward is None:
            head = f"forward {self.forward.text()}"
        else:
            head = (f"forward {self.forward.text()}, backward {self.backward.text()}")
        line = (f"lucid_flops: {head} (everything in FLOPs, 1 MAC = 2 FLOPs: "
                f"{self.total.in_flops:,}) {ops}")
        if self.uncounted:
            line += f"; not counted: {', '.join(self.uncounted)}"
        return line

    def _op_table(self) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
        head = ("op", "count", "forward (MACs / FLOPs)")
        if self.backward is not None:
            head += ("backward (MACs / FLOPs)",)
        body = []
        for r in self.ops + [OpRow("total", self.n_ops, self.forward,
                                   self.backward or Cost())]:
            row = (r.op, f"{r.count:,}", r.forward.text())
            if self.backward is not None:
                row += (r.backward.text(),)
            body.append(row)
        return head, body

    def _module_rows(self) -> list[ModuleRow]:
        return [r for r in self.modules if self.depth is None or r.depth <= self.depth]

    def _module_table(self) -> tuple[tuple[str, ...], list[tuple[str, ...]]]:
        head = ("module", "type", "calls", "forward (MACs / FLOPs)")
        if self.backward is not None:
            head += ("backward (MACs / FLOPs)",)
        body = []
        for r in self._module_rows():
            row = ("  " * r.depth + r.path, r.kind, f"{r.calls:,}" if r.calls else "",
                   r.forward.text())
            if self.backward is not None:
                row += (r.backward.text(),)
            body.append(row)
        return head, body

    def __repr__(self) -> str:
        parts = [_text_table(*self._op_table())]
        if self.modules:
            parts.append(_text_table(*self._module_table(), left=2))
        else:
            parts.append("(no lucid.nn modules were called)")
        if self.uncounted:
            parts.append("ops not counted (no count recorded): " + ", ".join(self.uncounted))
        return "\n\n".join(parts)

    __str__ = __repr__

    def _repr_html_(self) -> str:
        parts = [_html_table(*self._op_table())]
        if self.modules:
            parts.append(_html_table(*self._module_table()))
        if self.uncounted:
            parts.append("<p>ops not counted (no count recorded): "
                         f"{html.escape(', '.join(self.uncounted))}</p>")
        return "\n".join(parts)


def _text_table(head: tuple[str, ...], body: list[tuple[str, ...]], left: int = 1) -> str:
    """Columns padded to their widest cell; the first ``left`` columns flush left (names)."""
    widths = [max(len(x) for x in col) for col in zip(head, *body)]

    def fmt(row: tuple[str, ...]) -> str:
        cells = [c.ljust(w) if i < left else c.rjust(w)
                 for i, (c, w) in enumerate(zip(row, widths))]
        return "  ".join(cells).rstrip()

    rule = "-" * (sum(widths) + 2 * (len(widths) - 1))
    return "\n".join([fmt(head), rule, *[fmt(r) for r in body]])


def _html_table(head: tuple[str, ...], body: list[tuple[str, ...]]) -> str:
    th = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    rows = "".join(
        "<tr>" + "".join(
            f"<td style='text-align:{'left' if i == 0 else 'right'};white-space:pre'>"
            f"{html.escape(c)}</td>" for i, c in enumerate(r)) + "</tr>"
        for r in body)
    return f"<table><thead><tr>{th}</tr></thead><tbody>{rows}</tbody></table>"


# -- counting ---------------------------------------------------------------------------------
def count_source(source: str, namespace: dict[str, Any], *, backward: bool = False,
                 depth: int | None = None,
                 filename: str = "<lucid_flops>") -> tuple[FlopsReport, Any]:
    """Run ``source`` in ``namespace`` with FLOPs recorded; return (report, last value).

    The last value is that of a final expression statement (None otherwise), as in a cell.
    ``filename`` names the code in tracebacks.
    """
    tree = ast.parse(source)
    last = None
    if tree.body and isinstance(tree.body[-1], ast.Expr):
        last = ast.Expression(tree.body.pop().value)
    with record_ops(root_name=lambda module: _variable_name(module, namespace)) as rec:
        exec(compile(tree, filename, "exec"), namespace)
        value = eval(compile(last, filename, "eval"), namespace) if last else None
    report = _report(rec, value, backward, depth)
    return report, value


def _backward_set(tape: list[Tensor], value: Any) -> set[int] | None:
    """ids of the results a backward from ``value`` would visit; None: count every op."""
    if not (isinstance(value, Tensor) and value.requires_grad and value.size == 1):
        return None
    return {id(t) for t in nodes_below(value, grad_only=True)}


def _report(rec: Recorder, value: Any, backward: bool, depth: int | None) -> FlopsReport:
    tape = rec.ops
    reach = _backward_set(tape, value) if backward else None
    fwd: list[Cost] = []
    bwd: list[Cost] = []
    uncounted: list[str] = []
    for t in tape:
        name = type(t._op).__name__
        f = op_cost(t._op)
        if f is None and name not in uncounted:
            uncounted.append(name)
        fwd.append(f or Cost())
        b = op_cost(t._op, backward=True) if (reach is None or id(t) in reach) else None
        bwd.append(b or Cost())

    ops: dict[str, list[Any]] = {}
    for t, f, b in zip(tape, fwd, bwd):
        row = ops.setdefault(type(t._op).__name__, [0, Cost(), Cost()])
        row[0] += 1
        row[1] += f
        row[2] += b

    modules: list[ModuleRow] = []
    if rec.calls:
        rows: dict[str, list[Any]] = {}
        owned = [False] * len(tape)
        for call in rec.calls:
            row = rows.setdefault(call.path, [type(call.module).__name__, 0, Cost(), Cost()])
            row[1] += 1
            row[2] += _sum(fwd[call.start:call.stop])
            row[3] += _sum(bwd[call.start:call.stop])
            for i in range(call.start, call.stop):
                owned[i] = True
        modules = [ModuleRow(p, k, c, f, b) for p, (k, c, f, b) in rows.items()]
        outside = [i for i, o in enumerate(owned) if not o]
        if outside:
            modules.append(ModuleRow(OUTSIDE, "", 0, _sum(fwd[i] for i in outside),
                                     _sum(bwd[i] for i in outside)))

    return FlopsReport(
        forward=_sum(fwd), backward=_sum(bwd) if backward else None, n_ops=len(tape),
        ops=[OpRow(name, c, f, b) for name, (c, f, b) in ops.items()],
        modules=modules, uncounted=uncounted, depth=depth,
    )


def _sum(costs: Any) -> Cost:
    total = Cost()
    for c in costs:
        total = total + c
    return total


def _variable_name(module: Any, namespace: dict[str, Any]) -> str:
    for name, obj in namespace.items():
        if obj is module and not name.startswith("_"):
            return name
    return type(module).__name__


# -- the magic --------------------------------------------------------------------------------
_USAGE = "%lucid_flops [--backward] [--depth N] [-o] EXPR   /   %%lucid_flops [...] + a cell"


def _parse(line: str, cell_mode: bool) -> tuple[dict[str, Any], str]:
    """Options at the start of the line; the rest (line magic) is the code, untouched."""
    from IPython.core.error import UsageError

    opts: dict[str, Any] = {"backward": False, "depth": None, "o": False}
    rest = line.strip()
    while rest:
        token, _, tail = rest.partition(" ")
        if token == "--backward":
            opts["backward"] = True
        elif token == "-o":
            opts["o"] = True
        elif token == "--depth" or token.startswith("--depth="):
            if "=" in token:
                value = token.partition("=")[2]
            else:
                value, _, tail = tail.lstrip().partition(" ")
            if not value.isdigit():
                raise UsageError(f"lucid_flops: --depth needs a whole number, got {value!r}. "
                                 f"Usage: {_USAGE}")
            opts["depth"] = int(value)
        elif cell_mode or token.startswith("--"):  # (a line's code never starts with --)
            raise UsageError(f"lucid_flops: unknown option {token!r}. Usage: {_USAGE}")
        else:
            break
        rest = tail.strip()
    return opts, rest


def _run_magic(shell: Any, line: str, cell: str | None) -> Any:
    from IPython.core.error import UsageError
    from IPython.display import display

    opts, code = _parse(line, cell is not None)
    if cell is not None:
        code = cell
    if not code.strip():
        raise UsageError(f"lucid_flops: nothing to run. Usage: {_USAGE}")
    source = shell.transform_cell(code)  # so the cell may use %magics and !shell lines
    cache = getattr(shell.compile, "cache", None)  # registers the source: tracebacks show it
    filename = cache(source) if cache is not None else "<lucid_flops>"
    report, _ = count_source(source, shell.user_ns, backward=opts["backward"],
                             depth=opts["depth"], filename=filename)
    print(report.summary)
    if opts["o"]:
        return report  # shown by IPython as the cell's result (the tables)
    display(report)
    return None


def load_ipython_extension(ipython: Any) -> None:
    """``%load_ext lucid_viz``: register ``%lucid_flops`` and ``%%lucid_flops``."""

    def lucid_flops(line: str, cell: str | None = None) -> Any:
        """Count the FLOPs of an expression (line) or a cell, per op and per module.

        %lucid_flops [--backward] [--depth N] [-o] EXPR
        %%lucid_flops [--backward] [--depth N] [-o]

        Prints one summary line (MACs for multiply-adds, FLOPs for the rest, and everything
        in FLOPs), then a per-op table and a per-module table (modules down to --depth levels
        below the notebook's variables).  --backward adds each op's backward count; -o
        returns the FlopsReport.
        """
        return _run_magic(ipython, line, cell)

    ipython.register_magic_function(lucid_flops, magic_kind="line_cell",
                                    magic_name="lucid_flops")

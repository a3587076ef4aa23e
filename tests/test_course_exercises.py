"""The exercises and the student edition.

Every chapter has at least four exercises, each a `solution` cell followed by a `check` cell, and
at least one of them asks for code (a function, a class, or lines between solution markers).
The teacher edition (notebooks/*.ipynb) runs the solutions under nbval, so every check passes
there. Here the student edition is written and executed: every check must fail with its hint
(a NotRightYet error), every other cell must run, so a student who skips an exercise can go on.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from tests.course_leaks import (
    PROBE_AFTER,
    PROBE_BEFORE,
    PROBE_SETUP,
    RECORD_MIME,
    numbers,
    pattern,
    visible_text,
)

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
_spec = importlib.util.spec_from_file_location("course", NOTEBOOKS / "course.py")
course = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(course)
CHAPTERS = course.chapters()

nbformat = pytest.importorskip("nbformat", reason="the notebooks extra installs nbformat")
nbclient = pytest.importorskip("nbclient", reason="the notebooks extra installs nbclient")

MIN_EXERCISES = 4


def _notebook(chapter: str) -> dict:
    return json.loads((NOTEBOOKS / f"{chapter}.ipynb").read_text(encoding="utf-8"))


# ---------------------------------------------------------------------------------------------
# stubs


def _stub(text: str) -> str:
    return course.stub(textwrap.dedent(text).strip("\n"))


def test_an_answer_becomes_an_ellipsis_to_fill_in():
    assert _stub("dy_dx = 11.0  # 6x - 1 at x = 2") == "dy_dx = ...  # TODO: your answer"
    assert _stub("""
        macs, flops = 80_000, 800
        a = b = 3
    """) == "macs, flops = ..., ...  # TODO: your answer\na = b = ...  # TODO: your answer"


def test_a_function_keeps_its_signature_and_docstring():
    assert _stub('''
        import math

        @staticmethod
        def f(x, eps=1e-6):
            """Central difference.

            Two lines of docstring."""
            # a comment that explains the answer
            return (g(x + eps) - g(x - eps)) / (2 * eps)
        def h(y):
            return y
    ''') == textwrap.dedent('''
        import math

        @staticmethod
        def f(x, eps=1e-6):
            """Central difference.

            Two lines of docstring."""
            raise NotImplementedError("TODO: your code here")

        def h(y):
            raise NotImplementedError("TODO: your code here")''').strip("\n")


def test_a_class_keeps_its_header_docstring_and_method_signatures():
    assert _stub('''
        class Scale(nn.Module):
            """x * weight."""

            def __init__(self, n):
                super().__init__()
                self.weight = nn.Parameter(lucid.ones(n))

            def forward(self, x):
                return x * self.weight
    ''') == textwrap.dedent('''
        class Scale(nn.Module):
            """x * weight."""

            def __init__(self, n):
                raise NotImplementedError("TODO: your code here")

            def forward(self, x):
                raise NotImplementedError("TODO: your code here")''').strip("\n")


def test_markers_cut_out_the_part_the_student_writes():
    assert _stub("""
        for step in range(3):
            opt.zero_grad()
            # BEGIN SOLUTION
            loss = model(x).sum()
            loss.backward()
            # END SOLUTION
            opt.step()
    """) == textwrap.dedent("""
        for step in range(3):
            opt.zero_grad()
            raise NotImplementedError("TODO: your code here")
            opt.step()""").strip("\n")


@pytest.mark.parametrize("text, message", [
    ("print(1)", "line 1: a solution cell without '# BEGIN SOLUTION' markers may hold only "
                 "assignments, functions, classes and imports, not Expr; put the markers "
                 "around the part students write"),
    ("# BEGIN SOLUTION\nx = 1", "'# BEGIN SOLUTION' without '# END SOLUTION'"),
    ("x = 1\n# END SOLUTION", "line 2: '# END SOLUTION' without '# BEGIN SOLUTION'"),
    ("def f(x): return x", "line 1: write the body of f() on its own lines"),
])
def test_a_cell_that_cannot_become_a_stub_says_why(text, message):
    with pytest.raises(course.StubError) as info:
        course.stub(text)
    assert str(info.value) == message


# ---------------------------------------------------------------------------------------------
# the exercises of every chapter


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_has_exercises_each_followed_by_its_check(chapter):
    code = [c for c in _notebook(chapter)["cells"] if c["cell_type"] == "code"]
    solutions = [i for i, c in enumerate(code) if course.SOLUTION in course.tags(c)]
    assert len(solutions) >= MIN_EXERCISES, (
        f"{chapter} has {len(solutions)} exercises (cells tagged 'solution'); a chapter needs "
        f"at least {MIN_EXERCISES}")
    writes_code = [i for i in solutions if re.search(
        r"^\s*(def |class |# BEGIN SOLUTION)", course.source_text(code[i]), re.M)]
    assert writes_code, f"{chapter}: no exercise asks for code (a function, a class, markers)"
    for i in solutions:
        follower = code[i + 1] if i + 1 < len(code) else None
        assert follower is not None and course.CHECK in course.tags(follower), (
            f"{chapter}: the solution cell {code[i]['id']} is not followed by a 'check' cell")
        assert "check" in course.source_text(follower)
    for cell in code:
        if course.CHECK in course.tags(cell):
            text = "".join(course.source_text({"source": o.get("text", "")})
                           for o in cell["outputs"])
            assert "✓" in text and "right" in text, (
                f"{chapter}: the check cell {cell['id']} did not pass on the solution")


def _free_reads(node: ast.AST) -> set[str]:
    """The names a piece of code reads that it does not bind itself (a function's parameters
    and locals are its own)."""
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        args = node.args
        own = {a.arg for a in args.posonlyargs + args.args + args.kwonlyargs}
        own |= {a.arg for a in (args.vararg, args.kwarg) if a is not None}
        body = node.body if isinstance(node.body, list) else [node.body]
        own |= {n.id for b in body for n in ast.walk(b)
                if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        defaults = set().union(*[_free_reads(d) for d in args.defaults + args.kw_defaults
                                 if d is not None])
        return defaults | (set().union(*[_free_reads(b) for b in body]) - own)
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) else set()
    return set().union(*[_free_reads(c) for c in ast.iter_child_nodes(node)])


def _names(source: str) -> tuple[set[str], set[str]]:
    """The names a cell reads, and those it binds at its top level (magics left out)."""
    tree = ast.parse("\n".join(line for line in source.split("\n")
                               if not line.lstrip().startswith(("%", "!"))))
    binds = set()
    for stmt in tree.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            binds.add(stmt.name)
        else:
            binds |= {n.id for n in ast.walk(stmt)
                      if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return _free_reads(tree), binds


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_cell_uses_what_a_check_defines(chapter):
    """In the student edition a check runs in a scope of its own: what it defines is gone
    afterwards, so no later cell (but an `answer` cell, which the student edition leaves out)
    may read it."""
    from_checks: dict[str, int] = {}
    for i, cell in enumerate(_notebook(chapter)["cells"]):
        if cell["cell_type"] != "code":
            continue
        reads, binds = _names(course.source_text(cell))
        if course.ANSWER not in course.tags(cell):
            used = {name: from_checks[name] for name in reads - binds if name in from_checks}
            assert not used, f"{chapter}, cell {i} reads what check cells define: {used}"
        if course.CHECK in course.tags(cell):
            from_checks.update(dict.fromkeys(binds, i))
        else:
            for name in binds:
                from_checks.pop(name, None)


def _error(cell) -> dict | None:
    return next((o for o in cell.get("outputs", []) if o["output_type"] == "error"), None)


@functools.cache
def _student_run(chapter: str) -> tuple[dict, object, list[tuple[str, object]], list[str]]:
    """The chapter's student edition as written, and as executed (every cell, errors allowed)
    with the checks recording their expected values and a probe of the kernel's namespace
    around every check.  Returns (written, executed, [(exercise, expected value)], leaks)."""
    out = Path(tempfile.mkdtemp(prefix="lucid-student-"))
    (path,) = course.write_student(out, [chapter])
    written = json.loads(path.read_text(encoding="utf-8"))
    nb = nbformat.read(path, as_version=4)
    probed = [nbformat.v4.new_code_cell(PROBE_SETUP)]
    for cell in nb.cells:
        is_check = course.CHECK in course.tags(cell)
        probed += ([nbformat.v4.new_code_cell(PROBE_BEFORE)] if is_check else []) + [cell] + \
                  ([nbformat.v4.new_code_cell(PROBE_AFTER)] if is_check else [])
    nb.cells = probed
    old = os.environ.get("LUCID_EXERCISE_RECORD")
    os.environ["LUCID_EXERCISE_RECORD"] = "1"  # the kernel inherits it
    try:
        nbclient.NotebookClient(nb, kernel_name="python3", timeout=300, allow_errors=True,
                                coalesce_streams=True,
                                resources={"metadata": {"path": str(out)}}).execute()
    finally:
        if old is None:
            del os.environ["LUCID_EXERCISE_RECORD"]
        else:
            os.environ["LUCID_EXERCISE_RECORD"] = old
    expected, leaks = [], []
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            if RECORD_MIME in o.get("data", {}):
                record = o["data"][RECORD_MIME]
                expected.append((record["name"], record["expected"]))
            if cell.source == PROBE_AFTER and o.get("name") == "stdout":
                leaks += [leak for line in o["text"].splitlines() if line.startswith("LEAKS ")
                          for leak in json.loads(line[len("LEAKS "):])]
            if cell.source in (PROBE_SETUP, PROBE_BEFORE, PROBE_AFTER) and \
                    o["output_type"] == "error":
                raise AssertionError(f"the leak probe failed: {o['evalue']}")
    nb.cells = [c for c in nb.cells if c.source not in (PROBE_SETUP, PROBE_BEFORE, PROBE_AFTER)]
    return written, nb, expected, leaks


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_student_edition_runs_and_every_check_fails_with_its_hint(chapter):
    written, nb, _, _ = _student_run(chapter)
    teacher = [c for c in _notebook(chapter)["cells"] if course.ANSWER not in course.tags(c)]
    assert len(nb.cells) == len(teacher)
    for mine, theirs in zip(nb.cells, teacher):
        if course.SOLUTION in course.tags(theirs):
            assert course.EXERCISE in course.tags(mine)
            assert mine.source == course.stub(course.source_text(theirs)) != theirs["source"]
        if course.CHECK in course.tags(theirs):
            assert mine.metadata["jupyter"]["source_hidden"] is True
            assert mine.source == course.student_check(course.source_text(theirs))
        assert course.SOLUTION not in course.tags(mine)
        assert course.NBVAL not in course.tags(mine)
    for cell in written["cells"]:
        if {course.EXERCISE, course.CHECK} & set(course.tags(cell)):
            assert not cell["outputs"]

    first_stub = min(i for i, c in enumerate(nb.cells) if course.EXERCISE in course.tags(c))
    checks = 0
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        error, cell_tags = _error(cell), course.tags(cell)
        where = f"{chapter}, cell {cell.id}"
        if course.CHECK in cell_tags:
            checks += 1
            assert error is not None, f"{where}: the check passed on the student's stub"
            assert error["ename"] == "NotRightYet", f"{where}: {error['ename']}: " \
                                                    f"{error['evalue']}"
            hint = error["evalue"].split("\nHint: ", 1)
            assert len(hint) == 2 and len(hint[1]) >= 10, f"{where}: no hint in {error}"
            assert [line for line in error["traceback"] if line.strip()] == \
                [line for line in error["traceback"] if line.strip()][:2], \
                f"{where}: the failed check shows more than its two lines"
        elif course.EXERCISE in cell_tags:
            assert error is None or error["ename"] == "NotImplementedError", (
                f"{where}: the stub raised {error['ename']}: {error['evalue']}")
        else:
            assert error is None, (f"{where} (not an exercise) fails in the student edition: "
                                   f"{error['ename']}: {error['evalue']}")
    assert checks >= MIN_EXERCISES
    ran = [c for c in nb.cells[:first_stub] if c.cell_type == "code"]
    assert all(c.execution_count is not None and _error(c) is None for c in ran)


#: answers the statement gives by nature: the exercise is to see that they are the same
GIVEN = {
    "Exercise 4.1 (dL/dB)": "a gradient has the shape of its input, which the statement gives",
    "Exercise 18.1 (output)": "attention's output has its query's shape, which the statement "
                              "gives",
}
#: an exercise's own number ("Exercise 17.4") is no spelling of an answer (17.449...)
EXERCISE_NUMBER = re.compile(r"\b(Exercises?|Ex\.?)(\s+)\d+\.\d+")


def _without_exercise_numbers(text: str) -> str:
    return EXERCISE_NUMBER.sub(r"\1\2N.k", text)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_answer_is_in_the_student_edition(chapter):
    """Every expected value a check computes (recorded while the student edition runs), in
    every usual spelling, is searched for in the student notebook as handed out and as run."""
    written, executed, expected, _ = _student_run(chapter)
    names = {course.exercise_name(course.source_text(c)) for c in _notebook(chapter)["cells"]
             if course.CHECK in course.tags(c)}
    recorded = {name.split(" (")[0] for name, _ in expected}
    assert names <= recorded, f"{chapter}: no expected value recorded for {names - recorded}"
    texts = {"as handed out": _without_exercise_numbers(visible_text(written)),
             "as run": _without_exercise_numbers(visible_text(nbformat.from_dict(executed)))}
    found = []
    for name, value in expected:
        if name in GIVEN:
            continue
        for x in set(numbers(value)):
            for where, text in texts.items():
                hit = pattern(x).search(text)
                if hit:
                    context = text[max(0, hit.start() - 60):hit.end() + 20].replace("\n", " ")
                    found.append(f"{name}'s answer {x!r} appears {where}: ...{context}...")
    assert not found, f"{chapter}: " + "\n".join(sorted(set(found)))


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_no_answer_stays_in_the_kernel_after_a_check(chapter):
    *_, leaks = _student_run(chapter)
    assert not leaks, f"{chapter}: " + "; ".join(leaks)


def test_make_student_writes_every_chapter(tmp_path):
    out = tmp_path / "student"
    result = subprocess.run([sys.executable, str(NOTEBOOKS / "course.py"), "student", "--out",
                             str(out)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == f"student edition: {len(CHAPTERS)} notebooks in {out}"
    assert sorted(p.stem for p in out.glob("*.ipynb")) == CHAPTERS
    for path in out.glob("*.ipynb"):
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        assert not [c for c in nb.cells if course.SOLUTION in course.tags(c)]

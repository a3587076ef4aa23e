"""The exercises and the student edition.

Every chapter has at least three exercises, each a `solution` cell followed by a `check` cell.
The teacher edition (notebooks/*.ipynb) runs the solutions under nbval, so every check passes
there. Here the student edition is written and executed: every check must fail with its hint
(a NotRightYet error), every other cell must run, so a student who skips an exercise can go on.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
_spec = importlib.util.spec_from_file_location("course", NOTEBOOKS / "course.py")
course = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(course)
CHAPTERS = course.chapters()

nbformat = pytest.importorskip("nbformat", reason="the notebooks extra installs nbformat")
nbclient = pytest.importorskip("nbclient", reason="the notebooks extra installs nbclient")

MIN_EXERCISES = 3


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


def _error(cell) -> dict | None:
    return next((o for o in cell.get("outputs", []) if o["output_type"] == "error"), None)


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_student_edition_runs_and_every_check_fails_with_its_hint(chapter, tmp_path):
    (path,) = course.write_student(tmp_path, [chapter])
    nb = nbformat.read(path, as_version=4)
    teacher = _notebook(chapter)["cells"]
    for mine, theirs in zip(nb.cells, teacher):
        if course.SOLUTION in course.tags(theirs):
            assert course.EXERCISE in course.tags(mine) and not mine.outputs
            assert mine.source == course.stub(course.source_text(theirs)) != theirs["source"]
        if course.CHECK in course.tags(theirs):
            assert mine.metadata["jupyter"]["source_hidden"] is True and not mine.outputs
            assert mine.source == course.CHECK_LINE + "\n" + course.source_text(theirs)
        assert course.SOLUTION not in course.tags(mine)
        assert course.NBVAL not in course.tags(mine)

    nbclient.NotebookClient(nb, kernel_name="python3", timeout=300, allow_errors=True,
                            resources={"metadata": {"path": str(tmp_path)}}).execute()

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
        elif course.EXERCISE in cell_tags:
            assert error is None or error["ename"] == "NotImplementedError", (
                f"{where}: the stub raised {error['ename']}: {error['evalue']}")
        else:
            assert error is None, (f"{where} (not an exercise) fails in the student edition: "
                                   f"{error['ename']}: {error['evalue']}")
    assert checks >= MIN_EXERCISES
    ran = [c for c in nb.cells[:first_stub] if c.cell_type == "code"]
    assert all(c.execution_count is not None and _error(c) is None for c in ran)


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

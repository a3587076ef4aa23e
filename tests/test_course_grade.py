"""`course.py grade`: a folder of submissions becomes a gradebook.

A tiny chapter (three exercises) stands in for the course so that the test stays fast; one
run of the real chapter 00 through the command line shows the same on a real notebook. The
submissions are every kind a teacher meets: all right, blank, partly wrong, one that crashes its
kernel, one that hangs, one that rebinds the checks, one that deleted them, one that is not a
notebook at all. Each scores what it earned; none stops the run.
"""

from __future__ import annotations

import copy
import csv
import importlib.util
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"

nbformat = pytest.importorskip("nbformat", reason="the notebooks extra installs nbformat")
pytest.importorskip("nbclient", reason="the notebooks extra installs nbclient")


def _load_course():
    spec = importlib.util.spec_from_file_location("course_under_test", NOTEBOOKS / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


TINY = "01_tiny"
CELLS = [  # (tags, source) of the tiny chapter's teacher edition
    ([], "from lucid_viz.exercises import check, check_function"),
    ([], "base = 6.0"),
    (["solution"], "answer = 42.0"),
    (["check"], "product_check = base * 7\n"
                "check('Exercise 1.1', answer, product_check, nudge='multiply')"),
    (["solution"], "def double(x):\n    return 2 * x"),
    (["check"], "check_function('Exercise 1.2', double, lambda x: x + x, [1.0, 2.5])"),
    (["solution"], "flag = True"),
    (["check"], "check('Exercise 1.3 (flag)', flag, base > 2)"),
]
EXERCISES = ["Exercise 1.1", "Exercise 1.2", "Exercise 1.3"]


@pytest.fixture()
def course(tmp_path, monkeypatch):
    """course.py with a course of one tiny chapter (its teacher edition and its source)."""
    module = _load_course()
    here = tmp_path / "notebooks"
    (here / "src").mkdir(parents=True)
    (here / "src" / f"{TINY}.py").write_text("# stands in for the source\n")
    nb = nbformat.v4.new_notebook()
    for tags, source in CELLS:
        cell = nbformat.v4.new_code_cell(source)
        if tags:
            cell.metadata["tags"] = tags
        nb.cells.append(cell)
    (here / f"{TINY}.ipynb").write_text(nbformat.writes(nb))
    monkeypatch.setattr(module, "HERE", here)
    monkeypatch.setattr(module, "SRC", here / "src")
    return module


def _student(course) -> dict:
    return course.student_edition(course.read_notebook(course.HERE / f"{TINY}.ipynb"))


def _answered(course, **answers) -> dict:
    """The student edition with some exercises answered (the teacher's answer unless given)."""
    nb = _student(course)
    exercises = [c for c in nb["cells"] if course.EXERCISE in course.tags(c)]
    teacher = [source for tags, source in CELLS if "solution" in tags]
    for key, cell, right in zip(["e1", "e2", "e3"], exercises, teacher):
        if key in answers:
            cell["source"] = right if answers[key] is True else answers[key]
    return nb


def _insert_after_check(course, nb: dict, k: int, source: str) -> dict:
    nb = copy.deepcopy(nb)
    checks = [i for i, c in enumerate(nb["cells"]) if course.CHECK in course.tags(c)]
    nb["cells"].insert(checks[k] + 1, nbformat.v4.new_code_cell(source))
    return nb


def _hand_in(folder: Path, student: str, nb: dict | str) -> None:
    (folder / student).mkdir(parents=True)
    text = nb if isinstance(nb, str) else json.dumps(nb)
    (folder / student / f"{TINY}.ipynb").write_text(text)


def test_every_kind_of_submission_scores_what_it_earned(course, tmp_path, capsys):
    right = _answered(course, e1=True, e2=True, e3=True)
    submissions = tmp_path / "submitted"
    _hand_in(submissions, "all_right", right)
    _hand_in(submissions, "blank", _student(course))
    _hand_in(submissions, "partly_wrong", _answered(
        course, e1="answer = 2 * 42.0", e2=True, e3="flag = False"))
    _hand_in(submissions, "crashes", _insert_after_check(
        course, right, 0, "import os\nos._exit(1)"))
    _hand_in(submissions, "hangs", _insert_after_check(
        course, right, 1, "import time\ntime.sleep(600)"))
    _hand_in(submissions, "rebinds_check", _insert_after_check(course, _student(course), 0, (
        "import lucid_viz.exercises as ex\n"
        "def check(*args, **kwargs):\n    print('✓ Exercise: right')\n"
        "check_function = run_check = ex.check = ex.check_function = ex.run_check = check\n"
        "ex.grade_check = check")))
    deleted = copy.deepcopy(right)
    deleted["cells"] = [c for c in deleted["cells"] if course.CHECK not in course.tags(c)]
    _hand_in(submissions, "deleted_checks", deleted)
    _hand_in(submissions, "not_a_notebook", "{ this is not json")

    out = tmp_path / "grades.csv"
    t0 = time.monotonic()
    course.grade(submissions, out, timeout=8)
    assert time.monotonic() - t0 < 120
    with out.open(newline="", encoding="utf-8") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert list(next(iter(rows.values()))) == ["student", *EXERCISES, "total", "notes"]

    def points(student):
        return [int(rows[student][e]) for e in EXERCISES], int(rows[student]["total"])

    assert points("all_right") == ([1, 1, 1], 3) and rows["all_right"]["notes"] == ""
    assert points("blank") == ([0, 0, 0], 0)
    assert points("partly_wrong") == ([0, 1, 0], 1)
    assert points("crashes") == ([1, 0, 0], 1)
    assert "the kernel died" in rows["crashes"]["notes"]
    assert points("hangs") == ([1, 1, 0], 2)
    assert "stopped at the time limit (8 s)" in rows["hangs"]["notes"]
    assert points("rebinds_check") == ([0, 0, 0], 0)
    assert points("deleted_checks") == ([1, 1, 1], 3)
    assert points("not_a_notebook") == ([0, 0, 0], 0)
    assert "not a readable notebook" in rows["not_a_notebook"]["notes"]
    report = capsys.readouterr().out
    assert "all_right/01_tiny.ipynb: 3 of 3 right" in report
    assert "hangs/01_tiny.ipynb: 2 of 3 right" in report


def test_the_grader_checks_against_the_teachers_values_not_the_students_edition(course, tmp_path):
    """A student who edits the packed check in their own notebook (to expect their answer)
    still gets graded against the teacher's check."""
    nb = _answered(course, e1="answer = 41.0", e2=True, e3=True)
    for cell in nb["cells"]:
        if "Exercise 1.1" in course.source_text(cell):
            from lucid_viz.exercises import pack

            cell["source"] = ("from lucid_viz.exercises import run_check\n"
                              f"run_check('Exercise 1.1', {pack('pass')!r})")
    _hand_in(tmp_path / "s", "clever", nb)
    right, notes = course.grade_notebook(tmp_path / "s" / "clever" / f"{TINY}.ipynb", TINY, 20)
    assert right == {"Exercise 1.1": False, "Exercise 1.2": True, "Exercise 1.3": True}
    assert notes == []


def test_grade_from_the_command_line_on_a_real_chapter(tmp_path):
    """Chapter 00 handed in blank and answered (the teacher's solutions in the student edition),
    in nbgrader's layout: submitted/<student>/<assignment>/<chapter>.ipynb."""
    course = _load_course()
    chapter = course.chapters()[0]
    teacher = course.read_notebook(NOTEBOOKS / f"{chapter}.ipynb")
    blank = course.student_edition(teacher)
    answered = copy.deepcopy(blank)
    for mine, theirs in zip(answered["cells"], teacher["cells"]):
        if course.SOLUTION in course.tags(theirs):
            mine["source"] = theirs["source"]
    for student, nb in [("ada", answered), ("bob", blank)]:
        folder = tmp_path / "submitted" / student / "week1"
        folder.mkdir(parents=True)
        (folder / f"{chapter}.ipynb").write_text(json.dumps(nb))
    out = tmp_path / "grades.csv"
    result = subprocess.run([sys.executable, str(NOTEBOOKS / "course.py"), "grade",
                             str(tmp_path / "submitted"), "--out", str(out), "--timeout", "120"],
                            capture_output=True, text=True, timeout=400)
    assert result.returncode == 0, result.stderr
    n = len(course.teacher_checks(chapter))
    with out.open(newline="", encoding="utf-8") as f:
        rows = {row["student"]: row for row in csv.DictReader(f)}
    assert rows["ada"]["total"] == str(n) and rows["bob"]["total"] == "0"
    assert f"ada/{chapter}.ipynb: {n} of {n} right" in result.stdout
    assert result.stdout.strip().endswith(f"grades of 2 students written to {out}")

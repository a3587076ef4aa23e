"""The course as a whole: every chapter's source and notebook agree, the sources are what
jupytext itself writes, and the chapters hang together (what each assumes, where it leads).

The exercises and the student edition are tested in tests/test_course_exercises.py.
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"


def _load_course():
    spec = importlib.util.spec_from_file_location("course", NOTEBOOKS / "course.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


course = _load_course()
CHAPTERS = course.chapters()
jupytext = pytest.importorskip("jupytext", reason="the notebooks extra installs jupytext")


def _cells(chapter: str) -> list[dict]:
    return json.loads((NOTEBOOKS / f"{chapter}.ipynb").read_text(encoding="utf-8"))["cells"]


def test_every_notebook_has_its_source_and_every_source_its_notebook():
    notebooks = sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb"))
    assert CHAPTERS, "no chapter sources in notebooks/src/"
    assert notebooks == CHAPTERS


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_notebook_matches_its_source(chapter):
    why = course.disagreement(chapter)
    assert why is None, (f"{chapter}: the notebook does not match notebooks/src/{chapter}.py: "
                         f"{why}; run `make notebooks NB={chapter[:2]}`")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_the_notebook_was_executed_and_stored_with_its_outputs(chapter):
    code = [c for c in _cells(chapter) if c["cell_type"] == "code"]
    not_run = [i for i, c in enumerate(code) if c.get("execution_count") is None]
    assert not not_run, f"{chapter}: code cells {not_run} were never executed (make notebooks)"
    counts = [c["execution_count"] for c in code]
    assert counts == list(range(1, len(code) + 1)), f"{chapter}: not run top to bottom in one go"
    errors = [c["id"] for c in code for o in c["outputs"] if o["output_type"] == "error"]
    assert not errors, f"{chapter}: stored errors in cells {errors}"


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_saving_the_notebook_in_jupyterlab_gives_the_source_back(chapter):
    """jupytext pairs each notebook with its source (notebooks/jupytext.toml): a teacher who
    saves the notebook in JupyterLab gets the source rewritten exactly as it is (no churn)."""
    from jupytext.config import load_jupytext_configuration_file

    config = load_jupytext_configuration_file(str(NOTEBOOKS / "jupytext.toml"))
    assert config.formats == ["ipynb,src//py:percent"]
    fmt = {"extension": ".py", "format_name": "percent",
           "notebook_metadata_filter": config.notebook_metadata_filter,
           "cell_metadata_filter": config.cell_metadata_filter}
    saved = jupytext.writes(jupytext.read(NOTEBOOKS / f"{chapter}.ipynb"), fmt=fmt)
    assert saved == (course.SRC / f"{chapter}.py").read_text(encoding="utf-8")

"""The course as a whole: every chapter's source and notebook agree, the sources are what
jupytext itself writes, and the chapters hang together (what each assumes, where it leads).

The exercises and the student edition are tested in tests/test_course_exercises.py.
"""

from __future__ import annotations

import importlib.util
import json
import re
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


def _markdown(chapter: str) -> list[str]:
    return [course.source_text(c) for c in _cells(chapter) if c["cell_type"] == "markdown"]


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


def test_the_pairing_in_jupyterlab_writes_sources_as_the_build_does():
    from jupytext.config import load_jupytext_configuration_file

    config = load_jupytext_configuration_file(str(NOTEBOOKS / "jupytext.toml"))
    assert not any(config.formats)  # each chapter stores its pairing: new notebooks stay unpaired
    for chapter in CHAPTERS:
        metadata = json.loads((NOTEBOOKS / f"{chapter}.ipynb").read_text())["metadata"]
        assert metadata["jupytext"]["formats"] == course.PAIRING == "ipynb,src//py:percent"
    assert config.notebook_metadata_filter == course.SOURCE_FORMAT["notebook_metadata_filter"]
    assert config.cell_metadata_filter == course.SOURCE_FORMAT["cell_metadata_filter"]


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_saving_the_notebook_in_jupyterlab_gives_the_source_back(chapter):
    """jupytext pairs each notebook with its source (notebooks/jupytext.toml): a teacher who
    saves the notebook in JupyterLab gets the source rewritten exactly as it is (no churn)."""
    saved = course.canonical_source(jupytext.read(NOTEBOOKS / f"{chapter}.ipynb"))
    assert saved == (course.SRC / f"{chapter}.py").read_text(encoding="utf-8"), (
        f"{chapter}: the source is not in the form jupytext writes; "
        f"`make notebooks NB={chapter[:2]}` rewrites it")


def test_students_see_no_internal_jargon():
    """"seed" means lucid.random.seed to a student: never a name for a part of the project's
    history; no issue numbers, style-guide rules or helper names either."""
    banned = re.compile(r"\bseeds?\s+0\d\d\b|\bseed'?s'?\s+(table|example|habit)|the seeds'|"
                        r"\bSTYLE\s*#|\bissue\s+\d+|NBVAL", re.I)
    found = []
    for chapter in CHAPTERS:
        for cell in _cells(chapter):
            for hit in banned.finditer(course.source_text(cell)):
                found.append(f"{chapter}: {hit.group(0)!r}")
    assert not found, found


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_says_what_it_assumes(chapter):
    first = _markdown(chapter)[0]
    assert re.search(r"\*\*You need:\*\*", first), (
        f"{chapter}: the first cell should say what the chapter assumes ('**You need:** ...')")


@pytest.mark.parametrize("chapter", CHAPTERS)
def test_a_chapter_ends_with_a_next_link(chapter):
    last = _markdown(chapter)[-1]
    i = CHAPTERS.index(chapter)
    following = CHAPTERS[i + 1] if i + 1 < len(CHAPTERS) else CHAPTERS[0]
    assert re.search(rf"\*\*Next:?\*\*:?.*\({re.escape(following)}\.ipynb\)", last, re.S), (
        f"{chapter}: the last cell should link to the next chapter, {following}.ipynb, "
        f"as '**Next:** [...]({following}.ipynb)'")
    for text in _markdown(chapter):
        assert "last chapter" not in text.lower(), f"{chapter} calls itself the last chapter"


def test_the_first_chapter_lists_the_whole_course():
    text = "\n".join(_markdown(CHAPTERS[0]))
    missing = [c for c in CHAPTERS[1:] if f"({c}.ipynb)" not in text]
    assert not missing, f"00 does not link to {missing}"


def test_links_between_chapters_point_at_chapters():
    broken = []
    for chapter in CHAPTERS:
        for text in _markdown(chapter):
            for target in re.findall(r"\]\(([^)#\s]+\.ipynb)", text):
                if not (NOTEBOOKS / target).exists():
                    broken.append(f"{chapter} -> {target}")
    assert not broken, broken

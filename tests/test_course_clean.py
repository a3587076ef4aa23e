"""The teacher edition stays clean: a chapter opened and closed in JupyterLab is unmodified (its
kernelspec is the one JupyterLab writes), a half-run chapter cannot slip in unnoticed (autosave
is off in `make lab`, and `course.py check` names a notebook saved half-run), and a new notebook
made in the lab leaves no stray source in notebooks/src/ (only the chapters are paired)."""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
NOTEBOOKS = REPO / "notebooks"
_spec = importlib.util.spec_from_file_location("course", NOTEBOOKS / "course.py")
course = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(course)
CHAPTERS = course.chapters()

jupytext = pytest.importorskip("jupytext", reason="the notebooks extra installs jupytext")
nbformat = pytest.importorskip("nbformat", reason="the notebooks extra installs nbformat")


def test_the_stored_kernelspec_is_the_one_jupyterlab_writes():
    from jupyter_client.kernelspec import KernelSpecManager

    spec = KernelSpecManager().get_kernel_spec("python3")
    written = {"name": "python3", "display_name": spec.display_name, "language": spec.language}
    assert course.KERNELSPEC == written
    for chapter in CHAPTERS:
        stored = course.read_notebook(NOTEBOOKS / f"{chapter}.ipynb")["metadata"]
        assert stored["kernelspec"] == written, f"{chapter}: run `make notebooks NB={chapter[:2]}`"


def _lab_copy(tmp_path: Path) -> Path:
    """notebooks/ as JupyterLab's jupytext sees it: its config, two chapters, their sources."""
    root = tmp_path / "notebooks"
    (root / "src").mkdir(parents=True)
    shutil.copy(NOTEBOOKS / "jupytext.toml", root)
    for chapter in CHAPTERS[:2]:
        shutil.copy(NOTEBOOKS / f"{chapter}.ipynb", root)
        shutil.copy(NOTEBOOKS / "src" / f"{chapter}.py", root / "src")
    return root


def test_saving_a_chapter_in_the_lab_writes_its_source_and_changes_nothing(tmp_path):
    from jupytext import TextFileContentsManager

    root = _lab_copy(tmp_path)
    manager = TextFileContentsManager(root_dir=str(root))
    chapter = CHAPTERS[1]
    before = {p: p.read_text(encoding="utf-8") for p in (root / f"{chapter}.ipynb",
                                                         root / "src" / f"{chapter}.py")}
    model = manager.get(f"{chapter}.ipynb")
    manager.save(model, f"{chapter}.ipynb")
    assert (root / "src" / f"{chapter}.py").read_text(encoding="utf-8") == \
        before[root / "src" / f"{chapter}.py"]
    saved = json.loads((root / f"{chapter}.ipynb").read_text(encoding="utf-8"))
    assert saved["metadata"] == json.loads(before[root / f"{chapter}.ipynb"])["metadata"]


def test_a_new_notebook_in_the_lab_leaves_no_stray_source(tmp_path):
    from jupytext import TextFileContentsManager

    root = _lab_copy(tmp_path)
    manager = TextFileContentsManager(root_dir=str(root))
    model = manager.new_untitled(type="notebook")
    nb = manager.get(model["path"])
    nb["content"].cells.append(nbformat.v4.new_code_cell("1 + 1"))
    manager.save(nb, model["path"])
    assert (root / model["path"]).exists()
    assert sorted(p.name for p in (root / "src").iterdir()) == [f"{c}.py" for c in CHAPTERS[:2]]


def test_a_chapter_saved_half_run_is_named_by_check(tmp_path, monkeypatch):
    chapter = CHAPTERS[0]
    nb = course.read_notebook(NOTEBOOKS / f"{chapter}.ipynb")
    assert course.not_run(nb) is None
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    for cell in code[3:]:  # Run All interrupted after three cells, then saved
        cell["outputs"], cell["execution_count"] = [], None
    here = tmp_path / "notebooks"
    shutil.copytree(NOTEBOOKS / "src", here / "src")
    for other in CHAPTERS:
        shutil.copy(NOTEBOOKS / f"{other}.ipynb", here)
    (here / f"{chapter}.ipynb").write_text(json.dumps(nb), encoding="utf-8")
    monkeypatch.setattr(course, "HERE", here)
    monkeypatch.setattr(course, "SRC", here / "src")
    first = next(i for i, c in enumerate(nb["cells"]) if c is code[3])
    assert course.disagreement(chapter) == (
        f"{len(code) - 3} of {len(code)} code cells have no outputs (not run), the first is "
        f"cell {first}")
    assert course.main(["check"]) == 1


def test_make_lab_turns_autosave_off_on_the_teacher_edition_only():
    overrides = json.loads((NOTEBOOKS / ".lab" / "overrides.json").read_text(encoding="utf-8"))
    assert overrides == {"@jupyterlab/docmanager-extension:plugin": {"autosave": False}}
    make = shutil.which("make")
    if make is None:
        pytest.skip("make is not installed")

    def lab_command(*args):
        out = subprocess.run([make, "-n", "lab", *args], cwd=REPO,
                             capture_output=True, text=True, check=True).stdout
        return next(line for line in out.splitlines() if "jupyter lab" in line)

    assert f"--LabApp.app_settings_dir={NOTEBOOKS}/.lab" in lab_command()
    assert "app_settings_dir" not in lab_command("LAB_DIR=student")


def test_the_student_edition_is_not_paired_with_sources():
    nb = course.student_edition(course.read_notebook(NOTEBOOKS / f"{CHAPTERS[0]}.ipynb"))
    assert "jupytext" not in nb["metadata"]
    assert nb["metadata"]["kernelspec"] == course.KERNELSPEC

"""The course: build the notebooks from their sources, check the pairs, write the student edition.

Every chapter is one source file, ``notebooks/src/<chapter>.py``, in jupytext's "percent" format:
a cell starts at a ``# %%`` line, a markdown cell is ``# %% [markdown]`` followed by its text as
comments, and a cell's tags sit on its ``# %%`` line (``# %% tags=["solution"]``).  The notebook
``notebooks/<chapter>.ipynb`` is generated from it, executed, and stored with its outputs: that
is the teacher edition, run by ``make test``.  Three cell tags matter:

* ``nbval-check-output`` -- nbval compares the cell's stored output when the tests run;
* ``solution`` -- the teacher's answer to an exercise.  The student edition replaces it with a
  stub (see :func:`stub`);
* ``check`` -- the self-check that follows every solution: it calls :mod:`lucid_viz.exercises`,
  which passes on the solution and fails, with a hint, on the stub;
* ``answer`` -- a cell after a check that shows or discusses the answer: the student edition
  leaves it out.

Usage (the Makefile's ``notebooks`` and ``student`` targets call it)::

    python notebooks/course.py build [CHAPTER ...] [--all] [--no-run]
    python notebooks/course.py check
    python notebooks/course.py student [--out DIR]
    python notebooks/course.py grade SUBMISSIONS [--out grades.csv] [--timeout SECONDS]

``build`` regenerates and executes the notebooks whose source changed (their cells no longer
match), or the chapters named (``08`` or ``08_training_an_mlp``), or all of them with ``--all``.
``check`` lists the chapters whose source and notebook disagree, or whose notebook was saved
half-run.  ``student`` writes the student edition (default ``student/`` at the repository root).
``grade`` executes the students' notebooks (``SUBMISSIONS/<student>/<chapter>.ipynb``) and
checks every exercise against the teacher's checks: see :func:`grade`.
"""

from __future__ import annotations

import argparse
import ast
import copy
import difflib
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent  # notebooks/
SRC = HERE / "src"
REPO = HERE.parent
STUDENT = REPO / "student"

SOLUTION, CHECK, NBVAL = "solution", "check", "nbval-check-output"
ANSWER = "answer"  # a cell that shows or discusses an exercise's answer: not in the student edition
EXERCISE = "exercise"  # what a solution cell is tagged in the student edition
BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
TODO_CODE = 'raise NotImplementedError("TODO: your code here")'
CHECK_LINE = "# Check your answer: run this cell."  # the first line of a student's check cell
RUN_CHECK = "from lucid_viz.exercises import run_check"
CHECK_NAMES = ("check", "check_function", "check_grad")

#: the kernel as JupyterLab writes it into a notebook it saves (ipykernel's own kernelspec), so
#: that opening and closing a chapter leaves it unmodified
KERNELSPEC = {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}
#: the pairing of a chapter with its source, stored in the chapter (not in jupytext.toml, so that
#: a new notebook made in the lab is not paired and leaves no stray source in src/)
PAIRING = "ipynb,src//py:percent"
#: What the kernels that run the chapters get in their environment: one BLAS/OpenMP thread.
#: NumPy's BLAS otherwise starts a thread per core and spins them while they wait for each
#: other; on a busy machine (a shared JupyterHub, a laptop doing other work) those threads fight
#: the other processes and a chapter takes several times longer, while the course's matrices
#: are too small to gain from a second thread. The root conftest.py and `make lab` set the same.
KERNEL_ENV = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: how jupytext writes a source: what notebooks/jupytext.toml says for the pairing in JupyterLab
SOURCE_FORMAT = {"extension": ".py", "format_name": "percent",
                 "notebook_metadata_filter": "-all", "cell_metadata_filter": "tags,-all"}
TIMEOUT_S = 300  # per cell; a chapter should take well under a minute in all


# ---------------------------------------------------------------------------------------------
# chapters, sources and notebooks


def chapters() -> list[str]:
    """The chapter names (file stems), in course order: every source in notebooks/src/."""
    return sorted(p.stem for p in SRC.glob("[0-9]*.py"))


def resolve(names: list[str]) -> list[str]:
    """Chapter names from what a user typed: ``08``, ``08_training_an_mlp`` or its file name."""
    known, out = chapters(), []
    for name in names:
        stem = Path(name).stem
        found = [c for c in known if c == stem or c.split("_", 1)[0] == stem]
        if len(found) != 1:
            raise SystemExit(f"course.py: no single chapter is called {name!r}; the chapters "
                             f"are {', '.join(known)}")
        out.append(found[0])
    return out


def read_source(chapter: str) -> Any:
    """The chapter's source as a notebook (cells, markdown, tags), without outputs."""
    import jupytext

    nb = jupytext.read(SRC / f"{chapter}.py", fmt="py:percent")
    nb.nbformat, nb.nbformat_minor = 4, 5
    nb.metadata = {  # what JupyterLab's jupytext writes on save too, so a save changes nothing
        "jupytext": {"formats": PAIRING, **{k: SOURCE_FORMAT[k] for k in (
            "cell_metadata_filter", "notebook_metadata_filter")}},
        "kernelspec": dict(KERNELSPEC), "language_info": {"name": "python"}}
    for cell in nb.cells:
        tags = cell.metadata.get("tags")
        cell.metadata = {"tags": list(tags)} if tags else {}
    return nb


def canonical_source(nb: Any) -> str:
    """The text jupytext writes for a notebook's cells: what JupyterLab saves into the source."""
    import jupytext

    return jupytext.writes(nb, fmt=SOURCE_FORMAT)


def read_notebook(path: Path) -> dict:
    """A stored notebook as plain JSON (no validation: the tests say what is wrong)."""
    return json.loads(path.read_text(encoding="utf-8"))


def source_text(cell: Any) -> str:
    src = cell["source"]
    return src if isinstance(src, str) else "".join(src)


def tags(cell: Any) -> list[str]:
    return list(cell.get("metadata", {}).get("tags", []))


def cell_keys(cells: list) -> list[tuple[str, str, tuple[str, ...]]]:
    """What a source and its notebook must agree on: each cell's type, text and tags."""
    return [(c["cell_type"], source_text(c), tuple(tags(c))) for c in cells]


def disagreement(chapter: str) -> str | None:
    """Why the chapter's notebook does not match its source, or None when it does."""
    path = HERE / f"{chapter}.ipynb"
    if not path.exists():
        return f"{path.name} does not exist"
    source, stored = read_source(chapter), read_notebook(path)
    for key in ("kernelspec", "jupytext"):
        if stored.get("metadata", {}).get(key) != source.metadata[key]:
            return f"its {key} metadata is not {source.metadata[key]}"
    ours = cell_keys(source.cells)
    theirs = cell_keys(stored["cells"])
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            what = ("type" if a[0] != b[0] else "text" if a[1] != b[1] else "tags")
            return (f"cell {i} differs in its {what} (source: {a[1][:60]!r}..., "
                    f"notebook: {b[1][:60]!r}...)")
    if len(ours) != len(theirs):
        return f"the source has {len(ours)} cells, the notebook {len(theirs)}"
    return not_run(stored)


def not_run(nb: dict) -> str | None:
    """Why a stored notebook is not fully executed (a Run All interrupted and saved, say)."""
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    missing = [i for i, c in enumerate(nb["cells"])
               if c["cell_type"] == "code" and c.get("execution_count") is None]
    if missing:
        return (f"{len(missing)} of {len(code)} code cells have no outputs (not run), the first "
                f"is cell {missing[0]}")
    return None


# ---------------------------------------------------------------------------------------------
# build: source -> executed notebook


def _keep_ids(new_cells: list, old_cells: list, chapter: str) -> None:
    """Give every cell the id it had in the previous notebook: unchanged cells keep theirs, a
    cell edited in place inherits its predecessor's, a new cell gets one derived from its text."""
    old = [(c["cell_type"], source_text(c)) for c in old_cells]
    new = [(c["cell_type"], source_text(c)) for c in new_cells]
    ids: list[str | None] = [None] * len(new_cells)
    matcher = difflib.SequenceMatcher(a=old, b=new, autojunk=False)
    for op, a0, a1, b0, b1 in matcher.get_opcodes():
        if op in ("equal", "replace"):
            for i, j in zip(range(a0, a1), range(b0, b1)):
                if old[i][0] == new[j][0]:
                    ids[j] = old_cells[i].get("id")
    used = {i for i in ids if i}
    prefix = chapter.split("_", 1)[0]
    for j, cell in enumerate(new_cells):
        if ids[j] is None:
            digest = hashlib.sha1(source_text(cell).encode()).hexdigest()
            k, candidate = 8, f"{prefix}-{digest[:8]}"
            while candidate in used:
                k += 1
                candidate = f"{prefix}-{digest[:k]}"
            ids[j] = candidate
            used.add(candidate)
        cell["id"] = ids[j]


def _stable_widget_ids(nb: Any, text: str, chapter: str) -> str:
    """Replace the random ids of the widget models (progress bars, the stepper) in ``text``, the
    serialised ``nb``, by ids derived from the chapter and the order the cells show them in, so
    rebuilding an unchanged notebook changes no ids."""
    state = (nb.metadata.get("widgets", {})
             .get("application/vnd.jupyter.widget-state+json", {}).get("state", {}))
    order: list[str] = []

    def visit(model_id: str | None) -> None:  # a model, then the models it refers to
        if model_id in state and model_id not in order:
            order.append(model_id)
            refs = json.dumps(state[model_id].get("state", {}), sort_keys=True)
            for ref in re.findall(r"IPY_MODEL_([0-9a-f]{32})", refs):
                visit(ref)

    for cell in nb.cells:
        for output in cell.get("outputs", []):
            view = output.get("data", {}).get("application/vnd.jupyter.widget-view+json", {})
            visit(view.get("model_id"))
    for model_id in sorted(state, key=lambda k: json.dumps(state[k], sort_keys=True)):
        visit(model_id)  # models no output shows, in an order that does not depend on their ids
    for i, old in enumerate(order):
        text = text.replace(old, hashlib.sha1(f"{chapter}:{i}".encode()).hexdigest()[:32])
    return _dumps(json.loads(text))  # written again: the models sorted by their new ids


def _write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to a temporary file beside ``path`` and rename it into place."""
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _dumps(nb: Any) -> str:
    """A notebook as nbformat writes it (so diffs stay small), checked against the schema."""
    import nbformat

    nb = nbformat.from_dict(nb)
    nbformat.validate(nb)
    return nbformat.writes(nb) + "\n"


def build(chapter: str, run: bool = True) -> float:
    """Regenerate notebooks/<chapter>.ipynb from its source and (unless ``run=False``) execute it
    in a fresh kernel from notebooks/, as JupyterLab would.  The source is rewritten in the form
    jupytext gives it (blank lines between cells), so saving in JupyterLab changes nothing.
    Returns the seconds it took."""
    import nbformat
    from nbclient import NotebookClient

    t0 = time.perf_counter()
    nb = nbformat.from_dict(read_source(chapter))
    src = SRC / f"{chapter}.py"
    text = canonical_source(nb)  # the same cells; only the blank lines between them may move
    if text != src.read_text(encoding="utf-8"):
        _write_atomic(src, text)
    path = HERE / f"{chapter}.ipynb"
    old_cells = read_notebook(path)["cells"] if path.exists() else []
    _keep_ids(nb.cells, old_cells, chapter)
    if run:
        NotebookClient(nb, kernel_name="python3", timeout=TIMEOUT_S, record_timing=False,
                       coalesce_streams=True,  # one stream output per cell, however it arrived
                       resources={"metadata": {"path": str(HERE)}}
                       ).execute(env={**os.environ, **KERNEL_ENV})
    _write_atomic(path, _stable_widget_ids(nb, _dumps(nb), chapter))
    return time.perf_counter() - t0


# ---------------------------------------------------------------------------------------------
# the student edition


class StubError(ValueError):
    """A solution cell the student edition cannot turn into a stub (says which line, and why)."""


def _lines(source: str, first: int, last: int) -> list[str]:
    """Lines ``first``..``last`` of ``source`` (1-based, inclusive), as ast counts them."""
    return source.split("\n")[first - 1:last]


def _stub_def(source: str, node: ast.FunctionDef | ast.AsyncFunctionDef) -> list[str]:
    """A function's decorators, signature and docstring, with ``raise NotImplementedError``."""
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    body0 = node.body[0]
    if body0.lineno == node.lineno:
        raise StubError(f"line {node.lineno}: write the body of {node.name}() on its own lines")
    has_doc = (isinstance(body0, ast.Expr) and isinstance(body0.value, ast.Constant)
               and isinstance(body0.value.value, str))
    last = body0.end_lineno if has_doc else body0.lineno - 1
    indent = " " * body0.col_offset
    return _lines(source, first, last) + [indent + TODO_CODE]


def _stub_class(source: str, node: ast.ClassDef) -> list[str]:
    """A class's header and docstring, and a stub of each of its methods."""
    body0 = node.body[0]
    first = min([d.lineno for d in node.decorator_list] + [node.lineno])
    has_doc = (isinstance(body0, ast.Expr) and isinstance(body0.value, ast.Constant)
               and isinstance(body0.value.value, str))
    out = _lines(source, first, body0.end_lineno if has_doc else body0.lineno - 1)
    for item in node.body[1:] if has_doc else node.body:
        if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += [""] + _stub_def(source, item)
        else:  # class attributes are part of what the student writes
            continue
    return out


def stub(source: str) -> str:
    """The student's version of a solution cell.

    * The lines between ``# BEGIN SOLUTION`` and ``# END SOLUTION`` (markers included) become
      one ``raise NotImplementedError("TODO: your code here")`` at the marker's indentation;
      the rest of the cell is kept as it is.
    * Without markers, each top-level statement becomes its stub: ``answer = <expression>``
      becomes ``answer = ...  # TODO: your answer``; a function keeps its signature and
      docstring, and its body becomes the ``raise``; a class keeps its header, docstring and
      method signatures; imports stay.  Any other statement is an error (use the markers).
    """
    lines = source.split("\n")
    if any(line.strip() in (BEGIN, END) for line in lines):
        out, inside = [], False
        for n, line in enumerate(lines, 1):
            if line.strip() == BEGIN:
                if inside:
                    raise StubError(f"line {n}: {BEGIN!r} inside another solution region")
                inside = True
                out.append(line[:len(line) - len(line.lstrip())] + TODO_CODE)
            elif line.strip() == END:
                if not inside:
                    raise StubError(f"line {n}: {END!r} without {BEGIN!r}")
                inside = False
            elif not inside:
                out.append(line)
        if inside:
            raise StubError(f"{BEGIN!r} without {END!r}")
        return "\n".join(out)

    out = []
    for node in ast.parse(source).body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out += _lines(source, node.lineno, node.end_lineno)
        elif isinstance(node, ast.Assign):
            names = " = ".join(ast.get_source_segment(source, t) for t in node.targets)
            last = node.targets[-1]  # a, b = ...: as many values as names, so the stub unpacks
            values = ", ".join(["..."] * len(last.elts)) if isinstance(last, ast.Tuple) else "..."
            out.append(f"{names} = {values}  # TODO: your answer")
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out += ([""] if out else []) + _stub_def(source, node)
        elif isinstance(node, ast.ClassDef):
            out += ([""] if out else []) + _stub_class(source, node)
        else:
            raise StubError(
                f"line {node.lineno}: a solution cell without {BEGIN!r} markers may hold only "
                f"assignments, functions, classes and imports, not {type(node).__name__}; "
                "put the markers around the part students write")
    return "\n".join(out)


def exercise_name(check_source: str) -> str:
    """The exercise a check cell checks: the name its first ``check*`` call gives, without a
    part in brackets ("Exercise 5.1 (MACs)" is part of "Exercise 5.1")."""
    for node in ast.walk(ast.parse(check_source)):
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in CHECK_NAMES and node.args
                and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)):
            return re.sub(r"\s*\(.*\)$", "", node.args[0].value)
    raise StubError(f"a check cell calls none of {', '.join(CHECK_NAMES)} with the exercise's "
                    f"name first: {check_source[:60]!r}...")


def student_check(check_source: str) -> str:
    """A check cell as the student edition has it: the teacher's code packed (so that the
    expected value it computes is not in plain sight) and run in a scope of its own, so that
    nothing it computes stays in the notebook's namespace."""
    from lucid_viz.exercises import pack

    name = exercise_name(check_source)
    return f"{CHECK_LINE}\n{RUN_CHECK}\nrun_check({name!r}, {pack(check_source)!r})"


def student_edition(nb: dict) -> dict:
    """The student edition of a teacher notebook: every solution becomes a stub (tagged
    ``exercise``), solutions and self-checks lose their outputs, a self-check's code is packed
    (see :func:`student_check`) and folded away, the cells tagged ``answer`` (those that show or
    discuss an answer) are left out, test tags are dropped."""
    nb = copy.deepcopy(nb)
    nb.get("metadata", {}).pop("jupytext", None)  # a student's notebook is not paired with a source
    nb["cells"] = [c for c in nb["cells"] if ANSWER not in tags(c)]
    for cell in nb["cells"]:
        cell_tags = tags(cell)
        if SOLUTION in cell_tags:
            cell["source"] = stub(source_text(cell))
            cell_tags = [EXERCISE if t == SOLUTION else t for t in cell_tags]
        if cell["cell_type"] == "code" and (EXERCISE in cell_tags or CHECK in cell_tags):
            cell["outputs"], cell["execution_count"] = [], None
        if CHECK in cell_tags:  # packed, and run in a scope of its own
            cell["source"] = student_check(source_text(cell))
            cell.setdefault("metadata", {}).setdefault("jupyter", {})["source_hidden"] = True
        cell_tags = [t for t in cell_tags if t != NBVAL]
        if cell_tags:
            cell.setdefault("metadata", {})["tags"] = cell_tags
        else:
            cell.get("metadata", {}).pop("tags", None)
    return nb


def write_student(out: Path = STUDENT, names: list[str] | None = None) -> list[Path]:
    """Write the student edition of the chapters (default: all) into ``out``.  Refuses when a
    notebook is out of date with its source: the edition is made from the stored notebooks."""
    names = names or chapters()
    stale = {c: why for c in names if (why := disagreement(c))}
    if stale:
        listing = "\n".join(f"  {c}: {why}" for c, why in stale.items())
        raise SystemExit(f"course.py: these notebooks do not match their sources; run "
                         f"`make notebooks` first:\n{listing}")
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for chapter in names:
        nb = student_edition(read_notebook(HERE / f"{chapter}.ipynb"))
        path = out / f"{chapter}.ipynb"
        _write_atomic(path, json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
        written.append(path)
    return written


# ---------------------------------------------------------------------------------------------
# grade: the students' notebooks, executed, checked against the teacher's checks

GRADE_TIMEOUT_S = 300  # per notebook: a chapter runs in well under a minute


def teacher_checks(chapter: str) -> list[tuple[str, str]]:
    """Every exercise of a chapter as (name, the teacher's check code), in order: the expected
    values a submission is graded against, kept with the teacher edition."""
    nb = read_notebook(HERE / f"{chapter}.ipynb")
    return [(exercise_name(source_text(c)), source_text(c)) for c in nb["cells"]
            if c["cell_type"] == "code" and CHECK in tags(c)]


def _grader_cell(name: str, code: str, token: str) -> str:
    """The cell that grades one exercise inside a student's kernel: a fresh copy of
    lucid_viz.exercises (whatever the notebook did to the one it imported, or to ``check``)
    runs the teacher's check and prints ``token`` and the result."""
    from lucid_viz import exercises

    return "\n".join([
        "import importlib.util as _lucid_iu",
        f"_lucid_spec = _lucid_iu.spec_from_file_location('_lucid_grading', "
        f"{exercises.__file__!r})",
        "_lucid_grading = _lucid_iu.module_from_spec(_lucid_spec)",
        "_lucid_spec.loader.exec_module(_lucid_grading)",
        "del _lucid_iu, _lucid_spec",
        f"_lucid_grading.grade_check({name!r}, {exercises.pack(code)!r}, {token!r})"])


def _submitted_check(cell: dict) -> str | None:
    """The exercise a submitted cell checks (its ``run_check`` call), or None."""
    if cell.get("cell_type") != "code":
        return None
    found = re.search(r"run_check\(\s*(['\"])(.+?)\1", source_text(cell))
    return found.group(2) if found else None


def grading_notebook(submitted: dict, chapter: str, token: str) -> Any:
    """The submission with every check cell replaced by a grader cell (a check the student
    deleted is added at the end), and no outputs."""
    import nbformat

    checks = dict(teacher_checks(chapter))
    cells, seen = [], set()
    for cell in submitted.get("cells", []):
        name = _submitted_check(cell)
        if name is not None or CHECK in tags(cell):
            if name in checks and name not in seen:
                seen.add(name)
                cells.append(nbformat.v4.new_code_cell(_grader_cell(name, checks[name], token)))
            continue
        if cell.get("cell_type") == "code":
            cells.append(nbformat.v4.new_code_cell(source_text(cell)))
        else:
            cells.append(nbformat.v4.new_markdown_cell(source_text(cell)))
    for name, code in checks.items():
        if name not in seen:
            cells.append(nbformat.v4.new_code_cell(_grader_cell(name, code, token)))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = dict(KERNELSPEC)
    return nb


def grade_notebook(path: Path, chapter: str, timeout: float = GRADE_TIMEOUT_S
                   ) -> tuple[dict[str, bool], list[str]]:
    """Execute a student's notebook in a kernel of its own, in a folder of its own, within
    ``timeout`` seconds in all, and return which exercises are right and what went wrong (a
    crash, a hang, a dead kernel...).  It never raises for what the notebook does."""
    import secrets

    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    try:
        submitted = read_notebook(path)
    except (OSError, ValueError) as err:
        return {}, [f"{path.name}: not a readable notebook ({err})"]
    token = secrets.token_hex(16)  # a notebook cannot print a result line without it
    nb = grading_notebook(submitted, chapter, token)
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="lucid-grade-") as workdir:
        client = NotebookClient(nb, kernel_name="python3", timeout=int(timeout),
                                allow_errors=True, record_timing=False,
                                resources={"metadata": {"path": workdir}})
        try:  # the kernel's own warnings (stderr) would only clutter the report
            with client.setup_kernel(stderr=subprocess.DEVNULL,
                                     env={**os.environ, **KERNEL_ENV}):
                deadline = time.monotonic() + timeout  # the notebook's time, not the start's
                for index, cell in enumerate(nb.cells):
                    left = deadline - time.monotonic()
                    if left < 1:
                        raise CellTimeoutError(f"cell {index}")
                    client.timeout = int(left)
                    client.execute_cell(cell, index)
        except CellTimeoutError:
            notes.append(f"{path.name}: stopped at the time limit ({timeout:g} s)")
        except DeadKernelError:
            notes.append(f"{path.name}: the kernel died (the notebook crashed it)")
        except Exception as err:  # noqa: BLE001 (one notebook never stops the gradebook)
            notes.append(f"{path.name}: could not be run: {type(err).__name__}: {err}")
    errors = sum(1 for c in nb.cells for o in c.get("outputs", [])
                 if o.get("output_type") == "error")
    if errors:
        notes.append(f"{path.name}: {errors} cells raised an error")
    right: dict[str, bool] = {}
    for cell in nb.cells:
        for out in cell.get("outputs", []):
            for line in out.get("text", "").splitlines() if out.get("name") == "stdout" else []:
                if line.startswith(token + " "):
                    result = json.loads(line[len(token) + 1:])
                    right[result["name"]] = bool(result["right"])
    return right, notes


def grade(submissions: Path, out: Path, timeout: float = GRADE_TIMEOUT_S) -> list[dict]:
    """Grade every student's notebooks: ``submissions/<student>/<chapter>.ipynb`` (nbgrader's
    layout; deeper folders are searched too).  Writes ``out`` (CSV): one row per student, one
    column per exercise of the chapters handed in (1 point each), the total, and notes."""
    import csv

    known = set(chapters())
    students = sorted(p for p in submissions.iterdir() if p.is_dir())
    if not students:
        raise SystemExit(f"course.py grade: {submissions} has no student folders")
    handed_in = {s.name: sorted(p for p in s.rglob("*.ipynb")
                                if ".ipynb_checkpoints" not in p.parts) for s in students}
    graded = sorted({p.stem for paths in handed_in.values() for p in paths} & known)
    columns = [name for chapter in graded for name, _ in teacher_checks(chapter)]
    rows = []
    for student in students:
        row: dict[str, Any] = {"student": student.name, **dict.fromkeys(columns, 0)}
        notes = []
        for path in handed_in[student.name]:
            if path.stem not in known:
                notes.append(f"{path.name}: not a chapter of the course, not graded")
                continue
            t0 = time.perf_counter()
            right, problems = grade_notebook(path, path.stem, timeout)
            notes += problems
            for name, ok in right.items():
                row[name] = int(ok)
            print(f"{student.name}/{path.name}: {sum(right.values())} of "
                  f"{len(teacher_checks(path.stem))} right ({time.perf_counter() - t0:.0f} s)"
                  + "".join(f"\n  {n}" for n in problems), flush=True)
        row["total"] = sum(row[c] for c in columns)
        row["notes"] = "; ".join(notes)
        rows.append(row)
    with out.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=["student", *columns, "total", "notes"])
        writer.writeheader()
        writer.writerows(rows)
    return rows


# ---------------------------------------------------------------------------------------------
# command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="course.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="regenerate (and execute) notebooks from their sources")
    b.add_argument("chapters", nargs="*", help="e.g. 08 or 08_training_an_mlp (default: the "
                                               "chapters whose source changed)")
    b.add_argument("--all", action="store_true", help="rebuild every chapter")
    b.add_argument("--no-run", action="store_true", help="write the cells, do not execute")
    sub.add_parser("check", help="list the notebooks that disagree with their sources or "
                                 "were not run to the end")
    s = sub.add_parser("student", help="write the student edition")
    s.add_argument("--out", type=Path, default=STUDENT, help="folder (default: student/)")
    g = sub.add_parser("grade", help="grade the students' notebooks into a CSV gradebook")
    g.add_argument("submissions", type=Path, help="one folder per student, holding that "
                                                  "student's chapter notebooks")
    g.add_argument("--out", type=Path, default=Path("grades.csv"), help="the CSV to write")
    g.add_argument("--timeout", type=float, default=GRADE_TIMEOUT_S,
                   help=f"seconds per notebook (default {GRADE_TIMEOUT_S})")
    args = parser.parse_args(argv)

    if args.command == "grade":
        rows = grade(args.submissions, args.out, args.timeout)
        print(f"grades of {len(rows)} students written to {args.out}")
        return 0

    if args.command == "build":
        if args.all:
            todo = chapters()
        elif args.chapters:
            todo = resolve(args.chapters)
        else:
            todo = [c for c in chapters() if disagreement(c)]
            if not todo:
                print("every notebook matches its source; name a chapter (or --all) to rebuild")
        for chapter in todo:
            seconds = build(chapter, run=not args.no_run)
            what = f"executed in {seconds:.1f} s" if not args.no_run else "written, not run"
            print(f"{chapter}.ipynb: {what}")
        return 0
    if args.command == "check":
        bad = {c: why for c in chapters() if (why := disagreement(c))}
        for chapter, why in bad.items():
            print(f"{chapter}: {why}")
        if bad:
            print("run `make notebooks` to regenerate them")
        return 1 if bad else 0
    written = write_student(args.out)
    print(f"student edition: {len(written)} notebooks in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

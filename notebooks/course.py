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
  which passes on the solution and fails, with a hint, on the stub.

Usage (the Makefile's ``notebooks`` and ``student`` targets call it)::

    python notebooks/course.py build [CHAPTER ...] [--all] [--no-run]
    python notebooks/course.py check
    python notebooks/course.py student [--out DIR]

``build`` regenerates and executes the notebooks whose source changed (their cells no longer
match), or the chapters named (``08`` or ``08_training_an_mlp``), or all of them with ``--all``.
``check`` lists the chapters whose source and notebook disagree.  ``student`` writes the
student edition (default ``student/`` at the repository root).
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
EXERCISE = "exercise"  # what a solution cell is tagged in the student edition
BEGIN, END = "# BEGIN SOLUTION", "# END SOLUTION"
TODO_CODE = 'raise NotImplementedError("TODO: your code here")'
CHECK_LINE = "# Check your answer: run this cell."  # what a folded check cell shows

KERNELSPEC = {"name": "python3", "display_name": "Python 3", "language": "python"}

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
        "jupytext": {k: SOURCE_FORMAT[k] for k in ("cell_metadata_filter",
                                                    "notebook_metadata_filter")},
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
    ours = cell_keys(read_source(chapter).cells)
    theirs = cell_keys(read_notebook(path)["cells"])
    for i, (a, b) in enumerate(zip(ours, theirs)):
        if a != b:
            what = ("type" if a[0] != b[0] else "text" if a[1] != b[1] else "tags")
            return (f"cell {i} differs in its {what} (source: {a[1][:60]!r}..., "
                    f"notebook: {b[1][:60]!r}...)")
    if len(ours) != len(theirs):
        return f"the source has {len(ours)} cells, the notebook {len(theirs)}"
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


def student_edition(nb: dict) -> dict:
    """The student edition of a teacher notebook: every solution becomes a stub (tagged
    ``exercise``), solutions and self-checks lose their outputs, the self-checks' code is folded
    away (JupyterLab shows a bar to click), test tags are dropped."""
    nb = copy.deepcopy(nb)
    for cell in nb["cells"]:
        cell_tags = tags(cell)
        if SOLUTION in cell_tags:
            cell["source"] = stub(source_text(cell))
            cell_tags = [EXERCISE if t == SOLUTION else t for t in cell_tags]
        if cell["cell_type"] == "code" and (EXERCISE in cell_tags or CHECK in cell_tags):
            cell["outputs"], cell["execution_count"] = [], None
        if CHECK in cell_tags:  # folded: a student sees the verdict (and the hint) when it runs
            cell["source"] = CHECK_LINE + "\n" + source_text(cell)
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
# command line


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="course.py", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="regenerate (and execute) notebooks from their sources")
    b.add_argument("chapters", nargs="*", help="e.g. 08 or 08_training_an_mlp (default: the "
                                               "chapters whose source changed)")
    b.add_argument("--all", action="store_true", help="rebuild every chapter")
    b.add_argument("--no-run", action="store_true", help="write the cells, do not execute")
    sub.add_parser("check", help="list the notebooks that disagree with their sources")
    s = sub.add_parser("student", help="write the student edition")
    s.add_argument("--out", type=Path, default=STUDENT, help="folder (default: student/)")
    args = parser.parse_args(argv)

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

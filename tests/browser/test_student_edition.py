"""A student works the student edition in a real browser: JupyterLab + headless Chromium.

The student edition of chapter 02 is written (as `make student` does) and opened in JupyterLab.
Run All stops at the first exercise's check, which shows two short lines (what is off, and the
hint; no traceback, no answer). The student then types an answer into the exercise cell, runs
it and the check again, and the check says right. Skips like tests/browser/test_jupyterlab.py.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from .test_jupyterlab import (  # noqa: F401 (chromium is a fixture used by name)
    _NOTEBOOK_READY,
    _RUN_ALL,
    REPO,
    chromium,
    lab_page,
    serve,
)

pytestmark = pytest.mark.browser

CHAPTER = "02_autograd_and_the_dag"
ANSWER = "dz_dx = 16.5"  # Exercise 2.1: b = x², z = b·b + b, dz/dx at x = 1.5
WRONG = "dz_dx = 33.0"  # twice the answer: a mistake the check names

_spec = importlib.util.spec_from_file_location("course", REPO / "notebooks" / "course.py")
course = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(course)

# Run All stops at the first cell that raises; wait for that, with the kernel idle again.
_STOPPED = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    return panel.sessionContext.session.kernel.status === 'idle'
        && panel.content.widgets.some(c => c.model.type === 'code'
            && c.model.outputs.toJSON().some(o => o.output_type === 'error'));
}"""
# Each code cell: its tags, whether it ran, whether it failed, and what the page shows for it.
_CELLS = """() => window.jupyterapp.shell.currentWidget.content.widgets
    .map((c, i) => ({i, c}))
    .filter(({c}) => c.model.type === 'code')
    .map(({i, c}) => ({
        index: i,
        tags: c.model.getMetadata('tags') || [],
        count: c.model.executionCount,
        error: c.model.outputs.toJSON().some(o => o.output_type === 'error'),
        shown: (c.node.querySelector('.jp-OutputArea') || {innerText: ''}).innerText,
    }))"""
# The student's answer: typed into the exercise cell, which is run, then its check.
_ANSWER = """async ([index, text]) => {
    const app = window.jupyterapp;
    const panel = app.shell.currentWidget;
    panel.content.widgets[index].model.sharedModel.setSource(text);
    panel.content.activeCellIndex = index;
    await app.commands.execute('notebook:run-cell-and-select-next');
    await app.commands.execute('notebook:run-cell-and-select-next');
}"""
_SHOWS = """([index, text]) => {
    const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
    const out = cell.node.querySelector('.jp-OutputArea');
    return !!out && out.innerText.includes(text);
}"""
_SHOWN = """(index) => {
    const cell = window.jupyterapp.shell.currentWidget.content.widgets[index];
    return (cell.node.querySelector('.jp-OutputArea') || {innerText: ''}).innerText;
}"""
# After a check: is any name the check used left in the kernel? (printed by a scratch cell)
_KERNEL_NAMES = """async () => {
    const panel = window.jupyterapp.shell.currentWidget;
    const future = panel.sessionContext.session.kernel.requestExecute(
        {code: "print(sorted(k for k in globals() if k.endswith('_check') and k != 'run_check'))"});
    let text = '';
    future.onIOPub = msg => { if (msg.header.msg_type === 'stream') text += msg.content.text; };
    await future.done;
    return text.trim();
}"""


@pytest.fixture
def student_lab(tmp_path: Path):
    (path,) = course.write_student(tmp_path / "student", [CHAPTER])
    yield from serve(tmp_path, path)


def test_a_student_runs_the_chapter_fails_the_first_check_then_answers_it(
        chromium: str, student_lab, capsys) -> None:  # noqa: F811 (the fixture, by name)
    with lab_page(chromium, student_lab, "jupyterlab_student_edition", capsys) as page:
        page.goto(student_lab.url)
        page.wait_for_function(_NOTEBOOK_READY, polling=250)
        page.evaluate(_RUN_ALL)
        page.wait_for_function(_STOPPED, polling=250)
        cells = page.evaluate(_CELLS)
        stub = next(c for c in cells if "exercise" in c["tags"])
        check = next(c for c in cells if "check" in c["tags"])
        unanswered = check["shown"]
        page.evaluate(_ANSWER, [stub["index"], WRONG])
        page.wait_for_function(_SHOWS, arg=[check["index"], "twice the answer"], polling=250)
        first_miss = page.evaluate(_SHOWN, check["index"])
        page.evaluate(_ANSWER, [stub["index"], WRONG])
        page.wait_for_function(
            "([i, before]) => { const c = window.jupyterapp.shell.currentWidget.content"
            ".widgets[i]; const o = c.node.querySelector('.jp-OutputArea');"
            " return !!o && o.innerText.includes('twice') && o.innerText !== before; }",
            arg=[check["index"], first_miss], polling=250)
        second_miss = page.evaluate(_SHOWN, check["index"])
        left_over = page.evaluate(_KERNEL_NAMES)
        page.evaluate(_ANSWER, [stub["index"], ANSWER])
        page.wait_for_function(_SHOWS, arg=[check["index"], "✓ Exercise 2.1: right"],
                               polling=250)

    first_error = next(c for c in cells if c["error"])
    assert first_error["index"] == check["index"], "Run All should stop at the first check"
    assert stub["index"] < check["index"]
    before = [c for c in cells if c["index"] < stub["index"]]
    assert before and all(c["count"] is not None and not c["error"] for c in before), \
        "every cell before the first exercise runs"
    after = [c for c in cells if c["index"] > check["index"]]
    assert after and all(c["count"] is None for c in after), "Run All stopped at the check"
    shown = check["shown"]
    assert "✗ Exercise 2.1: not answered yet" in shown and "Hint:" in shown, shown
    assert "Traceback" not in shown and "16.5" not in shown, shown

    def hint(shown: str) -> str:
        return shown.split("Hint:", 1)[1].strip()

    # hints in steps: the nudge while unanswered and at the first miss, the method at the second
    assert "not right yet: off by a constant factor: twice the answer" in first_miss, first_miss
    assert hint(first_miss) == hint(unanswered)
    assert hint(second_miss) != hint(first_miss), second_miss
    for shown in (unanswered, first_miss, second_miss):
        assert "16.5" not in shown and "Traceback" not in shown, shown
    assert left_over == "[]", f"the check left {left_over} in the kernel"

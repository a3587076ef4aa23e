"""The classroom notebook in a real browser: JupyterLab + headless Chromium (through Playwright).

The nbval run proves every cell executes; it cannot prove that a student *sees* anything. This
test starts its own JupyterLab on a copy of 03_backward_step_by_step.ipynb, runs all cells in
Chromium, presses Play on the backward stepper and waits for the slider to reach the last step,
then checks that the widget and the Graphviz SVG are on the page and saves a screenshot.

Needs Debian's chromium (or LUCID_CHROMIUM=/path/to/chromium) and the `playwright` package (the
dev extra; its own browser download is never used). Without them the test skips, unless
LUCID_REQUIRE_BROWSER=1, which CI sets so a missing browser fails instead of passing silently.
"""

from __future__ import annotations

import importlib.util
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.browser

REPO = Path(__file__).resolve().parents[2]
NOTEBOOK = "03_backward_step_by_step.ipynb"
ARTIFACTS = REPO / ".artifacts" / "browser"  # ignored by git
SERVER_START_S = 90
PAGE_S = 60  # open the notebook, start the kernel, run all cells
PLAY_S = 30  # the Play widget ticks every 0.9 s; the graph redraws in the kernel at each tick
# What `make lab` passes too (the Makefile's lab target); the test adds its own root and notebook.
ROOT_FLAG = ["--allow-root"] if hasattr(os, "geteuid") and os.geteuid() == 0 else []
# Debian's chromium, started the way this machine's network needs (no background connections).
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def _unavailable(reason: str) -> None:
    """Skip, or fail when CI demands the browser test (LUCID_REQUIRE_BROWSER=1)."""
    if os.environ.get("LUCID_REQUIRE_BROWSER") == "1":
        pytest.fail(f"LUCID_REQUIRE_BROWSER=1 but {reason}", pytrace=False)
    pytest.skip(reason)


@pytest.fixture
def chromium() -> str:
    """The Chromium binary: $LUCID_CHROMIUM, else `chromium` on PATH (Debian: /usr/bin/chromium).

    Checked, with the playwright package, before the server starts: a skip costs nothing."""
    if importlib.util.find_spec("playwright") is None:
        _unavailable("the playwright package is not installed (pip install -e '.[dev]')")
    override = os.environ.get("LUCID_CHROMIUM")
    if override is not None:
        if not (os.path.isfile(override) and os.access(override, os.X_OK)):
            _unavailable(f"LUCID_CHROMIUM={override!r} is not an executable file")
        return override
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    if found is None:
        _unavailable("no Chromium found (apt-get install chromium, or set LUCID_CHROMIUM)")
    return found


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _children(pid: int) -> list[int]:
    """Direct children of ``pid`` (Linux /proc; elsewhere none are known)."""
    try:
        text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def _kill_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except ProcessLookupError:
        pass


def _is_kernel(pid: int) -> bool:
    try:
        return b"ipykernel" in Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return False


@dataclass
class Lab:
    url: str
    log: Path


def _settings(settings_dir: Path) -> None:
    """User settings of the throw-away JupyterLab: no news pop-up over the notebook."""
    path = settings_dir / "@jupyterlab" / "apputils-extension" / "notification.jupyterlab-settings"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"fetchNews": "false", "checkForUpdates": False}))


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    """A JupyterLab of our own on 127.0.0.1, serving a copy of the notebook; always stopped."""
    yield from serve(tmp_path, REPO / "notebooks" / NOTEBOOK)


def serve(tmp_path: Path, notebook: Path) -> Iterator[Lab]:
    """Start a JupyterLab on a copy of ``notebook`` (the original is never saved), yield it
    opened there, and stop it and its kernels whatever happens."""
    if importlib.util.find_spec("jupyterlab") is None:
        _unavailable("jupyterlab is not installed (the notebooks extra)")
    root = tmp_path / "root"
    root.mkdir()
    name = notebook.name
    shutil.copy(notebook, root / name)
    state = tmp_path / "jupyter"
    settings_dir, workspaces = state / "settings", state / "workspaces"
    _settings(settings_dir)
    workspaces.mkdir()
    env = dict(os.environ)
    env.update({  # no config, kernels, sessions or IPython start-up files of the user's
        "JUPYTER_CONFIG_DIR": str(state / "config"),
        "JUPYTER_DATA_DIR": str(state / "data"),
        "JUPYTER_RUNTIME_DIR": str(state / "runtime"),
        "JUPYTERLAB_SETTINGS_DIR": str(settings_dir),
        "JUPYTERLAB_WORKSPACES_DIR": str(workspaces),
        "IPYTHONDIR": str(state / "ipython"),
        "JUPYTER_PLATFORM_DIRS": "1",
    })
    # as `make lab` does: the project's own notebooks are trusted, so their stored pictures
    # (SVG) and widgets render before any cell is run again
    subprocess.run([sys.executable, "-m", "jupyter", "trust", str(root / name)], env=env,
                   check=True, capture_output=True, timeout=60)
    port, token = _free_port(), secrets.token_hex(16)
    cmd = [
        sys.executable, "-m", "jupyterlab", *ROOT_FLAG,
        f"--ServerApp.root_dir={root}",
        f"--LabApp.default_url=/lab/tree/{name}",
        "--no-browser", "--ip=127.0.0.1", f"--port={port}", "--port-retries=0",
        f"--IdentityProvider.token={token}",
        f"--LabApp.user_settings_dir={settings_dir}",
        f"--LabApp.workspaces_dir={workspaces}",
        "--LabApp.expose_app_in_browser=True",  # window.jupyterapp, as JupyterLab's own UI tests
    ]
    log = tmp_path / "jupyterlab.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=root, env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True)
    kernels: set[int] = set()
    try:
        deadline = time.monotonic() + SERVER_START_S
        status = f"http://127.0.0.1:{port}/api/status?token={token}"
        while True:
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited ({proc.returncode}):\n{log.read_text()[-3000:]}")
            try:
                with urllib.request.urlopen(status, timeout=5) as r:
                    if r.status == 200:
                        break
            except (urllib.error.URLError, OSError):
                pass
            if time.monotonic() > deadline:
                pytest.fail(f"JupyterLab not ready in {SERVER_START_S} s:\n"
                            f"{log.read_text()[-3000:]}")
            time.sleep(0.25)
        yield Lab(f"http://127.0.0.1:{port}/lab/tree/{name}?token={token}", log)
    finally:
        kernels.update(_children(proc.pid))  # kernels run in sessions of their own
        _kill_group(proc.pid, signal.SIGTERM)  # the server shuts its kernels down on SIGTERM
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            _kill_group(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
        for pid in kernels:  # any kernel the server could not stop
            if _is_kernel(pid):
                _kill_group(pid, signal.SIGKILL)


# JavaScript run in the page through window.jupyterapp (exposed by expose_app_in_browser).
_NOTEBOOK_READY = """() => {
    const panel = window.jupyterapp && window.jupyterapp.shell.currentWidget;
    const kernel = panel && panel.sessionContext && panel.sessionContext.session
        && panel.sessionContext.session.kernel;
    return !!(panel && panel.content && panel.context.isReady && kernel
              && kernel.status === 'idle');
}"""
# Clearing first drops the stored outputs (and their saved widget state), so "every code cell
# has an execution count" can only mean this run.
_RUN_ALL = """async () => {
    await window.jupyterapp.commands.execute('notebook:clear-all-cell-outputs');
    window.jupyterapp.commands.execute('notebook:run-all-cells');
}"""
_ALL_RUN = """() => {
    const panel = window.jupyterapp.shell.currentWidget;
    const cells = panel.content.widgets.filter(c => c.model.type === 'code');
    return panel.sessionContext.session.kernel.status === 'idle'
        && cells.every(c => c.model.executionCount !== null);
}"""
# The stepper's state, read afresh each time: the kernel replaces the picture at every step.
_STEPPER = """(out) => {
    const handle = out.querySelector('.widget-slider .noUi-handle');
    const svg = out.querySelector('.widget-html-content svg');
    return {
        play: out.querySelectorAll('.widget-play button .fa-play').length,
        now: handle && Number(handle.getAttribute('aria-valuenow')),
        max: handle && Number(handle.getAttribute('aria-valuemax')),
        readout: (out.querySelector('.widget-readout') || {}).textContent,
        nodes: svg ? svg.querySelectorAll('g.node').length : 0,
        edges: svg ? svg.querySelectorAll('g.edge').length : 0,
        title: svg ? svg.textContent : '',
    };
}"""
_AT_STEP = """([out, k, title]) => {
    const handle = out.querySelector('.widget-slider .noUi-handle');
    const svg = out.querySelector('.widget-html-content svg');
    return Number(handle.getAttribute('aria-valuenow')) === k
        && !!svg && svg.textContent.includes(title);
}"""


def _play_stepper(page, url: str) -> dict:
    """Open the notebook, run every cell, press Play and wait for the last step; its state."""
    page.goto(url)
    page.wait_for_function(_NOTEBOOK_READY, polling=250)
    page.evaluate(_RUN_ALL)
    page.wait_for_function(_ALL_RUN, polling=250)

    # the output holding the live widget (the notebook has one stepper)
    out = page.locator(".jp-OutputArea-output").filter(has=page.locator(".widget-play"))
    out.scroll_into_view_if_needed()
    before = out.evaluate(_STEPPER)
    assert before["play"] == 1 and before["max"] is not None, f"no Play + slider: {before}"
    assert before["now"] == 1 and before["nodes"] >= 3, f"stepper not at a drawn step 1: {before}"

    out.locator(".widget-play button").filter(has=page.locator(".fa-play")).click()
    last = before["max"]
    # the slider reaches the last step and the kernel redraws the picture for it ("step n/n")
    page.wait_for_function(_AT_STEP, arg=[out.element_handle(), last, f"{last}/{last}"],
                           timeout=PLAY_S * 1000, polling=100)
    # at the end the player stops by itself (no repeat): its button shows "play" again
    out.locator(".widget-play button .fa-play").wait_for(timeout=PLAY_S * 1000)
    out.scroll_into_view_if_needed()
    return out.evaluate(_STEPPER)


@contextmanager
def lab_page(chromium: str, lab: Lab, name: str, capsys: Any) -> Iterator[Any]:
    """A Chromium page (1280 x 1000, fresh profile) for ``lab``.  The block's work is
    screenshot to ``.artifacts/browser/<name>.png``; when it fails, the page as it was goes to
    ``<name>_failure.png`` and the end of the server's log is printed."""
    from playwright.sync_api import sync_playwright  # late: present only with the dev extra

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    shot = ARTIFACTS / f"{name}.png"
    with sync_playwright() as pw:
        # launch() gives Chromium a fresh, throw-away profile (user-data-dir) every time
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 1000})
            page.set_default_timeout(PAGE_S * 1000)
            try:
                yield page
                page.screenshot(path=str(shot))
            except BaseException:
                failed = ARTIFACTS / f"{name}_failure.png"
                page.screenshot(path=str(failed), timeout=10_000)
                print(f"failure screenshot: {failed}\nserver log {lab.log}:\n"
                      f"{lab.log.read_text()[-3000:]}")
                raise
        finally:
            browser.close()
    with capsys.disabled():
        print(f"\nscreenshot: {shot}")


def test_stepper_plays_in_jupyterlab(chromium: str, lab: Lab, capsys) -> None:
    with lab_page(chromium, lab, "jupyterlab_stepper", capsys) as page:
        after = _play_stepper(page, lab.url)
    assert after["readout"].strip() == str(after["max"]), after
    assert after["nodes"] >= 3 and after["edges"] >= 2, f"the graph lost its nodes: {after}"


# Every SVG text inside its picture, as Chromium draws it (its fonts, not Graphviz's guess);
# cell by cell, scrolled into view (JupyterLab only lays out the cells near the viewport).
_TEXT_FITS = """async () => {
    const bad = [];
    let pictures = 0;
    const panel = window.jupyterapp.shell.currentWidget;
    for (const cell of panel.content.widgets) {
        cell.node.scrollIntoView();
        await new Promise(r => setTimeout(r, 100));
        const found = [...cell.node.querySelectorAll('.jp-OutputArea-output svg')];
        // JupyterLab shows an SVG output as an <img>: draw its text inline to measure it
        for (const img of cell.node.querySelectorAll('.jp-OutputArea-output img')) {
            if (!img.src.startsWith('data:image/svg+xml')) continue;
            const text = img.src.includes(';base64,') ? atob(img.src.split(',')[1])
                : decodeURIComponent(img.src.split(',').slice(1).join(','));
            const holder = document.createElement('div');
            holder.style.position = 'absolute';
            holder.style.left = '0px';
            holder.style.top = '0px';
            holder.innerHTML = text.slice(text.indexOf('<svg'));
            document.body.appendChild(holder);
            found.push(holder.querySelector('svg'));
        }
        for (const svg of found) {
            if (!svg || !svg.querySelector('g.graph')) continue;  // widget icons, not pictures
            pictures += 1;
            const box = svg.getBoundingClientRect();
            for (const t of svg.querySelectorAll('text')) {
                const r = t.getBoundingClientRect();
                if (r.width === 0) continue;
                if (r.left < box.left - 0.5 || r.right > box.right + 0.5)
                    bad.push(t.textContent + ' [' + r.left.toFixed(1) + ', '
                             + r.right.toFixed(1) + '] in [' + box.left.toFixed(1) + ', '
                             + box.right.toFixed(1) + ']');
            }
        }
    }
    return {pictures, bad};
}"""
_STORED_STEPPER = """() => {
    const outs = [...document.querySelectorAll('.jp-OutputArea-output')];
    const out = outs.find(o => o.querySelector('.widget-play')
                               || o.innerText.includes('Stepper('));
    if (!out) return null;
    const svg = out.querySelector('svg g.graph');
    return {picture: !!svg, height: out.getBoundingClientRect().height};
}"""


def test_stored_outputs_show_pictures_that_fit(chromium: str, lab: Lab) -> None:
    """Opened, not run: the saved stepper shows its picture, within a 720-px-high projector,
    and no text of any picture on the page is wider than the picture (titles were clipped)."""
    from playwright.sync_api import sync_playwright

    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium, headless=True, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.set_default_timeout(PAGE_S * 1000)
            page.goto(lab.url)
            page.wait_for_function(_NOTEBOOK_READY, polling=250)
            try:
                page.wait_for_function(f"() => {{ const s = ({_STORED_STEPPER})(); "
                                       "return s && s.picture; }", polling=250)
            except Exception:
                page.screenshot(path=str(ARTIFACTS / "jupyterlab_stored_failure.png"))
                print(page.evaluate("""() => [...document.querySelectorAll(
                    '.jp-OutputArea-output')].map(o => o.innerText.slice(0, 80))"""))
                raise
            stored = page.evaluate(_STORED_STEPPER)
            fits = page.evaluate(_TEXT_FITS)
            page.screenshot(path=str(ARTIFACTS / "jupyterlab_stored.png"))
        finally:
            browser.close()
    assert stored["picture"] and stored["height"] <= 720, stored
    assert fits["pictures"] >= 3 and not fits["bad"], fits


# -- the lecture hall: a 1024x768 projector -----------------------------------------------------

PROJECTOR = {"width": 1024, "height": 768}
FLOOR_PX = 12  # the smallest node text a class can read from the back row (CSS px)
# Every Graphviz picture among the outputs: its width, the width of the output area holding
# it, and its smallest node text as drawn (font size times the picture's scale on screen).
_PICTURE_SIZES = """async () => {
    const found = [];
    const panel = window.jupyterapp.shell.currentWidget;
    for (const cell of panel.content.widgets) {
        cell.node.scrollIntoView();
        await new Promise(r => setTimeout(r, 100));
        for (const svg of cell.node.querySelectorAll('.jp-OutputArea-output svg')) {
            if (!svg.querySelector('g.graph')) continue;  // widget icons, not pictures
            const area = svg.closest('.jp-OutputArea-output');
            const sizes = [...svg.querySelectorAll('g.node text')].map(
                t => parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a);
            found.push({width: svg.getBoundingClientRect().width, area: area.clientWidth,
                        text: Math.min(...sizes), scroll: area.scrollWidth});
        }
        // an SVG output JupyterLab shows as an <img>: text size = font size x drawn scale
        for (const img of cell.node.querySelectorAll('.jp-OutputArea-output img')) {
            if (!img.src.startsWith('data:image/svg+xml')) continue;
            const text = img.src.includes(';base64,') ? atob(img.src.split(',')[1])
                : decodeURIComponent(img.src.split(',').slice(1).join(','));
            const doc = new DOMParser().parseFromString(text, 'image/svg+xml');
            const root = doc.querySelector('svg');
            if (!root || !root.querySelector('g.graph')) continue;
            const viewWidth = parseFloat(root.getAttribute('viewBox').split(' ')[2]);
            const scale = img.getBoundingClientRect().width / viewWidth;
            const sizes = [...root.querySelectorAll('g.node text')].map(
                t => parseFloat(t.getAttribute('font-size')) * scale);
            const area = img.closest('.jp-OutputArea-output');
            found.push({width: img.getBoundingClientRect().width, area: area.clientWidth,
                        text: Math.min(...sizes), scroll: area.scrollWidth});
        }
    }
    return found;
}"""
_FILE_BROWSER = """async (open) => {
    const shell = window.jupyterapp.shell;
    if (open) { shell.activateById('filebrowser'); } else { shell.collapseLeft(); }
    await new Promise(r => setTimeout(r, 800));
    return document.querySelector('.jp-NotebookPanel .jp-OutputArea-output')
        ? document.querySelector('.jp-NotebookPanel .jp-OutputArea-output').clientWidth : 0;
}"""


def _run_all(page, url: str) -> None:
    page.goto(url)
    page.wait_for_function(_NOTEBOOK_READY, polling=250)
    page.evaluate(_RUN_ALL)
    page.wait_for_function(_ALL_RUN, polling=250)


def test_the_stepper_is_readable_on_a_projector(chromium: str, lab: Lab, capsys) -> None:
    """Chapter 03's stepper at 1024x768: the frame's node text at least 12 px, the picture
    within the output area, the panel in large type."""
    with lab_page(chromium, lab, "jupyterlab_stepper_1024x768", capsys) as page:
        page.set_viewport_size(PROJECTOR)
        _run_all(page, lab.url)
        page.evaluate(_FILE_BROWSER, False)
        out = page.locator(".jp-OutputArea-output").filter(has=page.locator(".widget-play"))
        out.scroll_into_view_if_needed()
        frame = out.evaluate("""(out) => {
            const svg = out.querySelector('.widget-html-content svg');
            const sizes = [...svg.querySelectorAll('g.node text')].map(
                t => parseFloat(t.getAttribute('font-size')) * t.getScreenCTM().a);
            const panel = out.querySelector('.lucid-panel td');
            return {text: Math.min(...sizes), nodes: sizes.length,
                    width: svg.getBoundingClientRect().width, area: out.clientWidth,
                    scroll: out.scrollWidth, values: svg.textContent.includes('data'),
                    panel: parseFloat(getComputedStyle(panel).fontSize)};
        }""")
    with capsys.disabled():
        print(f"\nchapter 03 stepper at 1024x768: {frame}")
    assert frame["nodes"] >= 6 and frame["values"], frame
    assert frame["text"] >= FLOOR_PX, frame
    assert frame["width"] <= frame["area"] and frame["scroll"] <= frame["area"] + 1, frame
    assert frame["panel"] >= 14, frame


_WIDE = '''import lucid, lucid_viz
from lucid import nn
from lucid.models import resnet_18

lucid.random.seed(0)
resnet = resnet_18(num_classes=10)
block, x_block = resnet.layer1[0], lucid.zeros(1, 64, 8, 8, dtype=lucid.Float32)


class TinyRNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.cell = nn.RNNCell(3, 4)

    def forward(self, x):
        h = lucid.zeros(x.shape[1], 4, dtype=x.dtype)
        for t in range(x.shape[0]):
            h = self.cell(x[t], h)
        return h


x_long = lucid.random.randn(20, 2, 3, dtype=lucid.Float32)'''
_WIDEST = ["lucid_viz.draw(block, x_block)",  # chapter 11's op-level BasicBlock
           "lucid_viz.draw(resnet, lucid.zeros(1, 3, 32, 32, dtype=lucid.Float32), depth=2)",
           "lucid_viz.draw(TinyRNN(), x_long)",  # chapter 16's rolled-up recurrence
           "lucid_viz.draw(nn.LSTM(3, 4), x_long[:5])"]


@pytest.fixture
def wide_lab(tmp_path: Path) -> Iterator[Lab]:
    """A JupyterLab on a notebook of the course's widest drawings."""
    import nbformat

    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(_WIDE)] + [
        nbformat.v4.new_code_cell(code) for code in _WIDEST]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3",
                                 "language": "python"}
    path = tmp_path / "widest_drawings.ipynb"
    nbformat.write(nb, path)
    yield from serve(tmp_path, path)


def test_the_widest_drawings_fit_a_projector(chromium: str, wide_lab: Lab, capsys) -> None:
    """The course's widest drawings at 1024x768, file browser closed (844 px of output) and
    open (592 px): none wider than its output area, node text at least 12 px."""
    with lab_page(chromium, wide_lab, "jupyterlab_widest_1024x768", capsys) as page:
        page.set_viewport_size(PROJECTOR)
        _run_all(page, wide_lab.url)
        seen = {}
        for open_browser in (False, True):
            area = page.evaluate(_FILE_BROWSER, open_browser)
            seen[area] = page.evaluate(_PICTURE_SIZES)
    with capsys.disabled():
        for area, pictures in seen.items():
            print(f"\noutput area {area} px: " + "; ".join(
                f"{p['width']:.0f} px wide, text {p['text']:.1f} px" for p in pictures))
    assert len(seen) == 2 and min(seen) < 650 < max(seen), seen  # both widths were measured
    for pictures in seen.values():
        assert len(pictures) == len(_WIDEST), pictures
        for p in pictures:
            assert p["width"] <= p["area"] + 0.5 and p["scroll"] <= p["area"] + 1, p
            assert p["text"] >= FLOOR_PX, p

"""Finding and running a Graphviz ``dot``: $LUCID_DOT, then graphviz-pure, then a system dot."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

from lucid_viz import graphviz_bin
from lucid_viz.graphviz_bin import GraphvizError, GraphvizNotFound

posix_only = pytest.mark.skipif(os.name == "nt", reason="fake executables use a #! line")


ECHO = "import sys; sys.stdout.write(' '.join(sys.argv[1:]) + '\\n' + sys.stdin.read())"


def _exe(folder: Path, name: str, body: str = ECHO) -> Path:
    """A fake executable: a Python script (works with an empty PATH)."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(f"#!{sys.executable}\n{body}\n")
    path.chmod(0o755)
    return path


@pytest.fixture
def isolated(monkeypatch, tmp_path):
    """No $LUCID_DOT, an empty scripts folder and an empty PATH: nothing to find yet."""
    monkeypatch.delenv(graphviz_bin.ENV_VAR, raising=False)
    scripts = tmp_path / "scripts"
    scripts.mkdir()
    path_dir = tmp_path / "path"
    path_dir.mkdir()
    monkeypatch.setattr(graphviz_bin, "_scripts_dirs", lambda: [scripts])
    monkeypatch.setenv("PATH", str(path_dir))
    return scripts, path_dir


def test_scripts_dirs_include_this_interpreter():
    dirs = graphviz_bin._scripts_dirs()
    assert Path(sys.executable).parent in dirs


@posix_only
def test_nothing_found(isolated):
    assert graphviz_bin.find_dot() is None
    with pytest.raises(GraphvizNotFound, match="pip install graphviz-pure"):
        graphviz_bin.dot_binary()
    with pytest.raises(GraphvizNotFound):
        graphviz_bin.render("digraph { a -> b }")


@posix_only
def test_system_dot_when_it_is_the_only_one(isolated):
    _, path_dir = isolated
    dot = _exe(path_dir, "dot")
    assert graphviz_bin.find_dot() == str(dot)


@posix_only
def test_graphviz_pure_in_scripts_folder_beats_system_dot(isolated):
    scripts, path_dir = isolated
    _exe(path_dir, "dot")
    pure = _exe(scripts, "graphviz-pure")
    assert graphviz_bin.find_dot() == str(pure)


@posix_only
def test_graphviz_pure_on_path_beats_system_dot(isolated):
    _, path_dir = isolated
    _exe(path_dir, "dot")
    pure = _exe(path_dir, "graphviz-pure")
    assert graphviz_bin.find_dot() == str(pure)


@posix_only
def test_non_executable_file_is_skipped(isolated):
    scripts, path_dir = isolated
    (scripts / "graphviz-pure").write_text("not a program")  # no x bit
    dot = _exe(path_dir, "dot")
    assert graphviz_bin.find_dot() == str(dot)


@posix_only
def test_lucid_dot_wins_as_a_path(isolated, monkeypatch, tmp_path):
    scripts, path_dir = isolated
    _exe(scripts, "graphviz-pure")
    _exe(path_dir, "dot")
    mine = _exe(tmp_path / "mine", "my-dot")
    monkeypatch.setenv(graphviz_bin.ENV_VAR, str(mine))
    assert graphviz_bin.find_dot() == str(mine)


@posix_only
def test_lucid_dot_as_a_command_name(isolated, monkeypatch):
    _, path_dir = isolated
    dot = _exe(path_dir, "dot")
    monkeypatch.setenv(graphviz_bin.ENV_VAR, "dot")
    assert graphviz_bin.find_dot() == str(dot)


@posix_only
def test_lucid_dot_naming_nothing_is_a_clear_error(isolated, monkeypatch, tmp_path):
    scripts, _ = isolated
    _exe(scripts, "graphviz-pure")  # there is one, but the user asked for another
    monkeypatch.setenv(graphviz_bin.ENV_VAR, str(tmp_path / "no-such-dot"))
    with pytest.raises(GraphvizNotFound, match="LUCID_DOT=.*no-such-dot.*unset it"):
        graphviz_bin.find_dot()


@posix_only
def test_render_runs_without_a_shell_and_feeds_stdin(isolated):
    scripts, _ = isolated
    _exe(scripts, "graphviz-pure")  # echoes its arguments, then copies stdin
    out = graphviz_bin.render("digraph { a -> b }; $(echo hi)", "png")
    assert out == b"-Tpng\ndigraph { a -> b }; $(echo hi)"


@posix_only
def test_render_failure_and_timeout(isolated, tmp_path):
    bad = _exe(tmp_path / "b", "bad",
               "import sys; sys.stderr.write('syntax error in line 1'); sys.exit(3)")
    with pytest.raises(GraphvizError, match="exit 3.*syntax error"):
        graphviz_bin.render("digraph {", binary=str(bad))
    slow = _exe(tmp_path / "s", "slow", "import time; time.sleep(5)")
    with pytest.raises(GraphvizError, match="longer than"):
        graphviz_bin.render("digraph {}", binary=str(slow), timeout=0.3)


def test_format_is_checked():
    with pytest.raises(ValueError, match="format"):
        graphviz_bin.render("digraph {}", "svg; rm -rf /")


def test_real_binary_renders_svg_and_png():
    binary = graphviz_bin.find_dot()
    if binary is None:
        pytest.skip("no Graphviz here (pip install graphviz-pure)")
    svg = graphviz_bin.render('digraph { a -> b [label="x"] }', "svg").decode()
    assert "<svg" in svg and "<title>a&#45;&gt;b</title>" in svg
    assert graphviz_bin.render("digraph { a -> b }", "png").startswith(b"\x89PNG")
    with pytest.raises(GraphvizError):
        graphviz_bin.render("digraph { a -> ", "svg")

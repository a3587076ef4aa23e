"""Find a Graphviz ``dot`` executable and run it: DOT text in, SVG/PNG bytes out.

The ``graphviz`` Python package only writes DOT; the layout needs a ``dot`` program.  So that
drawing works after ``pip install`` alone, Lucid prefers PyPI's ``graphviz-pure`` (a Rust port
of Graphviz's ``dot`` command line, same flags, reads DOT on stdin).  Its executable is named
``graphviz-pure`` and lands in the interpreter's scripts folder (``.venv/bin``), which a Jupyter
kernel started from elsewhere often does not have on ``PATH`` -- so we look there directly.

Resolution order (:func:`find_dot`):

1. ``$LUCID_DOT`` -- a path or a command name; if it names nothing runnable that is an error
   (you asked for that binary; silently using another would hide the mistake);
2. ``graphviz-pure`` in this interpreter's scripts folder(s), then on ``PATH``;
3. a system ``dot`` on ``PATH``;
4. none: :func:`find_dot` returns None and :func:`render` raises :class:`GraphvizNotFound`.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from lucid_viz.svgfit import fit_text, raise_cluster_labels

__all__ = [
    "ENV_VAR",
    "HINT",
    "GraphvizError",
    "GraphvizNotFound",
    "dot_binary",
    "find_dot",
    "render",
]

ENV_VAR = "LUCID_DOT"
PURE_NAME = "graphviz-pure"
HINT = (f"pip install graphviz-pure (a Graphviz 'dot' that installs with pip), or set "
        f"{ENV_VAR} to a dot executable")


class GraphvizError(RuntimeError):
    """A ``dot`` executable ran but failed (bad DOT, crash, timeout)."""


class GraphvizNotFound(GraphvizError):
    """No usable ``dot`` executable: none found, or ``$LUCID_DOT`` names nothing runnable."""


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def _exe_name(name: str) -> str:
    return name + ".exe" if os.name == "nt" else name


def _scripts_dirs() -> list[Path]:
    """Where pip puts console scripts for this interpreter, most specific first."""
    dirs: list[Path] = []
    for get in (
        lambda: sysconfig.get_path("scripts"),
        lambda: str(Path(sys.executable).parent),
        lambda: sysconfig.get_path("scripts", f"{os.name}_user"),  # pip install --user
    ):
        try:
            found = get()
        except (KeyError, ValueError):  # an interpreter without a user scheme
            continue
        if found and Path(found) not in dirs:
            dirs.append(Path(found))
    return dirs


def _from_env(value: str) -> str:
    path = Path(value).expanduser()
    if _is_executable(path):
        return str(path)
    which = shutil.which(value)
    if which:
        return which
    raise GraphvizNotFound(
        f"{ENV_VAR}={value!r} is not an executable file or a command on PATH; point it at a "
        f"Graphviz dot (e.g. /usr/bin/dot, or {PURE_NAME} from `pip install graphviz-pure`) "
        f"or unset it to let Lucid search"
    )


def find_dot() -> str | None:
    """The ``dot`` executable Lucid will run, or None when there is none.

    Raises :class:`GraphvizNotFound` when ``$LUCID_DOT`` is set but names nothing runnable.
    """
    env = os.environ.get(ENV_VAR, "").strip()
    if env:
        return _from_env(env)
    pure = _exe_name(PURE_NAME)
    for folder in _scripts_dirs():
        if _is_executable(folder / pure):
            return str(folder / pure)
    return shutil.which(PURE_NAME) or shutil.which("dot")


def dot_binary() -> str:
    """Like :func:`find_dot`, but raises :class:`GraphvizNotFound` (with the fix) if none."""
    found = find_dot()
    if found is None:
        raise GraphvizNotFound(f"no Graphviz 'dot' executable found: {HINT}")
    return found


_FORMAT = re.compile(r"^[a-z0-9_:]+$")


def render(dot_source: str, fmt: str = "svg", *, timeout: float = 60.0,
           binary: str | None = None) -> bytes:
    """Lay out ``dot_source`` with Graphviz and return the output bytes (``-T{fmt}``).

    Runs the executable from :func:`dot_binary` (or ``binary``) directly, no shell, the DOT text
    on stdin.  Raises :class:`GraphvizNotFound` when there is no executable and
    :class:`GraphvizError` when it fails or runs longer than ``timeout`` seconds.
    """
    if not _FORMAT.match(fmt):
        raise ValueError(f"render: output format {fmt!r} is not a Graphviz format name "
                         f"(e.g. 'svg', 'png', 'pdf')")
    exe = binary or dot_binary()
    try:
        done = subprocess.run([exe, f"-T{fmt}"], input=dot_source.encode("utf-8"),
                              capture_output=True, timeout=timeout, check=False)
    except subprocess.TimeoutExpired as err:
        raise GraphvizError(f"{exe} -T{fmt} took longer than {timeout:g} s") from err
    except OSError as err:  # vanished or not runnable since it was found
        raise GraphvizNotFound(f"could not run {exe}: {err}; {HINT}") from err
    if done.returncode != 0:
        stderr = done.stderr.decode("utf-8", "replace").strip()
        raise GraphvizError(f"{exe} -T{fmt} failed (exit {done.returncode}): {stderr}")
    if fmt == "svg":  # no text wider than the picture, in any browser's font; cluster
        # labels readable where an edge crosses them
        svg = raise_cluster_labels(fit_text(done.stdout.decode("utf-8")))
        return svg.encode("utf-8")
    return done.stdout

"""Dataset files on disk: checked by MD5, downloaded from mirrors, written atomically.

The datasets (:class:`~lucid.data.datasets.MNIST`, ...) call :func:`ensure_files`, which

1. uses each file already in the folder when its MD5 checksum is the expected one (no
   request is made: the folder is the cache);
2. otherwise, with ``download=True``, fetches it from each mirror in turn, checks the MD5 of
   what arrived, and only then renames it into place -- a download that fails or is
   interrupted leaves a temporary ``.part`` file at most, never a half-written dataset file;
3. otherwise raises ``FileNotFoundError`` naming the folder, the files it expects and the two
   ways to get them.

A file present with the wrong checksum is never used: without ``download=True`` it is an
error naming the file; with it, the file is fetched again and replaced.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

__all__ = ["md5sum", "save_checked", "ensure_files"]

_CHUNK = 1 << 20
#: seconds to wait for a mirror to answer before trying the next one
TIMEOUT = 30.0


def md5sum(path: str | os.PathLike) -> str:
    """The MD5 checksum of a file, as 32 hex digits (read in 1 MiB chunks)."""
    digest = hashlib.md5(usedforsecurity=False)
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


def save_checked(target: Path, chunks: Iterable[bytes], md5: str) -> None:
    """Write ``chunks`` to ``target`` atomically, and only if their MD5 is ``md5``.

    They go to a temporary file beside ``target`` (same folder, so the rename is atomic),
    which is flushed to disk, checked, and renamed into place; on any failure it is removed
    and ``target`` is left as it was.
    """
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".part")
    try:
        digest = hashlib.md5(usedforsecurity=False)
        with os.fdopen(fd, "wb") as out:
            for chunk in chunks:
                digest.update(chunk)
                out.write(chunk)
            out.flush()
            os.fsync(out.fileno())
        if digest.hexdigest() != md5:
            raise ValueError(f"its MD5 checksum is {digest.hexdigest()}, expected {md5}")
        os.replace(tmp, target)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _download(url: str, target: Path, md5: str) -> None:
    import urllib.request  # here, not at the top: it costs `import lucid` 12 ms, used rarely

    request = urllib.request.Request(url, headers={"User-Agent": "lucid-dl"})
    with urllib.request.urlopen(request, timeout=TIMEOUT) as response:
        size = response.headers.get("Content-Length")
        chunks = iter(lambda: response.read(_CHUNK), b"")
        save_checked(target, _progress(chunks, int(size) if size else None, target.name), md5)


def _progress(chunks: Iterable[bytes], total: int | None, name: str) -> Iterator[bytes]:
    """``chunks``, shown as a progress bar in bytes (tqdm.auto: a widget in Jupyter, text
    elsewhere) when tqdm is installed -- it comes with the notebooks extra."""
    try:
        from tqdm.auto import tqdm
    except ImportError:  # no bar: the line ensure_files printed says what is downloading
        yield from chunks
        return
    with tqdm(total=total, unit="B", unit_scale=True, desc=name, leave=False) as bar:
        for chunk in chunks:
            bar.update(len(chunk))
            yield chunk


def ensure_files(who: str, folder: str | os.PathLike, files: Sequence[tuple[str, str]],
                 mirrors: Sequence[str], download: bool,
                 how_to_get: str = "") -> list[Path]:
    """The paths of ``files`` (``(name, md5)`` pairs) in ``folder``, each checked by MD5.

    ``who`` names the dataset in messages; ``mirrors`` are base URLs (a file's URL is the
    mirror followed by its name); ``how_to_get`` adds a line on fetching the files by hand.
    """
    folder = Path(folder)
    missing: list[tuple[str, str]] = []
    for name, md5 in files:
        path = folder / name
        if not path.is_file():
            missing.append((name, md5))
            continue
        actual = md5sum(path)
        if actual == md5:
            continue
        if not download:
            raise RuntimeError(
                f"{who}: {path} is corrupt or incomplete: its MD5 checksum is {actual}, "
                f"expected {md5}. Delete it and pass download=True to fetch it again (or "
                "copy a good copy there)"
            )
        missing.append((name, md5))
    if missing and not download:
        names = ", ".join(name for name, _ in missing)
        raise FileNotFoundError(
            f"{who}: the dataset files are not in {folder}: expected {names}. Pass "
            f"download=True to fetch them (from {mirrors[0] if mirrors else 'a mirror'}), "
            f"or, without the internet, copy those files into that folder"
            + (f" ({how_to_get})" if how_to_get else "")
        )
    if missing:
        folder.mkdir(parents=True, exist_ok=True)
    for name, md5 in missing:
        _fetch(who, folder, name, md5, mirrors)
    return [folder / name for name, _ in files]


def _fetch(who: str, folder: Path, name: str, md5: str, mirrors: Sequence[str]) -> None:
    failures = []
    for mirror in mirrors:
        url = mirror + name
        print(f"{who}: downloading {url} to {folder}")
        try:
            _download(url, folder / name, md5)
            return
        except (OSError, ValueError) as exc:  # urllib's URLError and HTTPError are OSErrors
            # the next mirror may have it: remember why this one failed
            code = getattr(exc, "code", None)   # an HTTP error status (404, 403, ...)
            why = f"HTTP error {code} ({exc.reason})" if code else getattr(exc, "reason", exc)
            failures.append(f"{url}: {why}")
    tried = "; ".join(failures) if failures else "no mirrors are set"
    raise RuntimeError(
        f"{who}: could not download {name} ({tried}). Without the internet, copy {name} "
        f"(MD5 {md5}) into {folder}"
    )

"""The world of processes: which rank this is, how many there are, and moving arrays between
them -- all of it MLX's distributed engine (``mlx.core.distributed``), none of it our own.

``mlx.launch`` starts one process per rank and tells each, through its environment, how to
reach the others (the ring backend: ``MLX_HOSTFILE`` and ``MLX_RANK``; MPI and NCCL their own
way).  :func:`init` asks MLX for that group once.  A process started without a launcher is a
world of one: every collective returns its input, and nothing here needs MLX.

Every collective goes through :func:`transfer`, which runs MLX's operation and waits for it
under a *watchdog*.  A rank that crashed or was killed closes its sockets, and MLX raises on
the ranks still waiting: :class:`DistributedError` says so.  A rank that hangs (or never
arrives) closes nothing; then the watchdog ends this process after ``timeout`` seconds with a
message naming the operation, the rank and the setting -- a bounded wait instead of a hang.
"""

from __future__ import annotations

import os
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np

__all__ = ["DistributedError", "TIMEOUT_EXIT_CODE", "barrier", "get_backend", "get_rank",
           "get_timeout", "get_world_size", "init", "is_initialized", "transfer"]

#: how long a collective may wait for the other ranks, unless init(timeout=) or the
#: LUCID_DIST_TIMEOUT environment variable (seconds) says otherwise
DEFAULT_TIMEOUT = 300.0
#: the exit status of a process the watchdog ends (the one ``timeout(1)`` uses)
TIMEOUT_EXIT_CODE = 124

# the environment variables by which a launcher tells a process that it is one of several
_LAUNCHER_VARIABLES = ("MLX_RANK", "MLX_HOSTFILE", "MLX_WORLD_SIZE", "OMPI_COMM_WORLD_SIZE",
                       "PMI_SIZE")


class DistributedError(RuntimeError):
    """A collective failed: another rank crashed, was killed or disagrees about the work."""


class _World:
    """The one group this process belongs to (MLX's ``Group``; None in a world of one)."""

    def __init__(self) -> None:
        self.group: Any = None
        self.rank = 0
        self.size = 1
        self.backend = "none"
        self.timeout = DEFAULT_TIMEOUT
        self.initialized = False


_WORLD = _World()


def init(backend: str | None = None, timeout: float | None = None) -> None:
    """Join the group of processes the launcher started (once; later calls only update
    ``timeout``).

    ``backend``: None takes the one ``mlx.launch`` set up ("ring" over TCP by default, "mpi",
    "nccl" on CUDA machines); a name insists on that one.  ``timeout``: seconds a collective
    may wait for the other ranks before this process gives up (default 300, or the
    ``LUCID_DIST_TIMEOUT`` environment variable).  Without a launcher this is a world of one
    process: rank 0 of 1.
    """
    _WORLD.timeout = _timeout_of(timeout)
    if _WORLD.initialized:
        return
    if not _launched() and backend is None:
        _WORLD.initialized = True  # a world of one: no MLX needed
        return
    mx = _mlx("init")
    with _watchdog(f"init (backend {backend or 'chosen by the launcher'!r})"):
        group = mx.distributed.init(strict=backend is not None, backend=backend or "any")
    _WORLD.group, _WORLD.rank, _WORLD.size = group, group.rank(), group.size()
    _WORLD.backend = backend or _backend_in_use()
    _WORLD.initialized = True
    if _WORLD.size > 1:
        _say_why_when_stopped()


def is_initialized() -> bool:
    """True once :func:`init` has run (every collective runs it for you)."""
    return _WORLD.initialized


def get_rank() -> int:
    """This process's number, 0 .. world size - 1 (rank 0 is the one that prints and saves)."""
    _ensure_init()
    return _WORLD.rank


def get_world_size() -> int:
    """How many processes take part (1 without a launcher)."""
    _ensure_init()
    return _WORLD.size


def get_backend() -> str:
    """The transport MLX uses: "ring", "mpi", "nccl", "jaccl" -- or "none" in a world of one."""
    _ensure_init()
    return _WORLD.backend


def get_timeout() -> float:
    """Seconds a collective waits for the other ranks before this process gives up."""
    return _WORLD.timeout


def barrier() -> None:
    """Wait until every rank has reached this line (an all-sum of one number)."""
    _ensure_init()
    if _WORLD.size > 1:
        transfer("barrier", np.zeros(1, dtype=np.float32), lambda mx, a: mx.distributed.all_sum(a))


def transfer(what: str, array: Any, collective: Callable[[Any, Any], Any]) -> Any:
    """Run ``collective(mx, a)`` on ``array`` (a NumPy array, or an MLX array of a "gpu"
    tensor) and return the result in the same kind of array, evaluated.

    A NumPy array crosses to MLX at its own dtype (float64 stays float64: MLX's CPU has it)
    and the result comes back as NumPy.  The wait runs under the watchdog, and MLX's error for
    a lost peer becomes a :class:`DistributedError` that says which operation and rank.
    """
    mx = _mlx(what)
    host = isinstance(array, np.ndarray)
    a = _to_mlx(mx, array) if host else array
    try:
        with _watchdog(what):
            out = collective(mx, a)
            mx.eval(out)
    except RuntimeError as exc:
        raise DistributedError(
            f"{what} on rank {_WORLD.rank} of {_WORLD.size}: the collective failed ({exc}). "
            "Another rank has most likely crashed or been killed; its own output says why."
        ) from None
    return _to_numpy(out, array.dtype) if host else out


# --------------------------------------------------------------------------------------------
# helpers


def _ensure_init() -> None:
    if not _WORLD.initialized:
        init()


def _launched() -> bool:
    """Whether a launcher (mlx.launch, mpirun) started this process as one of several."""
    hostfile = os.environ.get("MLX_HOSTFILE")
    if hostfile is not None and not _read(hostfile).strip():
        return False  # mlx.launch -n 1 writes an empty host file: a world of one
    return any(os.environ.get(v) for v in _LAUNCHER_VARIABLES)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def _backend_in_use() -> str:
    if os.environ.get("MLX_HOSTFILE"):
        return "ring"
    if os.environ.get("NCCL_HOST_IP") or os.environ.get("MLX_WORLD_SIZE"):
        return "nccl"
    if os.environ.get("MLX_JACCL_COORDINATOR"):
        return "jaccl"
    return "mpi"


def _timeout_of(timeout: float | None) -> float:
    if timeout is None:
        timeout = float(os.environ.get("LUCID_DIST_TIMEOUT", _WORLD.timeout))
    if not timeout > 0:
        raise ValueError(f"init: timeout must be a positive number of seconds, got {timeout!r}")
    return float(timeout)


def _mlx(what: str) -> Any:
    try:
        import mlx.core as mx
    except ImportError:
        raise RuntimeError(
            f"{what}: several processes talk through MLX's distributed engine, and MLX is not "
            "installed. Install it with `pip install 'mlx[cpu]'` (Linux), `pip install mlx` "
            "(Apple silicon) or `pip install 'mlx[cuda]'` (NVIDIA)."
        ) from None
    return mx


def _to_mlx(mx: Any, array: np.ndarray) -> Any:
    """A NumPy array as an MLX array of the same dtype (bools travel as uint8)."""
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
    return mx.array(array, dtype=getattr(mx, array.dtype.name))


def _to_numpy(out: Any, dtype: np.dtype) -> np.ndarray:
    return np.array(out).astype(dtype, copy=False)


def _say_why_when_stopped() -> None:
    """When one rank fails, mlx.launch stops the others with SIGTERM, which would end them
    without a word; say why instead (unless the program handles SIGTERM itself)."""
    if (threading.current_thread() is threading.main_thread()
            and signal.getsignal(signal.SIGTERM) is signal.SIG_DFL):
        signal.signal(signal.SIGTERM, _stopped)


def _stopped(signum: int, frame: Any) -> None:
    sys.stderr.write(
        f"lucid.distributed.DistributedError: rank {_WORLD.rank} of {_WORLD.size} was stopped "
        "(SIGTERM): the launcher stops every rank when one has crashed or been killed (or when "
        "it is interrupted); that rank's own output says why.\n")
    sys.stderr.flush()
    sys.stdout.flush()
    os._exit(1)


# --------------------------------------------------------------------------------------------
# the watchdog: a bounded wait


class _Watchdog:
    """One daemon thread that ends the process when a wait outlasts the timeout.

    A collective waits inside MLX (which lets go of Python meanwhile), where no Python
    exception can reach it; a hung peer would keep it waiting for ever.  So before each wait
    the main thread sets a deadline here, and clears it after; if the deadline passes first,
    the thread prints what was being waited for and ends the process (as NCCL's watchdog
    does) with :data:`TIMEOUT_EXIT_CODE`.
    """

    def __init__(self) -> None:
        self.lock = threading.Condition()
        self.deadline: float | None = None
        self.what = ""
        self.thread: threading.Thread | None = None

    def arm(self, what: str, timeout: float) -> None:
        with self.lock:
            self.deadline, self.what = time.monotonic() + timeout, what
            if self.thread is None:
                self.thread = threading.Thread(target=self._watch, name="lucid-distributed-"
                                               "watchdog", daemon=True)
                self.thread.start()
            self.lock.notify()

    def disarm(self) -> None:
        with self.lock:
            self.deadline = None

    def _watch(self) -> None:
        with self.lock:
            while True:
                if self.deadline is None:
                    self.lock.wait()
                    continue
                left = self.deadline - time.monotonic()
                if left > 0:
                    self.lock.wait(left)
                    continue
                self._give_up()

    def _give_up(self) -> None:
        sys.stderr.write(
            f"lucid.distributed: {self.what} on rank {_WORLD.rank} of {_WORLD.size} waited "
            f"{_WORLD.timeout:g} s for the other ranks and gave up: a rank has crashed, hung "
            "or not reached the same call. The limit is init(timeout=...) or the "
            "LUCID_DIST_TIMEOUT environment variable (seconds).\n")
        sys.stderr.flush()
        sys.stdout.flush()
        os._exit(TIMEOUT_EXIT_CODE)


_WATCHDOG = _Watchdog()


@contextmanager
def _watchdog(what: str) -> Iterator[None]:
    _WATCHDOG.arm(what, _WORLD.timeout)
    try:
        yield
    finally:
        _WATCHDOG.disarm()

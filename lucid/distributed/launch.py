"""Start N copies of a training script that find each other: a thin wrapper on ``mlx.launch``.

    python -m lucid.distributed.launch -n 2 train.py --epochs 3

runs ``train.py --epochs 3`` in two processes on this machine, joined in MLX's ring over the
loopback (ranks 0 and 1; ``lucid.distributed.init()`` finds the group).  What it adds to
``mlx.launch -n 2 --backend ring``: the same Python interpreter for every rank, free ports
found for the ring (so two jobs on one machine do not collide), BLAS thread pools sized so
the ranks share the cores (as ``torchrun`` does), ``--timeout`` passed to the ranks, and an
exit status that says whether every rank succeeded (nonzero when one failed).
When one rank fails, ``mlx.launch`` stops the others.

Several machines, MPI and NCCL are ``mlx.launch``'s own forms: ``--hostfile``, ``--hosts``
and ``--backend`` are passed on to it unchanged.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
from collections.abc import Sequence

__all__ = ["main", "run"]

# mlx.launch reports a failed rank on stderr and still exits 0; this reads its report
_FAILED = re.compile(r"Node with rank (\d+) (exited with code (-?\d+)|was killed)")


def _mlx_launch() -> list[str]:
    """The ``mlx.launch`` command of this interpreter's environment."""
    here = os.path.join(os.path.dirname(sys.executable), "mlx.launch")
    found = here if os.path.exists(here) else shutil.which("mlx.launch")
    if found is None:
        raise SystemExit("lucid.distributed.launch: mlx.launch was not found. Install MLX: "
                         "`pip install 'mlx[cpu]'` (Linux), `pip install mlx` (Apple silicon) "
                         "or `pip install 'mlx[cuda]'` (NVIDIA).")
    return [found]


def _free_port_run(count: int) -> int:
    """The first of ``count`` consecutive free TCP ports on the loopback (the ring listens
    on one per rank)."""
    for _ in range(50):
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            base = s.getsockname()[1]
        if base + count < 65536 and all(_free(base + i) for i in range(count)):
            return base
    raise SystemExit("lucid.distributed.launch: found no free ports for the ring; pass --port")


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def command(script: str, args: Sequence[str] = (), n: int = 2, timeout: float | None = None,
            port: int | None = None, extra: Sequence[str] = ()) -> list[str]:
    """The ``mlx.launch`` command line that runs ``script`` on ``n`` local ranks."""
    cmd = [*_mlx_launch(), "--python", sys.executable, *extra]
    if not any(a.startswith(("--hostfile", "--hosts")) for a in extra):
        cmd += ["-n", str(n)]
    if not any(a.startswith("--backend") for a in extra):
        cmd += ["--backend", "ring"]
    cmd += ["--starting-port", str(port or _free_port_run(n))]
    if timeout is not None:
        cmd += ["--env", f"LUCID_DIST_TIMEOUT={timeout}"]
    return [*cmd, "--", script, *args]


#: the thread pools of NumPy's BLAS and OpenMP
_THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def rank_environment(n: int) -> dict[str, str]:
    """The ranks' environment: this one, with the BLAS thread pools sized to share the cores.

    Each rank's NumPy would start one BLAS thread per core; n ranks on one machine then run n
    times as many threads as cores, and a matrix multiply that waits for all of its threads
    can take a hundred times longer.  So, as ``torchrun`` does, each rank gets cores / n
    threads, unless the variables are already set.
    """
    env = dict(os.environ)
    threads = str(max(1, (os.cpu_count() or 1) // max(n, 1)))
    for name in _THREAD_VARIABLES:
        env.setdefault(name, threads)
    return env


def run(script: str, args: Sequence[str] = (), n: int = 2, timeout: float | None = None,
        capture: bool = False, extra: Sequence[str] = (),
        deadline: float | None = None) -> subprocess.CompletedProcess:
    """Run ``script`` on ``n`` local ranks and wait; the result's ``returncode`` is 0 only
    when every rank exited with 0.  ``capture=True`` keeps the ranks' output (``stdout``,
    ``stderr``: text) instead of printing it -- how a notebook launches two processes.
    ``deadline``: seconds after which the whole job is stopped (returncode 124)."""
    cmd = command(script, args, n, timeout, extra=extra)
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE if capture else None,
                            stderr=subprocess.PIPE, text=True, start_new_session=True,
                            env=rank_environment(n))
    stopped: list[bool] = []
    timer = threading.Timer(deadline, lambda: (stopped.append(True), _stop(proc))) \
        if deadline else None
    if timer is not None:
        timer.start()
    try:
        if capture:
            out, err = proc.communicate()
        else:  # the ranks' errors as they come, read for mlx.launch's report of failed ranks
            out, err = None, ""
            for line in proc.stderr:
                sys.stderr.write(line)
                err += line if _FAILED.search(line) else ""
            proc.wait()
    except BaseException:
        _stop(proc)
        raise
    finally:
        if timer is not None:
            timer.cancel()
    code = proc.returncode or (1 if _FAILED.search(err) else 0)
    if stopped:
        code = 124  # stopped at the deadline
    return subprocess.CompletedProcess(cmd, code, out, err if capture else None)


def _stop(proc: subprocess.Popen) -> None:
    """End mlx.launch and the ranks it started (they share its process group)."""
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=10)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        os.killpg(proc.pid, signal.SIGKILL)


def parse(argv: Sequence[str] | None = None) -> tuple[argparse.Namespace, list[str]]:
    """The launcher's own options, and the ``mlx.launch`` options to pass on."""
    parser = argparse.ArgumentParser(
        prog="python -m lucid.distributed.launch",
        description="Run a training script on several processes (MLX's ring on this machine; "
                    "--hostfile, --hosts and --backend go to mlx.launch).")
    parser.add_argument("-n", "--nproc", type=int, default=2, help="processes on this machine")
    parser.add_argument("--timeout", type=float, default=None,
                        help="seconds a collective may wait for the other ranks (default 300)")
    parser.add_argument("--hostfile", help="mlx.launch's JSON host file: several machines")
    parser.add_argument("--hosts", help="comma-separated hosts (mlx.launch --hosts)")
    parser.add_argument("--backend", help="ring (default), mpi, nccl or jaccl")
    parser.add_argument("script", help="the training script")
    parser.add_argument("args", nargs=argparse.REMAINDER, help="the script's own arguments")
    ours = parser.parse_args(argv)
    if ours.nproc < 1:
        parser.error(f"-n must be at least 1, got {ours.nproc}")
    extra = [f"--{k}={v}" for k, v in (("hostfile", ours.hostfile), ("hosts", ours.hosts),
                                        ("backend", ours.backend)) if v]
    return ours, extra


def main(argv: Sequence[str] | None = None) -> int:
    ours, extra = parse(argv)
    return run(ours.script, ours.args, ours.nproc, ours.timeout, extra=extra).returncode


if __name__ == "__main__":
    sys.exit(main())

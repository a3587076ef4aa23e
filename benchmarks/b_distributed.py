"""B-DIST: data parallelism on this machine, through ``python -m lucid.distributed.launch``.

* **DDP MLP step** -- 784-512-10, ReLU, cross-entropy, SGD, float32, global batch 256: one
  process on the whole batch against 2 local ranks on 128 samples each (DistributedDataParallel,
  one all-reduce of the 1.6 MB of gradients per step), milliseconds per step (the median over
  the steps after a warm-up, rank 0).  Scaling efficiency = speed-up / 2.
* **all_reduce bandwidth** -- ``lucid.distributed.all_reduce`` of 4 MB (float32) on 2 local
  ranks over the loopback, against the ring formula: each rank sends 2(N-1)/N of the array, so
  at the loopback's own bandwidth B (measured here, one TCP stream between two threads) the
  all-reduce should take 2(N-1)/N * S / B.  (The call includes all_reduce's check that every
  rank brings the same shape: one small all-gather first.)  The row shows the bandwidth it
  reached (bytes one rank sent / time) and the formula's time beside the measured one.

Both run two more processes on a machine that may have only 2 cores, so the numbers show the
overhead honestly rather than a speed-up: see chapter 23.
"""

from __future__ import annotations

import json
import socket
import tempfile
import threading
import time
from pathlib import Path

from benchmarks.common import Row
from lucid.distributed import launch, ring_bytes

WORKER = Path(__file__).with_name("dist_worker.py")
ALL_REDUCE_BYTES = 4 * 2**20


def _ranks(mode: str, n: int, steps: int) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        job = launch.run(str(WORKER), [mode, str(steps), str(out)], n=n, timeout=120,
                         capture=True, deadline=300)
        if job.returncode != 0:
            raise RuntimeError(f"B-DIST {mode} on {n} ranks failed:\n{job.stderr[-2000:]}")
        return json.loads(out.read_text())


def loopback_bandwidth(nbytes: int = 64 * 2**20) -> float:
    """Bytes per second of one TCP stream over 127.0.0.1 (two threads of this process)."""
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    payload = bytes(2**20)

    def send() -> None:
        with socket.create_connection(("127.0.0.1", port)) as s:
            for _ in range(nbytes // len(payload)):
                s.sendall(payload)

    sender = threading.Thread(target=send)
    sender.start()
    conn, _ = server.accept()
    start, got = time.perf_counter(), 0
    with conn:
        while got < nbytes:
            chunk = conn.recv(2**20)
            if not chunk:
                break
            got += len(chunk)
    seconds = time.perf_counter() - start
    sender.join()
    server.close()
    return got / seconds


def run(quick: bool = False) -> list[Row]:
    steps = 10 if quick else 30
    one = _ranks("step", 1, steps)["step_s"]
    two = _ranks("step", 2, steps)["step_s"]
    reduce_s = _ranks("all_reduce", 2, 5 if quick else 20)["all_reduce_s"]
    sent = ring_bytes(ALL_REDUCE_BYTES, 2)
    formula_s = sent / loopback_bandwidth()
    return [
        Row("B-DIST DDP MLP step, 1 rank (batch 256)", "ms/step", {"lucid": one * 1e3}),
        Row("B-DIST DDP MLP step, 2 local ranks (128 each)", "ms/step", {"lucid": two * 1e3},
            target=f"speed-up {one / two:.2f}x, scaling efficiency {one / two / 2:.0%}"),
        Row("B-DIST all_reduce 4 MB, 2 local ranks", "MB/s sent", {"lucid": sent / reduce_s / 1e6},
            target=f"{reduce_s * 1e3:.1f} ms; ring formula 2(N-1)/N*S/B: {formula_s * 1e3:.1f} ms "
                   "at the loopback's bandwidth"),
    ]

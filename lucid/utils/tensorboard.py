"""``lucid.utils.tensorboard.SummaryWriter``: PyTorch's logging calls, kept as plain records.

A program written for PyTorch logs its losses with ``writer.add_scalar("Loss/train", loss,
step)``.  Lucid does not write TensorBoard's binary event files (that needs TensorBoard's
protocol buffers); this writer keeps every record in ``writer.records`` and appends it, one
JSON object a line, to ``<log_dir>/events.jsonl`` -- readable with :func:`read_events` or
``pandas.read_json(path, lines=True)``.

Scalars are kept as numbers, histograms as their summary (count, min, max, mean, std) and
images, figures, graphs and embeddings as their tag and shape only.
"""

from __future__ import annotations

import datetime
import json
import os
import socket
import time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SummaryWriter", "read_events"]


def _number(value: Any) -> float:
    """A Python float from a number, a 0-d array or a one-element tensor (``loss``)."""
    if hasattr(value, "item"):
        return float(value.item())
    return float(value)


def _array(value: Any) -> np.ndarray:
    if hasattr(value, "numpy"):
        value = value.detach() if hasattr(value, "detach") else value
        return np.asarray(value.numpy())
    return np.asarray(value)


class SummaryWriter:
    """``SummaryWriter(log_dir=None, comment="")``: PyTorch's writer API, recording into
    ``self.records`` and ``<log_dir>/events.jsonl`` (not TensorBoard's file format).

    ``log_dir`` defaults to ``runs/<date>_<host><comment>`` as in PyTorch.  Each record is a
    dict with ``kind``, ``tag``, ``step``, ``wall_time`` and the value (``value`` for a
    scalar; ``count, min, max, mean, std`` for a histogram; ``shape`` for an image)."""

    def __init__(self, log_dir: str | os.PathLike | None = None, comment: str = "",
                 purge_step: int | None = None, max_queue: int = 10, flush_secs: int = 120,
                 filename_suffix: str = "") -> None:
        if log_dir is None:
            stamp = datetime.datetime.now().strftime("%b%d_%H-%M-%S")
            log_dir = os.path.join("runs", f"{stamp}_{socket.gethostname()}{comment}")
        self.log_dir = str(log_dir)
        self.records: list[dict[str, Any]] = []
        self._pending: list[dict[str, Any]] = []
        self._path = Path(self.log_dir) / f"events{filename_suffix}.jsonl"
        self.max_queue = max_queue
        Path(self.log_dir).mkdir(parents=True, exist_ok=True)

    def get_logdir(self) -> str:
        return self.log_dir

    def _add(self, kind: str, tag: str, step: Any, walltime: Any, **value: Any) -> None:
        record = {"kind": kind, "tag": str(tag), "step": None if step is None else int(step),
                  "wall_time": time.time() if walltime is None else float(walltime), **value}
        self.records.append(record)
        self._pending.append(record)
        if len(self._pending) >= self.max_queue:
            self.flush()

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Any = None,
                   walltime: Any = None, new_style: bool = False,
                   double_precision: bool = False) -> None:
        """Record one number (a float, or a one-element tensor such as a loss)."""
        self._add("scalar", tag, global_step, walltime, value=_number(scalar_value))

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict[str, Any],
                    global_step: Any = None, walltime: Any = None) -> None:
        """Record several numbers under ``main_tag/<key>``."""
        for key, value in tag_scalar_dict.items():
            self.add_scalar(f"{main_tag}/{key}", value, global_step, walltime)

    def add_histogram(self, tag: str, values: Any, global_step: Any = None, bins: Any = None,
                      walltime: Any = None, max_bins: Any = None) -> None:
        """Record the summary of a tensor's values (count, min, max, mean, std)."""
        a = _array(values).astype(np.float64).reshape(-1)
        self._add("histogram", tag, global_step, walltime, count=int(a.size),
                  min=float(a.min()), max=float(a.max()), mean=float(a.mean()),
                  std=float(a.std()))

    def add_text(self, tag: str, text_string: str, global_step: Any = None,
                 walltime: Any = None) -> None:
        self._add("text", tag, global_step, walltime, value=str(text_string))

    def _shape_only(self, kind: str, tag: str, value: Any, step: Any, walltime: Any) -> None:
        shape = list(getattr(value, "shape", ()))
        self._add(kind, tag, step, walltime, shape=shape)

    def add_image(self, tag: str, img_tensor: Any, global_step: Any = None,
                  walltime: Any = None, dataformats: str = "CHW") -> None:
        """Record that an image was logged (its tag and shape; the pixels are not kept)."""
        self._shape_only("image", tag, img_tensor, global_step, walltime)

    def add_images(self, tag: str, img_tensor: Any, global_step: Any = None,
                   walltime: Any = None, dataformats: str = "NCHW") -> None:
        self._shape_only("images", tag, img_tensor, global_step, walltime)

    def add_figure(self, tag: str, figure: Any, global_step: Any = None, close: bool = True,
                   walltime: Any = None) -> None:
        self._shape_only("figure", tag, figure, global_step, walltime)

    def add_graph(self, model: Any, input_to_model: Any = None, verbose: bool = False,
                  use_strict_trace: bool = True) -> None:
        """Record the model's class name (draw the graph itself with ``lucid_viz``)."""
        self._add("graph", type(model).__name__, None, None)

    def add_embedding(self, mat: Any, metadata: Any = None, label_img: Any = None,
                      global_step: Any = None, tag: str = "default",
                      metadata_header: Any = None) -> None:
        self._shape_only("embedding", tag, mat, global_step, None)

    def add_hparams(self, hparam_dict: dict, metric_dict: dict,
                    hparam_domain_discrete: Any = None, run_name: Any = None,
                    global_step: Any = None) -> None:
        self._add("hparams", run_name or "hparams", global_step, None,
                  hparams={k: v if isinstance(v, (int, float, str, bool)) else str(v)
                           for k, v in hparam_dict.items()},
                  metrics={k: _number(v) for k, v in metric_dict.items()})

    def flush(self) -> None:
        """Append the records not yet written to ``events.jsonl``."""
        if not self._pending:
            return
        with open(self._path, "a", encoding="utf-8") as f:
            for record in self._pending:
                f.write(json.dumps(record) + "\n")
        self._pending = []

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def read_events(log_dir: str | os.PathLike) -> list[dict[str, Any]]:
    """The records a :class:`SummaryWriter` wrote to ``<log_dir>/events*.jsonl``, in order."""
    records = []
    for path in sorted(Path(log_dir).glob("events*.jsonl")):
        with open(path, encoding="utf-8") as f:
            records.extend(json.loads(line) for line in f if line.strip())
    return records

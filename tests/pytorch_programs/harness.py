"""Run the PyTorch programs of programs/ on Lucid, renamed exactly as a user would rename
them, and (when PyTorch is installed) on PyTorch from the same weights and batches.

Each program defines ``build()`` (its model, or its list of parameter tensors),
``make_data()`` (its batches, drawn at random: no download) and ``run(model, data)`` (its
training loop, returning a dict of results), and a ``__main__`` block that chains them.
"""

from __future__ import annotations

import importlib.util
import re
import runpy
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

PROGRAMS = Path(__file__).parent / "programs"
SED = ["sed", "-e", "s/torchvision/lucid.vision/g", "-e", "s/torch/lucid/g"]
HAS_TORCH = importlib.util.find_spec("torch") is not None
HAS_TORCHVISION = HAS_TORCH and importlib.util.find_spec("torchvision") is not None
#: torch.utils.tensorboard needs the tensorboard package, which PyTorch does not bring
HAS_TENSORBOARD = HAS_TORCH and importlib.util.find_spec("tensorboard") is not None


def renamed(source: str) -> str:
    """``sed -e 's/torchvision/lucid.vision/g' -e 's/torch/lucid/g'`` -- the command itself
    where there is a ``sed``, else the same two substitutions, line by line, in Python."""
    if shutil.which("sed"):
        return subprocess.run(SED, input=source, capture_output=True, text=True,
                              check=True).stdout
    return renamed_in_python(source)


def renamed_in_python(source: str) -> str:
    """The two substitutions of :data:`SED`, in order (case-sensitive, as sed's)."""
    return re.sub("torch", "lucid", re.sub("torchvision", "lucid.vision", source))


def load(name: str, rename: bool = True) -> dict[str, Any]:
    """The program's namespace (its functions), run as a module, not as ``__main__``."""
    source = (PROGRAMS / f"{name}.py").read_text()
    text = renamed(source) if rename else source
    folder = Path(tempfile.mkdtemp(prefix="pytorch-program-"))
    path = folder / f"{name}{'_lucid' if rename else ''}.py"
    path.write_text(text)  # a real file: tracebacks show the renamed program's lines
    try:
        return runpy.run_path(str(path), run_name=f"program_{name}")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


# --------------------------------------------------------------------------------------------
# the same weights and batches, as NumPy arrays, for NumPy references and for PyTorch


class Samples(list):
    """A dataset's samples, each a tuple of arrays (and numbers)."""


def _is_tensor(x: Any) -> bool:
    return hasattr(x, "detach") and hasattr(x, "shape") and not isinstance(x, np.ndarray)


def array(t: Any) -> np.ndarray:
    """A Lucid or PyTorch tensor (or an array: Lucid's state dicts hold arrays) as a NumPy
    array."""
    if isinstance(t, np.ndarray):
        return np.array(t)
    t = t.detach()
    if hasattr(t, "cpu"):
        t = t.cpu()
    return np.array(t.numpy())


def to_numpy(obj: Any) -> Any:
    """Tensors -> arrays, datasets -> their samples, through lists, tuples and dicts."""
    if isinstance(obj, (str, bytes, np.ndarray, np.generic, int, float)):
        return obj
    if _is_tensor(obj):
        return array(obj)
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_numpy(o) for o in obj)
    if isinstance(obj, dict):
        return {k: to_numpy(v) for k, v in obj.items()}
    if hasattr(obj, "__getitem__") and hasattr(obj, "__len__"):
        return Samples(to_numpy(obj[i]) for i in range(len(obj)))
    return obj


def to_torch(obj: Any) -> Any:
    """The inverse of :func:`to_numpy`, for PyTorch: samples become a TensorDataset, and
    float64 arrays float32 -- the programs draw their data with ``torch.rand`` and friends,
    which give float32 in PyTorch and Float64 in Lucid (README, "Coming from PyTorch")."""
    import torch

    if isinstance(obj, np.ndarray):
        return torch.from_numpy(_pytorch_dtype(obj).copy())
    if isinstance(obj, Samples):
        columns = list(zip(*obj))
        return torch.utils.data.TensorDataset(
            *[torch.from_numpy(_pytorch_dtype(np.stack(c))) for c in columns])
    if isinstance(obj, (list, tuple)):
        return type(obj)(to_torch(o) for o in obj)
    if isinstance(obj, dict):
        return {k: to_torch(v) for k, v in obj.items()}
    return obj


def _pytorch_dtype(a: np.ndarray) -> np.ndarray:
    return a.astype(np.float32) if a.dtype == np.float64 else a


def state_of(model: Any) -> Any:
    """A model's state dict, or a list of parameter tensors, as NumPy arrays."""
    if hasattr(model, "state_dict"):
        return {k: array(v) for k, v in model.state_dict().items()}
    return [array(t) for t in model]


def load_state(model: Any, state: Any) -> None:
    """Give a PyTorch model (or list of tensors) the weights in ``state``."""
    import torch

    if isinstance(state, dict):
        model.load_state_dict({k: torch.from_numpy(v.copy()) for k, v in state.items()})
        return
    with torch.no_grad():
        for t, v in zip(model, state):
            t.copy_(torch.from_numpy(v.copy()))


def run_on_lucid(name: str) -> tuple[dict, Any, Any, dict, Any]:
    """Run program ``name`` renamed: its namespace, initial weights, data (as arrays),
    results and its model (trained)."""
    ns = load(name)
    model = ns["build"]()
    init = state_of(model)
    data = ns["make_data"]()
    data_np = to_numpy(data)
    out = ns["run"](model, data)
    return ns, init, data_np, out, model


def run_on_torch(name: str, init: Any, data_np: Any) -> dict:
    """Run program ``name`` as written, on PyTorch, from Lucid's weights and data."""
    ns = load(name, rename=False)
    model = ns["build"]()
    load_state(model, init)
    return ns["run"](model, to_torch(data_np))

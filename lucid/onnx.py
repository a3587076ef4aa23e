"""``lucid.onnx``: PyTorch's ``torch.onnx``, imported by programs that can export their model
(examples/word_language_model's ``--onnx-export``).  Lucid does not write ONNX files."""

from __future__ import annotations

from typing import Any

__all__ = ["export"]


def export(model: Any, args: Any, f: Any, *rest: Any, **kwargs: Any) -> None:
    """Not available: Lucid has no ONNX exporter.  Save the weights with
    ``lucid.save(model.state_dict(), path)``."""
    raise NotImplementedError(
        "lucid.onnx.export: Lucid does not write ONNX files; save the weights with "
        "lucid.save(model.state_dict(), path)")

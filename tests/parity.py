"""Checks shared by the layer and model tests: a module gives the same output and the same
parameter gradients on "gpu" (MLX) as on "cpu" (NumPy); a module's parameter gradients equal
those of its PyTorch twin."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np


def assert_gpu_matches_cpu(module: Any, run: Callable[[str], Any], *, rtol: float = 1e-4,
                           atol: float = 1e-5, grad_rtol: float = 1e-3,
                           grad_atol: float = 1e-5) -> None:
    """Move ``module`` to each device, call ``run(device)`` (its output on that device), back-
    propagate the sum of the output's squares, and compare the output and every parameter's
    gradient between the devices."""
    results = {}
    for device in ("cpu", "gpu"):
        module.to(device)
        module.zero_grad()
        out = run(device)
        (out * out).sum().backward()
        results[device] = (out.numpy(), {n: np.asarray(p.grad.tolist())
                                         for n, p in module.named_parameters()})
    np.testing.assert_allclose(results["gpu"][0], results["cpu"][0], rtol=rtol, atol=atol)
    for name, grad in results["cpu"][1].items():
        np.testing.assert_allclose(results["gpu"][1][name], grad, rtol=grad_rtol,
                                   atol=grad_atol, err_msg=name)


def assert_grads_match_torch(ours: Any, theirs: Any) -> None:
    """Every parameter gradient of the Lucid module ``ours`` equals that of the parameter of
    the same name in the PyTorch module ``theirs`` (after both ran backward), to float32
    accuracy relative to the largest entry."""
    mine = dict(ours.named_parameters())
    for name, p in theirs.named_parameters():
        ref = p.grad.numpy()
        np.testing.assert_allclose(np.asarray(mine[name].grad), ref, rtol=1e-3,
                                   atol=1e-4 * np.abs(ref).max(), err_msg=name)

"""One check shared by the layer tests: a module gives the same output and the same parameter
gradients on "gpu" (MLX) as on "cpu" (NumPy)."""

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

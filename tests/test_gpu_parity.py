"""Backend parity, generated from the op spec table: every op on "gpu" (MLX) against "cpu"
(NumPy) in float32 -- forward values, shapes, logical dtypes and gradients."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.autograd import grad
from lucid.ops import REGISTRY
from tests.specs import ALL_SPECS

pytest.importorskip("mlx.core", reason="MLX is not installed; `make test` installs mlx[cpu]")

CASES = [(s, i) for s in ALL_SPECS if s.extra.get("parity", True)
         for i in range(len(s.samples))]
IDS = [f"{s.id}-{i}" for s, i in CASES]


def _tolerance(name: str) -> tuple[float, float]:
    """(atol, rtol): elementwise ops 1e-6 / 1e-5; reductions, matmul and the rest 1e-4 / 1e-4."""
    module = REGISTRY[name].__module__
    return (1e-6, 1e-5) if module.endswith("elementwise") else (1e-4, 1e-4)


def _inputs(arrays, device):
    out = []
    for a in arrays:
        floating = np.issubdtype(a.dtype, np.floating)
        data = a.astype(np.float32) if floating else a
        out.append(lucid.Tensor(data, requires_grad=floating, device=device))
    return out


def _outputs(result):
    return result if isinstance(result, tuple) else (result,)


def _run(spec, arrays, device):
    inputs = _inputs(arrays, device)
    outs = _outputs(spec.fn(*inputs))
    grads = None
    diff = [o for o in outs if o.requires_grad]
    if spec.grad and diff:
        rng = np.random.default_rng(0)
        weights = [lucid.Tensor(rng.standard_normal(o.shape).astype(np.float32), device=device)
                   for o in diff]
        wanted = [t for t in inputs if t.requires_grad]
        grads = grad(diff, wanted, grad_outputs=weights, allow_unused=True)
    return outs, grads


@pytest.mark.parametrize("spec,i", CASES, ids=IDS)
def test_gpu_matches_cpu_in_float32(spec, i):
    arrays = spec.samples[i]
    cpu_out, cpu_grads = _run(spec, arrays, "cpu")
    gpu_out, gpu_grads = _run(spec, arrays, "gpu")
    atol, rtol = _tolerance(spec.name)
    assert len(cpu_out) == len(gpu_out)
    for c, g in zip(cpu_out, gpu_out):
        assert g.device == "gpu"
        assert g.shape == c.shape
        assert g.dtype == c.dtype, (g.dtype, c.dtype)
        np.testing.assert_allclose(g.numpy(), c.numpy(), atol=atol, rtol=rtol)
    if cpu_grads is not None:
        for c, g in zip(cpu_grads, gpu_grads):
            assert (c is None) == (g is None)
            if c is not None:
                assert g.device == "gpu" and g.shape == c.shape
                np.testing.assert_allclose(g.numpy(), c.numpy(), atol=1e-4, rtol=1e-3)


def test_every_registered_op_runs_on_gpu_or_is_marked_fallback():
    covered = {s.name for s, _ in CASES}
    for name, cls in REGISTRY.items():
        assert name in covered or name == "to" or cls.fallback, (
            f"{name} has no gpu parity case and is not marked fallback"
        )


GRADCHECKED = {
    "softplus": lambda t: lucid.softplus(t),
    "softplus-beta": lambda t: lucid.softplus(t, beta=2.0),
    "logsumexp": lambda t: lucid.logsumexp(t),
    "logsumexp-axis": lambda t: lucid.logsumexp(t, axis=1, keepdims=True),
}


@pytest.mark.parametrize("device", ["cpu", "gpu"])
@pytest.mark.parametrize("name", sorted(GRADCHECKED))
def test_float32_gradcheck_on_both_devices(name, device):
    """The "gpu" device has no float64 storage on every MLX kind, so gradients are checked there
    in float32 with a coarse step (and on "cpu" the same way, to compare like with like)."""
    x = np.random.default_rng(1).uniform(-3, 3, (3, 4)).astype(np.float32)
    t = lucid.Tensor(x, requires_grad=True, device=device)
    assert lucid.autograd.gradcheck(GRADCHECKED[name], t, eps=1e-2, atol=1e-3, rtol=1e-2)


def test_gradcheck_on_gpu_float64_says_what_is_wrong():
    """On "gpu" a Float64 tensor is stored as float32 (an MLX GPU) or stored in float64 but
    computed with float32-accurate exp/log (MLX's CPU device): either way finite differences
    at eps=1e-6 would be noise, and gradcheck says so instead of calling the gradient wrong."""
    t = lucid.Tensor(np.ones(3), dtype=lucid.Float64, device="gpu", requires_grad=True)
    with pytest.raises(ValueError, match=r"input 0 is a Float64 tensor on 'gpu', where MLX "
                                         r"(stores it as float32|computes exp, log and the other "
                                         r"functions only to float32 accuracy).*Check on 'cpu'"):
        lucid.autograd.gradcheck(lucid.exp, t)
    assert lucid.autograd.gradcheck(lucid.exp, t, eps=1e-3, atol=1e-3, rtol=1e-2)

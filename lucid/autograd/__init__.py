"""Autograd: the backward walk, grad mode, ``grad`` and ``gradcheck``.

``engine.py`` holds the walk; this package adds the functional ``grad`` (with
``create_graph=True``: gradients that can be differentiated again), ``gradcheck`` and
``gradgradcheck``, and ``lucid.autograd.functional``: ``jacobian``, ``hessian``, ``vjp``,
``jvp`` and ``hvp``, as PyTorch's ``torch.autograd.functional``.
"""

from lucid.engine.mode import count_flops, enable_grad, flops_enabled, grad_enabled, no_grad

__all__ = [
    "count_flops",
    "enable_grad",
    "flops_enabled",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "grad_enabled",
    "no_grad",
]


def __getattr__(name: str):
    # grad/gradcheck need Tensor, which sits above this package; load them on first use.
    if name in ("grad", "gradcheck", "gradgradcheck", "GradcheckError", "functional"):
        import importlib

        functional = importlib.import_module("lucid.autograd.functional")
        return functional if name == "functional" else getattr(functional, name)
    raise AttributeError(name)

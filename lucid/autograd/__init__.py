"""Autograd: the backward walk, grad mode, ``grad`` and ``gradcheck``.

``engine.py`` holds the walk; this package adds the functional ``grad`` and ``gradcheck``.
"""

from lucid.autograd.mode import count_flops, enable_grad, flops_enabled, grad_enabled, no_grad

__all__ = [
    "count_flops",
    "enable_grad",
    "flops_enabled",
    "grad",
    "gradcheck",
    "GradcheckError",
    "grad_enabled",
    "no_grad",
]


def __getattr__(name: str):
    # grad/gradcheck need Tensor, which sits above this package; load them on first use.
    if name in ("grad", "gradcheck", "GradcheckError"):
        from lucid.autograd import functional

        return getattr(functional, name)
    raise AttributeError(name)

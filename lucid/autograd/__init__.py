"""Autograd's functions above the ops: ``grad`` (with ``create_graph=True``: gradients that
can be differentiated again), ``gradcheck`` and ``gradgradcheck``, and
``lucid.autograd.functional``: ``jacobian``, ``hessian``, ``vjp``, ``jvp`` and ``hvp``, as
PyTorch's ``torch.autograd.functional``; and ``Function``, PyTorch's API for an operation of
your own (``forward(ctx, ...)``, ``backward(ctx, grad)``).  The walk they run and the grad mode
switches sit below the Tensor, in ``lucid.engine``.
"""

from lucid.engine.mode import count_flops, enable_grad, flops_enabled, grad_enabled, no_grad
from lucid.autograd import functional
from lucid.autograd.functional import GradcheckError, grad, gradcheck, gradgradcheck
from lucid.autograd.function import Function, FunctionCtx, Variable, once_differentiable

__all__ = [
    "count_flops",
    "enable_grad",
    "Function",
    "FunctionCtx",
    "once_differentiable",
    "Variable",
    "flops_enabled",
    "functional",
    "grad",
    "gradcheck",
    "gradgradcheck",
    "GradcheckError",
    "grad_enabled",
    "no_grad",
]

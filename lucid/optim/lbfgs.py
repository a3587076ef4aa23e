"""L-BFGS: a quasi-Newton method that steps along an estimate of H^-1 g built from the last
few steps, PyTorch's ``optim.LBFGS`` (fixed step length, no line search)."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

import numpy as np

from lucid.backends import get_backend
from lucid.engine.mode import enable_grad
from lucid.optim.optimizer import Optimizer

__all__ = ["LBFGS"]


class LBFGS(Optimizer):
    r"""``LBFGS(params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
    tolerance_change=1e-9, history_size=100, line_search_fn=None)``.

    Newton's method steps by ``-H^-1 g`` (H the Hessian).  L-BFGS never forms H: from the last
    ``history_size`` steps ``s_k = theta_{k+1} - theta_k`` and gradient changes
    ``y_k = g_{k+1} - g_k`` (which satisfy ``H s_k ~ y_k``) its *two-loop recursion* computes
    ``d = -H^-1 g`` directly, in O(history x parameters)::

        q = -g
        for k newest..oldest:   a_k = rho_k s_k.q,   q -= a_k y_k        (rho_k = 1 / y_k.s_k)
        r = q * (y.s / y.y)                                                (initial H^-1 guess)
        for k oldest..newest:   b = rho_k y_k.r,     r += (a_k - b) s_k
        theta <- theta + t d    (t = lr; the very first step min(1, 1 / |g|_1) lr)

    One ``step(closure)`` runs up to ``max_iter`` such iterations, calling ``closure`` (which
    zeroes the gradients, computes the loss, calls ``backward`` and returns the loss) after
    each, and stops early when the gradient or the change is below the tolerances -- so the
    closure is required.  All parameters are treated as one flat vector (one param group only,
    as in PyTorch), in the parameters' own dtype.  ``line_search_fn="strong_wolfe"`` is not
    implemented in Lucid: the fixed step is PyTorch's default.
    """

    supports_complex = False

    def __init__(self, params: Iterable[Any], lr: float = 1.0, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None:
        if line_search_fn is not None:
            raise NotImplementedError(
                f"LBFGS: line_search_fn={line_search_fn!r} is not implemented in Lucid; use "
                "the fixed step (line_search_fn=None, PyTorch's default) with a smaller lr")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, {"lr": lr, "max_iter": max_iter, "max_eval": max_eval,
                                  "tolerance_grad": tolerance_grad,
                                  "tolerance_change": tolerance_change,
                                  "history_size": history_size, "line_search_fn": None})
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS: takes one param group (it treats every parameter as one "
                             f"vector), got {len(self.param_groups)}")
        self._params = self.param_groups[0]["params"]

    def check_group(self, group: dict[str, Any], index: int) -> None:
        super().check_group(group, index)
        for key in ("max_iter", "max_eval", "history_size"):
            if isinstance(group[key], bool) or not isinstance(group[key], int) or group[key] < 1:
                raise ValueError(f"LBFGS: {key} must be a positive int, got {group[key]!r}")
        self._check_number(group, index, "tolerance_grad", low=0.0)
        self._check_number(group, index, "tolerance_change", low=0.0)

    # -- the flat vector of all parameters -----------------------------------------------
    def _flat_grad(self) -> np.ndarray:
        parts = []
        for p in self._params:
            if p.grad is None:
                parts.append(np.zeros(p.size, dtype=p.dtype.cpu))
            else:
                parts.append(np.asarray(get_backend(p.device).to_numpy(p.grad)).reshape(-1))
        return np.concatenate(parts)

    def _add(self, t: float, d: np.ndarray) -> None:
        """theta <- theta + t d, parameter by parameter."""
        offset = 0
        for p in self._params:
            backend = get_backend(p.device)
            step = (t * d[offset:offset + p.size]).reshape(p.shape)
            new = np.asarray(backend.to_numpy(p.data)) + step
            p.data = backend.asarray(new, dtype=p.data.dtype)
            p._version += 1
            offset += p.size

    def step(self, closure: Callable[[], Any] | None = None) -> Any:  # noqa: C901 (PyTorch's)
        """Up to ``max_iter`` L-BFGS iterations; returns the closure's first loss."""
        if closure is None:
            raise TypeError("LBFGS.step needs a closure: a function that zeroes the "
                            "gradients, computes the loss, calls loss.backward() and returns "
                            "the loss; LBFGS calls it several times per step")
        closure = enable_grad()(closure)
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        state = self.state.setdefault(self._params[0], {})
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if np.abs(flat_grad).max() <= tol_grad:
            return orig_loss

        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        h_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d, old_dirs, old_stps, ro, h_diag = -flat_grad, [], [], [], 1
            else:  # update the memory with the last step, then the two-loop recursion
                y, s = flat_grad - prev_flat_grad, d * t
                ys = y.dot(s)
                if ys > 1e-10:  # keep only steps along which the loss curves upwards
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0), old_stps.pop(0), ro.pop(0)
                    old_dirs.append(y), old_stps.append(s), ro.append(1.0 / ys)
                    h_diag = ys / y.dot(y)
                al = [None] * len(old_dirs)
                q = -flat_grad
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = old_stps[i].dot(q) * ro[i]
                    q = q - al[i] * old_dirs[i]
                d = r = q * h_diag
                for i in range(len(old_dirs)):
                    be_i = old_dirs[i].dot(r) * ro[i]
                    r = r + (al[i] - be_i) * old_stps[i]
                d = r
            prev_flat_grad = flat_grad.copy()
            prev_loss = loss
            t = min(1.0, 1.0 / np.abs(flat_grad).sum()) * lr if state["n_iter"] == 1 else lr
            if flat_grad.dot(d) > -tol_change:  # d no longer points downhill
                break
            self._add(t, d)
            ls_func_evals = 0
            if n_iter != max_iter:  # no new evaluation after the last iteration
                loss = float(closure())
                flat_grad = self._flat_grad()
                ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals
            if (n_iter == max_iter or current_evals >= max_eval
                    or np.abs(flat_grad).max() <= tol_grad
                    or np.abs(d * t).max() <= tol_change or abs(loss - prev_loss) < tol_change):
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=h_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

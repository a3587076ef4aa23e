"""What travels along the graph's edges during backward, and the sum it goes into.

A node's gradient is a sum over the nodes that use it (dL/dx = sum over children y of
dL/dy * dy/dx).  While the walk collects it, the sum is a :class:`Total`, and everything a
backward rule sends an input goes in with one call, ``total.add(g)``.  A rule may send:

* an array of the input's shape (a Tensor, with ``create_graph``): the common case, added as
  ``total + g``;
* a :class:`PartGrad` -- ``g`` inside ``x[index]``, zero elsewhere (``x[2:5]``, ``x[t]``):
  written into place, so a loop over ``x[t]`` builds one full-size gradient, not one per step;
* a :class:`FactoredGrad` -- ``gᵀ x`` kept as its two factors (a recurrent weight used at
  every step): the factors are gathered and multiplied once, when the total is complete.

The two kinds add themselves (``add_to(total)``); ``dense(xp)`` writes one out as an array
(what the backward stepper shows, and what a rule that records a graph needs).
"""

from __future__ import annotations

from typing import Any

from lucid.backends import BACKENDS, backend_for


class Total:
    """dL/dx of one node while the walk collects it: the arrays added so far (``array``,
    ``owned`` when only the walk holds it, so parts may be written into it) and the factors
    of products still to multiply (``factors``)."""

    __slots__ = ("node", "array", "owned", "factors")

    def __init__(self, node: Any) -> None:
        self.node = node
        self.array = None
        self.owned = False
        self.factors: list[FactoredGrad] | None = None  # a list once the first arrives

    @property
    def backend(self) -> Any:
        return BACKENDS[self.node.device]

    def add(self, g: Any) -> None:
        """Add one contribution: an array of the node's shape, or a part or factors."""
        if isinstance(g, KINDS):
            g.add_to(self)
        else:
            self.add_array(g)

    def add_array(self, g: Any) -> None:
        """Add an array of the node's shape (the common case, which the walk knows)."""
        if self.array is None:
            self.array = g  # shared, maybe: an add passes one array to both inputs
        else:
            self.array = self.array + g
            self.owned = True  # a fresh array

    def value(self) -> Any:
        """The complete gradient, one array."""
        if not self.factors:
            return self.array
        g = FactoredGrad.product(self.factors, self.backend.xp)
        dtype = self.factors[0].dtype
        g = g if g.dtype == dtype else g.astype(dtype)
        return g if self.array is None else self.array + g


class PartGrad:
    """dL/dx of an op that reads one part of ``x`` (``x[2:5]``, ``x[t]``): ``g`` inside
    ``x[index]``, zero everywhere else.  ``index`` selects each element at most once (basic
    indexing), so adding in place is exact."""

    __slots__ = ("shape", "dtype", "index", "g")

    def __init__(self, shape: tuple, dtype: Any, index: Any, g: Any) -> None:
        self.shape, self.dtype, self.index, self.g = shape, dtype, index, g

    def dense(self, xp: Any) -> Any:
        """The full gradient: zeros of x's shape with ``g`` added at ``index`` (on Lucid ops
        too, where it is an op of its own)."""
        return backend_for(xp).scatter_add(self.shape, self.dtype, self.index, self.g)

    def add_to(self, total: Total) -> None:
        if total.array is None:  # the first part: a zero array only the walk holds
            total.array = total.backend.xp.zeros(self.shape, dtype=self.dtype)
            total.array[self.index] = self.g
        else:
            if not total.owned:  # an array that arrived whole may be shared: copy it once
                total.array = total.backend.copy(total.array)
            total.array[self.index] += self.g  # NumPy: in place; MLX: takes the new value
        total.owned = True


class FactoredGrad:
    """dL/dW = gᵀ x of a weight used at several steps, kept as its factors ``g`` (rows, out)
    and ``x`` (rows, in).  Summed over the steps k, Σ g_kᵀ x_k is one product of the stacked
    factors, [g_1; g_2; …]ᵀ [x_1; x_2; …]: one large product instead of T small ones and T
    full-size additions (a recurrent layer's W_hh).  ``dtype`` is W's."""

    __slots__ = ("g", "x", "dtype")

    def __init__(self, g: Any, x: Any, dtype: Any) -> None:
        self.g, self.x, self.dtype = g, x, dtype

    def dense(self, xp: Any) -> Any:
        return self.product([self], xp)

    def add_to(self, total: Total) -> None:
        if total.factors is None:
            total.factors = []
        total.factors.append(self)

    @staticmethod
    def product(factors: list[FactoredGrad], xp: Any) -> Any:
        """Σ g_kᵀ x_k over ``factors``, one matrix product."""
        if len(factors) == 1:
            return xp.matmul(factors[0].g.T, factors[0].x)
        return xp.matmul(xp.concatenate([f.g for f in factors]).T,
                         xp.concatenate([f.x for f in factors]))


#: the kinds an op's backward may return instead of a plain array
KINDS = (PartGrad, FactoredGrad)

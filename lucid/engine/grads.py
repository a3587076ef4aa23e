"""What travels along the graph's edges during backward, and the sum it goes into.

A node's gradient is a sum over the nodes that use it (dL/dx = sum over children y of
dL/dy * dy/dx).  While the walk collects it, the sum is a :class:`Total`; everything a
backward rule sends an input is added to it with one method, ``add_to(total)``:

* :class:`Whole` -- an array of the input's shape (a Tensor, with ``create_graph``): the
  common case, added as ``total + g``;
* :class:`PartGrad` -- ``g`` inside ``x[index]``, zero elsewhere (``x[2:5]``, ``x[t]``):
  written into place, so a loop over ``x[t]`` builds one full-size gradient, not one per step;
* :class:`FactoredGrad` -- ``gᵀ x`` kept as its two factors (a recurrent weight used at
  every step): the factors are gathered and multiplied once, when the total is complete.

``dense(xp)`` writes a part or a product out as one array (what a hook, ``.grad`` or the
backward stepper sees).
"""

from __future__ import annotations

from typing import Any

from lucid.backends import backend_for


class Total:
    """dL/dx of one node while the walk collects it: the arrays added so far (``array``,
    ``owned`` when only the walk holds it, so parts may be written into it) and the factors
    of products still to multiply (``factors``)."""

    __slots__ = ("backend", "array", "owned", "factors")

    def __init__(self, backend: Any) -> None:
        self.backend = backend  # the node's device (None with create_graph: Wholes only)
        self.array = None
        self.owned = False
        self.factors: list[FactoredGrad] = []

    def value(self) -> Any:
        """The complete gradient, one array."""
        if not self.factors:
            return self.array
        g = FactoredGrad.product(self.factors, self.backend.xp)
        dtype = self.factors[0].dtype
        g = g if g.dtype == dtype else g.astype(dtype)
        return g if self.array is None else self.array + g


class Whole:
    """dL/dx as one array of x's shape."""

    __slots__ = ("g",)

    def __init__(self, g: Any) -> None:
        self.g = g

    def add_to(self, total: Total) -> None:
        if total.array is None:
            total.array = self.g  # shared, maybe: an add passes one array to both inputs
        else:
            total.array = total.array + self.g
            total.owned = True  # a fresh array


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

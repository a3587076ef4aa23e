"""What travels along the graph's edges during backward, and the sum it goes into.

A node's gradient is a sum over the nodes that use it (dL/dx = sum over children y of
dL/dy * dy/dx).  While the walk collects it, the sum so far sits on the node (``node._g``).
A rule may send:

* an array of the input's shape (a Tensor, with ``create_graph``): the common case, added as
  ``node._g + g`` -- the sum is a plain array, nothing else is made;
* a :class:`PartGrad` -- ``g`` inside ``x[index]``, zero elsewhere (``x[2:5]``, ``x[t]``):
  written into place, so a loop over ``x[t]`` builds one full-size gradient, not one per step;
* a :class:`FactoredGrad` -- ``gᵀ x`` kept as its two factors (a recurrent weight used at
  every step): the factors are gathered and multiplied once, when the gradient is complete.

The two kinds add themselves (``add_to(node)``), into a :class:`Total` that the first of them
makes around the node's sum (arrays added later go into it alike); ``dense(xp)`` writes one
out as an array (what the backward stepper shows, and what a rule that records a graph needs).
"""

from __future__ import annotations

from typing import Any

from lucid.backends import BACKENDS, backend_for


class Total:
    """dL/dx of one node while the walk collects it, once a part or factors have reached it
    (until then ``node._g`` holds a plain array, or nothing): the arrays added so far
    (``array``, ``owned`` when only the walk holds it, so parts may be written into it) and
    the factors of products still to multiply (``factors``)."""

    __slots__ = ("node", "array", "owned", "factors")

    def __init__(self, node: Any, array: Any = None) -> None:
        self.node = node
        self.array = array  # shared, maybe: an add passes one array to both inputs
        self.owned = False
        self.factors: list[FactoredGrad] | None = None  # a list once the first arrives

    @classmethod
    def of(cls, node: Any) -> Total:
        """``node``'s gradient so far as a Total: made, around the array it holds, when the
        first part or factors reach it (that array may be shared, so a part is written into
        a copy of it)."""
        total = node._g
        if type(total) is not Total:
            total = node._g = cls(node, total)
        return total

    @property
    def backend(self) -> Any:
        return BACKENDS[self.node.device]

    def __add__(self, g: Any) -> Total:
        """Add an array of the node's shape (``node._g + g``, whatever ``_g`` holds)."""
        self.array = g if self.array is None else self.array + g
        self.owned = self.owned or self.array is not g  # a sum is a fresh array
        return self

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

    def add_to(self, node: Any) -> None:
        total = Total.of(node)
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

    def add_to(self, node: Any) -> None:
        total = Total.of(node)
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

"""Linear algebra: matmul, dot, inner, outer, tensordot, einsum, trace.

Every op here is a contraction -- multiply entries and sum over shared indices -- and so is
its backward: the gradient for one operand contracts ``g`` with the *other* operand(s).  For
``y = a @ b`` that gives the two rules everything else reduces to::

    dL/da = g @ b^T        dL/db = a^T @ g

FLOPs convention: multiply-accumulates (MACs), the unit Lucid uses for matmul.  A product
of an (m, k) and a (k, n) matrix costs m·k·n MACs, a batch of them batch·m·k·n; multiply by
2 for the other common unit (one multiply plus one add = 2 FLOPs).  Backward computes one
contraction of the same size per operand that requires grad, so a matmul whose two operands
both need gradients costs 2·MACs backward.  Transposes, reshapes and broadcasts are free; the
additions that sum a broadcast batch gradient back down are not counted (they are a lower
order term next to the products).  Outer products count m·n (one multiply each), trace counts
its min(m, n) additions.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lucid.backends import backend_for
from lucid.ops.base import Op, apply, numel
from lucid.shapes import fmt, normalize_axis, sum_to
from lucid.tensor import Tensor
from lucid.types import to_numeric_type


def _count(needs: tuple[bool, ...]) -> int:
    """How many operands want a gradient (each costs one backward contraction)."""
    return len([n for n in needs if n])


# --------------------------------------------------------------------------------------------
# matmul: batched, with NumPy's 1-D promotion


def _inexact(x) -> bool:
    """True for float and complex arrays (either backend)."""
    return to_numeric_type(x.dtype).base_dtype in (float, complex)


class MatMul(Op):
    """y = a @ b:  y[..., i, j] = sum_k a[..., i, k] b[..., k, j].
    dL/da = g @ b^T,  dL/db = a^T @ g.

    NumPy semantics: a 1-D ``a`` is a row (1, k) and a 1-D ``b`` a column (k, 1), and the
    added axis is removed from the result; leading (batch) axes broadcast, so an operand that
    was stretched along a batch axis receives its gradient summed along that axis.
    """

    name = "matmul"
    method = True
    operator = "@"
    inputs = ("a", "b")
    wants_needs = True
    counts_macs = True

    def forward(self, xp, a, b):
        sa, sb = tuple(a.shape), tuple(b.shape)
        pair = f"{fmt(sa)} @ {fmt(sb)}"
        if not sa or not sb:
            raise self.error(
                f"{pair}: matmul needs operands with at least 1 dimension, and "
                f"{'a' if not sa else 'b'} is 0-d (a scalar). Multiply by a scalar with * "
                "instead.",
                ValueError,
            )
        k_a, k_b = sa[-1], sb[-2] if len(sb) > 1 else sb[0]
        if k_a != k_b:
            where = "second-to-last axis" if len(sb) > 1 else "length"
            # .T reverses every axis, so on a batch of matrices only .mT swaps the last two
            hint = "b.mT, which swaps b's last two axes" if len(sb) > 2 else "b.T"
            raise self.error(
                f"{pair}: inner dimensions {k_a} and {k_b} differ. a's last axis must match "
                f"b's {where}: transpose or reshape one operand (e.g. {hint}).",
                ValueError,
            )
        # shapes with 1-D operands promoted to matrices: (k,) -> (1,k) for a, (k,1) for b
        self.a2 = (1, *sa) if len(sa) == 1 else sa
        self.b2 = (*sb, 1) if len(sb) == 1 else sb
        batch = self._batch(pair, self.a2[:-2], self.b2[:-2])
        self.out2 = (*batch, self.a2[-2], self.b2[-1])
        self.a, self.b, self.sa, self.sb = a, b, sa, sb
        backend = backend_for(xp)
        if not backend.int_matmul and not (_inexact(a) or _inexact(b)):
            # MLX multiplies floating-point matrices only: integers are multiplied (exactly)
            # by NumPy and moved back (integers carry no gradient)
            return backend.asarray(np.matmul(backend.to_numpy(a), backend.to_numpy(b)))
        if len(sb) == 2:  # a stack of rows times one matrix (x @ W): one product
            return _rows_matmul(xp, a, b)
        return xp.matmul(a, b)

    def _batch(self, pair: str, ba: tuple[int, ...], bb: tuple[int, ...]) -> tuple[int, ...]:
        """The broadcast of the two batch shapes, or an error naming both."""
        out = []
        for i in range(1, max(len(ba), len(bb)) + 1):
            da = ba[-i] if i <= len(ba) else 1
            db = bb[-i] if i <= len(bb) else 1
            if da != db and da != 1 and db != 1:
                raise self.error(
                    f"{pair}: batch dimensions {fmt(ba)} and {fmt(bb)} cannot be broadcast "
                    f"together (sizes {da} and {db} differ and neither is 1). Reshape one "
                    "operand so each batch axis matches or is 1.",
                    ValueError,
                )
            out.append(db if da == 1 else da)
        return tuple(reversed(out))

    def backward(self, xp, g):
        if len(self.sb) == 2 and len(self.sa) > 2:  # x @ W: all rows in one product each
            return self._rows_backward(xp, g)
        a = self.a.reshape(self.a2)
        b = self.b.reshape(self.b2)
        g = g.reshape(self.out2)
        ga = gb = None
        if self.needs[0]:
            ga = xp.matmul(g, xp.swapaxes(b, -1, -2))
            ga = sum_to(xp, ga, self.a2).reshape(self.sa)
        if self.needs[1]:
            gb = xp.matmul(xp.swapaxes(a, -1, -2), g)
            gb = sum_to(xp, gb, self.b2).reshape(self.sb)
        return ga, gb

    def _rows_backward(self, xp, g):
        """dA = G Bᵀ and dB = Aᵀ G with A's leading axes flattened into rows: dB comes out of
        one product, not one per matrix of the stack summed afterwards."""
        ga = gb = None
        if self.needs[0]:
            ga = _rows_matmul(xp, g, xp.swapaxes(self.b, -1, -2))
        if self.needs[1]:
            rows = numel(self.sa[:-1])
            gb = xp.matmul(xp.swapaxes(self.a.reshape(rows, self.sa[-1]), -1, -2),
                           g.reshape(rows, self.sb[-1]))
        return ga, gb

    def macs(self) -> int:
        """batch·m·n·k for the shapes ``forward`` recorded."""
        return numel(self.out2) * self.a2[-1]

    def forward_flops(self, out, a, b):
        return self.macs()

    def backward_flops(self, out, a, b):
        return _count(self.needs) * self.macs()


def _rows_matmul(xp: Any, a: Any, b: Any) -> Any:
    """``a @ b`` for a (..., k) and a matrix b (k, n), as one matrix product of a's rows.

    NumPy multiplies a stack of matrices one matrix at a time, so (32, 32, 64) @ (64, 512) is
    32 small products; flattened to (1024, 64) @ (64, 512) it is one large product, about twice
    as fast.  The result is the same."""
    if a.ndim <= 2:
        return xp.matmul(a, b)
    lead = tuple(a.shape[:-1])
    return xp.matmul(a.reshape(numel(lead), a.shape[-1]), b).reshape(*lead, b.shape[-1])


# --------------------------------------------------------------------------------------------
# linear: y = x @ W^T + b in one op


class Linear(Op):
    """y = x W^T + b   (x: (..., in), W: (out, in) as PyTorch stores it, b: (out,) or absent).

    With the leading axes of x flattened into M rows, X: (M, in) and G = dL/dy: (M, out):
        dL/dx = G W          (M, in)
        dL/dW = G^T X        (out, in) -- already W's layout, no transpose copy
        dL/db = sum of G over the rows.
    The same values the composite ``x @ W.T + b`` gives, in one op: no transposed view of W
    in the graph and no broadcast gradient to sum down for b.
    FLOPs: forward M·in·out MACs + M·out bias adds; backward M·in·out MACs per operand of
    x and W that requires grad, plus M·out - out adds for b -- exactly the composite's counts.
    """

    name = "linear"
    inputs = ("x", "weight")
    wants_needs = True
    counts_macs = True

    @classmethod
    def call(cls, x: Any, weight: Any, bias: Any = None) -> Any:
        if bias is None:
            return apply(cls(), x, weight)
        return apply(cls(), x, weight, bias)

    def forward(self, xp, x, w, b=None):
        if w.ndim != 2:
            raise self.error(
                f"weight must be 2-D (out_features, in_features), got shape {fmt(tuple(w.shape))}"
            )
        if x.ndim == 0 or x.shape[-1] != w.shape[1]:
            raise self.error(
                f"input {fmt(tuple(x.shape))} and weight {fmt(tuple(w.shape))}: the input's "
                f"last axis must equal in_features = {w.shape[1]} (weight is (out_features, "
                "in_features), as in PyTorch)"
            )
        if b is not None and tuple(b.shape) != (w.shape[0],):
            raise self.error(
                f"bias has shape {fmt(tuple(b.shape))}, expected ({w.shape[0]},) "
                f"(one per output feature of weight {fmt(tuple(w.shape))})"
            )
        self.x, self.w, self.has_bias = x, w, b is not None
        y = _rows_matmul(xp, x, w.T)
        if b is not None:
            if b.dtype == y.dtype and not isinstance(y, Tensor):
                y += b  # y is the GEMM's fresh output: add in place, no second array
            else:
                y = y + b  # promotes (a float64 bias on float32 inputs)
        return y

    def backward(self, xp, g):
        x, w, needs = self.x, self.w, self.needs
        n_in = w.shape[1]
        rows = numel(tuple(x.shape[:-1]))  # named: -1 cannot be inferred with 0 features
        g2 = g.reshape(rows, w.shape[0])
        gx = gw = gb = None
        if needs[0]:
            gx = _rows_matmul(xp, g, w)
        if needs[1]:
            gw = xp.matmul(g2.T, x.reshape(rows, n_in))
        if self.has_bias and needs[2]:
            gb = xp.sum(g2, axis=0)
        return gx, gw, gb

    @staticmethod
    def _sizes(out: Any, w: Any) -> tuple[int, int]:
        rows = out.size // w.shape[0] if w.shape[0] else 0
        return rows, rows * w.shape[0] * w.shape[1]

    def forward_flops(self, out, x, w, b=None):
        rows, macs = self._sizes(out, w)
        return macs + (out.size if b is not None else 0)

    def backward_flops(self, out, x, w, b=None):
        _, macs = self._sizes(out, w)
        flops = macs * (int(self.needs[0]) + int(self.needs[1]))
        if b is not None and self.needs[2]:
            flops += out.size - b.size
        return flops

    def macs_of(self, flops, flops_bwd, out, x, w, b=None):
        # the products are multiply-adds; the bias adds (and their sum in backward) are FLOPs
        _, macs = self._sizes(out, w)
        return macs, macs * (int(self.needs[0]) + int(self.needs[1]))


# --------------------------------------------------------------------------------------------
# tensordot and the products that are tensordots with fixed axes


class TensorDot(Op):
    """y = sum over paired axes of a[free_a, s] b[s, free_b]  (NumPy's tensordot).
    dL/da = g contracted with b over b's free axes;  dL/db = a contracted with g over a's.

    ``axes`` is an int N (the last N axes of a with the first N of b) or a pair of sequences
    (axes of a, axes of b), paired in order.  The computation is the textbook one: move the
    contracted axes of a to the end and those of b to the front, flatten both to matrices
    A (F_a, S) and B (S, F_b), and multiply.  Backward is then the matmul rule,
    dA = G B^T and dB = A^T G, with the reshapes and transposes undone.
    """

    name = "tensordot"
    inputs = ("a", "b")
    wants_needs = True
    counts_macs = True

    def __init__(self, axes: Any = 2) -> None:
        self.axes = axes

    def pick_axes(self, a: Any, b: Any) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """The contracted axes of a and of b, non-negative, paired in order."""
        axes = self.axes
        if isinstance(axes, int):
            if not 0 <= axes <= min(a.ndim, b.ndim):
                raise self.error(
                    f"{fmt(tuple(a.shape))} and {fmt(tuple(b.shape))}: axes={axes} must lie in "
                    f"0..{min(a.ndim, b.ndim)} (it contracts the last {axes} axes of a with the "
                    "first of b)",
                    ValueError,
                )
            return tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
        try:
            xa, xb = axes
            xa = (xa,) if isinstance(xa, int) else tuple(operator.index(i) for i in xa)
            xb = (xb,) if isinstance(xb, int) else tuple(operator.index(i) for i in xb)
        except (TypeError, ValueError):
            raise self.error(
                f"axes must be an int or a pair (axes of a, axes of b), got {axes!r}", TypeError
            ) from None
        if len(xa) != len(xb):
            raise self.error(
                f"axes {xa} of a and {xb} of b differ in number ({len(xa)} and {len(xb)}); "
                "they are contracted in pairs",
                ValueError,
            )
        xa = tuple(normalize_axis(self.name, i, a.ndim) for i in xa)
        xb = tuple(normalize_axis(self.name, i, b.ndim) for i in xb)
        for which, xs in (("a", xa), ("b", xb)):
            if len(set(xs)) != len(xs):
                raise self.error(f"axes {xs} of {which} repeat an axis", ValueError)
        return xa, xb

    def forward(self, xp, a, b):
        xa, xb = self.pick_axes(a, b)
        sa, sb = tuple(a.shape), tuple(b.shape)
        size_a = tuple(sa[i] for i in xa)
        size_b = tuple(sb[i] for i in xb)
        if size_a != size_b:
            raise self.error(
                f"{fmt(sa)} and {fmt(sb)}: contracted axes {xa} of a have sizes {fmt(size_a)} "
                f"but axes {xb} of b have sizes {fmt(size_b)}. Paired axes must have equal "
                "sizes: choose other axes or transpose an operand.",
                ValueError,
            )
        free_a = [i for i in range(a.ndim) if i not in xa]
        free_b = [i for i in range(b.ndim) if i not in xb]
        self.perm_a, self.perm_b = (*free_a, *xa), (*xb, *free_b)
        self.free_a = tuple(sa[i] for i in free_a)
        self.free_b = tuple(sb[i] for i in free_b)
        self.summed = size_a
        # the matrix problem (F_a, S) @ (S, F_b)
        self.m, self.k, self.n = numel(self.free_a), numel(size_a), numel(self.free_b)
        self.A = xp.transpose(a, self.perm_a).reshape((self.m, self.k))
        self.B = xp.transpose(b, self.perm_b).reshape((self.k, self.n))
        return xp.matmul(self.A, self.B).reshape(self.free_a + self.free_b)

    def backward(self, xp, g):
        G = g.reshape((self.m, self.n))
        ga = gb = None
        if self.needs[0]:
            ga = xp.matmul(G, self.B.T).reshape(self.free_a + self.summed)
            ga = xp.transpose(ga, _inverse(self.perm_a))
        if self.needs[1]:
            gb = xp.matmul(self.A.T, G).reshape(self.summed + self.free_b)
            gb = xp.transpose(gb, _inverse(self.perm_b))
        return ga, gb

    def forward_flops(self, out, a, b):
        return self.m * self.k * self.n

    def backward_flops(self, out, a, b):
        return _count(self.needs) * self.m * self.k * self.n


def _inverse(perm: tuple[int, ...]) -> tuple[int, ...]:
    """The permutation that undoes ``perm``."""
    inv = [0] * len(perm)
    for i, p in enumerate(perm):
        inv[p] = i
    return tuple(inv)


class Dot(TensorDot):
    """NumPy's dot for operands of at most 2 dimensions:
    scalar · x = scalar * x;  vector · vector = sum_k a_k b_k;  otherwise the matrix product.
    dL/da = g contracted with b, dL/db = a contracted with g (the tensordot rule).

    For more dimensions NumPy's dot contracts a's last axis with b's second-to-last, which is
    easy to misread; dot refuses and points to matmul (batched) or tensordot (named axes).
    """

    name = "dot"
    method = True

    def __init__(self) -> None:
        super().__init__()

    def pick_axes(self, a, b):
        if a.ndim > 2 or b.ndim > 2:
            raise self.error(
                f"{fmt(tuple(a.shape))} · {fmt(tuple(b.shape))}: dot takes operands of at most "
                "2 dimensions. Use matmul for a batched matrix product, or tensordot to say "
                "which axes to contract.",
                ValueError,
            )
        if a.ndim == 0 or b.ndim == 0:
            return (), ()
        ka, kb = a.shape[-1], b.shape[0]
        if ka != kb:
            where = "first axis" if b.ndim == 2 else "length"
            raise self.error(
                f"{fmt(tuple(a.shape))} · {fmt(tuple(b.shape))}: inner dimensions {ka} and "
                f"{kb} differ. a's last axis must match b's {where}: transpose or reshape one "
                "operand.",
                ValueError,
            )
        return (a.ndim - 1,), (0,)


class Inner(TensorDot):
    """y[I, J] = sum_k a[I, k] b[J, k]: contracts the last axis of both (NumPy's inner);
    a scalar operand scales the other.   dL/da = g contracted with b, and symmetrically.
    """

    name = "inner"

    def __init__(self) -> None:
        super().__init__()

    def pick_axes(self, a, b):
        if a.ndim == 0 or b.ndim == 0:
            return (), ()
        if a.shape[-1] != b.shape[-1]:
            raise self.error(
                f"{fmt(tuple(a.shape))} and {fmt(tuple(b.shape))}: last dimensions "
                f"{a.shape[-1]} and {b.shape[-1]} differ. inner contracts the last axis of "
                "both operands; transpose one, or use tensordot to pick other axes.",
                ValueError,
            )
        return (a.ndim - 1,), (b.ndim - 1,)


class Outer(Op):
    """y[i, j] = a_i b_j, with a and b flattened first (NumPy's outer).
    dL/da_i = sum_j g_ij b_j = (g @ b)_i,  dL/db_j = sum_i a_i g_ij = (a @ g)_j.
    """

    name = "outer"
    inputs = ("a", "b")
    wants_needs = True

    def forward(self, xp, a, b):
        self.a, self.b = a.reshape(-1), b.reshape(-1)
        self.sa, self.sb = tuple(a.shape), tuple(b.shape)
        return self.a.reshape((-1, 1)) * self.b.reshape((1, -1))

    def backward(self, xp, g):
        ga = xp.matmul(g, self.b).reshape(self.sa) if self.needs[0] else None
        gb = xp.matmul(self.a, g).reshape(self.sb) if self.needs[1] else None
        return ga, gb

    def forward_flops(self, out, a, b):
        return out.size  # one multiply per entry

    def backward_flops(self, out, a, b):
        return _count(self.needs) * out.size  # g @ b and a @ g: m·n MACs each


# --------------------------------------------------------------------------------------------
# einsum


_ALPHABET = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _letters(text: str) -> bool:
    """True when ``text`` is ASCII letters only (the empty string counts)."""
    return all(c.isascii() and c.isalpha() for c in text)


def _unique(term: str) -> str:
    """``term``'s letters, each once, in order of first appearance ("iij" -> "ij")."""
    return "".join(dict.fromkeys(term))


class Einsum(Op):
    """y = einsum(subscripts, x_1, ..., x_n): multiply the operands entry by entry over the
    whole index space named by the letters, and sum out the letters missing from the output.
    dL/dx_i = einsum(output, other operands' subscripts -> subscripts of x_i) applied to
    (g, the other operands): the same contraction with g standing in for x_i.

    Every pattern NumPy's einsum takes:

    * explicit (``"ij,jk->ik"``) and implicit (``"ij,jk"``: the output is the letters used
      once, in alphabetical order -- ASCII, so capitals first -- as in NumPy);
    * a letter repeated within one operand takes a diagonal: ``"ii->i"`` is the diagonal,
      ``"ii->"`` (or ``"ii"``) the trace, ``"bii->bi"`` a batch of diagonals.  y depends on
      x only through that diagonal, so the gradient is g scattered onto it (zeros elsewhere);
    * ``...`` (ellipsis) stands for the axes no letter names, broadcast across operands
      (``"...ij,...jk->...ik"``); with no ``->`` they lead the output;
    * an axis of size 1 broadcasts against the same letter's size elsewhere (as NumPy); its
      gradient is summed back down.

    A letter that appears only in x_i (summed away within x_i alone) does not occur in the
    backward einsum; y depends on x_i only through the sum over it, so the gradient is
    constant along that axis and is broadcast back.

    FLOPs: the naive loop nest visits every point of the index space (the product of all the
    letters' sizes, each letter once) and does one multiply-accumulate per extra operand
    there, so max(1, n - 1) · space; each backward einsum is counted the same way over its
    own letters, and scattering onto a diagonal costs one multiply per element of x_i for
    each repeat of a letter.
    """

    name = "einsum"
    wants_needs = True
    counts_macs = True  # with two or more operands (see macs_of)

    def macs_of(self, flops, flops_bwd, out, *xs):
        # two or more operands: multiply-adds; one operand (a sum or a transpose): FLOPs
        return (flops, flops_bwd) if len(xs) > 1 else (0, 0)

    @classmethod
    def call(cls, subscripts: str, *operands: Any) -> Any:
        return apply(cls(subscripts), *operands)

    def __init__(self, subscripts: str) -> None:
        if not isinstance(subscripts, str):
            raise self.error(
                f"subscripts must be a string like 'ij,jk->ik', got {subscripts!r}", TypeError
            )
        self.subscripts = subscripts

    def parse(self, shapes: list[tuple[int, ...]]) -> None:
        """Check the subscripts against the operands; set ``terms`` (one string of letters per
        operand, the ellipsis spelled out in spare letters), ``out`` and ``sizes``."""
        text = self.subscripts.replace(" ", "")
        quoted = repr(self.subscripts)
        lhs, arrow, out = text.partition("->")
        terms = lhs.split(",")
        for t in (*terms, out):
            if not _letters(t.replace("...", "", 1)):
                raise self.error(
                    f"{quoted}: subscripts are letters a-z, A-Z, one per axis, and at most one "
                    "'...' per operand, with ',' between operands and an optional '->output'",
                    ValueError,
                )
        if len(terms) != len(shapes):
            raise self.error(
                f"{quoted} names {len(terms)} operand(s) but {len(shapes)} were given",
                ValueError,
            )
        # the ellipsis: the axes of each operand its letters leave over, right-aligned
        spare = [c for c in _ALPHABET if c not in text]
        widths = []
        for i, (term, shape) in enumerate(zip(terms, shapes)):
            named = len(term.replace("...", ""))
            if "..." in term and len(shape) < named:
                raise self.error(
                    f"{quoted}: operand {i} has shape {fmt(shape)} ({len(shape)} axes) but its "
                    f"subscripts {term!r} name {named} besides '...'",
                    ValueError,
                )
            widths.append(len(shape) - named if "..." in term else 0)
        ell = "".join(spare[:max(widths, default=0)])
        terms = [t.replace("...", ell[len(ell) - w:]) for t, w in zip(terms, widths)]
        sizes: dict[str, int] = {}
        for i, (term, shape) in enumerate(zip(terms, shapes)):
            if len(term) != len(shape):
                raise self.error(
                    f"{quoted}: operand {i} has shape {fmt(shape)} ({len(shape)} axes) but its "
                    f"subscripts {term!r} name {len(term)}",
                    ValueError,
                )
            own: dict[str, int] = {}
            for c, n in zip(term, shape):
                if own.setdefault(c, n) != n:
                    raise self.error(
                        f"{quoted}: operand {i} (shape {fmt(shape)}) repeats the letter {c!r} "
                        f"on axes of sizes {own[c]} and {n}; a repeated letter takes a "
                        "diagonal, which needs equal sizes",
                        ValueError,
                    )
            for c, n in own.items():
                have = sizes.setdefault(c, n)
                if have != n and 1 not in (have, n):
                    first = next(j for j, t in enumerate(terms) if c in t)
                    raise self.error(
                        f"{quoted}: letter {c!r} has size {have} in operand {first} but "
                        f"{n} in operand {i} (shapes "
                        f"{', '.join(fmt(sh) for sh in shapes)}); a letter names one size "
                        "(or 1, which broadcasts)",
                        ValueError,
                    )
                sizes[c] = max(have, n)
        if not arrow:
            letters = "".join(terms)
            out = ell + "".join(
                sorted(c for c in sizes if letters.count(c) == 1 and c not in ell))
        elif "..." in out:
            out = out.replace("...", ell)
        elif ell:
            raise self.error(
                f"{quoted}: '...' stands for {len(ell)} axis(es) here, but the output names "
                "no '...'; write '...' in the output to keep them (or sum them first)",
                ValueError,
            )
        for c in out:
            if c not in sizes:
                raise self.error(
                    f"{quoted}: output letter {c!r} does not appear in any operand", ValueError
                )
            if out.count(c) > 1:
                raise self.error(f"{quoted}: output repeats the letter {c!r}", ValueError)
        self.terms, self.out, self.sizes = terms, out, sizes

    def forward(self, xp, *xs):
        if not xs:
            raise self.error(f"{self.subscripts!r}: give at least one operand", ValueError)
        self.parse([tuple(x.shape) for x in xs])
        self.xs = xs
        return xp.einsum(f"{','.join(self.terms)}->{self.out}", *xs)

    def backward(self, xp, g):
        return tuple(self._grad(xp, g, i) if need else None for i, need in enumerate(self.needs))

    def _grad(self, xp, g, i):
        """dL/dx_i: the contraction with g in x_i's place over x_i's distinct letters, then
        broadcast axes summed down and repeated letters scattered onto their diagonal."""
        x, term = self.xs[i], self.terms[i]
        letters = _unique(term)
        others = [j for j in range(len(self.xs)) if j != i]
        have = set(self.out).union(*[self.terms[j] for j in others])
        keep = "".join(c for c in letters if c in have)
        # the contraction with g in x_i's place (a 0-d g has no subscripts: scale after)
        terms = [self.out] if self.out else []
        arrays = [g] if self.out else []
        terms += [self.terms[j] for j in others]
        arrays += [self.xs[j] for j in others]
        r = xp.einsum(f"{','.join(terms)}->{keep}", *arrays) if arrays else g
        if not self.out and arrays:
            r = r * g
        # letters summed within x_i alone (or broadcast from size 1 elsewhere): constant
        # along them, so broadcast to the full size of every letter
        r = r.reshape(tuple(r.shape[keep.index(c)] if c in keep else 1 for c in letters))
        r = xp.broadcast_to(r, tuple(self.sizes[c] for c in letters))
        # axes of size 1 in x_i that broadcast against a larger size: sum the copies
        own = {c: n for c, n in zip(term, x.shape)}
        stretched = tuple(k for k, c in enumerate(letters) if own[c] != self.sizes[c])
        if stretched:
            r = xp.sum(r, axis=stretched, keepdims=True)
        if letters != term:  # repeated letters: g lives on their diagonal, zeros elsewhere
            r = self._scatter_diagonal(xp, r, term, tuple(x.shape))
        return r

    @staticmethod
    def _scatter_diagonal(xp, r, term, shape):
        """``r`` (one axis per distinct letter of ``term``) placed on the diagonal of an array
        of ``shape``: out[.., a, .., b, ..] = r[.., a, ..] where the axes of a repeated letter
        agree (a == b), else 0."""
        first = {}
        for k, c in enumerate(term):
            first.setdefault(c, k)
        # one axis per letter where it first appears, size-1 axes at its repeats
        r = r.reshape(tuple(n if first[c] == k else 1 for k, (c, n) in
                            enumerate(zip(term, shape))))
        r = xp.broadcast_to(r, shape)
        for k, c in enumerate(term):
            if first[c] != k:  # keep the entries where this axis equals the first one
                p, n = first[c], shape[k]
                eye = xp.eye(n, dtype=r.dtype).reshape(
                    tuple(n if d in (p, k) else 1 for d in range(len(shape))))
                r = r * eye
        return r

    def _space(self, letters: set[str]) -> int:
        return numel(tuple(self.sizes[c] for c in sorted(letters)))

    def forward_flops(self, out, *xs):
        return max(1, len(xs) - 1) * self._space(set(self.sizes))

    def backward_flops(self, out, *xs):
        total = 0
        for i, need in enumerate(self.needs):
            if need:
                letters = set(self.out).union(
                    *[t for j, t in enumerate(self.terms) if j != i])
                total += max(1, len(xs) - 1) * self._space(letters)
                repeats = len(self.terms[i]) - len(_unique(self.terms[i]))
                total += repeats * xs[i].size  # the scatter: one mask multiply per repeat
        return total


# --------------------------------------------------------------------------------------------
# trace


class Trace(Op):
    """y = sum_i x_ii  (a 2-D matrix, square or not: the min(m, n) diagonal entries).
    dy/dx_ij = 1 if i == j else 0, so dL/dx = g · I (an m x n identity).
    """

    name = "trace"
    saves_inputs = False

    def forward(self, xp, x):
        if x.ndim != 2:
            raise self.error(
                f"input {fmt(tuple(x.shape))} is {x.ndim}-D; trace needs a 2-D matrix. Index "
                "or reshape to one matrix first (e.g. x[0]).",
                ValueError,
            )
        self.shape = tuple(x.shape)
        return xp.sum(xp.diagonal(x))

    def backward(self, xp, g):
        m, n = self.shape
        return (g * xp.eye(m, n, dtype=g.dtype),)

    def forward_flops(self, out, x):
        return min(x.shape)  # one add per diagonal entry

    def backward_flops(self, out, x):
        return x.size  # g times the identity

"""Convolution and pooling: ``conv``, ``conv_transpose``, ``unfold``, ``max_pool``, ``avg_pool``.

All of them slide a window over the spatial axes of an ``(N, C, *spatial)`` input, and all of
them are computed the same way: **one strided slice per kernel offset**, never a loop over
output pixels.

im2col: a convolution as one matrix product
-------------------------------------------

Take a 3x3 single-channel image and a 2x2 kernel, stride 1.  Each output pixel is the dot
product of the kernel with one 2x2 window.  Write the windows as the *columns* of a matrix
``cols``; its *rows* are then the kernel offsets (i, j), and row (i, j) is just the image
shifted by (i, j) -- one strided slice::

    x = a b c         kernel offset    row of cols = x[i:i+2, j:j+2], flattened
        d e f             (0,0)          a b d e
        g h i             (0,1)          b c e f
                          (1,0)          d e g h
                          (1,1)          e f h i
                                         ^ one column per output pixel

    y (1 x 4) = W (1 x 4) @ cols (4 x 4)        ->  reshape to the 2x2 output

With C input channels the rows are (c, i, j), C·kh·kw of them, and with N images the columns
are (h, w, n); the weight (Cout, C, kh, kw) flattens to a (Cout, C·kh·kw) matrix, so the whole
layer is **one GEMM**.  Building ``cols`` (im2col) is kh·kw slice copies.

Backward is two more GEMMs and the reverse of im2col::

    dW    = g @ cols^T        (Cout, C·kh·kw): one GEMM
    dcols = W^T @ g           (C·kh·kw, Ho·Wo·N)
    dx    = col2im(dcols):    add row (c, i, j) back onto the input at offset (i, j)

col2im is kh·kw strided *adds* (an input pixel lies in several windows, so its gradient is the
sum over them) -- a scatter whose pattern is known in advance, done without ``add.at``.

One layout decision keeps it fast (see ``Windows``): the GEMM helpers work in the order
**(C, *spatial, N) -- channels first, batch last**.

* Channels first makes ``cols`` a (C·kh·kw, Ho·Wo·N) matrix, so the forward, dW and dcols
  products are each a single large 2-D GEMM (per group) instead of N small ones.
* Batch last makes every kernel-offset slice a sequence of contiguous pieces of N elements
  (Wo·N when the stride is 1), so im2col copies and col2im adds stream through memory instead
  of paying loop overhead on rows of Wo elements.
* The GEMM's output is therefore (Cout, Ho, Wo, N) in memory; the op returns it as an
  (N, Cout, Ho, Wo) *view* (a free transpose).  NumPy's elementwise ops keep that memory
  order, pooling's slices read it efficiently, and so the next layer -- and the gradient
  coming back -- arrive in it too: no transposing copies between layers.

Transposed convolution is the adjoint of convolution: its forward is conv's ``dx`` (a GEMM
and col2im), its backward conv's forward (im2col and a GEMM) and conv's ``dW``.

Pooling uses the same windows without a GEMM: max-pooling takes the elementwise maximum over
the kh·kw slices (remembering which offset won), average pooling their mean; their backward
adds the gradient back through the same slices.

FLOPs convention: multiply-accumulates (MACs) as for matmul.  A convolution costs
``N·Cout·∏out·(Cin/groups)·∏kernel`` MACs (Lucid's rule; a bias is a separate ``add``
op), a transposed convolution the same count for the convolution it is the adjoint of.
Backward computes one product of the same size per operand that requires grad (dx and dW),
so 2·MACs when both do.  Pooling counts one per window element (``out.size·∏kernel``) forward,
and the same backward (each window element receives or is tested for its share).  Building and
scattering ``cols`` moves data and is not counted.
"""

from __future__ import annotations

import itertools
import operator
from typing import Any

import numpy as np

from lucid.backends import BACKENDS, backend_for
from lucid.ops.base import FUNCTIONS, Op, apply, numel
from lucid.shapes import fmt
from lucid.tensor import Tensor
from lucid.types import to_numeric_type

# --------------------------------------------------------------------------------------------
# arguments


def ntuple(label: str, name: str, value: Any, d: int, minimum: int) -> tuple[int, ...]:
    """``value`` (an int or a sequence of ``d`` ints, each >= ``minimum``) as a d-tuple."""
    if isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{label}: {name} must be an int or a tuple of {d} ints, got {value!r}")
    try:
        values = (operator.index(value),) * d
    except TypeError:
        values = None
    if values is None:
        try:
            values = tuple(operator.index(v) for v in value)
        except TypeError:
            raise TypeError(
                f"{label}: {name} must be an int or a tuple of {d} ints, got {value!r}"
            ) from None
        if len(values) != d:
            raise ValueError(
                f"{label}: {name}={value!r} has {len(values)} entries; give one int or {d} "
                f"(one per spatial axis)"
            )
    if any(v < minimum for v in values):
        which = "positive" if minimum == 1 else f">= {minimum}"
        raise ValueError(f"{label}: {name} must be {which}, got {value!r}")
    return values


def _floating(op: Op, what: str, a: Any) -> None:
    numeric = to_numeric_type(a.dtype)
    if not numeric.is_floating_point:
        raise op.error(
            f"{what} has dtype {numeric.name}; {op.label} needs floating-point values. "
            "Convert it first, e.g. x.astype(lucid.Float32).",
            TypeError,
        )


def _dims(d: int) -> str:
    """The names of d spatial axes, for messages."""
    return {1: "L", 2: "H, W", 3: "D, H, W"}.get(d, "...")


# --------------------------------------------------------------------------------------------
# the sliding-window geometry shared by every op here


def _as_strided(xp: Any, a: Any, shape: tuple[int, ...], steps: tuple[int, ...]) -> Any:
    """A read-only view of ``a``'s elements (in row-major order) with ``steps`` in elements.

    The one place NumPy and MLX differ here: NumPy's ``as_strided`` takes byte strides of
    the actual buffer, MLX's ``as_strided`` takes element strides; both need a row-major
    (C-contiguous) array first -- a gradient arriving as a broadcast view (after ``y.sum()``)
    is not one.
    """
    if backend_for(xp).name == "numpy":
        a = np.ascontiguousarray(a)
        size = a.itemsize
        return np.lib.stride_tricks.as_strided(
            a, shape, tuple(s * size for s in steps), writeable=False
        )
    return xp.as_strided(xp.contiguous(a), shape, steps)


def _same_order(xp: Any, a: Any, like: Any) -> Any:
    """``a`` with its memory laid out in the order of ``like`` (same shape).

    Elementwise NumPy ops on two arrays whose memory orders differ (one NCHW, one with the
    batch last) read one of them transposed, several times slower; one copy first is
    cheaper.  MLX arrays have no memory order to match.
    """
    if backend_for(xp).name != "numpy" or a.ndim < 2:
        return a
    order = np.argsort([-abs(s) for s in like.strides], kind="stable")
    if list(order) == list(np.argsort([-abs(s) for s in a.strides], kind="stable")):
        return a
    out = np.empty_like(like, dtype=a.dtype)
    out[...] = a
    return out


class Windows:
    """Where each kernel offset reads, for a window sliding over ``size`` (the spatial axes).

    ``pads`` is one (before, after) pair per axis.  The input is padded to ``padded``; the
    output has ``out`` positions per axis, ``out = (padded - dilation·(k-1) - 1) // stride + 1``,
    and kernel offset (k_1..k_d) reads the slice ``k_1·dil_1 : ... : stride_1`` of each
    spatial axis (``spatial``), shaped like the output.

    The GEMM helpers (im2col, col2im, to_matrix, from_matrix) work in the order
    **(C, *spatial, N)**: channels first, batch last.  Channels first makes the GEMM operands
    plain matrices (rows = channels); batch last makes every slice above a run of *contiguous*
    N-element pieces -- (out_d · N)-element ones when the stride is 1 -- so copying (im2col)
    and adding (col2im) spend their time moving data, not on loop overhead over short rows.
    """

    def __init__(self, label: str, size, kernel, stride, pads, dilation, out=None):
        self.size, self.kernel, self.stride = tuple(size), tuple(kernel), tuple(stride)
        self.pads, self.dilation = tuple(pads), tuple(dilation)
        self.padded = tuple(n + lo + hi for n, (lo, hi) in zip(size, pads))
        extent = tuple(dl * (k - 1) + 1 for k, dl in zip(kernel, dilation))
        if any(e > p for e, p in zip(extent, self.padded)):
            raise ValueError(
                f"{label}: the kernel {fmt(self.kernel)} (spanning {fmt(extent)} with dilation "
                f"{fmt(self.dilation)}) is larger than the padded input {fmt(self.padded)} "
                f"(input {fmt(self.size)} plus padding). Use a smaller kernel or dilation, or "
                "more padding."
            )
        self.out = tuple((p - e) // s + 1 for p, e, s in zip(self.padded, extent, stride))
        if out is not None:  # conv_transpose: the positions its input has (output_padding)
            self.out = tuple(out)
        d = len(self.size)
        # row-major element steps of the padded spatial axes
        steps = [1] * d
        for i in range(d - 2, -1, -1):
            steps[i] = steps[i + 1] * self.padded[i + 1]
        self.steps = tuple(steps)
        self.offsets = list(itertools.product(*[range(k) for k in kernel]))

    @property
    def taps(self) -> int:
        """Kernel offsets: kh·kw (and so on)."""
        return numel(self.kernel)

    # -- slices and padding -----------------------------------------------------------------
    def spatial(self, offset: tuple[int, ...]) -> tuple[slice, ...]:
        """The slices, one per spatial axis of the padded input, that kernel offset reads."""
        return tuple(slice(k * dl, k * dl + s * (o - 1) + 1, s)
                     for k, dl, s, o in zip(offset, self.dilation, self.stride, self.out))

    def region(self, offset: tuple[int, ...]) -> tuple[slice, ...]:
        """The slice of one kernel offset over an (N, C, *padded) array."""
        return (slice(None), slice(None), *self.spatial(offset))

    def interior(self) -> tuple[slice, ...]:
        """Where the input sits inside the padded spatial axes."""
        return tuple(slice(lo, lo + n) for (lo, _), n in zip(self.pads, self.size))

    def pad(self, xp: Any, x: Any, value: float = 0.0, first: int = 2) -> Any:
        """Pad the spatial axes (``first`` onwards: 2 for (N, C, *S), 1 for (C, *S, N)) to
        ``padded`` with ``value``: a new array."""
        if self.padded == self.size:
            return x
        d = len(self.size)
        shape = (*x.shape[:first], *self.padded, *x.shape[first + d:])
        out = xp.full(shape, value, dtype=x.dtype)
        out[(slice(None),) * first + self.interior()] = x  # cheaper than xp.pad
        return out

    def crop(self, x: Any) -> Any:
        """Undo ``pad`` on an (N, C, *padded) array (a view)."""
        if self.padded == self.size:
            return x
        return x[(slice(None), slice(None), *self.interior())]

    # -- the (C, *spatial, N) order of the GEMM helpers -----------------------------------------
    @staticmethod
    def batch_last(xp: Any, x: Any) -> Any:
        """(N, C, *S) -> (C, *S, N): a view (a copy only if the caller makes it contiguous)."""
        return xp.transpose(x, (*range(1, x.ndim), 0))

    @staticmethod
    def batch_first(xp: Any, x: Any) -> Any:
        """(C, *S, N) -> (N, C, *S): a view."""
        return xp.transpose(x, (x.ndim - 1, *range(x.ndim - 1)))

    def im2col(self, xp: Any, x: Any, groups: int) -> Any:
        """``x`` (N, C, *size) -> ``cols`` (groups, C/groups · taps, prod(out) · N).

        Row (c, k_1..k_d) of cols holds channel c of every image shifted by the kernel offset:
        a strided *view* of the padded input (no copy), materialised by one reshape.
        """
        if isinstance(x, Tensor):  # create_graph: the same windows, recorded as an op
            return apply(_Im2col(self, groups), x)
        n, c = x.shape[0], x.shape[1]
        xpad = self.pad(xp, self.batch_last(xp, x), first=1)  # (C, *padded, N)
        image = numel(self.padded) * n
        shape = (c, *self.kernel, *self.out, n)
        steps = (
            image,
            *[dl * st * n for dl, st in zip(self.dilation, self.steps)],
            *[s * st * n for s, st in zip(self.stride, self.steps)],
            1,
        )
        windows = _as_strided(xp, xpad, shape, steps)
        return windows.reshape((groups, c // groups * self.taps, numel(self.out) * n))

    def col2im(self, xp: Any, cols: Any, channels: int, batch: int) -> Any:
        """The adjoint of ``im2col``: (groups, C/groups · taps, prod(out) · N) ->
        (N, C, *size), each row added back at its kernel offset (taps strided adds)."""
        if isinstance(cols, Tensor):  # create_graph: the same sums, recorded as an op
            return apply(_Col2im(self, channels, batch), cols)
        cols = cols.reshape((channels, self.taps, *self.out, batch))
        out = xp.zeros((channels, *self.padded, batch), dtype=cols.dtype)
        for t, offset in enumerate(self.offsets):
            out[(slice(None), *self.spatial(offset), slice(None))] += cols[:, t]
        return self.crop(self.batch_first(xp, out))

    def to_matrix(self, xp: Any, y: Any, groups: int) -> Any:
        """An output-shaped (N, C, *out) array as a GEMM operand (groups, C/groups,
        prod(out) · N): free when y is already (C, *out, N) in memory, as conv outputs are."""
        c = y.shape[1]
        # sizes spelled out, not -1: a reshape of an empty array cannot infer one
        return self.batch_last(xp, y).reshape((groups, c // groups, numel(self.out) * y.shape[0]))

    def from_matrix(self, xp: Any, y: Any, channels: int, batch: int) -> Any:
        """A GEMM result (groups, C/groups, prod(out) · N) as the (N, C, *out) output: a
        view, (C, *out, N) in memory -- and NumPy's elementwise ops keep that order, so the
        next layer (and the gradient coming back) arrive in it too."""
        return self.batch_first(xp, y.reshape((channels, *self.out, batch)))


# --------------------------------------------------------------------------------------------
# convolution


class _Im2col(Op):
    """cols = im2col(x) with the windows of one convolution, as an op: how a convolution's
    backward rule records a graph under ``create_graph=True`` (second derivatives).  Its
    backward is col2im, itself an op when differentiated again (:class:`_Col2im`)."""

    saves_inputs = False

    def __init__(self, win: Windows, groups: int) -> None:
        self.win, self.groups = win, groups

    def forward(self, xp, x):
        if isinstance(x, Tensor):
            return apply(_Im2col(self.win, self.groups), x)
        self.n, self.c = x.shape[0], x.shape[1]
        return self.win.im2col(xp, x, self.groups)

    def backward(self, xp, g):
        return (self.win.col2im(xp, g, self.c, self.n),)

    def forward_flops(self, out, x):
        return 0  # moves data only

    def backward_flops(self, out, x):
        return out.size  # one addition per window element


class _Col2im(Op):
    """x = col2im(cols), the adjoint of :class:`_Im2col`, as an op (its backward is im2col)."""

    saves_inputs = False

    def __init__(self, win: Windows, channels: int, batch: int) -> None:
        self.win, self.channels, self.batch = win, channels, batch

    def forward(self, xp, cols):
        if isinstance(cols, Tensor):
            return apply(_Col2im(self.win, self.channels, self.batch), cols)
        self.groups = cols.shape[0]
        return self.win.col2im(xp, cols, self.channels, self.batch)

    def backward(self, xp, g):
        return (self.win.im2col(xp, g, self.groups),)

    def forward_flops(self, out, cols):
        return cols.size  # one addition per column element

    def backward_flops(self, out, cols):
        return 0


# named after the classes are made: internal ops, not published (see graph_xp's _Scatter)
_Im2col.name, _Col2im.name = "im2col", "col2im"


class _ConvBase(Op):
    """What conv and conv_transpose share: arguments, checks, the error prefix."""

    wants_needs = True
    counts_macs = True
    kind = "conv"

    def __init__(self, d: int, stride, padding, dilation, groups: int) -> None:
        self.d = d
        self.label = f"{self.kind}{d}d"
        self.stride = ntuple(self.label, "stride", stride, d, 1)
        self.padding = _padding(self.label, padding, d)
        self.dilation = ntuple(self.label, "dilation", dilation, d, 1)
        self.groups = groups

    def error(self, message: str, kind: type[Exception] = ValueError) -> Exception:
        return kind(f"{self.label}: {message}")

    def check(self, x: Any, w: Any) -> None:
        d = self.d
        sx, sw = tuple(x.shape), tuple(w.shape)
        if len(sx) != d + 2:
            raise self.error(
                f"input of shape {fmt(sx)} has {len(sx)} dimensions; expected {d + 2} "
                f"(N, C, {_dims(d)}) or {d + 1} for one unbatched sample"
            )
        if len(sw) != d + 2:
            raise self.error(
                f"weight of shape {fmt(sw)} has {len(sw)} dimensions; expected {d + 2} "
                f"({self.weight_axes()}, then {d} kernel sizes)"
            )
        _floating(self, "input", x)
        _floating(self, "weight", w)
        g = self.groups
        if g < 1:
            raise self.error(f"groups must be a positive int, got {g}")


def _padding(label: str, padding: Any, d: int) -> tuple[tuple[int, int], ...]:
    """An int, a d-tuple of ints, or explicit (before, after) pairs -> d pairs."""
    if isinstance(padding, (tuple, list)) and padding and all(
        isinstance(p, (tuple, list)) for p in padding
    ):
        if len(padding) != d or any(len(p) != 2 for p in padding):
            raise ValueError(f"{label}: padding={padding!r} must hold {d} (before, after) pairs")
        pairs = tuple((operator.index(a), operator.index(b)) for a, b in padding)
        if any(a < 0 or b < 0 for a, b in pairs):
            raise ValueError(f"{label}: padding must be >= 0, got {padding!r}")
        return pairs
    return tuple((p, p) for p in ntuple(label, "padding", padding, d, 0))


class Conv(_ConvBase):
    """Cross-correlation (deep learning's "convolution") of x (N, C, *S) with w
    (Cout, C/groups, *k)::

        y[n, o, p] = sum_{c, t} w[o, c, t] · xpad[n, g(o)·C/groups + c, p·stride + t·dilation]

    for every output position p and kernel offset t (g(o) is o's group).  With cols =
    im2col(x) this is y = W @ cols, so (see the module docstring)::

        dL/dW = g @ cols^T          dL/dx = col2im(W^T @ g)

    Computed as one GEMM per group forward, and one per operand that requires grad backward.
    """

    name = "conv"
    function = "conv_nd"
    inputs = ("x", "w")

    @classmethod
    def call(cls, x: Any, w: Any, stride: Any = 1, padding: Any = 0, dilation: Any = 1,
             groups: int = 1) -> Any:
        """N-d convolution of x (N, C, *S) with w (Cout, C/groups, *k); no bias."""
        d = max(len(getattr(w, "shape", ())) - 2, 1)
        return apply(cls(d, stride, padding, dilation, groups), x, w)
    wants_final = True

    def weight_axes(self) -> str:
        return "out_channels, in_channels/groups"

    def forward(self, xp, x, w):
        self.check(x, w)
        n, c = x.shape[0], x.shape[1]
        cout, g = w.shape[0], self.groups
        if c != w.shape[1] * g:
            per = f": {w.shape[1]} per group x {g} groups" if g > 1 else ""
            raise self.error(
                f"input has {c} channels but weight expects {w.shape[1] * g} (weight shape "
                f"{fmt(tuple(w.shape))}{per}). Give the input {w.shape[1] * g} channels, or "
                f"build the layer with in_channels={c}."
            )
        if cout % g:
            raise self.error(
                f"the weight's {cout} output channels (weight shape {fmt(tuple(w.shape))}) "
                f"are not divisible by groups={g}"
            )
        win = self.win = Windows(self.label, x.shape[2:], w.shape[2:], self.stride,
                                 self.padding, self.dilation)
        self.cols = win.im2col(xp, x, g)  # (G, C/G·taps, prod(out)·N)
        self.wmat = w.reshape((g, cout // g, numel(tuple(w.shape[1:]))))  # (G, Cout/G, C/G·taps)
        self.n, self.c, self.cout, self.wshape = n, c, cout, tuple(w.shape)
        return win.from_matrix(xp, xp.matmul(self.wmat, self.cols), cout, n)

    def backward(self, xp, g):
        win = self.win
        g2 = win.to_matrix(xp, g, self.groups)  # (G, Cout/G, prod(out)·N)
        gx = gw = None
        if self.needs[1]:
            # (cols @ g^T)^T rather than g @ cols^T: the same product, but BLAS runs the long
            # prod(out)·N contraction faster with the small (Cout) operand last
            gw = xp.swapaxes(xp.matmul(self.cols, xp.swapaxes(g2, 1, 2)), 1, 2)
            gw = gw.reshape(self.wshape)
        if self.final:
            # the columns are the largest thing a conv saves (prod(kernel) copies of its
            # input); free them before dcols, as large, is allocated
            del self.cols
        if self.needs[0]:
            dcols = xp.matmul(xp.swapaxes(self.wmat, 1, 2), g2)
            gx = win.col2im(xp, dcols, self.c, self.n)
        return gx, gw

    def macs(self, out: Any, w: Any) -> int:
        """N·Cout·prod(out)·(Cin/groups)·prod(kernel)."""
        return numel(tuple(out.shape)) * numel(tuple(w.shape[1:]))

    def forward_flops(self, out, x, w):
        return self.macs(out, w)

    def backward_flops(self, out, x, w):
        return (int(self.needs[0]) + int(self.needs[1])) * self.macs(out, w)


class ConvTranspose(_ConvBase):
    """Transposed convolution: the adjoint of ``conv``.  x (N, Cin, *S), w (Cin, Cout/groups,
    *k) -- the weight of the convolution that maps the output back to x -- give y (N, Cout,
    *O) with ``O = (S - 1)·stride - 2·padding + dilation·(k - 1) + output_padding + 1``::

        y = col2im(W^T @ x)             (conv's dL/dx with x in the role of the gradient)
        dL/dx = W @ im2col(g)           (conv's forward applied to g)
        dL/dW = x @ im2col(g)^T         (conv's dL/dW)

    so <conv(y', w), x> = <y', conv_transpose(x, w)> for every y' and x.  Each input pixel
    stamps a weighted copy of the kernel onto the output, spaced ``stride`` apart.
    """

    name = "conv_transpose"
    function = "conv_transpose_nd"
    inputs = ("x", "w")

    @classmethod
    def call(cls, x: Any, w: Any, stride: Any = 1, padding: Any = 0, output_padding: Any = 0,
             dilation: Any = 1, groups: int = 1) -> Any:
        """N-d transposed convolution of x (N, Cin, *S) with w (Cin, Cout/groups, *k)."""
        d = max(len(getattr(w, "shape", ())) - 2, 1)
        return apply(cls(d, stride, padding, output_padding, dilation, groups), x, w)
    kind = "conv_transpose"

    def __init__(self, d: int, stride, padding, output_padding, dilation, groups: int) -> None:
        super().__init__(d, stride, padding, dilation, groups)
        self.output_padding = ntuple(self.label, "output_padding", output_padding, d, 0)
        for op, s, dl in zip(self.output_padding, self.stride, self.dilation):
            if op >= max(s, dl):
                raise ValueError(
                    f"{self.label}: output_padding {self.output_padding} must be smaller than "
                    f"the stride {self.stride} or the dilation {self.dilation} on every axis"
                )

    def weight_axes(self) -> str:
        return "in_channels, out_channels/groups"

    def forward(self, xp, x, w):
        self.check(x, w)
        n, cin = x.shape[0], x.shape[1]
        g = self.groups
        if cin != w.shape[0]:
            raise self.error(
                f"input has {cin} channels but weight expects {w.shape[0]} (weight shape "
                f"{fmt(tuple(w.shape))}, laid out (in_channels, out_channels/groups, ...)). "
                f"Give the input {w.shape[0]} channels, or build the layer with "
                f"in_channels={cin}."
            )
        if cin % g:
            raise self.error(
                f"the weight's {cin} input channels (weight shape {fmt(tuple(w.shape))}) are "
                f"not divisible by groups={g}"
            )
        cout = w.shape[1] * g
        size = tuple(
            (s - 1) * st - lo - hi + dl * (k - 1) + op + 1
            for s, st, (lo, hi), dl, k, op in zip(x.shape[2:], self.stride, self.padding,
                                                  self.dilation, w.shape[2:],
                                                  self.output_padding)
        )
        if any(o < 1 for o in size):
            raise self.error(
                f"input {fmt(tuple(x.shape))} with kernel {fmt(tuple(w.shape[2:]))} and padding "
                f"{self.padding} gives an empty output {fmt(size)}; use less padding"
            )
        win = self.win = Windows(self.label, size, w.shape[2:], self.stride, self.padding,
                                 self.dilation, out=x.shape[2:])
        self.x = x
        self.wmat = w.reshape((g, cin // g, numel(tuple(w.shape[1:]))))  # (G, Cin/G, Cout/G·taps)
        self.n, self.cout, self.cin, self.wshape = n, cout, cin, tuple(w.shape)
        dcols = xp.matmul(xp.swapaxes(self.wmat, 1, 2), win.to_matrix(xp, x, g))
        return win.col2im(xp, dcols, cout, n)

    def backward(self, xp, g):
        win = self.win
        cols = win.im2col(xp, g, self.groups)  # (G, Cout/G·taps, prod(in)·N)
        gx = gw = None
        if self.needs[0]:
            gx = win.from_matrix(xp, xp.matmul(self.wmat, cols), self.cin, self.n)
        if self.needs[1]:
            x2 = win.to_matrix(xp, self.x, self.groups)  # (G, Cin/G, prod(in)·N)
            gw = xp.swapaxes(xp.matmul(cols, xp.swapaxes(x2, 1, 2)), 1, 2)
            gw = gw.reshape(self.wshape)
        return gx, gw

    def macs(self, x: Any, w: Any) -> int:
        """N·Cin·prod(in)·(Cout/groups)·prod(kernel): the MACs of the adjoint convolution."""
        return numel(tuple(x.shape)) * numel(tuple(w.shape[1:]))

    def forward_flops(self, out, x, w):
        return self.macs(x, w)

    def backward_flops(self, out, x, w):
        return (int(self.needs[0]) + int(self.needs[1])) * self.macs(x, w)


class Unfold(Op):
    """im2col as an op: x (N, C, *S) -> (N, C·prod(k), L), column l holding the window of
    output position l (PyTorch's ``unfold``).  Row (c, t) is channel c shifted by kernel
    offset t.  dL/dx = col2im(g): each window element's gradient added back where it was read.
    """
    name = "unfold"
    saves_inputs = False

    @classmethod
    def call(cls, x: Any, kernel_size: Any, dilation: Any = 1, padding: Any = 0,
             stride: Any = 1) -> Any:
        """im2col: (N, C, *S) -> (N, C·prod(kernel), L) sliding windows as columns."""
        d = max(len(getattr(x, "shape", ())) - 2, 1)
        return apply(cls(d, kernel_size, dilation, padding, stride), x)

    def __init__(self, d: int, kernel, dilation, padding, stride) -> None:
        self.label = f"unfold{'' if d == 2 else f'{d}d'}"
        self.d = d
        self.kernel = ntuple(self.label, "kernel_size", kernel, d, 1)
        self.dilation = ntuple(self.label, "dilation", dilation, d, 1)
        self.padding = _padding(self.label, padding, d)
        self.stride = ntuple(self.label, "stride", stride, d, 1)

    def error(self, message: str, kind: type[Exception] = ValueError) -> Exception:
        return kind(f"{self.label}: {message}")

    def forward(self, xp, x):
        if x.ndim != self.d + 2:
            raise self.error(
                f"input of shape {fmt(tuple(x.shape))} has {x.ndim} dimensions; expected "
                f"{self.d + 2} (N, C, {_dims(self.d)})"
                + (" or 3 (C, H, W)" if self.d == 2 else "")
            )
        n, c = x.shape[0], x.shape[1]
        win = self.win = Windows(self.label, x.shape[2:], self.kernel, self.stride,
                                 self.padding, self.dilation)
        self.n, self.c = n, c
        self.L = numel(win.out)  # window positions (named: -1 cannot be inferred when N = 0)
        cols = win.im2col(xp, x, 1).reshape((c * win.taps, self.L, n))  # (C·taps, L, N)
        return xp.transpose(cols, (2, 0, 1))

    def backward(self, xp, g):
        cols = xp.transpose(g, (1, 2, 0)).reshape((1, self.c * self.win.taps, self.L * self.n))
        return (self.win.col2im(xp, cols, self.c, self.n),)

    def forward_flops(self, out, x):
        return 0  # moves data only

    def backward_flops(self, out, x):
        return out.size  # one addition per window element


class Fold(Op):
    """col2im as an op: columns (N, C·prod(k), L) -> (N, C, *output_size), each window's
    values *added* where the window sits (PyTorch's ``fold``, the adjoint of ``unfold``:
    overlapping windows sum).  dL/dcols = unfold(g).
    """

    name = "fold"
    saves_inputs = False

    @classmethod
    def call(cls, x: Any, output_size: Any, kernel_size: Any, dilation: Any = 1,
             padding: Any = 0, stride: Any = 1) -> Any:
        """col2im: (N, C·prod(kernel), L) -> (N, C, *output_size)."""
        return apply(cls(output_size, kernel_size, dilation, padding, stride), x)

    def __init__(self, output_size, kernel, dilation, padding, stride) -> None:
        self.label = "fold"
        self.size = ntuple(self.label, "output_size", output_size, 2, 1)
        self.d = len(self.size)
        self.kernel = ntuple(self.label, "kernel_size", kernel, self.d, 1)
        self.dilation = ntuple(self.label, "dilation", dilation, self.d, 1)
        self.padding = _padding(self.label, padding, self.d)
        self.stride = ntuple(self.label, "stride", stride, self.d, 1)

    def error(self, message: str, kind: type[Exception] = ValueError) -> Exception:
        return kind(f"{self.label}: {message}")

    def forward(self, xp, cols):
        win = self.win = Windows(self.label, self.size, self.kernel, self.stride,
                                 self.padding, self.dilation)
        self.L = numel(win.out)
        if cols.ndim != 3 or cols.shape[1] % win.taps or cols.shape[2] != self.L:
            raise self.error(
                f"input of shape {fmt(tuple(cols.shape))} does not hold (N, C·{win.taps}, "
                f"{self.L}) columns: kernel {fmt(self.kernel)} has {win.taps} taps and "
                f"output_size {fmt(self.size)} gives {self.L} window positions")
        self.n, self.c = cols.shape[0], cols.shape[1] // win.taps
        flat = xp.transpose(cols, (1, 2, 0)).reshape((1, self.c * win.taps, self.L * self.n))
        return win.col2im(xp, flat, self.c, self.n)

    def backward(self, xp, g):
        cols = self.win.im2col(xp, g, 1).reshape((self.c * self.win.taps, self.L, self.n))
        return (xp.transpose(cols, (2, 0, 1)),)

    def forward_flops(self, out, cols):
        return cols.size  # one addition per column element

    def backward_flops(self, out, cols):
        return 0  # moves data only


# --------------------------------------------------------------------------------------------
# pooling


class _Pool(Op):
    """Shared by max_pool and avg_pool: arguments and checks."""

    saves_inputs = False

    def __init__(self, d: int, kernel_size, stride=None, padding=0, dilation=1) -> None:
        self.d = d
        self.label = f"{self.name}{d}d"
        self.kernel = ntuple(self.label, "kernel_size", kernel_size, d, 1)
        self.stride = self.kernel if stride is None else ntuple(
            self.label, "stride", stride, d, 1)
        self.padding = ntuple(self.label, "padding", padding, d, 0)
        self.dilation = ntuple(self.label, "dilation", dilation, d, 1)
        for p, k, dl in zip(self.padding, self.kernel, self.dilation):
            if 2 * p > dl * (k - 1) + 1:
                raise ValueError(
                    f"{self.label}: padding {self.padding} must be at most half the kernel "
                    f"size {self.kernel} (otherwise a window can lie entirely in the padding)"
                )

    def error(self, message: str, kind: type[Exception] = ValueError) -> Exception:
        return kind(f"{self.label}: {message}")

    def windows(self, x: Any) -> Windows:
        if x.ndim not in (self.d + 1, self.d + 2):
            raise self.error(
                f"input of shape {fmt(tuple(x.shape))} has {x.ndim} dimensions; expected "
                f"{self.d + 2} (N, C, {_dims(self.d)}) or {self.d + 1}"
            )
        _floating(self, "input", x)
        self.win = Windows(self.label, x.shape[-self.d:], self.kernel, self.stride,
                           tuple((p, p) for p in self.padding), self.dilation)
        # windows that do not overlap write disjoint slices in backward: assign, not add
        self.disjoint = all(
            dl * (k - 1) + 1 <= s for k, s, dl in zip(self.kernel, self.stride, self.dilation))
        # ... and when they also tile the input exactly (the usual 2x2 pool, stride 2, even
        # sizes), backward writes every input element: no zero-filling needed first
        self.tiles = self.win.padded == self.win.size and all(
            dl == 1 and k == s and o * s == n
            for k, s, dl, o, n in zip(self.kernel, self.stride, self.dilation, self.win.out,
                                      self.win.size))
        return self.win

    def scatter(self, xp: Any, part: Any, dtype: Any) -> Any:
        """dx: ``part(t)`` (output-shaped) added back onto the input through kernel offset t's
        slice, for every offset t (assigned when the windows do not overlap)."""
        win, x = self.win, self.x
        if self.tiles and x.dtype == dtype and backend_for(xp).name == "numpy":
            dx = np.empty_like(x)  # every element is written below (x's memory order)
        elif win.padded == win.size and x.dtype == dtype:
            dx = xp.zeros_like(x)  # NumPy keeps x's memory order: the gradient matches x
        else:
            dx = xp.zeros((*x.shape[:2], *win.padded), dtype=dtype)
        for t, offset in enumerate(win.offsets):
            if self.disjoint:
                dx[win.region(offset)] = part(t)
            else:
                dx[win.region(offset)] += part(t)
        return win.crop(dx)

    def replay(self, x: Tensor) -> None:
        """create_graph: what the backward rule reads (windows, argmax) from x's values."""
        self.forward(BACKENDS[x.device].xp, x._data)

    def scatter_graph(self, part: Any) -> Tensor:
        """:meth:`scatter` as ops (create_graph): the parts stacked into columns, then
        col2im (an op of its own, see :class:`_Col2im`)."""
        win = self.win
        stacked = FUNCTIONS["stack"]([part(t) for t in range(win.taps)], axis=2)
        n, c = stacked.shape[0], stacked.shape[1]
        cols = stacked.transpose((1, 2, *range(3, 3 + self.d), 0))
        cols = cols.reshape((1, c * win.taps, numel(win.out) * n))
        return win.col2im(None, cols, c, n)

    def forward_flops(self, out, x):
        return out.size * self.win.taps

    def backward_flops(self, out, x):
        return out.size * self.win.taps


def _batched(x: Any, d: int) -> Any:
    """An unbatched (C, *S) input as (1, C, *S)."""
    return x.reshape((1, *x.shape)) if x.ndim == d + 1 else x


class MaxPool(_Pool):
    """y[n, c, p] = max over the window of xpad[n, c, p·stride + t·dilation] (padding is -inf).
    dL/dx: each output's gradient goes to the one input that was the maximum of its window
    (the first one on ties), and inputs in several windows sum what they receive.

    Forward keeps the running maximum over the kh·kw offset slices and, per output, the
    offset ``t`` that won (a small int array); backward adds ``g · (argmax == t)`` through
    slice t, one strided add per kernel offset.
    """

    name = "max_pool"
    function = "max_pool_nd"
    saves_inputs = True  # backward finds each window's maximum in x again

    def forward(self, xp, x):
        if isinstance(x, Tensor):
            return self.replay(x)
        win = self.windows(x)
        self.shape, self.x = tuple(x.shape), _batched(x, self.d)
        xpad = win.pad(xp, self.x, value=-float("inf"))
        best = xpad[win.region(win.offsets[0])]
        index_dtype = xp.uint8 if win.taps < 256 else xp.int32
        argmax = xp.zeros(best.shape, dtype=index_dtype) if win.taps == 1 else None
        for t, offset in enumerate(win.offsets[1:], 1):
            part = xpad[win.region(offset)]
            better = part > best  # strictly: ties keep the earlier offset
            best = xp.maximum(best, part)
            # offsets come in increasing order, so the last one that improved is the argmax
            won = better.astype(index_dtype) * t
            argmax = won if argmax is None else xp.maximum(argmax, won)
        self.argmax = argmax
        return best.reshape(best.shape[1:]) if x.ndim == self.d + 1 else best

    def backward(self, xp, g):
        argmax = self.argmax
        if isinstance(g, Tensor):  # create_graph: the same rule, as ops
            g = _batched(g, self.d)
            return (self.scatter_graph(lambda t: g * (argmax == t)).reshape(self.shape),)
        g = _same_order(xp, _batched(g, self.d), argmax)

        def part(t):
            return (argmax == t) * g

        return (self.scatter(xp, part, g.dtype).reshape(self.shape),)


class AvgPool(_Pool):
    """y[n, c, p] = (1 / prod(k)) · sum over the window of xpad[n, c, p·stride + t]
    (zero padding counts in the average, PyTorch's ``count_include_pad=True``).
    dL/dx: every input in a window receives g / prod(k) from it (summed over its windows).
    """

    name = "avg_pool"
    function = "avg_pool_nd"
    saves_inputs = True  # backward reads x's windows (their layout) again

    def __init__(self, d: int, kernel_size, stride=None, padding=0) -> None:
        super().__init__(d, kernel_size, stride, padding)

    def forward(self, xp, x):
        if isinstance(x, Tensor):
            return self.replay(x)
        win = self.windows(x)
        self.shape, self.x = tuple(x.shape), _batched(x, self.d)
        xpad = win.pad(xp, self.x)
        total = xpad[win.region(win.offsets[0])]
        for offset in win.offsets[1:]:
            total = total + xpad[win.region(offset)]
        y = total * (1.0 / win.taps)
        return y.reshape(y.shape[1:]) if x.ndim == self.d + 1 else y

    def backward(self, xp, g):
        g = _batched(g, self.d) * (1.0 / self.win.taps)
        if isinstance(g, Tensor):  # create_graph: the same rule, as ops
            return (self.scatter_graph(lambda t: g).reshape(self.shape),)
        return (self.scatter(xp, lambda t: g, g.dtype).reshape(self.shape),)

"""Spec rows: conv, conv_transpose, unfold, fold, max_pool, avg_pool (lucid/ops/conv.py).

The references are written from the definitions, not from im2col: a convolution adds, for each
kernel offset, the shifted input slice times that offset's weights (an einsum per offset and
group); a transposed convolution *stamps* each input pixel's weighted kernel onto the output
(the scatter form, independent of conv's adjoint); pooling stacks the window slices and reduces
them.  ``tests/test_conv_extra.py`` adds a pixel-by-pixel loop reference and the adjoint
identity.

FLOPs are MACs: conv N·Cout·prod(out)·(Cin/groups)·prod(k) forward, twice that backward when
input and weight both require grad (every float input of a row does here); conv_transpose
N·Cin·prod(in)·(Cout/groups)·prod(k); pooling out.size·prod(k) both ways; unfold 0 forward
and one addition per output element backward.
"""

from __future__ import annotations

import itertools

import numpy as np

import lucid
from lucid.nn import functional as F
from lucid.ops import conv_nd, conv_transpose_nd
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand


def r(*shape, seed=0):
    return rand(shape, seed=seed)


def _t(a):
    return lucid.Tensor(a)


def _tuple(v, d):
    return (v,) * d if isinstance(v, int) else tuple(v)


# -- references (NumPy float64) -----------------------------------------------------------------


def _pairs(padding, d):
    if isinstance(padding, (tuple, list)) and padding and isinstance(padding[0], (tuple, list)):
        return [tuple(p) for p in padding]
    return [(p, p) for p in _tuple(padding, d)]


def ref_conv(x, w, b=None, stride=1, padding=0, dilation=1, groups=1):
    """y[n, o] = sum over kernel offsets t and channels c of w[o, c, t] · xpad[n, c, shifted]."""
    d = w.ndim - 2
    if x.ndim == d + 1:
        return ref_conv(x[None], w, b, stride, padding, dilation, groups)[0]
    s, dl = _tuple(stride, d), _tuple(dilation, d)
    xp = np.pad(x, [(0, 0), (0, 0), *_pairs(padding, d)])
    k = w.shape[2:]
    out = [(xp.shape[2 + i] - dl[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(d)]
    n, c, o = x.shape[0], x.shape[1], w.shape[0]
    cg, og = c // groups, o // groups
    y = np.zeros((n, o, *out))
    for t in itertools.product(*[range(kk) for kk in k]):
        sl = tuple(slice(t[i] * dl[i], t[i] * dl[i] + s[i] * (out[i] - 1) + 1, s[i])
                   for i in range(d))
        patch = xp[(slice(None), slice(None), *sl)]
        for g in range(groups):
            wt = w[(slice(g * og, (g + 1) * og), slice(None), *t)]
            y[:, g * og:(g + 1) * og] += np.einsum("nc...,oc->no...",
                                                   patch[:, g * cg:(g + 1) * cg], wt)
    if b is not None:
        y = y + b.reshape((1, o) + (1,) * d)
    return y


def ref_conv_transpose(x, w, b=None, stride=1, padding=0, output_padding=0, dilation=1,
                       groups=1):
    """Each input pixel stamps w[c, :, t] · x[n, c, i] at output i·stride + t·dilation - pad."""
    d = w.ndim - 2
    if x.ndim == d + 1:
        return ref_conv_transpose(x[None], w, b, stride, padding, output_padding, dilation,
                                  groups)[0]
    s, p = _tuple(stride, d), _tuple(padding, d)
    op, dl = _tuple(output_padding, d), _tuple(dilation, d)
    k, size_in = w.shape[2:], x.shape[2:]
    size = [(size_in[i] - 1) * s[i] - 2 * p[i] + dl[i] * (k[i] - 1) + op[i] + 1
            for i in range(d)]
    n, cin, og = x.shape[0], x.shape[1], w.shape[1]
    cg = cin // groups
    buf = np.zeros((n, og * groups, *[size[i] + 2 * p[i] for i in range(d)]))
    for t in itertools.product(*[range(kk) for kk in k]):
        sl = tuple(slice(t[i] * dl[i], t[i] * dl[i] + s[i] * (size_in[i] - 1) + 1, s[i])
                   for i in range(d))
        for g in range(groups):
            wt = w[(slice(g * cg, (g + 1) * cg), slice(None), *t)]
            buf[(slice(None), slice(g * og, (g + 1) * og), *sl)] += np.einsum(
                "nc...,co->no...", x[:, g * cg:(g + 1) * cg], wt)
    y = buf[(slice(None), slice(None), *[slice(p[i], p[i] + size[i]) for i in range(d)])]
    if b is not None:
        y = y + b.reshape((1, og * groups) + (1,) * d)
    return y


def _window_slices(x, d, kernel, stride, padding, dilation, value):
    k = _tuple(kernel, d)
    s = k if stride is None else _tuple(stride, d)
    p, dl = _tuple(padding, d), _tuple(dilation, d)
    xp = np.pad(x, [(0, 0)] * (x.ndim - d) + [(pp, pp) for pp in p], constant_values=value)
    out = [(xp.shape[x.ndim - d + i] - dl[i] * (k[i] - 1) - 1) // s[i] + 1 for i in range(d)]
    lead = (slice(None),) * (x.ndim - d)
    return [xp[lead + tuple(slice(t[i] * dl[i], t[i] * dl[i] + s[i] * (out[i] - 1) + 1, s[i])
                            for i in range(d))]
            for t in itertools.product(*[range(kk) for kk in k])]


def ref_max_pool(d, kernel, stride=None, padding=0, dilation=1):
    return lambda x: np.max(_window_slices(x, d, kernel, stride, padding, dilation, -np.inf),
                            axis=0)


def ref_avg_pool(d, kernel, stride=None, padding=0):
    return lambda x: np.mean(_window_slices(x, d, kernel, stride, padding, 1, 0.0), axis=0)


def ref_unfold(kernel, dilation=1, padding=0, stride=1):
    def ref(x):
        if x.ndim == 3:
            return ref(x[None])[0]
        parts = _window_slices(x, 2, kernel, stride, padding, dilation, 0.0)
        cols = np.stack(parts, axis=2)  # (N, C, K, Ho, Wo)
        n, c, kk = cols.shape[:3]
        return cols.reshape(n, c * kk, -1)

    return ref


# -- conv ----------------------------------------------------------------------------------------


def _conv(label, fn, ref, samples, flops=(), errors=()):
    return Spec("conv", fn, ref, samples, label=label, flops=flops, errors=errors,
                atol=1e-10, rtol=1e-10)


# a non-contiguous input: (5,5,3,2) transposed to (2,3,5,5)
X_T = r(5, 5, 3, 2, seed=9).transpose(3, 2, 0, 1)

CONV = [
    _conv(
        "2d-pad1",
        lambda x, w: F.conv2d(x, w, padding=1),
        lambda x, w: ref_conv(x, w, padding=1),
        ((r(2, 3, 5, 5), r(4, 3, 3, 3, seed=1)), (r(1, 2, 4, 6), r(3, 2, 3, 3, seed=1)),
         (X_T, r(2, 3, 3, 3, seed=2))),
        flops=(FlopsCase((r(2, 3, 5, 5), r(4, 3, 3, 3, seed=1)),
                         2 * 4 * 25 * 3 * 9, 2 * (2 * 4 * 25 * 3 * 9)),),
        errors=(
            ErrorCase(lambda: F.conv2d(_t(r(1, 3, 8, 8)), _t(r(8, 4, 3, 3))), ValueError,
                      r"^conv2d: input has 3 channels but weight expects 4 \(weight shape "
                      r"\(8,4,3,3\)\)\. Give the input 4 channels, or build the layer with "
                      r"in_channels=3\.$"),
            ErrorCase(lambda: F.conv2d(_t(r(1, 6, 8, 8)), _t(r(8, 4, 3, 3)), groups=2),
                      ValueError,
                      r"^conv2d: input has 6 channels but weight expects 8 \(weight shape "
                      r"\(8,4,3,3\): 4 per group x 2 groups\)"),
            ErrorCase(lambda: F.conv2d(_t(r(1, 4, 8, 8)), _t(r(6, 1, 3, 3)), groups=4),
                      ValueError,
                      r"^conv2d: the weight's 6 output channels \(weight shape \(6,1,3,3\)\) "
                      r"are not divisible by groups=4$"),
            ErrorCase(lambda: F.conv2d(_t(r(3, 32)), _t(r(8, 3, 3, 3))), ValueError,
                      r"^conv2d: input of shape \(3,32\) has 2 dimensions; expected 4 "
                      r"\(N, C, H, W\) or 3 for one unbatched sample$"),
            ErrorCase(lambda: F.conv2d(_t(r(1, 3, 8, 8)), _t(r(8, 3, 3))), ValueError,
                      r"^conv2d: weight of shape \(8,3,3\) has 3 dimensions; expected 4 "
                      r"\(out_channels, in_channels/groups, then 2 kernel sizes\)$"),
            ErrorCase(lambda: F.conv2d(_t(r(1, 1, 2, 2)), _t(r(1, 1, 5, 5))), ValueError,
                      r"^conv2d: the kernel \(5,5\) \(spanning \(5,5\) with dilation \(1,1\)\) "
                      r"is larger than the padded input \(2,2\) \(input \(2,2\) plus padding\)"),
            ErrorCase(lambda: F.conv2d(_t(r(1, 1, 6, 6)), _t(r(1, 1, 3, 3)), dilation=3),
                      ValueError,
                      r"^conv2d: the kernel \(3,3\) \(spanning \(7,7\) with dilation \(3,3\)\) "
                      r"is larger than the padded input \(6,6\)"),
            ErrorCase(lambda: F.conv2d(_t(r(1, 3, 8, 8)), _t(r(8, 3, 3, 3)), stride=0),
                      ValueError, r"^conv2d: stride must be positive, got 0$"),
            ErrorCase(lambda: F.conv2d(_t(r(1, 3, 8, 8)), _t(r(8, 3, 3, 3)), padding=-1),
                      ValueError, r"^conv2d: padding must be >= 0, got -1$"),
            ErrorCase(lambda: F.conv2d(_t(r(1, 3, 8, 8)), _t(r(8, 3, 3, 3)),
                                       stride=(1, 2, 3)),
                      ValueError,
                      r"^conv2d: stride=\(1, 2, 3\) has 3 entries; give one int or 2 "),
            ErrorCase(lambda: F.conv2d(_t(r(1, 3, 8, 8)), _t(r(8, 3, 3, 3)), stride=1.5),
                      TypeError, r"^conv2d: stride must be an int or a tuple of 2 ints"),
            ErrorCase(lambda: F.conv2d(_t(r(1, 3, 8, 8)), _t(r(8, 3, 3, 3)), groups=0),
                      ValueError, r"^conv2d: groups must be a positive int, got 0$"),
            ErrorCase(lambda: F.conv2d(lucid.Tensor(np.ones((1, 3, 4, 4), np.int64)),
                                       _t(r(2, 3, 3, 3))),
                      TypeError,
                      r"^conv2d: input has dtype Int64; conv2d needs floating-point values\. "
                      r"Convert it first"),
            ErrorCase(lambda: F.conv2d(_t(r(1, 3, 8, 8)), _t(r(8, 3, 3, 3)), _t(r(5))),
                      ValueError,
                      r"^conv2d: bias of shape \(5,\) does not match the 8 output channels "
                      r"\(weight shape \(8,3,3,3\)\); expected \(8,\)$"),
            ErrorCase(lambda: F.conv2d(_t(r(1, 3, 8, 8)), _t(r(8, 3, 3, 3)), stride=2,
                                       padding="same"),
                      ValueError, r"^conv2d: padding='same' needs stride 1 \(got stride=2\)"),
            ErrorCase(lambda: F.conv2d(_t(r(1, 3, 8, 8)), _t(r(8, 3, 3, 3)), padding="full"),
                      ValueError, r"^conv2d: padding='full' is not 'same', 'valid'"),
        ),
    ),
    _conv(
        "2d-stride2-pad(1,0)",
        lambda x, w: F.conv2d(x, w, stride=2, padding=(1, 0)),
        lambda x, w: ref_conv(x, w, stride=2, padding=(1, 0)),
        ((r(2, 2, 7, 6), r(3, 2, 3, 3, seed=1)), (r(1, 3, 5, 5), r(2, 3, 2, 2, seed=1))),
        # out (2,3,4,2): 2·3·8 positions · 2·9 MACs
        flops=(FlopsCase((r(2, 2, 7, 6), r(3, 2, 3, 3, seed=1)), 2 * 3 * 8 * 2 * 9,
                         2 * (2 * 3 * 8 * 2 * 9)),),
    ),
    _conv(
        "2d-dilation2",
        lambda x, w: F.conv2d(x, w, padding=2, dilation=2),
        lambda x, w: ref_conv(x, w, padding=2, dilation=2),
        ((r(2, 2, 6, 5), r(3, 2, 3, 3, seed=1)),),
    ),
    _conv(
        "2d-groups2",
        lambda x, w: F.conv2d(x, w, stride=2, padding=1, groups=2),
        lambda x, w: ref_conv(x, w, stride=2, padding=1, groups=2),
        ((r(1, 4, 4, 4), r(6, 2, 3, 3, seed=1)), (r(2, 2, 5, 5), r(4, 1, 3, 3, seed=1))),
        # out (1,6,2,2): 24 positions · (4/2)·9 MACs
        flops=(FlopsCase((r(1, 4, 4, 4), r(6, 2, 3, 3, seed=1)), 24 * 2 * 9, 2 * 24 * 2 * 9),),
    ),
    _conv(
        "2d-depthwise",
        lambda x, w: F.conv2d(x, w, padding=1, groups=3),
        lambda x, w: ref_conv(x, w, padding=1, groups=3),
        ((r(2, 3, 4, 5), r(3, 1, 3, 3, seed=1)), (r(1, 3, 3, 3), r(6, 1, 2, 2, seed=1))),
    ),
    _conv(
        "2d-1x1",
        lambda x, w: F.conv2d(x, w),
        lambda x, w: ref_conv(x, w),
        ((r(2, 3, 4, 5), r(5, 3, 1, 1, seed=1)), (X_T, r(2, 3, 1, 1, seed=1))),
        flops=(FlopsCase((r(2, 3, 4, 5), r(5, 3, 1, 1, seed=1)), 2 * 5 * 20 * 3,
                         2 * 2 * 5 * 20 * 3),),
    ),
    _conv(
        "2d-mixed",  # a different stride, padding and dilation per axis, a rectangular kernel
        lambda x, w: F.conv2d(x, w, stride=(2, 1), padding=(0, 1), dilation=(1, 2)),
        lambda x, w: ref_conv(x, w, stride=(2, 1), padding=(0, 1), dilation=(1, 2)),
        ((r(2, 2, 7, 6), r(3, 2, 2, 3, seed=1)), (X_T, r(2, 3, 3, 2, seed=1))),
    ),
    _conv(
        "2d-no-pad",
        lambda x, w: F.conv2d(x, w),
        lambda x, w: ref_conv(x, w),
        ((r(2, 3, 5, 5), r(4, 3, 3, 3, seed=1)), (X_T, r(3, 3, 2, 4, seed=1))),
    ),
    _conv(
        "2d-same-even-kernel",  # total padding 3 on axis 0: one before, two after
        lambda x, w: F.conv2d(x, w, padding="same"),
        lambda x, w: ref_conv(x, w, padding=((1, 2), (1, 1))),
        ((r(1, 2, 5, 4), r(3, 2, 4, 3, seed=1)),),
    ),
    _conv(
        "2d-valid",
        lambda x, w: F.conv2d(x, w, padding="valid"),
        lambda x, w: ref_conv(x, w),
        ((r(1, 2, 5, 4), r(3, 2, 3, 3, seed=1)),),
    ),
    _conv(
        "2d-bias",
        lambda x, w, b: F.conv2d(x, w, b, padding=1),
        lambda x, w, b: ref_conv(x, w, b, padding=1),
        ((r(2, 3, 4, 4), r(4, 3, 3, 3, seed=1), r(4, seed=2)),),
    ),
    _conv(
        "2d-unbatched",
        lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1),
        lambda x, w, b: ref_conv(x, w, b, stride=2, padding=1),
        ((r(3, 5, 5), r(4, 3, 3, 3, seed=1), r(4, seed=2)),),
    ),
    _conv(
        "1d",
        lambda x, w: F.conv1d(x, w, padding=1),
        lambda x, w: ref_conv(x, w, padding=1),
        ((r(2, 3, 7), r(4, 3, 3, seed=1)), (r(1, 2, 4), r(2, 2, 1, seed=1))),
        flops=(FlopsCase((r(2, 3, 7), r(4, 3, 3, seed=1)), 2 * 4 * 7 * 3 * 3,
                         2 * 2 * 4 * 7 * 3 * 3),),
        errors=(
            ErrorCase(lambda: F.conv1d(_t(r(1, 3, 8)), _t(r(8, 4, 3))), ValueError,
                      r"^conv1d: input has 3 channels but weight expects 4 \(weight shape "
                      r"\(8,4,3\)\)"),
            ErrorCase(lambda: F.conv1d(_t(r(1, 3, 8, 8)), _t(r(8, 3, 3))), ValueError,
                      r"^conv1d: input of shape \(1,3,8,8\) has 4 dimensions; expected 3 "
                      r"\(N, C, L\) or 2 for one unbatched sample$"),
        ),
    ),
    _conv(
        "1d-stride2-dilation2-groups2",
        lambda x, w, b: F.conv1d(x, w, b, stride=2, padding=2, dilation=2, groups=2),
        lambda x, w, b: ref_conv(x, w, b, stride=2, padding=2, dilation=2, groups=2),
        ((r(2, 4, 9), r(6, 2, 3, seed=1), r(6, seed=2)),),
    ),
    _conv(
        "1d-unbatched-same",
        lambda x, w: F.conv1d(x, w, padding="same", dilation=2),
        lambda x, w: ref_conv(x, w, padding=2, dilation=2),
        ((r(3, 6), r(2, 3, 3, seed=1)),),
    ),
    _conv(
        "3d",  # the op is N-d: lucid.ops.conv.conv_nd
        lambda x, w: conv_nd(x, w, stride=(1, 2, 1), padding=1),
        lambda x, w: ref_conv(x, w, stride=(1, 2, 1), padding=1),
        ((r(1, 2, 3, 4, 3), r(2, 2, 2, 3, 2, seed=1)),),
        flops=(FlopsCase((r(1, 2, 3, 4, 3), r(2, 2, 2, 3, 2, seed=1)),
                         1 * 2 * (4 * 2 * 4) * 2 * 12, 2 * 1 * 2 * (4 * 2 * 4) * 2 * 12),),
    ),
]

# -- conv_transpose ------------------------------------------------------------------------------


def _convt(label, fn, ref, samples, flops=(), errors=()):
    return Spec("conv_transpose", fn, ref, samples, label=label, flops=flops, errors=errors,
                atol=1e-10, rtol=1e-10)


CONV_TRANSPOSE = [
    _convt(
        "2d",
        lambda x, w: F.conv_transpose2d(x, w),
        lambda x, w: ref_conv_transpose(x, w),
        ((r(2, 3, 3, 4), r(3, 2, 3, 3, seed=1)), (X_T, r(3, 2, 2, 2, seed=1))),
        # N·Cin·prod(in)·(Cout/groups)·prod(k) = 2·3·12·2·9
        flops=(FlopsCase((r(2, 3, 3, 4), r(3, 2, 3, 3, seed=1)), 2 * 3 * 12 * 2 * 9,
                         2 * 2 * 3 * 12 * 2 * 9),),
        errors=(
            ErrorCase(lambda: F.conv_transpose2d(_t(r(1, 3, 4, 4)), _t(r(4, 2, 3, 3))),
                      ValueError,
                      r"^conv_transpose2d: input has 3 channels but weight expects 4 \(weight "
                      r"shape \(4,2,3,3\), laid out \(in_channels, out_channels/groups, "
                      r"\.\.\.\)\)"),
            ErrorCase(lambda: F.conv_transpose2d(_t(r(1, 4, 4, 4)), _t(r(4, 2, 3, 3)),
                                                 stride=2, output_padding=2),
                      ValueError,
                      r"^conv_transpose2d: output_padding \(2, 2\) must be smaller than the "
                      r"stride \(2, 2\) or the dilation \(1, 1\) on every axis$"),
            ErrorCase(lambda: F.conv_transpose2d(_t(r(1, 3, 4, 4)), _t(r(3, 2, 3, 3)),
                                                 groups=2),
                      ValueError,
                      r"^conv_transpose2d: the weight's 3 input channels \(weight shape "
                      r"\(3,2,3,3\)\) are not divisible by groups=2$"),
            ErrorCase(lambda: F.conv_transpose2d(_t(r(1, 3, 1, 1)), _t(r(3, 2, 1, 1)),
                                                 padding=1),
                      ValueError,
                      r"^conv_transpose2d: input \(1,3,1,1\) with kernel \(1,1\) and padding "
                      r"\(\(1, 1\), \(1, 1\)\) gives an empty output \(-1,-1\)"),
        ),
    ),
    _convt(
        "2d-stride2-pad1-outpad1",
        lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, output_padding=1),
        lambda x, w: ref_conv_transpose(x, w, stride=2, padding=1, output_padding=1),
        ((r(1, 2, 3, 3), r(2, 3, 3, 3, seed=1)), (r(2, 3, 2, 4), r(3, 2, 2, 2, seed=1))),
        flops=(FlopsCase((r(1, 2, 3, 3), r(2, 3, 3, 3, seed=1)), 1 * 2 * 9 * 3 * 9,
                         2 * 1 * 2 * 9 * 3 * 9),),
    ),
    _convt(
        "2d-groups2-dilation2",
        lambda x, w: F.conv_transpose2d(x, w, stride=2, padding=1, groups=2, dilation=2),
        lambda x, w: ref_conv_transpose(x, w, stride=2, padding=1, groups=2, dilation=2),
        ((r(2, 4, 3, 3), r(4, 3, 3, 2, seed=1)),),
    ),
    _convt(
        "2d-mixed",
        lambda x, w: F.conv_transpose2d(x, w, stride=(3, 2), padding=(1, 0),
                                        output_padding=(2, 1), dilation=(1, 2)),
        lambda x, w: ref_conv_transpose(x, w, stride=(3, 2), padding=(1, 0),
                                        output_padding=(2, 1), dilation=(1, 2)),
        ((r(1, 2, 4, 3), r(2, 3, 2, 3, seed=1)),),
    ),
    _convt(
        "2d-outpad-from-dilation",  # output_padding 1 < dilation 2 with stride 1
        lambda x, w: F.conv_transpose2d(x, w, padding=1, output_padding=1, dilation=2),
        lambda x, w: ref_conv_transpose(x, w, padding=1, output_padding=1, dilation=2),
        ((r(1, 2, 4, 3), r(2, 3, 3, 3, seed=1)),),
    ),
    _convt(
        "2d-bias-unbatched",
        lambda x, w, b: F.conv_transpose2d(x, w, b, stride=2),
        lambda x, w, b: ref_conv_transpose(x, w, b, stride=2),
        ((r(3, 3, 2), r(3, 2, 3, 3, seed=1), r(2, seed=2)),),
    ),
    _convt(
        "1d",
        lambda x, w, b: F.conv_transpose1d(x, w, b, stride=2, padding=1, output_padding=1),
        lambda x, w, b: ref_conv_transpose(x, w, b, stride=2, padding=1, output_padding=1),
        ((r(2, 3, 5), r(3, 4, 3, seed=1), r(4, seed=2)),),
    ),
    _convt(
        "3d",
        lambda x, w: conv_transpose_nd(x, w, stride=2, padding=(0, 1, 0)),
        lambda x, w: ref_conv_transpose(x, w, stride=2, padding=(0, 1, 0)),
        ((r(1, 2, 2, 3, 2), r(2, 2, 2, 3, 2, seed=1)),),
    ),
]

# -- unfold --------------------------------------------------------------------------------------

UNFOLD = [
    Spec("unfold", lambda x: F.unfold(x, 3, padding=1), ref_unfold(3, padding=1),
         ((r(2, 3, 4, 5),), (X_T,)), label="3x3-pad1",
         flops=(FlopsCase((r(2, 3, 4, 5),), 0, 2 * 27 * 20),),
         errors=(
             ErrorCase(lambda: F.unfold(_t(r(4, 5)), 2), ValueError,
                       r"^unfold: input of shape \(4,5\) has 2 dimensions; expected 4 "
                       r"\(N, C, H, W\) or 3 \(C, H, W\)$"),
         )),
    Spec("unfold", lambda x: F.unfold(x, (2, 3), dilation=(2, 1), stride=(1, 2)),
         ref_unfold((2, 3), dilation=(2, 1), stride=(1, 2)),
         ((r(1, 2, 5, 7),), (r(2, 5, 7),)), label="mixed"),
]

# -- fold (col2im, the adjoint of unfold) ------------------------------------------------------


def ref_fold(size, kernel, dilation=1, padding=0, stride=1):
    """Every column value added at the pixel it came from: the positions are read off an
    unfolded image of pixel numbers (1-based, so the zero padding marks "outside")."""
    def ref(cols):
        n = cols.shape[0]
        numbers = np.arange(1, size[0] * size[1] + 1, dtype=np.float64).reshape(1, 1, *size)
        where = ref_unfold(kernel, dilation, padding, stride)(numbers)[0]  # (K, L)
        c = cols.shape[1] // where.shape[0]
        out = np.zeros((n, c, size[0] * size[1]))
        blocks = cols.reshape(n, c, *where.shape)
        for k, pos in np.ndenumerate(where):
            if pos > 0:
                out[:, :, int(pos) - 1] += blocks[:, :, k[0], k[1]]
        return out.reshape(n, c, *size)

    return ref


FOLD = [
    Spec("fold", lambda x: F.fold(x, (4, 5), 3, padding=1), ref_fold((4, 5), 3, padding=1),
         ((r(2, 27, 20),), (r(1, 18, 20),)), label="3x3-pad1",
         flops=(FlopsCase((r(2, 27, 20),), 2 * 27 * 20, 0),),
         errors=(
             ErrorCase(lambda: F.fold(_t(r(2, 18, 12)), (4, 5), (2, 3)), ValueError,
                       r"^fold: input of shape \(2,18,12\) does not hold \(N, C·6, 9\) "
                       r"columns"),
         )),
    Spec("fold", lambda x: F.fold(x, (5, 7), (2, 3), dilation=(2, 1), stride=(1, 2)),
         ref_fold((5, 7), (2, 3), dilation=(2, 1), stride=(1, 2)), ((r(1, 12, 9),),),
         label="mixed"),
]

# -- pooling -------------------------------------------------------------------------------------


def _pool(name, label, fn, ref, samples, flops=(), errors=()):
    return Spec(name, fn, ref, samples, label=label, flops=flops, errors=errors)


X4 = (r(2, 3, 4, 4),)
X_ODD = (r(1, 2, 7, 5, seed=3),)
MAX_POOL = [
    _pool("max_pool", "2d-k2", lambda x: F.max_pool2d(x, 2), ref_max_pool(2, 2),
          (X4, X_ODD, (X_T,)),
          flops=(FlopsCase(X4, 24 * 4, 24 * 4),),
          errors=(
              ErrorCase(lambda: F.max_pool2d(_t(r(1, 1, 4, 4)), 2, padding=2), ValueError,
                        r"^max_pool2d: padding \(2, 2\) must be at most half the kernel size "
                        r"\(2, 2\)"),
              ErrorCase(lambda: F.max_pool2d(_t(r(4, 4)), 2), ValueError,
                        r"^max_pool2d: input of shape \(4,4\) has 2 dimensions; expected 4 "
                        r"\(N, C, H, W\) or 3$"),
              ErrorCase(lambda: F.max_pool2d(lucid.Tensor(np.ones((1, 1, 4, 4), np.int32)), 2),
                        TypeError, r"^max_pool2d: input has dtype Int32; max_pool2d needs "
                                   r"floating-point values"),
              ErrorCase(lambda: F.max_pool2d(_t(r(1, 1, 4, 4)), 0), ValueError,
                        r"^max_pool2d: kernel_size must be positive, got 0$"),
              ErrorCase(lambda: F.max_pool2d(_t(r(1, 1, 2, 2)), 3), ValueError,
                        r"^max_pool2d: the kernel \(3,3\) .* is larger than the padded input "
                        r"\(2,2\)"),
          )),
    _pool("max_pool", "2d-k3-s2-p1", lambda x: F.max_pool2d(x, 3, 2, 1),
          ref_max_pool(2, 3, 2, 1), (X4, X_ODD),
          # out (2,3,2,2) = 24 windows of 9
          flops=(FlopsCase(X4, 24 * 9, 24 * 9),)),
    _pool("max_pool", "2d-overlap-s1", lambda x: F.max_pool2d(x, 2, 1),
          ref_max_pool(2, 2, 1), (X4, X_ODD)),
    _pool("max_pool", "2d-mixed", lambda x: F.max_pool2d(x, (2, 3), (1, 2), (1, 1)),
          ref_max_pool(2, (2, 3), (1, 2), (1, 1)), (X4, X_ODD)),
    _pool("max_pool", "2d-dilation2", lambda x: F.max_pool2d(x, 2, 1, 1, dilation=2),
          ref_max_pool(2, 2, 1, 1, 2), (X4, X_ODD)),
    _pool("max_pool", "2d-unbatched", lambda x: F.max_pool2d(x, 2), ref_max_pool(2, 2),
          ((r(3, 4, 6),),)),
    _pool("max_pool", "1d", lambda x: F.max_pool1d(x, 3, 2, 1), ref_max_pool(1, 3, 2, 1),
          ((r(2, 3, 7),), (r(3, 8),)),
          flops=(FlopsCase((r(2, 3, 7),), 2 * 3 * 4 * 3, 2 * 3 * 4 * 3),)),
]

AVG_POOL = [
    _pool("avg_pool", "2d-k2", lambda x: F.avg_pool2d(x, 2), ref_avg_pool(2, 2),
          (X4, X_ODD, (X_T,)),
          flops=(FlopsCase(X4, 24 * 4, 24 * 4),),
          errors=(
              ErrorCase(lambda: F.avg_pool2d(_t(r(1, 1, 4, 4)), 3, padding=2), ValueError,
                        r"^avg_pool2d: padding \(2, 2\) must be at most half the kernel size "
                        r"\(3, 3\)"),
              ErrorCase(lambda: F.avg_pool1d(_t(r(1, 1, 4, 4)), 2), ValueError,
                        r"^avg_pool1d: input of shape \(1,1,4,4\) has 4 dimensions; expected 3 "
                        r"\(N, C, L\) or 2$"),
              ErrorCase(lambda: F.avg_pool2d(_t(r(1, 1, 4, 4)), 2, stride=(1, 0)), ValueError,
                        r"^avg_pool2d: stride must be positive, got \(1, 0\)$"),
          )),
    _pool("avg_pool", "2d-k3-s2-p1", lambda x: F.avg_pool2d(x, 3, 2, 1),
          ref_avg_pool(2, 3, 2, 1), (X4, X_ODD),
          flops=(FlopsCase(X4, 24 * 9, 24 * 9),)),
    _pool("avg_pool", "2d-overlap-s1", lambda x: F.avg_pool2d(x, 2, 1),
          ref_avg_pool(2, 2, 1), (X4, X_ODD)),
    _pool("avg_pool", "2d-mixed", lambda x: F.avg_pool2d(x, (2, 3), (1, 2), (1, 1)),
          ref_avg_pool(2, (2, 3), (1, 2), (1, 1)), (X4, X_ODD)),
    _pool("avg_pool", "2d-unbatched", lambda x: F.avg_pool2d(x, 2), ref_avg_pool(2, 2),
          ((r(3, 4, 6),),)),
    _pool("avg_pool", "1d", lambda x: F.avg_pool1d(x, 3, 2, 1), ref_avg_pool(1, 3, 2, 1),
          ((r(2, 3, 7),), (r(3, 8),)),
          flops=(FlopsCase((r(2, 3, 7),), 2 * 3 * 4 * 3, 2 * 3 * 4 * 3),)),
]

SPECS = [*CONV, *CONV_TRANSPOSE, *UNFOLD, *FOLD, *MAX_POOL, *AVG_POOL]

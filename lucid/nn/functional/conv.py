"""Convolutions as functions: ``conv1d``, ``conv2d``, ``conv_transpose2d``, ``unfold``.

Each is the ``conv`` / ``conv_transpose`` op of ``lucid/ops/conv.py`` (im2col and one GEMM;
its docstring draws the picture) plus what a layer adds around it:

* a bias, added as a separate broadcast ``add`` (so FLOPs count it as one addition per output
  element, Lucid's convention: conv MACs + bias adds);
* an unbatched input (C, *S), run as a batch of one;
* ``padding="same"`` (output as large as the input, stride 1) and ``padding="valid"`` (none).

Weights are laid out as in PyTorch: (out_channels, in_channels/groups, *kernel) for a
convolution, (in_channels, out_channels/groups, *kernel) for a transposed one.
"""

from __future__ import annotations

from typing import Any

from lucid.ops.base import apply
from lucid.ops.conv import Conv, ConvTranspose, Fold, Unfold, ntuple
from lucid.shapes import fmt
from lucid.tensor import Tensor

__all__ = ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
           "conv_transpose3d", "unfold", "fold"]


def _tensor(label: str, what: str, x: Any) -> Tensor:
    if isinstance(x, Tensor):
        return x
    try:
        return Tensor(x)
    except TypeError:
        raise TypeError(
            f"{label}: {what} must be a Tensor (or array-like), got {type(x).__name__}"
        ) from None


def _same_padding(label: str, padding: Any, weight: Tensor, stride, dilation, d: int) -> Any:
    """Resolve ``"same"`` / ``"valid"`` into explicit (before, after) pairs."""
    if not isinstance(padding, str):
        return padding
    if padding == "valid":
        return 0
    if padding != "same":
        raise ValueError(
            f"{label}: padding={padding!r} is not 'same', 'valid', an int or a tuple of ints"
        )
    if any(s != 1 for s in ntuple(label, "stride", stride, d, 1)):
        raise ValueError(
            f"{label}: padding='same' needs stride 1 (got stride={stride!r}); pad explicitly "
            "for a strided convolution"
        )
    dil = ntuple(label, "dilation", dilation, d, 1)
    kernel = tuple(weight.shape[2:]) if weight.ndim == d + 2 else (1,) * d
    pairs = []
    for k, dl in zip(kernel, dil):
        total = dl * (k - 1)
        pairs.append((total // 2, total - total // 2))  # an odd total puts the extra after
    return tuple(pairs)


def _run(label: str, d: int, op: Any, input: Tensor, weight: Tensor, bias: Any) -> Tensor:
    """Apply ``op`` to a batched input, then add the bias per output channel."""
    unbatched = input.ndim == d + 1
    x = input.reshape((1, *input.shape)) if unbatched else input
    y = apply(op, x, weight)
    if bias is not None:
        bias = _tensor(label, "bias", bias)
        cout = y.shape[1]
        if tuple(bias.shape) != (cout,):
            raise ValueError(
                f"{label}: bias of shape {fmt(tuple(bias.shape))} does not match the {cout} "
                f"output channels (weight shape {fmt(tuple(weight.shape))}); expected "
                f"({cout},)"
            )
        y = y + bias.reshape((1, cout) + (1,) * d)
    return y.reshape(y.shape[1:]) if unbatched else y


def _conv(label: str, d: int, input, weight, bias, stride, padding, dilation, groups) -> Tensor:
    input = _tensor(label, "input", input)
    weight = _tensor(label, "weight", weight)
    padding = _same_padding(label, padding, weight, stride, dilation, d)
    op = Conv(d, stride, padding, dilation, _groups(label, groups))
    return _run(label, d, op, input, weight, bias)


def _groups(label: str, groups: Any) -> int:
    if isinstance(groups, bool) or not isinstance(groups, int) or groups < 1:
        raise ValueError(f"{label}: groups must be a positive int, got {groups!r}")
    return groups


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1) -> Tensor:
    """1-D convolution: input (N, Cin, L) or (Cin, L), weight (Cout, Cin/groups, k),
    bias (Cout,) or None.  ``padding``: int, tuple, ``"same"`` or ``"valid"``."""
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1) -> Tensor:
    """2-D convolution: input (N, Cin, H, W) or (Cin, H, W), weight (Cout, Cin/groups, kh, kw),
    bias (Cout,) or None.  ``stride``, ``padding``, ``dilation``: an int or an (h, w) pair;
    ``padding`` may also be ``"same"``, ``"valid"`` or ((top, bottom), (left, right)).

    Output size per axis: ``(S + 2·padding - dilation·(k - 1) - 1) // stride + 1``.
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups: int = 1) -> Tensor:
    """3-D convolution: input (N, Cin, D, H, W) or (Cin, D, H, W), weight
    (Cout, Cin/groups, kd, kh, kw), bias (Cout,) or None; arguments as ``conv2d``'s, per axis."""
    return _conv("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def _conv_transpose(label, d, input, weight, bias, stride, padding, output_padding, groups,
                    dilation) -> Tensor:
    input = _tensor(label, "input", input)
    weight = _tensor(label, "weight", weight)
    op = ConvTranspose(d, stride, padding, output_padding, dilation, _groups(label, groups))
    return _run(label, d, op, input, weight, bias)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1) -> Tensor:
    """1-D transposed convolution: input (N, Cin, L), weight (Cin, Cout/groups, k)."""
    return _conv_transpose("conv_transpose1d", 1, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1) -> Tensor:
    """2-D transposed convolution (the adjoint of ``conv2d``, "deconvolution"): input
    (N, Cin, H, W) or (Cin, H, W), weight (Cin, Cout/groups, kh, kw) as in PyTorch.

    Output size per axis: ``(S - 1)·stride - 2·padding + dilation·(k - 1) + output_padding
    + 1``; ``output_padding`` (smaller than the stride or the dilation) picks among the sizes
    a strided ``conv2d`` maps onto the same input size.
    """
    return _conv_transpose("conv_transpose2d", 2, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups: int = 1, dilation=1) -> Tensor:
    """3-D transposed convolution: input (N, Cin, D, H, W), weight (Cin, Cout/groups, kd, kh,
    kw); sizes as ``conv_transpose2d``'s, per axis."""
    return _conv_transpose("conv_transpose3d", 3, input, weight, bias, stride, padding,
                           output_padding, groups, dilation)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """im2col: (N, C, H, W) -> (N, C·kh·kw, L), column l holding the window of output
    position l (row-major over the output grid), as PyTorch's ``F.unfold``; an unbatched
    (C, H, W) input gives (C·kh·kw, L).

    ``conv2d(x, w)`` equals ``(w.reshape(Cout, -1) @ unfold(x, k)).reshape(N, Cout, Ho, Wo)``.
    """
    input = _tensor("unfold", "input", input)
    unbatched = input.ndim == 3
    x = input.reshape((1, *input.shape)) if unbatched else input
    y = apply(Unfold(2, kernel_size, dilation, padding, stride), x)
    return y.reshape(y.shape[1:]) if unbatched else y


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1) -> Tensor:
    """col2im, the adjoint of :func:`unfold`: columns (N, C·kh·kw, L) -> (N, C, H, W) with
    ``(H, W) = output_size``; overlapping windows add up (PyTorch's ``F.fold``).  So
    ``fold(unfold(x, k), x.shape[2:], k)`` is x times how many windows cover each pixel.
    Unbatched columns (C·kh·kw, L) give (C, H, W), as in PyTorch."""
    input = _tensor("fold", "input", input)
    op = Fold(output_size, kernel_size, dilation, padding, stride)
    if input.ndim == 2:
        return apply(op, input.unsqueeze(0)).squeeze(0)
    return apply(op, input)

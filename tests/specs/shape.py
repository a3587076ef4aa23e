"""Spec rows: shape ops (reshape, transpose, squeeze, broadcast, join, split, pad, repeat ...).

Composites without an op of their own (ravel, expand, hstack, vstack, split,
chunk, the ``T``/``mT`` properties) have rows named after the op they are built on, with a
label saying which composite the row exercises.  Shape ops do no arithmetic: 0 FLOPs forward;
backward counts only the additions that sum copies (broadcast_to, repeat, tile).
"""

from __future__ import annotations

import numpy as np

import lucid
from tests.specs.table import ErrorCase, FlopsCase, Spec, rand, transposed, unary

T = lucid.Tensor
X34 = rand((3, 4))
X23 = rand((2, 3))
X234 = rand((2, 3, 4))


def _s(*shapes, seed=0):
    """One sample tuple of arrays with the given shapes."""
    return tuple(rand(s, seed=seed + i) for i, s in enumerate(shapes))


def _zero_flops(*shapes):
    return (FlopsCase(_s(*shapes), 0, 0),)


T34 = transposed()  # (3,4), not C-contiguous
T234 = transposed((4, 3, 2))  # (2,3,4), axes reversed
MATRICES = ((X34,), (rand((4, 3)),), (rand((4, 4)),), (X234,), (T34,), (T234,))

# --------------------------------------------------------------------------------------------
# reshape and friends

RESHAPE = [
    Spec(
        "reshape", lambda a: lucid.reshape(a, (2, -1)), lambda a: np.reshape(a, (2, -1)),
        (_s((3, 4)), _s((6,)), _s((2, 3, 4)), (T34,), (T234,)), label="tuple-infer",
        errors=(
            ErrorCase(lambda: lucid.reshape(T(X23), (4, 2)), ValueError,
                      r"reshape: cannot reshape \(2,3\) \(6 elements\) into \(4,2\) "
                      r"\(8 elements\); the new shape must hold the same number"),
            ErrorCase(lambda: lucid.reshape(T(X23), -1, -1), ValueError,
                      r"reshape: the new shape \(-1,-1\) has more than one -1"),
            ErrorCase(lambda: lucid.reshape(T(X23), (4, -1)), ValueError,
                      r"reshape: cannot reshape \(2,3\) \(6 elements\) into \(4,-1\): the "
                      r"other sizes multiply to 4, which does not divide 6"),
            ErrorCase(lambda: lucid.reshape(T(X23), (-2, -3)), ValueError,
                      r"reshape: invalid size -2 in the new shape \(-2,-3\)"),
            ErrorCase(lambda: lucid.reshape(T(X23), (2.0, 3)), TypeError,
                      r"reshape: a size must be an int, got float 2.0"),
        ),
        flops=_zero_flops((3, 4)),
    ),
    Spec("reshape", lambda a: a.reshape(4, 3), lambda a: a.reshape(4, 3),
         (_s((3, 4)), _s((12,)), _s((2, 6)), (T34,)), label="method-varargs"),
    Spec("reshape", lambda a: lucid.reshape(a, (1, 1)), lambda a: a.reshape(1, 1),
         (_s(()), _s((1,))), label="scalar"),
    Spec("reshape", lucid.ravel, np.ravel, unary() + ((T234,),), label="ravel"),
    Spec("reshape", lambda a: a.ravel(), np.ravel, ((T34,), (X234,)), label="ravel-method"),
]

TRANSPOSE = [
    Spec(
        "transpose", lucid.transpose, np.transpose, unary() + ((T234,),), label="reverse",
        errors=(
            ErrorCase(lambda: lucid.transpose(T(X23), (0, 0)), ValueError,
                      r"transpose: axes \(0, 0\) is not a permutation of \(0, 1\) for shape "
                      r"\(2,3\); each axis must appear exactly once"),
            ErrorCase(lambda: lucid.transpose(T(X23), (1, 0, 2)), ValueError,
                      r"transpose: axes \(1, 0, 2\) has 3 entries but the tensor of shape "
                      r"\(2,3\) has 2 dimension\(s\)"),
            ErrorCase(lambda: lucid.transpose(T(X23), (0, 2)), IndexError,
                      r"transpose: axis 2 is out of range for a tensor with 2 dimension"),
        ),
        flops=_zero_flops((3, 4)),
    ),
    Spec("transpose", lambda a: lucid.transpose(a, (1, 0, 2)),
         lambda a: np.transpose(a, (1, 0, 2)), ((X234,), (T234,)), label="axes"),
    Spec("transpose", lambda a: a.transpose(-1, 0, -2), lambda a: np.transpose(a, (2, 0, 1)),
         ((X234,), (T234,)), label="method-negative-axes"),
    Spec("transpose", lambda a: a.transpose(), np.transpose, ((X34,), (T34,), (X234,)),
         label="method-reverse"),
    Spec("transpose", lambda a: a.T, lambda a: a.T, unary() + ((T234,),), label="T"),
]

SWAPAXES = [
    Spec(
        "swapaxes", lambda a: lucid.swapaxes(a, 0, -1), lambda a: np.swapaxes(a, 0, -1),
        (_s((5,)), _s((3, 4)), (X234,), (T34,), (T234,)),
        errors=(
            ErrorCase(lambda: lucid.swapaxes(T(X23), 0, 2), IndexError,
                      r"swapaxes: axis 2 is out of range for a tensor with 2 dimension"),
            ErrorCase(lambda: T(rand((3,))).mT, ValueError,
                      r"mT: needs a tensor with at least 2 dimensions, got shape \(3,\)"),
        ),
        flops=_zero_flops((3, 4)),
    ),
    Spec("swapaxes", lambda a: a.swapaxes(1, 2), lambda a: a.swapaxes(1, 2), ((X234,), (T234,)),
         label="method"),
    Spec("swapaxes", lambda a: a.mT, lambda a: np.swapaxes(a, -1, -2), MATRICES, label="mT"),
]

X131 = rand((1, 3, 1))
SQUEEZE = [
    Spec(
        "squeeze", lucid.squeeze, np.squeeze,
        (_s((1, 3, 1)), _s((3, 1)), _s((1,)), _s(()), _s((3, 4)), (transposed((4, 1, 3)),)),
        errors=(
            ErrorCase(lambda: lucid.squeeze(T(X23), 0), ValueError,
                      r"squeeze: cannot squeeze axis 0 of shape \(2,3\): its size is 2, not "
                      r"1; squeeze only removes axes of size 1"),
            ErrorCase(lambda: lucid.squeeze(T(X131), (0, -1, 1)), ValueError,
                      r"squeeze: cannot squeeze axis 1 of shape \(1,3,1\): its size is 3"),
            ErrorCase(lambda: lucid.squeeze(T(X131), 3), IndexError,
                      r"squeeze: axis 3 is out of range for a tensor with 3 dimension"),
        ),
        flops=_zero_flops((1, 3, 1)),
    ),
    Spec("squeeze", lambda a: lucid.squeeze(a, -2), lambda a: np.squeeze(a, -2),
         (_s((3, 1, 4)), _s((1, 1)), (transposed((4, 1, 3)),)), label="negative-axis"),
    Spec("squeeze", lambda a: a.squeeze((0, 2)), lambda a: np.squeeze(a, (0, 2)),
         (_s((1, 3, 1)), _s((1, 4, 1, 2))), label="method-tuple"),
]

UNSQUEEZE = [
    Spec(
        "unsqueeze", lambda a: lucid.unsqueeze(a, 0), lambda a: np.expand_dims(a, 0),
        unary() + ((T234,),),
        errors=(
            ErrorCase(lambda: lucid.unsqueeze(T(X23), 3), IndexError,
                      r"unsqueeze: axis 3 is out of range for a tensor with 3 dimension"),
            ErrorCase(lambda: lucid.unsqueeze(T(X23), (1, 1)), ValueError,
                      r"unsqueeze: repeated axis in \(1, 1\)"),
        ),
        flops=_zero_flops((3, 4)),
    ),
    Spec("unsqueeze", lambda a: a.unsqueeze(-1), lambda a: np.expand_dims(a, -1),
         unary() + ((T234,),), label="method-negative"),
    Spec("expand_dims", lambda a: lucid.expand_dims(a, (0, 2)),
         lambda a: np.expand_dims(a, (0, 2)), (_s((5,)), _s((3, 4)), (T34,)), label="tuple"),
    Spec("expand_dims", lambda a: a.expand_dims(1), lambda a: np.expand_dims(a, 1),
         ((X34,), (T34,)), label="method"),
]

FLATTEN = [
    Spec(
        "flatten", lucid.flatten, lambda a: a.reshape(-1), unary() + ((T234,),),
        errors=(
            ErrorCase(lambda: lucid.flatten(T(X234), 2, 1), ValueError,
                      r"flatten: start_axis 2 comes after end_axis 1 for shape \(2,3,4\); "
                      r"give start_axis <= end_axis"),
            ErrorCase(lambda: lucid.flatten(T(X234), 0, 3), IndexError,
                      r"flatten: axis 3 is out of range"),
        ),
        flops=_zero_flops((2, 3, 4)),
    ),
    Spec("flatten", lambda a: lucid.flatten(a, start_axis=1), lambda a: a.reshape(a.shape[0], -1),
         (_s((3, 4)), (X234,), (T234,), _s((2, 1, 3, 2))), label="start_axis"),
    Spec("flatten", lambda a: a.flatten(0, -2), lambda a: a.reshape(-1, a.shape[-1]),
         ((X34,), (X234,), (T234,)), label="method-end_axis"),
]

# --------------------------------------------------------------------------------------------
# broadcasting

BROADCAST = [
    Spec(
        "broadcast_to", lambda a: lucid.broadcast_to(a, (2, 3, 4)),
        lambda a: np.broadcast_to(a, (2, 3, 4)),
        (_s(()), _s((4,)), _s((3, 1)), _s((1, 4)), _s((2, 1, 4)), (T34,), (T234,)),
        errors=(
            ErrorCase(lambda: lucid.broadcast_to(T(X23), (4, 3)), ValueError,
                      r"broadcast_to: cannot broadcast \(2,3\) to \(4,3\): input axis 0 has "
                      r"size 2, which is neither 1 nor the target size 4"),
            ErrorCase(lambda: lucid.broadcast_to(T(X23), (3,)), ValueError,
                      r"broadcast_to: cannot broadcast \(2,3\) to \(3,\): the target has "
                      r"fewer dimensions \(1\) than the input \(2\)"),
            ErrorCase(lambda: T(rand((3, 1))).expand(-1, 3, 4), ValueError,
                      r"expand: -1 at position 0 of \(-1, 3, 4\) names a new leading axis"),
            ErrorCase(lambda: T(X23).expand(3), ValueError,
                      r"expand: 1 size\(s\) \(3,\) for shape \(2,3\)"),
        ),
        # (3,1) -> (2,3,4): each of the 3 inputs feeds 8 outputs; summing them back: 24 - 3
        flops=(FlopsCase(_s((3, 1)), 0, 21), FlopsCase(_s((2, 3, 4)), 0, 0)),
    ),
    Spec("broadcast_to", lambda a: a.broadcast_to((3, 4)), lambda a: np.broadcast_to(a, (3, 4)),
         (_s((4,)), _s((3, 1)), (T34,)), label="method"),
    Spec("broadcast_to", lambda a: lucid.expand(a, 2, 3, -1),
         lambda a: np.broadcast_to(a, (2, 3, a.shape[-1])),
         (_s((3, 4)), _s((1, 4)), _s((4,)), _s((3, 1)), (T34,)), label="expand"),
    Spec("broadcast_to", lambda a: a.expand((-1, 5)), lambda a: np.broadcast_to(a, (a.shape[0], 5)),
         (_s((3, 1)), _s((2, 5)), (transposed((5, 3)),)), label="expand-method-tuple"),
]

# --------------------------------------------------------------------------------------------
# joining


def _cat(axis):
    return lambda *xs: lucid.concatenate(list(xs), axis=axis)


def _hstack_ref(*xs):
    return np.hstack(xs)


CONCATENATE = [
    Spec(
        "concatenate", _cat(0), lambda *xs: np.concatenate(xs, axis=0),
        (_s((2, 3), (4, 3)), _s((3,), (2,), (1,)), _s((1, 2, 3), (2, 2, 3)), (T34, rand((2, 4))),
         _s((3, 4))),
        errors=(
            ErrorCase(lambda: lucid.concatenate([T(X23), T(rand((2, 4)))]), ValueError,
                      r"concatenate: tensor 1 has shape \(2,4\) but tensor 0 has shape \(2,3\): "
                      r"axis 1 differs \(4 vs 3\); every axis except the concatenation axis 0"),
            ErrorCase(lambda: lucid.concatenate([T(X23), T(X23), T(X234)], axis=1), ValueError,
                      r"concatenate: tensor 2 has shape \(2,3,4\) \(3 dimension\(s\)\) but "
                      r"tensor 0 has shape \(2,3\) \(2\)"),
            ErrorCase(lambda: lucid.concatenate([T(1.0), T(2.0)]), ValueError,
                      r"concatenate: zero-dimensional tensors cannot be concatenated"),
            ErrorCase(lambda: lucid.concatenate([]), ValueError,
                      r"concatenate: needs at least one tensor"),
            ErrorCase(lambda: lucid.concatenate(T(X23)), TypeError,
                      r"concatenate: expected a list or tuple of tensors, got Tensor"),
            ErrorCase(lambda: lucid.concatenate([T(X23), T(X23)], axis=2), IndexError,
                      r"concatenate: axis 2 is out of range"),
        ),
        flops=(FlopsCase(_s((2, 3), (4, 3)), 0, 0),),
    ),
    Spec("concatenate", _cat(-1), lambda *xs: np.concatenate(xs, axis=-1),
         (_s((2, 3), (2, 1), (2, 2)), _s((2, 3, 1), (2, 3, 4)), (T34, rand((3, 2)))),
         label="axis-1"),
    Spec("concatenate", _cat(0), lambda *xs: np.concatenate(xs, axis=0),
         ((np.arange(6).reshape(2, 3), np.arange(3).reshape(1, 3)),), grad=False,
         atol=0, rtol=0, label="int"),
    Spec("concatenate", lambda *xs: lucid.hstack(xs), _hstack_ref,
         (_s((3,), (2,)), _s((), (2,)), _s((2, 3), (2, 1)), (T34, rand((3, 2))),
          _s((2, 1, 3), (2, 2, 3))), label="hstack"),
    Spec("concatenate", lambda *xs: lucid.vstack(list(xs)), lambda *xs: np.vstack(xs),
         (_s((3,), (3,)), _s((2, 3), (1, 3)), _s((3,), (2, 3)), (T34, rand((1, 4))),
          _s((), ())), label="vstack"),
]


def _stack(axis):
    return lambda *xs: lucid.stack(xs, axis=axis)


STACK = [
    Spec(
        "stack", _stack(0), lambda *xs: np.stack(xs, axis=0),
        (_s((), ()), _s((3,), (3,), (3,)), _s((3, 4), (3, 4)), (T34, rand((3, 4))),
         _s((2, 3, 4))),
        errors=(
            ErrorCase(lambda: lucid.stack([T(rand((2,))), T(rand((3,)))]), ValueError,
                      r"stack: tensor 1 has shape \(3,\) but tensor 0 has shape \(2,\); stack "
                      r"needs tensors of one shape"),
            ErrorCase(lambda: lucid.stack([T(X23), T(X23)], axis=3), IndexError,
                      r"stack: axis 3 is out of range for a tensor with 3 dimension"),
            ErrorCase(lambda: lucid.stack(()), ValueError, r"stack: needs at least one tensor"),
        ),
        flops=(FlopsCase(_s((3, 4), (3, 4)), 0, 0),),
    ),
    Spec("stack", _stack(-1), lambda *xs: np.stack(xs, axis=-1),
         (_s((3,), (3,)), _s((3, 4), (3, 4), (3, 4)), (T34, rand((3, 4)))), label="axis-1"),
    Spec("stack", _stack(1), lambda *xs: np.stack(xs, axis=1),
         (_s((2, 3), (2, 3)), (T234, X234)), label="axis1"),
]

# --------------------------------------------------------------------------------------------
# slicing


def _pieces(a, sizes, axis):
    """Reference split: consecutive slabs of the given sizes along ``axis``."""
    out, start = [], 0
    for s in sizes:
        out.append(np.take(a, np.arange(start, start + s), axis=axis))
        start += s
    return tuple(out)


def _chunk_sizes(n, size):
    return [size] * (n // size) + ([n % size] if n % size else [])


NARROW = [
    Spec(
        "narrow", lambda a: lucid.narrow(a, -1, 1, 2), lambda a: a[..., 1:3],
        (_s((5,)), _s((3, 4)), (X234,), (T34,), (T234,)),
        errors=(
            ErrorCase(lambda: lucid.narrow(T(X23), 1, 2, 2), ValueError,
                      r"narrow: start 2 with length 2 does not fit axis 1 of shape \(2,3\) "
                      r"\(size 3\); length must be in 0..1"),
            ErrorCase(lambda: lucid.narrow(T(X23), 0, 3, 0), ValueError,
                      r"narrow: start 3 is out of range for axis 0 of shape \(2,3\) \(size "
                      r"2\); valid starts are -2..2"),
            ErrorCase(lambda: lucid.narrow(T(2.0), 0, 0, 1), ValueError,
                      r"narrow: cannot narrow a 0-d tensor"),
            ErrorCase(lambda: lucid.split(T(X23), [1, 1], axis=1), ValueError,
                      r"split: sizes \[1, 1\] add up to 2 but axis 1 of shape \(2,3\) has "
                      r"size 3; give sizes >= 0 that add up to 3"),
            ErrorCase(lambda: lucid.split(T(X23), 0), ValueError,
                      r"split: the chunk size must be positive, got 0"),
            ErrorCase(lambda: lucid.split(T(2.0), 1), ValueError,
                      r"split: cannot split a 0-d tensor"),
            ErrorCase(lambda: lucid.chunk(T(X23), 0), ValueError,
                      r"chunk: chunks must be a positive int, got 0"),
            ErrorCase(lambda: lucid.chunk(T(X23), 2, axis=2), IndexError,
                      r"chunk: axis 2 is out of range"),
        ),
        flops=_zero_flops((3, 4)),
    ),
    Spec("narrow", lambda a: a.narrow(0, -2, 2), lambda a: a[-2:],
         (_s((3, 4)), _s((5,)), (X234,), (T34,)), label="method-negative-start"),
    Spec("narrow", lambda a: lucid.narrow(a, 0, 1, 0), lambda a: a[1:1],
         (_s((3, 4)), _s((2,))), label="empty"),
    Spec("narrow", lambda a: lucid.split(a, 2, axis=-1),
         lambda a: _pieces(a, _chunk_sizes(a.shape[-1], 2), -1),
         (_s((5,)), _s((3, 4)), _s((2, 3, 5)), (T34,), (T234,)), label="split-int"),
    Spec("narrow", lambda a: a.split([1, 0, 2]), lambda a: _pieces(a, [1, 0, 2], 0),
         (_s((3,)), _s((3, 4)), (T34,), _s((3, 2, 2))), label="split-list-method"),
    Spec("narrow", lambda a: lucid.chunk(a, 3, axis=-1),
         lambda a: _pieces(a, _chunk_sizes(a.shape[-1], -(-a.shape[-1] // 3)), -1),
         (_s((5,)), _s((3, 4)), _s((6,)), (X234,), (T34,)), label="chunk"),
    Spec("narrow", lambda a: a.chunk(2, 1), lambda a: _pieces(a, [2, 1], 1),
         (_s((2, 3)), (T234,)), label="chunk-method"),
]

# --------------------------------------------------------------------------------------------
# padding, repeating, rolling

PAD = [
    Spec(
        "pad", lambda a: lucid.pad(a, 1), lambda a: np.pad(a, 1), unary() + ((T234,),),
        errors=(
            ErrorCase(lambda: lucid.pad(T(X23), 1, mode="reflect"), NotImplementedError,
                      r"pad: mode 'reflect' is not implemented; only mode='constant' is"),
            ErrorCase(lambda: lucid.pad(T(X23), (1, -1)), ValueError,
                      r"pad: pad widths must be >= 0, got \(1, -1\)"),
            ErrorCase(lambda: lucid.pad(T(X23), ((1, 1), (0, 0), (2, 2))), ValueError,
                      r"pad: pad_width has 3 pairs but the tensor of shape \(2,3\) has 2 "
                      r"dimension\(s\)"),
            ErrorCase(lambda: lucid.pad(T(X23), (1, 2, 3)), ValueError,
                      r"pad: pad_width \(1, 2, 3\) is not a pair"),
            ErrorCase(lambda: lucid.pad(T(X23), 1, constant_values=(0, 1)), NotImplementedError,
                      r"pad: constant_values must be one number"),
        ),
        flops=_zero_flops((3, 4)),
    ),
    Spec("pad", lambda a: lucid.pad(a, (1, 2), constant_values=0.5),
         lambda a: np.pad(a, (1, 2), constant_values=0.5), unary() + ((T234,),), label="pair"),
    Spec("pad", lambda a: lucid.pad(a, ((0, 1), (2, 0))), lambda a: np.pad(a, ((0, 1), (2, 0))),
         (_s((3, 4)), _s((2, 1)), (T34,)), label="per-axis"),
    Spec("pad", lambda a: lucid.pad(a, [(1, 0)]), lambda a: np.pad(a, [(1, 0)]),
         (_s((3,)), (X234,), (T34,)), label="one-pair-all-axes"),
]

REPEAT = [
    Spec(
        "repeat", lambda a: lucid.repeat(a, 2), lambda a: np.repeat(a, 2), unary() + ((T234,),),
        errors=(
            ErrorCase(lambda: lucid.repeat(T(X23), [1, 2], axis=1), ValueError,
                      r"repeat: 2 repeat counts for axis 1 of size 3 \(shape \(2,3\)\); give "
                      r"one count per element or a single int"),
            ErrorCase(lambda: lucid.repeat(T(X23), -1), ValueError,
                      r"repeat: repeat counts must be >= 0, got -1"),
            ErrorCase(lambda: lucid.repeat(T(X23), 2, axis=2), IndexError,
                      r"repeat: axis 2 is out of range"),
        ),
        # every (3,4) element copied twice: one addition each to sum its gradient
        flops=(FlopsCase(_s((3, 4)), 0, 12),),
    ),
    Spec("repeat", lambda a: a.repeat(3, axis=1), lambda a: np.repeat(a, 3, axis=1),
         (_s((3, 4)), (X234,), (T34,), (T234,)), label="method-axis",
         flops=(FlopsCase(_s((3, 4)), 0, 24),)),
    Spec("repeat", lambda a: lucid.repeat(a, [1, 0, 3], axis=0),
         lambda a: np.repeat(a, [1, 0, 3], axis=0),
         (_s((3,)), _s((3, 4)), (T34,), _s((3, 2, 2))), label="list",
         # rows copied 1, 0 and 3 times: 0 + 0 + 2 additions per element of a row of 4
         flops=(FlopsCase(_s((3, 4)), 0, 8),)),
    Spec("repeat", lambda a: lucid.repeat(a, [2], axis=-1), lambda a: np.repeat(a, [2], axis=-1),
         (_s((3, 4)), (T234,)), label="one-count-list-negative-axis"),
    Spec("repeat", lambda a: lucid.repeat(a, 0, axis=0), lambda a: np.repeat(a, 0, axis=0),
         (_s((3, 4)),), label="zero"),
]

TILE = [
    Spec(
        "tile", lambda a: lucid.tile(a, 2), lambda a: np.tile(a, 2), unary() + ((T234,),),
        errors=(
            ErrorCase(lambda: lucid.tile(T(X23), (2, -1)), ValueError,
                      r"tile: reps must be >= 0, got \(2, -1\)"),
        ),
        # (3,4) tiled (2,3) -> (6,12): 72 outputs summed back onto 12 inputs
        flops=(FlopsCase(_s((3, 4)), 0, 12),),
    ),
    Spec("tile", lambda a: lucid.tile(a, (2, 1, 3)), lambda a: np.tile(a, (2, 1, 3)),
         (_s(()), _s((4,)), _s((3, 4)), (T34,)), label="more-reps"),
    Spec("tile", lambda a: lucid.tile(a, (2,)), lambda a: np.tile(a, (2,)),
         ((X234,), (T234,)), label="fewer-reps"),
    Spec("tile", lambda a: a.tile(2, 3), lambda a: np.tile(a, (2, 3)), ((X34,), (T34,)),
         label="method", flops=(FlopsCase(_s((3, 4)), 0, 60),)),
]

ROLL = [
    Spec(
        "roll", lambda a: lucid.roll(a, 2), lambda a: np.roll(a, 2), unary() + ((T234,),),
        errors=(
            ErrorCase(lambda: lucid.roll(T(X23), (1, 2)), ValueError,
                      r"roll: with axis=None give one int shift"),
            ErrorCase(lambda: lucid.roll(T(X23), (1, 2), axis=0), ValueError,
                      r"roll: shifts \(1, 2\) and axis 0 do not pair up"),
            ErrorCase(lambda: lucid.roll(T(X23), 1, axis=2), IndexError,
                      r"roll: axis 2 is out of range"),
        ),
        flops=_zero_flops((3, 4)),
    ),
    Spec("roll", lambda a: a.roll(-1, axis=0), lambda a: np.roll(a, -1, axis=0),
         (_s((5,)), _s((3, 4)), (X234,), (T34,)), label="method-axis"),
    Spec("roll", lambda a: lucid.roll(a, (1, -2), axis=(0, -1)),
         lambda a: np.roll(a, (1, -2), axis=(0, -1)), (_s((3, 4)), (X234,), (T234,)),
         label="tuple"),
    Spec("roll", lambda a: lucid.roll(a, 1, axis=(0, 1)), lambda a: np.roll(a, 1, axis=(0, 1)),
         (_s((3, 4)), (T234,)), label="one-shift-many-axes"),
]

# --------------------------------------------------------------------------------------------
# triangles and diagonals

_NEED_2D = (r"{op}: needs a tensor with at least 2 dimensions \(a matrix or a stack of "
            r"matrices\), got shape \(3,\)")


def _tri(name, ref):
    fn = getattr(lucid, name)
    return [
        Spec(name, fn, ref, MATRICES,
             errors=(ErrorCase(lambda: fn(T(rand((3,)))), ValueError, _NEED_2D.format(op=name)),),
             flops=_zero_flops((3, 4))),
        Spec(name, lambda a: fn(a, k=1), lambda a: ref(a, k=1), MATRICES, label="k=1"),
        Spec(name, lambda a: fn(a, -1), lambda a: ref(a, -1), MATRICES, label="k=-1"),
    ]


DIAGONAL = [
    Spec(
        "diagonal", lucid.diagonal, np.diagonal, MATRICES,
        errors=(
            ErrorCase(lambda: lucid.diagonal(T(rand((3,)))), ValueError,
                      r"diagonal: needs a tensor with at least 2 dimensions"),
            ErrorCase(lambda: lucid.diagonal(T(X234), 0, 1, -2), ValueError,
                      r"diagonal: axis1 and axis2 both name axis 1 of shape \(2,3,4\); give "
                      r"two different axes"),
        ),
        flops=_zero_flops((3, 4)),
    ),
    Spec("diagonal", lambda a: lucid.diagonal(a, 1), lambda a: np.diagonal(a, 1), MATRICES,
         label="offset1"),
    Spec("diagonal", lambda a: a.diagonal(-1), lambda a: np.diagonal(a, -1), MATRICES,
         label="method-offset-1"),
    Spec("diagonal", lambda a: lucid.diagonal(a, 1, -1, -2),
         lambda a: np.diagonal(a, 1, -1, -2), MATRICES, label="negative-swapped-axes"),
    Spec("diagonal", lambda a: lucid.diagonal(a, -1, axis1=0, axis2=2),
         lambda a: np.diagonal(a, -1, 0, 2), ((X234,), (T234,)), label="outer-axes"),
    Spec("diagonal", lambda a: lucid.diagonal(a, 5), lambda a: np.diagonal(a, 5),
         ((X34,),), label="empty"),
]

# -- diag and meshgrid ------------------------------------------------------------------------

DIAG = [
    Spec("diag", lucid.diag, np.diag, ((rand((3,)),), (rand((1,)),)),
         flops=(FlopsCase((rand((3,)),), 0, 0),),
         errors=(ErrorCase(lambda: lucid.diag(lucid.Tensor(rand((2, 3, 4)))), ValueError,
                           r"^diag: input \(2,3,4\) is 3-D; diag takes a 1-D vector"),
                 ErrorCase(lambda: lucid.diag(lucid.Tensor(rand((3,))), 0.5), TypeError,
                           r"^diag: k must be an int"))),
    Spec("diag", lambda a: lucid.diag(a, 2), lambda a: np.diag(a, 2), ((rand((3,)),),),
         label="k=2"),
    Spec("diag", lambda a: lucid.diag(a, -1), lambda a: np.diag(a, -1), ((rand((4,)),),),
         label="k=-1"),
    # a matrix gives its diagonal (the diagonal op)
    Spec("diagonal", lucid.diag, np.diag, ((rand((3, 4)),), (transposed(),)), label="diag"),
    Spec("diagonal", lambda a: lucid.diag(a, -1), lambda a: np.diag(a, -1), ((rand((3, 4)),),),
         label="diag,k=-1"),
]

_V3, _V4, _V2 = rand((3,)), rand((4,), seed=1), rand((2,), seed=2)
MESHGRID = [
    Spec("broadcast_to", lucid.meshgrid, np.meshgrid,
         ((_V3, _V4), (_V3, _V4, _V2), (_V3,), (rand((2, 2)), _V3)), label="meshgrid",
         # each input is stretched over 4·3 = 12 cells: 12 - 3 additions sum its gradient
         flops=(FlopsCase((_V3, _V4), 0, 9),),
         errors=(ErrorCase(lambda: lucid.meshgrid(lucid.Tensor(_V3), indexing="ji"),
                           ValueError, r"^meshgrid: indexing must be 'xy' or 'ij', got 'ji'$"),)),
    Spec("broadcast_to", lambda *a: lucid.meshgrid(*a, indexing="ij"),
         lambda *a: np.meshgrid(*a, indexing="ij"), ((_V3, _V4), (_V3, _V4, _V2)),
         label="meshgrid,ij"),
    Spec("broadcast_to", lambda a, b: lucid.meshgrid([a, b]), lambda a, b: np.meshgrid(a, b),
         ((_V3, _V4),), label="meshgrid,list"),
]

SPECS = (
    DIAG + MESHGRID +
    RESHAPE + TRANSPOSE + SWAPAXES + SQUEEZE + UNSQUEEZE + FLATTEN + BROADCAST + CONCATENATE
    + STACK + NARROW + PAD + REPEAT + TILE + ROLL + _tri("tril", np.tril) + _tri("triu", np.triu)
    + DIAGONAL
)

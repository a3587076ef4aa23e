"""Shape-op behaviour the spec table cannot express: call forms, piece counts, gradients
flowing through several outputs, FLOPs totals and the "no saved values" contract."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
from lucid.ops import REGISTRY
from lucid.ops import shape as S
from lucid.ops.base import METHODS


def _t(shape, requires_grad=False, seed=0):
    rng = np.random.default_rng(seed)
    return lucid.Tensor(rng.standard_normal(shape), requires_grad=requires_grad)


def test_reshape_call_forms_agree():
    x = _t((2, 3))
    for y in (lucid.reshape(x, (3, 2)), lucid.reshape(x, [3, 2]), lucid.reshape(x, 3, 2),
              x.reshape(3, 2), x.reshape((3, -1)), x.reshape(np.int64(3), 2)):
        assert y.shape == (3, 2)
        np.testing.assert_array_equal(y.numpy(), x.numpy().reshape(3, 2))
    assert lucid.reshape(x, 6).shape == (6,)
    assert x.ravel().shape == (6,)


def test_transpose_forms_and_properties():
    x = _t((2, 3, 4))
    assert x.T.shape == (4, 3, 2)
    assert x.transpose().shape == (4, 3, 2)
    assert x.transpose(1, 0, 2).shape == (3, 2, 4)
    assert x.transpose((1, 0, 2)).shape == (3, 2, 4)
    assert lucid.transpose(x, axes=(2, 0, 1)).shape == (4, 2, 3)
    assert x.mT.shape == (2, 4, 3)
    np.testing.assert_array_equal(x.mT.numpy(), np.swapaxes(x.numpy(), -1, -2))
    v = _t((5,))
    assert v.T.shape == (5,)
    with pytest.raises(ValueError, match=r"mT: needs a tensor with at least 2 dimensions"):
        _ = v.mT


def test_every_method_is_attached():
    for name, fn in METHODS.items():
        assert lucid.Tensor.__dict__[name] is fn, name
    for name in ("reshape", "transpose", "squeeze", "unsqueeze", "flatten", "split", "chunk"):
        assert callable(getattr(lucid.Tensor, name)), name
    assert isinstance(lucid.Tensor.T, property) and isinstance(lucid.Tensor.mT, property)


def test_shape_ops_keep_no_input_values():
    for cls in REGISTRY.values():
        if cls.__module__ == S.__name__:
            assert cls.saves_inputs is False and cls.saves_output is False, cls.name
            assert cls.broadcasts is False, cls.name


def test_in_place_change_of_an_input_does_not_break_backward():
    # Concatenate needs only the input sizes, so a later in-place update of a constant input
    # is no error (contrast: ops that save their inputs raise).
    x = _t((2, 3), requires_grad=True)
    c = _t((1, 3), seed=1)
    y = lucid.concatenate([x, c])
    c += 1.0
    y.backward()
    np.testing.assert_array_equal(x.grad, np.ones((2, 3)))


@pytest.mark.parametrize("n,chunks,sizes", [
    (6, 4, [2, 2, 2]),  # PyTorch: ceil(6/4) = 2 per piece, so only 3 pieces
    (5, 3, [2, 2, 1]),
    (3, 5, [1, 1, 1]),
    (4, 1, [4]),
    (0, 3, [0, 0, 0]),
])
def test_chunk_piece_sizes_follow_pytorch(n, chunks, sizes):
    x = _t((2, n))
    pieces = x.chunk(chunks, axis=1)
    assert isinstance(pieces, tuple)
    assert [p.shape[1] for p in pieces] == sizes


@pytest.mark.parametrize("n,size,sizes", [(5, 2, [2, 2, 1]), (4, 2, [2, 2]), (3, 5, [3]),
                                          (0, 2, [0])])
def test_split_piece_sizes_follow_pytorch(n, size, sizes):
    pieces = lucid.split(_t((n, 2)), size)
    assert [p.shape[0] for p in pieces] == sizes


def test_gradients_of_all_split_pieces_add_up():
    x = _t((5, 3), requires_grad=True)
    pieces = lucid.split(x, [2, 1, 2])
    for piece, w in zip(pieces, (1.0, 2.0, 3.0)):  # each piece has its own Narrow node
        piece.backward(lucid.Tensor(np.full(piece.shape, w)))
    want = np.repeat([1.0, 1.0, 2.0, 3.0, 3.0], 3).reshape(5, 3)
    np.testing.assert_array_equal(x.grad, want)


def test_split_and_hstack_accept_lists():
    pieces = lucid.split([1.0, 2.0, 3.0], 2)
    assert [p.tolist() for p in pieces] == [[1.0, 2.0], [3.0]]
    assert lucid.hstack([[1.0, 2.0], [3.0]]).tolist() == [1.0, 2.0, 3.0]
    assert lucid.vstack([[1.0, 2.0], [3.0, 4.0]]).shape == (2, 2)


def test_expand_keeps_sizes_with_minus_one():
    x = _t((3, 1))
    assert x.expand(2, -1, 4).shape == (2, 3, 4)
    assert lucid.expand(x, (3, 5)).shape == (3, 5)
    with pytest.raises(ValueError, match=r"broadcast_to: cannot broadcast \(3,1\) to \(2,5\)"):
        x.expand(2, 5)


def test_repeat_list_backward_sums_each_group():
    x = lucid.Tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = lucid.repeat(x, [2, 0, 3])
    assert y.tolist() == [1.0, 1.0, 3.0, 3.0, 3.0]
    y.backward(lucid.Tensor([1.0, 10.0, 100.0, 1000.0, 10000.0]))
    np.testing.assert_array_equal(x.grad, [11.0, 0.0, 11100.0])


def test_diagonal_backward_writes_onto_zeros():
    x = _t((2, 3, 4), requires_grad=True)
    d = lucid.diagonal(x, 1, 1, 2)  # (2, 3): x[b, i, i + 1]
    d.backward(lucid.Tensor(np.arange(6.0).reshape(2, 3)))
    want = np.zeros((2, 3, 4))
    for b in range(2):
        for i in range(3):
            want[b, i, i + 1] = 3 * b + i
    np.testing.assert_array_equal(x.grad, want)


def test_shape_ops_keep_the_dtype():
    x = lucid.Tensor(np.arange(6, dtype=np.int32).reshape(2, 3))
    for y in (x.reshape(3, 2), x.T, lucid.pad(x, 1), x.repeat(2, axis=0), x.repeat(1, 2),
              x.tile(2), x.roll(1),
              lucid.tril(x), x.diagonal(), lucid.concatenate([x, x]), lucid.stack([x, x])):
        assert y.dtype == lucid.Int32


def test_a_chain_of_shape_ops_costs_only_the_broadcast_sum():
    x = _t((3, 1), requires_grad=True)
    with lucid.count_flops():
        y = lucid.broadcast_to(x, (2, 3, 4)).transpose(2, 0, 1).reshape(4, -1)
        y = lucid.narrow(y, 0, 1, 2)
    assert y.flops == 0
    assert y._prev[0]._prev[0]._prev[0]._op.flops_bwd == 24 - 3


def test_backward_twice_without_retain_graph_raises():
    x = _t((2, 3), requires_grad=True)
    y = x.reshape(3, 2)
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_pad_forms_match_numpy():
    a = np.arange(6.0).reshape(2, 3)
    for width in (2, (1, 2), [(1, 2)], ((0, 1), (2, 0)), [[1, 0], [0, 1]], (3,)):
        got = lucid.pad(lucid.Tensor(a), width, constant_values=-1.0).numpy()
        np.testing.assert_array_equal(got, np.pad(a, width, constant_values=-1.0))


def test_triu_and_tril_take_pytorchs_diagonal_keyword():
    a = np.arange(16.0).reshape(4, 4)
    for device in ("cpu", "gpu"):
        x = lucid.Tensor(a, device=device)
        np.testing.assert_array_equal(lucid.triu(x, diagonal=1).numpy(), np.triu(a, 1))
        np.testing.assert_array_equal(x.tril(diagonal=-1).numpy(), np.tril(a, -1))

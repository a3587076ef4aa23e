"""Property tests: broadcasting in forward and its reverse (sum_to) in backward."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lucid
from lucid.shapes import broadcast_shape

OPS = [("add", np.add), ("sub", np.subtract), ("mul", np.multiply), ("maximum", np.maximum)]


@settings(max_examples=60, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4,
                                                max_side=4),
       op=st.sampled_from(OPS), seed=st.integers(0, 2**16))
def test_broadcast_forward_and_gradient_shapes(shapes, op, seed):
    (sa, sb), out_shape = shapes.input_shapes, shapes.result_shape
    rng = np.random.default_rng(seed)
    a_np, b_np = rng.standard_normal(sa), rng.standard_normal(sb)
    a = lucid.Tensor(a_np, requires_grad=True)
    b = lucid.Tensor(b_np, requires_grad=True)
    name, ref = op
    y = getattr(lucid, name)(a, b)
    assert y.shape == out_shape
    np.testing.assert_allclose(y.numpy(), ref(a_np, b_np), rtol=1e-12)
    y.backward()
    assert a.grad.shape == sa and b.grad.shape == sb
    if name == "add":  # d(a+b)/da summed over the broadcast axes = copies per element of a
        copies = int(np.prod(out_shape)) // max(int(np.prod(sa)), 1) if np.prod(sa) else 0
        np.testing.assert_allclose(a.grad, np.full(sa, float(copies)))
    if name == "mul":  # dL/da = sum over broadcast axes of b
        want = np.broadcast_to(b_np, out_shape)
        lead = len(out_shape) - len(sa)
        want = want.sum(axis=tuple(range(lead))) if lead else want
        axes = tuple(i for i, s in enumerate(sa) if s == 1 and want.shape[i] != 1)
        want = want.sum(axis=axes, keepdims=True) if axes else want
        np.testing.assert_allclose(a.grad, want, rtol=1e-12, atol=1e-12)


@settings(max_examples=60, deadline=None)
@given(sa=hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=4),
       sb=hnp.array_shapes(min_dims=1, max_dims=3, min_side=2, max_side=4))
def test_incompatible_shapes_raise_naming_op_and_shapes(sa, sb):
    try:
        np.broadcast_shapes(sa, sb)
        compatible = True
    except ValueError:
        compatible = False
    a, b = lucid.Tensor(np.ones(sa)), lucid.Tensor(np.ones(sb))
    if compatible:
        assert lucid.mul(a, b).shape == np.broadcast_shapes(sa, sb)
    else:
        with pytest.raises(ValueError, match=r"^mul: shapes \(.*\) and \(.*\) cannot be broadcast"):
            lucid.mul(a, b)


@settings(max_examples=100, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=5))
def test_broadcast_shape_agrees_with_numpy(shapes):
    assert broadcast_shape("op", *shapes.input_shapes) == shapes.result_shape

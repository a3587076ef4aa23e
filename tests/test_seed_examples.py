"""The seeds' user-facing snippets that use only the engine core run as written."""

from __future__ import annotations

import math

import numpy as np

import lucid


def test_seed_004_backward_walk():
    # Tensor(data, requires_grad, keep_grad); backward seeds dL/dL = 1, walks the graph once in
    # reverse topological order, accumulates with += and frees intermediate grads.
    x = lucid.Tensor([0.5], requires_grad=True)
    a = 2 * x
    y = a + lucid.exp(a)
    assert y._prev[0] is a and type(y._op).__name__ == "Add"
    assert x.is_leaf and not a.is_leaf
    y.backward()
    np.testing.assert_allclose(x.grad, [2 + 2 * math.e])
    assert a.grad is None and y.grad is None
    x.grad = None
    y2 = 2 * x
    z = y2 + lucid.exp(y2)
    z.backward(keep_grad=True)
    np.testing.assert_allclose(y2.grad, [1 + math.e])


def test_seed_001_numeric_examples_on_cpu():
    x = lucid.tensor([1.0, 2.0, 3.0], dtype=lucid.Float64)
    assert x.device == "cpu"
    assert x.dtype == lucid.types.Numeric(base_dtype=float, bits=64)
    data = np.array([1.0, 2.0], dtype=np.float64)
    x = lucid.tensor(data, dtype=lucid.Float)
    assert x.dtype == lucid.Float64
    y = lucid.Tensor(np.ones(3, np.float16)).astype(lucid.Float32)
    assert y.dtype == lucid.Float32 and y.data.dtype == np.float32


def test_seed_002_count_flops_then_read_y_flops():
    x = lucid.Tensor(np.ones((1, 8)))
    w = lucid.Tensor(np.ones((8, 4)))
    with lucid.count_flops():
        y = lucid.tanh(x @ w)
    assert y.flops == 1 * 8 * 4 + 4  # MACs of the matmul + one per tanh output
    print(f"FLOPs(MACs): {y.flops:,}")

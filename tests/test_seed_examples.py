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


def test_spec_acceptance_snippets_run_as_written():
    """The product's seed snippets must run as written, import paths included."""
    import lucid.nn as nn
    from lucid.data import TensorDataset
    from lucid.models.imgclf.resnet import resnet_18
    from lucid.models.util import summarize
    from lucid.nn.functional import one_hot
    from lucid.optim import SGD

    model = nn.Sequential(nn.Linear(128, 64, dtype=lucid.Float32), nn.ReLU(),
                          nn.Linear(64, 10, dtype=lucid.Float32)).to("gpu")
    opt = SGD(model.parameters(), defaults={"lr": 1e-2})
    X = lucid.random.randn(8, 128)
    y = lucid.Tensor(np.arange(8) % 10)
    ds = TensorDataset(X, y, dtype=lucid.Float)
    ds.to("gpu")
    xb = X.to("gpu").astype(lucid.Float32)
    loss = lucid.nn.functional.cross_entropy(model(xb), y.to("gpu"))
    loss.eval()
    loss.backward()
    opt.step()
    h = lucid.randn(2, 2, dtype=lucid.Float16, device="gpu")
    assert h.dtype == lucid.Float16 and h.device == "gpu"
    assert lucid.random.rand((1, 3, 32, 32)).shape == (1, 3, 32, 32)
    labels = lucid.tensor([0, 2, 1], dtype=lucid.Int64)
    oh = one_hot(labels, num_classes=3, dtype=lucid.Float16)
    np.testing.assert_array_equal(oh.numpy(), np.eye(3, dtype=np.float16)[[0, 2, 1]])
    perm = lucid.random.permutation(10, dtype=lucid.Int16, device="gpu")
    assert perm.dtype == lucid.Int16 and sorted(perm.tolist()) == list(range(10))
    s = summarize(resnet_18(num_classes=10), input_shape=(1, 3, 32, 32), print_summary=False)
    assert s.total_flops > 0

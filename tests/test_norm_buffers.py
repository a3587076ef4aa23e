"""BatchNorm's buffers change only when a training forward pass succeeds (the promise: a
call that raises leaves parameters, buffers and modes as they were)."""

from __future__ import annotations

import importlib.util
import warnings

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F

needs_mlx = pytest.mark.skipif(importlib.util.find_spec("mlx") is None,
                               reason="MLX is not installed")


def _buffers(bn):
    return {name: b.numpy().copy() for name, b in bn.named_buffers()}


def _assert_same(bn, before):
    after = _buffers(bn)
    assert sorted(after) == sorted(before)
    for name, value in before.items():
        np.testing.assert_array_equal(after[name], value, err_msg=name)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_a_refused_training_batch_changes_no_buffer(momentum):
    bn = lucid.nn.BatchNorm1d(3, momentum=momentum)
    bn(lucid.Tensor(np.arange(12, dtype=np.float32).reshape(4, 3)))  # one good batch
    before = _buffers(bn)
    with pytest.raises(ValueError, match=r"batch_norm: expected more than 1 value per channel "
                                         r"when training, got input of shape \(1,3\)"):
        bn(lucid.Tensor(np.ones((1, 3), np.float32)))
    _assert_same(bn, before)
    assert bn.num_batches_tracked.item() == 1


@needs_mlx
def test_a_forward_that_fails_midway_changes_no_running_statistic():
    """The batch and the running mean are on "cpu", the running variance on "gpu": the
    running mean's update would succeed, the variance's fails; neither may have moved."""
    running_mean = lucid.Tensor(np.zeros(3, np.float32))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="MLX has no GPU here")
        running_var = lucid.Tensor(np.ones(3, np.float32), device="gpu")
    x = lucid.Tensor(np.arange(12, dtype=np.float32).reshape(4, 3))
    with pytest.raises(RuntimeError, match="device"):
        F.batch_norm(x, running_mean, running_var, training=True)
    np.testing.assert_array_equal(running_mean.numpy(), np.zeros(3))
    np.testing.assert_array_equal(running_var.numpy(), np.ones(3))
    assert running_mean._version == 0 and running_var._version == 0


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_an_empty_batch_passes_batch_norm_in_training_as_in_pytorch(device):
    """(0, C) or (0, C, H, W) in training: an empty output, running statistics unchanged,
    zero gradients for weight and bias -- PyTorch's answer; it was refused as "more than 1
    value per channel" (the rule for a batch of one)."""
    nn = lucid.nn
    for bn, shape in ((nn.BatchNorm1d(2), (0, 2)), (nn.BatchNorm2d(2), (0, 2, 3, 3))):
        bn.to(device)
        x = lucid.Tensor(np.zeros(shape), device=device, requires_grad=True)
        y = bn(x)
        assert y.shape == shape
        y.sum().backward()
        assert bn.running_mean.tolist() == [0.0, 0.0] and bn.running_var.tolist() == [1.0, 1.0]
        np.testing.assert_array_equal(np.asarray(bn.weight.grad), [0.0, 0.0])
        np.testing.assert_array_equal(np.asarray(bn.bias.grad), [0.0, 0.0])
        assert bn.num_batches_tracked.item() == 1  # (counted, as PyTorch counts it)
    with pytest.raises(ValueError, match="^batch_norm: expected more than 1 value per channel"):
        nn.BatchNorm1d(2).to(device)(lucid.Tensor(np.zeros((1, 2)), device=device))

"""PyTorch spellings met in public PyTorch programs (examples, tutorials, minGPT, nanoGPT,
makemore) run after ``sed s/torch/lucid/g``: each behaves as in PyTorch, checked against
NumPy float64 references, or fails with an error naming the Lucid spelling."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F

RNG = np.random.default_rng(24)


def test_dropout2d_on_a_flat_batch_drops_elements_with_a_warning():
    """examples/mnist_rnn puts nn.Dropout2d after an LSTM's (N, C) output: PyTorch warns and
    drops (sample, channel) entries -- on a 2-D input, element by element."""
    lucid.random.seed(0)
    x = lucid.ones(200, 64)
    with pytest.warns(UserWarning, match="dropout2d: received a 2-D input; expected"):
        y = nn.Dropout2d(0.25)(x).numpy()
    np.testing.assert_allclose(np.unique(y), [0.0, 1 / 0.75], rtol=1e-12)
    assert abs((y == 0).mean() - 0.25) < 4 * np.sqrt(0.25 * 0.75 / y.size)
    assert len(np.unique((y == 0).sum(1))) > 1  # not whole rows
    with pytest.warns(UserWarning, match="dropout3d: received a 2-D input"):
        z = nn.Dropout3d(0.5).eval()(x)
    np.testing.assert_array_equal(z.numpy(), np.ones((200, 64)))
    with pytest.raises(ValueError, match=r"dropout2d: expected a \(N, C, 2 spatial\)"):
        F.dropout2d(lucid.ones(5), 0.5)

"""End to end: real training on scikit-learn's bundled digits (no download), cpu and gpu."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
import lucid.nn.functional as F
from lucid.data import DataLoader, TensorDataset
from lucid.models import MLP
from lucid.optim import SGD, Adam

datasets = pytest.importorskip("sklearn.datasets", reason="scikit-learn is in the notebooks extra")


def _digits():
    digits = datasets.load_digits()
    X = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    order = np.random.default_rng(0).permutation(len(X))
    X, y = X[order], y[order]
    cut = int(0.8 * len(X))
    return X[:cut], y[:cut], X[cut:], y[cut:]


def _accuracy(model, X, y, device):
    model.eval()
    with lucid.no_grad():
        logits = model(lucid.Tensor(X, device=device))
    model.train()
    return float((logits.numpy().argmax(axis=1) == y).mean())


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_mlp_reaches_95_percent_on_digits(device):
    if device == "gpu":
        pytest.importorskip("mlx.core")
    lucid.random.seed(0)
    Xtr, ytr, Xte, yte = _digits()
    model = MLP(64, [64], 10).to(device)
    opt = Adam(model.parameters(), lr=1e-2)
    ds = TensorDataset(lucid.Tensor(Xtr), lucid.Tensor(ytr)).to(device)
    loader = DataLoader(ds, batch_size=64, shuffle=True)
    first = None
    for _ in range(15):
        for xb, yb in loader:
            opt.zero_grad()
            loss = F.cross_entropy(model(xb), yb)
            loss.eval()
            loss.backward()
            opt.step()
            first = first if first is not None else loss.item()
    assert loss.item() < first / 4
    assert _accuracy(model, Xte, yte, device) >= 0.95


def test_lenet_style_cnn_learns():
    lucid.random.seed(0)
    Xtr, ytr, _, _ = _digits()
    n = len(Xtr)
    X = lucid.Tensor(Xtr.reshape(-1, 1, 8, 8))
    y = lucid.Tensor(ytr)
    model = nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(8, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(16 * 2 * 2, 10),
    )
    opt = SGD(model.parameters(), defaults={"lr": 0.05, "momentum": 0.9})
    losses = []
    for _ in range(3):
        for i in range(0, n, 64):
            opt.zero_grad()
            loss = F.cross_entropy(model(X[i:i + 64]), y[i:i + 64])
            loss.backward()
            opt.step()
            losses.append(loss.item())
    assert np.mean(losses[-5:]) < np.mean(losses[:5]) / 2


def test_state_dict_saved_on_gpu_loads_on_cpu_with_same_predictions(tmp_path):
    pytest.importorskip("mlx.core")
    lucid.random.seed(1)
    Xtr, ytr, Xte, _ = _digits()
    model = MLP(64, [32], 10).to("gpu")
    opt = SGD(model.parameters(), lr=0.1)
    for _ in range(20):
        opt.zero_grad()
        loss = F.cross_entropy(model(lucid.Tensor(Xtr[:256], device="gpu")),
                               lucid.Tensor(ytr[:256], device="gpu"))
        loss.backward()
        opt.step()
    path = tmp_path / "mlp.lucid"
    lucid.save(model.state_dict(), path)
    restored = MLP(64, [32], 10)
    restored.load_state_dict(lucid.load(path))
    with lucid.no_grad():
        on_gpu = model(lucid.Tensor(Xte, device="gpu")).numpy()
        on_cpu = restored(lucid.Tensor(Xte)).numpy()
    np.testing.assert_allclose(on_cpu, on_gpu, rtol=1e-5, atol=1e-5)
    assert (on_cpu.argmax(1) == on_gpu.argmax(1)).all()

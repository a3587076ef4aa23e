"""B5: an LSTM training step (seq 32, batch 32, input 64, hidden 128, one layer) and B6: a
TransformerEncoderLayer training step (d_model 128, 4 heads, feed-forward 512, seq 64,
batch 16), lucid on NumPy vs PyTorch CPU with every core (as NumPy's BLAS has them), same
weights.  Both run an LSTM layer as one op (Lucid's ``LSTMSequence``, PyTorch's in C++); in
Lucid that op's loop over the 32 time steps is Python calling NumPy: per step one small GEMM
and ten elementwise passes forward, one GEMM and about fifteen passes backward.
One step: forward, a mean-squared loss against fixed targets, backward, an SGD update.  The
first losses must agree before anything is timed."""

from __future__ import annotations

import os

import numpy as np

import lucid
import lucid.nn as nn
from benchmarks.common import Row, optional, timeit_many

LR = 1e-3


def _step(model, sgd, tensor, x, target):
    """One training step of ``model`` with its framework's ``sgd`` and ``tensor`` maker."""
    opt = sgd(model.parameters(), lr=LR)
    xt, tt = tensor(x), tensor(target)

    def step():
        opt.zero_grad()
        out = model(xt)
        out = out[0] if isinstance(out, tuple) else out
        loss = ((out - tt) ** 2).mean()
        loss.backward()
        opt.step()
        return float(loss.item())

    return step


def _case(name, target_text, make_lucid, make_torch, x, target, quick):
    lucid.random.seed(0)
    model = make_lucid()
    fns = {"lucid": None}
    torch = optional("torch")
    values: dict[str, float | None] = {"torch": None}
    if torch is not None:
        torch.set_num_threads(os.cpu_count() or 1)
        net = make_torch(torch)
        model.load_state_dict({k: lucid.Tensor(v.detach().numpy())
                               for k, v in net.state_dict().items()})
        fns["torch"] = _step(net, torch.optim.SGD, torch.tensor, x, target)
    fns["lucid"] = _step(model, lucid.optim.SGD, lucid.Tensor, x, target)
    first = {k: f() for k, f in fns.items()}
    if "torch" in first and not np.isclose(first["lucid"], first["torch"], rtol=1e-3):
        raise AssertionError(f"{name}: first losses differ: {first}")
    # a pause before each batch: both libraries now use every core, and one's spinning BLAS or
    # OpenMP threads would slow the other (see timeit_many)
    times = timeit_many(fns, repeat=3 if quick else 7, number=2 if quick else 5, warmup=1,
                        pause=0.25)
    values.update({k: t * 1e3 for k, t in times.items()})
    return Row(name, "ms/step", values, target_text)


def run(quick: bool = False) -> list[Row]:
    rng = np.random.default_rng(0)
    x5 = rng.standard_normal((32, 32, 64)).astype(np.float32)
    t5 = rng.standard_normal((32, 32, 128)).astype(np.float32)
    x6 = rng.standard_normal((64, 16, 128)).astype(np.float32)
    return [
        _case("B5 LSTM train step, seq 32 b32 in 64 hid 128", "lucid <= 2x torch",
              lambda: nn.LSTM(64, 128), lambda torch: torch.nn.LSTM(64, 128), x5, t5, quick),
        _case("B6 TransformerEncoderLayer step, d128 h4 ff512 seq64 b16", "lucid <= 1.5x torch",
              lambda: nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0),
              lambda torch: torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0),
              x6, x6, quick),
    ]

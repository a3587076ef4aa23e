"""nn.RNN/LSTM/GRU and their cells against NumPy float64 references (PyTorch's formulas and
gate order), gradients by finite differences, variable lengths, and PyTorch state dicts."""

from __future__ import annotations

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.autograd import gradcheck
from lucid.nn.utils.rnn import pad_sequence
from tests.parity import assert_gpu_matches_cpu

RNG = np.random.default_rng(0)


def _sig(z):
    return 1 / (1 + np.exp(-z))


def _np_step(mode, x, h, c, w_ih, w_hh, b_ih, b_hh, nonlinearity="tanh"):
    k = h.shape[-1]
    xw, hw = x @ w_ih.T + b_ih, h @ w_hh.T + b_hh
    if mode == "RNN":
        z = xw + hw
        return (np.tanh(z) if nonlinearity == "tanh" else np.maximum(z, 0)), None
    if mode == "LSTM":
        z = xw + hw
        i, f, g, o = (z[..., j * k:(j + 1) * k] for j in range(4))
        c2 = _sig(f) * c + _sig(i) * np.tanh(g)
        return _sig(o) * np.tanh(c2), c2
    r = _sig(xw[..., :k] + hw[..., :k])
    u = _sig(xw[..., k:2 * k] + hw[..., k:2 * k])
    n = np.tanh(xw[..., 2 * k:] + r * hw[..., 2 * k:])
    return (1 - u) * n + u * h, None


def _params(module, layer=0, suffix=""):
    sd = {k: np.asarray(v, dtype=np.float64) for k, v in module.state_dict().items()}
    return (sd[f"weight_ih_l{layer}{suffix}"], sd[f"weight_hh_l{layer}{suffix}"],
            sd[f"bias_ih_l{layer}{suffix}"], sd[f"bias_hh_l{layer}{suffix}"])


@pytest.mark.parametrize("layer_cls,mode", [(nn.RNN, "RNN"), (nn.LSTM, "LSTM"), (nn.GRU, "GRU")])
def test_one_layer_matches_numpy(layer_cls, mode):
    lucid.random.seed(1)
    layer = layer_cls(3, 4, dtype=lucid.Float64)
    x = RNG.standard_normal((5, 2, 3))
    out, state = layer(lucid.Tensor(x))
    w = _params(layer)
    h, c = np.zeros((2, 4)), np.zeros((2, 4))
    outs = []
    for t in range(5):
        h, c2 = _np_step(mode, x[t], h, c, *w)
        c = c2 if c2 is not None else c
        outs.append(h)
    np.testing.assert_allclose(out.numpy(), np.stack(outs), rtol=1e-12, atol=1e-14)
    h_n = state[0] if mode == "LSTM" else state
    np.testing.assert_allclose(h_n.numpy()[0], h, rtol=1e-12)
    if mode == "LSTM":
        np.testing.assert_allclose(state[1].numpy()[0], c, rtol=1e-12)


def test_cells_match_numpy_and_names_match_pytorch():
    for cls, mode in [(nn.RNNCell, "RNN"), (nn.LSTMCell, "LSTM"), (nn.GRUCell, "GRU")]:
        cell = cls(3, 4, dtype=lucid.Float64)
        assert [n for n, _ in cell.named_parameters()] == ["weight_ih", "weight_hh", "bias_ih",
                                                           "bias_hh"]
        rows = {"RNN": 4, "LSTM": 16, "GRU": 12}[mode]
        assert cell.weight_ih.shape == (rows, 3) and cell.weight_hh.shape == (rows, 4)
        sd = {k: np.asarray(v) for k, v in cell.state_dict().items()}
        x, h, c = RNG.standard_normal((2, 3)), RNG.standard_normal((2, 4)), RNG.standard_normal(
            (2, 4))
        want_h, want_c = _np_step(mode, x, h, c, sd["weight_ih"], sd["weight_hh"],
                                  sd["bias_ih"], sd["bias_hh"])
        if mode == "LSTM":
            got_h, got_c = cell(lucid.Tensor(x), (lucid.Tensor(h), lucid.Tensor(c)))
            np.testing.assert_allclose(got_c.numpy(), want_c, rtol=1e-12)
        else:
            got_h = cell(lucid.Tensor(x), lucid.Tensor(h))
        np.testing.assert_allclose(got_h.numpy(), want_h, rtol=1e-12)


def test_init_is_pytorchs_uniform():
    lucid.random.seed(0)
    bound = 1 / np.sqrt(50)
    values = np.concatenate([p.numpy().ravel() for p in nn.LSTM(30, 50).parameters()])
    assert values.min() >= -bound and values.max() <= bound and values.std() > bound / 2


def test_stacked_bidirectional_batch_first_shapes_and_names():
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    names = [n for n, _ in lstm.named_parameters()]
    assert names[:4] == ["weight_ih_l0", "weight_hh_l0", "bias_ih_l0", "bias_hh_l0"]
    assert "weight_ih_l1_reverse" in names and lstm.weight_ih_l1.shape == (16, 8)
    out, (h, c) = lstm(lucid.zeros(2, 5, 3))
    assert out.shape == (2, 5, 8) and h.shape == (4, 2, 4) and c.shape == (4, 2, 4)
    out, h = nn.GRU(3, 4)(lucid.zeros(5, 3))  # unbatched
    assert out.shape == (5, 4) and h.shape == (1, 4)


def test_gradients_by_finite_differences():
    lucid.random.seed(2)
    for cls in (nn.LSTM, nn.GRU, nn.RNN):
        layer = cls(2, 3, num_layers=2, bidirectional=True, dtype=lucid.Float64)
        x = lucid.Tensor(RNG.standard_normal((4, 2, 2)), requires_grad=True)
        assert gradcheck(lambda t, layer=layer: layer(t)[0], x)
        w = layer.weight_hh_l0
        assert gradcheck(lambda _w, layer=layer, x=x: layer(x)[0], w)


def test_lengths_equal_running_each_sequence_alone():
    lucid.random.seed(3)
    lstm = nn.LSTM(2, 3, bidirectional=True, dtype=lucid.Float64)
    a, b = RNG.standard_normal((5, 2)), RNG.standard_normal((3, 2))
    batch = pad_sequence([lucid.Tensor(a), lucid.Tensor(b)])
    assert batch.shape == (5, 2, 2)
    out, (h, _) = lstm(batch, lengths=[5, 3])
    alone_out, (alone_h, _) = lstm(lucid.Tensor(b))
    np.testing.assert_allclose(out.numpy()[:3, 1], alone_out.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(out.numpy()[3:, 1], 0.0)
    np.testing.assert_allclose(h.numpy()[:, 1], alone_h.numpy(), rtol=1e-12)
    with pytest.raises(ValueError, match=r"LSTM: lengths must hold 2 ints in 1..5"):
        lstm(batch, lengths=[6, 3])


def test_dropout_between_layers_only_in_training():
    lucid.random.seed(4)
    gru = nn.GRU(2, 3, num_layers=2, dropout=0.5)
    x = lucid.random.randn(4, 1, 2, dtype=lucid.Float32)
    gru.eval()
    a, b = gru(x)[0].numpy(), gru(x)[0].numpy()
    np.testing.assert_array_equal(a, b)
    gru.train()
    assert not np.allclose(gru(x)[0].numpy(), a)


def test_errors_name_the_layer_and_the_shapes():
    with pytest.raises(ValueError, match=r"LSTM: input must be \(L, N, 3\)"):
        nn.LSTM(3, 4)(lucid.zeros(2, 2, 5))
    with pytest.raises(ValueError, match=r"GRU: initial state of shape \(1,2,5\), expected "
                                         r"\(1,2,4\)"):
        nn.GRU(3, 4)(lucid.zeros(6, 2, 3), lucid.zeros(1, 2, 5))
    with pytest.raises(ValueError, match="RNN: nonlinearity must be 'tanh' or 'relu'"):
        nn.RNN(3, 4, nonlinearity="gelu")


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
def test_gpu_matches_cpu_forward_and_backward(kind):
    pytest.importorskip("mlx.core")
    lucid.random.seed(5)
    layer = getattr(nn, kind)(3, 4, num_layers=2, bidirectional=True)
    x = RNG.standard_normal((5, 2, 3)).astype(np.float32)
    assert_gpu_matches_cpu(layer, lambda device: layer(lucid.Tensor(x, device=device),
                                                       lengths=[5, 3])[0])


def test_pytorch_state_dicts_load_and_outputs_match():
    torch = pytest.importorskip("torch")
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

    for ours_cls, theirs_cls in [(nn.LSTM, torch.nn.LSTM), (nn.GRU, torch.nn.GRU),
                                 (nn.RNN, torch.nn.RNN)]:
        theirs = theirs_cls(3, 4, num_layers=2, bidirectional=True)
        ours = ours_cls(3, 4, num_layers=2, bidirectional=True)
        ours.load_state_dict({k: lucid.Tensor(v.detach().numpy())
                              for k, v in theirs.state_dict().items()})
        x = RNG.standard_normal((5, 2, 3)).astype(np.float32)
        x[3:, 1] = 0
        got, _ = ours(lucid.Tensor(x), lengths=[5, 3])
        packed, _ = theirs(pack_padded_sequence(torch.tensor(x), [5, 3]))
        want, _ = pad_packed_sequence(packed)
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("kind, gates, elementwise", [("RNN", 1, 2), ("LSTM", 4, 10),
                                                      ("GRU", 3, 12)])
def test_the_gates_are_counted(kind, gates, elementwise):
    """MACs: the input projection (one GEMM over all steps) and the hidden projection of every
    step, gates·H·(I + H) per sample and step.  FLOPs: at least the gate arithmetic, which
    works on N·H values per step (RNN: add, tanh; LSTM: add, 3 sigmoids, 2 tanh, 3 products,
    1 sum; GRU: more)."""
    lucid.random.seed(0)
    steps, batch, inp, hid = 5, 3, 4, 6
    layer = getattr(nn, kind)(inp, hid)
    with lucid.count_flops():
        out, _ = layer(lucid.randn(steps, batch, inp))
    assert out.cost.macs == steps * batch * gates * hid * (inp + hid)
    assert out.cost.flops >= steps * batch * hid * elementwise


SIZES = [  # (input, hidden, layers, bidirectional, batch_first, steps, batch)
    (1, 1, 1, False, False, 1, 1), (3, 7, 1, True, False, 6, 2), (7, 3, 3, False, True, 4, 5),
    (16, 32, 2, True, True, 9, 3), (5, 64, 1, False, False, 2, 8), (64, 5, 2, True, False, 3, 1),
]


@pytest.mark.parametrize("kind", ["RNN", "LSTM", "GRU"])
@pytest.mark.parametrize("inp, hid, layers, bidir, batch_first, steps, batch", SIZES)
def test_every_size_runs_forward_and_backward(kind, inp, hid, layers, bidir, batch_first,
                                              steps, batch):
    """Lucid 2.x's LSTM and GRU crashed for most sizes: every combination here must run, give
    the documented shapes, and send a gradient to every parameter; against PyTorch's outputs
    when it is installed."""
    lucid.random.seed(6)
    layer = getattr(nn, kind)(inp, hid, num_layers=layers, bidirectional=bidir,
                              batch_first=batch_first)
    x = RNG.standard_normal((batch, steps, inp) if batch_first else (steps, batch, inp))
    x = x.astype(np.float32)
    out, state = layer(lucid.Tensor(x))
    dirs = 2 if bidir else 1
    want = (batch, steps, dirs * hid) if batch_first else (steps, batch, dirs * hid)
    assert out.shape == want
    h_n = state[0] if kind == "LSTM" else state
    assert h_n.shape == (layers * dirs, batch, hid)
    (out.sum() + h_n.sum()).backward()
    for name, p in layer.named_parameters():
        assert p.grad is not None and p.grad.shape == p.shape, name
    torch = pytest.importorskip("torch")
    theirs = getattr(torch.nn, kind)(inp, hid, num_layers=layers, bidirectional=bidir,
                                     batch_first=batch_first)
    theirs.load_state_dict({k: torch.tensor(np.asarray(v)) for k, v in layer.state_dict().items()})
    want_out, _ = theirs(torch.tensor(x))
    np.testing.assert_allclose(out.numpy(), want_out.detach().numpy(), rtol=1e-4, atol=1e-5)


def _ops_below(t):
    """The names of the ops in ``t``'s graph."""
    seen, stack, names = set(), [t], set()
    while stack:
        node = stack.pop()
        if id(node) in seen or node._op is None:
            continue
        seen.add(id(node))
        names.add(type(node._op).__name__)
        stack.extend(node._prev)
    return names


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_lstm_runs_one_op_per_layer_or_step_by_step_with_the_same_numbers(device):
    """Unwatched, nn.LSTM runs each layer and direction as one op (LSTMSequence); counted or
    drawn, it runs step by step (LSTMStep) so every step is seen.  Same outputs, same
    gradients, to the last bits of float64."""
    if device == "gpu":
        pytest.importorskip("mlx.core")
    lucid.random.seed(4)
    dtype = lucid.Float64 if device == "cpu" else lucid.Float32
    lstm = nn.LSTM(3, 4, num_layers=2, bidirectional=True, dtype=dtype).to(device)
    x = lucid.Tensor(RNG.standard_normal((5, 2, 3)), dtype=dtype, device=device,
                     requires_grad=True)
    target = lucid.Tensor(RNG.standard_normal((5, 2, 8)), dtype=dtype, device=device)
    results = {}
    for watched in (False, True):
        lstm.zero_grad()
        x.grad = None
        if watched:
            with lucid.count_flops():
                out, (h, c) = lstm(x)
        else:
            out, (h, c) = lstm(x)
        ops = _ops_below(out)
        assert ("LSTMStep" in ops) == watched and ("LSTMSequence" in ops) != watched
        (((out - target) ** 2).sum() + (h * c).sum()).backward()
        results[watched] = [np.asarray(t.numpy()) for t in (out, h, c)] + \
            [np.asarray(p.grad.numpy() if hasattr(p.grad, "numpy") else p.grad)
             for p in (x, *lstm.parameters())]
    tol = 1e-12 if device == "cpu" else 1e-5
    for a, b in zip(results[False], results[True]):
        np.testing.assert_allclose(a, b, rtol=tol, atol=tol)

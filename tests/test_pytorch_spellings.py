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


def test_pixel_shuffle_and_unshuffle_against_the_index_formula():
    """examples/super_resolution ends in nn.PixelShuffle(3):
    out[n, c, h r + i, w r + j] = in[n, c r^2 + i r + j, h, w]."""
    r, x = 3, RNG.standard_normal((2, 2 * 9, 4, 5))
    want = np.empty((2, 2, 12, 15))
    for c in range(2):
        for i in range(r):
            for j in range(r):
                want[:, c, i::r, j::r] = x[:, c * r * r + i * r + j]
    t = lucid.Tensor(x, requires_grad=True)
    y = nn.PixelShuffle(r)(t)
    np.testing.assert_array_equal(y.numpy(), want)
    np.testing.assert_array_equal(nn.PixelUnshuffle(r)(y).numpy(), x)
    w = RNG.standard_normal(want.shape)
    (y * lucid.Tensor(w)).sum().backward()  # the gradient is the inverse rearrangement
    np.testing.assert_array_equal(np.asarray(t.grad), F.pixel_unshuffle(lucid.Tensor(w), r).numpy())
    assert repr(nn.PixelShuffle(3)) == "PixelShuffle(upscale_factor=3)"
    with pytest.raises(ValueError, match=r"pixel_shuffle: 10 channels .* do not divide into "
                                         r"upscale_factor\*\*2 = 9"):
        F.pixel_shuffle(lucid.ones(1, 10, 2, 2), 3)
    with pytest.raises(ValueError, match="pixel_unshuffle: height and width"):
        F.pixel_unshuffle(lucid.ones(1, 1, 4, 5), 2)


def test_the_percent_operator_is_pythons_remainder_and_fmod_is_cs():
    """``(y + k) % 10`` (examples/mnist_forward_forward's negative labels, makemore's
    wrap-around): Python's remainder takes the sign of the divisor, as torch.remainder;
    fmod that of the dividend.  d(a % b)/db = -floor(a / b)."""
    a, b = np.array([5.0, -5.0, 7.5, -7.5]), np.array([3.0, 3.0, -2.0, -2.0])
    x, y = lucid.Tensor(a, requires_grad=True), lucid.Tensor(b, requires_grad=True)
    z = x % y
    np.testing.assert_array_equal(z.numpy(), [2.0, 1.0, -0.5, -1.5])
    np.testing.assert_array_equal(lucid.fmod(x, y).numpy(), np.fmod(a, b))
    np.testing.assert_array_equal((7.0 % x).numpy(), np.remainder(7.0, a))
    z.sum().backward()
    np.testing.assert_array_equal(np.asarray(x.grad), np.ones(4))
    np.testing.assert_array_equal(np.asarray(y.grad), -np.floor(a / b))
    k = lucid.Tensor(np.array([3, 8, 9]))
    assert (k % 10).dtype == k.dtype and ((k + 4) % 10).tolist() == [7, 2, 3]
    assert lucid.floor_divide(k, 4).tolist() == [0, 2, 2] and x.remainder(2).shape == (4,)
    k %= 4
    assert k.tolist() == [3, 0, 1]


def test_orthogonal_trunc_normal_and_eye_initialisers():
    """examples/super_resolution initialises its convolutions with init.orthogonal_(w, gain):
    the weight seen as rows x cols has orthonormal rows (or columns) times the gain."""
    lucid.random.seed(5)
    w = nn.Conv2d(32, 9, 3).weight
    assert nn.init.orthogonal_(w, nn.init.calculate_gain("relu")) is w
    m = w.numpy().astype(np.float64).reshape(9, -1)
    np.testing.assert_allclose(m @ m.T, 2.0 * np.eye(9), atol=1e-5)
    assert w.dtype == lucid.Float32
    tall = nn.init.orthogonal_(lucid.zeros(40, 3, dtype=lucid.Float64)).numpy()
    np.testing.assert_allclose(tall.T @ tall, np.eye(3), atol=1e-12)
    t = nn.init.trunc_normal_(lucid.zeros(20000, dtype=lucid.Float64), std=0.02, a=-0.03,
                              b=0.03).numpy()
    assert -0.03 <= t.min() and t.max() <= 0.03
    # the std of N(0, 0.02²) cut at 1.5 sigma: sqrt(1 - 2 * 1.5 phi(1.5) / (2 Phi(1.5) - 1))
    phi, big_phi = np.exp(-1.125) / np.sqrt(2 * np.pi), 0.9331927987311419
    want = 0.02 * np.sqrt(1 - 3.0 * phi / (2 * big_phi - 1))
    assert abs(t.std() - want) < 0.03 * want
    np.testing.assert_array_equal(nn.init.eye_(lucid.ones(2, 3)).numpy(), np.eye(2, 3))
    with pytest.raises(ValueError, match=r"orthogonal_: needs a tensor of 2 or more "
                                         r"dimensions, got shape \(5,\)"):
        nn.init.orthogonal_(lucid.zeros(5))


def _quadratic(a, b, x):
    """The closure of 0.5 x.A x - b.x, counting its calls."""
    calls = []

    def closure():
        calls.append(1)
        x.grad = None  # what optimizer.zero_grad() does
        loss = 0.5 * (x * (lucid.Tensor(a) @ x)).sum() - (lucid.Tensor(b) * x).sum()
        loss.backward()
        return loss

    return closure, calls


def test_lbfgs_first_step_and_convergence_on_a_quadratic():
    """examples/time_sequence_prediction trains with optim.LBFGS(params, lr=0.8) and a
    closure.  The first iteration is gradient descent with step min(1, 1/|g|_1) lr; then the
    two-loop recursion finds the minimiser A^-1 b of a quadratic in a few iterations."""
    m = RNG.standard_normal((6, 6))
    a, b = m @ m.T + 6 * np.eye(6), RNG.standard_normal(6)
    x = lucid.Tensor(np.zeros(6), requires_grad=True)
    closure, calls = _quadratic(a, b, x)
    opt = lucid.optim.LBFGS([x], lr=0.8, max_iter=1)
    first = opt.step(closure)
    assert float(first) == 0.0 and len(calls) == 1  # the loss before the step is returned
    g = -b  # the gradient A x - b at x = 0
    np.testing.assert_allclose(x.numpy(), -min(1.0, 1.0 / np.abs(g).sum()) * 0.8 * g,
                               rtol=1e-12)
    x2 = lucid.Tensor(np.zeros(6), requires_grad=True)
    closure, calls = _quadratic(a, b, x2)
    opt = lucid.optim.LBFGS([x2], lr=1.0, max_iter=40, tolerance_grad=1e-12,
                            tolerance_change=1e-14)
    opt.step(closure)
    np.testing.assert_allclose(x2.numpy(), np.linalg.solve(a, b), rtol=1e-6, atol=1e-8)
    assert 1 < len(calls) <= 40 and opt.state[x2]["n_iter"] == len(calls)
    with pytest.raises(TypeError, match="LBFGS.step needs a closure"):
        opt.step()
    with pytest.raises(NotImplementedError, match="line_search_fn='strong_wolfe' is not "
                                                  "implemented in Lucid"):
        lucid.optim.LBFGS([x], line_search_fn="strong_wolfe")


def test_an_endless_random_sampler_draws_as_it_goes():
    """makemore's InfiniteDataLoader: RandomSampler(ds, replacement=True,
    num_samples=int(1e10)) -- 10^10 indices are not drawn (or held) up front."""
    from lucid.utils.data import DataLoader, RandomSampler, TensorDataset

    ds = TensorDataset(lucid.arange(10))
    sampler = RandomSampler(ds, replacement=True, num_samples=int(1e10))
    assert len(sampler) == 10**10
    it = iter(DataLoader(ds, sampler=sampler, batch_size=4))
    batches = [next(it)[0].tolist() for _ in range(20000)]  # beyond the first chunk of draws
    drawn = np.array(batches).reshape(-1)
    assert drawn.min() >= 0 and drawn.max() <= 9 and len(np.unique(drawn)) == 10
    assert abs(np.bincount(drawn).mean() - 8000) < 1e-9 and np.bincount(drawn).min() > 7500
    # without replacement, several passes are whole permutations one after another
    order = list(RandomSampler(ds, num_samples=25, generator=lucid.Generator().manual_seed(1)))
    assert sorted(order[:10]) == list(range(10)) == sorted(order[10:20])
    assert len(order) == 25 and len(set(order[20:])) == 5


def test_summary_writer_records_what_a_program_logs(tmp_path):
    """makemore imports torch.utils.tensorboard.SummaryWriter and logs its losses: Lucid's
    writer keeps the records and appends them as JSON lines (not TensorBoard's format)."""
    from lucid.utils.tensorboard import SummaryWriter, read_events

    with SummaryWriter(log_dir=str(tmp_path / "out")) as writer:
        writer.add_scalar("Loss/train", lucid.Tensor(2.5), 10)
        writer.add_scalars("Loss", {"test": 3.0, "val": np.float32(1.5)}, 20)
        writer.add_histogram("w", lucid.Tensor(np.array([1.0, 2.0, 3.0, 6.0])), 20)
        writer.add_image("img", lucid.zeros(3, 4, 5), 20)
        assert writer.get_logdir() == str(tmp_path / "out")
    events = read_events(tmp_path / "out")
    assert events == writer.records and len(events) == 5
    assert [(e["tag"], e["step"], e.get("value")) for e in events[:3]] == [
        ("Loss/train", 10, 2.5), ("Loss/test", 20, 3.0), ("Loss/val", 20, 1.5)]
    h = events[3]
    assert (h["count"], h["min"], h["max"], h["mean"]) == (4, 1.0, 6.0, 3.0)
    assert h["std"] == pytest.approx(np.std([1.0, 2.0, 3.0, 6.0]), rel=1e-12)
    assert events[4]["kind"] == "image" and events[4]["shape"] == [3, 4, 5]


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_basic_indexing_gives_views_that_write_through(device):
    """The char-RNN tutorials' one-hot ``tensor[li][0][letterToIndex(letter)] = 1`` and the
    confusion matrix's ``confusion[i][j] += 1`` change the indexed tensor, as in PyTorch."""
    if device == "gpu":
        pytest.importorskip("mlx.core")
    t = lucid.zeros(4, 1, 6, device=device)
    for li, k in enumerate([2, 0, 5, 2]):
        t[li][0][k] = 1
    want = np.zeros((4, 1, 6))
    want[[0, 1, 2, 3], 0, [2, 0, 5, 2]] = 1
    np.testing.assert_array_equal(t.numpy(), want)
    confusion = lucid.zeros(3, 3, device=device)
    for i, j in [(0, 1), (0, 1), (2, 2), (1, 0)]:
        confusion[i][j] += 1
    confusion[0].mul_(0.5)
    confusion[1:, :2].fill_(7)  # slices too
    np.testing.assert_array_equal(confusion.numpy(), [[0, 1, 0], [7, 7, 0], [7, 7, 1]])
    row = confusion[2]
    row[2] = 4  # a view kept in a name writes through as long as the base is unchanged
    row[1] = 5
    assert confusion[2].tolist() == [7, 5, 4] and row.tolist() == [7, 5, 4]
    picked = confusion[[0, 1]]  # an index array copies (NumPy's rule, and PyTorch's)
    picked[0, 0] = 100
    assert confusion[0, 0].item() == 0
    confusion[0, 0] = 3  # the base changed by another path: row is stale now
    with pytest.warns(UserWarning, match=r"indexed from another one .* that has changed "
                                         "since, so the update reaches y only"):
        row[0] = 9
    assert confusion[2].tolist() == [7, 5, 4] and row.tolist() == [9, 5, 4]


def test_writing_through_a_view_of_a_parameter_needs_no_grad():
    w = nn.Linear(3, 2).weight
    before, version = w.numpy().copy(), w._version
    with pytest.raises(RuntimeError, match=r"__setitem__: a leaf Variable that requires grad "
                                           r"is being used in an in-place operation \(shape "
                                           r"\(2,3\)\)"):
        w[0][1] = 0.0  # a view of a parameter: as PyTorch, refused
    assert w._version == version and np.array_equal(w.numpy(), before)
    with lucid.no_grad():
        w[0][1] = 0.0
    assert w[0, 1].item() == 0.0


def test_accumulating_a_loss_with_plus_equals_inside_a_graph():
    """``loss = 0`` then ``loss += criterion(output, target)`` per step (the char-RNN and
    seq2seq tutorials): the sum and its gradient, as PyTorch records them."""
    w = lucid.Tensor(np.array([0.5, -1.0, 2.0]), requires_grad=True)
    xs = RNG.standard_normal((4, 3))
    loss = 0
    for x in xs:
        loss += ((lucid.Tensor(x) * w).sum() - 1.0) ** 2
    loss *= 0.5
    loss.backward()
    r = xs @ np.array([0.5, -1.0, 2.0]) - 1.0
    np.testing.assert_allclose(loss.item(), 0.5 * (r ** 2).sum(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(w.grad), xs.T @ r, rtol=1e-12)
    total = lucid.zeros(())  # a tensor without grad, updated with one that has it
    total += loss
    assert total.requires_grad and total.item() == loss.item()
    with pytest.raises(RuntimeError, match="__iadd__: a leaf Variable that requires grad"):
        w += 1.0  # a parameter is still refused, as in PyTorch


def test_more_in_place_spellings_against_numpy():
    """``target_line_tensor.unsqueeze_(-1)`` (char-RNN generation), ``x.exp_()``,
    ``avg.lerp_(p, 0.1)`` and ``exp_avg_sq.addcmul_(g, g, value=1 - beta2)`` (hand-written
    optimizers): each is the out-of-place function stored back, and bumps the version."""
    a = RNG.standard_normal((2, 3))
    for name, ref in (("exp_", np.exp), ("tanh_", np.tanh),
                      ("sigmoid_", lambda v: 1 / (1 + np.exp(-v))), ("abs_", np.abs),
                      ("neg_", np.negative), ("floor_", np.floor),
                      ("relu_", lambda v: np.maximum(v, 0)), ("square_", np.square)):
        x = lucid.Tensor(a.copy())
        v = x._version
        assert getattr(x, name)() is x and x._version == v + 1
        np.testing.assert_allclose(x.numpy(), ref(a), rtol=1e-12, err_msg=name)
    b, c = RNG.standard_normal((2, 3)), RNG.random((2, 3)) + 0.5
    x = lucid.Tensor(a.copy())
    x.lerp_(lucid.Tensor(b), 0.1).addcmul_(lucid.Tensor(b), lucid.Tensor(c), value=0.3)
    x.addcdiv_(lucid.Tensor(b), lucid.Tensor(c), value=-2)
    want = a + 0.1 * (b - a) + 0.3 * b * c - 2 * b / c
    np.testing.assert_allclose(x.numpy(), want, rtol=1e-12)
    k = lucid.LongTensor([4, 7, 9])
    assert k.unsqueeze_(-1).shape == (3, 1) and k.squeeze_(0).shape == (3, 1)
    assert k.squeeze_().shape == (3,) and k.remainder_(4).tolist() == [0, 3, 1]
    m = lucid.Tensor(a.copy())
    assert m.t_().shape == (3, 2) and np.array_equal(m.numpy(), a.T)
    assert m.transpose_(0, 1).shape == (2, 3)
    with pytest.raises(RuntimeError, match="exp_: a leaf Variable that requires grad"):
        lucid.Tensor(a, requires_grad=True).exp_()


def test_saving_a_whole_module_and_loading_it_back(tmp_path):
    """examples/word_language_model saves its best model with torch.save(model, f) and
    reloads it at the end; examples/super_resolution checkpoints the same way.  Lucid files
    hold no code: the state dict is saved, and loaded back in the same process as a copy of
    the module with the saved weights; elsewhere as the state dict, with a warning."""
    from lucid import serialization

    lucid.random.seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4))
    with open(tmp_path / "model.pt", "wb") as f:
        lucid.save(model, f)
    saved = model[0].weight.numpy().copy()
    with lucid.no_grad():
        model[0].weight.fill_(0.0)  # training goes on after the save
    with open(tmp_path / "model.pt", "rb") as f:
        best = lucid.load(f)
    assert type(best) is nn.Sequential and best is not model
    np.testing.assert_array_equal(best[0].weight.numpy(), saved)
    assert best(lucid.ones(2, 3)).shape == (2, 4)
    serialization._SAVED_MODULES.clear()  # as in another process
    with pytest.warns(UserWarning, match=r"holds the state dict of a Sequential saved with "
                                         r"lucid.save\(model, path\)"):
        state = lucid.load(tmp_path / "model.pt")
    assert list(state) == list(model.state_dict())
    np.testing.assert_array_equal(np.asarray(state["0.weight"]), saved)


def test_writing_graph_values_into_a_buffer_records_the_write():
    """``encoder_outputs[ei] = encoder_output[0, 0]`` (the seq2seq tutorial) and
    ``outputs[t] = output`` (hand-written seq2seq models): the buffer becomes part of the
    graph, as in PyTorch, and gradients reach what was written (compared with np.stack)."""
    w0 = np.array([[0.5, -0.3], [0.8, 0.1]])
    w = lucid.Tensor(w0, requires_grad=True)
    outs = lucid.zeros(4, 2, dtype=lucid.Float64)
    h = lucid.Tensor(np.array([1.0, -1.0]))
    for t in range(3):  # row 3 stays zero
        h = lucid.tanh(w @ h)
        outs[t] = h
    outs[0][1] = h[0] * 2  # through a view too
    weights = RNG.standard_normal((4, 2))
    (outs * lucid.Tensor(weights)).sum().backward()

    def f(wm):  # the same function, by hand: its value, and its gradient by differences
        hv, rows = np.array([1.0, -1.0]), []
        for _ in range(3):
            hv = np.tanh(wm @ hv)
            rows.append(hv)
        m = np.stack(rows + [np.zeros(2)])
        m[0, 1] = 2 * rows[-1][0]
        return (m * weights).sum(), m

    value, m = f(w0)
    np.testing.assert_allclose(outs.numpy(), m, rtol=1e-12)
    eps, num = 1e-6, np.zeros_like(w0)
    for i in range(2):
        for j in range(2):
            d = np.zeros_like(w0)
            d[i, j] = eps
            num[i, j] = (f(w0 + d)[0] - f(w0 - d)[0]) / (2 * eps)
    np.testing.assert_allclose(np.asarray(w.grad), num, rtol=1e-6, atol=1e-9)


def test_a_write_after_use_in_a_graph_raises_at_backward():
    """PyTorch keeps the value an op used before an in-place write; Lucid's graph links
    tensors, not values, so backward says what happened instead of giving a wrong gradient."""
    x = lucid.Tensor(np.ones(3), requires_grad=True)
    y = x * 2.0
    z = y + 1.0  # uses y before the write
    y[0] = x[1] * 3
    with pytest.raises(RuntimeError, match=r"backward through Add: its input \(shape \(3,\)\) "
                                           r"was written in place \(x\[...\] = value\) after "
                                           "this op used it"):
        (z.sum() + y.sum()).backward()


def test_legacy_tensor_of_a_shape_for_a_parameter():
    """``nn.Parameter(torch.Tensor(in_dim, out_dim))`` then an init (examples/gcn, the
    Bi-LSTM-CRF tutorial's ``torch.Tensor(1, n).fill_(-10000.)``)."""
    kernel = nn.Parameter(lucid.Tensor(5, 3))
    assert kernel.shape == (5, 3) and kernel.dtype == lucid.float32 and kernel.requires_grad
    nn.init.xavier_uniform_(kernel)
    bound = np.sqrt(6 / (5 + 3))
    assert 0 < np.abs(kernel.numpy()).max() <= bound
    alphas = lucid.Tensor(1, 4).fill_(-10000.0)
    alphas[0][2] = 0.0
    assert alphas.tolist() == [[-10000.0, -10000.0, 0.0, -10000.0]]
    assert lucid.Tensor(2, 3, 4).shape == (2, 3, 4) and lucid.Tensor(5).shape == ()
    with pytest.raises(TypeError, match=r"the second argument is requires_grad \(True/False\), "
                                        "not a size"):
        lucid.Tensor([1.0, 2.0], 3)


def test_graph_network_spellings():
    """examples/gcn and examples/gat: nn.Parameter(torch.Tensor(n)) for a bias,
    torch.empty(size=...), torch.sparse_coo_tensor, x.to_sparse() and torch.spmm (dense in
    Lucid: the same values and gradients)."""
    bias = nn.Parameter(lucid.Tensor(16))
    assert bias.shape == (16,) and bias.dtype == lucid.float32 and bias.requires_grad
    assert lucid.empty(size=(2, 3)).shape == (2, 3) and lucid.zeros(size=[4]).shape == (4,)
    assert lucid.randn(size=(2, 2)).shape == (2, 2) and lucid.rand(size=(3,)).shape == (3,)
    with pytest.raises(TypeError, match=r"zeros: give the shape once"):
        lucid.zeros(2, size=(2,))
    edges = np.array([[0, 1, 2, 2], [1, 0, 1, 1]])
    adj = lucid.sparse_coo_tensor(lucid.tensor(edges), lucid.ones(4), (3, 3),
                                  dtype=lucid.int64)
    want = np.zeros((3, 3))
    np.add.at(want, tuple(edges), 1)  # the repeated edge adds up
    np.testing.assert_array_equal(adj.numpy(), want)
    a = (lucid.eye(3) + adj).to_sparse()
    x = lucid.Tensor(RNG.standard_normal((3, 2)), requires_grad=True)
    y = lucid.spmm(a, x)
    np.testing.assert_allclose(y.numpy(), (np.eye(3) + want) @ x.numpy(), rtol=1e-12)
    y.sum().backward()
    np.testing.assert_allclose(np.asarray(x.grad), (np.eye(3) + want).T @ np.ones((3, 2)))
    assert a.to_dense() is a and not a.is_sparse()


def test_pytorchs_module_paths_onnx_and_safe_globals(tmp_path):
    """examples/word_language_model imports torch.onnx and reloads its model inside
    ``torch.serialization.safe_globals([torch.nn.modules.rnn.LSTM, ...])``."""
    import lucid.nn.modules.rnn as rnn_paths

    import lucid.onnx

    mods = lucid.nn.modules
    assert rnn_paths.LSTM is nn.LSTM and mods.sparse.Embedding is nn.Embedding
    assert mods.linear.NonDynamicallyQuantizableLinear is nn.Linear
    assert mods.transformer.TransformerEncoderLayer is nn.TransformerEncoderLayer
    assert isinstance(nn.Conv2d(1, 1, 1), mods.conv.Conv2d)
    model = nn.Sequential(nn.Embedding(5, 3), nn.Linear(3, 2))
    lucid.save(model, tmp_path / "m.pt")
    with lucid.serialization.safe_globals([mods.sparse.Embedding, mods.linear.Linear]):
        back = lucid.load(tmp_path / "m.pt", weights_only=False)
    np.testing.assert_array_equal(back[1].weight.numpy(), model[1].weight.numpy())
    with pytest.raises(NotImplementedError, match="lucid.onnx.export: Lucid does not write "
                                                  "ONNX files"):
        lucid.onnx.export(model, (lucid.zeros(1, dtype=lucid.int64),), tmp_path / "m.onnx")


def _bilinear_reference(x, grid, align_corners):
    """PyTorch's grid_sample, bilinear, zero padding, one point at a time."""
    n, c, h, w = x.shape
    out = np.zeros((n, c) + grid.shape[1:3])
    for b in range(n):
        for i in range(grid.shape[1]):
            for j in range(grid.shape[2]):
                gx, gy = grid[b, i, j]
                if align_corners:
                    ix, iy = (gx + 1) / 2 * (w - 1), (gy + 1) / 2 * (h - 1)
                else:
                    ix, iy = ((gx + 1) * w - 1) / 2, ((gy + 1) * h - 1) / 2
                x0, y0 = int(np.floor(ix)), int(np.floor(iy))
                for xx, yy in ((x0, y0), (x0 + 1, y0), (x0, y0 + 1), (x0 + 1, y0 + 1)):
                    if 0 <= xx < w and 0 <= yy < h:
                        out[b, :, i, j] += (1 - abs(ix - xx)) * (1 - abs(iy - yy)) * x[b, :, yy, xx]
    return out


@pytest.mark.parametrize("align_corners", [False, True])
def test_affine_grid_and_grid_sample_against_numpy(align_corners):
    """The spatial transformer tutorial: F.affine_grid(theta, x.size()) then
    F.grid_sample(x, grid); gradients reach the image and theta (finite differences)."""
    from lucid.autograd import gradcheck

    x = RNG.standard_normal((2, 3, 5, 6))
    theta = np.array([[[0.9, 0.2, 0.1], [-0.3, 1.1, 0.05]], [[1.2, 0.0, -0.4], [0.1, 0.8, 0.3]]])
    grid = F.affine_grid(lucid.Tensor(theta), (2, 3, 4, 7), align_corners=align_corners)
    xs = np.linspace(-1, 1, 7) if align_corners else (2 * np.arange(7) + 1) / 7 - 1
    ys = np.linspace(-1, 1, 4) if align_corners else (2 * np.arange(4) + 1) / 4 - 1
    base = np.stack([*np.meshgrid(xs, ys), np.ones((4, 7))], axis=-1)  # (H, W, 3): x, y, 1
    np.testing.assert_allclose(grid.numpy(), np.einsum("hwk,nck->nhwc", base, theta),
                               rtol=1e-12, atol=1e-14)
    out = F.grid_sample(lucid.Tensor(x), grid, align_corners=align_corners)
    np.testing.assert_allclose(out.numpy(), _bilinear_reference(x, grid.numpy(), align_corners),
                               rtol=1e-12, atol=1e-14)
    theta_in = theta * 0.47 + 0.0137 * np.arange(12).reshape(2, 2, 3) / 7  # off the kinks
    assert gradcheck(lambda img, th: F.grid_sample(
        img, F.affine_grid(th, (2, 3, 4, 7), align_corners=align_corners),
        align_corners=align_corners), lucid.Tensor(x, requires_grad=True),
        lucid.Tensor(theta_in, requires_grad=True))
    nearest = F.grid_sample(lucid.Tensor(x), grid, mode="nearest", padding_mode="border",
                            align_corners=align_corners).numpy()
    assert set(np.round(nearest.reshape(-1), 12)) <= set(np.round(x.reshape(-1), 12))
    with pytest.raises(ValueError, match="grid_sample: padding_mode must be 'zeros' or "
                                         "'border' in Lucid, got 'reflection'"):
        F.grid_sample(lucid.Tensor(x), grid, padding_mode="reflection")


def test_legacy_size_average_and_reduce():
    """The spatial transformer tutorial's F.nll_loss(output, target, size_average=False):
    PyTorch's old pair, read as reduction= (with a warning naming it)."""
    logp = F.log_softmax(lucid.Tensor(RNG.standard_normal((5, 3))), dim=1)
    y = lucid.tensor([0, 2, 1, 1, 0])
    picked = -logp.numpy()[np.arange(5), y.numpy()]
    with pytest.warns(UserWarning, match=r"nll_loss: size_average and reduce are PyTorch's old "
                                         r"arguments; this is reduction='sum'"):
        total = F.nll_loss(logp, y, size_average=False)
    np.testing.assert_allclose(total.item(), picked.sum(), rtol=1e-12)
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert F.cross_entropy(logp, y, reduce=False).shape == (5,)
    with pytest.warns(UserWarning, match=r"NLLLoss: size_average .* reduction='sum'"):
        layer = nn.NLLLoss(size_average=False)
    np.testing.assert_allclose(layer(logp, y).item(), picked.sum(), rtol=1e-12)
    with pytest.warns(UserWarning):
        assert nn.MSELoss(size_average=True).reduction == "mean"


def test_padding_layers_against_numpy():
    """nn.ReflectionPad2d (style transfer networks), ZeroPad2d, ConstantPad2d,
    ReplicationPad2d: (left, right, top, bottom) on the last two axes, as np.pad's modes."""
    x = RNG.standard_normal((2, 3, 4, 5))
    t = lucid.Tensor(x, requires_grad=True)
    cases = ((nn.ReflectionPad2d((1, 2, 2, 1)), np.pad(x, ((0, 0), (0, 0), (2, 1), (1, 2)),
                                                     mode="reflect")),
             (nn.ReplicationPad2d(2), np.pad(x, ((0, 0), (0, 0), (2, 2), (2, 2)), mode="edge")),
             (nn.ZeroPad2d((1, 0, 2, 3)), np.pad(x, ((0, 0), (0, 0), (2, 3), (1, 0)))),
             (nn.ConstantPad2d(1, 3.5), np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)),
                                              constant_values=3.5)),
             (nn.ReflectionPad1d(2), np.pad(x, ((0, 0), (0, 0), (0, 0), (2, 2)), mode="reflect")))
    for layer, want in cases:
        np.testing.assert_array_equal(layer(t).numpy(), want, err_msg=repr(layer))
    nn.ReflectionPad2d(1)(t).sum().backward()  # each input pixel: 1 + its reflected copies
    counts = np.pad(np.ones((4, 5)), 1, mode="reflect")
    want = np.zeros((4, 5))
    idx = np.pad(np.arange(20).reshape(4, 5), 1, mode="reflect")
    np.add.at(want.reshape(-1), idx.reshape(-1), counts.reshape(-1))
    np.testing.assert_array_equal(np.asarray(t.grad)[0, 0], want)
    assert repr(nn.ConstantPad2d(1, 3.5)) == "ConstantPad2d((1, 1, 1, 1), value=3.5)"


def test_distances_their_losses_and_more_activations_against_numpy():
    a, b, c = (RNG.standard_normal((5, 4)) for _ in range(3))
    y = np.array([1.0, -1.0, 1.0, -1.0, 1.0])
    A, B, C, Y = (lucid.Tensor(v) for v in (a, b, c, y))
    cos = (a * b).sum(1) / (np.linalg.norm(a, axis=1) * np.linalg.norm(b, axis=1))
    np.testing.assert_allclose(nn.CosineSimilarity(dim=1)(A, B).numpy(), cos, rtol=1e-12)
    dist = lambda u, v: np.linalg.norm(u - v + 1e-6, axis=-1)  # noqa: E731 (PyTorch's eps)
    np.testing.assert_allclose(nn.PairwiseDistance()(A, B).numpy(), dist(a, b), rtol=1e-12)
    np.testing.assert_allclose(nn.TripletMarginLoss(margin=1.0)(A, B, C).item(),
                               np.maximum(dist(a, b) - dist(a, c) + 1, 0).mean(), rtol=1e-12)
    np.testing.assert_allclose(
        nn.MarginRankingLoss(0.1)(A[:, 0], B[:, 0], Y).item(),
        np.maximum(-y * (a[:, 0] - b[:, 0]) + 0.1, 0).mean(), rtol=1e-12)
    cos_last = (a * b).sum(-1) / (np.linalg.norm(a, axis=-1) * np.linalg.norm(b, axis=-1))
    np.testing.assert_allclose(
        nn.CosineEmbeddingLoss(0.2)(A, B, Y).item(),
        np.where(y == 1, 1 - cos_last, np.maximum(cos_last - 0.2, 0)).mean(), rtol=1e-12)
    big = a * 40  # logsigmoid without overflow
    np.testing.assert_allclose(nn.LogSigmoid()(lucid.Tensor(big)).numpy(),
                               -np.logaddexp(0, -big), rtol=1e-12)
    np.testing.assert_allclose(nn.Softsign()(A).numpy(), a / (1 + np.abs(a)), rtol=1e-12)
    np.testing.assert_array_equal(nn.Hardtanh(-0.5, 0.7)(A).numpy(), np.clip(a, -0.5, 0.7))
    np.testing.assert_allclose(nn.GLU()(A).numpy(), a[:, :2] / (1 + np.exp(-a[:, 2:])),
                               rtol=1e-12)
    e = np.exp(-a)
    np.testing.assert_allclose(nn.Softmin(dim=1)(A).numpy(), e / e.sum(1, keepdims=True),
                               rtol=1e-12)
    np.testing.assert_array_equal(nn.Threshold(0.1, 20.0)(A).numpy(), np.where(a > 0.1, a, 20))
    prelu = nn.PReLU(4)
    assert prelu.weight.tolist() == [0.25] * 4
    np.testing.assert_allclose(prelu(A).numpy(), np.where(a > 0, a, 0.25 * a), rtol=1e-6)


def test_packed_sequences_through_a_recurrent_layer():
    """The chatbot tutorial's encoder: pack_padded_sequence -> GRU -> pad_packed_sequence.
    Each sequence runs to its own length (checked against a NumPy GRU), padded steps are 0
    (or padding_value), h_n is each sequence's state at its end."""
    from lucid.nn.utils.rnn import pack_padded_sequence, pack_sequence, pad_packed_sequence
    from tests.pytorch_programs import reference as ref

    x = RNG.standard_normal((5, 3, 4))  # (L, N, features)
    lengths = [5, 3, 2]
    lucid.random.seed(0)
    gru = nn.GRU(4, 6).double()
    out, h_n = gru(pack_padded_sequence(lucid.Tensor(x), lengths))
    padded, got_lengths = pad_packed_sequence(out)
    s = {f"gru.{k}": np.asarray(v, dtype=np.float64) for k, v in gru.state_dict().items()}
    for b, n in enumerate(lengths):
        h = np.zeros(6)
        for t in range(n):
            h = ref.gru_step(x[t, b], h, s, "gru")
            np.testing.assert_allclose(padded.numpy()[t, b], h, rtol=1e-10, atol=1e-12)
        np.testing.assert_array_equal(padded.numpy()[n:, b], 0.0)
        np.testing.assert_allclose(h_n.numpy()[0, b], h, rtol=1e-10, atol=1e-12)
    assert got_lengths.tolist() == lengths
    packed = pack_padded_sequence(lucid.Tensor(x), lengths)
    assert packed.batch_sizes.tolist() == [3, 3, 2, 1, 1]
    np.testing.assert_array_equal(packed.data.numpy(), np.concatenate(
        [x[t, :k] for t, k in enumerate([3, 3, 2, 1, 1])]))
    filled, _ = pad_packed_sequence(out, batch_first=True, padding_value=-1.0)
    assert filled.shape == (3, 5, 6) and (filled.numpy()[2, 2:] == -1).all()
    assert pack_sequence([lucid.ones(3, 4), lucid.ones(2, 4)]).lengths.tolist() == [3, 2]
    with pytest.raises(RuntimeError, match="must be sorted in decreasing order"):
        pack_padded_sequence(lucid.Tensor(x), [2, 5, 3])


def test_device_flags_of_a_tensor():
    """examples/dcgan's ``if (input.is_cuda or input.is_xpu) and self.ngpu > 1``."""
    x = lucid.ones(2)
    assert x.is_cpu is True and x.is_xpu is False and x.is_meta is False and not x.is_cuda


def test_distributions_for_policy_gradients_and_vaes():
    """examples/reinforcement_learning samples actions with Categorical(probs) and trains on
    -m.log_prob(action) * R; VAEs write KL(N(mu, s) || N(0, 1)) with kl_divergence."""
    from lucid.distributions import Bernoulli, Categorical, Normal, kl_divergence

    lucid.manual_seed(0)
    p = np.array([[0.1, 0.6, 0.3], [0.5, 0.25, 0.25]])
    probs = lucid.Tensor(p, requires_grad=True)
    m = Categorical(probs)
    action = m.sample()
    assert action.shape == (2,) and action.dtype == lucid.int64
    np.testing.assert_allclose(m.log_prob(lucid.tensor([1, 0])).numpy(), np.log([0.6, 0.5]),
                               rtol=1e-12)
    np.testing.assert_allclose(m.entropy().numpy(), -(p * np.log(p)).sum(1), rtol=1e-12)
    draws = m.sample((20000,)).numpy()
    freq = np.stack([np.bincount(draws[:, b], minlength=3) / 20000 for b in range(2)])
    assert np.abs(freq - p).max() < 4 * np.sqrt(0.25 / 20000)
    (-m.log_prob(lucid.tensor([1, 2])).sum()).backward()  # d(-log p_i / sum p)/dp
    want = np.ones_like(p) / p.sum(1, keepdims=True)
    want[0, 1] -= 1 / 0.6
    want[1, 2] -= 1 / 0.25
    np.testing.assert_allclose(np.asarray(probs.grad), want, rtol=1e-12)
    logits = Categorical(logits=lucid.Tensor([1.0, 2.0, 3.0]))
    np.testing.assert_allclose(logits.probs.numpy(), np.exp([1, 2, 3]) / np.exp([1, 2, 3]).sum(),
                               rtol=1e-12)
    mu, s = lucid.Tensor([0.5, -1.0], requires_grad=True), lucid.Tensor([2.0, 0.5])
    n = Normal(mu, s)
    np.testing.assert_allclose(n.log_prob(lucid.Tensor([1.0, 0.0])).numpy(),
                               -((np.array([0.5, 1.0])) ** 2) / (2 * np.array([4.0, 0.25]))
                               - np.log([2.0, 0.5]) - 0.5 * np.log(2 * np.pi), rtol=1e-12)
    kl = kl_divergence(n, Normal(0.0, 1.0))
    np.testing.assert_allclose(kl.numpy(), 0.5 * (np.array([4.0, 0.25]) + np.array([0.25, 1.0])
                                                  - 1 - np.log([4.0, 0.25])), rtol=1e-12)
    n.rsample().sum().backward()  # d(mu + s eps)/dmu = 1
    np.testing.assert_array_equal(np.asarray(mu.grad), [1.0, 1.0])
    b = Bernoulli(probs=lucid.Tensor([0.2, 0.9]))
    np.testing.assert_allclose(b.log_prob(lucid.Tensor([0.0, 1.0])).numpy(), np.log([0.8, 0.9]),
                               rtol=1e-9)
    with pytest.raises(ValueError, match="Categorical: give probs or logits"):
        Categorical()


def test_nanogpt_train_py_spellings():
    """nanoGPT's train.py: torch.compile(model), a dtype table naming torch.bfloat16,
    torch.cuda.is_bf16_supported(), and `from torch.distributed import init_process_group,
    destroy_process_group` (called only under torchrun)."""
    from lucid.distributed import destroy_process_group, init_process_group

    model = nn.Linear(2, 2)
    assert lucid.compile(model) is model and lucid.compile()(len) is len
    table = {"float32": lucid.float32, "bfloat16": lucid.bfloat16, "float16": lucid.float16}
    dtype = "bfloat16" if lucid.cuda.is_bf16_supported() else "float16"
    assert table[dtype] == lucid.float16
    with pytest.raises(TypeError, match="Unsupported dtype 'bfloat16'"):
        lucid.zeros(2, dtype=lucid.bfloat16)
    init_process_group(backend="nccl")
    assert lucid.distributed.get_world_size() == 1 and lucid.distributed.get_rank() == 0
    destroy_process_group()
    lucid.cuda.set_device("cuda:0")


def test_an_endless_sampler_with_worker_processes():
    """makemore's defaults: InfiniteDataLoader(..., pin_memory=True, num_workers=4) over
    RandomSampler(replacement=True, num_samples=int(1e10)): the workers get batches as they
    are drawn, not a list of 10^10 indices made first."""
    from lucid.utils.data import DataLoader, RandomSampler, TensorDataset

    ds = TensorDataset(lucid.arange(12))
    sampler = RandomSampler(ds, replacement=True, num_samples=int(1e10))
    it = iter(DataLoader(ds, sampler=sampler, batch_size=3, num_workers=2, pin_memory=True))
    batches = [next(it)[0].tolist() for _ in range(5)]
    assert all(len(b) == 3 and all(0 <= v < 12 for v in b) for b in batches)
    del it


@pytest.mark.parametrize("device", ["cpu", "gpu"])
def test_out_writes_the_result_into_the_given_tensor(device):
    """The tensors tutorial: torch.matmul(t, t.T, out=y3) and torch.mul(t, t, out=z3)."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((4, 3))
    t = lucid.tensor(a, device=device)
    y3 = lucid.rand(4, 4, dtype=lucid.float64, device=device)
    before = y3._version
    assert lucid.matmul(t, t.T, out=y3) is y3
    np.testing.assert_allclose(y3.numpy(), a @ a.T, rtol=1e-12)
    assert y3._version == before + 1
    z3 = lucid.zeros(4, 3, dtype=lucid.float32, device=device)
    lucid.mul(t, t, out=z3)
    assert z3.dtype == lucid.float32  # out keeps its dtype (a same-kind cast)
    np.testing.assert_allclose(z3.numpy(), (a * a).astype(np.float32), rtol=1e-6)


def test_out_resizes_with_pytorchs_warning_and_refuses_what_it_cannot_hold():
    a = np.arange(6.0).reshape(2, 3)
    empty = lucid.tensor(np.zeros((0,)))
    lucid.add(lucid.tensor(a), 1.0, out=empty)  # an empty out is resized silently
    np.testing.assert_array_equal(empty.numpy(), a + 1)
    full = lucid.zeros(5)
    with pytest.warns(UserWarning, match=r"add: an output with one or more elements was resized"):
        lucid.add(lucid.tensor(a), 1.0, out=full)
    np.testing.assert_array_equal(full.numpy(), a + 1)
    ints = lucid.zeros(2, 3, dtype=lucid.int64)
    with pytest.raises(TypeError, match=r"add"):
        lucid.add(lucid.tensor(a), 0.5, out=ints)  # floats do not fit an integer tensor
    with pytest.raises(TypeError, match=r"add\(\.\.\., out=\.\.\.\): out must be a Tensor"):
        lucid.add(lucid.tensor(a), 1.0, out=np.zeros((2, 3)))


def test_out_refuses_a_result_that_needs_a_gradient():
    w = lucid.tensor(np.ones((2, 2)), requires_grad=True)
    y = lucid.zeros(2, 2, dtype=lucid.float64)
    with pytest.raises(RuntimeError, match=r"matmul\(\.\.\., out=\.\.\.\): the result requires "
                                           r"grad"):
        lucid.matmul(w, w, out=y)
    np.testing.assert_array_equal(y.numpy(), np.zeros((2, 2)))  # left as it was
    with lucid.no_grad():
        lucid.matmul(w, w, out=y)
    np.testing.assert_array_equal(y.numpy(), np.full((2, 2), 2.0))

"""The character-level GPT: nanoGPT's names, parameter counts (formula and PyTorch), init,
causality, attention maps against NumPy, outputs, loss and gradients equal to nanoGPT's layout
in PyTorch, sampling, training and devices."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
from lucid.models import GPT, summarize
from lucid.models.text.gpt import _sample
from tests.parity import assert_grads_match_torch

RNG = np.random.default_rng(0)


def _count(vocab, block, layers, d, bias=True, tied=True):
    """V·d + block·d + L·(12d² + 13d) + 2d (+ V·d untied); without biases L·(12d² + 2d) + d."""
    per_layer = 12 * d * d + (13 * d if bias else 2 * d)
    return vocab * d * (1 if tied else 2) + block * d + layers * per_layer + (2 * d if bias else d)


@pytest.mark.parametrize("bias,tied", [(True, True), (True, False), (False, True)])
def test_parameter_count_is_the_formula(bias, tied):
    model = GPT(65, 32, n_layer=3, n_head=4, d_model=48, bias=bias, tie_weights=tied)
    assert sum(p.size for p in model.parameters()) == _count(65, 32, 3, 48, bias, tied)


def test_names_tying_and_init_are_nanogpts():
    lucid.random.seed(0)
    model = GPT(65, 64, n_layer=4, n_head=4, d_model=64)
    keys = list(model.state_dict())
    assert keys[:4] == ["transformer.wte.weight", "transformer.wpe.weight",
                        "transformer.h.0.ln_1.weight", "transformer.h.0.ln_1.bias"]
    assert "transformer.h.3.attn.c_attn.weight" in keys and "transformer.h.3.mlp.c_fc.bias" in keys
    assert keys[-3:] == ["transformer.ln_f.weight", "transformer.ln_f.bias", "lm_head.weight"]
    assert model.lm_head.weight is model.transformer.wte.weight  # tied: one matrix, two names
    assert model.lm_head.bias is None
    wpe = model.transformer.wpe.weight.numpy()
    c_fc = model.transformer.h[0].mlp.c_fc.weight.numpy()
    assert abs(wpe.std() - 0.02) < 0.002 and abs(c_fc.std() - 0.02) < 0.001
    c_proj = np.concatenate([b.mlp.c_proj.weight.numpy().ravel() for b in model.transformer.h])
    assert abs(c_proj.std() - 0.02 / math.sqrt(2 * 4)) < 0.0005  # scaled down for depth
    assert float(np.abs(model.transformer.h[0].attn.c_attn.bias.numpy()).max()) == 0.0


def test_summarize_with_token_ids():
    model = GPT(20, 16, n_layer=2, n_head=2, d_model=32)
    s = summarize(model, (1, 8), dtype=lucid.Int64, print_summary=False)
    assert s.total_params == _count(20, 16, 2, 32)
    assert s.rows[-1].name == "lm_head" and s.rows[-1].output_shape == (1, 8, 20)
    assert s.rows[-1].macs == 8 * 32 * 20


def test_logits_at_a_position_do_not_see_later_tokens():
    lucid.random.seed(1)
    model = GPT(11, 12, n_layer=2, n_head=2, d_model=16)
    idx = RNG.integers(0, 11, (2, 12))
    changed = idx.copy()
    changed[:, 7:] = (changed[:, 7:] + 1) % 11
    a = model(lucid.Tensor(idx))[0].numpy()
    b = model(lucid.Tensor(changed))[0].numpy()
    np.testing.assert_array_equal(a[:, :7], b[:, :7])
    assert np.abs(a[:, 7:] - b[:, 7:]).max() > 1e-3


def test_attention_maps_match_numpy():
    lucid.random.seed(2)
    model = GPT(13, 10, n_layer=2, n_head=2, d_model=8, dtype=lucid.Float64)
    idx = RNG.integers(0, 13, (3, 10))
    model(lucid.Tensor(idx))
    maps = model.attn_weights
    assert len(maps) == 2 and maps[0].shape == (3, 2, 10, 10) and not maps[0].requires_grad
    sd = model.state_dict()
    x = sd["transformer.wte.weight"][idx] + sd["transformer.wpe.weight"][:10]
    x = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    qkv = x @ sd["transformer.h.0.attn.c_attn.weight"].T + sd["transformer.h.0.attn.c_attn.bias"]
    q, k = (qkv[..., i * 8:(i + 1) * 8].reshape(3, 10, 2, 4).transpose(0, 2, 1, 3)
            for i in range(2))
    s = q @ k.transpose(0, 1, 3, 2) / 2.0 + np.triu(np.full((10, 10), -np.inf), 1)
    want = np.exp(s - s.max(-1, keepdims=True))
    want /= want.sum(-1, keepdims=True)
    np.testing.assert_allclose(maps[0].numpy(), want, rtol=1e-10, atol=1e-12)


def test_generate_is_seeded_and_top_k_1_is_greedy():
    lucid.random.seed(3)
    model = GPT(9, 6, n_layer=1, n_head=2, d_model=8)
    start = lucid.Tensor([[1, 2], [3, 4]])
    lucid.random.seed(10)
    a = model.generate(start, 10, temperature=0.8).numpy()
    lucid.random.seed(10)
    b = model.generate(start, 10, temperature=0.8).numpy()
    assert a.shape == (2, 12) and (a == b).all() and (a[:, :2] == [[1, 2], [3, 4]]).all()
    greedy = model.generate(start, 8, top_k=1).numpy()  # past block_size 6: the window slides
    seq = np.array([[1, 2], [3, 4]])
    for _ in range(8):
        logits = model(lucid.Tensor(seq[:, -6:]))[0].numpy()
        seq = np.concatenate([seq, logits[:, -1].argmax(-1)[:, None]], axis=1)
    np.testing.assert_array_equal(greedy, seq)
    assert model.generate(start, 0).shape == (2, 2)


def test_top_k_only_draws_the_k_likeliest():
    lucid.random.seed(4)
    model = GPT(12, 4, n_layer=1, n_head=1, d_model=8)
    start = lucid.Tensor(np.zeros((64, 1), dtype=np.int64))
    logits = model(start)[0].numpy()[0, -1]
    drawn = model.generate(start, 1, top_k=3).numpy()[:, 1]
    assert set(drawn) <= set(np.argsort(logits)[-3:]) and len(set(drawn)) > 1


def test_sampling_follows_the_probabilities():
    lucid.random.seed(5)
    p = np.array([0.5, 0.0, 0.2, 0.3])
    drawn = _sample(lucid.Tensor(np.tile(p, (20_000, 1)))).numpy()
    assert drawn.shape == (20_000, 1) and drawn.dtype == np.int64
    freq = np.bincount(drawn[:, 0], minlength=4) / 20_000
    assert freq[1] == 0.0  # probability 0 is never drawn
    np.testing.assert_allclose(freq, p, atol=4 * np.sqrt(0.25 / 20_000))


def test_bad_arguments_are_refused():
    model = GPT(9, 6, n_layer=1, n_head=2, d_model=8)
    with pytest.raises(ValueError, match=r"GPT: a sequence of 7 tokens is longer than "
                                         r"block_size=6"):
        model(lucid.Tensor(np.zeros((1, 7), dtype=np.int64)))
    with pytest.raises(ValueError, match=r"GPT: targets of shape \(1,4\) must have idx's shape "
                                         r"\(1,5\)"):
        model(lucid.Tensor(np.zeros((1, 5), dtype=np.int64)),
              lucid.Tensor(np.zeros((1, 4), dtype=np.int64)))
    with pytest.raises(ValueError, match=r"GPT.generate: temperature must be > 0, got 0"):
        model.generate(lucid.Tensor([[1]]), 2, temperature=0)
    with pytest.raises(ValueError, match=r"GPT.generate: top_k must be >= 1, got 0"):
        model.generate(lucid.Tensor([[1]]), 2, top_k=0)
    with pytest.raises(ValueError, match=r"d_model \(10\) must be divisible by n_head \(4\)"):
        GPT(9, 6, n_head=4, d_model=10)
    with pytest.raises(ValueError, match=r"GPT: vocab_size must be a positive int, got 0"):
        GPT(0, 6)


def test_dropout_acts_in_training_only():
    lucid.random.seed(9)
    model = GPT(10, 8, n_layer=2, n_head=2, d_model=16, dropout=0.3)
    plain = GPT(10, 8, n_layer=2, n_head=2, d_model=16)
    plain.load_state_dict(model.state_dict())
    idx = lucid.Tensor(RNG.integers(0, 10, (2, 8)))
    a, b = model(idx)[0].numpy(), model(idx)[0].numpy()
    assert np.abs(a - b).max() > 1e-2  # fresh masks at every call
    model.eval()
    np.testing.assert_array_equal(model(idx)[0].numpy(), plain(idx)[0].numpy())


def test_training_lowers_the_loss():
    lucid.random.seed(6)
    text = np.array([0, 1, 2, 3, 4, 5, 6, 7] * 9)  # a cycle: each token fixes the next
    model = GPT(8, 16, n_layer=1, n_head=2, d_model=16)
    starts = RNG.integers(0, text.size - 17, 8)
    x = lucid.Tensor(np.stack([text[s:s + 16] for s in starts]))
    y = lucid.Tensor(np.stack([text[s + 1:s + 17] for s in starts]))
    opt = lucid.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for _ in range(25):
        opt.zero_grad()
        _, loss = model(x, y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(math.log(8), abs=0.1)
    assert losses[-1] < 0.2 * losses[0]


def test_gpu_matches_cpu():
    pytest.importorskip("mlx.core")
    lucid.random.seed(7)
    model = GPT(10, 8, n_layer=2, n_head=2, d_model=16)
    idx = RNG.integers(0, 10, (2, 8))
    cpu_logits, cpu_loss = model(lucid.Tensor(idx), lucid.Tensor(idx))
    model.to("gpu")
    logits, loss = model(lucid.Tensor(idx, device="gpu"), lucid.Tensor(idx, device="gpu"))
    assert logits.device == "gpu"
    np.testing.assert_allclose(logits.numpy(), cpu_logits.numpy(), rtol=1e-4, atol=1e-5)
    assert loss.item() == pytest.approx(cpu_loss.item(), rel=1e-5)
    lucid.random.seed(8)
    on_gpu = model.generate(lucid.Tensor([[1]], device="gpu"), 4, top_k=1)
    assert on_gpu.device == "gpu" and on_gpu.shape == (1, 5)


def test_outputs_loss_and_gradients_match_nanogpt_in_pytorch():
    torch = pytest.importorskip("torch")
    from benchmarks.b7_gpt import torch_gpt

    torch.manual_seed(0)
    theirs = torch_gpt(torch, 17, 12, 2, 4, 32)
    ours = GPT(17, 12, n_layer=2, n_head=4, d_model=32)
    assert sum(p.numel() for p in theirs.parameters()) == sum(p.size for p in ours.parameters())
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: lucid.Tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    assert ours.lm_head.weight is ours.transformer.wte.weight  # still tied after loading
    idx, tgt = RNG.integers(0, 17, (3, 12)), RNG.integers(0, 17, (3, 12))
    tgt[0, :4] = -1  # ignored, as nanoGPT's ignore_index=-1
    want_logits, want_loss = theirs(torch.tensor(idx), torch.tensor(tgt))
    got_logits, got_loss = ours(lucid.Tensor(idx), lucid.Tensor(tgt))
    np.testing.assert_allclose(got_logits.numpy(), want_logits.detach().numpy(), rtol=1e-4,
                               atol=1e-5)
    assert got_loss.item() == pytest.approx(want_loss.item(), rel=1e-5)
    want_loss.backward()
    got_loss.backward()
    assert_grads_match_torch(ours, theirs)

"""Transformer layers against a NumPy float64 reference of PyTorch's formulas, positional
encodings, masks, gradients, and PyTorch state dicts (when PyTorch is installed)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import lucid
import lucid.nn as nn
from lucid.autograd import gradcheck
from tests.parity import assert_gpu_matches_cpu

RNG = np.random.default_rng(0)


def _np_mha(x, sd, prefix, heads, mask=None):
    """PyTorch's MultiheadAttention, (L, N, E) in, float64."""
    e = x.shape[-1]
    w, b = sd[prefix + "in_proj_weight"], sd[prefix + "in_proj_bias"]
    q, k, v = (x @ w[i * e:(i + 1) * e].T + b[i * e:(i + 1) * e] for i in range(3))
    d = e // heads
    outs = []
    for n in range(x.shape[1]):
        head_out = []
        for h in range(heads):
            qs, ks, vs = (m[:, n, h * d:(h + 1) * d] for m in (q, k, v))
            s = qs @ ks.T / math.sqrt(d) + (0 if mask is None else mask)
            p = np.exp(s - s.max(-1, keepdims=True))
            p /= p.sum(-1, keepdims=True)
            head_out.append(p @ vs)
        outs.append(np.concatenate(head_out, -1))
    o = np.stack(outs, 1)
    return o @ sd[prefix + "out_proj.weight"].T + sd[prefix + "out_proj.bias"]


def _np_ln(x, w, b, eps=1e-5):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def test_encoder_layer_matches_numpy_post_and_pre_norm():
    lucid.random.seed(0)
    for norm_first in (False, True):
        layer = nn.TransformerEncoderLayer(8, 2, dim_feedforward=16, dropout=0.0,
                                           norm_first=norm_first, dtype=lucid.Float64).eval()
        sd = {k: np.asarray(v, dtype=np.float64) for k, v in layer.state_dict().items()}
        x = RNG.standard_normal((5, 2, 8))
        mask = np.triu(np.full((5, 5), -np.inf), 1)

        def ff(h, sd=sd):
            return np.maximum(h @ sd["linear1.weight"].T + sd["linear1.bias"], 0) @ \
                sd["linear2.weight"].T + sd["linear2.bias"]

        def ln(h, k, sd=sd):
            return _np_ln(h, sd[f"norm{k}.weight"], sd[f"norm{k}.bias"])

        if norm_first:
            h = x + _np_mha(ln(x, 1), sd, "self_attn.", 2, mask)
            want = h + ff(ln(h, 2))
        else:
            h = ln(x + _np_mha(x, sd, "self_attn.", 2, mask), 1)
            want = ln(h + ff(h), 2)
        got = layer(lucid.Tensor(x), src_mask=nn.Transformer.generate_square_subsequent_mask(
            5, dtype=lucid.Float64))
        np.testing.assert_allclose(got.numpy(), want, rtol=1e-10, atol=1e-12)
        assert layer.attn_weights.shape == (2, 5, 5)  # kept for plotting: (N, L, S)
        np.testing.assert_allclose(np.triu(layer.attn_weights.numpy()[0], 1), 0)


def test_names_are_pytorchs():
    layer = nn.TransformerDecoderLayer(8, 2, dim_feedforward=16)
    assert [n for n, _ in layer.named_parameters()] == [
        "self_attn.in_proj_weight", "self_attn.in_proj_bias", "self_attn.out_proj.weight",
        "self_attn.out_proj.bias", "multihead_attn.in_proj_weight",
        "multihead_attn.in_proj_bias", "multihead_attn.out_proj.weight",
        "multihead_attn.out_proj.bias", "linear1.weight", "linear1.bias", "linear2.weight",
        "linear2.bias", "norm1.weight", "norm1.bias", "norm2.weight", "norm2.bias",
        "norm3.weight", "norm3.bias"]
    model = nn.Transformer(8, 2, 2, 1, 16)
    names = [n for n, _ in model.named_parameters()]
    assert names[0] == "encoder.layers.0.self_attn.in_proj_weight"
    assert "encoder.norm.weight" in names and "decoder.layers.0.norm3.bias" in names
    assert len(names) == 2 * 12 + 2 + 18 + 2


def test_masks_and_positional_encodings():
    m = nn.Transformer.generate_square_subsequent_mask(3).numpy()
    np.testing.assert_array_equal(m, [[0, -np.inf, -np.inf], [0, 0, -np.inf], [0, 0, 0]])
    pe = nn.PositionalEncoding(6, max_len=10, dtype=lucid.Float64)
    pos, i = np.arange(10)[:, None], np.arange(0, 6, 2)
    want = np.zeros((10, 6))
    want[:, 0::2] = np.sin(pos / 10000 ** (i / 6))
    want[:, 1::2] = np.cos(pos / 10000 ** (i / 6))
    np.testing.assert_allclose(pe.pe.numpy(), want, rtol=1e-12, atol=1e-15)
    x = RNG.standard_normal((4, 2, 6))
    np.testing.assert_allclose(pe(lucid.Tensor(x)).numpy(), x + want[:4, None], rtol=1e-12)
    batch_first = nn.PositionalEncoding(6, batch_first=True, dtype=lucid.Float64)
    np.testing.assert_allclose(batch_first(lucid.Tensor(x)).numpy(), x + want[None, :2],
                               rtol=1e-12)
    learned = nn.LearnedPositionalEncoding(10, 6)
    assert [n for n, _ in learned.named_parameters()] == ["embedding.weight"]
    assert learned(lucid.zeros(4, 2, 6)).shape == (4, 2, 6)
    with pytest.raises(ValueError, match="longer than max_len=10"):
        pe(lucid.zeros(11, 6))


def test_gradients_by_finite_differences():
    lucid.random.seed(1)
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=6, dropout=0.0,
                                       dtype=lucid.Float64)
    assert gradcheck(lambda t: layer(t), lucid.Tensor(RNG.standard_normal((3, 2, 4)),
                                                     requires_grad=True))


def test_a_tiny_transformer_learns_to_copy():
    lucid.random.seed(2)
    vocab, d = 6, 16
    emb = nn.Embedding(vocab, d)
    model = nn.Transformer(d, 2, 1, 1, 32, dropout=0.0, batch_first=True)
    head = nn.Linear(d, vocab)
    params = [*emb.parameters(), *model.parameters(), *head.parameters()]
    opt = lucid.optim.Adam(params, lr=1e-2)
    seqs = np.array([[1, 2, 3, 4], [2, 3, 4, 5], [5, 4, 3, 2], [3, 1, 4, 1]])
    src = lucid.Tensor(seqs)
    mask = nn.Transformer.generate_square_subsequent_mask(4)
    for _ in range(60):
        opt.zero_grad()
        logits = head(model(emb(src), emb(src), tgt_mask=mask))
        loss = nn.functional.cross_entropy(logits.reshape(-1, vocab), src.reshape(-1))
        loss.backward()
        opt.step()
    assert loss.item() < 0.2


def test_errors():
    with pytest.raises(ValueError, match="TransformerEncoderLayer: activation must be 'relu', "
                                         "'gelu' or a function"):
        nn.TransformerEncoderLayer(8, 2, activation="swish")


def test_pytorch_state_dicts_load_and_outputs_match():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.Transformer(8, 2, 2, 2, 16, 0.0).eval()
    ours = nn.Transformer(8, 2, 2, 2, 16, 0.0).eval()
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: lucid.Tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    src = RNG.standard_normal((6, 2, 8)).astype(np.float32)
    tgt = RNG.standard_normal((4, 2, 8)).astype(np.float32)
    pad = np.array([[False] * 5 + [True], [False] * 6])
    got = ours(lucid.Tensor(src), lucid.Tensor(tgt),
               tgt_mask=nn.Transformer.generate_square_subsequent_mask(4),
               src_key_padding_mask=lucid.Tensor(pad), memory_key_padding_mask=lucid.Tensor(pad))
    want = theirs(torch.tensor(src), torch.tensor(tgt),
                  tgt_mask=torch.nn.Transformer.generate_square_subsequent_mask(4),
                  src_key_padding_mask=torch.tensor(pad),
                  memory_key_padding_mask=torch.tensor(pad))
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)


def test_attention_is_counted():
    """MACs of multi-head attention: the q/k/v projections (3·E² per token), the scores
    Q·Kᵀ and the weighted sum A·V (L·S·E each), the output projection (E² per token); FLOPs at
    least the softmax over every score."""
    lucid.random.seed(0)
    batch, length, embed, heads = 3, 5, 8, 2
    attn = nn.MultiHeadAttention(embed, heads, batch_first=True)
    x = lucid.randn(batch, length, embed)
    with lucid.count_flops():
        out, _ = attn(x, x, x)
    tokens = batch * length
    assert out.cost.macs == (tokens * 3 * embed * embed + 2 * batch * length * length * embed
                             + tokens * embed * embed)
    assert out.cost.flops >= batch * heads * length * length * 3  # exp, sum, divide


@pytest.mark.parametrize("norm_first", [False, True])
def test_gpu_matches_cpu_forward_and_backward(norm_first):
    pytest.importorskip("mlx.core")
    lucid.random.seed(2)
    model = nn.Transformer(d_model=8, nhead=2, num_encoder_layers=2, num_decoder_layers=1,
                           dim_feedforward=16, dropout=0.0, norm_first=norm_first)
    src = RNG.standard_normal((5, 2, 8)).astype(np.float32)
    tgt = RNG.standard_normal((4, 2, 8)).astype(np.float32)
    padding = np.array([[False] * 5, [False] * 3 + [True] * 2])
    assert_gpu_matches_cpu(
        model, lambda device: model(
            lucid.Tensor(src, device=device), lucid.Tensor(tgt, device=device),
            tgt_mask=nn.Transformer.generate_square_subsequent_mask(4, device=device),
            src_key_padding_mask=lucid.Tensor(padding, device=device)),
        grad_atol=1e-4)

"""The Vision Transformer: torchvision's names and parameter count (ViT-B/16), init, summarize,
outputs and gradients equal to torchvision's layout re-created in PyTorch, training, devices."""

from __future__ import annotations

import math
from collections import OrderedDict

import numpy as np
import pytest

import lucid
import lucid.nn.functional as F
from lucid.models import VisionTransformer, summarize, vit_b_16, vit_tiny

RNG = np.random.default_rng(0)

BLOCK_KEYS = ["ln_1.weight", "ln_1.bias", "self_attention.in_proj_weight",
              "self_attention.in_proj_bias", "self_attention.out_proj.weight",
              "self_attention.out_proj.bias", "ln_2.weight", "ln_2.bias", "mlp.0.weight",
              "mlp.0.bias", "mlp.3.weight", "mlp.3.bias"]


def _torchvision_keys(num_layers):
    """The state-dict keys of torchvision's VisionTransformer, in its order."""
    keys = ["class_token", "conv_proj.weight", "conv_proj.bias", "encoder.pos_embedding"]
    for i in range(num_layers):
        keys += [f"encoder.layers.encoder_layer_{i}.{k}" for k in BLOCK_KEYS]
    return keys + ["encoder.ln.weight", "encoder.ln.bias", "heads.head.weight",
                   "heads.head.bias"]


def test_vit_b_16_has_torchvisions_count_and_names():
    lucid.random.seed(0)
    model = vit_b_16()
    assert sum(p.size for p in model.parameters()) == 86_567_656  # torchvision's vit_b_16
    assert list(model.state_dict()) == _torchvision_keys(12)
    assert model.conv_proj.weight.shape == (768, 3, 16, 16)
    assert model.encoder.pos_embedding.shape == (1, 197, 768)  # 14·14 patches + the class token
    assert model.heads.head.weight.shape == (1000, 768)


def test_init_is_torchvisions():
    lucid.random.seed(1)
    model = vit_tiny(image_size=32, patch_size=4)
    conv = model.conv_proj.weight.numpy()
    assert abs(conv.std() - math.sqrt(1 / (3 * 4 * 4))) < 0.01  # N(0, 1/fan_in), cut at ±2
    assert np.abs(conv).max() <= 2.0
    assert float(np.abs(model.conv_proj.bias.numpy()).max()) == 0.0
    assert float(np.abs(model.class_token.numpy()).max()) == 0.0
    assert abs(model.encoder.pos_embedding.numpy().std() - 0.02) < 0.002
    mlp = model.encoder.layers.encoder_layer_0.mlp
    bound = math.sqrt(6 / (64 + 128))  # Xavier-uniform
    w = mlp[0].weight.numpy()
    assert w.max() <= bound and w.min() >= -bound and abs(w.std() - bound / math.sqrt(3)) < 0.01
    assert 0 < mlp[0].bias.numpy().std() < 1e-5  # N(0, 1e-6²)
    for p in (model.heads.head.weight, model.heads.head.bias):
        assert float(np.abs(p.numpy()).max()) == 0.0  # a fresh model predicts uniformly
    out = model(lucid.random.randn(2, 3, 32, 32, dtype=lucid.Float32))
    np.testing.assert_array_equal(out.numpy(), np.zeros((2, 10)))


def test_truncation_redraws_samples_outside_the_cut():
    # fan_in 1 (one channel, 1x1 patches): std 1, so about 4.6% of draws fall outside ±2
    lucid.random.seed(2)
    model = VisionTransformer(4, 1, 1, 2, 512, 16, in_channels=1)
    w = model.conv_proj.weight.numpy()
    assert np.abs(w).max() <= 2.0  # untruncated, about 23 of these 512 would lie outside
    assert abs(w.std() - 0.88) < 0.06  # a unit normal cut at ±2 has std 0.88


def test_summarize_tiny_vit_for_mnist():
    lucid.random.seed(0)
    model = vit_tiny(image_size=28, patch_size=7, in_channels=1)
    s = summarize(model, (1, 1, 28, 28), print_summary=False)
    d, mlp, tokens = 64, 128, 17  # 4x4 patches of 7x7 pixels + the class token
    per_block = 2 * 2 * d + (3 * d * d + 3 * d) + (d * d + d) + (d * mlp + mlp) + (mlp * d + d)
    want = (d * 49 + d) + d + tokens * d + 4 * per_block + 2 * d + (d * 10 + 10)
    assert s.total_params == want == sum(p.size for p in model.parameters())
    assert (s.rows[0].name, s.rows[0].output_shape) == ("conv_proj", (1, d, 4, 4))
    assert (s.rows[-1].name, s.rows[-1].output_shape) == ("heads.head", (1, 10))
    assert s.rows[0].macs == d * 16 * 49  # one dot product of 49 pixels per patch and feature


def test_attention_weights_are_kept_for_plotting():
    lucid.random.seed(0)
    model = vit_tiny(image_size=16, patch_size=4)
    model(lucid.random.randn(2, 3, 16, 16, dtype=lucid.Float32))
    w = model.encoder.layers.encoder_layer_3.attn_weights
    assert w.shape == (2, 17, 17) and not w.requires_grad
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0, rtol=1e-5)


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match=r"image_size \(30\) must be divisible by "
                                         r"patch_size \(4\)"):
        vit_tiny(image_size=30)
    model = vit_tiny(image_size=28, patch_size=7, in_channels=1)
    with pytest.raises(ValueError, match=r"input of shape \(2,1,32,32\): expected \(N, 1, 28, "
                                         r"28\)"):
        model(lucid.zeros(2, 1, 32, 32))


def test_training_lowers_the_loss():
    lucid.random.seed(3)
    model = vit_tiny(num_classes=2, image_size=8, patch_size=4, in_channels=1)
    x = RNG.standard_normal((16, 1, 8, 8)).astype(np.float32)
    y = (x[:, 0, :4].mean((1, 2)) > x[:, 0, 4:].mean((1, 2))).astype(np.int64)  # top brighter?
    xt, yt = lucid.Tensor(x), lucid.Tensor(y)
    opt = lucid.optim.Adam(model.parameters(), lr=3e-3)
    losses = []
    for _ in range(15):
        opt.zero_grad()
        loss = F.cross_entropy(model(xt), yt)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    assert losses[0] == pytest.approx(math.log(2), rel=1e-6)  # the zero head: uniform
    assert losses[-1] < 0.5 * losses[0]


def test_gpu_matches_cpu():
    pytest.importorskip("mlx.core")
    lucid.random.seed(4)
    model = vit_tiny(image_size=8, patch_size=4, in_channels=1)
    for p in model.heads.parameters():
        lucid.nn.init.normal_(p, 0.0, 0.5)  # a non-zero head, so the outputs say something
    x = RNG.standard_normal((2, 1, 8, 8)).astype(np.float32)
    cpu = model(lucid.Tensor(x)).numpy()
    model.to("gpu")
    gpu = model(lucid.Tensor(x, device="gpu"))
    assert gpu.device == "gpu"
    np.testing.assert_allclose(gpu.numpy(), cpu, rtol=1e-4, atol=1e-5)


def _torch_vit(torch, image_size, patch_size, num_layers, num_heads, hidden_dim, mlp_dim,
               num_classes, in_channels):
    """torchvision's VisionTransformer layout (torchvision itself is not needed) re-created with
    torch.nn modules."""
    nn = torch.nn

    class EncoderBlock(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(hidden_dim, eps=1e-6)
            self.self_attention = nn.MultiheadAttention(hidden_dim, num_heads, batch_first=True)
            self.dropout = nn.Dropout(0.0)
            self.ln_2 = nn.LayerNorm(hidden_dim, eps=1e-6)
            self.mlp = nn.Sequential(nn.Linear(hidden_dim, mlp_dim), nn.GELU(), nn.Dropout(0.0),
                                     nn.Linear(mlp_dim, hidden_dim), nn.Dropout(0.0))

        def forward(self, inp):
            x = self.ln_1(inp)
            x, _ = self.self_attention(x, x, x, need_weights=False)
            x = self.dropout(x) + inp
            return x + self.mlp(self.ln_2(x))

    class Encoder(nn.Module):
        def __init__(self, seq_length):
            super().__init__()
            self.pos_embedding = nn.Parameter(torch.empty(1, seq_length, hidden_dim))
            self.dropout = nn.Dropout(0.0)
            self.layers = nn.Sequential(OrderedDict(
                (f"encoder_layer_{i}", EncoderBlock()) for i in range(num_layers)))
            self.ln = nn.LayerNorm(hidden_dim, eps=1e-6)

        def forward(self, x):
            return self.ln(self.layers(self.dropout(x + self.pos_embedding)))

    class ViT(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv_proj = nn.Conv2d(in_channels, hidden_dim, patch_size, patch_size)
            self.class_token = nn.Parameter(torch.zeros(1, 1, hidden_dim))
            self.encoder = Encoder((image_size // patch_size) ** 2 + 1)
            self.heads = nn.Sequential(OrderedDict(head=nn.Linear(hidden_dim, num_classes)))

        def forward(self, x):
            x = self.conv_proj(x)
            x = x.reshape(x.shape[0], hidden_dim, -1).permute(0, 2, 1)
            x = torch.cat([self.class_token.expand(x.shape[0], -1, -1), x], dim=1)
            return self.heads(self.encoder(x)[:, 0])

    return ViT()


def test_outputs_and_gradients_match_torchvisions_layout_in_pytorch():
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = _torch_vit(torch, 16, 4, 2, 4, 32, 48, 5, 3)
    with torch.no_grad():
        for p in theirs.parameters():
            p.copy_(0.2 * torch.randn_like(p))  # every weight non-zero, the head included
    ours = VisionTransformer(16, 4, 2, 4, 32, 48, num_classes=5)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    ours.load_state_dict({k: lucid.Tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    x = RNG.standard_normal((3, 3, 16, 16)).astype(np.float32)
    xt = torch.tensor(x)
    want = theirs(xt)
    got = ours(lucid.Tensor(x))
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-4, atol=1e-5)
    (want ** 2).sum().backward()
    (got ** 2).sum().backward()
    for name in ("class_token", "conv_proj.weight", "encoder.pos_embedding",
                 "encoder.layers.encoder_layer_0.self_attention.in_proj_weight",
                 "encoder.layers.encoder_layer_1.mlp.0.weight", "heads.head.bias"):
        mine = np.asarray(dict(ours.named_parameters())[name].grad)
        ref = dict(theirs.named_parameters())[name].grad.numpy()
        np.testing.assert_allclose(mine, ref, rtol=1e-3, atol=1e-4 * np.abs(ref).max())

"""B7: a character-level GPT (2 layers, d_model 64, 4 heads, block 64, batch 32) trains 300
Adam steps (lr 3e-3) on the shipped tiny-Shakespeare text: the wall time, the first and final
losses, and the unigram-entropy baseline (the loss of the best model that ignores the context:
the entropy of the character frequencies, in nats).  The final loss must fall well below it.

PyTorch beside it (when importable): the same network in nanoGPT's layout, started from
Lucid's initial weights, fed the same batches, with its own Adam and its default threads (as
many as NumPy's BLAS uses here); the first losses must agree before anything is timed.
``python -m benchmarks.b7_gpt`` runs it alone.
"""

from __future__ import annotations

import math
import time

import numpy as np

import lucid
from benchmarks.common import Row, optional, print_table
from lucid.data.datasets import CharDataset, tiny_shakespeare
from lucid.models.text import GPT

STEPS, BATCH, BLOCK = 300, 32, 64
N_LAYER, N_HEAD, D_MODEL = 2, 4, 64
LR = 3e-3


def unigram_entropy(ids: np.ndarray, vocab_size: int) -> float:
    """H = -sum_c p_c ln p_c over the characters' frequencies p_c, in nats."""
    p = np.bincount(ids, minlength=vocab_size) / ids.size
    p = p[p > 0]
    return float(-(p * np.log(p)).sum())


def batches(ids: np.ndarray, steps: int, batch: int, block: int) -> list[tuple[np.ndarray, ...]]:
    """``steps`` (x, y) pairs of (batch, block) windows at random offsets; y is x shifted by one
    character.  Drawn with ``lucid.random``, so ``lucid.random.seed`` fixes them."""
    starts = lucid.random.randint(0, ids.size - block - 1, size=(steps, batch)).numpy()
    window = np.arange(block)
    return [(ids[s[:, None] + window], ids[s[:, None] + window + 1]) for s in starts]


def torch_gpt(torch, vocab_size: int, block_size: int, n_layer: int, n_head: int,
              d_model: int, tie_weights: bool = True):
    """nanoGPT's GPT re-created with ``torch.nn`` modules (same names, biases on), forward
    ``(idx, targets) -> (logits for every position, loss)`` as :class:`lucid.models.text.GPT`."""
    nn, F = torch.nn, torch.nn.functional

    class CausalSelfAttention(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(d_model, 3 * d_model)
            self.c_proj = nn.Linear(d_model, d_model)

        def forward(self, x):
            b, t, d = x.shape
            q, k, v = (z.view(b, t, n_head, d // n_head).transpose(1, 2)
                       for z in self.c_attn(x).split(d, dim=2))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).reshape(b, t, d))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(d_model, 4 * d_model)
            self.gelu = nn.GELU()
            self.c_proj = nn.Linear(4 * d_model, d_model)

        def forward(self, x):
            return self.c_proj(self.gelu(self.c_fc(x)))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.attn = nn.LayerNorm(d_model), CausalSelfAttention()
            self.ln_2, self.mlp = nn.LayerNorm(d_model), MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class TorchGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(vocab_size, d_model), wpe=nn.Embedding(block_size, d_model),
                drop=nn.Dropout(0.0), h=nn.ModuleList(Block() for _ in range(n_layer)),
                ln_f=nn.LayerNorm(d_model)))
            self.lm_head = nn.Linear(d_model, vocab_size, bias=False)
            if tie_weights:
                self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx, targets=None):
            tr = self.transformer
            x = tr.drop(tr.wte(idx) + tr.wpe(torch.arange(idx.shape[1])))
            for block in tr.h:
                x = block(x)
            logits = self.lm_head(tr.ln_f(x))
            if targets is None:
                return logits, None
            loss = F.cross_entropy(logits.reshape(-1, vocab_size), targets.reshape(-1),
                                   ignore_index=-1)
            return logits, loss

    return TorchGPT()


def _train(model, adam, tensor, data) -> tuple[float, list[float]]:
    """(seconds, losses) of one Adam step per batch in ``data``."""
    opt = adam(model.parameters(), lr=LR)
    losses = []
    start = time.perf_counter()
    for x, y in data:
        opt.zero_grad()
        _, loss = model(tensor(x), tensor(y))
        loss.backward()
        opt.step()
        losses.append(float(loss.item()))
    return time.perf_counter() - start, losses


def run(quick: bool = False) -> list[Row]:
    chars = CharDataset(tiny_shakespeare(), BLOCK)
    ids, vocab = chars.ids, chars.vocab_size
    lucid.random.seed(0)
    model = GPT(vocab, BLOCK, N_LAYER, N_HEAD, D_MODEL)
    data = batches(ids, STEPS, BATCH, BLOCK)
    torch = optional("torch")
    results: dict[str, tuple[float, list[float]]] = {}
    if torch is not None:
        net = torch_gpt(torch, vocab, BLOCK, N_LAYER, N_HEAD, D_MODEL)
        net.load_state_dict({k: torch.from_numpy(v) for k, v in model.state_dict().items()})
        with torch.no_grad():
            first_torch = net(torch.from_numpy(data[0][0]), torch.from_numpy(data[0][1]))[1]
        first_lucid = model(lucid.Tensor(data[0][0]), lucid.Tensor(data[0][1]))[1].item()
        if not np.isclose(first_lucid, first_torch.item(), rtol=1e-4):
            raise AssertionError(f"B7: first losses differ: lucid {first_lucid}, torch "
                                 f"{first_torch.item()}")
        results["torch"] = _train(net, torch.optim.Adam, torch.from_numpy, data)
    results["lucid"] = _train(model, lucid.optim.Adam, lucid.Tensor, data)
    baseline = unigram_entropy(ids, vocab)
    if not np.mean(results["lucid"][1][-10:]) < baseline - 0.3:
        raise AssertionError(f"B7: the final loss {results['lucid'][1][-1]:.3f} is not well "
                             f"below the unigram baseline {baseline:.3f}")

    def row(label, unit, pick, target=""):
        return Row(label, unit, {k: pick(*v) for k, v in results.items()}, target)

    name = (f"B7 char-GPT, {STEPS} Adam steps (L{N_LAYER} d{D_MODEL} h{N_HEAD} block {BLOCK} "
            f"b{BATCH}, {sum(p.size for p in model.parameters()):,} params)")
    return [
        row(name, "s", lambda t, _: t, "lucid < 60 s"),
        row(f"  first loss (ln vocab = {math.log(vocab):.3f})", "nats",
            lambda _, ls: ls[0], "equal"),
        row("  final loss (mean of the last 10 steps)", "nats",
            lambda _, ls: float(np.mean(ls[-10:])), f"well below {baseline:.3f}"),
        Row("  unigram-entropy baseline", "nats", {"lucid": baseline}, "-"),
    ]


if __name__ == "__main__":
    print_table(run(), ["lucid", "torch"])

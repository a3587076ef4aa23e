"""Character-level name models trained endlessly (in the style of karpathy/makemore): a
dataset that pads words and masks the loss with target -1, an "infinite" loader over
RandomSampler(replacement=True, num_samples=int(1e10)), a bigram table and an MLP over the
previous characters (torch.roll), AdamW, a SummaryWriter, and sampling with top-k and
torch.multinomial.  Random words stand in for names.txt."""

import random
import tempfile

import torch
import torch.nn as nn
from torch.nn import functional as F
from torch.utils.data import DataLoader, Dataset
from torch.utils.tensorboard import SummaryWriter


class CharDataset(Dataset):
    def __init__(self, words, chars, max_word_length):
        self.words = words
        self.max_word_length = max_word_length
        self.stoi = {ch: i + 1 for i, ch in enumerate(chars)}
        self.itos = {i: s for s, i in self.stoi.items()}
        self.vocab_size = len(chars) + 1  # 0 is both <START> and <STOP>

    def __len__(self):
        return len(self.words)

    def decode(self, ix):
        return "".join(self.itos[i] for i in ix)

    def __getitem__(self, idx):
        ix = torch.tensor([self.stoi[w] for w in self.words[idx]], dtype=torch.long)
        x = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        y = torch.zeros(self.max_word_length + 1, dtype=torch.long)
        x[1:1 + len(ix)] = ix
        y[:len(ix)] = ix
        y[len(ix) + 1:] = -1  # index -1 masks the loss at the inactive positions
        return x, y


class InfiniteDataLoader:
    def __init__(self, dataset, **kwargs):
        sampler = torch.utils.data.RandomSampler(dataset, replacement=True,
                                                 num_samples=int(1e10))
        self.data_iter = iter(DataLoader(dataset, sampler=sampler, **kwargs))

    def next(self):
        return next(self.data_iter)


class Bigram(nn.Module):
    def __init__(self, n):
        super().__init__()
        self.logits = nn.Parameter(torch.zeros((n, n)))

    def forward(self, idx, targets=None):
        logits = self.logits[idx]
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        return logits, loss


class MLP(nn.Module):
    def __init__(self, vocab_size, block_size, n_embd=8, n_embd2=16):
        super().__init__()
        self.block_size, self.vocab_size = block_size, vocab_size
        self.wte = nn.Embedding(vocab_size + 1, n_embd)  # one more: the <BLANK> token
        self.mlp = nn.Sequential(nn.Linear(block_size * n_embd, n_embd2), nn.Tanh(),
                                 nn.Linear(n_embd2, vocab_size))

    def forward(self, idx, targets=None):
        embs = []
        for k in range(self.block_size):
            embs.append(self.wte(idx))
            idx = torch.roll(idx, 1, 1)
            idx[:, 0] = self.vocab_size  # the <BLANK> token
        logits = self.mlp(torch.cat(embs, -1))
        loss = None
        if targets is not None:
            loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1),
                                   ignore_index=-1)
        return logits, loss


@torch.no_grad()
def generate(model, idx, max_new_tokens, top_k=None):
    for _ in range(max_new_tokens):
        logits, _ = model(idx)
        logits = logits[:, -1, :]
        if top_k is not None:
            v, _ = torch.topk(logits, top_k)
            logits[logits < v[:, [-1]]] = -float("Inf")
        probs = F.softmax(logits, dim=-1)
        idx_next = torch.multinomial(probs, num_samples=1)
        idx = torch.cat((idx, idx_next), dim=1)
    return idx


WORDS = ["".join(random.Random(i).choice("abcdef") for _ in range(2 + i % 4)) for i in range(24)]
CHARS = sorted(set("".join(WORDS)))
MAX_LEN = max(len(w) for w in WORDS)


def build():
    torch.manual_seed(3407)
    n = len(CHARS) + 1
    return nn.ModuleDict({"bigram": Bigram(n), "mlp": MLP(n, MAX_LEN + 1)})


def make_data():
    dataset = CharDataset(WORDS, CHARS, MAX_LEN)
    xs, ys = zip(*[dataset[i] for i in range(16)])
    return torch.stack(xs), torch.stack(ys)


@torch.inference_mode()
def evaluate(model, dataset, batch_size=8):
    model.eval()
    losses = [model(X, Y)[1].item() for X, Y in DataLoader(dataset, batch_size=batch_size)]
    model.train()
    return torch.tensor(losses).mean().item()


def run(models, data):
    X, Y = data
    dataset = CharDataset(WORDS, CHARS, MAX_LEN)
    writer = SummaryWriter(log_dir=tempfile.mkdtemp(prefix="makemore-"))
    out = {}
    for kind, model in models.items():
        optimizer = torch.optim.AdamW(model.parameters(), lr=5e-2, weight_decay=0.01,
                                      betas=(0.9, 0.99), eps=1e-8)
        loader = InfiniteDataLoader(dataset, batch_size=4)
        assert loader.next()[0].shape == (4, MAX_LEN + 1)
        losses = []
        for step in range(4):  # fixed batches, so that PyTorch sees the same ones
            logits, loss = model(X[4 * step:4 * step + 4], Y[4 * step:4 * step + 4])
            model.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            writer.add_scalar(f"{kind}/train", loss.item(), step)
        out[kind] = losses + [evaluate(model, dataset)]
        samples = generate(model, torch.zeros(3, 1, dtype=torch.long), MAX_LEN, top_k=3)
        out[f"{kind}_samples"] = samples.shape[1]
    writer.close()
    return out


if __name__ == "__main__":
    run(build(), make_data())

"""A character-level language model: embedding, LSTM, linear head; trained on a short text,
then sampled one character at a time (after the classic char-RNN examples)."""

import torch
import torch.nn as nn
import torch.nn.functional as F

text = "to be, or not to be, that is the question: whether tis nobler in the mind to suffer"
chars = sorted(set(text))
stoi = {ch: i for i, ch in enumerate(chars)}
itos = {i: ch for ch, i in stoi.items()}
vocab_size = len(chars)


def encode(s):
    return [stoi[c] for c in s]


def decode(ids):
    return "".join(itos[i] for i in ids)


class CharLSTM(nn.Module):
    def __init__(self, vocab_size, embed_dim=8, hidden_size=16, num_layers=1):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, embed_dim)
        self.lstm = nn.LSTM(embed_dim, hidden_size, num_layers=num_layers, batch_first=True)
        self.head = nn.Linear(hidden_size, vocab_size)

    def forward(self, idx, hidden=None):
        x = self.embed(idx)                 # (B, T, E)
        out, hidden = self.lstm(x, hidden)  # (B, T, H)
        return self.head(out), hidden       # (B, T, V)


def build():
    torch.manual_seed(0)
    return CharLSTM(vocab_size)


def make_data(seq_len=12, batch_size=4, steps=3):
    data = torch.tensor(encode(text), dtype=torch.long)
    torch.manual_seed(1)
    batches = []
    for _ in range(steps):
        ix = torch.randint(len(data) - seq_len - 1, (batch_size,))
        x = torch.stack([data[i:i + seq_len] for i in ix])
        y = torch.stack([data[i + 1:i + seq_len + 1] for i in ix])
        batches.append((x, y))
    return batches


@torch.no_grad()
def sample(model, start, length=20, temperature=1.0):
    model.eval()
    idx = torch.tensor([encode(start)], dtype=torch.long)
    logits, hidden = model(idx)
    out = list(encode(start))
    for _ in range(length):
        probs = F.softmax(logits[:, -1, :] / temperature, dim=-1)
        next_id = torch.multinomial(probs, num_samples=1)
        out.append(next_id.item())
        logits, hidden = model(next_id, hidden)
    model.train()
    return decode(out)


def run(model, batches):
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-2)
    losses = []
    for step, (x, y) in enumerate(batches):
        logits, _ = model(x)
        B, T, C = logits.shape
        loss = F.cross_entropy(logits.view(B * T, C), y.view(B * T))
        optimizer.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        losses.append(loss.item())
        print(f"step {step}: loss {loss.item():.4f}")
    text_out = sample(model, "to be", length=15)
    print(text_out)
    return {"losses": losses, "sample": text_out}


if __name__ == "__main__":
    run(build(), make_data())

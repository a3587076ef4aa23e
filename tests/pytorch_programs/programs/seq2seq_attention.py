"""A GRU encoder and an attention decoder translating token sequences (in the style of
PyTorch's "NLP From Scratch: Translation with a Sequence to Sequence Network and Attention"):
additive (Bahdanau) attention through torch.bmm, teacher forcing, greedy decoding with
topk and detach, pairs padded into int32 NumPy arrays and loaded through LongTensor,
TensorDataset and RandomSampler.  Random token pairs stand in for eng-fra.txt."""

import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch import optim
from torch.utils.data import DataLoader, RandomSampler, TensorDataset

SOS_token, EOS_token, MAX_LENGTH = 0, 1, 6
device = torch.device("cuda" if torch.cuda.is_available() else "cpu")


class Encoder(nn.Module):
    def __init__(self, vocab, hidden, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.gru = nn.GRU(hidden, hidden, batch_first=True)
        self.dropout = nn.Dropout(dropout_p)

    def forward(self, tokens):
        return self.gru(self.dropout(self.embedding(tokens)))


class AdditiveAttention(nn.Module):
    def __init__(self, hidden):
        super().__init__()
        self.Wa = nn.Linear(hidden, hidden)
        self.Ua = nn.Linear(hidden, hidden)
        self.Va = nn.Linear(hidden, 1)

    def forward(self, query, keys):
        scores = self.Va(torch.tanh(self.Wa(query) + self.Ua(keys))).squeeze(2).unsqueeze(1)
        weights = F.softmax(scores, dim=-1)
        return torch.bmm(weights, keys), weights


class Decoder(nn.Module):
    def __init__(self, hidden, vocab, dropout_p=0.1):
        super().__init__()
        self.embedding = nn.Embedding(vocab, hidden)
        self.attention = AdditiveAttention(hidden)
        self.gru = nn.GRU(2 * hidden, hidden, batch_first=True)
        self.out = nn.Linear(hidden, vocab)
        self.dropout = nn.Dropout(dropout_p)

    def step(self, token, hidden, encoder_outputs):
        embedded = self.dropout(self.embedding(token))
        context, weights = self.attention(hidden.permute(1, 0, 2), encoder_outputs)
        output, hidden = self.gru(torch.cat((embedded, context), dim=2), hidden)
        return self.out(output), hidden, weights

    def forward(self, encoder_outputs, encoder_hidden, target=None):
        batch = encoder_outputs.size(0)
        token = torch.empty(batch, 1, dtype=torch.long, device=device).fill_(SOS_token)
        hidden, outputs, attentions = encoder_hidden, [], []
        for i in range(MAX_LENGTH):
            output, hidden, weights = self.step(token, hidden, encoder_outputs)
            outputs.append(output)
            attentions.append(weights)
            if target is not None:
                token = target[:, i].unsqueeze(1)  # teacher forcing
            else:
                _, topi = output.topk(1)
                token = topi.squeeze(-1).detach()
        return (F.log_softmax(torch.cat(outputs, dim=1), dim=-1), hidden,
                torch.cat(attentions, dim=1))


def loader_for(pairs, batch_size):
    inputs = np.zeros((len(pairs), MAX_LENGTH), dtype=np.int32)
    targets = np.zeros((len(pairs), MAX_LENGTH), dtype=np.int32)
    for row, (src, tgt) in enumerate(pairs):
        inputs[row, :len(src) + 1] = list(src) + [EOS_token]
        targets[row, :len(tgt) + 1] = list(tgt) + [EOS_token]
    data = TensorDataset(torch.LongTensor(inputs).to(device),
                         torch.LongTensor(targets).to(device))
    return DataLoader(data, sampler=RandomSampler(data), batch_size=batch_size)


def build():
    torch.manual_seed(0)
    return nn.ModuleDict({"encoder": Encoder(12, 16), "decoder": Decoder(16, 10)})


def make_data():
    g = random.Random(3)
    src = [[g.randint(2, 11) for _ in range(g.randint(2, 5))] for _ in range(8)]
    tgt = [[g.randint(2, 9) for _ in range(g.randint(2, 5))] for _ in range(8)]
    pad = lambda s: np.array(s + [0] * (5 - len(s)))  # noqa: E731
    return [pad(s) for s in src], [pad(t) for t in tgt]


def run(models, data, epochs=4):
    encoder, decoder = models["encoder"].to(device), models["decoder"].to(device)
    pairs = [([int(v) for v in s if v], [int(v) for v in t if v]) for s, t in zip(*data)]
    loader = loader_for(pairs, batch_size=8)  # one batch: its order does not matter
    enc_opt = optim.Adam(encoder.parameters(), lr=0.01)
    dec_opt = optim.Adam(decoder.parameters(), lr=0.01)
    criterion = nn.NLLLoss()
    encoder.eval(), decoder.eval()  # no dropout: the losses compare with PyTorch's
    losses = []
    for epoch in range(epochs):
        total = 0
        for inputs, targets in loader:
            enc_opt.zero_grad()
            dec_opt.zero_grad()
            encoder_outputs, encoder_hidden = encoder(inputs)
            outputs, _, _ = decoder(encoder_outputs, encoder_hidden, targets)
            loss = criterion(outputs.view(-1, outputs.size(-1)), targets.view(-1))
            loss.backward()
            enc_opt.step()
            dec_opt.step()
            total += loss.item()
        losses.append(total / len(loader))
    with torch.no_grad():
        encoder_outputs, encoder_hidden = encoder(torch.LongTensor([pairs[0][0] + [EOS_token]]))
        outputs, _, attentions = decoder(encoder_outputs, encoder_hidden)
        decoded = []
        for idx in outputs.topk(1)[1].squeeze():
            if idx.item() == EOS_token:
                break
            decoded.append(idx.item())
    return {"losses": losses, "decoded": decoded, "attn_shape": list(attentions.shape)}


if __name__ == "__main__":
    run(build(), make_data())

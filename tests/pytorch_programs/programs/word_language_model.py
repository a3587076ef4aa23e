"""PyTorch's examples/word_language_model, cut down: RNNModel (embedding, a multi-layer LSTM
or GRU, a linear decoder tied to the embedding), batchify / get_batch, truncated
backpropagation through time with repackage_hidden, gradient clipping and the hand-written
update ``p.data.add_(p.grad, alpha=-lr)``.  A random token stream stands in for WikiText-2."""

import argparse
import math

import torch
import torch.nn as nn
import torch.nn.functional as F


class RNNModel(nn.Module):
    """Container module with an encoder, a recurrent module, and a decoder."""

    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers, dropout=0.5, tie_weights=False):
        super(RNNModel, self).__init__()
        self.ntoken = ntoken
        self.drop = nn.Dropout(dropout)
        self.encoder = nn.Embedding(ntoken, ninp)
        if rnn_type in ["LSTM", "GRU"]:
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
        else:
            try:
                nonlinearity = {"RNN_TANH": "tanh", "RNN_RELU": "relu"}[rnn_type]
            except KeyError as e:
                raise ValueError("An invalid option for `--model` was supplied, "
                                 "options are ['LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU']") from e
            self.rnn = nn.RNN(ninp, nhid, nlayers, nonlinearity=nonlinearity, dropout=dropout)
        self.decoder = nn.Linear(nhid, ntoken)

        # Optionally tie weights as in:
        # "Using the Output Embedding to Improve Language Models" (Press & Wolf 2016)
        if tie_weights:
            if nhid != ninp:
                raise ValueError("When using the tied flag, nhid must be equal to emsize")
            self.decoder.weight = self.encoder.weight

        self.init_weights()

        self.rnn_type = rnn_type
        self.nhid = nhid
        self.nlayers = nlayers

    def init_weights(self):
        initrange = 0.1
        nn.init.uniform_(self.encoder.weight, -initrange, initrange)
        nn.init.zeros_(self.decoder.bias)
        nn.init.uniform_(self.decoder.weight, -initrange, initrange)

    def forward(self, input, hidden):
        emb = self.drop(self.encoder(input))
        output, hidden = self.rnn(emb, hidden)
        output = self.drop(output)
        decoded = self.decoder(output)
        decoded = decoded.view(-1, self.ntoken)
        return F.log_softmax(decoded, dim=1), hidden

    def init_hidden(self, bsz):
        weight = next(self.parameters())
        if self.rnn_type == "LSTM":
            return (weight.new_zeros(self.nlayers, bsz, self.nhid),
                    weight.new_zeros(self.nlayers, bsz, self.nhid))
        else:
            return weight.new_zeros(self.nlayers, bsz, self.nhid)


parser = argparse.ArgumentParser(description="PyTorch Wikitext-2 RNN/LSTM/GRU/Transformer")
parser.add_argument("--model", type=str, default="LSTM")
parser.add_argument("--emsize", type=int, default=8)
parser.add_argument("--nhid", type=int, default=8)
parser.add_argument("--nlayers", type=int, default=2)
parser.add_argument("--lr", type=float, default=20)
parser.add_argument("--clip", type=float, default=0.25)
parser.add_argument("--epochs", type=int, default=2)
parser.add_argument("--batch_size", type=int, default=4, metavar="N")
parser.add_argument("--bptt", type=int, default=5)
parser.add_argument("--dropout", type=float, default=0.0)
parser.add_argument("--tied", action="store_true", default=True)
parser.add_argument("--seed", type=int, default=1111)
parser.add_argument("--log-interval", type=int, default=2, metavar="N")
args = parser.parse_args([])
ntokens = 20
eval_batch_size = 2


def batchify(data, bsz):
    # Work out how cleanly we can divide the dataset into bsz parts.
    nbatch = data.size(0) // bsz
    # Trim off any extra elements that wouldn't cleanly fit (remainders).
    data = data.narrow(0, 0, nbatch * bsz)
    # Evenly divide the data across the bsz batches.
    data = data.view(bsz, -1).t().contiguous()
    return data


def repackage_hidden(h):
    """Wraps hidden states in new Tensors, to detach them from their history."""

    if isinstance(h, torch.Tensor):
        return h.detach()
    else:
        return tuple(repackage_hidden(v) for v in h)


def get_batch(source, i):
    seq_len = min(args.bptt, len(source) - 1 - i)
    data = source[i:i + seq_len]
    target = source[i + 1:i + 1 + seq_len].view(-1)
    return data, target


def build():
    torch.manual_seed(args.seed)
    return RNNModel(args.model, ntokens, args.emsize, args.nhid, args.nlayers, args.dropout,
                    args.tied)


def make_data():
    torch.manual_seed(0)
    train_data = batchify(torch.randint(0, ntokens, (84,)), args.batch_size)
    val_data = batchify(torch.randint(0, ntokens, (22,)), eval_batch_size)
    return train_data, val_data


def evaluate(model, criterion, data_source):
    # Turn on evaluation mode which disables dropout.
    model.eval()
    total_loss = 0.
    hidden = model.init_hidden(eval_batch_size)
    with torch.no_grad():
        for i in range(0, data_source.size(0) - 1, args.bptt):
            data, targets = get_batch(data_source, i)
            output, hidden = model(data, hidden)
            hidden = repackage_hidden(hidden)
            total_loss += len(data) * criterion(output, targets).item()
    return total_loss / (len(data_source) - 1)


def train(model, criterion, train_data, lr, epoch):
    # Turn on training mode which enables dropout.
    model.train()
    total_loss = 0.
    losses = []
    hidden = model.init_hidden(args.batch_size)
    for batch, i in enumerate(range(0, train_data.size(0) - 1, args.bptt)):
        data, targets = get_batch(train_data, i)
        # Starting each batch, we detach the hidden state from how it was previously produced.
        # If we didn't, the model would try backpropagating all the way to start of the dataset.
        model.zero_grad()
        hidden = repackage_hidden(hidden)
        output, hidden = model(data, hidden)
        loss = criterion(output, targets)
        loss.backward()

        # `clip_grad_norm` helps prevent the exploding gradient problem in RNNs / LSTMs.
        torch.nn.utils.clip_grad_norm_(model.parameters(), args.clip)
        for p in model.parameters():
            p.data.add_(p.grad, alpha=-lr)

        total_loss += loss.item()
        losses.append(loss.item())

        if batch % args.log_interval == 0 and batch > 0:
            cur_loss = total_loss / args.log_interval
            print("| epoch {:3d} | {:5d}/{:5d} batches | lr {:02.2f} | "
                  "loss {:5.2f} | ppl {:8.2f}".format(
                      epoch, batch, len(train_data) // args.bptt, lr,
                      cur_loss, math.exp(cur_loss)))
            total_loss = 0
    return losses


def run(model, data):
    train_data, val_data = data
    criterion = nn.NLLLoss()
    lr = args.lr
    best_val_loss = None
    losses, val_losses = [], []
    for epoch in range(1, args.epochs + 1):
        losses += train(model, criterion, train_data, lr, epoch)
        val_loss = evaluate(model, criterion, val_data)
        val_losses.append(val_loss)
        print("| end of epoch {:3d} | valid loss {:5.2f} | valid ppl {:8.2f}".format(
            epoch, val_loss, math.exp(val_loss)))
        if not best_val_loss or val_loss < best_val_loss:
            best_val_loss = val_loss
        else:
            # Anneal the learning rate if no improvement has been seen in the validation dataset.
            lr /= 4.0
    return {"losses": losses, "val_losses": val_losses,
            "tied": model.decoder.weight is model.encoder.weight}


if __name__ == "__main__":
    run(build(), make_data())

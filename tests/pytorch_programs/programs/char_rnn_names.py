"""Character-level RNNs on names (in the style of PyTorch's "NLP From Scratch" tutorials):
letters one-hot encoded with ``tensor[li][0][k] = 1``; a classifier trained one name at a
time with plain SGD through ``p.data.add_``; a generator whose per-letter losses are summed
with ``loss += criterion(...)``, targets reshaped with ``unsqueeze_``, and names sampled
letter by letter; a confusion matrix counted with ``confusion[i][j] += 1``.  Random names
in made-up languages stand in for data/names."""

import random
import string

import torch
import torch.nn as nn
import torch.nn.functional as F

all_letters = string.ascii_letters + " .,;'"
n_letters = len(all_letters) + 1  # plus EOS
EOS = n_letters - 1
all_categories = ["Alpha", "Beta", "Gamma"]
_g = random.Random(0)
category_lines = {c: ["".join(_g.choice(a) for _ in range(_g.randint(3, 6))).capitalize()
                      for _ in range(8)]
                  for c, a in zip(all_categories, ("abcde", "fghij", "klmno"))}
n_categories = len(all_categories)


def letterToIndex(letter):
    return all_letters.find(letter)


def lineToTensor(line):
    tensor = torch.zeros(len(line), 1, n_letters)
    for li, letter in enumerate(line):
        tensor[li][0][letterToIndex(letter)] = 1
    return tensor


def categoryTensor(category):
    tensor = torch.zeros(1, n_categories)
    tensor[0][all_categories.index(category)] = 1
    return tensor


def targetTensor(line):
    letter_indexes = [all_letters.find(line[li]) for li in range(1, len(line))]
    letter_indexes.append(EOS)
    return torch.LongTensor(letter_indexes)


class Classifier(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(Classifier, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(input_size, hidden_size)
        self.h2h = nn.Linear(hidden_size, hidden_size)
        self.h2o = nn.Linear(hidden_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, input, hidden):
        hidden = F.tanh(self.i2h(input) + self.h2h(hidden))
        return self.softmax(self.h2o(hidden)), hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


class Generator(nn.Module):
    def __init__(self, input_size, hidden_size, output_size):
        super(Generator, self).__init__()
        self.hidden_size = hidden_size
        self.i2h = nn.Linear(n_categories + input_size + hidden_size, hidden_size)
        self.i2o = nn.Linear(n_categories + input_size + hidden_size, output_size)
        self.o2o = nn.Linear(hidden_size + output_size, output_size)
        self.softmax = nn.LogSoftmax(dim=1)

    def forward(self, category, input, hidden):
        input_combined = torch.cat((category, input, hidden), 1)
        hidden = self.i2h(input_combined)
        output = self.o2o(torch.cat((hidden, self.i2o(input_combined)), 1))
        return self.softmax(output), hidden

    def initHidden(self):
        return torch.zeros(1, self.hidden_size)


def build():
    torch.manual_seed(0)
    return nn.ModuleDict({"classifier": Classifier(n_letters, 16, n_categories),
                          "generator": Generator(n_letters, 16, n_letters)})


def make_data():
    g = random.Random(1)
    picks = []
    for _ in range(12):
        category = g.choice(all_categories)
        picks.append((category, g.choice(category_lines[category])))
    return picks


def train_classifier(rnn, criterion, category_tensor, line_tensor, lr=0.05):
    hidden = rnn.initHidden()
    rnn.zero_grad()
    for i in range(line_tensor.size()[0]):
        output, hidden = rnn(line_tensor[i], hidden)
    loss = criterion(output, category_tensor)
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-lr)
    return output, loss.item()


def train_generator(rnn, criterion, category_tensor, input_line_tensor, target_line_tensor,
                    lr=0.05):
    target_line_tensor.unsqueeze_(-1)
    hidden = rnn.initHidden()
    rnn.zero_grad()
    loss = 0
    for i in range(input_line_tensor.size(0)):
        output, hidden = rnn(category_tensor, input_line_tensor[i], hidden)
        loss += criterion(output, target_line_tensor[i])
    loss.backward()
    for p in rnn.parameters():
        p.data.add_(p.grad.data, alpha=-lr)
    return loss.item() / input_line_tensor.size(0)


def sample(rnn, category, start_letter, max_length=8):
    with torch.no_grad():
        input = lineToTensor(start_letter)
        hidden = rnn.initHidden()
        output_name = start_letter
        for i in range(max_length):
            output, hidden = rnn(categoryTensor(category), input[0], hidden)
            topv, topi = output.topk(1)
            topi = topi[0][0]
            if topi == EOS:
                break
            letter = all_letters[topi]
            output_name += letter
            input = lineToTensor(letter)
        return output_name


def run(models, picks):
    classifier, generator = models["classifier"], models["generator"]
    criterion = nn.NLLLoss()
    class_losses, gen_losses = [], []
    for category, line in picks:
        category_tensor = torch.tensor([all_categories.index(category)], dtype=torch.long)
        output, loss = train_classifier(classifier, criterion, category_tensor,
                                        lineToTensor(line))
        class_losses.append(loss)
        gen_losses.append(train_generator(generator, criterion, categoryTensor(category),
                                          lineToTensor(line), targetTensor(line)))
    confusion = torch.zeros(n_categories, n_categories)
    for category, line in picks:
        hidden = classifier.initHidden()
        line_tensor = lineToTensor(line)
        for i in range(line_tensor.size()[0]):
            output, hidden = classifier(line_tensor[i], hidden)
        top_n, top_i = output.topk(1)
        confusion[all_categories.index(category)][top_i[0].item()] += 1
    names = [sample(generator, c, s) for c, s in zip(all_categories, "ABC")]
    return {"class_losses": class_losses, "gen_losses": gen_losses,
            "confusion": confusion.numpy().tolist(), "names": names}


if __name__ == "__main__":
    run(build(), make_data())

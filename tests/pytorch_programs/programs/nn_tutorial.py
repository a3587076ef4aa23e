"""What is torch.nn really? (PyTorch's tutorial): logistic regression on flattened 28x28
images, first from scratch (hand-written log_softmax, negative log-likelihood and SGD on
tensors), then refactored with nn.Module, nn.Parameter, optim and DataLoader."""

import math

import torch
import torch.nn.functional as F
from torch import nn, optim
from torch.utils.data import DataLoader, TensorDataset


def log_softmax(x):
    return x - x.exp().sum(-1).log().unsqueeze(-1)


def nll(input, target):
    return -input[range(target.shape[0]), target].mean()


def accuracy(out, yb):
    preds = torch.argmax(out, dim=1)
    return (preds == yb).float().mean()


class Mnist_Logistic(nn.Module):
    def __init__(self):
        super().__init__()
        self.weights = nn.Parameter(torch.randn(784, 10) / math.sqrt(784))
        self.bias = nn.Parameter(torch.zeros(10))

    def forward(self, xb):
        return xb @ self.weights + self.bias


def build():
    torch.manual_seed(0)
    weights = torch.randn(784, 10) / math.sqrt(784)
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)
    return [weights, bias]


def make_data():
    torch.manual_seed(1)
    x_train = torch.rand(40, 784)
    y_train = torch.randint(0, 10, (40,))
    return x_train, y_train


def run(params, data, bs=8, lr=0.5, epochs=2):
    weights, bias = params
    x_train, y_train = data
    n, c = x_train.shape

    def model(xb):
        return log_softmax(xb @ weights + bias)

    loss_func = nll
    xb = x_train[0:bs]  # a mini-batch from x
    preds = model(xb)  # predictions
    first_loss = loss_func(preds, y_train[0:bs]).item()
    print(preds[0], preds.shape, first_loss, accuracy(preds, y_train[0:bs]))

    scratch_losses = []
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)
            scratch_losses.append(loss.item())

            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()

    # refactored: F.cross_entropy, nn.Module, optim, TensorDataset and DataLoader, from the
    # weights the scratch loop ended with
    module = Mnist_Logistic()
    with torch.no_grad():
        module.weights.copy_(weights)
        module.bias.copy_(bias)
    opt = optim.SGD(module.parameters(), lr=lr)
    train_dl = DataLoader(TensorDataset(x_train, y_train), batch_size=bs)
    module_losses = []
    for xb, yb in train_dl:
        loss = F.cross_entropy(module(xb), yb)
        loss.backward()
        opt.step()
        opt.zero_grad()
        module_losses.append(loss.item())
    print(scratch_losses[-1], module_losses[-1])
    return {"first_loss": first_loss, "scratch_losses": scratch_losses,
            "module_losses": module_losses}


if __name__ == "__main__":
    run(build(), make_data())

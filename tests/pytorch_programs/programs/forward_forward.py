"""Hinton's forward-forward training of two layers (in the style of PyTorch's
examples/mnist_forward_forward): each layer a subclass of nn.Linear with its own Adam,
trained to give high "goodness" to images overlaid with their true label and low goodness
to images with a wrong one; random 64-pixel images stand in for MNIST."""

import torch
import torch.nn as nn
from torch.optim import Adam

THRESHOLD, EPOCHS, LR = 2.0, 4, 0.03


def overlay_y_on_x(x, y, classes=10):
    x_ = x.clone()
    x_[:, :classes] *= 0.0
    x_[range(x.shape[0]), y] = x.max()
    return x_


class Layer(nn.Linear):
    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__(in_features, out_features, bias, device, dtype)
        self.relu = torch.nn.ReLU()
        self.opt = Adam(self.parameters(), lr=LR)

    def forward(self, x):
        x_direction = x / (x.norm(2, 1, keepdim=True) + 1e-4)
        return self.relu(torch.mm(x_direction, self.weight.T) + self.bias.unsqueeze(0))

    def train_layer(self, x_pos, x_neg, losses):
        for i in range(EPOCHS):
            g_pos = self.forward(x_pos).pow(2).mean(1)
            g_neg = self.forward(x_neg).pow(2).mean(1)
            loss = torch.log1p(torch.exp(torch.cat([-g_pos + THRESHOLD,
                                                    g_neg - THRESHOLD]))).mean()
            self.opt.zero_grad()
            loss.backward()
            self.opt.step()
            losses.append(loss.item())
        return self.forward(x_pos).detach(), self.forward(x_neg).detach()


def predict(layers, x):
    goodness_per_label = []
    for label in range(10):
        h = overlay_y_on_x(x, label)
        goodness = []
        for layer in layers:
            h = layer(h)
            goodness = goodness + [h.pow(2).mean(1)]
        goodness_per_label += [sum(goodness).unsqueeze(1)]
    return torch.cat(goodness_per_label, 1).argmax(1)


def build():
    torch.manual_seed(1)
    return nn.ModuleList([Layer(64, 20), Layer(20, 20)])


def make_data():
    torch.manual_seed(3)
    x = torch.randn(32, 64)
    y = torch.randint(0, 10, (32,))
    shift = torch.randint(1, 10, (32,))
    return x, y, (y + shift) % 10  # a wrong label for each image


def run(layers, data):
    x, y, y_neg = data
    h_pos, h_neg = overlay_y_on_x(x, y), overlay_y_on_x(x, y_neg)
    losses = []
    for layer in layers:
        h_pos, h_neg = layer.train_layer(h_pos, h_neg, losses)
    error = 1.0 - predict(layers, x).eq(y).float().mean().item()
    print("train error:", error)
    return {"losses": losses, "error": error}


if __name__ == "__main__":
    run(build(), make_data())

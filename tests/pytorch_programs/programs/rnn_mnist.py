"""An LSTM reading 28x28 images row by row (in the style of PyTorch's examples/mnist_rnn):
the last output through BatchNorm1d, Dropout2d on a (N, C) batch (PyTorch warns and drops
elements), two linear layers and log-softmax; Adadelta with StepLR; random images stand in
for MNIST."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.rnn = nn.LSTM(input_size=28, hidden_size=16, batch_first=True)
        self.batchnorm = nn.BatchNorm1d(16)
        self.dropout1 = nn.Dropout2d(0.25)
        self.dropout2 = nn.Dropout2d(0.5)
        self.fc1 = nn.Linear(16, 8)
        self.fc2 = nn.Linear(8, 10)

    def forward(self, input):
        input = input.reshape(-1, 28, 28)  # (batch, 1, 28, 28) -> (batch, rows, pixels)
        output, hidden = self.rnn(input)
        output = output[:, -1, :]
        output = self.batchnorm(output)
        output = self.dropout1(output)
        output = F.relu(self.fc1(output))
        output = self.dropout2(output)
        return F.log_softmax(self.fc2(output), dim=1)


def test(model, test_loader):
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for data, target in test_loader:
            output = model(data)
            test_loss += F.nll_loss(output, target, reduction="sum").item()
            pred = output.argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    return test_loss / len(test_loader.dataset), correct


def build():
    torch.manual_seed(1)
    return Net()


def make_data():
    torch.manual_seed(2)
    train = torch.utils.data.TensorDataset(torch.randn(32, 1, 28, 28),
                                           torch.randint(0, 10, (32,)))
    test = torch.utils.data.TensorDataset(torch.randn(16, 1, 28, 28),
                                          torch.randint(0, 10, (16,)))
    return train, test


def run(model, data, epochs=2):
    train_loader = torch.utils.data.DataLoader(data[0], batch_size=16, shuffle=True)
    test_loader = torch.utils.data.DataLoader(data[1], batch_size=16)
    optimizer = optim.Adadelta(model.parameters(), lr=0.1)
    scheduler = StepLR(optimizer, step_size=1, gamma=0.7)
    test_losses, corrects, lrs = [], [], []
    for epoch in range(1, epochs + 1):
        model.train()
        for batch_idx, (data, target) in enumerate(train_loader):
            optimizer.zero_grad()
            loss = F.nll_loss(model(data), target)
            loss.backward()
            optimizer.step()
            print(f"Train Epoch: {epoch} [{batch_idx * len(data)}] Loss: {loss.item():.6f}")
        lrs.append(scheduler.get_last_lr()[0])
        scheduler.step()
        test_loss, correct = test(model, test_loader)
        test_losses.append(test_loss)
        corrects.append(correct)
    return {"test_losses": test_losses, "correct": corrects, "lrs": lrs}


if __name__ == "__main__":
    run(build(), make_data())

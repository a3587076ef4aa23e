"""Quickstart: an MLP classifier for 28x28 images (after PyTorch's "Quickstart" tutorial).

Random tensors stand in for FashionMNIST, so it runs without a download.
"""

import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
print(f"Using {device} device")


class NeuralNetwork(nn.Module):
    def __init__(self):
        super().__init__()
        self.flatten = nn.Flatten()
        self.linear_relu_stack = nn.Sequential(
            nn.Linear(28 * 28, 64),
            nn.ReLU(),
            nn.Linear(64, 64),
            nn.ReLU(),
            nn.Linear(64, 10),
        )

    def forward(self, x):
        x = self.flatten(x)
        logits = self.linear_relu_stack(x)
        return logits


def build():
    torch.manual_seed(0)
    return NeuralNetwork().to(device)


def make_data():
    torch.manual_seed(1)
    train_data = TensorDataset(torch.rand(48, 1, 28, 28), torch.randint(0, 10, (48,)))
    test_data = TensorDataset(torch.rand(16, 1, 28, 28), torch.randint(0, 10, (16,)))
    return train_data, test_data


def train(dataloader, model, loss_fn, optimizer):
    size = len(dataloader.dataset)
    model.train()
    losses = []
    for batch, (X, y) in enumerate(dataloader):
        X, y = X.to(device), y.to(device)

        # Compute prediction error
        pred = model(X)
        loss = loss_fn(pred, y)

        # Backpropagation
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()

        losses.append(loss.item())
        if batch % 2 == 0:
            loss, current = loss.item(), (batch + 1) * len(X)
            print(f"loss: {loss:>7f}  [{current:>5d}/{size:>5d}]")
    return losses


def test(dataloader, model, loss_fn):
    size = len(dataloader.dataset)
    num_batches = len(dataloader)
    model.eval()
    test_loss, correct = 0, 0
    with torch.no_grad():
        for X, y in dataloader:
            X, y = X.to(device), y.to(device)
            pred = model(X)
            test_loss += loss_fn(pred, y).item()
            correct += (pred.argmax(1) == y).type(torch.float).sum().item()
    test_loss /= num_batches
    correct /= size
    print(f"Test Error: \n Accuracy: {(100*correct):>0.1f}%, Avg loss: {test_loss:>8f} \n")
    return test_loss, correct


def run(model, data, epochs=2):
    training_data, test_data = data
    train_dataloader = DataLoader(training_data, batch_size=16)
    test_dataloader = DataLoader(test_data, batch_size=16)
    loss_fn = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(model.parameters(), lr=1e-1)
    losses = []
    for t in range(epochs):
        print(f"Epoch {t+1}\n-------------------------------")
        losses += train(train_dataloader, model, loss_fn, optimizer)
        test_loss, correct = test(test_dataloader, model, loss_fn)
    return {"losses": losses, "test_loss": test_loss, "accuracy": correct}


if __name__ == "__main__":
    model = build()
    print(model)
    run(model, make_data())
    torch.save(model.state_dict(), "model.pth")
    print("Saved PyTorch Model State to model.pth")

"""A training loop with a learning-rate scheduler, then a checkpoint round trip: model and
optimizer state dicts saved with torch.save, loaded into fresh objects, training resumed."""

import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim.lr_scheduler import StepLR


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(10, 32)
        self.bn = nn.BatchNorm1d(32)
        self.dropout = nn.Dropout(0.0)
        self.fc2 = nn.Linear(32, 3)

    def forward(self, x):
        x = F.relu(self.bn(self.fc1(x)))
        x = self.dropout(x)
        return F.log_softmax(self.fc2(x), dim=1)


def build():
    torch.manual_seed(0)
    return Net()


def make_data(steps=6, batch_size=8):
    torch.manual_seed(1)
    return [(torch.randn(batch_size, 10), torch.randint(0, 3, (batch_size,)))
            for _ in range(steps)]


def train_steps(model, optimizer, scheduler, batches):
    model.train()
    losses, lrs = [], []
    for data, target in batches:
        optimizer.zero_grad()
        output = model(data)
        loss = F.nll_loss(output, target)
        loss.backward()
        optimizer.step()
        lrs.append(scheduler.get_last_lr()[0])
        scheduler.step()
        losses.append(loss.item())
    return losses, lrs


def run(model, batches):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    scheduler = StepLR(optimizer, step_size=2, gamma=0.5)
    losses, lrs = train_steps(model, optimizer, scheduler, batches[:3])

    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "checkpoint.pt")
        torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict()}, path)
        checkpoint = torch.load(path)

    model2 = Net()
    model2.load_state_dict(checkpoint["model"])
    optimizer2 = torch.optim.SGD(model2.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)
    optimizer2.load_state_dict(checkpoint["optimizer"])
    scheduler2 = StepLR(optimizer2, step_size=2, gamma=0.5)
    scheduler2.load_state_dict(checkpoint["scheduler"])

    model.eval()
    model2.eval()
    with torch.no_grad():
        same_output = torch.equal(model(batches[0][0]), model2(batches[0][0]))

    more_losses, more_lrs = train_steps(model2, optimizer2, scheduler2, batches[3:])
    print("losses", losses + more_losses)
    print("learning rates", lrs + more_lrs)
    return {"losses": losses + more_losses, "lrs": lrs + more_lrs, "same_output": same_output,
            "keys": list(checkpoint["model"].keys())}


if __name__ == "__main__":
    run(build(), make_data())

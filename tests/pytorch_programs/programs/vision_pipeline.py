"""A torchvision-style data pipeline: a dataset (torchvision's FakeData) with transforms,
a custom Dataset wrapping it, a train/validation split, DataLoaders with worker processes,
a small CNN trained on it, and a grid of images saved with torchvision.utils.save_image."""

import os
import tempfile

import torch
import torch.nn as nn
import torch.nn.functional as F
import torchvision
from torch.utils.data import DataLoader, Dataset, random_split
from torchvision import transforms

transform = transforms.Compose([
    transforms.ToTensor(),
    transforms.Normalize((0.5,), (0.5,)),
])


class RelabeledDataset(Dataset):
    """Wraps a dataset and maps its labels to 'even' (0) and 'odd' (1)."""

    def __init__(self, base):
        self.base = base

    def __len__(self):
        return len(self.base)

    def __getitem__(self, idx):
        image, label = self.base[idx]
        return image, label % 2


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=3, padding=1)
        self.conv2 = nn.Conv2d(4, 8, kernel_size=3, padding=1)
        self.fc = nn.Linear(8 * 3 * 3, 2)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = x.view(x.size(0), -1)
        return self.fc(x)


def build():
    torch.manual_seed(0)
    return SmallCNN()


def make_data():
    fake = torchvision.datasets.FakeData(size=24, image_size=(1, 12, 12), num_classes=10,
                                         transform=transform)
    dataset = RelabeledDataset(fake)
    generator = torch.Generator().manual_seed(42)
    train_set, val_set = random_split(dataset, [16, 8], generator=generator)
    return train_set, val_set


def run(model, data):
    train_set, val_set = data
    train_loader = DataLoader(train_set, batch_size=4, shuffle=False, num_workers=2,
                              pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=8, num_workers=0)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    criterion = nn.CrossEntropyLoss()
    losses = []
    for images, labels in train_loader:
        optimizer.zero_grad()
        loss = criterion(model(images), labels)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    model.eval()
    correct = 0
    with torch.no_grad():
        for images, labels in val_loader:
            correct += (model(images).argmax(dim=1) == labels).sum().item()
    images, _ = next(iter(val_loader))
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "grid.png")
        torchvision.utils.save_image(images * 0.5 + 0.5, path, nrow=4)
        png_size = os.path.getsize(path)
    grid = torchvision.utils.make_grid(images, nrow=4, normalize=True)
    print(f"losses {losses}, validation accuracy {correct}/{len(val_set)}")
    return {"losses": losses, "correct": correct, "grid_shape": list(grid.shape),
            "png_size": png_size}


if __name__ == "__main__":
    run(build(), make_data())

"""A sub-pixel convolution network for super-resolution (in the style of PyTorch's
examples/super_resolution): orthogonal initialisation, nn.PixelShuffle, Adam on an MSE loss,
PSNR on a test loader; random 6x6 low-resolution and 18x18 high-resolution images stand in
for BSDS300."""

from math import log10

import torch
import torch.nn as nn
import torch.nn.init as init
import torch.optim as optim
from torch.utils.data import DataLoader, TensorDataset


class Net(nn.Module):
    def __init__(self, upscale_factor):
        super(Net, self).__init__()
        self.relu = nn.ReLU()
        self.conv1 = nn.Conv2d(1, 8, (5, 5), (1, 1), (2, 2))
        self.conv2 = nn.Conv2d(8, 4, (3, 3), (1, 1), (1, 1))
        self.conv3 = nn.Conv2d(4, upscale_factor ** 2, (3, 3), (1, 1), (1, 1))
        self.pixel_shuffle = nn.PixelShuffle(upscale_factor)
        init.orthogonal_(self.conv1.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv2.weight, init.calculate_gain("relu"))
        init.orthogonal_(self.conv3.weight)

    def forward(self, x):
        x = self.relu(self.conv1(x))
        x = self.relu(self.conv2(x))
        return self.pixel_shuffle(self.conv3(x))


def build():
    torch.manual_seed(123)
    return Net(upscale_factor=3)


def make_data():
    torch.manual_seed(4)
    return (TensorDataset(torch.rand(8, 1, 6, 6), torch.rand(8, 1, 18, 18)),
            TensorDataset(torch.rand(4, 1, 6, 6), torch.rand(4, 1, 18, 18)))


def run(model, data, epochs=2):
    device = torch.device("cpu")
    training_data_loader = DataLoader(dataset=data[0], num_workers=0, batch_size=4)
    testing_data_loader = DataLoader(dataset=data[1], num_workers=0, batch_size=2)
    model = model.to(device)
    criterion = nn.MSELoss()
    optimizer = optim.Adam(model.parameters(), lr=0.01)
    losses, psnrs = [], []
    for epoch in range(1, epochs + 1):
        for iteration, batch in enumerate(training_data_loader, 1):
            input, target = batch[0].to(device), batch[1].to(device)
            optimizer.zero_grad()
            loss = criterion(model(input), target)
            losses.append(loss.item())
            loss.backward()
            optimizer.step()
            print(f"===> Epoch[{epoch}]({iteration}/{len(training_data_loader)}): "
                  f"Loss: {loss.item():.4f}")
        avg_psnr = 0
        with torch.no_grad():
            for batch in testing_data_loader:
                mse = criterion(model(batch[0].to(device)), batch[1].to(device))
                avg_psnr += 10 * log10(1 / mse.item())
        psnrs.append(avg_psnr / len(testing_data_loader))
        print(f"===> Avg. PSNR: {psnrs[-1]:.4f} dB")
    return {"losses": losses, "psnr": psnrs}


if __name__ == "__main__":
    run(build(), make_data())

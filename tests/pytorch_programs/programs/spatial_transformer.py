"""A spatial transformer network (in the style of PyTorch's spatial transformer tutorial): a
localisation network regresses an affine map, F.affine_grid and F.grid_sample resample the
image with it, then a small classifier; the regressor starts near the identity map; the old
size_average=False in the test loss.  Random 20x20 images stand in for MNIST."""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.conv1 = nn.Conv2d(1, 4, kernel_size=5)
        self.fc1 = nn.Linear(4 * 8 * 8, 10)
        self.localization = nn.Sequential(
            nn.Conv2d(1, 4, kernel_size=5),
            nn.MaxPool2d(2, stride=2),
            nn.ReLU(True),
        )
        self.fc_loc = nn.Sequential(nn.Linear(4 * 8 * 8, 16), nn.ReLU(True), nn.Linear(16, 6))
        # near the identity map (points off the pixel centres, where bilinear sampling kinks)
        self.fc_loc[2].weight.data.zero_()
        near_identity = [0.9137, 0.0513, 0.0171, -0.0419, 1.0893, -0.0233]
        self.fc_loc[2].bias.data.copy_(torch.tensor(near_identity, dtype=torch.float))

    def stn(self, x):
        xs = self.localization(x).view(-1, 4 * 8 * 8)
        theta = self.fc_loc(xs).view(-1, 2, 3)
        grid = F.affine_grid(theta, x.size(), align_corners=False)
        return F.grid_sample(x, grid, align_corners=False)

    def forward(self, x):
        x = self.stn(x)
        x = F.relu(F.max_pool2d(self.conv1(x), 2))
        return F.log_softmax(self.fc1(x.view(-1, 4 * 8 * 8)), dim=1)


def build():
    torch.manual_seed(0)
    return Net()


def make_data():
    torch.manual_seed(3)
    return torch.utils.data.TensorDataset(torch.randn(12, 1, 20, 20), torch.randint(0, 10, (12,)))


def run(model, data, epochs=2):
    loader = torch.utils.data.DataLoader(data, batch_size=6)
    optimizer = optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for epoch in range(epochs):
        model.train()
        for x, target in loader:
            optimizer.zero_grad()
            loss = F.nll_loss(model(x), target)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        test_loss = sum(F.nll_loss(model(x), t, size_average=False).item() for x, t in loader)
        warped = model.stn(next(iter(loader))[0])
    return {"losses": losses, "test_loss": test_loss, "warped_shape": list(warped.shape)}


if __name__ == "__main__":
    run(build(), make_data())

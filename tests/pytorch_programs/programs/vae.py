"""A variational autoencoder (after PyTorch's examples/vae), made small: 8x8 images,
a 2-D latent space; random images in [0, 1] stand in for MNIST."""

import torch
import torch.utils.data
from torch import nn, optim
from torch.nn import functional as F

D = 64  # 8x8 pixels


class VAE(nn.Module):
    def __init__(self):
        super(VAE, self).__init__()

        self.fc1 = nn.Linear(D, 32)
        self.fc21 = nn.Linear(32, 2)
        self.fc22 = nn.Linear(32, 2)
        self.fc3 = nn.Linear(2, 32)
        self.fc4 = nn.Linear(32, D)

    def encode(self, x):
        h1 = F.relu(self.fc1(x))
        return self.fc21(h1), self.fc22(h1)

    def reparameterize(self, mu, logvar):
        if self.training:
            std = torch.exp(0.5 * logvar)
            eps = torch.randn_like(std)
            return mu + eps * std
        return mu

    def decode(self, z):
        h3 = F.relu(self.fc3(z))
        return torch.sigmoid(self.fc4(h3))

    def forward(self, x):
        mu, logvar = self.encode(x.view(-1, D))
        z = self.reparameterize(mu, logvar)
        return self.decode(z), mu, logvar


# Reconstruction + KL divergence losses summed over all elements and batch
def loss_function(recon_x, x, mu, logvar):
    BCE = F.binary_cross_entropy(recon_x, x.view(-1, D), reduction="sum")

    # see Appendix B from VAE paper:
    # Kingma and Welling. Auto-Encoding Variational Bayes. ICLR, 2014
    # 0.5 * sum(1 + log(sigma^2) - mu^2 - sigma^2)
    KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())

    return BCE + KLD


def build():
    torch.manual_seed(0)
    return VAE()


def make_data():
    torch.manual_seed(1)
    images = torch.rand(32, 1, 8, 8)
    labels = torch.zeros(32, dtype=torch.long)
    return torch.utils.data.TensorDataset(images, labels)


def evaluate(model, loader):
    model.eval()
    test_loss = 0
    with torch.no_grad():
        for data, _ in loader:
            recon_batch, mu, logvar = model(data)
            test_loss += loss_function(recon_batch, data, mu, logvar).item()
    return test_loss / len(loader.dataset)


def run(model, dataset, epochs=2):
    train_loader = torch.utils.data.DataLoader(dataset, batch_size=8, shuffle=True)
    eval_loader = torch.utils.data.DataLoader(dataset, batch_size=8)
    optimizer = optim.Adam(model.parameters(), lr=1e-3)
    eval_losses = [evaluate(model, eval_loader)]
    for epoch in range(1, epochs + 1):
        model.train()
        train_loss = 0
        for batch_idx, (data, _) in enumerate(train_loader):
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(data)
            loss = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
        print(f"====> Epoch: {epoch} Average loss: {train_loss / len(train_loader.dataset):.4f}")
        eval_losses.append(evaluate(model, eval_loader))
    with torch.no_grad():
        sample = torch.randn(4, 2)
        sample = model.decode(sample)
    return {"eval_losses": eval_losses, "sample_shape": list(sample.shape)}


if __name__ == "__main__":
    run(build(), make_data())

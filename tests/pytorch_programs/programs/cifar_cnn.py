"""Training a classifier: the CNN of PyTorch's "Training a Classifier" (CIFAR-10) tutorial.

Random 3x32x32 images and labels stand in for CIFAR-10.
"""

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim

classes = ("plane", "car", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck")


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(3, 6, 5)
        self.pool = nn.MaxPool2d(2, 2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(16 * 5 * 5, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = self.pool(F.relu(self.conv1(x)))
        x = self.pool(F.relu(self.conv2(x)))
        x = torch.flatten(x, 1)  # flatten all dimensions except batch
        x = F.relu(self.fc1(x))
        x = F.relu(self.fc2(x))
        x = self.fc3(x)
        return x


def build():
    torch.manual_seed(0)
    return Net()


def make_data():
    torch.manual_seed(1)
    images = torch.randn(12, 3, 32, 32)
    labels = torch.randint(0, 10, (12,))
    trainloader = [(images[i:i + 4], labels[i:i + 4]) for i in range(0, 12, 4)]
    return trainloader


def run(net, trainloader):
    criterion = nn.CrossEntropyLoss()
    optimizer = optim.SGD(net.parameters(), lr=0.001, momentum=0.9)

    losses = []
    for epoch in range(2):  # loop over the dataset multiple times
        running_loss = 0.0
        for i, data in enumerate(trainloader, 0):
            # get the inputs; data is a list of [inputs, labels]
            inputs, labels = data

            # zero the parameter gradients
            optimizer.zero_grad()

            # forward + backward + optimize
            outputs = net(inputs)
            loss = criterion(outputs, labels)
            loss.backward()
            optimizer.step()

            # print statistics
            running_loss += loss.item()
            losses.append(loss.item())
        print(f"[{epoch + 1}] loss: {running_loss / len(trainloader):.3f}")

    correct = 0
    total = 0
    # since we're not training, we don't need to calculate the gradients for our outputs
    with torch.no_grad():
        for data in trainloader:
            images, labels = data
            # calculate outputs by running images through the network
            outputs = net(images)
            # the class with the highest energy is what we choose as prediction
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
    print(f"Accuracy of the network on the {total} train images: {100 * correct // total} %")
    _, predicted = torch.max(net(trainloader[0][0]), 1)
    print("Predicted: ", " ".join(f"{classes[predicted[j]]:5s}" for j in range(4)))
    return {"losses": losses, "correct": correct, "predicted": predicted.tolist()}


if __name__ == "__main__":
    run(build(), make_data())

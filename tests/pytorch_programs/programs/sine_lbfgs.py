"""Two stacked LSTM cells learning sine waves with L-BFGS (in the style of PyTorch's
examples/time_sequence_prediction): the model in double precision, a closure that
re-evaluates the loss, predictions continued into the future."""

import numpy as np
import torch
import torch.nn as nn
import torch.optim as optim

H = 12


class Sequence(nn.Module):
    def __init__(self):
        super(Sequence, self).__init__()
        self.lstm1 = nn.LSTMCell(1, H)
        self.lstm2 = nn.LSTMCell(H, H)
        self.linear = nn.Linear(H, 1)

    def forward(self, input, future=0):
        outputs = []
        h_t = torch.zeros(input.size(0), H, dtype=torch.double)
        c_t = torch.zeros(input.size(0), H, dtype=torch.double)
        h_t2 = torch.zeros(input.size(0), H, dtype=torch.double)
        c_t2 = torch.zeros(input.size(0), H, dtype=torch.double)
        for input_t in input.split(1, dim=1):
            h_t, c_t = self.lstm1(input_t, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        for i in range(future):  # feed the predictions back in
            h_t, c_t = self.lstm1(output, (h_t, c_t))
            h_t2, c_t2 = self.lstm2(h_t, (h_t2, c_t2))
            output = self.linear(h_t2)
            outputs += [output]
        return torch.cat(outputs, dim=1)


def build():
    torch.manual_seed(0)
    seq = Sequence()
    seq.double()
    return seq


def make_data():
    rng = np.random.default_rng(2)
    x = np.arange(30) + rng.integers(-80, 80, 7).reshape(7, 1)
    return np.sin(x / 20.0).astype(np.float32).astype(np.float64)  # float32 survives the trip


def run(seq, data, steps=2, future=5):
    data = np.asarray(data, dtype=np.float64)
    input = torch.from_numpy(data[3:, :-1])
    target = torch.from_numpy(data[3:, 1:])
    test_input = torch.from_numpy(data[:3, :-1])
    test_target = torch.from_numpy(data[:3, 1:])
    criterion = nn.MSELoss()
    optimizer = optim.LBFGS(seq.parameters(), lr=0.8, max_iter=4)
    losses, test_losses = [], []
    for i in range(steps):
        def closure():
            optimizer.zero_grad()
            loss = criterion(seq(input), target)
            losses.append(loss.item())
            loss.backward()
            return loss
        optimizer.step(closure)
        with torch.no_grad():
            pred = seq(test_input, future=future)
            loss = criterion(pred[:, :-future], test_target)
            test_losses.append(loss.item())
            y = pred.detach().numpy()
        print(f"step {i}: loss {losses[-1]:.6f}, test loss {test_losses[-1]:.6f}")
    return {"losses": losses, "test_losses": test_losses, "y_shape": list(y.shape)}


if __name__ == "__main__":
    run(build(), make_data())

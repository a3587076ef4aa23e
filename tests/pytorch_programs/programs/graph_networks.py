"""Graph convolution and graph attention on a random graph (in the style of PyTorch's
examples/gcn and examples/gat): parameters made as nn.Parameter(torch.Tensor(n, m)) and
torch.empty(size=...) before an init, a normalised adjacency built with
torch.sparse_coo_tensor and multiplied with torch.spmm, attention masked with torch.where,
training on a node mask with Adam and weight decay."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.optim import Adam

V, FEATURES, CLASSES = 20, 12, 3


class GraphConv(nn.Module):
    def __init__(self, input_dim, output_dim, use_bias=True):
        super(GraphConv, self).__init__()
        self.kernel = nn.Parameter(torch.Tensor(input_dim, output_dim))
        nn.init.xavier_normal_(self.kernel)
        self.bias = nn.Parameter(torch.Tensor(output_dim)) if use_bias else None
        if use_bias:
            nn.init.zeros_(self.bias)

    def forward(self, input_tensor, adj_mat):
        output = torch.spmm(adj_mat, torch.mm(input_tensor, self.kernel))
        return output + self.bias if self.bias is not None else output


class GCN(nn.Module):
    def __init__(self, hidden):
        super(GCN, self).__init__()
        self.gc1 = GraphConv(FEATURES, hidden)
        self.gc2 = GraphConv(hidden, CLASSES)

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        return F.log_softmax(self.gc2(x, adj), dim=1)


class GraphAttention(nn.Module):
    def __init__(self, in_features, out_features, n_heads=2, slope=0.2):
        super(GraphAttention, self).__init__()
        self.n_heads, self.n_hidden = n_heads, out_features
        self.W = nn.Parameter(torch.empty(size=(in_features, out_features * n_heads)))
        self.a = nn.Parameter(torch.empty(size=(n_heads, 2 * out_features, 1)))
        nn.init.xavier_normal_(self.W)
        nn.init.xavier_normal_(self.a)
        self.leakyrelu = nn.LeakyReLU(slope)

    def forward(self, h, adj):
        n = h.shape[0]
        h = torch.mm(h, self.W).view(n, self.n_heads, self.n_hidden).permute(1, 0, 2)
        source = torch.matmul(h, self.a[:, :self.n_hidden, :])
        target = torch.matmul(h, self.a[:, self.n_hidden:, :])
        e = self.leakyrelu(source + target.mT)
        e = torch.where(adj > 0, e, -9e16 * torch.ones_like(e))
        attention = F.softmax(e, dim=-1)
        return torch.matmul(attention, h).mean(dim=0)


class GAT(nn.Module):
    def __init__(self, hidden):
        super(GAT, self).__init__()
        self.gat1 = GraphAttention(FEATURES, hidden)
        self.gat2 = GraphAttention(hidden, CLASSES, n_heads=1)

    def forward(self, x, adj):
        return F.log_softmax(self.gat2(F.elu(self.gat1(x, adj)), adj), dim=1)


def build():
    torch.manual_seed(42)
    return nn.ModuleDict({"gcn": GCN(8), "gat": GAT(6)})


def make_data():
    torch.manual_seed(1)
    features = torch.rand(V, FEATURES)
    edges = torch.randint(0, V, (2, 40))
    labels = torch.randint(0, CLASSES, (V,))
    return features, edges, labels


def normalised_adjacency(edges):
    adj = torch.sparse_coo_tensor(edges, torch.ones(edges.shape[1]), (V, V)).to_dense()
    adj = torch.eye(V) + (adj > 0).float()
    degree = torch.sqrt(1 / torch.sum(adj, dim=1))
    return (torch.diag(degree) @ adj @ torch.diag(degree)).to_sparse()


def run(models, data, epochs=4):
    features, edges, labels = data
    adj = normalised_adjacency(edges.long())  # sparse in PyTorch: spmm only (GCN)
    train, test = torch.arange(0, 14), torch.arange(14, V)
    out = {}
    for name, model in models.items():
        optimizer = Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
        criterion = nn.NLLLoss()
        losses = []
        for epoch in range(epochs):
            model.train()
            optimizer.zero_grad()
            graph = adj if name == "gcn" else adj.to_dense()
            loss = criterion(model(features, graph)[train], labels[train])
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        model.eval()
        with torch.no_grad():
            output = model(features, adj if name == "gcn" else adj.to_dense())
            acc = (output[test].argmax(dim=1) == labels[test]).float().sum() / len(test)
        out[name] = losses
        out[f"{name}_accuracy"] = acc.item()
    return out


if __name__ == "__main__":
    run(build(), make_data())

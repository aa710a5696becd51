"""A Kipf & Welling graph convolutional network on a small Cora-like random graph.

The graph starts as a NumPy int32 edge list, as loaders read it from disk: it becomes an int64 sparse
adjacency, gets self loops (torch.eye + adj), and is renormalised as D^-1/2 (A + I) D^-1/2 with a sparse
diagonal D. The bag-of-words features are sparse too; two GraphConvolution layers (torch.spmm / torch.mm)
are trained with Adam on a train mask."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

np.random.seed(0)
torch.manual_seed(0)
num_nodes, num_edges, num_feats, num_hidden, num_classes = 80, 200, 40, 16, 4
device = torch.device("cpu")

# a homophilous random graph: most edges join nodes of one class
labels_np = np.random.randint(0, num_classes, num_nodes)
src = np.random.randint(0, num_nodes, num_edges)
same = [np.random.choice(np.flatnonzero(labels_np == labels_np[s])) for s in src]
dst = np.where(np.random.rand(num_edges) < 0.8, same, np.random.randint(0, num_nodes, num_edges))
edges = np.stack([src, dst], axis=1).astype(np.int32)
edges = np.concatenate([edges, edges[:, ::-1]])  # undirected

adj = torch.sparse_coo_tensor(edges.T, torch.ones(edges.shape[0]), (num_nodes, num_nodes), dtype=torch.int64)
print(adj.dtype, adj.layout, adj._nnz(), adj.is_coalesced(), adj.coalesce()._nnz())
row_counts = torch.sum(adj, dim=1)  # sparse, int64
print("row counts", row_counts.layout, row_counts.dtype, row_counts.to_dense()[:10].tolist())

adj = torch.eye(num_nodes) + adj  # dense float: self loops added
adj = (adj > 0).float()  # merge duplicate edges
deg = torch.sum(adj, dim=1)
D = torch.diag(deg.pow(-0.5)).to_sparse()
adj_norm = D @ adj @ D  # sparse @ dense @ sparse: dense
adj_sparse = (D @ adj.to_sparse() @ D).coalesce()  # all sparse: sparse
print("degree", deg[:8].tolist(), D.layout, D._nnz())
print("renormalised", adj_sparse.layout, adj_sparse._nnz(), torch.allclose(adj_sparse.to_dense(), adj_norm))
print("row sums", [round(x, 4) for x in torch.sparse.sum(adj_sparse, dim=1).to_dense()[:6].tolist()])
adj_norm = adj_norm.to_sparse().to(device)

words = (np.random.rand(num_nodes, num_feats) < 0.08) | (np.arange(num_feats) % num_classes == labels_np[:, None])
features = torch.tensor(words * np.random.rand(num_nodes, num_feats) > 0.4, dtype=torch.float32)
features = (features / features.sum(1, keepdim=True).clamp(min=1)).to_sparse().to(device)
labels = torch.tensor(labels_np, dtype=torch.long)
idx_train, idx_test = torch.arange(0, 40), torch.arange(40, num_nodes)
print("features", features.layout, features._nnz(), tuple(features.shape))


class GraphConvolution(nn.Module):
    def __init__(self, in_features: int, out_features: int) -> None:
        super().__init__()
        self.weight = nn.Parameter(torch.FloatTensor(in_features, out_features))
        self.bias = nn.Parameter(torch.FloatTensor(out_features))
        stdv = 1.0 / math.sqrt(out_features)
        self.weight.data.uniform_(-stdv, stdv)
        self.bias.data.uniform_(-stdv, stdv)

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        support = torch.spmm(x, self.weight) if x.is_sparse else torch.mm(x, self.weight)
        return torch.spmm(adj, support) + self.bias


class GCN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.gc1 = GraphConvolution(num_feats, num_hidden)
        self.gc2 = GraphConvolution(num_hidden, num_classes)

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, 0.5, training=self.training)
        return F.log_softmax(self.gc2(x, adj), dim=1)


def accuracy(output: torch.Tensor, target: torch.Tensor) -> float:
    return (output.argmax(1) == target).double().mean().item()


model = GCN().to(device)
optimizer = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
for epoch in range(30):
    model.train()
    optimizer.zero_grad()
    output = model(features, adj_norm)
    loss = F.nll_loss(output[idx_train], labels[idx_train])
    loss.backward()
    optimizer.step()
    if epoch % 5 == 0 or epoch == 29:
        print(
            f"epoch {epoch:02d} loss {loss.item():.4f} train acc {accuracy(output[idx_train], labels[idx_train]):.4f} "
            f"grad {model.gc1.weight.grad.norm().item():.4f}"
        )

model.eval()
with torch.no_grad():
    output = model(features, adj_norm)
print(
    f"test loss {F.nll_loss(output[idx_test], labels[idx_test]).item():.4f} "
    f"test acc {accuracy(output[idx_test], labels[idx_test]):.4f}"
)

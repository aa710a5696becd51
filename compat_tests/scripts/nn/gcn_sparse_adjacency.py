"""A two-layer graph convolutional network on a synthetic graph: a sparse normalised adjacency
(D^-1/2 (A + I) D^-1/2 as a COO tensor) times node features, trained for node classification."""

import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
num_nodes, num_feats, num_classes = 40, 12, 3

# a random undirected graph with self loops
src = torch.randint(0, num_nodes, (120,))
dst = torch.randint(0, num_nodes, (120,))
loops = torch.arange(num_nodes)
edges = torch.cat([torch.stack([src, dst]), torch.stack([dst, src]), torch.stack([loops, loops])], dim=1)
adj = torch.sparse_coo_tensor(edges, torch.ones(edges.shape[1]), (num_nodes, num_nodes)).coalesce()
adj = torch.sparse_coo_tensor(adj.indices(), torch.ones(adj._nnz()), adj.shape)  # 0/1 weights after merging
deg = torch.sparse.sum(adj, dim=1).to_dense()
norm = deg.pow(-0.5)
row, col = adj.coalesce().indices()
adj_norm = torch.sparse_coo_tensor(adj.coalesce().indices(), norm[row] * norm[col], adj.shape).coalesce()
print(adj_norm.is_sparse, adj_norm.layout, adj_norm._nnz(), adj_norm.is_coalesced())
print("degree sum", deg.sum().item())

features = torch.randn(num_nodes, num_feats)
labels = torch.randint(0, num_classes, (num_nodes,))
train_mask = torch.arange(num_nodes) < 30


class GCNLayer(nn.Module):
    def __init__(self, fin: int, fout: int) -> None:
        super().__init__()
        self.lin = nn.Linear(fin, fout, bias=False)
        self.bias = nn.Parameter(torch.zeros(fout))

    def forward(self, x: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        return torch.sparse.mm(a, self.lin(x)) + self.bias


class GCN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.l1 = GCNLayer(num_feats, 16)
        self.l2 = GCNLayer(16, num_classes)

    def forward(self, x: torch.Tensor, a: torch.Tensor) -> torch.Tensor:
        h = F.relu(self.l1(x, a))
        h = F.dropout(h, 0.3, self.training)
        return self.l2(h, a)


model = GCN()
opt = torch.optim.Adam(model.parameters(), lr=0.02, weight_decay=5e-4)
for epoch in range(25):
    model.train()
    opt.zero_grad()
    out = model(features, adj_norm)
    loss = F.cross_entropy(out[train_mask], labels[train_mask])
    loss.backward()
    opt.step()
    if epoch % 5 == 0:
        print(f"epoch {epoch} loss {loss.item():.4f} grad {model.l1.lin.weight.grad.norm().item():.4f}")

model.eval()
with torch.no_grad():
    pred = model(features, adj_norm).argmax(1)
    acc = (pred[~train_mask] == labels[~train_mask]).float().mean()
print("held-out accuracy", round(acc.item(), 4))

# a learnable edge weighting: gradients flow into the sparse values
weights = torch.ones(adj_norm._nnz(), requires_grad=True)
a_w = torch.sparse_coo_tensor(adj_norm.indices(), adj_norm.values() * weights, adj_norm.shape)
h = torch.spmm(a_w, features) @ torch.ones(num_feats, 1)
h.pow(2).mean().backward()
print("edge weight grad", weights.grad.shape, round(weights.grad.abs().sum().item(), 3))
print(a_w.grad_fn.__class__.__name__, (a_w @ features).grad_fn.__class__.__name__)
print(adj_norm.to_dense()[:3, :3])

"""A graph attention network (Velickovic et al.) over a dense adjacency matrix.

Attention logits come from a shared linear map and a LeakyReLU; edges that do not exist are masked before
the softmax (one head with torch.where(adj > 0, e, zero_vec), the other with e.masked_fill(adj == 0, -9e15)),
with seeded attention dropout and ELU. Two heads are concatenated, an output head classifies, and Adam
trains it on a train mask."""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(0)
rng = np.random.default_rng(1)
num_nodes, num_feats, num_hidden, num_classes, heads = 60, 24, 8, 3, 2

labels_np = rng.integers(0, num_classes, num_nodes)
same_class = labels_np[:, None] == labels_np[None, :]
links = rng.random((num_nodes, num_nodes)) < np.where(same_class, 0.12, 0.02)
adj_np = (links | links.T | np.eye(num_nodes, dtype=bool)).astype(np.float32)
adj = torch.from_numpy(adj_np)
features = torch.randn(num_nodes, num_feats) + F.one_hot(torch.tensor(labels_np), num_feats).float() * 1.5
labels = torch.tensor(labels_np)
train_mask = torch.arange(num_nodes) < 36
print("edges", int(adj.sum().item()), "mean degree", round(adj.sum(1).mean().item(), 4))


class GraphAttentionLayer(nn.Module):
    def __init__(self, in_features: int, out_features: int, dropout: float, concat: bool, mask: str) -> None:
        super().__init__()
        self.out_features, self.dropout, self.concat, self.mask = out_features, dropout, concat, mask
        self.W = nn.Parameter(torch.empty(in_features, out_features))
        self.a = nn.Parameter(torch.empty(2 * out_features, 1))
        nn.init.xavier_uniform_(self.W.data, gain=1.414)
        nn.init.xavier_uniform_(self.a.data, gain=1.414)
        self.leakyrelu = nn.LeakyReLU(0.2)

    def forward(self, h: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        Wh = torch.mm(h, self.W)
        e = self.leakyrelu(
            torch.matmul(Wh, self.a[: self.out_features]) + torch.matmul(Wh, self.a[self.out_features :]).T
        )
        if self.mask == "where":
            zero_vec = -9e15 * torch.ones_like(e)
            attention = torch.where(adj > 0, e, zero_vec)
        else:
            attention = e.masked_fill(adj == 0, -9e15)
        attention = F.softmax(attention, dim=1)
        attention = F.dropout(attention, self.dropout, training=self.training)
        h_prime = torch.matmul(attention, Wh)
        return F.elu(h_prime) if self.concat else h_prime


class GAT(nn.Module):
    def __init__(self, dropout: float = 0.2) -> None:
        super().__init__()
        self.dropout = dropout
        masks = ["where", "masked_fill"]
        self.attentions = nn.ModuleList(
            GraphAttentionLayer(num_feats, num_hidden, dropout, True, masks[i % 2]) for i in range(heads)
        )
        self.out_att = GraphAttentionLayer(num_hidden * heads, num_classes, dropout, False, "where")

    def forward(self, x: torch.Tensor, adj: torch.Tensor) -> torch.Tensor:
        x = F.dropout(x, self.dropout, training=self.training)
        x = torch.cat([att(x, adj) for att in self.attentions], dim=1)
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(F.elu(self.out_att(x, adj)), dim=1)


model = GAT()
optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
for epoch in range(25):
    model.train()
    optimizer.zero_grad()
    out = model(features, adj)
    loss = F.nll_loss(out[train_mask], labels[train_mask])
    loss.backward()
    optimizer.step()
    if epoch % 5 == 0 or epoch == 24:
        acc = (out[train_mask].argmax(1) == labels[train_mask]).float().mean().item()
        print(f"epoch {epoch:02d} loss {loss.item():.4f} train acc {acc:.4f}")

model.eval()
with torch.no_grad():
    out = model(features, adj)
    test_loss = F.nll_loss(out[~train_mask], labels[~train_mask]).item()
    test_acc = (out[~train_mask].argmax(1) == labels[~train_mask]).float().mean().item()
print(f"test loss {test_loss:.4f} test acc {test_acc:.4f}")
attention_rows = F.softmax(model.attentions[0].leakyrelu(torch.zeros(3, 3)).masked_fill(adj[:3, :3] == 0, -9e15), dim=1)
print("masked attention rows", [[round(x, 4) for x in row] for row in attention_rows.tolist()])

"""An older-style graph convolution script: the adjacency is built with the legacy
torch.sparse.FloatTensor constructor from an edge list, row-normalised with sparse arithmetic
((A + A^T + I) scaled by 1/degree), weights are allocated with Tensor.new and initialised by hand,
and training adds a small input-Jacobian penalty through torch.autograd.functional (create_graph)."""

import math

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

torch.manual_seed(3)
np.random.seed(3)
n, n_feat, n_hid, n_class = 24, 8, 16, 3

# edge list as a numpy array, as datasets on disk give it
edges = np.random.randint(0, n, size=(2, 60)).astype(np.int64)
indices = torch.from_numpy(edges)
adj = torch.sparse.FloatTensor(indices, torch.ones(edges.shape[1]), torch.Size([n, n]))
eye = torch.sparse.FloatTensor(torch.arange(n).repeat(2, 1), torch.ones(n), torch.Size([n, n]))
adj = (adj + adj.t() + eye).coalesce()
rowsum = torch.sparse.sum(adj, dim=1).to_dense()
r_inv = rowsum.pow(-1)
adj = adj * r_inv.unsqueeze(1).expand(n, n)  # D^-1 (A + A^T + I)
print("adjacency", adj.type(), adj._nnz(), adj.is_coalesced(), isinstance(adj, torch.sparse.FloatTensor))
print("row sums", torch.sparse.sum(adj, dim=1).to_dense()[:4].tolist())


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.FloatTensor(in_features, out_features))
        self.bias = nn.Parameter(torch.FloatTensor(out_features))
        stdv = 1.0 / math.sqrt(self.weight.size(1))
        self.weight.data.uniform_(-stdv, stdv)
        self.bias.data.uniform_(-stdv, stdv)

    def forward(self, x, a):
        support = torch.mm(x, self.weight)
        return torch.spmm(a, support) + self.bias


class GCN(nn.Module):
    def __init__(self):
        super().__init__()
        self.gc1 = GraphConvolution(n_feat, n_hid)
        self.gc2 = GraphConvolution(n_hid, n_class)

    def forward(self, x, a):
        x = F.relu(self.gc1(x, a))
        x = F.dropout(x, 0.2, training=self.training)
        return F.log_softmax(self.gc2(x, a), dim=1)


features = torch.randn(n, n_feat)
labels = torch.LongTensor(np.random.randint(0, n_class, size=n))
idx_train = torch.LongTensor(range(16))
idx_val = torch.LongTensor(range(16, n))
mask = features.new(n).fill_(1.0)  # a per-node weight buffer of the features' type
mask[idx_val] = 0.0

model = GCN()
optimizer = torch.optim.Adam(model.parameters(), lr=0.05, weight_decay=5e-4)
for epoch in range(30):
    model.train()
    optimizer.zero_grad()
    output = model(features, adj)
    loss_train = F.nll_loss(output[idx_train], labels[idx_train])
    if epoch % 10 == 0:
        # input-Jacobian penalty on one node's logits: the weights get gradients through it
        jac = torch.autograd.functional.jacobian(lambda f: model.gc2(F.relu(model.gc1(f, adj)), adj)[0], features,
                                                 create_graph=True)
        loss_train = loss_train + 1e-3 * jac.pow(2).sum()
    loss_train.backward()
    optimizer.step()
    model.eval()
    with torch.no_grad():
        output = model(features, adj)
        acc_val = (output[idx_val].argmax(1) == labels[idx_val]).float().mean()
    if epoch % 5 == 0:
        print(f"epoch {epoch:02d} loss {loss_train.item():.4f} val acc {acc_val.item():.4f}")

print("weighted nodes", mask.sum().item(), mask.type())
print("gc1 grad norm", round(model.gc1.weight.grad.norm().item(), 4))

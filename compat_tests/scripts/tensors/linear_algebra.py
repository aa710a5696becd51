"""Matrix products."""

import torch

A = torch.tensor([[1.0, 2.0], [3.0, 4.0]])
B = torch.tensor([[0.5, -1.0], [1.5, 2.0]])
v = torch.tensor([1.0, -1.0])
print(A @ B, torch.mm(A, B), A.matmul(B))
print(A @ v, torch.mv(A, v), v @ A, v.dot(v))
print(torch.bmm(torch.stack([A, B]), torch.stack([B, A])))
print(torch.outer(v, v), A.t(), A.T)
print(torch.arange(6.0).reshape(2, 3) @ torch.arange(6.0).reshape(3, 2))
print(torch.einsum("ij,jk->ik", A, B))
print(torch.inverse(A), torch.det(A))

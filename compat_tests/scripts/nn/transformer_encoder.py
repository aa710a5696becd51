"""A small transformer encoder (eval mode, so dropout is off) and multi-head attention."""

import torch
import torch.nn as nn

torch.manual_seed(0)
layer = nn.TransformerEncoderLayer(d_model=8, nhead=2, dim_feedforward=16, batch_first=True)
encoder = nn.TransformerEncoder(layer, num_layers=2, enable_nested_tensor=False)
encoder.eval()
x = torch.randn(2, 4, 8)
with torch.no_grad():
    y = encoder(x)
print(y.shape)
print(y[0])

attn = nn.MultiheadAttention(embed_dim=8, num_heads=2, batch_first=True)
out, weights = attn(x, x, x)
print(out.shape, weights.shape)
print(weights[0])
mask = nn.Transformer.generate_square_subsequent_mask(4)
print(mask)
emb = nn.Embedding(10, 8)
tokens = torch.tensor([[1, 2, 3, 0], [4, 5, 6, 7]])
print(encoder(emb(tokens)).abs().sum(-1))

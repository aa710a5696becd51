"""Recurrent layers: RNN, LSTM and GRU forward on a seeded batch, and an LSTM sequence classifier step."""

import torch
import torch.nn as nn

torch.manual_seed(0)
x = torch.randn(2, 5, 3)  # batch, time, features

rnn = nn.RNN(3, 4, batch_first=True)
out, h = rnn(x)
print(out.shape, h.shape)
print(h)

lstm = nn.LSTM(input_size=3, hidden_size=4, num_layers=2, batch_first=True)
out, (h, c) = lstm(x)
print(lstm)
print(out[:, -1], h.shape, c.shape)

gru = nn.GRU(3, 4)
out, h = gru(x.transpose(0, 1))
print(out.shape, h)


class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(3, 8, batch_first=True)
        self.head = nn.Linear(8, 2)

    def forward(self, seq):
        _, (h, _) = self.lstm(seq)
        return self.head(h[-1])


model = Classifier()
opt = torch.optim.Adam(model.parameters(), lr=0.01)
target = torch.tensor([0, 1])
for step in range(3):
    loss = nn.functional.cross_entropy(model(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
    print(step, loss.item())

"""Count regression on simulated data: Poisson counts drawn from a log-linear rate and binomial successes out
of varying trial counts, fitted by maximum likelihood (PoissonNLLLoss and the Binomial log-likelihood) with
Adam; then posterior-predictive draws from the fitted models."""

import torch
import torch.nn as nn
from torch.distributions import Binomial, NegativeBinomial, Poisson

torch.manual_seed(0)
n, d = 400, 3
X = torch.randn(n, d)
true_w, true_b = torch.tensor([0.4, -0.3, 0.2]), 1.2
y = torch.poisson(torch.exp(X @ true_w + true_b))
trials = torch.randint(5, 60, (n,)).float()
successes = torch.binomial(trials, torch.sigmoid(X @ torch.tensor([1.0, 0.5, -0.8]) - 0.3))
print("counts", y[:8].tolist(), "mean", round(y.mean().item(), 3))
print("successes", successes[:8].tolist(), "of", trials[:8].tolist())

pois = nn.Linear(d, 1)
logit = nn.Linear(d, 1)
opt = torch.optim.Adam(list(pois.parameters()) + list(logit.parameters()), lr=0.05)
nll = nn.PoissonNLLLoss(log_input=True)
for step in range(150):
    loss_p = nll(pois(X).squeeze(-1), y)
    loss_b = -Binomial(trials, logits=logit(X).squeeze(-1)).log_prob(successes).mean()
    opt.zero_grad()
    (loss_p + loss_b).backward()
    opt.step()
    if step % 50 == 0:
        print(f"step {step} poisson {loss_p.item():.4f} binomial {loss_b.item():.4f}")

print("poisson weights", [round(v, 2) for v in pois.weight.squeeze().tolist()], round(pois.bias.item(), 2))
print("logistic weights", [round(v, 2) for v in logit.weight.squeeze().tolist()], round(logit.bias.item(), 2))

with torch.no_grad():
    rate = pois(X[:5]).squeeze(-1).exp()
    print("predictive counts", Poisson(rate).sample((3,)).tolist())
    probs = torch.sigmoid(logit(X[:5]).squeeze(-1))
    print("predictive successes", Binomial(trials[:5], probs).sample((2,)).tolist())
    overdispersed = NegativeBinomial(torch.full((5,), 4.0), probs=rate / (rate + 4.0))
    print("negative binomial", overdispersed.sample((2,)).tolist(), overdispersed.mean.round(decimals=3).tolist())
print("next draw", torch.rand(3))

"""Variational inference with reparameterised Gamma and Beta draws: fit q(p) = Beta(a, b) to coin flips and
q(tau) = Gamma(k, r) to the precision of Gaussian data, maximising the ELBO with Adam."""

import torch
import torch.nn.functional as F
from torch.distributions import Bernoulli, Beta, Chi2, Dirichlet, Gamma, Normal, StudentT, kl_divergence

torch.manual_seed(0)
flips = (torch.rand(60) < 0.7).float()
data = torch.randn(80) * 0.5 + 1.0

raw_ab = torch.zeros(2, requires_grad=True)
raw_kr = torch.zeros(2, requires_grad=True)
opt = torch.optim.Adam([raw_ab, raw_kr], lr=0.05)
prior_p, prior_tau = Beta(2.0, 2.0), Gamma(1.0, 1.0)

for step in range(60):
    a, b = F.softplus(raw_ab) + 0.1
    k, r = F.softplus(raw_kr) + 0.1
    q_p, q_tau = Beta(a, b), Gamma(k, r)
    p = q_p.rsample((8,))
    tau = q_tau.rsample((8,))
    lik = Bernoulli(probs=p.unsqueeze(-1)).log_prob(flips).sum(-1).mean()
    lik = lik + Normal(1.0, tau.rsqrt().unsqueeze(-1)).log_prob(data).sum(-1).mean()
    elbo = lik - kl_divergence(q_p, prior_p) - kl_divergence(q_tau, prior_tau)
    opt.zero_grad()
    (-elbo).backward()
    opt.step()
    if step % 10 == 0:
        print(f"step {step} elbo {elbo.item():.3f} a {a.item():.4f} b {b.item():.4f} k {k.item():.4f}")

print("posterior mean p", round(q_p.mean.item(), 4), "true rate", flips.mean().item())
print("posterior mean tau", round(q_tau.mean.item(), 3), "1/var", round(1 / data.var().item(), 3))
print(q_p, q_tau)
print("entropies", round(q_p.entropy().item(), 4), round(q_tau.entropy().item(), 4))

# the rest of the family, seeded
d = Dirichlet(torch.tensor([1.0, 2.0, 3.0]))
print(d.sample((2,)), d.log_prob(torch.tensor([0.2, 0.3, 0.5])))
print(Chi2(torch.tensor([2.0, 5.0])).sample((3,)))
t = StudentT(3.0, 0.0, 2.0)
print(round(t.log_prob(torch.tensor(0.5)).item(), 5), t.variance)

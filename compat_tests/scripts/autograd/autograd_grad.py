"""torch.autograd.grad, higher-order gradients, hooks, and a custom autograd.Function."""

import torch

x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = (x**3).sum()
(g,) = torch.autograd.grad(y, x, create_graph=True)
print(g)
(g2,) = torch.autograd.grad(g.sum(), x)
print(g2)

h = torch.tensor([1.0, -1.0], requires_grad=True)
h.register_hook(lambda grad: grad * 10)
(h * h).sum().backward()
print(h.grad)


class Exp(torch.autograd.Function):
    @staticmethod
    def forward(ctx, i):
        result = i.exp()
        ctx.save_for_backward(result)
        return result

    @staticmethod
    def backward(ctx, grad_output):
        (result,) = ctx.saved_tensors
        return grad_output * result


a = torch.tensor([0.0, 1.0], requires_grad=True)
out = Exp.apply(a)
out.sum().backward()
print(out, a.grad)

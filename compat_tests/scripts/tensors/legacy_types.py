"""Legacy tensor types as older tutorials and repositories use them: typed constructors, type checks,
conversions by type and by name, and the typed-storage idiom of pre-1.0 code."""

import numpy as np
import torch

torch.manual_seed(0)

# constructors: data, sizes (uninitialised memory: only the shape is printed), nothing, numpy
labels = torch.LongTensor([0, 2, 1, 1])
weights = torch.FloatTensor([0.5, 1.0, 2.0])
mask = torch.ByteTensor([1, 0, 1, 1])
flags = torch.BoolTensor([True, False, True, True])
buffer = torch.FloatTensor(2, 3)
empty = torch.DoubleTensor()
from_np = torch.FloatTensor(np.array([[1, 2], [3, 4]]))
print(labels, weights, mask, flags, sep="\n")
print(buffer.shape, buffer.dtype, empty.shape, empty.dtype)
print(from_np, torch.IntTensor(torch.Size([3])).shape, torch.ShortTensor((1, 2)).dtype)
buffer.fill_(0.25)  # the usual next step after an uninitialised allocation
print(buffer)

# type(): names, and conversions by type object, by name and by dtype
x = torch.randn(2, 3)
print(x.type(), labels.type(), mask.type(), flags.type(), x.half().type(), x.to(torch.bfloat16).type())
print(x.type(torch.DoubleTensor).dtype, x.type("torch.IntTensor").dtype, x.type(torch.int8).dtype)
print(x.type(torch.FloatTensor) is x, torch.typename(labels))
print(labels.type(torch.FloatTensor) / 2)

# isinstance checks select code paths in old training loops
for t in (x, labels, mask, flags, torch.nn.Parameter(torch.ones(1))):
    kind = ("float" if isinstance(t, torch.FloatTensor) else "long" if isinstance(t, torch.LongTensor)
            else "byte" if isinstance(t, torch.ByteTensor) else "other")  # fmt: skip
    print(kind, isinstance(t, torch.Tensor), isinstance(t, torch.cuda.FloatTensor))

# a one-hot encoding written the pre-1.0 way
one_hot = torch.FloatTensor(len(labels), 3).zero_()
one_hot.scatter_(1, labels.view(-1, 1), 1)
print(one_hot)

# the legacy type of a tensor as a factory for more of the same kind
Kind = torch.FloatTensor if x.type() == "torch.FloatTensor" else torch.DoubleTensor
print(Kind([1, 2, 3]) * weights, torch.FloatTensor.sum(weights))
alias = torch.FloatTensor(weights)
alias[0] = -1
print(weights)

# errors old code runs into
for bad in (lambda: torch.FloatTensor(1.5), lambda: torch.FloatTensor(torch.ones(2, dtype=torch.float64)),
            lambda: x.type("FloatTensor")):  # fmt: skip
    try:
        bad()
    except (TypeError, ValueError) as e:
        print(type(e).__name__, str(e).split("\n")[0][:90])

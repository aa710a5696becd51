"""The rooms of the package, bottom to top: the layer order, written once (CONTRIBUTING.md, "Where code goes").

A module imports its own room and lower ones only; an upper room that needs to extend a lower one attaches
methods at import time or sets a hook the lower room declares. tests/test_layering.py reads this table and
checks every import of the package against it (without importing the package). Nothing here is imported
at run time."""

# (module prefix or prefixes, rank, why it sits there). A module belongs to the room of its longest matching prefix;
# it may import its own room and lower ranks only. Rooms of equal rank may import each other, but no
# circle may form between rooms.
ROOMS = [
    ("torchlike._layers", 0, "this table: imports nothing"),
    ("torchlike._precision", 0, "the matmul-precision flag: imports only jax"),
    ("torchlike._weights_only_unpickler", 0, "a restricted unpickler: imports only the stdlib"),
    ("torchlike.compat._names", 0, "torch <-> torchlike module names: imports only the stdlib"),
    ("torchlike._core", 0, "dtype, device, storage, Tensor, generator, printing, and the tape (graph) and grad "
     "modes that ops record onto: what everything stands on"),
    ("torchlike._ops", 2, "the op table and its families: tensors in, tensors out, recorded on the tape"),
    ("torchlike.utils.dlpack", 2, "DLPack exchange over _core tensors (creation re-exports from_dlpack)"),
    ("torchlike.autograd", 3, "backward runs the tape's vjps (create_graph replays them through the op table), "
     "Tensor.backward and hooks, custom Functions, jacobian/hessian composed from ops"),
    ("torchlike._public", 3, "small top-level helpers written with ops"),
    ("torchlike.random", 3, "torch.random: seeding and generator state over the op table's RNG"),
    ("torchlike.linalg", 3, "a namespace re-exporting ops"),
    ("torchlike.special", 3, "a namespace re-exporting ops"),
    ("torchlike.fft", 3, "a namespace re-exporting ops"),
    ("torchlike.sparse", 3, "sparse COO tensors and the sparse x dense product, over the op table"),
    ("torchlike.distributed", 3, "process groups and collectives over tensors"),
    ("torchlike.amp", 3, "the autocast policy and GradScaler: read by ops' callers, built from ops"),
    ("torchlike.cuda", 4, "device queries; cuda.amp re-exports amp"),
    ("torchlike.cpu", 4, "cpu.amp re-exports amp"),
    ("torchlike.backends", 4, "backend flags, reading cuda's device queries"),
    ("torchlike.nn", 5, "modules (nn.functional is generated from _ops.nn): built from ops, autocast, collectives"),
    ("torchlike.distributed.fsdp", 6, "FSDP wraps nn.Modules and shards their parameters"),
    ("torchlike.distributed.checkpoint", 7, "state dicts of modules, DDP and FSDP, saved and loaded"),
    ("torchlike.optim", 6, "optimizers step nn.Parameters (swa_utils averages Modules)"),
    ("torchlike.utils", 6, "data loading, checkpointing, tensorboard: use nn and amp"),
    ("torchlike.multiprocessing", 6, "multiprocessing's API; tensors and Parameters cross processes in shared memory"),
    ("torchlike.jit", 6, "script/trace stand-ins over nn.Module"),
    ("torchlike._serialization", 7, "torch's file format: pickles tensors and nn.Parameters"),
    ("torchlike.serialization", 7, "save/load, over _serialization"),
    ("torchlike._compile", 7, "torchlike.compile lifts nn/optim/amp state into one jax.jit program"),
    ("torchlike.func", 7, "torch.func transforms over modules and ops"),
    ("torchlike._dynamo", 8, "torch._dynamo stand-ins over _compile"),
    ("torchlike.compiler", 8, "torch.compiler stand-ins over _compile"),
    ("torchlike.distributions", 9, "a client of the public namespace, written as user code is"),
    ("torchlike.autograd.gradcheck", 9, "torch.autograd.gradcheck: numerical checks written against the public API"),
    ("torchlike.nn.utils.prune", 9, "torch.nn.utils.prune: reparametrises Modules through the public API"),
    ("torchlike.masked", 9, "torch.masked: masked reductions composed from public ops, as user code is"),
    ("torchlike.testing", 9, "a client of the public namespace"),
    ("torchlike.vision", 9, "a client of the public namespace"),
    ("torchlike.compat", 9, "run-both-and-compare tools: clients of the public namespace"),
    ("torchlike.__main__", 10, "the command line"),
    ("torchlike", 10, "the public namespace: re-exports every room"),
]
# A package's __init__ re-exports its own modules, whatever their rooms (public paths mirror torch's; implementation files are private): those imports
# are not counted. Rooms at rank 9 are written against the public API (`import torchlike`), as a user's code is; their
# imports of the top-level namespace are neither upward imports nor circles.
FACADE_CLIENT_RANK = 9

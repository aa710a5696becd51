"""Every known, deliberate divergence from torch, in one place.

A test that skips or relaxes a torch comparison cites a key here (``differences.skip(key)``), and
``docs/generate.py`` turns this table into docs/differences.md and the README's list. Each entry:
key -> (area, what differs, why).
"""

from __future__ import annotations

DIFFERENCES: dict[str, tuple[str, str, str]] = {
    "save_hard_links": (
        "serialization", "`save()` to a regular file with other hard links replaces it atomically (with a warning), so "
        "the other names keep the previous checkpoint; torch overwrites the shared file in place.",
        "Rewriting a file in place can leave a half-written checkpoint if the process dies; a rename cannot.",
    ),
    "load_not_a_pickle": (
        "serialization", "`load()` (weights_only) of a file that is not a pickle raises `pickle.UnpicklingError` with "
        "torch's 'Weights only load failed' message; for a few leading bytes torch's weights-only unpickler lets a "
        "`KeyError` (a memo read, e.g. a text file starting with 'h') or an `IndexError` (a stack pop, e.g. 'a') escape.",
        "Those escapes are accidents of torch's unpickler; torchlike reports every malformed pickle the same way "
        "(torch's own type for the rest, as the fuzz suite checks).",
    ),
    "kernel_cache_flush": (
        "speed", "Past `torchlike.set_kernel_cache_size(n)` compiled executables (default 512), the executables of the "
        "least recently used kernels are dropped until half the limit is free; such a kernel compiles again if it is "
        "called again (from the persistent cache when that is on). torch compiles nothing.",
        "JAX keeps one executable per input shape per kernel without bound; dropping the least recently used ones "
        "keeps memory level under shapes that keep changing while the working set stays compiled (docs/caches.md).",
    ),
    "empty_values": (
        "creation", "`torch.empty` (and `empty_like`, `new_empty`) return zeros instead of uninitialised memory.",
        "JAX has no uninitialised arrays; the values of torch's are arbitrary anyway.",
    ),
    "contiguous_results": (
        "tensors", "Results of ops are contiguous; torch's elementwise ops can keep a permuted input's layout, "
        "visible only through `stride()`/`is_contiguous()` of such results.",
        "XLA chooses layouts itself; views (which keep torch's strides exactly) are unaffected.",
    ),
    "half_grad_formulas": (
        "amp", "bfloat16/float16 gradients of `a / b` with respect to `b`, of `add`/`sub`'s `other` with an "
        "`alpha`, and "
        "of `addcmul`'s tensors round once where torch's derivative formulas round after each of their half-precision "
        "ops (`-grad * ((a / b) / b)`): on random bf16 inputs 23-47% of those gradient elements are one bf16 ulp "
        "(2**-8 relative) apart. Their forward values, the gradients of the autocast ops (`linear`, `matmul`, "
        "convolutions), and the values and gradients of the ops torch computes in float32 (`mul`/`div` by numbers, "
        "`sigmoid`, `tanh`, `silu`, `elu`, `softplus`, `leaky_relu`, `softmax`, `sqrt`, `reciprocal`) are torch's "
        "bit for bit.",
        "The backward of an op is `jax.vjp` of its forward kernel, computed in float32 and rounded once; torch's "
        "composite formulas would need one hand-written backward per op.",
    ),
    "float32_reduction_order": (
        "amp", "A printed `clip_grad_norm_` (or `vector_norm`) of float32 gradients can differ from torch's in the 5th "
        "digit for large models: torch's CPU norm sums squares in 16 AVX-512 lanes one after another, losing about "
        "2e-5 relative at 1.8M parameters (measured: torch prints 0.7129453 where the exact norm of its own gradients "
        "is 0.7129310) and 5e-5 to 9e-5 at 4M; torchlike's is within 1e-7 of the exact norm. Likewise a bfloat16 GEMM "
        "accumulates in float32 in a different order, so about 1 in 10,000 outputs rounds to the neighbouring bf16 "
        "value (torch's own results are 1-2 per 10,000 off the exactly rounded ones), and training amplifies such "
        "flips: an 8-layer width-512 MLP under CPU autocast agrees with torch to about 1e-5 on its losses after 6 "
        "steps.",
        "Summation order is the CPU kernel's (vector width, threads); reproducing it would serialise XLA's "
        "reductions and GEMMs.",
    ),
    "lbfgs_float32_dots": (
        "optim", "float32 `LBFGS` follows torch's trajectory to about 1e-5 relative over a few steps, not bit for bit "
        "(float64 agrees to 1e-10): its dot products (`y.dot(s)`, the two-loop recursion) sum in XLA's order, torch's "
        "in MKL's `sdot` order, and each step's 20 iterations amplify the last-bit differences.",
        "MKL picks its summation order from the CPU, so torch's own float32 trajectories differ between machines.",
    ),
    "sparse_coo_subset": (
        "tensors", "Sparse COO tensors support what graph code uses (docs/sparse.md): construction from any integer "
        "indices (also the legacy `torch.sparse.FloatTensor`...), coalescing, `to_dense`/`to_sparse` of any dense "
        "tensor, sums over dims, `index_select`, `torch.sparse.softmax`/`log_softmax`, sparse +/- sparse, dense +/- "
        "sparse, * and / by numbers, * by sparse or same-shape dense tensors, transpose, dtype conversions, and every "
        "2-D sparse/dense pairing of `mm`/`matmul`/`@`/`mv`/`torch.sparse.mm` with gradients to the dense operand and "
        "the values. A sparse leaf that requires grad in products other than `torch.sparse.mm`, batched dense @ "
        "sparse, 1-D sparse operands, other ops, hybrid tensors and the CSR/CSC/BSR layouts raise "
        "NotImplementedError; torch's one-time 'Sparse invariant checks are implicitly disabled' warning is not "
        "printed.",
        "A sparse leaf's gradient outside its stored entries has no place in this design's values-only gradients; "
        "the rest of torch's sparse op set is large and rarely met.",
    ),
    "dirichlet_grad": (
        "random", "`Dirichlet.rsample` and `Beta.rsample` gradients (`torch._dirichlet_grad`) agree with torch's to about "
        "1e-3 relative, not bit for bit; the draws themselves, and `Gamma`/`Chi2`/`StudentT`/`FisherSnedecor` "
        "gradients (`torch._standard_gamma`'s), are torch's.",
        "torch evaluates series and rational approximations of -(dCDF/dalpha)/pdf for the marginal Beta; torchlike "
        "differentiates the Beta CDF numerically in float64, which is at least as accurate but rounds apart.",
    ),
    "binomial_grad": (
        "random", "`torch.binomial` of a `count` or `prob` that requires grad returns a tensor that does not require "
        "grad; torch's has `grad_fn=<NotImplemented>`, whose backward raises. The draws are torch's.",
        "torch registers no derivative for binomial; the node exists only to raise on backward, and "
        "`Binomial.sample` (the common path) runs under no_grad in both.",
    ),
    "int_div_zero": (
        "ops", "Integer division or remainder by zero returns an unspecified value instead of raising "
        "`ZeroDivisionError` on GPU-resident or traced values (eager CPU calls raise as torch does).",
        "XLA integer division does not trap; checking every divisor on a device would cost a sync per op.",
    ),
    "gpu_index_bounds": (
        "indexing", "On GPU, out-of-range integer indices are clamped (torch raises a device-side assert); on CPU "
        "torchlike raises torch's `IndexError`.",
        "Checking bounds on the GPU needs a device-to-host sync per indexing op.",
    ),
    "complex32": (
        "dtypes", "`float16` promoted with a complex number (torch: `complex32`) raises `NotImplementedError`.",
        "JAX has no complex32.",
    ),
    "cuda_random_stream": (
        "random", "On CUDA tensors and inside `torchlike.compile`, random numbers come from a `jax.random` key "
        "stream seeded by `manual_seed`: reproducible, but not torch's Philox numbers.",
        "torch's CUDA generator is not reproduced; the CPU generator is, bit for bit.",
    ),
    "double_backward_names": (
        "autograd", "With `create_graph=True`, the gradient graph records the ops of torch's backward formulas for "
        "6 ops: `exp`, `tanh`, `sigmoid`, `pow`/`**` with a number exponent, `mul` of same-shape tensors and 2-D "
        "`mm`/`@` (torch's names and structure: `MulBackward0` over `MulBackward1` over `PowBackward0`, "
        "`TanhBackwardBackward0`, `MmBackward0` over `TBackward0`), and names convolutions' gradient node "
        "`ConvolutionBackwardBackward0` (its `next_functions` list input, weight, incoming gradient where torch's "
        "list the incoming gradient first). For the other ops, and for broadcast or "
        "mixed-dtype operands of these, a gradient's node is named after the forward node it differentiates, with "
        "that node's inputs and the incoming gradient as its `next_functions` (`SinBackward0` over x where torch "
        "records `MulBackward0` over `CosBackward0`). Values and gradients are the same.",
        "Each other op's gradient graph is `jax.vjp` of its forward kernel, recorded as one node; torch's graph "
        "would need one hand-written formula per op (derivatives.yaml has about 1,800).",
    ),
    "compile_python_side_effects": (
        "compile", "A compiled function replays tensor state changes, not Python-level side effects: a "
        "`scheduler.step()` or a Python counter inside the compiled function runs only while tracing. Keep such "
        "calls outside (as usual: per epoch).",
        "torchlike.compile functionalizes tensor state; torch's Dynamo also replays Python bytecode side effects.",
    ),
    "compile_rounding": (
        "compile", "Inside `torchlike.compile`, optimizer steps on CPU tensors use plain float32 arithmetic (fused by "
        "XLA) instead of reproducing torch's CPU rounding bit for bit as eager steps do: results agree to float32 "
        "rounding, not to the last bit.",
        "torch.compile makes the same trade (its generated kernels round differently from eager); the rounding "
        "fences would stop XLA fusing the update.",
    ),
    "compile_graph_breaks": (
        "compile", "A graph break (`.item()`, `bool(t)`, data-dependent shapes) makes that call signature run "
        "eagerly as a whole, where torch.compile splits the function into compiled pieces around the break.",
        "One XLA program per call signature keeps the design simple and the common case fastest.",
    ),
    "new_shape_compiles": (
        "speed", "Each new tensor shape an op meets costs an XLA compile (~10-40 ms on a CPU): loops whose shapes "
        "change every iteration (growing sequences in sampling) run much slower than in torch; a fixed-size window "
        "(as examples/char_transformer.py samples) compiles once.",
        "XLA compiles per shape; torch's eager kernels are shape-generic.",
    ),
    "checkpoint_non_reentrant": (
        "autograd", "`torch.utils.checkpoint.checkpoint(..., use_reentrant=False)` drops the region's activations "
        "and recomputes them in backward as torch does (a chain of 8 matmul+tanh layers on 512x256 activations: "
        "the graph holds 1 MiB instead of 11.5 MiB, custom `autograd.Function`s' `save_for_backward` tensors "
        "included), except that `debug=True` does not add torch's operator logs to a determinism error. The "
        "counts in that error are torch's for ops whose saved tensors are all inputs or outputs; an op that saves "
        "an extra buffer (dropout's mask) counts one less.",
        "Recomputation hooks into torchlike's nodes, not into saved-tensor hooks; torch's debug logs come from its "
        "dispatcher's operator log.",
    ),
    "anomaly_traceback": (
        "autograd", "Anomaly mode's \"Error detected in XBackward0. Traceback of forward call that caused the "
        "error\" warnings (and \"Previous calculation was induced by ...\" for nodes a create_graph backward made) "
        "have torch's text without its C++ \" (Triggered internally at ...)\" suffix, and a node made inside a "
        "backward lists the user's frames only, where torch's also lists 2 frames of its own autograd code.",
        "torchlike has no C++ warning source, and its internal frames are not torch's.",
    ),
    "jit_is_eager": (
        "jit", "`torch.jit.script`/`trace` return objects that run the eager Python code (with torch's deprecation "
        "warnings); code TorchScript would reject is accepted, a scripted module is an instance of the original class, "
        "and `.code`/`.graph`/`.save`/`jit.load` raise NotImplementedError.",
        "TorchScript is a separate compiler; torchlike.compile is the compiler here.",
    ),
    "topk_gpu_order": (
        "sorting", "`topk` reproduces torch's CPU index order among equal values (and for `sorted=False`); on GPUs "
        "and inside `torchlike.compile` equal values come in index order.",
        "torch's CUDA kernels order ties differently again; the CPU order is emulated on the host.",
    ),
    "cpu_vector_math": (
        "ops", "float32 `sqrt`, `log` and `exp` (and torch's other MKL vector functions: `sin`, `cos`, `tan`, `tanh`, "
        "`erf`, `erfinv`, `log2`, `log10`) can differ from torch's CPU results in the last bit or few: torch calls "
        "MKL's VML (high-accuracy mode, not correctly rounded), whose code path MKL picks from the CPU's vendor and "
        "instruction set (`ATEN_CPU_CAPABILITY` does not change it). On an AMD EPYC with AVX-512, 17% of torch's "
        "float32 `sqrt` results are one ulp off the IEEE square root torchlike uses; its `log` is within 1 ulp of "
        "torchlike's (XLA's), its `exp` within 5. Seeded Gumbel/LogNormal samples therefore match in the last ulps "
        "rather than bit for bit, and 50-step float32 optimizer trajectories that take square roots (Adam family, "
        "RMSprop, Adagrad) drift apart by up to ~1e-4 relative, as torch's own do between CPUs.",
        "torch's result here depends on the machine's MKL path and differs between CPUs; torchlike's is the same on "
        "every CPU. The rest of torch's optimizer arithmetic is reproduced for the kernels torch picks: fused "
        "multiply-adds under its AVX2/AVX-512 kernels, separate roundings under its baseline ('default') ones.",
    ),
    "random_pre_avx2": (
        "random", "On an x86-64 CPU without AVX2 (torch's baseline 'default' kernels, which `ATEN_CPU_CAPABILITY=default` "
        "also selects), seeded float32 `normal_` draws of 16 or more elements and `log1p`-based samples (Laplace) "
        "can differ from torch's in the last ulp (measured: 2.4e-7 relative at most).",
        "The CPU generator reproduces torch's AVX2/AVX-512 kernels bit for bit; its baseline kernels round these "
        "draws differently, and a machine without AVX2 is rare.",
    ),
    "worker_ops": (
        "data", "In DataLoader workers started with `fork` (the Linux default), ops run through a NumPy evaluator "
        "that covers what datasets do (conversions, arithmetic, reshapes, reductions, sorting, matmul, indexing); "
        "ops outside it (convolutions, decompositions, FFTs) raise a clear error there; "
        "`multiprocessing_context='spawn'` lifts this.",
        "JAX's runtime does not survive `fork`; tracing does, so kernels are evaluated with NumPy instead.",
    ),
    "profiler_no_op_events": (
        "profiler", "`torch.profiler` records `record_function` ranges and `ProfilerStep*` on host timers; it "
        "records no per-op (`aten::*`) events, no shapes, memory or FLOPs.",
        "Ops run inside fused JAX programs; ranges are also JAX `TraceAnnotation`s, so `jax.profiler.trace` "
        "shows them next to XLA's own events.",
    ),
    "num_threads_recorded": (
        "runtime", "`set_num_threads`/`set_num_interop_threads` are recorded and read back by the getters, with "
        "a warning, but do not resize XLA's CPU thread pool.",
        "XLA sizes its thread pool when JAX starts; set `XLA_FLAGS` before importing torchlike.",
    ),
    "fused_graph_nodes": (
        "autograd", "Fused ops (linear, matmul, conv, cross_entropy) show torch's inner nodes in `next_functions`, and "
        "Node hooks on the op's node and on every node shown inside a linear, matmul or cross_entropy "
        "(`AddmmBackward0`/`MmBackward0`/`BmmBackward0`, `TBackward0`, the view/expand/clone/transpose chains, "
        "`NllLossBackward0`/`NllLoss2DBackward0` over `LogSoftmaxBackward0`) run in torch's engine order on torch's "
        "gradients, replacements flowing on (with `create_graph` too: compat_tests/test_graph_shapes.py, 35 graph "
        "shapes), with one exception: in a backward through `create_graph` gradients, torch runs the hooks of shown "
        "nodes whose outputs its formulas saved (the viewed or unsqueezed input of an mm, the `t()` of a weight) "
        "again, on the gradient that reaches them through those formulas as well; torchlike's see the gradient of "
        "the first-order path only (and do not run where only the formulas' path reaches them). A leaf's hooks "
        "(tensor, post-accumulate-grad) run after all of the op's shown nodes where torch runs its AccumulateGrad "
        "between them (a linear's weight before the input's view). The gradients a hooked op passes on are computed node by node, as "
        "torch's: within 1e-5 of the fused ones.",
        "torchlike runs such an op as one kernel with one backward node; the chain is replayed from the op's "
        "arguments only when hooks ask for it, and the replayed chain's recorded ops take the op's inputs, not the "
        "shown nodes' outputs, as saved values.",
    ),
    "memory_formats": (
        "tensors", "Tensors keep a row-major layout: `to(memory_format=torch.channels_last)`, `contiguous(memory_format=...)`, "
        "`clone(memory_format=...)` and the factories' `memory_format=` give row-major strides, so `stride()` and "
        "`is_contiguous(memory_format=...)` answer for that layout (a channels-last tensor made by permuting a copy answers "
        "as torch's). Values, and every result computed from them, are torch's.",
        "XLA picks its own layouts inside a program; a stride layout chosen per tensor would change no value, and "
        "torchlike models strides for views only.",
    ),
    "pinned_memory": (
        "devices", "`Tensor.pin_memory()` returns a copy (with a GPU present) and `is_pinned()` is always False.",
        "JAX manages host-device transfers itself; torchlike keeps no page-locked buffers.",
    ),
    "gradcheck_slow_mode": (
        "autograd", "`gradcheck`'s slow and fast (`fast_mode=True`, torch's random projections from the same "
        "generator stream) checks, its reentrancy check and its backward-multiplied-by-grad_output check are "
        "torch's, except that the reentrancy check lets two backwards differ by up to 16 ulps (the engine's first "
        "backward of a graph runs node by node, later ones as one XLA program: 1 ulp apart for a matmul+tanh in "
        "float64). The undefined-grad check is not made, `fast_mode` with complex tensors raises "
        "NotImplementedError, and batched-grad / forward-AD checks raise NotImplementedError.",
        "torchlike's engine never runs a backward with undefined output gradients only (a node no gradient reaches "
        "is skipped), so the undefined-grad check has nothing to exercise; there is no forward-mode AD or vmap "
        "over the tape.",
    ),
    "vision_no_download": (
        "vision", "`torchlike.vision` never downloads: datasets with `download=True` and models with `weights=` "
        "read local files (dataset roots, the `$TORCH_HOME/hub/checkpoints` cache) and otherwise raise an error "
        "naming the files to place.",
        "torchlike runs where there may be no network; a half-finished download is worse than a clear error.",
    ),
    "vision_v2_uint8_resize": (
        "vision", "`transforms.v2` resizes uint8 tensors through float32 as v1 does (v1 with torch's kernel "
        "arithmetic, so its levels are torchvision's); torchvision's v2 uses torch's native uint8 kernel on CPU, "
        "which can differ by one level. torchvision's `tv_tensors` (BoundingBoxes, Mask, ...) are not provided: "
        "v2 transforms the first image of their input and passes the rest through.",
        "Both need torchvision's C++ kernels / tensor subclass machinery; plain images behave as in torchvision.",
    ),
    "vision_codecs": (
        "vision", "`torchvision.io` encodes and decodes with Pillow: PNG pixels are torchvision's (a colour PNG "
        "read as `GRAY` takes libpng's fixed-point conversion), JPEG pixels can differ from torchvision's libjpeg "
        "decode by a level, and encoded bytes are Pillow's.",
        "torchvision's codecs are C++ extensions.",
    ),
    "vision_roi_align_grad": (
        "vision", "`ops.roi_align` and `ops.nms` run on the host in NumPy; `roi_align` has no backward and raises "
        "when its input requires grad.",
        "torchvision's kernels are C++/CUDA extensions; the forward arithmetic is reproduced, the backward not yet.",
    ),
    "mp_default_spawn": (
        "multiprocessing", "`torch.multiprocessing`'s default start method is `spawn` (torch's, on Linux, is `fork`), "
        "so `get_start_method()` says 'spawn' and a `Process` target must be importable (defined at module level, "
        "with the `if __name__ == '__main__':` guard). Asking for `fork` raises a RuntimeError when a process "
        "starts; `forkserver` works (its server preloads nothing). The standard `multiprocessing` module is "
        "unchanged, and its forked children cannot run torchlike ops.",
        "A forked child inherits JAX's runtime without its threads: its first computation would hang.",
    ),
    "mp_sharing": (
        "multiprocessing", "Shared CPU tensors live in named memory-mapped blocks (`/dev/shm`), whatever "
        "`set_sharing_strategy` says; every read of a shared tensor copies the block (JAX arrays cannot alias "
        "memory that other processes write). Sending a CUDA tensor to another process raises (torch uses CUDA "
        "IPC). `detach()` of an inference tensor shares its storage, so in-place updates of it outside "
        "`inference_mode` raise as for the tensor itself (torch allows them on the detached alias).",
        "JAX arrays are immutable and device-resident; the numpy-backed buffer is the one mutable, shareable form.",
    ),
    "legacy_uninitialised": (
        "creation", "Legacy constructors with sizes (`torch.FloatTensor(2, 3)`, `torch.Tensor(5)`) return zeros, as "
        "`torch.empty` does; the legacy type objects' module is `torchlike` (`<class 'torchlike.FloatTensor'>`).",
        "JAX has no uninitialised arrays; torch's values there are arbitrary.",
    ),
    "functional_create_graph": (
        "autograd", "With `create_graph=True`, whether a gradient requires grad is decided from what its value is "
        "computed from, corrected by torch's formulas where they read an input structurally (pooling, padding, "
        "convolution, losses selecting through masks; compat_tests/test_create_graph_torch.py checks 36 ops at "
        "first order and 29 more to second order, jvp and vhp; the 4 whose second derivative torch lacks raise its "
        "error). All 120 ops measured match, convolutions' second order included (torch's double backward gives "
        "the input a gradient only through the weight's gradient and the weight one only through the input's: None, "
        "not zeros, when the other is not differentiated; 4 convolutions checked). Values, and gradients that flow "
        "through them, are torch's.",
        "A node's gradient graph is `jax.vjp` of its forward op, whose data dependence is read from the VJP's "
        "jaxpr, with rules per op for torch's formulas (autograd/_higher.py); the convolution rule is applied when "
        "the recorded VJP runs, as it depends on which of its outputs get a gradient.",
    ),
    "func_transforms_detach": (
        "autograd", "Results of `torch.func` `grad`, `grad_and_value`, `jacrev`, `jacfwd`, `hessian`, `vmap` and `jvp` "
        "connect to the outer autograd graph through the transform's arguments (gradients and `requires_grad` "
        "as torch's: compat_tests/test_func.py), but as one node named after the transform (`GradBackward0`, "
        "`JacrevBackward0`, `JacfwdBackward0` (also for `hessian`), `VmapBackward0`, `JvpBackward0`) where torch's `grad_fn` is "
        "the last op of the computation (`MulBackward0`). Tensors the function reads from its closure get "
        "their gradients where torchlike finds them (a module's parameters, closure cells, defaults, "
        "`functools.partial` arguments and the globals the code names, a few functions deep); one reached only "
        "through another object's attribute, or a view, stays a constant of the trace (its `.grad` stays None "
        "where torch's gets one). `vjp`'s output and its vjp function's results connect as torch's do (the vjp "
        "function runs the forward again); `linearize`'s jvp function's results do not require grad unless a "
        "tangent does (torch's do, though no gradient reaches the primals through them).",
        "The transforms are JAX transforms of the function over its arguments, recorded as one op whose backward "
        "is the transform's VJP; captured tensors become extra inputs of that op only where Python shows them, "
        "and torch's linearize traces its jvp function with the primals' values as constants.",
    ),
}


def skip(key: str) -> str:
    """A skip/xfail reason that cites a DIFFERENCES entry (raises KeyError for unknown keys)."""
    area, what, why = DIFFERENCES[key]
    return f"known difference '{key}' ({area}): {what}"

"""torchlike.compile: run a torch-style function as ONE jax.jit program, by functionalization.

A compiled function is called on ordinary tensors and touches ordinary state (parameters,
``.grad``s, optimizer state, BatchNorm buffers, the RNG) through Python objects. To make that a
pure program we lift every piece of state it touches into explicit inputs and outputs:

1. The first call for a given signature runs eagerly, with a hook on tensor buffers that records
   every pre-existing buffer it reads or writes (the state) and the tensors they belong to.
2. The next call traces the function under ``jax.jit``: the state buffers and the arguments'
   buffers temporarily hold tracers, random draws come from a key that is itself state, and the
   final contents of the state buffers -- plus new tensors that outlive the call, like fresh
   ``.grad``s -- are the program's outputs. A buffer the trace touches that discovery missed
   triggers a retrace with it included, so no state is ever baked in as a constant.
3. Later calls check guards (argument shapes/dtypes, static arguments, that state tensors still
   own the buffers they had, which ``.grad``s are None) and run the compiled program, then write
   the new state back through the buffers and replay ``.grad`` rebinding. On a steady call the
   guards, gathering the state arrays and writing results back are each one comprehension or
   C-level pass against lists the entry computed once (no call, branch or dict per state array).

Where Python needs a concrete value (``.item()``, ``if t:``, ``print(t)``, data-dependent shapes)
the trace fails; that signature then runs eagerly with a one-time warning naming the line
(``fullgraph=True`` raises instead).
"""

from __future__ import annotations

import collections
import operator
import os
import traceback
import warnings
import weakref
from typing import Any, Callable

import jax
import jax.numpy as jnp
import numpy as np

from .._core import _xla_tiers, lazy
from .._core import dtype as D
from .._core import tensor as T
from .._core.tensor import Buffer, Tensor
from ..amp import autocast_mode
from ..autograd import grad_mode
from ..optim import _fused
from ..optim import lr_scheduler as _lr_scheduler

stats = collections.Counter()  # compiles, recompiles, calls, eager_calls, graph_breaks, retraces


class config:
    """Knobs mirroring torch._dynamo.config."""

    recompile_limit = 8
    cache_size_limit = 8  # torch's older name
    check_calls = 2  # calls checked against eager under mode="check"


class Unsupported(RuntimeError):
    """What torch raises (torch._dynamo.exc.Unsupported) for a graph break under fullgraph=True."""


class _GraphBreak(Exception):
    """Raised while tracing by code whose Python side effects a compiled program cannot replay."""


def python_side_effect(what: str) -> None:
    """Called by code that changes Python state a program can't carry (e.g. an LR scheduler's step):
    inside a trace it breaks the graph, so that call signature runs eagerly and stays correct."""
    if isinstance(T.hook, _TraceHook):
        raise _GraphBreak(what)


class _NeedState(Exception):
    def __init__(self, buf: Buffer) -> None:
        self.buf = buf


_TRACER_ERRORS = (
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerArrayConversionError,
    jax.errors.TracerIntegerConversionError,
    jax.errors.TracerBoolConversionError,
)


class _Discover:
    """Hook for the eager discovery call: which pre-existing buffers are state."""

    def __init__(self) -> None:
        # creation order, not a WeakSet's hash order: the program's argument order must be the same in
        # every process for the persistent compilation cache to find it
        self._created: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.touched: dict[int, Buffer] = {}
        self.written: set[int] = set()
        self.scalars: dict = {}

    def created(self, buf: Buffer) -> None:
        self._created[buf] = None

    def read(self, buf: Buffer) -> None:
        if buf not in self._created:
            self.touched[id(buf)] = buf

    def write(self, buf: Buffer) -> None:
        self.read(buf)
        self.written.add(id(buf))


class _NeedScalar(Exception):
    def __init__(self, key: tuple, ref: tuple) -> None:
        self.key = key
        self.ref = ref


class _TraceHook:
    """Hook while tracing: lifted buffers hold tracers; anything else pre-existing is new state."""

    def __init__(self, lifted: set, scalars: dict) -> None:
        self.lifted = lifted
        self.scalars = scalars  # (id(container), key) -> tracer
        self._created: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.used: set = set()  # lifted buffers the function read or wrote

    def created(self, buf: Buffer) -> None:
        self._created[buf] = None

    def read(self, buf: Buffer) -> None:
        if id(buf) in self.lifted:
            self.used.add(id(buf))
            return
        if buf in self._created:
            return
        raise _NeedState(buf)

    write = read


class _TraceRNG:
    """Random draws inside a compiled program: jax.random from a key that is program state."""

    def __init__(self, key: Any) -> None:
        self._key = key
        self.count = 0

    def key(self) -> Any:
        self.count += 1
        return jax.random.fold_in(self._key, self.count)

    def draw(self, kind: str, shape: tuple, dt: Any, **params: Any) -> Any:
        from .._ops import random

        return random._jax_draw(kind, self.key(), shape, dt, **params)

    def permutation(self, n: int, dt: Any) -> Any:
        return jax.random.permutation(self.key(), n).astype(dt.np)

    def next_key(self) -> Any:
        return jax.random.split(self._key)[0]


_PLAIN: set = set()  # the concrete types of JAX arrays Buffer.get() returned: arrays a call may pass as they are


def _flatten(tree: Any) -> tuple[list, Any]:
    return jax.tree_util.tree_flatten(tree, is_leaf=lambda x: isinstance(x, Tensor))


def _static_key(x: Any) -> Any:
    try:
        hash(x)
        return x
    except TypeError:
        return ("id", id(x))


class _Entry:
    """One compiled program for one call signature."""

    __slots__ = ("state", "state_tensors", "compiled", "out_tree", "out_static", "escaped", "grad_effects",
                 "eager", "pure", "has_random", "n_state", "calls", "scalars", "fwd", "n_mut", "training", "changed",
                 "packed", "device", "scalar_host", "scalar_dev", "state_pos", "jitted", "failed",
                 "unused", "lowered", "platform",  # lowered: the trace, until tiers start
                 "owner_refs", "owner_bufs", "grad_none", "scalar_raw", "dups", "donates",
                 "__weakref__")  # fmt: skip


def _user_frame(tb: Any) -> str:
    """The innermost frame of user code (outside torchlike and jax) in a traceback."""
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    frames = [f for f in traceback.extract_tb(tb)
              if not f.filename.startswith(here) and "/jax/" not in f.filename and f.filename != "<string>"]  # fmt: skip
    if not frames:
        return "<unknown>"
    f = frames[-1]
    return f"{f.filename}:{f.lineno} ({f.line})"


class CompiledFunction:
    """The callable ``torchlike.compile(fn)`` returns."""

    def __init__(self, fn: Callable, fullgraph: bool = False, dynamic: Any = None, mode: str | None = None,
                 options: dict | None = None, disable: bool = False) -> None:
        self.fn = fn
        self.fullgraph = fullgraph
        self.mode = mode
        self.disable = disable
        self.options = dict(options or {})
        self.check = mode == "check" or os.environ.get("TORCHLIKE_COMPILE_CHECK") == "1"
        self.cache: dict = {}
        self.discovered: dict = {}  # key -> (state buffers, state tensors)
        self.recompiles = 0
        self._warned = False
        self._rng_key = None
        self._key_device = None
        self.__wrapped__ = fn
        self.__name__ = getattr(fn, "__name__", "compiled")
        self.__doc__ = getattr(fn, "__doc__", None)

    # --- the call path ------------------------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.disable or T.hook is not None:  # disabled, or called from inside another trace
            return self.fn(*args, **kwargs)
        if lazy._on and not lazy._suspended:
            # The call does what it does with lazy mode off: pending work runs first (it may read arrays this
            # program donates), and nothing inside records (discovery runs eagerly, outputs are concrete).
            lazy.flush("compiled step")
            lazy.suspend(True)
            try:
                return self._call(args, kwargs)
            finally:
                lazy.suspend(False)
        return self._call(args, kwargs)

    def _call(self, args: tuple, kwargs: dict) -> Any:
        leaves, tree = _flatten((args, kwargs))
        key = self._key(leaves, tree)
        entry = self.cache.get(key)
        owners = None
        if entry is not None and (owners := self._guards_hold(entry)) is None:
            del self.cache[key]
            self.discovered.pop(key, None)
            entry = None
            self._note_recompile(key, "a state tensor's buffer changed (e.g. `.data` was reassigned)")
        if entry is None:
            if key not in self.discovered:
                return self._discover(key, args, kwargs)
            if len(self.cache) >= config.recompile_limit:
                self._limit_warning()
                return self.fn(*args, **kwargs)
            entry = self._trace(key, leaves, tree)
            self.cache[key] = entry
        if entry.eager:
            stats["eager_calls"] += 1
            return self.fn(*args, **kwargs)
        if self.check and entry.calls < config.check_calls and not entry.has_random:
            return self._checked_call(entry, args, kwargs, leaves)
        try:
            return self._run(entry, leaves, owners)
        except _Retrace:
            del self.cache[key]
            self._note_recompile(key, "a lifted hyper-parameter changed type")
            return self(*args, **kwargs)

    def _key(self, leaves: list, tree: Any) -> tuple:
        parts = []
        for x in leaves:
            if isinstance(x, Tensor):
                parts.append((tuple(x._shape), x._dtype, x._buf.device, x._rg))
            else:
                parts.append(("s", _static_key(x)))
        return (tree, tuple(parts), grad_mode._state.enabled, _ambient())

    def _guards_hold(self, entry: _Entry) -> list | None:
        """The live state tensors if each still owns its buffer and has (or lacks) a ``.grad`` as when
        traced, else None. Three C-level passes; a dead tensor (a temporary that owned a state buffer)
        sends the check through the loop that skips it."""
        if entry.eager:
            return []
        owners = [r() for r in entry.owner_refs]
        try:  # (list == compares Buffers by identity: Buffer has no __eq__)
            if [t._buf for t in owners] == entry.owner_bufs and [t._grad is None for t in owners] == entry.grad_none:
                return owners
        except AttributeError:  # a dead owner
            pass
        live = []
        for t, buf, grad_none in zip(owners, entry.owner_bufs, entry.grad_none):
            if t is None:
                continue
            if t._buf is not buf or (t._grad is None) != grad_none:
                return None
            live.append(t)
        return live

    def _note_recompile(self, key: Any, reason: str) -> None:
        self.recompiles += 1
        stats["recompiles"] += 1
        self._last_reason = reason

    def _limit_warning(self) -> None:
        if self._warned:
            return
        self._warned = True
        code = getattr(self.fn, "__code__", None)
        where = f"'{self.__name__}' ({code.co_filename}:{code.co_firstlineno})" if code else repr(self.fn)
        warnings.warn(
            f"torch._dynamo hit config.recompile_limit ({config.recompile_limit})\n   function: {where}\n"
            f"   last reason: {getattr(self, '_last_reason', 'new input shapes, dtypes or static arguments')}\n"
            "torchlike runs further new signatures of this function eagerly.",
            UserWarning,
            stacklevel=3,
        )

    # --- discovery (eager) --------------------------------------------------------------------------

    def _discover(self, key: Any, args: tuple, kwargs: dict) -> Any:
        hook = _Discover()
        input_bufs = {id(x._buf) for x in _flatten((args, kwargs))[0] if isinstance(x, Tensor)}
        from ..autograd import engine

        backwards = engine.stats["backward_calls"]
        prev = T.hook
        T.hook = hook
        try:
            result = self.fn(*args, **kwargs)
        finally:
            T.hook = prev
        self.training_step = engine.stats["backward_calls"] > backwards
        state = [b for i, b in hook.touched.items() if i not in input_bufs]
        # Buffers created by this call that outlive it (optimizer state, .grads) are state from the
        # next call on; the result's own buffers are not. The next calls rewrite them (donated with the written).
        result_bufs = {id(x._buf) for x in _flatten(result)[0] if isinstance(x, Tensor)}
        created = [b for b in list(hook._created) if id(b) not in result_bufs and id(b) not in input_bufs]
        state += created
        self.written = hook.written | {id(b) for b in created}
        self.discovered[key] = (state, list(hook.scalars.values()))
        stats["eager_calls"] += 1
        return result

    # --- tracing ------------------------------------------------------------------------------------

    def _trace(self, key: Any, leaves: list, tree: Any) -> _Entry:
        state, scalars = (list(x) for x in self.discovered[key])
        written = set(getattr(self, "written", ()))
        pruned = reordered = False
        for _ in range(64):
            try:
                entry = self._trace_with(state, scalars, leaves, tree, written)
                drop = {id(b) for b in entry.unused} if not pruned else set()
                # A donated argument must be exactly the state the program replaces: a changed array passed read-only
                # is copied on the device and freed on the host each call, and a donated one the program does not
                # return could be consumed by another output. So the split is fixed by one more trace if need be.
                changed = {id(b) for b in entry.changed}
                reorder = entry.donates and not reordered and changed != {id(b) for b in entry.state[: entry.n_mut]} - drop
                if drop or reorder:
                    # State the program neither reads nor writes (last step's .grads, which zero_grad(set_to_none=True)
                    # drops) would be an argument of every call and kept alive by it: trace again without it
                    # (a read of it would make it state again).
                    pruned = pruned or bool(drop)
                    reordered = reordered or reorder
                    if reorder:
                        written = changed
                        stats["reordered_state"] += 1
                    if drop:
                        state = [b for b in state if id(b) not in drop]
                        self.discovered[key] = (state, scalars)
                        stats["pruned_state"] += len(drop)
                    stats["compiles"] -= 1  # that lowering is never compiled
                    continue
                self._start_tiers(entry)
                return entry
            except _NeedState as e:
                state.append(e.buf)
                stats["retraces"] += 1
            except _NeedScalar as e:
                scalars.append(e.ref)
                stats["retraces"] += 1
            except (*_TRACER_ERRORS, _GraphBreak) as e:
                where = _user_frame(e.__traceback__)
                if isinstance(e, _GraphBreak):
                    need, why = f"Python state changed by {e}", f"{e} changes Python state a program can't replay"
                else:
                    need, why = f"a concrete tensor value: {type(e).__name__}", "a Python value depends on a tensor's contents"
                if self.fullgraph:
                    raise Unsupported(f"torchlike.compile(fullgraph=True): the function needs {need} at {where}") from e
                warnings.warn(
                    f"torchlike.compile: graph break at {where} ({why}); this call signature runs eagerly.",
                    UserWarning,
                    stacklevel=4,
                )
                stats["graph_breaks"] += 1
                entry = _Entry()
                entry.eager = True
                entry.state_tensors = ()
                return entry
        raise RuntimeError("torchlike.compile: state discovery did not converge")

    def _trace_with(self, state: list, scalars: list, leaves: list, tree: Any, written: set) -> _Entry:
        from .._ops import random

        fn = self.fn
        in_tensors = [x for x in leaves if isinstance(x, Tensor)]
        in_bufs: list = []
        seen = set()
        for t in in_tensors:
            if id(t._buf) not in seen:
                seen.add(id(t._buf))
                in_bufs.append(t._buf)
        state = [b for b in state if id(b) not in seen]
        # Buffers the step writes come first: a training step donates them (XLA updates in place).
        state = [b for b in state if id(b) in written] + [b for b in state if id(b) not in written]
        n_mut = sum(id(b) in written for b in state)
        all_bufs = state + in_bufs
        info: dict = {}

        def pure(mut_arrays: list, ro_arrays: list, input_arrays: list, scalar_values: list, rng_key: Any) -> tuple:
            state_arrays = list(mut_arrays) + list(ro_arrays)
            saved = [(b, b.array, b.np) for b in all_bufs]
            for b, a in zip(all_bufs, list(state_arrays) + list(input_arrays)):
                b.array = a
                b.np = None
            if packed:  # the lifted numbers arrive as one float64 vector
                scalar_values = jax.tree_util.tree_unflatten(scalar_tree, [scalar_values[j] for j in range(n_leaves)])
            lifted = {(id(c), k): v for (c, k), v in zip(scalars, scalar_values)}
            hook = _TraceHook({id(b) for b in all_bufs}, lifted)
            rng = _TraceRNG(rng_key)
            prev_hook, prev_rng = T.hook, random.trace_rng
            T.hook, random.trace_rng = hook, rng
            owners = _owners(all_bufs)
            grads_before = {id(t): (t, t._grad) for t in owners}
            try:
                args, kwargs = jax.tree_util.tree_unflatten(tree, leaves)
                out = fn(*args, **kwargs)
                out_leaves, out_tree = _flatten(out)
                out_arrays = []
                out_static = []
                for o in out_leaves:
                    if isinstance(o, Tensor):
                        out_arrays.append(o._data())
                        out_static.append(("t", o._dtype, o._buf.device))
                    else:
                        if isinstance(o, jax.core.Tracer):
                            raise jax.errors.ConcretizationTypeError(o, "returned a traced non-tensor value")
                        out_static.append(("v", o))
                # only state the function replaced is an output (returning an unchanged input would copy it)
                changed = [k for k, b in enumerate(state) if b.array is not state_arrays[k]]
                new_state = [state[k].array for k in changed]
                outs_ids = {id(a) for a in out_arrays}
                escaped = [b for b in list(hook._created)
                           if isinstance(b.array, jax.core.Tracer) and id(b.array) not in outs_ids]  # fmt: skip
                escaped_arrays = [b.array for b in escaped]
                effects = []
                for t, before in grads_before.values():
                    if t._grad is not before:
                        effects.append((weakref.ref(t), t._grad))
                info.update(out_tree=out_tree, out_static=out_static, escaped=escaped, effects=effects,
                            has_random=rng.count > 0, owners=owners, changed=changed, used=set(hook.used))  # fmt: skip
                # no draws: no key output (returning the input would cost a copy kernel per call). The new state
                # comes first: jit gives each output, in order, the first donated input of its shape and dtype
                # not yet taken, so state k reuses its own buffer; a result first (a loss) took the first
                # step counter's, each step counter the next one's, and XLA copied all of them each call.
                return new_state, out_arrays, escaped_arrays, rng.next_key() if rng.count else None
            finally:
                T.hook, random.trace_rng = prev_hook, prev_rng
                for b, a, n in saved:
                    b.array = a
                    b.np = n

        state_arrays = [b.get() for b in state]
        input_arrays = [b.get() for b in in_bufs]
        scalar_values = [_scalar_value(c, k) for c, k in scalars]
        # Hyper-parameters are usually plain numbers: one float64 vector is one argument to dispatch,
        # not one weakly typed scalar each.
        leaves_, scalar_tree = jax.tree_util.tree_flatten(scalar_values)
        n_leaves = len(leaves_)
        packed = _all_numbers(leaves_)
        if packed:
            scalar_values = np.asarray(leaves_, np.float64)
        device = _device_of(state_arrays + input_arrays)
        if device is not None:
            # Lower with the arguments as every call passes them: later calls pass the program's own (committed)
            # outputs, the key and the numbers placed on the device. An uncommitted array from an eager first
            # call would give jit another signature, so the first steps would lower (and compile) twice.
            if packed:
                scalar_values = jax.device_put(scalar_values, device)
            for k in range(n_mut):
                a = state_arrays[k]
                if (isinstance(a, np.ndarray) or isinstance(a, jax.Array) and not a.committed) \
                        and isinstance(device, jax.Device):  # (a host array: a small eager op's result)
                    state_arrays[k] = a = jax.device_put(a, device)
                    state[k].set(a)
        donate = (0,) if getattr(self, "training_step", False) and self.options.get("donate", True) else ()
        # keep_unused: a donated array the step overwrites without reading (a .grad zeroed in place) stays an
        # argument, so its output reuses its buffer rather than the next donated buffer of that shape
        jitted = jax.jit(pure, donate_argnums=donate, keep_unused=bool(donate))
        args = (state_arrays[:n_mut], state_arrays[n_mut:], input_arrays, scalar_values, self._key_state(device))
        entry = _Entry()
        entry.jitted = entry.compiled = jitted
        entry.failed = entry.dups = False
        entry.calls = 0
        platform = device.platform if isinstance(device, jax.Device) else "cpu"  # one device only
        # Tracing fills ``info``; the jitted callable then lowers and compiles on its first call (from the
        # same trace) and is called through JAX's fast C++ path afterwards.
        traced = jitted.trace(*args)
        entry.platform = platform
        stats["compiles"] += 1
        if self.cache:
            self._note_recompile(None, "new input shapes, dtypes, static arguments or grad mode")
        entry.eager = False
        entry.state = state
        entry.state_pos = {id(b): i for i, b in enumerate(state)}  # entry.state keeps the buffers alive
        entry.n_state = len(state)
        entry.pure = pure
        entry.out_tree = info["out_tree"]
        entry.out_static = info["out_static"]
        entry.escaped = [weakref.ref(b) for b in info["escaped"]]
        entry.grad_effects = info["effects"]
        entry.has_random = info["has_random"]
        entry.scalars = list(scalars)
        entry.packed = packed
        entry.device = device
        entry.scalar_host = entry.scalar_dev = entry.scalar_raw = None
        entry.changed = [state[k] for k in info["changed"]]
        entry.fwd = None
        entry.n_mut = n_mut
        entry.training = bool(donate) or getattr(self, "training_step", False)
        entry.donates = bool(donate)
        entry.state_tensors = tuple((weakref.ref(t), t._buf, t._grad is None) for t in info["owners"])
        entry.owner_refs = [r for r, _, _ in entry.state_tensors]
        entry.owner_bufs = [b for _, b, _ in entry.state_tensors]
        entry.grad_none = [g for _, _, g in entry.state_tensors]
        changed = set(info["changed"])
        entry.unused = [b for k, b in enumerate(state) if id(b) not in info["used"] and k not in changed]
        entry.lowered = traced
        return entry

    def _start_tiers(self, entry: _Entry) -> None:
        """On a GPU, a program compiled fast runs now and the autotuned one takes over when ready."""
        traced, entry.lowered, entry.unused = entry.lowered, None, ()
        options = _xla_tiers.cold_options(entry.platform)
        if options is None:
            return
        try:
            _xla_tiers.start(entry, entry.jitted, traced.lower(), options, stats, lambda: entry.calls + 1)
        except Exception:  # options this XLA does not know: one tier
            entry.compiled = entry.jitted
            stats["cold_compile_failures"] += 1

    def _key_state(self, device: Any = None) -> Any:
        """The program's RNG key: on the program's device, replaced by each call's output key."""
        key = self._rng_key
        if key is None:
            from .._ops import random

            key = self._rng_key = jax.random.PRNGKey(random.initial_seed() & 0xFFFFFFFF)
        if device is not None and device is not self._key_device and device != self._key_device:  # once
            key = self._rng_key = jax.device_put(key, device)
            self._key_device = device
        return key

    def _scalars_now(self, entry: _Entry) -> Any:
        """The lifted hyper-parameters as the program takes them. Packed numbers stay on the device
        between calls and are uploaded (one explicit transfer) only when one of them changed."""
        raw = entry.scalar_raw
        if raw is not None and all(map(operator.is_, [c[k] for c, k in entry.scalars], raw)):
            return entry.scalar_dev  # the very same immutable numbers as at the last upload
        values = _lifted_values(entry)
        if not entry.packed:
            return values
        if entry.device is None:
            return np.asarray(values, np.float64)
        if values != entry.scalar_host:
            entry.scalar_dev = jax.device_put(np.asarray(values, np.float64), entry.device)
            entry.scalar_host = values
        raw = [c[k] for c, k in entry.scalars]
        entry.scalar_raw = raw if all(map(_immutable, raw)) else None
        return entry.scalar_dev

    # --- running --------------------------------------------------------------------------------------

    def _run(self, entry: _Entry, leaves: list, owners: list | None = None) -> Any:
        in_bufs: list = []
        seen = set()
        for x in leaves:
            if isinstance(x, Tensor) and id(x._buf) not in seen:
                seen.add(id(x._buf))
                in_bufs.append(x._buf)
        state = entry.state
        state_arrays = [b.array for b in state]
        # plain: every buffer holds a JAX array as it is and shares no NumPy memory (else get() makes it so)
        plain = set(map(type, state_arrays)) <= _PLAIN and all([b.np is None for b in state])
        if not plain:
            state_arrays = [b.get() for b in state]
            _PLAIN.update(map(type, state_arrays))
        input_arrays = [b.get() for b in in_bufs]
        scalar_values = self._scalars_now(entry)
        n = entry.n_mut
        mut = state_arrays[:n]
        if entry.dups and len({id(a) for a in mut}) != n:
            mut = [jnp.copy(a) for a in mut]
        key = self._key_state(entry.device)
        try:
            new_state, out_arrays, escaped_arrays, new_key = entry.compiled(
                mut, state_arrays[n:], input_arrays, scalar_values, key)
        except (TypeError, ValueError):
            if entry.training and len({id(a) for a in mut}) != n:
                # PjRt refuses, before running, to donate one array twice: two state tensors hold the same array
                # (e.g. after an eager ``b.copy_(a)``). Donate copies, and look for that before each call from now on.
                entry.dups = True
                mut = [jnp.copy(a) for a in mut]
            elif entry.compiled is entry.jitted:
                raise
            else:
                # the fast-compiled program refused these arguments (an AOT program checks them more strictly
                # than jit does: e.g. a placement it was not compiled for), before running: use jit's
                entry.compiled = entry.jitted
                entry.failed = True
            new_state, out_arrays, escaped_arrays, new_key = entry.compiled(
                mut, state_arrays[n:], input_arrays, scalar_values, key)
        if new_key is not None:
            self._rng_key = new_key
        if plain:  # no hook (a call inside a trace runs the function itself) and no NumPy memory to write
            for b, a in zip(entry.changed, new_state):
                b.array = a
        else:
            for b, a in zip(entry.changed, new_state):
                b.set(a)
        for ref, a in zip(entry.escaped, escaped_arrays):
            b = ref()
            if b is not None:
                b.set(a)
        for ref, g in entry.grad_effects:
            t = ref()
            if t is not None:
                t._grad = g
        entry.calls += 1
        stats["calls"] += 1
        out = self._wrap(entry, out_arrays)
        if not entry.training:  # a training step already ran its backward: its outputs are results
            self._maybe_record(entry, out, state_arrays, input_arrays, scalar_values, leaves, owners)
        return out

    def _wrap(self, entry: _Entry, out_arrays: list) -> Any:
        it = iter(out_arrays)
        vals = []
        for kind, *rest in entry.out_static:
            if kind == "t":
                vals.append(T.make(next(it), rest[1], rest[0]))
            else:
                vals.append(rest[0])
        return jax.tree_util.tree_unflatten(entry.out_tree, vals)

    def _maybe_record(self, entry: _Entry, out: Any, state_arrays: list, input_arrays: list, scalar_values: list,
                      leaves: list, owners: list | None = None) -> None:
        """A compiled forward used with an eager backward: the whole program is one autograd node."""
        if not grad_mode._state.enabled:
            return
        if owners is not None and not any([t._rg for t in owners]) \
                and not any(isinstance(x, Tensor) and x._rg for x in leaves):  # fmt: skip
            return  # nothing differentiable goes in
        outs = [o for o in _flatten(out)[0] if isinstance(o, Tensor) and (o._dtype.is_floating_point or o._dtype.is_complex)]
        if not outs:
            return
        diff_state = []
        pos = entry.state_pos
        for ref, buf, _ in entry.state_tensors:
            t = ref()
            if t is not None and t._rg and id(buf) in pos:
                diff_state.append((pos[id(buf)], t))
        in_tensors = [x for x in leaves if isinstance(x, Tensor)]
        if not diff_state and not any(t._rg for t in in_tensors):
            return
        _record(self, entry, outs, out, state_arrays, input_arrays, scalar_values, diff_state, in_tensors)

    def _checked_call(self, entry: _Entry, args: tuple, kwargs: dict, leaves: list) -> Any:
        """mode='check': run compiled, then eagerly from the same state, and compare."""
        snapshot = [(b, jnp.copy(b.get())) for b in entry.state]  # copies: the compiled call donates
        grads = [(ref(), ref()._grad) for ref, _, _ in entry.state_tensors if ref() is not None]
        compiled_out = self._run(entry, leaves)
        compiled_state = [b.get() for b in entry.state]
        for b, a in snapshot:
            b.set(a)
        for t, g in grads:
            t._grad = g
        eager_out = self.fn(*args, **kwargs)
        eager_state = [b.get() for b in entry.state]
        _compare("output", _flatten(compiled_out)[0], _flatten(eager_out)[0])
        _compare("state", compiled_state, eager_state)
        return eager_out


class _Retrace(Exception):
    """A compiled entry no longer fits its call (e.g. a lifted number became a tensor)."""


def _lifted_values(entry: _Entry) -> Any:
    """The lifted hyper-parameters' current values: a list of numbers when packed."""
    values = [_scalar_value(c, k) for c, k in entry.scalars]
    if not entry.packed:
        return values
    leaves = jax.tree_util.tree_leaves(values)
    if not _all_numbers(leaves):  # a hyper-parameter became a tensor: trace again
        raise _Retrace
    return leaves


def _device_of(arrays: list) -> Any:
    """Where the program's small inputs (lifted numbers, RNG key) live: the device of its arrays, or
    replicated over their mesh when they are sharded (DataParallel)."""
    for a in arrays:
        if isinstance(a, jax.Array):
            sharding = a.sharding
            if len(sharding.device_set) == 1:
                return next(iter(sharding.device_set))
            if isinstance(sharding, jax.sharding.NamedSharding):
                return jax.sharding.NamedSharding(sharding.mesh, jax.sharding.PartitionSpec())
            return None  # another multi-device layout: let jit place them, as a plain argument
    from .._core import device

    return device.jax_device(device.CPU)


def _immutable(v: Any) -> bool:
    """A number, or a tuple of them: the same object later is the same value."""
    return type(v) in (int, float, bool) or type(v) is tuple and all(type(x) in (int, float, bool) for x in v)


def _all_numbers(leaves: list) -> bool:
    return bool(leaves) and all(type(v) in (int, float, bool) for v in leaves)


def _scalar_value(container: Any, key: Any) -> Any:
    v = container[key]
    return v._data() if isinstance(v, Tensor) else v


def hyper(container: Any, key: Any) -> Any:
    """``container[key]`` -- a Python number (an optimizer's lr, betas...) -- that a compiled program
    takes as an input, so changing it (a scheduler) neither recompiles nor is baked in."""
    hook = T.hook
    if hook is None:
        return container[key]
    if isinstance(hook, _Discover):
        hook.scalars[(id(container), key)] = (container, key)
        return container[key]
    v = hook.scalars.get((id(container), key))
    if v is None:
        raise _NeedScalar((id(container), key), (container, key))
    return v


class _CompiledOp:
    """The op-like record graph.record needs for a compiled program used as one autograd node."""

    __slots__ = ("grad_name", "saves", "dyn_names")

    def __init__(self, name: str) -> None:
        self.grad_name = name
        self.saves = ()
        self.dyn_names = ()


def _record(cf: CompiledFunction, entry: _Entry, outs: list, out: Any, state_arrays: list, input_arrays: list,
            scalar_values: list, diff_state: list, in_tensors: list) -> None:
    from ..autograd import graph

    if entry.fwd is None:
        entry.fwd = jax.jit(_forward_only(entry))
    state_t: list = [None] * len(state_arrays)
    for idx, t in diff_state:
        state_t[idx] = t
    state_list = [t if t is not None else T.make(a, _cpu()) for t, a in zip(state_t, state_arrays)]
    seen = {}
    inputs = []
    for t in in_tensors:
        if id(t._buf) not in seen:
            seen[id(t._buf)] = t
            inputs.append(t)
    all_outs = [o for o in _flatten(out)[0] if isinstance(o, Tensor)]
    args = [list(state_arrays), list(input_arrays), scalar_values, cf._rng_key]
    graph.record(_CompiledOp("CompiledFunctionBackward"), entry.fwd, (), args, [(0, state_list), (1, inputs)],
                 tuple(all_outs), (state_list, inputs, scalar_values, None))
    del outs


def _forward_only(entry: _Entry) -> Callable:
    """The program's outputs as a function of its inputs, for jax.vjp. Re-running the user's function
    for that must not leave traced ``.grad``s behind, so they are restored afterwards."""
    pure = entry.pure

    n = entry.n_mut

    def fwd(s: list, i: list, v: list, k: Any) -> tuple:
        owners = [(t, t._grad) for t in (ref() for ref, _, _ in entry.state_tensors) if t is not None]
        try:
            return tuple(pure(s[:n], s[n:], i, v, k)[1])
        finally:
            for t, g in owners:
                t._grad = g

    return fwd


def _cpu() -> Any:
    from .._core import device

    return device.CPU


def _owners(bufs: list) -> list:
    """Live tensors that own the given buffers (for guards and .grad effects)."""
    import gc

    ids = {id(b) for b in bufs}
    return [o for o in gc.get_referrers(*bufs) if isinstance(o, Tensor) and id(o._buf) in ids]


def _compare(what: str, a: list, b: list) -> None:
    for i, (x, y) in enumerate(zip(a, b)):
        xa = x._data() if isinstance(x, Tensor) else x
        ya = y._data() if isinstance(y, Tensor) else y
        if hasattr(xa, "shape"):
            if not np.allclose(np.asarray(xa, np.float64), np.asarray(ya, np.float64), rtol=1e-4, atol=1e-5,
                               equal_nan=True):  # fmt: skip
                raise RuntimeError(
                    f"torchlike.compile(mode='check'): compiled and eager runs differ in {what} {i}: "
                    f"max abs difference {np.max(np.abs(np.asarray(xa, np.float64) - np.asarray(ya, np.float64)))}"
                )
        elif xa != ya:
            raise RuntimeError(f"torchlike.compile(mode='check'): {what} {i} differs: {xa!r} vs {ya!r}")


def _ambient() -> tuple:
    return (D.get_default_dtype(), autocast_mode.state_key())


_fused.read_hyper = hyper
_lr_scheduler.python_side_effect = python_side_effect

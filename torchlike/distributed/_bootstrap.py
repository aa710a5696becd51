"""Worker entry used by the launcher, run by file path: connect JAX's multi-process runtime from
torchrun's environment variables, then run the user's script (or ``-m module``) as ``__main__``.

JAX's runtime must start before JAX opens its devices and ``import torchlike`` opens them, so
this file imports nothing from torchlike.
"""

import os
import runpy
import sys
import traceback


def _connect() -> None:
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return
    import jax

    if "jax_cpu_collectives_implementation" in jax.config.values:
        jax.config.update("jax_cpu_collectives_implementation", "gloo")
    rank = int(os.environ["RANK"])
    jax.distributed.initialize(
        coordinator_address=f"{os.environ['MASTER_ADDR']}:{os.environ['MASTER_PORT']}",
        num_processes=world,
        process_id=rank,
        local_device_ids=[int(os.environ.get("LOCAL_RANK", rank))],
        # JAX aborts the process when not every rank has joined by then (a node missing)
        initialization_timeout=int(os.environ.get("TORCHLIKE_RDZV_TIMEOUT", "600")),
    )


def main() -> None:
    args = sys.argv[1:]
    _connect()
    if args[0] == "-m":
        sys.argv = [args[1]] + args[2:]
        sys.path[0] = os.getcwd()
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        sys.path[0] = os.path.dirname(os.path.abspath(args[0]))
        runpy.run_path(args[0], run_name="__main__")


def _run() -> None:
    try:
        main()
    except SystemExit as e:
        if e.code in (None, 0):
            raise
        sys.stdout.flush()
        sys.stderr.flush()
        if not isinstance(e.code, int):
            print(e.code, file=sys.stderr, flush=True)
        os._exit(e.code if isinstance(e.code, int) else 1)
    except BaseException:
        # exit now: JAX's exit-time shutdown would wait for the other processes, which may be
        # blocked in a collective with this one
        traceback.print_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(1)


if __name__ == "__main__":
    _run()

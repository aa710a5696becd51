"""torchrun for torchlike: ``python -m torchlike.distributed.run --nproc-per-node N script.py args...``

Starts N worker processes on this node with torchrun's environment (RANK, LOCAL_RANK, WORLD_SIZE,
MASTER_ADDR, MASTER_PORT, ...). Each worker first connects JAX's multi-process runtime (see
``_bootstrap``), then runs the script. One worker failing stops the others, as in torchrun.

Several hosts use torchrun's static rendezvous: run the same command on every node with
``--nnodes M --node-rank i --master-addr <node 0's address> --master-port P``. Node 0's rank 0
hosts JAX's coordination service at that address; ranks are ``node_rank * nproc_per_node +
local_rank``. Workers wait ``--rdzv-conf timeout=S`` seconds (torchrun's default, 600) for all
nodes, then fail instead of hanging.

This file imports only the standard library: started as ``-m``, Python has already imported
torchlike, and with it JAX has opened (and preallocated memory on) every GPU, so the launcher
re-executes itself as a plain script before starting workers that need those GPUs.
"""

from __future__ import annotations

import argparse
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from typing import Callable

_HERE = os.path.dirname(os.path.abspath(__file__))
_BOOTSTRAP = os.path.join(_HERE, "_bootstrap.py")
_PACKAGE_PARENT = os.path.dirname(os.path.dirname(_HERE))


def get_args_parser(prog: str = "torchrun") -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog=prog, description="torchlike's torchrun: start N workers on this node")
    p.add_argument("--nnodes", type=str, default="1:1")
    p.add_argument("--nproc-per-node", "--nproc_per_node", type=str, default="1")
    p.add_argument("--node-rank", "--node_rank", type=int, default=0)
    p.add_argument("--master-addr", "--master_addr", type=str, default="127.0.0.1")
    p.add_argument("--master-port", "--master_port", type=int, default=None)
    p.add_argument("--standalone", action="store_true")
    p.add_argument("--rdzv-backend", "--rdzv_backend", type=str, default="static")
    p.add_argument("--rdzv-endpoint", "--rdzv_endpoint", type=str, default="")
    p.add_argument("--rdzv-id", "--rdzv_id", type=str, default="none")
    p.add_argument("--rdzv-conf", "--rdzv_conf", type=str, default="")
    p.add_argument("--max-restarts", "--max_restarts", type=int, default=0)
    p.add_argument("--monitor-interval", "--monitor_interval", type=float, default=0.1)
    p.add_argument("--start-method", "--start_method", type=str, default="spawn",
                   choices=["spawn", "fork", "forkserver"])  # fmt: skip
    p.add_argument("--role", type=str, default="default")
    p.add_argument("-m", "--module", action="store_true")
    p.add_argument("--no-python", "--no_python", action="store_true")
    p.add_argument("--run-path", "--run_path", action="store_true")
    p.add_argument("--log-dir", "--log_dir", type=str, default=None)
    p.add_argument("-r", "--redirects", type=str, default="0")
    p.add_argument("-t", "--tee", type=str, default="0")
    p.add_argument("--local-addr", "--local_addr", type=str, default=None)
    p.add_argument("training_script", type=str)
    p.add_argument("training_script_args", nargs=argparse.REMAINDER)
    return p


def _nnodes(spec: str) -> int:
    lo, _, hi = spec.partition(":")
    if hi and int(hi) != int(lo):
        raise NotImplementedError(
            f"torchlike.distributed.run: elastic node counts ({spec}) are not supported; JAX's runtime has a "
            "fixed number of processes"
        )
    return int(lo)


def _rdzv_timeout(conf: str) -> int:
    """Seconds the workers wait for every node (torchrun's ``--rdzv-conf timeout=`` / ``join_timeout=``)."""
    config = {}
    for kv in conf.split(",") if conf.strip() else ():
        key, _, value = kv.partition("=")
        if not key.strip():
            raise ValueError(
                "The rendezvous configuration string must be in format <key1>=<value1>,...,<keyN>=<valueN>."
            )
        if not value.strip():
            raise ValueError(f"The rendezvous configuration option '{key.strip()}' must have a value specified.")
        config[key.strip()] = value.strip()
    return int(config.get("timeout", config.get("join_timeout", 600)))


def _count_gpus() -> int:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is not None:
        return len([d for d in visible.split(",") if d.strip()])
    if shutil.which("nvidia-smi") is None:
        return 0
    out = subprocess.run(["nvidia-smi", "-L"], capture_output=True, text=True)
    return sum(line.startswith("GPU ") for line in out.stdout.splitlines())


def _nproc(spec: str) -> int:
    if spec in ("auto", "gpu"):
        n = _count_gpus()
        if n or spec == "gpu":
            if not n:
                raise ValueError("Cuda is not available.")
            return n
        spec = "cpu"
    if spec == "cpu":
        return os.cpu_count() or 1
    if spec == "xpu":
        raise ValueError("Xpu is not available.")
    return int(spec)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _worker_env(base: dict, args: argparse.Namespace, local_rank: int, nproc: int, world: int, port: int,
                restart: int) -> dict:  # fmt: skip
    rank = args.node_rank * nproc + local_rank
    env = dict(base)
    env.update(
        LOCAL_RANK=str(local_rank), RANK=str(rank), GROUP_RANK=str(args.node_rank), ROLE_RANK=str(rank),
        ROLE_NAME=args.role, LOCAL_WORLD_SIZE=str(nproc), WORLD_SIZE=str(world), GROUP_WORLD_SIZE=str(world // nproc),
        ROLE_WORLD_SIZE=str(world), MASTER_ADDR=args.master_addr, MASTER_PORT=str(port),
        TORCHELASTIC_RESTART_COUNT=str(restart), TORCHELASTIC_MAX_RESTARTS=str(args.max_restarts),
        TORCHELASTIC_RUN_ID=args.rdzv_id, TORCHELASTIC_USE_AGENT_STORE="False",
        TORCHLIKE_RDZV_TIMEOUT=str(_rdzv_timeout(args.rdzv_conf)),
    )  # fmt: skip
    # workers import the torchlike that started them, installed or not
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_PACKAGE_PARENT, base.get("PYTHONPATH")) if p)
    return env


def _command(args: argparse.Namespace, extra: list[str]) -> list[str]:
    script_args = list(args.training_script_args) + extra
    if args.no_python:
        if args.module:
            raise ValueError(
                "Don't use both the '--no-python' flag and the '--module' flag at the same time."
            )
        return [args.training_script] + script_args
    if args.module:
        return [sys.executable, "-u", _BOOTSTRAP, "-m", args.training_script] + script_args
    return [sys.executable, "-u", _BOOTSTRAP, args.training_script] + script_args


def _stop(procs: list[subprocess.Popen], grace: float = 3.0) -> None:
    # NOTE: JAX's preemption notifier catches SIGTERM in the workers, hence the short grace
    for p in procs:
        if p.poll() is None:
            p.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def _run_group(args: argparse.Namespace, nproc: int, world: int, port: int, restart: int,
               worker_args: Callable[[int], list[str]]) -> list[tuple[int, int]]:  # fmt: skip
    """Start the workers, wait; returns [(local_rank, exit code)] of the failed ones."""
    procs = []
    for lr in range(nproc):
        env = _worker_env(os.environ, args, lr, nproc, world, port, restart)
        procs.append(subprocess.Popen(_command(args, worker_args(lr)), env=env))
    try:
        while True:
            codes = [p.poll() for p in procs]
            failed = [(i, c) for i, c in enumerate(codes) if c not in (None, 0)]
            if failed:
                time.sleep(1.0)  # let the others report their own errors before they are stopped
                _stop(procs)
                return failed
            if all(c == 0 for c in codes):
                return []
            time.sleep(args.monitor_interval)
    except BaseException:
        _stop(procs)
        raise


def run(args: argparse.Namespace, worker_args: Callable[[int], list[str]] = lambda lr: []) -> int:
    """Launch ``args`` (as parsed by ``get_args_parser``); returns the launcher's exit code."""
    if args.redirects != "0" or args.tee != "0" or args.log_dir is not None:
        raise NotImplementedError(
            "torchlike.distributed.run: --log-dir, --redirects and --tee are not supported"
        )
    if args.run_path:
        raise NotImplementedError(
            "torchlike.distributed.run: --run-path is not supported; JAX's runtime is per process, so each "
            "worker is its own process"
        )
    nnodes, nproc = _nnodes(args.nnodes), _nproc(args.nproc_per_node)
    world = nnodes * nproc
    if not 0 <= args.node_rank < nnodes:
        raise ValueError(f"--node-rank {args.node_rank} is out of range for --nnodes {nnodes}")
    _rdzv_timeout(args.rdzv_conf)  # a malformed --rdzv-conf fails here, not in every worker
    if args.standalone:
        args.master_addr, port = "127.0.0.1", _free_port()
    elif args.rdzv_endpoint:
        host, _, p = args.rdzv_endpoint.rpartition(":")
        args.master_addr, port = host or args.master_addr, int(p or 29400)
    else:
        port = args.master_port if args.master_port is not None else 29500
    if nproc > 1 and "OMP_NUM_THREADS" not in os.environ:
        print(
            "*****************************************\n"
            "Setting OMP_NUM_THREADS environment variable for each process to be 1 in default, to avoid your "
            "system being overloaded, please further tune the variable for optimal performance in your "
            "application as needed. \n*****************************************",
            file=sys.stderr,
        )
        os.environ["OMP_NUM_THREADS"] = "1"
    for restart in range(args.max_restarts + 1):
        failed = _run_group(args, nproc, world, port, restart, worker_args)
        if not failed:
            return 0
        if args.standalone:
            port = _free_port()
    for lr, code in failed:
        rank = args.node_rank * nproc + lr
        print(f"[torchlike.distributed.run] worker local_rank={lr} (rank={rank}) of "
              f"{args.training_script} failed with exit code {code}", file=sys.stderr)  # fmt: skip
    if nnodes > 1:
        print(f"[torchlike.distributed.run] node {args.node_rank} of {nnodes}: the workers of all nodes meet at "
              f"{args.master_addr}:{port} and wait --rdzv-conf timeout={_rdzv_timeout(args.rdzv_conf)} "
              "seconds for each other", file=sys.stderr)  # fmt: skip
    return 1


def main(argv: list[str] | None = None) -> None:
    args = get_args_parser().parse_args(argv)
    sys.exit(run(args))


if __name__ == "__main__":
    if __package__:  # started with -m: torchlike (and JAX's GPUs) are loaded in this process
        os.execv(sys.executable, [sys.executable, os.path.abspath(__file__)] + sys.argv[1:])
    main()

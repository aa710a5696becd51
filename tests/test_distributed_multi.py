"""Multi-device and multi-process runs, each in subprocesses: DataParallel over 4 virtual CPU
devices, and DistributedDataParallel over 2 processes started by torchlike's launcher."""

import json
import os
import re
import signal
import socket
import subprocess
import sys
import time

import pytest

pytestmark = pytest.mark.slow  # distributed: runs worker processes

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def _env(**extra):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (ROOT, env.get("PYTHONPATH")) if p)
    env.pop("XLA_FLAGS", None)
    env.update(extra)
    return env


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _launch(script, *args, nproc=2, timeout=180):
    cmd = [sys.executable, "-m", "torchlike.distributed.run", "--nproc-per-node", str(nproc),
           "--master-port", str(_free_port()), script, *args]  # fmt: skip
    return subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=timeout)


def test_data_parallel_over_four_devices_matches_one_device():
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "_distributed_dp_worker.py")],
        env=_env(XLA_FLAGS="--xla_force_host_platform_device_count=4"),
        capture_output=True, text=True, timeout=180,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
    r = json.loads(line[len("RESULT ") :])
    assert r["eager_max_diff"] < 1e-5
    assert r["param_specs"] == ["P()"] and r["grad_specs"] == ["P()"]  # replicated: XLA all-reduced the grads
    assert r["output_spec"] == "P('data', None)"  # the batch really is split over the devices
    assert r["output_device"] == "cpu" and r["output_matches"] and r["uneven_matches"]
    assert r["state_dict_keys"] == ["module.0.weight", "module.0.bias"] and r["loaded_matches"] == 0.0
    assert r["replaced_spec"] == "SingleDeviceSharding" and r["rereplicated"] == ["P()"]
    assert r["compiled_max_diff"] < 1e-5 and r["compiled_param_specs"] == ["P()"]


def test_fully_shard_over_four_devices_matches_the_unsharded_model():
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "_distributed_fsdp_worker.py")],
        env=_env(XLA_FLAGS="--xla_force_host_platform_device_count=4", TORCHLIKE_LAZY="0"),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
    r = json.loads(line[len("RESULT ") :])
    assert r["mesh"] == ["DeviceMesh('cpu', [0, 1, 2, 3], mesh_dim_names=('dp',))", [4], 4, ["dp"]]
    assert "mesh_shape (3,) holds 3 devices, but JAX has 4 cpu devices" in r["bad_shape"]
    assert r["compiled"]["compiled_calls"] == 4 and r["eager"]["compiled_calls"] == 0  # 1 discovery call, 4 compiled
    for mode in ("eager", "lazy", "compiled"):
        res = r[mode]
        assert res["loss_max_diff"] < 1e-5 and res["param_max_diff"] < 1e-4, res
        assert set(res["param_specs"].values()) == {"P('dp',)"}, res  # still sharded after 5 AdamW steps
        assert res["state_specs"] and all("'dp'" in s for s in res["state_specs"]), res  # Adam state too
        assert res["shard_shapes"] == [[16, 32]], res  # fc.weight is (64, 32): 16 rows per device
        assert res["classes"] == ["FSDPSequential", "FSDPBlock", True]


@pytest.mark.slow
def test_data_parallel_compiled_gpt_step_over_four_devices():
    """bench/ddp_scaling.py's torchlike-dp-compile step (crashed on 2 and 4 GPUs) with the GPU's lazy
    execution and device-committed tensors, against the same step on one device."""
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "_distributed_dp_compile_worker.py")],
        env=_env(XLA_FLAGS="--xla_force_host_platform_device_count=4", TORCHLIKE_LAZY="1"),
        capture_output=True, text=True, timeout=400,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
    r = json.loads(line[len("RESULT ") :])
    assert r["lazy"]
    for name in ("fp32", "bf16"):
        res = r[name]
        stats = res["compile_stats"]
        # per run: one eager discovery call, then the compiled program (no graph break, no eager fallback)
        assert stats.get("compiles") == 2 and stats.get("eager_calls") == 2 and not stats.get("graph_breaks"), res
        assert res["param_specs"] == ["P()"]
        assert all(3.0 < l < 5.5 for l in res["losses"]), res
    assert r["fp32"]["loss_max_diff"] < 1e-5 and r["fp32"]["param_max_diff"] < 5e-4, r["fp32"]
    assert r["bf16"]["loss_max_diff"] < 5e-3 and r["bf16"]["param_max_diff"] < 2e-2, r["bf16"]


def test_launcher_runs_ddp_on_two_processes():
    proc = _launch("tests/_distributed_ddp_worker.py", "2")
    out = proc.stdout
    assert proc.returncode == 0, out[-2000:] + proc.stderr[-3000:]
    assert " FAIL " not in out, out
    for rank in (0, 1):
        assert len(re.findall(rf"rank {rank} OK ", out)) >= 9, out
        assert f"rank {rank} done" in out
        assert f"rank {rank} state_dict module.0.weight" in out
        for what in ("ddp_vs_global_batch", "no_sync_vs_global_batch"):
            diff = float(re.search(rf"rank {rank} {what} (\S+)", out).group(1))
            assert diff < 1e-5, (what, diff)
    sums = re.findall(r"rank \d checksum (\S+)", out)
    assert len(sums) == 2 and sums[0] == sums[1], sums


def _nodes(script, *args, ranks=(0, 1), nnodes=2, rdzv_timeout=120, timeout=200):
    """One launcher per "node" (all on loopback), as torchrun's static rendezvous runs on several
    hosts; returns [(returncode, stdout, stderr)] per node. Killed, not waited for, past ``timeout``."""
    port = _free_port()
    procs = []
    for node in ranks:
        cmd = [sys.executable, "-m", "torchlike.distributed.run", "--nnodes", str(nnodes), "--node-rank", str(node),
               "--nproc-per-node", "1", "--master-addr", "127.0.0.1", "--master-port", str(port),
               "--rdzv-conf", f"timeout={rdzv_timeout}", script, *args]  # fmt: skip
        procs.append(subprocess.Popen(cmd, cwd=ROOT, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                      text=True, start_new_session=True))  # fmt: skip
    deadline = time.monotonic() + timeout
    results = []
    try:
        for p in procs:
            out, err = p.communicate(timeout=max(1.0, deadline - time.monotonic()))
            results.append((p.returncode, out, err))
    finally:
        for p in procs:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    return results


def test_launcher_runs_ddp_on_two_nodes():
    results = _nodes("tests/_distributed_ddp_worker.py", "2")
    sums = []
    for node, (code, out, err) in enumerate(results):
        assert code == 0, out[-2000:] + err[-3000:]
        assert " FAIL " not in out, out
        assert len(re.findall(rf"rank {node} OK ", out)) >= 9 and f"rank {node} done" in out, out
        assert f"rank {1 - node} " not in out  # each node ran its own rank only
        # node_rank * nproc_per_node + local_rank, and torchrun's per-node variables
        assert f"rank {node} env LOCAL_RANK=0 GROUP_RANK={node} LOCAL_WORLD_SIZE=1 GROUP_WORLD_SIZE=2" in out
        diff = float(re.search(rf"rank {node} ddp_vs_global_batch (\S+)", out).group(1))
        assert diff < 1e-5
        sums += re.findall(r"rank \d checksum (\S+)", out)
    assert len(sums) == 2 and sums[0] == sums[1], sums  # the gradients were all-reduced across the nodes


def test_launcher_gives_up_when_a_node_never_joins(tmp_path):
    script = tmp_path / "ran.py"
    script.write_text("open(__file__ + '.ran', 'w').close()\n")
    start = time.monotonic()
    ((code, out, err),) = _nodes(str(script), ranks=(0,), rdzv_timeout=3, timeout=120)
    assert code == 1, err[-2000:]
    assert "wait --rdzv-conf timeout=3 seconds" in err
    assert not (tmp_path / "ran.py.ran").exists()  # the script never started without the other node
    assert time.monotonic() - start < 90


@pytest.mark.parametrize(
    "flags, message",
    [(["--nnodes", "2", "--node-rank", "2"], "--node-rank 2 is out of range for --nnodes 2"),
     (["--rdzv-conf", "timeout"], "The rendezvous configuration option 'timeout' must have a value specified.")],
)  # fmt: skip
def test_launcher_checks_the_rendezvous_arguments(flags, message):
    proc = subprocess.run(
        [sys.executable, "-m", "torchlike.distributed.run", *flags, "x.py"], cwd=ROOT, env=_env(),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode != 0 and f"ValueError: {message}" in proc.stderr, proc.stderr[-2000:]


def test_launcher_stops_the_group_when_a_worker_fails(tmp_path):
    script = tmp_path / "fail.py"
    script.write_text(
        "import os, sys, time\nif os.environ['RANK'] == '1':\n    sys.exit(3)\ntime.sleep(120)\n"
    )
    start = time.monotonic()
    proc = _launch(str(script), timeout=100)
    assert proc.returncode == 1
    assert "local_rank=1 (rank=1)" in proc.stderr and "exit code 3" in proc.stderr
    assert time.monotonic() - start < 60  # rank 0 was stopped, not waited for


@pytest.mark.parametrize("flag", ["--run-path", "--nnodes=1:2"])
def test_launcher_refuses_what_it_cannot_do(flag):
    proc = subprocess.run(
        [sys.executable, "-m", "torchlike.distributed.run", flag, "x.py"], cwd=ROOT, env=_env(),
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert proc.returncode != 0 and "NotImplementedError" in proc.stderr


def test_legacy_launch_passes_local_rank(tmp_path):
    script = tmp_path / "args.py"
    script.write_text(
        "import os, sys\n"
        "with open(os.path.join(os.path.dirname(__file__), 'rank' + os.environ['LOCAL_RANK']), 'w') as f:\n"
        "    f.write(repr(sys.argv[1:]))\n"
    )
    cmd = [sys.executable, "-m", "torchlike.distributed.launch", "--nproc-per-node", "2", "--master-port",
           str(_free_port()), str(script), "--x"]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(), capture_output=True, text=True, timeout=100)
    assert proc.returncode == 0, proc.stderr[-2000:]
    for rank in (0, 1):
        assert (tmp_path / f"rank{rank}").read_text() == repr(["--x", f"--local-rank={rank}"])
    assert "torch.distributed.launch is deprecated" in proc.stderr


def test_init_without_the_launcher_says_how_to_launch():
    code = "import torchlike.distributed as dist\ndist.init_process_group('gloo')\n"
    env = _env(RANK="0", WORLD_SIZE="2", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(_free_port()))
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode != 0
    assert (
        "RuntimeError: torchlike.distributed: JAX's multi-process runtime has to start before" in proc.stderr
    )
    assert "python -m torchlike.distributed.run" in proc.stderr


def _fsdp1_worker(mode, folder, ndev):
    proc = subprocess.run(
        [sys.executable, os.path.join(HERE, "_distributed_fsdp1_worker.py"), mode, str(folder)],
        env=_env(XLA_FLAGS=f"--xla_force_host_platform_device_count={ndev}"),
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def test_fsdp1_and_distributed_checkpoint_across_device_counts(tmp_path):
    """FSDP1 over 4 virtual devices equals the unsharded model; its state dicts and a checkpoint
    saved there load over 2 and 1 devices (and into FSDP2 / a plain model) and train on identically."""
    r = _fsdp1_worker("save", tmp_path, 4)
    for label in ("full_module", "no_shard", "orig_params"):
        res = r[label]
        assert res["loss_max_diff"] < 1e-5 and res["param_max_diff"] < 1e-4, (label, res)
        assert res["repr_head"][:2] == ["FullyShardedDataParallel(", "  (_fsdp_wrapped_module): Sequential("]
    flat = r["full_module"]
    assert flat["names"] == ["_fsdp_wrapped_module._flat_param",
                             "_fsdp_wrapped_module.1._fsdp_wrapped_module._flat_param",
                             "_fsdp_wrapped_module.2._fsdp_wrapped_module._flat_param"]  # fmt: skip
    assert flat["shapes"] == [[2624], [4256], [4256]]  # 2621 and 4256 values, padded to a multiple of 4
    assert flat["param_specs"] == flat["grad_specs"] == flat["state_specs"] == ["P('dim_0',)"]
    assert flat["n_fsdp"] == 3 and not flat["attr_is_param"]
    assert r["full_transformer"]["names"] == flat["names"] and r["full_transformer"]["n_fsdp"] == 3
    assert r["grad_op_size"]["param_specs"] == ["P('dim_0',)"] and r["grad_op_size"]["n_fsdp"] == 3  # size-based, 3000: each block (4256 values), not its Linears (2112)
    assert r["no_shard"]["param_specs"] == ["P()"] and r["no_shard"]["shapes"] == [[11136]]
    orig = r["orig_params"]
    assert orig["names"][:2] == ["_fsdp_wrapped_module.0.weight", "_fsdp_wrapped_module.1._fsdp_wrapped_module.ln.weight"]
    assert orig["attr_is_param"] and orig["grad_specs"] == ["P('dim_0',)"]
    mixed = r["mixed"]
    assert mixed["vs_autocast"] < 5e-3 and mixed["vs_fp32"] < 1e-2, mixed
    assert mixed["flat_dtype"] == "torch.float32" and mixed["view_dtype"] == "torch.bfloat16"
    sd = r["sharded_sd"]
    assert sd["keys_match"] and sd["types"] == ["DTensor"] and sd["placements"] == ["(Shard(dim=0),)"]
    assert sd["full_tensor_diff"] == 0.0 and sd["spec"] == "P('dim_0', None)"
    assert sd["full_types"] == ["Tensor"] and sd["full_device"] == ["cpu"]
    assert r["loaded"] == [0.0, 0.0, "P('dim_0',)"]
    assert 'Missing key(s) in state_dict: "3.weight"' in r["missing_error"]
    dsd = r["dsd"]
    assert dsd["model_keys"] and dsd["optim_keys"] and dsd["exp_avg_type"] == "DTensor"
    assert dsd["exp_avg_shape"] == [64, 32] and dsd["groups"] == [["0.weight", "3.weight"]]
    f2 = r["fsdp2"]
    assert f2["loss_max_diff"] < 1e-5 and f2["types"] == ["DTensor"] and f2["full_tensor_diff"] < 1e-4
    assert f2["placements"] == "(Shard(dim=0),)"
    for ndev, spec, spec2 in ((2, "P('dim_0',)", "P('dp',)"), (1, "P()", "P()")):
        r = _fsdp1_worker("load", tmp_path, ndev)
        assert r["ndev"] == ndev and r["saved_on"] == 4
        assert r["fsdp1"]["step"] == 3 and r["fsdp1"]["next_losses_diff"] < 1e-5, r
        assert r["fsdp1"]["param_specs"] == r["fsdp1"]["state_specs"] == [spec], r
        assert r["fsdp2"]["next_losses_diff"] < 1e-5 and r["fsdp2"]["param_specs"] == [spec2], r
        assert r["plain"]["next_losses_diff"] < 1e-5, r
        assert r["missing_key"] == "Missing key in checkpoint state_dict: model.nope."


def test_lazy_ddp_step_is_one_program_with_the_all_reduce(tmp_path):
    """In lazy mode DDP's gradient all-reduce is recorded into the pending graph: buffer broadcast,
    forward, backward, all-reduce and SGD update run as one SPMD program over the two processes (one
    flush per step), and the parameters equal a model trained on the global batch (a no_sync step
    included). In the steady state the step is one compiled program and live memory does not grow."""
    cmd = [sys.executable, "-m", "torchlike.distributed.run", "--nproc-per-node", "2",
           "--master-port", str(_free_port()), os.path.join(HERE, "_distributed_ddp_lazy_worker.py")]  # fmt: skip
    proc = subprocess.run(cmd, cwd=ROOT, env=_env(TORCHLIKE_LAZY="1"), capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = [json.loads(l[len("RESULT ") :]) for l in proc.stdout.splitlines() if l.startswith("RESULT ")]
    assert sorted(r["rank"] for r in results) == [0, 1]
    for r in results:
        assert r["flushes"] == [1] * 10 and r["programs"] == [1] * 10, r
        assert r["param_diff"] < 1e-6, r
        assert r["spmd_compiled"] >= 1 and r["compile_failures"] == 0, r
        assert r["calls"] == [11, 11], r  # the buffers, broadcast inside the program, are rank 0's
        # steady state (issue 32): each step is the one compiled SPMD program, nothing new compiles, and
        # the live arrays stay constant although the loop keeps every loss (and with it its graph)
        assert r["hot"][5:] == [1] * 5 and len(set(r["compiled_after_step"][5:])) == 1, r
        assert len(set(r["live_arrays"][1:])) == 1, r


@pytest.mark.parametrize("lazy", ["0", "1"])
def test_fsdp_over_two_devices_with_host_batches_and_sharded_memory(lazy):
    """Issue 32: FSDP1 on 2 devices as bench/ddp_scaling.py runs it (model on the first device, host
    token batches), with the CPU devices dressed as GPUs so the batch's ``cpu`` meets parameters on
    ``cuda:0`` (before the fix: torch's two-devices error from F.embedding); then each device holds
    half the parameters, gradients and AdamW state that NO_SHARD (DDP's replicated layout) holds."""
    results = {}
    for fake in ("1", "0"):
        proc = subprocess.run(
            [sys.executable, os.path.join(HERE, "_distributed_fsdp_placement_worker.py")],
            env=_env(XLA_FLAGS="--xla_force_host_platform_device_count=2", TORCHLIKE_LAZY=lazy, FAKE_CUDA=fake),
            capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        assert proc.returncode == 0, proc.stderr[-3000:]
        line = next(l for l in proc.stdout.splitlines() if l.startswith("RESULT "))
        results[fake] = json.loads(line[len("RESULT ") :])
    for fake, device in (("1", "cuda:0"), ("0", "cpu")):
        full, rep = results[fake]["full_shard"], results[fake]["no_shard"]
        for r in (full, rep):
            assert r["loss_max_diff"] < 1e-5 and r["param_max_diff"] < 1e-4, r
            assert r["param_devices"] == [device] and r["output_device"] == device, r
            assert r["output_spec"] == "P('dim_0',)", r  # the batch is split over the two devices
        assert full["param_specs"] == full["grad_specs"] == full["state_specs"] == ["P('dim_0',)"], full
        assert rep["param_specs"] == rep["grad_specs"] == rep["state_specs"] == ["P()"], rep
        for key in ("param_bytes", "grad_bytes", "state_bytes"):
            assert full[key][0] == full[key][1] and 2 * full[key][1] == rep[key][1], (key, full, rep)
        assert rep["param_bytes"] == [full["total_param_bytes"]] * 2

#!/usr/bin/env bash
# Every GPU number of docs/benchmarks.md for issues 30 and 31, in one call (about 7-9 minutes on an H200).
#
#   bash bench/gpu_matrix.sh                       # on the GPU machine, from the repository root
#   GPU_MATRIX_SECTIONS=startup,overhead bash bench/gpu_matrix.sh   # only these sections (a second call)
#   GPU_MATRIX_SMOKE=1 bash bench/gpu_matrix.sh    # a dry run on a CPU with tiny steps (checks the script)
#
# Sections, each in its own processes under `timeout`, so one failing or slow section doesn't stop the rest:
#   matrix     bench/run.py: mlp, cnn, gpt, matmul_mlp x torch, torchlike.lazy, torchlike.compile (default mode),
#              jax; empty compilation caches per process; median ms/step after the autotuned program took over,
#              first step, peak memory, an unsynchronised loop and a loss.item()-every-step loop
#   compile    the GPT step under torchlike.compile in the default mode against lazy mode off
#   startup    examples/char_transformer.py, first run (empty cache) and second run, against real torch
#   overhead   bench/compile_overhead.py on the GPU
#   vision     bench/vision_pipeline.py, torch + torchvision in the same process, 2 workers and 0 (the host's CPU)
#   eager      bench/eager_ops.py and bench/host_cost.py on the host's CPU (a CPU-only torchlike process)
#   cpushapes  bench/shapes.py, all four patterns, on the host's CPU pinned to 2 cores, first and second runs
#   cpufirst   bench/cpu_first_run.py on the same 2 pinned cores
#   shapes     bench/shapes.py, all four patterns on the GPU (sampling 100 tokens), first and second runs,
#              each run capped at 90 s
# in that order of importance: a section that no longer fits the budget (GPU_MATRIX_BUDGET seconds, default
# 540) is skipped and says so; run it in a second call with GPU_MATRIX_SECTIONS.
# Results: $OUT (when set, else a new temporary folder) gets each section's log and JSON and summary.md.
# Wheels in .whl/ (optax, chex...) are installed first when the machine lacks them.

set -u
cd "$(dirname "$0")/.."
ROOT=$PWD
OUT=${OUT:-$(mktemp -d -t gpu-matrix-XXXX)}
mkdir -p "$OUT"
BUDGET=${GPU_MATRIX_BUDGET:-540}  # seconds for the whole script
SECTIONS=${GPU_MATRIX_SECTIONS:-env,matrix,compile,startup,overhead,vision,eager,cpushapes,cpufirst,shapes}
T0=$(date +%s)

if ls .whl/*.whl >/dev/null 2>&1; then
    python3 -m pip install -q --no-index --no-deps --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
export PYTHONPATH=$ROOT:${PYTHONPATH:-}
export PYTHONHASHSEED=0 MPLBACKEND=Agg PYTHONUNBUFFERED=1
unset JAX_COMPILATION_CACHE_DIR TORCHLIKE_LAZY TORCHLIKE_CACHE_DIR  # defaults, as a new user has them

if [ "${GPU_MATRIX_SMOKE:-0}" = 1 ]; then
    DEVICE=cpu; STEPS=2; WARMUP=1; LOOPS=3; UNTIL_HOT=5; PER_RUN=240
    export BENCH_SMALL=1 OMP_NUM_THREADS=1
    SCALE=4  # section time limits: a loaded 2-core CPU is slower than the GPU machine
    GPT_ARGS="--steps 3 --sample-len 5"; OVERHEAD_ARGS="--reps 5 --rounds 2"
else
    DEVICE=cuda; STEPS=20; WARMUP=5; LOOPS=100; UNTIL_HOT=30; PER_RUN=150
    GPT_ARGS="--device cuda"; OVERHEAD_ARGS="--device cuda --reps 100 --rounds 5 --repeats 3 --sizes 4,32,128,512"
    SCALE=1
fi
SHARED_CACHE=$(mktemp -d -t gpu-matrix-cache-XXXX)  # for sections that time steady state, not cold starts

left() { echo $((BUDGET - ($(date +%s) - T0))); }

# section NAME MAX_SECONDS COMMAND...: run with a timeout that fits the budget left; log to $OUT/NAME.log
section() {
    local name=$1 max=$(($2 * SCALE)) t s rc
    shift 2
    case ",$SECTIONS," in *",$name,"*) ;; *) return ;; esac
    t=$(left)
    t=$((t - 15))
    [ "$t" -gt "$max" ] && t=$max
    if [ "$t" -lt 20 ]; then
        echo "=== $name SKIPPED: $(left) s of the budget left" | tee "$OUT/$name.log"
        return
    fi
    echo "=== $name (timeout ${t}s, $(left) s of the budget left)"
    s=$(date +%s)
    timeout -k 10 "$t" "$@" > >(tee "$OUT/$name.log") 2>&1
    rc=$?
    echo "=== $name exit $rc after $(($(date +%s) - s)) s"
}

section env 30 bash -c '
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>/dev/null || echo "no nvidia-smi"
    python3 - <<EOF
import platform, jax, numpy
print("python", platform.python_version(), "jax", jax.__version__, "numpy", numpy.__version__, jax.devices())
try:
    import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())
except ImportError as e: print("no torch:", e)
try:
    import optax; print("optax", optax.__version__)
except ImportError as e: print("no optax (the jax backend will fail):", e)
EOF'

section matrix 370 python3 bench/run.py --device "$DEVICE" --workloads mlp,cnn,gpt,matmul_mlp \
    --backends torch,torchlike.lazy,torchlike.compile,jax --steps "$STEPS" --warmup "$WARMUP" --loops "$LOOPS" \
    --until-hot "$UNTIL_HOT" --fresh-cache --timeout "$PER_RUN" --out "$OUT/matrix.json"

TORCHLIKE_CACHE_DIR=$SHARED_CACHE section compile 90 python3 bench/run.py --device "$DEVICE" --workloads gpt \
    --backends torchlike.compile,torchlike.compile.eager --steps "$STEPS" --warmup "$WARMUP" \
    --until-hot "$UNTIL_HOT" --timeout $((80 * SCALE)) --out "$OUT/compile.json"

section startup 150 python3 bench/startup.py --torch --json "$OUT/startup.json" "examples/char_transformer.py $GPT_ARGS"

section overhead 40 python3 bench/compile_overhead.py $OVERHEAD_ARGS --json "$OUT/overhead.json"
# DataLoader + transforms pipelines against torch + torchvision on this host's CPU (issue 42; torchvision does
# not load with the CPU torch of the development machine), 2 workers and none
# (JAX_PLATFORMS=cpu: a CPU-only torchlike process, as on a machine without a GPU, where small ops run on the host)
JAX_PLATFORMS=cpu section vision 150 bash -c "python3 bench/vision_pipeline.py --backend both --workers 2 --epochs 2 \
    --json $OUT/vision_w2.json && python3 bench/vision_pipeline.py --backend both --workers 0 --epochs 1 --n 4000 \
    --json $OUT/vision_w0.json"
# eager per-op host cost and whole small steps against torch on this host's CPU (issue 42), unloaded
JAX_PLATFORMS=cpu section eager 120 bash -c "python3 bench/eager_ops.py --json $OUT/eager_ops.json \
    && python3 bench/host_cost.py --json $OUT/host_cost.json"
# new shapes on this host's CPU pinned to 2 cores, the development machine's count, but unloaded (issue 40's CPU
# column: that machine's timings are swamped whenever it runs tests); first runs and second runs, torch beside
JAX_PLATFORMS=cpu section cpushapes 200 taskset -c 0,1 python3 bench/shapes.py --second --timeout 90 \
    --json "$OUT/cpu_shapes.json"
# first and second runs of two small training scripts against torch, the same 2 pinned cores (issue 40's
# cpu_first_run item), in the library's default configuration
JAX_PLATFORMS=cpu section cpufirst 420 taskset -c 0,1 python3 bench/cpu_first_run.py --json "$OUT/cpu_first_run.json"
# new shapes on the GPU (issue 40): sampling 100 tokens with a growing context and the dynamic-padding GRU
SAMPLE_TOKENS=${SAMPLE_TOKENS:-100} section shapes 480 python3 bench/shapes.py --device "$DEVICE" --second \
    --timeout 90 --json "$OUT/shapes.json"

python3 - "$OUT" <<'EOF' | tee "$OUT/summary.md"
import json, os, sys

out = sys.argv[1]


def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def fmt(v, spec=".3f"):
    return "-" if v is None else format(v, spec)


m = load("matrix.json")
if m:
    rows = {(r["workload"], r["backend"]): r for r in m["rows"]}
    print(f"## {m.get('device_name')} ({m.get('date')}, {m.get('versions')})\n")
    print("median ms/step (first step in s); lazy/torch and compile/jax are speeds (higher is better)\n")
    print("| workload | torch | lazy | lazy/torch | compile | compile/jax | jax | lazy hot from run | compile hot from run |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    for w in ("mlp", "cnn", "gpt", "matmul_mlp"):
        cell = {}
        for b in ("torch", "torchlike.lazy", "torchlike.compile", "jax"):
            r = rows.get((w, b), {})
            cell[b] = r
        def ms(b):
            r = cell[b]
            if "ms_per_step" not in r:
                return r.get("error", "-")[:40] if r else "-"
            return f"{r['ms_per_step']:.3f} ({r['first_step_s']:.1f} s)"
        def ratio(a, b):
            x, y = cell[a].get("ms_per_step"), cell[b].get("ms_per_step")
            return f"{y / x:.2f}x" if x and y else "-"
        hot_l = cell["torchlike.lazy"].get("lazy_stats", {}).get("hot_takeover_at", "-")
        hot_c = cell["torchlike.compile"].get("compile_stats", {}).get("hot_takeover_at", "-")
        print(f"| {w} | {ms('torch')} | {ms('torchlike.lazy')} | {ratio('torchlike.lazy', 'torch')} | "
              f"{ms('torchlike.compile')} | {ratio('torchlike.compile', 'jax')} | {ms('jax')} | {hot_l} | {hot_c} |")
    print("\nloops (ms/step): unsynchronised 100 steps / loss.item() every step; cold-tier steps; peak MiB\n")
    print("| workload | backend | unsynced | item() | early steps | peak MiB | waited for hot |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for (w, b), r in rows.items():
        if "ms_per_step" in r:
            wait = f"{r['seconds_waiting_for_hot']:.1f} s, {r['steps_waiting_for_hot']} steps" if "hot_ready" in r else "-"
            print(f"| {w} | {b} | {fmt(r.get('unsynced_ms_per_step'))} | {fmt(r.get('item_ms_per_step'))} | "
                  f"{fmt(r.get('early_ms_per_step'))} | {r['peak_mem_bytes'] / 2**20:.0f} | {wait} |")
    g = {b: rows.get(("gpt", b), {}).get("peak_mem_bytes") for b in ("torch", "torchlike.lazy")}
    if all(g.values()):
        print(f"\nGPT peak memory: torch {g['torch'] / 2**20:.0f} MiB, lazy {g['torchlike.lazy'] / 2**20:.0f} MiB "
              f"({g['torchlike.lazy'] / g['torch']:.2f}x)")
c = load("compile.json")
if c:
    print("\ncompiled GPT step, default mode vs lazy mode off (ms/step):",
          ", ".join(f"{r['backend']} {fmt(r.get('ms_per_step'))}" for r in c["rows"]))
o = load("overhead.json")
if o:
    print("\ntorchlike.compile per-call overhead on the GPU (us): " + "; ".join(
        f"{r['case']}: {r['overhead_us']:.1f} (target {r['target_us']})" for r in o["rows"]))
s = load("startup.json")
if s:
    for r in s:
        def w(k):
            x = r.get(k)
            return f"wall {x['wall_s']:.1f} s, first step {fmt(x['first_step_s'], '.1f')} s" if x else "-"
        print(f"\n{r['script']}: first run {w('cold')}; second run {w('warm')}; torch {w('torch')}")
print(f"\nfiles: {out}")
fr = load("cpu_first_run.json")
if fr:
    print("\nfirst and second runs on the host's CPU, 2 cores (bench/cpu_first_run.py; wall s):\n")
    print("| script | torch | torch again | torchlike first | torchlike second | first / torch | second / torch |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for name, r in fr.items():
        w = lambda k: f"{r[k]['wall_s']:.1f}" if k in r else "-"
        print(f"| {name} | {w('torch')} | {w('torch_again')} | {w('torchlike_first')} | {w('torchlike_second')} "
              f"| {r.get('first_vs_torch', '-')}x | {r.get('second_vs_torch', '-')}x |")


def shapes_table(data, title):
    """bench/shapes.py --second's four patterns: seconds first / second run, ratios to torch, compiles."""
    if not data:
        return
    print(f"\n{title} (bench/shapes.py --second; s, first run with empty caches / second run):\n")
    print("| pattern | torch | torchlike | first ratio | second ratio | compiles |")
    print("|---|---:|---:|---:|---:|---:|")
    for p in ("sample", "padded", "sweep", "masked"):
        t, l = data.get(f"{p}/torch", {}), data.get(f"{p}/torchlike", {})
        cell = lambda r: (f"{r['first_s']:.2f} / {r.get('second_s', float('nan')):.3f}" if "first_s" in r
                          else (f"> {r['timeout_s']:.0f}" if r else "-"))
        rat = lambda k: f"{l[k] / t[k]:.1f}x" if k in l and k in t and t[k] else "-"
        print(f"| {p} | {cell(t)} | {cell(l)} | {rat('first_s')} | {rat('second_s')} | {l.get('compiles', '-')} |")


shapes_table(load("cpu_shapes.json"), "new shapes on the host's CPU, 2 cores")
shapes_table(load("shapes.json"), "new shapes on the GPU")
EOF
rm -rf "$SHARED_CACHE"
echo "gpu_matrix done in $(($(date +%s) - T0)) s; results in $OUT"

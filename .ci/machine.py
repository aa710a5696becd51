"""Print what decides the CPU numerics of a test run, so a failure on a new machine explains itself.

torch picks its vectorised kernels from the CPU (``ATEN_CPU_CAPABILITY`` overrides), MKL picks its own
code path for torch's float32 sqrt/log/exp from the CPU's vendor and instruction set, XLA compiles for
the host CPU (``--xla_cpu_max_isa`` in ``XLA_FLAGS`` caps it), and numpy dispatches to SIMD targets.
"""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys


def cpu() -> None:
    model, flags = platform.processor() or "?", set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key.strip() == "model name":
                    model = value.strip()
                elif key.strip() == "flags":
                    flags = set(value.split())
                    break
    except OSError:
        pass
    wanted = sorted(f for f in flags if f in ("avx", "avx2", "fma", "f16c") or f.startswith("avx512"))
    print(f"cpu: {model} ({platform.machine()}, {os.cpu_count()} cores)")
    print(f"cpu flags: {' '.join(wanted) if wanted else '(none of avx/avx2/fma/avx512*, or unreadable)'}")


def torch_info() -> None:
    import torch

    env = os.environ.get("ATEN_CPU_CAPABILITY")
    print(f"torch {torch.__version__}: CPU capability {torch.backends.cpu.get_cpu_capability()}"
          f"{f' (ATEN_CPU_CAPABILITY={env})' if env else ''}, MKL {torch.backends.mkl.is_available()}")  # fmt: skip
    # MKL names the code path it dispatched to in its verbose banner
    probe = "import torch; torch.ones(64, 64) @ torch.ones(64, 64)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120,
                         env=dict(os.environ, MKL_VERBOSE="1")).stdout  # fmt: skip
    banner = next((line for line in out.splitlines() if line.startswith("MKL_VERBOSE") and "oneMKL" in line), "")
    match = re.search(r"architecture (.*?processors)", banner)
    print(f"MKL code path: {match.group(1) if match else banner or '(no MKL banner)'}")


def jax_info() -> None:
    import jax
    import jaxlib

    flags = os.environ.get("XLA_FLAGS", "")
    isa = re.search(r"--xla_cpu_max_isa=(\S+)", flags)
    print(f"jax {jax.__version__}, jaxlib {jaxlib.__version__}: default backend {jax.default_backend()}, "
          f"devices {[d.platform for d in jax.devices()]}; XLA CPU codegen targets the host CPU"
          f"{f', capped at {isa.group(1)}' if isa else ''}{f' (XLA_FLAGS={flags})' if flags else ''}")  # fmt: skip


def numpy_info() -> None:
    import numpy as np
    from numpy._core._multiarray_umath import __cpu_baseline__, __cpu_dispatch__, __cpu_features__

    usable = [t for t in __cpu_dispatch__ if __cpu_features__.get(t)]
    print(f"numpy {np.__version__}: SIMD baseline {' '.join(__cpu_baseline__)}, dispatch here {' '.join(usable)}")


if __name__ == "__main__":
    cpu()
    for info in (torch_info, jax_info, numpy_info):
        try:
            info()
        except Exception as e:  # noqa: BLE001 - a diagnostic must not stop the run
            print(f"{info.__name__}: {type(e).__name__}: {e}")

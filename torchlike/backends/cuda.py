"""torch.backends.cuda: ``matmul.allow_tf32`` maps to JAX's default matmul precision."""

from __future__ import annotations


class _Matmul:
    @property
    def allow_tf32(self) -> bool:
        from .._precision import get_float32_matmul_precision

        return get_float32_matmul_precision() != "highest"

    @allow_tf32.setter
    def allow_tf32(self, value: bool) -> None:
        from .._precision import set_float32_matmul_precision

        set_float32_matmul_precision("high" if value else "highest")

    allow_fp16_reduced_precision_reduction = True
    allow_bf16_reduced_precision_reduction = True


matmul = _Matmul()


def is_built() -> bool:
    return True


def flash_sdp_enabled() -> bool:
    return True


def enable_flash_sdp(enabled: bool) -> None:
    pass


def mem_efficient_sdp_enabled() -> bool:
    return True


def enable_mem_efficient_sdp(enabled: bool) -> None:
    pass


def math_sdp_enabled() -> bool:
    return True


def enable_math_sdp(enabled: bool) -> None:
    pass

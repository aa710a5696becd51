"""torch.fft: re-exports; the transforms are table ops in ``torchlike._ops.fft``."""

from .._ops.fft import _fft_fft as fft
from .._ops.fft import _fft_fft2 as fft2
from .._ops.fft import _fft_fftn as fftn
from .._ops.fft import _fft_hfft as hfft
from .._ops.fft import _fft_hfft2 as hfft2
from .._ops.fft import _fft_hfftn as hfftn
from .._ops.fft import _fft_ifft as ifft
from .._ops.fft import _fft_ifft2 as ifft2
from .._ops.fft import _fft_ifftn as ifftn
from .._ops.fft import _fft_ihfft as ihfft
from .._ops.fft import _fft_ihfft2 as ihfft2
from .._ops.fft import _fft_ihfftn as ihfftn
from .._ops.fft import _fft_irfft as irfft
from .._ops.fft import _fft_irfft2 as irfft2
from .._ops.fft import _fft_irfftn as irfftn
from .._ops.fft import _fft_rfft as rfft
from .._ops.fft import _fft_rfft2 as rfft2
from .._ops.fft import _fft_rfftn as rfftn
from .._ops.fft import fftfreq, fftshift, ifftshift, rfftfreq

__all__ = [
    "fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "hfft2", "hfftn", "ifft", "ifft2", "ifftn", "ifftshift",
    "ihfft", "ihfft2", "ihfftn", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn",
]  # fmt: skip


def __getattr__(name: str) -> object:
    from ..compat._names import missing_attribute_error

    raise missing_attribute_error(__name__, name)

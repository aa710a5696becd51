"""torch's autocast op lists (aten/src/ATen/autocast_mode.{h,cpp}), by torchlike op name.

Categories: 'lower' (run in the autocast dtype), 'fp32' (run in float32), 'fp32_opt' (float32
unless the call passes dtype=), 'promote' (widest floating type of the inputs), 'banned'.
Composite ops that torchlike implements as one op (cross_entropy) take the category their
decomposition ends in under torch (log_softmax + nll_loss: float32).
"""

from __future__ import annotations

_LOWER_CUDA = """_convolution conv1d conv2d conv3d conv_tbc conv_transpose1d conv_transpose2d conv_transpose3d convolution
prelu addmm addmv addr matmul einsum mm mv linalg_vecdot linear addbmm baddbmm bmm chain_matmul linalg_multi_dot
lstm_cell gru_cell rnn_tanh_cell rnn_relu_cell scaled_dot_product_attention"""

_FP32_CUDA = """acos asin cosh erfinv exp expm1 log log10 log2 log1p reciprocal rsqrt sinh tan pow softplus layer_norm
native_layer_norm rms_norm group_norm frobenius_norm nuclear_norm cosine_similarity poisson_nll_loss
cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss kl_div l1_loss smooth_l1_loss huber_loss mse_loss
margin_ranking_loss multilabel_margin_loss soft_margin_loss triplet_margin_loss multi_margin_loss
binary_cross_entropy_with_logits dist pdist cdist renorm logsumexp upsample_nearest1d upsample_nearest2d
upsample_nearest3d upsample_linear1d upsample_bilinear2d upsample_trilinear3d upsample_bicubic2d interpolate
cross_entropy"""

_FP32_OPT = "prod softmax log_softmax cumprod cumsum linalg_vector_norm linalg_matrix_norm sum norm"

_PROMOTE_CUDA = "addcdiv addcmul atan2 bilinear cross dot vdot grid_sampler index_put tensordot scatter_add"

_LOWER_CPU = """conv1d conv2d conv3d bmm mm linalg_vecdot baddbmm addmm addbmm linear _convolution matmul conv_tbc
conv_transpose1d conv_transpose2d conv_transpose3d prelu scaled_dot_product_attention"""

_FP32_CPU = """avg_pool3d binary_cross_entropy grid_sampler polar prod quantile nanquantile stft cdist trace view_as_complex
cholesky cholesky_inverse cholesky_solve inverse lu_solve orgqr ormqr pinverse max_pool3d max_unpool2d max_unpool3d
adaptive_avg_pool3d reflection_pad1d reflection_pad2d replication_pad1d replication_pad2d replication_pad3d mse_loss
cosine_embedding_loss nll_loss nll_loss2d hinge_embedding_loss poisson_nll_loss smooth_l1_loss cross_entropy_loss
cross_entropy l1_loss huber_loss margin_ranking_loss soft_margin_loss triplet_margin_loss multi_margin_loss ctc_loss
kl_div multilabel_margin_loss binary_cross_entropy_with_logits fft_fft fft_ifft fft_fft2 fft_ifft2 fft_fftn fft_ifftn
fft_rfft fft_irfft fft_rfft2 fft_irfft2 fft_rfftn fft_irfftn fft_hfft fft_ihfft linalg_cond linalg_matrix_rank
linalg_solve linalg_cholesky linalg_svdvals linalg_eigvals linalg_eigvalsh linalg_inv linalg_householder_product
linalg_tensorinv linalg_tensorsolve geqrf qr svd triangular_solve fractional_max_pool2d fractional_max_pool3d
adaptive_max_pool3d linalg_qr linalg_cholesky_ex linalg_svd linalg_eig linalg_eigh linalg_lstsq linalg_inv_ex"""

_PROMOTE_CPU = "stack cat index_copy"

# Composites torch decomposes before autocast sees them, into ops of its CPU lists: einsum and tensordot end in
# bmm/mm (lower). Measured against torch 2.13 under torch.autocast('cpu').
_LOWER_CPU_COMPOSITE = "einsum tensordot"

# torchlike ops that stand for several torch ops: the torch name autocast knows, from the static arguments.
TORCH_NAME = {
    "_einsum": lambda static: "einsum",
    "_tensordot": lambda static: "tensordot",
    "_avg_pool": lambda static: f"avg_pool{len(static[0])}d",
    "_max_pool": lambda static: f"max_pool{len(static[0])}d",
    "_adaptive_avg_pool": lambda static: f"adaptive_avg_pool{len(static[0])}d",
    "_adaptive_max_pool": lambda static: f"adaptive_max_pool{len(static[0])}d",
    "_upsample": lambda static: "upsample_nearest1d",  # every upsample kernel: float32 on CUDA, none on CPU
}


# torchlike kernels behind a public op that torch's lists name: the name torch lists them under.
LISTED_AS = {
    "_linear": "linear", "_layer_norm": "layer_norm", "_group_norm": "group_norm", "_rms_norm": "rms_norm",
    "_mse_loss": "mse_loss", "_l1_loss": "l1_loss", "_smooth_l1_loss": "smooth_l1_loss", "_huber_loss": "huber_loss",
    "_nll_loss": "nll_loss", "_cross_entropy": "cross_entropy", "_binary_cross_entropy": "binary_cross_entropy",
    "_bce_with_logits": "binary_cross_entropy_with_logits", "_kl_div": "kl_div", "_poisson_nll_loss": "poisson_nll_loss",
    "_soft_margin_loss": "soft_margin_loss", "_cosine_embedding_loss": "cosine_embedding_loss",
    "_margin_ranking_loss": "margin_ranking_loss", "_hinge_embedding_loss": "hinge_embedding_loss",
    "_multi_margin_loss": "multi_margin_loss", "_triplet_margin_loss": "triplet_margin_loss", "_ctc_loss": "ctc_loss",
    "_multilabel_margin_loss": "multilabel_margin_loss", "_einsum": "einsum", "_softplus": "softplus",
    "_index_put": "index_put", "_tensordot": "tensordot", "_linalg_eigh": "linalg_eigh", "_linalg_qr": "linalg_qr",
    "_linalg_svd": "linalg_svd", "_stft": "stft",
    **{f"_fft_{n}": f"fft_{n}" for n in "fft ifft fft2 ifft2 fftn ifftn rfft irfft rfft2 irfft2 rfftn irfftn hfft ihfft".split()},
}  # fmt: skip

# torchlike kernels for composites that torch's lists don't name: the category torch's decomposition
# ends in on that device (upsample_* and the RNN cells are listed for CUDA; on the CPU, torch casts
# RNNs but leaves norms, softmin, interpolation and the composite losses in their input dtype).
_KERNELS_CUDA = """_rnn_layer:lower _rnn_cell:lower _sdpa:lower _sdpa_weights:lower _sdpa_apply:lower
_mha_attention:lower _upsample:fp32 _softmin:fp32 _gaussian_nll_loss:fp32 _multilabel_soft_margin_loss:fp32
_ctc_loss:fp32"""
_KERNELS_CPU = "_rnn_layer:lower _rnn_cell:lower _sdpa:lower _sdpa_weights:lower _sdpa_apply:lower _mha_attention:lower"


def _kernels(spec: str) -> tuple:
    return tuple((name, cat) for name, cat in (item.split(":") for item in spec.split()))


def _table(*groups: tuple, kernels: tuple = ()) -> dict:
    out = {}
    for names, cat in groups:
        for n in names.split():
            out[n] = cat
    out.update(kernels)
    return out


# The one place an op's autocast category is declared: device type -> op name -> category.
POLICY = {
    "cuda": _table((_LOWER_CUDA, "lower"), (_FP32_CUDA, "fp32"), (_FP32_OPT, "fp32_opt"), (_PROMOTE_CUDA, "promote"),
                   ("binary_cross_entropy", "banned"), kernels=_kernels(_KERNELS_CUDA)),
    "cpu": _table((_LOWER_CPU, "lower"), (_LOWER_CPU_COMPOSITE, "lower"), (_FP32_CPU, "fp32"), (_PROMOTE_CPU, "promote"), kernels=_kernels(_KERNELS_CPU)),
}  # fmt: skip


def category(op_name: str, device_type: str, static: tuple = ()) -> str | None:
    """The autocast category of the op (table name ``op_name``, static arguments ``static``) on ``device_type``."""
    table = POLICY[device_type]
    alias = TORCH_NAME.get(op_name)
    if alias is not None:
        cat = table.get(alias(static))
        if cat is not None:
            return cat
    return table.get(op_name) or table.get(LISTED_AS.get(op_name, ""))

BANNED_MESSAGE = (
    "torch.nn.functional.binary_cross_entropy and torch.nn.BCELoss are unsafe to autocast.\n"
    "Many models use a sigmoid layer right before the binary cross entropy layer.\n"
    "In this case, combine the two layers using torch.nn.functional.binary_cross_entropy_with_logits\n"
    "or torch.nn.BCEWithLogitsLoss.  binary_cross_entropy_with_logits and BCEWithLogits are\n"
    "safe to autocast."
)

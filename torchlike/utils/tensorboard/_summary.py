"""Summary protocol buffers for scalars, histograms and text (torch.utils.tensorboard.summary)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..._core import dtype as D
from ..._core.tensor import Tensor
from ._tb import HistogramProto, Summary, SummaryMetadata, TensorProto, TensorShapeProto, TextPluginData


def make_np(x: Any) -> np.ndarray:
    """torch's make_np: numpy arrays pass through, scalars become 1-element arrays, tensors are copied out."""
    if isinstance(x, np.ndarray):
        return x
    if np.isscalar(x):
        return np.array([x])
    if isinstance(x, Tensor):
        t = x.detach()
        if t.dtype is D.bfloat16:  # torch: bfloat16 goes through float16
            t = t.to(D.float16)
        return t.cpu().numpy()
    raise NotImplementedError(f"Got {type(x)}, but numpy array or torch tensor are expected.")


def scalar(name: str, tensor: Any, new_style: bool = False, double_precision: bool = False) -> Any:
    value = make_np(tensor).squeeze()
    if value.ndim != 0:
        raise AssertionError(
            f"Tensor should contain one element (0 dimensions). Was given size: {value.size} and {value.ndim} dimensions."
        )
    v = float(value)
    if not new_style:
        return Summary(value=[Summary.Value(tag=name, simple_value=v)])
    proto = (
        TensorProto(double_val=[v], dtype="DT_DOUBLE")
        if double_precision
        else TensorProto(float_val=[v], dtype="DT_FLOAT")
    )
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="scalars"))
    return Summary(value=[Summary.Value(tag=name, tensor=proto, metadata=meta)])


def histogram(name: str, values: Any, bins: Any, max_bins: int | None = None) -> Any:
    hist = make_histogram(make_np(values).astype(float), bins, max_bins)
    return Summary(value=[Summary.Value(tag=name, histo=hist)])


def make_histogram(values: np.ndarray, bins: Any, max_bins: int | None = None) -> Any:
    """A HistogramProto holding only the span of non-empty bins, as TensorBoard's histogram.cc does."""
    if values.size == 0:
        raise ValueError("The input has no element.")
    values = values.reshape(-1)
    counts, limits = np.histogram(values, bins=bins)
    if max_bins is not None and len(counts) > max_bins:
        group = len(counts) // max_bins
        if len(counts) % group:
            counts = np.pad(counts, [[0, group - len(counts) % group]])
        counts = counts.reshape(-1, group).sum(axis=-1)
        new_limits = np.empty((counts.size + 1,), limits.dtype)
        new_limits[:-1] = limits[:-1:group]
        new_limits[-1] = limits[-1]
        limits = new_limits
    nonzero = np.cumsum(np.greater(counts, 0))
    start, end = (int(i) for i in np.searchsorted(nonzero, [0, nonzero[-1] - 1], side="right"))
    end += 1
    # TensorBoard keeps right bin edges only: keep one empty bin on the left for the leftmost edge
    counts = counts[start - 1 : end] if start > 0 else np.concatenate([[0], counts[:end]])
    limits = limits[start : end + 1]
    if counts.size == 0 or limits.size == 0:
        raise ValueError("The histogram is empty, please file a bug report.")
    return HistogramProto(
        min=values.min(), max=values.max(), num=len(values), sum=values.sum(), sum_squares=values.dot(values),
        bucket_limit=limits.tolist(), bucket=counts.tolist(),
    )  # fmt: skip


def text(tag: str, text: str) -> Any:
    content = TextPluginData(version=0).SerializeToString()
    meta = SummaryMetadata(plugin_data=SummaryMetadata.PluginData(plugin_name="text", content=content))
    proto = TensorProto(dtype="DT_STRING", string_val=[text.encode("utf_8")],
                        tensor_shape=TensorShapeProto(dim=[TensorShapeProto.Dim(size=1)]))  # fmt: skip
    return Summary(value=[Summary.Value(tag=tag + "/text_summary", metadata=meta, tensor=proto)])

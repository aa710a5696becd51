"""The one place that imports the optional ``tensorboard`` package."""

from __future__ import annotations

try:
    from tensorboard.compat.proto.event_pb2 import Event, SessionLog
    from tensorboard.compat.proto.summary_pb2 import HistogramProto, Summary, SummaryMetadata
    from tensorboard.compat.proto.tensor_pb2 import TensorProto
    from tensorboard.compat.proto.tensor_shape_pb2 import TensorShapeProto
    from tensorboard.plugins.text.plugin_data_pb2 import TextPluginData
    from tensorboard.summary.writer.event_file_writer import EventFileWriter
except ModuleNotFoundError as e:
    if not (e.name or "").startswith("tensorboard"):
        raise
    raise ModuleNotFoundError(
        "torchlike.utils.tensorboard needs the `tensorboard` package, as torch.utils.tensorboard does: "
        "pip install tensorboard",
        name="tensorboard",
    ) from None

__all__ = ["Event", "EventFileWriter", "HistogramProto", "SessionLog", "Summary", "SummaryMetadata", "TensorProto",
           "TensorShapeProto", "TextPluginData"]  # fmt: skip

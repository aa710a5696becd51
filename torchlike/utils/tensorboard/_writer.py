"""SummaryWriter and FileWriter (torch.utils.tensorboard.writer), over TensorBoard's own EventFileWriter."""

from __future__ import annotations

import os
import time
from typing import Any

from . import _summary
from ._tb import Event, EventFileWriter, SessionLog

# torch's SummaryWriter methods that this one does not provide yet (they raise, naming themselves).
_NOT_IMPLEMENTED = frozenset(
    "add_hparams add_tensor add_histogram_raw add_image add_images add_image_with_boxes add_figure add_video "
    "add_audio add_onnx_graph add_graph add_embedding add_pr_curve add_pr_curve_raw add_custom_scalars "
    "add_custom_scalars_multilinechart add_custom_scalars_marginchart add_mesh".split()
)


class FileWriter:
    """Writes Event protocol buffers to one event file in ``log_dir`` (asynchronously, via TensorBoard)."""

    def __init__(
        self, log_dir: Any, max_queue: int = 10, flush_secs: int = 120, filename_suffix: str = ""
    ) -> None:
        self.event_writer = EventFileWriter(str(log_dir), max_queue, flush_secs, filename_suffix)

    def get_logdir(self) -> str:
        return self.event_writer.get_logdir()

    def add_event(self, event: Any, step: Any = None, walltime: float | None = None) -> None:
        event.wall_time = time.time() if walltime is None else walltime
        if step is not None:
            event.step = int(step)
        self.event_writer.add_event(event)

    def add_summary(self, summary: Any, global_step: Any = None, walltime: float | None = None) -> None:
        self.add_event(Event(summary=summary), global_step, walltime)

    def flush(self) -> None:
        self.event_writer.flush()

    def close(self) -> None:
        self.event_writer.close()


class SummaryWriter:
    """torch.utils.tensorboard.SummaryWriter: scalars, histograms and text into TensorBoard event files.

    Implements ``add_scalar``, ``add_scalars``, ``add_histogram``, ``add_text``, ``flush`` and
    ``close``; torch's other ``add_*`` methods raise NotImplementedError.
    """

    def __init__(self, log_dir: Any = None, comment: str = "", purge_step: int | None = None, max_queue: int = 10,
                 flush_secs: int = 120, filename_suffix: str = "") -> None:  # fmt: skip
        if not log_dir:
            import socket
            from datetime import datetime

            log_dir = os.path.join(
                "runs", datetime.now().strftime("%b%d_%H-%M-%S") + "_" + socket.gethostname() + comment
            )
        self.log_dir = log_dir
        self.purge_step = purge_step
        self.max_queue = max_queue
        self.flush_secs = flush_secs
        self.filename_suffix = filename_suffix
        self.file_writer: FileWriter | None = None
        self.all_writers: dict[str, FileWriter] | None = None
        self._get_file_writer()
        # TensorBoard's default histogram bins: +-1e-12 growing by 10% up to 1e20, and 0
        v, buckets = 1e-12, []
        while v < 1e20:
            buckets.append(v)
            v *= 1.1
        self.default_bins = [-b for b in reversed(buckets)] + [0] + buckets

    def _get_file_writer(self) -> FileWriter:
        """The default FileWriter, recreated after ``close()``."""
        if self.all_writers is None or self.file_writer is None:
            self.file_writer = FileWriter(self.log_dir, self.max_queue, self.flush_secs, self.filename_suffix)
            self.all_writers = {self.file_writer.get_logdir(): self.file_writer}
            if self.purge_step is not None:
                step = self.purge_step
                self.file_writer.add_event(Event(step=step, file_version="brain.Event:2"))
                self.file_writer.add_event(Event(step=step, session_log=SessionLog(status=SessionLog.START)))
                self.purge_step = None
        return self.file_writer

    def get_logdir(self) -> str:
        return self.log_dir

    def add_scalar(self, tag: str, scalar_value: Any, global_step: Any = None, walltime: float | None = None,
                   new_style: bool = False, double_precision: bool = False) -> None:  # fmt: skip
        summary = _summary.scalar(tag, scalar_value, new_style=new_style, double_precision=double_precision)
        self._get_file_writer().add_summary(summary, global_step, walltime)

    def add_scalars(self, main_tag: str, tag_scalar_dict: dict, global_step: Any = None,
                    walltime: float | None = None) -> None:  # fmt: skip
        """One scalar per key, each in its own run folder ``<log_dir>/<main_tag>_<key>`` (as torch)."""
        walltime = time.time() if walltime is None else walltime
        logdir = self._get_file_writer().get_logdir()
        writers = self.all_writers
        if writers is None:
            raise AssertionError("self.all_writers is None")
        for tag, value in tag_scalar_dict.items():
            fw_tag = logdir + "/" + main_tag.replace("/", "_") + "_" + tag
            fw = writers.get(fw_tag)
            if fw is None:
                fw = writers[fw_tag] = FileWriter(
                    fw_tag, self.max_queue, self.flush_secs, self.filename_suffix
                )
            fw.add_summary(_summary.scalar(main_tag, value), global_step, walltime)

    def add_histogram(self, tag: str, values: Any, global_step: Any = None, bins: Any = "tensorflow",
                      walltime: float | None = None, max_bins: int | None = None) -> None:  # fmt: skip
        if isinstance(bins, str) and bins == "tensorflow":
            bins = self.default_bins
        self._get_file_writer().add_summary(
            _summary.histogram(tag, values, bins, max_bins=max_bins), global_step, walltime
        )

    def add_text(
        self, tag: str, text_string: str, global_step: Any = None, walltime: float | None = None
    ) -> None:
        self._get_file_writer().add_summary(_summary.text(tag, text_string), global_step, walltime)

    def flush(self) -> None:
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()

    def close(self) -> None:
        if self.all_writers is None:
            return
        for writer in self.all_writers.values():
            writer.flush()
            writer.close()
        self.file_writer = self.all_writers = None

    def __enter__(self) -> SummaryWriter:
        return self

    def __exit__(self, exc_type: Any, exc_val: Any, exc_tb: Any) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        if name in _NOT_IMPLEMENTED:
            raise NotImplementedError(f"torchlike's SummaryWriter does not implement {name}()")
        raise AttributeError(f"'SummaryWriter' object has no attribute '{name}'")

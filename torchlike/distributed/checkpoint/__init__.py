"""torch.distributed.checkpoint: ``save``/``load`` of (sharded) state dicts into a folder, in
torchlike's own format (see ``_filesystem.py``), and the ``state_dict`` helpers."""

from ._filesystem import FileSystemReader, FileSystemWriter, Metadata, load, save  # noqa: F401

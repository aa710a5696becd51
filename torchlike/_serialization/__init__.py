"""The implementation of torchlike.serialization (torch.save / torch.load)."""

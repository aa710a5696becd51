"""Implementation of torchlike.nn.functional (see that module)."""

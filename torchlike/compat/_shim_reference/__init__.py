"""Holds the stand-in `torchlike` package for compare's reference run (a package so it is installed)."""

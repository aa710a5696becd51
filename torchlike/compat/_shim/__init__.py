"""Holds the stand-in `torch` package (see torchlike/compat/_run.py); a package so it is installed."""

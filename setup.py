"""Builds the optional C byte scans of the statement cut; without a compiler, capgap stays pure Python."""

from setuptools import Extension, setup

setup(
    ext_modules=[
        # optional: a failed build is a warning, and chunks.py uses its Python reference
        Extension("capgap.reading._cutscan", ["src/capgap/reading/_cutscan.c"], optional=True),
    ]
)

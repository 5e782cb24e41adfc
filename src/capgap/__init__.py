"""capgap: find and fix what an LLM inference stack lacks for the GPU it runs on."""

from __future__ import annotations

__version__ = "0.1.0"

"""`python -m capgap`: the same entry point as the console script."""

from __future__ import annotations

from capgap.cli import main

if __name__ == "__main__":
    main()

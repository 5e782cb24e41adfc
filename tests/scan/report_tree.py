"""A small engine tree for the scan's reports: one high table (a KeyError) capgap fix can add an
entry to, a model file whose refusal message is hostile HTML, another model's file, a test's
gate, and a file whose name is hostile HTML. Written by the tests (no upstream source)."""

from __future__ import annotations

import subprocess
import textwrap
from pathlib import Path

HOSTILE_NAME = 'eng/"><img src=x onerror=alert(2)>.py'
FILES = {
    "eng/__init__.py": "",
    "eng/comm/all_reduce.py": """
        import torch

        MAX_SIZES = {(9, 0): 1, (10, 0): 2}


        def limit():
            return MAX_SIZES[torch.cuda.get_device_capability()]
        """,
    "eng/models/llama_x.py": """
        import torch


        def pick():
            if torch.cuda.get_device_capability()[0] == 10:
                return "fast"
            raise ValueError("<script>alert(1)</script> only sm100")
        """,
    "eng/models/qwen_y.py": """
        import torch


        def pick():
            if torch.cuda.get_device_capability()[0] == 9:
                return "fast"
            return "slow"
        """,
    "tests/test_pick.py": """
        import torch


        def test_pick():
            if torch.cuda.get_device_capability()[0] == 9:
                return "fast"
            return "slow"
        """,
    HOSTILE_NAME: """
        import torch


        def attention_pick():
            if torch.cuda.get_device_capability()[0] == 9:
                return "<b>fast</b>"
            return "slow"
        """,
}


def write_report_tree(root: Path, git: bool = False) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"))
    if git:
        env = ["-c", "user.email=t@example.com", "-c", "user.name=t"]
        for args in (["init", "-q"], ["add", "-A"], [*env, "commit", "-qm", "tree"]):
            subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)
    return root

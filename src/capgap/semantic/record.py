"""The semantic patch record: "in module M (path P), table SYMBOL, key K = VALUE".

Stored in the patch store as `semantic.json` (a list of these dicts), next to the textual diff,
so that a patch whose context moved can still be re-applied by what it means.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

from capgap.errors import StoreError

FIELDS = ("module", "path", "symbol", "key", "value", "key_style", "note")


@dataclass(frozen=True)
class SemanticEdit:
    module: str  # dotted module name ("sglang.srt.distributed.symm_mem"), "" when unknown
    path: str  # file path relative to the target root, "/"-separated
    symbol: str  # qualified table name: NAME, Class.NAME, func.NAME
    key: str  # the key as source text in the table's style: 12, "12.0", (12, 0)
    value: str  # the value as source text: [6, 8], 64 * MiB
    key_style: str  # major-int | number-int | dotted-str | sm-str | tuple
    note: str = ""  # the comment written on the entry's line ("" for none)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> SemanticEdit:
        if not isinstance(data, dict):
            raise StoreError(f"semantic patch record is not an object: {data!r}")
        missing = [f for f in FIELDS[:-1] if not isinstance(data.get(f), str)]
        if missing:
            raise StoreError(f"semantic patch record lacks {', '.join(missing)}: {data!r}")
        return cls(**{f: str(data.get(f, "")) for f in FIELDS})

    def describe(self) -> str:
        where = self.module or self.path
        return f"in {where} ({self.path}), table {self.symbol}, key {self.key} = {self.value}"


def module_name(rel_path: str) -> str:
    """`pkg/sub/mod.py` -> `pkg.sub.mod`; `pkg/__init__.py` -> `pkg`; `src/` layouts lose the `src`."""
    parts = rel_path.replace("\\", "/").split("/")
    if parts and parts[0] == "src" and len(parts) > 1:
        parts = parts[1:]
    if not parts[-1].endswith(".py"):
        return ""
    parts[-1] = parts[-1][:-3]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(p for p in parts if p)

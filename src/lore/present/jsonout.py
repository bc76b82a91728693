"""The stable --json shapes. Keys are only ever added, never renamed or removed
(see docs/json.md)."""

from __future__ import annotations

import json
from typing import Any


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False)


def tag_list(counts: list[tuple[str, int]], match: str | None, limit: int) -> dict[str, Any]:
    """The tags in use with their note counts, optionally only those containing `match`
    (case-insensitive, a leading # ignored): MCP list_tags and GET /api/v1/tags."""
    needle = (match or "").lstrip("#").casefold()
    chosen = [(t, n) for t, n in counts if needle in t.casefold()]
    return {
        "total": len(counts),
        "matched": len(chosen),
        "tags": [{"tag": t, "notes": n} for t, n in chosen[:limit]],
    }

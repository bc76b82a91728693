"""The stable --json shapes. Keys are only ever added, never renamed or removed
(see docs/json.md)."""

from __future__ import annotations

import json
from typing import Any


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False)

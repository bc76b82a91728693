"""The real console script, run as a user runs it: a new process in a folder, with none of
the test session's LORE_* settings."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

LORE = Path(sys.executable).parent / "lore"


def clean_env() -> dict[str, Any]:
    """This process's environment without LORE_* (the index and settings a test chose)."""
    return {k: v for k, v in os.environ.items() if not k.startswith("LORE_")}


def lore_process(*args: str | Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(LORE), *map(str, args)],
        capture_output=True,
        text=True,
        env=clean_env(),
        cwd=cwd,
        timeout=60,
    )

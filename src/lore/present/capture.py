"""Human and JSON-lines output of `lore ingest` and `lore watch`."""

from __future__ import annotations

import datetime as dt
import json
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..capture import CaptureReport
    from ..model.sync import Skipped
    from ..watch import WatchBatch

_SHOWN_PER_REASON = 5


def _grouped(items: list[Skipped]) -> list[str]:
    """One line per reason: the path when it is alone, else the count and a few paths."""
    by_reason: dict[str, list[str]] = {}
    for item in items:
        by_reason.setdefault(item.reason, []).append(item.path)
    lines = []
    for reason, paths in by_reason.items():
        if len(paths) == 1:
            lines.append(f"  skipped {paths[0]}: {reason}")
            continue
        shown = ", ".join(paths[:_SHOWN_PER_REASON])
        more = len(paths) - _SHOWN_PER_REASON
        tail = f" (and {more} more)" if more > 0 else ""
        lines.append(f"  skipped {len(paths)} files: {reason}: {shown}{tail}")
    return lines


def format_capture(report: CaptureReport) -> str:
    lines = [f"added {c.path}  ({c.platform}) {c.title}" for c in report.added]
    for dup in report.duplicates:
        lines.append(
            f"already in the vault: {dup.origin} is {dup.path} ({dup.reason});"
            " --force captures a new version"
        )
    lines += _grouped(report.skipped)
    lines += [f"  warning {w.path}: {w.reason}" for w in report.warnings]
    summary = [f"captured {len(report.added)}"]
    if report.duplicates:
        summary.append(f"already in the vault {len(report.duplicates)}")
    if report.skipped:
        summary.append(f"skipped {len(report.skipped)}")
    if report.failed:
        summary.append(f"failed {len(report.failed)}")
    lines.append(", ".join(summary))
    return "\n".join(lines)


def _clock(stamp: str) -> str:
    try:
        return dt.datetime.fromisoformat(stamp).astimezone().strftime("%H:%M:%S")
    except ValueError:
        return stamp


def format_watch_batch(batch: WatchBatch) -> list[str]:
    """Lines for one sync of `lore watch`: a summary for the first, one line per change after."""
    at = _clock(batch.time)
    lines: list[str] = []
    if batch.error is not None:
        lines.append(f"{at} not synced: {batch.error}; will retry")
    elif batch.initial:
        total = batch.unchanged + len(batch.added) + len(batch.changed) + len(batch.renamed)
        lines.append(
            f"{at} index up to date: {total} notes (added {len(batch.added)},"
            f" changed {len(batch.changed)}, deleted {len(batch.deleted)})"
        )
    else:
        lines += [f"{at} added {p}" for p in batch.added]
        lines += [f"{at} changed {p}" for p in batch.changed]
        lines += [f"{at} renamed {a} -> {b}" for a, b in batch.renamed]
        lines += [f"{at} deleted {p}" for p in batch.deleted]
    lines += [f"{at} skipped {s.path}: {s.reason}" for s in batch.skipped]
    lines += [f"{at} warning {w.path}: {w.reason}" for w in batch.warnings]
    return lines


def watch_json_line(batch: WatchBatch) -> str:
    """One sync as one line of JSON (JSON Lines), for scripts that follow the output."""
    return json.dumps(batch.to_dict(), ensure_ascii=False, separators=(",", ":"))

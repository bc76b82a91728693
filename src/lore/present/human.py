"""Human-readable output: hits with their evidence, sync reports, status, doctor."""

from __future__ import annotations

import re
import sys
import time
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from ..model import Hit, SearchResult
    from ..model.sync import Skipped, SyncReport

BOLD = "\x1b[1m"
DIM = "\x1b[2m"
CYAN = "\x1b[36m"
RESET = "\x1b[0m"


# Control characters (a terminal escape, a carriage return, a NUL) and bidirectional
# overrides/isolates, which a note or a file name may hold: shown, never obeyed.
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_CONTROL_BUT_LINES = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean(text: str, *, lines: bool = False) -> str:
    """`text` safe to print on a terminal: each control character as its escape (\\x1b);
    with `lines`, newlines and tabs are kept."""
    pattern = _CONTROL_BUT_LINES if lines else _CONTROL
    return pattern.sub(lambda m: repr(m.group())[1:-1], text)


def _style(text: str, code: str, color: bool) -> str:
    return f"{code}{text}{RESET}" if color else text


SHOWN_CLAIMS = 2  # key claims under a hit (--json and `lore show` have all)


def format_hit(rank: int, hit: Hit, *, color: bool, markers: tuple[str, str]) -> str:
    where = [hit.date or "undated"]
    if hit.heading:
        where.append(f"§ {clean(hit.heading)}")
    where.append(f"line {hit.line}")
    where.append(f"score {hit.score:.3f}")
    if 0 < len(hit.words_matched) < hit.words_total or (hit.words_total and not hit.words_matched):
        where.append(f"matched {len(hit.words_matched)} of {hit.words_total} words")
    snippet = clean(hit.snippet)
    if color:
        snippet = snippet.replace(markers[0], BOLD + CYAN).replace(markers[1], RESET)
    if hit.category:
        where.insert(1, f"category {clean(hit.category)}")
    lines = [
        f"{rank}. {_style(clean(hit.path), BOLD, color)}  {clean(hit.title)}",
        "   " + _style(" · ".join(where), DIM, color),
        f"   {snippet}",
    ]
    # Marked as the model's: a claim is grounded in the note, but not the note's words.
    lines += [f"   LLM claim: {clean(claim)}" for claim in hit.claims[:SHOWN_CLAIMS]]
    if hit.explain is not None:
        fields = ", ".join(f"{k}={v:.3f}" for k, v in hit.explain.fields.items())
        lines.append("   " + _style(f"fields: {fields}", DIM, color))
        lines.append(
            "   " + _style(f"matched: {', '.join(hit.explain.matched_terms) or '-'}", DIM, color)
        )
        if hit.explain.channels:
            scores = ", ".join(
                f"{name} {v['raw']:.3f}→{v['weighted']:.3f}"
                for name, v in hit.explain.channels.items()
            )
            lines.append("   " + _style(f"channels (raw→weighted): {scores}", DIM, color))
        if hit.explain.passage:
            lines.append("   " + _style(f"best passage: {clean(hit.explain.passage)}", DIM, color))
        if hit.explain.matched_folded:
            folded = ", ".join(hit.explain.matched_folded)
            lines.append("   " + _style(f"matched through folding: {clean(folded)}", DIM, color))
        if hit.explain.pinyin:
            spelled = clean(hit.explain.pinyin)
            lines.append("   " + _style(f"matched by pinyin: {spelled}", DIM, color))
        if hit.explain.fts_text:
            source = clean(hit.explain.fts_text)
            lines.append("   " + _style(f"full text from: {source}", DIM, color))
        if hit.explain.vector_text:
            lines.append(
                "   " + _style(f"vector from: {clean(hit.explain.vector_text)}", DIM, color)
            )
    return "\n".join(lines)


DEGRADED_PARTS = {
    "llm_plan": "the LLM query plan",
    "vec": "the vector channels",
    "snippet": "the polished snippets",
}


def format_degraded(degraded: list[str]) -> str:
    """The line saying what a query's time budget skipped (empty when nothing was)."""
    if not degraded:
        return ""
    parts = ", ".join(DEGRADED_PARTS.get(p, p) for p in degraded)
    return f"within the time budget, skipped: {parts} (degraded: {', '.join(degraded)})"


def format_search(result: SearchResult, *, color: bool, markers: tuple[str, str]) -> str:
    degraded = format_degraded(result.degraded)
    if not result:
        none = f"no results for {result.query!r}: {result.reason}"
        return f"{none}\n{degraded}" if degraded else none
    blocks = [format_hit(i, hit, color=color, markers=markers) for i, hit in enumerate(result, 1)]
    if degraded:
        blocks.append(_style(degraded, DIM, color))
    if result[0].explain is not None:
        explain = result[0].explain
        head = f"query terms: {', '.join(explain.query_terms)}\nfts: {explain.fts_query}"
        for label, terms in (
            ("only scored (too common to bring candidates)", explain.score_only_terms),
            ("left out (absent, or held by most notes: no weight)", explain.dropped_terms),
            ("excluded (every form a search for the word finds)", explain.excluded_terms),
            ("folded (Traditional → Simplified)", explain.folded_terms),
            ("left out (stop words, filler)", explain.stop_terms),
        ):
            if terms:
                head += f"\n{label}: {', '.join(terms)}"
        if explain.query_refine is not None:
            head = (
                f"mode: {result.mode} ({explain.planner} plan)\n"
                f"query_refine: {explain.query_refine}\n"
                f"query_tags: {', '.join(explain.query_tags) or '-'}\n{head}"
            )
        blocks.insert(0, head)
    return "\n\n".join(blocks)


# Above this many files with one kind of problem, one line counts them (--json lists all).
GROUP_ABOVE = 3
_KIND_LABELS = {
    "date": "a front matter date that is not a date",
    "frontmatter": "front matter that cannot be read",
    "frontmatter_key": "a front matter key that cannot be read",
    "unreadable": "a file that cannot be read",
    "truncated": "a file larger than max_file_bytes",
    "empty": "an empty note",
}


def _problem_lines(label: str, items: list[Skipped]) -> list[str]:
    """One line per file, or one line per kind of problem when many files share it."""
    groups: dict[str, list[Skipped]] = {}
    for item in items:
        groups.setdefault(item.kind or item.reason, []).append(item)
    lines: list[str] = []
    for kind, group in groups.items():
        if len(group) <= GROUP_ABOVE or not group[0].kind:
            lines += [f"  {label} {clean(g.path)}: {clean(g.reason)}" for g in group]
            continue
        first = group[0]
        what = _KIND_LABELS.get(kind, kind)
        lines.append(
            f"  {label} {len(group)} notes: {what}, e.g. {clean(first.path)}: {clean(first.reason)}"
            " (--json lists each)"
        )
    return lines


def format_sync(report: SyncReport, *, quiet: bool = False) -> str:
    parts = [
        f"added {len(report.added)}",
        f"changed {len(report.changed)}",
        f"deleted {len(report.deleted)}",
        f"unchanged {report.unchanged}",
    ]
    if report.skipped:
        parts.append(f"skipped {len(report.skipped)}")
    if report.warnings:
        parts.append(f"warnings {len(report.warnings)}")
    if report.embedded:
        parts.append(f"embedded {report.embedded}")
    llm = report.llm or {}
    if llm.get("notes") or llm.get("calls") or llm.get("pending"):
        said = f"LLM fields {llm['notes']} note(s), {llm['calls']} call(s)"
        parts.append(said + (f", {llm['pending']} pending" if llm.get("pending") else ""))
    lines = [", ".join(parts) + f" ({report.seconds:.2f} s)"]
    if not quiet:
        lines += _problem_lines("skipped", report.skipped)
        lines += _problem_lines("warning", report.warnings)
    return "\n".join(lines)


def format_mapping(data: dict[str, Any], indent: str = "") -> str:
    lines = []
    for key, value in data.items():
        if isinstance(value, dict) and not value:
            lines.append(f"{indent}{key}: none")  # not a heading over nothing
        elif isinstance(value, dict):
            lines.append(f"{indent}{key}:")
            lines.append(format_mapping(value, indent + "  "))
        elif isinstance(value, list):
            lines.append(f"{indent}{key}: {len(value)}")
            lines += [f"{indent}  - {clean(_plain(item))}" for item in value[:50]]
            if len(value) > 50:
                lines.append(f"{indent}  … {len(value) - 50} more")
        else:
            lines.append(f"{indent}{key}: {clean(_plain(value))}")
    return "\n".join(lines)


def _plain(value: Any) -> str:
    """A value as a person reads it: no Python spellings (None, True)."""
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, dict):  # e.g. one of doctor's problems: its fields in a line
        # A field with nothing to say ("kind": "") is left out, not printed as "kind: ".
        return " · ".join(
            f"{key}: {_plain(item)}" for key, item in value.items() if item not in ("", None)
        )
    if isinstance(value, list | tuple):
        return ", ".join(_plain(item) for item in value)
    return str(value)


def eta_seconds(elapsed: float, done: int, total: int) -> float:
    """The time left if the rest goes at the rate so far (bench.embed_speed measures how
    close it comes)."""
    return elapsed / done * (total - done) if done else 0.0


class ProgressBar:
    """A one-line progress bar with an ETA on a terminal; silent otherwise. A call with
    another total, or fewer done than before, starts a new stage (its own clock)."""

    def __init__(self, label: str, stream: TextIO | None = None) -> None:
        self.label = label
        self.stream = stream or sys.stderr
        self.enabled = self.stream.isatty()
        self.started = time.monotonic()
        self.last_draw = 0.0
        self.stage = (0, 0)  # (total, done) of the stage being drawn
        self.last_call = self.started

    def __call__(self, done: int, total: int, path: str) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if total != self.stage[0] or done < self.stage[1]:
            # A stage announced with 0 done starts now; else it began at the last report.
            self.started = now if done == 0 else self.last_call
        self.stage = (total, done)
        self.last_call = now
        if done < total and now - self.last_draw < 0.1:
            return
        self.last_draw = now
        elapsed = now - self.started
        eta = eta_seconds(elapsed, done, total)
        width = 30
        filled = int(width * done / max(total, 1))
        bar = "█" * filled + "░" * (width - filled)
        what = " words" if path == "vocabulary" else ""
        self.stream.write(f"\r{self.label} {bar} {done}/{total}{what} ETA {eta:4.0f}s")
        if done >= total:
            self.stream.write("\n")
        self.stream.flush()

"""The report (`lore report`): what is new in a window of days, the top tags, the active
entities and the stored interest map, gathered into one plain Report. Nothing here prints,
draws or reclusters: the map is read back as `lore clusters build` stored it
(lore.present.report_md / report_html / charts turn a Report into text and pictures).

The window: `--since D` runs from D to today. Without it, the last 7 days up to today; when
nothing is dated in those days but older notes are, the 7 days up to the newest note's date
instead (a vault last written to in September still gets its last week of activity, and
the report says which window it used). "Today" is the memory setting (LORE_TODAY) or the
`today` argument, so the same vault and day give the same report.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from ..errors import QueryError
from ..retrieve.search import parse_date_bound
from ..store.base import Store
from .model import InterestCluster, InterestMap

if TYPE_CHECKING:
    from ..memory.model import RecentResult

# What the report asks of lore.memory.recent: the entities active in the last `days` days.
Recent = Callable[[int, int], "RecentResult"]

WINDOW_DAYS = 7
MAX_DAYS = 36_500  # lore.memory.recent's limit
WindowBasis = Literal["since", "today", "newest note"]


@dataclass(frozen=True)
class Window:
    since: str  # YYYY-MM-DD, inclusive
    until: str  # YYYY-MM-DD, inclusive
    today: str
    basis: WindowBasis  # --since given / the last 7 days / the 7 days up to the newest note

    @property
    def days(self) -> int:
        return (dt.date.fromisoformat(self.until) - dt.date.fromisoformat(self.since)).days + 1

    def describe(self) -> str:
        span = f"{self.since} … {self.until}"
        if self.basis == "since":
            return f"{span} (since {self.since})"
        if self.basis == "today":
            return f"{span} (the last {self.days} days)"
        return (
            f"{span} (the {self.days} days up to the newest note; nothing is dated in the "
            f"{WINDOW_DAYS} days up to {self.today})"
        )


@dataclass(frozen=True)
class ReportNote:
    path: str
    title: str
    date: str | None
    tags: tuple[str, ...] = ()


@dataclass(frozen=True)
class ActiveEntity:
    name: str
    type: str | None
    path: str
    last_activity: str  # YYYY-MM-DD
    source: str  # what the date comes from: card, event, mention
    weight: float  # activity decay weight (lore.memory.decay)


@dataclass(frozen=True)
class Report:
    vault: str  # the vault folder's name
    window: Window
    notes_total: int
    new_notes: tuple[ReportNote, ...]  # newest first, at most `limit`
    new_notes_total: int
    top_tags: tuple[tuple[str, int], ...]  # over the whole vault, most used first
    window_tags: tuple[tuple[str, int], ...]  # over the new notes
    entities: tuple[ActiveEntity, ...]  # most recently active first
    interest: InterestMap | None  # None: `lore clusters build` has not run
    messages: tuple[str, ...] = field(default=())  # one-line notes for the reader
    undated_total: int = 0  # notes with no date of their own: in no window

    @property
    def heating(self) -> tuple[InterestCluster, ...]:
        return self._trending("heating")

    @property
    def cooling(self) -> tuple[InterestCluster, ...]:
        return self._trending("cooling")

    def _trending(self, trend: str) -> tuple[InterestCluster, ...]:
        if self.interest is None:
            return ()
        return tuple(c for c in self.interest.clusters if c.trend == trend)

    def to_dict(self) -> dict[str, Any]:
        """The --json shape (docs/interest.md)."""
        imap = self.interest
        return {
            "vault": self.vault,
            "window": {**asdict(self.window), "days": self.window.days},
            "notes_total": self.notes_total,
            "undated_total": self.undated_total,
            "new_notes_total": self.new_notes_total,
            "new_notes": [
                {"path": n.path, "title": n.title, "date": n.date, "tags": list(n.tags)}
                for n in self.new_notes
            ],
            "top_tags": [{"tag": t, "notes": n} for t, n in self.top_tags],
            "window_tags": [{"tag": t, "notes": n} for t, n in self.window_tags],
            "entities": [asdict(e) for e in self.entities],
            "clusters": None
            if imap is None
            else {
                "lexical": imap.lexical,
                "built_at": imap.built_at,
                "notes": imap.notes,
                "heating": [c.id for c in self.heating],
                "cooling": [c.id for c in self.cooling],
                "clusters": [
                    {
                        **c.to_dict(),
                        "representatives": [
                            {"path": m.path, "title": m.title, "date": m.date}
                            for m in c.members[:REPRESENTATIVES]
                        ],
                    }
                    for c in imap.clusters
                ],
            },
            "messages": list(self.messages),
        }


REPRESENTATIVES = 3  # representative notes shown per cluster


def report_window(since: str | None, today: dt.date, newest: str | None) -> Window:
    """The window a report covers (see the module docstring). `newest` is the date of the
    newest note dated no later than today."""
    until = today.isoformat()
    if since is not None:
        start = parse_date_bound(since, name="--since", end=False)
        if start is None:  # "" is no bound
            return report_window(None, today, newest)
        if start > until:
            raise QueryError(f"--since {since} is after today ({until})")
        return Window(start, until, until, "since")
    start = (today - dt.timedelta(days=WINDOW_DAYS - 1)).isoformat()
    if newest is not None and newest < start:
        last = dt.date.fromisoformat(newest)
        first = last - dt.timedelta(days=WINDOW_DAYS - 1)
        return Window(first.isoformat(), newest, until, "newest note")
    return Window(start, until, until, "today")


def _today(today: dt.date | str | None, clock: Callable[[], dt.date]) -> dt.date:
    if isinstance(today, dt.date):
        return today
    if isinstance(today, str):
        try:
            return dt.date.fromisoformat(today.strip())
        except ValueError:
            raise QueryError(f"--today: {today!r} is not a date (use YYYY-MM-DD)") from None
    return clock()


def _count_tags(tag_lists: list[list[tuple[str, str]]], limit: int) -> tuple[tuple[str, int], ...]:
    """Tags by how many of the notes carry them (as Vault.tag_counts: one row per tag_key,
    shown as its first spelling), most used first, ties by key."""
    notes: dict[str, int] = {}
    spelling: dict[str, str] = {}
    for tags in tag_lists:
        for tag, key in tags:
            spelling[key] = min(spelling.get(key, tag), tag)
        for key in {key for _, key in tags}:
            notes[key] = notes.get(key, 0) + 1
    ranked = sorted(notes.items(), key=lambda kv: (-kv[1], kv[0]))
    return tuple((spelling[key], n) for key, n in ranked[:limit])


def _entities(recent: Recent, window: Window, today: dt.date, limit: int) -> list[ActiveEntity]:
    days = min((today - dt.date.fromisoformat(window.since)).days + 1, MAX_DAYS)
    result = recent(max(days, 1), max(limit * 4, 20))
    active = []
    for e in result.entities:
        activity = e["last_activity"]
        date = activity.get("date")
        if date and window.since <= date <= window.until:
            active.append(
                ActiveEntity(
                    name=str(e["name"]),
                    type=e.get("type"),
                    path=str(e["path"]),
                    last_activity=str(date),
                    source=str(activity.get("source") or ""),
                    weight=float(e["weight"]),
                )
            )
    return active[:limit]


def _messages(interest: InterestMap | None) -> tuple[str, ...]:
    if interest is None:
        return ("no interest clusters yet: run `lore clusters build`",)
    out = list(interest.messages)
    if interest.lexical and not any("lexical" in m for m in out):
        out.append(
            "the interest map is lexical (TF-IDF of the words: the index has no vectors; "
            "`lore embed` then `lore clusters build` for a semantic one)"
        )
    return tuple(out)


def build_report(
    store: Store,
    interest: InterestMap | None,
    *,
    vault_name: str,
    recent: Recent,
    clock: Callable[[], dt.date],
    since: str | None = None,
    today: dt.date | str | None = None,
    limit: int = 50,
    tags: int = 15,
    entities: int = 10,
) -> Report:
    """Gather a Report from the index and a stored interest map (None when none is built):
    `recent` gives the active entities, `clock` today when `today` does not say."""
    for name, value in (("limit", limit), ("tags", tags), ("entities", entities)):
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise QueryError(f"--{name} must be a positive number, not {value!r}")
    day = _today(today, clock)
    window = report_window(since, day, store.newest_date(day.isoformat()))
    rows = store.dated_between(window.since, window.until)
    note_tags = store.tags_with_keys([r[0] for r in rows])
    notes_total = store.note_count()
    undated = store.undated_count()
    messages = _messages(interest)
    if undated:
        messages += (
            f"{undated} of {notes_total} notes are undated (no date in their front matter,"
            " file name or text): no window holds them",
        )
    return Report(
        vault=vault_name,
        window=window,
        notes_total=notes_total,
        new_notes=tuple(
            ReportNote(path, title, date, tuple(t for t, _ in note_tags.get(nid, ())))
            for nid, path, title, date in rows[:limit]
        ),
        new_notes_total=len(rows),
        top_tags=tuple(store.tag_counts(None)[:tags]),
        window_tags=_count_tags([note_tags.get(r[0], []) for r in rows], tags),
        entities=tuple(_entities(recent, window, day, entities)),
        interest=interest,
        messages=messages,
        undated_total=undated,
    )

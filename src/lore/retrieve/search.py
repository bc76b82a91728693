"""Full-text search over the index: BM25 with field weights, filters, evidence, explain.

Ranking is FTS5's BM25 over our token stream with per-field weights
(title > tags > summary > body); ties break by path so the same query always returns
the same order.
"""

from __future__ import annotations

import calendar
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ..errors import QueryError
from ..model import Explain, Hit, SearchResult
from ..store.note_llm import category_filter_sql, fields_of
from ..store.sqlite import SqliteStore
from .query import QueryPlan, QueryTerm, plan, shown_query
from .snippet import Evidence, build_evidence, matched_in

DEFAULT_FIELD_WEIGHTS = {"title": 4.0, "tags": 3.0, "summary": 1.0, "body": 1.0}
MAX_DF_RATIO = 0.1
PRUNE_ABOVE_TERMS = 12  # short queries cost little: keep every term that can match
KEEP_WHEN_ALL_COMMON = 4
SCORE_ONLY_POSTINGS = 100_000
COMMON_WORD_DF_RATIO = 0.35
TIE_MARGIN = 20
MAX_LIMIT = 1000
# Caps on filters, checked here so that the API, the CLI and MCP share them: each tag is a
# clause of the WHERE (SQLite refuses an expression tree deeper than 1,000), and SQLite
# refuses a GLOB pattern longer than 50,000 bytes.
MAX_FILTER_TAGS = 64
MAX_PATH_GLOB_CHARS = 1024
MAX_CATEGORY_CHARS = 200
_DATE_ARG = re.compile(r"^(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?$")


@dataclass(frozen=True)
class Filters:
    tags: tuple[str, ...] = ()
    path: str | None = None
    since: str | None = None
    until: str | None = None
    # A date window leaves out undated notes (no date in front matter, file name or text)
    # unless asked: they may be from any time.
    include_undated: bool = False
    # Access rules (lore.memory.access): the GLOBs a principal may see; None = everything.
    # Applied in SQL wherever notes are ranked or counted, so nothing else leaks.
    allow: tuple[str, ...] | None = None
    category: str | None = None  # case-folded (lore.store.note_llm: the author's or the LLM's)

    @property
    def active(self) -> bool:
        filtered = self.tags or self.path or self.since or self.until or self.category
        return bool(filtered) or self.allow is not None


@dataclass(frozen=True)
class SearchOptions:
    limit: int = 10
    explain: bool = False
    markers: tuple[str, str] = ("«", "»")
    field_weights: dict[str, float] = field(default_factory=lambda: dict(DEFAULT_FIELD_WEIGHTS))
    mode: str = "mode4"
    max_df_ratio: float = MAX_DF_RATIO


def parse_date_bound(value: str | None, *, name: str, end: bool) -> str | None:
    """'2026', '2026-09' or '2026-09-15' → a YYYY-MM-DD bound (first or last day)."""
    if value is None or value == "":
        return None
    match = _DATE_ARG.match(value.strip())
    if not match:
        raise QueryError(f"{name}: {value!r} is not a date (use YYYY, YYYY-MM or YYYY-MM-DD)")
    year = int(match.group(1))
    month = int(match.group(2)) if match.group(2) else (12 if end else 1)
    if not 1 <= month <= 12:
        raise QueryError(f"{name}: {value!r} has no month {month}")
    last_day = calendar.monthrange(year, month)[1]
    day = int(match.group(3)) if match.group(3) else (last_day if end else 1)
    if not 1 <= day <= last_day:
        raise QueryError(f"{name}: {value!r} has no day {day}")
    return f"{year:04d}-{month:02d}-{day:02d}"


def make_filters(
    tags: list[str] | tuple[str, ...] | str | None = None,
    path: str | None = None,
    since: str | None = None,
    until: str | None = None,
    *,
    include_undated: bool = False,
    category: str | None = None,
) -> Filters:
    if isinstance(tags, str):
        tags = [tags]
    clean_tags = tuple(
        dict.fromkeys(t.strip().lstrip("#").casefold() for t in tags or () if t.strip())
    )
    if len(clean_tags) > MAX_FILTER_TAGS:
        raise QueryError(
            f"--tag: {len(clean_tags):,} tags given; a search filters by at most {MAX_FILTER_TAGS}"
        )
    if path is not None and len(path) > MAX_PATH_GLOB_CHARS:
        raise QueryError(
            f"--path: the glob is {len(path):,} characters; at most {MAX_PATH_GLOB_CHARS:,}"
        )
    lo = parse_date_bound(since, name="--since", end=False)
    hi = parse_date_bound(until, name="--until", end=True)
    if lo and hi and lo > hi:
        raise QueryError(f"--since {since} is after --until {until}")
    wanted = " ".join(category.split()).casefold() if category else None
    if wanted is not None and len(wanted) > MAX_CATEGORY_CHARS:
        raise QueryError(f"--category: {len(wanted):,} characters; at most {MAX_CATEGORY_CHARS}")
    return Filters(
        clean_tags, path.strip() if path else None, lo, hi, include_undated, category=wanted or None
    )


def _glob(path: str) -> str:
    while path.startswith("./"):
        path = path[2:]
    if not any(c in path for c in "*?["):
        return path.rstrip("/") + "*" if path.endswith("/") else path + "*"
    return path


def _filter_sql(filters: Filters) -> tuple[str, list[Any]]:
    clauses: list[str] = []
    params: list[Any] = []
    for tag in filters.tags:
        clauses.append("n.id IN (SELECT note_id FROM tags WHERE tag_key = ? OR tag_key GLOB ?)")
        params.extend([tag, tag.replace("[", "[[]") + "/*"])
    if filters.path:
        clauses.append("n.path GLOB ?")
        params.append(_glob(filters.path))
    dated = []
    if filters.since:
        dated.append("n.date >= ?")
        params.append(filters.since)
    if filters.until:
        dated.append("n.date <= ?")
        params.append(filters.until)
    if dated:
        window = " AND ".join(dated)
        clauses.append(f"({window} OR n.date IS NULL)" if filters.include_undated else window)
    if filters.allow is not None:
        clauses.append(_allow_clause(filters.allow))
        params.extend(filters.allow)
    if filters.category:
        clauses.append(category_filter_sql())
        params.append(filters.category)
    return "".join(f" AND {c}" for c in clauses), params


def _allow_clause(allow: tuple[str, ...]) -> str:
    return "(" + (" OR ".join("n.path GLOB ?" for _ in allow) or "0") + ")"


def _allowed_df(
    store: SqliteStore, tokens: list[str], allow: tuple[str, ...]
) -> tuple[dict[str, int], int]:
    """Document frequencies and note count within what an access rule allows, so pruning
    and --explain say nothing about notes outside it."""
    where = _allow_clause(allow)
    total = int(store.query(f"SELECT count(*) FROM notes n WHERE {where}", allow)[0][0])
    df: dict[str, int] = {}
    for token in tokens:  # tokens are letters and digits only: quoting is safe
        found = store.query(
            f"SELECT count(*) FROM fts JOIN notes n ON n.id = fts.rowid WHERE fts MATCH ?"
            f" AND {where}",
            [f'"{token}"', *allow],
        )[0][0]
        if found:
            df[token] = int(found)
    return df, total


def _weights(options: SearchOptions) -> list[float]:
    w = options.field_weights
    return [float(w.get(name, DEFAULT_FIELD_WEIGHTS[name])) for name in DEFAULT_FIELD_WEIGHTS]


def prune(
    store: SqliteStore,
    query_plan: QueryPlan,
    max_df_ratio: float,
    allow: tuple[str, ...] | None = None,
    *,
    want: int = 0,
) -> tuple[QueryPlan, list[str]]:
    """Split the terms into those that bring candidates and those that only score them.

    BM25 gives a term found in more than `max_df_ratio` of the notes a small weight, yet
    FTS5 would read every note that holds it: at 100k notes a long question's common
    characters make it 10x slower. So single CJK characters that common, single words
    that common in queries of more than PRUNE_ABOVE_TERMS terms, and dictionary words made
    only of very common characters become `score_only`: they score every candidate (notes
    holding every query word come first), but the rarer terms say which notes are the
    candidates. When those rare terms are found in fewer than `want` notes, the rarest
    common terms bring candidates too (recall first).

    Returns the plan and the texts of the terms left out, for --explain: those absent from
    the index (they match nothing), single tokens found in more than half of the notes, to
    which BM25 gives no weight (FTS5 floors an IDF <= 0 to 1e-6), and the commonest terms
    of a long question past the postings budget (SCORE_ONLY_POSTINGS), whose weight is
    small and whose cost, at 100k notes, is most of the query's.
    """
    tokens = sorted({tok for term in query_plan.terms for tok in term.tokens})
    if allow is not None:
        df, total = _allowed_df(store, tokens, allow)
        total = max(total, 1)
    else:
        df = store.document_frequencies(tokens)
        total = max(int(store.query("SELECT count(*) FROM notes")[0][0]), 1)
    limit = max_df_ratio * total
    many = len(query_plan.terms) > PRUNE_ABOVE_TERMS

    def rarest(term: QueryTerm) -> int:
        return min(df.get(tok, 0) for tok in term.tokens)

    def weightless(term: QueryTerm) -> bool:
        return len(term.tokens) == 1 and rarest(term) > total / 2

    present = [t for t in query_plan.terms if rarest(t) > 0]
    common: list[QueryTerm] = []
    for term in present:
        # Single CJK characters are the bulk of a Chinese query's terms and of its cost;
        # single words only in long queries (English words carry more weight).
        single = len(term.tokens) == 1 and (many or term.kind == "cjk_char")
        # A dictionary word made only of very common characters ("成为", "开始") is itself
        # common: reading its notes costs as much as reading its characters'.
        common_word = term.kind == "cjk_word" and rarest(term) > COMMON_WORD_DF_RATIO * total
        if (single and rarest(term) > limit) or common_word or weightless(term):
            common.append(term)
    common.sort(key=rarest)
    generating = [t for t in present if t not in common]
    # Everything common: the rarest few bring the candidates. Too few candidates: the
    # rarest common terms bring more (a note holds at least the most frequent one's count).
    keep = KEEP_WHEN_ALL_COMMON if not generating else 0
    while common and (keep > 0 or max(map(rarest, generating), default=0) < want):
        generating.append(common.pop(0))
        keep -= 1
    # Scoring a common term reads its whole note list once per query: they score, rarest
    # first, while the notes they add up to stay within SCORE_ONLY_POSTINGS (every one of
    # them below ~10k notes; at 100k notes a long question's ten rarest or so).
    score_only: list[QueryTerm] = []
    postings = 0
    for term in common:
        postings += rarest(term)
        if weightless(term) or postings > SCORE_ONLY_POSTINGS:
            break
        score_only.append(term)
    scored = [t for t in present if t in generating or t in score_only]
    return (
        QueryPlan(query_plan.text, scored, tuple(score_only), list(query_plan.excluded)),
        [t.text for t in query_plan.terms if t not in scored],
    )


def widen(query_plan: QueryPlan) -> QueryPlan | None:
    """The plan with the rarest half of its score-only terms bringing candidates too (None
    when every term already does): for when the rare terms brought too few notes."""
    if not query_plan.score_only:
        return None
    half = (len(query_plan.score_only) + 1) // 2
    return QueryPlan(
        query_plan.text,
        query_plan.terms,
        query_plan.score_only[half:],
        list(query_plan.excluded),
    )


def ranked_candidates(
    store: SqliteStore,
    query_plan: QueryPlan,
    filters: Filters,
    depth: int,
    weights: list[float],
) -> tuple[QueryPlan, list[tuple[int, float]]]:
    """rank() at `depth`, widening the plan (see widen) while it finds fewer notes."""
    ranked = rank(store, query_plan, filters, depth, weights) if query_plan.terms else []
    while len(ranked) < depth and (wider := widen(query_plan)) is not None:
        query_plan = wider
        ranked = rank(store, query_plan, filters, depth, weights)
    return query_plan, ranked


def rank(
    store: SqliteStore, query_plan: QueryPlan, filters: Filters, limit: int, weights: list[float]
) -> list[tuple[int, float]]:
    """(note id, BM25 score as a positive number) for the best `limit` notes, ties by path.

    Without filters the FTS table is ranked alone (joining `notes` for every matching row
    doubles the cost at 100k notes); a few extra rows are fetched so ties at the cut can
    be ordered by path, and the join is used only when a tie runs past them.
    """
    where, params = _filter_sql(filters)
    if not where:
        fetch = limit + TIE_MARGIN
        rows = store.query(
            "SELECT rowid, bm25(fts, ?, ?, ?, ?) AS s FROM fts WHERE fts MATCH ?"
            " ORDER BY s LIMIT ?",
            [*weights, query_plan.ranking_query, fetch],
        )
        if len(rows) < fetch or rows[-1][1] != rows[limit - 1][1]:
            ids = [int(r[0]) for r in rows]
            marks = ",".join("?" * len(ids))
            paths = dict(store.query(f"SELECT id, path FROM notes WHERE id IN ({marks})", ids))
            ordered = sorted(rows, key=lambda r: (r[1], paths[r[0]]))[:limit]
            return [(int(nid), round(-float(score), 6)) for nid, score in ordered]
    sql = (
        "SELECT n.id, bm25(fts, ?, ?, ?, ?) AS s FROM fts JOIN notes n ON n.id = fts.rowid"
        f" WHERE fts MATCH ?{where} ORDER BY s, n.path LIMIT ?"
    )
    rows = store.query(sql, [*weights, query_plan.ranking_query, *params, limit])
    return [(int(nid), round(-float(score), 6)) for nid, score in rows]


def _count(store: SqliteStore, query_plan: QueryPlan, filters: Filters | None = None) -> int:
    """Notes matching the query before filters (within the access rule, if any)."""
    if filters is not None and filters.allow is not None:
        sql = (
            "SELECT count(*) FROM fts JOIN notes n ON n.id = fts.rowid WHERE fts MATCH ?"
            f" AND {_allow_clause(filters.allow)}"
        )
        return int(store.query(sql, [query_plan.fts_query, *filters.allow])[0][0])
    return int(
        store.query("SELECT count(*) FROM fts WHERE fts MATCH ?", [query_plan.fts_query])[0][0]
    )


def count_matching(store: SqliteStore, query_plan: QueryPlan, filters: Filters) -> int:
    """How many notes the query matched: those that pass the filters and hold a term that
    brings candidates (terms too common for that only score them) and no excluded term."""
    where, params = _filter_sql(filters)
    if not where:
        sql = "SELECT count(*) FROM fts WHERE fts MATCH ?"
    else:
        sql = f"SELECT count(*) FROM fts JOIN notes n ON n.id = fts.rowid WHERE fts MATCH ?{where}"
    return int(store.query(sql, [query_plan.candidate_query, *params])[0][0])


def _field_scores(
    store: SqliteStore, query_plan: QueryPlan, ids: list[int], weights: list[float]
) -> dict[int, dict[str, float]]:
    names = list(DEFAULT_FIELD_WEIGHTS)
    cols = []
    params: list[Any] = []
    for i in range(len(names)):
        cols.append("bm25(fts, ?, ?, ?, ?)")
        params.extend(weights[j] if j == i else 0.0 for j in range(len(names)))
    marks = ",".join("?" * len(ids))
    rows = store.query(
        f"SELECT rowid, {', '.join(cols)} FROM fts WHERE fts MATCH ? AND rowid IN ({marks})",
        [*params, query_plan.ranking_query, *ids],
    )
    return {
        int(row[0]): {name: round(-float(v), 6) for name, v in zip(names, row[1:], strict=True)}
        for row in rows
    }


def search(store: SqliteStore, text: str, filters: Filters, options: SearchOptions) -> SearchResult:
    if not isinstance(options.limit, int) or options.limit < 1:
        raise QueryError(f"--limit must be a positive number, not {options.limit!r}")
    limit = min(options.limit, MAX_LIMIT)
    full_plan = plan(text)
    query_plan = full_plan
    if query_plan.empty:
        reason = "empty query" if not text.strip() else "the query has no searchable words"
        return SearchResult([], query=text, mode=options.mode, reason=reason)
    weights = _weights(options)
    with store.snapshot():
        query_plan, dropped = prune(
            store, query_plan, options.max_df_ratio, filters.allow, want=limit
        )
        query_plan, ranked = ranked_candidates(store, query_plan, filters, limit, weights)
        if not ranked:
            matched = _count(store, query_plan, filters) if query_plan.terms else 0
            reason = (
                f"{matched} note(s) matched, but all were filtered out"
                if matched and filters.active
                else "nothing matched"
            )
            return SearchResult([], query=text, mode=options.mode, reason=reason)
        field_scores = (
            _field_scores(store, query_plan, [n for n, _ in ranked], weights)
            if options.explain
            else {}
        )
        rows = load_hit_rows(store, [nid for nid, _ in ranked])

    def explain_for(nid: int, evidence: Evidence, row: HitRow) -> Explain:
        hit_terms = set(evidence.matched) | matched_in(
            f"{row.title}\n{' '.join(row.tags)}", query_plan
        )
        return Explain(
            fields=field_scores.get(nid, {}),
            matched_terms=[t.text for t in query_plan.terms if t in hit_terms],
            query_terms=[t.text for t in full_plan.terms],
            fts_query=shown_query(query_plan),
            dropped_terms=dropped,
            score_only_terms=[t.text for t in query_plan.score_only],
            excluded_terms=[t.text for t in query_plan.excluded],
        )

    hits = [
        make_hit(
            rows[nid],
            score,
            query_plan,
            options,
            explain_for if options.explain else None,
        )
        for nid, score in ranked
    ]
    matched = count_matching(store, query_plan, filters)
    return SearchResult(hits, query=text, mode=options.mode, matched=matched)


@dataclass(frozen=True)
class HitRow:
    id: int
    path: str
    title: str
    date: str | None
    frontmatter: dict[str, Any]
    headings: list[tuple[int, str, int, int]]
    body: str
    body_line: int
    tags: list[str]
    claims: list[str] = field(default_factory=list)
    category: str | None = None


def load_hit_rows(store: SqliteStore, ids: list[int]) -> dict[int, HitRow]:
    if not ids:
        return {}
    marks = ",".join("?" * len(ids))
    tags: dict[int, list[str]] = {}
    for nid, tag in store.query(
        f"SELECT note_id, tag FROM tags WHERE note_id IN ({marks}) ORDER BY position", ids
    ):
        tags.setdefault(int(nid), []).append(str(tag))
    fields = fields_of(store, ids)
    rows: dict[int, HitRow] = {}
    for nid, path, title, date, fm_json, headings_json, body, body_line in store.query(
        "SELECT id, path, title, date, frontmatter, headings, body, body_line"
        f" FROM notes WHERE id IN ({marks})",
        ids,
    ):
        rows[int(nid)] = HitRow(
            int(nid),
            str(path),
            str(title),
            date,
            json.loads(fm_json),
            [(h[0], h[1], h[2], h[3]) for h in json.loads(headings_json)],
            str(body),
            int(body_line),
            tags.get(int(nid), []),
            [c["text"] for c in fields[int(nid)].claims] if int(nid) in fields else [],
            fields[int(nid)].category if int(nid) in fields else None,
        )
    return rows


def make_hit(
    row: HitRow,
    score: float,
    query_plan: QueryPlan,
    options: SearchOptions,
    explain_for: Callable[[int, Evidence, HitRow], Explain] | None,
    *,
    evidence: Evidence | None = None,
    mode: str | None = None,
) -> Hit:
    if evidence is None:
        evidence = build_evidence(
            row.body, row.body_line, row.headings, query_plan.evidence, markers=options.markers
        )
    words = query_plan.words
    # The evidence saw every match in the text it was cut from; names and tags add theirs.
    held = set(evidence.matched) | matched_in(f"{row.title}\n{' '.join(row.tags)}", query_plan)
    return Hit(
        path=row.path,
        title=row.title,
        date=row.date,
        score=score,
        snippet=evidence.snippet,
        heading=evidence.heading,
        line=evidence.line,
        frontmatter=row.frontmatter,
        tags=row.tags,
        mode=mode or options.mode,
        explain=explain_for(row.id, evidence, row) if explain_for else None,
        words_matched=[w.text for w in words if w in held],
        words_total=len(words),
        claims=row.claims,
        category=row.category,
    )

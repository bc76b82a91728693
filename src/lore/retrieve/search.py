"""Full-text search over the index: BM25 with field weights, filters, evidence, explain.

Ranking is FTS5's BM25 over our token stream with per-field weights
(title > tags > summary > body); ties break by path so the same query always returns
the same order.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, NamedTuple

from ..derive.fold import has_traditional
from ..errors import QueryError
from ..model import Hit, SearchResult
from ..store.query import Filters
from ..store.rows import HitRow
from .pinyin import pinyin_words
from .query import QueryPlan, QueryTerm, plan, shown_exclusions, shown_query
from .snippet import SCAN_LIMIT_CHARS, Evidence, Match, build_evidence, find_matches, matched_in

if TYPE_CHECKING:  # annotations only (a search does not import the store's Protocol)
    from ..model.explain import Explain
    from ..store.base import Store

DEFAULT_FIELD_WEIGHTS = {"title": 4.0, "tags": 3.0, "summary": 1.0, "body": 1.0}
MAX_DF_RATIO = 0.1
PRUNE_ABOVE_TERMS = 12  # short queries cost little: keep every term that can match
KEEP_WHEN_ALL_COMMON = 4
SCORE_ONLY_POSTINGS = 100_000
COMMON_WORD_DF_RATIO = 0.35
MAX_LIMIT = 1000
# Caps on filters, checked here so that the API, the CLI and MCP share them: each tag is a
# clause of the WHERE (SQLite refuses an expression tree deeper than 1,000), and SQLite
# refuses a GLOB pattern longer than 50,000 bytes.
MAX_FILTER_TAGS = 64
MAX_PATH_GLOB_CHARS = 1024
MAX_CATEGORY_CHARS = 200
_DATE_ARG = re.compile(r"^(\d{4})(?:-(\d{1,2}))?(?:-(\d{1,2}))?$")


class SearchOptions(NamedTuple):  # a tuple: cheaper for a cold process than a dataclass
    limit: int = 10
    explain: bool = False
    markers: tuple[str, str] = ("«", "»")
    field_weights: Mapping[str, float] = DEFAULT_FIELD_WEIGHTS  # read, never changed
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
    import calendar  # deferred: only a date filter needs it

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
    # No note holds a NUL (the index stores one as U+FFFD) and PostgreSQL cannot even be
    # asked for one: refused, as the HTTP API refuses it in any text (lore.serve.params).
    for name, values in (("--tag", tags or ()), ("--path", [path]), ("--category", [category])):
        if any(value and "\x00" in value for value in values):
            raise QueryError(f"{name}: a filter cannot contain NUL")
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


def _weights(options: SearchOptions) -> list[float]:
    w = options.field_weights
    return [float(w.get(name, DEFAULT_FIELD_WEIGHTS[name])) for name in DEFAULT_FIELD_WEIGHTS]


def prune(
    store: Store,
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
    df = store.document_frequencies(tokens, allow)
    total = max(store.note_count(allow), 1)
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
    store: Store,
    query_plan: QueryPlan,
    filters: Filters,
    depth: int,
    weights: list[float],
    *,
    want: int | None = None,
) -> tuple[QueryPlan, list[tuple[int, float]]]:
    """rank() at `depth`, widening the plan (see widen) while it finds fewer than `want`
    notes (default: `depth`; a fixed `want` keeps the plan the same at every depth)."""
    wanted = depth if want is None else min(want, depth)
    ranked = rank(store, query_plan, filters, depth, weights) if query_plan.terms else []
    while len(ranked) < wanted and (wider := widen(query_plan)) is not None:
        query_plan = wider
        ranked = rank(store, query_plan, filters, depth, weights)
    return query_plan, ranked


def rank(
    store: Store, query_plan: QueryPlan, filters: Filters, limit: int, weights: list[float]
) -> list[tuple[int, float]]:
    """(note id, BM25 score as a positive number) for the best `limit` notes, ties by path."""
    return store.rank(query_plan.text_query, filters, limit, weights)


def _count(store: Store, query_plan: QueryPlan, filters: Filters | None = None) -> int:
    """Notes matching the query before filters (within the access rule, if any)."""
    allow = None if filters is None else filters.allow
    return store.count_matches(query_plan.text_query, Filters(allow=allow))


def count_matching(store: Store, query_plan: QueryPlan, filters: Filters) -> int:
    """How many notes the query matched: those that pass the filters and hold a term that
    brings candidates (terms too common for that only score them) and no excluded term."""
    return store.count_matches(query_plan.candidate_query, filters)


def _field_scores(
    store: Store, query_plan: QueryPlan, ids: list[int], weights: list[float]
) -> dict[int, dict[str, float]]:
    return store.field_scores(query_plan.text_query, ids, weights)


def search(store: Store, text: str, filters: Filters, options: SearchOptions) -> SearchResult:
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

    from ..model.explain import Explain  # made only for --explain

    def explain_for(nid: int, evidence: Evidence, row: HitRow) -> Explain:
        hit_terms = set(evidence.matched) | matched_in(
            f"{row.title}\n{' '.join(row.tags)}", query_plan
        )
        return Explain(
            fields=field_scores.get(nid, {}),
            matched_terms=[t.text for t in query_plan.terms if t in hit_terms],
            query_terms=[t.text for t in full_plan.terms],
            fts_query=shown_query(store, query_plan),
            dropped_terms=dropped,
            score_only_terms=[t.text for t in query_plan.score_only],
            excluded_terms=shown_exclusions(query_plan),
            stop_terms=list(full_plan.left_out),
        )

    hits = [
        make_hit(
            rows[nid],
            score,
            query_plan,
            options,
            explain_for if options.explain else None,
            asked=full_plan,
        )
        for nid, score in ranked
    ]
    matched = count_matching(store, query_plan, filters)
    return SearchResult(hits, query=text, mode=options.mode, matched=matched)


def load_hit_rows(store: Store, ids: list[int]) -> dict[int, HitRow]:
    return store.hit_rows(ids)


def make_hit(
    row: HitRow,
    score: float,
    query_plan: QueryPlan,
    options: SearchOptions,
    explain_for: Callable[[int, Evidence, HitRow], Explain] | None,
    *,
    evidence: Evidence | None = None,
    mode: str | None = None,
    asked: QueryPlan | None = None,
    spelled: tuple[str, ...] = (),
) -> Hit:
    """`asked`: the query's plan before pruning (default `query_plan`); its words are the
    ones the hit counts ("matched 2 of 3 words"), those left out as too common included.
    `spelled`: the query's words that spelled the note's name in pinyin (they count as
    matched: "tijian" found 体检)."""
    words = (asked or query_plan).words
    head = f"{row.title}\n{' '.join(row.tags)}"
    # A word left out of the search (most notes hold it) counts where the note holds it.
    unsearched = [w for w in words if w not in query_plan.terms]
    unsearched_held: set[QueryTerm] = set()
    if evidence is None:
        evidence, unsearched_held = evidence_and_held(
            row, head, query_plan.evidence, unsearched, options.markers
        )
    elif unsearched:
        unsearched_held = matched_in(f"{head}\n{row.body}", QueryPlan(query_plan.text, unsearched))
    # The evidence saw every match in the text it was cut from; names and tags add theirs.
    held = set(evidence.matched) | matched_in(head, query_plan) | unsearched_held
    if spelled:
        said = set(spelled)
        held |= {w for w in words if not said.isdisjoint(pinyin_words(w.surface or w.text))}
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
        words_matched=[w.surface or w.text for w in words if w in held],
        words_total=len(words),
        claims=row.claims,
        category=row.category,
    )


def evidence_and_held(
    row: HitRow,
    head: str,
    evidence_plan: QueryPlan,
    unsearched: list[QueryTerm],
    markers: tuple[str, str],
) -> tuple[Evidence, set[QueryTerm]]:
    """The hit's evidence (cut from its body by `evidence_plan`) and which `unsearched`
    terms `head` + body holds, as two scans would find them: one of the body, one of
    `head\nbody`. One scan of `head\nbody` serves both when it can: the body's tokens are
    the same there (no token crosses a line break), unless the text is cut at
    SCAN_LIMIT_CHARS or is Traditional (its alternatives depend on the whole text)."""
    joined = f"{head}\n{row.body}"
    if not unsearched or len(joined) > SCAN_LIMIT_CHARS or has_traditional(joined):
        evidence = build_evidence(
            row.body, row.body_line, row.headings, evidence_plan, markers=markers
        )
        if not unsearched:
            return evidence, set()
        return evidence, matched_in(joined, QueryPlan(evidence_plan.text, unsearched))
    cited = set(evidence_plan.terms)
    both = [*evidence_plan.terms, *(t for t in unsearched if t not in cited)]
    found = find_matches(joined, QueryPlan(evidence_plan.text, both))
    cut = len(head) + 1
    in_body = [
        Match(m.start - cut, m.end - cut, m.term)
        for m in found
        if m.start >= cut and m.term in cited
    ]
    evidence = build_evidence(
        row.body, row.body_line, row.headings, evidence_plan, markers=markers, matches=in_body
    )
    wanted = set(unsearched)
    return evidence, {m.term for m in found if m.term in wanted}

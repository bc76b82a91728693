"""Search in the capability mode at hand: plan the query, run the channels, fuse, and
return hits with their evidence, the mode that produced them and, with `explain`, every
channel's raw and weighted score.

A part that fails during the search (the LLM answers prose, the embedding endpoint is
down) is switched off, the user is told once (`SearchResult.notices`), and the search
finishes in the next lower mode.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from ..capabilities import MODES, mode_for, mode_parts
from ..errors import LoreError, QueryError
from ..model import SearchResult
from ..providers.none import Absent
from ..store.note_llm import Shown, fields_of
from ..store.query import Filters
from ..store.rows import HitRow
from . import channels as ch
from .budget import QueryBudget, QueryCosts
from .fuse import DEFAULT_WEIGHTS, PART_SHARE, Fused, channel_weights, rrf, weighted
from .names import name_candidates, name_scores
from .pinyin import PinyinMatch
from .plan import SearchPlan, heuristic_plan, llm_plan
from .query import QueryPlan, plan, shown_exclusions, shown_query, split_exclusions
from .search import (
    MAX_LIMIT,
    SearchOptions,
    _count,
    _field_scores,
    _weights,
    count_matching,
    load_hit_rows,
    make_hit,
    prune,
    ranked_candidates,
)
from .sections import BestSection, best_sections, part_heading, start_sections, uses_parts
from .snippet import Evidence, build_evidence, folded_matches, head_evidence, matched_in

if TYPE_CHECKING:
    from ..capabilities import Capabilities
    from ..model.explain import Explain

# The candidate pool does not follow the limit up to STABLE_LIMIT (the largest page of the
# web API; MCP and the CLI's default pages are smaller): the hits of a shorter list are the
# head of a longer one's and `matched` is one number, whatever the limit. Above it the pool
# grows to the limit; the query plan, and so `matched`, still do not move.
# Latency of the fixed pool against the old max(40, 4 x limit) at limit 10: see CHANGELOG.
STABLE_LIMIT = 100
POOL = STABLE_LIMIT
NAME_MAX_WORDS = 8
FTS_DEPTH = 5
# Notes the candidate-bringing terms must find before the common terms bring more
# (lore.retrieve.search.prune): a constant, so the plan is the same for every limit.
CANDIDATES_WANTED = POOL * FTS_DEPTH


class Channels(NamedTuple):
    """Every channel's raw score for every note of the pool, and the best passages (a
    NamedTuple: cheaper for a cold process to define than a dataclass)."""

    pool: list[int]
    raw: dict[str, dict[int, float]]
    passages: dict[int, ch.PassageMatch]
    order_key: dict[int, str]
    sources: dict[str, list[int]]  # channel -> the candidates it brought
    plan: QueryPlan  # the full-text plan as run (widened when the rare terms found few)
    fts_found: int  # notes the full-text ranking returned (all that match, when short)
    pinyin: dict[int, PinyinMatch]  # names the query spelled
    parts: dict[int, BestSection]  # each note's best part


def resolve_mode(active: str, requested: str | None) -> str:
    if requested is None:
        return active
    if requested not in MODES:
        raise QueryError(f"--mode: {requested!r} is not one of {', '.join(MODES)}")
    have_emb, have_llm = mode_parts(active)
    need_emb, need_llm = mode_parts(requested)
    if (need_emb and not have_emb) or (need_llm and not have_llm):
        allowed = [m for m in MODES if _subset(mode_parts(m), (have_emb, have_llm))]
        raise QueryError(
            f"--mode {requested} needs a part this vault does not have (it runs in {active})",
            hint=f"choose one of {', '.join(allowed)}; `lore status` says what is missing",
        )
    return requested


def _subset(parts: tuple[bool, bool], have: tuple[bool, bool]) -> bool:
    return all(have[i] or not parts[i] for i in range(2))


def mode_weights(caps: Capabilities, mode: str) -> dict[str, float]:
    custom: dict[str, float] = getattr(caps.settings, f"score_weights_{mode}", {}) or {}
    base = dict(custom) if custom else dict(DEFAULT_WEIGHTS[mode])
    return channel_weights(base, caps.settings.tag_vec_fraction)


def hybrid_search(
    caps: Capabilities,
    text: str,
    filters: Filters,
    options: SearchOptions,
    *,
    mode: str | None = None,
    fusion: str | None = None,
    budget: QueryBudget | None = None,
) -> SearchResult:
    """`budget`: the query's time budget; the parts it drops are listed in its `degraded`."""
    if not isinstance(options.limit, int) or options.limit < 1:
        raise QueryError(f"--limit must be a positive number, not {options.limit!r}")
    if fusion is not None and fusion not in ("weighted", "rrf"):
        raise QueryError(f"--fusion: {fusion!r} is not weighted or rrf")
    limit = min(options.limit, MAX_LIMIT)
    store = caps.store
    target = resolve_mode(caps.mode()[0], mode)
    use_emb, use_llm = mode_parts(target)
    notices: list[str] = []
    splan = heuristic_plan(text, caps.settings.query_tags)
    budget = budget or QueryCosts().start(None)
    chat = caps.chat()
    if use_llm and not isinstance(chat, Absent) and (use_llm := budget.allows("llm_plan")):
        since = budget.now()
        try:
            splan = llm_plan(store, chat, text, caps.settings.query_tags)
        except LoreError as exc:
            use_llm = False
            _tell(notices, caps.fail("llm", exc))
        budget.timed("llm_plan", since)
    vectors: Any = None
    provider = caps.embedder()
    if use_emb and not isinstance(provider, Absent) and (use_emb := budget.allows("vec")):
        since = budget.now()
        try:
            vectors = provider.embed([splan.refine, ", ".join(splan.tags) or splan.refine], "query")
            _check_dim(caps, provider.identity, vectors)
        except LoreError as exc:
            use_emb = False
            _tell(notices, caps.fail("embeddings", exc))
        budget.timed("vec", since)
    actual = mode_for(use_emb, use_llm)
    text_plan = (
        plan(text)
        if splan.planner == "heuristic"
        else plan(f"{splan.refine} {' '.join(splan.tags)} {split_exclusions(text)[1]}")
    )
    if not text_plan.terms and text_plan.excluded:
        return SearchResult(
            [], query=text, mode=actual, reason="every word is excluded (-word)", notices=notices
        )
    if text_plan.empty and not (use_emb and text.strip()) and not splan.tags:
        reason = "empty query" if not text.strip() else "the query has no searchable words"
        return SearchResult([], query=text, mode=actual, reason=reason, notices=notices)
    weights = mode_weights(caps, actual)
    fuse = rrf if (fusion or caps.settings.fusion) == "rrf" else weighted
    pool = max(POOL, limit)
    with store.snapshot():
        query_plan, dropped = prune(
            store, text_plan, options.max_df_ratio, filters.allow, want=CANDIDATES_WANTED
        )
        found = gather(
            caps,
            query_plan,
            splan,
            filters,
            options,
            weights,
            vectors if use_emb else None,
            pool=pool,
            named=text_plan,
        )
        query_plan = found.plan
        if not found.pool:
            matched = _count(store, query_plan, filters) if query_plan.terms else 0
            reason = (
                f"{matched} note(s) matched, but all were filtered out"
                if matched and filters.active
                else "nothing matched"
            )
            return SearchResult([], query=text, mode=actual, reason=reason, notices=notices)
        if fuse is weighted:
            fused = weighted(
                found.pool, found.raw, weights, found.order_key, alpha=caps.settings.tag_log_alpha
            )
        else:
            fused = rrf(found.pool, found.raw, weights, found.order_key)
        top = fused[:limit]
        # Every matching note is a candidate when the ranking came back short: no count.
        short = found.fts_found < pool * FTS_DEPTH
        matched = found.fts_found if short else count_matching(store, query_plan, filters)
        rows = load_hit_rows(store, [f.note_id for f in top])
        fields = (
            _field_scores(store, query_plan, [f.note_id for f in top], _weights(options))
            if options.explain and query_plan.terms
            else {}
        )
        from ..store.sqlite import SqliteStore  # the notes' LLM fields: SQLite indexes only

        llm_fields: dict[int, Shown] = {}
        if options.explain and isinstance(store, SqliteStore):
            llm_fields = fields_of(store, [f.note_id for f in top])

    explain = (
        _explainer(
            query_plan,
            text_plan,
            dropped,
            splan,
            {f.note_id: f for f in top},
            found,
            fields,
            shown_query(store, query_plan),
            llm_fields,
            found.parts if fuse is weighted else {},  # RRF ranks the whole notes' BM25 only
        )
        if options.explain
        else None
    )
    polish = budget.allows("snippet")
    since = budget.now()
    hits = [
        make_hit(
            rows[f.note_id],
            f.score,
            query_plan,
            options,
            explain,
            evidence=_evidence(rows[f.note_id], query_plan, f, found, options)
            if polish
            else head_evidence(rows[f.note_id].body, rows[f.note_id].body_line),
            mode=actual,
            asked=text_plan,
            spelled=found.pinyin[f.note_id].words if f.note_id in found.pinyin else (),
        )
        for f in top
    ]
    if polish:
        budget.timed("snippet", since)
    # `matched`: the notes holding a term that brings candidates (the others only score);
    # at least the pool when other channels brought notes without any term.
    matched = max(matched, len(found.pool))
    return SearchResult(hits, query=text, mode=actual, matched=matched, notices=notices)


def _check_dim(caps: Capabilities, identity: str, vectors: Any) -> None:
    from ..providers.base import ProviderError

    dim = caps.store.embed_identity()[1]
    got = int(vectors.shape[1]) if getattr(vectors, "ndim", 0) == 2 else 0
    if dim is not None and got != dim:
        raise ProviderError(
            f"{identity} returned {got}-dimensional query vectors; the index holds {dim}"
        )


def _tell(notices: list[str], notice: str | None) -> None:
    if notice:
        notices.append(notice)


def gather(
    caps: Capabilities,
    query_plan: QueryPlan,
    splan: SearchPlan,
    filters: Filters,
    options: SearchOptions,
    weights: dict[str, float],
    vectors: Any,
    *,
    pool: int,
    named: QueryPlan | None = None,
) -> Channels:
    """Candidates from each query channel, then every channel's score for the whole pool.
    `named`: the query's every word, before pruning, to match against note names (a word
    most notes hold still belongs to a name: "Obsidian" in "Default Obsidian Theme").
    Call inside a read snapshot."""
    store = caps.store
    bm25_weights = _weights(options)
    raw: dict[str, dict[int, float]] = {}
    passages: dict[int, ch.PassageMatch] = {}
    # The fts channel scores a note by its best part too: the parts bring their notes and
    # score the other channels' candidates. Their ranking begins first: the store may run
    # it while it ranks the whole notes (lore.store.sqlite_parts).
    by_parts = weights.get("fts", 0) > 0 and uses_parts(options.field_weights)
    depth = pool * FTS_DEPTH
    started = start_sections(store, query_plan, filters, depth) if by_parts else None
    # One BM25 ranking, deeper than the pool: its head brings the fts candidates, the rest
    # scores candidates of other channels (a note below FTS_DEPTH x pool counts as 0).
    query_plan, found_fts = ranked_candidates(
        store, query_plan, filters, depth, bm25_weights, want=CANDIDATES_WANTED
    )
    ranked = dict(found_fts)
    order: list[int] = list(ranked)[:pool]
    sources: dict[str, list[int]] = {"fts": list(order)}
    if weights.get("name", 0) > 0:
        # A name has few words: a long question brings no candidates by name (it still
        # scores every candidate's names), which keeps its cost off long questions.
        short = len(query_plan.words) <= NAME_MAX_WORDS
        sources["name"] = name_candidates(store, query_plan, filters, pool) if short else []
        order += sources["name"]
    identity = ""
    if vectors is not None:
        store.load_vec()
        identity = store.embed_identity()[0] or ""
        found = ch.vec_candidates(store, vectors[0], identity, "doc", filters, pool)
        raw["vec"] = {n: s for n, (s, _p) in found.items()}
        passages.update({n: p for n, (_s, p) in found.items()})
        order += list(found)
        sources["vec"] = list(found)
        if weights.get("tag_vec", 0) > 0:
            tags = ch.vec_candidates(store, vectors[1], identity, "tags", filters, pool)
            raw["tag_vec"] = {n: s for n, (s, _p) in tags.items()}
            order += list(tags)
            sources["tag_vec"] = list(tags)
    if weights.get("tag_lex", 0) > 0 and splan.tags:
        raw["tag_lex"] = ch.tag_lex_scores(store, splan.tags, filters, pool, [])
        order += list(raw["tag_lex"])
        sources["tag_lex"] = list(raw["tag_lex"])
    parts: dict[int, BestSection] = {}
    if by_parts:
        sources["section"], parts = best_sections(
            store, query_plan, filters, pool, depth, list(dict.fromkeys(order)), started
        )
        order += sources["section"]
    ids = list(dict.fromkeys(order))
    # Score every candidate on every channel.
    raw["fts"] = {n: ranked[n] for n in ids if n in ranked}
    if "section" in sources:
        raw["section"] = {n: parts[n].score for n in ids if n in parts}
    if vectors is not None:
        missing = [n for n in ids if n not in raw["vec"]]
        extra = ch.vec_scores(store, vectors[0], identity, "doc", missing)
        raw["vec"].update({n: s for n, (s, _p) in extra.items()})
        passages.update({n: p for n, (_s, p) in extra.items()})
        if "tag_vec" in raw:
            missing = [n for n in ids if n not in raw["tag_vec"]]
            extra = ch.vec_scores(store, vectors[1], identity, "tags", missing)
            raw["tag_vec"].update({n: s for n, (s, _p) in extra.items()})
    if "tag_lex" in raw:
        raw["tag_lex"] = ch.tag_lex_scores(store, splan.tags, Filters(), 0, ids)
    spelled: dict[int, PinyinMatch] = {}
    if "name" in sources:
        raw["name"] = name_scores(store, named or query_plan, ids, spelled)
    if query_plan.excluded:  # other channels' candidates hold no excluded term either
        ids = ch.without_excluded(store, query_plan, ids)
    if weights.get("priority", 0) > 0 or weights.get("recency", 0) > 0:
        raw["priority"], raw["recency"] = ch.nudges(store, ids)
    paths = store.paths_of(ids)
    ids = [n for n in ids if n in paths]
    return Channels(ids, raw, passages, paths, sources, query_plan, len(ranked), spelled, parts)


def _evidence(
    row: HitRow, query_plan: QueryPlan, fused: Fused, found: Channels, options: SearchOptions
) -> Evidence | None:
    """The snippet of a long note comes from the text that ranked it: the vector channel's
    best passage when that channel carried the hit, else the part the fts channel's score
    came from (lore.retrieve.sections) if its text holds a word of the query; None (the
    whole note's best window) otherwise."""
    match = found.passages.get(row.id)
    lexical = fused.weighted.get("fts", 0.0) + fused.weighted.get("tag_lex", 0.0)
    if match is not None and match.kind == "passage" and fused.weighted.get("vec", 0.0) > lexical:
        return _span_evidence(row, match.start, match.end, match.heading, query_plan, options)
    part = found.parts.get(row.id)
    if part is not None and "fts" in fused.weighted and fts_from_part(fused, part):
        heading = part_heading(row.headings, part.start)
        evidence = _span_evidence(row, part.start, part.end, heading, query_plan, options)
        # A part is read with its note's title (lore.derive.sections): one that matched
        # by the title alone shows none of the query's words, the whole note's window may.
        if evidence is None or evidence.matched:
            return evidence
    return None


def _span_evidence(
    row: HitRow,
    start: int,
    end: int,
    heading: str | None,
    query_plan: QueryPlan,
    options: SearchOptions,
) -> Evidence | None:
    """The snippet from body[start:end] (None when that is the whole body)."""
    if start == 0 and end >= len(row.body.rstrip()):
        return None
    sub = row.body[start:end]
    line = row.body_line + row.body.count("\n", 0, start)
    heads = [(h[0], h[1], h[2] - start, h[3]) for h in row.headings if start <= h[2] < end]
    evidence = build_evidence(sub, line, heads, query_plan.evidence, markers=options.markers)
    snippet = evidence.snippet
    if start > 0 and not snippet.startswith("…"):
        snippet = "…" + snippet
    return Evidence(snippet, evidence.heading or heading, evidence.line, evidence.matched)


def _explainer(
    query_plan: QueryPlan,
    full_plan: QueryPlan,
    dropped: list[str],
    splan: SearchPlan,
    fused: dict[int, Fused],
    found: Channels,
    fields: dict[int, dict[str, float]],
    fts_query: str,
    llm_fields: dict[int, Shown],
    parts: dict[int, BestSection],
) -> Any:
    from ..model.explain import Explain  # made only for --explain

    def explain(nid: int, evidence: Evidence, row: HitRow) -> Explain:
        f = fused[nid]
        text = f"{row.title}\n{' '.join(row.tags)}\n{row.body}"
        hit_terms = set(evidence.matched) | matched_in(text, query_plan)
        spelled = found.pinyin.get(nid)
        match = found.passages.get(nid)
        passage = None
        if match is not None and match.kind == "passage":
            passage = " ".join(row.body[match.start : match.end].split())[:160]
        return Explain(
            fields=fields.get(nid, {}),
            matched_terms=[t.text for t in query_plan.terms if t in hit_terms],
            query_terms=[t.text for t in full_plan.terms],
            fts_query=fts_query,
            dropped_terms=dropped,
            score_only_terms=[t.text for t in query_plan.score_only],
            excluded_terms=shown_exclusions(query_plan),
            stop_terms=list(full_plan.left_out),
            query_refine=splan.refine,
            query_tags=list(splan.tags),
            planner=splan.planner,
            channels={
                name: {"raw": round(f.raw.get(name, 0.0), 6), "weighted": f.weighted.get(name, 0.0)}
                for name in sorted(set(f.raw) | set(f.weighted))
            },
            passage=passage,
            folded_terms=full_plan.folded,
            matched_folded=folded_matches(text, query_plan),
            pinyin=f"{' '.join(spelled.words)} → {spelled.name}" if spelled else None,
            vector_text=vector_text(match, row, llm_fields.get(nid)),
            fts_text=fts_text(f, parts.get(nid), row),
        )

    return explain


def fts_from_part(fused: Fused, part: BestSection) -> bool:
    """Whether the fts channel's score is its best part's, not the whole note's
    (lore.retrieve.fuse.best_of_note_and_part)."""
    return PART_SHARE * part.score > fused.raw.get("fts", 0.0)


def fts_text(fused: Fused, part: BestSection | None, row: HitRow) -> str | None:
    """Where the fts channel's score came from, said for --explain: the whole note, or its
    best part (lore.retrieve.fuse.best_of_note_and_part), with the heading it sits under."""
    if "fts" not in fused.weighted:
        return None
    note = fused.raw.get("fts", 0.0)
    if part is None or not fts_from_part(fused, part):
        return "the whole note" if note > 0 else None
    if part.start == 0 and part.end >= len(row.body.rstrip()):
        return "the whole note (one part)"
    heading = part_heading(row.headings, part.start)
    return "a part" + (f" (§ {heading})" if heading else " (before the first heading)")


def vector_text(match: ch.PassageMatch | None, row: HitRow, fields: Shown | None) -> str | None:
    """Which text of the note the best vector was made from, said for --explain."""
    if match is None:
        return None
    if match.kind == "passage":
        if match.start == 0 and match.end >= len(row.body.rstrip()):
            return "the whole note (one passage)"
        return "a passage" + (f" (§ {match.heading})" if match.heading else "")
    if match.kind == "llm_summary":
        return f"the summary by the LLM ({fields.model})" if fields else "the summary by the LLM"
    from ..derive.summary import author_summary  # reads the note line by line: --explain only

    if author_summary(row.frontmatter, row.body, row.title) is not None:
        return "the author's summary (front matter)"
    return "the summary: head and tail of the text"

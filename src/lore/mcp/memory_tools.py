"""The agent-memory tools (lore.memory through the Vault): lookup, recent, context, snapshot,
and the one write tool, remember (offered only when the server allows writes)."""

from __future__ import annotations

from typing import Any

from ..retrieve.query import MAX_QUERY_CHARS
from .args import Param, budget_param, limit_param
from .spec import ToolContext, ToolSpec

# -- lookup --------------------------------------------------------------------------------

LOOKUP_PARAMS = (
    Param(
        "query",
        "string",
        "A name (person, project, system, metric, concept; any alias or spelling) or a short"
        " question about it.",
        required=True,
        aliases=("q", "name", "entity", "question", "text", "subject", "about"),
        max_length=MAX_QUERY_CHARS,
    ),
    limit_param("How many supporting hits to return.", default=5, maximum=20),
)


def run_lookup(ctx: ToolContext, a: dict[str, Any]) -> dict[str, Any]:
    return ctx.vault.lookup(a["query"], limit=a["limit"], principal=ctx.principal).to_dict()


LOOKUP = ToolSpec(
    name="lookup",
    title="Look up a name",
    description=(
        "Ask the knowledge base about a person, project, system, metric or concept by name"
        " (any alias: 张三 / Zhang San / zs) or a short question. It follows a fixed path and"
        " says which level answered: L1 the entity card (definition, aliases, relations,"
        " latest events) → L2 the index → L3 a raw scan of the files → L4 not found, with"
        " what was tried. At L4 say you do not know; do not guess. Items marked"
        " `unverified` are claims nobody has confirmed yet."
    ),
    params=LOOKUP_PARAMS,
    run=run_lookup,
)


# -- recent --------------------------------------------------------------------------------

RECENT_PARAMS = (
    Param(
        "days",
        "integer",
        "How far back to look, in days.",
        default=7,
        aliases=("since_days", "window", "last_days", "period", "n_days"),
        minimum=1,
        maximum=3650,
    ),
    limit_param("How many entities and notes to return (each).", default=20, maximum=200),
)


def run_recent(ctx: ToolContext, a: dict[str, Any]) -> dict[str, Any]:
    return ctx.vault.recent(days=a["days"], limit=a["limit"], principal=ctx.principal).to_dict()


RECENT = ToolSpec(
    name="recent",
    title="Recent activity",
    description=(
        "What was active lately: the entities (people, projects, ...) and notes with their"
        " last activity date and where that date comes from, most active first. Nothing is"
        " ever deleted by age; older items only rank lower."
    ),
    params=RECENT_PARAMS,
    run=run_recent,
)


# -- context -------------------------------------------------------------------------------

CONTEXT_PARAMS = (
    Param(
        "task",
        "string",
        "What you are about to do or answer, in a sentence.",
        required=True,
        aliases=("query", "q", "topic", "question", "goal", "text", "prompt"),
        max_length=MAX_QUERY_CHARS,
    ),
    budget_param("briefing", default=4096, minimum=512, maximum=65536),
)


def run_context(ctx: ToolContext, a: dict[str, Any]) -> dict[str, Any]:
    view = ctx.vault.context(a["task"], budget=a["budget"], principal=ctx.principal)
    return view.to_dict()


CONTEXT = ToolSpec(
    name="context",
    title="Briefing for a task",
    description=(
        "A briefing for a task that fits a byte budget: the resident core (conclusions, each"
        " with its anchor), the entity cards involved and the best evidence from the notes,"
        " each with path, date and anchor. `text` is ready to read; `items` lists what is in"
        " it and `left_out` what did not fit. Use it at the start of a task instead of many"
        " searches."
    ),
    params=CONTEXT_PARAMS,
    run=run_context,
)


# -- snapshot ------------------------------------------------------------------------------

SNAPSHOT_PARAMS = (budget_param("summary", default=2048, minimum=256, maximum=16384),)


def run_snapshot(ctx: ToolContext, a: dict[str, Any]) -> dict[str, Any]:
    return ctx.vault.snapshot(budget=a["budget"], principal=ctx.principal).to_dict()


SNAPSHOT = ToolSpec(
    name="snapshot",
    title="Cold-start summary",
    description=(
        "A short (1-2 KB) summary of where things stand, built from the daily notes and the"
        " core conclusions: open items, recent discussion, next steps, each pointing at its"
        " source. Call it once when a session starts."
    ),
    params=SNAPSHOT_PARAMS,
    run=run_snapshot,
)


# -- remember ------------------------------------------------------------------------------

REMEMBER_PARAMS = (
    Param(
        "text",
        "string",
        "The conclusion, decision or fact to keep, self-contained (who, what, when). One"
        " conclusion per call.",
        required=True,
        aliases=("content", "memory", "conclusion", "fact", "message", "note", "body"),
    ),
    Param(
        "entities",
        "strings",
        "The people, projects or concepts it is about (names or aliases; aliases are written"
        " as the entity's name).",
        aliases=("entity", "people", "person", "subjects", "about", "names"),
    ),
    Param(
        "status",
        "string",
        "claimed (default: shown as unverified) or verified (a person checked it; needs source).",
        default="claimed",
        choices=("claimed", "verified"),
        synonyms={"unverified": "claimed", "confirmed": "verified"},
    ),
    Param(
        "source",
        "string",
        "Where it comes from, checkable by someone else: a conversation, a URL, a file.",
        aliases=("evidence", "from", "ref", "reference", "url", "origin", "provenance"),
        max_length=2000,
    ),
    Param(
        "trust",
        "string",
        "confirmed (a person said so), inferred (default: you concluded it) or imported.",
        default="inferred",
        choices=("confirmed", "inferred", "imported"),
        aliases=("trust_level", "confidence"),
    ),
)


def run_remember(ctx: ToolContext, a: dict[str, Any]) -> dict[str, Any]:
    memory = ctx.vault.remember(
        a["text"],
        entities=tuple(a["entities"] or ()),
        status=a["status"],
        source=a["source"],
        trust=a["trust"],
        principal=ctx.principal,
    )
    return memory.to_dict()


REMEMBER = ToolSpec(
    name="remember",
    title="Remember a conclusion",
    description=(
        "Write a conclusion, decision or fact into today's daily note (memory/YYYY-MM-DD.md)"
        " at once and index it, so search, lookup and context find it right away. Returns"
        " where it was written and its `pointer` (path#anchor) to cite. It is `claimed`"
        " (shown as unverified) unless a person verified it with evidence (status=verified"
        " with a source). The same entry written twice the same day is kept once. Only"
        " append: nothing is ever overwritten or deleted."
    ),
    params=REMEMBER_PARAMS,
    run=run_remember,
    read_only=False,
    destructive=False,
    idempotent=True,
    sync_first=False,  # remember indexes what it wrote itself
    write=True,
)

MEMORY_TOOLS = (LOOKUP, RECENT, CONTEXT, SNAPSHOT, REMEMBER)

"""The MCP tools: what each one is for (written for a model), its arguments, its behaviour
hints, and the one Vault call it makes. No MCP SDK here: server.py turns these into
protocol objects, and runs the incremental sync before every tool that asks for it.

Every result is a JSON object; whatever points into the vault carries `path` (relative,
`/`-separated), `date` and an `anchor` (`path#heading`) an agent can cite.
"""

from __future__ import annotations

from typing import Any

from ..retrieve.query import MAX_QUERY_CHARS
from ..vault import Vault
from .args import Param, limit_param
from .memory_tools import MEMORY_TOOLS
from .read import READ_NOTE
from .spec import MAX_PATH, ToolContext, ToolSpec
from .write_tools import WRITE_TOOLS

# -- search --------------------------------------------------------------------------------

MODE_SYNONYMS = {str(n): f"mode{n}" for n in range(1, 5)} | {
    "fts": "mode4",
    "full_text": "mode4",
    "keyword": "mode4",
    "lexical": "mode4",
}

SEARCH_PARAMS = (
    Param(
        "query",
        "string",
        "What to look for: words, a name, an id such as JIRA-1234, a version such as v2, a"
        " date, or a question, in Chinese, English or both. Any text is safe.",
        required=True,
        aliases=("q", "text", "search", "keywords", "search_query", "question"),
        max_length=MAX_QUERY_CHARS,
    ),
    limit_param("How many hits to return, best first.", default=10, maximum=50),
    Param(
        "tags",
        "strings",
        "Only notes carrying every one of these tags (a tag also matches its sub-tags:"
        " 'project' matches 'project/crm'). See list_tags.",
        aliases=("labels", "label"),
    ),
    Param(
        "path",
        "string",
        "Only notes whose vault-relative path matches this glob; a folder such as 'rules/'"
        " means everything under it.",
        aliases=("glob", "folder", "dir", "directory", "path_glob", "in"),
        max_length=MAX_PATH,
    ),
    Param(
        "category",
        "string",
        "Only notes of this category: the note's own `category:`, else the one the LLM chose"
        " from the vault's configured categories (status lists them with their counts).",
        aliases=("kind", "note_category"),
        max_length=200,
    ),
    Param(
        "since",
        "string",
        "Only notes dated on or after this day: YYYY, YYYY-MM or YYYY-MM-DD.",
        aliases=("after", "from", "from_date", "start_date", "date_from"),
        max_length=40,
    ),
    Param(
        "until",
        "string",
        "Only notes dated on or before this day: YYYY, YYYY-MM or YYYY-MM-DD.",
        aliases=("before", "to", "to_date", "end_date", "date_to"),
        max_length=40,
    ),
    Param(
        "include_undated",
        "boolean",
        "With since/until, also keep notes that have no date of their own (none in front"
        " matter, file name or text): they may be from any time.",
        default=False,
        aliases=("undated", "with_undated"),
    ),
    Param(
        "mode",
        "string",
        "Run in a lower capability mode than the vault's own (to compare): mode1 embeddings"
        " and LLM, mode2 LLM only, mode3 embeddings only, mode4 full text only. Leave it out"
        " normally.",
        choices=("mode1", "mode2", "mode3", "mode4"),
        synonyms=MODE_SYNONYMS,
    ),
    Param(
        "explain",
        "boolean",
        "Add to each hit why it ranked there: the score of each field or channel and the"
        " query terms it matched.",
        default=False,
        aliases=("debug", "verbose", "with_explain"),
    ),
    Param(
        "budget_ms",
        "integer",
        "Answer within about this many milliseconds: when the whole search would take longer,"
        " lore skips the LLM query plan, then the vector channels, then the polished snippets,"
        " and lists what it skipped in `degraded`. Leave it out for the full search.",
        aliases=("time_budget_ms", "timeout_ms", "deadline_ms"),
        minimum=1,
        maximum=600_000,
    ),
)


def run_search(ctx: ToolContext, a: dict[str, Any]) -> dict[str, Any]:
    result = ctx.vault.search(
        a["query"],
        limit=a["limit"],
        tags=a["tags"],
        path=a["path"],
        category=a["category"],
        since=a["since"],
        until=a["until"],
        include_undated=a["include_undated"],
        explain=a["explain"],
        mode=a["mode"],
        principal=ctx.principal,
        budget_ms=a["budget_ms"],
    )
    return dict(result.to_dict())  # the one hit shape (lore.model.HitJson)


SEARCH = ToolSpec(
    name="search",
    title="Search the notes",
    description=(
        "Search the knowledge base (a folder of Markdown notes) and get the best matching"
        " notes, each with its path, date, the heading it sits under, the line and a snippet"
        " with the matched words in «» — the evidence to cite. Works for Chinese, English and"
        " mixed text; exact for ids (JIRA-1234), versions (v1 vs v2) and dates. Narrow with"
        " tags, a path glob and a date range. When `hits` is empty, `reason` says why. Open a"
        " hit in full with read_note(path)."
    ),
    params=SEARCH_PARAMS,
    run=run_search,
)

# -- list_tags -----------------------------------------------------------------------------

TAG_PARAMS = (
    Param(
        "match",
        "string",
        "Only tags containing this text (case-insensitive).",
        aliases=("prefix", "contains", "filter", "query", "q", "tag", "pattern"),
        max_length=200,
    ),
    limit_param("How many tags to return, most used first.", default=100, maximum=1000),
)


def run_list_tags(ctx: ToolContext, a: dict[str, Any]) -> dict[str, Any]:
    from ..present.jsonout import tag_list

    return tag_list(ctx.vault.tag_counts(principal=ctx.principal), a["match"], a["limit"])


LIST_TAGS = ToolSpec(
    name="list_tags",
    title="List the tags",
    description=(
        "List the tags used in the knowledge base with how many notes carry each, most used"
        " first — the vocabulary to pass as search(tags=[...]). Optionally only tags"
        " containing some text."
    ),
    params=TAG_PARAMS,
    run=run_list_tags,
)


# -- status --------------------------------------------------------------------------------


def run_status(ctx: ToolContext, a: dict[str, Any]) -> dict[str, Any]:
    data = ctx.vault.status(principal=ctx.principal).to_dict()
    data["name"] = ctx.vault.root.name
    return data


STATUS = ToolSpec(
    name="status",
    title="Index status",
    description=(
        "Facts about the knowledge base: the vault, how many notes, tags and links are"
        " indexed, when it last changed, and the capability mode searches run in (mode4 ="
        " full text only; mode1-3 add embeddings and/or an LLM) with the reason for each part."
    ),
    params=(),
    run=run_status,
)


CORE_TOOLS = (SEARCH, READ_NOTE, LIST_TAGS, STATUS)


def available_tools(vault: Vault, *, allow_write: bool = False) -> list[ToolSpec]:
    """The tools this server offers, in the order a client lists them: the core, then
    agent memory, then note writing; the write tools only when writes are allowed."""
    every = (*CORE_TOOLS, *MEMORY_TOOLS, *WRITE_TOOLS)
    return [tool for tool in every if allow_write or not tool.write]

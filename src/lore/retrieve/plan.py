"""A user query → `query_refine` (a cleaner retrieval sentence) + `query_tags` (the
discriminative terms), by the LLM when one is configured (fixed, versioned prompt; JSON
validated; cached by input hash, model and prompt version), by heuristics otherwise:
spoken filler is stripped ("我记得", "帮我找找", "can you find") and keywords are picked
with the same extractor that tags notes, so query tags and note tags meet on the same words.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any, NamedTuple

from ..derive.tags import query_keywords
from .query import _ZH_FILLER_RE, split_exclusions

if TYPE_CHECKING:
    from ..providers.base import ChatProvider
    from ..store.base import Store

PLAN_PROMPT_VERSION = "lore-query-v1"
PLAN_SYSTEM = (
    "You turn a person's question to their own notes into a search plan. Answer with JSON "
    'only, no prose: {"query_refine": "...", "query_tags": ["...", ...]}. query_refine: one '
    "short sentence that keeps every name, number and term of the question and drops filler "
    "(I remember, help me find, 我记得, 帮我找找). query_tags: {low} to {high} short "
    "discriminative keywords or phrases (names, terms, topics; synonyms welcome), in the "
    "question's language, most important first."
)
_EN_FILLER = re.compile(
    r"\b(?:can|could|would) you (?:please )?(?:help me )?(?:find|search for|look up|show me)"
    r"|\bhelp me (?:find|look up|search for)|\bi (?:remember|recall|think|believe)(?: that)?"
    r"|\bplease\b|\bsearch (?:for|my notes for)|\blook (?:for|up)\b|\bshow me\b"
    r"|\bdo (?:i|we|you) have (?:any(?:thing)?|a note|notes)(?: about| on)?"
    r"|\b(?:some|any)thing (?:about|on)\b|\bthat (?:note|thing|article) (?:about|on)\b"
    r"|\bremind me\b|\bwhat was (?:it|that) (?:about|again)\b",
    re.IGNORECASE,
)


class SearchPlan(NamedTuple):  # a tuple: cheaper for a cold process than a dataclass
    text: str
    refine: str
    tags: list[str]
    planner: str = "heuristic"  # heuristic | llm


def strip_filler(text: str) -> str:
    cleaned = _EN_FILLER.sub(" ", text)
    cleaned = _ZH_FILLER_RE.sub(" ", cleaned)
    cleaned = re.sub(r"\s+", " ", cleaned).strip(" ,，。?？!！")
    return cleaned or text.strip()


def heuristic_plan(text: str, tag_range: tuple[int, int] = (8, 12)) -> SearchPlan:
    """`refine` and `tags` leave out the words the query excludes (`-word`)."""
    refine = strip_filler(split_exclusions(text)[0])
    return SearchPlan(text, refine, query_keywords(refine, tag_range[1]), "heuristic")


def llm_plan(
    store: Store, chat: ChatProvider, text: str, tag_range: tuple[int, int] = (8, 12)
) -> SearchPlan:
    """The LLM's plan (cached). Raises ProviderError on any failure or invalid answer."""
    from ..index.llm_cache import cached_answer, string_list  # deferred: modes 1-2 only
    from ..providers.base import ProviderError

    asked = split_exclusions(text)[0]
    if not asked.strip():  # only exclusions: nothing to plan, nothing to ask
        return heuristic_plan(text, tag_range)
    low, high = tag_range
    system = PLAN_SYSTEM.replace("{low}", str(low)).replace("{high}", str(high))

    def validate(answer: dict[str, Any]) -> dict[str, Any]:
        refine = answer.get("query_refine")
        if not isinstance(refine, str) or not refine.strip():
            raise ProviderError(f"LLM {chat.identity}: query_refine missing or empty")
        tags = string_list(answer.get("query_tags"), "LLM query_tags", max_items=high)
        if not tags:
            raise ProviderError(f"LLM {chat.identity}: query_tags missing or empty")
        return {"query_refine": " ".join(refine.split())[:500], "query_tags": tags}

    answer = cached_answer(
        store,
        chat,
        task="query_plan",
        version=PLAN_PROMPT_VERSION,
        system=system,
        user=asked[:2000],  # an excluded word is no tag: the LLM never sees it
        validate=validate,
    )
    return SearchPlan(text, str(answer["query_refine"]), list(answer["query_tags"]), "llm")

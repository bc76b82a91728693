"""Tags by the LLM (mode1/mode2): a fixed, versioned prompt, JSON validated, cached."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..derive.summary import long_summary
from ..providers.base import ProviderError
from .llm_cache import cached_answer, string_list
from .semantic import set_llm_tags

if TYPE_CHECKING:
    from ..providers.base import ChatProvider
    from ..store.base import Store

TAGS_PROMPT_VERSION = "lore-tags-v1"
TAGS_SYSTEM = (
    "You tag notes for a personal knowledge base. Read the note and answer with JSON only, "
    'no prose: {"tags": ["...", ...]} with 3 to 8 short, specific topic tags (1-4 words '
    "each) in the language of the note. Prefer names, terms and topics a person would "
    "search for; no generic words."
)
MAX_INPUT_CHARS = 2400


def _validate(answer: dict[str, Any]) -> dict[str, Any]:
    return {"tags": string_list(answer.get("tags"), "LLM tags", max_items=8)}


def tag_notes(store: Store, chat: ChatProvider) -> int:
    """Give every note without LLM tags its tags (cached answers first). Returns notes
    tagged. Raises ProviderError on the first failure (earlier notes stay tagged)."""
    tagged = 0
    for nid, title, body in store.notes_without_llm_tags():
        # The head and tail of the text, whatever summary the index holds (the author's, the
        # LLM's): the same input, so the same cached answer, however that summary came.
        user = f"Title: {title}\n\n{long_summary(str(body))[:MAX_INPUT_CHARS]}"
        answer = cached_answer(
            store,
            chat,
            task="tags",
            version=TAGS_PROMPT_VERSION,
            system=TAGS_SYSTEM,
            user=user,
            validate=_validate,
        )
        tags = answer["tags"]
        if not isinstance(tags, list):
            raise ProviderError("LLM tags: cached answer is not a list")
        if tags:
            with store.transaction():
                set_llm_tags(store, int(nid), [str(t) for t in tags])
            tagged += 1
    return tagged

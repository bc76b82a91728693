"""The LLM extractor of `digest`: a fixed, versioned prompt; the JSON answer validated
strictly; every item grounded in the input; the answer cached like every model output
(lore.index.llm_cache: task "digest", input hash, model, prompt version).

The answer has exactly the four lists (`decisions`, `conclusions`, `open_items`,
`lessons`), each of at most MAX_ITEMS items `{"text": ..., "evidence": ...}`; any other
shape, a text over MAX_TEXT_CHARS or an evidence over MAX_EVIDENCE_CHARS fails the whole
answer (ProviderError), and `digest` falls back to the heuristic extractor.

Grounding, item by item (`ground`): an item is kept only when it is grounded in the input
(lore.index.grounding: its evidence is a quote of the material, and its numbers, ids and
most of its words occur in it). Other items are dropped and reported with the reason. An
answer that had items and kept none is a failure too: a model that only invents is not used.

Long material is cut at line ends into parts of at most MAX_PART_CHARS, one call (and one
cache entry) per part; items are merged in order, each once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..index.grounding import BadAnswer, evidence_item, normalise, why_ungrounded
from ..index.llm_cache import cached_answer
from ..providers.base import ProviderError
from .extract import KINDS

if TYPE_CHECKING:
    from ..providers.base import ChatProvider
    from ..store.base import Store

DIGEST_PROMPT_VERSION = "lore-digest-v1"
DIGEST_SYSTEM = (
    "You turn a day's working material (a chat transcript or a document, in Chinese, "
    "English or both) into notes for a long-term memory. Answer with JSON only, no prose, "
    'in exactly this shape: {"decisions": [ITEM], "conclusions": [ITEM], "open_items": '
    '[ITEM], "lessons": [ITEM]} where ITEM is {"text": "...", "evidence": "..."}.\n'
    "decisions: what was decided, chosen or approved (决定, 拍板, 选定, decided, agreed).\n"
    "conclusions: findings, results and root causes that were established (结论, 发现, "
    "根因, turns out, root cause).\n"
    "open_items: what is still to do, to follow up or to confirm, with the owner and date "
    "when given (待办, TODO, 跟进, 待确认, next step).\n"
    "lessons: lessons learned and mistakes not to repeat (教训, 踩坑, lesson learned).\n"
    "text: one self-contained sentence of at most 200 characters, in the language of the "
    "material, keeping names, numbers, versions, ids and dates exactly as written.\n"
    "evidence: a short quote, at most 100 characters, copied character for character "
    "from the material, that supports the item.\n"
    "At most 10 items per list; an empty list when there is nothing of that kind. Leave "
    "out greetings, chit-chat and acknowledgements. Never add a fact that is not in the "
    "material."
)
MAX_PART_CHARS = 8000
MAX_ITEMS = 10
MAX_TEXT_CHARS = 300
MAX_EVIDENCE_CHARS = 200
_WHERE = "LLM digest answer"


@dataclass
class LlmDigest:
    items: dict[str, list[str]]
    dropped: list[dict[str, str]] = field(default_factory=list)  # kind, text, why


def parts(text: str) -> list[str]:
    """The material cut at line ends into parts of at most MAX_PART_CHARS."""
    out: list[str] = []
    current = ""
    for line in text.split("\n"):
        while len(line) > MAX_PART_CHARS:  # one giant line: cut it where it must be
            if current:
                out.append(current)
                current = ""
            out.append(line[:MAX_PART_CHARS])
            line = line[MAX_PART_CHARS:]
        if current and len(current) + 1 + len(line) > MAX_PART_CHARS:
            out.append(current)
            current = line
        else:
            current = f"{current}\n{line}" if current else line
    if current.strip():
        out.append(current)
    return [p for p in out if p.strip()]


def validate(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer in its one accepted shape, or ProviderError naming what is wrong."""
    unknown = sorted(set(answer) - set(KINDS))
    if unknown:
        raise BadAnswer(f"{_WHERE}: unexpected key {unknown[0]!r} (expected {', '.join(KINDS)})")
    out: dict[str, Any] = {}
    for kind in KINDS:
        value = answer.get(kind, [])
        if not isinstance(value, list):
            raise BadAnswer(f"{_WHERE}: {kind} is not a list")
        if len(value) > MAX_ITEMS:
            raise BadAnswer(f"{_WHERE}: {kind} has {len(value)} items (at most {MAX_ITEMS})")
        out[kind] = [
            evidence_item(
                v,
                f"{_WHERE}: {kind}[{n}]",
                max_text=MAX_TEXT_CHARS,
                max_evidence=MAX_EVIDENCE_CHARS,
            )
            for n, v in enumerate(value)
        ]
    return out


def ground(answer: dict[str, Any], material: str) -> LlmDigest:
    """The items of a validated answer that the material supports, and the others."""
    text = normalise(material)
    result = LlmDigest({kind: [] for kind in KINDS})
    for kind in KINDS:
        for item in answer[kind]:
            why = why_ungrounded(item["text"], item["evidence"], text)
            if why is None:
                result.items[kind].append(item["text"])
            else:
                result.dropped.append({"kind": kind, "text": item["text"], "why": why})
    return result


def llm_extract(store: Store, chat: ChatProvider, material: str) -> LlmDigest:
    """Decisions, conclusions, open items and lessons by the model, grounded, each once.
    Raises ProviderError when the model fails, answers out of shape, or invents all."""
    merged = LlmDigest({kind: [] for kind in KINDS})
    seen: set[str] = set()
    for part in parts(material):
        answer = cached_answer(
            store,
            chat,
            task="digest",
            version=DIGEST_PROMPT_VERSION,
            system=DIGEST_SYSTEM,
            user=f"Material:\n\n{part}",
            validate=validate,
        )
        found = ground(answer, part)
        merged.dropped += found.dropped
        for kind in KINDS:
            for text in found.items[kind]:
                key = re.sub(r"\W+", "", text).casefold()
                if key and key not in seen:
                    seen.add(key)
                    merged.items[kind].append(text)
    if merged.dropped and not any(merged.items.values()):
        raise ProviderError(
            f"LLM {chat.identity}: none of its {len(merged.dropped)} digest item(s) is "
            f"grounded in the input ({merged.dropped[0]['why']})"
        )
    return merged

"""The LLM extractor of `digest`: a fixed, versioned prompt; the JSON answer validated
strictly; every item grounded in the input; the answer cached like every model output
(lore.index.llm_cache: task "digest", input hash, model, prompt version).

The answer has exactly the four lists (`decisions`, `conclusions`, `open_items`,
`lessons`), each of at most MAX_ITEMS items `{"text": ..., "evidence": ...}`; any other
shape, a text over MAX_TEXT_CHARS or an evidence over MAX_EVIDENCE_CHARS fails the whole
answer (ProviderError), and `digest` falls back to the heuristic extractor.

Grounding, item by item (`ground`): an item is kept only when

1. its `evidence` is a quote of the material: compared after NFKC, case folding and
   collapsing white space, with quote marks around it ignored and "…" / "..." allowed
   between quoted parts (found in order); at least MIN_EVIDENCE long (a CJK character
   counts 1, a Latin word 2); and
2. its `text` is about the material: every number or id in it (a token holding a digit)
   occurs in the material, and at least a third of its words (Latin words, pairs of CJK
   characters) do.

Other items are dropped and reported with the reason. An answer that had items and kept
none is a failure too: a model that only invents is not used.

Long material is cut at line ends into parts of at most MAX_PART_CHARS, one call (and one
cache entry) per part; items are merged in order, each once.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

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
MIN_EVIDENCE = 4
MIN_WORD_SHARE = 1 / 3

_WS = re.compile(r"\s+")
_QUOTES = "\"'`“”‘’「」『』«»《》 "
_ELLIPSIS = re.compile(r"…+|\.{3,}")
_NUMBERED = re.compile(r"[a-z0-9]*\d[a-z0-9]*(?:[.\-:/][a-z0-9]*\d[a-z0-9]*)*")
_LATIN = re.compile(r"[a-z][a-z0-9]+")
_ALNUM = re.compile(r"[^\W_]+")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WHERE = "LLM digest answer"


@dataclass
class LlmDigest:
    items: dict[str, list[str]]
    dropped: list[dict[str, str]] = field(default_factory=list)  # kind, text, why


def normalise(text: str) -> str:
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


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


def _item(value: Any, where: str) -> dict[str, str]:
    if not isinstance(value, dict):
        raise ProviderError(f"{where}: expected an object with text and evidence")
    unknown = sorted(set(value) - {"text", "evidence"})
    if unknown:
        raise ProviderError(f"{where}: unexpected key {unknown[0]!r}")
    out: dict[str, str] = {}
    for key, limit in (("text", MAX_TEXT_CHARS), ("evidence", MAX_EVIDENCE_CHARS)):
        raw = value.get(key)
        if not isinstance(raw, str) or not raw.strip():
            raise ProviderError(f"{where}.{key}: expected a non-empty string")
        text = _WS.sub(" ", raw).strip()
        if len(text) > limit:
            raise ProviderError(f"{where}.{key}: {len(text)} characters (at most {limit})")
        out[key] = text
    return out


def validate(answer: dict[str, Any]) -> dict[str, Any]:
    """The answer in its one accepted shape, or ProviderError naming what is wrong."""
    unknown = sorted(set(answer) - set(KINDS))
    if unknown:
        raise ProviderError(
            f"{_WHERE}: unexpected key {unknown[0]!r} (expected {', '.join(KINDS)})"
        )
    out: dict[str, Any] = {}
    for kind in KINDS:
        value = answer.get(kind, [])
        if not isinstance(value, list):
            raise ProviderError(f"{_WHERE}: {kind} is not a list")
        if len(value) > MAX_ITEMS:
            raise ProviderError(f"{_WHERE}: {kind} has {len(value)} items (at most {MAX_ITEMS})")
        out[kind] = [_item(v, f"{_WHERE}: {kind}[{n}]") for n, v in enumerate(value)]
    return out


def _units(text: str) -> int:
    cjk = sum(len(r) for r in _CJK_RUN.findall(text))
    return cjk + 2 * len(_ALNUM.findall(_CJK_RUN.sub(" ", text)))


def _has_token(token: str, material: str) -> bool:
    return re.search(rf"(?<![a-z0-9]){re.escape(token)}(?![a-z0-9])", material) is not None


def quoted(evidence: str, material: str) -> bool:
    """Is `evidence` (both normalised) a quote of `material`, "…" standing for a gap?"""
    pieces = [p.strip(_QUOTES) for p in _ELLIPSIS.split(evidence)]
    pieces = [p for p in pieces if p]
    if not pieces or sum(_units(p) for p in pieces) < MIN_EVIDENCE:
        return False
    at = 0
    for piece in pieces:
        found = material.find(piece, at)
        if found < 0:
            return False
        at = found + len(piece)
    return True


def _words(text: str) -> list[str]:
    words = _LATIN.findall(text)
    for run in _CJK_RUN.findall(text):
        words += [run] if len(run) == 1 else [run[i : i + 2] for i in range(len(run) - 1)]
    return words


def why_ungrounded(text: str, evidence: str, material: str) -> str | None:
    """None when the item is grounded in the (normalised) material, else the reason."""
    if not quoted(normalise(evidence), material):
        return "its evidence is not a quote of the input"
    norm = normalise(text)
    missing = [n for n in _NUMBERED.findall(norm) if not _has_token(n, material)]
    if missing:
        return f"{missing[0]!r} is not in the input"
    words = _words(norm)
    found = sum(1 for w in words if (_has_token(w, material) if w.isascii() else w in material))
    if words and found < MIN_WORD_SHARE * len(words):
        return "most of its words are not in the input"
    return None


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

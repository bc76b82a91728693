"""Note fields by the LLM: a summary, key claims and a category for one note, each from a
fixed, versioned prompt, the JSON answer validated strictly, every statement grounded in
the note (lore.index.grounding), every answer cached (lore.index.llm_cache).

A note that fits the request budget (`llm_context_tokens`, less the prompt and room for
the answer) is asked once (task `note`): `{"summary", "claims", "category"}`. A longer
note is cut at its headings, paragraphs and sentences into parts that fit; its first
HEAD_PARTS parts and its last part are summarised one call each (task `note_part`:
`{"summary", "claims"}`), then one synthesis call (task `note_synthesis`) turns their
grounded summaries into the note's summary and category. Claims of a long note are the
parts' grounded claims, taken in turn from each part (head first), each once, up to K: a
choice made by code, the same every time.

What is kept: a summary (at most N characters; one up to 2N is cut at a sentence end, a
longer one fails the answer) whose numbers, ids and most words occur in the note; claims
whose evidence quotes the note; a category that is one of `[lore] categories` (case and
width aside). Everything else is dropped and counted (`Derived.dropped`). An answer out of
shape raises BadAnswer; a failed request raises ProviderError; neither is cached.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..derive.passages import estimate_tokens, split_passages
from ..errors import ConfigError
from .grounding import BadAnswer, evidence_item, normalise, one_line, unsupported, why_ungrounded
from .llm_cache import cached_answer, is_cached

if TYPE_CHECKING:
    from ..providers.base import ChatProvider
    from ..providers.settings import ProviderSettings
    from ..store.base import Store
    from ..store.note_llm_rows import NoteSource

PROMPT_VERSION = "lore-note-v1"
HEAD_PARTS = 2
MAX_CLAIM_CHARS = 300
MAX_EVIDENCE_CHARS = 200
MIN_TEXT_TOKENS = 256  # a request budget that leaves less room for the note is refused
_SENTENCE_END = re.compile(r"[。！？!?；;]|[.](?=\s|$)")
_KEY = re.compile(r"\W+")


@dataclass(frozen=True)
class FieldSettings:
    summary_chars: int = 300  # N
    claims: int = 5  # K
    categories: tuple[str, ...] = ()
    context_tokens: int = 4096

    @classmethod
    def of(cls, settings: ProviderSettings) -> FieldSettings:
        return cls(
            settings.llm_summary_chars,
            settings.llm_claims,
            settings.categories,
            settings.llm_context_tokens,
        )

    @property
    def version(self) -> str:
        """The prompt version and every setting the prompts are built from: a change of
        any of them asks again (the model answers are cached under their own input)."""
        names = hashlib.sha256("\x00".join(self.categories).encode()).hexdigest()[:12]
        return (
            f"{PROMPT_VERSION}:n{self.summary_chars}:k{self.claims}:t{self.context_tokens}:c{names}"
        )

    def text_budget(self) -> int:
        """Tokens of note text one request may carry: the budget less the longest prompt
        and room for the longest answer (estimated as lore.derive.passages does).
        ConfigError when that leaves less than MIN_TEXT_TOKENS."""
        answer = int(0.8 * (self.summary_chars + self.claims * MAX_CLAIM_CHARS)) + 64
        prompt = max(estimate_tokens(p) for p in prompts(self).values()) + 64
        left = self.context_tokens - answer - prompt
        if left < MIN_TEXT_TOKENS:
            raise ConfigError(
                f"llm_context_tokens {self.context_tokens} leaves {max(left, 0)} tokens for"
                f" the note (llm_summary_chars {self.summary_chars}, llm_claims"
                f" {self.claims}); at least {MIN_TEXT_TOKENS} are needed",
                hint="raise llm_context_tokens (LORE_LLM_CONTEXT_TOKENS) or ask for less",
            )
        return left


def _category_line(fs: FieldSettings) -> str:
    if not fs.categories:
        return "category: always null (no categories are configured).\n"
    names = "; ".join(fs.categories)
    return f"category: exactly one of these, as written: {names}; null when none fits.\n"


def prompts(fs: FieldSettings) -> dict[str, str]:
    """The three system prompts, built from N, K and the categories only."""
    n, k = fs.summary_chars, fs.claims
    keep = (
        "in the language of the note, keeping names, numbers, versions, ids and dates"
        " exactly as written"
    )
    claim = (
        f'claims: at most {k} key claims of the text, most important first, each {{"text":'
        ' "...", "evidence": "..."}: text is one self-contained statement of fact, decision'
        f" or conclusion of at most 200 characters, {keep}; evidence is a short quote, at"
        " most 100 characters, copied character for character from the text, that"
        " supports it. An empty list when the text states nothing of the kind.\n"
    )
    never = "Never add a fact that is not in the text."
    return {
        "note": (
            "You summarise one note of a personal knowledge base. Answer with JSON only, no"
            ' prose, in exactly this shape: {"summary": "...", "claims": [...], "category":'
            ' "..." or null}.\n'
            f"summary: what the note is about and what it concludes, at most {n} characters,"
            f" {keep}.\n{claim}{_category_line(fs)}{never}"
        ),
        "note_part": (
            "You summarise one part of a long note of a personal knowledge base. Answer with"
            ' JSON only, no prose, in exactly this shape: {"summary": "...", "claims":'
            " [...]}.\n"
            f"summary: what this part says, at most {n} characters, {keep}.\n{claim}{never}"
        ),
        "note_synthesis": (
            "You are given the summaries of the head and the tail parts of one long note of"
            " a personal knowledge base. Answer with JSON only, no prose, in exactly this"
            ' shape: {"summary": "...", "category": "..." or null}.\n'
            f"summary: what the whole note is about and what it concludes, at most {n}"
            f" characters, {keep}, from the part summaries only.\n"
            f"{_category_line(fs)}{never}"
        ),
    }


# -- the parts of a long note ------------------------------------------------------------


def note_parts(body: str, headings: list[tuple[int, str, int, int]], budget: int) -> list[str]:
    """The body cut into parts of at most `budget` tokens (estimated): passages split at
    headings, paragraphs and sentences (lore.derive.passages), packed in order."""
    text = body.strip()
    if not text:
        return []
    if estimate_tokens(body) <= budget:
        return [text]
    parts: list[tuple[int, int]] = []
    for start, end, _heading in split_passages(body, headings, budget):
        if parts and estimate_tokens(body[parts[-1][0] : end]) <= budget:
            parts[-1] = (parts[-1][0], end)
        else:
            parts.append((start, end))
    return [body[s:e].strip() for s, e in parts if body[s:e].strip()]


def chosen_parts(parts: list[str]) -> list[tuple[int, str]]:
    """(1-based number, text) of the parts summarised: the head parts and the last one."""
    numbered = list(enumerate(parts, 1))
    if len(parts) <= HEAD_PARTS + 1:
        return numbered
    return numbered[:HEAD_PARTS] + numbered[-1:]


# -- validation --------------------------------------------------------------------------


def _fit_summary(value: Any, n: int, where: str) -> str:
    if value is None:
        return ""
    if not isinstance(value, str):
        raise BadAnswer(f"{where}.summary: expected a string")
    text = one_line(value)
    if len(text) <= n:
        return text
    if len(text) > 2 * n:
        raise BadAnswer(f"{where}.summary: {len(text)} characters (at most {n})")
    ends = [m.end() for m in _SENTENCE_END.finditer(text, 0, n + 1) if m.end() <= n]
    cut = ends[-1] if ends and ends[-1] >= n // 2 else n
    return text[:cut].rstrip()


def validator(task: str, fs: FieldSettings) -> Any:
    """The strict check of one task's answer: its keys exactly, each value in bounds."""
    keys = {
        "note": {"summary", "claims", "category"},
        "note_part": {"summary", "claims"},
        "note_synthesis": {"summary", "category"},
    }[task]
    where = f"LLM {task} answer"

    def validate(answer: dict[str, Any]) -> dict[str, Any]:
        unknown = sorted(set(answer) - keys)
        if unknown:
            raise BadAnswer(f"{where}: unexpected key {unknown[0]!r} (expected {sorted(keys)})")
        out: dict[str, Any] = {
            "summary": _fit_summary(answer.get("summary"), fs.summary_chars, where)
        }
        if "claims" in keys:
            claims = answer.get("claims", [])
            if not isinstance(claims, list):
                raise BadAnswer(f"{where}: claims is not a list")
            out["claims"] = [
                evidence_item(
                    c,
                    f"{where}: claims[{i}]",
                    max_text=MAX_CLAIM_CHARS,
                    max_evidence=MAX_EVIDENCE_CHARS,
                )
                for i, c in enumerate(claims[: fs.claims])
            ]
        if "category" in keys:
            category = answer.get("category")
            if category is not None and not isinstance(category, str):
                raise BadAnswer(f"{where}: category must be a string or null")
            out["category"] = one_line(category) if category else None
        return out

    return validate


# -- one note ----------------------------------------------------------------------------


@dataclass
class Derived:
    """What the model gave one note, grounded; `dropped` is what was left out and why."""

    summary: str | None = None
    claims: list[dict[str, str]] = field(default_factory=list)
    category: str | None = None
    dropped: list[dict[str, str]] = field(default_factory=list)  # what, text, why
    calls: int = 0  # answers used (cached or not)

    @property
    def empty(self) -> bool:
        return not (self.summary or self.claims or self.category)


@dataclass(frozen=True)
class Ask:
    task: str
    system: str
    user: str
    material: str  # what its statements are grounded in
    part: int = 0  # the part of a long note it asks about (1-based); 0: the whole note


def _title_line(note: NoteSource) -> str:
    return f"Title: {one_line(note.title)}"


def asks(note: NoteSource, fs: FieldSettings) -> tuple[list[Ask], int]:
    """The questions known before any answer (the whole note, or its chosen parts) and
    how many parts the note has (1: asked whole; more: a synthesis call follows)."""
    system = prompts(fs)
    title = _title_line(note)
    parts = note_parts(note.body, note.headings, fs.text_budget())
    if len(parts) <= 1:
        whole = parts[0] if parts else ""
        return [Ask("note", system["note"], f"{title}\n\n{whole}", f"{note.title}\n{whole}")], 1
    return [
        Ask(
            "note_part",
            system["note_part"],
            f"{title}\nPart {number} of {len(parts)}\n\n{text}",
            f"{note.title}\n{text}",
            number,
        )
        for number, text in chosen_parts(parts)
    ], len(parts)


def _synthesis(
    note: NoteSource, fs: FieldSettings, summaries: list[tuple[int, str]], total: int
) -> Ask:
    lines = [_title_line(note), ""]
    for number, text in summaries:
        where = "head" if number <= HEAD_PARTS else "tail"
        lines.append(f"Part {number} of {total} ({where}): {text}")
    whole = f"{note.title}\n{note.body}"
    return Ask("note_synthesis", prompts(fs)["note_synthesis"], "\n".join(lines), whole)


def _ask(store: Store, chat: ChatProvider, ask: Ask, fs: FieldSettings) -> dict[str, Any]:
    return cached_answer(
        store,
        chat,
        task=ask.task,
        version=PROMPT_VERSION,
        system=ask.system,
        user=ask.user,
        validate=validator(ask.task, fs),
    )


def _ground_summary(text: str, material: str, out: Derived) -> str | None:
    if not text:
        return None
    why = unsupported(text, normalise(material))
    if why is None:
        return text
    out.dropped.append({"what": "summary", "text": text, "why": why})
    return None


def _ground_claims(
    claims: list[dict[str, str]], material: str, out: Derived
) -> list[dict[str, str]]:
    norm = normalise(material)
    kept = []
    for claim in claims:
        why = why_ungrounded(claim["text"], claim["evidence"], norm)
        if why is None:
            kept.append(claim)
        else:
            out.dropped.append({"what": "claim", "text": claim["text"], "why": why})
    return kept


def _category(value: str | None, fs: FieldSettings, out: Derived) -> str | None:
    if not value:
        return None
    known = {normalise(c): c for c in fs.categories}
    found = known.get(normalise(value))
    if found is None:
        out.dropped.append(
            {"what": "category", "text": value, "why": "not one of the configured categories"}
        )
    return found


def _merge_claims(per_part: list[list[dict[str, str]]], limit: int) -> list[dict[str, str]]:
    """Claims taken in turn from each part, head first, each once, up to `limit`."""
    out: list[dict[str, str]] = []
    seen: set[str] = set()
    for rank in range(max((len(p) for p in per_part), default=0)):
        for claims in per_part:
            if rank < len(claims) and len(out) < limit:
                key = _KEY.sub("", claims[rank]["text"]).casefold()
                if key and key not in seen:
                    seen.add(key)
                    out.append(claims[rank])
    return out


def derive(store: Store, chat: ChatProvider, note: NoteSource, fs: FieldSettings) -> Derived:
    """The note's fields by the model (cached answers first). Raises BadAnswer, a
    ProviderError, or lore.index.llm_cache.BudgetSpent from the chat provider; answers
    received before that stay cached."""
    out = Derived()
    questions, total = asks(note, fs)
    if total == 1:
        answer = _ask(store, chat, questions[0], fs)
        out.calls = 1
        out.summary = _ground_summary(answer["summary"], questions[0].material, out)
        out.claims = _ground_claims(answer["claims"], questions[0].material, out)
        out.category = _category(answer["category"], fs, out)
        return out
    summaries: list[tuple[int, str]] = []
    per_part: list[list[dict[str, str]]] = []
    for ask in questions:
        answer = _ask(store, chat, ask, fs)
        out.calls += 1
        kept = _ground_summary(answer["summary"], ask.material, out)
        if kept:
            summaries.append((ask.part, kept))
        per_part.append(_ground_claims(answer["claims"], ask.material, out))
    out.claims = _merge_claims(per_part, fs.claims)
    if summaries:
        ask = _synthesis(note, fs, summaries, total)
        answer = _ask(store, chat, ask, fs)
        out.calls += 1
        out.summary = _ground_summary(answer["summary"], ask.material, out)
        out.category = _category(answer["category"], fs, out)
    return out


class _WouldCall(Exception):  # noqa: N818 - a signal, not an error
    pass


class _Probe:
    """A chat provider that answers nothing: reaching it means a call would be made."""

    name = "probe"

    def __init__(self, identity: str) -> None:
        self.identity = identity

    def complete(self, system: str, user: str) -> str:
        raise _WouldCall


def calls_needed(store: Store, model: str, note: NoteSource, fs: FieldSettings) -> int:
    """The model calls making this note's fields would take now: cached answers are free;
    a long note's synthesis is known to be cached only once its parts are."""
    questions, total = asks(note, fs)
    missing = sum(
        1
        for q in questions
        if not is_cached(
            store, model, task=q.task, version=PROMPT_VERSION, system=q.system, user=q.user
        )
    )
    if missing:
        return missing + (1 if total > 1 else 0)
    try:
        derive(store, _Probe(model), note, fs)
    except _WouldCall:
        return 1
    return 0

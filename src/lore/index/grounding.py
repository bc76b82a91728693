"""What a model's statement must satisfy to be kept: it is grounded in the text it was
made from. Shared by every LLM path that keeps what a model says (`digest`, note fields).

A statement `{"text": ..., "evidence": ...}` is grounded (`why_ungrounded` is None) when

1. its `evidence` is a quote of the material: compared after NFKC, case folding and
   collapsing white space, with quote marks around it ignored and "…" / "..." allowed
   between quoted parts (found in order); at least MIN_EVIDENCE long (a CJK character
   counts 1, a Latin word 2); and
2. its `text` is about the material (`unsupported` is None): every number or id in it (a
   token holding a digit) occurs in the material, and at least a third of its words
   (Latin words, pairs of CJK characters) do.

A text without evidence (a summary) is held to rule 2 alone.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from ..providers.base import ProviderError

MIN_EVIDENCE = 4
MIN_WORD_SHARE = 1 / 3

_WS = re.compile(r"\s+")
_QUOTES = "\"'`“”‘’「」『』«»《》 "
_ELLIPSIS = re.compile(r"…+|\.{3,}")
_NUMBERED = re.compile(r"[a-z0-9]*\d[a-z0-9]*(?:[.\-:/][a-z0-9]*\d[a-z0-9]*)*")
_LATIN = re.compile(r"[a-z][a-z0-9]+")
_ALNUM = re.compile(r"[^\W_]+")
_CJK_RUN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")


class BadAnswer(ProviderError):
    """The model answered, but not in the one accepted shape (prose, a wrong key, a value
    out of bounds). Asking again with the same input gets the same answer: callers record
    it rather than retry it every sync."""


def normalise(text: str) -> str:
    return _WS.sub(" ", unicodedata.normalize("NFKC", text).casefold()).strip()


def one_line(text: str) -> str:
    return _WS.sub(" ", text).strip()


def evidence_item(value: Any, where: str, *, max_text: int, max_evidence: int) -> dict[str, str]:
    """`{"text", "evidence"}` with both non-empty and within bounds, or BadAnswer."""
    if not isinstance(value, dict):
        raise BadAnswer(f"{where}: expected an object with text and evidence")
    unknown = sorted(set(value) - {"text", "evidence"})
    if unknown:
        raise BadAnswer(f"{where}: unexpected key {unknown[0]!r}")
    out: dict[str, str] = {}
    for key, limit in (("text", max_text), ("evidence", max_evidence)):
        raw = value.get(key)
        if not isinstance(raw, str) or not raw.strip():
            raise BadAnswer(f"{where}.{key}: expected a non-empty string")
        text = one_line(raw)
        if len(text) > limit:
            raise BadAnswer(f"{where}.{key}: {len(text)} characters (at most {limit})")
        out[key] = text
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


def unsupported(text: str, material: str) -> str | None:
    """None when `text` is about the (normalised) material, else the reason (rule 2)."""
    norm = normalise(text)
    missing = [n for n in _NUMBERED.findall(norm) if not _has_token(n, material)]
    if missing:
        return f"{missing[0]!r} is not in the input"
    words = _words(norm)
    found = sum(1 for w in words if (_has_token(w, material) if w.isascii() else w in material))
    if words and found < MIN_WORD_SHARE * len(words):
        return "most of its words are not in the input"
    return None


def why_ungrounded(text: str, evidence: str, material: str) -> str | None:
    """None when the item is grounded in the (normalised) material, else the reason."""
    if not quoted(normalise(evidence), material):
        return "its evidence is not a quote of the input"
    return unsupported(text, material)

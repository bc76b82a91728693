"""Heuristic extraction of what is worth keeping from a day's raw material: decisions,
conclusions, open items and lessons (Chinese and English cue words). Pure and deterministic.

Also used by `snapshot` to find open items and next steps in hand-written daily notes.
"""

from __future__ import annotations

import re

KINDS = ("decisions", "conclusions", "open_items", "lessons")
LABELS = {
    "decisions": "决策 Decisions",
    "conclusions": "结论 Conclusions",
    "open_items": "待办 Open items",
    "lessons": "教训 Lessons",
}

_CUES = {
    "decisions": re.compile(
        r"决定|决策|拍板|定了|定下|敲定|选定|就用|改用|采用|同意了|批准|"
        r"\b(?:we |i )?(?:decided|decide to|agreed|go(?:ing)? with|chose|approved)\b",
        re.IGNORECASE,
    ),
    "open_items": re.compile(
        r"TODO|待办|待确认|待定|下一步|后续|跟进|明天|下周|还没|尚未|未解决|需要确认|要确认|"
        r"\b(?:open question|follow[ -]up|next step|action item|to ?do|need to|needs to|"
        r"pending|tomorrow|next week)\b",
        re.IGNORECASE,
    ),
    "lessons": re.compile(
        r"教训|踩坑|踩了.{0,4}坑|经验是|以后要|下次要|下次记得|记住|引以为戒|"
        r"\b(?:lesson|learned|takeaway|never again|note to self|in hindsight)\b",
        re.IGNORECASE,
    ),
    "conclusions": re.compile(
        r"结论|总结|所以|因此|发现|确认了|原来|证明|结果是|根因|原因是|"
        r"\b(?:conclusion|turns out|root cause|confirmed|we found|therefore|concluded)\b",
        re.IGNORECASE,
    ),
}
_ORDER = ("decisions", "open_items", "lessons", "conclusions")
_SPEAKER = re.compile(r"^\s*(?:\*\*)?([\w .\-@]{1,24}?)(?:\*\*)?\s*[:：]\s+(?=\S)")
_SENTENCE = re.compile(r"(?<=[。！？!?；;])\s*|(?<=[.])\s+(?=[A-Z\u4e00-\u9fff])")
_FILLER = re.compile(
    r"^(?:好的?|嗯+|ok(?:ay)?|thanks?|thank you|谢谢|收到|明白|是的|对|yes|no|sure)[。.!！~]*$",
    re.IGNORECASE,
)
_BULLET = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?")
MIN_CHARS = 6
MAX_ITEM_CHARS = 300


def strip_speaker(line: str) -> str:
    match = _SPEAKER.match(line)
    return line[match.end() :] if match else line


def sentences(text: str) -> list[str]:
    out: list[str] = []
    for line in text.split("\n"):
        line = _BULLET.sub("", strip_speaker(line)).strip()
        if not line or line.startswith(("#", "```", "---")):
            continue
        for part in _SENTENCE.split(line):
            part = part.strip()
            if part:
                out.append(part)
    return out


def worth_keeping(sentence: str) -> bool:
    """The value-density filter: long enough to mean something, not an acknowledgement."""
    if _FILLER.match(sentence):
        return False
    cjk = len(re.findall(r"[\u3400-\u9fff]", sentence))
    words = len(re.findall(r"[A-Za-z0-9]+", sentence))
    return cjk + 2 * words >= MIN_CHARS


def classify(sentence: str) -> str | None:
    for kind in _ORDER:
        if _CUES[kind].search(sentence):
            return kind
    return None


def extract(text: str) -> dict[str, list[str]]:
    """kind → items, in order of appearance, each once."""
    found: dict[str, list[str]] = {kind: [] for kind in KINDS}
    seen: set[str] = set()
    for sentence in sentences(text):
        if not worth_keeping(sentence):
            continue
        kind = classify(sentence)
        if kind is None:
            continue
        item = sentence if len(sentence) <= MAX_ITEM_CHARS else sentence[: MAX_ITEM_CHARS - 1] + "…"
        key = re.sub(r"\W+", "", item).casefold()
        if key and key not in seen:
            seen.add(key)
            found[kind].append(item)
    return found

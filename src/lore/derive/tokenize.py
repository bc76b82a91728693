"""The one token stream every backend indexes and every query is matched against.

Design, in short:
- Text is split into runs of letters and digits. Inside a run, every CJK character (Han,
  kana) becomes a token of its own; the rest (Latin, digits, Hangul, ...) becomes words.
- Words are NFKC-normalised, case-folded and stripped of diacritics; purely alphabetic
  English words are stemmed (snowball), so "indexing" finds "indexed". Mixed words such as
  "v1" or "h2o" are kept as they are, so "v1" never matches "v2".
- Because CJK is indexed one character per token, a multi-character word is searched as a
  *phrase* of its characters: "去重" matches the adjacent 去 重 inside 客户去重规则, whatever
  a dictionary thinks the word boundaries are. Names no dictionary has are found the same way.
- Names written with symbols are tokens of their own: "C++" → cpp, "C#" → csharp (a word
  followed by `++` or `#`), ".NET" → dotnet and net (a word after a leading dot), so they
  never match every note that says "C" or "net".
- Chinese is folded to one script (lore.derive.fold): every CJK character token is its
  Simplified form (數據庫 → 数 据 库), and a run of Traditional text also yields the mainland
  spelling of its Taiwan / Hong Kong words (軟體 → 软件) as alternatives, after the text,
  each behind an ALT_SEPARATOR token.
- Command-line options are tokens of their own: "-t" → −t and t, "--force" → −−force and
  forc, "--dry-run" → −−dryrun, dry and run (one or two dashes after white space or any
  other non-word character, then ASCII letters and digits; case-folded like every word, so
  -t and -T are one term). The sign is U+2212, which no word of a text can hold, so an
  option never matches a word ("-board" is not "dashboard") and --explain shows it as
  written; its words still match the note that writes the option without dashes.
- Symbols people search for in command and regex notes are tokens too: a backslash escape
  ("\\1", "\\n", "\\d" → ⧵1, ⧵n, ⧵d: ESCAPE_SIGN and the character, so "\\1" is never the
  number 1) and a lone "&" (sed's whole match, a shell's background job: ＆); "R&D",
  "&amp;" and the shell's "&&" stay what they were (no token).

Offsets always point into the original text, so snippets are cut from what the user wrote.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterator
from collections.abc import Set as AbstractSet
from functools import lru_cache
from itertools import chain
from typing import NamedTuple

from .fold import ALT_SEPARATOR, alternatives, char_table, fold_char

# Re-exported: the query side segments Chinese through this module.
from .segment import segmenter as segmenter

# Han (incl. extensions and compatibility ideographs), Bopomofo, Hiragana, Katakana (incl.
# half-width): word characters only. CJK symbols and punctuation in those blocks (radicals,
# ・, voiced-sound marks, unassigned code points) are left out, so a plain `[...]+` run of
# this class is a run of CJK word characters: no per-character lookahead on the hot path.
_CJK_CLASS = (
    "\u3005\u3007\u3021-\u3029\u3038-\u303b\u3041-\u3096\u309d-\u309f\u30a1-\u30fa"
    "\u30fc-\u30ff\u3105-\u312f\u31a0-\u31bf\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufa6d\ufa70-\ufad9\uff66-\uff9f\U00020000-\U0002a6df\U0002a700-\U0002b738"
    "\U0002b740-\U0002b81d\U0002b820-\U0002cea1\U0002ceb0-\U0002ebe0"
    "\U0002f800-\U0002fa1d\U00030000-\U0003134a"
)
# sre's charset optimiser walks every BMP code point of each range of a class, about a
# millisecond per occurrence of this one in a pattern, in every process: one pattern serves
# single characters, runs and splits (`_CJK_RUN`), and `_run_or_word()` names it five times.
_CJK_RUN = re.compile(f"([{_CJK_CLASS}]+)")  # captured: `re.split` keeps the runs
_RUN = re.compile(r"[^\W_]+")
_WORD = f"[^\\W_{_CJK_CLASS}]"  # a word character that is not CJK
OPTION_SIGN = "\u2212"  # the dash of an option's token (see above)
ESCAPE_SIGN = "\u29f5"  # the backslash of an escape's token: ⧵1 (no text's word holds it)
AMPERSAND = "\uff06"  # a lone & as a token: ＆ (FTS5's ascii tokenizer keeps it whole)


# A run of CJK characters, an escape, a lone &, an option (dashes after no word character,
# dash or dot), a name after a dot (".NET" after no word character or dot, not ".5"), or
# a run of other word characters with the symbol that is part of its name ("C++", "C#"
# before no word character). Every branch starts with its character (or class), so the
# engine tries one only where that character stands; the option and the dotted name are
# one branch, sharing their lookbehind, so the non-CJK word class is in the pattern four
# times, not five (see _CJK_RUN). The CJK run is the one named group: `match.lastgroup`
# says which kind of piece a match is, where matching the piece again cost every word.
def _branches(word: str) -> str:
    """The pattern's branches after the CJK run, with `word` as its word character class."""
    return (
        r"\\(?<!\\\\)[A-Za-z0-9](?![A-Za-z0-9])"  # an escape: \1, \n (not \section, not \\1)
        + r"|&(?<![\w&]&)(?![\w&])"  # a lone & (not R&D, &amp;, &&)
        + f"|[-.](?<!{word}[-.])"  # neither after a word character
        + r"(?:(?<=-)(?<![-_.]-)-?[A-Za-z0-9]+(?:-[A-Za-z0-9]+)*"  # an option: -t, --dry-run
        + f"|(?<=\\.)(?<!\\.\\.)(?!\\d){word}+)"  # a name after a dot: .NET, not .5
        + f"|{word}+(?:(?:\\+\\+|#)(?!{word}|[#+]))?"  # one pass: the suffix is optional
    )


@lru_cache(maxsize=1)
def _run_or_word() -> re.Pattern[str]:
    """The pattern for text with CJK characters, compiled when a text first holds one: the
    class costs about a millisecond per occurrence (see _CJK_RUN)."""
    return re.compile(f"(?P<cjk>[{_CJK_CLASS}]+)|" + _branches(_WORD))


# The same pattern for text without a CJK character: there every word character is a
# non-CJK one, so it matches what _run_or_word() matches, and a cold process that reads
# no CJK text (an English query, vault and snippets) never compiles the CJK class for it.
_NO_CJK_RUN_OR_WORD = re.compile(_branches(r"[^\W_]"))


def _pieces(text: str) -> re.Pattern[str]:
    """The run-or-word pattern for `text` (the cheap one when it holds no CJK character;
    an ASCII text is known to hold none without a scan)."""
    if text.isascii() or not _CJK_RUN.search(text):
        return _NO_CJK_RUN_OR_WORD
    return _run_or_word()


_SYMBOL_SUFFIXES = (("++", "pp"), ("#", "sharp"))
_ASCII_ALPHA = re.compile(r"[a-z]+")
_MAX_WORD = 64  # longer "words" are base64 blobs or hashes: cut, never dropped silently


class Token(NamedTuple):
    """A normalised term and the span [start, end) of the original text it came from (a
    NamedTuple: cheaper than a dataclass for a cold process to define and to make)."""

    term: str
    start: int
    end: int

    @property
    def is_cjk(self) -> bool:
        return len(self.term) == 1 and is_cjk_char(self.term)


def is_cjk_char(char: str) -> bool:
    return _CJK_RUN.match(char) is not None


def has_cjk(text: str) -> bool:
    return _CJK_RUN.search(text) is not None


def cjk_count(text: str) -> int:
    """How many CJK characters `text` holds."""
    return sum(map(len, _CJK_RUN.findall(text)))


def split_cjk(text: str) -> list[str]:
    """`text` cut before and after each CJK run, the runs kept: other, run, other, ..."""
    return _CJK_RUN.split(text)


@lru_cache(maxsize=1)
def _stemmer() -> object:
    import snowballstemmer  # deferred: a 100 ms import not every command needs

    return snowballstemmer.stemmer("english")


@lru_cache(maxsize=200_000)
def normalize_word(raw: str) -> tuple[str, ...]:
    """NFKC, case fold, strip diacritics, stem plain English words.

    Returns a tuple because normalisation may split one surface word into several
    (NFKC turns "½" into "1⁄2", whose slash is not a letter). Symbol names: see above.
    """
    if raw.startswith("&"):
        return (AMPERSAND,)
    if raw.startswith("\\"):
        return (ESCAPE_SIGN + raw[1:].casefold(),)
    if raw.startswith("."):
        rest = normalize_word(raw[1:])
        return (f"dot{rest[0]}", *rest) if rest else rest
    if raw.startswith("-"):
        name = raw.lstrip("-")
        option = OPTION_SIGN * (len(raw) - len(name)) + name.replace("-", "").casefold()
        return (option[:_MAX_WORD], *normalize_word(name)) if name else ()
    for suffix, spelled in _SYMBOL_SUFFIXES:
        if raw.endswith(suffix) and len(raw) > len(suffix):
            core = normalize_word(raw[: -len(suffix)])
            return (*core[:-1], core[-1] + spelled) if core else core
    folded = unicodedata.normalize("NFKC", raw).casefold()
    if not folded.isascii():
        decomposed = unicodedata.normalize("NFKD", folded)
        stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
        folded = unicodedata.normalize("NFC", stripped)
    out: list[str] = []
    for part in _RUN.findall(folded):
        part = part[:_MAX_WORD]
        if _ASCII_ALPHA.fullmatch(part) and len(part) > 3:
            part = _stemmer().stemWord(part)  # type: ignore[attr-defined]
        out.append(part)
    return tuple(out)


def iter_tokens(text: str) -> Iterator[Token]:
    """Yield the tokens of `text` in order, with offsets into `text` (no alternatives)."""
    for term, start, end in token_spans(text):
        yield Token(term, start, end)


def token_spans(text: str, *, with_alternatives: bool = False) -> list[tuple[str, int, int]]:
    """(term, start, end) for every token: `iter_tokens` as plain tuples, for hot paths
    (snippets scan every hit's text). `with_alternatives`: as the index holds them, after
    the text, each behind an ALT_SEPARATOR token, their spans those of the words they
    stand for (so a snippet highlights 軟體 for the query 软件)."""
    out: list[tuple[str, int, int]] = []
    append = out.append
    runs: list[tuple[int, str]] = []
    for match in _pieces(text).finditer(text):
        piece = match.group()
        start = match.start()
        if match.lastgroup:  # a CJK run
            for i, char in enumerate(piece):
                append((fold_char(char), start + i, start + i + 1))
            runs.append((start, piece))
        else:
            end = match.end()
            for term in normalize_word(piece):
                append((term, start, end))
    for alt in alternatives(text, runs) if with_alternatives else ():
        append((ALT_SEPARATOR, alt.start, alt.start))
        out.extend((c, a, b) for c, (a, b) in zip(alt.text, alt.spans, strict=True))
    return out


def word_runs(text: str) -> list[tuple[int, int, int, bool]]:
    """(start, end, number of terms, is a CJK run) of each piece of `text` that has terms,
    in order: a word, whose terms are one group, or a run of CJK characters, each of them
    a word of one term. What token_spans gives word by word, without making the terms or
    a tuple per CJK character: cutting a text into windows of whole words needs only where
    each word ends and how many terms it holds."""
    out: list[tuple[int, int, int, bool]] = []
    append = out.append
    for match in _pieces(text).finditer(text):
        start, end = match.span()
        if match.lastgroup:  # a CJK run
            append((start, end, end - start, True))
        elif count := len(normalize_word(match.group())):
            append((start, end, count, False))
    return out


def wanted_spans(
    text: str, wanted: AbstractSet[str], *, with_alternatives: bool = False
) -> list[tuple[int, str, int, int]]:
    """(position in the stream, term, start, end) of the tokens of `text` whose term is in
    `wanted`, in stream order: the same as

        [(i, *span) for i, span in enumerate(token_spans(text, with_alternatives=...))
         if span[0] in wanted]

    without building the others. A snippet looks for a query's few terms in a whole note,
    and most of a note is none of them: a CJK run is folded in one `translate` call and
    skipped when it holds no wanted character (its characters are one token each), each
    spelling of a word is normalised once per text, and the alternatives are made only
    when a wanted term could be one of their characters."""
    out: list[tuple[int, str, int, int]] = []
    append = out.append
    runs: list[tuple[int, str]] = []
    chars: dict[int, int] | None = None  # the fold table, fetched at the first CJK run
    # Per spelling of a word: its number of tokens, and which of them are wanted where.
    spelled: dict[str, tuple[int, tuple[tuple[int, str], ...]]] = {}
    position = 0
    for match in _pieces(text).finditer(text):
        piece = match.group()
        if not match.lastgroup:  # not a CJK run
            seen = spelled.get(piece)
            if seen is None:
                words = normalize_word(piece)
                seen = spelled[piece] = (
                    len(words),
                    tuple((i, term) for i, term in enumerate(words) if term in wanted),
                )
            count, held = seen
            if held:
                start, end = match.span()
                for i, term in held:
                    append((position + i, term, start, end))
            position += count
            continue
        start = match.start()
        runs.append((start, piece))
        # An NFKC-normalised run folds character by character as `translate` does it
        # (fold_char is NFKC, then the table; a character NFKC changes never stands in
        # normalised text): one call, and a run holding no wanted term is skipped.
        if unicodedata.is_normalized("NFKC", piece):
            if chars is None:
                chars = char_table()
            folded = piece.translate(chars)
            if not wanted.isdisjoint(folded):
                for i, term in enumerate(folded):
                    if term in wanted:
                        append((position + i, term, start + i, start + i + 1))
        else:
            for i, char in enumerate(piece):
                term = fold_char(char)
                if term in wanted:
                    append((position + i, term, start + i, start + i + 1))
        position += len(piece)
    # Alternatives hold CJK characters and their separators only: a query of other terms
    # cannot match in them.
    if with_alternatives and any(len(t) == 1 and not t.isascii() for t in wanted):
        for alt in alternatives(text, runs):
            if ALT_SEPARATOR in wanted:
                append((position, ALT_SEPARATOR, alt.start, alt.start))
            position += 1
            for i, (char, (a, b)) in enumerate(zip(alt.text, alt.spans, strict=True)):
                if char in wanted:
                    append((position + i, char, a, b))
            position += len(alt.text)
    return out


def cjk_runs(text: str) -> list[tuple[int, str]]:
    """The runs of CJK characters of `text`, as (offset, run)."""
    return [(m.start(), m.group()) for m in _CJK_RUN.finditer(text)]


def tokenize(text: str) -> list[Token]:
    return list(iter_tokens(text))


def terms(text: str, *, with_alternatives: bool = False) -> list[str]:
    """The normalised terms of `text`, in order; `with_alternatives`: what the full-text
    index stores (see token_spans).

    Same result as `[t for t, _s, _e in token_spans(text)]`, without building spans or
    visiting CJK characters one by one in Python: this is the indexing hot path. A text
    without CJK characters is all words and has no alternatives: its pieces are found in
    one `findall` and their terms chained in C, not a Python step per word.
    """
    pieces = _pieces(text)
    if pieces is _NO_CJK_RUN_OR_WORD:
        return list(chain.from_iterable(map(normalize_word, pieces.findall(text))))
    out: list[str] = []
    extend = out.extend
    runs: list[tuple[int, str]] = []
    for match in pieces.finditer(text):
        piece = match.group()
        if match.lastgroup:  # a CJK run
            extend(map(fold_char, piece))
            runs.append((match.start(), piece))
        else:
            extend(normalize_word(piece))
    for alt in alternatives(text, runs) if with_alternatives else ():
        out.append(ALT_SEPARATOR)
        extend(alt.text)
    return out


def index_text(text: str) -> str:
    """The token stream as one space-separated string: the form handed to FTS5 ('ascii'
    tokenizer, which splits on ASCII spaces and punctuation only; our terms contain
    neither) and, later, to any other backend. Alternatives included."""
    return " ".join(terms(text, with_alternatives=True))

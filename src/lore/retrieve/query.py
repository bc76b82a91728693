"""User query text → a safe full-text query plan. Any string is accepted; none can raise an
FTS syntax error, because every term is built from our own tokens (the store quotes them).

Terms:
- Latin words are single terms ("retention", "v1"); English stop words are dropped when
  something else is left.
- Pieces joined by punctuation without spaces ("JIRA-1234", "2026-09", "v1.2") become one
  exact phrase, and so does text in double quotes.
- A CJK run contributes its words (dictionary segmentation, search mode) as phrases of
  characters, so "去重" matches inside "客户去重规则", plus its single characters, so names
  no dictionary knows and colloquial phrasing still match. Filler ("我记得", "帮我找找",
  "来着") and function characters are dropped first.
- `-word` and `-"a phrase"` exclude: no hit holds them. `-word` is an exclusion when the
  word starts with a letter and has three characters or more, or two CJK ones (`python
  -django`, `-草稿`). Shorter ones (`-t`, `-T`, `-rf`, `-9`) and anything after two dashes
  (`--force`) are command-line options, searched as such (lore.derive.tokenize: -t → −t).
  A longer single-dash option is searched in quotes: `"-name"`. An excluded word is matched
  as a searched word is, by its stem: `-drafts` leaves out every note a search for "drafts"
  finds (draft, drafting); --explain says so ("drafts → draft"). Excluded words are no
  part of the query otherwise: not its tags (lore.retrieve.plan), not its names.
- Nothing is left out silently: the stop words and filler a plan leaves out are its
  `left_out`, which --explain lists, and which still count when a note's name holds them
  (lore.retrieve.names).

Every term scores every candidate. Terms too common to say which notes to look at (a
character most notes hold) are `score_only`: the store is asked for
the notes holding the rare terms, scored over all of them (lore.store.query.TextQuery).
The single characters of a dictionary word back the word up and score at 1/BACKUP_SHARE
of a term (QueryPlan.text_query).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from ..derive.fold import alternatives, fold, has_traditional, is_japanese, script
from ..derive.tokenize import (
    OPTION_SIGN,
    has_cjk,
    is_cjk_char,
    iter_tokens,
    segmenter,
    split_cjk,
)
from ..errors import QueryError
from ..store.query import TextQuery

if TYPE_CHECKING:
    from ..store.base import Store

MAX_TERMS = 48
MAX_QUERY_CHARS = 4000  # longer queries are refused, on every surface (API, CLI, MCP)
PLAN_CHARS = 2000  # the head of a query its terms are taken from
# A backup character (QueryPlan.backup_chars) scores 1/BACKUP_SHARE of a term. mode4 MRR@10 by
# share, bench.realvault's Chinese vault (all queries / details deep in long notes) and
# bench.retrieval's cmrc2018_trial (long questions in other words than the text):
# 1 (counted in full) 0.748 / 0.747, 0.981; 2: 0.768 / 0.855, 0.981; 4: 0.775 / 0.860,
# 0.979; 8: 0.778 / 0.868, 0.977; no weight at all: 0.779 / 0.904, but spoken-style
# questions lose (topic 0.520 → 0.506). Each share costs one more reading of the other
# terms' phrases (the FTS5 part of a Chinese query: x1.2-1.5 at 2, x1.8 at 3, x2.4 at 5).
BACKUP_SHARE = 2

# Spoken-style filler, longest first so "帮我找找" goes before "帮我".
_ZH_FILLER = sorted(
    """我记得 记得 好像 似乎 帮我找找 帮我找一下 帮我找 帮我查 帮我看看 帮我 找找 找一下 查一下
    搜一下 搜搜 看看 一下 请问 请 麻烦 那个 这个 那些 这些 来着 到底 究竟 是什么 什么 是啥 啥
    怎么样 怎么 怎样 如何 哪个 哪些 哪里 哪儿 哪一 为什么 为啥 有没有 是不是 之前 以前 上次
    说过 提到 提过 讲过 关于 有关 一些 一个 我们 你们 他们 我 你 吗 呢 吧 啊 呀 嘛 哦 么""".split(),
    key=len,
    reverse=True,
)
_ZH_FILLER_RE = re.compile("|".join(map(re.escape, _ZH_FILLER)))
# Function characters: kept inside phrases, never searched alone.
_ZH_STOP_CHARS = frozenset(
    "的了是在有和与及或也都就还又被把将对从而且即于为之其这那个们吗呢吧啊呀嘛么着过地得"
)
_EN_STOP = frozenset(
    """a an the of to in on at by for from with and or but not no is are was were be been being
    am do does did has have had i me my we our you your he she it its they them their this that
    these those what which who whom whose when where why how can could would should will shall
    may might must there here as if than then so such into about over under up down out just
    also any some all each both few more most other only own same very s t don""".split()
)
_CJK_PIECE = re.compile(r"[^\W\d_a-zA-Z]+")
_HIRAGANA = re.compile("[\u3041-\u3096\u309d-\u309f]+")
_KANA_WORD = re.compile("[\u3041-\u3096\u309d-\u309f]+|[\u30a1-\u30fa\u30fc-\u30ff\uff66-\uff9f]+")
_QUOTED = re.compile(r'"([^"]+)"|“([^”]+)”|「([^」]+)」')
_JOINERS = re.compile(r"^[\w]+(?:[-./:_#+][\w]+)+$")


def check_query(text: str, what: str = "search") -> str:
    """`text` if it is a query lore can take; QueryError (one line) when it is not a string
    or longer than MAX_QUERY_CHARS. Checked by the library, so every surface (the Python
    API, the CLI, MCP) has the same cap and no query can make a search run for long."""
    if not isinstance(text, str):
        raise QueryError(f"{what}: the query must be a string, not {type(text).__name__}")
    if len(text) > MAX_QUERY_CHARS:
        raise QueryError(
            f"{what}: the query is {len(text):,} characters; at most {MAX_QUERY_CHARS:,}",
            hint="search for its key words, or a sentence of it",
        )
    return text


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One OR-ed unit of the full-text query: a single term or an exact phrase."""

    tokens: tuple[str, ...]
    kind: str  # word | phrase | cjk_word | cjk_char
    # The query's own spelling where it differs from the tokens: folded (數據庫 for 数据库,
    # 軟體 for the alternative 软件), stemmed or cased ("Running" for "run"), as one phrase
    # ("jira-1234"). For --explain and the words a hit holds; two terms with the same
    # tokens are the same term.
    surface: str = field(default="", compare=False)

    @property
    def text(self) -> str:
        if all(len(t) == 1 and is_cjk_char(t) for t in self.tokens):
            return "".join(self.tokens)
        return " ".join(self.tokens)


class QueryPlan(NamedTuple):
    """A query's terms as searched (a NamedTuple: a search makes several, and the class
    costs a cold process less than a dataclass; QueryTerm stays one, its `surface` is no
    part of its equality)."""

    text: str
    terms: list[QueryTerm]  # every term that scores, in query order
    # Of `terms`: too common to bring candidates (lore.retrieve.search.prune), rarest first.
    score_only: tuple[QueryTerm, ...] = ()
    excluded: Sequence[QueryTerm] = ()  # -word: no hit holds these
    # Stop words and spoken filler of the query, not searched (what plan() left out).
    left_out: tuple[str, ...] = ()

    @property
    def generating(self) -> list[QueryTerm]:
        """The terms whose notes are the candidates."""
        return [t for t in self.terms if t not in self.score_only]

    @property
    def text_query(self) -> TextQuery:
        """The plan as the store's lexical query (each backend compiles it): every term
        but the backup characters (see backup_chars) counts BACKUP_SHARE times, so BM25, a
        sum over the query's phrases, counts a backup character at 1/BACKUP_SHARE of a
        term; the same notes match."""
        backup = self.backup_chars
        counts = tuple((t.tokens, BACKUP_SHARE) for t in self.terms if t not in backup)
        return TextQuery(
            tuple(t.tokens for t in self.generating),
            tuple(t.tokens for t in self.score_only),
            tuple(t.tokens for t in self.excluded),
            counts=counts if backup else (),
        )

    @property
    def backup_chars(self) -> frozenset[QueryTerm]:
        """The single characters of the query's dictionary words. They back a word up (a
        note that writes it apart, or in other words, still scores), but where the word
        matched they are the same evidence again: counted in full, a Chinese word weighed
        three times one Latin word, and long notes full of common characters outranked
        the note holding the query's rare name (a detail deep in a long note lost most).
        A character no word of the query holds counts in full."""
        in_words = {tok for t in self.terms if t.kind == "cjk_word" for tok in t.tokens}
        return frozenset(t for t in self.terms if t.kind == "cjk_char" and t.tokens[0] in in_words)

    @property
    def candidate_query(self) -> TextQuery:
        """The notes that are candidates at all (for counting them): generating terms."""
        return TextQuery(
            tuple(t.tokens for t in self.generating), (), tuple(t.tokens for t in self.excluded)
        )

    @property
    def evidence(self) -> QueryPlan:
        """The plan a snippet is cut and highlighted by: without the common single
        characters that only score (every one of them in a long note is a match, and
        says nothing about where the answer is)."""
        if not self.score_only:
            return self
        kept = [t for t in self.terms if not (t in self.score_only and t.kind == "cjk_char")]
        return QueryPlan(self.text, kept or self.terms, excluded=self.excluded)

    @property
    def words(self) -> list[QueryTerm]:
        """The query's words as a person counts them: its terms without the single CJK
        characters and longer CJK runs that only back up the dictionary words in them."""
        words = [t for t in self.terms if t.kind != "cjk_char"]
        runs = [w.text for w in words if w.kind == "cjk_word"]
        words = [
            w
            for w in words
            if w.kind != "cjk_word" or not any(r != w.text and r in w.text for r in runs)
        ]
        return words or list(self.terms)

    @property
    def empty(self) -> bool:
        return not self.terms

    @property
    def folded(self) -> list[str]:
        """How folding changed the query's words, for --explain: every other word ("軟體 →
        软件"), and the longest stretches only folded character by character ("數據庫設計 →
        数据库设计", not also "數據 → 数据")."""
        pairs = {(t.surface, t.text) for t in self.terms if t.surface and t.kind == "cjk_word"}
        plain = {p for p in pairs if fold(p[0]) == p[1]}
        shown = [
            p for p in pairs if p not in plain or not any(p[0] in q[0] and p != q for q in plain)
        ]
        order = [(t.surface, t.text) for t in self.terms]
        return [f"{a} → {b}" for a, b in sorted(shown, key=order.index)]


def _excludes(chunk: str) -> bool:
    """`-word`: an exclusion when the word starts with a letter and has three characters or
    more (two CJK ones). Shorter ones (`-t`, `-rf`), numbers (`-9`) and `--force` are
    command options people search for."""
    word = chunk[1:]
    return (
        chunk.startswith("-")
        and word[:1].isalpha()
        and (len(word) >= 3 or (len(word) == 2 and has_cjk(word)))
    )


def _as_written(term: QueryTerm, written: str) -> QueryTerm:
    """The term with the user's spelling, when its tokens (stems) differ from it."""
    spelled = " ".join(written.casefold().split())
    return term if spelled == term.text else QueryTerm(term.tokens, term.kind, spelled)


def shown_exclusions(query_plan: QueryPlan) -> list[str]:
    """The excluded words for --explain, each as matched: "drafts → draft" (every note a
    search for the word finds is left out, its other forms too)."""
    return [f"{t.surface} → {t.text}" if t.surface else t.text for t in query_plan.excluded]


def split_exclusions(text: str) -> tuple[str, str]:
    """(the query text without its exclusions, the exclusions as written: `-word`,
    `-"a phrase"`). The query's tags are picked from the first, by the heuristics or the
    LLM, so a word the user excluded never feeds the tag channel; the second is added back
    to whatever text the full-text plan is made from."""
    out: list[str] = []
    for match in reversed(list(_QUOTED.finditer(text))):  # from the end: offsets hold
        at = match.start()
        if at > 0 and text[at - 1] == "-" and (at == 1 or text[at - 2].isspace()):
            out.insert(0, text[at - 1 : match.end()])
            text = text[: at - 1] + " " + text[match.end() :]
    kept: list[str] = []
    for chunk in text.split():
        (out if _excludes(chunk) else kept).append(chunk)
    return " ".join(kept), " ".join(out)


def shown_query(store: Store, query_plan: QueryPlan) -> str:
    """The full-text query as the store runs it, for --explain."""
    return store.describe(query_plan.text_query)


def cjk_words(run: str) -> list[str]:
    """Words of a CJK run: dictionary words (search mode: long words and their parts), and
    runs of characters the dictionary left single, which are mostly names it does not know
    ("客户去重规则" → 客户, 规则 and 去重)."""
    seg = segmenter()
    words: list[str] = []
    singles = ""
    for piece in seg.cut(run):
        if len(piece) == 1 and piece not in _ZH_STOP_CHARS:
            singles += piece
            continue
        if len(singles) > 1:
            words.append(singles)
        singles = ""
        words.extend(w for w in seg.cut_for_search(piece) if len(w) > 1)
    if len(singles) > 1:
        words.append(singles)
    return words


def _cjk_terms(chunk: str, context_script: str, left_out: list[str]) -> list[QueryTerm]:
    """The terms of a piece of query text made of CJK runs. Folded first (lore.derive.fold),
    so the dictionary segments Simplified text whichever script the query is in; a
    Traditional run also brings the terms of its mainland alternatives; a Japanese run is
    cut into character pairs (the dictionary is Chinese: it glues particles to words). The
    filler and function characters it drops go to `left_out`."""
    out: list[QueryTerm] = []
    left_out.extend(_ZH_FILLER_RE.findall(fold(chunk)))
    folded = _ZH_FILLER_RE.sub(lambda m: " " * len(m.group()), fold(chunk))
    for match in _CJK_PIECE.finditer(folded):
        start, run = match.start(), "".join(c for c in match.group() if is_cjk_char(c))
        if not run:
            continue
        if len(run) != len(match.group()):  # other letters inside: no offsets to keep
            start, surface = -1, ""
        else:
            surface = chunk[start : start + len(run)]
        if is_japanese(run):
            out.extend(_japanese_terms(run, surface))
            continue
        left_out.extend(c for c in run if c in _ZH_STOP_CHARS)
        out.extend(_run_terms(run, surface))
        if surface:
            for alt in alternatives(surface, [(0, surface)], context_script):
                whole = alt.start == 0 and alt.end == len(surface)
                out.extend(_run_terms(alt.text, surface, alt.spans, whole=whole))
    return out


def _run_terms(
    run: str,
    surface: str,
    spans: tuple[tuple[int, int], ...] | None = None,
    *,
    whole: bool = True,
) -> list[QueryTerm]:
    """Dictionary words (and, when `whole`, the run itself up to 6 characters) as phrases,
    and the run's characters that are not function characters. `surface`: the query's own
    spelling, character for character, or through `spans` (an alternative's)."""

    def term(text: str, kind: str) -> QueryTerm:
        at = run.find(text)
        own = ""
        if surface and at >= 0:
            lo, hi = (spans[at][0], spans[at + len(text) - 1][1]) if spans else (at, at + len(text))
            own = surface[lo:hi]
        return QueryTerm(tuple(text), kind, own if own != text else "")

    out: list[QueryTerm] = []
    if len(run) > 1:
        out.extend(term(word, "cjk_word") for word in cjk_words(run))
        if whole and len(run) <= 6 and not _ZH_STOP_CHARS.intersection(run):
            out.append(term(run, "cjk_word"))
    out.extend(term(c, "cjk_char") for c in run if c not in _ZH_STOP_CHARS)
    return out


def _japanese_terms(run: str, surface: str) -> list[QueryTerm]:
    """A Japanese run: its katakana words and hiragana stretches as phrases, every pair of
    characters that is not all hiragana (東京, 京大, 大学, 学の, ...: no dictionary needed;
    pairs most notes hold only score), the run itself up to 6 characters, and its kanji
    one by one (single kana say nothing)."""
    out: list[QueryTerm] = []

    def add(start: int, end: int, kind: str) -> None:
        text = run[start:end]
        own = surface[start:end] if surface else ""
        out.append(QueryTerm(tuple(text), kind, own if own != text else ""))

    if 1 < len(run) <= 6:
        add(0, len(run), "cjk_word")
    for piece in _KANA_WORD.finditer(run):
        if len(piece.group()) > 1:
            add(piece.start(), piece.end(), "cjk_word")
    for i in range(len(run) - 1):
        if not _HIRAGANA.fullmatch(run[i : i + 2]):
            add(i, i + 2, "cjk_word")
    for i, char in enumerate(run):
        if not is_japanese(char):  # a kanji
            add(i, i + 1, "cjk_char")
    return out


def _latin_terms(chunk: str) -> list[QueryTerm]:
    found = [t for t in iter_tokens(chunk) if not t.is_cjk]
    if not found:
        return []
    tokens = [t.term for t in found]
    if len(tokens) > 1 and _JOINERS.match(unicodedata.normalize("NFKC", chunk.strip())):
        return [_as_written(QueryTerm(tuple(tokens), "phrase"), chunk.strip())]
    # Each word keeps the query's spelling ("epoll", not its stem "epol"): a hit says
    # which of the user's words it holds in the user's words.
    words = [_as_written(QueryTerm((t.term,), "word"), chunk[t.start : t.end]) for t in found]
    if tokens[0].startswith(OPTION_SIGN):  # an option and its words: the words only back it
        return [w for w in words if w.tokens[0] not in _EN_STOP]
    return words


def plan(text: str, *, max_terms: int = MAX_TERMS) -> QueryPlan:
    """Build the query plan for any user string (never raises)."""
    text = text[:PLAN_CHARS]
    terms: list[QueryTerm] = []
    excluded: list[QueryTerm] = []
    left_out: list[str] = []
    rest = text
    context_script = script(text) if has_traditional(text) else ""
    for match in _QUOTED.finditer(text):
        quoted = next(g for g in match.groups() if g is not None)
        tokens = tuple(t.term for t in iter_tokens(quoted))
        negated = (
            match.start() > 0
            and text[match.start() - 1] == "-"
            and (match.start() == 1 or text[match.start() - 2].isspace())
        )
        if tokens:
            term = _as_written(QueryTerm(tokens, "phrase" if len(tokens) > 1 else "word"), quoted)
            (excluded if negated else terms).append(term)
        rest = rest.replace(("-" if negated else "") + match.group(0), " ", 1)
    for chunk in rest.split():
        if _excludes(chunk):
            tokens = tuple(t.term for t in iter_tokens(chunk[1:]))
            if tokens:
                kind = "phrase" if len(tokens) > 1 else "word"
                excluded.append(_as_written(QueryTerm(tokens, kind), chunk[1:]))
            continue
        if has_cjk(chunk):
            for piece in split_cjk(chunk):
                if not piece:
                    continue
                terms.extend(
                    _cjk_terms(piece, context_script, left_out)
                    if has_cjk(piece)
                    else _latin_terms(piece)
                )
        else:
            terms.extend(_latin_terms(chunk))
    content = [t for t in terms if not (t.kind == "word" and t.tokens[0] in _EN_STOP)]
    if content:
        left_out.extend(t.text for t in terms if t not in content)
        terms = content
    unique: list[QueryTerm] = []
    seen: set[tuple[str, ...]] = {t.tokens for t in excluded}
    for term in terms:
        if term.tokens not in seen:
            seen.add(term.tokens)
            unique.append(term)
    return QueryPlan(
        text=text,
        terms=unique[:max_terms],
        excluded=excluded[:max_terms],
        left_out=tuple(dict.fromkeys(left_out)),
    )

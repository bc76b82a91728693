"""Exclusions (`-word`, `-"a phrase"`) and the words a hit counts (issue 12): an excluded word
is matched as a searched one is, by its stem, and --explain says so; it never feeds the
query's tags; "matched N of M words" counts every word the note holds, those too common
to be searched included."""

from __future__ import annotations

import json
import string
from collections.abc import Callable
from pathlib import Path

from hypothesis import example, given, settings
from hypothesis import strategies as st

import lore
from lore.derive.tokenize import terms as terms_of
from lore.retrieve.hybrid import CANDIDATES_WANTED
from lore.retrieve.plan import heuristic_plan, llm_plan
from lore.retrieve.query import _EN_STOP, plan, shown_exclusions, split_exclusions

_WORDS = st.text(st.sampled_from(string.ascii_lowercase), min_size=3, max_size=10).filter(
    lambda w: w not in _EN_STOP
)


@settings(max_examples=300)
@given(st.lists(_WORDS, min_size=1, max_size=5), st.lists(_WORDS, min_size=1, max_size=3))
@example(["chess", "plugin"], ["obsidians"])
def test_an_excluded_word_never_feeds_the_query_tags(kept: list[str], dropped: list[str]) -> None:
    text = " ".join([*kept, *(f"-{w}" for w in dropped), '-"two words" -"dark theme"'])
    gone = {tok for w in dropped for tok in terms_of(w)} | {"two", "word", "dark", "theme"}
    searched = {tok for w in kept for tok in terms_of(w)}
    tags = heuristic_plan(text).tags
    for tag in tags:
        assert not (set(terms_of(tag)) & gone - searched), (text, tags)
    rest, exclusions = split_exclusions(text)
    assert not plan(rest).excluded
    # The exclusions, added back to any text, exclude what the query did.
    assert plan(f"{rest} {exclusions}").excluded == plan(text).excluded


@settings(max_examples=300)
@given(_WORDS, _WORDS)
def test_explain_says_an_excluded_word_is_matched_by_its_stem(base: str, word: str) -> None:
    query_plan = plan(f"{base} -{word}")
    stem = " ".join(terms_of(word))
    shown = shown_exclusions(query_plan)
    assert shown == [stem if stem == word else f"{word} → {stem}"]


def test_minus_leaves_out_every_form_of_the_word_and_says_so(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    vault = open_vault(
        make_vault(
            {
                "a.md": "# Trip plan\n\nThe plan, still a draft.\n",
                "b.md": "# Budget plan\n\nThe plan, drafting it now.\n",
                "c.md": "# Garden plan\n\nThe final plan.\n",
            }
        )
    )
    vault.sync()
    result = vault.search("plan -drafts", limit=5, explain=True)
    assert [h.path for h in result] == ["c.md"]
    explain = result[0].explain
    assert explain is not None
    assert explain.excluded_terms == ["drafts → draft"]
    assert "draft" not in explain.query_tags


def test_matched_words_count_the_common_words_a_note_holds(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    """ "obsidian" is in every note, so it is left out of the search (no BM25 weight) once
    "plugin" brings enough candidates; the hit that holds it still counts it: "matched 2
    of 3 words", not "1 of 2"."""
    half = CANDIDATES_WANTED + 20
    files = {f"p/{i:04d}.md": f"An obsidian plugin, number {i}.\n" for i in range(half)}
    files.update({f"o/{i:04d}.md": f"An obsidian note, number {i}.\n" for i in range(half)})
    files["heat.md"] = "# Heat\n\nA heatmap of obsidian notes.\n"
    vault = open_vault(make_vault(files))
    vault.sync()
    hits = vault.search("obsidian plugin heatmap", limit=3, explain=True)
    assert hits[0].path == "heat.md"
    assert hits[0].explain is not None and hits[0].explain.dropped_terms == ["obsidian"]
    assert (hits[0].words_matched, hits[0].words_total) == (["obsidian", "heatmap"], 3)


class _EchoChat:
    """A chat model that plans every word it is shown as a tag, and records what it saw."""

    name = "echo"
    identity = "echo:test"

    def __init__(self) -> None:
        self.seen: list[str] = []

    def complete(self, system: str, user: str) -> str:
        self.seen.append(user)
        return json.dumps({"query_refine": user, "query_tags": user.split()})


def test_the_llm_never_sees_an_excluded_word(
    make_vault: Callable[..., Path], open_vault: Callable[..., lore.Vault]
) -> None:
    vault = open_vault(make_vault({"a.md": "# Chess\n\nA chess plugin.\n"}))
    chat = _EchoChat()
    splan = llm_plan(vault.store, chat, 'chess plugin -obsidian -"dark theme"')
    assert chat.seen == ["chess plugin"]
    assert splan.tags == ["chess", "plugin"]
    # Only exclusions: nothing to ask the model.
    assert llm_plan(vault.store, chat, "-obsidian").tags == [] and len(chat.seen) == 1

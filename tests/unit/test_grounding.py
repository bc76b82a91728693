"""The grounding check every kept model statement passes (lore.index.grounding): a quote
of the material is found, whatever the case, width and white space; a number or a word
the material lacks is refused, named."""

from __future__ import annotations

from hypothesis import assume, given
from hypothesis import strategies as st

from lore.index.grounding import normalise, quoted, unsupported, why_ungrounded

# Words of two units each (a CJK pair, a Latin word, a full-width one), so any two in a
# row are long enough to be evidence (MIN_EVIDENCE).
WORD = st.sampled_from(["规则", "客户", "合并", "记录", "merge", "Record", "v2", "ＡＢ", "x1"])
SPACE = st.sampled_from([" ", "  ", "\n", "\t", "\n\n"])
CJK = st.characters(min_codepoint=0x4E00, max_codepoint=0x9FFF)
TEXT = st.text(alphabet=st.sampled_from(list("abcXYZ0123 \n") + list("规则客户ＡＢ１")), min_size=1)


@given(st.lists(st.tuples(WORD, SPACE), min_size=2, max_size=40), st.data())
def test_a_run_of_the_materials_words_is_a_quote_of_it(
    words: list[tuple[str, str]], data: st.DataObject
) -> None:
    material = "".join(w + s for w, s in words)
    start = data.draw(st.integers(0, len(words) - 2))
    end = data.draw(st.integers(start + 2, len(words)))
    # The model may change case, width and white space, and add quote marks around it.
    evidence = "“" + " ".join(w.upper() for w, _s in words[start:end]) + "”"
    assert quoted(normalise(evidence), normalise(material))


@given(st.text(alphabet=CJK, min_size=8, max_size=80), st.data())
def test_a_quote_with_a_gap_is_found_in_order_only(material: str, data: st.DataObject) -> None:
    cut = data.draw(st.integers(4, len(material) - 4))
    head, tail = material[:4], material[cut : cut + 4]
    assert quoted(f"{head}…{tail}", material)
    assert quoted(f"{head}...{tail}", material)
    assume(head not in material[1:] and tail not in material[: cut + 3])
    assert not quoted(f"{tail}…{head}", material)


@given(TEXT, st.integers(10_000, 99_999))
def test_a_number_the_material_lacks_is_named(material: str, number: int) -> None:
    norm = normalise(material)
    assume(str(number) not in norm)
    why = unsupported(f"the value is {number}", norm)
    assert why == f"{str(number)!r} is not in the input"


@given(
    st.lists(st.sampled_from(["规则", "客户", "merge", "record", "v2", "2026-03-01"]), min_size=1)
)
def test_a_statement_made_of_the_materials_words_is_grounded(words: list[str]) -> None:
    material = normalise("规则 v2：客户 merge record，自 2026-03-01 起")
    text = " ".join(words)
    assert unsupported(text, material) is None
    assert why_ungrounded(text, "客户 merge record", material) is None
    assert why_ungrounded(text, "客户 merge ledger", material) == (
        "its evidence is not a quote of the input"
    )

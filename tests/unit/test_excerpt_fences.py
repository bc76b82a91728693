"""An excerpt of a note (lore.memory.views.window: the evidence of `context`) that starts or
ends inside fenced code gets the fence opened or closed, so the Markdown an agent reads
keeps the code as code and the prose after it as prose."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lore.ingest.markdown import iter_lines, open_fence
from lore.memory.views import size, window

PROSE = st.sampled_from(["卸载时需要先卸载 B.ko。", "- a list item", "Plain prose here.", ""])
CODE = st.sampled_from(["insmod a.ko", "#define DEBUG 3", "rmmod b", "  indented()"])


@st.composite
def notes(draw: st.DrawFn) -> str:
    lines: list[str] = []
    for _ in range(draw(st.integers(1, 8))):
        lines += draw(st.lists(PROSE, min_size=1, max_size=6))
        if draw(st.booleans()):
            fence = draw(st.sampled_from(["```", "~~~", "````"]))
            lines += [fence + draw(st.sampled_from(["", "bash", "c"]))]
            lines += draw(st.lists(CODE, min_size=1, max_size=12)) + [fence]
    return "\n".join(lines)


@given(note=notes(), at=st.integers(0, 200), budget=st.integers(60, 400))
def test_an_excerpt_never_leaves_a_fence_open_and_keeps_code_as_code(
    note: str, at: int, budget: int
) -> None:
    lines = list(iter_lines(note, 1))
    line = lines[at % len(lines)]
    excerpt = window(note, 1, line.number, budget)
    assert open_fence(excerpt) is None
    assert size(excerpt) <= budget
    if line.code and line.text.strip() and line.text in excerpt.split("\n"):
        # the line the excerpt is about is code there too
        shown = [x for x in iter_lines(excerpt, 1) if x.text == line.text]
        assert any(x.code for x in shown)


def test_an_excerpt_from_inside_a_code_block_opens_its_fence() -> None:
    note = "intro\n\n```bash\n" + "\n".join(f"step {i}" for i in range(40)) + "\n```\nafter #x\n"
    excerpt = window(note, 1, 30, 120)
    assert excerpt.startswith("```\n") and "step 27" in excerpt
    assert excerpt.endswith("\n```") and open_fence(excerpt) is None

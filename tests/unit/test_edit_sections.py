"""lore.edit.sections: append and replace a section as pure functions, by example and by
property (Hypothesis): whatever the note, the other sections are kept byte for byte."""

from __future__ import annotations

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from lore.edit.sections import append, find_section, replace_section, sections
from lore.errors import ConfigError, NotFoundError

NOTE = """---
title: 计划
---
# 计划

开头。

## 本周

- 一
- 二

### 细节

细节文字

## 下周

下周文字
"""


def test_sections_nest_by_level_and_skip_front_matter_and_code() -> None:
    text = NOTE + "\n```\n## not a heading\n```\n"
    found = {s.heading: (s.level, s.line, s.end) for s in sections(text)}
    assert set(found) == {"计划", "本周", "细节", "下周"}
    assert found["本周"][2] == found["下周"][1]  # 本周 holds 细节, ends where 下周 starts
    assert found["细节"][2] == found["下周"][1]


def test_replace_section_keeps_heading_and_the_rest() -> None:
    out = replace_section(NOTE, "本周", "- 三\n")
    assert "## 本周\n\n- 三\n\n## 下周" in out
    assert "细节文字" not in out  # the sub-section was part of it
    assert out.startswith(NOTE.split("## 本周")[0]) and out.endswith("## 下周\n\n下周文字\n")


def test_append_to_a_section_and_to_the_end() -> None:
    out = append(NOTE, "- 三", heading="细节")
    assert "细节文字\n\n- 三\n\n## 下周" in out
    end = append(NOTE, "最后一行")
    assert end == NOTE.rstrip("\n") + "\n\n最后一行\n"


def test_an_item_appended_to_a_list_continues_it() -> None:
    listed = "# 笔记\n\n## 计划\n\n- 一\n- 二\n\n## 下周\n\n1. 甲\n"
    assert "- 一\n- 二\n- 三\n\n## 下周" in append(listed, "- 三", heading="计划")
    assert append(listed, "2. 乙").endswith("1. 甲\n2. 乙\n")
    assert append(listed, "- 乙").endswith("1. 甲\n\n- 乙\n")  # another kind of list
    assert "- 二\n\n段落\n\n## 下周" in append(listed, "段落", heading="计划")
    fenced = append("# A\n\n```\n- code\n", "- item")
    assert fenced.endswith("```\n\n- item\n")  # a list item in code is no list


def test_append_closes_an_unclosed_fence_first() -> None:
    out = append("# A\n\n```\ncode\n", "after")
    assert out.endswith("```\n\nafter\n")


def test_a_heading_by_slug_or_explicit_id() -> None:
    text = "# X\n\n## 14:03 Redis {#m-1403}\n\nbody\n\n## Next Steps\n\nn\n"
    assert find_section(text, "m-1403").heading == "14:03 Redis"
    assert find_section(text, "next-steps").heading == "Next Steps"


def test_missing_and_ambiguous_sections_are_one_line() -> None:
    with pytest.raises(NotFoundError, match="no section headed"):
        find_section(NOTE, "明年", path="plan.md")
    with pytest.raises(ConfigError, match="2 sections are headed"):
        find_section("# A\n## B\nx\n## B\ny\n", "B")
    with pytest.raises(ConfigError, match="nothing to append"):
        append(NOTE, "\n\n")


_line = st.text(
    alphabet=st.characters(blacklist_categories=["Cs"], blacklist_characters="\r\n#`~"), max_size=20
)
_block = st.lists(_line, max_size=4).map("\n".join)


@given(before=_block, middle=_block, after=_block, new=_block.filter(lambda s: s.strip()))
@example(before="", middle="", after="", new=" \n0")
@example(before="", middle="", after="", new="\x0c\n0")
def test_replace_changes_only_the_section(before: str, middle: str, after: str, new: str) -> None:
    text = f"# Top\n\n{before}\n\n## Target\n\n{middle}\n\n## Other\n\n{after}\n"
    out = replace_section(text, "Target", new)
    head, _, rest = out.partition("## Target\n")
    assert head == f"# Top\n\n{before}\n\n"
    assert rest.endswith(f"## Other\n\n{after}\n")
    lines = new.split("\n")  # blank lines (spaces only) at its edges are not kept
    while not lines[0].strip():
        lines.pop(0)
    while not lines[-1].strip():
        lines.pop()
    assert "\n".join(lines) in rest


@given(body=_block, addition=_block.filter(lambda s: s.strip()))
def test_append_keeps_everything_before(body: str, addition: str) -> None:
    text = f"# Note\n\n{body}\n"
    out = append(text, addition)
    assert out.startswith(text.rstrip("\n"))
    assert out.endswith(addition.rstrip("\n") + "\n")

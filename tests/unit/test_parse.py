"""Front matter + Markdown → ParsedNote: fallbacks, problems, hostile YAML, structure."""

from __future__ import annotations

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from lore.ingest.parse import MAX_FRONTMATTER_DEPTH, parse_note


def note(text: str, name: str = "notes/plain.md"):  # type: ignore[no-untyped-def]
    return parse_note(text, name)


# -- front matter -----------------------------------------------------------------------------


def test_front_matter_keys_are_all_kept_custom_ones_too() -> None:
    parsed = note(
        "---\n"
        "title: 客户去重规则 v2\n"
        "date: 2026-10-15\n"
        "tags: [rules, 客户]\n"
        "owner: 张三\n"
        "priority: 2\n"
        "meta: {reviewed: true, score: 1.5, when: 2026-10-16}\n"
        "aliases:\n  - dedupe rules\n"
        "---\n"
        "body text\n"
    )
    assert parsed.problems == []
    assert parsed.frontmatter == {
        "title": "客户去重规则 v2",
        "date": "2026-10-15",
        "tags": ["rules", "客户"],
        "owner": "张三",
        "priority": 2,
        "meta": {"reviewed": True, "score": 1.5, "when": "2026-10-16"},
        "aliases": ["dedupe rules"],
    }
    assert parsed.title == "客户去重规则 v2"
    assert parsed.tags == ["rules", "客户"]
    assert parsed.body == "body text\n"
    assert parsed.body_line == 11


def test_empty_front_matter_block_is_an_empty_mapping() -> None:
    parsed = note("---\n---\n# Heading\n")
    assert parsed.frontmatter == {}
    assert parsed.problems == []
    assert parsed.title == "Heading"


def test_unclosed_front_matter_is_treated_as_body() -> None:
    parsed = note("---\ntitle: x\nno closing line\n")
    assert parsed.frontmatter == {}
    assert parsed.body.startswith("---\ntitle: x")


@pytest.mark.parametrize(
    ("text", "title", "source"),
    [
        ("---\ntitle: From FM\n---\n# From Heading\n", "From FM", "frontmatter"),
        ("---\ntitle: '  '\n---\n# From Heading\n", "From Heading", "heading"),
        ("intro\n# From Heading\n## Sub\n# Second H1\n", "From Heading", "heading"),
        ("## Opens the note\ntext\n# Footer\n", "Opens the note", "heading"),
        # A "#" heading below a "##" one is a section (a footer), not the note's name.
        ("intro\n## Sub first\n# This note in GitHub\n", "plain", "filename"),
        # A template's placeholder names no note: the file's name does.
        ("---\ntitle: '{{title}}'\n---\n# {{title}}\n", "plain", "filename"),
        ("# <% tp.file.title %>\n", "plain", "filename"),
        ("---\ntitle: '{{date}} log'\n---\n", "{{date}} log", "frontmatter"),
        ("no headings at all\n## only level two\n", "plain", "filename"),
        ("", "plain", "filename"),
    ],
)
def test_title_fallback(text: str, title: str, source: str) -> None:
    parsed = note(text)
    assert (parsed.title, parsed.title_source) == (title, source)


def test_title_from_file_name_strips_folders_and_suffix() -> None:
    assert note("x", name="a/b/My Note.markdown").title == "My Note"
    assert note("x", name="客户去重规则 v2.md").title == "客户去重规则 v2"


@pytest.mark.parametrize(
    ("text", "name", "date", "source"),
    [
        ("---\ndate: 2026-09-03\n---\n", "2025-01-01-x.md", "2026-09-03", "frontmatter"),
        ("---\ndate: 2026/9/3\n---\n", "x.md", "2026-09-03", "frontmatter"),
        ("---\ndate: 2026-09-03 10:30:00+08:00\n---\n", "x.md", "2026-09-03", "frontmatter"),
        ("body", "meetings/2026-10-10-客户主数据去重对齐会.md", "2026-10-10", "filename"),
        ("body", "memory/2026-11-13.md", "2026-11-13", "filename"),
        ("body", "2026-13-45 not a date 2026-02-03.md", "2026-02-03", "filename"),
        ("---\ndate: 2026年9月22日\n---\n", "x.md", "2026-09-22", "frontmatter"),
        ("---\ncreated: 2021-05-03T10:00\n---\n", "x.md", "2021-05-03", "frontmatter"),
        ("---\ndate:\npublished: 2023-07-01T12:30:35\n---\n", "x.md", "2023-07-01", "frontmatter"),
        ("# 周报\n\n- 生成时间：2026-06-30 02:11:38\n", "x.md", "2026-06-30", "text"),
        ("2019/5/1 release notes\n", "x.md", "2019-05-01", "text"),
        ("# 2024年3月5日 周二\n", "x.md", "2024-03-05", "text"),
        ("body", "plain.md", None, None),
        ("body", "20260910.md", None, None),
        ("see https://x.io/2017/01/22/post and 2017-01-22 later\n", "x.md", None, None),
        ("```\ndate: 2026-01-01\n```\n", "x.md", None, None),
        ("\n".join(["line"] * 20) + "\ndate: 2026-01-01\n", "x.md", None, None),
    ],
)
def test_date_fallback(text: str, name: str, date: str | None, source: str | None) -> None:
    """Front matter, then file name, then a date the text gives near its top; else undated
    (never the file's modification time)."""
    parsed = note(text, name=name)
    assert (parsed.date, parsed.date_source) == (date, source)


def test_empty_date_is_undated_without_a_problem() -> None:
    parsed = note("---\ndate:\ntitle: T\n---\nbody\n")
    assert (parsed.date, parsed.problems) == (None, [])


def test_front_matter_date_that_is_not_a_date_is_reported_and_falls_back() -> None:
    parsed = note("---\ndate: someday\n---\nbody\n", name="2026-10-10-x.md")
    assert (parsed.date, parsed.date_source) == ("2026-10-10", "filename")
    assert len(parsed.problems) == 1
    assert parsed.problems[0].kind == "date"
    assert "someday" in parsed.problems[0].message
    assert "\n" not in parsed.problems[0].message


def test_malformed_yaml_costs_only_the_key_it_is_in() -> None:
    text = "---\ntitle: [unclosed\ntags: a\n---\n# Real Title\nthe body #inline\n"
    parsed = note(text)
    assert len(parsed.problems) == 1
    problem = parsed.problems[0].message
    assert "front matter title cannot be read (line 3:" in problem
    assert "\n" not in problem
    assert parsed.frontmatter == {"tags": "a"}
    assert parsed.title == "Real Title"
    assert parsed.body == "# Real Title\nthe body #inline\n"
    assert parsed.body_line == 5
    assert (parsed.tags, parsed.inline_tags) == (["a"], ["inline"])


def test_obsidian_style_broken_alias_keeps_title_tags_and_the_rest() -> None:
    """Seen on a real vault: `- @name` is not valid YAML; the other keys still count."""
    text = (
        "---\ntitle: Person\naliases:\n- @rscopic\ntags:\n- people\npublish: true\n---\n# Heading\n"
    )
    parsed = note(text)
    assert parsed.frontmatter == {"title": "Person", "tags": ["people"], "publish": True}
    assert (parsed.title, parsed.tags) == ("Person", ["people"])
    (problem,) = parsed.problems
    assert problem.kind == "frontmatter_key" and problem.key == "aliases"
    assert "line 4" in problem.message


def test_impossible_date_keeps_the_rest_and_names_the_key() -> None:
    parsed = note("---\ntitle: Kept\ndate: 2026-02-30\ntags: [a]\n---\nbody\n")
    assert parsed.frontmatter == {"title": "Kept", "date": "2026-02-30", "tags": ["a"]}
    assert (parsed.title, parsed.tags, parsed.date) == ("Kept", ["a"], None)
    (problem,) = parsed.problems
    assert problem.kind == "date" and "'2026-02-30'" in problem.message


def test_front_matter_that_is_not_a_mapping_is_reported() -> None:
    parsed = note("---\n- just\n- a list\n---\nbody\n")
    assert parsed.frontmatter == {}
    assert any("not a mapping" in p.message for p in parsed.problems)


@pytest.mark.parametrize(
    "payload",
    [
        "n: !!python/object/apply:os.system ['echo pwned']\n",
        "n: !!python/name:os.system\n",
    ],
)
def test_python_tags_are_refused(payload: str) -> None:
    """No Python object is ever built: the value is kept as the text written, at most."""
    parsed = note(f"---\n{payload}---\nbody\n")

    def plain(value: object) -> bool:
        return isinstance(value, str) or (isinstance(value, list) and all(map(plain, value)))

    assert list(parsed.frontmatter) in ([], ["n"])
    assert all(plain(v) for v in parsed.frontmatter.values())
    assert len(parsed.problems) == 1
    assert "\n" not in parsed.problems[0].message


def test_yaml_alias_bomb_is_refused_quickly() -> None:
    lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 10):
        prev, cur = chr(ord("a") + i - 1), chr(ord("a") + i)
        lines.append(f"{cur}: &{cur} [{', '.join(['*' + prev] * 9)}]")
    text = "---\n" + "\n".join(lines) + "\n---\n# Laughs\nbody\n"
    parsed = note(text)  # refused before any expansion (a billion "lol"s would not return)
    assert parsed.frontmatter == {}
    assert len(parsed.problems) == 1
    assert "alias" in parsed.problems[0].message
    assert parsed.title == "Laughs"


def test_a_single_alias_is_refused_too() -> None:
    parsed = note("---\nbase: &b 1\ncopy: *b\n---\nbody\n")
    assert parsed.frontmatter == {}
    assert "alias" in parsed.problems[0].message


def _nested(depth: int) -> str:
    return "---\nroot: " + "[" * depth + "1" + "]" * depth + "\n---\nbody\n"


def test_front_matter_at_the_depth_limit_is_accepted_one_past_it_refused() -> None:
    # Levels counted: the top-level mapping, each list, the scalar leaf.
    parsed = note(_nested(MAX_FRONTMATTER_DEPTH - 2))
    assert parsed.problems == []
    assert "root" in parsed.frontmatter
    refused = note(_nested(MAX_FRONTMATTER_DEPTH - 1))
    assert refused.frontmatter == {}
    assert "nested deeper than" in refused.problems[0].message


@pytest.mark.parametrize("depth", [MAX_FRONTMATTER_DEPTH + 5, 5000])
def test_deeply_nested_front_matter_is_refused(depth: int) -> None:
    parsed = note(_nested(depth))
    assert parsed.frontmatter == {}
    assert len(parsed.problems) == 1
    assert "nest" in parsed.problems[0].message  # "nested too deeply", "maximum nesting depth"
    assert "\n" not in parsed.problems[0].message


def test_huge_front_matter_is_refused() -> None:
    block = "".join(f"k{i}: {'x' * 60}\n" for i in range(2000))  # ~130 KB
    parsed = note(f"---\n{block}---\nbody\n")
    assert parsed.frontmatter == {}
    assert "longer than" in parsed.problems[0].message


@pytest.mark.parametrize(
    "line",
    [
        "date: 2026-02-30",  # a typo'd date: yaml builds datetime.date(2026, 2, 30)
        "n: !!int abc",
        "f: !!float abc",
        "t: !!timestamp nope",
        "big: " + "1" * 5000,  # int() refuses > 4300 digits
    ],
)
def test_front_matter_values_yaml_cannot_construct_are_problems_not_crashes(line: str) -> None:
    parsed = note(f"---\ntitle: Kept\n{line}\n---\nbody\n")
    assert parsed.title == "Kept"
    key = line.split(":")[0]
    assert isinstance(parsed.frontmatter[key], str)  # kept as written
    (problem,) = parsed.problems
    assert problem.key == key
    assert "\n" not in problem.message


# -- Markdown structure -----------------------------------------------------------------------


def test_headings_inside_fenced_code_are_ignored() -> None:
    text = (
        "# Real\n"
        "```python\n"
        "# not a heading\n"
        "````\n"  # a longer fence of the same char closes it
        "## Second\n"
        "~~~\n"
        "# also not\n"
        "```\n"  # a backtick fence does not close a tilde fence
        "# still not\n"
        "~~~\n"
        "### Third\n"
        "````\n"
        "# unclosed fence swallows the rest\n"
    )
    parsed = note(text)
    assert [(h.level, h.text) for h in parsed.headings] == [
        (1, "Real"),
        (2, "Second"),
        (3, "Third"),
    ]


def test_heading_offsets_and_lines() -> None:
    text = "---\ntitle: T\n---\nintro line\n\n## Section A ##\ntext\n#not a heading\n###### Six\n"
    parsed = note(text)
    assert parsed.body_line == 4
    assert [(h.level, h.text, h.line) for h in parsed.headings] == [
        (2, "Section A", 6),
        (6, "Six", 9),
    ]
    lines = text.split("\n")
    for heading in parsed.headings:
        assert parsed.body[heading.offset :].startswith("#" * heading.level + " " + heading.text)
        assert lines[heading.line - 1].startswith("#" * heading.level + " " + heading.text)


@pytest.mark.parametrize("separator", ["\x0c", "\x85", "\u2028"])
def test_heading_line_counts_only_real_line_breaks(separator: str) -> None:
    parsed = note(f"a{separator}b\n# Heading\n")
    assert [(h.text, h.line) for h in parsed.headings] == [("Heading", 2)]


def test_wikilinks() -> None:
    text = "See [[Alpha|the alpha note]], [[Beta#Some heading]], [[Gamma#h|alias]], [[ Delta ]].\n"
    text += "Again [[alpha]] and [[客户去重规则 v2]].\n"
    assert note(text).links == ["Alpha", "Beta", "Gamma", "Delta", "客户去重规则 v2"]


def test_markdown_links_to_notes_are_links_by_their_path_in_the_vault() -> None:
    text = (
        "See [guide](../linux/dnf%20guide.md#install), [same folder](./peer.md?x=1) and"
        " [top](/Index.markdown).\n"
        "Not notes: [site](https://a.io/x.md), [pic](img.png), [out](../../../up.md),"
        " [anchor](#part), [mail](mailto:a@b.md).\n"
        "```\n[in code](code.md)\n```\n"
    )
    assert note(text, name="notes/sub/plain.md").links == [
        "notes/linux/dnf guide.md", "notes/sub/peer.md", "Index.markdown",
    ]  # fmt: skip
    assert note("[a](a.md) and [[Alpha]]\n", name="top.md").links == ["Alpha", "a.md"]
    hostile = (
        "[nul](a%00b.md) [line](a%0Ab.md) [out](..%2F..%2Fetc.md) [ok](%E7%AC%94%E8%AE%B0.md)\n"
    )
    assert note(hostile, name="x/y.md").links == ["x/笔记.md"]


def test_links_and_tags_inside_fenced_code_are_ignored() -> None:
    parsed = note("```\n[[Hidden]] #hidden\n```\n[[Shown]] #shown\n")
    assert parsed.links == ["Shown"]
    assert parsed.inline_tags == ["shown"]


def test_a_title_from_a_heading_reads_as_shown() -> None:
    parsed = note("# Intro to [[dataview|Dataview]] **Plugin** and [docs](http://x.y)\ntext\n")
    assert (parsed.title, parsed.title_source) == ("Intro to Dataview Plugin and docs", "heading")


def test_fences_inside_list_items_and_quotes_are_code() -> None:
    text = (
        "- step one\r\n"
        "    ```c\r\n"  # a fence indented under a list item, CRLF line ends
        "    #ifndef STACK_H\r\n"
        "    #define STACK_H\r\n"
        "    ```\r\n"
        "> ```\n"  # a fence in a block quote or callout
        "> #quoted-code\n"
        "> ```\n"
        "\t\t- ```c\n"  # a fence opening an outliner's list item
        "\t\t  #include <stdio.h>\n"
        "\t\t  ```\n"
        "Inline ```#not-a-fence``` then #real\n"
    )
    parsed = note(text)
    assert parsed.inline_tags == ["real"]


def test_inline_tags() -> None:
    text = (
        "Working on #project/lore and #数据治理 today. #Project/Lore again.\n"
        "Not tags: #123, issue#45, http://x.com/page#anchor, &#38; `#code`, C#.\n"
        "Trailing punctuation #done. #2026plan ok\n"
        "## A heading #in-heading\n"
    )
    assert note(text).inline_tags == ["project/lore", "数据治理", "done", "2026plan", "in-heading"]


@pytest.mark.parametrize(
    "line",
    [
        "See [[#冲突解决方式]] and **[[#Heading]]**.",
        "Embed ![[note#Section]] and link [[other note#Part|shown]].",
        "A [link](#local-anchor) and [x](https://a.io/#frag) and <https://b.io/#frag>.",
        "Code ``#not `#either` here`` and `#nope`.",
        "%% #hidden comment %% <!-- #html-comment -->",
        "C# and F# and #123 and #2026/09 and a#b and x.com/#anchor",
        "\\#escaped",
    ],
)
def test_what_obsidian_does_not_call_a_tag_is_not_a_tag(line: str) -> None:
    """Obsidian's rules: heading links, embeds, link targets, URLs, code, comments, C#,
    numbers and a # inside a word are never tags."""
    parsed = note(f"# Title\n\n{line}\n")
    assert parsed.inline_tags == []


def test_a_hash_in_html_is_no_tag() -> None:
    """Obsidian shows HTML as HTML: colours in attributes, text in an HTML block (to the
    next blank line) and CSS in a <style> block are no tags; tags around them are."""
    text = (
        'Intro #before <span style="color: #ff0000">red</span> #inline-html\n'
        "\n"
        "<table>\n"
        "<tr><td>--background-primary: #1a1a1a</td>\n"
        "<td>#202020</td></tr>\n"
        "</table>\n"
        "\n"
        "After the table #after\n"
        "<style>\n"
        ".theme-dark { color: #dcddde; }\n"
        "</style> #still-css\n"
        "#after-css\n"
        "\n"
        "<br>\n"
        "#in-a-tag-line-block\n"
        "\n"
        "A paragraph line\n"
        "<span>\n"
        "#paragraph-goes-on\n"
    )
    assert note(text).inline_tags == [
        "before", "inline-html", "after", "after-css", "paragraph-goes-on",
    ]  # fmt: skip


_TAG_WORD = st.from_regex(r"[a-z][a-z0-9_/-]{0,12}", fullmatch=True)


@given(word=_TAG_WORD, before=st.sampled_from(["", "x ", "color: "]), tag=st.sampled_from(
    ["span", "div", "td", "font", "iframe"]
))  # fmt: skip
def test_a_hash_in_an_html_attribute_is_never_a_tag(word: str, before: str, tag: str) -> None:
    parsed = note(f'Text <{tag} style="{before}#{word}" title="#{word}">shown</{tag}> #kept\n')
    assert parsed.inline_tags == ["kept"]


def test_tags_beside_heading_links_and_in_quotes_and_lists() -> None:
    parsed = note("> #quoted idea\n- [[#Part]] #listed\n1. #numbered/child\n")
    assert parsed.inline_tags == ["quoted", "listed", "numbered/child"]


def test_front_matter_tags_forms_and_dedupe_against_inline() -> None:
    parsed = note("---\ntags: 'alpha, beta；gamma  #Delta'\n---\nText #ALPHA #epsilon\n")
    assert parsed.tags == ["alpha", "beta", "gamma", "Delta"]
    assert parsed.inline_tags == ["epsilon"]
    assert note("---\ntag: solo\n---\n").tags == ["solo"]
    assert note("---\ntags: [a, A, '#a', null, {x: 1}, 3]\n---\n").tags == ["a", "3"]


def test_bom_is_removed_with_and_without_front_matter() -> None:
    with_fm = note("\ufeff---\ntitle: T\n---\n# H\n")
    assert (with_fm.title, with_fm.frontmatter) == ("T", {"title": "T"})
    assert not with_fm.body.startswith("\ufeff")
    plain = note("\ufeff# Hello\ntext\n")
    assert plain.title == "Hello"
    assert not plain.body.startswith("\ufeff")
    assert plain.headings[0].offset == 0


def test_crlf_line_endings() -> None:
    text = "---\r\ntitle: T\r\ntags: [x]\r\n---\r\n# H1\r\ntext #crlf\r\n## H2\r\n"
    parsed = note(text)
    assert parsed.frontmatter == {"title": "T", "tags": ["x"]}
    assert parsed.body_line == 5
    assert [(h.text, h.line) for h in parsed.headings] == [("H1", 5), ("H2", 7)]
    assert parsed.inline_tags == ["crlf"]
    for heading in parsed.headings:
        assert parsed.body[heading.offset :].startswith("#")


# -- never raises -----------------------------------------------------------------------------

yamlish = st.lists(
    st.one_of(
        st.text(max_size=20),
        st.sampled_from(
            [
                "---\n",
                "...\n",
                "\n",
                "\r\n",
                ": ",
                "- ",
                "[",
                "]",
                "{",
                "}",
                "&a ",
                "*a",
                "!!str ",
                "? ",
                "'",
                '"',
                "#",
                "# H\n",
                "```\n",
                "[[x|y]]",
                "\ufeff",
                "\x00",
                "title: ",
                "tags: ",
                "date: ",
                "2026-09-03",
                "|\n  ",
            ]
        ),
    ),
    max_size=40,
).map("".join)


@settings(max_examples=300)
@given(text=st.text(max_size=300), name=st.text(max_size=30))
@example(text="", name="")
@example(text="---\n---\n", name="---.md")
def test_parse_note_never_raises_on_arbitrary_text(text: str, name: str) -> None:
    parsed = parse_note(text, name + ".md")
    assert isinstance(parsed.title, str)
    assert all("\n" not in p for p in parsed.problems)


@settings(max_examples=300)
@given(yamlish)
def test_parse_note_never_raises_on_front_matter_shaped_text(block: str) -> None:
    parsed = parse_note("---\n" + block + "\n---\nbody\n", "x.md")
    assert isinstance(parsed.frontmatter, dict)


def test_keywords_leave_fenced_code_out() -> None:
    from lore.derive.tags import heuristic_tags

    text = "Opaque pointers hide layouts.\n```c\n#include <stdlib.h>\n#ifndef STACK_H\n" * 3
    words = {w.casefold() for w in heuristic_tags("Opaque pointers", text)}
    assert "opaque" in words or "pointers" in words
    assert not words & {"include", "ifndef", "stdlib", "stack_h"}


def test_keywords_leave_urls_images_and_inline_code_out() -> None:
    from lore.derive.tags import heuristic_tags

    links = "".join(
        f"- [Flash memory basics part {i}](https://example.com/docs/online/sourcecode/{i}.pdf)\n"
        f"![screenshot](images/shot-{i}.png) <img src='x{i}.png'> `#include <x{i}.h>`\n"
        for i in range(8)
    )
    words = {w.casefold() for w in heuristic_tags("Flash", links)}
    assert {"flash", "memory"} & words
    assert not words & {"pdf", "png", "online", "sourcecode", "https", "include", "img", "src"}


def test_prose_keeps_link_text_and_drops_what_a_note_points_at() -> None:
    from lore.ingest.markdown import prose

    text = (
        "See [the guide](https://x.org/a.pdf) and [[Other note|that note]].\n"
        "```sh\nrm -rf build\n```\n"
        "![diagram](d.png) run `make` <br> ok https://bare.example/path\n"
    )
    out = prose(text)
    assert "the guide" in out and "that note" in out and "ok" in out
    for gone in ("a.pdf", "rm -rf", "d.png", "diagram", "make", "<br>", "bare.example"):
        assert gone not in out


def test_summary_tail_is_the_last_paragraph_of_prose() -> None:
    from lore.derive.summary import long_summary

    head = "An opening that says what the note is about. " * 40
    ending = "In the end the ring buffer needed no lock."
    code = "```c\nint main(void) {\n\n    return 0;\n}\n```"
    assert long_summary(f"{head}\n\n{ending}\n\n{code}\n").endswith(ending)
    # a note ending in prose keeps that paragraph, whatever code comes before it
    assert long_summary(f"{head}\n\n{code}\n\n{ending}\n").endswith(ending)
    # a note of code after its head has no tail of code lines
    assert "return 0" not in long_summary(f"{head}\n\n{code}\n")


def test_keyword_phrases_pair_two_different_words() -> None:
    from lore.derive.tags import heuristic_tags

    words = heuristic_tags("Budget", "budget budget planning. budget budget review. " * 5)
    assert "budget budget" not in words and "budget" in words

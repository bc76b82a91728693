"""The pure memory parsers: keys, cards, relations, events, daily entries, the core file,
the mention matcher, transcripts and the extraction heuristics."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from lore.ingest.markdown import as_date, leading_date
from lore.ingest.parse import parse_note
from lore.memory.cards import parse_cards
from lore.memory.digest import read_transcript
from lore.memory.entries import parse_core, parse_daily, parse_meta, pointer
from lore.memory.extract import extract
from lore.memory.keys import fold_key, link_key
from lore.memory.markdown import slug
from lore.memory.mentions import Matcher
from lore.memory.write import body_lines, entry_title

CARD = """# 张三

张三，数据平台组高级数据工程师。

## 关系

- 负责 [[客户去重规则 v2]]（owner）
- 直接下属：我、[[王磊]]、[[小孟]]等
- 和 [[王磊]] 合作过 [[ADR-001 数仓选型|ADR-001]] 的评审

## 关键事件

- 2026-03-02：v1 上线
- 2026/9/8 评审会
- 2026-06：月份精度的里程碑
- 2026-13-45：坏日期

```
- 代码块里的 [[不是链接]]
```

见 [[周报]]。
"""


def test_fold_key_merges_spellings() -> None:
    assert fold_key("Zhang San") == fold_key("zhang-san") == fold_key("ZhangSan") == "zhangsan"
    assert fold_key("星图 CDP") == "星图cdp"
    assert fold_key("José") == "jose"
    assert fold_key("——") == ""
    assert link_key("entities/张三.md") == link_key("张三") == "张三"


@given(st.text(max_size=60))
def test_fold_key_is_idempotent(text: str) -> None:
    assert fold_key(fold_key(text)) == fold_key(text)


def test_dates() -> None:
    assert leading_date("2026-09-08：评审") == ("2026-09-08", "2026-09-08", "评审")
    assert leading_date("2026年9月8日 评审")[0] == "2026-09-08"
    assert leading_date("2026-13-45 坏")[:2] == (None, "2026-13-45")
    assert leading_date("没有日期") == (None, None, "没有日期")
    assert as_date("2026-10-12（口径评审会）") == ("2026-10-12", "2026-10-12（口径评审会）")
    assert as_date("上周") == (None, "上周")
    assert as_date(None) == (None, None)


def test_file_card_relations_events_and_wikilinks() -> None:
    fm = {"type": "person", "aliases": ["Zhang San", "zs"], "tags": ["人物"], "pinned": True}
    parsed = parse_cards("entities/张三.md", "张三", fm, CARD, 8, entities_dir="entities")
    (card,) = parsed.cards
    assert (card.name, card.type, card.kind, card.pinned) == ("张三", "person", "file", True)
    assert card.aliases == ["Zhang San", "zs"]
    assert card.definition == "张三，数据平台组高级数据工程师。"
    relations = [(e.relation, e.target) for e in parsed.edges if e.kind == "relation"]
    assert relations == [
        ("负责", "客户去重规则 v2"),
        ("直接下属", "王磊"),
        ("直接下属", "小孟"),
        ("和", "王磊"),
        ("合作过", "ADR-001 数仓选型"),
    ]
    links = [(e.source, e.target) for e in parsed.edges if e.kind == "wikilink"]
    assert links == [("张三", "周报")]  # not the one inside the code block
    assert [(e.date, e.text) for e in card.events] == [
        ("2026-03-02", "v1 上线"),
        ("2026-09-08", "评审会"),
        (None, "2026-06：月份精度的里程碑"),
        (None, "坏日期"),
    ]
    assert card.problems == ["line 23: event date '2026-13-45' is not a date"]
    # Lines are file lines: the body starts at line 8 of the file.
    assert parsed.edges[0].line == 14


def test_section_cards_need_fields_and_read_them() -> None:
    body = """# 索引

### 张三（Person）
- **身份**：数据中台负责人 / 决策者
- **标签**：#决策者 #BI
- **别名**：Zhang San、zs
- **关系**：[李四](#实体李四) | [[CRM项目]]
- **关键事件**：
  - 2026-09-15 拍板指标口径统一 → [[指标治理]]
- **最后活动**：2026-10-12（口径评审会）

### 步骤 (可选)
这只是一个带括号的标题，不是实体。
"""
    parsed = parse_cards("index.md", "索引", {}, body, 1, entities_dir="entities")
    (card,) = parsed.cards
    assert (card.name, card.type, card.kind, card.line) == ("张三", "Person", "section", 3)
    assert card.definition == "数据中台负责人 / 决策者"
    assert card.tags == ["决策者", "BI"]
    assert card.aliases == ["Zhang San", "zs"]
    assert (card.last_activity, card.last_activity_raw) == (
        "2026-10-12",
        "2026-10-12（口径评审会）",
    )
    assert [(e.date, e.text) for e in card.events] == [
        ("2026-09-15", "拍板指标口径统一 → 指标治理")
    ]
    assert [(e.relation, e.target) for e in parsed.edges if e.kind == "relation"] == [
        ("related", "李四"),
        ("related", "CRM项目"),
    ]
    assert [e.target for e in parsed.edges if e.kind == "wikilink"] == ["指标治理"]


def test_broken_front_matter_value_keeps_the_card() -> None:
    """The card reads the front matter the one note parser read: a value YAML cannot build
    is kept as written, so the card keeps its aliases and says what is wrong."""
    text = "---\ntitle: 钱七\naliases: [Qian Qi]\nlast_activity: 2026-02-30\n---\n# 钱七\n"
    note = parse_note(text, "entities/钱七.md")
    parsed = parse_cards(
        "entities/钱七.md", note.title, note.frontmatter, note.body, note.body_line,
        entities_dir="entities",
    )  # fmt: skip
    (card,) = parsed.cards
    assert (card.name, card.aliases, card.last_activity) == ("钱七", ["Qian Qi"], None)
    assert card.problems == ["front matter last_activity '2026-02-30' is not a date"]


@given(st.text(max_size=400))
def test_parsers_never_raise(text: str) -> None:
    parse_cards("entities/x.md", "x", {}, text, 1, entities_dir="entities")
    parse_cards("notes/x.md", "x", {}, "### A (B)\n- 别名: c\n" + text, 1, entities_dir="entities")
    parse_daily(text, 1, "2026-01-01")
    parse_core(text, 1, None)
    extract(text)
    read_transcript(text if not text.lstrip().startswith("{") else "x" + text, "t")


def test_daily_entries() -> None:
    body = """# 2026-11-21

- 手写的一条
  - 它的子项
- [ ] 待办一件事

## 09:00:00 缓存方案 {#m-090000-ab12}

缓存方案选 Redis。

status: verified · trust: confirmed · source: 压测报告 · entities: [[张三]], [[李四]]

## 手写小节

随便记点什么。
"""
    entries = parse_daily(body, 5, "2026-11-21")
    kinds = [(e.kind, e.anchor, e.line, e.status) for e in entries]
    assert kinds == [
        ("item", "", 7, None),
        ("item", "", 9, "open"),
        ("remember", "m-090000-ab12", 11, "verified"),
        ("section", "", 17, None),
    ]
    remember = entries[2]
    assert (remember.time, remember.trust, remember.source) == ("09:00:00", "confirmed", "压测报告")
    assert remember.entities == ["张三", "李四"]
    assert remember.text == "缓存方案选 Redis。"
    assert remember.text_line == 13
    assert entries[0].text == "手写的一条\n- 它的子项"


def test_core_file() -> None:
    body = """# Core

- [verified] 结论一 → memory/2026-09-22.md#模型路由
- 结论二 -> projects/ADR-001 数仓引擎选型.md#决策
- 结论三 see [[2026-09-22#模型路由]]
- [claimed] 没有锚点的结论

## 待办
- [ ] 一件事
- [x] 已完成的事

## 下一步
- 再下一步
"""
    entries = parse_core(body, 1, None)
    assert [(e.kind, e.status, e.target) for e in entries] == [
        ("conclusion", "verified", "memory/2026-09-22.md#模型路由"),
        ("conclusion", None, "projects/ADR-001 数仓引擎选型.md#决策"),
        ("conclusion", None, "2026-09-22#模型路由"),
        ("conclusion", "claimed", None),
        ("open", "open", None),
        ("open", "done", None),
        ("next", None, None),
    ]
    assert entries[0].text.startswith("结论一")
    assert pointer("详 memory/a b.md#x") == "memory/a b.md#x"


def test_meta_line() -> None:
    meta = parse_meta("status: claimed · trust: inferred · source: a: b · entities: [[X]]")
    assert meta == {"status": "claimed", "trust": "inferred", "source": "a: b", "entities": "[[X]]"}


def test_matcher() -> None:
    matcher = Matcher(
        [("张三", "zs"), ("Zhang San", "zs"), ("zs", "zs"), ("星图", "xt"), ("星图 CDP", "xt")]
    )
    found = matcher.scan("zhang-san 和 ZS 聊过 zsh；星图 CDP 和星图。张三丰")
    assert found["zs"].count == 3  # zhang-san, ZS, 张三(丰); never inside "zsh"
    assert found["xt"].count == 2  # the longer spelling wins where they overlap
    assert Matcher([("x", "a"), ("同", "b")]).regex is None  # one character: noise
    both = Matcher([("zs", "a"), ("zs", "b"), ("赵四", "b")])
    assert set(both.scan("zs 赵四")) == {"b"}  # a shared spelling counts for nobody


def test_transcripts() -> None:
    jsonl = "\n".join(
        [
            '{"role": "system", "content": "You are helpful"}',
            '{"role": "user", "content": "我们决定用 Redis", "timestamp": "2026-11-20T10:00:00Z"}',
            '{"role": "assistant", "content": [{"type": "text", "text": "好的"}],'
            ' "ts": 1795000000}',
        ]
    )
    text, date, count = read_transcript(jsonl, "s.jsonl")
    assert text == "user: 我们决定用 Redis\nassistant: 好的"
    assert count == 3 and date is not None and date >= "2026-11-20"
    assert read_transcript("plain\ntext\n", "t")[1:] == (None, 2)


def test_extraction() -> None:
    found = extract(
        "张三: 我们决定缓存用 Redis Cluster。\n李四: 好的\n"
        "结论是压测瓶颈在网络。TODO 明天找运维确认带宽。\n"
        "教训：上线前一定要先灰度。\nwe decided to ship on friday\n今天天气不错。"
    )
    assert found == {
        "decisions": ["我们决定缓存用 Redis Cluster。", "we decided to ship on friday"],
        "conclusions": ["结论是压测瓶颈在网络。"],
        "open_items": ["TODO 明天找运维确认带宽。"],
        "lessons": ["教训：上线前一定要先灰度。"],
    }


def test_entry_text_cannot_break_the_note() -> None:
    assert body_lines("# 不是标题\n正文") == "\\# 不是标题\n正文"
    assert body_lines("```\ncode") == "```\ncode\n```"
    assert entry_title("x" * 100).endswith("…")
    assert slug("14:03 模型 路由 {#m-1}") == "1403-模型-路由"

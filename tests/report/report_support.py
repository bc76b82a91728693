"""Helpers for the report tests: synthetic interest maps (as `lore clusters build` would
store them) and report objects, so the presentation can be tested without clustering."""

from __future__ import annotations

import datetime as dt
import math
import random

from lore.interest.model import ClusterMember, InterestCluster, InterestMap
from lore.interest.report import ActiveEntity, Report, ReportNote, Window

LABELS = (
    ("向量检索 / embeddings", ("向量", "embedding", "检索")),
    ("客户去重规则", ("规则", "去重")),
    ("Redis migration and caching strategy for the order service", ("redis", "cache")),
    ("读书笔记：认知科学与学习方法论（第二部分）", ("读书", "认知")),
    ("SQLite internals", ("sqlite", "wal")),
    ("周报与会议纪要", ("会议", "周报")),
    ("LLM agents 与工具调用", ("agent", "llm")),
    ("Photography", ("photo",)),
    ("家庭 finances 记账", ("记账",)),
    ("Rust async runtime", ("rust", "tokio")),
    ("跑步训练计划", ("跑步",)),
    ("Kubernetes 运维", ("k8s",)),
)
TRENDS = ("heating", "steady", "cooling", "steady", "new", "heating", "steady", "cooling")


def iso_weeks(last: dt.date, count: int) -> list[str]:
    weeks = []
    for back in range(count - 1, -1, -1):
        year, week, _ = (last - dt.timedelta(weeks=back)).isocalendar()
        weeks.append(f"{year}-W{week:02d}")
    return weeks


def make_map(
    clusters: int = 8,
    *,
    seed: int = 7,
    weeks: int = 40,
    lexical: bool = False,
    labels: tuple[tuple[str, tuple[str, ...]], ...] = LABELS,
) -> InterestMap:
    rng = random.Random(seed)
    week_names = iso_weeks(dt.date(2026, 11, 30), weeks)
    out = []
    note_id = 0
    for c in range(clusters):
        label, tags = labels[c % len(labels)]
        trend = TRENDS[c % len(TRENDS)]
        size = max(4, 60 - 6 * c + rng.randint(0, 8))
        angle = 2 * math.pi * c / clusters
        cx, cy = 5 * math.cos(angle), 3 * math.sin(angle)
        members = []
        for i in range(size):
            note_id += 1
            day = dt.date(2026, 11, 30) - dt.timedelta(days=rng.randint(0, 7 * weeks - 1))
            members.append(
                ClusterMember(
                    note_id=note_id,
                    path=f"notes/c{c}/note-{i:03d}.md",
                    title=f"{label} 笔记 {i}",
                    date=day.isoformat(),
                    similarity=round(1 - i / (size + 1), 4),
                    x=cx + rng.gauss(0, 0.9),
                    y=cy + rng.gauss(0, 0.7),
                )
            )
        weekly = []
        for w, name in enumerate(week_names):
            base = 1 + rng.randint(0, 2)
            if trend == "heating":
                base += w // 6
            elif trend == "cooling":
                base = max(0, base + (weeks - w) // 8 - 2)
            elif trend == "new":
                base = 0 if w < weeks - 6 else base + 2
            weekly.append((name, base))
        out.append(
            InterestCluster(
                id=c + 1,
                label=label,
                label_source="tags",
                size=size,
                members=tuple(members),
                top_tags=tags,
                weekly=tuple(weekly),
                trend=trend,  # type: ignore[arg-type]
                recent_share=round(rng.random() / 3, 4),
                longrun_share=round(size / 400, 4),
            )
        )
    out.sort(key=lambda c: (-c.size, c.id))
    return InterestMap(
        clusters=tuple(out),
        lexical=lexical,
        params={"k": clusters, "seed": seed},
        fingerprint="0" * 64,
        built_at="2026-11-30T09:00:00+00:00",
        notes=sum(c.size for c in out),
    )


def make_report(interest: InterestMap | None = None, **changes: object) -> Report:
    window = Window("2026-11-24", "2026-11-30", "2026-11-30", "today")
    fields: dict[str, object] = {
        "vault": "notes",
        "window": window,
        "notes_total": 120,
        "new_notes": (
            ReportNote("inbox/a.md", "客户去重规则 v2", "2026-11-30", ("规则", "去重")),
            ReportNote("reading/b.md", "Reading: SQLite WAL", "2026-11-28", ("sqlite",)),
        ),
        "new_notes_total": 2,
        "top_tags": (("规则", 12), ("sqlite", 8)),
        "window_tags": (("规则", 1), ("sqlite", 1)),
        "entities": (
            ActiveEntity("张三", "person", "entities/张三.md", "2026-11-29", "event", 0.9),
        ),
        "interest": interest,
        "messages": ()
        if interest is not None
        else ("no interest clusters yet: run `lore clusters build`",),
    }
    fields.update(changes)
    return Report(**fields)  # type: ignore[arg-type]


TODAY = "2026-11-30"
HOSTILE = '<script>alert("x")</script> & <img src=x onerror=alert(1)>'


def note(title: str, date: str, tags: tuple[str, ...], body: str) -> str:
    tag_list = ", ".join(f'"{t}"' for t in tags)
    return f'---\ntitle: "{title}"\ndate: {date}\ntags: [{tag_list}]\n---\n{body}\n'


def vault_files() -> dict[str, str]:
    """A small dated vault: notes this week, last month and last year, an entity card with a
    recent event, and a note whose title is markup."""
    files = {
        ".lore/config.toml": f'[memory]\ntoday = "{TODAY}"\n',
        "entities/张三.md": (
            "---\ntitle: 张三\ntype: person\ndate: 2026-11-01\naliases: [zs]\n---\n"
            "# 张三\n\n数据平台工程师。\n\n"
            "## 关键事件\n\n- 2026-11-28：客户去重规则 v2 上线\n"
        ),
        "inbox/hostile.md": note(
            HOSTILE.replace('"', "'"), "2026-11-29", ("安全",), "标题是标记。"
        ),
        "rules/客户去重规则 v2.md": note(
            "客户去重规则 v2", "2026-11-28", ("规则", "去重"), "按手机号与邮箱去重。"
        ),
        "reading/sqlite-wal.md": note(
            "Reading: SQLite WAL", "2026-11-25", ("sqlite", "reading"), "WAL mode notes."
        ),
        "reading/old.md": note("Old reading", "2026-10-02", ("reading",), "Older note."),
        "2025/last-year.md": note("去年的笔记", "2025-11-30", ("规则",), "一年前。"),
    }
    for i in range(12):
        files[f"topics/向量检索-{i:02d}.md"] = note(
            f"向量检索笔记 {i}",
            f"2026-{9 + i % 3:02d}-{10 + i:02d}",
            ("向量", "检索"),
            "向量检索 embedding 召回 排序 " * 5,
        )
        files[f"topics/redis-{i:02d}.md"] = note(
            f"Redis migration {i}",
            f"2026-{8 + i % 4:02d}-{3 + i:02d}",
            ("redis", "cache"),
            "redis cache migration cluster failover " * 5,
        )
    return files

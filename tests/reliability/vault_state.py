"""Generated vaults and what an index holds, for the reliability tests and benchmark:
notes of Chinese and English text with front matter, a few memory notes, a seeded change
of every kind (edit, delete, touch, add), and a full dump of an index to compare states."""

from __future__ import annotations

import datetime as dt
import os
import random
from pathlib import Path
from typing import Any

import apsw

SEMANTIC = ("semantic_state", "derived_tags", "note_texts")
VOLATILE_META = ("last_sync", "vault_root", "commits")  # commits: lore.store.sqlite_base

WORDS = (
    "alpha beta gamma delta retention index vector cluster budget roadmap migration "
    "release incident review customer dedupe rule v1 v2 JIRA-1234 2026-09 sqlite fts5 "
    "walrus tundra harbor lantern copper meadow"
).split()
HAN = "客户去重规则手机号迁移复盘会议预算指标召回排序向量检索笔记日报周报项目负责上线风险"
TAGS = ("work", "reading", "项目/甲", "todo", "research", "日记", "meeting")
PEOPLE = ("张三", "李四", "Wang Wu", "Alice")


# -- vaults ------------------------------------------------------------------------------


def _sentence(rng: random.Random) -> str:
    words = [rng.choice(WORDS) for _ in range(rng.randint(4, 10))]
    han = "".join(rng.choice(HAN) for _ in range(rng.randint(4, 16)))
    return f"{' '.join(words)} {han}。"


def note_text(rng: random.Random, i: int) -> str:
    title = f"{rng.choice(WORDS).title()} {i} {rng.choice(HAN)}{rng.choice(HAN)}"
    tags = rng.sample(TAGS, rng.randint(0, 3))
    date = dt.date(2025, 1, 1) + dt.timedelta(days=rng.randrange(600))
    lines = ["---", f"title: {title}", f"tags: [{', '.join(tags)}]"]
    if rng.random() < 0.8:
        lines.append(f"date: {date.isoformat()}")
    if rng.random() < 0.2:
        lines.append(f"priority: {rng.randint(1, 5)}")
    lines += ["---", f"# {title}", ""]
    for section in range(rng.randint(1, 3)):
        if section:
            lines += [f"## {rng.choice(WORDS)} {section}", ""]
        lines += [" ".join(_sentence(rng) for _ in range(rng.randint(1, 4))), ""]
    if rng.random() < 0.3:
        lines.append(f"see [[{rng.choice(PEOPLE)}]] and #{rng.choice(WORDS)}")
    return "\n".join(lines) + "\n"


def _memory_files(rng: random.Random) -> dict[str, str]:
    files = {
        "entities/张三.md": "---\naliases: [zs, San Zhang]\ntype: person\n---\n# 张三\n"
        "负责 Redis 迁移。\n\n- works_with: [[李四]]\n- last_activity: 2026-09-20\n",
        "MEMORY.md": "# Core\n\n- Redis 迁移定在 11 月底 → memory/2026-09-22.md#redis\n",
    }
    for day in range(20, 24):
        files[f"memory/2026-09-{day}.md"] = (
            f"# 2026-09-{day}\n\n## 10:0{day % 10}:00 {_sentence(rng)[:20]} {{#m-{day}}}\n\n"
            f"{_sentence(rng)} zs 说 {rng.choice(WORDS)}。\n\n"
            "status: claimed · trust: inferred · source: chat\n"
        )
    return files


def generate_vault(root: Path, n: int, seed: int) -> None:
    """n notes in folders of 100, plus a few daily notes, entity cards and a core file."""
    rng = random.Random(seed)
    for i in range(n):
        path = root / "notes" / f"{i // 100:03d}" / f"n{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(rng, i), encoding="utf-8")
    for rel, text in _memory_files(rng).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


def _bump(path: Path, seconds: int) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + seconds * 1_000_000_000))


def mutate_vault(root: Path, seed: int, fraction: float) -> dict[str, int]:
    """Change about `fraction` of the notes: edit, delete, touch (same bytes, new mtime),
    add new ones, and edit a daily note. Deterministic for a seed."""
    rng = random.Random(seed + 1)
    notes = sorted((root / "notes").rglob("*.md"))
    chosen = rng.sample(notes, max(1, int(len(notes) * fraction)))
    counts = {"edited": 0, "deleted": 0, "touched": 0, "added": 0}
    for k, path in enumerate(chosen):
        kind = ("edited", "edited", "deleted", "touched")[k % 4]
        if kind == "edited":
            path.write_text(path.read_text(encoding="utf-8") + _sentence(rng) + "\n", "utf-8")
            _bump(path, 7)
        elif kind == "deleted":
            path.unlink()
        else:
            _bump(path, 11)
        counts[kind] += 1
    for i in range(max(1, len(chosen) // 4)):
        path = root / "notes" / "new" / f"added{i:05d}.md"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(note_text(rng, 100_000 + i), encoding="utf-8")
        counts["added"] += 1
    daily = root / "memory" / "2026-09-23.md"
    daily.write_text(daily.read_text(encoding="utf-8") + "\n## 18:00:00 晚间复盘\n\n李四 ok\n")
    _bump(daily, 5)
    return counts


# -- what an index holds -----------------------------------------------------------------


def _key(row: tuple[Any, ...]) -> str:
    return repr(row)


def full_dump(db_path: Path) -> dict[str, Any]:
    """Every row of every table derived from the files, note ids replaced by paths (ids may
    differ between equivalent indexes), plus the full-text index's (path, column, offset,
    term) instances. Read-only; an index with no tables yet dumps as empty."""
    con = apsw.Connection(str(db_path), flags=apsw.SQLITE_OPEN_READONLY)
    try:
        master = {
            str(n): str(sql or "")
            for n, sql in con.execute("SELECT name, sql FROM sqlite_master WHERE type='table'")
        }
        virtual = [n for n, sql in master.items() if sql.upper().startswith("CREATE VIRTUAL")]
        out: dict[str, Any] = {}
        if "notes" not in master:
            return out
        ids = {int(i): str(p) for i, p in con.execute("SELECT id, path FROM notes")}
        for table in sorted(master):
            if table.startswith("sqlite_") or table in virtual:
                continue
            if any(table.startswith(f"{v}_") for v in virtual):
                continue
            cols = [str(r[1]) for r in con.execute(f'PRAGMA table_info("{table}")')]
            rows = []
            for row in con.execute(f'SELECT * FROM "{table}"'):
                item = dict(zip(cols, row, strict=True))
                if table == "notes" or table == "vec_texts":
                    item.pop("id")
                if "note_id" in item:
                    item["note_id"] = ids.get(int(item["note_id"]), f"<gone {item['note_id']}>")
                if table == "meta" and item["key"] in VOLATILE_META:
                    continue
                rows.append(tuple(item.items()))
            out[table] = sorted(rows, key=_key)
        if "fts" in master:
            con.execute("CREATE VIRTUAL TABLE temp.v USING fts5vocab(main, fts, instance)")
            out["fts"] = sorted(
                (ids.get(int(doc), f"<gone {doc}>"), str(col), int(offset), str(term))
                for term, doc, col, offset in con.execute("SELECT term, doc, col, offset FROM v")
            )
        return out
    finally:
        con.close()


def core_of(dump: dict[str, Any]) -> dict[str, Any]:
    """What the sync transaction writes: not the semantic layer, not vectors."""
    out = {k: v for k, v in dump.items() if k not in SEMANTIC and k != "vec_texts"}
    if "meta" in out:
        vector_keys = ("embed_", "vec_")  # written by `lore embed`, not by the sync
        out["meta"] = [row for row in out["meta"] if not str(row[0][1]).startswith(vector_keys)]
    return out


def semantic_of(dump: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in dump.items() if k in SEMANTIC}


def diff_summary(a: dict[str, Any], b: dict[str, Any]) -> str:
    parts = []
    for table in sorted(set(a) | set(b)):
        left, right = set(a.get(table, [])), set(b.get(table, []))
        if left != right:
            parts.append(f"{table}: -{len(left - right)} +{len(right - left)}")
    return ", ".join(parts) or "equal"

"""A vault with a public and a private half, and a real `lore serve` (uvicorn on a free
port of 127.0.0.1, in a thread of the test process) with an injectable clock.

The principal `guest` may see `public/` only. Everything private carries a marker word
(PRIVATE_MARKERS) so a test can check that none of it reaches any answer."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path
from typing import Any

import lore
from lore.serve.background import Background
from lore.serve.options import ServeOptions

Running = Background

TODAY = "2026-11-20"
CONFIG = f"""
[memory]
today = "{TODAY}"

[access]
guest = ["public/"]
nobody = []
"""

PUBLIC = {
    "public/客户去重规则 v2.md": """---
title: 客户去重规则 v2
date: 2026-11-02
tags: [规则, 客户]
---
# 客户去重规则 v2

手机号、姓名、公司名都相同才合并。见 [[架构说明]]，历史背景见 [[调整方案]]。

## 计划

灰度一周后全量。
""",
    "public/架构说明.md": """---
title: 架构说明
date: 2026-11-05
tags: [架构, 客户]
---
# 架构说明

客户主数据服务的架构。去重规则见 [[客户去重规则 v2]]。
""",
}
for i in range(6):
    PUBLIC[f"public/客户笔记 {i}.md"] = f"""---
title: 客户笔记 {i}
date: 2026-11-{10 + i:02d}
tags: [客户, 去重]
---
# 客户笔记 {i}

客户去重 规则 合并 手机号 第 {i} 篇。
"""

PRIVATE_MARKERS = ("SECRETWORD", "薪资", "机密", "private/", "王老板")
PRIVATE = {
    "private/调整方案.md": """---
title: 机密调整方案
date: 2026-11-12
tags: [机密, 薪资]
---
# 机密调整方案

SECRETWORD 王老板 决定的薪资方案，客户去重 项目组。参考 [[客户去重规则 v2]]。
""",
}
for i in range(6):
    PRIVATE[f"private/机密 {i}.md"] = f"""---
title: 机密预算 {i}
date: 2026-11-{10 + i:02d}
tags: [机密, 薪资]
---
# 机密预算 {i}

SECRETWORD 薪资 预算 奖金 第 {i} 篇，王老板 审批。
"""

FILES = {".lore/config.toml": CONFIG, **PUBLIC, **PRIVATE}
PUBLIC_NOTES = len(PUBLIC)


def make_vault(root: Path, *, clusters: bool = True) -> Path:
    for rel, text in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    with lore.open(root) as vault:
        vault.sync()
        if clusters:
            vault.build_clusters(min_size=2, cluster_algo="kmeans")
    return root


class Clock:
    """Seconds that move only when a test says so."""

    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@contextmanager
def running(root: Path, **options: Any) -> Iterator[Background]:
    base = ServeOptions(port=0, watch=options.pop("watch", "poll"))
    server = Background(root, replace(base, **options))
    try:
        yield server
    finally:
        server.stop()


def wait_for(check: Any, timeout: float = 20.0) -> Any:
    """Poll `check()` until it returns something true (the watcher syncs within ~1 s)."""
    deadline = time.monotonic() + timeout
    while True:
        value = check()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(0.05)


def assert_no_private(text: str, where: str, echo: str = "") -> None:
    """No private marker in `text` (what the caller asked, `echo`, aside: an answer may
    repeat the query)."""
    for word in echo.split():
        text = text.replace(word, "")
    for marker in PRIVATE_MARKERS:
        assert marker not in text, f"{marker!r} leaked in {where}: …{_around(text, marker)}…"


def _around(text: str, marker: str) -> str:
    at = text.find(marker)
    return text[max(0, at - 80) : at + 80]

"""A small memory vault shared by the memory tests: entity cards (a file per entity and a
`### Name (Type)` section), daily notes, a core file, rules, a private folder, and access
rules. "Today" is fixed by the vault config, so decay and `recent` are reproducible."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from conftest import is_note_prompt, scripted_note_answer

TODAY = "2026-11-20"

CONFIG = f"""
[memory]
today = "{TODAY}"
half_life_days = 30

[access]
agent = ["memory/**", "entities/**", "MEMORY.md"]
guest = ["rules/"]
nobody = []
"""

FILES: dict[str, str] = {
    ".lore/config.toml": CONFIG,
    "entities/张三.md": """---
title: 张三
type: person
aliases: [Zhang San, zs]
tags: [人物, 数据平台]
last_activity: 2026-10-01
---
# 张三

数据平台组高级数据工程师，负责客户主数据的匹配规则。

## 关系

- 负责 [[客户去重规则 v2]]
- 汇报给 [[李四]]

## 关键事件

- 2026-09-08：在评审会上提出新表结构
- 2026-09-30：v2 规则评审通过
""",
    "entities/李四.md": """---
title: 李四
type: person
aliases: [Li Si, 四哥]
---
# 李四

数据部负责人。

## 关系

- 管理 [[张三]]
""",
    "people.md": """# 人物索引

### 王五（Person）
- **身份**：财务 BP
- **别名**：Wang Wu, 老王
- **关系**：[[李四]] | [[预算会]]
- **最后活动**：2026-11-02（预算初审）
""",
    "rules/客户去重规则 v2.md": """---
title: 客户去重规则 v2
date: 2026-10-15
---
# 客户去重规则 v2

手机号、姓名、公司名都相同才合并。疑似重复进入人工确认队列。
""",
    "memory/2026-11-10.md": """# 2026-11-10

- 和 zs 讨论了去重灰度的回滚开关。
- [ ] 整理灰度期间的误合并样本
- 明天：约四哥过一遍预算初稿。
""",
    "memory/2026-11-12.md": """---
date: 2026-11-12
---
# 2026-11-12

- [x] 整理灰度期间的误合并样本
- Redis 集群扩容方案评审通过。
""",
    "MEMORY.md": """# Core

## 结论

- [verified] 客户去重 v2 已全量上线 → memory/2026-11-12.md#2026-11-12
- Redis 扩容按三节点方案执行 → memory/2026-11-12.md
- 一条没有锚点的结论

## 待办

- [ ] 准备季度复盘材料

## 下一步

- 和李四确认预算口径
""",
    "private/salary.md": """# 薪资

张三 的调薪幅度是机密：保密词 zebra-77。
""",
}


def write(root: Path, files: dict[str, str] | None = None) -> Path:
    for rel, text in (FILES if files is None else files).items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return root


def remember_worker(root: str, text: str, stamp: str, barrier: Any, results: Any) -> None:
    """Run in a child process: wait for the others, then remember `text` at `stamp` and
    report (text, anchor)."""
    import datetime as dt

    import lore

    with lore.open(root) as vault:
        barrier.wait()
        memory = vault.remember(text, at=dt.datetime.fromisoformat(stamp))
    results.put((text, memory.anchor))


# -- a scripted OpenAI-compatible chat server on 127.0.0.1 (the LLM path of `digest`) --------


class ChatScript:
    """What the server answers. `digest` is a queue for digest prompts: a str is the
    model's text answer, an int an HTTP status to fail with; when it is empty, digest
    prompts get `fallback`. Other prompts (LLM tags after a sync) get a valid tags answer.
    Every request is recorded."""

    def __init__(self) -> None:
        self.digest: list[str | int] = []
        self.fallback: str | int = 500
        self.requests: list[dict[str, Any]] = []
        self.lock = threading.Lock()

    def digest_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if is_digest_prompt(r)]


def is_digest_prompt(request: dict[str, Any]) -> bool:
    return str(request["messages"][1]["content"]).startswith("Material:")


class _ChatHandler(BaseHTTPRequestHandler):
    script: ChatScript
    protocol_version = "HTTP/1.1"

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, code: int, body: dict[str, Any]) -> None:
        data = json.dumps(body, ensure_ascii=False).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        request = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)))
        script = self.script
        with script.lock:
            script.requests.append(request)
            system, user = (m["content"] for m in request["messages"][:2])
            if is_note_prompt(system):
                answer: str | int = scripted_note_answer(system, user)
            elif not is_digest_prompt(request):
                answer = json.dumps({"tags": ["scripted"]})
            elif script.digest:
                answer = script.digest.pop(0)
            else:
                answer = script.fallback
        if isinstance(answer, int):
            self._send(answer, {"error": {"message": "model crashed"}})
            return
        self._send(200, {"choices": [{"message": {"role": "assistant", "content": answer}}]})


@contextmanager
def chat_server() -> Iterator[tuple[str, ChatScript]]:
    """(base URL, script) of a scripted chat server on 127.0.0.1, stopped on exit."""
    script = ChatScript()
    handler = type("Handler", (_ChatHandler,), {"script": script})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1", script
    finally:
        server.shutdown()
        server.server_close()


def digest_answer(**kinds: list[tuple[str, str]]) -> str:
    """A digest answer: kind=[(text, evidence), ...]; kinds not given are empty."""
    names = ("decisions", "conclusions", "open_items", "lessons")
    return json.dumps(
        {k: [{"text": t, "evidence": e} for t, e in kinds.get(k, [])] for k in names},
        ensure_ascii=False,
    )

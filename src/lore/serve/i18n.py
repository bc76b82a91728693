"""The pages' words in English and Chinese. The language is the one asked for with
`?lang=` (kept in a cookie), else the browser's (Accept-Language), else English."""

from __future__ import annotations

from collections.abc import Mapping

LANGUAGES = ("en", "zh")

MESSAGES: dict[str, dict[str, str]] = {
    "en": {
        "app": "lore",
        "search": "Search",
        "map": "Interest map",
        "memory": "Memory",
        "status": "Status",
        "query": "Search your notes",
        "go": "Search",
        "tag": "Tag",
        "path": "Path",
        "since": "Since",
        "until": "Until",
        "mode": "Mode",
        "any": "any",
        "filters": "Filters",
        "results": "{n} hit(s) shown of {m} matching note(s)",
        "no_hits": "No note matches.",
        "why": "Why",
        "heading": "Section",
        "line": "line",
        "backlinks": "Linked from",
        "no_backlinks": "No note links here.",
        "outgoing": "Links",
        "tags": "Tags",
        "entity": "Entity card",
        "aliases": "Aliases",
        "relations": "Relations",
        "headings": "Contents",
        "clusters": "Clusters",
        "size": "notes",
        "trend": "Trend",
        "no_map": "No interest map yet: run `lore clusters build`.",
        "recent": "Recent",
        "snapshot": "Where things stand",
        "entities": "Entities",
        "problems": "Problems",
        "no_problems": "No problems found.",
        "remember": "Remember",
        "remember_hint": "A conclusion to keep (claimed until a person verifies it)",
        "save": "Save",
        "edit": "Edit",
        "cancel": "Cancel",
        "saved": "Saved.",
        "index": "Index",
        "notes": "Notes",
        "links": "Links",
        "last_sync": "Last sync",
        "health": "Index health",
        "healthy": "healthy",
        "capabilities": "Capabilities",
        "login": "Sign in",
        "token": "Access token",
        "login_hint": "This server needs a token (ask its owner: `lore token add NAME --as …`).",
        "logout": "Sign out",
        "language": "中文",
        "you": "Signed in as {who}",
        "owner": "owner",
        "error": "Error",
        "notices": "Notices",
        "date": "Date",
        "undated": "undated",
        "watching": "Following the files",
        "trash": "Trash",
        "restore": "Restore",
        "delete": "Delete",
        "conflict": "The note changed since you opened it; nothing was saved.",
        "hover_hint": "Point at a dot to see its note; click to open it.",
    },
    "zh": {
        "app": "lore",
        "search": "搜索",
        "map": "兴趣地图",
        "memory": "记忆",
        "status": "状态",
        "query": "搜索笔记",
        "go": "搜索",
        "tag": "标签",
        "path": "路径",
        "since": "起始日期",
        "until": "截止日期",
        "mode": "模式",
        "any": "不限",
        "filters": "筛选",
        "results": "显示 {n} 条，共 {m} 篇笔记匹配",
        "no_hits": "没有匹配的笔记。",
        "why": "原因",
        "heading": "章节",
        "line": "行",
        "backlinks": "反向链接",
        "no_backlinks": "没有笔记链接到这里。",
        "outgoing": "链接",
        "tags": "标签",
        "entity": "实体卡片",
        "aliases": "别名",
        "relations": "关系",
        "headings": "目录",
        "clusters": "主题簇",
        "size": "篇",
        "trend": "趋势",
        "no_map": "还没有兴趣地图：请运行 `lore clusters build`。",
        "recent": "最近",
        "snapshot": "现状摘要",
        "entities": "实体",
        "problems": "问题",
        "no_problems": "没有发现问题。",
        "remember": "记住",
        "remember_hint": "要保存的结论（经人确认前为未验证）",
        "save": "保存",
        "edit": "编辑",
        "cancel": "取消",
        "saved": "已保存。",
        "index": "索引",
        "notes": "笔记",
        "links": "链接",
        "last_sync": "最近同步",
        "health": "索引健康",
        "healthy": "正常",
        "capabilities": "能力",
        "login": "登录",
        "token": "访问令牌",
        "login_hint": "此服务器需要令牌（请向管理员索取：`lore token add NAME --as …`）。",
        "logout": "退出",
        "language": "English",
        "you": "当前身份：{who}",
        "owner": "所有者",
        "error": "错误",
        "notices": "提示",
        "date": "日期",
        "undated": "无日期",
        "watching": "跟随文件变化",
        "trash": "回收站",
        "restore": "恢复",
        "delete": "删除",
        "conflict": "笔记在你打开后被修改了；没有保存。",
        "hover_hint": "指向圆点查看笔记，点击打开。",
    },
}

TRENDS = {
    "en": {"heating": "↑ heating", "cooling": "↓ cooling", "steady": "· steady", "new": "★ new"},
    "zh": {"heating": "↑ 升温", "cooling": "↓ 降温", "steady": "· 平稳", "new": "★ 新"},
}


def choose(asked: str | None, cookie: str | None, accept: str | None) -> str:
    for value in (asked, cookie):
        if value in LANGUAGES:
            return str(value)
    for part in (accept or "").split(","):
        tag = part.split(";")[0].strip().lower()
        if tag.startswith("zh"):
            return "zh"
        if tag.startswith("en"):
            return "en"
    return "en"


def translator(lang: str) -> Mapping[str, str]:
    return MESSAGES.get(lang, MESSAGES["en"])

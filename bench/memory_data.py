"""A generated multi-session dialogue set for the agent-memory benchmark.

Sixty working sessions (one a day) between a user and an assistant about six projects and
six topics. Each session holds one decision ("决议编号 D017"), a conclusion, an open item
("跟进单 T017"), sometimes a lesson, and chit-chat that names other people and projects.
Decisions on the same project and topic change over time, people are named in the sessions
by their Chinese names but asked about by pinyin or nickname, projects by their Chinese
names or their English/code names. Everything comes from `random.Random(seed)`.

Questions (each with the sessions that hold its evidence, and the tokens that prove it):
- latest:  "{project}的{topic}最后定的是什么？"  → the latest session on that project+topic
- decider: "{person alias}拍板的{topic}是哪个方案？" → every session where they decided it
- lesson:  "{project}在{topic}上踩过什么坑？"     → the sessions with that lesson
"""

from __future__ import annotations

import datetime as dt
import json
import random
from dataclasses import dataclass, field

PEOPLE = [
    ("张伟", "Zhang Wei", "伟哥"),
    ("王芳", "Wang Fang", "芳姐"),
    ("李娜", "Li Na", "娜娜"),
    ("刘洋", "Liu Yang", "洋洋"),
    ("陈静", "Chen Jing", "静姐"),
    ("杨磊", "Yang Lei", "磊子"),
    ("赵敏", "Zhao Min", "敏敏"),
    ("黄涛", "Huang Tao", "涛哥"),
]
PROJECTS = [
    ("北极星", "Polaris", "PLR"),
    ("青鸟", "Bluebird", "BBD"),
    ("磐石", "Bedrock", "BRK"),
    ("星河", "Galaxy", "GLX"),
    ("雷霆", "Thunder", "THD"),
    ("天枢", "Tianshu", "TSU"),
]
TOPICS = [
    ("缓存方案", ["Redis Cluster", "Memcached", "本地 Caffeine", "Tair"]),
    ("数据库选型", ["PostgreSQL", "MySQL 8", "TiDB", "OceanBase"]),
    ("发布窗口", ["周二晚上", "周四凌晨", "周六上午", "周日晚上"]),
    ("监控告警", ["Prometheus", "夜莺", "Zabbix", "云监控"]),
    ("消息队列", ["Kafka", "RocketMQ", "Pulsar", "RabbitMQ"]),
    ("鉴权方案", ["OAuth2", "JWT", "SSO 网关", "mTLS"]),
]
LESSONS = [
    "上线前没做灰度，回滚花了两个小时",
    "没压测就扩容，结果内存被打满",
    "配置改动没走评审，把生产环境的开关关掉了",
    "备份脚本没验证恢复，真出事时才发现备份是空的",
    "告警阈值设得太低，半夜被误报叫醒了五次",
]
FILLER = [
    "今天会议室又被隔壁组占了，只能在茶水间聊。",
    "午饭吃的麻辣烫，{person}推荐的那家。",
    "顺便说一句，{project}那边好像也在讨论{topic}。",
    "{person}下周休年假，有事先找我。",
    "周报模板又改了，记得用新的。",
    "昨晚的线上值班挺平静，没有告警。",
    "{person}说{project}的需求还会再改一轮。",
    "电脑又要升级系统了，先把代码推上去。",
]


@dataclass
class Session:
    sid: str
    date: str
    project: int
    topic: int
    option: str
    decider: int
    follower: int
    lesson: str | None
    turns: list[tuple[str, str]] = field(default_factory=list)

    @property
    def decision_code(self) -> str:
        return f"D{self.sid[1:]}"

    @property
    def followup_code(self) -> str:
        return f"T{self.sid[1:]}"

    def jsonl(self) -> str:
        stamp = f"{self.date}T10:00:00+08:00"
        return "\n".join(
            json.dumps({"role": r, "content": t, "timestamp": stamp}, ensure_ascii=False)
            for r, t in self.turns
        )

    def markdown(self) -> str:
        project = PROJECTS[self.project][0]
        head = f"---\ndate: {self.date}\nsession: {self.sid}\n---\n# 会话 {self.sid}：{project}\n\n"
        return head + "\n".join(f"**{r}**: {t}" for r, t in self.turns) + "\n"


@dataclass
class Question:
    qid: str
    kind: str  # latest | decider | lesson
    text: str
    evidence: set[str]  # session ids
    tokens: list[str]  # strings that prove the evidence is present


@dataclass
class MemorySet:
    sessions: list[Session]
    questions: list[Question]
    leads: dict[int, int]  # project → lead person
    members: dict[int, list[int]]

    @property
    def today(self) -> str:
        last = dt.date.fromisoformat(self.sessions[-1].date)
        return (last + dt.timedelta(days=1)).isoformat()


def _turns(rng: random.Random, s: Session) -> list[tuple[str, str]]:
    project, topic = PROJECTS[s.project][0], TOPICS[s.topic][0]
    decider, follower = PEOPLE[s.decider][0], PEOPLE[s.follower][0]

    def filler() -> str:
        return rng.choice(FILLER).format(
            person=rng.choice(PEOPLE)[0],
            project=rng.choice(PROJECTS)[0],
            topic=rng.choice(TOPICS)[0],
        )

    turns = [
        ("user", f"今天过一下{project}的{topic}。"),
        ("assistant", filler()),
        ("user", f"{decider}看了压测数据，倾向{s.option}。"),
        ("assistant", f"结论是{s.option}在这次压测里表现最好。"),
        ("user", filler()),
        (
            "user",
            f"那就决定了：{project}的{topic}用{s.option}，决议编号 {s.decision_code}，"
            f"{decider}拍板。",
        ),
        ("assistant", filler()),
        ("user", f"TODO {follower}下周跟进{project}{topic}的机器预算，跟进单 {s.followup_code}。"),
    ]
    if s.lesson:
        turns.append(("assistant", f"教训：{project}之前在{topic}上{s.lesson}。"))
    turns += [("user", filler()) for _ in range(rng.randint(2, 5))]
    return turns


def generate(seed: int = 0, n_sessions: int = 60) -> MemorySet:
    rng = random.Random(seed)
    leads = {p: rng.randrange(len(PEOPLE)) for p in range(len(PROJECTS))}
    members = {
        p: sorted({leads[p], *rng.sample(range(len(PEOPLE)), 2)}) for p in range(len(PROJECTS))
    }
    pairs = [(p, t) for p in range(len(PROJECTS)) for t in range(len(TOPICS))]
    chosen = rng.sample(pairs, 24)
    start = dt.date(2026, 9, 1)
    sessions: list[Session] = []
    for i in range(n_sessions):
        project, topic = chosen[i % len(chosen)] if i < len(chosen) else rng.choice(chosen)
        team = members[project]
        s = Session(
            sid=f"s{i + 1:03d}",
            date=(start + dt.timedelta(days=i)).isoformat(),
            project=project,
            topic=topic,
            option=rng.choice(TOPICS[topic][1]),
            decider=rng.choice(team),
            follower=rng.choice(team),
            lesson=rng.choice(LESSONS) if rng.random() < 0.35 else None,
        )
        s.turns = _turns(rng, s)
        sessions.append(s)
    return MemorySet(sessions, _questions(rng, sessions), leads, members)


def _project_name(rng: random.Random, p: int) -> str:
    return rng.choice(PROJECTS[p])  # Chinese name, English name or code, a third each


def _questions(rng: random.Random, sessions: list[Session]) -> list[Question]:
    out: list[Question] = []
    latest: dict[tuple[int, int], Session] = {}
    for s in sessions:
        latest[(s.project, s.topic)] = s
    for (p, t), s in sorted(latest.items()):
        text = f"{_project_name(rng, p)}的{TOPICS[t][0]}最后定的是什么？"
        out.append(Question(f"latest-{p}-{t}", "latest", text, {s.sid}, [s.decision_code]))
    decided: dict[tuple[int, int], list[Session]] = {}
    for s in sessions:
        decided.setdefault((s.decider, s.topic), []).append(s)
    for (person, t), group in sorted(decided.items()):
        alias = rng.choice(PEOPLE[person][1:])  # pinyin or nickname: never the written name
        text = f"{alias}拍板的{TOPICS[t][0]}是哪个方案？"
        out.append(
            Question(
                f"decider-{person}-{t}",
                "decider",
                text,
                {s.sid for s in group},
                [s.decision_code for s in group],
            )
        )
    lessons: dict[tuple[int, int], list[Session]] = {}
    for s in sessions:
        if s.lesson:
            lessons.setdefault((s.project, s.topic), []).append(s)
    for (p, t), group in sorted(lessons.items()):
        text = f"{_project_name(rng, p)}在{TOPICS[t][0]}上踩过什么坑？"
        out.append(
            Question(
                f"lesson-{p}-{t}",
                "lesson",
                text,
                {s.sid for s in group},
                [s.lesson for s in group if s.lesson],
            )
        )
    return out


def entity_cards(data: MemorySet) -> dict[str, str]:
    cards: dict[str, str] = {}
    for i, (name, pinyin, nick) in enumerate(PEOPLE):
        rels = [f"- 负责 [[{PROJECTS[p][0]}]]" for p, lead in data.leads.items() if lead == i]
        rels += [
            f"- 参与 [[{PROJECTS[p][0]}]]"
            for p, team in data.members.items()
            if i in team and data.leads[p] != i
        ]
        cards[f"entities/{name}.md"] = (
            f"---\ntype: person\naliases: [{pinyin}, {nick}]\n---\n# {name}\n\n工程师。\n\n"
            "## 关系\n\n" + "\n".join(rels) + "\n"
        )
    for p, (name, english, code) in enumerate(PROJECTS):
        cards[f"entities/{name}.md"] = (
            f"---\ntype: project\naliases: [{english}, {code}]\n---\n# {name}\n\n内部项目。\n\n"
            f"## 关系\n\n- 负责人 [[{PEOPLE[data.leads[p]][0]}]]\n"
        )
    return cards

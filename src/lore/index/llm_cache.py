"""Model answers keyed by (task, input hash, model, prompt version).

An answer is stored only after it validated, so re-indexing and repeated queries never call
the model again for the same input and never drift. Changing the model or the prompt
version is a new key: the old answers stay until the notes they belong to change.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .grounding import BadAnswer

if TYPE_CHECKING:
    from ..providers.base import ChatProvider
    from ..store.base import Store

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


def input_hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def cache_key(task: str, digest: str, model: str, version: str) -> str:
    return hashlib.sha256(f"{task}\x00{digest}\x00{model}\x00{version}".encode()).hexdigest()


def lookup(store: Store, key: str) -> Any | None:
    return store.cached_answer(key)


def answer_key(task: str, version: str, model: str, system: str, user: str) -> tuple[str, str]:
    """(cache key, input hash) of one question to one model."""
    digest = input_hash(f"{system}\x00{user}")
    return cache_key(task, digest, model, version), digest


def is_cached(store: Store, model: str, *, task: str, version: str, system: str, user: str) -> bool:
    key, _digest = answer_key(task, version, model, system, user)
    return store.cached_answer(key) is not None


class BudgetSpent(Exception):  # noqa: N818 - not an error: the sync's share of calls is used
    """The calls one sync may make are made; what is left waits for the next sync."""


class BudgetedChat:
    """A chat provider that makes at most `limit` calls (None: no cap), counting every
    request it sends, answered or not. Cached answers cost nothing: they never reach it."""

    def __init__(self, chat: ChatProvider, limit: int | None) -> None:
        self.inner = chat
        self.name = chat.name
        self.identity = chat.identity
        self.limit = limit
        self.calls = 0

    @property
    def left(self) -> int | None:
        return None if self.limit is None else max(0, self.limit - self.calls)

    def complete(self, system: str, user: str) -> str:
        if self.limit is not None and self.calls >= self.limit:
            raise BudgetSpent(f"{self.limit} call(s) made")
        self.calls += 1
        return self.inner.complete(system, user)


def parse_json_answer(text: str, where: str) -> Any:
    """The JSON object in a model's answer (a ```json fence is allowed); prose is refused."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        value = json.loads(body)
    except ValueError:
        preview = " ".join(text.split())[:60]
        raise BadAnswer(f"{where} answered prose instead of JSON: {preview!r}") from None
    if not isinstance(value, dict):
        raise BadAnswer(f"{where} answered JSON that is not an object")
    return value


def cached_answer(
    store: Store,
    chat: ChatProvider,
    *,
    task: str,
    version: str,
    system: str,
    user: str,
    validate: Callable[[dict[str, Any]], dict[str, Any]],
) -> dict[str, Any]:
    """The validated answer for this input: from the cache, else from the model (then
    stored). Raises ProviderError when the model fails, BadAnswer (a ProviderError) when
    its answer does not validate."""
    key, digest = answer_key(task, version, chat.identity, system, user)
    hit = lookup(store, key)
    if hit is not None:
        return dict(hit)
    where = f"LLM {chat.identity}"
    answer = validate(parse_json_answer(chat.complete(system, user), where))
    if store.read_only:  # answered, but cannot be kept: asked again next time
        return answer
    store.cache_answer(key, task, chat.identity, version, digest, answer)
    return answer


def string_list(value: Any, where: str, *, max_items: int, max_chars: int = 60) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise BadAnswer(f"{where}: expected a list of strings")
    out = [" ".join(v.split())[:max_chars] for v in value if v.strip()]
    return list(dict.fromkeys(out))[:max_items]

"""Provider name → factory, with deferred imports and friendly errors.

Built-in providers go through the same table a third-party one would. Factories read only
the provider settings they are given (lore.providers.settings) plus the API key from the
environment (LORE_EMBED_API_KEY, LORE_LLM_API_KEY): keys never come from a config file.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING

from ..errors import ConfigError
from .none import Absent

DEFAULT_HTTP_CONCURRENCY = 4  # requests in flight to an OpenAI-compatible endpoint

if TYPE_CHECKING:
    from .base import ChatProvider, EmbeddingProvider
    from .settings import ProviderSettings


def cores() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def _local_embedder(settings: ProviderSettings) -> EmbeddingProvider:
    from .local import LocalE5

    return LocalE5(workers=settings.embed_concurrency or cores())


def _static_embedder(settings: ProviderSettings) -> EmbeddingProvider:
    from .static import StaticE5

    return StaticE5(_local_embedder(settings))


def _endpoint_for(settings: ProviderSettings, part: str) -> object:
    from .openai_compat import Endpoint

    prefix = "embed" if part == "embeddings" else "llm"
    env = "LORE_EMBED" if part == "embeddings" else "LORE_LLM"
    base_url = getattr(settings, f"{prefix}_base_url")
    model = getattr(settings, f"{prefix}_model")
    if not base_url:
        raise ConfigError(
            f"{env}_PROVIDER=openai needs {env}_BASE_URL (e.g. http://127.0.0.1:11434/v1)"
        )
    if not model:
        raise ConfigError(f"{env}_PROVIDER=openai needs {env}_MODEL")
    return Endpoint(
        base_url=str(base_url),
        model=str(model),
        api_key=os.environ.get(f"{env}_API_KEY") or None,
        timeout=float(getattr(settings, f"{prefix}_timeout")),
        retries=int(getattr(settings, f"{prefix}_retries")),
        backoff=float(getattr(settings, f"{prefix}_backoff")),
    )


def _openai_embedder(settings: ProviderSettings) -> EmbeddingProvider:
    from .openai_compat import Endpoint, OpenAIEmbeddings

    endpoint = _endpoint_for(settings, "embeddings")
    assert isinstance(endpoint, Endpoint)
    return OpenAIEmbeddings(
        endpoint,
        batch_size=settings.embed_batch,
        input_type=settings.embed_input_type,
        query_prefix=settings.embed_query_prefix,
        passage_prefix=settings.embed_passage_prefix,
        concurrency=settings.embed_concurrency or DEFAULT_HTTP_CONCURRENCY,
    )


def _openai_chat(settings: ProviderSettings) -> ChatProvider:
    from .openai_compat import Endpoint, OpenAIChat

    endpoint = _endpoint_for(settings, "llm")
    assert isinstance(endpoint, Endpoint)
    return OpenAIChat(endpoint)


EMBEDDERS: dict[str, Callable[[ProviderSettings], EmbeddingProvider]] = {
    "local": _local_embedder,
    "local-fast": _static_embedder,
    "openai": _openai_embedder,
}
CHATS: dict[str, Callable[[ProviderSettings], ChatProvider]] = {"openai": _openai_chat}


def embedding_provider(settings: ProviderSettings) -> EmbeddingProvider | Absent:
    """The configured embedding provider, or Absent saying why there is none."""
    name = settings.embed_provider
    if name == "none":
        return Absent("embeddings", "no embedding provider configured (LORE_EMBED_PROVIDER)")
    factory = EMBEDDERS.get(name)
    if factory is None:
        raise ConfigError(
            f"LORE_EMBED_PROVIDER: unknown provider {name!r}; use {sorted(EMBEDDERS)}"
        )
    return factory(settings)


def chat_provider(settings: ProviderSettings) -> ChatProvider | Absent:
    name = settings.llm_provider
    if name == "none":
        return Absent("llm", "no LLM configured (LORE_LLM_PROVIDER)")
    factory = CHATS.get(name)
    if factory is None:
        raise ConfigError(f"LORE_LLM_PROVIDER: unknown provider {name!r}; use {sorted(CHATS)}")
    return factory(settings)

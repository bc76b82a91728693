"""Issue 18, item 5: an OpenAI-compatible endpoint with several requests in flight, and
HTTP 429/503 retried after the server's Retry-After, on a real server on 127.0.0.1. Sleeps
and the clock are injected: no test waits."""

from __future__ import annotations

import email.utils
import threading
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from semantic_support import Script, no_semantic_env, scripted  # noqa: F401 - fixtures

from lore.config import load_lore_settings
from lore.errors import ConfigError
from lore.providers.base import PartialEmbedding, ProviderError
from lore.providers.openai_compat import Endpoint, OpenAIEmbeddings, retry_after
from lore.providers.registry import embedding_provider
from lore.settings import load_settings

TEXTS = [f"note number {i} about topic {i % 3}" for i in range(8)]
NOW = 1_900_000_000.0  # the injected clock: seconds since the epoch


class Sleeps:
    """Records the waits asked for instead of sleeping."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


def _provider(url: str, sleeps: Sleeps, **kwargs: int | float) -> OpenAIEmbeddings:
    retries = int(kwargs.pop("retries", 2))
    endpoint = Endpoint(base_url=url, model="fake-embed", retries=retries, backoff=0.25)
    return OpenAIEmbeddings(endpoint, sleep=sleeps, clock=lambda: NOW, **kwargs)  # type: ignore[arg-type]


def test_requests_are_in_flight_at_once_and_rows_keep_their_order(
    scripted: tuple[str, Script],
) -> None:
    url, script = scripted
    sequential = _provider(url, Sleeps(), batch_size=2).embed(TEXTS, "passage")
    assert script.max_in_flight == 1
    # Each of the 4 requests waits at a barrier until all 4 are in flight: a client that
    # sent them one at a time would break the barrier (HTTP 500 after 10 s).
    script.barrier = threading.Barrier(4)
    script.max_in_flight = 0
    parallel = _provider(url, Sleeps(), batch_size=2, concurrency=4).embed(TEXTS, "passage")
    assert script.max_in_flight == 4
    assert np.array_equal(parallel, sequential)


def test_429_waits_the_seconds_retry_after_asks(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    script.throttle = [(429, "7"), (503, "2")]
    sleeps = Sleeps()
    out = _provider(url, sleeps, batch_size=8).embed(TEXTS, "passage")
    assert out.shape == (8, 64)
    assert sleeps.waits == [7.0, 2.0]  # the server's waits, not the backoff (0.25, 0.5)
    assert script.count("/v1/embeddings") == 3


def test_retry_after_as_an_http_date_uses_the_injected_clock(
    scripted: tuple[str, Script],
) -> None:
    url, script = scripted
    script.throttle = [(503, email.utils.formatdate(NOW + 30, usegmt=True))]
    sleeps = Sleeps()
    _provider(url, sleeps, batch_size=8).embed(TEXTS, "passage")
    assert sleeps.waits == [30.0]


def test_without_retry_after_the_backoff_doubles_and_retries_are_bounded(
    scripted: tuple[str, Script],
) -> None:
    url, script = scripted
    script.throttle = [(429, None)] * 5
    sleeps = Sleeps()
    with pytest.raises(ProviderError) as caught:
        _provider(url, sleeps, batch_size=8, retries=2).embed(TEXTS, "passage")
    message = str(caught.value)
    assert "\n" not in message and url in message and "HTTP 429" in message
    assert "3 attempts" in message
    assert sleeps.waits == [0.25, 0.5]
    assert script.count("/v1/embeddings") == 3


def test_a_retry_after_longer_than_max_wait_fails_at_once_in_one_line(
    scripted: tuple[str, Script],
) -> None:
    url, script = scripted
    script.throttle = [(429, "3600")]
    sleeps = Sleeps()
    with pytest.raises(ProviderError) as caught:
        _provider(url, sleeps, batch_size=8).embed(TEXTS, "passage")
    assert "\n" not in str(caught.value) and "3600 s" in str(caught.value)
    assert sleeps.waits == [] and script.count("/v1/embeddings") == 1


def test_a_failed_request_among_several_fails_the_call_with_the_others_vectors(
    scripted: tuple[str, Script],
) -> None:
    url, script = scripted
    expected = _provider(url, Sleeps(), batch_size=2).embed(TEXTS, "passage")
    script.requests.clear()
    script.fail_after = 2  # two requests are answered, the other two get HTTP 500
    with pytest.raises(PartialEmbedding) as caught:
        _provider(url, Sleeps(), batch_size=2, concurrency=4, retries=0).embed(TEXTS, "passage")
    assert "HTTP 500" in str(caught.value) and "\n" not in str(caught.value)
    rows = caught.value.rows
    assert len(rows) == 4 and len(set(rows)) == 4  # two whole batches, whichever came first
    assert np.allclose(caught.value.vectors, expected[rows])


@given(st.integers(min_value=0, max_value=10**9))
def test_retry_after_reads_delta_seconds(seconds: int) -> None:
    assert retry_after(str(seconds), NOW) == float(seconds)


@given(st.text(max_size=40))
def test_retry_after_never_raises_on_garbage(value: str) -> None:
    wait = retry_after(value, NOW)
    assert wait is None or wait >= 0.0


def test_retry_after_in_the_past_means_now() -> None:
    assert retry_after(email.utils.formatdate(NOW - 60, usegmt=True), NOW) == 0.0
    assert retry_after("", NOW) is None and retry_after(None, NOW) is None


def _concurrency(root: Path) -> int:
    provider = embedding_provider(load_settings(root).providers)
    assert isinstance(provider, OpenAIEmbeddings)
    return provider.concurrency


def test_concurrency_setting_reaches_the_provider_and_is_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = tmp_path
    monkeypatch.setenv("LORE_EMBED_PROVIDER", "openai")
    monkeypatch.setenv("LORE_EMBED_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("LORE_EMBED_MODEL", "m")
    assert _concurrency(root) == 4  # the default for HTTP
    monkeypatch.setenv("LORE_EMBED_CONCURRENCY", "12")
    assert _concurrency(root) == 12
    for bad in ("0", "33", "many"):
        monkeypatch.setenv("LORE_EMBED_CONCURRENCY", bad)
        with pytest.raises(ConfigError, match="LORE_EMBED_CONCURRENCY"):
            load_lore_settings(root)

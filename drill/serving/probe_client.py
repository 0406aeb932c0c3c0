"""Drive an OpenAI-compatible streaming endpoint and time what comes back (`kvdrill engine
probe`). vLLM, SGLang, trtllm-serve, llama.cpp's server and ollama all serve
`/v1/completions` and `/v1/chat/completions` with `stream: true`: Server-Sent Events,
one `data: {json}` line per chunk, the last `data: [DONE]`.

The only module that imports httpx, and only `engine probe` imports it. The clock is
passed in (tests drive it), read once when a request is sent and once per `data:` line
received, nothing else. Every failure becomes a ProbeFailure of one line; the requests
measured before it are kept (`run_probe` returns them with the error).

Prompts are a fixed filler of common English words, one word per token asked for (each
word, with its leading space, is one token to the Llama, Mistral, Qwen and GPT
tokenizers), opened by the request's number so that no two prompts share a prefix a
server could cache. Where the server sends `usage` (asked for with
`stream_options: {include_usage: true}`), its prompt and output token counts are used
instead; else each chunk with text counts as one output token.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from drill.serving.probe_stats import CONVENTION, RequestRecord, summarize_point

FILLER_WORDS = (
    "the cat sat on a mat and the dog ran to the red barn by the old oak tree while "
    "a man in a blue coat read his book in the sun"
).split()
APIS = ("completions", "chat")
SCHEMA = 1
TOKEN_COUNT_NOTE = (
    "prompt lengths asked for are approximate: one common English word per token, opened by "
    "the request's number; the server's `usage` counts are shown and used where it sent them"
)


class ProbeFailure(Exception):
    """A probe that cannot go on, in one line a user can act on."""


@dataclass(frozen=True)
class ProbeSettings:
    url: str  # the API's base, ending in /v1, without credentials or query
    model: str | None
    api: str
    prompt_tokens: tuple[int, ...]
    concurrency: tuple[int, ...]
    requests: int  # per point
    output_tokens: int
    timeout_s: float
    max_seconds: float
    ignore_eos: bool = False
    slo_ttft_ms: float | None = None
    slo_tpot_ms: float | None = None


def api_base(url: str) -> str:
    """The API's base URL (ending in /v1) from what a user typed: the server's root,
    its /v1, or one of the two endpoints; credentials, query and fragment dropped."""
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ProbeFailure(f"not an http(s) URL: {url.strip()[:200]!r}")
    host = parts.hostname if ":" not in parts.hostname else f"[{parts.hostname}]"
    netloc = host + (f":{parts.port}" if parts.port else "")
    path = parts.path.rstrip("/")
    for tail in ("/chat/completions", "/completions", "/models"):
        if path.endswith("/v1" + tail):
            path = path[: -len(tail)]
    if not path.endswith("/v1"):
        path += "/v1"
    return urlunsplit((parts.scheme, netloc, path, "", ""))


def prompt_text(tokens: int, index: int) -> str:
    """`tokens` words: the request's number, then the filler over and over."""
    words = [f"#{index}"]
    while len(words) < tokens:
        words.append(FILLER_WORDS[(len(words) - 1) % len(FILLER_WORDS)])
    return " ".join(words[:tokens])


def _payload(settings: ProbeSettings, model: str, prompt: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "model": model,
        "max_tokens": settings.output_tokens,
        "temperature": 0,
        "stream": True,
        "stream_options": {"include_usage": True},
    }
    if settings.ignore_eos:
        body["ignore_eos"] = True
    if settings.api == "chat":
        body["messages"] = [{"role": "user", "content": prompt}]
    else:
        body["prompt"] = prompt
    return body


def _chunk_text(data: dict[str, Any], api: str) -> str:
    choices = data.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return ""
    choice = choices[0]
    if api == "chat":
        delta = choice.get("delta")
        if not isinstance(delta, dict):
            return ""
        parts = (delta.get(k) for k in ("content", "reasoning_content", "reasoning"))
        return "".join(p for p in parts if isinstance(p, str))
    text = choice.get("text")
    return text if isinstance(text, str) else ""


def parse_sse_line(line: str) -> dict[str, Any] | str | None:
    """One line of the stream: its JSON object, "done" for `data: [DONE]`, or None for a
    line that carries nothing (blank, a comment, `event:`, `id:`, `retry:`)."""
    if not line or line.startswith(":"):
        return None
    name, _, value = line.partition(":")
    if name in ("event", "id", "retry"):
        return None
    if name != "data":
        raise ProbeFailure(f"malformed stream: not a Server-Sent Events line: {line[:80]!r}")
    value = value[1:] if value.startswith(" ") else value
    if value.strip() == "[DONE]":
        return "done"
    try:
        data = json.loads(value)
    except ValueError:
        raise ProbeFailure(f"malformed stream: a data line is not JSON: {line[:80]!r}") from None
    if not isinstance(data, dict):
        raise ProbeFailure(f"malformed stream: a data line is not a JSON object: {line[:80]!r}")
    if "error" in data:
        error = data["error"]
        message = error.get("message") if isinstance(error, dict) else error
        raise ProbeFailure(f"the server sent an error mid-stream: {str(message)[:200]}")
    return data


def _status_error(response: httpx.Response, body: bytes, key_env: str) -> ProbeFailure:
    text = body.decode("utf-8", "replace")
    try:
        data = json.loads(text)
        error = data.get("error", data) if isinstance(data, dict) else data
        text = str(error.get("message", error) if isinstance(error, dict) else error)
    except ValueError:
        pass
    detail = " ".join(text.split())[:200]
    hint = ""
    if response.status_code in (401, 403):
        hint = f"; the API key is read from ${key_env} (--api-key-env)"
    reason = response.reason_phrase or ""
    return ProbeFailure(
        f"the server answered HTTP {response.status_code} {reason}".rstrip()
        + (f": {detail}" if detail else "")
        + hint
    )


async def _one_request(
    client: httpx.AsyncClient,
    settings: ProbeSettings,
    model: str,
    record: RequestRecord,
    index: int,
    clock: Callable[[], float],
    key_env: str,
) -> None:
    body = _payload(settings, model, prompt_text(record.prompt_tokens, index))
    path = "/chat/completions" if settings.api == "chat" else "/completions"
    async with client.stream("POST", settings.url + path, json=body) as response:
        if response.status_code >= 400:
            raise _status_error(response, await response.aread(), key_env)
        async for line in response.aiter_lines():
            if not line.startswith("data:"):
                parse_sse_line(line)  # refuses what is not an event
                continue
            now = clock()
            data = parse_sse_line(line)
            if data == "done":
                record.done = True
                return
            if not isinstance(data, dict):
                continue
            if _chunk_text(data, settings.api):
                record.chunk_times_s.append(now)
            usage = data.get("usage")
            if isinstance(usage, dict):
                if isinstance(usage.get("completion_tokens"), int):
                    record.output_tokens = usage["completion_tokens"]
                if isinstance(usage.get("prompt_tokens"), int):
                    record.prompt_tokens = usage["prompt_tokens"]
                    record.prompt_from_usage = True
    raise ProbeFailure(
        "the stream ended without `data: [DONE]`: the server closed the connection mid-stream"
    )


def _network_failure(exc: httpx.HTTPError, settings: ProbeSettings) -> ProbeFailure:
    if isinstance(exc, httpx.ConnectTimeout | httpx.ConnectError):
        return ProbeFailure(f"cannot connect to {settings.url}: {exc}")
    if isinstance(exc, httpx.TimeoutException):
        return ProbeFailure(
            f"the server sent nothing for {settings.timeout_s:g} s (--timeout): it stalled"
        )
    if isinstance(exc, httpx.RemoteProtocolError | httpx.ReadError):
        return ProbeFailure(f"the server dropped the connection mid-stream ({exc or 'closed'})")
    return ProbeFailure(f"{type(exc).__name__}: {exc}")


async def _run_point(
    client: httpx.AsyncClient,
    settings: ProbeSettings,
    model: str,
    prompt_tokens: int,
    concurrency: int,
    records: list[RequestRecord],
    clock: Callable[[], float],
    key_env: str,
    first_index: int,
) -> None:
    """`settings.requests` requests of `prompt_tokens`, `concurrency` in flight at once;
    each started is appended to `records`. Raises the first failure, the others cut."""
    next_request = 0

    async def worker() -> None:
        nonlocal next_request
        while next_request < settings.requests:
            number = next_request
            next_request += 1
            record = RequestRecord(prompt_tokens=prompt_tokens, sent_s=clock())
            records.append(record)
            where = f"request {number + 1} at {prompt_tokens:,} prompt tokens, concurrency {concurrency}"
            try:
                await _one_request(
                    client, settings, model, record, first_index + number, clock, key_env
                )
            except ProbeFailure as exc:
                raise ProbeFailure(f"{where}: {exc}") from None
            except httpx.HTTPError as exc:
                raise ProbeFailure(f"{where}: {_network_failure(exc, settings)}") from None

    tasks = [asyncio.create_task(worker()) for _ in range(min(concurrency, settings.requests))]
    try:
        done, pending = await asyncio.wait(tasks, return_when=asyncio.FIRST_EXCEPTION)
    finally:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
    for task in tasks:
        if task.done() and not task.cancelled() and task.exception() is not None:
            raise task.exception()  # type: ignore[misc]


async def first_model(client: httpx.AsyncClient, settings: ProbeSettings, key_env: str) -> str:
    """The first model the server lists at /v1/models."""
    how = "; pass --model NAME"
    try:
        response = await client.get(settings.url + "/models")
    except httpx.HTTPError as exc:
        raise ProbeFailure(f"{_network_failure(exc, settings)}") from None
    if response.status_code >= 400:
        failure = _status_error(response, response.content, key_env)
        raise ProbeFailure(f"listing the models: {failure}{how}")
    try:
        model = response.json()["data"][0]["id"]
    except (ValueError, KeyError, IndexError, TypeError):
        model = None
    if not isinstance(model, str) or not model:
        raise ProbeFailure(f"the server lists no model at {settings.url}/models{how}")
    return model


async def _probe(
    settings: ProbeSettings,
    clock: Callable[[], float],
    api_key: str | None,
    key_env: str,
    transport: httpx.AsyncBaseTransport | None,
    progress: Callable[[str], None] | None,
) -> dict[str, Any]:
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    points: list[dict[str, Any]] = []
    result: dict[str, Any] = {"model": settings.model, "points": points}
    loop = asyncio.get_running_loop()
    deadline = loop.time() + settings.max_seconds
    slo_ttft = settings.slo_ttft_ms / 1000 if settings.slo_ttft_ms is not None else None
    slo_tpot = settings.slo_tpot_ms / 1000 if settings.slo_tpot_ms is not None else None
    async with httpx.AsyncClient(
        headers=headers, timeout=httpx.Timeout(settings.timeout_s), transport=transport
    ) as client:
        model = settings.model or await first_model(client, settings, key_env)
        result["model"] = model
        index = 0
        for prompt_tokens in settings.prompt_tokens:
            for concurrency in settings.concurrency:
                if progress:
                    progress(f"{prompt_tokens:,} prompt tokens, concurrency {concurrency}")
                records: list[RequestRecord] = []
                failure = None
                try:
                    await asyncio.wait_for(
                        _run_point(
                            client, settings, model, prompt_tokens, concurrency, records,
                            clock, key_env, index,
                        ),
                        timeout=max(0.0, deadline - loop.time()),
                    )  # fmt: skip
                except asyncio.TimeoutError:
                    result["stopped"] = (
                        f"stopped after {settings.max_seconds:g} s (--max-seconds), in the "
                        f"point of {prompt_tokens:,} prompt tokens at concurrency {concurrency}"
                    )
                except ProbeFailure as exc:
                    failure = str(exc)
                index += settings.requests
                if records:
                    started = min(r.sent_s for r in records)
                    points.append(
                        summarize_point(
                            prompt_tokens, concurrency, records, started, slo_ttft, slo_tpot
                        )
                    )
                if failure is not None:
                    result["error"] = failure
                    return result
                if "stopped" in result:
                    return result
    return result


def run_probe(
    settings: ProbeSettings,
    *,
    api_key: str | None = None,
    key_env: str = "OPENAI_API_KEY",
    clock: Callable[[], float] = time.perf_counter,
    transport: httpx.AsyncBaseTransport | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Run every point (prompt length x concurrency, in that order) until done, a failure,
    or --max-seconds. The result object holds what was measured; `error` names a failure
    (None without one), `stopped` the time limit. The API key appears nowhere in it."""
    try:
        found = asyncio.run(_probe(settings, clock, api_key, key_env, transport, progress))
    except ProbeFailure as exc:
        found = {"model": settings.model, "points": [], "error": str(exc)}
    error = found.get("error")
    if api_key and isinstance(error, str):
        found["error"] = error.replace(api_key, "***")
    return {
        "schema": SCHEMA,
        "kind": "probe",
        "url": settings.url,
        "model": found["model"],
        "api": settings.api,
        "convention": CONVENTION,
        "token_counts": TOKEN_COUNT_NOTE,
        "settings": {
            k: v for k, v in asdict(settings).items() if k not in ("url", "model", "api")
        },
        "points": found["points"],
        "stopped": found.get("stopped"),
        "error": found.get("error"),
    }


"""A streaming OpenAI-compatible server on the loopback, for the probe's tests.

Each request is answered by the server's `script(number, body)`, which returns a list of
steps: ("at", seconds, text) sends a chunk with that text when the test clock reads the
request's send time plus `seconds`; ("usage", prompt, completion) the usage chunk;
("done",) `data: [DONE]`; ("raw", bytes) bytes as they are; ("stall",) waits until
the test ends; ("drop",) closes the connection in the middle of the chunked body; ("wait_for_peers",)
waits until `peer_target` streams are open at once;
("status", code, body) answers with that status instead of a stream.

SteppedClock makes the times exact: the server sets the clock before each data line
and waits until the probe has read it (the probe reads its clock once per data line),
so what the probe records is what the script says, however slow the machine.
"""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class SteppedClock:
    def __init__(self) -> None:
        self.now = 0.0
        self.reads = 0
        self.cond = threading.Condition()

    def __call__(self) -> float:
        with self.cond:
            self.reads += 1
            self.cond.notify_all()
            return self.now


def completion_chunk(text: str) -> dict[str, Any]:
    return {"object": "text_completion", "choices": [{"index": 0, "text": text}]}


def chat_chunk(text: str) -> dict[str, Any]:
    return {"object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": text}}]}


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: LoopbackServer

    def log_message(self, *args: Any) -> None:  # quiet
        pass

    def _json(self, code: int, data: Any) -> None:
        payload = json.dumps(data).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def do_GET(self) -> None:
        self.server.seen_auth.append(self.headers.get("Authorization"))
        if self.path == "/v1/models" and self.server.models is not None:
            self._json(200, {"object": "list", "data": [{"id": m} for m in self.server.models]})
        else:
            self._json(404, {"error": {"message": "no such route"}})

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()

    def do_POST(self) -> None:
        server = self.server
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        with server.lock:
            number = server.count
            server.count += 1
            server.bodies.append(body)
            server.seen_auth.append(self.headers.get("Authorization"))
        steps = server.script(number, body)
        if steps and steps[0][0] == "status":
            _, code, data = steps[0]
            self._json(code, data)
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        chunk = chat_chunk if self.path.endswith("/chat/completions") else completion_chunk
        clock = server.clock
        base = clock.now if clock else 0.0
        with server.lock:
            server.in_flight += 1
            server.max_in_flight = max(server.max_in_flight, server.in_flight)
            if server.peer_target and server.in_flight >= server.peer_target:
                server.peers.set()
        try:
            for step in steps:
                kind = step[0]
                if kind == "stall":
                    server.release.wait(30)
                    return
                if kind == "drop":
                    self.wfile.flush()
                    self.connection.shutdown(socket.SHUT_RDWR)
                    self.close_connection = True
                    return
                if kind == "wait_for_peers":
                    server.peers.wait(5)
                    continue
                if kind == "raw":
                    self._send(step[1], None, base)
                    continue
                if kind == "at":
                    line = "data: " + json.dumps(chunk(step[2])) + "\n\n"
                    self._send(line.encode(), step[1], base)
                elif kind == "usage":
                    usage = {"prompt_tokens": step[1], "completion_tokens": step[2]}
                    line = "data: " + json.dumps({"choices": [], "usage": usage}) + "\n\n"
                    self._send(line.encode(), None, base)
                elif kind == "done":
                    self._send(b"data: [DONE]\n\n", None, base)
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()
        finally:
            with server.lock:
                server.in_flight -= 1

    def _send(self, data: bytes, offset: float | None, base: float) -> None:
        clock = self.server.clock
        if clock is None or not data.startswith(b"data:"):
            self._chunk(data)
            return
        with clock.cond:
            before = clock.reads
            if offset is not None:
                clock.now = base + offset
        self._chunk(data)
        with clock.cond:
            clock.cond.wait_for(lambda: clock.reads > before, timeout=10)


class LoopbackServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, script, clock: SteppedClock | None = None, models=("tiny-model",)):
        super().__init__(("127.0.0.1", 0), Handler)
        self.script = script
        self.clock = clock
        self.models = list(models) if models is not None else None
        self.lock = threading.Lock()
        self.count = 0
        self.bodies: list[dict[str, Any]] = []
        self.seen_auth: list[str | None] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self.release = threading.Event()
        self.peers = threading.Event()  # set once peer_target streams are open at once
        self.peer_target = 0

    def handle_error(self, request, client_address) -> None:
        pass  # a client that went away (the probe gave up): nothing to report

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def __enter__(self) -> LoopbackServer:
        threading.Thread(target=self.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.release.set()
        self.peers.set()
        self.shutdown()
        self.server_close()

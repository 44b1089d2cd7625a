#!/usr/bin/env python3
"""A stub upstream chat model for kb's benchmarks and fuzzing: OpenAI's POST /v1/chat/completions
on loopback, answering at once (or after --delay seconds) with a fixed answer, as one JSON chat
completion or, when asked to stream, as --chunks Server-Sent Events chunks; memory extraction's
requests for a JSON object get {"memories": []}.

    python3 scripts/stub_chat_model.py PORT [--delay SECONDS] [--chunks N]
"""
import argparse
import json
import socket
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

parser = argparse.ArgumentParser()
parser.add_argument("port", type=int)
parser.add_argument("--delay", type=float, default=0.0)
parser.add_argument("--chunks", type=int, default=20)
options = parser.parse_args()
ANSWER = "Venus in the tenth house favours the arts [1]."


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))) or b"{}")
        if options.delay:
            time.sleep(options.delay)
        head = {"id": "chatcmpl-stub", "created": 1764115200, "model": body.get("model", "stub")}
        # Memory extraction asks for a JSON object: nothing to remember.
        answer = json.dumps({"memories": []}) if body.get("response_format", {}).get("type") == "json_object" else ANSWER
        if not body.get("stream"):
            data = json.dumps({**head, "object": "chat.completion",
                               "choices": [{"index": 0, "message": {"role": "assistant", "content": answer}, "finish_reason": "stop"}],
                               "usage": {"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}).encode()
            # Head and body in one write: no Nagle / delayed-ACK pause between them.
            self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n" % len(data) + data)
            return
        self.wfile.write(b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n")
        try:
            for i in range(options.chunks):
                event = {**head, "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": f"w{i} "}, "finish_reason": None}]}
                self.chunk(f"data: {json.dumps(event)}\n\n".encode())
            self.chunk(b"data: [DONE]\n\n")
            self.wfile.write(b"0\r\n\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass

    def setup(self):
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def chunk(self, data):
        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
        self.wfile.flush()


server = ThreadingHTTPServer(("127.0.0.1", options.port), Handler)
server.daemon_threads = True
server.request_queue_size = 256
server.serve_forever()

"""A minimal Debug Adapter Protocol client for tests: JSON messages framed by
``Content-Length`` headers over a TCP socket, as VS Code speaks to debugpy."""

from __future__ import annotations

import json
import socket
import time
from typing import Any

Message = dict[str, Any]


class DAPError(AssertionError):
    """The adapter refused a request, or an expected message did not come in time."""


class DAPClient:
    """Send requests, collect responses and events; every wait has a deadline."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.seq = 0
        self.buffer = b""
        self.events: list[Message] = []  # every event received, in order
        self._pending: list[Message] = []  # received, not yet consumed by a wait
        self._answered: dict[int, Message] = {}  # request seq -> its response

    @classmethod
    def connect(cls, host: str, port: int, timeout: float = 30.0) -> DAPClient:
        """Connect, retrying while the adapter is not yet listening."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                return cls(socket.create_connection((host, port), timeout=1.0))
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)

    def close(self) -> None:
        """Close the socket (the adapter then ends the session)."""
        try:
            self.sock.close()
        except OSError:
            pass

    # ------------------------------------------------------------ wire

    def send(self, command: str, arguments: Message | None = None) -> int:
        """Send a request; return its seq (see `response`)."""
        self.seq += 1
        message: Message = {"seq": self.seq, "type": "request", "command": command}
        if arguments is not None:
            message["arguments"] = arguments
        body = json.dumps(message).encode()
        self.sock.sendall(b"Content-Length: %d\r\n\r\n" % len(body) + body)
        return self.seq

    def _read(self, deadline: float) -> Message:
        """The next message from the socket."""
        while True:
            header, sep, rest = self.buffer.partition(b"\r\n\r\n")
            if sep:
                length = None
                for line in header.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                if length is None:
                    raise DAPError(f"no Content-Length in {header!r}")
                if len(rest) >= length:
                    self.buffer = rest[length:]
                    return json.loads(rest[:length])
            left = deadline - time.monotonic()
            if left <= 0:
                raise DAPError("timed out waiting for the debug adapter")
            self.sock.settimeout(min(left, 1.0))
            try:
                chunk = self.sock.recv(65536)
            except TimeoutError:
                continue
            if not chunk:
                raise DAPError("the debug adapter closed the connection")
            self.buffer += chunk

    def _pump(self, deadline: float) -> None:
        """Read one message and file it."""
        message = self._read(deadline)
        if message.get("type") == "response":
            self._answered[message["request_seq"]] = message
        else:
            if message.get("type") == "event":
                self.events.append(message)
            self._pending.append(message)

    # ------------------------------------------------------------ waits

    def response(self, seq: int, timeout: float = 30.0) -> Message:
        """The response to request `seq`; raise if it failed."""
        deadline = time.monotonic() + timeout
        while seq not in self._answered:
            self._pump(deadline)
        message = self._answered.pop(seq)
        if not message.get("success"):
            raise DAPError(f"{message.get('command')} failed: {message.get('message')}")
        return message

    def request(self, command: str, arguments: Message | None = None,
                timeout: float = 30.0) -> Message:
        """Send a request and wait for its successful response."""
        return self.response(self.send(command, arguments), timeout)

    def event(self, *names: str, timeout: float = 60.0) -> Message:
        """The first not yet consumed event named one of `names` (earlier others are skipped)."""
        deadline = time.monotonic() + timeout
        while True:
            while self._pending:
                message = self._pending.pop(0)
                if message.get("type") == "event" and message.get("event") in names:
                    return message
            self._pump(deadline)

    def output(self) -> str:
        """The text of every ``output`` event received so far."""
        return "".join(e["body"].get("output", "") for e in self.events
                       if e["event"] == "output")

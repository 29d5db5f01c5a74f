"""What every herdr subcommand shares: the socket, the requests, herdr's output rules.

herdr's CLI talks to the API socket one request per connection, pings first
and refuses a server whose protocol differs from its own
(``protocol_mismatch``), and reports a dead socket as ``server_not_running``.
Socket commands print the whole answer line as compact JSON: on stdout with
exit 0 for a success, on stderr with exit 1 for an error. A usage error is
one line on stderr and exit 2; a bad value herdr parses late (``--lines x``)
is Rust's ``Error: Custom { .. }`` line on stderr and exit 1.
"""

from __future__ import annotations

import errno
import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO

__all__ = [
    "DEFAULT_CLIENT_VERSION",
    "CliError",
    "Context",
    "Usage",
    "dumps",
]

DEFAULT_CLIENT_VERSION = "0.8.0"
"""The herdr version this CLI reports for itself unless told otherwise."""

ORDINARY_TIMEOUT = 30.0
"""Seconds an ordinary request may take; waits (``timeout_ms``) get no client deadline."""


class Usage(Exception):  # noqa: N818 - herdr's usage outcome, not a failure
    """A usage problem: ``message`` goes to stderr and the exit code is ``code`` (2)."""

    def __init__(self, message: str, code: int = 2) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


class CliError(Exception):
    """An error herdr surfaces from ``main`` as ``Error: Custom {...}`` with exit 1.

    ``kind`` is the ``io::ErrorKind`` herdr's error carries.
    """

    kind = "Other"


def dumps(value: Any) -> str:
    """Encode ``value`` as compact JSON the way ``serde_json::to_string`` does."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


def rust_debug_error(message: str, kind: str = "Other") -> str:
    """Render ``io::Error::new(kind, message)`` as Rust's ``main`` prints it (one line)."""
    return f"Error: Custom {{ kind: {kind}, error: {json.dumps(message, ensure_ascii=False)} }}"


@dataclass
class Context:
    """One CLI run: environment, socket, this client's protocol, and the output streams.

    ``session`` is herdr's ``--session`` (already validated). Requests go
    through :class:`~shedproto.clients.herdr.BlockingHerdrClient`'s generic
    path (``send`` with a raw request), so any method name works.
    ``monotonic`` and ``sleep`` are the clock of commands that poll.
    """

    env: Mapping[str, str]
    session: str | None = None
    client_protocol: int = 0
    client_version: str = DEFAULT_CLIENT_VERSION
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    stderr: TextIO = field(default_factory=lambda: sys.stderr)
    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    monotonic: Callable[[], float] = field(default=time.monotonic)
    sleep: Callable[[float], None] = field(default=time.sleep)

    def out(self, text: str = "") -> None:
        """Print a line on stdout."""
        self.stdout.write(text + "\n")

    def err(self, text: str) -> None:
        """Print a line on stderr."""
        self.stderr.write(text + "\n")

    @property
    def socket_path(self) -> str:
        """The API socket, resolved as herdr resolves it (``--session`` wins)."""
        from shedproto.herdr import api_socket_path

        return api_socket_path(self.env, session=self.session)

    def active_session(self) -> str | None:
        """Return the active session: ``--session``, else ``HERDR_SESSION`` (``active_name``)."""
        from shedproto.herdr import active_session_name, normalize_session_name

        if self.session is not None:
            return normalize_session_name(self.session)
        return active_session_name(self.env)

    def _client(self) -> Any:
        from shedproto.clients.herdr import BlockingHerdrClient

        return BlockingHerdrClient.for_socket(
            self.socket_path, protocol=self.client_protocol, timeout=ORDINARY_TIMEOUT
        )

    def server_not_running(self, request_id: str) -> dict[str, Any]:
        """Return herdr's ``server_not_running`` answer for ``request_id``."""
        path = self.socket_path
        from shedproto.herdr import api_socket_path

        name = self.active_session()
        own = api_socket_path({k: v for k, v in self.env.items() if k != "HERDR_SOCKET_PATH"})
        attach = f"herdr session attach {name}" if name and path == own else "herdr"
        message = f"no herdr server is running at {path}; run `{attach}` to start or attach it"
        return {"id": request_id, "error": {"code": "server_not_running", "message": message}}

    def raw(self, request_id: str, method: str, params: Mapping[str, Any]) -> dict[str, Any]:
        """Send one request and return the answer as a JSON object (success or error).

        Raises:
            Reported: the server is not running (the answer is already built).
            CliError: any other transport or protocol failure.

        """
        import msgspec

        from shedproto import ProtocolError
        from shedproto.herdr import HOLDING_METHODS, RawRequest

        client = self._client()
        holding = method in HOLDING_METHODS
        timeout = None if holding else ORDINARY_TIMEOUT
        sent = {key: value for key, value in params.items() if value is not None}
        request = RawRequest(id=request_id, method=method, params=sent)
        try:
            answer = client.send(request, timeout=timeout)
        except TimeoutError:
            raise CliError(
                f"the herdr server at {self.socket_path} did not answer in time"
            ) from None
        except OSError as exc:
            if isinstance(exc, (FileNotFoundError, ConnectionRefusedError)) or exc.errno in (
                errno.ENOENT,
                errno.ECONNREFUSED,
            ):
                raise Reported(self.server_not_running(request_id)) from None
            raise CliError(str(exc)) from None
        except ProtocolError as exc:
            raise CliError(exc.message) from None
        decoded: dict[str, Any] = msgspec.to_builtins(answer)
        return decoded

    def request(
        self, request_id: str, method: str, params: Mapping[str, Any], *, checked: bool = True
    ) -> dict[str, Any]:
        """Ping (herdr's protocol guard) unless ``checked`` is false, then send the request.

        Raises:
            Reported: ``protocol_mismatch`` or ``server_not_running``; print and exit 1.
            CliError: a transport or protocol failure.

        """
        if checked:
            pong = self.raw(request_id, "ping", {})
            result = pong.get("result")
            if not isinstance(result, dict) or "protocol" not in result:
                raise CliError("server ping did not include a protocol version")
            mismatch = self.mismatch(request_id, int(result["protocol"]))
            if mismatch is not None:
                raise Reported(mismatch)
        return self.raw(request_id, method, params)

    def mismatch(self, request_id: str, server: int) -> dict[str, Any] | None:
        """Return herdr's ``protocol_mismatch`` answer, or None when the protocols are equal."""
        client = self.client_protocol
        if client == server:
            return None
        if client > server:
            message = (
                f"client protocol {client} is newer than server protocol {server}; restart "
                "the Herdr server before using this command. Stop it with `herdr server stop`, "
                "then start herdr again."
            )
        else:
            message = (
                f"client protocol {client} is older than server protocol {server}; upgrade "
                "the Herdr client before using this command"
            )
        return {"id": request_id, "error": {"code": "protocol_mismatch", "message": message}}

    # -- herdr's output forms -------------------------------------------------

    def print_response(self, response: Mapping[str, Any]) -> int:
        """Print as herdr's ``print_response``: errors on stderr (exit 1), else stdout."""
        if "error" in response:
            self.err(dumps(response))
            return 1
        self.out(dumps(response))
        return 0

    def call(self, request_id: str, method: str, params: Mapping[str, Any]) -> int:
        """Send a checked request and print the answer line (the common case)."""
        return self.print_response(self.request(request_id, method, params))

    def call_ok(self, method: str, params: Mapping[str, Any]) -> int:
        """Send like herdr's ``send_ok_request``: print nothing on success, the error on stderr."""
        response = self.request("cli:request", method, params)
        if "error" in response:
            self.err(dumps(response))
            return 1
        return 0

    def call_read(self, request_id: str, method: str, params: Mapping[str, Any]) -> int:
        """Send and print as herdr's ``print_read_response``: the text, or the error."""
        response = self.request(request_id, method, params)
        if "error" in response:
            self.err(dumps(response))
            return 1
        text = response.get("result", {}).get("read", {}).get("text")
        if isinstance(text, str):
            self.stdout.write(text)
        return 0


class Reported(Exception):  # noqa: N818 - herdr's "already reported" marker
    """An error answer herdr prints on stderr before exiting 1 (``response``)."""

    def __init__(self, response: dict[str, Any]) -> None:
        super().__init__(response["error"]["message"])
        self.response = response


def environment(env: Mapping[str, str] | None) -> Mapping[str, str]:
    """``env`` or a snapshot of ``os.environ``."""
    return dict(os.environ) if env is None else env

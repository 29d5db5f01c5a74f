"""Helpers for the desktop tests: drive a core ServerConnection with a canned answer."""

from __future__ import annotations

from typing import Any

from shedproto.desktop import (
    Answer,
    ConnectionEnded,
    Dialect,
    RequestReceived,
    RequestRejected,
    ServerConnection,
)


def serve_bytes(
    dialect: Dialect,
    data: bytes,
    *,
    test_mode: bool = False,
    result: Any = None,
    chunk: int | None = None,
    eof: bool = True,
) -> bytes:
    """Feed ``data`` (in ``chunk``-byte pieces) to a server core; answer every valid request
    with ``result`` (default ``{"op": <op>}``) and return every byte the server would write.
    """
    conn = ServerConnection(dialect, test_mode=test_mode)
    out = bytearray()
    pieces = [data] if chunk is None else [data[i : i + chunk] for i in range(0, len(data), chunk)]
    if eof:
        pieces.append(b"")
    for piece in pieces:
        if not piece and not eof:
            continue
        for event in conn.receive_data(piece):
            if isinstance(event, RequestReceived):
                answer = {"op": event.op} if result is None else result
                out += conn.send(Answer(id=event.id, result=answer))
            elif isinstance(event, RequestRejected):
                out += event.reply
            elif isinstance(event, ConnectionEnded):
                if event.reply is not None:
                    out += event.reply
                return bytes(out)
    return bytes(out)


def answer(
    dialect: Dialect,
    model: Any,
    op: str,
    params: Any = None,
    *,
    release: Any = None,
    test_mode: bool = True,
) -> dict[str, Any]:
    """Send one request (as ``shedctl`` does: id ``"1"``, a params object) through a core
    connection and the stand-in app over ``model``; return the decoded response line.
    """
    import msgspec

    from shedproto.desktop import DesktopError, Failure, Release, request_line
    from shedproto.servers.desktop import DesktopApp

    chosen = Release.LATEST if release is None else Release(release)
    app = DesktopApp(
        model, dialect, test_mode=test_mode, socket_path="/run/s.sock", pid=7, release=chosen
    )
    conn = ServerConnection(dialect, test_mode=test_mode, release=chosen)
    line = b""
    for event in conn.receive_data(request_line("1", op, {} if params is None else params)):
        if isinstance(event, RequestReceived):
            try:
                line = conn.send(Answer(id=event.id, result=app.handle(event)))
            except DesktopError as exc:
                line = conn.send(Failure.from_error(event.id, exc))
        elif isinstance(event, RequestRejected):
            line = event.reply
    decoded: dict[str, Any] = msgspec.json.decode(line)
    return decoded


def web_model() -> Any:
    """A stand-in model with one host, ``prod``, running one shed, ``web``."""
    from shedproto.servers.desktop import DesktopModel

    model = DesktopModel()
    model.add_shed("prod", "web")
    return model


def failed(reply: dict[str, Any]) -> tuple[str, str]:
    """Return a failed reply's ``(code, message)``; fail the test if it succeeded."""
    assert reply["ok"] is False, reply
    return reply["error"]["code"], reply["error"]["message"]


def succeeded(reply: dict[str, Any]) -> Any:
    """Return a successful reply's ``result``; fail the test if it failed."""
    assert reply["ok"] is True, reply
    return reply["result"]
